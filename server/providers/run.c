/* Running a program from the editor: workspace/executeCommand hotline.run /
 * stop / clear / showProfile. The run itself (its session, progress, tick,
 * end, the live line's `now`, throttled refresh requests) is the target
 * slot's (providers/target.h), which it shares with hotline.attach
 * (providers/attach.c): one run or attach at a time per server
 * (= workspace), and hotline.stop ends either. The end of a run is
 * LSP_PV_FINAL to the view's readers (persist.c saves it). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "core/uri.h"
#include "providers/target.h"
#include "store/profile.h"
#include "store/summary.h"

/* The provider's state. */
struct run_state {
    struct target_slot *slot; /* a reference (target_slot_acquire) */
};

extern const struct lsp_provider lsp_run_provider;

/* Start a run from hotline.run arguments (borrowed). id may be NULL (restart):
 * errors then go to showMessage. 0 or negative errno. */
static int start_run(struct lsp_facilities *s, struct target_slot *slot, json_t *id, json_t *a)
{
    const char *uri = json_string_value(json_object_get(a, "uri"));
    const char *cwd = json_string_value(json_object_get(a, "cwd"));
    struct target_spec sp = {.uri = uri,
                             .path = uri ? lsp_uri_to_path(uri) : NULL,
                             .module = json_string_value(json_object_get(a, "module")),
                             .python = json_string_value(json_object_get(a, "python")),
                             .cwd = cwd,
                             .stdin_path = json_string_value(json_object_get(a, "stdin")),
                             .args = json_object_get(a, "args")};
    if (!sp.module && !sp.path) {
        if (id)
            lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.run needs a file: uri");
        else
            lsp_show(s, LSP_MSG_ERROR, "hotline.run needs a file: uri");
        return -EINVAL;
    }
    char dir[PATH_MAX];
    if (sp.path) {
        snprintf(dir, sizeof dir, "%s", sp.path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) *slash = 0;
    } else {
        snprintf(dir, sizeof dir, "%s", cwd ? cwd : s->root_path ? s->root_path : ".");
    }
    sp.dir = dir;
    sp.snapshot = sp.path != NULL; /* the program as it is now on disk is what gets profiled */
    int rc;
    struct lsp_target *t = target_start(s, slot, id, &sp, &rc);
    if (!t) return rc;
    if (id) lsp_reply(s, id, json_pack("{s:b, s:i}", "started", 1, "pid", t->sess.pid));
    target_refresh(s, slot, LSP_PV_DATA); /* old hints go away */
    return 0;
}

/* a restart's arguments (borrowed), once the target before has ended */
static void start_args(struct lsp_facilities *s, json_t *args)
{
    struct run_state *f = lsp_provider_self(s, &lsp_run_provider);
    start_run(s, f->slot, NULL, args);
}

static void cmd_run(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    struct target_slot *slot = ((struct run_state *)self)->slot;
    if (!s->loop) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "this server cannot run programs");
        return;
    }
    if (!json_is_object(a)) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.run needs {\"uri\": ...}");
        return;
    }
    struct lsp_target *t = slot->cur;
    if (t) {
        if (json_is_true(json_object_get(a, "restart"))) {
            json_decref(t->pending);
            t->pending = json_deep_copy(a);
            t->restart = start_args;
            json_object_del(t->pending, "restart");
            target_stop(t);
            lsp_reply(s, id, json_pack("{s:b, s:b}", "started", 0, "restarting", 1));
            return;
        }
        lsp_reply_error(s, id, LSP_REQUEST_FAILED,
                        "a program is already running (pid %d): stop it first, or pass "
                        "\"restart\": true",
                        t->sess.pid);
        return;
    }
    start_run(s, slot, id, a);
}

/* hotline.stop: ends a run, or an attach (the helper detaches) */
static void cmd_stop(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)a;
    struct lsp_target *t = ((struct run_state *)self)->slot->cur;
    if (!t) {
        lsp_reply(s, id, json_pack("{s:b}", "stopped", 0));
        return;
    }
    target_stop(t);
    lsp_reply(s, id, json_pack("{s:b}", "stopped", 1));
}

static void cmd_clear(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)a;
    struct target_slot *slot = ((struct run_state *)self)->slot;
    if (slot->cur) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "a program is running: stop it first");
        return;
    }
    lsp_pview_replace(s, NULL, NULL, NULL);
    target_refresh(s, slot, LSP_PV_DATA | LSP_PV_CLEARED); /* the saved copies go too */
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

/* the live line is shown or not: the target's agent sends `now` or stops */
static void run_output_live(struct lsp_facilities *s, void *self, int on)
{
    (void)s;
    struct run_state *f = self;
    struct lsp_target *t = f ? f->slot->cur : NULL;
    if (t && !t->sess.exited) session_request_now(&t->sess, on ? 20 : 0);
}

/* ---- lifecycle --------------------------------------------------------- */

static int run_init(struct lsp_facilities *s, void **self)
{
    struct run_state *f = calloc(1, sizeof *f);
    if (f) f->slot = target_slot_acquire(s);
    if (f && !f->slot) {
        free(f);
        f = NULL;
    }
    *self = f;
    return f ? 0 : -ENOMEM;
}

static void run_close(struct lsp_facilities *s, void *self)
{
    struct run_state *f = self;
    if (f) target_slot_close(s, f->slot);
}

static void run_settings_changed(struct lsp_facilities *s, void *self)
{
    struct run_state *f = self;
    if (lsp_pview_profile(s) || f->slot->cur) target_refresh(s, f->slot, LSP_PV_DATA);
}

static void run_debug_state(struct lsp_facilities *s, void *self, json_t *r)
{
    struct lsp_target *t = ((struct run_state *)self)->slot->cur;
    const struct profile *prof = lsp_pview_profile(s);
    json_object_set_new(r, "profile", json_boolean(prof != NULL));
    if (t)
        json_object_set_new(
            r, "run", json_pack("{s:i, s:b}", "pid", t->sess.pid, "running", !t->sess.exited));
    if (prof) json_object_set_new(r, "samples", json_integer(prof->meta.samples));
}

static void run_free_state(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct run_state *f = self;
    if (!f) return;
    target_slot_release(f->slot);
    free(f);
}

static const struct lsp_command run_commands[] = {
    {"hotline.run", cmd_run},
    {"hotline.stop", cmd_stop},
    {"hotline.clear", cmd_clear},
    {"hotline.showProfile", cmd_show},
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
