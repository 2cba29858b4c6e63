/* wiresink: the sampler's stream on a Hotline server's agent socket
 * (wiresink.h). */
#include "wiresink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "agent_keys.h"

/* one process's connection */
struct wire_conn {
    int sock;
    char in[4096]; /* server -> us: partial line */
    size_t in_len;
};

/* The server's agent socket: a descriptor, or -1 with a message */
static int wire_connect(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        fprintf(stderr, "hotline attach: socket path too long: %s\n", path);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        fprintf(stderr, "hotline attach: cannot connect to %s: %s\n", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

static void *wire_open(struct attach_sink *k)
{
    struct attach_wiresink *ws = (struct attach_wiresink *)k;
    struct wire_conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->sock = wire_connect(ws->path);
    if (c->sock < 0) {
        free(c);
        return NULL;
    }
    return c;
}

/* Write all of a line to the server; -1 once it is gone. */
static int wire_send(int sock, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = send(sock, s, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The sampler's lines (agent_emit's, whole) as they are. */
static int wire_emit(struct attach_sink *k, void *conn, const char *lines, size_t n)
{
    (void)k;
    struct wire_conn *c = conn;
    return wire_send(c->sock, lines, n);
}

/* What the server asked since the last call (`now` rate, `stop`); its
 * socket closing is a stop too. */
static int wire_poll(struct attach_sink *k, void *conn, int *now_hz)
{
    (void)k;
    struct wire_conn *c = conn;
    int stop = 0;
    for (;;) {
        if (c->in_len == sizeof c->in) c->in_len = 0; /* no request is that long */
        ssize_t r = recv(c->sock, c->in + c->in_len, sizeof c->in - c->in_len, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return stop; /* EAGAIN: nothing more now */
        if (r == 0) return -1;
        c->in_len += (size_t)r;
        char *nl;
        while ((nl = memchr(c->in, '\n', c->in_len))) {
            json_t *m = json_loadb(c->in, (size_t)(nl - c->in), 0, NULL);
            const char *t = json_string_value(json_object_get(m, agent_key_name(AGENT_KEY_T)));
            if (t && !strcmp(t, AGENT_REQ_NOW)) {
                json_int_t hz = json_integer_value(json_object_get(m, AGENT_REQ_HZ));
                *now_hz = hz > 0 ? (hz < 100 ? (int)hz : 100) : 0;
            } else if (t && !strcmp(t, AGENT_REQ_STOP)) {
                stop = -1;
            }
            json_decref(m);
            size_t used = (size_t)(nl - c->in) + 1;
            memmove(c->in, c->in + used, c->in_len - used);
            c->in_len -= used;
        }
    }
}

static void wire_close(struct attach_sink *k, void *conn)
{
    (void)k;
    struct wire_conn *c = conn;
    if (!c) return;
    if (c->sock >= 0) close(c->sock);
    free(c);
}

void attach_wiresink_init(struct attach_wiresink *ws, const char *path)
{
    memset(ws, 0, sizeof *ws);
    ws->sink.open = wire_open;
    ws->sink.emit = wire_emit;
    ws->sink.poll = wire_poll;
    ws->sink.close = wire_close;
    ws->sink.remote = 1;
    ws->path = path;
}
