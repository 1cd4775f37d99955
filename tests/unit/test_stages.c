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
    "mapping interleaved for scale on line { pipeline s interleaved 2; microbatches 8; repeat "
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
    "arch pod : pods { cluster stage[s = 1] ring {} }\n" /* one stage of pods */
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

/* A pipeline of p stages without a program: the schedule alone, its
 * mapping and schedule in *mm and *s (which must outlive its use). */
static void bare_pipeline(IrMapping *mm, Schedule *s, PipeSchedule schedule, int p, int v, int m,
                          double f, double b, double send, Overlap overlap) {
    static IrArch arch;
    *mm = (IrMapping){0};
    mm->pipeline.full_arch = &arch;
    mm->pipeline.schedule = schedule;
    mm->overlap = overlap;
    *s = (Schedule){0};
    s->m = mm;
    s->pipeline = (SchedPipeline){.present = true, .stages = p, .chunks = v, .micro = m};
    s->pipeline.stage_forward_s = f;
    s->pipeline.stage_backward_s = b;
    s->pipeline.send_forward_s = s->pipeline.send_backward_s = send;
}

static double run_with(PipeSchedule schedule, int p, int v, int m, double f, double b,
                       double send, Overlap overlap) {
    IrMapping mm;
    Schedule s;
    bare_pipeline(&mm, &s, schedule, p, v, m, f, b, send, overlap);
    PipeOp *ops;
    long n;
    return pipeline_simulate(&arena, &s, 1 << 20, &ops, &n);
}

static double run(PipeSchedule schedule, int p, int v, int m, double f, double b, double send) {
    return run_with(schedule, p, v, m, f, b, send, OVERLAP_FULL);
}

/* Past the slot limit the step is extrapolated from two runs (section
 * 13.2); the whole run of 1000 micro-batches is the oracle, the limit
 * cut to 4 x 400 slots (runs of 400 and 200). */
static void check_steady(PipeSchedule schedule, int v, Overlap overlap, const char *what) {
    IrMapping mm;
    Schedule s;
    bare_pipeline(&mm, &s, schedule, 4, v, 1000, 1, 2, 0.5, overlap);
    double whole = run_with(schedule, 4, v, 1000, 1, 2, 0.5, overlap);
    double steady = pipeline_steady(&s, 4L * v * 400);
    CHECK(whole > 0 && fabs(steady - whole) <= 1e-9 * whole,
          arena_printf(&arena, "%s, 1000 micro-batches: %.6g extrapolated, %.6g run whole",
                       what, steady, whole));
}

/* Timelines by hand (docs/cost-model.md 13.2, "The schedule"), F = 1 and
 * B = 2 a stage, sends of 0.5. */
static void check_timelines(void) {
    /* 1F1B, 2 stages, 2 micro-batches.  Stage 0 runs F0 F1 B0 B1, stage 1
       F0 B0 F1 B1.  s0: F0 [0, 1], F1 [1, 2]; s1: F0 [1.5, 2.5], B0
       [2.5, 4.5], F1 [4.5, 5.5], B1 [5.5, 7.5]; s0: B0 [5, 7] (its
       gradient arrives at 4.5 + 0.5), B1 [8, 10] */
    CHECK_NEAR(run(PIPE_1F1B, 2, 1, 2, 1, 2, 0.5), 10, 1e-12, "1F1B 2 x 2: ends at 10");
    /* the same under `overlap local`: a stage waits for each send.  s0: F0
       [0, 1] + send to 1.5, F1 [1.5, 2.5] + send to 3; s1: F0 [1.5, 2.5],
       B0 [2.5, 4.5] + send to 5, F1 [5, 6], B1 [6, 8] + send to 8.5; s0:
       B0 [5, 7], B1 [8.5, 10.5] */
    CHECK_NEAR(run_with(PIPE_1F1B, 2, 1, 2, 1, 2, 0.5, OVERLAP_LOCAL), 10.5, 1e-12,
               "1F1B 2 x 2, blocking sends: ends at 10.5");
    /* GPipe, the same: s0 F0 F1 B0 B1 as well, the same times */
    CHECK_NEAR(run(PIPE_GPIPE, 2, 1, 2, 1, 2, 0.5), 10, 1e-12, "GPipe 2 x 2: ends at 10");
    /* interleaved, 2 stages of 2 chunks (F 0.5 + 0.5, B 1 + 1 a chunk...
       here F = 2 and B = 4 a stage: 1 and 2 a chunk), 2 micro-batches.
       Stage 0 (warm-up 4): F(c0,0) [0,1] F(c0,1) [1,2] F(c1,0) [3,4]
       F(c1,1) [4,5] B(c1,0) [8,10] B(c1,1) [11,13] B(c0,0) [13,15]
       B(c0,1) [16,18]; stage 1 (warm-up 2): F(c0,0) [1.5,2.5] F(c0,1)
       [2.5,3.5] F(c1,0) [4.5,5.5] B(c1,0) [5.5,7.5] F(c1,1) [7.5,8.5]
       B(c1,1) [8.5,10.5] B(c0,0) [10.5,12.5] B(c0,1) [13.5,15.5] */
    CHECK_NEAR(run(PIPE_INTERLEAVED, 2, 2, 2, 2, 4, 0.5), 18, 1e-12,
               "interleaved 2 x 2 x 2: ends at 18");
}

/* Without sends the schedule takes m (F + B) + (p - 1)(F + B) / v, the
 * closed form of docs/cost-model.md 13.2, for every schedule, stage count
 * and micro-batch count (the interleaved one with micro-batches in whole
 * groups of p); with sends it never takes less. */
static void check_against_closed_form(void) {
    int cases = 0, equal = 0, not_less = 0, with_sends = 0;
    for (int sc = 0; sc < pipe_schedule_count; sc++)
        for (int p = 1; p <= 6; p++)
            for (int v = 1; v <= 3; v++)
                for (int m = 1; m <= 12; m++) {
                    PipeSchedule schedule = pipe_schedule_ids[sc];
                    if ((schedule != PIPE_INTERLEAVED && v > 1) ||
                        (schedule == PIPE_INTERLEAVED && m % p))
                        continue;
                    double closed = (m + (p - 1) / (double)v) * 3;
                    cases++;
                    equal += fabs(run(schedule, p, v, m, 1, 2, 0) - closed) < 1e-9;
                    with_sends++;
                    not_less += run(schedule, p, v, m, 1, 2, 0.7) >= closed - 1e-9;
                }
    CHECK(cases > 200 && equal == cases,
          arena_printf(&arena, "no sends: the schedule meets the closed form in %d of %d cases",
                       equal, cases));
    CHECK(not_less == with_sends,
          arena_printf(&arena, "sends never shorten the step (%d of %d)", not_less, with_sends));
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
    /* interleaved 2, 8 micro-batches: the links carry 16 sends a stage;
       the schedule run pass by pass (checked against the timelines
       below) takes 102.0 us; the bubble halves; in flight 4 + 3 / 2 */
    const Schedule *il = unit_lowered(&arena, p, "interleaved");
    if (il) {
        CHECK_NEAR(il->pipeline.bubble_s, 3003e-9, 1e-9, "interleaved: bubble 3 x 2002 / 2");
        CHECK_NEAR(il->pipeline.in_flight, 5.5, 1e-12, "interleaved: 5.5 in flight");
        CHECK(il->pipeline.step_s > 8 * 2002e-9 + 3003e-9, "interleaved: the sends cost");
    }
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
        CHECK_NEAR(pp->bubble_s, 3 * work, 1e-12, "piped: bubble 3 (F + B)");
        CHECK_NEAR(pp->step_s,
                   8 * work + 3 * work + pp->send_s + 2 * pp->update_s + 2 * pp->reduction_s,
                   1e-12, "piped: 8 (F + B) + 3 (F + B) + sends + 2 updates + 2 reductions");
        PipeOp *ops;
        long n;
        double makespan = pipeline_simulate(&arena, t, 1 << 20, &ops, &n);
        CHECK_NEAR(makespan, 11 * work + pp->send_s, 1e-12, "piped: the schedule's end");
        CHECK(n == 2 * 4 * 8 && pp->simulated, "piped: 64 passes, run one by one");
        CHECK_NEAR(tr->model_flop, 8 * 8 * 2.0 * 6 * 256 * 64 * 256 * 2, 1e-12,
                   "piped: 8 micro-batches x 8 layers x 6 contractions");
        CHECK_NEAR(tr->peak_flops, 2.0 * 256e9 * 8, 1e-12, "piped: the peak of all 8 chips");
        /* the optimizer's weights (docs/optimizer.md 4.1), by hand: L = 2
           layers a stage, m = 8, p = 4, v = 1: a forward or backward group
           counts 2 (8 + 3) = 22 times, an update group and a deferred
           reduction 2 times; energies 8 layers x 8 micro-batches = 64,
           and 8 */
        StepWeights w = step_weights(t->m);
        CHECK(w.pass_latency == 22 && w.update_latency == 2 && w.once_latency == 2,
              "piped: latency weights 22, 2, 2");
        CHECK(w.pass_energy == 64 && w.update_energy == 8 && w.once_energy == 8,
              "piped: energy weights 64, 8, 8");
        /* so the weighted groups are the step without its sends */
        double weighted = 0;
        for (int g = 0; g < t->group_count; g++) {
            const SchedGroup *sg = &t->groups[g];
            bool update = t->op->stmts[sg->stmts[0]].role == SR_UPDATE;
            weighted += sg->cost.latency_s * (update ? w.update_latency : w.pass_latency);
        }
        weighted += w.once_latency * pp->reduction_s;
        CHECK_NEAR(weighted, pp->step_s - pp->send_s, 1e-12,
                   "piped: the weighted groups are the closed form");
    }
    /* interleaved 2 over 4 stages, 8 micro-batches, 8 layers: L = 2, a
       pass counts 2 (8 + 3 / 2) = 19 times */
    if (il) {
        StepWeights w = step_weights(il->m);
        CHECK_NEAR(w.pass_latency, 19, 1e-12, "interleaved: a pass counts 19 times");
    }
    /* without micro-batches every weight is 1 */
    const Schedule *flat = unit_lowered(&arena, p, "flat");
    if (flat) {
        StepWeights w = step_weights(flat->m);
        CHECK(w.pass_latency == 1 && w.update_latency == 1 && w.pass_energy == 1,
              "flat: weights 1");
    }
    check_timelines();
    check_against_closed_form();
    check_steady(PIPE_1F1B, 1, OVERLAP_FULL, "1F1B with sends");
    check_steady(PIPE_GPIPE, 1, OVERLAP_FULL, "GPipe with sends");
    check_steady(PIPE_INTERLEAVED, 2, OVERLAP_FULL, "interleaved 2 with sends");
    check_steady(PIPE_1F1B, 1, OVERLAP_LOCAL, "1F1B, blocking sends");
    /* a count past any int: the schedule is not run pass by pass */
    {
        static IrArch arch;
        IrMapping mm = {0};
        mm.pipeline.full_arch = &arch;
        Schedule big = {0};
        big.m = &mm;
        big.pipeline = (SchedPipeline){.present = true, .stages = 4, .chunks = 1, .micro = 9e12};
        big.pipeline.stage_forward_s = 1;
        PipeOp *ops;
        long n;
        CHECK(pipeline_simulate(&arena, &big, 1 << 20, &ops, &n) < 0 && n == 0,
              "9e12 micro-batches: not simulated");
    }
    return unit_finish();
}
