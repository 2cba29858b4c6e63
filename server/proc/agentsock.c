/* agentsock: agents that connect on their own (agentsock.h). Lifecycle:
 *   listen: check the path, bind, chmod 0600, listen
 *   run:    accept (the owner names the store), decode lines, ask for `now`
 *   drop:   the store goes: close every connection, keep listening
 *   close:  close everything, unlink the socket, on_closed
 * The decoding is the one a run's connections use (proc/session.c). */
#include "proc/agentsock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent_wire.h"
#include "proc/agentconn.h"

struct agentsock_conn {
    struct agentconn ac; /* first member: handle -> conn; ac.pc NULL once dropped */
    struct agentsock *a;
    struct agentsock_conn *next;
};

static void report(struct agentsock *a, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (a->cb.on_error && !a->closing) a->cb.on_error(a, msg, a->ud);
}

static void check_closed(struct agentsock *a)
{
    if (a->closing && a->pending_closes == 0 && a->on_closed) {
        void (*done)(struct agentsock *) = a->on_closed;
        a->on_closed = NULL;
        done(a);
    }
}

/* ---- connections ---------------------------------------------------------- */

static void conn_closed(uv_handle_t *h)
{
    struct agentsock_conn *c = (struct agentsock_conn *)h;
    struct agentsock *a = c->a;
    for (struct agentsock_conn **pp = &a->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    agentconn_release(&c->ac);
    free(c);
    a->pending_closes--;
    check_closed(a);
}

static void conn_close(struct agentsock_conn *c)
{
    if (c->ac.closing) return;
    struct agentsock *a = c->a;
    c->ac.closing = 1;
    a->nconns--;
    a->pending_closes++;
    uv_close((uv_handle_t *)&c->ac.h, conn_closed);
    if (a->cb.on_gone && !a->closing) a->cb.on_gone(a, c->ac.pid, a->ud);
}

/* What a message means here (agentconn applied it to the store). */
static void conn_message(struct agentconn *ac, const struct agent_msg *m)
{
    struct agentsock_conn *c = (struct agentsock_conn *)ac;
    struct agentsock *a = c->a;
    if (a->closing) return;
    switch (m->type) {
    case AGENT_MSG_HELLO:
        if (a->cb.on_hello) a->cb.on_hello(a, ac->pid, a->ud);
        if (a->now_hz > 0) agentconn_send_now(ac, a->now_hz);
        break;
    case AGENT_MSG_DELTA:
        if (a->cb.on_delta) a->cb.on_delta(a, a->ud);
        break;
    case AGENT_MSG_NOW:
        if (a->cb.on_now) {
            json_t *now = profile_conn_resolve_now(ac->pc, m);
            if (now) a->cb.on_now(a, now, a->ud);
            json_decref(now);
        }
        break;
    case AGENT_MSG_ERROR:
        report(a, "agent (pid %lld) error: %s", ac->pid, m->u.text.msg);
        break;
    case AGENT_MSG_LOG:
        if (!strcmp(m->u.text.level, "warn") || !strcmp(m->u.text.level, "error"))
            report(a, "agent (pid %lld): %s", ac->pid, m->u.text.msg);
        break;
    case AGENT_MSG_CELL:
        if (a->cb.on_cell) a->cb.on_cell(a, m, a->ud);
        break;
    default:
        break;
    }
}

static void conn_report(struct agentconn *ac, const char *msg)
{
    report(((struct agentsock_conn *)ac)->a, "%s", msg);
}

static void conn_eof(struct agentconn *ac)
{
    conn_close((struct agentsock_conn *)ac); /* the process ended or stopped */
}

static const struct agentconn_ops conn_ops = {conn_report, conn_message, conn_eof};

static void on_connection(uv_stream_t *srv, int status)
{
    struct agentsock *a = srv->data;
    if (status < 0 || a->closing) return;
    struct agentsock_conn *c = calloc(1, sizeof *c);
    if (!c || agentconn_init(a->loop, &c->ac, &conn_ops, NULL)) {
        free(c);
        return;
    }
    c->a = a;
    c->ac.budget = &a->budget;
    c->next = a->conns;
    a->conns = c;
    a->nconns++;
    if (uv_accept(srv, (uv_stream_t *)&c->ac.h)) {
        conn_close(c);
        return;
    }
    struct profile *store = NULL;
    if (a->nconns > AGENTSOCK_MAX_CONNS)
        report(a, "more than %d agents at once: one refused", AGENTSOCK_MAX_CONNS);
    else
        store = a->cb.on_accept ? a->cb.on_accept(a, a->ud) : NULL;
    c->ac.pc = store ? profile_conn_new(store) : NULL;
    profile_conn_live(c->ac.pc);
    if (!c->ac.pc || agentconn_read_start(&c->ac)) conn_close(c);
}

/* ---- the listener ------------------------------------------------------------ */

/* 0 when nothing is at path (any more); else why it cannot be ours. */
static int check_path(const char *path, char *err, size_t n)
{
    struct stat st;
    if (lstat(path, &st)) {
        if (errno == ENOENT) return 0;
        int e = errno;
        snprintf(err, n, "%s: %s", path, strerror(e));
        return -e;
    }
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, n, "%s is a symbolic link: refused (not followed, not removed)", path);
        return -ELOOP;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, n, "%s exists and is not a socket: refused (not removed)", path);
        return -ENOTSOCK;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, n, "%s belongs to uid %u, not to us: refused", path, (unsigned)st.st_uid);
        return -EPERM;
    }
    /* ours: live (another server of this workspace) or stale (one that died) */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        snprintf(err, n, "socket: %s", strerror(e));
        return -e;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int live = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    if (live) {
        snprintf(err, n, "%s: another hotline server of this workspace listens there", path);
        return -EADDRINUSE;
    }
    if (unlink(path) && errno != ENOENT) {
        int e = errno;
        snprintf(err, n, "cannot remove the stale %s: %s", path, strerror(e));
        return -e;
    }
    return 0;
}

int agentsock_listen(uv_loop_t *loop, struct agentsock *a, const char *path,
                     const struct agentsock_cbs *cb, void *ud, char *err, size_t n)
{
    memset(a, 0, sizeof *a);
    a->loop = loop;
    a->budget.max = AGENTSOCK_MAX_BUFFERED;
    a->cb = *cb;
    a->ud = ud;
    if (strlen(path) >= sizeof a->path) {
        snprintf(err, n, "%s: longer than a Unix socket path can be (%zu bytes)", path,
                 sizeof a->path - 1);
        return -ENAMETOOLONG;
    }
    snprintf(a->path, sizeof a->path, "%s", path);
    int rc = check_path(path, err, n);
    if (rc) return rc;
    rc = uv_pipe_init(loop, &a->listener, 0);
    if (rc) {
        snprintf(err, n, "cannot listen on %s: %s", path, uv_strerror(rc));
        return rc;
    }
    a->listener.data = a;
    rc = uv_pipe_bind(&a->listener, path);
    /* the folder is private already; the socket is too, before anyone may connect */
    if (!rc && chmod(path, 0600)) rc = -errno;
    if (!rc) rc = uv_listen((uv_stream_t *)&a->listener, 16, on_connection);
    if (rc) {
        snprintf(err, n, "cannot listen on %s: %s", path, uv_strerror(rc));
        struct stat st;
        if (rc != UV_EADDRINUSE && !lstat(path, &st) && S_ISSOCK(st.st_mode)) unlink(path);
        uv_close((uv_handle_t *)&a->listener, NULL); /* embedded: a outlives the loop turn */
        return rc;
    }
    a->listening = 1;
    return 0;
}

void agentsock_request_now(struct agentsock *a, int hz)
{
    a->now_hz = hz < 0 ? 0 : hz;
    for (struct agentsock_conn *c = a->conns; c; c = c->next)
        agentconn_send_now(&c->ac, a->now_hz);
}

void agentsock_release(struct agentsock *a)
{
    for (struct agentsock_conn *c = a->conns; c; c = c->next)
        if (!c->ac.closing) agentconn_send(&c->ac, "{\"t\":\"stop\"}");
}

void agentsock_drop(struct agentsock *a)
{
    for (struct agentsock_conn *c = a->conns; c; c = c->next) {
        profile_conn_free(c->ac.pc); /* now: the store it points into is going */
        c->ac.pc = NULL;
        conn_close(c);
    }
}

static void listener_closed(uv_handle_t *h)
{
    struct agentsock *a = h->data;
    a->pending_closes--;
    check_closed(a);
}

void agentsock_close(struct agentsock *a, void (*on_closed)(struct agentsock *))
{
    a->on_closed = on_closed;
    if (a->closing) return;
    a->closing = 1;
    a->pending_closes++; /* guard */
    for (struct agentsock_conn *c = a->conns; c; c = c->next)
        conn_close(c);
    if (a->listening) {
        a->listening = 0;
        unlink(a->path);
        a->pending_closes++;
        uv_close((uv_handle_t *)&a->listener, listener_closed);
    }
    a->pending_closes--;
    check_closed(a);
}
