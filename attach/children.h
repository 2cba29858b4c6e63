/* children: the target's children, looked for in /proc while attached
 * (procfs.h). A child of a process in scope (the attached one; with
 * --children every process followed) that stays for one scan (a fork
 * about to exec is no Python child) is opened as attach opens a target. A
 * Python one is followed (--children, under the cap: one more process of
 * the sampler, with its own hello, as a run's forked child sends) or named
 * once; any other is rechecked while it may still become Python (an exec'd
 * interpreter initialising, a shell exec'ing python) and when its comm
 * changes (an exec), else ignored. */
#ifndef HOTLINE_ATTACH_CHILDREN_H
#define HOTLINE_ATTACH_CHILDREN_H

#include "sampler.h"

#define ATTACH_MAX_CHILDREN 1024 /* children remembered (followed, named, ignored) */

/* A child of a process in scope, remembered so that it is told about once
 * and its exec (a shell running python) is noticed. */
struct attach_child {
    pid_t pid, ppid;
    unsigned long long start;     /* start time: a reused pid is another process */
    unsigned long long arg_start; /* at the last scan (struct procfs_stat) */
    int state, seen;
    double first, next_check;
    char comm[20];
};

struct attach_children {
    struct attach_child kids[ATTACH_MAX_CHILDREN];
    int nkids;
    int max_procs;      /* ATTACH_MAX_PROCS (HOTLINE_ATTACH_MAX_PROCS lowers it: tests) */
    int children_files; /* /proc/PID/task/TID/children exists (CONFIG_PROC_CHILDREN) */
    double next_scan;
    double soon;       /* a child's next check, when before the next scan */
    double scan_total; /* scans' own time (HOTLINE_ATTACH_DEBUG prints it) */
    long long nscans;
};

/* ch ready for s's processes (which file lists children: procfs root of s). */
void attach_children_init(struct attach_children *ch, const struct attach_sampler *s);
/* Scan when due: once a second, with --children as often as the ticks
 * (where each thread lists its children) or every few ms (a scan of all
 * of /proc), and sooner when a new child is to be checked, never more
 * than a small share of the time. Followed children join s->procs. */
void attach_children_scan_due(struct attach_children *ch, struct attach_sampler *s);
/* A followed child ended (its process leaves the sampler): forgotten. */
void attach_children_forget(struct attach_children *ch, pid_t pid);

#endif
