/* export: the profile's call stacks as folded stacks (flamegraph.pl,
 * inferno) and as a speedscope file. Both read the same list: the store's
 * stacks heaviest first, plus one "[other stacks]" entry for the samples no
 * stored stack carries (a profile read back from JSON keeps only the
 * heaviest PROFILE_JSON_STACKS), so a picture's total is the profile's.
 * The folded stacks merge every thread; the speedscope file has a profile
 * per thread where the stacks' per-thread parts say which ran them. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/export.h"

/* Appends s to buf[*k..n-1), escaping what would break a folded line. */
static void put_escaped(char *buf, size_t n, size_t *k, const char *s, int escape)
{
    for (; *s && *k + 1 < n; s++) {
        const char *rep = NULL;
        if (escape) {
            switch (*s) {
            case ';':
                rep = "%3B";
                break;
            case '%':
                rep = "%25";
                break;
            case '\n':
                rep = "%0A";
                break;
            case '\r':
                rep = "%0D";
                break;
            default:
                break;
            }
        }
        if (!rep) {
            buf[(*k)++] = *s;
        } else if (*k + 3 < n) {
            memcpy(buf + *k, rep, 3);
            *k += 3;
        } else {
            break; /* truncated: never half an escape */
        }
    }
    buf[*k] = 0;
}

void export_frame_name(const struct prof_frame *fr, int escape, char *buf, size_t n)
{
    char ln[32];
    size_t k = 0;
    if (!n) return;
    buf[0] = 0;
    /* a C callee's leaf (docs/agent-protocol.md, `stack`) has no line */
    if (fr->file && !strcmp(fr->file, "<native>") && fr->line <= 0)
        snprintf(ln, sizeof ln, ")");
    else
        snprintf(ln, sizeof ln, ":%d)", fr->line);
    put_escaped(buf, n, &k, fr->name ? fr->name : "?", escape);
    put_escaped(buf, n, &k, " (", 0);
    put_escaped(buf, n, &k, fr->file ? fr->file : "?", escape);
    put_escaped(buf, n, &k, ln, 0);
}

void export_unstacked(const struct profile *p, long long *samples, double *seconds)
{
    long long n = 0;
    double s = 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        n = prof_add_count(n, p->stacks[i]->samples);
        s += p->stacks[i]->seconds;
    }
    double total = agent_stats_time(&p->total);
    *samples = p->meta.samples > n ? p->meta.samples - n : 0;
    *seconds = *samples && total > s ? total - s : 0;
}

/* New array of every stack, heaviest first (NULL with *n 0 when empty or
 * on ENOMEM: the caller tells them apart by p->nstacks). */
static const struct prof_stack **all_stacks(const struct profile *p, size_t *n)
{
    *n = 0;
    if (!p->nstacks) return NULL;
    const struct prof_stack **v = malloc(p->nstacks * sizeof *v);
    if (v) *n = profile_top_stacks(p, NULL, 0, v, p->nstacks);
    return v;
}

#define EXPORT_FRAME_MAX 4096 /* bytes of one frame name; longer ones are cut */

const char *export_short_path(const char *path, const char *base)
{
    size_t bl = base ? strlen(base) : 0;
    while (bl > 1 && base[bl - 1] == '/')
        bl--;
    if (bl && !strncmp(path, base, bl) && path[bl] == '/' && path[bl + 1]) return path + bl + 1;
    const char *best = NULL;
    for (const char *k = path; (k = strstr(k, "-packages/")); k++) {
        if (k - path >= 5 && (!strncmp(k - 5, "/site", 5) || !strncmp(k - 5, "/dist", 5)) && k[10])
            best = k + 10;
    }
    if (best) return best;
    for (const char *k = path; (k = strstr(k, "/lib/python")); k++) {
        const char *v = k + 11;
        while ((*v >= '0' && *v <= '9') || *v == '.')
            v++;
        if (v > k + 11 && *v == '/' && v[1]) return v + 1;
    }
    return path;
}

/* One stack's folded text and count, for summing stacks that read the same. */
struct folded {
    char *text;
    long long n;
};

static int cmp_folded_text(const void *a, const void *b)
{
    return strcmp(((const struct folded *)a)->text, ((const struct folded *)b)->text);
}

static int cmp_folded_n(const void *a, const void *b)
{
    const struct folded *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? 1 : -1;
    return strcmp(x->text, y->text);
}

/* A frame's name under flags into buf (escaped). */
static void frame_name_opts(const struct prof_frame *fr, int flags, const char *base, char *buf,
                            size_t n)
{
    struct prof_frame f = *fr;
    if (flags & EXPORT_RELATIVE && f.file) f.file = export_short_path(f.file, base);
    if (!(flags & EXPORT_BY_FUNCTION)) {
        export_frame_name(&f, 1, buf, n);
        return;
    }
    size_t k = 0;
    buf[0] = 0;
    put_escaped(buf, n, &k, f.name ? f.name : "?", 1);
    put_escaped(buf, n, &k, " (", 0);
    put_escaped(buf, n, &k, f.file ? f.file : "?", 1);
    put_escaped(buf, n, &k, ")", 0);
}

int export_collapsed_opts(const struct profile *p, FILE *out, int flags, const char *base)
{
    if (!(flags & (EXPORT_BY_FUNCTION | EXPORT_RELATIVE))) return export_collapsed(p, out);
    size_t ns, nf = 0;
    const struct prof_stack **v = all_stacks(p, &ns);
    if (!v && p->nstacks) return -ENOMEM;
    char *name = malloc(EXPORT_FRAME_MAX);
    struct folded *fs = calloc(ns ? ns : 1, sizeof *fs);
    int rc = -ENOMEM;
    if (!name || !fs) goto done;
    for (size_t i = 0; i < ns; i++) {
        const struct prof_stack *s = v[i];
        if (s->samples <= 0) continue;
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        if (!m) goto done;
        if (!s->nfr) fputs(EXPORT_NO_FRAMES, m);
        for (size_t j = s->nfr; j-- > 0;) {
            frame_name_opts(&s->fr[j], flags, base, name, EXPORT_FRAME_MAX);
            fputs(name, m);
            if (j) fputc(';', m);
        }
        if (fclose(m) || !text) {
            free(text);
            goto done;
        }
        fs[nf].text = text;
        fs[nf++].n = s->samples;
    }
    /* sum what reads the same, then heaviest first */
    if (nf) qsort(fs, nf, sizeof *fs, cmp_folded_text);
    size_t w = 0;
    for (size_t i = 0; i < nf; i++) {
        if (w && !strcmp(fs[w - 1].text, fs[i].text)) {
            fs[w - 1].n = fs[w - 1].n > LLONG_MAX - fs[i].n ? LLONG_MAX : fs[w - 1].n + fs[i].n;
            free(fs[i].text);
        } else {
            fs[w++] = fs[i];
        }
    }
    nf = w;
    if (nf) qsort(fs, nf, sizeof *fs, cmp_folded_n);
    for (size_t i = 0; i < nf; i++)
        fprintf(out, "%s %lld\n", fs[i].text, fs[i].n);
    long long rest;
    double rest_s;
    export_unstacked(p, &rest, &rest_s);
    if (rest) fprintf(out, "%s %lld\n", EXPORT_OTHER_STACKS, rest);
    rc = ferror(out) ? -EIO : 0;
done:
    for (size_t i = 0; fs && i < nf; i++)
        free(fs[i].text);
    free(fs);
    free(name);
    free(v);
    return rc;
}

int export_collapsed(const struct profile *p, FILE *out)
{
    size_t ns;
    const struct prof_stack **v = all_stacks(p, &ns);
    if (!v && p->nstacks) return -ENOMEM;
    char *name = malloc(EXPORT_FRAME_MAX);
    if (!name) {
        free(v);
        return -ENOMEM;
    }
    for (size_t i = 0; i < ns; i++) {
        const struct prof_stack *s = v[i];
        if (s->samples <= 0) continue; /* a line per sample count; seconds alone draw nothing */
        if (!s->nfr) fputs(EXPORT_NO_FRAMES, out);
        for (size_t j = s->nfr; j-- > 0;) { /* stored innermost first; folded is root first */
            export_frame_name(&s->fr[j], 1, name, EXPORT_FRAME_MAX);
            fputs(name, out);
            if (j) fputc(';', out);
        }
        fprintf(out, " %lld\n", s->samples);
    }
    long long rest;
    double rest_s;
    export_unstacked(p, &rest, &rest_s);
    if (rest) fprintf(out, "%s %lld\n", EXPORT_OTHER_STACKS, rest);
    free(name);
    free(v);
    return ferror(out) ? -EIO : 0;
}

/* Index of the frame named name in frames (new entry when unseen); -1 on ENOMEM. */
static json_int_t frame_index(json_t *index, json_t *frames, const char *name, const char *file,
                              int line)
{
    json_t *have = json_object_get(index, name);
    if (have) return json_integer_value(have);
    json_int_t k = (json_int_t)json_array_size(frames);
    json_t *fr = file ? json_pack("{s:s,s:s,s:i}", "name", name, "file", file, "line", line)
                      : json_pack("{s:s}", "name", name);
    if (!fr || json_array_append_new(frames, fr) ||
        json_object_set_new(index, name, json_integer(k)))
        return -1;
    return k;
}

/* Appends one sample (stack root first, weight seconds) to samples/weights. */
static int add_sample(json_t *index, json_t *frames, json_t *samples, json_t *weights,
                      const struct prof_stack *s, double seconds, char *name)
{
    json_t *st = json_array();
    if (!st) return -ENOMEM;
    if (!s || !s->nfr) {
        json_int_t k =
            frame_index(index, frames, s ? EXPORT_NO_FRAMES : EXPORT_OTHER_STACKS, NULL, 0);
        if (k < 0 || json_array_append_new(st, json_integer(k))) goto fail;
    }
    for (size_t j = s ? s->nfr : 0; j-- > 0;) {
        export_frame_name(&s->fr[j], 0, name, EXPORT_FRAME_MAX);
        json_int_t k =
            frame_index(index, frames, name, s->fr[j].file ? s->fr[j].file : "?", s->fr[j].line);
        if (k < 0 || json_array_append_new(st, json_integer(k))) goto fail;
    }
    if (json_array_append_new(samples, st)) return -ENOMEM;
    if (json_array_append_new(weights, json_real(seconds))) return -ENOMEM;
    return 0;
fail:
    json_decref(st);
    return -ENOMEM;
}

/* One speedscope profile being built: a thread's, or the one of the
 * threads not told apart (tid 0). */
struct ss_prof {
    long long pid, tid;
    const char *name;          /* thread name from p->threads, or NULL */
    double thread_s;           /* that thread's seconds in p->threads (0: not listed) */
    json_t *samples, *weights; /* owned */
    double total;
    const struct prof_stack *last; /* of the last sample (has_last): the next one of the */
    int has_last;                  /* same stack adds to its weight (time order) */
};

struct ss_build {
    const struct profile *p;
    json_t *index, *frames; /* frame name -> index; shared frames (owned) */
    json_t *by_thread;      /* "pid:tid" -> index into v (owned) */
    struct ss_prof *v;      /* owned, at most PROFILE_MAX_THREADS + parts' threads + 1 */
    size_t n;
    char *name; /* EXPORT_FRAME_MAX scratch (owned) */
};

/* The profile of (pid, tid), made when new (name borrowed, may be NULL).
 * NULL on ENOMEM. */
static struct ss_prof *ss_prof(struct ss_build *b, long long pid, long long tid, const char *name,
                               double thread_s)
{
    char key[48];
    snprintf(key, sizeof key, "%lld:%lld", pid, tid);
    json_t *have = json_object_get(b->by_thread, key);
    if (have) return &b->v[json_integer_value(have)];
    struct ss_prof *nv = realloc(b->v, (b->n + 1) * sizeof *nv);
    if (!nv) return NULL;
    b->v = nv;
    struct ss_prof *sp = &b->v[b->n];
    *sp = (struct ss_prof){pid, tid, name, thread_s, json_array(), json_array(), 0, NULL, 0};
    if (!sp->samples || !sp->weights ||
        json_object_set_new(b->by_thread, key, json_integer((json_int_t)b->n))) {
        json_decref(sp->samples);
        json_decref(sp->weights);
        return NULL;
    }
    b->n++;
    return sp;
}

/* The profile of the threads not told apart, looked up each time: a
 * pointer kept would dangle once ss_prof grows b->v. */
static struct ss_prof *ss_untold(struct ss_build *b)
{
    return ss_prof(b, 0, 0, NULL, 0);
}

/* Adds one sample of stack s (NULL: "[other stacks]") to sp; one that
 * follows a sample of the same stack adds to its weight. */
static int ss_add(struct ss_build *b, struct ss_prof *sp, const struct prof_stack *s,
                  double seconds)
{
    if (!sp) return -ENOMEM;
    sp->total += seconds;
    size_t nw = json_array_size(sp->weights);
    if (sp->has_last && sp->last == s && nw) {
        json_t *w = json_array_get(sp->weights, nw - 1);
        return json_real_set(w, json_real_value(w) + seconds) ? -ENOMEM : 0;
    }
    sp->last = s;
    sp->has_last = 1;
    return add_sample(b->index, b->frames, sp->samples, sp->weights, s, seconds, b->name);
}

/* What the timeline placed of each stack: covered[k][j] seconds of part j
 * of stack v[k], covered[k][nparts] of its threads not told apart. */
struct ss_cover {
    const struct prof_stack *s;
    double *sec; /* owned: nparts + 1 */
};

static int cmp_cover(const void *a, const void *b)
{
    const struct ss_cover *x = a, *y = b;
    return (uintptr_t)x->s < (uintptr_t)y->s ? -1 : (uintptr_t)x->s > (uintptr_t)y->s;
}

/* The timeline's ticks in time order into their threads' profiles (time
 * order: speedscope's "Time Order" view shows the program's phases as they
 * came), each tick's seconds noted in cov (sorted by stack) so that
 * ss_fill adds only what the timeline lacks (ticks dropped or merged
 * away). 0 or -ENOMEM. */
static int ss_fill_timeline(struct ss_build *b, struct ss_cover *cov, size_t ns, int per_thread)
{
    size_t nt;
    struct prof_tick *tk = timeline_sorted(&b->p->tl, &nt);
    if (!tk) return b->p->tl.n ? -ENOMEM : 0;
    int rc = 0;
    for (size_t i = 0; !rc && i < nt; i++) {
        struct ss_cover key = {tk[i].stack, NULL};
        struct ss_cover *c = tk[i].stack ? bsearch(&key, cov, ns, sizeof *cov, cmp_cover) : NULL;
        if (!c) continue; /* a stack the store did not keep: in "[other stacks]" */
        const struct prof_stack *s = c->s;
        size_t j = s->nparts;
        for (size_t k = 0; per_thread && tk[i].tid && k < s->nparts; k++)
            if (s->parts[k].pid == tk[i].pid && s->parts[k].tid == tk[i].tid) j = k;
        c->sec[j] += tk[i].seconds;
        rc = ss_add(b, j < s->nparts ? ss_prof(b, tk[i].pid, tk[i].tid, NULL, 0) : ss_untold(b), s,
                    tk[i].seconds);
    }
    free(tk);
    return rc;
}

/* Below this a stack's seconds not in its threads' parts are the rounding
 * of sums (the saved profile keeps 10 digits), not a sample: the shortest
 * sampling interval is 100 us. */
#define EXPORT_SECONDS_EPS 1e-7

/* Fills b with one profile per thread that has stacks of its own plus one
 * for the threads not told apart (tid 0; the only one when per_thread is 0
 * or no stack has parts). 0 or -ENOMEM. */
static int ss_fill(struct ss_build *b, const struct prof_stack **v, size_t ns, int per_thread)
{
    const struct profile *p = b->p;
    size_t nparts = 0;
    for (size_t i = 0; per_thread && i < ns; i++)
        nparts += v[i]->nparts;
    if (!nparts && !ss_untold(b)) return -ENOMEM;
    /* main threads (tid = pid) first, so that activeProfileIndex 0 opens
     * one, then the thread table's order (first seen first) */
    for (int pass = 0; nparts && pass < 2; pass++)
        for (size_t i = 0; i < p->nthreads; i++) {
            const struct prof_thread *t = &p->threads[i];
            if (!t->tid || (t->tid == t->pid) != !pass) continue;
            if (!ss_prof(b, t->pid, t->tid, t->name, t->py + t->nat + t->sys)) return -ENOMEM;
        }
    /* the timeline first, in time order; then the rest of each stack */
    struct ss_cover *cov = calloc(ns ? ns : 1, sizeof *cov);
    int rc = cov ? 0 : -ENOMEM;
    for (size_t i = 0; !rc && i < ns; i++)
        if (!(cov[i].sec = calloc(v[i]->nparts + 1, sizeof *cov[i].sec)))
            rc = -ENOMEM;
        else
            cov[i].s = v[i];
    if (!rc) qsort(cov, ns, sizeof *cov, cmp_cover);
    if (!rc) rc = ss_fill_timeline(b, cov, ns, nparts > 0);
    for (size_t i = 0; !rc && i < ns; i++) {
        const struct ss_cover *c = &cov[i];
        const struct prof_stack *s = c->s;
        if (s->seconds <= 0) continue;
        double told = 0;
        for (size_t j = 0; !rc && nparts && j < s->nparts; j++) {
            told += s->parts[j].seconds;
            double left = s->parts[j].seconds - c->sec[j];
            if (left > EXPORT_SECONDS_EPS)
                rc = ss_add(b, ss_prof(b, s->parts[j].pid, s->parts[j].tid, NULL, 0), s, left);
        }
        double left = s->seconds - told - c->sec[s->nparts];
        if (!rc && left > EXPORT_SECONDS_EPS) rc = ss_add(b, ss_untold(b), s, left);
    }
    for (size_t i = 0; cov && i < ns; i++)
        free(cov[i].sec);
    free(cov);
    long long rest;
    double rest_s;
    export_unstacked(p, &rest, &rest_s);
    /* the samples no stored stack carries (a saved profile keeps only the
     * heaviest stacks; samples without frames): each thread's part is what
     * its seconds in the thread table have beyond its profile */
    for (size_t i = 0; !rc && nparts && i < b->n && rest_s > EXPORT_SECONDS_EPS; i++) {
        struct ss_prof *sp = &b->v[i];
        double gap = sp->tid && sp->total > 0 ? sp->thread_s - sp->total : 0;
        if (gap <= EXPORT_SECONDS_EPS) continue;
        if (gap > rest_s) gap = rest_s;
        rc = ss_add(b, sp, NULL, gap);
        rest_s -= gap;
    }
    if (!rc && rest_s > 0 && (!nparts || rest_s > EXPORT_SECONDS_EPS))
        rc = ss_add(b, ss_untold(b), NULL, rest_s);
    return rc;
}

/* New reference: the speedscope profile object of sp, its name "NAME (tid
 * N)" (with the pid when the profile has several processes), or title for
 * the threads not told apart. */
static json_t *ss_profile_json(const struct ss_build *b, struct ss_prof *sp, const char *untold,
                               int flags)
{
    char title[512];
    if (!sp->tid)
        snprintf(title, sizeof title, "%s", untold);
    else if (b->p->nprocs > 1)
        snprintf(title, sizeof title, "%s (pid %lld, tid %lld)",
                 sp->name && sp->name[0] ? sp->name : "thread", sp->pid, sp->tid);
    else
        snprintf(title, sizeof title, "%s (tid %lld)",
                 sp->name && sp->name[0] ? sp->name : "thread", sp->tid);
    json_t *o = json_pack("{s:s,s:s,s:s,s:f,s:f,s:O,s:O}", "type", "sampled", "name", title, "unit",
                          "seconds", "startValue", 0.0, "endValue", sp->total, "samples",
                          sp->samples, "weights", sp->weights);
    if (o && (flags & EXPORT_PIDS))
        json_object_set_new(o, "pid", json_integer(sp->tid ? sp->pid : 0));
    return o;
}

json_t *export_speedscope(const struct profile *p, const char *exporter, int flags)
{
    size_t ns;
    const struct prof_stack **v = all_stacks(p, &ns);
    if (!v && p->nstacks) return NULL;
    struct ss_build b = {p, json_object(),           json_array(), json_object(), NULL,
                         0, malloc(EXPORT_FRAME_MAX)};
    json_t *root = NULL, *profs = json_array();
    int rc = b.index && b.frames && b.by_thread && b.name && profs ? 0 : -ENOMEM;
    if (!rc) rc = ss_fill(&b, v, ns, flags & EXPORT_THREADS);
    const char *program = p->meta.program ? p->meta.program : "profile";
    size_t told = 0;
    for (size_t i = 0; i < b.n; i++)
        told += b.v[i].tid && b.v[i].total > 0;
    char untold[512];
    /* without threads told apart, one profile holds every thread of every
     * process (an older agent or profile: docs/pictures.md) */
    snprintf(untold, sizeof untold, told ? "[other threads]" : "%s (all threads)", program);
    for (int pass = 0; pass < 2; pass++) /* the threads, then those not told apart */
        for (size_t i = 0; !rc && i < b.n; i++) {
            if ((b.v[i].tid == 0) != pass) continue;
            if (b.v[i].total <= 0 && (b.v[i].tid || told)) continue; /* a profile with no weight */
            json_t *o = ss_profile_json(&b, &b.v[i], untold, flags);
            if (!o || json_array_append_new(profs, o)) rc = -ENOMEM;
        }
    if (!rc && !json_array_size(profs)) { /* nothing sampled: still one (empty) profile */
        struct ss_prof empty = {0, 0, NULL, 0, json_array(), json_array(), 0, NULL, 0};
        json_t *o =
            empty.samples && empty.weights ? ss_profile_json(&b, &empty, untold, flags) : NULL;
        json_decref(empty.samples);
        json_decref(empty.weights);
        if (!o || json_array_append_new(profs, o)) rc = -ENOMEM;
    }
    if (!rc) {
        root = json_pack("{s:s,s:{s:O},s:O,s:s,s:i,s:s}", "$schema",
                         "https://www.speedscope.app/file-format-schema.json", "shared", "frames",
                         b.frames, "profiles", profs, "name", told ? program : untold,
                         "activeProfileIndex", 0, "exporter", exporter ? exporter : "hotline");
    }
    for (size_t i = 0; i < b.n; i++) {
        json_decref(b.v[i].samples);
        json_decref(b.v[i].weights);
    }
    free(b.v);
    json_decref(b.index);
    json_decref(b.frames);
    json_decref(b.by_thread);
    json_decref(profs);
    free(b.name);
    free(v);
    return root;
}

struct text_fill {
    const char *buf;
    size_t len;
};

static int fill_text(FILE *f, void *ud)
{
    const struct text_fill *t = ud;
    return t->len && fwrite(t->buf, 1, t->len, f) != t->len ? (errno ? -errno : -EIO) : 0;
}

int export_save_text(const char *path, const char *buf, size_t len)
{
    struct text_fill t = {buf, len};
    return profile_save_with(path, fill_text, &t);
}

static int fill_collapsed(FILE *f, void *ud)
{
    return export_collapsed(ud, f);
}

struct collapsed_opts {
    const struct profile *p;
    int flags;
    const char *base;
};

static int fill_collapsed_opts(FILE *f, void *ud)
{
    const struct collapsed_opts *o = ud;
    return export_collapsed_opts(o->p, f, o->flags, o->base);
}

int export_collapsed_save_opts(const struct profile *p, const char *path, int flags,
                               const char *base)
{
    struct collapsed_opts o = {p, flags, base};
    return profile_save_with(path, fill_collapsed_opts, &o);
}

int export_collapsed_save(const struct profile *p, const char *path)
{
    return profile_save_with(path, fill_collapsed, (void *)p);
}

int export_speedscope_save(const struct profile *p, const char *exporter, const char *path)
{
    json_t *root = export_speedscope(p, exporter, EXPORT_THREADS);
    if (!root) return -ENOMEM;
    int rc = profile_save_json(root, path, JSON_COMPACT | JSON_REAL_PRECISION(10));
    json_decref(root);
    return rc;
}
