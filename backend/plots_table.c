/* plots_table.c — a sweep's CSV read into a table of points, checked
 * value by value (plots.h); the Pareto frontier of a point set; the grid
 * of a heatmap. */
#include "backend/csv.h"
#include "backend/plots.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const sweep_status_names[SWEEP_STATUS_COUNT] = {"ok", "infeasible", "error",
                                                            "time_limit"};

const char *const sweep_metric_columns[SWEEP_METRIC_COUNT] = {
    "latency_s",           "energy_j",        "time_compute_s",     "time_memory_s",
    "time_network_s",      "time_bubble_s",   "time_other_s",       "intensity_flop_per_b",
    "achieved_flop_per_s", "peak_flop_per_s", "peak_outer_b_per_s", "utilisation",
};

/* What a metric of an ok point may be: every one is a number >= 0; the
 * latency is above 0; only the intensity may be infinite (a point that
 * moves no byte at the outermost memory). */
static bool metric_in_range(SweepMetric m, double v, const char **why) {
    if (v < 0) {
        *why = "is negative";
        return false;
    }
    if (isinf(v) && m != SWEEP_INTENSITY) {
        *why = "is infinite";
        return false;
    }
    if (m == SWEEP_LATENCY && v == 0) {
        *why = "is 0 (an ok point takes some time)";
        return false;
    }
    return true;
}

/* A number as the sweep writes them: what strtod reads, the whole field,
 * no spaces, no hexadecimal, not NaN ("inf" is read; the ranges above
 * decide where it may stand). */
static bool parse_number(const char *text, size_t len, double *out) {
    if (len == 0 || text[0] == ' ' || text[0] == '\t' || strpbrk(text, "xX")) return false;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end != text + len || isnan(v)) return false;
    if (errno == ERANGE && isinf(v)) return false; /* 1e999: not what a sweep writes */
    *out = v == 0 ? 0 : v;                         /* -0 is 0 */
    return true;
}

typedef struct TableReader {
    Arena *arena;
    const char *path;
    FILE *err;
    int errors;
} TableReader;

static void report(TableReader *r, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report(TableReader *r, uint32_t line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(r->err, "%s:%u: error: ", r->path, line);
    vfprintf(r->err, fmt, ap);
    fputc('\n', r->err);
    va_end(ap);
    r->errors++;
}

/* Stops reporting after this many errors: one mistake of the writer
 * repeats on every row. */
enum { MAX_REPORTED_ERRORS = 20 };

/* The field of a value, quoted for a message and cut short when long. */
static const char *shown_value(Arena *a, const CsvField *f) {
    if (f->len <= 40 && !memchr(f->text, '\n', f->len)) return arena_printf(a, "'%s'", f->text);
    size_t n = 0;
    while (n < f->len && n < 37 && f->text[n] != '\n' && f->text[n] != '\r') n++;
    return arena_printf(a, "'%.*s...'", (int)n, f->text);
}

/* Splits an axis header `x.NAME` or `x.NAME (UNIT)`; false when NAME is
 * empty. */
static bool split_axis_header(Arena *a, const char *header, SweepAxis *axis) {
    const char *name = header + 2;
    size_t len = strlen(name);
    axis->unit = "";
    const char *open = strrchr(name, '(');
    if (len > 0 && name[len - 1] == ')' && open && open > name) {
        axis->unit = arena_strndup(a, open + 1, (size_t)(name + len - 1 - (open + 1)));
        len = (size_t)(open - name);
    }
    while (len > 0 && name[len - 1] == ' ') len--;
    axis->name = arena_strndup(a, name, len);
    return len > 0;
}

static int compare_points(const void *pa, const void *pb) {
    const SweepPoint *a = pa, *b = pb;
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* The columns the table needs, found in the header. */
typedef struct Columns {
    int point, status, op;
    int metric[SWEEP_METRIC_COUNT];
} Columns;

static bool find_columns(TableReader *r, const CsvRecord *header, Columns *c, SweepTable *t) {
    c->point = c->status = c->op = -1;
    for (int m = 0; m < SWEEP_METRIC_COUNT; m++) c->metric[m] = -1;
    t->axes = ARENA_ARRAY(r->arena, SweepAxis, header->count);
    for (int i = 0; i < header->count; i++) {
        const char *name = header->fields[i].text;
        int *slot = NULL;
        if (strcmp(name, "point") == 0) slot = &c->point;
        if (strcmp(name, "status") == 0) slot = &c->status;
        if (strcmp(name, "op") == 0) slot = &c->op;
        for (int m = 0; m < SWEEP_METRIC_COUNT; m++)
            if (strcmp(name, sweep_metric_columns[m]) == 0) slot = &c->metric[m];
        if (slot) {
            if (*slot >= 0)
                report(r, header->line, "column '%s' appears twice (fields %d and %d)", name,
                       *slot + 1, i + 1);
            *slot = i;
            continue;
        }
        if (strncmp(name, "x.", 2) != 0) continue; /* a column the plots do not use */
        SweepAxis *axis = &t->axes[t->axis_count];
        axis->column = i;
        if (!split_axis_header(r->arena, name, axis)) {
            report(r, header->line,
                   "axis column %d, '%s', has no name (expected x.NAME or "
                   "x.NAME (UNIT))",
                   i + 1, name);
            continue;
        }
        for (int k = 0; k < t->axis_count; k++)
            if (strcmp(t->axes[k].name, axis->name) == 0)
                report(r, header->line, "axis '%s' appears twice (fields %d and %d)", axis->name,
                       t->axes[k].column + 1, i + 1);
        t->axis_count++;
    }
    const char *missing[SWEEP_METRIC_COUNT + 2];
    int missing_count = 0;
    if (c->point < 0) missing[missing_count++] = "point";
    if (c->status < 0) missing[missing_count++] = "status";
    for (int m = 0; m < SWEEP_METRIC_COUNT; m++)
        if (c->metric[m] < 0) missing[missing_count++] = sweep_metric_columns[m];
    /* a column spelt almost right is named on its own line; the others
     * missing are listed together */
    const char *names[header->count > 0 ? header->count : 1];
    for (int i = 0; i < header->count; i++) names[i] = header->fields[i].text;
    const char *unmatched = "";
    int unmatched_count = 0;
    for (int k = 0; k < missing_count; k++) {
        const char *near = spell_suggest(missing[k], names, header->count);
        if (near) {
            report(r, header->line, "no column '%s' in the header (is '%s' meant to be it?)",
                   missing[k], near);
        } else {
            unmatched = arena_printf(r->arena, "%s%s'%s'", unmatched, unmatched_count ? ", " : "",
                                     missing[k]);
            unmatched_count++;
        }
    }
    if (unmatched_count)
        report(r, header->line, "no column%s %s in the header", unmatched_count > 1 ? "s" : "",
               unmatched);
    return r->errors == 0;
}

static void read_point(TableReader *r, const CsvRecord *row, const Columns *c, SweepTable *t,
                       SweepPoint *p) {
    p->line = row->line;
    const CsvField *f = &row->fields[c->point];
    char *end;
    errno = 0;
    long long index = f->len ? strtoll(f->text, &end, 10) : -1;
    if (f->len == 0 || !(f->text[0] >= '0' && f->text[0] <= '9') || end != f->text + f->len ||
        errno == ERANGE)
        report(r, f->line, "column 'point': %s is not a point index (an integer from 0)",
               shown_value(r->arena, f));
    p->index = index;
    f = &row->fields[c->status];
    p->status = SWEEP_STATUS_COUNT;
    for (int s = 0; s < SWEEP_STATUS_COUNT; s++)
        if (strcmp(f->text, sweep_status_names[s]) == 0) p->status = (SweepStatus)s;
    if (p->status == SWEEP_STATUS_COUNT) {
        report(r, f->line, "column 'status': %s is not ok, infeasible, error or time_limit",
               shown_value(r->arena, f));
        p->status = SWEEP_ERROR;
    }
    t->status_count[p->status]++;
    p->op = c->op >= 0 ? row->fields[c->op].text : "";
    for (int m = 0; m < SWEEP_METRIC_COUNT; m++) {
        f = &row->fields[c->metric[m]];
        const char *column = sweep_metric_columns[m];
        p->metric[m] = NAN;
        if (f->len == 0) {
            /* a point that is not ok may have no numbers */
            if (p->status == SWEEP_OK)
                report(r, f->line, "column '%s' is empty on an ok point (point %lld)", column,
                       (long long)p->index);
            continue;
        }
        double v;
        const char *why;
        if (!parse_number(f->text, f->len, &v))
            report(r, f->line, "column '%s': %s is not a number", column, shown_value(r->arena, f));
        else if (!metric_in_range((SweepMetric)m, v, &why))
            report(r, f->line, "column '%s': %s %s", column, shown_value(r->arena, f), why);
        else
            p->metric[m] = v;
    }
    if (p->status == SWEEP_OK && !isnan(p->metric[SWEEP_LATENCY])) {
        double sum = 0;
        bool all = true;
        for (int k = 0; k < SWEEP_TIME_PARTS; k++) {
            all = all && !isnan(p->metric[SWEEP_TIME_FIRST + k]);
            sum += p->metric[SWEEP_TIME_FIRST + k];
        }
        double latency = p->metric[SWEEP_LATENCY];
        if (all && fabs(sum - latency) > 1e-3 * latency)
            fprintf(r->err,
                    "%s:%u: warning: the time_*_s columns of point %lld add up to %.6g s, not "
                    "its latency_s %.6g s (the breakdown's bar shows their sum)\n",
                    r->path, row->line, (long long)p->index, sum, latency);
    }
    p->axis_text = ARENA_ARRAY(r->arena, const char *, t->axis_count);
    p->axis_value = ARENA_ARRAY(r->arena, double, t->axis_count);
    for (int k = 0; k < t->axis_count; k++) {
        f = &row->fields[t->axes[k].column];
        p->axis_text[k] = f->text;
        double v;
        p->axis_value[k] = parse_number(f->text, f->len, &v) && isfinite(v) ? v : NAN;
    }
}

bool sweep_table_parse(Arena *a, const char *path, const char *text, size_t len, SweepTable *out,
                       FILE *err) {
    memset(out, 0, sizeof *out);
    out->path = path;
    TableReader r = {a, path, err, 0};
    CsvTable csv;
    uint32_t error_line;
    const char *error;
    if (!csv_parse(a, text, len, &csv, &error_line, &error)) {
        report(&r, error_line, "%s", error);
        return false;
    }
    if (csv.count == 0) {
        report(&r, 1,
               "the file is empty: expected a header row (point,status,latency_s,...) "
               "and a row per point");
        return false;
    }
    Columns c;
    if (!find_columns(&r, &csv.records[0], &c, out)) return false;
    if (csv.count == 1) {
        report(&r, csv.records[0].line + 1, "no points: the header is the only row");
        return false;
    }
    out->point_count = csv.count - 1;
    out->points = ARENA_ARRAY(a, SweepPoint, out->point_count);
    for (int i = 0; i < out->point_count && r.errors < MAX_REPORTED_ERRORS; i++)
        read_point(&r, &csv.records[i + 1], &c, out, &out->points[i]);
    if (r.errors >= MAX_REPORTED_ERRORS) {
        fprintf(err, "%s: note: stopped after %d errors\n", path, r.errors);
        return false;
    }
    if (r.errors) return false;
    qsort(out->points, (size_t)out->point_count, sizeof *out->points, compare_points);
    for (int i = 1; i < out->point_count; i++)
        if (out->points[i].index == out->points[i - 1].index)
            report(&r, out->points[i].line, "point %lld appears twice (also on line %u)",
                   (long long)out->points[i].index, out->points[i - 1].line);
    for (int k = 0; k < out->axis_count; k++) {
        out->axes[k].numeric = true;
        for (int i = 0; i < out->point_count; i++)
            if (isnan(out->points[i].axis_value[k])) out->axes[k].numeric = false;
    }
    return r.errors == 0;
}

/* ------------------------------------------------------------ frontier */

typedef struct XY {
    double x, y;
    int i;
} XY;

static int compare_xy(const void *pa, const void *pb) {
    const XY *a = pa, *b = pb;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    return a->i - b->i;
}

int pareto_frontier(Arena *scratch, const double *x, const double *y, int n, bool *on_frontier) {
    XY *sorted = ARENA_ARRAY(scratch, XY, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) sorted[i] = (XY){x[i], y[i], i};
    qsort(sorted, (size_t)n, sizeof *sorted, compare_xy);
    /* In order of x (then y), a point is on the frontier when its y is
     * below every y before it, or when it equals the last frontier point
     * (equal points do not dominate each other); any other point has one
     * before it with x <= and y <=, one of them strictly. */
    int count = 0;
    const XY *last = NULL;
    for (int k = 0; k < n; k++) {
        const XY *p = &sorted[k];
        bool on = !last || p->y < last->y || (p->y == last->y && p->x == last->x);
        on_frontier[p->i] = on;
        if (on) {
            count++;
            last = p;
        }
    }
    return count;
}

/* ------------------------------------------------------------- heatmap */

static int compare_doubles(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* The distinct values of numeric axis k, ascending; returns their count. */
static int distinct_values(Arena *a, const SweepTable *t, int k, double **out) {
    double *v = ARENA_ARRAY(a, double, t->point_count);
    for (int i = 0; i < t->point_count; i++) v[i] = t->points[i].axis_value[k];
    qsort(v, (size_t)t->point_count, sizeof *v, compare_doubles);
    int n = 0;
    for (int i = 0; i < t->point_count; i++)
        if (n == 0 || v[i] != v[n - 1]) v[n++] = v[i];
    *out = v;
    return n;
}

static int value_index(const double *values, int n, double v) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (values[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Do numeric axes x and y (nx and ny distinct values) vary independently,
 * every pair of their values met by some point?  Zipped axes do not: their
 * pairs lie on a diagonal, and a heat map of them is mostly blank. */
static bool full_grid(Arena *a, const SweepTable *t, int x, const double *xv, int nx, int y,
                      const double *yv, int ny) {
    bool *seen = ARENA_ARRAY(a, bool, (size_t)nx *(size_t)ny + 1);
    int met = 0;
    for (int i = 0; i < t->point_count; i++) {
        int c = value_index(yv, ny, t->points[i].axis_value[y]) * nx +
                value_index(xv, nx, t->points[i].axis_value[x]);
        if (!seen[c]) met++;
        seen[c] = true;
    }
    return met == nx * ny;
}

bool heatmap_grid(Arena *a, const SweepTable *t, HeatmapGrid *out) {
    memset(out, 0, sizeof *out);
    int chosen[2] = {-1, -1};
    double *values[2] = {NULL, NULL};
    int counts[2] = {0, 0};
    /* the numeric axes of two values or more */
    int *axis = ARENA_ARRAY(a, int, t->axis_count + 1);
    double **axis_values = ARENA_ARRAY(a, double *, t->axis_count + 1);
    int *axis_count = ARENA_ARRAY(a, int, t->axis_count + 1);
    int n = 0;
    for (int k = 0; k < t->axis_count; k++) {
        if (!t->axes[k].numeric) continue;
        double *v;
        int c = distinct_values(a, t, k, &v);
        if (c < 2) continue;
        axis[n] = k;
        axis_values[n] = v;
        axis_count[n++] = c;
    }
    if (n < 2) return false;
    /* the first pair that varies independently, else the first two */
    int pick_x = 0, pick_y = 1;
    bool found = false;
    for (int i = 0; i < n && !found; i++)
        for (int j = i + 1; j < n && !found; j++)
            if (full_grid(a, t, axis[i], axis_values[i], axis_count[i], axis[j], axis_values[j],
                          axis_count[j])) {
                pick_x = i;
                pick_y = j;
                found = true;
            }
    chosen[0] = axis[pick_x];
    chosen[1] = axis[pick_y];
    values[0] = axis_values[pick_x];
    values[1] = axis_values[pick_y];
    counts[0] = axis_count[pick_x];
    counts[1] = axis_count[pick_y];
    out->x_axis = chosen[0];
    out->y_axis = chosen[1];
    out->x_values = values[0];
    out->y_values = values[1];
    out->nx = counts[0];
    out->ny = counts[1];
    int cells = out->nx * out->ny;
    out->min_latency_s = ARENA_ARRAY(a, double, cells);
    out->max_utilisation = ARENA_ARRAY(a, double, cells);
    for (int c = 0; c < cells; c++) out->min_latency_s[c] = out->max_utilisation[c] = NAN;
    for (int i = 0; i < t->point_count; i++) {
        const SweepPoint *p = &t->points[i];
        if (p->status != SWEEP_OK) continue;
        int ix = value_index(out->x_values, out->nx, p->axis_value[out->x_axis]);
        int iy = value_index(out->y_values, out->ny, p->axis_value[out->y_axis]);
        int c = iy * out->nx + ix;
        double latency = p->metric[SWEEP_LATENCY], use = p->metric[SWEEP_UTILISATION];
        if (isnan(out->min_latency_s[c]) || latency < out->min_latency_s[c])
            out->min_latency_s[c] = latency;
        if (isnan(out->max_utilisation[c]) || use > out->max_utilisation[c])
            out->max_utilisation[c] = use;
    }
    for (int c = 0; c < cells; c++) out->empty_cells += isnan(out->min_latency_s[c]);
    return true;
}
