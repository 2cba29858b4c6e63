/* buf.h: the agent's bounded output buffer (buf.c).
 *
 * Every message the agent sends is appended here (struct agent's `out`,
 * written by the sampler thread only) and written by wire.c as the socket
 * accepts it. A buffer with max != 0 never grows past max: a write that
 * would is refused with -ENOSPC and sets overflow, which the sampler reads
 * as "give up profiling" (AGENT_OUT_HARD). No other module, no state.
 */
#ifndef HOTLINE_BUF_H
#define HOTLINE_BUF_H

#include <stddef.h>

typedef struct {
    char *p; /* owned */
    size_t len, cap, max;
    int overflow; /* a write would have passed max */
} agent_buf_t;

void buf_free(agent_buf_t *b);
/* All appends return 0, -ENOSPC (over max: overflow set) or -ENOMEM; s is
 * borrowed. */
int buf_add(agent_buf_t *b, const char *s, size_t n);
int buf_printf(agent_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_json_str(agent_buf_t *b, const char *s, size_t n); /* quoted, escaped */

#endif
