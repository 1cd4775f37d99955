/* optimize.h — private to the mapping optimizer (passes/optimize*.c).
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
#ifndef CMT_OPTIMIZE_H
#define CMT_OPTIMIZE_H

#include "passes/passes.h"

#include <time.h>

/* Level of an arc: a statement in a group of its own, not fused. */
#define OPT_UNFUSED (-1)
/* A fused group whose level the mapping left at its default. */
#define OPT_LEVEL_DEFAULT (-3)

typedef struct OptArc {
    int *stmts; /* statement ids, in source order */
    int count;
    /* what its cost depends on, for the memo: the split rows of its
     * statements and of their producers and consumers, the tile holes of
     * the indices its statements use, and the order of those indices */
    int *rel_stmts;
    int rel_count;
    int *rel_holes;
    int rel_hole_count;
    unsigned rel_mask;
    bool memo;       /* some choice of the configuration does not matter */
    int level;       /* level id, OPT_UNFUSED or OPT_LEVEL_DEFAULT */
    int given_group; /* the `fuse` line's group id, or -1 when chosen */
    int block;       /* the run or fixed group it belongs to */
    uint64_t mask;   /* its statements (op with at most 64 statements) */
} OptArc;

/* Cost of one arc under one configuration. */
typedef struct OptCost {
    double latency_s; /* one instance of the group (repeat not applied) */
    double energy_j;
    double compute_s, memory_s, network_s, fill_drain_s;
    double compute_energy_j; /* the operations alone (any grouping) */
    double need, capacity;   /* worst capacity excess by ratio (0 when fits) */
    int memory;              /* IrMemory of that excess, -1 when fits */
    Span excess_span;
    bool feasible;
} OptCost;

/* A user decision the infeasibility explanation may relax. */
typedef enum OptDecisionKind { OD_TILE, OD_SPLIT, OD_FUSE, OD_FUSE_LEVEL } OptDecisionKind;
typedef struct OptDecision {
    OptDecisionKind kind;
    int level, index; /* OD_TILE */
    int group;        /* OD_FUSE, OD_FUSE_LEVEL */
    Span span;        /* OD_SPLIT: all cells with this span */
} OptDecision;

typedef struct OptSpace {
    Arena *arena;
    const IrMapping *m; /* the mapping as written (possibly relaxed copy) */
    const IrOp *op;
    const IrArch *arch;
    int S, I, D, L;
    bool symmetry; /* reductions: configurations that differ only by a
                      permutation of interchangeable cluster dims, or by
                      the place of an index with one trip in an order,
                      are enumerated once (off for --exhaustive) */
    /* spatial */
    bool *split_hole;   /* [st * D + d] */
    int *split_allowed; /* [st * D + d]: the only index a hole may take, -1 any */
    int split_count;
    int *splits; /* split_count tables of S * D */
    /* tile holes, sorted by index then level */
    int th_count;
    int *th_level, *th_index;
    /* order holes */
    int oh_count;
    int *oh_level;
    /* fusion */
    int arc_count;
    OptArc *arcs;
    int *stmt_arcs; /* [st * arc_count + k]: arcs holding st, -1 ends */
    /* configurations */
    int cfg_count, cfg_cap;
    int *cfg_split;
    int64_t *cfg_tile; /* cfg * th_count */
    int *cfg_order;    /* cfg * oh_count * I */
    bool truncated;    /* enumeration stopped (limit or time) */
    double enumerated; /* configurations generated before any pruning */
    /* evaluation */
    long evaluations; /* lowerings run */
    long pruned_capacity, pruned_dominance, pruned_bound, pruned_level, pruned_arcs;
} OptSpace;

/* Building the space (optimize_space.c). */
OptSpace *opt_space_build(Arena *arena, const IrMapping *m, bool symmetry, double deadline,
                          long config_limit);
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
    int **last_key;
    bool *last_valid;
    OptCost *last_cost;
    long lowerings, memo_hits, implied;
    /* bound: every group's latency is at least its compute time and its
     * energy at least its operations' energy, both sums over statements
     * whatever the grouping; a configuration whose sums already exceed
     * the threshold is not costed further */
    Objective objective;
    double threshold; /* INFINITY: no bound yet */
    /* each statement's compute time and operation energy, by the choices
     * they depend on (its split row and the tiles of its indices) */
    struct CompEntry *comp;
    int comp_cap, comp_count;
    long comp_hits;
} OptEvalCtx;

void opt_eval_ctx_init(OptEvalCtx *x, const OptSpace *sp);
void opt_eval_ctx_free(OptEvalCtx *x);
/* Costs of every arc under configuration c into row[arc_count].  Returns
 * false when the configuration was cut by the bound (row incomplete). */
bool opt_evaluate_config(const OptSpace *sp, OptEvalCtx *x, int c, OptCost *row);
/* Writes the configuration and a partition (arcs) into `out` (a mapping
 * with holes), making it complete. */
void opt_apply(Arena *arena, const OptSpace *sp, IrMapping *out, int c, const int *arcs,
               int arc_count);

/* Seconds on a monotonic clock. */
double opt_now(void);

/* The exhaustive enumerator (optimize_exhaustive.c): every complete
 * mapping of the space, each evaluated whole by evaluate_mapping. */
bool opt_exhaustive(Program *p, IrMapping *m, const CompileOptions *opts, SolverReport *report);

#endif
