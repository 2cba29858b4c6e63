/* timeline: when the profile's stacks ran (timeline.h). */
#include "store/timeline.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIMELINE_FIRST_BUCKET_S 0.2 /* twice the agents' delta period */

void timeline_free(struct prof_timeline *tl)
{
    free(tl->v);
    *tl = (struct prof_timeline){0};
}

/* What a merge groups by: the bucket of t1, the thread, the stack. */
struct tl_key {
    double b;
    long long pid, tid;
    uintptr_t s;
    size_t i; /* arrival: ties keep it */
};

static int cmp_key(const void *a, const void *b)
{
    const struct tl_key *x = a, *y = b;
    if (x->b != y->b) return x->b < y->b ? -1 : 1;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int same_group(const struct tl_key *x, const struct tl_key *y)
{
    return x->b == y->b && x->pid == y->pid && x->tid == y->tid && x->s == y->s;
}

/* Merges the ticks into buckets of width w (sorted by bucket after). */
static int merge(struct prof_timeline *tl, double w)
{
    struct tl_key *k = malloc(tl->n * sizeof *k);
    struct prof_tick *out = malloc(tl->cap * sizeof *out);
    if (!k || !out) {
        free(k);
        free(out);
        return -ENOMEM;
    }
    for (size_t i = 0; i < tl->n; i++) {
        const struct prof_tick *t = &tl->v[i];
        k[i] = (struct tl_key){floor(t->t1 / w), t->pid, t->tid, (uintptr_t)t->stack, i};
    }
    qsort(k, tl->n, sizeof *k, cmp_key);
    size_t m = 0;
    for (size_t i = 0; i < tl->n; i++) {
        const struct prof_tick *t = &tl->v[k[i].i];
        if (i && same_group(&k[i], &k[i - 1])) {
            struct prof_tick *o = &out[m - 1];
            o->t0 = fmin(o->t0, t->t0);
            o->t1 = fmax(o->t1, t->t1);
            o->seconds += t->seconds;
            o->samples = prof_add_count(o->samples, t->samples);
            continue;
        }
        out[m++] = *t;
    }
    free(k);
    free(tl->v);
    tl->v = out;
    tl->n = m;
    tl->bucket_s = w;
    return 0;
}

/* Room for one more tick: grows up to the cap, then merges coarser until
 * half the room is free. -ENOSPC when even the widest buckets fill it. */
static int make_room(struct prof_timeline *tl)
{
    if (tl->n < tl->cap) return 0;
    if (tl->cap < PROFILE_MAX_TICKS) {
        size_t c = tl->cap ? tl->cap * 2 : 1024;
        if (c > PROFILE_MAX_TICKS) c = PROFILE_MAX_TICKS;
        void *nv = realloc(tl->v, c * sizeof *tl->v);
        if (!nv) return -ENOMEM;
        tl->v = nv;
        tl->cap = c;
        return 0;
    }
    double w = tl->bucket_s > 0 ? tl->bucket_s : TIMELINE_FIRST_BUCKET_S / 2;
    while (tl->n > tl->cap / 2 && w < TIMELINE_MAX_BUCKET_S) {
        w = fmin(w * 2, TIMELINE_MAX_BUCKET_S);
        int rc = merge(tl, w);
        if (rc) return rc;
    }
    return tl->n < tl->cap ? 0 : -ENOSPC;
}

int timeline_add(struct prof_timeline *tl, const struct prof_stack *s, long long pid, long long tid,
                 double t0, double t1, long long samples, double seconds)
{
    if (samples <= 0 && seconds <= 0) return 0;
    int rc = make_room(tl);
    if (rc) {
        tl->dropped++;
        return rc == -ENOMEM ? rc : 0;
    }
    if (t0 > t1) t0 = t1;
    tl->v[tl->n++] = (struct prof_tick){t0, t1, seconds, samples, pid, tid, s};
    return 0;
}

void timeline_forget(struct prof_timeline *tl, int (*gone)(const struct prof_stack *, void *),
                     void *ud)
{
    size_t m = 0;
    for (size_t i = 0; i < tl->n; i++)
        if (!gone(tl->v[i].stack, ud)) tl->v[m++] = tl->v[i];
    tl->n = m;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double timeline_offset(struct prof_timeline *tl, double mono0)
{
    if (!(mono0 > 0)) return 0;
    if (!(tl->mono0 > 0)) {
        tl->mono0 = mono0;
        tl->unix0 = clock_s(CLOCK_REALTIME) - (clock_s(CLOCK_MONOTONIC) - mono0);
    }
    return mono0 - tl->mono0;
}

static int cmp_time(const void *a, const void *b, void *ud)
{
    const struct prof_tick *v = ud;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (v[i].t1 != v[j].t1) return v[i].t1 < v[j].t1 ? -1 : 1;
    if (v[i].t0 != v[j].t0) return v[i].t0 < v[j].t0 ? -1 : 1;
    return i < j ? -1 : i > j;
}

struct prof_tick *timeline_sorted(const struct prof_timeline *tl, size_t *n)
{
    *n = 0;
    if (!tl->n) return NULL;
    size_t *ix = malloc(tl->n * sizeof *ix);
    struct prof_tick *out = malloc(tl->n * sizeof *out);
    if (!ix || !out) {
        free(ix);
        free(out);
        return NULL;
    }
    for (size_t i = 0; i < tl->n; i++)
        ix[i] = i;
    qsort_r(ix, tl->n, sizeof *ix, cmp_time, tl->v);
    for (size_t i = 0; i < tl->n; i++)
        out[i] = tl->v[ix[i]];
    free(ix);
    *n = tl->n;
    return out;
}

/* ---- saved form ---------------------------------------------------------- */

struct stack_ix {
    uintptr_t s;
    size_t i;
};

static int cmp_stack_ix(const void *a, const void *b)
{
    const struct stack_ix *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s;
}

json_t *timeline_json(const struct prof_timeline *tl, const struct prof_stack *const *written,
                      size_t nwritten)
{
    if (!tl->n) return NULL;
    struct stack_ix *ix = malloc((nwritten ? nwritten : 1) * sizeof *ix);
    json_t *ticks = json_array();
    if (!ix || !ticks) {
        free(ix);
        json_decref(ticks);
        return NULL;
    }
    for (size_t i = 0; i < nwritten; i++)
        ix[i] = (struct stack_ix){(uintptr_t)written[i], i};
    qsort(ix, nwritten, sizeof *ix, cmp_stack_ix);
    long long left_out = 0;
    for (size_t i = 0; i < tl->n; i++) {
        const struct prof_tick *t = &tl->v[i];
        struct stack_ix key = {(uintptr_t)t->stack, 0};
        const struct stack_ix *f = bsearch(&key, ix, nwritten, sizeof *ix, cmp_stack_ix);
        if (!f) { /* a stack the profile does not keep: its time is in no stack either */
            left_out++;
            continue;
        }
        json_array_append_new(ticks, json_pack("[f,f,I,I,I,I,f]", t->t0, t->t1, (json_int_t)t->pid,
                                               (json_int_t)t->tid, (json_int_t)f->i,
                                               (json_int_t)t->samples, t->seconds));
    }
    free(ix);
    return json_pack("{s:f,s:f,s:I,s:o}", "bucket_s", tl->bucket_s, "origin_unix_s", tl->unix0,
                     "dropped", (json_int_t)(tl->dropped + left_out), "ticks", ticks);
}

static int bad(char *err, size_t errlen, const char *what)
{
    if (err && errlen) snprintf(err, errlen, "invalid profile: timeline: %s", what);
    return -EINVAL;
}

int timeline_load(struct prof_timeline *tl, const json_t *o, const struct prof_stack *const *stacks,
                  size_t nstacks, char *err, size_t errlen)
{
    if (!o) return 0;
    const json_t *ticks = json_object_get(o, "ticks"), *w = json_object_get(o, "bucket_s"),
                 *u = json_object_get(o, "origin_unix_s"), *d = json_object_get(o, "dropped");
    if (!json_is_object(o) || !json_is_array(ticks) || (w && !json_is_number(w)) ||
        (u && !json_is_number(u)) || (d && !json_is_integer(d)))
        return bad(err, errlen, "a field has the wrong type");
    tl->bucket_s = w && json_number_value(w) > 0 ? json_number_value(w) : 0;
    tl->unix0 = u && json_number_value(u) > 0 ? json_number_value(u) : 0;
    tl->dropped = d && json_integer_value(d) > 0 ? json_integer_value(d) : 0;
    for (size_t i = 0; i < json_array_size(ticks); i++) {
        const json_t *a = json_array_get(ticks, i);
        const json_t *st = json_array_get(a, 4), *pid = json_array_get(a, 2),
                     *tid = json_array_get(a, 3), *n = json_array_get(a, 5);
        if (!json_is_array(a) || json_array_size(a) < 7 || !json_is_number(json_array_get(a, 0)) ||
            !json_is_number(json_array_get(a, 1)) || !json_is_integer(pid) ||
            !json_is_integer(tid) || !json_is_integer(st) || !json_is_integer(n) ||
            !json_is_number(json_array_get(a, 6)))
            return bad(err, errlen, "a tick is not [t0, t1, pid, tid, stack, samples, seconds]");
        json_int_t k = json_integer_value(st);
        double sec = json_number_value(json_array_get(a, 6));
        if (k < 0 || (size_t)k >= nstacks || json_integer_value(n) < 0 || !(sec >= 0))
            return bad(err, errlen, "a tick names a stack the profile lacks or is negative");
        if (timeline_add(tl, stacks[k], json_integer_value(pid), json_integer_value(tid),
                         json_number_value(json_array_get(a, 0)),
                         json_number_value(json_array_get(a, 1)), json_integer_value(n), sec))
            return -ENOMEM;
    }
    return 0;
}
