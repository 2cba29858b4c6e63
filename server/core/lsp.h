/* The language server: one struct server holds all of its state (STYLE.md: no
 * global mutable state). Input bytes are fed to lsp_feed() by whoever owns the
 * transport (lsp_main.c on stdio, the fuzz target in memory); output goes
 * through the `write` hook. Messages are queued and handled from the event
 * loop, so that a $/cancelRequest that arrives behind a request in the same
 * read can still cancel it. */
#ifndef HOTLINE_LSP_H
#define HOTLINE_LSP_H

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <uv.h>

#include "text/document.h"
#include "framing.h"
#include "core/lsp_call.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "core/notebook.h"
#include "position.h"

/* A request of ours awaiting its answer (lsp_call.c) */
struct lsp_pending {
    long id;
    lsp_call_fn cb;
    void *data; /* borrowed */
};

enum lsp_state { LSP_UNINITIALIZED, LSP_RUNNING, LSP_SHUT_DOWN, LSP_EXITED };

/* LSP MessageType */
enum lsp_msg_type { LSP_MSG_ERROR = 1, LSP_MSG_WARNING, LSP_MSG_INFO, LSP_MSG_LOG };

struct lsp_queued {
    json_t *msg; /* owned */
    int cancelled;
    struct lsp_queued *next;
};

#define LSP_MAX_QUEUED 4096 /* more unprocessed messages than this: reject new ones */
/* Outgoing bytes the client has not read yet (default cap, --max-output-bytes):
 * past it, notifications are dropped (replies never are) and the live stream
 * stops until the client reads again. */
#define LSP_OUT_CAP ((size_t)8 << 20)
#define LSP_OUT_MAX_HELD 256 /* distinct live messages held back at once */

struct server {
    uv_loop_t *loop;
    enum lsp_state state;
    int exit_code; /* valid once state == LSP_EXITED */
    struct rpc_reader reader;

    /* output: the transport's writer (buf borrowed) */
    void (*write)(struct server *s, const char *buf, size_t len);
    /* bytes written but not yet taken by the client (NULL: always 0); the
     * transport calls lsp_out_drained() whenever that number goes down */
    size_t (*out_pending)(struct server *s);
    size_t out_cap;   /* LSP_OUT_CAP unless set */
    json_t *out_held; /* owned {key: message}: live messages held back, newest only */
    int out_blocked;  /* the client stays past out_cap: live stream stopped */
    long out_dropped; /* notifications dropped while blocked */
    void *transport;  /* owned by the transport */
    /* called once when the server wants to exit (state is LSP_EXITED) */
    void (*on_exit)(struct server *s);

    /* incoming queue, drained from an idle handle */
    struct lsp_queued *qhead, *qtail;
    size_t qlen;
    uv_idle_t idle;
    int idle_active;
    int has_loop_handles;

    /* negotiated with the client */
    enum pos_encoding enc;
    json_t *client_caps;     /* owned, {} until initialize */
    json_t *init_options;    /* owned, {} until initialize */
    json_t *settings;        /* owned, merged settings ({} by default) */
    char *root_path;         /* owned, workspace root (file system path), may be NULL */
    int executing_optin;     /* client opted into hotline/executing */
    long client_pid;         /* 0 if unknown */
    uv_timer_t parent_timer; /* watches client_pid where no pidfd can */
    uv_poll_t parent_poll;   /* watches client_pid's pidfd (readable when it exits) */
    int parent_fd;           /* the pidfd, -1 if none */
    int log_level;           /* window/logMessage threshold (enum lsp_msg_type) */
    json_t *interp_ran;      /* owned {exe: true} or NULL: interpreters a run executed (interp.h) */

    struct doc_store docs;
    struct lsp_notebooks nbs;                /* open notebooks: their cells' texts are in docs */
    long next_request_id;                    /* for server -> client requests */
    struct lsp_pending calls[LSP_MAX_CALLS]; /* lsp_call: awaiting an answer */
    int ncalls;
    struct lsp_progress *progresses; /* borrowed list: started, not yet ended */
    struct lsp_pview view;           /* the profile shown (lsp_pview.h) */
    /* the providers' states, in the order of lsp_providers[] */
    void *pself[LSP_MAX_PROVIDERS];
};

/* `hotline lsp`: this server on stdin/stdout (lsp_main.c). Exit status. */
int cmd_lsp(int argc, char **argv);

/* Set up a server on loop (may be NULL: no queueing, messages are handled at
 * once, as the fuzz target wants). max_message: framing cap (0 = default). */
int lsp_server_init(struct server *s, uv_loop_t *loop, size_t max_message);
/* Close the server's loop handles; call lsp_server_free after the loop has
 * run their close callbacks. */
void lsp_server_close(struct server *s);
void lsp_server_free(struct server *s);

/* Feed raw bytes from the client. */
void lsp_feed(struct server *s, const char *data, size_t len);
/* End of input: behaves like `exit`. */
void lsp_eof(struct server *s);
/* Handle every queued message now (used without a loop, and by tests). */
void lsp_drain(struct server *s);

/* Send a message (stolen). Live messages (hotline/executing, publishDiagnostics,
 * $/progress reports, refresh requests: each superseded by the next of its
 * kind) are held back, newest only, while the client has output unread;
 * other notifications and requests are dropped once out_cap bytes are
 * unread; replies are always sent. */
void lsp_send(struct server *s, json_t *msg);
/* The transport wrote some of what was pending: send what was held back. */
void lsp_out_drained(struct server *s);
void lsp_reply(struct server *s, json_t *id /*borrowed*/, json_t *result /*stolen*/);
/* A reply whose result is already serialised: result (borrowed) must be one
 * valid JSON value of len bytes (no NUL needed). For big answers (code lenses)
 * that would be slow to build as a jansson tree. */
void lsp_reply_raw(struct server *s, json_t *id /*borrowed*/, const char *result, size_t len);
void lsp_reply_error(struct server *s, json_t *id /*borrowed, may be NULL*/, int code,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void lsp_notify(struct server *s, const char *method, json_t *params /*stolen*/);
/* Requests to the client: lsp_call (lsp_call.h). */
/* Log to stderr, and to the client as window/logMessage when at or above the
 * configured level (and the server is initialized). */
void lsp_log(struct server *s, enum lsp_msg_type type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* window/showMessage */
void lsp_show(struct server *s, enum lsp_msg_type type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Document sync, shared by the textDocument and notebookDocument methods (the
 * core's files only): open the TextDocumentItem td (borrowed), apply the
 * content changes (borrowed array) to uri, close uri; each runs the view's
 * and the providers' document hooks and logs what it refuses (what: the
 * method, for the log). */
int lsp__doc_open(struct server *s, json_t *td, const char *what);
void lsp__doc_change(struct server *s, const char *uri, json_t *version, json_t *changes);
int lsp__doc_close(struct server *s, const char *uri);

/* Borrowed: the client capability at a dotted path ("textDocument.codeLens"),
 * or NULL. */
json_t *lsp_client_cap(struct server *s, const char *path);

/* Settings (s->settings: initializationOptions merged with every
 * didChangeConfiguration). Borrowed value at a dotted path, or NULL. */
json_t *lsp_setting(struct server *s, const char *path);
/* The number / boolean at path, or dflt when absent or of another type. */
double lsp_setting_num(struct server *s, const char *path, double dflt);
int lsp_setting_bool(struct server *s, const char *path, int dflt);

#endif
