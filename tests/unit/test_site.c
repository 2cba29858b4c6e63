/* Unit tests for sampling/site.h, the Python-or-C decision from the
 * innermost frame's instruction: the classes of a code object's units
 * (EXTENDED_ARG prefixes, inline caches), and the verdict from the site,
 * the probe window and the site's history, including the loaded-machine
 * case the probe alone got wrong (issue 23: an undecided window kept the
 * previous segment's category). */
#include "site.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static int toy_effect(int op, int oparg, int jump)
{
    (void)jump;
    switch (op) {
    case 1:
        return 1;
    case 2:
        return -oparg;
    case 3:
        return -1;
    case 5:
        return -1;
    case 6:
    case 8:
        return 0;
    default:
        return INT32_MIN;
    }
}

/* A toy opcode set: 1 LOAD (py), 2 CALL (2 caches), 3 BINARY_OP (1 cache),
 * 9 EXTENDED_ARG, 7 a specialized CALL (CALL's class and caches), 0 CACHE. */
static site_ops_t toy_ops(void)
{
    site_ops_t o;
    memset(&o, 0, sizeof o);
    o.cls[1] = SITE_PY;
    o.cls[2] = o.cls[7] = SITE_CALL;
    o.caches[2] = o.caches[7] = 2;
    o.cls[3] = SITE_OP;
    o.caches[3] = 1;
    o.cls[9] = SITE_EXT;
    return o;
}

static void test_classify(void)
{
    site_ops_t o = toy_ops();
    /* LOAD; EXTENDED_ARG CALL c c; BINARY_OP c; specialized CALL whose
     * caches hold counters that look like opcodes (2, 3) */
    uint8_t code[] = {1, 0, 9, 1, 2, 3, 0, 0, 0, 0, 3, 0, 0, 0, 7, 1, 2, 2, 3, 3};
    uint8_t out[10];
    memset(out, 0xee, sizeof out);
    CHECK_EQ_U(site_classify(&o, code, 10, out), 10);
    uint8_t want[] = {SITE_PY, SITE_CALL, SITE_CALL, SITE_CALL, SITE_CALL,
                      SITE_OP, SITE_OP,   SITE_CALL, SITE_CALL, SITE_CALL};
    for (int i = 0; i < 10; i++)
        CHECK_EQ_U(out[i], want[i]);
    /* a trailing EXTENDED_ARG (truncated read) has no instruction */
    uint8_t tail[] = {1, 0, 9, 0};
    CHECK_EQ_U(site_classify(&o, tail, 2, out), 2);
    CHECK_EQ_U(out[1], SITE_NONE);
    /* caches running past the end stop there */
    uint8_t cut[] = {2, 0, 0, 0};
    CHECK_EQ_U(site_classify(&o, cut, 2, out), 2);
    CHECK_EQ_U(out[1], SITE_CALL);
}

static void test_bytecode_is_python(void)
{
    /* at a bytecode instruction: Python, whatever the window saw (a frozen
     * window there is a CPU taken away, not C code) */
    CHECK_EQ(site_verdict(SITE_PY, NULL, -1, NULL, 1, NULL), CAT_PY);
    CHECK_EQ(site_verdict(SITE_PY, NULL, CAT_NAT, NULL, 1, NULL), CAT_PY);
}

static void test_call_without_cpu_is_native(void)
{
    /* the loaded-machine case: the thread got no CPU in the window, so the
     * probe is undecided; the old rule kept the previous segment's
     * category (Python), the site says the thread is in its C callee */
    CHECK_EQ(site_verdict(SITE_CALL, NULL, -1, NULL, 1, NULL), CAT_NAT);
    /* an operator without history: most are on builtin types */
    CHECK_EQ(site_verdict(SITE_OP, NULL, -1, NULL, 1, NULL), CAT_PY);
}

static void test_probe_decides_when_it_can(void)
{
    /* a short call (perf_counter() in a Python loop) returned inside the
     * window: Python's own overhead, as before */
    probe_t q = {0};
    probe_start(&q, 7, 0, 1.0, 10.0);
    probe_pair(&q, 8, 0, 1.0 + 20e-6, 10.0 + 20e-6);
    int learn = 0;
    CHECK_EQ(site_verdict(SITE_CALL, &q, CAT_PY, NULL, 1, &learn), CAT_PY);
    CHECK_EQ(learn, CAT_PY);
    /* the same movement seen only after 2 ms of CPU (a stretched pair on a
     * loaded machine): the call may have lasted; no history: native, and
     * nothing learnt */
    probe_start(&q, 7, 0, 1.0, 10.0);
    probe_pair(&q, 8, 0, 1.0 + 2e-3, 10.0 + 3e-3);
    CHECK_EQ(probe_verdict(&q, 10e-3), CAT_PY);
    CHECK_EQ(site_verdict(SITE_CALL, &q, CAT_PY, NULL, 1, &learn), CAT_NAT);
    CHECK_EQ(learn, -1);
    CHECK_EQ(site_verdict(SITE_OP, NULL, CAT_NAT, NULL, 1, NULL), CAT_NAT);
    /* no site (CACHE, instrumented line, no tables): the probe alone, -1
     * keeps the last category */
    CHECK_EQ(site_verdict(SITE_NONE, NULL, -1, NULL, 1, NULL), -1);
    CHECK_EQ(site_verdict(SITE_NONE, NULL, CAT_NAT, NULL, 1, NULL), CAT_NAT);
}

static void test_call_that_lasted_is_native(void)
{
    /* sorted() of 20000 floats: frozen in C for ~1 ms after the sample
     * (a burst of pairs a few us of CPU apart), then it returned inside the
     * window (the probe says it moved) */
    probe_t p = {0};
    probe_start(&p, 7, 0, 1.0, 10.0);
    double cpu = 1.0, wall = 10.0;
    for (int i = 0; i < SITE_MIN_PAIRS; i++)
        probe_pair(&p, 7, 0, cpu += 1.5e-6, wall += 1.5e-6);
    CHECK(site_window_done(&p));
    probe_pair(&p, 9, 0, cpu += 20e-6, wall += 20e-6);
    CHECK_EQ(probe_verdict(&p, 10e-3), CAT_PY);
    CHECK_EQ(site_verdict(SITE_CALL, &p, CAT_PY, NULL, 1, NULL), CAT_NAT);
    /* a short call in a Python loop: chance repeats, then it moved. On
     * 3.12/3.13 `while pc() < end: pass` is inside perf_counter() ~90% of
     * the time with the same frame state: 8 repeats are common (43%), and
     * so is a sorted() that ended 12 us after the sample: the site's
     * history decides (learnt from the conclusive windows) */
    probe_t q = {0};
    probe_start(&q, 7, 0, 1.0, 10.0);
    cpu = 1.0, wall = 10.0;
    for (int i = 0; i < 8; i++)
        probe_pair(&q, 7, 0, cpu += 1.5e-6, wall += 1.5e-6);
    probe_pair(&q, 8, 0, cpu += 1.5e-6, wall += 1.5e-6);
    CHECK(!site_window_done(&q));
    site_hist_t h = {.key = 1, .py = 5, .nat = 1};
    int learn = 0;
    CHECK_EQ(site_verdict(SITE_CALL, &q, probe_verdict(&q, 10e-3), &h, 1, &learn), CAT_PY);
    CHECK_EQ(learn, -1);
    h.py = 1, h.nat = 5;
    CHECK_EQ(site_verdict(SITE_CALL, &q, probe_verdict(&q, 10e-3), &h, 1, NULL), CAT_NAT);
    /* fewer than SITE_FEW_PAIRS repeats: a short call, learnt */
    probe_start(&q, 7, 0, 1.0, 10.0);
    cpu = 1.0, wall = 10.0;
    for (int i = 0; i < SITE_FEW_PAIRS - 1; i++)
        probe_pair(&q, 7, 0, cpu += 1.5e-6, wall += 1.5e-6);
    probe_pair(&q, 8, 0, cpu += 1.5e-6, wall += 1.5e-6);
    CHECK_EQ(site_verdict(SITE_CALL, &q, probe_verdict(&q, 10e-3), &h, 1, &learn), CAT_PY);
    CHECK_EQ(learn, CAT_PY);
    /* enough frozen pairs but too little CPU in them: not yet */
    probe_start(&q, 7, 0, 1.0, 10.0);
    cpu = 1.0, wall = 10.0;
    for (int i = 0; i < SITE_MIN_PAIRS; i++)
        probe_pair(&q, 7, 0, cpu += 0.5e-6, wall += 0.5e-6);
    CHECK(!site_window_done(&q));
    /* numpy's a @ b (~200 us, the GIL released around its BLAS) returned
     * before the first pair: it burnt CPU without the GIL from the window's
     * start, C code; not learnt (a short read releases the GIL too) */
    probe_start(&q, 7, 1, 1.0, 10.0);
    probe_pair(&q, 8, 0, 1.0 + 60e-6, 10.0 + 60e-6);
    CHECK_EQ(site_verdict(SITE_CALL, &q, probe_verdict(&q, 10e-3), NULL, 1, &learn), CAT_NAT);
    CHECK_EQ(learn, -1);
    /* ...but not without CPU (a thread woken for the GIL, not yet run):
     * an operator without history stays Python */
    probe_start(&q, 7, 1, 1.0, 10.0);
    probe_pair(&q, 7, 1, 1.0, 10.0 + 60e-6);
    CHECK_EQ(site_verdict(SITE_OP, &q, probe_verdict(&q, 10e-3), NULL, 1, NULL), CAT_PY);
    /* at bytecode, frozen pairs are no C code (a CPU taken away) */
    CHECK_EQ(site_verdict(SITE_PY, &p, CAT_NAT, NULL, 1, NULL), CAT_PY);
}

static void test_depths(void)
{
    site_ops_t o = toy_ops();
    /* toy stack effects: LOAD +1, CALL -oparg, BINARY_OP -1; 5 a forward
     * conditional jump popping 1 (both ways), 6 a backward jump (no fall
     * through), 8 RETURN (no fall through) */
    o.cls[5] = o.cls[6] = o.cls[8] = SITE_PY;
    o.flags[5] = SITE_F_JREL;
    o.flags[6] = SITE_F_JREL | SITE_F_BACK | SITE_F_NOFALL;
    o.flags[8] = SITE_F_NOFALL;
    for (int i = 0; i < 256; i++)
        o.base[i] = (uint8_t)i;
    o.base[7] = 2;
    o.call[2] = o.call[7] = SITE_CALL_313;
    /* 0 LOAD; 1 LOAD; 2 LOAD; 3 CALL 1 (c c); 6 JUMP_IF +2 -> 9;
     * 7 LOAD; 8 JUMP_BACK 9 -> 0 (conflict: 0 was depth 0, now 1);
     * 9 RETURN; 10 LOAD (unreachable) */
    uint8_t code[] = {1, 0, 1, 0, 1, 0, 2, 1, 0, 0, 0, 0, 5, 2, 1, 0, 6, 9, 8, 0, 1, 0};
    site_unit_t u[11];
    CHECK_EQ(site_analyze(&o, code, 11, toy_effect, u), 0);
    CHECK_EQ(u[0].depth, -1); /* reached with 0 and 1: not known */
    CHECK_EQ(u[3].depth, 3);
    CHECK_EQ(u[4].depth, 3); /* its caches */
    CHECK_EQ(u[3].cls, SITE_CALL);
    CHECK_EQ(u[3].call, SITE_CALL_313);
    CHECK_EQ(u[3].oparg, 1);
    CHECK_EQ(u[6].depth, 2);
    CHECK_EQ(u[7].depth, 1);
    CHECK_EQ(u[9].depth, 1);
    CHECK_EQ(u[10].depth, -1); /* unreachable (an exception handler) */
    long s1, s2;
    site_callable_slots(SITE_CALL_313, 3, 1, &s1, &s2);
    CHECK_EQ(s1, 0);
    CHECK_EQ(s2, -1);
    site_callable_slots(SITE_CALL_METHOD, 4, 2, &s1, &s2);
    CHECK(s1 == 0 && s2 == 1);
    site_callable_slots(SITE_CALL_311, 2, 2, &s1, &s2);
    CHECK(s1 == 0 && s2 == 1);
    site_callable_slots(SITE_CALL_FN, 1, 3, &s1, &s2); /* a depth too small: none */
    CHECK(s1 == -1 && s2 == -1);
}

/* The stack effects as a table (`hotline attach`: the target's
 * dis.stack_effect) give the same analysis as the callback, and the rule
 * above 255 covers linear, bit-flag and two-byte effects. */
static void test_effect_table(void)
{
    site_effects_t *e = malloc(sizeof *e);
    CHECK(e != NULL);
    if (!e) return;
    for (int j = 0; j < 2; j++)
        for (int op = 0; op < 256; op++) {
            e->k[j][op] = 0;
            for (int a = 0; a < 256; a++) {
                int v = toy_effect(op, a, j);
                e->tab[j][op][a] = v == INT32_MIN ? SITE_EFFECT_NONE : (int16_t)v;
            }
            if (e->tab[j][op][0] == SITE_EFFECT_NONE) e->k[j][op] = SITE_EFFECT_NONE;
        }
    e->k[0][2] = e->k[1][2] = -256; /* 2: -oparg */
    CHECK_EQ(site_effect(e, 2, 300, 0), -300);
    CHECK_EQ(site_effect(e, 1, 1000, 0), 1);
    CHECK_EQ(site_effect(e, 4, 0, 0), INT32_MIN);
    e->k[0][9] = 1; /* UNPACK_EX: (oparg & 255) + (oparg >> 8) */
    for (int a = 0; a < 256; a++)
        e->tab[0][9][a] = (int16_t)a;
    CHECK_EQ(site_effect(e, 9, 2 * 256 + 3, 0), 5);
    e->k[0][9] = SITE_EFFECT_NONE; /* no rule found: not known above 255 */
    CHECK_EQ(site_effect(e, 9, 256, 0), INT32_MIN);
    CHECK_EQ(site_effect(e, 9, 255, 0), 255);
    site_ops_t o;
    memset(&o, 0, sizeof o);
    o.cls[1] = o.cls[3] = o.cls[5] = o.cls[6] = o.cls[8] = SITE_PY;
    o.cls[2] = SITE_CALL;
    o.caches[2] = 2;
    o.flags[5] = SITE_F_JREL;
    o.flags[6] = SITE_F_JREL | SITE_F_BACK | SITE_F_NOFALL;
    o.flags[8] = SITE_F_NOFALL;
    for (int i = 0; i < 256; i++)
        o.base[i] = (uint8_t)i;
    o.call[2] = SITE_CALL_313;
    uint8_t code[] = {1, 0, 1, 0, 1, 0, 2, 1, 0, 0, 0, 0, 5, 2, 1, 0, 6, 9, 8, 0, 1, 0};
    site_unit_t a[11], b[11];
    CHECK_EQ(site_analyze(&o, code, 11, toy_effect, a), 0);
    CHECK_EQ(site_analyze_tab(&o, e, code, 11, b), 0);
    for (int i = 0; i < 11; i++)
        CHECK(a[i].depth == b[i].depth && a[i].cls == b[i].cls && a[i].call == b[i].call &&
              a[i].oparg == b[i].oparg);
    CHECK_EQ(b[3].depth, 3);
    free(e);
}

static void test_history(void)
{
    static site_hist_t tab[SITE_HIST_SLOTS];
    uint64_t pc = site_key(0x7f0000001000, 12), mm = site_key(0x7f0000001000, 40);
    /* perf_counter() call site: decided windows saw it return (short) */
    for (int i = 0; i < 5; i++)
        site_learn(tab, pc, CAT_PY);
    site_learn(tab, pc, CAT_NAT);
    /* a @ b site: frozen in C whenever the window could tell */
    for (int i = 0; i < 3; i++)
        site_learn(tab, mm, CAT_NAT);
    CHECK_EQ(site_verdict(SITE_CALL, NULL, -1, site_slot(tab, pc), pc, NULL), CAT_PY);
    CHECK_EQ(site_verdict(SITE_OP, NULL, -1, site_slot(tab, mm), mm, NULL), CAT_NAT);
    /* another key in the slot is no history */
    uint64_t other = pc ^ 1;
    if (site_slot(tab, other) == site_slot(tab, pc))
        CHECK_EQ(site_verdict(SITE_CALL, NULL, -1, site_slot(tab, other), other, NULL), CAT_NAT);
    /* counts stay bounded, recent windows weigh more */
    for (int i = 0; i < 1000; i++)
        site_learn(tab, mm, CAT_PY);
    site_hist_t *h = site_slot(tab, mm);
    CHECK(h->py + h->nat <= SITE_HIST_MAX);
    CHECK_EQ(site_verdict(SITE_OP, NULL, -1, h, mm, NULL), CAT_PY);
}

int main(void)
{
    test_classify();
    test_bytecode_is_python();
    test_call_without_cpu_is_native();
    test_probe_decides_when_it_can();
    test_call_that_lasted_is_native();
    test_depths();
    test_effect_table();
    test_history();
    return check_exit("site");
}
