/* sampler: one tick of one process: threads, probes, charging, messages
 * into a sink (sampler.h; method and limits: docs/attach.md). */
#include "sampler.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "agent_config.h"
#include "agent_emit.h"
#include "agent_paths.h"
#include "procfs.h"

#define ATT_NATIVE_FILE "<native>" /* a C callee's leaf (the agent's AGENT_NATIVE_FILE) */
#define ATT_PROBE_PAIRS 400        /* probes per window at most */
#define ATT_PROBE_GAP 20e-6        /* sleep between two probes */
/* ...when the target got no CPU since the last probe: it waits for one, and
 * polling faster would take the CPU it waits for (2-core hosts) */
#define ATT_PROBE_WAIT 300e-6
/* lines sent to the editor (each one a message it pops up); past them one
 * more says so, and stderr has them all (a pool of workers) */
#define ATT_MAX_TOLD 5
/* a process's lines between two flushes (one tick: the strings and stacks
 * first seen, a delta of ATTACH_MAX_THREADS entries, a `now`) stay far
 * below; past it the tick's delta is not written, and counted */
#define ATT_OUT_MAX (32u << 20)
#define ATT_MAX_ARGV 1024 /* arguments in hello (the cmdline read is 8 KiB) */

/* One thread's part of a tick's delta, kept until the tick writes it:
 * agent_emit wants every line entry, then functions, stacks, threads. */
struct attach__entry {
    long long tid;
    const char *name; /* the thread record's (borrowed) */
    charge_t c;
    int profiled; /* a frame of the program was on the stack: its line and function */
    long long file, fn;
    int line, first, last;
    long long stack, stack_tid; /* stack 0: no Python frame */
    double dw;
};

/* the `now` states are probe.h's categories, as in the agent */
_Static_assert((int)CAT_SYS == (int)AGENT_STATE_SYSTEM && (int)CAT_PY == (int)AGENT_STATE_PYTHON &&
                   (int)CAT_NAT == (int)AGENT_STATE_NATIVE,
               "probe.h's categories are agent_emit.h's states");

/* --exclude's default: what the agent excludes by default (the standard
 * library of any CPython 3, wherever installed, and third-party packages) */
static const char *const att_default_exclude[] = {"*/site-packages/*", "*/dist-packages/*",
                                                  "*/lib/python3.*/*"};

double attach_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void attach_sampler_sleep(const struct attach_sampler *s, double sec)
{
    struct timespec ts = {(time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR && !*s->stop)
        ;
}

int attach_sampler_init(struct attach_sampler *s, struct attach_sink *sink,
                        volatile sig_atomic_t *stop, double interval_ms, const char *const *include,
                        int ninclude, const char *const *exclude, int nexclude)
{
    memset(s, 0, sizeof *s);
    s->sink = sink;
    s->stop = stop;
    s->interval_ms = interval_ms;
    s->budget = interval_ms * 0.5e-3;
    if (ninclude > ATTACH_MAX_PATTERNS) ninclude = ATTACH_MAX_PATTERNS;
    if (nexclude > ATTACH_MAX_PATTERNS) nexclude = ATTACH_MAX_PATTERNS;
    if (ninclude) /* include may be NULL then (memcpy's arguments never are) */
        memcpy(s->include, include, (size_t)ninclude * sizeof *include);
    s->ninclude = ninclude;
    if (nexclude) {
        memcpy(s->exclude, exclude, (size_t)nexclude * sizeof *exclude);
        s->nexclude = nexclude;
    } else {
        s->nexclude = (int)(sizeof att_default_exclude / sizeof *att_default_exclude);
        memcpy(s->exclude, att_default_exclude, sizeof att_default_exclude);
    }
    s->ts = malloc(ATTACH_MAX_LISTED * sizeof *s->ts);
    s->st = malloc(ATTACH_MAX_LISTED);
    s->cpu = malloc(ATTACH_MAX_LISTED * sizeof *s->cpu);
    s->ent = malloc(ATTACH_MAX_THREADS * sizeof *s->ent);
    s->now.max = ATT_OUT_MAX;
    return s->ts && s->st && s->cpu && s->ent ? 0 : -ENOMEM;
}

void attach_sampler_free(struct attach_sampler *s)
{
    for (int i = 0; i < s->nprocs; i++)
        attach_sproc_free(s, s->procs[i]);
    s->nprocs = 0;
    free(s->ts);
    free(s->st);
    free(s->cpu);
    free(s->ent);
    agent_buf_free(&s->now);
    s->ts = NULL;
    s->st = NULL;
    s->cpu = NULL;
    s->ent = NULL;
}

void attach_sampler_flush(struct attach_sampler *s, struct attach_sproc *pr)
{
    if (pr->out.len && s->sink->emit(s->sink, pr->conn, pr->out.p, pr->out.len)) *s->stop = SIGPIPE;
    pr->out.len = 0;
    pr->out.overflow = 0;
}

void attach_sampler_error(struct attach_sampler *s, struct attach_sproc *pr, const char *msg)
{
    agent_emit_error(&pr->out, msg);
    attach_sampler_flush(s, pr);
}

void attach_sampler_tell(struct attach_sampler *s, const char *msg)
{
    if (s->say)
        s->say(msg);
    else
        fprintf(stderr, "hotline: %s\n", msg);
    if (!s->sink->remote || s->told > ATT_MAX_TOLD) return;
    if (++s->told > ATT_MAX_TOLD)
        msg = s->children ? "more children are followed (not named again)"
                          : "more Python children were started: not followed, not named again "
                            "(attach with --children to follow them)";
    /* whole lines only in the buffer here (no delta is open during a tell) */
    agent_emit_log(&s->procs[0]->out, "notice", msg);
    attach_sampler_flush(s, s->procs[0]);
}

/* The id of str in pr's stream, its `str` written when new; 0 when that
 * write failed (pr->lost: the tick's delta is not written, so no entry
 * names an id the stream does not define). */
static long long att_str(struct attach_sproc *pr, const char *str)
{
    json_t *id = json_object_get(pr->strs, str);
    if (id) return json_integer_value(id);
    long long n = pr->next_str + 1;
    if (agent_emit_str(&pr->out, n, str, strlen(str)) ||
        json_object_set_new(pr->strs, str, json_integer(n))) {
        pr->lost = 1;
        return 0;
    }
    pr->next_str = n;
    return n;
}

/* The process is gone: no such pid, a zombie (its parent has not reaped
 * it yet: nothing of it is left to read), or its pid now another
 * process's (start time not start0: it exited and the pid was reused; a
 * new Python there must not be merged into its report). */
static int proc_gone(const struct attach_sampler *s, pid_t pid, struct procfs_stat *ps,
                     unsigned long long start0)
{
    char st = procfs_stat(s->procfs, pid, ps, NULL, 0);
    return procfs_gone(st, ps, start0);
}

/* The thread's CPU seconds: its task clock, else the process clock when it
 * is the only running thread (single), else schedstat. 0 or -1 (gone). */
static int thread_cpu(const struct attach_sampler *sa, struct attach_sproc *pr,
                      struct attach_sthread *s, int single, double *cpu)
{
    uint64_t ns;
    if (s->perf_fd >= 0 && read(s->perf_fd, &ns, sizeof ns) == (ssize_t)sizeof ns) {
        *cpu = (double)ns * 1e-9;
        return 0;
    }
    if (single) {
        struct timespec ts;
        if (clock_gettime(pr->proc_clock, &ts) != 0) return -1;
        *cpu = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
        return 0;
    }
    return procfs_task(sa->procfs, pr->ap.pid, s->tid, cpu) ? 0 : -1;
}

static struct attach_sthread *att_thread_find(struct attach_sproc *pr, long tid)
{
    for (int i = 0; i < pr->nth; i++)
        if (pr->th[i].tid == tid) return &pr->th[i];
    return NULL;
}

static struct attach_sthread *att_thread(struct attach_sproc *pr, long tid)
{
    struct attach_sthread *t = att_thread_find(pr, tid);
    if (t) {
        t->gen = pr->gen;
        return t;
    }
    if (pr->nth == ATTACH_MAX_THREADS) return NULL;
    t = &pr->th[pr->nth++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->gen = pr->gen;
    t->run_cat = CAT_PY;
    /* A task-clock counter on the thread is exact where /proc is not: a
     * read makes the kernel bring a running thread's count up to date
     * (`perf stat -p` does the same). Needs the right to read the target
     * (as process_vm_readv) and perf_event_paranoid <= 2; otherwise
     * /proc is used. */
    struct perf_event_attr pa;
    memset(&pa, 0, sizeof pa);
    pa.size = sizeof pa;
    pa.type = PERF_TYPE_SOFTWARE;
    pa.config = PERF_COUNT_SW_TASK_CLOCK;
    pa.exclude_hv = 1;
    t->perf_fd = (int)syscall(SYS_perf_event_open, &pa, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (t->perf_fd < 0) { /* paranoid 2 without CAP_PERFMON: user-space time only */
        pa.exclude_kernel = 1;
        t->perf_fd =
            (int)syscall(SYS_perf_event_open, &pa, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    return t;
}

/* The notebook of pr's marimo cells, loaded or reloaded (its file changed,
 * looked at once a second at most): borrowed, or NULL. */
static const struct marimo_nb *att_notebook(struct attach_sampler *a, struct attach_sproc *pr)
{
    double now = attach_mono();
    if (pr->nb_tried && now - pr->nb_checked < 1.0) return pr->nb;
    pr->nb_checked = now;
    char path[4096];
    if (!pr->nb_tried) {
        pr->nb_tried = 1;
        if (marimo_find_notebook(a->procfs, pr->ap.pid, path, sizeof path)) return NULL;
    } else if (pr->nb) {
        snprintf(path, sizeof path, "%s", pr->nb->path);
    } else {
        return NULL;
    }
    struct stat st;
    if (stat(path, &st)) return pr->nb;
    if (pr->nb && st.st_size == pr->nb_size && st.st_mtim.tv_sec == pr->nb_mtime.tv_sec &&
        st.st_mtim.tv_nsec == pr->nb_mtime.tv_nsec)
        return pr->nb;
    struct marimo_nb *nb = malloc(sizeof *nb);
    if (!nb || marimo_nb_load(nb, path)) {
        free(nb);
        return pr->nb; /* the last good one */
    }
    if (pr->nb) marimo_nb_free(pr->nb);
    free(pr->nb);
    pr->nb = nb;
    pr->nb_size = st.st_size;
    pr->nb_mtime = st.st_mtim;
    return nb;
}

/* A frame of a marimo temporary cell file onto the notebook's line
 * (marimo.h), when its line is a line of code of that cell; else as is. */
static void att_marimo(const struct marimo_nb *nb, struct attach_frame *f)
{
    char id[64];
    if (!nb || !f->file || !marimo_cell_id(f->file, id, sizeof id)) return;
    int line = marimo_nb_line(nb, id, f->line);
    if (!line) return;
    int off = line - f->line;
    f->file = nb->path;
    f->line = line;
    if (f->firstline > 0) f->firstline += off;
    if (f->lastline > 0) f->lastline += off;
}

/* Which of a stack's frames are the program's, by the include / exclude
 * rule the in-process agent applies (sampling/agent_paths.h: by default
 * every file outside the standard library, site-packages and
 * dist-packages, as `hotline run` charges the user's code), for
 * charge_frame. */
static void att_profiled(const struct attach_sampler *s, struct attach_sproc *pr,
                         const struct attach_frame *fr, int nf, int *profiled)
{
    if (!pr->entry_checked) {
        char nb[8];
        pr->entry_checked = 1;
        if (!marimo_server_script(s->procfs, pr->ap.pid, nb, sizeof nb, pr->entry,
                                  sizeof pr->entry))
            pr->entry[0] = 0;
    }
    for (int i = 0; i < nf; i++)
        profiled[i] =
            agent_path_profiled(s->include, s->ninclude, s->exclude, s->nexclude, fr[i].file) &&
            !(pr->entry[0] && fr[i].file && !strcmp(fr[i].file, pr->entry));
}

charge_in_t attach_charge_in(int running, int cat, double dw, double dc)
{
    charge_in_t in = {.dw = dw, .dc = dc > 0 ? dc : 0, .busy = dw, .running = running, .cat = cat};
    return in;
}

/* The statistics of one sample's line and function entries. */
static struct agent_stat_vals att_stats(const charge_t *c)
{
    struct agent_stat_vals st = {0};
    agent_stat_put(&st, AGENT_STAT_PY, c->py);
    agent_stat_put(&st, AGENT_STAT_NAT, c->nat);
    agent_stat_put(&st, AGENT_STAT_SYS, c->sys);
    agent_stat_put(&st, AGENT_STAT_CPU, c->cpu);
    agent_stat_put(&st, AGENT_STAT_N, 1);
    return st;
}

/* The id of the stack ef[0..n) (key: its frames as text) in pr's stream,
 * its `stack` written when new; 0 when that write failed (pr->lost). */
static long long att_stack(struct attach_sproc *pr, const char *key,
                           const struct agent_emit_frame *ef, int n)
{
    json_t *sid = json_object_get(pr->stacks, key);
    if (sid) return json_integer_value(sid);
    long long id = pr->next_stack + 1;
    if (agent_emit_stack(&pr->out, id, ef, n) ||
        json_object_set_new(pr->stacks, key, json_integer(id))) {
        pr->lost = 1;
        return 0;
    }
    return pr->next_stack = id;
}

/* Record one thread's tick, charged c over dw, into its delta entry e:
 * str/stack messages as needed, and its `now` entry when nw is not NULL.
 * The agent's rule (sampling/charge.h): the line and function charged are
 * the innermost frame of the program's; a stack with none of its frames
 * charges no line, its thread and its stack still get the time. 0, or -1
 * when nothing is recorded (a chain that did not validate, a write that
 * failed). */
static int att_record(struct attach_sampler *a, struct attach_sproc *pr,
                      const struct attach_thread *t, struct attach_sthread *s, const charge_t *c,
                      double dw, struct attach__entry *e, agent_now_t *nw)
{
    struct attach_frame fr[ATTACH_MAX_FRAMES];
    int nf = attach_stack(&pr->ap, t, fr, ATTACH_MAX_FRAMES);
    if (nf < 0) {
        a->dropped++; /* a chain that did not validate: no garbage in the report */
        return -1;
    }
    if (!s->name[0]) { /* the main thread as Python names it, others by their comm */
        if (t->tid != pr->ap.pid)
            procfs_comm(a->procfs, pr->ap.pid, t->tid, s->name, sizeof s->name);
        if (!s->name[0])
            snprintf(s->name, sizeof s->name, "%s", t->tid == pr->ap.pid ? "MainThread" : "?");
    }
    memset(e, 0, sizeof *e);
    e->tid = t->tid;
    e->name = s->name;
    e->c = *c;
    e->dw = dw;
    /* the notebook looked up (maybe reloaded) before any frame points into it */
    const struct marimo_nb *nb = NULL;
    char id[64];
    for (int i = 0; i < nf && !nb; i++)
        if (fr[i].file && marimo_cell_id(fr[i].file, id, sizeof id)) nb = att_notebook(a, pr);
    struct agent_emit_frame ef[ATTACH_MAX_FRAMES];
    int profiled[ATTACH_MAX_FRAMES];
    char key[8192];
    size_t kl = 0;
    key[0] = 0;
    for (int i = 0; i < nf; i++) {
        if (fr[i].line < 0) /* no location (a prologue instruction): its first line */
            fr[i].line = fr[i].firstline > 0 ? fr[i].firstline : 0;
        att_marimo(nb, &fr[i]);
        ef[i].file = att_str(pr, fr[i].file);
        ef[i].name = att_str(pr, fr[i].name);
        ef[i].line = fr[i].line;
        if (kl < sizeof key - 64)
            kl += (size_t)snprintf(key + kl, sizeof key - kl, "%lld:%lld:%d|", ef[i].file,
                                   ef[i].name, ef[i].line);
    }
    if (pr->lost) return -1;
    att_profiled(a, pr, fr, nf, profiled);
    int p = charge_frame(profiled, sizeof *profiled, nf);
    if (p >= 0) {
        e->profiled = 1;
        e->file = ef[p].file;
        e->fn = ef[p].name;
        e->line = ef[p].line;
        e->first = fr[p].firstline;
        e->last = fr[p].lastline;
    }
    /* the C callee the sample was in (attach_site), as the agent's leaf: a
     * frame of file "<native>", line 0, never the program's; only when the
     * innermost frame read now is still the one at that call */
    if (s->callee[0] && nf > 0 && fr[0].addr == s->callee_frame && fr[0].line == s->callee_line) {
        int k = nf < ATTACH_MAX_FRAMES ? nf : ATTACH_MAX_FRAMES - 1;
        memmove(&ef[1], &ef[0], (size_t)k * sizeof ef[0]);
        ef[0].file = att_str(pr, ATT_NATIVE_FILE);
        ef[0].name = att_str(pr, s->callee);
        ef[0].line = 0;
        if (pr->lost) return -1;
        char leaf[64];
        int ll = snprintf(leaf, sizeof leaf, "%lld:%lld:0|", ef[0].file, ef[0].name);
        if (ll > 0 && kl + (size_t)ll < sizeof key) {
            memmove(key + ll, key, kl + 1);
            memcpy(key, leaf, (size_t)ll);
            kl += (size_t)ll;
        }
        nf = k + 1;
    }
    double since = charge_pos_at(&s->pos, e->file, e->line, attach_mono());
    if (nw) /* the live view: all frames, innermost first */
        agent_now_thread(nw, t->tid, s->name, c->state, since, ef, nf);
    if (nf == 0) return 0;
    e->stack = att_stack(pr, key, ef, nf);
    if (!e->stack) return -1;
    /* the same rule as the agent's: th[] only grows, so the index is the
     * thread's rank in first-seen order */
    e->stack_tid = s - pr->th < AGENT_STACK_THREADS ? (long long)t->tid : 0;
    return 0;
}

/* A tick's delta from its entries e[0..n), in agent_emit's order. */
static void att_delta(struct attach_sampler *a, struct attach_sproc *pr,
                      const struct attach__entry *e, int n, double ts)
{
    agent_delta_t d;
    /* samples: ticks, as attach has always counted them */
    agent_delta_begin(&d, &pr->out, ts, 1);
    agent_delta_part(&d, AGENT_DELTA_LINES); /* every array, empty ones too */
    for (int i = 0; i < n; i++) {
        struct agent_stat_vals st = att_stats(&e[i].c);
        if (e[i].profiled) agent_delta_line(&d, e[i].file, e[i].line, &st);
    }
    agent_delta_part(&d, AGENT_DELTA_FUNCS);
    for (int i = 0; i < n; i++) {
        struct agent_stat_vals st = att_stats(&e[i].c);
        if (e[i].profiled) agent_delta_func(&d, e[i].file, e[i].fn, e[i].first, e[i].last, &st);
    }
    agent_delta_part(&d, AGENT_DELTA_STACKS);
    for (int i = 0; i < n; i++)
        if (e[i].stack) agent_delta_stack(&d, e[i].stack, 1, e[i].dw, e[i].stack_tid);
    agent_delta_part(&d, AGENT_DELTA_THREADS);
    for (int i = 0; i < n; i++)
        agent_delta_thread(&d, e[i].tid, e[i].name, e[i].c.py, e[i].c.nat, e[i].c.sys);
    if (agent_delta_end(&d)) a->dropped++; /* the buffer refused it: a tick lost, counted */
}

/* One probe window on a running thread (probe.h decides). single: the only
 * running thread, whose CPU is then the process's exact clock. */
static void att_probe(struct attach_sampler *a, struct attach_sproc *pr, struct attach_thread *t,
                      struct attach_sthread *s, int single, double tick_cpu)
{
    double cpu;
    /* its CPU before its state (below) */
    if (pr->ap.site && thread_cpu(a, pr, s, single, &cpu)) return;
    /* what the frame is doing at the sample (site.h): bytecode decides
     * alone, no window; a call or an operator in C code with the window */
    struct attach_site site;
    int cls = attach_site(&pr->ap, t, &site), at_site = cls == SITE_CALL || cls == SITE_OP;
    s->callee_frame = site.frame;
    s->callee_line = site.line;
    memcpy(s->callee, site.callee, sizeof s->callee);
    if (cls == SITE_PY) {
        s->run_cat = CAT_PY;
        return;
    }
    /* the window starts from the state the site was read in, not the
     * thread listing's: a call that returned in between (the procfs reads
     * of every thread) would read as one that returned within the window,
     * a short call; and a state read after it would be another
     * instruction's. Its CPU was read before: preempted between the two
     * (a loaded host), the sampler would count what the thread ran
     * meanwhile as before the window, and a long call that ended then as
     * one that returned at once */
    uint64_t sig = t->sig;
    if (cls != SITE_NONE && !site.sig && attach_thread_sig(&pr->ap, t, &sig)) return;
    if (site.sig) sig = site.sig;
    int holds = attach_holds_gil(&pr->ap, t);
    if (!pr->ap.site && thread_cpu(a, pr, s, single, &cpu)) return;
    probe_start(&s->probe, sig, holds == 0, cpu, attach_mono());
    int frozen = 0;
    double cpu_prev = -1, end = attach_mono() + a->budget;
    /* until decided (probe_done, or enough frozen evidence for CAT_NAT) or
     * the budget ends: on a loaded host a runnable target can wait
     * milliseconds for a CPU, and pairs without CPU prove nothing */
    for (int k = 0;
         k < ATT_PROBE_PAIRS && !probe_done(&s->probe) &&
         !(s->probe.frozen_n >= PROBE_MIN_PAIRS && s->probe.frozen_s >= PROBE_MIN_FROZEN) &&
         !(at_site && site_window_done(&s->probe)) && attach_mono() < end;
         k++) {
        /* a frozen pair is followed at once (probe_pair): a sleep would
         * stretch the next pair past PROBE_MAX_PAIR on a loaded host. At a
         * call or operator site every pair is (a burst, as the agent's):
         * its SITE_MIN_PAIRS must fit in a call that lasts (sorted() of
         * 20000 floats, ~1-2 ms), and a short call must move within
         * SITE_SHORT_CPU; it waits only while the thread gets no CPU */
        if (at_site ? k > 0 && s->probe.cpu <= cpu_prev : !frozen)
            attach_sampler_sleep(a, s->probe.cpu > cpu_prev ? ATT_PROBE_GAP : ATT_PROBE_WAIT);
        cpu_prev = s->probe.cpu;
        if (attach_thread_sig(&pr->ap, t, &sig)) return;
        holds = attach_holds_gil(&pr->ap, t);
        if (thread_cpu(a, pr, s, single, &cpu)) return;
        frozen = probe_pair(&s->probe, sig, holds == 0, cpu, attach_mono());
    }
    int v = probe_verdict(&s->probe, tick_cpu), learn;
    /* the instruction at the sample with what the window found (site.h);
     * no site known: the probe alone, as before */
    site_hist_t *h = site_slot(pr->site_hist, site.key);
    int c = site_verdict(cls, &s->probe, v, h, site.key, &learn);
    if (learn >= 0) site_learn(pr->site_hist, site.key, learn); /* a conclusive window */
    if (getenv("HOTLINE_ATTACH_DEBUG"))
        fprintf(stderr,
                "probe pid %d tid %ld single %d moved %d frozen %d %.0fus nogil %.0fus -> %d "
                "site %d %s -> %d cpu %.0fus learn %d\n",
                (int)pr->ap.pid, t->tid, single, s->probe.moved, s->probe.frozen_n,
                s->probe.frozen_s * 1e6, s->probe.nogil_s * 1e6, v, cls, site.callee, c,
                (s->probe.cpu - s->probe.cpu_start) * 1e6, learn);
    if (c >= 0) s->run_cat = c;
}
/* ---- more Python threads than ATTACH_MAX_THREADS ---------------------
 * A tick samples ATTACH_MAX_THREADS at most (reads per thread). The
 * interpreter lists its newest threads first: a plain cut left out the
 * main thread first of all (300 idle workers: its busy loop read 0 s).
 * Kept instead: the main thread, then the running ones (R), then those
 * sampled already (their counters stay open), then in list order; the
 * user is told how many were left out, and the report counts them. */
struct att_pick {
    int key, i;
};

static int att_pick_cmp(const void *x, const void *y)
{
    const struct att_pick *a = x, *b = y;
    return a->key != b->key ? b->key - a->key : a->i - b->i;
}

/* ts[0..n) with their states st and CPU cpu, cut to ATTACH_MAX_THREADS
 * as above (the three moved together): the new n. */
static int att_pick_threads(struct attach_sampler *a, struct attach_sproc *pr, int n)
{
    if (n <= ATTACH_MAX_THREADS) return n;
    struct att_pick *pk = malloc((size_t)n * sizeof *pk);
    struct attach_thread *kt = malloc(ATTACH_MAX_THREADS * sizeof *kt);
    char kst[ATTACH_MAX_THREADS];
    double kcpu[ATTACH_MAX_THREADS];
    if (!pk || !kt) {
        free(pk);
        free(kt);
        return ATTACH_MAX_THREADS;
    }
    for (int i = 0; i < n; i++) {
        pk[i].i = i;
        pk[i].key = a->ts[i].tid == (long)pr->ap.pid    ? 3
                    : a->st[i] == 'R'                   ? 2
                    : att_thread_find(pr, a->ts[i].tid) ? 1
                                                        : 0;
    }
    qsort(pk, (size_t)n, sizeof *pk, att_pick_cmp);
    for (int k = 0; k < ATTACH_MAX_THREADS; k++) {
        kt[k] = a->ts[pk[k].i];
        kst[k] = a->st[pk[k].i];
        kcpu[k] = a->cpu[pk[k].i];
    }
    memcpy(a->ts, kt, ATTACH_MAX_THREADS * sizeof *kt);
    memcpy(a->st, kst, sizeof kst);
    memcpy(a->cpu, kcpu, sizeof kcpu);
    free(pk);
    free(kt);
    int left = n - ATTACH_MAX_THREADS;
    a->threads_left += left;
    if (left > pr->drop_warn_at) { /* loudly: once, and again when many more are */
        pr->drop_warn_at = left * 2 > left + 16 ? left * 2 : left + 16;
        char msg[256];
        snprintf(msg, sizeof msg,
                 "process %d has %d Python threads: %d not sampled (at most %d are each tick: "
                 "the main thread and the running ones are kept, idle ones left out)",
                 (int)pr->ap.pid, n, left, ATTACH_MAX_THREADS);
        attach_sampler_tell(a, msg);
    }
    return ATTACH_MAX_THREADS;
}

/* Records of threads not sampled this tick go (ended, or left out): their
 * counters close, their slots are free for the threads sampled next. */
static void att_threads_prune(struct attach_sproc *pr)
{
    int w = 0;
    for (int i = 0; i < pr->nth; i++) {
        if (pr->th[i].gen == pr->gen) {
            pr->th[w++] = pr->th[i];
        } else if (pr->th[i].perf_fd >= 0) {
            close(pr->th[i].perf_fd);
        }
    }
    pr->nth = w;
}

/* pr exec'd (a fork that runs a new program, a vfork child taken before
 * its exec): its interpreter is another one, at other addresses, so it is
 * opened again, and until then (a Python initialising) not read */
static void att_reopen(struct attach_sproc *pr, unsigned long long arg_start)
{
    pid_t pid = pr->ap.pid;
    char why[512];
    attach_close(&pr->ap);
    memset(&pr->ap, 0, sizeof pr->ap);
    pr->site_tried = 0; /* another interpreter maybe: its own tables */
    memset(pr->site_hist, 0, sizeof pr->site_hist);
    pr->closed = attach_open(&pr->ap, pid, why, sizeof why) != 0;
    if (pr->closed) {
        attach_close(&pr->ap);
        memset(&pr->ap, 0, sizeof pr->ap);
        pr->ap.pid = pid;
    }
    pr->arg_start = arg_start;
}

/* The end of pr's tick at now: its delta from its ne entries, its `now`
 * (nw, or NULL when none is due), all of it to the sink. */
static void att_tick_end(struct attach_sampler *a, struct attach_sproc *pr, int ne, agent_now_t *nw,
                         double now)
{
    if (pr->lost)
        a->dropped++; /* a write refused: the tick's delta would name ids not sent */
    else
        att_delta(a, pr, a->ent, ne, now - a->t0);
    if (nw) {
        if (agent_now_end(nw) == 0 && !pr->lost) agent_buf_add(&pr->out, a->now.p, a->now.len);
        a->now.len = 0;
        a->now.overflow = 0;
        pr->last_now = now;
    }
    attach_sampler_flush(a, pr);
}

/* One tick of one process: 0, or -ESRCH when it is gone. */
int attach_sampler_tick(struct attach_sampler *a, struct attach_sproc *pr)
{
    struct procfs_stat ps;
    if (proc_gone(a, pr->ap.pid, &ps, pr->start)) return -ESRCH;
    if (ps.arg_start != pr->arg_start || pr->closed) att_reopen(pr, ps.arg_start);
    double now = attach_mono();
    if (pr->closed) { /* its time goes to the first line read once it is open */
        if (getenv("HOTLINE_ATTACH_DEBUG"))
            fprintf(stderr, "hotline: process %d not open (exec'd)\n", (int)pr->ap.pid);
        return 0;
    }
    if (!pr->site_tried) { /* the call site's tables, once per interpreter */
        char why[512];
        pr->site_tried = 1;
        int rc = attach_site_init(&pr->ap, why, sizeof why);
        if (getenv("HOTLINE_ATTACH_DEBUG"))
            fprintf(stderr, "hotline: process %d: call site %s%s\n", (int)pr->ap.pid,
                    rc ? "off: " : "on", rc ? why : "");
    }
    struct attach_thread *ts = a->ts;
    int n = attach_threads(&pr->ap, ts, ATTACH_MAX_LISTED);
    if (n == -ESRCH) return -ESRCH;
    if (n < 0) {
        if (getenv("HOTLINE_ATTACH_DEBUG"))
            fprintf(stderr, "hotline: process %d: threads not read (%d)\n", (int)pr->ap.pid, n);
        a->dropped++;
        pr->last_tick = now;
        return 0;
    }
    char *st = a->st;
    double *cpu = a->cpu;
    for (int i = 0; i < n; i++)
        st[i] = procfs_task(a->procfs, pr->ap.pid, ts[i].tid, &cpu[i]);
    n = att_pick_threads(a, pr, n);
    pr->gen++;
    for (int i = 0; i < n; i++) { /* first the records of threads not sampled now go */
        struct attach_sthread *s = att_thread_find(pr, ts[i].tid);
        if (s) s->gen = pr->gen;
    }
    att_threads_prune(pr);
    int nrun = 0;
    for (int i = 0; i < n; i++) {
        nrun += st[i] == 'R';
        struct attach_sthread *s = att_thread(pr, ts[i].tid);
        if (st[i] && s && s->perf_fd >= 0) thread_cpu(a, pr, s, 0, &cpu[i]);
    }
    /* every tick's lines go out at its end: strings and stacks first seen,
     * the delta, the `now` when one is due */
    pr->lost = 0;
    agent_now_t nw;
    int now_due = a->sink->remote && pr->now_hz > 0 && now - pr->last_now >= 1.0 / pr->now_hz;
    if (now_due) agent_now_begin(&nw, &a->now, now - a->t0);
    int ne = 0;
    for (int i = 0; i < n; i++) {
        struct attach_sthread *s = att_thread(pr, ts[i].tid);
        if (!s || !st[i]) continue;
        double dw = s->have_base ? now - s->last_wall : now - pr->last_tick;
        double dc = s->have_base ? cpu[i] - s->last_cpu : 0;
        int running = st[i] == 'R';
        if (running)
            att_probe(a, pr, &ts[i], s, nrun == 1, dc);
        else
            probe_start(&s->probe, 0, 1, cpu[i], now);
        if (!running) s->callee[0] = 0; /* waiting: in no C callee's code */
        charge_in_t in = attach_charge_in(running, s->run_cat, dw, dc);
        charge_t c;
        charge_interval(&in, &c);
        /* the agent's rule (charge_counts): idle threads' samples go nowhere */
        if (!pr->lost &&
            att_record(a, pr, &ts[i], s, &c, dw, &a->ent[ne], now_due ? &nw : NULL) == 0 &&
            charge_counts(a->ent[ne].profiled, a->all_threads))
            ne++;
        s->have_base = 1;
        s->last_wall = now;
        s->last_cpu = cpu[i];
    }
    pr->last_tick = now;
    att_tick_end(a, pr, ne, now_due ? &nw : NULL, now);
    return 0;
}

void attach_sampler_poll(struct attach_sampler *s, struct attach_sproc *pr)
{
    if (s->sink->poll && s->sink->poll(s->sink, pr->conn, &pr->now_hz)) *s->stop = SIGTERM;
}

struct attach_sproc *attach_sproc_new(struct attach_sampler *s)
{
    struct attach_sproc *pr = calloc(1, sizeof *pr);
    if (!pr) return NULL;
    pr->strs = json_object();
    pr->stacks = json_object();
    pr->out.max = ATT_OUT_MAX;
    pr->conn = s->sink->open(s->sink);
    if (!pr->strs || !pr->stacks || !pr->conn) {
        attach_sproc_free(s, pr);
        return NULL;
    }
    return pr;
}

void attach_sproc_free(struct attach_sampler *s, struct attach_sproc *pr)
{
    if (!pr) return;
    if (pr->conn) s->sink->close(s->sink, pr->conn);
    agent_buf_free(&pr->out);
    for (int i = 0; i < pr->nth; i++)
        if (pr->th[i].perf_fd >= 0) close(pr->th[i].perf_fd);
    json_decref(pr->strs);
    json_decref(pr->stacks);
    if (pr->nb) marimo_nb_free(pr->nb);
    free(pr->nb);
    attach_close(&pr->ap);
    free(pr);
}

void attach_sampler_hello(struct attach_sampler *s, struct attach_sproc *pr, char *program,
                          size_t n)
{
    char buf[8192], exe[PATH_MAX], cwd[PATH_MAX], main_path[PATH_MAX];
    pid_t pid = pr->ap.pid;
    procfs_exe(s->procfs, pid, exe, sizeof exe);
    procfs_cwd(s->procfs, pid, cwd, sizeof cwd);
    long len = procfs_cmdline(s->procfs, pid, buf, sizeof buf);
    procfs_script(buf, len > 0 ? (size_t)len : 0, cwd, main_path, sizeof main_path);
    if (program) snprintf(program, n, "%s", main_path[0] ? main_path : exe);
    /* argv: the cmdline's NUL-ended arguments (buf ends in a NUL) */
    const char *argv[ATT_MAX_ARGV];
    int argc = 0;
    for (long i = 0; i < len && argc < ATT_MAX_ARGV; i += (long)strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    struct agent_hello h = {.pid = pid,
                            .ppid = pr->ppid,
                            .python = pr->ap.version,
                            .executable = exe,
                            .cwd = cwd,
                            .main = main_path,
                            .clock = "attach",
                            .argv = argv,
                            .argc = argc,
                            .interval_ms = s->interval_ms,
                            .mono0 = s->t0};
    agent_emit_hello(&pr->out, &h);
    attach_sampler_flush(s, pr);
}

void attach_sampler_end(struct attach_sampler *s, struct attach_sproc *pr, const char *reason)
{
    if (pr->gone) return;
    pr->gone = 1;
    struct agent_end e = {.ts = attach_mono() - s->t0, .reason = reason};
    agent_emit_end(&pr->out, &e);
    attach_sampler_flush(s, pr);
    for (int i = 0; i < pr->nth; i++) /* its counters go with it */
        if (pr->th[i].perf_fd >= 0) {
            close(pr->th[i].perf_fd);
            pr->th[i].perf_fd = -1;
        }
}

void attach_sampler_forget(struct attach_sampler *s, int i)
{
    attach_sproc_free(s, s->procs[i]);
    memmove(&s->procs[i], &s->procs[i + 1], (size_t)(s->nprocs - i - 1) * sizeof *s->procs);
    s->nprocs--;
}
