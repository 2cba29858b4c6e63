/* Which files count as the profiled program: the `include` / `exclude`
 * rule of the agent's configuration (docs/configuration.md), shared by the
 * in-process agent (profiler/walk.c) and `hotline attach` (its
 * --include / --exclude), so that both charge the same frame. Header only:
 * the agent includes protocol/ headers, it links none of protocol/'s code. */
#ifndef HOTLINE_AGENT_PATHS_H
#define HOTLINE_AGENT_PATHS_H

#include <fnmatch.h>
#include <string.h>

/* A pattern with * ? or [ is a glob over the whole path (fnmatch, '*'
 * crosses '/'); any other is a path prefix that ends at a '/' (a trailing
 * '/' of the pattern ignored): "/p/app" takes /p/app and /p/app/x.py, not
 * /p/apple.py. */
static inline int agent_path_match(const char *pat, const char *path)
{
    if (strpbrk(pat, "*?[")) return fnmatch(pat, path, 0) == 0;
    size_t n = strlen(pat);
    while (n > 1 && pat[n - 1] == '/')
        n--;
    return strncmp(pat, path, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* 1 when path is part of the program: an absolute path that no exclude
 * pattern takes and an include pattern takes (every one when there is no
 * include pattern); a relative name ("<string>", "<ipython-input-...>")
 * only when a relative include pattern takes it: absolute patterns, the
 * defaults, never match those. */
static inline int agent_path_profiled(const char *const *include, int ninclude,
                                      const char *const *exclude, int nexclude, const char *path)
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

#endif
