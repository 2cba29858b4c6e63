/* opcodes.h: the opcode tables and stack effects of the call-site decision
 * (sampling/site.h) for a process `hotline attach` reads: printed by the
 * target's own interpreter, run once as a child (/proc/PID/root + the
 * path /proc/PID/exe names, `-I -S -c` with _hotline_agent/_opcodes.py and
 * attach/opcodes_dump.py: no user code, no site-packages), so that a
 * vendor's patch or a micro version with other opcode numbers reads as
 * its own dis/opcode say. docs/attach.md, "The call site". */
#ifndef HOTLINE_ATTACH_OPCODES_H
#define HOTLINE_ATTACH_OPCODES_H

#include <stddef.h>
#include <sys/types.h>

#include "site.h"

#define ATTACH_OPCODES_TIMEOUT 5.0 /* seconds the child may take */

/* ops and eff (the caller's) of the interpreter pid runs, whose minor
 * version must be `minor`: 0, or a negative code with a sentence in why
 * (not a python executable, the child failed or timed out, another
 * version, unreadable output). Runs the child as the target's owner when
 * we are root. */
int attach_opcodes_load(pid_t pid, int minor, site_ops_t *ops, site_effects_t *eff, char *why,
                        size_t n);

/* The child's output (text, len bytes) into ops and eff: 0 or -EINVAL
 * (why says where). Shared with the tests. */
int attach_opcodes_parse(const char *text, size_t len, int minor, site_ops_t *ops,
                         site_effects_t *eff, char *why, size_t n);

#endif
