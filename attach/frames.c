/* frames.c: reading a target that is open (frames.h): its thread
 * states, each thread's frames, and the code objects they run (a small
 * cache), all through the target's memory source (mem.h), so that a
 * recorded snapshot reads as the live process did. */
#include "frames.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linetable.h"
#include "opcodes.h"
#include "procfs.h"

static int read_u64(struct attach_proc *ap, uint64_t addr, uint64_t *out)
{
    return attach_mem_read(&ap->mem, addr, out, sizeof *out);
}

static int thread_frame(struct attach_proc *ap, uint64_t ts, uint64_t *frame)
{
    const struct attach_layout *l = &ap->lay;
    uint64_t p;
    int rc = read_u64(ap, ts + l->ts_frame, &p);
    if (rc) return rc;
    if (l->has_cframe && p) rc = read_u64(ap, p + l->cf_current, &p);
    *frame = p;
    return rc;
}

static int frame_sig(struct attach_proc *ap, uint64_t frame, uint64_t *sig)
{
    uint64_t instr = 0;
    int rc = 0;
    if (frame && ap->lay.frame_object) { /* f_lasti, an int */
        uint32_t lasti = 0;
        rc = attach_mem_read(&ap->mem, frame + ap->lay.fr_instr, &lasti, sizeof lasti);
        instr = lasti;
    } else if (frame) {
        rc = read_u64(ap, frame + ap->lay.fr_instr, &instr);
    }
    *sig = (frame * 0x9E3779B97F4A7C15ull) ^ instr;
    return rc;
}

/* 3.9/3.10: the kernel tid of the thread whose pthread_t is p: glibc's tid
 * at tid_off in the target's struct pthread (hotline's own glibc layout),
 * kept only when /proc/PID/task has it; else, in a process with one
 * thread, that thread. 0 when neither (the thread's sample is dropped). A
 * replay has no /proc to ask: the recorded tid is taken as it was read. */
static long pthread_tid(struct attach_proc *ap, uint64_t p)
{
    int32_t v = 0;
    if (p && attach_mem_read(&ap->mem, p + (uint64_t)ap->tid_off, &v, sizeof v) == 0 && v > 0 &&
        (ap->snap || procfs_task_exists(NULL, ap->pid, v)))
        return v;
    if (ap->snap) return 0;
    long tids[2];
    return procfs_tasks(NULL, ap->pid, tids, 2) == 1 ? tids[0] : 0;
}

int attach_threads(struct attach_proc *ap, struct attach_thread *out, int max)
{
    const struct attach_layout *l = &ap->lay;
    uint64_t interp, ts;
    int rc = read_u64(ap, ap->runtime + l->rt_interp_head, &interp);
    if (!rc) rc = read_u64(ap, interp + l->is_threads_head, &ts);
    if (rc) return rc == -ESRCH ? rc : ATTACH_ERACE;
    int nt = 0, seen = 0;
    while (ts && nt < max) {
        struct attach_thread *t = &out[nt];
        t->tstate = ts;
        uint64_t tid;
        rc = read_u64(ap, ts + l->ts_native_tid, &tid);
        if (!rc) rc = thread_frame(ap, ts, &t->frame);
        if (!rc) rc = frame_sig(ap, t->frame, &t->sig);
        if (!rc) rc = read_u64(ap, ts + l->ts_next, &ts);
        if (rc) return rc == -ESRCH ? rc : ATTACH_ERACE;
        /* 3.9/3.10: tid is the pthread_t; a list longer than 4 * max cycles */
        if (l->frame_object) {
            if (++seen > 4 * max) return ATTACH_ERACE;
            if (!(tid = (uint64_t)pthread_tid(ap, tid))) continue;
        }
        if (tid == 0 || tid > INT_MAX) return ATTACH_ERACE;
        t->tid = (long)tid;
        nt++;
    }
    /* 3.9/3.10: not one thread state led to a thread of the target */
    if (l->frame_object && seen && !nt) return ATTACH_ERACE;
    return nt;
}

int attach_thread_sig(struct attach_proc *ap, const struct attach_thread *t, uint64_t *sig)
{
    uint64_t frame;
    int rc = thread_frame(ap, t->tstate, &frame);
    if (!rc) rc = frame_sig(ap, frame, sig);
    return rc;
}

int attach_holds_gil(struct attach_proc *ap, const struct attach_thread *t)
{
    const struct attach_layout *l = &ap->lay;
    uint64_t base = ap->runtime;
    int rc = 0;
    if (l->gil_in_interp) rc = read_u64(ap, ap->runtime + l->rt_interp_head, &base);
    int locked = 0;
    uint64_t holder = 0;
    if (!rc) rc = attach_mem_read(&ap->mem, base + l->gil_locked, &locked, sizeof locked);
    if (!rc) rc = read_u64(ap, base + l->gil_holder, &holder);
    if (rc) return rc;
    return locked && holder == t->tstate;
}

/* Append UTF-8 of code point cp to s (room for 4 more bytes checked by the caller). */
static size_t put_utf8(char *s, uint32_t cp)
{
    if (cp < 0x80) return s[0] = (char)cp, 1;
    if (cp < 0x800) return s[0] = (char)(0xC0 | cp >> 6), s[1] = (char)(0x80 | (cp & 63)), 2;
    if (cp < 0x10000) {
        s[0] = (char)(0xE0 | cp >> 12);
        s[1] = (char)(0x80 | ((cp >> 6) & 63));
        s[2] = (char)(0x80 | (cp & 63));
        return 3;
    }
    s[0] = (char)(0xF0 | cp >> 18);
    s[1] = (char)(0x80 | ((cp >> 12) & 63));
    s[2] = (char)(0x80 | ((cp >> 6) & 63));
    s[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* A str object into out (UTF-8); ATTACH_ERACE when it is not a sane
 * compact str (freed, reused memory). */
static int read_str(struct attach_proc *ap, uint64_t addr, char *out, size_t outn)
{
    const struct attach_layout *l = &ap->lay;
    uint8_t hdr[256];
    if (l->uni_compact_size > sizeof hdr || l->uni_length + 8 > l->uni_compact_size ||
        l->uni_state + 4 > l->uni_compact_size)
        return ATTACH_EVERSION;
    int rc = attach_mem_read(&ap->mem, addr, hdr, l->uni_compact_size);
    if (rc) return rc;
    int64_t len;
    uint32_t state;
    memcpy(&len, hdr + l->uni_length, 8);
    memcpy(&state, hdr + l->uni_state, 4);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (!compact || len < 0 || len > 4 * ATTACH_MAX_STR || (kind != 1 && kind != 2 && kind != 4))
        return ATTACH_ERACE;
    size_t take = (size_t)len < outn / 4 - 1 ? (size_t)len : outn / 4 - 1;
    uint8_t raw[4 * ATTACH_MAX_STR];
    uint64_t data = addr + (ascii ? l->uni_ascii_size : l->uni_compact_size);
    rc = attach_mem_read(&ap->mem, data, raw, take * kind);
    if (rc) return rc;
    size_t o = 0;
    for (size_t i = 0; i < take; i++) {
        uint32_t cp = kind == 1 ? raw[i] : kind == 2 ? ((uint16_t *)raw)[i] : ((uint32_t *)raw)[i];
        if (ascii && cp > 127) return ATTACH_ERACE;
        o += put_utf8(out + o, cp);
    }
    out[o] = 0;
    return 0;
}

/* The line table's format (sampling/linetable.h) */
static int lt_format(const struct attach_layout *l)
{
    if (!l->frame_object) return LT_LOCATIONS;
    return l->minor >= 10 ? LT_LINETABLE310 : LT_LNOTAB;
}

/* The cached code object at addr, read (again) when its fields changed. */
static int code_get(struct attach_proc *ap, uint64_t addr, struct attach_code **out)
{
    const struct attach_layout *l = &ap->lay;
    uint8_t head[1024];
    /* the fields are inside the head read (a layout from the target's own
     * _Py_DebugOffsets, or a snapshot, is not trusted to say so) */
    if (l->co_code_adaptive > sizeof head || l->co_filename + 8 > l->co_code_adaptive ||
        l->co_qualname + 8 > l->co_code_adaptive || l->co_linetable + 8 > l->co_code_adaptive ||
        l->co_firstlineno + 4 > l->co_code_adaptive ||
        (l->frame_object && l->ob_type + 8 > l->co_code_adaptive))
        return ATTACH_EVERSION;
    int rc = attach_mem_read(&ap->mem, addr, head, l->co_code_adaptive);
    if (rc) return rc;
    if (l->frame_object) { /* 3.9/3.10: a code object, not what was freed there */
        uint64_t type;
        memcpy(&type, head + l->ob_type, 8);
        if (type != ap->code_type) return ATTACH_ERACE;
    }
    uint64_t fname, qname, tab;
    int first;
    memcpy(&fname, head + l->co_filename, 8);
    memcpy(&qname, head + l->co_qualname, 8);
    memcpy(&tab, head + l->co_linetable, 8);
    memcpy(&first, head + l->co_firstlineno, 4);
    if (first < 0 || first > 10000000) return ATTACH_ERACE;
    /* the entry for addr among ATTACH_CODE_WAYS slots; else one that no
     * frame of this stack uses (their names are borrowed from it) */
    struct attach_code *c = NULL, *free_slot = NULL;
    size_t h = (size_t)(addr >> 4) % ATTACH_CODE_CACHE;
    for (size_t k = 0; k < ATTACH_CODE_WAYS && !c; k++) {
        struct attach_code *e = &ap->codes[(h + k) % ATTACH_CODE_CACHE];
        if (e->addr == addr)
            c = e;
        else if (!free_slot && e->gen != ap->code_gen)
            free_slot = e;
    }
    if (c && c->filename == fname && c->linetable == tab && c->firstline == first) {
        c->gen = ap->code_gen;
        *out = c;
        return 0;
    }
    if (!c) c = free_slot;
    if (!c) return ATTACH_ERACE; /* every slot holds a frame of this stack: drop it */
    c->addr = 0;
    c->gen = ap->code_gen;
    free(c->units); /* another code object: its sites are read again */
    c->units = NULL;
    c->units_n = 0;
    c->units_state = 0;
    if ((rc = read_str(ap, fname, c->file, sizeof c->file)) ||
        (rc = read_str(ap, qname, c->name, sizeof c->name)))
        return rc;
    int64_t tn;
    rc = attach_mem_read(&ap->mem, tab + l->bytes_size, &tn, 8);
    if (rc) return rc;
    if (tn < 0 || tn > ATTACH_MAX_TABLE) return ATTACH_ERACE;
    uint8_t *t = realloc(c->tab, tn ? (size_t)tn : 1);
    if (!t) return -ENOMEM;
    c->tab = t;
    c->tab_n = (size_t)tn;
    rc = attach_mem_read(&ap->mem, tab + l->bytes_sval, t, c->tab_n);
    if (rc && tn) return rc;
    c->addr = addr;
    c->filename = fname;
    c->linetable = tab;
    c->firstline = first;
    c->lastline = lt_last_line(lt_format(l), c->tab, c->tab_n, first);
    *out = c;
    return 0;
}

/* 3.9/3.10: the PyFrameObject chain (f_back), each frame checked to be one
 * (a frame freed and reused under us is not) */
static int stack_frame_objects(struct attach_proc *ap, const struct attach_thread *t,
                               struct attach_frame *out, int max)
{
    const struct attach_layout *l = &ap->lay;
    uint64_t f = t->frame;
    int nf = 0;
    size_t need = l->fr_instr + 4;
    if (l->fr_previous + 8 > need) need = l->fr_previous + 8;
    if (l->fr_code + 8 > need) need = l->fr_code + 8;
    if (l->ob_type + 8 > need) need = l->ob_type + 8;
    uint8_t fr[512];
    if (need > sizeof fr) return ATTACH_EVERSION;
    while (f && nf < max) {
        int rc = attach_mem_read(&ap->mem, f, fr, need);
        if (rc) return rc == -ESRCH ? rc : ATTACH_ERACE;
        uint64_t type, prev, code;
        int32_t lasti;
        memcpy(&type, fr + l->ob_type, 8);
        memcpy(&prev, fr + l->fr_previous, 8);
        memcpy(&code, fr + l->fr_code, 8);
        memcpy(&lasti, fr + l->fr_instr, 4);
        if (type != ap->frame_type) return ATTACH_ERACE;
        struct attach_code *c;
        rc = code_get(ap, code, &c);
        if (rc) return rc == -ESRCH || rc == -ENOMEM ? rc : ATTACH_ERACE;
        /* in the table's unit (as profiler/compat_code.h): 3.9's f_lasti
         * counts bytes, 3.10's 2-byte instructions; -1: not started */
        long addr = lasti < 0 ? -1 : l->minor >= 10 ? 2L * lasti : (long)lasti;
        out[nf].file = c->file;
        out[nf].name = c->name;
        out[nf].firstline = c->firstline;
        out[nf].lastline = c->lastline;
        out[nf].line = lt_line(lt_format(l), c->tab, c->tab_n, c->firstline, addr);
        out[nf].addr = f;
        nf++;
        f = prev;
    }
    return nf;
}

int attach_stack(struct attach_proc *ap, const struct attach_thread *t, struct attach_frame *out,
                 int max)
{
    const struct attach_layout *l = &ap->lay;
    if (++ap->code_gen == 0) ap->code_gen = 1; /* 0: an entry no stack has used */
    if (l->frame_object) return stack_frame_objects(ap, t, out, max);
    uint64_t f = t->frame;
    int nf = 0, hops = 0;
    while (f && nf < max) {
        if (++hops > 4 * ATTACH_MAX_FRAMES) return ATTACH_ERACE; /* a cycle */
        uint8_t fr[256];
        size_t need = l->fr_owner + 1;
        if (l->fr_previous + 8 > need) need = l->fr_previous + 8;
        if (l->fr_code + 8 > need) need = l->fr_code + 8;
        if (l->fr_instr + 8 > need) need = l->fr_instr + 8;
        if (need > sizeof fr) return ATTACH_EVERSION;
        int rc = attach_mem_read(&ap->mem, f, fr, need);
        if (rc) return rc == -ESRCH ? rc : ATTACH_ERACE;
        uint64_t prev, code, instr;
        memcpy(&prev, fr + l->fr_previous, 8);
        memcpy(&code, fr + l->fr_code, 8);
        memcpy(&instr, fr + l->fr_instr, 8);
        uint8_t owner = fr[l->fr_owner];
        uint64_t here = f;
        f = prev;
        if (owner >= l->owner_shim_min) continue;
        if (owner > 8) return ATTACH_ERACE;
        code &= ~(uint64_t)7; /* 3.14: a tagged stack reference */
        struct attach_code *c;
        rc = code_get(ap, code, &c);
        if (rc) return rc == -ESRCH || rc == -ENOMEM ? rc : ATTACH_ERACE;
        uint64_t start = code + l->co_code_adaptive;
        long addr = instr < start ? -1 : (long)((instr - start) / 2);
        out[nf].file = c->file;
        out[nf].name = c->name;
        out[nf].firstline = c->firstline;
        out[nf].lastline = c->lastline;
        out[nf].line = lt_line(lt_format(l), c->tab, c->tab_n, c->firstline, addr);
        out[nf].addr = here;
        nf++;
    }
    return nf;
}

/* ---- the call site ------------------------------------------------------ */

int attach_site_init(struct attach_proc *ap, char *why, size_t n)
{
    if (!ap->lay.has_site) {
        snprintf(why, n, "Python 3.%d has no call site here", (int)ap->lay.minor);
        return -ENOTSUP;
    }
    if (ap->snap) {
        snprintf(why, n, "a replay has no interpreter to ask");
        return -ENOTSUP;
    }
    struct attach_sitectx *x = calloc(1, sizeof *x);
    if (!x) return -ENOMEM;
    int rc = attach_opcodes_load(ap->pid, (int)ap->lay.minor, &x->ops, &x->eff, why, n);
    if (rc) {
        free(x);
        return rc;
    }
    free(ap->site);
    ap->site = x;
    return 0;
}

/* Each code unit's site of the cached code object c at addr (read once). */
static int code_units(struct attach_proc *ap, uint64_t addr, struct attach_code *c)
{
    const struct attach_layout *l = &ap->lay;
    if (c->units_state) return c->units_state > 0 ? 0 : -1;
    c->units_state = -1;
    int64_t nu = 0;
    uint64_t bytes = addr + l->co_code_adaptive;
    if (l->frame_object) { /* 3.9/3.10: the bytes object co_code */
        uint64_t co;
        if (read_u64(ap, addr + l->co_code, &co) ||
            attach_mem_read(&ap->mem, co + l->bytes_size, &nu, 8))
            return -1;
        nu /= 2;
        bytes = co + l->bytes_sval;
    } else {
        int32_t nl;
        if (attach_mem_read(&ap->mem, addr + l->co_units, &nu, 8) ||
            attach_mem_read(&ap->mem, addr + l->co_nlocalsplus, &nl, 4) || nl < 0 || nl > 1 << 20)
            return -1;
        c->nlocalsplus = nl;
    }
    if (nu <= 0 || nu > ATTACH_MAX_UNITS) return -1;
    uint8_t *code = malloc((size_t)nu * 2);
    site_unit_t *u = malloc((size_t)nu * sizeof *u);
    if (!code || !u || attach_mem_read(&ap->mem, bytes, code, (size_t)nu * 2)) {
        free(code);
        free(u);
        return -1;
    }
    site_analyze_tab(&ap->site->ops, &ap->site->eff, code, (size_t)nu, u);
    free(code);
    c->units = u;
    c->units_n = (size_t)nu;
    c->units_state = 1;
    return 0;
}

/* A C string of the target (up to cap - 1 bytes, no page crossed that is
 * not needed): its length, or -1. */
static int read_cstr(struct attach_proc *ap, uint64_t addr, char *out, size_t cap)
{
    size_t o = 0;
    while (addr && o + 1 < cap) {
        size_t k = 4096 - (size_t)(addr & 4095);
        if (k > cap - 1 - o) k = cap - 1 - o;
        if (attach_mem_read(&ap->mem, addr, out + o, k)) return -1;
        for (size_t i = 0; i < k; i++)
            if (!out[o + i]) return (int)(o + i);
        o += k;
        addr += k;
    }
    if (!addr) return -1;
    out[o] = 0;
    return (int)o;
}

/* 1 when s reads as a C-level name (printable ASCII, no blanks). */
static int plain_name(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f) return 0;
    return 1;
}

static uint64_t obj_type(struct attach_proc *ap, uint64_t obj)
{
    uint64_t t;
    if (!obj || read_u64(ap, obj + ap->lay.ob_type, &t)) return 0;
    return t;
}

/* What a type is, for the callee's name and an operator's operands */
enum {
    TK_BAD = 0,   /* not a readable type */
    TK_OTHER,     /* an object of it is callable (tp_call) */
    TK_NOCALL,    /* ...is not: a result left in the callable's slot */
    TK_BUILTIN,   /* the interpreter's own (int, float, str, list...): not callable */
    TK_FUNC,      /* function: a Python callee */
    TK_METHOD,    /* method: a bound one, its im_func */
    TK_CFUNC,     /* builtin_function_or_method (and 3.9+'s builtin_method) */
    TK_MDESCR,    /* method_descriptor, classmethod_descriptor */
    TK_HEAP = 64, /* flag: a heap type (not cached: it may be freed) */
};

static const char *const builtin_types[] = {
    "int",  "float", "complex",   "str",  "bytes",    "bytearray", "list",  "tuple",
    "dict", "set",   "frozenset", "bool", "NoneType", "slice",     "range", NULL};

/* 1 when t is a type object: its type is `type`, or a metaclass (a type
 * whose type is `type`); `type` itself is found as the type that is its
 * own type and is named so. */
static int is_type(struct attach_proc *ap, uint64_t t)
{
    struct attach_sitectx *x = ap->site;
    uint64_t m = obj_type(ap, t);
    if (!m) return 0;
    if (!x->type_type) {
        for (int k = 0; k < 2 && m; k++) {
            uint64_t mm = obj_type(ap, m), nm;
            char name[8];
            if (mm == m && !read_u64(ap, m + ap->lay.tp_name, &nm) &&
                read_cstr(ap, nm, name, sizeof name) == 4 && !strcmp(name, "type")) {
                x->type_type = m;
                break;
            }
            m = mm;
        }
        m = obj_type(ap, t);
        if (!x->type_type) return 0;
    }
    return m == x->type_type || obj_type(ap, m) == x->type_type;
}

/* tp_name of the type t into out: its length, or -1. */
static int type_name(struct attach_proc *ap, uint64_t t, char *out, size_t cap)
{
    uint64_t nm;
    if (!is_type(ap, t) || read_u64(ap, t + ap->lay.tp_name, &nm)) return -1;
    return read_cstr(ap, nm, out, cap);
}

static int type_kind(struct attach_proc *ap, uint64_t t)
{
    struct attach_sitectx *x = ap->site;
    size_t h = (size_t)(t >> 4) % ATTACH_TYPE_CACHE;
    if (t && x->types[h].addr == t) return x->types[h].kind;
    char name[64];
    uint64_t flags, call;
    if (!t || type_name(ap, t, name, sizeof name) < 0 ||
        read_u64(ap, t + ap->lay.tp_flags, &flags) || read_u64(ap, t + ap->lay.tp_call, &call))
        return TK_BAD;
    int heap = (flags & (1UL << 9)) != 0; /* Py_TPFLAGS_HEAPTYPE */
    int k = call ? TK_OTHER : TK_NOCALL;
    if (!heap) {
        if (!strcmp(name, "function"))
            k = TK_FUNC;
        else if (!strcmp(name, "method"))
            k = TK_METHOD;
        else if (!strcmp(name, "builtin_function_or_method") || !strcmp(name, "builtin_method"))
            k = TK_CFUNC;
        else if (!strcmp(name, "method_descriptor") || !strcmp(name, "classmethod_descriptor"))
            k = TK_MDESCR;
        for (int i = 0; builtin_types[i] && k == TK_NOCALL; i++)
            if (!strcmp(name, builtin_types[i])) k = TK_BUILTIN;
        x->types[h].addr = t;
        x->types[h].kind = (uint8_t)k;
        return k;
    }
    return k | TK_HEAP;
}

/* The name a C callable carries, as the agent's walk.c callee_name gives
 * it: -1 when none; *py set for a Python function (bytecode: its frame is
 * being pushed or popped), *nocall for a non-callable (the call's result). */
static int callee_name(struct attach_proc *ap, uint64_t obj, char *out, size_t cap, int *py,
                       int *nocall)
{
    const struct attach_layout *l = &ap->lay;
    char a[ATTACH_CALLEE_MAX], b[ATTACH_CALLEE_MAX];
    uint64_t t = obj_type(ap, obj);
    int k = type_kind(ap, t) & ~TK_HEAP;
    *py = *nocall = 0;
    if (k == TK_BAD) return -1;
    if (k == TK_NOCALL || k == TK_BUILTIN) {
        *nocall = 1;
        return -1;
    }
    if (k == TK_METHOD) { /* a bound method: its function */
        if (read_u64(ap, obj + l->meth_func, &obj)) return -1;
        t = obj_type(ap, obj);
        k = type_kind(ap, t) & ~TK_HEAP;
    }
    if (k == TK_FUNC) {
        *py = 1;
        return -1;
    }
    if (k == TK_CFUNC) {
        uint64_t ml, self, mod, nm;
        if (read_u64(ap, obj + l->cf_ml, &ml) || !ml || read_u64(ap, ml + l->ml_name, &nm) ||
            read_cstr(ap, nm, a, sizeof a) <= 0 || read_u64(ap, obj + l->cf_self, &self) ||
            read_u64(ap, obj + l->cf_module, &mod))
            return -1;
        /* module functions carry their module's name; a builtin method
         * bound to an object (lst.append) its object's type */
        uint64_t self_t = self ? obj_type(ap, self) : 0;
        if (mod && read_str(ap, mod, b, sizeof b) == 0 && b[0])
            return snprintf(out, cap, "%s.%s", b, a);
        if (self_t && type_name(ap, self_t, b, sizeof b) > 0 && strcmp(b, "module") != 0)
            return snprintf(out, cap, "%s.%s", b, a);
        return snprintf(out, cap, "%s", a);
    }
    if (k == TK_MDESCR) {
        uint64_t md, dt, nm;
        if (read_u64(ap, obj + l->descr_method, &md) || !md || read_u64(ap, md + l->ml_name, &nm) ||
            read_cstr(ap, nm, a, sizeof a) <= 0 || read_u64(ap, obj + l->descr_type, &dt) ||
            type_name(ap, dt, b, sizeof b) <= 0)
            return -1;
        return snprintf(out, cap, "%s.%s", b, a);
    }
    if (is_type(ap, obj)) return type_name(ap, obj, out, cap); /* a class called: list(...) */
    return type_name(ap, t, out, cap);                         /* another callable: its type */
}

/* Value-stack slot i (from the bottom) of the frame at f: the object, 0
 * when unreadable. */
static uint64_t stack_slot(struct attach_proc *ap, uint64_t f, const struct attach_code *c, long i)
{
    const struct attach_layout *l = &ap->lay;
    uint64_t base, v;
    if (i < 0) return 0;
    if (l->frame_object) {
        if (read_u64(ap, f + l->fr_valuestack, &base) || !base) return 0;
    } else {
        base = f + l->fr_localsplus + (uint64_t)c->nlocalsplus * 8;
    }
    if (read_u64(ap, base + (uint64_t)i * 8, &v)) return 0;
    return v;
}

/* The innermost frame's code object, instruction and previous frame: 0,
 * or -1 (unreadable, not a frame). *skip: an interpreter's entry frame. */
static int frame_head(struct attach_proc *ap, uint64_t f, uint64_t *code, int64_t *instr,
                      uint64_t *prev, int *skip)
{
    const struct attach_layout *l = &ap->lay;
    uint8_t fr[512];
    size_t need = l->fr_previous + 8;
    if (l->fr_code + 8 > need) need = l->fr_code + 8;
    if (l->fr_instr + 8 > need) need = l->fr_instr + 8;
    if (!l->frame_object && l->fr_owner + 1 > need) need = l->fr_owner + 1;
    if (l->frame_object && l->ob_type + 8 > need) need = l->ob_type + 8;
    if (need > sizeof fr || attach_mem_read(&ap->mem, f, fr, need)) return -1;
    memcpy(prev, fr + l->fr_previous, 8);
    memcpy(code, fr + l->fr_code, 8);
    *skip = 0;
    if (l->frame_object) {
        uint64_t type;
        int32_t lasti;
        memcpy(&type, fr + l->ob_type, 8);
        memcpy(&lasti, fr + l->fr_instr, 4);
        if (type != ap->frame_type) return -1;
        *instr = lasti;
    } else {
        uint64_t ip;
        memcpy(&ip, fr + l->fr_instr, 8);
        *instr = (int64_t)ip;
        *skip = fr[l->fr_owner] >= l->owner_shim_min;
        *code &= ~(uint64_t)7;
    }
    return 0;
}

int attach_site(struct attach_proc *ap, const struct attach_thread *t, struct attach_site *out)
{
    const struct attach_layout *l = &ap->lay;
    out->cls = SITE_NONE;
    out->key = out->frame = out->sig = 0;
    out->line = 0;
    out->callee[0] = 0;
    if (!ap->site || !ap->codes) return SITE_NONE;
    if (++ap->code_gen == 0) ap->code_gen = 1;
    uint64_t f = t->frame;
    for (int guard = 0; f && guard < 8; guard++) {
        uint64_t code, prev;
        int64_t instr;
        int skip;
        if (frame_head(ap, f, &code, &instr, &prev, &skip)) return SITE_NONE;
        if (skip) { /* the interpreter's entry frame: the next one */
            f = prev;
            continue;
        }
        struct attach_code *c;
        if (code_get(ap, code, &c) || code_units(ap, code, c)) return SITE_NONE;
        /* the unit and the line table's address, as attach_stack */
        long u, addr;
        if (l->frame_object) {
            addr = instr < 0 ? -1 : l->minor >= 10 ? 2L * instr : (long)instr;
            u = addr < 0 ? -1 : addr / 2;
        } else {
            uint64_t start = code + l->co_code_adaptive;
            u = addr = (uint64_t)instr < start ? -1 : (long)(((uint64_t)instr - start) / 2);
        }
        if (u < 0 || (size_t)u >= c->units_n) return SITE_NONE;
        const site_unit_t *su = &c->units[u];
        int line = lt_line(lt_format(l), c->tab, c->tab_n, c->firstline, addr);
        out->frame = f;
        /* the window starts from this very read (frame_sig's formula):
         * the thread's own innermost frame, not one under an entry frame */
        if (guard == 0)
            out->sig = (f * 0x9E3779B97F4A7C15ull) ^
                       (l->frame_object ? (uint64_t)(uint32_t)instr : (uint64_t)instr);
        out->line = line >= 0 ? line : c->firstline > 0 ? c->firstline : 0;
        out->key = site_key((uintptr_t)code, u);
        out->cls = su->cls;
        if (su->depth < 0) return out->cls; /* the stack is not known there */
        if (su->cls == SITE_CALL) {
            long s1, s2;
            site_callable_slots(su->call, su->depth, (int)su->oparg, &s1, &s2);
            uint64_t obj = stack_slot(ap, f, c, s1);
            if (!obj && s2 >= 0) obj = stack_slot(ap, f, c, s2);
            int py = 0, nocall = 0;
            if (obj && callee_name(ap, obj, out->callee, sizeof out->callee, &py, &nocall) < 0)
                out->callee[0] = 0;
            /* no callable there: the call returned, its result took the
             * callable's slot, the frame is in the call's tail (walk.c) */
            if (nocall || py) {
                out->callee[0] = 0;
                return out->cls = SITE_PY;
            }
            /* the name counts only when the frame is still at that
             * instruction with that object (a call that returned
             * meanwhile leaves a freed result in its slot) */
            uint64_t code2, prev2;
            int64_t instr2;
            if (out->callee[0] &&
                (frame_head(ap, f, &code2, &instr2, &prev2, &skip) || instr2 != instr ||
                 (stack_slot(ap, f, c, s1) != obj && stack_slot(ap, f, c, s2) != obj) ||
                 !plain_name(out->callee)))
                out->callee[0] = 0;
        } else if (su->cls == SITE_OP && su->depth >= su->call) {
            int builtin = 1;
            for (int k = 1; k <= su->call; k++) {
                uint64_t obj = stack_slot(ap, f, c, su->depth - k);
                if (!obj) return out->cls; /* unreadable: the probe decides */
                builtin &= type_kind(ap, obj_type(ap, obj)) == TK_BUILTIN;
            }
            out->cls = builtin ? SITE_PY : SITE_CALL; /* an extension's C code */
        }
        return out->cls;
    }
    return SITE_NONE;
}

int attach__codes_new(struct attach_proc *ap)
{
    ap->codes = calloc(ATTACH_CODE_CACHE, sizeof *ap->codes);
    return ap->codes ? 0 : -ENOMEM;
}

void attach__codes_free(struct attach_proc *ap)
{
    if (ap->codes)
        for (int i = 0; i < ATTACH_CODE_CACHE; i++) {
            free(ap->codes[i].tab);
            free(ap->codes[i].units);
        }
    free(ap->codes);
    ap->codes = NULL;
}
