/* marimo.h: marimo's temporary cell files mapped to the notebook from
 * outside. `marimo edit` compiles each cell as <tmp>/marimo_<pid>/
 * __marimo__cell_<id>_.py, a name only in the kernel's linecache, which
 * hotline attach cannot read. What it can know without running code in
 * the target: the notebook (a `.py` argument of the kernel's parent, the
 * `marimo edit notebook.py` server, or of the process itself) and the
 * cell's id in the file name. marimo (0.25.2: _ast/cell_id.py) gives the
 * cells of a notebook loaded from its file the ids of a generator seeded
 * with 42, in the file's order (Hbol, MJUe, vblA, ...), and a cell's code
 * is the body of its `def` (line 1 = the line after the signature; for
 * `@app.function` and `@app.class_definition` the `def`/`class` line), so
 * the id names the cell and line N of the temp file is line start+N-1 of
 * the notebook. A mapped line must land on a line of code of that cell
 * (not blank, not a comment, inside the cell), else the frame keeps its
 * temporary name: a cell added or moved in the editor and not reloaded
 * is shown under the temporary name rather than on a wrong line. */
#ifndef HOTLINE_ATTACH_MARIMO_H
#define HOTLINE_ATTACH_MARIMO_H

#include <stddef.h>
#include <sys/types.h>

#define MARIMO_MAX_FILE (4 << 20) /* notebook bytes read */
#define MARIMO_MAX_CELLS 4096

struct marimo_cell {
    char id[8]; /* "Hbol", "setup" */
    int start;  /* notebook line (1-based) of the cell's line 1; 0: not mappable */
    int end;    /* last notebook line of the cell (inclusive) */
};

struct marimo_nb {
    char path[4096];
    char *text;    /* owned */
    int *line_off; /* owned: offset of each line's start, nlines + 1 entries */
    int nlines;
    struct marimo_cell *cells; /* owned */
    int ncells;
};

/* 1 when file is a marimo temporary cell file (its base name starts with
 * __marimo__cell_), its id copied into id (cap n); 0 when not. */
int marimo_cell_id(const char *file, char *id, size_t n);

/* The ids marimo gives the first n cells of a notebook loaded from its file
 * (random.Random(42).choices(ascii_letters, k=4), repeats skipped). */
void marimo_ids(int n, char (*out)[8]);

/* Parse the notebook text (borrowed; copied) into nb: 0, -ENOMEM, or
 * -EINVAL when it does not look like a marimo notebook. */
int marimo_nb_parse(struct marimo_nb *nb, const char *text, size_t len);
void marimo_nb_free(struct marimo_nb *nb);

/* Map line `line` of cell id's temp file to the notebook: its line, or 0
 * when it does not land on a line of code of that cell. */
int marimo_nb_line(const struct marimo_nb *nb, const char *id, int line);

/* 1 when pid runs `marimo edit` / `marimo run` (`marimo` as a script or
 * `-m marimo`), its notebook (absolute, "" when it names none) in out. */
int marimo_server(const char *procfs, pid_t pid, char *out, size_t n);

/* The same, and the script run (the `marimo` console script, as Python
 * names its file; "-m" for `python -m marimo`) in script (cap sn). */
int marimo_server_script(const char *procfs, pid_t pid, char *out, size_t n, char *script,
                         size_t sn);

/* 1 when pid is a kernel of a marimo server (a multiprocessing child of
 * `marimo edit`), its server's pid in *server and notebook in out. */
int marimo_kernel(const char *procfs, pid_t pid, pid_t *server, char *out, size_t n);

/* The notebook a process's cells come from: the first `.py` argument of
 * its own or its parent's command line that is a regular file holding
 * `marimo.App`; 0 (path in out) or -ENOENT. */
int marimo_find_notebook(const char *procfs, pid_t pid, char *out, size_t n);

/* Read path (a regular file, at most MARIMO_MAX_FILE bytes, opened
 * non-blocking) into nb: 0 or negative. */
int marimo_nb_load(struct marimo_nb *nb, const char *path);

#endif
