/* step.c — a `phase train` mapping's time by phase and its model FLOP
 * rate (docs/cost-model.md 13.1): the groups' latencies by the role of
 * their first statement, the collectives' own times split into the
 * reduction of weight gradients and the rest, and the model work against
 * the matrix units' peak (model FLOP utilisation).  Each term counts what
 * a step runs: every repeat once, or under `microbatches` / `pipeline`
 * every micro-batch through the busiest stage's layers and the update and
 * the accumulated reductions once per layer (section 13.2). */
#include "passes/passes.h"

void pass_step(Schedule *s) {
    SchedTraining *tr = &s->training;
    if (!tr->present) return;
    const IrOp *op = s->op;
    const SchedPipeline *pp = &s->pipeline;
    double repeat = s->m->repeat > 0 ? (double)s->m->repeat : 1;
    /* how often a step runs one micro-batch's groups, and its update */
    double per_micro = pp->present ? pp->micro * pp->layers : repeat;
    double per_step = pp->present ? pp->layers : repeat;
    double latency[4], energy[4];
    sched_role_costs(s, latency, energy);
    tr->forward_s = per_micro * latency[SR_FORWARD];
    tr->recompute_s = per_micro * latency[SR_RECOMPUTE];
    tr->backward_s = per_micro * latency[SR_BACKWARD];
    tr->update_s = per_step * latency[SR_UPDATE];
    for (int i = 0; i < s->node_count; i++) {
        const SchedNode *n = &s->nodes[i];
        if (n->kind != SN_COLLECTIVE) continue;
        bool gradient = n->tensor >= 0 && op->tensors[n->tensor].use == TU_WEIGHT_GRAD;
        if (gradient)
            tr->gradient_reduce_s += n->latency_s * (n->once_per_step ? per_step : per_micro);
        else
            tr->other_collectives_s += n->latency_s * per_micro;
    }
    /* every layer of every micro-batch, on whichever stage runs it */
    double runs = repeat * (pp->present ? pp->micro : 1);
    for (int st = 0; st < op->stmt_count; st++) {
        const IrStmt *is = &op->stmts[st];
        if (is->cls != SC_CONTRACTION || (is->role != SR_FORWARD && is->role != SR_BACKWARD))
            continue;
        /* once: replicas along dims that split none of its indices
         * repeat it, they do not add to the model's work */
        tr->model_flop += 2 * sched_stmt_useful_work(s, st) * runs;
    }
    double latency_s = s->cost.latency_s;
    tr->achieved_flops = latency_s > 0 ? tr->model_flop / latency_s : 0;
    /* peak: every matrix unit of every stage at its rate before any
     * sustained efficiency */
    double stages = pp->present ? pp->stages : 1;
    for (int u = 0; u < s->arch->unit_count; u++) {
        const IrCompute *c = &s->arch->units[u];
        if (!c->matrix || c->efficiency <= 0) continue;
        tr->peak_flops += 2 * c->throughput / c->efficiency * (double)c->instances * stages;
    }
}
