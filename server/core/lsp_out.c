/* The server's output and what was negotiated with the client (lsp_out.h). */
#include "core/lsp_out.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framing.h"
#include "jsonrpc.h"

int lsp_out_init(struct lsp_out *o)
{
    memset(o, 0, sizeof *o);
    o->enc = POS_UTF16;
    o->log_level = LSP_MSG_INFO;
    o->client_caps = json_object();
    o->init_options = json_object();
    o->settings = json_object();
    return o->client_caps && o->init_options && o->settings ? 0 : -ENOMEM;
}

void lsp_out_free(struct lsp_out *o)
{
    json_decref(o->client_caps);
    json_decref(o->init_options);
    json_decref(o->settings);
    json_decref(o->held);
    json_decref(o->req_id);
    json_decref(o->later);
    o->client_caps = o->init_options = o->settings = o->held = o->req_id = o->later = NULL;
}

/* ---- output ------------------------------------------------------------ */

/* A client that stops reading must not make the server grow: live messages,
 * which the next one of their kind supersedes, are held back (newest only,
 * by key) while anything the client has not read is pending, and go out
 * once it has read everything; past out_cap unread bytes the client is
 * called blocked: stderr says so, other notifications are dropped and the
 * live stream stops (the providers' output_live hook) until it reads again. Replies are never
 * dropped: the client asked for them and may be waiting. */

static size_t out_pending(struct lsp_out *o)
{
    return o->pending ? o->pending(o->ctx) : 0;
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

void lsp_out_write(struct lsp_out *o, const char *buf, size_t len)
{
    if (o->write && !o->closed) o->write(o->ctx, buf, len);
}

static void out_encode(struct lsp_out *o, json_t *msg)
{
    size_t len;
    char *buf = rpc_encode(msg, &len);
    json_decref(msg);
    if (!buf) {
        fprintf(stderr, "hotline: cannot encode an outgoing message\n");
        return;
    }
    lsp_out_write(o, buf, len);
    free(buf);
}

/* Send what was held back, oldest key first, while the client keeps up. */
static void out_flush_held(struct lsp_out *o)
{
    while (json_object_size(o->held) && !out_pending(o) && !o->closed) {
        void *it = json_object_iter(o->held);
        const char *key = json_object_iter_key(it);
        json_t *msg = json_incref(json_object_iter_value(it));
        json_object_del(o->held, key);
        out_encode(o, msg);
    }
}

void lsp_send(struct lsp_facilities *f, json_t *msg)
{
    struct lsp_out *o = f->out;
    if (!msg) return;
    char key[1024];
    int live = live_key(msg, key, sizeof key);
    if (live < 0) json_object_del(o->held, key);
    size_t pending = out_pending(o);
    if (live > 0 && (pending || json_object_size(o->held))) {
        /* the client has not read everything: hold it, replacing the one
         * it supersedes (a new key beyond the cap: the oldest goes) */
        if (!o->held) o->held = json_object();
        if (!json_object_get(o->held, key) && json_object_size(o->held) >= LSP_OUT_MAX_HELD)
            json_object_del(o->held, json_object_iter_key(json_object_iter(o->held)));
        if (json_object_set_new(o->held, key, msg)) o->dropped++;
        return;
    }
    size_t cap = o->cap ? o->cap : LSP_OUT_CAP;
    if (pending >= cap && !o->blocked) {
        o->blocked = 1;
        fprintf(stderr,
                "hotline: the client is not reading (%zu bytes unread): live updates stop and "
                "notifications are dropped until it reads again; replies are kept\n",
                pending);
        if (o->on_live) o->on_live(f, 0);
    }
    if (o->blocked && !json_object_get(msg, "result") && !json_object_get(msg, "error")) {
        o->dropped++;
        json_decref(msg);
        return;
    }
    out_encode(o, msg);
}

void lsp_out_flush(struct lsp_facilities *f)
{
    struct lsp_out *o = f->out;
    if (out_pending(o)) return;
    if (o->blocked) {
        o->blocked = 0;
        fprintf(stderr, "hotline: the client reads again (%ld notifications were dropped)\n",
                o->dropped);
        o->dropped = 0;
        if (o->on_live) o->on_live(f, 1);
    }
    out_flush_held(o);
}

/* ---- answer exactly once ------------------------------------------------- */

/* A broken promise of a handler's: loud in debug builds, logged in release. */
static void broken(struct lsp_facilities *f, const char *what, json_t *id)
{
    char sid[64];
    size_t n = id ? json_dumpb(id, sid, sizeof sid - 1, JSON_COMPACT | JSON_ENCODE_ANY) : 0;
    sid[n < sizeof sid ? n : 0] = 0;
    lsp_log(f, LSP_MSG_ERROR, "internal error: %s (request %s)", what, sid);
    assert(!"a request is answered exactly once");
}

/* 1 when an answer to id (borrowed, may be NULL: a parse error's) may go
 * out now, counting it; 0 when it must be dropped. */
static int answer_ok(struct lsp_facilities *f, json_t *id)
{
    struct lsp_out *o = f->out;
    if (!id || json_is_null(id)) return 1; /* answers no request of the client's */
    int cur = o->req_id && json_equal(o->req_id, id);
    for (size_t i = 0; i < json_array_size(o->later); i++)
        if (json_equal(json_array_get(o->later, i), id)) {
            json_array_remove(o->later, i);
            if (cur) o->req_replies++;
            return 1;
        }
    if (cur && o->req_replies++ == 0) return 1;
    broken(f, cur ? "answered twice" : "an answer to a request that awaits none", id);
    return 0;
}

void lsp_out_request_begin(struct lsp_out *o, json_t *id)
{
    json_decref(o->req_id);
    o->req_id = json_deep_copy(id); /* NULL on ENOMEM: its answers go unchecked */
    o->req_replies = 0;
    o->req_later = 0;
}

int lsp_out_request_end(struct lsp_facilities *f, const char *method)
{
    struct lsp_out *o = f->out;
    json_t *id = o->req_id;
    int forgot = id && !o->req_replies && !o->req_later && !o->closed;
    if (forgot) {
        broken(f, "not answered", id);
        lsp_send(f, rpc_error_response(id, RPC_INTERNAL_ERROR,
                                       "internal error: the request was not answered", NULL));
        fprintf(stderr, "hotline: %s was not answered: answered -32603\n", method ? method : "?");
    }
    o->req_id = NULL;
    json_decref(id);
    return forgot ? -EPROTO : 0;
}

void lsp_reply_later(struct lsp_facilities *f, json_t *id)
{
    struct lsp_out *o = f->out;
    if (o->req_id && json_equal(o->req_id, id)) {
        if (o->req_replies) {
            broken(f, "answered, then promised an answer later", id);
            return;
        }
        o->req_later = 1;
    }
    if (!o->later) o->later = json_array();
    if (json_array_size(o->later) >= LSP_OUT_MAX_LATER) {
        /* beyond the cap its answer goes out unchecked: never lost */
        lsp_log(f, LSP_MSG_WARNING, "more than %d requests answered later", LSP_OUT_MAX_LATER);
        return;
    }
    json_array_append_new(o->later, json_deep_copy(id));
}

/* ---- replies ------------------------------------------------------------ */

void lsp_reply(struct lsp_facilities *f, json_t *id, json_t *result)
{
    if (!answer_ok(f, id)) {
        json_decref(result);
        return;
    }
    lsp_send(f, rpc_response(id, result));
}

void lsp_reply_raw(struct lsp_facilities *f, json_t *id, const char *result, size_t len)
{
    if (!answer_ok(f, id)) return;
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
    lsp_out_write(f->out, buf, (size_t)(w - buf)); /* a reply: never held or dropped */
    free(buf);
    free(sid);
}

void lsp_reply_error(struct lsp_facilities *f, json_t *id, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    if (!answer_ok(f, id)) return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lsp_send(f, rpc_error_response(id, code, msg, NULL));
}

void lsp_notify(struct lsp_facilities *f, const char *method, json_t *params)
{
    lsp_send(f, rpc_notification(method, params));
}

static void vlog_to(struct lsp_facilities *f, const char *method, int always,
                    enum lsp_msg_type type, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    static const char *names[] = {"", "error", "warning", "info", "log"};
    fprintf(stderr, "hotline: %s: %s\n", names[type], msg);
    if (!f->out->open || f->out->closed) return;
    if (!always && (int)type > f->out->log_level) return;
    lsp_notify(f, method, json_pack("{s:i, s:s}", "type", (int)type, "message", msg));
}

void lsp_log(struct lsp_facilities *f, enum lsp_msg_type type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog_to(f, "window/logMessage", 0, type, fmt, ap);
    va_end(ap);
}

void lsp_show(struct lsp_facilities *f, enum lsp_msg_type type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog_to(f, "window/showMessage", 1, type, fmt, ap);
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

json_t *lsp_client_cap(struct lsp_facilities *f, const char *path)
{
    return dotted(f->out->client_caps, path);
}

json_t *lsp_setting(struct lsp_facilities *f, const char *path)
{
    return dotted(f->out->settings, path);
}

double lsp_setting_num(struct lsp_facilities *f, const char *path, double dflt)
{
    json_t *v = dotted(f->out->settings, path);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

const char *lsp_setting_str(struct lsp_facilities *f, const char *path)
{
    json_t *v = dotted(f->out->settings, path);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

int lsp_setting_bool(struct lsp_facilities *f, const char *path, int dflt)
{
    json_t *v = dotted(f->out->settings, path);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* ---- negotiation and settings ---------------------------------------------- */

static void apply_settings(struct lsp_out *o)
{
    json_t *lvl = json_object_get(o->settings, "logLevel");
    if (json_is_string(lvl)) {
        const char *v = json_string_value(lvl);
        o->log_level = !strcmp(v, "error")     ? LSP_MSG_ERROR
                       : !strcmp(v, "warning") ? LSP_MSG_WARNING
                       : !strcmp(v, "info")    ? LSP_MSG_INFO
                       : !strcmp(v, "log")     ? LSP_MSG_LOG
                                               : o->log_level;
    }
}

/* Merge src's keys into dst (both objects), recursively for objects. */
static void merge(json_t *dst, json_t *src)
{
    const char *k;
    json_t *v;
    json_object_foreach(src, k, v)
    {
        json_t *cur = json_object_get(dst, k);
        if (json_is_object(cur) && json_is_object(v))
            merge(cur, v);
        else
            json_object_set(dst, k, v);
    }
}

void lsp_out_merge_settings(struct lsp_out *o, json_t *settings)
{
    merge(o->settings, settings);
    apply_settings(o);
}

void lsp_out_negotiate(struct lsp_out *o, json_t *caps, json_t *opts)
{
    json_decref(o->client_caps);
    o->client_caps = json_is_object(caps) ? json_incref(caps) : json_object();
    json_decref(o->init_options);
    o->init_options = json_is_object(opts) ? json_deep_copy(opts) : json_object();
    lsp_out_merge_settings(o, o->init_options);

    json_t *exp = dotted(o->client_caps, "experimental.hotlineExecuting");
    json_t *optin = json_object_get(o->init_options, "executing");
    o->executing_optin = json_is_true(exp) || json_is_true(optin);

    json_t *offered = dotted(o->client_caps, "general.positionEncodings");
    size_t i;
    json_t *v;
    o->enc = POS_UTF16;
    if (json_is_array(offered)) {
        json_array_foreach(offered, i, v)
        {
            enum pos_encoding e;
            if (json_is_string(v) && !pos_encoding_parse(json_string_value(v), &e)) {
                o->enc = e; /* the client's first choice that we support */
                break;
            }
        }
    }
}
