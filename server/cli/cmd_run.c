/* cmd_run: `hotline run [options] [--] script.py [args...]` and
 * `hotline run [options] -m module [args...]`. Runs the program under the
 * agent (server/session.c) with its stdin/stdout/stderr untouched, then
 * prints the report to stderr (stdout stays byte-identical to a plain run),
 * optionally saves the JSON profile, and exits with the program's status, or
 * dies of the program's signal. Options: docs/cli.md. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_config.h"
#include "cli/cli.h"
#include "cli/outputs.h"
#include "store/profile.h"
#include "cli/report.h"
#include "proc/session.h"
#include "proc/tcpgate.h"
#include "text/termsafe.h"

#define RUN_MAX_GLOBS 64

static const char run_usage[] =
    "usage: hotline run [options] [--] script.py [args...]\n"
    "       hotline run [options] -m module [args...]\n"
    "\n"
    "Runs the program under the Hotline profiler, then prints a per-line report\n"
    "to stderr. The program's stdin/stdout/stderr and exit status are its own.\n"
    "\n"
    "options:\n"
    "  --python PATH     interpreter (default: $VIRTUAL_ENV/bin/python, else "
    "python3)\n" CLI_OUTPUTS_USAGE
    "  --interval MS     mean sampling interval in milliseconds (default 10)\n"
    "  --profile-all     charge every file, libraries and stdlib included\n"
    "  --all-threads     count idle threads too (by default a sample counts when\n"
    "                    its thread is in your code and running, or has run it)\n"
    "  --include GLOB    profile files matching GLOB (repeatable)\n"
    "  --exclude GLOB    do not charge files matching GLOB (repeatable)\n"
    "  --top N           lines and functions shown in the report (default 10)\n"
    "  --no-memory       no memory profiling\n"
    "  --listen-tcp HOST:PORT  also take agents of other hosts over TCP (never\n"
    "                    on by default; each must send the run's token, given to\n"
    "                    the program as HOTLINE_TOKEN: docs/distributed.md)\n"
    "  -h, --help        this help\n";

struct run_ctx {
    uv_loop_t loop;
    struct session s;
    struct tcpgate gate;
    int gate_on;
    struct profile *p;
    uv_signal_t sigs[3];
    int tty_driven; /* the terminal delivers Ctrl-C to the program itself */
    int errors;
};

static int usage_error(const char *fmt, const char *arg)
{
    fputs("hotline run: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n\n", stderr);
    fputs(run_usage, stderr);
    return 2;
}

static void on_error(struct session *s, const char *msg, void *ud)
{
    (void)s;
    struct run_ctx *c = ud;
    char safe[TERMSAFE_SIZE(1024)]; /* the agent's words, the program's names in them */
    if (c->errors++ < 20) fprintf(stderr, "hotline: %s\n", termsafe_str(safe, sizeof safe, msg));
}

static void on_exit_cb(struct session *s, void *ud)
{
    struct run_ctx *c = ud;
    (void)s;
    for (int i = 0; i < 3; i++)
        uv_close((uv_handle_t *)&c->sigs[i], NULL);
    if (c->gate_on) tcpgate_close(&c->gate, NULL);
    session_close(&c->s, NULL);
}

static void on_gate_log(const char *msg, void *ud)
{
    struct run_ctx *c = ud;
    char safe[TERMSAFE_SIZE(512)];
    if (c->errors++ < 20) fprintf(stderr, "hotline: %s\n", termsafe_str(safe, sizeof safe, msg));
}

static void on_signal(uv_signal_t *h, int sig)
{
    struct run_ctx *c = h->data;
    /* From a terminal, Ctrl-C / Ctrl-\ reach the whole foreground group, the
     * program included: forwarding would deliver it twice. */
    if ((sig == SIGINT || sig == SIGQUIT) && c->tty_driven) return;
    session_signal(&c->s, sig);
}

static int is_tty_foreground(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (isatty(fd) && tcgetpgrp(fd) == getpgrp()) return 1;
    return 0;
}

static void die_like(int sig)
{
    fflush(stdout);
    fflush(stderr);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

/* What the command line asks for. */
struct run_args {
    struct session_opts o;
    char *include[RUN_MAX_GLOBS], *exclude[RUN_MAX_GLOBS];
    struct cli_outputs outs;
    int top;
    const char *listen_tcp; /* --listen-tcp HOST:PORT, or NULL */
};

/* One option with a value (name, val: borrowed from argv) into ra. -1, or
 * the exit status of a usage error. */
static int set_valued(struct run_args *ra, const char *name, const char *val)
{
    double d;
    if (!strcmp(name, "--python")) {
        ra->o.python = val;
    } else if (cli_output_slot(&ra->outs, name)) {
        *cli_output_slot(&ra->outs, name) = val;
    } else if (!strcmp(name, "--interval")) {
        if (cli_parse_num(val, AGENT_INTERVAL_MIN_MS, AGENT_INTERVAL_MAX_MS, &d)) {
            char fmt[80];
            snprintf(fmt, sizeof fmt, "--interval wants milliseconds in %g..%g, not '%%s'",
                     AGENT_INTERVAL_MIN_MS, AGENT_INTERVAL_MAX_MS);
            return usage_error(fmt, val);
        }
        ra->o.interval_ms = d;
    } else if (!strcmp(name, "--top")) {
        if (cli_parse_num(val, 1, 100000, &d) || d != (int)d)
            return usage_error("--top wants a whole number >= 1, not '%s'", val);
        ra->top = (int)d;
    } else if (!strcmp(name, "--listen-tcp")) {
        ra->listen_tcp = val;
    } else if (!strcmp(name, "--include")) {
        if (ra->o.ninclude == RUN_MAX_GLOBS)
            return usage_error("too many --include (max 64) at '%s'", val);
        ra->include[ra->o.ninclude++] = (char *)val;
    } else {
        if (ra->o.nexclude == RUN_MAX_GLOBS)
            return usage_error("too many --exclude (max 64) at '%s'", val);
        ra->exclude[ra->o.nexclude++] = (char *)val;
    }
    return -1;
}

/* argv into ra (its strings borrowed from argv). -1 to run, or the exit
 * status (--help: 0; a usage error). */
static int parse_args(int argc, char **argv, struct run_args *ra)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-' || !strcmp(a, "-")) break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(run_usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--profile-all")) {
            ra->o.profile_all = 1;
            continue;
        }
        if (!strcmp(a, "--all-threads")) {
            ra->o.all_threads = 1;
            continue;
        }
        if (!strcmp(a, "--no-memory")) {
            ra->o.memory = 0;
            continue;
        }
        if (!strcmp(a, "-m")) {
            if (i + 1 >= argc) return usage_error("%s needs a module name", a);
            ra->o.module = argv[++i];
            i++;
            break;
        }
        /* options with a value: --opt VALUE or --opt=VALUE */
        static const char *const valued[] = {"--python",     "--json",         "--collapsed",
                                             "--speedscope", "--html",         "--interval",
                                             "--gecko",      "--include",      "--exclude",
                                             "--top",        "--collapsed-by", "--collapsed-paths",
                                             "--listen-tcp"};
        const char *name =
            cli_valued_opt(argc, argv, &i, valued, sizeof valued / sizeof *valued, &val);
        if (!name) return usage_error("unknown option '%s'", a);
        if (!val) return usage_error("%s needs a value", name);
        int rc = set_valued(ra, name, val);
        if (rc >= 0) return rc;
    }
    if (!ra->o.module) {
        if (i >= argc) return usage_error("%s", "no script to run");
        ra->o.script = argv[i++];
    }
    ra->o.args = argv + i;
    ra->o.nargs = argc - i;
    return cli_outputs_check(&ra->outs, "hotline run") ? 2 : -1;
}

/* Run the program under c's loop until it and its session are done, the
 * terminal's signals forwarded. -1 when it ran, or the exit status when it
 * could not start (c->p freed). */
static int run_program(struct run_ctx *c, const struct session_opts *o, const char *listen_tcp)
{
    signal(SIGPIPE, SIG_IGN); /* the child gets default dispositions back (libuv) */
    c->tty_driven = is_tty_foreground();
    if (listen_tcp) {
        char err[256];
        if (tcpgate_listen(&c->loop, &c->gate, listen_tcp, on_gate_log, c, err, sizeof err)) {
            fprintf(stderr, "hotline: --listen-tcp: %s\n", err);
            uv_run(&c->loop, UV_RUN_DEFAULT);
            uv_loop_close(&c->loop);
            profile_free(c->p);
            return 2;
        }
        c->gate_on = 1;
        /* the program's driver hands both to its workers (hotline.dask) */
        setenv("HOTLINE_TCP", c->gate.addr, 1);
        setenv("HOTLINE_TOKEN", c->gate.token, 1);
        fprintf(stderr,
                "hotline: agents may connect over TCP at %s (token: the program's "
                "HOTLINE_TOKEN)\n",
                c->gate.addr);
    }
    struct session_cbs cbs = {.on_error = on_error, .on_exit = on_exit_cb};
    int rc = session_start(&c->loop, &c->s, o, &cbs, c, c->p);
    if (!rc && c->gate_on) tcpgate_set_target(&c->gate, c->s.sockpath);
    if (rc) {
        if (c->gate_on) tcpgate_close(&c->gate, NULL);
        fprintf(stderr, "hotline: %s\n", c->s.errmsg);
        uv_run(&c->loop, UV_RUN_DEFAULT);
        uv_loop_close(&c->loop);
        profile_free(c->p);
        return rc == UV_ENOENT || rc == UV_EACCES ? 127 : 1; /* like a shell */
    }
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int k = 0; k < 3; k++) {
        uv_signal_init(&c->loop, &c->sigs[k]);
        c->sigs[k].data = c;
        uv_signal_start(&c->sigs[k], on_signal, sigs[k]);
    }
    uv_run(&c->loop, UV_RUN_DEFAULT);
    uv_loop_close(&c->loop);
    return -1;
}

/* The ended run's profile: exit fields, the report (or why there is none),
 * the files asked for. */
static void finish(struct run_ctx *c, const struct run_args *ra)
{
    struct prof_meta *m = &c->p->meta;
    m->elapsed_s = c->s.elapsed_s;
    m->exit_status = c->s.exit_status;
    m->exit_signal = c->s.term_signal;
    char reason[64];
    profile_describe_exit(m->exit_status, m->exit_signal, reason, sizeof reason);
    profile_set_str(&m->reason, reason);

    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
    /* no profile: no empty report; the agent's error (shown when it came,
     * saying the program runs unprofiled) is the one line about it */
    int none = c->s.nconns_total == 0 || (c->s.agent_error[0] && c->p->meta.samples == 0);
    if (!(none && c->s.agent_error[0])) fputc('\n', stderr);
    if (none && !c->s.agent_error[0])
        fprintf(stderr, "hotline: no profile: the agent never connected (see docs/cli.md, "
                        "\"no profile\")\n");
    else if (!none)
        report_print(stderr, c->p, ra->top, cwd);
    cli_outputs_write(&ra->outs, c->p, "hotline", 0);
}

int cmd_run(int argc, char **argv)
{
    struct run_args ra;
    memset(&ra, 0, sizeof ra);
    ra.o.memory = 1;
    ra.o.inherit_stdio = 1;
    ra.o.include = ra.include;
    ra.o.exclude = ra.exclude;
    ra.top = REPORT_DEFAULT_TOP;
    int rc = parse_args(argc, argv, &ra);
    if (rc >= 0) return rc;

    struct run_ctx c;
    memset(&c, 0, sizeof c);
    c.p = profile_new();
    if (!c.p || uv_loop_init(&c.loop)) {
        fputs("hotline: out of memory\n", stderr);
        profile_free(c.p);
        return 1;
    }
    rc = run_program(&c, &ra.o, ra.listen_tcp);
    if (rc >= 0) return rc;
    finish(&c, &ra);
    profile_free(c.p);
    if (c.s.term_signal > 0) die_like(c.s.term_signal);
    if (c.s.term_signal > 0) return 128 + c.s.term_signal;
    return c.s.exit_status < 0 ? 1 : c.s.exit_status;
}
