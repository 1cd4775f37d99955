/* collectives.c — collective insertion (language.md section 6):
 *  - a statement whose reduced index is split over dims D leaves partial
 *    results: allreduce(op) over D when a statement of its group needs the
 *    result on every instance, reduce_scatter(op) when the result is then
 *    split along another index or written out split, reduce(op) when no
 *    index of the result can be shared out;
 *  - an operand that does not depend on the index split over a dim (or a
 *    statement not split over it) needs the same tile on every instance:
 *    broadcast (multicast) over those dims as it is loaded;
 *  - a consumer in the same group that needs a tensor split differently
 *    from how its producer left it: allgather or alltoall over the dims.
 * Where several collectives would do, the cheaper one under the network
 * model is chosen, and the reason says so. */
#include "passes/passes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Where a collective runs: statement st moves tensor `tensor`, and the
 * dims between levels `outer` and `inner` run their own copies of it. */
typedef struct CollSite {
    int st, tensor;
    int outer, inner;
} CollSite;

/* A cluster's links belong to its instances: the copies of a collective
 * that instances of deeper clusters (the SMs of a GPU) run at once over a
 * dim all send through the links of the one instance of the dim's cluster
 * they sit in.  Copies count along the dims outside the collective, below
 * the dim's cluster and inside the site's levels, that hold different
 * parts of the tensor (the statement splits them by one of its indices);
 * instances holding the same part send it once.  docs/cost-model.md
 * section 4, "Shared links". */
static double link_sharers(const Schedule *s, const CollSite *site, const int *dims, int count,
                           int d) {
    const IrArch *a = s->arch;
    int depth = a->clusters[a->dims[d].cluster].depth;
    double sharers = 1;
    for (int j = 0; j < a->dim_count; j++) {
        bool in = false;
        for (int q = 0; q < count; q++) in |= dims[q] == j;
        if (in || a->dims[j].size <= 1 || a->clusters[a->dims[j].cluster].depth <= depth) continue;
        if (!sched_dim_between(s, j, site->outer, site->inner)) continue;
        if (!sched_access_split(s, site->st, site->tensor, j)) continue;
        sharers *= (double)a->dims[j].size;
    }
    return sharers;
}

/* The chips of a dragonfly group that send other data across the groups
 * at once in a collective over the groups' dim d: all R of them when the
 * statement splits the tensor over the chips of a group (each holds its
 * own part), one when they hold the same data (sent once, as for shared
 * links).  A collective over both dims sets it itself (formulas.c). */
static double group_sharers(const Schedule *s, const CollSite *site, int d) {
    const IrArch *a = s->arch;
    const IrCluster *c = &a->clusters[a->dims[d].cluster];
    if (c->dim_count < 2) return 1;
    int chips = c->first_dim + 1;
    if (!sched_access_split(s, site->st, site->tensor, chips)) return 1;
    return (double)a->dims[chips].size;
}

static NetCost cost_over(const Schedule *s, const CollSite *site, CollKind kind, const int *dims,
                         int count, double n) {
    NetDim nd[SCHED_MAX_DIMS];
    for (int j = 0; j < count; j++) {
        nd[j] = net_dim(s->arch, dims[j]);
        nd[j].sharers = link_sharers(s, site, dims, count, dims[j]);
        if (nd[j].crosses_groups) nd[j].group_sharers = group_sharers(s, site, dims[j]);
    }
    return collective_cost(kind, nd, count, n);
}

/* copies: how many independent groups of P instances run this collective
 * (0: one per P compute instances). */
static SchedNode *add_collective(Schedule *s, int group, int pos, int phase, const CollSite *site,
                                 CollKind kind, ReduceOp op, const int *dims, int count, double n,
                                 double k, double copies) {
    NetCost c = cost_over(s, site, kind, dims, count, n);
    double P = 1;
    for (int j = 0; j < count; j++) P *= (double)s->arch->dims[dims[j]].size;
    SchedNode *node = sched_add_node(s, SN_COLLECTIVE, group);
    node->stmt = site->st;
    node->tensor = site->tensor;
    node->net_outer = site->outer;
    node->net_inner = site->inner;
    node->coll = kind;
    node->reduce_op = op;
    for (int j = 0; j < count; j++) node->dims[j] = dims[j];
    node->dim_count = count;
    node->bytes = n;
    node->count = k;
    node->byte_hops = c.byte_hops;
    node->latency_s = c.time_s * k;
    node->chunks = 1;
    /* every group of instances along the dims runs its own copy */
    if (copies <= 0) copies = (double)s->total_instances / P;
    node->energy_j = c.energy_j * k * copies;
    node->position = pos;
    node->phase = phase;
    return node;
}

SchedNode *collective_insert(Schedule *s, int group, int position, int phase, int st, int tensor,
                             CollKind kind, ReduceOp op, const int *dims, int count, double bytes,
                             double executions) {
    CollSite site = {st, tensor, 0, 0};
    return add_collective(s, group, position, phase, &site, kind, op, dims, count, bytes,
                          executions, 0);
}

double collective_time(const Schedule *s, int st, int tensor, CollKind kind, const int *dims,
                       int count, double bytes) {
    CollSite site = {st, tensor, 0, 0};
    return cost_over(s, &site, kind, dims, count, bytes).time_s;
}

double collective_node_time(const Schedule *s, const SchedNode *n, double bytes) {
    CollSite site = {n->stmt, n->tensor, n->net_outer, n->net_inner};
    return cost_over(s, &site, n->coll, n->dims, n->dim_count, bytes).time_s;
}

static double instance_bytes(const Schedule *s, int st, const IrTensor *t) {
    double b = sched_elem_bytes(t);
    for (int r = 0; r < t->rank; r++)
        b *= s->stmts[st].extent[sched_li(s, s->levels, sched_access_index(s, st, t->id, r))];
    return b;
}

/* How a consumer statement needs tensor t along dim d. */
static Layout need_of(const Schedule *s, int consumer, const IrTensor *t, int d) {
    int sp = s->stmts[consumer].split[d];
    /* the consumer names t's dimensions by its own access; a layout speaks
     * of the tensor's own index names */
    int r = sp >= 0 ? ir_stmt_tensor_dim(s->op, &s->op->stmts[consumer], t->id, sp) : -1;
    if (r >= 0) return (Layout){LAY_SPLIT, t->index[r]};
    return (Layout){LAY_REPLICATED, -1};
}

/* Whether a later statement reads st's result and needs it whole on every
 * instance along one of the dims dims[0..count): then the partial results
 * over those dims are combined with an allreduce (or a reduce + broadcast
 * pair), which leaves the result on every instance.  A reader of st's own
 * group counts along every dim; a reader of a later group only along the
 * dims outside the outermost memory: there each instance keeps its own copy
 * of the boundary tensor, and a reduce_scatter would leave every copy short
 * of the part the reader needs (inside it, the instances write their parts
 * into one shared memory and the reader loads what it needs). */
static bool needs_everywhere(const Schedule *s, int st, const int *dims, int count) {
    const IrOp *op = s->op;
    const IrTensor *y = &op->tensors[op->stmts[st].out_tensor];
    for (int c = st + 1; c < op->stmt_count; c++) {
        bool same_group = s->stmts[c].group == s->stmts[st].group;
        const IrStmt *cs = &op->stmts[c];
        bool reads = false;
        for (int q = 0; q < cs->input_count; q++)
            if (cs->inputs[q] == y->id) reads = true;
        if (!reads) continue;
        for (int j = 0; j < count; j++)
            if ((same_group || sched_dim_outside(s, dims[j], 0)) &&
                need_of(s, c, y, dims[j]).kind == LAY_REPLICATED)
                return true;
    }
    return false;
}

/* One broadcast: the tile of `tensor` that statement st moves from level
 * `from` into level `to` (`to` = the compute units) `count` times, shared
 * by the instances along the dims between them whose split index the
 * tensor does not have.  The outer level serves it once (section 3 counts
 * the read once); a multicast delivers it. */
static void broadcast_tile(Schedule *s, int group, int position, int st, int tensor, int from,
                           int to, double bytes, double count, int depth) {
    const SchedStmt *ss = &s->stmts[st];
    const IrTensor *tn = &s->op->tensors[tensor];
    int dims[SCHED_MAX_DIMS], dc = 0;
    bool unsplit_only = true;
    for (int d = 0; d < s->arch->dim_count; d++) {
        if (!sched_dim_between(s, d, from, to)) continue;
        if (s->arch->dims[d].size <= 1) continue;
        int sp = ss->split[d];
        if (sched_access_split(s, st, tensor, d)) continue;
        /* a dim along which every tile dealt out leaves all but the first
         * instance idle has no one to deliver to */
        if (sp >= 0 && sched_dim_busy(s, ss, d, from, to) <= 1) continue;
        if (sp >= 0) unsplit_only = false;
        dims[dc++] = d;
    }
    if (!dc) return;
    double P = 1;
    for (int j = 0; j < dc; j++) P *= (double)s->arch->dims[dims[j]].size;
    /* one broadcast per instance of the outer level and tile: the
     * instances of the inner level in groups of P */
    double inner =
        to < s->levels ? (double)s->arch->levels[to].instances : (double)s->total_instances;
    CollSite site = {st, tensor, from, to};
    SchedNode *n = add_collective(s, group, position, 1, &site, CK_BROADCAST, RO_NONE, dims, dc,
                                  bytes, count, inner / P);
    n->from_level = from;
    n->to_level = to < s->levels ? to : s->levels - 1;
    n->depth = depth;
    if (!s->want_text) return;
    const char *dl = sched_dims_text(s->arena, s, dims, dc);
    if (unsplit_only) {
        n->reason =
            arena_printf(s->arena, "%s is not split over %s: every instance needs the same %s tile",
                         s->op->stmts[st].name, dl, tn->name);
        return;
    }
    char idx[128] = "";
    size_t used = 0;
    for (int j = 0; j < dc && used + 20 < sizeof idx; j++) {
        int sp = ss->split[dims[j]];
        if (sp < 0 || strstr(idx, s->op->indices[sp].name)) continue;
        used += (size_t)snprintf(idx + used, sizeof idx - used, "%s%s", used ? ", " : "",
                                 s->op->indices[sp].name);
    }
    n->reason = arena_printf(s->arena,
                             "%s does not depend on %s, split over %s: every instance needs the "
                             "same tile",
                             tn->name, idx, dl);
}

/* Every load whose tile several inner instances share, and every operand
 * the compute units read from the innermost memory when dims lie between
 * that memory and the units.  A tensor the group made and every instance
 * already holds is still multicast when it is loaded again from a level
 * above the dims: it was written there once. */
/* The reader's compute tiles inside one level-l tile of tensor t that
 * are made in iterations of loops outside `wait` (deeper than l, over
 * t's indices as statement st reads them), by st's trips. */
static double pieces_per_tile(const Schedule *s, const SchedGroup *g, int st, int t, int l,
                              int wait) {
    double n = 1;
    for (int q = 0; q < wait && q < g->loop_count; q++) {
        const SchedLoop *lp = &g->loops[q];
        if (lp->level <= l || !sched_access_has_index(s, st, t, lp->index)) continue;
        double trips = s->stmts[st].trips[sched_li(s, lp->level, lp->index)];
        if (trips > 1) n *= trips;
    }
    return n;
}

/* A load of a tensor made in the group fills the reader's tile while the
 * producer is still making it, when the tile spans loops deeper than its
 * level that make it piece by piece: all of them when the reader runs in
 * its producer's pass, those outside the loop it waits for when it runs
 * in a later pass: on its first visit the tile arrives piece by piece,
 * one piece per compute tile of the reader made in those loops (fewer
 * when the producer makes bigger pieces); later visits find it complete,
 * and so do the visits in iterations of loops the maker does not run (it
 * made everything in their first iteration).
 * Returns the transfers, and the bytes of each in *bytes. */
static double filled_pieces(const Schedule *s, const SchedNode *node, double *bytes) {
    const IrTensor *tn = &s->op->tensors[node->tensor];
    const SchedGroup *g = &s->groups[node->group];
    int maker = tn->producer;
    *bytes = node->bytes;
    if (maker < 0 || s->stmts[maker].group != node->group || maker == node->stmt)
        return node->count;
    int rp = s->stmts[node->stmt].position, mp = s->stmts[maker].position;
    /* in the producer's own pass every deeper loop makes pieces; in a
     * later pass only the loops outside the one it waits for */
    bool same_pass = g->wait_loop[rp] == g->wait_loop[mp] && g->round[rp] == g->round[mp];
    int w = same_pass ? g->loop_count : g->wait_loop[rp];
    int l = node->to_level;
    double per_tile = pieces_per_tile(s, g, node->stmt, tn->id, l, w);
    double made = pieces_per_tile(s, g, maker, tn->id, l, w);
    if (made < per_tile) per_tile = made;
    if (!(per_tile > 1)) return node->count;
    /* the visits that find the tile being made: those in the maker's
     * iterations (the first iteration of the loops only the reader runs) */
    double first = sched_visits(s, g, node->stmt, tn, l).distinct;
    double during = sched_visits_over(s, g, node->stmt, tn->id, l, maker);
    if (during < first) first = during;
    double transfers = first * per_tile + (node->count - first);
    *bytes = node->bytes * node->count / transfers;
    return transfers;
}

/* Under a restriction (docs/cost-model.md 3.1) the children along a dim
 * that splits x or y do not move a tile they share at the same steps: a
 * multicast runs at the steps where two or more of them move it (one
 * alone loads it as usual).  `count` otherwise. */
static double masked_multicasts(const Schedule *s, const SchedNode *node, int level, double count) {
    const SchedStmt *ss = &s->stmts[node->stmt];
    if (!ss->mask) return count;
    /* along a dim that splits nothing of the statement every replica moves
     * every tile the walk moves: each move is a multicast (over those dims
     * at least), never a load of one instance alone */
    int from = node->kind == SN_LOAD ? node->from_level : s->levels - 1;
    for (int d = 0; d < s->arch->dim_count; d++)
        if (s->arch->dims[d].size > 1 && ss->split[d] < 0 && sched_dim_between(s, d, from, level))
            return count;
    const SchedGroup *g = &s->groups[node->group];
    const IrTensor *tn = &s->op->tensors[node->tensor];
    SchedVisits v = sched_visits(s, g, node->stmt, tn, level);
    double xy, any, multi;
    if (!sched_mask_children(s, g, node->stmt, tn->id, level, v.depth + 1, &xy, &any, &multi))
        return count;
    return multi;
}

/* An uneven split (docs/cost-model.md 1.1) along a dim a broadcast spans:
 * the tensor does not have the split index i, so the instances move the
 * same tile at the same steps of their walk over i, but the walk is the
 * busiest instance's and the others' shares are shorter.  Past the second
 * busiest's last tile only one instance moves it, a load, not a
 * multicast.  So the multicasts are the visits with the loops over i
 * (those outside the tile's innermost loop) at the second busiest's
 * trips.  Only when one dim deals i (the common case). */
static double uneven_multicasts(const Schedule *s, const SchedNode *node, int level, double count) {
    const SchedStmt *ss = &s->stmts[node->stmt];
    if (ss->mask) return count;
    const SchedGroup *g = &s->groups[node->group];
    const IrTensor *tn = &s->op->tensors[node->tensor];
    int from = node->kind == SN_LOAD ? node->from_level : s->levels - 1;
    for (int d = 0; d < s->arch->dim_count; d++) {
        int i = ss->split[d];
        /* (a joint deal: every move counted, an upper bound) */
        if (i < 0 || ss->joint[d][0] >= 0 || !sched_dim_between(s, d, from, level) ||
            sched_access_has_index(s, node->stmt, tn->id, i))
            continue;
        int dealers = 0;
        for (int e = 0; e < s->arch->dim_count; e++) dealers += ss->split[e] == i;
        if (dealers != 1) continue;
        double parts = (double)s->arch->dims[d].size, len, block;
        sched_deal_range(s, ss, d, from, level, &len, &block);
        double blocks = ceil(len / block), run = ceil(blocks / parts);
        double full = floor(blocks / run), rest = blocks - full * run;
        if (full >= 2 || rest <= 0) continue; /* the second busiest walks as far */
        double busiest = run * block < len ? run * block : len;
        double second = len - busiest < rest * block ? len - busiest : rest * block;
        SchedVisits v = sched_visits(s, g, node->stmt, tn, level);
        double trips = 1, step = INFINITY;
        for (int k = 0; k <= v.depth && k < g->loop_count; k++)
            if (g->loops[k].index == i) {
                trips *= g->loops[k].trips;
                if (g->loops[k].step < step) step = g->loops[k].step;
            }
        if (trips <= 1 || !isfinite(step)) continue;
        double walked = ceil(busiest / step), shorter = ceil(second / step);
        if (walked > trips) walked = trips;
        if (shorter < walked) count *= shorter / walked;
    }
    return count;
}

static void broadcasts(Schedule *s) {
    int count = s->node_count;
    for (int ni = 0; ni < count; ni++) {
        SchedNode node = s->nodes[ni];
        if (node.kind == SN_LOAD) {
            double bytes, transfers = filled_pieces(s, &node, &bytes);
            transfers = masked_multicasts(s, &node, node.to_level, transfers);
            transfers = uneven_multicasts(s, &node, node.to_level, transfers);
            broadcast_tile(s, node.group, node.position, node.stmt, node.tensor, node.from_level,
                           node.to_level, bytes, transfers, node.depth);
            continue;
        }
        if (node.kind != SN_COMPUTE || node.stmt < 0 || node.rescale) continue;
        const IrStmt *is = &s->op->stmts[node.stmt];
        const SchedGroup *g = &s->groups[node.group];
        for (int q = 0; q < is->input_count; q++) {
            int t = is->inputs[q];
            const IrTensor *tn = &s->op->tensors[t];
            SchedVisits v = sched_visits(s, g, node.stmt, tn, s->levels);
            /* the compute tile, averaged over the busiest instance's
             * tiles (partial ones included, section 3) */
            double bytes = sched_elem_bytes(tn);
            for (int r = 0; r < tn->rank; r++) {
                int li = sched_li(s, s->levels, sched_access_index(s, node.stmt, t, r));
                bytes *= s->stmts[node.stmt].extent[li] / s->stmts[node.stmt].count[li];
            }
            SchedNode probe = node;
            probe.tensor = t;
            broadcast_tile(s, node.group, node.position, node.stmt, t, s->levels - 1, s->levels,
                           bytes,
                           uneven_multicasts(s, &probe, s->levels,
                                             masked_multicasts(s, &probe, s->levels, v.visits)),
                           node.after_inner ? node.depth : v.depth);
        }
    }
}

/* The extent of index `index` one instance of producer p holds as it left
 * the tensor (eff), over the cluster dims outside level `via`. */
static double producer_block(const Schedule *s, const Layout *eff, int p, int index, int via) {
    int D = s->arch->dim_count;
    double block = (double)s->op->indices[index].extent;
    for (int d = 0; d < D; d++)
        if (s->arch->dims[d].size > 1 && sched_dim_outside(s, d, via) &&
            eff[p * D + d].kind == LAY_SPLIT && eff[p * D + d].index == index)
            block /= (double)s->arch->dims[d].size;
    return block;
}

/* The extent of dimension r of tensor y that one instance of reader c
 * needs: its share along the cluster dims outside level `via` that split
 * the index it reads the dimension with. */
static double reader_share(const Schedule *s, int c, const IrTensor *y, int r, int via) {
    int ci = sched_access_index(s, c, y->id, r);
    /* the busiest instance's, dealt in whole blocks (section 1.1) */
    return s->stmts[c].extent[sched_li(s, via, ci)];
}

/* Where the elements of one index of a tensor lie across the cluster dims
 * outside the memory it passes through.  A dim that splits the index below
 * memory level l splits each of l's tiles of it (with the other dims below
 * l in turn, outer dims first): the element at x is at position
 * floor((x mod period) / block) mod size.  Above every memory, or for the
 * result of a reduce_scatter (which splits each combined tile evenly), the
 * period is the whole extent: contiguous blocks. */
typedef struct Placement {
    int count;
    int dims[SCHED_MAX_DIMS];
    double period[SCHED_MAX_DIMS], block[SCHED_MAX_DIMS];
} Placement;

/* The innermost memory level whose instances each hold all of cluster dim
 * d's instances; -1 when d lies above every memory. */
static int level_above(const Schedule *s, int d) {
    int l = -1;
    for (int k = 0; k < s->levels; k++)
        if (!sched_dim_outside(s, d, k)) l = k;
    return l;
}

/* The placement of index `ix` of statement st over the dims outside `via`
 * where splits[d]; whole[d]: that dim splits the whole extent. */
static Placement placement(const Schedule *s, int st, int ix, const bool *splits, const bool *whole,
                           int via) {
    const IrArch *arch = s->arch;
    Placement pl = {0};
    double extent = (double)s->op->indices[ix].extent;
    for (int d = 0; d < arch->dim_count; d++) {
        if (!splits[d] || arch->dims[d].size <= 1 || !sched_dim_outside(s, d, via)) continue;
        int l = whole[d] ? -1 : level_above(s, d);
        double period = l < 0 ? extent : s->stmts[st].tile[sched_li(s, l, ix)];
        if (!(period > 0) || period > extent) period = extent;
        /* the dims dealing this range together: those up to d (outer, more
         * significant) and all of them */
        double parts = 1, all = 1;
        for (int e = 0; e < arch->dim_count; e++) {
            bool deals = splits[e] && arch->dims[e].size > 1 && sched_dim_outside(s, e, via) &&
                         (whole[d] ? whole[e] : !whole[e] && level_above(s, e) == l);
            if (!deals) continue;
            all *= (double)arch->dims[e].size;
            if (e <= d) parts *= (double)arch->dims[e].size;
        }
        /* they deal it in whole blocks of b, the tile of the level just
         * below them (one element when it has none), each instance
         * ceil(ceil(period / b) / all) of them (section 1.1): the last
         * instances get less or nothing when that does not divide */
        double b = whole[d] ? 1 : sched_deal_block(s, st, l + 1, ix);
        double each = sched_deal(period, all, b);
        pl.dims[pl.count] = d;
        pl.period[pl.count] = period;
        pl.block[pl.count] = each * all / parts;
        pl.count++;
    }
    return pl;
}

static int placed_at(const Schedule *s, const Placement *pl, int j, double x) {
    double size = (double)s->arch->dims[pl->dims[j]].size;
    return (int)fmod(floor(fmod(x, pl->period[j]) / pl->block[j]), size);
}

/* Whether the instance at coord holds (or takes) element x. */
static bool placed_here(const Schedule *s, const Placement *pl, double x, const int *coord) {
    for (int j = 0; j < pl->count; j++)
        if (placed_at(s, pl, j, x) != coord[pl->dims[j]]) return false;
    return true;
}

/* The step a walk over an index can take without crossing a block or
 * tile boundary: the greatest common divisor of the blocks, periods and
 * `tile` (none when 0) when all are whole numbers, else 1. */
static double walk_step(const Placement *a, const Placement *b, double tile) {
    long g = 0;
    double v[4 * SCHED_MAX_DIMS + 1];
    int n = 0;
    for (int j = 0; j < a->count; j++) {
        v[n++] = a->period[j];
        v[n++] = a->block[j];
    }
    for (int j = 0; j < b->count; j++) {
        v[n++] = b->period[j];
        v[n++] = b->block[j];
    }
    if (tile > 0) v[n++] = tile;
    for (int k = 0; k < n; k++) {
        if (v[k] != floor(v[k]) || v[k] < 1) return 1;
        long x = (long)v[k];
        while (x) {
            long t = g % x;
            g = x;
            x = t;
        }
    }
    return g > 0 ? (double)g : 1;
}

static bool same_placement(const Placement *a, const Placement *b) {
    if (a->count != b->count) return false;
    for (int j = 0; j < a->count; j++)
        if (a->dims[j] != b->dims[j] || a->period[j] != b->period[j] || a->block[j] != b->block[j])
            return false;
    return true;
}

/* How producer p left dimension r of its result y (eff). */
static Placement made_placement(const Schedule *s, const Layout *eff, int p, const IrTensor *y,
                                int r, int via) {
    int D = s->arch->dim_count;
    bool splits[SCHED_MAX_DIMS] = {false}, whole[SCHED_MAX_DIMS] = {false};
    for (int d = 0; d < D; d++) {
        splits[d] = eff[p * D + d].kind == LAY_SPLIT && eff[p * D + d].index == y->index[r];
        whole[d] = s->stmts[p].out_layout[d].kind != LAY_SPLIT;
    }
    return placement(s, p, y->index[r], splits, whole, via);
}

/* How reader c takes dimension r of y. */
static Placement taken_placement(const Schedule *s, int c, const IrTensor *y, int r, int via) {
    int ci = sched_access_index(s, c, y->id, r);
    bool splits[SCHED_MAX_DIMS] = {false}, whole[SCHED_MAX_DIMS] = {false};
    for (int d = 0; d < s->arch->dim_count; d++) splits[d] = s->stmts[c].split[d] == ci;
    return placement(s, c, ci, splits, whole, via);
}

/* The part of dimension r of y one instance of reader c takes per tile at
 * `level`: the level's tile, split further by the reader's dims below it,
 * at most its share. */
static double reader_tile(const Schedule *s, int c, const IrTensor *y, int r, int via, int level) {
    int ci = sched_access_index(s, c, y->id, r);
    double share = reader_share(s, c, y, r, via);
    double tile = s->stmts[c].tile[sched_li(s, level, ci)];
    for (int d = 0; d < s->arch->dim_count; d++)
        if (s->stmts[c].split[d] == ci && s->arch->dims[d].size > 1 &&
            sched_dim_outside(s, d, via) && level_above(s, d) >= level)
            tile /= (double)s->arch->dims[d].size;
    return tile > 0 && tile < share ? tile : share;
}

/* A memo key (LowerMemo): doubles by their bits, counts as they are. */
#define WALK_KEY_MAX                                                                               \
    (32 + 2 * SCHED_MAX_DIMS + IR_MAX_RANK * (2 * (1 + 3 * SCHED_MAX_DIMS) + 4) +                  \
     2 * IR_MAX_RANK * (3 + 3 * SCHED_MAX_DIMS))
enum { WALK_RELAYOUT = 1, WALK_ONE_OWNER, WALK_MOVES_ALONG };
typedef struct WalkKey {
    uint64_t w[WALK_KEY_MAX];
    size_t n;
} WalkKey;

static void key_int(WalkKey *k, long v) {
    k->w[k->n++] = (uint64_t)v;
}

static void key_double(WalkKey *k, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    k->w[k->n++] = bits;
}

/* The start of a key: which walk, and the sizes of the dims (every walk
 * reads them through the placements and positions). */
static void key_start(WalkKey *k, const Schedule *s, long walk) {
    k->n = 0;
    key_int(k, walk);
    key_int(k, s->arch->dim_count);
    for (int d = 0; d < s->arch->dim_count; d++) key_int(k, s->arch->dims[d].size);
}

static void key_placement(WalkKey *k, const Placement *pl) {
    key_int(k, pl->count);
    for (int j = 0; j < pl->count; j++) {
        key_int(k, pl->dims[j]);
        key_double(k, pl->period[j]);
        key_double(k, pl->block[j]);
    }
}

/* Positions walked times elements, beyond which the walks below give up. */
#define PLACEMENT_WALK_LIMIT 4e6

/* Fills coord[] for position `pos` over the dims over[0..oc). */
static void position_coords(const Schedule *s, const int *over, int oc, long pos, int *coord) {
    for (int j = oc - 1; j >= 0; j--) {
        coord[over[j]] = (int)(pos % s->arch->dims[over[j]].size);
        pos /= s->arch->dims[over[j]].size;
    }
}

/* Whether every tile that consumer c takes of tensor y (at level `level`)
 * lies with one instance along each gathered dim: then each tile is
 * broadcast by its owner and every other instance receives all of it.
 * False when there is too much to walk. */
static bool tiles_from_one_owner(const Schedule *s, const Layout *eff, int p, int c,
                                 const IrTensor *y, const int *gather, int gc, int via, int level) {
    int D = s->arch->dim_count;
    for (int j = 0; j < gc; j++) {
        int index = eff[p * D + gather[j]].index;
        int r = 0;
        while (r < y->rank && y->index[r] != index) r++;
        if (r == y->rank) return false;
        Placement made = made_placement(s, eff, p, y, r, via);
        Placement taken = taken_placement(s, c, y, r, via);
        int mj = 0;
        while (mj < made.count && made.dims[mj] != gather[j]) mj++;
        if (mj == made.count) return false;
        double tile = reader_tile(s, c, y, r, via, level);
        double extent = (double)s->op->indices[index].extent;
        double step = walk_step(&made, &taken, tile);
        long positions = 1;
        for (int k = 0; k < taken.count; k++) positions *= s->arch->dims[taken.dims[k]].size;
        if ((double)positions * extent / step > PLACEMENT_WALK_LIMIT) return false;
        /* the walk reads only these values (and the dims' sizes) */
        WalkKey key;
        double remembered;
        if (s->memo) {
            key_start(&key, s, WALK_ONE_OWNER);
            key_placement(&key, &made);
            key_placement(&key, &taken);
            key_int(&key, mj);
            key_double(&key, tile);
            key_double(&key, extent);
            key_double(&key, step);
            if (lower_memo_get(s->memo, key.w, key.n, &remembered)) {
                if (remembered == 0) return false;
                continue;
            }
        }
        bool one_owner = true;
        int coord[SCHED_MAX_DIMS] = {0};
        for (long pos = 0; pos < positions && one_owner; pos++) {
            position_coords(s, taken.dims, taken.count, pos, coord);
            double taken_so_far = 0;
            long chunk = -1;
            int owner = -1;
            for (double x = 0; x < extent; x += step) {
                if (!placed_here(s, &taken, x, coord)) continue;
                long this_chunk = (long)floor(taken_so_far / tile);
                taken_so_far += step;
                int at = placed_at(s, &made, mj, x);
                if (this_chunk != chunk) {
                    chunk = this_chunk;
                    owner = at;
                } else if (at != owner) {
                    one_owner = false;
                    break;
                }
            }
        }
        if (s->memo) lower_memo_put(s->memo, key.w, key.n, one_owner ? 1 : 0);
        if (!one_owner) return false;
    }
    return true;
}

/* Bytes the busiest instance receives per tile when reader c needs tensor
 * y laid out otherwise than its producer p left it (`dims`: the dims the
 * exchange runs over): for each tile the reader takes (at `level`), each
 * instance receives the part of its tile it does not hold itself; the
 * largest such part, averaged over the tiles.  Only the dims outside `via`
 * lay the tensor out.  -1 when there is too much to walk. */
static double relayout_received(const Schedule *s, const Layout *eff, int p, int c,
                                const IrTensor *y, const int *dims, int dc, int via, int level) {
    const IrArch *arch = s->arch;
    int D = arch->dim_count, R = y->rank;
    double tile[IR_MAX_RANK], extent[IR_MAX_RANK], step[IR_MAX_RANK], walked = 0;
    long ntiles[IR_MAX_RANK], tiles = 1, ranks = 1;
    Placement made[IR_MAX_RANK], taken[IR_MAX_RANK];
    /* the busiest instance over every dim that places y's elements, not
     * only the exchanging ones: an instance's position along a dim that
     * splits y for one side only shifts what it holds or needs */
    bool places[SCHED_MAX_DIMS] = {false};
    for (int j = 0; j < dc; j++) places[dims[j]] = true;
    double tile_bytes = sched_elem_bytes(y);
    for (int r = 0; r < R; r++) {
        made[r] = made_placement(s, eff, p, y, r, via);
        taken[r] = taken_placement(s, c, y, r, via);
        for (int j = 0; j < made[r].count; j++) places[made[r].dims[j]] = true;
        for (int j = 0; j < taken[r].count; j++) places[taken[r].dims[j]] = true;
        extent[r] = (double)s->op->indices[y->index[r]].extent;
        tile[r] = reader_tile(s, c, y, r, via, level);
        step[r] = walk_step(&made[r], &taken[r], tile[r]);
        walked += extent[r] / step[r];
        ntiles[r] = (long)(reader_share(s, c, y, r, via) / tile[r] + 0.5);
        if (ntiles[r] < 1) ntiles[r] = 1;
        tiles *= ntiles[r];
        tile_bytes *= tile[r];
        if (tiles > 1000000) return -1;
    }
    int over[SCHED_MAX_DIMS], oc = 0;
    for (int d = 0; d < D; d++)
        if (places[d]) {
            over[oc++] = d;
            ranks *= arch->dims[d].size;
        }
    if ((double)tiles * (double)ranks > 1e6 || (double)ranks * walked > PLACEMENT_WALK_LIMIT)
        return -1;
    /* a rank whose share of one of the reader's indices is empty (the
     * last ranks of an uneven split) reads nothing and receives nothing */
    const IrStmt *cs = &s->op->stmts[c];
    int cidx[2 * IR_MAX_RANK];
    int cn = ir_stmt_indices(cs, cidx);
    Placement split_by[2 * IR_MAX_RANK];
    double split_step[2 * IR_MAX_RANK], split_extent[2 * IR_MAX_RANK];
    int sn = 0;
    for (int k = 0; k < cn; k++) {
        bool splits[SCHED_MAX_DIMS] = {false}, whole[SCHED_MAX_DIMS] = {false}, any = false;
        for (int d = 0; d < D; d++) {
            splits[d] = s->stmts[c].split[d] == cidx[k];
            any |= splits[d] && arch->dims[d].size > 1 && sched_dim_outside(s, d, via);
        }
        if (!any) continue;
        split_by[sn] = placement(s, c, cidx[k], splits, whole, via);
        split_step[sn] = walk_step(&split_by[sn], &split_by[sn], 0);
        split_extent[sn] = (double)s->op->indices[cidx[k]].extent;
        walked += split_extent[sn] / split_step[sn];
        sn++;
    }
    if ((double)ranks * walked > PLACEMENT_WALK_LIMIT) return -1;
    /* the walk below reads only these values (and the dims' sizes): the
     * optimizer's lowerings repeat it with the same ones many times */
    WalkKey key;
    if (s->memo) {
        key_start(&key, s, WALK_RELAYOUT);
        key_int(&key, R);
        for (int r = 0; r < R; r++) {
            key_placement(&key, &made[r]);
            key_placement(&key, &taken[r]);
            key_double(&key, extent[r]);
            key_double(&key, tile[r]);
            key_double(&key, step[r]);
            key_int(&key, ntiles[r]);
        }
        key_double(&key, tile_bytes);
        key_int(&key, oc);
        for (int j = 0; j < oc; j++) key_int(&key, over[j]);
        key_int(&key, sn);
        for (int k = 0; k < sn; k++) {
            key_placement(&key, &split_by[k]);
            key_double(&key, split_step[k]);
            key_double(&key, split_extent[k]);
        }
        double remembered;
        if (lower_memo_get(s->memo, key.w, key.n, &remembered)) return remembered;
    }
    double *most = ARENA_ARRAY(s->arena, double, tiles);
    /* held[r][t]: consecutive in one row per instance, so that instances
     * holding the same shares (most do, by symmetry) are seen once: the
     * largest part is the same whichever of them gives it */
    long row = 0;
    for (int r = 0; r < R; r++) row += ntiles[r];
    double *held[IR_MAX_RANK];
    double **seen = ARENA_ARRAY(s->arena, double *, ranks + 1);
    uint64_t *seen_hash = ARENA_ARRAY(s->arena, uint64_t, ranks + 1);
    long seen_count = 0;
    double *shares = ARENA_ARRAY(s->arena, double, row + 1);
    int coord[SCHED_MAX_DIMS] = {0};
    long tv[IR_MAX_RANK] = {0};
    for (long ri = 0; ri < ranks; ri++) {
        position_coords(s, over, oc, ri, coord);
        bool idle = false;
        for (int k = 0; k < sn && !idle; k++) {
            idle = true;
            for (double x = 0; x < split_extent[k] && idle; x += split_step[k])
                if (placed_here(s, &split_by[k], x, coord)) idle = false;
        }
        if (idle) continue;
        /* the share of each of its tiles this instance holds, per dim */
        for (int r = 0, at = 0; r < R; at += (int)ntiles[r], r++) held[r] = shares + at;
        for (int r = 0; r < R; r++) {
            double taken_so_far = 0;
            for (long t = 0; t < ntiles[r]; t++) held[r][t] = 0;
            for (double x = 0; x < extent[r]; x += step[r]) {
                if (!placed_here(s, &taken[r], x, coord)) continue;
                long t = (long)floor(taken_so_far / tile[r]);
                taken_so_far += step[r];
                if (t < ntiles[r] && placed_here(s, &made[r], x, coord))
                    held[r][t] += step[r] / tile[r];
            }
        }
        uint64_t h = hash_words(shares, (size_t)row);
        bool again = false;
        for (long k = 0; k < seen_count && !again; k++)
            again = seen_hash[k] == h && memcmp(seen[k], shares, sizeof(double) * (size_t)row) == 0;
        if (again) continue;
        seen_hash[seen_count] = h;
        seen[seen_count] = ARENA_ARRAY(s->arena, double, row + 1);
        memcpy(seen[seen_count++], shares, sizeof(double) * (size_t)row);
        /* tile ti's digits tv[r] (the last dim fastest), counted up
         * rather than divided out; the product in the same order */
        for (int r = 0; r < R; r++) tv[r] = 0;
        for (long ti = 0; ti < tiles; ti++) {
            double part = 1;
            for (int r = R - 1; r >= 0; r--) part *= held[r][tv[r]];
            if (1 - part > most[ti]) most[ti] = 1 - part;
            for (int r = R - 1; r >= 0 && ++tv[r] == ntiles[r]; r--) tv[r] = 0;
        }
    }
    double sum = 0;
    for (long ti = 0; ti < tiles; ti++) sum += most[ti];
    double received = tile_bytes * sum / (double)tiles;
    if (s->memo) lower_memo_put(s->memo, key.w, key.n, received);
    return received;
}

/* Whether, where reader c takes tensor y's dimension made along the index
 * producer p split over cluster dim d otherwise than p left it, some
 * element an instance needs is held only by instances at another position
 * along d: then the exchange runs along d.  (Its position along the
 * producer's other dims may change too; those dims answer for
 * themselves.)  Conservatively true when there is too much to walk. */
static bool moves_along(const Schedule *s, const Layout *eff, int p, int c, const IrTensor *y,
                        int d, int via) {
    int D = s->arch->dim_count, index = eff[p * D + d].index, r = 0;
    /* a reduce_scatter along the index the reader splits scatters each
     * tile in the blocks the reader takes */
    if (s->stmts[p].out_layout[d].kind != LAY_SPLIT) return false;
    while (r < y->rank && y->index[r] != index) r++;
    if (r == y->rank) return true;
    Placement made = made_placement(s, eff, p, y, r, via);
    Placement taken = taken_placement(s, c, y, r, via);
    if (same_placement(&made, &taken)) return false;
    int mj = 0;
    while (mj < made.count && made.dims[mj] != d) mj++;
    if (mj == made.count) return true;
    int over[SCHED_MAX_DIMS], oc = 0;
    long positions = 1;
    for (int e = 0; e < D; e++) {
        bool in = e == d;
        for (int j = 0; j < taken.count; j++) in |= taken.dims[j] == e;
        if (in) {
            over[oc++] = e;
            positions *= s->arch->dims[e].size;
        }
    }
    double extent = (double)s->op->indices[index].extent;
    double step = walk_step(&made, &taken, 0);
    if ((double)positions * extent / step > PLACEMENT_WALK_LIMIT) return true;
    /* the walk reads only these values (and the dims' sizes) */
    WalkKey key;
    double remembered;
    if (s->memo) {
        key_start(&key, s, WALK_MOVES_ALONG);
        key_placement(&key, &made);
        key_placement(&key, &taken);
        key_int(&key, mj);
        key_int(&key, d);
        key_int(&key, oc);
        for (int j = 0; j < oc; j++) key_int(&key, over[j]);
        key_double(&key, extent);
        key_double(&key, step);
        if (lower_memo_get(s->memo, key.w, key.n, &remembered)) return remembered != 0;
    }
    bool moves = false;
    int coord[SCHED_MAX_DIMS] = {0};
    for (long pos = 0; pos < positions && !moves; pos++) {
        position_coords(s, over, oc, pos, coord);
        for (double x = 0; x < extent; x += step)
            if (placed_here(s, &taken, x, coord) && placed_at(s, &made, mj, x) != coord[d]) {
                moves = true;
                break;
            }
    }
    if (s->memo) lower_memo_put(s->memo, key.w, key.n, moves ? 1 : 0);
    return moves;
}

static void reductions_and_transitions(Schedule *s) {
    const IrOp *op = s->op;
    const IrArch *arch = s->arch;
    int D = arch->dim_count;
    /* effective layout of each result after its reduction collective */
    Layout *eff = ARENA_ARRAY(s->arena, Layout, op->stmt_count * (D ? D : 1));
    for (int st = 0; st < op->stmt_count; st++) {
        if (!sched_stmt_needed(s, st)) continue; /* no costed group reads it */
        const IrStmt *is = &op->stmts[st];
        const SchedStmt *ss = &s->stmts[st];
        const SchedGroup *g = &s->groups[ss->group];
        const IrTensor *y = &op->tensors[is->out_tensor];
        for (int d = 0; d < D; d++) eff[st * D + d] = ss->out_layout[d];
        int pd[SCHED_MAX_DIMS], pc = 0;
        for (int d = 0; d < D; d++)
            if (ss->out_layout[d].kind == LAY_PARTIAL && arch->dims[d].size > 1)
                pd[pc++] = d;
            else if (ss->out_layout[d].kind == LAY_PARTIAL)
                eff[st * D + d] = (Layout){LAY_REPLICATED, -1};
        if (!pc) continue;
        /* read only by combines, which add the partial rows into their
         * tokens as they are: the combine reduces its result instead,
         * which is smaller by the picks (pass_routing) */
        if (combines_take_partials(s, st)) continue;
        /* what the readers in the group need along the partial dims */
        bool need_all = needs_everywhere(s, st, pd, pc);
        int want_index = -1;
        bool group_reader = false;
        for (int c = st + 1; c < op->stmt_count; c++) {
            if (s->stmts[c].group != ss->group) continue;
            const IrStmt *cs = &op->stmts[c];
            bool reads = false;
            for (int q = 0; q < cs->input_count; q++)
                if (cs->inputs[q] == is->out_tensor) reads = true;
            if (!reads) continue;
            group_reader = true;
            for (int j = 0; j < pc && want_index < 0; j++) {
                Layout nd = need_of(s, c, y, pd[j]);
                if (nd.kind == LAY_SPLIT) want_index = nd.index;
            }
        }
        double P = 1;
        for (int j = 0; j < pc; j++) P *= (double)arch->dims[pd[j]].size;
        double n = instance_bytes(s, st, y);
        CollSite site = {st, y->id, 0, s->levels};
        /* the combined result is complete only once every loop over a
         * reduced index has run: one collective per tile of the result
         * over the loops outside the first of those, at the fusion level
         * when the group reads it, else per outermost tile; it follows
         * the loops nested inside its own that st runs */
        int depth;
        int level = group_reader                  ? g->level
                    : g->overlap == OVERLAP_LOCAL ? 0 /* once, after the group */
                                                  : 1;
        double k = sched_tiles_completed(s, g, st, y->id, level, sched_first_reduced_loop(s, g, st),
                                         &depth);
        bool after_inner = sched_next_loop(s, g, st, depth) < g->loop_count;
        n /= k;
        /* the index a reduce_scatter would leave the result split by */
        int scatter = -1;
        if (want_index >= 0 && fmod(ss->extent[sched_li(s, s->levels, want_index)], P) == 0)
            scatter = want_index;
        for (int r = 0; r < y->rank && scatter < 0 && !need_all; r++) {
            int i = y->index[r];
            double e = ss->extent[sched_li(s, s->levels, i)];
            if (fmod(e, P) == 0 && (scatter < 0 || e > ss->extent[sched_li(s, s->levels, scatter)]))
                scatter = i;
        }
        int pos = s->stmts[st].position;
        /* the reduced indices and dims, for the reasons only */
        char red[128] = "";
        size_t used = 0;
        for (int j = 0; s->want_text && j < pc && used + 20 < sizeof red; j++) {
            const char *nm = op->indices[ss->split[pd[j]]].name;
            if (!strstr(red, nm))
                used +=
                    (size_t)snprintf(red + used, sizeof red - used, "%s%s", used ? ", " : "", nm);
        }
        const char *dl = s->want_text ? sched_dims_text(s->arena, s, pd, pc) : "";
        SchedNode *node;
        if (need_all) {
            NetCost ar = cost_over(s, &site, CK_ALLREDUCE, pd, pc, n);
            NetCost rd = cost_over(s, &site, CK_REDUCE, pd, pc, n);
            NetCost bc = cost_over(s, &site, CK_BROADCAST, pd, pc, n);
            bool split_pair = rd.time_s + bc.time_s < ar.time_s;
            if (split_pair) {
                SchedNode *reduce = add_collective(s, g->id, pos, 3, &site, CK_REDUCE,
                                                   is->reduce_op, pd, pc, n, k, 0);
                reduce->depth = depth;
                reduce->after_inner = after_inner;
                node =
                    add_collective(s, g->id, pos, 3, &site, CK_BROADCAST, RO_NONE, pd, pc, n, k, 0);
            } else {
                node = add_collective(s, g->id, pos, 3, &site, CK_ALLREDUCE, is->reduce_op, pd, pc,
                                      n, k, 0);
            }
            if (s->want_text)
                node->reason = arena_printf(
                    s->arena,
                    "%s is split over %s and %s reduces %s; its readers need %s on every "
                    "instance (allreduce %s, reduce + broadcast %s)",
                    red, dl, is->name, red, y->name, sched_time_text(s, ar.time_s),
                    sched_time_text(s, rd.time_s + bc.time_s));
            node->depth = depth;
            node->after_inner = after_inner;
            for (int j = 0; j < pc; j++) eff[st * D + pd[j]] = (Layout){LAY_REPLICATED, -1};
        } else if (scatter >= 0) {
            NetCost rs = cost_over(s, &site, CK_REDUCE_SCATTER, pd, pc, n);
            NetCost rd = cost_over(s, &site, CK_REDUCE, pd, pc, n);
            bool use_rs = rs.time_s <= rd.time_s;
            node = add_collective(s, g->id, pos, 3, &site, use_rs ? CK_REDUCE_SCATTER : CK_REDUCE,
                                  is->reduce_op, pd, pc, n, k, 0);
            if (s->want_text)
                node->reason = arena_printf(
                    s->arena,
                    "%s is split over %s and %s reduces %s; %s is then %s (reduce_scatter "
                    "along %s %s, reduce %s)",
                    red, dl, is->name, red, y->name, group_reader ? "read split" : "written out",
                    op->indices[scatter].name, sched_time_text(s, rs.time_s),
                    sched_time_text(s, rd.time_s));
            node->depth = depth;
            node->after_inner = after_inner;
            for (int j = 0; j < pc; j++)
                eff[st * D + pd[j]] =
                    use_rs ? (Layout){LAY_SPLIT, scatter} : (Layout){LAY_REPLICATED, -1};
        } else {
            node =
                add_collective(s, g->id, pos, 3, &site, CK_REDUCE, is->reduce_op, pd, pc, n, k, 0);
            if (s->want_text)
                node->reason = arena_printf(
                    s->arena,
                    "%s is split over %s and %s reduces %s; no index of %s divides by %.0f, "
                    "so one instance gathers it",
                    red, dl, is->name, red, y->name, P);
            node->depth = depth;
            node->after_inner = after_inner;
            for (int j = 0; j < pc; j++) eff[st * D + pd[j]] = (Layout){LAY_REPLICATED, -1};
        }
    }
    /* consumers that need another layout */
    int first_transition = s->node_count;
    for (int c = 0; c < op->stmt_count; c++) {
        const IrStmt *cs = &op->stmts[c];
        const SchedGroup *g = &s->groups[s->stmts[c].group];
        if (!sched_group_costed(s, g)) continue;
        for (int q = 0; q < cs->input_count; q++) {
            int t = cs->inputs[q];
            int p = op->tensors[t].producer;
            if (p < 0) continue;
            /* the tensor passes through the fusion level inside a group and
             * through the outermost memory between groups: only the dims
             * outside that level see a change of layout (inside it, each
             * reader simply loads the part it needs) */
            bool same_group = s->stmts[p].group == s->stmts[c].group;
            int via = same_group ? g->level : 0;
            /* the reader's tiles a relayout delivers: at the fusion level
             * inside a group (at least level 1), per outermost tile between */
            int tile_level = same_group && g->level > 1 ? g->level : 1;
            /* `overlap local`: between groups, once, before the reader's */
            if (!same_group && g->overlap == OVERLAP_LOCAL) tile_level = 0;
            const IrTensor *y = &op->tensors[t];
            CollSite site = {c, t, 0, via};
            int gather[SCHED_MAX_DIMS], gc = 0, shuffle[SCHED_MAX_DIMS], sc = 0;
            bool shifted = false;
            for (int d = 0; d < D; d++) {
                if (arch->dims[d].size <= 1 || !sched_dim_outside(s, d, via)) continue;
                Layout have = eff[p * D + d];
                if (have.kind != LAY_SPLIT) continue;
                Layout need = need_of(s, c, y, d);
                if (need.kind == LAY_REPLICATED)
                    gather[gc++] = d;
                else if (need.index != have.index)
                    shuffle[sc++] = d;
                else if (moves_along(s, eff, p, c, y, d, via)) {
                    /* split along the same index, but into other blocks */
                    shuffle[sc++] = d;
                    shifted = true;
                }
            }
            int pos = s->stmts[c].position;
            int depth;
            /* once per tile the reader takes: per fusion-level tile in
             * the group, per outermost tile between groups */
            double k = sched_tiles_completed(s, g, c, y->id, tile_level, g->loop_count, &depth);
            /* bytes one instance of the memory the tensor passes through
             * holds as the producer left it (the dims inside that memory
             * split it further, but its instance holds all their parts) */
            double held = sched_elem_bytes(y);
            for (int r = 0; r < y->rank; r++) held *= producer_block(s, eff, p, y->index[r], via);
            double n = held / k;
            /* a tensor already regathered or reshuffled for an earlier reader
             * of the group in the same way is resident there */
            bool seen_gather = false, seen_shuffle = false;
            for (int e = first_transition; e < s->node_count; e++) {
                const SchedNode *prev = &s->nodes[e];
                if (prev->group != g->id || prev->tensor != t || prev->stmt == c) continue;
                if (gc && prev->dim_count == gc &&
                    !memcmp(prev->dims, gather, sizeof(int) * (size_t)gc))
                    seen_gather = true;
                if (sc && prev->dim_count == sc &&
                    !memcmp(prev->dims, shuffle, sizeof(int) * (size_t)sc))
                    seen_shuffle = true;
            }
            if (seen_gather) gc = 0;
            if (seen_shuffle) sc = 0;
            if (sc) {
                /* reshuffled (into another index's blocks, or other blocks
                 * of the same index), perhaps gathered over other dims as
                 * well: one exchange over all of them (each instance
                 * receives from instances that differ in any), sized by
                 * what the busiest instance lacks of each tile */
                int both[SCHED_MAX_DIMS], bc = 0;
                double P = 1;
                for (int d = 0; d < D; d++) {
                    bool in = false;
                    for (int j = 0; j < gc; j++) in |= gather[j] == d;
                    for (int j = 0; j < sc; j++) in |= shuffle[j] == d;
                    if (!in) continue;
                    both[bc++] = d;
                    P *= (double)arch->dims[d].size;
                }
                double recv = relayout_received(s, eff, p, c, y, both, bc, via, tile_level);
                if (recv == 0) {
                    /* the other blocks still lie in each instance's own */
                    gc = sc = 0;
                } else if (recv > 0) {
                    SchedNode *node = add_collective(s, g->id, pos, 1, &site, CK_ALLTOALL, RO_NONE,
                                                     both, bc, recv * P / (P - 1), k, 0);
                    node->depth = depth;
                    node->received = recv;
                    if (s->want_text && shifted && !gc)
                        node->reason = arena_printf(
                            s->arena,
                            "%s leaves %s split along %s over %s in blocks that %s, splitting it "
                            "over other dims as well, does not take: one exchange; the busiest "
                            "instance receives %.6g B per tile",
                            op->stmts[p].name, y->name,
                            op->indices[eff[p * D + both[0]].index].name,
                            sched_dims_text(s->arena, s, both, bc), cs->name, recv);
                    else if (s->want_text)
                        node->reason = arena_printf(
                            s->arena,
                            "%s leaves %s split along %s but %s needs it split along %s over "
                            "%s%s; the busiest instance receives %.6g B per tile",
                            op->stmts[p].name, y->name,
                            op->indices[eff[p * D + both[0]].index].name, cs->name,
                            s->stmts[c].split[shuffle[0]] >= 0
                                ? op->indices[s->stmts[c].split[shuffle[0]]].name
                                : "nothing",
                            sched_dims_text(s->arena, s, both, bc),
                            gc ? " and whole over the others: one exchange over all of them" : "",
                            recv);
                    gc = sc = 0;
                }
            }
            if (gc) {
                /* the tile one reader instance gathers: all of the tensor
                 * along the gathered dims, its own share along the dims it
                 * splits itself */
                double need = sched_elem_bytes(y);
                for (int r = 0; r < y->rank; r++) need *= reader_share(s, c, y, r, via);
                need /= k;
                bool owner = tiles_from_one_owner(s, eff, p, c, y, gather, gc, via, tile_level);
                /* tiles that straddle the blocks: an instance that holds
                 * none of one receives all of it, not the (P-1)/P of an
                 * allgather of evenly spread tiles */
                double recv =
                    owner ? -1 : relayout_received(s, eff, p, c, y, gather, gc, via, tile_level);
                double P = 1;
                for (int j = 0; j < gc; j++) P *= (double)arch->dims[gather[j]].size;
                SchedNode *node =
                    add_collective(s, g->id, pos, 1, &site, owner ? CK_BROADCAST : CK_ALLGATHER,
                                   RO_NONE, gather, gc, recv > 0 ? recv * P / (P - 1) : need, k, 0);
                node->depth = depth;
                node->from_owner = owner;
                if (recv > 0) node->received = recv;
                if (s->want_text)
                    node->reason = arena_printf(
                        s->arena,
                        "%s leaves %s split over %s but %s needs all of it on "
                        "every instance%s%s",
                        op->stmts[p].name, y->name, sched_dims_text(s->arena, s, gather, gc),
                        cs->name,
                        same_group ? ""
                                   : arena_printf(s->arena, " (%s is not shared across them)",
                                                  arch->levels[0].name),
                        owner ? "; each tile it takes lies in one instance's share, which "
                                "sends it to the others"
                              : "");
            }
            if (sc) {
                double P = 1;
                for (int j = 0; j < sc; j++) P *= (double)arch->dims[shuffle[j]].size;
                NetCost a2a = cost_over(s, &site, CK_ALLTOALL, shuffle, sc, n);
                NetCost ag = cost_over(s, &site, CK_ALLGATHER, shuffle, sc, n * P);
                bool use_a2a = a2a.time_s <= ag.time_s;
                SchedNode *node =
                    add_collective(s, g->id, pos, 1, &site, use_a2a ? CK_ALLTOALL : CK_ALLGATHER,
                                   RO_NONE, shuffle, sc, use_a2a ? n : n * P, k, 0);
                node->depth = depth;
                if (s->want_text)
                    node->reason = arena_printf(
                        s->arena,
                        "%s leaves %s split along %s over %s but %s splits it along %s "
                        "(alltoall %s, allgather %s)",
                        op->stmts[p].name, y->name, op->indices[eff[p * D + shuffle[0]].index].name,
                        sched_dims_text(s->arena, s, shuffle, sc), cs->name,
                        op->indices[s->stmts[c].split[shuffle[0]]].name,
                        sched_time_text(s, a2a.time_s), sched_time_text(s, ag.time_s));
            }
        }
    }
}

void pass_collectives(Schedule *s) {
    broadcasts(s);
    reductions_and_transitions(s);
}
