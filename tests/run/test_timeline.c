/* The timeline (server/store/timeline.c) and the pictures that show time
 * (speedscope's time order, the Firefox Profiler's gecko file): ticks are
 * kept in order and bounded by merging, never by losing the end of a run;
 * processes share one clock; a saved profile keeps its timeline; the
 * exports replay the program's phases in the order they came. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "store/export.h"
#include "store/gecko.h"
#include "store/profile.h"
#include "store/timeline.h"

/* Three times PROFILE_MAX_TICKS ticks (0.1 s periods, two threads, three
 * stacks): the count stays under the cap, the grain coarsens, nothing of the
 * totals or of the span is lost, and the order holds. */
static void test_bound(void)
{
    struct prof_timeline tl = {0};
    static const int fake[3];
    double sec = 0;
    long long n = 0;
    size_t total = 3 * (size_t)PROFILE_MAX_TICKS, failed = 0;
    for (size_t i = 0; i < total; i++) {
        size_t period = i / 6;
        double t0 = 0.1 * (double)period;
        failed += timeline_add(&tl, (const struct prof_stack *)&fake[i % 3], 100,
                               100 + (long long)(i % 2), t0, t0 + 0.1, 2, 0.02) != 0;
        sec += 0.02;
        n += 2;
    }
    CHECK_EQ_U(failed, 0);
    CHECK(tl.n <= PROFILE_MAX_TICKS);
    CHECK(tl.bucket_s >= 0.2);
    CHECK_EQ(tl.dropped, 0);
    size_t ns;
    struct prof_tick *v = timeline_sorted(&tl, &ns);
    CHECK_EQ_U(ns, tl.n);
    double got = 0, last_t1 = -1;
    long long gotn = 0;
    int ordered = 1;
    for (size_t i = 0; v && i < ns; i++) {
        got += v[i].seconds;
        gotn += v[i].samples;
        if (v[i].t1 < last_t1) ordered = 0;
        last_t1 = v[i].t1;
    }
    CHECK(ordered);
    CHECK_NEAR(got, sec, 1e-6 * sec);
    CHECK_EQ(gotn, n);
    CHECK_NEAR(v ? v[0].t0 : -1, 0, 1e-9);
    CHECK_NEAR(last_t1, 0.1 * (double)((total - 1) / 6) + 0.1, 1e-6); /* the end is kept */
    free(v);
    timeline_free(&tl);
}

/* The first agent that says where its ts 0 is sets the origin; a later
 * one (a child, started 2.5 s after) is placed after it. */
static void test_offset(void)
{
    struct prof_timeline tl = {0};
    CHECK_NEAR(timeline_offset(&tl, 0), 0, 0); /* an agent that did not say */
    CHECK_NEAR(timeline_offset(&tl, 1000.0), 0, 0);
    CHECK_NEAR(timeline_offset(&tl, 1002.5), 2.5, 1e-9);
    CHECK_NEAR(tl.unix0, (double)time(NULL), 1e6); /* a wall-clock second, not 0 */
    CHECK(tl.unix0 > 1.6e9);
    timeline_free(&tl);
}

/* Two stacks, one thread: A for 0.3 s, B for 0.2 s, A again for 0.1 s. */
static const char *const PROFILE_JSON =
    "{\"version\":1,\"program\":\"/p/ph\\u00e4se.py\",\"samples\":60,\"interval_ms\":10,"
    "\"files\":{},"
    "\"stacks\":["
    "{\"frames\":[{\"file\":\"/p/ph\\u00e4se.py\",\"name\":\"alpha\",\"line\":3}],"
    "\"samples\":40,\"seconds\":0.4,\"threads\":[{\"pid\":7,\"tid\":7,\"samples\":40,"
    "\"seconds\":0.4}]},"
    "{\"frames\":[{\"file\":\"/p/ph\\u00e4se.py\",\"name\":\"beta\",\"line\":8}],"
    "\"samples\":20,\"seconds\":0.2,\"threads\":[{\"pid\":7,\"tid\":7,\"samples\":20,"
    "\"seconds\":0.2}]}],"
    "\"threads\":[{\"pid\":7,\"tid\":7,\"name\":\"MainThread\",\"python_s\":0.6,"
    "\"native_s\":0,\"system_s\":0}],"
    "\"processes\":[{\"pid\":7,\"ppid\":1,\"python\":\"3.11\",\"argv\":[\"ph.py\"],"
    "\"end\":\"exit\"}],"
    "\"timeline\":{\"bucket_s\":0,\"origin_unix_s\":1.7e9,\"dropped\":0,\"ticks\":["
    "[0.0,0.1,7,7,0,10,0.1],[0.1,0.2,7,7,0,10,0.1],[0.2,0.3,7,7,0,10,0.1],"
    "[0.3,0.4,7,7,1,10,0.1],[0.4,0.5,7,7,1,10,0.1],[0.5,0.6,7,7,0,10,0.1]]}}";

static struct profile *load(const char *text, char *err, size_t errlen)
{
    json_t *j = json_loads(text, 0, NULL);
    if (!j) return NULL;
    struct profile *p = profile_from_json(j, err, errlen);
    json_decref(j);
    return p;
}

/* The leaf frame names of speedscope profile 0's samples, "a b a". */
static void speedscope_order(const json_t *ss, char *out, size_t n)
{
    const json_t *frames = json_object_get(json_object_get(ss, "shared"), "frames");
    const json_t *prof = json_array_get(json_object_get(ss, "profiles"), 0);
    const json_t *samples = json_object_get(prof, "samples");
    out[0] = 0;
    for (size_t i = 0; i < json_array_size(samples); i++) {
        const json_t *st = json_array_get(samples, i);
        json_int_t leaf = json_integer_value(json_array_get(st, json_array_size(st) - 1));
        const char *name = json_string_value(json_object_get(json_array_get(frames, leaf), "name"));
        size_t k = strlen(out);
        snprintf(out + k, n - k, "%s%c", k ? " " : "", name ? name[0] : '?');
    }
}

static void test_saved_and_exports(void)
{
    char err[256] = "";
    struct profile *p = load(PROFILE_JSON, err, sizeof err);
    if (!p) {
        CHECK_FAIL("load: %s", err);
        return;
    }
    CHECK_EQ_U(p->tl.n, 6);
    char order[64];
    json_t *ss = export_speedscope(p, "test", EXPORT_THREADS);
    speedscope_order(ss, order, sizeof order);
    CHECK_STR(order, "a b a"); /* time order, consecutive samples of a stack merged */
    const json_t *w =
        json_object_get(json_array_get(json_object_get(ss, "profiles"), 0), "weights");
    CHECK_NEAR(json_real_value(json_array_get(w, 0)), 0.3, 1e-9);
    CHECK_NEAR(json_real_value(json_array_get(w, 1)), 0.2, 1e-9);
    CHECK_NEAR(json_real_value(json_array_get(w, 2)), 0.1, 1e-9);
    json_decref(ss);

    /* saved and read back: the same order */
    json_t *saved = profile_to_json(p);
    char *text = json_dumps(saved, 0);
    struct profile *q = text ? load(text, err, sizeof err) : NULL;
    CHECK(json_object_get(saved, "timeline") != NULL);
    if (q) {
        CHECK_EQ_U(q->tl.n, 6);
        ss = export_speedscope(q, "test", EXPORT_THREADS);
        speedscope_order(ss, order, sizeof order);
        CHECK_STR(order, "a b a");
        json_decref(ss);
        profile_free(q);
    } else {
        CHECK_FAIL("reload: %s", err);
    }
    free(text);
    json_decref(saved);

    /* gecko: samples sorted in time, 60 of them, a tree of stacks, the
     * process's phase marker over the run */
    json_t *g = export_gecko(p, "test");
    const json_t *meta = json_object_get(g, "meta");
    CHECK_EQ(json_integer_value(json_object_get(meta, "version")), GECKO_VERSION);
    CHECK_NEAR(json_number_value(json_object_get(meta, "startTime")), 1.7e12, 1);
    const json_t *th = json_array_get(json_object_get(g, "threads"), 0);
    CHECK_STR(json_string_value(json_object_get(th, "name")), "MainThread");
    const json_t *data = json_object_get(json_object_get(th, "samples"), "data");
    CHECK_EQ_U(json_array_size(data), 60);
    double prev = -1;
    int sorted = 1, switches = 0;
    json_int_t prev_stack = -1;
    for (size_t i = 0; i < json_array_size(data); i++) {
        const json_t *row = json_array_get(data, i);
        double t = json_number_value(json_array_get(row, 1));
        json_int_t st = json_integer_value(json_array_get(row, 0));
        if (t < prev) sorted = 0;
        if (prev_stack >= 0 && st != prev_stack) switches++;
        prev = t;
        prev_stack = st;
    }
    CHECK(sorted);
    CHECK_EQ(switches, 2);    /* alpha -> beta -> alpha */
    CHECK_NEAR(prev, 595, 1); /* the last sample near 0.6 s */
    const json_t *mk = json_array_get(json_object_get(json_object_get(th, "markers"), "data"), 0);
    const json_t *strs = json_object_get(th, "stringTable");
    CHECK_STR(json_string_value(json_array_get(strs, json_integer_value(json_array_get(mk, 0)))),
              "Process");
    CHECK_EQ(json_integer_value(json_array_get(mk, 3)), 1); /* an interval */
    json_decref(g);
    profile_free(p);

    /* a tick naming a stack the profile lacks: refused with a reason */
    char *bad = strdup(PROFILE_JSON);
    char *at = strstr(bad, "[0.5,0.6,7,7,0,");
    if (at) at[13] = '5'; /* stack 5 of 2 */
    CHECK(load(bad, err, sizeof err) == NULL);
    CHECK(strstr(err, "timeline") != NULL);
    free(bad);
}

int main(void)
{
    test_bound();
    test_offset();
    test_saved_and_exports();
    return check_exit("run_timeline");
}
