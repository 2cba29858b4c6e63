/* memhooks.h: memory profiling (docs/memory.md). mem_start with the GIL
 * held before sampler_start; mem_stop with the GIL held after sampler_stop.
 * mem_emit / mem_thread_ignore / mem_window: sampler thread only. */
#ifndef HOTLINE_MEMHOOKS_H
#define HOTLINE_MEMHOOKS_H

#include <stdatomic.h>
#include <stdint.h>

#include "memread.h"

typedef struct agent agent_t;

int mem_start(agent_t *a, double mean_kb); /* 0 or -errno */
void mem_stop(agent_t *a);
void mem_emit(agent_t *a, double ts);
void mem_thread_ignore(void);
/* the tables the sampler and the hooks probe at random, into q to be
 * backed (memread.h, mem_pop_t): sampler thread */
void mem_populate_tables(mem_pop_t *q);
void mem_after_fork(void); /* child: forget the parent's samples */
int mem_shim_loaded(void); /* 1 when the LD_PRELOAD shim registered */
const char *
mem_mode(void); /* how Python allocations are seen: "wrappers", "windows", "shim", "off" */
/* open (1) / close (0) a window of the Python-domain hooks, when
 * mem_windows_on() (docs/memory.md, "Windows") */
int mem_windows_on(void);
/* windows so far: count, mean length and mean span (s), longest span (s),
 * the calibrated cost of a wrapped call (s); zeros without windows */
typedef struct {
    uint64_t n;
    double len_mean, span_mean, span_max, call_cost;
} mem_win_stats_t;
void mem_window_stats(mem_win_stats_t *st);
/* Sampler thread, while mem_window_calibrated() is 0, once the program has
 * run a while: have what a window costs the program measured (~4 ms with
 * the GIL; windows use a guess until then), on the main thread as a
 * pending call, or when that does not run, on this thread once the GIL
 * will come soon (gil_soon: it is free, or its holder runs bytecode; see
 * mem_window.c). 1 when this thread took the GIL (time went by). */
int mem_window_calibrate(const atomic_int *stop, int gil_soon);
int mem_window_calibrated(void); /* 1 when measured, or no windows */
/* Open (1) or close (0) a window. Closing returns 1 when the window saw a
 * call of the Python domains (the program allocated in it), else 0. */
int mem_window(agent_t *a, int open);

#endif
