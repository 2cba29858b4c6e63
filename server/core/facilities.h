/* What a provider gets instead of the whole server, as clangd's feature
 * modules get their Facilities: the event loop, the open documents, the
 * workspace root, and the core's parts it may call into (each with its own
 * header): the writer, settings and log (lsp_out.h), requests to the client
 * and progress (lsp_call.h), the profile view (lsp_pview.h: providers read
 * it through its readers; only the run and kernel providers write), the
 * open notebooks' cells (notebook.h).
 *
 * The core (lsp.c) owns every part and fills this in; for providers every
 * member is read-only. It is the lowest header of core/: it includes no
 * other, so that the core's files form layers (lsp_out below lsp_call below
 * lsp_pview ...) and none needs struct server. */
#ifndef HOTLINE_CORE_FACILITIES_H
#define HOTLINE_CORE_FACILITIES_H

#include <jansson.h>
#include <uv.h>

#include "text/document.h"

struct lsp_out;
struct lsp_calls;
struct lsp_pview;
struct lsp_notebooks;

struct lsp_facilities {
    uv_loop_t *loop;              /* borrowed; NULL without a loop (fuzz target, unit tests) */
    struct doc_store docs;        /* the open documents (text/document.h) */
    char *root_path;              /* owned by the core: workspace root (a path), or NULL */
    int running;                  /* initialize answered, no shutdown yet */
    struct lsp_out *out;          /* borrowed: writer, caps, settings, log */
    struct lsp_calls *calls;      /* borrowed: requests to the client, progress */
    const struct lsp_pview *view; /* borrowed: the profile shown (written by lsp_pview.c) */
    struct lsp_notebooks *nbs;    /* borrowed: open notebooks' cells */
    void **pself;                 /* borrowed: the providers' states, in list order */
    json_t *interp_ran; /* owned {exe: true} or NULL: interpreters a run executed (interp.h) */
};

#endif
