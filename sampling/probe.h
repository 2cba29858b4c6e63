/* probe.h: "is this thread running Python or C code?" from pairs of frame
 * probes (method and measurements: docs/sampling.md). Pure code, no I/O:
 * the agent's sampler (profiler/sampler.c) and hotline attach feed it what
 * they read, tests/unit/test_probe.c feeds it synthetic observations,
 * including the ones a loaded VM produces.
 *
 * One window per tick and thread: probe_start(), probe_pair() for each
 * later probe, then probe_verdict().
 */
#ifndef HOTLINE_PROBE_H
#define HOTLINE_PROBE_H

#include <stdint.h>

/* What a thread spends a sample on: waiting (sleep, I/O, locks, the GIL),
 * running bytecode, running C code. */
enum { CAT_SYS = 0, CAT_PY = 1, CAT_NAT = 2 };

/* CPU time a thread must accumulate with its frame state frozen for that to
 * mean "inside C code". Not a few microseconds: in a VM a thread is charged
 * ~20 us of kernel time (interrupt, context switch) when it is preempted,
 * without running a single bytecode. */
#define PROBE_MIN_FROZEN 100e-6
/* ...over at least this many frozen pairs: a short loop revisits its frame
 * states (instruction, recycled object addresses), so a pair can repeat a
 * state by chance; `while pc() < end: pass` repeats in ~40% of pairs, so k
 * pairs in a row happen ~0.4^k of the time. */
#define PROBE_MIN_PAIRS 10
/* CPU burnt, frame frozen, without holding the GIL at either end of a pair:
 * bytecode cannot run without the GIL, and a thread waiting for it is off
 * CPU, so this is C code (e.g. numpy with the GIL released). */
#define PROBE_MIN_NOGIL 30e-6
/* A pair the sampler did not see through: its wall time exceeded this (the
 * sampler's vCPU woke late, or the VM was paused or its vCPUs stolen).
 * Across such a gap a thread's CPU clock can advance without the thread
 * running (steal time is only subtracted once the vCPU is back), and real
 * movement can end on the same frame state by chance, so the pair proves
 * nothing frozen. A movement across it still counts. On the 2-vCPU VMs
 * here a 20 us sleep between probes takes 50-200 us. */
#define PROBE_MAX_PAIR 500e-6
/* Same frame state as at the end of the previous tick after this much CPU
 * since then: C code (no interpreter loop leaves its frame untouched that
 * long). Decides threads that got too little CPU inside the window. */
#define PERIOD_MIN_FROZEN 1e-3

typedef struct {
    uint64_t sig, first, prev; /* latest, first of this window, last of previous */
    int nogil, first_nogil, prev_nogil;
    double cpu, wall; /* thread CPU clock, sampler's clock at the latest probe */
    double cpu_start; /* thread CPU clock at the window's first probe */
    int moved, frozen_n;
    double frozen_s, nogil_s;
} probe_t;

/* New window: the first probe (sig, GIL not held by the thread, the
 * thread's CPU clock, the sampler's monotonic clock).
 * A thread not probed this tick starts one with sig 0, so the next window
 * has no previous state to match. */
static inline void probe_start(probe_t *p, uint64_t sig, int nogil, double cpu, double wall)
{
    p->prev = p->sig;
    p->prev_nogil = p->nogil;
    p->sig = p->first = sig;
    p->nogil = p->first_nogil = nogil;
    p->cpu = p->cpu_start = cpu;
    p->wall = wall;
    p->moved = p->frozen_n = 0;
    p->frozen_s = p->nogil_s = 0;
}

/* The window needs no more probes: movement is definitive, and so is C code
 * that released the GIL. Frozen evidence never ends it: a freeze can be the
 * hypervisor running another VM on this vCPU (the guest charges that time to
 * the thread; measured here: 1-2% of 1 ms windows of a pure-Python loop saw
 * 16 frozen pairs and ~180 us of such "CPU"), and a movement after it
 * proves Python code ran. */
static inline int probe_done(const probe_t *p)
{
    return p->moved || p->nogil_s >= PROBE_MIN_NOGIL;
}

/* The next probe of the window. Returns 1 when the pair is frozen evidence
 * (until PROBE_MIN_PAIRS the sampler then probes again at once: a tight loop
 * is as likely to have moved after 2 us as after 100 us). */
static inline int probe_pair(probe_t *p, uint64_t sig, int nogil, double cpu, double wall)
{
    double dc = cpu - p->cpu, pair_wall = wall - p->wall;
    int frozen = 0;
    if (sig != p->sig) {
        p->moved++;
    } else if (pair_wall <= PROBE_MAX_PAIR && dc > 0) {
        p->frozen_s += dc;
        p->frozen_n++;
        if (nogil && p->nogil) p->nogil_s += dc;
        frozen = 1;
    }
    p->sig = sig;
    p->nogil = nogil;
    p->cpu = cpu;
    p->wall = wall;
    return frozen;
}

/* Sleep before this thread's next probe round: gap (the sampler's
 * PROBE_GAP), or, in a long C call (no GIL at the latest probe, last_cat
 * CAT_NAT, busy fraction u >= 0.9 since the previous tick), the rest of the
 * no-GIL CPU that decides it (+5 us: CPU clocks and wake-ups are late by a
 * few us) in one piece. Each round wakes the sampler, and on a 2-core
 * machine whose other core is busy every wake-up preempts the program's
 * thread (docs/sampling.md, "Measured", numeric workloads): short rounds
 * starve the very thread whose CPU time they wait for. Not for other
 * threads: a longer window sees more threads wake from a sleep and run
 * (test_alternate.py's sleep line read 82-86% system in the one run that
 * gave every thread without the GIL the longer sleeps). */
static inline double probe_gap(const probe_t *p, int last_cat, double u, double gap)
{
    if (p->moved || !p->nogil || last_cat != CAT_NAT || u < 0.9) return gap;
    double need = PROBE_MIN_NOGIL - p->nogil_s + 5e-6;
    return need > gap ? need : gap;
}

/* CAT_PY or CAT_NAT, or -1: undecided, keep the last
 * category (the thread got too little CPU inside the window). tick_cpu is
 * the thread's CPU time since the previous tick. */
static inline int probe_verdict(const probe_t *p, double tick_cpu)
{
    if (p->moved) return CAT_PY;
    if (p->frozen_s >= PROBE_MIN_FROZEN && p->frozen_n >= PROBE_MIN_PAIRS) return CAT_NAT;
    if (p->nogil_s >= PROBE_MIN_NOGIL) return CAT_NAT;
    /* frozen since the previous tick while it burnt PERIOD_MIN_FROZEN of
     * CPU: without the GIL at both ends and burning CPU without it now, or
     * with frozen pairs now. Not on the state alone: a loop that computes,
     * then sleeps, is back at the same sleep call (same frame, instruction,
     * no GIL) at the next tick after ms of Python (test_alternate.py's busy
     * line read 10-40% native) */
    if (p->first == p->prev && tick_cpu >= PERIOD_MIN_FROZEN &&
        ((p->prev_nogil && p->first_nogil && p->nogil_s > 0) || p->frozen_n >= PROBE_MIN_PAIRS / 2))
        return CAT_NAT;
    return -1;
}

#endif
