/* budgets: where `hotline check`'s budgets come from (see budgets.h). */
#include "cli/budgets.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/profile.h"
#include "text/termsafe.h"

#define SAFE(buf, s) termsafe_str(buf, sizeof buf, s)

int budgets_add(struct budgets *b, const char *s, size_t len)
{
    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (!len) return 0;
    if (b->n == MAX_BUDGETS) {
        fprintf(stderr, "hotline check: more than %d budgets\n", MAX_BUDGETS);
        return -1;
    }
    if (!(b->v[b->n] = strndup(s, len))) return -1;
    b->n++;
    return 0;
}

/* At most 1 MiB of a regular file, NUL-terminated; NULL with errno. */
static char *read_small(const char *path)
{
    char *text = NULL;
    size_t len;
    int rc = profile_read_file(path, 1 << 20, PROFILE_READ_REGULAR, &text, &len);
    if (rc) {
        errno = -rc;
        return NULL;
    }
    return text;
}

int budgets_file(struct budgets *b, const char *path)
{
    char *text = read_small(path);
    char safe[TERMSAFE_SIZE(PATH_MAX)];
    if (!text) {
        fprintf(stderr, "hotline check: %s: %s\n", SAFE(safe, path), strerror(errno));
        return -1;
    }
    int rc = 0;
    for (char *l = text; l && *l && !rc;) {
        char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        char *hash = memchr(l, '#', len);
        if (hash) len = (size_t)(hash - l);
        rc = budgets_add(b, l, len);
        l = nl ? nl + 1 : NULL;
    }
    free(text);
    return rc;
}

/* The budgets array of [tool.hotline] in a pyproject.toml: TOML's basic
 * ("...", with \" and \\) and literal ('...') strings, over any number of
 * lines, comments skipped. Returns the number found, or -1. */
int budgets_pyproject(struct budgets *b, const char *path)
{
    char *text = read_small(path);
    if (!text) return errno == ENOENT ? 0 : -1;
    int found = 0, rc = 0, in_table = 0;
    char *p = text;
    while (*p && !rc) {
        char *eol = strchr(p, '\n');
        if (!eol) eol = p + strlen(p);
        char *s = p;
        while (s < eol && isspace((unsigned char)*s))
            s++;
        if (*s == '[') {
            in_table = !strncmp(s, "[tool.hotline]", 14);
        } else if (in_table && !strncmp(s, "budgets", 7)) {
            s += 7;
            while (*s == ' ' || *s == '\t')
                s++;
            if (*s++ != '=') goto next;
            while (*s == ' ' || *s == '\t')
                s++;
            if (*s++ != '[') {
                fprintf(stderr, "hotline check: %s: budgets must be an array of strings\n", path);
                rc = -1;
                break;
            }
            /* strings until the closing bracket, across lines */
            for (;;) {
                while (*s && (isspace((unsigned char)*s) || *s == ','))
                    s++;
                if (*s == '#') {
                    while (*s && *s != '\n')
                        s++;
                    continue;
                }
                if (*s == ']') {
                    eol = s;
                    break;
                }
                if (*s != '"' && *s != '\'') {
                    fprintf(stderr, "hotline check: %s: budgets must be an array of strings\n",
                            path);
                    rc = -1;
                    break;
                }
                char q = *s++, buf[1024];
                size_t k = 0;
                while (*s && *s != q && *s != '\n') {
                    if (q == '"' && *s == '\\' && (s[1] == '"' || s[1] == '\\')) s++;
                    if (k + 1 < sizeof buf) buf[k++] = *s;
                    s++;
                }
                if (*s != q) {
                    fprintf(stderr, "hotline check: %s: a budget string is not closed\n", path);
                    rc = -1;
                    break;
                }
                s++;
                rc = budgets_add(b, buf, k);
                found++;
                if (rc) break;
            }
        }
    next:
        p = *eol ? eol + 1 : eol;
    }
    free(text);
    return rc ? -1 : found;
}

void budgets_free(struct budgets *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->v[i]);
    b->n = 0;
}
