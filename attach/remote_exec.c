/* remote_exec.c: see remote_exec.h. The order of the writes is CPython's
 * own (Python/remote_debugging.c): the path before the flag that makes it
 * read, the flag before the bit that makes it look. */
#include "remote_exec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/uio.h>

#define REXEC_MAX_OFF (1u << 20)    /* a field of a thread state lies below this */
#define REXEC_MAX_INTERP (1u << 26) /* PyInterpreterState is large (its config is deep in it) */

static int write_mem(pid_t pid, uint64_t addr, const void *buf, size_t n)
{
    struct iovec local = {(void *)buf, n}, remote = {(void *)(uintptr_t)addr, n};
    ssize_t w = process_vm_writev(pid, &local, 1, &remote, 1, 0);
    if (w < 0) return errno == ESRCH ? -ESRCH : errno == EPERM ? -EPERM : -EFAULT;
    return (size_t)w == n ? 0 : -EFAULT;
}

/* the u64 at pos of the debug offsets d (size n), or UINT64_MAX past its end */
static uint64_t dbg_u64(const uint8_t *d, uint64_t n, uint64_t pos)
{
    uint64_t v = UINT64_MAX;
    if (pos + 8 <= n) memcpy(&v, d + pos, 8);
    return v;
}

int rexec_find(const struct attach_proc *ap, struct rexec *r, char *why, size_t n)
{
    const struct attach_layout *l = &ap->lay;
    memset(r, 0, sizeof *r);
    r->pid = ap->pid;
    uint8_t d[4096];
    if (!l->has_rexec || l->dbg_size > sizeof d) {
        snprintf(why, n, "Python %s has no PEP 768 remote execution (3.14 and later have it)",
                 ap->version);
        return ATTACH_EVERSION;
    }
    int rc = attach_read(ap->pid, ap->runtime, d, l->dbg_size);
    if (rc == -EPERM) return attach__perm_message(ap->pid, why, n);
    if (rc) {
        snprintf(why, n, "process %d: cannot read its _Py_DebugOffsets", (int)ap->pid);
        return rc == -ESRCH ? -ESRCH : ATTACH_ERACE;
    }
    uint64_t main_off = dbg_u64(d, l->dbg_size, l->dbg_is_threads_main),
             eb = dbg_u64(d, l->dbg_size, l->dbg_rx_eval_breaker),
             sup = dbg_u64(d, l->dbg_size, l->dbg_rx_support),
             en = dbg_u64(d, l->dbg_size, l->dbg_rx_enabled),
             pend = dbg_u64(d, l->dbg_size, l->dbg_rx_pending),
             path = dbg_u64(d, l->dbg_size, l->dbg_rx_path),
             psize = dbg_u64(d, l->dbg_size, l->dbg_rx_path_size);
    if (main_off >= REXEC_MAX_INTERP || en >= REXEC_MAX_INTERP || eb >= REXEC_MAX_OFF ||
        sup >= REXEC_MAX_OFF || pend >= REXEC_MAX_OFF || path >= REXEC_MAX_OFF || psize < 2 ||
        psize > 4096) {
        snprintf(why, n, "Python %s: implausible debugger_support in its _Py_DebugOffsets",
                 ap->version);
        return ATTACH_EVERSION;
    }
    uint64_t interp = 0, tstate = 0;
    int32_t enabled = 0;
    rc = attach_read(ap->pid, ap->runtime + l->rt_interp_head, &interp, 8);
    if (!rc) rc = attach_read(ap->pid, interp + en, &enabled, sizeof enabled);
    if (!rc) rc = attach_read(ap->pid, interp + main_off, &tstate, 8);
    if (rc == -EPERM) return attach__perm_message(ap->pid, why, n);
    if (rc == -ESRCH) {
        snprintf(why, n, "process %d exited", (int)ap->pid);
        return -ESRCH;
    }
    if (!rc && enabled != 1) {
        snprintf(why, n,
                 "process %d (Python %s) has remote debugging turned off: it was started with "
                 "-X disable-remote-debug or PYTHON_DISABLE_REMOTE_DEBUG set, or its Python was "
                 "built --without-remote-debug. --memory on 3.14+ goes through PEP 768 (what "
                 "sys.remote_exec uses), which that refuses; the target is unchanged, and "
                 "`hotline attach %d` without --memory samples it",
                 (int)ap->pid, ap->version, (int)ap->pid);
        return REXEC_EDISABLED;
    }
    if (rc || !tstate) {
        snprintf(why, n, "process %d: no main thread state in its interpreter (starting up?)",
                 (int)ap->pid);
        return ATTACH_ERACE;
    }
    r->tstate = tstate;
    r->eval_breaker = tstate + eb;
    r->pending = tstate + sup + pend;
    r->path = tstate + sup + path;
    r->path_size = psize;
    r->stop_bit = l->rx_stop_bit;
    return 0;
}

int rexec_send(const struct rexec *r, const char *script)
{
    size_t len = strlen(script);
    if (len + 1 > r->path_size) return -ENAMETOOLONG;
    int rc = write_mem(r->pid, r->path, script, len + 1);
    int32_t one = 1;
    if (!rc) rc = write_mem(r->pid, r->pending, &one, sizeof one);
    /* the target changes other bits of the breaker with atomics: read and
     * write back at once, the window CPython's own sender has too */
    uint64_t eb = 0;
    if (!rc) rc = attach_read(r->pid, r->eval_breaker, &eb, sizeof eb);
    eb |= r->stop_bit;
    if (!rc) rc = write_mem(r->pid, r->eval_breaker, &eb, sizeof eb);
    return rc;
}

int rexec_pending(const struct rexec *r)
{
    int32_t p = 0;
    int rc = attach_read(r->pid, r->pending, &p, sizeof p);
    return rc ? rc : p == 1;
}

int rexec_withdraw(const struct rexec *r)
{
    int rc = rexec_pending(r);
    if (rc <= 0) return rc;
    /* the path first: a target that takes the request between our read and
     * the flag's write copies an empty path, and an empty path runs nothing */
    char nul = 0;
    int32_t zero = 0;
    rc = write_mem(r->pid, r->path, &nul, 1);
    if (!rc) rc = write_mem(r->pid, r->pending, &zero, sizeof zero);
    return rc ? rc : 1;
}

int rexec_open(pid_t pid, struct rexec *r, char *why, size_t n)
{
    struct attach_proc ap;
    int rc = attach_open(&ap, pid, why, n);
    if (!rc) rc = rexec_find(&ap, r, why, n);
    attach_close(&ap);
    return rc;
}

int rexec_request(const struct rexec *r, const char *script, char *why, size_t n)
{
    int rc = rexec_send(r, script);
    if (getenv("HOTLINE_ATTACH_DEBUG"))
        fprintf(stderr,
                "hotline: PEP 768: tstate %#llx, path at %#llx, pending at %#llx, "
                "eval_breaker at %#llx | %#llx: %d\n",
                (unsigned long long)r->tstate, (unsigned long long)r->path,
                (unsigned long long)r->pending, (unsigned long long)r->eval_breaker,
                (unsigned long long)r->stop_bit, rc);
    if (rc == -EPERM) {
        attach__perm_message(r->pid, why, n);
    } else if (rc) {
        /* a write that failed part-way: take back what may be there */
        int w = rexec_withdraw(r);
        snprintf(why, n, "%s (%s); %s", "writing the request failed", strerror(-rc),
                 w >= 0 ? "the target is unchanged" : "it may be left half-written");
    }
    return rc;
}

void rexec_give_up(const struct rexec *r, const char *what, char *msg, size_t n)
{
    int w = rexec_withdraw(r);
    if (getenv("HOTLINE_ATTACH_DEBUG")) fprintf(stderr, "hotline: withdraw: %d\n", w);
    if (w == 1)
        snprintf(msg, n,
                 "%s: process %d's main thread ran no Python bytecode since the request was "
                 "written (blocked in a C call: a read, a sleep, a lock?), so it never took "
                 "it. "
                 "Withdrawn (debugger_pending_call cleared) and the script removed: the "
                 "target is unchanged",
                 what, (int)r->pid);
    else if (w == 0)
        snprintf(msg, n,
                 "%s: process %d took the request but its agent did not connect (an audit "
                 "hook refusing cpython.remote_debugger_script, a script it could not "
                 "read, or the import still under way?); the script finds no socket now "
                 "and does nothing",
                 what, (int)r->pid);
    else if (w == -ESRCH || kill(r->pid, 0) != 0)
        snprintf(msg, n, "%s: process %d has exited", what, (int)r->pid);
    else
        snprintf(msg, n,
                 "%s, and the request could not be withdrawn (%s): if process %d's main "
                 "thread takes it later it finds no script, and Python prints one "
                 "\"Exception ignored\" line on its stderr",
                 what, strerror(-w), (int)r->pid);
}
