/* injector: the injection's phases on a libuv loop (injector.h). */
#include "injector.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"

#define INJ_TIMEOUT_S 10.0 /* default wait for a safe point, then for the agent */
#define INJ_STUCK_S 5.0    /* SIGURG sent: gdb answers in ms */

int injector_find(struct injector *j, pid_t pid, char *why, size_t n)
{
    memset(j, 0, sizeof *j);
    const char *to = getenv("HOTLINE_INJECT_TIMEOUT");
    j->timeout_s = to && atof(to) > 0 ? atof(to) : INJ_TIMEOUT_S;
    int rc = inject_find(pid, &j->t, why, n);
    if (rc) return rc;
    if (j->t.major != 3 || j->t.minor < 9) {
        snprintf(why, n, "process %d runs Python %s: --memory needs 3.9 or later", (int)pid,
                 j->t.version);
        return ATTACH_EVERSION;
    }
    if (inject_stopped(pid, why, n)) return INJECT_ESTOPPED;
    return 0;
}

int injector_way(struct injector *j, char *why, size_t n)
{
    j->rexec = j->t.minor >= 14;
    if (j->rexec) /* PEP 768, refused here when the target turned it off */
        return rexec_open(j->t.pid, &j->rx, why, n);
    if (inject_gdb_find(j->gdb_path, sizeof j->gdb_path) == 0) return 0;
    const char *env = getenv("HOTLINE_GDB");
    snprintf(why, n,
             "--memory needs gdb, which is not installed%s%s (Debian/Ubuntu: apt-get install "
             "gdb); the target is unchanged",
             env ? " at $HOTLINE_GDB=" : "", env ? env : "");
    return -ENOENT;
}

static void timer_in(struct injector *j, double s, uv_timer_cb cb)
{
    uv_timer_start(&j->timer, cb, (uint64_t)(s * 1000), 0);
}

static void on_conn_timeout(uv_timer_t *t)
{
    struct injector *j = t->data;
    char msg[640], what[96];
    j->phase = INJ_DONE;
    if (j->rexec) {
        snprintf(what, sizeof what, "the agent did not connect within %.0f s", j->timeout_s);
        rexec_give_up(&j->rx, what, msg, sizeof msg);
    } else {
        snprintf(msg, sizeof msg,
                 "the agent did not connect within %.0f s: the target's main thread runs no "
                 "Python code (blocked in a call?). The queued call finds no socket when it "
                 "runs and does nothing; the target keeps one 4 KiB page",
                 j->timeout_s);
    }
    j->on_fail(j, -EIO, msg, 1);
}

static void on_gdb_stopped(struct inject_gdb *g)
{
    uv_timer_stop(&((struct injector *)g->data)->timer); /* it must finish now */
}

static void on_gdb_exit(struct inject_gdb *g, int64_t status, int sig)
{
    struct injector *j = g->data;
    if (j->phase != INJ_GDB) return; /* the agent connected first */
    uv_timer_stop(&j->timer);
    if (g->queued) {
        j->phase = INJ_WAIT;
        timer_in(j, j->timeout_s, on_conn_timeout);
        return;
    }
    char msg[1024];
    int rc = inject_gdb_failure(g, j->timeout_s, status, sig, msg, sizeof msg);
    j->phase = INJ_DONE;
    j->on_fail(j, rc, msg, 1);
}

static void on_gdb_stuck(uv_timer_t *t)
{
    inject_gdb_kill(&((struct injector *)t->data)->gdb);
}

/* Still waiting for a safe point: end the wait the script's way. */
static void give_up_wait(struct injector *j)
{
    if (inject_gdb_urge(&j->gdb)) timer_in(j, INJ_STUCK_S, on_gdb_stuck);
}

static void on_gdb_timeout(uv_timer_t *t)
{
    struct injector *j = t->data;
    j->gdb.timed_out = 1;
    give_up_wait(j);
}

int injector_start(struct injector *j, uv_loop_t *loop, const struct inject_files *f,
                   const char *agent_dir, char *why, size_t n)
{
    j->loop = loop;
    uv_timer_init(loop, &j->timer);
    j->timer.data = j;
    j->timer_open = 1;
    pid_t pid = j->t.pid;
    if (j->rexec) {
        fprintf(stderr,
                "hotline: --memory: PEP 768 (what sys.remote_exec does; no gdb, nothing "
                "stopped): writes into process %d (Python %s) its main thread's "
                "debugger_script_path (%s), debugger_pending_call = 1 and a bit of its "
                "eval_breaker; at its next bytecode check it runs that script, which loads "
                "Hotline's agent from %s (memory hooks and a sampler thread, removed on "
                "detach; docs/attach.md)\n",
                (int)pid, j->t.version, f->script, agent_dir);
        int rc = rexec_request(&j->rx, f->script, why, n);
        if (rc) return rc == -EPERM || rc == -ESRCH ? rc : -EIO;
        j->phase = INJ_WAIT;
        timer_in(j, j->timeout_s, on_conn_timeout);
        return 0;
    }
    fprintf(stderr,
            "hotline: --memory: gdb (%s) stops process %d (Python %s) at its next allocator "
            "call, maps one 4 KiB page in it and queues a call that loads Hotline's agent "
            "from %s (memory hooks and a sampler thread, removed on detach; "
            "docs/attach.md)\n",
            j->gdb_path, (int)pid, j->t.version, agent_dir);
    j->gdb.data = j;
    j->gdb.on_stopped = on_gdb_stopped;
    j->gdb.on_exited = on_gdb_exit;
    int rc = inject_gdb_spawn(&j->gdb, loop, j->gdb_path, pid, f->script_fd, f->script, why, n);
    if (rc) return rc == -EIO ? -EIO : 1;
    j->phase = INJ_GDB;
    timer_in(j, j->timeout_s, on_gdb_timeout);
    return 0;
}

void injector_arrived(struct injector *j)
{
    j->phase = INJ_DONE;
    if (j->timer_open) uv_timer_stop(&j->timer);
}

void injector_interrupt(struct injector *j)
{
    if (j->phase == INJ_GDB && j->gdb.running && !j->gdb.stopped) {
        j->on_fail(j, -EINTR,
                   "interrupted before the injection: gdb detached, the target is unchanged", 0);
        give_up_wait(j);
    } else if (j->phase == INJ_WAIT && j->rexec) {
        char msg[640];
        rexec_give_up(&j->rx, "interrupted while waiting for the agent", msg, sizeof msg);
        j->phase = INJ_DONE;
        j->on_fail(j, -EINTR, msg, 1);
    } else if (j->phase == INJ_WAIT) {
        j->phase = INJ_DONE;
        j->on_fail(j, -EINTR,
                   "interrupted while waiting for the agent: the queued call will find no "
                   "socket and do nothing",
                   1);
    } /* gdb in its calls: it finishes first (a few ms) */
}

void injector_stop(struct injector *j)
{
    j->phase = INJ_DONE; /* gdb's exit, if it comes, is no news now */
    if (j->timer_open) uv_timer_stop(&j->timer);
}

void injector_close(struct injector *j)
{
    if (j->timer_open) uv_close((uv_handle_t *)&j->timer, NULL);
    j->timer_open = 0;
    inject_gdb_close(&j->gdb);
}
