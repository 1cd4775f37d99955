/* sweep.h — the rows of `cmtc sweep` (sweep.c) and the command that
 * evaluates a sweep's points in child processes (sweep_run.c). */
#ifndef CMT_SWEEP_H
#define CMT_SWEEP_H

#include "backend/emit.h"
#include "frontend/check.h"
#include "ir/schedule.h"
#include "passes/optimize/optimize.h"

typedef enum SweepFormat { SWEEP_CSV, SWEEP_JSONL } SweepFormat;

/* The CSV header line (no line break); NULL for JSON Lines. */
const char *sweep_header(Arena *a, const IrSweep *sw, SweepFormat format);
/* An axis's column: `x.M`, `x.arch`, `x.HBM (B/s)`. */
const char *sweep_axis_header(Arena *a, const IrSweepAxis *ax);
/* The first fields of a point's CSV row (`point,x...`): what tells a row
 * already written for that point (resume, merge). */
const char *sweep_row_key(Arena *a, const IrSweep *sw, int64_t point);
/* Checks, solves, lowers and costs point `point` and returns its row
 * (CSV with a line break, or one JSON line): status ok with every figure,
 * or error / infeasible / time_limit with the first diagnostic. */
const char *sweep_evaluate_point(Arena *a, Program *p, const SourceManager *sm, const IrSweep *sw,
                                 int64_t point, const OptimizeOptions *opts, const char *inputs,
                                 SweepFormat format);

/* What a sweep's rows are computed from, as the `inputs` column gives it:
 * a 64-bit hash (16 hex digits) of the text of every file the program
 * read, the sweep's own and every module it uses.  A row whose `inputs`
 * differ was made from another version of them.  Taken before any output
 * is read into the same source manager. */
const char *sweep_inputs(Arena *a, const SourceManager *sm);
/* A row's `inputs` field ("" when it has none). */
const char *sweep_row_inputs(Arena *a, const char *row, SweepFormat format);
/* A row saying why a point has no figures (status error, time_limit). */
const char *sweep_failure_row(Arena *a, const IrSweep *sw, int64_t point, const char *status,
                              const char *why, const char *inputs, SweepFormat format);
/* Whether a row's status is ok. */
bool sweep_row_ok(const IrSweep *sw, const char *row, SweepFormat format);

#endif
