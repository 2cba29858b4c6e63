/* cmd_attach: `hotline attach PID [--duration S] [--json OUT] [--interval MS]
 * [--top N]`. Samples a running CPython from outside (attach/attach.h) until
 * it exits, --duration ends or Ctrl-C, then prints the report `hotline run`
 * prints and saves the same JSON profile: each tick becomes the messages an
 * agent would send (hello, str, stack, delta), applied to a profile store,
 * so the report and the file are the run's own code. The python / native /
 * system split is profiler/probe.h's decision, fed with what /proc says:
 * per-thread state (stat) and CPU (schedstat, which moves only at scheduler
 * ticks; the process CPU clock, exact, stands in for the thread's while it
 * is the only one running). Method and limits: docs/attach.md. */
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

#define ATT_PROBE_PAIRS 400 /* probes per window at most */
#define ATT_PROBE_GAP 20e-6 /* sleep between two probes */
/* ...when the target got no CPU since the last probe: it waits for one, and
 * polling faster would take the CPU it waits for (2-core hosts) */
#define ATT_PROBE_WAIT 300e-6
#define ATT_MAX_DURATION 1e7 /* seconds */
#define ATT_MAX_PATTERNS 64  /* --include / --exclude each */

static const char attach_usage[] =
    "usage: hotline attach PID [options]\n"
    "\n"
    "Samples a running Python 3.11+ process from outside (process_vm_readv: the\n"
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
    "(the target left as it was), 1 other errors\n";

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
};

struct att {
    struct attach_proc ap;
    struct profile *p;
    struct prof_conn *conn;
    json_t *strs, *stacks; /* string -> id, stack key -> id (owned) */
    long long next_str, next_stack;
    struct att_thread th[ATTACH_MAX_THREADS];
    int nth;
    clockid_t proc_clock;
    double t0, last_tick;
    long long dropped;
    double budget; /* seconds a probe window may last */
    /* --connect: each message is a line on the server's socket instead of
     * an update of the local store (the agent's wire, docs/agent-protocol.md) */
    int sock; /* -1: local store */
    int now_hz;
    double last_now;
    json_t *now_threads; /* this tick's `now` entries while one is due (owned) */
    char in[4096];       /* server -> us: partial line */
    size_t in_len;
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
static int att_send(struct att *a, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = send(a->sock, s, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Feed one agent message (new reference, stolen) to the store, or with
 * --connect send it to the server. */
static void att_apply(struct att *a, json_t *msg)
{
    if (!msg) return;
    if (a->sock >= 0) {
        char *s = json_dumps(msg, JSON_COMPACT);
        json_decref(msg);
        if (!s) return;
        size_t n = strlen(s);
        s[n] = '\n'; /* json_dumps' terminator becomes the line end */
        if (att_send(a, s, n + 1)) att_stop = SIGPIPE;
        free(s);
        return;
    }
    struct agent_msg m;
    char err[128];
    if (agent_msg_from_json(msg, &m, err, sizeof err) == 0) {
        if (profile_conn_apply(a->conn, &m)) a->dropped++;
        agent_msg_clear(&m);
    } else {
        a->dropped++; /* never silently: counted in the report's dropped line */
    }
}

static long long att_str(struct att *a, const char *s)
{
    json_t *id = json_object_get(a->strs, s);
    if (id) return json_integer_value(id);
    long long n = ++a->next_str;
    json_object_set_new(a->strs, s, json_integer(n));
    att_apply(a, json_pack("{s:s,s:I,s:s}", "t", "str", "id", n, "s", s));
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

/* The thread's CPU seconds: its task clock, else the process clock when it
 * is the only running thread (single), else schedstat. 0 or -1 (gone). */
static int thread_cpu(struct att *a, struct att_thread *s, int single, double *cpu)
{
    uint64_t ns;
    if (s->perf_fd >= 0 && read(s->perf_fd, &ns, sizeof ns) == (ssize_t)sizeof ns) {
        *cpu = (double)ns * 1e-9;
        return 0;
    }
    if (single) {
        struct timespec ts;
        if (clock_gettime(a->proc_clock, &ts) != 0) return -1;
        *cpu = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
        return 0;
    }
    return thread_proc(a->ap.pid, s->tid, cpu) ? 0 : -1;
}

static struct att_thread *att_thread(struct att *a, long tid)
{
    for (int i = 0; i < a->nth; i++)
        if (a->th[i].tid == tid) return &a->th[i];
    if (a->nth == ATTACH_MAX_THREADS) return NULL;
    struct att_thread *t = &a->th[a->nth++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
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
static void att_charge(struct att *a, const struct attach_thread *t, struct att_thread *s, int cat,
                       double dw, double cpu, json_t *lines, json_t *funcs, json_t *stacks,
                       json_t *threads)
{
    struct attach_frame fr[ATTACH_MAX_FRAMES];
    int nf = attach_stack(&a->ap, t, fr, ATTACH_MAX_FRAMES);
    if (nf < 0) {
        a->dropped++; /* a chain that did not validate: no garbage in the report */
        return;
    }
    double py = cat == CAT_PY ? dw : 0, nat = cat == CAT_NAT ? dw : 0,
           sys = cat == CAT_SYS ? dw : 0;
    if (!s->name[0]) { /* the main thread as Python names it, others by their comm */
        char path[96];
        snprintf(path, sizeof path, "/proc/%d/task/%ld/comm", (int)a->ap.pid, t->tid);
        FILE *f = t->tid == a->ap.pid ? NULL : fopen(path, "r");
        if (f && fgets(s->name, sizeof s->name, f)) s->name[strcspn(s->name, "\n")] = 0;
        if (f) fclose(f);
        if (!s->name[0])
            snprintf(s->name, sizeof s->name, "%s", t->tid == a->ap.pid ? "MainThread" : "?");
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
        long long f = att_str(a, fr[i].file), n = att_str(a, fr[i].name);
        json_array_append_new(jfr, json_pack("[I,I,i]", f, n, fr[i].line));
        if (kl < sizeof key - 64)
            kl += (size_t)snprintf(key + kl, sizeof key - kl, "%lld:%lld:%d|", f, n, fr[i].line);
    }
    int c = charged_frame(a, fr, nf);
    long long file = att_str(a, fr[c].file), name = att_str(a, fr[c].name);
    double now = mono();
    if (file != s->cur_file || fr[c].line != s->cur_line) {
        s->cur_file = file;
        s->cur_line = fr[c].line;
        s->since = now;
    }
    if (a->now_threads) /* the live view: all frames, innermost first */
        json_array_append_new(a->now_threads,
                              json_pack("{s:I,s:s,s:s,s:f,s:O}", "tid", (json_int_t)t->tid, "name",
                                        s->name, "state",
                                        cat == CAT_PY    ? "python"
                                        : cat == CAT_NAT ? "native"
                                                         : "system",
                                        "since_s", now - s->since, "fr", jfr));
    json_t *sid = json_object_get(a->stacks, key);
    long long stack;
    if (sid) {
        stack = json_integer_value(sid);
        json_decref(jfr);
    } else {
        stack = ++a->next_stack;
        json_object_set_new(a->stacks, key, json_integer(stack));
        att_apply(a, json_pack("{s:s,s:I,s:o}", "t", "stack", "id", stack, "fr", jfr));
    }
    json_array_append_new(lines,
                          json_pack("{s:I,s:i,s:f,s:f,s:f,s:f,s:i}", "f", file, "l", fr[c].line,
                                    "py", py, "nat", nat, "sys", sys, "cpu", cpu, "n", 1));
    json_array_append_new(funcs, json_pack("{s:I,s:I,s:i,s:i,s:f,s:f,s:f,s:f,s:i}", "f", file, "fn",
                                           name, "first", fr[c].firstline, "last", fr[c].lastline,
                                           "py", py, "nat", nat, "sys", sys, "cpu", cpu, "n", 1));
    /* the same rule as the agent's: th[] only grows, so the index is the
     * thread's rank in first-seen order */
    long long stid = s - a->th < AGENT_STACK_THREADS ? (long long)t->tid : 0;
    json_array_append_new(stacks, json_pack("[I,i,f,I]", stack, 1, dw, (json_int_t)stid));
}

/* One probe window on a running thread (probe.h decides). single: the only
 * running thread, whose CPU is then the process's exact clock. */
static void att_probe(struct att *a, struct attach_thread *t, struct att_thread *s, int single,
                      double tick_cpu, double budget)
{
    double cpu;
    int holds = attach_holds_gil(&a->ap, t);
    if (thread_cpu(a, s, single, &cpu)) return;
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
        if (attach_thread_sig(&a->ap, t, &sig)) return;
        holds = attach_holds_gil(&a->ap, t);
        if (thread_cpu(a, s, single, &cpu)) return;
        frozen = probe_pair(&s->probe, sig, holds == 0, cpu, mono());
    }
    int v = probe_verdict(&s->probe, tick_cpu);
    if (getenv("HOTLINE_ATTACH_DEBUG"))
        fprintf(stderr, "probe tid %ld single %d moved %d frozen %d %.0fus nogil %.0fus -> %d\n",
                t->tid, single, s->probe.moved, s->probe.frozen_n, s->probe.frozen_s * 1e6,
                s->probe.nogil_s * 1e6, v);
    if (v >= 0) s->run_cat = v;
}

/* One tick: 0, or -ESRCH when the target is gone. */
static int att_tick(struct att *a)
{
    struct attach_thread ts[ATTACH_MAX_THREADS];
    int n = attach_threads(&a->ap, ts, ATTACH_MAX_THREADS);
    if (n == -ESRCH || kill(a->ap.pid, 0) != 0) return -ESRCH;
    double now = mono();
    if (n < 0) {
        a->dropped++;
        a->last_tick = now;
        return 0;
    }
    char st[ATTACH_MAX_THREADS];
    double cpu[ATTACH_MAX_THREADS];
    int nrun = 0;
    for (int i = 0; i < n; i++) {
        st[i] = thread_proc(a->ap.pid, ts[i].tid, &cpu[i]);
        nrun += st[i] == 'R';
        struct att_thread *s = att_thread(a, ts[i].tid);
        if (st[i] && s && s->perf_fd >= 0) thread_cpu(a, s, 0, &cpu[i]);
    }
    json_t *lines = json_array(), *funcs = json_array(), *stacks = json_array(),
           *threads = json_array();
    if (a->sock >= 0 && a->now_hz > 0 && now - a->last_now >= 1.0 / a->now_hz)
        a->now_threads = json_array();
    for (int i = 0; i < n; i++) {
        struct att_thread *s = att_thread(a, ts[i].tid);
        if (!s || !st[i]) continue;
        double dw = s->have_base ? now - s->last_wall : now - a->last_tick;
        double dc = s->have_base ? cpu[i] - s->last_cpu : 0;
        double cpu0 = s->probe.cpu;
        int running = st[i] == 'R';
        if (running) {
            att_probe(a, &ts[i], s, nrun == 1, dc, a->budget);
            if (s->probe.cpu - cpu0 > 2e-6 && s->have_base) running = 1;
        } else {
            probe_start(&s->probe, 0, 1, cpu[i], now);
        }
        double on = dw > 0 ? (dc < dw ? dc / dw : 1) : 0;
        att_charge(a, &ts[i], s, running ? s->run_cat : CAT_SYS, dw, running ? dw * on : 0, lines,
                   funcs, stacks, threads);
        s->have_base = 1;
        s->last_wall = now;
        s->last_cpu = cpu[i];
    }
    a->last_tick = now;
    att_apply(a,
              json_pack("{s:s,s:f,s:i,s:o,s:o,s:o,s:o}", "t", "delta", "ts", now - a->t0, "samples",
                        1, "lines", lines, "funcs", funcs, "stacks", stacks, "threads", threads));
    if (a->now_threads) {
        att_apply(a, json_pack("{s:s,s:f,s:o}", "t", "now", "ts", now - a->t0, "threads",
                               a->now_threads));
        a->now_threads = NULL;
        a->last_now = now;
    }
    return 0;
}

/* --connect: what the server asked since the last tick (`now` rate, `stop`);
 * its socket closing is a stop too. */
static void att_poll(struct att *a)
{
    for (;;) {
        if (a->in_len == sizeof a->in) a->in_len = 0; /* no request is that long */
        ssize_t r = recv(a->sock, a->in + a->in_len, sizeof a->in - a->in_len, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return; /* EAGAIN: nothing more now */
        if (r == 0) {
            att_stop = SIGPIPE;
            return;
        }
        a->in_len += (size_t)r;
        char *nl;
        while ((nl = memchr(a->in, '\n', a->in_len))) {
            json_t *m = json_loadb(a->in, (size_t)(nl - a->in), 0, NULL);
            const char *t = json_string_value(json_object_get(m, "t"));
            if (t && !strcmp(t, "now")) {
                json_int_t hz = json_integer_value(json_object_get(m, "hz"));
                a->now_hz = hz > 0 ? (hz < 100 ? (int)hz : 100) : 0;
            } else if (t && !strcmp(t, "stop")) {
                att_stop = SIGTERM;
            }
            json_decref(m);
            size_t used = (size_t)(nl - a->in) + 1;
            memmove(a->in, a->in + used, a->in_len - used);
            a->in_len -= used;
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

/* hello: the target's pid, Python, executable, argv, cwd, main script */
static void att_hello(struct att *a, double interval_ms)
{
    char path[96], buf[8192], exe[PATH_MAX] = "", cwd[PATH_MAX] = "";
    pid_t pid = a->ap.pid;
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
    profile_set_str(&a->p->meta.program, main_path[0] ? main_path : exe);
    att_apply(a,
              json_pack("{s:s,s:i,s:i,s:s,s:s,s:o,s:s,s:s,s:f,s:s}", "t", "hello", "v", 1, "pid",
                        (int)pid, "python", a->ap.version, "executable", exe, "argv", argv, "cwd",
                        cwd, "main", main_path, "interval_ms", interval_ms, "clock", "attach"));
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
    int top = REPORT_DEFAULT_TOP, memory = 0, ninc = 0, nexc = 0;
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
        /* include / exclude go into the injected agent's config */
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
    a->sock = -1;
    memcpy(a->include, incs, (size_t)ninc * sizeof *incs);
    a->ninclude = ninc;
    if (nexc) {
        memcpy(a->exclude, excs, (size_t)nexc * sizeof *excs);
        a->nexclude = nexc;
    } else {
        a->nexclude = (int)(sizeof att_default_exclude / sizeof *att_default_exclude);
        memcpy(a->exclude, att_default_exclude, sizeof att_default_exclude);
    }
    if (connect_to && (a->sock = att_connect(connect_to)) < 0) {
        free(a);
        return 1;
    }
    char why[512] = "";
    int rc = attach_open(&a->ap, (pid_t)d, why, sizeof why);
    if (rc) {
        fprintf(stderr, "hotline attach: %s\n", why[0] ? why : strerror(-rc));
        if (a->sock >= 0) { /* the editor shows it (an `error` alone on its connection) */
            att_apply(a, json_pack("{s:s,s:s}", "t", "error", "msg", why[0] ? why : strerror(-rc)));
            close(a->sock);
        }
        attach_close(&a->ap);
        free(a);
        return open_error_status(rc);
    }
    a->p = profile_new();
    a->conn = a->p ? profile_conn_new(a->p) : NULL;
    a->strs = json_object();
    a->stacks = json_object();
    int status = 0;
    if (!a->conn || !a->strs || !a->stacks || clock_getcpuclockid(a->ap.pid, &a->proc_clock) != 0) {
        fputs("hotline attach: out of memory or no CPU clock for the target\n", stderr);
        status = 1;
        goto out;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    fprintf(stderr, "hotline: attached to process %d (Python %s, %s)%s\n", (int)a->ap.pid,
            a->ap.version, a->ap.binary, duration > 0 ? "" : "; Ctrl-C detaches");
    a->budget = interval_ms * 0.5e-3;
    a->t0 = a->last_tick = mono();
    att_hello(a, interval_ms);
    const char *reason = "detached";
    att_tick(a); /* opens the threads' counters: say which clock decides */
    int exact = a->nth > 0;
    for (int i = 0; i < a->nth; i++)
        exact &= a->th[i].perf_fd >= 0;
    fprintf(stderr, "hotline: thread CPU from %s\n",
            exact ? "perf task clocks (exact)"
                  : "/proc (scheduler ticks: the native split is approximate, docs/attach.md)");
    for (;;) {
        double next = mono() + interval_ms * 1e-3; /* from this tick's start */
        if (att_tick(a) == -ESRCH) {
            reason = "target exited";
            break;
        }
        if (a->sock >= 0) att_poll(a);
        if (att_stop) {
            reason = "detached (interrupted)";
            break;
        }
        if (duration > 0 && mono() - a->t0 >= duration) {
            reason = "detached (duration)";
            break;
        }
        double wait = next - mono();
        if (wait > 0) sleep_s(wait);
    }
    att_apply(a, json_pack("{s:s,s:f,s:s}", "t", "end", "ts", mono() - a->t0, "reason", "stop"));
    if (a->sock >= 0) { /* the server has it all: its report, its files */
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
    if (cli_outputs_write(&outs, a->p, "hotline", 0)) status = 1;
out:
    if (a->sock >= 0) close(a->sock);
    json_decref(a->now_threads);
    for (int i = 0; i < a->nth; i++)
        if (a->th[i].perf_fd >= 0) close(a->th[i].perf_fd);
    json_decref(a->strs);
    json_decref(a->stacks);
    if (a->conn) profile_conn_free(a->conn);
    profile_free(a->p);
    attach_close(&a->ap);
    free(a);
    return status;
}
