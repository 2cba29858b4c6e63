/* cmd_top: `hotline top PID` or `hotline top -- script.py args`: a live
 * view in the terminal of the hottest lines and functions, refreshed every
 * second, like py-spy top (docs/cli.md, hotline top). It is `hotline
 * attach` (attach/engine.h, read-only: the target is never changed) with
 * the report sink (cli/report_sink.h) and a screen drawn after the ticks
 * instead of a report at the end. Plain ANSI (home, clear to end), so it
 * works over ssh and in tmux; `q` or Ctrl-C quits. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "agent_config.h"
#include "engine.h"
#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/report.h"
#include "cli/report_sink.h"
#include "cli/rolling.h"
#include "store/profile.h"
#include "text/termsafe.h"

static const char top_usage[] =
    "usage: hotline top [options] PID\n"
    "       hotline top [options] [--python PY] -- script.py [args...]\n"
    "\n"
    "A live view of a running Python's hottest lines and functions, with their\n"
    "python / native / system split, refreshed every second (like py-spy top).\n"
    "Reads the target from outside as `hotline attach` does: it is never\n"
    "changed. With a script, runs it (its output into hotline-top-PID.log) and\n"
    "shows it until it exits. q or Ctrl-C quits.\n"
    "\n"
    "options:\n"
    "  --refresh S     seconds between screens (default 1)\n"
    "  --top N         lines shown (default 15; functions: a third of it)\n"
    "  --interval MS   sampling interval in milliseconds (default 10)\n"
    "  --duration S    quit after S seconds\n"
    "  --all-threads   count idle threads too\n"
    "  --python PY     the interpreter for a script (default: $VIRTUAL_ENV's, else python3)\n"
    "exit status: as hotline attach (0 done, 3 no such process, 4 not Python, ...);\n"
    "with a script, the script's own status\n";

#define SAFE(buf, s) termsafe_str(buf, sizeof buf, s)

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
    struct report_sink rs;
    const char *pid_label;
    int nlines, tty_in;
    double refresh, last_draw, last_total;
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
    const struct profile *p = t->rs.p;
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

struct row {
    const struct seen *s;
    double now;
};

static int cmp_row(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
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

static void draw(struct top *t, struct attach_engine *e, int final)
{
    const struct profile *p = t->rs.p;
    snapshot(t);
    double total = agent_stats_time(&p->total), dt = total - t->last_total;
    t->last_total = total;
    int w = term_width();
    char a[TERMSAFE_SIZE(PATH_MAX)], b[TERMSAFE_SIZE(512)], src[TERMSAFE_SIZE(512)];
    FILE *o = stdout;
    if (!final) fputs("\x1b[H\x1b[J", o); /* home, clear to the end */
    struct attach_proc *ap = &e->s.procs[0]->ap;
    fprintf(o, "hotline top: %s %s (Python %s)  %.1f s, %lld samples%s\n", t->pid_label,
            SAFE(a, shown(t, e->program)), SAFE(b, ap->version), attach_mono() - e->s.t0,
            p->meta.samples, final ? "" : "   q quits");
    const struct agent_stats *s = &p->total;
    fprintf(o, "all: %.2f s: python %.0f%%, native %.0f%%, system %.0f%%\n\n", total,
            total > 0 ? 100 * s->v[AGENT_STAT_PY] / total : 0,
            total > 0 ? 100 * s->v[AGENT_STAT_NAT] / total : 0,
            total > 0 ? 100 * s->v[AGENT_STAT_SYS] / total : 0);
    /* lines: by what the last period added, then by all of it */
    struct row *rows = malloc((t->ncur ? t->ncur : 1) * sizeof *rows);
    if (!rows) return;
    for (size_t i = 0; i < t->ncur; i++)
        rows[i] = (struct row){&t->cur[i], t->cur[i].t - before(t, &t->cur[i])};
    qsort(rows, t->ncur, sizeof *rows, cmp_row);
    fprintf(o, "  %5s %9s %8s %8s %8s  %s\n", final ? "%all" : "%now", "total s", "python",
            "native", "system", "line");
    for (size_t i = 0; i < t->ncur && (int)i < t->nlines; i++) {
        const struct seen *sn = rows[i].s;
        const struct agent_stats *st = profile_line(p, sn->file, sn->line);
        if (!st) continue;
        double share = final ? (total > 0 ? sn->t / total : 0) : (dt > 0 ? rows[i].now / dt : 0);
        int room = w - 52 - (int)strlen(shown(t, sn->file));
        src[0] = 0;
        if (room > 8) report_source_line(sn->file, sn->line, room - 4, src, sizeof src);
        fprintf(o, "  %5.1f %9.3f %8.3f %8.3f %8.3f  %s:%d  %s\n", 100 * share, sn->t,
                st->v[AGENT_STAT_PY], st->v[AGENT_STAT_NAT], st->v[AGENT_STAT_SYS],
                SAFE(a, shown(t, sn->file)), sn->line, src);
    }
    free(rows);
    struct prof_func_ref fr[32];
    int nf = t->nlines / 3 < 32 ? (t->nlines / 3 > 0 ? t->nlines / 3 : 1) : 32;
    size_t got = profile_top_funcs(p, fr, (size_t)nf);
    fprintf(o, "\n  %9s %8s %8s %8s  %s\n", "total s", "python", "native", "system",
            "function (all of it)");
    for (size_t i = 0; i < got; i++) {
        const struct agent_stats *st = &fr[i].fn->st;
        fprintf(o, "  %9.3f %8.3f %8.3f %8.3f  %s (%s:%d)\n", agent_stats_time(st),
                st->v[AGENT_STAT_PY], st->v[AGENT_STAT_NAT], st->v[AGENT_STAT_SYS],
                SAFE(b, fr[i].fn->name), SAFE(a, shown(t, fr[i].file->path)), fr[i].fn->first_line);
    }
    fflush(o);
}

static void on_tick(struct attach_engine *e, void *ud)
{
    struct top *t = ud;
    if (t->tty_in) { /* q quits; other keys are dropped */
        struct pollfd pf = {STDIN_FILENO, POLLIN, 0};
        char c;
        while (poll(&pf, 1, 0) == 1 && read(STDIN_FILENO, &c, 1) == 1)
            if (c == 'q' || c == 'Q') top_stop = SIGINT;
    }
    double now = attach_mono();
    if (now - t->last_draw >= t->refresh) {
        t->last_draw = now;
        draw(t, e, 0);
    }
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

/* script mode: the interpreter and the child, its output in a log */
static pid_t spawn_script(const char *python, char **argv, char *log, size_t n)
{
    const char *venv = getenv("VIRTUAL_ENV");
    char venv_py[PATH_MAX];
    if (!python && venv &&
        (size_t)snprintf(venv_py, sizeof venv_py, "%s/bin/python", venv) < sizeof venv_py &&
        !access(venv_py, X_OK))
        python = venv_py;
    if (!python) python = "python3";
    pid_t pid = fork();
    if (pid == 0) {
        char name[64];
        snprintf(name, sizeof name, "hotline-top-%d.log", (int)getpid());
        int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (in >= 0) dup2(in, 0);
        int k = 0;
        while (argv[k])
            k++;
        char **args = calloc((size_t)k + 2, sizeof *args);
        if (!args) _exit(127);
        args[0] = (char *)python;
        for (int i = 0; i < k; i++)
            args[i + 1] = argv[i];
        execvp(python, args);
        fprintf(stderr, "hotline top: cannot run %s: %s\n", python, strerror(errno));
        _exit(127);
    }
    if (pid > 0) snprintf(log, n, "hotline-top-%d.log", (int)pid);
    return pid;
}

int cmd_top(int argc, char **argv)
{
    struct top t = {.nlines = 15, .refresh = 1};
    double interval = AGENT_INTERVAL_DEFAULT_MS, duration = 0, d;
    const char *pid_arg = NULL, *python = NULL;
    char **script = NULL;
    int all_threads = 0;
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
        if (!strcmp(a, "--all-threads")) {
            all_threads = 1;
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
    pid_t pid;
    char log[64] = "", label[64];
    if (script) {
        pid = spawn_script(python, script, log, sizeof log);
        if (pid < 0) {
            fprintf(stderr, "hotline top: fork: %s\n", strerror(errno));
            return 1;
        }
    } else {
        if (cli_parse_num(pid_arg, 1, INT_MAX, &d) || d != (int)d) {
            fprintf(stderr, "hotline top: '%s' is not a process id\n", pid_arg);
            return 2;
        }
        pid = (pid_t)d;
    }
    snprintf(label, sizeof label, "process %d", (int)pid);
    t.pid_label = label;
    if (!getcwd(t.cwd, sizeof t.cwd)) t.cwd[0] = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    int status = 1;
    struct attach_engine *e = calloc(1, sizeof *e);
    report_sink_init(&t.rs, profile_new());
    if (!e || !t.rs.p ||
        attach_sampler_init(&e->s, &t.rs.sink, &top_stop, interval, NULL, 0, NULL, 0)) {
        fputs("hotline top: out of memory\n", stderr);
        goto done;
    }
    e->s.all_threads = all_threads;
    e->on_tick = on_tick;
    e->tick_ud = &t;
    char why[512], safe[TERMSAFE_SIZE(512)];
    int rc;
    /* a script's interpreter needs a moment before it reads as Python:
     * probed (opened and closed) until it does, for at most 10 s */
    double until = attach_mono() + 10;
    while (script && !top_stop && attach_mono() < until && waitpid(pid, NULL, WNOHANG) == 0) {
        struct attach_proc probe;
        rc = attach_open(&probe, pid, why, sizeof why);
        attach_close(&probe);
        if (!rc) break;
        usleep(20000);
    }
    if ((rc = attach_engine_open(e, pid, why, sizeof why))) {
        fprintf(stderr, "hotline top: %s\n", SAFE(safe, why[0] ? why : "cannot attach"));
        status = rc == -EIO ? 1 : cli_attach_status(rc);
        goto done;
    }
    raw_keys(&t);
    const char *reason = attach_engine_run(e, duration);
    if (t.tty_in) tcsetattr(STDIN_FILENO, TCSANOW, &t.saved);
    fputs("\x1b[H\x1b[J", stdout);
    draw(&t, e, 1);
    printf("\nhotline top: %s%s%s\n", reason, log[0] ? "; the script's output is in " : "", log);
    status = 0;
done:
    if (script) { /* the script's own status; a quit leaves it running no more */
        int ws = 0;
        if (waitpid(pid, &ws, WNOHANG) == 0) {
            kill(pid, SIGTERM);
            waitpid(pid, &ws, 0);
        }
        if (status == 0) status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    }
    if (e) attach_sampler_free(&e->s);
    free(e);
    profile_free(t.rs.p);
    free(t.prev);
    free(t.cur);
    return status;
}
