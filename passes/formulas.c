/* formulas.c — the cost model's formulas, term by term as
 * docs/cost-model.md states them: alpha-beta collectives per topology,
 * the SCALE-Sim fold formula and element operations per point.  Pure
 * functions of numbers, so tests can check them against hand arithmetic. */
#include "passes/passes.h"

#include <math.h>

NetDim net_dim(const IrArch *a, int d) {
    const IrClusterDim *cd = &a->dims[d];
    const IrCluster *c = &a->clusters[cd->cluster];
    NetDim n;
    n.p = cd->size;
    n.topology = cd->topology;
    n.unidirectional = false;
    n.alpha_s = c->hop_latency > 0 ? c->hop_latency : 0;
    n.beta_s_per_byte =
        (c->link_bandwidth > 0 && isfinite(c->link_bandwidth)) ? 1.0 / c->link_bandwidth : 0;
    n.link_energy_j_per_byte = c->link_energy > 0 ? c->link_energy : 0;
    n.call_s = c->call_latency > 0 ? c->call_latency : 0;
    n.channels = c->channels > 1 ? c->channels : 1;
    n.channel_bytes = c->channel_bytes > 0 ? c->channel_bytes : 0;
    n.sharers = 1;
    return n;
}

NetCost send_cost(const NetDim *d, double n) {
    NetCost c = {0, 0, 0};
    if (d->p <= 1 || !(n > 0)) return c;
    c.time_s = d->call_s + d->alpha_s + n * d->beta_s_per_byte * channel_beta_scale(d, n);
    c.byte_hops = n;
    c.energy_j = n * d->link_energy_j_per_byte;
    return c;
}

int64_t net_diameter(const NetDim *d) {
    if (d->p <= 1) return 0;
    switch (d->topology) {
    case TOPO_RING:
    case TOPO_TORUS: return d->unidirectional ? d->p - 1 : d->p / 2;
    case TOPO_MESH: return d->p - 1;
    case TOPO_SWITCH:
    case TOPO_FULL: return 1;
    }
    return d->p - 1;
}

/* Bandwidth of the ring-shaped algorithms along one dim: a bidirectional
 * ring (or torus dimension) moves half of the data each way, so beta
 * halves; a mesh dimension is a line whose two directions embed one
 * unidirectional ring. */
static double ring_beta(const NetDim *d) {
    bool both_ways = (d->topology == TOPO_RING || d->topology == TOPO_TORUS) && !d->unidirectional;
    return both_ways ? d->beta_s_per_byte / 2 : d->beta_s_per_byte;
}

static double log2_ceil(int64_t p) {
    double steps = 0;
    for (int64_t r = 1; r < p; r *= 2) steps++;
    return steps;
}

/* Reduce-scatter along one dim of a buffer of n bytes per rank (all-gather
 * with an n-byte result costs the same). */
static NetCost reduce_scatter_1d(const NetDim *d, double n) {
    NetCost c = {0, 0, 0};
    if (d->p <= 1 || n <= 0) return c;
    double p = (double)d->p;
    switch (d->topology) {
    case TOPO_RING:
    case TOPO_TORUS:
    case TOPO_MESH: c.time_s = (p - 1) * d->alpha_s + (p - 1) / p * n * ring_beta(d); break;
    case TOPO_SWITCH: /* recursive halving: every pair is one hop apart */
        c.time_s = log2_ceil(d->p) * d->alpha_s + (p - 1) / p * n * d->beta_s_per_byte;
        break;
    case TOPO_FULL: /* one step: n/p to each peer over its own link */
        c.time_s = d->alpha_s + n / p * d->beta_s_per_byte;
        break;
    }
    c.byte_hops = (p - 1) * n; /* each rank sends (p-1)/p n over one hop */
    return c;
}

static NetCost broadcast_1d(const NetDim *d, double n) {
    NetCost c = {0, 0, 0};
    if (d->p <= 1 || n <= 0) return c;
    /* pipelined from the root: the farthest rank is a diameter away */
    c.time_s = (double)net_diameter(d) * d->alpha_s + n * d->beta_s_per_byte;
    c.byte_hops = (double)(d->p - 1) * n;
    return c;
}

/* Average hops between two distinct ranks of one dim. */
static double mean_distance(const NetDim *d) {
    double p = (double)d->p;
    switch (d->topology) {
    case TOPO_RING:
    case TOPO_TORUS:
        if (d->unidirectional) return p / 2;
        {
            double sum = 0;
            for (int64_t k = 1; k < d->p; k++) sum += (double)(k < d->p - k ? k : d->p - k);
            return sum / (p - 1);
        }
    case TOPO_MESH: return (p + 1) / 3;
    case TOPO_SWITCH:
    case TOPO_FULL: return 1;
    }
    return 1;
}

static NetCost alltoall_1d(const NetDim *d, double n) {
    NetCost c = {0, 0, 0};
    if (d->p <= 1 || n <= 0) return c;
    double p = (double)d->p, b = d->beta_s_per_byte;
    /* bandwidth term: the bytes that cross the bisection over its links */
    switch (d->topology) {
    case TOPO_RING:
    case TOPO_TORUS:
        c.time_s = (p - 1) * d->alpha_s + p * n * b / (d->unidirectional ? 4 : 8);
        break;
    case TOPO_MESH: c.time_s = (p - 1) * d->alpha_s + p * n * b / 4; break;
    case TOPO_SWITCH: c.time_s = (p - 1) * d->alpha_s + (p - 1) / p * n * b; break;
    case TOPO_FULL: c.time_s = d->alpha_s + n / p * b; break;
    }
    c.byte_hops = (p - 1) * n * mean_distance(d);
    return c;
}

/* Adds one step along dims[j] to `total`: the step runs in all the
 * P / p_j parallel lines of that dim inside the collective's dims. */
static void add_step(NetCost *total, NetCost step, double lines, const NetDim *d) {
    total->time_s += step.time_s;
    total->byte_hops += step.byte_hops * lines;
    total->energy_j += step.byte_hops * lines * d->link_energy_j_per_byte;
}

/* One reduce-scatter (or its mirror, all-gather) of `share` bytes along
 * dim d, run by each of the all / p lines of that dim at once. */
static void add_ring_step(NetCost *total, const NetDim *d, double share, double all) {
    add_step(total, reduce_scatter_1d(d, share), all / (double)d->p, d);
}

/* The channel ramp (docs/cost-model.md section 4, "Channels"): a call of
 * n bytes spreads over min(C, max(1, n / channel_bytes)) of a cluster's C
 * channels, each moving 1/C of the link bandwidth, so a small call sees
 * beta x C / used.  Continuous rather than whole channels: the busiest
 * instance's share, rounded up, must not tip a call into one channel
 * more or less. */
double channel_beta_scale(const NetDim *d, double n_bytes) {
    if (d->channels <= 1 || !(d->channel_bytes > 0) || !(n_bytes > 0)) return 1;
    if (d->sharers > 1) n_bytes *= d->sharers; /* one call carries every sharer's part */
    double used = n_bytes / d->channel_bytes;
    if (used >= (double)d->channels) return 1;
    if (used < 1) used = 1;
    return (double)d->channels / used;
}

NetCost collective_cost(CollKind kind, const NetDim *given, int count, double n_bytes) {
    NetCost total = {0, 0, 0};
    if (count <= 0 || n_bytes <= 0 || count > SCHED_MAX_DIMS) return total;
    NetDim dims[SCHED_MAX_DIMS];
    for (int j = 0; j < count; j++) {
        dims[j] = given[j];
        double sharers = given[j].sharers > 1 ? given[j].sharers : 1;
        dims[j].beta_s_per_byte *= sharers * channel_beta_scale(&given[j], n_bytes);
    }
    /* one call: its fixed cost (launch, handshake) is paid once, the
     * largest of the clusters it spans (the steps along dims run in it) */
    for (int j = 0; j < count; j++)
        if (dims[j].call_s > total.time_s) total.time_s = dims[j].call_s;
    double all = 1;
    for (int j = 0; j < count; j++) all *= (double)dims[j].p;
    double share = n_bytes;
    switch (kind) {
    case CK_REDUCE_SCATTER:
        for (int j = 0; j < count; j++) {
            add_ring_step(&total, &dims[j], share, all);
            share /= (double)dims[j].p;
        }
        break;
    case CK_ALLGATHER: /* the mirror image: gather the innermost first */
        for (int j = 0; j < count; j++) share /= (double)dims[j].p;
        for (int j = count - 1; j >= 0; j--) {
            share *= (double)dims[j].p;
            add_ring_step(&total, &dims[j], share, all);
        }
        break;
    case CK_ALLREDUCE:
    case CK_REDUCE:
        /* reduce-scatter along all but the last dim, all-reduce along the
         * last on the reduced share, all-gather back (a reduce gathers to
         * its root instead, which costs the same on these links) */
        for (int j = 0; j < count - 1; j++) {
            add_ring_step(&total, &dims[j], share, all);
            share /= (double)dims[j].p;
        }
        {
            const NetDim *last = &dims[count - 1];
            NetCost rs = reduce_scatter_1d(last, share);
            add_step(&total, rs, all / (double)last->p, last);
            add_step(&total, rs, all / (double)last->p, last);
        }
        for (int j = count - 2; j >= 0; j--) {
            share *= (double)dims[j].p;
            add_ring_step(&total, &dims[j], share, all);
        }
        break;
    case CK_BROADCAST:
        for (int j = 0; j < count; j++)
            add_step(&total, broadcast_1d(&dims[j], n_bytes), all / (double)dims[j].p, &dims[j]);
        break;
    case CK_ALLTOALL:
        for (int j = 0; j < count; j++)
            add_step(&total, alltoall_1d(&dims[j], n_bytes), all / (double)dims[j].p, &dims[j]);
        break;
    }
    return total;
}

double systolic_cycles(double m, double k, double n, int rows, int cols, int count) {
    if (m <= 0 || k <= 0 || n <= 0 || rows <= 0 || cols <= 0) return 0;
    double folds = ceil(k / rows) * ceil(n / cols);
    double per_array = ceil(folds / (count > 0 ? count : 1));
    return per_array * (2.0 * rows + cols + m - 2);
}

double stmt_ops_per_point(const IrStmt *s, const IrCompute *unit) {
    if (s->cls == SC_CONTRACTION) return 1; /* one MAC */
    double ops = s->arith_ops;
    for (int i = 0; i < s->fn_count; i++) ops += ir_fn_cost(unit, s->fns[i].fn) * s->fns[i].count;
    if (s->reduced_count > 0) ops += 1; /* combining into the reduction */
    return ops > 0 ? ops : 1;           /* a plain copy still moves a value */
}
