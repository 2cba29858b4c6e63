/* engine: `hotline attach PID` from open to detach, without its argv: the
 * attached process opened (attach.h) as the sampler's first process, then
 * ticks every interval for each process sampled (sampler.h), children
 * looked for between ticks (children.h), until every process has exited,
 * the duration ends, or *stop is set (a signal, or the sink's reader gone
 * or asking). What it measures goes to the sampler's sink. */
#ifndef HOTLINE_ATTACH_ENGINE_H
#define HOTLINE_ATTACH_ENGINE_H

#include "children.h"
#include "sampler.h"

struct attach_engine {
    struct attach_sampler s;
    struct attach_children ch;
    char program[4096]; /* the attached process's main script, else its executable */
    /* after each tick, when set: a live view (hotline top) reads what the
     * sink has so far, and may set the sampler's stop flag */
    void (*on_tick)(struct attach_engine *e, void *ud);
    void *tick_ud;
};

/* Open pid into e (its sampler set up by the caller: attach_sampler_init,
 * s.children for --children): its stream opened, its hello sent. 0, or a
 * negative code (attach_open's: -ESRCH, -EPERM, -EACCES, ATTACH_ENOTPY,
 * ATTACH_EVERSION; -ENOMEM; -EIO: no CPU clock for it) with a sentence in
 * why, which a remote sink's reader gets too (an `error`). */
int attach_engine_open(struct attach_engine *e, pid_t pid, char *why, size_t n);

/* Sample until done (duration > 0: at most that many seconds): why it
 * ended ("target exited", "detached (interrupted)", "detached
 * (duration)"), every stream ended. */
const char *attach_engine_run(struct attach_engine *e, double duration);

#endif
