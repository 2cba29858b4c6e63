/* buf.c: the agent's bounded output buffer and JSON string quoting
 * (buf.h). Plain memory, no I/O: wire.c sends what is appended here.
 */
#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_free(agent_buf_t *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static int buf_reserve(agent_buf_t *b, size_t n)
{
    if (b->len + n <= b->cap) return 0;
    if (b->max && b->len + n > b->max) {
        b->overflow = 1;
        return -ENOSPC;
    }
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->len + n)
        nc *= 2;
    char *p = realloc(b->p, nc);
    if (!p) return -ENOMEM;
    b->p = p;
    b->cap = nc;
    return 0;
}

int buf_add(agent_buf_t *b, const char *s, size_t n)
{
    int r = buf_reserve(b, n);
    if (r) return r;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return 0;
}

int buf_printf(agent_buf_t *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return -EINVAL;
    if ((size_t)n < sizeof tmp) return buf_add(b, tmp, (size_t)n);
    int r = buf_reserve(b, (size_t)n + 1);
    if (r) return r;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int buf_json_str(agent_buf_t *b, const char *s, size_t n)
{
    int r = buf_add(b, "\"", 1);
    for (size_t i = 0; i < n && !r; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            r = buf_add(b, e, 2);
        } else if (c < 0x20) {
            r = buf_printf(b, "\\u%04x", c);
        } else {
            r = buf_add(b, (const char *)&s[i], 1);
        }
    }
    return r ? r : buf_add(b, "\"", 1);
}
