/* agent_config: limits of the agent's configuration (HOTLINE_CONFIG,
 * docs/agent-protocol.md) that the server and the agent must agree on. The
 * CLI (--interval), the language server (hotline.intervalMs, through
 * session_start) and the agent (hotline.start) all check against these, so
 * a value one accepts is never replaced by another's default: the interval
 * recorded in a profile is the one the sampler used. Header only: the agent
 * includes it without the server's libraries. */
#ifndef HOTLINE_AGENT_CONFIG_H
#define HOTLINE_AGENT_CONFIG_H

/* Mean sampling interval, milliseconds. Below 0.1 ms a tick (thread list,
 * probe window of up to 1 ms, stacks) cannot keep up and the sampler would
 * only run late; above 10 s a run has next to no samples. */
#define AGENT_INTERVAL_MIN_MS 0.1
#define AGENT_INTERVAL_MAX_MS 10000.0
#define AGENT_INTERVAL_DEFAULT_MS 10.0

/* Threads of one process whose stack weights are sent apart (the first ones
 * seen; `delta.stacks` entries carry their tid). The stacks of every later
 * thread are counted under tid 0, "not told apart": a program that starts
 * thousands of short threads (a pool per request) keeps a bounded table and
 * a picture with a bounded number of profiles (docs/agent-protocol.md). */
#define AGENT_STACK_THREADS 64

#endif
