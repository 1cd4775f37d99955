/* test_cost.c — the cost model against the hand arithmetic of
 * docs/cost-model.md section 9 (the worked example) and its variants.
 * Every expected number is computed in the comments from the formulas,
 * not taken from the program's output. */
#include "passes/passes.h"
#include "tests/unit/unit.h"

#include <math.h>
#include <string.h>

static const char *arch_text =
    "arch tiny {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; read_energy 10 pJ/B; write_energy 10 pJ/B; }\n"
    "  cluster grid[x = 2] ring { link_bandwidth 8 B/cycle; hop_latency 4 cycles; link_energy 1 "
    "pJ/B; }\n"
    "  memory GLB { capacity 64 KiB; bandwidth 64 B/cycle; read_energy 1 pJ/B; write_energy 1 "
    "pJ/B; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; energy 0.5 pJ/MAC; }\n"
    "  compute simd vector { throughput 8 op/cycle; energy 0.25 pJ/op; }\n"
    "}\n"
    "arch tiny_systolic : tiny {\n"
    "  compute mac matrix { array 4 x 4; count 2; energy 0.5 pJ/MAC; }\n"
    "}\n"
    "arch tiny_shaped : tiny {\n"
    "  compute mac matrix { shape 16 x 16 x 16; count 2; efficiency 0.5; }\n"
    "}\n"
    "arch tiny_shape_filled : tiny {\n"
    "  compute mac matrix { shape 8 x 16 x 16; count 2; efficiency 0.5; }\n"
    "}\n"
    "arch tiny_overheads : tiny {\n"
    "  launch_overhead 100 ns;\n"
    "  memory DRAM { transfer_latency 8 cycles; }\n"
    "  cluster grid[x = 2] ring { call_latency 20 ns; }\n"
    "  memory GLB { transfer_latency 2 cycles; }\n"
    "}\n"
    "arch tiny_sustained : tiny {\n"
    "  memory DRAM { efficiency 0.5; }\n"
    "}\n"
    "arch tiny_rf {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  cluster grid[x = 2] ring { link_bandwidth 8 B/cycle; hop_latency 4 cycles; }\n"
    "  memory GLB { capacity 64 KiB; bandwidth 1048576 B/cycle; }\n"
    "  memory RF { capacity 64 KiB; bandwidth 1048576 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute simd vector { throughput 8 op/cycle; }\n"
    "}\n"
    "arch tiny_wait {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  memory GLB { capacity 64 KiB; bandwidth 1048576 B/cycle; }\n"
    "  compute mac matrix { throughput 128 MAC/cycle; }\n"
    "  compute simd vector { throughput 1 op/cycle; }\n"
    "}\n"
    "op gemm_scale<M = 16, N = 32, K = 64> {\n"
    "  in A[M, K] : int8;\n"
    "  in B[K, N] : int8;\n"
    "  out E[M, N] : fp16;\n"
    "  var C : fp16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  E[m, n] = C[m, n] * 2;\n"
    "}\n"
    "op gemm_rowsum<M = 16, N = 32, K = 64> {\n"
    "  in A[M, K] : int8;\n"
    "  in B[K, N] : int8;\n"
    "  out s[M] : fp16;\n"
    "  var C : fp16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  s[m] = sum(n) C[m, n];\n"
    "}\n";

/* Seconds and joules of order 1e-7 and 1e-8, hand-computed: equal to a
 * relative 1e-9 (CHECK_NEAR is relative). */

static Arena arena;
static SourceManager sources;
static DiagSink diags;

static Program *program;

/* Checks arch_text plus `mappings` (the first call) and returns the named
 * mapping, or NULL. */
static const IrMapping *mapping_of(const char *mappings, const char *name) {
    if (!program) {
        char *text = arena_printf(&arena, "%s%s", arch_text, mappings);
        SourceFile *f = sources_add(&sources, "test.cmt", text, strlen(text));
        CheckOptions opts;
        memset(&opts, 0, sizeof opts);
        program = check_program(&arena, &sources, &diags, f, &opts);
        if (!program || diags.error_count) {
            diags_render_text(stdout, &sources, &diags, (DiagRenderOptions){false});
            program = NULL;
            return NULL;
        }
    }
    Program *p = program;
    for (int i = 0; i < p->mapping_count; i++)
        if (strcmp(p->mappings[i]->name, name) == 0) return p->mappings[i];
    return NULL;
}

static const SchedNode *find_node(const Schedule *s, SchedKind kind, CollKind coll,
                                  const char *tensor) {
    for (int i = 0; i < s->node_count; i++) {
        const SchedNode *n = &s->nodes[i];
        if (n->kind == kind && (kind != SN_COLLECTIVE || n->coll == coll) && n->tensor >= 0 &&
            strcmp(s->op->tensors[n->tensor].name, tensor) == 0)
            return n;
    }
    return NULL;
}

int main(void) {
    sources_init(&sources, &arena);
    diags_init(&diags, &arena);
    const IrMapping *m =
        mapping_of("mapping worked for gemm_rowsum on tiny {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB;\n}\n"
                   "mapping worked_none for gemm_rowsum on tiny {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB; overlap none;\n}\n"
                   "mapping worked_local for gemm_rowsum on tiny {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB; overlap local;\n}\n"
                   "mapping worked_repeat for gemm_rowsum on tiny {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB; repeat 3;\n}\n"
                   "mapping worked_systolic for gemm_rowsum on tiny_systolic {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB;\n}\n"
                   "mapping shaped for gemm_rowsum on tiny_shaped {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB;\n}\n"
                   "mapping shape_filled for gemm_rowsum on tiny_shape_filled {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB;\n}\n"
                   "mapping sustained for gemm_rowsum on tiny_sustained {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB;\n}\n"
                   "mapping overheads for gemm_rowsum on tiny_overheads {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB;\n}\n"
                   "mapping overheads_none for gemm_rowsum on tiny_overheads {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB; overlap none;\n}\n"
                   "mapping overheads_unfused for gemm_rowsum on tiny_overheads {\n"
                   "  spatial n -> x; tile GLB: m 8;\n}\n"
                   "mapping group_none for gemm_rowsum on tiny {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB overlap none;\n}\n"
                   "mapping group_full for gemm_rowsum on tiny {\n"
                   "  spatial n -> x; tile GLB: m 8; fuse C, s at GLB overlap full; overlap none;\n}\n"
                   "mapping rf_full for gemm_rowsum on tiny_rf {\n"
                   "  spatial n -> x; tile RF: m 8; fuse C, s at GLB;\n}\n"
                   "mapping rf_tiles for gemm_rowsum on tiny_rf {\n"
                   "  spatial n -> x; tile RF: m 8; fuse C, s at GLB overlap tiles;\n}\n"
                   "mapping wait_peak for gemm_scale on tiny_wait {\n"
                   "  tile GLB: k 32; fuse C, E at GLB;\n}\n",
                   "worked");
    CHECK(m != NULL, "worked example checks");
    if (!m) return unit_finish();
    Schedule *s = lower_mapping(&arena, m, true, NULL);

    /* compute: C 16*16*64 = 16384 MAC / 64 MAC/ns = 256 ns;
       s 16*16 points x 1 op = 256 op / 8 op/ns = 32 ns */
    CHECK_EXACT(s->stmts[0].compute_s, 256e-9, "gemm compute 256 ns");
    CHECK_EXACT(s->stmts[1].compute_s, 32e-9, "row sum compute 32 ns");
    CHECK_EXACT(s->cost.compute_s, 288e-9, "group compute 288 ns");

    /* DRAM: A 1024 + B 2048 read, s 32 written = 3104 B / 16 B/ns = 194 ns;
       GLB: 2048 loaded + 32 stored out + 2560 unit reads + 544 unit writes
       = 5184 B / 64 B/ns = 81 ns; overlap full takes the max: 194 ns */
    CHECK_EXACT(s->groups[0].level_s[0], 194e-9, "DRAM time 194 ns");
    CHECK_EXACT(s->groups[0].level_s[1], 81e-9, "GLB time 81 ns");
    CHECK_EXACT(s->cost.memory_s, 194e-9, "memory time is the slowest level");

    /* network: broadcast A over a ring of 2 (diameter 1): 4 + 512/8 = 68 ns,
       2 m tiles: 136 ns; reduce_scatter s: 4 + 1/2*16/8/2 = 4.5 ns, x2 = 9 */
    const SchedNode *bc = find_node(s, SN_COLLECTIVE, CK_BROADCAST, "A");
    CHECK(bc != NULL, "A is broadcast over x");
    if (bc) CHECK_EXACT(bc->latency_s, 136e-9, "broadcast A 2 x 68 ns");
    const SchedNode *rs = find_node(s, SN_COLLECTIVE, CK_REDUCE_SCATTER, "s");
    CHECK(rs != NULL, "s written out after a reduce_scatter");
    if (rs) {
        CHECK_EXACT(rs->latency_s, 9e-9, "reduce_scatter s 2 x 4.5 ns");
        CHECK(rs->reduce_op == RO_SUM, "reduce_scatter sums");
        CHECK_NEAR(rs->bytes, 16, 1e-12, "reduce_scatter 16 B per m tile");
    }
    CHECK(find_node(s, SN_LOAD, CK_ALLREDUCE, "C") == NULL, "C stays at GLB inside the group");
    CHECK_EXACT(s->cost.network_s, 145e-9, "network 145 ns");

    /* overlap full (section 7): the stages are the matrix unit 256 ns, the
       vector unit 32 ns, memory 194 ns and network 145 ns, each over T = 2
       tiles (s waits for no loop); the matrix unit sets the pace:
       256 + (32 + 194 + 145) / 2 = 256 + 185.5 = 441.5 ns (summing the
       two units, 288 + (194 + 145) / 2, gave 457.5 ns) */
    CHECK_EXACT(s->groups[0].matrix_s, 256e-9, "matrix stage 256 ns");
    CHECK_EXACT(s->groups[0].vector_s, 32e-9, "vector stage 32 ns");
    CHECK_EXACT(s->groups[0].cost.fill_drain_s, 185.5e-9, "fill and drain 185.5 ns");
    CHECK_EXACT(s->cost.latency_s, 441.5e-9, "latency 441.5 ns");
    CHECK(s->groups[0].cost.bound == BOUND_COMPUTE, "compute-bound");

    /* energy: ops 16384*0.5*2 + 256*0.25*2 = 16512 pJ; DRAM 3072*10 + 32*10
       = 31040 pJ; GLB 2 x (2592 + 2592) x 1 = 10368 pJ; links 1024 + 32 */
    CHECK_EXACT(s->cost.compute_energy_j, 16512e-12, "operation energy 16512 pJ");
    CHECK_EXACT(s->cost.memory_energy_j, 41408e-12, "memory energy 41408 pJ");
    CHECK_EXACT(s->cost.network_energy_j, 1056e-12, "network energy 1056 pJ");
    CHECK_EXACT(s->cost.energy_j, 58976e-12, "energy 58976 pJ");

    /* the evaluation API gives the same numbers without text */
    EvalResult r;
    CHECK(evaluate_mapping(m, &arena, &r) == EVAL_OK, "evaluate_mapping succeeds");
    CHECK_EXACT(r.cost.latency_s, 441.5e-9, "evaluate latency");
    CHECK_EXACT(r.cost.energy_j, 58976e-12, "evaluate energy");
    CHECK(r.feasible, "worked example fits");
    CHECK(r.group_count == 1, "one group");
    CHECK_EXACT(r.groups[0].cost.network_s, 145e-9, "evaluate group network");

    /* overlap none: 288 + (194 + 81) + 145 = 708 ns */
    const IrMapping *none = mapping_of("", "worked_none");
    CHECK(none != NULL, "overlap none mapping found");
    if (none) {
        CHECK(evaluate_mapping(none, NULL, &r) == EVAL_OK, "evaluate overlap none");
        CHECK_EXACT(r.cost.latency_s, 708e-9, "overlap none sums: 708 ns");
    }
    /* overlap local (section 7.4): the units and memory pipeline, 256 +
       (32 + 194) / 2 = 369 ns; then the network: A's broadcasts as
       before (2 x 68 ns), s's reduce-scatter once, after the group, on
       its 32 B: 4 + (1/2) 32 (1/8) / 2 = 5 ns; 369 + 141 = 510 ns, and
       the same energy (the reduce-scatter moves the same bytes) */
    const IrMapping *local = mapping_of("", "worked_local");
    CHECK(local != NULL, "overlap local mapping found");
    if (local) {
        CHECK(evaluate_mapping(local, &arena, &r) == EVAL_OK, "evaluate overlap local");
        CHECK_EXACT(r.groups[0].cost.network_s, 141e-9, "overlap local: network 136 + 5 ns");
        CHECK_EXACT(r.cost.latency_s, 510e-9, "overlap local: 369 + 141 = 510 ns");
        CHECK_EXACT(r.cost.energy_j, 58976e-12, "overlap local: the same energy");
    }
    /* repeat 3 triples latency and energy: 1372.5 ns, 176928 pJ */
    const IrMapping *rep = mapping_of("", "worked_repeat");
    CHECK(rep != NULL, "repeat mapping found");
    if (rep) {
        CHECK(evaluate_mapping(rep, NULL, &r) == EVAL_OK, "evaluate repeat");
        CHECK_EXACT(r.cost.latency_s, 3 * 441.5e-9, "repeat 3 latency");
        CHECK_EXACT(r.cost.energy_j, 3 * 58976e-12, "repeat 3 energy");
    }
    /* systolic 4x4, 2 arrays: compute tile m 8, n 16, k 64: folds =
       ceil(64/4)*ceil(16/4) = 64, 32 per array, (2*4 + 4 + 8 - 2) = 18
       cycles each: 576 per tile, 2 m tiles: 1152 ns */
    const IrMapping *sys = mapping_of("", "worked_systolic");
    CHECK(sys != NULL, "systolic mapping found");
    if (sys) {
        Schedule *ss = lower_mapping(&arena, sys, false, NULL);
        CHECK_EXACT(ss->stmts[0].compute_s, 1152e-9, "systolic fold formula 1152 ns");
    }
    /* native shape (docs/cost-model.md 6.1): throughput 64 MAC/ns x 0.5 x
       2 units = 64 MAC/ns, 32 MAC/ns per unit; compute tile m 8, n 16, k 64,
       2 tiles per instance; without a shape 16384 MAC / 64 MAC/ns = 256 ns.
       shape 16 x 16 x 16: ceil(8/16) x ceil(16/16) x ceil(64/16) = 4
       operations, ceil(4/2) = 2 rounds of 4096 MAC / 32 MAC/ns = 128 ns:
       256 ns a tile, 512 ns for 2; shape used 16384 / (2 x 2 x 2 x 4096)
       = 0.5.
       shape 8 x 16 x 16: 1 x 1 x 4 = 4 operations, 2 rounds of 2048 MAC /
       32 MAC/ns = 64 ns: 128 ns a tile, 256 ns for 2, as without a shape. */
    const IrMapping *sh = mapping_of("", "shaped");
    CHECK(sh != NULL, "shaped mapping found");
    if (sh) {
        Schedule *hs = lower_mapping(&arena, sh, true, NULL);
        CHECK_EXACT(hs->stmts[0].compute_s, 512e-9, "shape 16x16x16: 2 tiles x 2 rounds x 128 ns");
        const SchedNode *cn = NULL;
        for (int i = 0; i < hs->node_count; i++)
            if (hs->nodes[i].kind == SN_COMPUTE && hs->nodes[i].stmt == 0) cn = &hs->nodes[i];
        CHECK(cn && cn->reason && strstr(cn->reason, "shape used 0.5"),
              "the reason gives the fraction of the shape used");
        CHECK(cn && cn->reason &&
                  strstr(cn->reason, "ceil(8/16) x ceil(16/16) x ceil(64/16) over 2 units"),
              "the reason gives the padding arithmetic");
    }
    const IrMapping *sf = mapping_of("", "shape_filled");
    CHECK(sf != NULL, "shape_filled mapping found");
    if (sf) {
        Schedule *fs = lower_mapping(&arena, sf, false, NULL);
        CHECK_EXACT(fs->stmts[0].compute_s, 256e-9, "a filled shape costs work / throughput");
    }
    /* memory efficiency (docs/cost-model.md 3): DRAM sustains 0.5 x 16
       B/cycle = 8 GB/s, so the worked example's 3104 B of DRAM traffic
       (194 ns at 16 GB/s) take 388 ns */
    const IrMapping *su = mapping_of("", "sustained");
    CHECK(su != NULL, "sustained mapping found");
    if (su) {
        Schedule *ss = lower_mapping(&arena, su, false, NULL);
        CHECK_EXACT(su->arch->memories[su->arch->levels[0].first_memory].bandwidth, 8e9, "DRAM sustains 8 GB/s");
        CHECK_EXACT(ss->groups[0].level_s[0], 388e-9, "DRAM time 3104 B / 8 GB/s = 388 ns");
    }
    /* overheads (docs/cost-model.md 9.1): DRAM 6 transfers x 8 ns + 194 =
       242 ns, GLB 5 x 2 ns + 81 = 91 ns; broadcast A 2 x (20 + 68) = 176 ns,
       reduce_scatter s 2 x (20 + 4.5) = 49 ns, N = 225 ns; the matrix unit
       256 ns sets the pace, fill (32 + 242 + 225) / 2 = 249.5, + launch
       100 = 605.5 ns */
    const IrMapping *ov = mapping_of("", "overheads");
    CHECK(ov != NULL, "overheads mapping found");
    if (ov) {
        Schedule *os = lower_mapping(&arena, ov, false, NULL);
        CHECK_EXACT(os->groups[0].mem_transfers[0], 6, "DRAM: 6 tile transfers");
        CHECK_EXACT(os->groups[0].mem_transfers[1], 5, "GLB: 5 tile transfers");
        CHECK_EXACT(os->groups[0].level_s[0], 242e-9, "DRAM time 194 + 6 x 8 = 242 ns");
        CHECK_EXACT(os->groups[0].level_s[1], 91e-9, "GLB time 81 + 5 x 2 = 91 ns");
        const SchedNode *obc = find_node(os, SN_COLLECTIVE, CK_BROADCAST, "A");
        if (obc) CHECK_EXACT(obc->latency_s, 176e-9, "broadcast A 2 x (20 + 68) ns");
        const SchedNode *ors = find_node(os, SN_COLLECTIVE, CK_REDUCE_SCATTER, "s");
        if (ors) CHECK_EXACT(ors->latency_s, 49e-9, "reduce_scatter s 2 x (20 + 4.5) ns");
        CHECK_EXACT(os->cost.network_s, 225e-9, "network 225 ns");
        CHECK_EXACT(os->groups[0].cost.fill_drain_s, 249.5e-9, "fill and drain 249.5 ns");
        CHECK_EXACT(os->groups[0].launch_s, 100e-9, "one launch");
        CHECK_EXACT(os->cost.latency_s, 605.5e-9, "latency 605.5 ns");
    }
    /* overlap none: 288 + (242 + 91) + 225 + 100 = 946 ns */
    const IrMapping *ovn = mapping_of("", "overheads_none");
    if (ovn) {
        CHECK(evaluate_mapping(ovn, NULL, &r) == EVAL_OK, "evaluate overheads, overlap none");
        CHECK_EXACT(r.cost.latency_s, 946e-9, "overlap none with overheads: 946 ns");
    }
    /* unfused: two groups, each launched */
    const IrMapping *ovu = mapping_of("", "overheads_unfused");
    if (ovu) {
        Schedule *us = lower_mapping(&arena, ovu, false, NULL);
        CHECK(us->group_count == 2, "unfused: two groups");
        double launches = 0, rest = 0;
        for (int g = 0; g < us->group_count; g++) {
            launches += us->groups[g].launch_s;
            rest += us->groups[g].cost.latency_s - us->groups[g].launch_s;
        }
        CHECK_EXACT(launches, 200e-9, "unfused: 2 x 100 ns of launches");
        CHECK_EXACT(us->cost.latency_s, rest + 200e-9, "unfused latency includes both launches");
    }
    /* a group's own overlap: `fuse C, s at GLB overlap none` sums the terms
       as `overlap none` does for the mapping, 708 ns; `overlap full` on the
       fuse line wins over the mapping's `overlap none`: 441.5 ns */
    const IrMapping *gn = mapping_of("", "group_none");
    if (gn) {
        CHECK(evaluate_mapping(gn, NULL, &r) == EVAL_OK, "evaluate group overlap none");
        CHECK_EXACT(r.cost.latency_s, 708e-9, "the group's overlap none: 708 ns");
    }
    const IrMapping *gf = mapping_of("", "group_full");
    if (gf) {
        CHECK(evaluate_mapping(gf, NULL, &r) == EVAL_OK, "evaluate group overlap full");
        CHECK_EXACT(r.cost.latency_s, 441.5e-9, "the group's overlap full over the mapping's none");
    }
    /* overlap tiles (section 7): the worked example with an RF inside GLB
       (1 MiB/cycle: GLB and RF never set the pace) and `tile RF: m 8`: GLB holds
       the whole share, so T = 1, and the RF loop walks 2 m tiles.  DRAM
       moves the same 3104 B as in section 9: M = 194 ns.  C 256 ns on the
       matrix unit, s 32 ns on the vector unit.
       overlap full: broadcast A (1024 B, once) 4 + 1024/8 = 132 ns;
       reduce_scatter s (32 B, once) 4 + (1/2) 32 (1/8) / 2 = 5 ns;
       N = 137 ns; T = 1: 256 + 32 + 194 + 137 = 619 ns.
       overlap tiles: A and s each in 2 chunks (the 2 m tiles C and s
       walk / 1 execution), each chunk paying the fixed part again: 4 ns
       (one hop on a ring of 2) and 4 ns ((p - 1) alpha): broadcast 136 ns,
       reduce_scatter 9 ns, N = 145 ns over 2 chunks; the units pipeline
       with them over 2 tiles, memory over T = 1: 256 + 194 + 32/2 +
       145/2 = 256 + 282.5 = 538.5 ns */
    const IrMapping *rff = mapping_of("", "rf_full");
    CHECK(rff != NULL, "rf_full mapping found");
    if (rff) {
        Schedule *fs = lower_mapping(&arena, rff, false, NULL);
        CHECK_EXACT(fs->cost.memory_s, 194e-9, "rf: DRAM 194 ns");
        CHECK_EXACT(fs->cost.network_s, 137e-9, "rf: network 132 + 5 ns");
        CHECK_EXACT(fs->cost.latency_s, 619e-9, "rf, overlap full, one outer tile: 619 ns");
    }
    const IrMapping *rft = mapping_of("", "rf_tiles");
    CHECK(rft != NULL, "rf_tiles mapping found");
    if (rft) {
        Schedule *ts = lower_mapping(&arena, rft, false, NULL);
        const SchedNode *tb = find_node(ts, SN_COLLECTIVE, CK_BROADCAST, "A");
        CHECK(tb != NULL, "rf: A is broadcast");
        if (tb) {
            CHECK_EXACT(tb->chunks, 2, "broadcast A in 2 chunks");
            CHECK_EXACT(tb->chunk_extra_s, 4e-9, "broadcast: one more chunk's hop, 4 ns");
            CHECK_EXACT(tb->latency_s, 136e-9, "broadcast A 132 + 4 ns");
        }
        const SchedNode *tr = find_node(ts, SN_COLLECTIVE, CK_REDUCE_SCATTER, "s");
        CHECK(tr != NULL, "rf: s is reduce-scattered");
        if (tr) {
            CHECK_EXACT(tr->chunks, 2, "reduce_scatter s in 2 chunks");
            CHECK_EXACT(tr->latency_s, 9e-9, "reduce_scatter s 5 + 4 ns");
        }
        CHECK_EXACT(ts->groups[0].network_depth, 2, "network depth: 2 chunks");
        CHECK_EXACT(ts->groups[0].matrix_depth, 2, "the matrix unit pipelines over the chunks");
        CHECK_EXACT(ts->cost.network_s, 145e-9, "rf tiles: network 145 ns");
        CHECK_EXACT(ts->groups[0].cost.fill_drain_s, 282.5e-9, "rf tiles: fill 194 + 16 + 72.5 ns");
        CHECK_EXACT(ts->cost.latency_s, 538.5e-9, "rf, overlap tiles: 538.5 ns");
    }
    /* The pace-setter's pieces bound the others' (section 7): E = C * 2
       reads C, which reduces k, and k is the outermost loop (2 tiles of
       32, T = 2), so E waits for the whole walk: the vector unit's depth
       is 1.  Matrix 16*32*64 = 32768 MAC / 128 MAC/ns = 256 ns; vector
       16*32 = 512 op / 1 op/ns = 512 ns (sets the pace); DRAM: A 2 x 512
       B + B 2 x 1024 B read, E 1024 B written = 4096 B / 16 B/ns = 256 ns
       (GLB at 1 MiB/ns is far below).  Its first piece waits for
       the whole GEMM: 512 + 256 / min(2, 1) + 256 / 2 = 896 ns (the
       matrix unit added a tile at a time, 512 + 128 + 128 = 768 ns, let
       E start before C was complete). */
    const IrMapping *wp = mapping_of("", "wait_peak");
    CHECK(wp != NULL, "wait_peak mapping found");
    if (wp) {
        Schedule *ws = lower_mapping(&arena, wp, false, NULL);
        CHECK_EXACT(ws->groups[0].matrix_s, 256e-9, "wait: matrix stage 256 ns");
        CHECK_EXACT(ws->groups[0].vector_s, 512e-9, "wait: vector stage 512 ns");
        CHECK_EXACT(ws->cost.memory_s, 256e-9, "wait: DRAM 256 ns");
        CHECK_EXACT(ws->groups[0].vector_depth, 1, "E waits for the outermost loop");
        CHECK_EXACT(ws->groups[0].matrix_depth, 2, "the GEMM walks 2 tiles");
        CHECK_EXACT(ws->groups[0].cost.fill_drain_s, 384e-9, "wait: fill 256 + 128 ns");
        CHECK_EXACT(ws->cost.latency_s, 896e-9, "wait: 512 + 256 + 128 = 896 ns");
    }
    arena_free_all(&arena);
    return unit_finish();
}
