/* load: what `hotline view`, `diff` and `check` read. A JSON profile
 * written by `hotline run --json` (docs/profile-format.md; loaded with the
 * same caps as a workspace's saved profile, since a file named on the
 * command line may come from anywhere), or a raw wire stream (.jsonl)
 * written by a standalone agent (HOTLINE_OUT, docs/agent-protocol.md); the
 * first line tells which. */
#ifndef HOTLINE_CLI_LOAD_H
#define HOTLINE_CLI_LOAD_H

#include <stddef.h>

#include "store/profile.h"

/* A new store, or NULL with err set (it quotes the path). who prefixes the
 * stderr line about malformed lines of a wire stream ("hotline view"). */
struct profile *cli_load_profile(const char *who, const char *path, char *err, size_t errlen);

#endif
