/* Attaching to a running Python from the editor: workspace/executeCommand
 * hotline.attach / detach. An attach is a run of the `hotline attach`
 * helper in the target slot (providers/target.h) that hotline.run shares:
 * the editor shows what it shows during a run (progress, the live line,
 * hints), hotline.stop ends it as hotline.detach does, and one run or
 * attach at a time per server. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "core/uri.h"
#include "proc/pylist.h"
#include "providers/target.h"

/* The provider's state. */
struct attach_state {
    struct target_slot *slot; /* a reference (target_slot_acquire) */
};

/* Start the helper on pid (checked). 0 or negative errno; id got its reply. */
static int start_attach(struct lsp_facilities *s, struct target_slot *slot, json_t *id, int pid,
                        int memory, int children)
{
    struct pyproc_info target;
    char self_exe[PATH_MAX] = "";
    ssize_t l = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    self_exe[l > 0 ? l : 0] = 0;
    int rc = pyproc_describe(pid, &target);
    if (rc || !self_exe[0]) {
        const char *why = rc == -ESRCH ? "no such process"
                          : rc         ? strerror(-rc)
                                       : "cannot find hotline's own executable";
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "cannot attach to %d: %s", pid, why);
        lsp_show(s, LSP_MSG_ERROR, "hotline: cannot attach to process %d: %s", pid, why);
        return rc ? rc : -ENOENT;
    }
    char *uri = target.main[0] ? lsp_path_to_uri(target.main) : NULL;
    struct target_spec sp = {.uri = uri,
                             .path = uri ? lsp_uri_to_path(uri) : NULL,
                             .attach_pid = pid,
                             .attach_memory = memory,
                             .attach_children = children,
                             .attach_exe = self_exe,
                             .snapshot = 0};
    if (!sp.path) { /* -m, -c, an embedding program: its command */
        char name[64];
        snprintf(name, sizeof name, "process %d", pid);
        sp.path = strdup(name);
    }
    sp.snapshot = sp.path && target.main[0]; /* the best guess at what runs */
    char dir[PATH_MAX];
    if (!target.main[0]) {
        snprintf(dir, sizeof dir, "%s", target.cwd[0] ? target.cwd : "/");
    } else {
        snprintf(dir, sizeof dir, "%s", sp.path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) *slash = 0;
    }
    sp.dir = dir;
    struct lsp_target *t = target_start(s, slot, id, &sp, &rc);
    free(uri);
    if (!t) return rc;
    lsp_reply(s, id,
              json_pack("{s:b, s:i, s:s, s:b}", "attached", 1, "pid", pid, "program", t->path,
                        "memory", memory));
    target_refresh(s, slot, LSP_PV_DATA); /* old hints go away */
    return 0;
}

/* hotline.attach's params (borrowed) checked: NULL, or the error's words
 * (*code its code). */
static const char *check_params(json_t *pid, json_t *memory, json_t *children, int *code)
{
    *code = RPC_INVALID_PARAMS;
    if (!json_is_integer(pid) || json_integer_value(pid) <= 0 || json_integer_value(pid) > INT_MAX)
        return "hotline.attach needs {\"pid\": N}";
    if (memory && !json_is_boolean(memory)) return "hotline.attach: \"memory\" is true or false";
    if (children && !json_is_boolean(children))
        return "hotline.attach: \"children\" is true or false";
    if (json_is_true(children) && json_is_true(memory))
        return "hotline.attach: \"children\" does not go with \"memory\" (the "
               "injected agent is not inherited by children)";
    *code = LSP_REQUEST_FAILED;
    if (json_integer_value(pid) == getpid()) return "that is the Hotline server itself";
    return NULL;
}

/* hotline.attach {pid, memory?, children?}: sample a running Python from
 * outside (cmd_attach.c via the session; children: true follows its Python
 * children too), or with memory: true have gdb inject the agent, whose
 * stream the helper relays (attach_memory.c). */
static void cmd_attach(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    struct target_slot *slot = ((struct attach_state *)self)->slot;
    json_t *pid = json_object_get(a, "pid");
    json_t *memory = json_object_get(a, "memory");
    json_t *children = json_object_get(a, "children");
    int code;
    if (!s->loop) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "this server cannot attach to processes");
        return;
    }
    const char *bad = check_params(pid, memory, children, &code);
    if (bad) {
        lsp_reply_error(s, id, code, "%s", bad);
        return;
    }
    struct lsp_target *t = slot->cur;
    if (t) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "%s is %s (pid %d): stop or detach first",
                        t->path, t->attach_pid > 0 ? "attached" : "running",
                        t->attach_pid > 0 ? t->attach_pid : t->sess.pid);
        return;
    }
    start_attach(s, slot, id, (int)json_integer_value(pid), json_is_true(memory),
                 json_is_true(children));
}

/* hotline.detach: end an attach; the target runs on untouched */
static void cmd_detach(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)a;
    struct lsp_target *t = ((struct attach_state *)self)->slot->cur;
    if (!t || t->attach_pid <= 0) {
        lsp_reply(s, id, json_pack("{s:b}", "detached", 0));
        return;
    }
    target_stop(t); /* the helper: SIGINT detaches it */
    lsp_reply(s, id, json_pack("{s:b, s:i}", "detached", 1, "pid", t->attach_pid));
}

/* ---- lifecycle --------------------------------------------------------- */

static int attach_init(struct lsp_facilities *s, void **self)
{
    struct attach_state *f = calloc(1, sizeof *f);
    if (f) f->slot = target_slot_acquire(s);
    if (f && !f->slot) {
        free(f);
        f = NULL;
    }
    *self = f;
    return f ? 0 : -ENOMEM;
}

static void attach_close(struct lsp_facilities *s, void *self)
{
    struct attach_state *f = self;
    if (f) target_slot_close(s, f->slot); /* a no-op after run.c's */
}

static void attach_free(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct attach_state *f = self;
    if (!f) return;
    target_slot_release(f->slot);
    free(f);
}

static const struct lsp_command attach_commands[] = {
    {"hotline.attach", cmd_attach},
    {"hotline.detach", cmd_detach},
    {NULL, NULL},
};

const struct lsp_provider lsp_attach_provider = {
    .name = "attach",
    .init = attach_init,
    .commands = attach_commands,
    .close = attach_close,
    .free = attach_free,
};
