/* Keeping profile data on the right lines. A snapshot (struct anchor_snap)
 * records what each profiled file looked like when it was profiled: a hash of
 * the whole file and of every line. An anchor (struct anchor_map) maps each
 * line of an open document to the profiled line it came from, following the
 * incremental edits (struct doc_edit) the editor sends; a changed or inserted
 * line maps to -1. A hint is drawn only where the map says so AND the line's
 * text still hashes to the profiled line's hash, so no hint can land on a
 * line it does not belong to.
 *
 * This module takes a profile store and documents; it never sees struct
 * server (the core's profile view, lsp_pview.c, holds the one set). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "anchor/anchor.h"

/* An mtime this close to the time it was checked proves nothing: the file
 * can be rewritten with as many bytes within one timestamp tick (a few ms,
 * 1 s on some file systems, 2 s on FAT) and keep both mtime and size. Until
 * it is older, staleness is decided by the hash ("racily clean", as git). */
#define SNAP_RACY_NS 3000000000LL

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t hash64(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

uint32_t anchor_line_hash(const char *p, size_t n)
{
    uint32_t h = 2166136261u;
    while (n > 0 && p[n - 1] == '\r') /* CRLF files: the line without its CR */
        n--;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

/* Map every profiled file whose real path differs from its stored path. */
static void real_paths_rebuild(struct anchor_set *as, const struct profile *p, unsigned long gen)
{
    if (!as->real_paths) as->real_paths = json_object();
    if (!as->real_paths) return;
    json_object_clear(as->real_paths);
    char real[PATH_MAX];
    for (size_t i = 0; i < p->nfiles; i++) {
        const char *fp = p->files[i]->path;
        if (realpath(fp, real) && strcmp(real, fp))
            json_object_set_new(as->real_paths, real, json_string(fp));
    }
    as->real_for = p;
    as->real_nfiles = p->nfiles;
    as->real_gen = gen;
}

const struct prof_file *anchor_profile_file(struct anchor_set *as, const struct profile *p,
                                            unsigned long gen, const char *path)
{
    if (!p || !path) return NULL;
    const struct prof_file *pf = profile_file(p, path);
    char real[PATH_MAX];
    if (pf || !realpath(path, real)) return pf;
    if ((pf = profile_file(p, real))) return pf; /* stored by its real path */
    /* rebuilt when the profile changed (another one: the generation tells a
     * new profile at a freed one's address) or grew (a run adds files as it
     * goes) */
    if (as->real_for != p || as->real_nfiles != p->nfiles || as->real_gen != gen)
        real_paths_rebuild(as, p, gen);
    const char *stored = json_string_value(json_object_get(as->real_paths, real));
    return stored ? profile_file(p, stored) : NULL;
}

static void snap_free(struct anchor_snap *sn)
{
    free(sn->path);
    free(sn->lines);
    free(sn);
}

struct anchor_snap *anchor_snap_find(struct anchor_set *f, const char *path)
{
    for (struct anchor_snap *sn = f->snaps; sn; sn = sn->next)
        if (!strcmp(sn->path, path)) return sn;
    return NULL;
}

static void snap_unlink(struct anchor_set *f, struct anchor_snap *sn)
{
    for (struct anchor_snap **pp = &f->snaps; *pp; pp = &(*pp)->next)
        if (*pp == sn) {
            *pp = sn->next;
            f->nsnaps--;
            snap_free(sn);
            return;
        }
}

/* One hash per line; lines end as in the document store (pos_line_break:
 * "\n", "\r\n" or a lone "\r"), so that both number lines alike. */
static int fill_lines(struct anchor_snap *sn, const char *text, size_t len)
{
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += pos_line_break(text, len, i) == 1; /* "\r\n" counts at its "\n" */
    sn->lines = malloc(n * sizeof *sn->lines);
    if (!sn->lines) return -ENOMEM;
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        size_t b = i < len ? pos_line_break(text, len, i) : 1;
        if (b) {
            sn->lines[k++] = anchor_line_hash(text + start, i - start);
            i += b - 1;
            start = i + 1;
        }
    }
    sn->nlines = k;
    sn->hash = hash64(text, len);
    return 0;
}

struct anchor_snap *anchor_snap_from_text(struct anchor_set *f, const char *path, const char *text,
                                          size_t len)
{
    struct anchor_snap *old = anchor_snap_find(f, path);
    if (old) snap_unlink(f, old);
    if (f->nsnaps >= ANCHOR_MAX_SNAPS) return NULL;
    struct anchor_snap *sn = calloc(1, sizeof *sn);
    if (!sn) return NULL;
    sn->path = strdup(path);
    if (!sn->path || fill_lines(sn, text, len)) {
        snap_free(sn);
        return NULL;
    }
    struct stat st;
    if (stat(path, &st) == 0) {
        sn->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        sn->size = st.st_size;
        sn->checked_ns = now_ns();
    }
    sn->next = f->snaps;
    f->snaps = sn;
    f->nsnaps++;
    return sn;
}

/* Whole file into a new buffer (caller frees), or NULL. */
static char *read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    struct stat st;
    if (fstat(fileno(fp), &st) || !S_ISREG(st.st_mode) ||
        (size_t)st.st_size > ANCHOR_SNAP_MAX_BYTES) {
        fclose(fp);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t n = buf ? fread(buf, 1, (size_t)st.st_size, fp) : 0;
    fclose(fp);
    if (buf) buf[n] = 0;
    *len = n;
    return buf;
}

struct anchor_snap *anchor_snap_get(struct anchor_set *f, const char *path)
{
    struct anchor_snap *sn = anchor_snap_find(f, path);
    if (sn) return sn;
    size_t len;
    char *text = read_file(path, &len);
    if (!text) return NULL;
    sn = anchor_snap_from_text(f, path, text, len);
    free(text);
    return sn;
}

int anchor_snap_stale(struct anchor_snap *sn)
{
    struct stat st;
    if (stat(sn->path, &st))
        return 1; /* deleted or unreadable: what we show no longer matches anything */
    int64_t m = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    if (m == sn->mtime_ns && st.st_size == sn->size && sn->checked_ns - m >= SNAP_RACY_NS)
        return sn->disk_stale;
    size_t len;
    char *text = read_file(sn->path, &len);
    sn->disk_stale = !text || hash64(text, len) != sn->hash;
    free(text);
    sn->mtime_ns = m;
    sn->size = st.st_size;
    sn->checked_ns = now_ns();
    return sn->disk_stale;
}

void anchor_snaps_clear(struct anchor_set *f)
{
    while (f->snaps) {
        struct anchor_snap *sn = f->snaps;
        f->snaps = sn->next;
        snap_free(sn);
    }
    f->nsnaps = 0;
}

/* {"path": {"hash": "hex", "lines": [n, ...]}} */
json_t *anchor_snaps_to_json(const struct anchor_set *f)
{
    json_t *o = json_object();
    for (struct anchor_snap *sn = f->snaps; sn; sn = sn->next) {
        char hex[32];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sn->hash);
        json_t *lines = json_array();
        for (size_t i = 0; i < sn->nlines; i++)
            json_array_append_new(lines, json_integer(sn->lines[i]));
        json_object_set_new(o, sn->path, json_pack("{s:s, s:o}", "hash", hex, "lines", lines));
    }
    return o;
}

void anchor_snaps_from_json(struct anchor_set *f, const json_t *j)
{
    const char *path;
    json_t *v;
    json_object_foreach((json_t *)j, path, v)
    {
        const char *hex = json_string_value(json_object_get(v, "hash"));
        json_t *lines = json_object_get(v, "lines");
        if (!hex || !json_is_array(lines) || f->nsnaps >= ANCHOR_MAX_SNAPS) continue;
        struct anchor_snap *sn = calloc(1, sizeof *sn);
        size_t n = json_array_size(lines);
        if (!sn) return;
        sn->path = strdup(path);
        sn->lines = malloc((n ? n : 1) * sizeof *sn->lines);
        if (!sn->path || !sn->lines) {
            snap_free(sn);
            return;
        }
        for (size_t i = 0; i < n; i++)
            sn->lines[i] = (uint32_t)json_integer_value(json_array_get(lines, i));
        sn->nlines = n;
        sn->hash = strtoull(hex, NULL, 16);
        sn->mtime_ns = -1; /* check the disk on first use */
        sn->next = f->snaps;
        f->snaps = sn;
        f->nsnaps++;
    }
}

/* ---- anchors ---- */

static void anchor_free(struct anchor_map *a)
{
    free(a->uri);
    free(a->map);
    free(a);
}

void anchor_maps_clear(struct anchor_set *f)
{
    while (f->maps) {
        struct anchor_map *a = f->maps;
        f->maps = a->next;
        anchor_free(a);
    }
}

static struct anchor_map *anchor_find(struct anchor_set *f, const char *uri)
{
    for (struct anchor_map *a = f->maps; a; a = a->next)
        if (!strcmp(a->uri, uri)) return a;
    return NULL;
}

static int anchor_reserve(struct anchor_map *a, size_t n)
{
    if (n <= a->cap) return 0;
    size_t cap = a->cap ? a->cap : 64;
    while (cap < n)
        cap *= 2;
    int32_t *m = realloc(a->map, cap * sizeof *m);
    if (!m) return -ENOMEM;
    a->map = m;
    a->cap = cap;
    return 0;
}

struct anchor_map *anchor_of(struct anchor_set *f, struct doc *d, const char *path)
{
    struct anchor_map *a = anchor_find(f, d->uri);
    if (a) return a;
    struct anchor_snap *sn = anchor_snap_get(f, path);
    if (!sn) return NULL;
    a = calloc(1, sizeof *a);
    if (!a || !(a->uri = strdup(d->uri)) || anchor_reserve(a, d->nlines)) {
        if (a) anchor_free(a);
        return NULL;
    }
    a->n = d->nlines;
    /* the document is the profiled text: lines map to themselves; otherwise
     * nothing can be placed safely until the program runs again */
    int same = hash64(d->text, d->len) == sn->hash;
    for (size_t i = 0; i < a->n; i++)
        a->map[i] = same ? (int32_t)i : -1;
    a->next = f->maps;
    f->maps = a;
    return a;
}

void anchor_drop(struct anchor_set *f, const char *uri)
{
    for (struct anchor_map **pp = &f->maps; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->uri, uri)) {
            struct anchor_map *a = *pp;
            *pp = a->next;
            anchor_free(a);
            return;
        }
}

int anchor_line(const struct anchor_map *a, const struct anchor_snap *sn, const struct doc *d,
                uint32_t cur)
{
    if (cur >= a->n || cur >= d->nlines || a->map[cur] < 0) return 0;
    uint32_t o = (uint32_t)a->map[cur];
    size_t len;
    const char *text = doc_line(d, cur, &len);
    if (o >= sn->nlines || !text || anchor_line_hash(text, len) != sn->lines[o]) return 0;
    return (int)o + 1;
}

void anchor_edited(struct anchor_set *f, const struct doc *d, const struct doc_edit *e)
{
    struct anchor_map *a = anchor_find(f, d->uri);
    if (!a) return;
    if (e->whole) {
        /* full replacement: nothing can be mapped, even the profiled text
         * again (docs/lsp.md); reopening the document places it anew */
        for (size_t i = 0; i < a->n; i++)
            a->map[i] = -1;
        if (anchor_reserve(a, d->nlines)) return;
        for (size_t i = a->n; i < d->nlines; i++)
            a->map[i] = -1;
        a->n = d->nlines;
        return;
    }
    size_t first = e->first, oldc = e->old_count, newc = e->new_count;
    if (first > a->n) first = a->n;
    if (first + oldc > a->n) oldc = a->n - first;
    size_t n = a->n - oldc + newc;
    if (anchor_reserve(a, n)) return;
    memmove(a->map + first + newc, a->map + first + oldc, (a->n - first - oldc) * sizeof *a->map);
    for (size_t i = 0; i < newc; i++)
        a->map[first + i] = -1;
    a->n = n;
}

void anchor_set_clear(struct anchor_set *f)
{
    anchor_maps_clear(f);
    anchor_snaps_clear(f);
    json_decref(f->real_paths);
    f->real_paths = NULL;
    f->real_for = NULL;
}
