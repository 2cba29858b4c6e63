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

struct agentsock_conn {
    uv_pipe_t h; /* first member: handle -> conn */
    struct agentsock *a;
    struct agent_reader rd;
    struct prof_conn *pc; /* NULL once dropped */
    struct agentsock_conn *next;
    long long pid;
    int closing, hello, warned;
};

struct write_req {
    uv_write_t req;
    char buf[]; /* the line and its newline */
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

static void on_write_done(uv_write_t *req, int status)
{
    (void)status;
    free(req->data);
}

static void conn_send(struct agentsock_conn *c, const char *line)
{
    size_t n = strlen(line);
    struct write_req *w = malloc(sizeof *w + n + 1);
    if (!w) return;
    memcpy(w->buf, line, n);
    w->buf[n] = '\n';
    uv_buf_t b = uv_buf_init(w->buf, (unsigned)(n + 1));
    w->req.data = w;
    if (uv_write(&w->req, (uv_stream_t *)&c->h, &b, 1, on_write_done)) free(w);
}

static void conn_closed(uv_handle_t *h)
{
    struct agentsock_conn *c = (struct agentsock_conn *)h;
    struct agentsock *a = c->a;
    for (struct agentsock_conn **pp = &a->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    agent_reader_free(&c->rd);
    profile_conn_free(c->pc);
    free(c);
    a->pending_closes--;
    check_closed(a);
}

static void conn_close(struct agentsock_conn *c)
{
    if (c->closing) return;
    struct agentsock *a = c->a;
    c->closing = 1;
    a->nconns--;
    a->pending_closes++;
    uv_close((uv_handle_t *)&c->h, conn_closed);
    if (a->cb.on_gone && !a->closing) a->cb.on_gone(a, c->pid, a->ud);
}

static void handle_msg(struct agentsock_conn *c, struct agent_msg *m)
{
    struct agentsock *a = c->a;
    if (!c->pc || a->closing) return; /* dropped: its store is gone */
    if (profile_conn_apply(c->pc, m) == -EPROTO && !c->warned) {
        c->warned = 1;
        report(a, "agent (pid %lld) used an undefined id; part of its data was dropped", c->pid);
    }
    switch (m->type) {
    case AGENT_MSG_HELLO:
        c->hello = 1;
        c->pid = m->u.hello.pid;
        if (m->u.hello.v != AGENT_WIRE_VERSION)
            report(a, "agent (pid %lld) speaks wire version %d, this hotline speaks %d", c->pid,
                   m->u.hello.v, AGENT_WIRE_VERSION);
        if (a->cb.on_hello) a->cb.on_hello(a, c->pid, a->ud);
        if (a->now_hz > 0) {
            char b[48];
            snprintf(b, sizeof b, "{\"t\":\"now\",\"hz\":%d}", a->now_hz);
            conn_send(c, b);
        }
        break;
    case AGENT_MSG_DELTA:
        if (a->cb.on_delta) a->cb.on_delta(a, a->ud);
        break;
    case AGENT_MSG_NOW:
        if (a->cb.on_now) {
            json_t *now = profile_conn_resolve_now(c->pc, m);
            if (now) a->cb.on_now(a, now, a->ud);
            json_decref(now);
        }
        break;
    case AGENT_MSG_ERROR:
        report(a, "agent (pid %lld) error: %s", c->pid, m->u.text.msg);
        break;
    case AGENT_MSG_LOG:
        if (!strcmp(m->u.text.level, "warn") || !strcmp(m->u.text.level, "error"))
            report(a, "agent (pid %lld): %s", c->pid, m->u.text.msg);
        break;
    default:
        break;
    }
}

static int on_line(void *ud, enum agent_line_status st, const char *line, size_t len)
{
    struct agentsock_conn *c = ud;
    if (st == AGENT_LINE_OVERSIZE) {
        report(c->a, "agent sent a %zu-byte line (over the %u-byte cap); dropped", len,
               AGENT_WIRE_MAX_LINE);
        return 0;
    }
    struct agent_msg m;
    char err[160];
    if (agent_msg_parse(line, len, &m, err, sizeof err)) {
        if (!c->warned) {
            c->warned = 1;
            report(c->a, "agent sent a bad message: %s", err);
        }
        return 0;
    }
    handle_msg(c, &m);
    agent_msg_clear(&m);
    return 0;
}

static void alloc_buf(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    (void)h, (void)hint;
    b->base = malloc(65536);
    b->len = b->base ? 65536 : 0;
}

static void conn_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct agentsock_conn *c = (struct agentsock_conn *)st;
    if (n > 0) {
        if (agent_reader_feed(&c->rd, b->base, (size_t)n, on_line, c) == -ENOMEM)
            report(c->a, "out of memory reading the agent stream");
    } else if (n < 0) {
        conn_close(c); /* EOF or error: the process ended or stopped */
    }
    free(b->base);
}

static void on_connection(uv_stream_t *srv, int status)
{
    struct agentsock *a = srv->data;
    if (status < 0 || a->closing) return;
    struct agentsock_conn *c = calloc(1, sizeof *c);
    if (!c || uv_pipe_init(a->loop, &c->h, 0)) {
        free(c);
        return;
    }
    c->a = a;
    agent_reader_init(&c->rd);
    c->next = a->conns;
    a->conns = c;
    a->nconns++;
    if (uv_accept(srv, (uv_stream_t *)&c->h)) {
        conn_close(c);
        return;
    }
    struct profile *store = NULL;
    if (a->nconns > AGENTSOCK_MAX_CONNS)
        report(a, "more than %d agents at once: one refused", AGENTSOCK_MAX_CONNS);
    else
        store = a->cb.on_accept ? a->cb.on_accept(a, a->ud) : NULL;
    c->pc = store ? profile_conn_new(store) : NULL;
    if (!c->pc || uv_read_start((uv_stream_t *)&c->h, alloc_buf, conn_read)) conn_close(c);
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
    char b[48];
    snprintf(b, sizeof b, "{\"t\":\"now\",\"hz\":%d}", a->now_hz);
    for (struct agentsock_conn *c = a->conns; c; c = c->next)
        if (c->hello && !c->closing) conn_send(c, b);
}

void agentsock_drop(struct agentsock *a)
{
    for (struct agentsock_conn *c = a->conns; c; c = c->next) {
        profile_conn_free(c->pc); /* now: the store it points into is going */
        c->pc = NULL;
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
