/* pylist: the Python processes a user may attach to (the editor's "Attach
 * to process…", hotline.listProcesses) and what a target runs. Reads /proc
 * only, and attach_open() (attach/attach.h) for the Python version and the
 * permission, which it closes again: a listed process is never touched. */
#ifndef HOTLINE_PYLIST_H
#define HOTLINE_PYLIST_H

#include <limits.h>
#include <sys/types.h>
#include <jansson.h>

#define PYLIST_MAX 256 /* processes listed at most */

struct pyproc_info {
    char main[PATH_MAX]; /* absolute path of the script it runs, "" if none (-m, -c, REPL) */
    char cwd[PATH_MAX];  /* "" when not readable */
    char exe[PATH_MAX];  /* "" when not readable */
    char command[512];   /* its command line, spaces between arguments, cut */
};

/* What pid runs (from /proc/PID/{cmdline,cwd,exe}): 0, or -errno (-ESRCH
 * when there is no such process). */
int pyproc_describe(pid_t pid, struct pyproc_info *out);

/* The Python processes on this machine but self, as hotline.listProcesses
 * returns them (docs/attach.md, "In the editor"): an array (new) of
 * {pid, command, cwd, main, python, inWorkspace, canAttach, why}. root (the
 * workspace folder, or NULL) decides inWorkspace: the script or the
 * working folder is under it. */
json_t *pyproc_list(const char *root, pid_t self);

#endif
