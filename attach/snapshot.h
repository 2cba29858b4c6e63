/* snapshot.h: a target's memory as a file, for tests that read a real
 * stack with no Python running. A snapshot holds what the thread and frame
 * reader (frames.c) needs of an open target (target.h): its runtime
 * address, version, the layout fields frames.c reads, and every range of
 * memory one read of its threads and stacks went through (recorded with
 * mem.h's recorder), each with its bytes. Text, one item a line:
 *
 *   hotline-attach-snapshot 1
 *   pid 1234                       (and version, binary, version_hex,
 *   runtime 0x7f...                 frame_type, code_type, tid_off)
 *   lay.ts_next 8                  (one line per field frames.c reads)
 *   range 0x7f...00 24 0a0b...     (address, length, the bytes in hex)
 *   end
 *
 * Lines starting with '#' are comments. A file that is cut short, has a
 * field twice or missing, an unknown key, a bad number or hex is refused
 * with a sentence, never read past. */
#ifndef HOTLINE_ATTACH_SNAPSHOT_H
#define HOTLINE_ATTACH_SNAPSHOT_H

#include <stddef.h>

#include "mem.h"
#include "target.h"

#define ATTACH_SNAPSHOT_MAX_FILE ((size_t)64 << 20) /* bytes of a snapshot file read */

/* Write ap's identity and the ranges of s to path: 0 or -errno (why says). */
int attach_snapshot_save(const struct attach_proc *ap, const struct attach_ranges *s,
                         const char *path, char *why, size_t n);

/* Parse text[0..len) (need not end in NUL): ap's identity fields (pid,
 * version, binary, version_hex, runtime, frame_type, code_type, tid_off,
 * the layout frames.c reads; nothing else of ap is touched) and the ranges
 * into s (zeroed by the caller; attach_ranges_free in every case). 0,
 * -EINVAL with why, -ENOMEM, -E2BIG (past a cap of mem.h). */
int attach_snapshot_parse(struct attach_proc *ap, struct attach_ranges *s, const char *text,
                          size_t len, char *why, size_t n);

/* attach_snapshot_parse of the file at path (at most
 * ATTACH_SNAPSHOT_MAX_FILE bytes): also -errno from reading it. */
int attach_snapshot_load(struct attach_proc *ap, struct attach_ranges *s, const char *path,
                         char *why, size_t n);

#endif
