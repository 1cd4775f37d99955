/* ir.h — cmtc's IR: checked ops (einsum statements with bound index
 * extents), archs (levels, roles, cluster dimensions, compute units) and
 * mappings (decisions, each with the source span that made it).  The
 * lowered schedule lives in ir/schedule.h.  Built by the front end
 * (frontend/check.h) and read-only after it: it holds no pointer into the
 * syntax tree, so everything later reads what the checker recorded here. */
#ifndef CMT_IR_H
#define CMT_IR_H

#include "frontend/util/util.h"
#include <math.h>

/* ------------------------------------------------------------------ ops */

/* The vocabularies with an enum (frontend/util/vocab.h): for each, its
 * words and the id of each word, entry by entry from the one list, and a
 * lookup from a word (false when it names none). */
#define IR_VOCABULARY(Type, prefix)                                                                \
    extern const char *const prefix##_words[];                                                     \
    extern const Type prefix##_ids[];                                                              \
    extern const int prefix##_count;                                                               \
    bool prefix##_of_name(const char *word, Type *out);                                            \
    const char *prefix##_name(Type t)

typedef enum ReduceOp { RO_NONE, CMT_REDUCTIONS(VOCAB_ENUM) } ReduceOp;
IR_VOCABULARY(ReduceOp, reduce_op); /* reduce_op_name(RO_NONE) is "none" */

typedef struct IrIndex {
    Name name;
    int64_t extent;
    Span first_use; /* where the extent was bound */
} IrIndex;

typedef enum TensorKind { TK_INPUT, TK_OUTPUT, TK_INTERMEDIATE } TensorKind;

#define IR_MAX_RANK 8
typedef struct IrTensor {
    int id;
    TensorKind kind;
    Name name;
    ElemType type;
    int rank; /* at most IR_MAX_RANK */
    /* [rank] each, exact-size (fixed rows of IR_MAX_RANK made a tensor 144
     * bytes, copied for every instantiation): the index id of each
     * dimension, shared by an op's instantiations, and its extent
     * (= indices[index[i]].extent), each instantiation's own */
    int *index;
    int64_t *extent;
    int producer;  /* statement id, -1 for inputs */
    bool trained;  /* a `param`: an input that `phase train` updates */
    TensorUse use; /* in a train op: weight, its gradient, optimizer state;
                      TU_CACHE for a `cache` */
    /* `K.new`, the slot a statement `K[b, new, d] = ...` appends to cache
     * K: K's id and the dimension of K it is the new position of (-1
     * for every other tensor); `K.all`, a statement filling the whole
     * cache (a prefill): K's id, append_dim -1 */
    int appends_to, append_dim;
    /* A routed view (docs/language.md 3.9): the rows of `view_of` (an
     * `in` a dispatch reads, an `out` a combine writes) in the order
     * routing `route` (an index into IrOp.routes) gives them, the token
     * dimension replaced by the expert and slot ones; -1 for every other
     * tensor.  A `route` tensor itself has `route` set, view_of -1. */
    int view_of, route;
    Span span; /* declaration or first assignment */
} IrTensor;

typedef enum StmtClass { SC_CONTRACTION, SC_VECTOR } StmtClass;

/* What a statement does with a routing (docs/language.md 3.9): makes it
 * (`R[t, j] = top(x) g[t, x]`), gathers token rows into expert slots
 * (a dispatch, `... by R` reading the tokens) or sums expert rows back
 * into their tokens (a combine, `... by R` writing them). */
typedef enum StmtRouting { RT_NONE, RT_ROUTER, RT_DISPATCH, RT_COMBINE } StmtRouting;
/* "router", "dispatch", "combine" ("none" for RT_NONE) */
const char *stmt_routing_name(StmtRouting r);

/* A routing: `route R[T, K] : type capacity F;` made by its router
 * statement, each of T tokens picking K of E experts, every expert
 * holding `slots` = ceil(F T K / E) rows. */
typedef struct IrRoute {
    int tensor;              /* R */
    int router;              /* the statement that assigns R */
    int token, pick, expert; /* index ids: t and j of R[t, j], x of top(x) */
    double capacity;         /* F (1 when not given) */
    int64_t slots;           /* C, this instantiation's */
    Span span;               /* R's declaration */
} IrRoute;

typedef struct FnCount {
    Name fn;   /* exp, rsqrt, ... (two-argument max/min too) */
    int count; /* occurrences per output point */
} FnCount;

/* One tensor access as written: the tensor and the index of each
 * dimension (ids; -1 for a name that is neither; only the first
 * IR_MAX_RANK kept when rank is larger). */
typedef struct IrAccess {
    int tensor; /* -1 when no tensor has the name */
    int rank;   /* indices written */
    int index[IR_MAX_RANK];
} IrAccess;

/* A restriction of a statement's iteration space between two of its
 * indices (`where lhs <= rhs + offset`): the point is iterated only when
 * it holds.  PC_NONE: no restriction. */
typedef enum PredCmp { PC_NONE, PC_LT, PC_LE, PC_GT, PC_GE } PredCmp;
typedef struct IrPredicate {
    PredCmp cmp;
    int lhs, rhs;   /* index ids of the statement */
    int64_t offset; /* added to rhs */
    int from;       /* the statement that wrote it (itself, or the maker of
                       a restricted tensor it reads: docs/language.md) */
    Span span;      /* the `where` clause that wrote it */
} IrPredicate;

#define IR_MAX_OPERANDS 16
#define IR_NOT_SCALING 127
typedef struct IrStmt {
    int id;
    Name name; /* = name of the tensor it defines */
    int out_tensor;
    int lhs_count;
    int lhs[IR_MAX_RANK]; /* index ids on the left */
    int reduced_count;
    int reduced[IR_MAX_RANK]; /* index ids summed/reduced */
    ReduceOp reduce_op;       /* RO_NONE when nothing is reduced */
    StmtClass cls;
    int input_count; /* at most IR_MAX_OPERANDS */
    int *inputs;     /* [input_count] tensor ids read, first occurrence order;
                        for a contraction [0]=first operand (role input),
                        [1]=second (role weight) */
    /* [input_count]: the index id of each dimension of inputs[q] as this
     * statement reads it (`O[m,d] = P[m,n] * V1[n,d]` reads V1's dimensions
     * as n, d even when V1 was written as V1[m,d]); -1 past the tensor's
     * rank.  Both arrays are exact-size: a statement reads a few tensors,
     * and fixed IR_MAX_OPERANDS rows made every IrStmt 700 bytes. */
    int (*access)[IR_MAX_RANK];
    /* How the right side answers a change of each input (inputs[q]), for
     * online reductions (docs/language.md 5.6): scaling the input by c > 0
     * multiplies the result by c^power[q]; shifting it by d multiplies the
     * result by exp(-shift[q] d).  IR_NOT_SCALING where it does not (the
     * input inside a function other than exp, in a sum whose terms scale
     * differently, ...).  0: the result does not depend on it. */
    signed char *power, *shift;
    int arith_ops; /* + - * / and unary - per point */
    FnCount *fns;  /* function calls per point */
    int fn_count;
    /* The statement as written: its left side, every access of its right
     * side in source order (repeats kept: the reference interpreter reads
     * them), and its line in the listing, `C = A * B` with tensor names and
     * no indices, cut at 255 bytes (NULL when it has no right side). */
    IrAccess target;
    IrAccess *reads;
    int read_count;
    const char *text;
    /* the whole statement with its indices, `dA[m, k] = sum(n) (dC[m, n] *
     * B[k, n])`, for a statement the compiler derived; NULL otherwise */
    const char *source;
    /* `where` as written (cmp PC_NONE when none), and the restriction the
     * statement runs under: its own, else one inherited from a restricted
     * tensor it reads naming both restricted dimensions (docs/language.md) */
    IrPredicate where, mask;
    StmtRole role; /* in a derived op: forward, recomputed, gradient, update */
    /* routing (RT_NONE: none): its route (IrOp.routes) and, for a
     * dispatch or combine, the slot index (-1 otherwise) */
    StmtRouting routing;
    int route, slot;
    Span span;
} IrStmt;

typedef struct IrOp {
    Name name;
    Span span; /* the declaration */
    int param_count;
    Name *param_names;
    int64_t *param_values;
    IrIndex *indices;
    int index_count;
    IrTensor *tensors;
    int tensor_count;
    IrStmt *stmts; /* in dependence (source) order */
    int stmt_count;
    /* the leading statements that are the forward pass: all of a written
     * op's, none of a backward op's, the op's own of a train op */
    int forward_count;
    IrRoute *routes; /* its `route` tensors (docs/language.md 3.9) */
    int route_count;
} IrOp;

/* Every index a statement iterates over: lhs then reduced. */
int ir_stmt_indices(const IrStmt *s, int out[2 * IR_MAX_RANK]);
bool ir_stmt_uses_index(const IrStmt *s, int index);
bool ir_stmt_reduces(const IrStmt *s, int index);
/* Whether s may be online (docs/language.md 5.6): a sum, max or min over
 * one index. */
bool ir_stmt_online_kind(const IrStmt *s);
/* Work of one statement over the given per-index extents (MACs for a
 * contraction, element ops for a vector statement, using fn costs from the
 * given compute unit or 1 each when unit is NULL). */
struct IrCompute;
double ir_stmt_work(const IrOp *op, const IrStmt *s, const int64_t *extents,
                    const struct IrCompute *unit);
/* The cost of one call of `fn` on `unit` in element ops: its `cost`
 * entry, else 1 (also when unit is NULL). */
double ir_fn_cost(const struct IrCompute *unit, Name fn);
/* The index ids a statement uses for the dimensions of `tensor` (its
 * result: the left side; an operand: the indices of its access), or NULL
 * when the statement does not touch the tensor. */
const int *ir_stmt_tensor_indices(const IrOp *op, const IrStmt *s, int tensor);
/* The dimension of `tensor` that statement s addresses with `index`, or -1. */
int ir_stmt_tensor_dim(const IrOp *op, const IrStmt *s, int tensor, int index);
/* The restriction as `x <= y + k` over integers (x, y index ids); false
 * when there is none. */
bool ir_pred_canon(const IrPredicate *p, int *x, int *y, int64_t *k);
/* "n <= m", "j < i - 128": the restriction as the user would write it. */
const char *ir_pred_text(Arena *a, const IrOp *op, const IrPredicate *p);
int ir_find_index(const IrOp *op, Name name);
int ir_find_tensor(const IrOp *op, Name name);
int ir_find_stmt(const IrOp *op, Name name);

/* ---------------------------------------------------------------- archs */

typedef enum Topology { CMT_TOPOLOGIES(VOCAB_ENUM) } Topology;
IR_VOCABULARY(Topology, topology);

typedef enum MemRole { ROLE_ANY, CMT_MEMORY_ROLES(VOCAB_ENUM) } MemRole;
IR_VOCABULARY(MemRole, mem_role); /* mem_role_name(ROLE_ANY) is "any" */

typedef enum MemKind { CMT_MEMORY_KINDS(VOCAB_ENUM) } MemKind;
IR_VOCABULARY(MemKind, mem_kind);

typedef struct IrClusterDim {
    int id;
    Name name;
    int64_t size;
    Topology topology;
    int cluster; /* IrCluster id */
    Span span;
} IrClusterDim;

typedef struct IrCluster {
    int id;
    Name name;
    int first_dim, dim_count; /* its dims in IrArch.dims */
    double link_bandwidth;    /* B/s per link and direction */
    double hop_latency;       /* s */
    double link_energy;       /* J/B per hop */
    double call_latency;      /* s per collective call, besides the hops */
    int64_t channels;         /* parallel streams a call may use (1: one) */
    double channel_bytes;     /* B: the least a stream carries (0: any) */
    double channel_growth;    /* the ramp's exponent: channels used grow as
                                 (n / channel_bytes)^growth (1: linearly) */
    int64_t global_links;     /* dragonfly: links joining each pair of groups (1) */
    double global_bandwidth;  /* dragonfly: B/s per global link and direction */
    int depth;                /* 0 = outermost cluster */
    Span span;
} IrCluster;

typedef struct IrMemory {
    int id;
    Name name;
    MemRole role;            /* ROLE_ACCUMULATOR: holds the results at its level */
    MemKind kind;            /* MK_STREAM: the level above streams through it */
    double capacity;         /* bytes per instance; INFINITY when unbounded */
    double bandwidth;        /* B/s per instance */
    double read_energy;      /* J/B */
    double write_energy;     /* J/B */
    double transfer_latency; /* s per tile moved into or out of it */
    int level;               /* IrLevel id */
    Span span;
} IrMemory;

/* A level of the hierarchy: one memory, or several split by role. */
typedef struct IrLevel {
    int id;    /* 0 = outermost */
    Name name; /* the memory's name, or the first of a role split */
    int first_memory, memory_count;
    int clusters_outside; /* number of IrClusters declared before it */
    int64_t instances;    /* product of the sizes of all dims outside it */
    Span span;
} IrLevel;

typedef struct FnCost {
    Name fn;
    double cost; /* element ops per call */
} FnCost;

typedef struct IrCompute {
    int id;
    Name name;
    bool matrix;                   /* matrix (contractions) or vector */
    double peak_per_cycle;         /* MAC/cycle or op/cycle of one unit */
    double throughput;             /* per second: peak * clock * efficiency * count */
    double energy;                 /* J per MAC or per op */
    double efficiency;             /* default 1 */
    int array_rows, array_cols;    /* systolic array; 0 when not given */
    int shape_m, shape_n, shape_k; /* native operation shape; 0 when not given */
    int count;                     /* units per instance (default 1) */
    FnCost *costs;
    int cost_count;
    int64_t instances; /* product of all cluster dims */
    Span span;
} IrCompute;

typedef struct IrArch {
    Name name;
    Span span;              /* the declaration */
    double clock_hz;        /* 0 when not given (cycles then unusable) */
    double launch_overhead; /* s per fusion group (kernel launch and sync) */
    double price_usd;       /* what the whole system costs; 0 when not given */
    IrLevel *levels;
    int level_count;
    IrMemory *memories;
    int memory_count;
    IrCluster *clusters;
    int cluster_count;
    IrClusterDim *dims; /* all cluster dims, outermost cluster first */
    int dim_count;
    IrCompute *units;
    int unit_count;
    Span clock_span;
    /* `arch gpu<HBM = 3.35 TB/s>`: every parameter in scope (its parents'
     * first) and its value as written for people ("3.35 TB/s") */
    Name *param_names;
    const char **param_texts;
    int param_count;
} IrArch;

int ir_find_level(const IrArch *a, Name name); /* by level or memory name */
/* The arch as a listing names it: `gpu`, or `gpu<HBM=4 TB/s, SMS=132>`
 * with every parameter's value. */
const char *ir_arch_text(Arena *a, const IrArch *arch);
int ir_find_dim(const IrArch *a, Name name);
/* One stage of a pipeline over dim `dim` (docs/language.md 5.9): the arch
 * with that dim of size 1, so the levels and units it replicated count
 * one stage's instances. */
IrArch *ir_stage_arch(Arena *arena, const IrArch *full, int dim);
const IrCompute *ir_matrix_unit(const IrArch *a); /* first matrix unit or NULL */
const IrCompute *ir_vector_unit(const IrArch *a); /* first vector unit or NULL */
/* The memory of a level that holds tensors of the given role (a role split
 * level picks the matching role, else the single memory). */
const IrMemory *ir_level_memory(const IrArch *a, int level, MemRole role);

/* --------------------------------------------------------------- sweeps */

/* A sweep (docs/language.md 5.11): axes of values, every combination a
 * point; the axes of one `zip` advance together. */
/* past these a sweep is refused (E0397): a table, not a search */
#define IR_SWEEP_MAX_AXES 64
#define IR_SWEEP_MAX_VALUES 100000
#define IR_SWEEP_MAX_POINTS 10000000

typedef enum IrAxisKind { IR_AXIS_PARAM, IR_AXIS_ARCH, IR_AXIS_MAPPING } IrAxisKind;

typedef struct IrSweepAxis {
    Name name; /* the parameter; "arch" or "mapping" */
    IrAxisKind kind;
    int value_count;
    const char **texts; /* each value for people: "3.35 TB/s", "h100" */
    double *numbers;    /* each in SI; NAN for a name */
    UnitDim dim;        /* of a quantity axis; none for numbers and names */
    bool integer;       /* every value an integer */
    int zip;            /* 0: its own axis; k: advances with zip k */
    Span span;
} IrSweepAxis;

typedef struct IrSweep {
    Name name;
    Span span;
    IrSweepAxis *axes;
    int axis_count;
    /* the mixed radix: groups (an axis alone or a zip), the first slowest */
    int group_count;
    int *group_of_axis;
    int64_t *group_size;
    int64_t point_count;
} IrSweep;

/* The value index of every axis at `point` (0 .. point_count - 1). */
void ir_sweep_point(const IrSweep *sw, int64_t point, int *value_index);

/* ------------------------------------------------------------- mappings */

/* Decision values: HOLE where the user wrote `?`, UNSET where nothing was
 * said (a default applies). */
/* Whether a decision's span says the mapping wrote it (else the default). */
static inline bool ir_given(Span where) {
    return where.file >= 0;
}
#define IR_HOLE (-2)
#define IR_UNSET (-1)

typedef enum Objective { CMT_OBJECTIVES(VOCAB_ENUM) } Objective;
IR_VOCABULARY(Objective, objective);
typedef enum Overlap { CMT_OVERLAPS(VOCAB_ENUM) } Overlap;
IR_VOCABULARY(Overlap, overlap);

/* Indices one `spatial (i, j) -> dims` line may deal jointly (two: the
 * reads of an operand with one of them are counted exactly, cost-model.md
 * 1.2). */
#define IR_MAX_JOINT 2

/* For each statement and cluster dim: which index is split over it. */
typedef struct IrSpatial {
    int *split;       /* [stmt * dim_count + dim] = index id, IR_UNSET, IR_HOLE */
    Span *split_span; /* where each decision was written */
    int *split_only;  /* [stmt * dim_count + dim]: the first index a hole may
                         take (`n -> ?`), -1 for any */
    /* [(stmt * dim_count + dim) * split_only_words]: every index the hole
     * may take, a bit each: a line `h -> ?, b -> ?` lets a statement that
     * uses both take h or b on each dim; no bit set: any index */
    uint64_t *split_only_set;
    int split_only_words;
    bool whole_hole; /* `spatial ?;` */
    Span hole_span;
    /* `(m, n) -> sm`: [(stmt * dim_count + dim) * (IR_MAX_JOINT - 1) + k],
     * the indices dealt jointly with split[] over that dim, in the line's
     * order, -1 past the last; NULL when no line deals jointly */
    int *joint;
} IrSpatial;

/* Tiles and orders are per statement: the mapping-wide `tile L: ...` line
 * gives every statement its entries, a `tile L for S1, S2: ...` line
 * replaces the entries it names for the statements it names (an index it
 * does not name keeps the mapping-wide entry).  `from` says which line
 * gave an entry: 0 the mapping-wide one (or none), k >= 1 the k-th `for`
 * line of that kind in source order.  The holes of one line are one
 * decision, shared by every statement the line gives them to. */
typedef struct IrTile {
    int64_t *size;         /* [ir_tile_slot()]: IR_UNSET, IR_HOLE or extent */
    Span *span;            /* [ir_tile_slot()]: where each was written */
    int *from;             /* [ir_tile_slot()]: the line that gave it */
    int line_count;        /* `tile L for ...` lines */
    bool *index_hole;      /* [level]: `tile L: ? 64` — an index hole at level */
    Span *index_hole_span; /* each such entry, in source order */
    int index_hole_count;
} IrTile;

typedef struct IrOrder {
    int *perm;    /* [ir_order_slot() * index_count + k] index ids outermost first */
    int *length;  /* [ir_order_slot()]: 0 = unset, -2 = hole (`order L: ?`) */
    Span *span;   /* [ir_order_slot()] */
    int *from;    /* [ir_order_slot()]: 0 the mapping-wide line, k the k-th `for` line */
    bool *chosen; /* [ir_order_slot()]: filled by the optimizer (NULL: none) */
    int line_count;
} IrOrder;

/* `overlap tiles reserve R of U` (docs/language.md 5.5): R of the chip's
 * U compute units run the collectives that overlap a group's compute, so
 * the compute runs on U - R of them; total 0: nothing reserved */
typedef struct IrReserve {
    int64_t units, total;
} IrReserve;

typedef struct IrFuse {
    int *group; /* [stmt]: group id, or IR_HOLE when `fuse ?` */
    int group_count;
    int *level;         /* [group]: level id, IR_HOLE, IR_UNSET (default) */
    Span *span;         /* [group] */
    bool *written;      /* [group]: a `fuse` line's group, or one the optimizer
                           chose for `fuse ?`; false for a statement left alone */
    int *overlap;       /* [group]: Overlap given on its `fuse` line, or -1 (the
                           mapping's); NULL when no group gives one */
    Span *overlap_span; /* [group]: where, SPAN_NONE when not given */
    IrReserve *reserve; /* [group]: its `fuse` line's reserve, total 0 when
                           not given (the mapping's); NULL when none is */
    bool whole_hole;
    Span hole_span;
} IrFuse;

typedef enum Phase { CMT_PHASES(VOCAB_ENUM) } Phase;
IR_VOCABULARY(Phase, phase);

typedef enum ServeKind { CMT_SERVE_KINDS(VOCAB_ENUM) } ServeKind;
IR_VOCABULARY(ServeKind, serve_kind);

/* `serve prefill|decode of B;` (docs/language.md 5.12): the mapping is a
 * serving step of B sequences; the listing gives its serving metrics and
 * the capacity check counts the weights and caches it holds. */
typedef struct IrServe {
    ServeKind kind; /* SERVE_NONE: not a serving mapping */
    Name sequences_param;
    int64_t sequences; /* B's value */
    Span span;
    /* `serve ... of B = ?` (the optimizer chose B, docs/language.md 5.12)
     * and its bound `under T` on the step's latency (s; 0: none) */
    bool batch_chosen;
    double limit_s;
    /* the value the line gives B (`= 64`, or the optimizer's for `= ?`),
     * before `microbatches N of B` cuts it; 0 when the line gives none */
    int64_t batch_written;
} IrServe;

typedef enum PipeSchedule { CMT_PIPE_SCHEDULES(VOCAB_ENUM) } PipeSchedule;
IR_VOCABULARY(PipeSchedule, pipe_schedule);

/* `pipeline D [1f1b | gpipe | interleaved V];` and `microbatches N;`
 * (docs/language.md 5.9): the mapping's repeats (layers) run in stages
 * over cluster dim D, each stage a copy of the rest of the arch, and each
 * step pushes N micro-batches through them.  The mapping's `arch` is then
 * one stage (D of size 1); `full_arch` is the arch as declared. */
typedef struct IrPipeline {
    const IrArch *full_arch; /* NULL: no pipeline */
    int dim;                 /* the stages' dim in full_arch */
    int64_t stages;          /* its size */
    PipeSchedule schedule;   /* default 1F1B */
    int64_t chunks;          /* layer chunks per stage (interleaved V), else 1 */
    Span span;               /* the `pipeline` line, SPAN_NONE when none */
    int64_t microbatches;    /* 0 or 1: one */
    Span microbatches_span;
    /* `microbatches N of B;`: the op parameter B holds the whole batch and
     * the op is instantiated with B / N (NULL: the op is one micro-batch) */
    Name batch_param;
    /* filled by the optimizer from `pipeline ?` / `microbatches ?`
     * (docs/language.md 5.10), not written */
    bool dim_chosen, microbatches_chosen;
} IrPipeline;

typedef struct IrMapping {
    Name name;
    Span span;      /* the declaration */
    Span name_span; /* its name */
    IrOp *op;       /* instantiated with the mapping's parameters */
    IrArch *arch;
    IrSpatial spatial;
    IrTile tile;
    IrOrder order;
    IrFuse fuse;
    Overlap overlap;
    IrReserve reserve; /* the `overlap` line's; total 0 when none */
    Span reserve_span;
    Objective objective;
    bool objective_given;
    /* `phase backward;`: op is the backward op derived from the mapped
     * op (docs/language.md 5.8); phase_span is SPAN_NONE by default */
    Phase phase;
    Span phase_span;
    /* `recompute ...;` as written ("full", "sc, mx"), NULL when none: the
     * derived op already holds the recomputed copies */
    const char *recompute;
    Span recompute_span;
    int64_t repeat; /* default 1 */
    IrPipeline pipeline;
    IrServe serve;
    /* `overlap ?` on the mapping's line or a `fuse` line: filled by the
     * optimizer (an outer hole, docs/language.md 5.5), not written */
    bool overlap_chosen;
    /* the lines that gave overlap, objective and repeat; SPAN_NONE when
     * the default applies */
    Span overlap_span, objective_span, repeat_span;
    int hole_count; /* 0: evaluate only */
    /* `online S, ...;` (docs/language.md 5.6): per statement whether the
     * readers in its group use its running value (NULL when none is), the
     * line that said so, and per statement j and online statement r the
     * exponent k with which j's result follows r's correction factor
     * ([j * stmt_count + r]; 0: j is not affected). */
    bool *online;
    Span *online_span;
    signed char *online_degree;
    /* outer holes (`pipeline ?`, `microbatches ? of B`, `recompute ?`,
     * docs/language.md 5.10): every combination of their values that
     * checks, each a mapping of its own with the other holes still open
     * (choice_count 0 when none; this mapping is then the first choice,
     * and hole_count counts the outer holes too) */
    struct IrMapping **choices;
    int choice_count;
    Span choice_span; /* the first outer hole's line */
    /* a choice: how its outer holes were filled, e.g. "pipeline pp;
     * microbatches 16 of B; recompute full;" (NULL otherwise) */
    const char *choice_text;
    bool recompute_chosen; /* from `recompute ?` */
} IrMapping;

/* `model NAME { embed E; layers L; head H; }` (docs/language.md 5.13): a
 * model of mappings, its layers the repeated one (their pipeline, micro-
 * batches and phase are the model's), the embedding run before them on
 * the first stage and the head after them on the last, each once per
 * micro-batch.  embed and head are NULL when not given. */
typedef struct IrModel {
    Name name;
    Span span;
    const IrMapping *embed, *layers, *head;
} IrModel;

/* Whether the step accumulates weight gradients over micro-batches (or
 * runs a pipeline), so that their reduction runs once per step. */
static inline bool ir_accumulates(const IrMapping *m) {
    return m->pipeline.full_arch || m->pipeline.microbatches > 1;
}
/* The pass of a step a statement of role r runs in under micro-batches:
 * 0 the forward pass, 1 the backward pass (its recomputation included), 2
 * the update, once per step.  A fused group stays within one of them. */
static inline int ir_step_pass(int role) {
    return role == SR_FORWARD ? 0 : role == SR_UPDATE ? 2 : 1;
}
/* The layers the busiest stage runs: ceil(repeat / stages). */
static inline int64_t ir_stage_layers(const IrMapping *m) {
    int64_t r = m->repeat > 0 ? m->repeat : 1;
    int64_t p = m->pipeline.full_arch && m->pipeline.stages > 0 ? m->pipeline.stages : 1;
    return (r + p - 1) / p;
}

/* The correction exponent of statement j for online statement r (0 when
 * the mapping has no online statement). */
static inline int ir_online_degree(const IrMapping *m, int j, int r) {
    return m->online_degree ? m->online_degree[j * m->op->stmt_count + r] : 0;
}
/* Where statement st's tile of index i at level l sits in IrTile's arrays. */
static inline int ir_tile_slot(const IrMapping *m, int st, int l, int i) {
    return (st * m->arch->level_count + l) * m->op->index_count + i;
}
/* Where statement st's order at level l sits in IrOrder's arrays. */
static inline int ir_order_slot(const IrMapping *m, int st, int l) {
    return st * m->arch->level_count + l;
}
/* Whether statements a and b walk the same tiles of index i at level l
 * (one line gave both, or equal given sizes), and the same order at level
 * l; a hole is the same only as itself (the same line's). */
bool ir_same_tile(const IrMapping *m, int a, int b, int l, int i);
bool ir_same_order(const IrMapping *m, int a, int b, int l);
/* Whether two statements may be fused, sharing one loop nest: the same
 * tiles of every index both use and the same order, at every level
 * (E0332, E0333). */
bool ir_fusable(const IrMapping *m, int a, int b);
/* The number of entries of IrTile's and IrOrder's per-statement arrays. */
static inline int ir_tile_slots(const IrMapping *m) {
    return m->op->stmt_count * m->arch->level_count * m->op->index_count;
}
static inline int ir_order_slots(const IrMapping *m) {
    return m->op->stmt_count * m->arch->level_count;
}

#endif
