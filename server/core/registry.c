/* The provider registry, the core's side (core/registry.h): which
 * provider serves what, and the answers joined from several providers,
 * so that no provider wraps another's handler. */
#include "core/registry.h"

#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "core/lsp_out.h"

void *lsp_provider_self(struct lsp_facilities *s, const struct lsp_provider *want)
{
    FOR_PROVIDERS(s, i, p, self)
    if (p == want) return self;
    return NULL;
}

const struct lsp_method *lsp_registry_method(struct lsp_facilities *s, const char *method,
                                             int request, void **selfp)
{
    FOR_PROVIDERS(s, i, p, self)
    for (const struct lsp_method *m = p->methods; m && m->method; m++)
        if (!strcmp(m->method, method) && (request ? m->request != NULL : m->notify != NULL)) {
            *selfp = self;
            return m;
        }
    return NULL;
}

/* initialize: the joined capabilities, each provider's own, then
 * codeActionProvider (in the order the answer always had them). */
void lsp_registry_capabilities(struct lsp_facilities *s, json_t *caps)
{
    json_t *cmds = json_array(), *kinds = json_array();
    int lenses = 0, actions = 0;
    void *rself;
    int resolve = lsp_registry_method(s, "codeAction/resolve", 1, &rself) != NULL;
    FOR_PROVIDERS(s, i, p, self)
    {
        (void)self;
        for (const struct lsp_command *c = p->commands; c && c->name; c++)
            json_array_append_new(cmds, json_string(c->name));
        for (const char *const *k = p->code_action_kinds; k && *k; k++)
            json_array_append_new(kinds, json_string(*k));
        lenses |= p->code_lens != NULL;
        actions |= p->code_action != NULL;
    }
    if (json_array_size(cmds))
        json_object_set_new(caps, "executeCommandProvider", json_pack("{s:O}", "commands", cmds));
    if (lenses)
        json_object_set_new(caps, "codeLensProvider", json_pack("{s:b}", "resolveProvider", 0));
    FOR_PROVIDERS(s, i, p, self)
    if (p->initialize) p->initialize(s, self, caps);
    if (actions)
        json_object_set_new(
            caps, "codeActionProvider",
            json_pack("{s:O, s:b}", "codeActionKinds", kinds, "resolveProvider", resolve));
    json_decref(cmds);
    json_decref(kinds);
}

/* workspace/executeCommand: to the provider that lists the command. */
void lsp_registry_execute_command(struct lsp_facilities *s, json_t *id, json_t *params)
{
    const char *cmd = json_string_value(json_object_get(params, "command"));
    json_t *args = json_object_get(params, "arguments");
    json_t *a = json_is_array(args) ? json_array_get(args, 0) : NULL;
    if (!cmd) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS, "executeCommand needs a command");
        return;
    }
    FOR_PROVIDERS(s, i, p, self)
    for (const struct lsp_command *c = p->commands; c && c->name; c++)
        if (!strcmp(c->name, cmd)) {
            c->run(s, self, id, a);
            return;
        }
    lsp_reply_error(s, id, RPC_INVALID_PARAMS, "unknown command %s", cmd);
}

/* textDocument/codeLens: every provider's lenses, in list order, written
 * into one buffer (no jansson tree: thousands of lenses). */
void lsp_registry_code_lens(struct lsp_facilities *s, json_t *id, json_t *params)
{
    struct lsp_buf b = {0};
    lsp_buf_put(&b, "[", 1);
    FOR_PROVIDERS(s, i, p, self)
    if (p->code_lens) p->code_lens(s, self, params, &b);
    lsp_buf_put(&b, "]", 1);
    if (b.oom)
        lsp_reply_error(s, id, RPC_INTERNAL_ERROR, "out of memory");
    else
        lsp_reply_raw(s, id, b.p, b.n);
    free(b.p);
}

/* textDocument/codeAction: every provider's actions. */
void lsp_registry_code_action(struct lsp_facilities *s, json_t *id, json_t *params)
{
    json_t *out = json_array();
    FOR_PROVIDERS(s, i, p, self)
    if (p->code_action) p->code_action(s, self, params, out);
    lsp_reply(s, id, out);
}

/* ---- answer buffers (lsp_provider.h) ---------------------------------- */

char *lsp_buf_room(struct lsp_buf *b, size_t need)
{
    if (b->oom) return NULL;
    if (b->cap - b->n < need) {
        if (need > LSP_BUF_MAX - b->n) {
            b->oom = 1;
            return NULL;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->n < need)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->oom = 1;
            return NULL;
        }
        b->p = np;
        b->cap = cap;
    }
    return b->p + b->n;
}

void lsp_buf_put(struct lsp_buf *b, const char *str, size_t n)
{
    char *w = lsp_buf_room(b, n);
    if (!w) return;
    memcpy(w, str, n);
    b->n += n;
}

void lsp_buf_sep(struct lsp_buf *b)
{
    if (b->n > 1) lsp_buf_put(b, ",", 1);
}
