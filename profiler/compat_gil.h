/* compat_gil.h: where the GIL's state lives, per CPython version.
 *
 * Only used to answer "is this running thread holding the GIL?": a thread
 * whose CPU clock advances while it does not hold the GIL is running C code
 * (Python bytecode cannot run without it). Included by walk.c only
 * (Py_BUILD_CORE). `locked` is an int (inside _Py_atomic_int up to 3.12),
 * `last_holder` a PyThreadState pointer (inside _Py_atomic_address).
 *   3.9-3.11: _PyRuntime.ceval.gil (one GIL per process)
 *   3.12+:    interp->ceval.gil (pointer; per interpreter)
 */
#ifndef HOTLINE_COMPAT_GIL_H
#define HOTLINE_COMPAT_GIL_H

#if PY_VERSION_HEX >= 0x030C0000
#include <internal/pycore_interp.h>
#else
#include <internal/pycore_runtime.h>
#endif
#include <internal/pycore_gil.h>

/* Addresses of the GIL's locked flag and last holder (call with the GIL). */
static inline void compat_gil_addrs(PyInterpreterState *interp, uintptr_t *locked,
                                    uintptr_t *holder)
{
#if PY_VERSION_HEX >= 0x030C0000
    struct _gil_runtime_state *g = interp->ceval.gil;
#else
    (void)interp;
    struct _gil_runtime_state *g = &_PyRuntime.ceval.gil;
#endif
    *locked = g ? (uintptr_t)&g->locked : 0;
    *holder = g ? (uintptr_t)&g->last_holder : 0;
}

#endif
