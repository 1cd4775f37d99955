/* test_training.c — what a training step holds per device
 * (docs/cost-model.md 13), computed by hand for the section's worked
 * example and for the same MLP tensor parallel over 4 chips. */
#include "program.h"

static Arena arena;

static const char *text =
    "arch shared {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 64 GB/s; }\n"
    "  cluster chip[x = 4] ring { link_bandwidth 16 GB/s; hop_latency 100 ns; }\n"
    "  memory SRAM { capacity 1 MiB; bandwidth 256 GB/s; }\n"
    "  compute mac matrix { throughput 256 MAC/cycle; }\n"
    "  compute simd vector { throughput 32 op/cycle; }\n"
    "}\n"
    "arch own {\n"
    "  clock 1 GHz;\n"
    "  cluster chip[x = 4] ring { link_bandwidth 16 GB/s; hop_latency 100 ns; }\n"
    "  memory HBM { capacity 1 GB; bandwidth 64 GB/s; }\n"
    "  memory SRAM { capacity 1 MiB; bandwidth 256 GB/s; }\n"
    "  compute mac matrix { throughput 256 MAC/cycle; }\n"
    "  compute simd vector { throughput 32 op/cycle; }\n"
    "}\n"
    "op mlp<M = 512, E = 64, F = 256> {\n"
    "  in    X[M, E]  : bf16;\n"
    "  param W1[E, F] : bf16;\n"
    "  param W2[F, E] : bf16;\n"
    "  out   Y[M, E]  : bf16;\n"
    "  H[m, f] = X[m, e] * W1[e, f];\n"
    "  G[m, f] = gelu(H[m, f]);\n"
    "  Y[m, e] = G[m, f] * W2[f, e];\n"
    "}\n"
    "mapping kept for mlp on shared { phase train; spatial m -> x; tile SRAM: m 32; }\n"
    "mapping recomputed for mlp on shared {\n"
    "  phase train; recompute full; spatial m -> x; tile SRAM: m 32;\n"
    "}\n"
    "mapping layers for mlp on shared { phase train; spatial m -> x; tile SRAM: m 32; repeat 48; }\n"
    "mapping tensor_parallel for mlp on own { phase train; spatial f -> x; tile SRAM: m 32; }\n"
    "mapping forward for mlp on shared { spatial m -> x; tile SRAM: m 32; }\n";

static void check_holds(const Program *p, const char *name, double w, double g, double o,
                        double a) {
    const Schedule *s = unit_lowered(&arena, p, name);
    CHECK(s && s->training.present, arena_printf(&arena, "%s: a training step", name));
    if (!s || !s->training.present) return;
    const SchedTraining *t = &s->training;
    CHECK_NEAR(t->weights, w, 1e-12, arena_printf(&arena, "%s: weights %.0f B", name, w));
    CHECK_NEAR(t->gradients, g, 1e-12, arena_printf(&arena, "%s: gradients %.0f B", name, g));
    CHECK_NEAR(t->optimizer, o, 1e-12, arena_printf(&arena, "%s: optimizer state %.0f B", name, o));
    CHECK_NEAR(t->activations, a, 1e-12, arena_printf(&arena, "%s: activations %.0f B", name, a));
    CHECK_NEAR(t->total, w + g + o + a, 1e-12, arena_printf(&arena, "%s: the total", name));
}

int main(void) {
    SourceManager sm;
    DiagSink diags;
    Program *p = unit_load_named(&arena, &sm, &diags, "training.cmt", text);
    if (diags.error_count) diags_render_text(stdout, &sm, &diags, (DiagRenderOptions){false});
    CHECK(p && diags.error_count == 0, "the training mappings check");
    if (!p || diags.error_count) return unit_finish();
    /* DRAM above the chips holds whole tensors.  Weights 2 * 64 * 256 * 2
       B; gradients the same; optimizer 3 * 2 * 64 * 256 * 4 B; kept: X
       512 * 64 * 2, H and G 512 * 256 * 2 each */
    check_holds(p, "kept", 65536, 65536, 393216, 65536 + 262144 + 262144);
    /* recompute full: H and G are made again from X, which alone is kept */
    check_holds(p, "recomputed", 65536, 65536, 393216, 65536);
    /* 48 layers, each its own */
    check_holds(p, "layers", 48 * 65536.0, 48 * 65536.0, 48 * 393216.0, 48 * 589824.0);
    /* HBM on each chip, f over the 4 chips: W1[e, f] and W2[f, e] are 64
       * 64 * 2 B each on a chip; X whole (512 * 64 * 2); H and G 512 * 64 *
       2 each */
    check_holds(p, "tensor_parallel", 16384, 16384, 3 * 2 * 64 * 64 * 4.0,
                65536 + 65536 + 65536);
    const Schedule *f = unit_lowered(&arena, p, "forward");
    CHECK(f && !f->training.present, "forward: no training memory");
    arena_free_all(&arena);
    return unit_finish();
}
