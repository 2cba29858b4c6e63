/* Notebook sync (LSP 3.17 notebookDocumentSync) as a provider: the
 * notebookDocument/didOpen, didChange and didClose notifications keep the
 * core's record of each open notebook's cells (core/notebook.h); the cells'
 * texts go through the core's document sync (core/docsync.h), so that the
 * profile view's anchors and every provider's document hooks see a cell as
 * they see a file. A change is applied in the order LSP 3.17 gives it: the
 * cell array splice, the cells it closes and opens, the cells whose data
 * changed (kind), then the text edits. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/docsync.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/notebook.h"

/* Open every TextDocumentItem of items (borrowed array) as a document. */
static void open_items(struct lsp_facilities *s, const json_t *items, const char *what)
{
    size_t i;
    json_t *td;
    json_array_foreach(items, i, td)
    {
        const char *uri = json_string_value(json_object_get(td, "uri"));
        if (uri) lsp_nb_text_changed(s->nbs, uri); /* reopened: a new text */
        lsp_doc_open(s, td, what);
    }
}

/* Close the document of every TextDocumentIdentifier of ids (borrowed). */
static void close_ids(struct lsp_facilities *s, const json_t *ids)
{
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id)
    {
        const char *uri = json_string_value(json_object_get(id, "uri"));
        if (uri) lsp_doc_close(s, uri);
    }
}

static void did_open(struct lsp_facilities *s, void *self, json_t *params)
{
    (void)self;
    json_t *nbj = json_object_get(params, "notebookDocument");
    const char *uri = json_string_value(json_object_get(nbj, "uri"));
    json_t *cells = json_object_get(nbj, "cells");
    if (!uri || !json_is_array(cells)) {
        lsp_log(s, LSP_MSG_ERROR, "notebookDocument/didOpen without notebookDocument.uri/cells");
        return;
    }
    struct lsp_notebook *nb;
    int rc = lsp_nb_open(s->nbs, uri, json_string_value(json_object_get(nbj, "notebookType")),
                         (int)json_integer_value(json_object_get(nbj, "version")), &nb);
    if (rc == -E2BIG) {
        lsp_log(s, LSP_MSG_ERROR, "notebookDocument/didOpen %s: more than %d notebooks open", uri,
                LSP_NB_MAX);
        return;
    }
    if (rc) {
        lsp_log(s, LSP_MSG_ERROR, "notebookDocument/didOpen %s: out of memory", uri);
        return;
    }
    rc = lsp_nb_splice(nb, 0, 0, cells);
    if (rc)
        lsp_log(s, LSP_MSG_ERROR, "notebookDocument/didOpen %s: bad cells (%s)", uri,
                strerror(-rc));
    open_items(s, json_object_get(params, "cellTextDocuments"), "notebookDocument/didOpen");
}

static void did_change(struct lsp_facilities *s, void *self, json_t *params)
{
    (void)self;
    json_t *nbj = json_object_get(params, "notebookDocument");
    const char *uri = json_string_value(json_object_get(nbj, "uri"));
    struct lsp_notebook *nb = uri ? lsp_nb_find(s->nbs, uri) : NULL;
    if (!nb) {
        lsp_log(s, LSP_MSG_ERROR, "notebookDocument/didChange for %s, which is not open",
                uri ? uri : "(no uri)");
        return;
    }
    json_t *version = json_object_get(nbj, "version");
    if (json_is_integer(version)) nb->version = (int)json_integer_value(version);
    json_t *cells = json_object_get(json_object_get(params, "change"), "cells");
    json_t *st = json_object_get(cells, "structure");
    if (st) {
        json_t *arr = json_object_get(st, "array");
        json_int_t start = json_integer_value(json_object_get(arr, "start"));
        json_int_t del = json_integer_value(json_object_get(arr, "deleteCount"));
        int rc = start < 0 || del < 0
                     ? -EINVAL
                     : lsp_nb_splice(nb, (size_t)start, (size_t)del, json_object_get(arr, "cells"));
        if (rc)
            lsp_log(s, LSP_MSG_ERROR, "notebookDocument/didChange %s: cell array change (%s)", uri,
                    strerror(-rc));
        close_ids(s, json_object_get(st, "didClose"));
        open_items(s, json_object_get(st, "didOpen"), "notebookDocument/didChange");
    }
    lsp_nb_cells_data(nb, json_object_get(cells, "data"));
    size_t i;
    json_t *tc;
    json_array_foreach(json_object_get(cells, "textContent"), i, tc)
    {
        json_t *doc = json_object_get(tc, "document");
        const char *curi = json_string_value(json_object_get(doc, "uri"));
        if (curi)
            lsp_doc_change(s, curi, json_object_get(doc, "version"),
                           json_object_get(tc, "changes"));
    }
}

static void did_close(struct lsp_facilities *s, void *self, json_t *params)
{
    (void)self;
    const char *uri =
        json_string_value(json_object_get(json_object_get(params, "notebookDocument"), "uri"));
    /* the notebook first: its cells' documents close as plain documents */
    if (!uri || lsp_nb_close(s->nbs, uri)) {
        lsp_log(s, LSP_MSG_WARNING, "notebookDocument/didClose for %s, which is not open",
                uri ? uri : "(no uri)");
        return;
    }
    close_ids(s, json_object_get(params, "cellTextDocuments"));
}

/* Python cells of notebooks of type jupyter-notebook. */
static void initialize(struct lsp_facilities *s, void *self, json_t *caps)
{
    (void)s;
    (void)self;
    json_object_set_new(caps, "notebookDocumentSync",
                        json_pack("{s:[{s:{s:s}, s:[{s:s}]}], s:b}", "notebookSelector", "notebook",
                                  "notebookType", "jupyter-notebook", "cells", "language", "python",
                                  "save", 0));
}

static void debug_state(struct lsp_facilities *s, void *self, json_t *r)
{
    (void)self;
    json_object_set_new(r, "notebooks", lsp_nb_debug(s));
}

static const struct lsp_method methods[] = {
    {"notebookDocument/didOpen", NULL, did_open, NULL},
    {"notebookDocument/didChange", NULL, did_change, NULL},
    {"notebookDocument/didClose", NULL, did_close, NULL},
    {NULL, NULL, NULL, NULL},
};

const struct lsp_provider lsp_notebook_provider = {
    .name = "notebook",
    .initialize = initialize,
    .methods = methods,
    .debug_state = debug_state,
};
