/* compat_code.h: what a code object tells us, per CPython version.
 *
 * PyCodeObject is a public (unstable) struct in every supported version; we
 * read a local copy of its head with mem_read() and take file, qualified
 * name, first line and the line table from it. The address passed to the
 * line-table decoder is in the unit that table uses:
 *   3.9  co_lnotab,   f_lasti in bytes            -> LT_LNOTAB, byte offset
 *   3.10 co_linetable, f_lasti in code units      -> LT_LINETABLE310, bytes
 *   3.11+ co_linetable (locations), code units    -> LT_LOCATIONS, units
 */
#ifndef HOTLINE_COMPAT_CODE_H
#define HOTLINE_COMPAT_CODE_H

#include "linetable.h"

/* Bytes of the code object that must be copied to read the fields below. */
#if PY_VERSION_HEX >= 0x030B0000
#define COMPAT_CODE_HEAD offsetof(PyCodeObject, co_code_adaptive)
#else
#define COMPAT_CODE_HEAD sizeof(PyCodeObject)
#endif

static inline uintptr_t compat_code_filename(const PyCodeObject *c)
{
    return (uintptr_t)c->co_filename;
}

static inline uintptr_t compat_code_qualname(const PyCodeObject *c)
{
#if PY_VERSION_HEX >= 0x030B0000
    return (uintptr_t)c->co_qualname;
#else
    return (uintptr_t)c->co_name;
#endif
}

static inline int compat_code_firstline(const PyCodeObject *c)
{
    return c->co_firstlineno;
}

static inline uintptr_t compat_code_linetable(const PyCodeObject *c)
{
#if PY_VERSION_HEX >= 0x030A0000
    return (uintptr_t)c->co_linetable;
#else
    return (uintptr_t)c->co_lnotab;
#endif
}

static inline int compat_linetable_format(void)
{
#if PY_VERSION_HEX >= 0x030B0000
    return LT_LOCATIONS;
#elif PY_VERSION_HEX >= 0x030A0000
    return LT_LINETABLE310;
#else
    return LT_LNOTAB;
#endif
}

/* Line-table address of a frame's raw instruction position (see
 * compat_frame_instr) within the code object at address `code`. */
static inline long compat_instr_addr(uintptr_t code, intptr_t instr)
{
#if PY_VERSION_HEX >= 0x030B0000
    uintptr_t start = code + offsetof(PyCodeObject, co_code_adaptive);
    if ((uintptr_t)instr < start) return -1;
    return (long)(((uintptr_t)instr - start) / 2); /* code units are 2 bytes */
#elif PY_VERSION_HEX >= 0x030A0000
    (void)code;
    return instr < 0 ? -1 : (long)instr * 2;
#else
    (void)code;
    return (long)instr;
#endif
}

/* Code units (2 bytes: opcode, oparg) of the code object whose head c is,
 * and where they are: 3.11+ inline (co_code_adaptive, ob_size units, with
 * specialized opcodes and inline caches), 3.9/3.10 the co_code bytes
 * object (*bytes_obj set: its size is its own). */
static inline uintptr_t compat_code_units(const PyCodeObject *c, uintptr_t code, size_t *units,
                                          int *bytes_obj)
{
#if PY_VERSION_HEX >= 0x030B0000
    *units = (size_t)Py_SIZE((PyObject *)c);
    *bytes_obj = 0;
    return code + offsetof(PyCodeObject, co_code_adaptive);
#else
    (void)code;
    *units = 0;
    *bytes_obj = 1;
    return (uintptr_t)c->co_code;
#endif
}

/* Code unit index of a frame's raw instruction position, or -1. */
static inline long compat_instr_unit(uintptr_t code, intptr_t instr)
{
#if PY_VERSION_HEX >= 0x030B0000
    return compat_instr_addr(code, instr);
#elif PY_VERSION_HEX >= 0x030A0000
    (void)code;
    return instr < 0 ? -1 : (long)instr;
#else
    (void)code;
    return instr < 0 ? -1 : (long)instr / 2;
#endif
}

/* Slots before the value stack in a frame (locals, cells, free vars):
 * 3.11+ co_nlocalsplus; 3.9/3.10 frames point at their stack themselves. */
static inline int compat_code_nlocalsplus(const PyCodeObject *c)
{
#if PY_VERSION_HEX >= 0x030B0000
    return c->co_nlocalsplus;
#else
    (void)c;
    return 0;
#endif
}

#endif
