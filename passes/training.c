/* training.c — what a step holds on each device: for a `phase train`
 * mapping, the bytes of weights, weight gradients, optimizer state and
 * kept activations in one instance of the outermost memory, over the
 * mapping's repeats, or a pipeline stage's layers and micro-batches in
 * flight (docs/cost-model.md 13); for a `serve` mapping its weights and
 * caches (section 14).  The capacity check reports a total past the
 * memory's capacity (E0351 for training, E0363 for serving). */
#include "passes/passes.h"

void pass_training(Schedule *s) {
    SchedTraining *tr = &s->training;
    *tr = (SchedTraining){0};
    bool serving = s->m->serve.kind != SERVE_NONE;
    if (s->m->phase != PHASE_TRAIN && !serving) return;
    if (s->only_needed) return; /* not reckoned (LowerOptions.only_needed) */
    const IrOp *op = s->op;
    const IrArch *arch = s->arch;
    tr->present = true;
    tr->serving = serving;
    tr->memory = arch->levels[0].first_memory;
    tr->capacity = arch->memories[tr->memory].capacity;
    int F = op->forward_count, T = op->tensor_count;
    /* one pass over the statements: each tensor's share under the splits
     * of the statement that makes it or of the reader that holds the most
     * of it, and whether the forward statements and the later ones read
     * it */
    double *share = ARENA_ARRAY(s->arena, double, T + 1);
    /* a kept activation is what the forward pass leaves on the device:
     * its maker's share, or for an input the largest forward reader's.
     * A backward reader that needs more gathers it again (section 4
     * inserts that collective), as Megatron's sequence parallelism keeps
     * each layernorm's output sharded and all-gathers it anew */
    double *kept = ARENA_ARRAY(s->arena, double, T + 1);
    bool *read_forward = ARENA_ARRAY(s->arena, bool, T + 1);
    bool *read_later = ARENA_ARRAY(s->arena, bool, T + 1);
    for (int st = 0; st < op->stmt_count; st++) {
        const IrStmt *is = &op->stmts[st];
        double mine = sched_share(s, st, is->out_tensor);
        if (mine > share[is->out_tensor]) share[is->out_tensor] = mine;
        if (st < F && mine > kept[is->out_tensor]) kept[is->out_tensor] = mine;
        for (int q = 0; q < is->input_count; q++) {
            int t = is->inputs[q];
            double b = sched_share(s, st, t);
            if (b > share[t]) share[t] = b;
            if (st < F) {
                read_forward[t] = true;
                if (op->tensors[t].producer < 0 && b > kept[t]) kept[t] = b;
            } else {
                read_later[t] = true;
            }
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
        case TU_CACHE: into = &tr->caches; break;
        case TU_ROUTE: break; /* made and read within the step */
        case TU_DATA:
            /* kept for the backward pass: made (or, for an input, read) by
             * the forward statements and read again after them; a serving
             * step keeps nothing but its weights and caches */
            if (!serving &&
                ((X->producer >= 0 && X->producer < F) || (X->producer < 0 && read_forward[t])) &&
                read_later[t])
                into = &tr->activations;
            break;
        }
        if (!into) continue;
        double bytes = into == &tr->activations ? kept[t] : share[t];
        *into += bytes;
        tr->held[t] = bytes;
    }
    /* a device holds its stage's layers, and the activations of every
     * micro-batch in flight there (section 13.2) */
    double layers = (double)ir_stage_layers(s->m);
    tr->weights *= layers;
    tr->gradients *= layers;
    tr->optimizer *= layers;
    /* every micro-batch's sequences keep their caches between steps */
    double micro = s->m->pipeline.microbatches > 1 ? (double)s->m->pipeline.microbatches : 1;
    tr->caches *= layers * (serving ? micro : 1);
    tr->activations *= layers * pipeline_in_flight(s->m);
    tr->total = tr->weights + tr->gradients + tr->optimizer + tr->activations + tr->caches;
}
