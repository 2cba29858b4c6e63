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
 * A cell is a run (issue 22): the kernel's extension says when a cell
 * begins and ends (`cell` messages, in the stream's order); a cell that
 * begins again has its file's data cleared first, so its hints and lenses
 * show its latest execution only, and a lens on its first line lists the
 * wall seconds of its last KERNEL_RUNS_KEPT executions, newest first.
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
#include "text/document.h"

#define KERNEL_TICK_MS 50     /* refresh requests are checked this often */
#define KERNEL_REFRESH_MS 250 /* refresh requests while data comes */
#define KERNEL_RETRY_MS 1000  /* another server holds the socket: try again this often */
#define KERNEL_RUNS_KEPT 5    /* executions a cell's lens lists */
#define KERNEL_MAX_CELLS 4096 /* cells whose times are kept; past it the oldest goes */

/* One notebook cell's last executions (its file: ipykernel_<pid>/<hash>.py). */
struct kernel_cell {
    char *file;                    /* owned */
    double wall[KERNEL_RUNS_KEPT]; /* wall seconds, newest first */
    int n;                         /* how many of wall[] are set */
};

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
    struct kernel_cell *cells; /* owned: the cells of the profile we fill, oldest first */
    size_t ncells, capcells;
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

/* The cells' times belong to the profile we fill: they go with it. */
static void cells_clear(struct kernel_state *f)
{
    for (size_t i = 0; i < f->ncells; i++)
        free(f->cells[i].file);
    f->ncells = 0;
}

/* Borrowed: the cell of file, or NULL; add 1 makes one when there is none
 * (NULL on ENOMEM). */
static struct kernel_cell *cell_get(struct kernel_state *f, const char *file, int add)
{
    for (size_t i = 0; i < f->ncells; i++)
        if (!strcmp(f->cells[i].file, file)) return &f->cells[i];
    if (!add) return NULL;
    if (f->ncells == KERNEL_MAX_CELLS) { /* the oldest goes */
        free(f->cells[0].file);
        memmove(f->cells, f->cells + 1, --f->ncells * sizeof *f->cells);
    }
    if (f->ncells == f->capcells) {
        size_t cap = f->capcells ? f->capcells * 2 : 16;
        struct kernel_cell *c = realloc(f->cells, cap * sizeof *c);
        if (!c) return NULL;
        f->cells = c;
        f->capcells = cap;
    }
    struct kernel_cell *c = &f->cells[f->ncells];
    memset(c, 0, sizeof *c);
    if (!(c->file = strdup(file))) return NULL;
    f->ncells++;
    return c;
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
    cells_clear(f);
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
        cells_clear(f);
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

/* A cell began: its file's data so far is an earlier execution's (ipykernel
 * names a cell by its text's hash: the same text runs into the same file),
 * cleared now, before this execution's deltas. It ended: its wall time
 * joins the cell's lens. */
static void on_cell(struct agentsock *a, const struct agent_msg *m, void *ud)
{
    (void)a;
    struct kernel_state *f = ud;
    if (!f->store) return;
    if (m->u.cell.begin) {
        if (!profile_reset_file(f->store, m->u.cell.file)) f->dirty = 1;
        return;
    }
    struct kernel_cell *c = cell_get(f, m->u.cell.file, 1);
    if (!c) return;
    memmove(c->wall + 1, c->wall, (KERNEL_RUNS_KEPT - 1) * sizeof *c->wall);
    c->wall[0] = m->u.cell.wall_s;
    if (c->n < KERNEL_RUNS_KEPT) c->n++;
    refresh(f); /* the lens now, the hints of the last deltas with it */
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
                                      .on_cell = on_cell,
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

/* "4.2 s", "0.35 s", "120 s": seconds as a lens reads them. */
static void fmt_seconds(char *buf, size_t n, double s)
{
    snprintf(buf, n, s < 1 ? "%.2f s" : s < 100 ? "%.1f s" : "%.0f s", s);
}

/* textDocument/codeLens, joined by the core: on a cell of our profile that
 * ran, "Hotline: last runs 4.2 s · 3.9 s" on its first line (the wall
 * seconds of its last executions as the kernel timed them, newest first). */
static void kernel_code_lens(struct lsp_facilities *s, void *self, json_t *params,
                             struct lsp_buf *out)
{
    struct kernel_state *f = self;
    if (!f->ncells || !f->store || lsp_pview_profile(s) != f->store ||
        !lsp_setting_bool(s, "lenses.enabled", 1))
        return;
    const char *uri =
        json_string_value(json_object_get(json_object_get(params, "textDocument"), "uri"));
    struct doc *d = uri ? doc_find(&s->docs, uri) : NULL;
    const struct prof_file *pf = d ? lsp_pview_doc_file(s, d, NULL) : NULL;
    const struct kernel_cell *c = pf ? cell_get(f, pf->path, 0) : NULL;
    if (!c || !c->n) return;
    char title[64 + KERNEL_RUNS_KEPT * 24] = "Hotline: last runs ";
    for (int i = 0; i < c->n; i++) {
        size_t k = strlen(title);
        if (i && k + 8 < sizeof title)
            k += (size_t)snprintf(title + k, sizeof title - k, " \u00b7 ");
        if (k + 24 < sizeof title) fmt_seconds(title + k, sizeof title - k, c->wall[i]);
    }
    json_t *lens =
        json_pack("{s:{s:{s:i,s:i},s:{s:i,s:i}},s:{s:s,s:s,s:[{s:s,s:i}]}}", "range", "start",
                  "line", 0, "character", 0, "end", "line", 0, "character", 0, "command", "title",
                  title, "command", "hotline.showProfile", "arguments", "uri", uri, "line", 0);
    char *txt = lens ? json_dumps(lens, JSON_COMPACT) : NULL;
    json_decref(lens);
    if (!txt) {
        out->oom = 1;
        return;
    }
    lsp_buf_sep(out);
    lsp_buf_put(out, txt, strlen(txt));
    free(txt);
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
    cells_clear(f);
    free(f->cells);
    free(f->root_real);
    free(f);
}

const struct lsp_provider lsp_kernel_provider = {
    .name = "kernel",
    .init = kernel_init,
    .initialized = kernel_initialized,
    .code_lens = kernel_code_lens,
    .output_live = kernel_output_live,
    .debug_state = kernel_debug_state,
    .close = kernel_close,
    .free = kernel_free,
};
