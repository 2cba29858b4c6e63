/* test_memprof.c: the leak rule of server/memprof.c on synthetic kept-MB
 * timelines (no agent, no sampling noise): steady growth is a leak with its
 * slope as rate; churn, a filled-then-flat cache, memory freed at the end,
 * a single burst and amounts under 1 MB are not. Also the JSON round trip of
 * timelines and leaks through the store. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "store/memprof.h"
#include "store/profile.h"

#define N 50

static int analyse(double (*f)(double), double end, struct memprof_leak *l)
{
    double t[N], v[N];
    for (int i = 0; i < N; i++) {
        t[i] = 0.1 * (i + 1);
        v[i] = f(t[i]);
    }
    return memprof_analyse(t, v, N, end, l);
}

static double leak(double t)
{
    return 10 * t;
} /* 10 MB/s */
static double leak_small(double t)
{
    return floor(t * 2);
} /* steps: 2 MB/s */
static double churn(double t)
{
    return fmod(t * 37, 3.0);
} /* up and down */
static double cache(double t)
{
    return t < 2 ? 10 * t : 20;
} /* fills, then flat */
static double freed(double t)
{
    return t < 4.9 ? 10 * t : 0;
}
static double burst(double t)
{
    return t < 0.3 ? 0 : 30;
}
static double tiny(double t)
{
    return 0.1 * t;
} /* 0.5 MB in all */

int main(void)
{
    struct memprof_leak l;
    CHECK(analyse(leak, 5.0, &l) == 1);
    CHECK(fabs(l.rate_mb_s - 10) < 1 && fabs(l.kept_mb - 50) < 0.01 && l.likelihood > 0.9);
    CHECK(analyse(leak_small, 5.0, &l) == 1);
    CHECK(fabs(l.rate_mb_s - 2) < 0.5);
    CHECK(analyse(churn, 5.0, &l) == 0);
    CHECK(analyse(cache, 5.0, &l) == 0);
    CHECK(analyse(freed, 5.0, &l) == 0);
    CHECK(analyse(burst, 5.0, &l) == 0);
    CHECK(analyse(tiny, 5.0, &l) == 0);
    /* a leak that stopped long before the end reads as flat: not flagged */
    CHECK(analyse(leak, 20.0, &l) == 0);

    /* volume points inside delta periods (the agent's kept_pts): a line that
     * keeps 500 MB in 0.35 s sends ~150 of them; the timeline keeps its
     * first point, stays about even in time when thinned, and flags the
     * leak with its rate */
    struct memprof *v = memprof_new();
    CHECK(v != NULL);
    if (v) {
        static const char path[] = "/x/fast.py";
        double base = 0;
        for (int period = 0; period < 4; period++) {
            struct agent_kept_pt pts[41];
            double t1 = 0.1 * (period + 1) < 0.35 ? 0.1 * (period + 1) : 0.35;
            for (int i = 0; i < 40; i++) {
                double t = 0.1 * period + (t1 - 0.1 * period) * (i + 1) / 41.0;
                pts[i] = (struct agent_kept_pt){t, 500 * t / 0.35 - base};
            }
            pts[40] = (struct agent_kept_pt){t1 + 1, 1.0}; /* after ts: skipped */
            memprof_line_points(v, path, 7, pts, 41, base, t1);
            base = 500 * t1 / 0.35;
            memprof_line_point(v, path, 7, t1, base);
        }
        memprof_touch(v, 0.36);
        json_t *ln = json_object();
        memprof_json_line(v, path, 7, ln);
        json_t *tl = json_object_get(ln, "memory_timeline");
        CHECK(json_array_size(tl) == MEMPROF_POINTS);
        double first = json_number_value(json_array_get(json_array_get(tl, 0), 0));
        CHECK(fabs(first - 0.1 / 41) < 1e-3); /* the first point of the run */
        double gap = 0;
        for (size_t i = 1; i < json_array_size(tl); i++) {
            double g = json_number_value(json_array_get(json_array_get(tl, i), 0)) -
                       json_number_value(json_array_get(json_array_get(tl, i - 1), 0));
            if (g > gap) gap = g;
        }
        CHECK(gap < 2 * 0.35 / (MEMPROF_POINTS - 1)); /* even in time */
        /* the same points, typed (what the hover's sparkline reads) */
        const double *tt, *tv;
        CHECK(memprof_line_timeline(v, path, 7, &tt, &tv) == MEMPROF_POINTS);
        CHECK(fabs(tt[0] - first) < 1e-3 && fabs(tt[MEMPROF_POINTS - 1] - 0.35) < 1e-3);
        CHECK(fabs(tv[MEMPROF_POINTS - 1] - 500) < 1e-3);
        CHECK(memprof_line_timeline(v, path, 8, &tt, &tv) == 0); /* no such line */
        json_t *last = json_array_get(tl, json_array_size(tl) - 1);
        CHECK(fabs(json_number_value(json_array_get(last, 0)) - 0.35) < 1e-3);
        CHECK(fabs(json_number_value(json_array_get(last, 1)) - 500) < 1e-3);
        /* the leak rule on the thinned timeline (profile_leaks walks a
         * file's line records, which this store-less test has none of) */
        double ts[MEMPROF_POINTS], vs[MEMPROF_POINTS];
        int nt = 0;
        for (size_t i = 0; i < json_array_size(tl) && nt < MEMPROF_POINTS; i++, nt++) {
            ts[nt] = json_number_value(json_array_get(json_array_get(tl, i), 0));
            vs[nt] = json_number_value(json_array_get(json_array_get(tl, i), 1));
        }
        struct memprof_leak fl;
        CHECK(memprof_analyse(ts, vs, nt, 0.36, &fl) == 1);
        CHECK(fabs(fl.rate_mb_s - 500 / 0.35) < 0.05 * 500 / 0.35);
        json_decref(ln);
        memprof_free(v);
    }

    /* store round trip: timelines and the leaks computed from them */
    struct profile *p = profile_new();
    CHECK(p != NULL);
    json_t *root = json_pack("{s:i,s:s,s:{s:{s:{s:{s:f,s:f,s:[[f,f],[f,f],[f,f],[f,f],[f,f]]}}}}}",
                             "version", 1, "program", "/x/a.py", "files", "/x/a.py", "lines", "3",
                             "alloc_mb", 50.0, "python_s", 1.0, "memory_timeline", 1.0, 10.0, 2.0,
                             20.0, 3.0, 30.0, 4.0, 40.0, 5.0, 50.0);
    char err[200] = "";
    struct profile *q = profile_from_json(root, err, sizeof err);
    CHECK(q != NULL);
    if (q) {
        json_t *out = profile_to_json(q);
        json_t *lk =
            json_object_get(json_object_get(json_object_get(out, "files"), "/x/a.py"), "leaks");
        CHECK(json_array_size(lk) == 1);
        CHECK(json_integer_value(json_object_get(json_array_get(lk, 0), "line")) == 3);
        json_t *ln = json_object_get(
            json_object_get(json_object_get(json_object_get(out, "files"), "/x/a.py"), "lines"),
            "3");
        CHECK(json_array_size(json_object_get(ln, "memory_timeline")) == 5);
        CHECK(fabs(json_number_value(json_object_get(ln, "kept_mb")) - 50) < 1e-9);
        /* the leak set (what the editor's diagnostics read) holds the same
         * leaks as the saved profile's list, without going through JSON */
        struct memprof_leak_set *ls = profile_leak_set_new(q);
        CHECK(ls && ls->n == 1);
        if (ls && ls->n == 1) {
            json_t *e = json_array_get(lk, 0);
            CHECK(!strcmp(ls->files[0].path, "/x/a.py") && ls->files[0].n == 1);
            CHECK(ls->files[0].l[0].line == 3);
            CHECK(fabs(ls->files[0].l[0].rate_mb_s -
                       json_number_value(json_object_get(e, "rate_mb_s"))) < 1e-9);
            CHECK(fabs(ls->files[0].l[0].kept_mb -
                       json_number_value(json_object_get(e, "kept_mb"))) < 1e-9);
        }
        memprof_leak_set_free(ls);
        CHECK(profile_leak_set_new(NULL) == NULL); /* no profile, no leaks */
        json_decref(out);
        profile_free(q);
    } else {
        fprintf(stderr, "load: %s\n", err);
    }
    json_decref(root);
    profile_free(p);
    return check_exit("test_memprof");
}
