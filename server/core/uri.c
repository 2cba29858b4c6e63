/* file:// URIs <-> paths. Unreserved characters and '/' stay as they are;
 * everything else (spaces, non-ASCII bytes, '%', '#', '?') is percent-encoded,
 * which is what VS Code sends, so URIs we produce compare equal to theirs. */
#include "core/uri.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

char *lsp_uri_to_path(const char *uri)
{
    if (strncasecmp(uri, "file://", 7)) return NULL;
    const char *p = uri + 7;
    if (*p != '/') { /* file://host/path: keep the path, ignore the host */
        p = strchr(p, '/');
        if (!p) return NULL;
    }
    char *out = malloc(strlen(p) + 1), *o = out;
    if (!out) return NULL;
    for (; *p && *p != '?' && *p != '#'; p++) {
        int h, l;
        if (*p == '%' && (h = hexval(p[1])) >= 0 && (l = hexval(p[2])) >= 0) {
            *o++ = (char)(h * 16 + l);
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return out;
}

char *lsp_path_to_uri(const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(path);
    char *out = malloc(7 + 3 * n + 2), *o = out;
    if (!out) return NULL;
    memcpy(o, "file://", 7);
    o += 7;
    if (path[0] != '/') *o++ = '/';
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p)) {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    *o = 0;
    return out;
}
