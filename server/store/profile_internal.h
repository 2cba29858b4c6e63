/* The profile store's internals shared by its two files, profile.c (the
 * store, connections, queries) and profile_json.c (the file format): how a
 * store is built record by record. For store/ only; everything else goes
 * through profile.h. Each returns what it made or found (borrowed from p),
 * or NULL / -ENOMEM when a cap or memory ran out (counted in p->dropped
 * where the caller would lose data). */
#ifndef HOTLINE_PROFILE_INTERNAL_H
#define HOTLINE_PROFILE_INTERNAL_H

#include "store/profile.h"

/* s interned in p: one copy per store, compared by pointer. */
const char *prof__intern(struct profile *p, const char *s);
/* The record of path (made when create and under the caps). */
struct prof_file *prof__file_get(struct profile *p, const char *path, int create);
/* Add st to line `line` of f, its file total and p's total. 0 or -ENOMEM. */
int prof__file_add_line(struct profile *p, struct prof_file *f, int line,
                        const struct agent_stats *st);
/* Add st to function `name` starting at `first` of path. 0 or -ENOMEM. */
int prof__add_func(struct profile *p, const char *path, const char *name, int first, int last,
                   const struct agent_stats *st);
/* Store-wide stack for frames fr[0..n) (interned strings). */
struct prof_stack *prof__stack_get(struct profile *p, const struct prof_frame *fr, size_t n);
/* Add samples and seconds to s (borrowed from p) and, when tid is not 0 and
 * the caps allow, to the part of thread (pid, tid). 0 or -ENOMEM (the
 * totals are added even then). */
int prof__stack_add(struct profile *p, struct prof_stack *s, long long pid, long long tid,
                    long long samples, double seconds);
/* The thread (pid, tid), made with name when new. */
struct prof_thread *prof__thread_get(struct profile *p, long long pid, long long tid,
                                     const char *name);
/* A new process record for pid, or NULL past PROFILE_MAX_PROCS. */
struct prof_proc *prof__proc_new(struct profile *p, long long pid);

#endif
