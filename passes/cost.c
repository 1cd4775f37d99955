/* cost.c — costing (docs/cost-model.md sections 2, 3, 5, 6 and 7).
 * Compute: work per instance / (throughput x efficiency), for a unit
 * with a native `shape` the compute tiles padded to it, or for a
 * systolic array the fold formula per compute tile.  Memory: the bytes
 * read and written at each memory per instance / its bandwidth; a level
 * takes its slowest memory.  Network: the sum of the group's collectives.
 * overlap full: a pipeline whose stages are the matrix unit, the vector
 * unit, the memory and the network: the slowest stage plus one tile of
 * every other stage (its time / its depth); overlap tiles: the same with
 * every collective cut into the compute tiles of the tensor it moves
 * (each piece paying the call and hop latencies again); overlap none: the
 * sum.  Each group then pays the arch's launch_overhead.  Groups run in
 * sequence; `repeat` multiplies the whole. */
#include "passes/passes.h"

#include <string.h>

#include <math.h>
#include <stdlib.h>

/* Compute time of one statement; with want_text, *why gets the arithmetic. */
/* A contraction's compute tile at the innermost level in its three roles
 * (m: result indices not in the second operand, n: result indices in it,
 * k: reduced indices) and the number of such tiles each instance runs. */
typedef struct ComputeTile {
    double m, n, k, tiles;
} ComputeTile;

static ComputeTile compute_tile(const Schedule *s, int st) {
    const SchedStmt *ss = &s->stmts[st];
    const IrStmt *is = &s->op->stmts[st];
    const IrTensor *w = is->input_count > 1 ? &s->op->tensors[is->inputs[1]] : NULL;
    ComputeTile t = {1, 1, 1, 1};
    int L = s->levels;
    for (int r = 0; r < is->reduced_count; r++) t.k *= ss->tile[sched_li(s, L, is->reduced[r])];
    for (int q = 0; q < is->lhs_count; q++) {
        int i = is->lhs[q];
        if (w && sched_access_has_index(s, st, w->id, i))
            t.n *= ss->tile[sched_li(s, L, i)];
        else
            t.m *= ss->tile[sched_li(s, L, i)];
    }
    int idx[2 * IR_MAX_RANK];
    int n = ir_stmt_indices(is, idx);
    for (int l = 1; l <= L; l++)
        for (int q = 0; q < n; q++) t.tiles *= ss->trips[sched_li(s, l, idx[q])];
    return t;
}

/* The compute tiles of a contraction by size: with partial tiles (an
 * index whose tile does not divide what an instance walks) each index has
 * a full size and partial ones (tiles.c keeps them with their counts), so
 * a unit that pads a tile up (native shape, systolic folds) is charged
 * per size: the sum over every combination of the indices' sizes of its
 * count x the cost of one such tile (docs/cost-model.md section 6).
 * cost(tile) gets m, n, k of one tile; returns the sum and, in *sizes,
 * how many combinations there were (1 when every tile is full). */
typedef double (*TileCost)(const IrCompute *u, double m, double n, double k);

static double over_tile_sizes(const Schedule *s, int st, TileCost cost, int *sizes) {
    const SchedStmt *ss = &s->stmts[st];
    const IrStmt *is = &s->op->stmts[st];
    const IrTensor *w = is->input_count > 1 ? &s->op->tensors[is->inputs[1]] : NULL;
    int idx[2 * IR_MAX_RANK], pick[2 * IR_MAX_RANK] = {0};
    int n = ir_stmt_indices(is, idx);
    double total = 0;
    *sizes = 0;
    for (;;) {
        double m = 1, nn = 1, k = 1, count = 1, sx = 0, sy = 0;
        for (int q = 0; q < n; q++) {
            int i = idx[q];
            const SchedClass *c = &ss->classes[i * ss->class_cap + pick[q]];
            /* under a restriction the tiles of x and y count as pairs */
            if (ss->mask && i == ss->mask->x)
                sx = c->size;
            else if (ss->mask && i == ss->mask->y)
                sy = c->size;
            else
                count *= c->count;
            bool lhs = false;
            for (int r = 0; r < is->lhs_count; r++) lhs |= is->lhs[r] == i;
            if (!lhs)
                k *= c->size;
            else if (w && sched_access_has_index(s, st, w->id, i))
                nn *= c->size;
            else
                m *= c->size;
        }
        /* only the compute tiles that meet it run (section 3.1) */
        if (ss->mask) count *= sched_mask_sized(ss->mask, s->levels, sx, sy);
        total += count * cost(ss->unit, m, nn, k);
        (*sizes)++;
        int q = 0;
        while (q < n && ++pick[q] >= ss->class_count[idx[q]]) pick[q++] = 0;
        if (q == n) break;
    }
    return total;
}

/* Rounds of one compute tile on a unit with a native shape. */
static double shape_rounds(const IrCompute *u, double m, double n, double k) {
    int units = u->count > 0 ? u->count : 1;
    return ceil(ceil(m / u->shape_m) * ceil(n / u->shape_n) * ceil(k / u->shape_k) / units);
}

/* Cycles of one compute tile on a systolic array. */
static double array_cycles(const IrCompute *u, double m, double n, double k) {
    return systolic_cycles(m, k, n, u->array_rows, u->array_cols, u->count > 0 ? u->count : 1);
}

/* A unit with a native shape M x N x K runs whole operations: each compute
 * tile is padded up to multiples of the shape along m, n and k, and its
 * ceil(mt/M) ceil(nt/N) ceil(kt/K) operations go to the `count` units in
 * rounds of `count`.  A round takes M N K MACs at one unit's throughput
 * (peak x efficiency); a tile that fills the shape and the units costs
 * work / throughput, as without a shape. */
static double shaped_time(const Schedule *s, int st, const char **why) {
    const SchedStmt *ss = &s->stmts[st];
    const IrCompute *u = ss->unit;
    ComputeTile t = compute_tile(s, st);
    int units = u->count > 0 ? u->count : 1;
    double native = (double)u->shape_m * u->shape_n * u->shape_k;
    double ops = ceil(t.m / u->shape_m) * ceil(t.n / u->shape_n) * ceil(t.k / u->shape_k);
    double rounds = ceil(ops / units);
    double per_unit = u->throughput / units; /* MAC/s of one unit, efficiency included */
    int sizes;
    double all_rounds = over_tile_sizes(s, st, shape_rounds, &sizes);
    double time = all_rounds * native / per_unit;
    if (s->want_text && sizes > 1) {
        double charged = all_rounds * units * native;
        double used = charged > 0 ? ss->work / charged : 1;
        *why = arena_printf(s->arena,
                            "%.0f ops per unit over %.0f tiles of %d sizes (partial tiles padded "
                            "to the shape; the full tile ceil(%.0f/%d) x ceil(%.0f/%d) x "
                            "ceil(%.0f/%d) over %d unit%s) x %d*%d*%d MAC / %.6g MAC/s per unit%s",
                            all_rounds, t.tiles, sizes, t.m, u->shape_m, t.n, u->shape_n, t.k,
                            u->shape_k, units, units == 1 ? "" : "s", u->shape_m, u->shape_n,
                            u->shape_k, per_unit,
                            used < 1 ? arena_printf(s->arena, ", shape used %.3g", used) : "");
    } else if (s->want_text) {
        double charged = t.tiles * rounds * units * native;
        double used = charged > 0 ? ss->work / charged : 1;
        const char *eff =
            u->efficiency < 1 ? arena_printf(s->arena, "efficiency %.3g", u->efficiency) : "peak";
        *why = arena_printf(
            s->arena,
            "%.0f tiles x %.0f op%s per unit (ceil(%.0f/%d) x ceil(%.0f/%d) x ceil(%.0f/%d) "
            "over %d unit%s) x %d*%d*%d MAC / %.6g MAC/s per unit (%s%s)",
            t.tiles, rounds, rounds == 1 ? "" : "s", t.m, u->shape_m, t.n, u->shape_n, t.k,
            u->shape_k, units, units == 1 ? "" : "s", u->shape_m, u->shape_n, u->shape_k, per_unit,
            eff, used < 1 ? arena_printf(s->arena, ", shape used %.3g", used) : "");
    }
    return time;
}

static double compute_time(const Schedule *s, int st, const char **why) {
    const SchedStmt *ss = &s->stmts[st];
    const IrStmt *is = &s->op->stmts[st];
    const IrCompute *u = ss->unit;
    if (!u) return 0;
    double eff = u->efficiency > 0 ? u->efficiency : 1;
    if (is->cls == SC_CONTRACTION && u->shape_m > 0 && u->throughput > 0)
        return shaped_time(s, st, why);
    if (is->cls == SC_CONTRACTION && u->array_rows > 0 && u->array_cols > 0 &&
        s->arch->clock_hz > 0) {
        ComputeTile t = compute_tile(s, st);
        double mt = t.m, kt = t.k, nt = t.n, tiles = t.tiles;
        int arrays = u->count > 0 ? u->count : 1;
        double folds = ceil(kt / u->array_rows) * ceil(nt / u->array_cols);
        double per_array = ceil(folds / arrays);
        int sizes;
        double cycles = over_tile_sizes(s, st, array_cycles, &sizes);
        if (s->want_text && sizes > 1)
            *why = arena_printf(s->arena,
                                "%.0f cycles over %.0f tiles of %d sizes (partial tiles folded "
                                "whole; the full tile ceil(%.0f/%d) x ceil(%.0f/%d) folds over "
                                "%d arrays)%s",
                                cycles, tiles, sizes, kt, u->array_rows, nt, u->array_cols, arrays,
                                eff < 1 ? arena_printf(s->arena, " / efficiency %.3g", eff) : "");
        else if (s->want_text)
            *why = arena_printf(s->arena,
                                "%.0f tiles x %.0f fold%s per array (ceil(%.0f/%d) x ceil(%.0f/%d) "
                                "over %d arrays) x (2*%d + %d + %.0f - 2) cycles%s",
                                tiles, per_array, per_array == 1 ? "" : "s", kt, u->array_rows, nt,
                                u->array_cols, arrays, u->array_rows, u->array_cols, mt,
                                eff < 1 ? arena_printf(s->arena, " / efficiency %.3g", eff) : "");
        return cycles / eff / s->arch->clock_hz;
    }
    if (!(u->throughput > 0)) return 0;
    if (s->want_text)
        *why = arena_printf(
            s->arena, "%.6g %s / %.6g %s/s (%s%s)", ss->work,
            is->cls == SC_CONTRACTION ? "MAC" : "op", u->throughput,
            is->cls == SC_CONTRACTION ? "MAC" : "op",
            u->count > 1 ? arena_printf(s->arena, "%d units, ", u->count) : "",
            u->efficiency < 1 ? arena_printf(s->arena, "efficiency %.3g", u->efficiency) : "peak");
    return ss->work / u->throughput;
}

/* A statement that waits for a loop to close says so before its
 * arithmetic. */
static const char *waiting_reason(const Schedule *s, const SchedGroup *g, int st,
                                  const char *arithmetic) {
    int w = g->wait_loop[s->stmts[st].position];
    if (w >= g->loop_count) return arithmetic;
    const SchedLoop *lp = &g->loops[w];
    return arena_printf(s->arena,
                        "runs once the loop over the %s tiles of %s completes its inputs; %s",
                        s->arch->levels[lp->level < s->levels ? lp->level : s->levels - 1].name,
                        s->op->indices[lp->index].name, arithmetic ? arithmetic : "");
}

/* Phases run 0 (load) to 4 (store); a boundary, 5, follows every other
 * node of its group. */
enum { PHASES = 6, BOUNDARY_PHASE = 5 };

/* Orders the nodes by group, then statement position (boundaries last),
 * phase, and creation.  A stable counting sort over the (group, position,
 * phase) buckets: linear, with creation order kept inside a bucket, where
 * a qsort on those keys cost about 9% of the optimizer's time. */
static void order_nodes(Schedule *s) {
    int n = s->node_count;
    if (n < 2) return;
    int positions = 1;
    for (int i = 0; i < n; i++)
        if (s->nodes[i].position >= positions) positions = s->nodes[i].position + 1;
    int slots = positions + 1; /* the last slot of a group: its boundaries */
    int buckets = s->group_count * slots * PHASES;
    int *start = ARENA_ARRAY(s->arena, int, buckets + 1);
    memset(start, 0, sizeof(int) * (size_t)(buckets + 1));
    int *key = ARENA_ARRAY(s->arena, int, n);
    for (int i = 0; i < n; i++) {
        const SchedNode *x = &s->nodes[i];
        bool boundary = x->phase == BOUNDARY_PHASE;
        int slot = boundary ? positions : (x->position > 0 ? x->position : 0);
        key[i] = (x->group * slots + slot) * PHASES + x->phase;
        start[key[i] + 1]++;
    }
    for (int b = 0; b < buckets; b++) start[b + 1] += start[b];
    SchedNode *sorted = ARENA_ARRAY(s->arena, SchedNode, n);
    for (int i = 0; i < n; i++) sorted[start[key[i]]++] = s->nodes[i];
    s->nodes = sorted;
    s->node_cap = n;
}

/* Whether memory `mem` holds group g's tiles of tensor t once though the
 * group refills them (no room for the next: docs/cost-model.md section 2). */
static bool held_once(const SchedGroup *g, int mem, int t) {
    for (int k = 0; k < g->footprint_count; k++)
        if (g->footprints[k].memory == mem && g->footprints[k].tensor == t &&
            g->footprints[k].exposed)
            return true;
    return false;
}

/* The pipeline depth of a compute stage (matrix: want_matrix).  A
 * statement consumes its in-group inputs tile by tile, so the unit that
 * runs it overlaps the producer's unit across the outermost tiles
 * (software pipelining: tile t+1 on one unit while tile t is on the
 * other).  A statement that waits for an outermost loop to close
 * (section 2) overlaps the other unit only across the tiles of the loops
 * outside that one: when both units work, the outermost such wait of a
 * statement on this unit sets its depth. */
static double unit_depth(const Schedule *s, const SchedGroup *g, bool want_matrix, double tiles) {
    if (!(g->matrix_s > 0 && g->vector_s > 0)) return tiles;
    int first = g->loop_count;
    for (int k = 0; k < g->stmt_count; k++) {
        const SchedStmt *ss = &s->stmts[g->stmts[k]];
        if ((ss->unit && ss->unit->matrix) != want_matrix) continue;
        int w = g->wait_loop[ss->position];
        if (w < first && g->loops[w].level == g->pipe_level) first = w;
    }
    double depth = 1;
    for (int k = 0; k < first; k++)
        if (g->loops[k].level == g->pipe_level) depth *= g->loops[k].trips;
    return depth < tiles ? depth : tiles;
}

/* overlap tiles: every collective of the group is cut into the tiles of
 * the tensor it moves that its statement completes (or takes) one after
 * another: the product of the statement's trips of the group's loops over
 * the tensor's indices (as the statement names them), the loops of every
 * level down to the compute unit, and for a result only the loops outside
 * the first loop over an index it reduces (tiles inside that loop all
 * complete when it closes).  So each piece follows (or feeds) one compute
 * tile: chunks = those tiles / executions.  Each chunk pays the
 * collective's fixed part again (call latency, hop latencies):
 * latency += executions x (chunks - 1) x fixed.  Returns the network's
 * pipeline depth: the most pieces of any collective, at least the
 * outermost tiles. */
static double chunk_collectives(Schedule *s, SchedGroup *g, double tiles) {
    double depth = tiles;
    for (int i = 0; i < s->node_count; i++) {
        SchedNode *n = &s->nodes[i];
        if (n->group != g->id || n->kind != SN_COLLECTIVE || n->stmt < 0 || n->tensor < 0 ||
            n->once_per_step)
            continue;
        const SchedStmt *ss = &s->stmts[n->stmt];
        bool result = s->op->stmts[n->stmt].out_tensor == n->tensor;
        int before = sched_waits_for_slots(s, n) ? sched_first_slot_loop(s, g, n->stmt)
                     : result                    ? sched_first_reduced_loop(s, g, n->stmt)
                                                 : g->loop_count;
        double walked = 1;
        for (int p = 0; p < before && p < g->loop_count; p++) {
            const SchedLoop *lp = &g->loops[p];
            if (sched_access_has_index(s, n->stmt, n->tensor, lp->index))
                walked *= ss->trips[sched_li(s, lp->level, lp->index)];
        }
        double k = n->count > 0 ? n->count : 1;
        double q = floor(walked / k + 0.5);
        if (q < 1) q = 1;
        n->chunks = q;
        if (q > 1) {
            double whole = collective_node_time(s, n, n->bytes);
            double cut = q * collective_node_time(s, n, n->bytes / q);
            n->chunk_extra_s = cut > whole ? cut - whole : 0;
        }
        n->latency_s += k * n->chunk_extra_s;
        g->cost.network_s += k * n->chunk_extra_s;
        if (s->want_text && q > 1)
            n->reason = arena_printf(
                s->arena,
                "%s; overlap tiles: each execution in %.0f chunks, one per compute tile, "
                "+%s per execution",
                n->reason ? n->reason : "", q,
                unit_format(s->arena, n->chunk_extra_s, (UnitDim){BU_SECOND, BU_NONE}));
        if (k * q > depth) depth = k * q;
    }
    return depth;
}

/* `overlap tiles reserve R of U` (section 7.5): while a group's
 * collectives run beside its compute, R of the chip's U units run them
 * (Flux's and Comet's kernels specialise thread blocks to communication),
 * so every compute stage of the group takes U / (U - R) times as long.
 * Groups that run no collective, or run them apart (`none`, `local`),
 * keep every unit. */
static void reserve_units(Schedule *s, SchedGroup *g) {
    const IrReserve *r = &g->reserve;
    if (!(r->total > r->units && r->units > 0) || !(g->cost.network_s > 0) ||
        g->overlap == OVERLAP_NONE || g->overlap == OVERLAP_LOCAL)
        return;
    double slow = (double)r->total / (double)(r->total - r->units);
    g->reserved = true;
    g->cost.compute_s *= slow;
    g->matrix_s *= slow;
    g->vector_s *= slow;
    for (int i = g->first_node; i >= 0 && i < g->first_node + g->node_count; i++) {
        SchedNode *n = &s->nodes[i];
        if (n->kind != SN_COMPUTE) continue;
        n->latency_s *= slow;
        if (s->want_text)
            n->reason = arena_printf(s->arena,
                                     "%s; on %lld of %lld units, %lld reserved for the "
                                     "collectives (x %.4g)",
                                     n->reason ? n->reason : "", (long long)(r->total - r->units),
                                     (long long)r->total, (long long)r->units, slow);
    }
}

void pass_cost(Schedule *s) {
    const IrArch *arch = s->arch;
    for (int i = 0; i < s->node_count; i++) s->nodes[i].seq = i;
    for (int i = 0; i < s->node_count; i++)
        if (s->nodes[i].kind == SN_BOUNDARY) s->nodes[i].phase = BOUNDARY_PHASE;
    /* accumulated over micro-batches, a weight gradient is reduced once
     * per step, after the last one: not in its group (section 13.2) */
    bool accumulates = ir_accumulates(s->m);
    for (int i = 0; accumulates && i < s->node_count; i++) {
        SchedNode *n = &s->nodes[i];
        n->once_per_step = n->kind == SN_COLLECTIVE && n->tensor >= 0 &&
                           s->op->tensors[n->tensor].use == TU_WEIGHT_GRAD;
        if (n->once_per_step && s->want_text)
            n->reason = arena_printf(s->arena,
                                     "%s; once per step, after the last micro-batch (not in "
                                     "this group's time)",
                                     n->reason ? n->reason : "");
    }
    order_nodes(s);
    const char **why = ARENA_ARRAY(s->arena, const char *, s->op->stmt_count);
    for (int st = 0; st < s->op->stmt_count; st++) {
        if (!sched_stmt_tiled(s, st)) continue; /* no tiles: no time */
        s->stmts[st].compute_s = compute_time(s, st, &why[st]);
        const SchedMask *mk = s->stmts[st].mask;
        const IrPredicate *pr = &s->op->stmts[st].mask;
        if (s->want_text && mk)
            why[st] = arena_printf(
                s->arena,
                "%s; where %s%s: %.0f of %.0f compute tiles of (%s, %s) run, %.3g%% of "
                "the points",
                why[st] ? why[st] : "", ir_pred_text(s->arena, s->op, pr),
                pr->from != st ? arena_printf(s->arena, " (from %s)", s->op->stmts[pr->from].name)
                               : "",
                mk->visited_tiles, mk->all_tiles, s->op->indices[mk->x].name,
                s->op->indices[mk->y].name, 100 * mk->visited_points / mk->all_points);
    }
    for (int g = 0; g < s->group_count; g++) {
        s->groups[g].first_node = -1;
        s->groups[g].node_count = 0;
        s->groups[g].matrix_s = s->groups[g].vector_s = 0;
    }
    s->cost = (Cost){0};
    double stages = 0;
    for (int i = 0; i < s->node_count; i++) {
        SchedNode *n = &s->nodes[i];
        SchedGroup *g = &s->groups[n->group];
        if (g->first_node < 0) g->first_node = i;
        g->node_count++;
        switch (n->kind) {
        case SN_COMPUTE: {
            const SchedStmt *ss = &s->stmts[n->stmt];
            if (n->rescale) {
                /* corrections of an online reduction (section 7.3): on
                 * every instance that runs the statement */
                double t = n->unit->throughput > 0 ? n->ops / n->unit->throughput : 0;
                double active = ss->work > 0 ? ss->total_work / ss->work : 1;
                n->latency_s = t;
                n->energy_j = n->ops * active * n->unit->energy;
                g->cost.compute_energy_j += n->energy_j;
                g->cost.compute_s += t;
                if (n->unit->matrix)
                    g->matrix_s += t;
                else
                    g->vector_s += t;
                break;
            }
            double op_energy = ss->unit ? ss->total_work * ss->unit->energy : 0;
            g->cost.memory_energy_j += n->energy_j; /* operand reads, result writes */
            g->cost.compute_energy_j += op_energy;
            n->energy_j += op_energy;
            n->latency_s = ss->compute_s;
            n->reason = why[n->stmt];
            if (s->want_text && n->after_inner)
                n->reason = waiting_reason(s, g, n->stmt, why[n->stmt]);
            g->cost.compute_s += ss->compute_s;
            if (ss->unit && ss->unit->matrix)
                g->matrix_s += ss->compute_s;
            else
                g->vector_s += ss->compute_s;
            break;
        }
        case SN_LOAD:
        case SN_STORE:
            g->cost.memory_energy_j += n->energy_j;
            /* a tile held once for want of room for the next: every
             * move but the first (the fill) keeps the units waiting */
            if (n->count > 1 && held_once(g, n->memory, n->tensor))
                g->cost.stall_s += n->latency_s * (n->count - 1) / n->count;
            break;
        case SN_COLLECTIVE:
            if (n->once_per_step) break; /* the step's, not the group's (pass_stages) */
            g->cost.network_s += n->latency_s;
            g->cost.network_energy_j += n->energy_j;
            break;
        case SN_BOUNDARY: break;
        }
    }
    for (int gi = 0; gi < s->group_count; gi++) reserve_units(s, &s->groups[gi]);
    for (int gi = 0; gi < s->group_count; gi++) {
        SchedGroup *g = &s->groups[gi];
        double level_sum = 0, level_max = 0;
        for (int l = 0; l < s->levels; l++) {
            double worst = 0;
            const IrLevel *lv = &arch->levels[l];
            for (int k = 0; k < lv->memory_count; k++) {
                const IrMemory *mem = &arch->memories[lv->first_memory + k];
                if (!(mem->bandwidth > 0) || !isfinite(mem->bandwidth)) continue;
                double t = g->mem_bytes[mem->id] / mem->bandwidth +
                           g->mem_transfers[mem->id] * mem->transfer_latency;
                if (t > worst) worst = t;
            }
            g->level_s[l] = worst;
            level_sum += worst;
            if (worst > level_max) level_max = worst;
        }
        double c = g->cost.compute_s;
        double tiles = g->tiles >= 1 ? g->tiles : 1;
        g->matrix_depth = g->vector_depth = g->network_depth = tiles;
        if (g->overlap == OVERLAP_NONE) {
            g->cost.memory_s = level_sum;
            g->cost.fill_drain_s = 0;
            g->cost.latency_s = c + level_sum + g->cost.network_s;
        } else {
            g->matrix_depth = unit_depth(s, g, true, tiles);
            g->vector_depth = unit_depth(s, g, false, tiles);
            if (g->overlap == OVERLAP_TILES) {
                /* the units pipeline with the network chunk by chunk,
                 * unless a wait already made them coarser */
                g->network_depth = chunk_collectives(s, g, tiles);
                if (g->matrix_depth == tiles) g->matrix_depth = g->network_depth;
                if (g->vector_depth == tiles) g->vector_depth = g->network_depth;
            }
            g->cost.memory_s = level_max;
            /* a combine's reduction waits for the slot loops: the network
             * pipelines only in the pieces it runs in (section 15) */
            for (int i = g->first_node; i < g->first_node + g->node_count; i++) {
                const SchedNode *n = &s->nodes[i];
                double pieces = (n->count > 0 ? n->count : 1) * (n->chunks > 0 ? n->chunks : 1);
                if (sched_waits_for_slots(s, n) && pieces < g->network_depth)
                    g->network_depth = pieces;
            }
            /* stages: matrix unit, vector unit, memory, network; each
             * adds one of its pieces to the slowest one's time (the stages
             * of the outermost tiling summed first, so a group on one
             * unit keeps the arithmetic of (C + M + N - max) / T) */
            /* `overlap local`: the network waits for the group's units
             * and memory, and they for it (section 7.4) */
            bool local = g->overlap == OVERLAP_LOCAL;
            double x[4] = {g->matrix_s, g->vector_s, level_max, local ? 0 : g->cost.network_s};
            double depth[4] = {g->matrix_depth, g->vector_depth, tiles, g->network_depth};
            int peak = 0;
            for (int k = 1; k < 4; k++)
                if (x[k] > x[peak]) peak = k;
            /* a stage finer than the pace-setter fills and drains in
             * the pace-setter's pieces: a reduction that waits for the
             * whole walk starts only when the walk is done */
            double same = 0, other = 0;
            g->pace = peak;
            for (int k = 0; k < 4; k++) {
                g->stage_s[k] = x[k];
                g->stage_pieces[k] =
                    k == peak ? depth[k] : sched_stage_pieces(depth[k], depth[peak], k == 2);
                if (k == peak) continue;
                if (g->stage_pieces[k] == tiles)
                    same += x[k];
                else
                    other += x[k] / g->stage_pieces[k];
            }
            /* the fill and drain are the first and last tiles' work: a
             * whole tile's share, not the mean one's, when the last tiles
             * are partial (17 rows in tiles of 16 fill with 16) */
            g->cost.fill_drain_s = same * g->first_share + other;
            g->cost.latency_s =
                x[peak] + g->cost.fill_drain_s + g->cost.stall_s + (local ? g->cost.network_s : 0);
            /* never slower than the stages one after another (`overlap
             * none`): waiting for tiles held once cannot cost more than
             * not overlapping at all */
            double serial = c + level_sum + g->cost.network_s;
            if (g->cost.latency_s > serial) {
                double over = g->cost.latency_s - serial;
                double from_stall = over < g->cost.stall_s ? over : g->cost.stall_s;
                g->cost.stall_s -= from_stall;
                g->cost.fill_drain_s -= over - from_stall;
                if (g->cost.fill_drain_s < 0) g->cost.fill_drain_s = 0;
                g->cost.latency_s = serial;
            }
        }
        /* a group is a kernel: it is launched, and its end synchronised,
         * before the next one starts; nothing overlaps that */
        g->launch_s = arch->launch_overhead;
        g->cost.latency_s += g->launch_s;
        /* under overlap the compute stage is the busier unit */
        double stage = g->overlap == OVERLAP_NONE  ? g->cost.compute_s
                       : g->matrix_s > g->vector_s ? g->matrix_s
                                                   : g->vector_s;
        g->cost.bound = dominant_bound(stage, g->cost.memory_s, g->cost.network_s);
        stages += stage;
        g->cost.energy_j =
            g->cost.compute_energy_j + g->cost.memory_energy_j + g->cost.network_energy_j;
        cost_add(&s->cost, &g->cost);
    }
    s->cost.bound = dominant_bound(stages, s->cost.memory_s, s->cost.network_s);
    double repeat = s->m->repeat > 0 ? (double)s->m->repeat : 1;
    s->cost.latency_s *= repeat;
    s->cost.energy_j *= repeat;
}
