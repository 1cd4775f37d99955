/* exhaustive.c — `--exhaustive`: an enumerator independent of the
 * MILP.  It walks the same space without its reductions (every split
 * table, not one per symmetry class; every permutation of every order
 * hole; every partition of the free statements into runs at every level),
 * completes the mapping and evaluates it whole with evaluate_mapping, so it
 * assumes nothing about how the cost splits over groups.  The tests compare
 * its optimum with the MILP's. */
#include "passes/optimize/space.h"

#include <math.h>
#include <string.h>

#define EXHAUSTIVE_LIST_LIMIT 200000L

typedef struct Ex {
    Program *p;
    Arena *out; /* where the chosen and the listed mappings go */
    IrMapping *m;
    OptSpace *sp;
    Objective obj;
    double deadline;
    bool stopped;
    long evaluated;
    int *path; /* arcs of the partition being built */
    int path_len;
    bool *covered;
    /* best so far */
    bool have;
    double best;
    int best_cfg;
    int *best_path;
    int best_len;
    double least_excess;
    SolverReport *r;
    long list_cap;
    size_t list_bytes, list_limit; /* the list stops at a share of the budget */
} Ex;

static void visit(Ex *ex, int c) {
    OptSpace *sp = ex->sp;
    Arena scratch = {0};
    IrMapping *full = ARENA_NEW(&scratch, IrMapping);
    *full = *ex->m;
    opt_apply(&scratch, sp, full, c, ex->path, ex->path_len);
    EvalResult ev;
    EvalStatus st = evaluate_mapping(full, NULL, &ev);
    ex->evaluated++;
    if (st == EVAL_OK) {
        double v = ev.cost.latency_s;
        if (ex->obj == OBJ_ENERGY) v = ev.cost.energy_j;
        if (ex->obj == OBJ_EDP) v = ev.cost.latency_s * ev.cost.energy_j;
        if (ev.feasible && (!ex->have || v < ex->best)) {
            ex->have = true;
            ex->best = v;
            ex->best_cfg = c;
            memcpy(ex->best_path, ex->path, sizeof(int) * (size_t)ex->path_len);
            ex->best_len = ex->path_len;
        }
        if (!ev.feasible && ev.worst_excess_bytes < ex->least_excess)
            ex->least_excess = ev.worst_excess_bytes;
        SolverReport *r = ex->r;
        if (r->evaluated_count < EXHAUSTIVE_LIST_LIMIT && ex->list_bytes < ex->list_limit) {
            size_t before = ex->out->used_total;
            if (r->evaluated_count == ex->list_cap) {
                long ncap = ex->list_cap ? ex->list_cap * 2 : 256;
                r->evaluated = arena_realloc(ex->out, r->evaluated,
                                             sizeof(SolverEvaluated) * (size_t)ex->list_cap,
                                             sizeof(SolverEvaluated) * (size_t)ncap);
                ex->list_cap = ncap;
            }
            IrMapping *keep = ARENA_NEW(ex->out, IrMapping);
            *keep = *ex->m;
            opt_apply(ex->out, sp, keep, c, ex->path, ex->path_len);
            r->evaluated[r->evaluated_count++] =
                (SolverEvaluated){keep, ev.cost.latency_s, ev.cost.energy_j, ev.feasible};
            ex->list_bytes += ex->out->used_total - before;
        }
    }
    arena_free_all(&scratch);
    if (ex->deadline > 0 && (ex->evaluated & 63) == 0 && opt_now() > ex->deadline)
        ex->stopped = true;
}

/* Every partition of the statements into arcs: the first uncovered
 * statement takes each arc that holds it and no covered statement. */
static void partitions(Ex *ex, int c) {
    OptSpace *sp = ex->sp;
    if (ex->stopped) return;
    int st = 0;
    while (st < sp->S && ex->covered[st]) st++;
    if (st == sp->S) {
        visit(ex, c);
        return;
    }
    for (size_t k = sp->stmt_arc_first[st]; k < sp->stmt_arc_first[st + 1] && !ex->stopped; k++) {
        const OptArc *a = &sp->arcs[sp->stmt_arcs[k]];
        bool ok = true;
        for (int q = 0; q < a->count; q++)
            if (ex->covered[a->stmts[q]]) ok = false;
        if (!ok) continue;
        for (int q = 0; q < a->count; q++) ex->covered[a->stmts[q]] = true;
        ex->path[ex->path_len++] = sp->stmt_arcs[k];
        partitions(ex, c);
        ex->path_len--;
        for (int q = 0; q < a->count; q++) ex->covered[a->stmts[q]] = false;
    }
}

bool opt_exhaustive(Arena *out, Program *p, IrMapping *m, const OptimizeOptions *opts,
                    SolverReport *report) {
    double t0 = opt_now();
    Objective obj = opts && opts->objective_given ? opts->objective : m->objective;
    double deadline = opts && opts->time_limit_s > 0 ? t0 + opts->time_limit_s : 0;
    Arena arena = {0};
    size_t budget = opt_budget_bytes();
    OptSpace *sp = opt_space_build(&arena, m, false, deadline, budget, 0);
    report->method = "exhaustive";
    if (opt_report_stop(p, sp, m->span, 0)) {
        report->status = SOLVER_FAILED;
        report->seconds = opt_now() - t0;
        arena_free_all(&arena);
        return false;
    }
    Ex ex = {0};
    ex.p = p;
    ex.out = out;
    ex.m = m;
    ex.sp = sp;
    ex.obj = obj;
    ex.deadline = deadline;
    ex.r = report;
    ex.path = ARENA_ARRAY(&arena, int, sp->S + 1);
    ex.best_path = ARENA_ARRAY(&arena, int, sp->S + 1);
    ex.covered = ARENA_ARRAY(&arena, bool, sp->S + 1);
    ex.least_excess = INFINITY;
    ex.list_limit = budget / 4;
    for (int c = 0; c < sp->cfg_count && !ex.stopped; c++) partitions(&ex, c);
    bool cut = ex.stopped || sp->truncated;
    report->seconds = opt_now() - t0;
    report->candidates = ex.evaluated;
    report->space = (double)ex.evaluated;
    report->configurations = sp->cfg_count;
    if (!ex.have) {
        if (cut) {
            diag_error(p->diags, m->span, "E0371",
                       "time limit of %g s reached before any mapping of %s that fits was found "
                       "(%ld evaluated)",
                       opts->time_limit_s, m->name, ex.evaluated);
            report->status = SOLVER_TIME_LIMIT;
        } else {
            Span at = m->span;
            /* no capacity excess to name when none was evaluated or what
             * failed was a missing compute unit */
            Diag *d =
                isfinite(ex.least_excess) && ex.least_excess > 0
                    ? diag_error(
                          p->diags, at, "E0370",
                          "none of the %ld mappings of %s fits `%s`: the closest "
                          "exceeds a capacity by %s",
                          ex.evaluated, m->name, m->arch->name,
                          unit_format(p->arena, ex.least_excess, (UnitDim){BU_BYTE, BU_NONE}))
                    : diag_error(p->diags, at, "E0370", "none of the %ld mappings of %s fits `%s`",
                                 ex.evaluated, m->name, m->arch->name);
            diag_help(d, p->diags, "run without --exhaustive to see which decisions conflict");
            report->status = SOLVER_FAILED;
        }
        arena_free_all(&arena);
        return false;
    }
    opt_apply(out, sp, m, ex.best_cfg, ex.best_path, ex.best_len);
    report->objective = ex.best;
    report->status = cut ? SOLVER_TIME_LIMIT : SOLVER_OPTIMAL;
    report->gap = cut ? 1 : 0;
    arena_free_all(&arena);
    return true;
}
