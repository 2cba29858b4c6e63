/* memprof: the memory side of the profile store (docs/memory.md).
 *
 * Per-line memory totals ride the AGENT_STATS rows like every statistic;
 * what does not fit a row lives here: the footprint of the program over
 * time (top-level `memory_timeline`, `peak_mb` and where it happened), a
 * short kept-MB timeline per line (sparkline, a few dozen points), and the
 * leak analysis that turns those timelines into per-file `leaks`.
 * Owned by a struct profile (p->p__mem); profile.c calls in. */
#ifndef HOTLINE_MEMPROF_H
#define HOTLINE_MEMPROF_H

#include <jansson.h>

#define MEMPROF_POINTS 64        /* points kept per timeline (thinned when full) */
#define MEMPROF_MAX_LINES 100000 /* lines with a timeline */
#define MEMPROF_MIN_LEAK_MB 1.0  /* smaller amounts kept are never a leak */
#define MEMPROF_MAX_PTS 1024     /* kept points read from one delta entry */

struct profile;

struct memprof_leak {
    int line;
    double likelihood; /* 0..1 */
    double rate_mb_s;  /* slope of the line's kept MB over its run */
    double kept_mb;    /* kept at the end */
};

/* Free p's memory side (p borrowed). */
void memprof_free(struct profile *p);
/* Line (path interned by the store, borrowed for p's lifetime) holds kept_mb
 * at ts. 0 or -ENOMEM (point dropped). */
int memprof_line_point(struct profile *p, const char *path, int line, double ts, double kept_mb);
/* Kept-MB points inside one delta period (the agent's `kept_pts`, borrowed:
 * an array of [ts, MB relative to base]); base = the line's kept MB before
 * the delta merged. Points after ts_max or malformed are skipped; at most
 * MEMPROF_MAX_PTS are read. Call before the delta's own point at ts_max. */
void memprof_line_points(struct profile *p, const char *path, int line, const json_t *pts,
                         double base, double ts_max);
/* The run reached ts (any agent message with a time): the end of every
 * timeline moves there, so a line that stopped changing reads as flat.
 * No-op for runs without memory data. */
void memprof_touch(struct profile *p, double ts);
/* Program footprint at ts; peak with its place (peak_path interned or NULL). */
int memprof_footprint(struct profile *p, double ts, double live_mb, double peak_mb,
                      const char *peak_path, int peak_line);
/* Leaks of one file: fills out[0..ret) (at most n), most likely first.
 * Costs the file's lines with data (not the whole profile's). */
size_t memprof_leaks(const struct profile *p, const char *path, struct memprof_leak *out, size_t n);
/* Pure analysis of one step-function timeline t[0..n), v[0..n) (MB) ending
 * at t_end: 1 and *out filled when it looks like a leak, else 0. Exposed for
 * unit tests. */
int memprof_analyse(const double *t, const double *v, int n, double t_end,
                    struct memprof_leak *out);

/* JSON: add top-level keys (peak_mb, peak_at, memory_timeline) to root, and
 * per-line `memory_timeline` / per-file `leaks` into a file object (both
 * borrowed). */
void memprof_json_top(const struct profile *p, json_t *root);
void memprof_json_line(const struct profile *p, const char *path, int line, json_t *lineobj);
void memprof_json_file(const struct profile *p, const char *path, json_t *fileobj);
/* New reference: the `leaks` list of one file as the profile writes it, or
 * NULL when it has none. */
json_t *memprof_leaks_json(const struct profile *p, const char *path);
/* The likely leaks of every file of a profile, taken at one moment
 * (memprof_leaks per file, at most MEMPROF_LEAKS_PER_FILE each, the lists
 * the saved profile's per-file `leaks` hold). */
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
/* New set for p (borrowed, may be NULL; the set borrows its paths, so it
 * must not outlive p), or NULL when no file has a leak (or ENOMEM). Touches
 * nothing else: the loader calls it off the loop thread. */
struct memprof_leak_set *memprof_leak_set_new(const struct profile *p);
void memprof_leak_set_free(struct memprof_leak_set *ls);
/* Read back what the three writers wrote (path interned). Malformed
 * memory entries are skipped (they are optional). */
void memprof_load_top(struct profile *p, const json_t *root);
void memprof_load_line(struct profile *p, const char *path, int line, const json_t *lineobj);
/* Lines memprof_leaks has looked at so far: a whole-profile pass (writing
 * it, loading it in the language server) looks at each line once, never
 * at every line for every file. For tests. */
size_t memprof_examined(const struct profile *p);
/* Peak footprint (MB) and where (path borrowed, may be NULL). */
double memprof_peak_mb(const struct profile *p, const char **path, int *line);

#endif
