/* remote_exec: PEP 768 from outside, what `sys.remote_exec(pid, script)`
 * does, in C, for `hotline attach PID --memory` on CPython 3.14+
 * (docs/attach.md, "Memory"). The target's _Py_DebugOffsets says where its
 * main thread's state keeps a script path, a pending flag and the eval
 * breaker; three writes with process_vm_writev (the path, the flag, then
 * the "please stop" bit of the breaker) make that thread run the script,
 * with the GIL, at its next eval-breaker check (a loop's back edge, a
 * call's return). Nothing is stopped, no code is written, no debugger: the
 * right needed is ptrace's, as for reading. A request the target has not
 * taken yet can be withdrawn (the flag cleared), which leaves the target as
 * it was. No libuv, no jansson (attach/injector.c drives it, with the
 * helpers at the end). */
#ifndef HOTLINE_REMOTE_EXEC_H
#define HOTLINE_REMOTE_EXEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach.h"

#define REXEC_EDISABLED (-1101) /* remote debugging is off in the target */

struct rexec {
    pid_t pid;
    uint64_t tstate;       /* the main thread's PyThreadState */
    uint64_t eval_breaker; /* address of its eval_breaker (uintptr_t) */
    uint64_t pending;      /* address of its debugger_pending_call (int32) */
    uint64_t path;         /* address of its debugger_script_path */
    uint64_t path_size;    /* that buffer's size, the NUL included */
    uint64_t stop_bit;     /* _PY_EVAL_PLEASE_STOP_BIT */
};

/* Where to write in ap (borrowed, attach_open'ed), from the target's own
 * _Py_DebugOffsets: 0, or a negative code with a sentence in why:
 * ATTACH_EVERSION (no PEP 768: before 3.14, or implausible offsets),
 * REXEC_EDISABLED (`-X disable-remote-debug`, PYTHON_DISABLE_REMOTE_DEBUG,
 * or a build --without-remote-debug), -EPERM (attach.c's permission
 * sentence), -ESRCH, ATTACH_ERACE (no main thread state yet). */
int rexec_find(const struct attach_proc *ap, struct rexec *r, char *why, size_t n);

/* Ask the target to run script (borrowed: an absolute path the target's
 * user can read, as the target sees it): the path with its NUL, then
 * debugger_pending_call = 1, then the stop bit or'ed into eval_breaker
 * (read-modify-write, as CPython's own sender does). 0, -ENAMETOOLONG
 * (over path_size - 1 bytes), -EPERM, -ESRCH, -EFAULT. */
int rexec_send(const struct rexec *r, const char *script);

/* Withdraw a request: 1 when it was still pending (now cleared, its path
 * emptied: the target will never run it), 0 when the target has taken it
 * already, negative on a failed read or write. The stop bit stays: at its
 * next check the target pauses for no stop-the-world and goes on. */
int rexec_withdraw(const struct rexec *r);

/* 1 while the request is pending (not taken yet), 0 once taken, negative
 * on a failed read. */
int rexec_pending(const struct rexec *r);

/* The PEP 768 phase of `hotline attach --memory`, for its driver: */

/* pid opened (attach_open) and its request's place found (rexec_find):
 * 0, or their negative code with a sentence in why. */
int rexec_open(pid_t pid, struct rexec *r, char *why, size_t n);

/* rexec_send, and a send that failed part-way taken back: 0, or its code
 * with a sentence in why (-EPERM: attach.c's permission sentence). */
int rexec_request(const struct rexec *r, const char *script, char *why, size_t n);

/* The agent did not come (what: "interrupted ...", "the agent did not
 * connect within 10 s"): the request withdrawn, and the sentence that
 * says where that leaves the target into msg (cap n). */
void rexec_give_up(const struct rexec *r, const char *what, char *msg, size_t n);

#endif
