/* mem_sample.c: the sampled memory events (docs/memory.md).
 *
 * Sampling is by bytes: a countdown (the shim's per thread, the Python
 * domains' per process under the GIL) with randomised gaps (uniform in
 * [mean/2, 3*mean/2)); an allocation that contains k sample points stands
 * for k*mean bytes (exactly its size when it is larger than any gap). A
 * sampled allocation records the raw innermost frames of the *allocating
 * thread itself* and enters a hash of live sampled pointers. Every free
 * checks a bitmap filter on the pointer only (mem_free_ptr, mem_state.h); a
 * hit removes the entry and queues a free event. Events go into
 * double-buffered queues under one mutex (samples are rare); mem_rows.c
 * swaps them every delta. Owns g_mem and t_mem (mem_state.h).
 */
#include "mem_state.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "memread.h"

#include "compat_frame.h" /* after memread.h: it reads frames with mem_read */

struct mem_state g_mem = {.mu = PTHREAD_MUTEX_INITIALIZER};
__thread struct mem_tls t_mem;

/* The Python domains' countdown is one per process, not per thread: MEM and
 * OBJ are only ever called with the GIL held, which serialises it, and a
 * global costs no thread-local lookup on the hot path (this module is
 * dlopen'ed: its TLS goes through __tls_get_addr). The shim keeps its own
 * per-thread countdowns (initial-exec TLS, cheap there). */
double mem__countdown_gap(void)
{
    if (!g_mem.rng) g_mem.rng = mix((uint64_t)(uintptr_t)&g_mem ^ (uint64_t)getpid()) | 1;
    g_mem.rng ^= g_mem.rng << 13;
    g_mem.rng ^= g_mem.rng >> 7;
    g_mem.rng ^= g_mem.rng << 17;
    double u = (double)(g_mem.rng >> 11) * 0x1.0p-53;
    return g_mem.py_mean * (0.5 + u);
}

/* The countdown crossed zero: number of sample points, next gap set. */
__attribute__((noinline, cold)) uint64_t mem__countdown_hit(void)
{
    uint64_t k = 0;
    if ((double)(-g_mem.py_left) > 64 * g_mem.mean) {
        k = (uint64_t)((double)(-g_mem.py_left) / g_mem.mean);
        g_mem.py_left += (int64_t)((double)k * g_mem.mean);
    }
    while (g_mem.py_left <= 0) {
        k++;
        g_mem.py_left += (int64_t)mem__countdown_gap() + 1;
    }
    return k;
}

/* The RAW domain's countdown (windows_raw): per thread, gaps of mean (RAW
 * is always counted, as the shim counts malloc). A thread's first RAW
 * allocation seeds its generator and draws its first gap instead of being
 * taken as a sample point: a countdown starting at 0 would sample the first
 * allocation of every thread. */
static double raw_gap(void)
{
    uint64_t r = t_mem.raw_rng;
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    t_mem.raw_rng = r;
    return g_mem.mean * (0.5 + (double)(r >> 11) * 0x1.0p-53);
}

__attribute__((noinline, cold)) uint64_t mem__raw_countdown_hit(void)
{
    if (!t_mem.raw_rng) {
        t_mem.raw_rng = mix((uint64_t)(uintptr_t)&t_mem ^ (uint64_t)getpid()) | 1;
        t_mem.raw_left += (int64_t)raw_gap() + 1;
        if (t_mem.raw_left > 0) return 0;
    }
    uint64_t k = 0;
    if ((double)(-t_mem.raw_left) > 64 * g_mem.mean) {
        k = (uint64_t)((double)(-t_mem.raw_left) / g_mem.mean);
        t_mem.raw_left += (int64_t)((double)k * g_mem.mean);
    }
    while (t_mem.raw_left <= 0) {
        k++;
        t_mem.raw_left += (int64_t)raw_gap() + 1;
    }
    return k;
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
    if (!tstate) return 0;
    uintptr_t f;
    if (direct) {
        f = ts_frame_direct((PyThreadState *)tstate);
    } else {
        PyThreadState ts;
        if (mem_read(tstate, &ts, sizeof ts) != 0) return 0;
        f = compat_ts_frame(&ts);
    }
    int n = 0;
    for (int guard = 0; f && n < MEM_FRAMES && guard < 4 * MEM_FRAMES; guard++) {
        compat_frame_t copy;
        const compat_frame_t *fr;
        if (direct) {
            fr = (const compat_frame_t *)f;
        } else {
            if (mem_read(f, &copy, sizeof copy) != 0) break;
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
        if (g_mem.fcount[g_mem.fcur][w] < 255) g_mem.fcount[g_mem.fcur][w]++;
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
    if (!g_mem.live[i].p) return 0;
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
            if (!g_mem.live[j].p) return 1;
            unsigned k = live_slot(g_mem.live[j].p);
            if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
            break;
        }
        g_mem.live[i] = g_mem.live[j];
        i = j;
    }
}

/* The filter only gains bits (removals leave them): once stale bits
 * outnumber live entries, rebuild it from the live hash into the other
 * buffer and swap the pointer. A reader holds a buffer for nanoseconds; a
 * buffer is rewritten only at the next rebuild, a second or more later. */
void mem__filter_rebuild_if_stale(void)
{
    if (!(g_mem.fstale > 256 && g_mem.fstale > (uint64_t)g_mem.nlive)) return;
    uint64_t *nf = g_mem.fbuf[g_mem.fcur ^ 1];
    uint8_t *nc = g_mem.fcount[g_mem.fcur ^ 1];
    memset(nf, 0, MEM_FILTER / 8);
    memset(nc, 0, MEM_FILTER / 64);
    for (unsigned i = 0; i < MEM_LIVE_CAP; i++)
        if (g_mem.live[i].p) {
            uint64_t m;
            unsigned w = filter_cell(g_mem.live[i].p, &m);
            nf[w] |= m;
            if (nc[w] < 255) nc[w]++;
        }
    g_mem.fcur ^= 1;
    g_mem.fstale = 0;
    atomic_store_explicit(&g_mem.filter, nf, memory_order_release);
}

void mem__sample_reset(int zeroed)
{
    if (!zeroed) memset(g_mem.live, 0, MEM_LIVE_CAP * sizeof *g_mem.live);
    /* a forked child's copies of dead codes stay queued: their seqs are
     * older than any event it records, and the next emit frees them */
    memset(g_mem.codebits, 0, sizeof g_mem.codebits);
    /* word by word, atomically: a free on another thread may be reading
     * the filter right now (mem_free_ptr takes no lock) */
    for (size_t i = 0; i < MEM_FILTER / 64; i++) {
        __atomic_store_n(&g_mem.fbuf[0][i], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&g_mem.fbuf[1][i], 0, __ATOMIC_RELAXED);
    }
    memset(g_mem.fcount, 0, sizeof g_mem.fcount);
    g_mem.fcur = 0;
    g_mem.fstale = 0;
    atomic_store(&g_mem.filter, g_mem.fbuf[0]);
    g_mem.nlive = g_mem.nev = g_mem.nfr = 0;
    g_mem.dropped = 0;
}

/* ---- producers ---- */

void mem__record(void *p, size_t n, uint64_t k, int kind, int origin, uintptr_t tstate, int direct,
                 double mean, uint32_t win)
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
    e->file0 = 0;
    e->first0 = 0;
    if (nfr && direct) { /* our own frame's code: alive while we are in its allocation */
        const PyCodeObject *co = (const PyCodeObject *)fr[0].code;
        e->file0 = (uintptr_t)co->co_filename;
        e->first0 = co->co_firstlineno;
    }
    for (int i = 0; i < nfr; i++) {
        unsigned bit = code_bit(fr[i].code);
        g_mem.codebits[g_mem.cur][bit / 64] |= 1ull << (bit % 64);
    }
    if (kind == EV_ALLOC) live_put((uintptr_t)p, e->seq);
    pthread_mutex_unlock(&g_mem.mu);
}

__attribute__((noinline, cold)) void mem__free_hit(void *p)
{
    /* win_open is the sampler thread's; read racily on purpose (atomic) */
    double t0 = __atomic_load_n(&g_mem.win_open, __ATOMIC_RELAXED) ? clock_mono() : 0;
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
