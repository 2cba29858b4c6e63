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
#include "core/docsync.h"
#include "core/params.h"
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
static void h_execute_command(struct server *s, json_t *id, json_t *params);
static void h_code_lens(struct server *s, json_t *id, json_t *params);
static void h_code_action(struct server *s, json_t *id, json_t *params);
static void n_did_change_configuration(struct server *s, json_t *params);
static void n_progress_cancel(struct server *s, json_t *params);

/* The core's own methods; the joined ones (executeCommand, codeLens,
 * codeAction) ask every provider. Anything else: the providers' tables. */
static const struct {
    const char *method;
    core_request_fn request;
    const char *params; /* the shape checked at the door (params.h), NULL: any */
} request_table[] = {
    {"initialize", h_initialize, ""},
    {"shutdown", h_shutdown, NULL},
    {"hotline/debug/state", h_debug_state, NULL},
    {"workspace/executeCommand", h_execute_command, "command:s"},
    {"textDocument/codeLens", h_code_lens, "textDocument.uri:s"},
    {"textDocument/codeAction", h_code_action,
     "textDocument.uri:s range.start.line:i range.start.character:i range.end.line:i "
     "range.end.character:i"},
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
    {"workspace/didChangeConfiguration", n_did_change_configuration},
    {"window/workDoneProgress/cancel", n_progress_cancel},
};

/* ---- intake -------------------------------------------------------------- */

static void handle(struct server *s, json_t *msg, int cancelled);
static void on_idle(uv_idle_t *h);

static void schedule(struct server *s)
{
    if (!s->f.loop) {
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
        lsp_log(&s->f, LSP_MSG_WARNING, "$/cancelRequest without a valid id");
        return;
    }
    FOR_PROVIDERS(&s->f, i, p, self)
    if (p->cancel && p->cancel(&s->f, self, id)) /* a request a provider still works on */
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
    if (nb > 0 && nf > 0 && (size_t)nf < sizeof frame) lsp_out_write(&s->out, frame, (size_t)nf);
}

static void enqueue(struct server *s, json_t *msg)
{
    if (s->qlen >= LSP_MAX_QUEUED) {
        json_t *id = json_object_get(msg, "id");
        if (json_object_get(msg, "method") && id) { /* answered here, at intake */
            lsp_out_request_begin(&s->out, id);
            lsp_reply_error(&s->f, id, LSP_SERVER_CANCELLED,
                            "server overloaded: too many queued messages");
            lsp_out_request_end(&s->f, NULL);
        }
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
        lsp_log(&s->f, LSP_MSG_ERROR, "malformed JSON (%s at byte %d)", err.text, err.position);
        lsp_reply_error(&s->f, NULL, RPC_PARSE_ERROR, "Parse error: %s", err.text);
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
    lsp_log(&s->f, LSP_MSG_ERROR, "bad message framing: %s", detail ? detail : "?");
}

void lsp_feed(struct server *s, const char *data, size_t len)
{
    if (s->state == LSP_EXITED) return;
    if (rpc_reader_feed(&s->reader, data, len, on_message, on_frame_error, s) < 0)
        lsp_log(&s->f, LSP_MSG_ERROR, "out of memory reading a message");
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

/* The lifecycle's state, and what the output and the providers see of it. */
static void set_state(struct server *s, enum lsp_state st)
{
    s->state = st;
    s->out.open = st != LSP_UNINITIALIZED;
    s->out.closed = st == LSP_EXITED;
    s->f.running = st == LSP_RUNNING;
}

static void begin_exit(struct server *s, int code)
{
    if (s->state == LSP_EXITED) return;
    s->exit_code = code;
    set_state(s, LSP_EXITED);
    if (s->on_exit) s->on_exit(s);
}

void lsp_eof(struct server *s)
{
    lsp_drain(s); /* what arrived before EOF still counts */
    begin_exit(s, s->state == LSP_SHUT_DOWN ? 0 : 1);
}

/* At the door: params of the shape spec (params.h, NULL: any),
 * or an error reply (a request) or a log line (a notification): 1 if so. */
static int params_ok(struct server *s, const char *method, json_t *id, json_t *params,
                     const char *spec)
{
    char why[256];
    if (!spec || !lsp_params_check(params, spec, why, sizeof why)) return 1;
    if (id)
        lsp_reply_error(&s->f, id, RPC_INVALID_PARAMS, "Invalid params for %s: %s", method, why);
    else
        lsp_log(&s->f, LSP_MSG_ERROR, "%s with invalid params (%s): ignored", method, why);
    return 0;
}

static void handle_notification(struct server *s, const char *method, json_t *params)
{
    if (s->state == LSP_UNINITIALIZED && strcmp(method, "exit"))
        return; /* LSP: notifications before initialize are dropped */
    for (size_t i = 0; i < sizeof notify_table / sizeof *notify_table; i++)
        if (!strcmp(method, notify_table[i].method)) {
            notify_table[i].notify(s, params);
            return;
        }
    void *nself;
    const struct lsp_method *nm = lsp_registry_method(&s->f, method, 0, &nself);
    if (nm) {
        if (params_ok(s, method, NULL, params, nm->params)) nm->notify(&s->f, nself, params);
        return;
    }
    if (strncmp(method, "$/", 2)) lsp_log(&s->f, LSP_MSG_LOG, "ignored notification %s", method);
}

/* A request: answered once, here or by its handler (lsp_out.h). */
static void handle_request(struct server *s, const char *method, json_t *id, json_t *params,
                           int cancelled)
{
    if (cancelled) {
        lsp_reply_error(&s->f, id, LSP_REQUEST_CANCELLED, "request %s cancelled", method);
        return;
    }
    if (s->state == LSP_UNINITIALIZED && strcmp(method, "initialize")) {
        lsp_reply_error(&s->f, id, LSP_SERVER_NOT_INITIALIZED, "server not initialized");
        return;
    }
    if (s->state == LSP_SHUT_DOWN) {
        lsp_reply_error(&s->f, id, RPC_INVALID_REQUEST, "server is shutting down");
        return;
    }
    core_request_fn core = NULL;
    const char *spec = NULL;
    for (size_t i = 0; i < sizeof request_table / sizeof *request_table && !core; i++)
        if (!strcmp(method, request_table[i].method)) {
            core = request_table[i].request;
            spec = request_table[i].params;
        }
    void *rself = NULL;
    const struct lsp_method *rm = core ? NULL : lsp_registry_method(&s->f, method, 1, &rself);
    if (!core && !rm) {
        lsp_reply_error(&s->f, id, RPC_METHOD_NOT_FOUND, "method not found: %s", method);
        return;
    }
    if (!params_ok(s, method, id, params, core ? spec : rm->params)) return;
    /* HOTLINE_LSP_TIMING=1: one stderr line per request with the time the
     * server spent on it (handler + encoding + handing the reply to the
     * transport), for tests/bench/lsp_bench.py */
    const char *tm = getenv("HOTLINE_LSP_TIMING");
    uint64_t t0 = tm && *tm == '1' ? uv_hrtime() : 0;
    if (core)
        core(s, id, params);
    else
        rm->request(&s->f, rself, id, params);
    if (t0)
        fprintf(stderr, "hotline: timing %s %.3f ms\n", method, (double)(uv_hrtime() - t0) / 1e6);
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
        lsp_log(&s->f, LSP_MSG_ERROR, "invalid message: %s", why ? why : "?");
        lsp_out_request_begin(&s->out, id);
        lsp_reply_error(&s->f, id, RPC_INVALID_REQUEST, "Invalid request: %s", why ? why : "?");
        lsp_out_request_end(&s->f, method);
        return;
    case RPC_KIND_RESPONSE: /* answers to our requests (lsp_call) */
        if (s->state == LSP_RUNNING)
            lsp_call_answered(&s->f, json_object_get(msg, "id"), json_object_get(msg, "result"),
                              json_object_get(msg, "error"));
        return;
    case RPC_KIND_NOTIFICATION:
        handle_notification(s, method, params);
        return;
    case RPC_KIND_REQUEST:
        lsp_out_request_begin(&s->out, id);
        handle_request(s, method, id, params, cancelled);
        lsp_out_request_end(&s->f, method);
        return;
    }
}

static void n_progress_cancel(struct server *s, json_t *params)
{
    lsp_progress_cancel(&s->f, json_string_value(json_object_get(params, "token")));
}

/* ---- lifecycle ----------------------------------------------------------- */

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
            &s->f, LSP_MSG_INFO,
            "client processId %ld is not visible here (another PID namespace?): not watching it",
            pid);
        return;
    }
    s->client_pid = pid;
    if (!s->has_loop_handles) return;
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (fd >= 0 && !uv_poll_init(s->f.loop, &s->parent_poll, fd)) {
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
        lsp_reply_error(&s->f, id, RPC_INVALID_REQUEST, "initialize may be sent only once");
        return;
    }
    lsp_out_negotiate(&s->out, json_object_get(params, "capabilities"),
                      json_object_get(params, "initializationOptions"));

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
        free(s->f.root_path);
        s->f.root_path = lsp_uri_to_path(root);
    } else if (json_is_string(json_object_get(params, "rootPath"))) {
        free(s->f.root_path);
        s->f.root_path = strdup(json_string_value(json_object_get(params, "rootPath")));
    }

    json_t *sync = json_pack("{s:b, s:i}", "openClose", 1, "change", 2);
    json_t *capabilities = json_pack("{s:s, s:o}", "positionEncoding",
                                     pos_encoding_name(s->out.enc), "textDocumentSync", sync);
    lsp_registry_capabilities(&s->f, capabilities);
    set_state(s, LSP_RUNNING);
    lsp_reply(&s->f, id,
              json_pack("{s:o, s:{s:s, s:s}}", "capabilities", capabilities, "serverInfo", "name",
                        "hotline", "version", HOTLINE_VERSION));
}

static void n_initialized(struct server *s, json_t *params)
{
    (void)params;
    lsp_log(&s->f, LSP_MSG_INFO, "hotline %s ready (positions in %s)", HOTLINE_VERSION,
            pos_encoding_name(s->out.enc));
    FOR_PROVIDERS(&s->f, i, p, self)
    if (p->initialized) p->initialized(&s->f, self);
}

static void h_shutdown(struct server *s, json_t *id, json_t *params)
{
    (void)params;
    set_state(s, LSP_SHUT_DOWN);
    FOR_PROVIDERS(&s->f, i, p, self) /* e.g. a profile still loading would never be shown */
    if (p->shutdown) p->shutdown(&s->f, self);
    lsp_reply(&s->f, id, json_null());
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
    json_t *r = json_pack("{s:s, s:O, s:i, s:b}", "positionEncoding", pos_encoding_name(s->out.enc),
                          "settings", s->out.settings, "documents", (int)s->f.docs.count,
                          "executing", s->out.executing_optin);
    FOR_PROVIDERS(&s->f, i, p, self)
    if (p->debug_state) p->debug_state(&s->f, self, r);
    const char *uri = json_string_value(json_object_get(params, "uri"));
    struct doc *d = uri ? doc_find(&s->f.docs, uri) : NULL;
    if (d)
        json_object_set_new(r, "document",
                            json_pack("{s:s%, s:i, s:i}", "text", d->text, d->len, "version",
                                      d->version, "lineCount", (int)d->nlines));
    lsp_reply(&s->f, id, r);
}

/* The joined answers (registry.c) */
static void h_execute_command(struct server *s, json_t *id, json_t *params)
{
    lsp_registry_execute_command(&s->f, id, params);
}

static void h_code_lens(struct server *s, json_t *id, json_t *params)
{
    lsp_registry_code_lens(&s->f, id, params);
}

static void h_code_action(struct server *s, json_t *id, json_t *params)
{
    lsp_registry_code_action(&s->f, id, params);
}

/* Document sync (docsync.c) */
static void n_did_open(struct server *s, json_t *params)
{
    lsp_doc_did_open(&s->f, params);
}

static void n_did_change(struct server *s, json_t *params)
{
    lsp_doc_did_change(&s->f, params);
}

static void n_did_close(struct server *s, json_t *params)
{
    lsp_doc_did_close(&s->f, params);
}

static void n_did_change_configuration(struct server *s, json_t *params)
{
    json_t *settings = json_is_object(params) ? json_object_get(params, "settings") : NULL;
    if (!json_is_object(settings)) return;
    /* clients send either {"hotline": {...}} or the section itself */
    json_t *ours = json_object_get(settings, "hotline");
    lsp_out_merge_settings(&s->out, json_is_object(ours) ? ours : settings);
    FOR_PROVIDERS(&s->f, i, p, self)
    if (p->settings_changed) p->settings_changed(&s->f, self);
}

/* ---- setup --------------------------------------------------------------- */

static void transport_write(void *ctx, const char *buf, size_t len)
{
    struct server *s = ctx;
    if (s->write) s->write(s, buf, len);
}

static size_t transport_pending(void *ctx)
{
    struct server *s = ctx;
    return s->out_pending ? s->out_pending(s) : 0;
}

static void output_live(struct lsp_facilities *f, int on)
{
    FOR_PROVIDERS(f, i, p, self)
    if (p->output_live) p->output_live(f, self, on);
}

int lsp_server_init(struct server *s, uv_loop_t *loop, size_t max_message)
{
    int rc;
    memset(s, 0, sizeof *s);
    s->parent_fd = -1;
    s->f = (struct lsp_facilities){.loop = loop,
                                   .out = &s->out,
                                   .calls = &s->calls,
                                   .view = &s->view,
                                   .nbs = &s->nbs,
                                   .pself = s->pself};
    rc = lsp_out_init(&s->out);
    if (rc) goto fail;
    s->out.write = transport_write;
    s->out.pending = transport_pending;
    s->out.ctx = s;
    s->out.on_live = output_live;
    rpc_reader_init(&s->reader, max_message);
    doc_store_init(&s->f.docs);
    if (loop) {
        uv_idle_init(loop, &s->idle);
        s->idle.data = s;
        uv_timer_init(loop, &s->parent_timer);
        s->parent_timer.data = s;
        s->has_loop_handles = 1;
    }
    for (size_t i = 0; lsp_providers[i]; i++) {
        rc = -E2BIG;
        if (i >= LSP_MAX_PROVIDERS) goto fail;
        rc = lsp_providers[i]->init ? lsp_providers[i]->init(&s->f, &s->pself[i]) : 0;
        if (rc) goto fail;
        s->nstarted = i + 1;
    }
    return 0;

fail:
    /* what was made is closed here, and freed by lsp_server_free once the
     * loop has run the close callbacks: the providers' states embed handles */
    lsp_server_close(s);
    return rc;
}

void lsp_server_close(struct server *s)
{
    if (!s->has_loop_handles) return;
    /* e.g. kills the program we run, if any; the loop finishes closing it */
    for (size_t i = 0; i < s->nstarted; i++)
        if (lsp_providers[i]->close) lsp_providers[i]->close(&s->f, s->pself[i]);
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
    for (size_t i = 0; i < s->nstarted; i++)
        if (lsp_providers[i]->free) lsp_providers[i]->free(&s->f, s->pself[i]);
    s->nstarted = 0;
    memset(s->pself, 0, sizeof s->pself);
    lsp_pview_free(&s->view);
    lsp_nb_free(&s->nbs);
    doc_store_free(&s->f.docs);
    lsp_out_free(&s->out);
    json_decref(s->f.interp_ran);
    s->f.interp_ran = NULL;
    free(s->f.root_path);
    s->f.root_path = NULL;
}

void lsp_out_drained(struct server *s)
{
    lsp_out_flush(&s->f);
}
