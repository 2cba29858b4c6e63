/* cmd_attach: `hotline attach PID [--duration S] [--json OUT] [--interval MS]
 * [--top N] [--children]`. Samples a running CPython from outside (attach/attach.h) until
 * it exits, --duration ends or Ctrl-C, then prints the report `hotline run`
 * prints and saves the same JSON profile: each tick becomes the messages an
 * agent would send (hello, str, stack, delta), applied to a profile store,
 * so the report and the file are the run's own code. The python / native /
 * system split is profiler/probe.h's decision, fed with what /proc says:
 * per-thread state (stat) and CPU (schedstat, which moves only at scheduler
 * ticks; the process CPU clock, exact, stands in for the thread's while it
 * is the only one running). The target's children are looked for while
 * attached (att_scan): a Python child is named once and, with --children,
 * sampled too, as one more process of the same profile (its own hello, as a
 * run's forked child sends; with --connect its own connection). Method and
 * limits: docs/attach.md. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "agent_config.h"
#include "agent_paths.h"
#include "attach.h"
#include "probe.h"
#include "cli/attach_memory.h"
#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/report.h"
#include "store/profile.h"
#include "text/termsafe.h"

#define ATT_PROBE_PAIRS 400 /* probes per window at most */
#define ATT_PROBE_GAP 20e-6 /* sleep between two probes */
/* ...when the target got no CPU since the last probe: it waits for one, and
 * polling faster would take the CPU it waits for (2-core hosts) */
#define ATT_PROBE_WAIT 300e-6
#define ATT_MAX_DURATION 1e7  /* seconds */
#define ATT_MAX_PATTERNS 64   /* --include / --exclude each */
#define ATT_MAX_PROCS 64      /* processes sampled at once, the attached one included */
#define ATT_MAX_CHILDREN 1024 /* children remembered (followed, named, ignored) */
#define ATT_SCAN_S 1.0        /* children looked for once a second... */
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
/* lines sent to the editor (each one a message it pops up); past them one
 * more says so, and stderr has them all (a pool of workers) */
#define ATT_MAX_TOLD 5

static const char attach_usage[] =
    "usage: hotline attach PID [options]\n"
    "\n"
    "Samples a running Python 3.9+ process from outside (process_vm_readv: the\n"
    "target is neither stopped nor changed) until it exits, --duration ends or\n"
    "Ctrl-C, then prints the same per-line report as `hotline run`.\n"
    "Needs permission to read the target's memory (docs/attach.md).\n"
    "\n"
    "options:\n"
    "  --duration S      stop after S seconds\n" CLI_OUTPUTS_USAGE
    "  --interval MS     sampling interval in milliseconds (default 10)\n"
    "  --top N           lines and functions shown in the report (default 10)\n"
    "  --include GLOB    files of the program: the innermost frame in one is\n"
    "                    charged (repeatable; default: every file not excluded)\n"
    "  --exclude GLOB    files never charged (repeatable; replaces the default:\n"
    "                    site-packages, dist-packages, the standard library)\n"
    "  --children        follow the target's Python children too (they are named\n"
    "                    otherwise, not followed; at most 64 processes in all)\n"
    "  --memory          memory too (allocated / kept per line, leaks): the target\n"
    "                    loads Hotline's agent until detach (3.9-3.13 through gdb,\n"
    "                    3.14+ through PEP 768; it changes the target, docs/attach.md)\n"
    "  --connect SOCK    send the samples to a Hotline server's agent socket\n"
    "                    (the editor's \"Attach to process\"), no report; with\n"
    "                    --memory the injected agent's own stream is relayed there\n"
    "  -h, --help        this help\n"
    "\n"
    "exit status: 0 done, 2 usage, 3 no such process, 4 not a Python process,\n"
    "5 unsupported Python version, 6 permission denied, 7 --memory injection failed\n"
    "(the target left as it was), 8 --memory on a stopped target (nothing done),\n"
    "1 other errors\n";

static volatile sig_atomic_t att_stop; /* signal-safe: set by the handler only */

static void on_stop(int sig)
{
    att_stop = sig;
}

struct att_thread {
    long tid;
    int have_base, run_cat;
    int perf_fd; /* the thread's task-clock counter, or -1 */
    double last_wall, last_cpu;
    probe_t probe;
    char name[32];      /* MainThread, or the thread's comm */
    long long cur_file; /* charged frame now, and since when (`now`) */
    int cur_line;
    double since;
    unsigned gen; /* the last tick that sampled it (records of others go) */
};

/* One process sampled: the attached one, or a child followed (--children).
 * Each is what one agent is to a run: its own hello, ids and connection. */
struct att_proc {
    struct attach_proc ap;
    pid_t ppid;
    struct prof_conn *conn; /* local store's, per process (owned) */
    /* --connect: each message is a line on the server's socket instead of
     * an update of the local store (the agent's wire, docs/agent-protocol.md);
     * each process has its own connection, as each agent of a run does */
    int sock;              /* -1: local store */
    json_t *strs, *stacks; /* string -> id, stack key -> id (owned) */
    long long next_str, next_stack;
    struct att_thread th[ATTACH_MAX_THREADS];
    int nth;
    unsigned gen;     /* ticks */
    int drop_warn_at; /* threads left out in a tick that tell the user again */
    clockid_t proc_clock;
    double last_tick;
    int now_hz;
    double last_now;
    json_t *now_threads; /* this tick's `now` entries while one is due (owned) */
    char in[4096];       /* server -> us: partial line */
    size_t in_len;
    int gone;                     /* exited: its `end` is sent */
    unsigned long long arg_start; /* /proc/PID/stat's: changes at an exec */
    unsigned long long start;     /* its start time: another at a reused pid */
    int closed;                   /* exec'd into no Python (yet): reopened at the next ticks */
};

/* A child of a process in scope, remembered so that it is told about once
 * and its exec (a shell running python) is noticed. */
enum { ATT_CH_PENDING, ATT_CH_OTHER, ATT_CH_TOLD, ATT_CH_FOLLOWED };
struct att_child {
    pid_t pid, ppid;
    unsigned long long start;     /* start time: a reused pid is another process */
    unsigned long long arg_start; /* at the last scan (struct attach_pstat) */
    int state, seen;
    double first, next_check;
    char comm[20];
};

struct att {
    struct profile *p;
    struct att_proc *procs[ATT_MAX_PROCS]; /* [0]: the attached process (owned) */
    int nprocs;
    struct att_child kids[ATT_MAX_CHILDREN];
    int nkids;
    int children;           /* --children */
    int max_procs;          /* ATT_MAX_PROCS (HOTLINE_ATTACH_MAX_PROCS lowers it: tests) */
    int told;               /* lines sent to the editor (ATT_MAX_TOLD) */
    const char *connect_to; /* --connect SOCK (borrowed), or NULL */
    int children_files;     /* /proc/PID/task/TID/children exists (CONFIG_PROC_CHILDREN) */
    double next_scan;
    double soon;       /* a child's next check, when before the next scan */
    double scan_total; /* scans' own time (HOTLINE_ATTACH_DEBUG prints it) */
    long long nscans;
    double interval_ms;
    double t0;
    long long dropped;
    long long threads_left; /* thread samples left out (over ATTACH_MAX_THREADS) */
    /* one tick's threads, ATTACH_MAX_LISTED each (owned) */
    struct attach_thread *ts;
    char *st;
    double *cpu;
    double budget; /* seconds a probe window may last */
    /* the program's files (--include / --exclude; argv's strings, borrowed) */
    const char *include[ATT_MAX_PATTERNS], *exclude[ATT_MAX_PATTERNS];
    int ninclude, nexclude;
};

/* --exclude's default: what the agent excludes by default (the standard
 * library of any CPython 3, wherever installed, and third-party packages) */
static const char *const att_default_exclude[] = {"*/site-packages/*", "*/dist-packages/*",
                                                  "*/lib/python3.*/*"};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR && !att_stop)
        ;
}

/* Write all of a line to the server; -1 once it is gone. */
static int att_send(int sock, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = send(sock, s, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Feed one agent message (new reference, stolen) of process pr to the
 * store, or with --connect send it on pr's connection. */
static void att_apply(struct att *a, struct att_proc *pr, json_t *msg)
{
    if (!msg) return;
    if (pr->sock >= 0) {
        char *s = json_dumps(msg, JSON_COMPACT);
        json_decref(msg);
        if (!s) return;
        size_t n = strlen(s);
        s[n] = '\n'; /* json_dumps' terminator becomes the line end */
        if (att_send(pr->sock, s, n + 1)) att_stop = SIGPIPE;
        free(s);
        return;
    }
    struct agent_msg m;
    char err[128];
    if (agent_msg_from_json(msg, &m, err, sizeof err) == 0) {
        if (profile_conn_apply(pr->conn, &m)) a->dropped++;
        agent_msg_clear(&m);
    } else {
        a->dropped++; /* never silently: counted in the report's dropped line */
    }
}

/* A line for the user: stderr, and with --connect the server, which shows
 * it (a `log` of level "notice" on the attached process's connection). */
static void att_tell(struct att *a, const char *msg)
{
    char safe[TERMSAFE_SIZE(1000)]; /* names from the target: its user chose them */
    fprintf(stderr, "hotline: %s\n", termsafe_str(safe, sizeof safe, msg));
    if (a->procs[0]->sock < 0 || a->told > ATT_MAX_TOLD) return;
    if (++a->told > ATT_MAX_TOLD)
        msg = a->children ? "more children are followed (not named again)"
                          : "more Python children were started: not followed, not named again "
                            "(attach with --children to follow them)";
    att_apply(a, a->procs[0],
              json_pack("{s:s,s:s,s:s}", "t", "log", "level", "notice", "msg", msg));
}

static long long att_str(struct att *a, struct att_proc *pr, const char *s)
{
    json_t *id = json_object_get(pr->strs, s);
    if (id) return json_integer_value(id);
    long long n = ++pr->next_str;
    json_object_set_new(pr->strs, s, json_integer(n));
    att_apply(a, pr, json_pack("{s:s,s:I,s:s}", "t", "str", "id", n, "s", s));
    return n;
}

/* 'R', 'S', 'D', ... and CPU seconds of one thread from /proc; 0 when gone */
static char thread_proc(pid_t pid, long tid, double *cpu)
{
    char path[96], buf[512];
    snprintf(path, sizeof path, "/proc/%d/task/%ld/schedstat", (int)pid, tid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long ns = 0;
    int ok = fscanf(f, "%llu", &ns) == 1;
    fclose(f);
    snprintf(path, sizeof path, "/proc/%d/task/%ld/stat", (int)pid, tid);
    f = fopen(path, "r");
    if (!f || !ok) {
        if (f) fclose(f);
        return 0;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    *cpu = (double)ns * 1e-9;
    return p && p[1] == ' ' ? p[2] : '?';
}

/* The state letter of /proc/PID/stat (0: no such process), its fields in
 * ps and its comm, each when not NULL (attach_pstat_parse). */
static char proc_stat(pid_t pid, struct attach_pstat *ps, char *comm, size_t ncomm)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return attach_pstat_parse(buf, ps, comm, ncomm);
}

/* The process is gone: no such pid, a zombie (its parent has not reaped
 * it yet: nothing of it is left to read), or its pid now another
 * process's (start time not start0: it exited and the pid was reused; a
 * new Python there must not be merged into its report). */
static int proc_gone(pid_t pid, struct attach_pstat *ps, unsigned long long start0)
{
    char st = proc_stat(pid, ps, NULL, 0);
    return attach_pstat_gone(st, ps, start0);
}

/* The thread's CPU seconds: its task clock, else the process clock when it
 * is the only running thread (single), else schedstat. 0 or -1 (gone). */
static int thread_cpu(struct att_proc *pr, struct att_thread *s, int single, double *cpu)
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
    return thread_proc(pr->ap.pid, s->tid, cpu) ? 0 : -1;
}

static struct att_thread *att_thread_find(struct att_proc *pr, long tid)
{
    for (int i = 0; i < pr->nth; i++)
        if (pr->th[i].tid == tid) return &pr->th[i];
    return NULL;
}

static struct att_thread *att_thread(struct att_proc *pr, long tid)
{
    struct att_thread *t = att_thread_find(pr, tid);
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

/* The frame charged: the innermost that is part of the program by the
 * include / exclude rule the in-process agent applies (protocol/
 * agent_paths.h: by default the innermost outside the standard library,
 * site-packages and dist-packages, as `hotline run` charges the user's
 * code), else the innermost. */
static int charged_frame(const struct att *a, const struct attach_frame *fr, int nf)
{
    for (int i = 0; i < nf; i++)
        if (agent_path_profiled(a->include, a->ninclude, a->exclude, a->nexclude, fr[i].file))
            return i;
    return 0;
}

/* Charge one thread's tick: str/stack messages as needed, then its part
 * of a delta (appended to lines/funcs/stacks/threads, borrowed). */
static void att_charge(struct att *a, struct att_proc *pr, const struct attach_thread *t,
                       struct att_thread *s, int cat, double dw, double cpu, json_t *lines,
                       json_t *funcs, json_t *stacks, json_t *threads)
{
    struct attach_frame fr[ATTACH_MAX_FRAMES];
    int nf = attach_stack(&pr->ap, t, fr, ATTACH_MAX_FRAMES);
    if (nf < 0) {
        a->dropped++; /* a chain that did not validate: no garbage in the report */
        return;
    }
    double py = cat == CAT_PY ? dw : 0, nat = cat == CAT_NAT ? dw : 0,
           sys = cat == CAT_SYS ? dw : 0;
    if (!s->name[0]) { /* the main thread as Python names it, others by their comm */
        char path[96];
        snprintf(path, sizeof path, "/proc/%d/task/%ld/comm", (int)pr->ap.pid, t->tid);
        FILE *f = t->tid == pr->ap.pid ? NULL : fopen(path, "r");
        if (f && fgets(s->name, sizeof s->name, f)) s->name[strcspn(s->name, "\n")] = 0;
        if (f) fclose(f);
        if (!s->name[0])
            snprintf(s->name, sizeof s->name, "%s", t->tid == pr->ap.pid ? "MainThread" : "?");
    }
    json_t *thr = json_pack("{s:I,s:s,s:f,s:f,s:f}", "tid", (json_int_t)t->tid, "name", s->name,
                            "py", py, "nat", nat, "sys", sys);
    json_array_append_new(threads, thr);
    if (nf == 0) return;
    for (int i = 0; i < nf; i++) /* no location (a prologue instruction): its first line */
        if (fr[i].line < 0) fr[i].line = fr[i].firstline > 0 ? fr[i].firstline : 0;
    json_t *jfr = json_array();
    char key[8192];
    size_t kl = 0;
    for (int i = 0; i < nf; i++) {
        long long f = att_str(a, pr, fr[i].file), n = att_str(a, pr, fr[i].name);
        json_array_append_new(jfr, json_pack("[I,I,i]", f, n, fr[i].line));
        if (kl < sizeof key - 64)
            kl += (size_t)snprintf(key + kl, sizeof key - kl, "%lld:%lld:%d|", f, n, fr[i].line);
    }
    int c = charged_frame(a, fr, nf);
    long long file = att_str(a, pr, fr[c].file), name = att_str(a, pr, fr[c].name);
    double now = mono();
    if (file != s->cur_file || fr[c].line != s->cur_line) {
        s->cur_file = file;
        s->cur_line = fr[c].line;
        s->since = now;
    }
    if (pr->now_threads) /* the live view: all frames, innermost first */
        json_array_append_new(pr->now_threads,
                              json_pack("{s:I,s:s,s:s,s:f,s:O}", "tid", (json_int_t)t->tid, "name",
                                        s->name, "state",
                                        cat == CAT_PY    ? "python"
                                        : cat == CAT_NAT ? "native"
                                                         : "system",
                                        "since_s", now - s->since, "fr", jfr));
    json_t *sid = json_object_get(pr->stacks, key);
    long long stack;
    if (sid) {
        stack = json_integer_value(sid);
        json_decref(jfr);
    } else {
        stack = ++pr->next_stack;
        json_object_set_new(pr->stacks, key, json_integer(stack));
        att_apply(a, pr, json_pack("{s:s,s:I,s:o}", "t", "stack", "id", stack, "fr", jfr));
    }
    json_array_append_new(lines,
                          json_pack("{s:I,s:i,s:f,s:f,s:f,s:f,s:i}", "f", file, "l", fr[c].line,
                                    "py", py, "nat", nat, "sys", sys, "cpu", cpu, "n", 1));
    json_array_append_new(funcs, json_pack("{s:I,s:I,s:i,s:i,s:f,s:f,s:f,s:f,s:i}", "f", file, "fn",
                                           name, "first", fr[c].firstline, "last", fr[c].lastline,
                                           "py", py, "nat", nat, "sys", sys, "cpu", cpu, "n", 1));
    /* the same rule as the agent's: th[] only grows, so the index is the
     * thread's rank in first-seen order */
    long long stid = s - pr->th < AGENT_STACK_THREADS ? (long long)t->tid : 0;
    json_array_append_new(stacks, json_pack("[I,i,f,I]", stack, 1, dw, (json_int_t)stid));
}

/* One probe window on a running thread (probe.h decides). single: the only
 * running thread, whose CPU is then the process's exact clock. */
static void att_probe(struct att_proc *pr, struct attach_thread *t, struct att_thread *s,
                      int single, double tick_cpu, double budget)
{
    double cpu;
    int holds = attach_holds_gil(&pr->ap, t);
    if (thread_cpu(pr, s, single, &cpu)) return;
    probe_start(&s->probe, t->sig, holds == 0, cpu, mono());
    int frozen = 0;
    double cpu_prev = -1, end = mono() + budget;
    /* until decided (probe_done, or enough frozen evidence for CAT_NAT) or
     * the budget ends: on a loaded host a runnable target can wait
     * milliseconds for a CPU, and pairs without CPU prove nothing */
    for (int k = 0;
         k < ATT_PROBE_PAIRS && !probe_done(&s->probe) &&
         !(s->probe.frozen_n >= PROBE_MIN_PAIRS && s->probe.frozen_s >= PROBE_MIN_FROZEN) &&
         mono() < end;
         k++) {
        /* a frozen pair is followed at once (probe_pair): a sleep would
         * stretch the next pair past PROBE_MAX_PAIR on a loaded host */
        if (!frozen) sleep_s(s->probe.cpu > cpu_prev ? ATT_PROBE_GAP : ATT_PROBE_WAIT);
        cpu_prev = s->probe.cpu;
        uint64_t sig;
        if (attach_thread_sig(&pr->ap, t, &sig)) return;
        holds = attach_holds_gil(&pr->ap, t);
        if (thread_cpu(pr, s, single, &cpu)) return;
        frozen = probe_pair(&s->probe, sig, holds == 0, cpu, mono());
    }
    int v = probe_verdict(&s->probe, tick_cpu);
    if (getenv("HOTLINE_ATTACH_DEBUG"))
        fprintf(stderr,
                "probe pid %d tid %ld single %d moved %d frozen %d %.0fus nogil %.0fus -> %d\n",
                (int)pr->ap.pid, t->tid, single, s->probe.moved, s->probe.frozen_n,
                s->probe.frozen_s * 1e6, s->probe.nogil_s * 1e6, v);
    if (v >= 0) s->run_cat = v;
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
static int att_pick_threads(struct att *a, struct att_proc *pr, int n)
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
        att_tell(a, msg);
    }
    return ATTACH_MAX_THREADS;
}

/* Records of threads not sampled this tick go (ended, or left out): their
 * counters close, their slots are free for the threads sampled next. */
static void att_threads_prune(struct att_proc *pr)
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
static void att_reopen(struct att_proc *pr, unsigned long long arg_start)
{
    pid_t pid = pr->ap.pid;
    char why[512];
    attach_close(&pr->ap);
    memset(&pr->ap, 0, sizeof pr->ap);
    pr->closed = attach_open(&pr->ap, pid, why, sizeof why) != 0;
    if (pr->closed) {
        attach_close(&pr->ap);
        memset(&pr->ap, 0, sizeof pr->ap);
        pr->ap.pid = pid;
    }
    pr->arg_start = arg_start;
}

/* One tick of one process: 0, or -ESRCH when it is gone. */
static int att_tick(struct att *a, struct att_proc *pr)
{
    struct attach_pstat ps;
    if (proc_gone(pr->ap.pid, &ps, pr->start)) return -ESRCH;
    if (ps.arg_start != pr->arg_start || pr->closed) att_reopen(pr, ps.arg_start);
    double now = mono();
    if (pr->closed) { /* its time goes to the first line read once it is open */
        if (getenv("HOTLINE_ATTACH_DEBUG"))
            fprintf(stderr, "hotline: process %d not open (exec'd)\n", (int)pr->ap.pid);
        return 0;
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
        st[i] = thread_proc(pr->ap.pid, ts[i].tid, &cpu[i]);
    n = att_pick_threads(a, pr, n);
    pr->gen++;
    for (int i = 0; i < n; i++) { /* first the records of threads not sampled now go */
        struct att_thread *s = att_thread_find(pr, ts[i].tid);
        if (s) s->gen = pr->gen;
    }
    att_threads_prune(pr);
    int nrun = 0;
    for (int i = 0; i < n; i++) {
        nrun += st[i] == 'R';
        struct att_thread *s = att_thread(pr, ts[i].tid);
        if (st[i] && s && s->perf_fd >= 0) thread_cpu(pr, s, 0, &cpu[i]);
    }
    json_t *lines = json_array(), *funcs = json_array(), *stacks = json_array(),
           *threads = json_array();
    if (pr->sock >= 0 && pr->now_hz > 0 && now - pr->last_now >= 1.0 / pr->now_hz)
        pr->now_threads = json_array();
    for (int i = 0; i < n; i++) {
        struct att_thread *s = att_thread(pr, ts[i].tid);
        if (!s || !st[i]) continue;
        double dw = s->have_base ? now - s->last_wall : now - pr->last_tick;
        double dc = s->have_base ? cpu[i] - s->last_cpu : 0;
        double cpu0 = s->probe.cpu;
        int running = st[i] == 'R';
        if (running) {
            att_probe(pr, &ts[i], s, nrun == 1, dc, a->budget);
            if (s->probe.cpu - cpu0 > 2e-6 && s->have_base) running = 1;
        } else {
            probe_start(&s->probe, 0, 1, cpu[i], now);
        }
        double on = dw > 0 ? (dc < dw ? dc / dw : 1) : 0;
        att_charge(a, pr, &ts[i], s, running ? s->run_cat : CAT_SYS, dw, running ? dw * on : 0,
                   lines, funcs, stacks, threads);
        s->have_base = 1;
        s->last_wall = now;
        s->last_cpu = cpu[i];
    }
    pr->last_tick = now;
    att_apply(a, pr,
              json_pack("{s:s,s:f,s:i,s:o,s:o,s:o,s:o}", "t", "delta", "ts", now - a->t0, "samples",
                        1, "lines", lines, "funcs", funcs, "stacks", stacks, "threads", threads));
    if (pr->now_threads) {
        att_apply(
            a, pr,
            json_pack("{s:s,s:f,s:o}", "t", "now", "ts", now - a->t0, "threads", pr->now_threads));
        pr->now_threads = NULL;
        pr->last_now = now;
    }
    return 0;
}

/* --connect: what the server asked since the last tick (`now` rate, `stop`)
 * on pr's connection; its socket closing is a stop too. */
static void att_poll(struct att_proc *pr)
{
    for (;;) {
        if (pr->in_len == sizeof pr->in) pr->in_len = 0; /* no request is that long */
        ssize_t r = recv(pr->sock, pr->in + pr->in_len, sizeof pr->in - pr->in_len, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return; /* EAGAIN: nothing more now */
        if (r == 0) {
            att_stop = SIGPIPE;
            return;
        }
        pr->in_len += (size_t)r;
        char *nl;
        while ((nl = memchr(pr->in, '\n', pr->in_len))) {
            json_t *m = json_loadb(pr->in, (size_t)(nl - pr->in), 0, NULL);
            const char *t = json_string_value(json_object_get(m, "t"));
            if (t && !strcmp(t, "now")) {
                json_int_t hz = json_integer_value(json_object_get(m, "hz"));
                pr->now_hz = hz > 0 ? (hz < 100 ? (int)hz : 100) : 0;
            } else if (t && !strcmp(t, "stop")) {
                att_stop = SIGTERM;
            }
            json_decref(m);
            size_t used = (size_t)(nl - pr->in) + 1;
            memmove(pr->in, pr->in + used, pr->in_len - used);
            pr->in_len -= used;
        }
    }
}

/* --connect SOCK: the server's agent socket; -1 with a message on failure */
static int att_connect(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        fprintf(stderr, "hotline attach: socket path too long: %s\n", path);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        fprintf(stderr, "hotline attach: cannot connect to %s: %s\n", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

/* The command line of pid, arguments joined by spaces, cut to fit buf
 * ("..." at the end when cut); "?" when unreadable. */
static void proc_cmdline(pid_t pid, char *buf, size_t n)
{
    char path[64], raw[512];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "r");
    size_t l = f ? fread(raw, 1, sizeof raw - 1, f) : 0;
    if (f) fclose(f);
    while (l > 0 && raw[l - 1] == 0)
        l--;
    raw[l] = 0;
    for (size_t i = 0; i < l; i++)
        if (raw[i] == 0 || !isprint((unsigned char)raw[i])) raw[i] = ' ';
    if (!l) snprintf(raw, sizeof raw, "?");
    if (strlen(raw) < n) {
        snprintf(buf, n, "%s", raw);
    } else {
        snprintf(buf, n, "%.*s...", (int)(n - 4), raw);
    }
}

/* hello: the process's pid, parent, Python, executable, argv, cwd, main
 * script; the attached process's script is the profile's program */
static void att_hello(struct att *a, struct att_proc *pr)
{
    char path[96], buf[8192], exe[PATH_MAX] = "", cwd[PATH_MAX] = "";
    pid_t pid = pr->ap.pid;
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t l = readlink(path, exe, sizeof exe - 1);
    exe[l > 0 ? l : 0] = 0;
    snprintf(path, sizeof path, "/proc/%d/cwd", (int)pid);
    l = readlink(path, cwd, sizeof cwd - 1);
    cwd[l > 0 ? l : 0] = 0;
    json_t *argv = json_array();
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    char main_path[PATH_MAX] = "";
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
        const char *arg = buf + i;
        json_array_append_new(argv, json_string(arg));
        size_t al = strlen(arg);
        if (!main_path[0] && al > 3 && !strcmp(arg + al - 3, ".py"))
            snprintf(main_path, sizeof main_path, "%s%s%s", arg[0] == '/' ? "" : cwd,
                     arg[0] == '/' ? "" : "/", arg);
    }
    if (pr == a->procs[0]) profile_set_str(&a->p->meta.program, main_path[0] ? main_path : exe);
    att_apply(a, pr,
              json_pack("{s:s,s:i,s:i,s:i,s:s,s:s,s:o,s:s,s:s,s:f,s:s}", "t", "hello", "v", 1,
                        "pid", (int)pid, "ppid", (int)pr->ppid, "python", pr->ap.version,
                        "executable", exe, "argv", argv, "cwd", cwd, "main", main_path,
                        "interval_ms", a->interval_ms, "clock", "attach"));
}

/* A new process to sample (not yet in a->procs): its store connection or,
 * with --connect, its own connection to the server. NULL on failure. */
static struct att_proc *att_proc_new(struct att *a)
{
    struct att_proc *pr = calloc(1, sizeof *pr);
    if (!pr) return NULL;
    pr->sock = -1;
    pr->strs = json_object();
    pr->stacks = json_object();
    if (a->connect_to)
        pr->sock = att_connect(a->connect_to);
    else
        pr->conn = a->p ? profile_conn_new(a->p) : NULL;
    if (!pr->strs || !pr->stacks || (a->connect_to ? pr->sock < 0 : !pr->conn)) {
        json_decref(pr->strs);
        json_decref(pr->stacks);
        if (pr->conn) profile_conn_free(pr->conn);
        if (pr->sock >= 0) close(pr->sock);
        free(pr);
        return NULL;
    }
    return pr;
}

static void att_proc_free(struct att_proc *pr)
{
    if (!pr) return;
    if (pr->sock >= 0) close(pr->sock);
    json_decref(pr->now_threads);
    for (int i = 0; i < pr->nth; i++)
        if (pr->th[i].perf_fd >= 0) close(pr->th[i].perf_fd);
    json_decref(pr->strs);
    json_decref(pr->stacks);
    if (pr->conn) profile_conn_free(pr->conn);
    attach_close(&pr->ap);
    free(pr);
}

/* pr's stream ends (reason "exit": it exited; "stop": we detach) */
static void att_proc_end(struct att *a, struct att_proc *pr, const char *reason)
{
    if (pr->gone) return;
    pr->gone = 1;
    att_apply(a, pr,
              json_pack("{s:s,s:f,s:s}", "t", "end", "ts", mono() - a->t0, "reason", reason));
    for (int i = 0; i < pr->nth; i++) /* its counters go with it */
        if (pr->th[i].perf_fd >= 0) {
            close(pr->th[i].perf_fd);
            pr->th[i].perf_fd = -1;
        }
}

/* A followed child (procs[i], i > 0) ended: its connection closes (as a
 * run's child's does), its entry and slot go. */
static void att_forget(struct att *a, int i)
{
    struct att_proc *pr = a->procs[i];
    int w = 0;
    for (int k = 0; k < a->nkids; k++)
        if (a->kids[k].pid != pr->ap.pid) a->kids[w++] = a->kids[k];
    a->nkids = w;
    att_proc_free(pr);
    memmove(&a->procs[i], &a->procs[i + 1], (size_t)(a->nprocs - i - 1) * sizeof *a->procs);
    a->nprocs--;
}

/* ---- children ------------------------------------------------------------
 * Looked for in /proc while attached: a child of a process in scope (the
 * attached one; with --children every process followed) that stays for
 * one scan (a fork about to exec is no Python child) is opened as attach
 * opens a target. A Python one is followed (--children, under the cap) or
 * named once; any other is rechecked while it may still become Python (an
 * exec'd interpreter initialising, a shell exec'ing python) and when its
 * comm changes (an exec), else ignored. */

/* Take child k (a Python, opened in cp, stolen) as one more process. */
static int att_follow(struct att *a, struct att_child *k, struct attach_proc *cp, double now)
{
    struct att_proc *pr = att_proc_new(a);
    if (!pr || clock_getcpuclockid(cp->pid, &pr->proc_clock) != 0) {
        att_proc_free(pr);
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
    att_hello(a, pr);
    return 0;
}

static void att_child_check(struct att *a, struct att_child *k, double now)
{
    struct attach_proc cp;
    char why[512] = "", cmd[160], msg[1000];
    int rc = attach_open(&cp, k->pid, why, sizeof why);
    proc_cmdline(k->pid, cmd, sizeof cmd);
    if (rc == 0) {
        if (a->children && a->nprocs < a->max_procs) {
            snprintf(msg, sizeof msg, "following process %d, child of %d (Python %s: %s)",
                     (int)k->pid, (int)k->ppid, cp.version, cmd);
            if (att_follow(a, k, &cp, now) == 0) {
                k->state = ATT_CH_FOLLOWED;
                att_tell(a, msg);
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
                     (int)k->ppid, (int)k->pid, cp.version, cmd, a->max_procs, (int)k->pid);
        } else {
            snprintf(msg, sizeof msg,
                     "process %d started child %d (Python %s: %s): not followed; `hotline attach "
                     "%d` profiles it, or attach with --children",
                     (int)k->ppid, (int)k->pid, cp.version, cmd, (int)k->pid);
        }
        attach_close(&cp);
        k->state = ATT_CH_TOLD;
        att_tell(a, msg);
        return;
    }
    attach_close(&cp);
    if (rc == ATTACH_EVERSION || rc == -EPERM || rc == -EACCES) { /* a Python, not readable */
        snprintf(msg, sizeof msg, "process %d started child %d (%s): not followed: %s",
                 (int)k->ppid, (int)k->pid, cmd, why);
        k->state = ATT_CH_TOLD;
        att_tell(a, msg);
        return;
    }
    /* not (yet) Python, or gone (forgotten at the next scan) */
    k->state = ATT_CH_OTHER;
    k->next_check = now - k->first < ATT_RECHECK_S ? now + ATT_RECHECK_GAP_S : 1e300;
}

/* pid, a child of ppid, seen by this scan */
static void att_child_seen(struct att *a, pid_t pid, pid_t ppid, double now)
{
    struct attach_pstat ps;
    char comm[20];
    char st = proc_stat(pid, &ps, comm, sizeof comm);
    if (!st || st == 'Z' || st == 'X') return;
    unsigned long long start = ps.start;
    struct att_child *k = NULL;
    for (int i = 0; i < a->nkids; i++)
        if (a->kids[i].pid == pid) {
            k = &a->kids[i];
            break;
        }
    /* a reused pid is another process (a followed one's sampler sees the
     * old one gone first: its entry stays until then) */
    if (k && k->start != start && k->state == ATT_CH_FOLLOWED) return;
    if (!k || k->start != start) {
        if (!k) {
            if (a->nkids == ATT_MAX_CHILDREN) return; /* more are not looked at */
            k = &a->kids[a->nkids++];
        }
        memset(k, 0, sizeof *k);
        k->pid = pid;
        k->ppid = ppid;
        k->start = start;
        k->state = ATT_CH_PENDING;
        k->first = now;
        k->next_check = now + ATT_SETTLE_S;
        snprintf(k->comm, sizeof k->comm, "%s", comm);
    }
    k->seen = 1;
    k->arg_start = ps.arg_start;
    if (k->state == ATT_CH_OTHER && strcmp(k->comm, comm)) { /* an exec: look again */
        snprintf(k->comm, sizeof k->comm, "%s", comm);
        k->first = now;
        k->next_check = now + ATT_SETTLE_S;
    }
    if ((k->state == ATT_CH_PENDING || k->state == ATT_CH_OTHER) && now >= k->next_check)
        att_child_check(a, k, now);
    if ((k->state == ATT_CH_PENDING || k->state == ATT_CH_OTHER) && k->next_check < a->soon)
        a->soon = k->next_check;
}

/* Whose children are looked for: the attached process while it lives; with
 * --children every process followed. */
static int att_in_scope(const struct att *a, pid_t ppid)
{
    for (int i = 0; i < a->nprocs; i++)
        if (a->procs[i]->ap.pid == ppid && !a->procs[i]->gone) return i == 0 || a->children;
    return 0;
}

static int is_pid(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return 0;
    return 1;
}

static void att_scan(struct att *a, double now)
{
    a->soon = 1e300;
    for (int i = 0; i < a->nkids; i++)
        a->kids[i].seen = 0;
    char path[96];
    if (a->children_files) { /* each thread's children: a few small reads */
        for (int i = 0; i < a->nprocs; i++) {
            struct att_proc *pr = a->procs[i];
            if (pr->gone || !att_in_scope(a, pr->ap.pid)) continue;
            snprintf(path, sizeof path, "/proc/%d/task", (int)pr->ap.pid);
            DIR *d = opendir(path);
            struct dirent *e;
            while (d && (e = readdir(d))) {
                if (!is_pid(e->d_name)) continue;
                char cp[sizeof path + sizeof e->d_name + 16], buf[4096];
                snprintf(cp, sizeof cp, "%s/%s/children", path, e->d_name);
                FILE *f = fopen(cp, "r");
                size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
                if (f) fclose(f);
                buf[n] = 0;
                for (char *p = buf, *q; *p; p = q) {
                    long c = strtol(p, &q, 10);
                    if (q == p) break;
                    if (c > 0) att_child_seen(a, (pid_t)c, pr->ap.pid, now);
                }
            }
            if (d) closedir(d);
        }
    } else { /* every process's parent: /proc/N/stat of each */
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!is_pid(e->d_name)) continue;
            pid_t pid = (pid_t)atoi(e->d_name);
            struct attach_pstat ps;
            if (!proc_stat(pid, &ps, NULL, 0) || !att_in_scope(a, ps.ppid)) continue;
            att_child_seen(a, pid, ps.ppid, now);
        }
        if (d) closedir(d);
    }
    /* forget the children gone (or gone from scope); a followed one stays
     * until its sampler sees it end */
    int w = 0;
    for (int i = 0; i < a->nkids; i++)
        if (a->kids[i].seen || a->kids[i].state == ATT_CH_FOLLOWED) a->kids[w++] = a->kids[i];
    a->nkids = w;
}

/* Scan when due: once a second, with --children as often as the ticks
 * (where each thread lists its children) or every ATT_SCAN_FOLLOW_S (a
 * scan of all of /proc), and sooner when a new child is to be checked,
 * never more than ATT_SCAN_SHARE of the time. */
static void att_scan_due(struct att *a)
{
    double now = mono();
    if (now < a->next_scan) return;
    att_scan(a, now);
    double end = mono(), cost = end - now;
    a->scan_total += cost;
    a->nscans++;
    double period = a->children ? (a->children_files ? 0 : ATT_SCAN_FOLLOW_S) : ATT_SCAN_S;
    double next = end + period;
    if (a->soon < next) next = a->soon; /* a new child is not left waiting a second */
    if (next < end + cost / ATT_SCAN_SHARE) next = end + cost / ATT_SCAN_SHARE;
    a->next_scan = next;
}

static void att_free(struct att *a)
{
    free(a->ts);
    free(a->st);
    free(a->cpu);
    free(a);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("hotline attach: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n\n", stderr);
    fputs(attach_usage, stderr);
    return 2;
}

static int open_error_status(int rc)
{
    switch (rc) {
    case -ESRCH:
        return 3;
    case ATTACH_ENOTPY:
        return 4;
    case ATTACH_EVERSION:
        return 5;
    case -EPERM:
    case -EACCES:
        return 6;
    default:
        return 1;
    }
}

int cmd_attach(int argc, char **argv)
{
    struct cli_outputs outs = {0};
    const char *pid_arg = NULL, *connect_to = NULL;
    double duration = 0, interval_ms = AGENT_INTERVAL_DEFAULT_MS, d;
    int top = REPORT_DEFAULT_TOP, memory = 0, children = 0, ninc = 0, nexc = 0;
    const char *incs[ATT_MAX_PATTERNS], *excs[ATT_MAX_PATTERNS];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(attach_usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--memory")) {
            memory = 1;
            continue;
        }
        if (!strcmp(a, "--children")) {
            children = 1;
            continue;
        }
        if (a[0] != '-') {
            if (pid_arg) return usage_error("one PID only, not '%s'", a);
            pid_arg = a;
            continue;
        }
        static const char *const valued[] = {"--duration",  "--interval",   "--top",  "--json",
                                             "--collapsed", "--speedscope", "--html", "--connect",
                                             "--include",   "--exclude"};
        const char *name =
            cli_valued_opt(argc, argv, &i, valued, sizeof valued / sizeof *valued, &val);
        if (!name) return usage_error("unknown option '%s'", a);
        if (!val) return usage_error("%s needs a value", name);
        if (cli_output_slot(&outs, name)) {
            *cli_output_slot(&outs, name) = val;
        } else if (!strcmp(name, "--connect")) {
            connect_to = val;
        } else if (!strcmp(name, "--include") || !strcmp(name, "--exclude")) {
            int inc = name[2] == 'i';
            int *n = inc ? &ninc : &nexc;
            if (*n == ATT_MAX_PATTERNS) return usage_error("too many %s patterns", name);
            (inc ? incs : excs)[(*n)++] = val;
        } else if (!strcmp(name, "--duration")) {
            if (cli_parse_num(val, 0.001, ATT_MAX_DURATION, &duration))
                return usage_error("--duration wants seconds > 0, not '%s'", val);
        } else if (!strcmp(name, "--interval")) {
            if (cli_parse_num(val, AGENT_INTERVAL_MIN_MS, AGENT_INTERVAL_MAX_MS, &interval_ms))
                return usage_error("--interval wants milliseconds, not '%s'", val);
        } else {
            if (cli_parse_num(val, 1, 100000, &d) || d != (int)d)
                return usage_error("--top wants a whole number >= 1, not '%s'", val);
            top = (int)d;
        }
    }
    if (!pid_arg) return usage_error("%s", "no PID to attach to");
    if (cli_parse_num(pid_arg, 1, INT_MAX, &d) || d != (int)d)
        return usage_error("'%s' is not a process id", pid_arg);
    if (memory) {
        /* the injected agent's fork hook drops it in a child: nothing to follow */
        if (children)
            return usage_error("%s", "--memory does not go with --children (the injected agent "
                                     "is not inherited by children)");
        struct attach_mem_opts mo = {.pid = (pid_t)d,
                                     .duration = duration,
                                     .interval_ms = interval_ms,
                                     .top = top,
                                     .outs = &outs,
                                     .connect = connect_to,
                                     .include = incs,
                                     .ninclude = ninc,
                                     .exclude = excs,
                                     .nexclude = nexc};
        return cmd_attach_memory(&mo);
    }

    struct att *a = calloc(1, sizeof *a);
    if (!a) return 1;
    a->ts = malloc(ATTACH_MAX_LISTED * sizeof *a->ts);
    a->st = malloc(ATTACH_MAX_LISTED);
    a->cpu = malloc(ATTACH_MAX_LISTED * sizeof *a->cpu);
    if (!a->ts || !a->st || !a->cpu) {
        fputs("hotline attach: out of memory\n", stderr);
        att_free(a);
        return 1;
    }
    a->children = children;
    a->max_procs = ATT_MAX_PROCS;
    const char *cap = getenv("HOTLINE_ATTACH_MAX_PROCS");
    if (cap && atoi(cap) >= 1 && atoi(cap) < ATT_MAX_PROCS) a->max_procs = atoi(cap);
    a->connect_to = connect_to;
    a->interval_ms = interval_ms;
    memcpy(a->include, incs, (size_t)ninc * sizeof *incs);
    a->ninclude = ninc;
    if (nexc) {
        memcpy(a->exclude, excs, (size_t)nexc * sizeof *excs);
        a->nexclude = nexc;
    } else {
        a->nexclude = (int)(sizeof att_default_exclude / sizeof *att_default_exclude);
        memcpy(a->exclude, att_default_exclude, sizeof att_default_exclude);
    }
    a->p = profile_new();
    struct att_proc *root = a->p ? att_proc_new(a) : NULL;
    if (!root) {
        if (!a->p || !connect_to) fputs("hotline attach: out of memory\n", stderr);
        profile_free(a->p);
        att_free(a);
        return 1;
    }
    a->procs[a->nprocs++] = root;
    char why[512] = "";
    struct attach_pstat ps = {0}; /* before it is opened: an exec since is seen */
    proc_stat((pid_t)d, &ps, NULL, 0);
    root->ppid = ps.ppid;
    root->arg_start = ps.arg_start;
    root->start = ps.start;
    int rc = attach_open(&root->ap, (pid_t)d, why, sizeof why);
    if (rc) {
        char safe[TERMSAFE_SIZE(sizeof why)];
        fprintf(stderr, "hotline attach: %s\n",
                termsafe_str(safe, sizeof safe, why[0] ? why : strerror(-rc)));
        if (root->sock >= 0) /* the editor shows it (an `error` alone on its connection) */
            att_apply(a, root,
                      json_pack("{s:s,s:s}", "t", "error", "msg", why[0] ? why : strerror(-rc)));
        att_proc_free(root);
        profile_free(a->p);
        att_free(a);
        return open_error_status(rc);
    }
    int status = 0;
    if (clock_getcpuclockid(root->ap.pid, &root->proc_clock) != 0) {
        fputs("hotline attach: no CPU clock for the target\n", stderr);
        status = 1;
        goto out;
    }
    char probe_path[64];
    snprintf(probe_path, sizeof probe_path, "/proc/%d/task/%d/children", (int)getpid(),
             (int)getpid());
    /* HOTLINE_ATTACH_PROC_SCAN=1: the scan of all of /proc even so (tests) */
    a->children_files = access(probe_path, R_OK) == 0 && !getenv("HOTLINE_ATTACH_PROC_SCAN");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* 3.9/3.10 code objects have no co_qualname: functions go by co_name */
    char sv[TERMSAFE_SIZE(sizeof root->ap.version)], sb[TERMSAFE_SIZE(sizeof root->ap.binary)];
    fprintf(stderr, "hotline: attached to process %d (Python %s, %s)%s%s%s\n", (int)root->ap.pid,
            termsafe_str(sv, sizeof sv, root->ap.version),
            termsafe_str(sb, sizeof sb, root->ap.binary),
            root->ap.lay.frame_object ? "; function names without their class (no qualified "
                                        "names before 3.11)"
                                      : "",
            children ? "; its Python children are followed" : "",
            duration > 0 ? "" : "; Ctrl-C detaches");
    a->budget = interval_ms * 0.5e-3;
    a->t0 = root->last_tick = mono();
    att_hello(a, root);
    const char *reason = "detached";
    int root_told = 0;
    att_tick(a, root); /* opens the threads' counters: say which clock decides */
    int exact = root->nth > 0;
    for (int i = 0; i < root->nth; i++)
        exact &= root->th[i].perf_fd >= 0;
    fprintf(stderr, "hotline: thread CPU from %s\n",
            exact ? "perf task clocks (exact)"
                  : "/proc (scheduler ticks: the native split is approximate, docs/attach.md)");
    for (;;) {
        double next = mono() + interval_ms * 1e-3; /* from this tick's start */
        int live = 0;
        for (int i = 0; i < a->nprocs; i++) {
            struct att_proc *pr = a->procs[i];
            if (pr->gone) continue;
            if (att_tick(a, pr) == -ESRCH) {
                att_proc_end(a, pr, "exit");
                if (i > 0) { /* its slot is free for another (the store has its data) */
                    fprintf(stderr, "hotline: process %d exited\n", (int)pr->ap.pid);
                    att_forget(a, i--);
                }
                continue;
            }
            live++;
            if (pr->sock >= 0) att_poll(pr);
        }
        if (root->gone && live && !root_told) {
            fprintf(stderr, "hotline: process %d exited; the %d processes followed run on\n",
                    (int)root->ap.pid, live);
            root_told = 1;
        }
        if (!live) {
            reason = "target exited";
            break;
        }
        if (att_stop) {
            reason = "detached (interrupted)";
            break;
        }
        if (duration > 0 && mono() - a->t0 >= duration) {
            reason = "detached (duration)";
            break;
        }
        att_scan_due(a);
        double wait = next - mono();
        if (wait > 0) sleep_s(wait);
    }
    for (int i = 0; i < a->nprocs; i++)
        att_proc_end(a, a->procs[i], "stop");
    if (getenv("HOTLINE_ATTACH_DEBUG"))
        fprintf(stderr, "hotline: %lld children scans (%s), %.1f us each\n", a->nscans,
                a->children_files ? "task children files" : "all of /proc",
                a->nscans ? a->scan_total / (double)a->nscans * 1e6 : 0.0);
    if (connect_to) { /* the server has it all: its report, its files */
        fprintf(stderr, "hotline: %s\n", reason);
        goto out;
    }
    struct prof_meta *m = &a->p->meta;
    m->elapsed_s = mono() - a->t0;
    m->exit_status = -1;
    profile_set_str(&m->reason, reason);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
    fputc('\n', stderr);
    report_print(stderr, a->p, top, cwd);
    if (a->dropped)
        fprintf(stderr, "  %lld inconsistent reads dropped (the target moved under them)\n",
                a->dropped);
    if (a->threads_left)
        fprintf(stderr,
                "  %lld thread samples left out: more than %d Python threads in a tick (the "
                "main thread and the running ones were kept)\n",
                a->threads_left, ATTACH_MAX_THREADS);
    if (cli_outputs_write(&outs, a->p, "hotline", 0)) status = 1;
out:
    for (int i = 0; i < a->nprocs; i++)
        att_proc_free(a->procs[i]);
    profile_free(a->p);
    att_free(a);
    return status;
}
