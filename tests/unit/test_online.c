/* test_online.c — online reductions (`online mx, s;`, docs/language.md
 * 5.6, docs/cost-model.md 7.3): which statements the compiler lets run
 * online, the corrections they cost (computed by hand in the comments from
 * the formulas of section 7.3), and the reference interpreter agreeing
 * with the model on the schedule. */
#include "passes/passes.h"
#include "passes/verify.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <string.h>

static const char *text =
    "arch tiny {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  cluster cores[x = 2] ring { link_bandwidth 8 B/cycle; hop_latency 10 cycles; }\n"
    "  memory L1 { capacity 64 KiB; bandwidth 64 B/cycle; }\n"
    "  memory RF { capacity 8 KiB; bandwidth 128 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute vec vector { throughput 16 op/cycle; cost exp 4; }\n"
    "}\n"
    "op att<M = 32, N = 64, D = 16> {\n"
    "  in Q[M, D] : fp16;\n"
    "  in K[N, D] : fp16;\n"
    "  in V[N, D] : fp16;\n"
    "  out O[M, D] : fp16;\n"
    "  C[m, n] = Q[m, d] * K[n, d];\n"
    "  mx[m] = max(n) C[m, n];\n"
    "  e[m, n] = exp(C[m, n] - mx[m]);\n"
    "  s[m] = sum(n) e[m, n];\n"
    "  P[m, n] = e[m, n] / s[m];\n"
    "  O[m, d] = P[m, n] * V[n, d];\n"
    "}\n"
    "mapping rows for att on tiny {\n"
    "  spatial m -> x;\n"
    "  tile L1: m 8, n 16;\n"
    "  tile RF: m 8, n 16;\n"
    "  order L1: m, n;\n"
    "  fuse C, mx, e, s, P, O at L1;\n"
    "  online mx, s;\n"
    "}\n"
    "mapping keys for att on tiny {\n"
    "  spatial n -> x;\n"
    "  tile L1: m 8, n 16;\n"
    "  tile RF: m 8, n 16;\n"
    "  order L1: m, n;\n"
    "  fuse C, mx, e, s, P, O at L1;\n"
    "  online mx, s;\n"
    "}\n"
    "mapping waiting for att on tiny {\n"
    "  spatial m -> x;\n"
    "  tile L1: m 8, n 16;\n"
    "  tile RF: m 8, n 16;\n"
    "  order L1: m, n;\n"
    "  fuse C, mx, e, s, P, O at L1;\n"
    "}\n";

/* Each mapping below has exactly one mistake about `online`. */
static const char *bad_text =
    "arch tiny {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  memory L1 { capacity 64 KiB; bandwidth 64 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "  compute vec vector { throughput 16 op/cycle; }\n"
    "}\n"
    "op sm<M = 8, N = 64, D = 8> {\n"
    "  in C[M, N] : fp16;\n"
    "  in V[N, D] : fp16;\n"
    "  out O[M, D] : fp16;\n"
    "  out avg[M] : fp16;\n"
    "  mx[m] = max(n) C[m, n];\n"
    "  e[m, n] = exp(C[m, n] - mx[m]);\n"
    "  s[m] = sum(n) e[m, n];\n"
    "  P[m, n] = e[m, n] / s[m];\n"
    "  O[m, d] = P[m, n] * V[n, d];\n"
    "  avg[m] = mean(n) C[m, n];\n"
    "}\n"
    "op probs<M = 8, N = 64> {\n"
    "  in C[M, N] : fp16;\n"
    "  out P[M, N] : fp16;\n"
    "  mx[m] = max(n) C[m, n];\n"
    "  e[m, n] = exp(C[m, n] - mx[m]);\n"
    "  s[m] = sum(n) e[m, n];\n"
    "  P[m, n] = e[m, n] / s[m];\n"
    "}\n"
    "op squash<M = 8, N = 64> {\n"
    "  in C[M, N] : fp16;\n"
    "  out g[M] : fp16;\n"
    "  mx[m] = max(n) C[m, n];\n"
    "  e[m, n] = exp(C[m, n] - mx[m]);\n"
    "  f[m, n] = exp(e[m, n]);\n"
    "  g[m] = sum(n) f[m, n];\n"
    "}\n"
    "mapping not_reduction for sm on tiny { fuse mx, e, s, P, O at L1; online e; }\n"
    "mapping a_mean for sm on tiny { online avg; }\n"
    "mapping not_scaling for squash on tiny { fuse mx, e, f, g at L1; online mx; }\n"
    "mapping output for probs on tiny { fuse mx, e, s, P at L1; online mx, s; }\n"
    "mapping waits for sm on tiny { fuse mx, e, s, P, O at L1; online mx; }\n"
    "mapping hole for sm on tiny { fuse ?; online mx; }\n"
    "mapping lonely for sm on tiny { fuse mx at L1; online mx; }\n";


static Arena arena;
static SourceManager sources;
static DiagSink diags;

/* The rescale node of statement `stmt` in the schedule, or NULL. */
static const SchedNode *rescale_of(const Schedule *s, const char *stmt) {
    int st = ir_find_stmt(s->op, intern_cstr(stmt));
    for (int i = 0; i < s->node_count; i++)
        if (s->nodes[i].rescale && s->nodes[i].stmt == st) return &s->nodes[i];
    return NULL;
}


/* Whether the diagnostics of the bad file include `code` in the mapping
 * whose name is on the line. */
static bool reported(SourceManager *sm, const DiagSink *ds, const char *code,
                     const char *mapping) {
    for (int i = 0; i < ds->count; i++) {
        const Diag *d = ds->items[i];
        if (strcmp(d->code, code) != 0) continue;
        const SourceFile *f = sources_get(sm, d->span.file);
        if (!f) continue;
        uint32_t line_start = d->span.start;
        while (line_start > 0 && f->text[line_start - 1] != '\n') line_start--;
        const char *eol = strchr(f->text + line_start, '\n');
        size_t len = eol ? (size_t)(eol - (f->text + line_start)) : strlen(f->text + line_start);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)len, f->text + line_start);
        char want[128];
        snprintf(want, sizeof want, "mapping %s ", mapping);
        if (strstr(line, want)) return true;
    }
    return false;
}

int main(void) {
    Program *p = unit_load_named(&arena, &sources, &diags, "online.cmt", text);
    if (!p || diags.error_count) {
        diags_render_text(stdout, &sources, &diags, (DiagRenderOptions){false});
        CHECK(false, "the online file checks");
        return unit_finish();
    }

    /* rows: m split over the 2 cores, 16 rows each; n = 64 in RF tiles
       of 16, so each online statistic walks 4 tiles of n: 3 later ones.
       - mx, a max: its factor exp(old - new) is 1 op + exp (cost 4) =
         5 op per element: 16 x 3 x 5 = 240 op, at 16 op/cycle 15 ns.
       - s, a sum, follows mx with exponent 1 (s = sum(n) e, e = exp(C -
         mx)): 16 x 3 x 1 = 48 op, and its own factor old / new 1 op:
         16 x 3 x 1 = 48 op; 96 op, 6 ns.
       - O follows s with exponent -1 (P = e / s, O = sum(n) P V) and mx
         with 0 (e / s does not move with mx): 16 x 16 elements x 3 x 1 =
         768 op, 48 ns.
       The statements' own work is unchanged. */
    const Schedule *s = unit_lowered(&arena, p, "rows");
    const SchedNode *r_mx = rescale_of(s, "mx"), *r_s = rescale_of(s, "s"),
                    *r_O = rescale_of(s, "O");
    CHECK(r_mx && r_s && r_O, "rows: mx, s and O are corrected");
    CHECK(!rescale_of(s, "e") && !rescale_of(s, "P") && !rescale_of(s, "C"),
          "rows: e, P and C last one tile: nothing to correct");
    if (r_mx && r_s && r_O) {
        CHECK_EXACT(r_mx->ops, 240, "rows: mx's factor 240 op");
        CHECK_EXACT(r_mx->latency_s, 15e-9, "rows: mx's factor 15 ns");
        CHECK_EXACT(r_s->ops, 96, "rows: s 96 op");
        CHECK_EXACT(r_s->latency_s, 6e-9, "rows: s 6 ns");
        CHECK_EXACT(r_O->ops, 768, "rows: O 768 op");
        CHECK_EXACT(r_O->latency_s, 48e-9, "rows: O 48 ns");
        CHECK(strcmp(r_O->unit->name, "vec") == 0, "rows: O's corrections on the vector unit");
    }
    int st_e = ir_find_stmt(s->op, intern_cstr("e"));
    CHECK(s->groups[0].wait_loop[s->stmts[st_e].position] == s->groups[0].loop_count &&
              s->groups[0].round[s->stmts[st_e].position] == 0,
          "rows: e runs beside mx, in the same pass");
    CHECK(s->excess_count == 0, "rows: fits");
    /* A reader takes the running value after each of its maker's
       executions (section 7.3): per core 16 rows, compute tiles m 8 x n
       16, so e runs 2 x 4 = 8 times and reads its C tile (8 x 16) and mx's
       tile (8 elements) each time, 8 times, not once per m tile (2), and
       writes its own 8 times. */
    {
        const SchedNode *ne = NULL;
        for (int i = 0; i < s->node_count; i++)
            if (s->nodes[i].kind == SN_COMPUTE && s->nodes[i].stmt == st_e) ne = &s->nodes[i];
        double eb_c = elem_type_bits(s->op->tensors[ir_find_tensor(s->op, intern_cstr("C"))].type) / 8.0;
        double eb_mx = elem_type_bits(s->op->tensors[ir_find_tensor(s->op, intern_cstr("mx"))].type) / 8.0;
        double eb_e = elem_type_bits(s->op->tensors[ir_find_tensor(s->op, intern_cstr("e"))].type) / 8.0;
        CHECK(ne && unit_near(ne->bytes, 8 * 128 * eb_c + 8 * 8 * eb_mx + 8 * 128 * eb_e, 1e-12),
              "rows: e reads mx's running value 8 times, each execution of mx");
    }
    check_verified(s, "rows: the interpreter agrees");

    /* waiting: the same without `online`: e waits for the n loop, so C's
       four RF tiles of a row block stay live at L1 (section 2), and no
       correction is charged. */
    const Schedule *w = unit_lowered(&arena, p, "waiting");
    CHECK(!rescale_of(w, "O"), "waiting: nothing corrected");
    CHECK(w->groups[0].round[w->stmts[st_e].position] == 1, "waiting: e runs a pass later");
    check_verified(w, "waiting: the interpreter agrees");

    /* keys: n split over the 2 cores (32 each: 2 RF tiles of 16, 1 later
       tile) and m whole (32 rows): each statistic takes 1 step for its
       later tile and 1 more for the combine of the split: 2 steps.
       mx: 32 x 2 x 5 = 320 op; s: 32 x 2 x (1 + 1) = 128 op; O: 32 x 16
       x 2 x 1 = 1024 op. */
    const Schedule *k = unit_lowered(&arena, p, "keys");
    r_mx = rescale_of(k, "mx");
    r_s = rescale_of(k, "s");
    r_O = rescale_of(k, "O");
    CHECK(r_mx && r_s && r_O, "keys: mx, s and O are corrected");
    if (r_mx && r_s && r_O) {
        CHECK_EXACT(r_mx->ops, 320, "keys: mx 320 op");
        CHECK_EXACT(r_s->ops, 128, "keys: s 128 op");
        CHECK_EXACT(r_O->ops, 1024, "keys: O 1024 op");
    }
    check_verified(k, "keys: the interpreter agrees");

    /* the checks */
    SourceManager bad_sources;
    DiagSink bad_diags;
    unit_load_named(&arena, &bad_sources, &bad_diags, "bad.cmt", bad_text);
    CHECK(reported(&bad_sources, &bad_diags, "E0340", "not_reduction"),
          "E0340: e is not a reduction");
    CHECK(reported(&bad_sources, &bad_diags, "E0340", "a_mean"), "E0340: a mean");
    CHECK(reported(&bad_sources, &bad_diags, "E0341", "not_scaling"),
          "E0341: f = exp(e) follows no factor");
    CHECK(reported(&bad_sources, &bad_diags, "E0342", "output"),
          "E0342: P is an output computed from running values");
    CHECK(reported(&bad_sources, &bad_diags, "E0342", "waits"),
          "E0342: s is not online, so its reader would read stale e");
    CHECK(reported(&bad_sources, &bad_diags, "E0343", "hole"), "E0343: fuse ?");
    CHECK(reported(&bad_sources, &bad_diags, "W0340", "lonely"),
          "W0340: mx online with no reader in its group");
    int errors = 0;
    for (int i = 0; i < bad_diags.count; i++)
        errors += bad_diags.items[i]->severity == SEV_ERROR;
    CHECK(errors == 6, "one error per bad mapping");
    if (errors != 6) diags_render_text(stdout, &bad_sources, &bad_diags, (DiagRenderOptions){false});
    return unit_finish();
}
