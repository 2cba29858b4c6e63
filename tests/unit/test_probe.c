/* Unit tests for sampling/probe.h, the Python-or-C decision: synthetic probe
 * windows for bytecode, C code with and without the GIL, a thread too
 * starved to decide, and the loaded-VM cases that misread a pure-Python
 * loop as native in CI (a stretched pair that ends on a repeated frame
 * state while the thread's CPU clock advanced). */
#include "probe.h"
#include "check.h"

#define GAP 100e-6 /* a typical probe pair here */

/* One window: first probe at wall 0, then n pairs GAP apart; sigs[i] is the
 * frame state at probe i+1, cpu advances by run[i] over pair i. */
static int window(probe_t *p, const uint64_t *sigs, const double *run, int n, int nogil,
                  double tick_cpu)
{
    double cpu = 1.0, wall = 10.0;
    probe_start(p, 7, nogil, cpu, wall);
    for (int i = 0; i < n && !probe_done(p); i++) {
        cpu += run[i];
        wall += GAP;
        probe_pair(p, sigs[i], nogil, cpu, wall);
    }
    return probe_verdict(p, tick_cpu);
}

static void test_moving_is_python(void)
{
    probe_t p = {0};
    uint64_t s[] = {7, 7, 9};
    double r[] = {GAP, GAP, GAP};
    /* two chance repeats, then a change: bytecode ran */
    CHECK_EQ_U(window(&p, s, r, 3, 0, 10e-3), CAT_PY);
    CHECK_EQ_U(p.moved, 1);
}

#define N PROBE_MIN_PAIRS

static void frozen(uint64_t *s, double *r, int n, double run)
{
    for (int i = 0; i < n; i++)
        s[i] = 7, r[i] = run;
}

static void test_frozen_on_cpu_is_native(void)
{
    probe_t p = {0};
    uint64_t s[N];
    double r[N];
    frozen(s, r, N, GAP);
    CHECK_EQ_U(window(&p, s, r, N, 0, 10e-3), CAT_NAT);
    CHECK_EQ_U(p.frozen_n, N);
    /* frozen evidence, however much, never ends the window */
    CHECK(!probe_done(&p));
}

static void test_frozen_off_cpu_is_undecided(void)
{
    /* preempted the whole window: frozen, but it never ran */
    probe_t p = {0};
    uint64_t s[N];
    double r[N];
    frozen(s, r, N, 0);
    CHECK(window(&p, s, r, N, 0, 10e-3) == -1);
}

static void test_chance_repeats_are_not_native(void)
{
    /* plenty of CPU on N-1 frozen pairs, then the window ends: a tight loop
     * lands on the same state in ~40% of pairs; one more pair is needed */
    probe_t p = {0};
    uint64_t s[N];
    double r[N];
    frozen(s, r, N - 1, GAP);
    CHECK(window(&p, s, r, N - 1, 0, 10e-3) == -1);
    CHECK(p.frozen_s >= PROBE_MIN_FROZEN);
    /* N pairs of 2 us each (a burst) are not enough CPU either */
    probe_t q = {0};
    frozen(s, r, N, 2e-6);
    CHECK(window(&q, s, r, N, 0, 10e-3) == -1);
    /* a freeze followed by a movement is Python: the freeze was a vCPU
     * taken away by the hypervisor */
    probe_t m = {0};
    uint64_t s2[N + 1];
    double r2[N + 1];
    frozen(s2, r2, N + 1, GAP);
    s2[N] = 9;
    CHECK_EQ_U(window(&m, s2, r2, N + 1, 0, 10e-3), CAT_PY);
}

static void test_stretched_pair_proves_nothing_frozen(void)
{
    /* the sampler woke 3 ms late: the thread's clock advanced 3 ms (steal
     * is counted as run time until the vCPU is back) and the state is the
     * same by chance */
    probe_t p = {0};
    probe_start(&p, 7, 0, 1.0, 10.0);
    probe_pair(&p, 7, 0, 1.003, 10.003);
    CHECK_EQ_U(p.frozen_n, 0);
    CHECK(p.frozen_s == 0);
    CHECK(probe_verdict(&p, 10e-3) == -1);
    /* a movement across a stretched pair still counts */
    probe_pair(&p, 8, 0, 1.006, 10.006);
    CHECK_EQ_U(probe_verdict(&p, 10e-3), CAT_PY);
}

static void test_nogil_c_code(void)
{
    /* frozen, GIL held by someone else at both ends, 30 us+ of CPU */
    probe_t p = {0};
    uint64_t s[] = {7};
    double r[] = {40e-6};
    CHECK_EQ_U(window(&p, s, r, 1, 1, 10e-3), CAT_NAT);
    CHECK(probe_done(&p));
    /* the same while holding the GIL is one pair only: undecided */
    probe_t q = {0};
    CHECK(window(&q, s, r, 1, 0, 10e-3) == -1);
}

/* A window of n frozen pairs on state 7 starting at cpu/wall 2.0/20.0. */
static void short_window(probe_t *p, int n)
{
    probe_start(p, 7, 0, 2.0, 20.0);
    for (int i = 1; i <= n; i++)
        probe_pair(p, 7, 0, 2.0 + i * 10e-6, 20.0 + i * 10e-6);
}

static void test_frozen_since_previous_tick(void)
{
    probe_t p = {0};
    uint64_t s[N];
    double r[N];
    frozen(s, r, N, GAP);
    window(&p, s, r, N, 0, 10e-3);
    /* next tick (the thread got little CPU in this window): same state as
     * the last one, N/2 frozen pairs now, 5 ms of CPU since: still in the
     * same C call */
    short_window(&p, N / 2);
    CHECK_EQ_U(probe_verdict(&p, 5e-3), CAT_NAT);
    /* but not after too little CPU since the previous tick */
    CHECK(probe_verdict(&p, 0.5e-3) == -1);
    /* nor on fewer frozen pairs now (two chance repeats in a row) */
    short_window(&p, N / 2 - 1);
    CHECK(probe_verdict(&p, 5e-3) == -1);
    /* a loop back at the same sleep call (no GIL at either tick, no CPU in
     * this window) after 3 ms of Python in between is not C code */
    probe_t z = {0};
    probe_start(&z, 9, 1, 1.0, 10.0);
    probe_start(&z, 9, 1, 1.003, 10.010);
    for (int i = 1; i <= N; i++)
        probe_pair(&z, 9, 1, 1.003, 10.010 + i * 20e-6);
    CHECK(probe_verdict(&z, 3e-3) == -1);
    /* the same state burning CPU without the GIL is */
    probe_pair(&z, 9, 1, 1.003 + 10e-6, 10.010 + (N + 1) * 20e-6);
    CHECK_EQ_U(probe_verdict(&z, 3e-3), CAT_NAT);
    /* a thread not probed last tick has no previous state to match */
    probe_t q = {0};
    probe_start(&q, 0, 0, 0, 0);
    short_window(&q, N / 2);
    CHECK(probe_verdict(&q, 5e-3) == -1);
}

/* A thread in a long C call without the GIL gets one sleep for the rest
 * of the no-GIL CPU it needs instead of 20 us rounds; everything else
 * keeps the round length. */
static void test_gap(void)
{
    const double g = 20e-6;
    probe_t p = {0};
    probe_start(&p, 0x11, 1, 0, 0);
    /* nat last tick, busy all along, no GIL: all of PROBE_MIN_NOGIL (+5 us) */
    CHECK(probe_gap(&p, CAT_NAT, 1.0, g) > PROBE_MIN_NOGIL);
    CHECK(probe_gap(&p, CAT_NAT, 1.0, g) < PROBE_MIN_NOGIL + 10e-6);
    /* after 12 us of no-GIL CPU: the rest */
    probe_pair(&p, 0x11, 1, 12e-6, 15e-6);
    CHECK_EQ_U(p.frozen_n, 1);
    double rest = probe_gap(&p, CAT_NAT, 1.0, g);
    CHECK(rest > PROBE_MIN_NOGIL - 12e-6 && rest < PROBE_MIN_NOGIL - 12e-6 + 10e-6);
    /* nearly there: never below the round length */
    probe_pair(&p, 0x11, 1, 28e-6, 30e-6);
    CHECK(probe_gap(&p, CAT_NAT, 1.0, g) == g);
    /* a thread that was python last tick (a loop that now sleeps: its
     * wake-up must not fall into a longer window), one that was not busy,
     * one holding the GIL, one that moved: rounds */
    probe_t q = {0};
    probe_start(&q, 0x22, 1, 0, 0);
    CHECK(probe_gap(&q, CAT_PY, 1.0, g) == g);
    CHECK(probe_gap(&q, CAT_NAT, 0.5, g) == g);
    probe_t h = {0};
    probe_start(&h, 0x33, 0, 0, 0);
    CHECK(probe_gap(&h, CAT_NAT, 1.0, g) == g);
    probe_pair(&q, 0x23, 1, 5e-6, 20e-6);
    CHECK(probe_gap(&q, CAT_NAT, 1.0, g) == g);
}

int main(void)
{
    test_moving_is_python();
    test_frozen_on_cpu_is_native();
    test_frozen_off_cpu_is_undecided();
    test_chance_repeats_are_not_native();
    test_stretched_pair_proves_nothing_frozen();
    test_nogil_c_code();
    test_frozen_since_previous_tick();
    test_gap();
    return check_exit("probe");
}
