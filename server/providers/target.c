/* The target slot: the one program under the profiler per server, a run or
 * an attach (target.h). Shared by providers/run.c and providers/attach.c;
 * not a provider itself. Nothing here blocks: the program is a struct
 * session on the server's loop. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "providers/target.h"
#include "core/interp.h"
#include "core/lsp_out.h"
#include "core/lsp_pview.h"
#include "store/profile.h"
#include "store/summary.h"

#define RUN_MAX_ARGS 256
#define LSP_TICK_MS 250 /* progress, refresh requests */

/* the slots of the live servers: one per server, found by its facilities
 * (only the loop's thread touches them) */
static struct target_slot *slots;

struct target_slot *target_slot_acquire(struct lsp_facilities *s)
{
    struct target_slot *slot;
    for (slot = slots; slot; slot = slot->next_slot)
        if (slot->srv == s) {
            slot->refs++;
            return slot;
        }
    slot = calloc(1, sizeof *slot);
    if (!slot) return NULL;
    slot->srv = s;
    slot->refs = 1;
    slot->next_slot = slots;
    slots = slot;
    return slot;
}

void target_slot_release(struct target_slot *slot)
{
    if (!slot || --slot->refs > 0) return;
    for (struct target_slot **pp = &slots; *pp; pp = &(*pp)->next_slot)
        if (*pp == slot) {
            *pp = slot->next_slot;
            break;
        }
    /* targets still closing (no loop to finish them) are leaked on purpose
     * only without a loop; with one, target_slot_close + uv_run finished them */
    free(slot);
}

static uint64_t ms_since(uint64_t ns)
{
    return (uv_hrtime() - ns) / 1000000;
}

/* ---- progress, refresh ------------------------------------------------- */

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

void target_refresh(struct lsp_facilities *s, struct target_slot *slot, int what)
{
    slot->dirty = 0;
    slot->last_refresh_ns = uv_hrtime();
    lsp_pview_updated(s, what); /* refresh requests, diagnostics, persistence */
}

static void on_tick(uv_timer_t *timer)
{
    struct lsp_target *r = timer->data;
    struct lsp_facilities *s = r->srv;
    struct target_slot *f = r->slot;
    const struct profile *prof = lsp_pview_profile(s);
    if (ms_since(f->last_refresh_ns) < LSP_TICK_MS) return;
    if (lsp_progress_begun(&r->progress)) {
        char msg[256], hot[160];
        double t = (double)(uv_hrtime() - r->start_ns) / 1e9;
        hottest_line(s, hot, sizeof hot);
        if (r->attach_memory && (!prof || prof->meta.samples == 0)) /* gdb at work */
            snprintf(msg, sizeof msg, "%.1f s · injecting Hotline's agent (gdb)", t);
        else
            snprintf(msg, sizeof msg, "%.1f s · %lld samples%s", t, prof ? prof->meta.samples : 0,
                     hot);
        lsp_progress_report(s, &r->progress, msg);
    }
    if (f->dirty)
        target_refresh(s, f, LSP_PV_DATA);
    else
        f->last_refresh_ns = uv_hrtime();
}

/* window/workDoneProgress/cancel for the target's progress */
static void on_progress_cancel(struct lsp_facilities *s, void *data)
{
    (void)s;
    target_stop(data);
}

void target_stop(struct lsp_target *t)
{
    t->stop_requested = 1;
    session_stop(&t->sess); /* the attach helper: SIGINT detaches it */
}

/* ---- session callbacks ------------------------------------------------- */

static void on_delta(struct session *ss, void *ud)
{
    (void)ss;
    struct lsp_target *r = ud;
    r->slot->dirty = 1;
}

static void on_now(struct session *ss, const json_t *now, void *ud)
{
    (void)ss;
    struct lsp_target *r = ud;
    if (r->slot->cur == r) lsp_pview_set_now(r->srv, now); /* providers/live.c */
}

static void on_error(struct session *ss, const char *msg, void *ud)
{
    (void)ss;
    struct lsp_target *r = ud;
    lsp_log(r->srv, LSP_MSG_WARNING, "run: %s", msg);
}

/* the attach helper names a child it does not follow (or follows): shown */
static void on_notice(struct session *ss, const char *msg, void *ud)
{
    (void)ss;
    struct lsp_target *r = ud;
    lsp_show(r->srv, LSP_MSG_INFO, "hotline: %s", msg);
}

static void target_free(struct lsp_target *r)
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
    struct lsp_target *r = h->data;
    r->tick_open = 0;
    if (!r->sess.io && r->sess.closing) /* the session finished closing first */
        target_free(r);
}

static void on_sess_closed(struct session *ss)
{
    struct lsp_target *r = (struct lsp_target *)ss;
    struct target_slot *f = r->slot;
    for (struct lsp_target **pp = &f->closing; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    if (!r->tick_open) target_free(r);
}

/* Take r out of its slot and close it (kills the program if still running). */
static void target_retire(struct lsp_facilities *s, struct lsp_target *r)
{
    struct target_slot *f = r->slot;
    if (f->cur == r) {
        f->cur = NULL;
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

void target_slot_close(struct lsp_facilities *s, struct target_slot *slot)
{
    if (!slot) return;
    slot->exiting = 1;
    if (slot->cur) {
        lsp_log(s, LSP_MSG_INFO, "stopping pid %d: the server is exiting", slot->cur->sess.pid);
        target_retire(s, slot->cur);
    }
}

/* ---- the end ----------------------------------------------------------- */

/* The params of hotline/runEnded (new), the documented end of a run, or NULL
 * for a client that takes no hotline notifications (it opted into neither
 * hotline/executing nor experimental.hotlineRunEnded). reason: the end
 * message's words ("exited 0", "stopped"). Sent after the final refresh, so
 * a client that refreshes its views on it gets the finished run's data. */
static json_t *run_ended_params(struct lsp_facilities *s, struct lsp_target *r,
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

/* The profile's exit fields and reason (the end message's words) from ss. */
static void record_exit(struct lsp_target *r, const struct session *ss, char *reason, size_t n)
{
    struct prof_meta *m = &r->store->meta;
    m->elapsed_s = ss->elapsed_s;
    m->exit_status = ss->exit_status;
    m->exit_signal = ss->term_signal;
    profile_describe_exit(ss->exit_status, ss->term_signal, reason, n);
    if (r->attach_pid > 0) /* the helper's status: 0 detached or target gone */
        snprintf(reason, n, "%s",
                 r->stop_requested                            ? "detached"
                 : ss->agent_error[0] || ss->exit_status != 0 ? "attach failed"
                                                              : "target exited");
    else if (r->stop_requested) /* SIGINT may end it as "exited 1" (KeyboardInterrupt) */
        snprintf(reason, n, "stopped");
    profile_set_str(&m->reason, reason);
}

/* The end's messages: how it ended and, when it failed, the last line of
 * its output (usually the exception, or the helper's own words). */
static void show_end(struct lsp_facilities *s, struct lsp_target *r, struct session *ss,
                     const char *reason)
{
    const struct prof_meta *m = &r->store->meta;
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
}

static void on_exit_cb(struct session *ss, void *ud)
{
    struct lsp_target *r = ud;
    struct lsp_facilities *s = r->srv;
    struct target_slot *f = r->slot;
    char reason[128];
    uv_timer_stop(&r->tick);
    record_exit(r, ss, reason, sizeof reason);
    show_end(s, r, ss, reason);
    lsp_pview_set_leaks(s, profile_leak_set_new(lsp_pview_profile(s)));
    json_t *ended = run_ended_params(s, r, ss, reason); /* new, or NULL */
    lsp_progress_end(s, &r->progress,
                     r->attach_pid > 0   ? "detached"
                     : r->stop_requested ? "stopped"
                                         : "done");
    lsp_pview_now_end(s); /* hotline/executing {"uri": null} (providers/live.c) */
    json_t *pending = r->pending;
    target_restart_fn restart = r->restart;
    r->pending = NULL;
    target_retire(s, r);
    lsp_pview_compare(s); /* against the same program's run before, once, for every reader */
    target_refresh(s, f, LSP_PV_DATA | LSP_PV_FINAL); /* final hints, lenses, diagnostics; saved */
    if (ended) lsp_notify(s, "hotline/runEnded", ended);
    if (pending && restart && !f->exiting) restart(s, pending);
    json_decref(pending);
}

/* ---- the start --------------------------------------------------------- */

static char **str_array(json_t *a, int *n)
{
    size_t cnt = json_is_array(a) ? json_array_size(a) : 0;
    if (cnt > RUN_MAX_ARGS) cnt = RUN_MAX_ARGS;
    char **v = calloc(cnt + 1, sizeof *v);
    *n = 0;
    if (!v) return NULL;
    for (size_t i = 0; i < cnt; i++) {
        const char *sv = json_string_value(json_array_get(a, i));
        if (sv) v[(*n)++] = (char *)sv;
    }
    return v;
}

/* session_start with sp and the settings (include, exclude, interval,
 * memory, extra args) into store. 0 or negative errno. */
static int start_session(struct lsp_facilities *s, struct lsp_target *r,
                         const struct target_spec *sp, const char *python, struct profile *store)
{
    int nargs = 0, ninc = 0, nexc = 0;
    /* extra arguments from the settings come first, then this run's */
    json_t *all = json_array();
    json_array_extend(all, json_is_array(lsp_setting(s, "args")) ? lsp_setting(s, "args") : all);
    if (json_is_array(sp->args)) json_array_extend(all, sp->args);
    char **args = str_array(all, &nargs);
    char **inc = str_array(lsp_setting(s, "include"), &ninc);
    char **exc = str_array(lsp_setting(s, "exclude"), &nexc);
    struct session_opts o = {.python = python,
                             .script = sp->module ? NULL : r->path,
                             .module = sp->module,
                             .args = args,
                             .nargs = sp->attach_pid > 0 ? 0 : nargs,
                             .cwd = sp->cwd ? sp->cwd : r->main_dir,
                             .interval_ms = lsp_setting_num(s, "intervalMs", 0),
                             .profile_all = lsp_setting_bool(s, "profileAll", 0),
                             .all_threads = lsp_setting_bool(s, "allThreads", 0),
                             .include = inc,
                             .ninclude = ninc,
                             .exclude = exc,
                             .nexclude = nexc,
                             .memory = lsp_setting_bool(s, "memory", 1),
                             .stdin_path = sp->stdin_path,
                             .attach_pid = sp->attach_pid,
                             .attach_memory = sp->attach_memory,
                             .attach_children = sp->attach_children,
                             .attach_exe = sp->attach_exe};
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
    return rc;
}

/* A started r becomes the slot's: the view's profile, the live line, the
 * tick, the progress. */
static void begin(struct lsp_facilities *s, struct target_slot *f, struct lsp_target *r,
                  const struct target_spec *sp, struct profile *store)
{
    /* the new profile replaces the old one from now on (a target that is
     * still closing has had its on_exit: it no longer touches its store) */
    lsp_pview_replace(s, store, NULL, NULL);
    r->store = store;
    r->attach_pid = sp->attach_pid;
    r->attach_memory = sp->attach_memory;
    if (sp->snapshot) lsp_pview_snapshot(s, r->path); /* what runs is the file as it is now */
    f->cur = r;
    lsp_pview_set_running(s, 1);
    f->started++;
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
    snprintf(token, sizeof token, "hotline-run-%d", f->started);
    lsp_progress_start(s, &r->progress, token, "Hotline",
                       r->attach_memory ? "attaching with memory: injecting Hotline's agent (gdb)"
                       : r->attach_pid > 0 ? "attaching"
                                           : "starting",
                       on_progress_cancel, r);
}

struct lsp_target *target_start(struct lsp_facilities *s, struct target_slot *slot, json_t *id,
                                struct target_spec *sp, int *rc)
{
    const char *python = sp->python ? sp->python : json_string_value(lsp_setting(s, "python"));
    struct lsp_target *r = calloc(1, sizeof *r);
    if (!r) {
        free(sp->path);
        *rc = -ENOMEM;
        return NULL;
    }
    r->srv = s;
    r->slot = slot;
    r->path = sp->path ? sp->path : strdup(sp->module);
    sp->path = NULL;
    r->uri = strdup(sp->uri ? sp->uri : "");
    char real[PATH_MAX]; /* frames name files by their real path more often than not */
    r->main_dir = strdup(realpath(sp->dir, real) ? real : sp->dir);
    r->main_dir_given = strdup(sp->dir);
    struct profile *store = profile_new();
    *rc = start_session(s, r, sp, python, store);
    if (*rc) {
        const char *why = *rc == -ENOMEM ? "out of memory" : r->sess.errmsg;
        if (id) lsp_reply_error(s, id, LSP_REQUEST_FAILED, "cannot run: %s", why);
        lsp_show(s, LSP_MSG_ERROR, "hotline: cannot run %s: %s", r->path, why);
        profile_free(store);
        target_free(r);
        return NULL;
    }
    if (sp->attach_pid <= 0) { /* the user ran the program with it: Optimize may run it too */
        char pybuf[PATH_MAX];
        lsp_interp_ran(s, lsp_interp_exe(python, pybuf, sizeof pybuf));
    }
    begin(s, slot, r, sp, store);
    return r;
}
