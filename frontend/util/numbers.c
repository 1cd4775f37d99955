/* numbers.c — integer and real literals with '_' separators, overflow
 * checked arithmetic, and element type sizes. */
#include "frontend/util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

/* A '_' is a separator only between two digits. */
static inline bool separator_ok(const char *text, size_t len, size_t i) {
    return i > 0 && i + 1 < len && is_digit(text[i - 1]) && is_digit(text[i + 1]);
}

bool parse_int_literal(const char *text, size_t len, int64_t *out) {
    if (len == 0) return false;
    int64_t value = 0;
    bool any_digit = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '_') {
            if (!separator_ok(text, len, i)) return false;
            continue;
        }
        if (!is_digit(c)) return false;
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, c - '0', &value))
            return false;
        any_digit = true;
    }
    if (!any_digit) return false;
    *out = value;
    return true;
}

/* Checks digits [. digits] [(e|E) [+|-] digits] with '_' between digits,
 * copies it without the separators into `clean`, and returns its length,
 * or -1 when the text is not such a literal. */
static long clean_real(const char *text, size_t len, char *clean) {
    size_t i = 0, n = 0;
    size_t mantissa_digits = 0;
    while (i < len && (is_digit(text[i]) || text[i] == '_')) {
        if (text[i] == '_') {
            if (!separator_ok(text, len, i)) return -1;
        } else {
            clean[n++] = text[i];
            mantissa_digits++;
        }
        i++;
    }
    if (i < len && text[i] == '.') {
        clean[n++] = text[i++];
        size_t first = i;
        while (i < len && (is_digit(text[i]) || text[i] == '_')) {
            if (text[i] == '_') {
                if (i == first || !separator_ok(text, len, i)) return -1;
            } else {
                clean[n++] = text[i];
                mantissa_digits++;
            }
            i++;
        }
    }
    if (mantissa_digits == 0) return -1;
    if (i < len && (text[i] == 'e' || text[i] == 'E')) {
        clean[n++] = text[i++];
        if (i < len && (text[i] == '+' || text[i] == '-')) clean[n++] = text[i++];
        size_t first = i, exponent_digits = 0;
        while (i < len && (is_digit(text[i]) || text[i] == '_')) {
            if (text[i] == '_') {
                if (i == first || !separator_ok(text, len, i)) return -1;
            } else {
                clean[n++] = text[i];
                exponent_digits++;
            }
            i++;
        }
        if (exponent_digits == 0) return -1;
    }
    if (i != len) return -1;
    clean[n] = '\0';
    return (long)n;
}

/* The value of a clean literal (digits [. digits] [e [+-] digits]) when
 * one exact operation gives it: a mantissa of at most 2^53 and a power
 * of ten of at most 10^22 are both exact doubles, so their product or
 * quotient is the correctly rounded value, the one strtod returns.  Most
 * literals (`64`, `0.25`, `1e-5`) are such; false for the others. */
static bool exact_real(const char *clean, double *out) {
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    uint64_t mantissa = 0;
    int digits = 0, scale = 0;
    const char *p = clean;
    for (; is_digit(*p); p++) {
        if (mantissa == 0 && *p == '0') continue; /* leading zeros */
        if (++digits > 16) return false;
        mantissa = mantissa * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.')
        for (p++; is_digit(*p); p++) {
            scale--;
            if (mantissa == 0 && *p == '0') continue;
            if (++digits > 16) return false;
            mantissa = mantissa * 10 + (uint64_t)(*p - '0');
        }
    if (*p == 'e' || *p == 'E') {
        p++;
        bool negative = *p == '-';
        if (*p == '-' || *p == '+') p++;
        int exponent = 0, exponent_digits = 0;
        for (; is_digit(*p); p++) {
            if (++exponent_digits > 4) return false;
            exponent = exponent * 10 + (*p - '0');
        }
        scale += negative ? -exponent : exponent;
    }
    if (*p != '\0' || mantissa > ((uint64_t)1 << 53)) return false;
    if (mantissa == 0) {
        *out = 0.0;
        return true;
    }
    if (scale < -22 || scale > 22) return false;
    *out = scale < 0 ? (double)mantissa / pow10[-scale] : (double)mantissa * pow10[scale];
    return true;
}

bool parse_real_literal(const char *text, size_t len, double *out) {
    char small[128];
    Arena scratch = {0};
    char *clean = len < sizeof small ? small : arena_alloc(&scratch, len + 1);
    bool ok = false;
    if (clean_real(text, len, clean) >= 0) {
        if (exact_real(clean, out)) {
            ok = true;
        } else {
            char *end;
            errno = 0;
            double value = strtod(clean, &end);
            /* underflow to a tiny or zero value is fine; overflow is not */
            if (*end == '\0' && isfinite(value)) {
                *out = value;
                ok = true;
            }
        }
    }
    arena_free_all(&scratch);
    return ok;
}

bool parse_time_limit(const char *text, double *seconds) {
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    /* !(v > 0) also refuses nan, which compares false with everything */
    if (end == text || *end || errno == ERANGE || !isfinite(v) || !(v > 0) || v > TIME_LIMIT_MAX_S)
        return false;
    *seconds = v;
    return true;
}

bool checked_add(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

bool checked_sub(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_sub_overflow(a, b, out);
}

bool checked_mul(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

/* clang-format off */
#define ELEM_BITS_CASE(id, word, bits) case id: return bits;
#define ELEM_NAME_CASE(id, word, bits) case id: return word;
/* clang-format on */

const char *const elem_type_names[] = {CMT_ELEM_TYPES(VOCAB_ELEM_NAME)};
static const ElemType elem_type_ids[] = {CMT_ELEM_TYPES(VOCAB_ELEM_ENUM)};
const int elem_type_count = (int)(sizeof elem_type_ids / sizeof elem_type_ids[0]);

int elem_type_bits(ElemType t) {
    switch (t) {
        CMT_ELEM_TYPES(ELEM_BITS_CASE)
    case ET_NONE: break;
    }
    return 0;
}

const char *elem_type_name(ElemType t) {
    switch (t) {
        CMT_ELEM_TYPES(ELEM_NAME_CASE)
    case ET_NONE: break;
    }
    return "none";
}

ElemType elem_type_of_name(const char *word) {
    int i = vocab_find(elem_type_names, elem_type_count, word);
    return i < 0 ? ET_NONE : elem_type_ids[i];
}
