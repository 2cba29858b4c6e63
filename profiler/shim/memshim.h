/* memshim.h: the seam between the LD_PRELOAD allocation shim
 * (libhotline_memshim.so, shim/memshim.c) and the agent (memhooks.c).
 *
 * The shim is loaded first into every process that `hotline run` / `hotline
 * lsp` starts with memory profiling on. Until an agent registers hooks it
 * only forwards to the real allocator. The agent finds the shim with
 * dlsym(RTLD_DEFAULT, "hotline_shim_register") (absent: Python allocations
 * only, nothing else changes). The shim keeps the per-thread byte countdown
 * so that an unsampled malloc costs a few instructions and no call.
 */
#ifndef HOTLINE_MEMSHIM_H
#define HOTLINE_MEMSHIM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define HOTLINE_SHIM_ABI 4

/* The agent's blocked Bloom filter of live sampled pointers (mem_state.h,
 * MEM_FILTER): this many 64-bit words, two bits of one word per pointer.
 * The shim checks it itself on every free and calls on_free only on a hit:
 * a free of the program then costs a hash and one load, no call. */
#define HOTLINE_SHIM_FILTER_WORDS 2048

static inline uint64_t hotline_shim_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* p's word in the filter; its two bits in *mask */
static inline unsigned hotline_shim_filter_cell(uintptr_t p, uint64_t *mask)
{
    uint64_t h = hotline_shim_mix(p);
    *mask = (1ull << ((h >> 20) & 63)) | (1ull << ((h >> 26) & 63));
    return (unsigned)(h & (HOTLINE_SHIM_FILTER_WORDS - 1));
}

struct hotline_shim_hooks {
    int abi;           /* HOTLINE_SHIM_ABI */
    double mean_bytes; /* mean sampling interval in bytes (allocations) */
    double copy_mean;  /* mean sampling interval in bytes (memcpy/memmove) */
    /* p was returned for a request of n bytes; k >= 1 sample points fell
     * into it (weight k * mean_bytes); caller is the return address of the
     * allocation call (whose code asked: the interpreter or an extension).
     * Called outside the shim's guard. */
    void (*on_alloc)(void *p, size_t n, uint64_t k, const void *caller);
    /* a free / realloc-away of a pointer whose bits are set in *filter
     * (maybe a sampled one; the others never reach the agent) */
    void (*on_free)(void *p);
    /* the filter (borrowed: the agent swaps the buffer it points to, each
     * stays readable for good) */
    _Atomic(uint64_t *) const *filter;
    /* k >= 1 sample points fell into a copy of n bytes */
    void (*on_copy)(size_t n, uint64_t k);
    /* an anonymous mmap of n bytes at p (sampled like on_alloc); its
     * munmap comes as on_free(p). The agent drops the interpreter's own
     * (pymalloc arenas: counted per object) by the caller's address. */
    void (*on_map)(void *p, size_t n, uint64_t k, const void *caller);
};

/* Install (h borrowed, must stay valid) or remove (NULL) the hooks. */
typedef void (*hotline_shim_register_fn)(const struct hotline_shim_hooks *h);
/* Address of the calling thread's guard: while *guard != 0 the shim does not
 * report this thread's allocations (the agent sets it around Python
 * allocator calls so that pymalloc's own mallocs are not counted twice). */
typedef int *(*hotline_shim_guard_fn)(void);

#endif
