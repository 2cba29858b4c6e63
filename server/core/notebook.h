/* Notebook documents (LSP 3.17 notebookDocumentSync): the server keeps, for
 * each open notebook, its cells in order (kind, the URI of each cell's text
 * document); the cells' texts are ordinary documents of the core's store
 * (text/document.h) under their vscode-notebook-cell: URIs, with the same
 * hooks as files, so every provider sees them.
 *
 * What it is for: a Jupyter kernel (ipykernel) compiles each cell to a file
 * named by a hash of the cell's text (text/cellname.h), and the profile
 * names that file. lsp_nb_cell_of_path finds the open code cell whose text
 * hashes to such a file now; the profile view (lsp_pview.c) uses it to show
 * the file's profile on the cell. The notebookDocument methods that keep
 * it are the notebook provider's (providers/notebook.c). */
#ifndef HOTLINE_NOTEBOOK_H
#define HOTLINE_NOTEBOOK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/facilities.h"
#include "text/document.h"

#define LSP_NB_MAX 256          /* open notebooks */
#define LSP_NB_MAX_CELLS 100000 /* cells in one notebook */
#define LSP_NB_CELL_MARKUP 1    /* NotebookCellKind */
#define LSP_NB_CELL_CODE 2

struct lsp_nb_cell {
    char *uri;     /* owned: the cell's text document */
    int kind;      /* LSP_NB_CELL_* */
    int hashed;    /* hash is that of the document's current text */
    uint32_t hash; /* ipykernel's name for the text (cellname_ipykernel_hash) */
};

struct lsp_notebook {
    char *uri;  /* owned */
    char *type; /* owned notebookType, e.g. "jupyter-notebook" */
    int version;
    struct lsp_nb_cell *cells; /* owned, n in notebook order */
    size_t n, cap;
    struct lsp_notebook *next;
};

/* All open notebooks of a server (s->nbs). Zero it to start. */
struct lsp_notebooks {
    struct lsp_notebook *head; /* owned list */
    size_t count;
};

/* Borrowed: the open notebook uri, or NULL. */
struct lsp_notebook *lsp_nb_find(struct lsp_notebooks *nbs, const char *uri);
/* Open notebook uri (type may be NULL), or start an open one again with no
 * cells: *nb (borrowed) to fill with lsp_nb_splice. 0, -E2BIG (LSP_NB_MAX
 * open) or -ENOMEM. */
int lsp_nb_open(struct lsp_notebooks *nbs, const char *uri, const char *type, int version,
                struct lsp_notebook **nb);
/* Replace cells [start, start + del) of nb by the NotebookCells of add
 * (borrowed array, may be NULL). 0, -EINVAL (nothing changed), -E2BIG or
 * -ENOMEM. */
int lsp_nb_splice(struct lsp_notebook *nb, size_t start, size_t del, const json_t *add);
/* cells.data (borrowed): cells whose kind changed, found by document. */
void lsp_nb_cells_data(struct lsp_notebook *nb, const json_t *data);
/* Forget notebook uri (its cells' documents stay open): 0 or -ENOENT. */
int lsp_nb_close(struct lsp_notebooks *nbs, const char *uri);
/* The text of document uri changed (edited, reopened): if it is a cell,
 * its hash is computed anew when next asked for. */
void lsp_nb_text_changed(struct lsp_notebooks *nbs, const char *uri);

/* 0 and *hash (may be NULL) when uri is a code cell of an open notebook,
 * its text open: the hash ipykernel names the cell's current text by;
 * -ENOENT otherwise. */
int lsp_nb_cell_hash(struct lsp_facilities *s, const char *uri, uint32_t *hash);
/* Borrowed: the open code cell whose current text ipykernel compiles to
 * path (".../ipykernel_<pid>/<hash>.py"), the first in notebook order when
 * several have that text; NULL when none. */
struct doc *lsp_nb_cell_of_path(struct lsp_facilities *s, const char *path);

/* hotline/debug/state: [{uri, notebookType, version, cells: [{document,
 * kind, hash}]}] (new). */
json_t *lsp_nb_debug(struct lsp_facilities *s);
void lsp_nb_free(struct lsp_notebooks *nbs);

#endif
