/* test_uneven.c — uneven work (docs/cost-model.md sections 1.1, 2, 3, 6):
 * splits dealt out in whole blocks (waves) and partial tiles.  Every
 * expected number is computed in the comments from the formulas, not
 * taken from the program's output. */
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <math.h>
#include <string.h>


static const char *text =
    "arch u4 {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 1 B/cycle; read_energy 1 pJ/B; write_energy 1 pJ/B; }\n"
    "  cluster grid[x = 4] switch { link_bandwidth 1 B/cycle; hop_latency 1 cycles; }\n"
    "  memory GLB { capacity 64 KiB; bandwidth 1000 B/cycle; }\n"
    "  compute mac matrix { throughput 1 MAC/cycle; energy 1 pJ/MAC; }\n"
    "}\n"
    "arch one {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 1 B/cycle; read_energy 1 pJ/B; write_energy 1 pJ/B; }\n"
    "  memory GLB { capacity 64 KiB; bandwidth 1000 B/cycle; }\n"
    "  compute mac matrix { throughput 1 MAC/cycle; energy 1 pJ/MAC; }\n"
    "}\n"
    "arch one_shaped : one {\n"
    "  compute mac matrix { shape 4 x 8 x 4; count 1; }\n"
    "}\n"
    "op g<M = 10, N = 8, K = 4> {\n"
    "  in A[M, K] : int8;\n"
    "  in B[K, N] : int8;\n"
    "  out C[M, N] : int8;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "}\n"
    "mapping waves for g on u4 { spatial m -> x; tile GLB: m 2; }\n"
    "mapping partial for g on one { tile GLB: m 4; }\n"
    "mapping shaped for g on one_shaped { tile GLB: m 4; }\n"
    "arch rows3 {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  memory L1 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  cluster c0[xa = 3] mesh { link_bandwidth 8 B/cycle; hop_latency 2 cycles; }\n"
    "  cluster c1[ya = 3] switch { link_bandwidth 8 B/cycle; hop_latency 2 cycles; }\n"
    "  memory L2 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute simd vector { throughput 8 op/cycle; }\n"
    "}\n"
    "op gather<M = 4, K = 12> {\n"
    "  in A0[M] : fp32;\n  in A1[M] : fp32;\n  in A3[M, K] : fp32;\n  out t4[K] : fp32;\n"
    "  t2[m] = A0[m] + A1[m];\n  t4[k] = A3[n, k] * t2[n];\n"
    "}\n"
    "mapping idle_ranks for gather on rows3 {\n"
    "  spatial m -> xa, k -> (xa, ya);\n  fuse t2, t4 at L2;\n}\n";


static void test_deal(void) {
    /* T = ceil(E / b) blocks, ceil(T / P) of them to the busiest, at most E */
    /* 8192 rows in blocks of 128 over 132 SMs: 64 blocks, one each */
    CHECK_EXACT(sched_deal(8192, 132, 128), 128, "deal 8192/128 over 132");
    /* over 12: ceil(64/12) = 6 blocks = 768 rows; over 11: ceil(64/11) = 6 */
    CHECK_EXACT(sched_deal(8192, 12, 128), 768, "deal 8192/128 over 12");
    CHECK_EXACT(sched_deal(8192, 11, 128), 768, "deal 8192/128 over 11");
    /* 1000 in blocks of 128 over 4: 8 blocks, 2 each = 256 */
    CHECK_EXACT(sched_deal(1000, 4, 128), 256, "deal 1000/128 over 4");
    /* element by element: ceil(1000 / 4) = 250 */
    CHECK_EXACT(sched_deal(1000, 4, 1), 250, "deal 1000 over 4");
    /* a block larger than the range: the whole range to one instance */
    CHECK_EXACT(sched_deal(100, 4, 128), 100, "deal 100/128 over 4");
    /* undivided */
    CHECK_EXACT(sched_deal(10, 1, 3), 10, "deal over 1");
}

int main(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    Program *p = unit_load_named(&arena, &sm, &diags, "uneven.cmt", text);
    CHECK(p && diags.error_count == 0, "the uneven mappings check");
    if (!p || diags.error_count) return unit_finish();
    test_deal();

    /* waves: M = 10 rows over x = 4 in blocks of the GLB tile, 2 rows:
     * T = ceil(10/2) = 5 blocks, ceil(5/4) = 2 to the busiest instance =
     * 4 rows (instance 2 gets 1 block, instance 3 none). */
    const Schedule *w = unit_lowered(&arena, p, "waves");
    CHECK(w != NULL, "waves lowers");
    if (w) {
        const SchedStmt *c = &w->stmts[0];
        int m = 0; /* index m */
        CHECK_EXACT(c->extent[sched_li(w, w->levels, m)], 4, "waves: busiest instance has 4 rows");
        CHECK_EXACT(c->trips[sched_li(w, 1, m)], 2, "waves: 2 GLB tiles of m");
        /* work: 4 rows x 8 x 4 = 128 MAC at 1 MAC/ns = 128 ns */
        CHECK_EXACT(c->work, 128, "waves: busiest work 128 MAC");
        CHECK_EXACT(c->compute_s, 128e-9, "waves: compute 128 ns");
        /* energy: all real work, 10 x 8 x 4 = 320 MAC x 1 pJ (not 4 x 128) */
        CHECK_EXACT(w->cost.compute_energy_j, 320e-12, "waves: compute energy 320 pJ");
        /* A into GLB: 2 visits of 2 x 4 x 1 B = 16 B per instance; DRAM
         * serves its children their real rows, 10 of 10: 2 visits x
         * 8 B x (10 rows / 4 rows of the busiest) = 40 B, all of A once */
        const SchedNode *a = node_of(w, SN_LOAD, "A");
        CHECK(a != NULL, "waves: A is loaded");
        if (a) {
            CHECK_EXACT(a->count, 2, "waves: A loaded twice");
            CHECK_EXACT(a->bytes, 8, "waves: A tile 8 B");
        }
        int dram = 0, glb = 1;
        (void)glb;
        double dram_bytes = w->groups[0].mem_bytes[dram];
        /* DRAM: A 40 B + B 32 B (one copy, broadcast over x: B does not
         * depend on m) + C: 2 visits x 16 B x 10/4 = 80 B = 152 B */
        CHECK_EXACT(dram_bytes, 152, "waves: DRAM moves 152 B, each byte once");
    }

    /* partial tile: 10 rows in tiles of 4 = 4, 4, 2 (3 trips). */
    const Schedule *pt = unit_lowered(&arena, p, "partial");
    CHECK(pt != NULL, "partial lowers");
    if (pt) {
        const SchedStmt *c = &pt->stmts[0];
        CHECK_EXACT(c->trips[sched_li(pt, 1, 0)], 3, "partial: ceil(10/4) = 3 trips");
        CHECK_EXACT(c->count[sched_li(pt, 1, 0)], 3, "partial: 3 tiles");
        /* real work, not 3 x 4 rows: 10 x 8 x 4 = 320 MAC, 320 ns */
        CHECK_EXACT(c->work, 320, "partial: work 320 MAC");
        CHECK_EXACT(c->compute_s, 320e-9, "partial: compute 320 ns");
        /* A: 3 visits, 40 B in all (4 + 4 + 2 rows x 4 B), 13.33 B each */
        const SchedNode *a = node_of(pt, SN_LOAD, "A");
        CHECK(a != NULL, "partial: A is loaded");
        if (a) CHECK_EXACT(a->bytes * a->count, 40, "partial: A moves 40 B");
        /* DRAM: A 40 + B 32 + C 80 = 152 B at 1 B/ns = 152 ns */
        CHECK_EXACT(pt->groups[0].mem_bytes[0], 152, "partial: DRAM 152 B");
        /* capacity with the full tile: A 4 x 4 + B 4 x 8 + C 4 x 8 =
         * 16 + 32 + 32 = 80 B at GLB */
        double need = 0, spare = 0;
        for (int k = 0; k < pt->groups[0].footprint_count; k++) {
            const Footprint *f = &pt->groups[0].footprints[k];
            if (f->memory != 1) continue;
            need += f->bytes * f->live_tiles / (f->live_tiles + f->spare_tiles);
            spare += f->bytes - f->bytes * f->live_tiles / (f->live_tiles + f->spare_tiles);
        }
        CHECK_EXACT(need, 80, "partial: GLB footprint 80 B (full tile)");
        /* the m loop (3 trips) refills A and C, not B (n and k whole): the
         * next tiles of A and C beside them, 16 + 32 = 48 B (section 2) */
        CHECK_EXACT(spare, 48, "partial: GLB holds the next A and C tiles, 48 B");
    }

    /* the same on a unit of native shape 4 x 8 x 4: the 2-row partial
     * tile runs a whole operation (padded): tiles of 4, 4 and 2 rows each
     * take ceil(rows/4) x ceil(8/8) x ceil(4/4) = 1 op of 128 MAC, 3 ops
     * at 1 MAC/ns = 384 ns (320 ns of work) */
    const Schedule *sh = unit_lowered(&arena, p, "shaped");
    CHECK(sh != NULL, "shaped lowers");
    if (sh) CHECK_EXACT(sh->stmts[0].compute_s, 384e-9, "shaped: 3 ops of 128 MAC = 384 ns");
    /* A relayout under uneven shares: t2[m] (4 rows, fp32) is made with m
     * over xa = 3 in blocks of 1: ceil(4/3) = 2 rows to instances 0 and 1
     * (rows 0-1, 2-3), none to 2.  t4 reads all of t2 on every instance
     * with k (12) over (xa, ya) jointly: ceil(12/9) = 2 each to joint
     * positions 0-5, none to 6-8, i.e. every xa = 2 instance idles.  The
     * busiest receiver holds 2 of the 4 rows and receives the other 2:
     * 8 B, as the interpreter measures.  (Before: 12 B, from even shares
     * of 4/3 rows; dealt in whole rows but with the idle xa = 2 rank
     * counted as needing all 4, 16 B.) */
    const Schedule *ir = unit_lowered(&arena, p, "idle_ranks");
    CHECK(ir != NULL, "idle ranks lowers");
    if (ir) {
        const SchedNode *x = node_of(ir, SN_COLLECTIVE, "t2");
        CHECK(x && x->coll == CK_ALLGATHER, "idle ranks: t2 is gathered");
        if (x) CHECK_EXACT(x->received, 8, "idle ranks: the busiest receiver gets 8 B");
        check_verified(ir, "idle ranks: the interpreter agrees");
    }
    arena_free_all(&arena);
    return unit_finish();
}
