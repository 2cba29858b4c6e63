/* The stdio transport around struct server (`hotline lsp`, whose argv is
 * cli/cmd_lsp.c's). stdin is read
 * with whatever libuv handle fits what it is (pipe, tty, or a regular file,
 * which libuv cannot poll and which we therefore read through uv_fs_read);
 * stdout likewise. stdout carries only protocol; logs go to stderr. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lsp_stdio.h"

#include "core/lsp.h"
#include "proc/session.h"

struct stdio_transport {
    uv_loop_t *loop;
    struct server *srv;
    uv_handle_type in_type, out_type;
    union {
        uv_pipe_t pipe;
        uv_tty_t tty;
    } in, out;
    uv_fs_t fs_req; /* stdin as a regular file */
    char fs_buf[65536];
    int64_t fs_off;
    uv_signal_t sigterm, sigint;
    int closing;
};

struct write_req {
    uv_write_t req;
    uv_buf_t buf;
};

static void on_written(uv_write_t *req, int status)
{
    struct write_req *w = (struct write_req *)req;
    struct stdio_transport *t = req->data;
    if (status < 0 && status != UV_ECANCELED)
        fprintf(stderr, "hotline: writing to the client failed: %s\n", uv_strerror(status));
    free(w->buf.base);
    free(w);
    if (!t->closing) lsp_out_drained(t->srv);
}

/* Bytes the client has not taken yet: libuv's write queue (what the pipe
 * accepted at once never counts); 0 with blocking writes to a file. */
static size_t transport_pending(struct server *s)
{
    struct stdio_transport *t = s->transport;
    if (t->out_type != UV_NAMED_PIPE && t->out_type != UV_TTY) return 0;
    return uv_stream_get_write_queue_size((uv_stream_t *)&t->out);
}

static void transport_write(struct server *s, const char *buf, size_t len)
{
    struct stdio_transport *t = s->transport;
    if (t->out_type == UV_FILE || t->out_type == UV_UNKNOWN_HANDLE) {
        while (len > 0) {
            ssize_t n = write(1, buf, len);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return;
            buf += n;
            len -= (size_t)n;
        }
        return;
    }
    struct write_req *w = malloc(sizeof *w);
    char *copy = malloc(len);
    if (!w || !copy) {
        free(w);
        free(copy);
        return;
    }
    memcpy(copy, buf, len);
    w->buf = uv_buf_init(copy, (unsigned)len);
    w->req.data = t;
    int rc = uv_write(&w->req, (uv_stream_t *)&t->out, &w->buf, 1, on_written);
    if (rc < 0) {
        fprintf(stderr, "hotline: cannot write to the client: %s\n", uv_strerror(rc));
        free(copy);
        free(w);
    }
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    buf->base = malloc(suggested);
    buf->len = buf->base ? suggested : 0;
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    struct stdio_transport *t = st->data;
    if (n > 0) lsp_feed(t->srv, buf->base, (size_t)n);
    free(buf->base);
    if (n < 0) {
        if (n != UV_EOF)
            fprintf(stderr, "hotline: reading from the client failed: %s\n", uv_strerror((int)n));
        lsp_eof(t->srv);
    }
}

static void on_fs_read(uv_fs_t *req)
{
    struct stdio_transport *t = req->data;
    ssize_t n = req->result;
    uv_fs_req_cleanup(req);
    if (n > 0) {
        t->fs_off += n;
        lsp_feed(t->srv, t->fs_buf, (size_t)n);
        if (t->srv->state != LSP_EXITED) {
            uv_buf_t b = uv_buf_init(t->fs_buf, sizeof t->fs_buf);
            uv_fs_read(t->loop, &t->fs_req, 0, &b, 1, t->fs_off, on_fs_read);
        }
        return;
    }
    if (t->srv->state != LSP_EXITED) lsp_eof(t->srv);
}

static int open_stream(uv_loop_t *loop, int fd, uv_handle_type type, void *h, int readable)
{
    if (type == UV_NAMED_PIPE) {
        uv_pipe_init(loop, h, 0);
        return uv_pipe_open(h, fd);
    }
    if (type == UV_TTY) return uv_tty_init(loop, h, fd, readable);
    return UV_EINVAL;
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)status;
    uv_close((uv_handle_t *)req->handle, NULL);
    free(req);
}

/* The server decided to exit: stop reading, flush what is queued for the
 * client, close every handle so that the loop ends. */
static void on_server_exit(struct server *s)
{
    struct stdio_transport *t = s->transport;
    if (t->closing) return;
    t->closing = 1;
    if (t->in_type == UV_NAMED_PIPE || t->in_type == UV_TTY) {
        uv_read_stop((uv_stream_t *)&t->in);
        uv_close((uv_handle_t *)&t->in, NULL);
    } else if (t->in_type == UV_FILE) {
        uv_cancel((uv_req_t *)&t->fs_req);
    }
    if (t->out_type == UV_NAMED_PIPE || t->out_type == UV_TTY) {
        uv_shutdown_t *req = malloc(sizeof *req);
        if (!req || uv_shutdown(req, (uv_stream_t *)&t->out, on_shutdown) < 0) {
            free(req);
            uv_close((uv_handle_t *)&t->out, NULL);
        }
    }
    uv_close((uv_handle_t *)&t->sigterm, NULL);
    uv_close((uv_handle_t *)&t->sigint, NULL);
    lsp_server_close(s);
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct stdio_transport *t = h->data;
    fprintf(stderr, "hotline: %s received, exiting\n", strsignal(signum));
    lsp_eof(t->srv);
}

int lsp_stdio_serve(const struct lsp_stdio_opts *o)
{
    signal(SIGPIPE, SIG_IGN);

    uv_loop_t loop;
    uv_loop_init(&loop);
    struct server srv;
    struct stdio_transport t;
    memset(&t, 0, sizeof t);
    t.loop = &loop;
    t.srv = &srv;
    int rc = lsp_server_init(&srv, &loop, o->max_message);
    if (rc) {
        fprintf(stderr, "hotline lsp: cannot start: %s\n", strerror(-rc));
        uv_run(&loop, UV_RUN_DEFAULT); /* the close callbacks of what init made */
        lsp_server_free(&srv);
        uv_loop_close(&loop);
        return 1;
    }
    srv.transport = &t;
    srv.out.cap = o->max_output;
    srv.f.docs.max_bytes = o->max_document;
    srv.write = transport_write;
    srv.out_pending = transport_pending;
    srv.on_exit = on_server_exit;

    t.in_type = uv_guess_handle(0);
    t.out_type = uv_guess_handle(1);
    if (t.out_type == UV_NAMED_PIPE || t.out_type == UV_TTY) {
        if (open_stream(&loop, 1, t.out_type, &t.out, 0) < 0)
            t.out_type = UV_FILE; /* fall back to blocking writes */
    }
    if (t.in_type == UV_NAMED_PIPE || t.in_type == UV_TTY) {
        rc = open_stream(&loop, 0, t.in_type, &t.in, 1);
        if (!rc) {
            ((uv_stream_t *)&t.in)->data = &t;
            rc = uv_read_start((uv_stream_t *)&t.in, alloc_cb, on_read);
        }
    } else if (t.in_type == UV_FILE) {
        t.fs_req.data = &t;
        uv_buf_t b = uv_buf_init(t.fs_buf, sizeof t.fs_buf);
        rc = uv_fs_read(&loop, &t.fs_req, 0, &b, 1, 0, on_fs_read);
    } else {
        rc = UV_EINVAL;
    }
    if (rc < 0) {
        fprintf(stderr, "hotline lsp: cannot read stdin: %s\n", uv_strerror(rc));
        return 1;
    }
    uv_signal_init(&loop, &t.sigterm);
    uv_signal_init(&loop, &t.sigint);
    t.sigterm.data = t.sigint.data = &t;
    uv_signal_start(&t.sigterm, on_signal, SIGTERM);
    uv_signal_start(&t.sigint, on_signal, SIGINT);

    uv_run(&loop, UV_RUN_DEFAULT);
    int code = srv.exit_code;
    lsp_server_free(&srv);
    session_sinks_close(&loop); /* output of children that outlived a run */
    if (uv_loop_close(&loop) == UV_EBUSY) {
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
    }
    return code;
}
