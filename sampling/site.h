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
    uint8_t base[256];  /* the base (deoptimized) opcode: for the stack effect */
    uint8_t flags[256]; /* SITE_F_* */
    uint8_t call[256];  /* SITE_CALL_*: where a call's callable is on the stack */
    int jump_bytes;     /* jump arguments in bytes (3.9), else code units */
} site_ops_t;

enum {
    SITE_F_JREL = 1,   /* a relative jump: from the next instruction (after caches) */
    SITE_F_JABS = 2,   /* an absolute jump */
    SITE_F_BACK = 4,   /* relative backwards (3.11+ JUMP_BACKWARD...) */
    SITE_F_NOFALL = 8, /* never goes on to the next instruction (return, raise, jump) */
    SITE_F_GEN = 16,   /* RETURN_GENERATOR: resumed with the sent value on the stack */
    SITE_F_UNARY = 32, /* an operator with one operand */
    SITE_F_START1 = 64 /* 3.10 GEN_START: first instruction, the sent value on the stack */
};

/* Layouts of a call's stack (n = oparg arguments, d = depth at the call):
 * the slot of the callable, or of the bound method that replaces it. */
enum {
    SITE_CALL_NONE = 0,
    SITE_CALL_FN = 1,     /* 3.9/3.10 CALL_FUNCTION: callable, args[n] */
    SITE_CALL_FN_KW = 2,  /* 3.9/3.10 CALL_FUNCTION_KW: callable, args[n], kwnames */
    SITE_CALL_EX = 3,     /* CALL_FUNCTION_EX: callable, args, [kwargs if oparg & 1] */
    SITE_CALL_METHOD = 4, /* 3.9/3.10 CALL_METHOD, 3.11 PRECALL/CALL, 3.12 CALL:
                           * method or NULL, callable or self, args[n] */
    SITE_CALL_313 = 5,    /* 3.13+ CALL: callable, self or NULL, args[n] */
    SITE_CALL_313_KW = 6, /* 3.13+ CALL_KW: callable, self or NULL, args[n], kwnames */
    SITE_CALL_311 = 7,    /* 3.11 CALL: as SITE_CALL_METHOD, but the compiler's depth
                           * there has the n arguments off already (PRECALL's effect
                           * is -n), the stack does not */
    SITE_CALL_313_EX = 8, /* 3.13 CALL_FUNCTION_EX: callable, NULL, args, [kwargs] */
    SITE_CALL_314_EX = 9  /* 3.14+ CALL_FUNCTION_EX: callable, NULL, args, kwargs or
                           * NULL (always four: oparg no longer says) */
};

/* Stack slots (from the bottom) where the callable of a call of layout
 * `call` may be, given the depth at the call and its oparg: *first is
 * read first; when it holds NULL (SITE_CALL_METHOD), *second. -1: none. */
void site_callable_slots(int call, int depth, int oparg, long *first, long *second);

/* Value-stack depth at the start of each instruction (flow analysis over
 * jumps from unit 0; out[i] for every unit of the instruction at i), or -1
 * where it is not known: unreachable from the entry (3.11+ exception
 * handlers), reached with two depths, or an effect the callback could not
 * give (it returns INT32_MIN then). effect(base opcode, oparg, jump) is
 * CPython's PyCompile_OpcodeStackEffectWithJump. Returns 0, or -1 when
 * work (n ints and n scratch) could not be had (out left all -1). */
int site_depths(const site_ops_t *ops, const uint8_t *code, size_t n,
                int (*effect)(int op, int oparg, int jump), int16_t *out);

/* CPython's stack effects as a table, for a reader that cannot call
 * PyCompile_OpcodeStackEffectWithJump (`hotline attach`: the target's own
 * dis.stack_effect, attach/opcodes.c): tab[jump][op][oparg & 255], plus
 * k[jump][op] * (oparg >> 8) above 255 (one rule covers the constant,
 * bit-flag, linear and UNPACK_EX effects; checked where it was built), or
 * SITE_EFFECT_NONE (not known). */
#define SITE_EFFECT_NONE INT16_MIN
typedef struct {
    int16_t tab[2][256][256];
    int16_t k[2][256];
} site_effects_t;

/* effect(op, oparg, jump) from the table: INT32_MIN when not known. */
int site_effect(const site_effects_t *e, int op, int oparg, int jump);

/* Everything the sampler needs of one code unit, for the instruction it
 * belongs to (site_analyze). */
typedef struct {
    uint8_t cls;    /* SITE_* */
    uint8_t call;   /* SITE_CALL_* of a call, operands (1 or 2) of an operator */
    int16_t depth;  /* value-stack depth at the instruction's start, -1 unknown */
    uint32_t oparg; /* with EXTENDED_ARG prefixes */
} site_unit_t;

/* site_classify + site_depths + the layouts and opargs: out[n]. 0, or -1
 * when the depths could not be had (classes and opargs are there, depths
 * -1). */
int site_analyze(const site_ops_t *ops, const uint8_t *code, size_t n,
                 int (*effect)(int op, int oparg, int jump), site_unit_t *out);
/* The same with the effects from a table (site_effects_t). */
int site_analyze_tab(const site_ops_t *ops, const site_effects_t *eff, const uint8_t *code,
                     size_t n, site_unit_t *out);

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

/* At a call or operator site, C code at the sample instant that then kept
 * the thread frozen this long (thread CPU over this many pairs from the
 * window's start) before it moved: a call that lasted, native even though
 * it returned inside the window (sorted() of 20000 floats, ~1 ms, returns
 * inside most 1 ms windows). Not a few pairs: a loop around a short call
 * can spend 90% of its time inside the call in a frame state that is the
 * same at every iteration (3.12/3.13 `while pc() < end: pass`: no
 * arguments, same stack, same locals), so two reads repeat it by chance
 * in ~90% of pairs (~40% on 3.11, probe.h): 4 in a row 65%, 32 in a row
 * 3%. The sampler takes them at once (a burst, each pair a few us of the
 * thread's CPU): a call that lasts has them within ~50 us of its CPU. */
#define SITE_MIN_FROZEN 30e-6
#define SITE_MIN_PAIRS 32

/* The window at a call or operator site has all it needs: the frozen
 * evidence above decides, whatever a later movement says. */
static inline int site_window_done(const probe_t *p)
{
    return p->frozen_n >= SITE_MIN_PAIRS && p->frozen_s >= SITE_MIN_FROZEN;
}
/* ...and a movement is a short call (Python's own overhead) only when the
 * thread moved within this much CPU of the sample. A movement seen after
 * more (pairs stretched by a loaded machine, which are never counted
 * frozen: probe.h) says nothing about how long the call lasted. */
#define SITE_SHORT_CPU 100e-6
/* ...after fewer frozen pairs than this: a movement after more is either a
 * long call that ended (sorted(), its last 100 us) or chance repeats of a
 * short one (3.13's perf_counter() loop); the site's history decides. */
#define SITE_FEW_PAIRS 4

/* The category of a running sample: site is the class of the innermost
 * frame's instruction at the sample (refined by what is on the stack: the
 * agent's walk_site), p the probe window (NULL: none; its verdict probe,
 * probe.h: CAT_PY, CAT_NAT or -1 undecided), hist the site's history (NULL
 * or another key's slot: none).
 *   - SITE_PY: the interpreter is running bytecode -> CAT_PY, whatever the
 *     window saw (a freeze there is the hypervisor or a CPU taken away);
 *   - SITE_CALL / SITE_OP: the thread is in C code at the sample.
 *     CAT_NAT when the window saw it stay there (SITE_MIN_FROZEN, or the
 *     probe's own CAT_NAT), or saw it burn CPU without the GIL from its
 *     start (a call that released it: numpy's a @ b of ~200 us often
 *     returns before the first pair, not learnt: a short read releases
 *     it too); CAT_PY when it moved on within SITE_SHORT_CPU and
 *     SITE_FEW_PAIRS (perf_counter() in a Python loop: the loop's
 *     overhead, as before);
 *     otherwise (no CPU in the window, a movement after more CPU or more
 *     frozen pairs than that) what this site's conclusive windows said,
 *     and without a
 *     history CAT_NAT for a call, CAT_PY for an operator (most are on
 *     builtin types);
 *   - SITE_NONE: the probe, -1 keeps the thread's last category.
 * *learn (may be NULL) gets what the site's history should learn from this
 * window: CAT_PY, CAT_NAT, or -1 (it was not conclusive).
 * Returns CAT_PY, CAT_NAT or -1. */
static inline int site_verdict(int site, const probe_t *p, int probe, const site_hist_t *hist,
                               uint64_t key, int *learn)
{
    int l = -1, v;
    if (site == SITE_PY) {
        v = CAT_PY;
    } else if (site != SITE_CALL && site != SITE_OP) {
        v = probe;
    } else if ((p && site_window_done(p)) || probe == CAT_NAT) {
        v = l = CAT_NAT;
    } else if (p && p->first_nogil && p->cpu > p->cpu_start) {
        v = CAT_NAT; /* running without the GIL: no bytecode runs without it */
    } else if (probe == CAT_PY && p && p->cpu - p->cpu_start <= SITE_SHORT_CPU &&
               p->frozen_n < SITE_FEW_PAIRS) {
        v = l = CAT_PY;
    } else if (hist && hist->key == key && hist->py + hist->nat > 0) {
        v = hist->nat >= hist->py ? CAT_NAT : CAT_PY;
    } else {
        v = site == SITE_CALL ? CAT_NAT : CAT_PY;
    }
    if (learn) *learn = l;
    return v;
}

#endif
