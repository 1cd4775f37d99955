/* passes.h — the lowering pipeline, the cost model's building blocks and
 * the fast evaluation entry point the optimizer (passes/optimize/, the
 * layer above) calls.
 *
 * The pipeline (passes/pipeline.c lists it once):
 *   shapes → partition → fusion → tiles → reuse → collectives → cost
 * Every pass takes the Schedule being built and fills in its part. */
#ifndef CMT_PASSES_H
#define CMT_PASSES_H

#include "frontend/check.h"
#include "ir/schedule.h"

/* ------------------------------------------------------- the pipeline */

/* What lowering may print on the way (`--dump-ir=PASS`), and where it may
 * stop: the capacity check needs only what pass_tiles computes. */
typedef struct LowerOptions {
    const char *dump_after; /* the pass after which to dump; NULL for none */
    FILE *dump_out;         /* where dumps go (stderr by default) */
    const char *stop_after; /* the last pass to run; NULL runs them all */
    LowerMemo *memo;        /* remembered walks across lowerings; NULL for none */
    /* cost only the groups whose first statement is marked (the groups
     * of the producers they read from get their loops, layouts and
     * reductions, which the marked groups' collectives read; the others
     * only their tiles); NULL: every group.  The optimizer reads nothing else of such a schedule:
     * with stop_after "cost", the marked groups' records are exactly those of the whole lowering
     * (docs/optimizer.md 2). */
    const bool *only_stmts;
    /* with only_stmts: the statements of no such group get not even
     * their tiles (nor a compute time), and no training memory is
     * reckoned */
    bool only_needed;
} LowerOptions;

/* Results of the lowering's pure helper computations that are slow to
 * redo (the placement walks of pass_collectives), remembered across the
 * lowerings of one caller (the optimizer lowers the same op hundreds of
 * times per configuration).  An entry's key holds every value the
 * computation reads, bit for bit, so a hit returns exactly what the
 * computation would.  One memo per thread: it is not locked. */
struct LowerMemo {
    Arena arena; /* keys and the table */
    struct LowerMemoEntry *slots;
    size_t cap, count;
    size_t limit; /* bytes; past them the memo starts empty again */
    long hits, misses;
};
/* An empty memo that holds at most `limit` bytes. */
void lower_memo_init(LowerMemo *m, size_t limit);
void lower_memo_free(LowerMemo *m);
/* Bytes the memo holds. */
size_t lower_memo_bytes(const LowerMemo *m);
/* The value remembered for key[0..len), into *value; false when none. */
bool lower_memo_get(LowerMemo *m, const uint64_t *key, size_t len, double *value);
void lower_memo_put(LowerMemo *m, const uint64_t *key, size_t len, double value);

/* Names of the passes, in pipeline order, for --dump-ir=PASS. */
extern const char *const pass_names[];
extern const int pass_count;
bool pass_name_known(const char *name);

/* Lowers one complete mapping (hole_count == 0) into a schedule in `arena`.
 * want_text: build reason strings and loop descriptions (listing, dump).
 * Dumps after the pass named in opts->dump_after and stops after the one in
 * opts->stop_after (opts may be NULL).  Never fails on a checked mapping;
 * capacity excess is recorded in the schedule. */
Schedule *lower_mapping(Arena *arena, const IrMapping *m, bool want_text, const LowerOptions *opts);

/* Whether the schedule IR can hold the arch (at most SCHED_MAX_DIMS
 * cluster dims); report_unsupported says E0352 at the mapping when not
 * and returns true.  lower_mapping needs a supported arch. */
bool schedule_supported(const IrArch *arch);
bool report_unsupported(Program *p, const IrMapping *m);

/* The same mapping with every statement in a group of its own (the
 * unfused baseline), copied into `arena`. */
IrMapping *unfused_mapping(Arena *arena, const IrMapping *m);

/* Every capacity excess of every complete mapping of `p` as E0350 at the
 * tile line that caused it (`cmtc check` calls this after check_program). */
void check_mapping_capacity(Program *p);
/* The same for one lowered schedule. */
void report_capacity(const Schedule *s, DiagSink *diags);

/* The passes, one entry point each (pipeline.c calls them in order). */
void pass_shapes(Schedule *s);    /* per-statement per-level extents */
void pass_partition(Schedule *s); /* spatial splits: layouts per dim */
void pass_fusion(Schedule *s);    /* groups, fusion levels, boundaries */
void pass_tiles(Schedule *s);     /* tiles, trips, footprints, capacity */
void pass_training(Schedule *s);  /* what a training step holds per device */
void pass_step(Schedule *s);      /* a training step by phase, model FLOP rate */
void pass_stages(Schedule *s);    /* micro-batches through a pipeline's stages */
void pass_serving(Schedule *s);   /* a serving step's time and tokens per second */
/* Micro-batches whose activations the first stage of m's pipeline holds
 * at once (1 without one; docs/cost-model.md 13.2). */
double pipeline_in_flight(const IrMapping *m);
/* What one group of the mapped op (one layer, one micro-batch) weighs in
 * a step's closed form (docs/cost-model.md 13.2): a forward or backward
 * group's latency counts L (m + (p - 1) / v) times, an update group's L
 * times, a once-per-step reduction's L times; energies count every layer
 * (repeat) and micro-batch.  All 1 when the step does not accumulate (the
 * mapping's latency is then the groups' sum times repeat). */
typedef struct StepWeights {
    double pass_latency, update_latency, once_latency;
    double pass_energy, update_energy, once_energy;
} StepWeights;
StepWeights step_weights(const IrMapping *m);
/* The most stages x chunks x micro-batches pass_stages runs pass by pass
 * (24 bytes each while it runs). */
#define PIPELINE_SIM_SLOTS (1L << 21)
/* One forward or backward pass of micro-batch `micro` through the layer
 * chunk `chunk` of a stage, as the schedule runs it (s). */
typedef struct PipeOp {
    int stage, micro, chunk;
    bool backward;
    double start_s, end_s;
} PipeOp;
/* Runs s's pipeline schedule op by op (docs/cost-model.md 13.2, "The
 * schedule"): each stage takes its operations in the order its schedule
 * gives and starts each once the one it follows has ended there and its
 * input has arrived over the link (sends queue on a stage's link in each
 * direction).  Writes the operations to *ops (from `arena`), stage by
 * stage in running order, and returns the time the last one ends (s); -1
 * when there is no pipeline or more than `limit` operations. */
/* The makespan past a slot limit: the schedule run with the most
 * micro-batches that fit in `limit` slots (a multiple of 2p) and half as
 * many, and extrapolated by the slope between them; -1 when 2p
 * micro-batches do not fit. */
/* The latency of a schedule split into the parts a stacked breakdown
 * shows, which sum to it (docs/sweeps.md): [0] the groups bound by
 * compute, [1] by memory, [2] by the network (their latency without the
 * launch; under a pipeline in proportion to the passes' time, with the
 * sends and once-per-step reductions added to [2]), [3] the pipeline's
 * bubble, [4] the rest: the launches. */
void schedule_partition(const Schedule *s, double out[5]);
/* What bounds the schedule: its cost's bound, or "bubble" when a
 * pipeline's bubble is the largest part. */
const char *schedule_bound_word(const Schedule *s);
double pipeline_steady(const Schedule *s, long limit);
double pipeline_simulate(Arena *arena, const Schedule *s, long limit, PipeOp **ops, long *count);
/* The same schedule with a model's ends (docs/cost-model.md 13.3): the
 * first virtual stage's passes take first_f (forward) and first_b
 * (backward) more, the last one's last_f and last_b.  The time the last
 * pass ends (s); past the simulation's limit the closed form plus the
 * busier end's extra work per micro-batch (*simulated false then); -1
 * without a pipeline. */
double pipeline_makespan_with_ends(const Schedule *s, double first_f, double first_b, double last_f,
                                   double last_b, bool *simulated);

/* A model's step (`model`, docs/language.md 5.13, cost-model.md 13.3):
 * its layers' step with the embedding's and the head's work of every
 * micro-batch on the first and the last stage. */
typedef struct ModelPartCost {
    bool present;
    double forward_s, backward_s; /* one micro-batch (backward: with recomputation) */
    double update_s;              /* once per step: update and gradient reductions */
    double energy_j;              /* every micro-batch and the update */
    double held_bytes;            /* what a device of its stage holds for it */
    double model_flop;
} ModelPartCost;
typedef struct ModelStep {
    ModelPartCost embed, head;
    double micro;         /* micro-batches per step */
    double stages;        /* p (1 without a pipeline) */
    double layers_step_s; /* the layers' step alone */
    double step_s;        /* the model's */
    double energy_j;
    double first_bytes, last_bytes; /* per device: the first and the last stage */
    double capacity;                /* the outermost memory's, per device */
    double model_flop, achieved_flops, peak_flops;
    bool simulated; /* the pipeline was run pass by pass */
} ModelStep;
/* layers, embed, head: the parts' schedules, each lowered on its own
 * (embed and head NULL when absent); a part is lowered again with the
 * layers' micro-batches when there are several. */
ModelStep model_step(Arena *arena, const Schedule *layers, const Schedule *embed,
                     const Schedule *head);
void pass_reuse(Schedule *s);       /* loop nests and traffic per level */
void pass_collectives(Schedule *s); /* collective nodes, chosen by cost */
void pass_routing(Schedule *s);     /* the exchanges of dispatches and combines */
/* Whether the partial sums statement `producer` leaves are read only by
 * combines, none split where they are partial: they then add the rows
 * in as they are and reduce their tokens' rows once (pass_routing), and
 * pass_collectives does not reduce them. */
bool combines_take_partials(const Schedule *s, int producer);
/* A collective node of statement st moving `tensor` over dims[0..count),
 * `bytes` per instance and execution (allgather: the gathered buffer;
 * alltoall: what an instance holds), `executions` times per instance,
 * one copy per group of instances along the dims (pass_routing). */
SchedNode *collective_insert(Schedule *s, int group, int position, int phase, int st, int tensor,
                             CollKind kind, ReduceOp op, const int *dims, int count, double bytes,
                             double executions);
/* The time one such collective takes (s). */
double collective_time(const Schedule *s, int st, int tensor, CollKind kind, const int *dims,
                       int count, double bytes);
void pass_cost(Schedule *s); /* per-group and total cost */

/* ------------------------------------------------ fast evaluation API */

/* The cost of one fusion group: its schedule group's record (one
 * instance, before repeat) and its memory time per level, level_s, with
 * one entry per memory level of the arch (EvalResult.level_count). */
typedef struct GroupCost {
    Cost cost;
    double *level_s; /* [level_count], in the caller's arena */
    int level;       /* fusion level */
    int stmt_count;
} GroupCost;

/* The cost of a whole mapping: the schedule's totals (Schedule.cost:
 * latency and energy repeat included, the times summed over groups for
 * one repeat).  Sized to the mapping: groups (and each group's level_s)
 * live in the arena given to evaluate_mapping, so no op or arch is too
 * large for it. */
typedef struct EvalResult {
    Cost cost;
    bool feasible;             /* every tile fits its level and role, and a
                                  training step its devices' memory */
    double worst_excess_bytes; /* largest capacity excess, 0 when feasible */
    int group_count;
    int level_count;   /* memory levels of the arch */
    GroupCost *groups; /* [group_count]; NULL when no arena was given */
} EvalResult;

typedef enum EvalStatus {
    EVAL_OK,
    EVAL_INCOMPLETE, /* the mapping still has holes */
    EVAL_TOO_LARGE   /* more cluster dims than SCHED_MAX_DIMS (E0352 says so) */
} EvalStatus;

/* Evaluates a complete mapping: no text is built, nothing is printed.
 * The per-group records go to `arena` (NULL: totals only, nothing kept);
 * the lowering's scratch memory is freed before returning.  Pure and
 * reentrant: the optimizer may call it many times. */
EvalStatus evaluate_mapping(const IrMapping *m, Arena *arena, EvalResult *out);

/* ------------------------------------------- cost model building blocks */

/* One cluster dimension as the network model sees it. */
typedef struct NetDim {
    int64_t p; /* ranks along the dimension */
    Topology topology;
    bool unidirectional;    /* a ring whose links carry one direction only */
    double alpha_s;         /* per step: the dimension's hop latency */
    double beta_s_per_byte; /* 1 / link bandwidth */
    double link_energy_j_per_byte;
    double call_s;         /* per collective call: the cluster's call_latency */
    int64_t channels;      /* the cluster's channels (1 = no ramp) */
    double channel_bytes;  /* B a channel needs at least (0 = no ramp) */
    double channel_growth; /* exponent of the ramp (1: linear) */
    double sharers;        /* copies of the collective that instances of
                              deeper clusters run at once through the same
                              links of this dim's cluster (1 when none) */
    int cluster;           /* the IrCluster of the dim */
    /* A dragonfly (docs/cost-model.md section 4, "Dragonfly"): its first
     * dim crosses the groups; along the second, the chips of a group are
     * linked pairwise, as `full`. */
    bool crosses_groups;
    int64_t group_chips;           /* R: the chips of a group, sharing its global links */
    double group_sharers;          /* of those, how many send other data across at once */
    double global_links;           /* L: links joining each pair of groups */
    double global_beta_s_per_byte; /* 1 / global_bandwidth */
} NetDim;

/* hybrid_cube_mesh: the NVLinks of DGX-1 with V100s (docs/cost-model.md
 * section 4, "Hybrid cube mesh"), and what the formulas take from them;
 * tests/unit/test_collectives.c derives each number from the table. */
enum {
    HYBRID_CUBE_MESH_GPUS = 8,
    HYBRID_CUBE_MESH_RINGS = 3,          /* edge-disjoint Hamiltonian rings of single links */
    HYBRID_CUBE_MESH_DIAMETER = 2,       /* hops between the farthest GPUs */
    HYBRID_CUBE_MESH_BISECTION_LINKS = 6 /* links across the thinnest cut into two halves of 4 */
};
/* links between GPUs a and b (0 on the diagonal) */
extern const int hybrid_cube_mesh_links[HYBRID_CUBE_MESH_GPUS][HYBRID_CUBE_MESH_GPUS];

typedef struct NetCost {
    double time_s;
    double byte_hops; /* summed over one collective group */
    double energy_j;  /* byte_hops of each dim times its link energy */
} NetCost;

/* alpha-beta cost of a collective over dims[0..count) where n is the
 * bytes each rank contributes (allreduce, reduce, reduce_scatter, alltoall:
 * its whole buffer; allgather: the gathered result; broadcast: the
 * message).  Several dims compose dimension by dimension
 * (docs/cost-model.md, section 4). */
double channel_beta_scale(const NetDim *d, double n_bytes);
/* Dim d of an arch as the network model sees it. */
NetDim net_dim(const IrArch *a, int d);
/* A point-to-point send of n bytes to a neighbour along one dim: one call,
 * one hop (across a dragonfly's groups: up to three, the group's chips
 * sending at once; docs/cost-model.md 13.2). */
NetCost send_cost(const NetDim *d, double n);
NetCost collective_cost(CollKind kind, const NetDim *dims, int count, double n_bytes);
/* The time of one call of collective node n's kind over its dims, moving
 * `bytes` per rank (passes/collectives.c). */
double collective_node_time(const Schedule *s, const SchedNode *n, double bytes);
/* The network diameter of one dimension in hops. */
int64_t net_diameter(const NetDim *d);

/* SCALE-Sim fold formula: cycles for an (M x K) * (K x N) product on
 * `count` arrays of rows x cols, weight stationary: K on rows, N on
 * columns, M streamed.  folds = ceil(K/R) * ceil(N/C), spread over count
 * arrays; each fold takes 2R + C + M - 2 cycles. */
double systolic_cycles(double m, double k, double n, int rows, int cols, int count);

/* Element operations per output point of a vector statement, and MACs per
 * point (1) of a contraction, with function costs from `unit`. */
double stmt_ops_per_point(const IrStmt *s, const IrCompute *unit);

#endif
