/* load_any: a saved profile or a wire stream as a store (see load_any.h). */
#include "store/load_any.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_wire.h"

#define LOAD_FIRST_LINE (1 << 20)

struct wire_load {
    struct profile *p;
    struct prof_conn *c;
    int ended, bad;
    double last_ts;
};

static int wire_line(void *ud, enum agent_line_status st, const char *line, size_t len)
{
    struct wire_load *w = ud;
    struct agent_msg m;
    if (st != AGENT_LINE_OK || agent_msg_parse(line, len, &m, NULL, 0)) {
        w->bad++;
        return 0;
    }
    profile_conn_apply(w->c, &m);
    if (m.type == AGENT_MSG_HELLO) {
        if (m.u.hello.main && !w->p->meta.program)
            profile_set_str(&w->p->meta.program, m.u.hello.main);
        if (m.u.hello.argv && !w->p->meta.argv) {
            json_t *a = json_array();
            for (size_t i = 1; i < json_array_size(m.u.hello.argv); i++)
                json_array_append(a, json_array_get(m.u.hello.argv, i));
            w->p->meta.argv = a;
        }
    } else if (m.type == AGENT_MSG_DELTA && m.u.delta.ts > w->last_ts) {
        w->last_ts = m.u.delta.ts;
    } else if (m.type == AGENT_MSG_END) {
        w->ended = 1;
        if (m.u.end.ts > w->last_ts) w->last_ts = m.u.end.ts;
    }
    agent_msg_clear(&m);
    return 0;
}

static struct profile *load_wire(FILE *f, const atomic_int *cancel, int *bad, char *err,
                                 size_t errlen)
{
    struct wire_load w = {profile_new(), NULL, 0, 0, 0};
    if (!w.p || !(w.c = profile_conn_new(w.p))) {
        profile_free(w.p);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    struct agent_reader r;
    agent_reader_init(&r);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0 && !(cancel && atomic_load(cancel)))
        agent_reader_feed(&r, buf, n, wire_line, &w);
    agent_reader_free(&r);
    profile_conn_free(w.c);
    w.p->meta.elapsed_s = w.last_ts;
    profile_set_str(&w.p->meta.reason, w.ended
                                           ? "ended normally"
                                           : "no end record (crashed, killed or still running)");
    if (bad) *bad = w.bad;
    if (cancel && atomic_load(cancel)) {
        profile_free(w.p);
        snprintf(err, errlen, "cancelled");
        return NULL;
    }
    return w.p;
}

struct profile *profile_load_any(const char *path, int flags, const atomic_int *cancel, int *bad,
                                 char *err, size_t errlen)
{
    if (bad) *bad = 0;
    /* PROFILE_READ_REGULAR: a FIFO or a device must not block the open */
    int fd = open(path, O_RDONLY | O_CLOEXEC | (flags & PROFILE_READ_NOFOLLOW ? O_NOFOLLOW : 0) |
                            (flags & PROFILE_READ_REGULAR ? O_NONBLOCK : 0));
    struct stat st;
    if (fd >= 0 && (flags & PROFILE_READ_REGULAR) && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
        close(fd);
        snprintf(err, errlen, "%s: not a regular file", path);
        return NULL;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, errno == ELOOP ? "a symbolic link" : strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    /* A wire stream starts with a one-line object carrying "t" (a hello:
     * short). Only LOAD_FIRST_LINE bytes are looked at: a profile saved on
     * one line of any length is not read whole twice. */
    char *line = malloc(LOAD_FIRST_LINE);
    int wire = 0;
    if (line && fgets(line, LOAD_FIRST_LINE, f)) {
        json_t *o = json_loads(line, 0, NULL);
        wire = json_is_object(o) && json_is_string(json_object_get(o, "t"));
        json_decref(o);
    }
    free(line);
    struct profile *p;
    if (wire) {
        rewind(f);
        p = load_wire(f, cancel, bad, err, errlen);
    } else {
        /* the same caps as a workspace's saved profile (size, lines) */
        p = profile_load_cancellable(path, flags, cancel, err, errlen);
    }
    fclose(f);
    return p;
}
