/* test_stages.c — a step of micro-batches through a pipeline's stages
 * (docs/cost-model.md 13.2), computed by hand: the section's worked
 * example (a scaling layer, 4 stages on a slow link, so the sends set the
 * pace), its three schedules and plain accumulation, and a training step
 * of an MLP whose weight-gradient reduction runs once per step. */
#include "program.h"

static Arena arena;

static const char *text =
    "arch line {\n"
    "  clock 1 GHz;\n"
    "  cluster stage[s = 4] ring { link_bandwidth 1 GB/s; hop_latency 1 us; }\n"
    "  memory DRAM { bandwidth 8 TB/s; }\n"
    "  compute simd vector { throughput 1 op/cycle; }\n"
    "}\n"
    "op scale<M = 1000> {\n"
    "  in X[M] : fp32;\n"
    "  out Y[M] : fp32;\n"
    "  Y[m] = X[m] * 2;\n"
    "}\n"
    "mapping one_f_one_b for scale on line { pipeline s; microbatches 6; repeat 8; }\n"
    "mapping gpipe for scale on line { pipeline s gpipe; microbatches 6; repeat 8; }\n"
    "mapping interleaved for scale on line { pipeline s interleaved 2; microbatches 6; repeat "
    "8; }\n"
    "mapping accumulate for scale on line { microbatches 6; repeat 8; }\n"
    "mapping uneven for scale on line { pipeline s; microbatches 6; repeat 9; }\n"
    "arch pods {\n"
    "  clock 1 GHz;\n"
    "  cluster stage[s = 4] ring { link_bandwidth 8 GB/s; hop_latency 1 us; }\n"
    "  cluster chip[x = 2] ring { link_bandwidth 16 GB/s; hop_latency 100 ns; }\n"
    "  memory HBM { capacity 16 MiB; bandwidth 64 GB/s; }\n"
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
    "mapping piped for mlp on pods {\n"
    "  phase train; pipeline s; microbatches 8; spatial m -> x; tile SRAM: m 32; repeat 8;\n"
    "}\n"
    "arch pod {\n"
    "  clock 1 GHz;\n"
    "  cluster chip[x = 2] ring { link_bandwidth 16 GB/s; hop_latency 100 ns; }\n"
    "  memory HBM { capacity 16 MiB; bandwidth 64 GB/s; }\n"
    "  memory SRAM { capacity 1 MiB; bandwidth 256 GB/s; }\n"
    "  compute mac matrix { throughput 256 MAC/cycle; }\n"
    "  compute simd vector { throughput 32 op/cycle; }\n"
    "}\n"
    "mapping flat for mlp on pod { phase train; spatial m -> x; tile SRAM: m 32; }\n";

/* The worked example: one group, 1000 element ops at 1 op/ns (1000 ns)
 * and 8000 B at 8 TB/s (1 ns), one tile so nothing overlaps: 1001 ns a
 * layer.  8 layers on 4 stages: 2 each, F = 2002 ns.  Y (4000 B) goes to
 * the next stage in 1 us + 4000 B / 1 GB/s = 5000 ns. */
static void check_step(const Program *p, const char *name, double step, double bubble,
                       double sends, double in_flight) {
    const Schedule *s = unit_lowered(&arena, p, name);
    CHECK(s && s->pipeline.present, arena_printf(&arena, "%s: a step of micro-batches", name));
    if (!s || !s->pipeline.present) return;
    const SchedPipeline *pp = &s->pipeline;
    CHECK_NEAR(pp->forward_s, 1001e-9, 1e-12, arena_printf(&arena, "%s: a layer 1001 ns", name));
    CHECK_NEAR(pp->compute_s, 6 * pp->stage_forward_s, 1e-12,
               arena_printf(&arena, "%s: 6 micro-batches", name));
    CHECK_NEAR(pp->bubble_s, bubble, 1e-9, arena_printf(&arena, "%s: bubble %g s", name, bubble));
    CHECK_NEAR(pp->send_s, sends, 1e-9, arena_printf(&arena, "%s: sends %g s", name, sends));
    CHECK_NEAR(pp->step_s, step, 1e-9, arena_printf(&arena, "%s: step %g s", name, step));
    CHECK_NEAR(s->cost.latency_s, step, 1e-9, arena_printf(&arena, "%s: the latency", name));
    CHECK_NEAR(pp->in_flight, in_flight, 1e-12,
               arena_printf(&arena, "%s: %g micro-batches in flight", name, in_flight));
}

int main(void) {
    SourceManager sm;
    DiagSink diags;
    Program *p = unit_load_named(&arena, &sm, &diags, "stages.cmt", text);
    if (diags.error_count) diags_render_text(stdout, &sm, &diags, (DiagRenderOptions){false});
    CHECK(p && diags.error_count == 0, "the pipelined mappings check");
    if (!p || diags.error_count) return unit_finish();

    /* 1F1B, p = 4, v = 1, m = 6: the sends (5000 ns) outpace the work
       (2002 ns), so each micro-batch after the first takes 5000 ns:
       5 * 5000 + 2002 * (1 + 3) + 3 * 5000 = 48 008 ns, of which compute
       6 * 2002, bubble 3 * 2002 and sends 5 * (5000 - 2002) + 3 * 5000 */
    check_step(p, "one_f_one_b", 48008e-9, 6006e-9, 29990e-9, 4);
    const Schedule *s = unit_lowered(&arena, p, "one_f_one_b");
    if (s) {
        CHECK_NEAR(s->pipeline.send_forward_bytes, 4000, 1e-12, "Y: 4000 B forward");
        CHECK_NEAR(s->pipeline.send_forward_s, 5000e-9, 1e-12, "a send: 1 us + 4 us");
        CHECK(s->pipeline.send_backward_bytes == 0, "a forward pass sends nothing back");
        CHECK_NEAR(s->pipeline.layers, 2, 1e-12, "2 layers a stage");
    }
    /* GPipe takes as long and holds all 6 micro-batches */
    check_step(p, "gpipe", 48008e-9, 6006e-9, 29990e-9, 6);
    /* interleaved 2: each stage sends twice per micro-batch (period 10 000
       ns), the bubble halves, 7 boundaries: 5 * 10 000 + 2002 * 2.5 +
       7 * 5000 = 90 005 ns; in flight 4 + 3 / 2 */
    check_step(p, "interleaved", 90005e-9, 3003e-9, 5 * (10000 - 2002) * 1e-9 + 35000e-9, 5.5);
    /* accumulation without a pipeline: 6 micro-batches of 8 layers */
    check_step(p, "accumulate", 6 * 8 * 1001e-9, 0, 0, 1);
    /* 9 layers on 4 stages: the busiest runs 3 */
    const Schedule *u = unit_lowered(&arena, p, "uneven");
    if (u) CHECK_NEAR(u->pipeline.layers, 3, 1e-12, "uneven: 3 layers on the busiest stage");

    /* training: the MLP, m over the 2 chips of a stage, 8 layers on 4
       stages, 8 micro-batches under 1F1B: a device holds 2 layers'
       weights, gradients and optimizer state (64 + 64 + 384 KiB each) and
       4 micro-batches of their activations (X 256 * 64 * 2, H and G 256 *
       256 * 2: 288 KiB a layer) */
    const Schedule *t = unit_lowered(&arena, p, "piped");
    CHECK(t && t->training.present && t->pipeline.present, "piped: a pipelined training step");
    if (t && t->training.present) {
        const SchedTraining *tr = &t->training;
        const SchedPipeline *pp = &t->pipeline;
        CHECK_NEAR(tr->weights, 2 * 65536.0, 1e-12, "piped: 2 layers of weights");
        CHECK_NEAR(tr->optimizer, 2 * 393216.0, 1e-12, "piped: 2 layers of Adam state");
        CHECK_NEAR(tr->activations, 2 * 4 * 294912.0, 1e-12,
                   "piped: 4 micro-batches of 2 layers' activations");
        /* Y and dX, 256 * 64 * 2 B on each chip, 2 chips through the
           stage's link: 65 536 B, 1 us + 65 536 / 8 GB/s */
        CHECK_NEAR(pp->send_forward_bytes, 65536, 1e-12, "piped: Y over the stage link");
        CHECK_NEAR(pp->send_backward_bytes, 65536, 1e-12, "piped: dX back");
        CHECK_NEAR(pp->send_forward_s, 1e-6 + 65536 / 8e9, 1e-12, "piped: a send 9.192 us");
        /* the weight gradients are reduced over x once per step, not in
           their groups: what the groups' network carries plus the deferred
           reductions is what one stage's mapping without micro-batches carries */
        const Schedule *f = unit_lowered(&arena, p, "flat");
        double group_net = 0, flat_net = 0;
        for (int g = 0; g < t->group_count; g++) group_net += t->groups[g].cost.network_s;
        for (int g = 0; f && g < f->group_count; g++) flat_net += f->groups[g].cost.network_s;
        CHECK(pp->reduction_s > 0, "piped: weight-gradient reductions deferred");
        CHECK_NEAR(group_net + pp->reduction_s, flat_net, 1e-9,
                   "piped: the reductions leave their groups");
        double work = pp->stage_forward_s + pp->stage_backward_s;
        CHECK_NEAR(pp->step_s,
                   8 * work + 3 * work + 3 * 2 * pp->send_forward_s + 2 * pp->update_s +
                       2 * pp->reduction_s,
                   1e-9, "piped: 8 (F + B) + 3 (F + B) + 3 sends each way + 2 updates + 2 "
                         "reductions");
        CHECK_NEAR(tr->model_flop, 8 * 8 * 2.0 * 6 * 256 * 64 * 256 * 2, 1e-12,
                   "piped: 8 micro-batches x 8 layers x 6 contractions");
        CHECK_NEAR(tr->peak_flops, 2.0 * 256e9 * 8, 1e-12, "piped: the peak of all 8 chips");
    }
    return unit_finish();
}
