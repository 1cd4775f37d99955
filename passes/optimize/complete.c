/* complete.c — the driver above the pipeline and the optimizer: a mapping
 * is lowered as checked when complete, or after the optimizer filled its
 * holes into a new mapping.  `cmtc compile` and the language server call
 * it, then lower_mapping. */
#include "passes/optimize/optimize.h"

#include <string.h>

const char *solver_status_name(SolverStatus st) {
    switch (st) {
    case SOLVER_NOT_NEEDED: return "not_needed";
    case SOLVER_OPTIMAL: return "optimal";
    case SOLVER_TIME_LIMIT: return "time_limit";
    case SOLVER_FAILED: return "failed";
    }
    return "?";
}

const IrMapping *complete_mapping(Arena *out, Program *p, const IrMapping *m,
                                  const OptimizeOptions *opts, SolverReport *report) {
    memset(report, 0, sizeof *report);
    report->status = SOLVER_NOT_NEEDED;
    if (m->hole_count == 0) return m;
    return optimize_mapping(out, p, m, opts, report);
}
