/* Diagnostics: likely leaks (Warning), the hottest lines when the user asks
 * for them (diagnostics.hotLines, Information), and the live line of a
 * running program for clients without hotline/executing. A subscriber of the
 * core's profile view: it republishes when the view says the profile or the
 * live line changed (profile_updated), and when a document opened or closed
 * under another name than the profile's moves a file's diagnostics. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lsp_call.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "core/notebook.h"
#include "store/summary.h"
#include "core/uri.h"

#define DIAG_MAX_LINES 100
#define DIAG_DOCS_URL "https://github.com/hotline-profiler/hotline/blob/main/docs/lsp.md"

struct diag_state {
    json_t *uris;    /* owned array of URIs we published diagnostics for */
    int initialized; /* the client sent `initialized` */
};

static json_t *diag(long line, int severity, const char *code, const char *msg)
{
    return json_pack("{s:{s:{s:I, s:i}, s:{s:I, s:i}}, s:i, s:s, s:s, s:s, s:{s:s}}", "range",
                     "start", "line", (json_int_t)line, "character", 0, "end", "line",
                     (json_int_t)line, "character", 0, "severity", severity, "source", "hotline",
                     "code", code, "message", msg, "codeDescription", "href", DIAG_DOCS_URL);
}

static json_t *uri_list(json_t *by_uri, const char *uri)
{
    json_t *a = json_object_get(by_uri, uri);
    if (!a) {
        a = json_array();
        json_object_set_new(by_uri, uri, a);
    }
    return a;
}

/* An open document and the profiled file it is (NULL: none). */
struct open_file {
    struct doc *d;
    const struct prof_file *pf;
};

/* The open documents (new array, *n entries; NULL when none or ENOMEM),
 * each with its profiled file found by path or by real path, or for a
 * notebook cell by its text's hash (lsp_pview_doc_file), so that
 * diagnostics go to the URI the client has open: after a run through a
 * symlinked folder the profile names the file by the symlinked path while
 * the editor may show it by its real path; a kernel's profile names a
 * cell by a file the editor never opens. */
static struct open_file *open_files(struct lsp_facilities *s, size_t *n)
{
    *n = 0;
    struct open_file *of = s->docs.count ? malloc(s->docs.count * sizeof *of) : NULL;
    if (!of) return NULL;
    for (size_t b = 0; b < s->docs.nbuckets; b++)
        for (struct doc *d = s->docs.buckets[b]; d && *n < s->docs.count; d = d->next) {
            of[*n].d = d;
            of[*n].pf = lsp_pview_doc_file(s, d, NULL); /* a notebook cell too */
            (*n)++;
        }
    return of;
}

/* Add a diagnostic on profiled line `line` (1-based) of pf (stored as path)
 * to by_uri: on every open document that is this file, where the line is
 * still the profiled one (anchor and snapshot); when none is open, under the
 * file's own URI at the profiled line. */
static void add_line_diag(struct lsp_facilities *s, json_t *by_uri, const struct open_file *of,
                          size_t nof, const struct prof_file *pf, const char *path, int line,
                          int severity, const char *code, const char *msg)
{
    int open = 0;
    for (size_t k = 0; pf && k < nof; k++) {
        if (of[k].pf != pf) continue;
        open = 1;
        struct lsp_docview v;
        long cur = lsp_docview_open(s, of[k].d, &v) ? -1 : lsp_docview_find(&v, line);
        if (cur >= 0)
            json_array_append_new(uri_list(by_uri, v.d->uri), diag(cur, severity, code, msg));
    }
    if (open || line < 1) return;
    char *uri = lsp_path_to_uri(path);
    if (uri) json_array_append_new(uri_list(by_uri, uri), diag(line - 1, severity, code, msg));
    free(uri);
}

/* Publish the diagnostics of the profile view (+ its live line), each under
 * the URI of the open document that is its file (by path or real path),
 * else under the file's own URI; URIs published before and not now are
 * cleared. */
static void publish(struct lsp_facilities *s, struct diag_state *f)
{
    const struct profile *prof = lsp_pview_profile(s);
    const json_t *live = s->view->live;
    json_t *by_uri = json_object();
    size_t nof;
    struct open_file *of = open_files(s, &nof);
    int hot = (int)lsp_setting_num(s, "diagnostics.hotLines", 0);
    if (prof && hot > 0) {
        struct prof_line_ref refs[DIAG_MAX_LINES];
        size_t n =
            profile_top_lines(prof, refs, hot > DIAG_MAX_LINES ? DIAG_MAX_LINES : (size_t)hot);
        for (size_t i = 0; i < n; i++) {
            char msg[160];
            snprintf(msg, sizeof msg, "hot line #%zu: %.1f%% of the run", i + 1,
                     summary_share(prof, refs[i].st));
            add_line_diag(s, by_uri, of, nof, refs[i].file, refs[i].file->path, refs[i].line, 3,
                          "hot-line", msg);
        }
    }
    /* read from memprof's own records (taken when the profile was last
     * completed), not through their JSON */
    const struct memprof_leak_set *ls =
        lsp_setting_bool(s, "diagnostics.leaks", 1) ? s->view->leaks : NULL;
    for (size_t k = 0; ls && k < ls->n; k++) {
        const struct memprof_leak_file *lf = &ls->files[k];
        const struct prof_file *pf = prof ? profile_file(prof, lf->path) : NULL;
        for (size_t i = 0; i < lf->n && i < DIAG_MAX_LINES; i++) {
            const struct memprof_leak *e = &lf->l[i];
            char msg[256];
            /* the likelihood as the saved profile rounds it (2 decimals) */
            snprintf(msg, sizeof msg,
                     "likely leak: memory grows %.2f MB/s here, %.1f MB still held at the end "
                     "(likelihood %.0f%%)",
                     e->rate_mb_s, e->kept_mb, 100 * (round(e->likelihood * 100) / 100));
            add_line_diag(s, by_uri, of, nof, pf, lf->path, e->line, 2, "leak", msg);
        }
    }
    const char *luri = live ? json_string_value(json_object_get(live, "uri")) : NULL;
    if (luri) {
        /* the running line: on the open document that is that file, when one is */
        char *path = lsp_uri_to_path(luri);
        const struct prof_file *pf = path ? lsp_pview_file(s, path) : NULL;
        for (size_t k = 0; pf && k < nof; k++)
            if (of[k].pf == pf) {
                luri = of[k].d->uri;
                break;
            }
        free(path);
        json_t *d = json_copy((json_t *)live); /* "uri" routes it; not part of a Diagnostic */
        json_object_del(d, "uri");
        json_array_append_new(uri_list(by_uri, luri), d);
    }
    free(of);
    /* clear the URIs that had diagnostics and have none now */
    size_t i;
    json_t *u;
    json_array_foreach(f->uris, i, u)
    {
        if (!json_object_get(by_uri, json_string_value(u)))
            lsp_notify(s, "textDocument/publishDiagnostics",
                       json_pack("{s:O, s:[]}", "uri", u, "diagnostics"));
    }
    json_array_clear(f->uris);
    const char *k;
    json_t *list;
    json_object_foreach(by_uri, k, list)
    {
        json_array_append_new(f->uris, json_string(k));
        lsp_notify(s, "textDocument/publishDiagnostics",
                   json_pack("{s:s, s:O}", "uri", k, "diagnostics", list));
    }
    json_decref(by_uri);
}

/* A document opened or closed under another name than the profile's (a
 * symlink, a notebook cell) moves its file's diagnostics between the two
 * URIs. A cell's URI is no path: whether it was a cell is not known any
 * more once it closed, so any such close republishes. */
static void republish_if_renamed(struct lsp_facilities *s, struct diag_state *f, const char *uri)
{
    if (!f->initialized || !s->running || !lsp_pview_profile(s)) return;
    char *path = lsp_uri_to_path(uri);
    struct doc *d = path ? NULL : doc_find(&s->docs, uri);
    const struct prof_file *pf = path ? lsp_pview_file(s, path) : NULL;
    if ((pf && strcmp(path, pf->path)) || (!path && (!d || lsp_pview_doc_file(s, d, NULL))))
        publish(s, f);
    free(path);
}

/* An edit to a notebook cell changes which cell file (if any) it is: its
 * diagnostics come or go with it. */
static void diag_doc_edited(struct lsp_facilities *s, void *self, struct doc *d,
                            const struct doc_edit *e)
{
    struct diag_state *f = self;
    (void)e;
    if (f->initialized && s->running && lsp_pview_profile(s) && !lsp_nb_cell_hash(s, d->uri, NULL))
        publish(s, f);
}

static int diag_init(struct lsp_facilities *s, void **self)
{
    (void)s;
    struct diag_state *f = calloc(1, sizeof *f);
    if (f) f->uris = json_array();
    if (!f || !f->uris) {
        free(f);
        return -ENOMEM;
    }
    *self = f;
    return 0;
}

static void diag_initialized(struct lsp_facilities *s, void *self)
{
    struct diag_state *f = self;
    f->initialized = 1; /* a profile still loading is published when it is in */
    if (lsp_pview_profile(s)) publish(s, f);
}

static void diag_profile_updated(struct lsp_facilities *s, void *self, int what)
{
    if (what & (LSP_PV_DATA | LSP_PV_LIVE)) /* new data or only the live line */
        publish(s, self);
}

static void diag_doc_opened(struct lsp_facilities *s, void *self, struct doc *d)
{
    republish_if_renamed(s, self, d->uri);
}

static void diag_doc_closed(struct lsp_facilities *s, void *self, const char *uri)
{
    republish_if_renamed(s, self, uri);
}

static void diag_free(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct diag_state *f = self;
    if (!f) return;
    json_decref(f->uris);
    free(f);
}

const struct lsp_provider lsp_diagnostics_provider = {
    .name = "diagnostics",
    .init = diag_init,
    .initialized = diag_initialized,
    .doc_opened = diag_doc_opened,
    .doc_edited = diag_doc_edited,
    .doc_closed = diag_doc_closed,
    .profile_updated = diag_profile_updated,
    .free = diag_free,
};
