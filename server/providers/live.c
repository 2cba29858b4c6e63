/* The live line: where a running program is now. Whoever streams the
 * agent's `now` stacks (the run provider for a run or an attach, the kernel
 * provider for agents on the workspace socket) puts the latest into the
 * profile view (lsp_pview_now_*); this provider turns it, at most 20 times
 * a second, into hotline/executing for clients that opted in
 * (core/lsp_exec.h builds it), or into an Information diagnostic on the
 * running line for the others (setting executingFallback, published by the
 * diagnostics provider through LSP_PV_LIVE at most 4 times a second). When
 * the stream ends, a client that got hotline/executing gets {"uri": null}.
 *
 * The marker is shown exactly while the latest `now` of the process that
 * put it there has a thread in the user's code (a frame lsp_exec_user_file
 * accepts, the rule that picks the marker's line): a kernel, a marimo
 * server or an attached process lives on after the cell or the call ended,
 * and its `now` snapshots keep coming (the agent sends them every tick,
 * idle or not), so the first one without user code clears the marker
 * ({"uri": null}, the fallback diagnostic removed) within a tick. Another
 * process's idle snapshot (two kernels streaming) leaves it alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/lsp_exec.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"

#define LIVE_TICK_MS 50     /* hotline/executing: at most 20 per second */
#define LIVE_PUBLISH_MS 250 /* the fallback diagnostic: at most 4 per second */

struct live_state {
    struct lsp_facilities *srv; /* borrowed */
    uv_timer_t tick;
    int tick_open, ticking;
    unsigned long seen;  /* the view's now_seq last turned into a line */
    int shown;           /* a marker is shown (hotline/executing with a uri, or the diagnostic) */
    long long shown_pid; /* the process whose `now` put it there */
    int live_changed;    /* the fallback diagnostic changed, not yet published */
    uint64_t last_publish_ns;
};

/* The fallback for clients without hotline/executing: an Information
 * diagnostic on the running line (new reference), or NULL. Names the same
 * library call as the notification; a labelled stream (a kernel) says so. */
static json_t *live_diagnostic(const struct lsp_pview *v, const json_t *exec)
{
    if (!exec) return NULL;
    char msg[700];
    if (v->now_label[0]) {
        snprintf(msg, sizeof msg, "%s (%s)", json_string_value(json_object_get(exec, "text")),
                 v->now_label);
    } else {
        const char *lib = json_string_value(json_object_get(exec, "call"));
        double el = (double)(uv_hrtime() - v->now_since_ns) / 1e9;
        snprintf(msg, sizeof msg, "\u25b6 running for %.1f s%s%s", el, lib ? " \u2014 in " : "",
                 lib ? lib : "");
    }
    json_int_t line = json_integer_value(json_object_get(exec, "line"));
    return json_pack("{s:s, s:{s:{s:I, s:i}, s:{s:I, s:i}}, s:i, s:s, s:s, s:s}", "uri",
                     json_string_value(json_object_get(exec, "uri")), "range", "start", "line",
                     line, "character", 0, "end", "line", line, "character", 0, "severity", 3,
                     "source", "hotline", "code", "running", "message", msg);
}

static void on_tick(uv_timer_t *t)
{
    struct live_state *f = t->data;
    struct lsp_facilities *s = f->srv;
    const struct lsp_pview *v = s->view;
    if (v->now && v->now_seq != f->seen) {
        f->seen = v->now_seq;
        const char *dirs[] = {v->now_dirs[0], v->now_dirs[1]};
        json_t *exec = lsp_exec_from_now(s, v->now, dirs, 2);
        long long pid = json_integer_value(json_object_get(v->now, "pid"));
        /* no thread in the user's code: clear what this process showed */
        if (exec || (f->shown && pid == f->shown_pid)) {
            if (s->out->executing_optin)
                lsp_notify(s, "hotline/executing",
                           exec ? json_incref(exec) : json_pack("{s:n}", "uri"));
            if (!s->out->executing_optin && lsp_setting_bool(s, "executingFallback", 1)) {
                lsp_pview_set_live(s, live_diagnostic(v, exec));
                f->live_changed = 1;
                if (!exec) f->last_publish_ns = 0; /* a clear goes out at once */
            }
            f->shown = exec != NULL;
            f->shown_pid = pid;
        }
        json_decref(exec);
    }
    if (f->live_changed && (uv_hrtime() - f->last_publish_ns) / 1000000 >= LIVE_PUBLISH_MS) {
        f->live_changed = 0;
        f->last_publish_ns = uv_hrtime();
        lsp_pview_updated(s, LSP_PV_LIVE);
    }
}

static void live_profile_updated(struct lsp_facilities *s, void *self, int what)
{
    struct live_state *f = self;
    if (what & LSP_PV_DATA) { /* a refresh publishes the live line too */
        f->live_changed = 0;
        f->last_publish_ns = uv_hrtime();
    }
    if (!(what & LSP_PV_NOW)) return;
    if (s->view->now_on) { /* began */
        f->seen = s->view->now_seq;
        if (f->tick_open && !f->ticking &&
            !uv_timer_start(&f->tick, on_tick, LIVE_TICK_MS, LIVE_TICK_MS))
            f->ticking = 1;
        return;
    }
    if (f->ticking) uv_timer_stop(&f->tick); /* ended */
    f->ticking = 0;
    f->live_changed = 0;
    if (f->shown && s->out->executing_optin)
        lsp_notify(s, "hotline/executing", json_pack("{s:n}", "uri"));
    f->shown = 0;
}

static int live_init(struct lsp_facilities *s, void **self)
{
    struct live_state *f = calloc(1, sizeof *f);
    if (!f) return -ENOMEM;
    f->srv = s;
    /* the tick only paces what a stream sends: without a loop (the fuzz
     * target) nothing streams */
    if (s->loop && !uv_timer_init(s->loop, &f->tick)) {
        f->tick.data = f;
        f->tick_open = 1;
    }
    *self = f;
    return 0;
}

/* The loop runs the close callback before the core calls free. */
static void live_close(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct live_state *f = self;
    if (f && f->tick_open) uv_close((uv_handle_t *)&f->tick, NULL);
    if (f) f->tick_open = f->ticking = 0;
}

static void live_free(struct lsp_facilities *s, void *self)
{
    (void)s;
    free(self);
}

const struct lsp_provider lsp_live_provider = {
    .name = "live",
    .init = live_init,
    .profile_updated = live_profile_updated,
    .close = live_close,
    .free = live_free,
};
