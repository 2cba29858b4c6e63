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

/* 1 when path is a Jupyter cell's file as ipykernel (6+) names it:
 * <tmp>/ipykernel_<pid>/<hash of the cell's text>.py. */
int agent_path_is_kernel_cell(const char *path);

/* 1 when path is part of the program: an absolute path that no exclude
 * pattern takes and an include pattern takes (every one when there is no
 * include pattern), or a kernel cell's file that no exclude pattern takes
 * (the user's code wherever the include points: a kernel that connected at
 * start-up, HOTLINE_CONNECT=1, chose its include before ipykernel made
 * the cells' folder); a relative name ("<string>", "<ipython-input-...>")
 * only when a relative include pattern takes it: absolute patterns, the
 * defaults, never match those. Everything borrowed. */
int agent_path_profiled(const char *const *include, int ninclude, const char *const *exclude,
                        int nexclude, const char *path);

#endif
