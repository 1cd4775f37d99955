/* schedule.c — small helpers of the lowered schedule: names of kinds,
 * node storage, element sizes and where cluster dims sit. */
#include "ir/schedule.h"

#include <math.h>
#include <stdint.h>

#include <string.h>

const char *sched_kind_name(SchedKind k) {
    switch (k) {
    case SN_LOAD: return "load";
    case SN_STORE: return "store";
    case SN_COMPUTE: return "compute";
    case SN_COLLECTIVE: return "collective";
    case SN_BOUNDARY: return "boundary";
    }
    return "?";
}

const char *coll_kind_name(CollKind k) {
    switch (k) {
    case CK_ALLREDUCE: return "allreduce";
    case CK_REDUCE: return "reduce";
    case CK_REDUCE_SCATTER: return "reduce_scatter";
    case CK_ALLGATHER: return "allgather";
    case CK_ALLTOALL: return "alltoall";
    case CK_BROADCAST: return "broadcast";
    }
    return "?";
}

const char *provenance_name(Provenance p) {
    switch (p) {
    case PV_GIVEN: return "given";
    case PV_DEFAULT: return "default";
    case PV_DERIVED: return "derived";
    }
    return "?";
}

const char *bound_name(Bound b) {
    switch (b) {
    case BOUND_COMPUTE: return "compute";
    case BOUND_MEMORY: return "memory";
    case BOUND_NETWORK: return "network";
    }
    return "?";
}

Bound dominant_bound(double compute_s, double memory_s, double network_s) {
    if (network_s > compute_s && network_s > memory_s) return BOUND_NETWORK;
    return memory_s > compute_s ? BOUND_MEMORY : BOUND_COMPUTE;
}

void cost_add(Cost *sum, const Cost *part) {
    sum->latency_s += part->latency_s;
    sum->compute_s += part->compute_s;
    sum->memory_s += part->memory_s;
    sum->network_s += part->network_s;
    sum->fill_drain_s += part->fill_drain_s;
    sum->stall_s += part->stall_s;
    sum->energy_j += part->energy_j;
    sum->compute_energy_j += part->compute_energy_j;
    sum->memory_energy_j += part->memory_energy_j;
    sum->network_energy_j += part->network_energy_j;
}

SchedNode *sched_add_node(Schedule *s, SchedKind kind, int group) {
    if (s->node_count == s->node_cap) {
        int cap = s->node_cap ? s->node_cap * 2 : 32;
        s->nodes = arena_realloc(s->arena, s->nodes, sizeof(SchedNode) * (size_t)s->node_cap,
                                 sizeof(SchedNode) * (size_t)cap);
        s->node_cap = cap;
    }
    SchedNode *n = &s->nodes[s->node_count++];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->group = group;
    n->stmt = -1;
    n->tensor = -1;
    n->from_level = n->to_level = -1;
    n->memory = -1;
    n->depth = -1;
    n->count = 1;
    return n;
}

/* A time in a note, with its unit's prefix (docs/units.md). */
const char *sched_time_text(const Schedule *s, double seconds) {
    return unit_format(s->arena, seconds, (UnitDim){BU_SECOND, BU_NONE});
}

/* A statement's work counted once: the instances along dims that split
 * none of its indices compute nothing new (model FLOP, docs/sweeps.md). */
double sched_stmt_useful_work(const Schedule *s, int st) {
    const SchedStmt *ss = &s->stmts[st];
    double split = 1;
    for (int d = 0; d < s->arch->dim_count; d++)
        if (ss->split[d] >= 0) split *= (double)s->arch->dims[d].size;
    return ss->total_work * split / (double)s->total_instances;
}

double sched_elem_bytes(const IrTensor *t) {
    int bits = elem_type_bits(t->type);
    double bytes = bits > 0 ? bits / 8.0 : 1.0;
    /* a route's pick: its weight, of the declared type, and the index of
     * its expert, an int32 (docs/language.md 3.9) */
    return t->use == TU_ROUTE ? bytes + 4 : bytes;
}

void sched_role_costs(const Schedule *s, double latency[4], double energy[4]) {
    for (int r = 0; r < 4; r++) latency[r] = energy[r] = 0;
    for (int g = 0; g < s->group_count; g++) {
        const SchedGroup *grp = &s->groups[g];
        if (grp->stmt_count == 0) continue;
        StmtRole role = s->op->stmts[grp->stmts[0]].role;
        latency[role] += grp->cost.latency_s;
        energy[role] += grp->cost.energy_j;
    }
}

double sched_share(const Schedule *s, int st, int t) {
    const IrOp *op = s->op;
    const IrTensor *T = &op->tensors[t];
    const int *ix = ir_stmt_tensor_indices(op, &op->stmts[st], t);
    if (!ix) return 0;
    double elems = 1;
    for (int r = 0; r < T->rank; r++)
        elems *= ix[r] >= 0 ? s->stmts[st].extent[sched_li(s, 0, ix[r])] : 1;
    return elems * sched_elem_bytes(T);
}

bool sched_dim_outside(const Schedule *s, int dim, int level) {
    if (level >= s->levels) return true;
    const IrClusterDim *d = &s->arch->dims[dim];
    return d->cluster < s->arch->levels[level].clusters_outside;
}

int sched_dim_indices(const SchedStmt *ss, int d, int out[IR_MAX_JOINT]) {
    if (ss->split[d] < 0) return 0;
    int n = 0;
    out[n++] = ss->split[d];
    for (int k = 0; k < IR_MAX_JOINT - 1 && ss->joint[d][k] >= 0; k++) out[n++] = ss->joint[d][k];
    return n;
}

bool sched_dim_splits(const SchedStmt *ss, int d, int i) {
    int ix[IR_MAX_JOINT], n = sched_dim_indices(ss, d, ix);
    for (int k = 0; k < n; k++)
        if (ix[k] == i) return true;
    return false;
}

bool sched_access_split(const Schedule *s, int st, int tensor, int d) {
    int ix[IR_MAX_JOINT], n = sched_dim_indices(&s->stmts[st], d, ix);
    for (int k = 0; k < n; k++)
        if (sched_access_has_index(s, st, tensor, ix[k])) return true;
    return false;
}

void sched_joint_deal(int n, const double *len, const double *block, double parts, double *share) {
    double cells = 1, blocks[IR_MAX_JOINT];
    for (int k = 0; k < n; k++) {
        double b = block[k] >= 1 ? block[k] : 1;
        blocks[k] = ceil(len[k] / b);
        cells *= blocks[k];
    }
    double run = parts > 1 ? ceil(cells / parts) : cells;
    /* from the last (least significant) index: as many whole blocks as
     * the run covers, the rest of the run along the indices before */
    for (int k = n - 1; k >= 0; k--) {
        double b = block[k] >= 1 ? block[k] : 1;
        double take = fmin(blocks[k], run);
        if (k > 0) take = ceil(take);
        /* the first index's share may be a fraction of an element: the
         * rectangle holds the run's q cells, so its work is theirs */
        share[k] = fmin(len[k], take * b);
        run /= take;
    }
}

double sched_joint_parts(const Schedule *s, const SchedStmt *ss, int d, int outer, int inner) {
    double parts = 1;
    for (int e = 0; e < s->arch->dim_count; e++)
        if (ss->split[e] == ss->split[d] && sched_dim_between(s, e, outer, inner) &&
            memcmp(ss->joint[e], ss->joint[d], sizeof ss->joint[d]) == 0)
            parts *= (double)s->arch->dims[e].size;
    return parts;
}

/* The range and block of each index of dim d's joint deal, the level it
 * enters, and the instances of the line's dims between outer and inner. */
static double joint_setup(const Schedule *s, const SchedStmt *ss, int d, int outer, int inner,
                          double len[IR_MAX_JOINT], double block[IR_MAX_JOINT],
                          int ix[IR_MAX_JOINT]) {
    int n = sched_dim_indices(ss, d, ix), st = (int)(ss - s->stmts);
    double ignored;
    int enter = sched_deal_range(s, ss, d, outer, inner, &ignored, &ignored);
    for (int k = 0; k < n; k++) {
        len[k] = enter > 0 ? ss->tile[(enter - 1) * s->op->index_count + ix[k]]
                           : (double)s->op->indices[ix[k]].extent;
        block[k] = sched_deal_block(s, st, enter, ix[k]);
    }
    return sched_joint_parts(s, ss, d, outer, inner);
}

double sched_joint_spread(const Schedule *s, const SchedStmt *ss, int d, int outer, int inner,
                          int which) {
    double len[IR_MAX_JOINT], block[IR_MAX_JOINT], share[IR_MAX_JOINT];
    int ix[IR_MAX_JOINT];
    double parts = joint_setup(s, ss, d, outer, inner, len, block, ix);
    sched_joint_deal(2, len, block, parts, share);
    double rows = ceil(len[0] / block[0]), cols = ceil(len[1] / block[1]);
    double cells = rows * cols, run = ceil(cells / parts), sum = 0;
    /* instance k holds cells [k run, (k+1) run) of the raster, the second
     * index fastest: the elements of the row blocks it touches, and of the
     * column blocks (all of them once it wraps twice); a last block may
     * be short */
    for (double a = 0; a < cells; a += run) {
        double b = fmin(a + run, cells);
        double first = floor(a / cols), last = floor((b - 1) / cols);
        double c0 = fmod(a, cols), c1 = fmod(b - 1, cols);
        if (which == 0)
            sum += fmin(len[0], (last + 1) * block[0]) - first * block[0];
        else if (last == first)
            sum += fmin(len[1], (c1 + 1) * block[1]) - c0 * block[1];
        else if (last == first + 1 && c1 + 1 < c0)
            sum += (len[1] - c0 * block[1]) + fmin(len[1], (c1 + 1) * block[1]);
        else
            sum += len[1];
    }
    return share[which] > 0 ? sum / share[which] : 1;
}

double sched_split_between(const Schedule *s, const SchedStmt *ss, int outer, int inner,
                           int index) {
    double p = 1;
    for (int d = 0; d < s->arch->dim_count; d++)
        if (sched_dim_splits(ss, d, index) && sched_dim_outside(s, d, inner) &&
            !sched_dim_outside(s, d, outer))
            p *= (double)s->arch->dims[d].size;
    return p;
}

double sched_deal_block(const Schedule *s, int st, int level, int index) {
    if (level < 1 || level >= s->levels) return 1;
    int64_t given = s->m->tile.size[ir_tile_slot(s->m, st, level, index)];
    return given >= 1 ? (double)given : 1;
}

double sched_deal(double len, double parts, double block) {
    if (parts <= 1 || len <= 0) return len;
    if (block < 1) block = 1;
    double share = ceil(ceil(len / block) / parts) * block;
    return share < len ? share : len;
}

int sched_deal_range(const Schedule *s, const SchedStmt *ss, int d, int outer, int inner,
                     double *len, double *block) {
    int i = ss->split[d];
    int enter = inner;
    while (enter > outer + 1 && sched_dim_outside(s, d, enter - 1)) enter--;
    int st = (int)(ss - s->stmts);
    *block = sched_deal_block(s, st, enter, i);
    *len = enter > 0 ? ss->tile[(enter - 1) * s->op->index_count + i]
                     : (double)s->op->indices[i].extent;
    return enter;
}

double sched_dim_busy(const Schedule *s, const SchedStmt *ss, int d, int outer, int inner) {
    int i = ss->split[d];
    double size = (double)s->arch->dims[d].size;
    if (i < 0) return size;
    if (ss->joint[d][0] >= 0) {
        /* a joint deal (section 1.2): runs of ceil(cells / P) cells, with
         * P the instances of the line's dims between the levels */
        double len[IR_MAX_JOINT], block[IR_MAX_JOINT], cells = 1, after = 1;
        int ix[IR_MAX_JOINT];
        double parts = joint_setup(s, ss, d, outer, inner, len, block, ix);
        int n = sched_dim_indices(ss, d, ix);
        for (int k = 0; k < n; k++) cells *= ceil(len[k] / block[k]);
        for (int e = d + 1; e < s->arch->dim_count; e++)
            if (ss->split[e] == i && sched_dim_between(s, e, outer, inner) &&
                memcmp(ss->joint[e], ss->joint[d], sizeof ss->joint[d]) == 0)
                after *= (double)s->arch->dims[e].size;
        double run = ceil(cells / parts), busy = ceil(cells / run);
        /* the busy instances fill the line's dims outer first */
        double along = ceil(busy / after);
        return along < size ? along : size;
    }
    /* the dims that deal index i at the level d enters, and those of them
     * after d (less significant) */
    double len, block;
    int enter = sched_deal_range(s, ss, d, outer, inner, &len, &block);
    double parts = 1, after = 1;
    for (int e = 0; e < s->arch->dim_count; e++) {
        if (ss->split[e] != i || !sched_dim_outside(s, e, enter)) continue;
        if (enter > 0 && sched_dim_outside(s, e, enter - 1)) continue;
        parts *= (double)s->arch->dims[e].size;
        if (e > d) after *= (double)s->arch->dims[e].size;
    }
    /* contiguous runs of ceil(blocks / parts): ceil(blocks / run) get one */
    double blocks = ceil(len / block), run = ceil(blocks / parts);
    double busy = ceil(blocks / run);
    double along = ceil(busy / after);
    return along < size ? along : size;
}

bool sched_dim_between(const Schedule *s, int dim, int outer, int inner) {
    return sched_dim_outside(s, dim, inner) && !sched_dim_outside(s, dim, outer);
}

MemRole sched_tensor_role(const IrStmt *is, int tensor) {
    if (is->out_tensor == tensor) return ROLE_OUTPUT;
    if (is->cls == SC_CONTRACTION && is->input_count > 1 && is->inputs[1] == tensor)
        return ROLE_WEIGHT;
    return ROLE_INPUT;
}

bool sched_tensor_has_index(const IrTensor *t, int index) {
    for (int r = 0; r < t->rank; r++)
        if (t->index[r] == index) return true;
    return false;
}

bool sched_access_has_index(const Schedule *s, int st, int tensor, int index) {
    return ir_stmt_tensor_dim(s->op, &s->op->stmts[st], tensor, index) >= 0;
}

int sched_access_index(const Schedule *s, int st, int tensor, int r) {
    const int *ix = ir_stmt_tensor_indices(s->op, &s->op->stmts[st], tensor);
    return ix ? ix[r] : s->op->tensors[tensor].index[r];
}

bool sched_fuse_group_written(const IrMapping *m, int g, int members) {
    if (!m->fuse.group || g < 0 || g >= m->fuse.group_count) return false;
    if (m->fuse.level && m->fuse.level[g] >= 0) return true;
    if (members > 1) return true;
    return m->fuse.written && m->fuse.written[g];
}

/* The product over the indices of the loops at positions < `upto` that st
 * runs of its real tile count at the deepest such loop (section 2: with
 * partial tiles an outer partial tile holds fewer inner tiles, so the
 * trips of the levels do not multiply); `only_tensor` >= 0 keeps the
 * indices of that tensor only. */
static double real_combinations(const Schedule *s, const SchedGroup *g, int st, int upto,
                                int only_tensor) {
    const SchedStmt *ss = &s->stmts[st];
    double n = 1;
    /* innermost first: the first loop met over an index is its deepest */
    uint64_t seen[4] = {0, 0, 0, 0};
    for (int k = upto - 1; k >= 0; k--) {
        const SchedLoop *lp = &g->loops[k];
        if (!ir_stmt_uses_index(&s->op->stmts[st], lp->index)) continue;
        if (ss->trips[sched_li(s, lp->level, lp->index)] <= 1) continue;
        if (only_tensor >= 0 && !sched_access_has_index(s, st, only_tensor, lp->index)) continue;
        bool deeper = false;
        if (lp->index < 256) {
            uint64_t bit = (uint64_t)1 << (lp->index % 64);
            deeper = (seen[lp->index / 64] & bit) != 0;
            seen[lp->index / 64] |= bit;
        } else {
            for (int q = k + 1; q < upto && !deeper; q++)
                deeper = g->loops[q].index == lp->index &&
                         ss->trips[sched_li(s, g->loops[q].level, lp->index)] > 1;
        }
        if (!deeper) n *= ss->count[sched_li(s, lp->level, lp->index)];
    }
    return n;
}

/* The level of the deepest loop at positions < upto that st runs more
 * than once over `index`, -1 when none. */
static int deepest_loop_level(const Schedule *s, const SchedGroup *g, int st, int upto, int index) {
    int level = -1;
    for (int k = 0; k < upto; k++) {
        const SchedLoop *lp = &g->loops[k];
        if (lp->index == index && s->stmts[st].trips[sched_li(s, lp->level, index)] > 1)
            level = lp->level;
    }
    return level;
}

/* The fraction of the combinations real_combinations counts that a
 * restriction leaves (docs/cost-model.md section 3.1): the pairs of x
 * and y ranges the loops before `upto` step (over the tensor's indices
 * only when only_tensor >= 0) that meet the allowed region, over the
 * tile counts real_combinations multiplied for x and y. */
static double mask_fraction(const Schedule *s, const SchedGroup *g, int st, int upto, int level,
                            int only_tensor) {
    const SchedStmt *ss = &s->stmts[st];
    const SchedMask *mk = ss->mask;
    int lx = deepest_loop_level(s, g, st, upto, mk->x);
    int ly = deepest_loop_level(s, g, st, upto, mk->y);
    if (only_tensor >= 0 && !sched_access_has_index(s, st, only_tensor, mk->x)) lx = -1;
    if (only_tensor >= 0 && !sched_access_has_index(s, st, only_tensor, mk->y)) ly = -1;
    double all, pairs = sched_mask_pairs(mk, level, lx, ly, &all);
    double counted = (lx >= 0 ? ss->count[sched_li(s, lx, mk->x)] : 1) *
                     (ly >= 0 ? ss->count[sched_li(s, ly, mk->y)] : 1);
    return counted > 0 ? pairs / counted : all > 0 ? pairs / all : 1;
}

/* The tile counts real_combinations multiplied for x and y over the
 * loops before upto. */
static double mask_counted(const Schedule *s, const SchedGroup *g, int st, int upto) {
    const SchedStmt *ss = &s->stmts[st];
    int lx = deepest_loop_level(s, g, st, upto, ss->mask->x);
    int ly = deepest_loop_level(s, g, st, upto, ss->mask->y);
    return (lx >= 0 ? ss->count[sched_li(s, lx, ss->mask->x)] : 1) *
           (ly >= 0 ? ss->count[sched_li(s, ly, ss->mask->y)] : 1);
}

/* The slot of (st, t, level) in Schedule.visits_memo, -1 when none: the
 * walk is the same for every call once st's group has its loops (a
 * restricted statement's walk is left alone). */
static int visits_slot(const Schedule *s, const SchedGroup *g, int st, int tensor, int level) {
    if (!s->visits_memo || s->stmts[st].mask || g->id != s->stmts[st].group || level < 0 ||
        level > s->levels)
        return -1;
    const IrStmt *is = &s->op->stmts[st];
    int operand = -1;
    if (is->out_tensor == tensor) operand = 0;
    for (int q = 0; q < is->input_count && operand < 0; q++)
        if (is->inputs[q] == tensor) operand = q + 1;
    return operand < 0 ? -1 : s->visits_first[st] + operand * (s->levels + 1) + level;
}

SchedVisits sched_visits(const Schedule *s, const SchedGroup *g, int st, const IrTensor *t,
                         int level) {
    int slot = visits_slot(s, g, st, t->id, level);
    if (slot >= 0 && s->visits_known[slot]) return s->visits_memo[slot];
    const SchedStmt *ss = &s->stmts[st];
    const IrStmt *is = &s->op->stmts[st];
    SchedVisits v = {1, 1, -1, 1};
    for (int k = 0; k < g->loop_count; k++) {
        const SchedLoop *lp = &g->loops[k];
        if (lp->level > level) break;
        if (!ir_stmt_uses_index(is, lp->index)) continue;
        if (ss->trips[sched_li(s, lp->level, lp->index)] <= 1) continue;
        if (sched_access_has_index(s, st, t->id, lp->index)) v.depth = k;
    }
    if (v.depth >= 0) {
        v.visits = real_combinations(s, g, st, v.depth + 1, -1);
        v.distinct = real_combinations(s, g, st, v.depth + 1, t->id);
    }
    v.full = v.visits;
    if (ss->mask) {
        /* a tile wholly outside the restriction is neither loaded nor
         * computed nor stored */
        double loads, other, xy;
        if (sched_mask_loads(s, g, st, t->id, level, v.depth + 1, &loads, &other, &xy) && other > 0)
            /* the walk's other loops at their real tile counts */
            v.visits = loads * (v.visits / mask_counted(s, g, st, v.depth + 1)) / other;
        else
            v.visits *= mask_fraction(s, g, st, v.depth + 1, level, -1);
        v.distinct *= mask_fraction(s, g, st, v.depth + 1, level, t->id);
    }
    if (slot >= 0) {
        s->visits_memo[slot] = v;
        s->visits_known[slot] = true;
    }
    return v;
}

double sched_mask_bytes_scale(const Schedule *s, const SchedGroup *g, int st, const IrTensor *t,
                              int level) {
    const SchedStmt *ss = &s->stmts[st];
    const SchedMask *mk = ss->mask;
    if (!mk) return 1;
    bool hx = sched_access_has_index(s, st, t->id, mk->x);
    bool hy = sched_access_has_index(s, st, t->id, mk->y);
    if (!hx && !hy) return 1;
    SchedVisits v = sched_visits(s, g, st, t, level);
    double loads, other, xy;
    if (!sched_mask_loads(s, g, st, t->id, level, v.depth + 1, &loads, &other, &xy) || loads <= 0)
        return 1;
    double mean = 1;
    if (hx) mean *= ss->extent[sched_li(s, level, mk->x)] / ss->count[sched_li(s, level, mk->x)];
    if (hy) mean *= ss->extent[sched_li(s, level, mk->y)] / ss->count[sched_li(s, level, mk->y)];
    return mean > 0 ? xy / loads / mean : 1;
}

double sched_mask_outer_scale(const Schedule *s, const SchedGroup *g, int st, const IrTensor *t,
                              int level) {
    const SchedStmt *ss = &s->stmts[st];
    const SchedMask *mk = ss->mask;
    if (!mk) return 1;
    SchedVisits v = sched_visits(s, g, st, t, level);
    double loads, other, xy, xy_sum, any, multi;
    if (!sched_mask_loads(s, g, st, t->id, level, v.depth + 1, &loads, &other, &xy) ||
        !sched_mask_children(s, g, st, t->id, level, v.depth + 1, &xy_sum, &any, &multi) ||
        loads <= 0 || xy <= 0)
        return 1;
    /* the spread of section 3 along x and y when t has them and they are
     * split between the levels: replaced by the children's own moves */
    double spread_xy = 1;
    bool has_split = false;
    int ix[2] = {mk->x, mk->y};
    for (int q = 0; q < 2; q++) {
        if (sched_split_between(s, ss, level - 1, level, ix[q]) <= 1) continue;
        if (!sched_access_has_index(s, st, t->id, ix[q])) continue;
        has_split = true;
        spread_xy *=
            ss->extent[sched_li(s, level - 1, ix[q])] / ss->extent[sched_li(s, level, ix[q])];
    }
    if (has_split) return xy_sum / xy / spread_xy;
    return any / loads;
}

MemRole sched_held_role(const Schedule *s, int st, int tensor) {
    int producer = s->op->tensors[tensor].producer;
    if (producer >= 0 && s->stmts[producer].group == s->stmts[st].group) return ROLE_OUTPUT;
    return sched_tensor_role(&s->op->stmts[st], tensor);
}

const char *sched_dims_text(Arena *a, const Schedule *s, const int *dims, int count) {
    char buf[256] = "";
    size_t used = 0;
    for (int j = 0; j < count && used + 40 < sizeof buf; j++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", j ? "," : "",
                                 s->arch->dims[dims[j]].name);
    return count == 1 ? arena_strdup(a, buf) : arena_printf(a, "(%s)", buf);
}

int sched_first_reduced_loop(const Schedule *s, const SchedGroup *g, int st) {
    const IrStmt *is = &s->op->stmts[st];
    for (int q = 0; q < g->loop_count; q++) {
        const SchedLoop *lp = &g->loops[q];
        if (s->stmts[st].trips[sched_li(s, lp->level, lp->index)] <= 1) continue;
        for (int r = 0; r < is->reduced_count; r++)
            if (is->reduced[r] == lp->index) return q;
    }
    return g->loop_count;
}

double sched_stage_pieces(double depth_x, double depth_peak, bool is_memory) {
    double pieces = is_memory || depth_x < depth_peak ? depth_x : depth_peak;
    return pieces >= 1 ? pieces : 1; /* a stage is at least one piece */
}

int sched_first_slot_loop(const Schedule *s, const SchedGroup *g, int st) {
    const IrStmt *is = &s->op->stmts[st];
    if (is->routing != RT_COMBINE) return g->loop_count;
    int expert = s->op->routes[is->route].expert;
    for (int q = 0; q < g->loop_count; q++) {
        const SchedLoop *lp = &g->loops[q];
        if (s->stmts[st].trips[sched_li(s, lp->level, lp->index)] <= 1) continue;
        if (lp->index == expert || lp->index == is->slot) return q;
    }
    return g->loop_count;
}

bool sched_waits_for_slots(const Schedule *s, const SchedNode *n) {
    return n->kind == SN_COLLECTIVE && n->stmt >= 0 && n->reduce_op != RO_NONE &&
           s->op->stmts[n->stmt].routing == RT_COMBINE;
}

double sched_tiles_completed(const Schedule *s, const SchedGroup *g, int st, int tensor,
                             int max_level, int before, int *depth) {
    double k = 1;
    *depth = -1;
    for (int q = 0; q < before && q < g->loop_count; q++) {
        const SchedLoop *lp = &g->loops[q];
        if (lp->level > max_level || !sched_access_has_index(s, st, tensor, lp->index)) continue;
        double trips = s->stmts[st].trips[sched_li(s, lp->level, lp->index)];
        if (trips <= 1) continue;
        k *= trips;
        *depth = q;
    }
    return k;
}

int sched_next_loop(const Schedule *s, const SchedGroup *g, int st, int depth) {
    for (int q = depth + 1; q < g->loop_count; q++) {
        const SchedLoop *lp = &g->loops[q];
        if (ir_stmt_uses_index(&s->op->stmts[st], lp->index) &&
            s->stmts[st].trips[sched_li(s, lp->level, lp->index)] > 1)
            return q;
    }
    return g->loop_count;
}

/* The visits of tensor t at `level` by statement st counted over the
 * loops whose index `other` uses: st's visits in the first iteration of
 * the loops only st runs. */
double sched_visits_over(const Schedule *s, const SchedGroup *g, int st, int t, int level,
                         int other) {
    double running = 1, visits = 1;
    for (int k = 0; k < g->loop_count; k++) {
        const SchedLoop *lp = &g->loops[k];
        if (lp->level > level) break;
        if (!ir_stmt_uses_index(&s->op->stmts[st], lp->index) ||
            !ir_stmt_uses_index(&s->op->stmts[other], lp->index))
            continue;
        double trips = s->stmts[st].trips[sched_li(s, lp->level, lp->index)];
        if (trips <= 1) continue;
        running *= trips;
        if (sched_access_has_index(s, st, t, lp->index)) visits = running;
    }
    return visits;
}
