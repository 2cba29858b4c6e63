/* attach_memory: `hotline attach PID --memory`. Instead of sampling from
 * outside (cmd_attach.c), it makes the running CPython import the
 * in-process agent and connect back to a private socket: on 3.9-3.13 gdb
 * queues a pending call (attach/inject.h says how, attach/inject_gdb.h
 * runs gdb), on 3.14+ PEP 768's remote execution asks the main thread to
 * run a script, with no gdb (attach/remote_exec.h); the script and the
 * Python in it are attach/inject_files.h's. Then it receives that agent's
 * stream exactly as `hotline run` receives its program's (proc/agentsock.c,
 * the shared agentconn decoder), so the report and the JSON carry memory:
 * allocated / kept per line, leaks. Detach (Ctrl-C, --duration) sends the
 * agent `stop`: it ends its stream and unloads itself on the target's main
 * thread (profiler/module.c) while the target runs on. Every failure
 * before the agent connects leaves the target as it was, but for at most
 * one 4 KiB page on 3.9-3.13 (docs/attach.md); on 3.14+ a request not
 * taken is withdrawn.
 *
 * Phases: GDB (gdb attached, waiting at a safe point, then two hand-made
 * calls; not on 3.14+) -> WAIT (call queued or request written, waiting
 * for the agent to connect) -> RUN -> RELEASE (stop sent, waiting for the
 * end of the stream) -> done.
 *
 * With --connect SOCK (the editor's "attach with memory", via the LSP
 * server's session) nothing is decoded here: the agent's connection is
 * relayed to SOCK byte for byte and back (proc/relay.h), so the server
 * sees what a run's agent sends, its hello included, and its `now` and
 * `stop` reach the agent. Same phases, same detach: the server's `stop` or
 * its going, or our SIGINT / SIGTERM. */
#include "cli/attach_memory.h"
#include "cli/cli.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "attach.h"
#include "injector.h"
#include "procfs.h"
#include "cli/report.h"
#include "proc/agentsock.h"
#include "proc/relay.h"
#include "proc/session.h"
#include "store/profile.h"
#include "text/termsafe.h"

#define AM_RELEASE_S 5.0 /* stop sent: the agent's last delta and `end` */

enum { PH_INJECT, PH_RUN, PH_RELEASE, PH_DONE };

struct am {
    const struct attach_mem_opts *o;
    uv_loop_t loop;
    struct agentsock sock;
    int sock_open;
    struct injector inj; /* until the agent connects (attach/injector.h) */
    uv_timer_t timer;
    uv_timer_t live_timer; /* o->live's ticks */
    uv_signal_t sigs[3];
    struct profile *p;
    int phase, status, conns;
    double t0;
    char reason[64];
    struct inject_files files; /* the private folder, its socket, the script */
    struct relay relay;        /* --connect */
};

static double mono(void)
{
    return (double)uv_hrtime() * 1e-9;
}

/* print why it failed and end (the target was left as it was) */
static void fail(struct am *a, int status, const char *fmt, const char *arg)
{
    if (a->status == 0) {
        char line[1024], safe[TERMSAFE_SIZE(1024)];
        snprintf(line, sizeof line, fmt, arg); /* arg may name the target's files, gdb's words */
        fprintf(stderr, "hotline attach: %s\n", termsafe_str(safe, sizeof safe, line));
        a->status = status;
    }
}

static void close_all(struct am *a)
{
    if (a->phase == PH_DONE) return;
    a->phase = PH_DONE;
    uv_timer_stop(&a->timer);
    uv_timer_stop(&a->live_timer);
    injector_stop(&a->inj);
    for (int i = 0; i < 3; i++)
        uv_signal_stop(&a->sigs[i]);
    if (a->sock_open) {
        a->sock_open = 0;
        agentsock_close(&a->sock, NULL);
    }
    relay_close(&a->relay);
}

static void timer_in(struct am *a, double s, uv_timer_cb cb)
{
    uv_timer_start(&a->timer, cb, (uint64_t)(s * 1000), 0);
}

static void on_release_timeout(uv_timer_t *t)
{
    struct am *a = t->data;
    fputs("hotline: the agent did not end its stream in time; closing (it unloads itself)\n",
          stderr);
    close_all(a); /* the connection closing is a release too (module.c) */
}

static void release(struct am *a, const char *reason)
{
    if (a->phase != PH_RUN) return;
    snprintf(a->reason, sizeof a->reason, "%s", reason);
    a->phase = PH_RELEASE;
    if (a->o->connect)
        relay_stop(&a->relay);
    else
        agentsock_release(&a->sock);
    timer_in(a, AM_RELEASE_S, on_release_timeout);
}

static void on_duration(uv_timer_t *t)
{
    release(t->data, "detached (duration)");
}

static void on_live(uv_timer_t *t)
{
    struct am *a = t->data;
    if (a->phase == PH_RUN && a->o->live->tick(a->p, a->o->live->ud))
        release(a, "detached (interrupted)");
}

/* ---- the agent's socket --------------------------------------------------- */

/* the injected agent connected: 1 to take it (it is the first), else 0 */
static int agent_arrived(struct am *a)
{
    /* only our injected code knows the socket; it may connect before gdb
     * has exited. One process: children are not followed */
    if (a->conns++ > 0 || a->phase != PH_INJECT) return 0;
    a->phase = PH_RUN;
    a->t0 = mono();
    injector_arrived(&a->inj);
    if (a->o->duration > 0) timer_in(a, a->o->duration, on_duration);
    if (a->o->live) {
        uint64_t ms = (uint64_t)(a->o->live->every_s * 1000);
        uv_timer_start(&a->live_timer, on_live, ms, ms ? ms : 1);
    }
    return 1;
}

static struct profile *on_accept(struct agentsock *s, void *ud)
{
    (void)s;
    return agent_arrived(ud) ? ((struct am *)ud)->p : NULL;
}

static void on_hello(struct agentsock *s, long long pid, void *ud)
{
    (void)s;
    struct am *a = ud;
    fprintf(stderr, "hotline: agent connected in process %lld (memory on)%s\n", pid,
            a->o->duration > 0 ? "" : "; Ctrl-C detaches");
}

static void on_error(struct agentsock *s, const char *msg, void *ud)
{
    (void)s;
    struct am *a = ud;
    char safe[TERMSAFE_SIZE(512)]; /* the target's agent wrote it */
    fprintf(stderr, "hotline: %s\n", termsafe_str(safe, sizeof safe, msg));
    if (strstr(msg, "already profiled")) { /* hotline._attach left it alone */
        a->status = 1;
        close_all(a);
    }
}

static void on_gone(struct agentsock *s, long long pid, void *ud)
{
    (void)s;
    (void)pid;
    struct am *a = ud;
    if (a->phase != PH_RUN && a->phase != PH_RELEASE) return;
    if (a->phase == PH_RUN) { /* not asked: the target ended (or closed us) */
        const char *end = a->p->nprocs > 0 ? a->p->procs[0].end_reason : NULL;
        int gone = (end && !strcmp(end, "exit")) || kill(a->o->pid, 0) != 0 ||
                   procfs_state(NULL, a->o->pid) == 'Z';
        snprintf(a->reason, sizeof a->reason, "%s", gone ? "target exited" : "the agent stopped");
    }
    close_all(a);
}

/* ---- the injection ------------------------------------------------------- */

/* the exit status of a negative code of attach/ (attach_memory.h) */
static int exit_status(int code)
{
    switch (code) {
    case -EIO:    /* failed, the target left as it was */
    case -ENOENT: /* no gdb */
    case REXEC_EDISABLED:
    case ATTACH_ERACE: /* no main thread yet: nothing was written */
        return 7;
    case INJECT_ESTOPPED:
        return 8;
    case -EINTR:
        return 130;
    default:
        return cli_attach_status(code);
    }
}

static void on_inject_fail(struct injector *j, int code, const char *msg, int end)
{
    struct am *a = j->data;
    fail(a, exit_status(code), "%s", msg);
    if (end) close_all(a);
}

static void on_signal(uv_signal_t *h, int sig)
{
    (void)sig;
    struct am *a = h->data;
    if (a->phase == PH_RUN)
        release(a, "detached (interrupted)");
    else if (a->phase == PH_INJECT)
        injector_interrupt(&a->inj);
}

/* ---- --connect: the relay's events ---------------------------------------- */

static int rl_agent(struct relay *r, void *data)
{
    (void)r;
    return agent_arrived(data);
}

static void rl_ready(struct relay *r, void *data)
{
    (void)r;
    struct am *a = data;
    fprintf(stderr, "hotline: agent connected in process %d (memory on); relaying to %s\n",
            (int)a->o->pid, a->o->connect);
}

static void rl_fail(struct relay *r, const char *msg, void *data)
{
    (void)r;
    fail(data, 1, "%s", msg);
    close_all(data);
}

/* The agent's stream ended: after our `stop` or the server's, or the
 * target exited. */
static void rl_agent_gone(struct relay *r, const char *tail, void *data)
{
    (void)r;
    struct am *a = data;
    if (a->phase == PH_RUN) { /* not asked by us: the target exited (its atexit hook)? */
        const char *end = strstr(tail, "\"t\":\"end\"");
        int gone = (end && strstr(end, "\"reason\":\"exit\"")) || kill(a->o->pid, 0) != 0 ||
                   procfs_state(NULL, a->o->pid) == 'Z';
        snprintf(a->reason, sizeof a->reason, "%s",
                 gone ? "target exited" : "the agent ended its stream");
        /* hotline._attach's only line when something profiles the target
         * already: the server has it too (an `error`); we fail as the CLI does */
        if (strstr(tail, "already profiled"))
            fail(a, 1, "%s",
                 "the target is already profiled by Hotline (hotline run, hotline.start() or "
                 "an earlier attach): left alone");
    }
    close_all(a);
}

/* The server closed its side: a detach, as when a run's agent loses the
 * server (module.c); before the agent is there, the wait ends as Ctrl-C
 * ends it. */
static void rl_server_gone(struct relay *r, void *data)
{
    (void)r;
    struct am *a = data;
    if (a->phase == PH_RUN)
        release(a, "detached (the server closed the connection)");
    else
        on_signal(&a->sigs[0], SIGINT);
}

static const struct relay_cbs relay_cbs = {rl_agent, rl_ready, rl_fail, rl_agent_gone,
                                           rl_server_gone};

/* ---- checks and setup ---------------------------------------------------- */

/* 1 when agent_dir's package has a build for 3.minor; have: the ones it has */
static int have_build(const char *agent_dir, int minor, char *have, size_t n)
{
    char d[PATH_MAX + 16], want[32];
    snprintf(d, sizeof d, "%s/" SESSION_AGENT_PKG, agent_dir);
    snprintf(want, sizeof want, "_agent.cpython-3%d-", minor);
    DIR *dir = opendir(d);
    int ok = 0;
    have[0] = 0;
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        int mi;
        if (sscanf(e->d_name, "_agent.cpython-3%d-", &mi) != 1) continue;
        ok |= !strncmp(e->d_name, want, strlen(want));
        size_t l = strlen(have);
        if (l + 8 < n) snprintf(have + l, n - l, "%s3.%d", l ? " " : "", mi);
    }
    if (dir) closedir(dir);
    return ok;
}

/* the target's script (for the profile's program), like the sampler's hello */
static void set_program(struct profile *p, pid_t pid)
{
    char buf[8192], cwd[PATH_MAX], main_path[PATH_MAX * 2];
    procfs_cwd(NULL, pid, cwd, sizeof cwd);
    long n = procfs_cmdline(NULL, pid, buf, sizeof buf);
    procfs_script(buf, n > 0 ? (size_t)n : 0, cwd, main_path, sizeof main_path);
    if (!main_path[0]) snprintf(main_path, sizeof main_path, "process %d", (int)pid);
    profile_set_str(&p->meta.program, main_path);
}

/* The private folder with the socket listened on, and the script
 * (attach/inject_files.h): 0, or -1 (failed, said why). */
static int setup(struct am *a, const struct inject_target *t, const char *agent_dir)
{
    char err[640];
    struct agentsock_cbs cbs = {
        .on_accept = on_accept, .on_hello = on_hello, .on_error = on_error, .on_gone = on_gone};
    const struct attach_mem_opts *o = a->o;
    struct inject_config c = {o->interval_ms, o->include, o->exclude, o->ninclude, o->nexclude};
    int rc = inject_files_dir(&a->files, a->inj.rexec, err, sizeof err);
    if (!rc && o->connect) {
        rc = relay_listen(&a->relay, a->files.sockpath, err, sizeof err);
    } else if (!rc) {
        rc = agentsock_listen(&a->loop, &a->sock, a->files.sockpath, &cbs, a, err, sizeof err);
        a->sock_open = rc == 0;
    }
    if (!rc)
        rc = inject_files_script(&a->files, t, agent_dir, SESSION_AGENT_PKG, &c, err, sizeof err);
    if (!rc) rc = inject_files_hand_over(&a->files, t->pid, err, sizeof err);
    if (rc) fail(a, rc == -E2BIG ? 2 : 1, "%s", err);
    return rc ? -1 : 0;
}

/* The checks before anything is done: 0, or the exit status with the
 * reason printed. agent_dir: the agent's package folder, resolved. */
static int check(struct injector *j, pid_t pid, char *agent_dir)
{
    char why[2 * PATH_MAX + 512] = "", safe[TERMSAFE_SIZE(sizeof why)], dir[PATH_MAX + 64],
                            have[128];
    int rc = injector_find(j, pid, why, sizeof why);
    if (!rc && (session_agent_dir(dir, sizeof dir) || !realpath(dir, agent_dir))) {
        snprintf(why, sizeof why,
                 "the profiler agent was not found (looked in %s); set HOTLINE_AGENT_PATH", dir);
        rc = 1;
    } else if (!rc && !have_build(agent_dir, j->t.minor, have, sizeof have)) {
        snprintf(why, sizeof why,
                 "no agent built for Python 3.%d (process %d runs %s) in %s/hotline (built "
                 "for: %s); build Hotline with that interpreter (HOTLINE_PYTHONS)",
                 j->t.minor, (int)pid, j->t.version, agent_dir, have[0] ? have : "none");
        rc = ATTACH_EVERSION;
    }
    if (!rc) rc = injector_way(j, why, sizeof why); /* 3.14+: PEP 768 turned off? gdb? */
    if (!rc) return 0;
    fprintf(stderr, "hotline attach: %s\n", termsafe_str(safe, sizeof safe, why)); /* its files */
    return exit_status(rc);
}

/* The report of the run the agent sent, and the files asked for: the
 * exit status. */
static int report(struct am *a)
{
    struct prof_meta *m = &a->p->meta;
    m->elapsed_s = mono() - a->t0;
    m->exit_status = -1;
    profile_set_str(&m->reason, a->reason);
    if (a->o->live) { /* the live view's last screen instead */
        a->o->live->done(a->p, a->reason, a->o->live->ud);
        return 0;
    }
    fprintf(stderr, "hotline: %s\n", a->reason);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
    fputc('\n', stderr);
    report_print(stderr, a->p, a->o->top, cwd);
    return cli_outputs_write(a->o->outs, a->p, "hotline", 0) ? 1 : 0;
}

int cmd_attach_memory(const struct attach_mem_opts *o)
{
    struct am *a = calloc(1, sizeof *a);
    char real[PATH_MAX], err[640];
    int status = a ? check(&a->inj, o->pid, real) : 1;
    if (status) {
        free(a);
        return status;
    }
    a->o = o;
    a->files.script_fd = -1;
    a->inj.data = a;
    a->inj.on_fail = on_inject_fail;
    snprintf(a->reason, sizeof a->reason, "detached");
    a->p = profile_new();
    if (!a->p || uv_loop_init(&a->loop)) {
        profile_free(a->p);
        free(a);
        return 1;
    }
    uv_timer_init(&a->loop, &a->timer);
    uv_timer_init(&a->loop, &a->live_timer);
    a->timer.data = a->live_timer.data = a;
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
        uv_signal_init(&a->loop, &a->sigs[i]);
        a->sigs[i].data = a;
        uv_signal_start(&a->sigs[i], on_signal, sigs[i]);
    }
    set_program(a->p, o->pid);
    if (o->interval_ms > 0) a->p->meta.interval_ms = o->interval_ms;
    /* --connect: the server first, so that nothing is done to the target
     * when nobody listens there; setup touches no target (it may refuse) */
    int rc = 0;
    if (o->connect &&
        relay_connect(&a->relay, &a->loop, o->connect, &relay_cbs, a, err, sizeof err) != 0)
        fail(a, 1, "%s", err);
    else if (setup(a, &a->inj.t, real) != 0)
        rc = -1;
    else if ((rc = injector_start(&a->inj, &a->loop, &a->files, real, err, sizeof err)) != 0)
        fail(a, exit_status(rc), "%s", err);
    if (a->status || rc) close_all(a);
    uv_run(&a->loop, UV_RUN_DEFAULT);
    /* close what is left (all but the timers and signals are closed by now) */
    uv_close((uv_handle_t *)&a->timer, NULL);
    uv_close((uv_handle_t *)&a->live_timer, NULL);
    for (int i = 0; i < 3; i++)
        uv_close((uv_handle_t *)&a->sigs[i], NULL);
    injector_close(&a->inj);
    uv_run(&a->loop, UV_RUN_DEFAULT);
    uv_loop_close(&a->loop);
    inject_files_remove(&a->files);
    status = a->status;
    if (status == 0 && a->conns > 0 && o->connect)
        fprintf(stderr, "hotline: %s\n", a->reason); /* the server has the rest */
    else if (status == 0 && a->conns > 0)
        status = report(a);
    else if (status == 0)
        status = 1;
    profile_free(a->p);
    free(a);
    return status;
}
