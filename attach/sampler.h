/* sampler: `hotline attach`'s sampler, a step function. One tick of one
 * process (attach_sampler_tick) reads its Python threads and their frames
 * (attach.h), probes each running thread (sampling/probe.h decides Python
 * or native, fed with what /proc says: per-thread state and CPU, from perf
 * task clocks where the kernel allows, else schedstat, which moves only at
 * scheduler ticks; the process CPU clock, exact, stands in for the
 * thread's while it is the only one running), charges the interval by the
 * agent's own rule (sampling/charge.h) and writes the messages an agent
 * would send (hello, str, stack, delta, now, end) with the agent's own
 * builders (protocol/agent_emit.h) into a sink (sink.h). Each process
 * sampled is what one agent is to a run: its own hello, ids and stream.
 * Which processes are sampled is the caller's (engine.c, children.c). */
#ifndef HOTLINE_ATTACH_SAMPLER_H
#define HOTLINE_ATTACH_SAMPLER_H

#include <signal.h>
#include <time.h>

#include <jansson.h>

#include "agent_buf.h"
#include "attach.h"
#include "charge.h"
#include "marimo.h"
#include "frames.h"
#include "probe.h"
#include "sink.h"

#define ATTACH_MAX_PROCS 64    /* processes sampled at once, the attached one included */
#define ATTACH_MAX_PATTERNS 64 /* --include / --exclude each */

struct attach_sthread {
    long tid;
    int have_base, run_cat;
    int perf_fd; /* the thread's task-clock counter, or -1 */
    double last_wall, last_cpu;
    probe_t probe;
    /* the C callee at its last sample (attach_site), "" when none: the
     * stack's leaf when the stack read then is still in that frame and line */
    char callee[ATTACH_CALLEE_MAX];
    uint64_t callee_frame;
    int callee_line;
    char name[32];    /* MainThread, or the thread's comm */
    charge_pos_t pos; /* charged line now, and since when (`now`) */
    unsigned gen;     /* the last tick that sampled it (records of others go) */
};

/* One process sampled: the attached one, or a child followed. */
struct attach_sproc {
    struct attach_proc ap;
    pid_t ppid;
    void *conn;            /* its stream in the sink (owned by the sink) */
    agent_buf_t out;       /* its lines not yet in the sink (whole lines) */
    json_t *strs, *stacks; /* string -> id, stack key -> id (owned) */
    long long next_str, next_stack;
    struct attach_sthread th[ATTACH_MAX_THREADS];
    int nth;
    unsigned gen;     /* ticks */
    int drop_warn_at; /* threads left out in a tick that tell the user again */
    clockid_t proc_clock;
    double last_tick;
    int now_hz;
    double last_now;
    int lost; /* a write of this tick failed: its delta and `now` are not written */
    int gone; /* its `end` is sent */
    unsigned long long arg_start; /* /proc/PID/stat's: changes at an exec */
    unsigned long long start;     /* its start time: another at a reused pid */
    int closed;                   /* exec'd into no Python (yet): reopened at the next ticks */
    /* the call site (frames.h): tried at its first tick once open (the
     * opcode tables from its interpreter), and what each call or operator
     * site's conclusive windows said (site.h) */
    int site_tried;
    site_hist_t site_hist[SITE_HIST_SLOTS];
    /* marimo's temporary cell files mapped to the notebook (marimo.h):
     * looked for at the first cell frame, checked again each second */
    struct marimo_nb *nb; /* owned, or NULL */
    /* a marimo server's `marimo` console script: not the user's code, so
     * that its kernel's cells, not the server's wait, are the live line */
    char entry[1024];
    int entry_checked;
    int nb_tried;
    double nb_checked;
    struct timespec nb_mtime;
    long long nb_size;
};

struct attach_sampler {
    struct attach_sink *sink;    /* borrowed */
    volatile sig_atomic_t *stop; /* set: stop (signals; the sink's reader gone or asking) */
    const char *procfs;          /* /proc's root (NULL: /proc) */
    /* prints "hotline: LINE" on stderr, escaped for a terminal (the
     * target's names are its user's choice); NULL: as it is */
    void (*say)(const char *line);
    struct attach_sproc *procs[ATTACH_MAX_PROCS]; /* [0]: the attached process (owned) */
    int nprocs;
    int children;    /* --children (what the line past the cap on told lines says) */
    int all_threads; /* --all-threads: idle threads' samples count too (charge.h) */
    int told;        /* lines sent to the sink's reader (ATTACH_MAX_TOLD) */
    double interval_ms;
    double t0;
    double budget; /* seconds a probe window may last */
    long long dropped;
    long long threads_left; /* thread samples left out (over ATTACH_MAX_THREADS) */
    /* one tick's threads, ATTACH_MAX_LISTED each (owned) */
    struct attach_thread *ts;
    char *st;
    double *cpu;
    struct attach__entry *ent; /* one tick's delta entries, ATTACH_MAX_THREADS (owned) */
    agent_buf_t now;           /* one tick's `now` while it is written */
    /* the program's files (--include / --exclude; borrowed) */
    const char *include[ATTACH_MAX_PATTERNS], *exclude[ATTACH_MAX_PATTERNS];
    int ninclude, nexclude;
};

/* s ready (its tick buffers allocated) to write into sink (borrowed); the
 * include / exclude patterns borrowed (nexclude 0: the agent's default).
 * 0 or -ENOMEM. attach_sampler_free in every case. */
int attach_sampler_init(struct attach_sampler *s, struct attach_sink *sink,
                        volatile sig_atomic_t *stop, double interval_ms, const char *const *include,
                        int ninclude, const char *const *exclude, int nexclude);
/* Frees every process and the buffers. */
void attach_sampler_free(struct attach_sampler *s);

/* A process to sample, its stream opened in the sink (not yet in procs):
 * new, or NULL. Its hello is attach_sampler_hello's, once ap is open. */
struct attach_sproc *attach_sproc_new(struct attach_sampler *s);
void attach_sproc_free(struct attach_sampler *s, struct attach_sproc *pr);
/* hello: the process's pid, parent, Python, executable, argv, cwd, main
 * script; the main script (or else the executable) into program (cap n)
 * when program is not NULL. */
void attach_sampler_hello(struct attach_sampler *s, struct attach_sproc *pr, char *program,
                          size_t n);

/* One tick of pr (the step): 0, or -ESRCH when it is gone. */
int attach_sampler_tick(struct attach_sampler *s, struct attach_sproc *pr);
/* What the sink's reader asked (`now` rate, `stop`): after each tick. */
void attach_sampler_poll(struct attach_sampler *s, struct attach_sproc *pr);
/* pr's stream ends (reason "exit": it exited; "stop": we detach). */
void attach_sampler_end(struct attach_sampler *s, struct attach_sproc *pr, const char *reason);
/* Drop procs[i] (i > 0, ended): its stream closes, its slot is free. */
void attach_sampler_forget(struct attach_sampler *s, int i);

/* A line for the user: stderr and, to a remote sink, a `log` (notice) on
 * the attached process's stream (the first few only). */
void attach_sampler_tell(struct attach_sampler *s, const char *msg);
/* An attach that failed, for the reader of pr's stream (an `error`; msg
 * borrowed). */
void attach_sampler_error(struct attach_sampler *s, struct attach_sproc *pr, const char *msg);
/* pr's lines written so far go to the sink; a sink whose reader went
 * stops the sampler. */
void attach_sampler_flush(struct attach_sampler *s, struct attach_sproc *pr);

/* What attach knows of one thread's interval, as the charging rule
 * (sampling/charge.h) takes it: dw wall seconds in which its CPU clock
 * moved dc (a clock that went back counts 0), running (state R, cat
 * decided by the probe: CAT_PY or CAT_NAT) or not. Attach cannot read the
 * run-queue wait: busy is dw (CPU is then the interval's on-CPU share). */
charge_in_t attach_charge_in(int running, int cat, double dw, double dc);

/* The monotonic clock in seconds. */
double attach_mono(void);
/* Sleep sec seconds, less when *s->stop is set (a signal). */
void attach_sampler_sleep(const struct attach_sampler *s, double sec);

#endif
