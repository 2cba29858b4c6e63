/* wire: the agent messages `hotline attach` sends (docs/agent-protocol.md),
 * one builder per message, each returning a new JSON object (NULL on
 * ENOMEM): hello, str, stack, delta (begun, filled per thread, finished),
 * now, end, log, error. No other file of attach/ writes a wire key (the
 * server's requests are read in wiresink.c). */
#ifndef HOTLINE_ATTACH_WIRE_H
#define HOTLINE_ATTACH_WIRE_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

/* One interval charged: seconds of Python, native and system time, and of
 * CPU (sampler.h, attach_charge). */
struct attach_charge {
    double py, nat, sys, cpu;
};

struct attach_hello {
    pid_t pid, ppid;
    const char *python, *executable, *cwd, *main; /* borrowed */
    const char *args;                             /* cmdline: NUL-separated, args_len bytes */
    size_t args_len;
    double interval_ms;
};

json_t *attach_wire_hello(const struct attach_hello *h);
json_t *attach_wire_str(long long id, const char *s);
/* frames: from attach_wire_frame, innermost first (stolen) */
json_t *attach_wire_stack(long long id, json_t *frames);
json_t *attach_wire_frame(long long file, long long name, int line);

/* A delta is filled thread by thread, then finished (its arrays stolen). */
struct attach_delta {
    json_t *lines, *funcs, *stacks, *threads; /* owned */
};
int attach_wire_delta_begin(struct attach_delta *d);
void attach_wire_delta_thread(struct attach_delta *d, long tid, const char *name,
                              const struct attach_charge *c);
void attach_wire_delta_sample(struct attach_delta *d, long long file, long long name, int line,
                              int first, int last, const struct attach_charge *c, long long stack,
                              double wall, long long stack_tid);
json_t *attach_wire_delta(struct attach_delta *d, double ts);

/* `now`'s entry of one thread (state "python", "native" or "system";
 * frames borrowed) and the message (threads stolen) */
json_t *attach_wire_now_thread(long tid, const char *name, const char *state, double since_s,
                               json_t *frames);
json_t *attach_wire_now(double ts, json_t *threads);
json_t *attach_wire_end(double ts, const char *reason);
json_t *attach_wire_log(const char *level, const char *msg);
json_t *attach_wire_error(const char *msg);

#endif
