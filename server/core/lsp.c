/* LSP core: message intake and queue, dispatch by method, lifecycle
 * (initialize / initialized / shutdown / exit), cancellation, text document
 * sync and settings. It knows no feature: the providers listed in
 * providers/list.c (lsp_provider.h) serve their own methods and commands,
 * and the core joins what several contribute (code lenses, code actions,
 * the command list). */
#include "core/lsp.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hotline_version.h"
#include "jsonrpc.h"
#include "core/notebook.h"
#include "core/registry.h"
#include "core/uri.h"

typedef void (*core_request_fn)(struct server *s, json_t *id, json_t *params);
typedef void (*core_notify_fn)(struct server *s, json_t *params);

static void h_initialize(struct server *s, json_t *id, json_t *params);
static void h_shutdown(struct server *s, json_t *id, json_t *params);
static void h_debug_state(struct server *s, json_t *id, json_t *params);
static void n_initialized(struct server *s, json_t *params);
static void n_exit(struct server *s, json_t *params);
static void n_did_open(struct server *s, json_t *params);
static void n_did_change(struct server *s, json_t *params);
static void n_did_close(struct server *s, json_t *params);
static void n_did_change_configuration(struct server *s, json_t *params);
static void n_progress_cancel(struct server *s, json_t *params);

/* The core's own methods; the joined ones (executeCommand, codeLens,
 * codeAction) ask every provider. Anything else: the providers' tables. */
static const struct {
    const char *method;
    core_request_fn request;
} request_table[] = {
    {"initialize", h_initialize},
    {"shutdown", h_shutdown},
    {"hotline/debug/state", h_debug_state},
    {"workspace/executeCommand", lsp_registry_execute_command},
    {"textDocument/codeLens", lsp_registry_code_lens},
    {"textDocument/codeAction", lsp_registry_code_action},
};

static const struct {
    const char *method;
    core_notify_fn notify;
} notify_table[] = {
    {"initialized", n_initialized},
    {"exit", n_exit},
    {"textDocument/didOpen", n_did_open},
    {"textDocument/didChange", n_did_change},
    {"textDocument/didClose", n_did_close},
    {"notebookDocument/didOpen", lsp_nb_did_open},
    {"notebookDocument/didChange", lsp_nb_did_change},
    {"notebookDocument/didClose", lsp_nb_did_close},
    {"workspace/didChangeConfiguration", n_did_change_configuration},
    {"window/workDoneProgress/cancel", n_progress_cancel},
};

/* ---- output ------------------------------------------------------------ */

/* A client that stops reading must not make the server grow: live messages,
 * which the next one of their kind supersedes, are held back (newest only,
 * by key) while anything the client has not read is pending, and go out
 * once it has read everything; past out_cap unread bytes the client is
 * called blocked: stderr says so, other notifications are dropped and the
 * live stream stops (the providers' output_live hook) until it reads again. Replies are never
 * dropped: the client asked for them and may be waiting. */

static size_t out_pending(struct server *s)
{
    return s->out_pending ? s->out_pending(s) : 0;
}

/* The hold-back key of a live message into key, or 0 for any other message.
 * A $/progress that is not a report (begin, end) returns -1 with its
 * token's key: a report held for that token must not follow it. */
static int live_key(json_t *msg, char *key, size_t n)
{
    const char *m = json_string_value(json_object_get(msg, "method"));
    json_t *p = json_object_get(msg, "params");
    if (!m) return 0;
    if (!strcmp(m, "hotline/executing") || !strcmp(m, "workspace/inlayHint/refresh") ||
        !strcmp(m, "workspace/codeLens/refresh")) {
        snprintf(key, n, "%s", m);
        return 1;
    }
    if (!strcmp(m, "textDocument/publishDiagnostics")) {
        const char *uri = json_string_value(json_object_get(p, "uri"));
        return (size_t)snprintf(key, n, "%s %s", m, uri ? uri : "") < n;
    }
    if (!strcmp(m, "$/progress")) {
        json_t *tok = json_object_get(p, "token");
        const char *kind = json_string_value(json_object_get(json_object_get(p, "value"), "kind"));
        if (!json_is_string(tok) ||
            (size_t)snprintf(key, n, "%s %s", m, json_string_value(tok)) >= n)
            return 0;
        return kind && !strcmp(kind, "report") ? 1 : -1;
    }
    return 0;
}

static void out_write(struct server *s, const char *buf, size_t len)
{
    if (s->write && s->state != LSP_EXITED) s->write(s, buf, len);
}

static void out_encode(struct server *s, json_t *msg)
{
    size_t len;
    char *buf = rpc_encode(msg, &len);
    json_decref(msg);
    if (!buf) {
        fprintf(stderr, "hotline: cannot encode an outgoing message\n");
        return;
    }
    out_write(s, buf, len);
    free(buf);
}

/* Send what was held back, oldest key first, while the client keeps up. */
static void out_flush_held(struct server *s)
{
    while (json_object_size(s->out_held) && !out_pending(s) && s->state != LSP_EXITED) {
        void *it = json_object_iter(s->out_held);
        const char *key = json_object_iter_key(it);
        json_t *msg = json_incref(json_object_iter_value(it));
        json_object_del(s->out_held, key);
        out_encode(s, msg);
    }
}

void lsp_send(struct server *s, json_t *msg)
{
    if (!msg) return;
    char key[1024];
    int live = live_key(msg, key, sizeof key);
    if (live < 0) json_object_del(s->out_held, key);
    size_t pending = out_pending(s);
    if (live > 0 && (pending || json_object_size(s->out_held))) {
        /* the client has not read everything: hold it, replacing the one
         * it supersedes (a new key beyond the cap: the oldest goes) */
        if (!s->out_held) s->out_held = json_object();
        if (!json_object_get(s->out_held, key) && json_object_size(s->out_held) >= LSP_OUT_MAX_HELD)
            json_object_del(s->out_held, json_object_iter_key(json_object_iter(s->out_held)));
        if (json_object_set_new(s->out_held, key, msg)) s->out_dropped++;
        return;
    }
    size_t cap = s->out_cap ? s->out_cap : LSP_OUT_CAP;
    if (pending >= cap && !s->out_blocked) {
        s->out_blocked = 1;
        fprintf(stderr,
                "hotline: the client is not reading (%zu bytes unread): live updates stop and "
                "notifications are dropped until it reads again; replies are kept\n",
                pending);
        FOR_PROVIDERS(s, i, p, self)
        if (p->output_live) p->output_live(s, self, 0);
    }
    if (s->out_blocked && !json_object_get(msg, "result") && !json_object_get(msg, "error")) {
        s->out_dropped++;
        json_decref(msg);
        return;
    }
    out_encode(s, msg);
}

void lsp_out_drained(struct server *s)
{
    if (out_pending(s)) return;
    if (s->out_blocked) {
        s->out_blocked = 0;
        fprintf(stderr, "hotline: the client reads again (%ld notifications were dropped)\n",
                s->out_dropped);
        s->out_dropped = 0;
        FOR_PROVIDERS(s, i, p, self)
        if (p->output_live) p->output_live(s, self, 1);
    }
    out_flush_held(s);
}

void lsp_reply(struct server *s, json_t *id, json_t *result)
{
    lsp_send(s, rpc_response(id, result));
}

void lsp_reply_raw(struct server *s, json_t *id, const char *result, size_t len)
{
    char *sid = json_dumps(id ? id : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
    if (!sid) {
        fprintf(stderr, "hotline: cannot encode an outgoing message\n");
        return;
    }
    static const char pre[] = "{\"jsonrpc\":\"2.0\",\"id\":", mid[] = ",\"result\":";
    size_t nid = strlen(sid), body = sizeof pre - 1 + nid + sizeof mid - 1 + len + 1;
    char head[64];
    int hn = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", body);
    char *buf = malloc((size_t)hn + body);
    if (!buf) {
        free(sid);
        fprintf(stderr, "hotline: cannot encode an outgoing message\n");
        return;
    }
    /* the frame written in one piece, as lsp_send does */
    char *w = buf;
    memcpy(w, head, (size_t)hn), w += hn;
    memcpy(w, pre, sizeof pre - 1), w += sizeof pre - 1;
    memcpy(w, sid, nid), w += nid;
    memcpy(w, mid, sizeof mid - 1), w += sizeof mid - 1;
    memcpy(w, result, len), w += len;
    *w++ = '}';
    out_write(s, buf, (size_t)(w - buf)); /* a reply: never held or dropped */
    free(buf);
    free(sid);
}

void lsp_reply_error(struct server *s, json_t *id, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lsp_send(s, rpc_error_response(id, code, msg, NULL));
}

void lsp_notify(struct server *s, const char *method, json_t *params)
{
    lsp_send(s, rpc_notification(method, params));
}

static void vlog_to(struct server *s, const char *method, int always, enum lsp_msg_type type,
                    const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    static const char *names[] = {"", "error", "warning", "info", "log"};
    fprintf(stderr, "hotline: %s: %s\n", names[type], msg);
    if (s->state == LSP_UNINITIALIZED || s->state == LSP_EXITED) return;
    if (!always && (int)type > s->log_level) return;
    lsp_notify(s, method, json_pack("{s:i, s:s}", "type", (int)type, "message", msg));
}

void lsp_log(struct server *s, enum lsp_msg_type type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog_to(s, "window/logMessage", 0, type, fmt, ap);
    va_end(ap);
}

void lsp_show(struct server *s, enum lsp_msg_type type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog_to(s, "window/showMessage", 1, type, fmt, ap);
    va_end(ap);
}

/* Borrowed: the value at a dotted path under cur, or NULL. */
static json_t *dotted(json_t *cur, const char *path)
{
    char key[128];
    while (cur && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof key) return NULL;
        memcpy(key, path, n);
        key[n] = 0;
        cur = json_is_object(cur) ? json_object_get(cur, key) : NULL;
        path += n + (dot ? 1 : 0);
    }
    return cur;
}

json_t *lsp_client_cap(struct server *s, const char *path)
{
    return dotted(s->client_caps, path);
}

json_t *lsp_setting(struct server *s, const char *path)
{
    return dotted(s->settings, path);
}

double lsp_setting_num(struct server *s, const char *path, double dflt)
{
    json_t *v = dotted(s->settings, path);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

int lsp_setting_bool(struct server *s, const char *path, int dflt)
{
    json_t *v = dotted(s->settings, path);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* ---- intake -------------------------------------------------------------- */

static void handle(struct server *s, json_t *msg, int cancelled);
static void on_idle(uv_idle_t *h);

static void schedule(struct server *s)
{
    if (!s->loop) {
        lsp_drain(s);
        return;
    }
    if (!s->idle_active && s->qhead) {
        uv_idle_start(&s->idle, on_idle);
        s->idle_active = 1;
    }
}

static int same_id(json_t *a, json_t *b)
{
    return a && b && json_equal(a, b);
}

/* $/cancelRequest: mark a queued request; it is answered -32800 when its
 * turn comes. A request already answered is left alone (LSP allows that). */
static void cancel_request(struct server *s, json_t *params)
{
    json_t *id = json_is_object(params) ? json_object_get(params, "id") : NULL;
    if (!json_is_string(id) && !json_is_integer(id)) {
        lsp_log(s, LSP_MSG_WARNING, "$/cancelRequest without a valid id");
        return;
    }
    FOR_PROVIDERS(s, i, p, self)
    if (p->cancel && p->cancel(s, self, id)) /* a request a provider still works on */
        return;
    for (struct lsp_queued *q = s->qhead; q; q = q->next)
        if (same_id(json_object_get(q->msg, "id"), id) && json_object_get(q->msg, "method"))
            q->cancelled = 1;
}

/* Answer request id (borrowed) -32603 "out of memory" from stack buffers:
 * the path that needs it has just failed to allocate. json_dumpb writes a
 * scalar id into the caller's buffer without allocating. */
static void reply_no_memory(struct server *s, json_t *id)
{
    char sid[128], body[256], frame[320];
    size_t nid = json_dumpb(id, sid, sizeof sid, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!nid || nid >= sizeof sid) {
        fprintf(stderr, "hotline: out of memory: a request was dropped unanswered\n");
        return;
    }
    int nb = snprintf(body, sizeof body,
                      "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"error\":{\"code\":%d,"
                      "\"message\":\"out of memory: request dropped\"}}",
                      (int)nid, sid, RPC_INTERNAL_ERROR);
    int nf = snprintf(frame, sizeof frame, "Content-Length: %d\r\n\r\n%s", nb, body);
    if (nb > 0 && nf > 0 && (size_t)nf < sizeof frame) out_write(s, frame, (size_t)nf);
}

static void enqueue(struct server *s, json_t *msg)
{
    if (s->qlen >= LSP_MAX_QUEUED) {
        json_t *id = json_object_get(msg, "id");
        if (json_object_get(msg, "method") && id)
            lsp_reply_error(s, id, LSP_SERVER_CANCELLED,
                            "server overloaded: too many queued messages");
        json_decref(msg);
        return;
    }
    struct lsp_queued *q = calloc(1, sizeof *q);
    if (!q) {
        /* a request must still be answered: the client would wait forever */
        json_t *id = json_object_get(msg, "id");
        if (json_object_get(msg, "method") && id) reply_no_memory(s, id);
        json_decref(msg);
        return;
    }
    q->msg = msg;
    if (s->qtail)
        s->qtail->next = q;
    else
        s->qhead = q;
    s->qtail = q;
    s->qlen++;
}

static void on_message(void *ud, const char *body, size_t len)
{
    struct server *s = ud;
    if (s->state == LSP_EXITED) return;
    json_error_t err;
    json_t *msg = json_loadb(body, len, JSON_ALLOW_NUL, &err);
    if (!msg) {
        lsp_log(s, LSP_MSG_ERROR, "malformed JSON (%s at byte %d)", err.text, err.position);
        lsp_reply_error(s, NULL, RPC_PARSE_ERROR, "Parse error: %s", err.text);
        return;
    }
    const char *method = NULL;
    json_t *params = NULL;
    if (rpc_classify(msg, &method, NULL, &params, NULL) == RPC_KIND_NOTIFICATION &&
        !strcmp(method, "$/cancelRequest")) {
        cancel_request(s, params);
        json_decref(msg);
        return;
    }
    enqueue(s, msg);
}

static void on_frame_error(void *ud, enum rpc_frame_error e, const char *detail)
{
    struct server *s = ud;
    (void)e;
    lsp_log(s, LSP_MSG_ERROR, "bad message framing: %s", detail ? detail : "?");
}

void lsp_feed(struct server *s, const char *data, size_t len)
{
    if (s->state == LSP_EXITED) return;
    if (rpc_reader_feed(&s->reader, data, len, on_message, on_frame_error, s) < 0)
        lsp_log(s, LSP_MSG_ERROR, "out of memory reading a message");
    schedule(s);
}

/* Handle up to max queued messages; stops early once the server exits. */
static void handle_queued(struct server *s, size_t max)
{
    for (size_t i = 0; i < max && s->qhead && s->state != LSP_EXITED; i++) {
        struct lsp_queued *q = s->qhead;
        s->qhead = q->next;
        if (!s->qhead) s->qtail = NULL;
        s->qlen--;
        handle(s, q->msg, q->cancelled);
        json_decref(q->msg);
        free(q);
    }
}

void lsp_drain(struct server *s)
{
    handle_queued(s, (size_t)-1);
}

static void on_idle(uv_idle_t *h)
{
    struct server *s = h->data;
    handle_queued(s, 64); /* a bounded batch per loop turn keeps reads and timers flowing */
    if (!s->qhead || s->state == LSP_EXITED) {
        uv_idle_stop(&s->idle);
        s->idle_active = 0;
    }
}

/* ---- dispatch ------------------------------------------------------------ */

static void begin_exit(struct server *s, int code)
{
    if (s->state == LSP_EXITED) return;
    s->exit_code = code;
    s->state = LSP_EXITED;
    if (s->on_exit) s->on_exit(s);
}

void lsp_eof(struct server *s)
{
    lsp_drain(s); /* what arrived before EOF still counts */
    begin_exit(s, s->state == LSP_SHUT_DOWN ? 0 : 1);
}

static void handle(struct server *s, json_t *msg, int cancelled)
{
    const char *method = NULL, *why = NULL;
    json_t *id = NULL, *params = NULL;
    enum rpc_kind kind = rpc_classify(msg, &method, &id, &params, &why);

    /* `exit` always exits, whatever else is wrong with it (bad params, an id):
     * a client that sends it is gone, and a server left running is an orphan */
    if (kind != RPC_KIND_RESPONSE && method && !strcmp(method, "exit")) {
        n_exit(s, NULL);
        return;
    }
    switch (kind) {
    case RPC_KIND_INVALID:
        lsp_log(s, LSP_MSG_ERROR, "invalid message: %s", why ? why : "?");
        lsp_reply_error(s, id, RPC_INVALID_REQUEST, "Invalid request: %s", why ? why : "?");
        return;
    case RPC_KIND_RESPONSE: /* answers to our requests (lsp_call) */
        if (s->state == LSP_RUNNING)
            lsp_call_answered(s, json_object_get(msg, "id"), json_object_get(msg, "result"),
                              json_object_get(msg, "error"));
        return;
    case RPC_KIND_NOTIFICATION:
        if (s->state == LSP_UNINITIALIZED && strcmp(method, "exit"))
            return; /* LSP: notifications before initialize are dropped */
        for (size_t i = 0; i < sizeof notify_table / sizeof *notify_table; i++)
            if (!strcmp(method, notify_table[i].method)) {
                notify_table[i].notify(s, params);
                return;
            }
        void *nself;
        const struct lsp_method *nm = lsp_registry_method(s, method, 0, &nself);
        if (nm) {
            nm->notify(s, nself, params);
            return;
        }
        if (strncmp(method, "$/", 2)) lsp_log(s, LSP_MSG_LOG, "ignored notification %s", method);
        return;
    case RPC_KIND_REQUEST:
        break;
    }
    if (cancelled) {
        lsp_reply_error(s, id, LSP_REQUEST_CANCELLED, "request %s cancelled", method);
        return;
    }
    if (s->state == LSP_UNINITIALIZED && strcmp(method, "initialize")) {
        lsp_reply_error(s, id, LSP_SERVER_NOT_INITIALIZED, "server not initialized");
        return;
    }
    if (s->state == LSP_SHUT_DOWN) {
        lsp_reply_error(s, id, RPC_INVALID_REQUEST, "server is shutting down");
        return;
    }
    core_request_fn core = NULL;
    for (size_t i = 0; i < sizeof request_table / sizeof *request_table && !core; i++)
        if (!strcmp(method, request_table[i].method)) core = request_table[i].request;
    void *rself = NULL;
    const struct lsp_method *rm = core ? NULL : lsp_registry_method(s, method, 1, &rself);
    if (core || rm) {
        /* HOTLINE_LSP_TIMING=1: one stderr line per request with the time the
         * server spent on it (handler + encoding + handing the reply to the
         * transport), for tests/bench/lsp_bench.py */
        const char *tm = getenv("HOTLINE_LSP_TIMING");
        uint64_t t0 = tm && *tm == '1' ? uv_hrtime() : 0;
        if (core)
            core(s, id, params);
        else
            rm->request(s, rself, id, params);
        if (t0)
            fprintf(stderr, "hotline: timing %s %.3f ms\n", method,
                    (double)(uv_hrtime() - t0) / 1e6);
        return;
    }
    lsp_reply_error(s, id, RPC_METHOD_NOT_FOUND, "method not found: %s", method);
}

static void n_progress_cancel(struct server *s, json_t *params)
{
    lsp_progress_cancel(s, json_string_value(json_object_get(params, "token")));
}

/* Document sync: the profile view's anchors first, then the providers. */
static void doc_hook_opened(struct server *s, struct doc *d)
{
    lsp_pview_doc_opened(s, d);
    FOR_PROVIDERS(s, i, p, self)
    if (p->doc_opened) p->doc_opened(s, self, d);
}

static void doc_hook_closed(struct server *s, const char *uri)
{
    lsp_pview_doc_closed(s, uri);
    FOR_PROVIDERS(s, i, p, self)
    if (p->doc_closed) p->doc_closed(s, self, uri);
}

/* ---- lifecycle ----------------------------------------------------------- */

static const char *choose_encoding(struct server *s)
{
    json_t *offered = lsp_client_cap(s, "general.positionEncodings");
    size_t i;
    json_t *v;
    s->enc = POS_UTF16;
    if (json_is_array(offered)) {
        json_array_foreach(offered, i, v)
        {
            enum pos_encoding e;
            if (json_is_string(v) && !pos_encoding_parse(json_string_value(v), &e)) {
                s->enc = e; /* the client's first choice that we support */
                break;
            }
        }
    }
    return pos_encoding_name(s->enc);
}

static void apply_settings(struct server *s)
{
    json_t *lvl = json_object_get(s->settings, "logLevel");
    if (json_is_string(lvl)) {
        const char *v = json_string_value(lvl);
        s->log_level = !strcmp(v, "error")     ? LSP_MSG_ERROR
                       : !strcmp(v, "warning") ? LSP_MSG_WARNING
                       : !strcmp(v, "info")    ? LSP_MSG_INFO
                       : !strcmp(v, "log")     ? LSP_MSG_LOG
                                               : s->log_level;
    }
}

/* Merge src's keys into dst (both objects), recursively for objects. */
static void merge_settings(json_t *dst, json_t *src)
{
    const char *k;
    json_t *v;
    json_object_foreach(src, k, v)
    {
        json_t *cur = json_object_get(dst, k);
        if (json_is_object(cur) && json_is_object(v))
            merge_settings(cur, v);
        else
            json_object_set(dst, k, v);
    }
}

static void client_gone(struct server *s)
{
    fprintf(stderr, "hotline: client process %ld is gone, exiting\n", s->client_pid);
    begin_exit(s, 1);
}

static void on_parent_check(uv_timer_t *t)
{
    struct server *s = t->data;
    if (s->client_pid > 0 && kill((pid_t)s->client_pid, 0) < 0 && errno == ESRCH) client_gone(s);
}

static void on_parent_exit(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    struct server *s = p->data;
    uv_poll_stop(p);
    client_gone(s);
}

/* Watch the client's processId. The pid is only watched when it is visible
 * here: a client in another PID namespace (a container, a sandboxed editor)
 * sends a pid that names no process of ours (or someone else's), and a pid
 * never seen alive must not make us exit. A pidfd follows that very process
 * (no pid reuse) and wakes us at once; kill(pid, 0) every 3 s is the
 * fallback where pidfds are missing. */
static void watch_client(struct server *s, long pid)
{
    if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
        lsp_log(
            s, LSP_MSG_INFO,
            "client processId %ld is not visible here (another PID namespace?): not watching it",
            pid);
        return;
    }
    s->client_pid = pid;
    if (!s->has_loop_handles) return;
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (fd >= 0 && !uv_poll_init(s->loop, &s->parent_poll, fd)) {
        s->parent_fd = fd;
        s->parent_poll.data = s;
        uv_poll_start(&s->parent_poll, UV_READABLE, on_parent_exit);
        return;
    }
    if (fd >= 0) close(fd);
#endif
    uv_timer_start(&s->parent_timer, on_parent_check, 3000, 3000);
}

static void h_initialize(struct server *s, json_t *id, json_t *params)
{
    if (s->state != LSP_UNINITIALIZED) {
        lsp_reply_error(s, id, RPC_INVALID_REQUEST, "initialize may be sent only once");
        return;
    }
    if (!json_is_object(params)) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS, "initialize needs params");
        return;
    }
    json_t *caps = json_object_get(params, "capabilities");
    json_decref(s->client_caps);
    s->client_caps = json_is_object(caps) ? json_incref(caps) : json_object();
    json_t *opts = json_object_get(params, "initializationOptions");
    json_decref(s->init_options);
    s->init_options = json_is_object(opts) ? json_deep_copy(opts) : json_object();
    merge_settings(s->settings, s->init_options);
    apply_settings(s);

    json_t *exp = lsp_client_cap(s, "experimental.hotlineExecuting");
    json_t *optin = json_object_get(s->init_options, "executing");
    s->executing_optin = json_is_true(exp) || json_is_true(optin);

    json_t *pid = json_object_get(params, "processId");
    if (json_is_integer(pid) && json_integer_value(pid) > 0 && json_integer_value(pid) <= INT_MAX)
        watch_client(s, (long)json_integer_value(pid));

    const char *root = NULL;
    json_t *folders = json_object_get(params, "workspaceFolders");
    json_t *ru = json_object_get(params, "rootUri");
    if (json_is_array(folders) && json_array_size(folders) > 0)
        root = json_string_value(json_object_get(json_array_get(folders, 0), "uri"));
    if (!root && json_is_string(ru)) root = json_string_value(ru);
    if (root) {
        free(s->root_path);
        s->root_path = lsp_uri_to_path(root);
    } else if (json_is_string(json_object_get(params, "rootPath"))) {
        free(s->root_path);
        s->root_path = strdup(json_string_value(json_object_get(params, "rootPath")));
    }

    const char *enc = choose_encoding(s);
    json_t *sync = json_pack("{s:b, s:i}", "openClose", 1, "change", 2);
    json_t *capabilities = json_pack("{s:s, s:o, s:o}", "positionEncoding", enc, "textDocumentSync",
                                     sync, "notebookDocumentSync", lsp_nb_capability());
    lsp_registry_capabilities(s, capabilities);
    s->state = LSP_RUNNING;
    lsp_reply(s, id,
              json_pack("{s:o, s:{s:s, s:s}}", "capabilities", capabilities, "serverInfo", "name",
                        "hotline", "version", HOTLINE_VERSION));
}

static void n_initialized(struct server *s, json_t *params)
{
    (void)params;
    lsp_log(s, LSP_MSG_INFO, "hotline %s ready (positions in %s)", HOTLINE_VERSION,
            pos_encoding_name(s->enc));
    FOR_PROVIDERS(s, i, p, self)
    if (p->initialized) p->initialized(s, self);
}

static void h_shutdown(struct server *s, json_t *id, json_t *params)
{
    (void)params;
    s->state = LSP_SHUT_DOWN;
    FOR_PROVIDERS(s, i, p, self) /* e.g. a profile still loading would never be shown */
    if (p->shutdown) p->shutdown(s, self);
    lsp_reply(s, id, json_null());
}

static void n_exit(struct server *s, json_t *params)
{
    (void)params;
    begin_exit(s, s->state == LSP_SHUT_DOWN ? 0 : 1);
}

/* hotline/debug/state: what the server believes (settings, encoding, one
 * document's text and version). For tests and bug reports; changes nothing. */
static void h_debug_state(struct server *s, json_t *id, json_t *params)
{
    json_t *r =
        json_pack("{s:s, s:O, s:i, s:b}", "positionEncoding", pos_encoding_name(s->enc), "settings",
                  s->settings, "documents", (int)s->docs.count, "executing", s->executing_optin);
    json_object_set_new(r, "notebooks", lsp_nb_debug(s));
    FOR_PROVIDERS(s, i, p, self)
    if (p->debug_state) p->debug_state(s, self, r);
    const char *uri = json_string_value(json_object_get(params, "uri"));
    struct doc *d = uri ? doc_find(&s->docs, uri) : NULL;
    if (d)
        json_object_set_new(r, "document",
                            json_pack("{s:s%, s:i, s:i}", "text", d->text, d->len, "version",
                                      d->version, "lineCount", (int)d->nlines));
    lsp_reply(s, id, r);
}

/* ---- documents ----------------------------------------------------------- */

static int text_document(struct server *s, json_t *params, const char *what, const char **uri,
                         json_t **td)
{
    *td = json_is_object(params) ? json_object_get(params, "textDocument") : NULL;
    *uri = json_string_value(json_object_get(*td, "uri"));
    if (!*uri) {
        lsp_log(s, LSP_MSG_ERROR, "%s without textDocument.uri", what);
        return -EINVAL;
    }
    return 0;
}

int lsp__doc_open(struct server *s, json_t *td, const char *what)
{
    const char *uri = json_string_value(json_object_get(td, "uri"));
    json_t *text = json_object_get(td, "text");
    if (!uri) {
        lsp_log(s, LSP_MSG_ERROR, "%s without a document uri", what);
        return -EINVAL;
    }
    if (!json_is_string(text)) {
        lsp_log(s, LSP_MSG_ERROR, "%s %s without text", what, uri);
        return -EINVAL;
    }
    int version = (int)json_integer_value(json_object_get(td, "version"));
    int rc = doc_open(&s->docs, uri, json_string_value(json_object_get(td, "languageId")), version,
                      json_string_value(text), json_string_length(text));
    if (rc)
        lsp_log(s, LSP_MSG_ERROR, "cannot open %s: %s", uri, strerror(-rc));
    else
        doc_hook_opened(s, doc_find(&s->docs, uri));
    return rc;
}

static void n_did_open(struct server *s, json_t *params)
{
    const char *uri;
    json_t *td;
    if (text_document(s, params, "didOpen", &uri, &td)) return;
    lsp__doc_open(s, td, "didOpen");
}

/* A change could not be applied (-ENOMEM, -EFBIG): our copy of uri no longer
 * matches the editor's, and its anchors would put hints on the wrong lines.
 * LSP has no way to ask the client for the full text again, so the document
 * is closed on our side (anchors dropped, no hints, lenses or Optimize on it)
 * until the editor reopens it, and the user is told so. */
static void doc_desync(struct server *s, const char *uri, int rc)
{
    lsp_log(s, LSP_MSG_ERROR,
            "didChange %s: %s: the server's copy is out of step; closed it until it is reopened",
            uri, strerror(-rc));
    lsp_show(s, LSP_MSG_WARNING,
             "Hotline: an edit to %s could not be applied (%s); its profile hints are off "
             "until you close and reopen it",
             uri, strerror(-rc));
    doc_close(&s->docs, uri);
    doc_hook_closed(s, uri);
    /* hints already shown for it go away */
    if (json_is_true(lsp_client_cap(s, "workspace.inlayHint.refreshSupport")))
        lsp_call(s, "workspace/inlayHint/refresh", NULL, NULL, NULL);
    if (json_is_true(lsp_client_cap(s, "workspace.codeLens.refreshSupport")))
        lsp_call(s, "workspace/codeLens/refresh", NULL, NULL, NULL);
}

void lsp__doc_change(struct server *s, const char *uri, json_t *version, json_t *changes)
{
    struct doc *d = doc_find(&s->docs, uri);
    if (!d) {
        lsp_log(s, LSP_MSG_ERROR, "didChange for %s, which is not open", uri);
        return;
    }
    if (!json_is_array(changes)) {
        lsp_log(s, LSP_MSG_ERROR, "didChange %s without contentChanges", uri);
        return;
    }
    if (json_is_integer(version) && json_integer_value(version) <= d->version)
        lsp_log(s, LSP_MSG_WARNING, "didChange %s: version %d after %d", uri,
                (int)json_integer_value(version), d->version);
    size_t i;
    json_t *c;
    json_array_foreach(changes, i, c)
    {
        json_t *text = json_object_get(c, "text");
        json_t *range = json_object_get(c, "range");
        if (!json_is_string(text)) {
            lsp_log(s, LSP_MSG_ERROR, "didChange %s: change %zu has no text", uri, i);
            continue;
        }
        json_int_t l0 = 0, c0 = 0, l1 = 0, c1 = 0;
        int has_range = range != NULL;
        if (has_range && json_unpack(range, "{s:{s:I, s:I}, s:{s:I, s:I}}", "start", "line", &l0,
                                     "character", &c0, "end", "line", &l1, "character", &c1)) {
            lsp_log(s, LSP_MSG_ERROR, "didChange %s: change %zu has a malformed range", uri, i);
            continue;
        }
        if (l0 < 0 || c0 < 0 || l1 < 0 || c1 < 0) {
            lsp_log(s, LSP_MSG_ERROR, "didChange %s: negative position", uri);
            continue;
        }
        struct doc_edit edit;
        int rc =
            doc_apply_change(d, has_range, (uint32_t)l0, (uint32_t)c0, (uint32_t)l1, (uint32_t)c1,
                             json_string_value(text), json_string_length(text), s->enc, &edit);
        if (rc == -ERANGE) {
            lsp_log(s, LSP_MSG_WARNING, "didChange %s: range out of the document, clamped", uri);
        } else if (rc) {
            doc_desync(s, uri, rc); /* d is gone; later changes cannot apply either */
            return;
        }
        lsp_nb_doc_edited(s, d); /* a cell's hash first: the view asks for it */
        lsp_pview_doc_edited(s, d, &edit);
        FOR_PROVIDERS(s, k, p, self)
        if (p->doc_edited) p->doc_edited(s, self, d, &edit);
    }
    if (json_is_integer(version)) d->version = (int)json_integer_value(version);
}

static void n_did_change(struct server *s, json_t *params)
{
    const char *uri;
    json_t *td;
    if (text_document(s, params, "didChange", &uri, &td)) return;
    lsp__doc_change(s, uri, json_object_get(td, "version"),
                    json_object_get(params, "contentChanges"));
}

int lsp__doc_close(struct server *s, const char *uri)
{
    int rc = doc_close(&s->docs, uri);
    if (rc)
        lsp_log(s, LSP_MSG_WARNING, "didClose for %s, which is not open", uri);
    else
        doc_hook_closed(s, uri);
    return rc;
}

static void n_did_close(struct server *s, json_t *params)
{
    const char *uri;
    json_t *td;
    if (text_document(s, params, "didClose", &uri, &td)) return;
    lsp__doc_close(s, uri);
}

static void n_did_change_configuration(struct server *s, json_t *params)
{
    json_t *settings = json_is_object(params) ? json_object_get(params, "settings") : NULL;
    if (!json_is_object(settings)) return;
    /* clients send either {"hotline": {...}} or the section itself */
    json_t *ours = json_object_get(settings, "hotline");
    merge_settings(s->settings, json_is_object(ours) ? ours : settings);
    apply_settings(s);
    FOR_PROVIDERS(s, i, p, self)
    if (p->settings_changed) p->settings_changed(s, self);
}

/* ---- setup --------------------------------------------------------------- */

int lsp_server_init(struct server *s, uv_loop_t *loop, size_t max_message)
{
    memset(s, 0, sizeof *s);
    s->loop = loop;
    s->enc = POS_UTF16;
    s->log_level = LSP_MSG_INFO;
    s->parent_fd = -1;
    s->client_caps = json_object();
    s->init_options = json_object();
    s->settings = json_object();
    if (!s->client_caps || !s->init_options || !s->settings) return -ENOMEM;
    rpc_reader_init(&s->reader, max_message);
    doc_store_init(&s->docs);
    if (loop) {
        uv_idle_init(loop, &s->idle);
        s->idle.data = s;
        uv_timer_init(loop, &s->parent_timer);
        s->parent_timer.data = s;
        s->has_loop_handles = 1;
    }
    for (size_t i = 0; lsp_providers[i]; i++) {
        if (i >= LSP_MAX_PROVIDERS) return -E2BIG;
        int rc = lsp_providers[i]->init ? lsp_providers[i]->init(s, &s->pself[i]) : 0;
        if (rc) return rc;
    }
    return 0;
}

void lsp_server_close(struct server *s)
{
    if (!s->has_loop_handles) return;
    /* e.g. kills the program we run, if any; the loop finishes closing it */
    FOR_PROVIDERS(s, i, p, self)
    if (p->close) p->close(s, self);
    uv_close((uv_handle_t *)&s->idle, NULL);
    uv_close((uv_handle_t *)&s->parent_timer, NULL);
    if (s->parent_fd >= 0) {
        uv_close((uv_handle_t *)&s->parent_poll, NULL);
        close(s->parent_fd); /* uv_close does not close a polled fd */
        s->parent_fd = -1;
    }
    s->has_loop_handles = 0;
}

void lsp_server_free(struct server *s)
{
    while (s->qhead) {
        struct lsp_queued *q = s->qhead;
        s->qhead = q->next;
        json_decref(q->msg);
        free(q);
    }
    s->qtail = NULL;
    rpc_reader_free(&s->reader);
    FOR_PROVIDERS(s, i, p, self)
    if (p->free) p->free(s, self);
    memset(s->pself, 0, sizeof s->pself);
    lsp_pview_free(&s->view);
    lsp_nb_free(&s->nbs);
    doc_store_free(&s->docs);
    json_decref(s->client_caps);
    json_decref(s->init_options);
    json_decref(s->settings);
    json_decref(s->out_held);
    json_decref(s->interp_ran);
    free(s->root_path);
}
