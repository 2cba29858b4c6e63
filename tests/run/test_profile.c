/* Unit tests of server/profile: two connections with different id tables
 * merge into the same file/line/function records; queries (line, top lines,
 * top functions, stacks through a line); `now` resolution; JSON round trip
 * through save/load (atomic: no temp file left); clear load errors. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "profile.h"
#include "run_check.h"

static int feed(struct prof_conn *c, const char *line)
{
    struct agent_msg m;
    char err[160];
    if (agent_msg_parse(line, strlen(line), &m, err, sizeof err)) {
        fprintf(stderr, "test bug: %s: %s\n", err, line);
        return -999;
    }
    int rc = profile_conn_apply(c, &m);
    agent_msg_clear(&m);
    return rc;
}

static struct profile *build(void)
{
    struct profile *p = profile_new();
    struct prof_conn *a = profile_conn_new(p), *b = profile_conn_new(p);
    /* process A: file id 1, names 2/3 */
    CHECK(feed(a, "{\"t\":\"hello\",\"v\":1,\"pid\":100,\"ppid\":1,\"python\":\"3.12.1\"}") == 0);
    CHECK(feed(a, "{\"t\":\"str\",\"id\":1,\"s\":\"/p/a.py\"}") == 0);
    CHECK(feed(a, "{\"t\":\"str\",\"id\":2,\"s\":\"work\"}") == 0);
    CHECK(feed(a, "{\"t\":\"str\",\"id\":3,\"s\":\"<module>\"}") == 0);
    CHECK(feed(a, "{\"t\":\"stack\",\"id\":1,\"fr\":[[1,2,5],[1,3,20]]}") == 0);
    CHECK(
        feed(
            a,
            "{\"t\":\"delta\",\"ts\":0.1,\"samples\":30,"
            "\"lines\":[{\"f\":1,\"l\":5,\"py\":0.2,\"cpu\":0.2,\"n\":20},"
            "{\"f\":1,\"l\":6,\"nat\":0.1,\"n\":10}],"
            "\"funcs\":[{\"f\":1,\"fn\":2,\"first\":4,\"last\":6,\"py\":0.2,\"nat\":0.1,\"n\":30}],"
            "\"stacks\":[[1,30,0.3]],"
            "\"threads\":[{\"tid\":100,\"name\":\"MainThread\",\"py\":0.2,\"nat\":0.1}]}") == 0);
    /* process B: the same strings under other ids */
    CHECK(feed(b, "{\"t\":\"hello\",\"v\":1,\"pid\":101,\"ppid\":100,\"python\":\"3.12.1\"}") == 0);
    CHECK(feed(b, "{\"t\":\"str\",\"id\":5,\"s\":\"work\"}") == 0);
    CHECK(feed(b, "{\"t\":\"str\",\"id\":9,\"s\":\"/p/a.py\"}") == 0);
    CHECK(feed(b, "{\"t\":\"str\",\"id\":11,\"s\":\"<module>\"}") == 0);
    CHECK(feed(b, "{\"t\":\"str\",\"id\":12,\"s\":\"/p/b.py\"}") == 0);
    CHECK(feed(b, "{\"t\":\"stack\",\"id\":4,\"fr\":[[9,5,5],[9,11,20]]}") == 0);
    CHECK(feed(b, "{\"t\":\"stack\",\"id\":5,\"fr\":[[12,11,1]]}") == 0);
    CHECK(feed(b, "{\"t\":\"delta\",\"ts\":0.2,\"samples\":25,"
                  "\"lines\":[{\"f\":9,\"l\":5,\"py\":0.3,\"n\":15},"
                  "{\"f\":12,\"l\":1,\"sys\":0.5,\"n\":10}],"
                  "\"funcs\":[{\"f\":9,\"fn\":5,\"first\":4,\"last\":7,\"py\":0.3,\"n\":15}],"
                  "\"stacks\":[[4,15,0.3],[5,10,0.5]]}") == 0);
    CHECK(feed(b, "{\"t\":\"end\",\"ts\":0.3,\"reason\":\"exit\"}") == 0);
    /* undefined ids are a protocol error, the valid rest still counts */
    CHECK(feed(b, "{\"t\":\"delta\",\"samples\":0,\"lines\":[{\"f\":77,\"l\":1,\"py\":1},"
                  "{\"f\":12,\"l\":2,\"py\":0.01,\"n\":1}]}") == -EPROTO);
    CHECK(feed(b, "{\"t\":\"stack\",\"id\":6,\"fr\":[[12,99,1]]}") == -EPROTO);
    CHECK(feed(b, "{\"t\":\"str\",\"id\":99999999999,\"s\":\"x\"}") == -EPROTO);
    /* now: resolved through this connection's table */
    struct agent_msg m;
    const char *now =
        "{\"t\":\"now\",\"ts\":1.5,\"threads\":[{\"tid\":101,\"name\":\"MainThread\","
        "\"state\":\"native\",\"since_s\":0.5,\"fr\":[[9,5,5],[9,11,20],[40,41,1]]}]}";
    CHECK(agent_msg_parse(now, strlen(now), &m, NULL, 0) == 0);
    json_t *r = profile_conn_resolve_now(b, &m);
    json_t *t0 = json_array_get(json_object_get(r, "threads"), 0);
    json_t *fr = json_object_get(t0, "frames");
    CHECK(json_integer_value(json_object_get(r, "pid")) == 101);
    CHECK_STR(json_string_value(json_object_get(t0, "state")), "native");
    CHECK(json_array_size(fr) == 3);
    CHECK_STR(json_string_value(json_object_get(json_array_get(fr, 0), "file")), "/p/a.py");
    CHECK_STR(json_string_value(json_object_get(json_array_get(fr, 0), "name")), "work");
    CHECK_STR(json_string_value(json_object_get(json_array_get(fr, 2), "file")), "?");
    json_decref(r);
    agent_msg_clear(&m);
    profile_conn_free(a);
    profile_conn_free(b);
    return p;
}

static void check_store(const struct profile *p)
{
    const struct agent_stats *s = profile_line(p, "/p/a.py", 5);
    CHECK(s != NULL);
    if (s) {
        CHECK_NEAR(s->v[AGENT_STAT_PY], 0.5, 1e-9);
        CHECK_NEAR(s->v[AGENT_STAT_N], 35, 1e-9);
        CHECK_NEAR(s->v[AGENT_STAT_CPU], 0.2, 1e-9);
    }
    CHECK(profile_line(p, "/p/a.py", 4) == NULL);
    CHECK(profile_line(p, "/p/a.py", 100000) == NULL);
    CHECK(profile_line(p, "/nope.py", 5) == NULL);
    CHECK(p->meta.samples == 55);
    CHECK_STR(p->meta.python_version, "3.12.1");
    CHECK(p->nprocs == 2);
    CHECK_NEAR(agent_stats_time(&p->total), 0.2 + 0.1 + 0.3 + 0.5 + 0.01, 1e-9);

    const struct prof_file *f = profile_file(p, "/p/a.py");
    CHECK(f && f->nfuncs == 1);
    if (f && f->nfuncs == 1) {
        CHECK_STR(f->funcs[0]->name, "work");
        CHECK(f->funcs[0]->first_line == 4 && f->funcs[0]->last_line == 7);
        CHECK_NEAR(f->funcs[0]->st.v[AGENT_STAT_PY], 0.5, 1e-9);
        CHECK_NEAR(agent_stats_time(&f->total), 0.6, 1e-9);
    }

    struct prof_line_ref top[10];
    size_t n = profile_top_lines(p, top, 10);
    CHECK(n == 4);
    CHECK(top[0].line == 5 || top[0].line == 1); /* 0.5 s each, ties by path */
    CHECK_STR(top[0].file->path, "/p/a.py");
    CHECK(top[0].line == 5);
    CHECK_STR(top[1].file->path, "/p/b.py");
    CHECK(top[3].line == 2);
    CHECK(profile_top_lines(p, top, 1) == 1);

    struct prof_func_ref fns[4];
    CHECK(profile_top_funcs(p, fns, 4) == 1);

    const struct prof_stack *st[4];
    n = profile_top_stacks(p, NULL, 0, st, 4);
    CHECK(n == 2);
    if (n == 2) {
        CHECK_NEAR(st[0]->seconds, 0.6, 1e-9); /* A and B's identical stacks merged */
        CHECK(st[0]->samples == 45);
        CHECK(st[0]->nfr == 2);
        CHECK_STR(st[0]->fr[0].name, "work");
    }
    n = profile_top_stacks(p, "/p/a.py", 20, st, 4);
    CHECK(n == 1 && st[0]->fr[1].line == 20);
    CHECK(profile_top_stacks(p, "/p/b.py", 1, st, 4) == 1);
    CHECK(profile_top_stacks(p, "/p/b.py", 7, st, 4) == 0);
}

static void test_roundtrip(void)
{
    struct profile *p = build();
    check_store(p);
    profile_set_str(&p->meta.program, "/p/a.py");
    p->meta.elapsed_s = 1.5;
    p->meta.exit_signal = 11;
    profile_set_str(&p->meta.reason, "crashed (SIGSEGV)");

    char dir[] = "/tmp/hotline-test-profile-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[128];
    snprintf(path, sizeof path, "%s/p.json", dir);
    CHECK(profile_save(p, path) == 0);
    char err[256];
    struct profile *q = profile_load(path, err, sizeof err);
    CHECK(q != NULL);
    if (q) {
        check_store(q);
        CHECK_STR(q->meta.program, "/p/a.py");
        CHECK_STR(q->meta.reason, "crashed (SIGSEGV)");
        CHECK(q->meta.exit_signal == 11 && q->meta.exit_status == -1);
        CHECK_NEAR(q->meta.elapsed_s, 1.5, 1e-9);
        /* saved twice, same bytes */
        json_t *a = profile_to_json(p), *b = profile_to_json(q);
        char *sa = json_dumps(a, JSON_SORT_KEYS), *sb = json_dumps(b, JSON_SORT_KEYS);
        CHECK(sa && sb && !strcmp(sa, sb));
        free(sa);
        free(sb);
        json_decref(a);
        json_decref(b);
        profile_free(q);
    }
    /* the documented keys are there */
    json_t *j = profile_to_json(p);
    json_t *l5 = json_object_get(
        json_object_get(json_object_get(json_object_get(j, "files"), "/p/a.py"), "lines"), "5");
    CHECK(json_is_integer(json_object_get(j, "version")));
    CHECK(json_is_number(json_object_get(l5, "python_s")));
    CHECK(json_is_number(json_object_get(l5, "native_s")));
    CHECK(json_is_number(json_object_get(l5, "system_s")));
    CHECK(json_is_integer(json_object_get(l5, "samples")));
    json_decref(j);

    /* load errors are clear */
    const char *cases[][2] = {
        {"{\"version\":99}", "unsupported profile version 99"},
        {"[]", "not a JSON object"},
        {"{\"files\":{}}", "no integer 'version'"},
        {"{\"version\":1,\"files\":{\"/a\":{\"lines\":{\"x\":{}}}}}", "line key"},
        {"{\"version\":1,\"files\":{\"/a\":{\"lines\":{\"3\":{\"python_s\":\"1\"}}}}}",
         "wrong type"},
        {"{\"version\":1", "end of file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen(path, "w");
        fputs(cases[i][0], f);
        fclose(f);
        err[0] = 0;
        q = profile_load(path, err, sizeof err);
        CHECK(q == NULL);
        if (!strstr(err, cases[i][1]))
            fprintf(stderr, "case %zu: error '%s' lacks '%s'\n", i, err, cases[i][1]);
        CHECK(strstr(err, cases[i][1]) != NULL);
        profile_free(q);
    }
    snprintf(path, sizeof path, "%s/missing.json", dir);
    CHECK(profile_load(path, err, sizeof err) == NULL && strstr(err, "missing.json"));
    /* save into a missing directory fails cleanly */
    snprintf(path, sizeof path, "%s/no/such/dir/p.json", dir);
    CHECK(profile_save(p, path) == -ENOENT);
    snprintf(path, sizeof path, "%s/p.json", dir);
    unlink(path);
    CHECK(rmdir(dir) == 0); /* nothing else (no temp file) was left behind */
    profile_free(p);
}

static void test_exit_text(void)
{
    char b[64];
    profile_describe_exit(3, 0, b, sizeof b);
    CHECK_STR(b, "exited 3");
    profile_describe_exit(-1, 11, b, sizeof b);
    CHECK_STR(b, "crashed (SIGSEGV)");
    profile_describe_exit(-1, 9, b, sizeof b);
    CHECK_STR(b, "killed (SIGKILL)");
    profile_describe_exit(-1, 2, b, sizeof b);
    CHECK_STR(b, "interrupted (SIGINT)");
}

int main(void)
{
    test_roundtrip();
    test_exit_text();
    return CHECK_DONE();
}
