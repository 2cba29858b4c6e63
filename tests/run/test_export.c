/* Pictures of a profile (server/store/export.c): folded stacks and the
 * speedscope file, from a profile read back from JSON as `hotline view`
 * does and from agent messages. Totals equal the profile's samples;
 * unicode, spaces, ';', '%' and newlines in names and paths round-trip
 * through the folded format; speedscope has a profile per thread whose
 * weight is that thread's seconds, one for all in an older profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "store/html.h"
#include "store/export.h"
#include "store/profile.h"

static const char *const PROFILE_JSON =
    "{\"version\":1,\"program\":\"/p/dïr with space/main.py\",\"samples\":60,"
    "\"files\":{\"/p/dïr with space/main.py\":{\"lines\":{\"1\":"
    "{\"python_s\":0.6,\"native_s\":0,\"system_s\":0,\"cpu_s\":0.6,\"samples\":60}}}},"
    "\"stacks\":["
    "{\"frames\":[{\"file\":\"/p/dïr with space/ü mod.py\",\"name\":\"work\",\"line\":3},"
    "{\"file\":\"/usr/lib/python3.11/a;b%.py\",\"name\":\"odd;name\\nwith%newline\",\"line\":7},"
    "{\"file\":\"/p/日本/main.py\",\"name\":\"<module>\",\"line\":1}],"
    "\"samples\":30,\"seconds\":0.3},"
    "{\"frames\":[{\"file\":\"/p/日本/main.py\",\"name\":\"<module>\",\"line\":2}],"
    "\"samples\":20,\"seconds\":0.2}]}";

/* New profile from JSON text, or NULL (reported). */
static struct profile *load(const char *text)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    if (!j) {
        CHECK_FAIL("bad test JSON: %s", je.text);
        return NULL;
    }
    char err[256];
    struct profile *p = profile_from_json(j, err, sizeof err);
    json_decref(j);
    if (!p) CHECK_FAIL("profile_from_json: %s", err);
    return p;
}

/* Undoes export's escapes in place (%3B %25 %0A %0D). */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (*s == '%' && s[1] && s[2]) {
            char hex[3] = {s[1], s[2], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
}

#define MAXFR 8
struct folded {
    char *fr[MAXFR];
    int nfr;
    long long n;
};

/* Splits one folded line (modified in place) into frames and its count. */
static int parse_line(char *line, struct folded *f)
{
    char *sp = strrchr(line, ' ');
    if (!sp) return -1;
    *sp = 0;
    f->n = strtoll(sp + 1, NULL, 10);
    f->nfr = 0;
    for (char *tok = strtok(line, ";"); tok && f->nfr < MAXFR; tok = strtok(NULL, ";")) {
        unescape(tok);
        f->fr[f->nfr++] = tok;
    }
    return 0;
}

static void test_collapsed(void)
{
    struct profile *p = load(PROFILE_JSON);
    if (!p) return;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(export_collapsed(p, f), 0);
    fclose(f);
    /* 2 stacks + the 10 samples no stored stack carries */
    long long total = 0;
    int lines = 0, seen_deep = 0, seen_other = 0;
    for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        struct folded fo;
        lines++;
        if (parse_line(l, &fo)) {
            CHECK_FAIL("no count in '%s'", l);
            continue;
        }
        total += fo.n;
        if (fo.nfr == 3) { /* root first: the stored stack reversed */
            seen_deep = 1;
            CHECK_STR(fo.fr[0], "<module> (/p/日本/main.py:1)");
            CHECK_STR(fo.fr[1], "odd;name\nwith%newline (/usr/lib/python3.11/a;b%.py:7)");
            CHECK_STR(fo.fr[2], "work (/p/dïr with space/ü mod.py:3)");
            CHECK_EQ(fo.n, 30);
        } else if (fo.nfr == 1 && !strcmp(fo.fr[0], EXPORT_OTHER_STACKS)) {
            seen_other = 1;
            CHECK_EQ(fo.n, 10);
        } else if (fo.nfr == 1) {
            CHECK_STR(fo.fr[0], "<module> (/p/日本/main.py:2)");
            CHECK_EQ(fo.n, 20);
        } else {
            CHECK_FAIL("unexpected folded line with %d frames", fo.nfr);
        }
    }
    CHECK_EQ(lines, 3); /* the newline inside a name did not split a line */
    CHECK(seen_deep && seen_other);
    CHECK_EQ(total, p->meta.samples);
    free(buf);
    profile_free(p);
}

static void test_collapsed_no_rest(void)
{
    /* samples equal to the stacks' sum: no "[other stacks]" line */
    char *text = strdup(PROFILE_JSON);
    memcpy(strstr(text, "\"samples\":60"), "\"samples\":50", 12);
    struct profile *p = load(text);
    free(text);
    if (!p) return;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(export_collapsed(p, f), 0);
    fclose(f);
    CHECK(!strstr(buf, EXPORT_OTHER_STACKS));
    free(buf);
    profile_free(p);
}

static void test_speedscope(void)
{
    struct profile *p = load(PROFILE_JSON);
    if (!p) return;
    json_t *s = export_speedscope(p, "test", EXPORT_THREADS);
    CHECK(s != NULL);
    if (!s) {
        profile_free(p);
        return;
    }
    CHECK_STR(json_string_value(json_object_get(s, "$schema")),
              "https://www.speedscope.app/file-format-schema.json");
    json_t *frames = json_object_get(json_object_get(s, "shared"), "frames");
    /* 4 distinct frames + [other stacks]; <module> at lines 1 and 2 differ */
    CHECK_EQ(json_array_size(frames), 5);
    /* a profile without per-thread stacks (saved before they existed): one
     * profile for every thread */
    CHECK_EQ(json_array_size(json_object_get(s, "profiles")), 1);
    json_t *prof = json_array_get(json_object_get(s, "profiles"), 0);
    CHECK_STR(json_string_value(json_object_get(prof, "name")),
              "/p/dïr with space/main.py (all threads)");
    CHECK_STR(json_string_value(json_object_get(prof, "type")), "sampled");
    CHECK_STR(json_string_value(json_object_get(prof, "unit")), "seconds");
    json_t *samples = json_object_get(prof, "samples"), *weights = json_object_get(prof, "weights");
    CHECK_EQ(json_array_size(samples), 3);
    CHECK_EQ(json_array_size(weights), 3);
    double w = 0;
    for (size_t i = 0; i < json_array_size(weights); i++)
        w += json_real_value(json_array_get(weights, i));
    CHECK_NEAR(w, 0.6, 1e-9); /* the profile's seconds */
    CHECK_NEAR(json_real_value(json_object_get(prof, "endValue")), w, 1e-9);
    /* the heaviest stack, root first: <module>:1 then the library frame */
    json_t *st = json_array_get(samples, 0);
    CHECK_EQ(json_array_size(st), 3);
    json_t *root = json_array_get(frames, (size_t)json_integer_value(json_array_get(st, 0)));
    json_t *lib = json_array_get(frames, (size_t)json_integer_value(json_array_get(st, 1)));
    CHECK_STR(json_string_value(json_object_get(root, "name")), "<module> (/p/日本/main.py:1)");
    CHECK_STR(json_string_value(json_object_get(lib, "file")), "/usr/lib/python3.11/a;b%.py");
    CHECK_EQ(json_integer_value(json_object_get(lib, "line")), 7);
    /* speedscope names are not escaped: JSON carries any character */
    CHECK_STR(json_string_value(json_object_get(lib, "name")),
              "odd;name\nwith%newline (/usr/lib/python3.11/a;b%.py:7)");
    json_decref(s);
    profile_free(p);
}

/* Two threads of process 10 and samples of threads not told apart:
 *   stack a 0.3 s: MainThread 0.2, worker 0.1
 *   stack b 0.2 s: worker 0.15, 0.05 not told apart
 *   stack c 0.1 s: no parts (not told apart)
 *   0.2 s of the profile's 0.8 s in no stored stack: MainThread's seconds
 *   (0.35) have 0.15 beyond its stacks, the other 0.05 is not told apart. */
static const char *const THREADS_JSON =
    "{\"version\":1,\"program\":\"/p/t.py\",\"samples\":80,"
    "\"files\":{\"/p/t.py\":{\"lines\":{\"1\":{\"python_s\":0.8,\"samples\":80}}}},"
    "\"threads\":[{\"pid\":10,\"tid\":11,\"name\":\"worker\",\"python_s\":0.25,"
    "\"native_s\":0,\"system_s\":0},"
    "{\"pid\":10,\"tid\":10,\"name\":\"MainThread\",\"python_s\":0.3,\"native_s\":0.05,"
    "\"system_s\":0}],"
    "\"processes\":[{\"pid\":10,\"ppid\":1}],"
    "\"stacks\":["
    "{\"frames\":[{\"file\":\"/p/t.py\",\"name\":\"a\",\"line\":3}],\"samples\":30,"
    "\"seconds\":0.3,\"threads\":[{\"pid\":10,\"tid\":10,\"samples\":20,\"seconds\":0.2},"
    "{\"pid\":10,\"tid\":11,\"samples\":10,\"seconds\":0.1}]},"
    "{\"frames\":[{\"file\":\"/p/t.py\",\"name\":\"b\",\"line\":5}],\"samples\":20,"
    "\"seconds\":0.2,\"threads\":[{\"pid\":10,\"tid\":11,\"samples\":15,\"seconds\":0.15}]},"
    "{\"frames\":[{\"file\":\"/p/t.py\",\"name\":\"c\",\"line\":7}],\"samples\":10,"
    "\"seconds\":0.1}]}";

/* Sum of a speedscope profile's weights; checks endValue spans them. */
static double weight_of(const json_t *prof)
{
    double w = 0;
    json_t *weights = json_object_get(prof, "weights");
    for (size_t i = 0; i < json_array_size(weights); i++)
        w += json_real_value(json_array_get(weights, i));
    CHECK_NEAR(json_real_value(json_object_get(prof, "endValue")), w, 1e-9);
    CHECK_EQ(json_array_size(json_object_get(prof, "samples")), json_array_size(weights));
    return w;
}

/* The profile named name in a speedscope file (borrowed), or NULL. */
static json_t *profile_named(const json_t *ss, const char *name)
{
    json_t *profs = json_object_get(ss, "profiles");
    for (size_t i = 0; i < json_array_size(profs); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(profs, i), "name")), name))
            return json_array_get(profs, i);
    CHECK_FAIL("no speedscope profile named '%s'", name);
    return NULL;
}

/* Checks the speedscope file of the THREADS_JSON profile. */
static void check_threads_export(const struct profile *p)
{
    json_t *s = export_speedscope(p, "test", EXPORT_THREADS);
    CHECK(s != NULL);
    if (!s) return;
    json_t *profs = json_object_get(s, "profiles");
    CHECK_EQ(json_array_size(profs), 3);
    /* the main thread (tid = pid) opens (activeProfileIndex 0), though the
     * thread table lists the worker first */
    CHECK_STR(json_string_value(json_object_get(json_array_get(profs, 0), "name")),
              "MainThread (tid 10)");
    json_t *m = profile_named(s, "MainThread (tid 10)"), *w = profile_named(s, "worker (tid 11)"),
           *o = profile_named(s, "[other threads]");
    if (m && w && o) {
        CHECK_NEAR(weight_of(m), 0.35, 1e-9); /* = its seconds in the thread table */
        CHECK_NEAR(weight_of(w), 0.25, 1e-9);
        CHECK_NEAR(weight_of(o), 0.2, 1e-9);
        CHECK_EQ(json_array_size(json_object_get(m, "samples")), 2); /* a + [other stacks] */
        CHECK_EQ(json_array_size(json_object_get(w, "samples")), 2); /* a, b */
        CHECK_EQ(json_array_size(json_object_get(o, "samples")), 3); /* b, c, [other stacks] */
    }
    CHECK_STR(json_string_value(json_object_get(s, "name")), "/p/t.py");
    json_decref(s);
    /* the --html page merges them: one profile, every thread's seconds */
    s = export_speedscope(p, "test", 0);
    CHECK(s != NULL);
    if (!s) return;
    CHECK_EQ(json_array_size(json_object_get(s, "profiles")), 1);
    json_t *all = profile_named(s, "/p/t.py (all threads)");
    if (all) CHECK_NEAR(weight_of(all), 0.8, 1e-9);
    json_decref(s);
}

static void test_speedscope_threads(void)
{
    struct profile *p = load(THREADS_JSON);
    if (!p) return;
    check_threads_export(p);
    /* the folded stacks still merge every thread: totals unchanged */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(export_collapsed(p, f), 0);
    fclose(f);
    CHECK(strstr(buf, "a (/p/t.py:3) 30\n") && strstr(buf, "b (/p/t.py:5) 20\n"));
    CHECK(strstr(buf, EXPORT_OTHER_STACKS " 20\n") != NULL);
    free(buf);
    /* saved and read back, the per-thread parts are kept */
    json_t *j = profile_to_json(p);
    char *text = json_dumps(j, PROFILE_SAVE_FLAGS);
    json_decref(j);
    profile_free(p);
    p = text ? load(text) : NULL;
    free(text);
    if (!p) return;
    check_threads_export(p);
    profile_free(p);
}

/* Thread parts of a stack in a file: wrong types are refused, parts that
 * add up to more than the stack are cut to it. */
static void test_speedscope_bad_parts(void)
{
    json_error_t je;
    char err[256];
    const char *bad = "{\"version\":1,\"stacks\":[{\"frames\":[],\"samples\":1,\"seconds\":0.1,"
                      "\"threads\":[{\"pid\":1,\"tid\":\"x\",\"samples\":1,\"seconds\":0.1}]}]}";
    json_t *jb = json_loads(bad, 0, &je);
    struct profile *p = jb ? profile_from_json(jb, err, sizeof err) : NULL;
    CHECK(jb && !p);
    profile_free(p);
    json_decref(jb);
    struct profile *q =
        load("{\"version\":1,\"samples\":10,\"threads\":[{\"pid\":1,\"tid\":2,\"name\":\"T\","
             "\"python_s\":0.1}],\"stacks\":[{\"frames\":[],\"samples\":10,\"seconds\":0.1,"
             "\"threads\":[{\"pid\":1,\"tid\":2,\"samples\":50,\"seconds\":5}]}]}");
    if (!q) return;
    CHECK_EQ(q->nstacks, 1);
    if (q->nstacks == 1 && q->stacks[0]->nparts == 1) {
        CHECK_EQ(q->stacks[0]->parts[0].samples, 10);
        CHECK_NEAR(q->stacks[0]->parts[0].seconds, 0.1, 1e-12);
    } else {
        CHECK_FAIL("one part expected");
    }
    profile_free(q);
}

/* Threads that appear only in stack parts (not in the thread table), met
 * after the first stack not told apart and before the next one: profiles
 * made while the export runs; "[other threads]" still comes last. */
static void test_speedscope_late_threads(void)
{
    char text[8192];
    size_t k = (size_t)snprintf(text, sizeof text,
                                "{\"version\":1,\"program\":\"/p/l.py\",\"samples\":0,\"stacks\":["
                                "{\"frames\":[],\"samples\":30,\"seconds\":0.3},"
                                "{\"frames\":[{\"file\":\"/p/l.py\",\"name\":\"f\",\"line\":2}],"
                                "\"samples\":20,\"seconds\":0.2,\"threads\":[");
    for (int t = 0; t < 40; t++)
        k += (size_t)snprintf(text + k, sizeof text - k,
                              "%s{\"pid\":3,\"tid\":%d,\"samples\":0,\"seconds\":0.004}",
                              t ? "," : "", 100 + t);
    snprintf(text + k, sizeof text - k,
             "]},{\"frames\":[{\"file\":\"/p/l.py\",\"name\":\"g\",\"line\":3}],"
             "\"samples\":10,\"seconds\":0.1}]}");
    struct profile *p = load(text);
    if (!p) return;
    json_t *s = export_speedscope(p, "test", EXPORT_THREADS);
    CHECK(s != NULL);
    if (s) {
        json_t *profs = json_object_get(s, "profiles");
        CHECK_EQ(json_array_size(profs), 41);
        json_t *last = json_array_get(profs, json_array_size(profs) - 1);
        CHECK_STR(json_string_value(json_object_get(last, "name")), "[other threads]");
        CHECK_NEAR(weight_of(last), 0.3 + 0.04 + 0.1, 1e-9);
        CHECK_STR(json_string_value(json_object_get(json_array_get(profs, 0), "name")),
                  "thread (tid 100)");
        CHECK_NEAR(weight_of(json_array_get(profs, 0)), 0.004, 1e-9);
        json_decref(s);
    }
    profile_free(p);
}

/* Feeds one agent line to c; 0 or the apply error. */
static int feed(struct prof_conn *c, const char *line)
{
    struct agent_msg m;
    char err[160];
    if (agent_msg_parse(line, strlen(line), &m, err, sizeof err)) {
        CHECK_FAIL("test bug: %s: %s", err, line);
        return -1;
    }
    int rc = profile_conn_apply(c, &m);
    agent_msg_clear(&m);
    return rc;
}

/* From the wire: stack entries with a tid make per-thread profiles, one
 * without (an older agent) or with tid 0 (past the agent's thread cap)
 * goes to "[other threads]". */
static void test_speedscope_wire(void)
{
    struct profile *p = profile_new();
    struct prof_conn *c = p ? profile_conn_new(p) : NULL;
    if (!c) {
        CHECK_FAIL("ENOMEM");
        profile_free(p);
        return;
    }
    const char *lines[] = {
        "{\"t\":\"hello\",\"v\":1,\"pid\":500,\"ppid\":1}",
        "{\"t\":\"str\",\"id\":1,\"s\":\"/p/w.py\"}",
        "{\"t\":\"str\",\"id\":2,\"s\":\"f\"}",
        "{\"t\":\"stack\",\"id\":1,\"fr\":[[1,2,4]]}",
        "{\"t\":\"delta\",\"ts\":0.1,\"samples\":6,\"lines\":[{\"f\":1,\"l\":4,\"py\":0.6,\"n\":6}]"
        ","
        "\"stacks\":[[1,2,0.2,500],[1,1,0.1,501],[1,2,0.2,0],[1,1,0.1]],"
        "\"threads\":[{\"tid\":500,\"name\":\"MainThread\",\"py\":0.2},"
        "{\"tid\":501,\"name\":\"Thread-1 (work)\",\"py\":0.1},{\"tid\":502,\"py\":0.3}]}",
        "{\"t\":\"delta\",\"ts\":0.2,\"samples\":1,\"lines\":[{\"f\":1,\"l\":4,\"py\":0.1,\"n\":1}]"
        ","
        "\"stacks\":[[1,1,0.1,501]],\"threads\":[{\"tid\":501,\"py\":0.1}]}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        CHECK_EQ(feed(c, lines[i]), 0);
    CHECK_EQ(p->nstacks, 1);
    if (p->nstacks == 1) {
        CHECK_EQ(p->stacks[0]->samples, 7);
        CHECK_NEAR(p->stacks[0]->seconds, 0.7, 1e-9);
        CHECK_EQ(p->stacks[0]->nparts, 2);
    }
    json_t *s = export_speedscope(p, NULL, EXPORT_THREADS);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ(json_array_size(json_object_get(s, "profiles")), 3);
        json_t *m = profile_named(s, "MainThread (tid 500)"),
               *w = profile_named(s, "Thread-1 (work) (tid 501)"),
               *o = profile_named(s, "[other threads]");
        if (m) CHECK_NEAR(weight_of(m), 0.2, 1e-9);
        if (w) CHECK_NEAR(weight_of(w), 0.2, 1e-9);
        if (o) CHECK_NEAR(weight_of(o), 0.3, 1e-9);
        json_decref(s);
    }
    /* a child process: names carry the pid, both main threads come first */
    struct prof_conn *c2 = profile_conn_new(p);
    const char *child[] = {
        "{\"t\":\"hello\",\"v\":1,\"pid\":600,\"ppid\":500}",
        "{\"t\":\"str\",\"id\":1,\"s\":\"/p/w.py\"}",
        "{\"t\":\"str\",\"id\":2,\"s\":\"f\"}",
        "{\"t\":\"stack\",\"id\":1,\"fr\":[[1,2,4]]}",
        "{\"t\":\"delta\",\"ts\":0.1,\"samples\":1,\"stacks\":[[1,1,0.1,600]],"
        "\"threads\":[{\"tid\":600,\"name\":\"MainThread\",\"py\":0.1}]}",
    };
    for (size_t i = 0; c2 && i < sizeof child / sizeof *child; i++)
        CHECK_EQ(feed(c2, child[i]), 0);
    s = c2 ? export_speedscope(p, NULL, EXPORT_THREADS) : NULL;
    CHECK(s != NULL);
    if (s) {
        json_t *profs = json_object_get(s, "profiles");
        CHECK_EQ(json_array_size(profs), 4);
        CHECK_STR(json_string_value(json_object_get(json_array_get(profs, 0), "name")),
                  "MainThread (pid 500, tid 500)");
        CHECK_STR(json_string_value(json_object_get(json_array_get(profs, 1), "name")),
                  "MainThread (pid 600, tid 600)");
        json_t *w = profile_named(s, "Thread-1 (work) (pid 500, tid 501)");
        if (w) CHECK_NEAR(weight_of(w), 0.2, 1e-9);
        json_decref(s);
    }
    profile_conn_free(c2);
    profile_conn_free(c);
    profile_free(p);
}

static void test_html_escape(void)
{
    /* a name that would end the page's data block and start a script */
    char *text = strdup(PROFILE_JSON);
    const char *evil = "</script><script>x=1</script><!--";
    size_t at = (size_t)(strstr(text, "\"work\"") - text);
    char *t2 = malloc(strlen(text) + strlen(evil) + 8);
    sprintf(t2, "%.*s\"%s\"%s", (int)at, text, evil, text + at + strlen("\"work\""));
    free(text);
    struct profile *p = load(t2);
    free(t2);
    if (!p) return;
    char path[] = "/tmp/hotline-html-test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ(html_report_save(p, path), 0);
    FILE *f = fopen(path, "r");
    char *page = calloc(1, 1 << 20);
    size_t n = f ? fread(page, 1, (1 << 20) - 1, f) : 0;
    if (f) fclose(f);
    CHECK(n > 1000);
    int closes = 0;
    for (const char *s = page; (s = strstr(s, "</script>")); s++)
        closes++;
    CHECK_EQ(closes, 2); /* the page's own two script blocks, none from the data */
    CHECK(!strstr(page, "<!--\""));
    CHECK(strstr(page, "\\u003c/script>\\u003cscript>x=1") != NULL);
    CHECK(!strstr(page, "/*HOTLINE_DATA*/"));
    free(page);
    unlink(path);
    profile_free(p);
}

/* More threads on one stack than PROFILE_STACK_THREADS: the first ones get
 * parts, the rest stays in the stack's totals and "[other threads]". */
static void test_speedscope_part_cap(void)
{
    struct profile *p = profile_new();
    struct prof_conn *c = p ? profile_conn_new(p) : NULL;
    size_t cap = 64 + 40 * (PROFILE_STACK_THREADS + 50);
    char *delta = malloc(cap);
    if (!c || !delta) {
        CHECK_FAIL("ENOMEM");
        goto out;
    }
    CHECK_EQ(feed(c, "{\"t\":\"hello\",\"v\":1,\"pid\":7,\"ppid\":1}"), 0);
    CHECK_EQ(feed(c, "{\"t\":\"stack\",\"id\":1,\"fr\":[]}"), 0);
    size_t k = (size_t)snprintf(delta, cap, "{\"t\":\"delta\",\"ts\":1,\"samples\":0,\"stacks\":[");
    for (int t = 0; t < PROFILE_STACK_THREADS + 50; t++)
        k += (size_t)snprintf(delta + k, cap - k, "%s[1,1,0.01,%d]", t ? "," : "", 1000 + t);
    snprintf(delta + k, cap - k, "]}");
    CHECK_EQ(feed(c, delta), 0);
    CHECK_EQ(p->nstacks, 1);
    if (p->nstacks == 1) {
        CHECK_EQ(p->stacks[0]->nparts, PROFILE_STACK_THREADS);
        CHECK_EQ(p->stacks[0]->samples, PROFILE_STACK_THREADS + 50);
    }
    json_t *s = export_speedscope(p, NULL, EXPORT_THREADS);
    CHECK(s != NULL);
    if (s) {
        json_t *profs = json_object_get(s, "profiles");
        CHECK_EQ(json_array_size(profs), PROFILE_STACK_THREADS + 1);
        json_t *o = profile_named(s, "[other threads]");
        if (o) CHECK_NEAR(weight_of(o), 0.5, 1e-9);
        json_decref(s);
    }
out:
    free(delta);
    profile_conn_free(c);
    profile_free(p);
}

int main(void)
{
    test_collapsed();
    test_collapsed_no_rest();
    test_speedscope();
    test_speedscope_threads();
    test_speedscope_bad_parts();
    test_speedscope_late_threads();
    test_speedscope_wire();
    test_speedscope_part_cap();
    test_html_escape();
    return check_exit("run_export");
}
