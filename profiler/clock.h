/* clock.h: the agent's clocks, header only (no state, no other module).
 *
 * Every file that times something (the sampler's ticks, the wire's drain
 * deadline, memory events) reads the same monotonic clock from here, so
 * that no module has to call into the sampler for the time of day: that
 * call was the edge that closed the sampler -> aggregate -> wire -> sampler
 * cycle (profiler/README.md, "Layers").
 */
#ifndef HOTLINE_CLOCK_H
#define HOTLINE_CLOCK_H

#include <time.h>

/* Seconds of `id`, or -1 when it cannot be read (a thread clock of a
 * thread that is gone). */
static inline double clock_s(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0) return -1;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CLOCK_MONOTONIC in seconds: every time stamp and deadline of the agent. */
static inline double clock_mono(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* CPU clock of any thread of this process by native TID (Linux encoding
 * of CPUCLOCK_SCHED | PERTHREAD); -1 once the thread is gone. */
static inline double clock_thread_cpu(long tid)
{
    return clock_s((clockid_t)((~(unsigned)tid << 3) | 6));
}

#endif
