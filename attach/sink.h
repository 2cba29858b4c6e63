/* sink: where the sampler's stream goes. The sampler (sampler.c) writes
 * each tick as the lines an agent would send (protocol/agent_emit.h, the
 * agent's own builders) and hands them to a sink, one stream per process
 * sampled, as each agent of a run has its own connection: the report sink
 * feeds them to the server's decoder and a profile store (server/cli/
 * cmd_attach.c: the report and the JSON are the run's own code), the wire
 * sink (wiresink.c, `--connect`) writes them on a Hotline server's agent
 * socket. A test's sink records them. */
#ifndef HOTLINE_ATTACH_SINK_H
#define HOTLINE_ATTACH_SINK_H

#include <stddef.h>

struct attach_sink {
    /* A process's stream opens: its handle (owned by the sink until
     * close), or NULL on failure (said why on stderr when not ENOMEM). */
    void *(*open)(struct attach_sink *k);
    /* Whole lines of that stream (the agent wire: n bytes, each line
     * ending in '\n'; borrowed, valid during the call): 0, or -1 when its
     * reader is gone (the sampler stops). */
    int (*emit)(struct attach_sink *k, void *conn, const char *lines, size_t n);
    /* What the reader asked since the last call: the `now` rate in *now_hz
     * (left as it is when not asked). 0, or -1: stop (asked, or the reader
     * went). NULL: a sink nobody talks back on. */
    int (*poll)(struct attach_sink *k, void *conn, int *now_hz);
    void (*close)(struct attach_sink *k, void *conn);
    /* 1: a server reads the stream: lines for the user (`log`) and an
     * attach that failed (`error`) go to it too */
    int remote;
};

#endif
