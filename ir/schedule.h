/* schedule.h — the lowered schedule of one mapping: per statement the
 * extents, tiles and loop trips at every level; fusion groups with their
 * loop nests; and the nodes (load, store, compute, collective, boundary),
 * each with bytes, work, latency, energy and the reason it exists.
 *
 * Level numbering: 0 is the outermost memory, arch->level_count - 1 the
 * innermost; the pseudo-level arch->level_count is the compute unit.  The
 * loops "at level l" walk the tiles of level l inside one tile of level
 * l - 1 (so `order GLB` orders the loops that step through GLB tiles, and
 * a listing shows them running at the level above). */
#ifndef CMT_SCHEDULE_H
#define CMT_SCHEDULE_H

#include "ir.h"

typedef enum SchedKind { SN_LOAD, SN_STORE, SN_COMPUTE, SN_COLLECTIVE, SN_BOUNDARY } SchedKind;
const char *sched_kind_name(SchedKind k);

typedef enum CollKind {
    CK_ALLREDUCE,
    CK_REDUCE,
    CK_REDUCE_SCATTER,
    CK_ALLGATHER,
    CK_ALLTOALL,
    CK_BROADCAST
} CollKind;
const char *coll_kind_name(CollKind k);

/* Where a value shown in a listing came from. */
typedef enum Provenance { PV_GIVEN, PV_DEFAULT, PV_DERIVED } Provenance;
const char *provenance_name(Provenance p);

typedef enum Bound { BOUND_COMPUTE, BOUND_MEMORY, BOUND_NETWORK } Bound;
const char *bound_name(Bound b);
/* What limits a group or a mapping: the largest of its compute, memory and
 * network times (compute on a tie). */
Bound dominant_bound(double compute_s, double memory_s, double network_s);

/* What something costs: a fusion group (SchedGroup, GroupCost), a whole
 * mapping (Schedule, EvalResult) or one of the optimizer's candidate
 * groups (OptCost).  One record, embedded wherever costs live, so they are
 * copied whole and summed by cost_add.  A plain value: the per-level times
 * (sized to the arch) live beside it in the arena, never inside it, so a
 * copy never points into memory that another arena owns. */
typedef struct Cost {
    double latency_s;    /* a group: one instance, launch included (before
                            repeat); a mapping: the groups' summed, times repeat */
    double compute_s;    /* work / throughput, summed over the statements */
    double memory_s;     /* the levels' times: the slowest (overlap full or
                            tiles) or their sum (overlap none) */
    double network_s;    /* the collectives' times summed */
    double fill_drain_s; /* overlap: what the stages other than the slowest
                            add (0 under overlap none) */
    double stall_s;      /* overlap: the transfers of tiles held once for want
                            of room for the next (double buffering), which
                            the units wait for */
    double energy_j;     /* the three below summed; a mapping's times repeat */
    double compute_energy_j, memory_energy_j, network_energy_j; /* one repeat */
    Bound bound; /* the largest of the compute stage, memory and network */
} Cost;
/* Adds every time and energy of `part` to `sum` (the bound is left alone:
 * it is not a sum). */
void cost_add(Cost *sum, const Cost *part);

/* How a tensor lies along one cluster dim after its producer ran. */
typedef enum LayoutKind {
    LAY_REPLICATED, /* every instance along the dim holds all of it */
    LAY_SPLIT,      /* split by one of its indices */
    LAY_PARTIAL     /* partial results of a reduction split over the dim */
} LayoutKind;

typedef struct Layout {
    LayoutKind kind;
    int index; /* LAY_SPLIT: the tensor's index; LAY_PARTIAL: reduced */
} Layout;

#define SCHED_MAX_DIMS 16

typedef struct SchedNode {
    SchedKind kind;
    int group;
    int stmt;                 /* -1 when none (boundary) */
    int tensor;               /* -1 for compute of nothing */
    int from_level, to_level; /* load/store; boundary: the level it crosses */
    int memory;               /* IrMemory id at the inner end (role split), -1 */
    const IrCompute *unit;    /* compute */
    CollKind coll;
    ReduceOp reduce_op;
    int dims[SCHED_MAX_DIMS];
    int dim_count;
    int net_outer, net_inner; /* collectives: the levels between which the
                                 dims that run copies of it at once count
                                 (their sharing of links) */
    int depth;                /* index into the group's loop list of the innermost
                                 enclosing loop; -1 outside every loop */
    bool after_inner;         /* runs after the loops nested inside `depth` close:
                                 a reduction's collective needs every tile of the
                                 reduced index first */
    double received;          /* relayouts: bytes the busiest rank receives per
                                 execution, when the exchange is uneven (0: as
                                 the collective's formula spreads them) */
    bool from_owner;          /* a relayout in which every tile the reader takes
                                 lies in one instance's share: a broadcast from
                                 that owner (coll CK_BROADCAST) */
    double bytes;             /* per instance and execution */
    double count;             /* executions per instance */
    double ops;               /* MACs or element ops per instance, all executions */
    double latency_s;         /* per instance, all executions */
    double energy_j;          /* all instances, all executions */
    double byte_hops;         /* collectives: per collective group and execution */
    double chunk_extra_s;     /* collectives cut into chunks: what one execution
                                 takes more than uncut, q t(n/q) - t(n) (s) */
    double chunks;            /* collectives under `overlap tiles`: the pieces
                                 each execution is cut into (1 otherwise) */
    bool rescale;             /* compute: the corrections of an online reduction
                                 (docs/cost-model.md 7.3), not the statement */
    bool once_per_step;       /* a weight gradient's reduction under micro-batches
                                 or a pipeline: after the last micro-batch, not
                                 in its group (docs/cost-model.md 13.2) */
    int position;             /* statement's position in its group, for ordering */
    int phase;                /* load 0, broadcast 1, transition 1, compute 2,
                                 reduction 3, store 4, boundary 5 */
    int seq;                  /* creation order, the last tie-break */
    const char *reason;       /* NULL unless text was asked for */
} SchedNode;

typedef struct SchedLoop {
    int level; /* the loop steps tiles of this level */
    int index;
    double trips;
    double step;   /* tile of `level` */
    double extent; /* range walked: the busiest instance's share of the tile of
                      level - 1 */
    Provenance order_prov;
} SchedLoop;

/* A memory's tile footprint in one group, by tensor (for messages).  A
 * tensor made in the group and held at its fusion level keeps every tile
 * that must survive an enclosing loop (docs/cost-model.md section 2):
 * live_tiles of them, live across the loop at live_loop (-1 when one tile
 * is live), waiting for statement waiter (-1: its own partial sums). */
typedef struct Footprint {
    int memory;
    int tensor;
    double bytes;
    double live_tiles;
    int live_loop;
    int waiter;
    int reader; /* a reader's own copy in its own layout or index order
                   (another split, or renamed indices), -1 for the maker's */
    /* double buffering (docs/cost-model.md section 2): in a group that
     * overlaps its outermost tiles, a tile refilled `refills` times (the
     * visits after the first; 0 when it never changes or the level is a
     * stream level) is held twice, this one and the next, when the memory
     * has room (spare_tiles 1, counted in bytes); else it is `exposed`:
     * held once, so each refill waits for its transfer (pass_cost) */
    double refills;
    double spare_tiles;
    bool exposed;
    /* in place (docs/cost-model.md section 2): the bytes of this tile
     * written over the tile of `host`, an input of the same statement
     * that no later statement reads; they take no room of their own */
    int host;
    double in_place;
} Footprint;

/* The room a footprint takes in its memory: its tiles less what it
 * writes over its host's. */
static inline double footprint_need(const Footprint *f) {
    return f->bytes - f->in_place;
}

/* The bytes of one tile of a footprint (its live tiles and spare tile
 * hold one each). */
static inline double footprint_tile_bytes(const Footprint *f) {
    return f->bytes / (f->live_tiles + f->spare_tiles);
}

typedef struct CapacityExcess {
    int group;
    int memory;
    double need, capacity;
    Span span;
} CapacityExcess;

/* The memory a training step holds on one device (an instance of the
 * outermost memory), in bytes, over the mapping's repeats (layers). */
/* What a step holds per device in the outermost memory: a training step
 * (`phase train`) or a serving step (`serve`, whose caches persist from
 * step to step), and a training step's time by phase. */
typedef struct SchedTraining {
    bool present; /* a `phase train` or a `serve` mapping */
    bool serving; /* the latter: weights and caches only */
    int memory;   /* the outermost memory */
    double weights, gradients, optimizer, activations, caches, total;
    double capacity; /* the memory's, per instance */
    double *held;    /* [tensor]: the bytes of it counted above, per repeat */
    /* the step's time by phase (pass_step): the latencies of the groups
     * whose first statement is of that role, over the repeats (s) */
    double forward_s, recompute_s, backward_s, update_s;
    /* the collectives' own times over the repeats (s): the reduction of
     * weight gradients (data parallelism) and every other one */
    double gradient_reduce_s, other_collectives_s;
    /* model work: 2 x the MACs of the forward and gradient contractions
     * (not the recomputed ones) over every instance and repeat (FLOP);
     * achieved rate (FLOP/s) and the matrix units' peak (FLOP/s) */
    double model_flop, achieved_flops, peak_flops;
} SchedTraining;

/* A serving step's metrics (`serve prefill|decode of B`, pass_serving,
 * docs/cost-model.md 14). */
typedef struct SchedServing {
    bool present;
    double step_s;       /* the mapping's latency: TTFT (prefill) or TPOT (decode) */
    double sequences;    /* B */
    double devices;      /* instances of the outermost memory, every stage */
    double per_s;        /* sequences / step_s: tokens/s (decode), prompts/s (prefill) */
    double per_s_device; /* per_s / devices */
} SchedServing;

/* A step of micro-batches, over a pipeline's stages or not (pass_stages,
 * docs/cost-model.md 13.2).  Per micro-batch and layer are the mapped op's
 * own costs; the step composes them. */
typedef struct SchedPipeline {
    bool present;     /* `pipeline` or `microbatches` given */
    double stages;    /* p (1 without a pipeline) */
    double chunks;    /* v: layer chunks per stage */
    double micro;     /* m: micro-batches per step */
    double layers;    /* L: layers of the busiest stage, ceil(repeat / p) */
    double in_flight; /* micro-batches whose activations the first stage holds */
    /* one layer, one micro-batch: the groups' latencies by the role of their
     * first statement (s) */
    double forward_s, recompute_s, backward_s, update_s;
    /* one layer's weight-gradient reductions, run once per step (s, J) */
    double reduction_s, reduction_energy_j;
    /* what one stage sends its neighbour per micro-batch: the layer's output
     * forward and its input's gradient backward, over the stages' dim (B, s) */
    double send_forward_bytes, send_backward_bytes;
    double send_forward_s, send_backward_s;
    /* the step (s): F = L (forward), B = L (backward + recompute) per
     * micro-batch; compute m (F + B); bubble (p - 1)(F + B) / v; the sends
     * not hidden; the update and the reductions of the stage's layers */
    double stage_forward_s, stage_backward_s;
    double compute_s, bubble_s, send_s, update_total_s, reduction_total_s;
    double step_s;
    double energy_j;      /* every stage, micro-batch and layer */
    double send_energy_j; /* of it, the sends' */
    bool simulated;       /* the schedule was run pass by pass (else past the
                             simulation's limit: the closed form) */
    double steady_micro;  /* past the limit: the most micro-batches run whole, the
                             step extrapolated from them (0: the closed form) */
} SchedPipeline;

typedef struct SchedGroup {
    int id;
    int level; /* fusion level: internal tensors stay at or below */
    Provenance level_prov;
    int *stmts;
    int stmt_count;
    bool fused;             /* named in a `fuse` line */
    int *order;             /* [level * index_count + k]: loop order, outermost first */
    int *order_len;         /* [level] */
    Provenance *order_prov; /* [level] */
    SchedLoop *loops;       /* loops of every level, outermost first */
    int loop_count;
    int first_node, node_count;
    Footprint *footprints;
    int footprint_count;
    int *wait_loop;        /* [position in group]: the loop whose close the
                              statement waits for (its in-group inputs are
                              complete only then); loop_count when none */
    int *round;            /* [position in group]: the pass over the waited-for
                              loop's tiles in which the statement runs: a
                              reader of a reduction that completes when that
                              loop closes runs a pass after its producer */
    double *mem_bytes;     /* [memory]: bytes read + written per instance */
    double *mem_transfers; /* [memory]: tiles moved into or out of it per
                              instance (each pays its transfer_latency) */
    double *level_s;       /* [level]: mem_bytes / bandwidth */
    double tiles;          /* tiles of the outermost tiling (pipeline depth) */
    int pipe_level;        /* the level whose loops make that tiling: 1, or
                              the first below untiled stream levels */
    double first_share;    /* the share of the group's work in its first (whole)
                              outermost tile: 1 / tiles when they divide, more
                              when the last ones are partial */
    Cost cost;             /* one instance of the group (the pass `cost`) */
    /* the compute stages (docs/cost-model.md section 7): the time of the
     * statements on the matrix unit and on the vector unit; under overlap
     * full or tiles they run concurrently, each a pipeline stage */
    double matrix_s, vector_s;
    /* pipeline depths: of each compute stage (the outermost tiles, fewer
     * when a statement on the unit waits for an outermost loop while the
     * other unit works) and of the network (the collectives' chunks under
     * overlap tiles, else the outermost tiles) */
    double matrix_depth, vector_depth, network_depth;
    /* under overlap, the pipeline's stages as pass_cost priced them:
     * matrix unit, vector unit, memory, network, in that order: their
     * times, the pieces each fills and drains in, and the one that sets
     * the pace */
    double stage_s[4], stage_pieces[4];
    int pace;
    double launch_s;   /* the arch's launch_overhead, paid once per group */
    Overlap overlap;   /* its `fuse` line's overlap, else the mapping's */
    bool overlap_own;  /* given on its `fuse` line */
    IrReserve reserve; /* its `fuse` line's, else the mapping's */
    bool reserved;     /* the reserve applied: its collectives ran beside
                          its compute (pass_cost) */
} SchedGroup;

/* Per statement: decisions and the shapes derived from them.  Arrays
 * indexed [level * index_count + index] have level_count + 1 levels. */
/* `count` compute tiles of `size` elements along one index. */
typedef struct SchedClass {
    double size, count;
} SchedClass;

/* A statement's restriction (`where`, own or inherited, canonical as
 * x <= y + k) on the tile grid its schedule walks (docs/cost-model.md
 * section 3.1): the tiles of x and of y that the chosen compute
 * instance's ancestor at each level walks, and the points of the compute
 * tiles that intersect the allowed region.  The chosen instance is the
 * one with the most such points (the busiest under the restriction). */
typedef struct SchedRange {
    double lo, hi; /* [lo, hi) elements of the index */
    int parent;    /* its tile at the level above */
} SchedRange;

typedef struct SchedMask {
    int x, y;
    int64_t k;
    SchedRange **xs, **ys;           /* [level][tile] for levels 0..L */
    int *kx, *ky;                    /* [level]: the chosen instance's child position */
    int *nx, *ny;                    /* [level] */
    double visited_points;           /* x-y points of the visited compute tiles */
    double all_points;               /* x-y points of all its compute tiles */
    double visited_tiles, all_tiles; /* compute tile pairs */
    double every_visited;            /* visited points over every instance (energy) */
    double every_points;             /* extent(x) x extent(y) */
} SchedMask;

typedef struct SchedStmt {
    int group;
    int position;              /* in its group's statement list */
    int split[SCHED_MAX_DIMS]; /* index id split over each dim, -1 none */
    /* the indices dealt jointly with split[d] over dim d (`(m, n) -> sm`,
     * docs/cost-model.md 1.2), -1 past the last */
    int joint[SCHED_MAX_DIMS][IR_MAX_JOINT - 1];
    Provenance split_prov;
    double *extent; /* per-instance extent of each index at each level */
    double *tile;   /* tile resident at each level */
    Provenance *tile_prov;
    double *trips; /* loops at each level (see the file comment) */
    /* level-l tiles of each index that the busiest instance walks in all,
     * partial ones included (docs/cost-model.md section 2); the product of
     * the trips of levels 1..l when every tile divides */
    double *count;
    /* compute tiles of each index by size: [index * class_cap + k], k below
     * class_count[index] (the full tile, then the partial ones) */
    SchedClass *classes;
    int *class_count;
    int class_cap;
    Layout out_layout[SCHED_MAX_DIMS]; /* its result along each dim */
    const IrCompute *unit;
    SchedMask *mask;   /* NULL when the statement runs unrestricted */
    double work;       /* MACs or element ops of the busiest instance */
    double total_work; /* MACs or element ops over every instance (energy) */
    double compute_s;
} SchedStmt;

typedef struct LowerMemo LowerMemo; /* passes.h */

typedef struct Schedule {
    Arena *arena;
    LowerMemo *memo; /* remembered walks across lowerings, or NULL */
    /* LowerOptions.only_stmts: the statements whose groups are costed;
     * NULL for all */
    const bool *only_stmts;
    /* with only_stmts: [st] whether the costed groups read the records of
     * the statement's group (pass_fusion); NULL for all */
    bool *stmt_needed;
    bool only_needed; /* LowerOptions.only_needed */
    /* sched_visits remembered per statement, operand and level once the
     * loops are built (pass_tiles): [visits_first[st] + operand * (levels
     * + 1) + level], operand 0 the result, q + 1 input q */
    struct SchedVisits *visits_memo;
    bool *visits_known;
    int *visits_first;
    const IrMapping *m;
    const IrOp *op;
    const IrArch *arch;
    bool want_text;
    int levels;              /* arch->level_count; compute is level `levels` */
    int64_t total_instances; /* product of every cluster dim */
    SchedStmt *stmts;
    SchedGroup *groups;
    int group_count;
    int *tensor_group;    /* [tensor]: producing group, -1 for inputs */
    bool *tensor_crosses; /* [tensor]: leaves its group (boundary/output) */
    SchedNode *nodes;
    int node_count, node_cap;
    CapacityExcess *excess;
    int excess_count, excess_cap;
    /* `phase train`: what one device holds in the outermost memory for
     * the training step (pass_training, docs/cost-model.md 13) */
    SchedTraining training;
    /* `pipeline` / `microbatches`: the step they compose (pass_stages) */
    SchedPipeline pipeline;
    /* `serve`: the serving metrics (pass_serving) */
    SchedServing serving;
    /* the totals: the groups' costs summed (cost_add), latency and energy
     * then times the mapping's repeat; the bound is the largest of the
     * groups' summed compute stages (the busier unit under overlap),
     * memory and network */
    Cost cost;
    bool missing_unit; /* a statement found no compute unit of its kind */
} Schedule;

/* Whether statement st's loops, layouts and reductions are built
 * (LowerOptions.only_stmts). */
static inline bool sched_stmt_needed(const Schedule *s, int st) {
    return !s->stmt_needed || s->stmt_needed[st];
}
/* Whether statement st gets its tiles and compute time
 * (LowerOptions.only_needed). */
static inline bool sched_stmt_tiled(const Schedule *s, int st) {
    return !s->only_needed || sched_stmt_needed(s, st);
}

/* Whether group g is costed (LowerOptions.only_stmts). */
static inline bool sched_group_costed(const Schedule *s, const SchedGroup *g) {
    return !s->only_stmts || (g->stmt_count > 0 && s->only_stmts[g->stmts[0]]);
}

/* Appends a zeroed node of `kind` in `group` and returns it (the pointer
 * is valid until the next append). */
SchedNode *sched_add_node(Schedule *s, SchedKind kind, int group);
/* Bytes per element of a tensor's type (int4 is 0.5). */
double sched_elem_bytes(const IrTensor *t);
/* Index into the [level * index_count + index] arrays. */
static inline int sched_li(const Schedule *s, int level, int index) {
    return level * s->op->index_count + index;
}
/* The busiest instance's share when `parts` instances are dealt a range of
 * `len` elements in whole blocks of `block` (docs/cost-model.md section
 * 1.1): T = ceil(len / block) blocks, ceil(T / parts) of them, at most
 * len.  len itself when parts <= 1. */
double sched_deal(double len, double parts, double block);
/* The block in which the dims entering `level` deal index `index` of
 * statement st (section 1.1): the mapping's tile of it at that level, one
 * element when it has none (or at level 0 or the compute units). */
double sched_deal_block(const Schedule *s, int st, int level, int index);
/* How many coordinates along dim d (between levels outer and inner, where
 * it splits an index of statement ss) get work from the busiest outer
 * instance's full tile: the dims there that split the index deal its
 * ceil(tile / b) blocks jointly (outer dims most significant), so with
 * fewer blocks than instances the last ones idle.  The dim's size when
 * every instance gets work. */
double sched_dim_busy(const Schedule *s, const SchedStmt *ss, int d, int outer, int inner);
/* The groups' latencies (s) and energies (J) summed by the role of each
 * group's first statement (docs/cost-model.md 13.1), one repeat. */
void sched_role_costs(const Schedule *s, double latency[4], double energy[4]);
/* The bytes one instance of level 0 holds of tensor t as statement st
 * reads or writes it: its share under the statement's splits. */
double sched_stmt_useful_work(const Schedule *s, int st);
/* The range of index ss->split[d] that dim d deals between levels outer
 * and inner (the tile of the level it enters, or the extent) and the
 * block it deals it in; returns that level. */
int sched_deal_range(const Schedule *s, const SchedStmt *ss, int d, int outer, int inner,
                     double *len, double *block);
const char *sched_time_text(const Schedule *s, double seconds);
double sched_share(const Schedule *s, int st, int t);
/* True when dim d's cluster lies outside memory level `level`
 * (level == s->levels: the compute, inside every cluster). */
bool sched_dim_outside(const Schedule *s, int dim, int level);

/* The indices dim d deals for ss: its split, then those dealt jointly
 * with it (`(m, n) -> sm`); returns how many (0: it splits nothing). */
int sched_dim_indices(const SchedStmt *ss, int d, int out[IR_MAX_JOINT]);
/* Whether dim d deals index i for ss, alone or jointly. */
bool sched_dim_splits(const SchedStmt *ss, int d, int i);
/* Whether statement st's access of `tensor` has an index dim d deals. */
bool sched_access_split(const Schedule *s, int st, int tensor, int d);
/* The instances of the joint deal of dim d between levels outer and inner:
 * the sizes of the dims there that deal the same indices (`(m, n) ->
 * (x, y)` deals over x and y together). */
double sched_joint_parts(const Schedule *s, const SchedStmt *ss, int d, int outer, int inner);
/* A joint deal (docs/cost-model.md section 1.2): n indices, ranges len[k]
 * in blocks block[k], their grid of cells dealt over `parts` instances in
 * contiguous runs of q = ceil(cells / parts), the first index most
 * significant.  share[k]: the busiest instance's run as a rectangle of q
 * cells in elements, whole blocks along every index but the first (the
 * last index as long as the run allows, then the one before ...), the
 * first taking what is left, a fraction allowed, so that the rectangle
 * holds q cells. */
void sched_joint_deal(int n, const double *len, const double *block, double parts, double *share);
/* Under the joint deal of dim d between levels outer and inner, a tensor
 * with one of its two indices (`which`, 0 the first): the elements of that
 * index in the blocks the P instances' runs touch, summed, over the
 * busiest instance's share: how many times the busiest's bytes of the
 * tensor the outer level serves (section 1.2). */
double sched_joint_spread(const Schedule *s, const SchedStmt *ss, int d, int outer, int inner,
                          int which);
/* Product of the sizes of the dims that split `index` for statement ss and
 * lie inside level `outer` but outside level `inner` (a dim dealing it
 * jointly with others counts whole: its instances share the index). */
double sched_split_between(const Schedule *s, const SchedStmt *ss, int outer, int inner, int index);
/* True when dim lies between levels outer and inner (outer < inner). */
bool sched_dim_between(const Schedule *s, int dim, int outer, int inner);
/* The memory role of a tensor in a statement: a contraction's first
 * operand is input, its second weight; results are output; a vector
 * statement's operands are input. */
MemRole sched_tensor_role(const IrStmt *is, int tensor);
/* The role of the memory where statement st finds `tensor` at a level its
 * group holds it (at or above nothing: the fusion level, or where its
 * producer wrote it back): a tensor made in st's own group lives in the
 * output memory of a level split by role, and every reader reads it there. */
MemRole sched_held_role(const Schedule *s, int st, int tensor);
bool sched_tensor_has_index(const IrTensor *t, int index);
/* Whether statement st addresses a dimension of `tensor` with `index`
 * (by the index names of its own access, not the producer's). */
bool sched_access_has_index(const Schedule *s, int st, int tensor, int index);
/* The index statement st uses for dimension r of `tensor`. */
int sched_access_index(const Schedule *s, int st, int tensor, int r);

/* How often statement st moves its tile of tensor t across the boundary
 * above `level` in group g (docs/cost-model.md section 3). */
typedef struct SchedVisits {
    double visits;   /* times the tile is brought in / written back */
    double distinct; /* distinct tiles */
    int depth;       /* loop position of the innermost loop that moves it */
    double full;     /* visits without the statement's restriction (= visits
                        when it has none) */
} SchedVisits;

SchedVisits sched_visits(const Schedule *s, const SchedGroup *g, int st, const IrTensor *t,
                         int level);
/* The visits of tensor t at `level` by statement st counted over the
 * loops whose index `other` uses too: st's visits in the first iteration
 * of the loops only st runs. */
double sched_visits_over(const Schedule *s, const SchedGroup *g, int st, int t, int level,
                         int other);

/* The restriction of statement ss on its tile grid, or NULL: built by
 * the tiles pass once tiles and trips are known (ir/mask.c). */
SchedMask *sched_mask_build(const Schedule *s, int st);
/* Pairs of (x-range, y-range) that intersect the allowed region, as the
 * level-`level` instance sees them: each x-range the union of its
 * level-`level` x tiles under one level-lx tile (lx -1: all of them, the
 * loops do not step x), likewise y; *all gets every pair. */
double sched_mask_pairs(const SchedMask *mk, int level, int lx, int ly, double *all);
/* Walks statement st's loops at positions < upto and levels <= level in
 * nest order and counts the iterations that meet the restriction and
 * find another tile of `tensor` than the last such one (a tile the last
 * visited iteration used stays resident: the last tile of one row of a
 * triangle may be the first of the next).  The loops over x and y walk
 * the real ranges, the others their trips, whose product goes to
 * *other; *xy the extents along x and y (those the tensor has) of the
 * tiles loaded, summed.  False when the nest is too large to walk. */
bool sched_mask_loads(const Schedule *s, const SchedGroup *g, int st, int tensor, int level,
                      int upto, double *loads, double *other, double *xy);
/* What the bytes of a level-`level` tile of tensor t, averaged over
 * every tile (extent / count along each index), are multiplied by to
 * average them over the tiles a restricted statement st really moves
 * (uneven tiles are not visited alike); 1 when unrestricted. */
double sched_mask_bytes_scale(const Schedule *s, const SchedGroup *g, int st, const IrTensor *t,
                              int level);
/* The children of the chosen instance's level-(level-1) ancestor that
 * differ from it along the dims entering `level` that split x or y, each
 * walked as sched_mask_loads does, in lockstep: *xy_sum gets their loads'
 * x-by-y extents summed, *any the steps at which at least one of them
 * moves a tile of `tensor`, *multi those at which two or more do (a
 * multicast).  False when there are no such dims or the walk is too
 * large. */
bool sched_mask_children(const Schedule *s, const SchedGroup *g, int st, int tensor, int level,
                         int upto, double *xy_sum, double *any, double *multi);
/* What a restricted statement's outer level (level - 1) serves of
 * tensor t per visit, over what the busiest child's visits times the
 * spread of section 3 say: its children along the dims entering `level`
 * that split x or y do not visit alike (docs/cost-model.md 3.1).  Those
 * holding other parts of t (t has the split index): their moves summed;
 * those sharing t: the steps at which any of them moves it.  1 when
 * unrestricted or no such dim. */
double sched_mask_outer_scale(const Schedule *s, const SchedGroup *g, int st, const IrTensor *t,
                              int level);
/* The iterations of the loops before position `before` (those st runs, at
 * levels <= level) inside which st's restricted walk down to its loads of
 * `tensor` meets a single tile of it: a reader running in a pass after
 * its producer's finds that tile where the producer's pass left it.
 * *tiles gets how many average tiles of the walk's loads they weigh
 * (they need not be of the average size). */
double sched_mask_single_rows(const Schedule *s, const SchedGroup *g, int st, int tensor, int level,
                              int before, double *tiles);
/* The visited compute tiles of size sx along x and sy along y. */
double sched_mask_sized(const SchedMask *mk, int L, double sx, double sy);

/* Position in g's nest of the outermost loop over an index statement st
 * reduces (with more than one trip for st); g->loop_count when none.  A
 * tile of st's result holds partial sums until that loop closes. */
int sched_first_reduced_loop(const Schedule *s, const SchedGroup *g, int st);

/* The pieces stage x's fill or drain is cut into in a group's pipeline
 * (docs/cost-model.md section 7): its own depth, but a unit or the
 * network no finer than the stage that sets the pace, whose first piece
 * waits for that share of x (and whose last is followed by it).  The
 * memory streams each unit's tiles as they come, so it keeps its depth
 * (is_memory). */
double sched_stage_pieces(double depth_x, double depth_peak, bool is_memory);
/* A combine's token rows take every slot routed to them, and a uniform
 * routing spreads a token's picks over the whole slot walk: they are
 * complete once the loops over its experts and slots close.  The
 * position of the outermost such loop (with more than one trip for st),
 * g->loop_count when none or st is no combine (docs/cost-model.md 15). */
int sched_first_slot_loop(const Schedule *s, const SchedGroup *g, int st);
/* Whether collective n reduces a combine's token rows (it then waits for
 * the combine's slot loops to close). */
bool sched_waits_for_slots(const Schedule *s, const SchedNode *n);
/* The tiles of `tensor` that statement st completes over the loops of g
 * at positions before `before` and levels 1 .. max_level (the product of
 * st's trips of those over the tensor's indices as st reads them);
 * *depth gets the innermost such loop, -1 when none. */
double sched_tiles_completed(const Schedule *s, const SchedGroup *g, int st, int tensor,
                             int max_level, int before, int *depth);
/* The first loop after position `depth` that st runs more than once,
 * g->loop_count when none. */
int sched_next_loop(const Schedule *s, const SchedGroup *g, int st, int depth);

/* True when fusion group g of the mapping, of `members` statements, was
 * written as a `fuse` line (or filled in by the optimizer), not a
 * statement left on its own. */
bool sched_fuse_group_written(const IrMapping *m, int g, int members);

/* `x` or `(x,y)`: cluster dims by name, for listings and reasons. */
const char *sched_dims_text(Arena *a, const Schedule *s, const int *dims, int count);

/* Stable textual dump of the schedule as the passes so far left it. */
void schedule_dump(FILE *out, const Schedule *s, const char *after_pass);

#endif
