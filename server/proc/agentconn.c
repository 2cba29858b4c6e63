/* agentconn.c: see agentconn.h. */
#include "proc/agentconn.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGENTCONN_READ_BUF 65536
/* a reader with no unfinished line keeps at most this much buffer: the
 * memory of one big line goes back when it is done */
#define AGENTCONN_KEEP_BUF ((size_t)256 << 10)
/* freeing this much at once is worth giving back to the system */
#define AGENTCONN_TRIM_AT ((size_t)1 << 20)

struct write_req {
    uv_write_t req;
    char buf[]; /* the line and its newline, sized per write */
};

static void report(struct agentconn *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->ops->report(c, msg);
}

static int on_line(void *ud, enum agent_line_status st, const char *line, size_t len)
{
    struct agentconn *c = ud;
    if (st == AGENT_LINE_OVERSIZE) {
        report(c, "agent sent a %zu-byte line (over the %u-byte cap); dropped", len,
               AGENT_WIRE_MAX_LINE);
        return 0;
    }
    struct agent_msg m;
    char err[160];
    if (agent_msg_parse(line, len, &m, err, sizeof err)) {
        if (!c->warned) {
            c->warned = 1;
            report(c, "agent sent a bad message: %s", err);
        }
        return 0;
    }
    if (c->pc) {
        if (profile_conn_apply(c->pc, &m) == -EPROTO && !c->warned) {
            c->warned = 1;
            report(c, "agent (pid %lld) used an undefined id; part of its data was dropped",
                   profile_conn_pid(c->pc));
        }
        if (m.type == AGENT_MSG_HELLO) {
            c->hello = 1;
            c->pid = m.u.hello.pid;
            if (m.u.hello.v != AGENT_WIRE_VERSION)
                report(c, "agent (pid %lld) speaks wire version %d, this hotline speaks %d", c->pid,
                       m.u.hello.v, AGENT_WIRE_VERSION);
        }
        c->ops->message(c, &m);
    }
    agent_msg_clear(&m);
    return 0;
}

static void alloc_buf(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    (void)h, (void)hint;
    b->base = malloc(AGENTCONN_READ_BUF);
    b->len = b->base ? AGENTCONN_READ_BUF : 0;
}

/* The buffer the reader may grow to for n more bytes: what reader_append
 * would ask for when none of them ends the line (an upper bound). */
static size_t reader_need(const struct agent_reader *r, size_t n)
{
    size_t want = r->len + n, cap = r->cap ? r->cap : 4096;
    if (r->dropping || want <= r->cap) return r->cap;
    while (cap < want)
        cap *= 2;
    return cap > r->max_line + 1 ? r->max_line + 1 : cap;
}

/* Charge the budget what the reader holds now. */
static void charge(struct agentconn *c)
{
    if (!c->budget) return;
    c->budget->used = c->budget->used - c->charged + c->rd.cap;
    c->charged = c->rd.cap;
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct agentconn *c = (struct agentconn *)st;
    if (n > 0 && c->over) {
        ; /* refused already: its owner closes it */
    } else if (n > 0 && c->budget &&
               c->budget->used - c->charged + reader_need(&c->rd, (size_t)n) > c->budget->max) {
        c->over = 1;
        uv_read_stop(st);
        char who[48] = "an agent";
        if (c->pid) snprintf(who, sizeof who, "the agent of pid %lld", c->pid);
        report(c,
               "%s: connection closed: its unfinished %zu-byte line would take what the "
               "agents' lines hold together past %zu MB",
               who, c->rd.len + (size_t)n, c->budget->max >> 20);
        size_t held = c->rd.cap;
        agent_reader_free(&c->rd); /* give it back now, not at the close */
        charge(c);
        if (held >= AGENTCONN_TRIM_AT) malloc_trim(0);
        c->ops->eof(c);
    } else if (n > 0) {
        if (agent_reader_feed(&c->rd, b->base, (size_t)n, on_line, c) == -ENOMEM)
            report(c, "out of memory reading the agent stream");
        if (!c->rd.len && !c->rd.dropping && c->rd.cap > AGENTCONN_KEEP_BUF)
            agent_reader_free(&c->rd); /* a big line is done: its buffer goes */
        charge(c);
    } else if (n < 0) {
        c->ops->eof(c);
    }
    free(b->base);
}

int agentconn_init(uv_loop_t *loop, struct agentconn *c, const struct agentconn_ops *ops,
                   struct prof_conn *pc)
{
    int rc = uv_pipe_init(loop, &c->h, 0);
    if (rc) {
        if (pc) profile_conn_free(pc);
        return rc;
    }
    c->ops = ops;
    c->pc = pc;
    agent_reader_init(&c->rd);
    return 0;
}

int agentconn_read_start(struct agentconn *c)
{
    return uv_read_start((uv_stream_t *)&c->h, alloc_buf, on_read);
}

static void on_write_done(uv_write_t *req, int status)
{
    (void)status;
    free(req->data);
}

void agentconn_send(struct agentconn *c, const char *line)
{
    /* Sized from the line itself: a fixed buffer plus snprintf's return value
     * (the untruncated length) would hand uv_write bytes past the buffer. */
    size_t n = strlen(line);
    struct write_req *w = malloc(sizeof *w + n + 1);
    if (!w) return;
    memcpy(w->buf, line, n);
    w->buf[n] = '\n';
    uv_buf_t b = uv_buf_init(w->buf, (unsigned)(n + 1));
    w->req.data = w;
    if (uv_write(&w->req, (uv_stream_t *)&c->h, &b, 1, on_write_done)) free(w);
}

void agentconn_send_now(struct agentconn *c, int hz)
{
    if (!c->hello || c->closing) return;
    char b[48];
    snprintf(b, sizeof b, "{\"t\":\"now\",\"hz\":%d}", hz);
    agentconn_send(c, b);
}

void agentconn_release(struct agentconn *c)
{
    size_t held = c->rd.cap;
    agent_reader_free(&c->rd);
    charge(c);
    if (held >= AGENTCONN_TRIM_AT) malloc_trim(0); /* glibc keeps big freed heap otherwise */
    if (c->pc) profile_conn_free(c->pc);
    c->pc = NULL;
}
