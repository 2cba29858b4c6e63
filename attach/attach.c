/* attach.c: opening and closing a target (attach.h): target.c finds the
 * runtime and its layout, frames.c's code cache is made, and a 3.9/3.10
 * target's thread ids are checked against /proc once; or the same from a
 * snapshot file (snapshot.c), read through a replay of its bytes. */
#include "attach.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

/* 3.9/3.10: the tids the thread states lead to (pthread_tid) must be the
 * target's threads in one of a few reads (a race can spoil one), else its
 * C library keeps them elsewhere than hotline's: refused rather than
 * charging the wrong threads. */
static int check_thread_ids(struct attach_proc *ap, char *why, size_t n)
{
    struct attach_thread *t = malloc(ATTACH_MAX_THREADS * sizeof *t);
    if (!t) return -ENOMEM;
    int rc = ATTACH_ERACE;
    for (int k = 0; k < 3 && rc == ATTACH_ERACE; k++)
        rc = attach_threads(ap, t, ATTACH_MAX_THREADS);
    free(t);
    if (rc >= 0) return 0;
    if (rc == -ESRCH) {
        snprintf(why, n, "process %d exited", (int)ap->pid);
        return -ESRCH;
    }
    snprintf(why, n,
             "Python %s in process %d: its thread states do not lead to its threads in "
             "/proc/%d/task (their pthread_t read at glibc's tid offset %ld): its C library "
             "keeps the thread id elsewhere than hotline's (another libc in a container?)",
             ap->version, (int)ap->pid, (int)ap->pid, ap->tid_off);
    return ATTACH_EVERSION;
}

int attach_open(struct attach_proc *ap, pid_t pid, char *why, size_t n)
{
    int rc = attach__target_open(ap, pid, why, n);
    if (!rc) rc = attach__codes_new(ap);
    if (!rc && ap->lay.frame_object) rc = check_thread_ids(ap, why, n);
    return rc;
}

/* A replay of what load() put in ap->snap (a file or a text). */
static int open_replay(struct attach_proc *ap, const char *path, const char *text, size_t len,
                       char *why, size_t n)
{
    memset(ap, 0, sizeof *ap);
    ap->snap = calloc(1, sizeof *ap->snap);
    if (!ap->snap) return -ENOMEM;
    int rc = path ? attach_snapshot_load(ap, ap->snap, path, why, n)
                  : attach_snapshot_parse(ap, ap->snap, text, len, why, n);
    if (rc) return rc;
    ap->mem = attach_mem_snapshot(ap->snap);
    return attach__codes_new(ap);
}

int attach_open_snapshot(struct attach_proc *ap, const char *path, char *why, size_t n)
{
    return open_replay(ap, path, NULL, 0, why, n);
}

int attach_open_snapshot_text(struct attach_proc *ap, const char *text, size_t len, char *why,
                              size_t n)
{
    return open_replay(ap, NULL, text, len, why, n);
}

void attach_close(struct attach_proc *ap)
{
    attach__codes_free(ap);
    free(ap->site);
    ap->site = NULL;
    if (ap->snap) attach_ranges_free(ap->snap);
    free(ap->snap);
    ap->snap = NULL;
}
