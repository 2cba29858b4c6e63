/* The provider registry: every feature of the language server (running a
 * program, lenses, hints, hovers, diagnostics, "Optimize this", ...) is one
 * struct lsp_provider, and providers/list.c lists them. The LSP core (lsp.c:
 * queue, dispatch, lifecycle, document sync, settings) knows no feature: it
 * dispatches a method or a command to the provider that serves it, calls
 * every provider's hooks, and joins what several providers contribute to one
 * answer (textDocument/codeLens, textDocument/codeAction, the command list
 * of executeCommandProvider), so that no provider wraps another's handler.
 *
 * Every callback gets `self`, the state its init made (NULL when it has
 * none). Every member may be NULL. Providers are called in list order. */
#ifndef HOTLINE_LSP_PROVIDER_H
#define HOTLINE_LSP_PROVIDER_H

#include <jansson.h>
#include <stddef.h>

#include "text/document.h"

#include "core/facilities.h"

/* A request (id borrowed, answer it exactly once) or a notification (id NULL). */
typedef void (*lsp_request_fn)(struct lsp_facilities *s, void *self, json_t *id, json_t *params);
typedef void (*lsp_notify_fn)(struct lsp_facilities *s, void *self, json_t *params);

/* params, when given, is the shape the params must have (core/params.h:
 * "textDocument.uri:s position.line:i"): the core checks it at the door,
 * so a handler sees only params of that shape; a request whose params are
 * not gets -32602 and its handler is not called, a notification is logged
 * and dropped. */
struct lsp_method {
    const char *method;
    lsp_request_fn request; /* one of the two */
    lsp_notify_fn notify;
    const char *params; /* NULL: any params, or none */
};

/* workspace/executeCommand `name`: arg is arguments[0] (borrowed, may be NULL). */
struct lsp_command {
    const char *name;
    void (*run)(struct lsp_facilities *s, void *self, json_t *id, json_t *arg);
};

/* A growable byte buffer for answers serialised by hand (the code lenses:
 * thousands must answer in about a millisecond). Capped at LSP_BUF_MAX;
 * past it, or on ENOMEM, oom is set and later writes do nothing. */
#define LSP_BUF_MAX ((size_t)256 << 20)
struct lsp_buf {
    char *p; /* owned */
    size_t n, cap;
    int oom;
};
/* Room for need more bytes at p + n (borrowed), or NULL (oom set). */
char *lsp_buf_room(struct lsp_buf *b, size_t need);
void lsp_buf_put(struct lsp_buf *b, const char *s, size_t n);
/* In a JSON array being written (b starts with "["): the comma before the
 * next element, unless it is the first. */
void lsp_buf_sep(struct lsp_buf *b);

struct lsp_provider {
    const char *name;
    /* lsp_server_init: *self = the provider's state. 0 or -errno (the
     * server then fails to start). */
    int (*init)(struct lsp_facilities *s, void **self);
    /* initialize: add the provider's own server capabilities to caps
     * (borrowed); the joined ones (codeLensProvider, codeActionProvider,
     * executeCommandProvider) are the core's. Called before the answer. */
    void (*initialize)(struct lsp_facilities *s, void *self, json_t *caps);
    void (*initialized)(struct lsp_facilities *s, void *self);
    void (*shutdown)(struct lsp_facilities *s, void *self);

    const struct lsp_method *methods;   /* {NULL} terminated; served by this one alone */
    const struct lsp_command *commands; /* {NULL} terminated */
    /* Joined answers. code_lens appends array elements (lsp_buf_sep before
     * each) to out, which the core opened with "[". code_action appends
     * CodeActions to out (borrowed array). */
    void (*code_lens)(struct lsp_facilities *s, void *self, json_t *params, struct lsp_buf *out);
    void (*code_action)(struct lsp_facilities *s, void *self, json_t *params, json_t *out);
    const char *const *code_action_kinds; /* NULL terminated */
    /* $/cancelRequest for a request this provider answers later (still in
     * flight after its handler returned): 1 if it was one (then answered). */
    int (*cancel)(struct lsp_facilities *s, void *self, json_t *id);

    /* document sync, after the core's store changed (d borrowed) */
    void (*doc_opened)(struct lsp_facilities *s, void *self, struct doc *d);
    void (*doc_edited)(struct lsp_facilities *s, void *self, struct doc *d,
                       const struct doc_edit *e);
    void (*doc_closed)(struct lsp_facilities *s, void *self, const char *uri);
    /* the profile view changed (lsp_view_updated): what says how */
    void (*profile_updated)(struct lsp_facilities *s, void *self, int what);
    /* didChangeConfiguration merged new settings into the settings (lsp_setting) */
    void (*settings_changed)(struct lsp_facilities *s, void *self);
    /* the client stopped reading (on = 0) or reads again (on = 1) */
    void (*output_live)(struct lsp_facilities *s, void *self, int on);
    /* hotline/debug/state: add this provider's keys to r (borrowed) */
    void (*debug_state)(struct lsp_facilities *s, void *self, json_t *r);
    /* lsp_server_close: stop what runs, close loop handles */
    void (*close)(struct lsp_facilities *s, void *self);
    /* lsp_server_free: release self */
    void (*free)(struct lsp_facilities *s, void *self);
};

/* providers/list.c: the list, NULL terminated, and its length. */
extern const struct lsp_provider *const lsp_providers[];
#define LSP_MAX_PROVIDERS 16

/* Borrowed: the state of provider p in s (NULL if p is not listed). */
void *lsp_provider_self(struct lsp_facilities *s, const struct lsp_provider *p);

#endif
