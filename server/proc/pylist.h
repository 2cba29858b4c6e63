/* pylist: the Python processes a user may attach to (the editor's "Attach
 * to process…", hotline.listProcesses) and what a target runs. Reads /proc
 * only, and attach_open() (attach/attach.h) for the Python version and the
 * permission, which it closes again: a listed process is never touched. */
#ifndef HOTLINE_PYLIST_H
#define HOTLINE_PYLIST_H

#include <limits.h>
#include <pthread.h>
#include <sys/types.h>
#include <jansson.h>

#define PYLIST_MAX 256 /* processes listed at most */

struct pyproc_info {
    char main[PATH_MAX]; /* absolute path of the script it runs, "" if none (-m, -c, REPL) */
    char cwd[PATH_MAX];  /* "" when not readable */
    char exe[PATH_MAX];  /* "" when not readable */
    char command[512];   /* its command line, spaces between arguments, cut */
    /* marimo (attach/marimo.h): 'k' its kernel, 's' its server (`marimo
     * edit`/`run`), 0 neither; then main is the notebook when known */
    char marimo;
    pid_t marimo_server; /* the kernel's server */
    char notebook[PATH_MAX];
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

/* What a listing on another thread shares with the loop that waits for it,
 * so that an open that never returns (the image a FIFO, or on a hung NFS or
 * FUSE mount) costs the answer only that process: the entries so far, and
 * the one being opened, as it is listed if its open does not come back. */
#define PYLIST_MAX_SKIP 16
struct pylist_share {
    pthread_mutex_t mu; /* guards out and cur */
    json_t *out;        /* owned: the entries so far */
    json_t *cur;        /* owned: the process whose image is being opened (canAttach
                         * false, why: it blocked), or NULL */
    /* processes not to open (their open blocked an earlier listing): listed
     * with why, as cur; set before the listing starts, read only */
    pid_t skip[PYLIST_MAX_SKIP];
    int nskip;
    /* tests only (HOTLINE_TEST_LIST_HANG_PID): this pid's open never
     * returns, as on a hung NFS or FUSE mount, which a test cannot make;
     * 0: none */
    pid_t hang_pid;
};

/* pyproc_list into sh (initialized: mu, out an empty array, cur NULL),
 * appending under sh->mu; 0 or -ENOMEM. */
int pyproc_list_shared(const char *root, pid_t self, struct pylist_share *sh);

#endif
