/* attach_memory: `hotline attach PID --memory`. Instead of sampling from
 * outside (cmd_attach.c), it makes the running CPython import the
 * in-process agent and connect back to a private socket: on 3.9-3.13 gdb
 * queues a pending call (attach/inject.h says how), on 3.14+ PEP 768's
 * remote execution asks the main thread to run a script, with no gdb
 * (attach/remote_exec.h). Then it receives that agent's stream exactly as `hotline run`
 * receives its program's (proc/agentsock.c, the shared agentconn decoder),
 * so the report and the JSON carry memory: allocated / kept per line,
 * leaks. Detach (Ctrl-C, --duration) sends the agent `stop`: it ends its
 * stream and unloads itself on the target's main thread (profiler/module.c)
 * while the target runs on. Every failure before the agent connects leaves
 * the target as it was, but for at most one 4 KiB page on 3.9-3.13
 * (docs/attach.md); on 3.14+ a request not taken is withdrawn.
 *
 * Phases: GDB (gdb attached, waiting at a safe point, then two hand-made
 * calls; not on 3.14+) -> WAIT (call queued or request written, waiting
 * for the agent to connect) -> RUN -> RELEASE (stop sent, waiting for the
 * end of the stream) -> done.
 *
 * With --connect SOCK (the editor's "attach with memory", via the LSP
 * server's session) nothing is decoded here: the agent's connection is
 * relayed to SOCK byte for byte and SOCK's bytes back to the agent (the
 * relay section), so the server sees what a run's agent sends, its hello
 * included, and its `now` and `stop` reach the agent. Same phases, same
 * detach: the server's `stop` or its going, or our SIGINT / SIGTERM. */
#include "cli/attach_memory.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include "attach.h"
#include "inject.h"
#include "procfs.h"
#include "remote_exec.h"
#include "cli/report.h"
#include "proc/agentsock.h"
#include "proc/session.h"
#include "store/profile.h"
#include "text/termsafe.h"

#define AM_TIMEOUT_S 10.0 /* default wait for a safe point, then for the agent */
#define AM_RELEASE_S 5.0  /* stop sent: the agent's last delta and `end` */
#define AM_EXIT_INJECT 7  /* the injection failed (gdb missing, timeout, ...) */
#define AM_EXIT_STOPPED 8 /* the target is stopped: nothing done */

/* --connect: the relay's caps */
#define AM_RELAY_READ 65536            /* one read of either side of the relay */
#define AM_RELAY_MAX_QUEUED (8u << 20) /* agent bytes the server has not taken: pause */
#define AM_RELAY_MAX_BACK (1u << 20)   /* server bytes the agent has not taken: dropped */

enum { PH_GDB, PH_WAIT, PH_RUN, PH_RELEASE, PH_DONE };

/* 3.14+: the most Python written to the script file the target runs (gdb's
 * page holds INJECT_CODE_MAX): include / exclude patterns beyond are refused */
#define REXEC_CODE_MAX 60000

struct am {
    const struct attach_mem_opts *o;
    uv_loop_t loop;
    struct agentsock sock;
    int sock_open;
    uv_process_t gdb;
    uv_pipe_t gdb_out;
    uv_timer_t timer;
    uv_signal_t sigs[3];
    int gdb_running, out_open;
    struct profile *p;
    int phase, status;
    int stopped, queued, refused, timed_out, urged, nostop, conns;
    double timeout_s, t0;
    char line[512]; /* gdb output: the line being read */
    size_t line_len;
    char gdb_last[256]; /* gdb's last line that is not ours (its error) */
    char reason[64];
    char dir[256], sockpath[300], script[300];
    int script_fd;   /* gdb's script (a memfd), or -1 */
    int rexec;       /* 3.14+: PEP 768, no gdb */
    struct rexec rx; /* where the request goes (rexec) */
    /* --connect: the relay (private listener, the agent, the server) */
    uv_pipe_t rl_listen, rl_agent, rl_up;
    uv_shutdown_t rl_shut;
    int rl_listen_open, rl_agent_open, rl_up_open, rl_paused, rl_flushing;
    char rl_tail[256]; /* the stream's last bytes: its `end` says why it ended */
    size_t rl_tail_len;
};

static int relay_listen(struct am *a);
static int relay_connect(struct am *a);
static void relay_stop(struct am *a);
static void relay_close(struct am *a);

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
    for (int i = 0; i < 3; i++)
        uv_signal_stop(&a->sigs[i]);
    if (a->sock_open) {
        a->sock_open = 0;
        agentsock_close(&a->sock, NULL);
    }
    relay_close(a);
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
        relay_stop(a);
    else
        agentsock_release(&a->sock);
    timer_in(a, AM_RELEASE_S, on_release_timeout);
}

static void on_duration(uv_timer_t *t)
{
    release(t->data, "detached (duration)");
}

/* 3.14+: take the request back when the agent did not come (timeout,
 * Ctrl-C); what says what happened, into msg (cap n) */
static void withdraw(struct am *a, const char *what, char *msg, size_t n)
{
    int w = rexec_withdraw(&a->rx);
    if (getenv("HOTLINE_ATTACH_DEBUG")) fprintf(stderr, "hotline: withdraw: %d\n", w);
    if (w == 1)
        snprintf(msg, n,
                 "%s: process %d's main thread ran no Python bytecode since the request was "
                 "written (blocked in a C call: a read, a sleep, a lock?), so it never took "
                 "it. "
                 "Withdrawn (debugger_pending_call cleared) and the script removed: the "
                 "target is unchanged",
                 what, (int)a->o->pid);
    else if (w == 0)
        snprintf(msg, n,
                 "%s: process %d took the request but its agent did not connect (an audit "
                 "hook refusing cpython.remote_debugger_script, a script it could not "
                 "read, or the import still under way?); the script finds no socket now "
                 "and does nothing",
                 what, (int)a->o->pid);
    else if (w == -ESRCH || kill(a->o->pid, 0) != 0)
        snprintf(msg, n, "%s: process %d has exited", what, (int)a->o->pid);
    else
        snprintf(msg, n,
                 "%s, and the request could not be withdrawn (%s): if process %d's main "
                 "thread takes it later it finds no script, and Python prints one "
                 "\"Exception ignored\" line on its stderr",
                 what, strerror(-w), (int)a->o->pid);
}

static void on_conn_timeout(uv_timer_t *t)
{
    struct am *a = t->data;
    char msg[640];
    if (a->rexec) {
        char what[96];
        snprintf(what, sizeof what, "the agent did not connect within %.0f s", a->timeout_s);
        withdraw(a, what, msg, sizeof msg);
        fail(a, AM_EXIT_INJECT, "%s", msg);
        close_all(a);
        return;
    }
    snprintf(msg, sizeof msg, "%.0f s", a->timeout_s);
    fail(a, AM_EXIT_INJECT,
         "the agent did not connect within %s: the target's main thread runs no Python "
         "code (blocked in a call?). The queued call finds no socket when it runs and does "
         "nothing; the target keeps one 4 KiB page",
         msg);
    close_all(a);
}

/* ---- the agent's socket --------------------------------------------------- */

/* the injected agent connected: 1 to take it (it is the first), else 0 */
static int agent_arrived(struct am *a)
{
    /* only our injected code knows the socket; it may connect before gdb
     * has exited. One process: children are not followed */
    if (a->conns++ > 0 || (a->phase != PH_WAIT && a->phase != PH_GDB)) return 0;
    a->phase = PH_RUN;
    a->t0 = mono();
    uv_timer_stop(&a->timer);
    if (a->o->duration > 0) timer_in(a, a->o->duration, on_duration);
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

/* ---- gdb ------------------------------------------------------------------ */

static void gdb_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    (void)h;
    (void)hint;
    static char buf[4096]; /* one read at a time, consumed before the next */
    b->base = buf;
    b->len = sizeof buf;
}

static void gdb_line(struct am *a, const char *l)
{
    if (getenv("HOTLINE_ATTACH_DEBUG")) fprintf(stderr, "gdb: %s\n", l);
    int rc;
    if (!strncmp(l, "HOTLINE stopped", 15)) {
        a->stopped = 1; /* from here gdb must finish: it is changing registers */
        uv_timer_stop(&a->timer);
    } else if (!strcmp(l, "HOTLINE nostop")) {
        a->nostop = 1;
    } else if (sscanf(l, "HOTLINE rc %d", &rc) == 1) {
        a->queued = rc == 0;
        a->refused = rc != 0;
    } else if (l[0] && strncmp(l, "HOTLINE", 7) && !strstr(l, "Breakpoint") &&
               !strstr(l, "breakpoint") && !strstr(l, "SIGSEGV") && !strstr(l, "SIGURG") &&
               strncmp(l, "0x", 2) && strncmp(l, "[", 1)) {
        snprintf(a->gdb_last, sizeof a->gdb_last, "%.200s", l);
    }
}

static void gdb_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct am *a = st->data;
    if (n < 0) {
        if (!uv_is_closing((uv_handle_t *)st)) uv_close((uv_handle_t *)st, NULL);
        a->out_open = 0;
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        char c = b->base[i];
        if (c == '\n' || a->line_len == sizeof a->line - 1) {
            a->line[a->line_len] = 0;
            gdb_line(a, a->line);
            a->line_len = 0;
        } else {
            a->line[a->line_len++] = c;
        }
    }
}

static void on_gdb_exit(uv_process_t *p, int64_t status, int sig)
{
    struct am *a = p->data;
    a->gdb_running = 0;
    uv_close((uv_handle_t *)p, NULL);
    if (a->phase != PH_GDB) return; /* the agent connected first: the timer is --duration's */
    uv_timer_stop(&a->timer);
    if (a->queued) {
        a->phase = PH_WAIT;
        timer_in(a, a->timeout_s, on_conn_timeout);
        return;
    }
    char msg[1024];
    if (a->timed_out && !a->stopped && a->nostop)
        snprintf(msg, sizeof msg,
                 "process %d reached no safe point (an allocator call) within %.0f s: it "
                 "may be blocked or idle. gdb detached; the target is unchanged",
                 (int)a->o->pid, a->timeout_s);
    else if (strstr(a->gdb_last, "ptrace") || strstr(a->gdb_last, "not permitted")) {
        char why[400];
        attach__perm_message(a->o->pid, why, sizeof why);
        snprintf(msg, sizeof msg, "gdb could not attach (%s): %s", a->gdb_last, why);
        fail(a, 6, "%s", msg);
        close_all(a);
        return;
    } else if (a->refused)
        snprintf(msg, sizeof msg,
                 "Python refused the pending call (Py_AddPendingCall: its queue is full): "
                 "registers put back, the target keeps one unused 4 KiB page");
    else if (a->stopped)
        snprintf(msg, sizeof msg,
                 "gdb ended half-way (%s%s, status %d, signal %d): it puts the registers "
                 "back before anything that can fail (the target may keep one 4 KiB page); "
                 "killed inside one of its two calls it would have left the target broken",
                 a->gdb_last[0] ? "last said: " : "no message", a->gdb_last, (int)status, sig);
    else
        snprintf(msg, sizeof msg,
                 "gdb failed before touching process %d (%s%s, status %d, "
                 "signal %d): the target is unchanged",
                 (int)a->o->pid, a->gdb_last[0] ? "last said: " : "no message", a->gdb_last,
                 (int)status, sig);
    fail(a, AM_EXIT_INJECT, "%s", msg);
    close_all(a);
}

static void on_gdb_stuck(uv_timer_t *t)
{
    struct am *a = t->data;
    if (a->gdb_running && !a->stopped) uv_process_kill(&a->gdb, SIGTERM);
}

/* Still waiting for a safe point: end the wait the script's way (SIGURG,
 * inject.h), which has gdb take its breakpoints out and detach. */
static void give_up_wait(struct am *a)
{
    if (!a->gdb_running || a->stopped || a->urged) return;
    a->urged = 1;
    kill(a->o->pid, SIGURG);
    timer_in(a, AM_RELEASE_S, on_gdb_stuck); /* gdb answers in ms */
}

static void on_gdb_timeout(uv_timer_t *t)
{
    struct am *a = t->data;
    a->timed_out = 1;
    give_up_wait(a);
}

static void on_signal(uv_signal_t *h, int sig)
{
    (void)sig;
    struct am *a = h->data;
    if (a->phase == PH_RUN) {
        release(a, "detached (interrupted)");
    } else if (a->phase == PH_GDB && a->gdb_running && !a->stopped) {
        fail(a, 130, "%s",
             "interrupted before the injection: gdb detached, the target is "
             "unchanged");
        give_up_wait(a);
    } else if (a->phase == PH_WAIT && a->rexec) {
        char msg[640];
        withdraw(a, "interrupted while waiting for the agent", msg, sizeof msg);
        fail(a, 130, "%s", msg);
        close_all(a);
    } else if (a->phase == PH_WAIT) {
        fail(a, 130, "%s",
             "interrupted while waiting for the agent: the queued call will "
             "find no socket and do nothing");
        close_all(a);
    } /* gdb in its calls: it finishes first (a few ms) */
}

/* ---- --connect: the relay ------------------------------------------------ */

/* One write in flight, its buffer with it. */
struct relay_write {
    uv_write_t req;
    char *buf; /* owned */
    struct am *a;
};

static void relay_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    (void)h;
    (void)hint;
    b->base = malloc(AM_RELAY_READ);
    b->len = b->base ? AM_RELAY_READ : 0;
}

/* Write n bytes of buf (stolen: freed once written, or now on failure). */
static void relay_write(struct am *a, uv_pipe_t *to, char *buf, size_t n, uv_write_cb cb)
{
    struct relay_write *w = malloc(sizeof *w);
    uv_buf_t b = uv_buf_init(buf, (unsigned)n);
    if (w) {
        w->buf = buf;
        w->a = a;
    }
    if (!w || uv_write(&w->req, (uv_stream_t *)to, &b, 1, cb)) {
        free(buf);
        free(w);
    }
}

static void agent_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b);

/* to the server: written (or cancelled); the agent reads again once the
 * server has taken half of what waited */
static void on_up_written(uv_write_t *req, int status)
{
    (void)status; /* the server went: its read side says so (up_read) */
    struct relay_write *w = (struct relay_write *)req;
    struct am *a = w->a;
    free(w->buf);
    free(w);
    if (a->rl_paused && a->rl_agent_open && a->rl_up.write_queue_size < AM_RELAY_MAX_QUEUED / 2) {
        a->rl_paused = 0;
        uv_read_start((uv_stream_t *)&a->rl_agent, relay_alloc, agent_read);
    }
}

static void on_agent_written(uv_write_t *req, int status)
{
    (void)status;
    struct relay_write *w = (struct relay_write *)req;
    free(w->buf);
    free(w);
}

static void on_up_shut(uv_shutdown_t *req, int status)
{
    (void)status;
    struct am *a = req->data;
    a->rl_flushing = 0;
    a->rl_up_open = 0;
    uv_close((uv_handle_t *)&a->rl_up, NULL);
}

/* The agent's stream ended: after our `stop` or the server's, or the target
 * exited. What the server has not read yet still goes, then EOF. */
static void relay_agent_gone(struct am *a)
{
    if (a->phase == PH_RUN) { /* not asked by us: the target exited (its atexit hook)? */
        a->rl_tail[a->rl_tail_len] = 0;
        const char *end = strstr(a->rl_tail, "\"t\":\"end\"");
        int gone = (end && strstr(end, "\"reason\":\"exit\"")) || kill(a->o->pid, 0) != 0 ||
                   procfs_state(NULL, a->o->pid) == 'Z';
        snprintf(a->reason, sizeof a->reason, "%s",
                 gone ? "target exited" : "the agent ended its stream");
        /* hotline._attach's only line when something profiles the target
         * already: the server has it too (an `error`); we fail as the CLI does */
        if (strstr(a->rl_tail, "already profiled"))
            fail(a, 1, "%s",
                 "the target is already profiled by Hotline (hotline run, hotline.start() or "
                 "an earlier attach): left alone");
    }
    if (a->rl_up_open && !a->rl_flushing) {
        a->rl_shut.data = a;
        if (uv_shutdown(&a->rl_shut, (uv_stream_t *)&a->rl_up, on_up_shut) == 0) a->rl_flushing = 1;
    }
    close_all(a);
}

static void agent_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct am *a = st->data;
    if (n > 0) { /* keep the last bytes: the stream's `end` line (relay_agent_gone) */
        size_t keep = sizeof a->rl_tail - 1, k = (size_t)n < keep ? (size_t)n : keep;
        size_t old = a->rl_tail_len + k > keep ? keep - k : a->rl_tail_len;
        memmove(a->rl_tail, a->rl_tail + a->rl_tail_len - old, old);
        memcpy(a->rl_tail + old, b->base + n - k, k);
        a->rl_tail_len = old + k;
    }
    if (n > 0 && a->rl_up_open && !a->rl_flushing) {
        relay_write(a, &a->rl_up, b->base, (size_t)n, on_up_written);
        if (a->rl_up.write_queue_size > AM_RELAY_MAX_QUEUED) { /* the agent waits, not us */
            uv_read_stop(st);
            a->rl_paused = 1;
        }
        return;
    }
    free(b->base); /* n > 0 with no server: dropped, the agent's end follows */
    if (n < 0) relay_agent_gone(a);
}

/* From the server: `now` rates and `stop`, passed on as they are (before
 * the agent is there the server has nothing to say: dropped). Its EOF is a
 * detach, as when a run's agent loses the server (module.c). */
static void up_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct am *a = st->data;
    if (n > 0 && a->rl_agent_open && a->rl_agent.write_queue_size < AM_RELAY_MAX_BACK) {
        relay_write(a, &a->rl_agent, b->base, (size_t)n, on_agent_written);
        return;
    }
    free(b->base);
    if (n >= 0) return;
    uv_read_stop(st);
    if (!a->rl_flushing) {
        a->rl_up_open = 0;
        uv_close((uv_handle_t *)st, NULL);
    }
    if (a->phase == PH_RUN)
        release(a, "detached (the server closed the connection)");
    else
        on_signal(&a->sigs[0], SIGINT); /* not there yet: end the wait as Ctrl-C does */
}

static void on_relay_connection(uv_stream_t *srv, int status)
{
    struct am *a = srv->data;
    /* a second connection is left unaccepted: the listener closes below */
    if (status < 0 || a->rl_agent_open || !agent_arrived(a)) return;
    uv_pipe_init(&a->loop, &a->rl_agent, 0);
    a->rl_agent.data = a;
    a->rl_agent_open = 1;
    if (uv_accept(srv, (uv_stream_t *)&a->rl_agent) ||
        uv_read_start((uv_stream_t *)&a->rl_agent, relay_alloc, agent_read)) {
        fail(a, 1, "%s", "cannot read the agent's connection");
        close_all(a);
        return;
    }
    fprintf(stderr, "hotline: agent connected in process %d (memory on); relaying to %s\n",
            (int)a->o->pid, a->o->connect);
    a->rl_listen_open = 0; /* one agent: nobody else may connect */
    uv_close((uv_handle_t *)&a->rl_listen, NULL);
}

/* The private socket (a->sockpath, in our private folder: setup): 0 or -1 (failed). */
static int relay_listen(struct am *a)
{
    int rc = uv_pipe_init(&a->loop, &a->rl_listen, 0);
    if (!rc) {
        a->rl_listen_open = 1;
        a->rl_listen.data = a;
        rc = uv_pipe_bind(&a->rl_listen, a->sockpath);
    }
    if (!rc && chmod(a->sockpath, 0600)) rc = -errno;
    if (!rc) rc = uv_listen((uv_stream_t *)&a->rl_listen, 4, on_relay_connection);
    if (rc) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s: %s", a->sockpath, uv_strerror(rc));
        fail(a, 1, "cannot listen on %s", msg);
        return -1;
    }
    return 0;
}

/* The server's socket (--connect), first: when it is not there nothing is
 * injected. 0 or -1 (failed, said why). */
static int relay_connect(struct am *a)
{
    signal(SIGPIPE, SIG_IGN); /* a server that went is EPIPE on a write, not our death */
    const char *path = a->o->connect;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        fail(a, 1, "socket path too long: %s", path);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        fail(a, 1, "cannot connect to %s", msg);
        return -1;
    }
    uv_pipe_init(&a->loop, &a->rl_up, 0);
    a->rl_up.data = a;
    a->rl_up_open = 1;
    if (uv_pipe_open(&a->rl_up, fd)) {
        close(fd);
        fail(a, 1, "cannot use the connection to %s", path);
        return -1;
    }
    if (uv_read_start((uv_stream_t *)&a->rl_up, relay_alloc, up_read)) {
        fail(a, 1, "cannot read %s", path);
        return -1;
    }
    return 0;
}

/* our detach: the agent's `stop`, as agentsock_release sends it */
static void relay_stop(struct am *a)
{
    static const char stop[] = "{\"t\":\"stop\"}\n";
    char *buf = a->rl_agent_open ? malloc(sizeof stop - 1) : NULL;
    if (!buf) return;
    memcpy(buf, stop, sizeof stop - 1);
    relay_write(a, &a->rl_agent, buf, sizeof stop - 1, on_agent_written);
}

/* from close_all: the agent's connection closing unloads it (module.c) */
static void relay_close(struct am *a)
{
    if (a->rl_listen_open) {
        a->rl_listen_open = 0;
        uv_close((uv_handle_t *)&a->rl_listen, NULL);
    }
    if (a->rl_agent_open) {
        a->rl_agent_open = 0;
        uv_close((uv_handle_t *)&a->rl_agent, NULL);
    }
    if (a->rl_up_open && !a->rl_flushing) {
        a->rl_up_open = 0;
        uv_close((uv_handle_t *)&a->rl_up, NULL);
    }
}

/* ---- checks and setup ---------------------------------------------------- */

/* gdb to run: $HOTLINE_GDB, else gdb on PATH; 0 or -ENOENT */
static int find_gdb(char *out, size_t n)
{
    const char *env = getenv("HOTLINE_GDB");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return access(out, X_OK) == 0 ? 0 : -ENOENT;
    }
    const char *path = getenv("PATH");
    if (!path) return -ENOENT;
    const char *p = path;
    while (*p) {
        size_t l = strcspn(p, ":");
        if (l > 0 && (size_t)snprintf(out, n, "%.*s/gdb", (int)l, p) < n && access(out, X_OK) == 0)
            return 0;
        p += l;
        if (*p == ':') p++;
    }
    return -ENOENT;
}

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

static void hex(char *out, const char *s)
{
    for (; *s; s++, out += 2)
        sprintf(out, "%02x", (unsigned char)*s);
    *out = 0;
}

/* The injected agent's config (new string, or NULL on ENOMEM): memory on,
 * the interval, and the --include / --exclude patterns when given (else
 * the agent's defaults, as for a run without them). */
static char *agent_config(const struct attach_mem_opts *o)
{
    json_t *c = json_pack("{s:b,s:f}", "memory", 1, "interval_ms", o->interval_ms);
    json_t *inc = json_array(), *exc = json_array();
    for (int i = 0; inc && i < o->ninclude; i++)
        json_array_append_new(inc, json_string(o->include[i]));
    for (int i = 0; exc && i < o->nexclude; i++)
        json_array_append_new(exc, json_string(o->exclude[i]));
    char *out = NULL;
    if (c && inc && exc) {
        if (o->ninclude) json_object_set(c, "include", inc);
        if (o->nexclude) json_object_set(c, "exclude", exc);
        out = json_dumps(c, JSON_COMPACT);
    }
    json_decref(inc);
    json_decref(exc);
    json_decref(c);
    return out;
}

/* The Python the pending call runs, into code (at most max bytes, n >
 * max): nothing happens unless our socket still exists (a late run after
 * we gave up); the agent's package (its private name: the program's own
 * `hotline` stays its own) is imported from agent_dir, which leaves sys.path
 * at once; every error is swallowed (the program must see none). Strings
 * travel as hex: no quoting. 0, -ENOMEM, or -E2BIG with the size it needs
 * in *need. */
static int python_code(char *code, size_t n, size_t max, const char *agent_dir, const char *sock,
                       const char *config, size_t *need)
{
    static const char inner[] = "import os,sys\n"
                                "if os.path.exists(S):\n"
                                " sys.path.insert(0,A)\n"
                                " try:\n"
                                "  import " SESSION_AGENT_PKG "\n"
                                " finally:\n"
                                "  sys.path.remove(A)\n"
                                " " SESSION_AGENT_PKG "._attach(S,C)\n";
    const char *dec = "').decode('utf-8','surrogateescape')";
    static const char frame[] =
        "try:exec(bytes.fromhex('%s').decode(),{'__name__':'__hotline_attach__',"
        "'S':bytes.fromhex('%s%s,'A':bytes.fromhex('%s%s,'C':bytes.fromhex('%s%s})"
        "\nexcept BaseException:pass\n";
    /* exactly what snprintf writes below */
    *need = 2 * (sizeof inner - 1 + strlen(agent_dir) + strlen(sock) + strlen(config)) +
            3 * strlen(dec) + sizeof frame - 1 - 2 * 6;
    if (*need > max || *need >= n) return -E2BIG;
    char *hi = malloc(2 * sizeof inner + 1), *ha = malloc(2 * strlen(agent_dir) + 1),
         *hs = malloc(2 * strlen(sock) + 1), *hc = malloc(2 * strlen(config) + 1);
    int rc = -ENOMEM;
    if (hi && ha && hs && hc) {
        hex(hi, inner);
        hex(ha, agent_dir);
        hex(hs, sock);
        hex(hc, config);
        int w = snprintf(code, n, frame, hi, hs, dec, ha, dec, hc, dec);
        rc = w > 0 && (size_t)w < n && (size_t)w <= max ? 0 : -E2BIG;
        if (w > 0) *need = (size_t)w;
    }
    free(hi);
    free(ha);
    free(hs);
    free(hc);
    return rc;
}

/* the target's script (for the profile's program), like cmd_attach's hello */
static void set_program(struct profile *p, pid_t pid)
{
    char path[96], buf[8192], cwd[PATH_MAX] = "", main_path[PATH_MAX * 2] = "";
    snprintf(path, sizeof path, "/proc/%d/cwd", (int)pid);
    ssize_t l = readlink(path, cwd, sizeof cwd - 1);
    cwd[l > 0 ? l : 0] = 0;
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    for (size_t i = 0; i < n && !main_path[0]; i += strlen(buf + i) + 1) {
        size_t al = strlen(buf + i);
        if (al > 3 && !strcmp(buf + i + al - 3, ".py"))
            snprintf(main_path, sizeof main_path, "%s%s%s", buf[i] == '/' ? "" : cwd,
                     buf[i] == '/' ? "" : "/", buf + i);
    }
    if (!main_path[0]) snprintf(main_path, sizeof main_path, "process %d", (int)pid);
    profile_set_str(&p->meta.program, main_path);
}

/* The owner of the target when root attaches to another user's process:
 * 1 with *uid, *gid (what the socket and the 3.14+ script are handed to),
 * else 0 (ours already: nothing to hand over) */
static int other_owner(pid_t pid, uid_t *uid, gid_t *gid)
{
    struct stat st;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/%d", (int)pid);
    if (geteuid() != 0 || stat(proc, &st) != 0 || st.st_uid == 0) return 0;
    *uid = st.st_uid;
    *gid = st.st_gid;
    return 1;
}

/* fd (borrowed) gets all of buf's len bytes: 0 or -1 */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* The private folder (0700, ours) with the socket, and the script: 3.14+'s
 * agent.py in that folder (the target opens it), or gdb's commands in a
 * memfd that gdb reads as /proc/self/fd/3 (spawn_gdb). When root attaches
 * to another user's process, that user must connect to the socket and
 * read agent.py: those two files are chowned to it, and the folder, still
 * root's, becomes 0711 (reach the names, never create, rename or remove
 * one). Nothing root's gdb reads is anywhere that user can write: the
 * folder was once handed over whole with gdb's script in it, and a user
 * who renamed its own file over inject.gdb before gdb read it ran its
 * commands as root. */
static int setup(struct am *a, const struct inject_target *t, const char *agent_dir)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base || strlen(base) > 80) base = "/tmp";
    snprintf(a->dir, sizeof a->dir, "%s/hotline-attach-XXXXXX", base);
    if (!mkdtemp(a->dir)) {
        fail(a, 1, "cannot create a private directory: %s", strerror(errno));
        a->dir[0] = 0;
        return -1;
    }
    snprintf(a->sockpath, sizeof a->sockpath, "%s/agent.sock", a->dir);
    if (a->rexec)
        snprintf(a->script, sizeof a->script, "%s/agent.py", a->dir);
    else /* the memfd, as gdb sees it (spawn_gdb puts it at 3) */
        snprintf(a->script, sizeof a->script, "/proc/self/fd/3");
    struct agentsock_cbs cbs = {
        .on_accept = on_accept, .on_hello = on_hello, .on_error = on_error, .on_gone = on_gone};
    char err[256];
    if (a->o->connect) {
        if (relay_listen(a)) return -1;
    } else if (agentsock_listen(&a->loop, &a->sock, a->sockpath, &cbs, a, err, sizeof err)) {
        fail(a, 1, "%s", err);
        return -1;
    } else {
        a->sock_open = 1;
    }
    /* gdb writes the code into one page; 3.14+ reads it from a file */
    size_t max = a->rexec ? REXEC_CODE_MAX : INJECT_CODE_MAX, need = 0;
    char *config = agent_config(a->o), *code = malloc(REXEC_CODE_MAX + 1);
    int rc = config && code
                 ? python_code(code, REXEC_CODE_MAX + 1, max, agent_dir, a->sockpath, config, &need)
                 : -ENOMEM;
    free(config);
    if (rc) {
        char msg[400];
        if (rc == -ENOMEM)
            snprintf(msg, sizeof msg, "out of memory");
        else if (a->o->ninclude || a->o->nexclude)
            snprintf(msg, sizeof msg,
                     "the --include / --exclude patterns do not fit in the code injected into "
                     "the target: %zu bytes with them, at most %zu%s (they travel hex-encoded: "
                     "each pattern's byte counts twice); use fewer or shorter patterns",
                     need, max,
                     a->rexec ? "" : " (gdb writes it into one 4 KiB page of the target)");
        else
            snprintf(msg, sizeof msg,
                     "the agent's path is too long for the injected code (%zu bytes, at most %zu)",
                     need, max);
        free(code);
        fail(a, rc == -E2BIG && (a->o->ninclude || a->o->nexclude) ? 2 : 1, "%s", msg);
        return -1;
    }
    /* 3.14+: the Python itself is the script the target reads; else gdb's
     * script that queues it */
    char *script = a->rexec ? code : malloc(INJECT_SCRIPT_MAX);
    int len = -ENOMEM;
    if (script)
        len = a->rexec ? (int)strlen(script) : inject_script(t, code, script, INJECT_SCRIPT_MAX);
    int fd = -1;
    if (len > 0 && a->rexec)
        fd = open(a->script, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    else if (len > 0)
        fd = a->script_fd = memfd_create("hotline-inject.gdb", MFD_CLOEXEC);
    int ok = fd >= 0 && write_all(fd, script, (size_t)len) == 0;
    if (fd >= 0 && a->rexec && close(fd)) ok = 0;
    free(script);
    if (script != code) free(code);
    if (!ok) {
        fail(a, 1, "cannot write %s", a->rexec ? a->script : "gdb's script (a memfd)");
        return -1;
    }
    uid_t uid;
    gid_t gid;
    if (other_owner(t->pid, &uid, &gid) &&
        (chown(a->sockpath, uid, gid) || (a->rexec && chown(a->script, uid, gid)) ||
         chmod(a->dir, 0711))) {
        fail(a, 1, "cannot hand the socket to the target's user: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* 3.14+: the request (remote_exec.h); the agent then connects */
static int send_request(struct am *a)
{
    int rc = rexec_send(&a->rx, a->script);
    if (getenv("HOTLINE_ATTACH_DEBUG"))
        fprintf(stderr,
                "hotline: PEP 768: tstate %#llx, path at %#llx, pending at %#llx, "
                "eval_breaker at %#llx | %#llx: %d\n",
                (unsigned long long)a->rx.tstate, (unsigned long long)a->rx.path,
                (unsigned long long)a->rx.pending, (unsigned long long)a->rx.eval_breaker,
                (unsigned long long)a->rx.stop_bit, rc);
    if (rc == -EPERM) {
        char why[400];
        attach__perm_message(a->o->pid, why, sizeof why);
        fail(a, 6, "%s", why);
        return -1;
    }
    if (rc) {
        /* a write that failed part-way: take back what may be there */
        int w = rexec_withdraw(&a->rx);
        char msg[300];
        snprintf(msg, sizeof msg, "%s (%s); %s", "writing the request failed", strerror(-rc),
                 w >= 0 ? "the target is unchanged" : "it may be left half-written");
        fail(a, rc == -ESRCH ? 3 : AM_EXIT_INJECT, "%s", msg);
        return -1;
    }
    a->phase = PH_WAIT;
    timer_in(a, a->timeout_s, on_conn_timeout);
    return 0;
}

static int spawn_gdb(struct am *a, const char *gdb)
{
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)a->o->pid);
    /* no symbols, no debug info, no scripts of its own: addresses are ours */
    char *args[] = {(char *)gdb,
                    "-nx",
                    "-batch",
                    "-iex",
                    "set auto-load off",
                    "-iex",
                    "set auto-solib-add off",
                    "-iex",
                    "set debuginfod enabled off",
                    "-iex",
                    "set debug-file-directory /nonexistent",
                    "-p",
                    pid,
                    "-x",
                    a->script, /* the memfd (setup), at 3 below */
                    NULL};
    /* stdout and stderr both into one pipe: its lines in order */
    int fds[2];
    if (pipe2(fds, O_CLOEXEC)) {
        fail(a, 1, "cannot make a pipe: %s", strerror(errno));
        return -1;
    }
    uv_pipe_init(&a->loop, &a->gdb_out, 0);
    a->gdb_out.data = a;
    uv_pipe_open(&a->gdb_out, fds[0]);
    a->out_open = 1;
    uv_stdio_container_t io[4];
    io[0].flags = UV_IGNORE;
    io[1].flags = io[2].flags = io[3].flags = UV_INHERIT_FD;
    io[1].data.fd = io[2].data.fd = fds[1];
    io[3].data.fd = a->script_fd;
    uv_process_options_t po;
    memset(&po, 0, sizeof po);
    po.file = gdb;
    po.args = args;
    po.exit_cb = on_gdb_exit;
    po.stdio_count = 4;
    po.stdio = io;
    /* gdb gets a session of its own: a Ctrl-C in our terminal must not
     * reach it. A SIGINT at the wrong moment (in its attach or its script)
     * made gdb quit with status 1 and the target die of a breakpoint left
     * in it (ctrl_c_while_waiting, 2 runs in 5 on 3.12 when gdb shared our
     * process group). Our SIGINT handler ends the wait the safe way instead
     * (on_signal: give_up_wait's SIGURG); if we die, gdb still finishes
     * at the target's next safe point, and the queued call finds no socket
     * and does nothing. */
    po.flags = UV_PROCESS_DETACHED;
    a->gdb.data = a;
    int rc = uv_spawn(&a->loop, &a->gdb, &po);
    close(fds[1]); /* gdb has its copy: EOF when it exits */
    if (rc) {
        uv_close((uv_handle_t *)&a->gdb, NULL);
        uv_close((uv_handle_t *)&a->gdb_out, NULL);
        a->out_open = 0;
        fail(a, AM_EXIT_INJECT, "cannot start gdb: %s", uv_strerror(rc));
        return -1;
    }
    a->gdb_running = 1;
    uv_read_start((uv_stream_t *)&a->gdb_out, gdb_alloc, gdb_read);
    timer_in(a, a->timeout_s, on_gdb_timeout);
    return 0;
}

/* 3.14+: where the PEP 768 request goes (rx), or the exit status with the
 * reason printed (remote debugging off: AM_EXIT_INJECT, nothing written) */
static int find_rexec(pid_t pid, struct rexec *rx)
{
    struct attach_proc ap;
    char why[640] = "", safe_why[TERMSAFE_SIZE(640)]; /* why names the target's files */
    int rc = attach_open(&ap, pid, why, sizeof why);
    if (!rc) rc = rexec_find(&ap, rx, why, sizeof why);
    attach_close(&ap);
    if (!rc) return 0;
    fprintf(stderr, "hotline attach: %s\n", termsafe_str(safe_why, sizeof safe_why, why));
    if (rc == -ESRCH) return 3;
    if (rc == ATTACH_ENOTPY) return 4;
    if (rc == ATTACH_EVERSION) return 5;
    if (rc == -EPERM || rc == -EACCES) return 6;
    /* turned off, or no main thread yet: nothing was written */
    return rc == REXEC_EDISABLED || rc == ATTACH_ERACE ? AM_EXIT_INJECT : 1;
}

/* A stopped target runs no queued call and takes no request until it is
 * continued: attach would wait out its timeout and then blame the target.
 * Said before anything touches it: 0, or the exit status with the reason
 * printed. */
static int refuse_stopped(pid_t pid)
{
    char st = procfs_state(NULL, pid);
    if (st == 'T') {
        fprintf(stderr,
                "hotline attach: process %d is stopped (state T in /proc/%d/stat: SIGSTOP, or "
                "Ctrl-Z in its terminal): it would run none of the agent's loading until "
                "continued. Nothing was done; continue it (kill -CONT %d or fg) and attach "
                "again\n",
                (int)pid, (int)pid, (int)pid);
        return AM_EXIT_STOPPED;
    }
    if (st != 't') return 0;
    char path[64], line[256];
    long tracer = 0;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "TracerPid: %ld", &tracer) == 1) break;
    if (f) fclose(f);
    fprintf(stderr,
            "hotline attach: process %d is stopped under a debugger (state t: tracing stop, "
            "traced by process %ld): it runs nothing, and no second debugger may attach, "
            "until that one lets it go. Nothing was done\n",
            (int)pid, tracer);
    return AM_EXIT_STOPPED;
}

int cmd_attach_memory(const struct attach_mem_opts *o)
{
    struct inject_target t;
    char why[512] = "", safe_why[TERMSAFE_SIZE(512)];
    int rc = inject_find(o->pid, &t, why, sizeof why);
    if (rc) {
        fprintf(stderr, "hotline attach: %s\n", termsafe_str(safe_why, sizeof safe_why, why));
        return rc == -ESRCH ? 3 : rc == ATTACH_ENOTPY ? 4 : rc == -EPERM ? 6 : 1;
    }
    if (t.major != 3 || t.minor < 9) {
        fprintf(stderr, "hotline attach: process %d runs Python %s: --memory needs 3.9 or later\n",
                (int)o->pid, t.version);
        return 5;
    }
    if ((rc = refuse_stopped(o->pid)) != 0) return rc;
    char agent_dir[PATH_MAX + 64], real[PATH_MAX], have[128];
    if (session_agent_dir(agent_dir, sizeof agent_dir) || !realpath(agent_dir, real)) {
        fprintf(stderr,
                "hotline attach: the profiler agent was not found (looked in %s); set "
                "HOTLINE_AGENT_PATH\n",
                agent_dir);
        return 1;
    }
    if (!have_build(real, t.minor, have, sizeof have)) {
        fprintf(stderr,
                "hotline attach: no agent built for Python 3.%d (process %d runs %s) in %s/hotline "
                "(built for: %s); build Hotline with that interpreter (HOTLINE_PYTHONS)\n",
                t.minor, (int)o->pid, t.version, real, have[0] ? have : "none");
        return 5;
    }
    /* 3.14+: PEP 768, refused here when the target turned it off */
    struct rexec rx;
    if (t.minor >= 14 && (rc = find_rexec(o->pid, &rx)) != 0) return rc;
    char gdb[PATH_MAX] = "";
    if (t.minor < 14 && find_gdb(gdb, sizeof gdb)) {
        fprintf(stderr,
                "hotline attach: --memory needs gdb, which is not installed%s%s (Debian/Ubuntu: "
                "apt-get install gdb); the target is unchanged\n",
                getenv("HOTLINE_GDB") ? " at $HOTLINE_GDB=" : "",
                getenv("HOTLINE_GDB") ? getenv("HOTLINE_GDB") : "");
        return AM_EXIT_INJECT;
    }
    struct am *a = calloc(1, sizeof *a);
    if (!a) return 1;
    a->o = o;
    a->script_fd = -1;
    a->rexec = t.minor >= 14;
    if (a->rexec) a->rx = rx;
    const char *to = getenv("HOTLINE_INJECT_TIMEOUT");
    a->timeout_s = to && atof(to) > 0 ? atof(to) : AM_TIMEOUT_S;
    snprintf(a->reason, sizeof a->reason, "detached");
    a->p = profile_new();
    if (!a->p || uv_loop_init(&a->loop)) {
        profile_free(a->p);
        free(a);
        return 1;
    }
    uv_timer_init(&a->loop, &a->timer);
    a->timer.data = a;
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
        uv_signal_init(&a->loop, &a->sigs[i]);
        a->sigs[i].data = a;
        uv_signal_start(&a->sigs[i], on_signal, sigs[i]);
    }
    set_program(a->p, o->pid);
    if (o->interval_ms > 0) a->p->meta.interval_ms = o->interval_ms;
    /* --connect: the server first, so that nothing is done to the
     * target when nobody listens there */
    if (o->connect && relay_connect(a) != 0) {
        close_all(a);
    } else if (a->rexec) {
        if (setup(a, &t, real) == 0) {
            fprintf(stderr,
                    "hotline: --memory: PEP 768 (what sys.remote_exec does; no gdb, nothing "
                    "stopped): writes into process %d (Python %s) its main thread's "
                    "debugger_script_path (%s), debugger_pending_call = 1 and a bit of its "
                    "eval_breaker; at its next bytecode check it runs that script, which loads "
                    "Hotline's agent from %s (memory hooks and a sampler thread, removed on "
                    "detach; docs/attach.md)\n",
                    (int)o->pid, t.version, a->script, real);
            if (send_request(a)) close_all(a);
        } else {
            close_all(a);
        }
    } else if (setup(a, &t, real) == 0) { /* (it touches no target: it may refuse first) */
        fprintf(stderr,
                "hotline: --memory: gdb (%s) stops process %d (Python %s) at its next allocator "
                "call, maps one 4 KiB page in it and queues a call that loads Hotline's agent "
                "from %s (memory hooks and a sampler thread, removed on detach; "
                "docs/attach.md)\n",
                gdb, (int)o->pid, t.version, real);
        if (spawn_gdb(a, gdb) == 0)
            a->phase = PH_GDB;
        else
            close_all(a);
    } else {
        close_all(a);
    }
    uv_run(&a->loop, UV_RUN_DEFAULT);
    /* close what is left (all but the timer and signals are closed by now) */
    uv_close((uv_handle_t *)&a->timer, NULL);
    for (int i = 0; i < 3; i++)
        uv_close((uv_handle_t *)&a->sigs[i], NULL);
    if (a->out_open && !uv_is_closing((uv_handle_t *)&a->gdb_out))
        uv_close((uv_handle_t *)&a->gdb_out, NULL);
    uv_run(&a->loop, UV_RUN_DEFAULT);
    uv_loop_close(&a->loop);
    if (a->script_fd >= 0) close(a->script_fd);
    if (a->rexec && a->script[0]) unlink(a->script);
    if (a->sockpath[0]) unlink(a->sockpath);
    if (a->dir[0]) rmdir(a->dir);
    int status = a->status;
    if (status == 0 && a->conns > 0 && o->connect) {
        fprintf(stderr, "hotline: %s\n", a->reason); /* the server has the rest */
    } else if (status == 0 && a->conns > 0) {
        struct prof_meta *m = &a->p->meta;
        m->elapsed_s = mono() - a->t0;
        m->exit_status = -1;
        profile_set_str(&m->reason, a->reason);
        fprintf(stderr, "hotline: %s\n", a->reason);
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
        fputc('\n', stderr);
        report_print(stderr, a->p, o->top, cwd);
        if (cli_outputs_write(o->outs, a->p, "hotline", 0)) status = 1;
    } else if (status == 0) {
        status = 1;
    }
    profile_free(a->p);
    free(a);
    return status;
}
