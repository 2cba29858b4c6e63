/* load_any: a profile from a file whichever of the two forms it has: a JSON
 * profile written by `hotline run --json` (docs/profile-format.md) or a raw
 * wire stream (.jsonl) written by a standalone agent or `pytest --hotline`
 * (HOTLINE_OUT, docs/agent-protocol.md); the first line tells which. What
 * `hotline view`, `diff` and `check` read, and the editor's "open a
 * profile" (hotline.openProfile). */
#ifndef HOTLINE_STORE_LOAD_ANY_H
#define HOTLINE_STORE_LOAD_ANY_H

#include <stdatomic.h>
#include <stddef.h>

#include "store/profile.h"

/* A new store, or NULL with err set (it quotes the path). A JSON profile
 * is loaded with the caps of profile_load (flags: PROFILE_READ_*, as there)
 * and cancellable as profile_load_cancellable (*cancel borrowed, may be
 * NULL); a wire stream is applied line by line, its malformed lines
 * skipped and counted in *bad (may be NULL). */
struct profile *profile_load_any(const char *path, int flags, const atomic_int *cancel, int *bad,
                                 char *err, size_t errlen);

#endif
