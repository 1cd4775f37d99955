/* test_numbers.c — integer and real literals, checked arithmetic, element
 * type sizes. */
#include "frontend/util/util.h"
#include "tests/unit/unit.h"

#include <stdint.h>
#include <stdlib.h>

static bool int_of(const char *text, int64_t *out) {
    return parse_int_literal(text, strlen(text), out);
}

static bool real_of(const char *text, double *out) {
    return parse_real_literal(text, strlen(text), out);
}

int main(void) {
    int64_t v = -1;
    CHECK(int_of("0", &v) && v == 0, "int 0");
    CHECK(int_of("4096", &v) && v == 4096, "int 4096");
    CHECK(int_of("007", &v) && v == 7, "int with leading zeros is decimal");
    CHECK(int_of("1_000_000", &v) && v == 1000000, "int with separators");
    CHECK(int_of("1_0", &v) && v == 10, "int with one separator");
    CHECK(int_of("9223372036854775807", &v) && v == INT64_MAX, "int64 max");
    CHECK(int_of("9_223_372_036_854_775_807", &v) && v == INT64_MAX, "int64 max with separators");
    v = 42;
    CHECK(!int_of("9223372036854775808", &v), "int64 max + 1 overflows");
    CHECK(v == 42, "overflow leaves the output alone");
    CHECK(!int_of("18446744073709551616", &v), "2^64 overflows");
    CHECK(!int_of("99999999999999999999999", &v), "long literal overflows");
    CHECK(!int_of("", &v), "empty int rejected");
    CHECK(!int_of("_1", &v), "leading separator rejected");
    CHECK(!int_of("1_", &v), "trailing separator rejected");
    CHECK(!int_of("1__0", &v), "double separator rejected");
    CHECK(!int_of("_", &v), "lone separator rejected");
    CHECK(!int_of("12a", &v), "letter rejected");
    CHECK(!int_of("-1", &v), "sign is not part of the literal");
    CHECK(!int_of("1.0", &v), "point rejected");
    CHECK(parse_int_literal("123456", 3, &v) && v == 123, "length honoured");

    double d = -1;
    CHECK(real_of("0.5", &d) && d == 0.5, "real 0.5");
    CHECK(real_of("1.25", &d) && d == 1.25, "real 1.25");
    CHECK(real_of("12", &d) && d == 12, "real without point");
    CHECK(real_of("1_000.5", &d) && d == 1000.5, "real with separator");
    CHECK(real_of("0.000_1", &d) && d == 0.0001, "separator in fraction");
    CHECK(real_of("1e3", &d) && d == 1000, "exponent");
    CHECK(real_of("2.5E-3", &d) && d == 0.0025, "negative exponent, capital E");
    CHECK(real_of("1.5e+2", &d) && d == 150, "explicit plus exponent");
    CHECK(real_of("1e1_0", &d) && d == 1e10, "separator in exponent");
    CHECK(real_of("5.", &d) && d == 5, "trailing point");
    CHECK(real_of(".5", &d) && d == 0.5, "leading point");
    CHECK(real_of("1e-400", &d) && d == 0, "underflow gives zero");
    CHECK(!real_of("1e400", &d), "overflow rejected");
    CHECK(!real_of("", &d), "empty real rejected");
    CHECK(!real_of(".", &d), "lone point rejected");
    CHECK(!real_of("1e", &d), "exponent without digits rejected");
    CHECK(!real_of("1e+", &d), "signed exponent without digits rejected");
    CHECK(!real_of("1._5", &d), "separator after point rejected");
    CHECK(!real_of("1_.5", &d), "separator before point rejected");
    CHECK(!real_of("1.5_", &d), "trailing separator rejected");
    CHECK(!real_of("1e_5", &d), "separator after e rejected");
    CHECK(!real_of("1.2.3", &d), "two points rejected");
    CHECK(!real_of("0x10", &d), "hex rejected");
    CHECK(!real_of("inf", &d), "inf rejected");
    CHECK(!real_of("nan", &d), "nan rejected");
    CHECK(!real_of(" 1", &d), "space rejected");
    CHECK(parse_real_literal("2.5e3xyz", 5, &d) && d == 2.5e3, "real length honoured");
    {
        /* a literal longer than any stack buffer: "1" then 299 zeros then
         * ".5" is 10^299 + 0.5, which is 1e299 in a double */
        char big[400];
        big[0] = '1';
        memset(big + 1, '0', 299);
        memcpy(big + 300, ".5", 3);
        CHECK(real_of(big, &d) && d == 1e299, "very long real literal");
    }
    {
        /* Literals short enough for the exact path (a mantissa of at most
         * 2^53 times or over a power of ten of at most 10^22) and around
         * its edges (17 digits, 10^23, 2^53 + 1) read the same double as
         * strtod, bit for bit: 200 000 generated literals. */
        uint64_t seed = 0x9E3779B97F4A7C15ull;
        int differ = 0, checked = 0;
        for (int k = 0; k < 200000; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t x = seed >> 11;
            char lit[64];
            int n = 0;
            int int_digits = (int)(x % 19), frac_digits = (int)((x >> 5) % 19);
            for (int i = 0; i < int_digits; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                lit[n++] = (char)('0' + (seed >> 33) % 10);
            }
            if (frac_digits || !int_digits) {
                lit[n++] = '.';
                for (int i = 0; i < (frac_digits ? frac_digits : 1); i++) {
                    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                    lit[n++] = (char)('0' + (seed >> 33) % 10);
                }
            }
            if ((x >> 10) % 3 == 0)
                n += snprintf(lit + n, sizeof lit - (size_t)n, "e%s%d", (x >> 12) % 2 ? "-" : "",
                              (int)((x >> 13) % 30));
            lit[n] = '\0';
            if (k == 0) strcpy(lit, "9007199254740993"); /* 2^53 + 1: rounds */
            if (k == 1) strcpy(lit, "9007199254740992e1");
            if (k == 2) strcpy(lit, "1e23");
            if (k == 3) strcpy(lit, "0.1e-22");
            double want = strtod(lit, NULL), got = -1;
            checked++;
            if (!real_of(lit, &got) || memcmp(&got, &want, sizeof got) != 0) {
                if (differ++ < 5) printf("  %s: %.17g, strtod %.17g\n", lit, got, want);
            }
        }
        CHECK(differ == 0 && checked == 200000, "real literals read as strtod reads them");
    }

    int64_t r = 0;
    CHECK(checked_add(2, 3, &r) && r == 5, "add");
    CHECK(checked_add(INT64_MAX - 1, 1, &r) && r == INT64_MAX, "add to max");
    CHECK(!checked_add(INT64_MAX, 1, &r), "add overflow");
    CHECK(!checked_add(INT64_MIN, -1, &r), "add underflow");
    CHECK(checked_sub(3, 5, &r) && r == -2, "sub");
    CHECK(!checked_sub(INT64_MIN, 1, &r), "sub underflow");
    CHECK(!checked_sub(0, INT64_MIN, &r), "negating min overflows");
    CHECK(checked_mul(4096, 4096, &r) && r == 16777216, "mul 4096^2 = 2^24");
    CHECK(checked_mul(-3, 7, &r) && r == -21, "mul negative");
    CHECK(checked_mul(3037000499LL, 3037000499LL, &r) && r == 9223372030926249001LL,
          "mul just below max"); /* 3037000499^2 = 9223372030926249001 */
    CHECK(!checked_mul(3037000500LL, 3037000500LL, &r),
          "mul just above max"); /* 3037000500^2 = 9223372037000250000 > max */
    CHECK(!checked_mul(INT64_MIN, -1, &r), "mul min by -1 overflows");

    double seconds = -1;
    CHECK(parse_time_limit("30", &seconds) && seconds == 30, "time limit 30 s");
    CHECK(parse_time_limit("0.25", &seconds) && seconds == 0.25, "time limit 0.25 s");
    CHECK(parse_time_limit("1e6", &seconds) && seconds == 1e6, "time limit at the maximum");
    seconds = -1;
    CHECK(!parse_time_limit("inf", &seconds), "time limit inf refused");
    CHECK(!parse_time_limit("infinity", &seconds), "time limit infinity refused");
    CHECK(!parse_time_limit("nan", &seconds), "time limit nan refused");
    CHECK(!parse_time_limit("-nan", &seconds), "time limit -nan refused");
    CHECK(!parse_time_limit("0", &seconds), "time limit 0 refused");
    CHECK(!parse_time_limit("-5", &seconds), "negative time limit refused");
    CHECK(!parse_time_limit("1e999", &seconds), "overflowing time limit refused");
    CHECK(!parse_time_limit("1e-320", &seconds), "subnormal time limit refused");
    CHECK(!parse_time_limit("1000001", &seconds), "time limit past the maximum refused");
    CHECK(!parse_time_limit("10s", &seconds), "time limit with trailing junk refused");
    CHECK(!parse_time_limit("", &seconds), "empty time limit refused");
    CHECK(seconds == -1, "a refused time limit leaves the output alone");

    CHECK(elem_type_bits(ET_INT4) == 4, "int4 bits");
    CHECK(elem_type_bits(ET_INT8) == 8, "int8 bits");
    CHECK(elem_type_bits(ET_INT16) == 16, "int16 bits");
    CHECK(elem_type_bits(ET_INT32) == 32, "int32 bits");
    CHECK(elem_type_bits(ET_FP8) == 8, "fp8 bits");
    CHECK(elem_type_bits(ET_BF16) == 16, "bf16 bits");
    CHECK(elem_type_bits(ET_FP16) == 16, "fp16 bits");
    CHECK(elem_type_bits(ET_FP32) == 32, "fp32 bits");
    CHECK(elem_type_bits(ET_NONE) == 0, "none bits");
    CHECK_STR(elem_type_name(ET_INT4), "int4", "int4 name");
    CHECK_STR(elem_type_name(ET_INT8), "int8", "int8 name");
    CHECK_STR(elem_type_name(ET_INT16), "int16", "int16 name");
    CHECK_STR(elem_type_name(ET_INT32), "int32", "int32 name");
    CHECK_STR(elem_type_name(ET_FP8), "fp8", "fp8 name");
    CHECK_STR(elem_type_name(ET_BF16), "bf16", "bf16 name");
    CHECK_STR(elem_type_name(ET_FP16), "fp16", "fp16 name");
    CHECK_STR(elem_type_name(ET_FP32), "fp32", "fp32 name");
    CHECK_STR(elem_type_name(ET_NONE), "none", "none name");
    return unit_finish();
}
