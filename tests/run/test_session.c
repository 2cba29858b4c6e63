/* Tests of server/session in the language server's mode (inherit_stdio = 0,
 * own process group) on a private libuv loop, against the fake agent
 * (tests/run/fake_agent): output tail kept, exit status, `now` requests
 * answered and resolved, session_stop escalating past a program that ignores
 * SIGINT and reaching its child, a failed start (no callback, s reusable at
 * once), close removing the socket directory and reaping a running program.
 * usage: test_run_session FAKE_AGENT_DIR */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "proc/session.h"

struct ctx {
    struct session s;
    struct profile *p;
    uv_timer_t guard, poll;
    int exited, closed, nows, errors, stop_sent;
    char now_file[256], now_state[32];
    char *tail;
    const char *stop_file; /* session_stop once the program created it */
    const char *go_file;   /* created by the first `now`: lets the program end */
    int timers_closed;
};

static void close_timers(struct ctx *c)
{
    if (c->timers_closed++) return;
    uv_close((uv_handle_t *)&c->guard, NULL);
    uv_close((uv_handle_t *)&c->poll, NULL);
}

static void on_now(struct session *s, const json_t *now, void *ud)
{
    (void)s;
    struct ctx *c = ud;
    json_t *t = json_array_get(json_object_get(now, "threads"), 0);
    json_t *f = json_array_get(json_object_get(t, "frames"), 0);
    snprintf(c->now_file, sizeof c->now_file, "%s",
             json_string_value(json_object_get(f, "file")) ?: "");
    snprintf(c->now_state, sizeof c->now_state, "%s",
             json_string_value(json_object_get(t, "state")) ?: "");
    if (c->nows++ == 0 && c->go_file) {
        FILE *f = fopen(c->go_file, "w");
        if (f) fclose(f);
    }
    session_request_now(&c->s, 0);
}

static void on_error(struct session *s, const char *msg, void *ud)
{
    (void)s;
    fprintf(stderr, "session error: %s\n", msg);
    ((struct ctx *)ud)->errors++;
}

static void on_closed(struct session *s)
{
    struct ctx *c = (struct ctx *)((char *)s - offsetof(struct ctx, s));
    c->closed = 1;
}

static void on_exit_cb(struct session *s, void *ud)
{
    struct ctx *c = ud;
    c->exited = 1;
    c->tail = session_output_tail(s);
    close_timers(c);
    session_close(s, on_closed);
}

static void on_guard(uv_timer_t *t)
{
    struct ctx *c = t->data;
    CHECK_FAIL("timed out");
    close_timers(c);
    session_close(&c->s, on_closed);
}

/* waits for a condition (a file the program writes), then acts once */
static void on_poll(uv_timer_t *t)
{
    struct ctx *c = t->data;
    if (!c->stop_sent && c->stop_file && access(c->stop_file, F_OK) == 0) {
        c->stop_sent = 1;
        session_stop(&c->s);
    }
}

static int run(uv_loop_t *loop, struct ctx *c, const struct session_opts *o, int request_now,
               const char *stop_file, const char *go_file)
{
    memset(c, 0, sizeof *c);
    c->stop_file = stop_file;
    c->go_file = go_file;
    c->p = profile_new();
    struct session_cbs cb = {.on_now = on_now, .on_error = on_error, .on_exit = on_exit_cb};
    int rc = session_start(loop, &c->s, o, &cb, c, c->p);
    if (rc) return rc;
    if (request_now) session_request_now(&c->s, 20);
    uv_timer_init(loop, &c->guard);
    uv_timer_init(loop, &c->poll);
    c->guard.data = c->poll.data = c;
    uv_timer_start(&c->guard, on_guard, 60000, 0);
    uv_timer_start(&c->poll, on_poll, 20, 20);
    uv_run(loop, UV_RUN_DEFAULT);
    return 0;
}

static int dir_empty(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return d && n == 0;
}

static const char *write_file(const char *dir, const char *name, const char *text, char *buf,
                              size_t n)
{
    snprintf(buf, n, "%s/%s", dir, name);
    FILE *f = fopen(buf, "w");
    fputs(text, f);
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FAKE_AGENT_DIR\n", argv[0]);
        return 2;
    }
    setenv("HOTLINE_AGENT_PATH", argv[1], 1);
    char dir[] = "/tmp/hotline-test-session-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char tmpdir[128];
    snprintf(tmpdir, sizeof tmpdir, "%s/tmp", dir);
    mkdir(tmpdir, 0700);
    setenv("TMPDIR", tmpdir, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct ctx c;
    char prog[256], pidf[256];

    /* 1. output drained into the tail, status kept, `now` answered */
    write_file(dir, "out.py",
               "import sys, time\nsys.stdout.write('x' * 20000 + 'END-OF-OUT')\n"
               "sys.stderr.write('err-line')\nsys.stdout.flush()\n"
               "import os\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.01)\n"
               "sys.exit(4)\n",
               prog, sizeof prog);
    /* the program ends once the first `now` came back (on_now creates go) */
    snprintf(pidf, sizeof pidf, "%s/go", dir);
    char *args1[] = {pidf};
    struct session_opts o = {.script = prog, .args = args1, .nargs = 1, .memory = 1};
    CHECK(run(&loop, &c, &o, 1, NULL, pidf) == 0);
    CHECK(c.exited && c.closed);
    CHECK(c.s.exit_status == 4 && c.s.term_signal == 0);
    CHECK(c.tail && strlen(c.tail) <= SESSION_OUTPUT_TAIL);
    CHECK(c.tail && strstr(c.tail, "END-OF-OUT") && strstr(c.tail, "err-line"));
    CHECK(c.s.nconns_total == 1);
    CHECK(profile_line(c.p, prog, 1) != NULL);
    CHECK(c.nows >= 1);
    CHECK_STR(c.now_file, prog);
    CHECK_STR(c.now_state, "python");
    CHECK(dir_empty(tmpdir));
    free(c.tail);
    profile_free(c.p);

    /* 2. stop: SIGINT ignored -> SIGTERM reaches the program and its child */
    write_file(dir, "stubborn.py",
               "import os, signal, subprocess, sys, time\n"
               "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
               "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
               "open(sys.argv[1] + '.kid', 'w').write(str(kid.pid))\n"
               "open(sys.argv[1], 'w').close()\n"
               "time.sleep(120)\n",
               prog, sizeof prog);
    snprintf(pidf, sizeof pidf, "%s/started", dir);
    char *args2[] = {pidf};
    struct session_opts o2 = {.script = prog, .args = args2, .nargs = 1};
    uint64_t t0 = uv_hrtime();
    CHECK(run(&loop, &c, &o2, 0, pidf, NULL) == 0);
    double took = (double)(uv_hrtime() - t0) / 1e9;
    CHECK(c.exited && c.s.term_signal == SIGTERM);
    CHECK(took >= SESSION_STOP_STEP_MS / 1000.0 * 0.9 && took < 30);
    char kidf[300];
    snprintf(kidf, sizeof kidf, "%s.kid", pidf);
    FILE *kf = fopen(kidf, "r");
    int kid = 0;
    CHECK(kf && fscanf(kf, "%d", &kid) == 1);
    if (kf) fclose(kf);
    /* the child got SIGTERM too (same process group); wait for it to go */
    int gone = 0;
    for (uint64_t end = uv_hrtime() + 10000000000ull; kid > 0 && uv_hrtime() < end;) {
        if (kill(kid, 0) != 0 && errno == ESRCH) {
            gone = 1;
            break;
        }
        char stat[64], buf[512];
        snprintf(stat, sizeof stat, "/proc/%d/stat", kid);
        FILE *sf = fopen(stat, "r");
        if (sf && fgets(buf, sizeof buf, sf) && strstr(buf, ") Z")) {
            gone = 1; /* zombie: dead, waiting for init to reap it */
            fclose(sf);
            break;
        }
        if (sf) fclose(sf);
        uv_sleep(10);
    }
    CHECK(gone);
    profile_free(c.p);
    free(c.tail);

    /* 3. a start that fails calls nothing and needs no closing */
    struct session_opts o3 = {.python = "/nonexistent/python", .script = prog};
    memset(&c, 0, sizeof c);
    c.p = profile_new();
    struct session_cbs cb = {.on_error = on_error, .on_exit = on_exit_cb};
    struct session *s = malloc(sizeof *s);
    int rc = session_start(&loop, s, &o3, &cb, &c, c.p);
    CHECK(rc == UV_ENOENT);
    CHECK(strstr(s->errmsg, "/nonexistent/python") != NULL);
    free(s); /* at once: the loop must not touch it */
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(!c.exited && !c.closed && c.errors == 0);
    CHECK(dir_empty(tmpdir));
    profile_free(c.p);

    /* 4. closing a running session kills the program and reaps it (no zombie) */
    memset(&c, 0, sizeof c);
    c.p = profile_new();
    struct session_opts o4 = {.script = prog, .args = args2, .nargs = 1};
    CHECK(session_start(&loop, &c.s, &o4, &cb, &c, c.p) == 0);
    int pid = c.s.pid;
    CHECK(pid > 0);
    session_close(&c.s, on_closed);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(c.closed && !c.exited);
    CHECK(kill(pid, 0) == -1 && errno == ESRCH);
    CHECK(dir_empty(tmpdir));
    profile_free(c.p);

    CHECK(uv_loop_close(&loop) == 0);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return check_exit("test_session");
}
