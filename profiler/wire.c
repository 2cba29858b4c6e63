/* wire.c: the agent's side of the wire (docs/agent-protocol.md).
 *
 * Sends the output buffer (agent_buf.h, written by the sampler thread only) with
 * non-blocking writes: a slow or stuck server makes the buffer grow up to
 * AGENT_OUT_SOFT (then deltas are held back and keep aggregating) and never
 * blocks the program. Incoming lines ("now", "stop") are parsed by a small
 * key scanner: we only need two fields.
 *
 * The descriptor lives in the program's table (ownfd.c): it is checked
 * before every send, recv and close, and when the program has closed it the
 * agent goes quiet without touching that number again. A connection that
 * ends is not a dead server: the server closes connections of processes that
 * outlive the program (session drain, after a "stop" that releases them).
 * In LSP mode whether the server died is decided from its pid
 * (wire_server_check).
 */
#include "wire.h"

#include "agent.h"
#include "agent_emit.h"
#include "clock.h"
#include "ownfd.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* New connected, non-blocking socket to path, or -errno. nb_connect: give
 * up at once (EAGAIN) when the server's accept backlog is full. */
static int wire_connect(const char *path, int nb_connect)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sa.sun_path) return -ENAMETOOLONG;
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nb_connect ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0) return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

int wire_open(agent_t *a, const char *path, int is_socket)
{
    int fd;
    if (is_socket) {
        fd = wire_connect(path, 0);
        if (fd < 0) return fd;
        snprintf(a->sock_path, sizeof a->sock_path, "%s", path);
    } else {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) return -errno;
    }
    ownfd_set(&a->fd, fd);
    if (a->fd.fd < 0) return -EBADF;
    a->is_socket = is_socket;
    a->closed = 0;
    return 0;
}

/* State and start time (clock ticks after boot) of pid from /proc; 0 or -errno. */
static int proc_stat(long pid, char *state, unsigned long long *start)
{
    char path[64], b[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    agent_fd_t f;
    ownfd_set(&f, open(path, O_RDONLY | O_CLOEXEC));
    int fd = ownfd_get(&f);
    ssize_t n = fd >= 0 ? read(fd, b, sizeof b - 1) : -1;
    int e = n < 0 ? (fd < 0 ? ENOENT : errno) : 0;
    ownfd_close(&f);
    if (n <= 0) return -(e ? e : EIO);
    b[n] = 0;
    char *p = strrchr(b, ')'); /* the name in () may hold anything */
    if (!p || p[1] != ' ' || !p[2]) return -EIO;
    *state = p[2];
    p += 3;
    for (int field = 4; field <= 22; field++) /* field 22: starttime */
        *start = strtoull(p, &p, 10);
    return 0;
}

void wire_server_init(agent_t *a, long pid)
{
    char state;
    a->server_pid = pid;
    a->server_start = 0;
    if (pid > 0 && proc_stat(pid, &state, &a->server_start) != 0) a->server_start = 0;
}

/* 1 when the server process is gone: no such pid, a zombie, or the pid now
 * names a younger process. Whatever cannot be read counts as alive: the
 * program is never killed on a guess. */
static int server_gone(agent_t *a)
{
    if (a->server_pid <= 0) return 0;
    if (kill((pid_t)a->server_pid, 0) != 0 && errno == ESRCH) return 1;
    char state;
    unsigned long long start = 0;
    if (proc_stat(a->server_pid, &state, &start) != 0) return 0;
    return state == 'Z' || state == 'X' || (a->server_start && start != a->server_start);
}

/* In LSP mode (die_with_server) a killed server takes the whole process
 * down, so that nothing it started runs on unseen (forked children have
 * their own connection and do the same); the main program also has
 * PR_SET_PDEATHSIG. SIGKILL: no handler of the program runs. */
void wire_server_check(agent_t *a)
{
    /* The kernel closes a dying server's descriptors before it sends our
     * parent-death signal, so this check can win the race against the
     * handler that takes the whole group (module.c): do what it would. */
    if (a->die_with_server && !a->released && server_gone(a))
        kill(a->kill_group ? 0 : getpid(), SIGKILL);
}

/* Our descriptor, or -1 when the connection is over; notices a descriptor
 * the program closed (and maybe reused) and then never touches it again. */
static int wire_fd(agent_t *a)
{
    if (a->closed) return -1;
    int had = a->fd.fd >= 0;
    int fd = ownfd_get(&a->fd);
    if (fd < 0) {
        a->closed = 1;
        a->lost = had;
    }
    return fd;
}

/* The connection failed: the program's doing (the descriptor is no longer
 * ours: EBADF, ENOTSOCK, ...) or the peer's (closed, reset). */
static void wire_failed(agent_t *a)
{
    a->closed = 1;
    if (ownfd_get(&a->fd) < 0) {
        a->lost = 1; /* forgotten: never closed by us */
        return;
    }
    wire_server_check(a);
}

/* SAMPLER_REQ_TEE (sampler.c): what out gained since the last flush goes
 * to the tee file too, whatever the socket takes. A failed write ends the
 * tee: its reader finds the file cut short. */
static void tee_write(agent_t *a)
{
    const char *p = a->out.p + a->tee_mark;
    size_t n = a->out.len > a->tee_mark ? a->out.len - a->tee_mark : 0;
    while (n) {
        ssize_t w = write(a->tee_fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(a->tee_fd);
            a->tee_on = 0;
            break;
        }
        p += w;
        n -= (size_t)w;
    }
    a->tee_mark = a->out.len;
}

void wire_flush(agent_t *a)
{
    size_t off = 0;
    int fd;
    if (a->tee_on) tee_write(a);
    while (off < a->out.len && (fd = wire_fd(a)) >= 0) {
        ssize_t w = a->is_socket
                        ? send(fd, a->out.p + off, a->out.len - off, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : write(fd, a->out.p + off, a->out.len - off);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        wire_failed(a); /* drop output from now on */
    }
    if (a->closed) off = a->out.len;
    if (off) {
        memmove(a->out.p, a->out.p + off, a->out.len - off);
        a->out.len -= off;
        a->tee_mark = a->tee_mark > off ? a->tee_mark - off : 0;
    }
}

void wire_drain(agent_t *a, double timeout_s)
{
    double end = clock_mono() + timeout_s;
    for (;;) {
        wire_flush(a);
        int fd = wire_fd(a);
        if (a->out.len == 0 || fd < 0) return;
        double left = end - clock_mono();
        if (left <= 0) return;
        struct pollfd p = {fd, POLLOUT, 0}; /* polling a number no longer ours is harmless */
        poll(&p, 1, left > 0.1 ? 101 : (int)(left * 1000) + 1);
    }
}

/* Value of "key" in a flat JSON line: string copied to sv, or number. */
static int scan_key(const char *line, const char *key, char *sv, size_t cap, double *num)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(line, pat);
    if (!p) return -1;
    p += strlen(pat);
    while (*p == ' ' || *p == '\t' || *p == ':')
        p++;
    if (*p == '"') {
        if (!sv) return -1;
        size_t i = 0;
        for (p++; *p && *p != '"' && i + 1 < cap; p++)
            sv[i++] = *p;
        sv[i] = 0;
        return 0;
    }
    if (!num) return -1;
    char *end;
    *num = strtod(p, &end);
    return end == p ? -1 : 0;
}

int wire_poll_in(agent_t *a)
{
    if (!a->is_socket) return 0;
    int ended = 0; /* EOF or an error: lines read before it still count */
    for (;;) {
        int fd = wire_fd(a);
        if (fd < 0) return 0;
        if (a->inlen >= sizeof a->inbuf - 1) a->inlen = 0; /* over-long line: drop it */
        ssize_t r = recv(fd, a->inbuf + a->inlen, sizeof a->inbuf - 1 - a->inlen, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (r <= 0) {
            ended = 1;
            break;
        }
        a->inlen += (size_t)r;
    }
    int stop = 0;
    char *start = a->inbuf, *nl;
    a->inbuf[a->inlen] = 0;
    while ((nl = memchr(start, '\n', a->inlen - (size_t)(start - a->inbuf)))) {
        *nl = 0;
        char t[16];
        double hz = 0;
        if (scan_key(start, "t", t, sizeof t, NULL) == 0) {
            if (strcmp(t, "stop") == 0)
                stop = 1;
            else if (strcmp(t, "now") == 0 && scan_key(start, "hz", NULL, 0, &hz) == 0) {
                a->now_hz = hz > 0 ? (hz > 100 ? 100 : hz) : 0;
                a->next_now = 0;
            }
        }
        start = nl + 1;
    }
    size_t rest = a->inlen - (size_t)(start - a->inbuf);
    memmove(a->inbuf, start, rest);
    a->inlen = rest;
    if (stop) a->released = 1; /* the server let us go: its death is not ours */
    if (ended) wire_failed(a); /* closed by the server (or by the program): stop profiling */
    return stop;
}

/* The program closed our connection (a->lost): tell the server why this
 * process's profile stops here, over a short connection of its own (best
 * effort: the server may be gone). */
void wire_report_lost(agent_t *a, double ts)
{
    if (!a->is_socket || !a->sock_path[0]) return;
    agent_fd_t f;
    int fd = wire_connect(a->sock_path, 1);
    ownfd_set(&f, fd);
    agent_buf_t b = {0};
    char msg[200];
    snprintf(msg, sizeof msg,
             "process %ld closed the profiler's connection after %.1f s (for example with "
             "os.closerange); the rest of its run is not profiled",
             (long)getpid(), ts);
    agent_emit_log(&b, "warn", msg);
    if ((fd = ownfd_get(&f)) >= 0 && b.p) (void)!send(fd, b.p, b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    ownfd_close(&f);
    agent_buf_free(&b);
}

void wire_close(agent_t *a)
{
    ownfd_close(&a->fd);
    a->closed = 1;
}
