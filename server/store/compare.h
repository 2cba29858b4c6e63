/* compare: two profiles side by side (`hotline diff`), and a profile's file
 * named the way a user writes it (`hotline check`'s budgets).
 *
 * Profiles name files by absolute path, and two runs of the same code often
 * come from different folders (a CI checkout, a colleague's clone): a file
 * of the new profile is paired with the old file whose path shares the most
 * trailing components with it (at least the file name; a tie pairs
 * nothing). Functions pair by qualified name inside paired files (the k-th
 * definition of a name with the k-th, in line order), so a function whose
 * lines all moved is still one row. Lines pair through the shift of the
 * function that holds them (the innermost; else the nearest paired function
 * above them; else none): an edit above a function moves its lines, not
 * their pairing. An edit inside a function above a line still breaks that
 * line's pairing (the profile keeps no source text): it reads as one line
 * gone and one new. */
#ifndef HOTLINE_STORE_COMPARE_H
#define HOTLINE_STORE_COMPARE_H

#include <jansson.h>
#include <stddef.h>

#include "store/profile.h"

/* One function or line present in either profile. */
struct cmp_row {
    const char *file_old, *file_new; /* borrowed paths, NULL on the side it is absent */
    const char *name;                /* the function (a line's innermost function), or NULL */
    int line_old, line_new;          /* function rows: first_line */
    int has_old, has_new;            /* present on that side (line_* mean nothing otherwise) */
    struct agent_stats old, cur;     /* zero where absent */
};

struct cmp_result {
    struct cmp_row *funcs, *lines; /* owned, largest time change first */
    size_t nfuncs, nlines;
    size_t files_paired, files_ambiguous; /* new files left unpaired because of a tie */
};

/* Pairs old and cur (both borrowed; they must outlive the result).
 * Returns 0 or -ENOMEM. */
int profile_compare(const struct profile *old, const struct profile *cur, struct cmp_result *out);
void profile_compare_free(struct cmp_result *r);

/* Time of a stats entry as compared: python + native + system seconds. */
double cmp_time(const struct agent_stats *s);

/* Pairs paths the way files pair (above): pair[i] the index in oldp of the
 * old path newp[i] pairs with, or -1; *ambiguous the new paths left
 * unpaired by a tie. The flame graph of `diff --html` pairs its frames'
 * files with it. 0 or -ENOMEM. */
int cmp_pair_paths(const char *const *oldp, size_t no, const char *const *newp, size_t nn,
                   long *pair, size_t *ambiguous);

/* How the diff words a row's change into buf: "-55%", "new", "gone", or ""
 * (no old time to compare with). */
void cmp_change_word(const struct cmp_row *r, char *buf, size_t n);
/* Whether a row's time or allocated memory changed: the tables leave out
 * those that did not. */
int cmp_row_changed(const struct cmp_row *r);
/* Whether a row of either table has allocated memory on a side. */
int cmp_has_memory(const struct cmp_result *r);

/* The file of p that `name` means: its exact absolute path, else the one
 * file whose path ends in "/" + name (component-aligned: "mod.py" is not
 * "othermod.py"). Returns it, or NULL with *nmatch the number of files that
 * matched (0: none, >1: ambiguous; *first the first of them). */
const struct prof_file *profile_find_file(const struct profile *p, const char *name, size_t *nmatch,
                                          const struct prof_file **first);

/* The diff as JSON (docs/cli.md, `hotline diff --json`): totals, every
 * function row, every line row. New reference or NULL. */
json_t *profile_compare_json(const struct profile *old, const struct profile *cur,
                             const struct cmp_result *r);

#endif
