/* agent_wire: the agent -> server wire format (docs/agent-protocol.md).
 *
 * Two pure pieces, no I/O: an incremental line reader that splits a byte
 * stream into newline-terminated JSON lines (16 MiB cap per line; an oversize
 * line is dropped and reported, reading goes on), and a decoder that turns one
 * line into a typed message whose known fields have been type-checked.
 * Unknown message types and unknown fields are accepted and ignored, so a
 * newer agent keeps working with this server.
 *
 * The per-line / per-function statistics are listed once, in AGENT_STATS
 * below: adding a measurement (alloc_mb, gpu_percent, ...) is one row there,
 * and the decoder, the profile store and its JSON reader/writer follow. */
#ifndef HOTLINE_AGENT_WIRE_H
#define HOTLINE_AGENT_WIRE_H

#include <stddef.h>
#include <jansson.h>

#include "agent_keys.h"

#define AGENT_WIRE_MAX_LINE (16u << 20) /* bytes, newline excluded */

/* ---- statistics table ---------------------------------------------------
 * AGENT_STATS, enum agent_merge and enum agent_stat are in agent_keys.h
 * (header only, so that the agent, which does not link jansson, writes its
 * keys from the same table). */
struct agent_stat_desc {
    const char *wire; /* key in a delta `lines` / `funcs` entry */
    const char *json; /* key in the saved profile */
    enum agent_merge merge;
};
extern const struct agent_stat_desc agent_stat_descs[AGENT_NSTATS];

struct agent_stats {
    double v[AGENT_NSTATS];
};

/* Merge src into dst following each field's merge rule, then derive. */
void agent_stats_merge(struct agent_stats *dst, const struct agent_stats *src);
/* Recompute the AGENT_MERGE_DERIVED fields: kept = alloc - freed (>= 0),
 * python_alloc_fraction = python alloc / alloc, copy_mb_s = copy MB per
 * second of the line's own time (py+nat+sys), gpu_percent = 100 * GPU-busy
 * seconds per second of the line's time. */
void agent_stats_derive(struct agent_stats *s);
/* Wall seconds charged (py + nat + sys). */
double agent_stats_time(const struct agent_stats *s);
/* Read every known stat present as a number in obj (borrowed) using wire
 * (json=0) or profile (json=1) keys. Missing fields stay 0. Returns 0, or
 * -EINVAL if a known field is present but not a finite number >= 0. */
int agent_stats_read(struct agent_stats *out, const json_t *obj, int json_keys);

/* ---- line reader -------------------------------------------------------- */

enum agent_line_status {
    AGENT_LINE_OK,       /* line/len: one complete line, no '\n' */
    AGENT_LINE_OVERSIZE, /* a line over AGENT_WIRE_MAX_LINE was dropped; len = its size */
};
/* line is borrowed, valid during the call only. Return 0 to go on, non-zero
 * to stop feeding (agent_reader_feed returns that value). */
typedef int (*agent_line_cb)(void *ud, enum agent_line_status st, const char *line, size_t len);

struct agent_reader {
    char *buf; /* partial line (owned) */
    size_t len, cap;
    size_t max_line; /* AGENT_WIRE_MAX_LINE unless a test lowers it */
    int dropping;    /* inside an oversize line: discard until '\n' */
    size_t dropped;  /* bytes of the line being dropped */
};

void agent_reader_init(struct agent_reader *r);
void agent_reader_free(struct agent_reader *r);
/* Feed n bytes (borrowed); cb runs once per complete line. Returns 0,
 * -ENOMEM, or the first non-zero cb return. */
int agent_reader_feed(struct agent_reader *r, const char *data, size_t n, agent_line_cb cb,
                      void *ud);
/* Bytes of an unterminated last line still buffered (EOF mid-line: a crashed
 * agent). The caller may drop them; they are never a message. */
size_t agent_reader_pending(const struct agent_reader *r);

/* ---- messages ----------------------------------------------------------- */

enum agent_msg_type {
    AGENT_MSG_UNKNOWN = 0, /* valid JSON object with an unknown "t": ignore */
    AGENT_MSG_HELLO,
    AGENT_MSG_STR,
    AGENT_MSG_STACK,
    AGENT_MSG_DELTA,
    AGENT_MSG_NOW,
    AGENT_MSG_END,
    AGENT_MSG_ERROR,
    AGENT_MSG_LOG,
    AGENT_MSG_ROLE,
    AGENT_MSG_CELL, /* the kernel's extension: a cell began or ended */
};

struct agent_msg {
    enum agent_msg_type type;
    json_t *json; /* new reference to the whole object; agent_msg_clear drops it */
    union {
        struct {
            int v;
            long long pid, ppid;
            const char *python, *executable, *cwd, *main,
                *clock;         /* borrowed from json, may be NULL */
            const json_t *argv; /* borrowed array of strings, may be NULL */
            double interval_ms;
            double mono0; /* CLOCK_MONOTONIC second of ts 0; 0 when not sent */
        } hello;
        struct {
            long long id;
            const char *s; /* borrowed */
        } str;
        struct {
            long long id;
            const json_t *fr; /* borrowed, checked: array of [int,int,int] */
        } stack;
        struct {
            double ts;
            long long samples;
            const json_t *lines, *funcs, *stacks, *threads; /* borrowed arrays or NULL;
                                                  entries checked by agent_wire_*_entry */
        } delta;
        struct {
            double ts;
            const json_t *threads; /* borrowed array or NULL */
        } now;
        struct {
            double ts;
            const char *reason; /* borrowed, "" if absent */
        } end;
        struct {
            const char *msg;   /* borrowed, "" if absent */
            const char *level; /* log only; "info" if absent */
        } text;
        struct {
            const char *name; /* borrowed, non-empty */
        } role;
        struct {
            int begin;        /* 1: "ev":"begin", 0: "ev":"end" */
            const char *file; /* borrowed: the cell's file, as the code objects name it */
            double wall_s;    /* end only: the execution's wall seconds (0 if absent) */
        } cell;
    } u;
};

/* Decode one line. On success fills m (caller calls agent_msg_clear) and
 * returns 0. On failure returns -EINVAL (bad JSON, not an object, missing "t",
 * a known field of the wrong type) with a reason in err (may be NULL), and m
 * holds nothing. */
int agent_msg_parse(const char *line, size_t len, struct agent_msg *m, char *err, size_t errlen);
void agent_msg_clear(struct agent_msg *m);

/* A frame [file_id, name_id, line] from `stack.fr` or `now.threads[].fr`. */
struct agent_frame {
    long long file, name;
    int line;
};
/* Checks one frame (borrowed). 0 or -EINVAL. */
int agent_wire_frame(const json_t *fr, struct agent_frame *out);

/* One entry of delta.lines / delta.funcs. */
struct agent_line_entry {
    long long file; /* "f" */
    long long fn;   /* "fn", funcs only (0 for lines) */
    int line;       /* "l" for lines; "first" for funcs */
    int last;       /* "last", funcs only */
    struct agent_stats st;
};
int agent_wire_line_entry(const json_t *e, struct agent_line_entry *out); /* e borrowed */
int agent_wire_func_entry(const json_t *e, struct agent_line_entry *out); /* e borrowed */

/* One entry of delta.stacks: [stack_id, samples, seconds, tid]. tid 0: the
 * samples of threads not told apart (past AGENT_STACK_THREADS), and what an
 * entry of three elements (an older agent) means. */
struct agent_stack_entry {
    long long id, samples;
    double seconds;
    long long tid;
};
int agent_wire_stack_entry(const json_t *e, struct agent_stack_entry *out);

/* One entry of delta.threads. name borrowed from e ("" if absent). */
struct agent_thread_entry {
    long long tid;
    const char *name;
    double py, nat, sys;
};
int agent_wire_thread_entry(const json_t *e, struct agent_thread_entry *out);

/* ---- a checked message read typed ----------------------------------------
 * What a consumer of a message agent_msg_parse accepted (the profile store)
 * reads instead of its JSON: the entries of a delta and the frames of a
 * stack decoded one at a time by the checks above (nothing allocated, the
 * consumer sees C values only), a line entry's kept-MB points and the
 * delta's `mem` totals. m is borrowed; so are strings read from it. */
enum agent_msg_array {
    AGENT_ARR_LINES,
    AGENT_ARR_FUNCS,
    AGENT_ARR_STACKS,
    AGENT_ARR_THREADS,
};
/* Entries in one array of a delta (0 when absent or m is not a delta);
 * AGENT_ARR_THREADS counts a `now`'s threads too. */
size_t agent_msg_count(const struct agent_msg *m, enum agent_msg_array arr);
/* Entry i of lines / funcs / stacks / threads: 0, or -EINVAL when it fails
 * its check (or i is past the end). A thread's name is borrowed from m. */
int agent_msg_line(const struct agent_msg *m, size_t i, struct agent_line_entry *out);
int agent_msg_func(const struct agent_msg *m, size_t i, struct agent_line_entry *out);
int agent_msg_stack(const struct agent_msg *m, size_t i, struct agent_stack_entry *out);
int agent_msg_thread(const struct agent_msg *m, size_t i, struct agent_thread_entry *out);

/* One point of a line's `kept_pts`: its kept MB at ts, relative to what it
 * kept before the delta (docs/memory.md). */
struct agent_kept_pt {
    double ts, mb;
};
#define AGENT_WIRE_MAX_KEPT_PTS 1024 /* elements of one `kept_pts` looked at */
/* The kept-MB points of line entry i into out[0..ret) (at most n): of the
 * first AGENT_WIRE_MAX_KEPT_PTS elements, those that are [number, number];
 * malformed ones are skipped (the points are optional). */
size_t agent_msg_kept_pts(const struct agent_msg *m, size_t i, struct agent_kept_pt *out, size_t n);

/* A delta's `mem`: the process's footprint and its peak so far. */
struct agent_msg_mem {
    double live_mb, peak_mb;
    long long peak_file; /* string id of the peak's file, 0: unknown */
    int peak_line;       /* 0: unknown */
};
/* 0 and *out filled, or -ENOENT when the delta has no `mem` with numbers
 * live_mb and peak_mb (a peak place that is not a valid id / line is 0). */
int agent_msg_mem(const struct agent_msg *m, struct agent_msg_mem *out);

/* Frames of a stack message: how many, and frame i (0 or -EINVAL). */
size_t agent_msg_nframes(const struct agent_msg *m);
int agent_msg_frame(const struct agent_msg *m, size_t i, struct agent_frame *out);

/* Thread i of a `now` (strings borrowed from m, NULL when absent or not a
 * string; numbers of the wrong type read as absent). */
struct agent_now_entry {
    long long tid;
    int has_tid;
    const char *name, *state;
    double since_s;
    int has_since;
    size_t nframes; /* entries of its `fr` */
};
/* 0, or -EINVAL when thread i is not an object (or past the end). */
int agent_msg_now_thread(const struct agent_msg *m, size_t i, struct agent_now_entry *out);
/* Frame j of thread i of a `now`: 0, or -EINVAL (a bad frame: skip it). */
int agent_msg_now_frame(const struct agent_msg *m, size_t i, size_t j, struct agent_frame *out);

#endif
