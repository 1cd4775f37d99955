/* test_model.c — a model's step (docs/language.md 5.13, docs/cost-model.md
 * 13.3) against independent oracles:
 *  - without a pipeline, the parts run on the layers' devices one after
 *    another: the model's step is the sum of the three mappings' own steps,
 *    each with the layers' micro-batches written in the source (pass_stages
 *    composes each, apart from model.c);
 *  - with a pipeline of 2 stages, 1F1B over 4 micro-batches on links fast
 *    enough that no send queues, the schedule is run again here by hand
 *    (stage 0: F0, then F1 B0 F2 B1 F3 B2, then B3; stage 1: F0 B0 F1 B1 F2
 *    B2 F3 B3; a stage-1 forward waits for stage 0's and its send, a
 *    stage-0 backward for stage 1's and its send) with the embedding's passes on stage 0 and the head's
 *    on stage 1 longer, then the layers' update and the slower end's. */
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <math.h>
#include <string.h>

static const char *program_text =
    "arch pods {\n"
    "  clock 1 GHz;\n"
    "  cluster stage[s = 2] ring { link_bandwidth 1 PB/s; hop_latency 0 s; }\n"
    "  cluster chip[x = 2] ring { link_bandwidth 16 GB/s; hop_latency 100 ns; }\n"
    "  memory HBM { capacity 64 MiB; bandwidth 64 GB/s; }\n"
    "  memory SRAM { capacity 4 MiB; bandwidth 256 GB/s; }\n"
    "  compute mac matrix { throughput 256 MAC/cycle; }\n"
    "  compute simd vector { throughput 32 op/cycle; }\n"
    "}\n"
    "arch pod_stage : pods { cluster stage[s = 1] ring {} }\n"
    "op layer<M = 64, E = 128, F = 512> {\n"
    "  in x[M, E] : bf16;\n  param W1[E, F] : bf16;\n  param W2[F, E] : bf16;\n"
    "  out y[M, E] : bf16;\n"
    "  h[m, f] = x[m, e] * W1[e, f];\n  g[m, f] = relu(h[m, f]);\n"
    "  y[m, e] = g[m, f] * W2[f, e];\n}\n"
    "op embedding<M = 64, E = 128> {\n"
    "  in tok[M, E] : bf16;\n  param P[M, E] : bf16;\n  out x[M, E] : bf16;\n"
    "  x[m, e] = tok[m, e] + P[m, e];\n}\n"
    "op lm_head<M = 64, E = 128, V = 1024> {\n"
    "  in x[M, E] : bf16;\n  param Wv[E, V] : bf16;\n  out lg[M, V] : bf16;\n"
    "  lg[m, v] = x[m, e] * Wv[e, v];\n}\n"
    /* the pipeline: 2 stages, 4 micro-batches, 4 layers */
    "mapping layers for layer on pods {\n"
    "  phase train;\n  pipeline s;\n  microbatches 4;\n  repeat 4;\n"
    "  spatial m -> x;\n  tile SRAM: m 16;\n}\n"
    "mapping emb for embedding on pod_stage { phase train; spatial m -> x; }\n"
    "mapping head for lm_head on pod_stage { phase train; spatial m -> x; tile SRAM: m 16; }\n"
    /* the same parts with the layers' micro-batches, for the oracle */
    "mapping emb_mb for embedding on pod_stage { phase train; microbatches 4; spatial m -> x; }\n"
    "mapping head_mb for lm_head on pod_stage {\n"
    "  phase train;\n  microbatches 4;\n  spatial m -> x;\n  tile SRAM: m 16;\n}\n"
    /* one set of devices: the layers of one stage, micro-batches alone */
    "mapping flat for layer on pod_stage {\n"
    "  phase train;\n  microbatches 4;\n  repeat 4;\n  spatial m -> x;\n  tile SRAM: m 16;\n}\n"
    "model piped { embed emb; layers layers; head head; }\n"
    "model plain { embed emb; layers flat; head head; }\n";

static bool near(double a, double b) {
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-15;
}

static const IrModel *model_named(const Program *p, const char *name) {
    for (int i = 0; i < p->model_count; i++)
        if (strcmp(p->models[i]->name, name) == 0) return p->models[i];
    return NULL;
}

int main(void) {
    SourceManager sm;
    DiagSink diags;
    Arena arena = {0};
    Program *p = unit_load_named(&arena, &sm, &diags, "model.cmt", program_text);
    CHECK(p && diags.error_count == 0, "model program checks");
    if (!p || diags.error_count) return unit_finish();
    CHECK(p->model_count == 2, "two models");
    const Schedule *emb = unit_lowered(&arena, p, "emb_mb");
    const Schedule *head = unit_lowered(&arena, p, "head_mb");
    CHECK(emb && head && emb->pipeline.present && head->pipeline.present,
          "the parts with micro-batches compose steps of their own");
    if (!emb || !head) return unit_finish();

    /* no pipeline: the three steps add */
    const IrModel *plain = model_named(p, "plain");
    const Schedule *flat = unit_lowered(&arena, p, "flat");
    if (plain && flat) {
        ModelStep st = model_step(&arena, flat, lower_mapping(&arena, plain->embed, false, NULL),
                                  lower_mapping(&arena, plain->head, false, NULL));
        double want = flat->cost.latency_s + emb->cost.latency_s + head->cost.latency_s;
        CHECK(near(st.step_s, want), "no pipeline: the step is the three mappings' steps summed");
        CHECK(near(st.first_bytes, flat->training.total + emb->training.total +
                                       head->training.total),
              "no pipeline: a device holds all three");
    }

    /* the pipeline, run again by hand */
    const IrModel *piped = model_named(p, "piped");
    const Schedule *ls = unit_lowered(&arena, p, "layers");
    if (!piped || !ls) return unit_finish();
    const SchedPipeline *pp = &ls->pipeline;
    CHECK(pp->stages == 2 && pp->micro == 4 && pp->chunks == 1, "2 stages, 4 micro-batches");
    double sf = pp->send_forward_s, sb = pp->send_backward_s;
    CHECK(sf < 1e-9 && sb < 1e-9, "the sends take under a nanosecond");
    double f = pp->stage_forward_s, b = pp->stage_backward_s;
    double ef = emb->pipeline.forward_s, eb = emb->pipeline.backward_s + emb->pipeline.recompute_s;
    double hf = head->pipeline.forward_s,
           hb = head->pipeline.backward_s + head->pipeline.recompute_s;
    double F0 = f + ef, B0 = b + eb, F1 = f + hf, B1 = b + hb;
    /* stage 1 runs F(i) then B(i); stage 0 F0, then F(i+1) before B(i) */
    double end_f0[4], end_b1[4], end_f1[4], end_b0[4];
    double t0 = 0, t1 = 0;
    end_f0[0] = t0 = F0;
    for (int i = 0; i < 4; i++) {
        /* stage 1: F(i) when stage 0's F(i) has arrived, then B(i) */
        t1 = fmax(t1, end_f0[i] + sf) + F1;
        end_f1[i] = t1;
        t1 += B1;
        end_b1[i] = t1;
        /* stage 0: F(i+1) (if any), then B(i) once stage 1's has arrived */
        if (i + 1 < 4) end_f0[i + 1] = t0 = t0 + F0;
        t0 = fmax(t0, end_b1[i] + sb) + B0;
        end_b0[i] = t0;
    }
    (void)end_f1;
    double makespan = fmax(end_b0[3], end_b1[3]);
    double e_up = emb->pipeline.update_total_s + emb->pipeline.reduction_total_s;
    double h_up = head->pipeline.update_total_s + head->pipeline.reduction_total_s;
    double want = makespan + pp->update_total_s + pp->reduction_total_s + fmax(e_up, h_up);
    ModelStep st = model_step(&arena, ls, lower_mapping(&arena, piped->embed, false, NULL),
                              lower_mapping(&arena, piped->head, false, NULL));
    CHECK(st.simulated, "the pipeline is run pass by pass");
    CHECK(near(st.step_s, want), "pipeline: the 1F1B schedule with the ends' passes longer");
    CHECK(st.step_s > ls->cost.latency_s, "the head and the embedding take time");
    CHECK(near(st.first_bytes, ls->training.total + emb->training.total) &&
              near(st.last_bytes, ls->training.total + head->training.total),
          "the first stage holds the embedding, the last the head");
    arena_free_all(&arena);
    return unit_finish();
}
