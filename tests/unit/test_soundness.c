/* test_soundness.c — issue 8's holes, each checked against numbers worked
 * by hand from docs/cost-model.md: live state at the fusion level (partial
 * sums across an outer reduction loop; a reader waiting for a reduction
 * over a tiled index), collectives counted per fusion-level tile, the
 * systolic fold formula with the reader's index names, tiles that must
 * nest with the splits below them, a reader's copy kept across the loop
 * that reads it again, a relayout broadcast by the owner of each tile,
 * a reader finding its producer's tile in the producer's iterations, a
 * tile broadcast piece by piece while its producer fills it (and whole
 * once it is made), a reader's own tile below the fusion level, and a
 * relayout over two cluster dims at once. */
#include "passes/passes.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <string.h>

static const char *program_text =
    "arch one_core {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 1 TB/s; }\n"
    "  memory SRAM { capacity 1 MiB; bandwidth 10 TB/s; }\n"
    "  compute mac matrix { throughput 1024 MAC/cycle; }\n"
    "  compute simd vector { throughput 256 op/cycle; }\n"
    "}\n"
    "arch shared_l2 {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 100 GB/s; }\n"
    "  memory L2 { capacity 8 MiB; bandwidth 1 TB/s; }\n"
    "  cluster cores[x = 4] ring { link_bandwidth 32 B/cycle; hop_latency 10 cycles; }\n"
    "  memory SRAM { capacity 256 KiB; bandwidth 1 TB/s; }\n"
    "  compute mac matrix { throughput 512 MAC/cycle; }\n"
    "  compute simd vector { throughput 64 op/cycle; }\n"
    "}\n"
    "arch systolic {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 1 TB/s; }\n"
    "  memory SRAM { capacity 64 MiB; bandwidth 10 TB/s; }\n"
    "  compute pe matrix { array 128 x 128; }\n"
    "  compute simd vector { throughput 1024 op/cycle; }\n"
    "}\n"
    "op gemm_relu<M = 1024, N = 1024, K = 1024> {\n"
    "  in A[M, K] : fp16;\n  in B[K, N] : fp16;\n  out D[M, N] : fp16;\n  var C : fp32;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n  D[m, n] = relu(C[m, n]);\n}\n"
    "op softmax<M = 256, N = 256, K = 64> {\n"
    "  in A[M, K] : fp16;\n  in B[K, N] : fp16;\n  out P[M, N] : fp16;\n"
    "  var C : fp16;\n  var mx : fp16;\n  var e : fp16;\n  var s : fp16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n  mx[m] = max(n) C[m, n];\n"
    "  e[m, n] = exp(C[m, n] - mx[m]);\n  s[m] = sum(n) e[m, n];\n  P[m, n] = e[m, n] / s[m];\n}\n"
    "op renamed<M = 512, N = 512, D = 128> {\n"
    "  in P[M, N] : fp16;\n  in V[N, D] : fp16;\n  out O[M, D] : fp16;\n"
    "  V1[m, d] = V[m, d] * 1;\n  O[m, d] = P[m, n] * V1[n, d];\n}\n"
    "mapping k_outer for gemm_relu on one_core {\n"
    "  tile SRAM: m 128, n 128, k 128;\n  order SRAM: k, m, n;\n  fuse C, D at SRAM;\n}\n"
    "mapping k_inner for gemm_relu on one_core {\n"
    "  tile SRAM: m 128, n 128, k 128;\n  order SRAM: m, n, k;\n  fuse C, D at SRAM;\n}\n"
    "mapping n_outer for softmax on one_core {\n"
    "  tile SRAM: m 64, n 32;\n  order SRAM: n, m;\n  fuse C, mx, e, s, P at SRAM;\n}\n"
    "mapping rows for softmax on shared_l2 {\n"
    "  spatial n -> x;\n  tile SRAM: m 32;\n  fuse C, mx, e, s, P at SRAM;\n}\n"
    "mapping whole for renamed on systolic {\n  fuse V1, O at SRAM;\n}\n"
    "op rename_fused<N = 64, M = 8> {\n"
    "  in A[N] : fp32;\n  in B[N, M] : fp32;\n  out y[M] : fp32;\n  var t2 : fp32;\n"
    "  t2[n] = A[n] * 1;\n  y[m] = t2[j] * B[j, m];\n}\n"
    "mapping renamed_fused for rename_fused on one_core {\n"
    "  tile SRAM: n 16;\n  fuse t2, y at SRAM;\n}\n";

/* The second half (C11 bounds one string literal at 4095 characters). */
static const char *program_text_2 =
    "arch four_cores {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  cluster cores[x = 4] full { link_bandwidth 8 B/cycle; hop_latency 2 cycles; }\n"
    "  memory L1 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute simd vector { throughput 8 op/cycle; }\n"
    "}\n"
    "op relaid {\n"
    "  in A0[5, 16] : fp32;\n  in A3[16, 16] : fp32;\n  out t4[5, 16] : fp32;\n"
    "  var t1 : fp32;\n  var t2 : fp32;\n"
    "  t1[m] = sum(n) A0[m, n];\n  t2[m, n] = A0[m, n] / t1[m];\n"
    "  t4[m, n] = t2[m, k] * A3[k, n];\n}\n"
    "mapping relaid_rows for relaid on four_cores {\n"
    "  spatial n -> x;\n  tile L1: n 1, k 4;\n  order L1: n, k;\n  fuse t1, t2, t4 at L1;\n}\n"
    "arch three_levels {\n"
    "  clock 1 GHz;\n"
    "  memory L0 { bandwidth 16 B/cycle; }\n"
    "  memory L1 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  memory L2 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute simd vector { throughput 8 op/cycle; }\n"
    "}\n"
    "op first_iteration {\n"
    "  in t4[2, 12] : fp32;\n  in A5[4] : int8;\n  in A7[2, 2] : fp32;\n"
    "  out t8[12, 4, 2] : fp16;\n  var t6 : fp32;\n"
    "  t6[m, k, j] = t4[m, k] * A5[j];\n  t8[k, j, p] = A7[m, p] * t6[m, k, j];\n}\n"
    "mapping p_outside for first_iteration on three_levels {\n"
    "  tile L1: m 2, p 1;\n  order L1: p, m;\n  tile L2: m 1;\n  fuse t6, t8 at L1;\n}\n"
    "arch role_split {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  cluster c[x = 2] full { link_bandwidth 8 B/cycle; hop_latency 2 cycles; }\n"
    "  memory L1i role input { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  memory L1w role weight { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  memory L1o role output { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  memory L2 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute simd vector { throughput 8 op/cycle; }\n"
    "}\n"
    "op scale_shift {\n"
    "  in A[4, 8] : fp32;\n  out B[4, 8] : fp32;\n  var t3 : fp32;\n"
    "  t3[m, n] = A[m, n] * 2;\n  B[m, n] = t3[m, n] + 1;\n}\n"
    "mapping pieces for scale_shift on role_split {\n"
    "  tile L2: m 1;\n  fuse t3, B at DRAM;\n}\n"
    "arch grid {\n"
    "  clock 1 GHz;\n"
    "  cluster c[xa = 2, ya = 2] full { link_bandwidth 8 B/cycle; hop_latency 2 cycles; }\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  memory L1 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute simd vector { throughput 8 op/cycle; }\n"
    "}\n"
    "op col_sums {\n"
    "  in A[4, 8] : fp32;\n  out s[8] : fp32;\n  var t2 : fp32;\n"
    "  t2[m, n] = A[m, n] * 2;\n  s[n] = sum(m) t2[m, n];\n}\n"
    "mapping transposed for col_sums on grid {\n"
    "  spatial m -> xa, n -> ya;\n  spatial for s: n -> xa;\n  fuse t2, s at L1;\n}\n"
    "op shift_blocks {\n"
    "  in A[4, 8] : fp32;\n  out B[4, 8] : fp32;\n  var t2 : fp32;\n"
    "  t2[m, n] = A[m, n] * 2;\n  B[m, n] = t2[m, n] + 1;\n}\n"
    "mapping shifted for shift_blocks on grid {\n"
    "  spatial n -> ya;\n  spatial for B: n -> (xa, ya);\n  fuse t2, B at L1;\n}\n"
    "arch interleave {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  memory L1 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  cluster c[x = 2] full { link_bandwidth 8 B/cycle; hop_latency 2 cycles; }\n"
    "  memory L2 { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute simd vector { throughput 8 op/cycle; }\n"
    "}\n"
    "mapping interleaved for shift_blocks on interleave {\n"
    "  spatial for t2: n -> x;\n  tile L1: n 4;\n  fuse t2, B at L2;\n}\n"
    "op row_scale {\n"
    "  in A[4, 8] : fp32;\n  out B[4, 8] : fp32;\n  var t1 : fp32;\n"
    "  t1[m] = sum(n) A[m, n];\n  B[m, n] = A[m, n] * t1[m];\n}\n"
    "mapping split_apart for row_scale on grid {\n"
    "  spatial n -> ya;\n  spatial for B: n -> xa;\n  fuse t1, B at L1;\n}\n"
    "op renamed_below {\n"
    "  in A[8, 4] : fp32;\n  out B[8, 4] : fp32;\n  var t2 : fp32;\n"
    "  t2[m, n] = A[m, n] * 2;\n  B[j, n] = t2[j, n] + 1;\n}\n"
    "mapping below_fusion for renamed_below on one_core {\n"
    "  tile SRAM: j 2;\n  fuse t2, B at DRAM;\n}\n";

/* The third part. */
static const char *program_text_3 =
    "arch two_cores {\n"
    "  clock 1 GHz;\n  memory DRAM { bandwidth 100 GB/s; }\n"
    "  memory L1 { capacity 1 MiB; bandwidth 1 TB/s; }\n"
    "  cluster cores[x = 2] ring { link_bandwidth 32 B/cycle; hop_latency 10 cycles; }\n"
    "  memory L2 { capacity 64 KiB; bandwidth 1 TB/s; }\n"
    "  memory L3 { capacity 16 KiB; bandwidth 1 TB/s; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute simd vector { throughput 16 op/cycle; }\n}\n"
    "op fill_once {\n"
    "  in A[4, 8] : fp32;\n  in W[4, 4] : fp32;\n  out Y[4, 8] : fp32;\n  var t6 : fp32;\n"
    "  t6[k, j] = A[k, j] * 2;\n  Y[r, j] = W[r, q] * t6[q, j];\n}\n"
    "mapping made_once for fill_once on two_cores {\n"
    "  spatial for Y: r -> x;\n  tile L2: q 1;\n  order L2: q, j;\n"
    "  tile L3: j 4;\n  order L3: j;\n  fuse t6, Y at L1;\n}\n";

static Program *program;
static Arena arena;

/* A footprint's live tiles without double buffering's spare tile (the
 * checks below are about live state; test_buffers.c checks the spare). */
static double held(const Footprint *f) {
    return f->bytes * f->live_tiles / (f->live_tiles + f->spare_tiles);
}

static const Schedule *lowered(const char *name) {
    return unit_lowered(&arena, program, name);
}

/* The footprint of a tensor in a memory of group 0, or NULL. */
static const Footprint *footprint(const Schedule *s, const char *memory, const char *tensor) {
    const SchedGroup *g = &s->groups[0];
    for (int k = 0; k < g->footprint_count; k++) {
        const Footprint *f = &g->footprints[k];
        if (strcmp(s->arch->memories[f->memory].name, memory) == 0 &&
            strcmp(s->op->tensors[f->tensor].name, tensor) == 0)
            return f;
    }
    return NULL;
}


int main(void) {
    SourceManager sm;
    DiagSink diags;
    const char *text = arena_printf(&arena, "%s%s%s", program_text, program_text_2, program_text_3);
    program = unit_load_named(&arena, &sm, &diags, "soundness.cmt", text);
    CHECK(program && diags.error_count == 0, "soundness program checks");
    if (!program || diags.error_count) return unit_finish();

    /* k outermost: the k loop (8 trips) encloses the m and n loops (8 x 8),
       so 64 tiles of C[128,128] fp32 = 64 KiB each stay live: 4 MiB; with
       A, B, D tiles (32 KiB each) 4 MiB + 96 KiB > 1 MiB */
    const Schedule *s = lowered("k_outer");
    const Footprint *c = footprint(s, "SRAM", "C");
    CHECK(c && c->live_tiles == 64, "k outer: 64 live tiles of C");
    CHECK(c && held(c) == 4.0 * 128 * 128 * 64, "k outer: C holds 4 MiB in SRAM");
    CHECK(c && c->waiter < 0, "k outer: C is live for its own partial sums");
    CHECK(s->excess_count == 1 && s->excess[0].need == 4.0 * 1048576 + 3 * 32768,
          "k outer: SRAM needs 4 MiB + 96 KiB");
    /* D waits for the k loop (position 0): its nodes follow that loop */
    const SchedNode *d = node_of(s, SN_COMPUTE, "D");
    CHECK(s->groups[0].wait_loop[1] == 0 && d && d->after_inner && d->depth == -1,
          "k outer: relu runs after the k loop");

    s = lowered("k_inner");
    c = footprint(s, "SRAM", "C");
    CHECK(c && c->live_tiles == 1 && held(c) == 65536, "k inner: one 64 KiB tile of C");
    /* C is made and read at SRAM and does not move; A, refilled by the
     * m, n and k loops (8 trips each, T = 512), is held twice: 2 x 32 KiB
     * (section 2, double buffering) */
    const Footprint *a_in = footprint(s, "SRAM", "A");
    CHECK(c && c->spare_tiles == 0 && a_in && a_in->spare_tiles == 1 && a_in->bytes == 65536,
          "k inner: C held once, A with its next tile");
    CHECK(s->excess_count == 0, "k inner: fits");

    /* n outermost over m (tile m 64, n 32: 4 x 8 trips): mx completes after
       the n loop, so e waits for it and every C tile of both loops is
       live: 32 tiles of C[64,32] fp16 = 4 KiB, 128 KiB; mx[64] is partial
       over the n loop: live across it for the 4 m tiles, 4 x 128 B */
    s = lowered("n_outer");
    c = footprint(s, "SRAM", "C");
    CHECK(c && c->live_tiles == 32 && held(c) == 32.0 * 4096, "n outer: C holds 32 tiles");
    CHECK(c && c->waiter >= 0 && strcmp(s->op->stmts[c->waiter].name, "e") == 0,
          "n outer: C waits for e");
    const Footprint *mx = footprint(s, "SRAM", "mx");
    CHECK(mx && mx->live_tiles == 4 && held(mx) == 512, "n outer: mx holds 4 partial tiles");

    /* n split over 4 cores, tile SRAM: m 32 (8 row blocks) with the group
       fused at SRAM: the max is all-reduced per block, 8 x 64 B;
       2*3*10 + 2*(3/4)*64/32/2 = 61.5 ns each, 492 ns in all */
    s = lowered("rows");
    const SchedNode *ar = node_of(s, SN_COLLECTIVE, "mx");
    CHECK(ar && ar->coll == CK_ALLREDUCE && ar->count == 8 && ar->bytes == 64,
          "rows: allreduce mx 8 times, 64 B");
    CHECK_NEAR(ar ? ar->latency_s : 0, 492e-9, 1e-9, "rows: 8 x 61.5 ns");

    /* O reads V1 as V1[n,d]: K = n = 512 rows, weight columns d = 128:
       ceil(512/128) * ceil(128/128) = 4 folds of (2*128 + 128 + 512 - 2)
       = 894 cycles: 3576 ns at 1 GHz */
    s = lowered("whole");
    const SchedNode *o = node_of(s, SN_COMPUTE, "O");
    CHECK_NEAR(o ? o->latency_s : 0, 3576e-9, 1e-9, "renamed: 4 folds, 3576 ns");
    /* y reads t2[n] as t2[j]: it waits for the maker's n loop (4 trips of
       16), so all 4 tiles of t2 stay live, 4 x 16 x 4 B = 256 B, and y
       holds its own copy t2[j] with j whole: 64 x 4 B = 256 B */
    s = lowered("renamed_fused");
    const Footprint *maker = NULL, *copy = NULL;
    for (int k = 0; k < s->groups[0].footprint_count; k++) {
        const Footprint *fp = &s->groups[0].footprints[k];
        if (strcmp(s->op->tensors[fp->tensor].name, "t2") != 0) continue;
        if (fp->reader < 0)
            maker = fp;
        else
            copy = fp;
    }
    CHECK(maker && maker->live_tiles == 4 && held(maker) == 256,
          "renamed in group: the maker's 4 tiles of t2 stay live, 256 B");
    CHECK(copy && held(copy) == 256, "renamed in group: the reader's own copy, 256 B");
    CHECK(s->groups[0].wait_loop[1] == 0, "renamed in group: y waits for the n loop");

    /* t2[5,16] fp32 made with n split over 4 cores (blocks of 4 columns),
       read as t2[m,k] by t4 in k tiles of 4 inside t4's n loop (4 trips
       of 1 per core): each k tile [5,4] = 80 B lies in one core's block,
       so its owner broadcasts it, 4 times (one per k tile), 80 B; t4
       keeps all 4 tiles it receives across its n loop: 320 B */
    s = lowered("relaid_rows");
    const SchedNode *bc = NULL;
    for (int i = 0; i < s->node_count; i++)
        if (s->nodes[i].kind == SN_COLLECTIVE && s->nodes[i].from_owner) bc = &s->nodes[i];
    CHECK(bc && bc->coll == CK_BROADCAST && bc->count == 4 && bc->bytes == 80 &&
              strcmp(s->op->tensors[bc->tensor].name, "t2") == 0,
          "owner broadcast: t2's k tiles, 4 x 80 B from their owner");
    copy = NULL;
    for (int k = 0; k < s->groups[0].footprint_count; k++) {
        const Footprint *fp = &s->groups[0].footprints[k];
        if (fp->reader >= 0 && strcmp(s->op->tensors[fp->tensor].name, "t2") == 0) copy = fp;
    }
    CHECK(copy && copy->live_tiles == 4 && held(copy) == 320,
          "reader copy: t4 keeps 4 tiles of t2 [5,4] across its n loop, 320 B");

    /* Below the fusion level too (DRAM here) the reader keeps its own
       tile beside the maker's: t2's SRAM result tile is [8,4] fp32 =
       128 B, B reads it as t2[j,n] in j tiles of 2: [2,4] = 32 B beside
       it (before, the larger of the two: 128 B); with A's [8,4] (128 B)
       and B's [2,4] (32 B) the group needs 128 + 32 + 128 + 32 = 320 B */
    s = lowered("below_fusion");
    maker = copy = NULL;
    double sram = 0;
    for (int k = 0; k < s->groups[0].footprint_count; k++) {
        const Footprint *fp = &s->groups[0].footprints[k];
        if (strcmp(s->arch->memories[fp->memory].name, "SRAM") != 0) continue;
        sram += held(fp);
        if (strcmp(s->op->tensors[fp->tensor].name, "t2") != 0) continue;
        if (fp->reader < 0)
            maker = fp;
        else
            copy = fp;
    }
    CHECK(maker && held(maker) == 128, "below the fusion level: the maker's t2 tile, 128 B");
    CHECK(copy && held(copy) == 32, "below the fusion level: the reader's own t2 tile, 32 B");
    CHECK(sram == 320, "below the fusion level: SRAM holds 320 B");
    check_verified(s, "below the fusion level");

    /* t6[4,8] fp32 is made in the first iteration of Y's q loop (4
       trips: t6 has no q), in 2 L3 tiles of j (4 columns).  Y reads its L2
       tile t6[q,j] = [1,8] = 32 B once per q, both cores the same tile:
       a broadcast over x.  In q's first iteration the tile arrives in the
       2 pieces t6 makes (16 B each); in the other 3 it is complete (32 B
       each): 2 + 3 = 5 transfers of 128 B / 5 = 25.6 B (before: 2 pieces
       in every q, 8 of 16 B) */
    s = lowered("made_once");
    bc = node_of(s, SN_COLLECTIVE, "t6");
    CHECK(bc && bc->coll == CK_BROADCAST && bc->count == 5,
          "made once: t6 reaches both cores in 5 broadcasts");
    CHECK_NEAR(bc ? bc->bytes : 0, 25.6, 1e-9, "made once: 25.6 B each");
    check_verified(s, "made once");

    /* t6 (made in p's first iteration only) has L2 tiles [1,12,4] fp32 =
       192 B, one per m: 2 visits; t8 visits them for each p and m: 4.  t8
       finds t6's tile for t6's 2 visits and loads the other 2: 384 B into
       L2 (not 4 x 192 = 768 B) */
    s = lowered("p_outside");
    const SchedNode *ld = NULL;
    for (int i = 0; i < s->node_count; i++) {
        const SchedNode *n = &s->nodes[i];
        if (n->kind == SN_LOAD && n->to_level == 2 &&
            strcmp(s->op->tensors[n->tensor].name, "t6") == 0)
            ld = n;
    }
    CHECK(ld && ld->count == 2 && ld->bytes == 192,
          "producer's tile: t8 loads t6 into L2 twice, 192 B each");

    /* B reads t3 into L1i (its role) from DRAM, where t3 lives, as one
       [4,8] tile of 128 B; t3 makes it one row per m iteration at L2 (4
       trips) in the same pass, so the tile reaches both replicas in 4
       pieces: broadcast 4 x 32 B (not 1 x 128 B) */
    s = lowered("pieces");
    const SchedNode *piece = NULL;
    for (int i = 0; i < s->node_count; i++) {
        const SchedNode *n = &s->nodes[i];
        if (n->kind == SN_COLLECTIVE && n->coll == CK_BROADCAST &&
            strcmp(s->op->tensors[n->tensor].name, "t3") == 0)
            piece = n;
    }
    CHECK(piece && piece->count == 4 && piece->bytes == 32,
          "pieces: t3 reaches B's replicas in 4 broadcasts of 32 B");

    /* t2[4,8] fp32 made with rows over xa and columns over ya (2 x 4 per
       instance), read by s with columns over xa: instance (a,b) needs all
       4 rows of column block a (64 B) and holds rows block a of column
       block b: half of its need when a = b, nothing otherwise.  One
       exchange over (xa,ya); the busiest instance receives 64 B, which an
       alltoall spreading (P-1)/P of its bytes over P = 4 moves as 85.3 B */
    s = lowered("transposed");
    const SchedNode *x = node_of(s, SN_COLLECTIVE, "t2");
    CHECK(x && x->coll == CK_ALLTOALL && x->dim_count == 2 && x->count == 1 && x->received == 64,
          "two dims at once: one alltoall of t2 over (xa,ya), 64 B to the busiest instance");
    CHECK_NEAR(x ? x->bytes : 0, 64.0 * 4 / 3, 1e-9, "two dims at once: 85.3 B in the formula");

    /* t2[4,8] fp32 made with n over ya (blocks of 4 columns, the same on
       both xa), read by B with n over (xa,ya) (blocks of 2, numbered
       2*xa + ya): (0,0) needs columns 0-1 and holds 0-3, (1,1) needs 6-7
       and holds 4-7, but (0,1) needs 2-3 and (1,0) needs 4-5, which the
       other ya holds: 4 rows x 2 columns x 4 B = 32 B each.  Along the
       same index, yet an exchange over ya (not xa: t2 is the same on both
       xa); one tile; 32 B x 2/1 = 64 B in the formula */
    s = lowered("shifted");
    x = node_of(s, SN_COLLECTIVE, "t2");
    CHECK(x && x->coll == CK_ALLTOALL && x->dim_count == 1 &&
              strcmp(s->arch->dims[x->dims[0]].name, "ya") == 0 && x->count == 1 &&
              x->received == 32,
          "other blocks of the same index: one alltoall of t2 over ya, 32 B to the busiest");
    CHECK_NEAR(x ? x->bytes : 0, 64.0, 1e-9, "other blocks of the same index: 64 B in the formula");

    /* x splits n below L1, whose tile of n is 4: each L1 tile splits in
       two, x = 0 holding columns 0-1 and 4-5, x = 1 columns 2-3 and 6-7.
       B (not split) takes t2 [4,4] per L1 tile, 2 tiles: each instance
       holds 2 of the 4 columns, so it lacks 4 x 2 x 4 B = 32 B per tile,
       and no one instance owns a whole tile (an allgather, not an owner's
       broadcast); 32 B x 2/1 = 64 B in the formula */
    s = lowered("interleaved");
    x = node_of(s, SN_COLLECTIVE, "t2");
    CHECK(x && x->coll == CK_ALLGATHER && !x->from_owner && x->count == 2 && x->received == 32,
          "interleaved blocks: an allgather of t2 twice, 32 B to the busiest instance");
    CHECK_NEAR(x ? x->bytes : 0, 64.0, 1e-9, "interleaved blocks: 64 B in the formula");

    /* t1 reads A with n over ya, B with n over xa: instance (a,b) needs
       columns block b of A for t1 and block a for B, one tile of 4 rows x
       4 columns x 4 B = 64 B each, the same part only when a = b.  B does
       not find t1's tile: two loads into L1 of 64 B (not one) */
    s = lowered("split_apart");
    int loads = 0;
    double loaded = 0;
    for (int i = 0; i < s->node_count; i++) {
        const SchedNode *n = &s->nodes[i];
        if (n->kind == SN_LOAD && n->to_level == 1 &&
            strcmp(s->op->tensors[n->tensor].name, "A") == 0) {
            loads++;
            loaded += n->bytes * n->count;
        }
    }
    CHECK(loads == 2 && loaded == 128,
          "split apart: t1 and B load their own tiles of A into L1, 2 x 64 B");
    return unit_finish();
}
