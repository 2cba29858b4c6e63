/* The target slot of `hotline lsp`: the one program under the profiler per
 * server (= workspace), started by hotline.run (providers/run.c) or
 * hotline.attach (providers/attach.c). Not a provider: the module those two
 * share (docs/development.md, "Layers"), so that hotline.stop reaches an
 * attach as it reaches a run.
 *
 * Its lifecycle: start (a struct session on the server's loop, the new
 * profile in the view, the live line begun), progress (work-done, cancel
 * stops it), the tick (progress messages, throttled refresh requests), the
 * end (the profile's exit fields, the messages, hotline/runEnded,
 * LSP_PV_FINAL, a pending restart), stop. When the server exits the target
 * is killed (session_close sends SIGKILL to its process group) and the loop
 * runs until its handles are closed. */
#ifndef HOTLINE_PROVIDERS_TARGET_H
#define HOTLINE_PROVIDERS_TARGET_H

#include <jansson.h>
#include <stdint.h>
#include <uv.h>

#include "core/facilities.h"
#include "core/lsp_call.h"
#include "proc/session.h"

struct target_slot;

/* hotline.run's arguments (borrowed) to start after the current target
 * ends (a restart); id NULL: errors go to showMessage. */
typedef void (*target_restart_fn)(struct lsp_facilities *s, json_t *args);

/* One program under the profiler: a run, or the `hotline attach` helper. */
struct lsp_target {
    struct session sess;        /* first: the session callbacks' pointer */
    struct lsp_facilities *srv; /* borrowed */
    struct target_slot *slot;   /* borrowed: the slot it was started in */
    struct profile *store;      /* borrowed: the profile view's (the core owns it) */
    char *uri, *path;           /* owned: the program's file */
    char *main_dir;             /* owned: directory of the program, resolved (user frames) */
    char *main_dir_given;       /* owned: the same as given */
    uv_timer_t tick;            /* progress and refresh requests */
    int tick_open;
    uint64_t start_ns;
    struct lsp_progress progress; /* cancellable: cancel stops the program */
    int stop_requested;
    int attach_pid;            /* > 0: attached to this running process, not a run */
    int attach_memory;         /* ... with the agent injected (memory on) */
    json_t *pending;           /* owned hotline.run arguments to start after this one */
    target_restart_fn restart; /* starts pending */
    struct lsp_target *next;
};

/* The slot: one per server, shared by the providers that start targets. */
struct target_slot {
    struct lsp_target *cur;     /* owned until its session closed; NULL when idle */
    struct lsp_target *closing; /* targets whose session is closing (through ->next) */
    int started;
    int dirty; /* profile changed since the last refresh request */
    uint64_t last_refresh_ns;
    int exiting;
    /* the slots of live servers (normally one) */
    struct lsp_facilities *srv; /* borrowed */
    int refs;
    struct target_slot *next_slot;
};

/* What to start. Every pointer is borrowed except path. */
struct target_spec {
    const char *uri;    /* the program's file: URI, or NULL */
    char *path;         /* stolen: its path, or NULL (a module run) */
    const char *module; /* python -m module, or NULL */
    const char *python; /* NULL: the "python" setting */
    const char *cwd;    /* NULL: the main directory */
    const char *stdin_path;
    const char *dir;   /* the program's directory as given (its frames are the user's) */
    json_t *args;      /* the run's own arguments (after the settings' "args"), or NULL */
    int attach_pid;    /* > 0: start the `hotline attach` helper on it */
    int attach_memory; /* ... with the agent injected */
    int attach_children;
    const char *attach_exe; /* hotline's own executable (the helper) */
    int snapshot;           /* the file on disk now is what runs: snapshot it */
};

/* The slot of s's server (new reference: created by the first of the
 * providers' inits, freed by the last release), or NULL (no memory). */
struct target_slot *target_slot_acquire(struct lsp_facilities *s);
void target_slot_release(struct target_slot *slot);

/* Start sp in slot (which must be idle). The progress has begun; the
 * caller replies to id on success and then calls target_refresh(...,
 * LSP_PV_DATA). On failure id (if any) got the error reply, the user a
 * message. Returns the target (borrowed), or NULL with *rc a negative errno. */
struct lsp_target *target_start(struct lsp_facilities *s, struct target_slot *slot, json_t *id,
                                struct target_spec *sp, int *rc);

/* Ask t's program to end (SIGINT; the attach helper detaches); its end comes
 * through the session's exit as any other. */
void target_stop(struct lsp_target *t);

/* lsp_pview_updated(what) and the throttle reset. what: LSP_PV_DATA, with
 * LSP_PV_FINAL or LSP_PV_CLEARED for persistence. */
void target_refresh(struct lsp_facilities *s, struct target_slot *slot, int what);

/* The server exits: kill the current target, if any (idempotent). */
void target_slot_close(struct lsp_facilities *s, struct target_slot *slot);

#endif
