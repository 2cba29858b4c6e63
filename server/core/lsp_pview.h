/* The profile view: what the server shows, owned by the core (one per
 * struct server, s->view). The profile store, the snapshots of the profiled
 * sources and the anchors of open documents (anchor.h), the likely leaks,
 * the live line of a running program, a generation number, and the run
 * before with its comparison to this one (issue 25: what moved since).
 *
 * Every provider reads it; one query answers "which profiled line is at
 * this document line" (lsp_docview_line). Its writers are the run provider
 * and the kernel provider (agents on the workspace socket; it registers
 * with lsp_pview_hold so that a run replacing its profile is no surprise);
 * they write with the lsp_pview_set_* and lsp_pview_replace calls and tell
 * the others with lsp_pview_updated, which reaches them through their
 * profile_updated hook. The core keeps the anchors in step with document
 * sync (lsp_pview_doc_*), before the providers' own document hooks. */
#ifndef HOTLINE_LSP_PVIEW_H
#define HOTLINE_LSP_PVIEW_H

#include <jansson.h>
#include <stdint.h>

#include "anchor/anchor.h"
#include "text/document.h"
#include "store/compare.h"
#include "store/memprof.h"
#include "store/profile.h"

#include "core/facilities.h"

struct lsp_pview {
    struct profile *prof;           /* owned: the profile shown (live during a run), or NULL */
    struct anchor_set as;           /* its snapshots and anchors */
    unsigned long gen;              /* +1 each time the profile is replaced (run, load, clear) */
    int running;                    /* a program is filling prof now */
    struct memprof_leak_set *leaks; /* owned likely leaks of prof, or NULL */
    json_t *live;                   /* owned: the running line as a diagnostic + "uri", or NULL */
    /* a writer that holds prof besides the run (the kernels' connections):
     * told once, before prof is replaced, so that it lets go; or NULL */
    void (*let_go)(struct lsp_facilities *s, void *data);
    void *let_go_data;
    /* the live line's source (lsp_pview_now_*): the latest resolved `now`
     * of what runs, which the live-line provider (providers/live.c) turns
     * into hotline/executing or the fallback diagnostic */
    json_t *now;           /* owned, or NULL */
    unsigned long now_seq; /* +1 per lsp_pview_set_now */
    int now_on;            /* a stream is live (begin .. end) */
    char *now_dirs[2];     /* owned: where its own code is (either may be NULL) */
    char now_label[32];    /* names it in the fallback ("kernel"), or "" (a run) */
    uint64_t now_since_ns; /* when it began (uv_hrtime) */
    /* ipykernel cell files of prof: {"<hash>": path}, built for cells_for
     * with cells_nfiles files at generation cells_gen (lsp_pview_doc_file) */
    json_t *cells; /* owned, or NULL */
    const struct profile *cells_for;
    size_t cells_nfiles;
    unsigned long cells_gen;
    /* the run before (issue 25): the profile prof replaced, when that one
     * was complete (not running), kept until the next replace or
     * hotline.clear (one only: a profile can be large); and, once a run of
     * the same program ended, the two compared, once, with the rows of the
     * new side indexed for the per-request lookups (lsp_pview_*_change) */
    struct profile *prev;   /* owned, or NULL */
    unsigned long prev_gen; /* the generation it was shown at */
    struct cmp_result cmp;  /* prev against prof, all zero when not compared */
    int compared;           /* cmp is valid */
    const struct cmp_row **cmp_lines, **cmp_funcs; /* owned: rows with has_new, sorted */
    size_t ncmp_lines, ncmp_funcs;
};

/* profile_updated's `what` */
#define LSP_PV_DATA 1    /* the profile changed: refresh hints and lenses, republish */
#define LSP_PV_LIVE 2    /* only the live line moved */
#define LSP_PV_NOW 16    /* a live stream began or ended (lsp_pview_now_*) */
#define LSP_PV_FINAL 4   /* a run ended: the profile is complete (persistence saves it) */
#define LSP_PV_CLEARED 8 /* hotline.clear: saved copies go too */

/* ---- reading (every provider) ---- */

/* Borrowed: the profile shown, or NULL. */
const struct profile *lsp_pview_profile(struct lsp_facilities *s);
/* Borrowed: the profile's record for a document's path (by that path or its
 * real path, anchor_profile_file), or NULL. */
const struct prof_file *lsp_pview_file(struct lsp_facilities *s, const char *path);

/* The one mapping between the profile's files and the editor's documents,
 * both ways. A file:// document is its path's file (lsp_pview_file). A code
 * cell of an open notebook (core/notebook.h) is the ipykernel cell file its
 * current text hashes to, ".../ipykernel_<pid>/<hash>.py" (text/cellname.h):
 * a cell edited after it ran hashes to another name and shows nothing.
 *
 * Borrowed: the profiled file open document d shows, or NULL; *cell (may
 * be NULL) is set to 1 for a notebook cell, else 0. */
const struct prof_file *lsp_pview_doc_file(struct lsp_facilities *s, struct doc *d, int *cell);
/* New string: the URI under which the editor shows the profile's file path:
 * the open cell whose text ipykernel compiled to path, else path's file://
 * URI; NULL on ENOMEM. */
char *lsp_pview_uri(struct lsp_facilities *s, const char *path);

/* One open document as the profile sees it; all borrowed, valid until the
 * next edit or profile change (the length of one request). */
struct lsp_docview {
    struct doc *d;
    const struct prof_file *pf; /* its profiled file */
    const char *path;           /* the store's name for it (pf->path) */
    struct anchor_snap *snap;
    struct anchor_map *a;
    int cell; /* d is a notebook cell (its text is the profiled text) */
};
/* 0, or -ENOENT when the profile has nothing to draw on d. */
int lsp_docview_open(struct lsp_facilities *s, struct doc *d, struct lsp_docview *v);
/* THE query: the profiled line (1-based, as in the store) shown at
 * document line cur, or 0 when nothing belongs there. */
int lsp_docview_line(const struct lsp_docview *v, uint32_t cur);
/* The other way: the document line (0-based) where profiled line `line`
 * (1-based) is now, or -1. */
long lsp_docview_find(const struct lsp_docview *v, int line);
/* lsp_docview_open + lsp_docview_line in one: 0 when nothing belongs at cur;
 * *pf (may be NULL) gets the profiled file. */
int lsp_profiled_line(struct lsp_facilities *s, struct doc *d, uint32_t cur,
                      const struct prof_file **pf);

/* The comparison of the profile shown with the one before it (the same
 * program's previous complete run, store/compare.h), made when the run
 * ended; NULL when there is none (no such run, a run going on, cleared).
 * *old_gen (may be NULL) gets the generation the older profile was shown
 * at. Borrowed, valid until the profile is replaced. */
const struct cmp_result *lsp_pview_comparison(struct lsp_facilities *s, unsigned long *old_gen);
/* Its row for profiled line `line` of the file the store names path
 * (pf->path), or for the function `name` defined at first_line there; NULL
 * when not compared or not in the new profile. */
const struct cmp_row *lsp_pview_line_change(struct lsp_facilities *s, const char *path, int line);
const struct cmp_row *lsp_pview_func_change(struct lsp_facilities *s, const char *path,
                                            int first_line, const char *name);

/* ---- writing (the run and kernel providers) ---- */

/* The profile shown now is also filled by someone besides the run: let_go
 * (data) is called once before it is replaced, and must stop using it. NULL
 * lets go of the hook. */
void lsp_pview_hold(struct lsp_facilities *s, void (*let_go)(struct lsp_facilities *, void *),
                    void *data);

/* Show p (stolen, may be NULL) from now on, with the snapshots in snaps
 * (taken, may be NULL: none) and leaks (stolen, may be NULL); the old
 * snapshots and anchors go; gen moves on. The old profile is kept as the
 * previous one when it was complete and p is not NULL (p NULL, a clear:
 * both go), for lsp_pview_compare. */
void lsp_pview_replace(struct lsp_facilities *s, struct profile *p, struct anchor_set *snaps,
                       struct memprof_leak_set *leaks);
/* A run ended and the profile shown is complete: compare it with the
 * previous one when that is the same program's (meta.program), else let
 * the previous one go. */
void lsp_pview_compare(struct lsp_facilities *s);
/* Snapshot path from disk now (the program as it is when run). */
void lsp_pview_snapshot(struct lsp_facilities *s, const char *path);
void lsp_pview_set_leaks(struct lsp_facilities *s, struct memprof_leak_set *leaks /*stolen*/);
void lsp_pview_set_live(struct lsp_facilities *s, json_t *live /*stolen, may be NULL*/);
void lsp_pview_set_running(struct lsp_facilities *s, int running);
/* The live line's source (the run and kernel providers): a stream of
 * `now` stacks begins (its own code under dir1 / dir2, either may be NULL;
 * label names it in the fallback diagnostic, e.g. "kernel", or NULL; since:
 * uv_hrtime when it began), each latest `now` (borrowed), and its end.
 * Begin and end tell everyone (LSP_PV_NOW); a `now` does not. */
void lsp_pview_now_begin(struct lsp_facilities *s, const char *dir1, const char *dir2,
                         const char *label, uint64_t since_ns);
void lsp_pview_set_now(struct lsp_facilities *s, const json_t *now);
void lsp_pview_now_end(struct lsp_facilities *s);
/* Tell everyone: with LSP_PV_DATA the client is asked to refresh hints and
 * lenses, then every provider's profile_updated(what) runs. */
void lsp_pview_updated(struct lsp_facilities *s, int what);

/* ---- the core ---- */
void lsp_pview_doc_opened(struct lsp_facilities *s, struct doc *d);
void lsp_pview_doc_edited(struct lsp_facilities *s, struct doc *d, const struct doc_edit *e);
void lsp_pview_doc_closed(struct lsp_facilities *s, const char *uri);
void lsp_pview_free(struct lsp_pview *v);

#endif
