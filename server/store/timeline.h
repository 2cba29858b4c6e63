/* timeline: when the profile's stacks ran, in the order they ran.
 *
 * The store's stacks are totals; the pictures that show time (speedscope's
 * "Time Order" view, the Firefox Profiler's tracks) need the order. Every
 * delta an agent sends covers one period (about 100 ms) and says which
 * stacks each thread ran in it: one tick per (period, thread, stack). Ticks
 * are kept in arrival order with times on one clock for every process of
 * the profile (the first process's start is 0: each agent's hello says
 * where its own ts 0 is on CLOCK_MONOTONIC, which all processes of a host
 * share).
 *
 * Bounded: past PROFILE_MAX_TICKS the ticks are merged into buckets of
 * twice the width (0.2 s, 0.4 s, ...) until half the room is free, so a
 * long run keeps its whole span at a coarser grain instead of its first
 * minutes. */
#ifndef HOTLINE_STORE_TIMELINE_H
#define HOTLINE_STORE_TIMELINE_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>

#define PROFILE_MAX_TICKS (1 << 18) /* 56 B each: 14 MB at most */
/* buckets never grow past this: ticks that still do not fit are dropped
 * (a run of more distinct (thread, stack) pairs than the cap) */
#define TIMELINE_MAX_BUCKET_S 86400.0

struct prof_stack;

/* a + b for sample counts an agent sent: they are untrusted and may be
 * near LLONG_MAX, so the sum saturates instead of overflowing (UB) */
static inline long long prof_add_count(long long a, long long b)
{
    if (b > 0 && a > LLONG_MAX - b) return LLONG_MAX;
    if (b < 0 && a < LLONG_MIN - b) return LLONG_MIN;
    return a + b;
}

struct prof_tick {
    double t0, t1;  /* seconds since the profile's origin: the period */
    double seconds; /* of the stack in that thread within it */
    long long samples;
    long long pid, tid;             /* tid 0: threads not told apart */
    const struct prof_stack *stack; /* borrowed from the store */
};

struct prof_timeline {
    struct prof_tick *v; /* owned, arrival order (sorted by t1 once merged) */
    size_t n, cap;
    double bucket_s;   /* 0: one tick per delta; else the merged buckets' width */
    double mono0;      /* CLOCK_MONOTONIC seconds at the origin; 0 not known yet */
    double unix0;      /* the same moment in seconds since 1970; 0 not known */
    long long dropped; /* ticks not kept (see TIMELINE_MAX_BUCKET_S) */
};

void timeline_free(struct prof_timeline *tl);

/* Records one tick (the period [t0, t1] on the timeline's clock). Merges
 * into buckets when full. 0, or -ENOMEM (the tick is counted in dropped). */
int timeline_add(struct prof_timeline *tl, const struct prof_stack *s, long long pid, long long tid,
                 double t0, double t1, long long samples, double seconds);

/* Drops the ticks whose stack gone(stack, ud) says is gone (a notebook
 * cell's earlier execution, profile_reset_file), keeping the others'
 * order. */
void timeline_forget(struct prof_timeline *tl, int (*gone)(const struct prof_stack *, void *),
                     void *ud);

/* Seconds to add to an agent's ts so that it reads on tl's clock, given the
 * CLOCK_MONOTONIC second of that agent's ts 0 (its hello's mono0; <= 0 when
 * it sent none: then 0, the agent's own clock). The first agent that says
 * sets the origin. */
double timeline_offset(struct prof_timeline *tl, double mono0);

/* New array (free()d by the caller) of the ticks sorted by time (t1, then
 * arrival), *n of them; NULL with *n = 0 when there are none or on ENOMEM. */
struct prof_tick *timeline_sorted(const struct prof_timeline *tl, size_t *n);

/* The saved form (docs/profile-format.md, "timeline"): the ticks of the
 * stacks written, stack i of written[] being index i of the profile's
 * "stacks". New reference, or NULL when there is no tick. */
json_t *timeline_json(const struct prof_timeline *tl, const struct prof_stack *const *written,
                      size_t nwritten);

/* Loads the saved form o (borrowed; NULL: nothing) with stacks[i] the store
 * stack of the profile's "stacks" entry i. 0 or -EINVAL (err says why). */
int timeline_load(struct prof_timeline *tl, const json_t *o, const struct prof_stack *const *stacks,
                  size_t nstacks, char *err, size_t errlen);

#endif
