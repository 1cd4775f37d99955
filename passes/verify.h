/* verify.h — the reference interpreter: an independent, deliberately
 * simple execution of a lowered schedule's loop nest, iteration by
 * iteration, on every instance of every level.  passes/verify.c states its
 * semantics and docs/cost-model.md ("The reference interpreter") sums them
 * up.  It reads only the schedule's decisions and shapes (mapping, op,
 * arch, groups with their fusion level and loop order, and per statement
 * the splits, tiles and trips) and recomputes everything else, so that the
 * analytic passes can be checked against it: `cmtc compile --verify` and
 * tests/unit/test_verify_property.c. */
#ifndef CMT_VERIFY_H
#define CMT_VERIFY_H

#include "passes/passes.h"

/* The interpreter runs when its estimated work is at most this many
 * element steps: the iteration points of every statement on every compute
 * instance (times its tensor accesses), plus the points of every group's
 * loop nest.  Larger schedules are reported as too large to verify. */
#define VERIFY_MAX_STEPS (1L << 20)

typedef enum VerifyClass {
    VC_REDUCE,    /* combining partial results: allreduce, reduce, reduce_scatter */
    VC_BROADCAST, /* one parent serves the same tile to several children */
    VC_RELAYOUT   /* an instance needs data another instance produced */
} VerifyClass;
const char *verify_class_name(VerifyClass c);

/* One memory in one group: the largest instance's numbers. */
typedef struct VerifyMemory {
    double peak_bytes;    /* most bytes resident on one instance at any step */
    double read_bytes;    /* bytes read from one instance over the group */
    double written_bytes; /* bytes written into one instance over the group */
    double traffic_bytes; /* read + written, largest instance */
    double traffic_min;   /* read + written, smallest instance (uneven work) */
    bool exceeded;        /* peak_bytes > the memory's capacity */
} VerifyMemory;

/* Collective events of one group grouped by (tensor, class, dims). */
typedef struct VerifyCollective {
    int group;
    int tensor;
    VerifyClass cls;
    int dims[SCHED_MAX_DIMS]; /* cluster dims, in arch order */
    int dim_count;
    double executions; /* per instance (lockstep steps at which it ran) */
    double bytes;      /* per rank, summed over the executions: reduce the
                          bytes one rank holds of the tile, broadcast the
                          tile, relayout the bytes one rank receives */
} VerifyCollective;

typedef struct VerifyGroup {
    VerifyMemory *memories; /* [arch->memory_count] */
    double executions;      /* statement executions (lockstep steps) */
    double timeline;        /* points of the group's loop nest */
    double early;           /* executions the lowering placed before their
                               in-group inputs were complete (the
                               interpreter deferred them until they were) */
    const char *early_what; /* the first of them: statement, point, element */
} VerifyGroup;

typedef struct VerifyReport {
    bool ran;    /* false: too large (cost > VERIFY_MAX_STEPS) */
    double cost; /* the estimate compared with the limit */
    int group_count;
    VerifyGroup *groups;
    double *work;     /* [stmt]: MACs or element ops, busiest compute instance */
    double *work_min; /* [stmt]: the idlest compute instance */
    VerifyCollective *collectives;
    int collective_count;
    const char *uneven;    /* NULL, or where a split or tile does not divide the
                              range it shares out (some instances idle or get
                              less: the analytic model assumes even shares) */
    const char **problems; /* executions that went wrong: an element never
                              computed or computed twice, a statement never
                              ready, data missing where it was read */
    int problem_count;
} VerifyReport;

/* The interpreter's work estimate for a schedule (see VERIFY_MAX_STEPS). */
double verify_cost(const Schedule *s);

/* Runs the interpreter over every group of `s`, everything allocated in
 * `scratch`.  Returns false (out->ran false) when the schedule is too
 * large to verify. */
bool verify_schedule(Arena *scratch, const Schedule *s, VerifyReport *out);

typedef enum VerifyDiffKind {
    VD_PROBLEM,      /* the interpreter could not execute the schedule as lowered */
    VD_EARLY,        /* a statement is placed before its inputs are complete */
    VD_WORK,         /* work per compute instance differs */
    VD_FOOTPRINT,    /* the analytic footprint is below the interpreter's peak */
    VD_CAPACITY,     /* an accepted schedule exceeds a capacity when executed */
    VD_TRAFFIC,      /* bytes read + written at a memory differ */
    VD_COLL_COUNT,   /* a collective runs a different number of times */
    VD_COLL_BYTES,   /* a collective moves different bytes per rank */
    VD_COLL_MISSING, /* the interpreter saw a collective the analytic model lacks */
    VD_COLL_EXTRA    /* the analytic model has a collective the interpreter never ran */
} VerifyDiffKind;
const char *verify_diff_kind_name(VerifyDiffKind k);

typedef struct VerifyDiff {
    VerifyDiffKind kind;
    int group; /* -1 when not about one group */
    const char *text;
    /* the model's figure and the interpreter's: traffic bytes per
     * instance, a collective's executions or bytes per rank; for a
     * collective the model lacks, the bytes of the model's collective of
     * the same tensor and class over a superset of its dims that runs as
     * often and moves as much (-1 when none); 0 for the other kinds */
    double analytic, measured;
} VerifyDiff;

/* Compares the analytic schedule with the interpreter's report: work,
 * traffic and collective counts and bytes must be equal; the analytic
 * footprint may exceed the interpreter's peak (it is a documented upper
 * bound) but never be below it; no schedule without a capacity excess may
 * exceed a capacity when executed.  Fills *out (in `a`) and returns the
 * number of disagreements. */
int verify_compare(Arena *a, const Schedule *s, const VerifyReport *r, VerifyDiff **out);

/* `cmtc compile --verify`: runs the interpreter on `s` (or says it is too
 * large), prints the verification section to `out` and returns the number
 * of disagreements (0 when too large). */
int verify_print(FILE *out, Arena *a, const Schedule *s);

#endif
