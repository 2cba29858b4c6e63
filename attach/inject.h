/* inject: what `hotline attach PID --memory` needs to make a running
 * CPython (3.9+) run a few lines of Python, and the gdb script that does it
 * (docs/attach.md, "Memory: injecting the agent"). gdb is only the ptrace
 * driver: every address comes from here (ELF dynamic symbols plus the load
 * bias, as attach.c finds _PyRuntime), so gdb loads no symbols and no debug
 * information, and it never uses `call` (which saves and restores the whole
 * register file, and gdb 13 cannot write back the AMX-sized XSAVE area of
 * recent Intel CPUs: "Couldn't write extended state status").
 *
 * The script waits at a safe point, the entry of an allocator function
 * (malloc, free, ... PyObject_Malloc): there, by the x86-64 ABI, no vector
 * register is live and the stack is aligned, and no lock is held by that
 * thread. It saves the general registers, makes two calls by hand (mmap
 * for one private page that holds the code, then Py_AddPendingCall(
 * PyRun_SimpleString, page)), each returning to address 0 (a SIGSEGV that
 * gdb stops on and never delivers) and each followed at once by the
 * registers put back, and detaches. The interpreter runs the pending call
 * on its main thread at its next eval-breaker check, with the GIL held.
 * Nothing here uses libuv or jansson: inject_gdb.c runs gdb, inject_files.c
 * writes the script and its Python, injector.c drives the phases. */
#ifndef HOTLINE_INJECT_H
#define HOTLINE_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define INJECT_MAX_STOPS 8   /* function entries the script waits at */
#define INJECT_CODE_MAX 4000 /* bytes of Python (one page holds it, NUL included) */
#define INJECT_SCRIPT_MAX 65536

struct inject_target {
    pid_t pid;
    int major, minor;     /* 3, 9.. */
    char version[32];     /* "3.11.2", or "3.9" when only the file name says */
    char python[512];     /* the file with Py_AddPendingCall, as the target sees it */
    uint64_t add_pending; /* Py_AddPendingCall */
    uint64_t run_string;  /* PyRun_SimpleString */
    uint64_t mmap;        /* libc's */
    uint64_t stops[INJECT_MAX_STOPS];
    int nstops;
};

/* Find the interpreter and libc in pid and the addresses above: 0, or a
 * negative code with a sentence in why: -ESRCH (no such process, zombie),
 * -EPERM (attach.c's permission sentence), ATTACH_ENOTPY (no
 * Py_AddPendingCall anywhere), -ENOSYS (not x86-64, or no libc mmap). */
int inject_find(pid_t pid, struct inject_target *t, char *why, size_t n);

/* The gdb batch script that runs code (borrowed, <= INJECT_CODE_MAX bytes)
 * in t's process, into buf (cap n). Its output lines starting "HOTLINE "
 * say how far it got: "HOTLINE stopped" (at a safe point: the target is
 * changed from here), "HOTLINE page ADDR", "HOTLINE rc N" (the pending
 * call's result, 0 = queued). To give up the wait for a safe point, send
 * the target SIGURG: gdb stops on it without delivering it, sees no safe
 * point, prints "HOTLINE nostop", takes its breakpoints out and detaches
 * (killing gdb would leave its breakpoints in the target's code, which
 * then dies of SIGTRAP at its next malloc; gdb's own interrupt is a SIGINT
 * to gdb, which from another program than a terminal is a signal too).
 * Returns its length, or -E2BIG. */
int inject_script(const struct inject_target *t, const char *code, char *buf, size_t n);

/* A stopped target runs no queued call and takes no request until it is
 * continued: attach would wait out its timeout and then blame the target.
 * Said before anything touches it: 1 with the sentence in msg (SIGSTOP,
 * or a debugger's tracing stop), else 0. */
int inject_stopped(pid_t pid, char *msg, size_t n);

#endif
