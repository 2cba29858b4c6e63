/* Open text documents: the editor's view of each file (text, version), kept in
 * sync through didOpen / didChange / didClose. Text is UTF-8; LSP positions
 * arrive in the negotiated encoding and are converted per line here.
 *
 * Every change reports how lines moved (struct doc_edit), so that anything
 * anchored to lines (profile hints) can follow the text or be retired. */
#ifndef HOTLINE_DOCUMENT_H
#define HOTLINE_DOCUMENT_H

#include <stddef.h>
#include <stdint.h>

#include "position.h"

#define DOC_MAX_BYTES ((size_t)256 << 20) /* a document larger than this is refused */

struct doc {
    char *uri;      /* owned */
    char *language; /* owned, may be NULL */
    int version;
    char *text;       /* owned, NUL-terminated UTF-8 */
    size_t len;       /* bytes of text, without the NUL */
    size_t *lines;    /* owned: byte offset where each line starts */
    size_t nlines;    /* always >= 1 */
    size_t max_bytes; /* cap on len: the store's when the document opened */
    struct doc *next; /* hash chain */
};

/* How one change moved lines: old lines [first, first + old_count) were
 * replaced by new lines [first, first + new_count); lines after the range
 * shift by new_count - old_count; lines before it are untouched. Edits that
 * only insert or delete whole lines (typing Enter at the end of a line,
 * pasting lines above, deleting a line, also from the end of the line above
 * as Backspace on an empty line does) touch no surviving line: old_count or
 * new_count is then 0 and every other line keeps its identity. */
struct doc_edit {
    uint32_t first;
    uint32_t old_count;
    uint32_t new_count;
    int whole; /* 1: full-text replacement, nothing can be mapped */
};

struct doc_store {
    struct doc **buckets;
    size_t nbuckets;
    size_t count;
    size_t max_bytes; /* cap on a document's size; 0 = DOC_MAX_BYTES */
};

void doc_store_init(struct doc_store *s);
void doc_store_free(struct doc_store *s);

/* Borrowed pointer to the document, or NULL. */
struct doc *doc_find(struct doc_store *s, const char *uri);

/* Open (or reopen, replacing) a document. Copies its arguments. 0, -ENOMEM or
 * -EFBIG. */
int doc_open(struct doc_store *s, const char *uri, const char *language, int version,
             const char *text, size_t len);

/* Close a document. 0 or -ENOENT. */
int doc_close(struct doc_store *s, const char *uri);

/* Apply one content change. With has_range == 0 the text replaces the whole
 * document. Range positions are (line, column in enc); out-of-range positions
 * are clamped (reported as -ERANGE after the change is applied, so the caller
 * can log it). *edit (may be NULL) receives how lines moved. 0, -ERANGE,
 * -ENOMEM or -EFBIG (document unchanged on the last two). */
int doc_apply_change(struct doc *d, int has_range, uint32_t l0, uint32_t c0, uint32_t l1,
                     uint32_t c1, const char *text, size_t len, enum pos_encoding enc,
                     struct doc_edit *edit);

/* Borrowed pointer to line `line` (without its line terminator); *len gets
 * its length in bytes. NULL (and *len 0) if the line does not exist. */
const char *doc_line(const struct doc *d, uint32_t line, size_t *len);

#endif
