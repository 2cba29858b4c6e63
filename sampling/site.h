/* site.h: "is this thread running Python or C code?" from what the innermost
 * frame is doing at the sample instant (method: docs/sampling.md, "The call
 * site"). Pure code, no I/O: the agent (profiler/walk.c, sampler.c) supplies
 * the opcode tables, the bytes of a code object and the instruction the
 * frame is at; tests/unit/test_site.c feeds it synthetic ones.
 *
 * CPython writes the instruction it executes into the frame (3.9/3.10
 * f_lasti, 3.11/3.12 prev_instr, 3.13+ instr_ptr). An instruction that
 * calls (CALL_FUNCTION ..., PRECALL/CALL, CALL_KW, CALL_FUNCTION_EX) in the
 * innermost frame means the thread is inside the callee's C code: a Python
 * callee would have pushed a newer frame. Any other instruction is the
 * interpreter running bytecode, except operators (BINARY_OP, subscripts,
 * comparisons...), which run C code of extension types (`a @ b` on numpy
 * arrays runs BLAS inside BINARY_OP). Neither needs the thread to get CPU
 * inside the probe window, which is what a loaded machine denies it.
 */
#ifndef HOTLINE_SITE_H
#define HOTLINE_SITE_H

#include <stddef.h>
#include <stdint.h>

#include "probe.h"

/* Class of an instruction (and of every code unit that belongs to it: its
 * EXTENDED_ARG prefixes and inline cache entries). */
enum {
    SITE_NONE = 0, /* not known (CACHE, instrumented line, executor, unknown opcode) */
    SITE_PY = 1,   /* bytecode: the interpreter itself */
    SITE_CALL = 2, /* a call: in the innermost frame, inside a C callee */
    SITE_OP = 3,   /* an operator: C code when an operand is an extension type */
    SITE_EXT = 4   /* EXTENDED_ARG (tables only): the class of what follows */
};

/* Per interpreter: class and inline cache entries of each raw opcode value,
 * specialized and instrumented opcodes included (they take their base
 * opcode's class and caches: the deoptimized view). Built once, with the
 * GIL, from the interpreter's dis/opcode modules (profiler/python). */
typedef struct {
    uint8_t cls[256];
    uint8_t caches[256];
} site_ops_t;

/* Classes of the code units of a code object: code holds n code units of 2
 * bytes (opcode, oparg); out[i] gets the class of the instruction unit i
 * belongs to. Returns the number of units classed (n). */
size_t site_classify(const site_ops_t *ops, const uint8_t *code, size_t n, uint8_t *out);

/* What each call or operator site did when the probe could tell: a short
 * call (perf_counter() in a Python loop) returns and the frame moves inside
 * the window; a long one (BLAS, compress) stays frozen. Keyed by code
 * object address and unit; direct mapped, a new key replaces the old one. */
#define SITE_HIST_SLOTS 4096
#define SITE_HIST_MAX 64 /* counts are halved above this: recent windows weigh more */
typedef struct {
    uint64_t key;
    uint16_t py, nat;
} site_hist_t;

static inline uint64_t site_key(uintptr_t code, long unit)
{
    return ((uint64_t)code << 16) ^ (uint64_t)unit ^ ((uint64_t)code >> 48);
}

static inline site_hist_t *site_slot(site_hist_t *tab, uint64_t key)
{
    return &tab[(key * 0x9E3779B97F4A7C15ull) >> 52]; /* 12 bits: SITE_HIST_SLOTS */
}

/* A probe window that decided (CAT_PY or CAT_NAT) at this site. */
static inline void site_learn(site_hist_t *tab, uint64_t key, int verdict)
{
    site_hist_t *h = site_slot(tab, key);
    if (h->key != key) {
        h->key = key;
        h->py = h->nat = 0;
    }
    if (verdict == CAT_PY) h->py++;
    if (verdict == CAT_NAT) h->nat++;
    if (h->py + h->nat > SITE_HIST_MAX) {
        h->py /= 2;
        h->nat /= 2;
    }
}

/* The category of a running sample: site is the class of the innermost
 * frame's instruction at the sample, probe the window's verdict (probe.h:
 * CAT_PY, CAT_NAT or -1 undecided), hist the site's history (NULL or
 * another key's slot: none).
 *   - SITE_PY: the interpreter is running bytecode -> CAT_PY, whatever the
 *     window saw (a freeze there is the hypervisor or a CPU taken away);
 *   - SITE_CALL / SITE_OP: the probe when it decided (a call that returned
 *     inside the window was short: Python's own overhead, as before);
 *     undecided (the thread got too little CPU): what this site did when
 *     it could tell, and without a history, CAT_NAT for a call (the thread
 *     is in C code now) and CAT_PY for an operator (most are on builtins);
 *   - SITE_NONE: the probe, -1 keeps the thread's last category.
 * Returns CAT_PY, CAT_NAT or -1. */
static inline int site_verdict(int site, int probe, const site_hist_t *hist, uint64_t key)
{
    if (site == SITE_PY) return CAT_PY;
    if (site != SITE_CALL && site != SITE_OP) return probe;
    if (probe >= 0) return probe;
    if (hist && hist->key == key && hist->py + hist->nat > 0)
        return hist->nat >= hist->py ? CAT_NAT : CAT_PY;
    return site == SITE_CALL ? CAT_NAT : CAT_PY;
}

#endif
