/* The assertion kit itself (tests/check.h): every macro counts a check, and a
 * failure only when the comparison is false (NaN and NULL fail), so a broken
 * kit cannot make every other C test pass. The deliberate failures print their
 * file:line lines to stderr; the counters are then compared and reset. */
#include <math.h>

#include "check.h"

static int want_checks, want_failures, wrong;

/* After each step: the counters moved by exactly (checks, failures). */
static void expect(int line, int checks, int failures)
{
    want_checks += checks;
    want_failures += failures;
    if (check_state.checks != want_checks || check_state.failures != want_failures) {
        fprintf(stderr, "test_check.c:%d: counters %d/%d, want %d/%d\n", line, check_state.checks,
                check_state.failures, want_checks, want_failures);
        wrong++;
    }
}

int main(void)
{
    fprintf(stderr, "(the failures below up to \"kit ok\" are deliberate)\n");
    CHECK(1 + 1 == 2);
    expect(__LINE__, 1, 0);
    CHECK(1 + 1 == 3);
    expect(__LINE__, 1, 1);
    CHECK_EQ(-3, -3);
    CHECK_EQ(-3, 3);
    expect(__LINE__, 2, 1);
    CHECK_EQ_U(7u, 7);
    CHECK_EQ_U((size_t)1 << 40, 0);
    expect(__LINE__, 2, 1);
    CHECK_NEAR(1.0, 1.05, 0.1);
    CHECK_NEAR(1.0, 1.5, 0.1);
    CHECK_NEAR(NAN, 0, 1e9);
    expect(__LINE__, 3, 2);
    CHECK_STR("abc", "abc");
    CHECK_STR("abc", "abd");
    CHECK_STR(NULL, "abc");
    expect(__LINE__, 3, 2);
    CHECK_FAIL("a failure with a value: %d", 42);
    expect(__LINE__, 1, 1);
    if (check_report(1, __FILE__, __LINE__, "not printed") != 1) wrong++;
    expect(__LINE__, 1, 0);
    fprintf(stderr, "kit ok: %d checks, %d failed as meant\n", check_state.checks,
            check_state.failures);

    /* nothing checked is a failure too */
    check_state.checks = check_state.failures = 0;
    if (check_exit("empty") != 1) wrong++;
    check_state.checks = 1;
    if (check_exit("one passed") != 0) wrong++;
    check_state.failures = 1;
    if (check_exit("one failed") != 1) wrong++;

    check_state.checks = check_state.failures = 0;
    CHECK(wrong == 0);
    return check_exit("test_check");
}
