/* tiles.c — tile footprints and capacity.  The tile of index i at level l
 * is the one the mapping gives (capped by what one instance holds), else
 * the tile of level l - 1 shared out over the dims between the two levels
 * that split i.  Loops at level l walk the level-l tiles inside one tile
 * of level l - 1: trips = tile(l-1) / (split between * tile(l)).  Every
 * memory of every level must hold the tiles of the tensors a group keeps
 * there (each tensor once per memory, at its role). */
#include "passes/passes.h"

#include <math.h>

/* Is tensor t produced inside group g and kept at its fusion level? */
static bool internal_to_group(const Schedule *s, int t, int g) {
    return s->tensor_group[t] == g;
}

/* Does statement st of group g read tensor t together with a tensor that a
 * statement of the group made by reducing index i of t? */
static bool read_after_reduction(const Schedule *s, const SchedGroup *g, int st, int t, int i) {
    const IrStmt *is = &s->op->stmts[st];
    for (int q = 0; q < is->input_count; q++) {
        int y = is->inputs[q];
        if (y == t || s->tensor_group[y] != g->id) continue;
        const IrStmt *prod = &s->op->stmts[s->op->tensors[y].producer];
        for (int r = 0; r < prod->reduced_count; r++)
            if (prod->reduced[r] == i) return true;
    }
    return false;
}

static void add_footprint(Schedule *s, SchedGroup *g, int memory, int tensor, double bytes,
                          int *cap) {
    for (int k = 0; k < g->footprint_count; k++) {
        Footprint *f = &g->footprints[k];
        if (f->memory == memory && f->tensor == tensor) {
            if (bytes > f->bytes) f->bytes = bytes;
            return;
        }
    }
    if (g->footprint_count == *cap) {
        int ncap = *cap ? *cap * 2 : 16;
        g->footprints = arena_realloc(s->arena, g->footprints, sizeof(Footprint) * (size_t)*cap,
                                      sizeof(Footprint) * (size_t)ncap);
        *cap = ncap;
    }
    g->footprints[g->footprint_count++] = (Footprint){memory, tensor, bytes};
}

static Span capacity_span(const Schedule *s, const SchedGroup *g, int level) {
    const IrMapping *m = s->m;
    int I = s->op->index_count;
    if (m->tile.span)
        for (int i = 0; i < I; i++)
            if (m->tile.size[level * I + i] >= 1 && m->tile.span[level * I + i].file >= 0)
                return m->tile.span[level * I + i];
    if (g->fused && m->fuse.span) {
        int fg = m->fuse.group[g->stmts[0]];
        if (fg >= 0 && m->fuse.span[fg].file >= 0) return m->fuse.span[fg];
    }
    return m->decl ? m->decl->span : SPAN_NONE;
}

static void add_excess(Schedule *s, int group, int memory, double need, double capacity,
                       Span span) {
    if (s->excess_count == s->excess_cap) {
        int ncap = s->excess_cap ? s->excess_cap * 2 : 8;
        s->excess =
            arena_realloc(s->arena, s->excess, sizeof(CapacityExcess) * (size_t)s->excess_cap,
                          sizeof(CapacityExcess) * (size_t)ncap);
        s->excess_cap = ncap;
    }
    s->excess[s->excess_count++] = (CapacityExcess){group, memory, need, capacity, span};
}

void pass_tiles(Schedule *s) {
    const IrOp *op = s->op;
    const IrMapping *m = s->m;
    int I = op->index_count;
    for (int st = 0; st < op->stmt_count; st++) {
        SchedStmt *ss = &s->stmts[st];
        for (int i = 0; i < I; i++) {
            ss->tile[sched_li(s, 0, i)] = ss->extent[sched_li(s, 0, i)];
            ss->tile_prov[sched_li(s, 0, i)] = PV_DERIVED;
        }
        for (int l = 1; l <= s->levels; l++)
            for (int i = 0; i < I; i++) {
                double p = sched_split_between(s, ss, l - 1, l, i);
                double share = ss->tile[sched_li(s, l - 1, i)] / p;
                if (share < 1) share = 1;
                double t = share;
                Provenance pv = PV_DEFAULT;
                int64_t given =
                    (l < s->levels && m->tile.size) ? m->tile.size[l * I + i] : IR_UNSET;
                if (given >= 1) {
                    t = (double)given < share ? (double)given : share;
                    pv = PV_GIVEN;
                } else if (l == s->levels) {
                    pv = PV_DERIVED;
                }
                ss->tile[sched_li(s, l, i)] = t;
                ss->tile_prov[sched_li(s, l, i)] = pv;
                ss->trips[sched_li(s, l, i)] = ceil(share / t);
            }
    }
    /* footprints and capacity, group by group */
    for (int g = 0; g < s->group_count; g++) {
        SchedGroup *grp = &s->groups[g];
        int cap = 0;
        for (int l = 0; l < s->levels; l++) {
            for (int k = 0; k < grp->stmt_count; k++) {
                int st = grp->stmts[k];
                const IrStmt *is = &op->stmts[st];
                const SchedStmt *ss = &s->stmts[st];
                int tensors[IR_MAX_OPERANDS + 1];
                int tc = 0;
                tensors[tc++] = is->out_tensor;
                for (int q = 0; q < is->input_count; q++) tensors[tc++] = is->inputs[q];
                for (int q = 0; q < tc; q++) {
                    int t = tensors[q];
                    /* a tensor made and used inside the group never goes
                     * above the fusion level */
                    bool internal = internal_to_group(s, t, g);
                    bool leaves = s->tensor_crosses[t] && t == is->out_tensor;
                    if (internal && !leaves && l < grp->level) continue;
                    const IrTensor *tn = &op->tensors[t];
                    double bytes = sched_elem_bytes(tn);
                    for (int r = 0; r < tn->rank; r++) {
                        int i = tn->index[r];
                        /* a tensor read together with a reduction over one of
                         * its indices (softmax: e reads C and the max of C)
                         * waits at the fusion level for the whole reduction */
                        bool whole = internal && l == grp->level && t != is->out_tensor &&
                                     read_after_reduction(s, grp, st, t, i);
                        bytes *=
                            whole ? ss->extent[sched_li(s, l, i)] : ss->tile[sched_li(s, l, i)];
                    }
                    const IrMemory *mem = ir_level_memory(s->arch, l, sched_tensor_role(is, t));
                    if (mem) add_footprint(s, grp, mem->id, t, bytes, &cap);
                }
            }
        }
        const IrArch *arch = s->arch;
        for (int mi = 0; mi < arch->memory_count; mi++) {
            const IrMemory *mem = &arch->memories[mi];
            if (!isfinite(mem->capacity) || mem->capacity <= 0) continue;
            double need = 0;
            for (int k = 0; k < grp->footprint_count; k++)
                if (grp->footprints[k].memory == mi) need += grp->footprints[k].bytes;
            if (need > mem->capacity)
                add_excess(s, g, mi, need, mem->capacity, capacity_span(s, grp, mem->level));
        }
    }
}
