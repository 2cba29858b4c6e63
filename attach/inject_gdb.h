/* inject_gdb: the gdb phase of `hotline attach --memory` on 3.9-3.13:
 * gdb found, started on the script inject.c makes (inject_files.c puts it
 * in a memfd, at gdb's fd 3)
 * in a session of its own, its output lines read for the script's
 * "HOTLINE ..." progress, the wait for a safe point given up the script's
 * way (SIGURG), and the sentence that says how it ended when nothing was
 * queued. Runs on the caller's libuv loop, next to the socket the agent
 * connects to (attach/ uses libuv here and in injector.c only). */
#ifndef HOTLINE_INJECT_GDB_H
#define HOTLINE_INJECT_GDB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

struct inject_gdb {
    uv_process_t proc;
    uv_pipe_t out;
    int running, out_open;
    /* what its output said: at a safe point (the target is being changed
     * from here: gdb must finish), no safe point (SIGURG), the pending
     * call queued or refused; and ours: SIGURG sent, the wait timed out */
    int stopped, nostop, queued, refused, urged, timed_out;
    pid_t pid;
    char line[512]; /* the line being read */
    size_t line_len;
    char last[256]; /* gdb's last line that is not ours (its error) */
    /* at a safe point (the caller's wait ends), and gdb's exit */
    void (*on_stopped)(struct inject_gdb *g);
    void (*on_exited)(struct inject_gdb *g, int64_t status, int sig);
    void *data;
};

/* gdb to run: $HOTLINE_GDB, else gdb on PATH, into out: 0 or -ENOENT. */
int inject_gdb_find(char *out, size_t n);

/* Start gdb (path) on pid with the script at script_fd (its name as gdb
 * sees it: script); g's callbacks and data set by the caller. 0, or with
 * a sentence in err: -EIO gdb did not start, another -errno (no pipe). */
int inject_gdb_spawn(struct inject_gdb *g, uv_loop_t *loop, const char *gdb, pid_t pid,
                     int script_fd, const char *script, char *err, size_t n);

/* Still waiting for a safe point: end the wait the script's way (SIGURG,
 * inject.h), which has gdb take its breakpoints out and detach. 1 when
 * sent now (the caller gives gdb a few seconds, then inject_gdb_kill). */
int inject_gdb_urge(struct inject_gdb *g);
/* gdb did not answer SIGURG: SIGTERM, unless it is changing the target. */
void inject_gdb_kill(struct inject_gdb *g);
/* Close its output pipe if still open (after the loop ran). */
void inject_gdb_close(struct inject_gdb *g);

/* gdb exited (status, sig) with nothing queued: why, into msg (cap n, for
 * a waited timeout_s). -EPERM: it could not attach (permission); else
 * -EIO (the target left as it was, but for at most one page). */
int inject_gdb_failure(const struct inject_gdb *g, double timeout_s, int64_t status, int sig,
                       char *msg, size_t n);

#endif
