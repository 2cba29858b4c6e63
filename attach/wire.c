/* wire: the agent messages `hotline attach` sends, one builder each
 * (wire.h). */
#include "wire.h"

#include <string.h>

json_t *attach_wire_hello(const struct attach_hello *h)
{
    json_t *argv = json_array();
    for (size_t i = 0; argv && i < h->args_len; i += strlen(h->args + i) + 1)
        json_array_append_new(argv, json_string(h->args + i));
    return json_pack("{s:s,s:i,s:i,s:i,s:s,s:s,s:o,s:s,s:s,s:f,s:s}", "t", "hello", "v", 1, "pid",
                     (int)h->pid, "ppid", (int)h->ppid, "python", h->python, "executable",
                     h->executable, "argv", argv, "cwd", h->cwd, "main", h->main, "interval_ms",
                     h->interval_ms, "clock", "attach");
}

json_t *attach_wire_str(long long id, const char *s)
{
    return json_pack("{s:s,s:I,s:s}", "t", "str", "id", (json_int_t)id, "s", s);
}

json_t *attach_wire_stack(long long id, json_t *frames)
{
    return json_pack("{s:s,s:I,s:o}", "t", "stack", "id", (json_int_t)id, "fr", frames);
}

json_t *attach_wire_frame(long long file, long long name, int line)
{
    return json_pack("[I,I,i]", (json_int_t)file, (json_int_t)name, line);
}

int attach_wire_delta_begin(struct attach_delta *d)
{
    d->lines = json_array();
    d->funcs = json_array();
    d->stacks = json_array();
    d->threads = json_array();
    if (d->lines && d->funcs && d->stacks && d->threads) return 0;
    json_decref(d->lines);
    json_decref(d->funcs);
    json_decref(d->stacks);
    json_decref(d->threads);
    return -1;
}

void attach_wire_delta_thread(struct attach_delta *d, long tid, const char *name,
                              const struct attach_charge *c)
{
    json_array_append_new(d->threads,
                          json_pack("{s:I,s:s,s:f,s:f,s:f}", "tid", (json_int_t)tid, "name", name,
                                    "py", c->py, "nat", c->nat, "sys", c->sys));
}

void attach_wire_delta_sample(struct attach_delta *d, long long file, long long name, int line,
                              int first, int last, const struct attach_charge *c, long long stack,
                              double wall, long long stack_tid)
{
    json_array_append_new(d->lines, json_pack("{s:I,s:i,s:f,s:f,s:f,s:f,s:i}", "f",
                                              (json_int_t)file, "l", line, "py", c->py, "nat",
                                              c->nat, "sys", c->sys, "cpu", c->cpu, "n", 1));
    json_array_append_new(d->funcs,
                          json_pack("{s:I,s:I,s:i,s:i,s:f,s:f,s:f,s:f,s:i}", "f", (json_int_t)file,
                                    "fn", (json_int_t)name, "first", first, "last", last, "py",
                                    c->py, "nat", c->nat, "sys", c->sys, "cpu", c->cpu, "n", 1));
    json_array_append_new(
        d->stacks, json_pack("[I,i,f,I]", (json_int_t)stack, 1, wall, (json_int_t)stack_tid));
}

json_t *attach_wire_delta(struct attach_delta *d, double ts)
{
    json_t *m =
        json_pack("{s:s,s:f,s:i,s:o,s:o,s:o,s:o}", "t", "delta", "ts", ts, "samples", 1, "lines",
                  d->lines, "funcs", d->funcs, "stacks", d->stacks, "threads", d->threads);
    d->lines = d->funcs = d->stacks = d->threads = NULL;
    return m;
}

json_t *attach_wire_now_thread(long tid, const char *name, const char *state, double since_s,
                               json_t *frames)
{
    return json_pack("{s:I,s:s,s:s,s:f,s:O}", "tid", (json_int_t)tid, "name", name, "state", state,
                     "since_s", since_s, "fr", frames);
}

json_t *attach_wire_now(double ts, json_t *threads)
{
    return json_pack("{s:s,s:f,s:o}", "t", "now", "ts", ts, "threads", threads);
}

json_t *attach_wire_end(double ts, const char *reason)
{
    return json_pack("{s:s,s:f,s:s}", "t", "end", "ts", ts, "reason", reason);
}

json_t *attach_wire_log(const char *level, const char *msg)
{
    return json_pack("{s:s,s:s,s:s}", "t", "log", "level", level, "msg", msg);
}

json_t *attach_wire_error(const char *msg)
{
    return json_pack("{s:s,s:s}", "t", "error", "msg", msg);
}
