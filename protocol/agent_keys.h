/* agent_keys: every key of the agent -> server wire format
 * (docs/agent-protocol.md), header only: the agent (which links nothing of
 * the server) writes its messages from these tables, the decoder
 * (agent_wire.c) reads with them, and tests/run/test_agent_keys.c fails on a
 * key an agent emits that is not listed here.
 *
 * Three tables:
 *   AGENT_PLACES  the message types ("t") and the entries inside them
 *   AGENT_STATS   the per-line / per-function statistics (delta entries)
 *   AGENT_KEYS    every other key, with the places it may appear in
 * Adding a field to the wire is one row here. */
#ifndef HOTLINE_AGENT_KEYS_H
#define HOTLINE_AGENT_KEYS_H

#include <stddef.h>

#define AGENT_WIRE_VERSION 1 /* `v` of hello */

/* ---- statistics table ---------------------------------------------------
 * X(ENUM, wire key in delta entries, key in the saved profile, merge rule)
 * merge rule: AGENT_MERGE_SUM adds deltas, AGENT_MERGE_MAX keeps the max. */
enum agent_merge { AGENT_MERGE_SUM, AGENT_MERGE_MAX, AGENT_MERGE_DERIVED };
/* AGENT_MERGE_DERIVED: computed from the other fields after every merge
 * (agent_stats_derive); a value read from the wire or JSON is replaced.
 * Rows after N (memory, GPU) are left out of the JSON when 0. */
#define AGENT_STATS(X)                                                                             \
    X(PY, "py", "python_s", AGENT_MERGE_SUM)                                                       \
    X(NAT, "nat", "native_s", AGENT_MERGE_SUM)                                                     \
    X(SYS, "sys", "system_s", AGENT_MERGE_SUM)                                                     \
    X(CPU, "cpu", "cpu_s", AGENT_MERGE_SUM)                                                        \
    X(N, "n", "samples", AGENT_MERGE_SUM)                                                          \
    X(ALLOC, "alloc_mb", "alloc_mb", AGENT_MERGE_SUM)                                              \
    X(FREED, "freed_mb", "freed_mb", AGENT_MERGE_SUM)                                              \
    X(KEPT, "kept_mb", "kept_mb", AGENT_MERGE_DERIVED)                                             \
    X(PEAK, "peak_mb", "peak_mb", AGENT_MERGE_MAX)                                                 \
    X(PYALLOC, "pyalloc_mb", "python_alloc_mb", AGENT_MERGE_SUM)                                   \
    X(PYFRAC, "python_alloc_fraction", "python_alloc_fraction", AGENT_MERGE_DERIVED)               \
    X(COPY, "copy_mb", "copy_mb", AGENT_MERGE_SUM)                                                 \
    X(COPYRATE, "copy_mb_s", "copy_mb_s", AGENT_MERGE_DERIVED)                                     \
    X(GPUBUSY, "gpu_busy_s", "gpu_busy_s", AGENT_MERGE_SUM)                                        \
    X(GPUPCT, "gpu_percent", "gpu_percent", AGENT_MERGE_DERIVED)                                   \
    X(GPUMB, "gpu_mb", "gpu_mb", AGENT_MERGE_MAX)

enum agent_stat {
#define AGENT__ENUM(e, w, j, m) AGENT_STAT_##e,
    AGENT_STATS(AGENT__ENUM)
#undef AGENT__ENUM
        AGENT_NSTATS
};
/* delta.threads[] entries carry the first three (AGENT_PLACES' THREAD) */
_Static_assert(AGENT_STAT_PY == 0 && AGENT_STAT_NAT == 1 && AGENT_STAT_SYS == 2,
               "the time categories are the first statistics");

/* ---- places -------------------------------------------------------------
 * X(ENUM, value of "t" for a message, NULL for an entry inside one) */
#define AGENT_PLACES(X)                                                                            \
    X(HELLO, "hello")                                                                              \
    X(STR, "str")                                                                                  \
    X(STACK, "stack")                                                                              \
    X(DELTA, "delta")                                                                              \
    X(NOW, "now")                                                                                  \
    X(END, "end")                                                                                  \
    X(ERROR, "error")                                                                              \
    X(LOG, "log")                                                                                  \
    X(ROLE, "role")                                                                                \
    X(CELL, "cell")     /* a notebook cell began or ended (the kernel's extension) */              \
    X(LINE, NULL)       /* delta.lines[]: AGENT_STATS keys too */                                  \
    X(FUNC, NULL)       /* delta.funcs[]: AGENT_STATS keys too */                                  \
    X(THREAD, NULL)     /* delta.threads[]: the py/nat/sys stats too */                            \
    X(MEM, NULL)        /* delta.mem: the process's memory totals */                               \
    X(GPU, NULL)        /* delta.gpu: the process's GPU totals */                                  \
    X(NOW_THREAD, NULL) /* now.threads[] */

enum agent_place {
#define AGENT__PLACE(e, t) AGENT_IN_##e,
    AGENT_PLACES(AGENT__PLACE)
#undef AGENT__PLACE
        AGENT_NPLACES
};
_Static_assert(AGENT_NPLACES <= 32, "AGENT_AT: one bit of an unsigned per place");
#define AGENT_AT(p) (1u << AGENT_IN_##p)
#define AGENT_AT_MSGS                                                                              \
    (AGENT_AT(HELLO) | AGENT_AT(STR) | AGENT_AT(STACK) | AGENT_AT(DELTA) | AGENT_AT(NOW) |         \
     AGENT_AT(END) | AGENT_AT(ERROR) | AGENT_AT(LOG) | AGENT_AT(ROLE) | AGENT_AT(CELL))

/* ---- other keys ---------------------------------------------------------
 * X(ENUM, key, places: AGENT_AT(...) bits) */
#define AGENT_KEYS(X)                                                                              \
    X(T, "t", AGENT_AT_MSGS)                                                                       \
    X(V, "v", AGENT_AT(HELLO))                                                                     \
    X(PID, "pid", AGENT_AT(HELLO))                                                                 \
    X(PPID, "ppid", AGENT_AT(HELLO))                                                               \
    X(PYTHON, "python", AGENT_AT(HELLO))                                                           \
    X(EXECUTABLE, "executable", AGENT_AT(HELLO))                                                   \
    X(ARGV, "argv", AGENT_AT(HELLO))                                                               \
    X(CWD, "cwd", AGENT_AT(HELLO))                                                                 \
    X(MAIN, "main", AGENT_AT(HELLO))                                                               \
    X(INTERVAL_MS, "interval_ms", AGENT_AT(HELLO))                                                 \
    X(CLOCK, "clock", AGENT_AT(HELLO))                                                             \
    X(MONO0, "mono0", AGENT_AT(HELLO))                                                             \
    X(ID, "id", AGENT_AT(STR) | AGENT_AT(STACK))                                                   \
    X(S, "s", AGENT_AT(STR))                                                                       \
    X(FR, "fr", AGENT_AT(STACK) | AGENT_AT(NOW_THREAD))                                            \
    X(TS, "ts", AGENT_AT(DELTA) | AGENT_AT(NOW) | AGENT_AT(END))                                   \
    X(SAMPLES, "samples", AGENT_AT(DELTA) | AGENT_AT(END))                                         \
    X(LINES, "lines", AGENT_AT(DELTA))                                                             \
    X(FUNCS, "funcs", AGENT_AT(DELTA))                                                             \
    X(STACKS, "stacks", AGENT_AT(DELTA))                                                           \
    X(THREADS, "threads", AGENT_AT(DELTA) | AGENT_AT(NOW))                                         \
    X(MEM, "mem", AGENT_AT(DELTA))                                                                 \
    X(GPU, "gpu", AGENT_AT(DELTA))                                                                 \
    X(F, "f", AGENT_AT(LINE) | AGENT_AT(FUNC))                                                     \
    X(L, "l", AGENT_AT(LINE))                                                                      \
    X(KEPT_PTS, "kept_pts", AGENT_AT(LINE))                                                        \
    X(FN, "fn", AGENT_AT(FUNC))                                                                    \
    X(FIRST, "first", AGENT_AT(FUNC))                                                              \
    X(LAST, "last", AGENT_AT(FUNC))                                                                \
    X(TID, "tid", AGENT_AT(THREAD) | AGENT_AT(NOW_THREAD))                                         \
    X(NAME, "name", AGENT_AT(THREAD) | AGENT_AT(NOW_THREAD) | AGENT_AT(ROLE))                      \
    X(STATE, "state", AGENT_AT(NOW_THREAD))                                                        \
    X(SINCE_S, "since_s", AGENT_AT(NOW_THREAD))                                                    \
    X(LIVE_MB, "live_mb", AGENT_AT(MEM))                                                           \
    X(PEAK_MB, "peak_mb", AGENT_AT(MEM))                                                           \
    X(PEAK_F, "peak_f", AGENT_AT(MEM))                                                             \
    X(PEAK_L, "peak_l", AGENT_AT(MEM))                                                             \
    X(DROPPED, "dropped", AGENT_AT(MEM))                                                           \
    X(UTIL, "util", AGENT_AT(GPU))                                                                 \
    X(MB, "mb", AGENT_AT(GPU))                                                                     \
    X(REASON, "reason", AGENT_AT(END))                                                             \
    X(COST_US, "cost_us", AGENT_AT(END))                                                           \
    X(LATE_MAX_MS, "late_max_ms", AGENT_AT(END))                                                   \
    X(LEVEL, "level", AGENT_AT(LOG))                                                               \
    X(MSG, "msg", AGENT_AT(ERROR) | AGENT_AT(LOG))                                                 \
    X(EV, "ev", AGENT_AT(CELL))                                                                    \
    X(FILE, "file", AGENT_AT(CELL))                                                                \
    X(WALL_S, "wall_s", AGENT_AT(CELL))

/* ---- requests: server -> agent -------------------------------------------
 * {"t":"now","hz":N}: `now` snapshots N times a second (0: none);
 * {"t":"stop"}: end the stream (the agent's last delta, then `end`). */
#define AGENT_REQ_NOW "now"
#define AGENT_REQ_HZ "hz"
#define AGENT_REQ_STOP "stop"

enum agent_key {
#define AGENT__KEY(e, k, at) AGENT_KEY_##e,
    AGENT_KEYS(AGENT__KEY)
#undef AGENT__KEY
        AGENT_NKEYS
};

/* The strings, by enum (borrowed, static; "" out of range). */
static inline const char *agent_key_name(enum agent_key k)
{
    static const char *const names[] = {
#define AGENT__KEY(e, k, at) k,
        AGENT_KEYS(AGENT__KEY)
#undef AGENT__KEY
    };
    _Static_assert(sizeof names / sizeof *names == AGENT_NKEYS, "one name per key");
    return (unsigned)k < AGENT_NKEYS ? names[k] : "";
}

/* AGENT_AT bits of the places the key may appear in. */
static inline unsigned agent_key_places(enum agent_key k)
{
    static const unsigned at[] = {
#define AGENT__KEY(e, k, at) at,
        AGENT_KEYS(AGENT__KEY)
#undef AGENT__KEY
    };
    _Static_assert(sizeof at / sizeof *at == AGENT_NKEYS, "one place set per key");
    return (unsigned)k < AGENT_NKEYS ? at[k] : 0;
}

/* The "t" of a message place; NULL for an entry place. */
static inline const char *agent_place_type(enum agent_place p)
{
    static const char *const types[] = {
#define AGENT__PLACE(e, t) t,
        AGENT_PLACES(AGENT__PLACE)
#undef AGENT__PLACE
    };
    _Static_assert(sizeof types / sizeof *types == AGENT_NPLACES, "one type per place");
    return (unsigned)p < AGENT_NPLACES ? types[p] : NULL;
}

/* The wire key of a statistic (same string as agent_stat_descs[s].wire,
 * without linking agent_wire.c). */
static inline const char *agent_stat_wire(enum agent_stat s)
{
    static const char *const wire[] = {
#define AGENT__STAT(e, w, j, m) w,
        AGENT_STATS(AGENT__STAT)
#undef AGENT__STAT
    };
    _Static_assert(sizeof wire / sizeof *wire == AGENT_NSTATS, "one wire key per statistic");
    return (unsigned)s < AGENT_NSTATS ? wire[s] : "";
}

#endif
