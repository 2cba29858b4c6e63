/* walk.h: reading the interpreter's threads, frames and code objects
 * without the GIL (walk.c). Frames come out as agent_frame_t
 * (aggregate.h), with file and function names interned there.
 */
#ifndef HOTLINE_WALK_H
#define HOTLINE_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "aggregate.h"
#include "site.h"

/* Code-object cache entry (struct agent's codes, AGENT_CODE_SLOTS). */
typedef struct {
    uintptr_t addr, filename, qualname, linetable; /* validation keys */
    int firstline, lastline;
    int file_id, name_id;
    int delta;          /* added to lines: a notebook cell mapped to its file (cells.h) */
    unsigned cells_gen; /* cells_gen() when a cell's entry was resolved */
    double checked_at;  /* the tick (agent's last_tick) its head was last checked at (code_get) */
    uint8_t profiled, valid, cell;
    uint8_t *tab; /* owned copy of the line table */
    size_t tab_n;
    long line_addr;     /* the last instruction code_line was asked for (LONG_MIN: none) */
    int line_at;        /* and its line */
    site_unit_t *units; /* owned: each code unit's site (site.h); NULL: opcode tables not set */
    size_t units_n;
    int nlocalsplus; /* 3.11+: slots before the value stack in the frame */
} agent_code_t;

typedef struct {
    uintptr_t tstate;
    long tid;
} walk_thread_t;

/* What resolving a frame needs of a code object, copied while it is alive
 * (walk_code_copy) for samples resolved after it is freed (memhooks). */
typedef struct {
    uintptr_t addr;
    char *file, *name; /* UTF-8, file normalised; owned */
    uint8_t *tab;      /* owned */
    size_t tab_n;
    int firstline;
} walk_code_copy_t;

int walk_threads(agent_t *a, walk_thread_t *out, int cap);
int walk_stack(agent_t *a, uintptr_t tstate, agent_frame_t *out, int cap);
int walk_probe(uintptr_t tstate, int code, uint64_t *sig);
uintptr_t walk_top_frame(uintptr_t tstate);
/* with the GIL, before start: the opcode tables (site.h, _opcodes.py) */
void walk_set_ops(const site_ops_t *ops);

/* What the innermost frame is doing now (walk_site): on 3.9 to 3.15, once
 * walk_set_ops has the tables. _hotline_agent does not set them under the
 * JIT (3.14+, PYTHON_JIT=1): its traces write the frame's instruction only
 * before a call that may escape, so a loop of short calls (`while pc() <
 * end: pass`) reads as that call (3.15.2: the busy line 38-55 % Python, 2
 * of 3 runs); there the probe window decides alone and no C callee is
 * named (docs/sampling.md, "The call site"). */
#define WALK_NAME_MAX 160
typedef struct {
    int cls;                    /* site.h class, refined by what is on the stack */
    uint64_t key;               /* the site, for its history */
    char callee[WALK_NAME_MAX]; /* a C callee's name ("zlib.compress"), or "" */
    int file_id, line;          /* of that frame (as walk_stack gives them), 0 if none */
} walk_site_t;
int walk_site(agent_t *a, uintptr_t tstate, walk_site_t *out);
site_unit_t *walk_code_units(uintptr_t code, size_t *n); /* test hook; caller frees */
int walk_frame(agent_t *a, uintptr_t code, intptr_t instr, agent_frame_t *out);
/* walk_frame trusts a code's cached entry checked this long ago (code_get) */
#define WALK_FRAME_TRUST_S 1.0
void walk_code_forget(agent_t *a, uintptr_t code);         /* it died: check its entry again */
int walk_code_copy(uintptr_t code, walk_code_copy_t *out); /* 0 or -errno; any thread */
int walk_frame_copy(agent_t *a, const walk_code_copy_t *c, intptr_t instr, agent_frame_t *out);
void walk_code_copy_free(walk_code_copy_t *c);
long walk_tid_offset(void);                 /* >0 or -errno */
void walk_gil_init(agent_t *a);             /* with the GIL held */
int walk_layout_check(char *why, size_t n); /* 0 or -EPROTO (why says what) */
uintptr_t walk_gil_holder(agent_t *a);      /* tstate, 0 = free, 1 = unknown */
void walk_free(agent_t *a);

#endif
