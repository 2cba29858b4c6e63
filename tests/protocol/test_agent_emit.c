/* Unit tests for protocol/agent_emit.c: each builder's output parsed back
 * with the server's decoder (agent_wire.c) gives what was written (a round
 * trip); every key written is a row of agent_keys.h; a message that does
 * not fit the buffer's cap is taken back whole, leaving whole lines only. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "agent_emit.h"
#include "agent_wire.h"
#include "check.h"

/* 1 when key is a key or statistic of the table. */
static int key_known(const char *key)
{
    for (int k = 0; k < AGENT_NKEYS; k++)
        if (!strcmp(agent_key_name((enum agent_key)k), key)) return 1;
    for (int s = 0; s < AGENT_NSTATS; s++)
        if (!strcmp(agent_stat_wire((enum agent_stat)s), key)) return 1;
    return 0;
}

static void check_keys(const json_t *v)
{
    const char *k;
    json_t *x;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, x)
        {
            if (!key_known(k)) CHECK_FAIL("key \"%s\" is not in agent_keys.h", k);
            check_keys(x);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x) check_keys(x);
    }
}

/* Parses the one line b holds (newline-terminated), then empties b. */
static int parse(agent_buf_t *b, struct agent_msg *m)
{
    char err[200] = "";
    int ok = b->len > 0 && b->p[b->len - 1] == '\n' && !memchr(b->p, '\n', b->len - 1);
    CHECK(ok);
    int rc = agent_msg_parse(b->p, b->len - 1, m, err, sizeof err);
    if (rc) CHECK_FAIL("parse: %s in %.*s", err, (int)b->len, b->p);
    b->len = 0;
    if (!rc) check_keys(m->json);
    return rc;
}

static void test_hello(void)
{
    agent_buf_t b = {0};
    const char *argv[] = {"script.py", "a \"b\""};
    struct agent_hello h = {.pid = 1234,
                            .ppid = 1200,
                            .python = "3.12.1",
                            .executable = "/usr/bin/python3",
                            .cwd = "/home/u/p",
                            .main = "/home/u/p/script.py",
                            .clock = "attach",
                            .argv = argv,
                            .argc = 2,
                            .interval_ms = 10};
    CHECK_EQ(agent_emit_hello(&b, &h), 0);
    struct agent_msg m;
    if (parse(&b, &m) == 0) {
        CHECK_EQ(m.type, AGENT_MSG_HELLO);
        CHECK_EQ(m.u.hello.v, AGENT_WIRE_VERSION);
        CHECK(m.u.hello.pid == 1234 && m.u.hello.ppid == 1200);
        CHECK_STR(m.u.hello.python, "3.12.1");
        CHECK_STR(m.u.hello.executable, "/usr/bin/python3");
        CHECK_STR(m.u.hello.cwd, "/home/u/p");
        CHECK_STR(m.u.hello.main, "/home/u/p/script.py");
        CHECK_STR(m.u.hello.clock, "attach");
        CHECK_NEAR(m.u.hello.interval_ms, 10, 1e-9);
        CHECK_EQ(json_array_size(m.u.hello.argv), 2);
        CHECK_STR(json_string_value(json_array_get(m.u.hello.argv, 1)), "a \"b\"");
        agent_msg_clear(&m);
    }
    /* NULL strings are left out, not written as "" */
    struct agent_hello bare = {.pid = 1};
    CHECK_EQ(agent_emit_hello(&b, &bare), 0);
    if (parse(&b, &m) == 0) {
        CHECK(m.u.hello.python == NULL && m.u.hello.main == NULL);
        CHECK_EQ(json_array_size(m.u.hello.argv), 0);
        agent_msg_clear(&m);
    }
    agent_buf_free(&b);
}

static void test_str(void)
{
    agent_buf_t b = {0};
    /* quotes, a control character, a newline, valid UTF-8, and a name cut
     * mid-character (the kernel's 15-byte comm): still one valid line */
    const char s[] = "/p/\"x\"\\\t\n\xc3\xa9\xe2\x82";
    CHECK_EQ(agent_emit_str(&b, 7, s, sizeof s - 1), 0);
    struct agent_msg m;
    if (parse(&b, &m) == 0) {
        CHECK_EQ(m.type, AGENT_MSG_STR);
        CHECK_EQ(m.u.str.id, 7);
        CHECK_STR(m.u.str.s, "/p/\"x\"\\\t\n\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd");
        agent_msg_clear(&m);
    }
    /* overlong and surrogate encodings are not UTF-8 either */
    const char bad[] = "a\xc0\xafz\xed\xa0\x80";
    CHECK_EQ(agent_emit_str(&b, 8, bad, sizeof bad - 1), 0);
    if (parse(&b, &m) == 0) {
        CHECK_STR(m.u.str.s, "a\xef\xbf\xbd\xef\xbf\xbdz\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
        agent_msg_clear(&m);
    }
    agent_buf_free(&b);
}

static void test_stack(void)
{
    agent_buf_t b = {0};
    struct agent_emit_frame fr[] = {{7, 9, 12}, {7, 10, 30}, {8, 11, 0}};
    CHECK_EQ(agent_emit_stack(&b, 3, fr, 3), 0);
    struct agent_msg m;
    if (parse(&b, &m) == 0) {
        CHECK_EQ(m.type, AGENT_MSG_STACK);
        CHECK_EQ(m.u.stack.id, 3);
        CHECK_EQ(json_array_size(m.u.stack.fr), 3);
        struct agent_frame f;
        CHECK_EQ(agent_wire_frame(json_array_get(m.u.stack.fr, 1), &f), 0);
        CHECK(f.file == 7 && f.name == 10 && f.line == 30);
        agent_msg_clear(&m);
    }
    agent_buf_free(&b);
}

static void test_delta(void)
{
    agent_buf_t b = {0};
    agent_delta_t d;
    agent_delta_begin(&d, &b, 1.25, 412);
    struct agent_stat_vals st = {0};
    agent_stat_put(&st, AGENT_STAT_PY, 0.31);
    agent_stat_put(&st, AGENT_STAT_NAT, 0.02);
    agent_stat_put(&st, AGENT_STAT_SYS, 0);
    agent_stat_put(&st, AGENT_STAT_CPU, 0.33);
    agent_stat_put(&st, AGENT_STAT_N, 33);
    agent_delta_line(&d, 7, 12, &st);
    agent_delta_line(&d, 7, 13, &st);
    agent_delta_func(&d, 7, 9, 10, 20, &st);
    agent_delta_stack(&d, 3, 33, 0.33, 1234);
    agent_delta_stack(&d, 4, 1, 0.01, 0);
    agent_delta_thread(&d, 1234, "MainThread", 0.31, 0.02, NAN); /* NaN: written as 0 */
    CHECK_EQ(agent_delta_end(&d), 0);
    struct agent_msg m;
    if (parse(&b, &m) == 0) {
        CHECK_EQ(m.type, AGENT_MSG_DELTA);
        CHECK_NEAR(m.u.delta.ts, 1.25, 1e-9);
        CHECK_EQ(m.u.delta.samples, 412);
        CHECK_EQ(json_array_size(m.u.delta.lines), 2);
        struct agent_line_entry e;
        CHECK_EQ(agent_wire_line_entry(json_array_get(m.u.delta.lines, 1), &e), 0);
        CHECK(e.file == 7 && e.line == 13);
        CHECK_NEAR(e.st.v[AGENT_STAT_PY], 0.31, 1e-9);
        CHECK_NEAR(e.st.v[AGENT_STAT_CPU], 0.33, 1e-9);
        CHECK_NEAR(e.st.v[AGENT_STAT_N], 33, 0);
        CHECK(json_is_integer(json_object_get(json_array_get(m.u.delta.lines, 0), "n")));
        CHECK_EQ(json_array_size(m.u.delta.funcs), 1);
        CHECK_EQ(agent_wire_func_entry(json_array_get(m.u.delta.funcs, 0), &e), 0);
        CHECK(e.file == 7 && e.fn == 9 && e.line == 10 && e.last == 20);
        CHECK_NEAR(e.st.v[AGENT_STAT_NAT], 0.02, 1e-9);
        struct agent_stack_entry s;
        CHECK_EQ(json_array_size(m.u.delta.stacks), 2);
        CHECK_EQ(agent_wire_stack_entry(json_array_get(m.u.delta.stacks, 0), &s), 0);
        CHECK(s.id == 3 && s.samples == 33 && s.tid == 1234);
        CHECK_NEAR(s.seconds, 0.33, 1e-9);
        struct agent_thread_entry t;
        CHECK_EQ(agent_wire_thread_entry(json_array_get(m.u.delta.threads, 0), &t), 0);
        CHECK(t.tid == 1234 && !strcmp(t.name, "MainThread"));
        CHECK_NEAR(t.py, 0.31, 1e-9);
        CHECK_NEAR(t.sys, 0, 0);
        agent_msg_clear(&m);
    }
    agent_buf_free(&b);
}

static void test_delta_memory_gpu(void)
{
    agent_buf_t b = {0};
    agent_delta_t d;
    agent_delta_begin(&d, &b, 2.5, 0);
    struct agent_stat_vals st = {0};
    agent_stat_put(&st, AGENT_STAT_ALLOC, 6);
    agent_stat_put(&st, AGENT_STAT_FREED, 0.5);
    agent_stat_put(&st, AGENT_STAT_PEAK, 45);
    agent_delta_line(&d, 7, 12, &st);
    agent_delta_kept_pt(&d, 2.4, 1.5);
    agent_delta_kept_pt(&d, 2.45, -0.25);
    agent_delta_line(&d, 7, 14, &st);
    struct agent_mem_totals mt = {50.2, 51.7, 7, 12, 3};
    agent_delta_mem(&d, &mt);
    agent_delta_gpu(&d, 55, 1024.5);
    CHECK_EQ(agent_delta_end(&d), 0);
    struct agent_msg m;
    if (parse(&b, &m) == 0) {
        CHECK_EQ(m.u.delta.samples, 0);
        CHECK(m.u.delta.funcs == NULL && m.u.delta.threads == NULL); /* none opened */
        struct agent_line_entry e;
        json_t *l0 = json_array_get(m.u.delta.lines, 0);
        CHECK_EQ(agent_wire_line_entry(l0, &e), 0);
        CHECK_NEAR(e.st.v[AGENT_STAT_ALLOC], 6, 1e-9);
        CHECK_NEAR(e.st.v[AGENT_STAT_PEAK], 45, 1e-9);
        CHECK(!json_object_get(l0, "py")); /* only the stats given */
        json_t *pts = json_object_get(l0, "kept_pts");
        CHECK_EQ(json_array_size(pts), 2);
        CHECK_NEAR(json_number_value(json_array_get(json_array_get(pts, 1), 1)), -0.25, 1e-9);
        CHECK(!json_object_get(json_array_get(m.u.delta.lines, 1), "kept_pts"));
        json_t *mem = json_object_get(m.json, "mem");
        CHECK_NEAR(json_number_value(json_object_get(mem, "live_mb")), 50.2, 1e-9);
        CHECK_EQ(json_integer_value(json_object_get(mem, "peak_l")), 12);
        CHECK_EQ(json_integer_value(json_object_get(mem, "dropped")), 3);
        json_t *gpu = json_object_get(m.json, "gpu");
        CHECK_NEAR(json_number_value(json_object_get(gpu, "util")), 55, 1e-9);
        CHECK_NEAR(json_number_value(json_object_get(gpu, "mb")), 1024.5, 1e-9);
        agent_msg_clear(&m);
    }
    /* empty arrays on request; an entry after a later part is refused */
    agent_delta_begin(&d, &b, 3, 1);
    agent_delta_part(&d, AGENT_DELTA_LINES);
    agent_delta_part(&d, AGENT_DELTA_FUNCS);
    CHECK_EQ(agent_delta_end(&d), 0);
    if (parse(&b, &m) == 0) {
        CHECK(m.u.delta.lines && json_array_size(m.u.delta.lines) == 0);
        CHECK(m.u.delta.funcs && m.u.delta.stacks == NULL);
        agent_msg_clear(&m);
    }
    agent_delta_begin(&d, &b, 3, 1);
    agent_delta_stack(&d, 1, 1, 0.1, 0);
    agent_delta_line(&d, 7, 12, &st);
    agent_delta_kept_pt(&d, 1, 1);
    CHECK_EQ(agent_delta_end(&d), -EINVAL);
    CHECK_EQ(b.len, 0); /* taken back */
    agent_buf_free(&b);
}

static void test_now(void)
{
    agent_buf_t b = {0};
    agent_now_t w;
    struct agent_emit_frame fr[] = {{7, 9, 12}, {7, 10, 30}};
    agent_now_begin(&w, &b, 3.2);
    agent_now_thread(&w, 1234, "MainThread", AGENT_STATE_NATIVE, 2.3, fr, 2);
    agent_now_thread(&w, 1240, "w\"1", AGENT_STATE_SYSTEM, 0, NULL, 0);
    CHECK_EQ(agent_now_end(&w), 0);
    struct agent_msg m;
    if (parse(&b, &m) == 0) {
        CHECK_EQ(m.type, AGENT_MSG_NOW);
        CHECK_NEAR(m.u.now.ts, 3.2, 1e-9);
        CHECK_EQ(json_array_size(m.u.now.threads), 2);
        json_t *t = json_array_get(m.u.now.threads, 0);
        CHECK_EQ(json_integer_value(json_object_get(t, "tid")), 1234);
        CHECK_STR(json_string_value(json_object_get(t, "state")), "native");
        CHECK_NEAR(json_number_value(json_object_get(t, "since_s")), 2.3, 1e-9);
        struct agent_frame f;
        CHECK_EQ(agent_wire_frame(json_array_get(json_object_get(t, "fr"), 0), &f), 0);
        CHECK(f.file == 7 && f.name == 9 && f.line == 12);
        t = json_array_get(m.u.now.threads, 1);
        CHECK_STR(json_string_value(json_object_get(t, "name")), "w\"1");
        CHECK_STR(json_string_value(json_object_get(t, "state")), "system");
        agent_msg_clear(&m);
    }
    CHECK_STR(agent_state_name(AGENT_STATE_PYTHON), "python");
    CHECK_STR(agent_state_name(99), "system");
    agent_buf_free(&b);
}

static void test_end_log_error(void)
{
    agent_buf_t b = {0};
    struct agent_end e = {.ts = 12.5,
                          .reason = "exit",
                          .stats = 1,
                          .samples = 99,
                          .cost_us = 12.25,
                          .late_max_ms = 3};
    CHECK_EQ(agent_emit_end(&b, &e), 0);
    struct agent_msg m;
    if (parse(&b, &m) == 0) {
        CHECK_EQ(m.type, AGENT_MSG_END);
        CHECK_NEAR(m.u.end.ts, 12.5, 1e-9);
        CHECK_STR(m.u.end.reason, "exit");
        CHECK_EQ(json_integer_value(json_object_get(m.json, "samples")), 99);
        CHECK_NEAR(json_number_value(json_object_get(m.json, "cost_us")), 12.25, 1e-9);
        agent_msg_clear(&m);
    }
    struct agent_end plain = {.ts = 1, .reason = "stop"};
    CHECK_EQ(agent_emit_end(&b, &plain), 0);
    if (parse(&b, &m) == 0) {
        CHECK(!json_object_get(m.json, "samples"));
        agent_msg_clear(&m);
    }
    CHECK_EQ(agent_emit_log(&b, "warn", "300 threads: \"many\"\n"), 0);
    if (parse(&b, &m) == 0) {
        CHECK_EQ(m.type, AGENT_MSG_LOG);
        CHECK_STR(m.u.text.level, "warn");
        CHECK_STR(m.u.text.msg, "300 threads: \"many\"\n");
        agent_msg_clear(&m);
    }
    CHECK_EQ(agent_emit_error(&b, "no agent for this Python"), 0);
    if (parse(&b, &m) == 0) {
        CHECK_EQ(m.type, AGENT_MSG_ERROR);
        CHECK_STR(m.u.text.msg, "no agent for this Python");
        agent_msg_clear(&m);
    }
    CHECK_EQ(agent_emit_role(&b, "dask worker tcp://[::1]:4 \"é\""), 0);
    if (parse(&b, &m) == 0) {
        CHECK_EQ(m.type, AGENT_MSG_ROLE);
        CHECK_STR(m.u.role.name, "dask worker tcp://[::1]:4 \"é\"");
        agent_msg_clear(&m);
    }
    /* a role needs a name: an empty or missing one is a bad message */
    char err[128];
    CHECK(agent_msg_parse("{\"t\":\"role\",\"name\":\"\"}", 22, &m, err, sizeof err) < 0);
    CHECK(agent_msg_parse("{\"t\":\"role\"}", 12, &m, err, sizeof err) < 0);
    CHECK(agent_msg_parse("{\"t\":\"role\",\"name\":7}", 21, &m, err, sizeof err) < 0);
    agent_buf_free(&b);
}

/* Over the cap: the message is taken back whole, earlier lines stay. */
static void test_cap(void)
{
    agent_buf_t b = {.max = 200};
    CHECK_EQ(agent_emit_str(&b, 1, "/p/a.py", 7), 0);
    size_t kept = b.len;
    char big[300];
    memset(big, 'x', sizeof big);
    CHECK_EQ(agent_emit_str(&b, 2, big, sizeof big), -ENOSPC);
    CHECK_EQ(b.len, kept);
    CHECK(b.overflow);
    agent_delta_t d;
    agent_delta_begin(&d, &b, 1, 1);
    for (int i = 0; i < 20; i++)
        agent_delta_stack(&d, i + 1, 1, 0.5, 0);
    CHECK_EQ(agent_delta_end(&d), -ENOSPC);
    CHECK_EQ(b.len, kept);
    agent_now_t w;
    agent_now_begin(&w, &b, 1);
    for (int i = 0; i < 20; i++)
        agent_now_thread(&w, i, "t", AGENT_STATE_PYTHON, 0, NULL, 0);
    CHECK_EQ(agent_now_end(&w), -ENOSPC);
    CHECK_EQ(b.len, kept);
    struct agent_msg m;
    if (parse(&b, &m) == 0) { /* what is left is the first line, whole */
        CHECK_STR(m.u.str.s, "/p/a.py");
        agent_msg_clear(&m);
    }
    agent_buf_free(&b);
}

int main(void)
{
    test_hello();
    test_str();
    test_stack();
    test_delta();
    test_delta_memory_gpu();
    test_now();
    test_end_log_error();
    test_cap();
    return check_exit("agent_emit");
}
