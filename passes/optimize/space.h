/* space.h — private to the mapping optimizer (the files of passes/optimize/).
 *
 * The space of a mapping with holes is the product of
 *   - configurations: a split table (every `spatial` hole filled), a value
 *     for every tile hole and a permutation for every order hole; these are
 *     global: every fusion group sees them;
 *   - a partition of the statements into fusion groups ("arcs"): fixed
 *     groups from `fuse` lines (with a level hole or not) and, for the
 *     statements `fuse ?` leaves free, every run of consecutive statements
 *     of the source order, at every on-chip level.
 * The cost of a mapping is the sum over its groups of the group's cost
 * under the configuration (the cost model runs groups one after another),
 * so each (configuration, arc) pair is one candidate with exact
 * coefficients taken from the lowering itself.  docs/optimizer.md states
 * the whole formulation. */
#ifndef CMT_OPTIMIZE_SPACE_H
#define CMT_OPTIMIZE_SPACE_H

#include "passes/optimize/optimize.h"

#include <time.h>

/* Level of an arc: a statement in a group of its own, not fused. */
#define OPT_UNFUSED (-1)
/* A fused group whose level the mapping left at its default. */
#define OPT_LEVEL_DEFAULT (-3)

/* The optimizer's memory budget (docs/optimizer.md, section 5): bytes its
 * arenas hand out, checked before every allocation that grows with the
 * space.  CMTC_OPT_BUDGET_MB overrides it. */
#define OPT_BUDGET_BYTES ((size_t)2 << 30)

/* Sets of statement or index ids: bit i of word i / 64.  Sized to the op
 * when allocated (opt_words), so no op is too large for them. */
static inline size_t opt_words(int n) {
    return ((size_t)(n > 0 ? n : 0) + 63) / 64;
}
static inline bool bits_has(const uint64_t *b, int i) {
    return (b[i >> 6] >> (i & 63)) & 1u;
}
static inline void bits_set(uint64_t *b, int i) {
    b[i >> 6] |= (uint64_t)1 << (i & 63);
}

/* Sizes computed in size_t saturate instead of wrapping: a product that
 * does not fit is larger than any budget. */
static inline size_t opt_mul(size_t a, size_t b) {
    return b && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}
static inline size_t opt_add(size_t a, size_t b) {
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

typedef struct OptArc {
    const int *stmts; /* statement ids, in source order (shared, not owned) */
    int count;
    int pos; /* first position in the block order (OptSpace.pos_of) */
    /* what its cost depends on, for the memo: the split rows of its
     * statements and of their producers and consumers (only rows that
     * differ between split tables), the tile holes of the indices its
     * statements use, and the order of those indices */
    int *rel_stmts;
    int rel_count;
    int *rel_holes;
    int rel_hole_count;
    uint64_t *rel_indices; /* [opt_words(I)]: indices its statements use */
    int rel_index_count;
    bool memo;       /* some choice of the configuration does not matter */
    int level;       /* level id, OPT_UNFUSED or OPT_LEVEL_DEFAULT */
    int given_group; /* the `fuse` line's group id, or -1 when chosen */
    int block;       /* the run or fixed group it belongs to */
} OptArc;

/* Cost of one arc under one configuration: its group's record (one
 * instance, repeat not applied; compute_energy_j is the operations alone,
 * the same under any grouping) and its worst capacity excess. */
typedef struct OptCost {
    Cost cost;
    double need, capacity; /* worst capacity excess by ratio (0 when fits) */
    int memory;            /* IrMemory of that excess, -1 when fits */
    Span excess_span;
    bool feasible;
    bool uncosted; /* the time limit came first: not a candidate */
} OptCost;

/* A user decision the infeasibility explanation may relax. */
typedef enum OptDecisionKind { OD_TILE, OD_SPLIT, OD_FUSE, OD_FUSE_LEVEL } OptDecisionKind;
typedef struct OptDecision {
    OptDecisionKind kind;
    int level, index; /* OD_TILE */
    int group;        /* OD_FUSE, OD_FUSE_LEVEL; OD_TILE: its line (IrTile.from) */
    Span span;        /* OD_SPLIT: all cells with this span */
} OptDecision;

/* Configurations are stored in pages that never move (growing copies
 * nothing and abandons nothing). */
#define OPT_CFG_PAGE 4096
typedef struct OptCfgPage {
    int *split;    /* [OPT_CFG_PAGE] */
    int64_t *tile; /* [OPT_CFG_PAGE * th_count] */
    int *order;    /* [OPT_CFG_PAGE * oh_count * I] */
} OptCfgPage;

/* Why building or searching the space stopped early. */
typedef enum OptStop { OPT_STOP_NONE, OPT_STOP_TIME, OPT_STOP_LIMIT, OPT_STOP_BUDGET } OptStop;

typedef struct OptSpace {
    Arena *arena;
    const IrMapping *m; /* the mapping as written (possibly relaxed copy) */
    const IrOp *op;
    const IrArch *arch;
    int S, I, D, L;
    /* a step of micro-batches or a pipeline (ir_accumulates): each arc's
     * cost is its group's weighted as the step's closed form counts it
     * (docs/optimizer.md 4.1), and no arc spans two passes of the step */
    bool weighted;
    StepWeights weights;
    bool symmetry; /* reductions: configurations that differ only by a
                      permutation of interchangeable cluster dims, or by
                      the place of an index with one trip in an order,
                      are enumerated once (off for --exhaustive) */
    /* limits: every phase checks the clock and the budget */
    double deadline;   /* opt_now() seconds; 0 for none */
    size_t budget;     /* bytes */
    size_t held;       /* bytes the search holds outside `arena` */
    OptStop stop;      /* why the space or the search stopped early */
    const char *phase; /* what would have passed the budget */
    double wanted;     /* bytes it would have needed */
    /* spatial */
    bool *split_hole; /* [st * D + d] */
    /* [(st * D + d) * allowed_words]: the indices a hole may take (`h ->
     * ?, b -> ?`), a bit each; none set: any */
    const uint64_t *split_allowed;
    int allowed_words;
    int split_count;
    int *splits;        /* split_count tables of S * D */
    bool *split_varies; /* [st]: its row differs between split tables */
    /* tile holes, sorted by index then level (then line): one per line
     * that leaves an index open, shared by the statements it names */
    int th_count;
    int *th_level, *th_index, *th_line; /* th_line: IrTile.from of its entries */
    /* order holes: one per line (`order L: ?`, `order L for S: ?`) */
    int oh_count;
    int *oh_level, *oh_line; /* oh_line: IrOrder.from of its entries */
    /* fusion: blocks (a fixed group, or a maximal run of `fuse ?`
     * statements) laid end to end, ordered by first statement, give every
     * statement a position; every arc is a run of positions */
    int arc_count;
    OptArc *arcs;
    int *by_length;         /* arcs, longest first */
    int *pos_of, *stmt_at;  /* [S]: statement -> position -> statement */
    int *start_first;       /* [S + 1]: arcs starting at position p are */
    int *start_arcs;        /*   start_arcs[start_first[p] .. start_first[p+1]) */
    size_t *stmt_arc_first; /* [S + 1]: arcs holding statement st are */
    int *stmt_arcs;         /*   stmt_arcs[stmt_arc_first[st] .. [st+1]) */
    /* configurations */
    int cfg_count;
    OptCfgPage *cfg_pages;
    int cfg_page_count, cfg_page_cap;
    bool truncated;    /* enumeration stopped (limit, time or budget) */
    double enumerated; /* configurations generated before any pruning */
    /* evaluation */
    long evaluations; /* lowerings run */
    long pruned_capacity, pruned_dominance, pruned_bound, pruned_level, pruned_arcs;
} OptSpace;

static inline int opt_cfg_split(const OptSpace *sp, int c) {
    return sp->cfg_pages[c / OPT_CFG_PAGE].split[c % OPT_CFG_PAGE];
}
static inline const int64_t *opt_cfg_tile(const OptSpace *sp, int c) {
    return sp->cfg_pages[c / OPT_CFG_PAGE].tile + (size_t)(c % OPT_CFG_PAGE) * (size_t)sp->th_count;
}
static inline const int *opt_cfg_order(const OptSpace *sp, int c) {
    return sp->cfg_pages[c / OPT_CFG_PAGE].order +
           (size_t)(c % OPT_CFG_PAGE) * (size_t)sp->oh_count * (size_t)sp->I;
}
/* Whether tile hole h is statement st's tile (st is named by its line). */
static inline bool opt_tile_hole_of(const OptSpace *sp, int h, int st) {
    int k = ir_tile_slot(sp->m, st, sp->th_level[h], sp->th_index[h]);
    return sp->m->tile.size[k] == IR_HOLE && sp->m->tile.from[k] == sp->th_line[h];
}
/* Whether order hole k is statement st's order. */
static inline bool opt_order_hole_of(const OptSpace *sp, int k, int st) {
    int o = ir_order_slot(sp->m, st, sp->oh_level[k]);
    return sp->m->order.length[o] == IR_HOLE && sp->m->order.from[o] == sp->oh_line[k];
}
static inline const int *opt_split_table(const OptSpace *sp, int split) {
    return sp->splits + (size_t)split * (size_t)sp->S * (size_t)sp->D;
}

/* Whether `more` bytes may still be allocated: what the space's arena and
 * the search hold, plus `more`, stays within the budget.  When not, the
 * space records the phase and stops (stop = OPT_STOP_BUDGET). */
bool opt_reserve(OptSpace *sp, size_t more, const char *phase);
/* Whether the deadline has passed; records it (stop = OPT_STOP_TIME). */
bool opt_past_deadline(OptSpace *sp);
/* The budget in bytes: OPT_BUDGET_BYTES or CMTC_OPT_BUDGET_MB. */
size_t opt_budget_bytes(void);
/* E0380 (memory budget) or E0373 (configuration limit) at `where` when the
 * space stopped for either; returns whether it reported. */
bool opt_report_stop(Program *p, const OptSpace *sp, Span where, long config_limit);

/* Building the space (space.c). */
OptSpace *opt_space_build(Arena *arena, const IrMapping *m, bool symmetry, double deadline,
                          size_t budget, long config_limit);
/* A scratch complete mapping: configuration `c`, with the statements of
 * the given arcs grouped as the arcs say and every other statement in a
 * group of its own. */
IrMapping *opt_scratch_mapping(Arena *arena, const OptSpace *sp, int c, const int *arcs,
                               int arc_count);
/* Per-thread evaluation state: scratch memory and, per arc, the key and
 * cost of its last evaluation (consecutive configurations often differ
 * only in choices an arc does not depend on). */
typedef struct OptEvalCtx {
    Arena keep; /* memo storage */
    Arena tmp;  /* reset per configuration */
    int64_t **last_key;
    bool *last_valid;
    OptCost *last_cost;
    long lowerings, memo_hits, implied;
    /* bound: every group's latency is at least its compute time and its
     * energy at least its operations' energy, both sums over statements
     * whatever the grouping; a configuration whose sums already exceed
     * the threshold is not costed further */
    Objective objective;
    double threshold; /* INFINITY: no bound yet */
    /* the search drops a configuration whose best partition exceeds this
     * (its window past the incumbent, docs/optimizer.md 3): one whose
     * partial bound already does is not costed further (INFINITY: none) */
    double window;
    long window_cuts;
    /* a probe (optimize.c, beats_incumbent) needs only sound bounds: its
     * first lowering of a configuration costs only the statements that
     * are arcs alone (alone_stmts), and the others' compute comes from
     * their statements' records */
    bool probe;
    bool *alone_stmts;
    bool check_lowering; /* CMTC_OPT_CHECK_LOWERING: compare with whole lowerings */
    /* each statement's compute time and operation energy, by the choices
     * they depend on (its split row and the tiles of its indices) */
    struct CompEntry *comp;
    int comp_cap, comp_count;
    size_t comp_limit; /* bytes the table may use; past it, it stops growing */
    long comp_hits;
    LowerMemo walks; /* the lowering's placement walks, across lowerings */
} OptEvalCtx;

void opt_eval_ctx_init(OptEvalCtx *x, const OptSpace *sp);
void opt_eval_ctx_free(OptEvalCtx *x);
/* Costs of every arc under configuration c into row[arc_count]. */
typedef enum OptRow {
    OPT_ROW_FULL,    /* every arc costed */
    OPT_ROW_CUT,     /* cut by the bound: the row is incomplete */
    OPT_ROW_PARTIAL, /* the deadline came first: arcs not costed are marked
                        uncosted (every statement alone is always costed) */
    OPT_ROW_SKIPPED  /* the deadline had passed: not costed at all */
} OptRow;
OptRow opt_evaluate_config(const OptSpace *sp, OptEvalCtx *x, int c, OptCost *row);
/* Bytes an evaluation context holds (memo and scratch), and the bytes a
 * new one needs before its compute memo grows. */
size_t opt_eval_ctx_bytes(const OptEvalCtx *x);
size_t opt_eval_ctx_need(const OptSpace *sp);
/* Writes the configuration and a partition (arcs) into `out` (a mapping
 * with holes), making it complete. */
void opt_apply(Arena *arena, const OptSpace *sp, IrMapping *out, int c, const int *arcs,
               int arc_count);

/* Seconds on a monotonic clock. */
double opt_now(void);

/* The exhaustive enumerator (exhaustive.c): every complete mapping of the
 * space, each evaluated whole by evaluate_mapping.  Completes `m` (a copy
 * of the checked mapping) with mappings in `out`. */
bool opt_exhaustive(Arena *out, Program *p, IrMapping *m, const OptimizeOptions *opts,
                    SolverReport *report);

#endif
