/* engine: one `hotline attach` from open to detach (engine.h). */
#include "engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procfs.h"

int attach_engine_open(struct attach_engine *e, pid_t pid, char *why, size_t n)
{
    struct attach_sampler *s = &e->s;
    attach_children_init(&e->ch, s);
    struct attach_sproc *root = attach_sproc_new(s);
    if (!root) {
        snprintf(why, n, "%s", s->sink->remote ? "" : "out of memory");
        return -ENOMEM;
    }
    s->procs[s->nprocs++] = root;
    struct procfs_stat ps = {0}; /* before it is opened: an exec since is seen */
    procfs_stat(s->procfs, pid, &ps, NULL, 0);
    root->ppid = ps.ppid;
    root->arg_start = ps.arg_start;
    root->start = ps.start;
    why[0] = 0;
    int rc = attach_open(&root->ap, pid, why, n);
    if (rc) {
        if (!why[0]) snprintf(why, n, "%s", strerror(-rc));
        if (s->sink->remote) /* the editor shows it (an `error` alone on its connection) */
            attach_sampler_error(s, root, why);
        return rc;
    }
    if (clock_getcpuclockid(root->ap.pid, &root->proc_clock) != 0) {
        snprintf(why, n, "no CPU clock for the target");
        return -EIO;
    }
    s->t0 = root->last_tick = attach_mono();
    attach_sampler_hello(s, root, e->program, sizeof e->program);
    return 0;
}

/* One round: a tick of each process sampled, its requests read; the ended
 * ones' streams end. The processes still sampled. */
static int engine_step(struct attach_engine *e)
{
    struct attach_sampler *s = &e->s;
    int live = 0;
    for (int i = 0; i < s->nprocs; i++) {
        struct attach_sproc *pr = s->procs[i];
        if (pr->gone) continue;
        if (attach_sampler_tick(s, pr) == -ESRCH) {
            attach_sampler_end(s, pr, "exit");
            if (i > 0) { /* its slot is free for another (the sink has its data) */
                fprintf(stderr, "hotline: process %d exited\n", (int)pr->ap.pid);
                attach_children_forget(&e->ch, pr->ap.pid);
                attach_sampler_forget(s, i--);
            }
            continue;
        }
        live++;
        attach_sampler_poll(s, pr);
    }
    return live;
}

const char *attach_engine_run(struct attach_engine *e, double duration)
{
    struct attach_sampler *s = &e->s;
    struct attach_sproc *root = s->procs[0];
    const char *reason = "detached";
    int root_told = 0;
    attach_sampler_tick(s, root); /* opens the threads' counters: say which clock decides */
    int exact = root->nth > 0;
    for (int i = 0; i < root->nth; i++)
        exact &= root->th[i].perf_fd >= 0;
    char clock[128];
    snprintf(clock, sizeof clock, "thread CPU from %s",
             exact ? "perf task clocks (exact)"
                   : "/proc (scheduler ticks: the native split is approximate, docs/attach.md)");
    if (s->say) /* the command's voice (hotline attach --every says it once) */
        s->say(clock);
    else
        fprintf(stderr, "hotline: %s\n", clock);
    for (;;) {
        double next = attach_mono() + s->interval_ms * 1e-3; /* from this tick's start */
        int live = engine_step(e);
        if (e->on_tick) e->on_tick(e, e->tick_ud);
        if (root->gone && live && !root_told) {
            fprintf(stderr, "hotline: process %d exited; the %d processes followed run on\n",
                    (int)root->ap.pid, live);
            root_told = 1;
        }
        if (!live) {
            reason = "target exited";
            break;
        }
        if (*s->stop) {
            reason = "detached (interrupted)";
            break;
        }
        if (duration > 0 && attach_mono() - s->t0 >= duration) {
            reason = "detached (duration)";
            break;
        }
        attach_children_scan_due(&e->ch, s);
        double wait = next - attach_mono();
        if (wait > 0) attach_sampler_sleep(s, wait);
    }
    for (int i = 0; i < s->nprocs; i++)
        attach_sampler_end(s, s->procs[i], "stop");
    if (getenv("HOTLINE_ATTACH_DEBUG"))
        fprintf(stderr, "hotline: %lld children scans (%s), %.1f us each\n", e->ch.nscans,
                e->ch.children_files ? "task children files" : "all of /proc",
                e->ch.nscans ? e->ch.scan_total / (double)e->ch.nscans * 1e6 : 0.0);
    return reason;
}
