/* diff_html: the `hotline diff --html` page (diff_html.h). Written here in
 * C rather than drawn by a script like report.html: the page holds a few
 * thousand boxes at most, works with scripts off, and what it shows can be
 * read back by a test without a browser. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/diff_html.h"
#include "store/export.h"
#include "store/html.h"

#define ROW_PX 18 /* height of a flame-graph row */

/* ---- the two profiles' stacks as one sorted list --------------------- */

/* One stack of either profile, outermost frame first. A profile's samples
 * that no stack carries are one stack of one pseudo-frame (pseudo). */
struct dseq {
    const struct prof_frame *fr; /* innermost first, as stored; NULL for pseudo */
    const long *ids;             /* the frames' files, as file ids (below) */
    size_t n;
    const char *pseudo;
    int side; /* 0 old, 1 new */
    double seconds;
};

/* A frame's file as an id shared by both profiles: a file of the new
 * profile's stacks is its index in their sorted list; an old one paired
 * with it has the same id; an unpaired old one, the new list's length plus
 * its index in the old list. Pseudo-frames have -1. */
static void seq_frame(const struct dseq *q, size_t d, long *id, const char **name,
                      const char **path)
{
    if (q->pseudo) {
        *id = -1;
        *name = q->pseudo;
        *path = NULL;
        return;
    }
    const struct prof_frame *f = &q->fr[q->n - 1 - d];
    *id = q->ids[q->n - 1 - d];
    *name = f->name ? f->name : "?";
    *path = f->file ? f->file : "?";
}

static int frame_cmp(const struct dseq *a, const struct dseq *b, size_t d)
{
    long ia, ib;
    const char *na, *nb, *pa, *pb;
    seq_frame(a, d, &ia, &na, &pa);
    seq_frame(b, d, &ib, &nb, &pb);
    if (ia != ib) return ia < ib ? -1 : 1;
    return strcmp(na, nb);
}

/* Lexicographic by frame: stacks that share a prefix sit together, so the
 * tree is built in one pass, each node's subtree right after it. */
static int seq_cmp(const void *pa, const void *pb)
{
    const struct dseq *a = pa, *b = pb;
    for (size_t d = 0; d < a->n && d < b->n; d++) {
        int c = frame_cmp(a, b, d);
        if (c) return c;
    }
    return (a->n > b->n) - (a->n < b->n);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *frame_file(const struct prof_frame *f)
{
    return f->file ? f->file : "?";
}

/* The distinct files p's stacks name, sorted: new array, *n of them. */
static const char **stack_files(const struct profile *p, size_t *n)
{
    size_t m = 0, k = 0;
    for (size_t i = 0; i < p->nstacks; i++)
        m += p->stacks[i]->nfr;
    const char **v = malloc((m ? m : 1) * sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; i < p->nstacks; i++)
        for (size_t j = 0; j < p->stacks[i]->nfr; j++)
            v[k++] = frame_file(&p->stacks[i]->fr[j]);
    if (m) qsort(v, m, sizeof *v, str_cmp);
    size_t w = 0;
    for (size_t i = 0; i < m; i++)
        if (!w || strcmp(v[w - 1], v[i])) v[w++] = v[i];
    *n = w;
    return v;
}

static long file_index(const char **v, size_t n, const char *path)
{
    const char **hit = n ? bsearch(&path, v, n, sizeof *v, str_cmp) : NULL;
    return hit ? (long)(hit - v) : -1;
}

/* Both profiles' stacks with their file ids (owned arrays). */
struct seqs {
    struct dseq *v;
    size_t n, maxlen;
    long *ids[2];
};

static void seqs_free(struct seqs *s)
{
    free(s->v);
    free(s->ids[0]);
    free(s->ids[1]);
}

/* Adds side's stacks (and its unstacked rest) to s; id_of maps an index in
 * files to the shared id. */
static int seqs_add(struct seqs *s, const struct profile *p, int side, const char **files,
                    size_t nfiles, const long *id_of)
{
    size_t m = 0;
    for (size_t i = 0; i < p->nstacks; i++)
        m += p->stacks[i]->nfr;
    long *ids = s->ids[side] = malloc((m ? m : 1) * sizeof *ids);
    if (!ids) return -ENOMEM;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct prof_stack *st = p->stacks[i];
        struct dseq *q = &s->v[s->n++];
        *q = (struct dseq){
            .fr = st->fr, .ids = ids, .n = st->nfr, .side = side, .seconds = st->seconds};
        if (!st->nfr) {
            q->pseudo = EXPORT_NO_FRAMES;
            q->n = 1;
        }
        for (size_t j = 0; j < st->nfr; j++) {
            long k = file_index(files, nfiles, frame_file(&st->fr[j])); /* always there */
            *ids++ = k >= 0 ? id_of[k] : -1;
        }
        if (q->n > s->maxlen) s->maxlen = q->n;
    }
    long long rest;
    double rest_s;
    export_unstacked(p, &rest, &rest_s);
    if (rest_s > 0) {
        s->v[s->n++] =
            (struct dseq){.pseudo = EXPORT_OTHER_STACKS, .n = 1, .side = side, .seconds = rest_s};
        if (!s->maxlen) s->maxlen = 1;
    }
    return 0;
}

/* Both profiles' stacks, sorted, their files paired (cmp_pair_paths). */
static int seqs_build(struct seqs *s, const struct profile *old, const struct profile *cur)
{
    memset(s, 0, sizeof *s);
    size_t no = 0, nn = 0, amb;
    const char **of = stack_files(old, &no), **nf = stack_files(cur, &nn);
    long *pair = malloc((nn ? nn : 1) * sizeof *pair),
         *old_id = malloc((no ? no : 1) * sizeof *old_id),
         *new_id = malloc((nn ? nn : 1) * sizeof *new_id);
    s->v = malloc((old->nstacks + cur->nstacks + 2) * sizeof *s->v);
    int rc = -ENOMEM;
    if (!of || !nf || !pair || !old_id || !new_id || !s->v ||
        cmp_pair_paths(of, no, nf, nn, pair, &amb))
        goto done;
    for (size_t j = 0; j < no; j++)
        old_id[j] = (long)(nn + j);
    for (size_t i = 0; i < nn; i++) {
        new_id[i] = (long)i;
        if (pair[i] >= 0) old_id[pair[i]] = (long)i;
    }
    if (seqs_add(s, old, 0, of, no, old_id) || seqs_add(s, cur, 1, nf, nn, new_id)) goto done;
    if (s->n) qsort(s->v, s->n, sizeof *s->v, seq_cmp);
    rc = 0;
done:
    free(of);
    free(nf);
    free(pair);
    free(old_id);
    free(new_id);
    return rc;
}

/* ---- the tree --------------------------------------------------------- */

struct dnode {
    const char *name, *path; /* borrowed; path NULL for the root and pseudo-frames */
    size_t parent;           /* index; the root (0) is nobody's child */
    int depth;
    double s[2];     /* old and new seconds */
    double x, next;  /* left edge and where the next child goes, as shares of the whole */
    double other[2]; /* children too narrow to draw, summed */
    int shown;
};

struct tree {
    struct dnode *v;
    size_t n, cap;
};

static long node_add(struct tree *t, size_t parent, const char *name, const char *path)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        struct dnode *v = realloc(t->v, cap * sizeof *v);
        if (!v) return -1;
        t->v = v;
        t->cap = cap;
    }
    struct dnode *d = &t->v[t->n];
    memset(d, 0, sizeof *d);
    d->name = name;
    d->path = path;
    d->parent = parent;
    d->depth = t->n ? t->v[parent].depth + 1 : 0;
    return (long)t->n++;
}

/* The merged tree of both profiles, in preorder: a node's children follow
 * it, each subtree whole, ordered by frame. */
static int tree_build(struct tree *t, const struct seqs *s)
{
    memset(t, 0, sizeof *t);
    size_t *at = malloc((s->maxlen ? s->maxlen : 1) * sizeof *at);
    if (!at || node_add(t, 0, "all", NULL) < 0) {
        free(at);
        return -ENOMEM;
    }
    const struct dseq *prev = NULL;
    for (size_t i = 0; i < s->n; i++) {
        const struct dseq *q = &s->v[i];
        size_t common = 0;
        while (prev && common < prev->n && common < q->n && !frame_cmp(prev, q, common))
            common++;
        t->v[0].s[q->side] += q->seconds;
        for (size_t d = 0; d < q->n; d++) {
            long id;
            const char *name, *path;
            seq_frame(q, d, &id, &name, &path);
            if (d >= common) {
                long k = node_add(t, d ? at[d - 1] : 0, name, path);
                if (k < 0) {
                    free(at);
                    return -ENOMEM;
                }
                at[d] = (size_t)k;
            } else if (q->side == 1) {
                t->v[at[d]].path = path; /* a paired file is named as the new profile has it */
            }
            t->v[at[d]].s[q->side] += q->seconds;
        }
        prev = q;
    }
    free(at);
    return 0;
}

/* Places the boxes: each drawn child right of its drawn siblings, those
 * under DIFF_HTML_MIN_SHARE summed into their parent's `other`; a node only
 * the old profile has takes no width. Returns the nodes left out by the
 * box cap. */
static size_t tree_layout(struct tree *t, int *maxdepth)
{
    double total = t->v[0].s[1];
    size_t boxes = 1, left_out = 0;
    t->v[0].shown = total > 0;
    t->v[0].next = 0;
    *maxdepth = 0;
    for (size_t i = 1; i < t->n; i++) {
        struct dnode *d = &t->v[i], *p = &t->v[d->parent];
        if (!p->shown || d->s[1] <= 0) continue;
        if (d->s[1] < DIFF_HTML_MIN_SHARE * total) {
            p->other[0] += d->s[0];
            p->other[1] += d->s[1];
            continue;
        }
        if (boxes >= DIFF_HTML_MAX_BOXES) {
            left_out++;
            continue;
        }
        boxes++;
        d->shown = 1;
        d->x = d->next = p->next;
        p->next += d->s[1] / total;
        if (d->depth > *maxdepth) *maxdepth = d->depth;
    }
    return left_out;
}

/* ---- writing ---------------------------------------------------------- */

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
    "style-src 'unsafe-inline'\">\n"
    "<title>Hotline diff</title>\n<style>\n"
    "body { margin:0; padding:16px 24px; background:#fff; color:#1d1d1f; font:13px/1.4 "
    "system-ui, sans-serif; }\n"
    "h1 { font-size:18px; margin:0 0 4px; } h2 { font-size:15px; margin:22px 0 8px; }\n"
    ".mut { color:#6e6e73; }\n"
    ".flame { position:relative; overflow:hidden; border:1px solid #d9d9de; border-radius:4px; }\n"
    ".fr { position:absolute; height:17px; box-sizing:border-box; border-right:1px solid #fff; "
    "font:11px/17px ui-monospace, monospace; white-space:nowrap; overflow:hidden; "
    "text-overflow:ellipsis; padding:0 3px; color:#111; }\n"
    ".key span { display:inline-block; width:10px; height:10px; margin:0 4px 0 12px; "
    "border-radius:2px; vertical-align:-1px; }\n"
    "table { border-collapse:collapse; } td, th { padding:2px 10px 2px 0; text-align:left; }\n"
    "th { color:#6e6e73; font-weight:500; } td.n { text-align:right; "
    "font-variant-numeric:tabular-nums; }\n"
    "td.slower { color:#c62828; } td.faster { color:#1565c0; }\n"
    "code { font:12px ui-monospace, monospace; }\n"
    "</style>\n</head>\n<body>\n";

/* The change of old -> cur as a data-change word and a background colour:
 * red slower, blue faster, fully coloured at twice or half the time (the
 * same ratio either way); grey within DIFF_HTML_SAME; full red when the
 * old profile has none. */
static const char *change_of(double old, double cur, char *bg, size_t n)
{
    if (old <= 0) {
        snprintf(bg, n, "hsl(0,85%%,55%%)");
        return "new";
    }
    double rel = (cur - old) / old;
    if (rel > -DIFF_HTML_SAME && rel < DIFF_HTML_SAME) {
        snprintf(bg, n, "#e4e4e7");
        return "same";
    }
    double lo = cur < old ? cur : old, hi = cur < old ? old : cur;
    double k = lo > 0 ? hi / lo - 1 : 1;
    if (k > 1) k = 1;
    snprintf(bg, n, "hsl(%d,85%%,%.0f%%)", rel > 0 ? 0 : 215, 90 - 35 * k);
    return rel > 0 ? "slower" : "faster";
}

/* "old 1.000 s -> new 0.500 s, -0.500 s (-50%)" */
static void put_change(FILE *f, double old, double cur)
{
    fprintf(f, "old %.3f s &#8594; new %.3f s, %+.3f s", old, cur, cur - old);
    if (old > 0) fprintf(f, " (%+.0f%%)", 100.0 * (cur - old) / old);
}

static void box(FILE *f, const char *name, const char *path, double old, double cur, int depth,
                double x, double w)
{
    char bg[48];
    const char *ch = change_of(old, cur, bg, sizeof bg);
    fprintf(f,
            "<div class=\"fr\" data-change=\"%s\" data-old=\"%.6f\" data-new=\"%.6f\" "
            "data-depth=\"%d\" style=\"left:%.5f%%;width:%.5f%%;top:%dpx;background:%s\" "
            "data-name=\"",
            ch, old, cur, depth, 100 * x, 100 * w, depth * ROW_PX, bg);
    html_put_text(f, name);
    fputs("\" data-file=\"", f);
    html_put_text(f, path ? path : "");
    fputs("\" title=\"", f);
    html_put_text(f, name);
    if (path) {
        fputs("&#10;", f);
        html_put_text(f, path);
    }
    fputs("&#10;", f);
    put_change(f, old, cur);
    fputs("\">", f);
    html_put_text(f, name);
    fputs("</div>\n", f);
}

static void write_flame(FILE *f, struct tree *t)
{
    double total = t->v[0].s[1];
    int maxdepth;
    size_t left_out = tree_layout(t, &maxdepth);
    fputs("<h2>Differential flame graph</h2>\n<div class=\"mut\">The new profile's stacks, root "
          "on top, each frame as wide as its new seconds, coloured by its change against the "
          "same frame (file paired, function by name) in the old profile:"
          "<span class=\"key\"><span style=\"background:hsl(0,85%,55%)\"></span>slower or new"
          "<span style=\"background:hsl(215,85%,55%)\"></span>faster"
          "<span style=\"background:#e4e4e7\"></span>within 5%</span>. Hover for seconds.</div>\n",
          f);
    if (total <= 0) {
        fputs("<p class=\"mut\">The new profile has no time in its stacks.</p>\n", f);
        return;
    }
    fprintf(f, "<div class=\"flame\" id=\"flame\" style=\"height:%dpx\">\n",
            (maxdepth + 1) * ROW_PX);
    for (size_t i = 0; i < t->n; i++) {
        const struct dnode *d = &t->v[i];
        if (d->shown) box(f, d->name, d->path, d->s[0], d->s[1], d->depth, d->x, d->s[1] / total);
    }
    /* the narrow children of each node, one box after its drawn ones */
    for (size_t i = 0; i < t->n; i++) {
        const struct dnode *d = &t->v[i];
        if (d->shown && d->other[1] >= DIFF_HTML_MIN_SHARE * total)
            box(f, "[other]", NULL, d->other[0], d->other[1], d->depth + 1, d->next,
                d->other[1] / total);
    }
    fputs("</div>\n", f);
    if (left_out)
        fprintf(f, "<p class=\"mut\">%zu frames not drawn (at most %d boxes).</p>\n", left_out,
                DIFF_HTML_MAX_BOXES);
}

struct gone {
    double old;
    size_t i;
};

static int by_old_desc(const void *a, const void *b)
{
    double x = ((const struct gone *)a)->old, y = ((const struct gone *)b)->old;
    return (x < y) - (x > y);
}

/* Frames only the old profile has: the top of each such subtree (its
 * parent still ran), most old seconds first, with the frames above it. */
static int write_gone(FILE *f, const struct tree *t)
{
    struct gone *v = malloc((t->n ? t->n : 1) * sizeof *v);
    size_t n = 0;
    if (!v) return -ENOMEM;
    for (size_t i = 1; i < t->n; i++)
        if (t->v[i].s[1] <= 0 && t->v[i].s[0] > 0 && t->v[t->v[i].parent].s[1] > 0)
            v[n++] = (struct gone){t->v[i].s[0], i};
    if (n) qsort(v, n, sizeof *v, by_old_desc);
    fputs("<h2>Gone: frames only the old profile has</h2>\n", f);
    if (!n) fputs("<p class=\"mut\">None.</p>\n", f);
    if (n)
        fputs("<table id=\"gone\"><tr><th>old s</th><th>frame</th><th>called from</th></tr>\n", f);
    for (size_t k = 0; k < n && k < DIFF_HTML_GONE_ROWS; k++) {
        const struct dnode *d = &t->v[v[k].i];
        fprintf(f, "<tr data-change=\"gone\"><td class=\"n\">%.3f</td><td><code>", d->s[0]);
        html_put_text(f, d->name);
        fputs("</code> <span class=\"mut\">", f);
        html_put_text(f, d->path ? d->path : "");
        fputs("</span></td><td><code>", f);
        /* the nearest callers, innermost last, up to 4 */
        size_t up[4], nu = 0;
        for (size_t p = d->parent; p && nu < 4; p = t->v[p].parent)
            up[nu++] = p;
        if (nu == 4 && t->v[up[3]].parent) fputs("&#8230; &#8250; ", f);
        while (nu--) {
            html_put_text(f, t->v[up[nu]].name);
            if (nu) fputs(" &#8250; ", f);
        }
        fputs("</code></td></tr>\n", f);
    }
    if (n) fputs("</table>\n", f);
    if (n > DIFF_HTML_GONE_ROWS)
        fprintf(f, "<p class=\"mut\">%zu more not shown.</p>\n", n - DIFF_HTML_GONE_ROWS);
    free(v);
    return 0;
}

/* A table row's numbers, as the text diff prints them. */
static void row_cells(FILE *f, const struct cmp_row *r, int mem)
{
    double o = cmp_time(&r->old), c = cmp_time(&r->cur);
    char w[16];
    cmp_change_word(r, w, sizeof w);
    const char *dir = c > o ? "slower" : c < o ? "faster" : "";
    fprintf(f,
            "<td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td class=\"n %s\">%+.3f</td>"
            "<td class=\"%s\">%s</td><td class=\"n\">%+.3f</td><td class=\"n\">%+.3f</td>"
            "<td class=\"n\">%+.3f</td>",
            o, c, dir, c - o, dir, w, r->cur.v[AGENT_STAT_PY] - r->old.v[AGENT_STAT_PY],
            r->cur.v[AGENT_STAT_NAT] - r->old.v[AGENT_STAT_NAT],
            r->cur.v[AGENT_STAT_SYS] - r->old.v[AGENT_STAT_SYS]);
    if (mem)
        fprintf(f, "<td class=\"n\">%.1f</td><td class=\"n\">%.1f</td>", r->old.v[AGENT_STAT_ALLOC],
                r->cur.v[AGENT_STAT_ALLOC]);
}

/* "path: name (line 11, was 10)" for a function, "path:13 (was 12) in name"
 * for a line. */
static void row_where(FILE *f, const struct cmp_row *r, int is_func)
{
    const char *path = r->has_new ? r->file_new : r->file_old;
    int ln = r->has_new ? r->line_new : r->line_old,
        moved = r->has_new && r->has_old && r->line_new != r->line_old;
    fputs("<td><code>", f);
    html_put_text(f, path);
    if (is_func) {
        fputs(": ", f);
        html_put_text(f, r->name ? r->name : "?");
        fprintf(f, " (line %d", ln);
        if (moved) fprintf(f, ", was %d", r->line_old);
        fputc(')', f);
    } else {
        fprintf(f, ":%d", ln);
        if (moved) fprintf(f, " (was %d)", r->line_old);
        if (r->name) {
            fputs(" in ", f);
            html_put_text(f, r->name);
        }
    }
    fputs("</code></td>", f);
}

static void write_table(FILE *f, const char *title, const char *id, const struct cmp_row *v,
                        size_t n, int rows, int mem, int is_func)
{
    fprintf(f, "<h2>%s <span class=\"mut\">(largest change in time first)</span></h2>\n", title);
    fprintf(f,
            "<table id=\"%s\"><tr><th>old s</th><th>new s</th><th>change</th><th></th>"
            "<th>python</th><th>native</th><th>system</th>%s<th>where</th></tr>\n",
            id, mem ? "<th>old MB</th><th>new MB</th>" : "");
    int shown = 0;
    for (size_t i = 0; i < n && shown < rows; i++) {
        if (!cmp_row_changed(&v[i])) continue;
        shown++;
        fputs("<tr>", f);
        row_cells(f, &v[i], mem);
        row_where(f, &v[i], is_func);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    if (!shown) fputs("<p class=\"mut\">(no change)</p>\n", f);
}

static void write_summary(FILE *f, const struct diff_html *d)
{
    const struct agent_stats *o = &d->old->total, *c = &d->cur->total;
    double to = cmp_time(o), tc = cmp_time(c);
    fputs("<h1>Hotline diff: ", f);
    html_put_text(f, d->old_name);
    fputs(" &#8594; ", f);
    html_put_text(f, d->new_name);
    fputs("</h1>\n<div class=\"mut\" id=\"summary\">total: ", f);
    put_change(f, to, tc);
    fprintf(f, "; python %+.3f, native %+.3f, system %+.3f s",
            c->v[AGENT_STAT_PY] - o->v[AGENT_STAT_PY], c->v[AGENT_STAT_NAT] - o->v[AGENT_STAT_NAT],
            c->v[AGENT_STAT_SYS] - o->v[AGENT_STAT_SYS]);
    if (d->old->meta.elapsed_s > 0 || d->cur->meta.elapsed_s > 0)
        fprintf(f, "; wall %.2f s &#8594; %.2f s", d->old->meta.elapsed_s, d->cur->meta.elapsed_s);
    fprintf(f, "<br>files: %zu paired of %zu new, %zu old", d->r->files_paired, d->cur->nfiles,
            d->old->nfiles);
    if (d->r->files_ambiguous)
        fprintf(f, "; %zu not paired: their name fits several old files equally",
                d->r->files_ambiguous);
    fputs("</div>\n", f);
}

int diff_html_write(FILE *f, const struct diff_html *d)
{
    struct seqs s;
    struct tree t = {0};
    int rc = seqs_build(&s, d->old, d->cur);
    if (!rc) rc = tree_build(&t, &s);
    if (!rc) {
        fputs(page_head, f);
        write_summary(f, d);
        write_flame(f, &t);
        rc = write_gone(f, &t);
    }
    if (!rc) {
        int mem = cmp_has_memory(d->r);
        write_table(f, "Functions", "functions", d->r->funcs, d->r->nfuncs, d->rows, mem, 1);
        write_table(f, "Lines", "lines", d->r->lines, d->r->nlines, d->rows, mem, 0);
        fputs("</body>\n</html>\n", f);
        rc = ferror(f) ? -EIO : 0;
    }
    free(t.v);
    seqs_free(&s);
    return rc;
}

static int fill(FILE *f, void *ud)
{
    return diff_html_write(f, ud);
}

int diff_html_save(const struct diff_html *d, const char *path)
{
    return profile_save_with(path, fill, (void *)d);
}
