/* ownfd.c: descriptors the agent opened, in a table it shares with the program.
 *
 * A correct program may close descriptors it did not open (every daemon
 * calls os.closerange(3, ...)) and then open its own files, which get our
 * old numbers. An agent that kept using its number would read or write the
 * program's file, or close it. So each descriptor is remembered with the
 * identity of what it refers to (st_dev, st_ino: unique per socket, pipe or
 * file), checked before every use; once the number refers to something else
 * it is forgotten and never touched again, not even closed.
 *
 * Each is moved to a high number at once (high_base), out of the way of
 * the program's lowest-free-number opens. Better still, the sampler thread
 * takes a descriptor table of its own
 * (ownfd_private_table): what it opens then never takes a number the
 * program expects (a daemon's open("/dev/null") after closing 0-2 must get
 * 0), and nothing the program closes can be ours. The checks stay for the
 * main thread's few calls and for hosts that refuse unshare(CLONE_FILES)
 * (Docker's default seccomp profile); there a check and its use are two
 * system calls, and a program thread that closes the number and opens
 * another file in between still gets its file used once (docs/sampling.md).
 */
#include "ownfd.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Where our descriptors go: the program's own opens take the lowest free
 * number, so far above them they do not find ours taken (and, once the
 * program has closed ours, rarely reuse it). Below the usual soft limit of
 * 1024, and never so high that the kernel grows the table for it. */
/* 1 in the thread that took a table of its own (the sampler): nothing the
 * program does can close or reuse its numbers, so ownfd_get needs no
 * fstat there (a system call per use: per thread per tick, it was a third
 * of the cost of an idle thread; docs/sampling.md, "Cost") */
static __thread int private_table;

static int high_base(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= 1024) return 960;
    return rl.rlim_cur > 16 ? (int)(rl.rlim_cur * 3 / 4) : 3;
}

void ownfd_set(agent_fd_t *o, int fd)
{
    struct stat st;
    o->fd = -1;
    if (fd < 0) return;
    int hi = fd < high_base() ? fcntl(fd, F_DUPFD_CLOEXEC, high_base()) : -1;
    if (hi >= 0) {
        close(fd); /* just opened by us: still ours */
        fd = hi;
    }
    if (fstat(fd, &st) != 0) {
        close(fd); /* just opened by us: still ours */
        return;
    }
    o->fd = fd;
    o->dev = st.st_dev;
    o->ino = st.st_ino;
}

int ownfd_get(agent_fd_t *o)
{
    struct stat st;
    if (o->fd < 0) return -1;
    if (private_table) return o->fd;
    if (fstat(o->fd, &st) != 0 || st.st_dev != o->dev || st.st_ino != o->ino)
        o->fd = -1; /* closed by the program, maybe reused: not ours any more */
    return o->fd;
}

/* Closes every descriptor of the calling thread's (private) table but keep. */
static void close_all_but(int keep)
{
#ifdef SYS_close_range
    if ((keep <= 0 || syscall(SYS_close_range, 0U, (unsigned)keep - 1, 0U) == 0) &&
        syscall(SYS_close_range, keep < 0 ? 0U : (unsigned)keep + 1, ~0U, 0U) == 0)
        return;
#endif
    struct rlimit rl; /* kernels before 5.9: every number up to the limit */
    long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1u << 20) ? (long)rl.rlim_cur
                                                                              : (1L << 20);
    for (long fd = 0; fd < max; fd++)
        if (fd != keep) close((int)fd);
}

int ownfd_private_table(int keep)
{
    if (unshare(CLONE_FILES) != 0) return 0;
    private_table = 1;
    /* The copy holds every file of the program: drop them at once, or a
     * pipe the program closes would never reach EOF for its reader. */
    close_all_but(keep);
    /* 0-2 on /dev/null: a library of ours writing to "stderr" (NVML) must
     * not land in a file we opened. */
    for (int i = 0; i < 3; i++) {
        int fd = i == keep ? -1 : open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd >= 0 && fd != i) {
            dup3(fd, i, O_CLOEXEC);
            close(fd);
        }
    }
    return 1;
}

void ownfd_close(agent_fd_t *o)
{
    if (ownfd_get(o) >= 0) close(o->fd);
    o->fd = -1;
}
