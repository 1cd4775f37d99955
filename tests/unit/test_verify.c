/* test_verify.c — the reference interpreter's own numbers, worked out by
 * hand (passes/verify.c states the semantics):
 *  - cost-model.md section 9's worked example: every footprint, traffic,
 *    work and collective number of the section, and no disagreement;
 *  - partial sums live across an enclosing reduction loop fill the fused
 *    level (the footprint disagreement of issue 8, hole 1);
 *  - one all-reduce per fusion-level tile when the consumer runs inside
 *    the tile loop (hole 3);
 *  - a statement reading an intermediate with renamed indices holds the
 *    tile of the indices it reads (hole 4);
 *  - a fused consumer finds its producer's tile resident in the same
 *    memory below the fusion level;
 *  - a schedule beyond the limit is too large to verify. */
#include "passes/verify.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <string.h>

static const char *text =
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
    "arch a2 {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  memory SRAM { capacity 1 KiB; bandwidth 64 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute simd vector { throughput 8 op/cycle; }\n"
    "}\n"
    "arch a3 {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  memory L1 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  memory L2 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute simd vector { throughput 8 op/cycle; }\n"
    "}\n"
    "arch shared_l2 {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  memory L2 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  cluster cores[x = 4] ring { link_bandwidth 8 B/cycle; hop_latency 2 cycles; }\n"
    "  memory SRAM { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute simd vector { throughput 8 op/cycle; }\n"
    "}\n"
    "arch cores4 {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  memory L1 { capacity 1 KiB; bandwidth 64 B/cycle; }\n"
    "  cluster cores[x = 4] ring { link_bandwidth 8 B/cycle; hop_latency 2 cycles; }\n"
    "  compute simd vector { throughput 8 op/cycle; }\n"
    "}\n"
    "op gemm_rowsum<M = 16, N = 32, K = 64> {\n"
    "  in A[M, K] : int8;\n  in B[K, N] : int8;\n  out s[M] : fp16;\n  var C : fp16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  s[m] = sum(n) C[m, n];\n"
    "}\n"
    "op mmrelu<M = 8, N = 8, K = 8> {\n"
    "  in A[M, K] : fp32;\n  in B[K, N] : fp32;\n  out D[M, N] : fp32;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  D[m, n] = relu(C[m, n]);\n"
    "}\n"
    "op softmax<M = 8, N = 16, K = 4> {\n"
    "  in A[M, K] : fp16;\n  in B[K, N] : fp16;\n  out P[M, N] : fp16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  mx[m] = max(n) C[m, n];\n"
    "  e[m, n] = exp(C[m, n] - mx[m]);\n"
    "  s[m] = sum(n) e[m, n];\n"
    "  P[m, n] = e[m, n] / s[m];\n"
    "}\n"
    "op renamed<M = 4, D = 4> {\n"
    "  in P[M, M] : fp32;\n  in V[M, D] : fp32;\n  out O[M, D] : fp32;\n"
    "  V1[m, d] = V[m, d] * 1;\n"
    "  O[m, d] = P[m, n] * V1[n, d];\n"
    "}\n"
    "op ex<N = 8> {\n"
    "  in X[N] : fp32;\n  out Y[N] : fp32;\n"
    "  Y[n] = exp(X[n]);\n"
    "}\n"
    "op big<N = 1048576> {\n"
    "  in X[N] : fp32;\n  out Y[N] : fp32;\n"
    "  Y[n] = exp(X[n]);\n"
    "}\n"
    "mapping worked for gemm_rowsum on tiny { spatial n -> x; tile GLB: m 8; fuse C, s at GLB; }\n"
    "mapping k_outer for mmrelu on a2 {\n"
    "  tile SRAM: m 2, n 2, k 2; order SRAM: k, m, n; fuse C, D at SRAM;\n"
    "}\n"
    "mapping k_inner for mmrelu on a2 {\n"
    "  tile SRAM: m 2, n 2, k 2; order SRAM: m, n, k; fuse C, D at SRAM;\n"
    "}\n"
    "mapping rows for softmax on shared_l2 {\n"
    "  spatial n -> x; tile SRAM: m 2; fuse C, mx, e, s, P at SRAM;\n"
    "}\n"
    "mapping by_rows for renamed on a2 { tile SRAM: m 1; }\n"
    "mapping resident for mmrelu<M = 2, N = 2, K = 2> on a3 { fuse C, D at L1; }\n"
    "mapping huge for big on a2 { }\n";

/* The interpreter's report and the comparison for one mapping. */
typedef struct Run {
    const Schedule *s;
    VerifyReport r;
    VerifyDiff *d;
    int n;
    bool ran;
} Run;

static Run run(Arena *a, Program *p, const char *name) {
    Run x;
    memset(&x, 0, sizeof x);
    const IrMapping *m = unit_mapping(p, name);
    if (!m) return x;
    x.s = lower_mapping(a, m, false, NULL);
    x.ran = verify_schedule(a, x.s, &x.r);
    if (x.ran) x.n = verify_compare(a, x.s, &x.r, &x.d);
    return x;
}

static const VerifyMemory *mem(const Run *x, int g, const char *name) {
    static VerifyMemory none;
    int m = unit_memory_id(x->s->arch, name);
    return x->ran && m >= 0 && g < x->r.group_count ? &x->r.groups[g].memories[m] : &none;
}

static const VerifyCollective *coll(const Run *x, const char *tensor, VerifyClass cls) {
    for (int k = 0; x->ran && k < x->r.collective_count; k++) {
        const VerifyCollective *v = &x->r.collectives[k];
        if (v->cls == cls && strcmp(x->s->op->tensors[v->tensor].name, tensor) == 0) return v;
    }
    return NULL;
}

static double analytic_footprint(const Run *x, int g, const char *name) {
    int m = unit_memory_id(x->s->arch, name);
    double b = 0;
    for (int k = 0; k < x->s->groups[g].footprint_count; k++)
        if (x->s->groups[g].footprints[k].memory == m) b += x->s->groups[g].footprints[k].bytes;
    return b;
}

static bool has_kind(const Run *x, VerifyDiffKind k) {
    for (int i = 0; i < x->n; i++)
        if (x->d[i].kind == k) return true;
    return false;
}

int main(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    Program *p = unit_load_named(&arena, &sm, &diags, "verify.cmt", text);
    if (!p || diags.error_count) diags_render_text(stdout, &sm, &diags, (DiagRenderOptions){false});
    CHECK(p && diags.error_count == 0, "verify cases check");
    if (!p || diags.error_count) return unit_finish();

    /* section 9: DRAM reads A 1024 + B 2048, writes s 32; GLB as worked */
    Run w = run(&arena, p, "worked");
    CHECK(w.ran, "worked example runs");
    CHECK_NEAR(mem(&w, 0, "DRAM")->traffic_bytes, 3104, 1e-12, "worked: DRAM traffic 3104 B");
    CHECK_NEAR(mem(&w, 0, "GLB")->traffic_bytes, 5184, 1e-12, "worked: GLB traffic 5184 B");
    CHECK_NEAR(mem(&w, 0, "GLB")->peak_bytes, 512 + 1024 + 256 + 16, 1e-12,
               "worked: GLB holds A 512 + B 1024 + C 256 + s 16 B");
    CHECK_NEAR(w.ran ? w.r.work[0] : 0, 16384, 1e-12, "worked: C does 16384 MAC per instance");
    CHECK_NEAR(w.ran ? w.r.work[1] : 0, 256, 1e-12, "worked: s does 256 op per instance");
    const VerifyCollective *bc = coll(&w, "A", VC_BROADCAST), *rs = coll(&w, "s", VC_REDUCE);
    CHECK(bc && bc->executions == 2 && bc->bytes == 1024, "worked: broadcast A twice, 512 B");
    CHECK(rs && rs->executions == 2 && rs->bytes == 32, "worked: reduce s twice, 16 B");
    CHECK(w.ran && w.n == 0, "worked: the analytic schedule agrees");

    /* hole 1: with k outermost every (m, n) partial sum of C (8 x 8 fp32)
     * stays live in SRAM across the k loop, beside the A, B and D tiles */
    Run ko = run(&arena, p, "k_outer"), ki = run(&arena, p, "k_inner");
    CHECK_NEAR(mem(&ko, 0, "SRAM")->peak_bytes, 256 + 16 + 16 + 16, 1e-12,
               "k outermost: SRAM holds all 256 B of partial sums");
    CHECK(has_kind(&ko, VD_FOOTPRINT) ==
              (analytic_footprint(&ko, 0, "SRAM") < mem(&ko, 0, "SRAM")->peak_bytes),
          "k outermost: an analytic footprint below it is a disagreement");
    CHECK_NEAR(mem(&ki, 0, "SRAM")->peak_bytes, 64, 1e-12, "k innermost: one tile of each, 64 B");

    /* hole 3: n split over 4 cores under a shared L2; mx and s combine
     * per SRAM tile of 2 rows: 4 all-reduces of 2 fp16 values each */
    Run sm3 = run(&arena, p, "rows");
    const VerifyCollective *mx = coll(&sm3, "mx", VC_REDUCE);
    CHECK(mx && mx->executions == 4 && mx->bytes == 16, "rows: reduce mx 4 times x 4 B");

    /* hole 4: O reads V1 as V1[n, d], the whole 4 x 4 per row of O */
    Run rn = run(&arena, p, "by_rows");
    CHECK_NEAR(mem(&rn, 1, "SRAM")->peak_bytes, 16 + 64 + 16, 1e-12,
               "renamed: SRAM holds P row 16 + V1 64 + O row 16 B");

    /* the consumer D finds C's tile in L2 where C left it: L2 sees A and B
     * loaded (16 + 16), read by the unit (16 + 16), C written by the unit
     * (16), read for D (16) and written back (16), D written (16) and
     * written back (16): 64 written, 80 read */
    Run rs2 = run(&arena, p, "resident");
    CHECK_NEAR(mem(&rs2, 0, "L2")->written_bytes, 64, 1e-12, "resident: L2 written 64 B");
    CHECK_NEAR(mem(&rs2, 0, "L2")->read_bytes, 80, 1e-12, "resident: L2 read 80 B");

    Run hg = run(&arena, p, "huge");
    CHECK(!hg.ran && hg.r.cost > (double)VERIFY_MAX_STEPS, "huge: too large to verify");

    arena_free_all(&arena);
    return unit_finish();
}
