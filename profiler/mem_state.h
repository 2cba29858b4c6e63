/* mem_state.h: the memory profiler's shared state and the seams between
 * its files (docs/memory.md). Not an interface for the rest of the agent:
 * that is memhooks.h. The memory profiler is four files, by job:
 *   memhooks.c   the allocator hooks (PyMem wrappers, the shim's callbacks),
 *                the code-object watcher, start/stop/fork
 *   mem_sample.c sampled events: byte countdown, frame capture, the event
 *                queues, the live-sample table and its Bloom filter
 *   mem_window.c windows: patching CPython's allocator slots at run time,
 *                calibration of their cost
 *   mem_rows.c   the sampler thread's side: resolving events to lines, rows,
 *                kept-memory points and the delta JSON
 * Layers: mem_sample is below mem_window and mem_rows, memhooks is above
 * all three (tests/profiler/check_layers.py).
 *
 * Global state: g_mem (the allocator hooks cannot carry a pointer to the
 * agent beyond their ctx, and the shim's callbacks none) and the per-thread
 * t_mem, both defined in mem_sample.c. Both are the documented agent-part
 * exception of STYLE.md. Python headers: the hooks' types are CPython's. */
#ifndef HOTLINE_MEM_STATE_H
#define HOTLINE_MEM_STATE_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#endif
#include <Python.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "shim/memshim.h"
#include "walk.h"

#define MEM_FRAMES 24          /* raw frames kept per sampled event */
#define MEM_LIVE_CAP (1 << 17) /* live sampled allocations (slots) */
#define MEM_LIVE_MAX (MEM_LIVE_CAP / 2)
#define MEM_FILTER (1 << 17)                  /* filter bits (16 KiB: stays in L1) */
#define MEM_EVENTS 8192                       /* alloc/copy events per delta period */
#define MEM_FREES (MEM_LIVE_MAX + MEM_EVENTS) /* cannot overflow */
#define MEM_ROWS 65536                        /* lines with memory data */
#define MEM_SIDS (1 << 18)                    /* sampler side: live sample id -> row */
/* tables indexed by a hash masked with size - 1 */
_Static_assert((MEM_LIVE_CAP & (MEM_LIVE_CAP - 1)) == 0, "MEM_LIVE_CAP: a power of two");
_Static_assert((MEM_ROWS & (MEM_ROWS - 1)) == 0, "MEM_ROWS: a power of two");
_Static_assert((MEM_SIDS & (MEM_SIDS - 1)) == 0, "MEM_SIDS: a power of two");
_Static_assert(MEM_FILTER % 64 == 0 && ((MEM_FILTER / 64) & (MEM_FILTER / 64 - 1)) == 0,
               "MEM_FILTER: 64-bit words, a power of two of them");
/* Kept-memory points inside a delta period (docs/memory.md, "Timelines"):
 * a line gets one whenever its live bytes moved by MEM_PT_FRAC of its peak
 * (at least MEM_PT_MIN) since its last point; points closer than MEM_PT_GAP
 * share one (the later value wins), so a line sends at most ~50 a period. */
#define MEM_PTS 4096               /* points per delta period, all lines */
#define MEM_PT_MIN (1024.0 * 1024) /* bytes */
#define MEM_PT_FRAC 0.01
#define MEM_PT_GAP 0.002 /* seconds */
/* Code objects that die while events still name them (3.12+, see
 * code_watch): a filter of the code addresses in each event buffer, and at
 * most MEM_DEAD copies per delta period. */
#define MEM_CODEBITS 4096
#define MEM_DEAD 4096

enum { EV_ALLOC = 1, EV_COPY = 2 };

typedef struct {
    walk_code_copy_t c;
    uint64_t seq; /* events up to this one were recorded while it lived */
} mem_dead_t;
enum { ORIGIN_PY = 0, ORIGIN_NAT = 1 };

typedef struct {
    uintptr_t code;
    intptr_t instr;
} mem_rawfr_t;

typedef struct {
    uint64_t seq;
    double w;
    double t;     /* clock_mono() when recorded */
    uint32_t win; /* window of a windowed Python sample (weight scaled later), else 0 */
    uint8_t kind, origin, nfr;
    /* the innermost frame's code, as it was (mem_rows.c, resolve): its
     * co_filename object and first line, to tell a nested code (a
     * comprehension) from an exec'd one once it is gone */
    int32_t first0;
    uintptr_t file0;
    mem_rawfr_t fr[MEM_FRAMES];
} mem_ev_t;

typedef struct {
    uint64_t seq, sid;
    double t; /* clock_mono() when freed */
} mem_free_t;

typedef struct {
    uintptr_t p;
    uint64_t sid;
} mem_live_t;

typedef struct {
    PyMemAllocatorEx orig;
    PyMemAllocatorEx *slot; /* the runtime's own struct for this domain (windows) */
} mem_dom_t;

#define MEM_WIN_RING 4096 /* scales of recent windows, by id */
#define MEM_WIN_DIV 4.0   /* in windows the byte gap is mean / MEM_WIN_DIV */

typedef struct {
    uint32_t file, line;
    double alloc, freed, pyalloc, copy; /* since the last emit */
    double live, peak;                  /* since start */
    double base;                        /* live at the last emit: points are sent relative to it */
    double pt_live;                     /* live at the line's last point (volume sampling) */
    int pt_first, pt_last;              /* its points of this period in g_mem.pts, index + 1 */
    uint8_t dirty;
} mem_row_t;

typedef struct {
    int next; /* index + 1 of the row's next point, 0 = last */
    double t, live;
} mem_pt_t;

/* pymalloc serves requests up to 512 bytes from its own arenas (mmap, not
 * seen by the shim): only larger ones, or every one when PYTHONMALLOC names
 * another allocator, reach malloc and need the shim's guard. Frees need none:
 * the sampled entry is gone before the block is, so the shim's on_free
 * finds nothing. */
#define MEM_PYMALLOC_MAX 512

struct mem_state {
    int installed;   /* Python wrappers in place (inherited by forked children) */
    int pymalloc;    /* MEM/OBJ are pymalloc (PYTHONMALLOC unset or "pymalloc") */
    int64_t py_left; /* Python domains' byte countdown (GIL-serialised) */
    uint64_t rng;    /* its gap generator (GIL-serialised) */
    atomic_int on;
    double mean, copy_mean;
    pthread_mutex_t mu;
    /* producer side (under mu) */
    mem_live_t *live;
    int nlive;
    /* Bitmap filter of live sampled pointers. Bits are only set (under mu);
     * removals leave them, so it is rebuilt from the live hash into the
     * other buffer and the pointer swapped (mem_emit) once stale bits
     * outnumber live entries. A reader holds a buffer for nanoseconds; a
     * buffer is rewritten only at the next rebuild, a second or more later. */
    _Atomic(uint64_t *) filter;
    uint64_t *fbuf[2];
    uint8_t fcount[2][MEM_FILTER / 64]; /* live entries per word (255: stuck) */
    int fcur;
    uint64_t fstale;
    mem_ev_t *ev[2];
    mem_free_t *fr[2];
    int nev, nfr, cur;
    uint64_t codebits[2][MEM_CODEBITS / 64]; /* code addresses in ev[b] */
    mem_dead_t *dead;                        /* copies of codes freed since the last swap */
    int ndead, capdead;
    uint64_t seq;
    uint64_t dropped;
    /* sampler side */
    mem_row_t *rows;
    int nrows;
    int *row_slots; /* MEM_ROWS * 2, row index + 1 */
    uint64_t *sid_key;
    int32_t *sid_row; /* -1 unattributed; slot empty when key == 0 */
    float *sid_w;     /* its weight in bytes */
    double total_live, total_peak;
    mem_pt_t *pts; /* MEM_PTS, this period's points */
    int npts;
    int peak_file, peak_line;
    int changed;
    /* Python domains and the shim; dom_raw is wrapped only in windows_raw
     * (no shim: it stands in for the shim's malloc and free) */
    mem_dom_t dom_mem, dom_obj, dom_raw;
    struct hotline_shim_hooks hooks;
    hotline_shim_register_fn shim_register;
    hotline_shim_guard_fn shim_guard;
    /* the interpreter's code (caller addresses in it are Python's own) */
    uintptr_t py_lo, py_hi;
    /* windowed Python-domain sampling (see "windows" below) */
    int windowed;
    _Atomic uint32_t win_id; /* latest window opened (events carry it) */
    int win_open;
    /* Written by the wrappers (GIL), frees of sampled blocks (any thread) and
     * the sampler thread (no GIL): relaxed atomics, read-modify-write as a
     * load and a store (no lock prefix on the hot path). A lost update only
     * makes the window's cost estimate a little low. */
    _Atomic uint64_t win_calls;  /* wrapper calls since the window opened */
    _Atomic double win_sample_s; /* time spent taking samples in it */
    double win_t0, win_prev, call_cost, win_mean;
    /* call_cost measured (windows open only then); the calibration is
     * queued as a pending call of the main thread (mem_window_calibrate) */
    atomic_int calibrated, cal_queued;
    int cal_running; /* under mem_window.c's win_mu: no window may open */
    /* what the windows were (sampler thread writes, stats() reads: relaxed
     * relaxed loads and stores): how many closed, the sum of their lengths
     * and of the spans they stood for, the longest span */
    _Atomic uint64_t win_n;
    _Atomic double win_len_sum, win_span_sum, win_span_max;
    double py_mean;   /* the Python domains' byte gap: mean, or win_mean in windows */
    const char *mode; /* "wrappers", "windows", "windows_raw" or "shim" (docs/memory.md) */
    float win_scale[MEM_WIN_RING];
};
/* hidden: the hot paths (every allocation and free of the program) reach
 * them PC-relative, as when they were static, not through the GOT */
#define MEM__HIDDEN __attribute__((visibility("hidden")))
extern MEM__HIDDEN struct mem_state g_mem; /* mem_sample.c */

struct mem_tls {
    int *guard;
    int dummy;
    uintptr_t tstate;
    /* the RAW domain's countdown (windows_raw): RAW is called without the
     * GIL, so unlike the MEM/OBJ one it is per thread, as the shim's is */
    int64_t raw_left;
    uint64_t raw_rng; /* 0 until the thread's first RAW allocation */
};
extern MEM__HIDDEN __thread struct mem_tls t_mem; /* mem_sample.c */

/* The calling thread's shim guard (a dummy without the shim): while raised,
 * its allocations are not reported. */
static inline int *mem__guard(void)
{
    if (!t_mem.guard) t_mem.guard = g_mem.shim_guard ? g_mem.shim_guard() : &t_mem.dummy;
    return t_mem.guard;
}

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static inline void win_count_call(void)
{
    atomic_store_explicit(&g_mem.win_calls,
                          atomic_load_explicit(&g_mem.win_calls, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

static inline void win_add_cost(double s)
{
    atomic_store_explicit(&g_mem.win_sample_s,
                          atomic_load_explicit(&g_mem.win_sample_s, memory_order_relaxed) + s,
                          memory_order_relaxed);
}

/* Blocked Bloom filter of live sampled pointers: one 64-bit word per
 * pointer, two bits in it, so a check is one load and false positives (each
 * costs the lock and a probe of the live hash) are about the square of the
 * word occupancy. */
static inline unsigned filter_cell(uintptr_t p, uint64_t *mask)
{
    uint64_t h = mix(p);
    *mask = (1ull << ((h >> 20) & 63)) | (1ull << ((h >> 26) & 63));
    return (unsigned)(h & (MEM_FILTER / 64 - 1));
}

/* Bit of a code address in g_mem.codebits (code objects named by queued events). */
static inline unsigned code_bit(uintptr_t code)
{
    return (unsigned)(mix(code) % MEM_CODEBITS);
}

/* ---- mem_sample.c ---- */
double mem__countdown_gap(void);
uint64_t mem__countdown_hit(void);
/* The calling thread's RAW countdown crossed zero: its sample points (0 on
 * the thread's first RAW allocation, which only draws its first gap). */
uint64_t mem__raw_countdown_hit(void);
/* Queue one sampled event (alloc or copy) with the frames of tstate; p
 * enters the live table when kind is EV_ALLOC. Any thread. */
void mem__record(void *p, size_t n, uint64_t k, int kind, int origin, uintptr_t tstate, int direct,
                 double mean, uint32_t win);
void mem__free_hit(void *p);
/* under mu; zeroed: the tables are fresh from calloc, their memsets (4.5 MB
 * of pages touched at every start-up) are skipped */
void mem__sample_reset(int zeroed);
void mem__filter_rebuild_if_stale(void); /* under mu */

/* Every free of the program passes here: the filter check is inlined into
 * the callers and the rare hit goes out of line, so the common path costs a
 * hash, one load and no call or register spills (it was 6% of an
 * allocation-heavy program's CPU as a function of its own). */
static inline __attribute__((always_inline)) void mem_free_ptr(void *p)
{
    uint64_t m;
    unsigned w = filter_cell((uintptr_t)p, &m);
    const uint64_t *f = atomic_load_explicit(&g_mem.filter, memory_order_acquire);
    if (__builtin_expect((__atomic_load_n(&f[w], __ATOMIC_RELAXED) & m) == m, 0)) mem__free_hit(p);
}

/* ---- mem_window.c ---- */
int mem__win_set(int open);
void mem__win_lock(void); /* win_mu, for fork: prepare locks, parent and child unlock */
void mem__win_unlock(void);
void mem__find_py_text(char *path, size_t cap);
/* Install the window wrappers and find CPython's slots (GIL held, once):
 * 1 when windows are on, 0 when the slots were not found (the caller then
 * wraps for good). */
int mem__win_install(const char *py_path);
/* 1 when the MEM and OBJ slots still hold ours (a window's or the closed
 * state's), nothing on top. */
int mem__win_slots_ours(void);

/* ---- mem_rows.c ---- */
void mem__rows_reset(int zeroed); /* under mu; zeroed: as mem__sample_reset */

#endif
