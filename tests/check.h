/* The one assertion kit of the C tests (every tests/<folder>/test_*.c): a failed
 * check prints file:line and what it compared, the test goes on so that one run
 * shows every failure, and check_exit() turns the counts into the exit status.
 * One counter per test executable, kept in one struct; checks run on the test's
 * main thread (libuv callbacks included), never from another thread. */
#ifndef HOTLINE_TESTS_CHECK_H
#define HOTLINE_TESTS_CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static struct {
    int checks;
    int failures;
} check_state;

/* Records one check; on failure prints "file:line: " and the message. Returns ok.
 * For checks that no macro below expresses (a table of expected lines, a timeout). */
static inline int check_report(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int check_report(int ok, const char *file, int line, const char *fmt, ...)
{
    check_state.checks++;
    if (ok) return 1;
    check_state.failures++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 0;
}

/* A failure that is not a comparison (a guard timer fired, a setup step failed). */
#define CHECK_FAIL(...) check_report(0, __FILE__, __LINE__, __VA_ARGS__)

#define CHECK(cond) check_report(!!(cond), __FILE__, __LINE__, "CHECK failed: %s", #cond)

/* Signed integers: prints both values. */
#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                            \
        check_report(check_a_ == check_b_, __FILE__, __LINE__,                                     \
                     "CHECK failed: %s == %s (%lld != %lld)", #a, #b, check_a_, check_b_);         \
    } while (0)

/* Unsigned integers (sizes, counts): prints both values. */
#define CHECK_EQ_U(a, b)                                                                           \
    do {                                                                                           \
        unsigned long long check_a_ = (unsigned long long)(a), check_b_ = (unsigned long long)(b); \
        check_report(check_a_ == check_b_, __FILE__, __LINE__,                                     \
                     "CHECK failed: %s == %s (%llu != %llu)", #a, #b, check_a_, check_b_);         \
    } while (0)

/* |a - b| <= eps; a NaN on either side fails. */
#define CHECK_NEAR(a, b, eps)                                                                      \
    do {                                                                                           \
        double check_a_ = (a), check_b_ = (b);                                                     \
        check_report(fabs(check_a_ - check_b_) <= (eps), __FILE__, __LINE__,                       \
                     "CHECK failed: %s ~ %s (%g vs %g, eps %g)", #a, #b, check_a_, check_b_,       \
                     (double)(eps));                                                               \
    } while (0)

/* Equal C strings; NULL on either side fails. */
#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *check_a_ = (a), *check_b_ = (b);                                               \
        check_report(check_a_ &&check_b_ &&strcmp(check_a_, check_b_) == 0, __FILE__, __LINE__,    \
                     "CHECK failed: %s == %s\n  got:  \"%s\"\n  want: \"%s\"", #a, #b,             \
                     check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)");              \
    } while (0)

/* Exit status for main(): 0 only if something was checked and nothing failed. */
static inline int check_exit(const char *name)
{
    fprintf(stderr, "%s: %d checks, %d failed\n", name, check_state.checks, check_state.failures);
    return check_state.failures == 0 && check_state.checks > 0 ? 0 : 1;
}

#endif
