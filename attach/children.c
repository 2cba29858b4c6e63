/* children: the target's children while attached: the scan, naming,
 * --children's following (children.h). */
#include "children.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "marimo.h"
#include "procfs.h"

#define ATT_SCAN_S 1.0 /* children looked for once a second... */
/* ...with --children, where only a scan of all of /proc finds them (no
 * /proc/PID/task/TID/children): a child's first ticks are lost until then */
#define ATT_SCAN_FOLLOW_S 0.02
#define ATT_SCAN_SHARE 0.02 /* the most of the time spent scanning (many processes) */
/* A new child is opened once it has lived this long and stayed for a
 * second scan: a fork about to exec is not taken for a Python child */
#define ATT_SETTLE_S 0.005
/* A child that is not (yet) Python is opened again every GAP for this long
 * (an exec'd interpreter initialising), then only after an exec */
#define ATT_RECHECK_S 2.0
#define ATT_RECHECK_GAP_S 0.1

enum { ATTACH_CH_PENDING, ATTACH_CH_OTHER, ATTACH_CH_TOLD, ATTACH_CH_FOLLOWED };

void attach_children_init(struct attach_children *ch, const struct attach_sampler *s)
{
    memset(ch, 0, sizeof *ch);
    ch->max_procs = ATTACH_MAX_PROCS;
    const char *cap = getenv("HOTLINE_ATTACH_MAX_PROCS");
    if (cap && atoi(cap) >= 1 && atoi(cap) < ATTACH_MAX_PROCS) ch->max_procs = atoi(cap);
    /* HOTLINE_ATTACH_PROC_SCAN=1: the scan of all of /proc even so (tests) */
    ch->children_files =
        procfs_has_children_files(s->procfs) && !getenv("HOTLINE_ATTACH_PROC_SCAN");
}

/* Take child k (a Python, opened in cp, stolen) as one more process. */
static int att_follow(struct attach_sampler *a, struct attach_child *k, struct attach_proc *cp,
                      double now)
{
    struct attach_sproc *pr = attach_sproc_new(a);
    if (!pr || clock_getcpuclockid(cp->pid, &pr->proc_clock) != 0) {
        attach_sproc_free(a, pr);
        attach_close(cp);
        return -1;
    }
    pr->ap = *cp; /* the code cache moves with it */
    memset(cp, 0, sizeof *cp);
    pr->arg_start = k->arg_start; /* read before it was opened: an exec since is seen */
    pr->start = k->start;
    pr->ppid = k->ppid;
    /* its first tick charges its life so far (from its start time, to the
     * clock tick: not since it was first seen, up to a scan period later),
     * as a tick charges the time since the last one; never from before
     * the attach */
    struct timespec bt;
    double age = now - k->first, hz = (double)sysconf(_SC_CLK_TCK);
    if (hz > 0 && clock_gettime(CLOCK_BOOTTIME, &bt) == 0) {
        double lived = (double)bt.tv_sec + bt.tv_nsec * 1e-9 - (double)k->start / hz;
        if (lived > age) age = lived;
    }
    pr->last_tick = now - age > a->t0 ? now - age : a->t0;
    if (getenv("HOTLINE_ATTACH_DEBUG"))
        fprintf(stderr, "hotline: process %d followed, %.3f s old, first seen %.3f s ago\n",
                (int)pr->ap.pid, age, now - k->first);
    a->procs[a->nprocs++] = pr;
    attach_sampler_hello(a, pr, NULL, 0);
    return 0;
}

static void att_child_check(struct attach_children *ch, struct attach_sampler *a,
                            struct attach_child *k, double now)
{
    struct attach_proc cp;
    char why[512] = "", cmd[160], msg[1000];
    int rc = attach_open(&cp, k->pid, why, sizeof why);
    procfs_cmdline_line(a->procfs, k->pid, cmd, sizeof cmd);
    /* marimo's kernel (a child of `marimo edit`): followed without
     * --children, since the server alone only waits in click's main */
    pid_t server = 0;
    char nb[4096] = "";
    int kernel =
        rc == 0 && marimo_kernel(a->procfs, k->pid, &server, nb, sizeof nb) && server == k->ppid;
    if (rc == 0) {
        if ((a->children || kernel) && a->nprocs < ch->max_procs) {
            if (kernel) {
                const char *base = strrchr(nb, '/');
                snprintf(msg, sizeof msg,
                         "following process %d, the marimo kernel%s%.200s (child of marimo's "
                         "server %d; Python %s)",
                         (int)k->pid, nb[0] ? " of " : "", nb[0] ? (base ? base + 1 : nb) : "",
                         (int)k->ppid, cp.version);
            } else {
                snprintf(msg, sizeof msg, "following process %d, child of %d (Python %s: %s)",
                         (int)k->pid, (int)k->ppid, cp.version, cmd);
            }
            if (att_follow(a, k, &cp, now) == 0) {
                k->state = ATTACH_CH_FOLLOWED;
                attach_sampler_tell(a, msg);
                return;
            }
            snprintf(msg, sizeof msg,
                     "process %d started child %d (Python %s: %s): not followed (out of memory or "
                     "no CPU clock for it)",
                     (int)k->ppid, (int)k->pid, cp.version, cmd);
        } else if (a->children) {
            snprintf(msg, sizeof msg,
                     "process %d started child %d (Python %s: %s): not followed: --children "
                     "follows %d processes at once at most; `hotline attach %d` profiles it",
                     (int)k->ppid, (int)k->pid, cp.version, cmd, ch->max_procs, (int)k->pid);
        } else {
            snprintf(msg, sizeof msg,
                     "process %d started child %d (Python %s: %s): not followed; `hotline attach "
                     "%d` profiles it, or attach with --children",
                     (int)k->ppid, (int)k->pid, cp.version, cmd, (int)k->pid);
        }
        attach_close(&cp);
        k->state = ATTACH_CH_TOLD;
        attach_sampler_tell(a, msg);
        return;
    }
    attach_close(&cp);
    if (rc == ATTACH_EVERSION || rc == -EPERM || rc == -EACCES) { /* a Python, not readable */
        snprintf(msg, sizeof msg, "process %d started child %d (%s): not followed: %s",
                 (int)k->ppid, (int)k->pid, cmd, why);
        k->state = ATTACH_CH_TOLD;
        attach_sampler_tell(a, msg);
        return;
    }
    /* not (yet) Python, or gone (forgotten at the next scan) */
    k->state = ATTACH_CH_OTHER;
    k->next_check = now - k->first < ATT_RECHECK_S ? now + ATT_RECHECK_GAP_S : 1e300;
}

/* pid, a child of ppid, seen by this scan */
static void att_child_seen(struct attach_children *ch, struct attach_sampler *a, pid_t pid,
                           pid_t ppid, double now)
{
    struct procfs_stat ps;
    char comm[20];
    char st = procfs_stat(a->procfs, pid, &ps, comm, sizeof comm);
    if (!st || st == 'Z' || st == 'X') return;
    unsigned long long start = ps.start;
    struct attach_child *k = NULL;
    for (int i = 0; i < ch->nkids; i++)
        if (ch->kids[i].pid == pid) {
            k = &ch->kids[i];
            break;
        }
    /* a reused pid is another process (a followed one's sampler sees the
     * old one gone first: its entry stays until then) */
    if (k && k->start != start && k->state == ATTACH_CH_FOLLOWED) return;
    if (!k || k->start != start) {
        if (!k) {
            if (ch->nkids == ATTACH_MAX_CHILDREN) return; /* more are not looked at */
            k = &ch->kids[ch->nkids++];
        }
        memset(k, 0, sizeof *k);
        k->pid = pid;
        k->ppid = ppid;
        k->start = start;
        k->state = ATTACH_CH_PENDING;
        k->first = now;
        k->next_check = now + ATT_SETTLE_S;
        snprintf(k->comm, sizeof k->comm, "%s", comm);
    }
    k->seen = 1;
    k->arg_start = ps.arg_start;
    if (k->state == ATTACH_CH_OTHER && strcmp(k->comm, comm)) { /* an exec: look again */
        snprintf(k->comm, sizeof k->comm, "%s", comm);
        k->first = now;
        k->next_check = now + ATT_SETTLE_S;
    }
    if ((k->state == ATTACH_CH_PENDING || k->state == ATTACH_CH_OTHER) && now >= k->next_check)
        att_child_check(ch, a, k, now);
    if ((k->state == ATTACH_CH_PENDING || k->state == ATTACH_CH_OTHER) && k->next_check < ch->soon)
        ch->soon = k->next_check;
}

/* Whose children are looked for: the attached process while it lives; with
 * --children every process followed. */
static int att_in_scope(const struct attach_sampler *a, pid_t ppid)
{
    for (int i = 0; i < a->nprocs; i++)
        if (a->procs[i]->ap.pid == ppid && !a->procs[i]->gone) return i == 0 || a->children;
    return 0;
}

struct scan {
    struct attach_children *ch;
    struct attach_sampler *a;
    pid_t parent; /* each thread's children: whose */
    double now;
};

static int on_child(pid_t pid, void *data)
{
    struct scan *sc = data;
    att_child_seen(sc->ch, sc->a, pid, sc->parent, sc->now);
    return 0;
}

static int on_process(pid_t pid, void *data)
{
    struct scan *sc = data;
    struct procfs_stat ps;
    if (procfs_stat(sc->a->procfs, pid, &ps, NULL, 0) && att_in_scope(sc->a, ps.ppid))
        att_child_seen(sc->ch, sc->a, pid, ps.ppid, sc->now);
    return 0;
}

static void att_scan(struct attach_children *ch, struct attach_sampler *a, double now)
{
    ch->soon = 1e300;
    for (int i = 0; i < ch->nkids; i++)
        ch->kids[i].seen = 0;
    struct scan sc = {ch, a, 0, now};
    if (ch->children_files) { /* each thread's children: a few small reads */
        for (int i = 0; i < a->nprocs; i++) {
            struct attach_sproc *pr = a->procs[i];
            if (pr->gone || !att_in_scope(a, pr->ap.pid)) continue;
            sc.parent = pr->ap.pid;
            procfs_each_child(a->procfs, pr->ap.pid, on_child, &sc);
        }
    } else { /* every process's parent: /proc/N/stat of each */
        procfs_each_pid(a->procfs, on_process, &sc);
    }
    /* forget the children gone (or gone from scope); a followed one stays
     * until its sampler sees it end */
    int w = 0;
    for (int i = 0; i < ch->nkids; i++)
        if (ch->kids[i].seen || ch->kids[i].state == ATTACH_CH_FOLLOWED)
            ch->kids[w++] = ch->kids[i];
    ch->nkids = w;
}

void attach_children_scan_due(struct attach_children *ch, struct attach_sampler *a)
{
    double now = attach_mono();
    if (now < ch->next_scan) return;
    att_scan(ch, a, now);
    double end = attach_mono(), cost = end - now;
    ch->scan_total += cost;
    ch->nscans++;
    double period = a->children ? (ch->children_files ? 0 : ATT_SCAN_FOLLOW_S) : ATT_SCAN_S;
    double next = end + period;
    if (ch->soon < next) next = ch->soon; /* a new child is not left waiting a second */
    if (next < end + cost / ATT_SCAN_SHARE) next = end + cost / ATT_SCAN_SHARE;
    ch->next_scan = next;
}

void attach_children_forget(struct attach_children *ch, pid_t pid)
{
    int w = 0;
    for (int k = 0; k < ch->nkids; k++)
        if (ch->kids[k].pid != pid) ch->kids[w++] = ch->kids[k];
    ch->nkids = w;
}
