/* tiles.c — tile footprints and capacity.  The tile of index i at level l
 * is the one the mapping gives (capped by what one instance holds), else
 * the tile of level l - 1 shared out over the dims between the two levels
 * that split i.  Loops at level l walk the level-l tiles inside one tile
 * of level l - 1: trips = tile(l-1) / (split between * tile(l)).  Every
 * memory of every level must hold the tiles of the tensors a group keeps
 * there (each tensor once per memory, at its role). */
#include "passes/passes.h"

#include <math.h>
#include <string.h>

/* Every memory of level l streams what the level above gives it. */
static bool level_streams(const Schedule *s, int l) {
    const IrLevel *lv = &s->arch->levels[l];
    for (int k = 0; k < lv->memory_count; k++)
        if (s->arch->memories[lv->first_memory + k].kind != MK_STREAM) return false;
    return lv->memory_count > 0;
}

/* Is tensor t produced inside group g and kept at its fusion level? */
static bool internal_to_group(const Schedule *s, int t, int g) {
    return s->tensor_group[t] == g;
}

/* The group's loop nest: the loops of every level, outermost level first,
 * each level in its statements' `order` (one order: the checker and the
 * optimizer keep a group's statements to one, E0333; else index order); a
 * loop takes the largest trip count of the statements that use its index. */
static void build_loops(Schedule *s, SchedGroup *g) {
    const IrOp *op = s->op;
    const IrMapping *m = s->m;
    int I = op->index_count;
    int L = s->levels + 1;
    g->order = ARENA_ARRAY(s->arena, int, L *I);
    g->order_len = ARENA_ARRAY(s->arena, int, L);
    g->order_prov = ARENA_ARRAY(s->arena, Provenance, L);
    g->loops = ARENA_ARRAY(s->arena, SchedLoop, L * I);
    g->loop_count = 0;
    for (int l = 1; l <= s->levels; l++) {
        bool *used = ARENA_ARRAY(s->arena, bool, I);
        int n = 0;
        int slot = l < s->levels ? ir_order_slot(m, g->stmts[0], l) : 0;
        int given = l < s->levels ? m->order.length[slot] : 0;
        g->order_prov[l] = given > 0 && m->order.chosen && m->order.chosen[slot] ? PV_DERIVED
                           : given > 0                                           ? PV_GIVEN
                                                                                 : PV_DEFAULT;
        for (int k = 0; k < given; k++) {
            int i = m->order.perm[slot * I + k];
            if (i >= 0 && i < I && !used[i]) {
                used[i] = true;
                g->order[l * I + n++] = i;
            }
        }
        for (int i = 0; i < I; i++)
            if (!used[i]) g->order[l * I + n++] = i;
        g->order_len[l] = n;
        for (int k = 0; k < n; k++) {
            int i = g->order[l * I + k];
            double trips = 1, step = 1, extent = 1;
            for (int q = 0; q < g->stmt_count; q++) {
                int st = g->stmts[q];
                if (!ir_stmt_uses_index(&op->stmts[st], i)) continue;
                const SchedStmt *ss = &s->stmts[st];
                if (ss->trips[sched_li(s, l, i)] > trips) {
                    trips = ss->trips[sched_li(s, l, i)];
                    step = ss->tile[sched_li(s, l, i)];
                    /* the busiest instance's range: its share of a split
                     * (ceil, in whole tiles), else the tile above */
                    extent = ss->tile[sched_li(s, l - 1, i)];
                    if (sched_split_between(s, ss, l - 1, l, i) > 1 &&
                        ss->extent[sched_li(s, l, i)] < extent)
                        extent = ss->extent[sched_li(s, l, i)];
                }
            }
            if (trips > 1)
                g->loops[g->loop_count++] =
                    (SchedLoop){l, i, trips, step, extent, g->order_prov[l]};
        }
    }
    /* the outermost tiling: level 1's loops, or the next level's when
     * level 1 is a stream level the group does not tile (a cache that
     * tiles pass through: the level below sets the pipeline, as it would
     * without the cache) */
    g->pipe_level = 1;
    while (g->pipe_level + 1 < s->levels && level_streams(s, g->pipe_level)) {
        bool tiled = false;
        for (int k = 0; k < g->loop_count; k++)
            if (g->loops[k].level == g->pipe_level) tiled = true;
        if (tiled) break;
        g->pipe_level++;
    }
    g->tiles = 1;
    g->first_share = 1;
    for (int k = 0; k < g->loop_count; k++)
        if (g->loops[k].level == g->pipe_level) {
            g->tiles *= g->loops[k].trips;
            double share = g->loops[k].extent > 0 ? g->loops[k].step / g->loops[k].extent : 1;
            g->first_share *= share < 1 ? share : 1;
        }
}

static void add_footprint(Schedule *s, SchedGroup *g, Footprint fp, int *cap) {
    for (int k = 0; k < g->footprint_count; k++) {
        Footprint *f = &g->footprints[k];
        if (f->memory == fp.memory && f->tensor == fp.tensor &&
            (f->reader < 0) == (fp.reader < 0)) {
            double refills = fp.refills > f->refills ? fp.refills : f->refills;
            if (fp.bytes > f->bytes) *f = fp;
            f->refills = refills;
            return;
        }
    }
    if (g->footprint_count == *cap) {
        int ncap = *cap ? *cap * 2 : 16;
        g->footprints = arena_realloc(s->arena, g->footprints, sizeof(Footprint) * (size_t)*cap,
                                      sizeof(Footprint) * (size_t)ncap);
        *cap = ncap;
    }
    g->footprints[g->footprint_count++] = fp;
}

/* Double buffering (docs/cost-model.md section 2): memory `mi` holds a
 * second tile of what group g refills, so that the next one moves while
 * this one is used, as far as it has room beside the single-buffered need:
 * the most often refilled tiles first (each spare byte saves the most
 * waiting there), the smaller first among equals.  What finds no room is
 * exposed.  `room` is the capacity left (infinite without a capacity). */
static void assign_spare_tiles(SchedGroup *g, int mi, double room) {
    for (;;) {
        Footprint *best = NULL;
        for (int k = 0; k < g->footprint_count; k++) {
            Footprint *f = &g->footprints[k];
            if (f->memory != mi || f->refills <= 0 || f->spare_tiles > 0 || f->exposed) continue;
            double tile = footprint_tile_bytes(f),
                   best_tile = best ? footprint_tile_bytes(best) : 0;
            if (!best || f->refills > best->refills ||
                (f->refills == best->refills && tile < best_tile))
                best = f;
        }
        if (!best) return;
        double tile = footprint_tile_bytes(best);
        if (tile <= room) {
            best->spare_tiles = 1;
            best->bytes += tile;
            room -= tile;
        } else {
            best->exposed = true;
        }
    }
}

/* Whether a reader sees an in-group tensor otherwise than its maker left
 * it: another index on a dimension, or another split along a cluster dim
 * (a relayout delivers it).  It then holds its own copy beside the
 * maker's tiles. */
static bool reader_view_differs(const Schedule *s, int reader, int tensor) {
    const IrTensor *tn = &s->op->tensors[tensor];
    int maker = tn->producer;
    for (int r = 0; r < tn->rank; r++)
        if (sched_access_index(s, reader, tensor, r) != sched_access_index(s, maker, tensor, r))
            return true;
    for (int d = 0; d < s->arch->dim_count; d++) {
        if (s->arch->dims[d].size <= 1) continue;
        int ms = s->stmts[maker].split[d], rs = s->stmts[reader].split[d];
        int md = ms >= 0 ? ir_stmt_tensor_dim(s->op, &s->op->stmts[maker], tensor, ms) : -1;
        int rd = rs >= 0 ? ir_stmt_tensor_dim(s->op, &s->op->stmts[reader], tensor, rs) : -1;
        if (md != rd) return true;
    }
    return false;
}

/* A result whose reduced index is split over cluster dims is complete only
 * once its collective has combined the partial results: once per
 * fusion-level tile (docs/cost-model.md section 4), after the loops the
 * statement runs inside that tile.  The position of the outermost such
 * loop, or loop_count when nothing is combined or nothing runs inside. */
static int combined_after(const Schedule *s, const SchedGroup *g, int st, int first_reduced) {
    bool partial = false;
    for (int d = 0; d < s->arch->dim_count; d++)
        if (s->stmts[st].out_layout[d].kind == LAY_PARTIAL && s->arch->dims[d].size > 1)
            partial = true;
    if (!partial) return g->loop_count;
    int depth;
    sched_tiles_completed(s, g, st, s->op->stmts[st].out_tensor, g->level, first_reduced, &depth);
    return sched_next_loop(s, g, st, depth);
}

/* A reader that names a dimension of an in-group tensor with another
 * index than its maker (`t2[n,k]` made, read as `t2[j,k]`), or splits it
 * over a cluster dim above the maker's loop over it that the maker does
 * not split it over (the maker walks all of n, each reader instance its
 * share from an offset), walks that
 * dimension out of step with the maker: it may need any of its tiles, so
 * it waits until the maker's outermost loop over that index has closed
 * (and every tile along the dimension stays live until then).  The
 * position of that loop, or loop_count. */
static int renamed_dim_loop(const Schedule *s, const SchedGroup *g, int reader, int tensor) {
    const IrTensor *tn = &s->op->tensors[tensor];
    int maker = tn->producer;
    int first = g->loop_count;
    for (int r = 0; r < tn->rank; r++) {
        int made = sched_access_index(s, maker, tensor, r);
        int read = sched_access_index(s, reader, tensor, r);
        for (int q = 0; q < first; q++) {
            const SchedLoop *lp = &g->loops[q];
            if (lp->index != made || s->stmts[maker].trips[sched_li(s, lp->level, made)] <= 1)
                continue;
            /* out of step: another index, or a split of the dimension
             * above the loop that the maker does not share (each reader
             * instance walks its share from an offset the maker reaches
             * later; a maker walking its share for a reader that walks
             * the whole is always ahead of it) */
            bool differs = read != made;
            for (int d = 0; d < s->arch->dim_count && !differs; d++)
                if (s->arch->dims[d].size > 1 && sched_dim_outside(s, d, lp->level))
                    differs = s->stmts[reader].split[d] == read && s->stmts[maker].split[d] != made;
            if (!differs) continue;
            first = q;
            break;
        }
    }
    return first;
}

/* For each statement of the group (by position), the loop it waits for:
 * an in-group input is complete only when its producer's outermost
 * reduced loop has closed, and after whatever its producer waited for.
 * Producers come before consumers, so one pass in group order does. */
static void compute_waits(Schedule *s, SchedGroup *g) {
    g->wait_loop = ARENA_ARRAY(s->arena, int, g->stmt_count);
    g->round = ARENA_ARRAY(s->arena, int, g->stmt_count);
    int *done = ARENA_ARRAY(s->arena, int, g->stmt_count);
    int *own_done = ARENA_ARRAY(s->arena, int, g->stmt_count);
    for (int k = 0; k < g->stmt_count; k++) {
        const IrStmt *is = &s->op->stmts[g->stmts[k]];
        int wait = g->loop_count;
        for (int q = 0; q < is->input_count; q++) {
            int y = is->inputs[q];
            if (s->tensor_group[y] != g->id) continue;
            int j = s->stmts[s->op->tensors[y].producer].position;
            int renamed = renamed_dim_loop(s, g, g->stmts[k], y);
            if (renamed < wait) wait = renamed;
            /* an online maker's readers take its running value: they wait
             * only for what the maker itself waited for */
            bool running = s->m->online && s->m->online[g->stmts[j]];
            int maker_done = running ? g->wait_loop[j] : done[j];
            if (maker_done < wait) wait = maker_done;
            /* a pass after its maker's when the maker's reduction closes
             * a loop, or when it walks a dimension out of step with the
             * maker (it needs the maker's whole loop, done in its pass) */
            bool closes = !running && own_done[j] < g->loop_count;
            int r = g->round[j] + (closes || renamed < g->loop_count);
            if (r > g->round[k]) g->round[k] = r;
        }
        g->wait_loop[k] = wait;
        int own = sched_first_reduced_loop(s, g, g->stmts[k]);
        int combined = combined_after(s, g, g->stmts[k], own);
        if (combined < own) own = combined;
        own_done[k] = own;
        done[k] = own < wait ? own : wait;
    }
}

/* How many fusion-level tiles of tensor t (made by the statement at
 * position k of the group) are live at once, and across which loop: every
 * tile that a loop at or outside the fusion level enumerates inside the
 * outermost loop the tile must survive — its own reduced loop (partial
 * sums, unless they are written back because t leaves the group) or the
 * loop an in-group reader waits for. */
static double live_tiles(const Schedule *s, const SchedGroup *g, int k, int *live_loop,
                         int *waiter) {
    int st = g->stmts[k];
    int t = s->op->stmts[st].out_tensor;
    int w = s->tensor_crosses[t] ? g->loop_count : sched_first_reduced_loop(s, g, st);
    *waiter = -1;
    for (int j = k + 1; j < g->stmt_count; j++) {
        const IrStmt *rs = &s->op->stmts[g->stmts[j]];
        bool reads = false;
        for (int q = 0; q < rs->input_count; q++) reads |= rs->inputs[q] == t;
        if (!reads) continue;
        if (g->wait_loop[j] < w) {
            w = g->wait_loop[j];
            *waiter = g->stmts[j];
        }
        /* a loop the reader runs and the maker does not: the maker ran in
         * its first iteration only, so its tiles serve every iteration */
        for (int q = 0; q < w; q++) {
            const SchedLoop *lp = &g->loops[q];
            if (lp->level > g->level || ir_stmt_uses_index(&s->op->stmts[st], lp->index) ||
                s->stmts[g->stmts[j]].trips[sched_li(s, lp->level, lp->index)] <= 1 ||
                !ir_stmt_uses_index(rs, lp->index))
                continue;
            w = q;
            *waiter = g->stmts[j];
            break;
        }
    }
    double tiles = 1;
    *live_loop = -1;
    for (int q = w; q < g->loop_count; q++) {
        const SchedLoop *lp = &g->loops[q];
        if (lp->level > g->level || !sched_access_has_index(s, st, t, lp->index)) continue;
        double trips = s->stmts[st].trips[sched_li(s, lp->level, lp->index)];
        if (trips <= 1) continue;
        tiles *= trips;
        *live_loop = w;
    }
    if (tiles <= 1) *waiter = -1;
    return tiles;
}

/* How many fusion-level tiles of its own copy of tensor t a reader that
 * sees it in another layout keeps: it receives each tile once (the
 * relayout runs once per tile it takes, docs/cost-model.md section 4), so
 * when a loop over an index it runs but does not read t with encloses its
 * loops over t's indices, it reads every tile again in each iteration of
 * that loop and must keep them all. */
static double reader_copy_tiles(const Schedule *s, const SchedGroup *g, int reader, int t,
                                int *live_loop) {
    const IrStmt *rs = &s->op->stmts[reader];
    const SchedStmt *ss = &s->stmts[reader];
    *live_loop = -1;
    for (int q0 = 0; q0 < g->loop_count; q0++) {
        const SchedLoop *outer = &g->loops[q0];
        if (outer->level > g->level || !ir_stmt_uses_index(rs, outer->index) ||
            sched_access_has_index(s, reader, t, outer->index) ||
            ss->trips[sched_li(s, outer->level, outer->index)] <= 1)
            continue;
        double tiles = 1;
        for (int q = q0 + 1; q < g->loop_count; q++) {
            const SchedLoop *lp = &g->loops[q];
            if (lp->level > g->level || !sched_access_has_index(s, reader, t, lp->index)) continue;
            double trips = ss->trips[sched_li(s, lp->level, lp->index)];
            if (trips > 1) tiles *= trips;
        }
        if (tiles > 1) *live_loop = q0;
        return tiles;
    }
    return 1;
}

static Span capacity_span(const Schedule *s, const SchedGroup *g, int level) {
    const IrMapping *m = s->m;
    int I = s->op->index_count;
    for (int q = 0; q < g->stmt_count; q++)
        for (int i = 0; i < I; i++) {
            int k = ir_tile_slot(m, g->stmts[q], level, i);
            if (m->tile.size[k] >= 1 && m->tile.span[k].file >= 0) return m->tile.span[k];
        }
    if (g->fused && m->fuse.span) {
        int fg = m->fuse.group[g->stmts[0]];
        if (fg >= 0 && m->fuse.span[fg].file >= 0) return m->fuse.span[fg];
    }
    return m->span;
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

/* Adds `count` tiles of `size` to a class list, merging equal sizes. */
static void add_class(SchedClass *cl, int *n, int cap, double size, double count) {
    if (size <= 0 || count <= 0) return;
    for (int k = 0; k < *n; k++)
        if (cl[k].size == size) {
            cl[k].count += count;
            return;
        }
    if (*n < cap) cl[(*n)++] = (SchedClass){size, count};
}

/* A partial level-(l-1) tile of index i (`size` elements) under a joint
 * deal: its cells with the other index's full tile are dealt in runs of
 * q' = ceil(cells' / P), and the busiest instance keeps the other index's
 * share of the full tile (the walk's tiles are per index), so index i
 * takes q' cells' worth beside it, a fraction of a block allowed: the
 * work of the partial tile's busiest run exactly (cost-model.md 1.2). */
static double joint_partial(const Schedule *s, const SchedStmt *ss, int l, int i, double size,
                            const double *parts, const double *block, const double *share,
                            const int *other) {
    int o = other[i];
    double other_len = ss->tile[sched_li(s, l - 1, o)];
    double cells = ceil(size / block[i]) * ceil(other_len / block[o]);
    double run = ceil(cells / parts[i]);
    double other_blocks = share[o] / block[o];
    if (!(other_blocks > 0)) return size;
    return fmin(size, run / other_blocks * block[i]);
}

/* The tiles of every index of statement st, level by level, for the
 * busiest instance (docs/cost-model.md sections 1.1 and 2).  The dims
 * between levels l-1 and l deal each level-(l-1) tile out in whole blocks
 * of the index's given tile at l (one element when l has none): the
 * busiest instance gets sched_deal() of it.  The tile at l is the given
 * one (at most that share), else the share; trips = ceil(share / tile).
 * Beside the full tiles, the walk follows every partial one (the last
 * tile of a range that the tile does not divide, and the shares of
 * partial tiles dealt out below): `count` is how many level-l tiles the
 * busiest instance walks, `extent` how many elements they hold, and the
 * compute tiles are kept by size for the compute time.  Work is the
 * busiest instance's real points; total_work every instance's. */
static void walk_tiles(Schedule *s, int st) {
    const IrOp *op = s->op;
    const IrMapping *m = s->m;
    int I = op->index_count;
    SchedStmt *ss = &s->stmts[st];
    const IrStmt *is = &op->stmts[st];
    int cap = s->levels + 2;
    ss->count = ARENA_ARRAY(s->arena, double, (s->levels + 1) * I);
    ss->class_cap = cap;
    ss->classes = ARENA_ARRAY(s->arena, SchedClass, I * cap);
    ss->class_count = ARENA_ARRAY(s->arena, int, I);
    /* each index's tiles by size at the level above, and at this one */
    SchedClass *cur = ARENA_ARRAY(s->arena, SchedClass, I * cap);
    SchedClass *next = ARENA_ARRAY(s->arena, SchedClass, I * cap);
    int *ncur = ARENA_ARRAY(s->arena, int, I);
    double *joint_share = ARENA_ARRAY(s->arena, double, I);
    /* per index under a joint deal at this level: the deal's instances,
     * its other index and its block */
    double *joint_parts = ARENA_ARRAY(s->arena, double, I);
    double *joint_block = ARENA_ARRAY(s->arena, double, I);
    int *joint_other = ARENA_ARRAY(s->arena, int, I);
    /* the dims outside the outermost memory deal the whole index out
     * element by element: level 0 of each instance holds its share (no
     * joint deal lies there: check_mapping.c) */
    for (int i = 0; i < I; i++) {
        double p0 = 1;
        for (int d = 0; d < s->arch->dim_count; d++)
            if (ss->split[d] == i && sched_dim_outside(s, d, 0))
                p0 *= (double)s->arch->dims[d].size;
        double e = sched_deal((double)op->indices[i].extent, p0, 1);
        ss->tile[sched_li(s, 0, i)] = e;
        ss->tile_prov[sched_li(s, 0, i)] = PV_DERIVED;
        ss->extent[sched_li(s, 0, i)] = e;
        ss->count[sched_li(s, 0, i)] = 1;
        ncur[i] = 0;
        add_class(cur + i * cap, &ncur[i], cap, e, 1);
    }
    for (int l = 1; l <= s->levels; l++) {
        /* the dims between l-1 and l that deal indices jointly: the
         * busiest instance's rectangle of blocks (section 1.2) */
        for (int i = 0; i < I; i++) joint_share[i] = -1;
        for (int d = 0; d < s->arch->dim_count; d++) {
            if (ss->joint[d][0] < 0 || !sched_dim_between(s, d, l - 1, l)) continue;
            int ix[IR_MAX_JOINT], n = sched_dim_indices(ss, d, ix);
            if (joint_share[ix[0]] >= 0) continue; /* dealt with an earlier dim of its line */
            /* the line's dims deal together: (m, n) -> (x, y) */
            double parts = sched_joint_parts(s, ss, d, l - 1, l);
            double len[IR_MAX_JOINT], block[IR_MAX_JOINT], share[IR_MAX_JOINT];
            for (int k = 0; k < n; k++) {
                len[k] = ss->tile[sched_li(s, l - 1, ix[k])];
                block[k] = sched_deal_block(s, st, l, ix[k]);
            }
            sched_joint_deal(n, len, block, parts, share);
            for (int k = 0; k < n; k++) {
                joint_share[ix[k]] = share[k];
                joint_parts[ix[k]] = parts;
                joint_block[ix[k]] = block[k];
                joint_other[ix[k]] = ix[1 - k];
            }
        }
        for (int i = 0; i < I; i++) {
            double p = sched_split_between(s, ss, l - 1, l, i);
            int64_t given = l < s->levels ? m->tile.size[ir_tile_slot(m, st, l, i)] : IR_UNSET;
            double block = given >= 1 ? (double)given : 1;
            double above = ss->tile[sched_li(s, l - 1, i)];
            double share = joint_share[i] >= 0 ? joint_share[i] : sched_deal(above, p, block);
            if (share < 1) share = 1;
            double t = share;
            Provenance pv = PV_DEFAULT;
            if (given >= 1) {
                t = (double)given < share ? (double)given : share;
                pv = PV_GIVEN;
            } else if (l == s->levels) {
                pv = PV_DERIVED;
            }
            ss->tile[sched_li(s, l, i)] = t;
            ss->tile_prov[sched_li(s, l, i)] = pv;
            ss->trips[sched_li(s, l, i)] = ceil(share / t);
            SchedClass *c = cur + i * cap, *x = next + i * cap;
            int nn = 0;
            for (int k = 0; k < ncur[i]; k++) {
                /* a jointly dealt partial tile: the busiest instance's
                 * fraction of the full one, in whole blocks */
                double sh = joint_share[i] < 0 ? sched_deal(c[k].size, p, block)
                            : c[k].size >= above
                                ? share
                                : joint_partial(s, ss, l, i, c[k].size, joint_parts, joint_block,
                                                joint_share, joint_other);
                double whole = floor(sh / t);
                add_class(x, &nn, cap, t, c[k].count * whole);
                add_class(x, &nn, cap, sh - whole * t, c[k].count);
            }
            ncur[i] = nn;
            double tiles = 0, elems = 0;
            for (int k = 0; k < nn; k++) {
                tiles += x[k].count;
                elems += x[k].size * x[k].count;
            }
            ss->count[sched_li(s, l, i)] = tiles;
            ss->extent[sched_li(s, l, i)] = elems;
        }
        SchedClass *tmp = cur;
        cur = next;
        next = tmp;
    }
    for (int i = 0; i < I; i++) {
        ss->class_count[i] = ncur[i];
        for (int k = 0; k < ncur[i]; k++) ss->classes[i * cap + k] = cur[i * cap + k];
    }
    int idx[2 * IR_MAX_RANK];
    int n = ir_stmt_indices(is, idx);
    double points = 1, all = 1, split = 1;
    for (int k = 0; k < n; k++) {
        points *= ss->extent[sched_li(s, s->levels, idx[k])];
        all *= (double)op->indices[idx[k]].extent;
    }
    for (int d = 0; d < s->arch->dim_count; d++)
        if (ss->split[d] >= 0) split *= (double)s->arch->dims[d].size;
    double per_point = stmt_ops_per_point(is, ss->unit);
    ss->work = points * per_point;
    /* every instance along a dim that splits none of its indices repeats it */
    ss->total_work = all * per_point * ((double)s->total_instances / split);
    /* a restriction (`where`): only the compute tiles that meet the
     * allowed region run, each in full (docs/cost-model.md section 3.1) */
    ss->mask = sched_mask_build(s, st);
    if (ss->mask) {
        const SchedMask *mk = ss->mask;
        double xy =
            ss->extent[sched_li(s, s->levels, mk->x)] * ss->extent[sched_li(s, s->levels, mk->y)];
        if (xy > 0) ss->work = points / xy * mk->visited_points * per_point;
        ss->total_work *= mk->every_visited / mk->every_points;
    }
}

/* The maker's footprint of tensor t in memory mi, or NULL. */
static Footprint *maker_footprint(SchedGroup *g, int mi, int t) {
    for (int k = 0; k < g->footprint_count; k++)
        if (g->footprints[k].memory == mi && g->footprints[k].tensor == t &&
            g->footprints[k].reader < 0)
            return &g->footprints[k];
    return NULL;
}

/* The storage footprint f lives in: its own tile, or its host's storage
 * when that is larger (a chain shares the largest of its tiles).  `depth`
 * bounds the walk: a chain is at most as long as the group. */
static double in_place_storage(SchedGroup *g, const Footprint *f, int depth) {
    double own = f->bytes;
    if (f->host < 0 || depth <= 0) return own;
    const Footprint *h = maker_footprint(g, f->memory, f->host);
    double below = h ? in_place_storage(g, h, depth - 1) : 0;
    return below > own ? below : own;
}

/* Whether statement st reads input q point for point: the input has the
 * result's indices in the result's order, so element x of the result is
 * made from element x of the input alone. */
static bool reads_pointwise(const IrOp *op, const IrStmt *is, int q) {
    if (is->cls != SC_VECTOR || is->reduce_op != RO_NONE) return false;
    if (op->tensors[is->inputs[q]].rank != is->lhs_count) return false;
    for (int r = 0; r < is->lhs_count; r++)
        if (is->access[q][r] != is->lhs[r]) return false;
    return true;
}

/* In place (docs/cost-model.md section 2): an element-wise statement of
 * the group whose input is a tile the group made, of the result's shape,
 * that no later statement of the group reads, writes its result over that
 * input (a compiler gives the dead tile's registers to the result:
 * FlashAttention's exp and its conversion to bf16 overwrite the scores).
 * The result then takes only what it holds beyond its host's storage; a
 * chain (C, then e over C, then P over e) shares one storage, the largest
 * of its tiles.  Tiles share tile for tile: both must be held as as many
 * live tiles across the same loop (a softmax's scores and exponentials,
 * both live along the row), neither read in another layout, and neither
 * may leave the group. */
static void share_in_place(Schedule *s, SchedGroup *grp, int g) {
    /* the outermost level holds a group's tensors whole */
    if (grp->level < 1) return;
    const IrOp *op = s->op;
    for (int k = 0; k < grp->stmt_count; k++) {
        int st = grp->stmts[k];
        const IrStmt *is = &op->stmts[st];
        int out = is->out_tensor;
        if (!internal_to_group(s, out, g) || s->tensor_crosses[out]) continue;
        for (int q = 0; q < is->input_count; q++) {
            int t = is->inputs[q];
            if (t == out || !internal_to_group(s, t, g) || s->tensor_crosses[t]) continue;
            if (!reads_pointwise(op, is, q)) continue;
            bool read_later = false;
            for (int j = k + 1; j < grp->stmt_count && !read_later; j++) {
                const IrStmt *later = &op->stmts[grp->stmts[j]];
                for (int r = 0; r < later->input_count; r++) read_later |= later->inputs[r] == t;
            }
            if (read_later) continue;
            bool shared = false;
            for (int mi = 0; mi < s->arch->memory_count; mi++) {
                /* where the group keeps its intermediates, element by
                 * element as they live: the fusion level.  A tile below it
                 * stays until its next one replaces it, so a result there
                 * cannot take its host's storage tile for tile
                 * (docs/cost-model.md section 2). */
                if (s->arch->memories[mi].level != grp->level) continue;
                Footprint *host = maker_footprint(grp, mi, t),
                          *result = maker_footprint(grp, mi, out);
                /* tile for tile: as many live tiles, kept across the same loop */
                if (!host || !result || host->live_tiles != result->live_tiles ||
                    host->live_loop != result->live_loop)
                    continue;
                /* a reader's copy of either in this memory is a tile of its own */
                bool copies = false;
                for (int f = 0; f < grp->footprint_count; f++)
                    copies |= grp->footprints[f].memory == mi && grp->footprints[f].reader >= 0 &&
                              (grp->footprints[f].tensor == t || grp->footprints[f].tensor == out);
                if (copies) continue;
                double storage = in_place_storage(grp, host, grp->stmt_count);
                result->host = t;
                result->in_place = result->bytes < storage ? result->bytes : storage;
                shared = true;
            }
            if (shared) break;
        }
    }
}

void pass_tiles(Schedule *s) {
    const IrOp *op = s->op;
    for (int st = 0; st < op->stmt_count; st++)
        if (sched_stmt_tiled(s, st)) walk_tiles(s, st);
    /* sched_visits walks a group's loops; it is asked the same question
     * many times from here on, and the loops no longer change */
    s->visits_first = ARENA_ARRAY(s->arena, int, op->stmt_count + 1);
    int slots = 0;
    for (int st = 0; st < op->stmt_count; st++) {
        s->visits_first[st] = slots;
        slots += (op->stmts[st].input_count + 1) * (s->levels + 1);
    }
    s->visits_memo = ARENA_ARRAY(s->arena, SchedVisits, slots + 1);
    s->visits_known = ARENA_ARRAY(s->arena, bool, slots + 1);
    /* loop nests, then footprints and capacity, group by group */
    for (int g = 0; g < s->group_count; g++) {
        SchedGroup *grp = &s->groups[g];
        if (grp->stmt_count > 0 && !sched_stmt_needed(s, grp->stmts[0])) continue;
        build_loops(s, grp);
        compute_waits(s, grp);
        /* loops and waits are read by the neighbours' collectives; the
         * footprints only by the group's own cost */
        if (!sched_group_costed(s, grp)) continue;
        /* the stages overlap across the outermost tiles (section 7) */
        bool pipelined = grp->overlap != OVERLAP_NONE && grp->tiles > 1;
        int cap = 0;
        for (int l = 0; l < s->levels; l++) {
            for (int k = 0; k < grp->stmt_count; k++) {
                int st = grp->stmts[k];
                const IrStmt *is = &op->stmts[st];
                int tensors[IR_MAX_OPERANDS + 1];
                int tc = 0;
                tensors[tc++] = is->out_tensor;
                for (int q = 0; q < is->input_count; q++) tensors[tc++] = is->inputs[q];
                for (int q = 0; q < tc; q++) {
                    int t = tensors[q];
                    bool result = t == is->out_tensor;
                    /* a tensor made and used inside the group never goes
                     * above the fusion level */
                    bool internal = internal_to_group(s, t, g);
                    bool leaves = s->tensor_crosses[t] && result;
                    if (internal && !leaves && l < grp->level) continue;
                    double elem = sched_elem_bytes(&op->tensors[t]), bytes = elem;
                    for (int r = 0; r < op->tensors[t].rank; r++)
                        bytes *= s->stmts[st].tile[sched_li(s, l, sched_access_index(s, st, t, r))];
                    /* its maker holds every tile that must survive an
                     * enclosing loop at the fusion level */
                    double live = 1;
                    int live_loop = -1, waiter = -1;
                    if (result && l == grp->level)
                        live = live_tiles(s, grp, k, &live_loop, &waiter);
                    /* the fusion level holds the group's tensors where
                     * their producer made them */
                    MemRole role = internal && l <= grp->level ? sched_held_role(s, st, t)
                                                               : sched_tensor_role(is, t);
                    const IrMemory *mem = ir_level_memory(s->arch, l, role);
                    /* an accumulator adds a sum's partial results in 32
                     * bits at least, whatever the result's type: tensor
                     * cores add bf16 and fp16 products into fp32, int8
                     * into int32 (docs/cost-model.md section 2) */
                    if (result && mem && mem->role == ROLE_ACCUMULATOR &&
                        (is->reduce_op == RO_SUM || is->reduce_op == RO_MEAN) && elem < 4)
                        bytes *= 4 / elem;
                    /* a reader that sees it otherwise than its maker left
                     * it holds its own tile beside the maker's: at the
                     * fusion level, and below it where the maker's result
                     * tile is in the same memory */
                    const IrMemory *made_in = ir_level_memory(s->arch, l, ROLE_OUTPUT);
                    bool beside = l == grp->level || (mem && made_in && mem->id == made_in->id);
                    int reader = internal && !result && l >= grp->level && beside &&
                                         reader_view_differs(s, st, t)
                                     ? st
                                     : -1;
                    if (reader >= 0 && l == grp->level) {
                        live = reader_copy_tiles(s, grp, st, t, &live_loop);
                        waiter = live > 1 ? st : -1;
                    }
                    /* a group that overlaps its outermost tiles moves
                     * the next tile of what it refills while it uses this
                     * one; a stream level (a cache) replaces its lines as
                     * the level below asks for the next, and an
                     * intermediate at its fusion level does not move */
                    double refills = 0;
                    bool stays = internal && !leaves && l == grp->level;
                    if (pipelined && !stays && l >= 1 && mem && mem->kind != MK_STREAM) {
                        SchedVisits v = sched_visits(s, grp, st, &op->tensors[t], l);
                        refills = v.visits > 1 ? v.visits - 1 : 0;
                    }
                    if (mem)
                        add_footprint(s, grp,
                                      (Footprint){mem->id, t, bytes * live, live, live_loop, waiter,
                                                  reader, refills, 0, false, -1, 0},
                                      &cap);
                }
            }
        }
        share_in_place(s, grp, g);
        const IrArch *arch = s->arch;
        for (int mi = 0; mi < arch->memory_count; mi++) {
            const IrMemory *mem = &arch->memories[mi];
            if (!isfinite(mem->capacity) || mem->capacity <= 0) continue;
            double need = 0;
            for (int k = 0; k < grp->footprint_count; k++)
                if (grp->footprints[k].memory == mi) need += footprint_need(&grp->footprints[k]);
            if (need > mem->capacity)
                add_excess(s, g, mi, need, mem->capacity, capacity_span(s, grp, mem->level));
            else
                assign_spare_tiles(grp, mi, mem->capacity - need);
        }
        for (int mi = 0; mi < arch->memory_count; mi++) /* no capacity: room for all */
            if (!isfinite(arch->memories[mi].capacity) || arch->memories[mi].capacity <= 0)
                assign_spare_tiles(grp, mi, INFINITY);
    }
}
