/* report_sink: the attach engine's sink (attach/sink.h) that fills a
 * profile store, each process a connection of it: its lines decoded as the
 * server decodes an agent's (agent_wire.h), so that `hotline attach`'s and
 * `hotline top`'s numbers are the ones `hotline run` makes. */
#ifndef HOTLINE_CLI_REPORT_SINK_H
#define HOTLINE_CLI_REPORT_SINK_H

#include "sink.h"
#include "store/profile.h"

struct report_sink {
    struct attach_sink sink; /* first: the engine holds &sink */
    struct profile *p;       /* borrowed */
    long long dropped;       /* messages the store refused (the report says so) */
};

/* rs ready to hand to attach_sampler_init as &rs->sink, filling p
 * (borrowed; may be set later, before the engine opens). */
void report_sink_init(struct report_sink *rs, struct profile *p);

#endif
