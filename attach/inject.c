/* inject: addresses and the gdb script for `hotline attach --memory`
 * (inject.h says how and why this way). */
#include "inject.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "elfsym.h"
#include "procfs.h"

#define INJECT_MAX_FILES 64

static const char *base_name(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

static int is_libc(const char *path)
{
    const char *b = base_name(path);
    return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) || !strncmp(b, "ld-musl", 7);
}

/* The mapped files that may hold what inject_find looks for (attach__mappings'
 * keep): the executable (a static python, or a program that embeds one),
 * any libpython or python binary, and libc. Only those: a program with many
 * extension modules and mapped files (marimo's kernel) maps more than
 * INJECT_MAX_FILES, and libc, mapped before them and so above them in the
 * address space, came after the cap: "no mmap found in its C library". */
static int may_hold(const char *path, const char *exe)
{
    const char *b = base_name(path);
    return !strcmp(path, exe) || is_libc(path) || !strncmp(b, "libpython", 9) ||
           !strncmp(b, "python", 6);
}

/* names[0..k) of one mapped file, as addresses in the target (0: absent) */
static int lookup(pid_t pid, const struct attach__mapping *m, const char *const *names,
                  uint64_t *vals, int k)
{
    char file[PATH_MAX];
    uint64_t load;
    if (snprintf(file, sizeof file, "/proc/%d/root%s", (int)pid, m->path) >= (int)sizeof file)
        return -ENAMETOOLONG;
    int rc = elfsym_lookup(file, names, vals, k, &load);
    if (rc) return rc;
    for (int i = 0; i < k; i++)
        if (vals[i]) vals[i] += m->base - load;
    return 0;
}

static void add_stop(struct inject_target *t, uint64_t a)
{
    for (int i = 0; i < t->nstops; i++)
        if (t->stops[i] == a) return;
    if (a && t->nstops < INJECT_MAX_STOPS) t->stops[t->nstops++] = a;
}

int inject_find(pid_t pid, struct inject_target *t, char *why, size_t n)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
#ifndef __x86_64__
    snprintf(why, n, "--memory injection is built for x86-64 only");
    return -ENOSYS;
#endif
    int alive = procfs_alive(NULL, pid, why, n);
    if (alive < 0) return alive;
    struct attach__mapping *m = calloc(INJECT_MAX_FILES, sizeof *m);
    if (!m) return -ENOMEM;
    int nm = attach__mappings(pid, m, INJECT_MAX_FILES, may_hold);
    if (nm < 0) {
        free(m);
        if (nm == -EACCES || nm == -EPERM) return attach__perm_message(pid, why, n);
        snprintf(why, n, "no such process: %d", (int)pid);
        return -ESRCH;
    }
    static const char *const py_names[] = {
        "Py_AddPendingCall", "PyRun_SimpleString", "Py_Version", "PyObject_Malloc",
        "PyObject_Free",     "PyMem_Malloc",       "PyMem_Free", "_PyRuntime"};
    static const char *const libc_names[] = {"mmap", "malloc", "calloc", "realloc", "free"};
    uint64_t libc[5] = {0}, pystops[8] = {0};
    int rc = 0;
    for (int i = 0; i < nm; i++) {
        if (is_libc(m[i].path) && !libc[0]) lookup(pid, &m[i], libc_names, libc, 5);
        if (t->add_pending) continue;
        uint64_t v[8] = {0};
        if (lookup(pid, &m[i], py_names, v, 8) || !v[0] || !v[1]) continue;
        t->add_pending = v[0];
        t->run_string = v[1];
        snprintf(t->python, sizeof t->python, "%s", m[i].path);
        uint32_t hex = 0;
        if (v[2]) { /* 3.11+: the version the interpreter says */
            rc = attach_read(pid, v[2], &hex, sizeof hex);
            if (rc == -EPERM) {
                free(m);
                return attach__perm_message(pid, why, n);
            }
        } else if (v[7]) { /* 3.9/3.10: the file name; still prove we may read it */
            uint8_t b;
            if (attach_read(pid, v[7], &b, 1) == -EPERM) {
                free(m);
                return attach__perm_message(pid, why, n);
            }
        }
        if (hex) {
            t->major = (int)(hex >> 24);
            t->minor = (int)((hex >> 16) & 255);
            snprintf(t->version, sizeof t->version, "%d.%d.%d", t->major, t->minor,
                     (int)((hex >> 8) & 255));
        } else {
            int mi = attach__minor_from_name(m[i].path);
            if (mi < 0) mi = attach__minor_from_name(m[0].path);
            t->major = mi < 0 ? 0 : 3;
            t->minor = mi < 0 ? 0 : mi;
            snprintf(t->version, sizeof t->version, mi < 0 ? "unknown" : "3.%d", mi);
        }
        memcpy(pystops, v, sizeof v);
    }
    if (!t->add_pending) {
        snprintf(why, n,
                 "process %d is not a Python process (no Py_AddPendingCall in its "
                 "executable or a library)",
                 (int)pid);
        free(m);
        return ATTACH_ENOTPY;
    }
    if (!libc[0]) /* a fully static interpreter: libc is in it */
        for (int i = 0; i < nm && !libc[0]; i++)
            if (!strcmp(m[i].path, t->python)) lookup(pid, &m[i], libc_names, libc, 5);
    free(m);
    if (!libc[0]) {
        snprintf(why, n, "process %d: no mmap found in its C library", (int)pid);
        return -ENOSYS;
    }
    t->mmap = libc[0];
    /* the C allocator first: every Python calls it; PyObject_Malloc & co.
     * are mostly inlined in an LTO build, yet any stop is as good */
    for (int k = 1; k < 5; k++)
        add_stop(t, libc[k]);
    for (int k = 3; k <= 6; k++)
        add_stop(t, pystops[k]);
    return 0;
}

struct out {
    char *p;
    size_t n, len;
    int over;
};

static void put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(o->p + o->len, o->len < o->n ? o->n - o->len : 0, fmt, ap);
    va_end(ap);
    if (w < 0 || o->len + (size_t)w >= o->n)
        o->over = 1;
    else
        o->len += (size_t)w;
}

/* the registers a call may change (the ABI's caller-saved ones), saved
 * once at the stop and put back after each call */
static const char *const saved_regs[] = {"rip", "rsp", "rax", "rcx", "rdx", "rsi",
                                         "rdi", "r8",  "r9",  "r10", "r11", "eflags"};
#define NSAVED (sizeof saved_regs / sizeof *saved_regs)

/* One call by hand: pc first (gdb re-reads the frame once sp moves), the
 * stack below the red zone, aligned, with return address 0; then run to
 * the SIGSEGV at 0 and put every register back before anything else. */
static void hand_call(struct out *o, uint64_t fn, const char *const *args, int nargs)
{
    static const char *const argregs[] = {"rdi", "rsi", "rdx", "rcx", "r8", "r9"};
    put(o, "set $pc = %llu\n", (unsigned long long)fn);
    put(o, "set $rsp = $h_sp\n");
    put(o, "set {long}$h_sp = 0\n");
    for (int i = 0; i < nargs && i < 6; i++)
        put(o, "set $%s = %s\n", argregs[i], args[i]);
    put(o, "set $rax = 0\n");
    put(o, "continue\n");
    put(o, "set $h_ret = $rax\n");
    put(o, "set $h_at = (long)$pc\n");
    put(o, "set $pc = $h_rip\n");
    for (size_t i = 1; i < NSAVED; i++)
        put(o, "set $%s = $h_%s\n", saved_regs[i], saved_regs[i]);
}

int inject_script(const struct inject_target *t, const char *code, char *buf, size_t n)
{
    size_t cl = strlen(code);
    if (cl > INJECT_CODE_MAX) return -E2BIG;
    struct out o = {buf, n, 0, 0};
    put(&o, "set pagination off\nset confirm off\nset width 0\n");
    /* the program's own signals go through untouched while we wait */
    put(&o, "handle all nostop noprint pass\nhandle SIGINT nostop noprint pass\n");
    put(&o, "handle SIGSEGV stop print nopass\n");
    /* the caller's way to end the wait (inject.h): a SIGURG to the target
     * stops gdb and never reaches the program */
    put(&o, "handle SIGURG stop print nopass\n");
    for (int i = 0; i < t->nstops; i++)
        put(&o, "break *%llu\n", (unsigned long long)t->stops[i]);
    put(&o, "continue\ndelete\nif ");
    for (int i = 0; i < t->nstops; i++)
        put(&o, "%s(long)$pc == %llu", i ? " || " : "", (unsigned long long)t->stops[i]);
    put(&o, "\n");
    put(&o, "printf \"HOTLINE stopped %%d %%#lx\\n\", $_thread, (long)$pc\n");
    for (size_t i = 0; i < NSAVED; i++)
        put(&o, "set $h_%s = $%s\n", saved_regs[i], saved_regs[i]);
    put(&o, "set $h_sp = (((long)$h_rsp - 256) & ~15) - 8\n");
    static const char *const mmap_args[] = {"0", "4096", "3", "34", "-1", "0"};
    hand_call(&o, t->mmap, mmap_args, 6); /* PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS */
    put(&o, "printf \"HOTLINE page %%#lx %%#lx\\n\", (long)$h_ret, $h_at\n");
    /* registers are back: a failure from here on leaves only the page */
    put(&o, "set $h_buf = $h_ret\n");
    unsigned char word[8];
    for (size_t i = 0; i <= cl; i += 8) { /* the NUL too, as whole words */
        memset(word, 0, sizeof word);
        memcpy(word, code + i, cl + 1 - i < 8 ? cl + 1 - i : 8);
        uint64_t v;
        memcpy(&v, word, 8);
        put(&o, "set {long}($h_buf + %zu) = %lld\n", i, (long long)v);
    }
    char run[32];
    snprintf(run, sizeof run, "%llu", (unsigned long long)t->run_string);
    const char *const apc_args[] = {run, "$h_buf"};
    put(&o, "if $h_buf > 0\n");
    hand_call(&o, t->add_pending, apc_args, 2);
    put(&o, "printf \"HOTLINE rc %%d %%#lx\\n\", (int)$h_ret, $h_at\n");
    put(&o, "end\n");
    put(&o, "else\nprintf \"HOTLINE nostop\\n\"\nend\n");
    put(&o, "detach\n");
    return o.over ? -E2BIG : (int)o.len;
}

int inject_stopped(pid_t pid, char *msg, size_t n)
{
    char st = procfs_state(NULL, pid);
    if (st == 'T') {
        snprintf(msg, n,
                 "process %d is stopped (state T in /proc/%d/stat: SIGSTOP, or "
                 "Ctrl-Z in its terminal): it would run none of the agent's loading until "
                 "continued. Nothing was done; continue it (kill -CONT %d or fg) and attach "
                 "again",
                 (int)pid, (int)pid, (int)pid);
        return 1;
    }
    if (st != 't') return 0;
    snprintf(msg, n,
             "process %d is stopped under a debugger (state t: tracing stop, "
             "traced by process %ld): it runs nothing, and no second debugger may attach, "
             "until that one lets it go. Nothing was done",
             (int)pid, procfs_tracer(NULL, pid));
    return 1;
}
