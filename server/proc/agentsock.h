/* agentsock: a Unix socket where agents connect on their own, with no
 * program of ours around them (a Jupyter kernel or a script that called
 * hotline.connect(), docs/notebooks.md). Each connection is decoded like a
 * run's (protocol/agent_wire.h) into a store the owner gives at accept time.
 * Everything runs on the caller's libuv loop; nothing blocks.
 *
 * The socket's path is checked before it is bound: an existing symlink, or
 * anything not a socket, or a socket owned by another user, is refused and
 * left alone; a socket of ours that nobody answers on is stale and
 * replaced; one that answers belongs to another server (-EADDRINUSE). The
 * socket is made 0600 before it listens. */
#ifndef HOTLINE_AGENTSOCK_H
#define HOTLINE_AGENTSOCK_H

#include <jansson.h>
#include <uv.h>

#include "proc/agentconn.h"
#include "store/profile.h"

#define AGENTSOCK_MAX_CONNS 64 /* agents at once; more are refused */
/* what the connections' unfinished lines may hold together: 4 lines at
 * the per-line cap (AGENT_WIRE_MAX_LINE); a connection that would go past
 * it is closed with a log line (proc/agentconn.h) */
#define AGENTSOCK_MAX_BUFFERED ((size_t)64 << 20)

struct agentsock;
struct agentsock_conn; /* one agent connection (private) */

struct agentsock_cbs {
    /* a process connected: the store its data goes to (borrowed; must stay
     * until agentsock_drop or the connection ends), or NULL to refuse it */
    struct profile *(*on_accept)(struct agentsock *a, void *ud);
    /* its hello: which process it is; may be NULL */
    void (*on_hello)(struct agentsock *a, long long pid, void *ud);
    void (*on_delta)(struct agentsock *a, void *ud); /* store changed; may be NULL */
    /* live stacks, resolved (borrowed); may be NULL */
    void (*on_now)(struct agentsock *a, const json_t *now, void *ud);
    void (*on_error)(struct agentsock *a, const char *msg, void *ud); /* may be NULL */
    /* a notebook cell began or ended in this process (a `cell` message,
     * borrowed; the deltas before it are in the store already); may be NULL */
    void (*on_cell)(struct agentsock *a, const struct agent_msg *m, void *ud);
    /* a connection ended (a->nconns are left); may be NULL */
    void (*on_gone)(struct agentsock *a, long long pid, void *ud);
};

struct agentsock {
    int nconns;     /* read-only: connections open now */
    char path[108]; /* read-only: the socket (sun_path's size) */
    /* private */
    uv_loop_t *loop;
    uv_pipe_t listener; /* embedded: the owner frees a only after on_closed */
    struct agentsock_cbs cb;
    void *ud;
    struct agentsock_conn *conns;
    struct agentconn_budget budget; /* of every connection's line reader */
    int now_hz, listening, closing, pending_closes;
    void (*on_closed)(struct agentsock *);
};

/* Listen on path (copied). 0, or a negative errno with the reason in err
 * (cap n): -ELOOP (a symlink), -ENOTSOCK (not a socket), -EPERM (another
 * user's), -EADDRINUSE (another server answers there), -ENAMETOOLONG, or
 * libuv's. On failure no callback runs and nothing needs closing. */
int agentsock_listen(uv_loop_t *loop, struct agentsock *a, const char *path,
                     const struct agentsock_cbs *cb, void *ud, char *err, size_t n);
/* Ask every agent for `now` stacks at up to hz per second (0 stops). */
void agentsock_request_now(struct agentsock *a, int hz);
/* Send every agent a `stop`: each ends its stream (last delta, `end`) and
 * closes; on_gone follows. An agent `hotline attach --memory` injected
 * then unloads itself (docs/attach.md). */
void agentsock_release(struct agentsock *a);
/* Close every connection now and forget their stores (the store is going
 * away). The agents stop profiling; the listener stays. */
void agentsock_drop(struct agentsock *a);
/* Close the listener and every connection, unlink the socket; on_closed (may
 * be NULL) runs once every handle is closed. No other callback runs after. */
void agentsock_close(struct agentsock *a, void (*on_closed)(struct agentsock *));

#endif
