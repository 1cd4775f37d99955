/* test_mask.c — restricted iteration spaces (`where`, docs/language.md 3.8,
 * docs/cost-model.md 3.1): work, loads and stores follow the tiles that
 * meet the restriction, counted on the schedule's tile grid.  Every
 * expected number is computed in the comments from the formulas, not
 * taken from the program's output. */
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <math.h>
#include <string.h>


static const char *text =
    "arch one {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 1 B/cycle; read_energy 1 pJ/B; write_energy 1 pJ/B; }\n"
    "  memory GLB { capacity 64 KiB; bandwidth 1000 B/cycle; }\n"
    "  compute mac matrix { throughput 1 MAC/cycle; energy 1 pJ/MAC; }\n"
    "  compute simd vector { throughput 1 op/cycle; energy 1 pJ/op; }\n"
    "}\n"
    "arch u4 {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 1 B/cycle; read_energy 1 pJ/B; write_energy 1 pJ/B; }\n"
    "  cluster grid[x = 4] switch { link_bandwidth 1 B/cycle; hop_latency 1 cycles; }\n"
    "  memory GLB { capacity 64 KiB; bandwidth 1000 B/cycle; }\n"
    "  compute mac matrix { throughput 1 MAC/cycle; energy 1 pJ/MAC; }\n"
    "}\n"
    "op causal<M = 64, K = 16> {\n"
    "  in A[M, K] : int8;\n"
    "  in B[M, K] : int8;\n"
    "  out C[M, M] : fp32;\n"
    "  C[m, n] = A[m, k] * B[n, k] where n <= m;\n"
    "}\n"
    "op pv<M = 64, D = 16> {\n"
    "  in P[M, M] : int8;\n"
    "  in V[M, D] : int8;\n"
    "  out O[M, D] : fp32;\n"
    "  O[m, d] = P[m, n] * V[n, d] where n <= m;\n"
    "}\n"
    "op inherit<M = 64, K = 16> {\n"
    "  in A[M, K] : int8;\n"
    "  in B[M, K] : int8;\n"
    "  out R[M] : fp32;\n"
    "  C[m, n] = A[m, k] * B[n, k] where n <= m;\n"
    "  R[i] = sum(j) C[i, j];\n"
    "}\n"
    "mapping tri for causal on one { tile GLB: m 8, n 8; }\n"
    "mapping reduced for pv on one { tile GLB: m 8, n 8; }\n"
    "mapping split for causal on u4 { spatial m -> x; tile GLB: m 8, n 8; }\n"
    "mapping uneven for causal<M = 20> on one { tile GLB: m 8, n 8; }\n"
    "mapping inherited for inherit on one { tile GLB: m 8, n 8, i 8, j 8; }\n";


int main(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    Program *p = unit_load_named(&arena, &sm, &diags, "mask.cmt", text);
    CHECK(p && diags.error_count == 0, "the restricted mappings check");
    if (!p || diags.error_count) {
        arena_free_all(&arena);
        return unit_finish();
    }

    /* tri: 8 tiles of 8 along m and n.  Tile pair (m tile i, n tile j)
     * meets n <= m when its least n is at most its greatest m: 8j <=
     * 8i + 7, i.e. j <= i: 1 + 2 + ... + 8 = 36 of 64 pairs. */
    const Schedule *t = unit_lowered(&arena, p, "tri");
    CHECK(t != NULL, "tri lowers");
    if (t) {
        const SchedStmt *c = &t->stmts[0];
        CHECK(c->mask != NULL, "tri: C is restricted");
        if (c->mask) {
            CHECK_EXACT(c->mask->visited_tiles, 36, "tri: 36 of 64 compute tiles run");
            CHECK_EXACT(c->mask->all_tiles, 64, "tri: of 64");
        }
        /* work: 36 tiles x 8 x 8 x 16 = 36864 MAC (not 64 x 1024 = 65536,
         * nor the 33280 points n <= m hold: a tile meeting it runs whole) */
        CHECK_EXACT(c->work, 36864, "tri: work 36864 MAC");
        CHECK_EXACT(c->compute_s, 36864e-9, "tri: compute 36.864 us at 1 MAC/ns");
        CHECK_EXACT(t->cost.compute_energy_j, 36864e-12, "tri: compute energy 36864 pJ");
        /* A[m,k]: loaded per m tile (resident across n), every m tile has
         * n tile 0: 8 loads of 8 x 16 B = 1024 B */
        const SchedNode *a = node_of(t, SN_LOAD, "A");
        CHECK(a && a->count == 8, "tri: A loaded 8 times");
        /* B[n,k]: per visited pair, in nest order (0,0) (1,0) (1,1) (2,0)
         * ...: (0,0) -> (1,0) keeps n tile 0, so 36 - 1 = 35 loads of
         * 128 B = 4480 B */
        const SchedNode *b = node_of(t, SN_LOAD, "B");
        CHECK(b != NULL, "tri: B is loaded");
        if (b) {
            CHECK_EXACT(b->count, 35, "tri: B loaded 35 times");
            CHECK_EXACT(b->bytes, 128, "tri: B tile 128 B");
        }
        /* C[m,n] fp32: one store per visited pair, 36 x 8 x 8 x 4 B =
         * 9216 B; a tile wholly outside is never stored */
        const SchedNode *st = node_of(t, SN_STORE, "C");
        CHECK(st && st->count == 36, "tri: C stored 36 times");
        /* DRAM: 1024 + 4480 + 9216 = 14720 B, 14.72 us at 1 B/ns */
        CHECK_EXACT(t->groups[0].mem_bytes[0], 14720, "tri: DRAM 14720 B");
    }

    /* reduced: O[m,d] reduced over n, loops m then n.  P[m,n] per visited
     * pair, 36 x 64 B = 2304 B; V[n,d] 35 x 128 B = 4480 B (as B above);
     * O written in full: 8 m tiles x 8 x 16 x 4 B = 4096 B, no partial
     * sums (n runs inside m).  Work 36 x 8 x 8 x 16 = 36864 MAC. */
    const Schedule *r = unit_lowered(&arena, p, "reduced");
    CHECK(r != NULL, "reduced lowers");
    if (r) {
        CHECK_EXACT(r->stmts[0].work, 36864, "reduced: work 36864 MAC");
        const SchedNode *pp = node_of(r, SN_LOAD, "P"), *v = node_of(r, SN_LOAD, "V");
        const SchedNode *o = node_of(r, SN_STORE, "O");
        CHECK(pp && pp->count == 36, "reduced: P loaded 36 times");
        CHECK(v && v->count == 35, "reduced: V loaded 35 times");
        CHECK(o && o->count == 8, "reduced: O stored once per m tile, in full");
        if (o) CHECK_EXACT(o->bytes * o->count, 4096, "reduced: O moves 4096 B");
        /* DRAM: 2304 + 4480 + 4096 = 10880 B */
        CHECK_EXACT(r->groups[0].mem_bytes[0], 10880, "reduced: DRAM 10880 B");
    }

    /* split: m over 4 instances, 16 rows (2 m tiles) each.  Instance k
     * holds m tiles 2k, 2k+1, which meet 2k+1 and 2k+2 n tiles: 3, 7,
     * 11, 15.  The busiest is instance 3 (not instance 0): 15 tiles x
     * 1024 = 15360 MAC.  Energy counts every instance: 36 tiles, 36864 pJ. */
    const Schedule *sp = unit_lowered(&arena, p, "split");
    CHECK(sp != NULL, "split lowers");
    if (sp) {
        CHECK_EXACT(sp->stmts[0].work, 15360, "split: busiest instance 15360 MAC");
        CHECK_EXACT(sp->cost.compute_energy_j, 36864e-12, "split: energy of all 36 tiles");
        /* its B loads: 15 pairs, (6,0) ... (6,6), (7,0) ... (7,7): the n
         * tile changes at every step (6,6) -> (7,0) included: 15 */
        const SchedNode *b = node_of(sp, SN_LOAD, "B");
        CHECK(b && b->count == 15, "split: B loaded 15 times on the busiest");
    }

    /* uneven: M = 20 in tiles 8, 8, 4.  Pairs meeting n <= m: m tile 0
     * with n tile 0; m tile 1 with n tiles 0, 1; m tile 2 [16,20) with
     * all three: 6 of 9.  Points: 8x8 + 2 x 8x8 + 4x8 + 4x8 + 4x4 = 64 +
     * 128 + 80 = 272, x 16 = 4352 MAC (unrestricted 20 x 20 x 16 = 6400). */
    const Schedule *u = unit_lowered(&arena, p, "uneven");
    CHECK(u != NULL, "uneven lowers");
    if (u) {
        CHECK_EXACT(u->stmts[0].work, 4352, "uneven: work 4352 MAC");
        /* C stores: the 6 pairs' tiles, 64 + 2 x 64 + 32 + 32 + 16 = 272
         * elements x 4 B = 1088 B */
        const SchedNode *st = node_of(u, SN_STORE, "C");
        CHECK(st && st->count == 6, "uneven: C stored 6 times");
        if (st) CHECK_EXACT(st->bytes * st->count, 1088, "uneven: C moves 1088 B");
    }

    /* inherited: R[i] = sum(j) C[i,j] reads C naming its restricted
     * dimensions i, j: it runs under j <= i; 36 tiles of 8 x 8, one op per
     * point (the sum): 2304 op */
    const Schedule *h = unit_lowered(&arena, p, "inherited");
    CHECK(h != NULL, "inherited lowers");
    if (h) {
        const IrStmt *rs = &h->op->stmts[1];
        CHECK(rs->mask.cmp == PC_LE && rs->mask.from == 0, "inherited: R runs under C's where");
        CHECK(strcmp(h->op->indices[rs->mask.lhs].name, "j") == 0 &&
                  strcmp(h->op->indices[rs->mask.rhs].name, "i") == 0,
              "inherited: in R's own index names, j <= i");
        CHECK_EXACT(h->stmts[1].work, 2304, "inherited: R does 2304 op");
    }
    arena_free_all(&arena);
    return unit_finish();
}
