/* tcpgate: TCP connections of remote agents, checked for the token, then
 * bridged to the run's Unix socket (tcpgate.h). A connection's life:
 *   TOKEN:   read at most the token line (timer running); wrong: log, close
 *   CONNECT: reads paused, the bytes after the line kept, connect the pipe
 *   BRIDGE:  both ways, each direction paused while its queue is full
 *   closing: every handle closed, freed by the last close callback */
#include "proc/tcpgate.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

enum { GATE_TOKEN, GATE_CONNECT, GATE_BRIDGE };

struct tcpgate_conn {
    uv_tcp_t tcp;
    uv_pipe_t pipe;
    uv_timer_t timer;
    uv_connect_t creq;
    struct tcpgate *g;
    struct tcpgate_conn *next;
    int state, closing, closes_left;
    char line[TCPGATE_TOKEN_LINE_MAX + 1];
    size_t nline;
    char *early; /* what followed the token line in its read, sent once connected */
    size_t nearly;
    size_t queued[2]; /* bytes waiting: [0] toward the pipe, [1] toward the TCP peer */
    int paused[2];    /* reading of the source of that direction stopped */
    char peer[64];
};

struct gate_write {
    uv_write_t req;
    struct tcpgate_conn *c;
    int dir;
    size_t len;
    char data[];
};

static void gate_log(struct tcpgate *g, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (g->log && !g->closing) g->log(msg, g->ud);
}

static void check_closed(struct tcpgate *g)
{
    if (g->closing && g->pending_closes == 0 && g->on_closed) {
        void (*done)(struct tcpgate *) = g->on_closed;
        g->on_closed = NULL;
        done(g);
    }
}

static void handle_closed(uv_handle_t *h)
{
    struct tcpgate_conn *c = h->data;
    if (--c->closes_left) return;
    struct tcpgate *g = c->g;
    for (struct tcpgate_conn **pp = &g->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    free(c->early);
    free(c);
    g->pending_closes--;
    check_closed(g);
}

static void conn_close(struct tcpgate_conn *c)
{
    if (c->closing) return;
    c->closing = 1;
    c->g->nconns--;
    c->g->pending_closes++;
    c->closes_left = 3;
    uv_close((uv_handle_t *)&c->tcp, handle_closed);
    uv_close((uv_handle_t *)&c->pipe, handle_closed);
    uv_close((uv_handle_t *)&c->timer, handle_closed);
}

static void alloc_buf(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)h;
    if (hint > 65536) hint = 65536;
    buf->base = malloc(hint);
    buf->len = buf->base ? hint : 0;
}

static uv_stream_t *dir_source(struct tcpgate_conn *c, int dir)
{
    return dir == 0 ? (uv_stream_t *)&c->tcp : (uv_stream_t *)&c->pipe;
}

static void on_tcp_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void on_pipe_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void resume(struct tcpgate_conn *c, int dir)
{
    if (!c->paused[dir] || c->closing) return;
    c->paused[dir] = 0;
    if (uv_read_start(dir_source(c, dir), alloc_buf, dir == 0 ? on_tcp_read : on_pipe_read))
        conn_close(c);
}

static void write_done(uv_write_t *req, int status)
{
    struct gate_write *w = (struct gate_write *)req;
    struct tcpgate_conn *c = w->c;
    c->queued[w->dir] -= w->len;
    free(w);
    if (c->closing) return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    for (int d = 0; d < 2; d++)
        if (c->queued[d] <= TCPGATE_MAX_QUEUED / 2) resume(c, d);
}

/* Queue len bytes in direction dir (0: to the pipe, 1: to the TCP peer);
 * pause that direction's source while its queue is over the bound. */
static void forward(struct tcpgate_conn *c, int dir, const char *data, size_t len)
{
    if (!len || c->closing) return;
    struct gate_write *w = malloc(sizeof *w + len);
    if (!w) {
        conn_close(c);
        return;
    }
    w->c = c;
    w->dir = dir;
    w->len = len;
    memcpy(w->data, data, len);
    uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
    uv_stream_t *dst = dir == 0 ? (uv_stream_t *)&c->pipe : (uv_stream_t *)&c->tcp;
    if (uv_write(&w->req, dst, &b, 1, write_done)) {
        free(w);
        conn_close(c);
        return;
    }
    c->queued[dir] += len;
    if (c->queued[dir] > TCPGATE_MAX_QUEUED && !c->paused[dir]) {
        c->paused[dir] = 1;
        uv_read_stop(dir_source(c, dir));
    }
}

static void on_pipe_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct tcpgate_conn *c = s->data;
    if (nread < 0)
        conn_close(c); /* the session closed the agent's connection */
    else if (nread > 0)
        forward(c, 1, buf->base, (size_t)nread);
    free(buf->base);
}

static void on_pipe_connected(uv_connect_t *req, int status)
{
    struct tcpgate_conn *c = req->data;
    if (c->closing) return;
    if (status < 0) {
        gate_log(c->g, "TCP agent from %s: cannot reach %s: %s", c->peer, c->g->target,
                 uv_strerror(status));
        conn_close(c);
        return;
    }
    c->state = GATE_BRIDGE;
    forward(c, 0, c->early, c->nearly);
    free(c->early);
    c->early = NULL;
    c->nearly = 0;
    if (uv_read_start((uv_stream_t *)&c->pipe, alloc_buf, on_pipe_read)) {
        conn_close(c);
        return;
    }
    c->paused[0] = 1;
    resume(c, 0);
}

static int token_ok(const struct tcpgate *g, const char *line, size_t n)
{
    size_t plen = strlen(TCPGATE_TOKEN_PREFIX);
    if (n != plen + 64 || memcmp(line, TCPGATE_TOKEN_PREFIX, plen)) return 0;
    unsigned char diff = 0;
    for (size_t i = 0; i < 64; i++)
        diff |= (unsigned char)(line[plen + i] ^ g->token[i]);
    return diff == 0;
}

/* The token line is complete (n bytes, no '\n'); rest: what followed it. */
static void token_line(struct tcpgate_conn *c, size_t n, const char *rest, size_t nrest)
{
    struct tcpgate *g = c->g;
    uv_timer_stop(&c->timer);
    if (!token_ok(g, c->line, n)) {
        gate_log(g, "refused a TCP agent connection from %s: wrong token", c->peer);
        conn_close(c);
        return;
    }
    if (!g->target[0]) {
        gate_log(g, "TCP agent from %s: no run to connect it to yet", c->peer);
        conn_close(c);
        return;
    }
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->state = GATE_CONNECT;
    if (nrest) {
        c->early = malloc(nrest);
        if (!c->early) {
            conn_close(c);
            return;
        }
        memcpy(c->early, rest, nrest);
        c->nearly = nrest;
    }
    c->creq.data = c;
    uv_pipe_connect(&c->creq, &c->pipe, g->target, on_pipe_connected);
}

static void on_tcp_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct tcpgate_conn *c = s->data;
    if (nread < 0) {
        if (c->state == GATE_TOKEN)
            gate_log(c->g, "refused a TCP agent connection from %s: closed before its token",
                     c->peer);
        conn_close(c);
    } else if (nread > 0 && c->state == GATE_BRIDGE) {
        forward(c, 0, buf->base, (size_t)nread);
    } else if (nread > 0 && c->state == GATE_TOKEN) {
        const char *nl = memchr(buf->base, '\n', (size_t)nread);
        size_t take = nl ? (size_t)(nl - buf->base) : (size_t)nread;
        if (c->nline + take > TCPGATE_TOKEN_LINE_MAX) {
            gate_log(c->g, "refused a TCP agent connection from %s: no token line", c->peer);
            conn_close(c);
        } else {
            memcpy(c->line + c->nline, buf->base, take);
            c->nline += take;
            if (nl) token_line(c, c->nline, nl + 1, (size_t)(buf->base + nread - (nl + 1)));
        }
    }
    free(buf->base);
}

static void on_token_timeout(uv_timer_t *t)
{
    struct tcpgate_conn *c = t->data;
    gate_log(c->g, "refused a TCP agent connection from %s: no token within %d s", c->peer,
             TCPGATE_TOKEN_TIMEOUT_MS / 1000);
    conn_close(c);
}

static void peer_name(uv_tcp_t *t, char *out, size_t n)
{
    struct sockaddr_storage sa;
    int len = sizeof sa;
    char ip[64] = "?";
    int port = 0;
    if (!uv_tcp_getpeername(t, (struct sockaddr *)&sa, &len)) {
        if (sa.ss_family == AF_INET) {
            uv_ip4_name((struct sockaddr_in *)&sa, ip, sizeof ip);
            port = ntohs(((struct sockaddr_in *)&sa)->sin_port);
        } else if (sa.ss_family == AF_INET6) {
            uv_ip6_name((struct sockaddr_in6 *)&sa, ip, sizeof ip);
            port = ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
        }
    }
    snprintf(out, n, "%s:%d", ip, port);
}

static void on_connection(uv_stream_t *srv, int status)
{
    struct tcpgate *g = srv->data;
    if (status < 0 || g->closing) return;
    struct tcpgate_conn *c = calloc(1, sizeof *c);
    if (!c) return;
    c->g = g;
    uv_tcp_init(g->loop, &c->tcp);
    uv_pipe_init(g->loop, &c->pipe, 0);
    uv_timer_init(g->loop, &c->timer);
    c->tcp.data = c->pipe.data = c->timer.data = c;
    c->next = g->conns;
    g->conns = c;
    g->nconns++;
    if (uv_accept(srv, (uv_stream_t *)&c->tcp)) {
        conn_close(c);
        return;
    }
    peer_name(&c->tcp, c->peer, sizeof c->peer);
    if (g->nconns > TCPGATE_MAX_CONNS) {
        gate_log(g, "refused a TCP agent connection from %s: %d at once already", c->peer,
                 TCPGATE_MAX_CONNS);
        conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    uv_timer_start(&c->timer, on_token_timeout, TCPGATE_TOKEN_TIMEOUT_MS, 0);
    if (uv_read_start((uv_stream_t *)&c->tcp, alloc_buf, on_tcp_read)) conn_close(c);
}

static int new_token(char out[65], char *err, size_t n)
{
    unsigned char r[32];
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t k = getrandom(r + got, sizeof r - got, 0);
        if (k < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            snprintf(err, n, "no random token: %s", strerror(e));
            return -e;
        }
        got += (size_t)k;
    }
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    return 0;
}

int tcpgate_listen(uv_loop_t *loop, struct tcpgate *g, const char *hostport,
                   void (*log)(const char *msg, void *ud), void *ud, char *err, size_t n)
{
    memset(g, 0, sizeof *g);
    g->loop = loop;
    g->log = log;
    g->ud = ud;
    char host[64];
    const char *colon = strrchr(hostport, ':');
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    size_t hl = colon ? (size_t)(colon - hostport) : 0;
    if (!colon || !colon[1] || *end || port < 0 || port > 65535 || hl == 0 || hl >= sizeof host) {
        snprintf(err, n, "'%s' is not HOST:PORT (for example 127.0.0.1:7531)", hostport);
        return -EINVAL;
    }
    memcpy(host, hostport, hl);
    host[hl] = 0;
    struct sockaddr_storage sa;
    int rc;
    if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
        host[hl - 1] = 0;
        rc = uv_ip6_addr(host + 1, (int)port, (struct sockaddr_in6 *)&sa);
    } else {
        rc = uv_ip4_addr(host, (int)port, (struct sockaddr_in *)&sa);
    }
    if (rc) {
        snprintf(err, n, "'%s': the host must be an IP address (%s)", hostport, uv_strerror(rc));
        return rc;
    }
    rc = new_token(g->token, err, n);
    if (rc) return rc;
    rc = uv_tcp_init(loop, &g->listener);
    if (rc) {
        snprintf(err, n, "cannot listen on %s: %s", hostport, uv_strerror(rc));
        return rc;
    }
    g->listener.data = g;
    rc = uv_tcp_bind(&g->listener, (struct sockaddr *)&sa, 0);
    if (!rc) rc = uv_listen((uv_stream_t *)&g->listener, 64, on_connection);
    if (rc) {
        snprintf(err, n, "cannot listen on %s: %s", hostport, uv_strerror(rc));
        uv_close((uv_handle_t *)&g->listener, NULL);
        return rc;
    }
    int len = sizeof sa;
    uv_tcp_getsockname(&g->listener, (struct sockaddr *)&sa, &len);
    int bound = sa.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&sa)->sin6_port)
                                         : ntohs(((struct sockaddr_in *)&sa)->sin_port);
    snprintf(g->addr, sizeof g->addr, "%.*s:%d", (int)hl, hostport, bound);
    g->listening = 1;
    return 0;
}

void tcpgate_set_target(struct tcpgate *g, const char *unix_path)
{
    snprintf(g->target, sizeof g->target, "%s", unix_path);
}

static void listener_closed(uv_handle_t *h)
{
    struct tcpgate *g = h->data;
    g->pending_closes--;
    check_closed(g);
}

void tcpgate_close(struct tcpgate *g, void (*on_closed)(struct tcpgate *))
{
    g->on_closed = on_closed;
    if (g->closing) return;
    g->closing = 1;
    g->pending_closes++; /* guard */
    for (struct tcpgate_conn *c = g->conns; c; c = c->next)
        conn_close(c);
    if (g->listening) {
        g->listening = 0;
        g->pending_closes++;
        uv_close((uv_handle_t *)&g->listener, listener_closed);
    }
    g->pending_closes--;
    check_closed(g);
}
