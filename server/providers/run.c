/* Running a program from the editor: workspace/executeCommand hotline.run /
 * stop / clear / showProfile, and hotline.attach / detach (a run of the
 * `hotline attach` helper), work-done progress while it runs (cancel stops
 * it), the agent's `now` stacks handed to the live line (providers/live.c),
 * throttled refresh requests so hints and lenses follow the data. The end of a run is
 * LSP_PV_FINAL to the view's readers (persist.c saves it). One run at a
 * time per server (= workspace).
 *
 * Nothing here blocks: the program is a struct session on the server's loop.
 * When the server exits every program it started is killed (session_close
 * sends SIGKILL to its process group) and the loop runs until the session's
 * handles are closed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "core/hotdir.h"
#include "core/interp.h"
#include "core/lsp_call.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "store/profile.h"
#include "proc/pylist.h"
#include "proc/session.h"
#include "store/summary.h"
#include "core/uri.h"

#define RUN_MAX_ARGS 256
#define LSP_TICK_MS 250 /* progress, refresh requests */

struct lsp_run {
    struct session sess;
    struct lsp_facilities *srv; /* borrowed */
    struct profile *store;      /* borrowed: the profile view's (the core owns it) */
    char *uri, *path;           /* owned: the program's file */
    char *main_dir;             /* owned: directory of the program, resolved (user frames) */
    char *main_dir_given;       /* owned: the same as given */
    uv_timer_t tick;            /* progress and refresh requests */
    int tick_open;
    uint64_t start_ns;
    struct lsp_progress progress; /* cancellable: cancel stops the program */
    int stop_requested;
    int attach_pid;    /* > 0: attached to this running process, not a run */
    int attach_memory; /* ... with the agent injected (memory on) */
    json_t *pending;   /* owned hotline.run arguments to start after this run (restart) */
    struct lsp_run *next;
};

/* The provider's state. */
struct run_state {
    struct lsp_run *run;     /* owned until its session closed; NULL when idle */
    struct lsp_run *closing; /* runs whose session is closing (list through run->next) */
    int runs_started;
    /* refresh throttling */
    int dirty; /* profile changed since the last refresh request */
    uint64_t last_refresh_ns;
    int exiting;
};

extern const struct lsp_provider lsp_run_provider;

/* Borrowed: this provider's state in s. */
static struct run_state *run_of(struct lsp_facilities *s)
{
    return lsp_provider_self(s, &lsp_run_provider);
}

static uint64_t ms_since(uint64_t ns)
{
    return (uv_hrtime() - ns) / 1000000;
}

/* ---- progress, refresh, executing ------------------------------------- */

static void hottest_line(struct lsp_facilities *s, char *buf, size_t n)
{
    struct prof_line_ref top;
    buf[0] = 0;
    const struct profile *prof = lsp_pview_profile(s);
    if (prof && profile_top_lines(prof, &top, 1) == 1) {
        const char *base = strrchr(top.file->path, '/');
        snprintf(buf, n, " · hottest %s:%d (%.0f%%)", base ? base + 1 : top.file->path, top.line,
                 summary_share(prof, top.st));
    }
}

/* what: LSP_PV_DATA, with LSP_PV_FINAL or LSP_PV_CLEARED for persistence */
static void send_refresh(struct lsp_facilities *s, int what)
{
    struct run_state *f = run_of(s);
    f->dirty = 0;
    f->last_refresh_ns = uv_hrtime();
    lsp_pview_updated(s, what); /* refresh requests, diagnostics, persistence */
}

/* The params of hotline/runEnded (new), the documented end of a run, or NULL
 * for a client that takes no hotline notifications (it opted into neither
 * hotline/executing nor experimental.hotlineRunEnded). reason: the end
 * message's words ("exited 0", "stopped"). Sent after the final refresh, so
 * a client that refreshes its views on it gets the finished run's data. */
static json_t *run_ended_params(struct lsp_facilities *s, struct lsp_run *r,
                                const struct session *ss, const char *reason)
{
    if (!s->out->executing_optin &&
        !json_is_true(lsp_client_cap(s, "experimental.hotlineRunEnded")))
        return NULL;
    const char *outcome = r->stop_requested                           ? "stopped"
                          : (ss->term_signal || ss->exit_status != 0) ? "failed"
                                                                      : "done";
    json_t *o =
        json_pack("{s:s?, s:s, s:s, s:i, s:i, s:f, s:I}", "uri", r->uri, "outcome", outcome,
                  "reason", reason, "exitStatus", ss->exit_status, "signal", ss->term_signal,
                  "elapsed_s", ss->elapsed_s, "samples", (json_int_t)r->store->meta.samples);
    if (o && r->attach_pid > 0) json_object_set_new(o, "attachedPid", json_integer(r->attach_pid));
    if (o && r->attach_memory) json_object_set_new(o, "memory", json_true());
    return o;
}

static void on_tick(uv_timer_t *t)
{
    struct lsp_run *r = t->data;
    struct lsp_facilities *s = r->srv;
    struct run_state *f = run_of(s);
    const struct profile *prof = lsp_pview_profile(s);
    if (ms_since(f->last_refresh_ns) >= LSP_TICK_MS) {
        if (lsp_progress_begun(&r->progress)) {
            char msg[256], hot[160];
            double t = (double)(uv_hrtime() - r->start_ns) / 1e9;
            hottest_line(s, hot, sizeof hot);
            if (r->attach_memory && (!prof || prof->meta.samples == 0)) /* gdb at work */
                snprintf(msg, sizeof msg, "%.1f s · injecting Hotline's agent (gdb)", t);
            else
                snprintf(msg, sizeof msg, "%.1f s · %lld samples%s", t,
                         prof ? prof->meta.samples : 0, hot);
            lsp_progress_report(s, &r->progress, msg);
        }
        if (f->dirty)
            send_refresh(s, LSP_PV_DATA);
        else
            f->last_refresh_ns = uv_hrtime();
    }
}

/* ---- session callbacks ------------------------------------------------- */

static void on_delta(struct session *ss, void *ud)
{
    (void)ss;
    struct lsp_run *r = ud;
    run_of(r->srv)->dirty = 1;
}

static void on_now(struct session *ss, const json_t *now, void *ud)
{
    (void)ss;
    struct lsp_run *r = ud;
    if (run_of(r->srv)->run == r) lsp_pview_set_now(r->srv, now); /* providers/live.c */
}

static void on_error(struct session *ss, const char *msg, void *ud)
{
    (void)ss;
    struct lsp_run *r = ud;
    lsp_log(r->srv, LSP_MSG_WARNING, "run: %s", msg);
}

/* the attach helper names a child it does not follow (or follows): shown */
static void on_notice(struct session *ss, const char *msg, void *ud)
{
    (void)ss;
    struct lsp_run *r = ud;
    lsp_show(r->srv, LSP_MSG_INFO, "hotline: %s", msg);
}

static void run_free(struct lsp_run *r)
{
    free(r->uri);
    free(r->path);
    free(r->main_dir);
    free(r->main_dir_given);
    json_decref(r->pending);
    free(r);
}

static void on_tick_closed(uv_handle_t *h)
{
    struct lsp_run *r = h->data;
    r->tick_open = 0;
    if (!r->sess.io && r->sess.closing) /* the session finished closing first */
        run_free(r);
}

static void on_sess_closed(struct session *ss)
{
    struct lsp_run *r = (struct lsp_run *)ss;
    struct run_state *f = run_of(r->srv);
    for (struct lsp_run **pp = &f->closing; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    if (!r->tick_open) run_free(r);
}

/* Detach r from the server and close it (kills the program if still running). */
static void run_retire(struct lsp_facilities *s, struct lsp_run *r)
{
    struct run_state *f = run_of(s);
    if (f->run == r) {
        f->run = NULL;
        lsp_pview_now_end(s); /* done at exit already; not when the server exits */
        lsp_pview_set_running(s, 0);
        lsp_pview_set_live(s, NULL);
    }
    lsp_progress_drop(s, &r->progress); /* a cancel can no longer reach r */
    if (r->tick_open && !uv_is_closing((uv_handle_t *)&r->tick))
        uv_close((uv_handle_t *)&r->tick, on_tick_closed);
    r->next = f->closing;
    f->closing = r;
    session_close(&r->sess, on_sess_closed);
}

static int start_run(struct lsp_facilities *s, json_t *id, json_t *args);
static void on_progress_cancel(struct lsp_facilities *s, void *data);

static void on_exit_cb(struct session *ss, void *ud)
{
    struct lsp_run *r = ud;
    struct lsp_facilities *s = r->srv;
    struct run_state *f = run_of(s);
    uv_timer_stop(&r->tick);
    json_t *ended; /* new, or NULL */
    {
        struct prof_meta *m = &r->store->meta;
        char reason[128];
        m->elapsed_s = ss->elapsed_s;
        m->exit_status = ss->exit_status;
        m->exit_signal = ss->term_signal;
        profile_describe_exit(ss->exit_status, ss->term_signal, reason, sizeof reason);
        if (r->attach_pid > 0) /* the helper's status: 0 detached or target gone */
            snprintf(reason, sizeof reason, "%s",
                     r->stop_requested                            ? "detached"
                     : ss->agent_error[0] || ss->exit_status != 0 ? "attach failed"
                                                                  : "target exited");
        else if (r->stop_requested) /* SIGINT may end it as "exited 1" (KeyboardInterrupt) */
            snprintf(reason, sizeof reason, "stopped");
        profile_set_str(&m->reason, reason);
        const char *base = strrchr(r->path, '/');
        base = base ? base + 1 : r->path;
        int bad = !r->stop_requested && (ss->term_signal || ss->exit_status != 0);
        if (r->attach_pid > 0 && ss->agent_error[0]) bad = 0; /* the agent message says it */
        char *tail = bad ? session_output_tail(ss) : NULL;
        const char *last = NULL;
        if (tail) { /* the last non-empty line of output: usually the exception */
            size_t n = strlen(tail);
            while (n && (tail[n - 1] == '\n' || tail[n - 1] == '\r'))
                tail[--n] = 0;
            last = strrchr(tail, '\n');
            last = last ? last + 1 : tail;
        }
        lsp_show(s, bad ? LSP_MSG_WARNING : LSP_MSG_INFO,
                 "hotline: %s %s after %.1f s, %lld samples%s%s%s", base, reason, ss->elapsed_s,
                 m->samples, ss->agent_error[0] ? " (agent: " : "", ss->agent_error,
                 ss->agent_error[0] ? ")" : "");
        if (last && *last && r->attach_pid > 0) { /* the helper's own words: why it failed */
            if (!strncmp(last, "hotline attach: ", 16)) last += 16;
            lsp_show(s, LSP_MSG_ERROR, "hotline: cannot attach to process %d%s: %s", r->attach_pid,
                     r->attach_memory ? " with memory" : "", last);
        } else if (last && *last) {
            lsp_show(s, LSP_MSG_WARNING, "%s: %s", base, last);
        }
        free(tail);
        if (m->samples == 0 && ss->nconns_total == 0)
            lsp_log(s, LSP_MSG_WARNING, "the profiler agent never connected: no profile");
        lsp_pview_set_leaks(s, profile_leak_set_new(lsp_pview_profile(s)));
        ended = run_ended_params(s, r, ss, reason);
    }
    lsp_progress_end(s, &r->progress,
                     r->attach_pid > 0   ? "detached"
                     : r->stop_requested ? "stopped"
                                         : "done");
    lsp_pview_now_end(s); /* hotline/executing {"uri": null} (providers/live.c) */
    json_t *pending = r->pending;
    r->pending = NULL;
    run_retire(s, r);
    send_refresh(s, LSP_PV_DATA | LSP_PV_FINAL); /* final hints, lenses, diagnostics; saved */
    if (ended) lsp_notify(s, "hotline/runEnded", ended);
    if (pending && !f->exiting) {
        start_run(s, NULL, pending);
    }
    json_decref(pending);
}

/* ---- commands ---------------------------------------------------------- */

static char **str_array(json_t *a, int *n, char **extra, int nextra)
{
    size_t cnt = json_is_array(a) ? json_array_size(a) : 0;
    if (cnt + (size_t)nextra > RUN_MAX_ARGS) cnt = RUN_MAX_ARGS - (size_t)nextra;
    char **v = calloc(cnt + (size_t)nextra + 1, sizeof *v);
    *n = 0;
    if (!v) return NULL;
    for (int i = 0; i < nextra; i++)
        v[(*n)++] = extra[i];
    for (size_t i = 0; i < cnt; i++) {
        const char *sv = json_string_value(json_array_get(a, i));
        if (sv) v[(*n)++] = (char *)sv;
    }
    return v;
}

/* Start a run from hotline.run arguments (borrowed). id may be NULL (restart):
 * errors then go to showMessage. 0 or negative errno. */
static int start_run(struct lsp_facilities *s, json_t *id, json_t *a)
{
    struct run_state *f = run_of(s);
    /* hotline.attach: {"pid": N} instead of a program to start */
    int attach_pid = (int)json_integer_value(json_object_get(a, "pid"));
    int attach_memory = attach_pid > 0 && json_is_true(json_object_get(a, "memory"));
    int attach_children = attach_pid > 0 && json_is_true(json_object_get(a, "children"));
    struct pyproc_info target;
    char self_exe[PATH_MAX] = "", target_uri_buf[PATH_MAX + 16] = "";
    if (attach_pid > 0) {
        ssize_t l = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        self_exe[l > 0 ? l : 0] = 0;
        int rc = pyproc_describe(attach_pid, &target);
        if (rc || !self_exe[0]) {
            const char *why = rc == -ESRCH ? "no such process"
                              : rc         ? strerror(-rc)
                                           : "cannot find hotline's own executable";
            if (id)
                lsp_reply_error(s, id, LSP_REQUEST_FAILED, "cannot attach to %d: %s", attach_pid,
                                why);
            lsp_show(s, LSP_MSG_ERROR, "hotline: cannot attach to process %d: %s", attach_pid, why);
            return rc ? rc : -ENOENT;
        }
        if (target.main[0]) {
            char *u = lsp_path_to_uri(target.main);
            if (u) snprintf(target_uri_buf, sizeof target_uri_buf, "%s", u);
            free(u);
        }
    }
    const char *uri = attach_pid > 0 ? (target_uri_buf[0] ? target_uri_buf : NULL)
                                     : json_string_value(json_object_get(a, "uri"));
    const char *module = json_string_value(json_object_get(a, "module"));
    const char *python = json_string_value(json_object_get(a, "python"));
    const char *cwd = json_string_value(json_object_get(a, "cwd"));
    const char *in = json_string_value(json_object_get(a, "stdin"));
    if (!python) python = json_string_value(lsp_setting(s, "python"));
    char *path = uri ? lsp_uri_to_path(uri) : NULL;
    if (attach_pid > 0 && !path) { /* -m, -c, an embedding program: its command */
        char name[64];
        snprintf(name, sizeof name, "process %d", attach_pid);
        path = strdup(name);
    }
    if (!module && !path) {
        if (id)
            lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.run needs a file: uri");
        else
            lsp_show(s, LSP_MSG_ERROR, "hotline.run needs a file: uri");
        return -EINVAL;
    }
    struct lsp_run *r = calloc(1, sizeof *r);
    if (!r) {
        free(path);
        return -ENOMEM;
    }
    r->srv = s;
    r->path = path ? path : strdup(module);
    r->uri = strdup(uri ? uri : "");
    char dir[PATH_MAX];
    if (attach_pid > 0 && !target.main[0]) {
        snprintf(dir, sizeof dir, "%s", target.cwd[0] ? target.cwd : "/");
    } else if (path) {
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) *slash = 0;
    } else {
        snprintf(dir, sizeof dir, "%s", cwd ? cwd : s->root_path ? s->root_path : ".");
    }
    char real[PATH_MAX]; /* frames name files by their real path more often than not */
    r->main_dir = strdup(realpath(dir, real) ? real : dir);
    r->main_dir_given = strdup(dir);
    int nargs = 0, ninc = 0, nexc = 0;
    /* extra arguments from the settings come first, then this run's */
    json_t *all = json_array();
    json_array_extend(all, json_is_array(lsp_setting(s, "args")) ? lsp_setting(s, "args") : all);
    if (json_is_array(json_object_get(a, "args")))
        json_array_extend(all, json_object_get(a, "args"));
    char **args = str_array(all, &nargs, NULL, 0);
    char **inc = str_array(lsp_setting(s, "include"), &ninc, NULL, 0);
    char **exc = str_array(lsp_setting(s, "exclude"), &nexc, NULL, 0);

    struct profile *store = profile_new();
    struct session_opts o = {.python = python,
                             .script = module ? NULL : path,
                             .module = module,
                             .args = args,
                             .nargs = nargs,
                             .cwd = cwd ? cwd : r->main_dir,
                             .interval_ms = lsp_setting_num(s, "intervalMs", 0),
                             .profile_all = lsp_setting_bool(s, "profileAll", 0),
                             .include = inc,
                             .ninclude = ninc,
                             .exclude = exc,
                             .nexclude = nexc,
                             .memory = lsp_setting_bool(s, "memory", 1),
                             .stdin_path = in,
                             .attach_pid = attach_pid,
                             .attach_memory = attach_memory,
                             .attach_children = attach_children,
                             .attach_exe = self_exe};
    if (attach_pid > 0) {
        o.cwd = r->main_dir;
        o.nargs = 0;
    }
    struct session_cbs cbs = {.on_delta = on_delta,
                              .on_now = on_now,
                              .on_error = on_error,
                              .on_notice = on_notice,
                              .on_exit = on_exit_cb};
    int rc = store && r->uri && r->main_dir && args && inc && exc
                 ? session_start(s->loop, &r->sess, &o, &cbs, r, store)
                 : -ENOMEM;
    free(args);
    free(inc);
    free(exc);
    json_decref(all);
    if (rc) {
        const char *why = rc == -ENOMEM ? "out of memory" : r->sess.errmsg;
        if (id) lsp_reply_error(s, id, LSP_REQUEST_FAILED, "cannot run: %s", why);
        lsp_show(s, LSP_MSG_ERROR, "hotline: cannot run %s: %s", r->path, why);
        profile_free(store);
        run_free(r);
        return rc;
    }
    if (attach_pid <= 0) { /* the user ran the program with it: Optimize may run it too */
        char pybuf[PATH_MAX];
        lsp_interp_ran(s, lsp_interp_exe(python, pybuf, sizeof pybuf));
    }
    /* the new profile replaces the old one from now on (a run that is still
     * closing has had its on_exit: it no longer touches its store) */
    lsp_pview_replace(s, store, NULL, NULL);
    r->store = store;
    r->attach_pid = attach_pid;
    r->attach_memory = attach_memory;
    if (path && (attach_pid <= 0 || target.main[0])) { /* the program as it is now on disk is what
                                                          gets profiled (attach: the best guess) */
        lsp_pview_snapshot(s, path);
    }
    f->run = r;
    lsp_pview_set_running(s, 1);
    f->runs_started++;
    r->start_ns = uv_hrtime();
    lsp_pview_now_begin(s, r->main_dir, r->main_dir_given, NULL, r->start_ns);
    /* the tick only paces progress and refresh requests: without
     * it the run goes on and its result still comes at exit */
    if (!uv_timer_init(s->loop, &r->tick)) {
        r->tick.data = r;
        r->tick_open = 1;
        if (uv_timer_start(&r->tick, on_tick, LSP_TICK_MS / 5, LSP_TICK_MS / 5))
            lsp_log(s, LSP_MSG_WARNING, "run: no live updates (the timer did not start)");
    } else {
        lsp_log(s, LSP_MSG_WARNING, "run: no live updates (the timer could not be set up)");
    }
    session_request_now(&r->sess, 20);
    char token[48];
    snprintf(token, sizeof token, "hotline-run-%d", f->runs_started);
    lsp_progress_start(s, &r->progress, token, "Hotline",
                       attach_memory    ? "attaching with memory: injecting Hotline's agent (gdb)"
                       : attach_pid > 0 ? "attaching"
                                        : "starting",
                       on_progress_cancel, r);
    if (id && attach_pid > 0)
        lsp_reply(s, id,
                  json_pack("{s:b, s:i, s:s, s:b}", "attached", 1, "pid", attach_pid, "program",
                            r->path, "memory", attach_memory));
    else if (id)
        lsp_reply(s, id, json_pack("{s:b, s:i}", "started", 1, "pid", r->sess.pid));
    send_refresh(s, LSP_PV_DATA); /* old hints go away */
    return 0;
}

static void cmd_run(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    struct run_state *f = self;
    if (!s->loop) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "this server cannot run programs");
        return;
    }
    if (!json_is_object(a)) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.run needs {\"uri\": ...}");
        return;
    }
    if (f->run) {
        if (json_is_true(json_object_get(a, "restart"))) {
            json_decref(f->run->pending);
            f->run->pending = json_deep_copy(a);
            json_object_del(f->run->pending, "restart");
            f->run->stop_requested = 1;
            session_stop(&f->run->sess);
            lsp_reply(s, id, json_pack("{s:b, s:b}", "started", 0, "restarting", 1));
            return;
        }
        lsp_reply_error(s, id, LSP_REQUEST_FAILED,
                        "a program is already running (pid %d): stop it first, or pass "
                        "\"restart\": true",
                        f->run->sess.pid);
        return;
    }
    start_run(s, id, a);
}

static void cmd_stop(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)a;
    struct lsp_run *r = ((struct run_state *)self)->run;
    if (!r) {
        lsp_reply(s, id, json_pack("{s:b}", "stopped", 0));
        return;
    }
    r->stop_requested = 1;
    session_stop(&r->sess);
    lsp_reply(s, id, json_pack("{s:b}", "stopped", 1));
}

/* hotline.attach {pid, memory?, children?}: sample a running Python from
 * outside (cmd_attach.c via the session; children: true follows its Python
 * children too), or with memory: true have gdb inject the agent, whose
 * stream the helper relays (attach_memory.c); the editor shows what it
 * shows during a run. */
static void cmd_attach(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    struct run_state *f = self;
    json_t *pid = json_object_get(a, "pid");
    json_t *memory = json_object_get(a, "memory");
    json_t *children = json_object_get(a, "children");
    if (!s->loop) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "this server cannot attach to processes");
        return;
    }
    if (!json_is_integer(pid) || json_integer_value(pid) <= 0 ||
        json_integer_value(pid) > INT_MAX) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.attach needs {\"pid\": N}");
        return;
    }
    if (memory && !json_is_boolean(memory)) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.attach: \"memory\" is true or false");
        return;
    }
    if (children && !json_is_boolean(children)) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.attach: \"children\" is true or false");
        return;
    }
    if (json_is_true(children) && json_is_true(memory)) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS,
                        "hotline.attach: \"children\" does not go with \"memory\" (the "
                        "injected agent is not inherited by children)");
        return;
    }
    if (json_integer_value(pid) == getpid()) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "that is the Hotline server itself");
        return;
    }
    if (f->run) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "%s is %s (pid %d): stop or detach first",
                        f->run->path, f->run->attach_pid > 0 ? "attached" : "running",
                        f->run->attach_pid > 0 ? f->run->attach_pid : f->run->sess.pid);
        return;
    }
    json_t *args = json_pack("{s:O, s:b, s:b}", "pid", pid, "memory", json_is_true(memory),
                             "children", json_is_true(children));
    start_run(s, id, args);
    json_decref(args);
}

/* hotline.detach: end an attach; the target runs on untouched */
static void cmd_detach(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)a;
    struct lsp_run *r = ((struct run_state *)self)->run;
    if (!r || r->attach_pid <= 0) {
        lsp_reply(s, id, json_pack("{s:b}", "detached", 0));
        return;
    }
    r->stop_requested = 1;
    session_stop(&r->sess); /* the helper: SIGINT detaches it */
    lsp_reply(s, id, json_pack("{s:b, s:i}", "detached", 1, "pid", r->attach_pid));
}

static void cmd_clear(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)a;
    struct run_state *f = self;
    if (f->run) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "a program is running: stop it first");
        return;
    }
    lsp_pview_replace(s, NULL, NULL, NULL);
    send_refresh(s, LSP_PV_DATA | LSP_PV_CLEARED); /* the saved copies go too */
    lsp_reply(s, id, json_pack("{s:b}", "cleared", 1));
}

/* hotline.showProfile; a (borrowed, may be NULL): {"uri", "line"}. */
static void cmd_show(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)self;
    const char *uri = json_string_value(json_object_get(a, "uri"));
    json_t *line = json_object_get(a, "line");
    char *path = uri ? lsp_uri_to_path(uri) : NULL;
    char *text = summary_text(lsp_pview_profile(s), path,
                              json_is_integer(line) ? (int)json_integer_value(line) + 1 : 0);
    free(path);
    if (!text) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "no profile yet: run a program first");
        return;
    }
    if (!json_is_false(json_object_get(a, "show"))) lsp_show(s, LSP_MSG_INFO, "%s", text);
    lsp_reply(s, id, json_pack("{s:s}", "text", text));
    free(text);
}

static void run_output_live(struct lsp_facilities *s, void *self, int on)
{
    (void)s;
    struct run_state *f = self;
    struct lsp_run *r = f ? f->run : NULL;
    if (r && !r->sess.exited) session_request_now(&r->sess, on ? 20 : 0);
}

/* window/workDoneProgress/cancel for the run's progress */
static void on_progress_cancel(struct lsp_facilities *s, void *data)
{
    (void)s;
    struct lsp_run *r = data;
    r->stop_requested = 1;
    session_stop(&r->sess);
}

/* ---- lifecycle --------------------------------------------------------- */

static int run_init(struct lsp_facilities *s, void **self)
{
    (void)s;
    *self = calloc(1, sizeof(struct run_state));
    return *self ? 0 : -ENOMEM;
}

static void run_close(struct lsp_facilities *s, void *self)
{
    struct run_state *f = self;
    if (!f) return;
    f->exiting = 1;
    if (f->run) {
        lsp_log(s, LSP_MSG_INFO, "stopping pid %d: the server is exiting", f->run->sess.pid);
        run_retire(s, f->run);
    }
}

static void run_settings_changed(struct lsp_facilities *s, void *self)
{
    struct run_state *f = self;
    if (lsp_pview_profile(s) || f->run) send_refresh(s, LSP_PV_DATA);
}

static void run_debug_state(struct lsp_facilities *s, void *self, json_t *r)
{
    struct run_state *f = self;
    const struct profile *prof = lsp_pview_profile(s);
    json_object_set_new(r, "profile", json_boolean(prof != NULL));
    if (f->run)
        json_object_set_new(
            r, "run",
            json_pack("{s:i, s:b}", "pid", f->run->sess.pid, "running", !f->run->sess.exited));
    if (prof) json_object_set_new(r, "samples", json_integer(prof->meta.samples));
}

static void run_free_state(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct run_state *f = self;
    if (!f) return;
    /* runs still closing (no loop to finish them) are leaked on purpose only
     * without a loop; with one, run_close + uv_run finished them */
    free(f);
}

static const struct lsp_command run_commands[] = {
    {"hotline.run", cmd_run},
    {"hotline.stop", cmd_stop},
    {"hotline.clear", cmd_clear},
    {"hotline.showProfile", cmd_show},
    {"hotline.attach", cmd_attach},
    {"hotline.detach", cmd_detach},
    {NULL, NULL},
};

const struct lsp_provider lsp_run_provider = {
    .name = "run",
    .init = run_init,
    .commands = run_commands,
    .settings_changed = run_settings_changed,
    .output_live = run_output_live,
    .debug_state = run_debug_state,
    .close = run_close,
    .free = run_free_state,
};
