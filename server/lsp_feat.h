/* The profile features of `hotline lsp`: running a program from the editor
 * (lsp_run.c), showing its profile as lenses, inlay hints, hovers and
 * diagnostics (lsp_view.c), and keeping those anchored to the right lines
 * while the user edits (lsp_anchor.c). All of their state is one
 * struct lsp_feat hung off struct server (s->feat), made by the run
 * provider; the providers are lsp_run.c and lsp_view.c (lsp_provider.h). */
#ifndef HOTLINE_LSP_FEAT_H
#define HOTLINE_LSP_FEAT_H

#include <jansson.h>
#include <stdint.h>

#include "document.h"
#include "profile.h"
#include "session.h"

struct server;

#define LSP_FEAT_MAX_SNAPS 4096 /* source snapshots kept (one per profiled file) */
#define LSP_FEAT_SNAP_MAX_BYTES ((size_t)64 << 20)
#define LSP_EXEC_MIN_MS 50 /* hotline/executing: at most 20 per second */
#define LSP_TICK_MS 250    /* progress, refresh requests, fallback diagnostic */

/* What the profiled source looked like: whole-file hash and one hash per line,
 * so that a hint is drawn only on a line whose text is still the profiled one. */
struct lsp_snap {
    char *path; /* owned */
    uint64_t hash;
    uint32_t *lines; /* owned, nlines hashes (line 0 = first line) */
    size_t nlines;
    int64_t mtime_ns, size; /* of the file when its disk hash was last checked */
    int64_t checked_ns;     /* when that was (CLOCK_REALTIME, as mtimes) */
    int disk_stale;         /* disk content differs from hash */
    struct lsp_snap *next;
};

/* For one open document: current line -> profiled line (0-based), -1 when the
 * line changed or was inserted since the profile. */
struct lsp_anchor {
    char *uri;    /* owned */
    int32_t *map; /* owned, n entries */
    size_t n, cap;
    struct lsp_anchor *next;
};

struct lsp_run;  /* a program being run (lsp_run.c, private) */
struct lsp_load; /* the saved profile being loaded off the loop (lsp_run.c, private) */

struct lsp_feat {
    struct profile *prof;   /* owned: the profile shown (live during a run), or NULL */
    struct lsp_snap *snaps; /* owned list */
    size_t nsnaps;
    struct lsp_anchor *anchors; /* owned list */
    struct lsp_run *run;        /* owned until its session closed; NULL when idle */
    struct lsp_run *closing;    /* runs whose session is closing (list through run->next) */
    int runs_started;
    struct lsp_load *load; /* loading <root>/.hotline on the thread pool, or NULL */
    int initialized;       /* the client sent `initialized` */
    json_t *diag_uris; /* owned array of URIs we published diagnostics for */
    json_t *leaks;     /* owned {path: [leak...]} from the per-file `leaks` of the profile */
    /* refresh throttling */
    int dirty; /* profile changed since the last refresh request */
    uint64_t last_refresh_ns;
    int exiting;
    /* real path -> the store's path, for files the store names otherwise
     * (lsp__profile_file); built for real_for with real_nfiles files, after
     * run number real_run */
    json_t *real_paths; /* owned, or NULL */
    const struct profile *real_for;
    size_t real_nfiles;
    int real_run;
};

/* ---- document hooks (lsp_anchor.c), called by the view provider ---- */
void lsp_feat_doc_opened(struct server *s, struct doc *d);
void lsp_feat_doc_edited(struct server *s, struct doc *d, const struct doc_edit *e);
void lsp_feat_doc_closed(struct server *s, const char *uri);

/* ---- shared between lsp_run.c / lsp_view.c / lsp_anchor.c ---- */
/* Borrowed: the profile's record for path (a document's file system path),
 * found by that path or else by its real path: a run through a symlinked
 * folder records files under the path the program was given, the editor may
 * open them by their real path (or the other way round). Its ->path is the
 * store's name for the file, which snapshots and anchors go by. NULL if the
 * profile has nothing for that file. */
const struct prof_file *lsp__profile_file(struct lsp_feat *f, const char *path);
/* Borrowed snapshot of path, taken from disk if not yet known; NULL if unreadable. */
struct lsp_snap *lsp__snap_get(struct lsp_feat *f, const char *path);
/* Snapshot from memory (text borrowed); replaces an existing one. */
struct lsp_snap *lsp__snap_from_text(struct lsp_feat *f, const char *path, const char *text,
                                     size_t len);
void lsp__snaps_clear(struct lsp_feat *f);
/* Has the file on disk changed since the snapshot? (cached by mtime/size) */
int lsp__snap_stale(struct lsp_snap *sn);
/* Borrowed anchor for an open document (made on first need), or NULL when the
 * profile has nothing for it. */
struct lsp_anchor *lsp__anchor_get(struct server *s, struct doc *d, const char *path);
/* The same without a server (what lsp__anchor_get and the hooks below call;
 * tests/lsp/test_anchor.c drives these directly): the anchor of d in f,
 * where path is the store's name for its file. */
struct lsp_anchor *lsp__anchor_of(struct lsp_feat *f, struct doc *d, const char *path);
/* d (borrowed) was edited as e says: move its anchor's map (lsp_feat_doc_edited). */
void lsp__anchor_edited(struct lsp_feat *f, const struct doc *d, const struct doc_edit *e);
/* Forget the anchor of uri, if any (document closed or reopened). */
void lsp__anchor_drop(struct lsp_feat *f, const char *uri);
/* The rule for drawing anything on a line: the profiled line (1-based, as in
 * the store) shown at document line cur, or 0 when nothing belongs there,
 * i.e. the map does not vouch for it or its text no longer hashes to the
 * profiled line's. */
int lsp__anchor_line(const struct lsp_anchor *a, const struct lsp_snap *sn, const struct doc *d,
                     uint32_t cur);
void lsp__anchors_clear(struct lsp_feat *f);
uint32_t lsp__line_hash(const char *p, size_t n);
/* JSON for saving snapshots / reloading them (new reference / borrowed). */
json_t *lsp__snaps_to_json(struct lsp_feat *f);
void lsp__snaps_from_json(struct lsp_feat *f, const json_t *j);

/* view: publish diagnostics for the current profile (+ the live line), each
 * under the URI of the open document that is its file (by path or real
 * path, lsp__profile_file), else under the file's own URI; URIs published
 * before and not now are cleared. */
void lsp__publish_diagnostics(struct server *s, const json_t *live /*borrowed, may be NULL*/);
/* The same with the running program's live line, once the client is
 * initialized and until shutdown (a document opened or closed under another
 * name than the profile's moves its diagnostics). */
void lsp__diagnostics_update(struct server *s);
/* showProfile text (new, caller frees) */
char *lsp__profile_summary(struct server *s, const char *path, int line);
/* Re-read f->leaks from the profile (after a run, after loading). */
void lsp__leaks_update(struct lsp_feat *f);
/* New {path: [leak...]} of p (borrowed), or NULL when none; touches nothing
 * else (the loader calls it off the loop). */
json_t *lsp__leaks_json(const struct profile *p);
/* Share of a stats record in the whole profile, 0..100. */
double lsp__share(const struct profile *p, const struct agent_stats *st);

#endif
