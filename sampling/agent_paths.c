/* agent_paths.c: the include / exclude rule (agent_paths.h). */
#include "agent_paths.h"

#include <fnmatch.h>
#include <string.h>

int agent_path_match(const char *pat, const char *path)
{
    if (strpbrk(pat, "*?[")) return fnmatch(pat, path, 0) == 0;
    size_t n = strlen(pat);
    while (n > 1 && pat[n - 1] == '/')
        n--;
    return strncmp(pat, path, n) == 0 && (path[n] == 0 || path[n] == '/');
}

static int all_digits(const char *s, size_t n)
{
    if (!n) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

int agent_path_is_kernel_cell(const char *path)
{
    const char *base = strrchr(path, '/');
    if (path[0] != '/' || !base || base == path) return 0;
    size_t bn = strlen(base + 1);
    if (bn < 4 || strcmp(base + 1 + bn - 3, ".py") || !all_digits(base + 1, bn - 3)) return 0;
    const char *dir = base;
    while (dir > path && dir[-1] != '/')
        dir--;
    size_t dn = (size_t)(base - dir);
    return dn > 10 && !strncmp(dir, "ipykernel_", 10) && all_digits(dir + 10, dn - 10);
}

int agent_path_profiled(const char *const *include, int ninclude, const char *const *exclude,
                        int nexclude, const char *path)
{
    if (path[0] != '/') {
        for (int i = 0; i < ninclude; i++)
            if (include[i][0] != '/' && agent_path_match(include[i], path)) return 1;
        return 0;
    }
    for (int i = 0; i < nexclude; i++)
        if (agent_path_match(exclude[i], path)) return 0;
    if (ninclude == 0 || agent_path_is_kernel_cell(path)) return 1;
    for (int i = 0; i < ninclude; i++)
        if (agent_path_match(include[i], path)) return 1;
    return 0;
}
