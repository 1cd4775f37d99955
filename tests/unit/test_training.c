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
    "mapping forward for mlp on shared { spatial m -> x; tile SRAM: m 32; }\n"
    "mapping gelu_split for mlp on own { phase train; spatial for G: m -> x; tile SRAM: m 32; }\n";

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
    /* kept where made (docs/cost-model.md 13, "kept where made"): only
       the gelu is split (by m); every chip holds the weights whole (2 *
       64 * 256 * 2 B), their gradients and state.  Kept: X whole (512 *
       64 * 2), H whole (made unsplit: 512 * 256 * 2) and G as its maker
       left it, a quarter of the rows (128 * 256 * 2 = 65536 B), though Y
       and dW2 read all of it: each receives the other chips' rows again.
       At the largest reader G would count 262144 B. */
    check_holds(p, "gelu_split", 65536, 65536, 393216, 65536 + 262144 + 65536);
    /* the step by phase (docs/cost-model.md 13.1): every group counted
       once, so the phases add up to the latency; model work 2 x 6
       contractions of 512 * 64 * 256 MACs (two forward, four gradient);
       peak 2 * 256 MAC/cycle * 1 GHz * 4 chips */
    const Schedule *k = unit_lowered(&arena, p, "kept");
    const Schedule *r = unit_lowered(&arena, p, "recomputed");
    const Schedule *l = unit_lowered(&arena, p, "layers");
    if (k && r && l) {
        const SchedTraining *t = &k->training;
        CHECK_NEAR(t->forward_s + t->recompute_s + t->backward_s + t->update_s,
                   k->cost.latency_s, 1e-12, "kept: the phases add up to the latency");
        CHECK(t->recompute_s == 0 && t->forward_s > 0 && t->backward_s > 0 && t->update_s > 0,
              "kept: forward, backward and update, nothing recomputed");
        CHECK_NEAR(t->model_flop, 2.0 * 6 * 512 * 64 * 256, 1e-12,
                   "kept: model work 100 663 296 FLOP");
        CHECK_NEAR(t->peak_flops, 2.0 * 256 * 1e9 * 4, 1e-12, "kept: peak 2.048 TFLOP/s");
        CHECK_NEAR(t->achieved_flops, t->model_flop / k->cost.latency_s, 1e-12,
                   "kept: achieved = model work / latency");
        /* the recomputed copies (H_r, G_r) are time, not model work */
        CHECK(r->training.recompute_s > 0, "recomputed: the copies take time");
        CHECK_NEAR(r->training.model_flop, t->model_flop, 1e-12,
                   "recomputed: the same model work");
        CHECK_NEAR(l->training.model_flop, 48 * t->model_flop, 1e-12, "layers: 48 times the work");
        /* m over 4 chips: dW1 and dW2 are reduced, X W1 and G W2 need none */
        CHECK(t->gradient_reduce_s > 0, "kept: the weight gradients are reduced");
    }
    const Schedule *f = unit_lowered(&arena, p, "forward");
    CHECK(f && !f->training.present, "forward: no training memory");
    arena_free_all(&arena);
    return unit_finish();
}
