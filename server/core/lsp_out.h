/* The server's output, and what was negotiated with the client: the
 * writer (caps on what a client that stops reading makes us hold), the
 * encoding of positions, the client's capabilities, the settings, and the
 * log. The lowest of the core's modules besides facilities.h: everything
 * else in core/ and every provider sends through here. */
#ifndef HOTLINE_LSP_OUT_H
#define HOTLINE_LSP_OUT_H

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>

#include "core/facilities.h"
#include "position.h"

/* LSP MessageType */
enum lsp_msg_type { LSP_MSG_ERROR = 1, LSP_MSG_WARNING, LSP_MSG_INFO, LSP_MSG_LOG };

/* Outgoing bytes the client has not read yet (default cap, --max-output-bytes):
 * past it, notifications are dropped (replies never are) and the live stream
 * stops until the client reads again. */
#define LSP_OUT_CAP ((size_t)8 << 20)
#define LSP_OUT_MAX_HELD 256 /* distinct live messages held back at once */

struct lsp_out {
    /* the transport (set by the core): write len bytes of buf (borrowed),
     * and the bytes written but not yet taken by the client (NULL: 0) */
    void (*write)(void *ctx, const char *buf, size_t len);
    size_t (*pending)(void *ctx);
    void *ctx;
    /* the providers' output_live hooks (set by the core): the client
     * stopped reading (on = 0) or reads again (on = 1) */
    void (*on_live)(struct lsp_facilities *f, int on);
    int open;   /* initialize seen, exit not: the log also goes to the client */
    int closed; /* the server exited: nothing is written any more */

    size_t cap;   /* LSP_OUT_CAP unless set */
    json_t *held; /* owned {key: message}: live messages held back, newest only */
    int blocked;  /* the client stays past cap: live stream stopped */
    long dropped; /* notifications dropped while blocked */

    /* negotiated with the client */
    enum pos_encoding enc;
    json_t *client_caps;  /* owned, {} until initialize */
    json_t *init_options; /* owned, {} until initialize */
    json_t *settings;     /* owned, merged settings ({} by default) */
    int log_level;        /* window/logMessage threshold (enum lsp_msg_type) */
    int executing_optin;  /* client opted into hotline/executing */

    /* answer exactly once (lsp_out_request_begin / _end) */
    json_t *req_id;  /* owned copy: the request being handled now, or NULL */
    int req_replies; /* answers sent to it so far */
    int req_later;   /* its handler will answer after it returns */
    json_t *later;   /* owned array: ids of requests to be answered later */
};

#define LSP_OUT_MAX_LATER 1024 /* requests answered later, at once */

/* 0 or -ENOMEM (then lsp_out_free still must be called). */
int lsp_out_init(struct lsp_out *o);
void lsp_out_free(struct lsp_out *o);

/* Send a message (stolen). Live messages (hotline/executing, publishDiagnostics,
 * $/progress reports, refresh requests: each superseded by the next of its
 * kind) are held back, newest only, while the client has output unread;
 * other notifications and requests are dropped once cap bytes are unread;
 * replies are always sent. */
void lsp_send(struct lsp_facilities *f, json_t *msg);
/* The transport wrote some of what was pending: send what was held back. */
void lsp_out_flush(struct lsp_facilities *f);
/* Write an already framed message (buf borrowed), never held or dropped. */
void lsp_out_write(struct lsp_out *o, const char *buf, size_t len);
void lsp_reply(struct lsp_facilities *f, json_t *id /*borrowed*/, json_t *result /*stolen*/);
/* A reply whose result is already serialised: result (borrowed) must be one
 * valid JSON value of len bytes (no NUL needed). For big answers (code lenses)
 * that would be slow to build as a jansson tree. */
void lsp_reply_raw(struct lsp_facilities *f, json_t *id /*borrowed*/, const char *result,
                   size_t len);
void lsp_reply_error(struct lsp_facilities *f, json_t *id /*borrowed, may be NULL*/, int code,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void lsp_notify(struct lsp_facilities *f, const char *method, json_t *params /*stolen*/);
/* Log to stderr, and to the client as window/logMessage when at or above the
 * configured level (and the server is initialized). */
void lsp_log(struct lsp_facilities *f, enum lsp_msg_type type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* window/showMessage */
void lsp_show(struct lsp_facilities *f, enum lsp_msg_type type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Answer exactly once, enforced (as clangd's ReplyOnce): the core calls
 * begin before it handles request id (borrowed) and end after; a second
 * answer to a request, or an answer to an id that awaits none, is an
 * internal error: an assert in debug builds, in release a log line and the
 * answer dropped. A handler that answers after it returns says so with
 * lsp_reply_later(id) before it returns; end answers a request its handler
 * forgot (debug: assert; release: an internal-error reply, -32603). end
 * returns 0, or -EPROTO when it had to answer. */
void lsp_out_request_begin(struct lsp_out *o, json_t *id);
int lsp_out_request_end(struct lsp_facilities *f, const char *method);
/* Request id (borrowed) is answered later, once, by whoever holds it (a
 * provider's work in flight, its cancel hook). */
void lsp_reply_later(struct lsp_facilities *f, json_t *id);

/* initialize: the client's capabilities and initializationOptions (both
 * borrowed, may be NULL), merged into the settings; the position encoding
 * chosen from what the client offers. */
void lsp_out_negotiate(struct lsp_out *o, json_t *caps, json_t *init_options);
/* didChangeConfiguration: merge settings (borrowed object) into ours. */
void lsp_out_merge_settings(struct lsp_out *o, json_t *settings);

/* Borrowed: the client capability at a dotted path ("textDocument.codeLens"),
 * or NULL. */
json_t *lsp_client_cap(struct lsp_facilities *f, const char *path);

/* Settings (initializationOptions merged with every didChangeConfiguration).
 * Borrowed value at a dotted path, or NULL. */
json_t *lsp_setting(struct lsp_facilities *f, const char *path);
/* The number / boolean at path, or dflt when absent or of another type. */
double lsp_setting_num(struct lsp_facilities *f, const char *path, double dflt);
int lsp_setting_bool(struct lsp_facilities *f, const char *path, int dflt);
/* A string setting (borrowed, valid until the settings change), or NULL. */
const char *lsp_setting_str(struct lsp_facilities *f, const char *path);

#endif
