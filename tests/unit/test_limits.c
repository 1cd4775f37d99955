/* test_limits.c — no size of op or arch is too large for the evaluation
 * API and the optimizer (issue 8 item 5); the optimizer's memory budget
 * gives E0380 (issue 9).  Every case is generated here:
 *  - a 70-statement op on a 9-level arch: evaluate_mapping gives a record
 *    per group with a time per level, and the groups sum to the total;
 *  - the same with a tile hole: the MILP and the exhaustive enumerator
 *    agree;
 *  - an op of 40 indices: a split hole on the 40th index is searched and
 *    taken (a split of index 32 or later was never searched);
 *  - the bit sets past one word;
 *  - `fuse ?` over 300 statements under a budget of 1 MiB: E0380. */
#include "passes/optimize/space.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Text of an op of n statements T1..Tn on an arch of `levels` memory
 * levels, with one mapping whose body is `body`. */
static char *chain_text(Arena *a, int n, int levels, const char *body) {
    char *t = arena_printf(a,
                           "op chain<M = 8, N = 8> {\n  in A[M, N] : fp16;\n"
                           "  out T%d[M, N] : fp16;\n",
                           n);
    for (int i = 1; i <= n; i++)
        t = arena_printf(a, "%s  T%d[m, n] = %s%d[m, n] + 1;\n", t, i, i == 1 ? "A" : "T",
                         i == 1 ? 0 : i - 1);
    t = arena_printf(a,
                     "%s}\narch deep {\n  clock 1 GHz;\n  memory DRAM { bandwidth 16 B/cycle; "
                     "read_energy 100 pJ/B; write_energy 100 pJ/B; }\n",
                     t);
    for (int l = 1; l < levels; l++)
        t = arena_printf(a,
                         "%s  memory L%d { capacity %d KiB; bandwidth %d B/cycle; read_energy 1 "
                         "pJ/B; write_energy 1 pJ/B; }\n",
                         t, l, 1 << (levels - l + 3), 16 << l);
    return arena_printf(a,
                        "%s  compute simd vector { throughput 8 op/cycle; energy 0.5 pJ/op; }\n}\n"
                        "mapping m for chain on deep {\n  %s\n}\n",
                        t, body);
}

/* `A0` with a `0` suffix does not exist: the first statement reads A. */
static char *fix_first(char *t) {
    char *p = strstr(t, "A0[");
    if (p) memmove(p + 1, p + 2, strlen(p + 2) + 1);
    return t;
}

static Program *load(Arena *arena, SourceManager *sm, DiagSink *diags, const char *text) {
    return unit_load_named(arena, sm, diags, "gen.cmt", text);
}

static bool has_code(const DiagSink *d, const char *code, const char *text) {
    for (int k = 0; k < d->count; k++)
        if (strcmp(d->items[k]->code, code) == 0 && (!text || strstr(d->items[k]->message, text)))
            return true;
    return false;
}

static bool close_to(double a, double b) {
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

int main(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;

    /* 70 statements, 9 levels: one record per group, one time per level */
    Program *p = load(&arena, &sm, &diags, fix_first(chain_text(&arena, 70, 9, "overlap full;")));
    CHECK(p && diags.error_count == 0 && p->mapping_count == 1, "70 statements on 9 levels check");
    if (!p || diags.error_count) return unit_finish();
    const IrMapping *m = p->mappings[0];
    EvalResult r;
    CHECK(evaluate_mapping(m, &arena, &r) == EVAL_OK, "evaluate 70 groups on 9 levels");
    CHECK(r.group_count == 70 && r.level_count == 9 && r.groups, "70 group records, 9 levels");
    double lat = 0;
    bool levels_ok = true;
    for (int g = 0; g < r.group_count; g++) {
        lat += r.groups[g].cost.latency_s;
        for (int l = 0; l < r.level_count; l++)
            if (!(r.groups[g].level_s[l] >= 0)) levels_ok = false;
    }
    CHECK(close_to(lat, r.cost.latency_s), "the 70 groups sum to the latency");
    CHECK(levels_ok, "every group has a memory time at each of the 9 levels");
    EvalResult totals;
    CHECK(evaluate_mapping(m, NULL, &totals) == EVAL_OK && !totals.groups &&
              totals.group_count == 70 && totals.cost.latency_s == r.cost.latency_s,
          "without an arena: the totals only");

    /* with a hole: the MILP and the enumerator agree */
    const char *body = "tile L8: m ?;";
    SourceManager sm1, sm2;
    DiagSink d1, d2;
    Program *p1 = load(&arena, &sm1, &d1, fix_first(chain_text(&arena, 70, 9, body)));
    Program *p2 = load(&arena, &sm2, &d2, fix_first(chain_text(&arena, 70, 9, body)));
    CHECK(p1 && p2 && d1.error_count == 0 && d2.error_count == 0, "holes on 70 x 9 check");
    if (p1 && p2 && !d1.error_count && !d2.error_count) {
        OptimizeOptions o1, o2;
        memset(&o1, 0, sizeof o1);
        memset(&o2, 0, sizeof o2);
        o2.exhaustive = true;
        SolverReport r1, r2;
        const IrMapping *f1 = optimize_mapping(&arena, p1, p1->mappings[0], &o1, &r1);
        const IrMapping *f2 = optimize_mapping(&arena, p2, p2->mappings[0], &o2, &r2);
        bool ok1 = f1 != NULL, ok2 = f2 != NULL;
        CHECK(ok1 && r1.status == SOLVER_OPTIMAL, "MILP on 70 statements x 9 levels");
        CHECK(ok2 && r2.status == SOLVER_OPTIMAL, "exhaustive on 70 statements x 9 levels");
        EvalResult e1, e2;
        if (ok1 && ok2 && evaluate_mapping(f1, NULL, &e1) == EVAL_OK &&
            evaluate_mapping(f2, NULL, &e2) == EVAL_OK)
            CHECK(close_to(e1.cost.latency_s, e2.cost.latency_s), "MILP and exhaustive agree");
    }

    /* 40 indices j0..j39; splitting j39 over 2 chips halves the last
     * statement's weight traffic */
    {
        char *t = arena_printf(&arena, "op wide<E = 64> {\n  in A[E] : fp16;\n  in B[E, E] : "
                                       "fp16;\n  out T39[E] : fp16;\n");
        for (int i = 1; i <= 39; i++)
            t = arena_printf(&arena, "%s  T%d[j%d] = %s%d[j%d] * B[j%d, j%d];\n", t, i, i,
                             i == 1 ? "A" : "T", i - 1, i - 1, i - 1, i);
        t = fix_first(arena_printf(
            &arena,
            "%s}\narch ring2 {\n  clock 1 GHz;\n  memory DRAM { bandwidth 16 B/cycle; "
            "read_energy 100 pJ/B; write_energy 100 pJ/B; }\n  cluster chips[x = 2] ring { "
            "link_bandwidth 800 B/cycle; hop_latency 10 cycles; link_energy 2 pJ/B; }\n  memory "
            "L1 { capacity 64 KiB; bandwidth 64 B/cycle; read_energy 1 pJ/B; write_energy 1 "
            "pJ/B; }\n  compute mac matrix { throughput 64 MAC/cycle; energy 0.2 pJ/MAC; }\n}\n"
            "mapping m for wide on ring2 {\n  spatial j39 -> ?;\n}\n",
            t));
        SourceManager sm3;
        DiagSink d3;
        Program *p3 = load(&arena, &sm3, &d3, t);
        CHECK(p3 && d3.error_count == 0 && p3->mappings[0]->op->index_count == 40,
              "an op of 40 indices checks");
        if (p3 && !d3.error_count) {
            OptimizeOptions o;
            memset(&o, 0, sizeof o);
            SolverReport r3;
            const IrMapping *m3 = optimize_mapping(&arena, p3, p3->mappings[0], &o, &r3);
            bool ok = m3 != NULL;
            if (!ok) m3 = p3->mappings[0];
            int last = m3->op->stmt_count - 1, j39 = -1;
            for (int i = 0; i < m3->op->index_count; i++)
                if (strcmp(m3->op->indices[i].name, "j39") == 0) j39 = i;
            CHECK(ok && m3->spatial.split && m3->spatial.split[last * m3->arch->dim_count] == j39,
                  "the split of the 40th index is searched and chosen");
        }
    }

    /* bit sets past one word */
    {
        uint64_t bits[3] = {0, 0, 0};
        CHECK(opt_words(0) == 0 && opt_words(64) == 1 && opt_words(65) == 2, "words per set");
        bits_set(bits, 63);
        bits_set(bits, 64);
        bits_set(bits, 130);
        CHECK(bits_has(bits, 63) && bits_has(bits, 64) && bits_has(bits, 130) &&
                  !bits_has(bits, 62) && !bits_has(bits, 65) && bits[2] == (uint64_t)1 << 2,
              "bits 63, 64 and 130");
        CHECK(opt_mul(SIZE_MAX / 2, 3) == SIZE_MAX && opt_add(SIZE_MAX, 1) == SIZE_MAX,
              "sizes saturate");
    }

    /* the budget: `fuse ?` over 300 statements needs about 20 MiB of arcs */
    {
        SourceManager sm4;
        DiagSink d4;
        Program *p4 = load(&arena, &sm4, &d4, fix_first(chain_text(&arena, 300, 2, "fuse ?;")));
        CHECK(p4 && d4.error_count == 0, "300 statements check");
        if (p4 && !d4.error_count) {
            setenv("CMTC_OPT_BUDGET_MB", "1", 1);
            OptimizeOptions o;
            memset(&o, 0, sizeof o);
            SolverReport r4;
            bool ok = optimize_mapping(&arena, p4, p4->mappings[0], &o, &r4) != NULL;
            unsetenv("CMTC_OPT_BUDGET_MB");
            CHECK(!ok && r4.status == SOLVER_FAILED && has_code(&d4, "E0380", "1.00 MiB"),
                  "past the budget: E0380 names it");
        }
    }
    arena_free_all(&arena);
    return unit_finish();
}
