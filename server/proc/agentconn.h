/* agentconn: one agent connection on a Unix socket: its libuv pipe, the
 * line reader, the decoder, and the profile store's connection every
 * message is applied to (with the warnings a bad stream earns: an oversize
 * line, a message that does not decode, an undefined id, another wire
 * version). Shared by session.c (the programs hotline starts) and
 * agentsock.c (kernels and scripts that connect by themselves), which keep
 * what differs: what a message means to them, where a problem goes, what
 * the end of the stream does (struct agentconn_ops). */
#ifndef HOTLINE_AGENTCONN_H
#define HOTLINE_AGENTCONN_H

#include <uv.h>

#include "agent_wire.h"
#include "store/profile.h"

struct agentconn;

/* Bytes that several connections' line readers hold, together: a cap for
 * all of them, so that many peers each with an unfinished line under the
 * per-line cap (AGENT_WIRE_MAX_LINE) cannot take the server's memory. */
struct agentconn_budget {
    size_t used, max;
};

struct agentconn_ops {
    /* a problem of this stream, one line for the user */
    void (*report)(struct agentconn *c, const char *msg);
    /* a decoded message, already applied to c->pc (not called while c->pc
     * is NULL) */
    void (*message)(struct agentconn *c, const struct agent_msg *m);
    /* end of the stream or a read error: the process ended (maybe without
     * `end`) or stopped; the owner closes the connection */
    void (*eof)(struct agentconn *c);
};

struct agentconn {
    uv_pipe_t h; /* first member, and owners embed this first: handle -> owner */
    struct agent_reader rd;
    struct prof_conn *pc; /* owned; NULL: what arrives is read and dropped */
    const struct agentconn_ops *ops;
    long long pid; /* from hello; 0 before */
    int hello, warned, closing;
    struct agentconn_budget *budget; /* borrowed, or NULL: no common cap */
    size_t charged;                  /* what this reader holds of budget->used */
    int over;                        /* refused for the budget: reads nothing more */
};

/* c zeroed by the caller; initialises the pipe on loop. pc (owned from now
 * on, may be NULL) receives the messages. 0 or a libuv error (then nothing
 * needs closing but pc, which is freed). */
int agentconn_init(uv_loop_t *loop, struct agentconn *c, const struct agentconn_ops *ops,
                   struct prof_conn *pc);
/* Start reading (after uv_accept). 0 or a libuv error. A connection whose
 * unfinished line would take its budget past the cap is reported (one line)
 * and handed to ops->eof, the owner closing it. */
int agentconn_read_start(struct agentconn *c);
/* Send one line (a newline is added); dropped silently on failure. */
void agentconn_send(struct agentconn *c, const char *line);
/* Send `now` at hz to a connection that said hello and is not closing. */
void agentconn_send_now(struct agentconn *c, int hz);
/* The reader and the store connection: from the handle's close callback. */
void agentconn_release(struct agentconn *c);

#endif
