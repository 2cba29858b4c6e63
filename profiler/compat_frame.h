/* compat_frame.h: where a thread's Python frames live, per CPython version.
 *
 * Included only by walk.c, which defines Py_BUILD_CORE (3.11+ keep frames in
 * the internal _PyInterpreterFrame). Every accessor works on a *local copy*
 * of remote memory read with mem_read(), never on live interpreter memory,
 * so a frame freed under the sampler cannot crash the program.
 *
 * 3.9/3.10: PyThreadState.frame -> PyFrameObject {f_back, f_code, f_lasti}
 * 3.11/3.12: PyThreadState.cframe -> _PyCFrame.current_frame ->
 *            _PyInterpreterFrame {previous, f_code, prev_instr, owner}
 * 3.13:      PyThreadState.current_frame -> _PyInterpreterFrame
 *            {previous, f_executable, instr_ptr, owner}
 * 3.14/3.15: the same fields, the struct now in pycore_interpframe_structs.h;
 *            f_executable is a _PyStackRef: the object's address with tag
 *            bits in the low bits (reference kind; 3.14 has 1 tag bit for
 *            objects, 3.15 2), so it is masked before use. Owners >=
 *            FRAME_OWNED_BY_INTERPRETER are the interpreter's own entry
 *            frames (3.14 also FRAME_OWNED_BY_CSTACK; 3.15 drops it), not
 *            user code: skipped by the same rule CPython's
 *            _PyFrame_IsIncomplete() uses.
 */
#ifndef HOTLINE_COMPAT_FRAME_H
#define HOTLINE_COMPAT_FRAME_H

#if PY_VERSION_HEX >= 0x030E0000
#include <internal/pycore_interpframe_structs.h>
typedef _PyInterpreterFrame compat_frame_t;
#elif PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
typedef _PyInterpreterFrame compat_frame_t;
#else
#include <frameobject.h>
typedef PyFrameObject compat_frame_t;
#endif

/* Address of the innermost frame, given a local copy of the PyThreadState. */
static inline uintptr_t compat_ts_frame(const PyThreadState *ts)
{
#if PY_VERSION_HEX >= 0x030D0000
    return (uintptr_t)ts->current_frame;
#elif PY_VERSION_HEX >= 0x030B0000
    _PyCFrame cf;
    if (mem_read((uintptr_t)ts->cframe, &cf, sizeof cf) != 0) return 0;
    return (uintptr_t)cf.current_frame;
#else
    return (uintptr_t)ts->frame;
#endif
}

static inline uintptr_t compat_frame_back(const compat_frame_t *f)
{
#if PY_VERSION_HEX >= 0x030B0000
    return (uintptr_t)f->previous;
#else
    return (uintptr_t)f->f_back;
#endif
}

static inline uintptr_t compat_frame_code(const compat_frame_t *f)
{
#if PY_VERSION_HEX >= 0x030E0000
    /* objects are at least 8-byte aligned: the low 3 bits are only tags */
    return f->f_executable.bits & ~(uintptr_t)7;
#elif PY_VERSION_HEX >= 0x030D0000
    return (uintptr_t)f->f_executable;
#else
    return (uintptr_t)f->f_code;
#endif
}

/* 1 when the frame is a C-stack shim (3.12+) that is not Python code. */
static inline int compat_frame_is_shim(const compat_frame_t *f)
{
#if PY_VERSION_HEX >= 0x030E0000
    return f->owner >= FRAME_OWNED_BY_INTERPRETER;
#elif PY_VERSION_HEX >= 0x030C0000
    return f->owner == FRAME_OWNED_BY_CSTACK;
#else
    (void)f;
    return 0;
#endif
}

/* Raw instruction position: a pointer (3.11+) or an offset (3.9/3.10). Used
 * both for the line lookup and as the "has the interpreter moved" probe. */
static inline intptr_t compat_frame_instr(const compat_frame_t *f)
{
#if PY_VERSION_HEX >= 0x030D0000
    return (intptr_t)f->instr_ptr;
#elif PY_VERSION_HEX >= 0x030B0000
    return (intptr_t)f->prev_instr;
#else
    return (intptr_t)f->f_lasti;
#endif
}

/* Address of the bottom of the value stack of the frame at f (local copy
 * fr): 3.11+ right after the nlocalsplus slots of localsplus; 3.9/3.10
 * f_valuestack. */
static inline uintptr_t compat_frame_stack(uintptr_t f, const compat_frame_t *fr, int nlocalsplus)
{
#if PY_VERSION_HEX >= 0x030B0000
    (void)fr;
    return f + offsetof(compat_frame_t, localsplus) + (uintptr_t)nlocalsplus * sizeof(void *);
#else
    (void)f;
    (void)nlocalsplus;
    return (uintptr_t)fr->f_valuestack;
#endif
}

/* The object a value-stack slot holds: 3.14+ slots are _PyStackRef, whose
 * low bits are tags (a NULL ref is tag bits only: 0 here). Both tag bits set
 * (Py_INT_TAG, 3 in 3.14 and 3.15) is a tagged int, no object: 0 too (3.14+
 * FOR_ITER over a list keeps its index so, beside the list). */
static inline uintptr_t compat_stackref_obj(uintptr_t v)
{
#if PY_VERSION_HEX >= 0x030E0000
    if ((v & 3) == 3) return 0;
    return v & ~(uintptr_t)7;
#else
    return v;
#endif
}

#endif
