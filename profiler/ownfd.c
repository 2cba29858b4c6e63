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
 * What is left: a check and the use are two system calls, and a program
 * thread that closes the number and opens another file in between (a few
 * microseconds) still gets its file used once. Only a private descriptor
 * table for the sampler thread would close that gap (docs/sampling.md).
 */
#include "agent.h"

#include <sys/stat.h>
#include <unistd.h>

void ownfd_set(agent_fd_t *o, int fd)
{
    struct stat st;
    o->fd = -1;
    if (fd < 0)
        return;
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
    if (o->fd < 0)
        return -1;
    if (fstat(o->fd, &st) != 0 || st.st_dev != o->dev || st.st_ino != o->ino)
        o->fd = -1; /* closed by the program, maybe reused: not ours any more */
    return o->fd;
}

void ownfd_close(agent_fd_t *o)
{
    if (ownfd_get(o) >= 0)
        close(o->fd);
    o->fd = -1;
}
