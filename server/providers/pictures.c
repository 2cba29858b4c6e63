/* Pictures: the flame graph and memory timeline of the profile shown, for
 * the editor's own view (VS Code's "Hotline: Show flame graph" webview,
 * docs/pictures.md). The page is the --html report (store/html.c); the
 * client asks once for the page, then polls with the version it holds and
 * gets new data only when the profile changed since: during a run that is a
 * few times a second at most, the client's poll rate, however fast the
 * agents send deltas.
 *
 * workspace/executeCommand "hotline.flameGraph", arguments[0]:
 *   {"page": true}           -> {"version": V, "running": b, "page": "<html..."}
 *   {"since": V}             -> {"version": V, "running": b, "data": {...}}
 *                               or {"version": V, "running": b, "unchanged": true}
 * An error when no profile is shown. */
#include <errno.h>
#include <stdlib.h>

#include "jsonrpc.h"
#include "core/lsp_call.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "store/html.h"

struct pic_state {
    unsigned long version; /* +1 at every change of the profile's data */
};

static int pic_init(struct lsp_facilities *s, void **self)
{
    (void)s;
    *self = calloc(1, sizeof(struct pic_state));
    if (!*self) return -ENOMEM;
    ((struct pic_state *)*self)->version = 1;
    return 0;
}

static void pic_free(struct lsp_facilities *s, void *self)
{
    (void)s;
    free(self);
}

static void pic_updated(struct lsp_facilities *s, void *self, int what)
{
    (void)s;
    struct pic_state *st = self;
    if (what & LSP_PV_DATA) st->version++;
}

static void cmd_flame(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    struct pic_state *st = self;
    const struct profile *p = lsp_pview_profile(s);
    if (!p) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED,
                        "no profile yet: run a program, attach, or load a profile first");
        return;
    }
    json_t *res =
        json_pack("{s:I,s:b}", "version", (json_int_t)st->version, "running", s->view->running);
    json_t *since = json_object_get(a, "since");
    if (!res) goto oom;
    if (json_is_true(json_object_get(a, "page"))) {
        char *page = html_report_page(p, NULL);
        if (!page || json_object_set_new(res, "page", json_string(page))) {
            free(page);
            goto oom;
        }
        free(page);
    } else if (json_is_integer(since) && (unsigned long)json_integer_value(since) == st->version) {
        json_object_set_new(res, "unchanged", json_true());
    } else {
        json_t *d = html_report_data(p);
        if (!d || json_object_set_new(res, "data", d)) goto oom;
    }
    lsp_reply(s, id, res);
    return;
oom:
    json_decref(res);
    lsp_reply_error(s, id, LSP_REQUEST_FAILED, "out of memory building the flame graph");
}

static const struct lsp_command pic_commands[] = {
    {"hotline.flameGraph", cmd_flame},
    {NULL, NULL},
};

const struct lsp_provider lsp_pictures_provider = {
    .name = "pictures",
    .init = pic_init,
    .commands = pic_commands,
    .profile_updated = pic_updated,
    .free = pic_free,
};
