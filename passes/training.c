/* training.c — what a training step holds on each device: for a `phase
 * train` mapping, the bytes of weights, weight gradients, optimizer state
 * and kept activations in one instance of the outermost memory, over the
 * mapping's repeats (docs/cost-model.md 13).  The capacity check reports
 * a total past the memory's capacity (E0351). */
#include "passes/passes.h"

/* The bytes one instance of level 0 holds of statement st's tensor t: its
 * share under the statement's splits. */
static double share_in(const Schedule *s, int st, int t) {
    const IrOp *op = s->op;
    const IrTensor *T = &op->tensors[t];
    const int *ix = ir_stmt_tensor_indices(op, &op->stmts[st], t);
    if (!ix) return 0;
    double elems = 1;
    for (int r = 0; r < T->rank; r++)
        elems *= ix[r] >= 0 ? s->stmts[st].extent[sched_li(s, 0, ix[r])] : 1;
    return elems * elem_type_bits(T->type) / 8.0;
}

void pass_training(Schedule *s) {
    SchedTraining *tr = &s->training;
    *tr = (SchedTraining){0};
    if (s->m->phase != PHASE_TRAIN) return;
    const IrOp *op = s->op;
    const IrArch *arch = s->arch;
    tr->present = true;
    tr->memory = arch->levels[0].first_memory;
    tr->capacity = arch->memories[tr->memory].capacity;
    int F = op->forward_count, T = op->tensor_count;
    /* one pass over the statements: each tensor's share under the splits
     * of the statement that makes it or of the reader that holds the most
     * of it, and whether the forward statements and the later ones read
     * it */
    double *share = ARENA_ARRAY(s->arena, double, T + 1);
    bool *read_forward = ARENA_ARRAY(s->arena, bool, T + 1);
    bool *read_later = ARENA_ARRAY(s->arena, bool, T + 1);
    for (int st = 0; st < op->stmt_count; st++) {
        const IrStmt *is = &op->stmts[st];
        double mine = share_in(s, st, is->out_tensor);
        if (mine > share[is->out_tensor]) share[is->out_tensor] = mine;
        for (int q = 0; q < is->input_count; q++) {
            int t = is->inputs[q];
            double b = share_in(s, st, t);
            if (b > share[t]) share[t] = b;
            if (st < F)
                read_forward[t] = true;
            else
                read_later[t] = true;
        }
    }
    tr->held = ARENA_ARRAY(s->arena, double, T + 1);
    for (int t = 0; t < T; t++) {
        const IrTensor *X = &op->tensors[t];
        double *into = NULL;
        switch (X->use) {
        case TU_WEIGHT: into = &tr->weights; break;
        case TU_WEIGHT_GRAD: into = &tr->gradients; break;
        case TU_OPT_STATE: into = &tr->optimizer; break;
        case TU_DATA:
            /* kept for the backward pass: made (or, for an input, read) by
             * the forward statements and read again after them */
            if (((X->producer >= 0 && X->producer < F) || (X->producer < 0 && read_forward[t])) &&
                read_later[t])
                into = &tr->activations;
            break;
        }
        if (!into) continue;
        *into += share[t];
        tr->held[t] = share[t];
    }
    double layers = s->m->repeat > 0 ? (double)s->m->repeat : 1;
    tr->weights *= layers;
    tr->gradients *= layers;
    tr->optimizer *= layers;
    tr->activations *= layers;
    tr->total = tr->weights + tr->gradients + tr->optimizer + tr->activations;
}
