/* sampler.c: the native sampler thread (method: docs/sampling.md).
 *
 * A plain pthread, invisible to Python: it never takes the GIL and never
 * signals the program's threads. Each tick (mean interval_ms, uniform
 * jitter +-50%) it
 *   1. lists the Python threads and reads each one's CPU clock (and its
 *      run-queue wait from schedstat): utilisation u over the wall time since
 *      that thread's previous sample; (1-u) of the sample is `sys`;
 *   2. re-reads the innermost frame of every running thread (instruction,
 *      locals, value stack) every ~20 us: a changing frame is `py`; a frozen
 *      frame while the thread's CPU clock advances is C code, `nat`;
 *   3. walks each stack and charges the sample, weighted by the real wall
 *      time since that thread's previous sample, to the innermost frame of
 *      the profiled program, its function, the stack and the thread.
 * Every ~100 ms it appends a delta and writes what the socket accepts.
 */
#include "agent.h"
#include "agent_config.h"
#include "aggregate.h"
#include "agent_emit.h"
#include "clock.h"
#include "memhooks.h"
#include "nvml.h"
#include "sampler.h"
#include "walk.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define SERVER_WATCH_S 0.1 /* LSP mode, connection gone: server pid checks */
#define DELTA_PERIOD 0.1
/* Probing goes on, a round every PROBE_GAP, until each running thread is
 * decided (probe.h) or the rounds or the window run out. */
#define PROBE_MAX_ROUNDS 12
#define PROBE_MAX_WINDOW 1e-3
#define PROBE_BURST 4
/* memory windows (mem_window.c): open this long, every ~MEM_WIN_GAP (+-50%).
 * Each window is two wake-ups of this thread, ~20-30 us of CPU each in a VM
 * (docs/memory.md, "Windows: what they cost"): 0.6 ms every 3 ms rather than
 * 0.2 every 1 ms, the same share of the time in windows, a third of the
 * wake-ups. Windows that see no call of the Python domains for
 * MEM_WIN_IDLE_S (no Python thread allocating: an idle process, a long C
 * call) double the gap, up to MEM_WIN_GAP_MAX; the first window that sees
 * a call brings it back. The gap is chosen before the window it precedes,
 * from what earlier windows saw, so the weights (span / length) stay
 * unbiased. */
#define MEM_WIN_LEN 600e-6
#define MEM_WIN_GAP 3e-3
#define MEM_WIN_IDLE_S 20e-3
#define MEM_WIN_GAP_MAX 24e-3
#define POP_STEP (256u << 10) /* table bytes backed after a tick: ~0.1-0.3 ms */
#define CAL_DELAY_S 0.1       /* windows' calibration asked for after this (mem_window.c) */
#define PROBE_GAP 20e-6       /* sleep, not spin: the sampler may share a core with the thread */

/* For mem_window_calibrate: will the GIL come soon if this thread asks for
 * it? When it is free, or its holder runs bytecode (its frame moved since
 * our previous look, walk_probe), which lets it go within its switch
 * interval once asked; not when the holder is frozen in a long C call. */
static int cal_gil_soon(agent_t *a, uintptr_t *last_holder, uint64_t *last_sig)
{
    uintptr_t h = walk_gil_holder(a);
    if (h == 0 || h == 1) return 1; /* free, or not known: ask */
    uint64_t sig;
    if (walk_probe(h, 1, &sig) != 0) return 0;
    int moved = h == *last_holder && sig != *last_sig;
    *last_holder = h;
    *last_sig = sig;
    return moved;
}

/* Run-queue wait (runnable, not running) of the thread, seconds, or 0. */
static double thread_rq(agent_thread_t *t)
{
    int fd = ownfd_get(&t->schedfd); /* the program may have closed it */
    if (fd < 0) return 0;
    char b[96];
    ssize_t n = pread(fd, b, sizeof b - 1, 0);
    if (n <= 0) return 0;
    b[n] = 0;
    unsigned long long run, wait;
    if (sscanf(b, "%llu %llu", &run, &wait) != 2) return 0;
    return (double)wait * 1e-9;
}

/* 1 when the thread is runnable right now (running or waiting for a CPU).
 * A wait for a CPU shows in schedstat only once the thread runs again, so
 * a thread that is runnable at the sample counts as busy for the period. */
static int thread_runnable(agent_thread_t *t)
{
    int fd = ownfd_get(&t->statfd);
    if (fd < 0) return 0;
    char b[512];
    ssize_t n = pread(fd, b, sizeof b - 1, 0);
    if (n <= 0) return 0;
    b[n] = 0;
    char *p = strrchr(b, ')');
    return p && p[1] == ' ' && p[2] == 'R';
}

static uint64_t rng_next(agent_t *a)
{
    uint64_t x = a->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return a->rng = x;
}

static void thread_name(agent_thread_t *t)
{
    if (t->tid == (long)getpid()) {
        snprintf(t->name, sizeof t->name, "MainThread");
        return;
    }
    char path[64], comm[32] = "", main_comm[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%ld/comm", t->tid);
    FILE *f = fopen(path, "re");
    if (f) {
        if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
        fclose(f);
    }
    f = fopen("/proc/self/comm", "re");
    if (f) {
        if (!fgets(main_comm, sizeof main_comm, f)) main_comm[0] = 0;
        fclose(f);
    }
    comm[strcspn(comm, "\n")] = 0;
    if (comm[0] && strcmp(comm, main_comm) != 0 && strncmp(comm, main_comm, strlen(comm)) != 0)
        snprintf(t->name, sizeof t->name, "%s", comm);
    else
        snprintf(t->name, sizeof t->name, "Thread-%ld", t->tid);
}

static agent_thread_t *thread_rec(agent_t *a, const walk_thread_t *w)
{
    for (int i = 0; i < a->nth; i++) {
        agent_thread_t *t = a->th[i];
        if (t->tid == w->tid && t->tstate == w->tstate) return t;
    }
    if (a->nth >= AGENT_MAX_THREADS) return NULL;
    agent_thread_t *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->tstate = w->tstate;
    t->tid = w->tid;
    t->run_cat = CAT_PY;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", t->tid);
    ownfd_set(&t->schedfd, open(path, O_RDONLY | O_CLOEXEC));
    snprintf(path, sizeof path, "/proc/self/task/%ld/stat", t->tid);
    ownfd_set(&t->statfd, open(path, O_RDONLY | O_CLOEXEC));
    thread_name(t);
    a->th[a->nth++] = t;
    return t;
}

static void threads_prune(agent_t *a)
{
    int j = 0;
    for (int i = 0; i < a->nth; i++) {
        agent_thread_t *t = a->th[i];
        if (t->gen == a->gen) {
            a->th[j++] = t;
        } else {
            ownfd_close(&t->schedfd);
            ownfd_close(&t->statfd);
            free(t);
        }
    }
    a->nth = j;
}

static void sleep_until(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Per-thread scratch of one tick. */
typedef struct {
    agent_thread_t *t;
    double dw, dc, u;
    double busy;     /* CPU + run-queue wait over dw (u = busy / dw, capped) */
    int charge;      /* its CPU clock was read: charge this tick */
    int running;     /* on a CPU or waiting for one at the sample instant */
    double cpu0;     /* CPU clock at the start of the probe window */
    uintptr_t frame; /* innermost frame at the sample instant */
    int site;        /* class of its instruction then (site.h) */
    int code;        /* the window's signatures include the instruction (walk_probe) */
    uint64_t site_key;
    int line_row, func_row;
    double natv;
    int probe_v;  /* the window's verdict (probe.h), -1 undecided */
    int same_cpu; /* its CPU clock reads what it read at its previous sample */
} tick_t;

static void charge(agent_t *a, tick_t *k, double now)
{
    agent_thread_t *t = k->t;
    /* the rule (sampling/charge.h) that hotline attach applies too */
    charge_in_t in = {
        .dw = k->dw, .dc = k->dc, .busy = k->busy, .running = k->running, .cat = t->run_cat};
    charge_t c;
    charge_interval(&in, &c);
    double py = c.py, nat = c.nat, sysv = c.sys, cpu = c.cpu;
    int p = charge_frame(&t->fr[0].profiled, sizeof t->fr[0], t->nfr);
    int f = p >= 0 ? t->fr[p].file_id : 0, l = p >= 0 ? t->fr[p].line : 0;
    charge_pos_at(&t->pos, f, l, now);
    t->state_now = c.state;
    k->line_row = k->func_row = -1;
    k->natv = nat;
    if (!k->charge) return;
    a->thread_samples++;
    /* idle threads' samples (charge.h) go nowhere: not in lines, threads,
     * stacks nor the delta's sample count, so every total agrees */
    if (!charge_counts(p >= 0, a->all_threads)) return;
    a->samples_delta++;
    if (p >= 0) {
        int r = agg_get(&a->lines, (uint32_t)f, (uint32_t)l, 0, NULL);
        if (r >= 0) {
            agg_row_t *row = &a->lines.rows[r];
            row->py += py, row->nat += nat, row->sys += sysv, row->cpu += cpu, row->n++;
            agg_mark(&a->lines, r);
            k->line_row = r;
        }
        r = agg_get(&a->funcs, (uint32_t)f, (uint32_t)t->fr[p].name_id, (uint32_t)t->fr[p].first,
                    NULL);
        if (r >= 0) {
            agg_row_t *row = &a->funcs.rows[r];
            row->extra = (uint32_t)t->fr[p].last;
            row->py += py, row->nat += nat, row->sys += sysv, row->cpu += cpu, row->n++;
            agg_mark(&a->funcs, r);
            k->func_row = r;
        }
    }
    int created;
    int r = agg_get(&a->threads, (uint32_t)t->tid, 0, 0, &created);
    if (r >= 0) {
        agg_row_t *row = &a->threads.rows[r];
        if (created) {
            /* by string id: the thread may be gone by the next delta */
            int id = agg_intern(a, t->name, strlen(t->name));
            row->extra = id > 0 ? (uint32_t)id : 0;
        }
        row->py += py, row->nat += nat, row->sys += sysv, row->n++;
        agg_mark(&a->threads, r);
    }
    if (t->nfr > 0) {
        int sid = agg_stack_id(a, t->fr, t->nfr);
        /* rows are never removed, so r is the thread's rank in first-seen
         * order: the first AGENT_STACK_THREADS have stacks of their own */
        uint32_t stid = r >= 0 && r < AGENT_STACK_THREADS ? (uint32_t)t->tid : 0;
        if (sid > 0) agg_stack_add(a, sid, stid, k->dw);
    }
}

/* The C function the innermost frame is calling (walk_site), as the
 * stack's leaf: a frame whose file is AGENT_NATIVE_FILE, line 0, never the
 * program's (docs/agent-protocol.md, `stack`). The outermost frame makes
 * room when the stack is full. */
static void add_callee(agent_t *a, agent_thread_t *t, const char *name)
{
    if (a->native_file_id <= 0)
        a->native_file_id = agg_intern(a, AGENT_NATIVE_FILE, strlen(AGENT_NATIVE_FILE));
    int nid = agg_intern(a, name, strlen(name));
    if (a->native_file_id <= 0 || nid <= 0) return;
    int n = t->nfr < AGENT_MAX_DEPTH ? t->nfr : AGENT_MAX_DEPTH - 1;
    memmove(&t->fr[1], &t->fr[0], (size_t)n * sizeof t->fr[0]);
    t->fr[0] = (agent_frame_t){.file_id = a->native_file_id,
                               .name_id = nid,
                               .line = 0,
                               .first = 0,
                               .last = 0,
                               .profiled = 0};
    t->nfr = n + 1;
}

/* Sleep before the next round: the shortest probe_gap() (probe.h) of the
 * undecided threads, so a thread in a long C call is not woken for every
 * 20 us round. */
static double window_gap(const tick_t *ks, int nk)
{
    double gap = PROBE_MAX_WINDOW;
    for (int i = 0; i < nk; i++) {
        const agent_thread_t *t = ks[i].t;
        if (!t->probe_on || probe_done(&t->probe)) continue;
        if ((ks[i].site == SITE_CALL || ks[i].site == SITE_OP) && site_window_done(&t->probe))
            continue;
        double g = probe_gap(&t->probe, t->run_cat, ks[i].u, PROBE_GAP);
        if (g < gap) gap = g;
    }
    return gap;
}

/* ---- more Python threads than AGENT_MAX_THREADS ----------------------
 * Each tick samples AGENT_MAX_THREADS at most (its cost is per thread).
 * The interpreter lists its newest threads first, so a plain cut dropped
 * the main thread first of all (300 idle workers: its busy loop read 0 s).
 * Chosen instead: the main thread always, then the threads that used the
 * most CPU since the previous tick (each listed thread's CPU clock is
 * read: one clock_gettime each), ties to those sampled already
 * (no churn of their descriptors); the stream is told how many were left
 * out (a `log` warn, again when more are). */
#define AGENT_SEEN_SLOTS (2 * AGENT_MAX_LISTED) /* a power of two */
_Static_assert(AGENT_SEEN_SLOTS == 1 << 13, "seen_slot's hash takes 13 bits: one a slot");

struct agent_seen {
    long tid[AGENT_SEEN_SLOTS];
    double cpu[AGENT_SEEN_SLOTS];
};

static size_t seen_slot(const struct agent_seen *s, long tid)
{
    size_t h = ((size_t)tid * 0x9E3779B97F4A7C15ull) >> 51; /* 13 bits */
    while (s->tid[h] && s->tid[h] != tid)
        h = (h + 1) & (AGENT_SEEN_SLOTS - 1);
    return h;
}

struct pick {
    double key;
    int i;
};

static int pick_cmp(const void *x, const void *y)
{
    const struct pick *a = x, *b = y;
    return a->key > b->key ? -1 : a->key < b->key ? 1 : a->i - b->i;
}

static int is_tracked(const agent_t *a, const walk_thread_t *w)
{
    for (int i = 0; i < a->nth; i++)
        if (a->th[i]->tid == w->tid && a->th[i]->tstate == w->tstate) return 1;
    return 0;
}

/* list[0..n) cut to AGENT_MAX_THREADS as above: the new n. */
static int pick_threads(agent_t *a, walk_thread_t *list, int n)
{
    if (n <= AGENT_MAX_THREADS) return n;
    if (!a->seen) a->seen = calloc(1, sizeof *a->seen);
    if (!a->seen_prev) a->seen_prev = calloc(1, sizeof *a->seen_prev);
    struct pick *pk = malloc((size_t)n * sizeof *pk);
    walk_thread_t *keep = malloc(AGENT_MAX_THREADS * sizeof *keep);
    if (!a->seen || !a->seen_prev || !pk || !keep) { /* out of memory: the main thread first */
        free(pk);
        free(keep);
        for (int i = 0; i < n; i++)
            if (list[i].tid == (long)getpid()) {
                walk_thread_t m = list[i];
                list[i] = list[0];
                list[0] = m;
            }
        return AGENT_MAX_THREADS;
    }
    struct agent_seen *now = a->seen_prev; /* the older table becomes this tick's */
    memset(now, 0, sizeof *now);
    for (int i = 0; i < n; i++) {
        double cpu = clock_thread_cpu(list[i].tid);
        size_t h = seen_slot(a->seen, list[i].tid);
        double before = a->seen->tid[h] ? a->seen->cpu[h] : 0;
        size_t w = seen_slot(now, list[i].tid);
        now->tid[w] = list[i].tid;
        now->cpu[w] = cpu;
        /* CPU since the last tick; sampled ones ahead on ties */
        pk[i].key = list[i].tid == (long)getpid()
                        ? 1e300
                        : (cpu > before ? cpu - before : 0) + (is_tracked(a, &list[i]) ? 1e-9 : 0);
        pk[i].i = i;
    }
    a->seen_prev = a->seen;
    a->seen = now;
    qsort(pk, (size_t)n, sizeof *pk, pick_cmp);
    for (int k = 0; k < AGENT_MAX_THREADS; k++)
        keep[k] = list[pk[k].i];
    memcpy(list, keep, AGENT_MAX_THREADS * sizeof *keep);
    free(pk);
    free(keep);
    int left = n - AGENT_MAX_THREADS;
    if (left > a->drop_warn_at) { /* loudly: once, and again when many more are left out */
        a->drop_warn_at = left * 2 > left + 16 ? left * 2 : left + 16;
        char msg[200];
        snprintf(msg, sizeof msg,
                 "%d Python threads: %d not sampled (at most %d are each tick: the main thread "
                 "and the ones using CPU are kept, idle ones left out)",
                 n, left, AGENT_MAX_THREADS);
        agent_emit_log(&a->out, "warn", msg);
    }
    return AGENT_MAX_THREADS;
}

static void tick(agent_t *a)
{
    walk_thread_t few[AGENT_MAX_THREADS]; /* out of memory: the first listed only */
    if (!a->listed) a->listed = malloc(AGENT_MAX_LISTED * sizeof *a->listed);
    walk_thread_t *list = a->listed ? a->listed : few;
    tick_t ks[AGENT_MAX_THREADS];
    int n = walk_threads(a, list, a->listed ? AGENT_MAX_LISTED : AGENT_MAX_THREADS);
    n = pick_threads(a, list, n);
    a->gen++;
    int nk = 0;
    for (int i = 0; i < n; i++) {
        agent_thread_t *t = thread_rec(a, &list[i]);
        if (t) {
            t->gen = a->gen;
            ks[nk++].t = t;
        }
    }
    threads_prune(a);

    /* 1. busy time (CPU + run-queue wait) since each thread's previous
     * sample; u only decides whom to probe */
    double now = clock_mono(), sum_dc = 0;
    for (int i = 0; i < nk; i++) {
        agent_thread_t *t = ks[i].t;
        double cpu = clock_thread_cpu(t->tid), rq = thread_rq(t);
        ks[i].charge = cpu >= 0;
        ks[i].same_cpu = t->have_base && cpu >= 0 && cpu == t->last_cpu;
        double dc, drq;
        if (t->have_base) {
            ks[i].dw = now - t->last_wall;
            dc = cpu - t->last_cpu;
            drq = rq - t->last_rq;
        } else {
            /* New since the previous tick: it gets the interval since that
             * tick like every other thread. Starting it at its first sample
             * instead lost all the work of thread-per-task code (a thread
             * that lives less than an interval is never seen twice). The
             * overlap before its creation is unbiased: it balances the part
             * after its last tick that no sample charges (docs/sampling.md,
             * "New threads"). Its clocks count from its creation; the caps
             * keep a thread that predates the tick (not listed then, or
             * running before the sampler) within the interval. */
            ks[i].dw = now - a->last_tick;
            dc = cpu < ks[i].dw ? cpu : ks[i].dw;
            drq = rq < ks[i].dw - dc ? rq : ks[i].dw - dc;
        }
        ks[i].dc = ks[i].charge && dc > 0 ? dc : 0;
        drq = ks[i].charge && drq > 0 ? drq : 0;
        ks[i].busy = ks[i].dc + drq;
        ks[i].u = ks[i].dw > 0 ? (ks[i].busy < ks[i].dw ? ks[i].busy / ks[i].dw : 1) : 0;
        if (cpu >= 0) {
            t->last_cpu = cpu;
            t->last_rq = rq;
            t->last_wall = now;
            t->have_base = 1;
        }
        sum_dc += ks[i].dc;
    }
    a->last_tick = now;

    /* 2. the sample instant: the threads listed, their stacks, running or
     * waiting, all read now. Read after the probe window (up to
     * PROBE_MAX_WINDOW), a task that ended inside the window charged its
     * thread's exit path, not its line: 3 ms tasks lost 10-25% of their time
     * (tests/profiler/test_short_threads.py). Running is the kernel's state (R: on a CPU or waiting
     * for one; a thread that starves for a CPU is running in this sense, not waiting), not CPU
     * burnt inside the window: a sleeper that wakes inside it would charge
     * Python to its sleep line. A thread that was waiting at its previous
     * sample and has neither run nor queued since is still waiting: no read. */
    for (int i = 0; i < nk; i++) {
        agent_thread_t *t = ks[i].t;
        /* Asleep since its previous sample: waiting then, and neither run
         * (its CPU clock is the same, to the nanosecond) nor queued since.
         * Only a running thread changes its frames, so the previous
         * sample's stack and state stand: nothing is read. An idle thread
         * cost ~45 us of system time a tick in those reads (a Dask worker
         * has 4-5 threads, most of them waiting; docs/sampling.md, "Cost"). */
        if (ks[i].charge && ks[i].same_cpu && t->have_stack && ks[i].busy <= 0 && !t->was_running) {
            ks[i].frame = t->stack_frame;
            ks[i].site = SITE_NONE;
            ks[i].site_key = 0;
            ks[i].running = 0;
            a->asleep_reuse++;
            continue;
        }
        ks[i].frame = walk_top_frame(t->tstate);
        t->stack_frame = ks[i].frame;
        t->have_stack = 1;
        int m = walk_stack(a, t->tstate, t->fr, AGENT_MAX_DEPTH);
        t->nfr = m > 0 ? m : 0;
        walk_site_t ws;
        ks[i].site = walk_site(a, t->tstate, &ws);
        ks[i].site_key = ws.key;
        /* the same frame and line as the stack read just before: the
         * thread did not move between the two reads */
        if (ws.callee[0] && t->nfr > 0 && t->fr[0].file_id == ws.file_id &&
            t->fr[0].line == ws.line)
            add_callee(a, t, ws.callee);
        uint64_t sig = 0;
        int have_sig = walk_probe(t->tstate, 0, &sig) == 0 && sig != 0;
        if (!ks[i].charge)
            ks[i].running = 0;
        else if (ks[i].busy <= 0 && !t->was_running)
            ks[i].running = 0;
        else
            ks[i].running = thread_runnable(t);
        /* Waking, not running: waiting at its previous sample, not one
         * bytecode run since (same frame state) and little CPU: R is the
         * way out of that wait (a CPU or the GIL to get back), still the
         * call's time. On a busy machine a sleep line otherwise read
         * 16-24% Python (test_alternate.py), the wake-up delay of each
         * sleep. */
        if (ks[i].running && !t->was_running && have_sig && t->sample_sig_ok &&
            sig == t->sample_sig && ks[i].dc < 0.25 * ks[i].dw)
            ks[i].running = 0;
        t->sample_sig = sig;
        t->sample_sig_ok = have_sig;
        t->was_running = ks[i].running;
    }

    /* 3. is the interpreter moving? Pairs of consecutive probes between
     * which the thread provably ran decide (probe.h): a pure-Python thread
     * always moves in that time, a thread in C code never does. Threads
     * that did not run enough during the window keep the last category. */
    int probing = 0;
    uintptr_t holder = walk_gil_holder(a);
    for (int i = 0; i < nk; i++) {
        agent_thread_t *t = ks[i].t;
        int nogil = holder != 1 && holder != t->tstate;
        uint64_t sig = 0;
        /* at a bytecode instruction the site decides alone (site.h): no
         * window. Nor for a thread waiting at the sample (not R): the
         * window cannot see it run, and it ran all rounds to
         * PROBE_MAX_WINDOW for nothing, a dozen wake-ups a tick for every
         * thread that wakes briefly (an event loop, Dask's own profiler
         * thread: ~30 ms of sampler CPU a second in a Dask worker) */
        t->probe_on = ks[i].charge && ks[i].running && ks[i].u > 0.02 && ks[i].site != SITE_PY &&
                      walk_probe(t->tstate, !nogil, &sig) == 0;
        /* fixed for the window: a call that takes or drops the GIL inside
         * (numpy's a @ b around its BLAS) is not a movement */
        ks[i].code = !nogil;
        ks[i].cpu0 = t->probe_on ? clock_thread_cpu(t->tid) : 0;
        probe_start(&t->probe, t->probe_on ? sig : 0, nogil, ks[i].cpu0, clock_mono());
        probing += t->probe_on;
    }
    if (probing) {
        double w0 = clock_mono(), wake = w0;
        int undecided = probing;
        for (int r = 1; r <= PROBE_MAX_ROUNDS && undecided; r++) {
            if (clock_mono() - w0 > PROBE_MAX_WINDOW)
                break; /* we are being starved: do not stretch the tick */
            wake += window_gap(ks, nk);
            sleep_until(wake);
            double wr = clock_mono();
            undecided = 0;
            holder = walk_gil_holder(a);
            for (int i = 0; i < nk; i++) {
                agent_thread_t *t = ks[i].t;
                uint64_t sig;
                /* at a call or operator site the frozen evidence of
                 * site.h decides alone once it is there */
                int at_site = ks[i].site == SITE_CALL || ks[i].site == SITE_OP;
                if (!t->probe_on || probe_done(&t->probe) ||
                    (at_site && site_window_done(&t->probe)))
                    continue;
                /* a frozen pair is followed at once by up to PROBE_BURST
                 * more until PROBE_MIN_PAIRS: cheap extra pairs against
                 * chance repeats; then one a round, watching for movement.
                 * At a call or operator site up to SITE_MIN_PAIRS (site.h:
                 * a short call in a loop can hold 90% of the loop's reads) */
                int burst = at_site ? SITE_MIN_PAIRS : PROBE_BURST;
                int want = at_site ? SITE_MIN_PAIRS : PROBE_MIN_PAIRS;
                for (int b = 0;
                     b <= burst && !probe_done(&t->probe) && (b == 0 || t->probe.frozen_n < want);
                     b++) {
                    int nogil = holder != 1 && holder != t->tstate;
                    if (walk_probe(t->tstate, ks[i].code, &sig) != 0) break;
                    double cpu = clock_thread_cpu(t->tid);
                    if (!probe_pair(&t->probe, sig, nogil, cpu, b ? clock_mono() : wr)) break;
                }
                undecided += !probe_done(&t->probe) && !(at_site && site_window_done(&t->probe));
            }
        }
        for (int i = 0; i < nk; i++) {
            agent_thread_t *t = ks[i].t;
            ks[i].probe_v = -1;
            if (!t->probe_on) continue;
            int v = probe_verdict(&t->probe, ks[i].dc);
            /* C code found in another frame than the sampled one (the task
             * returned inside the window) says nothing about the sample */
            if (v == CAT_NAT && walk_top_frame(t->tstate) != ks[i].frame) v = -1;
            ks[i].probe_v = v;
            a->probe_stats[v == CAT_PY ? 0 : v == CAT_NAT ? 1 : 2]++;
        }
    }
    /* the category: the instruction at the sample with what the window
     * found (site.h); -1 keeps the last one (no site, undecided window) */
    for (int i = 0; i < nk; i++) {
        agent_thread_t *t = ks[i].t;
        int site = ks[i].site, v = t->probe_on ? ks[i].probe_v : -1;
        uint64_t key = ks[i].site_key;
        if (!ks[i].charge) continue;
        const probe_t *p = t->probe_on ? &t->probe : NULL;
        int learn;
        int c = site_verdict(site, p, v, site_slot(a->site_hist, key), key, &learn);
        if (learn >= 0) site_learn(a->site_hist, key, learn); /* a conclusive window */
        if (c >= 0) t->run_cat = c;
        if (site != SITE_NONE)
            a->site_stats[c == CAT_NAT ? 1 : 0]++;
        else
            a->site_stats[2]++;
    }

    /* 4. charging: the sample (2.) in the category the window found (3.) */
    double total_nat = 0;
    for (int i = 0; i < nk; i++) {
        charge(a, &ks[i], now);
        total_nat += ks[i].natv;
    }

    /* extra CPU of non-Python threads goes to lines running native code */
    double proc = clock_s(CLOCK_PROCESS_CPUTIME_ID), self = clock_s(CLOCK_THREAD_CPUTIME_ID);
    if (a->have_proc_base) {
        double extra = (proc - a->last_proc_cpu) - (self - a->last_self_cpu) - sum_dc;
        if (extra > 1e-4 && total_nat > 0) {
            for (int i = 0; i < nk; i++) {
                if (ks[i].natv <= 0) continue;
                double share = extra * ks[i].natv / total_nat;
                if (ks[i].line_row >= 0) a->lines.rows[ks[i].line_row].cpu += share;
                if (ks[i].func_row >= 0) a->funcs.rows[ks[i].func_row].cpu += share;
            }
        }
    }
    a->last_proc_cpu = proc;
    a->last_self_cpu = self;
    a->have_proc_base = 1;
    a->ticks++;
}

/* the states of `now` are the categories of probe.h */
_Static_assert((int)CAT_SYS == (int)AGENT_STATE_SYSTEM && (int)CAT_PY == (int)AGENT_STATE_PYTHON &&
                   (int)CAT_NAT == (int)AGENT_STATE_NATIVE,
               "probe.h's categories are agent_emit.h's states");

static void emit_now(agent_t *a, double now)
{
    agent_now_t w;
    agent_now_begin(&w, &a->out, now - a->t0);
    for (int i = 0; i < a->nth; i++) {
        agent_thread_t *t = a->th[i];
        struct agent_emit_frame fr[AGENT_MAX_DEPTH];
        int n = agg_wire_frames(t->fr, t->nfr, fr, AGENT_MAX_DEPTH);
        agent_now_thread(&w, t->tid, t->name, t->state_now,
                         t->pos.since > 0 ? now - t->pos.since : 0.0, fr, n);
    }
    agent_now_end(&w);
}

/* ---- requests of the program's threads (sampler_request) ---- */

/* What was aggregated so far goes out as a delta now: a request is ordered
 * after it. Not while the connection is backed up (it goes out later). */
static void delta_now(agent_t *a)
{
    if (a->out.len >= AGENT_OUT_SOFT) return;
    double ts = clock_mono() - a->t0;
    agg_emit_delta(a, ts);
    mem_emit(a, ts);
    gpu_emit(a, ts);
    a->delta_seq++;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? -errno : -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int tee_close(agent_t *a)
{
    if (!a->tee_on) return 0;
    wire_flush(a);               /* what out holds goes to the tee too */
    if (!a->tee_on) return -EIO; /* a write failed: closed already */
    a->tee_on = 0;
    return close(a->tee_fd) ? -errno : 0;
}

/* The tee file starts with the string table so far: a reader of that file
 * alone resolves the ids the later lines use. */
static int tee_open(agent_t *a, const char *path)
{
    tee_close(a);
    wire_flush(a); /* what is in out predates the tee */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -errno;
    agent_buf_t b = {0};
    int rc = 0;
    for (int i = 0; i < a->strs.n && !rc; i++)
        rc = agent_emit_str(&b, i + 1, a->strs.s[i], strlen(a->strs.s[i]));
    if (!rc && b.len) rc = write_all(fd, b.p, b.len);
    agent_buf_free(&b);
    if (rc) {
        close(fd);
        return rc;
    }
    a->tee_fd = fd;
    a->tee_on = 1;
    a->tee_mark = a->out.len;
    return 0;
}

/* Serve the pending request, if any (sampler thread). */
static void serve_request(agent_t *a)
{
    pthread_mutex_lock(&a->mu);
    int kind = a->req_kind;
    char *arg = a->req_arg;
    a->req_arg = NULL;
    pthread_mutex_unlock(&a->mu);
    if (!kind) return;
    delta_now(a);
    int rc = 0;
    if (kind == SAMPLER_REQ_MARK) {
        rc = agent_buf_add(&a->out, arg, strlen(arg));
        if (!rc) rc = agent_buf_add(&a->out, "\n", 1);
    } else if (kind == SAMPLER_REQ_TEE) {
        rc = arg ? tee_open(a, arg) : tee_close(a);
    }
    wire_flush(a);
    free(arg);
    pthread_mutex_lock(&a->mu);
    a->req_kind = 0;
    a->req_rc = rc;
    a->req_done++;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

int sampler_request(agent_t *a, int kind, const char *arg, double timeout_s)
{
    char *copy = arg ? strdup(arg) : NULL;
    if (arg && !copy) return -ENOMEM;
    double end = clock_mono() + timeout_s;
    struct timespec dl;
    dl.tv_sec = (time_t)end;
    dl.tv_nsec = (long)((end - (double)dl.tv_sec) * 1e9);
    int rc = 0;
    pthread_mutex_lock(&a->mu);
    a->req_waiters++;
    while (a->req_kind && atomic_load(&a->alive) && !rc) /* another thread's first */
        rc = pthread_cond_timedwait(&a->cv, &a->mu, &dl) == ETIMEDOUT ? -ETIMEDOUT : 0;
    if (!rc && !atomic_load(&a->alive)) rc = -ESRCH;
    if (!rc) {
        a->req_kind = kind;
        a->req_arg = copy;
        copy = NULL;
        unsigned want = a->req_done + 1;
        pthread_cond_broadcast(&a->cv);
        while ((int)(a->req_done - want) < 0 && atomic_load(&a->alive) && !rc)
            rc = pthread_cond_timedwait(&a->cv, &a->mu, &dl) == ETIMEDOUT ? -ETIMEDOUT : 0;
        if ((int)(a->req_done - want) >= 0)
            rc = a->req_rc;
        else if (!rc)
            rc = -ESRCH;
        if ((int)(a->req_done - want) < 0 && a->req_kind == kind) { /* not served: withdrawn */
            free(a->req_arg);
            a->req_arg = NULL;
            a->req_kind = 0;
        }
    }
    a->req_waiters--;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    free(copy);
    return rc;
}

/* Sleep until t (monotonic), a stop request or another request; 1 when
 * stop was requested. */
static int wait_until(agent_t *a, double t)
{
    struct timespec dl;
    dl.tv_sec = (time_t)t;
    dl.tv_nsec = (long)((t - (double)dl.tv_sec) * 1e9);
    pthread_mutex_lock(&a->mu);
    while (!atomic_load(&a->stop_req) && !(a->req_kind && atomic_load(&a->alive))) {
        if (pthread_cond_timedwait(&a->cv, &a->mu, &dl) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&a->mu);
    return atomic_load(&a->stop_req);
}

static void *sampler_main(void *arg)
{
    agent_t *a = arg;
    /* A table of our own, with only our connection in it (ownfd.c); then
     * sampler_start may close the program's copy. */
    a->own_table = !a->shared_table && ownfd_private_table(a->fd.fd);
    pthread_mutex_lock(&a->mu);
    a->started = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    prctl(PR_SET_NAME, "hotline-sampler", 0, 0, 0);
    mem_thread_ignore();                       /* our own tables are not the program's memory */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* 1 us: probes sleep ~20 us */
    /* A starved sampler charges long gaps to whatever line it wakes up on.
     * Ask for a larger CPU share (works with CAP_SYS_NICE; harmless when
     * refused). The program's own threads keep their priority. */
    setpriority(PRIO_PROCESS, (id_t)gettid(), -10);
    if (a->tid_off > 0 && walk_tid_offset() != a->tid_off)
        a->tid_off = -1; /* not the layout we guessed: sample nothing */
    /* the tables backed here, not in start(): the program's thread does
     * not wait for it, and a page no thread has touched yet needs no other
     * CPU's TLB flushed. A piece a tick (memread.h). */
    mem_pop_t pop = {0};
    mem_pop_add(&pop, a->codes, AGENT_CODE_SLOTS * sizeof *a->codes);
    mem_pop_add(&pop, a->site_hist, SITE_HIST_SLOTS * sizeof *a->site_hist);
    mem_populate_tables(&pop);
    const char *reason = "stop";
    a->next_delta = clock_mono() + DELTA_PERIOD;
    double next_win = clock_mono(), win_gap = MEM_WIN_GAP, win_busy = next_win;
    double t_start = next_win;
    uintptr_t cal_holder = 0; /* cal_gil_soon's previous look */
    uint64_t cal_sig = 0;
    a->last_tick = next_win; /* threads first seen at the first tick: charged from here */
    for (;;) {
        double d = a->interval_s * (0.5 + (double)(rng_next(a) >> 11) * 0x1.0p-53);
        double s = clock_mono() + d;
        /* until the tick: sleep, opening memory windows on the way */
        while (!wait_until(a, mem_windows_on() && next_win < s ? next_win : s)) {
            serve_request(a);
            double t = clock_mono();
            if (t >= s) break;
            /* the windows' cost, measured once the program has run a while
             * (a short one never pays it): mem_window.c */
            if (t >= next_win && t - t_start >= CAL_DELAY_S && !mem_window_calibrated() &&
                mem_window_calibrate(&a->stop_req, cal_gil_soon(a, &cal_holder, &cal_sig))) {
                next_win = clock_mono(); /* we held the GIL a while */
                continue;
            }
            if (t >= next_win) {
                mem_window(a, 1);
                double w_end = t + MEM_WIN_LEN; /* a request may wake us early */
                while (!wait_until(a, w_end) && clock_mono() < w_end)
                    serve_request(a);
                int used = mem_window(a, 0);
                double c = clock_mono();
                if (used) {
                    win_busy = c;
                    win_gap = MEM_WIN_GAP;
                } else if (c - win_busy > MEM_WIN_IDLE_S) {
                    win_gap = win_gap * 2 < MEM_WIN_GAP_MAX ? win_gap * 2 : MEM_WIN_GAP_MAX;
                }
                next_win = c + win_gap * (0.5 + (double)(rng_next(a) >> 11) * 0x1.0p-53);
            }
        }
        if (atomic_load(&a->stop_req)) {
            reason = a->stop_reason;
            break;
        }
        double late = clock_mono() - s; /* s: the deadline we slept to */
        if (late > a->late_max) a->late_max = late;
        double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        tick(a);
        double now = clock_mono();
        a->cost_s += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0; /* CPU, not wall */
        if (pop.at < pop.count) mem_pop_step(&pop, POP_STEP);
        if (wire_poll_in(a)) {
            reason = "stop";
            break;
        }
        if (a->now_hz > 0 && now >= a->next_now) {
            emit_now(a, now);
            a->next_now = now + 1.0 / a->now_hz;
        }
        if (now >= a->next_delta) {
            if (a->out.len < AGENT_OUT_SOFT) {
                char *role = atomic_exchange(&a->role, NULL);
                if (role) agent_emit_role(&a->out, role);
                free(role);
                agg_emit_delta(a, now - a->t0);
                double e0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
                mem_emit(a, now - a->t0);
                a->emit_cost_s += clock_s(CLOCK_THREAD_CPUTIME_ID) - e0;
                gpu_emit(a, now - a->t0);
                a->delta_seq++;
            }
            a->next_delta = now + DELTA_PERIOD;
        }
        wire_flush(a);
        if (a->closed) break; /* connection over: stop profiling, keep the program running */
        if (a->out.overflow) {
            reason = "overflow";
            break;
        }
    }
    if (!a->closed) {
        tick(a);
        a->out.max = 0; /* the closing messages always fit */
        agg_emit_delta(a, clock_mono() - a->t0);
        mem_emit(a, clock_mono() - a->t0);
        gpu_emit(a, clock_mono() - a->t0);
        struct agent_end e = {
            .ts = clock_mono() - a->t0,
            .reason = reason,
            .stats = 1,
            .samples = a->thread_samples,
            .cost_us = a->thread_samples ? a->cost_s * 1e6 / (double)a->thread_samples : 0.0,
            .late_max_ms = a->late_max * 1e3};
        agent_emit_end(&a->out, &e);
        wire_drain(a, 2.0);
    }
    int ended_under_us = a->closed; /* by the server, a peer error or the program */
    if (a->lost) wire_report_lost(a, clock_mono() - a->t0);
    tee_close(a);
    wire_close(a);
    pthread_mutex_lock(&a->mu);
    atomic_store(&a->alive, 0);
    pthread_cond_broadcast(&a->cv); /* requests waiting: no one will serve them */
    pthread_mutex_unlock(&a->mu);
    /* attached (module.c): the server let go, not the program: unload */
    if (a->on_own_end && !atomic_load(&a->stop_req)) a->on_own_end(a);
    /* LSP mode, connection gone without a "stop" (which releases us): the
     * server may have been killed (its end closes before its pid goes away)
     * or the program closed our socket. Watch its pid until the program ends. */
    if (ended_under_us && a->die_with_server && !a->released)
        while (!wait_until(a, clock_mono() + SERVER_WATCH_S))
            wire_server_check(a);
    return NULL;
}

int sampler_start(agent_t *a)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&a->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&a->mu, NULL);
    a->rng = ((uint64_t)getpid() << 32) ^ (uint64_t)(clock_mono() * 1e9) ^ 0x9E3779B97F4A7C15ull;
    if (!a->rng) a->rng = 1;
    /* the sampler must not receive the program's signals */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    atomic_store(&a->alive, 1);
    int r = pthread_create(&a->thread, NULL, sampler_main, a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0) {
        atomic_store(&a->alive, 0);
        return -r;
    }
    pthread_mutex_lock(&a->mu);
    while (!a->started)
        pthread_cond_wait(&a->cv, &a->mu);
    pthread_mutex_unlock(&a->mu);
    if (a->own_table) {
        agent_fd_t shared = a->fd; /* the same number in the program's table */
        ownfd_close(&shared);
    }
    return 0;
}

void sampler_stop(agent_t *a, const char *reason)
{
    pthread_mutex_lock(&a->mu);
    snprintf(a->stop_reason, sizeof a->stop_reason, "%s", reason);
    atomic_store(&a->stop_req, 1);
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    pthread_mutex_lock(&a->mu); /* a is freed next: no request may still wait on it */
    while (a->req_waiters)
        pthread_cond_wait(&a->cv, &a->mu);
    free(a->req_arg);
    a->req_arg = NULL;
    pthread_mutex_unlock(&a->mu);
}
