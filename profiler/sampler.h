/* sampler.h: the native sampler thread (sampler.c), started and stopped by
 * module.c. The top of the agent's layers: it calls every other module. */
#ifndef HOTLINE_SAMPLER_H
#define HOTLINE_SAMPLER_H

typedef struct agent agent_t;

int sampler_start(agent_t *a);                     /* 0 or -errno; a is borrowed by the thread */
void sampler_stop(agent_t *a, const char *reason); /* joins */

#endif
