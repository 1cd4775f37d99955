/* sema_ir.c — the IR that check_program builds: index extents, statement
 * classes and work, arch levels and units after inheritance, mapping
 * decisions and holes; and ir_instantiate_op with bindings. */
#include "frontend/ast.h"
#include "frontend/check.h"
#include "unit.h"

#include <stdlib.h>

static const char *const PROGRAM =
    "const SEQ = 512;\n"
    "op gemm_softmax<M = SEQ / 2, N = 2 * M, K = 128> {\n"
    "  in  A[M, K] : int8;\n"
    "  in  B[K, N] : int8;\n"
    "  out D[M, N] : int8;\n"
    "  var C : fp16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  mx[m]   = max(n) C[m, n];\n"
    "  e[m, n] = exp(C[m, n] - mx[m]);\n"
    "  s[m]    = sum(n) e[m, n];\n"
    "  D[m, n] = e[m, n] / s[m];\n"
    "}\n"
    "arch edge {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 25 B/cycle; energy 100 pJ/B; }\n"
    "  cluster grid[x = 2, y = 2 ring] mesh {\n"
    "    link_bandwidth 64 B/cycle; hop_latency 5 cycles; link_energy 0.5 pJ/B;\n"
    "  }\n"
    "  memory GLB { capacity 2 MiB; bandwidth 2048 B/cycle; read_energy 1 pJ/B; }\n"
    "  memory IBUF role input { capacity 32 KB; bandwidth 512 GB/s; }\n"
    "  memory WBUF role weight { capacity 32 KB; bandwidth 512 GB/s; }\n"
    "  memory OBUF role output { capacity 128 KB; bandwidth 512 GB/s; }\n"
    "  compute mac matrix { array 32 x 32; count 64; efficiency 0.5; energy 0.25 pJ/MAC; }\n"
    "  compute simd vector { throughput 16 op/cycle; energy 0.8 pJ/op; cost exp 4; }\n"
    "}\n"
    "arch cloud : edge {\n"
    "  clock 2 GHz;\n"
    "  memory GLB { capacity 8 MiB; }\n"
    "}\n"
    "mapping fused for gemm_softmax<M = 512> on cloud {\n"
    "  spatial n -> x, m -> y;\n"
    "  tile GLB: m 64, n 256, k 128;\n"
    "  order GLB: m, n, k;\n"
    "  fuse C, mx, e, s, D at GLB;\n"
    "  repeat 96;\n"
    "}\n"
    "mapping searched for gemm_softmax on edge {\n"
    "  objective edp;\n"
    "  spatial for mx, s: n -> ?;\n"
    "  spatial ? -> x;\n"
    "  tile GLB: m ?, n ?, ? 64;\n"
    "  order GLB: ?;\n"
    "  fuse C, mx at ?;\n"
    "  fuse ?;\n"
    "}\n";

static Program *check_text(Arena *arena, SourceManager *sm, DiagSink *diags,
                           const char *text) {
    sources_init(sm, arena);
    diags_init(diags, arena);
    SourceFile *f = sources_add(sm, "unit.cmt", text, strlen(text));
    CheckOptions opts = {0};
    return check_program(arena, sm, diags, f, &opts);
}

static const IrStmt *stmt(const IrOp *op, const char *name) {
    int i = ir_find_stmt(op, intern_cstr(name));
    return i >= 0 ? &op->stmts[i] : NULL;
}

static void test_op(const IrMapping *m) {
    const IrOp *op = m->op;
    CHECK(op->index_count == 3, "op has three indices");
    int im = ir_find_index(op, intern_cstr("m"));
    int in = ir_find_index(op, intern_cstr("n"));
    int ik = ir_find_index(op, intern_cstr("k"));
    CHECK(im >= 0 && in >= 0 && ik >= 0, "indices m n k found");
    CHECK(op->indices[im].extent == 512, "m bound to M = 512");
    CHECK(op->indices[in].extent == 1024, "n bound to default N = 2 * M");
    CHECK(op->indices[ik].extent == 128, "k bound to K");
    const IrStmt *c = stmt(op, "C"), *mx = stmt(op, "mx"), *e = stmt(op, "e");
    const IrStmt *s = stmt(op, "s"), *d = stmt(op, "D");
    CHECK(c && mx && e && s && d, "five statements");
    if (!(c && mx && e && s && d)) return;
    CHECK(c->cls == SC_CONTRACTION, "C is a contraction");
    CHECK(c->input_count == 2 &&
              c->inputs[0] == ir_find_tensor(op, intern_cstr("A")) &&
              c->inputs[1] == ir_find_tensor(op, intern_cstr("B")),
          "C reads A then B");
    CHECK(c->reduced_count == 1 && c->reduced[0] == ik && c->reduce_op == RO_SUM,
          "C sums k");
    CHECK(mx->cls == SC_VECTOR && mx->reduce_op == RO_MAX && mx->reduced[0] == in,
          "mx is a max over n");
    CHECK(e->cls == SC_VECTOR && e->arith_ops == 1 && e->fn_count == 1 &&
              strcmp(e->fns[0].fn, "exp") == 0,
          "e: one subtraction and one exp per point");
    CHECK(e->reduce_op == RO_NONE && e->reduced_count == 0, "e reduces nothing");
    CHECK(s->reduce_op == RO_SUM && s->arith_ops == 0, "s sums with no arithmetic");
    CHECK(d->arith_ops == 1 && d->input_count == 2, "D divides e by s");
    const IrTensor *tc = &op->tensors[c->out_tensor];
    const IrTensor *tmx = &op->tensors[mx->out_tensor];
    CHECK(tc->type == ET_FP16, "var C sets C's type");
    CHECK(tmx->type == ET_INT8, "mx takes the widest input type");
    CHECK(tc->kind == TK_INTERMEDIATE && tc->producer == c->id, "C is produced by C");
    CHECK(tc->rank == 2 && tc->extent[0] == 512 && tc->extent[1] == 1024,
          "C is 512 x 1024");
    int64_t ext[3];
    ext[im] = 512;
    ext[in] = 1024;
    ext[ik] = 128;
    const IrCompute *simd = ir_vector_unit(m->arch);
    CHECK_NEAR(ir_stmt_work(op, c, ext, NULL), 512.0 * 1024 * 128, 0, "work of C in MACs");
    CHECK_NEAR(ir_stmt_work(op, e, ext, simd), (1 + 4) * 512.0 * 1024, 0,
               "work of e uses the exp cost 4");
    CHECK_NEAR(ir_stmt_work(op, e, ext, NULL), (1 + 1) * 512.0 * 1024, 0,
               "work of e with default cost 1");
    CHECK_NEAR(ir_stmt_work(op, s, ext, simd), 1 * 512.0 * 1024, 0,
               "work of s counts the combine");
}

static void test_arch(const IrArch *a) {
    CHECK_NEAR(a->clock_hz, 2e9, 1e-12, "child clock replaces the parent's");
    CHECK(a->level_count == 3, "levels DRAM, GLB and a role split");
    CHECK(a->memory_count == 5, "five memories");
    int glb = ir_find_level(a, intern_cstr("GLB"));
    int wbuf = ir_find_level(a, intern_cstr("WBUF"));
    CHECK(glb == 1 && wbuf == 2, "levels found by memory name");
    CHECK(isinf(a->memories[0].capacity), "outermost capacity unbounded");
    const IrMemory *g = ir_level_memory(a, glb, ROLE_ANY);
    CHECK_NEAR(g->capacity, 8.0 * 1024 * 1024, 1e-12, "GLB capacity overridden");
    CHECK_NEAR(g->bandwidth, 2048.0 * 2e9, 1e-12, "B/cycle converted with the clock");
    CHECK_NEAR(g->read_energy, 1e-12, 1e-9, "read energy in J/B");
    CHECK(a->levels[wbuf].memory_count == 3, "role split holds three memories");
    const IrMemory *w = ir_level_memory(a, wbuf, ROLE_WEIGHT);
    CHECK(w && w->name == intern_cstr("WBUF"), "weight role finds WBUF");
    CHECK(a->levels[glb].instances == 4 && a->levels[0].instances == 1,
          "GLB is replicated 2 x 2");
    CHECK(a->dim_count == 2 && a->dims[0].topology == TOPO_MESH &&
              a->dims[1].topology == TOPO_RING,
          "dim kinds: cluster default and per-dim override");
    CHECK_NEAR(a->clusters[0].hop_latency, 5 / 2e9, 1e-9, "cycles to seconds");
    const IrCompute *mac = ir_matrix_unit(a);
    CHECK(mac && mac->array_rows == 32 && mac->count == 64, "systolic array");
    if (mac) {
        CHECK_NEAR(mac->peak_per_cycle, 1024, 0, "array peak per unit");
        CHECK_NEAR(mac->throughput, 1024 * 2e9 * 0.5 * 64, 1e-12,
                   "throughput = peak x clock x efficiency x count");
        CHECK_NEAR(mac->energy, 0.25e-12, 1e-9, "MAC energy");
        CHECK(mac->instances == 4, "units replicated over all dims");
    }
}

static void test_fused(const IrMapping *m) {
    const IrOp *op = m->op;
    int dc = m->arch->dim_count, ic = op->index_count;
    int im = ir_find_index(op, intern_cstr("m"));
    int in = ir_find_index(op, intern_cstr("n"));
    int x = ir_find_dim(m->arch, intern_cstr("x"));
    int y = ir_find_dim(m->arch, intern_cstr("y"));
    const IrStmt *mx = stmt(op, "mx");
    CHECK(m->spatial.split[mx->id * dc + x] == in, "n split over x for mx");
    CHECK(m->spatial.split[mx->id * dc + y] == im, "m split over y for mx");
    int glb = ir_find_level(m->arch, intern_cstr("GLB"));
    for (int st = 0; st < op->stmt_count; st++) {
        CHECK(m->tile.size[ir_tile_slot(m, st, glb, im)] == 64, "tile m 64 at GLB");
        CHECK(m->tile.from[ir_tile_slot(m, st, glb, im)] == 0, "from the mapping-wide line");
        CHECK(m->tile.size[ir_tile_slot(m, st, 0, im)] == IR_UNSET, "no tile at DRAM");
        int o = ir_order_slot(m, st, glb);
        CHECK(m->order.length[o] == 3 && m->order.perm[o * ic] == im, "order m, n, k");
    }
    CHECK(m->fuse.group_count == 1 && m->fuse.level[0] == glb, "one group at GLB");
    CHECK(m->repeat == 96 && m->hole_count == 0 && m->overlap == OVERLAP_FULL,
          "repeat, no holes, full overlap");
}

static void test_searched(const IrMapping *m) {
    const IrOp *op = m->op;
    int dc = m->arch->dim_count;
    CHECK(m->hole_count == 8, "eight holes");
    CHECK(m->objective == OBJ_EDP && m->objective_given, "objective edp");
    const IrStmt *mx = stmt(op, "mx"), *c = stmt(op, "C");
    CHECK(m->spatial.split[mx->id * dc + 0] == IR_HOLE, "mx: n -> ? leaves x open");
    CHECK(m->spatial.split[c->id * dc + 0] == IR_HOLE, "C: ? -> x");
    CHECK(m->spatial.split[c->id * dc + 1] == IR_UNSET, "C: y unset");
    int glb = ir_find_level(m->arch, intern_cstr("GLB"));
    CHECK(m->tile.index_hole[glb], "index hole at GLB");
    CHECK(m->order.length[ir_order_slot(m, c->id, glb)] == IR_HOLE, "order hole");
    CHECK(m->fuse.whole_hole && m->fuse.group[c->id] == 0 &&
              m->fuse.level[0] == IR_HOLE,
          "C, mx fused at a hole; the rest left to the optimizer");
    CHECK(m->fuse.group[stmt(op, "e")->id] == IR_HOLE, "e under fuse ?");
}

/* The text a span covers in PROGRAM (spans of the one file). */
static bool span_reads(Span sp, const char *want) {
    size_t n = strlen(want);
    return sp.file >= 0 && sp.end - sp.start == n && strncmp(PROGRAM + sp.start, want, n) == 0;
}

static bool access_is(const IrAccess *a, int tensor, int rank, const int *index) {
    if (a->tensor != tensor || a->rank != rank) return false;
    for (int r = 0; r < rank; r++)
        if (a->index[r] != index[r]) return false;
    return true;
}

/* What later stages read of the source is recorded in the IR: the
 * statements as written, given-or-default, `n -> ?`, index holes and the
 * groups `fuse` lines wrote, each with its span. */
static void test_recorded(const IrMapping *fused, const IrMapping *searched) {
    const IrOp *op = fused->op;
    int im = ir_find_index(op, intern_cstr("m")), in = ir_find_index(op, intern_cstr("n"));
    int ik = ir_find_index(op, intern_cstr("k"));
    int tA = ir_find_tensor(op, intern_cstr("A")), tB = ir_find_tensor(op, intern_cstr("B"));
    int tC = ir_find_tensor(op, intern_cstr("C")), tmx = ir_find_tensor(op, intern_cstr("mx"));
    const IrStmt *c = stmt(op, "C"), *e = stmt(op, "e");
    CHECK(access_is(&c->target, tC, 2, (int[]){im, in}), "C's left side: C[m, n]");
    CHECK(c->read_count == 2 && access_is(&c->reads[0], tA, 2, (int[]){im, ik}) &&
              access_is(&c->reads[1], tB, 2, (int[]){ik, in}),
          "C reads A[m, k] then B[k, n]");
    CHECK(e->read_count == 2 && access_is(&e->reads[0], tC, 2, (int[]){im, in}) &&
              access_is(&e->reads[1], tmx, 1, (int[]){im}),
          "e reads C[m, n] then mx[m]");
    CHECK(c->text && strcmp(c->text, "C = A * B") == 0, "C's line: C = A * B");
    CHECK(e->text && strcmp(e->text, "e = exp(C - mx)") == 0, "e's line: e = exp(C - mx)");
    CHECK(span_reads(fused->repeat_span, "repeat 96;"), "repeat given, with its line");
    CHECK(!ir_given(fused->overlap_span) && !ir_given(fused->objective_span),
          "overlap and objective left at their defaults");
    CHECK(span_reads(searched->objective_span, "objective edp;"), "objective given");
    CHECK(fused->span.file >= 0 && strncmp(PROGRAM + fused->span.start, "mapping fused", 13) == 0 &&
              PROGRAM[fused->span.end - 1] == '}' && span_reads(fused->name_span, "fused"),
          "the mapping's span and its name's");
    CHECK(fused->fuse.written && fused->fuse.written[0], "a `fuse` line's group is written");

    const IrOp *sop = searched->op;
    int dc = searched->arch->dim_count, x = ir_find_dim(searched->arch, intern_cstr("x"));
    int sn = ir_find_index(sop, intern_cstr("n"));
    const IrStmt *mx = stmt(sop, "mx"), *sc = stmt(sop, "C"), *ss = stmt(sop, "s");
    CHECK(searched->spatial.split_only[mx->id * dc + x] == sn &&
              searched->spatial.split_only[ss->id * dc + x] == sn,
          "mx, s: `n -> ?` holes may take only n");
    CHECK(searched->spatial.split_only[sc->id * dc + x] == -1, "C: `? -> x` may take any index");
    CHECK(searched->tile.index_hole_count == 1 &&
              span_reads(searched->tile.index_hole_span[0], "? 64"),
          "the index hole `? 64` with its span");
    int g = searched->fuse.group[sc->id];
    CHECK(g >= 0 && searched->fuse.written[g], "`fuse C, mx at ?` is written");
}

static void test_instantiate(Program *p) {
    const Decl *decl = program_decl_at(p, p->mappings[0]->op->span);
    CHECK(decl && decl->kind == DK_OP, "the op's declaration from its span");
    ParamBinding b = {{intern_cstr("K"), SPAN_NONE, false}, NULL};
    Expr value = {.kind = EX_INT, .span = SPAN_NONE, .u.int_value = 64};
    b.value = &value;
    IrOp *op = ir_instantiate_op(p, decl, &b, 1, SPAN_NONE);
    CHECK(op != NULL, "ir_instantiate_op with K = 64");
    if (op) {
        CHECK(op->param_values[0] == 256 && op->param_values[1] == 512 &&
                  op->param_values[2] == 64,
              "defaults use earlier parameters");
        CHECK(op->indices[ir_find_index(op, intern_cstr("k"))].extent == 64,
              "k follows the binding");
    }
}

static void test_errors(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    Program *p = check_text(&arena, &sm, &diags,
                            "op f<M = 8> { in A[M] : fp16; out Y[M] : fp16; Y[m] = A[m] + B[m]; }\n"
                            "arch a { memory D { bandwidth 1 GB/s; } compute v vector { throughput 1 op/cycle; } }\n"
                            "mapping x for f on a { }\n");
    CHECK(diags.error_count == 2, "unknown tensor and cycles without clock");
    CHECK(p->mapping_count == 0 && p->arch_count == 0, "no IR for broken parts");
    arena_free_all(&arena);
}

/* The language server's unsaved buffers: a used file that is not on disk. */
static const char *overlay(void *ctx, const char *path, size_t *len) {
    (void)ctx;
    const char *suffix = "/unsaved/ops.cmt";
    size_t n = strlen(path), m = strlen(suffix);
    if (n < m || strcmp(path + n - m, suffix) != 0) return NULL;
    static const char text[] = "const WIDTH = 2 KiB / 16 B;\n";
    *len = sizeof text - 1;
    return text;
}

static void test_modules(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    sources_init(&sm, &arena);
    diags_init(&diags, &arena);
    const char *text = "use \"unsaved/ops.cmt\";\n"
                       "use lib.small_arch;\n"
                       "op o<N = WIDTH> { in X[N] : fp32; out Y[N] : fp32; Y[n] = X[n]; }\n";
    SourceFile *f = sources_add(&sm, "root.cmt", text, strlen(text));
    CheckOptions opts = {0};
    opts.overlay = overlay;
    setenv("CMT_PATH", "/nonexistent:tests/golden/sema_modules", 1);
    Program *p = check_program(&arena, &sm, &diags, f, &opts);
    unsetenv("CMT_PATH");
    CHECK(diags.count == 0, "overlay and CMT_PATH modules load");
    for (int i = 0; i < diags.count; i++)
        printf("  unexpected: %s %s\n", diags.items[i]->code, diags.items[i]->message);
    CHECK(p->module_count == 3, "root, the overlay file and the CMT_PATH file");
    CHECK(p->arch_count == 1 && p->archs[0]->name == intern_cstr("small"),
          "the used arch is built");
    arena_free_all(&arena);
}

static void test_constants(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    check_text(&arena, &sm, &diags,
               "const A = 9223372036854775807 + 0;\n"
               "const B = -A - 1;\n"
               "const C = B - 1;\n"
               "const D = 2 MiB / 512 KiB;\n"
               "op o<N = D * 3> { in X[N] : fp32; out Y[N] : fp32; Y[n] = X[n]; }\n");
    CHECK(diags.error_count == 1 && strcmp(diags.items[0]->code, "E0205") == 0,
          "only B - 1 overflows");
    arena_free_all(&arena);
}

/* A dragonfly's global links (given and by default) and a hybrid cube
 * mesh, as the IR holds them. */
static void test_topologies(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    Program *p = check_text(
        &arena, &sm, &diags,
        "arch fly { memory D { bandwidth 1 GB/s; }\n"
        "  cluster sys[g = 9, r = 4] dragonfly { link_bandwidth 50 GB/s; global_links 2;\n"
        "    global_bandwidth 25 GB/s; }\n"
        "  compute v vector { throughput 1 op/s; } }\n"
        "arch plain : fly { cluster sys[g = 5, r = 2] dragonfly { link_bandwidth 40 GB/s; } }\n"
        "arch dgx { memory D { bandwidth 1 GB/s; }\n"
        "  cluster gpus[g = 8] hybrid_cube_mesh { link_bandwidth 25 GB/s; }\n"
        "  compute v vector { throughput 1 op/s; } }\n");
    CHECK(diags.count == 0 && p->arch_count == 3, "dragonfly and hybrid cube mesh archs check");
    if (p->arch_count == 3) {
        const IrArch *fly = p->archs[0], *plain = p->archs[1], *dgx = p->archs[2];
        CHECK(fly->dim_count == 2 && fly->dims[0].topology == TOPO_DRAGONFLY &&
                  fly->dims[1].topology == TOPO_DRAGONFLY && fly->dims[0].size == 9,
              "a dragonfly's two dims, groups first");
        CHECK(fly->clusters[0].global_links == 2, "global_links 2");
        CHECK_NEAR(fly->clusters[0].global_bandwidth, 25e9, 1e-12, "global_bandwidth 25 GB/s");
        /* a redeclared cluster takes the parent's attributes it does not
           replace: global_links 2 stays, global_bandwidth too */
        CHECK(plain->clusters[0].global_links == 2 && plain->dims[0].size == 5,
              "an inherited dragonfly keeps its global links");
        CHECK(dgx->dims[0].topology == TOPO_HYBRID_CUBE_MESH && dgx->dims[0].size == 8,
              "a hybrid cube mesh of 8");
        CHECK(dgx->clusters[0].global_links == 1 &&
                  dgx->clusters[0].global_bandwidth == dgx->clusters[0].link_bandwidth,
              "global links default to 1 at the link bandwidth");
    }
    arena_free_all(&arena);
}

int main(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    Program *p = check_text(&arena, &sm, &diags, PROGRAM);
    CHECK(diags.count == 0, "the program checks clean");
    for (int i = 0; i < diags.count; i++)
        printf("  unexpected: %s %s\n", diags.items[i]->code, diags.items[i]->message);
    CHECK(p->mapping_count == 2 && p->arch_count == 2, "two mappings, two archs");
    if (p->mapping_count == 2) {
        test_op(p->mappings[0]);
        test_arch(p->mappings[0]->arch);
        test_fused(p->mappings[0]);
        test_searched(p->mappings[1]);
        test_recorded(p->mappings[0], p->mappings[1]);
        test_instantiate(p);
    }
    arena_free_all(&arena);
    test_errors();
    test_modules();
    test_constants();
    test_topologies();
    return unit_finish();
}
