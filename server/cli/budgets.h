/* budgets: the texts of `hotline check`'s budgets, from the command line,
 * a file (one per line, '#' comments) or the `budgets` array of
 * [tool.hotline] in a pyproject.toml (TOML's basic and literal strings,
 * over any number of lines). Each problem is a line on stderr. */
#ifndef HOTLINE_CLI_BUDGETS_H
#define HOTLINE_CLI_BUDGETS_H

#include <stddef.h>

#define MAX_BUDGETS 1024

struct budgets {
    char *v[MAX_BUDGETS]; /* owned, trimmed, none empty */
    size_t n;
};

/* s[0..len) trimmed, added unless empty: 0 or -1 (too many, ENOMEM). */
int budgets_add(struct budgets *b, const char *s, size_t len);
/* Every line of the file at path (at most 1 MiB, regular): 0 or -1. */
int budgets_file(struct budgets *b, const char *path);
/* The budgets array of [tool.hotline] in the pyproject.toml at path: how
 * many were added (0: none, or no such file), or -1. */
int budgets_pyproject(struct budgets *b, const char *path);
void budgets_free(struct budgets *b);

#endif
