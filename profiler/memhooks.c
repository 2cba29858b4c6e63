/* memhooks.c: memory profiling inside the agent (docs/memory.md): the
 * allocator hooks, the code-object watcher, start/stop/fork. The other jobs
 * are in mem_sample.c, mem_window.c and mem_rows.c (map: mem_state.h).
 *
 * Why: per line, how much memory is allocated, freed, kept and copied, and
 * by whom (Python objects vs native code), at a cost that does not depend on
 * how many objects the program makes.
 *
 * Two sources feed one sampler:
 *   - PyMem_SetAllocator wrappers on the MEM and OBJ domains (origin python).
 *     The RAW domain is malloc, which the shim sees; without the shim, in
 *     windows (windows_raw), RAW is wrapped too (raw_malloc & co. below).
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
 * PyGILState_GetThisThreadState finds for it, see own_tstate) and enters a hash of live sampled
 * pointers. Every free checks a bitmap filter on the pointer only (one L1-resident load for the
 * common unsampled case); a hit removes the entry and queues a free event.
 *
 * Events go into double-buffered queues under one mutex (samples are rare);
 * the sampler thread swaps them every delta (mem_emit, mem_rows.c), resolves frames with
 * its code cache (walk_frame), charges the innermost profiled line, and
 * sends the per-line increments as an extra `delta` message.
 *
 * Global state: g_mem (the allocator hooks cannot carry a pointer to the
 * agent beyond their ctx, and the shim's callbacks none) and the per-thread
 * t_mem (defined in mem_sample.c, described in mem_state.h). Both are the
 * documented agent-part exception of STYLE.md.
 */
#include "mem_state.h"

#include "memhooks.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "clock.h"

void mem_thread_ignore(void)
{
    (*mem__guard())++; /* this thread's allocations are never reported */
}

/* Number of sample points in n more bytes; GIL held. Inlined: every
 * allocation of the program passes here. */
static inline __attribute__((always_inline)) uint64_t countdown(size_t n)
{
    g_mem.py_left -= (int64_t)n;
    if (__builtin_expect(g_mem.py_left > 0, 1)) return 0;
    return mem__countdown_hit();
}

static __attribute__((noinline, cold)) void py_sample(void *p, size_t n, uint64_t k)
{
    PyThreadState *ts = PyGILState_GetThisThreadState();
    t_mem.tstate = (uintptr_t)ts;
    int *g = mem__guard();
    (*g)++;
    mem__record(p, n, k, EV_ALLOC, ORIGIN_PY, (uintptr_t)ts, 1, g_mem.mean, 0);
    (*g)--;
}

static void *py_malloc(void *ctx, size_t n)
{
    mem_dom_t *d = ctx;
    void *p;
    int *g = NULL;
    if (n > MEM_PYMALLOC_MAX || !g_mem.pymalloc) {
        g = mem__guard();
        (*g)++;
        p = d->orig.malloc(d->orig.ctx, n);
        (*g)--;
        if (*g) return p; /* nested inside a hook of ours */
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
        int *g = mem__guard();
        (*g)++;
        p = d->orig.calloc(d->orig.ctx, a, b);
        (*g)--;
        if (*g) return p;
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
    if (old && on) mem_free_ptr(old);
    int *g = mem__guard();
    (*g)++;
    void *p = d->orig.realloc(d->orig.ctx, old, n);
    (*g)--;
    uint64_t k;
    if (p && on && !*g && (k = countdown(n))) py_sample(p, n, k);
    return p;
}

static void py_free(void *ctx, void *p)
{
    mem_dom_t *d = ctx;
    if (p && atomic_load_explicit(&g_mem.on, memory_order_relaxed)) mem_free_ptr(p);
    d->orig.free(d->orig.ctx, p);
}

/* ---- the RAW domain (windows_raw: no shim) ----
 *
 * Windows (mem_window.c) leave two jobs to the shim: the frees of sampled
 * small blocks (allocated with 513 bytes, so pymalloc frees them through
 * PyMem_RawFree) and the requests over 512 bytes (pymalloc passes them to
 * PyMem_RawMalloc). Without the shim (`hotline attach --memory`,
 * hotline.start() in-process) these wrappers of the RAW domain do both:
 * every free checks the filter, every malloc, calloc and realloc counts by
 * the calling thread's own countdown (RAW is called without the GIL),
 * origin python. Not counted: a call made with this thread's guard raised
 * (a sampled block win_sample takes, the agent's own work, the sampler
 * thread). Blocks allocated before the wrap, or by the original after the
 * unwrap, pass through unchanged: nothing here adds a header.
 *
 * They read g_mem.dom_raw, never their ctx, and are installed with the
 * original's ctx: PyMem_SetAllocator copies the struct while threads
 * without the GIL may be calling the domain, and a thread that sees ours
 * with the old ctx (or the old function with ours) must still work.
 * tracemalloc.start() wraps RAW at run time the same way. */
static inline __attribute__((always_inline)) uint64_t raw_countdown(size_t n)
{
    t_mem.raw_left -= (int64_t)n;
    if (__builtin_expect(t_mem.raw_left > 0, 1)) return 0;
    return mem__raw_countdown_hit();
}

static uintptr_t own_tstate(void);

static __attribute__((noinline, cold)) void raw_sample(void *p, size_t n, uint64_t k)
{
    int *g = mem__guard();
    (*g)++;
    mem__record(p, n, k, EV_ALLOC, ORIGIN_PY, own_tstate(), 1, g_mem.mean, 0);
    (*g)--;
}

static void *raw_malloc(void *ctx, size_t n)
{
    (void)ctx;
    const mem_dom_t *d = &g_mem.dom_raw;
    void *p = d->orig.malloc(d->orig.ctx, n);
    uint64_t k;
    if (p && atomic_load_explicit(&g_mem.on, memory_order_relaxed) && !*mem__guard() &&
        (k = raw_countdown(n)))
        raw_sample(p, n, k);
    return p;
}

static void *raw_calloc(void *ctx, size_t a, size_t b)
{
    (void)ctx;
    const mem_dom_t *d = &g_mem.dom_raw;
    void *p = d->orig.calloc(d->orig.ctx, a, b);
    size_t n;
    uint64_t k;
    if (p && !__builtin_mul_overflow(a, b, &n) &&
        atomic_load_explicit(&g_mem.on, memory_order_relaxed) && !*mem__guard() &&
        (k = raw_countdown(n)))
        raw_sample(p, n, k);
    return p;
}

static void *raw_realloc(void *ctx, void *old, size_t n)
{
    (void)ctx;
    const mem_dom_t *d = &g_mem.dom_raw;
    int on = atomic_load_explicit(&g_mem.on, memory_order_relaxed);
    if (old && on) mem_free_ptr(old); /* a sampled block moves or goes */
    void *p = d->orig.realloc(d->orig.ctx, old, n);
    uint64_t k;
    if (p && on && !*mem__guard() && (k = raw_countdown(n))) raw_sample(p, n, k);
    return p;
}

static void raw_free(void *ctx, void *p)
{
    (void)ctx;
    const mem_dom_t *d = &g_mem.dom_raw;
    if (p && atomic_load_explicit(&g_mem.on, memory_order_relaxed)) mem_free_ptr(p);
    d->orig.free(d->orig.ctx, p);
}

static void raw_wrap(void)
{
    PyMem_GetAllocator(PYMEM_DOMAIN_RAW, &g_mem.dom_raw.orig);
    PyMemAllocatorEx w = {g_mem.dom_raw.orig.ctx, raw_malloc, raw_calloc, raw_realloc, raw_free};
    PyMem_SetAllocator(PYMEM_DOMAIN_RAW, &w);
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
        mem__record(p, n, k, EV_ALLOC, origin, own_tstate(), 1, g_mem.mean, 0);
}

/* An anonymous mapping: an extension's data (native), unless the
 * interpreter mapped it (pymalloc's arenas: their objects are counted one
 * by one already). */
static void shim_on_map(void *p, size_t n, uint64_t k, const void *caller)
{
    uintptr_t c = (uintptr_t)caller;
    if (c >= g_mem.py_lo && c < g_mem.py_hi) return;
    if (atomic_load_explicit(&g_mem.on, memory_order_relaxed))
        mem__record(p, n, k, EV_ALLOC, ORIGIN_NAT, own_tstate(), 1, g_mem.mean, 0);
}

static void shim_on_free(void *p)
{
    if (atomic_load_explicit(&g_mem.on, memory_order_relaxed)) mem_free_ptr(p);
}

static void shim_on_copy(size_t n, uint64_t k)
{
    uintptr_t ts;
    if (atomic_load_explicit(&g_mem.on, memory_order_relaxed) && (ts = own_tstate()))
        mem__record(NULL, n, k, EV_COPY, ORIGIN_NAT, ts, 1, g_mem.copy_mean, 0);
}

static void reset_tables(int zeroed)
{
    mem__sample_reset(zeroed);
    mem__rows_reset(zeroed);
}

static void atfork_prepare(void)
{
    mem__win_lock();
    pthread_mutex_lock(&g_mem.mu);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&g_mem.mu);
    mem__win_unlock();
}

static void atfork_child(void)
{
    /* the child's agent restarts: nothing of the parent's samples applies.
     * atfork_prepare locked mu in the forking thread, which is the child's
     * only thread: unlock it. Re-initialising a locked mutex is undefined
     * (and leaves glibc's owner/count fields of the parent's lock). */
    pthread_mutex_unlock(&g_mem.mu);
    /* a calibration the parent ran (its GIL let go to the forking thread)
     * does not go on here; its pending call, if queued, runs it again */
    g_mem.cal_running = 0;
    mem__win_unlock();
    atomic_store(&g_mem.on, 0);
    if (g_mem.win_open) { /* no sampler thread here to close it */
        mem__win_set(0);
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
    if (!named) return 0;
    int *g = mem__guard();
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
        if (d.c.file) walk_code_copy_free(&d.c);
    }
    (*g)--;
    return 0;
}
#endif

int mem_start(agent_t *a, double mean_kb)
{
    (void)a;
    static int atfork_done;
    int zeroed = 0; /* the tables just came from calloc */
    if (!g_mem.live) {
        zeroed = 1;
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
        if (!g_mem.pts || !g_mem.live || !g_mem.fbuf[0] || !g_mem.fbuf[1] || !g_mem.ev[0] ||
            !g_mem.ev[1] || !g_mem.fr[0] || !g_mem.fr[1] || !g_mem.rows || !g_mem.row_slots ||
            !g_mem.sid_key || !g_mem.sid_row || !g_mem.sid_w)
            return -ENOMEM; /* kept for a later try; freed never (process lifetime) */
    }
    pthread_mutex_lock(&g_mem.mu);
    reset_tables(zeroed);
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
        mem__find_py_text(py_path, sizeof py_path);
        PyMem_GetAllocator(PYMEM_DOMAIN_MEM, &g_mem.dom_mem.orig);
        PyMem_GetAllocator(PYMEM_DOMAIN_OBJ, &g_mem.dom_obj.orig);
        const char *wenv = getenv("HOTLINE_MEM_WINDOWS");
        /* windows need plain allocators (no context: the debug hooks of
         * PYTHONMALLOC=debug have one), and something that sees the frees
         * and the requests pymalloc passes on: the shim, or without it
         * (windows_raw) our wrappers of the RAW domain */
        int can_window =
            !g_mem.dom_mem.orig.ctx && !g_mem.dom_obj.orig.ctx && !(wenv && !strcmp(wenv, "0"));
        if (!g_mem.shim_register && !g_mem.pymalloc) can_window = 0;
        if (can_window && !g_mem.pymalloc) {
            /* every Python allocation already reaches malloc: the shim sees
             * them all, and the caller's address tells Python's apart */
            g_mem.mode = "shim";
        } else if (can_window && !mem__win_install(py_path)) {
            can_window = 0; /* slots not found: wrap for good below */
        } else if (can_window && !g_mem.shim_register) {
            raw_wrap();
            g_mem.mode = "windows_raw";
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
    g_mem.py_left = (int64_t)mem__countdown_gap() + 1;
    g_mem.win_prev = clock_mono();
    atomic_store(&g_mem.win_n, 0); /* the sampler thread is not running yet */
    atomic_store(&g_mem.win_len_sum, 0);
    atomic_store(&g_mem.win_span_sum, 0);
    atomic_store(&g_mem.win_span_max, 0);
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
        g_mem.hooks.filter = &g_mem.filter;
        g_mem.hooks.on_copy = shim_on_copy;
        g_mem.hooks.on_map = shim_on_map;
        g_mem.shim_register(&g_mem.hooks);
    }
    return 0;
}

/* Put the allocators back that mem_start wrapped (GIL held; `wrappers` and
 * `windows_raw`), when ours are still what the runtime calls in every
 * domain we wrapped. Left in place, wrappers
 * that only forward still cost every allocation an indirect call and the
 * interpreter's inlined pymalloc path (a target detached from `attach
 * --memory` ran 27% slower for good). Safe for the blocks they handed
 * out: py_malloc, win_malloc, raw_malloc & co. return the original's
 * pointer, with no header, and pass frees and reallocs on unchanged, so the
 * original frees what went through them (a sampled small block of windows
 * is a 513-byte RAW block, which pymalloc frees through RAW). When something wrapped ours
 * since (tracemalloc.start()), ours stay under it, forwarding: taking
 * them out from under it would cut it off. */
static void unwrap(void)
{
    if (!g_mem.installed || !g_mem.mode) return;
    if (!strcmp(g_mem.mode, "wrappers")) {
        PyMemAllocatorEx mem, obj;
        PyMem_GetAllocator(PYMEM_DOMAIN_MEM, &mem);
        PyMem_GetAllocator(PYMEM_DOMAIN_OBJ, &obj);
        if (mem.malloc != py_malloc || mem.ctx != &g_mem.dom_mem || obj.malloc != py_malloc ||
            obj.ctx != &g_mem.dom_obj)
            return;
    } else if (!strcmp(g_mem.mode, "windows_raw")) {
        /* The sampler thread is joined: no window opens any more. MEM and
         * OBJ hold ours (a window's functions, when tracemalloc put back
         * what it found during one) and RAW ours, or all three stay. */
        if (g_mem.win_open) {
            mem__win_set(0);
            g_mem.win_open = 0;
        }
        PyMemAllocatorEx raw;
        PyMem_GetAllocator(PYMEM_DOMAIN_RAW, &raw);
        if (!mem__win_slots_ours() || raw.malloc != raw_malloc || raw.calloc != raw_calloc ||
            raw.realloc != raw_realloc || raw.free != raw_free)
            return;
        PyMem_SetAllocator(PYMEM_DOMAIN_RAW, &g_mem.dom_raw.orig);
        g_mem.windowed = 0;
    } else {
        return; /* windows and shim: with the shim, for the process's life */
    }
    PyMem_SetAllocator(PYMEM_DOMAIN_MEM, &g_mem.dom_mem.orig);
    PyMem_SetAllocator(PYMEM_DOMAIN_OBJ, &g_mem.dom_obj.orig);
    g_mem.installed = 0; /* the next mem_start wraps them again */
}

/* Memory off; the wrappers come out when nothing wrapped them since
 * (unwrap). */
void mem_stop(agent_t *a)
{
    (void)a;
    atomic_store(&g_mem.on, 0);
    if (g_mem.shim_register) g_mem.shim_register(NULL);
    unwrap();
}

int mem_shim_loaded(void)
{
    return g_mem.shim_register != NULL;
}

const char *mem_mode(void)
{
    return g_mem.installed && g_mem.mode ? g_mem.mode : "off";
}
