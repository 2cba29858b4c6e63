/* memprof: the memory side of the profile store (docs/memory.md).
 *
 * Per-line memory totals ride the AGENT_STATS rows like every statistic;
 * what does not fit a row lives here: the footprint of the program over
 * time (top-level `memory_timeline`, `peak_mb` and where it happened), a
 * short kept-MB timeline per line (sparkline, a few dozen points), and the
 * leak analysis that turns those timelines into per-file `leaks`.
 *
 * A layer below the store: a struct profile owns one (p->mem) and calls in
 * as data arrives; memprof never reads the profile back. A line is known by
 * (path, line) with the path interned by the store (compared by pointer,
 * borrowed for the memprof's lifetime); what the store knows about a file
 * (its lines with data) is walked by the store, which asks one line at a
 * time (memprof_line_leak). */
#ifndef HOTLINE_MEMPROF_H
#define HOTLINE_MEMPROF_H

#include <jansson.h>

#include "agent_wire.h"

#define MEMPROF_POINTS 64        /* points kept per timeline (thinned when full) */
#define MEMPROF_MAX_LINES 100000 /* lines with a timeline */
#define MEMPROF_MIN_LEAK_MB 1.0  /* smaller amounts kept are never a leak */

struct memprof;

struct memprof_leak {
    int line;
    double likelihood; /* 0..1 */
    double rate_mb_s;  /* slope of the line's kept MB over its run */
    double kept_mb;    /* kept at the end */
};

/* New empty memory side, or NULL on ENOMEM. It holds nothing a writer
 * shows until the first memory datum (memprof_has_data). */
struct memprof *memprof_new(void);
void memprof_free(struct memprof *m);
/* 1 once any memory datum arrived or was loaded: a run without memory data
 * writes no memory keys. */
int memprof_has_data(const struct memprof *m);
/* Line (path interned by the store, borrowed for m's lifetime) holds kept_mb
 * at ts. 0 or -ENOMEM (point dropped). */
int memprof_line_point(struct memprof *m, const char *path, int line, double ts, double kept_mb);
/* Kept-MB points inside one delta period (the agent's `kept_pts`, read
 * by agent_msg_kept_pts: pts[0..n), borrowed, MB relative to base);
 * base = the line's kept MB before the delta merged. Points after ts_max
 * are skipped. Call before the delta's own point at ts_max. */
void memprof_line_points(struct memprof *m, const char *path, int line,
                         const struct agent_kept_pt *pts, size_t n, double base, double ts_max);
/* The run reached ts (any agent message with a time): the end of every
 * timeline moves there, so a line that stopped changing reads as flat.
 * No-op for runs without memory data. */
void memprof_touch(struct memprof *m, double ts);
/* Program footprint at ts; peak with its place (peak_path copied, may be NULL). */
int memprof_footprint(struct memprof *m, double ts, double live_mb, double peak_mb,
                      const char *peak_path, int peak_line);
/* The leak rule on one line's timeline: 1 and *out filled (line included)
 * when it looks like a leak, else 0 (also when m is NULL or the line has no
 * timeline). Counted in memprof_examined. */
int memprof_line_leak(struct memprof *m, const char *path, int line, struct memprof_leak *out);
/* Sort leaks l[0..n) most likely first (then by line). */
void memprof_leaks_sort(struct memprof_leak *l, size_t n);
/* Pure analysis of one step-function timeline t[0..n), v[0..n) (MB) ending
 * at t_end: 1 and *out filled when it looks like a leak, else 0. Exposed for
 * unit tests. */
int memprof_analyse(const double *t, const double *v, int n, double t_end,
                    struct memprof_leak *out);

/* JSON: add top-level keys (peak_mb, peak_at, memory_timeline) to root,
 * and a line's `memory_timeline` to its line object (both borrowed). */
void memprof_json_top(const struct memprof *m, json_t *root);
void memprof_json_line(const struct memprof *m, const char *path, int line, json_t *lineobj);
/* A line's kept-MB timeline: its n points (returned, 0 when it has none) in
 * *t and *v (borrowed from m, valid until m next changes). */
int memprof_line_timeline(const struct memprof *m, const char *path, int line, const double **t,
                          const double **v);
/* The likely leaks of every file of a profile, taken at one moment (at
 * most MEMPROF_LEAKS_PER_FILE per file, the lists the saved profile's
 * per-file `leaks` hold); made by profile_leak_set_new (store/profile.h). */
#define MEMPROF_LEAKS_PER_FILE 100
struct memprof_leak_file {
    const char *path; /* borrowed: the profile's name for the file */
    size_t n;
    struct memprof_leak l[MEMPROF_LEAKS_PER_FILE];
};
struct memprof_leak_set {
    size_t n;
    struct memprof_leak_file *files; /* owned, n entries, in the profile's file order */
};
void memprof_leak_set_free(struct memprof_leak_set *ls);
/* Read back what the writers wrote (path interned). Malformed memory
 * entries are skipped (they are optional). */
void memprof_load_top(struct memprof *m, const json_t *root);
void memprof_load_line(struct memprof *m, const char *path, int line, const json_t *lineobj);
/* Lines memprof_line_leak has looked at so far: a whole-profile pass
 * (writing it, loading it in the language server) looks at each line once,
 * never at every line for every file. For tests. */
size_t memprof_examined(const struct memprof *m);
/* Peak footprint (MB) and where (path borrowed, may be NULL); m may be NULL. */
double memprof_peak_mb(const struct memprof *m, const char **path, int *line);
/* The footprint (MB) the last `mem` message said, 0 before one; m may be
 * NULL. What a live view (`hotline top`) shows beside the peak. */
double memprof_live_mb(const struct memprof *m);

#endif
