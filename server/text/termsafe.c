/* termsafe: escape what a terminal would take for a command (termsafe.h). */
#include "text/termsafe.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * form, no surrogate, at most U+10FFFF) and its code point, or 0. */
static size_t utf8_seq(const unsigned char *s, size_t len, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, v = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, v = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return n;
}

static int is_bidi(uint32_t cp)
{
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

size_t termsafe_char(const char *s, size_t len, char *out, size_t *outlen)
{
    const unsigned char *u = (const unsigned char *)s;
    uint32_t cp = 0;
    size_t n = utf8_seq(u, len, &cp);
    char esc[TERMSAFE_CHAR_MAX + 1]; /* snprintf's NUL stays here: out gets none */
    if (n == 0 || (n == 1 && (cp < 0x20 || cp == 0x7f))) { /* a control or a stray byte */
        *outlen = (size_t)snprintf(esc, sizeof esc, "\\x%02x", u[0]);
        memcpy(out, esc, *outlen);
        return 1;
    }
    if ((cp >= 0x80 && cp <= 0x9f) || is_bidi(cp)) {
        *outlen = (size_t)snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
        memcpy(out, esc, *outlen);
        return n;
    }
    memcpy(out, s, n);
    *outlen = n;
    return n;
}

char *termsafe_str(char *buf, size_t n, const char *s)
{
    size_t len = s ? strlen(s) : 0, k = 0;
    for (size_t i = 0; i < len;) {
        char one[TERMSAFE_CHAR_MAX + 1];
        size_t ol;
        size_t used = termsafe_char(s + i, len - i, one, &ol);
        if (k + ol >= n) { /* cut: "..." when it fits, never half a character */
            while (k > 0 && k + 3 >= n)
                k--;
            while (k > 0 && ((unsigned char)buf[k] & 0xc0) == 0x80)
                k--;
            if (k + 3 < n) {
                memcpy(buf + k, "...", 3);
                k += 3;
            }
            break;
        }
        memcpy(buf + k, one, ol);
        k += ol;
        i += used;
    }
    buf[k] = 0;
    return buf;
}
