/* cmd_top: `hotline top PID` or `hotline top -- script.py args`: a live
 * view in the terminal of the hottest lines and functions, refreshed every
 * second, like py-spy top (docs/cli.md, hotline top). Three ways in, one
 * store and one screen:
 *  - a PID: `hotline attach` (attach/engine.h, read-only: the target is
 *    never changed) with the report sink (cli/report_sink.h);
 *  - a PID with --memory: attach --memory's injected agent
 *    (attach_memory.h, its live hooks), so that lines carry memory;
 *  - a script: run under the agent as `hotline run` runs it
 *    (proc/session.h), memory on unless --no-memory.
 * The screen is drawn on a tick instead of a report at the end. Plain ANSI
 * (home, clear to end), so it works over ssh and in tmux; `q` or Ctrl-C
 * quits, `m` sorts by memory. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "agent_config.h"
#include "engine.h"
#include "cli/attach_memory.h"
#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/report.h"
#include "cli/report_sink.h"
#include "cli/rolling.h"
#include "proc/session.h"
#include "store/memprof.h"
#include "store/profile.h"
#include "text/termsafe.h"

static const char top_usage[] =
    "usage: hotline top [options] PID\n"
    "       hotline top [options] [--python PY] -- script.py [args...]\n"
    "\n"
    "A live view of a running Python's hottest lines and functions, with their\n"
    "python / native / system split and memory, refreshed every second (like\n"
    "py-spy top). A PID is read from outside as `hotline attach` reads it: it is\n"
    "never changed, and there is no memory without --memory. A script runs under\n"
    "the profiler as with `hotline run` (memory on; its output into\n"
    "hotline-top-PID.log) and is shown until it exits.\n"
    "Keys: q or Ctrl-C quits, m sorts by memory allocated / by time.\n"
    "\n"
    "options:\n"
    "  --refresh S     seconds between screens (default 1)\n"
    "  --top N         lines shown (default 15; functions: a third of it)\n"
    "  --interval MS   sampling interval in milliseconds (default 10)\n"
    "  --duration S    quit after S seconds\n"
    "  --all-threads   count idle threads too\n"
    "  --memory        with a PID: memory too (alloc / kept MB per line): the\n"
    "                  target loads Hotline's agent until quit, as with\n"
    "                  `hotline attach --memory` (gdb on 3.9-3.13; docs/attach.md)\n"
    "  --no-memory     with a script: no memory profiling\n"
    "  --python PY     the interpreter for a script (default: $VIRTUAL_ENV's, else python3)\n"
    "exit status: as hotline attach (0 done, 3 no such process, 4 not Python, 7\n"
    "--memory injection failed, ...); with a script, the script's own status\n";

#define SAFE(buf, s) termsafe_str(buf, sizeof buf, s)

/* the orders m steps through: a leak hunt wants kept, a churn hunt alloc */
enum { SORT_TIME, SORT_ALLOC, SORT_KEPT, SORT_N };
static const char *const sort_name[SORT_N] = {"time", "MB allocated", "MB kept"};
static const int sort_stat[SORT_N] = {-1, AGENT_STAT_ALLOC, AGENT_STAT_KEPT};
#define TOP_TICK_MS 50 /* keys read, screen due? (script and --memory) */

static volatile sig_atomic_t top_stop;

static void on_stop(int sig)
{
    top_stop = sig;
}

/* The last screen's cumulative seconds per line, to show what the last
 * refresh period added (the "now" column). */
struct seen {
    const char *file; /* store-owned, interned: compared by pointer */
    int line;
    double t;
};

static int cmp_seen(const void *a, const void *b)
{
    const struct seen *x = a, *y = b;
    if (x->file != y->file) return (uintptr_t)x->file < (uintptr_t)y->file ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

struct top {
    struct report_sink rs;   /* a PID from outside: the engine's sink into p */
    const struct profile *p; /* what the screen shows (borrowed) */
    const char *pid_label;
    /* the header's program and version: the engine's, or NULL for the
     * store's (the agent's hello) */
    const char *program, *version;
    const char *memory_off; /* why there is no memory column, or NULL: memory on */
    int nlines, tty_in;
    int sort; /* SORT_TIME, or by memory: what m steps through */
    double refresh, last_draw, last_total, t0;
    struct seen *prev, *cur; /* sorted by (file, line) */
    size_t nprev, ncur;
    struct termios saved;
    char cwd[PATH_MAX];
};

/* Every line of the store with its seconds now, sorted; the previous
 * snapshot kept for the deltas. */
static void snapshot(struct top *t)
{
    free(t->prev);
    t->prev = t->cur;
    t->nprev = t->ncur;
    const struct profile *p = t->p;
    size_t n = 0;
    for (size_t i = 0; i < p->nfiles; i++)
        n += p->files[i]->nlines;
    t->cur = malloc((n ? n : 1) * sizeof *t->cur);
    t->ncur = 0;
    if (!t->cur) return;
    for (size_t i = 0; i < p->nfiles; i++)
        for (size_t k = 0; k < p->files[i]->nlines; k++) {
            const struct prof_line *l = &p->files[i]->lines[k];
            t->cur[t->ncur++] = (struct seen){p->files[i]->path, l->line, agent_stats_time(&l->st)};
        }
    qsort(t->cur, t->ncur, sizeof *t->cur, cmp_seen);
}

static double before(const struct top *t, const struct seen *s)
{
    const struct seen *hit = t->prev ? bsearch(s, t->prev, t->nprev, sizeof *s, cmp_seen) : NULL;
    return hit ? hit->t : 0;
}

/* a line of the screen: by the MB of the memory sort (mb: -1 when by
 * time), else by what the last period added (now; the final screen: all
 * of it), then by all its time */
struct row {
    const struct seen *s;
    const struct agent_stats *st;
    double now, mb;
};

static int cmp_row(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->mb != y->mb) return x->mb < y->mb ? 1 : -1;
    if (x->now != y->now) return x->now < y->now ? 1 : -1;
    return (x->s->t < y->s->t) - (x->s->t > y->s->t);
}

static int term_width(void)
{
    struct winsize ws;
    if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col >= 40) return ws.ws_col;
    return 100;
}

static const char *shown(const struct top *t, const char *path)
{
    size_t n = strlen(t->cwd);
    if (n && !strncmp(path, t->cwd, n) && path[n] == '/') return path + n + 1;
    return path;
}

/* The header's memory line: the footprint and the sort, or why none. */
static void memory_line(FILE *o, const struct top *t, int mem)
{
    const struct profile *p = t->p;
    if (t->memory_off)
        fprintf(o, "memory: off (%s)\n\n", t->memory_off);
    else if (!mem)
        fputs("memory: nothing measured yet\n\n", o);
    else
        fprintf(o, "memory: live %.1f MB, peak %.1f MB; by %s (m: by %s)\n\n",
                memprof_live_mb(p->mem), memprof_peak_mb(p->mem, NULL, NULL), sort_name[t->sort],
                sort_name[(t->sort + 1) % SORT_N]);
}

/* The screen (final: the whole run's, on a plain terminal). Columns of
 * memory when the store has any: alloc and kept MB per line and function,
 * the time columns narrower so that 80 columns hold a line and its place. */
static void draw(struct top *t, int final)
{
    const struct profile *p = t->p;
    snapshot(t);
    double total = agent_stats_time(&p->total), dt = total - t->last_total;
    t->last_total = total;
    int w = term_width(), mem = !t->memory_off && memprof_has_data(p->mem);
    int stat = mem ? sort_stat[t->sort] : -1;
    char a[TERMSAFE_SIZE(PATH_MAX)], b[TERMSAFE_SIZE(512)], src[TERMSAFE_SIZE(512)];
    FILE *o = stdout;
    if (!final) fputs("\x1b[H\x1b[J", o); /* home, clear to the end */
    const char *program = t->program ? t->program : p->meta.program ? p->meta.program : "?";
    const char *version = t->version                        ? t->version
                          : p->nprocs && p->procs[0].python ? p->procs[0].python
                                                            : "?";
    fprintf(o, "hotline top: %s %s (Python %s)  %.1f s, %lld samples%s\n", t->pid_label,
            SAFE(a, shown(t, program)), SAFE(b, version), attach_mono() - t->t0, p->meta.samples,
            final ? "" : "   q quits");
    const struct agent_stats *s = &p->total;
    fprintf(o, "all: %.2f s: python %.0f%%, native %.0f%%, system %.0f%%\n", total,
            total > 0 ? 100 * s->v[AGENT_STAT_PY] / total : 0,
            total > 0 ? 100 * s->v[AGENT_STAT_NAT] / total : 0,
            total > 0 ? 100 * s->v[AGENT_STAT_SYS] / total : 0);
    memory_line(o, t, mem);
    struct row *rows = malloc((t->ncur ? t->ncur : 1) * sizeof *rows);
    if (!rows) return;
    size_t n = 0;
    for (size_t i = 0; i < t->ncur; i++) {
        const struct agent_stats *st = profile_line(p, t->cur[i].file, t->cur[i].line);
        if (st)
            rows[n++] = (struct row){&t->cur[i], st,
                                     final ? t->cur[i].t : t->cur[i].t - before(t, &t->cur[i]),
                                     stat >= 0 ? st->v[stat] : -1};
    }
    qsort(rows, n, sizeof *rows, cmp_row);
    const char *first = final ? "%all" : "%now";
    if (mem)
        fprintf(o, "  %5s %8s %7s %7s %7s %8s %8s  %s\n", first, "total s", "python", "native",
                "system", "alloc MB", "kept MB", "line");
    else
        fprintf(o, "  %5s %9s %8s %8s %8s  %s\n", first, "total s", "python", "native", "system",
                "line");
    for (size_t i = 0; i < n && (int)i < t->nlines; i++) {
        const struct seen *sn = rows[i].s;
        const double *v = rows[i].st->v;
        double share = final ? (total > 0 ? sn->t / total : 0) : (dt > 0 ? rows[i].now / dt : 0);
        int room = w - (mem ? 66 : 52) - (int)strlen(shown(t, sn->file));
        src[0] = 0;
        if (room > 8) report_source_line(sn->file, sn->line, room - 4, src, sizeof src);
        if (mem)
            fprintf(o, "  %5.1f %8.2f %7.2f %7.2f %7.2f %8.1f %8.1f  %s:%d  %s\n", 100 * share,
                    sn->t, v[AGENT_STAT_PY], v[AGENT_STAT_NAT], v[AGENT_STAT_SYS],
                    v[AGENT_STAT_ALLOC], v[AGENT_STAT_KEPT], SAFE(a, shown(t, sn->file)), sn->line,
                    src);
        else
            fprintf(o, "  %5.1f %9.3f %8.3f %8.3f %8.3f  %s:%d  %s\n", 100 * share, sn->t,
                    v[AGENT_STAT_PY], v[AGENT_STAT_NAT], v[AGENT_STAT_SYS],
                    SAFE(a, shown(t, sn->file)), sn->line, src);
    }
    free(rows);
    struct prof_func_ref fr[32];
    int nf = t->nlines / 3 < 32 ? (t->nlines / 3 > 0 ? t->nlines / 3 : 1) : 32;
    size_t got = profile_top_funcs_by(p, stat, fr, (size_t)nf);
    if (mem)
        fprintf(o, "\n  %8s %7s %7s %7s %8s %8s  %s\n", "total s", "python", "native", "system",
                "alloc MB", "kept MB", "function (all of it)");
    else
        fprintf(o, "\n  %9s %8s %8s %8s  %s\n", "total s", "python", "native", "system",
                "function (all of it)");
    for (size_t i = 0; i < got; i++) {
        struct agent_stats fs; /* its memory is its lines' */
        profile_func_stats(fr[i].file, fr[i].fn, &fs);
        const double *v = fs.v;
        double secs = agent_stats_time(&fr[i].fn->st);
        if (mem)
            fprintf(o, "  %8.2f %7.2f %7.2f %7.2f %8.1f %8.1f  ", secs, v[AGENT_STAT_PY],
                    v[AGENT_STAT_NAT], v[AGENT_STAT_SYS], v[AGENT_STAT_ALLOC], v[AGENT_STAT_KEPT]);
        else
            fprintf(o, "  %9.3f %8.3f %8.3f %8.3f  ", secs, v[AGENT_STAT_PY], v[AGENT_STAT_NAT],
                    v[AGENT_STAT_SYS]);
        fprintf(o, "%s (%s:%d)\n", SAFE(b, fr[i].fn->name), SAFE(a, shown(t, fr[i].file->path)),
                fr[i].fn->first_line);
    }
    fflush(o);
}

/* Keys, then the screen when due: 1 when q asked to quit. */
static int tick(struct top *t)
{
    int quit = 0;
    if (t->tty_in) { /* q quits, m sorts by memory / time; other keys are dropped */
        struct pollfd pf = {STDIN_FILENO, POLLIN, 0};
        char c;
        while (poll(&pf, 1, 0) == 1 && read(STDIN_FILENO, &c, 1) == 1) {
            if (c == 'q' || c == 'Q') quit = 1;
            if ((c == 'm' || c == 'M') && !t->memory_off) {
                t->sort = (t->sort + 1) % SORT_N;
                t->last_draw = 0; /* at once */
            }
        }
    }
    double now = attach_mono();
    if (now - t->last_draw >= t->refresh) {
        t->last_draw = now;
        draw(t, 0);
    }
    return quit;
}

/* the final screen and the line saying why it ended */
static void last_screen(struct top *t, const char *reason, const char *log)
{
    if (t->tty_in) tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
    fputs("\x1b[H\x1b[J", stdout);
    draw(t, 1);
    printf("\nhotline top: %s%s%s\n", reason, log[0] ? "; the script's output is in " : "", log);
}

static void raw_keys(struct top *t)
{
    t->tty_in = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->saved) == 0;
    if (!t->tty_in) return;
    struct termios r = t->saved;
    r.c_lflag &= ~(tcflag_t)(ICANON | ECHO); /* ISIG stays: Ctrl-C is SIGINT */
    r.c_cc[VMIN] = 0;
    r.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &r);
}

/* ---- a PID, from outside --------------------------------------------------- */

static void on_tick(struct attach_engine *e, void *ud)
{
    (void)e;
    if (tick(ud)) top_stop = SIGINT;
}

static int top_pid(struct top *t, pid_t pid, double interval, double duration, int all_threads)
{
    cli_catch_stop(on_stop);
    int status = 1;
    struct attach_engine *e = calloc(1, sizeof *e);
    if (!e || attach_sampler_init(&e->s, &t->rs.sink, &top_stop, interval, NULL, 0, NULL, 0)) {
        fputs("hotline top: out of memory\n", stderr);
        goto done;
    }
    e->s.all_threads = all_threads;
    e->on_tick = on_tick;
    e->tick_ud = t;
    char why[512], safe[TERMSAFE_SIZE(512)];
    int rc = attach_engine_open(e, pid, why, sizeof why);
    if (rc) {
        fprintf(stderr, "hotline top: %s\n", SAFE(safe, why[0] ? why : "cannot attach"));
        status = rc == -EIO ? 1 : cli_attach_status(rc);
        goto done;
    }
    t->program = e->program;
    t->version = e->s.procs[0]->ap.version;
    t->t0 = e->s.t0;
    raw_keys(t);
    last_screen(t, attach_engine_run(e, duration), "");
    status = 0;
done:
    if (e) attach_sampler_free(&e->s);
    free(e);
    return status;
}

/* ---- a PID with --memory: attach --memory's agent ------------------------- */

/* the agent's store is attach --memory's own: shown as it comes */
static int mem_tick(const struct profile *p, void *ud)
{
    struct top *t = ud;
    if (!t->p) t->t0 = attach_mono(); /* the agent's first tick: its time starts */
    t->p = p;
    return tick(t);
}

static void mem_done(const struct profile *p, const char *reason, void *ud)
{
    struct top *t = ud;
    if (!t->p) t->t0 = attach_mono();
    t->p = p;
    last_screen(t, reason, "");
}

static int top_pid_memory(struct top *t, pid_t pid, double interval, double duration)
{
    static const struct cli_outputs none;
    struct attach_mem_live live = {
        .every_s = TOP_TICK_MS / 1000.0, .tick = mem_tick, .done = mem_done, .ud = t};
    struct attach_mem_opts mo = {.pid = pid,
                                 .duration = duration,
                                 .interval_ms = interval,
                                 .top = t->nlines,
                                 .outs = &none,
                                 .live = &live};
    raw_keys(t); /* before the injection: Ctrl-C is SIGINT throughout */
    int status = cmd_attach_memory(&mo);
    if (t->tty_in) tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
    return status;
}

/* ---- a script, under the agent --------------------------------------------- */

struct script_run {
    struct top *t;
    uv_loop_t loop;
    struct session s;
    uv_timer_t timer;
    uv_signal_t sigs[3];
    double duration;
    const char *reason;
};

static void script_stop(struct script_run *r, const char *reason)
{
    if (r->reason) return;
    r->reason = reason;
    session_stop(&r->s); /* SIGINT, then SIGTERM, SIGKILL: a quit leaves it running no more */
}

static void script_tick(uv_timer_t *h)
{
    struct script_run *r = h->data;
    if (tick(r->t)) script_stop(r, "stopped (interrupted)");
    if (r->duration > 0 && attach_mono() - r->t->t0 >= r->duration)
        script_stop(r, "stopped (duration)");
}

static void script_signal(uv_signal_t *h, int sig)
{
    (void)sig;
    script_stop(h->data, "stopped (interrupted)");
}

static void script_exit(struct session *s, void *ud)
{
    struct script_run *r = ud;
    uv_close((uv_handle_t *)&r->timer, NULL);
    for (int i = 0; i < 3; i++)
        uv_close((uv_handle_t *)&r->sigs[i], NULL);
    session_close(s, NULL);
}

/* Run the script (o) until it exits, shown: its exit status. */
static int top_script(struct top *t, struct session_opts *o, double duration)
{
    struct script_run r = {.t = t, .duration = duration};
    char log[64], named[64];
    snprintf(log, sizeof log, "hotline-top-%d.log", (int)getpid());
    o->output_path = log;
    signal(SIGPIPE, SIG_IGN);
    if (uv_loop_init(&r.loop)) return 1;
    struct session_cbs cbs = {.on_exit = script_exit};
    int rc = session_start(&r.loop, &r.s, o, &cbs, &r, t->rs.p);
    if (rc) {
        fprintf(stderr, "hotline top: %s\n", r.s.errmsg);
        uv_run(&r.loop, UV_RUN_DEFAULT);
        uv_loop_close(&r.loop);
        return rc == UV_ENOENT || rc == UV_EACCES ? 127 : 1; /* like a shell */
    }
    /* the log named after the script's pid, as the screen names it */
    snprintf(named, sizeof named, "hotline-top-%d.log", r.s.pid);
    if (!rename(log, named)) snprintf(log, sizeof log, "%s", named);
    snprintf(named, sizeof named, "process %d", r.s.pid);
    t->pid_label = named;
    t->t0 = attach_mono();
    uv_timer_init(&r.loop, &r.timer);
    r.timer.data = &r;
    uv_timer_start(&r.timer, script_tick, 0, TOP_TICK_MS);
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
        uv_signal_init(&r.loop, &r.sigs[i]);
        r.sigs[i].data = &r;
        uv_signal_start(&r.sigs[i], script_signal, sigs[i]);
    }
    raw_keys(t);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    uv_loop_close(&r.loop);
    last_screen(t, r.reason ? r.reason : "target exited", log);
    if (!r.s.nconns_total) { /* no profile: say why under the empty screen */
        char safe[TERMSAFE_SIZE(sizeof r.s.agent_error)];
        fprintf(stderr, "hotline top: no profile: %s\n",
                r.s.agent_error[0] ? SAFE(safe, r.s.agent_error) : "the agent never connected");
    }
    if (r.s.term_signal > 0) return 128 + r.s.term_signal;
    return r.s.exit_status < 0 ? 1 : r.s.exit_status;
}

int cmd_top(int argc, char **argv)
{
    struct top t = {.nlines = 15, .refresh = 1};
    double interval = AGENT_INTERVAL_DEFAULT_MS, duration = 0, d;
    const char *pid_arg = NULL, *python = NULL;
    char **script = NULL;
    int all_threads = 0, memory = -1; /* -1: the mode's default */
    static const char *const valued[] = {"--refresh", "--top", "--interval", "--duration",
                                         "--python"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(top_usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--")) {
            script = argv + i + 1;
            break;
        }
        if (!strcmp(a, "--all-threads") || !strcmp(a, "--memory") || !strcmp(a, "--no-memory")) {
            if (a[2] == 'a')
                all_threads = 1;
            else
                memory = a[2] == 'm';
            continue;
        }
        const char *opt = cli_valued_opt(argc, argv, &i, valued, 5, &val);
        int bad = 0;
        if (opt && !val)
            bad = 1;
        else if (opt && !strcmp(opt, "--refresh"))
            bad = cli_parse_duration(val, 0.05, 3600, &t.refresh) != 0;
        else if (opt && !strcmp(opt, "--duration"))
            bad = cli_parse_duration(val, 0.001, 1e7, &duration) != 0;
        else if (opt && !strcmp(opt, "--interval"))
            bad = cli_parse_num(val, AGENT_INTERVAL_MIN_MS, AGENT_INTERVAL_MAX_MS, &interval);
        else if (opt && !strcmp(opt, "--top"))
            bad = cli_parse_num(val, 1, 1000, &d) || d != (int)d || !(t.nlines = (int)d);
        else if (opt)
            python = val;
        else if (a[0] == '-' || pid_arg)
            bad = 1;
        else
            pid_arg = a;
        if (bad) {
            fprintf(stderr, "hotline top: bad or unknown option at '%s'\n\n%s", a, top_usage);
            return 2;
        }
    }
    if (!pid_arg == !script || (script && !script[0])) {
        fprintf(stderr, "hotline top: a PID, or -- and a script\n\n%s", top_usage);
        return 2;
    }
    if (pid_arg && (cli_parse_num(pid_arg, 1, INT_MAX, &d) || d != (int)d)) {
        fprintf(stderr, "hotline top: '%s' is not a process id\n", pid_arg);
        return 2;
    }
    char label[64];
    snprintf(label, sizeof label, "process %s", pid_arg ? pid_arg : "?");
    t.pid_label = label;
    if (!getcwd(t.cwd, sizeof t.cwd)) t.cwd[0] = 0;
    /* the store the screen shows; --memory's is attach --memory's own */
    report_sink_init(&t.rs, memory == 1 && !script ? NULL : profile_new());
    t.p = t.rs.p;
    if (!t.rs.p && !(memory == 1 && !script)) {
        fputs("hotline top: out of memory\n", stderr);
        return 1;
    }
    int status;
    if (script) {
        struct session_opts o = {.python = python,
                                 .script = script[0],
                                 .args = script + 1,
                                 .interval_ms = interval,
                                 .all_threads = all_threads,
                                 .memory = memory != 0};
        while (script[o.nargs + 1])
            o.nargs++;
        if (!o.memory) t.memory_off = "--no-memory";
        status = top_script(&t, &o, duration);
    } else if (memory == 1) {
        status = top_pid_memory(&t, (pid_t)d, interval, duration);
    } else {
        t.memory_off = "hotline top --memory PID reads it";
        status = top_pid(&t, (pid_t)d, interval, duration, all_threads);
    }
    profile_free(t.rs.p);
    free(t.prev);
    free(t.cur);
    return status;
}
