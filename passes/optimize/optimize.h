/* optimize.h — the mapping optimizer, the layer above the pipeline: it
 * fills the holes (`?`) of a checked mapping with the best choice within
 * the cost model, using the pipeline (evaluate_mapping) as its oracle, and
 * returns a new mapping; the checked one is never written.  Its private
 * parts are in passes/optimize/space.h. */
#ifndef CMT_OPTIMIZE_H
#define CMT_OPTIMIZE_H

#include "passes/passes.h"

typedef struct OptimizeOptions {
    Objective objective; /* --objective, when objective_given */
    bool objective_given;
    double time_limit_s;      /* --time-limit; <= 0 for none */
    const char *emit_lp_path; /* --emit-lp FILE; NULL for none */
    bool exhaustive;          /* --exhaustive: enumerate instead of the ILP */
} OptimizeOptions;

/* What the optimizer reports back. */
typedef enum SolverStatus {
    SOLVER_NOT_NEEDED,
    SOLVER_OPTIMAL,
    SOLVER_TIME_LIMIT,
    SOLVER_FAILED
} SolverStatus;
const char *solver_status_name(SolverStatus s);

/* One complete mapping evaluated by `--exhaustive` (JSON lists them). */
typedef struct SolverEvaluated {
    const IrMapping *mapping; /* complete; print with mapping_to_cmt */
    double latency_s, energy_j;
    bool feasible;
} SolverEvaluated;

typedef struct SolverReport {
    SolverStatus status;
    double seconds;
    double gap;
    long candidates;
    long rows, columns;         /* size of the last model solved */
    long configurations;        /* global choices kept in the model */
    double space;               /* complete mappings in the space */
    const char *method;         /* "milp", "milp, edp frontier", "exhaustive" */
    double objective;           /* the chosen mapping's objective value */
    SolverEvaluated *evaluated; /* --exhaustive: every mapping evaluated */
    long evaluated_count;
} SolverReport;

/* The optimizer's entry point (optimize.c): a new mapping in `out`, `m`
 * with every hole filled (hole_count 0), or NULL with the reason in
 * p->diags (the caller exits 3).  `m` is left as it was. */
IrMapping *optimize_mapping(Arena *out, Program *p, const IrMapping *m, const OptimizeOptions *opts,
                            SolverReport *report);

/* The step before lowering that `cmtc compile` and the language server
 * share (complete.c): `m` itself when it has no holes (the report says
 * SOLVER_NOT_NEEDED), else optimize_mapping's new mapping; NULL when the
 * holes could not be filled (diagnostics say why). */
const IrMapping *complete_mapping(Arena *out, Program *p, const IrMapping *m,
                                  const OptimizeOptions *opts, SolverReport *report);

#endif
