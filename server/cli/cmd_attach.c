/* cmd_attach: `hotline attach PID [--duration S] [--json OUT] [--interval MS]
 * [--top N] [--children] [--memory] [--connect SOCK]`: its argv, then the
 * out-of-process profiler (attach/engine.h) writing into a sink: the
 * report sink below (its lines decoded as the server decodes an agent's,
 * agent_wire.h, and applied to a profile store, so that the report and the
 * JSON file are the ones `hotline run` makes), or with
 * --connect the wire sink (attach/wiresink.h: the editor's server gets the
 * stream). --memory is attach_memory.c. Method and limits: docs/attach.md. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_config.h"
#include "engine.h"
#include "wiresink.h"
#include "cli/attach_memory.h"
#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/report.h"
#include "cli/report_sink.h"
#include "cli/rolling.h"
#include "procfs.h"
#include "store/profile.h"
#include "text/termsafe.h"

#define ATT_MAX_DURATION 1e7 /* seconds */

static const char attach_usage[] =
    "usage: hotline attach PID [options]\n"
    "\n"
    "Samples a running Python 3.9+ process from outside (process_vm_readv: the\n"
    "target is neither stopped nor changed) until it exits, --duration ends or\n"
    "Ctrl-C, then prints the same per-line report as `hotline run`.\n"
    "Needs permission to read the target's memory (docs/attach.md).\n"
    "\n"
    "options:\n"
    "  --duration S      stop after S seconds (30s, 10m, 1h: also with --every)\n"
    "  --every T         a profile every T (with --duration, --json DIR): each\n"
    "                    round attaches, samples for --duration, writes\n"
    "                    DIR/hotline-PID-<UTC time>.json and detaches, until the\n"
    "                    target exits or Ctrl-C\n"
    "  --keep N          with --every: keep the newest N profiles (default 24)\n" CLI_OUTPUTS_USAGE
    "  --interval MS     sampling interval in milliseconds (default 10)\n"
    "  --top N           lines and functions shown in the report (default 10)\n"
    "  --include GLOB    files of the program: the innermost frame in one is\n"
    "                    charged (repeatable; default: every file not excluded)\n"
    "  --exclude GLOB    files never charged (repeatable; replaces the default:\n"
    "                    site-packages, dist-packages, the standard library)\n"
    "  --children        follow the target's Python children too (they are named\n"
    "                    otherwise, not followed; at most 64 processes in all)\n"
    "  --all-threads     count idle threads too (by default a sample counts when\n"
    "                    its thread is in the program's code and running, or has run it)\n"
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
static int att_said;                   /* --every: the engine's notes once, not each round */

static void on_stop(int sig)
{
    att_stop = sig;
}

/* A line for the user from the engine (names the target's files: escaped). */
static void att_say(const char *msg)
{
    if (att_said) return;
    char safe[TERMSAFE_SIZE(1000)];
    fprintf(stderr, "hotline: %s\n", termsafe_str(safe, sizeof safe, msg));
}

int cli_attach_status(int rc)
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

/* The report of a run ended for reason, on stderr, and the files asked
 * for: 0 or 1 (a file not written). */
static int att_report(struct attach_engine *e, struct report_sink *rs, const char *reason,
                      const struct cli_outputs *outs, int top)
{
    struct prof_meta *m = &rs->p->meta;
    profile_set_str(&m->program, e->program);
    m->elapsed_s = attach_mono() - e->s.t0;
    m->exit_status = -1;
    profile_set_str(&m->reason, reason);
    if (top < 0) /* a round of --every: its file only */
        return cli_outputs_write(outs, rs->p, "hotline", 1) ? 1 : 0;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
    fputc('\n', stderr);
    report_print(stderr, rs->p, top, cwd);
    long long dropped = e->s.dropped + rs->dropped;
    if (dropped)
        fprintf(stderr, "  %lld inconsistent reads dropped (the target moved under them)\n",
                dropped);
    if (e->s.threads_left)
        fprintf(stderr,
                "  %lld thread samples left out: more than %d Python threads in a tick (the "
                "main thread and the running ones were kept)\n",
                e->s.threads_left, ATTACH_MAX_THREADS);
    return cli_outputs_write(outs, rs->p, "hotline", 0) ? 1 : 0;
}

/* Attach to pid and sample it into sink until done: the exit status. */
static int att_run(struct attach_engine *e, struct attach_sink *sink, pid_t pid,
                   const struct cli_outputs *outs, int top, double duration)
{
    char why[512];
    int rc = attach_engine_open(e, pid, why, sizeof why);
    if (rc) {
        if (why[0]) {
            char safe[TERMSAFE_SIZE(sizeof why)];
            fprintf(stderr, "hotline attach: %s\n", termsafe_str(safe, sizeof safe, why));
        }
        return rc == -EIO ? 1 : cli_attach_status(rc);
    }
    cli_catch_stop(on_stop);
    /* 3.9/3.10 code objects have no co_qualname: functions go by co_name */
    struct attach_proc *ap = &e->s.procs[0]->ap;
    char sv[TERMSAFE_SIZE(sizeof ap->version)], sb[TERMSAFE_SIZE(sizeof ap->binary)];
    if (top >= 0) /* not every round of --every */
        fprintf(stderr, "hotline: attached to process %d (Python %s, %s)%s%s%s\n", (int)ap->pid,
                termsafe_str(sv, sizeof sv, ap->version), termsafe_str(sb, sizeof sb, ap->binary),
                ap->lay.frame_object ? "; function names without their class (no qualified "
                                       "names before 3.11)"
                                     : "",
                e->s.children ? "; its Python children are followed" : "",
                duration > 0 ? "" : "; Ctrl-C detaches");
    const char *reason = attach_engine_run(e, duration);
    if (sink->remote) { /* the server has it all: its report, its files */
        fprintf(stderr, "hotline: %s\n", reason);
        return 0;
    }
    return att_report(e, (struct report_sink *)sink, reason, outs, top);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("hotline attach: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n\n", stderr);
    fputs(attach_usage, stderr);
    return 2;
}

/* What the command line asks for; strings borrowed from argv. */
struct att_args {
    struct cli_outputs outs;
    const char *pid_arg, *connect_to;
    double duration, interval_ms, every;
    int top, memory, children, all_threads, ninc, nexc, keep;
    const char *incs[ATTACH_MAX_PATTERNS], *excs[ATTACH_MAX_PATTERNS];
};

/* One option with a value into aa. -1, or the exit status of a usage error. */
static int set_valued(struct att_args *aa, const char *name, const char *val)
{
    double d;
    if (cli_output_slot(&aa->outs, name)) {
        *cli_output_slot(&aa->outs, name) = val;
    } else if (!strcmp(name, "--connect")) {
        aa->connect_to = val;
    } else if (!strcmp(name, "--include") || !strcmp(name, "--exclude")) {
        int inc = name[2] == 'i';
        int *n = inc ? &aa->ninc : &aa->nexc;
        if (*n == ATTACH_MAX_PATTERNS) return usage_error("too many %s patterns", name);
        (inc ? aa->incs : aa->excs)[(*n)++] = val;
    } else if (!strcmp(name, "--duration") || !strcmp(name, "--every")) {
        if (cli_parse_duration(val, 0.001, ATT_MAX_DURATION,
                               name[2] == 'd' ? &aa->duration : &aa->every))
            return usage_error(name[2] == 'd'
                                   ? "--duration wants a time > 0 (2.5, 30s, 10m), not '%s'"
                                   : "--every wants a time > 0 (2.5, 30s, 10m), not '%s'",
                               val);
    } else if (!strcmp(name, "--keep")) {
        if (cli_parse_num(val, 1, 100000, &d) || d != (int)d)
            return usage_error("--keep wants a whole number >= 1, not '%s'", val);
        aa->keep = (int)d;
    } else if (!strcmp(name, "--interval")) {
        if (cli_parse_num(val, AGENT_INTERVAL_MIN_MS, AGENT_INTERVAL_MAX_MS, &aa->interval_ms))
            return usage_error("--interval wants milliseconds, not '%s'", val);
    } else {
        if (cli_parse_num(val, 1, 100000, &d) || d != (int)d)
            return usage_error("--top wants a whole number >= 1, not '%s'", val);
        aa->top = (int)d;
    }
    return -1;
}

/* argv into aa. -1 to attach, or the exit status (--help: 0; a usage error). */
static int parse_args(int argc, char **argv, struct att_args *aa)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(attach_usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--memory")) {
            aa->memory = 1;
            continue;
        }
        if (!strcmp(a, "--children")) {
            aa->children = 1;
            continue;
        }
        if (!strcmp(a, "--all-threads")) {
            aa->all_threads = 1;
            continue;
        }
        if (a[0] != '-') {
            if (aa->pid_arg) return usage_error("one PID only, not '%s'", a);
            aa->pid_arg = a;
            continue;
        }
        static const char *const valued[] = {
            "--duration",        "--interval",   "--top",     "--json",
            "--collapsed",       "--speedscope", "--html",    "--connect",
            "--include",         "--gecko",      "--exclude", "--collapsed-by",
            "--collapsed-paths", "--every",      "--keep"};
        const char *name =
            cli_valued_opt(argc, argv, &i, valued, sizeof valued / sizeof *valued, &val);
        if (!name) return usage_error("unknown option '%s'", a);
        if (!val) return usage_error("%s needs a value", name);
        int rc = set_valued(aa, name, val);
        if (rc >= 0) return rc;
    }
    return -1;
}

/* Sample pid from outside into a report (top < 0: files only), or to a
 * server with --connect. The exit status. */
static int attach_sample(struct att_args *aa, pid_t pid, const struct cli_outputs *outs, int top)
{
    struct report_sink rs;
    report_sink_init(&rs, NULL);
    struct attach_wiresink ws;
    struct attach_sink *sink = &rs.sink;
    if (aa->connect_to) {
        attach_wiresink_init(&ws, aa->connect_to);
        sink = &ws.sink;
    }
    int status = 1;
    struct attach_engine *e = calloc(1, sizeof *e);
    rs.p = aa->connect_to ? NULL : profile_new();
    if (!e || (!aa->connect_to && !rs.p) ||
        attach_sampler_init(&e->s, sink, &att_stop, aa->interval_ms, aa->incs, aa->ninc, aa->excs,
                            aa->nexc)) {
        fputs("hotline attach: out of memory\n", stderr);
        goto done;
    }
    e->s.say = att_say;
    e->s.children = aa->children;
    e->s.all_threads = aa->all_threads;
    status = att_run(e, sink, pid, outs, top, aa->duration);
done:
    if (e) attach_sampler_free(&e->s);
    free(e);
    profile_free(rs.p);
    return status;
}

/* --every: a round every aa->every seconds, each into its own file of the
 * folder --json names, the newest --keep kept (cli/rolling.h), until the
 * target exits (or its pid is another process's) or a signal. */
static int attach_every(struct att_args *aa, pid_t pid)
{
    struct procfs_stat ps;
    char state = procfs_stat(NULL, pid, &ps, NULL, 0), path[4096], safe[TERMSAFE_SIZE(4096)];
    if (procfs_gone(state, &ps, 0)) return attach_sample(aa, pid, &aa->outs, -1); /* its error */
    fprintf(stderr,
            "hotline: a %g s profile of process %d every %g s into %s (the newest %d "
            "kept); Ctrl-C stops\n",
            aa->duration, (int)pid, aa->every, termsafe_str(safe, sizeof safe, aa->outs.json),
            aa->keep);
    int status = 0;
    for (int round = 1;; round++) {
        double next = attach_mono() + aa->every;
        struct cli_outputs outs = aa->outs;
        int rc = rolling_path(aa->outs.json, pid, path, sizeof path);
        if (rc) {
            fprintf(stderr, "hotline attach: %s: %s\n", safe, strerror(-rc));
            return 1;
        }
        outs.json = path;
        status = attach_sample(aa, pid, &outs, -1);
        if (status) break;
        att_said = 1;
        fprintf(stderr, "hotline: profile %d saved to %s\n", round,
                termsafe_str(safe, sizeof safe, path));
        rolling_prune(aa->outs.json, pid, aa->keep);
        int w = att_stop ? 1 : rolling_wait(next, &att_stop, pid, ps.start);
        if (w) {
            fprintf(stderr, "hotline: %s after %d profile%s\n",
                    w == 1 ? "stopped" : "target exited", round, round == 1 ? "" : "s");
            break;
        }
    }
    return status;
}

int cmd_attach(int argc, char **argv)
{
    struct att_args aa = {.interval_ms = AGENT_INTERVAL_DEFAULT_MS, .top = REPORT_DEFAULT_TOP};
    double d;
    int rc = parse_args(argc, argv, &aa);
    if (rc >= 0) return rc;
    if (cli_outputs_check(&aa.outs, "hotline attach")) return 2;
    if (!aa.pid_arg) return usage_error("%s", "no PID to attach to");
    if (cli_parse_num(aa.pid_arg, 1, INT_MAX, &d) || d != (int)d)
        return usage_error("'%s' is not a process id", aa.pid_arg);
    if (aa.every > 0) {
        if (aa.memory || aa.connect_to || aa.children)
            return usage_error("%s", "--every goes without --memory, --connect and --children");
        if (!aa.duration || !aa.outs.json || aa.duration > aa.every)
            return usage_error("%s",
                               "--every wants --duration (at most the period) and --json DIR");
        if (!aa.keep) aa.keep = 24;
        return attach_every(&aa, (pid_t)d);
    }
    if (aa.keep) return usage_error("%s", "--keep goes with --every");
    if (!aa.memory) return attach_sample(&aa, (pid_t)d, &aa.outs, aa.top);
    /* the injected agent's fork hook drops it in a child: nothing to follow */
    if (aa.children)
        return usage_error("%s", "--memory does not go with --children (the injected agent "
                                 "is not inherited by children)");
    struct attach_mem_opts mo = {.pid = (pid_t)d,
                                 .duration = aa.duration,
                                 .interval_ms = aa.interval_ms,
                                 .top = aa.top,
                                 .outs = &aa.outs,
                                 .connect = aa.connect_to,
                                 .include = aa.incs,
                                 .ninclude = aa.ninc,
                                 .exclude = aa.excs,
                                 .nexclude = aa.nexc};
    return cmd_attach_memory(&mo);
}
