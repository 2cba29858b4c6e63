/* session: spawn a Python program under the agent and collect its wire
 * stream into a profile store (see session.h). Lifecycle:
 *   start: mkdtemp (0700) + listen on <dir>/agent.sock, uv_spawn
 *   run:   accept one connection per profiled process, decode lines
 *   exit:  process exit + every connection at EOF (or SESSION_DRAIN_MS) -> on_exit;
 *          output pipes still held then (children outliving the program) go
 *          to sinks that read and drop until EOF (LSP mode)
 *   close: uv_close everything, unlink the socket, rmdir, on_closed */
#include "proc/session.h"
#include "proc/agentconn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_config.h"

extern char **environ;

struct session_conn {
    struct agentconn ac; /* first member: handle -> conn */
    struct session *s;
    struct session_conn *next;
};

struct session_io {
    uv_process_t proc;
    uv_pipe_t listener;
    uv_timer_t stop_timer, drain_timer;
    uv_pipe_t out[2];
    int failed_open; /* session_start failed: handles still closing */
};

static void check_done(struct session *s);

static void set_err(struct session *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
    va_end(ap);
}

static void report_error(struct session *s, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (s->cb.on_error && !s->closing) s->cb.on_error(s, msg, s->ud);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int session_agent_dir(char *buf, size_t n)
{
    const char *env = getenv("HOTLINE_AGENT_PATH");
    if (env && *env) {
        snprintf(buf, n, "%s", env);
        return is_dir(buf) ? 0 : -ENOENT;
    }
    char exe[PATH_MAX];
    size_t sz = sizeof exe;
    if (uv_exepath(exe, &sz)) return -ENOENT;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    snprintf(buf, n, "%s/python", exe);
    if (is_dir(buf)) return 0;
    snprintf(buf, n, "%s/../lib/hotline/python", exe);
    if (is_dir(buf)) return 0;
    snprintf(buf, n, "%s/python or %s/../lib/hotline/python", exe, exe);
    return -ENOENT;
}

/* ---- agent connections -------------------------------------------------- */

static void conn_closed(uv_handle_t *h)
{
    struct session_conn *c = (struct session_conn *)h;
    struct session *s = c->s;
    struct session_conn **pp = &s->conns;
    while (*pp && *pp != c)
        pp = &(*pp)->next;
    if (*pp) *pp = c->next;
    s->nconns--;
    agentconn_release(&c->ac);
    free(c);
    s->pending_closes--;
    check_done(s);
}

static void conn_close(struct session_conn *c)
{
    if (c->ac.closing) return;
    c->ac.closing = 1;
    c->s->pending_closes++;
    uv_close((uv_handle_t *)&c->ac.h, conn_closed);
}

/* What a message means to a run (agentconn applied it to the store). */
static void conn_message(struct agentconn *ac, const struct agent_msg *m)
{
    struct session_conn *c = (struct session_conn *)ac;
    struct session *s = c->s;
    switch (m->type) {
    case AGENT_MSG_HELLO:
        if (s->now_hz > 0) agentconn_send_now(ac, s->now_hz);
        break;
    case AGENT_MSG_DELTA:
        if (s->cb.on_delta && !s->closing) s->cb.on_delta(s, s->ud);
        break;
    case AGENT_MSG_NOW:
        if (s->cb.on_now && !s->closing) {
            json_t *now = profile_conn_resolve_now(ac->pc, m);
            if (now) s->cb.on_now(s, now, s->ud);
            json_decref(now);
        }
        break;
    case AGENT_MSG_ERROR: {
        const char *py = s->store->meta.python_version;
        char e[sizeof s->agent_error];
        snprintf(e, sizeof e, "agent error%s%s%s: %s", py ? " (Python " : "", py ? py : "",
                 py ? ")" : "", m->u.text.msg);
        /* once: every Python child of a program without an agent says the same */
        if (strcmp(e, s->agent_error) != 0) {
            memcpy(s->agent_error, e, sizeof e);
            report_error(s, "%s", s->agent_error);
        }
        break;
    }
    case AGENT_MSG_LOG:
        if (!strcmp(m->u.text.level, "notice") && s->cb.on_notice && !s->closing)
            s->cb.on_notice(s, m->u.text.msg, s->ud);
        else if (!strcmp(m->u.text.level, "warn") || !strcmp(m->u.text.level, "error"))
            report_error(s, "agent: %s", m->u.text.msg);
        break;
    default:
        break;
    }
}

static void conn_report(struct agentconn *ac, const char *msg)
{
    report_error(((struct session_conn *)ac)->s, "%s", msg);
}

static void conn_eof(struct agentconn *ac)
{
    conn_close((struct session_conn *)ac); /* the process ended (maybe without `end`) */
}

static const struct agentconn_ops conn_ops = {conn_report, conn_message, conn_eof};

/* the program's output pipes and the sinks */
static void alloc_buf(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
    (void)h;
    (void)hint;
    b->base = malloc(65536);
    b->len = b->base ? 65536 : 0;
}

static void on_connection(uv_stream_t *srv, int status)
{
    struct session *s = srv->data;
    if (status < 0 || s->closing) return;
    struct session_conn *c = calloc(1, sizeof *c);
    if (!c || agentconn_init(s->loop, &c->ac, &conn_ops, profile_conn_new(s->store))) {
        free(c);
        return;
    }
    profile_conn_live(c->ac.pc);
    c->s = s;
    c->next = s->conns;
    s->conns = c;
    s->nconns++;
    if (!c->ac.pc || uv_accept(srv, (uv_stream_t *)&c->ac.h) || s->nconns > SESSION_MAX_CONNS ||
        agentconn_read_start(&c->ac)) {
        conn_close(c);
        return;
    }
    s->nconns_total++;
}

/* ---- program output (LSP mode) ------------------------------------------ */

static void tail_add(struct session *s, const char *p, size_t n)
{
    if (!s->tail) return;
    for (size_t i = 0; i < n; i++) {
        s->tail[s->tail_pos] = p[i];
        s->tail_pos = (s->tail_pos + 1) % SESSION_OUTPUT_TAIL;
    }
    s->tail_len = s->tail_len + n > SESSION_OUTPUT_TAIL ? SESSION_OUTPUT_TAIL : s->tail_len + n;
}

char *session_output_tail(const struct session *s)
{
    if (!s->tail) return NULL;
    char *r = malloc(s->tail_len + 1);
    if (!r) return NULL;
    size_t start = (s->tail_pos + SESSION_OUTPUT_TAIL - s->tail_len) % SESSION_OUTPUT_TAIL;
    for (size_t i = 0; i < s->tail_len; i++)
        r[i] = s->tail[(start + i) % SESSION_OUTPUT_TAIL];
    r[s->tail_len] = 0;
    return r;
}

static void generic_closed(uv_handle_t *h)
{
    struct session *s = h->data;
    s->pending_closes--;
    check_done(s);
}

static void close_handle(struct session *s, uv_handle_t *h)
{
    if (uv_is_closing(h)) return;
    h->data = s;
    s->pending_closes++;
    uv_close(h, generic_closed);
}

static void out_closed(uv_handle_t *h)
{
    struct session *s = h->data;
    s->out_open[(uv_pipe_t *)h == &s->io->out[1]] = 0;
    s->pending_closes--;
    check_done(s);
}

static void out_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct session *s = st->data;
    if (n > 0)
        tail_add(s, b->base, (size_t)n);
    else if (n < 0 && !uv_is_closing((uv_handle_t *)st)) {
        s->pending_closes++;
        uv_close((uv_handle_t *)st, out_closed);
    }
    free(b->base);
}

/* ---- process ------------------------------------------------------------- */

static void check_done(struct session *s)
{
    if (s->closing) {
        if (s->pending_closes == 0 && !s->done_closing) {
            s->done_closing = 1;
            if (s->sockpath[0]) unlink(s->sockpath);
            if (s->tmpdir[0]) rmdir(s->tmpdir);
            free(s->tail);
            s->tail = NULL;
            free(s->io);
            s->io = NULL;
            void (*cb)(struct session *) = s->on_closed;
            s->on_closed = NULL;
            if (cb) cb(s);
        }
        return;
    }
    if (s->done || !s->exited || s->nconns > 0 || s->out_open[0] || s->out_open[1]) return;
    if (!s->drain_ticks)
        return; /* one more poll first: a connection may still sit in the accept backlog */
    s->done = 1;
    uv_timer_stop(&s->io->drain_timer);
    s->cb.on_exit(s, s->ud);
}

/* ---- output sinks ---------------------------------------------------------
 * A process that outlives the run (a child of the program) may still hold
 * the output pipes when the drain ends. Closing our end would make its next
 * write fail (EPIPE: Python raises BrokenPipeError, the child dies) and
 * leaving the pipe unread would block it once the pipe is full. So the read
 * end moves to a sink that drops what it reads until EOF. Sinks belong to
 * the loop, not to a session (it ends now); they do not keep the loop alive,
 * and session_sinks_close() closes them when the server ends. At most
 * SESSION_MAX_SINKS; past that the pipe is closed as before. */
static const char sink_tag = 0; /* handle->data of a sink: its address */

static void sink_closed(uv_handle_t *h)
{
    free(h);
}

static void sink_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    free(b->base);
    if (n < 0 && !uv_is_closing((uv_handle_t *)st)) uv_close((uv_handle_t *)st, sink_closed);
}

static void sink_count(uv_handle_t *h, void *arg)
{
    if (h->data == &sink_tag && !uv_is_closing(h)) ++*(int *)arg;
}

static void sink_close(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (h->data == &sink_tag && !uv_is_closing(h)) uv_close(h, sink_closed);
}

void session_sinks_close(uv_loop_t *loop)
{
    uv_walk(loop, sink_close, NULL);
}

/* Hand the read end of p to a new sink; 0 or a negative errno (p untouched). */
static int sink_start(uv_loop_t *loop, uv_pipe_t *p)
{
    int n = 0;
    uv_walk(loop, sink_count, &n);
    if (n >= SESSION_MAX_SINKS) return -EMFILE;
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *)p, &fd)) return -EBADF;
    int d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (d < 0) return -errno;
    uv_pipe_t *k = malloc(sizeof *k);
    if (!k || uv_pipe_init(loop, k, 0)) {
        free(k);
        close(d);
        return -ENOMEM;
    }
    k->data = (void *)&sink_tag;
    if (uv_pipe_open(k, d) || uv_read_start((uv_stream_t *)k, alloc_buf, sink_read)) {
        close(d);
        uv_close((uv_handle_t *)k, sink_closed);
        return -EIO;
    }
    uv_unref((uv_handle_t *)k);
    return 0;
}

/* Close every agent connection and the program's output pipes (LSP mode);
 * to_sinks: the run is over but processes outliving it may still write to
 * them, and their agents get a "stop" first: it releases them (in LSP mode
 * an agent whose connection ends without one watches the server's pid and
 * dies with it). */
static void close_conns_and_outputs(struct session *s, int to_sinks)
{
    for (struct session_conn *c = s->conns; c; c = c->next) {
        if (to_sinks && !c->ac.closing) agentconn_send(&c->ac, "{\"t\":\"stop\"}");
        conn_close(c);
    }
    for (int i = 0; i < 2; i++)
        if (s->out_open[i] && !uv_is_closing((uv_handle_t *)&s->io->out[i])) {
            if (to_sinks) sink_start(s->loop, &s->io->out[i]); /* best effort */
            s->pending_closes++;
            uv_close((uv_handle_t *)&s->io->out[i], out_closed);
        }
}

static void on_drain_tick(uv_timer_t *t)
{
    struct session *s = t->data;
    s->drain_ticks++;
    if (uv_hrtime() >= s->drain_deadline) {
        /* stragglers (a daemon child keeping its connection): keep what we
         * have; their later output is dropped, their connection closed (the
         * agent then stops profiling and lets the process run on) */
        close_conns_and_outputs(s, 1);
    }
    check_done(s);
}

static void on_proc_exit(uv_process_t *p, int64_t status, int sig)
{
    struct session *s = p->data;
    s->exited = 1;
    s->exit_status = sig ? -1 : (int)status;
    s->term_signal = sig;
    s->elapsed_s = (double)(uv_hrtime() - s->start_ns) / 1e9;
    if (s->closing) { /* session_close killed it and waited for this, so no zombie is left */
        close_handle(s, (uv_handle_t *)p);
        s->pending_closes--;
        check_done(s);
        return;
    }
    uv_timer_stop(&s->io->stop_timer);
    s->drain_deadline = uv_hrtime() + SESSION_DRAIN_MS * 1000000ull;
    if (uv_timer_start(&s->io->drain_timer, on_drain_tick, 1, 50)) { /* first tick after one poll */
        s->drain_deadline = 0; /* no tick will come: close what is left now, never hang */
        on_drain_tick(&s->io->drain_timer);
    }
}

void session_signal(struct session *s, int sig)
{
    if (s->exited || s->pid <= 0) return;
    kill(s->detached ? -s->pid : s->pid, sig);
}

static void on_stop_timer(uv_timer_t *t)
{
    struct session *s = t->data;
    if (s->exited) return;
    s->stop_stage++;
    session_signal(s, s->stop_stage == 2 ? SIGTERM : SIGKILL);
    if (s->stop_stage < 3 &&
        uv_timer_start(&s->io->stop_timer, on_stop_timer, SESSION_STOP_STEP_MS, 0))
        session_signal(s, SIGKILL); /* no later step can come: the last one now */
}

void session_stop(struct session *s)
{
    if (s->exited || s->stop_stage) return;
    s->stop_stage = 1;
    session_signal(s, SIGINT);
    if (uv_timer_start(&s->io->stop_timer, on_stop_timer, SESSION_STOP_STEP_MS, 0))
        session_signal(s, SIGKILL); /* no escalation can come: stop for sure now */
}

void session_request_now(struct session *s, int hz)
{
    s->now_hz = hz < 0 ? 0 : hz;
    for (struct session_conn *c = s->conns; c; c = c->next)
        agentconn_send_now(&c->ac, s->now_hz);
}

void session_close(struct session *s, void (*on_closed)(struct session *))
{
    s->closing = 1;
    s->on_closed = on_closed;
    s->pending_closes++; /* guard: callbacks below must not finish early */
    if (s->proc_open && !s->exited) {
        /* still running: kill it and close the handle from the exit callback,
         * since a closed process handle is never reaped (zombie) */
        session_signal(s, SIGKILL);
        s->pending_closes++;
    } else if (s->proc_open) {
        close_handle(s, (uv_handle_t *)&s->io->proc);
    }
    close_handle(s, (uv_handle_t *)&s->io->listener);
    close_handle(s, (uv_handle_t *)&s->io->stop_timer);
    close_handle(s, (uv_handle_t *)&s->io->drain_timer);
    close_conns_and_outputs(s, 0);
    s->pending_closes--;
    check_done(s);
}

/* ---- start ---------------------------------------------------------------- */

static char *strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *r = NULL;
    if (vasprintf(&r, fmt, ap) < 0) r = NULL;
    va_end(ap);
    return r;
}

static char *config_json(const struct session_opts *o, const char *main_path)
{
    json_t *c = json_object();
    if (o->interval_ms > 0) json_object_set_new(c, "interval_ms", json_real(o->interval_ms));
    json_object_set_new(c, "profile_all", json_boolean(o->profile_all));
    if (o->all_threads) json_object_set_new(c, "all_threads", json_true());
    json_object_set_new(c, "memory", json_boolean(o->memory));
    json_object_set_new(c, "main", json_string(main_path));
    json_object_set_new(c, "server_pid", json_integer(getpid()));
    /* LSP mode: the program must not outlive a SIGKILLed server. */
    if (!o->inherit_stdio) json_object_set_new(c, "die_with_server", json_true());
    if (o->ninclude) {
        json_t *a = json_array();
        for (int i = 0; i < o->ninclude; i++)
            json_array_append_new(a, json_string(o->include[i]));
        json_object_set_new(c, "include", a);
    }
    if (o->nexclude) {
        json_t *a = json_array();
        for (int i = 0; i < o->nexclude; i++)
            json_array_append_new(a, json_string(o->exclude[i]));
        json_object_set_new(c, "exclude", a);
    }
    char *r = json_dumps(c, JSON_COMPACT);
    json_decref(c);
    return r;
}

static int env_skip(const char *e)
{
    static const char *names[] = {
        "PYTHONPATH=", "HOTLINE_SOCKET=", "HOTLINE_CONFIG=", "HOTLINE_BOOT=", "LD_PRELOAD="};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strncmp(e, names[i], strlen(names[i]))) return 1;
    return 0;
}

/* Where ld.so finds the allocation shim (docs/memory.md) built next to the
 * agent, into *preload (new string) and *libdir (new string or NULL); 0, or
 * -ENOENT when there is no shim to load (*preload NULL). The entry must
 * outlive the run, since a child the program leaves running passes
 * LD_PRELOAD to every command it starts later, and ld.so splits LD_PRELOAD
 * at spaces and colons with no escape. So it is the shim's absolute path
 * when that has neither; else (a build or install folder with a space) the
 * bare file name, which ld.so looks up along LD_LIBRARY_PATH (split at
 * colons and semicolons only; "$" starts a token there), where build_env
 * puts *libdir, the shim's folder, first: it holds only files of ours. */
static int shim_preload(const char *agent_dir, char **preload, char **libdir)
{
    *preload = *libdir = NULL;
    char *shim = strf("%s/" SESSION_AGENT_PKG "/" SESSION_SHIM_NAME, agent_dir), real[PATH_MAX];
    int ok =
        shim && access(shim, R_OK) == 0 && realpath(shim, real); /* agent_dir may be relative */
    free(shim);
    if (!ok) return -ENOENT;
    if (!strpbrk(real, " :")) {
        *preload = strf("%s", real);
        return *preload ? 0 : -ENOMEM;
    }
    char *slash = strrchr(real, '/');
    *slash = 0;
    if (strpbrk(real, ":;$")) return -ENOENT; /* no safe path: no native allocation tracking */
    *preload = strf("%s", SESSION_SHIM_NAME);
    *libdir = strf("%s", real);
    if (*preload && *libdir) return 0;
    free(*preload);
    free(*libdir);
    *preload = *libdir = NULL;
    return -ENOMEM;
}

/* "NAME=first[:rest]" (new string), rest the inherited value (may be NULL) */
static char *env_prepend(const char *name, const char *first, const char *rest)
{
    return rest && *rest ? strf("%s=%s:%s", name, first, rest) : strf("%s=%s", name, first);
}

/* New NULL-terminated environment; the 4-6 strings we add are owned by it
 * (entries [nown..)), the inherited ones borrowed from environ. preload and
 * libdir (borrowed, may be NULL: shim_preload) go first in LD_PRELOAD and
 * LD_LIBRARY_PATH. */
static char **build_env(const char *agent_dir, const char *sock, const char *config,
                        const char *preload, const char *libdir, int *nown)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 7, sizeof *env);
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!env_skip(environ[i]) && !(libdir && !strncmp(environ[i], "LD_LIBRARY_PATH=", 16)))
            env[k++] = environ[i];
    *nown = (int)k;
    env[k++] = env_prepend("PYTHONPATH", agent_dir, getenv("PYTHONPATH"));
    env[k++] = strf("HOTLINE_SOCKET=%s", sock);
    env[k++] = strf("HOTLINE_CONFIG=%s", config);
    env[k++] = strf("HOTLINE_BOOT=1");
    const char *pre = getenv("LD_PRELOAD");
    if (preload)
        env[k++] = env_prepend("LD_PRELOAD", preload, pre);
    else if (pre)
        env[k++] = strf("LD_PRELOAD=%s", pre);
    if (libdir) env[k++] = env_prepend("LD_LIBRARY_PATH", libdir, getenv("LD_LIBRARY_PATH"));
    return env;
}

static void free_env(char **env, int own)
{
    if (!env) return;
    for (int i = own; env[i]; i++)
        free(env[i]);
    free(env);
}

static int make_socket(struct session *s)
{
    const char *base = getenv("TMPDIR");
    /* a space or colon would also be in HOTLINE_SOCKET, which children read */
    if (!base || !*base || strlen(base) > 80 || strpbrk(base, " :")) base = "/tmp";
    snprintf(s->tmpdir, sizeof s->tmpdir, "%s/hotline-XXXXXX", base);
    if (!mkdtemp(s->tmpdir)) {
        int e = errno;
        set_err(s, "cannot create a private directory in %s: %s", base, strerror(e));
        s->tmpdir[0] = 0;
        return -e;
    }
    snprintf(s->sockpath, sizeof s->sockpath, "%s/agent.sock", s->tmpdir);
    int rc = uv_pipe_init(s->loop, &s->io->listener, 0);
    if (!rc) rc = uv_pipe_bind(&s->io->listener, s->sockpath);
    if (!rc) rc = uv_listen((uv_stream_t *)&s->io->listener, 128, on_connection);
    if (rc) set_err(s, "cannot listen on %s: %s", s->sockpath, uv_strerror(rc));
    return rc;
}

static void closed_after_fail(uv_handle_t *h)
{
    struct session_io *io = h->data;
    if (--io->failed_open == 0) free(io);
}

static void fail_close(struct session_io *io, uv_handle_t *h)
{
    if (!h->loop || uv_is_closing(h)) return;
    h->data = io;
    io->failed_open++;
    uv_close(h, closed_after_fail);
}

/* session_start failed: close what was opened; the handles live in io, which
 * the last close callback frees, so s itself may be freed at once. */
static void sync_teardown(struct session *s)
{
    struct session_io *io = s->io;
    io->failed_open = 1;
    fail_close(io, (uv_handle_t *)&io->listener);
    fail_close(io, (uv_handle_t *)&io->stop_timer);
    fail_close(io, (uv_handle_t *)&io->drain_timer);
    fail_close(io, (uv_handle_t *)&io->proc);
    for (int i = 0; i < 2; i++)
        fail_close(io, (uv_handle_t *)&io->out[i]);
    if (--io->failed_open == 0) free(io);
    s->io = NULL;
    if (s->sockpath[0]) unlink(s->sockpath);
    if (s->tmpdir[0]) rmdir(s->tmpdir);
    free(s->tail);
    s->tail = NULL;
}

/* The argv of the `hotline attach` helper (args has room for it, see
 * session_start): exe attach PID --connect SOCK [--interval MS] [--memory |
 * --children] [--all-threads] [--include GLOB]... [--exclude GLOB]... (the settings'
 * include / exclude: the frame it charges, or with --memory the injected
 * agent's config, is the one a run's agent would). pidbuf and ivbuf hold
 * the numbers (the caller's). Returns the count. */
static int helper_args(const struct session *s, const struct session_opts *o, char **args,
                       char *pidbuf, size_t npid, char *ivbuf, size_t niv)
{
    int k = 0;
    snprintf(pidbuf, npid, "%d", o->attach_pid);
    args[k++] = (char *)o->attach_exe;
    args[k++] = "attach";
    args[k++] = pidbuf;
    args[k++] = "--connect";
    args[k++] = (char *)s->sockpath;
    if (o->interval_ms > 0) {
        snprintf(ivbuf, niv, "%g", o->interval_ms);
        args[k++] = "--interval";
        args[k++] = ivbuf;
    }
    if (o->attach_memory) args[k++] = "--memory";
    if (o->attach_children && !o->attach_memory) args[k++] = "--children";
    if (o->all_threads && !o->attach_memory) args[k++] = "--all-threads";
    for (int i = 0; i < o->ninclude; i++) {
        args[k++] = "--include";
        args[k++] = o->include[i];
    }
    for (int i = 0; i < o->nexclude; i++) {
        args[k++] = "--exclude";
        args[k++] = o->exclude[i];
    }
    return k;
}

/* The options' own checks, before anything is made. 0, or a negative errno
 * with s's errmsg set. */
static int check_opts(struct session *s, const struct session_opts *o, const struct session_cbs *cb)
{
    if ((o->attach_pid > 0 ? !o->attach_exe : !!o->script == !!o->module) || !cb->on_exit) {
        set_err(s, "session: exactly one of script / module, and on_exit, are required");
        return -EINVAL;
    }
    /* uv_spawn would blame the interpreter ("cannot start python3: no such
     * file or directory") for a working folder that is not there */
    if (o->cwd && !is_dir(o->cwd)) {
        set_err(s, "the working folder %s %s", o->cwd,
                access(o->cwd, F_OK) ? "does not exist" : "is not a folder");
        return -ENOENT;
    }
    /* 0: the agent's default; anything else must be what the agent uses */
    if (o->interval_ms != 0 &&
        !(o->interval_ms >= AGENT_INTERVAL_MIN_MS && o->interval_ms <= AGENT_INTERVAL_MAX_MS)) {
        set_err(s, "the sampling interval must be %g..%g ms, not %g", AGENT_INTERVAL_MIN_MS,
                AGENT_INTERVAL_MAX_MS, o->interval_ms);
        return -EINVAL;
    }
    return 0;
}

/* The program's absolute main path (new, or NULL: no memory), for the
 * agent's default include, recorded with its argv in store's meta. cwd: the
 * folder it runs in ("" when unknown). */
static char *record_program(const struct session_opts *o, const char *cwd, struct profile *store)
{
    char *main_path;
    if (o->attach_pid > 0)
        main_path = o->script ? strf("%s", o->script) : strf("process %d", o->attach_pid);
    else if (o->module)
        main_path = strf("-m %s", o->module);
    else if (o->script[0] == '/')
        main_path = strf("%s", o->script);
    else
        main_path = strf("%s/%s", cwd, !strncmp(o->script, "./", 2) ? o->script + 2 : o->script);
    if (!main_path) return NULL;
    profile_set_str(&store->meta.program, main_path);
    json_t *argv = json_array();
    for (int i = 0; i < o->nargs; i++)
        json_array_append_new(argv, json_string(o->args[i]));
    json_decref(store->meta.argv);
    store->meta.argv = argv;
    if (o->interval_ms > 0) store->meta.interval_ms = o->interval_ms;
    return main_path;
}

/* The interpreter (borrowed: o's, venv_py, or a literal): o->python, else
 * $VIRTUAL_ENV's, else python3. */
static const char *pick_python(const struct session_opts *o, char *venv_py, size_t n)
{
    const char *venv = getenv("VIRTUAL_ENV");
    if (o->python) return o->python;
    if (venv && *venv) {
        snprintf(venv_py, n, "%s/bin/python", venv);
        if (access(venv_py, X_OK) == 0) return venv_py;
    }
    return "python3";
}

/* Fill args (room for the helper's, the longest) for o; *python becomes
 * the helper for an attach. pidbuf, ivbuf: the helper's numbers' room. */
static void fill_args(struct session *s, const struct session_opts *o, const char **python,
                      char **args, char *pidbuf, size_t npid, char *ivbuf, size_t niv)
{
    int k = 0;
    if (o->attach_pid > 0) {
        *python = o->attach_exe;
        k = helper_args(s, o, args, pidbuf, npid, ivbuf, niv);
    } else if (o->module) {
        args[k++] = (char *)*python;
        args[k++] = "-m";
        args[k++] = (char *)o->module;
    } else {
        args[k++] = (char *)*python;
        args[k++] = (char *)o->script;
    }
    for (int i = 0; o->attach_pid <= 0 && i < o->nargs; i++)
        args[k++] = o->args[i];
}

/* The file asked for as the program's stdin (flags O_RDONLY) or its output
 * (path: o's stdin_path or output_path, relative to cwd), opened into *fd
 * (left -1 when none is asked for). 0 or a negative errno with s's errmsg
 * set. */
static int open_stdio_file(struct session *s, const struct session_opts *o, const char *path,
                           int flags, const char *cwd, int *fd)
{
    if (o->inherit_stdio || !path || o->attach_pid > 0) return 0;
    char full[PATH_MAX * 2 + 2];
    if (path[0] == '/' || !cwd[0])
        snprintf(full, sizeof full, "%s", path);
    else
        snprintf(full, sizeof full, "%s/%s", cwd, path);
    *fd = open(full, flags | O_CLOEXEC, 0644);
    if (*fd >= 0) return 0;
    int rc = -errno;
    set_err(s, "cannot open %s for the program's %s: %s", full,
            flags == O_RDONLY ? "stdin" : "output", strerror(-rc));
    return rc;
}

/* stdio[3] for the child: inherited, or stdin (in_fd or /dev/null) and
 * stdout / stderr into out_fd, else two pipes to read. 0 or a libuv error
 * with s's errmsg set. */
static int setup_stdio(struct session *s, const struct session_opts *o, int in_fd, int out_fd,
                       uv_stdio_container_t *stdio)
{
    if (o->inherit_stdio) {
        for (int i = 0; i < 3; i++) {
            stdio[i].flags = UV_INHERIT_FD;
            stdio[i].data.fd = i;
        }
        return 0;
    }
    /* stdin: /dev/null (UV_IGNORE), or the file asked for */
    stdio[0].flags = in_fd >= 0 ? UV_INHERIT_FD : UV_IGNORE;
    stdio[0].data.fd = in_fd;
    if (out_fd >= 0) {
        stdio[1].flags = stdio[2].flags = UV_INHERIT_FD;
        stdio[1].data.fd = stdio[2].data.fd = out_fd;
        return 0;
    }
    s->tail = malloc(SESSION_OUTPUT_TAIL);
    for (int i = 0; i < 2; i++) {
        int rc = uv_pipe_init(s->loop, &s->io->out[i], 0);
        if (rc) {
            set_err(s, "cannot set up the program's output: %s", uv_strerror(rc));
            return rc;
        }
        s->io->out[i].data = s;
        stdio[i + 1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
        stdio[i + 1].data.stream = (uv_stream_t *)&s->io->out[i];
    }
    return 0;
}

/* uv_spawn, then read its output. 0 or a libuv error with s's errmsg set. */
static int spawn(struct session *s, const struct session_opts *o, const char *python, char **args,
                 char **env, uv_stdio_container_t *stdio)
{
    uv_process_options_t po;
    memset(&po, 0, sizeof po);
    po.exit_cb = on_proc_exit;
    po.file = python;
    po.args = args;
    po.env = env;
    po.cwd = o->cwd;
    po.flags = s->detached ? UV_PROCESS_DETACHED : 0;
    po.stdio_count = 3;
    po.stdio = stdio;
    s->io->proc.data = s;
    s->start_ns = uv_hrtime();
    int rc = uv_spawn(s->loop, &s->io->proc, &po);
    if (rc) {
        set_err(s, "cannot start %s: %s", python, uv_strerror(rc));
        return rc;
    }
    s->proc_open = 1;
    s->pid = s->io->proc.pid;
    if (stdio[1].flags & UV_CREATE_PIPE)
        for (int i = 0; i < 2; i++) {
            s->out_open[i] = 1;
            /* unread, the pipe would fill and block the program: close it
             * (the program then gets EPIPE) and go on without its output */
            if (uv_read_start((uv_stream_t *)&s->io->out[i], alloc_buf, out_read)) {
                s->pending_closes++;
                uv_close((uv_handle_t *)&s->io->out[i], out_closed);
            }
        }
    return 0;
}

/* The timers and the agent's socket. 0 or a negative errno / libuv error
 * with s's errmsg set. */
static int setup_io(struct session *s)
{
    int rc = uv_timer_init(s->loop, &s->io->stop_timer);
    if (!rc) rc = uv_timer_init(s->loop, &s->io->drain_timer);
    if (rc) {
        set_err(s, "cannot set up a timer: %s", uv_strerror(rc));
        return rc;
    }
    s->io->stop_timer.data = s->io->drain_timer.data = s;
    s->io->listener.data = s;
    return make_socket(s);
}

/* The program's environment (new, free_env(env, *nown)), or NULL: the
 * agent's folder, socket and config, and the memory shim's preload. */
static char **program_env(const struct session *s, const struct session_opts *o,
                          const char *agent_dir, const char *config, int *nown)
{
    char *preload = NULL, *libdir = NULL;
    if (o->memory && o->attach_pid <= 0) shim_preload(agent_dir, &preload, &libdir);
    char **env = build_env(agent_dir, s->sockpath, config, preload, libdir, nown);
    free(preload);
    free(libdir);
    return env;
}

int session_start(uv_loop_t *loop, struct session *s, const struct session_opts *o,
                  const struct session_cbs *cb, void *ud, struct profile *store)
{
    memset(s, 0, sizeof *s);
    s->loop = loop;
    s->store = store;
    s->cb = *cb;
    s->ud = ud;
    s->exit_status = -1;
    s->detached = !o->inherit_stdio;
    int rc = check_opts(s, o, cb);
    if (rc) return rc;
    char agent_dir[PATH_MAX + 64];
    if (session_agent_dir(agent_dir, sizeof agent_dir)) {
        set_err(s, "the profiler agent was not found (looked in %s); set HOTLINE_AGENT_PATH",
                agent_dir);
        return -ENOPKG;
    }
    s->io = calloc(1, sizeof *s->io);
    if (!s->io) {
        set_err(s, "out of memory");
        return -ENOMEM;
    }

    /* From here on, every failure goes to `done`, the one exit: it frees
     * what this function made and, on failure, closes what was opened
     * (sync_teardown closes only the handles that were initialised). */
    char **args = NULL, **env = NULL, *config = NULL, *main_path = NULL;
    int nown = 0, in_fd = -1, out_fd = -1;
    rc = setup_io(s);
    if (rc) goto done;
    char cwd[PATH_MAX], venv_py[PATH_MAX], pidbuf[24], ivbuf[32];
    if (o->cwd)
        snprintf(cwd, sizeof cwd, "%s", o->cwd);
    else if (!getcwd(cwd, sizeof cwd))
        cwd[0] = 0;
    rc = -ENOMEM;
    main_path = record_program(o, cwd, store);
    if (!main_path) goto done;
    const char *python = pick_python(o, venv_py, sizeof venv_py);
    /* the helper's argv is the longest: 10 + 2 per include / exclude */
    args = calloc((size_t)o->nargs + 11 + 2 * (size_t)(o->ninclude + o->nexclude), sizeof *args);
    config = config_json(o, main_path);
    env = config ? program_env(s, o, agent_dir, config, &nown) : NULL;
    if (!args || !env) goto done; /* rc is -ENOMEM */
    fill_args(s, o, &python, args, pidbuf, sizeof pidbuf, ivbuf, sizeof ivbuf);
    uv_stdio_container_t stdio[3];
    if (!(rc = open_stdio_file(s, o, o->stdin_path, O_RDONLY, cwd, &in_fd)) &&
        !(rc = open_stdio_file(s, o, o->output_path, O_WRONLY | O_CREAT | O_TRUNC, cwd, &out_fd)) &&
        !(rc = setup_stdio(s, o, in_fd, out_fd, stdio)))
        rc = spawn(s, o, python, args, env, stdio);

done:
    if (in_fd >= 0) close(in_fd); /* the child has its copies */
    if (out_fd >= 0) close(out_fd);
    free(args);
    free(config);
    free(main_path);
    free_env(env, nown);
    if (rc) sync_teardown(s);
    return rc;
}
