/* Outgoing requests and work-done progress (lsp_call.h). */
#include "core/lsp_call.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "core/lsp_out.h"

#define CALL_ID_PREFIX "hotline-"

long lsp_call(struct lsp_facilities *s, const char *method, json_t *params, lsp_call_fn cb,
              void *data)
{
    if (cb && s->calls->n >= LSP_MAX_CALLS) {
        json_decref(params);
        return -EBUSY;
    }
    char sid[48];
    long id = ++s->calls->next_id;
    snprintf(sid, sizeof sid, CALL_ID_PREFIX "%ld", id);
    json_t *msg = rpc_request(json_string(sid), method, params);
    if (!msg) return -ENOMEM;
    if (cb)
        s->calls->pending[s->calls->n++] = (struct lsp_pending){.id = id, .cb = cb, .data = data};
    lsp_send(s, msg);
    return id;
}

static int find(struct lsp_facilities *s, long id)
{
    for (int i = 0; i < s->calls->n; i++)
        if (s->calls->pending[i].id == id) return i;
    return -1;
}

static void remove_at(struct lsp_facilities *s, int i)
{
    s->calls->pending[i] = s->calls->pending[--s->calls->n];
}

void lsp_call_forget(struct lsp_facilities *s, long id)
{
    int i = id > 0 ? find(s, id) : -1;
    if (i >= 0) remove_at(s, i);
}

/* Our ids are "hotline-<n>" with n > 0; anything else is not ours: 0. */
static long parse_id(json_t *id)
{
    const char *v = json_string_value(id);
    size_t np = sizeof CALL_ID_PREFIX - 1;
    if (!v || strncmp(v, CALL_ID_PREFIX, np) || v[np] < '1' || v[np] > '9') return 0;
    char *end;
    long n = strtol(v + np, &end, 10);
    return *end ? 0 : n;
}

void lsp_call_answered(struct lsp_facilities *s, json_t *id, json_t *result, json_t *error)
{
    long n = parse_id(id);
    int i = n ? find(s, n) : -1;
    if (i < 0) return;
    struct lsp_pending c = s->calls->pending[i];
    remove_at(s, i); /* before the callback, which may call again */
    c.cb(s, c.data, result, error);
}

int lsp_calls_pending(struct lsp_facilities *s)
{
    return s->calls->n;
}

/* ---- progress ---------------------------------------------------------- */

static void unlink_progress(struct lsp_facilities *s, struct lsp_progress *p)
{
    for (struct lsp_progress **pp = &s->calls->progresses; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    p->next = NULL;
}

static void send_progress(struct lsp_facilities *s, struct lsp_progress *p, const char *kind,
                          const char *message)
{
    json_t *v = json_pack("{s:s}", "kind", kind);
    if (!strcmp(kind, "begin")) {
        json_object_set_new(v, "title", json_string(p->title));
        json_object_set_new(v, "cancellable", json_boolean(p->on_cancel != NULL));
    }
    if (message) json_object_set_new(v, "message", json_string(message));
    lsp_notify(s, "$/progress", json_pack("{s:s, s:o}", "token", p->token, "value", v));
}

static void on_created(struct lsp_facilities *s, void *data, json_t *result, json_t *error)
{
    (void)result;
    struct lsp_progress *p = data;
    p->create_id = 0;
    if (p->state != LSP_PROGRESS_CREATING) return;
    if (error) { /* the client refused: no progress for this one */
        p->state = LSP_PROGRESS_NONE;
        return;
    }
    send_progress(s, p, "begin", p->message[0] ? p->message : NULL);
    p->state = LSP_PROGRESS_BEGUN;
}

void lsp_progress_start(struct lsp_facilities *s, struct lsp_progress *p, const char *token,
                        const char *title, const char *message,
                        void (*on_cancel)(struct lsp_facilities *s, void *data), void *data)
{
    memset(p, 0, sizeof *p);
    if (!json_is_true(lsp_client_cap(s, "window.workDoneProgress"))) return;
    snprintf(p->token, sizeof p->token, "%s", token);
    snprintf(p->title, sizeof p->title, "%s", title);
    snprintf(p->message, sizeof p->message, "%s", message ? message : "");
    p->on_cancel = on_cancel;
    p->data = data;
    long id = lsp_call(s, "window/workDoneProgress/create", json_pack("{s:s}", "token", token),
                       on_created, p);
    if (id < 0) return;
    p->create_id = id;
    p->state = LSP_PROGRESS_CREATING;
    p->next = s->calls->progresses;
    s->calls->progresses = p;
}

int lsp_progress_begun(const struct lsp_progress *p)
{
    return p->state == LSP_PROGRESS_BEGUN;
}

void lsp_progress_report(struct lsp_facilities *s, struct lsp_progress *p, const char *message)
{
    if (p->state == LSP_PROGRESS_BEGUN) send_progress(s, p, "report", message);
}

void lsp_progress_drop(struct lsp_facilities *s, struct lsp_progress *p)
{
    if (p->create_id) lsp_call_forget(s, p->create_id);
    p->create_id = 0;
    unlink_progress(s, p);
    p->state = LSP_PROGRESS_ENDED;
}

void lsp_progress_end(struct lsp_facilities *s, struct lsp_progress *p, const char *message)
{
    if (p->state == LSP_PROGRESS_BEGUN) send_progress(s, p, "end", message);
    lsp_progress_drop(s, p);
}

void lsp_progress_cancel(struct lsp_facilities *s, const char *token)
{
    for (struct lsp_progress *p = s->calls->progresses; p && token; p = p->next)
        if (!strcmp(p->token, token)) {
            if (p->on_cancel) p->on_cancel(s, p->data);
            return;
        }
}
