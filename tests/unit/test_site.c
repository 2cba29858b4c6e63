/* Unit tests for sampling/site.h, the Python-or-C decision from the
 * innermost frame's instruction: the classes of a code object's units
 * (EXTENDED_ARG prefixes, inline caches), and the verdict from the site,
 * the probe window and the site's history, including the loaded-machine
 * case the probe alone got wrong (issue 23: an undecided window kept the
 * previous segment's category). */
#include "site.h"
#include "check.h"

#include <string.h>

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
    uint8_t want[] = {SITE_PY,   SITE_CALL, SITE_CALL, SITE_CALL, SITE_CALL,
                      SITE_OP,   SITE_OP,   SITE_CALL, SITE_CALL, SITE_CALL};
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
    CHECK_EQ(site_verdict(SITE_PY, -1, NULL, 1), CAT_PY);
    CHECK_EQ(site_verdict(SITE_PY, CAT_NAT, NULL, 1), CAT_PY);
}

static void test_call_without_cpu_is_native(void)
{
    /* the loaded-machine case: the thread got no CPU in the window, so the
     * probe is undecided; the old rule kept the previous segment's
     * category (Python), the site says the thread is in its C callee */
    CHECK_EQ(site_verdict(SITE_CALL, -1, NULL, 1), CAT_NAT);
    /* an operator without history: most are on builtin types */
    CHECK_EQ(site_verdict(SITE_OP, -1, NULL, 1), CAT_PY);
}

static void test_probe_decides_when_it_can(void)
{
    /* a short call (perf_counter() in a Python loop) returned inside the
     * window: Python's own overhead, as before */
    CHECK_EQ(site_verdict(SITE_CALL, CAT_PY, NULL, 1), CAT_PY);
    CHECK_EQ(site_verdict(SITE_OP, CAT_NAT, NULL, 1), CAT_NAT);
    /* no site (CACHE, instrumented line, no tables): the probe alone, -1
     * keeps the last category */
    CHECK_EQ(site_verdict(SITE_NONE, -1, NULL, 1), -1);
    CHECK_EQ(site_verdict(SITE_NONE, CAT_NAT, NULL, 1), CAT_NAT);
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
    CHECK_EQ(site_verdict(SITE_CALL, -1, site_slot(tab, pc), pc), CAT_PY);
    CHECK_EQ(site_verdict(SITE_OP, -1, site_slot(tab, mm), mm), CAT_NAT);
    /* another key in the slot is no history */
    uint64_t other = pc ^ 1;
    if (site_slot(tab, other) == site_slot(tab, pc))
        CHECK_EQ(site_verdict(SITE_CALL, -1, site_slot(tab, other), other), CAT_NAT);
    /* counts stay bounded, recent windows weigh more */
    for (int i = 0; i < 1000; i++)
        site_learn(tab, mm, CAT_PY);
    site_hist_t *h = site_slot(tab, mm);
    CHECK(h->py + h->nat <= SITE_HIST_MAX);
    CHECK_EQ(site_verdict(SITE_OP, -1, h, mm), CAT_PY);
}

int main(void)
{
    test_classify();
    test_bytecode_is_python();
    test_call_without_cpu_is_native();
    test_probe_decides_when_it_can();
    test_history();
    return check_exit("site");
}
