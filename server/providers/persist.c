/* Persistence: the last profile of a workspace kept under <root>/.hotline
 * (profile.json and the sources as profiled, sources.json), saved when a
 * run ends (the view's LSP_PV_FINAL) and loaded again when the server
 * starts; hotline.clear (LSP_PV_CLEARED) removes the files. Both run on the
 * thread pool, so that the loop keeps serving whatever the files are.
 * hotline.openProfile loads a profile file the user names the same way (a
 * JSON profile or a wire stream: one test's profile of `pytest --hotline`,
 * a standalone agent's HOTLINE_OUT). */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "anchor/anchor.h"
#include "core/hotdir.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "core/uri.h"
#include "jsonrpc.h"
#include "store/load_any.h"
#include "store/memprof.h"
#include "store/profile.h"

struct lsp_load;
struct lsp_save;

/* The provider's state. */
struct persist_state {
    struct lsp_load *load;             /* loading <root>/.hotline on the thread pool, or NULL */
    struct lsp_save *save, *save_next; /* saving it there (in flight, waiting) */
    int initialized;                   /* the client sent `initialized` */
    int exiting;
};

extern const struct lsp_provider lsp_persist_provider;

/* Borrowed: this provider's state in s. */
static struct persist_state *persist_of(struct lsp_facilities *s)
{
    return lsp_provider_self(s, &lsp_persist_provider);
}

/* <root>/.hotline (core/hotdir.c) holds what a cloned repository may also
 * carry: it is untrusted input. It must be a real directory (not a symlink); the files
 * are opened without following a symlink, must be regular files (a FIFO or
 * /dev/stdin would block forever) and are capped in size; the profile store
 * caps what they hold. Loading runs on the thread pool so that initialize
 * answers at once, whatever the files are. What we write there holds the
 * program's argv and source: the directory is 0700, the files 0600, and a
 * .gitignore of `*` keeps it out of commits. A save replaces whatever is
 * at the name (PROFILE_WRITE_REPLACE), never writes through it. */

/* One save of <root>/.hotline. The snapshot is taken on the loop thread
 * (profile_to_json and the sources' JSON: trees that share nothing with the
 * store, which the next run goes on filling); writing, fsync and rename run
 * on the thread pool, so a big profile does not stop the loop. At most one
 * save is in flight; a newer one waits in persist_state.save_next (replacing an
 * older waiting one), so the last profile is the one left on disk.
 * hotline.clear drops the waiting one and marks the one in flight, whose
 * files are removed again when it lands. Freed in save_after only. */
struct lsp_save {
    uv_work_t req;
    struct lsp_facilities *srv; /* borrowed; NULL once the provider let go */
    char dir[PATH_MAX];
    json_t *profile, *sources; /* owned snapshots */
    int rc;                    /* of the file that failed, or 0 */
    char failed[PATH_MAX + 32];
    int cleared; /* hotline.clear came while it was in flight */
};

static void save_free(struct lsp_save *sv)
{
    json_decref(sv->profile);
    json_decref(sv->sources);
    free(sv);
}

static void save_write(struct lsp_save *sv)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/profile.json", sv->dir);
    sv->rc = sv->profile
                 ? profile_write_json(sv->profile, path, PROFILE_SAVE_FLAGS, PROFILE_WRITE_REPLACE)
                 : -ENOMEM;
    if (!sv->rc) { /* the sources as profiled, for stale detection after a restart */
        snprintf(path, sizeof path, "%s/sources.json", sv->dir);
        sv->rc = sv->sources
                     ? profile_write_json(sv->sources, path, JSON_COMPACT, PROFILE_WRITE_REPLACE)
                     : -ENOMEM;
    }
    if (sv->rc) snprintf(sv->failed, sizeof sv->failed, "%s", path);
}

static void save_work(uv_work_t *req)
{
    save_write(req->data);
}

static void clear_files(struct lsp_facilities *s);
static void save_queue(struct lsp_facilities *s, struct lsp_save *sv);

static void save_after(uv_work_t *req, int status)
{
    struct lsp_save *sv = req->data;
    struct lsp_facilities *s = sv->srv;
    struct persist_state *f = s ? persist_of(s) : NULL;
    if (f && f->save == sv) f->save = NULL;
    if (s && status == 0 && sv->rc)
        lsp_log(s, LSP_MSG_WARNING, "cannot save %s: %s", sv->failed, strerror(-sv->rc));
    if (s && sv->cleared) clear_files(s); /* it landed after hotline.clear */
    save_free(sv);
    if (f && f->save_next) {
        struct lsp_save *next = f->save_next;
        f->save_next = NULL;
        save_queue(s, next);
    }
}

static void save_queue(struct lsp_facilities *s, struct lsp_save *sv)
{
    struct persist_state *f = persist_of(s);
    if (!s->loop) { /* no loop (fuzzing): in place */
        save_write(sv);
        if (sv->rc)
            lsp_log(s, LSP_MSG_WARNING, "cannot save %s: %s", sv->failed, strerror(-sv->rc));
        save_free(sv);
        return;
    }
    if (f->save) { /* one at a time, the newest next */
        if (f->save_next) save_free(f->save_next);
        f->save_next = sv;
        return;
    }
    f->save = sv;
    if (uv_queue_work(s->loop, &sv->req, save_work, save_after)) {
        f->save = NULL; /* the thread pool refused: write it here rather than lose it */
        save_write(sv);
        if (sv->rc)
            lsp_log(s, LSP_MSG_WARNING, "cannot save %s: %s", sv->failed, strerror(-sv->rc));
        save_free(sv);
    }
}

static void save_profile(struct lsp_facilities *s)
{
    const struct profile *prof = lsp_pview_profile(s);
    char dir[PATH_MAX];
    if (!prof || !lsp_setting_bool(s, "persist", 1) || lsp_hotline_dir(s, dir, sizeof dir)) return;
    int rc = lsp_hotline_dir_make(dir);
    if (rc) {
        lsp_log(s, LSP_MSG_WARNING, "not saving the profile: %s: %s", dir,
                rc == -ELOOP ? "is a symbolic link" : strerror(-rc));
        return;
    }
    struct lsp_save *sv = calloc(1, sizeof *sv);
    if (!sv) {
        lsp_log(s, LSP_MSG_WARNING, "cannot save the profile: %s", strerror(ENOMEM));
        return;
    }
    sv->srv = s;
    sv->req.data = sv;
    snprintf(sv->dir, sizeof sv->dir, "%s", dir);
    sv->profile = profile_to_json(prof);
    sv->sources = anchor_snaps_to_json(&s->view->as);
    save_queue(s, sv);
}

/* One load of <root>/.hotline: the worker fills a fresh profile, snapshots
 * and leaks; the loop thread swaps them in (load_after), unless a run, a
 * kernel or hotline.clear replaced the profile meanwhile (the view's
 * generation moved on) or the server is
 * exiting. A big profile takes seconds (~8 s for 50 MB on a quiet machine):
 * shutdown and exit set cancel, which the parse and the store's fill check
 * as they go, so that the worker ends within milliseconds and the loop (which
 * waits for it) lets the process exit. Freed in load_after only. */
struct lsp_load {
    uv_work_t req;
    struct lsp_facilities *srv; /* borrowed; NULL once the provider's free let go */
    char dir[PATH_MAX];
    unsigned long gen; /* of the view when it started */
    atomic_int cancel; /* set on the loop thread, read by the worker */
    /* results (worker -> loop thread) */
    struct profile *prof;           /* owned until handed over */
    struct anchor_set snaps;        /* only snapshots: owned until handed over */
    struct memprof_leak_set *leaks; /* owned until handed over */
    int missing;                    /* no profile.json: nothing to say */
    char err[2 * PATH_MAX + 512];   /* why profile.json was refused: "<path>: <why>" */
    /* hotline.openProfile: the file (not the workspace's .hotline) and the
     * request to answer once it is in (owned), else "" and NULL */
    char file[PATH_MAX];
    json_t *id;
};

/* Files of an opened profile whose text is read for the anchors at load
 * (the sources as they are now: the profile was just written, by a test
 * run or an agent); past it, lines of further files show nothing. */
#define OPEN_MAX_SNAPS 2000

/* hotline.openProfile's load: the file, then snapshots of its sources from
 * disk (so that hints land on the lines; a file edited since shows its
 * changed lines as stale, as after a run). */
static void open_read(struct lsp_load *ld)
{
    char err[PATH_MAX + 256] = "";
    ld->prof = profile_load_any(ld->file, PROFILE_READ_REGULAR, &ld->cancel, NULL, err, sizeof err);
    if (atomic_load(&ld->cancel)) return;
    if (!ld->prof) {
        if (!strncmp(err, ld->file, strlen(ld->file)))
            snprintf(ld->err, sizeof ld->err, "%s", err);
        else
            snprintf(ld->err, sizeof ld->err, "%s: %s", ld->file, err);
        return;
    }
    ld->leaks = profile_leak_set_new(ld->prof);
    for (size_t i = 0; i < ld->prof->nfiles && i < OPEN_MAX_SNAPS; i++) {
        if (atomic_load(&ld->cancel)) return;
        anchor_snap_get(&ld->snaps, ld->prof->files[i]->path);
    }
}

static void load_read(struct lsp_load *ld)
{
    struct stat st;
    char path[PATH_MAX + 32];
    int rc = lsp_real_dir(ld->dir, &st);
    if (rc == -ENOENT) {
        ld->missing = 1;
        return;
    }
    if (rc) {
        snprintf(ld->err, sizeof ld->err, "%s: %s", ld->dir,
                 rc == -ELOOP ? "is a symbolic link: not followed" : strerror(-rc));
        return;
    }
    snprintf(path, sizeof path, "%s/profile.json", ld->dir);
    if (lstat(path, &st) && errno == ENOENT) {
        ld->missing = 1;
        return;
    }
    char err[PATH_MAX + 96] = "";
    ld->prof = profile_load_cancellable(path, PROFILE_READ_UNTRUSTED, &ld->cancel, err, sizeof err);
    if (atomic_load(&ld->cancel)) return; /* nobody wants it: load_after frees what there is */
    if (!ld->prof) {                      /* the file's own errors name it; the format's do not */
        if (!strncmp(err, path, strlen(path)))
            snprintf(ld->err, sizeof ld->err, "%s", err);
        else
            snprintf(ld->err, sizeof ld->err, "%s: %s", path, err);
        return;
    }
    ld->leaks = profile_leak_set_new(ld->prof);
    if (atomic_load(&ld->cancel)) return;
    snprintf(path, sizeof path, "%s/sources.json", ld->dir);
    char *text;
    size_t len;
    if (profile_read_file(path, PROFILE_MAX_JSON_BYTES, PROFILE_READ_UNTRUSTED, &text, &len))
        return; /* no snapshots: every line shows as stale, nothing wrong is drawn */
    json_t *j = profile_json_parse(text, len, &ld->cancel, NULL, 0); /* bounded like the profile */
    free(text);
    if (json_is_object(j)) anchor_snaps_from_json(&ld->snaps, j);
    json_decref(j);
}

static void load_work(uv_work_t *req)
{
    struct lsp_load *ld = req->data;
    if (ld->file[0])
        open_read(ld);
    else
        load_read(ld);
#ifdef __GLIBC__
    /* The JSON trees are freed, but glibc keeps the pages of this thread's
     * arena, where the kept store is interleaved with them: ~20 MB resident
     * for nothing after a 2 MB profile (tests/bench/lsp_bench.py: server RSS
     * 36 -> 18 MB). Off the loop, once per load. */
    if (!atomic_load(&ld->cancel)) malloc_trim(0);
#endif
}

static void load_free(struct lsp_load *ld)
{
    json_decref(ld->id);
    profile_free(ld->prof);
    anchor_snaps_clear(&ld->snaps);
    memprof_leak_set_free(ld->leaks);
    free(ld);
}

static void load_after(uv_work_t *req, int status)
{
    struct lsp_load *ld = req->data;
    struct lsp_facilities *s = ld->srv;
    struct persist_state *f = s ? persist_of(s) : NULL;
    if (f && f->load == ld) f->load = NULL;
    /* a run, a kernel or hotline.clear replaced the profile meanwhile: the
     * old one must not come back */
    int replaced = s && s->view->gen != ld->gen;
    if (!f || f->exiting || replaced || status < 0 || atomic_load(&ld->cancel)) {
        if (s && ld->id)
            lsp_reply_error(s, ld->id, LSP_REQUEST_FAILED, "%s was not opened: %s", ld->file,
                            replaced ? "another profile came first (a run, a kernel, a clear)"
                                     : "cancelled");
        load_free(ld);
        return;
    }
    if (!ld->prof) {
        if (ld->id)
            lsp_reply_error(s, ld->id, LSP_REQUEST_FAILED, "cannot open %s", ld->err);
        else if (!ld->missing)
            lsp_log(s, LSP_MSG_WARNING, "ignoring %s", ld->err);
        load_free(ld);
        return;
    }
    const struct profile *p = ld->prof;
    json_t *answer =
        ld->id ? json_pack("{s:s,s:s?,s:I,s:I,s:f}", "path", ld->file, "program", p->meta.program,
                           "files", (json_int_t)p->nfiles, "samples", (json_int_t)p->meta.samples,
                           "seconds", agent_stats_time(&p->total))
               : NULL;
    lsp_pview_replace(s, ld->prof, &ld->snaps, ld->leaks);
    ld->prof = NULL;
    ld->leaks = NULL;
    if (ld->id) {
        lsp_log(s, LSP_MSG_INFO, "opened the profile %s", ld->file);
        lsp_reply(s, ld->id, answer);
        lsp_pview_updated(s, LSP_PV_DATA);
    } else {
        lsp_log(s, LSP_MSG_INFO, "loaded the last profile from %s/profile.json", ld->dir);
    }
    int opened = ld->id != NULL;
    load_free(ld);
    /* requests answered meanwhile had no profile: ask for them again */
    if (!opened && f->initialized && s->running) lsp_pview_updated(s, LSP_PV_DATA);
}

static void load_profile(struct lsp_facilities *s)
{
    struct persist_state *f = persist_of(s);
    char dir[PATH_MAX];
    if (!lsp_setting_bool(s, "persist", 1) || lsp_hotline_dir(s, dir, sizeof dir)) return;
    struct lsp_load *ld = calloc(1, sizeof *ld);
    if (!ld) return;
    ld->srv = s;
    ld->gen = s->view->gen;
    ld->req.data = ld;
    snprintf(ld->dir, sizeof ld->dir, "%s", dir);
    f->load = ld;
    if (!s->loop) { /* no loop (fuzzing): in place */
        load_work(&ld->req);
        load_after(&ld->req, 0);
    } else if (uv_queue_work(s->loop, &ld->req, load_work, load_after)) {
        f->load = NULL;
        free(ld);
    }
}

/* hotline.openProfile {"path"} or {"uri"}: show the profile in that file
 * (a JSON profile or a wire stream). Answered once it is in: {"path",
 * "program", "files", "samples", "seconds"}, or an error saying why. A load
 * of the workspace's last profile still in flight gives way. */
static void cmd_open(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    struct persist_state *f = self;
    const char *path = json_string_value(json_object_get(a, "path"));
    const char *uri = json_string_value(json_object_get(a, "uri"));
    char *from_uri = !path && uri ? lsp_uri_to_path(uri) : NULL;
    if (from_uri) path = from_uri;
    if (!path || path[0] != '/' || strlen(path) >= PATH_MAX) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS,
                        "hotline.openProfile wants {\"path\": an absolute path} or a file URI");
        free(from_uri);
        return;
    }
    if (s->view->running) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED,
                        "a program is being profiled: stop it, then open %s", path);
        free(from_uri);
        return;
    }
    struct lsp_load *ld = calloc(1, sizeof *ld);
    if (!ld) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "out of memory");
        free(from_uri);
        return;
    }
    ld->srv = s;
    ld->gen = s->view->gen;
    ld->req.data = ld;
    snprintf(ld->file, sizeof ld->file, "%s", path);
    free(from_uri);
    ld->id = json_incref(id);
    if (f->load) { /* the workspace's last profile, still loading: ours wins */
        atomic_store(&f->load->cancel, 1);
        uv_cancel((uv_req_t *)&f->load->req);
    }
    f->load = ld;
    lsp_reply_later(s, id);
    if (!s->loop) { /* no loop (fuzzing): in place */
        load_work(&ld->req);
        load_after(&ld->req, 0);
    } else if (uv_queue_work(s->loop, &ld->req, load_work, load_after)) {
        f->load = NULL;
        ld->id = NULL;
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "cannot queue the load");
        json_decref(id);
        load_free(ld);
    }
}

static const struct lsp_command persist_commands[] = {
    {"hotline.openProfile", cmd_open},
    {NULL, NULL},
};

/* Shutdown or exit: the profile will never be shown, stop loading it. */
static void load_cancel(struct persist_state *f)
{
    if (!f->load) return;
    atomic_store(&f->load->cancel, 1);
    uv_cancel((uv_req_t *)&f->load->req); /* not started yet: never starts */
}

/* Remove <root>/.hotline/{profile,sources}.json (not through a symlink). */
static void clear_files(struct lsp_facilities *s)
{
    char dir[PATH_MAX], path[PATH_MAX + 32];
    struct stat st;
    if (!lsp_hotline_dir(s, dir, sizeof dir) && !lsp_real_dir(dir, &st)) {
        snprintf(path, sizeof path, "%s/profile.json", dir);
        unlink(path);
        snprintf(path, sizeof path, "%s/sources.json", dir);
        unlink(path);
    }
}

/* ---- hooks ------------------------------------------------------------- */

static void persist_profile_updated(struct lsp_facilities *s, void *self, int what)
{
    struct persist_state *f = self;
    if (what & LSP_PV_CLEARED) { /* nothing saved may come back */
        if (f->save_next) save_free(f->save_next);
        f->save_next = NULL;
        if (f->save) f->save->cleared = 1;
        clear_files(s);
    }
    if (what & LSP_PV_FINAL) save_profile(s);
}

static int persist_init(struct lsp_facilities *s, void **self)
{
    (void)s;
    *self = calloc(1, sizeof(struct persist_state));
    return *self ? 0 : -ENOMEM;
}

static void persist_initialize(struct lsp_facilities *s, void *self, json_t *caps)
{
    (void)self, (void)caps;
    load_profile(s);
}

static void persist_initialized(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct persist_state *f = self;
    f->initialized = 1; /* a profile still loading is published when it is in */
}

static void persist_shutdown(struct lsp_facilities *s, void *self)
{
    (void)s;
    if (self) load_cancel(self);
}

static void persist_close(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct persist_state *f = self;
    if (!f) return;
    f->exiting = 1;
    load_cancel(f); /* the loop waits for the worker, which now ends at once */
}

static void persist_free(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct persist_state *f = self;
    if (!f) return;
    /* a load has ended with a loop; without one, it ran in place */
    if (f->load) f->load->srv = NULL;
    if (f->save) f->save->srv = NULL; /* lands on its own, freed in save_after */
    if (f->save_next) save_free(f->save_next);
    free(f);
}

const struct lsp_provider lsp_persist_provider = {
    .name = "persist",
    .init = persist_init,
    .initialize = persist_initialize,
    .initialized = persist_initialized,
    .shutdown = persist_shutdown,
    .profile_updated = persist_profile_updated,
    .commands = persist_commands,
    .close = persist_close,
    .free = persist_free,
};
