/* sampler.h: the native sampler thread (sampler.c), started and stopped by
 * module.c. The top of the agent's layers: it calls every other module. */
#ifndef HOTLINE_SAMPLER_H
#define HOTLINE_SAMPLER_H

typedef struct agent agent_t;

int sampler_start(agent_t *a);                     /* 0 or -errno; a is borrowed by the thread */
void sampler_stop(agent_t *a, const char *reason); /* joins */

/* Requests of the program's threads, served by the sampler thread between
 * two ticks, after it sent what it aggregated so far as a delta (so that
 * what ran before the request is in the stream before it):
 *   SAMPLER_REQ_MARK  arg: one JSON object (no newline), added to the stream
 *                     (a notebook cell's begin or end, docs/agent-protocol.md)
 *   SAMPLER_REQ_TEE   arg: a file: from now on the stream is also written
 *                     there, after the string table so far (a reader of the
 *                     file alone resolves every id); arg NULL: stop, close it
 * Waits up to timeout_s (call it without the GIL). 0, -ETIMEDOUT, -ESRCH
 * (no sampler thread any more), or the request's -errno; arg is borrowed. */
enum { SAMPLER_REQ_MARK = 1, SAMPLER_REQ_TEE = 2 };
int sampler_request(agent_t *a, int kind, const char *arg, double timeout_s);

#endif
