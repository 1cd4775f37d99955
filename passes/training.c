/* training.c — what a training step holds on each device: for a `phase
 * train` mapping, the bytes of weights, weight gradients, optimizer state
 * and kept activations in one instance of the outermost memory, over the
 * mapping's repeats (docs/cost-model.md 13).  The capacity check reports
 * a total past the memory's capacity (E0351). */
#include "passes/passes.h"

/* The bytes of tensor t one instance of level 0 holds: its share under the
 * splits of the statement that makes it, or of the reader that holds the
 * most of it. */
static double level0_share(const Schedule *s, int t) {
    const IrOp *op = s->op;
    const IrTensor *T = &op->tensors[t];
    double most = 0;
    for (int st = 0; st < op->stmt_count; st++) {
        const int *ix = ir_stmt_tensor_indices(op, &op->stmts[st], t);
        if (!ix) continue;
        double elems = 1;
        for (int r = 0; r < T->rank; r++)
            elems *= ix[r] >= 0 ? s->stmts[st].extent[sched_li(s, 0, ix[r])] : 1;
        if (elems > most) most = elems;
    }
    return most * elem_type_bits(T->type) / 8.0;
}

/* Whether a statement in [from, to) reads tensor t. */
static bool read_between(const IrOp *op, int t, int from, int to) {
    for (int st = from; st < to; st++)
        for (int q = 0; q < op->stmts[st].input_count; q++)
            if (op->stmts[st].inputs[q] == t) return true;
    return false;
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
    int F = op->forward_count;
    for (int t = 0; t < op->tensor_count; t++) {
        const IrTensor *T = &op->tensors[t];
        double bytes = level0_share(s, t);
        switch (T->use) {
        case TU_WEIGHT: tr->weights += bytes; break;
        case TU_WEIGHT_GRAD: tr->gradients += bytes; break;
        case TU_OPT_STATE: tr->optimizer += bytes; break;
        case TU_DATA:
            /* kept for the backward pass: made (or, for an input, read) by
             * the forward statements and read again after them */
            if (((T->producer >= 0 && T->producer < F) ||
                 (T->producer < 0 && read_between(op, t, 0, F))) &&
                read_between(op, t, F, op->stmt_count))
                tr->activations += bytes;
            break;
        }
    }
    double layers = s->m->repeat > 0 ? (double)s->m->repeat : 1;
    tr->weights *= layers;
    tr->gradients *= layers;
    tr->optimizer *= layers;
    tr->activations *= layers;
    tr->total = tr->weights + tr->gradients + tr->optimizer + tr->activations;
}
