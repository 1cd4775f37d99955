/* plots.h — the plots of a design-space sweep: `cmtc plot`, and what
 * `cmtc sweep` calls once its CSV is written.  The sweep's CSV is read
 * into a table (plots_table.c), and each plot is a data file, a gnuplot
 * script and the SVG gnuplot draws from them (plots.c); docs/plots.md
 * describes the CSV and the plots.
 *
 * The CSV (RFC 4180, a header row; columns found by name, others
 * ignored): `point` (0-based index), axis columns `x.NAME` or
 * `x.NAME (UNIT)` (numbers in SI base units, or names), `status` (ok,
 * infeasible, error, time_limit), the metrics named in
 * sweep_metric_columns, and `op` (optional: the plots' subtitle names it
 * when every point has the same). */
#ifndef CMT_PLOTS_H
#define CMT_PLOTS_H

#include "frontend/util/util.h"

/* Reads a sweep CSV (format above) and writes SVG plots into out_dir
 * (created if missing) by running gnuplot; reports problems on err with
 * the file and line; false on failure (nothing half-written is left
 * under a final name).  The plots: pareto.svg (latency against energy,
 * the Pareto frontier joined), roofline.svg, breakdown.svg (the time of
 * each point, stacked by kind), heatmap.svg and heatmap_utilisation.svg
 * (over the first two numeric axes of two values or more; skipped with a
 * note on err when there are not two), each beside its NAME.dat and
 * NAME.gp.  Every file is made in a temporary folder inside out_dir and
 * moved into place only once all of them are made. */
bool sweep_plots(const char *csv_path, const char *out_dir, FILE *err);

/* -------------------------------------------------- the table (plots_table.c) */

typedef enum SweepStatus {
    SWEEP_OK,
    SWEEP_INFEASIBLE,
    SWEEP_ERROR,
    SWEEP_TIME_LIMIT,
    SWEEP_STATUS_COUNT
} SweepStatus;
/* "ok", "infeasible", "error", "time_limit" */
extern const char *const sweep_status_names[SWEEP_STATUS_COUNT];

/* The numbers each point has, in the order of sweep_metric_columns; the
 * five times are a partition of the latency. */
typedef enum SweepMetric {
    SWEEP_LATENCY,
    SWEEP_ENERGY,
    SWEEP_TIME_COMPUTE,
    SWEEP_TIME_MEMORY,
    SWEEP_TIME_NETWORK,
    SWEEP_TIME_BUBBLE,
    SWEEP_TIME_OTHER,
    SWEEP_INTENSITY,   /* FLOP per byte moved at the outermost memory */
    SWEEP_ACHIEVED,    /* FLOP/s */
    SWEEP_PEAK_FLOP,   /* FLOP/s */
    SWEEP_PEAK_OUTER,  /* B/s of the outermost memory */
    SWEEP_UTILISATION, /* achieved / peak, 0..1 */
    SWEEP_METRIC_COUNT
} SweepMetric;
enum { SWEEP_TIME_FIRST = SWEEP_TIME_COMPUTE, SWEEP_TIME_PARTS = 5 };
/* "latency_s", "energy_j", "time_compute_s", ...: the required columns
 * besides `point` and `status`. */
extern const char *const sweep_metric_columns[SWEEP_METRIC_COUNT];

typedef struct SweepAxis {
    const char *name; /* "HBM" of `x.HBM (B/s)` */
    const char *unit; /* "B/s"; "" when the header gives none */
    int column;
    bool numeric; /* every point's value is a finite number */
} SweepAxis;

typedef struct SweepPoint {
    int64_t index; /* the `point` column */
    uint32_t line; /* the line its row starts on */
    SweepStatus status;
    const char *op;                    /* "" without an `op` column */
    double metric[SWEEP_METRIC_COUNT]; /* NAN where a point that is not ok has none */
    const char **axis_text;            /* each axis's value as written */
    double *axis_value;                /* each numeric axis's value; NAN for text ones */
} SweepPoint;

typedef struct SweepTable {
    const char *path;
    SweepAxis *axes;
    int axis_count;
    SweepPoint *points; /* in point order */
    int point_count;
    int status_count[SWEEP_STATUS_COUNT];
} SweepTable;

/* Reads the CSV text of `path` (len bytes) into a table in `a`.  Every
 * problem is one line on err, `PATH:LINE: error: ...` (a missing column,
 * a value that is not a number or out of its range, an unknown status, a
 * point index twice, an empty file); false after any.  Warnings (times
 * that do not add up to the latency) are printed the same way and do not
 * fail. */
bool sweep_table_parse(Arena *a, const char *path, const char *text, size_t len, SweepTable *out,
                       FILE *err);

/* Marks on_frontier[i] for each of the n points (x[i], y[i]) that no
 * other point dominates (no other has both coordinates <= and one <;
 * equal points do not dominate each other) and returns how many there
 * are.  O(n log n); scratch holds the sort. */
int pareto_frontier(Arena *scratch, const double *x, const double *y, int n, bool *on_frontier);

/* A metric over two numeric axes: cell (ix, iy) holds the points whose
 * values on the two axes are x_values[ix] and y_values[iy], whatever
 * their values on the other axes. */
typedef struct HeatmapGrid {
    int x_axis, y_axis;                /* indices into the table's axes */
    const double *x_values, *y_values; /* distinct values, ascending */
    int nx, ny;
    /* [iy * nx + ix]: the least latency and the greatest utilisation of
     * the cell's ok points; NAN for a cell without an ok point */
    double *min_latency_s, *max_utilisation;
    int empty_cells;
} HeatmapGrid;

/* Fills the grid over two numeric axes that have two distinct values or
 * more (over every point, ok or not): the first pair, in column order,
 * that varies independently (every pair of their values met by a point;
 * zipped axes are not), else the first two; false when there are not two
 * such axes. */
bool heatmap_grid(Arena *a, const SweepTable *t, HeatmapGrid *out);

#endif
