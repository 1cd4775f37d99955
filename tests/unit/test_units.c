/* test_units.c — unit spellings, compositions, rejections, descriptions
 * and formatting.  Expected scales are the SI definitions written out. */
#include "frontend/util/util.h"
#include "tests/unit/unit.h"

static bool parse(const char *text, UnitDim *dim, double *scale) {
    return unit_parse(text, strlen(text), dim, scale);
}

/* Checks that `text` parses to num/den with the given scale. */
static void expect_unit(const char *text, BaseUnit num, BaseUnit den, double scale) {
    UnitDim dim = {0, 0};
    double got = 0;
    char name[96];
    snprintf(name, sizeof name, "unit %s parses", text);
    CHECK(parse(text, &dim, &got), name);
    snprintf(name, sizeof name, "unit %s dimension", text);
    CHECK(dim.num == num && dim.den == den, name);
    snprintf(name, sizeof name, "unit %s scale", text);
    CHECK_NEAR(got, scale, 1e-12, name);
}

static void expect_reject(const char *text) {
    UnitDim dim;
    double scale;
    char name[96];
    snprintf(name, sizeof name, "unit \"%s\" rejected", text);
    CHECK(!parse(text, &dim, &scale), name);
}

static void expect_format(double value, BaseUnit num, BaseUnit den, const char *expected) {
    Arena a = {0};
    char name[96];
    snprintf(name, sizeof name, "format %g as %s", value, expected);
    CHECK_STR(unit_format(&a, value, (UnitDim){num, den}), expected, name);
    arena_free_all(&a);
}

int main(void) {
    /* sizes: decimal steps of 1000, binary steps of 1024, bit = 1/8 B */
    expect_unit("B", BU_BYTE, BU_NONE, 1);
    expect_unit("kB", BU_BYTE, BU_NONE, 1000);
    expect_unit("KB", BU_BYTE, BU_NONE, 1000);
    expect_unit("MB", BU_BYTE, BU_NONE, 1e6);
    expect_unit("GB", BU_BYTE, BU_NONE, 1e9);
    expect_unit("TB", BU_BYTE, BU_NONE, 1e12);
    expect_unit("PB", BU_BYTE, BU_NONE, 1e15);
    expect_unit("KiB", BU_BYTE, BU_NONE, 1024);
    expect_unit("MiB", BU_BYTE, BU_NONE, 1048576);            /* 2^20 */
    expect_unit("GiB", BU_BYTE, BU_NONE, 1073741824);         /* 2^30 */
    expect_unit("TiB", BU_BYTE, BU_NONE, 1099511627776.0);    /* 2^40 */
    expect_unit("PiB", BU_BYTE, BU_NONE, 1125899906842624.0); /* 2^50 */
    expect_unit("bit", BU_BYTE, BU_NONE, 0.125);
    expect_unit("kbit", BU_BYTE, BU_NONE, 125);     /* 1000 / 8 */
    expect_unit("Mbit", BU_BYTE, BU_NONE, 125000);  /* 10^6 / 8 */
    expect_unit("Gbit", BU_BYTE, BU_NONE, 1.25e8);  /* 10^9 / 8 */
    expect_unit("Tbit", BU_BYTE, BU_NONE, 1.25e11); /* 10^12 / 8 */
    /* time */
    expect_unit("s", BU_SECOND, BU_NONE, 1);
    expect_unit("ms", BU_SECOND, BU_NONE, 1e-3);
    expect_unit("us", BU_SECOND, BU_NONE, 1e-6);
    expect_unit("ns", BU_SECOND, BU_NONE, 1e-9);
    expect_unit("ps", BU_SECOND, BU_NONE, 1e-12);
    expect_unit("cycle", BU_CYCLE, BU_NONE, 1);
    expect_unit("cycles", BU_CYCLE, BU_NONE, 1);
    /* frequency */
    expect_unit("Hz", BU_HERTZ, BU_NONE, 1);
    expect_unit("kHz", BU_HERTZ, BU_NONE, 1e3);
    expect_unit("MHz", BU_HERTZ, BU_NONE, 1e6);
    expect_unit("GHz", BU_HERTZ, BU_NONE, 1e9);
    expect_unit("THz", BU_HERTZ, BU_NONE, 1e12);
    /* energy */
    expect_unit("J", BU_JOULE, BU_NONE, 1);
    expect_unit("kJ", BU_JOULE, BU_NONE, 1e3);
    expect_unit("mJ", BU_JOULE, BU_NONE, 1e-3);
    expect_unit("uJ", BU_JOULE, BU_NONE, 1e-6);
    expect_unit("nJ", BU_JOULE, BU_NONE, 1e-9);
    expect_unit("pJ", BU_JOULE, BU_NONE, 1e-12);
    expect_unit("fJ", BU_JOULE, BU_NONE, 1e-15);
    /* counts, plurals and decimal prefixes */
    expect_unit("MAC", BU_MAC, BU_NONE, 1);
    expect_unit("MACs", BU_MAC, BU_NONE, 1);
    expect_unit("GMAC", BU_MAC, BU_NONE, 1e9);
    expect_unit("op", BU_OP, BU_NONE, 1);
    expect_unit("ops", BU_OP, BU_NONE, 1);
    expect_unit("kops", BU_OP, BU_NONE, 1e3);
    expect_unit("FLOP", BU_FLOP, BU_NONE, 1);
    expect_unit("FLOPs", BU_FLOP, BU_NONE, 1);
    expect_unit("TFLOP", BU_FLOP, BU_NONE, 1e12);
    expect_unit("PFLOPs", BU_FLOP, BU_NONE, 1e15);
    expect_unit("MMAC", BU_MAC, BU_NONE, 1e6);

    /* compositions: scale = numerator scale / denominator scale */
    expect_unit("GB/s", BU_BYTE, BU_SECOND, 1e9);
    expect_unit("TB/s", BU_BYTE, BU_SECOND, 1e12);
    expect_unit("GiB/s", BU_BYTE, BU_SECOND, 1073741824);
    expect_unit("B/cycle", BU_BYTE, BU_CYCLE, 1);
    expect_unit("KiB/cycle", BU_BYTE, BU_CYCLE, 1024);
    expect_unit("kB/ns", BU_BYTE, BU_SECOND, 1e12);    /* 1e3 / 1e-9 */
    expect_unit("Mbit/s", BU_BYTE, BU_SECOND, 125000); /* 1e6/8 / 1 */
    expect_unit("pJ/B", BU_JOULE, BU_BYTE, 1e-12);
    expect_unit("pJ/bit", BU_JOULE, BU_BYTE, 8e-12); /* 1e-12 / (1/8) */
    expect_unit("nJ/KiB", BU_JOULE, BU_BYTE, 1e-9 / 1024);
    expect_unit("pJ/MAC", BU_JOULE, BU_MAC, 1e-12);
    expect_unit("pJ/op", BU_JOULE, BU_OP, 1e-12);
    expect_unit("fJ/FLOP", BU_JOULE, BU_FLOP, 1e-15);
    expect_unit("MAC/cycle", BU_MAC, BU_CYCLE, 1);
    expect_unit("op/cycle", BU_OP, BU_CYCLE, 1);
    expect_unit("FLOPs/cycle", BU_FLOP, BU_CYCLE, 1);
    expect_unit("TFLOP/s", BU_FLOP, BU_SECOND, 1e12);
    expect_unit("GMAC/s", BU_MAC, BU_SECOND, 1e9);
    expect_unit("Gop/ns", BU_OP, BU_SECOND, 1e18); /* 1e9 / 1e-9 */

    /* rejections: unknown words, wrong case, bad compositions, spaces */
    expect_reject("");
    expect_reject("b");
    expect_reject("mb");
    expect_reject("Kib");
    expect_reject("kiB");
    expect_reject("sec");
    expect_reject("kcycle");
    expect_reject("mMAC");
    expect_reject("uFLOP");
    expect_reject("GiBs");
    expect_reject("s/B");
    expect_reject("J/s");
    expect_reject("Hz/s");
    expect_reject("MAC/B");
    expect_reject("pJ/Hz");
    expect_reject("B/B");
    expect_reject("cycle/cycle");
    expect_reject("GB/");
    expect_reject("/s");
    expect_reject("GB/s/s");
    expect_reject("GB /s");
    expect_reject("GB/ s");
    expect_reject("Ki B");
    {
        /* the length given is honoured: "KiBx" cut to 3 is KiB, and a
         * NUL byte inside the length is not */
        UnitDim dim;
        double scale = 0;
        CHECK(unit_parse("KiBx", 3, &dim, &scale) && scale == 1024,
              "unit_parse uses the given length");
        CHECK(unit_parse("kUSD", 4, &dim, &scale) && scale == 1e3 && dim.num == BU_USD &&
                  dim.den == BU_NONE,
              "unit_parse: kUSD is 1000 US dollars, a price");
        CHECK(!unit_parse("KiB\0", 4, &dim, &scale), "unit_parse rejects an embedded NUL");
        CHECK(!unit_parse("KiB", 0, &dim, &scale), "unit_parse rejects length 0");
    }

    /* descriptions and examples */
    CHECK_STR(unit_dim_describe((UnitDim){BU_NONE, BU_NONE}), "number", "describe number");
    CHECK_STR(unit_dim_describe((UnitDim){BU_BYTE, BU_NONE}), "size", "describe size");
    CHECK_STR(unit_dim_describe((UnitDim){BU_SECOND, BU_NONE}), "time", "describe time");
    CHECK_STR(unit_dim_describe((UnitDim){BU_CYCLE, BU_NONE}), "time in cycles", "describe cycles");
    CHECK_STR(unit_dim_describe((UnitDim){BU_HERTZ, BU_NONE}), "frequency", "describe frequency");
    CHECK_STR(unit_dim_describe((UnitDim){BU_JOULE, BU_NONE}), "energy", "describe energy");
    CHECK_STR(unit_dim_describe((UnitDim){BU_MAC, BU_NONE}), "MAC count", "describe MAC count");
    CHECK_STR(unit_dim_describe((UnitDim){BU_OP, BU_NONE}), "op count", "describe op count");
    CHECK_STR(unit_dim_describe((UnitDim){BU_BYTE, BU_SECOND}), "bandwidth", "describe bandwidth");
    CHECK_STR(unit_dim_describe((UnitDim){BU_BYTE, BU_CYCLE}), "bandwidth",
              "describe bandwidth per cycle");
    CHECK_STR(unit_dim_describe((UnitDim){BU_JOULE, BU_BYTE}), "energy per byte",
              "describe energy per byte");
    CHECK_STR(unit_dim_describe((UnitDim){BU_JOULE, BU_MAC}), "energy per MAC",
              "describe energy per MAC");
    CHECK_STR(unit_dim_describe((UnitDim){BU_JOULE, BU_OP}), "energy per op",
              "describe energy per op");
    CHECK_STR(unit_dim_describe((UnitDim){BU_JOULE, BU_FLOP}), "energy per FLOP",
              "describe energy per FLOP");
    CHECK_STR(unit_dim_describe((UnitDim){BU_MAC, BU_CYCLE}), "MAC throughput",
              "describe MAC throughput");
    CHECK_STR(unit_dim_describe((UnitDim){BU_FLOP, BU_SECOND}), "FLOP throughput",
              "describe FLOP throughput");
    {
        /* the units E0219 names a value's range in */
        Arena si = {0};
        CHECK_STR(unit_dim_si_name(&si, (UnitDim){BU_BYTE, BU_SECOND}), "B/s", "SI name B/s");
        CHECK_STR(unit_dim_si_name(&si, (UnitDim){BU_BYTE, BU_CYCLE}), "B/cycle",
                  "SI name B/cycle");
        CHECK_STR(unit_dim_si_name(&si, (UnitDim){BU_JOULE, BU_BYTE}), "J/B", "SI name J/B");
        CHECK_STR(unit_dim_si_name(&si, (UnitDim){BU_MAC, BU_CYCLE}), "MAC/cycle",
                  "SI name MAC/cycle");
        CHECK_STR(unit_dim_si_name(&si, (UnitDim){BU_SECOND, BU_NONE}), "s", "SI name s");
        CHECK_STR(unit_dim_si_name(&si, (UnitDim){BU_CYCLE, BU_NONE}), "cycles", "SI name cycles");
        CHECK_STR(unit_dim_si_name(&si, (UnitDim){BU_HERTZ, BU_NONE}), "Hz", "SI name Hz");
        CHECK_STR(unit_dim_si_name(&si, (UnitDim){BU_NONE, BU_NONE}), "", "a number has no unit");
        arena_free_all(&si);
    }
    CHECK_STR(unit_dim_example((UnitDim){BU_BYTE, BU_NONE}), "2 MiB", "example size");
    CHECK_STR(unit_dim_example((UnitDim){BU_SECOND, BU_NONE}), "5 ns", "example time");
    CHECK_STR(unit_dim_example((UnitDim){BU_CYCLE, BU_NONE}), "3 cycles", "example cycles");
    CHECK_STR(unit_dim_example((UnitDim){BU_HERTZ, BU_NONE}), "1 GHz", "example frequency");
    CHECK_STR(unit_dim_example((UnitDim){BU_JOULE, BU_NONE}), "5 pJ", "example energy");
    CHECK_STR(unit_dim_example((UnitDim){BU_BYTE, BU_SECOND}), "64 GB/s", "example bandwidth");
    CHECK_STR(unit_dim_example((UnitDim){BU_JOULE, BU_BYTE}), "20 pJ/B", "example energy per byte");
    CHECK_STR(unit_dim_example((UnitDim){BU_JOULE, BU_MAC}), "0.25 pJ/MAC",
              "example energy per MAC");
    CHECK_STR(unit_dim_example((UnitDim){BU_JOULE, BU_OP}), "0.8 pJ/op", "example energy per op");
    CHECK_STR(unit_dim_example((UnitDim){BU_MAC, BU_CYCLE}), "4096 MAC/cycle",
              "example MAC throughput");
    {
        /* every example must itself parse to the dimension it illustrates */
        static const UnitDim dims[] = {
            {BU_BYTE, BU_NONE},   {BU_SECOND, BU_NONE}, {BU_CYCLE, BU_NONE}, {BU_HERTZ, BU_NONE},
            {BU_JOULE, BU_NONE},  {BU_MAC, BU_NONE},    {BU_OP, BU_NONE},    {BU_FLOP, BU_NONE},
            {BU_BYTE, BU_SECOND}, {BU_BYTE, BU_CYCLE},  {BU_JOULE, BU_BYTE}, {BU_JOULE, BU_MAC},
            {BU_JOULE, BU_OP},    {BU_JOULE, BU_FLOP},  {BU_MAC, BU_CYCLE},  {BU_OP, BU_CYCLE},
            {BU_FLOP, BU_CYCLE},  {BU_MAC, BU_SECOND},  {BU_OP, BU_SECOND},  {BU_FLOP, BU_SECOND}};
        for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
            const char *example = unit_dim_example(dims[i]);
            const char *unit = strchr(example, ' ');
            UnitDim got = {0, 0};
            double scale;
            char name[96];
            snprintf(name, sizeof name, "example \"%s\" parses back", example);
            CHECK(unit && parse(unit + 1, &got, &scale) && unit_dim_eq(got, dims[i]), name);
        }
    }
    CHECK(unit_dim_eq((UnitDim){BU_BYTE, BU_SECOND}, (UnitDim){BU_BYTE, BU_SECOND}),
          "unit_dim_eq equal");
    CHECK(!unit_dim_eq((UnitDim){BU_BYTE, BU_SECOND}, (UnitDim){BU_BYTE, BU_CYCLE}),
          "unit_dim_eq different denominator");

    /* formatting: three significant digits after a prefix; small whole
     * sizes and counts exactly */
    expect_format(512, BU_BYTE, BU_NONE, "512 B");
    expect_format(1000, BU_BYTE, BU_NONE, "1000 B");      /* below 1024 */
    expect_format(4096, BU_BYTE, BU_NONE, "4.00 KiB");    /* 4096/1024 = 4 */
    expect_format(1572864, BU_BYTE, BU_NONE, "1.50 MiB"); /* 1.5 * 2^20 */
    expect_format(1073741824, BU_BYTE, BU_NONE, "1.00 GiB");
    expect_format(1048575, BU_BYTE, BU_NONE, "1.00 MiB"); /* 1023.999 KiB rounds up */
    expect_format(0.5, BU_BYTE, BU_NONE, "0.500 B");
    expect_format(18.4e-6, BU_SECOND, BU_NONE, "18.4 us");
    expect_format(5e-9, BU_SECOND, BU_NONE, "5.00 ns");
    expect_format(1.5, BU_SECOND, BU_NONE, "1.50 s");
    expect_format(3600, BU_SECOND, BU_NONE, "3600 s");
    expect_format(999.96e-9, BU_SECOND, BU_NONE, "1.00 us"); /* 999.96 ns -> 1000 */
    expect_format(2.5e-13, BU_SECOND, BU_NONE, "0.250 ps");
    expect_format(0.00999, BU_SECOND, BU_NONE, "9.99 ms");
    expect_format(0.009996, BU_SECOND, BU_NONE, "10.0 ms"); /* 9.996 rounds to 10.0 */
    expect_format(0, BU_SECOND, BU_NONE, "0 ps");
    expect_format(3, BU_CYCLE, BU_NONE, "3 cycles");
    expect_format(1, BU_CYCLE, BU_NONE, "1 cycle");
    expect_format(2500000, BU_CYCLE, BU_NONE, "2500000 cycles");
    expect_format(1e9, BU_HERTZ, BU_NONE, "1.00 GHz");
    expect_format(1.2e9, BU_HERTZ, BU_NONE, "1.20 GHz");
    expect_format(2.5e-12, BU_JOULE, BU_NONE, "2.50 pJ");
    expect_format(1e-3, BU_JOULE, BU_NONE, "1.00 mJ");
    expect_format(12.3e-6, BU_JOULE, BU_NONE, "12.3 uJ");
    expect_format(4.56e-9, BU_JOULE, BU_NONE, "4.56 nJ");
    expect_format(2, BU_JOULE, BU_NONE, "2.00 J");
    expect_format(64e9, BU_BYTE, BU_SECOND, "64.0 GB/s");
    expect_format(1.5e12, BU_BYTE, BU_SECOND, "1.50 TB/s");
    expect_format(32, BU_BYTE, BU_CYCLE, "32 B/cycle");
    expect_format(20e-12, BU_JOULE, BU_BYTE, "20.0 pJ/B");
    expect_format(0.25e-12, BU_JOULE, BU_MAC, "250 fJ/MAC");
    expect_format(4096, BU_MAC, BU_CYCLE, "4096 MAC/cycle");
    expect_format(1e14, BU_FLOP, BU_SECOND, "100 TFLOP/s");
    expect_format(2e9, BU_MAC, BU_NONE, "2.00 GMAC");
    expect_format(4096, BU_NONE, BU_NONE, "4096");
    expect_format(0.5, BU_NONE, BU_NONE, "0.500");
    expect_format(-5e-9, BU_SECOND, BU_NONE, "-5.00 ns");
    return unit_finish();
}
