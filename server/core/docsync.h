/* Document sync (docsync.c): the core's document store kept in step with
 * the editor's buffers, for text documents and notebook cells alike. */
#ifndef HOTLINE_CORE_DOCSYNC_H
#define HOTLINE_CORE_DOCSYNC_H

#include <jansson.h>

#include "core/facilities.h"

/* textDocument/didOpen, didChange, didClose (params borrowed). */
void lsp_doc_did_open(struct lsp_facilities *s, json_t *params);
void lsp_doc_did_change(struct lsp_facilities *s, json_t *params);
void lsp_doc_did_close(struct lsp_facilities *s, json_t *params);

/* The same, one document at a time (the notebook provider's cells): open
 * the TextDocumentItem td (borrowed), apply the content changes (borrowed
 * array) to uri, close uri; each runs the view's and the providers'
 * document hooks and logs what it refuses (what: the method, for the log).
 * 0 or a negative errno. */
int lsp_doc_open(struct lsp_facilities *s, json_t *td, const char *what);
void lsp_doc_change(struct lsp_facilities *s, const char *uri, json_t *version, json_t *changes);
int lsp_doc_close(struct lsp_facilities *s, const char *uri);

#endif
