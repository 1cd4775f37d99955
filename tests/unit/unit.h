/* unit.h — the tiny harness every C unit test uses.  Each check prints one
 * `PASS: name` or `FAIL: name: detail` line; tests/run.sh counts them. */
#ifndef CMT_UNIT_H
#define CMT_UNIT_H

#include <math.h>
#include <stdbool.h>
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

/* Relative: |actual - expected| <= tol * max(|actual|, |expected|), so a
 * femtojoule is checked as closely as a gigabyte (an absolute tolerance
 * below 1 let 0 pass for any pico- or femto-scale value).  NaN fails. */
static inline bool unit_near(double actual, double expected, double tol) {
    double scale = fabs(actual) > fabs(expected) ? fabs(actual) : fabs(expected);
    return fabs(actual - expected) <= tol * scale;
}

/* Absolute: |actual - expected| <= tol.  Only for a value truly expected
 * to be 0, where a relative tolerance would demand exactly 0. */
static inline bool unit_near_abs(double actual, double expected, double tol) {
    return fabs(actual - expected) <= tol;
}

#define CHECK_NEAR(actual, expected, tol, name)                              \
    do {                                                                     \
        double unit_a_ = (double)(actual), unit_e_ = (double)(expected);     \
        if (unit_near(unit_a_, unit_e_, (tol))) {                            \
            printf("PASS: %s\n", (name));                                    \
        } else {                                                             \
            printf("FAIL: %s: got %.9g, expected %.9g (%s:%d)\n", (name),    \
                   unit_a_, unit_e_, __FILE__, __LINE__);                    \
            unit_failures++;                                                 \
        }                                                                    \
    } while (0)

/* Equal up to rounding (relative 1e-9): values computed by hand. */
#define CHECK_EXACT(actual, expected, name) CHECK_NEAR(actual, expected, 1e-9, name)

#define CHECK_NEAR_ABS(actual, expected, tol, name)                          \
    do {                                                                     \
        double unit_a_ = (double)(actual), unit_e_ = (double)(expected);     \
        if (unit_near_abs(unit_a_, unit_e_, (tol))) {                        \
            printf("PASS: %s\n", (name));                                    \
        } else {                                                             \
            printf("FAIL: %s: got %.9g, expected %.9g within %g (%s:%d)\n",  \
                   (name), unit_a_, unit_e_, (double)(tol), __FILE__,        \
                   __LINE__);                                                \
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
