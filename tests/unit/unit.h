/* unit.h — the tiny harness every C unit test uses.  Each check prints one
 * `PASS: name` or `FAIL: name: detail` line; tests/run.sh counts them. */
#ifndef CMT_UNIT_H
#define CMT_UNIT_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int unit_failures;

#define CHECK(cond, name)                                                    \
    do {                                                                     \
        if (cond) {                                                          \
            printf("PASS: %s\n", (name));                                    \
        } else {                                                             \
            printf("FAIL: %s: %s is false (%s:%d)\n", (name), #cond,         \
                   __FILE__, __LINE__);                                      \
            unit_failures++;                                                 \
        }                                                                    \
    } while (0)

#define CHECK_NEAR(actual, expected, tol, name)                              \
    do {                                                                     \
        double unit_a_ = (double)(actual), unit_e_ = (double)(expected);     \
        double unit_scale_ = fabs(unit_e_) > 1 ? fabs(unit_e_) : 1;          \
        if (fabs(unit_a_ - unit_e_) <= (tol) * unit_scale_) {                \
            printf("PASS: %s\n", (name));                                    \
        } else {                                                             \
            printf("FAIL: %s: got %.9g, expected %.9g (%s:%d)\n", (name),    \
                   unit_a_, unit_e_, __FILE__, __LINE__);                    \
            unit_failures++;                                                 \
        }                                                                    \
    } while (0)

#define CHECK_STR(actual, expected, name)                                    \
    do {                                                                     \
        const char *unit_a_ = (actual), *unit_e_ = (expected);               \
        if (unit_a_ && unit_e_ && strcmp(unit_a_, unit_e_) == 0) {           \
            printf("PASS: %s\n", (name));                                    \
        } else {                                                             \
            printf("FAIL: %s: got \"%s\", expected \"%s\" (%s:%d)\n", (name), \
                   unit_a_ ? unit_a_ : "(null)", unit_e_ ? unit_e_ : "(null)", \
                   __FILE__, __LINE__);                                      \
            unit_failures++;                                                 \
        }                                                                    \
    } while (0)

static inline int unit_finish(void) { return unit_failures ? 1 : 0; }

#endif
