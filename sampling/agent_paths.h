/* agent_paths.h: which files count as the profiled program, the `include` /
 * `exclude` rule of the agent's configuration (docs/configuration.md),
 * shared by the in-process agent (profiler/walk.c) and `hotline attach` (its
 * --include / --exclude), so that both charge the same frame. Pure code
 * (agent_paths.c, fnmatch only). */
#ifndef HOTLINE_AGENT_PATHS_H
#define HOTLINE_AGENT_PATHS_H

/* A pattern with * ? or [ is a glob over the whole path (fnmatch, '*'
 * crosses '/'); any other is a path prefix that ends at a '/' (a trailing
 * '/' of the pattern ignored): "/p/app" takes /p/app and /p/app/x.py, not
 * /p/apple.py. Both borrowed. */
int agent_path_match(const char *pat, const char *path);

/* 1 when path is part of the program: an absolute path that no exclude
 * pattern takes and an include pattern takes (every one when there is no
 * include pattern); a relative name ("<string>", "<ipython-input-...>")
 * only when a relative include pattern takes it: absolute patterns, the
 * defaults, never match those. Everything borrowed. */
int agent_path_profiled(const char *const *include, int ninclude, const char *const *exclude,
                        int nexclude, const char *path);

#endif
