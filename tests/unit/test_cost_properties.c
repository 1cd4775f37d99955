/* test_cost_properties.c — properties of the lowering over generated
 * mappings of one op on a 2x2 mesh (every split of m, n, k or nothing over
 * each dim, two tile sizes, fused or not):
 *  - splitting a reduced index always adds a reduction collective for the
 *    statement that reduces it;
 *  - fusing never adds traffic at the outermost level;
 *  - with the same splits, more bytes at every level never cost less
 *    memory energy.
 * Each property prints one line; the first counterexample is named. */
#include "passes/passes.h"
#include "tests/unit/unit.h"

#include <string.h>

static const char *base_text =
    "arch grid {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; read_energy 10 pJ/B; write_energy 12 pJ/B; }\n"
    "  cluster g[x = 2, y = 2] mesh { link_bandwidth 8 B/cycle; hop_latency 4 cycles; link_energy "
    "1 pJ/B; }\n"
    "  memory GLB { capacity 1 MiB; bandwidth 64 B/cycle; read_energy 1 pJ/B; write_energy 2 pJ/B; "
    "}\n"
    "  compute mac matrix { throughput 64 MAC/cycle; energy 0.5 pJ/MAC; }\n"
    "  compute simd vector { throughput 8 op/cycle; energy 0.25 pJ/op; }\n"
    "}\n"
    "op gemm_rowsum<M = 32, N = 32, K = 32> {\n"
    "  in A[M, K] : int8;\n  in B[K, N] : int8;\n  out s[M] : fp16;\n  var C : fp16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  s[m] = sum(n) C[m, n];\n"
    "}\n";

static const char *idx_names[] = {NULL, "m", "n", "k"};

static double outer_bytes(const Schedule *s) {
    double b = 0;
    const IrLevel *lv = &s->arch->levels[0];
    for (int g = 0; g < s->group_count; g++)
        for (int k = 0; k < lv->memory_count; k++)
            b += s->groups[g].mem_bytes[lv->first_memory + k];
    return b;
}

static double level_bytes(const Schedule *s, int level) {
    double b = 0;
    const IrLevel *lv = &s->arch->levels[level];
    for (int g = 0; g < s->group_count; g++)
        for (int k = 0; k < lv->memory_count; k++)
            b += s->groups[g].mem_bytes[lv->first_memory + k];
    return b;
}

int main(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    sources_init(&sm, &arena);
    diags_init(&diags, &arena);
    /* mapping text: one per (split x, split y, tile, fused) */
    size_t cap = 1 << 16, len = 0;
    char *text = arena_alloc(&arena, cap);
    len += (size_t)snprintf(text, cap, "%s", base_text);
    int count = 0;
    for (int sx = 0; sx < 4; sx++)
        for (int sy = 0; sy < 4; sy++)
            for (int tile = 4; tile <= 8; tile += 4)
                for (int fused = 0; fused < 2; fused++) {
                    char spatial[96] = "";
                    if (sx && sy && sx == sy)
                        snprintf(spatial, sizeof spatial, "spatial %s -> (x, y);", idx_names[sx]);
                    else if (sx && sy)
                        snprintf(spatial, sizeof spatial, "spatial %s -> x, %s -> y;",
                                 idx_names[sx], idx_names[sy]);
                    else if (sx)
                        snprintf(spatial, sizeof spatial, "spatial %s -> x;", idx_names[sx]);
                    else if (sy)
                        snprintf(spatial, sizeof spatial, "spatial %s -> y;", idx_names[sy]);
                    if (len + 512 > cap) {
                        text = arena_realloc(&arena, text, cap, cap * 2);
                        cap *= 2;
                    }
                    len += (size_t)snprintf(
                        text + len, cap - len,
                        "mapping g%d_%d_%d_%d for gemm_rowsum on grid { %s tile GLB: "
                        "m %d, k %d; %s }\n",
                        sx, sy, tile, fused, spatial, tile, tile, fused ? "fuse C, s at GLB;" : "");
                    count++;
                }
    SourceFile *f = sources_add(&sm, "gen.cmt", text, len);
    CheckOptions opts;
    memset(&opts, 0, sizeof opts);
    Program *p = check_program(&arena, &sm, &diags, f, &opts);
    if (!p || diags.error_count) diags_render_text(stdout, &sm, &diags, (DiagRenderOptions){false});
    CHECK(p && diags.error_count == 0 && p->mapping_count == count, "generated mappings check");
    if (!p || diags.error_count) return unit_finish();

    const char *reduction_bad = NULL, *fusion_bad = NULL, *energy_bad = NULL;
    int reduced_cases = 0, energy_cases = 0;
    Schedule **sched = ARENA_ARRAY(&arena, Schedule *, count);
    for (int i = 0; i < p->mapping_count; i++)
        sched[i] = lower_mapping(&arena, p->mappings[i], false, NULL);
    for (int i = 0; i < p->mapping_count; i++) {
        const Schedule *s = sched[i];
        /* property 1 */
        for (int st = 0; st < s->op->stmt_count; st++) {
            const IrStmt *is = &s->op->stmts[st];
            bool split_reduced = false, has_reduction = false;
            for (int d = 0; d < s->arch->dim_count; d++)
                for (int r = 0; r < is->reduced_count; r++)
                    if (s->stmts[st].split[d] == is->reduced[r] && s->arch->dims[d].size > 1)
                        split_reduced = true;
            for (int n = 0; n < s->node_count; n++) {
                const SchedNode *nd = &s->nodes[n];
                if (nd->kind == SN_COLLECTIVE && nd->stmt == st &&
                    (nd->coll == CK_ALLREDUCE || nd->coll == CK_REDUCE ||
                     nd->coll == CK_REDUCE_SCATTER) &&
                    nd->reduce_op == is->reduce_op)
                    has_reduction = true;
            }
            if (split_reduced) reduced_cases++;
            if (split_reduced && !has_reduction && !reduction_bad)
                reduction_bad = p->mappings[i]->name;
        }
    }
    /* property 2: mappings come in (unfused, fused) pairs */
    for (int i = 0; i + 1 < p->mapping_count; i += 2)
        if (outer_bytes(sched[i + 1]) > outer_bytes(sched[i]) * (1 + 1e-12) && !fusion_bad)
            fusion_bad = p->mappings[i + 1]->name;
    /* property 3: same splits and fusion, tile 4 vs tile 8 */
    for (int i = 0; i + 2 < p->mapping_count; i += 4)
        for (int f2 = 0; f2 < 2; f2++) {
            const Schedule *a = sched[i + f2], *b = sched[i + 2 + f2];
            bool more_everywhere = true, less_everywhere = true;
            for (int l = 0; l < a->levels; l++) {
                more_everywhere &= level_bytes(a, l) >= level_bytes(b, l);
                less_everywhere &= level_bytes(a, l) <= level_bytes(b, l);
            }
            energy_cases += more_everywhere || less_everywhere;
            if (more_everywhere &&
                a->cost.memory_energy_j < b->cost.memory_energy_j * (1 - 1e-12) && !energy_bad)
                energy_bad = p->mappings[i + f2]->name;
            if (less_everywhere &&
                b->cost.memory_energy_j < a->cost.memory_energy_j * (1 - 1e-12) && !energy_bad)
                energy_bad = p->mappings[i + 2 + f2]->name;
        }
    /* the properties must have had cases to hold on */
    CHECK(reduced_cases > 10, "many mappings split a reduced index");
    CHECK(energy_cases > 10, "many pairs order their bytes level by level");
    printf("%s: splitting a reduced index adds a reduction collective%s%s\n",
           reduction_bad ? "FAIL" : "PASS", reduction_bad ? ": not in " : "",
           reduction_bad ? reduction_bad : "");
    printf("%s: fusing never adds outermost-level traffic%s%s\n", fusion_bad ? "FAIL" : "PASS",
           fusion_bad ? ": more in " : "", fusion_bad ? fusion_bad : "");
    printf("%s: more bytes at every level never cost less energy%s%s\n",
           energy_bad ? "FAIL" : "PASS", energy_bad ? ": cheaper " : "",
           energy_bad ? energy_bad : "");
    if (reduction_bad || fusion_bad || energy_bad) unit_failures++;
    arena_free_all(&arena);
    return unit_finish();
}
