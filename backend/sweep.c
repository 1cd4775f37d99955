/* sweep.c — `cmtc sweep`: every point of a sweep (docs/sweeps.md) is
 * checked, its holes solved, lowered and costed in a child process of its
 * own (a crash, a runaway solve or the memory of one point cannot take the
 * others with it), up to -j at once; each point's row is appended to the
 * output as it finishes, so an interrupted sweep loses nothing and a rerun
 * with the same output skips the points already there.  --shard I/N runs
 * the points i with i mod N = I - 1; --merge joins the parts; --emit-slurm
 * writes a job array that does both. */
#include "backend/sweep.h"
#include "passes/optimize/optimize.h"
#include "passes/passes.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ columns */

/* The columns after `point` and the axes, in order (docs/sweeps.md says
 * what each holds). */
static const char *const figure_columns[] = {
    "status",
    "message",
    "mapping",
    "op",
    "arch",
    "latency_s",
    "energy_j",
    "edp_js",
    "power_w",
    "time_compute_s",
    "time_memory_s",
    "time_network_s",
    "time_bubble_s",
    "time_other_s",
    "compute_s",
    "memory_s",
    "network_s",
    "bound",
    "flop",
    "outer_bytes",
    "intensity_flop_per_b",
    "achieved_flop_per_s",
    "peak_flop_per_s",
    "peak_outer_b_per_s",
    "utilisation",
    "price_usd",
    "flop_per_s_per_usd",
    "ttft_s",
    "tpot_s",
    "tokens_per_s",
    "tokens_per_s_per_device",
    "memory_per_device_b",
    "memory_per_level",
    "solver",
    "chosen",
    "inputs",
};
enum { FIGURE_COLUMNS = (int)(sizeof figure_columns / sizeof figure_columns[0]) };

const char *sweep_axis_header(Arena *a, const IrSweepAxis *ax) {
    if (ax->kind != IR_AXIS_PARAM) return arena_printf(a, "x.%s", ax->name);
    bool unitless = ax->dim.num == BU_NONE && ax->dim.den == BU_NONE;
    if (unitless) return arena_printf(a, "x.%s", ax->name);
    return arena_printf(a, "x.%s (%s)", ax->name, unit_dim_si_name(a, ax->dim));
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void csv_field(Text *t, const char *s) {
    if (!s) s = "";
    if (!strpbrk(s, ",\"\n\r")) {
        text_add(t, "%s", s);
        return;
    }
    text_add(t, "\"");
    for (const char *p = s; *p; p++) text_add(t, *p == '"' ? "\"\"" : "%c", *p);
    text_add(t, "\"");
}

static const char *number_text(Arena *a, double v) {
    if (!isfinite(v)) return "";
    return arena_printf(a, "%.10g", v);
}

const char *sweep_header(Arena *a, const IrSweep *sw, SweepFormat format) {
    if (format == SWEEP_JSONL) return NULL;
    Text t = {a, NULL, 0, 0};
    text_add(&t, "point");
    for (int i = 0; i < sw->axis_count; i++) {
        text_add(&t, ",");
        csv_field(&t, sweep_axis_header(a, &sw->axes[i]));
    }
    for (int k = 0; k < FIGURE_COLUMNS; k++) text_add(&t, ",%s", figure_columns[k]);
    return t.buf;
}

/* The text of axis `i` at value `k` in a row: a number in SI for a
 * parameter, the name for an arch or mapping. */
static const char *axis_cell(Arena *a, const IrSweepAxis *ax, int k) {
    if (ax->kind != IR_AXIS_PARAM) return ax->texts[k];
    if (ax->integer) return arena_printf(a, "%lld", (long long)llround(ax->numbers[k]));
    return number_text(a, ax->numbers[k]);
}

const char *sweep_row_key(Arena *a, const IrSweep *sw, int64_t point) {
    int index[IR_SWEEP_MAX_AXES];
    ir_sweep_point(sw, point, index);
    Text t = {a, NULL, 0, 0};
    text_add(&t, "%lld", (long long)point);
    for (int i = 0; i < sw->axis_count; i++) {
        text_add(&t, ",");
        csv_field(&t, axis_cell(a, &sw->axes[i], index[i]));
    }
    return t.buf;
}

/* ------------------------------------------------------------ figures */

/* What a row says of a point, computed from its schedule. */
typedef struct Figures {
    const char *status, *message, *mapping, *op, *arch, *bound, *memory_per_level, *solver, *chosen;
    double latency, energy, edp, power;
    double t_compute, t_memory, t_network, t_bubble, t_other;
    double compute, memory, network;
    double flop, outer_bytes, intensity, achieved, peak_flop, peak_outer_bw, utilisation;
    double price, per_usd;
    double ttft, tpot, tokens, tokens_device, memory_device;
} Figures;

static Figures no_figures(const char *status, const char *message) {
    Figures f = {.status = status, .message = message};
    double nan = NAN;
    f.latency = f.energy = f.edp = f.power = nan;
    f.t_compute = f.t_memory = f.t_network = f.t_bubble = f.t_other = nan;
    f.compute = f.memory = f.network = nan;
    f.flop = f.outer_bytes = f.intensity = f.achieved = nan;
    f.peak_flop = f.peak_outer_bw = f.utilisation = nan;
    f.price = f.per_usd = nan;
    f.ttft = f.tpot = f.tokens = f.tokens_device = f.memory_device = nan;
    return f;
}

static const char *memory_use(Arena *a, const Schedule *s) {
    const IrArch *arch = s->arch;
    Text t = {a, NULL, 0, 0};
    text_add(&t, "%s", "");
    for (int mi = 0; mi < arch->memory_count; mi++) {
        double peak = 0;
        for (int g = 0; g < s->group_count; g++) {
            double need = 0;
            const SchedGroup *grp = &s->groups[g];
            for (int k = 0; k < grp->footprint_count; k++)
                if (grp->footprints[k].memory == mi) need += footprint_need(&grp->footprints[k]);
            if (need > peak) peak = need;
        }
        text_add(&t, "%s%s=%.6g", mi ? ";" : "", arch->memories[mi].name, peak);
    }
    return t.buf;
}

static Figures figures_of(Arena *a, const Schedule *s, const SolverReport *solver,
                          const char *chosen) {
    Figures f = no_figures("ok", "");
    const IrArch *arch = s->arch;
    f.mapping = s->m->name;
    f.op = s->op->name;
    f.arch = ir_arch_text(a, arch);
    f.latency = s->cost.latency_s;
    f.energy = s->cost.energy_j;
    f.edp = f.latency * f.energy;
    f.power = f.latency > 0 ? f.energy / f.latency : NAN;
    double part[5];
    schedule_partition(s, part);
    f.t_compute = part[0];
    f.t_memory = part[1];
    f.t_network = part[2];
    f.t_bubble = part[3];
    f.t_other = part[4];
    f.compute = s->cost.compute_s;
    f.memory = s->cost.memory_s;
    f.network = s->cost.network_s;
    f.bound = schedule_bound_word(s);
    /* work: every instance's, every repeat (and micro-batch) */
    double repeat = s->m->repeat > 0 ? (double)s->m->repeat : 1;
    double micro = s->pipeline.present && s->pipeline.micro > 0 ? s->pipeline.micro : 1;
    double flop = 0;
    for (int st = 0; st < s->op->stmt_count; st++) {
        const SchedStmt *ss = &s->stmts[st];
        flop += sched_stmt_useful_work(s, st) * (ss->unit && ss->unit->matrix ? 2 : 1);
    }
    f.flop = flop * repeat * micro;
    const IrArch *whole = s->m->pipeline.full_arch ? s->m->pipeline.full_arch : arch;
    /* the outermost memory: every instance's traffic and bandwidth */
    const IrLevel *outer = &arch->levels[0];
    double outer_bytes = 0, outer_bw = 0;
    for (int k = 0; k < outer->memory_count; k++) {
        int mi = outer->first_memory + k;
        for (int g = 0; g < s->group_count; g++) outer_bytes += s->groups[g].mem_bytes[mi];
        outer_bw += arch->memories[mi].bandwidth;
    }
    f.outer_bytes = outer_bytes * (double)outer->instances * repeat * micro;
    /* the bandwidth of every instance of the whole machine's outermost
     * memory (a stage's are one stage's) */
    f.peak_outer_bw = outer_bw * (double)whole->levels[0].instances;
    f.intensity = f.outer_bytes > 0 ? f.flop / f.outer_bytes : NAN;
    f.achieved = f.latency > 0 ? f.flop / f.latency : NAN;
    /* the peak: the matrix units' (each MAC two FLOP), else the vector
     * units', of the whole machine (a pipeline's schedule is one stage's) */
    double peak_matrix = 0, peak_vector = 0;
    for (int u = 0; u < whole->unit_count; u++) {
        const IrCompute *unit = &whole->units[u];
        double total = unit->throughput * (double)unit->instances;
        if (unit->matrix)
            peak_matrix += 2 * total;
        else
            peak_vector += total;
    }
    f.peak_flop = peak_matrix > 0 ? peak_matrix : peak_vector;
    f.utilisation = f.peak_flop > 0 ? f.achieved / f.peak_flop : NAN;
    /* cost efficiency, where the arch gives its price */
    f.price = whole->price_usd > 0 ? whole->price_usd : NAN;
    f.per_usd = whole->price_usd > 0 ? f.achieved / whole->price_usd : NAN;
    /* serving (`serve prefill|decode of B`) and what a step holds */
    const SchedServing *sv = &s->serving;
    bool decode = sv->present && s->m->serve.kind == SERVE_DECODE;
    f.ttft = sv->present && s->m->serve.kind == SERVE_PREFILL ? sv->step_s : NAN;
    f.tpot = decode ? sv->step_s : NAN;
    f.tokens = decode ? sv->per_s : NAN;
    f.tokens_device = decode ? sv->per_s_device : NAN;
    f.memory_device = s->training.present ? s->training.total : NAN;
    f.memory_per_level = memory_use(a, s);
    /* the status only: a row is the same whichever run wrote it (a
     * solve's seconds are not) */
    f.solver = solver->status == SOLVER_NOT_NEEDED ? "none" : solver_status_name(solver->status);
    f.chosen = chosen;
    return f;
}

/* A point's row; `inputs` (sweep_inputs) is its last column. */
static const char *row_text(Arena *a, const IrSweep *sw, int64_t point, const Figures *f,
                            const char *inputs, SweepFormat format) {
    int index[IR_SWEEP_MAX_AXES];
    ir_sweep_point(sw, point, index);
    const char *texts[] = {f->status, f->message, f->mapping, f->op, f->arch};
    const double numbers[] = {f->latency,   f->energy,   f->edp,       f->power,
                              f->t_compute, f->t_memory, f->t_network, f->t_bubble,
                              f->t_other,   f->compute,  f->memory,    f->network};
    const char *tail_texts[] = {f->bound};
    const double roof[] = {f->flop,          f->outer_bytes,   f->intensity,   f->achieved,
                           f->peak_flop,     f->peak_outer_bw, f->utilisation, f->price,
                           f->per_usd,       f->ttft,          f->tpot,        f->tokens,
                           f->tokens_device, f->memory_device};
    const char *last[] = {f->memory_per_level, f->solver, f->chosen, inputs};
    if (format == SWEEP_CSV) {
        Text t = {a, NULL, 0, 0};
        text_add(&t, "%s", sweep_row_key(a, sw, point));
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
            text_add(&t, ",");
            csv_field(&t, texts[k]);
        }
        for (size_t k = 0; k < sizeof numbers / sizeof numbers[0]; k++)
            text_add(&t, ",%s", number_text(a, numbers[k]));
        text_add(&t, ",");
        csv_field(&t, tail_texts[0]);
        for (size_t k = 0; k < sizeof roof / sizeof roof[0]; k++)
            text_add(&t, ",%s", number_text(a, roof[k]));
        for (size_t k = 0; k < sizeof last / sizeof last[0]; k++) {
            text_add(&t, ",");
            csv_field(&t, last[k]);
        }
        text_add(&t, "\n");
        return t.buf;
    }
    /* JSON Lines: the same names; the axes as an object of their own */
    json_t *o = json_object();
    json_object_set_new(o, "point", json_integer((json_int_t)point));
    json_t *axes = json_object();
    for (int i = 0; i < sw->axis_count; i++) {
        const IrSweepAxis *ax = &sw->axes[i];
        json_object_set_new(axes, ax->name,
                            ax->kind != IR_AXIS_PARAM ? json_string(ax->texts[index[i]])
                            : ax->integer ? json_integer((json_int_t)llround(ax->numbers[index[i]]))
                                          : json_real(ax->numbers[index[i]]));
    }
    json_object_set_new(o, "axes", axes);
    int column = 0;
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++, column++)
        if (texts[k]) json_object_set_new(o, figure_columns[column], json_string(texts[k]));
    for (size_t k = 0; k < sizeof numbers / sizeof numbers[0]; k++, column++)
        json_object_set_new(o, figure_columns[column],
                            isfinite(numbers[k]) ? json_real(numbers[k]) : json_null());
    if (tail_texts[0]) json_object_set_new(o, figure_columns[column], json_string(tail_texts[0]));
    column++;
    for (size_t k = 0; k < sizeof roof / sizeof roof[0]; k++, column++)
        json_object_set_new(o, figure_columns[column],
                            isfinite(roof[k]) ? json_real(roof[k]) : json_null());
    for (size_t k = 0; k < sizeof last / sizeof last[0]; k++, column++)
        if (last[k]) json_object_set_new(o, figure_columns[column], json_string(last[k]));
    char *dumped = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(o);
    const char *line = arena_printf(a, "%s\n", dumped ? dumped : "{}");
    free(dumped);
    return line;
}

/* The first error among diags[from..], as one line with its place. */
static const char *first_error(Arena *a, const SourceManager *sm, const DiagSink *d, int from) {
    for (int i = from; i < d->count; i++) {
        const Diag *x = d->items[i];
        if (x->severity != SEV_ERROR) continue;
        const SourceFile *f = x->span.file >= 0 ? sources_get(sm, x->span.file) : NULL;
        uint32_t line = 0, col = 0;
        if (f) source_line_col(f, x->span.start, &line, &col);
        return f ? arena_printf(a, "%s:%u:%u: error[%s]: %s", f->path, line, col,
                                x->code ? x->code : "", x->message)
                 : arena_printf(a, "error[%s]: %s", x->code ? x->code : "", x->message);
    }
    return "failed without a diagnostic";
}

const char *sweep_inputs(Arena *a, const SourceManager *sm) {
    /* FNV-1a, 64 bits, over each file's length and text in load order (not
     * its path: the same sweep in another clone reads the same) */
    uint64_t h = 14695981039346656037ull;
    for (int i = 0; i < sm->count; i++) {
        const SourceFile *f = sm->files[i];
        char len[32];
        int n = snprintf(len, sizeof len, "%zu:", f->len);
        for (int k = 0; k < n; k++) h = (h ^ (unsigned char)len[k]) * 1099511628211ull;
        for (size_t k = 0; k < f->len; k++) h = (h ^ (unsigned char)f->text[k]) * 1099511628211ull;
    }
    return arena_printf(a, "%016llx", (unsigned long long)h);
}

const char *sweep_evaluate_point(Arena *a, Program *p, const SourceManager *sm, const IrSweep *sw,
                                 int64_t point, const OptimizeOptions *opts, const char *inputs,
                                 SweepFormat format) {
    DiagSink diags;
    diags_init(&diags, a);
    Figures f;
    IrMapping *m = program_sweep_point(p, sw, point, &diags);
    if (!m) {
        f = no_figures("error", first_error(a, sm, &diags, 0));
        return row_text(a, sw, point, &f, inputs, format);
    }
    SolverReport solver;
    memset(&solver, 0, sizeof solver);
    DiagSink *was = p->diags;
    p->diags = &diags;
    const IrMapping *complete =
        report_unsupported(p, m) ? NULL : complete_mapping(a, p, m, opts, &solver);
    p->diags = was;
    if (!complete) {
        const char *status = solver.status == SOLVER_TIME_LIMIT ? "time_limit"
                             : solver.status == SOLVER_FAILED   ? "infeasible"
                                                                : "error";
        f = no_figures(status, first_error(a, sm, &diags, 0));
        return row_text(a, sw, point, &f, inputs, format);
    }
    Schedule *s = lower_mapping(a, complete, false, NULL);
    long errors = diags.errors_reported;
    report_capacity(s, &diags);
    if (diags.errors_reported > errors) {
        f = no_figures("infeasible", first_error(a, sm, &diags, 0));
        return row_text(a, sw, point, &f, inputs, format);
    }
    const char *chosen = mapping_to_cmt(a, complete);
    f = figures_of(a, s, &solver, chosen);
    return row_text(a, sw, point, &f, inputs, format);
}

const char *sweep_failure_row(Arena *a, const IrSweep *sw, int64_t point, const char *status,
                              const char *why, const char *inputs, SweepFormat format) {
    Figures f = no_figures(status, why);
    return row_text(a, sw, point, &f, inputs, format);
}

const char *sweep_row_inputs(Arena *a, const char *row, SweepFormat format) {
    if (format == SWEEP_JSONL) {
        const char *k = strstr(row, "\"inputs\":\"");
        if (!k) return "";
        k += strlen("\"inputs\":\"");
        const char *e = strchr(k, '"');
        return e ? arena_strndup(a, k, (size_t)(e - k)) : "";
    }
    /* the last field: a hash, never quoted */
    size_t n = strlen(row);
    while (n > 0 && (row[n - 1] == '\n' || row[n - 1] == '\r')) n--;
    size_t b = n;
    while (b > 0 && row[b - 1] != ',') b--;
    return arena_strndup(a, row + b, n - b);
}

bool sweep_row_ok(const IrSweep *sw, const char *row, SweepFormat format) {
    if (format == SWEEP_JSONL) return strstr(row, "\"status\":\"ok\"") != NULL;
    /* the status is the field after the point and the axes */
    const char *p = row;
    for (int field = 0; field < 1 + sw->axis_count && *p; field++) {
        bool quoted = false;
        for (; *p && (quoted || *p != ','); p++)
            if (*p == '"') quoted = !quoted;
        if (*p == ',') p++;
    }
    return strncmp(p, "ok,", 3) == 0;
}
