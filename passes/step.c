/* step.c — a `phase train` mapping's time by phase and its model FLOP
 * rate (docs/cost-model.md 13.1): the groups' latencies by the role of
 * their first statement, the collectives' own times split into the
 * reduction of weight gradients and the rest, and the model work against
 * the matrix units' peak (model FLOP utilisation). */
#include "passes/passes.h"

void pass_step(Schedule *s) {
    SchedTraining *tr = &s->training;
    if (!tr->present) return;
    const IrOp *op = s->op;
    double repeat = s->m->repeat > 0 ? (double)s->m->repeat : 1;
    for (int g = 0; g < s->group_count; g++) {
        const SchedGroup *grp = &s->groups[g];
        if (grp->stmt_count == 0) continue;
        double t = grp->cost.latency_s * repeat;
        switch (op->stmts[grp->stmts[0]].role) {
        case SR_FORWARD: tr->forward_s += t; break;
        case SR_RECOMPUTE: tr->recompute_s += t; break;
        case SR_BACKWARD: tr->backward_s += t; break;
        case SR_UPDATE: tr->update_s += t; break;
        }
    }
    for (int i = 0; i < s->node_count; i++) {
        const SchedNode *n = &s->nodes[i];
        if (n->kind != SN_COLLECTIVE) continue;
        bool gradient = n->tensor >= 0 && op->tensors[n->tensor].use == TU_WEIGHT_GRAD;
        if (gradient)
            tr->gradient_reduce_s += n->latency_s * repeat;
        else
            tr->other_collectives_s += n->latency_s * repeat;
    }
    for (int st = 0; st < op->stmt_count; st++) {
        const IrStmt *is = &op->stmts[st];
        if (is->cls != SC_CONTRACTION || (is->role != SR_FORWARD && is->role != SR_BACKWARD))
            continue;
        tr->model_flop += 2 * s->stmts[st].total_work * repeat;
    }
    double latency = s->cost.latency_s;
    tr->achieved_flops = latency > 0 ? tr->model_flop / latency : 0;
    /* peak: every matrix unit at its rate before any sustained efficiency */
    for (int u = 0; u < s->arch->unit_count; u++) {
        const IrCompute *c = &s->arch->units[u];
        if (!c->matrix || c->efficiency <= 0) continue;
        tr->peak_flops += 2 * c->throughput / c->efficiency * (double)c->instances;
    }
}
