/* memprof.c: footprint timeline, per-line kept timelines and leak analysis
 * (see memprof.h and docs/memory.md for why a line is called a leak). */
#include "store/memprof.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct tl {
    int n;
    double t[MEMPROF_POINTS], v[MEMPROF_POINTS];
};

struct tl_line {
    const char *path; /* interned by the store */
    int line;
    struct tl tl;
};

struct memprof {
    struct tl foot;
    double peak_mb;
    char *peak_path; /* owned */
    int peak_line;
    double t_end;
    int used;               /* a memory datum arrived or was loaded */
    struct tl_line **lines; /* open addressing, NULL = empty */
    size_t nlines, cap;
    size_t examined; /* timelines looked at by memprof_line_leak (tests: it stays linear) */
};

struct memprof *memprof_new(void)
{
    return calloc(1, sizeof(struct memprof));
}

void memprof_free(struct memprof *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->cap; i++)
        free(m->lines[i]);
    free(m->lines);
    free(m->peak_path);
    free(m);
}

int memprof_has_data(const struct memprof *m)
{
    return m && m->used;
}

/* Append keeping at most MEMPROF_POINTS: when full, the point whose
 * neighbours are closest in time goes (never the first), so the timeline
 * spans the whole run with points about evenly spread in time, which is
 * how the leak rule reads it. Why not drop every other point: a line
 * sampled by volume (the agent's kept_pts) fills 64 points in a fraction
 * of a second, and halving by index left the start of a fast leak with a
 * few points far apart (the step function lagged, the slope read high).
 * A point at the same time replaces the last one. */
static void tl_add(struct tl *tl, double t, double v)
{
    if (tl->n && t <= tl->t[tl->n - 1]) {
        tl->v[tl->n - 1] = v;
        return;
    }
    if (tl->n == MEMPROF_POINTS) {
        int drop = 1;
        double best = INFINITY;
        for (int i = 1; i < tl->n; i++) {
            double span = (i + 1 < tl->n ? tl->t[i + 1] : t) - tl->t[i - 1];
            if (span < best) best = span, drop = i;
        }
        memmove(tl->t + drop, tl->t + drop + 1, (size_t)(tl->n - drop - 1) * sizeof *tl->t);
        memmove(tl->v + drop, tl->v + drop + 1, (size_t)(tl->n - drop - 1) * sizeof *tl->v);
        tl->n--;
    }
    tl->t[tl->n] = t;
    tl->v[tl->n] = v;
    tl->n++;
}

static size_t line_hash(const char *path, int line, size_t cap)
{
    uint64_t h =
        (uint64_t)(uintptr_t)path * 0x9E3779B97F4A7C15ull ^ (uint64_t)line * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
    return (size_t)h & (cap - 1);
}

static struct tl_line *line_find(const struct memprof *m, const char *path, int line)
{
    if (!m->cap) return NULL;
    for (size_t i = line_hash(path, line, m->cap);; i = (i + 1) & (m->cap - 1)) {
        struct tl_line *e = m->lines[i];
        if (!e || (e->path == path && e->line == line)) return e;
    }
}

/* The line's record, made when new (NULL past MEMPROF_MAX_LINES or ENOMEM). */
static struct tl_line *line_get(struct memprof *m, const char *path, int line)
{
    struct tl_line *found = line_find(m, path, line);
    if (found) return found;
    if (m->nlines >= MEMPROF_MAX_LINES) return NULL;
    if ((m->nlines + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        struct tl_line **n = calloc(cap, sizeof *n);
        if (!n) return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->lines[i]) continue;
            size_t j = line_hash(m->lines[i]->path, m->lines[i]->line, cap);
            while (n[j])
                j = (j + 1) & (cap - 1);
            n[j] = m->lines[i];
        }
        free(m->lines);
        m->lines = n;
        m->cap = cap;
    }
    struct tl_line *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->path = path;
    e->line = line;
    size_t j = line_hash(path, line, m->cap);
    while (m->lines[j])
        j = (j + 1) & (m->cap - 1);
    m->lines[j] = e;
    m->nlines++;
    return e;
}

int memprof_line_point(struct memprof *m, const char *path, int line, double ts, double kept_mb)
{
    m->used = 1;
    struct tl_line *e = line_get(m, path, line);
    if (!e) return -ENOMEM;
    tl_add(&e->tl, ts, kept_mb);
    if (ts > m->t_end) m->t_end = ts;
    return 0;
}

void memprof_line_points(struct memprof *m, const char *path, int line,
                         const struct agent_kept_pt *pts, size_t n, double base, double ts_max)
{
    for (size_t i = 0; i < n; i++) {
        double t = pts[i].ts, v = base + pts[i].mb;
        if (!isfinite(t) || !isfinite(v) || t > ts_max) continue;
        if (memprof_line_point(m, path, line, t, v > 0 ? v : 0)) return;
    }
}

void memprof_touch(struct memprof *m, double ts)
{
    if (m->used && ts > m->t_end) m->t_end = ts;
}

int memprof_footprint(struct memprof *m, double ts, double live_mb, double peak_mb,
                      const char *peak_path, int peak_line)
{
    m->used = 1;
    tl_add(&m->foot, ts, live_mb);
    if (ts > m->t_end) m->t_end = ts;
    if (peak_mb > m->peak_mb) {
        m->peak_mb = peak_mb;
        m->peak_line = peak_line;
        if (!m->peak_path || !peak_path || strcmp(m->peak_path, peak_path)) {
            free(m->peak_path);
            m->peak_path = peak_path ? strdup(peak_path) : NULL;
        }
    }
    return 0;
}

/* Step function: value of the last point at or before t (0 before the first). */
static double step_at(const double *t, const double *v, int n, double x)
{
    double r = 0;
    for (int i = 0; i < n && t[i] <= x; i++)
        r = v[i];
    return r;
}

/* Least squares over ys sampled at xs[0..n): slope, r^2. */
static void fit(const double *xs, const double *ys, int n, double *slope, double *r2)
{
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        mx += xs[i];
        my += ys[i];
    }
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0, syy = 0;
    for (int i = 0; i < n; i++) {
        sxx += (xs[i] - mx) * (xs[i] - mx);
        sxy += (xs[i] - mx) * (ys[i] - my);
        syy += (ys[i] - my) * (ys[i] - my);
    }
    *slope = sxx > 0 ? sxy / sxx : 0;
    *r2 = sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : 0;
}

#define FIT_N 48

int memprof_analyse(const double *t, const double *v, int n, double t_end, struct memprof_leak *out)
{
    if (n < 3) return 0;
    double t0 = t[0], d = t_end - t0;
    if (d < 0.2) return 0;
    double kept = step_at(t, v, n, t_end), vmax = 0;
    for (int i = 0; i < n; i++)
        if (v[i] > vmax) vmax = v[i];
    /* freed at the end, or too small to tell from sampling noise */
    if (kept < MEMPROF_MIN_LEAK_MB || kept < 0.8 * vmax) return 0;
    double xs[FIT_N], ys[FIT_N];
    for (int k = 0; k < FIT_N; k++) {
        xs[k] = t0 + d * (k + 0.5) / FIT_N;
        ys[k] = step_at(t, v, n, xs[k]);
    }
    double slope, r2, late, late_r2;
    fit(xs, ys, FIT_N, &slope, &r2);
    fit(xs + FIT_N * 2 / 3, ys + FIT_N * 2 / 3, FIT_N - FIT_N * 2 / 3, &late, &late_r2);
    if (slope <= 0 || slope * d < MEMPROF_MIN_LEAK_MB) return 0;
    /* growing through the run (linear), still growing in its last third
     * (a cache that filled up and stays flat is not a leak) */
    double growth = late / slope;
    if (growth > 1) growth = 1;
    if (growth < 0) growth = 0;
    double lik = r2 * growth * (vmax > 0 ? kept / vmax : 0);
    if (r2 < 0.7 || growth < 0.4 || lik < 0.5) return 0;
    out->likelihood = lik > 1 ? 1 : lik;
    out->rate_mb_s = slope;
    out->kept_mb = kept;
    return 1;
}

static int cmp_leak(const void *a, const void *b)
{
    const struct memprof_leak *x = a, *y = b;
    return x->likelihood < y->likelihood   ? 1
           : x->likelihood > y->likelihood ? -1
                                           : x->line - y->line;
}

void memprof_leaks_sort(struct memprof_leak *l, size_t n)
{
    qsort(l, n, sizeof *l, cmp_leak);
}

int memprof_line_leak(struct memprof *m, const char *path, int line, struct memprof_leak *out)
{
    if (!m || !m->used) return 0;
    const struct tl_line *e = line_find(m, path, line);
    m->examined++;
    if (!e || !memprof_analyse(e->tl.t, e->tl.v, e->tl.n, m->t_end, out)) return 0;
    out->line = line;
    return 1;
}

static json_t *tl_json(const struct tl *tl)
{
    json_t *a = json_array();
    for (int i = 0; i < tl->n; i++)
        json_array_append_new(
            a, json_pack("[f,f]", round(tl->t[i] * 1e3) / 1e3, round(tl->v[i] * 1e3) / 1e3));
    return a;
}

static void tl_load(struct tl *tl, const json_t *a)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *pt = json_array_get(a, i);
        if (json_array_size(pt) != 2 || !json_is_number(json_array_get(pt, 0)) ||
            !json_is_number(json_array_get(pt, 1)))
            continue;
        double t = json_number_value(json_array_get(pt, 0)),
               v = json_number_value(json_array_get(pt, 1));
        if (isfinite(t) && isfinite(v)) tl_add(tl, t, v);
    }
}

void memprof_json_top(const struct memprof *m, json_t *root)
{
    if (!memprof_has_data(m)) return;
    json_object_set_new(root, "peak_mb", json_real(m->peak_mb));
    if (m->peak_path)
        json_object_set_new(root, "peak_at",
                            json_pack("{s:s,s:i}", "file", m->peak_path, "line", m->peak_line));
    json_object_set_new(root, "memory_timeline", tl_json(&m->foot));
    json_object_set_new(root, "memory_end_s", json_real(m->t_end));
}

void memprof_json_line(const struct memprof *m, const char *path, int line, json_t *lineobj)
{
    const struct tl_line *e = m ? line_find(m, path, line) : NULL;
    if (e && e->tl.n) json_object_set_new(lineobj, "memory_timeline", tl_json(&e->tl));
}

int memprof_line_timeline(const struct memprof *m, const char *path, int line, const double **t,
                          const double **v)
{
    const struct tl_line *e = m ? line_find(m, path, line) : NULL;
    if (!e) return 0;
    *t = e->tl.t;
    *v = e->tl.v;
    return e->tl.n;
}

void memprof_leak_set_free(struct memprof_leak_set *ls)
{
    if (!ls) return;
    free(ls->files);
    free(ls);
}

void memprof_load_top(struct memprof *m, const json_t *root)
{
    const json_t *tl = json_object_get(root, "memory_timeline");
    const json_t *pk = json_object_get(root, "peak_mb");
    const json_t *at = json_object_get(root, "peak_at");
    const json_t *end = json_object_get(root, "memory_end_s");
    if (!tl && !pk) return;
    m->used = 1;
    tl_load(&m->foot, tl);
    if (json_is_number(pk)) m->peak_mb = json_number_value(pk);
    const json_t *f = json_object_get(at, "file"), *l = json_object_get(at, "line");
    if (json_is_string(f) && json_is_integer(l)) {
        free(m->peak_path);
        m->peak_path = strdup(json_string_value(f));
        m->peak_line = (int)json_integer_value(l);
    }
    if (json_is_number(end) && json_number_value(end) > m->t_end) m->t_end = json_number_value(end);
}

void memprof_load_line(struct memprof *m, const char *path, int line, const json_t *lineobj)
{
    const json_t *a = json_object_get(lineobj, "memory_timeline");
    if (!json_is_array(a)) return;
    m->used = 1;
    struct tl_line *e = line_get(m, path, line);
    if (!e) return;
    tl_load(&e->tl, a);
    if (e->tl.n && e->tl.t[e->tl.n - 1] > m->t_end) m->t_end = e->tl.t[e->tl.n - 1];
}

size_t memprof_examined(const struct memprof *m)
{
    return m ? m->examined : 0;
}

double memprof_live_mb(const struct memprof *m)
{
    return m && m->foot.n ? m->foot.v[m->foot.n - 1] : 0;
}

double memprof_peak_mb(const struct memprof *m, const char **path, int *line)
{
    if (path) *path = m ? m->peak_path : NULL;
    if (line) *line = m ? m->peak_line : 0;
    return m ? m->peak_mb : 0;
}
