/* Which Python interpreter the server may run on its own (Optimize's probe
 * and check), and which it may not: a file in the workspace (a cloned
 * repository's .venv/bin/python, its pyvenv.cfg and its .pth files) is the
 * folder's code, which runs only once the user ran the program with it in
 * this session (hotline.run) — never merely because a client named it. */
#ifndef HOTLINE_CORE_INTERP_H
#define HOTLINE_CORE_INTERP_H

#include <stddef.h>

#include "core/facilities.h"

/* Most interpreters remembered as run in one session (a cap: what grows). */
#define LSP_INTERP_MAX_RAN 16

/* The interpreter a run would use when given `given` (a run's or the
 * setting's `python`, may be NULL): given, made absolute against the
 * server's directory when relative with a slash; else $VIRTUAL_ENV/bin/python
 * when executable; else "python3" (found on PATH). Borrowed, or buf. */
const char *lsp_interp_exe(const char *given, char *buf, size_t n);

/* A run the user started has executed exe (as lsp_interp_exe gave it). */
void lsp_interp_ran(struct lsp_facilities *s, const char *exe);

/* 1 when the server may run exe on its own: it is outside the workspace
 * (s->root_path, or doc_dir when there is no root; neither its path nor
 * its real path inside), or a run of this session executed it; else 0. */
int lsp_interp_trusted(struct lsp_facilities *s, const char *exe, const char *doc_dir);

#endif
