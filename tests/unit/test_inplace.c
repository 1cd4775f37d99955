/* test_inplace.c — an element-wise statement writing its result over the
 * tile of an input no later statement reads (docs/cost-model.md section 2,
 * "In place"), against arithmetic done by hand in the comments. */
#include "passes/passes.h"
#include "passes/verify.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <string.h>

/* chain and kept share their inputs and statements; kept's Z reads e
 * after h */
#define CHAIN_IO                                                                                   \
    "  in A[M, K] : int8;\n"                                                                      \
    "  in B[K, N] : int8;\n"                                                                      \
    "  out Y[M] : fp32;\n"
#define CHAIN_BODY                                                                                 \
    "  var C : fp32;\n"                                                                           \
    "  var e : fp32;\n"                                                                           \
    "  var h : bf16;\n"                                                                           \
    "  C[m, n] = A[m, k] * B[k, n];\n"                                                            \
    "  e[m, n] = exp(C[m, n]);\n"                                                                 \
    "  h[m, n] = e[m, n] * e[m, n];\n"                                                            \
    "  Y[m] = sum(n) h[m, n];\n"

static const char *text =
    "arch acc {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; energy 10 pJ/B; }\n"
    "  memory SRAM { capacity 64 KiB; bandwidth 64 B/cycle; energy 0.5 pJ/B; }\n"
    "  memory ACC role accumulator { capacity 2 KiB; bandwidth 128 B/cycle; energy 0.1 pJ/B; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; energy 0.5 pJ/MAC; }\n"
    "  compute vec vector { throughput 16 op/cycle; energy 1 pJ/op; }\n"
    "}\n"
    "op chain<M = 16, N = 16, K = 64> {\n" CHAIN_IO CHAIN_BODY "}\n"
    "op kept<M = 16, N = 16, K = 64> {\n" CHAIN_IO "  out Z[M] : fp32;\n" CHAIN_BODY
    "  Z[m] = max(n) e[m, n];\n"
    "}\n"
    "op soft<M = 16, N = 16, K = 64> {\n"
    "  in A[M, K] : int8;\n"
    "  in B[K, N] : int8;\n"
    "  out Y[M, N] : fp32;\n"
    "  var C : fp32;\n"
    "  var mx : fp32;\n"
    "  var e : fp32;\n"
    "  var s : fp32;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  mx[m] = max(n) C[m, n];\n"
    "  e[m, n] = exp(C[m, n] - mx[m]);\n"
    "  s[m] = sum(n) e[m, n];\n"
    "  Y[m, n] = e[m, n] / s[m];\n"
    "}\n"
    "mapping chained for chain on acc { tile SRAM: k 16; fuse C, e, h, Y at SRAM; }\n"
    "mapping held for kept on acc { tile SRAM: k 16; fuse C, e, h, Y, Z at SRAM; }\n"
    "mapping rows for soft on acc { tile SRAM: k 16, n 8; fuse C, mx, e, s, Y at SRAM; }\n"
    "mapping below for chain on acc { tile SRAM: k 16; fuse C, e, h, Y at DRAM; }\n";

static Arena arena;
static SourceManager sources;
static DiagSink diags;

/* The maker's footprint of tensor `name` in memory `mem` of group 0. */
static const Footprint *footprint_of(const Schedule *s, const char *mem, const char *name) {
    int m = unit_memory_id(s->arch, mem);
    for (int k = 0; k < s->groups[0].footprint_count; k++) {
        const Footprint *f = &s->groups[0].footprints[k];
        if (f->memory == m && f->reader < 0 && strcmp(s->op->tensors[f->tensor].name, name) == 0)
            return f;
    }
    return NULL;
}

/* The room group 0 takes in memory `mem`. */
static double need_at(const Schedule *s, const char *mem) {
    int m = unit_memory_id(s->arch, mem);
    double need = 0;
    for (int k = 0; k < s->groups[0].footprint_count; k++)
        if (s->groups[0].footprints[k].memory == m)
            need += footprint_need(&s->groups[0].footprints[k]);
    return need;
}

/* ACC's need in group 0 and the number of capacity excesses (E0350); a
 * schedule that fits is run by the interpreter too. */
static void check_need(const Schedule *s, const char *name, double need, int excesses) {
    CHECK_EXACT(need_at(s, "ACC"), need, arena_printf(&arena, "%s: ACC need", name));
    CHECK(s->excess_count == excesses,
          arena_printf(&arena, "%s: %d capacity excess(es)", name, excesses));
    if (excesses == 0) check_verified(s, arena_printf(&arena, "%s: the interpreter agrees", name));
}

/* The chain's e and h in ACC: the bytes each writes in place, then
 * check_need. */
static void check_e_h(const Schedule *s, const char *name, double e_in_place, double h_in_place,
                      double need, int excesses) {
    const Footprint *e = footprint_of(s, "ACC", "e"), *h = footprint_of(s, "ACC", "h");
    CHECK(e && h, arena_printf(&arena, "%s: e and h are held in ACC", name));
    if (e && h) {
        CHECK_EXACT(e->in_place, e_in_place, arena_printf(&arena, "%s: e's bytes in place", name));
        CHECK_EXACT(h->in_place, h_in_place, arena_printf(&arena, "%s: h's bytes in place", name));
    }
    check_need(s, name, need, excesses);
}

int main(void) {
    sources_init(&sources, &arena);
    diags_init(&diags, &arena);
    SourceFile *f = sources_add(&sources, "inplace.cmt", text, strlen(text));
    CheckOptions opts;
    memset(&opts, 0, sizeof opts);
    Program *p = check_program(&arena, &sources, &diags, f, &opts);
    if (!p || diags.error_count) {
        diags_render_text(stdout, &sources, &diags, (DiagRenderOptions){false});
        CHECK(false, "the in-place file checks");
        return unit_finish();
    }

    /* chained: the results live in ACC, one 16 x 16 tile each: C fp32
       1024 B, e fp32 1024 B, h bf16 512 B, Y[16] fp32 64 B; 2624 B side
       by side, over ACC's 2048.  e reads C point for point and is C's last
       reader: e is written over C (1024 B in place).  h reads e point for
       point and is its last reader: h's 512 B go in e's storage, which is
       C's 1024 B.  Y reduces: it takes its own 64 B.  Need: 1024 + 0 + 0 +
       64 = 1088 B, which fits. */
    Schedule *s = lower_mapping(&arena, unit_mapping(p, "chained"), true, NULL);
    const Footprint *c = footprint_of(s, "ACC", "C"), *e = footprint_of(s, "ACC", "e"),
                    *h = footprint_of(s, "ACC", "h"), *y = footprint_of(s, "ACC", "Y");
    CHECK(c && e && h && y, "chained: C, e, h and Y are held in ACC");
    if (c && e && h && y) {
        CHECK_EXACT(c->bytes, 1024, "chained: C[16,16] fp32 1024 B");
        CHECK_EXACT(c->in_place, 0, "chained: C is made by a contraction, in its own tile");
        CHECK_EXACT(e->bytes, 1024, "chained: e[16,16] fp32 1024 B");
        CHECK_EXACT(e->in_place, 1024, "chained: e written over C");
        CHECK(e->host >= 0 && strcmp(s->op->tensors[e->host].name, "C") == 0, "chained: e's host C");
        CHECK_EXACT(h->bytes, 512, "chained: h[16,16] bf16 512 B");
        CHECK_EXACT(h->in_place, 512, "chained: h written over e (C's storage)");
        CHECK_EXACT(y->in_place, 0, "chained: Y reduces, its own 64 B");
    }
    check_need(s, "chained", 1088, 0);

    /* held: Z reads e after h, so h cannot overwrite e: e over C (1024 B
       in place), h its own 512 B.  Need: 1024 + 0 + 512 + 64 + 64 = 1664
       B, which still fits. */
    s = lower_mapping(&arena, unit_mapping(p, "held"), true, NULL);
    check_e_h(s, "held", 1024, 0, 1664, 0);

    /* rows: a softmax walked in two n tiles of 8.  e waits for the row's
       max and Y for its sum, so C and e are each live as both tiles of a
       row: 2 x 16 x 8 x 4 = 1024 B each.  e reads C point for point, is
       its last reader and is live across the same loop: written over it
       tile for tile (1024 B in place).  mx and s 16 x 4 = 64 B each; Y
       leaves the group, its own 16 x 8 x 4 = 512 B.  Need 1024 + 64 + 0 +
       64 + 512 = 1664 B, where side by side 2688 B overflow the 2 KiB. */
    s = lower_mapping(&arena, unit_mapping(p, "rows"), true, NULL);
    c = footprint_of(s, "ACC", "C");
    e = footprint_of(s, "ACC", "e");
    CHECK(c && e, "rows: C and e are held in ACC");
    if (c && e) {
        CHECK_EXACT(c->live_tiles, 2, "rows: C live as the row's 2 tiles");
        CHECK_EXACT(e->bytes, 1024, "rows: e 2 x 512 B");
        CHECK_EXACT(e->in_place, 1024, "rows: e written over C tile for tile");
    }
    check_need(s, "rows", 1664, 0);

    /* below: the chain fused at DRAM, the outermost level.  Its ACC tiles
       lie below the fusion level, where a tile stays until the next one
       replaces it: nothing is written in place, and C 1024 + e 1024 + h
       512 + Y 64 = 2624 B overflow ACC's 2048 B by 576 B. */
    s = lower_mapping(&arena, unit_mapping(p, "below"), true, NULL);
    check_e_h(s, "below", 0, 0, 2624, 1);
    return unit_finish();
}
