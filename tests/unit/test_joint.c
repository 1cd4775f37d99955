/* test_joint.c — joint deals, `spatial (m, n) -> x` (docs/cost-model.md
 * section 1.2): the grid of blocks of two indices dealt over one dim in
 * contiguous runs, as a GPU deals its output tiles to its SMs.  Every
 * expected number is worked out in the comments from the formulas. */
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <math.h>

static const char *text =
    "arch u4 {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 1 B/cycle; read_energy 1 pJ/B; write_energy 1 pJ/B; }\n"
    "  cluster grid[x = 4] switch { link_bandwidth 1 B/cycle; hop_latency 1 cycles; }\n"
    "  memory GLB { capacity 64 KiB; bandwidth 1000 B/cycle; }\n"
    "  compute mac matrix { throughput 1 MAC/cycle; energy 1 pJ/MAC; }\n"
    "}\n"
    "op g<M = 6, N = 10, K = 4> {\n"
    "  in A[M, K] : int8;\n"
    "  in B[K, N] : int8;\n"
    "  out C[M, N] : int8;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "}\n"
    "mapping joint for g on u4 { spatial (m, n) -> x; tile GLB: m 2, n 2; }\n"
    "mapping rows for g on u4 { spatial m -> x; tile GLB: m 2, n 2; }\n"
    "mapping short_blocks for g<M = 5, N = 7, K = 3> on u4 {\n"
    "  spatial (m, n) -> x; tile GLB: m 2, n 3;\n}\n"
    "mapping fraction for g<M = 10, N = 16, K = 1> on u4 { spatial (m, n) -> x; }\n"
    "arch u4l2 {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 1 B/cycle; }\n"
    "  memory L2 { capacity 1 MiB; bandwidth 1000 B/cycle; }\n"
    "  cluster grid[x = 4] switch { link_bandwidth 1 B/cycle; hop_latency 1 cycles; }\n"
    "  memory GLB { capacity 64 KiB; bandwidth 1000 B/cycle; }\n"
    "  compute mac matrix { throughput 1 MAC/cycle; }\n"
    "}\n"
    "mapping partial_above for g<M = 256, N = 128, K = 64> on u4l2 {\n"
    "  spatial (m, n) -> x; tile L2: m 192; tile GLB: m 64, n 64;\n}\n";

/* sched_joint_deal on lengths (l0, l1) in blocks (b0, b1) over `parts`:
 * the busiest instance's shares. */
static void check_deal(double l0, double l1, double b0, double b1, double parts, double want0,
                       double want1, const char *what) {
    double len[2] = {l0, l1}, block[2] = {b0, b1}, share[2];
    sched_joint_deal(2, len, block, parts, share);
    CHECK_EXACT(share[0], want0, what);
    CHECK_EXACT(share[1], want1, what);
}

static void test_deal(void) {
    /* 3 x 5 = 15 cells over 4: runs of ceil(15/4) = 4; the second index
     * takes min(5, 4) = 4 blocks (8 elements), the first 4/4 = 1 (2) */
    check_deal(6, 10, 2, 2, 4, 2, 8, "deal: 2 rows x 8 columns");
    /* 64 x 16 cells (8192 x 4096 in 128 x 256) over 108 SMs: runs of
     * ceil(1024/108) = 10, all along n (16 blocks): 128 x 2560 */
    check_deal(8192, 4096, 128, 256, 108, 128, 2560, "deal: A100 128 x 2560");
    /* 4 x 4 cells over 2: runs of 8 = two whole rows of 4: the first
     * index takes 8/4 = 2 blocks */
    check_deal(4, 4, 1, 1, 2, 2, 4, "deal: two whole rows");
    /* 2 x 16 cells over 4, run 8: half a row of blocks of 4: 1 row x 8 */
    check_deal(8, 16, 4, 1, 4, 4, 8, "deal: one block of rows x 8 columns");
    /* 3 x 4 cells over 2, run 6: 4 columns, 6/4 = 1.5 blocks of 2 rows
     * (3 rows, the run past a row's end) */
    check_deal(6, 4, 2, 1, 2, 3, 4, "deal: a block and a half of rows");
}

int main(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    Program *p = unit_load_named(&arena, &sm, &diags, "joint.cmt", text);
    CHECK(p && diags.error_count == 0, "the joint mappings check");
    if (!p || diags.error_count) return unit_finish();
    test_deal();

    /* M = 6, N = 10 in blocks of 2 x 2: 15 cells, runs of 4 over x = 4.
     * Instance 0: cells 0-3 (row 0, columns 0-3); 1: cells 4-7 (row 0
     * column 4, row 1 columns 0-2); 2: cells 8-11 (row 1 columns 3-4, row
     * 2 columns 0-1); 3: cells 12-14 (row 2, columns 2-4). */
    const Schedule *j = unit_lowered(&arena, p, "joint");
    CHECK(j != NULL, "joint lowers");
    if (j) {
        const SchedStmt *c = &j->stmts[0];
        int m = 0, n = 1;
        CHECK_EXACT(c->extent[sched_li(j, j->levels, m)], 2, "joint: busiest has 2 rows");
        CHECK_EXACT(c->extent[sched_li(j, j->levels, n)], 8, "joint: and 8 columns");
        /* 2 x 8 x 4 = 64 MAC at 1 MAC/ns; energy counts all 6 x 10 x 4 */
        CHECK_EXACT(c->work, 64, "joint: busiest work 64 MAC");
        CHECK_EXACT(c->compute_s, 64e-9, "joint: compute 64 ns");
        CHECK_EXACT(j->cost.compute_energy_j, 240e-12, "joint: compute energy 240 pJ");
        /* all four instances get a run: ceil(15 / 4) = 4 busy */
        CHECK_EXACT(sched_dim_busy(j, c, 0, 0, 1), 4, "joint: 4 busy instances");
        /* A (rows only): the runs touch 1 + 2 + 2 + 1 = 6 row blocks, the
         * busiest 1: each row block of A is 2 x 4 = 8 B, loaded once per
         * instance (resident across its columns): 6 x 8 = 48 B from DRAM.
         * B (columns only): 4 + 4 (column 4, columns 0-2) + 4 (3-4, 0-1)
         * + 3 = 15 column blocks of 4 x 2 = 8 B: 120 B.  C: every cell
         * once, 6 x 10 = 60 B.  No broadcast: each instance loads its own
         * tiles. */
        CHECK_EXACT(sched_joint_spread(j, c, 0, 0, 1, 0), 6, "joint: A spread 6");
        CHECK_EXACT(sched_joint_spread(j, c, 0, 0, 1, 1), 15.0 / 4, "joint: B spread 15/4");
        CHECK_EXACT(j->groups[0].mem_bytes[0], 48 + 120 + 60, "joint: DRAM moves 228 B");
        CHECK(node_of(j, SN_COLLECTIVE, "A") == NULL && node_of(j, SN_COLLECTIVE, "B") == NULL,
              "joint: no broadcast");
    }
    /* the same tiles with rows alone over x: 3 blocks of 2 rows over 4,
     * the busiest 2 rows x all 10 columns = 80 MAC, 80 ns: the joint deal
     * is 64 */
    const Schedule *r = unit_lowered(&arena, p, "rows");
    CHECK(r != NULL, "rows lowers");
    if (r) CHECK_EXACT(r->stmts[0].compute_s, 80e-9, "rows: compute 80 ns");
    /* blocks cut short by the ranges: M = 5, N = 7 in blocks of 2 x 3 are
     * 3 x 3 cells (the last row block 1 row, the last column block 1
     * column) over 4, runs of 3: one row of blocks each, the fourth
     * instance idle.  The busiest holds 2 rows x 7 columns x 3 = 42 MAC.
     * A: the runs' rows, 2 + 2 + 1 = 5 of them x 3 B = 15 B (all of A
     * once); B: every run reads all 7 columns, 3 x 7 x 3 B = 63 B (the
     * elements, not the 3 blocks x 3 a block count would make 81); C:
     * 35 B.  DRAM 15 + 63 + 35 = 113 B. */
    const Schedule *sb = unit_lowered(&arena, p, "short_blocks");
    CHECK(sb != NULL, "short blocks lowers");
    if (sb) {
        CHECK_EXACT(sb->stmts[0].work, 42, "short blocks: busiest 42 MAC");
        CHECK_EXACT(sb->groups[0].mem_bytes[0], 15 + 63 + 35, "short blocks: DRAM 113 B");
    }
    /* one-element blocks: 10 x 16 cells over 4, runs of 40 = 2.5 rows of
     * 16, so the busiest computes 40 MAC (not 3 rows, 48); its rows touch
     * 3 + 3 + 3 + 3 = 12 of A's (12 B), every run all of B (4 x 16 B) */
    const Schedule *fr = unit_lowered(&arena, p, "fraction");
    CHECK(fr != NULL, "fraction lowers");
    if (fr) {
        CHECK_EXACT(fr->stmts[0].extent[sched_li(fr, fr->levels, 0)], 2.5, "fraction: 2.5 rows");
        CHECK_EXACT(fr->stmts[0].work, 40, "fraction: busiest 40 MAC");
        CHECK_EXACT(fr->groups[0].mem_bytes[0], 12 + 64 + 160, "fraction: DRAM 236 B");
    }
    /* a partial tile above the deal: M = 256 in L2 tiles of 192 rows, so
     * tiles of 3 x 2 and 1 x 2 cells of 64 x 64 over 4.  The first: runs
     * of 2, the busiest 2 cells; the last: runs of 1, 1 cell.  3 cells of
     * 64 x 64 x 64 = 786432 MAC (not 4, as if the last tile's busiest
     * still had the first's two columns of blocks) */
    const Schedule *pa = unit_lowered(&arena, p, "partial_above");
    CHECK(pa != NULL, "partial above lowers");
    if (pa) CHECK_EXACT(pa->stmts[0].work, 786432, "partial above: busiest 3 cells");
    arena_free_all(&arena);
    return unit_finish();
}
