/* formulas.c — the cost model's formulas, term by term as
 * docs/cost-model.md states them: alpha-beta collectives per topology,
 * the SCALE-Sim fold formula and element operations per point.  Pure
 * functions of numbers, so tests can check them against hand arithmetic. */
#include "passes/passes.h"

#include <math.h>

/* The NVLinks of DGX-1 with eight V100s, as `nvidia-smi topo -m` prints
 * them on that machine (NV1 / NV2): GPUs 0-3 and 4-7 each fully linked,
 * GPU i joined to GPU i + 4, six links a GPU (docs/cost-model.md section
 * 4, "Hybrid cube mesh", gives the sources). */
const int hybrid_cube_mesh_links[HYBRID_CUBE_MESH_GPUS][HYBRID_CUBE_MESH_GPUS] = {
    {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0},
    {2, 1, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
    {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0},
};

NetDim net_dim(const IrArch *a, int d) {
    const IrClusterDim *cd = &a->dims[d];
    const IrCluster *c = &a->clusters[cd->cluster];
    NetDim n = {0};
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
    n.channel_growth = c->channel_growth > 0 ? c->channel_growth : 1;
    n.sharers = 1;
    n.cluster = cd->cluster;
    if (cd->topology == TOPO_DRAGONFLY) {
        /* the first dim counts the groups, the second the chips of one */
        n.crosses_groups = d == c->first_dim;
        n.group_chips = c->dim_count > 1 ? a->dims[c->first_dim + 1].size : 1;
        /* every chip of a group sends (a collective narrows it: collectives.c) */
        n.group_sharers = (double)n.group_chips;
        n.global_links = c->global_links > 1 ? (double)c->global_links : 1;
        n.global_beta_s_per_byte = (c->global_bandwidth > 0 && isfinite(c->global_bandwidth))
                                       ? 1.0 / c->global_bandwidth
                                       : n.beta_s_per_byte;
    }
    return n;
}

/* d with every beta (local and global links) times `factor`. */
static NetDim scale_beta(const NetDim *d, double factor) {
    NetDim scaled = *d;
    scaled.beta_s_per_byte *= factor;
    scaled.global_beta_s_per_byte *= factor;
    return scaled;
}

/* The links a step along d runs over: along a dragonfly's second dim the
 * chips of one group, linked pairwise like `full`. */
static Topology step_topology(const NetDim *d) {
    return d->topology == TOPO_DRAGONFLY && !d->crosses_groups ? TOPO_FULL : d->topology;
}

/* Hops of a route between chips of two dragonfly groups: local, global,
 * local (Kim et al. 2008's minimal route); the global one alone when a
 * group is one chip. */
static double dragonfly_hops(const NetDim *d) {
    return d->group_chips > 1 ? 3 : 1;
}

/* Mean hops between chips of two groups: a local hop at each end unless
 * the chip is the router holding the global link, (R-1)/R of the time. */
static double dragonfly_mean_hops(const NetDim *d) {
    if (d->group_chips <= 1) return 1;
    double r = (double)d->group_chips;
    return 1 + 2 * (r - 1) / r;
}

/* One step across a dragonfly's groups in which every chip sends x bytes
 * to each of `groups` other groups (docs/cost-model.md section 4,
 * "Dragonfly").  The S chips of a group with their own data share the L
 * global links of each pair of groups: S x / L bytes a link.  A chip's
 * bytes for those groups reach the routers holding the links over its
 * local links: the busiest router holds ceil(groups L / R) of them, each
 * taking x / L from every chip over the one local link between them.  The
 * busier kind of link sets the pace. */
static double dragonfly_step_s(const NetDim *d, double x, double groups) {
    double links = d->global_links >= 1 ? d->global_links : 1;
    double sharers = d->group_sharers >= 1 ? d->group_sharers : 1;
    double per_link = sharers * d->global_beta_s_per_byte;
    if (d->group_chips > 1) {
        double gateway_links = ceil(groups * links / (double)d->group_chips);
        double local = gateway_links * d->beta_s_per_byte;
        if (local > per_link) per_link = local;
    }
    return dragonfly_hops(d) * d->alpha_s + x / links * per_link;
}

NetCost send_cost(const NetDim *d, double n) {
    NetCost c = {0, 0, 0};
    if (d->p <= 1 || !(n > 0)) return c;
    NetDim scaled = scale_beta(d, channel_beta_scale(d, n));
    if (step_topology(d) == TOPO_DRAGONFLY) {
        /* to the next group: every chip of the group sends at once */
        c.time_s = d->call_s + dragonfly_step_s(&scaled, n, 1);
        c.byte_hops = n * dragonfly_mean_hops(d);
    } else {
        c.time_s = d->call_s + d->alpha_s + n * scaled.beta_s_per_byte;
        c.byte_hops = n;
    }
    c.energy_j = c.byte_hops * d->link_energy_j_per_byte;
    return c;
}

int64_t net_diameter(const NetDim *d) {
    if (d->p <= 1) return 0;
    switch (step_topology(d)) {
    case TOPO_RING:
    case TOPO_TORUS: return d->unidirectional ? d->p - 1 : d->p / 2;
    case TOPO_MESH: return d->p - 1;
    case TOPO_SWITCH:
    case TOPO_FULL: return 1;
    case TOPO_DRAGONFLY: return (int64_t)dragonfly_hops(d);
    case TOPO_HYBRID_CUBE_MESH: return HYBRID_CUBE_MESH_DIAMETER;
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
    c.byte_hops = (p - 1) * n; /* each rank sends (p-1)/p n over one hop */
    switch (step_topology(d)) {
    case TOPO_RING:
    case TOPO_TORUS:
    case TOPO_MESH: c.time_s = (p - 1) * d->alpha_s + (p - 1) / p * n * ring_beta(d); break;
    case TOPO_SWITCH: /* recursive halving: every pair is one hop apart */
        c.time_s = log2_ceil(d->p) * d->alpha_s + (p - 1) / p * n * d->beta_s_per_byte;
        break;
    case TOPO_FULL: /* one step: n/p to each peer over its own link */
        c.time_s = d->alpha_s + n / p * d->beta_s_per_byte;
        break;
    case TOPO_DRAGONFLY: /* one step: n/p to the rank of each other group */
        c.time_s = dragonfly_step_s(d, n / p, p - 1);
        c.byte_hops *= dragonfly_mean_hops(d);
        break;
    case TOPO_HYBRID_CUBE_MESH:
        /* NCCL's rings: the links form 3 edge-disjoint Hamiltonian rings,
         * each run both ways on its sixth of the buffer */
        c.time_s = (p - 1) * d->alpha_s +
                   (p - 1) / p * n * d->beta_s_per_byte / (2.0 * HYBRID_CUBE_MESH_RINGS);
        break;
    }
    return c;
}

static NetCost broadcast_1d(const NetDim *d, double n) {
    NetCost c = {0, 0, 0};
    if (d->p <= 1 || n <= 0) return c;
    double p = (double)d->p;
    c.byte_hops = (p - 1) * n;
    switch (step_topology(d)) {
    case TOPO_DRAGONFLY: /* the root's group sends n to every other group */
        c.time_s = dragonfly_step_s(d, n, p - 1);
        c.byte_hops *= dragonfly_mean_hops(d);
        break;
    case TOPO_HYBRID_CUBE_MESH: {
        /* the faster of a tree two hops deep (the root's four neighbours,
         * then the rest from the root's partner in the other quad: each
         * link carries n) and the six one-way rings, each a chain of p - 1
         * hops carrying a sixth of n */
        double tree = HYBRID_CUBE_MESH_DIAMETER * d->alpha_s + n * d->beta_s_per_byte;
        double rings =
            (p - 1) * d->alpha_s + n * d->beta_s_per_byte / (2.0 * HYBRID_CUBE_MESH_RINGS);
        c.time_s = tree < rings ? tree : rings;
        break;
    }
    case TOPO_RING:
    case TOPO_TORUS:
    case TOPO_MESH:
    case TOPO_SWITCH:
    case TOPO_FULL:
        /* pipelined from the root: the farthest rank is a diameter away */
        c.time_s = (double)net_diameter(d) * d->alpha_s + n * d->beta_s_per_byte;
        break;
    }
    return c;
}

/* Average hops between two distinct ranks of one dim. */
static double mean_distance(const NetDim *d) {
    double p = (double)d->p;
    switch (step_topology(d)) {
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
    case TOPO_DRAGONFLY: return dragonfly_mean_hops(d);
    case TOPO_HYBRID_CUBE_MESH: return (4.0 * 1 + 3.0 * 2) / 7; /* 4 GPUs 1 hop away, 3 two */
    }
    return 1;
}

static NetCost alltoall_1d(const NetDim *d, double n) {
    NetCost c = {0, 0, 0};
    if (d->p <= 1 || n <= 0) return c;
    double p = (double)d->p, b = d->beta_s_per_byte;
    /* bandwidth term: the bytes that cross the bisection over its links */
    switch (step_topology(d)) {
    case TOPO_RING:
    case TOPO_TORUS:
        c.time_s = (p - 1) * d->alpha_s + p * n * b / (d->unidirectional ? 4 : 8);
        break;
    case TOPO_MESH: c.time_s = (p - 1) * d->alpha_s + p * n * b / 4; break;
    case TOPO_SWITCH: c.time_s = (p - 1) * d->alpha_s + (p - 1) / p * n * b; break;
    case TOPO_FULL: c.time_s = d->alpha_s + n / p * b; break;
    case TOPO_DRAGONFLY: c.time_s = dragonfly_step_s(d, n / p, p - 1); break;
    case TOPO_HYBRID_CUBE_MESH:
        /* direct sends, a pair not linked through a GPU linked to both:
         * p n / 4 bytes cross between the quads each way, over 6 links */
        c.time_s = HYBRID_CUBE_MESH_DIAMETER * d->alpha_s +
                   p * n / 4 * b / HYBRID_CUBE_MESH_BISECTION_LINKS;
        break;
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
 * n bytes spreads over min(C, max(1, (n / channel_bytes)^g)) of a
 * cluster's C channels (g its channel_growth, 1 by default), each moving
 * 1/C of the link bandwidth, so a small call sees beta x C / used.
 * Continuous rather than whole channels: the busiest instance's share,
 * rounded up, must not tip a call into one channel more or less. */
double channel_beta_scale(const NetDim *d, double n_bytes) {
    if (d->channels <= 1 || !(d->channel_bytes > 0) || !(n_bytes > 0)) return 1;
    if (d->sharers > 1) n_bytes *= d->sharers; /* one call carries every sharer's part */
    double used = n_bytes / d->channel_bytes;
    if (d->channel_growth > 0 && d->channel_growth != 1) used = pow(used, d->channel_growth);
    if (used >= (double)d->channels) return 1;
    if (used < 1) used = 1;
    return (double)d->channels / used;
}

/* A collective over both dims of a dragonfly runs along the chips of each
 * group first: the reduce-scatter inside the groups leaves each chip 1/R
 * of the buffer, so the global links carry the least (the all-gather, its
 * mirror, crosses the groups first).  Every chip then crosses with its
 * own share, except in a broadcast, where the root's data crosses once to
 * each group and spreads inside it. */
static void order_dragonfly(CollKind kind, NetDim *dims, int count) {
    for (int j = 0; j < count; j++) {
        if (step_topology(&dims[j]) != TOPO_DRAGONFLY) continue;
        for (int k = 0; k < count; k++) {
            if (dims[k].topology != TOPO_DRAGONFLY || dims[k].crosses_groups ||
                dims[k].cluster != dims[j].cluster)
                continue;
            dims[j].group_sharers = kind == CK_BROADCAST ? 1 : (double)dims[j].group_chips;
            if (k > j) {
                NetDim groups = dims[j];
                dims[j] = dims[k];
                dims[k] = groups;
            }
            break;
        }
    }
}

NetCost collective_cost(CollKind kind, const NetDim *given, int count, double n_bytes) {
    NetCost total = {0, 0, 0};
    if (count <= 0 || n_bytes <= 0 || count > SCHED_MAX_DIMS) return total;
    NetDim dims[SCHED_MAX_DIMS];
    for (int j = 0; j < count; j++) {
        double sharers = given[j].sharers > 1 ? given[j].sharers : 1;
        dims[j] = scale_beta(&given[j], sharers * channel_beta_scale(&given[j], n_bytes));
    }
    order_dragonfly(kind, dims, count);
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
