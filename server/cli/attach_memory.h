/* attach_memory: `hotline attach PID --memory` (attach_memory.c): the
 * in-process agent injected with gdb, its stream received like a run's. */
#ifndef HOTLINE_ATTACH_MEMORY_H
#define HOTLINE_ATTACH_MEMORY_H

#include <sys/types.h>

#include "cli/outputs.h"
#include "store/profile.h"

/* A live view of the agent's stream instead of the report at the end
 * (`hotline top --memory PID`, cmd_top.c): tick every every_s seconds once
 * the agent is connected (nonzero: detach, as Ctrl-C does), done once
 * with the reason the run ended, in place of the report and its files. */
struct attach_mem_live {
    double every_s;
    int (*tick)(const struct profile *p, void *ud);
    void (*done)(const struct profile *p, const char *reason, void *ud);
    void *ud;
};

struct attach_mem_opts {
    pid_t pid;
    double duration;                /* seconds, 0: until the target exits or Ctrl-C */
    double interval_ms;             /* the agent's sampling interval */
    int top;                        /* report rows */
    const struct cli_outputs *outs; /* borrowed */
    /* --connect SOCK (borrowed), or NULL: relay the agent's stream to a
     * Hotline server's agent socket as it comes, byte for byte, and the
     * server's messages back to the agent; no report, no files */
    const char *connect;
    /* --include / --exclude (borrowed): the injected agent's config, as a
     * run's; none: its defaults. They travel in the injected code: on
     * 3.9-3.13 one 4 KiB page (INJECT_CODE_MAX), so their size is capped */
    const char *const *include, *const *exclude;
    int ninclude, nexclude;
    const struct attach_mem_live *live; /* borrowed, or NULL: the report */
};

/* Run it: the exit status (0 done: detached or the target exited; 3 no
 * such process, 4 not Python, 5 a Python without --memory support or agent
 * build, 6 permission, 7 the injection failed and the target was left as
 * it was, 130 interrupted before the agent connected, 1 other). */
int cmd_attach_memory(const struct attach_mem_opts *o);

#endif
