/* test_lowering.c — which nodes the lowering inserts, and why: the table
 * of language.md section 6 case by case (allreduce for readers in the
 * group, reduce_scatter or reduce when written out, broadcast of operands
 * that do not depend on the split index, alltoall/allgather when a reader
 * splits differently, collectives over dims of nested clusters), boundary
 * nodes between groups, capacity excess at the tile line, holes. */
#include "backend/emit.h"
#include "passes/passes.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <stdlib.h>
#include <string.h>

static const char *program_text =
    "arch chip {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 32 B/cycle; energy 10 pJ/B; }\n"
    "  cluster chips[x = 2, y = 2] mesh { link_bandwidth 16 B/cycle; hop_latency 5 cycles; "
    "link_energy 1 pJ/B; }\n"
    "  memory GLB { capacity 256 KiB; bandwidth 256 B/cycle; energy 1 pJ/B; }\n"
    "  cluster cores[c = 4] ring { link_bandwidth 32 B/cycle; hop_latency 2 cycles; link_energy "
    "0.5 pJ/B; }\n"
    "  memory BUF { capacity 64 KiB; bandwidth 512 B/cycle; energy 0.1 pJ/B; }\n"
    "  compute mac matrix { throughput 256 MAC/cycle; energy 0.2 pJ/MAC; }\n"
    "  compute simd vector { throughput 16 op/cycle; energy 0.5 pJ/op; cost exp 4; }\n"
    "}\n"
    "op gemm_softmax<M = 64, N = 256, K = 64> {\n"
    "  in A[M, K] : int8;\n  in B[K, N] : int8;\n  out D[M, N] : int8;\n  var C : fp16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  mx[m] = max(n) C[m, n];\n"
    "  e[m, n] = exp(C[m, n] - mx[m]);\n"
    "  s[m] = sum(n) e[m, n];\n"
    "  D[m, n] = e[m, n] / s[m];\n"
    "}\n"
    "mapping fused for gemm_softmax on chip {\n"
    "  spatial n -> (x, y);\n  tile GLB: m 16;\n  fuse C, mx, e, s, D at GLB;\n}\n"
    "mapping unfused for gemm_softmax on chip {\n"
    "  spatial n -> (x, y);\n  tile GLB: m 16;\n}\n"
    "mapping nested for gemm_softmax on chip {\n"
    "  spatial n -> (x, c);\n  tile GLB: m 16;\n  fuse C, mx, e, s, D at BUF;\n}\n"
    "mapping gather for gemm_softmax on chip {\n"
    "  spatial n -> (x, y);\n  spatial for mx, e, s, D: m -> (x, y);\n  tile GLB: m 16;\n"
    "  fuse C, mx, e, s, D at GLB;\n}\n"
    "mapping split_k for gemm_softmax on chip {\n"
    "  spatial k -> x;\n  tile GLB: m 16;\n}\n"
    "mapping too_big for gemm_softmax on chip {\n"
    "  tile GLB: m 64;\n  fuse C, mx, e, s, D at GLB;\n}\n"
    "mapping n_tiled for gemm_softmax on chip {\n"
    "  spatial n -> (x, y);\n  tile GLB: m 16, n 32;\n  fuse C, mx, e, s, D at GLB;\n}\n"
    "mapping nested_glb for gemm_softmax on chip {\n"
    "  spatial n -> (x, c);\n  tile GLB: m 16;\n  fuse C, mx, e, s, D at GLB;\n}\n"
    "mapping n_outer for gemm_softmax on chip {\n"
    "  spatial n -> (x, y);\n  tile GLB: m 16, n 32;\n  order GLB: n, m;\n"
    "  fuse C, mx, e, s, D at GLB;\n}\n"
    "mapping shared_links for gemm_softmax on chip {\n"
    "  spatial n -> x, m -> c;\n  tile GLB: m 16;\n  fuse C, mx, e, s, D at GLB;\n}\n"
    "mapping holes for gemm_softmax on chip {\n"
    "  spatial ?;\n}\n";

static Program *program;
static Arena arena;

static const Schedule *lowered(const char *name) {
    return unit_lowered(&arena, program, name);
}

/* The first collective of `kind` on `tensor` (any kind when kind < 0). */
static const SchedNode *coll(const Schedule *s, int kind, const char *tensor) {
    for (int i = 0; s && i < s->node_count; i++) {
        const SchedNode *n = &s->nodes[i];
        if (n->kind == SN_COLLECTIVE && (kind < 0 || (int)n->coll == kind) &&
            strcmp(s->op->tensors[n->tensor].name, tensor) == 0)
            return n;
    }
    return NULL;
}

static int count_kind(const Schedule *s, SchedKind kind) {
    int c = 0;
    for (int i = 0; s && i < s->node_count; i++) c += s->nodes[i].kind == kind;
    return c;
}

static bool dims_are(const Schedule *s, const SchedNode *n, const char *a, const char *b) {
    if (!n) return false;
    if (n->dim_count != (b ? 2 : 1)) return false;
    if (strcmp(s->arch->dims[n->dims[0]].name, a) != 0) return false;
    return !b || strcmp(s->arch->dims[n->dims[1]].name, b) == 0;
}

int main(void) {
    SourceManager sm;
    DiagSink diags;
    program = unit_load_named(&arena, &sm, &diags, "lowering.cmt", program_text);
    const SourceFile *f = sm.count > 0 ? sm.files[0] : NULL;
    if (diags.error_count) diags_render_text(stdout, &sm, &diags, (DiagRenderOptions){false});
    CHECK(program && diags.error_count == 0, "lowering program checks");
    if (!program || diags.error_count) return unit_finish();

    /* fused, n over (x, y): mx and s are partial on every instance and the
       next statements of the group need them whole: allreduce(max), (sum) */
    const Schedule *s = lowered("fused");
    const SchedNode *ar_max = coll(s, CK_ALLREDUCE, "mx");
    CHECK(ar_max && ar_max->reduce_op == RO_MAX, "fused: allreduce(max) of mx");
    CHECK(dims_are(s, ar_max, "x", "y"), "fused: allreduce of mx over (x, y)");
    CHECK(ar_max && ar_max->reason &&
              strstr(ar_max->reason, "n is split over (x,y) and mx reduces n"),
          "fused: the allreduce says why");
    const SchedNode *ar_sum = coll(s, CK_ALLREDUCE, "s");
    CHECK(ar_sum && ar_sum->reduce_op == RO_SUM, "fused: allreduce(sum) of s");
    /* mx has no `var` line: the widest input type, int8.  mx[16] per m
       tile: 16 B, 64 / 16 = 4 m tiles */
    CHECK(ar_max && ar_max->bytes == 16 && ar_max->count == 4,
          "fused: allreduce 16 B per m tile, 4 tiles");
    /* A does not depend on n: broadcast over (x, y) as it enters GLB */
    const SchedNode *bc = coll(s, CK_BROADCAST, "A");
    CHECK(dims_are(s, bc, "x", "y"), "fused: A broadcast over (x, y)");
    /* B is split by n over (x, y) but C is not split over the cores c:
       every core of a chip needs the chip's B tile */
    CHECK(dims_are(s, coll(s, CK_BROADCAST, "B"), "c", NULL), "fused: B broadcast over c only");
    CHECK(count_kind(s, SN_BOUNDARY) == 0, "fused: one group, no boundary");
    CHECK(s->group_count == 1, "fused: one group");

    /* unfused: every statement its own group; tensors cross through DRAM */
    const Schedule *u = lowered("unfused");
    CHECK(u && u->group_count == 5, "unfused: five groups");
    /* C, mx, e, s cross to later groups: four boundary nodes */
    CHECK(count_kind(u, SN_BOUNDARY) == 4, "unfused: four boundary nodes");
    /* mx is written out split: reduce_scatter(max) along m (64 divides by 4) */
    const SchedNode *rs = coll(u, CK_REDUCE_SCATTER, "mx");
    CHECK(rs && rs->reduce_op == RO_MAX, "unfused: reduce_scatter(max) of mx");
    /* DRAM is shared by the chips: readers of mx load what they need, so no
       allgather between groups */
    CHECK(coll(u, CK_ALLGATHER, "mx") == NULL, "unfused: no allgather through shared DRAM");
    /* fusing removes DRAM traffic */
    EvalResult ef, eu;
    evaluate_mapping(program->mappings[0], NULL, &ef);
    evaluate_mapping(program->mappings[1], NULL, &eu);
    CHECK(ef.cost.latency_s < eu.cost.latency_s, "fused is faster than unfused here");

    /* nested clusters: n over x (chips) and c (cores): one allreduce over
       both dims, outer dim first */
    const Schedule *ne = lowered("nested");
    CHECK(dims_are(ne, coll(ne, CK_ALLREDUCE, "mx"), "x", "c"), "nested: allreduce over (x, c)");

    /* fused at GLB, mx and s go BUF->GLB->BUF between their statements; the
       load GLB->BUF crosses c.  The allreduce over (x, c) already left mx
       and s on every core, so they need no broadcast over c afterwards;
       A (an input, independent of n) still does. */
    const Schedule *ng = lowered("nested_glb");
    CHECK(dims_are(ng, coll(ng, CK_ALLREDUCE, "mx"), "x", "c"),
          "nested_glb: allreduce of mx over (x, c)");
    CHECK(dims_are(ng, coll(ng, CK_ALLREDUCE, "s"), "x", "c"),
          "nested_glb: allreduce of s over (x, c)");
    CHECK(ng && coll(ng, CK_BROADCAST, "mx") == NULL,
          "nested_glb: no broadcast of the all-reduced mx");
    CHECK(ng && coll(ng, CK_BROADCAST, "s") == NULL,
          "nested_glb: no broadcast of the all-reduced s");
    bool a_over_c = false;
    for (int i = 0; ng && i < ng->node_count; i++)
        a_over_c |= ng->nodes[i].kind == SN_COLLECTIVE && ng->nodes[i].coll == CK_BROADCAST &&
                    strcmp(ng->op->tensors[ng->nodes[i].tensor].name, "A") == 0 &&
                    dims_are(ng, &ng->nodes[i], "c", NULL);
    CHECK(a_over_c, "nested_glb: the input A is still broadcast over c");

    /* a reader that splits m where the producer split n: alltoall over the
       dims outside the fusion level */
    const Schedule *g = lowered("gather");
    const SchedNode *a2a = coll(g, CK_ALLTOALL, "C");
    CHECK(a2a != NULL, "gather: alltoall of C");
    CHECK(dims_are(g, a2a, "x", "y"), "gather: alltoall over (x, y)");
    CHECK(coll(g, CK_ALLREDUCE, "mx") == NULL, "gather: rows are whole, no allreduce");
    int a2a_count = 0;
    for (int i = 0; g && i < g->node_count; i++)
        a2a_count += g->nodes[i].kind == SN_COLLECTIVE && g->nodes[i].coll == CK_ALLTOALL;
    CHECK(a2a_count == 1, "gather: C moves once for both readers");

    /* k split over x: C is partial; written out to DRAM for mx (own
       group): reduce_scatter(sum) over x */
    const Schedule *k = lowered("split_k");
    const SchedNode *rk = coll(k, -1, "C");
    CHECK(rk && (rk->coll == CK_REDUCE_SCATTER || rk->coll == CK_REDUCE) && rk->reduce_op == RO_SUM,
          "split k: C reduced over x");
    CHECK(dims_are(k, rk, "x", NULL), "split k: over x only");

    /* capacity: m 64 at GLB with the whole row: C 64*256*2 = 32 KiB, e the
       same, A 4 KiB, B 16 KiB, ... BUF (64 KiB) must hold the core's share */
    const Schedule *big = lowered("too_big");
    CHECK(big && big->excess_count > 0, "too_big: capacity excess found");
    DiagSink cap;
    diags_init(&cap, &arena);
    if (big) report_capacity(big, &cap);
    CHECK(cap.count > 0 && strcmp(cap.items[0]->code, "E0350") == 0, "too_big: E0350");
    CHECK(cap.count > 0 && strstr(cap.items[0]->message, " over") &&
              strstr(cap.items[0]->message, "C "),
          "too_big: message has footprint by tensor and excess");
    CHECK(cap.count > 0 && cap.items[0]->span.file == f->id, "too_big: points into the file");
    if (cap.count > 0) {
        uint32_t line, col;
        source_line_col(f, cap.items[0]->span.start, &line, &col);
        const char *lt = source_line_text(f, line, &(size_t){0});
        CHECK(strncmp(lt, "  tile GLB: m 64", 16) == 0 || strncmp(lt, "  fuse", 6) == 0,
              "too_big: at the tile or fuse line");
    }
    /* the capacity check stops after pass_tiles: the same excesses, and
       nothing of the later passes (no nodes, no latency) */
    if (big) {
        const LowerOptions through_tiles = {.stop_after = "tiles"};
        const Schedule *early = lower_mapping(&arena, big->m, false, &through_tiles);
        bool same = early->excess_count == big->excess_count;
        for (int e = 0; same && e < big->excess_count; e++)
            same = early->excess[e].need == big->excess[e].need &&
                   early->excess[e].memory == big->excess[e].memory &&
                   early->excess[e].group == big->excess[e].group;
        CHECK(same, "too_big: lowering through tiles finds the same excesses");
        CHECK(early->node_count == 0 && early->cost.latency_s == 0 && big->cost.latency_s > 0,
              "too_big: lowering through tiles runs none of the later passes");
    }

    /* n tiled at GLB in a fused softmax: e = exp(C - mx) needs the max over
       the whole row, so C waits in GLB for all of n: 16 rows x 64 (n per
       chip) x 2 B = 2048 B, not the 16 x 32 tile (1024 B); e the same for
       D = e / s */
    const Schedule *nt = lowered("n_tiled");
    double c_glb = 0, a_glb = 0;
    for (int k2 = 0; nt && k2 < nt->groups[0].footprint_count; k2++) {
        const Footprint *fp = &nt->groups[0].footprints[k2];
        if (nt->arch->memories[fp->memory].level != 1) continue;
        /* the live tiles, without double buffering's spare (test_buffers.c) */
        double held = fp->bytes * fp->live_tiles / (fp->live_tiles + fp->spare_tiles);
        if (strcmp(nt->op->tensors[fp->tensor].name, "C") == 0) c_glb = held;
        if (strcmp(nt->op->tensors[fp->tensor].name, "A") == 0) a_glb = held;
    }
    CHECK_NEAR(c_glb, 2048, 1e-12, "n tiled: C held for the whole row at GLB (16 x 64 x 2 B)");
    /* A is an op input: its tile is just the tile, 16 x 64 x 1 B */
    CHECK_NEAR(a_glb, 1024, 1e-12, "n tiled: A keeps its tile footprint");

    /* n tiled inside m (the default order m, n): mx of an m tile is whole
       only once the n loop has run, so its allreduce sits in the m loop
       (depth 0) after the n loop, once per m tile: 64 / 16 = 4 times */
    const SchedNode *nt_ar = coll(nt, CK_ALLREDUCE, "mx");
    CHECK(nt_ar && nt_ar->depth == 0 && nt_ar->after_inner,
          "n tiled: allreduce of mx in the m loop, after the n loop");
    CHECK(nt_ar && nt_ar->count == 4 && nt_ar->bytes == 16, "n tiled: allreduce 16 B, 4 times");

    /* order GLB: n, m puts the n loop outside: mx is whole only after the
       whole nest, so one allreduce of all 64 rows (64 B) outside every
       loop.  2x2 mesh, 16 B/cycle links, 5-cycle hops at 1 GHz (as the
       2x2 mesh case of test_collectives): RS on x 5 + 1/2*64/16 = 7,
       AR on y of 32 B 2*(5 + 1/2*32/16) = 12, AG on x 7: 26 ns (four
       allreduces of 16 B would take 4 * 21.5 = 86 ns) */
    const Schedule *no = lowered("n_outer");
    const SchedNode *no_ar = coll(no, CK_ALLREDUCE, "mx");
    CHECK(no_ar && no_ar->depth == -1 && no_ar->after_inner,
          "n outer: allreduce of mx after the whole loop nest");
    CHECK(no_ar && no_ar->count == 1 && no_ar->bytes == 64, "n outer: one allreduce of 64 B");
    CHECK_NEAR(no_ar ? no_ar->latency_s : 0, 26e-9, 1e-9, "n outer: allreduce takes 26 ns");

    /* shared links (cost-model.md section 4): n over x, m over the 4 cores
       of each chip.  mx is partial over x, and each core holds other rows
       of it (4 of the GLB tile's 16, 4 B), so the 4 cores' allreduces run
       at once through their chip's x links: beta x 4.  Per call RS
       5 + 1/2*(4*4)/16 = 5.5 ns, AG 5.5 ns: 11 ns, once per GLB tile of m
       (64 / 16 = 4): 44 ns (alone, 4 * 10.25 = 41 ns) */
    const Schedule *sh = lowered("shared_links");
    const SchedNode *sh_ar = coll(sh, CK_ALLREDUCE, "mx");
    CHECK(sh_ar && sh_ar->count == 4 && sh_ar->bytes == 4, "shared links: 4 allreduces of 4 B");
    CHECK_NEAR(sh_ar ? sh_ar->latency_s : 0, 44e-9, 1e-12,
               "shared links: the 4 cores' calls share the chip's links, 44 ns");
    /* the nested mapping's allreduce spans the cores' dim too: no copies
       run beside it, nothing shared (its time above is unchanged) */

    /* holes: the evaluation API refuses */
    EvalResult eh;
    const IrMapping *hm = NULL;
    for (int i = 0; i < program->mapping_count; i++)
        if (strcmp(program->mappings[i]->name, "holes") == 0) hm = program->mappings[i];
    CHECK(hm && evaluate_mapping(hm, NULL, &eh) == EVAL_INCOMPLETE,
          "holes: evaluate says incomplete");

    /* the complete mapping printed back in .cmt syntax means the same:
       checking it again gives the same latency and energy */
    const char *round_trip[] = {"fused", "unfused", "nested", "gather", "split_k"};
    for (int k = 0; k < 5; k++) {
        const IrMapping *orig = NULL;
        for (int i = 0; i < program->mapping_count; i++)
            if (strcmp(program->mappings[i]->name, round_trip[k]) == 0) orig = program->mappings[i];
        if (!orig) continue;
        const char *body = mapping_to_cmt(&arena, orig);
        char *text = arena_printf(&arena, "%smapping again for gemm_softmax on chip { %s }\n",
                                  program_text, body);
        char *cut = strstr(text, "mapping fused for");
        /* keep the arch and op, drop the original mappings */
        char *again = strstr(text, "mapping again");
        memmove(cut, again, strlen(again) + 1);
        SourceManager sm2;
        DiagSink d2;
        Program *p2 = unit_load_named(&arena, &sm2, &d2, "again.cmt", text);
        bool ok = p2 && d2.error_count == 0 && p2->mapping_count == 1;
        EvalResult e1, e2;
        if (ok) {
            evaluate_mapping(orig, NULL, &e1);
            evaluate_mapping(p2->mappings[0], NULL, &e2);
            ok = fabs(e1.cost.latency_s - e2.cost.latency_s) <= 1e-12 * e1.cost.latency_s &&
                 fabs(e1.cost.energy_j - e2.cost.energy_j) <= 1e-12 * e1.cost.energy_j;
        }
        if (!ok) printf("  mapping text: %s\n", body);
        CHECK(ok,
              arena_printf(&arena, "round trip of the complete mapping text: %s", round_trip[k]));
    }

    /* dump after a pass names it and is stable text */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    LowerOptions co;
    memset(&co, 0, sizeof co);
    co.dump_after = "collectives";
    co.dump_out = mem;
    lower_mapping(&arena, program->mappings[0], true, &co);
    fclose(mem);
    CHECK(buf && strstr(buf, "after collectives") && strstr(buf, "allreduce stmt=mx"),
          "dump after collectives lists the allreduce");
    free(buf);
    arena_free_all(&arena);
    return unit_finish();
}
