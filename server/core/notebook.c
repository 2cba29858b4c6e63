/* Open notebooks and their cells (notebook.h): the structure of each
 * notebook (its cells in order) and the hash of each code cell's text. The
 * notebookDocument methods that fill it are the notebook provider's
 * (providers/notebook.c); the cells' texts are the core's documents. */
#include "core/notebook.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text/cellname.h"

struct lsp_notebook *lsp_nb_find(struct lsp_notebooks *nbs, const char *uri)
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
int lsp_nb_splice(struct lsp_notebook *nb, size_t start, size_t del, const json_t *add)
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

int lsp_nb_open(struct lsp_notebooks *nbs, const char *uri, const char *type, int version,
                struct lsp_notebook **out)
{
    struct lsp_notebook *nb = lsp_nb_find(nbs, uri);
    char *t = type ? strdup(type) : NULL;
    if (type && !t) return -ENOMEM;
    if (nb) { /* reopened: start again (its old cells' documents stay open
               * until the client closes them, as it must) */
        for (size_t i = 0; i < nb->n; i++)
            free(nb->cells[i].uri);
        nb->n = 0;
    } else {
        if (nbs->count >= LSP_NB_MAX) {
            free(t);
            return -E2BIG;
        }
        nb = calloc(1, sizeof *nb);
        if (!nb || !(nb->uri = strdup(uri))) {
            free(nb);
            free(t);
            return -ENOMEM;
        }
        nb->next = nbs->head;
        nbs->head = nb;
        nbs->count++;
    }
    free(nb->type);
    nb->type = t;
    nb->version = version;
    *out = nb;
    return 0;
}

void lsp_nb_cells_data(struct lsp_notebook *nb, const json_t *data)
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

int lsp_nb_close(struct lsp_notebooks *nbs, const char *uri)
{
    struct lsp_notebook **pp = &nbs->head;
    while (*pp && strcmp((*pp)->uri, uri))
        pp = &(*pp)->next;
    if (!*pp) return -ENOENT;
    struct lsp_notebook *nb = *pp;
    *pp = nb->next;
    nbs->count--;
    nb_free(nb);
    return 0;
}

void lsp_nb_text_changed(struct lsp_notebooks *nbs, const char *uri)
{
    struct lsp_nb_cell *c = cell_find(nbs, uri);
    if (c) c->hashed = 0;
}

/* The hash of code cell c, its text open (d, may be NULL: looked up). */
static int cell_hash(struct lsp_facilities *s, struct lsp_nb_cell *c, uint32_t *hash)
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

int lsp_nb_cell_hash(struct lsp_facilities *s, const char *uri, uint32_t *hash)
{
    struct lsp_nb_cell *c = cell_find(s->nbs, uri);
    return c ? cell_hash(s, c, hash) : -ENOENT;
}

struct doc *lsp_nb_cell_of_path(struct lsp_facilities *s, const char *path)
{
    uint32_t want, h;
    if (!s->nbs->head || cellname_ipykernel_parse(path, &want)) return NULL;
    for (struct lsp_notebook *nb = s->nbs->head; nb; nb = nb->next)
        for (size_t i = 0; i < nb->n; i++)
            if (!cell_hash(s, &nb->cells[i], &h) && h == want)
                return doc_find(&s->docs, nb->cells[i].uri);
    return NULL;
}

json_t *lsp_nb_debug(struct lsp_facilities *s)
{
    json_t *a = json_array();
    for (struct lsp_notebook *nb = s->nbs->head; nb; nb = nb->next) {
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
