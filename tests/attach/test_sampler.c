/* attach/sampler.c: the charging rule (attach_charge), then the step
 * itself with a fake sink that records every message: a real Python
 * child (HOTLINE_TEST_PYTHON, its main thread in a busy loop) opened by
 * the engine, ticked a few times, then killed. The stream must be one an
 * agent would send: hello first, every id a `str` or `stack` defined
 * before it is used, the main thread charged in each delta (but for a read
 * the target moved under: dropped and counted), and `end` once the
 * process is gone. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "engine.h"

/* ---- the fake sink: one JSON array of messages per stream -------------- */
struct fake_sink {
    struct attach_sink sink;
    int opened, closed;
};

static void *fake_open(struct attach_sink *k)
{
    ((struct fake_sink *)k)->opened++;
    return json_array();
}

static int fake_emit(struct attach_sink *k, void *conn, json_t *msg)
{
    (void)k;
    json_array_append_new(conn, msg);
    return 0;
}

static void fake_close(struct attach_sink *k, void *conn)
{
    ((struct fake_sink *)k)->closed++;
    json_decref(conn);
}

static void charging(void)
{
    /* running, decided Python: the interval is Python, CPU its busy share */
    struct attach_charge c = attach_charge(1, CAT_PY, 0.010, 0.005);
    CHECK_NEAR(c.py, 0.010, 1e-12);
    CHECK_NEAR(c.nat + c.sys, 0, 0);
    CHECK_NEAR(c.cpu, 0.005, 1e-12);
    /* running native: CPU never above the wall interval */
    c = attach_charge(1, CAT_NAT, 0.010, 0.020);
    CHECK_NEAR(c.nat, 0.010, 1e-12);
    CHECK_NEAR(c.py + c.sys, 0, 0);
    CHECK_NEAR(c.cpu, 0.010, 1e-12);
    /* waiting: system, whatever the probe said, no CPU */
    c = attach_charge(0, CAT_PY, 0.010, 0.003);
    CHECK_NEAR(c.sys, 0.010, 1e-12);
    CHECK_NEAR(c.py + c.nat + c.cpu, 0, 0);
    /* an empty interval charges nothing */
    c = attach_charge(1, CAT_PY, 0, 0);
    CHECK_NEAR(c.py + c.nat + c.sys + c.cpu, 0, 0);
}

static const char *type_of(json_t *m)
{
    const char *t = json_string_value(json_object_get(m, "t"));
    return t ? t : "";
}

/* every message of one stream checked in order; returns deltas seen */
static int check_stream(json_t *msgs, pid_t pid, long long dropped)
{
    json_t *strs = json_object(), *stacks = json_object(), *m;
    size_t i;
    int deltas = 0, main_charged = 0, string_file = 0;
    CHECK_STR(type_of(json_array_get(msgs, 0)), "hello");
    CHECK_EQ(json_integer_value(json_object_get(json_array_get(msgs, 0), "pid")), pid);
    json_array_foreach(msgs, i, m)
    {
        const char *t = type_of(m);
        char key[32];
        if (!strcmp(t, "str")) {
            snprintf(key, sizeof key, "%lld", json_integer_value(json_object_get(m, "id")));
            json_object_set(strs, key, json_object_get(m, "s"));
        } else if (!strcmp(t, "stack")) {
            json_t *fr;
            size_t k;
            json_array_foreach(json_object_get(m, "fr"), k, fr)
            {
                snprintf(key, sizeof key, "%lld", json_integer_value(json_array_get(fr, 0)));
                json_t *file = json_object_get(strs, key);
                CHECK(file != NULL);
                string_file |= file && !strcmp(json_string_value(file), "<string>");
                snprintf(key, sizeof key, "%lld", json_integer_value(json_array_get(fr, 1)));
                CHECK(json_object_get(strs, key) != NULL);
            }
            snprintf(key, sizeof key, "%lld", json_integer_value(json_object_get(m, "id")));
            json_object_set_new(stacks, key, json_true());
        } else if (!strcmp(t, "delta")) {
            deltas++;
            json_t *e;
            size_t k;
            json_array_foreach(json_object_get(m, "stacks"), k, e)
            {
                snprintf(key, sizeof key, "%lld", json_integer_value(json_array_get(e, 0)));
                CHECK(json_object_get(stacks, key) != NULL);
            }
            json_array_foreach(json_object_get(m, "lines"), k, e)
            {
                snprintf(key, sizeof key, "%lld", json_integer_value(json_object_get(e, "f")));
                CHECK(json_object_get(strs, key) != NULL);
            }
            json_array_foreach(json_object_get(m, "threads"), k, e)
            {
                double sum = json_real_value(json_object_get(e, "py")) +
                             json_real_value(json_object_get(e, "nat")) +
                             json_real_value(json_object_get(e, "sys"));
                if (json_integer_value(json_object_get(e, "tid")) == pid) {
                    CHECK_STR(json_string_value(json_object_get(e, "name")), "MainThread");
                    main_charged += sum > 0;
                }
            }
        } else if (i > 0) {
            CHECK_FAIL("unexpected message %s", t);
        }
    }
    CHECK(string_file); /* python -c: its frames are <string>'s */
    /* a read the target moved under is dropped (counted), never charged */
    CHECK_EQ(main_charged + dropped, deltas);
    json_decref(strs);
    json_decref(stacks);
    return deltas;
}

int main(void)
{
    charging();
    pid_t pid = fork();
    if (pid == 0) {
        execl(HOTLINE_TEST_PYTHON, HOTLINE_TEST_PYTHON, "-c",
              "def spin():\n    while True:\n        sum(range(1000))\nspin()\n", (char *)NULL);
        _exit(127);
    }
    CHECK(pid > 0);
    /* until the interpreter is up (its runtime initialised) */
    struct attach_proc probe;
    char why[512];
    int rc = -1;
    for (int i = 0; i < 500 && rc; i++) {
        rc = attach_open(&probe, pid, why, sizeof why);
        attach_close(&probe);
        if (rc) usleep(10000);
    }
    if (rc == ATTACH_EVERSION) { /* a build without this interpreter's layout */
        printf("attach_sampler: step not run: %s\n", why);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return 77;
    }
    CHECK_EQ(rc, 0);
    static volatile sig_atomic_t stop;
    struct fake_sink fs = {.sink = {.open = fake_open, .emit = fake_emit, .close = fake_close}};
    struct attach_engine *e = calloc(1, sizeof *e);
    CHECK(e && attach_sampler_init(&e->s, &fs.sink, &stop, 10.0, NULL, 0, NULL, 0) == 0);
    CHECK_EQ(attach_engine_open(e, pid, why, sizeof why), 0);
    CHECK(e->program[0] != 0); /* no script: the executable */
    struct attach_sproc *pr = e->s.procs[0];
    for (int i = 0; i < 5; i++) {
        usleep(10000);
        CHECK_EQ(attach_sampler_tick(&e->s, pr), 0);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CHECK_EQ(attach_sampler_tick(&e->s, pr), -ESRCH);
    attach_sampler_end(&e->s, pr, "exit");
    json_t *msgs = pr->conn;
    json_t *last = json_array_get(msgs, json_array_size(msgs) - 1);
    CHECK_STR(type_of(last), "end");
    CHECK_STR(json_string_value(json_object_get(last, "reason")), "exit");
    json_array_remove(msgs, json_array_size(msgs) - 1);
    CHECK(e->s.dropped < 5); /* a busy loop races with a read now and then, not always */
    CHECK_EQ(check_stream(msgs, pid, e->s.dropped), 5);
    attach_sampler_free(&e->s);
    free(e);
    CHECK_EQ(fs.opened, 1);
    CHECK_EQ(fs.closed, 1);
    return check_exit("attach_sampler");
}
