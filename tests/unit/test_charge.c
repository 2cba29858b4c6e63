/* Unit tests for sampling/charge.h, the charging rule the agent and attach
 * share: an interval split by the thread's state at the sample instant, its
 * on-CPU part, the innermost profiled frame, and how long a thread has been
 * on its line. */
#include "charge.h"
#include "probe.h"
#include "check.h"

static charge_t charged(double dw, double dc, double busy, int running, int cat)
{
    charge_in_t in = {.dw = dw, .dc = dc, .busy = busy, .running = running, .cat = cat};
    charge_t c;
    charge_interval(&in, &c);
    CHECK_NEAR(c.py + c.nat + c.sys, dw, 1e-12); /* every second goes somewhere */
    return c;
}

static void test_waiting_is_system(void)
{
    /* not running at the sample instant: the whole interval waited, even if
     * the thread ran part of it (a point estimate, not a split) */
    charge_t c = charged(10e-3, 4e-3, 4e-3, 0, CAT_PY);
    CHECK_NEAR(c.sys, 10e-3, 1e-12);
    CHECK(c.py == 0 && c.nat == 0 && c.cpu == 0);
    CHECK_EQ(c.state, CAT_SYS);
}

static void test_running_goes_to_its_category(void)
{
    charge_t c = charged(10e-3, 10e-3, 10e-3, 1, CAT_PY);
    CHECK_NEAR(c.py, 10e-3, 1e-12);
    CHECK(c.nat == 0 && c.sys == 0);
    CHECK_NEAR(c.cpu, 10e-3, 1e-12);
    CHECK_EQ(c.state, CAT_PY);
    /* C code: the same interval as native; running, though little CPU was
     * used (the rest of the interval it slept, then woke up in C) */
    c = charged(10e-3, 2e-3, 2e-3, 1, CAT_NAT);
    CHECK_NEAR(c.nat, 10e-3, 1e-12);
    CHECK(c.py == 0 && c.sys == 0);
    CHECK_NEAR(c.cpu, 10e-3, 1e-12); /* no run-queue wait: all of it on a CPU */
    CHECK_EQ(c.state, CAT_NAT);
}

static void test_cpu_share_of_running(void)
{
    /* 6 ms on a CPU and 2 ms waiting for one: a quarter of the running
     * interval was not on a CPU */
    charge_t c = charged(10e-3, 6e-3, 8e-3, 1, CAT_PY);
    CHECK_NEAR(c.py, 10e-3, 1e-12);
    CHECK_NEAR(c.cpu, 7.5e-3, 1e-12);
    /* a caller that cannot read the wait (busy = dw): cpu is the CPU time */
    c = charged(10e-3, 6e-3, 10e-3, 1, CAT_NAT);
    CHECK_NEAR(c.cpu, 6e-3, 1e-12);
    /* more CPU than busy (clocks read at slightly different instants): capped */
    c = charged(10e-3, 9e-3, 8e-3, 1, CAT_PY);
    CHECK_NEAR(c.cpu, 10e-3, 1e-12);
    /* no busy time measured at all: the running part counts as on a CPU */
    c = charged(10e-3, 0, 0, 1, CAT_PY);
    CHECK_NEAR(c.cpu, 10e-3, 1e-12);
}

struct frame {
    int file, line;
    int profiled;
};

static void test_innermost_profiled_frame(void)
{
    struct frame fr[] = {{1, 10, 0}, {2, 20, 1}, {3, 30, 1}};
    /* innermost first: frame 0 is a library's, frame 1 the program's */
    CHECK_EQ(charge_frame(&fr[0].profiled, sizeof fr[0], 3), 1);
    fr[0].profiled = 1;
    CHECK_EQ(charge_frame(&fr[0].profiled, sizeof fr[0], 3), 0);
    /* the flags as a plain array */
    int flags[] = {0, 0, 0, 1};
    CHECK_EQ(charge_frame(flags, sizeof flags[0], 4), 3);
    CHECK_EQ(charge_frame(flags, sizeof flags[0], 3), -1); /* none profiled */
    CHECK_EQ(charge_frame(flags, sizeof flags[0], 0), -1); /* no frame */
}

static void test_since(void)
{
    charge_pos_t pos = {0};
    CHECK_NEAR(charge_pos_at(&pos, 7, 12, 100.0), 0, 1e-12);
    CHECK_NEAR(charge_pos_at(&pos, 7, 12, 100.5), 0.5, 1e-12);
    /* another line of the same file: a new stay */
    CHECK_NEAR(charge_pos_at(&pos, 7, 13, 101.0), 0, 1e-12);
    CHECK_NEAR(charge_pos_at(&pos, 7, 13, 103.0), 2.0, 1e-12);
    CHECK_NEAR(pos.since, 101.0, 1e-12);
    /* another file, same line number */
    charge_pos_at(&pos, 8, 13, 104.0);
    CHECK_NEAR(pos.since, 104.0, 1e-12);
    CHECK(pos.file == 8 && pos.line == 13);
}

int main(void)
{
    test_waiting_is_system();
    test_running_goes_to_its_category();
    test_cpu_share_of_running();
    test_innermost_profiled_frame();
    test_since();
    return check_exit("charge");
}
