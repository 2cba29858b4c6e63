/* agent_buf.c: the bounded output buffer and JSON string quoting
 * (agent_buf.h). Plain memory, no I/O: the agent's wire.c sends what is
 * appended here.
 */
#include "agent_buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void agent_buf_free(agent_buf_t *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static int buf_reserve(agent_buf_t *b, size_t n)
{
    /* the cap first: memory already there (4096 bytes at least) is no
     * licence to pass it */
    if (b->max && b->len + n > b->max) {
        b->overflow = 1;
        return -ENOSPC;
    }
    if (b->len + n <= b->cap) return 0;
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->len + n)
        nc *= 2;
    if (b->max && nc > b->max) nc = b->max;
    char *p = realloc(b->p, nc);
    if (!p) return -ENOMEM;
    b->p = p;
    b->cap = nc;
    return 0;
}

int agent_buf_add(agent_buf_t *b, const char *s, size_t n)
{
    int r = buf_reserve(b, n);
    if (r) return r;
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
    return 0;
}

int agent_buf_vprintf(agent_buf_t *b, const char *fmt, va_list ap)
{
    char tmp[512];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    int r = n < 0 ? -EINVAL : 0;
    if (!r && (size_t)n < sizeof tmp) {
        r = agent_buf_add(b, tmp, (size_t)n);
    } else if (!r && !(r = buf_reserve(b, (size_t)n + 1))) {
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
    }
    va_end(again);
    return r;
}

int agent_buf_printf(agent_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = agent_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return r;
}

/* Length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len = c < 0x80             ? 1
                 : (c & 0xE0) == 0xC0 ? 2
                 : (c & 0xF0) == 0xE0 ? 3
                 : (c & 0xF8) == 0xF0 ? 4
                                      : 0;
    if (!len || len > n) return 0;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

int agent_buf_json_str(agent_buf_t *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    int r = agent_buf_add(b, "\"", 1);
    size_t i = 0;
    while (i < n && !r) {
        size_t run = i; /* plain bytes copied in one piece */
        while (run < n && u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\')
            run++;
        if (run > i) {
            r = agent_buf_add(b, s + i, run - i);
            i = run;
            continue;
        }
        size_t len = utf8_len(u + i, n - i);
        if (u[i] == '"' || u[i] == '\\') {
            char e[2] = {'\\', (char)u[i]};
            r = agent_buf_add(b, e, 2);
        } else if (u[i] < 0x20) {
            r = agent_buf_printf(b, "\\u%04x", u[i]);
        } else if (len) {
            r = agent_buf_add(b, s + i, len);
        } else {
            r = agent_buf_add(b, "\\ufffd", 6);
            len = 1;
        }
        i += len ? len : 1;
    }
    return r ? r : agent_buf_add(b, "\"", 1);
}
