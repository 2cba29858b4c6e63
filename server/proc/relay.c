/* relay: the agent's stream passed on to a server, byte for byte
 * (relay.h). */
#include "proc/relay.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define RELAY_READ 65536            /* one read of either side */
#define RELAY_MAX_QUEUED (8u << 20) /* agent bytes the server has not taken: pause */
#define RELAY_MAX_BACK (1u << 20)   /* server bytes the agent has not taken: dropped */

/* One write in flight, its buffer with it. */
struct relay_write {
    uv_write_t req;
    char *buf; /* owned */
    struct relay *r;
};

static void relay_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    (void)h;
    (void)hint;
    b->base = malloc(RELAY_READ);
    b->len = b->base ? RELAY_READ : 0;
}

/* Write n bytes of buf (stolen: freed once written, or now on failure). */
static void relay_write(struct relay *r, uv_pipe_t *to, char *buf, size_t n, uv_write_cb cb)
{
    struct relay_write *w = malloc(sizeof *w);
    uv_buf_t b = uv_buf_init(buf, (unsigned)n);
    if (w) {
        w->buf = buf;
        w->r = r;
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
    struct relay *r = w->r;
    free(w->buf);
    free(w);
    if (r->paused && r->agent_open && r->up.write_queue_size < RELAY_MAX_QUEUED / 2) {
        r->paused = 0;
        uv_read_start((uv_stream_t *)&r->agent, relay_alloc, agent_read);
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
    struct relay *r = req->data;
    r->flushing = 0;
    r->up_open = 0;
    uv_close((uv_handle_t *)&r->up, NULL);
}

/* The agent's stream ended: what the server has not read yet still goes,
 * then EOF; the caller is told (and closes the rest). */
static void agent_gone(struct relay *r)
{
    r->tail[r->tail_len] = 0;
    if (r->up_open && !r->flushing) {
        r->shut.data = r;
        if (uv_shutdown(&r->shut, (uv_stream_t *)&r->up, on_up_shut) == 0) r->flushing = 1;
    }
    r->cbs->on_agent_gone(r, r->tail, r->data);
}

static void agent_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct relay *r = st->data;
    if (n > 0) { /* keep the last bytes: the stream's `end` line */
        size_t keep = sizeof r->tail - 1, k = (size_t)n < keep ? (size_t)n : keep;
        size_t old = r->tail_len + k > keep ? keep - k : r->tail_len;
        memmove(r->tail, r->tail + r->tail_len - old, old);
        memcpy(r->tail + old, b->base + n - k, k);
        r->tail_len = old + k;
    }
    if (n > 0 && r->up_open && !r->flushing) {
        relay_write(r, &r->up, b->base, (size_t)n, on_up_written);
        if (r->up.write_queue_size > RELAY_MAX_QUEUED) { /* the agent waits, not us */
            uv_read_stop(st);
            r->paused = 1;
        }
        return;
    }
    free(b->base); /* n > 0 with no server: dropped, the agent's end follows */
    if (n < 0) agent_gone(r);
}

/* From the server: `now` rates and `stop`, passed on as they are (before
 * the agent is there the server has nothing to say: dropped). Its EOF is a
 * detach, as when a run's agent loses the server (module.c). */
static void up_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct relay *r = st->data;
    if (n > 0 && r->agent_open && r->agent.write_queue_size < RELAY_MAX_BACK) {
        relay_write(r, &r->agent, b->base, (size_t)n, on_agent_written);
        return;
    }
    free(b->base);
    if (n >= 0) return;
    uv_read_stop(st);
    if (!r->flushing) {
        r->up_open = 0;
        uv_close((uv_handle_t *)st, NULL);
    }
    r->cbs->on_server_gone(r, r->data);
}

static void on_connection(uv_stream_t *srv, int status)
{
    struct relay *r = srv->data;
    /* a second connection is left unaccepted: the listener closes below */
    if (status < 0 || r->agent_open || !r->cbs->on_agent(r, r->data)) return;
    uv_pipe_init(r->loop, &r->agent, 0);
    r->agent.data = r;
    r->agent_open = 1;
    if (uv_accept(srv, (uv_stream_t *)&r->agent) ||
        uv_read_start((uv_stream_t *)&r->agent, relay_alloc, agent_read)) {
        r->cbs->on_fail(r, "cannot read the agent's connection", r->data);
        return;
    }
    r->cbs->on_ready(r, r->data);
    r->listen_open = 0; /* one agent: nobody else may connect */
    uv_close((uv_handle_t *)&r->listen, NULL);
}

int relay_listen(struct relay *r, const char *sockpath, char *err, size_t n)
{
    int rc = uv_pipe_init(r->loop, &r->listen, 0);
    if (!rc) {
        r->listen_open = 1;
        r->listen.data = r;
        rc = uv_pipe_bind(&r->listen, sockpath);
    }
    if (!rc && chmod(sockpath, 0600)) rc = -errno;
    if (!rc) rc = uv_listen((uv_stream_t *)&r->listen, 4, on_connection);
    if (rc) {
        snprintf(err, n, "cannot listen on %s: %s", sockpath, uv_strerror(rc));
        return -1;
    }
    return 0;
}

int relay_connect(struct relay *r, uv_loop_t *loop, const char *path, const struct relay_cbs *cbs,
                  void *data, char *err, size_t n)
{
    memset(r, 0, sizeof *r);
    r->loop = loop;
    r->cbs = cbs;
    r->data = data;
    signal(SIGPIPE, SIG_IGN); /* a server that went is EPIPE on a write, not our death */
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(err, n, "socket path too long: %s", path);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(err, n, "cannot connect to %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    uv_pipe_init(loop, &r->up, 0);
    r->up.data = r;
    r->up_open = 1;
    if (uv_pipe_open(&r->up, fd)) {
        close(fd);
        snprintf(err, n, "cannot use the connection to %s", path);
        return -1;
    }
    if (uv_read_start((uv_stream_t *)&r->up, relay_alloc, up_read)) {
        snprintf(err, n, "cannot read %s", path);
        return -1;
    }
    return 0;
}

void relay_stop(struct relay *r)
{
    static const char stop[] = "{\"t\":\"stop\"}\n";
    char *buf = r->agent_open ? malloc(sizeof stop - 1) : NULL;
    if (!buf) return;
    memcpy(buf, stop, sizeof stop - 1);
    relay_write(r, &r->agent, buf, sizeof stop - 1, on_agent_written);
}

void relay_close(struct relay *r)
{
    if (r->listen_open) {
        r->listen_open = 0;
        uv_close((uv_handle_t *)&r->listen, NULL);
    }
    if (r->agent_open) {
        r->agent_open = 0;
        uv_close((uv_handle_t *)&r->agent, NULL);
    }
    if (r->up_open && !r->flushing) {
        r->up_open = 0;
        uv_close((uv_handle_t *)&r->up, NULL);
    }
}
