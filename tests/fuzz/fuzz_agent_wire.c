/* libFuzzer target: what the server reads from a profiled program's socket
 * or pipe (root reads it from another user's process in `attach --memory`):
 * protocol/agent_wire.c's line reader and decoder, then the profile store
 * those messages go into (profile_conn_apply), its `now` resolver, and the
 * profile's JSON, speedscope and HTML built from what arrived.
 *
 * Input layout: byte 0 is a control byte, the rest is the stream.
 *   bit 7 set   => the reader's default line cap; clear => a small cap,
 *                  16 + 4 * (bits 0..5), so that oversize lines are dropped;
 *   bits 0..7   => seed of the generator that picks the chunk sizes (1..64).
 * Oracles: nothing crashes, leaks or hits undefined behaviour (ASan/UBSan);
 * every line is within the cap and holds no '\n'; feeding the stream in one
 * call and in chunks gives the same lines; a decoded message's fields have
 * the types the header promises; the store's totals stay finite-or-not
 * without crashing the JSON writers. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_wire.h"
#include "store/export.h"
#include "store/html.h"
#include "store/profile.h"

struct run {
    uint64_t hash; /* FNV-1a over every line event, in order */
    size_t events, cap;
    struct profile *p;   /* NULL in the chunked pass: lines only */
    struct prof_conn *c; /* of p */
};

static void mix(struct run *t, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        t->hash = (t->hash ^ b[i]) * 0x100000001b3ull;
}

static void check_entries(const struct agent_msg *m)
{
    const json_t *a;
    struct agent_line_entry le;
    struct agent_stack_entry se;
    struct agent_thread_entry te;
    size_t i;
    if ((a = m->u.delta.lines) && !json_is_array(a)) abort();
    json_array_foreach(a, i, a)
    {
        (void)agent_wire_line_entry(a, &le);
    }
    if ((a = m->u.delta.funcs) && !json_is_array(a)) abort();
    json_array_foreach(a, i, a)
    {
        (void)agent_wire_func_entry(a, &le);
    }
    if ((a = m->u.delta.stacks) && !json_is_array(a)) abort();
    json_array_foreach(a, i, a)
    {
        (void)agent_wire_stack_entry(a, &se);
    }
    if ((a = m->u.delta.threads) && !json_is_array(a)) abort();
    json_array_foreach(a, i, a)
    {
        if (agent_wire_thread_entry(a, &te) == 0 && !te.name) abort();
    }
}

/* The typed reads the profile store uses (agent_msg_*): each agrees with
 * the per-entry check it wraps, kept points are finite and capped. */
static void check_typed(const struct agent_msg *m)
{
    static struct agent_kept_pt pts[AGENT_WIRE_MAX_KEPT_PTS];
    struct agent_line_entry le, le2;
    struct agent_msg_mem mem;
    size_t n = agent_msg_count(m, AGENT_ARR_LINES);
    if (n != json_array_size(m->u.delta.lines)) abort();
    for (size_t i = 0; i < n; i++) {
        int rc = agent_msg_line(m, i, &le);
        if (rc != agent_wire_line_entry(json_array_get(m->u.delta.lines, i), &le2)) abort();
        size_t np = agent_msg_kept_pts(m, i, pts, AGENT_WIRE_MAX_KEPT_PTS);
        if (np > AGENT_WIRE_MAX_KEPT_PTS) abort();
        for (size_t j = 0; j < np; j++)
            if (!isfinite(pts[j].ts) || !isfinite(pts[j].mb)) abort();
    }
    if (agent_msg_line(m, n, &le) != -EINVAL) abort(); /* past the end */
    if (!agent_msg_mem(m, &mem) && (mem.peak_file < 0 || mem.peak_line < 0)) abort();
}

/* now.threads[].fr: what the live marker resolves, checked one by one */
static void check_now(const struct agent_msg *m)
{
    const json_t *th, *f;
    struct agent_frame fr;
    size_t i, j;
    if (m->u.now.threads && !json_is_array(m->u.now.threads)) abort();
    json_array_foreach(m->u.now.threads, i, th)
    {
        json_array_foreach(json_object_get(th, "fr"), j, f)
        {
            (void)agent_wire_frame(f, &fr);
        }
    }
    /* the typed reads (profile_conn_resolve_now's) agree with the JSON */
    struct agent_now_entry t;
    if (agent_msg_count(m, AGENT_ARR_THREADS) != json_array_size(m->u.now.threads)) abort();
    for (i = 0; i < agent_msg_count(m, AGENT_ARR_THREADS); i++) {
        th = json_array_get(m->u.now.threads, i);
        if (agent_msg_now_thread(m, i, &t) != (json_is_object(th) ? 0 : -EINVAL)) abort();
        for (j = 0; j < t.nframes; j++)
            if (agent_msg_now_frame(m, i, j, &fr) !=
                agent_wire_frame(json_array_get(json_object_get(th, "fr"), j), &fr))
                abort();
    }
}

static void check_msg(struct run *t, const struct agent_msg *m)
{
    if (!json_is_object(m->json)) abort();
    switch (m->type) {
    case AGENT_MSG_HELLO:
        if (m->u.hello.argv && !json_is_array(m->u.hello.argv)) abort();
        break;
    case AGENT_MSG_STR:
        if (!m->u.str.s) abort();
        break;
    case AGENT_MSG_STACK: { /* "checked: array of [int,int,int]" */
        const json_t *f;
        struct agent_frame fr;
        size_t i;
        if (!json_is_array(m->u.stack.fr)) abort();
        json_array_foreach(m->u.stack.fr, i, f) if (agent_wire_frame(f, &fr)) abort();
        if (agent_msg_nframes(m) != json_array_size(m->u.stack.fr)) abort();
        for (i = 0; i < agent_msg_nframes(m); i++)
            if (agent_msg_frame(m, i, &fr)) abort();
        break;
    }
    case AGENT_MSG_DELTA:
        check_entries(m);
        check_typed(m);
        break;
    case AGENT_MSG_NOW:
        check_now(m);
        break;
    case AGENT_MSG_END:
        if (!m->u.end.reason) abort();
        break;
    case AGENT_MSG_ERROR:
    case AGENT_MSG_LOG:
        if (!m->u.text.msg) abort();
        break;
    case AGENT_MSG_ROLE:
        if (!m->u.role.name || !m->u.role.name[0]) abort();
        break;
    case AGENT_MSG_CELL:
        if (!m->u.cell.file || !*m->u.cell.file || !(m->u.cell.wall_s >= 0)) abort();
        break;
    default:
        break;
    }
    if (!t->p) return;
    (void)profile_conn_apply(t->c, m);
    if (m->type == AGENT_MSG_NOW) json_decref(profile_conn_resolve_now(t->c, m));
}

static int on_line(void *ud, enum agent_line_status st, const char *line, size_t len)
{
    struct run *t = ud;
    int s = (int)st;
    t->events++;
    mix(t, &s, sizeof s);
    mix(t, &len, sizeof len);
    if (st == AGENT_LINE_OVERSIZE) {
        if (len <= t->cap) abort();
        return 0;
    }
    if (st != AGENT_LINE_OK || len > t->cap || memchr(line, '\n', len)) abort();
    mix(t, line, len);
    if (!t->p) return 0;
    struct agent_msg m;
    char err[256];
    if (agent_msg_parse(line, len, &m, err, sizeof err) == 0) {
        check_msg(t, &m);
        agent_msg_clear(&m);
    } else if (!err[0]) {
        abort(); /* a refusal says why */
    }
    return 0;
}

/* What the server and `hotline run` build from the store afterwards. */
static void use_store(struct profile *p)
{
    json_decref(profile_to_json(p));
    json_decref(export_speedscope(p, "fuzz", EXPORT_THREADS));
    json_decref(html_report_data(p));
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (f) {
        export_collapsed(p, f);
        fclose(f);
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct agent_reader r;
    struct run whole = {0xcbf29ce484222325ull, 0, 0, NULL, NULL}, split;
    if (size < 1) return 0;
    size_t cap = (data[0] & 0x80) ? 0 : 16 + 4 * (size_t)(data[0] & 0x3f);
    uint32_t seed = 0x9e3779b9u ^ data[0];
    data++, size--;

    whole.p = profile_new();
    whole.c = whole.p ? profile_conn_new(whole.p) : NULL;
    if (!whole.c) abort();
    agent_reader_init(&r);
    if (cap) r.max_line = cap;
    whole.cap = r.max_line;
    split = whole;
    split.p = NULL;
    split.c = NULL;
    if (agent_reader_feed(&r, (const char *)data, size, on_line, &whole)) abort();
    size_t pending = agent_reader_pending(&r);
    agent_reader_free(&r);

    agent_reader_init(&r);
    if (cap) r.max_line = cap;
    for (size_t i = 0; i < size;) {
        seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
        size_t n = 1 + seed % 64;
        if (n > size - i) n = size - i;
        if (agent_reader_feed(&r, (const char *)data + i, n, on_line, &split)) abort();
        i += n;
    }
    if (agent_reader_pending(&r) != pending) abort();
    agent_reader_free(&r);
    if (whole.hash != split.hash || whole.events != split.events) abort();

    profile_conn_free(whole.c);
    use_store(whole.p);
    profile_free(whole.p);
    return 0;
}
