/* test_plots.c — the plots of a sweep (backend/plots.h): the CSV reader
 * on quoted fields, embedded commas, doubled quotes and line breaks, with
 * the line of every record; the table read from a sweep's CSV, and each
 * mistake reported with its file and line; the Pareto frontier of a point
 * set computed by hand; the heatmap's cells (least latency and greatest
 * utilisation over the other axes) computed by hand; and sweep_plots
 * failing cleanly: an output folder that cannot be made, gnuplot missing,
 * gnuplot failing (the old plots left as they were, no temporary folder
 * left behind).  The plots gnuplot draws: tests/suites/plots.sh. */
#include "backend/csv.h"
#include "backend/plots.h"
#include "tests/unit/unit.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static Arena arena;

/* ------------------------------------------------------------------ csv */

static bool parse(const char *text, CsvTable *t, uint32_t *line, const char **error) {
    return csv_parse(&arena, text, strlen(text), t, line, error);
}

static void test_csv_quoting(void) {
    const char *text = "a,b,c\r\n"
                       "1,\"x, y\",\"say \"\"hi\"\"\"\r\n"
                       "2,\"two\nlines\",z\n"
                       "3,,\"\"\n";
    CsvTable t;
    uint32_t line;
    const char *error;
    CHECK(parse(text, &t, &line, &error), "csv: quoted fields parse");
    CHECK(t.count == 4, "csv: a header and three records");
    CHECK_STR(t.records[1].fields[1].text, "x, y", "csv: a comma inside quotes");
    CHECK_STR(t.records[1].fields[2].text, "say \"hi\"", "csv: doubled quotes are one quote");
    CHECK(t.records[1].fields[2].len == 8, "csv: the length of the unquoted field");
    CHECK_STR(t.records[2].fields[1].text, "two\nlines", "csv: a line break inside quotes");
    CHECK(t.records[2].line == 3 && t.records[2].fields[2].line == 4,
          "csv: a field after a quoted line break is on the next line");
    CHECK(t.records[3].line == 5, "csv: the record after a two-line record starts on line 5");
    CHECK_STR(t.records[3].fields[1].text, "", "csv: an empty field");
    CHECK_STR(t.records[3].fields[2].text, "", "csv: an empty quoted field");
    CHECK(t.records[3].count == 3, "csv: every record has the header's fields");

    CHECK(parse("\xEF\xBB\xBFp,q\n\n1,2\n\n3,4", &t, &line, &error) && t.count == 3,
          "csv: a byte-order mark and empty lines are skipped, the last line needs no break");
    CHECK_STR(t.records[0].fields[0].text, "p", "csv: the byte-order mark is not in the name");
    CHECK(t.records[2].line == 5, "csv: lines are counted through the empty ones");
    CHECK(parse("a,b\n1,\n", &t, &line, &error) && t.records[1].count == 2 &&
              t.records[1].fields[1].len == 0,
          "csv: a trailing comma ends with an empty field");
    CHECK(parse("", &t, &line, &error) && t.count == 0, "csv: no text, no records");
}

static void test_csv_mistakes(void) {
    CsvTable t;
    uint32_t line;
    const char *error;
    CHECK(!parse("a,b\n1,\"open\n2,3\n", &t, &line, &error) && line == 2 &&
              strstr(error, "never ends"),
          "csv: an unclosed quote is reported on the line it opens");
    CHECK(!parse("a,b\n1,2\n3,\"x\"y\n", &t, &line, &error) && line == 3 &&
              strstr(error, "'y' after the closing quote of field 2"),
          "csv: a character after a closing quote");
    CHECK(!parse("a,b\n1,x\"y\n", &t, &line, &error) && line == 2 &&
              strstr(error, "quote inside unquoted field 2"),
          "csv: a quote inside an unquoted field");
    CHECK(!parse("a,b,c\n1,2,3\n\"x\ny\",2\n", &t, &line, &error) && line == 3 &&
              strcmp(error, "this record has 2 fields, the header 3") == 0,
          "csv: a record with fewer fields, reported on the line it starts");
    CHECK(!parse("a\n1,2\n", &t, &line, &error) && line == 2 &&
              strstr(error, "has 2 fields, the header 1"),
          "csv: a record with more fields");
    static const char with_nul[] = "a,b\n1,x\0y\n";
    CHECK(!csv_parse(&arena, with_nul, sizeof with_nul - 1, &t, &line, &error) && line == 2 &&
              strstr(error, "NUL"),
          "csv: a NUL byte");
}

/* ---------------------------------------------------------------- table */

/* Every required column, in an order of their own, an unknown column, a
 * text axis and two numeric axes, a quoted message spanning two lines. */
static const char *const good_header =
    "status,x.arch,point,x.M,x.HBM (B/s),latency_s,energy_j,time_compute_s,time_memory_s,"
    "time_network_s,time_bubble_s,time_other_s,intensity_flop_per_b,achieved_flop_per_s,"
    "peak_flop_per_s,peak_outer_b_per_s,utilisation,message,op\n";

/* A row of the table above: status, arch, point, M, HBM, latency, energy,
 * the five times then the rest fixed (or all empty when `empty`). */
static const char *row(const char *status, const char *arch, int point, double m, double hbm,
                       double latency, double energy, const char *message) {
    if (strcmp(status, "ok") != 0)
        return arena_printf(&arena, "%s,%s,%d,%g,%g,,,,,,,,,,,,,%s,gemm\n", status, arch, point, m,
                            hbm, message);
    return arena_printf(&arena, "%s,%s,%d,%g,%g,%g,%g,%g,%g,0,0,0,50,1e12,2e12,1e11,0.5,%s,gemm\n",
                        status, arch, point, m, hbm, latency, energy, latency * 0.75,
                        latency * 0.25, message);
}

/* Parses `text` as t.csv; what was reported goes to *report. */
static bool table_of(const char *text, SweepTable *t, const char **report) {
    char *buf = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&buf, &len);
    bool ok = sweep_table_parse(&arena, "t.csv", text, strlen(text), t, err);
    fclose(err);
    *report = arena_strdup(&arena, buf ? buf : "");
    free(buf);
    return ok;
}

static void test_table(void) {
    const char *text = arena_printf(
        &arena, "%s%s%s%s%s", good_header, row("ok", "a100", 2, 256, 2e12, 2e-3, 0.5, ""),
        row("infeasible", "a100", 1, 512, 2e12, 0, 0, "\"GLB holds 8 MiB,\nneeds 9\""),
        row("ok", "h100", 0, 256, 3.35e12, 1e-3, 0.25, ""),
        row("time_limit", "h100", 3, 512, 3.35e12, 0, 0, ""));
    SweepTable t;
    const char *report;
    CHECK(table_of(text, &t, &report), "table: a good CSV reads");
    CHECK_STR(report, "", "table: nothing to report");
    CHECK(t.point_count == 4 && t.axis_count == 3, "table: four points, three axes");
    CHECK_STR(t.axes[0].name, "arch", "table: axis x.arch");
    CHECK(!t.axes[0].numeric, "table: x.arch is text");
    CHECK(t.axes[1].numeric && strcmp(t.axes[1].unit, "") == 0, "table: x.M is numeric, no unit");
    CHECK_STR(t.axes[2].name, "HBM", "table: the name of x.HBM (B/s)");
    CHECK_STR(t.axes[2].unit, "B/s", "table: the unit of x.HBM (B/s)");
    CHECK(t.points[0].index == 0 && t.points[3].index == 3, "table: points in point order");
    CHECK(t.points[0].line == 5, "table: point 0 is on line 5, after a two-line field");
    CHECK_EXACT(t.points[0].metric[SWEEP_LATENCY], 1e-3, "table: latency of point 0");
    CHECK_EXACT(t.points[0].metric[SWEEP_TIME_MEMORY], 0.25e-3, "table: memory time of point 0");
    CHECK_EXACT(t.points[0].axis_value[2], 3.35e12, "table: HBM of point 0");
    CHECK_STR(t.points[0].axis_text[0], "h100", "table: arch of point 0");
    CHECK(t.points[1].status == SWEEP_INFEASIBLE && isnan(t.points[1].metric[SWEEP_LATENCY]),
          "table: an infeasible point without numbers");
    CHECK(t.status_count[SWEEP_OK] == 2 && t.status_count[SWEEP_INFEASIBLE] == 1 &&
              t.status_count[SWEEP_TIME_LIMIT] == 1 && t.status_count[SWEEP_ERROR] == 0,
          "table: the points counted by status");
    CHECK_STR(t.points[2].op, "gemm", "table: the op column");
}

/* `text` is refused, and what is reported contains `expected`. */
static void refused(const char *text, const char *expected, const char *name) {
    SweepTable t;
    const char *report;
    bool ok = table_of(text, &t, &report);
    CHECK(!ok && strstr(report, expected), name);
    if (ok || !strstr(report, expected)) printf("  reported: %s", report);
}

static void test_table_mistakes(void) {
    const char *ok_row = row("ok", "a100", 0, 256, 2e12, 2e-3, 0.5, "");
    refused("", "t.csv:1: error: the file is empty", "table: an empty file");
    refused("\n\n", "t.csv:1: error: the file is empty", "table: a file of empty lines");
    refused(good_header, "t.csv:2: error: no points", "table: a header alone");
    refused("point,status\n0,ok\n",
            "t.csv:1: error: no columns 'latency_s', 'energy_j', 'time_compute_s'",
            "table: missing columns, listed");
    {
        const char *at = strstr(good_header, "latency_s");
        const char *text = arena_printf(&arena, "%.*slatncy_s%s%s", (int)(at - good_header),
                                        good_header, at + strlen("latency_s"), ok_row);
        refused(text, "t.csv:1: error: no column 'latency_s' in the header (is 'latncy_s' meant",
                "table: a misspelt column is suggested");
    }
    refused(arena_printf(&arena, "%s%sok,h100,1,256,2e12,1e-3,fast,1e-3,0,0,0,0,1,1,1,1,1,,g\n",
                         good_header, ok_row),
            "t.csv:3: error: column 'energy_j': 'fast' is not a number",
            "table: a number that is not one, with its line");
    refused(arena_printf(&arena, "%sok,a,0,1,1,,1,1,0,0,0,0,1,1,1,1,1,,g\n", good_header),
            "t.csv:2: error: column 'latency_s' is empty on an ok point (point 0)",
            "table: an ok point without a latency");
    refused(arena_printf(&arena, "%sok,a,0,1,1,-1,1,1,0,0,0,0,1,1,1,1,1,,g\n", good_header),
            "column 'latency_s': '-1' is negative", "table: a negative latency");
    refused(arena_printf(&arena, "%sok,a,0,1,1,inf,1,1,0,0,0,0,1,1,1,1,1,,g\n", good_header),
            "column 'latency_s': 'inf' is infinite", "table: an infinite latency");
    refused(arena_printf(&arena, "%sok,a,0,1,1,nan,1,1,0,0,0,0,1,1,1,1,1,,g\n", good_header),
            "column 'latency_s': 'nan' is not a number", "table: NaN");
    refused(arena_printf(&arena, "%sok,a,0,1,1, 1,1,1,0,0,0,0,1,1,1,1,1,,g\n", good_header),
            "column 'latency_s': ' 1' is not a number", "table: a space before a number");
    refused(arena_printf(&arena, "%sdone,a,0,1,1,1,1,1,0,0,0,0,1,1,1,1,1,,g\n", good_header),
            "t.csv:2: error: column 'status': 'done' is not ok, infeasible, error or time_limit",
            "table: an unknown status");
    refused(arena_printf(&arena, "%sok,a,x1,1,1,1,1,1,0,0,0,0,1,1,1,1,1,,g\n", good_header),
            "column 'point': 'x1' is not a point index", "table: a point index that is not one");
    refused(arena_printf(&arena, "%s%s%s", good_header, ok_row, ok_row),
            "t.csv:3: error: point 0 appears twice (also on line 2)", "table: a point twice");
    refused(arena_printf(&arena, "point,%s0,%s", good_header, ok_row),
            "t.csv:1: error: column 'point' appears twice", "table: a column twice");
    refused("a,b\n1,\"2\n", "t.csv:2: error: a quoted field that starts here never ends",
            "table: a CSV mistake, with its line");
    {
        /* the times of an ok point add up to 2 ms, its latency 1 ms:
         * a warning, not a failure */
        SweepTable t;
        const char *report;
        bool ok = table_of(
            arena_printf(&arena, "%sok,a,0,1,1,1e-3,1,1e-3,1e-3,0,0,0,1,1,1,1,1,,g\n", good_header),
            &t, &report);
        CHECK(ok && strstr(report, "t.csv:2: warning: the time_*_s columns of point 0 add up to "
                                   "0.002 s, not its latency_s 0.001 s"),
              "table: times that do not add up are a warning");
    }
}

/* ------------------------------------------------------------- frontier */

static void test_pareto(void) {
    /* By hand: 8 has the least x; 0 is below nothing before it; 1 beats
     * 0 on y; 2 has 1's x and a larger y, 3 has 1's y and a larger x:
     * both dominated by 1; 4 and 5 are the same point, neither dominates
     * the other: both on; 6 is dominated by 4; 7 is below everything
     * before it; 9 has 7's y and a larger x.  Frontier: 8 0 1 4 5 7. */
    const double x[] = {1, 2, 2, 3, 4, 4, 5, 6, 0.5, 7};
    const double y[] = {10, 8, 9, 8, 3, 3, 5, 1, 20, 1};
    const bool expected[] = {true, true, false, false, true, true, false, true, true, false};
    bool on[10];
    int count = pareto_frontier(&arena, x, y, 10, on);
    CHECK(count == 6, "pareto: 6 points on the frontier");
    for (int i = 0; i < 10; i++)
        CHECK(on[i] == expected[i], arena_printf(&arena, "pareto: point %d %s", i,
                                                 expected[i] ? "on the frontier" : "dominated"));
    CHECK(pareto_frontier(&arena, x, y, 0, on) == 0, "pareto: no points, no frontier");
    CHECK(pareto_frontier(&arena, x, y, 1, on) == 1 && on[0], "pareto: one point is its frontier");
    /* all on one line going down: every point on the frontier */
    const double dx[] = {4, 3, 2, 1}, dy[] = {1, 2, 3, 4};
    CHECK(pareto_frontier(&arena, dx, dy, 4, on) == 4, "pareto: a falling line is all frontier");
    /* all on one line going up: only the first */
    CHECK(pareto_frontier(&arena, dx, dx, 4, on) == 1 && on[3], "pareto: a rising line has one");
}

/* -------------------------------------------------------------- heatmap */

static void test_heatmap(void) {
    /* x.C has one value (skipped), x.M and x.N are the grid's axes, x.map
     * a text axis the cells take the best over.  Utilisation is the last
     * column before op; latency the first metric. */
    const char *header = "point,x.C,x.M,x.map,x.N,status,latency_s,energy_j,time_compute_s,"
                         "time_memory_s,time_network_s,time_bubble_s,time_other_s,"
                         "intensity_flop_per_b,achieved_flop_per_s,peak_flop_per_s,"
                         "peak_outer_b_per_s,utilisation\n";
    struct {
        int m, n;
        const char *map, *status;
        double latency, utilisation;
    } points[] = {
        {1, 10, "a", "ok", 4, 0.2},       {1, 10, "b", "ok", 3, 0.1},
        {2, 10, "a", "ok", 5, 0.7},       {2, 10, "b", "infeasible", 0, 0},
        {1, 30, "a", "ok", 6, 0.3},       {1, 30, "b", "ok", 7, 0.9},
        {2, 30, "a", "error", 0, 0},      {2, 30, "b", "time_limit", 0, 0},
        {1, 20, "a", "infeasible", 0, 0}, {2, 20, "b", "ok", 1, 0.5},
    };
    const char *text = header;
    for (int i = 0; i < 10; i++) {
        if (strcmp(points[i].status, "ok") == 0)
            text = arena_printf(&arena, "%s%d,8,%d,%s,%d,ok,%g,1,%g,0,0,0,0,1,1,1,1,%g\n", text, i,
                                points[i].m, points[i].map, points[i].n, points[i].latency,
                                points[i].latency, points[i].utilisation);
        else
            text = arena_printf(&arena, "%s%d,8,%d,%s,%d,%s,,,,,,,,,,,,\n", text, i, points[i].m,
                                points[i].map, points[i].n, points[i].status);
    }
    SweepTable t;
    const char *report;
    CHECK(table_of(text, &t, &report), "heatmap: the table reads");
    HeatmapGrid g;
    CHECK(heatmap_grid(&arena, &t, &g), "heatmap: two numeric axes of two values or more");
    CHECK(g.x_axis == 1 && g.y_axis == 3, "heatmap: x.C (one value) skipped, x.M then x.N");
    CHECK(g.nx == 2 && g.ny == 3, "heatmap: 2 values of M, 3 of N");
    CHECK(g.y_values[0] == 10 && g.y_values[1] == 20 && g.y_values[2] == 30,
          "heatmap: N's values ascending");
    /* by hand, [iy * 2 + ix]: (M 1, N 10): min(4, 3) = 3, max(0.2, 0.1) = 0.2;
     * (2, 10): 5 and 0.7 (b infeasible); (1, 20): none ok; (2, 20): 1, 0.5;
     * (1, 30): min(6, 7) = 6, max(0.3, 0.9) = 0.9; (2, 30): none ok */
    CHECK_EXACT(g.min_latency_s[0], 3, "heatmap: least latency of (1, 10) over map");
    CHECK_EXACT(g.max_utilisation[0], 0.2, "heatmap: greatest utilisation of (1, 10)");
    CHECK_EXACT(g.min_latency_s[1], 5, "heatmap: (2, 10) from its one ok point");
    CHECK(isnan(g.min_latency_s[2]) && isnan(g.max_utilisation[2]),
          "heatmap: (1, 20) has no ok point");
    CHECK_EXACT(g.min_latency_s[3], 1, "heatmap: (2, 20)");
    CHECK_EXACT(g.min_latency_s[4], 6, "heatmap: least latency of (1, 30)");
    CHECK_EXACT(g.max_utilisation[4], 0.9,
                "heatmap: greatest utilisation of (1, 30), another point");
    CHECK(isnan(g.min_latency_s[5]), "heatmap: (2, 30) has no ok point");
    CHECK(g.empty_cells == 2, "heatmap: two empty cells");

    /* x.A and x.B zipped (pairs 1-10, 2-20, 3-30), x.K across them: the
     * heat map takes A and K, the first pair that varies independently, not
     * the zip's diagonal */
    const char *zipped = "point,x.A,x.B,x.K,status,latency_s,energy_j,time_compute_s,time_memory_s,"
             "time_network_s,time_bubble_s,time_other_s,intensity_flop_per_b,"
             "achieved_flop_per_s,peak_flop_per_s,peak_outer_b_per_s,utilisation\n";
    for (int i = 0; i < 6; i++)
        zipped = arena_printf(&arena, "%s%d,%d,%d,%d,ok,1,1,1,0,0,0,0,1,1,1,1,0.5\n", zipped, i,
                              i / 2 + 1, 10 * (i / 2 + 1), i % 2 ? 64 : 32);
    CHECK(table_of(zipped, &t, &report) && heatmap_grid(&arena, &t, &g) && g.x_axis == 0 &&
              g.y_axis == 2 && g.nx == 3 && g.ny == 2 && g.empty_cells == 0,
          "heatmap: zipped A and B skipped as a pair; A across K, every cell met");

    /* one numeric axis of two values or more: no heatmap */
    const char *one =
        arena_printf(&arena, "%s%s", good_header, row("ok", "a100", 0, 256, 2e12, 1e-3, 1, ""));
    one = arena_printf(&arena, "%s%s", one, row("ok", "h100", 1, 512, 2e12, 1e-3, 1, ""));
    CHECK(table_of(one, &t, &report) && !heatmap_grid(&arena, &t, &g),
          "heatmap: none over one numeric axis");
}

/* --------------------------------------------------------- sweep_plots */

static char folder[] = "/tmp/cmtc-plots-test-XXXXXX";

static const char *in_folder(const char *name) {
    return arena_printf(&arena, "%s/%s", folder, name);
}

static void write_file(const char *path, const char *text, mode_t mode) {
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    chmod(path, mode);
}

static const char *read_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return "(missing)";
    char *buf = arena_alloc(&arena, 256);
    size_t n = fread(buf, 1, 255, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Names in `dir` holding `part`. */
static int names_with(const char *dir, const char *part) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, part) != NULL;
    if (d) closedir(d);
    return n;
}

/* Runs sweep_plots with PATH set to `path`; its report in *report. */
static bool plots_with_path(const char *csv, const char *dir, const char *path,
                            const char **report) {
    const char *saved = getenv("PATH");
    char *kept = saved ? arena_strdup(&arena, saved) : NULL;
    setenv("PATH", path, 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *err = open_memstream(&buf, &len);
    bool ok = sweep_plots(csv, dir, err);
    fclose(err);
    *report = arena_strdup(&arena, buf ? buf : "");
    free(buf);
    if (kept)
        setenv("PATH", kept, 1);
    else
        unsetenv("PATH");
    return ok;
}

static void test_sweep_plots_failures(void) {
    if (!mkdtemp(folder)) {
        CHECK(false, "sweep_plots: a scratch folder");
        return;
    }
    const char *csv = in_folder("sweep.csv");
    write_file(csv,
               arena_printf(&arena, "%s%s%s", good_header,
                            row("ok", "a100", 0, 256, 2e12, 2e-3, 0.5, ""),
                            row("ok", "h100", 1, 512, 2e12, 1e-3, 0.7, "")),
               0644);
    const char *bin = in_folder("bin");
    mkdir(bin, 0755);
    const char *report;

    /* gnuplot missing: the package and the command that installs it */
    CHECK(!plots_with_path(csv, in_folder("plots"), bin, &report) && strstr(report, "gnuplot") &&
              strstr(report, "apt-get install -y --no-install-recommends gnuplot-nox"),
          "sweep_plots: gnuplot missing, the install command given");
    struct stat st;
    CHECK(stat(in_folder("plots"), &st) != 0, "sweep_plots: nothing made without gnuplot");

    /* a bad CSV: its line, and no folder made */
    const char *bad = in_folder("bad.csv");
    write_file(bad, "point,status\n", 0644);
    CHECK(!plots_with_path(bad, in_folder("plots"), bin, &report) &&
              strstr(report, "bad.csv:1: error: no columns"),
          "sweep_plots: a bad CSV, with file and line");

    /* the output folder would be under a file */
    write_file(arena_printf(&arena, "%s/gnuplot", bin), "#!/bin/sh\nexit 0\n", 0755);
    CHECK(!plots_with_path(csv, in_folder("sweep.csv/plots"), bin, &report) &&
              strstr(report, "sweep.csv/plots: error: ") && strstr(report, "is not a folder"),
          "sweep_plots: an output folder under a file is refused, named");

    /* a gnuplot that draws the first two plots, then fails: the old plot
     * stays as it was, no new file and no temporary folder is left */
    const char *plots = in_folder("plots");
    mkdir(plots, 0755);
    write_file(in_folder("plots/pareto.svg"), "old plot\n", 0644);
    write_file(arena_printf(&arena, "%s/gnuplot", bin),
               "#!/bin/sh\n"
               "case $1 in\n"
               "  breakdown.gp) echo 'line 3: undefined variable' >&2; exit 1 ;;\n"
               "  *) echo '<svg/>' > \"${1%.gp}.svg\" ;;\n"
               "esac\n",
               0755);
    CHECK(!plots_with_path(csv, plots, bin, &report) &&
              strstr(report, "breakdown.gp: gnuplot: line 3: undefined variable") &&
              strstr(report, "breakdown.gp: error: gnuplot failed (exit status 1)"),
          "sweep_plots: gnuplot's failure and its message are reported");
    CHECK_STR(read_file(in_folder("plots/pareto.svg")), "old plot\n",
              "sweep_plots: a failure leaves the old plots as they were");
    CHECK(names_with(plots, ".cmtc-") == 0, "sweep_plots: no temporary folder is left");
    CHECK(names_with(plots, ".dat") == 0 && names_with(plots, ".gp") == 0,
          "sweep_plots: no data file or script of a failed run is left");

    /* the same gnuplot drawing every plot: all of them moved into place */
    write_file(arena_printf(&arena, "%s/gnuplot", bin),
               "#!/bin/sh\necho '<svg/>' > \"${1%.gp}.svg\"\n", 0755);
    CHECK(plots_with_path(csv, plots, bin, &report), "sweep_plots: every plot drawn");
    CHECK_STR(read_file(in_folder("plots/pareto.svg")), "<svg/>\n",
              "sweep_plots: the new plot replaces the old");
    CHECK(names_with(plots, ".svg") == 3 && names_with(plots, ".gp") == 3 &&
              names_with(plots, ".dat") == 3,
          "sweep_plots: pareto, roofline, breakdown (one numeric axis: no heatmap)");
    CHECK(strstr(report, "note: no heatmap"), "sweep_plots: the heatmap's absence is a note");
    CHECK(names_with(plots, ".cmtc-") == 0, "sweep_plots: the temporary folder is removed");

    /* an output folder that is not writable (as root, every folder is) */
    if (geteuid() != 0) {
        const char *locked = in_folder("locked");
        mkdir(locked, 0555);
        CHECK(!plots_with_path(csv, locked, bin, &report) &&
                  strstr(report, "locked: error: cannot write in this folder"),
              "sweep_plots: an unwritable folder, named");
        chmod(locked, 0755);
    }
    const char *rm = arena_printf(&arena, "rm -rf '%s'", folder);
    if (system(rm) != 0) printf("note: could not remove %s\n", folder);
}

int main(void) {
    test_csv_quoting();
    test_csv_mistakes();
    test_table();
    test_table_mistakes();
    test_pareto();
    test_heatmap();
    test_sweep_plots_failures();
    arena_free_all(&arena);
    return unit_finish();
}
