/* session: one profiled run of a Python program, driven entirely by a
 * caller-provided libuv loop (shared with the LSP server: nothing here
 * blocks). It creates a private Unix socket, spawns the interpreter with the
 * agent bootstrap on PYTHONPATH, accepts one agent connection per profiled
 * process, decodes the wire stream (protocol/agent_wire.h) into a profile
 * store, and reports the end of the run once the program has exited AND every
 * agent connection has drained (or a grace period has passed).
 *
 * Process groups: with inherit_stdio (`hotline run` in a terminal) the program
 * stays in hotline's process group, so the terminal's Ctrl-C / Ctrl-Z and
 * job control reach it exactly as in a plain run, and it keeps its
 * controlling terminal. Without inherit_stdio (LSP) it gets its own session
 * and process group (setsid), and session_stop()/session_signal() signal the
 * whole group, children included. A SIGKILLed server signals nothing: then
 * the agent in the program's main process kills the group (its death signal,
 * profiler/module.c); a child that left the group (setsid) escapes. */
#ifndef HOTLINE_SESSION_H
#define HOTLINE_SESSION_H

#include <jansson.h>
#include <uv.h>

#include "agent_wire.h"
#include "store/profile.h"

#define SESSION_OUTPUT_TAIL 8192  /* bytes of program output kept (LSP mode) */
#define SESSION_MAX_CONNS 1024    /* agent connections at once; more are refused */
#define SESSION_DRAIN_MS 3000     /* wait for agent connections after the program exits */
#define SESSION_STOP_STEP_MS 2000 /* SIGINT -> SIGTERM -> SIGKILL escalation step */
#define SESSION_MAX_SINKS 64      /* output pipes of outliving processes read and dropped */

struct session;

struct session_opts {
    const char *python; /* NULL => $VIRTUAL_ENV/bin/python, else python3 on PATH */
    const char *script; /* exactly one of script / module */
    const char *module;
    char **args; /* program arguments (borrowed), nargs of them */
    int nargs;
    const char *cwd;    /* NULL => ours */
    double interval_ms; /* 0 => agent default */
    int profile_all;
    int all_threads; /* idle threads' samples count too (sampling/charge.h) */
    char **include;  /* borrowed globs */
    int ninclude;
    char **exclude;
    int nexclude;
    int memory;
    int inherit_stdio; /* 1: `hotline run`; 0: stdin /dev/null, stdout/stderr drained */
    /* without inherit_stdio: a file for the program's stdin instead of
     * /dev/null (relative to cwd), or NULL */
    const char *stdin_path;
    /* without inherit_stdio: a file (relative to cwd, created or truncated)
     * for the program's stdout and stderr instead of the drained pipes (no
     * tail then), or NULL (`hotline top`'s script log) */
    const char *output_path;
    /* attach instead of run (the editor's "Attach to process"): the process
     * spawned is `attach_exe attach PID --connect <socket>` (hotline's own
     * CLI, cmd_attach.c), which samples the running Python PID from outside
     * and speaks the agent's wire on the session socket; stopping the
     * session stops that helper, never the target. script is then only the
     * target's program name for the profile; include / exclude are passed
     * on (--include / --exclude); module, args, stdin, memory are not used.
     * attach_memory: `--memory` too: the helper injects the in-process agent
     * (gdb, or PEP 768 on 3.14+) and relays its stream here (attach_memory.c);
     * include / exclude go into the injected agent's config.
     * attach_children: `--children` (not with attach_memory): the helper
     * follows the target's Python children, each on a connection of its own
     * as a run's forked children; without it they are only named (a `log`
     * of level "notice", on_notice). */
    int attach_pid;
    int attach_memory;
    int attach_children;
    const char *attach_exe;
};

struct session_cbs {
    void (*on_delta)(struct session *, void *ud); /* store changed; may be NULL */
    /* live stacks, resolved by profile_conn_resolve_now (borrowed); may be NULL */
    void (*on_now)(struct session *, const json_t *now, void *ud);
    void (*on_error)(struct session *, const char *msg, void *ud); /* may be NULL */
    /* a line meant for the user (a `log` of level "notice": the attach
     * helper naming a child it does not follow); may be NULL */
    void (*on_notice)(struct session *, const char *msg, void *ud);
    /* program ended and all agent connections drained; required */
    void (*on_exit)(struct session *, void *ud);
};

struct session_conn; /* one agent connection (private) */
struct session_io;   /* handles (private) */

struct session {
    /* read-only for callers once started */
    int pid;
    int exited;            /* the program's process is gone */
    int exit_status;       /* -1 until known */
    int term_signal;       /* 0 or the signal that killed it */
    double elapsed_s;      /* spawn to exit */
    int nconns_total;      /* agent connections seen */
    char agent_error[512]; /* last `error` from an agent, "" if none */
    char errmsg[512];      /* why session_start failed */

    /* private */
    uv_loop_t *loop;
    struct profile *store; /* borrowed */
    struct session_cbs cb;
    void *ud;
    struct session_io *io; /* libuv handles, heap block freed by the last close callback */
    int out_open[2];
    char *tail; /* SESSION_OUTPUT_TAIL ring of program output */
    size_t tail_len, tail_pos;
    char tmpdir[256], sockpath[300];
    int detached, proc_open, stop_stage, now_hz, done, closing, pending_closes, done_closing,
        drain_ticks;
    uint64_t start_ns, drain_deadline;
    struct session_conn *conns;
    int nconns;
    void (*on_closed)(struct session *);
};

/* Start the program. s is caller storage (zeroed here), o and its strings are
 * only read during the call, cb is copied, store is borrowed and must outlive
 * the session. Returns 0, or a negative errno with a reason in s->errmsg
 * (then no callback runs and nothing needs closing). */
int session_start(uv_loop_t *loop, struct session *s, const struct session_opts *o,
                  const struct session_cbs *cb, void *ud, struct profile *store);
/* Ask every agent for `now` stacks at up to hz per second (0 stops). */
void session_request_now(struct session *s, int hz);
/* Send sig to the program (its process group when it has its own). */
void session_signal(struct session *s, int sig);
/* SIGINT, then SIGTERM after 2 s, then SIGKILL after 2 more. */
void session_stop(struct session *s);
/* Last bytes the program wrote to stdout/stderr (LSP mode), NUL-terminated
 * copy (new; caller frees), or NULL. */
char *session_output_tail(const struct session *s);
/* Release everything (kills a still-running program with SIGKILL, removes the
 * socket directory). on_closed runs once all handles are closed; s may then
 * be freed. on_closed may be NULL. No other callback runs after this call. */
void session_close(struct session *s, void (*on_closed)(struct session *));

/* Close the output sinks on loop (pipes of processes that outlived their run,
 * read and dropped until EOF; LSP mode): call before uv_loop_close. */
void session_sinks_close(uv_loop_t *loop);

/* Directory holding the agent bootstrap (sitecustomize.py + the agent's
 * package SESSION_AGENT_PKG + the public `hotline` package):
 * $HOTLINE_AGENT_PATH, else <exe dir>/python, else <exe dir>/../lib/hotline/python.
 * Writes into buf; returns 0 or -ENOENT (buf then holds the paths tried). */
int session_agent_dir(char *buf, size_t n);

/* The package the bootstrap and `attach --memory` import, in the agent
 * directory: a private name, so that a program's own `hotline` module is
 * never shadowed (the public one is for users who put it on their path).
 * It holds the _agent builds and the memory shim, SESSION_SHIM_NAME. */
#define SESSION_AGENT_PKG "_hotline_agent"
#define SESSION_SHIM_NAME "libhotline_memshim.so"

#endif
