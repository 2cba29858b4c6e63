/* Params checked at the door (params.h). */
#include "core/params.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int type_ok(const json_t *v, char t)
{
    switch (t) {
    case 's':
        return json_is_string(v);
    case 'i':
        return json_is_integer(v);
    case 'n':
        return json_is_number(v);
    case 'b':
        return json_is_boolean(v);
    case 'o':
        return json_is_object(v);
    case 'a':
        return json_is_array(v);
    default:
        return -1;
    }
}

static const char *type_name(char t)
{
    switch (t) {
    case 's':
        return "a string";
    case 'i':
        return "an integer";
    case 'n':
        return "a number";
    case 'b':
        return "a boolean";
    case 'o':
        return "an object";
    default:
        return "an array";
    }
}

/* Borrowed: the member at dotted path (len bytes) under root, or NULL. */
static const json_t *member(const json_t *root, const char *path, size_t len)
{
    char key[LSP_PARAMS_MAX_PATH];
    const json_t *cur = root;
    while (cur && len) {
        const char *dot = memchr(path, '.', len);
        size_t k = dot ? (size_t)(dot - path) : len;
        memcpy(key, path, k);
        key[k] = 0;
        cur = json_is_object(cur) ? json_object_get(cur, key) : NULL;
        path += k + (dot ? 1 : 0);
        len -= k + (dot ? 1 : 0);
    }
    return cur;
}

int lsp_params_check(const json_t *params, const char *spec, char *why, size_t n)
{
    if (!json_is_object(params)) {
        snprintf(why, n, "%s", params ? "params are not an object" : "no params");
        return -EINVAL;
    }
    for (const char *p = spec; *p;) {
        while (*p == ' ')
            p++;
        if (!*p) break;
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : 0;
        int optional = len && p[len - 1] == '?';
        size_t plen = len - (size_t)optional;
        char t = colon ? colon[1] : 0;
        if (!plen || plen >= LSP_PARAMS_MAX_PATH || type_ok(NULL, t) < 0 ||
            (colon[2] && colon[2] != ' ')) {
            snprintf(why, n, "bad spec \"%s\"", spec);
            return -EINVAL;
        }
        const json_t *v = member(params, p, plen);
        if (!v && !optional) {
            snprintf(why, n, "%.*s is missing", (int)plen, p);
            return -EINVAL;
        }
        if (v && !type_ok(v, t)) {
            snprintf(why, n, "%.*s is not %s", (int)plen, p, type_name(t));
            return -EINVAL;
        }
        p = colon + 2;
    }
    return 0;
}
