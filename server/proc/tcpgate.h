/* tcpgate: agents on other hosts reach a run's agent socket over TCP
 * (docs/distributed.md, "Across machines"). Never on by default: `hotline
 * run --listen-tcp HOST:PORT` opens it.
 *
 * Each TCP connection must first send one line, "hotline-token <hex>\n",
 * with the gate's token (random per gate, 64 hex digits, compared in
 * constant time); nothing else it sends is read before that line matched.
 * A wrong token, a line longer than TCPGATE_TOKEN_LINE_MAX, or no line
 * within TCPGATE_TOKEN_TIMEOUT_MS closes the connection with a log line.
 * A matching one is bridged, byte for byte both ways, to a new connection
 * on the target Unix socket (the run's own), where the session reads it as
 * any agent's. Bounded: at most TCPGATE_MAX_CONNS connections at once, and
 * each direction of a bridge stops reading while TCPGATE_MAX_QUEUED bytes
 * wait to be written on the other side. Everything runs on the caller's
 * libuv loop; nothing blocks. */
#ifndef HOTLINE_TCPGATE_H
#define HOTLINE_TCPGATE_H

#include <stddef.h>
#include <uv.h>

#define TCPGATE_MAX_CONNS 64
#define TCPGATE_MAX_QUEUED ((size_t)4 << 20)
#define TCPGATE_TOKEN_LINE_MAX 128
#define TCPGATE_TOKEN_TIMEOUT_MS 10000
#define TCPGATE_TOKEN_PREFIX "hotline-token "

struct tcpgate_conn; /* private */

struct tcpgate {
    char token[65];   /* read-only: this gate's token (hex) */
    char addr[80];    /* read-only: "host:port" it listens on (the port bound) */
    char target[108]; /* the Unix socket bridged to (tcpgate_set_target) */
    /* private */
    uv_loop_t *loop;
    uv_tcp_t listener;
    void (*log)(const char *msg, void *ud);
    void *ud;
    struct tcpgate_conn *conns;
    int nconns, closing, pending_closes, listening;
    void (*on_closed)(struct tcpgate *);
};

/* Listen on "HOST:PORT" (IPv4 a.b.c.d or IPv6 [::1]; port 0: any free one)
 * with a new random token. log (may be NULL) gets each refused connection's
 * line. 0, or a negative errno / libuv error with the reason in err. */
int tcpgate_listen(uv_loop_t *loop, struct tcpgate *g, const char *hostport,
                   void (*log)(const char *msg, void *ud), void *ud, char *err, size_t n);
/* The Unix socket accepted connections are bridged to (copied). Until it is
 * set, a connection with the right token is closed. */
void tcpgate_set_target(struct tcpgate *g, const char *unix_path);
/* Close the listener and every connection; on_closed (may be NULL) runs
 * once every handle is closed. */
void tcpgate_close(struct tcpgate *g, void (*on_closed)(struct tcpgate *));

#endif
