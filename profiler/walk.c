/* walk.c: the interpreter's threads, frames and code objects, read without
 * the GIL.
 *
 * Only this file (and module.c) sees CPython internals; it defines
 * Py_BUILD_CORE because 3.11+ keep frames in internal headers. Every read of
 * interpreter memory goes through mem_read() into a local copy, and every
 * copy is checked before use (type pointers, bounded lengths, bounded
 * loops): the structures change under us while we look.
 */
#define PY_SSIZE_T_CLEAN
#define Py_BUILD_CORE 1
#include <Python.h>

#include "walk.h"

#include "agent.h"
#include "agent_paths.h"
#include "aggregate.h"
#include "cells.h"
#include "memread.h"
#include "site.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat_code.h"
#include "compat_frame.h"
#include "compat_gil.h"
#include "compat_layout.h"

#define WALK_MAX_TSTATES 4096
#define WALK_MAX_STR 4096
#define WALK_MAX_TABLE (1u << 20)

/* Opcode tables of this interpreter (site.h), set once with the GIL before
 * the sampler starts (walk_set_ops); read-only after. */
static site_ops_t g_ops;
static int g_ops_set;
static uintptr_t g_none_type; /* type(None): not exported before 3.x, read here */

void walk_set_ops(const site_ops_t *ops)
{
    g_ops = *ops;
    g_none_type = (uintptr_t)Py_TYPE(Py_None);
    g_ops_set = 1;
}

/* CPython's stack effect (pure, no GIL needed); INT32_MIN: not known. */
static int stack_effect(int op, int oparg, int jump)
{
    int e = PyCompile_OpcodeStackEffectWithJump(op, oparg, jump);
    return e == PY_INVALID_STACK_EFFECT ? INT32_MIN : e;
}

int walk_threads(agent_t *a, walk_thread_t *out, int cap)
{
    /* interp outlives the sampler (stopped before finalisation); the head
     * pointer is a plain field read. */
    uintptr_t t = (uintptr_t)PyInterpreterState_ThreadHead((PyInterpreterState *)a->interp);
    int n = 0;
    for (int guard = 0; t && guard < WALK_MAX_TSTATES && n < cap; guard++) {
        PyThreadState ts;
        if (mem_read(t, &ts, sizeof ts) != 0) {
            a->mem_errors++;
            break;
        }
        if ((uintptr_t)ts.interp != (uintptr_t)a->interp) break; /* torn list */
        long tid = 0;
#if PY_VERSION_HEX >= 0x030B0000
        tid = (long)ts.native_thread_id;
#else
        /* 3.9/3.10 keep only pthread_self(): read glibc's tid from it */
        int v;
        if (a->tid_off > 0 && ts.thread_id &&
            mem_read((uintptr_t)ts.thread_id + (uintptr_t)a->tid_off, &v, sizeof v) == 0)
            tid = v;
#endif
        if (tid > 0 && tid != cells_waiter_tid()) { /* not hotline/_cells.py's thread */
            out[n].tstate = t;
            out[n].tid = tid;
            n++;
        }
        t = (uintptr_t)ts.next;
    }
    /* One charge per OS thread. A thread state made for a thread that has
     * not started yet carries its creator's ids until the new thread binds
     * it (CPython fills them in the creator) and sits nearer the head: keep
     * the last state listed for a tid, the oldest. From the tail, a tid
     * seen already is dropped (a set of tids: thousands of threads must
     * not cost n^2 comparisons a tick). */
    _Static_assert(2 * WALK_MAX_TSTATES == 1 << 13, "the hash below takes 13 bits: one a slot");
    long seen[2 * WALK_MAX_TSTATES];
    memset(seen, 0, sizeof seen);
    int m = n;
    for (int i = n - 1; i >= 0; i--) {
        size_t h = ((size_t)out[i].tid * 0x9E3779B97F4A7C15ull) >> 51; /* 13 bits */
        while (seen[h] && seen[h] != out[i].tid)
            h = (h + 1) & (2 * WALK_MAX_TSTATES - 1);
        if (seen[h]) continue;
        seen[h] = out[i].tid;
        out[--m] = out[i];
    }
    if (m) memmove(out, out + m, (size_t)(n - m) * sizeof *out);
    return n - m;
}

/* Offset of the kernel tid inside glibc's struct pthread (pthread_self()
 * points at it), found by searching our own thread's struct for gettid().
 * Only 3.9/3.10 need it; checked again on the sampler thread. */
long walk_tid_offset(void)
{
    unsigned char buf[4096];
    uintptr_t self = (uintptr_t)pthread_self();
    int tid = (int)gettid();
    /* The main thread's struct pthread can sit near the end of its mapping
     * (where it lands depends on the static TLS before it, e.g. an
     * LD_PRELOADed library's): read less when 4 KiB would cross it. */
    size_t len = sizeof buf;
    while (mem_read(self, buf, len) != 0)
        if ((len /= 2) < 1024) return -EFAULT;
    for (size_t off = 0; off + sizeof(int) <= len; off += sizeof(int)) {
        int v;
        memcpy(&v, buf + off, sizeof v);
        if (v == tid) return (long)off;
    }
    return -ENOENT;
}

/* UTF-8 of the compact str at addr into out (NUL-terminated); length or <0. */
static int read_str(uintptr_t addr, char *out, size_t cap)
{
    /* the head and, most often, the text with it: one read */
    unsigned char got[sizeof(PyCompactUnicodeObject) + 256];
    int ngot = mem_read_more(addr, got, sizeof(PyASCIIObject), sizeof got);
    if (ngot < 0) return -EFAULT;
    PyCompactUnicodeObject u;
    memcpy(&u, got, sizeof(PyASCIIObject));
    PyASCIIObject *h = &u._base;
    if ((uintptr_t)Py_TYPE((PyObject *)h) != (uintptr_t)&PyUnicode_Type || !h->state.compact)
        return -EINVAL;
#if PY_VERSION_HEX < 0x030C0000
    if (!h->state.ready) return -EINVAL;
#endif
    Py_ssize_t len = h->length;
    unsigned kind = h->state.kind;
    if (len < 0 || len > WALK_MAX_STR || (kind != 1 && kind != 2 && kind != 4)) return -EINVAL;
    size_t off = h->state.ascii ? sizeof(PyASCIIObject) : sizeof(PyCompactUnicodeObject);
    unsigned char raw[WALK_MAX_STR * 4];
    if (off + (size_t)len * kind <= (size_t)ngot)
        memcpy(raw, got + off, (size_t)len * kind);
    else if (len && mem_read(addr + off, raw, (size_t)len * kind) != 0)
        return -EFAULT;
    size_t o = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        uint32_t c;
        if (kind == 1)
            c = raw[i];
        else if (kind == 2)
            c = (uint32_t)raw[i * 2] | ((uint32_t)raw[i * 2 + 1] << 8);
        else
            c = (uint32_t)raw[i * 4] | ((uint32_t)raw[i * 4 + 1] << 8) |
                ((uint32_t)raw[i * 4 + 2] << 16) | ((uint32_t)raw[i * 4 + 3] << 24);
        if (o + 5 >= cap) break;
        if (c < 0x80) {
            out[o++] = (char)c;
        } else if (c < 0x800) {
            out[o++] = (char)(0xC0 | (c >> 6));
            out[o++] = (char)(0x80 | (c & 63));
        } else if (c < 0x10000) {
            if (c >= 0xD800 && c < 0xE000) c = 0xFFFD; /* lone surrogate (surrogateescape paths) */
            out[o++] = (char)(0xE0 | (c >> 12));
            out[o++] = (char)(0x80 | ((c >> 6) & 63));
            out[o++] = (char)(0x80 | (c & 63));
        } else if (c < 0x110000) {
            out[o++] = (char)(0xF0 | (c >> 18));
            out[o++] = (char)(0x80 | ((c >> 12) & 63));
            out[o++] = (char)(0x80 | ((c >> 6) & 63));
            out[o++] = (char)(0x80 | (c & 63));
        }
    }
    out[o] = 0;
    return (int)o;
}

/* include / exclude: the rule hotline attach shares (sampling/agent_paths.h) */
static int file_profiled(agent_t *a, const char *path)
{
    if (a->profile_all) return 1;
    return agent_path_profiled((const char *const *)a->include, a->ninclude,
                               (const char *const *)a->exclude, a->nexclude, path);
}

/* A notebook cell is the user's code wherever the include rule points,
 * unless an exclude pattern names its file. */
static int cell_profiled(agent_t *a, const char *path)
{
    if (a->profile_all) return 1;
    return agent_path_profiled(NULL, 0, (const char *const *)a->exclude, a->nexclude, path);
}

static int file_flag(agent_t *a, int id)
{
    if (id >= a->file_flag_cap) {
        int nc = a->file_flag_cap ? a->file_flag_cap : 256;
        while (nc <= id)
            nc *= 2;
        int8_t *f = realloc(a->file_flag, (size_t)nc);
        if (!f) return 0;
        memset(f + a->file_flag_cap, -1, (size_t)(nc - a->file_flag_cap));
        a->file_flag = f;
        a->file_flag_cap = nc;
    }
    if (a->file_flag[id] < 0) a->file_flag[id] = (int8_t)file_profiled(a, agg_string(a, id));
    return a->file_flag[id];
}

/* Copy of the bytes object at addr (new, caller frees) or NULL. */
static uint8_t *read_bytes(uintptr_t addr, size_t *n)
{
    /* the head and, most often, the bytes with it: one read */
    const size_t off = offsetof(PyBytesObject, ob_sval);
    unsigned char got[offsetof(PyBytesObject, ob_sval) + 512];
    int ngot = mem_read_more(addr, got, off, sizeof got);
    if (ngot < 0) return NULL;
    PyBytesObject b;
    memcpy(&b, got, off);
    if ((uintptr_t)Py_TYPE((PyObject *)&b) != (uintptr_t)&PyBytes_Type) return NULL;
    Py_ssize_t len = Py_SIZE((PyObject *)&b);
    if (len < 0 || (size_t)len > WALK_MAX_TABLE) return NULL;
    uint8_t *p = malloc((size_t)len + 1);
    if (!p) return NULL;
    if (off + (size_t)len <= (size_t)ngot)
        memcpy(p, got + off, (size_t)len);
    else if (len && mem_read(addr + off, p, (size_t)len) != 0) {
        free(p);
        return NULL;
    }
    *n = (size_t)len;
    return p;
}

/* Collapse "//", "/./" and "dir/.." in an absolute path, in place, as
 * os.path.normpath does (no file system access, symlinks untouched), so that
 * a module imported through "app/../lib" is "lib", both for the
 * include/exclude test and for the editor, which knows files by their
 * normal paths. Relative paths ("<string>", "<frozen ...>") are left alone. */
static void normalize_path(char *s)
{
    if (s[0] != '/') return;
    char *out = s + 1; /* write position, after the root '/' */
    const char *p = s + 1;
    while (*p) {
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *next = p + n + (end ? 1 : 0); /* read before writing */
        if (n == 0 || (n == 1 && p[0] == '.')) {
            /* skip */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (out > s + 1 && out[-1] != '/') /* drop the last component */
                out--;
            if (out > s + 1) out--; /* and its separator */
        } else {
            if (out > s + 1) *out++ = '/';
            memmove(out, p, n);
            out += n;
        }
        p = next;
    }
    *out = 0;
}

/* site.h units of the code object at addr (head c), new (caller frees), or
 * NULL. The bytes are read as they are now: specialized and instrumented
 * opcodes carry their base's class, caches and layout in the tables, so a
 * rewrite under us changes nothing (opargs stay). */
static site_unit_t *code_units(const PyCodeObject *c, uintptr_t addr, size_t *n)
{
    size_t units;
    int bytes_obj;
    uintptr_t at = compat_code_units(c, addr, &units, &bytes_obj);
    uint8_t *raw = NULL;
    if (bytes_obj) {
        size_t nb = 0;
        raw = read_bytes(at, &nb);
        units = nb / 2;
    } else if (units > 0 && units <= WALK_MAX_TABLE / 2) {
        raw = malloc(units * 2);
        if (raw && mem_read(at, raw, units * 2) != 0) {
            free(raw);
            raw = NULL;
        }
    }
    if (!raw) return NULL;
    site_unit_t *u = units ? malloc(units * sizeof *u) : NULL;
    if (u) site_analyze(&g_ops, raw, units, stack_effect, u);
    free(raw);
    *n = u ? units : 0;
    return u;
}

/* The units of a code object, analysed now (test hook: module.c's
 * _site_units); *n units, new (caller frees), or NULL. */
site_unit_t *walk_code_units(uintptr_t code, size_t *n)
{
    union {
        PyCodeObject c;
        char raw[COMPAT_CODE_HEAD + 16];
    } u;
    *n = 0;
    if (!g_ops_set || mem_read(code, &u, COMPAT_CODE_HEAD) != 0) return NULL;
    if ((uintptr_t)Py_TYPE((PyObject *)&u.c) != (uintptr_t)&PyCode_Type) return NULL;
    return code_units(&u.c, code, n);
}

/* Cached description of the code object at addr (borrowed) or NULL. Its
 * head is read (from snap when not NULL) to check that the entry is still
 * that code's, unless it was checked at a tick no more than trust_s
 * seconds ago (a->last_tick; 0: this tick). A code object freed and
 * another made at its address would be named as the old one for that
 * long: a stack's frames trust the tick's own check, a sampled
 * allocation's frames the second mem_rows.c already trusts a (code,
 * instruction) for. That check was 60% of the sampler's system calls on
 * import-heavy code (a stack of 40 frames, and each sampled allocation's
 * frames again). */
static agent_code_t *code_get(agent_t *a, mem_snap_t *snap, uintptr_t addr, double trust_s)
{
    agent_code_t *e = &a->codes[((addr >> 4) * 2654435761u) % AGENT_CODE_SLOTS];
    if (e->valid && e->addr == addr && a->last_tick - e->checked_at <= trust_s &&
        (!e->cell || e->cells_gen == cells_gen()))
        return e;
    union {
        PyCodeObject c;
        char raw[COMPAT_CODE_HEAD + 16];
    } u;
    if ((snap ? mem_snap_read(snap, addr, &u, COMPAT_CODE_HEAD)
              : mem_read(addr, &u, COMPAT_CODE_HEAD)) != 0)
        return NULL;
    PyCodeObject *c = &u.c;
    if ((uintptr_t)Py_TYPE((PyObject *)c) != (uintptr_t)&PyCode_Type) return NULL;
    if (e->valid && e->addr == addr && e->filename == compat_code_filename(c) &&
        e->qualname == compat_code_qualname(c) && e->linetable == compat_code_linetable(c) &&
        e->firstline == compat_code_firstline(c) && (!e->cell || e->cells_gen == cells_gen())) {
        e->checked_at = a->last_tick;
        return e;
    }
    char s[WALK_MAX_STR * 4 + 8];
    if (read_str(compat_code_filename(c), s, sizeof s) < 0) return NULL;
    normalize_path(s);
    /* A notebook cell's temporary file: its notebook's file and lines once
     * the Python side has found them; until then (and when it cannot) the
     * temporary name. Either way the cell is the user's code. A cell's
     * module code seen anew (recompiled after an edit) is asked again. */
    int cell = cells_is_cell(s), delta = 0;
    unsigned gen = cell ? cells_gen() : 0; /* before the lookup: a newer answer re-resolves */
    char to[WALK_MAX_STR * 4 + 8];
    const char *file = s;
    if (cell && cells_lookup(s, compat_code_firstline(c) <= 1 ? 2 : 1, to, sizeof to, &delta))
        file = to;
    int fid = agg_intern(a, file, strlen(file));
    if (read_str(compat_code_qualname(c), s, sizeof s) < 0) return NULL;
    int nid = agg_intern(a, s, strlen(s));
    if (fid <= 0 || nid <= 0) return NULL;
    size_t tn = 0;
    uint8_t *tab = read_bytes(compat_code_linetable(c), &tn);
    if (!tab) return NULL;
    site_unit_t *units = NULL;
    size_t un = 0;
    if (g_ops_set) units = code_units(c, addr, &un); /* NULL: no sites, the probe decides */
    free(e->tab);
    free(e->units);
    e->units = units;
    e->units_n = un;
    e->nlocalsplus = compat_code_nlocalsplus(c);
    e->addr = addr;
    e->filename = compat_code_filename(c);
    e->qualname = compat_code_qualname(c);
    e->linetable = compat_code_linetable(c);
    e->firstline = compat_code_firstline(c);
    e->tab = tab;
    e->tab_n = tn;
    e->line_addr = LONG_MIN; /* no line asked yet (code_line) */
    e->lastline = lt_last_line(compat_linetable_format(), tab, tn, e->firstline);
    e->file_id = fid;
    e->name_id = nid;
    e->delta = delta;
    e->cell = (uint8_t)cell;
    e->cells_gen = gen;
    e->profiled = (uint8_t)(cell ? cell_profiled(a, file) : file_flag(a, fid));
    e->checked_at = a->last_tick;
    e->valid = 1;
    return e;
}

/* The line of instruction addr in e's code. The last answer is kept: a
 * stack's outer frames sit at the same call tick after tick, and each
 * asks the table from its start (a module body's runs to thousands of
 * entries). */
static int code_line(agent_code_t *e, long addr)
{
    if (addr != e->line_addr) {
        e->line_at = lt_line(compat_linetable_format(), e->tab, e->tab_n, e->firstline, addr);
        e->line_addr = addr;
    }
    return e->line_at;
}

static int read_tstate_frame(uintptr_t tstate, uintptr_t *frame)
{
    PyThreadState ts;
    if (mem_read(tstate, &ts, sizeof ts) != 0) return -EFAULT;
    *frame = compat_ts_frame(&ts);
    return 0;
}

int walk_stack(agent_t *a, uintptr_t tstate, agent_frame_t *out, int cap)
{
    uintptr_t f;
    if (read_tstate_frame(tstate, &f) != 0) {
        a->mem_errors++;
        return -EFAULT;
    }
    /* the frames and code heads of one stack, read a few pages at a time:
     * on 3.11+ the frames are side by side in the thread's data stack */
    mem_snap_t *snap = a->snap;
    if (snap) mem_snap_reset(snap);
    int n = 0;
    for (int guard = 0; f && n < cap && guard < 4 * AGENT_MAX_DEPTH; guard++) {
        compat_frame_t fr;
        if ((snap ? mem_snap_read(snap, f, &fr, sizeof fr) : mem_read(f, &fr, sizeof fr)) != 0) {
            a->mem_errors++;
            break;
        }
        if (!compat_frame_is_shim(&fr)) {
            uintptr_t code = compat_frame_code(&fr);
            agent_code_t *e = code_get(a, snap, code, 0);
            if (e) {
                long addr = compat_instr_addr(code, compat_frame_instr(&fr));
                int line = code_line(e, addr);
                out[n].file_id = e->file_id;
                out[n].name_id = e->name_id;
                out[n].line = (line > 0 ? line : e->firstline) + e->delta;
                out[n].first = e->firstline + e->delta;
                out[n].last = e->lastline + e->delta;
                out[n].profiled = e->profiled;
                n++;
            }
        }
        f = compat_frame_back(&fr);
    }
    return n;
}

/* The code object at addr died (memhooks.c's watcher, 3.12+, which
 * reports the codes a waiting event names): its entry is checked again at
 * its next use, whatever code lives there by then. */
void walk_code_forget(agent_t *a, uintptr_t addr)
{
    agent_code_t *e = &a->codes[((addr >> 4) * 2654435761u) % AGENT_CODE_SLOTS];
    if (e->addr == addr) e->checked_at = -1e300;
}

/* One raw frame (code object address, instruction as compat_frame_instr
 * gives it) captured elsewhere (memhooks.c) -> out. 0, or -EFAULT when the
 * code object cannot be read any more. Sampler thread only (code cache). */
int walk_frame(agent_t *a, uintptr_t code, intptr_t instr, agent_frame_t *out)
{
    agent_code_t *e = code_get(a, NULL, code, WALK_FRAME_TRUST_S);
    if (!e) return -EFAULT;
    long addr = compat_instr_addr(code, instr);
    int line = code_line(e, addr);
    out->file_id = e->file_id;
    out->name_id = e->name_id;
    out->line = (line > 0 ? line : e->firstline) + e->delta;
    out->first = e->firstline + e->delta;
    out->last = e->lastline + e->delta;
    out->profiled = e->profiled;
    return 0;
}

/* A code object about to be freed (memhooks.c's code watcher, GIL held):
 * the strings and the line table that walk_frame would read, copied. */
int walk_code_copy(uintptr_t code, walk_code_copy_t *out)
{
    union {
        PyCodeObject c;
        char raw[COMPAT_CODE_HEAD + 16];
    } u;
    memset(out, 0, sizeof *out);
    if (mem_read(code, &u, COMPAT_CODE_HEAD) != 0) return -EFAULT;
    if ((uintptr_t)Py_TYPE((PyObject *)&u.c) != (uintptr_t)&PyCode_Type) return -EINVAL;
    char s[WALK_MAX_STR * 4 + 8];
    if (read_str(compat_code_filename(&u.c), s, sizeof s) < 0) return -EINVAL;
    normalize_path(s);
    out->file = strdup(s);
    if (read_str(compat_code_qualname(&u.c), s, sizeof s) < 0) s[0] = 0;
    out->name = strdup(s);
    out->tab = read_bytes(compat_code_linetable(&u.c), &out->tab_n);
    out->firstline = compat_code_firstline(&u.c);
    out->addr = code;
    if (!out->file || !out->name || !out->tab) {
        walk_code_copy_free(out);
        return -ENOMEM;
    }
    return 0;
}

/* walk_frame for a frame of a code object that is gone (sampler thread). */
int walk_frame_copy(agent_t *a, const walk_code_copy_t *c, intptr_t instr, agent_frame_t *out)
{
    char to[WALK_MAX_STR * 4 + 8];
    const char *file = c->file;
    int cell = cells_is_cell(file), delta = 0;
    if (cell && cells_lookup(file, 0, to, sizeof to, &delta)) file = to;
    int fid = agg_intern(a, file, strlen(file));
    int nid = agg_intern(a, c->name, strlen(c->name));
    if (fid <= 0 || nid <= 0) return -ENOMEM;
    int fmt = compat_linetable_format();
    int line = lt_line(fmt, c->tab, c->tab_n, c->firstline, compat_instr_addr(c->addr, instr));
    out->file_id = fid;
    out->name_id = nid;
    out->line = (line > 0 ? line : c->firstline) + delta;
    out->first = c->firstline + delta;
    out->last = lt_last_line(fmt, c->tab, c->tab_n, c->firstline) + delta;
    out->profiled = cell ? cell_profiled(a, file) : file_flag(a, fid);
    return 0;
}

void walk_code_copy_free(walk_code_copy_t *c)
{
    free(c->file);
    free(c->name);
    free(c->tab);
    memset(c, 0, sizeof *c);
}

/* NUL-terminated C string at p into out (at most cap - 1 bytes); length or
 * -1. Read in pieces: the string may end just before an unmapped page. */
static int read_cstr(uintptr_t p, char *out, size_t cap)
{
    size_t o = 0;
    while (p && o + 1 < cap) {
        char piece[32];
        size_t k = sizeof piece < cap - 1 - o ? sizeof piece : cap - 1 - o;
        if (mem_read(p + o, piece, k) != 0) return -1;
        for (size_t i = 0; i < k; i++) {
            if (!piece[i]) {
                out[o] = 0;
                return (int)o;
            }
            out[o++] = piece[i];
        }
    }
    if (cap) out[o < cap ? o : cap - 1] = 0;
    return p ? (int)o : -1;
}

/* 1 when s reads as a C-level name (printable ASCII, no blanks): what a
 * misread pointer rarely gives. */
static int plain_name(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f) return 0;
    return 1;
}

static uintptr_t obj_type(uintptr_t obj)
{
    PyObject h;
    if (!obj || mem_read(obj, &h, sizeof h) != 0) return 0;
    return (uintptr_t)Py_TYPE(&h);
}

/* 1 when t is a type object: its type is `type` or a metaclass (a type
 * whose own type is `type`). What a stale or misread slot fails. */
static int is_type(uintptr_t t)
{
    uintptr_t m = obj_type(t);
    return m && (m == (uintptr_t)&PyType_Type || obj_type(m) == (uintptr_t)&PyType_Type);
}

/* tp_name of the type object t into out; length or -1. */
static int type_name(uintptr_t t, char *out, size_t cap)
{
    PyTypeObject ty;
    if (!is_type(t) || mem_read(t, &ty, offsetof(PyTypeObject, tp_name) + sizeof ty.tp_name) != 0)
        return -1;
    return read_cstr((uintptr_t)ty.tp_name, out, cap);
}

/* The name a C callable carries (raw fields only: no call into Python, no
 * GIL), or -1; *py set when the callable is a Python function (its frame
 * is being pushed or popped: bytecode). */
static int callee_name(uintptr_t obj, char *out, size_t cap, int *py)
{
    char a[WALK_NAME_MAX], b[WALK_NAME_MAX];
    uintptr_t t = obj_type(obj);
    *py = 0;
    if (!t) return -1;
    if (t == (uintptr_t)&PyFunction_Type) {
        *py = 1;
        return -1;
    }
    if (t == (uintptr_t)&PyMethod_Type) { /* a bound method: its function */
        PyMethodObject m;
        if (mem_read(obj, &m, sizeof m) != 0) return -1;
        obj = (uintptr_t)m.im_func;
        t = obj_type(obj);
        if (t == (uintptr_t)&PyFunction_Type) {
            *py = 1;
            return -1;
        }
    }
    if (t == (uintptr_t)&PyCFunction_Type || t == (uintptr_t)&PyCMethod_Type) {
        PyCFunctionObject f;
        PyMethodDef md;
        if (mem_read(obj, &f, sizeof f) != 0 || !f.m_ml ||
            mem_read((uintptr_t)f.m_ml, &md, sizeof md) != 0 ||
            read_cstr((uintptr_t)md.ml_name, a, sizeof a) <= 0)
            return -1;
        /* module functions carry their module's name; a builtin method
         * bound to an object (lst.append) its object's type */
        uintptr_t self_t = f.m_self ? obj_type((uintptr_t)f.m_self) : 0;
        if (f.m_module && read_str((uintptr_t)f.m_module, b, sizeof b) > 0)
            return snprintf(out, cap, "%s.%s", b, a);
        if (self_t && self_t != (uintptr_t)&PyModule_Type && type_name(self_t, b, sizeof b) > 0)
            return snprintf(out, cap, "%s.%s", b, a);
        return snprintf(out, cap, "%s", a);
    }
    if (t == (uintptr_t)&PyMethodDescr_Type || t == (uintptr_t)&PyClassMethodDescr_Type) {
        PyMethodDescrObject d;
        PyMethodDef md;
        if (mem_read(obj, &d, sizeof d) != 0 || !d.d_method ||
            mem_read((uintptr_t)d.d_method, &md, sizeof md) != 0 ||
            read_cstr((uintptr_t)md.ml_name, a, sizeof a) <= 0 ||
            type_name((uintptr_t)d.d_common.d_type, b, sizeof b) <= 0)
            return -1;
        return snprintf(out, cap, "%s.%s", b, a);
    }
    if (is_type(obj)) return type_name(obj, out, cap); /* a class called: list(...) */
    return type_name(t, out, cap);                     /* another callable: its type */
}

/* 0 when the object at obj is of a readable type without tp_call (not
 * callable), else 1. */
static int callable_obj(uintptr_t obj)
{
    uintptr_t t = obj_type(obj);
    ternaryfunc call;
    if (!t || !is_type(t) || mem_read(t + offsetof(PyTypeObject, tp_call), &call, sizeof call) != 0)
        return 1;
    return call != NULL;
}

/* 1 when the object's type is one of the interpreter's own (int, float,
 * str, list...): an operator on it is bytecode work, not an extension's. */
static int builtin_operand(uintptr_t obj)
{
    uintptr_t t = obj_type(obj);
    return t == (uintptr_t)&PyLong_Type || t == (uintptr_t)&PyFloat_Type ||
           t == (uintptr_t)&PyUnicode_Type || t == (uintptr_t)&PyList_Type ||
           t == (uintptr_t)&PyTuple_Type || t == (uintptr_t)&PyDict_Type ||
           t == (uintptr_t)&PySet_Type || t == (uintptr_t)&PyFrozenSet_Type ||
           t == (uintptr_t)&PyBool_Type || t == g_none_type || t == (uintptr_t)&PyBytes_Type ||
           t == (uintptr_t)&PyByteArray_Type || t == (uintptr_t)&PyComplex_Type ||
           t == (uintptr_t)&PySlice_Type || t == (uintptr_t)&PyRange_Type;
}

/* Value-stack slot i (from the bottom) of the frame at f: the object's
 * address (3.14+: a _PyStackRef, tag bits masked), 0 when unreadable. */
static uintptr_t stack_slot(uintptr_t f, const compat_frame_t *fr, const agent_code_t *e, long i)
{
    uintptr_t v;
    if (i < 0 || mem_read(compat_frame_stack(f, fr, e->nlocalsplus) + (uintptr_t)i * sizeof v, &v,
                          sizeof v) != 0)
        return 0;
    return compat_stackref_obj(v);
}

/* Class (site.h) of the instruction the innermost Python frame is at now,
 * refined by what is on its value stack: a call of a Python function is
 * bytecode (its frame is being pushed), an operator on builtin types too;
 * and the name of a C callee. SITE_NONE when it cannot tell (no tables,
 * unreadable frame or code, CACHE...). */
int walk_site(agent_t *a, uintptr_t tstate, walk_site_t *out)
{
    uintptr_t f;
    out->cls = SITE_NONE;
    out->key = 0;
    out->callee[0] = 0;
    out->file_id = out->line = 0;
    if (read_tstate_frame(tstate, &f) != 0) return SITE_NONE;
    for (int guard = 0; f && guard < 8; guard++) {
        compat_frame_t fr;
        if (mem_read(f, &fr, sizeof fr) != 0) return SITE_NONE;
        if (compat_frame_is_shim(&fr)) { /* the interpreter's entry frame: the next one */
            f = compat_frame_back(&fr);
            continue;
        }
        uintptr_t code = compat_frame_code(&fr);
        agent_code_t *e = code_get(a, NULL, code, 0);
        if (!e || !e->units) return SITE_NONE;
        long u = compat_instr_unit(code, compat_frame_instr(&fr));
        if (u < 0 || (size_t)u >= e->units_n) return SITE_NONE;
        const site_unit_t *su = &e->units[u];
        long addr = compat_instr_addr(code, compat_frame_instr(&fr));
        int line = code_line(e, addr);
        out->file_id = e->file_id;
        out->line = (line > 0 ? line : e->firstline) + e->delta;
        out->key = site_key(code, u);
        out->cls = su->cls;
        if (su->depth < 0) return out->cls; /* the stack is not known there */
        if (su->cls == SITE_CALL) {
            long s1, s2;
            site_callable_slots(su->call, su->depth, (int)su->oparg, &s1, &s2);
            uintptr_t obj = stack_slot(f, &fr, e, s1);
            if (!obj && s2 >= 0) obj = stack_slot(f, &fr, e, s2);
            /* no callable there (a float, a list, an array): the call
             * returned and its result took the callable's slot; the frame
             * stays at the call until the next instruction starts (the
             * call's tail: the arguments' references dropped, the eval
             * breaker): the interpreter's own work */
            if (obj && !callable_obj(obj)) return out->cls = SITE_PY;
            int py = 0;
            if (obj && callee_name(obj, out->callee, sizeof out->callee, &py) < 0)
                out->callee[0] = 0;
            if (py) out->cls = SITE_PY;
            /* the thread may have moved on while we read (the callee
             * returned, its slot now holds a freed result): the name counts
             * only when the frame is still at that instruction with that
             * object, and reads as a name */
            compat_frame_t again;
            if (out->callee[0] &&
                (mem_read(f, &again, sizeof again) != 0 ||
                 compat_frame_instr(&again) != compat_frame_instr(&fr) ||
                 (stack_slot(f, &fr, e, s1) != obj && stack_slot(f, &fr, e, s2) != obj) ||
                 !plain_name(out->callee)))
                out->callee[0] = 0;
        } else if (su->cls == SITE_OP && su->depth >= su->call) {
            int builtin = 1;
            for (int k = 1; k <= su->call; k++) {
                uintptr_t obj = stack_slot(f, &fr, e, su->depth - k);
                if (!obj) return out->cls; /* unreadable: the probe decides */
                builtin &= builtin_operand(obj);
            }
            out->cls = builtin ? SITE_PY : SITE_CALL; /* an extension's C code */
        }
        return out->cls;
    }
    return SITE_NONE;
}

/* The innermost frame's address now (0: none, or unreadable). */
uintptr_t walk_top_frame(uintptr_t tstate)
{
    uintptr_t f;
    return read_tstate_frame(tstate, &f) == 0 ? f : 0;
}

/* Signature of what the innermost frame's interpreter state looks like now:
 * frame address, instruction, and the first PROBE_WORDS words of its local
 * variables and value stack (stale slots above the stack top included). A
 * running interpreter changes it within a few bytecodes; a thread inside a
 * C call leaves all of it untouched.
 * code (3.11+): also the instruction's code unit and first inline cache
 * entries. An unspecialized call counts its adaptive counter down each time
 * it runs (3.12's CALL of time.perf_counter), so a loop of short calls in
 * an unchanged frame (`while pc() < end: pass`) is not a frozen state, and
 * one long call leaves the counter where it is. Only for a thread that holds
 * the GIL at the window's start: another thread can run the same
 * instruction while this one is in a call without it. */
#define PROBE_WORDS 32
int walk_probe(uintptr_t tstate, int code, uint64_t *sig)
{
    uintptr_t f;
    if (read_tstate_frame(tstate, &f) != 0) return -EFAULT;
    union {
        compat_frame_t fr;
        unsigned char raw[sizeof(compat_frame_t) + PROBE_WORDS * sizeof(void *)];
    } u;
    size_t n = sizeof u.raw;
    if (!f) {
        *sig = 0;
        return 0;
    }
    if (mem_read(f, &u, n) != 0) {
        n = sizeof(compat_frame_t);
        if (mem_read(f, &u, n) != 0) {
            *sig = f;
            return 0;
        }
    }
    uint64_t h = 1469598103934665603ull ^ (uint64_t)f;
    for (size_t i = 0; i < n; i++)
        h = (h ^ u.raw[i]) * 1099511628211ull;
#if PY_VERSION_HEX >= 0x030B0000
    uint64_t units;
    if (code && mem_read((uintptr_t)compat_frame_instr(&u.fr), &units, sizeof units) == 0)
        h = (h ^ units) * 1099511628211ull;
#else
    (void)code; /* f_lasti: an index, no inline caches */
#endif
    *sig = h;
    return 0;
}

/* The running interpreter's _Py_DebugOffsets (3.13+) against our compiled
 * layout: see compat_layout.h. why (borrowed) gets the first difference. */
int walk_layout_check(char *why, size_t n)
{
    return compat_layout_check(why, n);
}

void walk_gil_init(agent_t *a)
{
    compat_gil_addrs((PyInterpreterState *)a->interp, &a->gil_locked_addr, &a->gil_holder_addr);
}

/* Thread state holding the GIL now, 0 if nobody, 1 if unknown. */
uintptr_t walk_gil_holder(agent_t *a)
{
    int locked;
    uintptr_t holder;
    if (!a->gil_locked_addr || mem_read(a->gil_locked_addr, &locked, sizeof locked) != 0 ||
        mem_read(a->gil_holder_addr, &holder, sizeof holder) != 0)
        return 1;
    return locked ? holder : 0;
}

void walk_free(agent_t *a)
{
    free(a->snap);
    a->snap = NULL;
    if (!a->codes) return;
    for (int i = 0; i < AGENT_CODE_SLOTS; i++) {
        free(a->codes[i].tab);
        free(a->codes[i].units);
    }
    free(a->codes);
    a->codes = NULL;
}
