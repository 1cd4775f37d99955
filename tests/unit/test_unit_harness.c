/* test_unit_harness.c — the harness's own tolerance checks: CHECK_NEAR is
 * relative, so a pico- or femto-scale value of 0 fails (with the old
 * absolute tolerance below 1, 0 passed for any of them), and
 * CHECK_NEAR_ABS is the explicit absolute variant for values that are
 * truly 0. */
#include "tests/unit/unit.h"

int main(void) {
    CHECK(!unit_near(0, 1e-15, 1e-9), "0 is not 1 fJ");
    CHECK(!unit_near(0, 0.25e-12, 1e-9), "0 is not 0.25 pJ");
    CHECK(!unit_near(0, 2.5e-9, 1e-9), "0 is not 2.5 ns");
    CHECK(!unit_near(1e-15, 0, 1e-9), "nor the other way round");
    CHECK(unit_near(1e-15 * (1 + 1e-10), 1e-15, 1e-9), "1 fJ within a relative 1e-9");
    CHECK(!unit_near(1e-15 * (1 + 1e-8), 1e-15, 1e-9), "1 fJ off by 1e-8 is not");
    CHECK(!unit_near(56e-12, 1056e-12, 1e-9), "56 pJ is not 1056 pJ");
    CHECK(unit_near(64e9 * (1 + 1e-13), 64e9, 1e-12), "large values as before");
    CHECK(unit_near(2070, 2070, 0) && !unit_near(2070, 2070.0000001, 0), "tolerance 0 is exact");
    CHECK(unit_near(0, 0, 0), "0 is 0");
    CHECK(!unit_near(NAN, 1, 1) && !unit_near(1, NAN, 1) && !unit_near(NAN, NAN, 1),
          "NaN is near nothing");
    CHECK(unit_near(1, 1.1, 0.1) && unit_near(1.1, 1, 0.1), "symmetric in its arguments");
    CHECK(unit_near_abs(1e-13, 0, 1e-12) && !unit_near_abs(2e-12, 0, 1e-12),
          "the absolute variant for a value that is truly 0");
    return unit_finish();
}
