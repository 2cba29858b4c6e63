/* frames.c: reading a target that is open (frames.h): its thread
 * states, each thread's frames, and the code objects they run (a small
 * cache), all through the target's memory source (mem.h), so that a
 * recorded snapshot reads as the live process did. */
#include "frames.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "linetable.h"
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
        nf++;
    }
    return nf;
}

int attach__codes_new(struct attach_proc *ap)
{
    ap->codes = calloc(ATTACH_CODE_CACHE, sizeof *ap->codes);
    return ap->codes ? 0 : -ENOMEM;
}

void attach__codes_free(struct attach_proc *ap)
{
    if (ap->codes)
        for (int i = 0; i < ATTACH_CODE_CACHE; i++)
            free(ap->codes[i].tab);
    free(ap->codes);
    ap->codes = NULL;
}
