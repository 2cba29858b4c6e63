/* injector: the injection of `hotline attach --memory`, phase by phase,
 * on the caller's libuv loop: the checks before anything touches the
 * target (its interpreter, a stopped target, PEP 768 turned off, gdb
 * missing), then 3.9-3.13's gdb phase (inject_gdb.h: waiting for a safe
 * point, queueing the call) or 3.14+'s PEP 768 request (remote_exec.h),
 * then the wait for the agent to connect, each with its timeout, and an
 * interruption handled the safe way for the phase it comes in. What the
 * target runs is inject_files.h's; the socket the agent connects to is the
 * caller's, who says when it came (injector_arrived). */
#ifndef HOTLINE_INJECTOR_H
#define HOTLINE_INJECTOR_H

#include <limits.h>
#include <uv.h>

#include "inject.h"
#include "inject_files.h"
#include "inject_gdb.h"
#include "remote_exec.h"

#define INJECT_ESTOPPED (-1201) /* the target is stopped: nothing done */

enum { INJ_CHECKED, INJ_GDB, INJ_WAIT, INJ_DONE };

struct injector {
    uv_loop_t *loop;
    uv_timer_t timer;
    int timer_open;
    struct inject_target t;
    int rexec;       /* 3.14+: PEP 768, no gdb */
    struct rexec rx; /* where the request goes (rexec) */
    struct inject_gdb gdb;
    char gdb_path[PATH_MAX];
    double timeout_s; /* for a safe point, then for the agent */
    int phase;
    /* The injection failed (code: -EPERM, -ESRCH, -EINTR interrupted,
     * -EIO: the target left as it was, but for at most one page; other:
     * 1) with a sentence; end: the caller ends now (else gdb is still
     * finishing, and a second call with end set follows). */
    void (*on_fail)(struct injector *j, int code, const char *msg, int end);
    void *data;
};

/* The checks of pid, nothing touched: 0, or a negative code with a
 * sentence in why: inject_find's (-ESRCH, ATTACH_ENOTPY, -EPERM),
 * ATTACH_EVERSION (before 3.9), INJECT_ESTOPPED. */
int injector_find(struct injector *j, pid_t pid, char *why, size_t n);
/* The way in, still nothing touched: 3.14+ its PEP 768 request's place
 * (rexec_open's codes; REXEC_EDISABLED: turned off), else gdb (-ENOENT:
 * not installed). 0 or a code with why, as above. */
int injector_way(struct injector *j, char *why, size_t n);

/* Inject: the script in f (borrowed, written), the agent from agent_dir
 * (said to the user). 0, or the code with a sentence in why (then the
 * target is as it was). Failures later come through on_fail. */
int injector_start(struct injector *j, uv_loop_t *loop, const struct inject_files *f,
                   const char *agent_dir, char *why, size_t n);
/* The agent connected: the injection's timers stop. */
void injector_arrived(struct injector *j);
/* Ctrl-C (or the server gone) before the agent came. */
void injector_interrupt(struct injector *j);
/* Its timer stops (the caller ends); gdb is left to finish. */
void injector_stop(struct injector *j);
/* Its handles closed (before the caller's last uv_run). */
void injector_close(struct injector *j);

#endif
