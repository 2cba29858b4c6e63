/* wiresink: the sink of `hotline attach --connect SOCK` (sink.h): each
 * process sampled gets its own connection to a Hotline server's agent
 * socket, as each agent of a run does, and its messages go there as lines
 * (the agent's wire, docs/agent-protocol.md); the server's `now` rate and
 * `stop` come back on it. Plain blocking sockets: the sampler's thread is
 * the only one. */
#ifndef HOTLINE_ATTACH_WIRESINK_H
#define HOTLINE_ATTACH_WIRESINK_H

#include "sink.h"

struct attach_wiresink {
    struct attach_sink sink; /* first: the sampler holds &sink */
    const char *path;        /* the server's socket (borrowed) */
};

/* ws ready to connect to path (borrowed) at each open. */
void attach_wiresink_init(struct attach_wiresink *ws, const char *path);

#endif
