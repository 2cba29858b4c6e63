/* mem_window.c: windows of the Python-domain hooks (docs/memory.md,
 * "Windows"): wrappers that sit in CPython's allocator slots only for short
 * spans the sampler thread opens, the slots found and patched at run time,
 * and the calibration of what a window costs the program. Why windows: the
 * comment below. */
#include "mem_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030D0000
#include <internal/pycore_interp.h> /* eval_breaker: mem_window_calibrate */
#endif

#include "clock.h"
#include "memhooks.h"

/* ---- windows ----
 *
 * Wrapping the MEM and OBJ domains costs more than the wrappers' own
 * instructions: optimised builds (Debian's python3.11, PGO + LTO) inline
 * pymalloc into PyObject_Malloc behind a check that the allocator is the
 * default one, and any hook sends every allocation down the slow indirect
 * path (+45% wall time on a loop of small dicts and strings). So when the
 * domains are plain pymalloc, the hooks are in place
 * only during short windows that the sampler thread opens between its ticks
 * (~0.6 ms every ~3 ms, jittered: ~17% of the time; fewer, longer windows
 * than 0.2 every 1 ms because each costs two wake-ups, sampler.c); outside
 * them the runtime's structs hold pymalloc's own functions again.
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
 * Without the shim (`windows_raw`: an attached target, hotline.start()
 * in-process) the RAW domain's wrappers (memhooks.c) do the shim's two
 * jobs: their free checks the filter, their malloc counts what pymalloc
 * passes on (the guard raised around a sampled block keeps it out).
 */

static void *win_sample(mem_dom_t *d, void *old, size_t n, int calloc_)
{
    double t0 = clock_mono();
    uint64_t k = mem__countdown_hit();
    size_t big = MEM_PYMALLOC_MAX + 1;
    int *g = mem__guard();
    (*g)++;
    void *p = old       ? d->orig.realloc(d->orig.ctx, old, big)
              : calloc_ ? d->orig.calloc(d->orig.ctx, 1, big)
                        : d->orig.malloc(d->orig.ctx, big);
    (*g)--;
    if (p && !*g && atomic_load_explicit(&g_mem.on, memory_order_relaxed)) {
        PyThreadState *ts = PyGILState_GetThisThreadState();
        (*g)++;
        mem__record(p, n, k, EV_ALLOC, ORIGIN_PY, (uintptr_t)ts, 1, g_mem.win_mean,
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
    if (n > MEM_PYMALLOC_MAX) return d->orig.malloc(d->orig.ctx, n);
    g_mem.py_left -= (int64_t)n;
    if (__builtin_expect(g_mem.py_left > 0, 1)) return d->orig.malloc(d->orig.ctx, n);
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
    if (__builtin_expect(g_mem.py_left > 0, 1)) return d->orig.calloc(d->orig.ctx, a, b);
    return win_sample(d, NULL, n, 1);
}

static void *win_realloc(void *ctx, void *old, size_t n)
{
    mem_dom_t *d = ctx;
    if (!old) return win_malloc(ctx, n);
    win_count_call();
    if (atomic_load_explicit(&g_mem.on, memory_order_relaxed))
        mem_free_ptr(old); /* a sampled block moves or goes; the guard may hide its free */
    if (n > MEM_PYMALLOC_MAX) return d->orig.realloc(d->orig.ctx, old, n);
    g_mem.py_left -= (int64_t)n;
    if (__builtin_expect(g_mem.py_left > 0, 1)) return d->orig.realloc(d->orig.ctx, old, n);
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
int mem__win_set(int open)
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
int mem__win_slots_ours(void)
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

/* Windows and the calibration (which opens and closes the slots itself)
 * never overlap: a window opens under win_mu unless cal_running. Held
 * across fork (memhooks.c's atfork handlers): a child that inherited it
 * locked hung in its first window or calibration (memory.fork). */
static pthread_mutex_t win_mu = PTHREAD_MUTEX_INITIALIZER;

void mem__win_lock(void)
{
    pthread_mutex_lock(&win_mu);
}

void mem__win_unlock(void)
{
    pthread_mutex_unlock(&win_mu);
}

int mem_windows_on(void)
{
    return g_mem.windowed && atomic_load_explicit(&g_mem.on, memory_order_relaxed);
}

int mem_window(agent_t *a, int open)
{
    (void)a;
    if (!g_mem.windowed || !atomic_load_explicit(&g_mem.on, memory_order_relaxed)) return 0;
    double now = clock_mono();
    if (open) {
        pthread_mutex_lock(&win_mu); /* the calibration may be about to run */
        if (g_mem.win_open || g_mem.cal_running || !mem__win_slots_ours()) {
            if (!g_mem.win_open && !g_mem.cal_running) g_mem.windowed = 0;
            pthread_mutex_unlock(&win_mu);
            return 0;
        }
        uint32_t id = atomic_load_explicit(&g_mem.win_id, memory_order_relaxed) + 1;
        if (!id) id = 1;
        g_mem.win_scale[id % MEM_WIN_RING] = 1.0f; /* until it closes */
        atomic_store_explicit(&g_mem.win_id, id, memory_order_relaxed);
        atomic_store_explicit(&g_mem.win_calls, 0, memory_order_relaxed);
        atomic_store_explicit(&g_mem.win_sample_s, 0, memory_order_relaxed);
        g_mem.win_t0 = now;
        if (!mem__win_set(1))
            g_mem.windowed = 0;
        else
            __atomic_store_n(&g_mem.win_open, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&win_mu);
        return 0;
    }
    /* under win_mu too: the calibration (another thread) waits for the
     * close under it, then reads and writes win_prev and call_cost */
    pthread_mutex_lock(&win_mu);
    if (!g_mem.win_open) {
        pthread_mutex_unlock(&win_mu);
        return 0;
    }
    if (!mem__win_slots_ours() || !mem__win_set(0)) g_mem.windowed = 0;
    __atomic_store_n(&g_mem.win_open, 0, __ATOMIC_RELAXED);
    double len = now - g_mem.win_t0, span = now - g_mem.win_prev;
    /* the program ran slower in the window: the wrappers (calls x their
     * calibrated cost) and the samples taken (measured) */
    uint64_t calls = atomic_load_explicit(&g_mem.win_calls, memory_order_relaxed);
    double extra = (double)calls * g_mem.call_cost +
                   atomic_load_explicit(&g_mem.win_sample_s, memory_order_relaxed);
    double len_eff = len - extra > 0.25 * len ? len - extra : 0.25 * len;
    double span_eff = span - extra > len_eff ? span - extra : len_eff;
    g_mem.win_scale[atomic_load_explicit(&g_mem.win_id, memory_order_relaxed) % MEM_WIN_RING] =
        (float)(span_eff / len_eff);
    g_mem.win_prev = now;
    const memory_order rx = memory_order_relaxed;
    atomic_store_explicit(&g_mem.win_len_sum, atomic_load_explicit(&g_mem.win_len_sum, rx) + len,
                          rx);
    atomic_store_explicit(&g_mem.win_span_sum, atomic_load_explicit(&g_mem.win_span_sum, rx) + span,
                          rx);
    if (span > atomic_load_explicit(&g_mem.win_span_max, rx))
        atomic_store_explicit(&g_mem.win_span_max, span, rx);
    atomic_store_explicit(&g_mem.win_n, atomic_load_explicit(&g_mem.win_n, rx) + 1, rx);
    pthread_mutex_unlock(&win_mu);
    return calls > 0;
}

void mem_window_stats(mem_win_stats_t *st)
{
    const memory_order rx = memory_order_relaxed;
    uint64_t n = atomic_load_explicit(&g_mem.win_n, rx);
    st->n = n;
    st->len_mean = n ? atomic_load_explicit(&g_mem.win_len_sum, rx) / (double)n : 0;
    st->span_mean = n ? atomic_load_explicit(&g_mem.win_span_sum, rx) / (double)n : 0;
    st->span_max = atomic_load_explicit(&g_mem.win_span_max, rx);
    st->call_cost = g_mem.call_cost;
}

/* The interpreter's code: the executable mapping that holds
 * PyObject_Malloc (the python binary or libpython); its path in *path. */
void mem__find_py_text(char *path, size_t cap)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    char line[512], p[256];
    uintptr_t fn = (uintptr_t)&PyObject_Malloc;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8];
        p[0] = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perm, p) >= 3 &&
            perm[2] == 'x' && fn >= lo && fn < hi) {
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
        if (f) fclose(f);
        return NULL;
    }
    char line[512], path[256];
    PyMemAllocatorEx *hit = NULL;
    int n = 0, after_py = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8];
        path[0] = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perm, path) < 3) continue;
        int mine = !strcmp(path, py_path) || (!path[0] && after_py);
        after_py = !strcmp(path, py_path);
        if (!mine || perm[0] != 'r' || perm[1] != 'w') continue;
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
 * (ints, strs, lists, dicts), with the window open and closed: median of 9
 * paired differences of 500 iterations each (was 5 of 2000: 117M
 * instructions, ~10 ms; now ~49M), run with the GIL before the first
 * window (mem_window_calibrate). A pair in which either
 * half's wall time exceeds its CPU time (by 20% + 50 us) is not kept: the
 * thread was preempted, or the GIL went to a program thread, whose calls
 * would then count in an open half; up to CAL_PAIRS pairs, and when fewer
 * than 3 were kept, the median of all. 0 when the probe cannot run. Still an underestimate: churn
 * is counted ~8% low in windows (tests/memory small_objects). Timed in this thread's CPU time, not
 * the wall clock: on a loaded machine (load 5-6, 2 cores) a preemption in the open half of several
 * pairs made the median 33 ns once in 10 starts, and every window's cost that large counted churn
 * 2.8x (924 MB against the wrappers' 329); in CPU time 0-2.3 ns there. */
#define CAL_GUESS 2e-9 /* s a call, until measured: 1-2.5 ns on 3.11 here, ~2.3 on 3.12 */
#define CAL_REPS 9     /* paired runs kept */
#define CAL_PAIRS 13   /* paired runs at most */
#define CAL_ITER 500   /* iterations of the probe loop a run */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The probe function, compiled once in mem__win_install, before the
 * program runs, and kept (a reference for the process's life). Compiled
 * when the calibration ran, in the middle of the program, its code objects
 * could take the block of a code object the program had just freed, whose
 * queued events then resolved to "<string>" and went to the caller's line
 * (3.9-3.11, no code watcher: memory.cells_reused charged 8-16 MB of cells
 * to their exec line, 2 runs in 7). New reference or NULL; GIL held. */
static PyObject *cal_fn;

static void calibrate_compile(void)
{
    static const char src[] =
        "def _hotline_cal(n):\n"
        "    for i in range(n):\n"
        "        d = {'k%d' % (i % 97): [i, i + 1, i + 2], 's': str(i) * 3, i: (i, 'x')}\n";
    PyObject *g = PyDict_New(), *r = NULL;
    if (g && PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) == 0 &&
        (r = PyRun_String(src, Py_file_input, g, g)) != NULL) {
        cal_fn = PyDict_GetItemString(g, "_hotline_cal"); /* borrowed */
        Py_XINCREF(cal_fn);
    }
    if (PyErr_Occurred()) PyErr_Clear();
    Py_XDECREF(r);
    Py_XDECREF(g);
}

static double calibrate(void)
{
    PyObject *fn = cal_fn;
    double diff[2][CAL_PAIRS]; /* [0] every pair, [1] the pairs that kept the CPU */
    int nd[2] = {0, 0};
    if (!fn) goto out;
    int64_t keep = g_mem.py_left;
    g_mem.py_left = INT64_MAX / 2; /* no sample meanwhile */
    /* rep -1 warms up; pairs go on until CAL_REPS were kept */
    for (int rep = -1; rep < CAL_PAIRS && nd[1] < CAL_REPS; rep++) {
        double t[2];
        int kept = 1;
        uint64_t calls = 0;
        for (int open = 0; open < 2; open++) {
            mem__win_set(open);
            atomic_store_explicit(&g_mem.win_calls, 0, memory_order_relaxed);
            double w0 = clock_mono(), t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
            PyObject *res = PyObject_CallFunction(fn, "i", CAL_ITER);
            t[open] = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
            double wall = clock_mono() - w0;
            mem__win_set(0);
            if (!res) {
                g_mem.py_left = keep;
                goto out;
            }
            Py_DECREF(res);
            if (open) calls = atomic_load_explicit(&g_mem.win_calls, memory_order_relaxed);
            /* the GIL went to a program thread (its calls then count in an
             * open half) or this thread was preempted */
            if (wall > 1.2 * t[open] + 50e-6) kept = 0;
        }
        if (rep < 0 || !calls) continue;
        double d = (t[1] - t[0]) / (double)calls;
        diff[0][nd[0]++] = d;
        if (kept) diff[1][nd[1]++] = d;
    }
    g_mem.py_left = keep;
out:
    if (PyErr_Occurred()) PyErr_Clear();
    atomic_store_explicit(&g_mem.win_calls, 0, memory_order_relaxed);
    int k = nd[1] >= 3 ? 1 : 0; /* too few undisturbed pairs: all of them */
    if (!nd[k]) return 0;
    /* paired differences, median: robust to a noisy neighbour on either side */
    qsort(diff[k], (size_t)nd[k], sizeof *diff[k], cmp_double);
    double d = diff[k][nd[k] / 2];
    return d > 0 ? d : 0;
}

int mem__win_install(const char *py_path)
{
    PyMemAllocatorEx w[2];
    mem_dom_t *ds[2] = {&g_mem.dom_mem, &g_mem.dom_obj};
    for (int i = 0; i < 2; i++) {
        w[i] = (PyMemAllocatorEx){ds[i], win_malloc, win_calloc, win_realloc, ds[i]->orig.free};
        PyMem_SetAllocator(i ? PYMEM_DOMAIN_OBJ : PYMEM_DOMAIN_MEM, &w[i]);
        ds[i]->slot = find_slot(&w[i], py_path);
    }
    if (!g_mem.dom_mem.slot || !g_mem.dom_obj.slot) return 0;
    mem__win_set(0); /* closed: pymalloc's own functions until a window opens */
    if (!cal_fn) calibrate_compile();
    g_mem.windowed = 1;
    g_mem.mode = "windows";
    g_mem.call_cost = CAL_GUESS; /* until measured (mem_window_calibrate) */
    return 1;
}

/* The calibration ran in mem_start, on the program's main thread, until it
 * was ~9-11 ms of CPU of every start-up with memory on (117M instructions,
 * a third of what `hotline run` added to an empty program). Windows now
 * open from the start with a guessed cost (CAL_GUESS), and the sampler asks
 * for the measurement once the program has run CAL_DELAY_S (sampler.c): a
 * program that ends first never pays it.
 *   - It runs as a pending call (Py_AddPendingCall) that the main thread
 *     runs at its next check between bytecodes: nobody waits for the GIL.
 *     Before 3.13 that check is armed only by a thread that may run
 *     pending calls (module.c, schedule_unload), so the sampler arms it
 *     itself (the interpreter's eval_breaker; were the call already run, a
 *     no-op call makes the main thread recompute it). Not at the
 *     interpreter's end (no Python frame: _Py_FinishPendingCalls) nor
 *     after stop().
 *   - When the main thread runs no bytecode for CAL_WAIT_S (blocked in a
 *     join while threads work, a long C call), on the sampler thread with
 *     PyGILState_Ensure, once the GIL will come soon (gil_soon: free, or
 *     its holder's frame moves). A sampler waiting for a GIL that a long C
 *     call holds (`sum(range(10**9))` right after start) took no time
 *     sample until the call returned (0 samples in 3 runs of 6). Not a
 *     helper thread: its malloc arena (64 MB reserved) became memory a
 *     program under RLIMIT_AS could use (memory.oom: 456 MB kept of 400).
 * It opens and closes the slots itself: no window is open meanwhile
 * (cal_running, win_mu). The time it held the GIL is taken out of the next
 * window's span (win_prev): it is not the program's. */
#define CAL_WAIT_S 0.2

static void calibrate_now(void)
{
    /* once at a time: its Python loop lets the GIL go at the switch
     * interval, and the sampler's fallback could take it then (callgrind saw
     * both run, one inside the other) */
    pthread_mutex_lock(&win_mu);
    int busy = g_mem.cal_running || atomic_load(&g_mem.calibrated);
    if (!busy) g_mem.cal_running = 1;
    pthread_mutex_unlock(&win_mu);
    if (busy) return;
    /* the sampler closes an open window within its length (0.6 ms); read
     * under win_mu, which the close holds: what it wrote (win_prev) is
     * seen here (ThreadSanitizer: tsan.agent) */
    for (int i = 0;; i++) {
        pthread_mutex_lock(&win_mu);
        int open = g_mem.win_open;
        if (open && i == 400) g_mem.cal_running = 0; /* 20 ms: a starved sampler */
        pthread_mutex_unlock(&win_mu);
        if (!open) break;
        if (i == 400) return; /* the fallback tries again */
        usleep(50);
    }
    int *g = mem__guard();
    (*g)++; /* what it allocates is not the program's */
    double t0 = clock_mono();
    g_mem.call_cost = calibrate();
    g_mem.win_prev += clock_mono() - t0; /* no window opens or closes meanwhile */
    (*g)--;
    atomic_store_explicit(&g_mem.calibrated, 1, memory_order_release);
    pthread_mutex_lock(&win_mu);
    g_mem.cal_running = 0;
    pthread_mutex_unlock(&win_mu);
}

static int cal_pending(void *arg)
{
    (void)arg;
    atomic_store(&g_mem.cal_queued, 0);
    if (!atomic_load(&g_mem.calibrated) && mem_windows_on() && PyEval_GetFrame() &&
        mem__win_slots_ours())
        calibrate_now();
    return 0;
}

#if PY_VERSION_HEX < 0x030D0000
static int cal_noop(void *arg)
{
    (void)arg;
    return 0;
}
#endif

int mem_window_calibrated(void)
{
    return atomic_load_explicit(&g_mem.calibrated, memory_order_acquire) || !mem_windows_on();
}

int mem_window_calibrate(const atomic_int *stop, int gil_soon)
{
    static double asked; /* when the pending call was queued (sampler thread) */
    if (mem_window_calibrated() || atomic_load(stop)) return 0;
    if (!asked) {
        atomic_store(&g_mem.cal_queued, 1);
        if (Py_AddPendingCall(cal_pending, NULL) != 0) { /* the queue is full: later */
            atomic_store(&g_mem.cal_queued, 0);
            return 0;
        }
        asked = clock_mono();
#if PY_VERSION_HEX < 0x030D0000
        PyInterpreterState *in = PyInterpreterState_Main();
        _Py_atomic_store_relaxed(&in->ceval.eval_breaker, 1);
        if (!atomic_load(&g_mem.cal_queued)) Py_AddPendingCall(cal_noop, NULL);
#endif
        return 0;
    }
    if (clock_mono() - asked < CAL_WAIT_S || !gil_soon ||
        __atomic_load_n(&g_mem.cal_running, __ATOMIC_RELAXED)) /* the main thread's runs */
        return 0;
#if PY_VERSION_HEX >= 0x030D0000
    if (Py_IsFinalizing()) return 0; /* no GIL to take */
#else
    if (_Py_IsFinalizing()) return 0;
#endif
    PyGILState_STATE st = PyGILState_Ensure();
    /* stop() (at exit) releases the GIL to join us: ours then, but the
     * program is ending */
    if (!atomic_load(stop) && !atomic_load(&g_mem.calibrated) && mem__win_slots_ours())
        calibrate_now();
    PyGILState_Release(st);
    return 1;
}
