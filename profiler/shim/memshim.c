/* memshim.c: libhotline_memshim.so, the LD_PRELOAD allocation shim.
 *
 * Why: Python's allocator hooks (memhooks.c) only see what Python allocates;
 * numpy arrays and C/C++ extensions call malloc directly. This library
 * interposes malloc/calloc/realloc/free/posix_memalign/aligned_alloc/
 * memalign and memcpy/memmove, forwards to the next definition (glibc), and
 * reports *sampled* allocations and copies to the agent once it registered
 * (memshim.h). Until then, and in processes without an agent, it forwards.
 *
 * Rules kept here: no allocation inside a hook, nothing but the per-thread
 * countdown on the fast path, dlsym's own calloc during bootstrap served from
 * a static arena. Global state: the resolved functions and the hooks pointer
 * (written once at load / by the agent, read everywhere), documented per
 * STYLE.md as the shim's process-wide part. mmap/munmap/mremap are
 * interposed for anonymous mappings (memory an extension maps for data);
 * glibc's malloc reaches mmap internally, not through the PLT, so its big
 * blocks are not seen twice, and the agent drops pymalloc's arenas (mapped
 * from the interpreter's code) because it counts those per object.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdarg.h>
#include <sys/mman.h>

#include "memshim.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef int (*pmalign_fn)(void **, size_t, size_t);
typedef void *(*aalloc_fn)(size_t, size_t);
typedef void *(*memcpy_fn)(void *, const void *, size_t);
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);

static struct {
    malloc_fn malloc;
    calloc_fn calloc;
    realloc_fn realloc;
    free_fn free;
    pmalign_fn posix_memalign;
    aalloc_fn aligned_alloc, memalign;
    memcpy_fn memcpy, memmove;
    mmap_fn mmap;
    munmap_fn munmap;
    mremap_fn mremap;
    int ready;
    _Atomic(const struct hotline_shim_hooks *) hooks;
} g_shim;

/* bootstrap arena for dlsym's allocations before the real ones are known */
static _Alignas(16) char g_boot[16384];
static atomic_size_t g_boot_used;
static TLS int t_resolving;

static TLS int t_guard; /* >0: do not report (agent inside Python allocator / hook) */
static TLS int64_t t_left, t_copy_left;
static TLS uint64_t t_rng;

static int in_boot(const void *p)
{
    return (const char *)p >= g_boot && (const char *)p < g_boot + sizeof g_boot;
}

static void *boot_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    size_t off = atomic_fetch_add(&g_boot_used, n);
    if (off + n > sizeof g_boot) return NULL;
    return g_boot + off; /* static storage: already zero */
}

static void resolve(void)
{
    if (g_shim.ready || t_resolving) return;
    t_resolving = 1;
    g_shim.malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
    g_shim.calloc = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
    g_shim.realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
    g_shim.free = (free_fn)dlsym(RTLD_NEXT, "free");
    g_shim.posix_memalign = (pmalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
    g_shim.aligned_alloc = (aalloc_fn)dlsym(RTLD_NEXT, "aligned_alloc");
    g_shim.memalign = (aalloc_fn)dlsym(RTLD_NEXT, "memalign");
    g_shim.memcpy = (memcpy_fn)dlsym(RTLD_NEXT, "memcpy");
    g_shim.memmove = (memcpy_fn)dlsym(RTLD_NEXT, "memmove");
    g_shim.mmap = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
    g_shim.munmap = (munmap_fn)dlsym(RTLD_NEXT, "munmap");
    g_shim.mremap = (mremap_fn)dlsym(RTLD_NEXT, "mremap");
    g_shim.ready = g_shim.malloc && g_shim.calloc && g_shim.realloc && g_shim.free;
    t_resolving = 0;
}

__attribute__((constructor)) static void shim_init(void)
{
    resolve();
}

static uint64_t rng_next(void)
{
    if (!t_rng) t_rng = ((uint64_t)(uintptr_t)&t_rng * 0x9E3779B97F4A7C15ull) | 1;
    t_rng ^= t_rng << 13;
    t_rng ^= t_rng >> 7;
    t_rng ^= t_rng << 17;
    return t_rng;
}

/* Next gap: uniform in [mean/2, 3*mean/2) (randomised, low variance). */
static int64_t gap(double mean)
{
    double u = (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
    int64_t g = (int64_t)(mean * (0.5 + u));
    return g > 0 ? g : 1;
}

/* Number of sample points that fall into n bytes (0 mostly). */
static uint64_t countdown(int64_t *left, size_t n, double mean)
{
    if (*left == 0) *left = gap(mean);
    *left -= (int64_t)n;
    if (*left > 0) return 0;
    uint64_t k = 0;
    if ((double)(-*left) > 64 * mean) {
        k = (uint64_t)((double)(-*left) / mean);
        *left += (int64_t)((double)k * mean);
    }
    while (*left <= 0) {
        k++;
        *left += gap(mean);
    }
    return k;
}

/* The fast paths below are inlined into the exported functions, and what
 * is rare (a sample point, a filter hit, the first calls before resolve())
 * is out of line, so that the common case saves no registers: every malloc,
 * free and memcpy of the process passes here (callgrind: the interposed
 * memcpy alone was 15 instructions a call, 2% of a small-object loop's). */
static __attribute__((noinline, cold)) void alloc_hit(const struct hotline_shim_hooks *h, void *p,
                                                      size_t n, const void *caller)
{
    t_left += (int64_t)n; /* countdown() takes it from where it was */
    uint64_t k = countdown(&t_left, n, h->mean_bytes);
    if (!k) return;
    t_guard++;
    h->on_alloc(p, n, k, caller);
    t_guard--;
}

static inline __attribute__((always_inline)) void report_alloc(void *p, size_t n,
                                                               const void *caller)
{
    const struct hotline_shim_hooks *h = atomic_load_explicit(&g_shim.hooks, memory_order_acquire);
    if (!h || !p || t_guard) return;
    t_left -= (int64_t)n; /* 0 before the thread's first gap: alloc_hit draws it */
    if (__builtin_expect(t_left > 0, 1)) return;
    alloc_hit(h, p, n, caller);
}

static __attribute__((noinline, cold)) void free_hit(const struct hotline_shim_hooks *h, void *p)
{
    if (t_guard) return;
    t_guard++;
    h->on_free(p);
    t_guard--;
}

/* The agent's filter first: a pointer none of its samples could be costs a
 * hash and one load (the bits are set before a sample's block is handed
 * back by on_alloc, so its free always finds them). */
static inline __attribute__((always_inline)) void report_free(void *p)
{
    const struct hotline_shim_hooks *h = atomic_load_explicit(&g_shim.hooks, memory_order_acquire);
    if (!h || !p) return;
    uint64_t m;
    unsigned w = hotline_shim_filter_cell((uintptr_t)p, &m);
    const uint64_t *f = atomic_load_explicit(h->filter, memory_order_acquire);
    if (__builtin_expect((__atomic_load_n(&f[w], __ATOMIC_RELAXED) & m) != m, 1)) return;
    free_hit(h, p);
}

static void report_map(void *p, size_t n, const void *caller)
{
    const struct hotline_shim_hooks *h = atomic_load_explicit(&g_shim.hooks, memory_order_acquire);
    if (!h || p == MAP_FAILED || t_guard) return;
    uint64_t k = countdown(&t_left, n, h->mean_bytes);
    if (!k) return;
    t_guard++;
    h->on_map(p, n, k, caller);
    t_guard--;
}

static void report_copy(size_t n)
{
    const struct hotline_shim_hooks *h = atomic_load_explicit(&g_shim.hooks, memory_order_relaxed);
    if (!h || t_guard) return;
    uint64_t k = countdown(&t_copy_left, n, h->copy_mean);
    if (!k) return;
    t_guard++;
    h->on_copy(n, k);
    t_guard--;
}

EXPORT void hotline_shim_register(const struct hotline_shim_hooks *h)
{
    if (h && h->abi != HOTLINE_SHIM_ABI) return;
    atomic_store_explicit(&g_shim.hooks, h, memory_order_release);
}

EXPORT int *hotline_shim_guard(void)
{
    return &t_guard;
}

EXPORT void *malloc(size_t n)
{
    if (!g_shim.ready) {
        resolve();
        if (!g_shim.ready) return boot_alloc(n);
    }
    void *p = g_shim.malloc(n);
    report_alloc(p, n, __builtin_return_address(0));
    return p;
}

EXPORT void *calloc(size_t a, size_t b)
{
    if (!g_shim.ready) {
        resolve();
        if (!g_shim.ready) {
            if (b && a > SIZE_MAX / b) return NULL;
            return boot_alloc(a * b);
        }
    }
    void *p = g_shim.calloc(a, b);
    if (p) report_alloc(p, a * b, __builtin_return_address(0));
    return p;
}

EXPORT void free(void *p)
{
    if (!p || in_boot(p)) return;
    report_free(p);
    if (!g_shim.ready) resolve();
    g_shim.free(p);
}

EXPORT void *realloc(void *old, size_t n)
{
    if (!g_shim.ready) resolve();
    if (old && in_boot(old)) {
        void *p = malloc(n);
        if (p) {
            size_t avail = sizeof g_boot - (size_t)((char *)old - g_boot);
            size_t c = n < avail ? n : avail;
            for (size_t i = 0; i < c; i++)
                ((volatile char *)p)[i] = ((char *)old)[i];
        }
        return p;
    }
    if (!g_shim.ready) return boot_alloc(n);
    if (old) report_free(old); /* the old block is gone (moved or resized) */
    void *p = g_shim.realloc(old, n);
    if (p) report_alloc(p, n, __builtin_return_address(0));
    return p;
}

EXPORT int posix_memalign(void **out, size_t al, size_t n)
{
    if (!g_shim.ready) resolve();
    if (!g_shim.posix_memalign) return ENOMEM;
    int r = g_shim.posix_memalign(out, al, n);
    if (r == 0) report_alloc(*out, n, __builtin_return_address(0));
    return r;
}

EXPORT void *aligned_alloc(size_t al, size_t n)
{
    if (!g_shim.ready) resolve();
    if (!g_shim.aligned_alloc) return NULL;
    void *p = g_shim.aligned_alloc(al, n);
    report_alloc(p, n, __builtin_return_address(0));
    return p;
}

EXPORT void *memalign(size_t al, size_t n)
{
    if (!g_shim.ready) resolve();
    if (!g_shim.memalign) return NULL;
    void *p = g_shim.memalign(al, n);
    report_alloc(p, n, __builtin_return_address(0));
    return p;
}

/* Byte loops for the instant before resolve(); -fno-builtin and
 * -fno-tree-loop-distribute-patterns keep them from becoming memcpy calls. */
static void *copy_fwd(void *d, const void *s, size_t n)
{
    volatile char *dd = d;
    const char *ss = s;
    for (size_t i = 0; i < n; i++)
        dd[i] = ss[i];
    return d;
}

static __attribute__((noinline, cold)) void *memcpy_slow(void *d, const void *s, size_t n)
{
    if (!g_shim.memcpy) {
        resolve();
        if (!g_shim.memcpy) return copy_fwd(d, s, n);
    }
    if (n >= 256) report_copy(n);
    return g_shim.memcpy(d, s, n);
}

/* a load, two tests and the jump: no frame (most copies are short) */
EXPORT void *memcpy(void *d, const void *s, size_t n)
{
    memcpy_fn f = g_shim.memcpy;
    if (__builtin_expect(!f || n >= 256, 0)) return memcpy_slow(d, s, n);
    return f(d, s, n);
}

static __attribute__((noinline, cold)) void *memmove_slow(void *d, const void *s, size_t n)
{
    if (!g_shim.memmove) {
        resolve();
        if (!g_shim.memmove) {
            if ((char *)d < (const char *)s || (char *)d >= (const char *)s + n)
                return copy_fwd(d, s, n);
            volatile char *dd = d;
            const char *ss = s;
            for (size_t i = n; i > 0; i--)
                dd[i - 1] = ss[i - 1];
            return d;
        }
    }
    if (n >= 256) report_copy(n);
    return g_shim.memmove(d, s, n);
}

EXPORT void *memmove(void *d, const void *s, size_t n)
{
    memcpy_fn f = g_shim.memmove;
    if (__builtin_expect(!f || n >= 256, 0)) return memmove_slow(d, s, n);
    return f(d, s, n);
}

/* Anonymous mappings carry data; file mappings are the file's (not counted). */
EXPORT void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
    if (!g_shim.mmap) {
        resolve();
        if (!g_shim.mmap) {
            errno = ENOMEM;
            return MAP_FAILED;
        }
    }
    void *p = g_shim.mmap(addr, n, prot, flags, fd, off);
    if (flags & MAP_ANONYMOUS) report_map(p, n, __builtin_return_address(0));
    return p;
}

/* the same symbol for code built with _FILE_OFFSET_BITS=64 (x86_64: one ABI) */
EXPORT void *mmap64(void *addr, size_t n, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));

/* Only a whole mapping from its start ends a sampled one (partial unmaps of
 * a sampled mapping leave it counted until its start goes). */
EXPORT int munmap(void *p, size_t n)
{
    if (!g_shim.munmap) {
        resolve();
        if (!g_shim.munmap) {
            errno = EINVAL;
            return -1;
        }
    }
    int r = g_shim.munmap(p, n);
    if (r == 0) report_free(p);
    return r;
}

EXPORT void *mremap(void *old, size_t old_n, size_t n, int flags, ...)
{
    if (!g_shim.mremap) {
        resolve();
        if (!g_shim.mremap) {
            errno = ENOMEM;
            return MAP_FAILED;
        }
    }
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    void *p = g_shim.mremap(old, old_n, n, flags, want);
    if (p != MAP_FAILED) {
        report_free(old); /* moved or resized: count it again at its new size */
        report_map(p, n, __builtin_return_address(0));
    }
    return p;
}
