/* Notebook documents (notebook.h). The structure of a notebook (its cells
 * in order) is ours; the cells' texts go through the core's document sync
 * (lsp__doc_open / lsp__doc_change / lsp__doc_close), so that the profile
 * view's anchors and every provider's document hooks see a cell as they see
 * a file. A change is applied in the order LSP 3.17 gives it: the cell
 * array splice, the cells it closes and opens, the cells whose data changed
 * (kind), then the text edits. */
#include "core/notebook.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/lsp.h"
#include "text/cellname.h"

json_t *lsp_nb_capability(void)
{
    return json_pack("{s:[{s:{s:s}, s:[{s:s}]}], s:b}", "notebookSelector", "notebook",
                     "notebookType", "jupyter-notebook", "cells", "language", "python", "save", 0);
}

static struct lsp_notebook *nb_find(struct lsp_notebooks *nbs, const char *uri)
{
    for (struct lsp_notebook *nb = nbs->head; nb; nb = nb->next)
        if (!strcmp(nb->uri, uri)) return nb;
    return NULL;
}

static void nb_free(struct lsp_notebook *nb)
{
    for (size_t i = 0; i < nb->n; i++)
        free(nb->cells[i].uri);
    free(nb->cells);
    free(nb->uri);
    free(nb->type);
    free(nb);
}

/* The cell of uri in any open notebook, or NULL. */
static struct lsp_nb_cell *cell_find(struct lsp_notebooks *nbs, const char *uri)
{
    for (struct lsp_notebook *nb = nbs->head; nb; nb = nb->next)
        for (size_t i = 0; i < nb->n; i++)
            if (!strcmp(nb->cells[i].uri, uri)) return &nb->cells[i];
    return NULL;
}

/* NotebookCell (borrowed) -> c; 0 or -EINVAL / -ENOMEM. */
static int cell_from_json(const json_t *j, struct lsp_nb_cell *c)
{
    const char *doc = json_string_value(json_object_get(j, "document"));
    json_t *kind = json_object_get(j, "kind");
    if (!doc || !json_is_integer(kind)) return -EINVAL;
    memset(c, 0, sizeof *c);
    c->kind = (int)json_integer_value(kind);
    c->uri = strdup(doc);
    return c->uri ? 0 : -ENOMEM;
}

/* Replace cells [start, start + del) of nb by the NotebookCells of add
 * (borrowed array, may be NULL). 0, -EINVAL (nothing changed), -E2BIG or
 * -ENOMEM. */
static int nb_splice(struct lsp_notebook *nb, size_t start, size_t del, const json_t *add)
{
    size_t nadd = json_array_size(add);
    if (start > nb->n) start = nb->n; /* clamped, as positions are */
    if (del > nb->n - start) del = nb->n - start;
    size_t n = nb->n - del + nadd;
    if (n > LSP_NB_MAX_CELLS) return -E2BIG;
    struct lsp_nb_cell *fresh = nadd ? calloc(nadd, sizeof *fresh) : NULL;
    if (nadd && !fresh) return -ENOMEM;
    for (size_t i = 0; i < nadd; i++) {
        int rc = cell_from_json(json_array_get(add, i), &fresh[i]);
        if (rc) {
            for (size_t k = 0; k < i; k++)
                free(fresh[k].uri);
            free(fresh);
            return rc;
        }
    }
    if (n > nb->cap) {
        size_t cap = nb->cap ? nb->cap : 16;
        while (cap < n)
            cap *= 2;
        struct lsp_nb_cell *c = realloc(nb->cells, cap * sizeof *c);
        if (!c) {
            for (size_t k = 0; k < nadd; k++)
                free(fresh[k].uri);
            free(fresh);
            return -ENOMEM;
        }
        nb->cells = c;
        nb->cap = cap;
    }
    for (size_t i = start; i < start + del; i++)
        free(nb->cells[i].uri);
    memmove(nb->cells + start + nadd, nb->cells + start + del,
            (nb->n - start - del) * sizeof *nb->cells);
    if (nadd) memcpy(nb->cells + start, fresh, nadd * sizeof *fresh);
    free(fresh);
    nb->n = n;
    return 0;
}

/* Open every TextDocumentItem of items (borrowed array) as a document. */
static void open_items(struct server *s, const json_t *items, const char *what)
{
    size_t i;
    json_t *td;
    json_array_foreach(items, i, td)
    {
        const char *uri = json_string_value(json_object_get(td, "uri"));
        struct lsp_nb_cell *c = uri ? cell_find(&s->nbs, uri) : NULL;
        if (c) c->hashed = 0; /* reopened: a new text */
        lsp__doc_open(s, td, what);
    }
}

/* Close the document of every TextDocumentIdentifier of ids (borrowed). */
static void close_ids(struct server *s, const json_t *ids)
{
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id)
    {
        const char *uri = json_string_value(json_object_get(id, "uri"));
        if (uri) lsp__doc_close(s, uri);
    }
}

void lsp_nb_did_open(struct server *s, json_t *params)
{
    json_t *nbj = json_object_get(params, "notebookDocument");
    const char *uri = json_string_value(json_object_get(nbj, "uri"));
    json_t *cells = json_object_get(nbj, "cells");
    if (!uri || !json_is_array(cells)) {
        lsp_log(s, LSP_MSG_ERROR, "notebookDocument/didOpen without notebookDocument.uri/cells");
        return;
    }
    struct lsp_notebook *nb = nb_find(&s->nbs, uri);
    if (nb) { /* reopened: start again (its old cells' documents stay open
               * until the client closes them, as it must) */
        for (size_t i = 0; i < nb->n; i++)
            free(nb->cells[i].uri);
        nb->n = 0;
    } else {
        if (s->nbs.count >= LSP_NB_MAX) {
            lsp_log(s, LSP_MSG_ERROR, "notebookDocument/didOpen %s: more than %d notebooks open",
                    uri, LSP_NB_MAX);
            return;
        }
        nb = calloc(1, sizeof *nb);
        if (!nb || !(nb->uri = strdup(uri))) {
            free(nb);
            lsp_log(s, LSP_MSG_ERROR, "notebookDocument/didOpen %s: out of memory", uri);
            return;
        }
        nb->next = s->nbs.head;
        s->nbs.head = nb;
        s->nbs.count++;
    }
    free(nb->type);
    const char *type = json_string_value(json_object_get(nbj, "notebookType"));
    nb->type = type ? strdup(type) : NULL;
    nb->version = (int)json_integer_value(json_object_get(nbj, "version"));
    int rc = nb_splice(nb, 0, 0, cells);
    if (rc)
        lsp_log(s, LSP_MSG_ERROR, "notebookDocument/didOpen %s: bad cells (%s)", uri,
                strerror(-rc));
    open_items(s, json_object_get(params, "cellTextDocuments"), "notebookDocument/didOpen");
}

/* cells.data: cells whose kind (or metadata) changed, found by document. */
static void cells_data(struct lsp_notebook *nb, const json_t *data)
{
    size_t i;
    json_t *j;
    json_array_foreach(data, i, j)
    {
        const char *doc = json_string_value(json_object_get(j, "document"));
        json_t *kind = json_object_get(j, "kind");
        for (size_t k = 0; doc && json_is_integer(kind) && k < nb->n; k++)
            if (!strcmp(nb->cells[k].uri, doc)) nb->cells[k].kind = (int)json_integer_value(kind);
    }
}

void lsp_nb_did_change(struct server *s, json_t *params)
{
    json_t *nbj = json_object_get(params, "notebookDocument");
    const char *uri = json_string_value(json_object_get(nbj, "uri"));
    struct lsp_notebook *nb = uri ? nb_find(&s->nbs, uri) : NULL;
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
                     : nb_splice(nb, (size_t)start, (size_t)del, json_object_get(arr, "cells"));
        if (rc)
            lsp_log(s, LSP_MSG_ERROR, "notebookDocument/didChange %s: cell array change (%s)", uri,
                    strerror(-rc));
        close_ids(s, json_object_get(st, "didClose"));
        open_items(s, json_object_get(st, "didOpen"), "notebookDocument/didChange");
    }
    cells_data(nb, json_object_get(cells, "data"));
    size_t i;
    json_t *tc;
    json_array_foreach(json_object_get(cells, "textContent"), i, tc)
    {
        json_t *doc = json_object_get(tc, "document");
        const char *curi = json_string_value(json_object_get(doc, "uri"));
        if (curi)
            lsp__doc_change(s, curi, json_object_get(doc, "version"),
                            json_object_get(tc, "changes"));
    }
}

void lsp_nb_did_close(struct server *s, json_t *params)
{
    const char *uri =
        json_string_value(json_object_get(json_object_get(params, "notebookDocument"), "uri"));
    struct lsp_notebook **pp = &s->nbs.head;
    while (uri && *pp && strcmp((*pp)->uri, uri))
        pp = &(*pp)->next;
    if (!uri || !*pp) {
        lsp_log(s, LSP_MSG_WARNING, "notebookDocument/didClose for %s, which is not open",
                uri ? uri : "(no uri)");
        return;
    }
    struct lsp_notebook *nb = *pp;
    *pp = nb->next;
    s->nbs.count--;
    nb_free(nb); /* first: its cells' documents close as plain documents */
    close_ids(s, json_object_get(params, "cellTextDocuments"));
}

void lsp_nb_doc_edited(struct server *s, const struct doc *d)
{
    struct lsp_nb_cell *c = cell_find(&s->nbs, d->uri);
    if (c) c->hashed = 0;
}

/* The hash of code cell c, its text open (d, may be NULL: looked up). */
static int cell_hash(struct server *s, struct lsp_nb_cell *c, uint32_t *hash)
{
    if (c->kind != LSP_NB_CELL_CODE) return -ENOENT;
    if (!c->hashed) {
        struct doc *d = doc_find(&s->docs, c->uri);
        if (!d) return -ENOENT;
        c->hash = cellname_ipykernel_hash(d->text, d->len);
        c->hashed = 1;
    }
    if (hash) *hash = c->hash;
    return 0;
}

int lsp_nb_cell_hash(struct server *s, const char *uri, uint32_t *hash)
{
    struct lsp_nb_cell *c = cell_find(&s->nbs, uri);
    return c ? cell_hash(s, c, hash) : -ENOENT;
}

struct doc *lsp_nb_cell_of_path(struct server *s, const char *path)
{
    uint32_t want, h;
    if (!s->nbs.head || cellname_ipykernel_parse(path, &want)) return NULL;
    for (struct lsp_notebook *nb = s->nbs.head; nb; nb = nb->next)
        for (size_t i = 0; i < nb->n; i++)
            if (!cell_hash(s, &nb->cells[i], &h) && h == want)
                return doc_find(&s->docs, nb->cells[i].uri);
    return NULL;
}

json_t *lsp_nb_debug(struct server *s)
{
    json_t *a = json_array();
    for (struct lsp_notebook *nb = s->nbs.head; nb; nb = nb->next) {
        json_t *cells = json_array();
        for (size_t i = 0; i < nb->n; i++) {
            uint32_t h;
            json_t *c =
                json_pack("{s:s, s:i}", "document", nb->cells[i].uri, "kind", nb->cells[i].kind);
            if (!cell_hash(s, &nb->cells[i], &h)) json_object_set_new(c, "hash", json_integer(h));
            json_array_append_new(cells, c);
        }
        json_array_append_new(a, json_pack("{s:s, s:s?, s:i, s:o}", "uri", nb->uri, "notebookType",
                                           nb->type, "version", nb->version, "cells", cells));
    }
    return a;
}

void lsp_nb_free(struct lsp_notebooks *nbs)
{
    while (nbs->head) {
        struct lsp_notebook *nb = nbs->head;
        nbs->head = nb->next;
        nb_free(nb);
    }
    nbs->count = 0;
}
