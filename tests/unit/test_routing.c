/* test_routing.c — mixture-of-experts routing (docs/language.md 3.9,
 * docs/cost-model.md section 15): the slots a capacity gives, the work of
 * the router, the dispatch and the combine, and the exchanges their token
 * placement implies, every number worked by hand from the formulas.
 *
 * Four chips on a switch (alpha 1 us per step, 1 GB/s links: beta 1 ns/B)
 * each with its DRAM and an SRAM big enough for whole tensors (so every
 * statement runs in one tile, one execution of each exchange).  The layer
 * routes T = 64 tokens of D = 256 bf16 to K = 2 of E = 4 experts with
 * capacity 1: C = ceil(1 x 64 x 2 / 4) = 32 slots per expert.
 *
 * Switch formulas (cost-model.md section 4), p = 4:
 *   allgather / reduce_scatter: ceil(log2 p) alpha + (p-1)/p n beta
 *   alltoall:                   (p-1) alpha + (p-1)/p n beta
 * Rows: a token's row is 256 x 2 B = 512 B.
 *   all tokens:           64 x 512 B = 32 KiB
 *   one expert's slots:   32 x 512 B = 16 KiB
 *   allgather of tokens:  2 us + 0.75 x 32768 ns = 26.576 us
 *   alltoall of slots:    3 us + 0.75 x 16384 ns = 15.288 us */
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <math.h>
#include <string.h>

static const char *program_text =
    "arch quad {\n"
    "  clock 1 GHz;\n"
    "  cluster chips[c = 4] switch { link_bandwidth 1 GB/s; hop_latency 1 us; }\n"
    "  memory DRAM { capacity 1 GiB; bandwidth 1 TB/s; }\n"
    "  memory SRAM { capacity 64 MiB; bandwidth 4 TB/s; }\n"
    "  compute mac matrix { throughput 1024 MAC/cycle; }\n"
    "  compute simd vector { throughput 64 op/cycle; }\n"
    "}\n"
    "op moe<T = 64, D = 256, F = 128, E = 4, K = 2> {\n"
    "  in X[T, D] : bf16;\n"
    "  in Wg[D, E] : bf16;\n"
    "  in W1[E, D, F] : bf16;\n"
    "  in W2[E, F, D] : bf16;\n"
    "  route R[T, K] : fp32;\n"
    "  out Y[T, D] : bf16;\n"
    "  g[t, x] = X[t, d] * Wg[d, x];\n"
    "  R[t, j] = top(x) g[t, x];\n"
    "  Xe[x, s, d] = X[t, d] by R;\n"
    "  h[x, s, f] = Xe[x, s, d] * W1[x, d, f];\n"
    "  Ye[x, s, d] = h[x, s, f] * W2[x, f, d];\n"
    "  Y[t, d] = Ye[x, s, d] by R;\n"
    "}\n"
    "op wide<T = 64, D = 256, E = 4, K = 2> {\n"
    "  in X[T, D] : bf16;\n  in g[T, E] : bf16;\n"
    "  route R[T, K] : fp32 capacity 1.25;\n  out Xe[E, 40, D] : bf16;\n"
    "  R[t, j] = top(x) g[t, x];\n  Xe[x, s, d] = X[t, d] by R;\n"
    "}\n"
    /* expert parallelism: tokens and experts over the chips */
    "mapping ep for moe on quad {\n"
    "  spatial t -> c;\n  spatial for Xe, h, Ye, Y: x -> c;\n"
    "}\n"
    /* tensor parallelism: the experts' hidden size over the chips, the
     * dispatch and the combine whole on every chip */
    "mapping gathered for moe on quad {\n"
    "  spatial t -> c;\n  spatial for h, Ye: f -> c;\n"
    "}\n"
    /* the same with the slots tiled at SRAM: 4 experts x 4 tiles of 8 */
    "mapping gathered_tiled for moe on quad {\n"
    "  spatial t -> c;\n  spatial for h, Ye: f -> c;\n  tile SRAM: x 1, s 8;\n"
    "}\n"
    /* the dispatch and the combine split a row's columns */
    "mapping columns for moe on quad {\n"
    "  spatial t -> c;\n  spatial for h, Ye: f -> c;\n  spatial for Xe, Y: d -> c;\n"
    "}\n"
    "mapping one for wide on quad { }\n";

static Program *program;
static Arena arena;

static const SchedNode *coll_of(const Schedule *s, const char *tensor, CollKind kind) {
    for (int i = 0; i < s->node_count; i++) {
        const SchedNode *n = &s->nodes[i];
        if (n->kind == SN_COLLECTIVE && n->coll == kind && n->tensor >= 0 &&
            strcmp(s->op->tensors[n->tensor].name, tensor) == 0)
            return n;
    }
    return NULL;
}

static int collectives_on(const Schedule *s, const char *tensor) {
    int n = 0;
    for (int i = 0; i < s->node_count; i++)
        if (s->nodes[i].kind == SN_COLLECTIVE && s->nodes[i].tensor >= 0 &&
            strcmp(s->op->tensors[s->nodes[i].tensor].name, tensor) == 0)
            n++;
    return n;
}

static bool near(double a, double b) {
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-15;
}

int main(void) {
    SourceManager sm;
    DiagSink diags;
    program = unit_load_named(&arena, &sm, &diags, "routing.cmt", program_text);
    CHECK(program && diags.error_count == 0, "routing program checks");
    if (!program || diags.error_count) return unit_finish();

    const Schedule *s = unit_lowered(&arena, program, "ep");
    CHECK(s != NULL, "ep lowers");
    if (!s) return unit_finish();
    const IrOp *op = s->op;
    CHECK(op->route_count == 1 && op->routes[0].slots == 32 && op->routes[0].capacity == 1,
          "capacity 1: C = 64 x 2 / 4 = 32 slots");
    int router = ir_find_stmt(op, intern_cstr("R")), xe = ir_find_stmt(op, intern_cstr("Xe")),
        y = ir_find_stmt(op, intern_cstr("Y"));
    CHECK(op->stmts[router].routing == RT_ROUTER && op->stmts[xe].routing == RT_DISPATCH &&
              op->stmts[y].routing == RT_COMBINE,
          "router, dispatch and combine recognised");
    /* work: the router T K E = 512 comparisons over the whole op; the
     * dispatch E C D = 32768 copies; the combine 2 E C D (weight, add) */
    CHECK(near(s->stmts[router].total_work, 64.0 * 2 * 4), "router: T K E = 512 ops");
    CHECK(near(s->stmts[xe].total_work, 4.0 * 32 * 256), "dispatch: E C D = 32768 copies");
    CHECK(near(s->stmts[y].total_work, 2.0 * 4 * 32 * 256), "combine: 2 E C D = 65536 ops");
    /* the route's bytes: a pick is its fp32 weight and an int32 expert */
    const IrTensor *R = &op->tensors[op->routes[0].tensor];
    CHECK(sched_elem_bytes(R) == 8, "a pick is 4 + 4 bytes");

    /* EP: the dispatch splits the experts over the chips where the
     * tokens lie: the rows of one expert's 32 slots, 16 KiB, by alltoall
     * (15.288 us) rather than every token gathered (26.576 us) */
    const SchedNode *a2a = coll_of(s, "X.R", CK_ALLTOALL);
    CHECK(a2a && near(a2a->bytes, 16384) && a2a->count == 1, "ep dispatch: alltoall of 16 KiB");
    CHECK(a2a && near(a2a->latency_s, 15.288e-6), "ep dispatch: 3 us + 12.288 us");
    CHECK(collectives_on(s, "X.R") == 1, "ep dispatch: nothing else");
    const SchedNode *back = coll_of(s, "Y.R", CK_ALLTOALL);
    CHECK(back && near(back->bytes, 16384) && near(back->latency_s, 15.288e-6),
          "ep combine: each row back to its token, alltoall of 16 KiB");
    CHECK(collectives_on(s, "Y.R") == 1, "ep combine: no reduction (Ye is not partial)");

    /* TP: the dispatch is whole on every chip, which needs every token:
     * allgather of 32 KiB, 26.576 us.  Ye = h * W2 reduces f, split over
     * the chips: partial rows, read only by the combine, which is whole:
     * Ye (64 KiB) is not reduced but the tokens' rows are, once the
     * picks are summed: reduce_scatter of all 64 tokens, 32 KiB, 2 us +
     * 24.576 us */
    s = unit_lowered(&arena, program, "gathered");
    CHECK(s != NULL, "gathered lowers");
    if (s) {
        const SchedNode *ag = coll_of(s, "X.R", CK_ALLGATHER);
        CHECK(ag && near(ag->bytes, 32768) && near(ag->latency_s, 26.576e-6),
              "tp dispatch: allgather of every token, 32 KiB, 26.576 us");
        CHECK(collectives_on(s, "X.R") == 1, "tp dispatch: one exchange");
        CHECK(collectives_on(s, "Ye") == 0, "tp: Ye's partial sums are not reduced");
        const SchedNode *rs = coll_of(s, "Y.R", CK_REDUCE_SCATTER);
        CHECK(rs && near(rs->bytes, 32768) && near(rs->latency_s, 26.576e-6),
              "tp combine: reduce_scatter of the tokens' rows, 32 KiB, 26.576 us");
        CHECK(rs && rs->reduce_op == RO_SUM, "the combine sums");
    }
    /* slots tiled: the dispatch's allgather runs per slot tile, 16 of
     * 2 KiB (32 KiB in all); the combine's reduce_scatter waits for the
     * slot loops (a token's picks lie anywhere in them): once, 32 KiB */
    s = unit_lowered(&arena, program, "gathered_tiled");
    CHECK(s != NULL, "gathered_tiled lowers");
    if (s) {
        const SchedNode *ag = coll_of(s, "X.R", CK_ALLGATHER);
        CHECK(ag && ag->count == 16 && near(ag->bytes, 2048), "tiled dispatch: 16 x 2 KiB");
        const SchedNode *rs = coll_of(s, "Y.R", CK_REDUCE_SCATTER);
        CHECK(rs && rs->count == 1 && near(rs->bytes, 32768),
              "tiled combine: one reduce_scatter of 32 KiB after the slot loops");
    }
    /* the dispatch splits a row's columns d over the chips the tokens lie
     * on: each chip needs its 64 columns of every token, 64 x 64 x 2 B =
     * 8 KiB gathered (2 us + 6.144 us = 8.144 us), less than the rows of
     * its slots' columns, 4 x 32 x 64 x 2 B = 16 KiB (alltoall 15.288
     * us) */
    s = unit_lowered(&arena, program, "columns");
    CHECK(s != NULL, "columns lowers");
    if (s) {
        const SchedNode *ag = coll_of(s, "X.R", CK_ALLGATHER);
        CHECK(ag && near(ag->bytes, 8192) && near(ag->latency_s, 8.144e-6),
              "columns: allgather of 8 KiB, 8.144 us");
        CHECK(collectives_on(s, "X.R") == 1, "columns: one exchange");
        /* the combine splits d where Ye is partial: Ye is reduced the
         * ordinary way, and the combine adds complete rows */
        CHECK(coll_of(s, "Ye", CK_REDUCE_SCATTER) && !coll_of(s, "Y.R", CK_REDUCE_SCATTER),
              "columns: Ye reduced before the combine, not after");
    }
    s = unit_lowered(&arena, program, "one");
    CHECK(s != NULL, "one lowers");
    if (s) {
        CHECK(collectives_on(s, "X.R") == 0, "tokens on every chip: no exchange");
        CHECK(s->op->routes[0].slots == 40, "capacity 1.25: C = ceil(1.25 x 64 x 2 / 4) = 40");
    }
    return unit_finish();
}
