/* units.c — unit spellings, their dimensions and SI scales, and readable
 * formatting of SI values.  The table users read is docs/units.md. */
#include "frontend/util/util.h"

#include <math.h>
#include <string.h>

typedef struct UnitWord {
    const char *spelling;
    BaseUnit base;
    double scale; /* to the SI base: bytes, seconds, hertz, joules, counts */
} UnitWord;

static const UnitWord unit_words[] = {
    /* size: decimal steps of 1000 (kB and KB alike), binary steps of 1024 */
    {"B", BU_BYTE, 1},
    {"kB", BU_BYTE, 1e3},
    {"KB", BU_BYTE, 1e3},
    {"MB", BU_BYTE, 1e6},
    {"GB", BU_BYTE, 1e9},
    {"TB", BU_BYTE, 1e12},
    {"PB", BU_BYTE, 1e15},
    {"KiB", BU_BYTE, 1024.0},
    {"MiB", BU_BYTE, 1024.0 * 1024},
    {"GiB", BU_BYTE, 1024.0 * 1024 * 1024},
    {"TiB", BU_BYTE, 1024.0 * 1024 * 1024 * 1024},
    {"PiB", BU_BYTE, 1024.0 * 1024 * 1024 * 1024 * 1024},
    {"bit", BU_BYTE, 1.0 / 8},
    {"kbit", BU_BYTE, 1e3 / 8},
    {"Mbit", BU_BYTE, 1e6 / 8},
    {"Gbit", BU_BYTE, 1e9 / 8},
    {"Tbit", BU_BYTE, 1e12 / 8},
    /* time */
    {"s", BU_SECOND, 1},
    {"ms", BU_SECOND, 1e-3},
    {"us", BU_SECOND, 1e-6},
    {"ns", BU_SECOND, 1e-9},
    {"ps", BU_SECOND, 1e-12},
    {"cycle", BU_CYCLE, 1},
    {"cycles", BU_CYCLE, 1},
    /* frequency */
    {"Hz", BU_HERTZ, 1},
    {"kHz", BU_HERTZ, 1e3},
    {"MHz", BU_HERTZ, 1e6},
    {"GHz", BU_HERTZ, 1e9},
    {"THz", BU_HERTZ, 1e12},
    /* energy */
    {"J", BU_JOULE, 1},
    {"kJ", BU_JOULE, 1e3},
    {"mJ", BU_JOULE, 1e-3},
    {"uJ", BU_JOULE, 1e-6},
    {"nJ", BU_JOULE, 1e-9},
    {"pJ", BU_JOULE, 1e-12},
    {"fJ", BU_JOULE, 1e-15},
};

/* Counts take an optional decimal prefix: kMAC, GFLOP, Tops, ... */
static const UnitWord count_words[] = {
    {"USD", BU_USD, 1}, {"kUSD", BU_USD, 1e3}, {"MUSD", BU_USD, 1e6},
    {"MAC", BU_MAC, 1}, {"MACs", BU_MAC, 1},   {"op", BU_OP, 1},
    {"ops", BU_OP, 1},  {"FLOP", BU_FLOP, 1},  {"FLOPs", BU_FLOP, 1},
};

static const struct {
    char letter;
    double scale;
} count_prefixes[] = {{'k', 1e3}, {'M', 1e6}, {'G', 1e9}, {'T', 1e12}, {'P', 1e15}};

#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

/* (the first byte first: every quantity of a file is looked up here) */
static bool word_equals(const char *text, size_t len, const char *word) {
    return len > 0 && word[0] == text[0] && strlen(word) == len && memcmp(text, word, len) == 0;
}

static bool lookup_count(const char *text, size_t len, BaseUnit *base, double *scale) {
    for (size_t i = 0; i < COUNT_OF(count_words); i++) {
        if (word_equals(text, len, count_words[i].spelling)) {
            *base = count_words[i].base;
            *scale = count_words[i].scale;
            return true;
        }
    }
    return false;
}

static bool lookup_word(const char *text, size_t len, BaseUnit *base, double *scale) {
    if (len == 0) return false;
    for (size_t i = 0; i < COUNT_OF(unit_words); i++) {
        if (word_equals(text, len, unit_words[i].spelling)) {
            *base = unit_words[i].base;
            *scale = unit_words[i].scale;
            return true;
        }
    }
    if (lookup_count(text, len, base, scale)) return true;
    for (size_t i = 0; i < COUNT_OF(count_prefixes); i++) {
        if (text[0] == count_prefixes[i].letter && lookup_count(text + 1, len - 1, base, scale)) {
            *scale *= count_prefixes[i].scale;
            return true;
        }
    }
    return false;
}

static bool is_count(BaseUnit b) {
    return b == BU_MAC || b == BU_OP || b == BU_FLOP;
}

static bool is_time(BaseUnit b) {
    return b == BU_SECOND || b == BU_CYCLE;
}

/* The only compositions with a meaning in an arch description. */
static bool ratio_allowed(BaseUnit num, BaseUnit den) {
    if (num == BU_BYTE) return is_time(den);                     /* bandwidth */
    if (num == BU_JOULE) return den == BU_BYTE || is_count(den); /* energy per */
    if (is_count(num)) return is_time(den);                      /* throughput */
    return false;
}

bool unit_parse(const char *text, size_t len, UnitDim *dim, double *scale) {
    const char *slash = memchr(text, '/', len);
    BaseUnit num, den = BU_NONE;
    double num_scale, den_scale = 1;
    if (!slash) {
        if (!lookup_word(text, len, &num, &num_scale)) return false;
    } else {
        size_t num_len = (size_t)(slash - text);
        if (!lookup_word(text, num_len, &num, &num_scale) ||
            !lookup_word(slash + 1, len - num_len - 1, &den, &den_scale) ||
            !ratio_allowed(num, den))
            return false;
    }
    dim->num = (uint8_t)num;
    dim->den = (uint8_t)den;
    *scale = num_scale / den_scale;
    return true;
}

bool unit_dim_eq(UnitDim a, UnitDim b) {
    return a.num == b.num && a.den == b.den;
}

const char *unit_dim_describe(UnitDim dim) {
    if (dim.den == BU_NONE) {
        switch ((BaseUnit)dim.num) {
        case BU_NONE: return "number";
        case BU_BYTE: return "size";
        case BU_SECOND: return "time";
        case BU_CYCLE: return "time in cycles";
        case BU_HERTZ: return "frequency";
        case BU_JOULE: return "energy";
        case BU_MAC: return "MAC count";
        case BU_OP: return "op count";
        case BU_FLOP: return "FLOP count";
        case BU_USD: return "price";
        }
        return "quantity";
    }
    if (dim.num == BU_BYTE && is_time(dim.den)) return "bandwidth";
    if (dim.num == BU_JOULE) {
        switch ((BaseUnit)dim.den) {
        case BU_BYTE: return "energy per byte";
        case BU_MAC: return "energy per MAC";
        case BU_OP: return "energy per op";
        case BU_FLOP: return "energy per FLOP";
        default: break;
        }
    }
    if (is_count(dim.num) && is_time(dim.den)) {
        /* name the count: a matrix unit takes MACs (or FLOPs), a vector
         * unit ops (or FLOPs), and "expects a throughput, got a throughput"
         * would say nothing */
        switch ((BaseUnit)dim.num) {
        case BU_MAC: return "MAC throughput";
        case BU_OP: return "op throughput";
        case BU_FLOP: return "FLOP throughput";
        default: return "throughput";
        }
    }
    return "quantity";
}

const char *unit_dim_example(UnitDim dim) {
    if (dim.den == BU_NONE) {
        switch ((BaseUnit)dim.num) {
        case BU_NONE: return "4096";
        case BU_BYTE: return "2 MiB";
        case BU_SECOND: return "5 ns";
        case BU_CYCLE: return "3 cycles";
        case BU_HERTZ: return "1 GHz";
        case BU_JOULE: return "5 pJ";
        case BU_MAC: return "1 GMAC";
        case BU_OP: return "1 Gop";
        case BU_FLOP: return "1 TFLOP";
        case BU_USD: return "30000 USD";
        }
        return "4096";
    }
    if (dim.num == BU_BYTE && dim.den == BU_SECOND) return "64 GB/s";
    if (dim.num == BU_BYTE && dim.den == BU_CYCLE) return "32 B/cycle";
    if (dim.num == BU_JOULE) {
        switch ((BaseUnit)dim.den) {
        case BU_BYTE: return "20 pJ/B";
        case BU_MAC: return "0.25 pJ/MAC";
        case BU_OP: return "0.8 pJ/op";
        case BU_FLOP: return "0.1 pJ/FLOP";
        default: break;
        }
    }
    if (dim.den == BU_CYCLE) {
        if (dim.num == BU_MAC) return "4096 MAC/cycle";
        if (dim.num == BU_OP) return "64 op/cycle";
        if (dim.num == BU_FLOP) return "128 FLOP/cycle";
    }
    if (dim.den == BU_SECOND) {
        if (dim.num == BU_MAC) return "2 TMAC/s";
        if (dim.num == BU_OP) return "100 Gop/s";
        if (dim.num == BU_FLOP) return "100 TFLOP/s";
    }
    return "4096";
}

/* ------------------------------------------------------------ formatting */

typedef struct Prefix {
    double scale;
    const char *name; /* the whole unit word at this scale */
} Prefix;

static const Prefix binary_sizes[] = {
    {1, "B"},
    {1024.0, "KiB"},
    {1024.0 * 1024, "MiB"},
    {1024.0 * 1024 * 1024, "GiB"},
    {1024.0 * 1024 * 1024 * 1024, "TiB"},
    {1024.0 * 1024 * 1024 * 1024 * 1024, "PiB"},
};
static const Prefix decimal_sizes[] = {{1, "B"},    {1e3, "kB"},  {1e6, "MB"},
                                       {1e9, "GB"}, {1e12, "TB"}, {1e15, "PB"}};
static const Prefix seconds[] = {{1e-12, "ps"}, {1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1, "s"}};
static const Prefix hertz[] = {{1, "Hz"}, {1e3, "kHz"}, {1e6, "MHz"}, {1e9, "GHz"}, {1e12, "THz"}};
static const Prefix joules[] = {{1e-15, "fJ"}, {1e-12, "pJ"}, {1e-9, "nJ"}, {1e-6, "uJ"},
                                {1e-3, "mJ"},  {1, "J"},      {1e3, "kJ"}};
static const Prefix macs[] = {{1, "MAC"},    {1e3, "kMAC"},  {1e6, "MMAC"},
                              {1e9, "GMAC"}, {1e12, "TMAC"}, {1e15, "PMAC"}};
static const Prefix ops[] = {{1, "op"},    {1e3, "kop"},  {1e6, "Mop"},
                             {1e9, "Gop"}, {1e12, "Top"}, {1e15, "Pop"}};
static const Prefix flops[] = {{1, "FLOP"},    {1e3, "kFLOP"},  {1e6, "MFLOP"},
                               {1e9, "GFLOP"}, {1e12, "TFLOP"}, {1e15, "PFLOP"}};
static const Prefix cycles[] = {{1, "cycles"}};
static const Prefix dollars[] = {{1, "USD"}, {1e3, "kUSD"}, {1e6, "MUSD"}};
static const Prefix plain[] = {{1, ""}};

/* Three significant digits without an exponent for magnitudes in
 * [0.001, 10^6): "0.500", "1.50", "18.4", "512", "12345"; the number of
 * decimals is taken after rounding, so 9.996 prints "10.0", not "10.00". */
static void format_three_digits(char *buf, size_t size, double m) {
    double am = fabs(m);
    if (am == 0) {
        snprintf(buf, size, "0");
        return;
    }
    if (am < 1e-3 || am >= 1e6) {
        snprintf(buf, size, "%.3g", m);
        return;
    }
    int decimals = 2 - (int)floor(log10(am));
    if (decimals < 0) decimals = 0;
    if (decimals > 0) {
        double p = pow(10, decimals);
        if (round(am * p) / p >= pow(10, 3 - decimals)) decimals--;
    }
    snprintf(buf, size, "%.*f", decimals, m);
}

/* The largest prefix not above |value|, then three digits; a mantissa
 * that rounds up to the next step (999.7 -> 1000) moves up a prefix. */
static const char *format_with(Arena *a, double value, const Prefix *table, size_t count,
                               double step) {
    double mag = fabs(value);
    size_t k = 0;
    while (k + 1 < count && mag >= table[k + 1].scale) k++;
    double m = value / table[k].scale;
    if (k + 1 < count && fabs(m) >= 100 && round(fabs(m)) >= step) {
        k++;
        m = value / table[k].scale;
    }
    char number[64];
    format_three_digits(number, sizeof number, m);
    if (table[k].name[0] == '\0') return arena_strdup(a, number);
    return arena_printf(a, "%s %s", number, table[k].name);
}

#define FORMAT(a, v, table, step) format_with(a, v, table, COUNT_OF(table), step)

static bool whole_below(double value, double limit) {
    return fabs(value) < limit && value == floor(value);
}

static const char *denominator_word(BaseUnit den) {
    switch (den) {
    case BU_SECOND: return "s";
    case BU_CYCLE: return "cycle";
    case BU_BYTE: return "B";
    case BU_MAC: return "MAC";
    case BU_OP: return "op";
    case BU_FLOP: return "FLOP";
    default: return "?";
    }
}

/* Exact whole numbers read better for small counts ("512 B", "3 cycles",
 * "4096 MAC/cycle"); everything else gets a prefix and three digits. */
static const char *format_numerator(Arena *a, double value, BaseUnit num, bool alone) {
    switch (num) {
    case BU_BYTE:
        if (alone) {
            if (whole_below(value, 1024)) return arena_printf(a, "%.0f B", value);
            return FORMAT(a, value, binary_sizes, 1024);
        }
        if (whole_below(value, 1000)) return arena_printf(a, "%.0f B", value);
        return FORMAT(a, value, decimal_sizes, 1000);
    case BU_SECOND: return FORMAT(a, value, seconds, 1000);
    case BU_CYCLE:
        if (whole_below(value, 1e15))
            return arena_printf(a, "%.0f %s", value, value == 1 ? "cycle" : "cycles");
        return FORMAT(a, value, cycles, 1000);
    case BU_HERTZ: return FORMAT(a, value, hertz, 1000);
    case BU_JOULE: return FORMAT(a, value, joules, 1000);
    case BU_MAC:
        if (whole_below(value, 1e6)) return arena_printf(a, "%.0f MAC", value);
        return FORMAT(a, value, macs, 1000);
    case BU_OP:
        if (whole_below(value, 1e6)) return arena_printf(a, "%.0f op", value);
        return FORMAT(a, value, ops, 1000);
    case BU_FLOP:
        if (whole_below(value, 1e6)) return arena_printf(a, "%.0f FLOP", value);
        return FORMAT(a, value, flops, 1000);
    case BU_USD:
        if (whole_below(value, 1e6)) return arena_printf(a, "%.0f USD", value);
        return FORMAT(a, value, dollars, 1000);
    case BU_NONE: break;
    }
    if (whole_below(value, 1e15)) return arena_printf(a, "%.0f", value);
    return FORMAT(a, value, plain, 1000);
}

const char *unit_dim_si_name(Arena *a, UnitDim dim) {
    static const char *const numerators[] = {
        [BU_NONE] = "",     [BU_BYTE] = "B",  [BU_SECOND] = "s", [BU_CYCLE] = "cycles",
        [BU_HERTZ] = "Hz",  [BU_JOULE] = "J", [BU_MAC] = "MAC",  [BU_OP] = "op",
        [BU_FLOP] = "FLOP", [BU_USD] = "USD"};
    if (dim.num >= COUNT_OF(numerators)) return "";
    if (dim.den == BU_NONE) return numerators[dim.num];
    return arena_printf(a, "%s/%s", dim.num == BU_CYCLE ? "cycle" : numerators[dim.num],
                        denominator_word((BaseUnit)dim.den));
}

const char *unit_format(Arena *a, double value, UnitDim dim) {
    if (dim.den == BU_NONE) return format_numerator(a, value, (BaseUnit)dim.num, true);
    const char *num = format_numerator(a, value, (BaseUnit)dim.num, false);
    return arena_printf(a, "%s/%s", num, denominator_word((BaseUnit)dim.den));
}
