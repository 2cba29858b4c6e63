/* A short-lived helper process: argv run from cwd with a text on its stdin,
 * its stdout captured (capped), stderr ignored, and a timeout. The helper
 * leads its own process group, and the timeout kills the whole group: a
 * grandchild that inherited stdout would otherwise keep the pipe open, no
 * EOF would come and the caller would wait forever. (A descendant that
 * leaves the group with setsid is out of reach, as for any group kill.)
 * Used by "Optimize this" for its probe and its check (providers/optimize.c). */
#ifndef HOTLINE_PROC_HELPER_H
#define HOTLINE_PROC_HELPER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct proc_helper;

/* The helper exited and its stdout closed: status is the exit status, or
 * -signal; out (borrowed, NUL-terminated) is what it wrote, up to the cap. */
typedef void (*proc_done_fn)(void *data, int64_t status, const char *out);

/* Start argv (argv[0] a path or a name on PATH) with input (stolen, a
 * NUL-terminated text) on stdin. done(data, ...) comes once, later. *hp gets
 * the helper (for proc_helper_detach) until done is called. 0 or negative
 * errno: then done is never called and nothing is left running. */
int proc_helper_start(uv_loop_t *loop, char *const argv[], const char *cwd, char *input,
                      uint64_t timeout_ms, size_t max_out, proc_done_fn done, void *data,
                      struct proc_helper **hp);
/* The caller is gone: done will never be called. The helper goes on until
 * it exits or times out, then frees itself when its handles are closed. */
void proc_helper_detach(struct proc_helper *h);

#endif
