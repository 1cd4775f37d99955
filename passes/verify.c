/* verify.c — the reference interpreter.  It executes a lowered schedule's
 * loop nest iteration by iteration, on every instance of every level, and
 * measures what a machine running it holds and moves.  It is written apart
 * from the analytic passes: it reads from the Schedule only the decisions
 * and shapes (m, op, arch, group membership, fusion level and loop order,
 * and per statement its splits, tiles and trips) and takes the index names
 * of every access from the statement's AST.  It never calls the footprint,
 * traffic or collective code (tiles.c, reuse.c, collectives.c, cost.c,
 * formulas.c).
 *
 * Semantics (the section "The reference interpreter" of docs/cost-model.md
 * says the same for users):
 *
 * Instances.  Levels 0..V-1 are memories, V the compute units.  A cluster
 * dim lies between the level declared before its cluster and the one after.
 * A level-l instance is identified by its coordinates along the dims
 * outside l.  For statement S, the dims that split index i between levels
 * l-1 and l deal the range of the enclosing tile (the whole index for dims
 * outside level 0) to the children jointly, outer dims first, in whole
 * blocks of the mapping's tile of i at level l (one element when it has
 * none, and at level 0 and the compute units): child k of P gets blocks [k q, (k+1) q) of T =
 * ceil(range / b), q = ceil(T / P), so the last block may be short and the last children get less
 * or nothing.  The loops at level l walk S's level-l tiles (the schedule's tile and trips) inside
 * that share; when trips is 1 the tile is the whole share.
 *
 * Loop nest.  A group's timeline is the lexicographic sequence of the
 * points of its loops: level 1 (in the group's order), then level 2, ...,
 * then V; a loop's trips are the largest trips of a statement of the group
 * over that index.  Statement S executes its point p (coordinates of the
 * loops over its own indices, each below S's own trips) at the first
 * timeline point that agrees with p, statements in group order, all compute
 * instances in lockstep (SPMD).  An execution is READY when every element of
 * every in-group tensor it reads is complete on every instance (all
 * contributions, over loops and over instances sharing a split reduced
 * index, accumulated); otherwise it is deferred, and after every execution
 * the deferred ones that became ready run, in deferral order.
 *
 * Memories.  Each memory instance holds at most one tile per tensor (a
 * slot); a contraction's first operand lives in the `input` memory of a
 * level split by role, its second in `weight`, results in `output`, vector
 * operands in `input`.  For an execution, every operand is needed at every
 * level 1..V-1 as the level-l tile containing the compute tile; a slot that
 * does not hold it (or lacks an element the compute tile needs) is loaded
 * from level l-1, replacing the old tile.  The compute unit keeps the
 * operand tiles and the result tile it works on, reading an operand from
 * level V-1 when it changes.  A tensor produced in the group (an
 * intermediate) is never loaded at levels <= F, the group's fusion level:
 * at F it is LIVE from its first (partial) result until its last in-group
 * read, every element held individually; it is loaded below F as usual, and
 * only complete elements are ever delivered as operands.  Loads of an
 * intermediate first write back any newer copy held below the source
 * (coherence).  The outermost level holds whole tensors: within a group it
 * holds every element the group reads or writes there.
 *
 * Results.  The result tile at each level (and in the compute unit) is
 * written back to the level above when it is replaced or at the end of the
 * group; when a later visit installs a tile some of whose elements were
 * written back before (partial sums), they are read back.  Results travel
 * above F only when they leave the group (an op output or read by another
 * group); a leaving tensor read inside the group keeps its LIVE elements at
 * F besides its fusion-level result tile.
 * At a level with a `role accumulator` memory, results are held there and
 * operands in the level's other memory.  A `kind stream` memory does not
 * count the bytes it exchanges with the level above (fills, write-backs,
 * read-backs): they cross its inner side too, and are counted there once.
 * One slot per tensor per memory: where a statement's result and a later
 * statement's operand share a memory, the operand finds the result tile
 * already resident.  A reader that sees an intermediate otherwise than its
 * maker left it (renamed indices, another split) has a second slot there,
 * its own tile beside the result tile (operand_slot).
 *
 * Multicast.  When several children of one parent load the identical tile
 * in the same step, the parent reads it once and a broadcast delivers it
 * (one broadcast event over the dims along which those children differ,
 * counted once per step).  Children writing back (or reading back) the
 * same result tile to (from) one parent in the same step are replicas or
 * partial results combined on the way: the parent is written (read) once.
 *
 * Collectives.  (a) reduce: a statement whose reduced index is split over
 * dims D combines its partial results once per result tile that completes
 * and is needed.  The tile is given by the loops at levels <= G over the
 * result's indices outside the first loop over a reduced index, where G is
 * the fusion level when a statement of the group reads the result and 1
 * when it only leaves the group; bytes per rank are what one instance holds
 * of that tile.  (b) broadcast, above.  (c) relayout: a consumer instance
 * needs an element of an intermediate that no instance under its
 * fusion-level memory produced (or, between groups, that its outermost
 * memory does not hold): it receives it from the instance that did, once
 * per consumer tile at the loops of levels <= max(F, 1) over the accessed
 * indices; bytes per rank are what one instance receives for that tile.
 *
 * Readings chosen where the statement of the semantics left room (the
 * physically sensible one each time):
 *  - a child that gets nothing of an uneven split idles (the report flags
 *    uneven shares);
 *  - an element of a result whose reduced index is split is complete only
 *    once its reduction collective ran, and that collective runs once per
 *    tile of (a): a reader inside finer loops waits for the whole tile
 *    (with G = 0, the whole result), so the count of (a) and the timeline
 *    agree;
 *  - deferred executions that became ready run before the timeline's next
 *    one, oldest first;
 *  - one slot per tensor per memory, shared by a result and later operands
 *    (the second bullet of "Results" above), except a reader that sees
 *    the tensor otherwise, which keeps its own tile beside the result tile
 *    while the maker still runs (it shares the result tile only when that
 *    is exactly its tile) and after it as long as its own tile is the one
 *    it needs; its next tile then replaces the result tile; and before a level is
 *    checked for an intermediate's tile, newer copies below it are written
 *    back into it: the producer's tile may be the one needed;
 *  - the compute unit keeps each statement's operand tiles apart (a unit
 *    streams each statement's operands), its result tile once per tensor;
 *  - an operand slot missing an element is topped up with the missing
 *    elements only, without a broadcast;
 *  - a fused intermediate's LIVE copy sits in the fusion level's `output`
 *    memory, and readers with another role read it there;
 *  - at the outermost level nothing is freed within a group;
 *  - read-backs of partial sums are memory traffic; relayouts are network
 *    only (the receiving memory holds the data, its bytes are not traffic);
 *  - a reduction's combined result is held by every participant
 *    (allreduce), an idle instance along the reduced dims (an empty share
 *    of an uneven split) included, so a later reader along them needs no
 *    relayout;
 *  - the work of a vector statement is ir_stmt_work's count per point, at
 *    least 1 (a copy still moves a value, language.md 3.7). */
#include "passes/verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANK IR_MAX_RANK
#define MAX_ACC (2 * IR_MAX_OPERANDS)

/* ------------------------------------------------------------- boxes */

/* A box of tensor elements: [lo, hi) per tensor dimension. */
typedef struct Box {
    int rank;
    int lo[RANK], hi[RANK];
} Box;

static int64_t box_volume(const Box *b) {
    int64_t v = 1;
    for (int r = 0; r < b->rank; r++) v *= b->hi[r] > b->lo[r] ? b->hi[r] - b->lo[r] : 0;
    return v;
}

static bool box_equal(const Box *a, const Box *b) {
    if (a->rank != b->rank) return false;
    for (int r = 0; r < a->rank; r++)
        if (a->lo[r] != b->lo[r] || a->hi[r] != b->hi[r]) return false;
    return true;
}

static bool box_overlaps(const Box *a, const Box *b) {
    if (!b) return true;
    for (int r = 0; r < a->rank; r++)
        if (a->hi[r] <= b->lo[r] || b->hi[r] <= a->lo[r]) return false;
    return true;
}

static void box_hull(Box *a, const Box *b) {
    for (int r = 0; r < a->rank; r++) {
        if (b->lo[r] < a->lo[r]) a->lo[r] = b->lo[r];
        if (b->hi[r] > a->hi[r]) a->hi[r] = b->hi[r];
    }
}

/* Walks the elements of a box as offsets into the tensor (row-major). */
typedef struct BoxIter {
    Box b;
    int cur[RANK];
    const int64_t *stride;
    bool done;
} BoxIter;

static void bi_init(BoxIter *it, const Box *b, const int64_t *stride) {
    it->b = *b;
    it->stride = stride;
    it->done = box_volume(b) == 0;
    for (int r = 0; r < b->rank; r++) it->cur[r] = b->lo[r];
}

static bool bi_next(BoxIter *it, int64_t *e) {
    if (it->done) return false;
    int64_t off = 0;
    for (int r = 0; r < it->b.rank; r++) off += it->cur[r] * it->stride[r];
    *e = off;
    int r = it->b.rank - 1;
    for (; r >= 0; r--) {
        if (++it->cur[r] < it->b.hi[r]) break;
        it->cur[r] = it->b.lo[r];
    }
    if (r < 0) it->done = true;
    return true;
}

/* ----------------------------------------------------------- context */

typedef struct Access {
    int tensor;
    int rank;
    int index[RANK]; /* index ids as this statement names the dimensions */
    MemRole role;
} Access;

typedef struct StmtInfo {
    int st;
    int pos; /* in its group */
    const IrStmt *is;
    const SchedStmt *ss;
    int acc_count;
    Access acc[MAX_ACC];
    Access out;
    int idx_count;
    int idx[2 * RANK];
    bool *uses, *reduced, *lhs; /* [index] */
    int64_t need;               /* contributions per result element */
    /* `where` (own or inherited) as x <= y + k: a compute tile wholly
     * outside it is skipped; inside a tile the points outside it are
     * masked (they contribute nothing) */
    bool masked;
    int mx, my;
    int64_t mk;
    int64_t *mlo, *mhi; /* [index]: scratch of need_of and contrib_of */
    double ops;         /* per iteration point */
    int *trips, *tile;  /* [(V + 1) * I] */
    unsigned partial;   /* dims (mask) that split a reduced index */
    /* the reduction collective's tiles (passes/verify.c header, (a)) */
    bool reduce_needed;
    int key_loops[64], key_count;
    int key_level[RANK * 2]; /* per lhs index position: deepest key level */
    int64_t key_expected;
    int *key_done;
    int64_t key_space;
} StmtInfo;

typedef struct Slot {
    bool present, dirty;
    Box box;
    uint8_t *valid;
    uint8_t *fresh; /* result slots: elements changed since the last write-back */
} Slot;

/* An intermediate at the fusion level of one instance. */
typedef struct Live {
    uint8_t *valid, *counted, *produced, *fetched;
    int32_t *pending;
    bool window_set, window_dirty;
    Box window;
} Live;

typedef struct Loop {
    int level, index, trips;
} Loop;

/* Bytes one instance received for one consumer tile of one access. */
typedef struct RelayoutEntry {
    uint64_t tile;
    int acc, inst, tensor;
    double bytes;
    unsigned dims;
    bool used;
} RelayoutEntry;

typedef struct Ctx {
    Arena *a;
    const Schedule *s;
    const IrOp *op;
    const IrArch *arch;
    VerifyReport *rep;
    int V, D, I, T, Q, M;
    int *dim_size;
    bool *enters;  /* [l * D + d]: dim d lies between levels l-1 and l */
    bool *outside; /* [l * D + d] */
    int *ninst;    /* [V + 1] */
    int **anc;     /* [l][q] */
    int **rep_q;   /* [l][u]: first compute instance under u */
    int **up;      /* [l][u]: the level l-1 instance above u (l >= 1) */
    int *coord;    /* [q * D + d] */
    int *memr;     /* [l * 4 + role]: memory id or -1 */
    int *mem_level;
    int64_t *telems;
    int64_t *stride; /* [t * RANK + r] */
    double *eb;
    /* [tensor]: how much wider a partial sum of it moves than its type
     * (docs/cost-model.md section 3; 1 for most) */
    double *wide;
    uint8_t **l0_valid; /* [u0 * T + t], persists across groups */
    StmtInfo *si;       /* [stmt] */
    bool trace;
} Ctx;

typedef struct Exec {
    int pos;
    int *p;
} Exec;

typedef struct GCtx {
    int g, F;
    const SchedGroup *sg;
    int ns;
    StmtInfo **si; /* group order */
    int nloops;
    Loop *loops;
    int *loop_at; /* [level * I + index] */
    bool *in_group, *leaves, *read_in;
    bool *running; /* [tensor]: made by an online statement: its readers
                      take an element once it has any contribution */
    /* element state of intermediates */
    int64_t **done;
    uint8_t **complete;
    int32_t **remote_left;
    Live *live; /* [f * T + t] */
    int live_mem;
    /* phase A */
    uint8_t **pa_prod, **pa_fetch; /* [f * T + t] */
    Exec *execs;
    int nexec, cap_exec;
    int *wait_at; /* [pos]: the loop the lowering runs the statement after,
                     or -1 (the schedule's wait_loop, in this nest) */
    double early; /* executions due before their inputs were complete */
    const char *early_what;
    bool **walk_inner, **walk_pass; /* [loop]: scratch statement sets */
    /* phase B */
    Slot **slots;    /* [memory][u * T + t] */
    Slot **rslots;   /* [memory][u * T + t]: a reader's own tile of an
                        intermediate whose result tile there differs */
    int *execs_left; /* [pos]: executions of the statement still to run */
    Slot *uin;       /* [(pos * Q + q) * T + t]: a statement's operands in a unit */
    Slot *uacc;      /* [q * T + t]: results being accumulated */
    uint8_t **l0_touch;
    double **occ, **peak, **rd, **wr; /* [memory][instance] */
    double **work;                    /* [pos][q] */
    /* per execution */
    int *qlo, *qhi;
    bool *active;
    int **act_rep; /* [l][u] */
    RelayoutEntry *rel;
    int rel_cap, rel_count;
    int bc_seen[64][2], bc_seen_count;
    double bc_bytes[64];
    /* scratch lists, one per non-reentrant user */
    int **list_flush; /* [level]: flush_below's instances at that level */
    int *list_dirty, *list_req, *list_copy, *list_copy2;
    bool *flags_wb, *flags_win, *flags_req;
    Box *req_box, *box_copy;
    bool *req_replace, *req_own;
    Slot **req_slot;
    int64_t *deliver_at;
} GCtx;

static void problem(Ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(Ctx *c, const char *fmt, ...) {
    VerifyReport *r = c->rep;
    if (r->problem_count >= 32) return; /* the first ones tell the story */
    va_list ap;
    va_start(ap, fmt);
    char *text = arena_vprintf(c->a, fmt, ap);
    va_end(ap);
    for (int k = 0; k < r->problem_count; k++)
        if (strcmp(r->problems[k], text) == 0) return;
    const char **grown = ARENA_ARRAY(c->a, const char *, r->problem_count + 1);
    if (r->problem_count) memcpy(grown, r->problems, sizeof(char *) * (size_t)r->problem_count);
    grown[r->problem_count++] = text;
    r->problems = grown;
}

static const char *tname(const Ctx *c, int t) {
    return c->op->tensors[t].name;
}

/* ------------------------------------------------------------- setup */

static void collect_accesses(StmtInfo *si) {
    for (int k = 0; k < si->is->read_count; k++) {
        const IrAccess *read = &si->is->reads[k];
        if (si->acc_count >= MAX_ACC) return;
        Access *a = &si->acc[si->acc_count];
        a->tensor = read->tensor;
        a->rank = read->rank;
        if (a->tensor < 0 || a->rank > RANK) continue;
        for (int r = 0; r < a->rank; r++) a->index[r] = read->index[r];
        bool contraction = si->is->cls == SC_CONTRACTION;
        a->role = contraction && si->acc_count == 1 ? ROLE_WEIGHT : ROLE_INPUT;
        si->acc_count++;
    }
}

/* The block in which the dims entering level l deal index i of si: the
 * mapping's tile of i at l, one element when it gives none. */
static int64_t deal_block(const Ctx *c, const StmtInfo *si, int l, int i) {
    int64_t given =
        l >= 1 && l < c->V ? c->s->m->tile.size[ir_tile_slot(c->s->m, si->st, l, i)] : IR_UNSET;
    return given >= 1 ? given : 1;
}

static void setup_stmt(Ctx *c, int st) {
    StmtInfo *si = &c->si[st];
    const IrOp *op = c->op;
    int I = c->I, V = c->V;
    si->st = st;
    si->is = &op->stmts[st];
    si->ss = &c->s->stmts[st];
    si->uses = ARENA_ARRAY(c->a, bool, I);
    si->reduced = ARENA_ARRAY(c->a, bool, I);
    si->lhs = ARENA_ARRAY(c->a, bool, I);
    si->out.tensor = si->is->out_tensor;
    si->out.role = ROLE_OUTPUT;
    si->out.rank = si->is->target.rank;
    for (int r = 0; r < si->out.rank && r < RANK; r++) {
        int i = si->is->target.index[r];
        si->out.index[r] = i;
        if (i >= 0) si->lhs[i] = si->uses[i] = true;
    }
    collect_accesses(si);
    for (int k = 0; k < si->acc_count; k++)
        for (int r = 0; r < si->acc[k].rank; r++) {
            int i = si->acc[k].index[r];
            if (i < 0) continue;
            si->uses[i] = true;
            if (!si->lhs[i]) si->reduced[i] = true;
        }
    si->masked = ir_pred_canon(&si->is->mask, &si->mx, &si->my, &si->mk);
    si->mlo = ARENA_ARRAY(c->a, int64_t, I + 1);
    si->mhi = ARENA_ARRAY(c->a, int64_t, I + 1);
    si->need = 1;
    for (int i = 0; i < I; i++) {
        if (si->uses[i]) si->idx[si->idx_count++] = i;
        if (si->reduced[i]) si->need *= op->indices[i].extent;
    }
    /* element operations per point, as ir_stmt_work counts them */
    int64_t *ones = ARENA_ARRAY(c->a, int64_t, I);
    for (int i = 0; i < I; i++) ones[i] = 1;
    const IrCompute *unit =
        si->is->cls == SC_CONTRACTION ? ir_matrix_unit(c->arch) : ir_vector_unit(c->arch);
    si->ops = ir_stmt_work(op, si->is, ones, unit);
    if (si->ops < 1) si->ops = 1;
    si->trips = ARENA_ARRAY(c->a, int, (V + 1) * I);
    si->tile = ARENA_ARRAY(c->a, int, (V + 1) * I);
    for (int l = 0; l <= V; l++)
        for (int i = 0; i < I; i++) {
            double tr = si->ss->trips[l * I + i], tl = si->ss->tile[l * I + i];
            int trips = tr > 1 ? (int)llround(tr) : 1;
            si->trips[l * I + i] = trips;
            si->tile[l * I + i] = (int)ceil(tl);
            if (trips > 1 && tl != floor(tl))
                problem(c, "statement %s: tile %g of %s at level %d is not a whole number",
                        si->is->name, tl, op->indices[i].name, l);
        }
    for (int d = 0; d < c->D; d++) {
        int sp = si->ss->split[d];
        if (sp >= 0 && sp < I && si->reduced[sp] && c->dim_size[d] > 1) si->partial |= 1u << d;
    }
    /* an uneven share: a split or a tile that does not divide its range */
    for (int k = 0; k < si->idx_count && !c->rep->uneven; k++) {
        int i = si->idx[k];
        int64_t len = op->indices[i].extent;
        for (int l = 0; l <= V && !c->rep->uneven; l++) {
            /* the dims entering here deal the range in blocks of the
             * level's tile (range_of): even when every instance gets the
             * same whole number of whole blocks */
            int64_t parts = 1;
            const char *dims = "";
            for (int d = 0; d < c->D; d++) {
                if (si->ss->split[d] != i || !c->enters[l * c->D + d]) continue;
                parts *= c->dim_size[d];
                dims = arena_printf(c->a, "%s%s%s", dims, *dims ? "," : "", c->arch->dims[d].name);
            }
            if (parts > 1) {
                int64_t b = deal_block(c, si, l, i);
                if (len % (parts * b))
                    c->rep->uneven = arena_printf(
                        c->a, "%s: %lld of %s split %lld ways over %s%s", si->is->name,
                        (long long)len, op->indices[i].name, (long long)parts, dims,
                        b > 1 ? arena_printf(c->a, " in blocks of %lld", (long long)b) : "");
                int64_t blocks = (len + b - 1) / b, per = (blocks + parts - 1) / parts;
                len = per * b < len ? per * b : len;
            }
            int trips = si->trips[l * I + i], tile = si->tile[l * I + i];
            if (l >= 1 && trips > 1 && !c->rep->uneven) {
                if (len % tile || (int64_t)trips * tile != len)
                    c->rep->uneven = arena_printf(
                        c->a, "%s: tile %d of %s at %s walks %lld elements in %d trips",
                        si->is->name, tile, op->indices[i].name,
                        l < V ? c->arch->levels[l].name : "the compute units", (long long)len,
                        trips);
                len = tile;
            }
        }
    }
}

static bool setup(Ctx *c) {
    const IrArch *arch = c->arch;
    c->V = c->s->levels;
    c->D = arch->dim_count;
    c->I = c->op->index_count;
    c->T = c->op->tensor_count;
    c->M = arch->memory_count;
    int V = c->V, D = c->D;
    c->dim_size = ARENA_ARRAY(c->a, int, D + 1);
    c->Q = 1;
    for (int d = 0; d < D; d++) {
        c->dim_size[d] = (int)arch->dims[d].size;
        c->Q *= c->dim_size[d];
    }
    c->outside = ARENA_ARRAY(c->a, bool, (V + 1) * (D + 1));
    c->enters = ARENA_ARRAY(c->a, bool, (V + 1) * (D + 1));
    for (int l = 0; l <= V; l++)
        for (int d = 0; d < D; d++)
            c->outside[l * D + d] =
                l == V || arch->dims[d].cluster < arch->levels[l].clusters_outside;
    for (int l = 0; l <= V; l++)
        for (int d = 0; d < D; d++)
            c->enters[l * D + d] =
                c->outside[l * D + d] && (l == 0 || !c->outside[(l - 1) * D + d]);
    c->coord = ARENA_ARRAY(c->a, int, c->Q *(D + 1));
    for (int q = 0; q < c->Q; q++) {
        int rest = q;
        for (int d = D - 1; d >= 0; d--) {
            c->coord[q * D + d] = rest % c->dim_size[d];
            rest /= c->dim_size[d];
        }
    }
    c->ninst = ARENA_ARRAY(c->a, int, V + 1);
    c->anc = ARENA_ARRAY(c->a, int *, V + 1);
    c->rep_q = ARENA_ARRAY(c->a, int *, V + 1);
    c->up = ARENA_ARRAY(c->a, int *, V + 1);
    for (int l = 0; l <= V; l++) {
        int n = 1;
        for (int d = 0; d < D; d++)
            if (c->outside[l * D + d]) n *= c->dim_size[d];
        c->ninst[l] = n;
        c->anc[l] = ARENA_ARRAY(c->a, int, c->Q);
        c->rep_q[l] = ARENA_ARRAY(c->a, int, n);
        for (int u = 0; u < n; u++) c->rep_q[l][u] = -1;
        for (int q = 0; q < c->Q; q++) {
            int u = 0;
            for (int d = 0; d < D; d++)
                if (c->outside[l * D + d]) u = u * c->dim_size[d] + c->coord[q * D + d];
            c->anc[l][q] = u;
            if (c->rep_q[l][u] < 0) c->rep_q[l][u] = q;
        }
    }
    for (int l = 1; l <= V; l++) {
        c->up[l] = ARENA_ARRAY(c->a, int, c->ninst[l]);
        for (int u = 0; u < c->ninst[l]; u++) c->up[l][u] = c->anc[l - 1][c->rep_q[l][u]];
    }
    c->memr = ARENA_ARRAY(c->a, int, (V + 1) * 4);
    for (int l = 0; l < V; l++)
        for (int role = 0; role < 4; role++) {
            const IrMemory *m = ir_level_memory(arch, l, (MemRole)role);
            c->memr[l * 4 + role] = m ? m->id : -1;
        }
    c->mem_level = ARENA_ARRAY(c->a, int, c->M + 1);
    for (int m = 0; m < c->M; m++) c->mem_level[m] = arch->memories[m].level;
    c->telems = ARENA_ARRAY(c->a, int64_t, c->T);
    c->stride = ARENA_ARRAY(c->a, int64_t, c->T * RANK);
    c->eb = ARENA_ARRAY(c->a, double, c->T);
    for (int t = 0; t < c->T; t++) {
        const IrTensor *tn = &c->op->tensors[t];
        int64_t n = 1;
        for (int r = tn->rank - 1; r >= 0; r--) {
            c->stride[t * RANK + r] = n;
            n *= tn->extent[r];
        }
        c->telems[t] = n;
        c->eb[t] = sched_elem_bytes(tn);
    }
    c->l0_valid = ARENA_ARRAY(c->a, uint8_t *, c->ninst[0] * c->T);
    c->si = ARENA_ARRAY(c->a, StmtInfo, c->op->stmt_count);
    for (int st = 0; st < c->op->stmt_count; st++) setup_stmt(c, st);
    /* a sum's partial results move at 32 bits at least, but an online
     * statement's running value and a reduction split over dims (whose
     * partials the collectives combine) at their type */
    c->wide = ARENA_ARRAY(c->a, double, c->T + 1);
    for (int t = 0; t < c->T; t++) c->wide[t] = 1;
    for (int st = 0; st < c->op->stmt_count; st++) {
        const IrStmt *is = &c->op->stmts[st];
        int t = is->out_tensor;
        if ((is->reduce_op == RO_SUM || is->reduce_op == RO_MEAN) && c->eb[t] > 0 && c->eb[t] < 4 &&
            !(c->s->m->online && c->s->m->online[st]) && !c->si[st].partial)
            c->wide[t] = 4 / c->eb[t];
    }
    return true;
}

/* ------------------------------------------------------------ ranges */

/* The range [lo, hi) of index i that compute instance q holds for
 * statement si at `level` (the splits of every dim outside `level`), with
 * the loop tiles of levels 1..tile_level at point p applied. */
static void range_of(const Ctx *c, const GCtx *g, const StmtInfo *si, int i, int q, const int *p,
                     int level, int tile_level, int *plo, int *phi) {
    int lo = 0, hi = (int)c->op->indices[i].extent;
    int D = c->D, I = c->I;
    for (int l = 0; l <= level; l++) {
        /* the dims entering here deal the range out jointly (outer dims
         * the most significant) in whole blocks of the index's tile at
         * this level, one element when it has none: instance k of P gets
         * blocks [k q, (k + 1) q) of the T = ceil(len / b), q = ceil(T / P),
         * the last block short, and an instance past the end nothing */
        int64_t parts = 1, k = 0;
        for (int d = 0; d < D; d++) {
            if (si->ss->split[d] != i || !c->enters[l * D + d]) continue;
            parts *= c->dim_size[d];
            k = k * c->dim_size[d] + c->coord[q * D + d];
        }
        if (parts > 1) {
            int64_t b = deal_block(c, si, l, i), len = hi - lo;
            int64_t blocks = (len + b - 1) / b, per = (blocks + parts - 1) / parts;
            int64_t nlo = k * per * b, nhi = (k + 1) * per * b;
            if (nlo > len) nlo = len;
            if (nhi > len) nhi = len;
            hi = lo + (int)nhi;
            lo = lo + (int)nlo;
        }
        if (l >= 1 && l <= tile_level && si->trips[l * I + i] > 1) {
            int at = g->loop_at[l * I + i];
            int cc = at >= 0 ? p[at] : 0;
            int t = si->tile[l * I + i];
            int nlo = lo + cc * t;
            if (nlo > hi) nlo = hi;
            int nhi = nlo + t < hi ? nlo + t : hi;
            lo = nlo;
            hi = nhi;
        }
    }
    *plo = lo;
    *phi = hi;
}

/* The per-execution compute boxes of every instance (level V). */
static void compute_qboxes(Ctx *c, GCtx *g, const StmtInfo *si, const int *p) {
    int I = c->I;
    for (int q = 0; q < c->Q; q++) {
        bool act = true;
        for (int k = 0; k < si->idx_count; k++) {
            int i = si->idx[k];
            range_of(c, g, si, i, q, p, c->V, c->V, &g->qlo[q * I + i], &g->qhi[q * I + i]);
            if (g->qhi[q * I + i] <= g->qlo[q * I + i]) act = false;
        }
        /* a compute tile wholly outside the restriction: no x in it is at
         * most any y in it plus k */
        if (si->masked && g->qlo[q * I + si->mx] > g->qhi[q * I + si->my] - 1 + si->mk) act = false;
        g->active[q] = act;
    }
    for (int l = 0; l <= c->V; l++) {
        for (int u = 0; u < c->ninst[l]; u++) g->act_rep[l][u] = -1;
        for (int q = 0; q < c->Q; q++)
            if (g->active[q] && g->act_rep[l][c->anc[l][q]] < 0) g->act_rep[l][c->anc[l][q]] = q;
    }
}

/* The tile of an access at `level` for instance q (V: the compute tile). */
static Box access_box(const Ctx *c, const GCtx *g, const StmtInfo *si, const Access *a, int q,
                      const int *p, int level) {
    Box b;
    b.rank = a->rank;
    for (int r = 0; r < a->rank; r++) {
        int i = a->index[r];
        if (level == c->V) {
            b.lo[r] = g->qlo[q * c->I + i];
            b.hi[r] = g->qhi[q * c->I + i];
        } else {
            range_of(c, g, si, i, q, p, level, level, &b.lo[r], &b.hi[r]);
        }
    }
    return b;
}

/* The tile of tensor t a statement needs at a level: the hull of its
 * accesses to t (one access in all but odd statements). */
static Box tensor_box(const Ctx *c, const GCtx *g, const StmtInfo *si, int t, int q, const int *p,
                      int level) {
    Box b = {0};
    bool first = true;
    for (int k = 0; k < si->acc_count; k++) {
        if (si->acc[k].tensor != t) continue;
        Box x = access_box(c, g, si, &si->acc[k], q, p, level);
        if (first)
            b = x;
        else
            box_hull(&b, &x);
        first = false;
    }
    return b;
}

static bool is_rep(const Ctx *c, const StmtInfo *si, int q) {
    for (int d = 0; d < c->D; d++)
        if (si->ss->split[d] < 0 && c->coord[q * c->D + d] != 0) return false;
    return true;
}

/* Pairs (a, b), a in [alo, ahi), b in [blo, bhi), with a <= b + k. */
static int64_t pairs_below(int64_t alo, int64_t ahi, int64_t blo, int64_t bhi, int64_t k) {
    int64_t n = 0;
    for (int64_t b = blo; b < bhi; b++) {
        int64_t top = b + k + 1 < ahi ? b + k + 1 : ahi;
        if (top > alo) n += top - alo;
    }
    return n;
}

/* The restricted statement's points over ranges [lo, hi) of each index
 * (the element's own coordinate for an index of the result) that meet
 * x <= y + k, over the reduced indices: the contributions an element
 * gets from them. */
static int64_t masked_points(const StmtInfo *si, const int64_t *lo, const int64_t *hi) {
    int64_t n = pairs_below(lo[si->mx], hi[si->mx], lo[si->my], hi[si->my], si->mk);
    for (int k = 0; k < si->idx_count; k++) {
        int i = si->idx[k];
        if (si->reduced[i] && i != si->mx && i != si->my) n *= hi[i] - lo[i];
    }
    return n;
}

/* The coordinates of result element e of si in lo/hi (a range of one),
 * the reduced indices over the given box (compute instance q's tile, or
 * the whole extent when q < 0). */
static void element_ranges(const Ctx *c, const GCtx *g, const StmtInfo *si, int64_t e, int q,
                           int64_t *lo, int64_t *hi) {
    int Y = si->out.tensor;
    for (int k = 0; k < si->idx_count; k++) {
        int i = si->idx[k];
        lo[i] = q >= 0 ? g->qlo[q * c->I + i] : 0;
        hi[i] = q >= 0 ? g->qhi[q * c->I + i] : c->op->indices[i].extent;
    }
    for (int r = 0; r < si->out.rank; r++) {
        int i = si->out.index[r];
        if (i < 0) continue;
        lo[i] = (e / c->stride[Y * RANK + r]) % c->op->tensors[Y].extent[r];
        hi[i] = lo[i] + 1;
    }
}

/* Contributions result element e needs in all: every reduced point, or
 * under a restriction those that meet it (none for an element outside
 * it: a masked element, complete from the start). */
static int64_t need_of(const Ctx *c, const GCtx *g, const StmtInfo *si, int64_t e) {
    (void)g;
    if (!si->masked) return si->need;
    element_ranges(c, g, si, e, -1, si->mlo, si->mhi);
    return masked_points(si, si->mlo, si->mhi);
}

/* Contributions compute instance q's tile gives result element e. */
static int64_t contrib_of(const Ctx *c, const GCtx *g, const StmtInfo *si, int q, int64_t e,
                          int64_t all) {
    if (!si->masked || !all) return all;
    element_ranges(c, g, si, e, q, si->mlo, si->mhi);
    return masked_points(si, si->mlo, si->mhi);
}

static int64_t reduced_points(const Ctx *c, const GCtx *g, const StmtInfo *si, int q) {
    int64_t n = 1;
    for (int k = 0; k < si->idx_count; k++) {
        int i = si->idx[k];
        if (si->reduced[i]) n *= g->qhi[q * c->I + i] - g->qlo[q * c->I + i];
    }
    return n;
}

/* ----------------------------------------------------- storage helpers */

static uint8_t *bytes_of(Ctx *c, uint8_t **slot, int t) {
    if (!*slot) *slot = ARENA_ARRAY(c->a, uint8_t, c->telems[t]);
    return *slot;
}

static Live *live_of(Ctx *c, GCtx *g, int f, int t) {
    Live *lv = &g->live[f * c->T + t];
    if (!lv->valid) {
        int64_t n = c->telems[t];
        lv->valid = ARENA_ARRAY(c->a, uint8_t, n);
        lv->counted = ARENA_ARRAY(c->a, uint8_t, n);
        lv->produced = ARENA_ARRAY(c->a, uint8_t, n);
        lv->fetched = ARENA_ARRAY(c->a, uint8_t, n);
        lv->pending = ARENA_ARRAY(c->a, int32_t, n);
        lv->window.rank = c->op->tensors[t].rank;
    }
    return lv;
}

static void occ_add(GCtx *g, int mem, int inst, double bytes) {
    if (mem < 0) return;
    double *o = &g->occ[mem][inst];
    *o += bytes;
    if (bytes > 0 && *o > g->peak[mem][inst]) g->peak[mem][inst] = *o;
}

/* CMT_VERIFY_TRACE=1 prints every byte count as it is made (stderr): a
 * debugging aid for reading a disagreement, never on by default. */
static void traffic(const Ctx *c, GCtx *g, int t, int mem, int inst, double read, double written,
                    bool outer_side) {
    if (mem < 0) return;
    /* a stream memory passes what it exchanges with the level above:
     * those bytes cross its inner side too, where they are counted */
    if (outer_side && c->arch->memories[mem].kind == MK_STREAM) return;
    if (c->trace)
        fprintf(stderr, "verify: group %d %s[%d] %s: read %g written %g\n", g->g,
                c->arch->memories[mem].name, inst, c->op->tensors[t].name, read, written);
    g->rd[mem][inst] += read;
    g->wr[mem][inst] += written;
}

static int mem_of(const Ctx *c, int level, MemRole role) {
    return level < c->V ? c->memr[level * 4 + role] : -1;
}

enum { K_NONE, K_SLOT, K_LIVE };

/* How an intermediate of the group is held at level l >= 1. */
static int kind_of(const GCtx *g, int t, int l) {
    if (l > g->F) return K_SLOT;
    if (l == g->F) return (g->read_in[t] || !g->leaves[t]) ? K_LIVE : K_SLOT;
    return g->leaves[t] ? K_SLOT : K_NONE;
}

static bool l0_has(Ctx *c, int u0, int t, int64_t e) {
    if (c->op->tensors[t].kind == TK_INPUT) return true;
    uint8_t *v = c->l0_valid[u0 * c->T + t];
    return v && v[e];
}

static void l0_touch(Ctx *c, GCtx *g, int u0, int t, int64_t e, MemRole role) {
    uint8_t *tt = bytes_of(c, &g->l0_touch[u0 * c->T + t], t);
    if (tt[e]) return;
    tt[e] = 1;
    occ_add(g, mem_of(c, 0, role), u0, c->eb[t]);
}

static void l0_write(Ctx *c, GCtx *g, int u0, int t, int64_t e) {
    bytes_of(c, &c->l0_valid[u0 * c->T + t], t)[e] = 1;
    l0_touch(c, g, u0, t, e, ROLE_OUTPUT);
}

static bool in_box(const Ctx *c, int t, const Box *b, int64_t e) {
    for (int r = 0; r < b->rank; r++) {
        int64_t x = (e / c->stride[t * RANK + r]) % c->op->tensors[t].extent[r];
        if (x < b->lo[r] || x >= b->hi[r]) return false;
    }
    return true;
}

/* Re-decides whether a LIVE element still occupies the fusion level: it
 * does while it holds data and a read is pending, its reduction is not
 * complete, it lies in the fusion-level result tile of a leaving tensor,
 * or another instance has still to receive it. */
static void live_recheck(Ctx *c, GCtx *g, int f, int t, int64_t e) {
    Live *lv = live_of(c, g, f, t);
    bool keep =
        lv->valid[e] && (lv->pending[e] > 0 || !g->complete[t][e] || g->remote_left[t][e] > 0 ||
                         (lv->window_set && in_box(c, t, &lv->window, e)));
    if (keep && !lv->counted[e]) {
        lv->counted[e] = 1;
        occ_add(g, g->live_mem, f, c->eb[t]);
    } else if (!keep) {
        if (lv->counted[e]) occ_add(g, g->live_mem, f, -c->eb[t]);
        lv->counted[e] = 0;
        lv->valid[e] = 0;
    }
}

static void live_write(Ctx *c, GCtx *g, int f, int t, int64_t e) {
    Live *lv = live_of(c, g, f, t);
    lv->valid[e] = 1;
    if (g->leaves[t]) lv->window_dirty = true;
    live_recheck(c, g, f, t, e);
}

/* ---------------------------------------------------- collective events */

static VerifyCollective *coll_entry(Ctx *c, int group, int t, VerifyClass cls, unsigned dims) {
    VerifyReport *r = c->rep;
    for (int k = 0; k < r->collective_count; k++) {
        VerifyCollective *v = &r->collectives[k];
        unsigned m = 0;
        for (int j = 0; j < v->dim_count; j++) m |= 1u << v->dims[j];
        if (v->group == group && v->tensor == t && v->cls == cls && m == dims) return v;
    }
    VerifyCollective *grown = ARENA_ARRAY(c->a, VerifyCollective, r->collective_count + 1);
    if (r->collective_count)
        memcpy(grown, r->collectives, sizeof *grown * (size_t)r->collective_count);
    r->collectives = grown;
    VerifyCollective *v = &r->collectives[r->collective_count++];
    v->group = group;
    v->tensor = t;
    v->cls = cls;
    for (int d = 0; d < c->D; d++)
        if (dims & (1u << d)) v->dims[v->dim_count++] = d;
    return v;
}

/* A broadcast seen in this step: counted once per step and (tensor, dims). */
static void note_broadcast(GCtx *g, int t, unsigned dims, double bytes) {
    for (int k = 0; k < g->bc_seen_count; k++)
        if (g->bc_seen[k][0] == t && (unsigned)g->bc_seen[k][1] == dims) {
            if (bytes > g->bc_bytes[k]) g->bc_bytes[k] = bytes;
            return;
        }
    if (g->bc_seen_count == 64) return;
    g->bc_seen[g->bc_seen_count][0] = t;
    g->bc_seen[g->bc_seen_count][1] = (int)dims;
    g->bc_bytes[g->bc_seen_count++] = bytes;
}

static void flush_broadcasts(Ctx *c, GCtx *g) {
    for (int k = 0; k < g->bc_seen_count; k++) {
        VerifyCollective *v =
            coll_entry(c, g->g, g->bc_seen[k][0], VC_BROADCAST, (unsigned)g->bc_seen[k][1]);
        v->executions += 1;
        v->bytes += g->bc_bytes[k];
    }
    g->bc_seen_count = 0;
}

/* Relayout receipts, summed per (access, consumer tile, receiving instance). */
static uint64_t rel_hash(uint64_t tile, int acc, int inst) {
    uint64_t h = tile * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)acc * 0xC2B2AE3D27D4EB4Full + (h >> 29);
    h ^= (uint64_t)inst * 0x165667B19E3779F9ull + (h >> 31);
    return h;
}

static void note_relayout(Ctx *c, GCtx *g, uint64_t tile, int acc, int inst, int t, double bytes,
                          unsigned dims) {
    if (g->rel_count * 2 >= g->rel_cap) {
        int ncap = g->rel_cap ? g->rel_cap * 2 : 256;
        RelayoutEntry *n = ARENA_ARRAY(c->a, RelayoutEntry, ncap);
        for (int k = 0; k < g->rel_cap; k++) {
            RelayoutEntry *o = &g->rel[k];
            if (!o->used) continue;
            uint64_t h = rel_hash(o->tile, o->acc, o->inst) % (uint64_t)ncap;
            while (n[h].used) h = (h + 1) % (uint64_t)ncap;
            n[h] = *o;
        }
        g->rel = n;
        g->rel_cap = ncap;
    }
    uint64_t h = rel_hash(tile, acc, inst) % (uint64_t)g->rel_cap;
    RelayoutEntry *r = &g->rel[h];
    while (r->used && !(r->tile == tile && r->acc == acc && r->inst == inst)) {
        h = (h + 1) % (uint64_t)g->rel_cap;
        r = &g->rel[h];
    }
    if (!r->used) {
        r->used = true;
        r->tile = tile;
        r->acc = acc;
        r->inst = inst;
        r->tensor = t;
        g->rel_count++;
    }
    r->bytes += bytes;
    r->dims |= dims;
}

/* The consumer tile a relayout belongs to: the coordinates of the
 * statement's loops at levels <= max_level over the accessed indices. */
static uint64_t consumer_tile_key(const Ctx *c, const GCtx *g, const StmtInfo *si, const Access *a,
                                  const int *p, int max_level) {
    uint64_t key = 0;
    for (int k = 0; k < g->nloops; k++) {
        const Loop *lp = &g->loops[k];
        if (lp->level > max_level) break;
        bool accessed = false;
        for (int r = 0; r < a->rank; r++) accessed |= a->index[r] == lp->index;
        int trips = si->trips[lp->level * c->I + lp->index];
        if (!accessed || trips <= 1) continue;
        key = key * (uint64_t)trips + (uint64_t)p[k];
    }
    return key;
}

/* Dims (outside `level`) along which level instance `from` differs from `to`. */
static unsigned differing_dims(const Ctx *c, int level, int from, int to) {
    unsigned m = 0;
    int qa = c->rep_q[level][from], qb = c->rep_q[level][to];
    for (int d = 0; d < c->D; d++)
        if (c->outside[level * c->D + d] && c->dim_size[d] > 1 &&
            c->coord[qa * c->D + d] != c->coord[qb * c->D + d])
            m |= 1u << d;
    return m;
}

static int popcount(unsigned m) {
    int n = 0;
    for (; m; m &= m - 1) n++;
    return n;
}

/* ------------------------------------------------------------ phase A */

static void element_completed(Ctx *c, GCtx *g, int t, int64_t e);
static void reduction_step(Ctx *c, GCtx *g, StmtInfo *si, const int *p, bool record);

/* Whether the elements of si's result wait for a reduction collective. */
static bool waits_collective(const StmtInfo *si) {
    return si->partial && si->reduce_needed;
}

static void push_exec(Ctx *c, GCtx *g, int pos, const int *p) {
    if (g->nexec == g->cap_exec) {
        int ncap = g->cap_exec ? g->cap_exec * 2 : 256;
        g->execs = arena_realloc(c->a, g->execs, sizeof(Exec) * (size_t)g->cap_exec,
                                 sizeof(Exec) * (size_t)ncap);
        g->cap_exec = ncap;
    }
    Exec *x = &g->execs[g->nexec++];
    x->pos = pos;
    x->p = ARENA_ARRAY(c->a, int, g->nloops + 1);
    memcpy(x->p, p, sizeof(int) * (size_t)g->nloops);
}

static bool executes_at(const Ctx *c, const GCtx *g, const StmtInfo *si, const int *p) {
    for (int k = 0; k < g->nloops; k++) {
        const Loop *lp = &g->loops[k];
        int lim = si->uses[lp->index] ? si->trips[lp->level * c->I + lp->index] : 1;
        if (p[k] >= lim) return false;
    }
    return true;
}

/* Whether an element of an intermediate can be delivered to a reader:
 * complete, or (an online statement's result) holding its running value. */
static bool usable(const GCtx *g, int t, int64_t e) {
    return g->complete[t][e] || (g->running[t] && g->done[t][e] > 0);
}

/* Whether every element the execution reads of an intermediate of the
 * group is usable; the first one that is not is returned in *bt, *be. */
static bool ready(Ctx *c, GCtx *g, const StmtInfo *si, const int *p, int *bt, int64_t *be) {
    compute_qboxes(c, g, si, p);
    for (int q = 0; q < c->Q; q++) {
        if (!g->active[q]) continue;
        for (int k = 0; k < si->acc_count; k++) {
            const Access *a = &si->acc[k];
            if (!g->in_group[a->tensor]) continue;
            Box b = access_box(c, g, si, a, q, p, c->V);
            BoxIter it;
            int64_t e;
            bi_init(&it, &b, &c->stride[a->tensor * RANK]);
            while (bi_next(&it, &e))
                if (!usable(g, a->tensor, e)) {
                    *bt = a->tensor;
                    *be = e;
                    return false;
                }
        }
    }
    return true;
}

/* Whether fusion-level instance h holds what f holds of a result whose
 * reduced index is split over the dims `partial`: the reduction is an
 * allreduce over those dims, so every instance along them ends with the
 * combined result, an idle one (an empty share of an uneven split) too. */
static bool reduction_peer(const Ctx *c, const GCtx *g, unsigned partial, int f, int h) {
    int qf = c->rep_q[g->F][f], qh = c->rep_q[g->F][h];
    for (int d = 0; d < c->D; d++)
        if (c->outside[g->F * c->D + d] && !(partial & (1u << d)) &&
            c->coord[qf * c->D + d] != c->coord[qh * c->D + d])
            return false;
    return true;
}

static void exec_a(Ctx *c, GCtx *g, int pos, const int *p) {
    StmtInfo *si = g->si[pos];
    compute_qboxes(c, g, si, p);
    int F = g->F, Y = si->out.tensor;
    for (int q = 0; q < c->Q; q++) {
        if (!g->active[q]) continue;
        int f = c->anc[F][q];
        for (int k = 0; k < si->acc_count; k++) {
            const Access *a = &si->acc[k];
            int t = a->tensor;
            if (!g->in_group[t]) continue;
            Live *lv = live_of(c, g, f, t);
            uint8_t *prod = bytes_of(c, &g->pa_prod[f * c->T + t], t);
            uint8_t *got = bytes_of(c, &g->pa_fetch[f * c->T + t], t);
            Box b = access_box(c, g, si, a, q, p, c->V);
            BoxIter it;
            int64_t e;
            bi_init(&it, &b, &c->stride[t * RANK]);
            while (bi_next(&it, &e)) {
                lv->pending[e]++;
                if (!prod[e] && !got[e]) {
                    got[e] = 1;
                    g->remote_left[t][e]++;
                }
            }
        }
        uint8_t *prod = bytes_of(c, &g->pa_prod[f * c->T + Y], Y);
        Box b = access_box(c, g, si, &si->out, q, p, c->V);
        int64_t contrib = is_rep(c, si, q) ? reduced_points(c, g, si, q) : 0;
        BoxIter it;
        int64_t e;
        bi_init(&it, &b, &c->stride[Y * RANK]);
        while (bi_next(&it, &e)) {
            prod[e] = 1;
            for (int h = 0; h < c->ninst[F] && waits_collective(si); h++)
                if (h != f && reduction_peer(c, g, si->partial, f, h))
                    bytes_of(c, &g->pa_prod[h * c->T + Y], Y)[e] = 1;
            int64_t add = contrib_of(c, g, si, q, e, contrib);
            if (!add) continue;
            int64_t need = need_of(c, g, si, e);
            g->done[Y][e] += add;
            if (g->done[Y][e] == need && !waits_collective(si)) g->complete[Y][e] = 1;
            if (g->done[Y][e] > need)
                problem(c, "group %d: an element of %s gets more contributions than %s has points",
                        g->g, tname(c, Y), si->is->name);
        }
    }
    reduction_step(c, g, si, p, false);
    push_exec(c, g, pos, p);
}

typedef struct Deferred {
    int pos;
    int *p;
    int bt;
    int64_t be;
} Deferred;

/* The deferral list: executions that were due but not ready. */
typedef struct Pending {
    Deferred *def;
    int n, cap;
} Pending;

/* Runs (or defers) the executions due at the point p, then the deferred
 * ones that became ready, oldest first. */
static void run_point(Ctx *c, GCtx *g, const int *p, const bool *member, Pending *pd) {
    for (int pos = 0; pos < g->ns; pos++) {
        if (!member[pos]) continue;
        const StmtInfo *si = g->si[pos];
        if (!executes_at(c, g, si, p)) continue;
        int bt;
        int64_t be;
        if (ready(c, g, si, p, &bt, &be)) {
            exec_a(c, g, pos, p);
            for (int k = 0; k < pd->n;) {
                Deferred *d = &pd->def[k];
                if (!usable(g, d->bt, d->be) || !ready(c, g, g->si[d->pos], d->p, &d->bt, &d->be)) {
                    k++;
                    continue;
                }
                exec_a(c, g, d->pos, d->p);
                memmove(&pd->def[k], &pd->def[k + 1], sizeof *pd->def * (size_t)(pd->n - k - 1));
                pd->n--;
                k = 0;
            }
            continue;
        }
        if (pd->n == pd->cap) {
            int ncap = pd->cap ? pd->cap * 2 : 64;
            pd->def = arena_realloc(c->a, pd->def, sizeof *pd->def * (size_t)pd->cap,
                                    sizeof *pd->def * (size_t)ncap);
            pd->cap = ncap;
        }
        Deferred *d = &pd->def[pd->n++];
        d->pos = pos;
        d->p = ARENA_ARRAY(c->a, int, g->nloops + 1);
        memcpy(d->p, p, sizeof(int) * (size_t)g->nloops);
        d->bt = bt;
        d->be = be;
        if (!g->early_what) {
            char at[160] = "";
            for (int k = 0, n = 0; k < g->nloops && n < (int)sizeof at - 40; k++)
                n += snprintf(at + n, sizeof at - (size_t)n, "%s%s=%d", k ? " " : "",
                              c->op->indices[g->loops[k].index].name, p[k]);
            g->early_what = arena_printf(c->a, "%s at (%s) reads element %lld of %s", si->is->name,
                                         at, (long long)be, tname(c, bt));
        }
        g->early++;
    }
}

/* Walks loops q.. of the nest for the statements in member.  A statement
 * the lowering places after a loop (it waits for that loop to close: the
 * listing prints it there) runs in a pass of its own over that loop and
 * the loops inside it, once the loop's iterations are done; statements of
 * a later round (readers of a reduction completed in an earlier pass) in a
 * later pass. */
static void walk(Ctx *c, GCtx *g, int q, int *p, const bool *member, Pending *pd) {
    if (q == g->nloops) {
        run_point(c, g, p, member, pd);
        return;
    }
    bool *inner = g->walk_inner[q];
    bool any_after = false;
    for (int pos = 0; pos < g->ns; pos++) {
        inner[pos] = member[pos] && g->wait_at[pos] != q;
        any_after |= member[pos] && g->wait_at[pos] == q;
    }
    for (p[q] = 0; p[q] < g->loops[q].trips; p[q]++) walk(c, g, q + 1, p, inner, pd);
    if (any_after) {
        bool *pass = g->walk_pass[q];
        int round = -1;
        for (;;) {
            int next = -1;
            for (int pos = 0; pos < g->ns; pos++)
                if (member[pos] && g->wait_at[pos] == q && g->sg->round[pos] > round &&
                    (next < 0 || g->sg->round[pos] < next))
                    next = g->sg->round[pos];
            if (next < 0) break;
            for (int pos = 0; pos < g->ns; pos++)
                pass[pos] = member[pos] && g->wait_at[pos] == q && g->sg->round[pos] == next;
            for (p[q] = 0; p[q] < g->loops[q].trips; p[q]++) walk(c, g, q + 1, p, pass, pd);
            round = next;
        }
    }
    p[q] = 0;
}

static void phase_a(Ctx *c, GCtx *g) {
    int *p = ARENA_ARRAY(c->a, int, g->nloops + 1);
    bool *all = ARENA_ARRAY(c->a, bool, g->ns);
    for (int pos = 0; pos < g->ns; pos++) all[pos] = true;
    g->walk_inner = ARENA_ARRAY(c->a, bool *, g->nloops + 1);
    g->walk_pass = ARENA_ARRAY(c->a, bool *, g->nloops + 1);
    for (int q = 0; q < g->nloops; q++) {
        g->walk_inner[q] = ARENA_ARRAY(c->a, bool, g->ns);
        g->walk_pass[q] = ARENA_ARRAY(c->a, bool, g->ns);
    }
    Pending pd = {0};
    walk(c, g, 0, p, all, &pd);
    c->rep->groups[g->g].early = g->early;
    c->rep->groups[g->g].early_what = g->early_what;
    if (pd.n)
        problem(c,
                "group %d: %d execution(s) of %s never became ready (an element of %s is never "
                "complete)",
                g->g, pd.n, g->si[pd.def[0].pos]->is->name, tname(c, pd.def[0].bt));
}

/* ------------------------------------------------------------ phase B */

static Slot *slot_at(Ctx *c, GCtx *g, int mem, int inst, int t) {
    return &g->slots[mem][inst * c->T + t];
}

/* The result slot of tensor t at level k (k == V: the compute unit's
 * accumulator) of instance inst. */
static Slot *result_slot(Ctx *c, GCtx *g, int t, int k, int inst) {
    if (k == c->V) return &g->uacc[inst * c->T + t];
    return slot_at(c, g, mem_of(c, k, ROLE_OUTPUT), inst, t);
}

/* Whether statement si reads intermediate t otherwise than its maker left
 * it: another index on a dimension, or another dimension split over a
 * cluster dim. */
static bool seen_otherwise(const Ctx *c, const StmtInfo *si, int t) {
    const StmtInfo *mk = &c->si[c->op->tensors[t].producer];
    const Access *a = NULL;
    for (int k = 0; k < si->acc_count && !a; k++)
        if (si->acc[k].tensor == t) a = &si->acc[k];
    if (!a) return false;
    int dim_of_read[SCHED_MAX_DIMS], dim_of_made[SCHED_MAX_DIMS];
    for (int d = 0; d < c->D && d < SCHED_MAX_DIMS; d++) dim_of_read[d] = dim_of_made[d] = -1;
    for (int r = 0; r < a->rank && r < mk->out.rank; r++) {
        if (a->index[r] != mk->out.index[r]) return true;
        for (int d = 0; d < c->D && d < SCHED_MAX_DIMS; d++) {
            if (si->ss->split[d] == a->index[r]) dim_of_read[d] = r;
            if (mk->ss->split[d] == mk->out.index[r]) dim_of_made[d] = r;
        }
    }
    for (int d = 0; d < c->D && d < SCHED_MAX_DIMS; d++)
        if (c->dim_size[d] > 1 && dim_of_read[d] != dim_of_made[d]) return true;
    return false;
}

/* The slot an operand tile b of t takes in memory `mem` (level l < V) of
 * instance u.  Where t's result tile is held in the same memory, a reader
 * finds it there.  A reader that sees t otherwise than its maker left it
 * (renamed indices, another split: a relayout makes its copy) keeps its
 * own tile beside the result tile while the maker still has executions to
 * run (it writes that result tile again: evicting it would read its
 * partial contents back) or while that copy is the tile it needs; once the
 * maker is done, its next tile replaces the result tile.  A running value
 * (online) is read from the result tile itself: a copy would go stale. */
static Slot *operand_slot(Ctx *c, GCtx *g, const StmtInfo *si, int t, int l, int mem, int u,
                          const Box *b, bool *own) {
    Slot *res = slot_at(c, g, mem, u, t);
    Slot *mine = &g->rslots[mem][u * c->T + t];
    *own = false;
    if (!g->in_group[t] || g->running[t] || mem != mem_of(c, l, ROLE_OUTPUT) ||
        kind_of(g, t, l) != K_SLOT || !seen_otherwise(c, si, t))
        return res;
    int mp = c->si[c->op->tensors[t].producer].pos;
    *own = !(res->present && box_equal(&res->box, b)) &&
           (g->execs_left[mp] > 0 || (mine->present && box_equal(&mine->box, b)));
    return *own ? mine : res;
}

/* Whether slot sl of t holds element e. */
static bool slot_holds(const Ctx *c, const Slot *sl, int t, int64_t e) {
    return sl->present && sl->valid && sl->valid[e] && in_box(c, t, &sl->box, e);
}

static Slot *unit_in(const Ctx *c, GCtx *g, const StmtInfo *si, int q, int t) {
    return &g->uin[(si->pos * c->Q + q) * c->T + t];
}

static int parent_of(const Ctx *c, int k, int inst) {
    return k == c->V ? c->anc[c->V - 1][inst] : c->up[k][inst];
}

static void write_windows(Ctx *c, GCtx *g, int t, const int *fs, int n);

/* The bytes element e of t moves: its type's, or a partial sum's width
 * while its reduction is not complete. */
static double elem_moved(const Ctx *c, const GCtx *g, int t, int64_t e) {
    if (c->wide[t] == 1 || !g->in_group[t] || !g->complete[t] || g->complete[t][e]) return c->eb[t];
    return c->eb[t] * c->wide[t];
}

/* Writes tensor t's valid elements `valid` (in box b) into the holder at
 * level lt of instance pu: the outermost memory, the LIVE copy at the
 * fusion level or the enclosing result tile.  Returns the bytes. */
static double store_into(Ctx *c, GCtx *g, int t, int lt, int pu, const Box *b,
                         const uint8_t *valid) {
    int64_t e;
    BoxIter it;
    bi_init(&it, b, &c->stride[t * RANK]);
    Slot *ps = NULL;
    int kind = lt == 0 ? K_SLOT : kind_of(g, t, lt);
    if (lt > 0 && kind == K_SLOT) {
        ps = slot_at(c, g, mem_of(c, lt, ROLE_OUTPUT), pu, t);
        bool contains = ps->present;
        for (int r = 0; r < b->rank && contains; r++)
            contains = ps->box.lo[r] <= b->lo[r] && b->hi[r] <= ps->box.hi[r];
        if (!contains) {
            problem(c,
                    "group %d: a tile of %s is written back to level %d, which does not hold "
                    "the enclosing tile",
                    g->g, tname(c, t), lt);
            return 0;
        }
        ps->dirty = true;
        bytes_of(c, &ps->valid, t);
    } else if (lt > 0 && kind == K_NONE) {
        problem(c, "group %d: %s is written back to level %d, above its fusion level", g->g,
                tname(c, t), lt);
        return 0;
    }
    double bytes = 0;
    while (bi_next(&it, &e)) {
        if (!valid[e]) continue;
        bytes += elem_moved(c, g, t, e);
        if (lt == 0)
            l0_write(c, g, pu, t, e);
        else if (kind == K_LIVE)
            live_write(c, g, pu, t, e);
        else {
            ps->valid[e] = 1;
            bytes_of(c, &ps->fresh, t)[e] = 1;
        }
    }
    int mem = lt == 0          ? mem_of(c, 0, ROLE_OUTPUT)
              : kind == K_LIVE ? g->live_mem
                               : mem_of(c, lt, ROLE_OUTPUT);
    traffic(c, g, t, mem, pu, 0, bytes, false);
    return bytes;
}

/* Whether the holder at level lt of instance pu has element e of t (for
 * reading back partial sums). */
static bool held_at(Ctx *c, GCtx *g, int t, int lt, int pu, int64_t e) {
    if (lt == 0) return l0_has(c, pu, t, e);
    int kind = kind_of(g, t, lt);
    if (kind == K_LIVE) return live_of(c, g, pu, t)->valid[e];
    if (kind == K_NONE) return false;
    Slot *ps = slot_at(c, g, mem_of(c, lt, ROLE_OUTPUT), pu, t);
    return ps->present && ps->valid && ps->valid[e] && in_box(c, t, &ps->box, e);
}

/* Writes back the dirty result tiles of tensor t held by instances insts
 * at level k (V: compute units); children of one parent holding the same
 * tile (replicas, or partial results combined on the way) write it once. */
static void write_back(Ctx *c, GCtx *g, int t, int k, const int *insts, int n) {
    bool *done = g->flags_wb;
    memset(done, 0, sizeof(bool) * (size_t)n);
    int mem = k < c->V ? mem_of(c, k, ROLE_OUTPUT) : -1;
    for (int i = 0; i < n; i++) {
        if (done[i]) continue;
        Slot *cs = result_slot(c, g, t, k, insts[i]);
        int pu = parent_of(c, k, insts[i]);
        /* only what changed since the last write-back goes up: a tile
         * written back while it is still being filled (coherence before a
         * read) does not write its earlier elements again */
        double bytes = store_into(c, g, t, k - 1, pu, &cs->box, bytes_of(c, &cs->fresh, t));
        for (int j = i; j < n; j++) {
            if (done[j]) continue;
            Slot *o = result_slot(c, g, t, k, insts[j]);
            if (parent_of(c, k, insts[j]) != pu || !box_equal(&o->box, &cs->box)) continue;
            done[j] = true;
            o->dirty = false;
            uint8_t *fresh = bytes_of(c, &o->fresh, t);
            BoxIter it;
            int64_t e;
            bi_init(&it, &o->box, &c->stride[t * RANK]);
            while (bi_next(&it, &e)) fresh[e] = 0;
            traffic(c, g, t, mem, insts[j], bytes, 0, true);
        }
    }
}

/* Writes the dirty fusion-level result tiles (windows) of a leaving
 * intermediate to the level above; one write per parent and tile. */
static void write_windows(Ctx *c, GCtx *g, int t, const int *fs, int n) {
    bool *done = g->flags_win;
    memset(done, 0, sizeof(bool) * (size_t)n);
    int F = g->F;
    for (int i = 0; i < n; i++) {
        if (done[i]) continue;
        Live *lv = live_of(c, g, fs[i], t);
        int pu = c->up[F][fs[i]];
        double bytes = store_into(c, g, t, F - 1, pu, &lv->window, lv->valid);
        for (int j = i; j < n; j++) {
            if (done[j]) continue;
            Live *o = live_of(c, g, fs[j], t);
            if (c->up[F][fs[j]] != pu || !box_equal(&o->window, &lv->window)) continue;
            done[j] = true;
            o->window_dirty = false;
            traffic(c, g, t, g->live_mem, fs[j], bytes, 0, true);
        }
    }
}

/* Writes back every dirty copy of intermediate t held below instance inst
 * of `level` that overlaps `box` (NULL: all), deepest first, so that the
 * level holds the newest data (coherence before a load, and before a tile
 * is replaced or the group ends). */
static void flush_below(Ctx *c, GCtx *g, int t, int level, int inst, const Box *box) {
    if (!g->in_group[t]) return;
    for (int k = c->V; k > level; k--) {
        /* each level its own list: writing a tile back first brings up
         * what is newer below it (the recursion reaches inner levels
         * only, whose lists this loop has done with) */
        int *list = g->list_flush[k];
        int n = 0;
        if (k == c->V) {
            for (int q = 0; q < c->Q; q++) {
                Slot *a = &g->uacc[q * c->T + t];
                if (c->anc[level][q] == inst && a->present && a->dirty &&
                    box_overlaps(&a->box, box))
                    list[n++] = q;
            }
            if (n) write_back(c, g, t, k, list, n);
            continue;
        }
        int kind = kind_of(g, t, k);
        for (int u = 0; u < c->ninst[k]; u++) {
            if (c->anc[level][c->rep_q[k][u]] != inst) continue;
            if (kind == K_SLOT) {
                Slot *sl = slot_at(c, g, mem_of(c, k, ROLE_OUTPUT), u, t);
                if (sl->present && sl->dirty && box_overlaps(&sl->box, box)) list[n++] = u;
            } else if (kind == K_LIVE && g->leaves[t]) {
                Live *lv = live_of(c, g, u, t);
                if (lv->window_set && lv->window_dirty && box_overlaps(&lv->window, box))
                    list[n++] = u;
            }
        }
        if (!n) continue;
        /* a tile goes up whole: the parts of it that are newer below, and
         * lie outside the box asked for, come up into it first, or it
         * would write stale elements up and write them again later */
        for (int i = 0; i < n; i++) {
            Box whole = kind == K_SLOT ? slot_at(c, g, mem_of(c, k, ROLE_OUTPUT), list[i], t)->box
                                       : live_of(c, g, list[i], t)->window;
            flush_below(c, g, t, k, list[i], &whole);
        }
        if (kind == K_SLOT)
            write_back(c, g, t, k, list, n);
        else
            write_windows(c, g, t, list, n);
    }
}

static void slot_free(Ctx *c, GCtx *g, Slot *sl, int mem, int inst, int t) {
    if (!sl->present) return;
    if (sl->valid) {
        BoxIter it;
        int64_t e;
        bi_init(&it, &sl->box, &c->stride[t * RANK]);
        while (bi_next(&it, &e)) sl->valid[e] = 0;
    }
    if (sl->fresh) {
        BoxIter it;
        int64_t e;
        bi_init(&it, &sl->box, &c->stride[t * RANK]);
        while (bi_next(&it, &e)) sl->fresh[e] = 0;
    }
    occ_add(g, mem, inst, -(double)box_volume(&sl->box) * c->eb[t]);
    sl->present = sl->dirty = false;
}

static void slot_install(Ctx *c, GCtx *g, Slot *sl, int mem, int inst, int t, const Box *b) {
    sl->present = true;
    sl->dirty = false;
    sl->box = *b;
    bytes_of(c, &sl->valid, t);
    occ_add(g, mem, inst, (double)box_volume(b) * c->eb[t]);
}

/* Frees the slots of t in memory `mem` (level l) of instances insts, first
 * writing back what they and the levels below them hold that is newer. */
static void replace_batch(Ctx *c, GCtx *g, int t, int l, int mem, const int *insts, int n) {
    bool out_chain = mem == mem_of(c, l, ROLE_OUTPUT) && g->in_group[t];
    int nd = 0;
    for (int i = 0; i < n; i++) {
        Slot *sl = slot_at(c, g, mem, insts[i], t);
        if (!sl->present) continue;
        if (out_chain) flush_below(c, g, t, l, insts[i], &sl->box);
        if (sl->dirty) g->list_dirty[nd++] = insts[i];
    }
    if (nd) write_back(c, g, t, l, g->list_dirty, nd);
    for (int i = 0; i < n; i++) slot_free(c, g, slot_at(c, g, mem, insts[i], t), mem, insts[i], t);
}

/* Whether an operand slot lacks an element some compute tile below it
 * needs in this execution. */
static bool missing_needed(Ctx *c, GCtx *g, const StmtInfo *si, int t, const Slot *sl, int l, int u,
                           const int *p) {
    if (!sl->valid) return true;
    for (int q = 0; q < c->Q; q++) {
        if (!g->active[q] || c->anc[l][q] != u) continue;
        for (int k = 0; k < si->acc_count; k++) {
            if (si->acc[k].tensor != t) continue;
            Box b = access_box(c, g, si, &si->acc[k], q, p, c->V);
            BoxIter it;
            int64_t e;
            bi_init(&it, &b, &c->stride[t * RANK]);
            while (bi_next(&it, &e))
                if (!sl->valid[e]) return true;
        }
    }
    return false;
}

/* An element of a tensor from another group (or an op input) that the
 * outermost memory of instance u0 lacks: received from the instance that
 * holds it (a layout change between groups). */
static bool fetch_outer(Ctx *c, GCtx *g, const StmtInfo *si, int t, int u0, int64_t e,
                        const int *p) {
    int best = -1, best_n = 0;
    for (int h = 0; h < c->ninst[0]; h++) {
        if (h == u0 || !l0_has(c, h, t, e)) continue;
        int n = popcount(differing_dims(c, 0, u0, h));
        if (best < 0 || n < best_n) {
            best = h;
            best_n = n;
        }
    }
    if (best < 0) return false;
    bytes_of(c, &c->l0_valid[u0 * c->T + t], t)[e] = 1;
    int acc = 0;
    while (acc < si->acc_count && si->acc[acc].tensor != t) acc++;
    uint64_t tile = consumer_tile_key(c, g, si, &si->acc[acc], p, 1);
    note_relayout(c, g, tile, si->st * MAX_ACC + acc, u0, t, c->eb[t],
                  differing_dims(c, 0, u0, best));
    return true;
}

/* Makes operand t of an execution resident at level l (V: in the compute
 * units) on every instance that needs it. */
static void ensure_operand(Ctx *c, GCtx *g, const StmtInfo *si, int t, MemRole role, int l,
                           const int *p) {
    int V = c->V, ls = l - 1;
    int mem = l < V ? mem_of(c, l, role) : -1;
    int n = 0;
    for (int u = 0; u < c->ninst[l]; u++) {
        int q = g->act_rep[l][u];
        if (q < 0) continue;
        Box b = tensor_box(c, g, si, t, q, p, l);
        /* newer copies of an intermediate below this level come up first:
         * where its result tile shares this memory, that is the tile needed */
        if (l < V && g->in_group[t]) flush_below(c, g, t, l, u, &b);
        bool own = false;
        Slot *sl = l < V ? operand_slot(c, g, si, t, l, mem, u, &b, &own) : unit_in(c, g, si, u, t);
        /* a reader served by the result tile drops its own copy */
        if (l < V && !own) slot_free(c, g, &g->rslots[mem][u * c->T + t], mem, u, t);
        bool replace = !sl->present || !box_equal(&sl->box, &b);
        if (!replace && !missing_needed(c, g, si, t, sl, l, u, p)) continue;
        g->list_req[n] = u;
        g->req_box[n] = b;
        g->req_replace[n] = replace;
        g->req_own[n] = own;
        g->req_slot[n] = sl;
        n++;
    }
    if (!n) return;
    int nr = 0;
    for (int i = 0; i < n; i++) {
        if (!g->req_replace[i]) continue;
        if (g->req_own[i])
            slot_free(c, g, g->req_slot[i], mem, g->list_req[i], t);
        else
            g->list_dirty[nr++] = g->list_req[i];
    }
    if (l < V) {
        /* replace_batch uses list_dirty itself: hand it a copy */
        int *copy = g->list_copy2;
        memcpy(copy, g->list_dirty, sizeof(int) * (size_t)nr);
        replace_batch(c, g, t, l, mem, copy, nr);
    } else {
        for (int i = 0; i < nr; i++) {
            Slot *sl = unit_in(c, g, si, g->list_dirty[i], t);
            slot_free(c, g, sl, -1, 0, t);
        }
    }
    bool *taken = g->flags_req;
    memset(taken, 0, sizeof(bool) * (size_t)n);
    bool inter = g->in_group[t];
    int src_kind = ls == 0 ? K_SLOT : inter ? kind_of(g, t, ls) : K_SLOT;
    int src_mem = ls == 0              ? mem_of(c, 0, role)
                  : src_kind == K_LIVE ? g->live_mem
                                       : mem_of(c, ls, role);
    for (int i = 0; i < n; i++) {
        if (taken[i]) continue;
        int u = g->list_req[i];
        int pu = l == V ? c->anc[V - 1][u] : c->up[l][u];
        const Box *b = &g->req_box[i];
        if (inter) flush_below(c, g, t, ls, pu, b);
        Slot *first = g->req_slot[i];
        if (g->req_replace[i] && !first->present) slot_install(c, g, first, mem, u, t, b);
        int smem = ls > 0 ? mem_of(c, ls, role) : -1;
        Slot *src = (ls > 0 && src_kind == K_SLOT) ? slot_at(c, g, smem, pu, t) : NULL;
        Slot *src_own = src && inter ? &g->rslots[smem][pu * c->T + t] : NULL;
        Live *lv = (ls > 0 && src_kind == K_LIVE) ? live_of(c, g, pu, t) : NULL;
        /* what the source can deliver: data it holds, and of an
         * intermediate only complete elements */
        int64_t cnt = 0, e;
        BoxIter it;
        bi_init(&it, b, &c->stride[t * RANK]);
        uint8_t *dst = bytes_of(c, &first->valid, t);
        int64_t nd = 0;
        while (bi_next(&it, &e)) {
            if (!g->req_replace[i] && dst[e]) continue;
            if (inter && !usable(g, t, e)) continue;
            bool has;
            if (ls == 0) {
                has = l0_has(c, pu, t, e);
                if (!has && !inter) has = fetch_outer(c, g, si, t, pu, e, p);
            } else if (lv) {
                has = lv->valid[e];
            } else {
                has = slot_holds(c, src, t, e) || (src_own && slot_holds(c, src_own, t, e));
            }
            if (!has) continue;
            g->deliver_at[nd++] = e;
            cnt++;
            if (ls == 0) l0_touch(c, g, pu, t, e, role);
        }
        double bytes = (double)cnt * c->eb[t];
        traffic(c, g, t, src_mem, pu, bytes, 0, false);
        unsigned dims = 0;
        int members = 0;
        for (int j = i; j < n; j++) {
            if (taken[j]) continue;
            int uj = g->list_req[j];
            int pj = l == V ? c->anc[V - 1][uj] : c->up[l][uj];
            bool same = j == i || (pj == pu && g->req_replace[i] == g->req_replace[j] &&
                                   box_equal(&g->req_box[j], b));
            if (!same) continue;
            taken[j] = true;
            members++;
            if (j != i) dims |= differing_dims(c, l, u, uj);
            Slot *sl = g->req_slot[j];
            if (g->req_replace[j] && !sl->present) slot_install(c, g, sl, mem, uj, t, b);
            uint8_t *v = bytes_of(c, &sl->valid, t);
            for (int64_t k = 0; k < nd; k++) v[g->deliver_at[k]] = 1;
            traffic(c, g, t, mem, uj, 0, bytes, true);
        }
        if (members > 1 && dims && cnt) note_broadcast(g, t, dims, bytes);
    }
}

/* Installs result tiles (boxes[i] for insts[i], level k; V: accumulators)
 * and reads back the partial sums their parents hold; children of one
 * parent installing the same tile read it once. */
static void install_results(Ctx *c, GCtx *g, int t, int k, const int *insts, const Box *boxes,
                            int n) {
    int mem = k < c->V ? mem_of(c, k, ROLE_OUTPUT) : -1;
    bool *taken = g->flags_req;
    memset(taken, 0, sizeof(bool) * (size_t)n);
    for (int i = 0; i < n; i++) {
        if (taken[i]) continue;
        int pu = parent_of(c, k, insts[i]);
        int64_t nd = 0, e;
        BoxIter it;
        bi_init(&it, &boxes[i], &c->stride[t * RANK]);
        double bytes = 0;
        while (bi_next(&it, &e))
            if (held_at(c, g, t, k - 1, pu, e)) {
                g->deliver_at[nd++] = e;
                bytes += elem_moved(c, g, t, e);
            }
        int lt = k - 1;
        int src_mem = lt == 0                       ? mem_of(c, 0, ROLE_OUTPUT)
                      : kind_of(g, t, lt) == K_LIVE ? g->live_mem
                                                    : mem_of(c, lt, ROLE_OUTPUT);
        traffic(c, g, t, src_mem, pu, bytes, 0, false);
        for (int j = i; j < n; j++) {
            if (taken[j] || parent_of(c, k, insts[j]) != pu || !box_equal(&boxes[j], &boxes[i]))
                continue;
            taken[j] = true;
            Slot *sl = result_slot(c, g, t, k, insts[j]);
            slot_install(c, g, sl, mem, insts[j], t, &boxes[j]);
            for (int64_t x = 0; x < nd; x++) sl->valid[g->deliver_at[x]] = 1;
            traffic(c, g, t, mem, insts[j], 0, bytes, true);
        }
    }
}

/* The fusion-level result tile of a leaving intermediate read in its own
 * group: when it moves, the old one is written to the level above. */
static void ensure_windows(Ctx *c, GCtx *g, const StmtInfo *si, const int *p) {
    int F = g->F, Y = si->out.tensor, n = 0;
    int *fs = g->list_req;
    for (int f = 0; f < c->ninst[F]; f++) {
        int q = g->act_rep[F][f];
        if (q < 0) continue;
        Box b = access_box(c, g, si, &si->out, q, p, F);
        Live *lv = live_of(c, g, f, Y);
        if (lv->window_set && box_equal(&lv->window, &b)) continue;
        fs[n] = f;
        g->req_box[n++] = b;
    }
    int nd = 0;
    for (int i = 0; i < n; i++) {
        Live *lv = live_of(c, g, fs[i], Y);
        if (!lv->window_set) continue;
        flush_below(c, g, Y, F, fs[i], &lv->window);
        if (lv->window_dirty) g->list_dirty[nd++] = fs[i];
    }
    if (nd) write_windows(c, g, Y, g->list_dirty, nd);
    for (int i = 0; i < n; i++) {
        Live *lv = live_of(c, g, fs[i], Y);
        Box old = lv->window;
        bool had = lv->window_set;
        lv->window = g->req_box[i];
        lv->window_set = true;
        lv->window_dirty = false;
        BoxIter it;
        int64_t e;
        if (had) {
            bi_init(&it, &old, &c->stride[Y * RANK]);
            while (bi_next(&it, &e))
                if (lv->valid[e]) live_recheck(c, g, fs[i], Y, e);
        }
        /* partial sums written above and since dropped come back */
        int pu = c->up[F][fs[i]];
        int64_t cnt = 0;
        double bytes = 0;
        bi_init(&it, &lv->window, &c->stride[Y * RANK]);
        while (bi_next(&it, &e))
            if (!lv->valid[e] && held_at(c, g, Y, F - 1, pu, e)) {
                lv->valid[e] = 1;
                live_recheck(c, g, fs[i], Y, e);
                bytes += elem_moved(c, g, Y, e);
                cnt++;
            }
        if (cnt) {
            int src = F - 1 == 0 ? mem_of(c, 0, ROLE_OUTPUT) : mem_of(c, F - 1, ROLE_OUTPUT);
            traffic(c, g, Y, src, pu, bytes, 0, false);
            traffic(c, g, Y, g->live_mem, fs[i], 0, bytes, true);
        }
    }
}

/* Makes the result tiles of an execution resident at every level where
 * its result is held, outermost first, and in the compute units. */
static void ensure_result(Ctx *c, GCtx *g, const StmtInfo *si, const int *p) {
    int Y = si->out.tensor, V = c->V;
    for (int l = 1; l < V; l++) {
        int kind = kind_of(g, Y, l);
        if (kind == K_NONE) continue;
        if (kind == K_LIVE) {
            if (g->leaves[Y]) ensure_windows(c, g, si, p);
            continue;
        }
        int mem = mem_of(c, l, ROLE_OUTPUT), n = 0;
        int *insts = g->list_req;
        for (int u = 0; u < c->ninst[l]; u++) {
            int q = g->act_rep[l][u];
            if (q < 0) continue;
            Box b = access_box(c, g, si, &si->out, q, p, l);
            Slot *sl = slot_at(c, g, mem, u, Y);
            if (sl->present && box_equal(&sl->box, &b)) continue;
            insts[n] = u;
            g->req_box[n++] = b;
        }
        if (!n) continue;
        int *copy = g->list_copy;
        memcpy(copy, insts, sizeof(int) * (size_t)n);
        Box *boxes = g->box_copy;
        memcpy(boxes, g->req_box, sizeof(Box) * (size_t)n);
        replace_batch(c, g, Y, l, mem, copy, n);
        install_results(c, g, Y, l, copy, boxes, n);
    }
    int n = 0, nd = 0;
    int *qs = g->list_copy;
    Box *boxes = g->box_copy;
    for (int q = 0; q < c->Q; q++) {
        if (!g->active[q]) continue;
        Box b = access_box(c, g, si, &si->out, q, p, V);
        Slot *a = &g->uacc[q * c->T + Y];
        if (a->present && box_equal(&a->box, &b)) continue;
        qs[n] = q;
        boxes[n++] = b;
        if (a->present && a->dirty) g->list_dirty[nd++] = q;
    }
    if (nd) write_back(c, g, Y, V, g->list_dirty, nd);
    for (int i = 0; i < n; i++) slot_free(c, g, &g->uacc[qs[i] * c->T + Y], -1, 0, Y);
    if (n) install_results(c, g, Y, V, qs, boxes, n);
}

/* An intermediate element the consumer's fusion-level memory does not
 * hold (no instance under it produced it): received from an instance that
 * did, the nearest one. */
static void fetch_inner(Ctx *c, GCtx *g, const StmtInfo *si, int k, int f, int64_t e,
                        const int *p) {
    int t = si->acc[k].tensor, F = g->F;
    int best = -1, best_n = 0;
    for (int h = 0; h < c->ninst[F]; h++) {
        if (h == f || !live_of(c, g, h, t)->produced[e]) continue;
        int n = popcount(differing_dims(c, F, f, h));
        if (best < 0 || n < best_n) {
            best = h;
            best_n = n;
        }
    }
    Live *lv = live_of(c, g, f, t);
    lv->fetched[e] = 1;
    if (best < 0) {
        problem(c, "group %d: %s reads an element of %s that no instance produced", g->g,
                si->is->name, tname(c, t));
        return;
    }
    g->remote_left[t][e]--;
    if (F == 0) {
        l0_write(c, g, f, t, e);
    } else {
        lv->valid[e] = 1;
        live_recheck(c, g, f, t, e);
        for (int h = 0; h < c->ninst[F]; h++)
            if (h != f && live_of(c, g, h, t)->valid[e]) live_recheck(c, g, h, t, e);
    }
    uint64_t tile = consumer_tile_key(c, g, si, &si->acc[k], p, F > 1 ? F : 1);
    note_relayout(c, g, tile, si->st * MAX_ACC + k, f, t, c->eb[t], differing_dims(c, F, f, best));
}

static void element_completed(Ctx *c, GCtx *g, int t, int64_t e) {
    g->complete[t][e] = 1;
    if (g->F == 0) return;
    for (int f = 0; f < c->ninst[g->F]; f++) {
        Live *lv = &g->live[f * c->T + t];
        if (lv->valid && lv->valid[e]) live_recheck(c, g, f, t, e);
    }
}

/* The reduction collective of (a): the tile of the result this execution
 * belongs to is combined when every execution with its key has run; only
 * then are its elements complete (a reader waits for the collective).
 * Phase B records the event. */
/* A running value (online) changes with every execution of its maker:
 * the copies its readers took into their units go stale, and each reader
 * takes the new value from the innermost memory again (docs/cost-model.md
 * 7.3), which first brings it there out of the maker's unit. */
static void drop_stale_running(Ctx *c, GCtx *g, const StmtInfo *maker, int Y, const Box *b) {
    for (int k = 0; k < g->ns; k++) {
        const StmtInfo *rs = g->si[k];
        if (rs == maker) continue;
        bool reads = false;
        for (int a = 0; a < rs->acc_count && !reads; a++) reads = rs->acc[a].tensor == Y;
        if (!reads) continue;
        for (int q = 0; q < c->Q; q++) {
            Slot *sl = unit_in(c, g, rs, q, Y);
            if (sl->present && box_overlaps(&sl->box, b)) slot_free(c, g, sl, -1, 0, Y);
        }
    }
}

/* The allreduce of element e of si's result also lands on the instances
 * along its dims that had nothing to add (idle ones of an uneven split):
 * in their fusion-level memory (network bytes, not memory traffic). */
static void deliver_to_idle_peers(Ctx *c, GCtx *g, const StmtInfo *si, int q, int64_t e) {
    int F = g->F, Y = si->out.tensor, f = c->anc[F][q];
    for (int h = 0; h < c->ninst[F]; h++) {
        if (h == f || !reduction_peer(c, g, si->partial, f, h)) continue;
        bool idle = true;
        for (int q2 = 0; q2 < c->Q && idle; q2++) idle = !(g->active[q2] && c->anc[F][q2] == h);
        if (!idle) continue;
        if (F == 0) {
            bytes_of(c, &c->l0_valid[h * c->T + Y], Y)[e] = 1;
            continue;
        }
        Live *lv = live_of(c, g, h, Y);
        if (bytes_of(c, &lv->valid, Y)[e]) continue;
        lv->valid[e] = 1;
        live_recheck(c, g, h, Y, e);
    }
}

static void reduction_step(Ctx *c, GCtx *g, StmtInfo *si, const int *p, bool record) {
    if (!si->partial || !si->reduce_needed) return;
    int64_t key = 0;
    for (int k = 0; k < si->key_count; k++) {
        const Loop *lp = &g->loops[si->key_loops[k]];
        key = key * si->trips[lp->level * c->I + lp->index] + p[si->key_loops[k]];
    }
    if (++si->key_done[key] != si->key_expected) return;
    int Y = si->out.tensor;
    double most = 0;
    for (int q = 0; q < c->Q; q++) {
        Box b;
        b.rank = si->out.rank;
        for (int r = 0; r < si->out.rank; r++)
            range_of(c, g, si, si->out.index[r], q, p, c->V, si->key_level[si->out.index[r]],
                     &b.lo[r], &b.hi[r]);
        double v = (double)box_volume(&b) * c->eb[Y];
        if (v > most) most = v;
        BoxIter it;
        int64_t e;
        bi_init(&it, &b, &c->stride[Y * RANK]);
        while (bi_next(&it, &e)) {
            if (g->complete[Y][e] || g->done[Y][e] != need_of(c, g, si, e)) continue;
            if (record) {
                element_completed(c, g, Y, e);
                deliver_to_idle_peers(c, g, si, q, e);
            } else {
                g->complete[Y][e] = 1;
            }
        }
    }
    if (most <= 0 || !record) return;
    VerifyCollective *vc = coll_entry(c, g->g, Y, VC_REDUCE, si->partial);
    vc->executions += 1;
    vc->bytes += most;
}

static void exec_b(Ctx *c, GCtx *g, const Exec *x) {
    StmtInfo *si = g->si[x->pos];
    const int *p = x->p;
    int I = c->I, F = g->F, Y = si->out.tensor;
    g->execs_left[x->pos]--;
    compute_qboxes(c, g, si, p);
    /* intermediates produced under another fusion-level instance */
    for (int k = 0; k < si->acc_count; k++) {
        int t = si->acc[k].tensor;
        if (!g->in_group[t]) continue;
        for (int f = 0; f < c->ninst[F]; f++) {
            if (g->act_rep[F][f] < 0) continue;
            Live *lv = live_of(c, g, f, t);
            for (int q = 0; q < c->Q; q++) {
                if (!g->active[q] || c->anc[F][q] != f) continue;
                Box b = access_box(c, g, si, &si->acc[k], q, p, c->V);
                BoxIter it;
                int64_t e;
                bi_init(&it, &b, &c->stride[t * RANK]);
                while (bi_next(&it, &e))
                    if (!lv->produced[e] && !lv->fetched[e]) fetch_inner(c, g, si, k, f, e, p);
            }
        }
    }
    /* operands, outermost level first, then the compute units */
    for (int k = 0; k < si->acc_count; k++) {
        int t = si->acc[k].tensor;
        bool seen = false;
        for (int j = 0; j < k; j++) seen |= si->acc[j].tensor == t;
        if (seen) continue;
        for (int l = 1; l < c->V; l++)
            if (!g->in_group[t] || l > F) ensure_operand(c, g, si, t, si->acc[k].role, l, p);
        ensure_operand(c, g, si, t, si->acc[k].role, c->V, p);
    }
    ensure_result(c, g, si, p);
    /* the computation */
    for (int q = 0; q < c->Q; q++) {
        if (!g->active[q]) continue;
        double points = 1;
        for (int k = 0; k < si->idx_count; k++) {
            int i = si->idx[k];
            points *= g->qhi[q * I + i] - g->qlo[q * I + i];
        }
        g->work[x->pos][q] += points * si->ops;
        Slot *a = &g->uacc[q * c->T + Y];
        a->dirty = true;
        Live *lv = live_of(c, g, c->anc[F][q], Y);
        int64_t contrib = is_rep(c, si, q) ? reduced_points(c, g, si, q) : 0;
        Box b = access_box(c, g, si, &si->out, q, p, c->V);
        if (g->running[Y]) drop_stale_running(c, g, si, Y, &b);
        BoxIter it;
        int64_t e;
        bi_init(&it, &b, &c->stride[Y * RANK]);
        while (bi_next(&it, &e)) {
            a->valid[e] = 1;
            bytes_of(c, &a->fresh, Y)[e] = 1;
            lv->produced[e] = 1;
            for (int h = 0; h < c->ninst[F] && waits_collective(si); h++)
                if (h != c->anc[F][q] && reduction_peer(c, g, si->partial, c->anc[F][q], h))
                    live_of(c, g, h, Y)->produced[e] = 1;
            int64_t add = contrib_of(c, g, si, q, e, contrib);
            if (!add) continue;
            g->done[Y][e] += add;
            if (g->done[Y][e] == need_of(c, g, si, e) && !waits_collective(si))
                element_completed(c, g, Y, e);
        }
    }
    /* reads: the last one frees a fused intermediate */
    if (F > 0)
        for (int k = 0; k < si->acc_count; k++) {
            int t = si->acc[k].tensor;
            if (!g->in_group[t]) continue;
            for (int q = 0; q < c->Q; q++) {
                if (!g->active[q]) continue;
                int f = c->anc[F][q];
                Live *lv = live_of(c, g, f, t);
                Box b = access_box(c, g, si, &si->acc[k], q, p, c->V);
                BoxIter it;
                int64_t e;
                bi_init(&it, &b, &c->stride[t * RANK]);
                while (bi_next(&it, &e)) {
                    lv->pending[e]--;
                    if (lv->pending[e] == 0) live_recheck(c, g, f, t, e);
                }
            }
        }
    reduction_step(c, g, si, p, true);
    flush_broadcasts(c, g);
}

/* ------------------------------------------------------------ a group */

static void setup_reduction(Ctx *c, GCtx *g, StmtInfo *si) {
    int Y = si->out.tensor, I = c->I;
    si->reduce_needed = g->read_in[Y] || g->leaves[Y];
    si->key_count = 0;
    si->key_expected = 1;
    si->key_space = 1;
    for (int i = 0; i < RANK * 2; i++) si->key_level[i] = 0;
    if (!si->partial || !si->reduce_needed) return;
    int G = g->read_in[Y] ? g->F : 1;
    int first_red = g->nloops;
    for (int k = 0; k < g->nloops && first_red == g->nloops; k++) {
        const Loop *lp = &g->loops[k];
        if (si->reduced[lp->index] && si->trips[lp->level * I + lp->index] > 1) first_red = k;
    }
    for (int k = 0; k < g->nloops; k++) {
        const Loop *lp = &g->loops[k];
        int trips = si->uses[lp->index] ? si->trips[lp->level * I + lp->index] : 1;
        if (trips <= 1) continue;
        bool key = k < first_red && lp->level <= G && si->lhs[lp->index] && si->key_count < 64;
        if (key) {
            si->key_loops[si->key_count++] = k;
            si->key_space *= trips;
        } else {
            si->key_expected *= trips;
        }
    }
    si->key_done = ARENA_ARRAY(c->a, int, si->key_space);
    /* the deepest key level of each index of the result, through key_level */
}

static int cmp_rel(const void *a, const void *b) {
    const RelayoutEntry *x = a, *y = b;
    if (x->used != y->used) return x->used ? -1 : 1;
    if (x->acc != y->acc) return x->acc < y->acc ? -1 : 1;
    if (x->tile != y->tile) return x->tile < y->tile ? -1 : 1;
    return 0;
}

static void finish_relayouts(Ctx *c, GCtx *g) {
    if (!g->rel_count) return;
    qsort(g->rel, (size_t)g->rel_cap, sizeof *g->rel, cmp_rel);
    for (int k = 0; k < g->rel_count;) {
        int j = k;
        double most = 0;
        unsigned dims = 0;
        while (j < g->rel_count && g->rel[j].acc == g->rel[k].acc &&
               g->rel[j].tile == g->rel[k].tile) {
            if (g->rel[j].bytes > most) most = g->rel[j].bytes;
            dims |= g->rel[j].dims;
            j++;
        }
        VerifyCollective *v = coll_entry(c, g->g, g->rel[k].tensor, VC_RELAYOUT, dims);
        v->executions += 1;
        v->bytes += most;
        k = j;
    }
}

/* The elements a restriction masks are complete from the start: no
 * point contributes to them, and a reader under the same restriction
 * takes them as masked. */
static void masked_complete(Ctx *c, GCtx *g) {
    for (int k = 0; k < g->ns; k++) {
        const StmtInfo *si = g->si[k];
        if (!si->masked) continue;
        for (int64_t e = 0; e < c->telems[si->out.tensor]; e++)
            if (need_of(c, g, si, e) == 0) g->complete[si->out.tensor][e] = 1;
    }
}

static void run_group(Ctx *c, int gi) {
    const Schedule *s = c->s;
    const SchedGroup *sg = &s->groups[gi];
    int I = c->I, T = c->T, V = c->V, Q = c->Q;
    GCtx G;
    memset(&G, 0, sizeof G);
    GCtx *g = &G;
    g->g = gi;
    g->sg = sg;
    g->F = sg->level;
    g->ns = sg->stmt_count;
    g->si = ARENA_ARRAY(c->a, StmtInfo *, g->ns + 1);
    for (int k = 0; k < g->ns; k++) {
        g->si[k] = &c->si[sg->stmts[k]];
        g->si[k]->pos = k;
    }
    g->in_group = ARENA_ARRAY(c->a, bool, T);
    g->leaves = ARENA_ARRAY(c->a, bool, T);
    g->read_in = ARENA_ARRAY(c->a, bool, T);
    for (int k = 0; k < g->ns; k++) g->in_group[g->si[k]->out.tensor] = true;
    g->running = ARENA_ARRAY(c->a, bool, T);
    for (int k = 0; k < g->ns && c->s->m->online; k++)
        g->running[g->si[k]->out.tensor] = c->s->m->online[g->si[k]->is->id];
    for (int t = 0; t < T; t++) g->leaves[t] = c->op->tensors[t].kind == TK_OUTPUT;
    for (int st = 0; st < c->op->stmt_count; st++) {
        const StmtInfo *si = &c->si[st];
        bool mine = s->stmts[st].group == gi;
        for (int k = 0; k < si->acc_count; k++) {
            int t = si->acc[k].tensor;
            if (mine) g->read_in[t] = true;
            int prod = c->op->tensors[t].producer;
            if (!mine && prod >= 0 && s->stmts[prod].group == gi) g->leaves[t] = true;
        }
    }
    /* the loop nest: level 1 .. V, each in the group's order */
    g->loop_at = ARENA_ARRAY(c->a, int, (V + 1) * I);
    for (int k = 0; k < (V + 1) * I; k++) g->loop_at[k] = -1;
    g->loops = ARENA_ARRAY(c->a, Loop, (V + 1) * I);
    for (int l = 1; l <= V; l++)
        for (int k = 0; k < sg->order_len[l]; k++) {
            int i = sg->order[l * I + k], trips = 1;
            for (int j = 0; j < g->ns; j++)
                if (g->si[j]->uses[i] && g->si[j]->trips[l * I + i] > trips)
                    trips = g->si[j]->trips[l * I + i];
            if (trips <= 1 || g->loop_at[l * I + i] >= 0) continue;
            g->loop_at[l * I + i] = g->nloops;
            g->loops[g->nloops++] = (Loop){l, i, trips};
        }
    g->wait_at = ARENA_ARRAY(c->a, int, g->ns);
    for (int k = 0; k < g->ns; k++) {
        int w = sg->wait_loop[k];
        g->wait_at[k] =
            w < sg->loop_count ? g->loop_at[sg->loops[w].level * I + sg->loops[w].index] : -1;
    }
    double timeline = 1;
    for (int k = 0; k < g->nloops; k++) timeline *= g->loops[k].trips;
    c->rep->groups[gi].timeline = timeline;
    /* element state */
    g->done = ARENA_ARRAY(c->a, int64_t *, T);
    g->complete = ARENA_ARRAY(c->a, uint8_t *, T);
    g->remote_left = ARENA_ARRAY(c->a, int32_t *, T);
    for (int t = 0; t < T; t++)
        if (g->in_group[t]) {
            g->done[t] = ARENA_ARRAY(c->a, int64_t, c->telems[t]);
            g->complete[t] = ARENA_ARRAY(c->a, uint8_t, c->telems[t]);
            g->remote_left[t] = ARENA_ARRAY(c->a, int32_t, c->telems[t]);
        }
    masked_complete(c, g);
    int nF = c->ninst[g->F];
    g->live = ARENA_ARRAY(c->a, Live, nF * T);
    g->live_mem = g->F > 0 ? mem_of(c, g->F, ROLE_OUTPUT) : mem_of(c, 0, ROLE_OUTPUT);
    g->pa_prod = ARENA_ARRAY(c->a, uint8_t *, nF * T);
    g->pa_fetch = ARENA_ARRAY(c->a, uint8_t *, nF * T);
    g->qlo = ARENA_ARRAY(c->a, int, Q *I + 1);
    g->qhi = ARENA_ARRAY(c->a, int, Q *I + 1);
    g->active = ARENA_ARRAY(c->a, bool, Q);
    g->act_rep = ARENA_ARRAY(c->a, int *, V + 1);
    int most = Q;
    for (int l = 0; l <= V; l++) {
        g->act_rep[l] = ARENA_ARRAY(c->a, int, c->ninst[l]);
        if (c->ninst[l] > most) most = c->ninst[l];
    }
    g->list_flush = ARENA_ARRAY(c->a, int *, V + 1);
    for (int l = 0; l <= V; l++) g->list_flush[l] = ARENA_ARRAY(c->a, int, most + 1);
    g->list_dirty = ARENA_ARRAY(c->a, int, most + 1);
    g->list_req = ARENA_ARRAY(c->a, int, most + 1);
    g->list_copy = ARENA_ARRAY(c->a, int, most + 1);
    g->list_copy2 = ARENA_ARRAY(c->a, int, most + 1);
    g->flags_wb = ARENA_ARRAY(c->a, bool, most + 1);
    g->flags_win = ARENA_ARRAY(c->a, bool, most + 1);
    g->flags_req = ARENA_ARRAY(c->a, bool, most + 1);
    g->req_box = ARENA_ARRAY(c->a, Box, most + 1);
    g->box_copy = ARENA_ARRAY(c->a, Box, most + 1);
    g->req_replace = ARENA_ARRAY(c->a, bool, most + 1);
    g->req_own = ARENA_ARRAY(c->a, bool, most + 1);
    g->req_slot = ARENA_ARRAY(c->a, Slot *, most + 1);
    int64_t biggest = 1;
    for (int t = 0; t < T; t++)
        if (c->telems[t] > biggest) biggest = c->telems[t];
    g->deliver_at = ARENA_ARRAY(c->a, int64_t, biggest);
    for (int k = 0; k < g->ns; k++) {
        StmtInfo *si = g->si[k];
        setup_reduction(c, g, si);
        if (!si->partial || !si->reduce_needed) continue;
        for (int kk = 0; kk < si->key_count; kk++) {
            const Loop *lp = &g->loops[si->key_loops[kk]];
            if (lp->level > si->key_level[lp->index]) si->key_level[lp->index] = lp->level;
        }
    }

    /* phase A: the order of executions, what each instance reads */
    phase_a(c, g);
    for (int k = 0; k < g->ns; k++)
        if (g->si[k]->key_done)
            memset(g->si[k]->key_done, 0, sizeof(int) * (size_t)g->si[k]->key_space);
    for (int t = 0; t < T; t++)
        if (g->in_group[t]) {
            memset(g->done[t], 0, sizeof(int64_t) * (size_t)c->telems[t]);
            memset(g->complete[t], 0, (size_t)c->telems[t]);
        }
    masked_complete(c, g);

    /* phase B: the memories */
    g->slots = ARENA_ARRAY(c->a, Slot *, c->M);
    g->rslots = ARENA_ARRAY(c->a, Slot *, c->M);
    g->occ = ARENA_ARRAY(c->a, double *, c->M);
    g->peak = ARENA_ARRAY(c->a, double *, c->M);
    g->rd = ARENA_ARRAY(c->a, double *, c->M);
    g->wr = ARENA_ARRAY(c->a, double *, c->M);
    for (int m = 0; m < c->M; m++) {
        int n = c->ninst[c->mem_level[m]];
        g->slots[m] = ARENA_ARRAY(c->a, Slot, n * T);
        g->rslots[m] = ARENA_ARRAY(c->a, Slot, n * T);
        g->occ[m] = ARENA_ARRAY(c->a, double, n);
        g->peak[m] = ARENA_ARRAY(c->a, double, n);
        g->rd[m] = ARENA_ARRAY(c->a, double, n);
        g->wr[m] = ARENA_ARRAY(c->a, double, n);
    }
    g->uin = ARENA_ARRAY(c->a, Slot, g->ns * Q * T);
    g->uacc = ARENA_ARRAY(c->a, Slot, Q * T);
    g->l0_touch = ARENA_ARRAY(c->a, uint8_t *, c->ninst[0] * T);
    g->work = ARENA_ARRAY(c->a, double *, g->ns);
    for (int k = 0; k < g->ns; k++) g->work[k] = ARENA_ARRAY(c->a, double, Q);
    g->execs_left = ARENA_ARRAY(c->a, int, g->ns);
    for (int k = 0; k < g->nexec; k++) g->execs_left[g->execs[k].pos]++;
    for (int k = 0; k < g->nexec; k++) exec_b(c, g, &g->execs[k]);
    /* the end of the group: everything newer goes up */
    for (int t = 0; t < T; t++)
        if (g->in_group[t])
            for (int u0 = 0; u0 < c->ninst[0]; u0++) flush_below(c, g, t, 0, u0, NULL);
    finish_relayouts(c, g);

    /* what must hold at the end */
    for (int t = 0; t < T; t++) {
        if (!g->in_group[t]) continue;
        const StmtInfo *prod = &c->si[c->op->tensors[t].producer];
        for (int64_t e = 0; e < c->telems[t]; e++)
            if (g->done[t][e] != need_of(c, g, prod, e)) {
                problem(c, "group %d: an element of %s gets %lld of its %lld contributions", gi,
                        tname(c, t), (long long)g->done[t][e], (long long)need_of(c, g, prod, e));
                break;
            }
        if (!g->leaves[t]) continue;
        for (int64_t e = 0; e < c->telems[t]; e++) {
            bool out = false;
            for (int u0 = 0; u0 < c->ninst[0] && !out; u0++) out = l0_has(c, u0, t, e);
            /* an element its restriction masks in a skipped tile is never
             * computed, so never written */
            if (!out && prod->masked && need_of(c, g, prod, e) == 0) continue;
            if (!out) {
                problem(c, "group %d: an element of %s never reaches %s", gi, tname(c, t),
                        c->arch->levels[0].name);
                break;
            }
        }
    }
    VerifyGroup *vg = &c->rep->groups[gi];
    vg->executions = g->nexec;
    vg->memories = ARENA_ARRAY(c->a, VerifyMemory, c->M + 1);
    for (int m = 0; m < c->M; m++) {
        VerifyMemory *vm = &vg->memories[m];
        int n = c->ninst[c->mem_level[m]];
        vm->traffic_min = INFINITY;
        for (int u = 0; u < n; u++) {
            if (g->peak[m][u] > vm->peak_bytes) vm->peak_bytes = g->peak[m][u];
            if (g->rd[m][u] > vm->read_bytes) vm->read_bytes = g->rd[m][u];
            if (g->wr[m][u] > vm->written_bytes) vm->written_bytes = g->wr[m][u];
            double tr = g->rd[m][u] + g->wr[m][u];
            if (tr > vm->traffic_bytes) vm->traffic_bytes = tr;
            if (tr < vm->traffic_min) vm->traffic_min = tr;
        }
        double cap = c->arch->memories[m].capacity;
        vm->exceeded = isfinite(cap) && cap > 0 && vm->peak_bytes > cap * (1 + 1e-12);
    }
    for (int k = 0; k < g->ns; k++) {
        int st = g->si[k]->st;
        double hi = 0, lo = INFINITY;
        for (int q = 0; q < Q; q++) {
            if (g->work[k][q] > hi) hi = g->work[k][q];
            if (g->work[k][q] < lo) lo = g->work[k][q];
        }
        c->rep->work[st] = hi;
        c->rep->work_min[st] = lo;
    }
}

/* ------------------------------------------------------ entry points */

double verify_cost(const Schedule *s) {
    const IrOp *op = s->op;
    const IrArch *arch = s->arch;
    int I = op->index_count, V = s->levels;
    double Q = 1, cost = 0;
    for (int d = 0; d < arch->dim_count; d++) Q *= (double)arch->dims[d].size;
    for (int st = 0; st < op->stmt_count; st++) {
        const IrStmt *is = &op->stmts[st];
        const SchedStmt *ss = &s->stmts[st];
        int idx[2 * IR_MAX_RANK];
        int n = ir_stmt_indices(is, idx);
        double points = 1;
        for (int k = 0; k < n; k++) {
            double parts = 1;
            for (int d = 0; d < arch->dim_count; d++)
                if (ss->split[d] == idx[k]) parts *= (double)arch->dims[d].size;
            points *= ceil((double)op->indices[idx[k]].extent / parts);
        }
        cost += points * Q * (2 + is->input_count);
    }
    for (int g = 0; g < s->group_count; g++) {
        const SchedGroup *sg = &s->groups[g];
        double timeline = 1;
        for (int l = 1; l <= V; l++)
            for (int i = 0; i < I; i++) {
                double trips = 1;
                for (int k = 0; k < sg->stmt_count; k++) {
                    int st = sg->stmts[k];
                    if (!ir_stmt_uses_index(&op->stmts[st], i)) continue;
                    double t = s->stmts[st].trips[l * I + i];
                    if (t > trips) trips = t;
                }
                timeline *= trips;
            }
        cost += timeline;
    }
    /* the element arrays of every instance must fit too */
    double elems = 0;
    for (int t = 0; t < op->tensor_count; t++) {
        double n = 1;
        for (int r = 0; r < op->tensors[t].rank; r++) n *= (double)op->tensors[t].extent[r];
        elems += n;
    }
    double inst = 0;
    for (int l = 0; l <= V; l++) {
        double n = 1;
        for (int d = 0; d < arch->dim_count; d++)
            if (l == V || arch->dims[d].cluster < arch->levels[l].clusters_outside)
                n *= (double)arch->dims[d].size;
        inst += n;
    }
    if (elems * inst / 16 > cost) cost = elems * inst / 16;
    return cost;
}

bool verify_schedule(Arena *scratch, const Schedule *s, VerifyReport *out) {
    memset(out, 0, sizeof *out);
    out->cost = verify_cost(s);
    if (out->cost > (double)VERIFY_MAX_STEPS || s->arch->dim_count > 31) return false;
    out->ran = true;
    Ctx c;
    memset(&c, 0, sizeof c);
    c.a = scratch;
    c.s = s;
    c.op = s->op;
    c.arch = s->arch;
    c.rep = out;
    const char *trace = getenv("CMT_VERIFY_TRACE");
    c.trace = trace && *trace && strcmp(trace, "0") != 0;
    setup(&c);
    out->group_count = s->group_count;
    out->groups = ARENA_ARRAY(scratch, VerifyGroup, s->group_count + 1);
    out->work = ARENA_ARRAY(scratch, double, c.op->stmt_count + 1);
    out->work_min = ARENA_ARRAY(scratch, double, c.op->stmt_count + 1);
    for (int g = 0; g < s->group_count; g++) run_group(&c, g);
    return true;
}

/* ------------------------------------------------------- comparison */

const char *verify_class_name(VerifyClass c) {
    switch (c) {
    case VC_REDUCE: return "reduce";
    case VC_BROADCAST: return "broadcast";
    case VC_RELAYOUT: return "relayout";
    }
    return "?";
}

const char *verify_diff_kind_name(VerifyDiffKind k) {
    switch (k) {
    case VD_PROBLEM: return "execution";
    case VD_EARLY: return "placement";
    case VD_WORK: return "work";
    case VD_FOOTPRINT: return "footprint";
    case VD_CAPACITY: return "capacity";
    case VD_TRAFFIC: return "traffic";
    case VD_COLL_COUNT: return "collective count";
    case VD_COLL_BYTES: return "collective bytes";
    case VD_COLL_MISSING: return "collective missing";
    case VD_COLL_EXTRA: return "collective extra";
    }
    return "?";
}

static bool same_number(double a, double b) {
    double scale = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= 1e-9 * (scale > 1 ? scale : 1);
}

typedef struct DiffList {
    Arena *a;
    VerifyDiff *items;
    int count, cap;
} DiffList;

static void add_diff(DiffList *l, VerifyDiffKind kind, int group, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_diff(DiffList *l, VerifyDiffKind kind, int group, const char *fmt, ...) {
    if (l->count == l->cap) {
        int ncap = l->cap ? l->cap * 2 : 16;
        l->items = arena_realloc(l->a, l->items, sizeof(VerifyDiff) * (size_t)l->cap,
                                 sizeof(VerifyDiff) * (size_t)ncap);
        l->cap = ncap;
    }
    va_list ap;
    va_start(ap, fmt);
    l->items[l->count++] = (VerifyDiff){kind, group, arena_vprintf(l->a, fmt, ap), 0, 0};
    va_end(ap);
}

/* The class of an analytic collective node, or -1 for the broadcast half
 * of a reduce + broadcast pair (counted with its reduce). */
static int node_class(const SchedNode *n) {
    switch (n->coll) {
    case CK_ALLREDUCE:
    case CK_REDUCE:
    case CK_REDUCE_SCATTER: return VC_REDUCE;
    case CK_BROADCAST: return n->phase == 3 ? -1 : n->from_owner ? VC_RELAYOUT : VC_BROADCAST;
    case CK_ALLGATHER:
    case CK_ALLTOALL: return VC_RELAYOUT;
    }
    return -1;
}

/* Bytes per rank and execution of an analytic node, as the interpreter
 * counts them (relayouts: what one rank receives). */
static double node_rank_bytes(const Schedule *s, const SchedNode *n) {
    if (node_class(n) == VC_RELAYOUT && n->received > 0) return n->received;
    if (node_class(n) != VC_RELAYOUT || n->from_owner) return n->bytes;
    double P = 1;
    for (int j = 0; j < n->dim_count; j++) P *= (double)s->arch->dims[n->dims[j]].size;
    return n->bytes * (P - 1) / P;
}

static unsigned dims_mask(const int *dims, int count, const IrArch *arch) {
    unsigned m = 0;
    for (int j = 0; j < count; j++)
        if (arch->dims[dims[j]].size > 1) m |= 1u << dims[j];
    return m;
}

/* The model's need without the spare tiles of double buffering, and with
 * what it writes in place (docs/cost-model.md section 2): the interpreter
 * runs one tile after another and holds one of each, and frees an
 * intermediate's element at its last read, before the result written over
 * it arrives; so the two compare single-buffered, both sharing. */
static double analytic_footprint(const Schedule *s, int g, int mem) {
    double need = 0;
    const SchedGroup *sg = &s->groups[g];
    for (int k = 0; k < sg->footprint_count; k++) {
        const Footprint *f = &sg->footprints[k];
        if (f->memory == mem) need += footprint_tile_bytes(f) * f->live_tiles - f->in_place;
    }
    return need;
}

static bool analytic_excess(const Schedule *s, int g, int mem) {
    for (int k = 0; k < s->excess_count; k++)
        if (s->excess[k].group == g && s->excess[k].memory == mem) return true;
    return false;
}

/* The analytic collectives of group g summed by (tensor, class, dims),
 * in the interpreter's terms (executions per instance, bytes per rank). */
static int analytic_collectives(Arena *a, const Schedule *s, int g, VerifyCollective **out) {
    const IrArch *arch = s->arch;
    int first = s->groups[g].first_node, last = s->node_count, n = 0;
    VerifyCollective *list = ARENA_ARRAY(a, VerifyCollective, last - first + 1);
    for (int ni = first; ni < last; ni++) {
        const SchedNode *o = &s->nodes[ni];
        int cls = o->kind == SN_COLLECTIVE ? node_class(o) : -1;
        if (o->group != g || cls < 0) continue;
        unsigned mask = dims_mask(o->dims, o->dim_count, arch);
        VerifyCollective *v = NULL;
        for (int k = 0; k < n && !v; k++)
            if (list[k].tensor == o->tensor && (int)list[k].cls == cls &&
                dims_mask(list[k].dims, list[k].dim_count, arch) == mask)
                v = &list[k];
        if (!v) {
            v = &list[n++];
            v->group = g;
            v->tensor = o->tensor;
            v->cls = (VerifyClass)cls;
            for (int j = 0; j < o->dim_count; j++)
                if (arch->dims[o->dims[j]].size > 1) v->dims[v->dim_count++] = o->dims[j];
        }
        v->executions += o->count;
        v->bytes += o->count * node_rank_bytes(s, o);
    }
    *out = list;
    return n;
}

/* The interpreter's entry for an analytic one, marked in `matched`. */
static const VerifyCollective *find_collective(const VerifyReport *r, const VerifyCollective *n,
                                               bool *matched) {
    for (int k = 0; k < r->collective_count; k++) {
        const VerifyCollective *v = &r->collectives[k];
        if (v->group != n->group || v->tensor != n->tensor || v->cls != n->cls ||
            v->dim_count != n->dim_count ||
            memcmp(v->dims, n->dims, sizeof(int) * (size_t)n->dim_count) != 0)
            continue;
        if (matched) matched[k] = true;
        return v;
    }
    return NULL;
}

static const char *coll_name(Arena *a, const Schedule *s, const VerifyCollective *v) {
    return arena_printf(a, "%s %s over %s", verify_class_name(v->cls),
                        s->op->tensors[v->tensor].name,
                        sched_dims_text(a, s, v->dims, v->dim_count));
}

int verify_compare(Arena *a, const Schedule *s, const VerifyReport *r, VerifyDiff **out) {
    DiffList l = {a, NULL, 0, 0};
    *out = NULL;
    if (!r->ran) return 0;
    const IrArch *arch = s->arch;
    for (int k = 0; k < r->problem_count; k++) add_diff(&l, VD_PROBLEM, -1, "%s", r->problems[k]);
    for (int g = 0; g < s->group_count; g++)
        if (r->groups[g].early > 0)
            add_diff(&l, VD_EARLY, g,
                     "group %d: %.6g execution(s) are placed before their in-group inputs are "
                     "complete (the interpreter deferred them); first: %s",
                     g, r->groups[g].early, r->groups[g].early_what);
    for (int st = 0; st < s->op->stmt_count; st++) {
        double an = s->stmts[st].work, in = r->work[st];
        const char *unit = s->op->stmts[st].cls == SC_CONTRACTION ? "MAC" : "op";
        if (!same_number(an, in))
            add_diff(&l, VD_WORK, s->stmts[st].group,
                     "work of %s: analytic %.6g %s per compute instance, interpreter %.6g "
                     "(busiest instance; idlest %.6g)",
                     s->op->stmts[st].name, an, unit, in, r->work_min[st]);
    }
    for (int g = 0; g < s->group_count; g++) {
        const VerifyGroup *vg = &r->groups[g];
        for (int m = 0; m < arch->memory_count; m++) {
            const VerifyMemory *vm = &vg->memories[m];
            const char *mn = arch->memories[m].name;
            double fp = analytic_footprint(s, g, m);
            if (fp < vm->peak_bytes && !same_number(fp, vm->peak_bytes))
                add_diff(&l, VD_FOOTPRINT, g,
                         "group %d, %s: analytic footprint %.6g B is below the interpreter's "
                         "peak %.6g B",
                         g, mn, fp, vm->peak_bytes);
            if (vm->exceeded && !analytic_excess(s, g, m) &&
                vm->peak_bytes > arch->memories[m].capacity * (1 + 1e-12))
                add_diff(&l, VD_CAPACITY, g,
                         "group %d, %s: accepted, but executing it holds %.6g B at its peak "
                         "against a capacity of %.6g B",
                         g, mn, vm->peak_bytes, arch->memories[m].capacity);
            double an = s->groups[g].mem_bytes[m];
            if (!same_number(an, vm->traffic_bytes)) {
                add_diff(&l, VD_TRAFFIC, g,
                         "group %d, %s: analytic traffic %.6g B per instance, interpreter %.6g B "
                         "(read %.6g B, written %.6g B)",
                         g, mn, an, vm->traffic_bytes, vm->read_bytes, vm->written_bytes);
                l.items[l.count - 1].analytic = an;
                l.items[l.count - 1].measured = vm->traffic_bytes;
            }
        }
        /* collectives by (tensor, class, dims): executions and bytes */
        VerifyCollective *an;
        int na = analytic_collectives(a, s, g, &an);
        bool *matched = ARENA_ARRAY(a, bool, r->collective_count + 1);
        for (int k = 0; k < na; k++) {
            const VerifyCollective *n = &an[k];
            const char *what = coll_name(a, s, n);
            const VerifyCollective *vc = find_collective(r, n, matched);
            if (!vc) {
                add_diff(&l, VD_COLL_EXTRA, g,
                         "group %d: analytic %s runs %.6g time(s), %.6g B per rank in all; the "
                         "interpreter never needs it",
                         g, what, n->executions, n->bytes);
                continue;
            }
            if (!same_number(n->executions, vc->executions)) {
                add_diff(&l, VD_COLL_COUNT, g,
                         "group %d: %s runs %.6g time(s) in the analytic model, %.6g in the "
                         "interpreter",
                         g, what, n->executions, vc->executions);
                l.items[l.count - 1].analytic = n->executions;
                l.items[l.count - 1].measured = vc->executions;
            }
            if (!same_number(n->bytes, vc->bytes)) {
                add_diff(&l, VD_COLL_BYTES, g,
                         "group %d: %s moves %.6g B per rank in the analytic model, %.6g B in "
                         "the interpreter",
                         g, what, n->bytes, vc->bytes);
                l.items[l.count - 1].analytic = n->bytes;
                l.items[l.count - 1].measured = vc->bytes;
            }
        }
        for (int k = 0; k < r->collective_count; k++) {
            const VerifyCollective *v = &r->collectives[k];
            if (v->group != g || matched[k]) continue;
            add_diff(&l, VD_COLL_MISSING, g,
                     "group %d: the interpreter runs %s %.6g time(s), %.6g B per rank in all; the "
                     "analytic model has no such collective",
                     g, coll_name(a, s, v), v->executions, v->bytes);
            /* covered when the model runs one of the same tensor and class
             * over these dims and more, as often and as large (a wider
             * group of the busiest instances at the same steps): analytic
             * is then its bytes, else -1 */
            l.items[l.count - 1].analytic = -1;
            l.items[l.count - 1].measured = v->bytes;
            for (int k2 = 0; k2 < na; k2++) {
                const VerifyCollective *n = &an[k2];
                bool wider = n->tensor == v->tensor && n->cls == v->cls &&
                             n->executions >= v->executions && n->bytes >= v->bytes;
                for (int j = 0; j < v->dim_count && wider; j++) {
                    bool has = false;
                    for (int i = 0; i < n->dim_count; i++) has |= n->dims[i] == v->dims[j];
                    wider = has;
                }
                if (wider) l.items[l.count - 1].analytic = n->bytes;
            }
        }
    }
    *out = l.items;
    return l.count;
}

/* ------------------------------------------------------------ listing */

static const char *fmt_b(Arena *a, double v) {
    return unit_format(a, v, (UnitDim){BU_BYTE, BU_NONE});
}

/* "4 x 128 B": executions and bytes per rank of each. */
static const char *coll_text(Arena *a, const VerifyCollective *v) {
    return arena_printf(a, "%.6g x %s", v->executions,
                        fmt_b(a, v->executions > 0 ? v->bytes / v->executions : 0));
}

int verify_print(FILE *out, Arena *a, const Schedule *s) {
    VerifyReport r;
    fprintf(out, "\nverification of %s by the reference interpreter (docs/cost-model.md)\n",
            s->m->name);
    if (s->op->route_count) {
        /* which rows a slot holds depends on the data: the interpreter
         * executes index arithmetic, not a routing */
        fprintf(out,
                "  note: not verified: op %s routes tokens to experts (`by`), whose rows depend "
                "on the data; tests/unit/test_routing.c checks its exchanges by hand\n",
                s->op->name);
        return 0;
    }
    for (int st = 0; st < s->op->stmt_count; st++)
        for (int d = 0; d < s->arch->dim_count; d++)
            if (s->stmts[st].joint[d][0] >= 0) {
                /* an instance's run of cells is not a range per index,
                 * the interpreter's instances */
                fprintf(out,
                        "  note: not verified: statement %s deals (%s, %s) jointly over %s, and "
                        "an instance's run of cells is no range per index; "
                        "tests/unit/test_joint.c checks the deal by hand\n",
                        s->op->stmts[st].name, s->op->indices[s->stmts[st].split[d]].name,
                        s->op->indices[s->stmts[st].joint[d][0]].name, s->arch->dims[d].name);
                return 0;
            }
    if (!verify_schedule(a, s, &r)) {
        fprintf(out,
                "  note: too large to verify: about %.3g element steps, the interpreter's limit "
                "is %ld\n",
                r.cost, (long)VERIFY_MAX_STEPS);
        return 0;
    }
    VerifyDiff *d;
    int n = verify_compare(a, s, &r, &d);
    const IrArch *arch = s->arch;
    for (int g = 0; g < s->group_count; g++) {
        const SchedGroup *sg = &s->groups[g];
        fprintf(out, "  group %d [", g);
        for (int k = 0; k < sg->stmt_count; k++)
            fprintf(out, "%s%s", k ? " " : "", s->op->stmts[sg->stmts[k]].name);
        fprintf(out, "]  %.0f executions over %.0f loop points\n", r.groups[g].executions,
                r.groups[g].timeline);
        fprintf(out, "    %-12s %14s %14s %14s %14s\n", "memory", "footprint", "interpreter",
                "traffic", "interpreter");
        for (int m = 0; m < arch->memory_count; m++) {
            const VerifyMemory *vm = &r.groups[g].memories[m];
            fprintf(out, "    %-12s %14s %14s %14s %14s%s\n", arch->memories[m].name,
                    fmt_b(a, analytic_footprint(s, g, m)), fmt_b(a, vm->peak_bytes),
                    fmt_b(a, sg->mem_bytes[m]), fmt_b(a, vm->traffic_bytes),
                    vm->exceeded ? "  over capacity" : "");
        }
        for (int k = 0; k < sg->stmt_count; k++) {
            int st = sg->stmts[k];
            fprintf(out, "    work %-8s %14.6g %14.6g %s per compute instance\n",
                    s->op->stmts[st].name, s->stmts[st].work, r.work[st],
                    s->op->stmts[st].cls == SC_CONTRACTION ? "MAC" : "op");
        }
        VerifyCollective *an;
        int na = analytic_collectives(a, s, g, &an);
        bool *shown = ARENA_ARRAY(a, bool, r.collective_count + 1);
        for (int k = 0; k < na; k++) {
            const VerifyCollective *v = find_collective(&r, &an[k], shown);
            fprintf(out, "    %-28s analytic %s, interpreter %s\n", coll_name(a, s, &an[k]),
                    coll_text(a, &an[k]), v ? coll_text(a, v) : "none");
        }
        for (int k = 0; k < r.collective_count; k++)
            if (r.collectives[k].group == g && !shown[k])
                fprintf(out, "    %-28s analytic none, interpreter %s\n",
                        coll_name(a, s, &r.collectives[k]), coll_text(a, &r.collectives[k]));
    }
    if (r.uneven)
        fprintf(out, "  note: uneven shares (%s): some instances idle or get less\n", r.uneven);
    for (int k = 0; k < n; k++)
        fprintf(out, "  disagreement (%s): %s\n", verify_diff_kind_name(d[k].kind), d[k].text);
    if (n)
        fprintf(out, "verify: %d disagreement%s\n", n, n == 1 ? "" : "s");
    else
        fprintf(out, "verify: OK\n");
    return n;
}
