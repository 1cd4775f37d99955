/* test_group_tiles.c — per-statement tiles and orders (language.md 5.2,
 * 5.3): what `tile L for S1, S2: ...` and `order L for ...` put in the IR
 * (each statement's entries and the line that gave them), what the
 * lowering makes of them (each statement's tiles and trips, each group's
 * loop nest), and the completed mapping's text, which must compile back
 * to the same schedule. */
#include "backend/emit.h"
#include "passes/passes.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <stdlib.h>
#include <string.h>

/* One chip of 2 cores over n, L2 then L1.  M = 64, N = 32, K = 48:
 * each core holds n 32 / 2 = 16 columns. */
static const char *program_text =
    "arch two {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 32 B/cycle; energy 10 pJ/B; }\n"
    "  cluster cores[x = 2] ring { link_bandwidth 16 B/cycle; hop_latency 2 cycles; }\n"
    "  memory L2 { capacity 256 KiB; bandwidth 256 B/cycle; energy 1 pJ/B; }\n"
    "  memory L1 { capacity 64 KiB; bandwidth 512 B/cycle; energy 0.1 pJ/B; }\n"
    "  compute mac matrix { throughput 256 MAC/cycle; energy 0.2 pJ/MAC; }\n"
    "  compute simd vector { throughput 16 op/cycle; energy 0.5 pJ/op; }\n"
    "}\n"
    "op gemm_norm<M = 64, N = 32, K = 48> {\n"
    "  in A[M, K] : fp16;\n  in B[K, N] : fp16;\n  out D[M, N] : fp16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  mu[m] = mean(n) C[m, n];\n"
    "  D[m, n] = C[m, n] - mu[m];\n"
    "}\n"
    "mapping groups for gemm_norm on two {\n"
    "  spatial n -> x;\n"
    "  tile L2: m 8;\n"
    "  tile L2 for C: m 32, k 16;\n"
    "  order L2 for C: k, m;\n"
    "  tile L1: m 4;\n"
    "  fuse mu, D at L2;\n"
    "}\n"
    "mapping searched for gemm_norm on two {\n"
    "  spatial n -> x;\n"
    "  tile L2: m ?;\n"
    "  tile L2 for C: m ?, k ?;\n"
    "  fuse mu, D at L2;\n"
    "}\n";

static Program *program;
static Arena arena;

static int stmt_of(const IrOp *op, const char *name) {
    return ir_find_stmt(op, intern_cstr(name));
}

static int index_of(const IrOp *op, const char *name) {
    return ir_find_index(op, intern_cstr(name));
}

/* The group's loop at `level` over `index`, or NULL. */
static const SchedLoop *loop_of(const SchedGroup *g, int level, int index) {
    for (int k = 0; k < g->loop_count; k++)
        if (g->loops[k].level == level && g->loops[k].index == index) return &g->loops[k];
    return NULL;
}

int main(void) {
    SourceManager sm;
    DiagSink diags;
    program = unit_load_named(&arena, &sm, &diags, "groups.cmt", program_text);
    if (diags.error_count) diags_render_text(stdout, &sm, &diags, (DiagRenderOptions){false});
    CHECK(program && diags.error_count == 0, "group tiles program checks");
    if (!program || diags.error_count) return unit_finish();

    const IrMapping *m = unit_mapping(program, "groups");
    const IrOp *op = m->op;
    int C = stmt_of(op, "C"), mu = stmt_of(op, "mu"), D = stmt_of(op, "D");
    int im = index_of(op, "m"), in = index_of(op, "n"), ik = index_of(op, "k");
    int L2 = ir_find_level(m->arch, intern_cstr("L2")), L1 = ir_find_level(m->arch, intern_cstr("L1"));

    /* the IR: C's entries from the `for` line (line 1), the others' from
     * the mapping-wide line (line 0); L1's one line gives everyone m 4 */
    CHECK(m->tile.line_count == 1 && m->order.line_count == 1, "one tile and one order for line");
    CHECK(m->tile.size[ir_tile_slot(m, C, L2, im)] == 32 &&
              m->tile.from[ir_tile_slot(m, C, L2, im)] == 1,
          "IR: C takes m 32 at L2 from its for line");
    CHECK(m->tile.size[ir_tile_slot(m, C, L2, ik)] == 16, "IR: C takes k 16 at L2");
    CHECK(m->tile.size[ir_tile_slot(m, mu, L2, im)] == 8 &&
              m->tile.from[ir_tile_slot(m, mu, L2, im)] == 0 &&
              m->tile.size[ir_tile_slot(m, D, L2, im)] == 8,
          "IR: mu and D keep the mapping-wide m 8");
    CHECK(m->tile.size[ir_tile_slot(m, mu, L2, ik)] == IR_UNSET, "IR: no k tile for mu");
    CHECK(m->tile.size[ir_tile_slot(m, C, L1, im)] == 4 &&
              m->tile.size[ir_tile_slot(m, D, L1, im)] == 4,
          "IR: L1's mapping-wide m 4 for every statement");
    int oc = ir_order_slot(m, C, L2), od = ir_order_slot(m, D, L2);
    CHECK(m->order.length[oc] == 2 && m->order.perm[oc * op->index_count] == ik &&
              m->order.from[oc] == 1,
          "IR: C's order at L2 is k, m");
    CHECK(m->order.length[od] == 0 && m->order.from[od] == 0, "IR: D keeps the default order");
    CHECK(ir_fusable(m, mu, D) && !ir_fusable(m, C, mu), "mu, D may share a nest; C, mu not");

    /* the lowering.  C, n split over x: 16 columns per core.
     *   L2: m 32 of 64 -> 64 / 32 = 2 trips; k 16 of 48 -> 3 trips; n 16
     *       (the whole share) -> 1 trip
     *   L1: m 4 of 32 -> 8 trips; k the whole 16 -> 1 trip
     * mu and D: L2 m 8 of 64 -> 8 trips; L1 m 4 of 8 -> 2 trips. */
    const Schedule *s = unit_lowered(&arena, program, "groups");
    CHECK(s != NULL, "groups lowers");
    if (!s) return unit_finish();
    const SchedStmt *sc = &s->stmts[C], *smu = &s->stmts[mu], *sd = &s->stmts[D];
    CHECK(sc->tile[sched_li(s, L2, im)] == 32 && sc->trips[sched_li(s, L2, im)] == 2,
          "C: m 32 at L2, 2 trips");
    CHECK(sc->tile[sched_li(s, L2, ik)] == 16 && sc->trips[sched_li(s, L2, ik)] == 3,
          "C: k 16 at L2, 3 trips");
    CHECK(sc->tile[sched_li(s, L2, in)] == 16 && sc->trips[sched_li(s, L2, in)] == 1,
          "C: n 16 per core at L2, 1 trip");
    CHECK(sc->tile[sched_li(s, L1, im)] == 4 && sc->trips[sched_li(s, L1, im)] == 8,
          "C: m 4 at L1, 32 / 4 = 8 trips");
    CHECK(smu->tile[sched_li(s, L2, im)] == 8 && smu->trips[sched_li(s, L2, im)] == 8,
          "mu: m 8 at L2, 64 / 8 = 8 trips");
    CHECK(sd->tile[sched_li(s, L1, im)] == 4 && sd->trips[sched_li(s, L1, im)] == 2,
          "D: m 4 at L1, 8 / 4 = 2 trips");
    CHECK(s->group_count == 2 && sc->group != smu->group && smu->group == sd->group,
          "two groups: C, then mu with D");
    /* C's group: k outside m at L2 (its order), 3 x 2 trips */
    const SchedGroup *gc = &s->groups[sc->group], *gn = &s->groups[smu->group];
    const SchedLoop *lk = loop_of(gc, L2, ik), *lm = loop_of(gc, L2, im);
    CHECK(lk && lm && lk < lm && lk->trips == 3 && lm->trips == 2 && lm->step == 32,
          "C's nest at L2: k (3 trips) outside m (2 trips, step 32)");
    CHECK(gc->order_len[L2] >= 2 && gc->order[L2 * op->index_count] == ik, "C's group order k first");
    const SchedLoop *nm = loop_of(gn, L2, im), *nm1 = loop_of(gn, L1, im);
    CHECK(nm && nm->trips == 8 && nm->step == 8 && nm1 && nm1->trips == 2 && nm1->step == 4,
          "the norm's nest: m 8 trips of 8 at L2, 2 of 4 at L1");
    CHECK(loop_of(gn, L2, ik) == NULL, "the norm's nest has no k loop");

    /* the completed text prints the for lines, and compiles back to the
     * same schedule */
    const char *text = mapping_to_cmt(&arena, m);
    CHECK(text && strstr(text, "tile L2: m 8; tile L2 for C: m 32, k 16; tile L1: m 4;") &&
              strstr(text, "order L2 for C: k, m;"),
          "mapping text keeps the for lines");
    EvalResult e0, e1;
    evaluate_mapping(m, NULL, &e0);
    char *again = arena_printf(&arena,
                               "%.*s\nmapping again for gemm_norm on two { %s }\n",
                               (int)(strstr(program_text, "mapping groups") - program_text),
                               program_text, text);
    SourceManager sm2;
    DiagSink d2;
    Program *p2 = unit_load_named(&arena, &sm2, &d2, "again.cmt", again);
    CHECK(p2 && d2.error_count == 0, "the printed mapping checks");
    if (p2 && d2.error_count == 0) {
        evaluate_mapping(unit_mapping(p2, "again"), NULL, &e1);
        CHECK(e0.cost.latency_s == e1.cost.latency_s && e0.cost.energy_j == e1.cost.energy_j,
              "the printed mapping has the same latency and energy");
    }

    /* the optimizer: the two lines' holes are two decisions; the completed
     * mapping prints both lines */
    const IrMapping *h = unit_mapping(program, "searched");
    CHECK(h->hole_count == 3, "searched: three holes (m on each line, k on C's)");
    OptimizeOptions co;
    memset(&co, 0, sizeof co);
    SolverReport rep;
    const IrMapping *done = complete_mapping(&arena, program, h, &co, &rep);
    CHECK(done && done->hole_count == 0, "searched completes");
    const char *ct = done ? mapping_to_cmt(&arena, done) : NULL;
    CHECK(ct && strstr(ct, "tile L2: m ") && strstr(ct, "tile L2 for C: m "),
          "searched: the completion prints both lines");
    return unit_finish();
}
