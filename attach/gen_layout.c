/* gen_layout.c: compiled by attach/gen_layouts.sh against one CPython
 * version's internal headers (a default build: GIL, no Py_DEBUG) and run,
 * it prints one `struct attach_layout` initializer with every offset
 * `hotline attach` needs, from offsetof(): no number is copied by hand. Its
 * output is committed as attach/layouts/3.X.inc; the build includes those
 * files and never runs this (ctest attach_layouts checks they still match).
 * For 3.13+ it also prints where each of those offsets sits inside
 * _Py_DebugOffsets, so that attach reads the real values from the target's
 * own table (a vendor patch of the same minor version still reads right)
 * and uses ours to check it.
 * 3.9/3.10 have no _PyInterpreterFrame: their rows describe the
 * PyFrameObject chain instead (frame_object; layout.h says which fields
 * then mean what). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>

#include <internal/pycore_runtime.h>
#include <internal/pycore_interp.h>
#if PY_VERSION_HEX >= 0x030E0000
#include <internal/pycore_ceval.h>
#include <internal/pycore_debug_offsets.h>
#include <internal/pycore_interpframe_structs.h>
#elif PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#else
#include <frameobject.h>
#endif

#define P(field, value) printf("    .%s = %llu,\n", #field, (unsigned long long)(value))

#if PY_VERSION_HEX < 0x030B0000
/* 3.9/3.10: PyThreadState.frame -> PyFrameObject {f_back, f_code, f_lasti};
 * thread_id is the pthread_t (no native tid), co_name stands for the
 * qualname (none before 3.11), the line table is co_lnotab (3.9) or
 * co_linetable (3.10), the code object has no inline bytecode (its head is
 * the whole struct). The type sizes and ob_type let attach check the
 * target against this row. The GIL (_PyRuntime.ceval.gil, as 3.11) and
 * has_debug (0) are printed by main. */
static void frame_object_rows(void)
{
    P(is_threads_head, offsetof(PyInterpreterState, tstate_head));
    P(ts_next, offsetof(PyThreadState, next));
    P(ts_native_tid, offsetof(PyThreadState, thread_id));
    P(ts_frame, offsetof(PyThreadState, frame));
    P(frame_object, 1);
    P(fr_previous, offsetof(PyFrameObject, f_back));
    P(fr_code, offsetof(PyFrameObject, f_code));
    P(fr_instr, offsetof(PyFrameObject, f_lasti));
    P(owner_shim_min, 255);
    P(co_filename, offsetof(PyCodeObject, co_filename));
    P(co_qualname, offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX >= 0x030A0000
    P(co_linetable, offsetof(PyCodeObject, co_linetable));
#else
    P(co_linetable, offsetof(PyCodeObject, co_lnotab));
#endif
    P(co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
    P(co_code_adaptive, sizeof(PyCodeObject));
    P(ob_type, offsetof(PyObject, ob_type));
    P(tp_basicsize, offsetof(PyTypeObject, tp_basicsize));
    P(frame_size, sizeof(PyFrameObject));
    P(code_size, sizeof(PyCodeObject));
}
#endif

#if PY_VERSION_HEX < 0x030E0000
/* 3.9-3.13: the call site (sampling/site.h; frames.c, attach_site): the
 * code object's bytecode (3.11+ inline, ob_size code units; 3.9/3.10 the
 * co_code bytes object), the frame's value stack (3.11+ after its
 * co_nlocalsplus locals, 3.9/3.10 f_valuestack) and what names a C callee.
 * Not 3.14+, where the agent does not decide by the site either. */
static void site_rows(void)
{
    P(has_site, 1);
#if PY_VERSION_HEX >= 0x030B0000
    P(fr_localsplus, offsetof(_PyInterpreterFrame, localsplus));
    P(co_nlocalsplus, offsetof(PyCodeObject, co_nlocalsplus));
    P(co_units, offsetof(PyVarObject, ob_size));
    P(ob_type, offsetof(PyObject, ob_type)); /* 3.9/3.10 print it already */
#else
    P(fr_valuestack, offsetof(PyFrameObject, f_valuestack));
    P(co_code, offsetof(PyCodeObject, co_code));
#endif
    P(tp_name, offsetof(PyTypeObject, tp_name));
    P(tp_call, offsetof(PyTypeObject, tp_call));
    P(tp_flags, offsetof(PyTypeObject, tp_flags));
    P(cf_ml, offsetof(PyCFunctionObject, m_ml));
    P(cf_self, offsetof(PyCFunctionObject, m_self));
    P(cf_module, offsetof(PyCFunctionObject, m_module));
    P(ml_name, offsetof(PyMethodDef, ml_name));
    P(descr_type, offsetof(PyDescrObject, d_type));
    P(descr_method, offsetof(PyMethodDescrObject, d_method));
    P(meth_func, offsetof(PyMethodObject, im_func));
}
#endif

int main(void)
{
    printf("{\n");
    P(major, PY_MAJOR_VERSION);
    P(minor, PY_MINOR_VERSION);
    P(rt_interp_head, offsetof(_PyRuntimeState, interpreters.head));
#if PY_VERSION_HEX < 0x030B0000
    frame_object_rows();
#else
    P(is_threads_head, offsetof(PyInterpreterState, threads.head));
    P(ts_next, offsetof(PyThreadState, next));
    P(ts_native_tid, offsetof(PyThreadState, native_thread_id));
#if PY_VERSION_HEX >= 0x030D0000
    P(ts_frame, offsetof(PyThreadState, current_frame));
    P(cf_current, 0);
    P(has_cframe, 0);
    P(fr_code, offsetof(_PyInterpreterFrame, f_executable));
    P(fr_instr, offsetof(_PyInterpreterFrame, instr_ptr));
    P(instr_is_prev, 0);
#else
    P(ts_frame, offsetof(PyThreadState, cframe));
    P(cf_current, offsetof(_PyCFrame, current_frame));
    P(has_cframe, 1);
    P(fr_code, offsetof(_PyInterpreterFrame, f_code));
    P(fr_instr, offsetof(_PyInterpreterFrame, prev_instr));
    P(instr_is_prev, 1);
#endif
    P(fr_previous, offsetof(_PyInterpreterFrame, previous));
    P(fr_owner, offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX >= 0x030E0000
    P(owner_shim_min, FRAME_OWNED_BY_INTERPRETER);
#elif PY_VERSION_HEX >= 0x030C0000
    P(owner_shim_min, FRAME_OWNED_BY_CSTACK);
#else
    P(owner_shim_min, 255);
#endif
    P(co_filename, offsetof(PyCodeObject, co_filename));
    P(co_qualname, offsetof(PyCodeObject, co_qualname));
    P(co_linetable, offsetof(PyCodeObject, co_linetable));
    P(co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
    P(co_code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
#endif
#if PY_VERSION_HEX < 0x030E0000
    site_rows();
#endif
    P(bytes_size, offsetof(PyVarObject, ob_size));
    P(bytes_sval, offsetof(PyBytesObject, ob_sval));
    P(uni_length, offsetof(PyASCIIObject, length));
    P(uni_state, offsetof(PyASCIIObject, state));
    P(uni_ascii_size, sizeof(PyASCIIObject));
    P(uni_compact_size, sizeof(PyCompactUnicodeObject));
#if PY_VERSION_HEX >= 0x030C0000
    P(gil_in_interp, 1);
    P(gil_locked, offsetof(PyInterpreterState, _gil.locked));
    P(gil_holder, offsetof(PyInterpreterState, _gil.last_holder));
#else /* 3.9-3.11 */
    P(gil_in_interp, 0);
    P(gil_locked, offsetof(_PyRuntimeState, ceval.gil.locked));
    P(gil_holder, offsetof(_PyRuntimeState, ceval.gil.last_holder));
#endif
#if PY_VERSION_HEX >= 0x030D0000
#define D(field, path) P(field, offsetof(_Py_DebugOffsets, path))
    P(has_debug, 1);
    P(dbg_size, sizeof(_Py_DebugOffsets));
    D(dbg_version, version);
    D(dbg_rt_interp_head, runtime_state.interpreters_head);
    D(dbg_is_threads_head, interpreter_state.threads_head);
    D(dbg_ts_next, thread_state.next);
    D(dbg_ts_native_tid, thread_state.native_thread_id);
    D(dbg_ts_frame, thread_state.current_frame);
    D(dbg_fr_previous, interpreter_frame.previous);
    D(dbg_fr_code, interpreter_frame.executable);
    D(dbg_fr_instr, interpreter_frame.instr_ptr);
    D(dbg_fr_owner, interpreter_frame.owner);
    D(dbg_co_filename, code_object.filename);
    D(dbg_co_qualname, code_object.qualname);
    D(dbg_co_linetable, code_object.linetable);
    D(dbg_co_firstlineno, code_object.firstlineno);
    D(dbg_co_code_adaptive, code_object.co_code_adaptive);
    D(dbg_uni_length, unicode_object.length);
    D(dbg_uni_state, unicode_object.state);
    D(dbg_uni_ascii_size, unicode_object.asciiobject_size);
    D(dbg_gil_locked, interpreter_state.gil_runtime_state_locked);
    D(dbg_gil_holder, interpreter_state.gil_runtime_state_holder);
#if PY_VERSION_HEX >= 0x030E0000
    /* PEP 768 (sys.remote_exec): remote_exec.c writes where these say */
    P(has_rexec, 1);
    D(dbg_is_threads_main, interpreter_state.threads_main);
    D(dbg_rx_eval_breaker, debugger_support.eval_breaker);
    D(dbg_rx_support, debugger_support.remote_debugger_support);
    D(dbg_rx_enabled, debugger_support.remote_debugging_enabled);
    D(dbg_rx_pending, debugger_support.debugger_pending_call);
    D(dbg_rx_path, debugger_support.debugger_script_path);
    D(dbg_rx_path_size, debugger_support.debugger_script_path_size);
    P(rx_stop_bit, _PY_EVAL_PLEASE_STOP_BIT);
#else
    P(has_rexec, 0);
#endif
#else
    P(has_debug, 0);
#endif
    printf("},\n");
    return 0;
}
