/* attach.h: read a running CPython from outside (`hotline attach`): the
 * front door of the reader, which is split by job:
 *   mem.c       where the bytes come from (the live process through
 *               process_vm_readv, a recorder, a recorded snapshot)
 *   target.c    which file holds the runtime (maps + ELF), which Python,
 *               which layout (Py_Version, _Py_DebugOffsets, layout.h)
 *   frames.c    threads -> frames -> code objects (a cache), read only
 *               through the target's memory source
 *   snapshot.c  a snapshot file (tests replay a real stack with no Python)
 * Callers include this header and get all of them. Nothing is written to
 * the target and it is never stopped. No jansson, no libuv: the sampler
 * (sampler.c) aggregates. */
#ifndef HOTLINE_ATTACH_H
#define HOTLINE_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

#include "frames.h"
#include "mem.h"
#include "target.h"

/* Open pid: 0, or a negative code with a sentence for the user in why:
 * -ESRCH no such process (or a zombie), -EPERM/-EACCES permission (says
 * which), ATTACH_ENOTPY, ATTACH_EVERSION. attach_close() in every case. */
int attach_open(struct attach_proc *ap, pid_t pid, char *why, size_t n);

/* Open the snapshot file at path (snapshot.h) as a target that reads its
 * recorded bytes: 0, or a negative code with why (-EINVAL: not a sound
 * snapshot; -errno: not read). attach_close() in every case. */
int attach_open_snapshot(struct attach_proc *ap, const char *path, char *why, size_t n);

/* The same from a snapshot's text[0..len) (borrowed; copied as parsed). */
int attach_open_snapshot_text(struct attach_proc *ap, const char *text, size_t len, char *why,
                              size_t n);

void attach_close(struct attach_proc *ap);

#endif
