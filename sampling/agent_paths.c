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
    if (ninclude == 0) return 1;
    for (int i = 0; i < ninclude; i++)
        if (agent_path_match(include[i], path)) return 1;
    return 0;
}
