/* The server's own requests to the client, and work-done progress.
 *
 * lsp_call sends a request and, when given a callback, remembers it in a
 * capped table of pending calls under an integer id; the answer goes to that
 * callback and nowhere else. On the wire the id is the string "hotline-<n>"
 * (what clients have always echoed back); only this file writes or reads it.
 *
 * lsp_progress is the one work-done progress state machine: create (when the
 * client supports it) -> begin once the client agreed -> reports -> end; a
 * window/workDoneProgress/cancel for its token calls its on_cancel. */
#ifndef HOTLINE_LSP_CALL_H
#define HOTLINE_LSP_CALL_H

#include <jansson.h>

#include "core/facilities.h"

#define LSP_MAX_CALLS 64 /* requests to the client awaiting an answer */

/* The answer to a call: result or error (both borrowed, one is NULL). */
typedef void (*lsp_call_fn)(struct lsp_facilities *s, void *data, json_t *result, json_t *error);

/* A request of ours awaiting its answer */
struct lsp_pending {
    long id;
    lsp_call_fn cb;
    void *data; /* borrowed */
};

struct lsp_progress;

/* The core's calls and progresses (s->calls). Zero it to start. */
struct lsp_calls {
    long next_id;                              /* of the last request sent */
    struct lsp_pending pending[LSP_MAX_CALLS]; /* awaiting an answer */
    int n;
    struct lsp_progress *progresses; /* borrowed list: started, not yet ended */
};

/* Send method(params stolen) to the client. With cb, cb(s, data, ...) gets
 * the answer, once (never when the call fails or is forgotten first).
 * Returns the call's id (> 0), or -EBUSY (LSP_MAX_CALLS pending) / -ENOMEM:
 * then nothing was sent. */
long lsp_call(struct lsp_facilities *s, const char *method, json_t *params, lsp_call_fn cb,
              void *data);
/* Drop pending call id (its data is going away): its answer is ignored. */
void lsp_call_forget(struct lsp_facilities *s, long id);
/* An answer from the client (id, result, error borrowed): to its callback. */
void lsp_call_answered(struct lsp_facilities *s, json_t *id, json_t *result, json_t *error);
/* Pending calls in the table (hotline/debug/state). */
int lsp_calls_pending(struct lsp_facilities *s);

enum lsp_progress_state {
    LSP_PROGRESS_NONE,
    LSP_PROGRESS_CREATING,
    LSP_PROGRESS_BEGUN,
    LSP_PROGRESS_ENDED
};

/* Embedded in its owner, who must call lsp_progress_end or _drop before it
 * goes away. */
struct lsp_progress {
    char token[48];
    char title[400];
    char message[128]; /* of the begin */
    enum lsp_progress_state state;
    long create_id;
    void (*on_cancel)(struct lsp_facilities *s, void *data);
    void *data;
    struct lsp_progress *next; /* the server's list of live progresses */
};

/* Start a progress under token, cancellable when on_cancel is given: asks
 * the client to create it (nothing happens when the client has no
 * window.workDoneProgress); begin {title, message} goes out once it agrees.
 * Reports and the end do nothing until then. */
void lsp_progress_start(struct lsp_facilities *s, struct lsp_progress *p, const char *token,
                        const char *title, const char *message,
                        void (*on_cancel)(struct lsp_facilities *s, void *data), void *data);
int lsp_progress_begun(const struct lsp_progress *p);
void lsp_progress_report(struct lsp_facilities *s, struct lsp_progress *p, const char *message);
/* Send the end (if begun) and forget p. */
void lsp_progress_end(struct lsp_facilities *s, struct lsp_progress *p, const char *message);
/* Forget p without a word (its owner is going away). */
void lsp_progress_drop(struct lsp_facilities *s, struct lsp_progress *p);
/* window/workDoneProgress/cancel for token: its on_cancel, if any. */
void lsp_progress_cancel(struct lsp_facilities *s, const char *token);

#endif
