/* A tiny assertion kit for the C unit tests: a failed CHECK prints where and what, the
 * test goes on, and check_exit() turns the count of failures into the exit status.
 * One counter per test executable (single-threaded), kept in one struct. */
#ifndef HOTLINE_TESTS_CHECK_H
#define HOTLINE_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

static struct {
    int checks;
    int failures;
} check_state;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        check_state.checks++;                                                                      \
        if (!(cond)) {                                                                             \
            check_state.failures++;                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_U(a, b)                                                                           \
    do {                                                                                           \
        unsigned long long check_a_ = (unsigned long long)(a), check_b_ = (unsigned long long)(b); \
        check_state.checks++;                                                                      \
        if (check_a_ != check_b_) {                                                                \
            check_state.failures++;                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%llu != %llu)\n", __FILE__, __LINE__,  \
                    #a, #b, check_a_, check_b_);                                                   \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *check_a_ = (a), *check_b_ = (b);                                               \
        check_state.checks++;                                                                      \
        if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {                           \
            check_state.failures++;                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s\n  got:  \"%s\"\n  want: \"%s\"\n",     \
                    __FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",                    \
                    check_b_ ? check_b_ : "(null)");                                               \
        }                                                                                          \
    } while (0)

/* Exit status for main(): 0 only if something was checked and nothing failed. */
static inline int check_exit(const char *name)
{
    fprintf(stderr, "%s: %d checks, %d failed\n", name, check_state.checks, check_state.failures);
    return check_state.failures == 0 && check_state.checks > 0 ? 0 : 1;
}

#endif
