/* compare: pairing two profiles (see compare.h). */
#include "store/compare.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double cmp_time(const struct agent_stats *s)
{
    return s->v[AGENT_STAT_PY] + s->v[AGENT_STAT_NAT] + s->v[AGENT_STAT_SYS];
}

void cmp_change_word(const struct cmp_row *r, char *buf, size_t n)
{
    double o = cmp_time(&r->old), c = cmp_time(&r->cur);
    if (!r->has_old)
        snprintf(buf, n, "new");
    else if (!r->has_new)
        snprintf(buf, n, "gone");
    else if (o > 0)
        snprintf(buf, n, "%+.0f%%", 100.0 * (c - o) / o);
    else
        buf[0] = 0;
}

int cmp_row_changed(const struct cmp_row *r)
{
    return cmp_time(&r->old) != cmp_time(&r->cur) ||
           r->old.v[AGENT_STAT_ALLOC] != r->cur.v[AGENT_STAT_ALLOC];
}

static int rows_have_memory(const struct cmp_row *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].old.v[AGENT_STAT_ALLOC] > 0 || v[i].cur.v[AGENT_STAT_ALLOC] > 0) return 1;
    return 0;
}

int cmp_has_memory(const struct cmp_result *r)
{
    return rows_have_memory(r->funcs, r->nfuncs) || rows_have_memory(r->lines, r->nlines);
}

/* ---- files ------------------------------------------------------------ */

/* How many trailing path components a and b share ("/x/a/b.py" and
 * "/y/a/b.py": 2). */
static int common_tail(const char *a, const char *b)
{
    size_t i = strlen(a), j = strlen(b);
    int n = 0;
    while (i && j) {
        size_t si = i, sj = j;
        while (si && a[si - 1] != '/')
            si--;
        while (sj && b[sj - 1] != '/')
            sj--;
        if (i - si != j - sj || memcmp(a + si, b + sj, i - si)) break;
        if (i - si) n++;
        if (!si || !sj) break;
        i = si - 1;
        j = sj - 1;
    }
    return n;
}

const struct prof_file *profile_find_file(const struct profile *p, const char *name, size_t *nmatch,
                                          const struct prof_file **first)
{
    *nmatch = 0;
    if (first) *first = NULL;
    const struct prof_file *exact = profile_file(p, name);
    if (exact) {
        *nmatch = 1;
        if (first) *first = exact;
        return exact;
    }
    while (name[0] == '.' && name[1] == '/')
        name += 2;
    size_t nl = strlen(name);
    if (!nl) return NULL;
    const struct prof_file *hit = NULL;
    for (size_t i = 0; i < p->nfiles; i++) {
        const char *path = p->files[i]->path;
        size_t pl = strlen(path);
        if (pl > nl && path[pl - nl - 1] == '/' && !strcmp(path + pl - nl, name)) {
            if (!hit && first) *first = p->files[i];
            hit = p->files[i];
            ++*nmatch;
        }
    }
    return *nmatch == 1 ? hit : NULL;
}

/* One path and where it came from, for finding exact matches by bsearch. */
struct path_ix {
    const char *path;
    size_t i;
};

static int cmp_path_ix(const void *a, const void *b)
{
    return strcmp(((const struct path_ix *)a)->path, ((const struct path_ix *)b)->path);
}

/* Greedy on the shared tail, longest first, after the exact paths (found
 * by bsearch: a profile may hold 100,000 files); a tie for the best old
 * path of a new one pairs nothing. */
int cmp_pair_paths(const char *const *oldp, size_t no, const char *const *newp, size_t nn,
                   long *pair, size_t *ambiguous)
{
    unsigned char *taken = calloc(no ? no : 1, 1);
    struct path_ix *ix = malloc((no ? no : 1) * sizeof *ix);
    if (!taken || !ix) {
        free(taken);
        free(ix);
        return -ENOMEM;
    }
    *ambiguous = 0;
    for (size_t j = 0; j < no; j++)
        ix[j] = (struct path_ix){oldp[j], j};
    qsort(ix, no, sizeof *ix, cmp_path_ix);
    for (size_t i = 0; i < nn; i++) {
        struct path_ix key = {newp[i], 0};
        const struct path_ix *hit = no ? bsearch(&key, ix, no, sizeof *ix, cmp_path_ix) : NULL;
        pair[i] = hit ? (long)hit->i : -1;
        if (hit) taken[hit->i] = 1; /* so that no suffix pairing takes it */
    }
    for (size_t i = 0; i < nn; i++) {
        if (pair[i] >= 0) continue;
        int best = 0;
        size_t bj = 0, ties = 0;
        for (size_t j = 0; j < no; j++) {
            if (taken[j]) continue;
            int t = common_tail(newp[i], oldp[j]);
            if (t > best) {
                best = t;
                bj = j;
                ties = 1;
            } else if (t == best && t > 0) {
                ties++;
            }
        }
        if (best > 0 && ties == 1) {
            pair[i] = (long)bj;
            taken[bj] = 1;
        } else if (best > 0) {
            ++*ambiguous;
        }
    }
    free(taken);
    free(ix);
    return 0;
}

static const char **file_paths(const struct profile *p)
{
    const char **v = malloc((p->nfiles ? p->nfiles : 1) * sizeof *v);
    for (size_t i = 0; v && i < p->nfiles; i++)
        v[i] = p->files[i]->path;
    return v;
}

/* For each file of cur, the index of its paired file in old (or -1). */
static int pair_files(const struct profile *old, const struct profile *cur, long *pair,
                      size_t *ambiguous)
{
    const char **op = file_paths(old), **np = file_paths(cur);
    int rc = op && np ? cmp_pair_paths(op, old->nfiles, np, cur->nfiles, pair, ambiguous) : -ENOMEM;
    free(op);
    free(np);
    return rc;
}

/* ---- rows -------------------------------------------------------------- */

struct rows {
    struct cmp_row *v;
    size_t n, cap;
};

static struct cmp_row *row_add(struct rows *r)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct cmp_row *v = realloc(r->v, cap * sizeof *v);
        if (!v) return NULL;
        r->v = v;
        r->cap = cap;
    }
    struct cmp_row *row = &r->v[r->n++];
    memset(row, 0, sizeof *row);
    return row;
}

static int cmp_fn_name(const void *a, const void *b)
{
    const struct prof_func *x = *(const struct prof_func *const *)a;
    const struct prof_func *y = *(const struct prof_func *const *)b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return (x->first_line > y->first_line) - (x->first_line < y->first_line);
}

static const struct prof_func **sorted_funcs(const struct prof_file *f)
{
    const struct prof_func **v = malloc((f && f->nfuncs ? f->nfuncs : 1) * sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; f && i < f->nfuncs; i++)
        v[i] = f->funcs[i];
    if (f) qsort(v, f->nfuncs, sizeof *v, cmp_fn_name);
    return v;
}

/* A file's functions in line order, for finding the one that holds a line
 * in O(log n) plus a bounded scan: a profile may hold 100,000 functions. */
struct by_line {
    const struct prof_func **fn; /* first_line ascending, the outer first on a tie */
    int *shift;                  /* new - old first line of the paired function */
    unsigned char *paired;
    long *last_paired; /* index of the last paired function at or before i, or -1 */
    size_t n;
};

/* How far back from the last function starting at or above a line the
 * holder is looked for: nested and neighbouring functions are near it. */
#define HOLDER_SCAN 256

static int cmp_fn_line(const void *a, const void *b)
{
    const struct prof_func *x = *(const struct prof_func *const *)a;
    const struct prof_func *y = *(const struct prof_func *const *)b;
    if (x->first_line != y->first_line) return x->first_line < y->first_line ? -1 : 1;
    return (x->last_line < y->last_line) - (x->last_line > y->last_line);
}

static int by_line_init(struct by_line *bl, const struct prof_file *f)
{
    memset(bl, 0, sizeof *bl);
    bl->n = f ? f->nfuncs : 0;
    size_t m = bl->n ? bl->n : 1;
    bl->fn = malloc(m * sizeof *bl->fn);
    bl->shift = calloc(m, sizeof *bl->shift);
    bl->paired = calloc(m, 1);
    bl->last_paired = malloc(m * sizeof *bl->last_paired);
    if (!bl->fn || !bl->shift || !bl->paired || !bl->last_paired) return -ENOMEM;
    for (size_t i = 0; i < bl->n; i++)
        bl->fn[i] = f->funcs[i];
    qsort(bl->fn, bl->n, sizeof *bl->fn, cmp_fn_line);
    return 0;
}

static void by_line_free(struct by_line *bl)
{
    free(bl->fn);
    free(bl->shift);
    free(bl->paired);
    free(bl->last_paired);
}

/* Index of fn in bl (by its line order, then pointer), or -1. */
static long by_line_find(const struct by_line *bl, const struct prof_func *fn)
{
    size_t lo = 0, hi = bl->n;
    while (lo < hi) { /* first entry not before fn's line order */
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_fn_line(&bl->fn[mid], &fn) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < bl->n && !cmp_fn_line(&bl->fn[i], &fn); i++)
        if (bl->fn[i] == fn) return (long)i;
    return -1;
}

/* The last function starting at or above line, or -1. */
static long by_line_at(const struct by_line *bl, int line)
{
    size_t lo = 0, hi = bl->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bl->fn[mid]->first_line <= line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;
}

/* The innermost function holding line (the latest-starting one that does),
 * or -1. */
static long holder(const struct by_line *bl, int line)
{
    long at = by_line_at(bl, line);
    for (long i = at; i >= 0 && at - i < HOLDER_SCAN; i--)
        if (bl->fn[i]->last_line >= line) return i;
    return -1;
}

/* The shift (new line - old line) for a line of the new file: its
 * innermost function's when that one is paired (none when it is new), else
 * the nearest paired function starting above it, else 0 (module level
 * above every function keeps its numbers). */
static int shift_for(const struct by_line *bl, int line, const struct prof_func **name, int *known)
{
    long h = holder(bl, line);
    *name = h >= 0 ? bl->fn[h] : NULL;
    *known = 1;
    if (h >= 0) {
        *known = bl->paired[h];
        return bl->shift[h];
    }
    long at = by_line_at(bl, line);
    long k = at >= 0 ? bl->last_paired[at] : -1;
    return k >= 0 ? bl->shift[k] : 0;
}

static int compare_file(const struct prof_file *of, const struct prof_file *cf, struct rows *fr,
                        struct rows *lr)
{
    int rc = -ENOMEM;
    const struct prof_func **ov = sorted_funcs(of), **cv = sorted_funcs(cf);
    size_t no = of ? of->nfuncs : 0, nc = cf ? cf->nfuncs : 0;
    unsigned char *used = calloc(of && of->nlines ? of->nlines : 1, 1);
    struct by_line cl, ol;
    int cl_ok = !by_line_init(&cl, cf), ol_ok = !by_line_init(&ol, of);
    if (!ov || !cv || !used || !cl_ok || !ol_ok) goto done;

    /* functions: a merge walk over both name-sorted lists */
    for (size_t i = 0, j = 0; i < no || j < nc;) {
        int c = i >= no ? 1 : j >= nc ? -1 : strcmp(ov[i]->name, cv[j]->name);
        struct cmp_row *row = row_add(fr);
        if (!row) goto done;
        if (c <= 0) {
            row->file_old = of->path;
            row->name = ov[i]->name;
            row->line_old = ov[i]->first_line;
            row->has_old = 1;
            profile_func_stats(of, ov[i], &row->old);
        }
        if (c >= 0) {
            row->file_new = cf->path;
            row->name = cv[j]->name;
            row->line_new = cv[j]->first_line;
            row->has_new = 1;
            profile_func_stats(cf, cv[j], &row->cur);
        }
        if (c == 0) {
            long k = by_line_find(&cl, cv[j]);
            if (k >= 0) {
                cl.paired[k] = 1;
                cl.shift[k] = cv[j]->first_line - ov[i]->first_line;
            }
        }
        if (c <= 0) i++;
        if (c >= 0) j++;
    }
    for (size_t k = 0; k < cl.n; k++)
        cl.last_paired[k] = cl.paired[k] ? (long)k : k ? cl.last_paired[k - 1] : -1;

    /* lines of the new file, each to the old line its shift names */
    for (size_t k = 0; cf && k < cf->nlines; k++) {
        const struct prof_line *ln = &cf->lines[k];
        const struct prof_func *in;
        int known;
        int shift = shift_for(&cl, ln->line, &in, &known);
        struct cmp_row *row = row_add(lr);
        if (!row) goto done;
        row->file_new = cf->path;
        row->name = in ? in->name : NULL;
        row->line_new = ln->line;
        row->has_new = 1;
        row->cur = ln->st;
        if (!of) continue;
        row->file_old = of->path; /* the file is paired even when the line is not */
        if (!known) continue;
        long olno = (long)ln->line - shift;
        const struct agent_stats *st =
            olno >= 0 && olno <= INT_MAX ? profile_file_line(of, (int)olno) : NULL;
        if (!st) continue;
        size_t idx =
            (size_t)((const char *)st - (const char *)of->lines) / sizeof(struct prof_line);
        if (idx >= of->nlines || used[idx]) continue;
        used[idx] = 1;
        row->line_old = (int)olno;
        row->has_old = 1;
        row->old = *st;
    }
    /* old lines nothing new took */
    for (size_t k = 0; of && k < of->nlines; k++) {
        if (used[k]) continue;
        const struct prof_line *ln = &of->lines[k];
        long h = holder(&ol, ln->line);
        struct cmp_row *row = row_add(lr);
        if (!row) goto done;
        row->file_old = of->path;
        row->file_new = cf ? cf->path : NULL;
        row->name = h >= 0 ? ol.fn[h]->name : NULL;
        row->line_old = ln->line;
        row->has_old = 1;
        row->old = ln->st;
    }
    rc = 0;
done:
    free(ov);
    free(cv);
    free(used);
    by_line_free(&cl);
    by_line_free(&ol);
    return rc;
}

static int by_change(const void *a, const void *b)
{
    const struct cmp_row *x = a, *y = b;
    double dx = fabs(cmp_time(&x->cur) - cmp_time(&x->old));
    double dy = fabs(cmp_time(&y->cur) - cmp_time(&y->old));
    if (dx != dy) return dx < dy ? 1 : -1;
    double tx = cmp_time(&x->cur) + cmp_time(&x->old), ty = cmp_time(&y->cur) + cmp_time(&y->old);
    if (tx != ty) return tx < ty ? 1 : -1;
    const char *fx = x->file_new ? x->file_new : x->file_old;
    const char *fy = y->file_new ? y->file_new : y->file_old;
    int c = strcmp(fx, fy);
    if (c) return c;
    int lx = x->has_new ? x->line_new : x->line_old, ly = y->has_new ? y->line_new : y->line_old;
    return (lx > ly) - (lx < ly);
}

int profile_compare(const struct profile *old, const struct profile *cur, struct cmp_result *out)
{
    memset(out, 0, sizeof *out);
    struct rows fr = {0}, lr = {0};
    long *pair = calloc(cur->nfiles ? cur->nfiles : 1, sizeof *pair);
    unsigned char *taken = calloc(old->nfiles ? old->nfiles : 1, 1);
    int rc = -ENOMEM;
    if (!pair || !taken || pair_files(old, cur, pair, &out->files_ambiguous)) goto fail;
    for (size_t i = 0; i < cur->nfiles; i++) {
        const struct prof_file *of = pair[i] >= 0 ? old->files[pair[i]] : NULL;
        if (of) {
            out->files_paired++;
            taken[pair[i]] = 1;
        }
        if (compare_file(of, cur->files[i], &fr, &lr)) goto fail;
    }
    for (size_t j = 0; j < old->nfiles; j++)
        if (!taken[j] && compare_file(old->files[j], NULL, &fr, &lr)) goto fail;
    if (fr.n) qsort(fr.v, fr.n, sizeof *fr.v, by_change);
    if (lr.n) qsort(lr.v, lr.n, sizeof *lr.v, by_change);
    out->funcs = fr.v;
    out->nfuncs = fr.n;
    out->lines = lr.v;
    out->nlines = lr.n;
    free(pair);
    free(taken);
    return 0;
fail:
    free(fr.v);
    free(lr.v);
    free(pair);
    free(taken);
    return rc;
}

void profile_compare_free(struct cmp_result *r)
{
    free(r->funcs);
    free(r->lines);
    memset(r, 0, sizeof *r);
}

/* ---- JSON ------------------------------------------------------------- */

static json_t *side_json(const struct agent_stats *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "python_s", json_real(s->v[AGENT_STAT_PY]));
    json_object_set_new(o, "native_s", json_real(s->v[AGENT_STAT_NAT]));
    json_object_set_new(o, "system_s", json_real(s->v[AGENT_STAT_SYS]));
    json_object_set_new(o, "alloc_mb", json_real(s->v[AGENT_STAT_ALLOC]));
    json_object_set_new(o, "kept_mb", json_real(s->v[AGENT_STAT_KEPT]));
    return o;
}

static json_t *row_json(const struct cmp_row *r, int is_func)
{
    json_t *o = json_object();
    json_object_set_new(o, "file_old", r->file_old ? json_string(r->file_old) : json_null());
    json_object_set_new(o, "file_new", r->file_new ? json_string(r->file_new) : json_null());
    json_object_set_new(o, "name", r->name ? json_string(r->name) : json_null());
    const char *k_old = is_func ? "first_line_old" : "line_old";
    const char *k_new = is_func ? "first_line_new" : "line_new";
    json_object_set_new(o, k_old, r->has_old ? json_integer(r->line_old) : json_null());
    json_object_set_new(o, k_new, r->has_new ? json_integer(r->line_new) : json_null());
    json_object_set_new(o, "old", side_json(&r->old));
    json_object_set_new(o, "new", side_json(&r->cur));
    json_object_set_new(o, "change_s", json_real(cmp_time(&r->cur) - cmp_time(&r->old)));
    return o;
}

json_t *profile_compare_json(const struct profile *old, const struct profile *cur,
                             const struct cmp_result *r)
{
    json_t *root = json_object(), *fs = json_array(), *ls = json_array();
    if (!root || !fs || !ls) {
        json_decref(root);
        json_decref(fs);
        json_decref(ls);
        return NULL;
    }
    json_object_set_new(root, "version", json_integer(1));
    json_t *tot = json_object();
    json_object_set_new(tot, "old", side_json(&old->total));
    json_object_set_new(tot, "new", side_json(&cur->total));
    json_object_set_new(tot, "change_s", json_real(cmp_time(&cur->total) - cmp_time(&old->total)));
    json_object_set_new(tot, "elapsed_s_old", json_real(old->meta.elapsed_s));
    json_object_set_new(tot, "elapsed_s_new", json_real(cur->meta.elapsed_s));
    json_object_set_new(root, "totals", tot);
    json_object_set_new(root, "files_paired", json_integer((json_int_t)r->files_paired));
    json_object_set_new(root, "files_ambiguous", json_integer((json_int_t)r->files_ambiguous));
    for (size_t i = 0; i < r->nfuncs; i++)
        json_array_append_new(fs, row_json(&r->funcs[i], 1));
    for (size_t i = 0; i < r->nlines; i++)
        json_array_append_new(ls, row_json(&r->lines[i], 0));
    json_object_set_new(root, "functions", fs);
    json_object_set_new(root, "lines", ls);
    return root;
}
