/* agent.h: the profiler agent's one state struct. The agent lives inside
 * the profiled Python process; each module has its own header for its
 * interface (layers: profiler/README.md):
 *   module.c    Python entry points (start/stop/fork), owns the struct agent
 *   sampler.c   the native sampler thread: timing, time categories, charging
 *   walk.c      reading thread states, frames and code objects without the GIL
 *   memread.c   safe reads of our own memory (process_vm_readv), str decoding
 *   aggregate.c string/stack tables and per-line/func/thread deltas
 *   (protocol/agent_buf.c, agent_emit.c: the bounded output buffer, the
 *    messages written into it; sampling/: probe, charging, paths, line tables)
 *   wire.c      socket in/out, server liveness
 *   clock.h     monotonic and CPU clocks (header only)
 *   ownfd.c     descriptors checked before every use (the program may close them)
 *   memhooks.c  memory profiling; nvml.c GPU
 * No Python headers here: only walk.c, module.c and memhooks.c include Python.h.
 * Everything mutable sits in struct agent; the sampler thread is the only
 * writer after start, except the atomics named below.
 */
#ifndef HOTLINE_AGENT_H
#define HOTLINE_AGENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent_buf.h"
#include "aggregate.h"
#include "charge.h"
#include "memread.h"
#include "ownfd.h"
#include "site.h"
#include "probe.h"
#include "walk.h"

#define AGENT_MAX_THREADS 256 /* Python threads sampled per tick */
#define AGENT_MAX_LISTED 4096 /* ... chosen from this many listed (walk.c's guard) */
#define AGENT_MAX_DEPTH 128   /* frames kept per stack (innermost first) */
_Static_assert(AGENT_MAX_LISTED >= AGENT_MAX_THREADS,
               "the sampled threads are picked from the listed");
/* The "file" of a C callee's leaf frame (sampler.c, add_callee): not a
 * path, never the program's (docs/agent-protocol.md, `stack`). */
#define AGENT_NATIVE_FILE "<native>"
#define AGENT_CODE_SLOTS 16384 /* code-object cache, direct mapped */
#define AGENT_MAX_STRINGS (1 << 18)
#define AGENT_MAX_LINES (1 << 18)
#define AGENT_MAX_FUNCS (1 << 16)
#define AGENT_MAX_STACKS (1 << 16)
/* (stack, thread) weight rows; a full table charges (stack, 0). Only the
 * first AGENT_STACK_THREADS threads (agent_config.h) have rows of their own,
 * so this bounds memory (64 B a row) rather than thread churn. */
#define AGENT_MAX_STACK_W (1 << 17)
#define AGENT_OUT_SOFT (1u << 20)  /* above: keep aggregating, send no delta */
#define AGENT_OUT_HARD (64u << 20) /* above: give up profiling */

/* ---- sampler.c: per Python thread ---- */
typedef struct {
    uintptr_t tstate;
    long tid;
    unsigned gen;
    unsigned delta_seq; /* deltas emitted */
    int have_base;
    double last_wall, last_cpu, last_rq;
    int was_running;       /* at the previous sample */
    int have_stack;        /* fr/nfr and stack_frame hold a sample's reading */
    uintptr_t stack_frame; /* its innermost frame then (walk_top_frame) */
    uint64_t sample_sig;   /* innermost frame state at the previous sample (walk_probe) */
    int sample_sig_ok;
    int run_cat;   /* last running category seen (CAT_PY/CAT_NAT) */
    int state_now; /* category of the latest sample */
    agent_fd_t schedfd, statfd;
    char name[40];
    charge_pos_t pos; /* charged file (string id) and line, since when (charge.h) */
    int nfr;
    agent_frame_t fr[AGENT_MAX_DEPTH];
    /* probe window (probe.h) */
    int probe_on;
    probe_t probe;
} agent_thread_t;

struct agent {
    /* configuration (set before the thread starts, then read-only) */
    double interval_s;
    int profile_all;
    int all_threads;     /* every sample counts, idle threads' too (charge_counts) */
    int die_with_server; /* LSP mode: SIGKILL ourselves when the server goes */
    long server_pid;     /* die_with_server: the server, checked by pid (wire.c) */
    int kill_group;      /* die_with_server: we lead the program's own group (module.c) */
    unsigned long long server_start; /* its start time (/proc stat), 0 = unknown */
    int memory;                      /* memhooks.c active */
    int gpu;                         /* poll NVML (nvml.c) */
    /* `hotline attach --memory`: when the sampler ends on its own (the
     * server sent "stop" or closed the connection), it calls this (from the
     * sampler thread, no GIL) so that module.c unloads the agent on the
     * main thread; NULL otherwise */
    void (*on_own_end)(struct agent *);
    void *release_cb;     /* PyObject*, owned (module.c): run after that unload */
    unsigned long serial; /* module.c: which start this is */
    char **include, **exclude;
    int ninclude, nexclude;
    char *hello;                                /* first line, without newline */
    void *interp;                               /* PyInterpreterState*, borrowed */
    double t0;                                  /* CLOCK_MONOTONIC at start */
    long tid_off;                               /* walk_tid_offset(), 3.9/3.10 only */
    uintptr_t gil_locked_addr, gil_holder_addr; /* walk_gil_init() */

    /* cross-thread */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int stop_req; /* 1 = stop asked by the program */
    atomic_int alive;    /* sampler thread running */
    int started;         /* under mu: the sampler thread set up its fd table */
    int own_table;       /* the sampler thread has a descriptor table of its own */
    int shared_table;    /* HOTLINE_SHARED_FDS=1 (tests): do not take one */
    char stop_reason[16];
    _Atomic(char *) role; /* set_role(): owned, taken and sent by the sampler */
    /* a request of the program's threads (sampler_request), under mu:
     * req_kind != 0 while one waits for the sampler thread to serve it */
    int req_kind;
    char *req_arg;     /* owned while pending; NULL: none (tee off) */
    int req_rc;        /* the served request's result */
    unsigned req_done; /* requests served so far */
    int req_waiters;   /* threads in sampler_request: a is not freed under them */

    /* sampler-only from here */
    agent_fd_t fd;
    int is_socket;
    int closed;          /* connection over: nothing is sent or read any more */
    int lost;            /* ... because the program closed our descriptor */
    int released;        /* the server sent "stop": no longer die with it */
    char sock_path[108]; /* to tell the server why when lost */
    agent_buf_t out;
    int tee_on, tee_fd; /* SAMPLER_REQ_TEE: what goes out is also written to tee_fd */
    size_t tee_mark;    /* out[0..tee_mark) is in the tee file already */
    char inbuf[65536];
    size_t inlen;
    double now_hz, next_now, next_delta;
    uint64_t rng;
    unsigned delta_seq; /* deltas emitted */
    uint32_t samples_delta;
    double last_proc_cpu, last_self_cpu;
    double last_tick; /* `now` of the previous tick (sampler start before the first) */
    int have_proc_base;
    unsigned gen;

    agg_strings_t strs;
    int8_t *file_flag; /* per string id: -1 unknown, 0 no, 1 profiled */
    int file_flag_cap;
    agg_table_t lines, funcs, threads, stacks;
    agg_table_t stack_w;    /* (stack id, tid or 0) -> samples, seconds */
    agent_code_t *codes;    /* AGENT_CODE_SLOTS */
    mem_snap_t *snap;       /* walk_stack's page windows (memread.h), owned; may be NULL */
    site_hist_t *site_hist; /* SITE_HIST_SLOTS: what each call site did (site.h) */
    int native_file_id;     /* string id of AGENT_NATIVE_FILE, 0 until used */

    agent_thread_t *th[AGENT_MAX_THREADS];
    int nth;
    /* more Python threads than AGENT_MAX_THREADS (sampler.c, pick_threads):
     * each listed thread's CPU clock at the previous tick, by tid (two
     * tables, this tick's and the last, owned; NULL until needed), the
     * threads listed (AGENT_MAX_LISTED, owned; NULL until the first tick),
     * and how many left out in a tick tell the stream again */
    struct agent_seen *seen, *seen_prev;
    walk_thread_t *listed;
    int drop_warn_at;

    /* measurements for docs/tests */
    double cost_s;
    double emit_cost_s; /* CPU of mem_emit: the sampled allocations replayed */
    double late_max;    /* worst wake-up delay of the sampler, seconds */
    uint64_t ticks, thread_samples;
    int mem_errors;
    uint64_t probe_stats[3]; /* probes: moved (py), frozen+cpu (nat), idle */
    uint64_t site_stats[3];  /* samples decided by their call site: py, nat; none (site.h) */
    uint64_t asleep_reuse;   /* thread samples that reused an asleep thread's last reading */
};
typedef struct agent agent_t;

#endif
