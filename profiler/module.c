/* module.c: _hotline_agent._agent, the Python face of the agent.
 *
 * The pure-Python package (python/_hotline_agent/__init__.py) parses the config,
 * builds the hello line and calls start(); stop() is registered with atexit
 * so that the end message goes out before the interpreter is torn down.
 * The one piece of global state is g_agent, the running agent of this
 * process (the agent is per process by nature); it is touched only with the
 * GIL held. After fork the child abandons the parent's agent without
 * touching its tables (the sampler thread may have been mid-update) and
 * starts a fresh one.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "agent.h"
#include "agent_buf.h"
#include "aggregate.h"
#include "cells.h"
#include "clock.h"
#include "memhooks.h"
#include "memread.h"
#include "nvml.h"
#include "ownfd.h"
#include "sampler.h"
#include "walk.h"
#include "wire.h"
#include "site.h"
#include "agent_config.h"
#include "agent_keys.h"
#include "linetable.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static agent_t *g_agent;       /* the one agent of this process, GIL-protected */
static unsigned long g_serial; /* starts so far (GIL): names an agent in a pending call */

/* The signal PR_SET_PDEATHSIG sends the program's main process in LSP mode:
 * a real-time signal that programs leave alone, handled by on_server_death. */
#define AGENT_SERVER_DEATH_SIG (SIGRTMAX - 2)

/* Signal handler (async-signal-safe: kill only). The server died: kill the
 * program's whole process group, so that children that are not Python (a
 * `sleep` started through subprocess) go too, not only this process. */
static void on_server_death(int sig)
{
    (void)sig;
    kill(0, SIGKILL);
}

/* LSP mode, started by the server itself: die with it. The server made this
 * process the leader of its own session and process group (setsid, in
 * session.c), so the whole group goes; a child that left the group (setsid,
 * start_new_session) escapes, as it would from any tool. Anywhere else
 * (not a group leader: run by hand or by a test under the same flag) only
 * this process goes, as before. Re-checks the parent after arming: the
 * server may have died just before. */
static void arm_server_death(agent_t *a, long long server_pid)
{
    int group = getpgrp() == getpid() && getsid(0) == getpid();
    a->kill_group = group;
    int sig = SIGKILL;
    if (group) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_server_death;
        sigemptyset(&sa.sa_mask);
        if (sigaction(AGENT_SERVER_DEATH_SIG, &sa, NULL) == 0) sig = AGENT_SERVER_DEATH_SIG;
    }
    prctl(PR_SET_PDEATHSIG, sig);
    if ((long long)getppid() != server_pid) kill(sig == SIGKILL ? getpid() : 0, SIGKILL);
}

static void strv_free(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void agent_free(agent_t *a)
{
    agg_free(a);
    walk_free(a);
    agent_buf_free(&a->out);
    for (int i = 0; i < a->nth; i++) {
        ownfd_close(&a->th[i]->schedfd);
        ownfd_close(&a->th[i]->statfd);
        free(a->th[i]);
    }
    free(atomic_exchange(&a->role, NULL));
    free(a->seen);
    free(a->seen_prev);
    free(a->site_hist);
    free(a->listed);
    strv_free(a->include, a->ninclude);
    strv_free(a->exclude, a->nexclude);
    free(a->hello);
    Py_XDECREF((PyObject *)a->release_cb); /* every caller holds the GIL */
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    free(a);
}

/* New strdup'ed vector from a Python sequence of str, or NULL with error. */
static char **strv_from(PyObject *seq, int *n)
{
    PyObject *fast = PySequence_Fast(seq, "include/exclude must be a sequence of str");
    if (!fast) return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len > 4096) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "too many patterns");
        return NULL;
    }
    char **v = calloc((size_t)len + 1, sizeof *v);
    for (Py_ssize_t i = 0; v && i < len; i++) {
        const char *s = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
        if (!s || !(v[i] = strdup(s))) {
            strv_free(v, (int)i);
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_NoMemory();
            return NULL;
        }
    }
    Py_DECREF(fast);
    if (!v) PyErr_NoMemory();
    *n = (int)len;
    return v;
}

/* Pending call (main thread, GIL held): unload the agent whose sampler
 * ended because `hotline attach --memory` let go (arg: its serial; another
 * agent, or none, means hotline.stop() or exit got there first). Sampler
 * joined, memory hooks disarmed, then the Python side's on_release. Never
 * leaves an exception set: the eval loop would raise it in the program. */
static int unload_pending(void *arg)
{
    agent_t *a = g_agent;
    if (!a || a->serial != (unsigned long)(uintptr_t)arg) return 0;
    g_agent = NULL;
    Py_BEGIN_ALLOW_THREADS sampler_stop(a, "stop");
    Py_END_ALLOW_THREADS if (a->memory) mem_stop(a);
    PyObject *cb = a->release_cb; /* new reference, now ours */
    a->release_cb = NULL;
    agent_free(a);
    if (cb) {
        PyObject *r = PyObject_CallObject(cb, NULL);
        Py_XDECREF(r);
        Py_DECREF(cb);
    }
    PyErr_Clear();
    return 0;
}

/* a->on_own_end (sampler thread, no GIL): queue unload_pending. The queue
 * has ~32 places shared with the program's own pending calls: retry a
 * while when it is full; past that the agent stays loaded, idle.
 *
 * Before 3.13, Py_AddPendingCall sets the eval breaker only when the thread
 * that calls it may run pending calls (the main thread): from ours the call
 * waits until the main thread next takes the GIL back and recomputes its
 * breaker. A program whose main thread never lets the GIL go (a pure-Python
 * loop, no I/O, no other thread) then never ran it: detached, it kept the
 * memory hooks for good (an int loop stayed at 0.76x with the wrappers).
 * Asking for the GIL once makes the main thread look at its breaker: it
 * runs the pending call there (before it hands the GIL over), whose
 * sampler_stop lets the GIL go while it joins us. The program is not
 * finalizing yet: its exit stops the agent (hotline.stop() at exit), which
 * joins this thread with the GIL released, before any thread must exit. */
static void schedule_unload(agent_t *a)
{
    for (int i = 0; i < 100; i++) {
        if (Py_AddPendingCall(unload_pending, (void *)(uintptr_t)a->serial) == 0) {
#if PY_VERSION_HEX < 0x030D0000
            PyGILState_STATE st = PyGILState_Ensure();
            PyGILState_Release(st);
#endif
            return;
        }
        usleep(20000);
    }
}

/* The hello line Python wrote (a JSON object), with "mono0": where the
 * agent's ts 0 is on CLOCK_MONOTONIC, which every process of the host
 * shares, so that the server puts a program's processes on one timeline
 * (server/store/timeline.h). New string, or NULL on ENOMEM. */
static char *hello_with_mono0(const char *hello, double t0)
{
    size_t n = strlen(hello);
    while (n && (hello[n - 1] == ' ' || hello[n - 1] == '\n'))
        n--;
    if (!n || hello[n - 1] != '}' || n < 3) return strdup(hello); /* not ours to edit */
    char tail[64];
    int k = snprintf(tail, sizeof tail, ",\"%s\":%.6f}", agent_key_name(AGENT_KEY_MONO0), t0);
    char *out = malloc(n + (size_t)k);
    if (!out) return NULL;
    memcpy(out, hello, n - 1);
    memcpy(out + n - 1, tail, (size_t)k + 1);
    return out;
}

static PyObject *py_start(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {
        "hello",           "path",        "socket",          "interval_ms", "include",
        "exclude",         "profile_all", "die_with_server", "server_pid",  "memory",
        "mem_interval_kb", "gpu",         "on_release",      "all_threads", NULL};
    const char *hello, *path;
    int is_socket = 1, profile_all = 0, die_with_server = 0;
    long long server_pid = 0;
    int memory = 0, gpu = 1, all_threads = 0;
    double mem_kb = 64;
    double interval_ms = AGENT_INTERVAL_DEFAULT_MS;
    PyObject *inc = NULL, *exc = NULL, *on_release = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|pdOOppLpdpOp", kwlist, &hello, &path, &is_socket,
                                     &interval_ms, &inc, &exc, &profile_all, &die_with_server,
                                     &server_pid, &memory, &mem_kb, &gpu, &on_release,
                                     &all_threads))
        return NULL;
    if (on_release == Py_None) on_release = NULL;
    if (on_release && !PyCallable_Check(on_release)) {
        PyErr_SetString(PyExc_TypeError, "on_release must be callable");
        return NULL;
    }
    /* the server checks the same range (agent_config.h): no silent default */
    if (!(interval_ms >= AGENT_INTERVAL_MIN_MS && interval_ms <= AGENT_INTERVAL_MAX_MS)) {
        char msg[96]; /* PyErr_Format has no %g */
        snprintf(msg, sizeof msg, "interval_ms must be %g..%g (milliseconds), not %g",
                 AGENT_INTERVAL_MIN_MS, AGENT_INTERVAL_MAX_MS, interval_ms);
        PyErr_SetString(PyExc_ValueError, msg);
        return NULL;
    }
    if (g_agent) {
        PyErr_SetString(PyExc_RuntimeError, "hotline agent already running");
        return NULL;
    }
    int r = mem_check();
    if (r != 0) {
        errno = -r;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    char why[256];
    if (walk_layout_check(why, sizeof why) != 0) {
        PyErr_Format(PyExc_RuntimeError, "hotline agent: %s", why);
        return NULL;
    }
    agent_t *a = calloc(1, sizeof *a);
    if (!a) return PyErr_NoMemory();
    a->fd.fd = -1;
    a->interval_s = interval_ms / 1000.0;
    a->profile_all = profile_all;
    a->all_threads = all_threads;
    a->die_with_server = die_with_server;
    a->serial = ++g_serial;
    if (on_release) { /* attached: the server's "stop" or its going unloads us */
        Py_INCREF(on_release);
        a->release_cb = on_release;
        a->on_own_end = schedule_unload;
    }
    const char *shared = getenv("HOTLINE_SHARED_FDS"); /* test hook: the fallback path */
    a->shared_table = shared && !strcmp(shared, "1");
    if (die_with_server) wire_server_init(a, (long)server_pid);
    if (die_with_server && server_pid > 0 && (long long)getppid() == server_pid)
        arm_server_death(a, server_pid); /* started by the server itself: die with it */
    a->interp = PyInterpreterState_Get();
    a->t0 = clock_mono();
    a->tid_off = walk_tid_offset();
    walk_gil_init(a);
    a->hello = hello_with_mono0(hello, a->t0);
    a->codes = calloc(AGENT_CODE_SLOTS, sizeof *a->codes);
    a->snap = calloc(1, sizeof *a->snap); /* NULL: walk_stack reads one piece at a time */
    a->site_hist = calloc(SITE_HIST_SLOTS, sizeof *a->site_hist);
    a->out.max = AGENT_OUT_HARD;
    a->lines.maxrows = AGENT_MAX_LINES;
    a->funcs.maxrows = AGENT_MAX_FUNCS;
    a->threads.maxrows = 65536;
    a->stacks.maxrows = AGENT_MAX_STACKS;
    a->stack_w.maxrows = AGENT_MAX_STACK_W;
    if (inc && inc != Py_None && !(a->include = strv_from(inc, &a->ninclude))) goto fail;
    if (exc && exc != Py_None && !(a->exclude = strv_from(exc, &a->nexclude))) goto fail;
    if (!a->hello || !a->codes || !a->site_hist) {
        PyErr_NoMemory();
        goto fail;
    }
    r = wire_open(a, path, is_socket);
    if (r != 0) {
        errno = -r;
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
        goto fail;
    }
    /* hello: written by Python (_config.py), with the keys agent_emit_hello writes */
    agent_buf_add(&a->out, a->hello, strlen(a->hello));
    agent_buf_add(&a->out, "\n", 1);
    wire_flush(a);
    if (memory && mem_start(a, mem_kb) != 0) memory = 0; /* no tables: time profiling only */
    a->memory = memory;
    a->gpu = gpu;
    r = sampler_start(a);
    if (r != 0) {
        if (memory) mem_stop(a);
        wire_close(a);
        errno = -r;
        PyErr_SetFromErrno(PyExc_OSError);
        goto fail;
    }
    g_agent = a;
    Py_RETURN_NONE;
fail:
    agent_free(a);
    return NULL;
}

static PyObject *py_stop(PyObject *self, PyObject *args)
{
    (void)self;
    const char *reason = "stop";
    if (!PyArg_ParseTuple(args, "|s", &reason)) return NULL;
    agent_t *a = g_agent;
    if (!a) Py_RETURN_NONE;
    g_agent = NULL;
    Py_BEGIN_ALLOW_THREADS sampler_stop(a, reason);
    Py_END_ALLOW_THREADS if (a->memory) mem_stop(a);
    agent_free(a);
    Py_RETURN_NONE;
}

/* In a forked child: the parent's sampler thread does not exist here and
 * its tables may be half-written; keep them (leaked, copy-on-write pages)
 * and only close the parent's connection. */
static PyObject *py_forget(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    agent_t *a = g_agent;
    g_agent = NULL;
    mem_after_fork();
    cells_after_fork();
    if (a) ownfd_close(&a->fd); /* only if the program did not close it already */
    Py_RETURN_NONE;
}

/* hotline/_cells.py's thread: cell files the sampler met with no mapping
 * (a list, empty after timeout seconds), waited for without the GIL. */
static PyObject *py_cell_files(PyObject *self, PyObject *args)
{
    (void)self;
    double timeout = 1.0;
    if (!PyArg_ParseTuple(args, "|d", &timeout)) return NULL;
    char **names = NULL;
    int n;
    Py_BEGIN_ALLOW_THREADS n = cells_wait(timeout, &names);
    Py_END_ALLOW_THREADS if (n < 0) return PyErr_NoMemory();
    PyObject *out = PyList_New(0);
    for (int i = 0; out && i < n; i++) {
        PyObject *s = PyUnicode_DecodeFSDefault(names[i]);
        if (!s || PyList_Append(out, s) != 0) Py_CLEAR(out);
        Py_XDECREF(s);
    }
    cells_free_names(names, n);
    return out;
}

/* cell_map(cell_file, notebook_file or None, delta): the answer. */
static PyObject *py_cell_map(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *from_o, *to_o;
    int delta = 0;
    if (!PyArg_ParseTuple(args, "O&O|i", PyUnicode_FSConverter, &from_o, &to_o, &delta))
        return NULL;
    PyObject *to_b = NULL;
    if (to_o != Py_None && !PyUnicode_FSConverter(to_o, &to_b)) {
        Py_DECREF(from_o);
        return NULL;
    }
    int rc = cells_set(PyBytes_AS_STRING(from_o), to_b ? PyBytes_AS_STRING(to_b) : NULL, delta);
    Py_DECREF(from_o);
    Py_XDECREF(to_b);
    if (rc == -ENOSPC)
        return PyErr_Format(PyExc_OverflowError, "more than %d notebook cells mapped", CELLS_MAX);
    if (rc < 0) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* What this process is in a larger job (hotline.dask, hotline.ray): sent
 * as a `role` message by the sampler thread with its next delta. */
static PyObject *py_set_role(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
    if (!name[0]) {
        PyErr_SetString(PyExc_ValueError, "set_role: an empty name");
        return NULL;
    }
    agent_t *a = g_agent;
    if (!a) Py_RETURN_FALSE;
    char *s = strdup(name);
    if (!s) return PyErr_NoMemory();
    free(atomic_exchange(&a->role, s));
    Py_RETURN_TRUE;
}

/* mark(line) and tee(path or None): sampler_request, without the GIL (a
 * stop meanwhile waits for us: sampler_stop). OSError when it failed. */
static PyObject *request(int kind, const char *arg)
{
    agent_t *a = g_agent;
    if (!a) {
        PyErr_SetString(PyExc_RuntimeError, "hotline agent not running");
        return NULL;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = sampler_request(a, kind, arg, 5.0);
    Py_END_ALLOW_THREADS if (rc)
    {
        errno = -rc;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    Py_RETURN_NONE;
}

static PyObject *py_mark(PyObject *self, PyObject *args)
{
    (void)self;
    const char *line;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "s#", &line, &n)) return NULL;
    if (n < 2 || line[0] != '{' || line[n - 1] != '}' || memchr(line, '\n', (size_t)n)) {
        PyErr_SetString(PyExc_ValueError, "mark: one JSON object on one line");
        return NULL;
    }
    return request(SAMPLER_REQ_MARK, line);
}

static PyObject *py_tee(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path = NULL;
    if (!PyArg_ParseTuple(args, "z", &path)) return NULL;
    return request(SAMPLER_REQ_TEE, path);
}

static PyObject *py_running(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return PyBool_FromLong(g_agent && atomic_load(&g_agent->alive));
}

static PyObject *py_stats(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    agent_t *a = g_agent;
    if (!a) Py_RETURN_NONE;
    /* racy reads of counters, good enough for a measurement */
    mem_win_stats_t w;
    mem_window_stats(&w);
    return Py_BuildValue(
        "{s:K,s:K,s:d,s:i,s:K,s:K,s:K,s:K,s:K,s:K,s:i,s:i,s:s,s:i,s:K,s:d,s:d,s:d,s:d,s:d,s:K,s:K,"
        "s:d}",
        "ticks", (unsigned long long)a->ticks, "thread_samples",
        (unsigned long long)a->thread_samples, "cost_s", a->cost_s, "mem_errors", a->mem_errors,
        "probe_py", (unsigned long long)a->probe_stats[0], "probe_nat",
        (unsigned long long)a->probe_stats[1], "probe_idle", (unsigned long long)a->probe_stats[2],
        "site_py", (unsigned long long)a->site_stats[0], "site_nat",
        (unsigned long long)a->site_stats[1], "site_none", (unsigned long long)a->site_stats[2],
        "memory", a->memory, "shim", mem_shim_loaded(), "mem_mode", mem_mode(), "gpu",
        gpu_available(), "win_n", (unsigned long long)w.n, "win_len_ms", w.len_mean * 1e3,
        "win_span_ms", w.span_mean * 1e3, "win_span_max_ms", w.span_max * 1e3, "call_cost_ns",
        w.call_cost * 1e9, "late_max_ms", a->late_max * 1e3, "asleep_reuse",
        (unsigned long long)a->asleep_reuse, "snap_fills",
        (unsigned long long)(a->snap ? a->snap->fills : 0), "emit_cost_s", a->emit_cost_s);
}

/* Test hook: our decoder on a code object's own table (no sampling). */
static PyObject *py_addr2line(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer tab;
    int first;
    long addr;
    if (!PyArg_ParseTuple(args, "y*il", &tab, &first, &addr)) return NULL;
#if PY_VERSION_HEX >= 0x030B0000
    int fmt = LT_LOCATIONS;
#elif PY_VERSION_HEX >= 0x030A0000
    int fmt = LT_LINETABLE310;
#else
    int fmt = LT_LNOTAB;
#endif
    int line = lt_line(fmt, tab.buf, (size_t)tab.len, first, addr);
    int last = lt_last_line(fmt, tab.buf, (size_t)tab.len, first);
    PyBuffer_Release(&tab);
    return Py_BuildValue("(ii)", line, last);
}

/* set_opcodes(classes, caches, bases, flags, layouts, jump_bytes): this
 * interpreter's opcode tables for the call-site decision (sampling/site.h),
 * 256 bytes each, built by _hotline_agent._opcodes from dis/opcode. Before
 * start(): code objects classed without them have no sites (the probe
 * decides alone). */
static PyObject *py_set_opcodes(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer t[5];
    int jump_bytes = 0;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*p", &t[0], &t[1], &t[2], &t[3], &t[4], &jump_bytes))
        return NULL;
    int ok = 1;
    for (int i = 0; i < 5; i++)
        ok &= t[i].len == 256;
    if (ok) {
        site_ops_t ops;
        memcpy(ops.cls, t[0].buf, 256);
        memcpy(ops.caches, t[1].buf, 256);
        memcpy(ops.base, t[2].buf, 256);
        memcpy(ops.flags, t[3].buf, 256);
        memcpy(ops.call, t[4].buf, 256);
        ops.jump_bytes = jump_bytes;
        walk_set_ops(&ops);
    }
    for (int i = 0; i < 5; i++)
        PyBuffer_Release(&t[i]);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "set_opcodes: five tables of 256 bytes");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* _site_units(code) -> [(class, depth, oparg, layout)] per code unit: test
 * hook for the call-site analysis (tests/profiler/test_sites.py). */
static PyObject *py_site_units(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *code;
    if (!PyArg_ParseTuple(args, "O!", &PyCode_Type, &code)) return NULL;
    size_t n = 0;
    site_unit_t *u = walk_code_units((uintptr_t)code, &n);
    if (!u) Py_RETURN_NONE;
    PyObject *out = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; out && i < n; i++) {
        PyObject *t = Py_BuildValue("(iiIi)", u[i].cls, u[i].depth, u[i].oparg, u[i].call);
        if (!t) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, t);
    }
    free(u);
    return out;
}

/* _site_here() -> (class, callee): walk_site on the calling thread, whose
 * innermost frame is at the call of this very function (test hook). */
static PyObject *py_site_here(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    agent_t *a = calloc(1, sizeof *a);
    if (!a || !(a->codes = calloc(AGENT_CODE_SLOTS, sizeof *a->codes))) {
        free(a);
        return PyErr_NoMemory();
    }
    a->profile_all = 1;
    walk_site_t ws;
    walk_site(a, (uintptr_t)PyThreadState_Get(), &ws);
    walk_free(a);
    agg_free(a);
    free(a->file_flag);
    free(a);
    return Py_BuildValue("(is)", ws.cls, ws.callee);
}

static PyMethodDef methods[] = {
    {"_site_here", py_site_here, METH_NOARGS,
     "_site_here() -> (class, callee): the call-site reading of this call (test hook)"},
    {"_site_units", py_site_units, METH_VARARGS,
     "_site_units(code) -> [(class, depth, oparg, layout)]: test hook of the call-site analysis"},
    {"set_opcodes", py_set_opcodes, METH_VARARGS,
     "set_opcodes(classes, caches): opcode tables of the call-site decision (site.h)"},
    {"_addr2line", py_addr2line, METH_VARARGS,
     "_addr2line(table, firstlineno, addr) -> (line, last): test hook for the decoders"},
    {"start", (PyCFunction)(void (*)(void))py_start, METH_VARARGS | METH_KEYWORDS,
     "start(hello, path, socket=True, interval_ms=10, include=None, exclude=None, "
     "profile_all=False, die_with_server=False, server_pid=0, memory=False, "
     "mem_interval_kb=64, gpu=True, on_release=None, all_threads=False)"},
    {"stop", py_stop, METH_VARARGS, "stop(reason='stop'): last delta, end, close"},
    {"forget", py_forget, METH_NOARGS, "drop the parent's agent in a forked child"},
    {"is_running", py_running, METH_NOARGS, "sampler thread alive"},
    {"set_role", py_set_role, METH_VARARGS,
     "set_role(name) -> bool: what this process is in a job (a `role` message); False: no agent"},
    {"mark", py_mark, METH_VARARGS,
     "mark(line): after a delta of what ran so far, one JSON object line into the stream"},
    {"tee", py_tee, METH_VARARGS,
     "tee(path or None): also write the stream to path from now on (after the string "
     "table so far); None stops and closes it"},
    {"stats", py_stats, METH_NOARGS, "sampler counters"},
    {"cell_files", py_cell_files, METH_VARARGS,
     "cell_files(timeout=1.0) -> [name]: notebook cell files met with no mapping"},
    {"cell_map", py_cell_map, METH_VARARGS,
     "cell_map(cell_file, notebook_file or None, delta=0): lines of the cell + delta"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT,
                                    "_agent",
                                    "Hotline sampling agent (native)",
                                    -1,
                                    methods,
                                    NULL,
                                    NULL,
                                    NULL,
                                    NULL};

__attribute__((visibility("default"))) PyMODINIT_FUNC PyInit__agent(void)
{
    return PyModule_Create(&moddef);
}
