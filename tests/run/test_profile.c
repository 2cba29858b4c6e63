/* Unit tests of server/profile: two connections with different id tables
 * merge into the same file/line/function records; queries (line, top lines,
 * top functions, stacks through a line); `now` resolution; JSON round trip
 * through save/load (atomic: no temp file left); clear load errors. A saved
 * profile is untrusted input: lines are stored sparsely (a huge line number
 * costs nothing), lines over the cap are dropped, loading many files is
 * linear, a symlink / FIFO / oversized file is refused, saving never
 * follows a symlink placed at the temp name, and a load is cancellable. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "store/export.h"
#include "store/memprof.h"
#include "store/profile.h"

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
    struct profile *q = profile_load(path, 0, err, sizeof err);
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
        q = profile_load(path, 0, err, sizeof err);
        CHECK(q == NULL);
        if (!strstr(err, cases[i][1]))
            fprintf(stderr, "case %zu: error '%s' lacks '%s'\n", i, err, cases[i][1]);
        CHECK(strstr(err, cases[i][1]) != NULL);
        profile_free(q);
    }
    snprintf(path, sizeof path, "%s/missing.json", dir);
    CHECK(profile_load(path, 0, err, sizeof err) == NULL && strstr(err, "missing.json"));
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

/* Resident memory of this process, bytes. */
static size_t rss_bytes(void)
{
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0;
        fclose(f);
    }
    return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

static struct profile *from_text(const char *text, char *err, size_t errlen)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    CHECK(j != NULL);
    struct profile *p = j ? profile_from_json(j, err, errlen) : NULL;
    json_decref(j);
    return p;
}

/* A line number as big as a source file can have costs what one line costs:
 * 8 files each naming line PROFILE_MAX_LINE used to allocate an array of
 * 2^20 lines each (over 1 GB). One past the cap is dropped, not stored. */
static void test_sparse_lines(void)
{
    char buf[8192];
    size_t n = (size_t)snprintf(buf, sizeof buf, "{\"version\":1,\"files\":{");
    for (int i = 0; i < 8; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n,
                              "%s\"/w/f%d.py\":{\"lines\":{\"3\":{\"python_s\":1,\"samples\":1},"
                              "\"%d\":{\"python_s\":2,\"samples\":2},"
                              "\"%d\":{\"python_s\":4,\"samples\":4}},"
                              "\"functions\":[{\"name\":\"f\",\"first_line\":1,"
                              "\"last_line\":2000000000,\"python_s\":3,\"samples\":3}]}",
                              i ? "," : "", i, PROFILE_MAX_LINE, PROFILE_MAX_LINE + 1);
    snprintf(buf + n, sizeof buf - n, "}}");
    size_t before = rss_bytes();
    char err[256] = "";
    struct profile *p = from_text(buf, err, sizeof err);
    size_t after = rss_bytes();
    /* RSS can also shrink meanwhile (the allocator gives pages back): no
     * growth, not an unsigned wrap (seen once in CI: "+18014398509477628 KB") */
    size_t grew = after > before ? after - before : 0;
    CHECK(p != NULL);
    if (!p) {
        fprintf(stderr, "load: %s\n", err);
        return;
    }
    fprintf(stderr, "sparse: 8 files at line %d: RSS +%zu KB\n", PROFILE_MAX_LINE, grew >> 10);
    CHECK(grew < ((size_t)32 << 20));
    const struct prof_file *f = profile_file(p, "/w/f5.py");
    CHECK(f && f->nlines == 2); /* lines 3 and PROFILE_MAX_LINE */
    const struct agent_stats *st = profile_line(p, "/w/f5.py", PROFILE_MAX_LINE);
    CHECK(st && st->v[AGENT_STAT_PY] == 2);
    CHECK(profile_line(p, "/w/f5.py", PROFILE_MAX_LINE + 1) == NULL);
    CHECK(profile_line(p, "/w/f5.py", 4) == NULL);
    CHECK(p->dropped == 8); /* one line past the cap per file */
    CHECK(p->nline_records == 16);
    CHECK_NEAR(agent_stats_time(&p->total), 8 * 3, 1e-9);
    /* a function spanning two billion lines sums its lines without walking them */
    if (f && f->nfuncs == 1) {
        struct agent_stats fs;
        profile_func_stats(f, f->funcs[0], &fs);
        CHECK_NEAR(fs.v[AGENT_STAT_PY], 3, 1e-9);
    }
    /* a live run past the cap: dropped too */
    struct prof_conn *c = profile_conn_new(p);
    char line[256];
    CHECK(feed(c, "{\"t\":\"hello\",\"v\":1,\"pid\":7,\"ppid\":1}") == 0);
    CHECK(feed(c, "{\"t\":\"str\",\"id\":1,\"s\":\"/w/f5.py\"}") == 0);
    snprintf(line, sizeof line,
             "{\"t\":\"delta\",\"samples\":2,\"lines\":[{\"f\":1,\"l\":%d,\"py\":1,\"n\":1},"
             "{\"f\":1,\"l\":%d,\"py\":1,\"n\":1}]}",
             PROFILE_MAX_LINE, PROFILE_MAX_LINE + 1);
    feed(c, line);
    st = profile_line(p, "/w/f5.py", PROFILE_MAX_LINE);
    CHECK(st && st->v[AGENT_STAT_PY] == 3);
    CHECK(profile_line(p, "/w/f5.py", PROFILE_MAX_LINE + 1) == NULL);
    CHECK(p->dropped == 9);
    profile_conn_free(c);
    /* written back: the same lines, in any order */
    json_t *j = profile_to_json(p);
    json_t *files = json_object_get(j, "files");
    json_t *lines = json_object_get(json_object_get(files, "/w/f5.py"), "lines");
    CHECK(json_object_size(lines) == 2 && json_object_get(lines, "3"));
    json_decref(j);
    profile_free(p);
}

/* Leak analysis over a profile of many files looks at each line once per
 * pass: it used to scan every timeline of the profile for every file
 * (30,000 files: 32 s). One file leaks, to show the analysis still runs. */
static void test_linear_leaks(void)
{
    enum { NFILES = 3000 };
    size_t cap = (size_t)NFILES * 200 + 1024, n = 0;
    char *buf = malloc(cap);
    n += (size_t)snprintf(buf + n, cap - n, "{\"version\":1,\"memory_end_s\":1.0,\"files\":{");
    for (int i = 0; i < NFILES; i++)
        n += (size_t)snprintf(
            buf + n, cap - n,
            "%s\"/w/m%d.py\":{\"lines\":{\"3\":{\"alloc_mb\":8,\"memory_timeline\":%s}}}",
            i ? "," : "", i,
            i == 7 ? "[[0.1,1],[0.2,2],[0.3,3],[0.4,4],[0.5,5],[0.6,6],[0.7,7],[0.8,8]]"
                   : "[[0.1,8],[0.2,0]]");
    snprintf(buf + n, cap - n, "}}");
    char err[256] = "";
    struct profile *p = from_text(buf, err, sizeof err);
    free(buf);
    CHECK(p != NULL);
    if (!p) return;
    json_t *j = profile_to_json(p); /* pass 1: every file's `leaks` */
    json_t *files = json_object_get(j, "files");
    CHECK(json_array_size(json_object_get(json_object_get(files, "/w/m7.py"), "leaks")) == 1);
    CHECK(json_object_get(json_object_get(files, "/w/m8.py"), "leaks") == NULL);
    json_decref(j);
    size_t leaky = 0; /* pass 2: what the language server does on load */
    for (size_t i = 0; i < p->nfiles; i++) {
        json_t *l = profile_leaks_json(p, p->files[i]->path);
        leaky += l != NULL;
        json_decref(l);
    }
    CHECK(leaky == 1);
    fprintf(stderr, "linear: %d files, 2 passes: %zu lines examined\n", NFILES,
            memprof_examined(p->mem));
    CHECK(memprof_examined(p->mem) <= 2 * (size_t)NFILES);
    profile_free(p);
}

static int file_is(const char *path, const char *text)
{
    char got[256] = "";
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = 0;
    fclose(f);
    return !strcmp(got, text);
}

static size_t dir_entries(const char *dir)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

/* Someone placed symlinks where the saver writes: at the name the temp file
 * used to have (path.tmp.<pid>, predictable) and, in a folder of ours
 * (PROFILE_WRITE_REPLACE: <root>/.hotline), at the profile itself, or a
 * FIFO there. No target is written, no FIFO opened; the profile ends up a
 * regular 0600 file. A path the user named that is a symlink to a regular
 * file has that file replaced, the link kept. */
static void test_save_no_follow(void)
{
    char dir[] = "/tmp/hotline-test-save-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char target[128], path[128], tmp[160], src[128], srctmp[160];
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(path, sizeof path, "%s/profile.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    snprintf(src, sizeof src, "%s/sources.json", dir);
    snprintf(srctmp, sizeof srctmp, "%s.tmp%d", src, (int)getpid());
    FILE *f = fopen(target, "w");
    fputs("precious\n", f);
    fclose(f);
    CHECK(symlink(target, tmp) == 0);
    CHECK(symlink(target, srctmp) == 0);
    struct profile *p = build();
    CHECK(profile_save(p, path) == 0);
    CHECK(file_is(target, "precious\n"));
    struct stat st;
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
    CHECK(lstat(tmp, &st) == 0 && S_ISLNK(st.st_mode)); /* left alone */
    /* a symlink at the profile itself is replaced, its target untouched */
    unlink(path);
    CHECK(symlink(target, path) == 0);
    json_t *pj = profile_to_json(p);
    CHECK(profile_write_json(pj, path, PROFILE_SAVE_FLAGS, PROFILE_WRITE_REPLACE) == 0);
    CHECK(file_is(target, "precious\n"));
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
    /* so is a FIFO (a reader is there: opening it would not block, and the
     * reader would get the bytes) */
    unlink(path);
    CHECK(mkfifo(path, 0600) == 0);
    int rd = open(path, O_RDONLY | O_NONBLOCK);
    CHECK(rd >= 0);
    CHECK(profile_write_json(pj, path, PROFILE_SAVE_FLAGS, PROFILE_WRITE_REPLACE) == 0);
    char byte;
    CHECK(read(rd, &byte, 1) <= 0);
    close(rd);
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
    json_decref(pj);
    /* a path the user named: the link stays, the file it names is replaced */
    char ulink[160];
    snprintf(ulink, sizeof ulink, "%s/user-link.json", dir);
    CHECK(symlink(target, ulink) == 0);
    CHECK(profile_save(p, ulink) == 0);
    CHECK(lstat(ulink, &st) == 0 && S_ISLNK(st.st_mode));
    struct profile *back = profile_load(target, 0, NULL, 0);
    CHECK(back && back->meta.samples == p->meta.samples);
    profile_free(back);
    unlink(ulink);
    f = fopen(target, "w");
    fputs("precious\n", f);
    fclose(f);
    json_t *j = json_pack("{s:i}", "x", 1);
    CHECK(profile_save_json(j, src, JSON_COMPACT) == 0);
    json_decref(j);
    CHECK(file_is(target, "precious\n"));
    CHECK(file_is(src, "{\"x\":1}\n"));
    CHECK(lstat(src, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
    CHECK(dir_entries(dir) == 5); /* target, 2 symlinks, 2 saved: no temp file left */
    unlink(target);
    unlink(path);
    unlink(tmp);
    unlink(src);
    unlink(srctmp);
    CHECK(rmdir(dir) == 0);
    profile_free(p);
}

/* What a cloned repository may put at .hotline/profile.json. */
static void test_untrusted_files(void)
{
    char dir[] = "/tmp/hotline-test-read-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char link[128], fifo[128], big[128], err[512];
    snprintf(link, sizeof link, "%s/link.json", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo.json", dir);
    snprintf(big, sizeof big, "%s/big.json", dir);
    char *text;
    size_t len;
    /* a symlink to /dev/stdin: refused, not followed (stdin is never read) */
    CHECK(symlink("/dev/stdin", link) == 0);
    CHECK(profile_read_file(link, 1024, PROFILE_READ_UNTRUSTED, &text, &len) == -ELOOP);
    err[0] = 0;
    CHECK(profile_load(link, PROFILE_READ_UNTRUSTED, err, sizeof err) == NULL);
    CHECK(strstr(err, "link.json") && strstr(err, "symbolic link"));
    /* a FIFO nobody writes: refused at once, the open does not block */
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(profile_read_file(fifo, 1024, PROFILE_READ_UNTRUSTED, &text, &len) == -EINVAL);
    CHECK(profile_load(fifo, PROFILE_READ_UNTRUSTED, err, sizeof err) == NULL);
    CHECK(strstr(err, "not a regular file") != NULL);
    /* over the size cap: refused before reading; an endless device stops at the cap */
    FILE *f = fopen(big, "w");
    fputs("{\"version\":1}      ", f);
    fclose(f);
    CHECK(profile_read_file(big, 19, 0, &text, &len) == 0 && len == 19 && text[len] == 0);
    free(text);
    CHECK(profile_read_file(big, 18, PROFILE_READ_UNTRUSTED, &text, &len) == -EFBIG);
    CHECK(truncate(big, (off_t)PROFILE_MAX_JSON_BYTES + 1) == 0);
    CHECK(profile_load(big, 0, err, sizeof err) == NULL && strstr(err, "bigger than"));
    CHECK(profile_read_file("/dev/zero", 100000, 0, &text, &len) == -EFBIG);
    CHECK(profile_read_file("/dev/zero", 100000, PROFILE_READ_UNTRUSTED, &text, &len) == -EINVAL);
    unlink(link);
    unlink(fifo);
    unlink(big);
    CHECK(rmdir(dir) == 0);
}

/* A load is cancellable from another thread (the server sets the flag on
 * shutdown/exit): the parse and the store's fill stop and say so; with the
 * flag clear the same calls load the whole profile. */
static void test_cancel(void)
{
    size_t nfiles = 4 * PROFILE_CANCEL_EVERY, cap = nfiles * 80 + 64, n = 0;
    char *text = malloc(cap);
    n += (size_t)snprintf(text + n, cap - n, "{\"version\":1,\"files\":{");
    for (size_t i = 0; i < nfiles; i++)
        n += (size_t)snprintf(text + n, cap - n,
                              "%s\"/w/f%zu.py\":{\"lines\":{\"3\":{\"python_s\":1,\"samples\":1}}}",
                              i ? "," : "", i);
    n += (size_t)snprintf(text + n, cap - n, "}}");
    CHECK(n < cap);
    char dir[] = "/tmp/hotline-test-cancel-XXXXXX", path[128], err[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/profile.json", dir);
    FILE *f = fopen(path, "w");
    fwrite(text, 1, n, f);
    fclose(f);
    json_t *root = json_loads(text, 0, NULL);
    CHECK(root != NULL);
    atomic_int cancel = 0;
    struct profile *p = profile_from_json_cancellable(root, &cancel, err, sizeof err);
    CHECK(p && p->nfiles == nfiles);
    profile_free(p);
    p = profile_load_cancellable(path, PROFILE_READ_UNTRUSTED, &cancel, err, sizeof err);
    CHECK(p && p->nfiles == nfiles);
    profile_free(p);
    atomic_store(&cancel, 1);
    err[0] = 0;
    CHECK(profile_from_json_cancellable(root, &cancel, err, sizeof err) == NULL);
    CHECK(!strcmp(err, "cancelled"));
    err[0] = 0;
    CHECK(profile_load_cancellable(path, PROFILE_READ_UNTRUSTED, &cancel, err, sizeof err) == NULL);
    CHECK(!strcmp(err, "cancelled"));
    json_decref(root);
    free(text);
    unlink(path);
    CHECK(rmdir(dir) == 0);
}

/* A program's agent sends counts of LLONG_MAX (fuzz_agent_wire): the sums
 * stop there instead of overflowing (undefined behaviour; in practice a
 * negative sample count). */
static void test_count_saturates(void)
{
    struct profile *p = profile_new();
    struct prof_conn *c = profile_conn_new(p);
    CHECK(feed(c, "{\"t\":\"hello\",\"v\":1,\"pid\":7}") == 0);
    CHECK(feed(c, "{\"t\":\"str\",\"id\":1,\"s\":\"/p/a.py\"}") == 0);
    CHECK(feed(c, "{\"t\":\"stack\",\"id\":1,\"fr\":[[1,1,1]]}") == 0);
    const char *d = "{\"t\":\"delta\",\"ts\":1,\"samples\":9223372036854775807,"
                    "\"stacks\":[[1,9223372036854775807,1.0,7]]}";
    CHECK(feed(c, d) == 0);
    CHECK(feed(c, d) == 0);
    CHECK(p->meta.samples == LLONG_MAX);
    CHECK(p->nstacks == 1 && p->stacks[0]->samples == LLONG_MAX);
    CHECK(p->stacks[0]->nparts == 1 && p->stacks[0]->parts[0].samples == LLONG_MAX);
    /* two such stacks: the exports' sum of every stack saturates too */
    CHECK(feed(c, "{\"t\":\"stack\",\"id\":2,\"fr\":[[1,1,2]]}") == 0);
    CHECK(feed(c, "{\"t\":\"delta\",\"ts\":2,\"samples\":1,"
                  "\"stacks\":[[2,9223372036854775807,1.0,7]]}") == 0);
    long long un = -1;
    double us = -1;
    export_unstacked(p, &un, &us);
    CHECK(un == 0 && us == 0);
    profile_conn_free(c);
    profile_free(p);
}

/* A notebook cell run again (providers/kernel.c, issue 22): its file's
 * lines, and the stacks through it with their ticks, show nothing of the
 * earlier execution; other files' stacks stay. */
static void test_reset_file(void)
{
    struct profile *p = build();
    const struct prof_stack *st[4];
    size_t ticks_b = 0, ticks = p->tl.n;
    for (size_t i = 0; i < p->tl.n; i++)
        ticks_b += p->tl.v[i].stack->fr[0].line == 1;
    CHECK(ticks_b == 1 && ticks == 3);
    CHECK(profile_reset_file(p, "/nope.py") == -ENOENT);
    CHECK(profile_reset_file(p, "/p/b.py") == 0);
    CHECK(profile_top_stacks(p, "/p/b.py", 1, st, 4) == 0);
    CHECK(profile_top_stacks(p, NULL, 0, st, 4) == 1);
    CHECK_STR(st[0]->fr[0].name, "work");
    CHECK_NEAR(st[0]->seconds, 0.6, 1e-9); /* a.py's stack untouched */
    CHECK(p->tl.n == ticks - ticks_b);
    for (size_t i = 0; i < p->tl.n; i++)
        CHECK(p->tl.v[i].stack->seconds > 0);
    /* the totals follow: the flame graph's root (stacks + unstacked) is the
     * header's total again */
    CHECK_NEAR(agent_stats_time(&p->total), 0.2 + 0.1 + 0.3, 1e-9);
    long long un;
    double us;
    export_unstacked(p, &un, &us);
    CHECK_NEAR(st[0]->seconds + us, agent_stats_time(&p->total), 1e-9);
    /* the cell runs again: its new execution's stack fills the same record */
    struct prof_conn *c = profile_conn_new(p);
    CHECK(feed(c, "{\"t\":\"hello\",\"v\":1,\"pid\":102}") == 0);
    CHECK(feed(c, "{\"t\":\"str\",\"id\":1,\"s\":\"/p/b.py\"}") == 0);
    CHECK(feed(c, "{\"t\":\"str\",\"id\":2,\"s\":\"<module>\"}") == 0);
    CHECK(feed(c, "{\"t\":\"stack\",\"id\":1,\"fr\":[[1,2,1]]}") == 0);
    CHECK(feed(c, "{\"t\":\"delta\",\"ts\":0.5,\"samples\":2,"
                  "\"lines\":[{\"f\":1,\"l\":1,\"py\":0.02,\"n\":2}],"
                  "\"stacks\":[[1,2,0.02]]}") == 0);
    CHECK(profile_top_stacks(p, "/p/b.py", 1, st, 4) == 1);
    CHECK(st[0]->samples == 2);
    CHECK_NEAR(st[0]->seconds, 0.02, 1e-9);
    profile_conn_free(c);
    profile_free(p);
}

int main(void)
{
    test_count_saturates();
    test_reset_file();
    test_cancel();
    test_roundtrip();
    test_exit_text();
    test_sparse_lines();
    test_linear_leaks();
    test_save_no_follow();
    test_untrusted_files();
    return check_exit("test_profile");
}
