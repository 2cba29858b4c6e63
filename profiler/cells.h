/* cells.h: notebook cells compiled under temporary file names, mapped back
 * to the notebook's own file and lines (cells.c).
 *
 * marimo compiles a cell of notebook.py to <tmp>/marimo_<pid>/
 * __marimo__cell_<id>_.py, a name that exists only in linecache. The
 * sampler cannot read linecache (no GIL), so it asks: a frame of such a
 * file that it has no mapping for is queued, and the Python side
 * (hotline/_cells.py, a thread waiting in cells_wait) finds the cell's code
 * in the notebook file and answers with cells_set. The mapping is global to
 * the process (it outlives an agent: a restarted agent keeps it). */
#ifndef HOTLINE_CELLS_H
#define HOTLINE_CELLS_H

#include <stddef.h>

#define CELLS_MAX 4096   /* mappings kept (cells of every notebook run) */
#define CELLS_PENDING 64 /* names waiting for an answer */

/* 1 when path is a cell's temporary file name (cheap: the base name). */
int cells_is_cell(const char *path);

/* The mapping of a cell file: 1 and to (its notebook file) and delta (add
 * to the cell's line numbers); 0 when there is none (to untouched). ask 1
 * queues a name with no mapping for the Python side, ask 2 any name (its
 * code may have changed: the answer may be the same). */
int cells_lookup(const char *path, int ask, char *to, size_t n, int *delta);

/* Changes each time a mapping is set or dropped: a cached cell frame
 * resolved under another generation is resolved again. */
unsigned cells_gen(void);

/* Set (to != NULL) or drop (to == NULL) the mapping of a cell file.
 * 0 or -errno (-ENOSPC when CELLS_MAX mappings exist). */
int cells_set(const char *from, const char *to, int delta);

/* Wait up to timeout_s for queued names; moves them to *names (new array
 * of new strings, cells_free_names) and returns how many (0 on timeout), or
 * -errno. Any thread, without the GIL. */
int cells_wait(double timeout_s, char ***names);
void cells_free_names(char **names, int n);

/* The thread that waits in cells_wait (0: none yet): the sampler leaves
 * it out, it is Hotline's own. */
long cells_waiter_tid(void);

/* In a forked child: the lock may have been held by a thread that does not
 * exist there. */
void cells_after_fork(void);

#endif
