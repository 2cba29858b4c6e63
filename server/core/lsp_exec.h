/* The live line of a profiled program, as hotline/executing sends it
 * (docs/lsp.md): computed once here so that no editor has to. */
#ifndef HOTLINE_LSP_EXEC_H
#define HOTLINE_LSP_EXEC_H

#include <jansson.h>
#include <stddef.h>

#include "core/facilities.h"

/* 1 when file is the program's own code: under one of dirs (borrowed, ndirs
 * of them; NULL entries are skipped) and not an installed package, or a
 * Jupyter cell (ipykernel's <tmp>/ipykernel_<pid>/<hash>.py, text/cellname.h). */
int lsp_exec_user_file(const char *file, const char *const *dirs, int ndirs);
/* The dotted module of a frame's file, as editors name a library call,
 * into buf (cap n); "" if none. */
void lsp_exec_module_of(const char *file, char *buf, size_t n);
/* The call expression in line (len bytes, not 0-terminated) that entered
 * the library function fn ("BaseMixture.fit"): "gmm.fit" in
 * "gmm.fit(temp)", into buf (cap n); "" if none. */
void lsp_exec_call_text(const char *line, size_t len, const char *fn, char *buf, size_t n);
/* From a resolved `now` (borrowed): the thread whose innermost own frame
 * (lsp_exec_user_file) is most recent, as {uri, line, thread, since_s,
 * stack, call, text} (new), or NULL if no thread runs own code. The uri is
 * the one the editor shows that file under (lsp_pview_uri: a notebook cell
 * for a cell's file). */
json_t *lsp_exec_from_now(struct lsp_facilities *s, const json_t *now, const char *const *dirs,
                          int ndirs);

#endif
