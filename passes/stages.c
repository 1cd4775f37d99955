/* stages.c — a step of micro-batches (docs/cost-model.md 13.2): the mapped
 * op is one layer on one micro-batch, on one stage of a pipeline when the
 * mapping has one.  This pass composes the step from that layer's costs by
 * phase: every micro-batch through the busiest stage's layers, the
 * pipeline's fill and drain (the bubble), the sends between neighbouring
 * stages, and, once per step, the weight update and the reduction of the
 * accumulated weight gradients. */
#include "passes/passes.h"

#include <limits.h>
#include <math.h>

double pipeline_in_flight(const IrMapping *m) {
    const IrPipeline *pl = &m->pipeline;
    if (!pl->full_arch) return 1;
    double micro = pl->microbatches > 1 ? (double)pl->microbatches : 1;
    double p = (double)pl->stages, v = pl->chunks > 1 ? (double)pl->chunks : 1;
    double held = 0;
    switch (pl->schedule) {
    case PIPE_GPIPE: held = micro; break; /* every forward before any backward */
    case PIPE_1F1B: held = p; break;      /* the first stage's warm-up, then one in one out */
    case PIPE_INTERLEAVED: held = p + (p - 1) / v; break;
    }
    return held < micro ? held : micro;
}

StepWeights step_weights(const IrMapping *m) {
    StepWeights w = {1, 1, 1, 1, 1, 1};
    if (!ir_accumulates(m)) return w;
    const IrPipeline *pl = &m->pipeline;
    double L = (double)ir_stage_layers(m);
    double micro = pl->microbatches > 1 ? (double)pl->microbatches : 1;
    double p = pl->full_arch ? (double)pl->stages : 1;
    double v = pl->full_arch && pl->chunks > 1 ? (double)pl->chunks : 1;
    double repeat = m->repeat > 0 ? (double)m->repeat : 1;
    w.pass_latency = L * (micro + (p - 1) / v);
    w.update_latency = w.once_latency = L;
    w.pass_energy = repeat * micro;
    w.update_energy = w.once_energy = repeat;
    return w;
}

/* The bytes of tensor t, as statement st leaves it, that cross the link
 * between two stages: one level-0 instance's share times the instances of
 * the clusters nested inside the stages' one that hold different parts of
 * it (they share the link; a part held by several goes once, scattered
 * over them). */
static double link_bytes(const Schedule *s, int st, int t, int stage_cluster) {
    double bytes = sched_share(s, st, t);
    for (int d = 0; d < s->arch->dim_count; d++) {
        const IrClusterDim *cd = &s->arch->dims[d];
        if (cd->cluster <= stage_cluster || !sched_dim_outside(s, d, 0)) continue;
        if (sched_access_split(s, st, t, d)) bytes *= (double)cd->size;
    }
    return bytes;
}

/* Copies of the whole pipeline that run at once (data parallelism outside
 * the stages' cluster, or beside the stages' dim in it). */
static double pipeline_copies(const Schedule *s, int stage_cluster) {
    double copies = 1;
    for (int d = 0; d < s->arch->dim_count; d++)
        if (s->arch->dims[d].cluster <= stage_cluster && sched_dim_outside(s, d, 0))
            copies *= (double)s->arch->dims[d].size;
    return copies;
}

/* The schedule, pass by pass (docs/cost-model.md 13.2, "The schedule").
 * Stage r runs its 2 m v passes in Megatron's order: the micro-batches go
 * in groups of p, each group through chunk 0, then 1, ... (backward: the
 * last chunk first); first `warmup` forward passes, then a forward and a
 * backward in turn, then the backward passes left.  A pass starts when
 * the stage is free and its input has arrived: a forward pass of virtual
 * stage c p + r takes the output of virtual stage c p + r - 1 (on stage
 * r - 1, or for r = 0 the previous chunk on stage p - 1), a backward pass
 * the gradient of virtual stage c p + r + 1 and its own forward pass's
 * activations.  Each output is sent as soon as it is made, the sends
 * queueing on the stage's link in each direction. */
typedef struct Sim {
    int p, v, m;
    PipeSchedule schedule;
    double f_dur, b_dur, f_send, b_send;
    bool blocking; /* a stage waits for its send (`overlap local`) */
    /* a model's embedding on the first virtual stage, its head on the
     * last: their forward and backward passes (s; docs/cost-model.md
     * 13.3), 0 for a layer alone */
    double first_f, first_b, last_f, last_b;
} Sim;

static long warmup_of(const Sim *sim, int r) {
    long total = (long)sim->m * sim->v;
    long w = sim->schedule == PIPE_GPIPE ? total
             : sim->v > 1                ? (long)(sim->p - r - 1) * 2 + (long)(sim->v - 1) * sim->p
                                         : sim->p - r - 1;
    return w < total ? w : total;
}

/* The n-th forward (or backward) pass of stage r. */
static PipeOp nth_pass(const Sim *sim, int r, long n, bool backward) {
    int p = sim->p, v = sim->v;
    long group = n / ((long)p * v), first = group * p;
    long size = sim->m - first < p ? sim->m - first : p; /* the last group may be short */
    long within = n - first * v;
    PipeOp op = {r, (int)(first + within % size), (int)(within / size), backward, -1, -1};
    if (backward) op.chunk = v - 1 - op.chunk;
    return op;
}

/* Runs the schedule; returns the time the last pass ends.  With
 * `record`, writes every pass there, stage by stage in running order.
 * The caller has checked the slots fit (sim_fits). */
static double simulate(const Sim *sim, PipeOp *record) {
    int p = sim->p, v = sim->v, m = sim->m;
    long slots = (long)p * v * m, total = (long)m * v;
    if (p < 1 || v < 1 || m < 1) return -1;
    Arena scratch = {0};
    double *f_arrive = ARENA_ARRAY(&scratch, double, slots + 1);
    double *f_end = ARENA_ARRAY(&scratch, double, slots + 1);
    double *b_arrive = ARENA_ARRAY(&scratch, double, slots + 1);
    for (long i = 0; i < slots; i++) f_arrive[i] = f_end[i] = b_arrive[i] = -1;
    long *f = ARENA_ARRAY(&scratch, long, p + 1), *b = ARENA_ARRAY(&scratch, long, p + 1);
    double *free_at = ARENA_ARRAY(&scratch, double, p + 1);
    double *link_f = ARENA_ARRAY(&scratch, double, p + 1);
    double *link_b = ARENA_ARRAY(&scratch, double, p + 1);
    bool backward_passes = sim->b_dur > 0;
    int last = p * v - 1;
    long done = 0, n = backward_passes ? 2 * slots : slots;
    double makespan = 0;
    while (done < n) {
        long progressed = 0;
        for (int r = 0; r < p; r++) {
            for (;;) {
                if (f[r] >= total && (!backward_passes || b[r] >= total)) break;
                long w = warmup_of(sim, r);
                bool forward = !backward_passes || (f[r] < total && (f[r] < w || f[r] - w == b[r]));
                PipeOp op = nth_pass(sim, r, forward ? f[r] : b[r], !forward);
                int vs = op.chunk * p + r;
                long at = (long)vs * m + op.micro;
                double ready = forward      ? (vs == 0 ? 0 : f_arrive[at - m])
                               : vs == last ? f_end[at]
                                            : b_arrive[at + m];
                if (ready < 0 || (!forward && f_end[at] < 0)) break; /* input not made yet */
                op.start_s = ready > free_at[r] ? ready : free_at[r];
                double extra = (vs == 0 ? (forward ? sim->first_f : sim->first_b) : 0) +
                               (vs == last ? (forward ? sim->last_f : sim->last_b) : 0);
                op.end_s = op.start_s + (forward ? sim->f_dur : sim->b_dur) + extra;
                free_at[r] = op.end_s;
                if (op.end_s > makespan) makespan = op.end_s;
                double *link = forward ? &link_f[r] : &link_b[r];
                double sent = op.end_s > *link ? op.end_s : *link;
                bool sends = forward ? vs < last : vs > 0;
                if (forward) {
                    f_end[at] = op.end_s;
                    if (sends) f_arrive[at] = *link = sent + sim->f_send;
                } else if (sends)
                    b_arrive[at] = *link = sent + sim->b_send;
                /* a framework that calls the send and waits for it (as
                 * Megatron-LM's p2p does) starts nothing else meanwhile */
                if (sim->blocking && sends) {
                    free_at[r] = *link;
                    if (*link > makespan) makespan = *link;
                }
                if (record) {
                    long k = (long)r * (n / p) + f[r] + (backward_passes ? b[r] : 0);
                    record[k] = op;
                }
                if (forward)
                    f[r]++;
                else
                    b[r]++;
                done++;
                progressed++;
            }
        }
        if (!progressed) {
            makespan = -1; /* the orders above cannot deadlock; guard anyway */
            break;
        }
    }
    arena_free_all(&scratch);
    return makespan;
}

/* Whether the schedule has at most `limit` stage x chunk x micro-batch
 * slots (counted in doubles: micro-batches may be any 64-bit count). */
static bool sim_fits(const SchedPipeline *pp, long limit) {
    return pp->stages * pp->chunks * pp->micro <= (double)limit;
}

/* Past the slot limit: the schedule run with the most micro-batches that
 * fit (a multiple of 2p) and with half as many; past its warm-up a
 * pipeline repeats a period per micro-batch, so the step grows by the
 * slope between the two runs for every micro-batch beyond them.  -1 when
 * even 2p micro-batches do not fit (then the closed forms hold). */
static double simulate_steady(Sim sim, double micro, long limit, double *most_run) {
    long per = (long)sim.p * sim.v;
    long most = limit / per / (2L * sim.p) * (2L * sim.p), half = most / 2;
    if (half < sim.p || most > INT_MAX) return -1;
    sim.m = (int)most;
    double at_most = simulate(&sim, NULL);
    sim.m = (int)half;
    double at_half = simulate(&sim, NULL);
    if (at_most < 0 || at_half < 0) return -1;
    double slope = (at_most - at_half) / (double)(most - half);
    if (most_run) *most_run = (double)most;
    return at_most + slope * (micro - (double)most);
}

static Sim sim_of(const Schedule *s) {
    const SchedPipeline *pp = &s->pipeline;
    /* (counts past INT_MAX are clamped: such a run is never simulated
     * whole, and simulate_steady sets its own micro-batches) */
    Sim sim = {(int)fmin(pp->stages, INT_MAX),
               (int)fmin(pp->chunks, INT_MAX),
               (int)fmin(pp->micro, INT_MAX),
               s->m->pipeline.schedule,
               pp->stage_forward_s / pp->chunks,
               pp->stage_backward_s / pp->chunks,
               pp->send_forward_s,
               pp->send_backward_s,
               s->m->overlap == OVERLAP_LOCAL,
               0,
               0,
               0,
               0};
    return sim;
}

double pipeline_makespan_with_ends(const Schedule *s, double first_f, double first_b, double last_f,
                                   double last_b, bool *simulated) {
    const SchedPipeline *pp = &s->pipeline;
    *simulated = false;
    if (!pp->present || !s->m->pipeline.full_arch) return -1;
    Sim sim = sim_of(s);
    sim.first_f = first_f;
    sim.first_b = first_b;
    sim.last_f = last_f;
    sim.last_b = last_b;
    if (sim_fits(pp, PIPELINE_SIM_SLOTS)) {
        double run = simulate(&sim, NULL);
        if (run >= 0) {
            *simulated = true;
            return run;
        }
    } else {
        double run = simulate_steady(sim, pp->micro, PIPELINE_SIM_SLOTS, NULL);
        if (run >= 0) return run;
    }
    /* past the simulation's limit: the busier end's extra work in every
     * micro-batch, on the closed form of the layers */
    double first = first_f + first_b, last = last_f + last_b;
    return pp->compute_s + pp->bubble_s + pp->send_s + pp->micro * (first > last ? first : last);
}

double pipeline_steady(const Schedule *s, long limit) {
    if (!s->pipeline.present || !s->m->pipeline.full_arch) return -1;
    return simulate_steady(sim_of(s), s->pipeline.micro, limit, NULL);
}

double pipeline_simulate(Arena *arena, const Schedule *s, long limit, PipeOp **ops, long *count) {
    *ops = NULL;
    *count = 0;
    if (!s->pipeline.present || !s->m->pipeline.full_arch || !sim_fits(&s->pipeline, limit))
        return -1;
    Sim sim = sim_of(s);
    long n = (long)sim.p * sim.v * sim.m * (sim.b_dur > 0 ? 2 : 1);
    if ((double)n > (double)limit) return -1;
    PipeOp *all = ARENA_ARRAY(arena, PipeOp, n + 1);
    double makespan = simulate(&sim, all);
    if (makespan < 0) return -1;
    *ops = all;
    *count = n;
    return makespan;
}

void schedule_partition(const Schedule *s, double out[5]) {
    /* each group's latency without its launch, by the group's bound; the
     * launches apart */
    double by_bound[3] = {0, 0, 0}, launches = 0;
    for (int g = 0; g < s->group_count; g++) {
        const SchedGroup *grp = &s->groups[g];
        int b = grp->cost.bound == BOUND_MEMORY ? 1 : grp->cost.bound == BOUND_NETWORK ? 2 : 0;
        by_bound[b] += grp->cost.latency_s - grp->launch_s;
        launches += grp->launch_s;
    }
    double groups = by_bound[0] + by_bound[1] + by_bound[2] + launches;
    /* the groups' time: repeat times their sum; a pipeline's step runs
     * them for its passes (compute_s) and updates, and adds the bubble,
     * the sends and the once-per-step reductions (section 13.2) */
    double run = s->cost.latency_s, bubble = 0, network = 0;
    if (s->pipeline.present) {
        const SchedPipeline *pp = &s->pipeline;
        run = pp->compute_s + pp->update_total_s;
        bubble = pp->bubble_s;
        network = pp->send_s + pp->reduction_total_s;
    }
    double scale = groups > 0 ? run / groups : 0;
    out[0] = by_bound[0] * scale;
    out[1] = by_bound[1] * scale;
    out[2] = by_bound[2] * scale + network;
    out[3] = bubble;
    out[4] = s->cost.latency_s - out[0] - out[1] - out[2] - out[3];
    /* what rounding leaves is not a part */
    if (fabs(out[4]) <= 1e-12 * fabs(s->cost.latency_s)) out[4] = 0;
}

const char *schedule_bound_word(const Schedule *s) {
    double part[5];
    schedule_partition(s, part);
    if (s->pipeline.present && part[3] > part[0] && part[3] > part[1] && part[3] > part[2])
        return "bubble";
    return bound_name(s->cost.bound);
}

void pass_stages(Schedule *s) {
    SchedPipeline *pp = &s->pipeline;
    const IrMapping *m = s->m;
    const IrPipeline *pl = &m->pipeline;
    *pp = (SchedPipeline){0};
    if (!ir_accumulates(m)) return;
    const IrOp *op = s->op;
    pp->present = true;
    pp->stages = pl->full_arch ? (double)pl->stages : 1;
    pp->chunks = pl->full_arch && pl->chunks > 1 ? (double)pl->chunks : 1;
    pp->micro = pl->microbatches > 1 ? (double)pl->microbatches : 1;
    pp->layers = (double)ir_stage_layers(m);
    pp->in_flight = pipeline_in_flight(m);

    /* one layer, one micro-batch, by phase; the weight-gradient
     * reductions pass_cost left out of their groups, run once */
    double latency[4], energy[4];
    sched_role_costs(s, latency, energy);
    pp->forward_s = latency[SR_FORWARD];
    pp->recompute_s = latency[SR_RECOMPUTE];
    pp->backward_s = latency[SR_BACKWARD];
    pp->update_s = latency[SR_UPDATE];
    double per_micro_energy = energy[SR_FORWARD] + energy[SR_RECOMPUTE] + energy[SR_BACKWARD];
    for (int i = 0; i < s->node_count; i++)
        if (s->nodes[i].once_per_step) {
            pp->reduction_s += s->nodes[i].latency_s;
            pp->reduction_energy_j += s->nodes[i].energy_j;
        }

    /* the sends: a layer's output forward, its input's gradient backward */
    double send_energy = 0;
    if (pl->full_arch) {
        NetDim link = net_dim(pl->full_arch, pl->dim);
        int stage_cluster = pl->full_arch->dims[pl->dim].cluster;
        for (int t = 0; t < op->tensor_count; t++) {
            const IrTensor *T = &op->tensors[t];
            if (T->kind != TK_OUTPUT || T->use != TU_DATA || T->producer < 0) continue;
            StmtRole role = op->stmts[T->producer].role;
            double bytes = link_bytes(s, T->producer, t, stage_cluster);
            if (role == SR_FORWARD) pp->send_forward_bytes += bytes;
            if (role == SR_BACKWARD) pp->send_backward_bytes += bytes;
        }
        NetCost f = send_cost(&link, pp->send_forward_bytes);
        NetCost b = send_cost(&link, pp->send_backward_bytes);
        pp->send_forward_s = f.time_s;
        pp->send_backward_s = b.time_s;
        /* every micro-batch crosses p v - 1 boundaries each way */
        send_energy = (f.energy_j + b.energy_j) * pp->micro * (pp->stages * pp->chunks - 1) *
                      pipeline_copies(s, stage_cluster);
    }

    /* the step (section 13.2): the schedule run pass by pass; its idle
     * time without sends is the bubble, what the sends add the rest */
    double L = pp->layers, micro = pp->micro, p = pp->stages, v = pp->chunks;
    pp->stage_forward_s = L * pp->forward_s;
    pp->stage_backward_s = L * (pp->backward_s + pp->recompute_s);
    double work = pp->stage_forward_s + pp->stage_backward_s;
    pp->compute_s = micro * work;
    pp->bubble_s = (p - 1) * work / v;
    double makespan = pp->compute_s + pp->bubble_s;
    if (pl->full_arch) {
        /* (the counts narrow to int only once they are known to fit) */
        double run = -1, steady = -1;
        if (sim_fits(pp, PIPELINE_SIM_SLOTS)) {
            Sim sim = sim_of(s);
            run = simulate(&sim, NULL);
        } else
            steady = simulate_steady(sim_of(s), micro, PIPELINE_SIM_SLOTS, &pp->steady_micro);
        pp->simulated = run >= 0;
        if (run >= 0)
            makespan = run;
        else if (steady >= 0)
            makespan = steady;
        else if (m->overlap == OVERLAP_LOCAL) {
            /* past the simulation's limit, blocking: every pass but the
             * first stage's backward and the last's forward waits for
             * its send */
            makespan += micro * v * (pp->send_forward_s + pp->send_backward_s) +
                        (p * v - 1) * (pp->send_forward_s + pp->send_backward_s);
        } else { /* past the simulation's limit: the sends as if they hid */
            double period = work;
            if (v * pp->send_forward_s > period) period = v * pp->send_forward_s;
            if (v * pp->send_backward_s > period) period = v * pp->send_backward_s;
            makespan += (micro - 1) * (period - work) +
                        (p * v - 1) * (pp->send_forward_s + pp->send_backward_s);
        }
    }
    pp->send_s = makespan - pp->compute_s - pp->bubble_s;
    /* the once-per-step terms and the energy count as the optimizer's
     * weights do (one formula for both: step_weights) */
    StepWeights w = step_weights(m);
    pp->update_total_s = w.update_latency * pp->update_s;
    pp->reduction_total_s = w.once_latency * pp->reduction_s;
    pp->step_s =
        pp->compute_s + pp->bubble_s + pp->send_s + pp->update_total_s + pp->reduction_total_s;
    /* energy: every layer of every micro-batch once, on whichever stage */
    pp->send_energy_j = send_energy;
    pp->energy_j = w.pass_energy * per_micro_energy + w.update_energy * energy[SR_UPDATE] +
                   w.once_energy * pp->reduction_energy_j + send_energy;
    s->cost.latency_s = pp->step_s;
    s->cost.energy_j = pp->energy_j;
    /* the step is bound by its largest part, the sends and the once-per-
     * step reductions counted as network */
    double part[5];
    schedule_partition(s, part);
    s->cost.bound = part[1] > part[0] && part[1] >= part[2] ? BOUND_MEMORY
                    : part[2] > part[0]                     ? BOUND_NETWORK
                                                            : BOUND_COMPUTE;
}
