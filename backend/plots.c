/* plots.c — the plots of a sweep (plots.h): for each, a data file and a
 * gnuplot script written into a temporary folder inside the output
 * folder, gnuplot run there on each script to draw the SVG, and every
 * file moved into place once all are drawn.  Also `cmtc plot`.
 *
 * Why gnuplot (docs/plots.md): a Debian package (gnuplot-nox) without a
 * display or a Python stack, driven by plain-text scripts a user can
 * restyle and run again, and with SVG and PNG terminals.  It runs as a
 * child process (fork and exec, no shell), in the temporary folder, on
 * scripts that name their files relative to it, so the scripts kept
 * beside the SVGs work as they are. */
#include "backend/commands.h"
#include "backend/options.h"
#include "backend/plots.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GNUPLOT_PACKAGE "gnuplot-nox"
#define GNUPLOT_INSTALL "apt-get install -y --no-install-recommends " GNUPLOT_PACKAGE

/* Roofs drawn at most; past that, the highest and the lowest. */
enum { MAX_ROOFS = 8 };
/* Point labels longer than this are replaced by the point's index. */
enum { MAX_AXIS_LABEL = 18 };
/* Tick labels shown along an axis at most (the others left blank). */
enum { MAX_TICK_LABELS = 40 };
/* More bars than this are drawn touching, without borders. */
enum { THIN_BARS = 80 };
/* The Pareto plot names its frontier's points up to this many. */
enum { MAX_FRONTIER_LABELS = 8 };
/* A heatmap writes its values in its cells up to this many a side. */
enum { MAX_LABELLED_CELLS = 14 };

/* Colours that stay apart for most readers (Tableau 10). */
static const char *const series_colours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                             "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
static const char *const time_part_names[SWEEP_TIME_PARTS] = {"compute", "memory", "network",
                                                              "bubble", "other"};
static const char *const time_part_colours[SWEEP_TIME_PARTS] = {"#4e79a7", "#f28e2b", "#59a14f",
                                                                "#bab0ac", "#b07aa1"};

/* ------------------------------------------------------------ formatting */

/* The SI prefix that puts `largest` (> 0) in [1, 1000): its symbol and
 * the factor a value is multiplied by. */
static const char *si_prefix(double largest, double *factor) {
    static const char *const symbols[] = {"f", "p", "n", "µ", "m", "",
                                          "k", "M", "G", "T", "P", "E"};
    int k = 5;
    if (largest > 0 && isfinite(largest)) {
        k = 5 + (int)floor(log10(largest) / 3 + 1e-9);
        if (k < 0) k = 0;
        if (k > 11) k = 11;
    }
    *factor = pow(10, -3.0 * (k - 5));
    return symbols[k];
}

/* A value for a tick, a label or a legend: an integer below 10 000 as it
 * is (so that an axis of 524288 and 2097152 reads 524k and 2.1M, not one
 * number in full and one with a prefix); a plain number from 0.001 to a million in three digits;
 * anything else (and any value with a unit) in three digits with an SI prefix, then the unit ("64",
 * "0.5", "3.35T", "3.35 TB/s", "312 TFLOP/s"). */
static const char *format_value(Arena *a, double v, const char *unit) {
    const char *space = *unit ? " " : "";
    if (v == floor(v) && fabs(v) < 1e4) return arena_printf(a, "%.0f%s%s", v, space, unit);
    if (!*unit && fabs(v) >= 1e-3 && fabs(v) < 1e6) return arena_printf(a, "%.3g", v);
    double factor;
    const char *prefix = si_prefix(fabs(v), &factor);
    return arena_printf(a, "%.3g%s%s%s", v * factor, space, prefix, unit);
}

/* `text` as a gnuplot string literal: single quotes, in which only a
 * quote is special (doubled); a line break ends the literal and goes in
 * as "\n" (`'a'."\n".'b'). */
static const char *gp_string(Arena *a, const char *text) {
    size_t n = strlen(text);
    char *out = arena_alloc(a, n * 8 + 3);
    size_t k = 0;
    out[k++] = '\'';
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        if (c == '\'') {
            out[k++] = '\'';
            out[k++] = '\'';
        } else if (c == '\n') {
            memcpy(out + k, "'.\"\\n\".'", 8);
            k += 8;
        } else if (c == '\r' || c == '\t') {
            out[k++] = ' ';
        } else {
            out[k++] = c;
        }
    }
    out[k++] = '\'';
    out[k] = '\0';
    return out;
}

/* `text` as one field of a gnuplot data file: in double quotes, which
 * data files cannot escape, so a double quote becomes a single one and a
 * control character a space. */
static const char *dat_string(Arena *a, const char *text) {
    size_t n = strlen(text);
    char *out = arena_alloc(a, n + 3);
    out[0] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        out[i + 1] = c == '"' ? '\'' : c < ' ' ? ' ' : (char)c;
    }
    out[n + 1] = '"';
    out[n + 2] = '\0';
    return out;
}

/* `text` on one line, for a comment: control characters become spaces. */
static const char *one_line(Arena *a, const char *text) {
    char *out = arena_strdup(a, text);
    for (char *c = out; *c; c++)
        if ((unsigned char)*c < ' ') *c = ' ';
    return out;
}

/* ------------------------------------------------------------- context */

typedef struct Plots {
    Arena *arena;
    const SweepTable *table;
    FILE *err;
    const char *out_dir;
    const char *stage_dir; /* the temporary folder inside out_dir */
    const char *gnuplot;   /* its path */
    const char *csv_name;  /* the CSV's file name, for the scripts' comments */
    const char *note;      /* how many points are ok, which are not */
    /* the ok points, in point order */
    const SweepPoint **ok;
    int ok_count;
    /* a short label per ok point: its values on the axes that vary, or
     * its index; axes_label names those axes ("mapping tile HBM (B/s)") or
     * is "" */
    const char **label;
    const char *axes_label;
    /* the files made in the stage folder, moved into out_dir at the end */
    const char **made;
    int made_count, made_cap;
    /* scripts to run, in order */
    const char *scripts[8];
    int script_count;
    /* plots not made this time, whose old files are removed from out_dir */
    const char *skipped[5];
    int skipped_count;
} Plots;

static void remember_made(Plots *P, const char *name) {
    if (P->made_count == P->made_cap) {
        int cap = P->made_cap ? P->made_cap * 2 : 16;
        P->made = arena_realloc(P->arena, P->made, sizeof(char *) * (size_t)P->made_cap,
                                sizeof(char *) * (size_t)cap);
        P->made_cap = cap;
    }
    P->made[P->made_count++] = name;
}

static const char *stage_path(Plots *P, const char *name) {
    return arena_printf(P->arena, "%s/%s", P->stage_dir, name);
}

/* Opens NAME in the stage folder for writing; NULL after saying why. */
static FILE *stage_open(Plots *P, const char *name) {
    FILE *f = fopen(stage_path(P, name), "w");
    if (!f)
        fprintf(P->err, "%s/%s: error: cannot write it: %s\n", P->out_dir, name, strerror(errno));
    return f;
}

/* Closes a file stage_open opened, every write checked; false after
 * saying why. */
static bool stage_close(Plots *P, FILE *f, const char *name) {
    errno = 0;
    bool ok = fflush(f) == 0 && !ferror(f);
    int error = errno ? errno : EIO;
    if (fclose(f) != 0 && ok) {
        ok = false;
        error = errno;
    }
    if (!ok) {
        fprintf(P->err, "%s/%s: error: cannot write it: %s\n", P->out_dir, name, strerror(error));
        return false;
    }
    remember_made(P, name);
    return true;
}

/* The note every plot carries: how many points it shows, and why the
 * others are left out. */
static const char *status_note(Arena *a, const SweepTable *t) {
    int ok = t->status_count[SWEEP_OK];
    if (ok == t->point_count)
        return ok == 1 ? "1 point, ok" : arena_printf(a, "all %d points ok", ok);
    char *text = arena_printf(a, "%d of %d points ok; not plotted:", ok, t->point_count);
    const char *sep = " ";
    for (int s = SWEEP_OK + 1; s < SWEEP_STATUS_COUNT; s++) {
        if (!t->status_count[s]) continue;
        text = arena_printf(a, "%s%s%d %s", text, sep, t->status_count[s], sweep_status_names[s]);
        sep = ", ";
    }
    return text;
}

/* The op every point maps, when it is one: for the subtitles. */
static const char *common_op(const Plots *P) {
    const char *op = P->ok_count ? P->ok[0]->op : "";
    for (int i = 1; i < P->ok_count; i++)
        if (strcmp(P->ok[i]->op, op) != 0) return "";
    return op;
}

/* An axis's name and unit: "HBM (B/s)", "tile". */
static const char *axis_title(Plots *P, const SweepAxis *axis) {
    return *axis->unit ? arena_printf(P->arena, "%s (%s)", axis->name, axis->unit) : axis->name;
}

/* Whether the points have two values or more on axis k. */
static bool axis_varies(const SweepTable *t, int k) {
    for (int i = 1; i < t->point_count; i++)
        if (strcmp(t->points[i].axis_text[k], t->points[0].axis_text[k]) != 0) return true;
    return false;
}

/* Labels each ok point by its values on the axes whose values differ
 * (in the order of the columns) when every such label is short, by its
 * index otherwise. */
static void label_points(Plots *P) {
    const SweepTable *t = P->table;
    bool *varies = ARENA_ARRAY(P->arena, bool, t->axis_count > 0 ? t->axis_count : 1);
    int varying = 0;
    for (int k = 0; k < t->axis_count; k++) {
        varies[k] = axis_varies(t, k);
        varying += varies[k];
    }
    P->label = ARENA_ARRAY(P->arena, const char *, P->ok_count > 0 ? P->ok_count : 1);
    bool short_enough = varying > 0;
    for (int i = 0; i < P->ok_count; i++) {
        const SweepPoint *p = P->ok[i];
        const char *label = "";
        for (int k = 0; k < t->axis_count; k++) {
            if (!varies[k]) continue;
            const char *value =
                t->axes[k].numeric ? format_value(P->arena, p->axis_value[k], "") : p->axis_text[k];
            label = arena_printf(P->arena, "%s%s%s", label, *label ? " " : "", value);
        }
        P->label[i] = label;
        if (strlen(label) > MAX_AXIS_LABEL) short_enough = false;
    }
    P->axes_label = "";
    if (short_enough) {
        for (int k = 0; k < t->axis_count; k++)
            if (varies[k])
                P->axes_label = arena_printf(P->arena, "%s%s%s", P->axes_label,
                                             *P->axes_label ? " " : "", axis_title(P, &t->axes[k]));
    } else {
        for (int i = 0; i < P->ok_count; i++)
            P->label[i] = arena_printf(P->arena, "#%lld", (long long)P->ok[i]->index);
    }
}

/* The first lines of every script: what it draws, how to run it again,
 * the terminal (svg, or png when the variable format says so). */
static void script_begin(Plots *P, FILE *gp, const char *base, const char *about, int width,
                         int height) {
    fprintf(gp,
            "# %s.gp: %s.\n"
            "# Written by cmtc plot from %s; the data is in %s.dat.  Restyle it and run\n"
            "# it in this folder: `gnuplot %s.gp` draws %s.svg, and\n"
            "# `gnuplot -e \"format='png'\" %s.gp` draws %s.png.\n"
            "if (!exists(\"format\")) format = 'svg'\n"
            "if (format eq 'png') {\n"
            "    set terminal pngcairo size %d,%d font 'Sans,10' noenhanced\n"
            "} else {\n"
            "    set terminal svg size %d,%d dynamic font 'sans-serif,13' noenhanced "
            "background '#ffffff'\n"
            "}\n"
            "set output '%s.' . format\n"
            "set encoding utf8\n"
            "set border lw 1 lc rgb '#555555'\n"
            "set grid lt 1 lw 1 lc rgb '#e0e0e0'\n"
            "set key box lc rgb '#cccccc' Left reverse samplen 2 spacing 1.2\n"
            "set tics nomirror out scale 0.6\n",
            base, about, P->csv_name, base, base, base, base, base, width, height, width, height,
            base);
}

/* The title and under it the op, when every point maps the same one,
 * and the note on the points (and `more`, when not ""). */
static void script_title(Plots *P, FILE *gp, const char *title, const char *more) {
    const char *op = common_op(P);
    const char *text = arena_printf(P->arena, "%s%s%s\n%s%s%s", title, *op ? "\n" : "", op, P->note,
                                    *more ? "; " : "", more);
    fprintf(gp, "set title %s\n", gp_string(P->arena, text));
}

/* Logarithmic when the values span more than a factor of 100. */
static bool wants_log(double lo, double hi) {
    return lo > 0 && hi / lo > 100;
}

/* An axis whose values are all one (a sweep of one point) gets a range
 * around it, which gnuplot would otherwise widen with a warning. */
static void flat_range(FILE *gp, const char *axis, double lo, double hi) {
    if (lo != hi) return;
    if (lo == 0)
        fprintf(gp, "set %srange [0:1]\n", axis);
    else
        fprintf(gp, "set %srange [%.10g:%.10g]\n", axis, lo * 0.5, lo * 1.5);
}

/* --------------------------------------------------------------- pareto */

typedef struct Ordered {
    double key;
    int i;
} Ordered;

static int compare_ordered(const void *pa, const void *pb) {
    const Ordered *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->i - b->i;
}

static bool write_pareto(Plots *P) {
    Arena *a = P->arena;
    int n = P->ok_count;
    double *latency = ARENA_ARRAY(a, double, n), *energy = ARENA_ARRAY(a, double, n);
    bool *on = ARENA_ARRAY(a, bool, n);
    double lat_lo = INFINITY, lat_hi = 0, en_lo = INFINITY, en_hi = 0;
    for (int i = 0; i < n; i++) {
        latency[i] = P->ok[i]->metric[SWEEP_LATENCY];
        energy[i] = P->ok[i]->metric[SWEEP_ENERGY];
        lat_lo = fmin(lat_lo, latency[i]);
        lat_hi = fmax(lat_hi, latency[i]);
        en_lo = fmin(en_lo, energy[i]);
        en_hi = fmax(en_hi, energy[i]);
    }
    int frontier = pareto_frontier(a, latency, energy, n, on);
    Ordered *order = ARENA_ARRAY(a, Ordered, frontier);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (on[i]) order[k++] = (Ordered){latency[i], i};
    qsort(order, (size_t)frontier, sizeof *order, compare_ordered);

    FILE *dat = stage_open(P, "pareto.dat");
    if (!dat) return false;
    fprintf(dat,
            "# pareto.dat: the ok points of %s (index 0), then the %d of the Pareto\n"
            "# frontier in order of latency (index 1).\n"
            "# point latency_s energy_j label\n",
            P->csv_name, frontier);
    for (int i = 0; i < n; i++)
        fprintf(dat, "%lld %.10g %.10g %s\n", (long long)P->ok[i]->index, latency[i], energy[i],
                dat_string(a, P->label[i]));
    fprintf(dat, "\n\n# the Pareto frontier\n");
    for (k = 0; k < frontier; k++) {
        int i = order[k].i;
        fprintf(dat, "%lld %.10g %.10g %s\n", (long long)P->ok[i]->index, latency[i], energy[i],
                dat_string(a, P->label[i]));
    }
    if (!stage_close(P, dat, "pareto.dat")) return false;

    double lat_factor, en_factor;
    const char *lat_prefix = si_prefix(lat_hi, &lat_factor);
    const char *en_prefix = si_prefix(en_hi, &en_factor);
    FILE *gp = stage_open(P, "pareto.gp");
    if (!gp) return false;
    script_begin(P, gp, "pareto",
                 "latency against energy of the ok points, the Pareto frontier "
                 "joined",
                 1000, 700);
    script_title(P, gp, "Latency and energy of each point", "");
    fprintf(gp, "set xlabel 'latency (%ss)'\nset ylabel 'energy (%sJ)'\n", lat_prefix, en_prefix);
    /* room around the points on a linear axis (a logarithmic one is
     * widened to whole decades anyway) */
    bool log_x = wants_log(lat_lo, lat_hi), log_y = wants_log(en_lo, en_hi);
    if (log_x) fprintf(gp, "set logscale x\n");
    if (log_y) fprintf(gp, "set logscale y\n");
    const char *x_room = log_x ? "0" : "graph 0.05", *y_room = log_y ? "0" : "graph 0.05";
    fprintf(gp, "set offsets %s, %s, %s, %s\n", x_room, x_room, y_room, y_room);
    flat_range(gp, "x", lat_lo * lat_factor, lat_hi * lat_factor);
    flat_range(gp, "y", en_lo * en_factor, en_hi * en_factor);
    fprintf(gp, "set key below height 1 nobox\n"); /* never over a point */
    /* the frontier's points named, when they are few enough to read */
    bool labelled = frontier <= MAX_FRONTIER_LABELS;
    const char *frontier_title =
        arena_printf(a, "Pareto frontier (%d point%s%s%s)", frontier, frontier == 1 ? "" : "s",
                     labelled ? ", labelled " : "",
                     !labelled        ? ""
                     : *P->axes_label ? P->axes_label
                                      : "by index");
    const char *using = arena_printf(a, "using ($2*%.10g):($3*%.10g)", lat_factor, en_factor);
    fprintf(gp,
            "plot 'pareto.dat' index 0 %s with points pt 7 ps 0.9 lc rgb '#9aa5b1' \\\n"
            "       title 'ok point (%d)', \\\n"
            "     'pareto.dat' index 1 %s with linespoints lw 2 pt 7 ps 1.3 lc rgb '#e15759' "
            "\\\n"
            "       title %s",
            using, n, using, gp_string(a, frontier_title));
    if (labelled)
        fprintf(gp,
                ", \\\n     'pareto.dat' index 1 %s:4 with labels left offset char 1.2,0.9 "
                "tc rgb '#333333' notitle",
                using);
    fprintf(gp, "\n");
    if (!stage_close(P, gp, "pareto.gp")) return false;
    P->scripts[P->script_count++] = "pareto";
    return true;
}

/* ------------------------------------------------------------- roofline */

typedef struct Roof {
    double peak_flop, peak_bytes;
} Roof;

static int compare_roofs(const void *pa, const void *pb) {
    const Roof *a = pa, *b = pb;
    if (a->peak_flop != b->peak_flop) return a->peak_flop < b->peak_flop ? -1 : 1;
    return a->peak_bytes < b->peak_bytes ? -1 : a->peak_bytes > b->peak_bytes;
}

static int roof_of(const Roof *roofs, int count, const SweepPoint *p) {
    for (int r = 0; r < count; r++)
        if (roofs[r].peak_flop == p->metric[SWEEP_PEAK_FLOP] &&
            roofs[r].peak_bytes == p->metric[SWEEP_PEAK_OUTER])
            return r;
    return -1;
}

/* A point a log-log roofline can show. */
static bool on_roofline(const SweepPoint *p) {
    double x = p->metric[SWEEP_INTENSITY], y = p->metric[SWEEP_ACHIEVED];
    return x > 0 && isfinite(x) && y > 0;
}

static bool write_roofline(Plots *P) {
    Arena *a = P->arena;
    /* the distinct roofs, lowest first */
    Roof *all = ARENA_ARRAY(a, Roof, P->ok_count);
    int distinct = 0, shown_points = 0, roofless = 0;
    for (int i = 0; i < P->ok_count; i++) {
        const SweepPoint *p = P->ok[i];
        shown_points += on_roofline(p);
        Roof r = {p->metric[SWEEP_PEAK_FLOP], p->metric[SWEEP_PEAK_OUTER]};
        if (r.peak_flop > 0 && r.peak_bytes > 0) {
            if (roof_of(all, distinct, p) < 0) all[distinct++] = r;
        } else {
            roofless += on_roofline(p); /* a peak of 0: no roof to draw */
        }
    }
    if (shown_points == 0) {
        fprintf(P->err,
                "%s: note: no roofline: no ok point has an operational intensity and an "
                "achieved rate above 0 (and finite)\n",
                P->table->path);
        P->skipped[P->skipped_count++] = "roofline";
        return true;
    }
    qsort(all, (size_t)distinct, sizeof *all, compare_roofs);
    Roof drawn[MAX_ROOFS];
    int drawn_count = 0;
    if (distinct <= MAX_ROOFS) {
        for (int r = 0; r < distinct; r++) drawn[drawn_count++] = all[r];
    } else {
        drawn[drawn_count++] = all[0];
        drawn[drawn_count++] = all[distinct - 1];
    }
    /* points grouped by roof when every point's roof is drawn; in one
     * group when not */
    bool grouped = distinct <= MAX_ROOFS && distinct > 0 && roofless == 0;
    int groups = grouped ? drawn_count : 1;
    double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = 0;
    for (int i = 0; i < P->ok_count; i++) {
        const SweepPoint *p = P->ok[i];
        if (!on_roofline(p)) continue;
        x_lo = fmin(x_lo, p->metric[SWEEP_INTENSITY]);
        x_hi = fmax(x_hi, p->metric[SWEEP_INTENSITY]);
        y_lo = fmin(y_lo, p->metric[SWEEP_ACHIEVED]);
        y_hi = fmax(y_hi, p->metric[SWEEP_ACHIEVED]);
    }
    for (int r = 0; r < drawn_count; r++) {
        double ridge = drawn[r].peak_flop / drawn[r].peak_bytes;
        x_lo = fmin(x_lo, ridge);
        x_hi = fmax(x_hi, ridge);
        y_hi = fmax(y_hi, drawn[r].peak_flop);
    }
    /* whole decades around everything, a little room at each end */
    x_lo = pow(10, floor(log10(x_lo / 1.5)));
    x_hi = pow(10, ceil(log10(x_hi * 1.5)));
    y_lo = pow(10, floor(log10(y_lo / 1.5)));
    y_hi = pow(10, ceil(log10(y_hi * 1.5)));

    FILE *dat = stage_open(P, "roofline.dat");
    if (!dat) return false;
    fprintf(dat, "# roofline.dat: the ok points of %s %s (index 0 to %d)", P->csv_name,
            grouped ? "by roof" : "in one block", groups - 1);
    if (drawn_count)
        fprintf(dat,
                ", then each roof's\n# line min(peak_flop_per_s, intensity * "
                "peak_outer_b_per_s) (index %d to %d)",
                groups, groups + drawn_count - 1);
    fprintf(dat, ".\n");
    for (int g = 0; g < groups; g++) {
        if (grouped)
            fprintf(dat, "# points of the roof %.10g FLOP/s, %.10g B/s\n", drawn[g].peak_flop,
                    drawn[g].peak_bytes);
        fprintf(dat, "# point intensity_flop_per_b achieved_flop_per_s label\n");
        int written = 0;
        for (int i = 0; i < P->ok_count; i++) {
            const SweepPoint *p = P->ok[i];
            if (!on_roofline(p) || (grouped && roof_of(&drawn[g], 1, p) != 0)) continue;
            fprintf(dat, "%lld %.10g %.10g %s\n", (long long)p->index, p->metric[SWEEP_INTENSITY],
                    p->metric[SWEEP_ACHIEVED], dat_string(a, P->label[i]));
            written++;
        }
        /* a roof whose every point is off the chart keeps its block */
        if (!written) fprintf(dat, "# (none)\n");
        fprintf(dat, "\n\n");
    }
    for (int r = 0; r < drawn_count; r++) {
        double ridge = drawn[r].peak_flop / drawn[r].peak_bytes;
        fprintf(dat, "# roof %.10g FLOP/s, %.10g B/s: intensity_flop_per_b flop_per_s\n",
                drawn[r].peak_flop, drawn[r].peak_bytes);
        double x0 = fmin(x_lo, ridge), x1 = fmax(x_hi, ridge);
        fprintf(dat, "%.10g %.10g\n%.10g %.10g\n%.10g %.10g\n", x0,
                fmin(drawn[r].peak_flop, x0 * drawn[r].peak_bytes), ridge, drawn[r].peak_flop, x1,
                drawn[r].peak_flop);
        if (r + 1 < drawn_count) fprintf(dat, "\n\n");
    }
    if (!stage_close(P, dat, "roofline.dat")) return false;

    double factor;
    const char *prefix = si_prefix(y_hi / 10, &factor);
    FILE *gp = stage_open(P, "roofline.gp");
    if (!gp) return false;
    script_begin(P, gp, "roofline",
                 "achieved FLOP/s against operational intensity, under the "
                 "roof of each machine",
                 1000, 700);
    const char *more = "";
    if (distinct > MAX_ROOFS)
        more = arena_printf(a, "%d distinct roofs: the highest and lowest drawn", distinct);
    if (shown_points < P->ok_count)
        more = arena_printf(a, "%s%s%d ok point%s left out (intensity or rate 0 or infinite)", more,
                            *more ? "; " : "", P->ok_count - shown_points,
                            P->ok_count - shown_points == 1 ? "" : "s");
    script_title(P, gp, "Roofline", more);
    fprintf(gp,
            "set logscale xy\n"
            "set xlabel 'operational intensity (FLOP/B at the outermost memory)'\n"
            "set ylabel 'achieved (%sFLOP/s)'\n"
            "set xrange [%.10g:%.10g]\nset yrange [%.10g:%.10g]\n"
            "set format x '%%g'\nset format y '%%g'\n"
            "set key below height 1 nobox samplen 4\n",
            prefix, x_lo, x_hi, y_lo * factor, y_hi * factor);
    /* each roof a line of its own dash, so that roofs sharing a slope or a
     * peak still show; its points in its colour, and one key entry for
     * both (a line through a point: the entries are drawn from NaN) */
    fprintf(gp, "plot ");
    const char *sep = "";
    for (int r = 0; r < drawn_count; r++) {
        const char *title = arena_printf(a, "%s, %s", format_value(a, drawn[r].peak_flop, "FLOP/s"),
                                         format_value(a, drawn[r].peak_bytes, "B/s"));
        if (distinct > MAX_ROOFS)
            title = arena_printf(a, "%s roof: %s", r ? "highest" : "lowest", title);
        else
            title = arena_printf(a, "roof %s", title);
        /* two roofs of many: blue and red, the points grey */
        const char *colour = series_colours[grouped ? r : 2 * r];
        fprintf(gp,
                "%s'roofline.dat' index %d using 1:($2*%.10g) with lines lw 2 dt %d lc rgb '%s' "
                "notitle, \\\n     NaN with %s lw 2 dt %d lc rgb '%s' title %s",
                sep, groups + r, factor, r % 4 + 1, colour, grouped ? "linespoints pt 7" : "lines",
                r % 4 + 1, colour, gp_string(a, title));
        sep = ", \\\n     ";
    }
    for (int g = 0; g < groups; g++) {
        fprintf(gp,
                "%s'roofline.dat' index %d using 2:($3*%.10g) with points pt 7 ps %s "
                "lc rgb '%s' %s",
                sep, g, factor, grouped ? "1" : "0.8", grouped ? series_colours[g] : "#7f8c99",
                grouped ? "notitle" : "title 'ok point'");
        sep = ", \\\n     ";
    }
    fprintf(gp, "\n");
    if (!stage_close(P, gp, "roofline.gp")) return false;
    P->scripts[P->script_count++] = "roofline";
    return true;
}

/* ------------------------------------------------------------ breakdown */

static bool write_breakdown(Plots *P) {
    Arena *a = P->arena;
    bool used[SWEEP_TIME_PARTS] = {false};
    double tallest = 0;
    for (int i = 0; i < P->ok_count; i++) {
        double sum = 0;
        for (int k = 0; k < SWEEP_TIME_PARTS; k++) {
            double t = P->ok[i]->metric[SWEEP_TIME_FIRST + k];
            used[k] = used[k] || t > 0;
            sum += t;
        }
        tallest = fmax(tallest, sum);
    }
    FILE *dat = stage_open(P, "breakdown.dat");
    if (!dat) return false;
    fprintf(dat,
            "# breakdown.dat: the time of each ok point of %s by kind, in point order.\n"
            "# point label time_compute_s time_memory_s time_network_s time_bubble_s "
            "time_other_s latency_s\n",
            P->csv_name);
    for (int i = 0; i < P->ok_count; i++) {
        const SweepPoint *p = P->ok[i];
        fprintf(dat, "%lld %s", (long long)p->index, dat_string(a, P->label[i]));
        for (int k = 0; k < SWEEP_TIME_PARTS; k++)
            fprintf(dat, " %.10g", p->metric[SWEEP_TIME_FIRST + k]);
        fprintf(dat, " %.10g\n", p->metric[SWEEP_LATENCY]);
    }
    if (!stage_close(P, dat, "breakdown.dat")) return false;

    double factor;
    const char *prefix = si_prefix(tallest, &factor);
    /* wide enough for every bar to keep a few pixels */
    int width = P->ok_count * 18 + 260;
    width = width < 1000 ? 1000 : width > 2400 ? 2400 : width;
    FILE *gp = stage_open(P, "breakdown.gp");
    if (!gp) return false;
    script_begin(P, gp, "breakdown", "the time of each ok point, stacked by what it is spent on",
                 width, 700);
    bool thin = P->ok_count > THIN_BARS;
    script_title(P, gp, "Where the time goes", "");
    fprintf(gp,
            "set style data histograms\n"
            "set style histogram rowstacked\n"
            "set style fill solid 1 %s\n"
            "set boxwidth %s relative\n"
            "set grid noxtics ytics\n"
            "set xtics rotate by 90 right scale 0\n"
            "set ylabel 'time (%ss)'\n"
            "set xlabel %s\n"
            "set yrange [0:*]\n"
            "set key outside right top vertical width 1\n",
            /* bars a few pixels wide are drawn without gaps or borders */
            thin ? "noborder" : "border lc rgb '#ffffff'", thin ? "1" : "0.75", prefix,
            gp_string(a, *P->axes_label ? arena_printf(a, "point: %s", P->axes_label) : "point"));
    /* one tick label in `every` when there are too many to read */
    int every = (P->ok_count + MAX_TICK_LABELS - 1) / MAX_TICK_LABELS;
    const char *tick =
        every == 1 ? ":xtic(2)"
                   : arena_printf(a, ":xtic(int($0) %% %d == 0 ? stringcolumn(2) : '')", every);
    fprintf(gp, "plot ");
    bool first = true;
    for (int k = 0; k < SWEEP_TIME_PARTS; k++) {
        if (!used[k]) continue;
        fprintf(gp, "%s'breakdown.dat' using ($%d*%.10g)%s title '%s' lc rgb '%s'",
                first ? "" : ", \\\n     ", 3 + k, factor, first ? tick : "", time_part_names[k],
                time_part_colours[k]);
        first = false;
    }
    if (first) /* every time is 0: the latency alone */
        fprintf(gp, "'breakdown.dat' using ($8*%.10g)%s title 'latency' lc rgb '%s'", factor, tick,
                time_part_colours[0]);
    fprintf(gp, "\n");
    if (!stage_close(P, gp, "breakdown.gp")) return false;
    P->scripts[P->script_count++] = "breakdown";
    return true;
}

/* -------------------------------------------------------------- heatmap */

/* `set xtics (...)` for the n values of an axis, one in `every` named. */
static void grid_tics(Plots *P, FILE *gp, const char *which, const double *values, int n) {
    int every = (n + 24) / 25;
    fprintf(gp, "set %stics (", which);
    for (int i = 0; i < n; i++)
        fprintf(gp, "%s%s %d", i ? ", " : "",
                gp_string(P->arena, i % every ? "" : format_value(P->arena, values[i], "")), i);
    fprintf(gp, ")\n");
}

/* The other axes whose values differ, which each cell takes the best
 * over: "mapping", or "". */
static const char *other_axes(Plots *P, const HeatmapGrid *g) {
    const char *names = "";
    for (int k = 0; k < P->table->axis_count; k++)
        if (k != g->x_axis && k != g->y_axis && axis_varies(P->table, k))
            names =
                arena_printf(P->arena, "%s%s%s", names, *names ? ", " : "", P->table->axes[k].name);
    return names;
}

/* Where v is between lo and hi (on a log scale when asked), 0..1. */
static double scale_position(double v, double lo, double hi, bool log_scale) {
    if (hi <= lo) return 0.5;
    if (log_scale) return (log(v) - log(lo)) / (log(hi) - log(lo));
    return (v - lo) / (hi - lo);
}

static void heatmap_script(Plots *P, const HeatmapGrid *g, bool utilisation, double factor,
                           const char *prefix, bool log_colour) {
    Arena *a = P->arena;
    const SweepTable *t = P->table;
    const char *base = utilisation ? "heatmap_utilisation" : "heatmap";
    const char *gp_name = arena_printf(a, "%s.gp", base);
    FILE *gp = stage_open(P, gp_name);
    if (!gp) return;
    const SweepAxis *xa = &t->axes[g->x_axis], *ya = &t->axes[g->y_axis];
    const char *others = other_axes(P, g);
    script_begin(P, gp, base,
                 utilisation ? "the greatest utilisation of each cell of two numeric axes"
                             : "the least latency of each cell of two numeric axes",
                 900, 720);
    fprintf(gp, "# (heatmap.dat has both metrics.)\n");
    const char *title = arena_printf(a, "%s for each %s and %s%s%s",
                                     utilisation ? "Greatest utilisation" : "Least latency",
                                     xa->name, ya->name, *others ? ", over " : "", others);
    script_title(P, gp, title, g->empty_cells ? "blank: no ok point" : "");
    fprintf(gp, "set xlabel %s\nset ylabel %s\n", gp_string(a, axis_title(P, xa)),
            gp_string(a, axis_title(P, ya)));
    grid_tics(P, gp, "x", g->x_values, g->nx);
    grid_tics(P, gp, "y", g->y_values, g->ny);
    fprintf(gp,
            "set xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5]\n"
            "set tics scale 0\nunset grid\nunset key\nset border lw 0\n"
            "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', "
            "1 '#fde725')\n",
            g->nx - 1, g->ny - 1);
    if (utilisation)
        fprintf(gp, "set cbrange [0:100]\nset cblabel 'utilisation (%% of peak FLOP/s)'\n");
    else
        fprintf(gp, "set cblabel 'latency (%ss)'\n%s", prefix,
                log_colour ? "set logscale cb\nset format cb '%g'\n" : "");
    int value_column = utilisation ? 6 : 5;
    const char *scaled = utilisation ? "($6*100)" : arena_printf(a, "($5*%.10g)", factor);
    fprintf(gp,
            "plot 'heatmap.dat' using 1:2:(0.5):(0.5):%s with boxxyerror fs solid 1 "
            "border lc rgb '#ffffff' fc palette notitle",
            scaled);
    if (g->nx <= MAX_LABELLED_CELLS && g->ny <= MAX_LABELLED_CELLS)
        fprintf(gp,
                ", \\\n     'heatmap.dat' using 1:2:%d:(column(%d) > 0 ? 0xffffff : 0x000000) "
                "with labels tc rgb variable notitle",
                value_column + 2, value_column + 4);
    fprintf(gp, "\n");
    if (stage_close(P, gp, gp_name)) P->scripts[P->script_count++] = base;
}

/* heatmap.svg and heatmap_utilisation.svg; a note, not a failure, when
 * the sweep has not two numeric axes of two values or more. */
static bool write_heatmaps(Plots *P) {
    Arena *a = P->arena;
    HeatmapGrid g;
    if (!heatmap_grid(a, P->table, &g)) {
        fprintf(P->err,
                "%s: note: no heatmap: it needs two numeric axes (x.NAME columns of numbers) "
                "with two values or more each, and the sweep has %s\n",
                P->table->path, P->table->axis_count ? "fewer" : "no axis columns");
        P->skipped[P->skipped_count++] = "heatmap";
        P->skipped[P->skipped_count++] = "heatmap_utilisation";
        return true;
    }
    int cells = g.nx * g.ny;
    double lat_lo = INFINITY, lat_hi = 0;
    for (int c = 0; c < cells; c++) {
        if (isnan(g.min_latency_s[c])) continue;
        lat_lo = fmin(lat_lo, g.min_latency_s[c]);
        lat_hi = fmax(lat_hi, g.min_latency_s[c]);
    }
    double factor;
    const char *prefix = si_prefix(lat_hi, &factor);
    bool log_colour = wants_log(lat_lo, lat_hi);
    FILE *dat = stage_open(P, "heatmap.dat");
    if (!dat) return false;
    const SweepAxis *xa = &P->table->axes[g.x_axis], *ya = &P->table->axes[g.y_axis];
    fprintf(dat,
            "# heatmap.dat: each cell of %s by %s (ix, iy: the positions of their values)\n"
            "# holding an ok point of %s, its least latency and greatest utilisation\n"
            "# over the other axes, the two as the cells print them, and whether each\n"
            "# cell is dark there (white text).  A cell without an ok point has no line.\n"
            "# ix iy %s %s min_latency_s max_utilisation latency_text utilisation_text "
            "latency_dark utilisation_dark\n",
            one_line(a, xa->name), one_line(a, ya->name), P->csv_name, one_line(a, xa->name),
            one_line(a, ya->name));
    for (int iy = 0; iy < g.ny; iy++)
        for (int ix = 0; ix < g.nx; ix++) {
            int c = iy * g.nx + ix;
            double latency = g.min_latency_s[c], use = g.max_utilisation[c];
            if (isnan(latency)) continue;
            bool latency_dark = scale_position(latency, lat_lo, lat_hi, log_colour) < 0.55;
            bool use_dark = use < 0.55;
            fprintf(dat, "%d %d %.10g %.10g %.10g %.10g \"%.3g\" \"%.0f%%\" %d %d\n", ix, iy,
                    g.x_values[ix], g.y_values[iy], latency, use, latency * factor, use * 100,
                    latency_dark, use_dark);
        }
    if (!stage_close(P, dat, "heatmap.dat")) return false;
    int before = P->made_count;
    heatmap_script(P, &g, false, factor, prefix, log_colour);
    heatmap_script(P, &g, true, factor, prefix, log_colour);
    return P->made_count == before + 2;
}

/* ---------------------------------------------------------- running it */

/* The gnuplot executable on PATH, or NULL. */
static const char *find_gnuplot(Arena *a) {
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *dir = path;; dir++) {
        const char *end = strchr(dir, ':');
        size_t len = end ? (size_t)(end - dir) : strlen(dir);
        const char *candidate = len ? arena_printf(a, "%.*s/gnuplot", (int)len, dir) : "gnuplot";
        struct stat st;
        if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0)
            return candidate;
        if (!end) return NULL;
        dir = end;
    }
}

/* gnuplot draws one plot in well under a second; a run past this is
 * stuck (a broken install, a terminal it waits on) and is ended. */
#define GNUPLOT_SECONDS 120

/* SIGINT or SIGTERM while gnuplot runs: the child is ended and the stage
 * folder removed before cmtc ends by the same signal. */
static volatile sig_atomic_t plots_signal;
static void plots_on_signal(int sig) {
    plots_signal = sig;
}

static double plots_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs gnuplot on BASE.gp in the stage folder, its standard error copied
 * to P->err line by line after `BASE.gp: `; false when it could not run
 * or did not succeed. */
static bool run_gnuplot(Plots *P, const char *base) {
    const char *script = arena_printf(P->arena, "%s.gp", base);
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) {
        fprintf(P->err, "cmtc: error: cannot run gnuplot: %s\n", strerror(errno));
        return false;
    }
    fflush(P->err);
    pid_t child = fork();
    if (child < 0) {
        fprintf(P->err, "cmtc: error: cannot run gnuplot: %s\n", strerror(errno));
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        return false;
    }
    if (child == 0) {
        /* only async-signal-safe calls between fork and exec; a group of
         * its own, so that ending it ends what it started too */
        setpgid(0, 0);
        int null_fd = open("/dev/null", O_RDWR);
        if (null_fd >= 0) {
            dup2(null_fd, STDIN_FILENO);
            dup2(null_fd, STDOUT_FILENO);
        }
        dup2(pipe_fds[1], STDERR_FILENO);
        close(pipe_fds[0]);
        if (chdir(P->stage_dir) == 0) {
            char *const args[] = {(char *)P->gnuplot, (char *)script, NULL};
            execv(P->gnuplot, args);
        }
        static const char failed[] = "cmtc: cannot start gnuplot\n";
        if (write(STDERR_FILENO, failed, sizeof failed - 1) < 0) _exit(127);
        _exit(127);
    }
    close(pipe_fds[1]);
    char *text = NULL;
    size_t len = 0, cap = 0;
    double deadline = plots_now() + GNUPLOT_SECONDS;
    bool timed_out = false;
    for (;;) {
        char chunk[4096];
        struct pollfd pf = {pipe_fds[0], POLLIN, 0};
        int ready = poll(&pf, 1, 200);
        if (plots_signal || plots_now() > deadline) {
            timed_out = !plots_signal;
            kill(-child, SIGKILL);
            break;
        }
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) continue;
        ssize_t got = read(pipe_fds[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (len + (size_t)got + 1 > cap && len < 65536) {
            size_t grown = cap ? cap * 2 : 8192;
            while (grown < len + (size_t)got + 1) grown *= 2;
            text = arena_realloc(P->arena, text, cap, grown);
            cap = grown;
        }
        if (len + (size_t)got + 1 <= cap) {
            memcpy(text + len, chunk, (size_t)got);
            len += (size_t)got;
        }
    }
    close(pipe_fds[0]);
    int status = 0;
    /* the pipe closes before gnuplot exits: wait, bounded the same way */
    for (;;) {
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child || (w < 0 && errno != EINTR)) break;
        if (plots_signal || plots_now() > deadline) {
            timed_out = timed_out || !plots_signal;
            kill(-child, SIGKILL);
            while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        struct timespec nap = {0, 20 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    if (plots_signal) return false; /* the caller cleans up and ends */
    if (timed_out) {
        fprintf(P->err, "%s/%s: error: gnuplot did not finish within %d s and was ended\n",
                P->out_dir, script, GNUPLOT_SECONDS);
        return false;
    }
    for (size_t i = 0; i < len;) {
        size_t e = i;
        while (e < len && text[e] != '\n') e++;
        bool blank = true;
        for (size_t k = i; k < e; k++) blank = blank && (text[k] == ' ' || text[k] == '^');
        if (!blank)
            fprintf(P->err, "%s/%s: gnuplot: %.*s\n", P->out_dir, script, (int)(e - i), text + i);
        i = e + 1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        const char *svg = arena_printf(P->arena, "%s.svg", base);
        struct stat st;
        if (stat(stage_path(P, svg), &st) == 0 && st.st_size > 0) {
            remember_made(P, svg);
            return true;
        }
        fprintf(P->err, "%s/%s: error: gnuplot drew no %s\n", P->out_dir, script, svg);
        return false;
    }
    if (WIFEXITED(status))
        fprintf(P->err, "%s/%s: error: gnuplot failed (exit status %d)\n", P->out_dir, script,
                WEXITSTATUS(status));
    else
        fprintf(P->err, "%s/%s: error: gnuplot was ended by signal %d\n", P->out_dir, script,
                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return false;
}

/* Makes `dir` and the folders above it that are missing; false after
 * saying why not. */
static bool make_folder(Arena *a, const char *dir, FILE *err) {
    char *path = arena_strdup(a, dir);
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') path[--len] = '\0';
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0') continue;
        char saved = path[i];
        path[i] = '\0';
        struct stat st;
        if (stat(path, &st) != 0) {
            if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                fprintf(err, "%s: error: cannot create the folder %s: %s\n", dir, path,
                        strerror(errno));
                return false;
            }
        } else if (!S_ISDIR(st.st_mode)) {
            fprintf(err, "%s: error: %s is not a folder\n", dir, path);
            return false;
        }
        path[i] = saved;
    }
    return true;
}

/* Removes the stage folder and everything in it. */
static void remove_stage(Plots *P) {
    DIR *d = opendir(P->stage_dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlink(stage_path(P, e->d_name));
        closedir(d);
    }
    rmdir(P->stage_dir);
}

/* Every plot into the stage folder, then gnuplot on each script. */
static bool make_plots(Plots *P) {
    if (!write_pareto(P) || !write_roofline(P) || !write_breakdown(P) || !write_heatmaps(P))
        return false;
    for (int s = 0; s < P->script_count; s++)
        if (!run_gnuplot(P, P->scripts[s])) return false;
    return true;
}

/* Moves what make_plots made into out_dir, and removes the old files of
 * the plots not made this time (they would show another sweep). */
static bool move_into_place(Plots *P) {
    for (int i = 0; i < P->made_count; i++) {
        const char *to = arena_printf(P->arena, "%s/%s", P->out_dir, P->made[i]);
        if (rename(stage_path(P, P->made[i]), to) != 0) {
            fprintf(P->err, "%s: error: cannot move it into place: %s\n", to, strerror(errno));
            return false;
        }
    }
    static const char *const kinds[] = {"svg", "dat", "gp"};
    for (int s = 0; s < P->skipped_count; s++)
        for (int k = 0; k < 3; k++)
            unlink(arena_printf(P->arena, "%s/%s.%s", P->out_dir, P->skipped[s], kinds[k]));
    return true;
}

/* sweep_plots, with the exit status `cmtc plot` gives: 0 done, 1 a CSV
 * with mistakes, 2 a file that cannot be read or written, or gnuplot
 * missing or failing. */
static int plots_run(const char *csv_path, const char *out_dir, FILE *err) {
    Arena arena = {0};
    Plots P = {.arena = &arena, .err = err, .out_dir = out_dir};
    SourceManager sm;
    sources_init(&sm, &arena);
    bool from_stdin = strcmp(csv_path, "-") == 0;
    SourceFile *csv =
        from_stdin ? sources_read_fd(&sm, "<stdin>", STDIN_FILENO) : sources_load(&sm, csv_path);
    if (!csv) {
        fprintf(err, "%s: error: cannot read it: %s\n", from_stdin ? "<stdin>" : csv_path,
                sources_error_text(errno));
        arena_free_all(&arena);
        return EXIT_USAGE;
    }
    SweepTable table;
    if (!sweep_table_parse(&arena, csv->path, csv->text, csv->len, &table, err)) {
        arena_free_all(&arena);
        return EXIT_DIAGNOSTICS;
    }
    P.table = &table;
    P.gnuplot = find_gnuplot(&arena);
    if (!P.gnuplot) {
        fprintf(err,
                "cmtc: error: the plots are drawn by gnuplot, which is not installed (not on "
                "PATH); install the Debian package %s: %s\n",
                GNUPLOT_PACKAGE, GNUPLOT_INSTALL);
        arena_free_all(&arena);
        return EXIT_USAGE;
    }
    char *stage = arena_printf(&arena, "%s/.cmtc-plots-XXXXXX", out_dir);
    if (!make_folder(&arena, out_dir, err)) {
        arena_free_all(&arena);
        return EXIT_USAGE;
    }
    if (!mkdtemp(stage)) {
        fprintf(err, "%s: error: cannot write in this folder: %s\n", out_dir, strerror(errno));
        arena_free_all(&arena);
        return EXIT_USAGE;
    }
    P.stage_dir = stage;
    const char *slash = strrchr(csv->path, '/');
    P.csv_name = one_line(&arena, slash ? slash + 1 : csv->path);
    P.note = status_note(&arena, &table);
    P.ok = ARENA_ARRAY(&arena, const SweepPoint *, table.point_count);
    for (int i = 0; i < table.point_count; i++)
        if (table.points[i].status == SWEEP_OK) P.ok[P.ok_count++] = &table.points[i];
    bool done;
    if (P.ok_count == 0) {
        fprintf(err, "%s: note: no plots: no point is ok (%s)\n", table.path, P.note);
        static const char *const every_plot[] = {"pareto", "roofline", "breakdown", "heatmap",
                                                 "heatmap_utilisation"};
        for (int s = 0; s < 5; s++) P.skipped[P.skipped_count++] = every_plot[s];
        done = move_into_place(&P);
    } else {
        /* a signal while gnuplot runs ends it and leaves no stage folder */
        struct sigaction on = {0}, old_int, old_term;
        on.sa_handler = plots_on_signal;
        sigemptyset(&on.sa_mask);
        plots_signal = 0;
        sigaction(SIGINT, &on, &old_int);
        sigaction(SIGTERM, &on, &old_term);
        label_points(&P);
        done = make_plots(&P) && !plots_signal && move_into_place(&P);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        if (plots_signal) {
            int sig = plots_signal;
            remove_stage(&P);
            arena_free_all(&arena);
            raise(sig); /* as the signal would have ended cmtc */
            return EXIT_USAGE;
        }
    }
    remove_stage(&P);
    arena_free_all(&arena);
    return done ? EXIT_OK : EXIT_USAGE;
}

bool sweep_plots(const char *csv_path, const char *out_dir, FILE *err) {
    return plots_run(csv_path, out_dir, err) == EXIT_OK;
}

/* ------------------------------------------------------------ cmtc plot */

int cmd_plot(int argc, char **argv) {
    const CommandSpec *spec = command_find("plot");
    const char *csv = NULL, *dir = NULL;
    OptionParser op;
    options_init(&op, spec, argc, argv);
    for (int id; (id = options_next(&op)) != OPT_DONE;) {
        switch (id) {
        case OPT_POSITIONAL:
            if (csv) {
                fprintf(stderr, "cmtc: error: plot takes one CSV file, got '%s' and '%s'\n", csv,
                        op.value);
                options_usage_hint(stderr, spec);
                return EXIT_USAGE;
            }
            csv = op.value;
            break;
        case OPT_HELP: options_help(stdout, spec); return EXIT_OK;
        case PO_PLOTS: dir = op.value; break;
        default: options_usage_hint(stderr, spec); return EXIT_USAGE;
        }
    }
    if (!csv || !dir || !*dir) {
        fprintf(stderr, "cmtc: error: plot needs %s\n",
                !csv ? "the sweep's CSV file" : "--plots DIR, the folder the plots go to");
        options_usage_hint(stderr, spec);
        return EXIT_USAGE;
    }
    return plots_run(csv, dir, stderr);
}
