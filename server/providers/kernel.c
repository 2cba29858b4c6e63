/* Kernels stream into the editor: agents that connect on their own to the
 * workspace socket <root>/.hotline/agent.sock (a Jupyter kernel after
 * `%load_ext hotline`, any script after `hotline.connect()` or with
 * HOTLINE_CONNECT=1; docs/notebooks.md) are shown like a run's: the live
 * line (hotline/executing, or the fallback diagnostic), hints, lenses,
 * hovers, and leak diagnostics once the last one leaves.
 *
 * One profile for the agents connected together: the first agent to connect
 * while no run is going starts a fresh profile in the view; every agent
 * connected meanwhile (a forked child, a second kernel) adds to it. An agent
 * that connects after they all left starts a fresh profile again: a new
 * kernel (a restarted one, another notebook's) never adds into the last
 * kernel's profile (issue 22; the one shown stays until then).
 * A run (hotline.run), a hotline.clear or a loaded profile replaces it: the
 * view tells us first (lsp_pview_hold) and the connections are closed (the
 * agents stop profiling, their programs go on). While a run is going, an
 * agent that connects is refused.
 *
 * A second server on the same folder finds the first one listening there:
 * it retries every KERNEL_RETRY_MS and takes the socket over once the first
 * one left (removed its socket, or died and left it stale). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hotdir.h"
#include "core/lsp_call.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "proc/agentsock.h"
#include "proc/tcpgate.h"
#include "store/profile.h"

#define KERNEL_TICK_MS 50     /* refresh requests are checked this often */
#define KERNEL_REFRESH_MS 250 /* refresh requests while data comes */
#define KERNEL_RETRY_MS 1000  /* another server holds the socket: try again this often */

struct kernel_state {
    struct lsp_facilities *srv; /* borrowed */
    struct agentsock sock;
    int listening;         /* sock is open: close it at exit */
    struct profile *store; /* borrowed: the view's profile our agents fill, or NULL */
    uv_timer_t tick;
    int tick_open, ticking;
    uv_timer_t retry; /* another server's socket: kernel_listen again (one shot) */
    int retry_open, retried;
    char *root_real;     /* owned: the workspace root, resolved (own frames) */
    struct tcpgate gate; /* setting agentTcp: agents of other hosts (docs/distributed.md) */
    int gate_on;
    char gate_file[PATH_MAX + 32]; /* <root>/.hotline/agent-tcp.json: address and token */
    int dirty;
    uint64_t last_refresh_ns;
};

extern const struct lsp_provider lsp_kernel_provider;

static void refresh(struct kernel_state *f)
{
    f->dirty = 0;
    f->last_refresh_ns = uv_hrtime();
    lsp_pview_updated(f->srv, LSP_PV_DATA);
}

static void on_tick(uv_timer_t *t)
{
    struct kernel_state *f = t->data;
    if ((uv_hrtime() - f->last_refresh_ns) / 1000000 >= KERNEL_REFRESH_MS) {
        if (f->dirty)
            refresh(f);
        else
            f->last_refresh_ns = uv_hrtime();
    }
}

/* The last agent left (or the profile was taken from us): no live line. */
static void went_quiet(struct kernel_state *f)
{
    struct lsp_facilities *s = f->srv;
    if (f->ticking) uv_timer_stop(&f->tick);
    f->ticking = 0;
    lsp_pview_now_end(s); /* hotline/executing {"uri": null} (providers/live.c) */
}

/* lsp_pview_hold: a run, a clear or a load replaces the profile we fill. */
static void let_go(struct lsp_facilities *s, void *data)
{
    struct kernel_state *f = data;
    if (f->sock.nconns)
        lsp_log(s, LSP_MSG_INFO, "kernels: %d agent(s) disconnected: the profile was replaced",
                f->sock.nconns);
    int live = f->ticking; /* we marked the view running */
    f->store = NULL;       /* first: on_gone below must leave the view alone */
    agentsock_drop(&f->sock);
    went_quiet(f);
    lsp_pview_set_live(s, NULL);
    /* a clear or a load leaves nothing running (a run marks it again) */
    if (live) lsp_pview_set_running(s, 0);
}

static struct profile *on_accept(struct agentsock *a, void *ud)
{
    (void)a;
    struct kernel_state *f = ud;
    struct lsp_facilities *s = f->srv;
    if (f->store && a->nconns == 1) {
        /* every agent of that profile left (this one is the only
         * connection): a new kernel gets a profile of its own. Let go of
         * the old one first, so that replacing it drops no connection. */
        lsp_pview_hold(s, NULL, NULL);
        f->store = NULL;
    }
    if (!f->store) {
        if (s->view->running) { /* a run fills the view */
            lsp_log(s, LSP_MSG_WARNING,
                    "kernels: an agent connected while a program runs (hotline.run): refused");
            return NULL;
        }
        struct profile *p = profile_new();
        if (!p) return NULL;
        lsp_pview_replace(s, p, NULL, NULL); /* the view owns it; we fill it */
        lsp_pview_hold(s, let_go, f);
        f->store = p;
    }
    if (!f->ticking) {
        lsp_pview_set_running(s, 1);
        lsp_pview_set_leaks(s, NULL); /* leaks are computed when the agents leave */
        lsp_pview_now_begin(s, s->root_path, f->root_real, "kernel", uv_hrtime());
        if (f->tick_open && !uv_timer_start(&f->tick, on_tick, KERNEL_TICK_MS, KERNEL_TICK_MS))
            f->ticking = 1;
        agentsock_request_now(&f->sock, 20);
    }
    return f->store;
}

static void on_hello(struct agentsock *a, long long pid, void *ud)
{
    struct kernel_state *f = ud;
    lsp_log(f->srv, LSP_MSG_INFO, "kernels: agent of pid %lld connected (%d now)", pid, a->nconns);
}

static void on_delta(struct agentsock *a, void *ud)
{
    (void)a;
    ((struct kernel_state *)ud)->dirty = 1;
}

static void on_now(struct agentsock *a, const json_t *now, void *ud)
{
    (void)a;
    struct kernel_state *f = ud;
    lsp_pview_set_now(f->srv, now); /* providers/live.c (nothing unless a stream began) */
}

static void on_error(struct agentsock *a, const char *msg, void *ud)
{
    (void)a;
    lsp_log(((struct kernel_state *)ud)->srv, LSP_MSG_WARNING, "kernels: %s", msg);
}

static void on_gone(struct agentsock *a, long long pid, void *ud)
{
    struct kernel_state *f = ud;
    struct lsp_facilities *s = f->srv;
    if (pid) lsp_log(s, LSP_MSG_INFO, "kernels: agent of pid %lld left (%d now)", pid, a->nconns);
    if (a->nconns || !f->store) return;
    went_quiet(f);
    lsp_pview_set_running(s, 0);
    lsp_pview_set_live(s, NULL);
    lsp_pview_set_leaks(s, profile_leak_set_new(lsp_pview_profile(s)));
    refresh(f); /* final hints / lenses / diagnostics */
}

static void kernel_listen(struct lsp_facilities *s, struct kernel_state *f);

static void on_retry(uv_timer_t *t)
{
    struct kernel_state *f = t->data;
    f->retried = 1;
    kernel_listen(f->srv, f);
    f->retried = 0;
}

static void kernel_gate(struct lsp_facilities *s, struct kernel_state *f, const char *dir,
                        const char *sock);

/* Listen on <root>/.hotline/agent.sock; every refusal is one log line, but
 * the retries' (another server still there) are quiet. */
static void kernel_listen(struct lsp_facilities *s, struct kernel_state *f)
{
    int again = f->retried;
    char dir[PATH_MAX], path[PATH_MAX + 16], err[PATH_MAX + 200];
    struct stat st;
    if (!s->loop || !lsp_setting_bool(s, "kernelSocket", 1) || lsp_hotline_dir(s, dir, sizeof dir))
        return;
    int rc = lsp_hotline_dir_make(dir);
    if (!rc) rc = lsp_real_dir(dir, &st);
    if (rc) {
        lsp_log(s, LSP_MSG_WARNING, "kernels: not listening: %s: %s", dir,
                rc == -ELOOP ? "is a symbolic link" : strerror(-rc));
        return;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 077)) {
        lsp_log(s, LSP_MSG_WARNING,
                "kernels: not listening: %s must be ours and private (uid %u, mode %03o)", dir,
                (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
        return;
    }
    snprintf(path, sizeof path, "%s/agent.sock", dir);
    const struct agentsock_cbs cbs = {.on_accept = on_accept,
                                      .on_hello = on_hello,
                                      .on_delta = on_delta,
                                      .on_now = on_now,
                                      .on_error = on_error,
                                      .on_gone = on_gone};
    rc = agentsock_listen(s->loop, &f->sock, path, &cbs, f, err, sizeof err);
    if (rc == -EADDRINUSE || rc == UV_EADDRINUSE) { /* the other server may leave */
        if (!again)
            lsp_log(s, LSP_MSG_WARNING,
                    "kernels: not listening: %s; taking it over once it is free", err);
        if (f->retry_open) uv_timer_start(&f->retry, on_retry, KERNEL_RETRY_MS, 0);
        return;
    }
    if (rc) {
        lsp_log(s, LSP_MSG_WARNING, "kernels: not listening: %s", err);
        return;
    }
    f->listening = 1;
    char real[PATH_MAX];
    f->root_real = strdup(realpath(s->root_path, real) ? real : s->root_path);
    lsp_log(s, LSP_MSG_INFO, "kernels: listening on %s%s", path,
            again ? " (taken over: the other server left)" : "");
    kernel_gate(s, f, dir, path);
}

static void on_gate_log(const char *msg, void *ud)
{
    lsp_log(((struct kernel_state *)ud)->srv, LSP_MSG_WARNING, "kernels: %s", msg);
}

/* Setting agentTcp ("HOST:PORT", off by default): a TCP gate bridged to the
 * workspace socket; its address and token go into dir/agent-tcp.json (0600
 * in the private folder), where hotline.dask / hotline.ray in a program
 * connected to this socket find them for their workers of other hosts. */
static void kernel_gate(struct lsp_facilities *s, struct kernel_state *f, const char *dir,
                        const char *sock)
{
    const char *hp = lsp_setting_str(s, "agentTcp");
    char err[256];
    if (!hp || !*hp) return;
    if (tcpgate_listen(s->loop, &f->gate, hp, on_gate_log, f, err, sizeof err)) {
        lsp_log(s, LSP_MSG_WARNING, "kernels: agentTcp: %s", err);
        return;
    }
    tcpgate_set_target(&f->gate, sock);
    f->gate_on = 1;
    snprintf(f->gate_file, sizeof f->gate_file, "%s/agent-tcp.json", dir);
    json_t *j = json_pack("{s:s, s:s}", "address", f->gate.addr, "token", f->gate.token);
    char *txt = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    char tmp[PATH_MAX + 40];
    snprintf(tmp, sizeof tmp, "%s.tmp", f->gate_file);
    int fd = txt ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
    int ok = fd >= 0 && write(fd, txt, strlen(txt)) == (ssize_t)strlen(txt);
    if (fd >= 0) close(fd);
    ok = ok && rename(tmp, f->gate_file) == 0;
    free(txt);
    if (!ok) {
        unlink(tmp);
        f->gate_file[0] = 0;
    }
    lsp_log(s, LSP_MSG_INFO, "kernels: agents of other hosts may connect over TCP at %s (%s)",
            f->gate.addr, ok ? f->gate_file : "token not written");
}

static int kernel_init(struct lsp_facilities *s, void **self)
{
    struct kernel_state *f = calloc(1, sizeof *f);
    if (!f) return -ENOMEM;
    f->srv = s;
    if (s->loop && !uv_timer_init(s->loop, &f->tick)) {
        f->tick.data = f;
        f->tick_open = 1;
    }
    if (s->loop && !uv_timer_init(s->loop, &f->retry)) {
        f->retry.data = f;
        f->retry_open = 1;
    }
    *self = f;
    return 0;
}

static void kernel_initialized(struct lsp_facilities *s, void *self)
{
    kernel_listen(s, self);
}

static void kernel_output_live(struct lsp_facilities *s, void *self, int on)
{
    (void)s;
    struct kernel_state *f = self;
    if (f->listening) agentsock_request_now(&f->sock, on ? 20 : 0);
}

static void kernel_debug_state(struct lsp_facilities *s, void *self, json_t *r)
{
    (void)s;
    struct kernel_state *f = self;
    if (f->listening)
        json_object_set_new(
            r, "kernels",
            json_pack("{s:s, s:i}", "socket", f->sock.path, "connected", f->sock.nconns));
}

static void kernel_close(struct lsp_facilities *s, void *self)
{
    struct kernel_state *f = self;
    if (!f) return;
    if (f->store) lsp_pview_hold(s, NULL, NULL);
    f->store = NULL;
    if (f->listening) agentsock_close(&f->sock, NULL); /* the loop runs until it is closed */
    f->listening = 0;
    if (f->gate_on) {
        tcpgate_close(&f->gate, NULL);
        if (f->gate_file[0]) unlink(f->gate_file);
    }
    f->gate_on = 0;
    if (f->tick_open) uv_close((uv_handle_t *)&f->tick, NULL);
    f->tick_open = 0;
    if (f->retry_open) uv_close((uv_handle_t *)&f->retry, NULL);
    f->retry_open = 0;
}

static void kernel_free(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct kernel_state *f = self;
    if (!f) return;
    free(f->root_real);
    free(f);
}

const struct lsp_provider lsp_kernel_provider = {
    .name = "kernel",
    .init = kernel_init,
    .initialized = kernel_initialized,
    .output_live = kernel_output_live,
    .debug_state = kernel_debug_state,
    .close = kernel_close,
    .free = kernel_free,
};
