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
/* The names of code's top-level `def` / `async def` / `class` statements
 * (those at its least indentation), each followed by a space, into names
 * (cap n, cut at a whole name): the count. */
int pytext_top_defs(const char *code, char *names, size_t n);
/* The innermost function around line (line itself when it is a `def`) whose
 * name is one of names (pytext_top_defs' form): its lines [*l0, *l1), from
 * its first decorator when with_decorators, to the end of its body. 0, or
 * -ENOENT when no such function encloses line. st: pytext_logical_starts. */
int pytext_enclosing_def(struct doc *d, const unsigned char *st, uint32_t line, const char *names,
                         int with_decorators, uint32_t *l0, uint32_t *l1);
/* 1 when a `for` / `while` loop encloses line (the line itself not counted)
 * inside its innermost function, or at the top level when none. */
int pytext_in_loop(struct doc *d, const unsigned char *st, uint32_t line);
/* d's text with lines [l0, l1) replaced by code (new), or NULL. */
char *pytext_splice(struct doc *d, uint32_t l0, uint32_t l1, const char *code);

#endif
