/* test_optimize.c — the mapping optimizer through its C entry point, on
 * generated spaces of two ops on a 2 x 2 mesh with a small buffer (every
 * combination of split, tile, order and fusion holes):
 *  - the MILP's optimum equals the exhaustive enumerator's, for latency,
 *    energy and edp;
 *  - the filled mapping is complete, and evaluate_mapping gives the
 *    objective the optimizer reports (the model is exact);
 *  - the cost of the filled mapping is the sum of its groups' costs times
 *    repeat (the separability the model relies on);
 *  - the symmetry reduction never enlarges the space;
 *  - an infeasible space fails with E0370, naming the conflicting tile;
 *  - the solver record is filled (rows, columns, method, status). */
#include "passes/optimize/optimize.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <stdlib.h>
#include <string.h>

static const char *base_text =
    "arch grid {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; read_energy 10 pJ/B; write_energy 12 pJ/B; }\n"
    "  cluster g[x = 2, y = 2] mesh { link_bandwidth 8 B/cycle; hop_latency 4 cycles; link_energy "
    "1 pJ/B; }\n"
    "  memory GLB { capacity 2 KiB; bandwidth 64 B/cycle; read_energy 1 pJ/B; write_energy 2 pJ/B; "
    "}\n"
    "  compute mac matrix { throughput 64 MAC/cycle; energy 0.5 pJ/MAC; }\n"
    "  compute simd vector { throughput 8 op/cycle; energy 0.25 pJ/op; cost exp 4; }\n"
    "}\n"
    "op rowsum<M = 16, N = 16, K = 8> {\n"
    "  in A[M, K] : int8;\n  in B[K, N] : int8;\n  out s[M] : fp16;\n  var C : fp16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  s[m] = sum(n) C[m, n];\n"
    "}\n"
    "op softmax3<M = 8, N = 16, K = 8> {\n"
    "  in A[M, K] : int8;\n  in B[K, N] : int8;\n  out D[M, N] : int8;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  e[m, n] = exp(C[m, n]);\n"
    "  s[m] = sum(n) e[m, n];\n"
    "  D[m, n] = e[m, n] / s[m];\n"
    "}\n";

static const char *objectives[] = {"latency", "energy", "edp"};

static Program *load(Arena *arena, SourceManager *sm, DiagSink *diags, const char *text) {
    return unit_load_named(arena, sm, diags, "gen.cmt", text);
}

static double objective(const char *obj, double lat, double en) {
    if (strcmp(obj, "energy") == 0) return en;
    if (strcmp(obj, "edp") == 0) return lat * en;
    return lat;
}

/* Every decision of a mapping as text, holes included, to compare. */
static const char *decisions(Arena *a, const IrMapping *m) {
    int S = m->op->stmt_count, D = m->arch->dim_count, I = m->op->index_count;
    int L = m->arch->level_count;
    char *t = arena_printf(a, "holes %d spatial? %d fuse? %d index holes %d\nsplit", m->hole_count,
                           m->spatial.whole_hole, m->fuse.whole_hole, m->tile.index_hole_count);
    for (int k = 0; k < S * D; k++) t = arena_printf(a, "%s %d", t, m->spatial.split[k]);
    t = arena_printf(a, "%s\ntile", t);
    for (int k = 0; k < S * L * I; k++)
        t = arena_printf(a, "%s %lld/%d", t, (long long)m->tile.size[k], m->tile.from[k]);
    t = arena_printf(a, "%s\norder", t);
    for (int o = 0; o < S * L; o++) {
        t = arena_printf(a, "%s [%d/%d:", t, m->order.length[o], m->order.from[o]);
        for (int k = 0; k < m->order.length[o]; k++)
            t = arena_printf(a, "%s %d", t, m->order.perm[o * I + k]);
        t = arena_printf(a, "%s]", t);
    }
    t = arena_printf(a, "%s\nfuse %d:", t, m->fuse.group_count);
    for (int st = 0; st < S; st++) t = arena_printf(a, "%s %d", t, m->fuse.group[st]);
    for (int g = 0; g < m->fuse.group_count; g++)
        t = arena_printf(a, "%s L%d%s", t, m->fuse.level[g],
                         m->fuse.written && m->fuse.written[g] ? "w" : "");
    return t;
}

/* The optimizer returns a new mapping and leaves the checked one as it
 * was: optimizing it twice gives the same mapping (the language server
 * asks in any order). */
static void test_checked_mapping_unchanged(Arena *arena) {
    const char *text =
        arena_printf(arena, "%smapping all for softmax3 on grid { spatial ? -> x, n -> y; "
                            "tile GLB: m ?, n ?; order GLB: ?; fuse ?; }\n",
                     base_text);
    SourceManager sm;
    DiagSink d;
    Program *p = load(arena, &sm, &d, text);
    CHECK(p && d.error_count == 0 && p->mapping_count == 1, "a mapping with every kind of hole");
    if (!p || d.error_count || p->mapping_count != 1) return;
    const IrMapping *checked = p->mappings[0];
    const char *before = decisions(arena, checked);
    OptimizeOptions o;
    memset(&o, 0, sizeof o);
    SolverReport r1, r2;
    const IrMapping *first = optimize_mapping(arena, p, checked, &o, &r1);
    const char *after = decisions(arena, checked);
    CHECK(first && first != checked && first->hole_count == 0 && checked->hole_count > 0,
          "the optimizer returns a new, complete mapping");
    CHECK(strcmp(before, after) == 0, "the checked mapping keeps every hole and decision");
    const IrMapping *second = optimize_mapping(arena, p, checked, &o, &r2);
    CHECK(first && second && strcmp(decisions(arena, first), decisions(arena, second)) == 0,
          "optimizing the checked mapping again gives the same mapping");
    SolverReport r3;
    CHECK(complete_mapping(arena, p, first, &o, &r3) == first && r3.status == SOLVER_NOT_NEEDED,
          "a complete mapping is lowered as it is");
}

int main(void) {
    Arena arena = {0};
    test_checked_mapping_unchanged(&arena);
    /* the generated spaces */
    const char *spatial[] = {"", "spatial ?;", "spatial n -> ?;", "spatial ? -> x, n -> y;"};
    const char *tiles[] = {"", "tile GLB: m ?;", "tile GLB: m ?, n ?;"};
    const char *orders[] = {"", "order GLB: ?;"};
    const char *fuses[] = {"", "fuse ?;"};
    const char *ops[] = {"rowsum", "softmax3"};
    size_t cap = 1 << 17, len = 0;
    char *text = arena_alloc(&arena, cap);
    len += (size_t)snprintf(text, cap, "%s", base_text);
    int count = 0;
    char names[256][32];
    const char *objs[256];
    for (int o = 0; o < 2; o++)
        for (int a = 0; a < 4; a++)
            for (int t = 0; t < 3; t++)
                for (int r = 0; r < 2; r++)
                    for (int f = 0; f < 2; f++) {
                        if (!a && !t && !r && !f) continue; /* no hole */
                        if (r && !t) continue;              /* orders need loops */
                        const char *obj = objectives[count % 3];
                        snprintf(names[count], sizeof names[count], "g%d", count);
                        objs[count] = obj;
                        len += (size_t)snprintf(text + len, cap - len,
                                                "mapping g%d for %s on grid { objective %s; %s %s "
                                                "%s %s }\n",
                                                count, ops[o], obj, spatial[a], tiles[t], orders[r],
                                                fuses[f]);
                        count++;
                    }
    /* two copies: one for the MILP, one for the enumerator */
    SourceManager sm1, sm2;
    DiagSink d1, d2;
    Program *p1 = load(&arena, &sm1, &d1, text);
    Program *p2 = load(&arena, &sm2, &d2, text);
    if (!p1 || d1.error_count) diags_render_text(stdout, &sm1, &d1, (DiagRenderOptions){false});
    CHECK(p1 && p2 && d1.error_count == 0 && p1->mapping_count == count, "generated spaces check");
    if (!p1 || !p2 || d1.error_count) return unit_finish();

    int exact = 0, model_exact = 0, separable = 0, complete = 0, smaller = 0, recorded = 0;
    const char *first_bad = NULL;
    for (int i = 0; i < count; i++) {
        OptimizeOptions o1, o2;
        memset(&o1, 0, sizeof o1);
        memset(&o2, 0, sizeof o2);
        o2.exhaustive = true;
        SolverReport r1, r2;
        const IrMapping *m1 = optimize_mapping(&arena, p1, p1->mappings[i], &o1, &r1);
        const IrMapping *m2 = optimize_mapping(&arena, p2, p2->mappings[i], &o2, &r2);
        bool ok1 = m1 != NULL, ok2 = m2 != NULL;
        EvalResult e1, e2;
        bool ev1 = ok1 && evaluate_mapping(m1, &arena, &e1) == EVAL_OK;
        bool ev2 = ok2 && evaluate_mapping(m2, NULL, &e2) == EVAL_OK;
        if (ok1 && m1->hole_count == 0 && ev1) complete++;
        if (ev1 && ev2) {
            double v1 = objective(objs[i], e1.cost.latency_s, e1.cost.energy_j);
            double v2 = objective(objs[i], e2.cost.latency_s, e2.cost.energy_j);
            if (fabs(v1 - v2) <= 1e-9 * fabs(v2))
                exact++;
            else if (!first_bad)
                first_bad = names[i];
            if (fabs(r1.objective - v1) <= 1e-9 * fabs(v1)) model_exact++;
            double lat = 0, en = 0;
            for (int g = 0; g < e1.group_count; g++) {
                lat += e1.groups[g].cost.latency_s;
                en += e1.groups[g].cost.energy_j;
            }
            double rep = m1->repeat > 0 ? (double)m1->repeat : 1;
            if (fabs(lat * rep - e1.cost.latency_s) <= 1e-12 * e1.cost.latency_s &&
                fabs(en * rep - e1.cost.energy_j) <= 1e-12 * e1.cost.energy_j)
                separable++;
        } else if (!first_bad) {
            first_bad = names[i];
        }
        if (r1.space <= r2.space) smaller++;
        if (r1.status == SOLVER_OPTIMAL && r1.rows > 0 && r1.columns > 0 && r1.method &&
            r2.status == SOLVER_OPTIMAL && r2.evaluated_count == (long)r2.space)
            recorded++;
    }
    printf("%d generated spaces; first mismatch: %s\n", count, first_bad ? first_bad : "none");
    CHECK(count >= 40, "at least 40 generated spaces");
    CHECK(exact == count, "MILP optimum equals exhaustive optimum on every space");
    CHECK(model_exact == count, "model objective equals evaluate_mapping of the result");
    CHECK(separable == count, "cost of the result is the sum of its groups' costs");
    CHECK(complete == count, "filled mappings are complete");
    CHECK(smaller == count, "symmetry reduction never enlarges the space");
    CHECK(recorded == count, "solver records are filled");

    /* infeasible: the given tiles cannot fit 2 KiB */
    const char *inf =
        "arch grid {\n"
        "  clock 1 GHz;\n"
        "  memory DRAM { bandwidth 16 B/cycle; read_energy 10 pJ/B; write_energy 12 pJ/B; }\n"
        "  memory GLB { capacity 2 KiB; bandwidth 64 B/cycle; read_energy 1 pJ/B; write_energy 2 "
        "pJ/B; }\n"
        "  compute mac matrix { throughput 64 MAC/cycle; energy 0.5 pJ/MAC; }\n"
        "}\n"
        "op mm<M = 64, N = 64, K = 64> {\n"
        "  in A[M, K] : int8;\n  in B[K, N] : int8;\n  out C[M, N] : int8;\n"
        "  C[m, n] = A[m, k] * B[k, n];\n"
        "}\n"
        "mapping big for mm on grid { tile GLB: m 64, n 32, k ?; }\n";
    SourceManager sm3;
    DiagSink d3;
    Program *p3 = load(&arena, &sm3, &d3, inf);
    CHECK(p3 && d3.error_count == 0 && p3->mapping_count == 1, "infeasible space checks");
    if (p3 && p3->mapping_count == 1) {
        OptimizeOptions o;
        memset(&o, 0, sizeof o);
        SolverReport r;
        bool ok = optimize_mapping(&arena, p3, p3->mappings[0], &o, &r) != NULL;
        bool e0370 = false, names_m = false;
        for (int k = 0; k < d3.count; k++)
            if (strcmp(d3.items[k]->code, "E0370") == 0) {
                e0370 = true;
                names_m = strstr(d3.items[k]->message, "tile m 64") != NULL &&
                          strstr(d3.items[k]->message, "would need") != NULL;
            }
        CHECK(!ok && r.status == SOLVER_FAILED, "infeasible space fails");
        CHECK(e0370 && names_m, "infeasible space explained with the conflicting tile and bytes");
    }
    arena_free_all(&arena);
    return unit_finish();
}
