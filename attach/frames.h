/* frames.h: the threads and frames of an open target (target.h), read
 * through its memory source (mem.h): the thread states of the main
 * interpreter, each thread's frame chain innermost first, and the code
 * objects they run (file, qualname, line table), kept in a small cache.
 * Every read races with the running target: every pointer chain is
 * validated and an inconsistent read is ATTACH_ERACE, never a guess. */
#ifndef HOTLINE_ATTACH_FRAMES_H
#define HOTLINE_ATTACH_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "site.h"
#include "target.h"

#define ATTACH_MAX_THREADS 256 /* sampled per tick (the CLI picks which) */
#define ATTACH_MAX_LISTED 4096 /* thread states listed (attach_threads' max) */
#define ATTACH_MAX_FRAMES 256
#define ATTACH_MAX_STR 1024    /* a file name or qualname longer is cut */
#define ATTACH_MAX_TABLE 65536 /* bytes of a line table copied */
#define ATTACH_CODE_CACHE 1024 /* code objects remembered */
#define ATTACH_CODE_WAYS 8     /* slots a code object may take (from its address on) */

struct attach_code {
    uint64_t addr, filename, linetable; /* cache key: the object and its fields */
    uint32_t gen;                       /* the last attach_stack call that used it */
    int firstline, lastline;
    char file[ATTACH_MAX_STR], name[ATTACH_MAX_STR];
    uint8_t *tab; /* owned */
    size_t tab_n;
    /* the call site: each code unit's (site.h), read at the first sample
     * at a site (units_state 1; -1: not to be had) */
    site_unit_t *units; /* owned */
    size_t units_n;
    int units_state, nlocalsplus;
};

struct attach_thread {
    uint64_t tstate, frame; /* innermost frame (0: no Python frame) */
    long tid;
    uint64_t sig; /* innermost frame state: changes when bytecode runs */
};

struct attach_frame {
    /* borrowed from the code cache, valid until the next call: two frames
     * of one call never share a slot, so one cannot overwrite the other's */
    const char *file, *name;
    int line, firstline, lastline;
    uint64_t addr; /* the frame's own address (its call site: attach_site) */
};

/* The target's Python threads (main interpreter): fills out[0..ret).
 * Negative: -ESRCH (the target is gone), ATTACH_ERACE. */
int attach_threads(struct attach_proc *ap, struct attach_thread *out, int max);

/* Innermost frame state of one thread again (probing): 0 or negative. */
int attach_thread_sig(struct attach_proc *ap, const struct attach_thread *t, uint64_t *sig);

/* 1 when the thread holds the GIL, 0 when not, negative on a failed read. */
int attach_holds_gil(struct attach_proc *ap, const struct attach_thread *t);

/* The thread's Python frames, innermost first: fills out[0..ret), or a
 * negative code (ATTACH_ERACE: a chain that did not validate). */
int attach_stack(struct attach_proc *ap, const struct attach_thread *t, struct attach_frame *out,
                 int max);

/* ---- the call site (docs/attach.md, "The call site") ----------------
 * What the innermost frame's instruction is (sampling/site.h), read as the
 * agent's walk_site reads it, through the target's memory: its opcode
 * tables from the target's interpreter (opcodes.h), the code object's
 * bytecode, the value stack's callable or operands, the callee's name. */
#define ATTACH_TYPE_CACHE 64       /* static types learnt (what they are) */
#define ATTACH_MAX_UNITS (1 << 16) /* code units analysed; a longer code: no site */
#define ATTACH_CALLEE_MAX 128

struct attach_sitectx {
    site_ops_t ops;
    site_effects_t eff;
    uint64_t type_type; /* `type` in the target (0: not found yet) */
    struct {
        uint64_t addr;
        uint8_t kind;
    } types[ATTACH_TYPE_CACHE];
};

struct attach_site {
    int cls;                        /* site.h's class, refined by the stack; SITE_NONE: not known */
    uint64_t key;                   /* site_key(code, unit): its history */
    uint64_t frame;                 /* the innermost Python frame read */
    uint64_t sig;                   /* its state then, as attach_thread_sig gives it (0: not had) */
    int line;                       /* ...and its line */
    char callee[ATTACH_CALLEE_MAX]; /* a C callee's name, "" when none */
};

/* ap->site made (the opcode tables from the target's interpreter): 0, or
 * negative with why (the version has no call site here, a replay, the
 * interpreter could not tell). The sampler then leaves it to the probe. */
int attach_site_init(struct attach_proc *ap, char *why, size_t n);

/* What the innermost frame of t (as attach_threads read it) is doing:
 * out->cls (SITE_NONE when it cannot tell: no tables, unreadable) and the
 * C callee's name when it is in one. Returns out->cls. */
int attach_site(struct attach_proc *ap, const struct attach_thread *t, struct attach_site *out);

/* Shared with attach.c (not for other modules): ap's code cache, made
 * empty (0 or -ENOMEM) and freed (ap->codes NULL after). */
int attach__codes_new(struct attach_proc *ap);
void attach__codes_free(struct attach_proc *ap);

#endif
