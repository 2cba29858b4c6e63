/* agent_buf.h: the bounded output buffer an agent stream is written into
 * (agent_buf.c), and JSON string quoting.
 *
 * The in-process agent appends every message to one (struct agent's `out`,
 * written by its sampler thread only) and sends it as the socket accepts
 * it; agent_emit.h's builders write into one. A buffer with max != 0 never
 * grows past max: a write that would is refused with -ENOSPC and sets
 * overflow, which the agent reads as "give up profiling". Plain memory, no
 * I/O, no state outside the struct; no jansson, so the agent can link it.
 */
#ifndef HOTLINE_AGENT_BUF_H
#define HOTLINE_AGENT_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct {
    char *p; /* owned */
    size_t len, cap, max;
    int overflow; /* a write would have passed max */
} agent_buf_t;

void agent_buf_free(agent_buf_t *b);
/* All appends return 0, -ENOSPC (over max: overflow set) or -ENOMEM; s is
 * borrowed. */
int agent_buf_add(agent_buf_t *b, const char *s, size_t n);
int agent_buf_printf(agent_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int agent_buf_vprintf(agent_buf_t *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* s[0..n) as a JSON string: quoted, escaped, and valid UTF-8 whatever s
 * holds (a byte that does not start a well-formed sequence becomes U+FFFD:
 * a thread name cut at 15 bytes by the kernel may end mid-character, and a
 * reader rejects the whole line for one bad byte). */
int agent_buf_json_str(agent_buf_t *b, const char *s, size_t n);

#endif
