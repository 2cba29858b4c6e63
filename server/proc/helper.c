/* A short-lived helper process (helper.h). Handles are initialised in
 * order and, on any failure, only those are closed; the struct is freed
 * from the last close callback. */
#include "proc/helper.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct proc_helper {
    uv_process_t proc;
    uv_pipe_t in, out;
    uv_timer_t timer;
    uv_write_t wr;
    char *input;
    char *buf;
    size_t len;
    int open, exited, eof;
    int64_t status;
    size_t max_out;
    proc_done_fn done;
    void *data; /* borrowed; NULL once detached (the caller is gone) */
};

static void proc_closed(uv_handle_t *h)
{
    struct proc_helper *p = h->data;
    if (--p->open == 0) {
        free(p->input);
        free(p->buf);
        free(p);
    }
}

static void proc_close_all(struct proc_helper *p)
{
    uv_handle_t *hs[] = {(uv_handle_t *)&p->proc, (uv_handle_t *)&p->in, (uv_handle_t *)&p->out,
                         (uv_handle_t *)&p->timer};
    for (size_t i = 0; i < 4; i++)
        if (!uv_is_closing(hs[i])) uv_close(hs[i], proc_closed);
}

static void proc_maybe_done(struct proc_helper *p)
{
    if (!p->exited || !p->eof) return;
    uv_timer_stop(&p->timer);
    void *data = p->data;
    p->data = NULL;
    if (p->buf) p->buf[p->len] = 0;
    if (data) p->done(data, p->status, p->buf ? p->buf : "");
    proc_close_all(p);
}

static void proc_on_exit(uv_process_t *h, int64_t status, int sig)
{
    struct proc_helper *p = h->data;
    p->exited = 1;
    p->status = sig ? -sig : status;
    proc_maybe_done(p);
}

static void proc_alloc(uv_handle_t *h, size_t want, uv_buf_t *b)
{
    (void)want;
    struct proc_helper *p = h->data;
    if (!p->buf) p->buf = malloc(p->max_out + 1);
    size_t room = p->buf ? p->max_out - p->len : 0;
    *b = uv_buf_init(room ? p->buf + p->len : NULL, (unsigned)room);
}

static void proc_on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    (void)b;
    struct proc_helper *p = st->data;
    if (n > 0) p->len += (size_t)n;
    if (n < 0 || p->len >= p->max_out) {
        uv_read_stop(st);
        p->eof = 1;
        proc_maybe_done(p);
    }
}

static void proc_on_write(uv_write_t *w, int status)
{
    (void)status;
    struct proc_helper *p = w->data;
    if (!uv_is_closing((uv_handle_t *)&p->in)) uv_close((uv_handle_t *)&p->in, proc_closed);
}

/* Kill the helper's whole process group (see the top of helper.h). */
static void proc_on_timeout(uv_timer_t *t)
{
    struct proc_helper *p = t->data;
    if (p->proc.pid > 0) kill(-p->proc.pid, SIGKILL);
}

int proc_helper_start(uv_loop_t *loop, char *const argv[], const char *cwd, char *input,
                      uint64_t timeout_ms, size_t max_out, proc_done_fn done, void *data,
                      struct proc_helper **hp)
{
    struct proc_helper *p = calloc(1, sizeof *p);
    if (!p) {
        free(input);
        return -ENOMEM;
    }
    p->data = data;
    p->done = done;
    p->input = input;
    p->max_out = max_out;
    /* handles initialised in order; on a failure only those are closed */
    uv_handle_t *hs[] = {(uv_handle_t *)&p->in, (uv_handle_t *)&p->out, (uv_handle_t *)&p->timer};
    int ninit = 0, rc = uv_pipe_init(loop, &p->in, 0);
    if (!rc) ninit++, rc = uv_pipe_init(loop, &p->out, 0);
    if (!rc) ninit++, rc = uv_timer_init(loop, &p->timer);
    if (rc) {
        p->data = NULL;
        p->open = ninit;
        for (int i = 0; i < ninit; i++) {
            hs[i]->data = p;
            uv_close(hs[i], proc_closed);
        }
        if (!ninit) {
            free(p->input);
            free(p);
        }
        return rc;
    }
    p->in.data = p->out.data = p->timer.data = p->proc.data = p->wr.data = p;
    p->open = 3;
    uv_stdio_container_t io[3] = {
        {.flags = UV_CREATE_PIPE | UV_READABLE_PIPE, .data.stream = (uv_stream_t *)&p->in},
        {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&p->out},
        {.flags = UV_IGNORE},
    };
    uv_process_options_t o = {.file = argv[0],
                              .args = (char **)argv,
                              .cwd = cwd,
                              .exit_cb = proc_on_exit,
                              .stdio = io,
                              .stdio_count = 3,
                              /* detached: setsid, so the helper leads its
                               * own process group (see proc_on_timeout) */
                              .flags = UV_PROCESS_WINDOWS_HIDE | UV_PROCESS_DETACHED};
    rc = p->input ? uv_spawn(loop, &p->proc, &o) : -ENOMEM;
    if (rc) {
        p->data = NULL;
        /* A failed uv_spawn still leaves the handle to close; without input
         * uv_spawn never ran, the handle is uninitialised and uv_close on it
         * would assert. */
        p->open = p->input ? 4 : 3;
        if (p->input) uv_close((uv_handle_t *)&p->proc, proc_closed);
        uv_close((uv_handle_t *)&p->in, proc_closed);
        uv_close((uv_handle_t *)&p->out, proc_closed);
        uv_close((uv_handle_t *)&p->timer, proc_closed);
        return rc;
    }
    p->open = 4;
    uv_buf_t b = uv_buf_init(p->input, (unsigned)strlen(p->input));
    if (uv_write(&p->wr, (uv_stream_t *)&p->in, &b, 1, proc_on_write))
        uv_close((uv_handle_t *)&p->in, proc_closed);
    if (uv_read_start((uv_stream_t *)&p->out, proc_alloc, proc_on_read))
        p->eof = 1; /* nothing can be read: done comes at exit, with no output */
    if (uv_timer_start(&p->timer, proc_on_timeout, timeout_ms, 0))
        kill(-p->proc.pid, SIGKILL); /* uncapped it could run forever: stop it now */
    *hp = p;
    return 0;
}

void proc_helper_detach(struct proc_helper *h)
{
    h->data = NULL;
}
