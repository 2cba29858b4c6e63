/* Snapshots and anchors: keeping profile data on the right lines while the
 * user edits (see the top of anchor.c). Takes a profile store and documents,
 * never struct server: the core's profile view (lsp_pview.h) holds the one
 * struct anchor_set of a server; tests/lsp/test_anchor.c drives it directly. */
#ifndef HOTLINE_ANCHOR_H
#define HOTLINE_ANCHOR_H

#include <jansson.h>
#include <stdint.h>

#include "text/document.h"
#include "store/profile.h"

#define ANCHOR_MAX_SNAPS 4096 /* source snapshots kept (one per profiled file) */
#define ANCHOR_SNAP_MAX_BYTES ((size_t)64 << 20)

/* What the profiled source looked like: whole-file hash and one hash per line,
 * so that a hint is drawn only on a line whose text is still the profiled one. */
struct anchor_snap {
    char *path; /* owned */
    uint64_t hash;
    uint32_t *lines; /* owned, nlines hashes (line 0 = first line) */
    size_t nlines;
    int64_t mtime_ns, size; /* of the file when its disk hash was last checked */
    int64_t checked_ns;     /* when that was (CLOCK_REALTIME, as mtimes) */
    int disk_stale;         /* disk content differs from hash */
    struct anchor_snap *next;
};

/* For one open document: current line -> profiled line (0-based), -1 when the
 * line changed or was inserted since the profile. */
struct anchor_map {
    char *uri;    /* owned */
    int32_t *map; /* owned, n entries */
    size_t n, cap;
    struct anchor_map *next;
};

/* The snapshots and anchors that go with one profile. Zero it to start. */
struct anchor_set {
    struct anchor_snap *snaps; /* owned list */
    size_t nsnaps;
    struct anchor_map *maps; /* owned list */
    /* real path -> the store's path, for files the store names otherwise
     * (anchor_profile_file); built for real_for with real_nfiles files, at
     * generation real_gen */
    json_t *real_paths; /* owned, or NULL */
    const struct profile *real_for;
    size_t real_nfiles;
    unsigned long real_gen;
};

/* Borrowed: p's record for path (a document's file system path), found by
 * that path or else by its real path: a run through a symlinked folder
 * records files under the path the program was given, the editor may open
 * them by their real path (or the other way round). Its ->path is the
 * store's name for the file, which snapshots and anchors go by. NULL if p
 * (may be NULL) has nothing for that file. gen: p's generation (a new
 * profile at a freed one's address must not reuse the cache). */
const struct prof_file *anchor_profile_file(struct anchor_set *as, const struct profile *p,
                                            unsigned long gen, const char *path);

/* Borrowed snapshot of path if there is one, else NULL (never reads). */
struct anchor_snap *anchor_snap_find(struct anchor_set *as, const char *path);
/* Borrowed snapshot of path, taken from disk if not yet known; NULL if unreadable. */
struct anchor_snap *anchor_snap_get(struct anchor_set *as, const char *path);
/* Snapshot from memory (text borrowed); replaces an existing one. */
struct anchor_snap *anchor_snap_from_text(struct anchor_set *as, const char *path, const char *text,
                                          size_t len);
void anchor_snaps_clear(struct anchor_set *as);
/* Has the file on disk changed since the snapshot? (cached by mtime/size) */
int anchor_snap_stale(struct anchor_snap *sn);
/* JSON for saving snapshots (new reference) / reloading them (j borrowed). */
json_t *anchor_snaps_to_json(const struct anchor_set *as);
void anchor_snaps_from_json(struct anchor_set *as, const json_t *j);

/* Borrowed anchor of d in as, made on first need, where path is the store's
 * name for its file; NULL when there is no snapshot of it. */
struct anchor_map *anchor_of(struct anchor_set *as, struct doc *d, const char *path);
/* d (borrowed) was edited as e says: move its anchor's map. */
void anchor_edited(struct anchor_set *as, const struct doc *d, const struct doc_edit *e);
/* Forget the anchor of uri, if any (document closed or reopened). */
void anchor_drop(struct anchor_set *as, const char *uri);
void anchor_maps_clear(struct anchor_set *as);
/* Everything: snapshots, anchors, the real-path cache. */
void anchor_set_clear(struct anchor_set *as);

/* The rule for drawing anything on a line: the profiled line (1-based, as in
 * the store) shown at document line cur, or 0 when nothing belongs there,
 * i.e. the map does not vouch for it or its text no longer hashes to the
 * profiled line's. */
int anchor_line(const struct anchor_map *a, const struct anchor_snap *sn, const struct doc *d,
                uint32_t cur);
uint32_t anchor_line_hash(const char *p, size_t n);

#endif
