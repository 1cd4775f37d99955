/* reuse.c — reuse analysis over the loop nests the tiles pass built (one
 * per level: the mapping's `order`, else index order); a statement sees
 * the loops over its own indices with its own trip counts.  A tensor's
 * tile at level l is brought in (or written back) once per iteration of
 * the loops down to the innermost loop over one of its indices: loops
 * inside that one leave it resident.  Partial results of a reduction whose
 * loop is outside the result's loops go back and forth (read-modify-write).
 * Tensors made and used inside a fused group stay at its level and below. */
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bytes of the statement's level-l tile of t, averaged over the tiles
 * the busiest instance walks: the elements it holds along each index over
 * its count of tiles (docs/cost-model.md section 3; the full tile when
 * every tile divides, less when the last tile along an index is partial,
 * so that visits x this is what really moves). */
static double tile_bytes(const Schedule *s, int st, const IrTensor *t, int level) {
    double b = sched_elem_bytes(t);
    const SchedStmt *ss = &s->stmts[st];
    for (int r = 0; r < t->rank; r++) {
        int li = sched_li(s, level, sched_access_index(s, st, t->id, r));
        b *= ss->extent[li] / ss->count[li];
    }
    return b;
}

/* Dims between two levels, and those along which the tensor holds the same
 * data on every instance (so the outer level serves it once). */
static void fan_out(const Schedule *s, int st, const IrTensor *t, bool is_output, int outer,
                    int inner, double *children, double *replicas) {
    const SchedStmt *ss = &s->stmts[st];
    *children = 1;
    *replicas = 1;
    for (int d = 0; d < s->arch->dim_count; d++) {
        if (!sched_dim_between(s, d, outer, inner)) continue;
        double p = (double)s->arch->dims[d].size;
        *children *= p;
        bool same =
            is_output ? ss->out_layout[d].kind != LAY_SPLIT : !sched_access_split(s, st, t->id, d);
        if (same) *replicas *= p;
    }
}

/* How many child tiles' worth of bytes one outer instance serves per
 * visit: children / replicas (the children holding distinct data) when
 * the split divides; in general, along each index of the tensor that the
 * dims between the levels split, the outer instance's elements over the
 * busiest child's (the children share the outer range out, and some get
 * less than the busiest or nothing: docs/cost-model.md section 3). */
static double spread(const Schedule *s, int st, const IrTensor *t, bool is_output, int outer,
                     int inner) {
    const SchedStmt *ss = &s->stmts[st];
    double f = 1;
    int seen[SCHED_MAX_DIMS], nseen = 0;
    for (int d = 0; d < s->arch->dim_count; d++) {
        if (!sched_dim_between(s, d, outer, inner) || s->arch->dims[d].size <= 1) continue;
        int i = is_output ? (ss->out_layout[d].kind == LAY_SPLIT ? ss->out_layout[d].index : -1)
                          : (sched_access_split(s, st, t->id, d) ? ss->split[d] : -1);
        /* a joint deal (docs/cost-model.md 1.2): each child loads its own
         * tiles.  With both indices the children hold every cell once: the
         * ratio of all of them to the busiest child's; with one, the
         * blocks of it their runs touch over the busiest's */
        if (i >= 0 && ss->joint[d][0] >= 0) {
            int ix[IR_MAX_JOINT], n = sched_dim_indices(ss, d, ix), has = 0, which = 0;
            bool again = false;
            for (int k = 0; k < nseen; k++) again |= seen[k] == ix[0];
            if (again) continue;
            for (int k = 0; k < n; k++) {
                seen[nseen++] = ix[k];
                if (is_output || sched_access_has_index(s, st, t->id, ix[k])) {
                    has++;
                    which = k;
                }
            }
            if (has == n)
                for (int k = 0; k < n; k++)
                    f *= ss->extent[sched_li(s, outer, ix[k])] /
                         ss->extent[sched_li(s, inner, ix[k])];
            else
                f *= sched_joint_spread(s, ss, d, outer, inner, which);
            continue;
        }
        bool again = false;
        for (int k = 0; k < nseen; k++) again |= seen[k] == i;
        if (i < 0 || again) continue;
        seen[nseen++] = i;
        f *= ss->extent[sched_li(s, outer, i)] / ss->extent[sched_li(s, inner, i)];
    }
    return f;
}

/* The time a memory spends on `bytes` moved in `transfers` tiles:
 * bytes / bandwidth + transfers x transfer_latency (cost-model.md 3). */
static double bw_time(const IrMemory *mem, double bytes, double transfers) {
    if (!mem || !(mem->bandwidth > 0) || !isfinite(mem->bandwidth)) return 0;
    return bytes / mem->bandwidth + transfers * mem->transfer_latency;
}

/* `outer_side`: the bytes are exchanged with the level above; a stream
 * memory passes them through and counts them once, as they cross its
 * inner side (cost-model.md 3, "Stream levels"), so they take none of
 * its bandwidth here.  Their energy and transfers still count. */
static void account(Schedule *s, SchedGroup *g, const IrMemory *mem, double read, double written,
                    double transfers, double *energy, bool outer_side) {
    if (!mem) return;
    if (!(outer_side && mem->kind == MK_STREAM)) g->mem_bytes[mem->id] += read + written;
    g->mem_transfers[mem->id] += transfers;
    double inst = (double)s->arch->levels[mem->level].instances;
    *energy += inst * (read * mem->read_energy + written * mem->write_energy);
}

/* Names of the loops (levels up to `level`, positions [from, to)) that the
 * statement runs and that do (relevant) or do not move the tensor. */
static const char *loop_list(const Schedule *s, const SchedGroup *g, int st, const IrTensor *t,
                             int level, bool relevant, int from, int to) {
    char buf[256] = "";
    size_t used = 0;
    const IrStmt *is = &s->op->stmts[st];
    for (int k = from; k < to && k < g->loop_count && used + 24 < sizeof buf; k++) {
        const SchedLoop *lp = &g->loops[k];
        if (lp->level > level || !ir_stmt_uses_index(is, lp->index)) continue;
        if (s->stmts[st].trips[sched_li(s, lp->level, lp->index)] <= 1) continue;
        if (sched_access_has_index(s, st, t->id, lp->index) != relevant) continue;
        const char *name = s->op->indices[lp->index].name;
        bool dup = false; /* the same index at several levels: list it once */
        for (int q = from; q < k; q++)
            if (g->loops[q].index == lp->index && g->loops[q].level <= level) dup = true;
        if (dup) continue;
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", used ? ", " : "", name);
    }
    return arena_strdup(s->arena, buf);
}

static const char *move_reason(const Schedule *s, const SchedGroup *g, int st, const IrTensor *t,
                               int level, SchedVisits v, bool store, double replicas,
                               double partial) {
    const char *moving = loop_list(s, g, st, t, level, true, 0, g->loop_count);
    /* loops outside the innermost one that moves it repeat the transfer;
     * loops inside it leave the tile resident */
    const char *again = loop_list(s, g, st, t, level, false, 0, v.depth + 1);
    const char *resident = loop_list(s, g, st, t, level, false, v.depth + 1, g->loop_count);
    char why[512];
    if (v.visits <= 1)
        snprintf(why, sizeof why, "once");
    else
        snprintf(why, sizeof why, "%.0f times: each %s tile", v.visits, moving);
    char extra[768] = "";
    size_t used = 0;
    if (*again)
        used +=
            (size_t)snprintf(extra + used, sizeof extra - used, "; %s again for each %s around it",
                             store ? "written" : "read", again);
    if (*resident && used < sizeof extra)
        used += (size_t)snprintf(extra + used, sizeof extra - used,
                                 "; %s does not depend on %s (%s)", t->name, resident,
                                 store ? "written back after them" : "resident across them");
    if (replicas > 1 && used < sizeof extra)
        used += (size_t)snprintf(extra + used, sizeof extra - used,
                                 "; %s once for %.0f instances holding the same data",
                                 store ? "written" : "read", replicas);
    if (partial > 0 && used < sizeof extra)
        snprintf(extra + used, sizeof extra - used,
                 "; %.0f partial-sum reloads: a reduced loop runs outside it", partial);
    return arena_printf(s->arena, "%s%s", why, extra);
}

/* Whether statement st of group g is online and read by another statement
 * of g: only then do readers take its running value (an online statement
 * whose readers are all in later groups runs as any reduction). */
static bool online_in_group(const Schedule *s, const SchedGroup *g, int st) {
    if (!s->m->online || !s->m->online[st]) return false;
    int t = s->op->stmts[st].out_tensor;
    for (int k = 0; k < g->stmt_count; k++) {
        const IrStmt *rs = &s->op->stmts[g->stmts[k]];
        for (int q = 0; q < rs->input_count; q++)
            if (rs->inputs[q] == t) return true;
    }
    return false;
}

/* The executions of statement st: the product of its compute-tile counts
 * over its indices. */
static double stmt_executions(const Schedule *s, int st) {
    int idx[2 * IR_MAX_RANK];
    int ni = ir_stmt_indices(&s->op->stmts[st], idx);
    double executions = 1;
    for (int i = 0; i < ni; i++) executions *= s->stmts[st].count[sched_li(s, s->levels, idx[i])];
    /* under `where`, the compute tiles wholly outside it do not run */
    const SchedMask *mk = s->stmts[st].mask;
    if (mk && mk->all_tiles > 0) executions *= mk->visited_tiles / mk->all_tiles;
    return executions;
}

/* How much wider than its type a partial sum of statement st's result
 * moves (docs/cost-model.md section 3): a sum's partial results are added
 * in 32 bits at least (bf16 and fp16 products into fp32, int8 into int32)
 * and rounded only when complete, so one written back and read again
 * before its reduction ends moves at 4 bytes an element.  1 for anything
 * else: a max or min, a wide type, an online statement's running value
 * (published at its type, section 7.3), and a reduction split over
 * cluster dims, whose partial results the collectives combine. */
static double partial_width(const Schedule *s, int st, const IrTensor *tn) {
    const IrStmt *is = &s->op->stmts[st];
    double eb = sched_elem_bytes(tn);
    if (!(is->reduce_op == RO_SUM || is->reduce_op == RO_MEAN) || !(eb < 4) || !(eb > 0)) return 1;
    if (s->m->online && s->m->online[st]) return 1;
    for (int d = 0; d < s->arch->dim_count; d++) {
        int i = s->stmts[st].split[d];
        if (i >= 0 && s->arch->dims[d].size > 1 && ir_stmt_reduces(is, i)) return 1;
    }
    return 4 / eb;
}

/* The compute unit reads its operand tiles from the innermost memory and
 * writes its result tile there: once per visit of each tile. */
static void compute_node(Schedule *s, SchedGroup *g, int pos, int st) {
    const IrStmt *is = &s->op->stmts[st];
    const SchedStmt *ss = &s->stmts[st];
    int inner = s->levels - 1, unit_level = s->levels;
    double energy = 0, bytes = 0;
    int tensors[IR_MAX_OPERANDS + 1];
    int tc = 0;
    for (int q = 0; q < is->input_count; q++) tensors[tc++] = is->inputs[q];
    tensors[tc++] = is->out_tensor;
    for (int q = 0; q < tc; q++) {
        int t = tensors[q];
        bool out = t == is->out_tensor;
        const IrTensor *tn = &s->op->tensors[t];
        /* the fusion level holds the group's tensors where they were made */
        MemRole role = inner <= g->level ? sched_held_role(s, st, t) : sched_tensor_role(is, t);
        const IrMemory *mem = ir_level_memory(s->arch, inner, role);
        SchedVisits v = sched_visits(s, g, st, tn, unit_level);
        double children, replicas;
        fan_out(s, st, tn, out, inner, unit_level, &children, &replicas);
        double per_mem = tile_bytes(s, st, tn, unit_level) *
                         sched_mask_bytes_scale(s, g, st, tn, unit_level) *
                         spread(s, st, tn, out, inner, unit_level);
        /* a result's visits before its last are partial sums, at their
         * width */
        double wide = out ? partial_width(s, st, tn) : 1;
        double read = out ? per_mem * (v.visits - v.distinct) * wide : per_mem * v.visits;
        double written = out ? per_mem * (v.distinct + (v.visits - v.distinct) * wide) : 0;
        /* a reader of a running value takes the new one after each of its
         * maker's executions, not once per visit of its tile */
        if (!out && tn->producer >= 0 && s->stmts[tn->producer].group == g->id &&
            online_in_group(s, g, tn->producer)) {
            double mine = stmt_executions(s, st), theirs = stmt_executions(s, tn->producer);
            double takes = mine < theirs ? mine : theirs;
            if (takes > v.visits) read = per_mem * takes;
        }
        /* an online statement publishes its running value to its readers
         * after every execution, not once its reduction is done */
        if (out && online_in_group(s, g, st)) {
            double executions = stmt_executions(s, st);
            if (executions > v.visits) written = per_mem * executions;
        }
        account(s, g, mem, read, written, 0, &energy, false);
        bytes += read + written;
    }
    SchedNode *n = sched_add_node(s, SN_COMPUTE, g->id);
    n->stmt = st;
    n->tensor = is->out_tensor;
    n->unit = ss->unit;
    n->from_level = n->to_level = inner;
    n->depth = g->loop_count - 1;
    n->bytes = bytes;
    n->ops = ss->work;
    n->position = pos;
    n->phase = 2;
    n->energy_j = energy; /* memory side; the cost pass adds the operations */
}

/* Whether the running value of online statement st (docs/cost-model.md
 * 7.3) is written back out of `level` after every execution: the unit
 * publishes it to the innermost memory, and from a level where its readers
 * take their operand from another memory (a result in an accumulator, the
 * operand in the level's other memory) or that keeps nothing (a stream
 * level) it goes on up to the level above, below the fusion level. */
static bool publishes_through(const Schedule *s, const SchedGroup *g, int st, int level) {
    if (!online_in_group(s, g, st)) return false;
    int t = s->op->stmts[st].out_tensor;
    const IrMemory *made = ir_level_memory(s->arch, level, sched_tensor_role(&s->op->stmts[st], t));
    for (int l = s->levels - 1; l >= level; l--) {
        if (l <= g->level) return false;
        bool differs = false;
        const IrMemory *here = ir_level_memory(s->arch, l, sched_tensor_role(&s->op->stmts[st], t));
        /* a stream level keeps nothing: what reaches it goes on up */
        if (here && here->kind == MK_STREAM) continue;
        for (int k = 0; k < g->stmt_count; k++) {
            const IrStmt *rs = &s->op->stmts[g->stmts[k]];
            for (int q = 0; q < rs->input_count; q++)
                if (rs->inputs[q] == t &&
                    ir_level_memory(s->arch, l, sched_tensor_role(rs, t)) != here)
                    differs = true;
        }
        if (!differs) return false;
    }
    return made != NULL;
}

/* Whether the partial sums of st's result t stay at the fusion level
 * across its reduced loop: t leaves the group (so its tiles are written
 * back), but a reader in the group waits for a loop at or outside that
 * one, so every tile is live there anyway (section 2) and the partial
 * sums are never read back into it. */
static bool partials_live(const Schedule *s, const SchedGroup *g, int st, int t, int level) {
    if (level != g->level) return false;
    int reduced = sched_first_reduced_loop(s, g, st);
    for (int k = 0; k < g->footprint_count; k++) {
        const Footprint *f = &g->footprints[k];
        if (f->tensor == t && f->reader < 0 && f->live_loop >= 0 && f->live_loop <= reduced &&
            s->arch->memories[f->memory].level == level)
            return true;
    }
    return false;
}

static void move_tensor(Schedule *s, SchedGroup *g, int pos, int st, int t, bool is_output,
                        int level, double served, double served_weight) {
    const IrStmt *is = &s->op->stmts[st];
    const IrTensor *tn = &s->op->tensors[t];
    MemRole role = sched_tensor_role(is, t);
    /* a tensor of the group is read back from where its producer wrote it
     * at the fusion level and above; below, from the copy this statement
     * loaded into its own memory */
    MemRole outer_role = level - 1 <= g->level ? sched_held_role(s, st, t) : role;
    const IrMemory *outer = ir_level_memory(s->arch, level - 1, outer_role);
    const IrMemory *inner = ir_level_memory(s->arch, level, role);
    SchedVisits v = sched_visits(s, g, st, tn, level);
    double all_visits = v.visits;
    v.visits -= served;
    double fp = tile_bytes(s, st, tn, level) * sched_mask_bytes_scale(s, g, st, tn, level);
    /* tiles found resident that are not of the average size */
    if (served_weight >= 0 && v.visits > 0) fp *= (all_visits - served_weight) / v.visits;
    double children, replicas;
    fan_out(s, st, tn, is_output, level - 1, level, &children, &replicas);
    /* per outer instance; a restriction's children do not visit alike */
    double outer_scale = sched_mask_outer_scale(s, g, st, tn, level);
    double per_outer = fp * spread(s, st, tn, is_output, level - 1, level) * outer_scale;
    double partial = is_output && !partials_live(s, g, st, t, level) ? v.visits - v.distinct : 0;
    /* an online statement's running value, published to readers that
     * take it from the level above */
    bool published = false;
    if (is_output && publishes_through(s, g, st, level)) {
        double executions = stmt_executions(s, st);
        if (executions > v.visits) {
            v.visits = executions;
            published = true;
        }
    }
    double energy = 0;
    double outer_read, outer_written, inner_read, inner_written;
    if (is_output) {
        /* the stores before each tile's last carry partial sums, as do the
         * reloads, at their width */
        double wide = published ? 1 : partial_width(s, st, tn);
        double stores = v.distinct + (v.visits - v.distinct) * wide;
        /* (a restriction can skip some tiles' visits: then each is final) */
        if (v.visits < v.distinct) stores = v.visits;
        outer_written = per_outer * stores;
        outer_read = per_outer * partial * wide;
        inner_read = fp * stores;
        inner_written = fp * partial * wide;
    } else {
        outer_read = per_outer * v.visits;
        outer_written = 0;
        inner_written = fp * v.visits;
        inner_read = 0;
    }
    /* tiles moved: one per visit (and per partial-sum read-back) into or
     * out of each inner instance; the outer instance serves the distinct
     * tiles of its children (replicas share one transfer) */
    double moves = is_output ? v.visits + partial : v.visits;
    double outer_moves = moves * children / replicas * outer_scale;
    account(s, g, outer, outer_read, outer_written, outer_moves, &energy, false);
    account(s, g, inner, inner_read, inner_written, moves, &energy, true);
    SchedNode *n = sched_add_node(s, is_output ? SN_STORE : SN_LOAD, g->id);
    n->stmt = st;
    n->tensor = t;
    n->from_level = is_output ? level : level - 1;
    n->to_level = is_output ? level - 1 : level;
    n->memory = inner ? inner->id : -1;
    n->depth = v.depth;
    n->bytes = fp;
    n->count = v.visits;
    n->position = pos;
    n->phase = is_output ? 4 : 0;
    double t_outer = bw_time(outer, outer_read + outer_written, outer_moves);
    bool streamed = inner && inner->kind == MK_STREAM;
    double t_inner = bw_time(inner, streamed ? 0 : inner_read + inner_written, moves);
    n->latency_s = t_outer > t_inner ? t_outer : t_inner;
    n->energy_j = energy;
    if (s->want_text) {
        n->reason = published ? arena_printf(s->arena,
                                             "%.0f times: after each execution of %s, whose "
                                             "readers take its running value (online)",
                                             v.visits, is->name)
                              : move_reason(s, g, st, tn, level, v, is_output, replicas, partial);
        if (streamed)
            n->reason =
                arena_printf(s->arena, "%s; streams through %s (counted as it %s)", n->reason,
                             inner->name, is_output ? "came from below" : "goes on below");
        if (v.full > v.visits)
            n->reason = arena_printf(
                s->arena,
                "%s; where %s: moved on %.0f of %.0f visits (none for a "
                "tile wholly outside it, nor for the tile the last visit "
                "left)",
                n->reason, ir_pred_text(s->arena, s->op, &s->op->stmts[st].mask), v.visits, v.full);
        if (served > 0)
            n->reason = arena_printf(s->arena,
                                     "%s; %.0f of its %.0f visits find the tile its producer "
                                     "just wrote (the producer runs in the first iteration of "
                                     "the loops it does not use)",
                                     n->reason, served, all_visits);
    }
}

/* Online reductions (docs/cost-model.md 7.3): each time an online
 * statistic r of the group moves on to its next tile of the index n it
 * reduces, what was computed with its old value is corrected.  Statement
 * st pays, per element of its result on the busiest instance and per tile
 * of n after the first (the tiles r walks at the innermost memory level):
 * as r itself, the correction factor (a sum: old / new, 1 op; a max or
 * min: exp(old - new), 1 op and an exp); as an accumulator over n that
 * follows r with exponent k, |k| multiplications.  The work runs on the
 * vector unit (the statement's own unit when the arch has none).  When n
 * is split over cluster dims, each instance runs the reduction on its
 * share and the partial results are corrected once more before they are
 * combined (the max's collective first): one more step. */
static void add_rescale(Schedule *s, SchedGroup *g, int st, int pos) {
    const IrMapping *m = s->m;
    if (!m->online) return;
    const IrStmt *is = &s->op->stmts[st];
    const SchedStmt *ss = &s->stmts[st];
    const IrCompute *unit = ir_vector_unit(s->arch);
    if (!unit) unit = ss->unit;
    double elements = 1;
    for (int i = 0; i < is->lhs_count; i++)
        elements *= ss->extent[sched_li(s, s->levels, is->lhs[i])];
    double ops = 0;
    const char *why = NULL;
    for (int r = 0; r < s->op->stmt_count; r++) {
        if (s->stmts[r].group != g->id || !online_in_group(s, g, r)) continue;
        const IrStmt *rs = &s->op->stmts[r];
        int n = rs->reduced[0];
        double steps = s->stmts[r].count[sched_li(s, s->levels - 1, n)] - 1;
        bool split = false;
        for (int d = 0; d < s->arch->dim_count; d++)
            split |= s->stmts[r].split[d] == n && s->arch->dims[d].size > 1;
        if (split) steps += 1;
        if (!(steps > 0)) continue;
        double per = 0;
        if (r == st)
            per = rs->reduce_op == RO_SUM ? 1 : 1 + ir_fn_cost(unit, intern_cstr("exp"));
        else if (ir_stmt_reduces(is, n))
            per = abs(ir_online_degree(m, st, r));
        if (per <= 0) continue;
        ops += elements * steps * per;
        if (s->want_text)
            why = arena_printf(
                s->arena, "%s%s%s: %.0f elements x %.0f step%s (later tiles of %s%s) x %g op",
                why ? why : "", why ? "; " : "",
                r == st ? "its correction factor" : arena_printf(s->arena, "online %s", rs->name),
                elements, steps, steps == 1 ? "" : "s", s->op->indices[n].name,
                split ? ", and the combine of the split" : "", per);
    }
    if (!(ops > 0) || !unit) return;
    SchedNode *n = sched_add_node(s, SN_COMPUTE, g->id);
    n->stmt = st;
    n->tensor = is->out_tensor;
    n->unit = unit;
    n->rescale = true;
    n->from_level = n->to_level = s->levels - 1;
    n->depth = g->loop_count - 1;
    n->ops = ops;
    n->position = pos;
    n->phase = 2;
    if (why) n->reason = why;
}

/* The dimension of tensor t that statement st splits over cluster dim d
 * as it reads (or writes) it, -1 for none. */
static int tensor_dim_split(const Schedule *s, int st, int t, int d) {
    int ix[IR_MAX_JOINT], n = sched_dim_indices(&s->stmts[st], d, ix);
    for (int k = 0; k < n; k++) {
        int r = ir_stmt_tensor_dim(s->op, &s->op->stmts[st], t, ix[k]);
        if (r >= 0) return r;
    }
    return -1;
}

/* How many of the statement's visits of tensor t at this level find the
 * tile resident, so that it need not load it.  All of them when another
 * statement of the group brought it to the same memory, or the group's
 * producer of the tensor wrote it there, with the same extent and the
 * same loop position, and both run at the same point of the nest (a
 * statement that waits for a loop to close runs after the others have
 * moved on: its tiles are loaded again).  Q, K and V reading one
 * layer-norm output; relu reading the GEMM tile it follows.  Only the
 * producer's visits when the reader also runs loops its producer does
 * not (the producer runs in their first iteration only): there the
 * reader follows the producer tile by tile, and loads in the others. */
static double resident_visits(const Schedule *s, const SchedGroup *g, int st, int t, int level,
                              double *weight) {
    const SchedStmt *ss = &s->stmts[st];
    const IrTensor *tn = &s->op->tensors[t];
    const IrMemory *mem = ir_level_memory(s->arch, level, sched_tensor_role(&s->op->stmts[st], t));
    int wait = g->wait_loop[s->stmts[st].position];
    double mine = sched_visits(s, g, st, tn, level).visits, served = 0;
    *weight = -1; /* served tiles weigh their number of average tiles */
    for (int i = g->first_node; i < s->node_count; i++) {
        const SchedNode *n = &s->nodes[i];
        bool loaded = n->kind == SN_LOAD && n->to_level == level;
        bool written = n->kind == SN_STORE && n->from_level == level && n->stmt == tn->producer;
        if (n->group != g->id || n->tensor != t || n->stmt == st || !(loaded || written)) continue;
        if (!mem || n->memory != mem->id) continue;
        /* a statement that waits for a loop runs after the others moved
         * on, unless the tile stays the same across that loop */
        int other_pos = s->stmts[n->stmt].position;
        int other_wait = g->wait_loop[other_pos];
        bool same_pass =
            other_wait == wait && g->round[other_pos] == g->round[s->stmts[st].position];
        bool later = false;
        int w = other_wait < wait ? other_wait : wait;
        if (!same_pass)
            later = sched_visits(s, g, st, tn, level).depth >= w ||
                    sched_visits(s, g, n->stmt, tn, level).depth >= w;
        /* under a restriction a row of the waited loop may hold a single
         * tile: the reader's pass then starts on the tile the producer's
         * pass ended on (docs/cost-model.md 3.1) */
        if (later && !(written && ss->mask && s->stmts[n->stmt].mask)) continue;
        const SchedStmt *other = &s->stmts[n->stmt];
        bool same = true;
        for (int r = 0; r < tn->rank && same; r++)
            for (int l = 0; l <= level && same; l++)
                same = other->tile[sched_li(s, l, sched_access_index(s, n->stmt, t, r))] ==
                       ss->tile[sched_li(s, l, sched_access_index(s, st, t, r))];
        /* ... and each instance's tile is the same part of the tensor:
         * both split each of its dimensions over the same cluster dims
         * (Q and K of one input split alike; not t1 over ya and t2 over
         * xa, where most instances need another column) */
        for (int d = 0; d < s->arch->dim_count && same; d++) {
            if (s->arch->dims[d].size <= 1 || !sched_dim_outside(s, d, level)) continue;
            same = tensor_dim_split(s, n->stmt, t, d) == tensor_dim_split(s, st, t, d);
        }
        if (!same) continue;
        if (later) {
            double tiles, single = sched_mask_single_rows(s, g, st, t, level, w, &tiles);
            if (single > served) {
                served = single;
                *weight = tiles;
            }
            continue;
        }
        double theirs = sched_visits(s, g, n->stmt, tn, level).visits;
        if (theirs == mine) return mine;
        if (written && theirs < mine && sched_visits_over(s, g, st, t, level, n->stmt) == theirs &&
            theirs > served)
            served = theirs;
    }
    return served;
}

/* A statement whose in-group inputs are complete only when a loop closes
 * (a reduction over a tiled index, or partial sums of a loop outside the
 * result's) runs after that loop, over the tiles held at the fusion level:
 * its nodes follow the loop in the listing.  Counts and bytes do not
 * change; the tiles the wait keeps live are counted by the tiles pass. */
static void defer_waiting(Schedule *s, const SchedGroup *g, int pos, int first) {
    int w = g->wait_loop[pos];
    if (w >= g->loop_count) return;
    for (int i = first; i < s->node_count; i++) {
        SchedNode *n = &s->nodes[i];
        if (n->depth < w) continue;
        n->depth = w - 1;
        n->after_inner = true;
    }
}

void pass_reuse(Schedule *s) {
    const IrOp *op = s->op;
    for (int gi = 0; gi < s->group_count; gi++) {
        SchedGroup *g = &s->groups[gi];
        g->mem_bytes = ARENA_ARRAY(s->arena, double, s->arch->memory_count);
        g->mem_transfers = ARENA_ARRAY(s->arena, double, s->arch->memory_count);
        g->level_s = ARENA_ARRAY(s->arena, double, s->levels);
        g->first_node = s->node_count;
        if (!sched_group_costed(s, g)) continue;
        for (int pos = 0; pos < g->stmt_count; pos++) {
            int st = g->stmts[pos];
            const IrStmt *is = &op->stmts[st];
            int first = s->node_count;
            for (int q = 0; q < is->input_count; q++) {
                int t = is->inputs[q];
                bool internal = s->tensor_group[t] == gi;
                for (int l = 1; l < s->levels; l++) {
                    if (internal && l <= g->level) continue;
                    double weight, served = resident_visits(s, g, st, t, l, &weight);
                    if (served < sched_visits(s, g, st, &op->tensors[t], l).visits)
                        move_tensor(s, g, pos, st, t, false, l, served, weight);
                }
            }
            compute_node(s, g, pos, st);
            add_rescale(s, g, st, pos);
            int y = is->out_tensor;
            for (int l = s->levels - 1; l >= 1; l--)
                if (s->tensor_crosses[y] || l > g->level)
                    move_tensor(s, g, pos, st, y, true, l, 0, -1);
            defer_waiting(s, g, pos, first);
        }
    }
}
