/* memhooks.c: memory profiling inside the agent (docs/memory.md).
 *
 * Why: per line, how much memory is allocated, freed, kept and copied, and
 * by whom (Python objects vs native code), at a cost that does not depend on
 * how many objects the program makes.
 *
 * Two sources feed one sampler:
 *   - PyMem_SetAllocator wrappers on the MEM and OBJ domains (origin python).
 *     The RAW domain is not wrapped: it is malloc, which the shim sees.
 *   - the LD_PRELOAD shim (shim/memshim.c, origin native), when loaded.
 * Around every call into Python's own allocator the shim's per-thread guard
 * is raised, so pymalloc's (or PYTHONMALLOC=malloc's) underlying mallocs are
 * never counted a second time.
 *
 * Sampling is by bytes: a countdown (the shim's per thread, the Python
 * domains' per process under the GIL) with randomised gaps (uniform
 * in [mean/2, 3*mean/2)); an allocation that contains k sample points stands
 * for k*mean bytes (exactly its size when it is larger than any gap). A
 * sampled allocation records the raw innermost frames of the *allocating
 * thread itself* (direct reads of its own frames: with the GIL from the
 * Python allocator; from the shim via the thread state that
 * PyGILState_GetThisThreadState finds for it, see own_tstate) and enters a hash of live sampled pointers. Every free
 * checks a bitmap filter on the pointer only (one L1-resident load for the common
 * unsampled case); a hit removes the entry and queues a free event.
 *
 * Events go into double-buffered queues under one mutex (samples are rare);
 * the sampler thread swaps them every delta (mem_emit), resolves frames with
 * its code cache (walk_frame), charges the innermost profiled line, and
 * sends the per-line increments as an extra `delta` message.
 *
 * Global state: g_mem (the allocator hooks cannot carry a pointer to the
 * agent beyond their ctx, and the shim's callbacks none) and the per-thread
 * t_mem. Both are the documented agent-part exception of STYLE.md.
 */
#define PY_SSIZE_T_CLEAN
#define Py_BUILD_CORE 1
#include <Python.h>

#include "memhooks.h"

#include "agent.h"
#include "buf.h"
#include "clock.h"
#include "keys.h"
#include "memread.h"
#include "walk.h"
#include "shim/memshim.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compat_frame.h"

#define MEM_FRAMES 24           /* raw frames kept per sampled event */
#define MEM_LIVE_CAP (1 << 17)  /* live sampled allocations (slots) */
#define MEM_LIVE_MAX (MEM_LIVE_CAP / 2)
#define MEM_FILTER (1 << 17)    /* filter bits (16 KiB: stays in L1) */
#define MEM_EVENTS 8192         /* alloc/copy events per delta period */
#define MEM_FREES (MEM_LIVE_MAX + MEM_EVENTS) /* cannot overflow */
#define MEM_ROWS 65536          /* lines with memory data */
#define MEM_SIDS (1 << 18)      /* sampler side: live sample id -> row */
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
    double base;    /* live at the last emit: points are sent relative to it */
    double pt_live; /* live at the line's last point (volume sampling) */
    int pt_first, pt_last; /* its points of this period in g_mem.pts, index + 1 */
    uint8_t dirty;
} mem_row_t;

typedef struct {
    int next; /* index + 1 of the row's next point, 0 = last */
    double t, live;
} mem_pt_t;

static struct {
    int installed; /* Python wrappers in place (inherited by forked children) */
    int pymalloc;  /* MEM/OBJ are pymalloc (PYTHONMALLOC unset or "pymalloc") */
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
    mem_dead_t *dead; /* copies of codes freed since the last swap */
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
    /* Python domains and the shim */
    mem_dom_t dom_mem, dom_obj;
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
    _Atomic uint64_t win_calls;   /* wrapper calls since the window opened */
    _Atomic double win_sample_s;  /* time spent taking samples in it */
    double win_t0, win_prev, call_cost, win_mean;
    double py_mean;   /* the Python domains' byte gap: mean, or win_mean in windows */
    const char *mode; /* "wrappers", "windows" or "shim" (docs/memory.md) */
    float win_scale[MEM_WIN_RING];
} g_mem = {.mu = PTHREAD_MUTEX_INITIALIZER};

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

static __thread struct {
    int *guard;
    int dummy;
    uintptr_t tstate;
} t_mem;

static int *guard_ptr(void)
{
    if (!t_mem.guard)
        t_mem.guard = g_mem.shim_guard ? g_mem.shim_guard() : &t_mem.dummy;
    return t_mem.guard;
}

void mem_thread_ignore(void)
{
    (*guard_ptr())++; /* this thread's allocations are never reported */
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* The Python domains' countdown is one per process, not per thread: MEM and
 * OBJ are only ever called with the GIL held, which serialises it, and a
 * global costs no thread-local lookup on the hot path (this module is
 * dlopen'ed: its TLS goes through __tls_get_addr). The shim keeps its own
 * per-thread countdowns (initial-exec TLS, cheap there). */
static double countdown_gap(void)
{
    if (!g_mem.rng)
        g_mem.rng = mix((uint64_t)(uintptr_t)&g_mem ^ (uint64_t)getpid()) | 1;
    g_mem.rng ^= g_mem.rng << 13;
    g_mem.rng ^= g_mem.rng >> 7;
    g_mem.rng ^= g_mem.rng << 17;
    double u = (double)(g_mem.rng >> 11) * 0x1.0p-53;
    return g_mem.py_mean * (0.5 + u);
}

/* The countdown crossed zero: number of sample points, next gap set. */
static __attribute__((noinline, cold)) uint64_t countdown_hit(void)
{
    uint64_t k = 0;
    if ((double)(-g_mem.py_left) > 64 * g_mem.mean) {
        k = (uint64_t)((double)(-g_mem.py_left) / g_mem.mean);
        g_mem.py_left += (int64_t)((double)k * g_mem.mean);
    }
    while (g_mem.py_left <= 0) {
        k++;
        g_mem.py_left += (int64_t)countdown_gap() + 1;
    }
    return k;
}

/* Number of sample points in n more bytes; GIL held. Inlined: every
 * allocation of the program passes here. */
static inline __attribute__((always_inline)) uint64_t countdown(size_t n)
{
    g_mem.py_left -= (int64_t)n;
    if (__builtin_expect(g_mem.py_left > 0, 1))
        return 0;
    return countdown_hit();
}

/* ---- frames of the calling thread ---- */

static uintptr_t ts_frame_direct(PyThreadState *ts)
{
#if PY_VERSION_HEX >= 0x030D0000
    return (uintptr_t)ts->current_frame;
#elif PY_VERSION_HEX >= 0x030B0000
    return ts->cframe ? (uintptr_t)ts->cframe->current_frame : 0;
#else
    return (uintptr_t)ts->frame;
#endif
}

/* direct: the caller holds the GIL and tstate is its own, current one. */
static int capture(uintptr_t tstate, int direct, mem_rawfr_t *out)
{
    if (!tstate)
        return 0;
    uintptr_t f;
    if (direct) {
        f = ts_frame_direct((PyThreadState *)tstate);
    } else {
        PyThreadState ts;
        if (mem_read(tstate, &ts, sizeof ts) != 0)
            return 0;
        f = compat_ts_frame(&ts);
    }
    int n = 0;
    for (int guard = 0; f && n < MEM_FRAMES && guard < 4 * MEM_FRAMES; guard++) {
        compat_frame_t copy;
        const compat_frame_t *fr;
        if (direct) {
            fr = (const compat_frame_t *)f;
        } else {
            if (mem_read(f, &copy, sizeof copy) != 0)
                break;
            fr = &copy;
        }
        if (!compat_frame_is_shim(fr)) {
            out[n].code = compat_frame_code(fr);
            out[n].instr = compat_frame_instr(fr);
            n++;
        }
        f = compat_frame_back(fr);
    }
    return n;
}

/* ---- live hash and filter (under mu) ---- */

/* Blocked Bloom filter: one 64-bit word per pointer, two bits in it, so a
 * check is one load and false positives (each costs the lock and a probe of
 * the live hash) are about the square of the word occupancy. */
static unsigned filter_cell(uintptr_t p, uint64_t *mask)
{
    uint64_t h = mix(p);
    *mask = (1ull << ((h >> 20) & 63)) | (1ull << ((h >> 26) & 63));
    return (unsigned)(h & (MEM_FILTER / 64 - 1));
}

static unsigned live_slot(uintptr_t p)
{
    return (unsigned)((mix(p) >> 20) & (MEM_LIVE_CAP - 1));
}

static void live_put(uintptr_t p, uint64_t sid)
{
    unsigned i = live_slot(p);
    while (g_mem.live[i].p && g_mem.live[i].p != p)
        i = (i + 1) & (MEM_LIVE_CAP - 1);
    if (!g_mem.live[i].p) {
        g_mem.nlive++;
        uint64_t m;
        unsigned w = filter_cell(p, &m);
        uint64_t *f = g_mem.fbuf[g_mem.fcur];
        __atomic_fetch_or(&f[w], m, __ATOMIC_RELAXED);
        if (g_mem.fcount[g_mem.fcur][w] < 255)
            g_mem.fcount[g_mem.fcur][w]++;
    }
    g_mem.live[i].p = p;
    g_mem.live[i].sid = sid;
}

/* 1 and the entry in *out when p was live (removed), else 0. */
static int live_take(uintptr_t p, mem_live_t *out)
{
    unsigned i = live_slot(p);
    while (g_mem.live[i].p && g_mem.live[i].p != p)
        i = (i + 1) & (MEM_LIVE_CAP - 1);
    if (!g_mem.live[i].p)
        return 0;
    *out = g_mem.live[i];
    /* A freed block is reused at once by pymalloc: a stale bit on a hot
     * address would send every later free of it through the lock. Clear the
     * word when its last live entry goes. */
    uint64_t m;
    unsigned w = filter_cell(p, &m);
    uint8_t *cnt = &g_mem.fcount[g_mem.fcur][w];
    if (*cnt < 255 && --*cnt == 0)
        __atomic_store_n(&g_mem.fbuf[g_mem.fcur][w], 0, __ATOMIC_RELAXED);
    else
        g_mem.fstale++;
    g_mem.nlive--;
    /* backward-shift deletion keeps probe chains intact without tombstones */
    unsigned j = i;
    for (;;) {
        g_mem.live[i].p = 0;
        for (;;) {
            j = (j + 1) & (MEM_LIVE_CAP - 1);
            if (!g_mem.live[j].p)
                return 1;
            unsigned k = live_slot(g_mem.live[j].p);
            if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
                continue;
            break;
        }
        g_mem.live[i] = g_mem.live[j];
        i = j;
    }
}

/* ---- producers ---- */

static unsigned code_bit(uintptr_t code)
{
    return (unsigned)(mix(code) % MEM_CODEBITS);
}

static void record(void *p, size_t n, uint64_t k, int kind, int origin, uintptr_t tstate,
                   int direct, double mean, uint32_t win)
{
    double w = (double)n >= 1.5 * mean ? (double)n : (double)k * mean;
    mem_rawfr_t fr[MEM_FRAMES];
    int nfr = capture(tstate, direct, fr);
    pthread_mutex_lock(&g_mem.mu);
    if (!atomic_load_explicit(&g_mem.on, memory_order_relaxed) || g_mem.nev >= MEM_EVENTS ||
        (kind == EV_ALLOC && g_mem.nlive >= MEM_LIVE_MAX)) {
        g_mem.dropped++;
        pthread_mutex_unlock(&g_mem.mu);
        return;
    }
    mem_ev_t *e = &g_mem.ev[g_mem.cur][g_mem.nev++];
    e->seq = ++g_mem.seq;
    e->w = w;
    e->t = clock_mono(); /* under mu: times follow seq */
    e->win = win;
    e->kind = (uint8_t)kind;
    e->origin = (uint8_t)origin;
    e->nfr = (uint8_t)nfr;
    memcpy(e->fr, fr, (size_t)nfr * sizeof *fr);
    for (int i = 0; i < nfr; i++) {
        unsigned bit = code_bit(fr[i].code);
        g_mem.codebits[g_mem.cur][bit / 64] |= 1ull << (bit % 64);
    }
    if (kind == EV_ALLOC)
        live_put((uintptr_t)p, e->seq);
    pthread_mutex_unlock(&g_mem.mu);
}

/* Every free of the program passes here: the filter check is inlined into
 * the callers and the rare hit goes out of line, so the common path costs a
 * hash, one load and no call or register spills (it was 6% of an
 * allocation-heavy program's CPU as a function of its own). */
static void mem_free_hit(void *p);

static inline __attribute__((always_inline)) void mem_free_ptr(void *p)
{
    uint64_t m;
    unsigned w = filter_cell((uintptr_t)p, &m);
    const uint64_t *f = atomic_load_explicit(&g_mem.filter, memory_order_acquire);
    if (__builtin_expect((__atomic_load_n(&f[w], __ATOMIC_RELAXED) & m) == m, 0))
        mem_free_hit(p);
}

static __attribute__((noinline, cold)) void mem_free_hit(void *p)
{
    double t0 = g_mem.win_open ? clock_mono() : 0;
    pthread_mutex_lock(&g_mem.mu);
    mem_live_t le;
    if (g_mem.live && live_take((uintptr_t)p, &le) && g_mem.nfr < MEM_FREES) {
        mem_free_t *f = &g_mem.fr[g_mem.cur][g_mem.nfr++];
        f->seq = ++g_mem.seq;
        f->sid = le.sid;
        f->t = clock_mono();
    }
    if (t0 > 0) /* a sampled block's free is part of a window's cost (racy add: approximate) */
        win_add_cost(clock_mono() - t0);
    pthread_mutex_unlock(&g_mem.mu);
}

static __attribute__((noinline, cold)) void py_sample(void *p, size_t n, uint64_t k)
{
    PyThreadState *ts = PyGILState_GetThisThreadState();
    t_mem.tstate = (uintptr_t)ts;
    int *g = guard_ptr();
    (*g)++;
    record(p, n, k, EV_ALLOC, ORIGIN_PY, (uintptr_t)ts, 1, g_mem.mean, 0);
    (*g)--;
}

/* pymalloc serves requests up to 512 bytes from its own arenas (mmap, not
 * seen by the shim): only larger ones, or every one when PYTHONMALLOC names
 * another allocator, reach malloc and need the shim's guard. Frees need none:
 * the sampled entry is gone before the block is, so the shim's on_free
 * finds nothing. */
#define MEM_PYMALLOC_MAX 512

static void *py_malloc(void *ctx, size_t n)
{
    mem_dom_t *d = ctx;
    void *p;
    int *g = NULL;
    if (n > MEM_PYMALLOC_MAX || !g_mem.pymalloc) {
        g = guard_ptr();
        (*g)++;
        p = d->orig.malloc(d->orig.ctx, n);
        (*g)--;
        if (*g)
            return p; /* nested inside a hook of ours */
    } else {
        p = d->orig.malloc(d->orig.ctx, n);
    }
    uint64_t k;
    if (p && atomic_load_explicit(&g_mem.on, memory_order_relaxed) && (k = countdown(n)))
        py_sample(p, n, k);
    return p;
}

static void *py_calloc(void *ctx, size_t a, size_t b)
{
    mem_dom_t *d = ctx;
    size_t n;
    if (__builtin_mul_overflow(a, b, &n))
        return d->orig.calloc(d->orig.ctx, a, b); /* fails: nothing to count */
    void *p;
    if (n > MEM_PYMALLOC_MAX || !g_mem.pymalloc) {
        int *g = guard_ptr();
        (*g)++;
        p = d->orig.calloc(d->orig.ctx, a, b);
        (*g)--;
        if (*g)
            return p;
    } else {
        p = d->orig.calloc(d->orig.ctx, a, b);
    }
    uint64_t k;
    if (p && atomic_load_explicit(&g_mem.on, memory_order_relaxed) && (k = countdown(n)))
        py_sample(p, n, k);
    return p;
}

static void *py_realloc(void *ctx, void *old, size_t n)
{
    mem_dom_t *d = ctx;
    int on = atomic_load_explicit(&g_mem.on, memory_order_relaxed);
    if (old && on)
        mem_free_ptr(old);
    int *g = guard_ptr();
    (*g)++;
    void *p = d->orig.realloc(d->orig.ctx, old, n);
    (*g)--;
    uint64_t k;
    if (p && on && !*g && (k = countdown(n)))
        py_sample(p, n, k);
    return p;
}

static void py_free(void *ctx, void *p)
{
    mem_dom_t *d = ctx;
    if (p && atomic_load_explicit(&g_mem.on, memory_order_relaxed))
        mem_free_ptr(p);
    d->orig.free(d->orig.ctx, p);
}

/* ---- windows ----
 *
 * Wrapping the MEM and OBJ domains costs more than the wrappers' own
 * instructions: optimised builds (Debian's python3.11, PGO + LTO) inline
 * pymalloc into PyObject_Malloc behind a check that the allocator is the
 * default one, and any hook sends every allocation down the slow indirect
 * path (+45% wall time on a loop of small dicts and strings). So when the
 * shim is loaded and the domains are plain pymalloc, the hooks are in place
 * only during short windows that the sampler thread opens between its ticks
 * (~0.2 ms every ~2 ms, jittered: ~10% of the time, and short enough that a
 * burst of a few ms is seen by several); outside them the runtime's structs
 * hold pymalloc's own functions again.
 *   - Allocations up to MEM_PYMALLOC_MAX bytes are sampled in windows only,
 *     with a gap of mean / MEM_WIN_DIV, and a sample stands for the time
 *     around its window: weight scale = (time since the previous window
 *     closed) / (window length), both less the time the wrappers themselves
 *     took (calls x calibrated cost: the program runs slower in a window).
 *   - A sampled small block is allocated with MEM_PYMALLOC_MAX + 1 bytes, so
 *     pymalloc takes it from malloc (guard raised): its free, whenever it
 *     comes, goes pymalloc -> PyMem_RawFree -> free, where the shim sees
 *     it. Frees are therefore never wrapped.
 *   - Larger requests are not counted here at all: pymalloc passes them to
 *     malloc and the shim counts every one of them, windows or not; the
 *     caller's address says they are Python's (py_lo/py_hi).
 */

static void *win_sample(mem_dom_t *d, void *old, size_t n, int calloc_)
{
    double t0 = clock_mono();
    uint64_t k = countdown_hit();
    size_t big = MEM_PYMALLOC_MAX + 1;
    int *g = guard_ptr();
    (*g)++;
    void *p = old ? d->orig.realloc(d->orig.ctx, old, big)
              : calloc_ ? d->orig.calloc(d->orig.ctx, 1, big)
                        : d->orig.malloc(d->orig.ctx, big);
    (*g)--;
    if (p && !*g && atomic_load_explicit(&g_mem.on, memory_order_relaxed)) {
        PyThreadState *ts = PyGILState_GetThisThreadState();
        (*g)++;
        record(p, n, k, EV_ALLOC, ORIGIN_PY, (uintptr_t)ts, 1, g_mem.win_mean,
               atomic_load_explicit(&g_mem.win_id, memory_order_relaxed));
        (*g)--;
    }
    win_add_cost(clock_mono() - t0); /* the window's own cost, see mem_window */
    return p;
}

static void *win_malloc(void *ctx, size_t n)
{
    mem_dom_t *d = ctx;
    win_count_call();
    if (n > MEM_PYMALLOC_MAX)
        return d->orig.malloc(d->orig.ctx, n);
    g_mem.py_left -= (int64_t)n;
    if (__builtin_expect(g_mem.py_left > 0, 1))
        return d->orig.malloc(d->orig.ctx, n);
    return win_sample(d, NULL, n, 0);
}

static void *win_calloc(void *ctx, size_t a, size_t b)
{
    mem_dom_t *d = ctx;
    size_t n;
    win_count_call();
    if (__builtin_mul_overflow(a, b, &n) || n > MEM_PYMALLOC_MAX)
        return d->orig.calloc(d->orig.ctx, a, b);
    g_mem.py_left -= (int64_t)n;
    if (__builtin_expect(g_mem.py_left > 0, 1))
        return d->orig.calloc(d->orig.ctx, a, b);
    return win_sample(d, NULL, n, 1);
}

static void *win_realloc(void *ctx, void *old, size_t n)
{
    mem_dom_t *d = ctx;
    if (!old)
        return win_malloc(ctx, n);
    win_count_call();
    if (atomic_load_explicit(&g_mem.on, memory_order_relaxed))
        mem_free_ptr(old); /* a sampled block moves or goes; the guard may hide its free */
    if (n > MEM_PYMALLOC_MAX)
        return d->orig.realloc(d->orig.ctx, old, n);
    g_mem.py_left -= (int64_t)n;
    if (__builtin_expect(g_mem.py_left > 0, 1))
        return d->orig.realloc(d->orig.ctx, old, n);
    return win_sample(d, old, n, 0);
}

/* One slot field from `from` to `to`, only if it still holds `from`. */
static int slot_swap(void **field, void *from, void *to)
{
    return __atomic_compare_exchange_n(field, &from, to, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Open (our win_* wrappers) or close (the original functions) the window in
 * CPython's allocator slots. The slots are CPython's and PyMem_SetAllocator
 * writes them with the GIL but no lock we can take, while we run on the
 * sampler thread without the GIL. So every field is swapped by
 * compare-and-swap from the value we put there: a field that someone else
 * (tracemalloc.start()) has written is never overwritten, even if they write
 * it between any check of ours and the swap; if their copy is still in
 * progress, their later writes land after ours and win. When any swap finds
 * a foreign value, the swaps already done are undone (again only where our
 * value is still there) and 0 is returned: windows then stop for good.
 * 1 when all six fields moved. */
static int win_set(int open)
{
    mem_dom_t *ds[2] = {&g_mem.dom_mem, &g_mem.dom_obj};
    void **f[6], *from[6], *to[6];
    int n = 0;
    for (int i = 0; i < 2; i++) {
        PyMemAllocatorEx *a = ds[i]->slot;
        void *w[3] = {(void *)win_malloc, (void *)win_calloc, (void *)win_realloc};
        void *o[3] = {(void *)ds[i]->orig.malloc, (void *)ds[i]->orig.calloc,
                      (void *)ds[i]->orig.realloc};
        void **fs[3] = {(void **)&a->malloc, (void **)&a->calloc, (void **)&a->realloc};
        for (int j = 0; j < 3; j++, n++) {
            f[n] = fs[j];
            from[n] = open ? o[j] : w[j];
            to[n] = open ? w[j] : o[j];
        }
    }
    for (int k = 0; k < n; k++)
        if (!slot_swap(f[k], from[k], to[k])) {
            while (k--)
                slot_swap(f[k], to[k], from[k]);
            return 0;
        }
    return 1;
}

/* Still ours? Someone (tracemalloc.start()) may have put their hooks over
 * ours: then windows stop for good rather than undo theirs. A cheap early
 * answer only: win_set's compare-and-swap is what makes it safe. */
static int win_slots_ours(void)
{
    mem_dom_t *ds[2] = {&g_mem.dom_mem, &g_mem.dom_obj};
    for (int i = 0; i < 2; i++) {
        const PyMemAllocatorEx *a = ds[i]->slot;
        void *m = __atomic_load_n(&a->malloc, __ATOMIC_RELAXED);
        if (__atomic_load_n(&a->ctx, __ATOMIC_RELAXED) != ds[i] ||
            __atomic_load_n(&a->free, __ATOMIC_RELAXED) != ds[i]->orig.free ||
            (m != (void *)win_malloc && m != (void *)ds[i]->orig.malloc))
            return 0;
    }
    return 1;
}

int mem_windows_on(void)
{
    return g_mem.windowed && atomic_load_explicit(&g_mem.on, memory_order_relaxed);
}

void mem_window(agent_t *a, int open)
{
    (void)a;
    if (!g_mem.windowed || !atomic_load_explicit(&g_mem.on, memory_order_relaxed))
        return;
    double now = clock_mono();
    if (open) {
        if (g_mem.win_open)
            return;
        if (!win_slots_ours()) {
            g_mem.windowed = 0;
            return;
        }
        uint32_t id = atomic_load_explicit(&g_mem.win_id, memory_order_relaxed) + 1;
        if (!id)
            id = 1;
        g_mem.win_scale[id % MEM_WIN_RING] = 1.0f; /* until it closes */
        atomic_store_explicit(&g_mem.win_id, id, memory_order_relaxed);
        atomic_store_explicit(&g_mem.win_calls, 0, memory_order_relaxed);
        atomic_store_explicit(&g_mem.win_sample_s, 0, memory_order_relaxed);
        g_mem.win_t0 = now;
        if (!win_set(1)) {
            g_mem.windowed = 0;
            return;
        }
        g_mem.win_open = 1;
        return;
    }
    if (!g_mem.win_open)
        return;
    if (!win_slots_ours() || !win_set(0))
        g_mem.windowed = 0;
    g_mem.win_open = 0;
    double len = now - g_mem.win_t0, span = now - g_mem.win_prev;
    /* the program ran slower in the window: the wrappers (calls x their
     * calibrated cost) and the samples taken (measured) */
    double extra =
        (double)atomic_load_explicit(&g_mem.win_calls, memory_order_relaxed) * g_mem.call_cost +
        atomic_load_explicit(&g_mem.win_sample_s, memory_order_relaxed);
    double len_eff = len - extra > 0.25 * len ? len - extra : 0.25 * len;
    double span_eff = span - extra > len_eff ? span - extra : len_eff;
    g_mem.win_scale[atomic_load_explicit(&g_mem.win_id, memory_order_relaxed) % MEM_WIN_RING] =
        (float)(span_eff / len_eff);
    g_mem.win_prev = now;
}

/* The interpreter's code: the executable mapping that holds
 * PyObject_Malloc (the python binary or libpython); its path in *path. */
static void find_py_text(char *path, size_t cap)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return;
    char line[512], p[256];
    uintptr_t fn = (uintptr_t)&PyObject_Malloc;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8];
        p[0] = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perm, p) >= 3 && perm[2] == 'x' &&
            fn >= lo && fn < hi) {
            g_mem.py_lo = (uintptr_t)lo;
            g_mem.py_hi = (uintptr_t)hi;
            snprintf(path, cap, "%s", p);
            break;
        }
    }
    fclose(f);
}

/* Where PyMem_SetAllocator copied w (the 5 words {ctx, malloc, calloc,
 * realloc, free}): inside the interpreter's writable data, i.e. the rw
 * mappings of its file and the anonymous bss right after them. NULL unless
 * found exactly once. Our own memory: plain reads are safe. */
static PyMemAllocatorEx *find_slot(const PyMemAllocatorEx *w, const char *py_path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f || !py_path[0]) {
        if (f)
            fclose(f);
        return NULL;
    }
    char line[512], path[256];
    PyMemAllocatorEx *hit = NULL;
    int n = 0, after_py = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8];
        path[0] = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perm, path) < 3)
            continue;
        int mine = !strcmp(path, py_path) || (!path[0] && after_py);
        after_py = !strcmp(path, py_path);
        if (!mine || perm[0] != 'r' || perm[1] != 'w')
            continue;
        void *const *p = (void *const *)(uintptr_t)lo;
        void *const *end = (void *const *)(uintptr_t)(hi - sizeof *w);
        for (; p <= end; p++)
            if (p[1] == (void *)w->malloc && p[0] == w->ctx && p[2] == (void *)w->calloc &&
                p[3] == (void *)w->realloc && p[4] == (void *)w->free) {
                hit = (PyMemAllocatorEx *)(uintptr_t)p;
                n++;
            }
    }
    fclose(f);
    return n == 1 ? hit : NULL;
}

/* Extra seconds per wrapped call that a window costs the program. Not the
 * wrappers' own instructions: what an optimised build loses when its
 * inlined pymalloc fast paths see a hook (1-2.5 ns a call measured here on
 * Debian's python3.11, against 0.6 through PyObject_Malloc alone). So it is
 * measured on Python code that makes small objects the way programs do
 * (ints, strs, lists, dicts), with the window open and closed: median of 5
 * paired differences, ~4 ms at start. GIL held, before sampling starts. 0
 * when the probe cannot run. Still an underestimate: churn is counted
 * ~8% low in windows (tests/memory small_objects). */
static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double calibrate(void)
{
    enum { REPS = 5, ITER = 2000 };
    static const char src[] = "def _hotline_cal(n):\n"
                              "    for i in range(n):\n"
                              "        d = {'k%d' % (i % 97): [i, i + 1, i + 2], 's': str(i) * 3, i: (i, 'x')}\n";
    PyObject *g = PyDict_New(), *fn = NULL;
    double diff[REPS];
    int nd = 0;
    uint64_t calls = 0;
    if (!g || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) != 0)
        goto out;
    PyObject *r = PyRun_String(src, Py_file_input, g, g);
    if (!r)
        goto out;
    Py_DECREF(r);
    fn = PyDict_GetItemString(g, "_hotline_cal"); /* borrowed */
    if (!fn)
        goto out;
    Py_INCREF(fn);
    int64_t keep = g_mem.py_left;
    g_mem.py_left = INT64_MAX / 2; /* no sample meanwhile */
    for (int rep = -1; rep < REPS; rep++) { /* rep -1 warms up */
        double t[2];
        for (int open = 0; open < 2; open++) {
            win_set(open);
            atomic_store_explicit(&g_mem.win_calls, 0, memory_order_relaxed);
            double t0 = clock_mono();
            PyObject *res = PyObject_CallFunction(fn, "i", ITER);
            t[open] = clock_mono() - t0;
            win_set(0);
            if (!res) {
                g_mem.py_left = keep;
                goto out;
            }
            Py_DECREF(res);
            if (open)
                calls = atomic_load_explicit(&g_mem.win_calls, memory_order_relaxed);
        }
        if (rep >= 0)
            diff[nd++] = t[1] - t[0];
    }
    g_mem.py_left = keep;
out:
    if (PyErr_Occurred())
        PyErr_Clear();
    Py_XDECREF(fn);
    Py_XDECREF(g);
    atomic_store_explicit(&g_mem.win_calls, 0, memory_order_relaxed);
    if (!nd || !calls)
        return 0;
    /* paired differences, median: robust to a noisy neighbour on either side */
    qsort(diff, (size_t)nd, sizeof *diff, cmp_double);
    double d = diff[nd / 2];
    return d > 0 ? d / (double)calls : 0;
}

/* The calling thread's own thread state, or 0. PyGILState_GetThisThreadState
 * is a thread-specific-storage read (no GIL needed, no allocation); it is
 * cleared when the thread state is deleted, so unlike a cached pointer it is
 * never stale. Reading our *own* thread's frames directly is then safe
 * without the GIL: only this thread (now inside malloc) changes them. */
static uintptr_t own_tstate(void)
{
    return (uintptr_t)PyGILState_GetThisThreadState();
}

/* shim callbacks: run with the shim's guard raised */
static void shim_on_alloc(void *p, size_t n, uint64_t k, const void *caller)
{
    /* asked for by the interpreter itself (a large Python object's buffer,
     * PyMem_RawMalloc) or by an extension's own code */
    uintptr_t c = (uintptr_t)caller;
    int origin = c >= g_mem.py_lo && c < g_mem.py_hi ? ORIGIN_PY : ORIGIN_NAT;
    if (atomic_load_explicit(&g_mem.on, memory_order_relaxed))
        record(p, n, k, EV_ALLOC, origin, own_tstate(), 1, g_mem.mean, 0);
}

/* An anonymous mapping: an extension's data (native), unless the
 * interpreter mapped it (pymalloc's arenas: their objects are counted one
 * by one already). */
static void shim_on_map(void *p, size_t n, uint64_t k, const void *caller)
{
    uintptr_t c = (uintptr_t)caller;
    if (c >= g_mem.py_lo && c < g_mem.py_hi)
        return;
    if (atomic_load_explicit(&g_mem.on, memory_order_relaxed))
        record(p, n, k, EV_ALLOC, ORIGIN_NAT, own_tstate(), 1, g_mem.mean, 0);
}

static void shim_on_free(void *p)
{
    if (atomic_load_explicit(&g_mem.on, memory_order_relaxed))
        mem_free_ptr(p);
}

static void shim_on_copy(size_t n, uint64_t k)
{
    uintptr_t ts;
    if (atomic_load_explicit(&g_mem.on, memory_order_relaxed) && (ts = own_tstate()))
        record(NULL, n, k, EV_COPY, ORIGIN_NAT, ts, 1, g_mem.copy_mean, 0);
}

/* ---- sampler side ---- */

static int row_get(uint32_t file, uint32_t line)
{
    unsigned h = (unsigned)(mix(((uint64_t)file << 32) | line) & (MEM_ROWS * 2 - 1));
    for (;;) {
        int r = g_mem.row_slots[h];
        if (!r)
            break;
        if (g_mem.rows[r - 1].file == file && g_mem.rows[r - 1].line == line)
            return r - 1;
        h = (h + 1) & (MEM_ROWS * 2 - 1);
    }
    if (g_mem.nrows >= MEM_ROWS)
        return -1;
    mem_row_t *row = &g_mem.rows[g_mem.nrows];
    memset(row, 0, sizeof *row);
    row->file = file;
    row->line = line;
    g_mem.row_slots[h] = ++g_mem.nrows;
    return g_mem.nrows - 1;
}

static unsigned sid_slot(uint64_t sid)
{
    return (unsigned)(mix(sid) & (MEM_SIDS - 1));
}

static void sid_put(uint64_t sid, int row, double w)
{
    unsigned i = sid_slot(sid);
    while (g_mem.sid_key[i])
        i = (i + 1) & (MEM_SIDS - 1);
    g_mem.sid_key[i] = sid;
    g_mem.sid_row[i] = row;
    g_mem.sid_w[i] = (float)w;
}

/* row of a live sample id (removed) and its weight in *w, -1 unattributed,
 * -2 unknown */
static int sid_take(uint64_t sid, double *w)
{
    unsigned i = sid_slot(sid);
    while (g_mem.sid_key[i] && g_mem.sid_key[i] != sid)
        i = (i + 1) & (MEM_SIDS - 1);
    if (!g_mem.sid_key[i])
        return -2;
    int row = g_mem.sid_row[i];
    *w = g_mem.sid_w[i];
    unsigned j = i;
    for (;;) {
        g_mem.sid_key[i] = 0;
        for (;;) {
            j = (j + 1) & (MEM_SIDS - 1);
            if (!g_mem.sid_key[j])
                return row;
            unsigned k = sid_slot(g_mem.sid_key[j]);
            if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
                continue;
            break;
        }
        g_mem.sid_key[i] = g_mem.sid_key[j];
        g_mem.sid_row[i] = g_mem.sid_row[j];
        g_mem.sid_w[i] = g_mem.sid_w[j];
        i = j;
    }
}

/* (code, instruction) -> row (or -1: not profiled), sampler thread only.
 * Saves a code-object read per sampled event; emptied every second (epoch)
 * so that a code object freed and another allocated at its address are
 * confused for at most that long. */
#define MEM_RCACHE 4096
static struct {
    uintptr_t code;
    intptr_t instr;
    int row; /* row index, -1 not profiled, -2 unreadable */
    unsigned epoch;
} g_rcache[MEM_RCACHE];
static unsigned g_repoch = 1;

static int frame_row(agent_t *a, const mem_rawfr_t *fr)
{
    unsigned h = (unsigned)(mix(fr->code ^ ((uint64_t)fr->instr << 17)) & (MEM_RCACHE - 1));
    if (g_rcache[h].epoch == g_repoch && g_rcache[h].code == fr->code &&
        g_rcache[h].instr == fr->instr)
        return g_rcache[h].row;
    agent_frame_t f;
    int row = -2;
    if (walk_frame(a, fr->code, fr->instr, &f) == 0)
        row = f.profiled ? row_get((uint32_t)f.file_id, (uint32_t)f.line) : -1;
    if (row == -1 || row >= 0) {
        g_rcache[h].code = fr->code;
        g_rcache[h].instr = fr->instr;
        g_rcache[h].row = row;
        g_rcache[h].epoch = g_repoch;
    }
    return row;
}

/* Codes freed before this emit resolved their events (mem_emit owns them,
 * sorted by address, then seq). */
static mem_dead_t *g_dead;
static int g_ndead;

static int dead_cmp(const void *x, const void *y)
{
    const mem_dead_t *a = x, *b = y;
    if (a->c.addr != b->c.addr)
        return a->c.addr < b->c.addr ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The copy of the code an event recorded at seq saw at addr, if that code
 * has died since: the first death at addr at or after seq. */
static const mem_dead_t *dead_find(const mem_dead_t *d, int n, uintptr_t addr, uint64_t seq)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (d[mid].c.addr < addr || (d[mid].c.addr == addr && d[mid].seq < seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && d[lo].c.addr == addr ? &d[lo] : NULL;
}

static int dead_row(agent_t *a, const mem_dead_t *d, intptr_t instr)
{
    agent_frame_t f;
    if (walk_frame_copy(a, &d->c, instr, &f) != 0)
        return -2;
    return f.profiled ? row_get((uint32_t)f.file_id, (uint32_t)f.line) : -1;
}

/* A frame whose code could not be read: it may have died while this emit
 * ran (its copy is in the producers' list, not yet ours). */
static int dead_row_late(agent_t *a, const mem_rawfr_t *fr, uint64_t seq)
{
    int row = -2;
    pthread_mutex_lock(&g_mem.mu);
    for (int i = 0; i < g_mem.ndead && row == -2; i++)
        if (g_mem.dead[i].c.addr == fr->code && g_mem.dead[i].seq >= seq)
            row = dead_row(a, &g_mem.dead[i], fr->instr);
    pthread_mutex_unlock(&g_mem.mu);
    return row;
}

/* Innermost profiled line of an event: row index, or -1. */
static int resolve(agent_t *a, const mem_ev_t *e)
{
    for (int i = 0; i < e->nfr; i++) {
        const mem_dead_t *d = g_ndead ? dead_find(g_dead, g_ndead, e->fr[i].code, e->seq) : NULL;
        int r = d ? dead_row(a, d, e->fr[i].instr) : frame_row(a, &e->fr[i]);
        if (r == -2)
            r = dead_row_late(a, &e->fr[i], e->seq);
        if (r >= 0)
            return r;
    }
    return -1;
}

/* Row r's live bytes changed at t (seconds of the run): a point when they
 * moved far enough since its last one. Why: one point per delta period
 * (0.1 s) is 3 points for a line that keeps 500 MB in 0.35 s, too few for
 * the leak rule (server/memprof.c); by volume a steep line gets ~100. */
static void row_point(int r, double t)
{
    mem_row_t *row = &g_mem.rows[r];
    double step = row->peak * MEM_PT_FRAC;
    if (step < MEM_PT_MIN)
        step = MEM_PT_MIN;
    if (fabs(row->live - row->pt_live) < step)
        return;
    row->pt_live = row->live;
    mem_pt_t *last = row->pt_last ? &g_mem.pts[row->pt_last - 1] : NULL;
    if (last && t - last->t < MEM_PT_GAP) {
        last->live = row->live;
        return;
    }
    if (g_mem.npts >= MEM_PTS)
        return; /* the period's own point (at emit) still comes */
    mem_pt_t *pt = &g_mem.pts[g_mem.npts++];
    pt->next = 0;
    pt->t = t;
    pt->live = row->live;
    if (last)
        last->next = g_mem.npts;
    else
        row->pt_first = g_mem.npts;
    row->pt_last = g_mem.npts;
}

static void apply_alloc(agent_t *a, const mem_ev_t *e, double t)
{
    int r = resolve(a, e);
    if (e->kind == EV_COPY) {
        if (r >= 0) {
            g_mem.rows[r].copy += e->w;
            g_mem.rows[r].dirty = 1;
        }
        return;
    }
    /* a windowed sample stands for the whole time around its window */
    double w = e->win ? e->w * g_mem.win_scale[e->win % MEM_WIN_RING] : e->w;
    sid_put(e->seq, r, w);
    g_mem.total_live += w;
    if (r >= 0) {
        mem_row_t *row = &g_mem.rows[r];
        row->alloc += w;
        if (e->origin == ORIGIN_PY)
            row->pyalloc += w;
        row->live += w;
        if (row->live > row->peak)
            row->peak = row->live;
        row->dirty = 1;
        row_point(r, t);
    }
    if (g_mem.total_live > g_mem.total_peak) {
        g_mem.total_peak = g_mem.total_live;
        g_mem.peak_file = r >= 0 ? (int)g_mem.rows[r].file : 0;
        g_mem.peak_line = r >= 0 ? (int)g_mem.rows[r].line : 0;
    }
    g_mem.changed = 1;
}

static void apply_free(const mem_free_t *f, double t)
{
    double w;
    int r = sid_take(f->sid, &w);
    if (r == -2)
        return; /* sampled before this agent started (fork) */
    g_mem.total_live -= w;
    if (g_mem.total_live < 0)
        g_mem.total_live = 0;
    if (r >= 0) {
        mem_row_t *row = &g_mem.rows[r];
        row->freed += w;
        row->live -= w;
        row->dirty = 1;
        row_point(r, t);
    }
    g_mem.changed = 1;
}

#define MB (1024.0 * 1024.0)

void mem_emit(agent_t *a, double ts)
{
    static double epoch_ts;
    if (!g_mem.rows || !atomic_load(&g_mem.on))
        return;
    if (ts - epoch_ts >= 1.0 || ts < epoch_ts) {
        epoch_ts = ts;
        g_repoch++;
    }
    pthread_mutex_lock(&g_mem.mu);
    int b = g_mem.cur, nev = g_mem.nev, nfr = g_mem.nfr;
    g_mem.cur ^= 1;
    g_mem.nev = g_mem.nfr = 0;
    g_dead = g_mem.dead;
    g_ndead = g_mem.ndead;
    g_mem.dead = NULL;
    g_mem.ndead = g_mem.capdead = 0;
    if (g_mem.fstale > 256 && g_mem.fstale > (uint64_t)g_mem.nlive) {
        uint64_t *nf = g_mem.fbuf[g_mem.fcur ^ 1];
        uint8_t *nc = g_mem.fcount[g_mem.fcur ^ 1];
        memset(nf, 0, MEM_FILTER / 8);
        memset(nc, 0, MEM_FILTER / 64);
        for (unsigned i = 0; i < MEM_LIVE_CAP; i++)
            if (g_mem.live[i].p) {
                uint64_t m;
                unsigned w = filter_cell(g_mem.live[i].p, &m);
                nf[w] |= m;
                if (nc[w] < 255)
                    nc[w]++;
            }
        g_mem.fcur ^= 1;
        g_mem.fstale = 0;
        atomic_store_explicit(&g_mem.filter, nf, memory_order_release);
    }
    pthread_mutex_unlock(&g_mem.mu);
    /* in sequence order, so that peaks see allocs and frees interleaved;
     * event times in seconds of the run, not after this emit's ts (an event
     * recorded between the caller's clock read and the swap) */
    if (g_ndead) {
        qsort(g_dead, (size_t)g_ndead, sizeof *g_dead, dead_cmp);
        g_repoch++; /* a cached (code, instr) may be a dead code's */
    }
    int i = 0, j = 0;
    g_mem.npts = 0;
    while (i < nev || j < nfr) {
        if (j >= nfr || (i < nev && g_mem.ev[b][i].seq < g_mem.fr[b][j].seq)) {
            const mem_ev_t *e = &g_mem.ev[b][i++];
            apply_alloc(a, e, fmin(e->t - a->t0, ts));
        } else {
            const mem_free_t *f = &g_mem.fr[b][j++];
            apply_free(f, fmin(f->t - a->t0, ts));
        }
    }
    pthread_mutex_lock(&g_mem.mu);
    memset(g_mem.codebits[b], 0, sizeof g_mem.codebits[b]); /* ev[b] is resolved */
    pthread_mutex_unlock(&g_mem.mu);
    for (int k = 0; k < g_ndead; k++)
        walk_code_copy_free(&g_dead[k].c);
    free(g_dead);
    g_dead = NULL;
    g_ndead = 0;
    if (!g_mem.changed && !nev)
        return;
    g_mem.changed = 0;
    buf_printf(&a->out, "{\"%s\":\"%s\",\"%s\":%.6f,\"%s\":0,\"%s\":[", WK(T), WT(DELTA), WK(TS),
               ts, WK(SAMPLES), WK(LINES));
    int first = 1;
    for (int r = 0; r < g_mem.nrows; r++) {
        mem_row_t *row = &g_mem.rows[r];
        if (!row->dirty)
            continue;
        buf_printf(&a->out,
                   "%s{\"%s\":%u,\"%s\":%u,\"%s\":%.6f,\"%s\":%.6f,\"%s\":%.6f,\"%s\":%.6f,"
                   "\"%s\":%.6f",
                   first ? "" : ",", WK(F), row->file, WK(L), row->line, WS(ALLOC), row->alloc / MB,
                   WS(FREED), row->freed / MB, WS(PYALLOC), row->pyalloc / MB, WS(COPY),
                   row->copy / MB, WS(PEAK), row->peak / MB);
        if (row->pt_first) {
            /* kept MB inside the period, relative to the last emit (the
             * server adds its own kept: a forked child's rows start at 0) */
            buf_printf(&a->out, ",\"%s\":[", WK(KEPT_PTS));
            for (int k = row->pt_first; k; k = g_mem.pts[k - 1].next)
                buf_printf(&a->out, "%s[%.6f,%.6f]", k == row->pt_first ? "" : ",",
                           g_mem.pts[k - 1].t, (g_mem.pts[k - 1].live - row->base) / MB);
            buf_printf(&a->out, "]");
        }
        buf_printf(&a->out, "}");
        first = 0;
        row->alloc = row->freed = row->pyalloc = row->copy = 0;
        row->base = row->live;
        row->pt_first = row->pt_last = 0;
        row->dirty = 0;
    }
    buf_printf(&a->out, "],\"%s\":{\"%s\":%.6f,\"%s\":%.6f,\"%s\":%d,\"%s\":%d,\"%s\":%llu}}\n",
               WK(MEM), WK(LIVE_MB), g_mem.total_live / MB, WK(PEAK_MB), g_mem.total_peak / MB,
               WK(PEAK_F), g_mem.peak_file, WK(PEAK_L), g_mem.peak_line, WK(DROPPED),
               (unsigned long long)g_mem.dropped);
}

static void reset_tables(void)
{
    g_repoch++; /* row indices of the resolve cache are gone */
    memset(g_mem.live, 0, MEM_LIVE_CAP * sizeof *g_mem.live);
    /* a forked child's copies of dead codes stay queued: their seqs are
     * older than any event it records, and the next emit frees them */
    memset(g_mem.codebits, 0, sizeof g_mem.codebits);
    memset(g_mem.fbuf[0], 0, MEM_FILTER / 8);
    memset(g_mem.fbuf[1], 0, MEM_FILTER / 8);
    memset(g_mem.fcount, 0, sizeof g_mem.fcount);
    g_mem.fcur = 0;
    g_mem.fstale = 0;
    atomic_store(&g_mem.filter, g_mem.fbuf[0]);
    memset(g_mem.sid_key, 0, MEM_SIDS * sizeof *g_mem.sid_key);
    memset(g_mem.row_slots, 0, MEM_ROWS * 2 * sizeof *g_mem.row_slots);
    g_mem.nlive = g_mem.nev = g_mem.nfr = g_mem.nrows = 0;
    g_mem.total_live = g_mem.total_peak = 0;
    g_mem.peak_file = g_mem.peak_line = 0;
    g_mem.dropped = 0;
    g_mem.changed = 0;
}

static void atfork_prepare(void)
{
    pthread_mutex_lock(&g_mem.mu);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&g_mem.mu);
}

static void atfork_child(void)
{
    /* the child's agent restarts: nothing of the parent's samples applies.
     * atfork_prepare locked mu in the forking thread, which is the child's
     * only thread: unlock it. Re-initialising a locked mutex is undefined
     * (and leaves glibc's owner/count fields of the parent's lock). */
    pthread_mutex_unlock(&g_mem.mu);
    atomic_store(&g_mem.on, 0);
    if (g_mem.win_open) { /* no sampler thread here to close it */
        win_set(0);
        g_mem.win_open = 0;
    }
}

void mem_after_fork(void)
{
    atomic_store(&g_mem.on, 0);
}

#if PY_VERSION_HEX >= 0x030C0000
/* A code object is being freed (GIL held). Events still waiting for
 * mem_emit may name it (a module's code dies when the module body ends, a
 * notebook cell's when the cell ends, both often before the next emit):
 * keep a copy of what resolving them needs. The filter makes this a hash
 * and a lock for the codes no event names. */
static int code_watch(PyCodeEvent ev, PyCodeObject *co)
{
    if (ev != PY_CODE_EVENT_DESTROY || !atomic_load_explicit(&g_mem.on, memory_order_relaxed))
        return 0;
    uintptr_t addr = (uintptr_t)co;
    unsigned bit = code_bit(addr);
    uint64_t m = 1ull << (bit % 64);
    pthread_mutex_lock(&g_mem.mu);
    int named = ((g_mem.codebits[0][bit / 64] | g_mem.codebits[1][bit / 64]) & m) != 0 &&
                g_mem.ndead < MEM_DEAD;
    pthread_mutex_unlock(&g_mem.mu);
    if (!named)
        return 0;
    int *g = guard_ptr();
    (*g)++; /* our copies are not the program's memory */
    mem_dead_t d;
    if (walk_code_copy(addr, &d.c) == 0) {
        pthread_mutex_lock(&g_mem.mu);
        if (g_mem.ndead == g_mem.capdead) {
            int nc = g_mem.capdead ? g_mem.capdead * 2 : 16;
            mem_dead_t *nd = realloc(g_mem.dead, (size_t)nc * sizeof *nd);
            if (nd) {
                g_mem.dead = nd;
                g_mem.capdead = nc;
            }
        }
        if (g_mem.ndead < g_mem.capdead) {
            d.seq = g_mem.seq; /* every event naming it so far */
            g_mem.dead[g_mem.ndead++] = d;
            d.c.file = NULL;
        }
        pthread_mutex_unlock(&g_mem.mu);
        if (d.c.file)
            walk_code_copy_free(&d.c);
    }
    (*g)--;
    return 0;
}
#endif

int mem_start(agent_t *a, double mean_kb)
{
    (void)a;
    static int atfork_done;
    if (!g_mem.live) {
        g_mem.live = calloc(MEM_LIVE_CAP, sizeof *g_mem.live);
        g_mem.fbuf[0] = calloc(MEM_FILTER / 64, sizeof(uint64_t));
        g_mem.fbuf[1] = calloc(MEM_FILTER / 64, sizeof(uint64_t));
        g_mem.ev[0] = malloc(MEM_EVENTS * sizeof(mem_ev_t));
        g_mem.ev[1] = malloc(MEM_EVENTS * sizeof(mem_ev_t));
        g_mem.fr[0] = malloc(MEM_FREES * sizeof(mem_free_t));
        g_mem.fr[1] = malloc(MEM_FREES * sizeof(mem_free_t));
        g_mem.rows = malloc(MEM_ROWS * sizeof *g_mem.rows);
        g_mem.row_slots = calloc(MEM_ROWS * 2, sizeof *g_mem.row_slots);
        g_mem.sid_key = calloc(MEM_SIDS, sizeof *g_mem.sid_key);
        g_mem.sid_row = malloc(MEM_SIDS * sizeof *g_mem.sid_row);
        g_mem.sid_w = malloc(MEM_SIDS * sizeof *g_mem.sid_w);
        g_mem.pts = malloc(MEM_PTS * sizeof *g_mem.pts);
        if (!g_mem.pts || !g_mem.live || !g_mem.fbuf[0] || !g_mem.fbuf[1] || !g_mem.ev[0] || !g_mem.ev[1] || !g_mem.fr[0] ||
            !g_mem.fr[1] || !g_mem.rows || !g_mem.row_slots || !g_mem.sid_key || !g_mem.sid_row ||
            !g_mem.sid_w)
            return -ENOMEM; /* kept for a later try; freed never (process lifetime) */
    }
    pthread_mutex_lock(&g_mem.mu);
    reset_tables();
    g_mem.mean = (mean_kb >= 1 && mean_kb <= 1 << 20 ? mean_kb : 64) * 1024.0;
    g_mem.copy_mean = 16 * g_mem.mean; /* copies are volume: a coarser grain is enough */
    pthread_mutex_unlock(&g_mem.mu);
    if (!atfork_done) {
        atfork_done = 1;
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    }
    g_mem.shim_register = (hotline_shim_register_fn)dlsym(RTLD_DEFAULT, "hotline_shim_register");
    g_mem.shim_guard = (hotline_shim_guard_fn)dlsym(RTLD_DEFAULT, "hotline_shim_guard");
    if (!g_mem.shim_register || !g_mem.shim_guard)
        g_mem.shim_register = NULL, g_mem.shim_guard = NULL;
    t_mem.guard = NULL;
    if (!g_mem.installed) {
        const char *pm = getenv("PYTHONMALLOC");
        g_mem.pymalloc = !pm || !*pm || !strcmp(pm, "pymalloc");
        char py_path[256] = "";
        find_py_text(py_path, sizeof py_path);
        PyMem_GetAllocator(PYMEM_DOMAIN_MEM, &g_mem.dom_mem.orig);
        PyMem_GetAllocator(PYMEM_DOMAIN_OBJ, &g_mem.dom_obj.orig);
        const char *wenv = getenv("HOTLINE_MEM_WINDOWS");
        /* windows need the shim (it sees the frees) and plain allocators
         * (no context: the debug hooks of PYTHONMALLOC=debug have one) */
        int can_window = g_mem.shim_register && !g_mem.dom_mem.orig.ctx && !g_mem.dom_obj.orig.ctx &&
                         !(wenv && !strcmp(wenv, "0"));
        if (can_window && !g_mem.pymalloc) {
            /* every Python allocation already reaches malloc: the shim sees
             * them all, and the caller's address tells Python's apart */
            g_mem.mode = "shim";
        } else if (can_window) {
            PyMemAllocatorEx w[2];
            mem_dom_t *ds[2] = {&g_mem.dom_mem, &g_mem.dom_obj};
            for (int i = 0; i < 2; i++) {
                w[i] = (PyMemAllocatorEx){ds[i], win_malloc, win_calloc, win_realloc, ds[i]->orig.free};
                PyMem_SetAllocator(i ? PYMEM_DOMAIN_OBJ : PYMEM_DOMAIN_MEM, &w[i]);
                ds[i]->slot = find_slot(&w[i], py_path);
            }
            if (g_mem.dom_mem.slot && g_mem.dom_obj.slot) {
                g_mem.windowed = 1;
                g_mem.mode = "windows";
                g_mem.call_cost = calibrate();
            } else {
                can_window = 0; /* not found: wrap for good below */
            }
        }
        if (!can_window) {
            PyMemAllocatorEx w;
            w.malloc = py_malloc;
            w.calloc = py_calloc;
            w.realloc = py_realloc;
            w.free = py_free;
            w.ctx = &g_mem.dom_mem;
            PyMem_SetAllocator(PYMEM_DOMAIN_MEM, &w);
            w.ctx = &g_mem.dom_obj;
            PyMem_SetAllocator(PYMEM_DOMAIN_OBJ, &w);
            g_mem.mode = "wrappers";
        }
        g_mem.installed = 1;
    }
    g_mem.win_mean = g_mem.mean / MEM_WIN_DIV;
    g_mem.py_mean = g_mem.windowed ? g_mem.win_mean : g_mem.mean;
    g_mem.py_left = (int64_t)countdown_gap() + 1;
    g_mem.win_prev = clock_mono();
    t_mem.tstate = (uintptr_t)PyGILState_GetThisThreadState();
#if PY_VERSION_HEX >= 0x030C0000
    static int watching;
    if (!watching) {
        if (PyCode_AddWatcher(code_watch) >= 0)
            watching = 1;
        else
            PyErr_Clear(); /* all watcher slots taken: late events stay unresolved */
    }
#endif
    atomic_store(&g_mem.on, 1);
    if (g_mem.shim_register) {
        g_mem.hooks.abi = HOTLINE_SHIM_ABI;
        g_mem.hooks.mean_bytes = g_mem.mean;
        g_mem.hooks.copy_mean = g_mem.copy_mean;
        g_mem.hooks.on_alloc = shim_on_alloc;
        g_mem.hooks.on_free = shim_on_free;
        g_mem.hooks.on_copy = shim_on_copy;
        g_mem.hooks.on_map = shim_on_map;
        g_mem.shim_register(&g_mem.hooks);
    }
    return 0;
}

/* The wrappers stay installed (objects they saw are still alive); with `on`
 * cleared they only forward. */
void mem_stop(agent_t *a)
{
    (void)a;
    atomic_store(&g_mem.on, 0);
    if (g_mem.shim_register)
        g_mem.shim_register(NULL);
}

int mem_shim_loaded(void)
{
    return g_mem.shim_register != NULL;
}

const char *mem_mode(void)
{
    return g_mem.installed && g_mem.mode ? g_mem.mode : "off";
}
