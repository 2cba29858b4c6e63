/* agent_emit.h: the writer of the agent wire format (docs/agent-protocol.md),
 * one builder per message, every key from the one table (agent_keys.h): no
 * key is a literal in a producer. Shared by the in-process agent
 * (profiler/) and hotline attach, so that what one sends the other sends
 * the same way, and a new row of the table reaches both.
 *
 * Pure code (agent_emit.c): it appends to a caller's agent_buf_t (bounded:
 * agent_buf.h), no jansson, no I/O, no state outside the caller's structs.
 * A message is written whole or not at all: when the buffer refuses a
 * write, what the builder had written of that message is taken back, the
 * builder returns the error (-ENOSPC, -ENOMEM) and the buffer holds only
 * whole lines. Numbers that are not finite are written as 0 (JSON has no
 * NaN). Strings are written as valid UTF-8 (agent_buf_json_str).
 *
 * The one-call builders (hello, str, stack, end, log, error) return 0 or
 * the error. delta and now are built in steps (begin, entries, end), with
 * the first error kept and returned by the end call.
 */
#ifndef HOTLINE_AGENT_EMIT_H
#define HOTLINE_AGENT_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "agent_buf.h"
#include "agent_keys.h"

/* ---- hello, str, stack, end, log, error ------------------------------- */

/* The in-process agent's hello is written by Python (_hotline_agent/
 * _config.py, the same keys); this one is for a producer in C. Strings are
 * borrowed; a NULL string is left out. */
struct agent_hello {
    long long pid, ppid;
    const char *python, *executable, *cwd, *main, *clock;
    const char *const *argv; /* argc strings, borrowed */
    int argc;
    double interval_ms;
    double mono0; /* CLOCK_MONOTONIC second of ts 0; left out when <= 0 */
};
int agent_emit_hello(agent_buf_t *b, const struct agent_hello *h);

/* {"t":"str","id":id,"s":s[0..n)}; s borrowed. */
int agent_emit_str(agent_buf_t *b, long long id, const char *s, size_t n);

/* A frame as the wire carries it: ids of the file and function strings. */
struct agent_emit_frame {
    long long file, name;
    int line;
};
/* {"t":"stack","id":id,"fr":[[file,name,line],...]}, frames innermost
 * first; fr borrowed. */
int agent_emit_stack(agent_buf_t *b, long long id, const struct agent_emit_frame *fr, int n);

/* The end of a stream. stats: also samples, cost_us, late_max_ms (the
 * agent's; attach sends none). reason borrowed. */
struct agent_end {
    double ts;
    const char *reason;
    int stats;
    unsigned long long samples;
    double cost_us, late_max_ms;
};
int agent_emit_end(agent_buf_t *b, const struct agent_end *e);

/* {"t":"log","level":level,"msg":msg} (level "info", "warn", "notice") and
 * {"t":"error","msg":msg}; strings borrowed. */
int agent_emit_log(agent_buf_t *b, const char *level, const char *msg);
int agent_emit_error(agent_buf_t *b, const char *msg);

/* {"t":"role","name":name}: what the process is in a larger job ("dask
 * worker tcp://10.0.0.5:40331"), named by the program after its hello;
 * name borrowed. */
int agent_emit_role(agent_buf_t *b, const char *name);

/* ---- delta -------------------------------------------------------------- */

/* Statistics of one entry: the ones whose bit is set in has are written
 * (bit i: enum agent_stat i), n as an integer. */
struct agent_stat_vals {
    uint32_t has;
    double v[AGENT_NSTATS];
};
_Static_assert(AGENT_NSTATS <= 32, "agent_stat_vals.has holds one bit per statistic");

static inline void agent_stat_put(struct agent_stat_vals *s, enum agent_stat k, double v)
{
    s->has |= 1u << k;
    s->v[k] = v;
}

/* The arrays of a delta, in the order they are written. */
enum agent_delta_part {
    AGENT_DELTA_NONE,
    AGENT_DELTA_LINES,
    AGENT_DELTA_FUNCS,
    AGENT_DELTA_STACKS,
    AGENT_DELTA_THREADS,
    AGENT_DELTA_TOTALS /* mem, gpu: after every array */
};

/* A delta under construction (fields private to agent_emit.c). */
typedef struct {
    agent_buf_t *b; /* borrowed */
    size_t start;   /* where the message began in b */
    int rc;         /* first error, kept */
    int part;       /* enum agent_delta_part open now */
    int n;          /* entries written in it */
    int entry;      /* a line entry is open: kept_pts may follow */
    int pts;        /* points in its kept_pts (0: not opened) */
} agent_delta_t;

/* {"t":"delta","ts":ts,"samples":samples, ... Entries go in the order of
 * enum agent_delta_part (an entry of an earlier part is refused:
 * -EINVAL); each opens its array, and agent_delta_part opens one with no
 * entry (an empty array where a reader looks for one). */
void agent_delta_begin(agent_delta_t *d, agent_buf_t *b, double ts, unsigned long long samples);
void agent_delta_part(agent_delta_t *d, enum agent_delta_part part);
/* delta.lines[]: {"f":file,"l":line, stats...}. */
void agent_delta_line(agent_delta_t *d, long long file, int line, const struct agent_stat_vals *st);
/* A point [ts, mb] of the line entry just written, in its "kept_pts". */
void agent_delta_kept_pt(agent_delta_t *d, double ts, double mb);
/* delta.funcs[]: {"f":file,"fn":fn,"first":first,"last":last, stats...}. */
void agent_delta_func(agent_delta_t *d, long long file, long long fn, int first, int last,
                      const struct agent_stat_vals *st);
/* delta.stacks[]: [id, samples, seconds, tid] (tid 0: not told apart). */
void agent_delta_stack(agent_delta_t *d, long long id, unsigned long long samples, double seconds,
                       long long tid);
/* delta.threads[]: {"tid":tid,"name":name,"py":..,"nat":..,"sys":..};
 * name borrowed. */
void agent_delta_thread(agent_delta_t *d, long long tid, const char *name, double py, double nat,
                        double sys);
/* delta.mem: the process's memory totals. */
struct agent_mem_totals {
    double live_mb, peak_mb;
    long long peak_f; /* file id of the line that reached the peak, 0 none */
    int peak_l;
    unsigned long long dropped;
};
void agent_delta_mem(agent_delta_t *d, const struct agent_mem_totals *m);
/* delta.gpu: {"util":percent,"mb":MB}. */
void agent_delta_gpu(agent_delta_t *d, double util, double mb);
/* Closes the message: 0, or the first error (the message is then taken
 * back whole). */
int agent_delta_end(agent_delta_t *d);

/* ---- now ---------------------------------------------------------------- */

/* A thread's state in `now` (the categories of sampling/probe.h, same
 * numbers: the agent checks it with static_asserts). */
enum agent_state { AGENT_STATE_SYSTEM, AGENT_STATE_PYTHON, AGENT_STATE_NATIVE, AGENT_NSTATES };
/* "system", "python", "native" (static; "system" out of range). */
const char *agent_state_name(int state);

typedef struct {
    agent_buf_t *b; /* borrowed */
    size_t start;
    int rc;
    int n; /* threads written */
} agent_now_t;

/* {"t":"now","ts":ts,"threads":[ ... */
void agent_now_begin(agent_now_t *w, agent_buf_t *b, double ts);
/* {"tid","name","state","since_s","fr":[[file,name,line],...]}: frames
 * innermost first, all of them; name and fr borrowed. */
void agent_now_thread(agent_now_t *w, long long tid, const char *name, int state, double since_s,
                      const struct agent_emit_frame *fr, int nfr);
int agent_now_end(agent_now_t *w);

#endif
