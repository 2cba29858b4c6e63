/* relay: the byte pump of `hotline attach --memory --connect SOCK`. The
 * injected agent connects to a private socket; its bytes go to a Hotline
 * server's agent socket (SOCK) as they come, and the server's bytes (its
 * `now` rates, `stop`) back to the agent, so that the server sees what a
 * run's agent sends, its hello included. Nothing is decoded, but the
 * stream's last bytes are kept: its `end` line says why it ended. Caps:
 * agent bytes the server has not taken pause the agent's side (it waits,
 * not us); server bytes the agent has not taken are dropped. One libuv
 * loop, the caller's. */
#ifndef HOTLINE_PROC_RELAY_H
#define HOTLINE_PROC_RELAY_H

#include <stddef.h>
#include <uv.h>

struct relay;

struct relay_cbs {
    /* an agent connected: 1 to take it (the first one), 0 to leave it */
    int (*on_agent)(struct relay *r, void *data);
    /* the agent taken is read, its bytes flow */
    void (*on_ready)(struct relay *r, void *data);
    /* something failed (msg: a sentence): the caller ends */
    void (*on_fail)(struct relay *r, const char *msg, void *data);
    /* the agent's stream ended (tail: its last bytes, NUL-terminated);
     * what the server has not read yet still goes, then EOF */
    void (*on_agent_gone)(struct relay *r, const char *tail, void *data);
    /* the server closed its side */
    void (*on_server_gone)(struct relay *r, void *data);
};

struct relay {
    uv_loop_t *loop;
    const struct relay_cbs *cbs;
    void *data;
    uv_pipe_t listen, agent, up;
    uv_shutdown_t shut;
    int listen_open, agent_open, up_open, paused, flushing;
    char tail[256]; /* the stream's last bytes: its `end` says why it ended */
    size_t tail_len;
};

/* The server's socket (path, borrowed) first: when nobody listens there
 * nothing else is done. 0, or -1 with a sentence in err (cap n). */
int relay_connect(struct relay *r, uv_loop_t *loop, const char *path, const struct relay_cbs *cbs,
                  void *data, char *err, size_t n);
/* The private socket the agent connects to (0600): 0, or -1 as above. */
int relay_listen(struct relay *r, const char *sockpath, char *err, size_t n);
/* Our detach: the agent's `stop`, as agentsock_release sends it. */
void relay_stop(struct relay *r);
/* Close what is open (the server's side after its flush). */
void relay_close(struct relay *r);

#endif
