/* Minimal assertions for the tests/run C tests: a failed CHECK prints where
 * and why and makes the test exit non-zero; the test keeps going so one run
 * shows every failure. */
#ifndef HOTLINE_RUN_CHECK_H
#define HOTLINE_RUN_CHECK_H
#include <math.h>
#include <stdio.h>
#include <string.h>

static int run_check_failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            run_check_failures++;                                                                  \
        }                                                                                          \
    } while (0)
#define CHECK_NEAR(a, b, eps)                                                                      \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (eps))) {                                                           \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %g, %s = %g\n", __FILE__, __LINE__,    \
                    #a, a_, #b, b_);                                                               \
            run_check_failures++;                                                                  \
        }                                                                                          \
    } while (0)
#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_)) {                                                        \
            fprintf(stderr, "%s:%d: CHECK_STR failed: '%s' != '%s'\n", __FILE__, __LINE__,         \
                    a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                       \
            run_check_failures++;                                                                  \
        }                                                                                          \
    } while (0)
#define CHECK_DONE()                                                                               \
    (run_check_failures ? (fprintf(stderr, "%d check(s) failed\n", run_check_failures), 1)         \
                        : (printf("ok\n"), 0))
#endif
