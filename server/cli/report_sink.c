/* report_sink: attach's lines into a profile store (see report_sink.h). */
#include "cli/report_sink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent_wire.h"

/* One process's stream: the line reader and decoder an agent's socket
 * gets (server/proc/agentconn.c), into the store's connection. */
struct report_conn {
    struct report_sink *rs; /* borrowed */
    struct prof_conn *pc;   /* owned */
    struct agent_reader rd;
};

static void *report_open(struct attach_sink *k)
{
    struct report_conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->rs = (struct report_sink *)k;
    c->pc = profile_conn_new(c->rs->p);
    if (!c->pc) {
        free(c);
        return NULL;
    }
    profile_conn_live(c->pc);
    agent_reader_init(&c->rd);
    return c;
}

static int report_line(void *ud, enum agent_line_status st, const char *line, size_t len)
{
    struct report_conn *c = ud;
    struct agent_msg m;
    char err[128];
    if (st == AGENT_LINE_OK && agent_msg_parse(line, len, &m, err, sizeof err) == 0) {
        if (profile_conn_apply(c->pc, &m)) c->rs->dropped++;
        agent_msg_clear(&m);
    } else {
        c->rs->dropped++; /* never silently: counted in the report's dropped line */
    }
    return 0;
}

static int report_emit(struct attach_sink *k, void *conn, const char *lines, size_t n)
{
    struct report_conn *c = conn;
    if (agent_reader_feed(&c->rd, lines, n, report_line, c) == -ENOMEM)
        ((struct report_sink *)k)->dropped++;
    return 0;
}

static void report_close(struct attach_sink *k, void *conn)
{
    (void)k;
    struct report_conn *c = conn;
    agent_reader_free(&c->rd);
    profile_conn_free(c->pc);
    free(c);
}

void report_sink_init(struct report_sink *rs, struct profile *p)
{
    memset(rs, 0, sizeof *rs);
    rs->sink.open = report_open;
    rs->sink.emit = report_emit;
    rs->sink.close = report_close;
    rs->p = p;
}
