/* Unit tests of protocol/agent_wire: the line reader (lines split at every
 * byte boundary, oversize lines dropped and reported while reading goes on,
 * EOF mid-line) and the message decoder (every type, bad JSON, wrong field
 * types, unknown types and fields ignored). */
#include <errno.h>
#include <stdlib.h>

#include "agent_wire.h"
#include "check.h"

struct collect {
    char lines[16][128];
    size_t lens[16];
    int n, oversize;
    size_t oversize_len;
};

static int on_line(void *ud, enum agent_line_status st, const char *line, size_t len)
{
    struct collect *c = ud;
    if (st == AGENT_LINE_OVERSIZE) {
        c->oversize++;
        c->oversize_len = len;
        return 0;
    }
    if (c->n < 16 && len < 128) {
        memcpy(c->lines[c->n], line, len);
        c->lines[c->n][len] = 0;
        c->lens[c->n] = len;
    }
    c->n++;
    return 0;
}

static void test_splits(void)
{
    const char *stream = "{\"t\":\"a\"}\n\n{\"t\":\"bb\"}\nxyz\n{\"t\":\"tail\"}";
    size_t n = strlen(stream);
    /* every split point, and every byte fed on its own */
    for (size_t cut = 0; cut <= n; cut++) {
        struct agent_reader r;
        struct collect c = {0};
        agent_reader_init(&r);
        CHECK(agent_reader_feed(&r, stream, cut, on_line, &c) == 0);
        CHECK(agent_reader_feed(&r, stream + cut, n - cut, on_line, &c) == 0);
        CHECK(c.n == 4);
        CHECK_STR(c.lines[0], "{\"t\":\"a\"}");
        CHECK(c.lens[1] == 0);
        CHECK_STR(c.lines[2], "{\"t\":\"bb\"}");
        CHECK_STR(c.lines[3], "xyz");
        CHECK(agent_reader_pending(&r) == strlen("{\"t\":\"tail\"}"));
        agent_reader_free(&r);
    }
    struct agent_reader r;
    struct collect c = {0};
    agent_reader_init(&r); /* empty lines before any other: nothing buffered yet */
    CHECK(agent_reader_feed(&r, "\n\n", 2, on_line, &c) == 0);
    CHECK(c.n == 2 && c.lens[0] == 0 && c.lens[1] == 0);
    agent_reader_free(&r);
    memset(&c, 0, sizeof c);
    agent_reader_init(&r);
    for (size_t i = 0; i < n; i++)
        agent_reader_feed(&r, stream + i, 1, on_line, &c);
    CHECK(c.n == 4);
    CHECK_STR(c.lines[3], "xyz");
    agent_reader_free(&r);
}

static void test_oversize(void)
{
    struct agent_reader r;
    struct collect c = {0};
    agent_reader_init(&r);
    r.max_line = 16;
    CHECK(agent_reader_feed(&r, "short\n", 6, on_line, &c) == 0);
    /* 40-byte line in three pieces, then a normal one in the same chunk */
    CHECK(agent_reader_feed(&r, "0123456789", 10, on_line, &c) == 0);
    CHECK(agent_reader_feed(&r, "0123456789012345678", 19, on_line, &c) == 0);
    CHECK(agent_reader_feed(&r, "01234567890\nafter\n", 18, on_line, &c) == 0);
    CHECK(c.oversize == 1);
    CHECK(c.oversize_len == 40);
    CHECK(c.n == 2);
    CHECK_STR(c.lines[0], "short");
    CHECK_STR(c.lines[1], "after");
    /* an empty line right after the drop freed the buffer (fuzz_agent_wire:
     * r->buf + 0 on NULL, undefined behaviour that UBSan reports) */
    CHECK(agent_reader_feed(&r, "0123456789abcdefXYZ\n\n", 21, on_line, &c) == 0);
    CHECK(c.oversize == 2 && c.n == 3 && c.lens[2] == 0);
    c.oversize = 1;
    c.n = 2;
    /* exactly at the cap is fine */
    CHECK(agent_reader_feed(&r, "0123456789abcdef\n", 17, on_line, &c) == 0);
    CHECK(c.n == 3 && c.oversize == 1);
    agent_reader_free(&r);

    /* the real cap: 16 MiB + 1 bytes is dropped, reading goes on */
    agent_reader_init(&r);
    memset(&c, 0, sizeof c);
    size_t big = AGENT_WIRE_MAX_LINE + 1;
    char *buf = malloc(big + 16);
    memset(buf, 'x', big);
    memcpy(buf + big, "\nok\n", 4);
    CHECK(agent_reader_feed(&r, buf, big + 4, on_line, &c) == 0);
    CHECK(c.oversize == 1 && c.oversize_len == big);
    CHECK(c.n == 1);
    CHECK_STR(c.lines[0], "ok");
    free(buf);
    agent_reader_free(&r);
}

static int stop_cb(void *ud, enum agent_line_status st, const char *line, size_t len)
{
    (void)st, (void)line, (void)len;
    return ++*(int *)ud == 2 ? 7 : 0;
}

static void test_stop(void)
{
    struct agent_reader r;
    int n = 0;
    agent_reader_init(&r);
    CHECK(agent_reader_feed(&r, "a\nb\nc\n", 6, stop_cb, &n) == 7);
    CHECK(n == 2);
    agent_reader_free(&r);
}

static int parse(const char *s, struct agent_msg *m)
{
    char err[160];
    return agent_msg_parse(s, strlen(s), m, err, sizeof err);
}

static void test_messages(void)
{
    struct agent_msg m;
    CHECK(parse("{\"t\":\"hello\",\"v\":1,\"pid\":42,\"ppid\":1,\"python\":\"3.12.1\","
                "\"argv\":[\"a.py\",\"x\"],\"main\":\"/p/a.py\",\"interval_ms\":10,\"new\":[1]}",
                &m) == 0);
    CHECK(m.type == AGENT_MSG_HELLO && m.u.hello.v == 1 && m.u.hello.pid == 42);
    CHECK_STR(m.u.hello.python, "3.12.1");
    CHECK_STR(m.u.hello.main, "/p/a.py");
    CHECK(json_array_size(m.u.hello.argv) == 2);
    CHECK_NEAR(m.u.hello.interval_ms, 10, 1e-9);
    agent_msg_clear(&m);

    CHECK(parse("{\"t\":\"str\",\"id\":7,\"s\":\"/p/a.py\"}", &m) == 0);
    CHECK(m.type == AGENT_MSG_STR && m.u.str.id == 7);
    CHECK_STR(m.u.str.s, "/p/a.py");
    agent_msg_clear(&m);

    CHECK(parse("{\"t\":\"stack\",\"id\":3,\"fr\":[[1,2,10],[1,3,20]]}", &m) == 0);
    CHECK(m.type == AGENT_MSG_STACK && json_array_size(m.u.stack.fr) == 2);
    agent_msg_clear(&m);

    CHECK(parse("{\"t\":\"delta\",\"ts\":1.25,\"samples\":412,\"lines\":[{\"f\":7,\"l\":12,"
                "\"py\":0.31,\"nat\":0.02,\"sys\":0,\"cpu\":0.33,\"n\":33,\"alloc_mb\":1}],"
                "\"stacks\":[[3,33,0.33],[4,2,0.02,1234],[5,1,0.01,0]]}",
                &m) == 0);
    CHECK(m.type == AGENT_MSG_DELTA && m.u.delta.samples == 412);
    CHECK(m.u.delta.funcs == NULL && m.u.delta.threads == NULL);
    struct agent_line_entry e;
    CHECK(agent_wire_line_entry(json_array_get(m.u.delta.lines, 0), &e) == 0);
    CHECK(e.file == 7 && e.line == 12);
    CHECK_NEAR(e.st.v[AGENT_STAT_PY], 0.31, 1e-12);
    CHECK_NEAR(e.st.v[AGENT_STAT_N], 33, 1e-12);
    struct agent_stack_entry se;
    CHECK(agent_wire_stack_entry(json_array_get(m.u.delta.stacks, 0), &se) == 0);
    CHECK(se.id == 3 && se.samples == 33);
    CHECK_EQ(se.tid, 0); /* three elements (an older agent): threads not told apart */
    CHECK(agent_wire_stack_entry(json_array_get(m.u.delta.stacks, 1), &se) == 0);
    CHECK(se.id == 4 && se.samples == 2 && se.tid == 1234);
    CHECK_NEAR(se.seconds, 0.02, 1e-12);
    CHECK(agent_wire_stack_entry(json_array_get(m.u.delta.stacks, 2), &se) == 0);
    CHECK(se.id == 5 && se.tid == 0);
    agent_msg_clear(&m);

    CHECK(parse("{\"t\":\"end\",\"ts\":12.5,\"reason\":\"exit\"}", &m) == 0);
    CHECK(m.type == AGENT_MSG_END);
    CHECK_STR(m.u.end.reason, "exit");
    agent_msg_clear(&m);

    CHECK(parse("{\"t\":\"error\",\"msg\":\"no agent for 3.14\"}", &m) == 0);
    CHECK(m.type == AGENT_MSG_ERROR);
    CHECK_STR(m.u.text.msg, "no agent for 3.14");
    agent_msg_clear(&m);

    CHECK(parse("{\"t\":\"now\",\"ts\":3.2,\"threads\":[]}", &m) == 0);
    CHECK(m.type == AGENT_MSG_NOW);
    agent_msg_clear(&m);

    /* unknown types are accepted and typed UNKNOWN */
    CHECK(parse("{\"t\":\"gpu\",\"whatever\":{}}", &m) == 0);
    CHECK(m.type == AGENT_MSG_UNKNOWN && m.json);
    agent_msg_clear(&m);
}

static void test_bad(void)
{
    struct agent_msg m;
    const char *bad[] = {
        "not json",
        "",
        "[1,2]",
        "{\"no_t\":1}",
        "{\"t\":5}",
        "{\"t\":\"str\",\"id\":\"7\",\"s\":\"x\"}",
        "{\"t\":\"str\",\"id\":0,\"s\":\"x\"}",
        "{\"t\":\"str\",\"id\":1,\"s\":3}",
        "{\"t\":\"stack\",\"id\":1,\"fr\":[[1,2]]}",
        "{\"t\":\"stack\",\"id\":1,\"fr\":[[1,\"a\",3]]}",
        "{\"t\":\"stack\",\"id\":1}",
        "{\"t\":\"delta\",\"lines\":{}}",
        "{\"t\":\"delta\",\"samples\":-1}",
        "{\"t\":\"hello\",\"pid\":\"x\"}",
        "{\"t\":\"hello\",\"argv\":[1]}",
        "{\"t\":\"end\",\"reason\":5}",
        "{\"t\":\"a\",\"t\":\"b\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[160] = "";
        int rc = agent_msg_parse(bad[i], strlen(bad[i]), &m, err, sizeof err);
        if (rc != -EINVAL || !err[0] || m.json)
            fprintf(stderr, "accepted bad message %zu: %s\n", i, bad[i]);
        CHECK(rc == -EINVAL && err[0] && !m.json);
    }
    /* entries are checked one by one */
    struct agent_line_entry e;
    json_t *j = json_loads("{\"f\":1,\"l\":2,\"py\":\"x\"}", 0, NULL);
    CHECK(agent_wire_line_entry(j, &e) == -EINVAL);
    json_decref(j);
    j = json_loads("{\"f\":1,\"l\":2,\"py\":-1}", 0, NULL);
    CHECK(agent_wire_line_entry(j, &e) == -EINVAL);
    json_decref(j);
    j = json_loads("{\"f\":1,\"fn\":2,\"first\":5,\"last\":3}", 0, NULL);
    CHECK(agent_wire_func_entry(j, &e) == 0 && e.last == 5);
    json_decref(j);
    j = json_loads("[0,1,1.0]", 0, NULL);
    struct agent_stack_entry se;
    CHECK(agent_wire_stack_entry(j, &se) == -EINVAL);
    json_decref(j);
    /* a tid must be a non-negative integer; a fifth element is a newer agent's */
    const char *bad_tid[] = {"[1,1,1.0,-3]", "[1,1,1.0,\"7\"]", "[1,1,1.0,2.5]"};
    for (size_t i = 0; i < sizeof bad_tid / sizeof *bad_tid; i++) {
        j = json_loads(bad_tid[i], 0, NULL);
        CHECK(agent_wire_stack_entry(j, &se) == -EINVAL);
        json_decref(j);
    }
    j = json_loads("[1,1,1.0,9,\"future\"]", 0, NULL);
    CHECK(agent_wire_stack_entry(j, &se) == 0 && se.tid == 9);
    json_decref(j);
}

/* agent_msg_parse owns the decoded object on success and frees it on
 * failure past the JSON itself: not an object, no "t", a bad field
 * (ASan/valgrind see a leak or a double free otherwise). Every producer,
 * hotline attach's report included, goes through it: no message is handed
 * over as JSON inside a process. */
static void test_owns(void)
{
    struct agent_msg m;
    char err[160] = "";
    const char *ok = "{\"t\":\"str\",\"id\":7,\"s\":\"/p/a.py\"}";
    CHECK(agent_msg_parse(ok, strlen(ok), &m, err, sizeof err) == 0 && m.type == AGENT_MSG_STR &&
          m.u.str.id == 7 && !strcmp(m.u.str.s, "/p/a.py") && json_is_object(m.json));
    agent_msg_clear(&m);
    CHECK(m.json == NULL);
    const char *bad[] = {"[1,2]", "{\"no_t\":1}", "{\"t\":\"str\",\"id\":0,\"s\":\"x\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = 0;
        CHECK(agent_msg_parse(bad[i], strlen(bad[i]), &m, err, sizeof err) == -EINVAL && err[0] &&
              !m.json);
    }
}

static void test_stats(void)
{
    struct agent_stats a = {{0}}, b = {{0}};
    a.v[AGENT_STAT_PY] = 1;
    b.v[AGENT_STAT_PY] = 2;
    b.v[AGENT_STAT_SYS] = 0.5;
    agent_stats_merge(&a, &b);
    CHECK_NEAR(a.v[AGENT_STAT_PY], 3, 1e-12);
    CHECK_NEAR(agent_stats_time(&a), 3.5, 1e-12);
    for (int i = 0; i < AGENT_NSTATS; i++)
        CHECK(agent_stat_descs[i].wire && agent_stat_descs[i].json);
}

/* A checked delta and stack read typed (what the profile store reads):
 * entries decoded one at a time, bad ones -EINVAL, kept_pts with malformed
 * points skipped and a cap, `mem` with its peak place. */
static void test_typed(void)
{
    struct agent_msg m;
    CHECK(parse("{\"t\":\"delta\",\"ts\":2,\"lines\":[{\"f\":7,\"l\":12,\"alloc_mb\":3,"
                "\"kept_pts\":[[1.5,1],[\"x\",2],[1.75],[1.9,2.5]]},{\"f\":0,\"l\":1}],"
                "\"funcs\":[{\"f\":7,\"fn\":8,\"first\":10,\"last\":20,\"py\":1}],"
                "\"stacks\":[[3,5,0.05,9]],\"threads\":[{\"tid\":9,\"name\":\"w\",\"py\":0.5}],"
                "\"mem\":{\"live_mb\":10,\"peak_mb\":12,\"peak_f\":7,\"peak_l\":12}}",
                &m) == 0);
    CHECK_EQ(agent_msg_count(&m, AGENT_ARR_LINES), 2);
    CHECK_EQ(agent_msg_count(&m, AGENT_ARR_FUNCS), 1);
    CHECK_EQ(agent_msg_count(&m, AGENT_ARR_STACKS), 1);
    CHECK_EQ(agent_msg_count(&m, AGENT_ARR_THREADS), 1);
    struct agent_line_entry e;
    CHECK(agent_msg_line(&m, 0, &e) == 0 && e.file == 7 && e.line == 12);
    CHECK_NEAR(e.st.v[AGENT_STAT_ALLOC], 3, 1e-12);
    CHECK(agent_msg_line(&m, 1, &e) == -EINVAL); /* file id 0 */
    CHECK(agent_msg_line(&m, 2, &e) == -EINVAL); /* past the end */
    struct agent_kept_pt pts[4];
    CHECK_EQ(agent_msg_kept_pts(&m, 0, pts, 4), 2); /* ["x",2] and [1.75] skipped */
    CHECK(pts[0].ts == 1.5 && pts[0].mb == 1 && pts[1].ts == 1.9 && pts[1].mb == 2.5);
    CHECK_EQ(agent_msg_kept_pts(&m, 0, pts, 1), 1); /* at most n */
    CHECK_EQ(agent_msg_kept_pts(&m, 1, pts, 4), 0); /* none */
    CHECK(agent_msg_func(&m, 0, &e) == 0 && e.fn == 8 && e.line == 10 && e.last == 20);
    struct agent_stack_entry se;
    CHECK(agent_msg_stack(&m, 0, &se) == 0 && se.id == 3 && se.samples == 5 && se.tid == 9);
    struct agent_thread_entry te;
    CHECK(agent_msg_thread(&m, 0, &te) == 0 && te.tid == 9 && !strcmp(te.name, "w"));
    struct agent_msg_mem mem;
    CHECK(agent_msg_mem(&m, &mem) == 0 && mem.live_mb == 10 && mem.peak_mb == 12 &&
          mem.peak_file == 7 && mem.peak_line == 12);
    CHECK_EQ(agent_msg_nframes(&m), 0); /* not a stack */
    agent_msg_clear(&m);

    /* a mem without both numbers is absent; a bad peak place reads as unknown */
    CHECK(parse("{\"t\":\"delta\",\"mem\":{\"live_mb\":1}}", &m) == 0);
    CHECK(agent_msg_mem(&m, &mem) == -ENOENT);
    CHECK_EQ(agent_msg_count(&m, AGENT_ARR_LINES), 0);
    agent_msg_clear(&m);
    CHECK(parse("{\"t\":\"delta\",\"mem\":{\"live_mb\":1,\"peak_mb\":2,\"peak_f\":\"a\","
                "\"peak_l\":-4}}",
                &m) == 0);
    CHECK(agent_msg_mem(&m, &mem) == 0 && mem.peak_file == 0 && mem.peak_line == 0);
    agent_msg_clear(&m);

    /* only the first AGENT_WIRE_MAX_KEPT_PTS elements of kept_pts are read */
    json_t *o =
        json_pack("{s:s,s:[{s:i,s:i,s:[]}]}", "t", "delta", "lines", "f", 1, "l", 1, "kept_pts");
    json_t *kp = json_object_get(json_array_get(json_object_get(o, "lines"), 0), "kept_pts");
    for (int i = 0; i < AGENT_WIRE_MAX_KEPT_PTS + 10; i++)
        json_array_append_new(kp, json_pack("[f,f]", i * 0.001, 1.0));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    CHECK(text && parse(text, &m) == 0);
    free(text);
    static struct agent_kept_pt many[AGENT_WIRE_MAX_KEPT_PTS + 10];
    CHECK_EQ(agent_msg_kept_pts(&m, 0, many, AGENT_WIRE_MAX_KEPT_PTS + 10),
             AGENT_WIRE_MAX_KEPT_PTS);
    agent_msg_clear(&m);

    CHECK(parse("{\"t\":\"stack\",\"id\":3,\"fr\":[[1,2,10],[1,3,20]]}", &m) == 0);
    struct agent_frame f;
    CHECK_EQ(agent_msg_nframes(&m), 2);
    CHECK(agent_msg_frame(&m, 1, &f) == 0 && f.file == 1 && f.name == 3 && f.line == 20);
    CHECK(agent_msg_frame(&m, 2, &f) == -EINVAL);
    CHECK_EQ(agent_msg_count(&m, AGENT_ARR_LINES), 0); /* not a delta */
    agent_msg_clear(&m);

    /* a `now`: threads with what they have, frames checked one by one */
    CHECK(parse("{\"t\":\"now\",\"ts\":1,\"threads\":[{\"tid\":5,\"name\":\"M\","
                "\"state\":\"native\",\"since_s\":0.5,\"fr\":[[1,2,3],[1,-2,3],[4,5,6]]},"
                "7,{\"tid\":\"x\",\"state\":1}]}",
                &m) == 0);
    CHECK_EQ(agent_msg_count(&m, AGENT_ARR_THREADS), 3);
    CHECK_EQ(agent_msg_count(&m, AGENT_ARR_LINES), 0);
    struct agent_now_entry nt;
    CHECK(agent_msg_now_thread(&m, 0, &nt) == 0 && nt.has_tid && nt.tid == 5 && nt.has_since &&
          nt.since_s == 0.5 && nt.nframes == 3);
    CHECK(nt.name && !strcmp(nt.name, "M") && nt.state && !strcmp(nt.state, "native"));
    CHECK(agent_msg_now_frame(&m, 0, 0, &f) == 0 && f.file == 1 && f.name == 2 && f.line == 3);
    CHECK(agent_msg_now_frame(&m, 0, 1, &f) == -EINVAL); /* negative id */
    CHECK(agent_msg_now_frame(&m, 0, 2, &f) == 0 && f.line == 6);
    CHECK(agent_msg_now_thread(&m, 1, &nt) == -EINVAL); /* not an object */
    CHECK(agent_msg_now_frame(&m, 1, 0, &f) == -EINVAL);
    CHECK(agent_msg_now_thread(&m, 2, &nt) == 0 && !nt.has_tid && !nt.state && !nt.name &&
          !nt.has_since && nt.nframes == 0); /* wrong types read as absent */
    CHECK(agent_msg_now_thread(&m, 3, &nt) == -EINVAL);
    agent_msg_clear(&m);
}

int main(void)
{
    test_splits();
    test_oversize();
    test_stop();
    test_messages();
    test_bad();
    test_owns();
    test_stats();
    test_typed();
    return check_exit("test_agent_wire");
}
