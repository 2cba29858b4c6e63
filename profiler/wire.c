/* wire.c: the agent's side of the wire (docs/agent-protocol.md).
 *
 * One bounded output buffer, written by the sampler thread only, with
 * non-blocking writes: a slow or stuck server makes the buffer grow up to
 * AGENT_OUT_SOFT (then deltas are held back and keep aggregating) and never
 * blocks the program. Incoming lines ("now", "stop") are parsed by a small
 * key scanner: we only need two fields.
 */
#include "agent.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

void buf_free(agent_buf_t *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static int buf_reserve(agent_buf_t *b, size_t n)
{
    if (b->len + n <= b->cap)
        return 0;
    if (b->max && b->len + n > b->max) {
        b->overflow = 1;
        return -ENOSPC;
    }
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->len + n)
        nc *= 2;
    char *p = realloc(b->p, nc);
    if (!p)
        return -ENOMEM;
    b->p = p;
    b->cap = nc;
    return 0;
}

int buf_add(agent_buf_t *b, const char *s, size_t n)
{
    int r = buf_reserve(b, n);
    if (r)
        return r;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return 0;
}

int buf_printf(agent_buf_t *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    if ((size_t)n < sizeof tmp)
        return buf_add(b, tmp, (size_t)n);
    int r = buf_reserve(b, (size_t)n + 1);
    if (r)
        return r;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int buf_json_str(agent_buf_t *b, const char *s, size_t n)
{
    int r = buf_add(b, "\"", 1);
    for (size_t i = 0; i < n && !r; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            r = buf_add(b, e, 2);
        } else if (c < 0x20) {
            r = buf_printf(b, "\\u%04x", c);
        } else {
            r = buf_add(b, (const char *)&s[i], 1);
        }
    }
    return r ? r : buf_add(b, "\"", 1);
}

int wire_open(agent_t *a, const char *path, int is_socket)
{
    int fd;
    if (is_socket) {
        struct sockaddr_un sa;
        memset(&sa, 0, sizeof sa);
        sa.sun_family = AF_UNIX;
        if (strlen(path) >= sizeof sa.sun_path)
            return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -errno;
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            int e = -errno;
            close(fd);
            return e;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    } else {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            return -errno;
    }
    a->fd = fd;
    a->is_socket = is_socket;
    a->closed = 0;
    return 0;
}

/* The server's end of the socket closed under us (not our own close). In
 * LSP mode (die_with_server) the server was killed: take the whole process
 * down so that nothing it started runs on unseen (forked children have their
 * own connection and do the same). SIGKILL: no handler of the program runs. */
static void wire_server_gone(agent_t *a)
{
    if (a->die_with_server && a->is_socket)
        kill(getpid(), SIGKILL);
}

void wire_flush(agent_t *a)
{
    size_t off = 0;
    while (a->fd >= 0 && !a->closed && off < a->out.len) {
        ssize_t w = a->is_socket ? send(a->fd, a->out.p + off, a->out.len - off,
                                        MSG_NOSIGNAL | MSG_DONTWAIT)
                                 : write(a->fd, a->out.p + off, a->out.len - off);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        a->closed = 1; /* peer gone: drop output from now on */
        wire_server_gone(a);
        off = a->out.len;
    }
    if (off) {
        memmove(a->out.p, a->out.p + off, a->out.len - off);
        a->out.len -= off;
    }
}

void wire_drain(agent_t *a, double timeout_s)
{
    double end = sampler_mono() + timeout_s;
    for (;;) {
        wire_flush(a);
        if (a->out.len == 0 || a->closed || a->fd < 0)
            return;
        double left = end - sampler_mono();
        if (left <= 0)
            return;
        struct pollfd p = {a->fd, POLLOUT, 0};
        poll(&p, 1, (int)(left * 1000) + 1);
    }
}

/* Value of "key" in a flat JSON line: string copied to sv, or number. */
static int scan_key(const char *line, const char *key, char *sv, size_t cap, double *num)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(line, pat);
    if (!p)
        return -1;
    p += strlen(pat);
    while (*p == ' ' || *p == '\t' || *p == ':')
        p++;
    if (*p == '"') {
        if (!sv)
            return -1;
        size_t i = 0;
        for (p++; *p && *p != '"' && i + 1 < cap; p++)
            sv[i++] = *p;
        sv[i] = 0;
        return 0;
    }
    if (!num)
        return -1;
    char *end;
    *num = strtod(p, &end);
    return end == p ? -1 : 0;
}

int wire_poll_in(agent_t *a)
{
    if (!a->is_socket || a->fd < 0 || a->closed)
        return 0;
    for (;;) {
        if (a->inlen >= sizeof a->inbuf - 1)
            a->inlen = 0; /* over-long line: drop it */
        ssize_t r = recv(a->fd, a->inbuf + a->inlen, sizeof a->inbuf - 1 - a->inlen, MSG_DONTWAIT);
        if (r == 0) {
            a->closed = 1; /* server went away: stop profiling */
            wire_server_gone(a);
            return 1;
        }
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            a->closed = 1;
            wire_server_gone(a);
            return 1;
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
    return stop;
}

void wire_close(agent_t *a)
{
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    a->closed = 1;
}
