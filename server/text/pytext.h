/* Python source text without a parser (pytext.c). New texts and arrays are
 * malloc'd: the caller frees them. */
#ifndef HOTLINE_PYTEXT_H
#define HOTLINE_PYTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "text/document.h"

/* Leading spaces and tabs of the line t (len bytes). */
size_t pytext_lead_ws(const char *t, size_t len);
/* Which of the nlines lines ('\n'-separated) of text begin a logical line
 * (new array, one flag per line, or NULL): not inside a string, brackets,
 * or after a backslash. in_str (nlines flags, may be NULL) gets which lines
 * begin inside a string. */
unsigned char *pytext_logical_starts(const char *text, size_t tlen, size_t nlines,
                                     unsigned char *in_str);
/* Lines [*l0, *l1) of the innermost loop or function around line (the line
 * itself when it heads one, or the whole statement when nothing encloses
 * it), at most max_lines long. st: pytext_logical_starts of d. */
void pytext_enclosing_block(struct doc *d, const unsigned char *st, uint32_t line,
                            uint32_t max_lines, uint32_t *l0, uint32_t *l1);
/* Lines [l0, l1) of d as one text (new), or NULL. */
char *pytext_lines(struct doc *d, uint32_t l0, uint32_t l1);
/* d's top-level `import` / `from` lines (*imports) and the top-level module
 * names they import, space separated (*modules); both new, or NULL. */
void pytext_imports(struct doc *d, const unsigned char *st, char **imports, char **modules);
/* code re-indented to indent (new): its common indentation replaced on
 * lines outside strings; a multi-line string's inside is kept as it is. */
char *pytext_reindent(const char *code, const char *indent, int want_final_nl);
/* d's text with lines [l0, l1) replaced by code (new), or NULL. */
char *pytext_splice(struct doc *d, uint32_t l0, uint32_t l1, const char *code);

#endif
