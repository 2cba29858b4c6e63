/* gecko: the Firefox Profiler's import format (gecko.h). */
#include "store/gecko.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/export.h"
#include "store/timeline.h"

#define CAT_PYTHON 0 /* meta.categories */
#define CAT_OTHER 1
#define PHASE_INSTANT 0
#define PHASE_INTERVAL 1
#define MARKER_TYPE "HotlinePhase"

struct g_sample {
    double ms;
    json_int_t stack;
};

/* One thread track being built: its own string, frame and stack tables. */
struct g_thread {
    long long pid, tid;
    json_t *strings, *str_ix;  /* stringTable; string -> index */
    json_t *frames, *frame_ix; /* frameTable.data; location -> index */
    json_t *stacks, *stack_ix; /* stackTable.data; "prefix:frame" -> index */
    json_t *stack_of;          /* "%p" of a store stack -> its stack index (a cache) */
    json_t *markers;           /* markers.data */
    struct g_sample *v;
    size_t n, cap;
    double first, last; /* ms of its first and last sample */
};

struct g_build {
    const struct profile *p;
    struct g_thread *t;
    size_t nt;
    char *name; /* frame name scratch */
};

static json_int_t str_index(struct g_thread *t, const char *s)
{
    json_t *have = json_object_get(t->str_ix, s);
    if (have) return json_integer_value(have);
    json_int_t k = (json_int_t)json_array_size(t->strings);
    if (json_array_append_new(t->strings, json_string(s)) ||
        json_object_set_new(t->str_ix, s, json_integer(k)))
        return -1;
    return k;
}

static json_int_t frame_index(struct g_thread *t, const char *loc, int line)
{
    json_t *have = json_object_get(t->frame_ix, loc);
    if (have) return json_integer_value(have);
    json_int_t s = str_index(t, loc), k = (json_int_t)json_array_size(t->frames);
    /* [location, relevantForJS, innerWindowID, implementation, line,
     *  column, category, subcategory] */
    json_t *row = s < 0 ? NULL
                        : json_pack("[I,b,n,n,o,n,i,i]", s, 0,
                                    line > 0 ? json_integer(line) : json_null(), CAT_PYTHON, 0);
    if (!row || json_array_append_new(t->frames, row) ||
        json_object_set_new(t->frame_ix, loc, json_integer(k)))
        return -1;
    return k;
}

/* Index of the stack node (prefix, frame), made when new. */
static json_int_t stack_node(struct g_thread *t, json_int_t prefix, json_int_t frame)
{
    char key[48];
    snprintf(key, sizeof key, "%lld:%lld", (long long)prefix, (long long)frame);
    json_t *have = json_object_get(t->stack_ix, key);
    if (have) return json_integer_value(have);
    json_int_t k = (json_int_t)json_array_size(t->stacks);
    json_t *row = json_pack("[o,I]", prefix < 0 ? json_null() : json_integer(prefix), frame);
    if (!row || json_array_append_new(t->stacks, row) ||
        json_object_set_new(t->stack_ix, key, json_integer(k)))
        return -1;
    return k;
}

/* The stack index of store stack s (NULL: "[other stacks]") in t. */
static json_int_t stack_index(struct g_build *b, struct g_thread *t, const struct prof_stack *s)
{
    char key[32];
    snprintf(key, sizeof key, "%p", (const void *)s);
    json_t *have = json_object_get(t->stack_of, key);
    if (have) return json_integer_value(have);
    json_int_t at = -1;
    if (!s || !s->nfr) {
        json_int_t f = frame_index(t, s ? EXPORT_NO_FRAMES : EXPORT_OTHER_STACKS, 0);
        at = f < 0 ? -1 : stack_node(t, -1, f);
    }
    for (size_t j = s ? s->nfr : 0; j-- > 0;) { /* root first */
        export_frame_name(&s->fr[j], 0, b->name, 4096);
        json_int_t f = frame_index(t, b->name, s->fr[j].line);
        if (f < 0 || (at = stack_node(t, at, f)) < 0) return -1;
    }
    if (at >= 0 && json_object_set_new(t->stack_of, key, json_integer(at))) return -1;
    return at;
}

static struct g_thread *thread_of(struct g_build *b, long long pid, long long tid)
{
    for (size_t i = 0; i < b->nt; i++)
        if (b->t[i].pid == pid && b->t[i].tid == tid) return &b->t[i];
    struct g_thread *nv = realloc(b->t, (b->nt + 1) * sizeof *nv);
    if (!nv) return NULL;
    b->t = nv;
    struct g_thread *t = &b->t[b->nt];
    *t = (struct g_thread){pid,
                           tid,
                           json_array(),
                           json_object(),
                           json_array(),
                           json_object(),
                           json_array(),
                           json_object(),
                           json_object(),
                           json_array(),
                           NULL,
                           0,
                           0,
                           INFINITY,
                           -INFINITY};
    b->nt++;
    if (!t->strings || !t->str_ix || !t->frames || !t->frame_ix || !t->stacks || !t->stack_ix ||
        !t->stack_of || !t->markers)
        return NULL;
    return t;
}

static void thread_free(struct g_thread *t)
{
    json_decref(t->strings);
    json_decref(t->str_ix);
    json_decref(t->frames);
    json_decref(t->frame_ix);
    json_decref(t->stacks);
    json_decref(t->stack_ix);
    json_decref(t->stack_of);
    json_decref(t->markers);
    free(t->v);
}

/* k samples of stack s in (pid, tid), spread evenly over [t0, t1] s. */
static int add_samples(struct g_build *b, long long pid, long long tid, const struct prof_stack *s,
                       double t0, double t1, long long k)
{
    struct g_thread *t = thread_of(b, pid, tid);
    if (!t) return -ENOMEM;
    json_int_t st = stack_index(b, t, s);
    if (st < 0) return -ENOMEM;
    if (t->n + (size_t)k > t->cap) {
        size_t c = t->cap ? t->cap : 256;
        while (c < t->n + (size_t)k)
            c *= 2;
        struct g_sample *nv = realloc(t->v, c * sizeof *nv);
        if (!nv) return -ENOMEM;
        t->v = nv;
        t->cap = c;
    }
    for (long long i = 0; i < k; i++) {
        double ms = 1000.0 * (t0 + (t1 - t0) * ((double)i + 0.5) / (double)k);
        t->v[t->n++] = (struct g_sample){ms, st};
        t->first = fmin(t->first, ms);
        t->last = fmax(t->last, ms);
    }
    return 0;
}

/* How many samples a tick of n samples writes: scaled to GECKO_MAX_SAMPLES
 * in all, at least one for a tick with time. */
static long long scaled(long long n, double seconds, double scale)
{
    long long k = (long long)llround((double)n * scale);
    return k > 0 ? k : seconds > 0 || n > 0;
}

static int cmp_thread_period(const void *a, const void *b, void *ud)
{
    const struct prof_tick *v = ud;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const struct prof_tick *x = &v[i], *y = &v[j];
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->t1 != y->t1) return x->t1 < y->t1 ? -1 : 1;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* The ticks of one thread and one period share it one after the other,
 * each a part as long as its share of the samples (spread together, two
 * stacks of a period would alternate sample by sample, which never
 * happened; which of them came first the delta does not say). */
static int fill_ticks(struct g_build *b, const struct prof_tick *tk, size_t nt, double scale)
{
    size_t *ix = malloc((nt ? nt : 1) * sizeof *ix);
    if (!ix) return -ENOMEM;
    for (size_t i = 0; i < nt; i++)
        ix[i] = i;
    qsort_r(ix, nt, sizeof *ix, cmp_thread_period, (void *)tk);
    int rc = 0;
    for (size_t g = 0; !rc && g < nt;) {
        const struct prof_tick *h = &tk[ix[g]];
        size_t e = g;
        double sum = 0;
        for (; e < nt && tk[ix[e]].pid == h->pid && tk[ix[e]].tid == h->tid &&
               tk[ix[e]].t0 == h->t0 && tk[ix[e]].t1 == h->t1;
             e++)
            sum += tk[ix[e]].samples > 0 ? (double)tk[ix[e]].samples : tk[ix[e]].seconds;
        double at = h->t0;
        for (; !rc && g < e; g++) {
            const struct prof_tick *t = &tk[ix[g]];
            double w = t->samples > 0 ? (double)t->samples : t->seconds;
            double d = sum > 0 ? (h->t1 - h->t0) * w / sum : 0;
            rc = add_samples(b, t->pid, t->tid, t->stack, at, at + d,
                             scaled(t->samples, t->seconds, scale));
            at += d;
        }
    }
    free(ix);
    return rc;
}

static int fill_samples(struct g_build *b)
{
    const struct profile *p = b->p;
    int rc = 0;
    if (p->tl.n) {
        size_t nt;
        struct prof_tick *tk = timeline_sorted(&p->tl, &nt);
        if (!tk) return -ENOMEM;
        double total = 0;
        for (size_t i = 0; i < nt; i++)
            total += (double)tk[i].samples;
        double scale = total > GECKO_MAX_SAMPLES ? GECKO_MAX_SAMPLES / total : 1;
        rc = fill_ticks(b, tk, nt, scale);
        free(tk);
        return rc;
    }
    /* no timeline (a profile saved before it): the call tree stays right,
     * the order means nothing; spread over the run */
    double total = 0, span = p->meta.elapsed_s > 0 ? p->meta.elapsed_s : 1, at = 0;
    for (size_t i = 0; i < p->nstacks; i++)
        total += (double)p->stacks[i]->samples;
    double scale = total > GECKO_MAX_SAMPLES ? GECKO_MAX_SAMPLES / total : 1;
    for (size_t i = 0; !rc && i < p->nstacks; i++) {
        const struct prof_stack *s = p->stacks[i];
        long long left = s->samples;
        for (size_t j = 0; !rc && j <= s->nparts; j++) {
            long long n = j < s->nparts ? s->parts[j].samples : left;
            if (n <= 0) continue;
            double d = total > 0 ? span * (double)n / total : 0;
            rc = add_samples(b, j < s->nparts ? s->parts[j].pid : 0,
                             j < s->nparts ? s->parts[j].tid : 0, s, at, at + d,
                             scaled(n, 0, scale));
            at += d;
            left -= n;
        }
    }
    return rc;
}

static int cmp_sample(const void *a, const void *b)
{
    const struct g_sample *x = a, *y = b;
    return x->ms < y->ms ? -1 : x->ms > y->ms;
}

/* One phase marker [name, start, end, phase, category, {type, detail}]. */
static int add_marker(struct g_thread *t, const char *name, double start_ms, double end_ms,
                      int phase, const char *detail)
{
    json_int_t s = str_index(t, name);
    json_t *m = s < 0 ? NULL
                      : json_pack("[I,f,o,i,i,{s:s,s:s}]", s, start_ms,
                                  phase == PHASE_INSTANT ? json_null() : json_real(end_ms), phase,
                                  CAT_OTHER, "type", MARKER_TYPE, "detail", detail);
    return !m || json_array_append_new(t->markers, m) ? -ENOMEM : 0;
}

/* The process's thread that carries its markers: its main thread (tid =
 * pid), else its first. */
static struct g_thread *proc_track(struct g_build *b, long long pid)
{
    struct g_thread *first = NULL;
    for (size_t i = 0; i < b->nt; i++) {
        if (b->t[i].pid != pid) continue;
        if (b->t[i].tid == pid) return &b->t[i];
        if (!first) first = &b->t[i];
    }
    return first;
}

static int fill_markers(struct g_build *b)
{
    const struct profile *p = b->p;
    char detail[1024];
    for (size_t i = 0; i < p->nprocs; i++) {
        const struct prof_proc *pr = &p->procs[i];
        struct g_thread *t = proc_track(b, pr->pid);
        if (!t) continue;
        double start = INFINITY, end = -INFINITY;
        for (size_t j = 0; j < b->nt; j++)
            if (b->t[j].pid == pr->pid && b->t[j].n) {
                start = fmin(start, b->t[j].first);
                end = fmax(end, b->t[j].last);
            }
        if (!(start <= end)) continue;
        const char *a0 = json_string_value(json_array_get(pr->argv, 0));
        const char *end_reason = pr->end_reason ? pr->end_reason : "no end message";
        snprintf(detail, sizeof detail, "pid %lld%s%s (Python %s): ended: %s", pr->pid,
                 a0 ? " " : "", a0 ? a0 : "", pr->python ? pr->python : "?", end_reason);
        if (add_marker(t, "Process", start, end, PHASE_INTERVAL, detail) ||
            add_marker(t, "Exit", end, end, PHASE_INSTANT, end_reason))
            return -ENOMEM;
    }
    if (p->tl.bucket_s > 0 && b->nt) {
        snprintf(detail, sizeof detail,
                 "a long run: samples are placed within %.1f s buckets (the timeline's bound)",
                 p->tl.bucket_s);
        if (add_marker(&b->t[0], "Coarse timeline", b->t[0].first, b->t[0].first, PHASE_INSTANT,
                       detail))
            return -ENOMEM;
    }
    return 0;
}

static const char *thread_name(const struct profile *p, long long pid, long long tid)
{
    if (!tid) return "[threads not told apart]";
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].pid == pid && p->threads[i].tid == tid && p->threads[i].name[0])
            return p->threads[i].name;
    return "thread";
}

static json_t *thread_json(const struct g_build *b, struct g_thread *t, const char *process)
{
    qsort(t->v, t->n, sizeof *t->v, cmp_sample);
    json_t *data = json_array();
    for (size_t i = 0; data && i < t->n; i++)
        if (json_array_append_new(data, json_pack("[I,f,f]", t->v[i].stack, t->v[i].ms, 0.0))) {
            json_decref(data);
            return NULL;
        }
    return json_pack(
        "{s:s,s:f,s:f,s:s,s:s,s:I,s:I,"
        "s:{s:{s:i,s:i,s:i,s:i,s:i,s:i},s:O},"
        "s:{s:{s:i,s:i,s:i},s:o},"
        "s:{s:{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i},s:O},"
        "s:{s:{s:i,s:i},s:O},s:O}",
        "name", thread_name(b->p, t->pid, t->tid), "registerTime", t->n ? t->first : 0.0,
        "unregisterTime", t->n ? t->last : 0.0, "processType", "default", "processName", process,
        "pid", (json_int_t)t->pid, "tid", (json_int_t)t->tid, /* */
        "markers", "schema", "name", 0, "startTime", 1, "endTime", 2, "phase", 3, "category", 4,
        "data", 5, "data", t->markers,                                             /* */
        "samples", "schema", "stack", 0, "time", 1, "eventDelay", 2, "data", data, /* */
        "frameTable", "schema", "location", 0, "relevantForJS", 1, "innerWindowID", 2,
        "implementation", 3, "line", 4, "column", 5, "category", 6, "subcategory", 7, "data",
        t->frames,                                                          /* */
        "stackTable", "schema", "prefix", 0, "frame", 1, "data", t->stacks, /* */
        "stringTable", t->strings);
}

static json_t *meta_json(const struct g_build *b, const char *exporter, double end_ms)
{
    const struct profile *p = b->p;
    return json_pack("{s:i,s:f,s:n,s:f,s:i,s:i,s:i,s:i,s:i,s:s,s:s,s:b,s:f,s:f,"
                     "s:[{s:s,s:s,s:[s]},{s:s,s:s,s:[s]}],"
                     "s:[{s:s,s:s,s:s,s:s,s:[s,s,s],s:[{s:s,s:s,s:s,s:b}]}]}",
                     "version", GECKO_VERSION, "startTime",
                     p->tl.unix0 > 0 ? p->tl.unix0 * 1000.0 : 0.0, "shutdownTime", "interval",
                     p->meta.interval_ms > 0 ? p->meta.interval_ms : 10.0, "stackwalk", 0, "debug",
                     0, "gcpoison", 0, "asyncstack", 0, "processType", 0, "product",
                     exporter ? exporter : "hotline", "platform", "Linux", "presymbolicated", 1,
                     "profilingStartTime", 0.0, "profilingEndTime", end_ms, /* */
                     "categories", "name", "Python", "color", "blue", "subcategories", "Other",
                     "name", "Other", "color", "grey", "subcategories", "Other", /* */
                     "markerSchema", "name", MARKER_TYPE, "tooltipLabel", "{marker.name}",
                     "tableLabel", "{marker.data.detail}", "chartLabel", "{marker.data.detail}",
                     "display", "marker-chart", "marker-table", "timeline-overview", "data", "key",
                     "detail", "label", "Detail", "format", "string", "searchable", 1);
}

json_t *export_gecko(const struct profile *p, const char *exporter)
{
    struct g_build b = {p, NULL, 0, malloc(4096)};
    int rc = b.name ? fill_samples(&b) : -ENOMEM;
    if (!rc) rc = fill_markers(&b);
    const char *program = p->meta.program ? p->meta.program : "python";
    const char *base = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
    json_t *threads = json_array(), *root = NULL;
    double end_ms = 0;
    /* main threads first (the Firefox Profiler selects the first track) */
    for (int pass = 0; !rc && threads && pass < 2; pass++)
        for (size_t i = 0; !rc && i < b.nt; i++) {
            if ((b.t[i].tid == b.t[i].pid) == pass) continue;
            if (b.t[i].n) end_ms = fmax(end_ms, b.t[i].last);
            json_t *o = thread_json(&b, &b.t[i], base);
            if (!o || json_array_append_new(threads, o)) rc = -ENOMEM;
        }
    if (!rc && threads)
        root = json_pack("{s:o,s:[],s:O,s:[],s:[]}", "meta", meta_json(&b, exporter, end_ms),
                         "libs", "threads", threads, "pausedRanges", "processes");
    for (size_t i = 0; i < b.nt; i++)
        thread_free(&b.t[i]);
    free(b.t);
    free(b.name);
    json_decref(threads);
    return root;
}

int export_gecko_save(const struct profile *p, const char *exporter, const char *path)
{
    json_t *root = export_gecko(p, exporter);
    if (!root) return -ENOMEM;
    int rc = profile_save_json(root, path, JSON_COMPACT | JSON_REAL_PRECISION(10));
    json_decref(root);
    return rc;
}
