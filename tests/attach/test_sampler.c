/* attach/sampler.c: what it feeds the charging rule (attach_charge_in ->
 * sampling/charge.h), then the step itself with a fake sink that records
 * every line: a real Python child (HOTLINE_TEST_PYTHON, its main thread
 * in a busy loop under `python -c`) opened by the engine, ticked a few
 * times, then killed. The stream must be one an agent would send: every
 * line one the server's decoder takes (agent_msg_parse), hello first,
 * every id a `str` or `stack` defined before it is used, the main thread
 * charged in each delta (but for a read the target moved under: dropped
 * and counted), and `end` once the process is gone. The agent's rule for
 * a stack with no frame of the program: `<string>` is not the program's
 * by default (sampling/agent_paths.h), so no line is charged while the
 * thread and its stack get the time; with --include '<string>' its line
 * is charged. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_wire.h"
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

/* whole lines only, each one the server's decoder takes */
static int fake_emit(struct attach_sink *k, void *conn, const char *lines, size_t n)
{
    (void)k;
    CHECK(n > 0 && lines[n - 1] == '\n');
    for (const char *p = lines, *end = lines + n; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;
        struct agent_msg m;
        char err[128];
        int rc = agent_msg_parse(p, (size_t)(nl - p), &m, err, sizeof err);
        if (rc) CHECK_FAIL("a line the decoder refuses (%s): %.*s", err, (int)(nl - p), p);
        if (!rc) agent_msg_clear(&m);
        json_t *o = json_loadb(p, (size_t)(nl - p), 0, NULL);
        CHECK(o != NULL);
        if (o) json_array_append_new(conn, o);
        p = nl + 1;
    }
    return 0;
}

static void fake_close(struct attach_sink *k, void *conn)
{
    ((struct fake_sink *)k)->closed++;
    json_decref(conn);
}

/* one interval as attach charges it */
static charge_t charged(int running, int cat, double dw, double dc)
{
    charge_in_t in = attach_charge_in(running, cat, dw, dc);
    charge_t c;
    charge_interval(&in, &c);
    return c;
}

static void charging(void)
{
    /* running, decided Python: the interval is Python, CPU its busy share */
    charge_t c = charged(1, CAT_PY, 0.010, 0.005);
    CHECK_NEAR(c.py, 0.010, 1e-12);
    CHECK_NEAR(c.nat + c.sys, 0, 0);
    CHECK_NEAR(c.cpu, 0.005, 1e-12);
    CHECK_EQ(c.state, CAT_PY);
    /* running native: CPU never above the wall interval */
    c = charged(1, CAT_NAT, 0.010, 0.020);
    CHECK_NEAR(c.nat, 0.010, 1e-12);
    CHECK_NEAR(c.py + c.sys, 0, 0);
    CHECK_NEAR(c.cpu, 0.010, 1e-12);
    /* waiting: system, whatever the probe said, no CPU */
    c = charged(0, CAT_PY, 0.010, 0.003);
    CHECK_NEAR(c.sys, 0.010, 1e-12);
    CHECK_NEAR(c.py + c.nat + c.cpu, 0, 0);
    CHECK_EQ(c.state, CAT_SYS);
    /* an empty interval charges nothing */
    c = charged(1, CAT_PY, 0, 0);
    CHECK_NEAR(c.py + c.nat + c.sys + c.cpu, 0, 0);
    /* a CPU clock that went back (a counter that failed, then /proc) is
     * no CPU, never a negative one */
    c = charged(1, CAT_PY, 0.010, -0.004);
    CHECK_NEAR(c.py, 0.010, 1e-12);
    CHECK_NEAR(c.cpu, 0, 0);
}

static const char *type_of(json_t *m)
{
    const char *t = json_string_value(json_object_get(m, "t"));
    return t ? t : "";
}

/* every message of one stream checked in order; returns deltas seen.
 * string_lines: <string> is the program's (--include), so lines are
 * charged, all <string>'s; else no line is (the agent's rule), while the
 * stacks still get the time (with all_threads: by default such samples
 * count nowhere). */
static int check_stream(json_t *msgs, pid_t pid, long long dropped, int string_lines)
{
    json_t *strs = json_object(), *stacks = json_object(), *m;
    size_t i;
    int deltas = 0, main_charged = 0, string_file = 0, nlines = 0, nstacks = 0;
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
                nstacks += json_number_value(json_array_get(e, 2)) > 0;
            }
            json_array_foreach(json_object_get(m, "lines"), k, e)
            {
                snprintf(key, sizeof key, "%lld", json_integer_value(json_object_get(e, "f")));
                json_t *file = json_object_get(strs, key);
                CHECK(file != NULL);
                CHECK(file && !strcmp(json_string_value(file), "<string>"));
                nlines++;
            }
            json_array_foreach(json_object_get(m, "threads"), k, e)
            {
                double sum = json_number_value(json_object_get(e, "py")) +
                             json_number_value(json_object_get(e, "nat")) +
                             json_number_value(json_object_get(e, "sys"));
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
    CHECK_EQ(nstacks + dropped, deltas);
    if (string_lines) /* the first ticks may see the interpreter still starting (site) */
        CHECK(nlines > 0);
    else
        CHECK_EQ(nlines, 0);
    json_decref(strs);
    json_decref(stacks);
    return deltas;
}

int main(void)
{
    charging();
    /* the target says when it is in spin(): every tick then finds a frame
     * of <string> (before it, site's frames have none, and the default
     * rule counts no sample without one: sampling/charge.h) */
    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        /* gone with the test, which may abort (a sanitizer): ctest waits
         * for the output this child holds open otherwise */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(ready[0]);
        dup2(ready[1], 1);
        execl(HOTLINE_TEST_PYTHON, HOTLINE_TEST_PYTHON, "-c",
              "import os\ndef spin():\n    os.write(1, b'x')\n    while True:\n"
              "        sum(range(1000))\nspin()\n",
              (char *)NULL);
        _exit(127);
    }
    CHECK(pid > 0);
    close(ready[1]);
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    close(ready[0]);
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
    /* --include '<string>': the loop's line is charged; detached ("stop") */
    static const char *const inc[] = {"<string>"};
    struct attach_engine *e = calloc(1, sizeof *e);
    CHECK(e && attach_sampler_init(&e->s, &fs.sink, &stop, 10.0, inc, 1, NULL, 0) == 0);
    CHECK_EQ(attach_engine_open(e, pid, why, sizeof why), 0);
    struct attach_sproc *pr = e->s.procs[0];
    for (int i = 0; i < 5; i++) {
        usleep(10000);
        CHECK_EQ(attach_sampler_tick(&e->s, pr), 0);
    }
    attach_sampler_end(&e->s, pr, "stop");
    json_t *msgs = pr->conn;
    CHECK_STR(type_of(json_array_get(msgs, json_array_size(msgs) - 1)), "end");
    json_array_remove(msgs, json_array_size(msgs) - 1);
    CHECK(e->s.dropped < 5);
    CHECK_EQ(check_stream(msgs, pid, e->s.dropped, 1), 5);
    attach_sampler_free(&e->s);
    free(e);
    /* the default rule: <string> is not the program's */
    e = calloc(1, sizeof *e);
    CHECK(e && attach_sampler_init(&e->s, &fs.sink, &stop, 10.0, NULL, 0, NULL, 0) == 0);
    /* no frame of the program's: by default no sample would count at all
     * (sampling/charge.h); all_threads keeps the stacks' time to check */
    if (e) e->s.all_threads = 1;
    CHECK_EQ(attach_engine_open(e, pid, why, sizeof why), 0);
    CHECK(e->program[0] != 0); /* no script: the executable */
    pr = e->s.procs[0];
    for (int i = 0; i < 5; i++) {
        usleep(10000);
        CHECK_EQ(attach_sampler_tick(&e->s, pr), 0);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CHECK_EQ(attach_sampler_tick(&e->s, pr), -ESRCH);
    attach_sampler_end(&e->s, pr, "exit");
    msgs = pr->conn;
    json_t *last = json_array_get(msgs, json_array_size(msgs) - 1);
    CHECK_STR(type_of(last), "end");
    CHECK_STR(json_string_value(json_object_get(last, "reason")), "exit");
    json_array_remove(msgs, json_array_size(msgs) - 1);
    CHECK(e->s.dropped < 5); /* a busy loop races with a read now and then, not always */
    CHECK_EQ(check_stream(msgs, pid, e->s.dropped, 0), 5);
    attach_sampler_free(&e->s);
    free(e);
    CHECK_EQ(fs.opened, 2);
    CHECK_EQ(fs.closed, 2);
    return check_exit("attach_sampler");
}
