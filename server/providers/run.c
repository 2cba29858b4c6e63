/* Running a program from the editor: workspace/executeCommand hotline.run /
 * stop / clear / showProfile, work-done progress while it runs (cancel stops
 * it), the live "executing here" line (hotline/executing for clients that
 * opted in, an Information diagnostic for the others), throttled refresh
 * requests so hints and lenses follow the data, and persistence of the last
 * profile under <root>/.hotline/. One run at a time per server (= workspace).
 *
 * Nothing here blocks: the program is a struct session on the server's loop.
 * When the server exits every program it started is killed (session_close
 * sends SIGKILL to its process group) and the loop runs until the session's
 * handles are closed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "core/hotdir.h"
#include "core/interp.h"
#include "core/lsp_call.h"
#include "core/lsp_out.h"
#include "core/lsp_provider.h"
#include "core/lsp_pview.h"
#include "core/lsp_exec.h"
#include "store/memprof.h"
#include "proc/pylist.h"
#include "proc/session.h"
#include "store/summary.h"
#include "core/uri.h"

#define RUN_MAX_ARGS 256
#define LSP_EXEC_MIN_MS 50 /* hotline/executing: at most 20 per second */
#define LSP_TICK_MS 250    /* progress, refresh requests, fallback diagnostic */

struct lsp_run {
    struct session sess;
    struct lsp_facilities *srv; /* borrowed */
    struct profile *store;      /* borrowed: the profile view's (the core owns it) */
    char *uri, *path;           /* owned: the program's file */
    char *main_dir;             /* owned: directory of the program, resolved (user frames) */
    char *main_dir_given;       /* owned: the same as given */
    uv_timer_t tick;            /* LSP_EXEC_MIN_MS */
    int tick_open;
    uint64_t start_ns;
    struct lsp_progress progress; /* cancellable: cancel stops the program */
    json_t *now;                  /* owned latest resolved `now`, or NULL */
    int now_fresh;
    int exec_sent;    /* a hotline/executing with a uri was sent */
    int live_changed; /* the live line (s->view->live) not yet published */
    int stop_requested;
    int attach_pid;    /* > 0: attached to this running process, not a run */
    int attach_memory; /* ... with the agent injected (memory on) */
    json_t *pending;   /* owned hotline.run arguments to start after this run (restart) */
    struct lsp_run *next;
};

struct lsp_load;
struct lsp_save;

/* The provider's state. */
struct run_state {
    struct lsp_run *run;     /* owned until its session closed; NULL when idle */
    struct lsp_run *closing; /* runs whose session is closing (list through run->next) */
    int runs_started;
    struct lsp_load *load;             /* loading <root>/.hotline on the thread pool, or NULL */
    struct lsp_save *save, *save_next; /* saving it there (in flight, waiting) */
    struct lsp_list *lists;            /* hotline.listProcesses in flight */
    pid_t blocked[PYLIST_MAX_SKIP];    /* processes whose image open blocked a listing */
    int nblocked;
    int nstuck;      /* listings answered at their bound whose thread is still blocked, maybe */
    int initialized; /* the client sent `initialized` */
    /* refresh throttling */
    int dirty; /* profile changed since the last refresh request */
    uint64_t last_refresh_ns;
    int exiting;
};

extern const struct lsp_provider lsp_run_provider;

/* Borrowed: this provider's state in s. */
static struct run_state *run_of(struct lsp_facilities *s)
{
    return lsp_provider_self(s, &lsp_run_provider);
}

static uint64_t ms_since(uint64_t ns)
{
    return (uv_hrtime() - ns) / 1000000;
}

static void send_refresh(struct lsp_facilities *s);

/* ---- persistence ------------------------------------------------------- */

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
 * save is in flight; a newer one waits in run_state.save_next (replacing an
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
    struct run_state *f = s ? run_of(s) : NULL;
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
    struct run_state *f = run_of(s);
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
 * and leaks; the loop thread swaps them in (load_after), unless a run or
 * hotline.clear replaced the profile meanwhile (discard) or the server is
 * exiting. A big profile takes seconds (~8 s for 50 MB on a quiet machine):
 * shutdown and exit set cancel, which the parse and the store's fill check
 * as they go, so that the worker ends within milliseconds and the loop (which
 * waits for it) lets the process exit. Freed in load_after only. */
struct lsp_load {
    uv_work_t req;
    struct lsp_facilities *srv; /* borrowed; NULL once the provider's free let go */
    char dir[PATH_MAX];
    int discard;
    atomic_int cancel; /* set on the loop thread, read by the worker */
    /* results (worker -> loop thread) */
    struct profile *prof;           /* owned until handed over */
    struct anchor_set snaps;        /* only snapshots: owned until handed over */
    struct memprof_leak_set *leaks; /* owned until handed over */
    int missing;                    /* no profile.json: nothing to say */
    char err[2 * PATH_MAX + 256];   /* why profile.json was refused: "<path>: <why>" */
};

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
    ld->leaks = memprof_leak_set_new(ld->prof);
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
    profile_free(ld->prof);
    anchor_snaps_clear(&ld->snaps);
    memprof_leak_set_free(ld->leaks);
    free(ld);
}

static void load_after(uv_work_t *req, int status)
{
    struct lsp_load *ld = req->data;
    struct lsp_facilities *s = ld->srv;
    struct run_state *f = s ? run_of(s) : NULL;
    if (f) f->load = NULL;
    if (!f || f->exiting || ld->discard || status < 0 || atomic_load(&ld->cancel)) {
        load_free(ld);
        return;
    }
    if (!ld->prof) {
        if (!ld->missing) lsp_log(s, LSP_MSG_WARNING, "ignoring %s", ld->err);
        load_free(ld);
        return;
    }
    lsp_pview_replace(s, ld->prof, &ld->snaps, ld->leaks);
    ld->prof = NULL;
    ld->leaks = NULL;
    lsp_log(s, LSP_MSG_INFO, "loaded the last profile from %s/profile.json", ld->dir);
    load_free(ld);
    /* requests answered meanwhile had no profile: ask for them again */
    if (f->initialized && s->running) send_refresh(s);
}

static void load_profile(struct lsp_facilities *s)
{
    struct run_state *f = run_of(s);
    char dir[PATH_MAX];
    if (!lsp_setting_bool(s, "persist", 1) || lsp_hotline_dir(s, dir, sizeof dir)) return;
    struct lsp_load *ld = calloc(1, sizeof *ld);
    if (!ld) return;
    ld->srv = s;
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

/* A run or hotline.clear replaces the profile: a load still under way must
 * not bring the old one back. */
static void load_discard(struct run_state *f)
{
    if (f->load) f->load->discard = 1;
}

/* Shutdown or exit: the profile will never be shown, stop loading it. */
static void load_cancel(struct run_state *f)
{
    if (!f->load) return;
    atomic_store(&f->load->cancel, 1);
    uv_cancel((uv_req_t *)&f->load->req); /* not started yet: never starts */
}

/* ---- progress, refresh, executing ------------------------------------- */

static void hottest_line(struct lsp_facilities *s, char *buf, size_t n)
{
    struct prof_line_ref top;
    buf[0] = 0;
    const struct profile *prof = lsp_pview_profile(s);
    if (prof && profile_top_lines(prof, &top, 1) == 1) {
        const char *base = strrchr(top.file->path, '/');
        snprintf(buf, n, " · hottest %s:%d (%.0f%%)", base ? base + 1 : top.file->path, top.line,
                 summary_share(prof, top.st));
    }
}

static void send_refresh(struct lsp_facilities *s)
{
    struct run_state *f = run_of(s);
    f->dirty = 0;
    f->last_refresh_ns = uv_hrtime();
    lsp_pview_updated(s, LSP_PV_DATA); /* refresh requests, diagnostics */
}

/* The fallback for clients without hotline/executing: an Information
 * diagnostic on the running line (new reference), or NULL. Names the same
 * library call as the notification. */
static json_t *live_diagnostic(struct lsp_facilities *s, struct lsp_run *r, const json_t *exec)
{
    (void)s;
    if (!exec) return NULL;
    const char *lib = json_string_value(json_object_get(exec, "call"));
    char msg[700];
    double el = (double)(uv_hrtime() - r->start_ns) / 1e9;
    snprintf(msg, sizeof msg, "\u25b6 running for %.1f s%s%s", el, lib ? " \u2014 in " : "",
             lib ? lib : "");
    json_int_t line = json_integer_value(json_object_get(exec, "line"));
    return json_pack("{s:s, s:{s:{s:I, s:i}, s:{s:I, s:i}}, s:i, s:s, s:s, s:s}", "uri",
                     json_string_value(json_object_get(exec, "uri")), "range", "start", "line",
                     line, "character", 0, "end", "line", line, "character", 0, "severity", 3,
                     "source", "hotline", "code", "running", "message", msg);
}

/* The params of hotline/runEnded (new), the documented end of a run, or NULL
 * for a client that takes no hotline notifications (it opted into neither
 * hotline/executing nor experimental.hotlineRunEnded). reason: the end
 * message's words ("exited 0", "stopped"). Sent after the final refresh, so
 * a client that refreshes its views on it gets the finished run's data. */
static json_t *run_ended_params(struct lsp_facilities *s, struct lsp_run *r,
                                const struct session *ss, const char *reason)
{
    if (!s->out->executing_optin &&
        !json_is_true(lsp_client_cap(s, "experimental.hotlineRunEnded")))
        return NULL;
    const char *outcome = r->stop_requested                           ? "stopped"
                          : (ss->term_signal || ss->exit_status != 0) ? "failed"
                                                                      : "done";
    json_t *o =
        json_pack("{s:s?, s:s, s:s, s:i, s:i, s:f, s:I}", "uri", r->uri, "outcome", outcome,
                  "reason", reason, "exitStatus", ss->exit_status, "signal", ss->term_signal,
                  "elapsed_s", ss->elapsed_s, "samples", (json_int_t)r->store->meta.samples);
    if (o && r->attach_pid > 0) json_object_set_new(o, "attachedPid", json_integer(r->attach_pid));
    if (o && r->attach_memory) json_object_set_new(o, "memory", json_true());
    return o;
}

static void on_tick(uv_timer_t *t)
{
    struct lsp_run *r = t->data;
    struct lsp_facilities *s = r->srv;
    if (r->now_fresh && r->now) {
        r->now_fresh = 0;
        const char *dirs[] = {r->main_dir, r->main_dir_given};
        json_t *exec = lsp_exec_from_now(s, r->now, dirs, 2);
        if (s->out->executing_optin && exec) {
            lsp_notify(s, "hotline/executing", json_incref(exec));
            r->exec_sent = 1;
        }
        if (!s->out->executing_optin && lsp_setting_bool(s, "executingFallback", 1)) {
            lsp_pview_set_live(s, live_diagnostic(s, r, exec));
            r->live_changed = 1;
        }
        json_decref(exec);
    }
    struct run_state *f = run_of(s);
    const struct profile *prof = lsp_pview_profile(s);
    if (ms_since(f->last_refresh_ns) >= LSP_TICK_MS) {
        if (lsp_progress_begun(&r->progress)) {
            char msg[256], hot[160];
            double t = (double)(uv_hrtime() - r->start_ns) / 1e9;
            hottest_line(s, hot, sizeof hot);
            if (r->attach_memory && (!prof || prof->meta.samples == 0)) /* gdb at work */
                snprintf(msg, sizeof msg, "%.1f s · injecting Hotline's agent (gdb)", t);
            else
                snprintf(msg, sizeof msg, "%.1f s · %lld samples%s", t,
                         prof ? prof->meta.samples : 0, hot);
            lsp_progress_report(s, &r->progress, msg);
        }
        if (f->dirty) {
            send_refresh(s); /* publishes the live line too */
        } else {
            if (r->live_changed) lsp_pview_updated(s, LSP_PV_LIVE);
            f->last_refresh_ns = uv_hrtime();
        }
        r->live_changed = 0;
    }
}

/* ---- session callbacks ------------------------------------------------- */

static void on_delta(struct session *ss, void *ud)
{
    (void)ss;
    struct lsp_run *r = ud;
    run_of(r->srv)->dirty = 1;
}

static void on_now(struct session *ss, const json_t *now, void *ud)
{
    (void)ss;
    struct lsp_run *r = ud;
    json_decref(r->now);
    r->now = json_incref((json_t *)now);
    r->now_fresh = 1;
}

static void on_error(struct session *ss, const char *msg, void *ud)
{
    (void)ss;
    struct lsp_run *r = ud;
    lsp_log(r->srv, LSP_MSG_WARNING, "run: %s", msg);
}

/* the attach helper names a child it does not follow (or follows): shown */
static void on_notice(struct session *ss, const char *msg, void *ud)
{
    (void)ss;
    struct lsp_run *r = ud;
    lsp_show(r->srv, LSP_MSG_INFO, "hotline: %s", msg);
}

static void run_free(struct lsp_run *r)
{
    free(r->uri);
    free(r->path);
    free(r->main_dir);
    free(r->main_dir_given);
    json_decref(r->now);
    json_decref(r->pending);
    free(r);
}

static void on_tick_closed(uv_handle_t *h)
{
    struct lsp_run *r = h->data;
    r->tick_open = 0;
    if (!r->sess.io && r->sess.closing) /* the session finished closing first */
        run_free(r);
}

static void on_sess_closed(struct session *ss)
{
    struct lsp_run *r = (struct lsp_run *)ss;
    struct run_state *f = run_of(r->srv);
    for (struct lsp_run **pp = &f->closing; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    if (!r->tick_open) run_free(r);
}

/* Detach r from the server and close it (kills the program if still running). */
static void run_retire(struct lsp_facilities *s, struct lsp_run *r)
{
    struct run_state *f = run_of(s);
    if (f->run == r) {
        f->run = NULL;
        lsp_pview_set_running(s, 0);
        lsp_pview_set_live(s, NULL);
    }
    lsp_progress_drop(s, &r->progress); /* a cancel can no longer reach r */
    if (r->tick_open && !uv_is_closing((uv_handle_t *)&r->tick))
        uv_close((uv_handle_t *)&r->tick, on_tick_closed);
    r->next = f->closing;
    f->closing = r;
    session_close(&r->sess, on_sess_closed);
}

static int start_run(struct lsp_facilities *s, json_t *id, json_t *args);
static void on_progress_cancel(struct lsp_facilities *s, void *data);

static void on_exit_cb(struct session *ss, void *ud)
{
    struct lsp_run *r = ud;
    struct lsp_facilities *s = r->srv;
    struct run_state *f = run_of(s);
    uv_timer_stop(&r->tick);
    json_t *ended; /* new, or NULL */
    {
        struct prof_meta *m = &r->store->meta;
        char reason[128];
        m->elapsed_s = ss->elapsed_s;
        m->exit_status = ss->exit_status;
        m->exit_signal = ss->term_signal;
        profile_describe_exit(ss->exit_status, ss->term_signal, reason, sizeof reason);
        if (r->attach_pid > 0) /* the helper's status: 0 detached or target gone */
            snprintf(reason, sizeof reason, "%s",
                     r->stop_requested                            ? "detached"
                     : ss->agent_error[0] || ss->exit_status != 0 ? "attach failed"
                                                                  : "target exited");
        else if (r->stop_requested) /* SIGINT may end it as "exited 1" (KeyboardInterrupt) */
            snprintf(reason, sizeof reason, "stopped");
        profile_set_str(&m->reason, reason);
        const char *base = strrchr(r->path, '/');
        base = base ? base + 1 : r->path;
        int bad = !r->stop_requested && (ss->term_signal || ss->exit_status != 0);
        if (r->attach_pid > 0 && ss->agent_error[0]) bad = 0; /* the agent message says it */
        char *tail = bad ? session_output_tail(ss) : NULL;
        const char *last = NULL;
        if (tail) { /* the last non-empty line of output: usually the exception */
            size_t n = strlen(tail);
            while (n && (tail[n - 1] == '\n' || tail[n - 1] == '\r'))
                tail[--n] = 0;
            last = strrchr(tail, '\n');
            last = last ? last + 1 : tail;
        }
        lsp_show(s, bad ? LSP_MSG_WARNING : LSP_MSG_INFO,
                 "hotline: %s %s after %.1f s, %lld samples%s%s%s", base, reason, ss->elapsed_s,
                 m->samples, ss->agent_error[0] ? " (agent: " : "", ss->agent_error,
                 ss->agent_error[0] ? ")" : "");
        if (last && *last && r->attach_pid > 0) { /* the helper's own words: why it failed */
            if (!strncmp(last, "hotline attach: ", 16)) last += 16;
            lsp_show(s, LSP_MSG_ERROR, "hotline: cannot attach to process %d%s: %s", r->attach_pid,
                     r->attach_memory ? " with memory" : "", last);
        } else if (last && *last) {
            lsp_show(s, LSP_MSG_WARNING, "%s: %s", base, last);
        }
        free(tail);
        if (m->samples == 0 && ss->nconns_total == 0)
            lsp_log(s, LSP_MSG_WARNING, "the profiler agent never connected: no profile");
        save_profile(s);
        lsp_pview_set_leaks(s, memprof_leak_set_new(lsp_pview_profile(s)));
        ended = run_ended_params(s, r, ss, reason);
    }
    lsp_progress_end(s, &r->progress,
                     r->attach_pid > 0   ? "detached"
                     : r->stop_requested ? "stopped"
                                         : "done");
    if (r->exec_sent) lsp_notify(s, "hotline/executing", json_pack("{s:n}", "uri"));
    json_t *pending = r->pending;
    r->pending = NULL;
    run_retire(s, r);
    send_refresh(s); /* final hints / lenses / diagnostics */
    if (ended) lsp_notify(s, "hotline/runEnded", ended);
    if (pending && !f->exiting) {
        start_run(s, NULL, pending);
    }
    json_decref(pending);
}

/* ---- commands ---------------------------------------------------------- */

static char **str_array(json_t *a, int *n, char **extra, int nextra)
{
    size_t cnt = json_is_array(a) ? json_array_size(a) : 0;
    if (cnt + (size_t)nextra > RUN_MAX_ARGS) cnt = RUN_MAX_ARGS - (size_t)nextra;
    char **v = calloc(cnt + (size_t)nextra + 1, sizeof *v);
    *n = 0;
    if (!v) return NULL;
    for (int i = 0; i < nextra; i++)
        v[(*n)++] = extra[i];
    for (size_t i = 0; i < cnt; i++) {
        const char *sv = json_string_value(json_array_get(a, i));
        if (sv) v[(*n)++] = (char *)sv;
    }
    return v;
}

/* Start a run from hotline.run arguments (borrowed). id may be NULL (restart):
 * errors then go to showMessage. 0 or negative errno. */
static int start_run(struct lsp_facilities *s, json_t *id, json_t *a)
{
    struct run_state *f = run_of(s);
    /* hotline.attach: {"pid": N} instead of a program to start */
    int attach_pid = (int)json_integer_value(json_object_get(a, "pid"));
    int attach_memory = attach_pid > 0 && json_is_true(json_object_get(a, "memory"));
    int attach_children = attach_pid > 0 && json_is_true(json_object_get(a, "children"));
    struct pyproc_info target;
    char self_exe[PATH_MAX] = "", target_uri_buf[PATH_MAX + 16] = "";
    if (attach_pid > 0) {
        ssize_t l = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        self_exe[l > 0 ? l : 0] = 0;
        int rc = pyproc_describe(attach_pid, &target);
        if (rc || !self_exe[0]) {
            const char *why = rc == -ESRCH ? "no such process"
                              : rc         ? strerror(-rc)
                                           : "cannot find hotline's own executable";
            if (id)
                lsp_reply_error(s, id, LSP_REQUEST_FAILED, "cannot attach to %d: %s", attach_pid,
                                why);
            lsp_show(s, LSP_MSG_ERROR, "hotline: cannot attach to process %d: %s", attach_pid, why);
            return rc ? rc : -ENOENT;
        }
        if (target.main[0]) {
            char *u = lsp_path_to_uri(target.main);
            if (u) snprintf(target_uri_buf, sizeof target_uri_buf, "%s", u);
            free(u);
        }
    }
    const char *uri = attach_pid > 0 ? (target_uri_buf[0] ? target_uri_buf : NULL)
                                     : json_string_value(json_object_get(a, "uri"));
    const char *module = json_string_value(json_object_get(a, "module"));
    const char *python = json_string_value(json_object_get(a, "python"));
    const char *cwd = json_string_value(json_object_get(a, "cwd"));
    const char *in = json_string_value(json_object_get(a, "stdin"));
    if (!python) python = json_string_value(lsp_setting(s, "python"));
    char *path = uri ? lsp_uri_to_path(uri) : NULL;
    if (attach_pid > 0 && !path) { /* -m, -c, an embedding program: its command */
        char name[64];
        snprintf(name, sizeof name, "process %d", attach_pid);
        path = strdup(name);
    }
    if (!module && !path) {
        if (id)
            lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.run needs a file: uri");
        else
            lsp_show(s, LSP_MSG_ERROR, "hotline.run needs a file: uri");
        return -EINVAL;
    }
    struct lsp_run *r = calloc(1, sizeof *r);
    if (!r) {
        free(path);
        return -ENOMEM;
    }
    r->srv = s;
    r->path = path ? path : strdup(module);
    r->uri = strdup(uri ? uri : "");
    char dir[PATH_MAX];
    if (attach_pid > 0 && !target.main[0]) {
        snprintf(dir, sizeof dir, "%s", target.cwd[0] ? target.cwd : "/");
    } else if (path) {
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) *slash = 0;
    } else {
        snprintf(dir, sizeof dir, "%s", cwd ? cwd : s->root_path ? s->root_path : ".");
    }
    char real[PATH_MAX]; /* frames name files by their real path more often than not */
    r->main_dir = strdup(realpath(dir, real) ? real : dir);
    r->main_dir_given = strdup(dir);
    int nargs = 0, ninc = 0, nexc = 0;
    /* extra arguments from the settings come first, then this run's */
    json_t *all = json_array();
    json_array_extend(all, json_is_array(lsp_setting(s, "args")) ? lsp_setting(s, "args") : all);
    if (json_is_array(json_object_get(a, "args")))
        json_array_extend(all, json_object_get(a, "args"));
    char **args = str_array(all, &nargs, NULL, 0);
    char **inc = str_array(lsp_setting(s, "include"), &ninc, NULL, 0);
    char **exc = str_array(lsp_setting(s, "exclude"), &nexc, NULL, 0);

    struct profile *store = profile_new();
    struct session_opts o = {.python = python,
                             .script = module ? NULL : path,
                             .module = module,
                             .args = args,
                             .nargs = nargs,
                             .cwd = cwd ? cwd : r->main_dir,
                             .interval_ms = lsp_setting_num(s, "intervalMs", 0),
                             .profile_all = lsp_setting_bool(s, "profileAll", 0),
                             .include = inc,
                             .ninclude = ninc,
                             .exclude = exc,
                             .nexclude = nexc,
                             .memory = lsp_setting_bool(s, "memory", 1),
                             .stdin_path = in,
                             .attach_pid = attach_pid,
                             .attach_memory = attach_memory,
                             .attach_children = attach_children,
                             .attach_exe = self_exe};
    if (attach_pid > 0) {
        o.cwd = r->main_dir;
        o.nargs = 0;
    }
    struct session_cbs cbs = {.on_delta = on_delta,
                              .on_now = on_now,
                              .on_error = on_error,
                              .on_notice = on_notice,
                              .on_exit = on_exit_cb};
    int rc = store && r->uri && r->main_dir && args && inc && exc
                 ? session_start(s->loop, &r->sess, &o, &cbs, r, store)
                 : -ENOMEM;
    free(args);
    free(inc);
    free(exc);
    json_decref(all);
    if (rc) {
        const char *why = rc == -ENOMEM ? "out of memory" : r->sess.errmsg;
        if (id) lsp_reply_error(s, id, LSP_REQUEST_FAILED, "cannot run: %s", why);
        lsp_show(s, LSP_MSG_ERROR, "hotline: cannot run %s: %s", r->path, why);
        profile_free(store);
        run_free(r);
        return rc;
    }
    if (attach_pid <= 0) { /* the user ran the program with it: Optimize may run it too */
        char pybuf[PATH_MAX];
        lsp_interp_ran(s, lsp_interp_exe(python, pybuf, sizeof pybuf));
    }
    /* the new profile replaces the old one from now on (a run that is still
     * closing has had its on_exit: it no longer touches its store) */
    load_discard(f);
    lsp_pview_replace(s, store, NULL, NULL);
    r->store = store;
    r->attach_pid = attach_pid;
    r->attach_memory = attach_memory;
    if (path && (attach_pid <= 0 || target.main[0])) { /* the program as it is now on disk is what
                                                          gets profiled (attach: the best guess) */
        lsp_pview_snapshot(s, path);
    }
    f->run = r;
    lsp_pview_set_running(s, 1);
    f->runs_started++;
    r->start_ns = uv_hrtime();
    /* the tick only paces live updates (hotline/executing, progress): without
     * it the run goes on and its result still comes at exit */
    if (!uv_timer_init(s->loop, &r->tick)) {
        r->tick.data = r;
        r->tick_open = 1;
        if (uv_timer_start(&r->tick, on_tick, LSP_EXEC_MIN_MS, LSP_EXEC_MIN_MS))
            lsp_log(s, LSP_MSG_WARNING, "run: no live updates (the timer did not start)");
    } else {
        lsp_log(s, LSP_MSG_WARNING, "run: no live updates (the timer could not be set up)");
    }
    session_request_now(&r->sess, 20);
    char token[48];
    snprintf(token, sizeof token, "hotline-run-%d", f->runs_started);
    lsp_progress_start(s, &r->progress, token, "Hotline",
                       attach_memory    ? "attaching with memory: injecting Hotline's agent (gdb)"
                       : attach_pid > 0 ? "attaching"
                                        : "starting",
                       on_progress_cancel, r);
    if (id && attach_pid > 0)
        lsp_reply(s, id,
                  json_pack("{s:b, s:i, s:s, s:b}", "attached", 1, "pid", attach_pid, "program",
                            r->path, "memory", attach_memory));
    else if (id)
        lsp_reply(s, id, json_pack("{s:b, s:i}", "started", 1, "pid", r->sess.pid));
    send_refresh(s); /* old hints go away */
    return 0;
}

static void cmd_run(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    struct run_state *f = self;
    if (!s->loop) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "this server cannot run programs");
        return;
    }
    if (!json_is_object(a)) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.run needs {\"uri\": ...}");
        return;
    }
    if (f->run) {
        if (json_is_true(json_object_get(a, "restart"))) {
            json_decref(f->run->pending);
            f->run->pending = json_deep_copy(a);
            json_object_del(f->run->pending, "restart");
            f->run->stop_requested = 1;
            session_stop(&f->run->sess);
            lsp_reply(s, id, json_pack("{s:b, s:b}", "started", 0, "restarting", 1));
            return;
        }
        lsp_reply_error(s, id, LSP_REQUEST_FAILED,
                        "a program is already running (pid %d): stop it first, or pass "
                        "\"restart\": true",
                        f->run->sess.pid);
        return;
    }
    start_run(s, id, a);
}

static void cmd_stop(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)a;
    struct lsp_run *r = ((struct run_state *)self)->run;
    if (!r) {
        lsp_reply(s, id, json_pack("{s:b}", "stopped", 0));
        return;
    }
    r->stop_requested = 1;
    session_stop(&r->sess);
    lsp_reply(s, id, json_pack("{s:b}", "stopped", 1));
}

/* hotline.attach {pid, memory?, children?}: sample a running Python from
 * outside (cmd_attach.c via the session; children: true follows its Python
 * children too), or with memory: true have gdb inject the agent, whose
 * stream the helper relays (attach_memory.c); the editor shows what it
 * shows during a run. */
static void cmd_attach(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    struct run_state *f = self;
    json_t *pid = json_object_get(a, "pid");
    json_t *memory = json_object_get(a, "memory");
    json_t *children = json_object_get(a, "children");
    if (!s->loop) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "this server cannot attach to processes");
        return;
    }
    if (!json_is_integer(pid) || json_integer_value(pid) <= 0 ||
        json_integer_value(pid) > INT_MAX) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.attach needs {\"pid\": N}");
        return;
    }
    if (memory && !json_is_boolean(memory)) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.attach: \"memory\" is true or false");
        return;
    }
    if (children && !json_is_boolean(children)) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS, "hotline.attach: \"children\" is true or false");
        return;
    }
    if (json_is_true(children) && json_is_true(memory)) {
        lsp_reply_error(s, id, RPC_INVALID_PARAMS,
                        "hotline.attach: \"children\" does not go with \"memory\" (the "
                        "injected agent is not inherited by children)");
        return;
    }
    if (json_integer_value(pid) == getpid()) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "that is the Hotline server itself");
        return;
    }
    if (f->run) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "%s is %s (pid %d): stop or detach first",
                        f->run->path, f->run->attach_pid > 0 ? "attached" : "running",
                        f->run->attach_pid > 0 ? f->run->attach_pid : f->run->sess.pid);
        return;
    }
    json_t *args = json_pack("{s:O, s:b, s:b}", "pid", pid, "memory", json_is_true(memory),
                             "children", json_is_true(children));
    start_run(s, id, args);
    json_decref(args);
}

/* hotline.detach: end an attach; the target runs on untouched */
static void cmd_detach(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)a;
    struct lsp_run *r = ((struct run_state *)self)->run;
    if (!r || r->attach_pid <= 0) {
        lsp_reply(s, id, json_pack("{s:b}", "detached", 0));
        return;
    }
    r->stop_requested = 1;
    session_stop(&r->sess); /* the helper: SIGINT detaches it */
    lsp_reply(s, id, json_pack("{s:b, s:i}", "detached", 1, "pid", r->attach_pid));
}

/* hotline.listProcesses: the Python processes one could attach to */
/* One hotline.listProcesses. pyproc_list reads /proc and opens every
 * Python process's interpreter image (attach_open: ELF symbols, a few ms
 * each, more on a machine with many processes or a slow disk), so it runs
 * on a thread of its own and the loop keeps serving. An open can also never
 * return (the image a FIFO, or on a hung NFS or FUSE mount): the thread is
 * detached, not on libuv's pool (whose threads are joined at exit), and
 * after LIST_BOUND_MS the request is answered with what the thread listed
 * so far, the blocked process marked; the thread then frees its job
 * whenever it ends (never, maybe), and that pid is not opened again. */
#define LIST_BOUND_MS 3000
#define LIST_MAX_THREADS 8 /* listings in flight, blocked ones included */

struct list_job { /* shared by the thread and the loop, under sh.mu */
    struct pylist_share sh;
    char *root; /* owned, or NULL */
    pid_t self;
    int finished;     /* the thread is done with the listing */
    int abandoned;    /* the loop let go: the thread frees the job */
    uv_async_t *wake; /* the loop's, valid while !abandoned */
};

struct lsp_list {
    struct lsp_facilities *srv; /* borrowed; NULL once the provider let go */
    json_t *id;                 /* owned copy of the request id */
    struct list_job *job;
    uv_async_t wake;
    uv_timer_t timer;
    int nclosing;
    struct lsp_list *next;
};

static void job_free(struct list_job *j)
{
    pthread_mutex_destroy(&j->sh.mu);
    json_decref(j->sh.out);
    json_decref(j->sh.cur);
    free(j->root);
    free(j);
}

static void *list_thread(void *arg)
{
    struct list_job *j = arg;
    pyproc_list_shared(j->root, j->self, &j->sh);
    pthread_mutex_lock(&j->sh.mu);
    j->finished = 1;
    int mine = j->abandoned;
    if (!mine) uv_async_send(j->wake);
    pthread_mutex_unlock(&j->sh.mu);
    if (mine) job_free(j);
    return NULL;
}

static void list_closed(uv_handle_t *h)
{
    struct lsp_list *l = h->data;
    if (--l->nclosing) return;
    json_decref(l->id);
    free(l);
}

/* Let go of l: out of the provider's list, the job handed to the thread
 * unless it is done (then freed here), the handles closed (l freed then). */
static void list_release(struct lsp_list *l)
{
    struct run_state *f = l->srv ? run_of(l->srv) : NULL;
    for (struct lsp_list **pp = f ? &f->lists : NULL; pp && *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    pthread_mutex_lock(&l->job->sh.mu);
    int done = l->job->finished;
    l->job->abandoned = 1;
    pthread_mutex_unlock(&l->job->sh.mu);
    if (done) job_free(l->job);
    l->job = NULL;
    l->nclosing = 2;
    uv_close((uv_handle_t *)&l->wake, list_closed);
    uv_close((uv_handle_t *)&l->timer, list_closed);
}

/* The thread is done: answer with its list. */
static void list_woken(uv_async_t *h)
{
    struct lsp_list *l = h->data;
    if (!l->job) return;
    struct lsp_facilities *s = l->srv;
    struct run_state *f = s ? run_of(s) : NULL;
    if (f && !f->exiting) lsp_reply(s, l->id, json_incref(l->job->sh.out));
    list_release(l);
}

/* The bound passed: answer with what was listed, the blocked one marked, and
 * remember its pid so that the next listings do not wait on it again. */
static void list_timeout(uv_timer_t *h)
{
    struct lsp_list *l = h->data;
    struct lsp_facilities *s = l->srv;
    struct run_state *f = s ? run_of(s) : NULL;
    pthread_mutex_lock(&l->job->sh.mu);
    json_t *out = json_deep_copy(l->job->sh.out);
    json_t *cur = l->job->sh.cur ? json_deep_copy(l->job->sh.cur) : NULL;
    int stuck = !l->job->finished;
    pthread_mutex_unlock(&l->job->sh.mu);
    if (f && stuck) f->nstuck++;
    int pid = (int)json_integer_value(json_object_get(cur, "pid"));
    if (f && pid > 0 && f->nblocked < PYLIST_MAX_SKIP) f->blocked[f->nblocked++] = pid;
    if (out && cur) json_array_append(out, cur);
    json_decref(cur);
    if (f && !f->exiting) {
        lsp_log(s, LSP_MSG_WARNING,
                "listProcesses: process %d's interpreter image did not open within %d ms "
                "(a FIFO, or a hung mount?): listed without its version",
                pid, LIST_BOUND_MS);
        if (out)
            lsp_reply(s, l->id, out);
        else
            lsp_reply_error(s, l->id, LSP_REQUEST_FAILED, "cannot list the processes");
    } else {
        json_decref(out);
    }
    list_release(l);
}

static void cmd_list_processes(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)a;
    struct run_state *f = self;
    int n = 0;
    for (struct lsp_list *l = f->lists; l; l = l->next)
        n++;
    if (s->loop && n + f->nstuck >= LIST_MAX_THREADS) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED,
                        "too many process listings in flight or blocked: try again later");
        return;
    }
    struct lsp_list *l = s->loop ? calloc(1, sizeof *l) : NULL;
    struct list_job *j = l ? calloc(1, sizeof *j) : NULL;
    if (!j) { /* no loop (fuzzing) or ENOMEM: in place */
        free(l);
        lsp_reply(s, id, pyproc_list(s->root_path, getpid()));
        return;
    }
    pthread_mutex_init(&j->sh.mu, NULL);
    j->sh.out = json_array();
    j->root = s->root_path ? strdup(s->root_path) : NULL;
    j->self = getpid();
    memcpy(j->sh.skip, f->blocked, sizeof j->sh.skip);
    j->sh.nskip = f->nblocked;
    const char *hang = getenv("HOTLINE_TEST_LIST_HANG_PID");
    j->sh.hang_pid = hang ? (pid_t)atoi(hang) : 0;
    j->wake = &l->wake;
    l->srv = s;
    l->id = json_deep_copy(id);
    l->job = j;
    pthread_attr_t at;
    pthread_t t;
    int ok = l->id && j->sh.out && (!s->root_path || j->root) && !pthread_attr_init(&at);
    if (ok) {
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        uv_async_init(s->loop, &l->wake, list_woken);
        uv_timer_init(s->loop, &l->timer);
        l->wake.data = l->timer.data = l;
        ok = !pthread_create(&t, &at, list_thread, j);
        pthread_attr_destroy(&at);
        if (!ok) {
            j->finished = 1; /* no thread: list_release frees the job */
            l->next = f->lists;
            f->lists = l;
            list_release(l);
            lsp_reply_error(s, id, LSP_REQUEST_FAILED, "cannot list the processes");
            return;
        }
        uv_timer_start(&l->timer, list_timeout, LIST_BOUND_MS, 0);
        l->next = f->lists;
        f->lists = l;
        return;
    }
    json_decref(l->id);
    free(l);
    job_free(j);
    lsp_reply(s, id, pyproc_list(s->root_path, getpid()));
}

static void cmd_clear(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)a;
    struct run_state *f = self;
    if (f->run) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "a program is running: stop it first");
        return;
    }
    load_discard(f);
    lsp_pview_replace(s, NULL, NULL, NULL);
    if (f->save_next) save_free(f->save_next);
    f->save_next = NULL;
    if (f->save) f->save->cleared = 1;
    clear_files(s);
    send_refresh(s);
    lsp_reply(s, id, json_pack("{s:b}", "cleared", 1));
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

/* hotline.showProfile; a (borrowed, may be NULL): {"uri", "line"}. */
static void cmd_show(struct lsp_facilities *s, void *self, json_t *id, json_t *a)
{
    (void)self;
    const char *uri = json_string_value(json_object_get(a, "uri"));
    json_t *line = json_object_get(a, "line");
    char *path = uri ? lsp_uri_to_path(uri) : NULL;
    char *text = summary_text(lsp_pview_profile(s), path,
                              json_is_integer(line) ? (int)json_integer_value(line) + 1 : 0);
    free(path);
    if (!text) {
        lsp_reply_error(s, id, LSP_REQUEST_FAILED, "no profile yet: run a program first");
        return;
    }
    if (!json_is_false(json_object_get(a, "show"))) lsp_show(s, LSP_MSG_INFO, "%s", text);
    lsp_reply(s, id, json_pack("{s:s}", "text", text));
    free(text);
}

static void run_output_live(struct lsp_facilities *s, void *self, int on)
{
    (void)s;
    struct run_state *f = self;
    struct lsp_run *r = f ? f->run : NULL;
    if (r && !r->sess.exited) session_request_now(&r->sess, on ? 20 : 0);
}

/* window/workDoneProgress/cancel for the run's progress */
static void on_progress_cancel(struct lsp_facilities *s, void *data)
{
    (void)s;
    struct lsp_run *r = data;
    r->stop_requested = 1;
    session_stop(&r->sess);
}

/* ---- lifecycle --------------------------------------------------------- */

static int run_init(struct lsp_facilities *s, void **self)
{
    (void)s;
    *self = calloc(1, sizeof(struct run_state));
    return *self ? 0 : -ENOMEM;
}

static void run_initialize(struct lsp_facilities *s, void *self, json_t *caps)
{
    (void)self, (void)caps;
    load_profile(s);
}

static void run_initialized(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct run_state *f = self;
    f->initialized = 1; /* a profile still loading is published when it is in */
}

static void run_shutdown(struct lsp_facilities *s, void *self)
{
    (void)s;
    if (self) load_cancel(self);
}

static void run_close(struct lsp_facilities *s, void *self)
{
    struct run_state *f = self;
    if (!f) return;
    f->exiting = 1;
    load_cancel(f);  /* the loop waits for the worker, which now ends at once */
    while (f->lists) /* unanswered; a thread still blocked keeps only its job */
        list_release(f->lists);
    if (f->run) {
        lsp_log(s, LSP_MSG_INFO, "stopping pid %d: the server is exiting", f->run->sess.pid);
        run_retire(s, f->run);
    }
}

static void run_settings_changed(struct lsp_facilities *s, void *self)
{
    struct run_state *f = self;
    if (lsp_pview_profile(s) || f->run) send_refresh(s);
}

static void run_debug_state(struct lsp_facilities *s, void *self, json_t *r)
{
    struct run_state *f = self;
    const struct profile *prof = lsp_pview_profile(s);
    json_object_set_new(r, "profile", json_boolean(prof != NULL));
    if (f->run)
        json_object_set_new(
            r, "run",
            json_pack("{s:i, s:b}", "pid", f->run->sess.pid, "running", !f->run->sess.exited));
    if (prof) json_object_set_new(r, "samples", json_integer(prof->meta.samples));
}

static void run_free_state(struct lsp_facilities *s, void *self)
{
    (void)s;
    struct run_state *f = self;
    if (!f) return;
    /* runs still closing (no loop to finish them) are leaked on purpose only
     * without a loop; with one, run_close + uv_run finished them. The
     * same for a load: with a loop it has ended; without, it ran in place */
    if (f->load) f->load->srv = NULL;
    if (f->save) f->save->srv = NULL; /* lands on its own, freed in save_after */
    for (struct lsp_list *l = f->lists; l; l = l->next)
        l->srv = NULL; /* closed by run_close */
    if (f->save_next) save_free(f->save_next);
    free(f);
}

static const struct lsp_command run_commands[] = {
    {"hotline.run", cmd_run},
    {"hotline.stop", cmd_stop},
    {"hotline.clear", cmd_clear},
    {"hotline.showProfile", cmd_show},
    {"hotline.attach", cmd_attach},
    {"hotline.detach", cmd_detach},
    {"hotline.listProcesses", cmd_list_processes},
    {NULL, NULL},
};

const struct lsp_provider lsp_run_provider = {
    .name = "run",
    .init = run_init,
    .initialize = run_initialize,
    .initialized = run_initialized,
    .shutdown = run_shutdown,
    .commands = run_commands,
    .settings_changed = run_settings_changed,
    .output_live = run_output_live,
    .debug_state = run_debug_state,
    .close = run_close,
    .free = run_free_state,
};
