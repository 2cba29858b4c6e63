/* agent.h: the profiler agent's one state struct and the seams between its
 * files. The agent lives inside the profiled Python process:
 *   module.c    Python entry points (start/stop/fork), owns the struct agent
 *   sampler.c   the native sampler thread: timing, time categories, charging
 *   walk.c      reading thread states, frames and code objects without the GIL
 *   memread.c   safe reads of our own memory (process_vm_readv), str decoding
 *   aggregate.c string/stack tables and per-line/func/thread deltas
 *   wire.c      output buffer, JSON helpers, socket in/out, server liveness
 *   ownfd.c     descriptors checked before every use (the program may close them)
 *   linetable.c offset -> line decoders
 * No Python headers here: only walk.c and module.c include Python.h.
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

#include "probe.h"

#define AGENT_MAX_THREADS 256    /* Python threads sampled per tick */
#define AGENT_MAX_DEPTH 128      /* frames kept per stack (innermost first) */
#define AGENT_CODE_SLOTS 16384   /* code-object cache, direct mapped */
#define AGENT_MAX_STRINGS (1 << 18)
#define AGENT_MAX_LINES (1 << 18)
#define AGENT_MAX_FUNCS (1 << 16)
#define AGENT_MAX_STACKS (1 << 16)
#define AGENT_OUT_SOFT (1u << 20) /* above: keep aggregating, send no delta */
#define AGENT_OUT_HARD (64u << 20) /* above: give up profiling */


/* ---- ownfd.c: a descriptor of ours, with what it referred to when opened ---- */
typedef struct {
    int fd; /* -1: none, or no longer ours (never touched again) */
    dev_t dev;
    ino_t ino;
} agent_fd_t;

void ownfd_set(agent_fd_t *o, int fd); /* adopts fd, just opened (none when fd < 0) */
int ownfd_get(agent_fd_t *o);          /* fd while it is still ours, else -1 (forgotten) */
void ownfd_close(agent_fd_t *o);       /* closes it only while it is still ours */
/* The calling thread gets a descriptor table of its own holding only keep
 * (and /dev/null on 0-2); 1, or 0 when refused (the table stays shared). */
int ownfd_private_table(int keep);

/* ---- wire.c: bounded output buffer and JSON helpers ---- */
typedef struct {
    char *p;
    size_t len, cap, max;
    int overflow; /* a write would have passed max */
} agent_buf_t;

void buf_free(agent_buf_t *b);
int buf_add(agent_buf_t *b, const char *s, size_t n);
int buf_printf(agent_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_json_str(agent_buf_t *b, const char *s, size_t n); /* quoted, escaped */

/* ---- aggregate.c: one keyed table used for lines, funcs, threads, stacks ---- */
typedef struct {
    uint32_t k[3];
    uint32_t extra;          /* funcs: last line; threads: name string id */
    double py, nat, sys, cpu, w;
    uint32_t n;
    uint8_t dirty;
} agg_row_t;

typedef struct {
    agg_row_t *rows;
    int nrows, caprows, maxrows;
    int *slots; /* row index + 1, 0 = empty */
    int nslots;
    int *dirty;
    int ndirty;
} agg_table_t;

typedef struct {
    char **s;
    uint32_t *hash;
    int n, cap;
    int *slots;
    int nslots;
    size_t bytes;
} agg_strings_t;

/* ---- walk.c: code-object cache entry ---- */
typedef struct {
    uintptr_t addr, filename, qualname, linetable; /* validation keys */
    int firstline, lastline;
    int file_id, name_id;
    uint8_t profiled, valid;
    uint8_t *tab; /* owned copy of the line table */
    size_t tab_n;
} agent_code_t;

typedef struct {
    int file_id, name_id, line, first, last;
    int profiled;
} agent_frame_t;

typedef struct {
    uintptr_t tstate;
    long tid;
} walk_thread_t;

/* What resolving a frame needs of a code object, copied while it is alive
 * (walk_code_copy) for samples resolved after it is freed (memhooks.c). */
typedef struct {
    uintptr_t addr;
    char *file, *name; /* UTF-8, file normalised */
    uint8_t *tab;
    size_t tab_n;
    int firstline;
} walk_code_copy_t;

/* ---- sampler.c: per Python thread ---- */
typedef struct {
    uintptr_t tstate;
    long tid;
    unsigned gen;
    unsigned delta_seq; /* deltas emitted */
    int have_base;
    double last_wall, last_cpu, last_rq;
    int was_running; /* at the previous sample */
    int run_cat;   /* last running category seen (CAT_PY/CAT_NAT) */
    int state_now; /* category of the latest sample */
    agent_fd_t schedfd, statfd;
    char name[40];
    int cur_file, cur_line;
    double since;
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
    int die_with_server; /* LSP mode: SIGKILL ourselves when the server goes */
    long server_pid;     /* die_with_server: the server, checked by pid (wire.c) */
    int kill_group;      /* die_with_server: we lead the program's own group (module.c) */
    unsigned long long server_start; /* its start time (/proc stat), 0 = unknown */
    int memory;          /* memhooks.c active */
    int gpu;             /* poll NVML (nvml.c) */
    char **include, **exclude;
    int ninclude, nexclude;
    char *hello; /* first line, without newline */
    void *interp; /* PyInterpreterState*, borrowed */
    double t0;    /* CLOCK_MONOTONIC at start */
    long tid_off; /* walk_tid_offset(), 3.9/3.10 only */
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

    /* sampler-only from here */
    agent_fd_t fd;
    int is_socket;
    int closed; /* connection over: nothing is sent or read any more */
    int lost;   /* ... because the program closed our descriptor */
    int released; /* the server sent "stop": no longer die with it */
    char sock_path[108]; /* to tell the server why when lost */
    agent_buf_t out;
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
    agent_code_t *codes; /* AGENT_CODE_SLOTS */

    agent_thread_t *th[AGENT_MAX_THREADS];
    int nth;

    /* measurements for docs/tests */
    double cost_s;
    double late_max; /* worst wake-up delay of the sampler, seconds */
    uint64_t ticks, thread_samples;
    int mem_errors;
    uint64_t probe_stats[3]; /* probes: moved (py), frozen+cpu (nat), idle */
};
typedef struct agent agent_t;

/* memread.c */
int mem_read(uintptr_t addr, void *dst, size_t n); /* 0 or -errno */
int mem_check(void);                                /* 0 if usable */

/* aggregate.c */
int agg_intern(agent_t *a, const char *s, size_t n); /* id > 0 or -errno */
const char *agg_string(agent_t *a, int id);          /* borrowed */
int agg_get(agg_table_t *t, uint32_t k0, uint32_t k1, uint32_t k2, int *created);
void agg_mark(agg_table_t *t, int row);
int agg_stack_id(agent_t *a, const agent_frame_t *fr, int n); /* id > 0 or <0 */
void agg_free(agent_t *a);
int agg_emit_delta(agent_t *a, double ts);

/* walk.c */
int walk_threads(agent_t *a, walk_thread_t *out, int cap);
int walk_stack(agent_t *a, uintptr_t tstate, agent_frame_t *out, int cap);
int walk_probe(uintptr_t tstate, uint64_t *sig);
int walk_frame(agent_t *a, uintptr_t code, intptr_t instr, agent_frame_t *out);
int walk_code_copy(uintptr_t code, walk_code_copy_t *out); /* 0 or -errno; any thread */
int walk_frame_copy(agent_t *a, const walk_code_copy_t *c, intptr_t instr, agent_frame_t *out);
void walk_code_copy_free(walk_code_copy_t *c);
long walk_tid_offset(void); /* >0 or -errno */
void walk_gil_init(agent_t *a); /* with the GIL held */
int walk_layout_check(char *why, size_t n); /* 0 or -EPROTO (why says what) */
uintptr_t walk_gil_holder(agent_t *a); /* tstate, 0 = free, 1 = unknown */
void walk_free(agent_t *a);

/* sampler.c */
int sampler_start(agent_t *a);  /* 0 or -errno; a is borrowed by the thread */
void sampler_stop(agent_t *a, const char *reason); /* joins */
double sampler_mono(void);

/* memhooks.c: memory profiling (docs/memory.md). mem_start with the GIL
 * held before sampler_start; mem_stop with the GIL held after sampler_stop.
 * mem_emit / mem_thread_ignore: sampler thread only. */
int mem_start(agent_t *a, double mean_kb); /* 0 or -errno */
void mem_stop(agent_t *a);
void mem_emit(agent_t *a, double ts);
void mem_thread_ignore(void);
void mem_after_fork(void); /* child: forget the parent's samples */
int mem_shim_loaded(void);  /* 1 when the LD_PRELOAD shim registered */
const char *mem_mode(void); /* how Python allocations are seen: "wrappers", "windows", "shim", "off" */
/* sampler thread: open (1) / close (0) a window of the Python-domain hooks,
 * when mem_windows_on() (docs/memory.md, "Windows") */
int mem_windows_on(void);
void mem_window(agent_t *a, int open);

/* nvml.c: GPU through NVML (dlopen), sampler thread only */
void gpu_emit(agent_t *a, double ts);
int gpu_available(void);

/* wire.c */
int wire_open(agent_t *a, const char *path, int is_socket); /* 0 or -errno */
void wire_flush(agent_t *a);            /* non-blocking */
void wire_drain(agent_t *a, double timeout_s); /* at the end */
int wire_poll_in(agent_t *a);           /* handles now/stop; 1 = stop asked */
void wire_close(agent_t *a);            /* closes our descriptor only if still ours */
void wire_report_lost(agent_t *a, double ts); /* the program closed it: say so to the server */
void wire_server_init(agent_t *a, long pid); /* LSP mode: the server to die with */
void wire_server_check(agent_t *a);     /* LSP mode: SIGKILL us if the server is gone */

#endif
