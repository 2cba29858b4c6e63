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

#include <stddef.h>
#include <stdint.h>

#define HOTLINE_SHIM_ABI 3

struct hotline_shim_hooks {
    int abi;           /* HOTLINE_SHIM_ABI */
    double mean_bytes; /* mean sampling interval in bytes (allocations) */
    double copy_mean;  /* mean sampling interval in bytes (memcpy/memmove) */
    /* p was returned for a request of n bytes; k >= 1 sample points fell
     * into it (weight k * mean_bytes); caller is the return address of the
     * allocation call (whose code asked: the interpreter or an extension).
     * Called outside the shim's guard. */
    void (*on_alloc)(void *p, size_t n, uint64_t k, const void *caller);
    /* every free / realloc-away of a non-NULL pointer: must be cheap */
    void (*on_free)(void *p);
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
