/* Document sync: textDocument/didOpen, didChange and didClose, and the
 * same for the cells of notebooks (the notebook provider calls lsp_doc_*).
 * The core's document store changes first, then the profile view's
 * anchors, then every provider's document hooks. */
#include "core/docsync.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lsp_call.h"
#include "core/lsp_out.h"
#include "core/lsp_pview.h"
#include "core/notebook.h"
#include "core/registry.h"

/* Document sync: the profile view's anchors first, then the providers. */
static void doc_hook_opened(struct lsp_facilities *s, struct doc *d)
{
    lsp_pview_doc_opened(s, d);
    FOR_PROVIDERS(s, i, p, self)
    if (p->doc_opened) p->doc_opened(s, self, d);
}

static void doc_hook_closed(struct lsp_facilities *s, const char *uri)
{
    lsp_pview_doc_closed(s, uri);
    FOR_PROVIDERS(s, i, p, self)
    if (p->doc_closed) p->doc_closed(s, self, uri);
}

static int text_document(struct lsp_facilities *s, json_t *params, const char *what,
                         const char **uri, json_t **td)
{
    *td = json_is_object(params) ? json_object_get(params, "textDocument") : NULL;
    *uri = json_string_value(json_object_get(*td, "uri"));
    if (!*uri) {
        lsp_log(s, LSP_MSG_ERROR, "%s without textDocument.uri", what);
        return -EINVAL;
    }
    return 0;
}

int lsp_doc_open(struct lsp_facilities *s, json_t *td, const char *what)
{
    const char *uri = json_string_value(json_object_get(td, "uri"));
    json_t *text = json_object_get(td, "text");
    if (!uri) {
        lsp_log(s, LSP_MSG_ERROR, "%s without a document uri", what);
        return -EINVAL;
    }
    if (!json_is_string(text)) {
        lsp_log(s, LSP_MSG_ERROR, "%s %s without text", what, uri);
        return -EINVAL;
    }
    int version = (int)json_integer_value(json_object_get(td, "version"));
    int rc = doc_open(&s->docs, uri, json_string_value(json_object_get(td, "languageId")), version,
                      json_string_value(text), json_string_length(text));
    if (rc)
        lsp_log(s, LSP_MSG_ERROR, "cannot open %s: %s", uri, strerror(-rc));
    else
        doc_hook_opened(s, doc_find(&s->docs, uri));
    return rc;
}

void lsp_doc_did_open(struct lsp_facilities *s, json_t *params)
{
    const char *uri;
    json_t *td;
    if (text_document(s, params, "didOpen", &uri, &td)) return;
    lsp_doc_open(s, td, "didOpen");
}

/* A change could not be applied (-ENOMEM, -EFBIG): our copy of uri no longer
 * matches the editor's, and its anchors would put hints on the wrong lines.
 * LSP has no way to ask the client for the full text again, so the document
 * is closed on our side (anchors dropped, no hints, lenses or Optimize on it)
 * until the editor reopens it, and the user is told so. */
static void doc_desync(struct lsp_facilities *s, const char *uri, int rc)
{
    lsp_log(s, LSP_MSG_ERROR,
            "didChange %s: %s: the server's copy is out of step; closed it until it is reopened",
            uri, strerror(-rc));
    lsp_show(s, LSP_MSG_WARNING,
             "Hotline: an edit to %s could not be applied (%s); its profile hints are off "
             "until you close and reopen it",
             uri, strerror(-rc));
    doc_close(&s->docs, uri);
    doc_hook_closed(s, uri);
    /* hints already shown for it go away */
    if (json_is_true(lsp_client_cap(s, "workspace.inlayHint.refreshSupport")))
        lsp_call(s, "workspace/inlayHint/refresh", NULL, NULL, NULL);
    if (json_is_true(lsp_client_cap(s, "workspace.codeLens.refreshSupport")))
        lsp_call(s, "workspace/codeLens/refresh", NULL, NULL, NULL);
}

void lsp_doc_change(struct lsp_facilities *s, const char *uri, json_t *version, json_t *changes)
{
    struct doc *d = doc_find(&s->docs, uri);
    if (!d) {
        lsp_log(s, LSP_MSG_ERROR, "didChange for %s, which is not open", uri);
        return;
    }
    if (!json_is_array(changes)) {
        lsp_log(s, LSP_MSG_ERROR, "didChange %s without contentChanges", uri);
        return;
    }
    if (json_is_integer(version) && json_integer_value(version) <= d->version)
        lsp_log(s, LSP_MSG_WARNING, "didChange %s: version %d after %d", uri,
                (int)json_integer_value(version), d->version);
    size_t i;
    json_t *c;
    json_array_foreach(changes, i, c)
    {
        json_t *text = json_object_get(c, "text");
        json_t *range = json_object_get(c, "range");
        if (!json_is_string(text)) {
            lsp_log(s, LSP_MSG_ERROR, "didChange %s: change %zu has no text", uri, i);
            continue;
        }
        json_int_t l0 = 0, c0 = 0, l1 = 0, c1 = 0;
        int has_range = range != NULL;
        if (has_range && json_unpack(range, "{s:{s:I, s:I}, s:{s:I, s:I}}", "start", "line", &l0,
                                     "character", &c0, "end", "line", &l1, "character", &c1)) {
            lsp_log(s, LSP_MSG_ERROR, "didChange %s: change %zu has a malformed range", uri, i);
            continue;
        }
        if (l0 < 0 || c0 < 0 || l1 < 0 || c1 < 0) {
            lsp_log(s, LSP_MSG_ERROR, "didChange %s: negative position", uri);
            continue;
        }
        struct doc_edit edit;
        int rc =
            doc_apply_change(d, has_range, (uint32_t)l0, (uint32_t)c0, (uint32_t)l1, (uint32_t)c1,
                             json_string_value(text), json_string_length(text), s->out->enc, &edit);
        if (rc == -ERANGE) {
            lsp_log(s, LSP_MSG_WARNING, "didChange %s: range out of the document, clamped", uri);
        } else if (rc) {
            doc_desync(s, uri, rc); /* d is gone; later changes cannot apply either */
            return;
        }
        lsp_nb_text_changed(s->nbs, d->uri); /* a cell's hash first: the view asks for it */
        lsp_pview_doc_edited(s, d, &edit);
        FOR_PROVIDERS(s, k, p, self)
        if (p->doc_edited) p->doc_edited(s, self, d, &edit);
    }
    if (json_is_integer(version)) d->version = (int)json_integer_value(version);
}

void lsp_doc_did_change(struct lsp_facilities *s, json_t *params)
{
    const char *uri;
    json_t *td;
    if (text_document(s, params, "didChange", &uri, &td)) return;
    lsp_doc_change(s, uri, json_object_get(td, "version"),
                   json_object_get(params, "contentChanges"));
}

int lsp_doc_close(struct lsp_facilities *s, const char *uri)
{
    int rc = doc_close(&s->docs, uri);
    if (rc)
        lsp_log(s, LSP_MSG_WARNING, "didClose for %s, which is not open", uri);
    else
        doc_hook_closed(s, uri);
    return rc;
}

void lsp_doc_did_close(struct lsp_facilities *s, json_t *params)
{
    const char *uri;
    json_t *td;
    if (text_document(s, params, "didClose", &uri, &td)) return;
    lsp_doc_close(s, uri);
}
