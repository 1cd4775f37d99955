/* model.c — a model's step (docs/language.md 5.13, docs/cost-model.md
 * 13.3): the layers' step, composed by pass_stages, with the embedding's
 * and the head's work of every micro-batch.  Without a pipeline the parts
 * run on the same devices one after another: each part's own step (its
 * micro-batches, then its update and its accumulated gradient reductions)
 * adds to the layers'.  With a pipeline the embedding runs on the first
 * stage before the first layer of each micro-batch and the head on the
 * last stage after the last layer: the schedule is run again pass by pass
 * with those passes longer, and the step ends when the slower end has
 * also updated its part. */
#include "passes/passes.h"

#include <string.h>

/* One part, given lowered on its own: under the layers' micro-batches it
 * is lowered again with them, so that its weight gradients are reduced
 * once per step as the layers' are. */
static ModelPartCost part_cost(Arena *arena, const Schedule *alone, double micro) {
    ModelPartCost c = {0};
    if (!alone) return c;
    const Schedule *s = alone;
    if (micro > 1) {
        IrMapping *copy = ARENA_NEW(arena, IrMapping);
        *copy = *alone->m;
        copy->pipeline.microbatches = (int64_t)micro;
        s = lower_mapping(arena, copy, false, NULL);
    }
    c.present = true;
    double latency[4], energy[4];
    sched_role_costs(s, latency, energy);
    if (s->pipeline.present) {
        const SchedPipeline *pp = &s->pipeline;
        c.forward_s = pp->forward_s;
        c.backward_s = pp->backward_s + pp->recompute_s;
        c.update_s = pp->update_total_s + pp->reduction_total_s;
        c.energy_j = pp->energy_j;
    } else {
        c.forward_s = latency[SR_FORWARD];
        c.backward_s = latency[SR_BACKWARD] + latency[SR_RECOMPUTE];
        c.update_s = latency[SR_UPDATE];
        c.energy_j = s->cost.energy_j;
    }
    c.held_bytes = s->training.present ? s->training.total : 0;
    c.model_flop = s->training.present ? s->training.model_flop : 0;
    return c;
}

ModelStep model_step(Arena *arena, const Schedule *layers, const Schedule *embed,
                     const Schedule *head) {
    ModelStep st;
    memset(&st, 0, sizeof st);
    const SchedPipeline *pp = &layers->pipeline;
    st.micro = pp->present ? pp->micro : 1;
    st.stages = pp->present ? pp->stages : 1;
    st.embed = part_cost(arena, embed, st.micro);
    st.head = part_cost(arena, head, st.micro);
    st.layers_step_s = layers->cost.latency_s;
    const ModelPartCost *e = &st.embed, *h = &st.head;
    double parts_micro = e->forward_s + e->backward_s + h->forward_s + h->backward_s;
    if (pp->present && layers->m->pipeline.full_arch) {
        /* the ends' passes are longer; the step ends after the slower
         * end's update (the layers' own update runs on every stage) */
        double makespan = pipeline_makespan_with_ends(layers, e->forward_s, e->backward_s,
                                                      h->forward_s, h->backward_s, &st.simulated);
        double ends = e->update_s > h->update_s ? e->update_s : h->update_s;
        st.step_s = makespan + pp->update_total_s + pp->reduction_total_s + ends;
    } else {
        /* one set of devices: the parts' micro-batches and updates add */
        st.step_s = st.layers_step_s + st.micro * parts_micro + e->update_s + h->update_s;
    }
    st.energy_j = layers->cost.energy_j + e->energy_j + h->energy_j;
    /* per device: the layers' share, the embedding's on the first stage,
     * the head's on the last (on every device without a pipeline) */
    const SchedTraining *tr = &layers->training;
    double own = tr->present ? tr->total : 0;
    if (st.stages > 1) {
        st.first_bytes = own + e->held_bytes;
        st.last_bytes = own + h->held_bytes;
    } else {
        st.first_bytes = st.last_bytes = own + e->held_bytes + h->held_bytes;
    }
    st.capacity = tr->present ? tr->capacity : 0;
    st.model_flop = (tr->present ? tr->model_flop : 0) + e->model_flop + h->model_flop;
    st.peak_flops = tr->present ? tr->peak_flops : 0;
    st.achieved_flops = st.step_s > 0 ? st.model_flop / st.step_s : 0;
    return st;
}
