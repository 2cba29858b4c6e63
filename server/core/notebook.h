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
 * the file's profile on the cell. */
#ifndef HOTLINE_NOTEBOOK_H
#define HOTLINE_NOTEBOOK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "text/document.h"

struct server;

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

/* initialize: the notebookDocumentSync capability (new): Python cells of
 * notebooks of type jupyter-notebook. */
json_t *lsp_nb_capability(void);

/* notebookDocument/didOpen, didChange, didClose (params borrowed). */
void lsp_nb_did_open(struct server *s, json_t *params);
void lsp_nb_did_change(struct server *s, json_t *params);
void lsp_nb_did_close(struct server *s, json_t *params);

/* The document d (borrowed) was edited: a cell's hash is computed anew. */
void lsp_nb_doc_edited(struct server *s, const struct doc *d);

/* 0 and *hash (may be NULL) when uri is a code cell of an open notebook,
 * its text open: the hash ipykernel names the cell's current text by;
 * -ENOENT otherwise. */
int lsp_nb_cell_hash(struct server *s, const char *uri, uint32_t *hash);
/* Borrowed: the open code cell whose current text ipykernel compiles to
 * path (".../ipykernel_<pid>/<hash>.py"), the first in notebook order when
 * several have that text; NULL when none. */
struct doc *lsp_nb_cell_of_path(struct server *s, const char *path);

/* hotline/debug/state: [{uri, notebookType, version, cells: [{document,
 * kind, hash}]}] (new). */
json_t *lsp_nb_debug(struct server *s);
void lsp_nb_free(struct lsp_notebooks *nbs);

#endif
