/* layout.h: the offsets `hotline attach` needs to walk a CPython it does
 * not run in. One row per minor version (3.9-3.15, default GIL builds), the
 * committed attach/layouts/3.X.inc that gen_layout.c printed from that
 * version's headers (offsetof, no hand-copied numbers; attach/gen_layouts.sh
 * regenerates them, whatever the build machine has); for 3.13+ the values
 * are then replaced by the target's own _Py_DebugOffsets, read at the dbg_*
 * positions (attach.c; for 3.14+ also remote_exec.c, which writes where
 * they say). 3.9/3.10 rows describe the older frame objects (frame_object,
 * below). */
#ifndef HOTLINE_ATTACH_LAYOUT_H
#define HOTLINE_ATTACH_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

struct attach_layout {
    uint64_t major, minor;
    uint64_t rt_interp_head, is_threads_head;
    uint64_t ts_next, ts_native_tid, ts_frame;
    uint64_t has_cframe, cf_current; /* 3.11/3.12: ts_frame is a _PyCFrame * */
    uint64_t fr_previous, fr_code, fr_instr, fr_owner, owner_shim_min;
    uint64_t instr_is_prev; /* 3.11/3.12: prev_instr, not instr_ptr */
    uint64_t co_filename, co_qualname, co_linetable, co_firstlineno, co_code_adaptive;
    uint64_t bytes_size, bytes_sval;
    uint64_t uni_length, uni_state, uni_ascii_size, uni_compact_size;
    uint64_t gil_in_interp, gil_locked, gil_holder; /* from interp (3.12+) or _PyRuntime */
    uint64_t has_debug, dbg_size, dbg_version;
    uint64_t dbg_rt_interp_head, dbg_is_threads_head, dbg_ts_next, dbg_ts_native_tid, dbg_ts_frame;
    uint64_t dbg_fr_previous, dbg_fr_code, dbg_fr_instr, dbg_fr_owner;
    uint64_t dbg_co_filename, dbg_co_qualname, dbg_co_linetable, dbg_co_firstlineno,
        dbg_co_code_adaptive;
    uint64_t dbg_uni_length, dbg_uni_state, dbg_uni_ascii_size, dbg_gil_locked, dbg_gil_holder;
    /* 3.14+ (PEP 768, attach/remote_exec.c): where _Py_DebugOffsets keeps
     * the main thread and debugger_support, and the eval-breaker bit */
    uint64_t has_rexec, dbg_is_threads_main, dbg_rx_eval_breaker, dbg_rx_support, dbg_rx_enabled,
        dbg_rx_pending, dbg_rx_path, dbg_rx_path_size, rx_stop_bit;
    /* 3.9/3.10: frames are PyFrameObjects. Then ts_native_tid is
     * PyThreadState.thread_id (a pthread_t: attach.c reads glibc's tid in
     * it), fr_previous/fr_code/fr_instr are f_back/f_code/f_lasti (an int:
     * a byte offset on 3.9, an instruction index on 3.10), co_qualname is
     * co_name (there is no qualname), co_linetable is co_lnotab on 3.9 and
     * co_code_adaptive is sizeof(PyCodeObject) (the head read; no inline
     * bytecode); fr_owner is unused. The rest checks the target against the
     * row: PyObject.ob_type, PyTypeObject.tp_basicsize and the sizes
     * PyFrame_Type and PyCode_Type must report. */
    uint64_t frame_object, ob_type, tp_basicsize, frame_size, code_size;
    /* 3.9-3.13 (has_site): the call site (frames.c, attach_site). The
     * value stack: 3.11+ at fr_localsplus + co_nlocalsplus pointers, the
     * bytecode ob_size (co_units) code units at co_code_adaptive; 3.9/3.10
     * at the frame's f_valuestack (fr_valuestack), the bytecode in the
     * bytes object co_code. Then what names a C callee: PyTypeObject's
     * tp_name, tp_call, tp_flags; PyCFunctionObject's m_ml, m_self,
     * m_module; PyMethodDef.ml_name; PyDescrObject.d_type,
     * PyMethodDescrObject.d_method; PyMethodObject.im_func; and (3.11+,
     * which the 3.9/3.10 rows have already) PyObject.ob_type. */
    uint64_t has_site, fr_localsplus, co_nlocalsplus, co_units, fr_valuestack, co_code;
    uint64_t tp_name, tp_call, tp_flags, cf_ml, cf_self, cf_module, ml_name, descr_type,
        descr_method, meth_func;
};

/* The generated rows (borrowed, static) and their count. */
extern const struct attach_layout attach_layouts[];
extern const size_t attach_nlayouts;

#endif
