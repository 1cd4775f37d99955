/* test_reserve.c — `overlap ... reserve R of U`: the compute of a group
 * whose collectives run beside it takes U / (U - R) times as long
 * (docs/cost-model.md section 7.5), computed by hand. */
#include "program.h"

static Arena arena;

/* Two chips on a switch, each with a matrix unit of 1 MAC/ns; C = A B
 * with M = N = 16, K = 64.  Splitting k over the chips makes C's partial
 * sums a collective of the group; not splitting leaves it none. */
static const char *text =
    "arch two<MACS = 1 MAC/cycle> {\n"
    "  clock 1 GHz;\n"
    "  cluster chips[x = 2] switch { link_bandwidth 1 GB/s; hop_latency 1 us; }\n"
    "  memory DRAM { bandwidth 64 B/cycle; }\n"
    "  memory SRAM { capacity 1 MiB; bandwidth 1024 B/cycle; }\n"
    "  compute mx matrix { throughput MACS; }\n"
    "}\n"
    "op mm<M = 16, N = 16, K = 64> {\n"
    "  in A[M, K] : bf16;\n"
    "  in B[K, N] : bf16;\n"
    "  out C[M, N] : bf16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "}\n"
    "mapping split for mm on two { spatial k -> x; overlap full reserve 1 of 4; }\n"
    "mapping slower_unit for mm on two<MACS = 0.75 MAC/cycle> { spatial k -> x; }\n"
    "mapping no_collective for mm on two { overlap full reserve 1 of 4; }\n"
    "mapping group_line for mm on two {\n"
    "  spatial k -> x;\n"
    "  fuse C overlap tiles reserve 3 of 4;\n"
    "  overlap full reserve 1 of 4;\n"
    "}\n";

int main(void) {
    SourceManager sm;
    DiagSink diags;
    Program *p = unit_load_named(&arena, &sm, &diags, "reserve.cmt", text);
    CHECK(p && diags.error_count == 0, "the file checks");
    if (!p || diags.error_count) return unit_finish();

    /* Each chip: 16 x 16 x 32 = 8192 MAC at 1 MAC/ns = 8192 ns on all 4
       units; on 3 of them 8192 x 4/3 = 10922.67 ns. */
    const Schedule *s = unit_lowered(&arena, p, "split");
    CHECK(s && s->group_count == 1, "split: one group");
    if (s) {
        const SchedGroup *g = &s->groups[0];
        CHECK(g->cost.network_s > 0, "split: C's partial sums are a collective of the group");
        CHECK(g->reserved, "split: the reserve applies");
        CHECK(unit_near(g->cost.compute_s, 8192e-9 * 4 / 3, 1e-12),
              "split: compute 8192 ns x 4/3 = 10922.67 ns");
        CHECK(unit_near(g->matrix_s, 8192e-9 * 4 / 3, 1e-12), "split: the matrix stage too");
    }
    /* The same as a unit of 3/4 the throughput and no reserve: every time
       of the group agrees (an independent way to the same schedule). */
    const Schedule *slow = unit_lowered(&arena, p, "slower_unit");
    CHECK(slow != NULL, "slower_unit lowers");
    if (s && slow) {
        CHECK(unit_near(slow->cost.latency_s, s->cost.latency_s, 1e-15),
              "reserve 1 of 4 = a unit at 3/4 of its throughput");
        CHECK(unit_near(slow->groups[0].cost.fill_drain_s, s->groups[0].cost.fill_drain_s, 1e-15),
              "and the same fill and drain");
    }
    /* No split, no collective: 16 x 16 x 64 = 16384 ns on every unit. */
    const Schedule *none = unit_lowered(&arena, p, "no_collective");
    CHECK(none != NULL, "no_collective lowers");
    if (none) {
        CHECK(!none->groups[0].reserved, "no_collective: nothing to reserve units for");
        CHECK(unit_near(none->groups[0].cost.compute_s, 16384e-9, 1e-12),
              "no_collective: compute 16384 ns");
    }
    /* The fuse line's reserve is its group's: 8192 x 4/1 = 32768 ns. */
    const Schedule *gl = unit_lowered(&arena, p, "group_line");
    CHECK(gl != NULL, "group_line lowers");
    if (gl) {
        CHECK(gl->groups[0].reserve.units == 3 && gl->groups[0].reserve.total == 4,
              "group_line: the fuse line's 3 of 4");
        CHECK(unit_near(gl->groups[0].cost.compute_s, 32768e-9, 1e-12),
              "group_line: compute 8192 ns x 4 = 32768 ns");
    }
    return unit_finish();
}
