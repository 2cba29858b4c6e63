/* gecko: a profile in the Firefox Profiler's import format (the "Gecko
 * profile format", version GECKO_VERSION: docs/pictures.md), for
 * `--gecko FILE` of run, attach and view; open it at
 * https://profiler.firefox.com ("Load a profile from file").
 *
 * One thread track per thread of every process, its samples in the order
 * they were taken: each tick of the timeline (timeline.h) becomes its
 * samples, spread evenly over the tick's period. Markers name the
 * program's phases: each process's run (start to end, with how it ended)
 * and, for a run whose timeline was merged into coarser buckets, the
 * grain. A profile without a timeline (an older saved profile) gets one
 * sample per stack part, at time 0, so that the call tree is still right. */
#ifndef HOTLINE_STORE_GECKO_H
#define HOTLINE_STORE_GECKO_H

#include <jansson.h>

#include "store/profile.h"

#define GECKO_VERSION 32
/* samples written at most: past it every tick's count is scaled down (the
 * Firefox Profiler slows past a few million) */
#define GECKO_MAX_SAMPLES 2000000

/* New reference, or NULL on ENOMEM. exporter (borrowed, may be NULL) is
 * written as the product. */
json_t *export_gecko(const struct profile *p, const char *exporter);
/* export_gecko written to path as profile_save writes. 0 or -errno. */
int export_gecko_save(const struct profile *p, const char *exporter, const char *path);

#endif
