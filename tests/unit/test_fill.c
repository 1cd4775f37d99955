/* test_fill.c — a pipelined group's fill and drain with a partial last
 * tile, and its limit, the stages run one after another
 * (docs/cost-model.md section 7), computed by hand. */
#include "program.h"

static Arena arena;

/* One vector unit at 1 op/ns, DRAM at 4 B/ns, SRAM at 1024 B/ns; Y = 2 X
 * on fp32 rows. */
static const char *text =
    "arch line<ROOM = 1 MiB> {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 4 B/cycle; }\n"
    "  memory SRAM { capacity ROOM; bandwidth 1024 B/cycle; }\n"
    "  compute simd vector { throughput 1 op/cycle; }\n"
    "}\n"
    "op scale<M = 64> {\n"
    "  in X[M] : fp32;\n"
    "  out Y[M] : fp32;\n"
    "  Y[m] = X[m] * 2;\n"
    "}\n"
    "mapping partial for scale<M = 17> on line { tile SRAM: m 16; }\n"
    "mapping held_once for scale on line<ROOM = 128 B> { tile SRAM: m 16; }\n"
    "mapping held_once_none for scale on line<ROOM = 128 B> { tile SRAM: m 16; overlap none; }\n";

int main(void) {
    SourceManager sm;
    DiagSink diags;
    Program *p = unit_load_named(&arena, &sm, &diags, "fill.cmt", text);
    CHECK(p && diags.error_count == 0, "the file checks");
    if (!p || diags.error_count) return unit_finish();

    /* 17 rows in tiles of 16: 2 tiles, the second of 1 row.  C = 17 ns;
       DRAM moves X and Y, 68 B each: 136 B / 4 B/ns = 34 ns, the pace.
       The units fill with the first tile's share of their work, 16/17
       (17 x 16/17 = 16 ns), not half of it: 34 + 16 = 50 ns. */
    const Schedule *s = unit_lowered(&arena, p, "partial");
    CHECK(s && s->group_count == 1, "partial: one group");
    if (s) {
        CHECK(unit_near(s->groups[0].first_share, 16.0 / 17.0, 1e-12),
              "partial: the first tile holds 16 of the 17 rows");
        CHECK(unit_near(s->groups[0].cost.fill_drain_s, 16e-9, 1e-9), "partial: fill 16 ns");
        CHECK(unit_near(s->cost.latency_s, 50e-9, 1e-9), "partial: 34 + 16 = 50 ns");
    }

    /* 64 rows in tiles of 16 (T = 4) with room for one tile of X and one
       of Y (128 B): both are held once.  C = 64 ns; DRAM 512 B / 4 = 128
       ns (the pace); SRAM 256 B written by the loads, 256 B read by the
       stores and 512 B by the unit, 1024 B / 1024 B/ns = 1 ns.  Stall:
       X's 4 loads of 64 ns and Y's 4 stores wait 3/4 each, 48 + 48 = 96
       ns; fill 64 / 4 = 16 ns; 128 + 16 + 96 = 240 ns, slower than the
       stages one after another, 64 + 128 + 1 = 193 ns, which it takes:
       the same as `overlap none`. */
    const Schedule *h = unit_lowered(&arena, p, "held_once");
    const Schedule *n = unit_lowered(&arena, p, "held_once_none");
    CHECK(h && n, "held_once lowers");
    if (h && n) {
        CHECK(unit_near(n->cost.latency_s, 193e-9, 1e-9), "overlap none: 64 + 128 + 1 = 193 ns");
        CHECK(unit_near(h->cost.latency_s, 193e-9, 1e-9),
              "overlap full with every tile held once: capped at 193 ns, not 240");
        CHECK(unit_near(h->groups[0].cost.stall_s + h->groups[0].cost.fill_drain_s,
                        193e-9 - 128e-9, 1e-9),
              "held_once: stall and fill make up the 65 ns beyond the memory");
    }
    return unit_finish();
}
