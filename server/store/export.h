/* export: a profile's call stacks in the formats other tools read, for
 * `hotline run` / `hotline view` (--collapsed, --speedscope; docs/pictures.md).
 *
 * Both are built from the store's stacks (every sample's stack, library
 * frames included; a profile read back from JSON keeps only the heaviest
 * PROFILE_JSON_STACKS, the rest is one "[other stacks]" entry so that totals
 * still equal the profile's samples). A frame is named
 * "function (file:line)" with the absolute file. */
#ifndef HOTLINE_EXPORT_H
#define HOTLINE_EXPORT_H

#include <stdio.h>
#include <jansson.h>

#include "store/profile.h"

/* Name of the pseudo-frame that carries samples the profile has no stack for. */
#define EXPORT_OTHER_STACKS "[other stacks]"
/* A stack the agent sent without frames. */
#define EXPORT_NO_FRAMES "[no frames]"

/* Folded stacks, one "root;...;leaf N" line per stack (N samples), heaviest
 * first, for flamegraph.pl and inferno. ';', '%', '\n' and '\r' in a frame
 * are written as %3B, %25, %0A, %0D (reversible; the format has no escape
 * of its own). out borrowed. 0 or -errno (write error). */
int export_collapsed(const struct profile *p, FILE *out);

/* Samples and seconds that no stack carries (the EXPORT_OTHER_STACKS
 * entry): the profile's totals minus the stacks' sums (never negative;
 * seconds differ by rounding only). */
void export_unstacked(const struct profile *p, long long *samples, double *seconds);

/* One frame's name as written by both formats into buf (cap n, always
 * terminated): "function (file:line)"; escaped as above when escape. */
void export_frame_name(const struct prof_frame *fr, int escape, char *buf, size_t n);

/* export_collapsed_opts flags: what flame graphs of two runs need to match
 * (difffolded.pl pairs stacks by their exact text) */
#define EXPORT_BY_FUNCTION 2 /* frames "function (file)": a function's lines merge */
#define EXPORT_RELATIVE 4    /* paths shortened: see export_short_path */

/* export_collapsed with flags; identical stacks after renaming are summed
 * into one line, heaviest first (ties by text). base (borrowed, may be
 * NULL): the program's folder for EXPORT_RELATIVE. */
int export_collapsed_opts(const struct profile *p, FILE *out, int flags, const char *base);

/* path as EXPORT_RELATIVE writes it (a pointer into path): below base (the
 * program's folder), relative to it; else after the last "/site-packages/"
 * or "/dist-packages/" (the package's own path, the same in every venv);
 * else after "/lib/pythonX.Y/" (the standard library); else unchanged. */
const char *export_short_path(const char *path, const char *base);

/* export_speedscope flags */
#define EXPORT_THREADS 1 /* a profile per thread, not one for all */
#define EXPORT_PIDS 8    /* each profile also carries "pid" (0: threads not told apart) */

/* New reference: speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): shared frames
 * {name, file, line} and "sampled" profiles with weights in seconds, or
 * NULL on ENOMEM. exporter (borrowed, may be NULL) names the writer.
 * With EXPORT_THREADS, one profile per thread that has stacks of its own,
 * "NAME (tid N)" ("NAME (pid P, tid N)" with several processes), main
 * threads first, then the thread table's order. Its weight is that
 * thread's stacks' seconds plus, for the samples no stored stack carries,
 * what its seconds in the thread table have beyond them. Then "[other
 * threads]" for stacks of threads not told apart (docs/pictures.md). A
 * profile whose stacks have no thread parts (an older agent or saved
 * profile), or flags 0 (the --html page, which merges every thread), gives
 * one profile, "PROGRAM (all threads)". */
json_t *export_speedscope(const struct profile *p, const char *exporter, int flags);

/* Write the collapsed stacks or the speedscope file to path (as
 * profile_save writes: a regular file replaced atomically, a device or a
 * FIFO written in place). 0 or -errno. */
int export_collapsed_save(const struct profile *p, const char *path);
int export_collapsed_save_opts(const struct profile *p, const char *path, int flags,
                               const char *base);
int export_speedscope_save(const struct profile *p, const char *exporter, const char *path);
/* Writes len bytes of buf (borrowed) to path through profile_save_with. */
int export_save_text(const char *path, const char *buf, size_t len);

#endif
