/* <root>/.hotline: the workspace's private folder (saved profiles, the
 * kernels' agent socket). Shared by the providers that write there. */
#ifndef HOTLINE_HOTDIR_H
#define HOTLINE_HOTDIR_H

#include <stddef.h>
#include <sys/stat.h>

#include "core/facilities.h"

/* <root>/.hotline into buf (cap n): 0, -ENOENT (no workspace root) or
 * -ENAMETOOLONG. */
int lsp_hotline_dir(struct lsp_facilities *s, char *buf, size_t n);
/* 0 when dir is a directory and not a symlink (st filled); -ELOOP,
 * -ENOTDIR, -errno. */
int lsp_real_dir(const char *dir, struct stat *st);
/* Create dir (0700, with a .gitignore of `*`), or make an existing one of
 * ours private (older versions made it 0755). 0 or -errno; -ELOOP for a
 * symlink. */
int lsp_hotline_dir_make(const char *dir);

#endif
