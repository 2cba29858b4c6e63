/* The profile view the core owns (lsp_pview.h). */
#include "core/lsp_pview.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lsp_call.h"
#include "core/lsp_out.h"
#include "core/notebook.h"
#include "core/registry.h"
#include "core/uri.h"
#include "text/cellname.h"

/* The view to write: facilities give providers a const one; this file is
 * its one writer. */
static struct lsp_pview *pv(struct lsp_facilities *s)
{
    return (struct lsp_pview *)s->view;
}

const struct profile *lsp_pview_profile(struct lsp_facilities *s)
{
    return pv(s)->prof;
}

const struct prof_file *lsp_pview_file(struct lsp_facilities *s, const char *path)
{
    struct lsp_pview *v = pv(s);
    return anchor_profile_file(&v->as, v->prof, v->gen, path);
}

/* Borrowed: the profile's ipykernel cell file named by hash (the first,
 * when kernels of several pids ran the same text), or NULL. The index is
 * rebuilt when the profile changes or grows, as anchor's real paths. */
static const struct prof_file *cell_file(struct lsp_facilities *s, uint32_t hash)
{
    struct lsp_pview *v = pv(s);
    const struct profile *p = v->prof;
    if (!p) return NULL;
    if (!v->cells || v->cells_for != p || v->cells_nfiles != p->nfiles || v->cells_gen != v->gen) {
        if (!v->cells && !(v->cells = json_object())) return NULL;
        json_object_clear(v->cells);
        for (size_t i = 0; i < p->nfiles; i++) {
            uint32_t h;
            char key[16];
            if (cellname_ipykernel_parse(p->files[i]->path, &h)) continue;
            snprintf(key, sizeof key, "%u", (unsigned)h);
            if (!json_object_get(v->cells, key))
                json_object_set_new(v->cells, key, json_string(p->files[i]->path));
        }
        v->cells_for = p;
        v->cells_nfiles = p->nfiles;
        v->cells_gen = v->gen;
    }
    char key[16];
    snprintf(key, sizeof key, "%u", (unsigned)hash);
    const char *path = json_string_value(json_object_get(v->cells, key));
    return path ? profile_file(p, path) : NULL;
}

const struct prof_file *lsp_pview_doc_file(struct lsp_facilities *s, struct doc *d, int *cell)
{
    uint32_t hash;
    if (cell) *cell = 0;
    if (!d || !pv(s)->prof) return NULL;
    if (!lsp_nb_cell_hash(s, d->uri, &hash)) {
        if (cell) *cell = 1;
        return cell_file(s, hash);
    }
    char *path = lsp_uri_to_path(d->uri);
    const struct prof_file *pf = path ? lsp_pview_file(s, path) : NULL;
    free(path);
    return pf;
}

char *lsp_pview_uri(struct lsp_facilities *s, const char *path)
{
    struct doc *c = lsp_nb_cell_of_path(s, path);
    return c ? strdup(c->uri) : lsp_path_to_uri(path);
}

int lsp_docview_open(struct lsp_facilities *s, struct doc *d, struct lsp_docview *v)
{
    memset(v, 0, sizeof *v);
    if (!d || !pv(s)->prof) return -ENOENT;
    v->d = d;
    v->pf = lsp_pview_doc_file(s, d, &v->cell);
    if (!v->pf) return -ENOENT;
    v->path = v->pf->path; /* the same file under the store's name */
    struct anchor_set *as = &pv(s)->as;
    if (v->cell) {
        /* nothing to read (the kernel keeps cells in memory): the cell's
         * text is the text that ran, since it hashes to the file's name */
        v->snap = anchor_snap_find(as, v->path);
        if (!v->snap) v->snap = anchor_snap_from_text(as, v->path, d->text, d->len);
    } else {
        v->snap = anchor_snap_get(as, v->path);
    }
    v->a = v->snap ? anchor_of(as, d, v->path) : NULL;
    return v->snap && v->a ? 0 : -ENOENT;
}

int lsp_docview_line(const struct lsp_docview *v, uint32_t cur)
{
    return v->a && v->snap ? anchor_line(v->a, v->snap, v->d, cur) : 0;
}

long lsp_docview_find(const struct lsp_docview *v, int line)
{
    int32_t want = line - 1;
    if (!v->a) return -1;
    if (want >= 0 && (size_t)want < v->a->n && v->a->map[want] == want &&
        lsp_docview_line(v, (uint32_t)want) == line)
        return want; /* the common case: nothing moved */
    for (size_t i = 0; i < v->a->n; i++)
        if (v->a->map[i] == want) return lsp_docview_line(v, (uint32_t)i) == line ? (long)i : -1;
    return -1;
}

int lsp_profiled_line(struct lsp_facilities *s, struct doc *d, uint32_t cur,
                      const struct prof_file **pf)
{
    struct lsp_docview v;
    int line = lsp_docview_open(s, d, &v) ? 0 : lsp_docview_line(&v, cur);
    if (pf) *pf = line ? v.pf : NULL;
    return line;
}

/* ---- the run before ---- */

/* Rows by (file_new, line_new, name): how the lookups find them. */
static int row_key_cmp(const char *fa, int la, const char *na, const struct cmp_row *b)
{
    int c = strcmp(fa, b->file_new);
    if (c) return c;
    if (la != b->line_new) return la < b->line_new ? -1 : 1;
    return na && b->name ? strcmp(na, b->name) : 0;
}

static int row_sort_lines(const void *a, const void *b)
{
    const struct cmp_row *x = *(const struct cmp_row *const *)a;
    return row_key_cmp(x->file_new, x->line_new, NULL, *(const struct cmp_row *const *)b);
}

static int row_sort_funcs(const void *a, const void *b)
{
    const struct cmp_row *x = *(const struct cmp_row *const *)a;
    return row_key_cmp(x->file_new, x->line_new, x->name, *(const struct cmp_row *const *)b);
}

/* New array of the rows of r[0..n) present in the new profile, sorted by
 * how; NULL on ENOMEM. */
static const struct cmp_row **row_index(const struct cmp_row *r, size_t n, size_t *nout,
                                        int (*how)(const void *, const void *))
{
    const struct cmp_row **ix = malloc((n ? n : 1) * sizeof *ix);
    *nout = 0;
    if (!ix) return NULL;
    for (size_t i = 0; i < n; i++)
        if (r[i].has_new) ix[(*nout)++] = &r[i];
    qsort(ix, *nout, sizeof *ix, how);
    return ix;
}

static void uncompare(struct lsp_pview *v)
{
    profile_compare_free(&v->cmp);
    free(v->cmp_lines);
    free(v->cmp_funcs);
    v->cmp_lines = v->cmp_funcs = NULL;
    v->ncmp_lines = v->ncmp_funcs = 0;
    v->compared = 0;
}

static void drop_prev(struct lsp_pview *v)
{
    uncompare(v);
    profile_free(v->prev);
    v->prev = NULL;
}

void lsp_pview_compare(struct lsp_facilities *s)
{
    struct lsp_pview *v = pv(s);
    uncompare(v);
    if (!v->prev || !v->prof) return;
    const char *a = v->prev->meta.program, *b = v->prof->meta.program;
    if (!a || !b || strcmp(a, b)) {
        /* another program ran in between: the one before is no longer
         * the previous run of anything shown */
        drop_prev(v);
        return;
    }
    if (profile_compare(v->prev, v->prof, &v->cmp)) {
        lsp_log(s, LSP_MSG_WARNING, "no comparison with the previous run: out of memory");
        return;
    }
    v->cmp_lines = row_index(v->cmp.lines, v->cmp.nlines, &v->ncmp_lines, row_sort_lines);
    v->cmp_funcs = row_index(v->cmp.funcs, v->cmp.nfuncs, &v->ncmp_funcs, row_sort_funcs);
    if (!v->cmp_lines || !v->cmp_funcs)
        uncompare(v);
    else
        v->compared = 1;
}

const struct cmp_result *lsp_pview_comparison(struct lsp_facilities *s, unsigned long *old_gen)
{
    struct lsp_pview *v = pv(s);
    if (old_gen) *old_gen = v->prev_gen;
    return v->compared ? &v->cmp : NULL;
}

/* The row of ix[0..n) with that key, or NULL (a binary search). */
static const struct cmp_row *row_find(const struct cmp_row **ix, size_t n, const char *path,
                                      int line, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = row_key_cmp(path, line, name, ix[mid]);
        if (!c) return ix[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const struct cmp_row *lsp_pview_line_change(struct lsp_facilities *s, const char *path, int line)
{
    struct lsp_pview *v = pv(s);
    return v->compared && path ? row_find(v->cmp_lines, v->ncmp_lines, path, line, NULL) : NULL;
}

const struct cmp_row *lsp_pview_func_change(struct lsp_facilities *s, const char *path,
                                            int first_line, const char *name)
{
    struct lsp_pview *v = pv(s);
    return v->compared && path && name
               ? row_find(v->cmp_funcs, v->ncmp_funcs, path, first_line, name)
               : NULL;
}

/* ---- writing ---- */

void lsp_pview_replace(struct lsp_facilities *s, struct profile *p, struct anchor_set *snaps,
                       struct memprof_leak_set *leaks)
{
    struct lsp_pview *v = pv(s);
    if (v->let_go) { /* once: its holder lets go before the profile does */
        void (*let_go)(struct lsp_facilities *, void *) = v->let_go;
        v->let_go = NULL;
        let_go(s, v->let_go_data);
    }
    drop_prev(v);
    if (p && v->prof && !v->running) { /* complete: the run before the next one */
        v->prev = v->prof;
        v->prev_gen = v->gen;
    } else {
        profile_free(v->prof);
    }
    v->prof = p;
    anchor_set_clear(&v->as);
    if (snaps) { /* only the snapshots: anchors are made against the new ones */
        v->as.snaps = snaps->snaps;
        v->as.nsnaps = snaps->nsnaps;
        snaps->snaps = NULL;
        snaps->nsnaps = 0;
    }
    memprof_leak_set_free(v->leaks);
    v->leaks = leaks;
    v->gen++;
}

void lsp_pview_snapshot(struct lsp_facilities *s, const char *path)
{
    anchor_snap_get(&pv(s)->as, path);
}

void lsp_pview_set_leaks(struct lsp_facilities *s, struct memprof_leak_set *leaks)
{
    memprof_leak_set_free(pv(s)->leaks);
    pv(s)->leaks = leaks;
}

void lsp_pview_set_live(struct lsp_facilities *s, json_t *live)
{
    json_decref(pv(s)->live);
    pv(s)->live = live;
}

void lsp_pview_hold(struct lsp_facilities *s, void (*let_go)(struct lsp_facilities *, void *),
                    void *data)
{
    pv(s)->let_go = let_go;
    pv(s)->let_go_data = data;
}

void lsp_pview_set_running(struct lsp_facilities *s, int running)
{
    pv(s)->running = running;
}

static void now_clear(struct lsp_pview *v)
{
    json_decref(v->now);
    v->now = NULL;
    for (int i = 0; i < 2; i++) {
        free(v->now_dirs[i]);
        v->now_dirs[i] = NULL;
    }
}

void lsp_pview_now_begin(struct lsp_facilities *s, const char *dir1, const char *dir2,
                         const char *label, uint64_t since_ns)
{
    struct lsp_pview *v = pv(s);
    now_clear(v);
    v->now_dirs[0] = dir1 ? strdup(dir1) : NULL; /* NULL on ENOMEM: fewer own frames */
    v->now_dirs[1] = dir2 ? strdup(dir2) : NULL;
    snprintf(v->now_label, sizeof v->now_label, "%s", label ? label : "");
    v->now_since_ns = since_ns;
    v->now_on = 1;
    lsp_pview_updated(s, LSP_PV_NOW);
}

void lsp_pview_set_now(struct lsp_facilities *s, const json_t *now)
{
    struct lsp_pview *v = pv(s);
    if (!v->now_on) return;
    json_decref(v->now);
    v->now = json_incref((json_t *)now);
    v->now_seq++;
}

void lsp_pview_now_end(struct lsp_facilities *s)
{
    struct lsp_pview *v = pv(s);
    if (!v->now_on) return;
    v->now_on = 0;
    now_clear(v);
    lsp_pview_updated(s, LSP_PV_NOW);
}

void lsp_pview_updated(struct lsp_facilities *s, int what)
{
    if (what & LSP_PV_DATA) {
        if (json_is_true(lsp_client_cap(s, "workspace.inlayHint.refreshSupport")))
            lsp_call(s, "workspace/inlayHint/refresh", NULL, NULL, NULL);
        if (json_is_true(lsp_client_cap(s, "workspace.codeLens.refreshSupport")))
            lsp_call(s, "workspace/codeLens/refresh", NULL, NULL, NULL);
    }
    FOR_PROVIDERS(s, i, p, self)
    if (p->profile_updated) p->profile_updated(s, self, what);
}

/* ---- document sync ---- */

void lsp_pview_doc_opened(struct lsp_facilities *s, struct doc *d)
{
    struct lsp_pview *v = pv(s);
    anchor_drop(&v->as, d->uri); /* reopened: start again from its text */
    char *path = lsp_uri_to_path(d->uri);
    const struct prof_file *pf = path ? lsp_pview_file(s, path) : NULL;
    if (pf) anchor_of(&v->as, d, pf->path);
    free(path);
}

void lsp_pview_doc_edited(struct lsp_facilities *s, struct doc *d, const struct doc_edit *e)
{
    if (!lsp_nb_cell_hash(s, d->uri, NULL))
        /* a cell is placed by its whole text's hash, not by following edits:
         * made anew when it matches a cell file again (undo included) */
        anchor_drop(&pv(s)->as, d->uri);
    else
        anchor_edited(&pv(s)->as, d, e);
}

void lsp_pview_doc_closed(struct lsp_facilities *s, const char *uri)
{
    anchor_drop(&pv(s)->as, uri);
}

void lsp_pview_free(struct lsp_pview *v)
{
    drop_prev(v);
    profile_free(v->prof);
    v->prof = NULL;
    anchor_set_clear(&v->as);
    memprof_leak_set_free(v->leaks);
    json_decref(v->live);
    json_decref(v->cells);
    v->cells = NULL;
    now_clear(v);
    v->now_on = 0;
    v->leaks = NULL;
    v->live = NULL;
}
