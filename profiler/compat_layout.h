/* compat_layout.h: does the running interpreter lay out its structures the
 * way the headers this agent was compiled with say?
 *
 * From 3.13 CPython publishes the offsets that out-of-process profilers and
 * debuggers need in _PyRuntime.debug_offsets (_Py_DebugOffsets, a cookie, a
 * version and per-struct field offsets), stable only within one minor
 * version. The agent reads the same structures from its compiled-in layout
 * (walk.c, memhooks.c); a layout that changed under it (an agent built
 * against other headers of the same minor version, a vendor patch) would
 * read garbage silently, so start() compares every field it reads against
 * the runtime's own table and refuses to sample on a difference. Included
 * by walk.c only (Py_BUILD_CORE); 3.9-3.12 have no table and pass.
 */
#ifndef HOTLINE_COMPAT_LAYOUT_H
#define HOTLINE_COMPAT_LAYOUT_H

#if PY_VERSION_HEX >= 0x030D0000
#include <internal/pycore_runtime.h>
#if PY_VERSION_HEX >= 0x030E0000
#include <internal/pycore_debug_offsets.h>
#endif

/* 0, or -EPROTO with the first field that differs written to why. The
 * table is read through mem_read() into a copy (it is plain data at the
 * start of _PyRuntime). */
static inline int compat_layout_check(char *why, size_t n)
{
    _Py_DebugOffsets d;
    if (mem_read((uintptr_t)&_PyRuntime.debug_offsets, &d, sizeof d) != 0) {
        snprintf(why, n, "cannot read _PyRuntime.debug_offsets");
        return -EPROTO;
    }
    if (memcmp(d.cookie, _Py_Debug_Cookie, sizeof d.cookie) != 0) {
        snprintf(why, n, "_PyRuntime.debug_offsets has no cookie");
        return -EPROTO;
    }
    if ((d.version >> 16) != (PY_VERSION_HEX >> 16)) {
        snprintf(why, n, "interpreter is %d.%d, the agent was built for %d.%d",
                 (int)(d.version >> 24) & 255, (int)(d.version >> 16) & 255, PY_MAJOR_VERSION,
                 PY_MINOR_VERSION);
        return -EPROTO;
    }
    const struct {
        const char *name;
        uint64_t runtime, ours;
    } f[] = {
        {"thread_state.next", d.thread_state.next, offsetof(PyThreadState, next)},
        {"thread_state.interp", d.thread_state.interp, offsetof(PyThreadState, interp)},
        {"thread_state.current_frame", d.thread_state.current_frame,
         offsetof(PyThreadState, current_frame)},
        {"thread_state.native_thread_id", d.thread_state.native_thread_id,
         offsetof(PyThreadState, native_thread_id)},
        {"interpreter_frame.previous", d.interpreter_frame.previous,
         offsetof(_PyInterpreterFrame, previous)},
        {"interpreter_frame.executable", d.interpreter_frame.executable,
         offsetof(_PyInterpreterFrame, f_executable)},
        {"interpreter_frame.instr_ptr", d.interpreter_frame.instr_ptr,
         offsetof(_PyInterpreterFrame, instr_ptr)},
        {"interpreter_frame.owner", d.interpreter_frame.owner,
         offsetof(_PyInterpreterFrame, owner)},
        {"interpreter_frame.localsplus", d.interpreter_frame.localsplus,
         offsetof(_PyInterpreterFrame, localsplus)},
        {"code_object.filename", d.code_object.filename, offsetof(PyCodeObject, co_filename)},
        {"code_object.qualname", d.code_object.qualname, offsetof(PyCodeObject, co_qualname)},
        {"code_object.linetable", d.code_object.linetable, offsetof(PyCodeObject, co_linetable)},
        {"code_object.firstlineno", d.code_object.firstlineno,
         offsetof(PyCodeObject, co_firstlineno)},
        {"code_object.co_code_adaptive", d.code_object.co_code_adaptive,
         offsetof(PyCodeObject, co_code_adaptive)},
        {"interpreter_state.gil_runtime_state_locked",
         d.interpreter_state.gil_runtime_state_locked - d.interpreter_state.gil_runtime_state,
         offsetof(struct _gil_runtime_state, locked)},
        {"interpreter_state.gil_runtime_state_holder",
         d.interpreter_state.gil_runtime_state_holder - d.interpreter_state.gil_runtime_state,
         offsetof(struct _gil_runtime_state, last_holder)},
        {"unicode_object.length", d.unicode_object.length, offsetof(PyASCIIObject, length)},
        {"unicode_object.state", d.unicode_object.state, offsetof(PyASCIIObject, state)},
        {"unicode_object.asciiobject_size", d.unicode_object.asciiobject_size,
         sizeof(PyASCIIObject)},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].runtime != f[i].ours) {
            snprintf(why, n,
                     "interpreter layout differs from the agent's headers: %s at %llu, "
                     "built for %llu",
                     f[i].name, (unsigned long long)f[i].runtime, (unsigned long long)f[i].ours);
            return -EPROTO;
        }
    }
    return 0;
}
#else
static inline int compat_layout_check(char *why, size_t n)
{
    (void)why;
    (void)n;
    return 0;
}
#endif

#endif
