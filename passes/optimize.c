/* optimize.c — the mapping optimizer: fills every hole of a mapping with
 * the best choice within the cost model, proven optimal by a mixed-integer
 * program solved with lp_solve (docs/optimizer.md has the formulation).
 *
 *   1. the space (optimize_space.c): configurations (split table, tile
 *      values, loop orders) and fusion arcs (groups a partition may use);
 *   2. every arc is costed under every configuration by the lowering
 *      itself, a few lowerings per configuration (arcs that do not overlap
 *      share one); pruning: capacity (an arc that overflows a memory is
 *      fixed to 0 by its capacity row; a configuration with no fitting
 *      partition is dropped), dominance (an arc at another level that is no
 *      better in latency and energy; a configuration no better on every
 *      arc than another) and bound (a configuration whose exact best value,
 *      a shortest path over its arcs, cannot beat the incumbent);
 *   3. one MILP: one-hot configuration x, arcs z per configuration covering
 *      each statement once, capacity rows, epigraph rows for each group's
 *      latency (the maximum of its compute, memory and network terms),
 *      every row named after the source span that caused it;
 *   4. edp: the latency/energy frontier by the epsilon-constraint method,
 *      stopped when no later point can beat the best product;
 *   5. infeasible spaces: the smallest set of the user's decisions that
 *      conflict, found by relaxing decisions one at a time and solving
 *      again. */
#include "passes/optimize.h"

#include <errno.h>
#include <lpsolve/lp_lib.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OPT_CONFIG_LIMIT 4000000L
#define OPT_COLUMN_BUDGET 400000L
#define OPT_BOUND_WINDOW 0.2 /* keep candidates within 20% of the best */
#define OPT_DOMINANCE_PEERS 64

/* ------------------------------------------------------ small helpers */

static double objective_of(Objective obj, double lat, double en) {
    switch (obj) {
    case OBJ_ENERGY: return en;
    case OBJ_EDP: return lat * en;
    case OBJ_LATENCY: break;
    }
    return lat;
}

static const char *objective_name(Objective o) {
    return o == OBJ_ENERGY ? "energy" : o == OBJ_EDP ? "edp" : "latency";
}

/* `name@line.col` for a row: LP format accepts these characters. */
static char *row_name(Arena *a, const SourceManager *sm, Span sp, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static char *row_name(Arena *a, const SourceManager *sm, Span sp, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *base = arena_vprintf(a, fmt, ap);
    va_end(ap);
    for (char *c = base; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '.'))
            *c = '_';
    if (sm && sp.file >= 0) {
        const SourceFile *f = sources_get(sm, sp.file);
        if (f) {
            uint32_t line, col;
            source_line_col(f, sp.start, &line, &col);
            return arena_printf(a, "%s@%u.%u", base, line, col);
        }
    }
    return base;
}

static const char *arc_label(Arena *a, const OptSpace *sp, const OptArc *arc) {
    char *s = arena_strdup(a, "");
    for (int k = 0; k < arc->count; k++)
        s = arena_printf(a, "%s%s%s", s, k ? "_" : "", sp->op->stmts[arc->stmts[k]].name);
    if (arc->level >= 0) s = arena_printf(a, "%s_at_%s", s, sp->arch->levels[arc->level].name);
    return s;
}

static Span arc_span(const OptSpace *sp, const OptArc *arc) {
    const IrMapping *m = sp->m;
    if (arc->given_group >= 0 && m->fuse.span) return m->fuse.span[arc->given_group];
    if (m->fuse.whole_hole) return m->fuse.hole_span;
    return sp->op->stmts[arc->stmts[0]].span;
}

static Span config_span(const IrMapping *m) {
    if (m->spatial.whole_hole) return m->spatial.hole_span;
    int S = m->op->stmt_count, D = m->arch->dim_count, I = m->op->index_count;
    int L = m->arch->level_count;
    if (m->spatial.split && m->spatial.split_span)
        for (int k = 0; k < S * D; k++)
            if (m->spatial.split[k] == IR_HOLE) return m->spatial.split_span[k];
    if (m->tile.size && m->tile.span)
        for (int k = 0; k < L * I; k++)
            if (m->tile.size[k] == IR_HOLE) return m->tile.span[k];
    if (m->order.length && m->order.span)
        for (int l = 0; l < L; l++)
            if (m->order.length[l] == IR_HOLE) return m->order.span[l];
    if (m->fuse.whole_hole) return m->fuse.hole_span;
    return m->decl ? m->decl->span : SPAN_NONE;
}

/* --------------------------------------------------------- progress */

typedef struct Progress {
    bool tty;
    double start, last;
    const char *mapping;
    double scale; /* model units to seconds or joules */
    const char *unit;
    double deadline;
} Progress;

static void progress_clear(Progress *pg) {
    if (pg->tty && pg->last > 0) fprintf(stderr, "\r\033[K");
}

static void progress_eval(Progress *pg, long done, long total) {
    if (!pg->tty) return;
    double now = opt_now();
    if (now - pg->start < 1.0 || now - pg->last < 0.25) return;
    pg->last = now;
    fprintf(stderr, "\r\033[Kcmtc: %s: costing configuration %ld of %ld (%.1f s)", pg->mapping,
            done, total, now - pg->start);
}

static int __WINAPI lp_abort(lprec *lp, void *handle) {
    Progress *pg = handle;
    double now = opt_now();
    if (pg->deadline > 0 && now > pg->deadline) return TRUE;
    if (pg->tty && now - pg->start >= 1.0 && now - pg->last >= 0.25) {
        pg->last = now;
        double inc = get_working_objective(lp);
        double bound = lp->real_solution;
        bool have = lp->solutioncount > 0 && fabs(inc) < 1e29;
        if (have && fabs(bound) < 1e29) {
            double gap = fabs(inc) > 0 ? (inc - bound) / fabs(inc) : 0;
            fprintf(stderr,
                    "\r\033[Kcmtc: %s: incumbent %.6g %s, bound %.6g %s, gap %.2f%% (%.1f s)",
                    pg->mapping, inc * pg->scale, pg->unit, bound * pg->scale, pg->unit,
                    100 * (gap < 0 ? 0 : gap), now - pg->start);
        } else {
            fprintf(stderr, "\r\033[Kcmtc: %s: searching, no incumbent yet (%.1f s)", pg->mapping,
                    now - pg->start);
        }
    }
    return FALSE;
}

/* ----------------------------------------------------- kept configs */

typedef struct Kept {
    int cfg;
    OptCost *row;             /* per arc */
    bool *pruned;             /* per arc: dominated by the same statements at another level */
    double best_lat, best_en; /* shortest paths (exact per configuration) */
    double bound;             /* exact best objective (latency, energy) or a lower bound (edp) */
    double ub;                /* an achievable objective value */
    bool dropped;
} Kept;

/* Shortest path over the arcs of one configuration: the best partition for
 * an additive cost.  Arcs cover statement sets; we walk statements in
 * source order, choosing at each uncovered statement one arc that starts
 * there (every arc's statements are a run of a free block or a whole fixed
 * group; a fixed group starts at its first statement). */
typedef struct PathCtx {
    const OptSpace *sp;
    const OptCost *row;
    const bool *pruned;
    int which;    /* 0 latency, 1 energy, 2 bottleneck ratio */
    double *memo; /* by mask position, only for run-structured spaces */
} PathCtx;

static double arc_value(const PathCtx *pc, int a) {
    const OptCost *c = &pc->row[a];
    if (pc->which == 2) return c->feasible ? 0 : (c->capacity > 0 ? c->need / c->capacity : 1e300);
    if (!c->feasible || (pc->pruned && pc->pruned[a])) return INFINITY;
    return pc->which == 0 ? c->latency_s : c->energy_j;
}

/* Arcs starting at statement st: the statement is the first of the arc. */
static double best_from(PathCtx *pc, int st, int *choice) {
    const OptSpace *sp = pc->sp;
    if (st >= sp->S) return 0;
    if (!isnan(pc->memo[st])) return pc->memo[st];
    /* a statement already covered by an arc starting earlier cannot occur:
     * arcs of a block are runs and fixed groups are visited at their first
     * statement, so the next position is the first statement after the arc
     * in source order that is not inside a fixed group already taken.  We
     * keep it simple: statements are covered in source order by runs;
     * fixed groups may interleave, handled by the general cover test. */
    double best = INFINITY;
    int bestarc = -1;
    int A = sp->arc_count;
    for (int k = 0; sp->stmt_arcs[st * (A + 1) + k] >= 0; k++) {
        int a = sp->stmt_arcs[st * (A + 1) + k];
        const OptArc *arc = &sp->arcs[a];
        if (arc->stmts[0] != st) continue;
        /* the arc must be contiguous from st for this walk */
        bool run = true;
        for (int q = 0; q < arc->count; q++)
            if (arc->stmts[q] != st + q) run = false;
        if (!run) continue;
        double v = arc_value(pc, a);
        if (!(v < INFINITY)) continue;
        double rest = best_from(pc, st + arc->count, choice);
        double tot = pc->which == 2 ? (v > rest ? v : rest) : v + rest;
        if (tot < best) {
            best = tot;
            bestarc = a;
        }
    }
    pc->memo[st] = best;
    if (choice) choice[st] = bestarc;
    return best;
}

/* When fixed groups are not runs of the source order, the walk above does
 * not apply; the space is then small (only levels are free): enumerate. */
static bool space_is_runs(const OptSpace *sp) {
    for (int a = 0; a < sp->arc_count; a++)
        for (int q = 0; q < sp->arcs[a].count; q++)
            if (sp->arcs[a].stmts[q] != sp->arcs[a].stmts[0] + q) return false;
    return true;
}

static double enum_paths(PathCtx *pc, bool *covered, int *choice, int *best_choice, double acc,
                         double best) {
    const OptSpace *sp = pc->sp;
    int st = 0;
    while (st < sp->S && covered[st]) st++;
    if (st == sp->S) {
        if (acc < best) {
            memcpy(best_choice, choice, sizeof(int) * (size_t)sp->S);
            return acc;
        }
        return best;
    }
    int A = sp->arc_count;
    for (int k = 0; sp->stmt_arcs[st * (A + 1) + k] >= 0; k++) {
        int a = sp->stmt_arcs[st * (A + 1) + k];
        const OptArc *arc = &sp->arcs[a];
        bool ok = true;
        for (int q = 0; q < arc->count; q++)
            if (covered[arc->stmts[q]]) ok = false;
        if (!ok) continue;
        double v = arc_value(pc, a);
        if (!(v < INFINITY)) continue;
        double nacc = pc->which == 2 ? (v > acc ? v : acc) : acc + v;
        if (nacc >= best) continue;
        for (int q = 0; q < arc->count; q++) covered[arc->stmts[q]] = true;
        choice[st] = a;
        best = enum_paths(pc, covered, choice, best_choice, nacc, best);
        choice[st] = -1;
        for (int q = 0; q < arc->count; q++) covered[arc->stmts[q]] = false;
    }
    return best;
}

/* Best value of a partition for one configuration; *arcs (S entries,
 * indexed by first statement, -1 elsewhere) when asked. */
static double best_partition(Arena *a, const OptSpace *sp, const OptCost *row, const bool *pruned,
                             int which, int *arcs) {
    PathCtx pc = {sp, row, pruned, which, NULL};
    int S = sp->S;
    int *choice = ARENA_ARRAY(a, int, S + 1);
    for (int k = 0; k < S; k++) choice[k] = -1;
    double v;
    if (space_is_runs(sp)) {
        pc.memo = ARENA_ARRAY(a, double, S + 1);
        for (int k = 0; k <= S; k++) pc.memo[k] = NAN;
        v = best_from(&pc, 0, choice);
        if (arcs) {
            for (int k = 0; k < S; k++) arcs[k] = -1;
            int st = 0;
            while (st < S && v < INFINITY) {
                int c = choice[st];
                if (c < 0) break;
                arcs[st] = c;
                st += sp->arcs[c].count;
            }
        }
    } else {
        bool *covered = ARENA_ARRAY(a, bool, S + 1);
        int *best_choice = ARENA_ARRAY(a, int, S + 1);
        for (int k = 0; k < S; k++) best_choice[k] = -1;
        v = enum_paths(&pc, covered, choice, best_choice, 0, INFINITY);
        if (arcs) memcpy(arcs, best_choice, sizeof(int) * (size_t)S);
    }
    return v;
}

/* c dominated by d: on every arc d fits where c fits and costs no more. */
static bool dominates(const OptSpace *sp, const Kept *d, const Kept *c) {
    for (int a = 0; a < sp->arc_count; a++) {
        const OptCost *x = &c->row[a], *y = &d->row[a];
        bool xu = x->feasible && !c->pruned[a], yu = y->feasible && !d->pruned[a];
        if (!xu) continue;
        if (!yu) return false;
        if (y->latency_s > x->latency_s || y->energy_j > x->energy_j) return false;
    }
    return true;
}

/* Same statements at another level, fitting, no worse in both terms. */
static void prune_levels(OptSpace *sp, Kept *k) {
    for (int a = 0; a < sp->arc_count; a++) {
        const OptArc *x = &sp->arcs[a];
        if (!k->row[a].feasible) continue;
        for (int b = 0; b < sp->arc_count; b++) {
            if (a == b || k->pruned[b] || !k->row[b].feasible) continue;
            const OptArc *y = &sp->arcs[b];
            if (y->count != x->count || y->stmts[0] != x->stmts[0] || y->block != x->block)
                continue;
            const OptCost *ca = &k->row[a], *cb = &k->row[b];
            bool no_worse = cb->latency_s <= ca->latency_s && cb->energy_j <= ca->energy_j;
            bool tie = cb->latency_s == ca->latency_s && cb->energy_j == ca->energy_j;
            if (no_worse && (!tie || b < a)) {
                k->pruned[a] = true;
                sp->pruned_level++;
                break;
            }
        }
    }
}

/* ------------------------------------------------------------ model */

typedef struct Model {
    lprec *lp;
    int ncols, nrows;
    int *xcol;             /* [kept]: column of x_c */
    int *zcol;             /* [kept * A + a]: column of z, 0 when absent */
    int *lcol;             /* [A]: epigraph column of arc a, 0 when absent */
    int energy_row;        /* edp: the row bounding energy, 0 when none */
    double tscale, escale; /* model units: seconds and joules per unit */
    bool no_presolve;
} Model;

static double pow10_scale(double maxv) {
    if (!(maxv > 0) || !isfinite(maxv)) return 1;
    return pow(10, floor(log10(maxv))) / 1e3; /* largest coefficient ~ 1e3 */
}

static bool build_model(Arena *a, Program *p, const OptSpace *sp, Kept *kept, int nk, Objective obj,
                        Model *md) {
    int A = sp->arc_count, S = sp->S;
    const SourceManager *sm = p->sources;
    memset(md, 0, sizeof *md);
    double maxl = 0, maxe = 0;
    for (int k = 0; k < nk; k++)
        for (int x = 0; x < A; x++)
            if (kept[k].row[x].feasible && !kept[k].pruned[x]) {
                if (kept[k].row[x].latency_s > maxl) maxl = kept[k].row[x].latency_s;
                if (kept[k].row[x].energy_j > maxe) maxe = kept[k].row[x].energy_j;
            }
    md->tscale = pow10_scale(maxl);
    md->escale = pow10_scale(maxe);
    /* columns */
    md->xcol = ARENA_ARRAY(a, int, nk + 1);
    md->zcol = ARENA_ARRAY(a, int, (size_t)nk *(size_t)A + 1);
    md->lcol = ARENA_ARRAY(a, int, A + 1);
    int n = 0;
    for (int k = 0; k < nk; k++) {
        md->xcol[k] = ++n;
        for (int x = 0; x < A; x++)
            if (!kept[k].pruned[x]) md->zcol[(size_t)k * (size_t)A + (size_t)x] = ++n;
    }
    bool epi = obj != OBJ_ENERGY;
    if (epi)
        for (int x = 0; x < A; x++) md->lcol[x] = ++n;
    md->ncols = n;
    lprec *lp = make_lp(0, n);
    if (!lp) return false;
    md->lp = lp;
    set_outputfile(lp, "");
    set_verbose(lp, NEUTRAL);
    set_minim(lp);
    for (int k = 0; k < nk; k++) {
        set_binary(lp, md->xcol[k], TRUE);
        set_col_name(lp, md->xcol[k], arena_printf(a, "x_cfg%d", kept[k].cfg));
        for (int x = 0; x < A; x++) {
            int col = md->zcol[(size_t)k * (size_t)A + (size_t)x];
            if (!col) continue;
            set_binary(lp, col, TRUE);
            set_col_name(
                lp, col,
                arena_printf(a, "z_cfg%d_%s", kept[k].cfg, arc_label(a, sp, &sp->arcs[x])));
        }
    }
    if (epi)
        for (int x = 0; x < A; x++)
            set_col_name(lp, md->lcol[x], arena_printf(a, "L_%s", arc_label(a, sp, &sp->arcs[x])));
    /* objective */
    REAL *vals = ARENA_ARRAY(a, REAL, n + 1);
    int *cols = ARENA_ARRAY(a, int, n + 1);
    int c = 0;
    if (epi) {
        for (int x = 0; x < A; x++) {
            vals[c] = 1;
            cols[c++] = md->lcol[x];
        }
    } else {
        for (int k = 0; k < nk; k++)
            for (int x = 0; x < A; x++) {
                int col = md->zcol[(size_t)k * (size_t)A + (size_t)x];
                if (!col || !kept[k].row[x].feasible) continue;
                vals[c] = kept[k].row[x].energy_j / md->escale;
                cols[c++] = col;
            }
    }
    set_add_rowmode(lp, TRUE);
    if (!set_obj_fnex(lp, c, vals, cols)) return false;
    /* one configuration */
    c = 0;
    for (int k = 0; k < nk; k++) {
        vals[c] = 1;
        cols[c++] = md->xcol[k];
    }
    int nrows = 0;
    Span cs = config_span(sp->m);
    set_add_rowmode(lp, TRUE);
    if (!add_constraintex(lp, c, vals, cols, EQ, 1)) return false;
    nrows++;
    const char **names = ARENA_ARRAY(a, const char *, 1);
    names[0] = row_name(a, sm, cs, "one_configuration");
    /* row names are set after leaving row mode; collect them */
    PtrVec rn = {0};
    ptrvec_push(a, &rn, (void *)names[0]);
    /* cover rows: each statement in exactly one arc of the chosen configuration */
    for (int k = 0; k < nk; k++)
        for (int st = 0; st < S; st++) {
            c = 0;
            for (int q = 0; sp->stmt_arcs[st * (A + 1) + q] >= 0; q++) {
                int x = sp->stmt_arcs[st * (A + 1) + q];
                int col = md->zcol[(size_t)k * (size_t)A + (size_t)x];
                if (!col) continue;
                vals[c] = 1;
                cols[c++] = col;
            }
            vals[c] = -1;
            cols[c++] = md->xcol[k];
            if (!add_constraintex(lp, c, vals, cols, EQ, 0)) return false;
            nrows++;
            Span fs = sp->m->fuse.whole_hole ? sp->m->fuse.hole_span : sp->op->stmts[st].span;
            ptrvec_push(a, &rn,
                        row_name(a, sm, fs, "cover_%s_cfg%d", sp->op->stmts[st].name, kept[k].cfg));
        }
    /* capacity rows: an arc that overflows a memory cannot be chosen */
    for (int k = 0; k < nk; k++)
        for (int x = 0; x < A; x++) {
            int col = md->zcol[(size_t)k * (size_t)A + (size_t)x];
            const OptCost *oc = &kept[k].row[x];
            if (!col || oc->feasible) continue;
            const char *mem = oc->memory >= 0 ? sp->arch->memories[oc->memory].name : "unit";
            vals[0] = oc->memory >= 0 ? oc->need / 1048576.0 : 1;
            cols[0] = col;
            double cap = oc->memory >= 0 ? oc->capacity / 1048576.0 : 0;
            if (!add_constraintex(lp, 1, vals, cols, LE, cap)) return false;
            nrows++;
            ptrvec_push(a, &rn,
                        row_name(a, sm, oc->excess_span, "capacity_%s_cfg%d_%s", mem, kept[k].cfg,
                                 arc_label(a, sp, &sp->arcs[x])));
        }
    /* epigraph rows: L_a >= each term of the arc's group, and its latency */
    if (epi)
        for (int x = 0; x < A; x++) {
            static const char *const term_names[] = {"compute", "memory", "network", "latency"};
            for (int term = 0; term < 4; term++) {
                c = 0;
                vals[c] = 1;
                cols[c++] = md->lcol[x];
                for (int k = 0; k < nk; k++) {
                    int col = md->zcol[(size_t)k * (size_t)A + (size_t)x];
                    const OptCost *oc = &kept[k].row[x];
                    if (!col || !oc->feasible) continue;
                    double v = term == 0   ? oc->compute_s + oc->fill_drain_s
                               : term == 1 ? oc->memory_s + oc->fill_drain_s
                               : term == 2 ? oc->network_s + oc->fill_drain_s
                                           : oc->latency_s;
                    if (v > oc->latency_s) v = oc->latency_s; /* overlap none: the sum */
                    if (!(v > 0)) continue;
                    vals[c] = -v / md->tscale;
                    cols[c++] = col;
                }
                if (c == 1) continue;
                if (!add_constraintex(lp, c, vals, cols, GE, 0)) return false;
                nrows++;
                ptrvec_push(a, &rn,
                            row_name(a, sm, arc_span(sp, &sp->arcs[x]), "%s_%s", term_names[term],
                                     arc_label(a, sp, &sp->arcs[x])));
            }
        }
    if (obj == OBJ_EDP) {
        c = 0;
        for (int k = 0; k < nk; k++)
            for (int x = 0; x < A; x++) {
                int col = md->zcol[(size_t)k * (size_t)A + (size_t)x];
                if (!col || !kept[k].row[x].feasible) continue;
                vals[c] = kept[k].row[x].energy_j / md->escale;
                cols[c++] = col;
            }
        if (!add_constraintex(lp, c, vals, cols, LE, 1e30)) return false;
        nrows++;
        md->energy_row = nrows;
        Span os = sp->m->decl ? sp->m->decl->span : SPAN_NONE;
        ptrvec_push(a, &rn, row_name(a, sm, os, "energy_bound_edp"));
    }
    set_add_rowmode(lp, FALSE);
    for (int r = 0; r < rn.count; r++) set_row_name(lp, r + 1, (char *)rn.items[r]);
    md->nrows = nrows;
    return true;
}

typedef struct SolveOut {
    int status; /* lp_solve's */
    bool have;  /* a feasible solution */
    int kept;   /* the chosen configuration (index into kept) */
    int *arcs;  /* chosen arcs */
    int arc_count;
    double lat, en; /* per instance, from the coefficients */
    double bound;   /* objective bound in model units */
    double value;   /* objective in model units */
} SolveOut;

/* known: the optimum proven by the shortest paths (model units), or
 * INFINITY; branch and bound stops as soon as it reaches it. */
static void solve_model(Arena *a, const OptSpace *sp, Kept *kept, int nk, Model *md, Progress *pg,
                        SolveOut *out, double known) {
    lprec *lp = md->lp;
    memset(out, 0, sizeof *out);
    set_mip_gap(lp, TRUE, 1e-11);
    set_mip_gap(lp, FALSE, 1e-11);
    set_break_at_value(lp, known < INFINITY ? known * (1 + 1e-9) + 1e-12 : -1e30);
    /* the cover rows of configurations are partly linearly dependent;
     * presolve removes them and branch and bound then needs few nodes */
    if (!md->no_presolve)
        set_presolve(lp, PRESOLVE_ROWS | PRESOLVE_COLS | PRESOLVE_LINDEP, get_presolveloops(lp));
    put_abortfunc(lp, lp_abort, pg);
    if (pg->deadline > 0) {
        double left = pg->deadline - opt_now();
        set_timeout(lp, left < 1 ? 1 : (long)ceil(left));
    }
    int st = solve(lp);
    out->status = st;
    out->have = (st == OPTIMAL || st == SUBOPTIMAL || st == PRESOLVED ||
                 ((st == USERABORT || st == TIMEOUT) && lp->solutioncount > 0));
    if (!out->have) return;
    int A = sp->arc_count;
    /* values by original column (presolve may have removed some) */
    REAL *var = ARENA_ARRAY(a, REAL, md->ncols + 1);
    int orig_rows = get_Norig_rows(lp);
    for (int c = 1; c <= md->ncols; c++) var[c - 1] = get_var_primalresult(lp, orig_rows + c);
    out->value = get_objective(lp);
    out->bound = lp->real_solution;
    if (known < INFINITY && out->value <= known * (1 + 1e-9) + 1e-12) {
        out->status = OPTIMAL; /* reached the proven optimum */
        if (known > out->bound) out->bound = known;
    }
    out->kept = -1;
    for (int k = 0; k < nk; k++)
        if (var[md->xcol[k] - 1] > 0.5) out->kept = k;
    if (out->kept < 0) {
        out->have = false;
        return;
    }
    out->arcs = ARENA_ARRAY(a, int, sp->S + 1);
    int k = out->kept;
    for (int x = 0; x < A; x++) {
        int col = md->zcol[(size_t)k * (size_t)A + (size_t)x];
        if (col && var[col - 1] > 0.5) {
            out->arcs[out->arc_count++] = x;
            out->lat += kept[k].row[x].latency_s;
            out->en += kept[k].row[x].energy_j;
        }
    }
}

/* Non-dominated (latency, energy) pairs of the partitions of one
 * configuration.  Runs spaces: labels per position, extended arc by arc
 * (bi-objective shortest paths on a DAG); otherwise every partition. */
typedef struct Labels {
    double *l, *e;
    int n, cap;
} Labels;

static void label_add(Arena *a, Labels *x, double l, double e) {
    for (int i = 0; i < x->n; i++)
        if (x->l[i] <= l && x->e[i] <= e) return; /* dominated */
    int w = 0;
    for (int i = 0; i < x->n; i++)
        if (!(l <= x->l[i] && e <= x->e[i])) {
            x->l[w] = x->l[i];
            x->e[w] = x->e[i];
            w++;
        }
    x->n = w;
    if (x->n == x->cap) {
        int nc = x->cap ? x->cap * 2 : 8;
        x->l = arena_realloc(a, x->l, sizeof(double) * (size_t)x->cap, sizeof(double) * (size_t)nc);
        x->e = arena_realloc(a, x->e, sizeof(double) * (size_t)x->cap, sizeof(double) * (size_t)nc);
        x->cap = nc;
    }
    x->l[x->n] = l;
    x->e[x->n] = e;
    x->n++;
}

static void pareto_enum(Arena *a, const OptSpace *sp, const Kept *k, bool *covered, double l,
                        double e, Labels *out) {
    int st = 0;
    while (st < sp->S && covered[st]) st++;
    if (st == sp->S) {
        label_add(a, out, l, e);
        return;
    }
    int A = sp->arc_count;
    for (int q = 0; sp->stmt_arcs[st * (A + 1) + q] >= 0; q++) {
        int x = sp->stmt_arcs[st * (A + 1) + q];
        const OptArc *arc = &sp->arcs[x];
        if (!k->row[x].feasible || k->pruned[x]) continue;
        bool ok = true;
        for (int r = 0; r < arc->count; r++)
            if (covered[arc->stmts[r]]) ok = false;
        if (!ok) continue;
        for (int r = 0; r < arc->count; r++) covered[arc->stmts[r]] = true;
        pareto_enum(a, sp, k, covered, l + k->row[x].latency_s, e + k->row[x].energy_j, out);
        for (int r = 0; r < arc->count; r++) covered[arc->stmts[r]] = false;
    }
}

static void pareto_front(Arena *a, const OptSpace *sp, const Kept *k, double **fl, double **fe,
                         int *n) {
    int S = sp->S, A = sp->arc_count;
    Labels res = {0};
    if (space_is_runs(sp)) {
        Labels *at = ARENA_ARRAY(a, Labels, S + 1);
        label_add(a, &at[0], 0, 0);
        for (int i = 0; i < S; i++)
            for (int x = 0; x < A; x++) {
                const OptArc *arc = &sp->arcs[x];
                if (arc->stmts[0] != i || !k->row[x].feasible || k->pruned[x]) continue;
                int j = i + arc->count;
                for (int q = 0; q < at[i].n; q++)
                    label_add(a, &at[j], at[i].l[q] + k->row[x].latency_s,
                              at[i].e[q] + k->row[x].energy_j);
            }
        res = at[S];
    } else {
        bool *covered = ARENA_ARRAY(a, bool, S + 1);
        pareto_enum(a, sp, k, covered, 0, 0, &res);
    }
    *fl = res.l;
    *fe = res.e;
    *n = res.n;
}

/* The partition of (L*, E*) when lp_solve failed: the least-latency path
 * within energy E* of the configuration that has that point. */
static void dp_edp_solution(Arena *a, const OptSpace *sp, Kept *kept, int nk, double bl, double be,
                            SolveOut *out) {
    memset(out, 0, sizeof *out);
    for (int k = 0; k < nk && !out->have; k++) {
        int *choice = ARENA_ARRAY(a, int, sp->S + 1);
        bool *covered = ARENA_ARRAY(a, bool, sp->S + 1);
        int *arcs = ARENA_ARRAY(a, int, sp->S + 1);
        /* depth-first over partitions: the first with (L, E) = (L*, E*) */
        int depth = 0;
        (void)depth;
        int A = sp->arc_count;
        /* iterative search with an explicit stack of choices */
        int *pos = ARENA_ARRAY(a, int, sp->S + 1);
        int *at = ARENA_ARRAY(a, int, sp->S + 1);
        double *ls = ARENA_ARRAY(a, double, sp->S + 2), *es = ARENA_ARRAY(a, double, sp->S + 2);
        int top = 0;
        at[0] = 0;
        pos[0] = -1;
        while (top >= 0) {
            int st = 0;
            while (st < sp->S && covered[st]) st++;
            if (st == sp->S) {
                if (fabs(ls[top] - bl) <= 1e-9 * bl && fabs(es[top] - be) <= 1e-9 * be) {
                    out->have = true;
                    out->status = OPTIMAL;
                    out->kept = k;
                    out->arcs = ARENA_ARRAY(a, int, sp->S + 1);
                    for (int q = 0; q < top; q++) out->arcs[out->arc_count++] = choice[q];
                    out->lat = ls[top];
                    out->en = es[top];
                    break;
                }
                top--;
                if (top < 0) break;
                for (int r = 0; r < sp->arcs[choice[top]].count; r++)
                    covered[sp->arcs[choice[top]].stmts[r]] = false;
                continue;
            }
            at[top] = st;
            int q = ++pos[top];
            int x = sp->stmt_arcs[st * (A + 1) + q];
            if (x < 0) {
                top--;
                if (top < 0) break;
                for (int r = 0; r < sp->arcs[choice[top]].count; r++)
                    covered[sp->arcs[choice[top]].stmts[r]] = false;
                continue;
            }
            const OptArc *arc = &sp->arcs[x];
            bool ok = kept[k].row[x].feasible && !kept[k].pruned[x];
            for (int r = 0; r < arc->count && ok; r++)
                if (covered[arc->stmts[r]]) ok = false;
            if (!ok) continue;
            choice[top] = x;
            for (int r = 0; r < arc->count; r++) covered[arc->stmts[r]] = true;
            ls[top + 1] = ls[top] + kept[k].row[x].latency_s;
            es[top + 1] = es[top] + kept[k].row[x].energy_j;
            top++;
            pos[top] = -1;
        }
        (void)arcs;
    }
}

/* The best partition of the best configuration by shortest paths. */
static void dp_solution(Arena *a, const OptSpace *sp, Kept *kept, int nk, Objective obj,
                        SolveOut *out) {
    int which = obj == OBJ_ENERGY ? 1 : 0;
    double best = INFINITY;
    int *arcs = ARENA_ARRAY(a, int, sp->S + 1);
    memset(out, 0, sizeof *out);
    for (int k = 0; k < nk; k++) {
        double v = best_partition(a, sp, kept[k].row, kept[k].pruned, which, arcs);
        if (!(v < best)) continue;
        best = v;
        out->have = true;
        out->status = OPTIMAL;
        out->kept = k;
        out->arcs = ARENA_ARRAY(a, int, sp->S + 1);
        out->arc_count = 0;
        out->lat = out->en = 0;
        for (int st = 0; st < sp->S; st++) {
            if (arcs[st] < 0) continue;
            out->arcs[out->arc_count++] = arcs[st];
            out->lat += kept[k].row[arcs[st]].latency_s;
            out->en += kept[k].row[arcs[st]].energy_j;
        }
    }
}

/* ------------------------------------------------ the whole search */

typedef struct Search {
    Arena *arena;
    OptSpace *sp;
    Kept *kept;
    int nk;
    bool any_feasible;
    /* the configuration and partition that come closest to fitting */
    double least_ratio;
    int least_cfg;
    OptCost least_cost;
    bool timed_out;
    long memo_hits, implied, comp_hits;
} Search;

/* Bound pruning of arcs (runs spaces): the best partition through arc a
 * costs at least the best cover of the statements before it, plus a, plus
 * the best cover after it.  An arc whose best partition cannot come within
 * the threshold is no candidate.  An arc that does not fit but would be
 * within the threshold stays, fixed to 0 by its capacity row. */
static void prune_arcs_by_bound(Arena *t, OptSpace *sp, Kept *k, Objective obj, double threshold) {
    if (!space_is_runs(sp) || !(threshold < INFINITY)) return;
    int S = sp->S, A = sp->arc_count;
    double *pl = ARENA_ARRAY(t, double, S + 1), *pe = ARENA_ARRAY(t, double, S + 1);
    double *sl = ARENA_ARRAY(t, double, S + 1), *se = ARENA_ARRAY(t, double, S + 1);
    for (int i = 0; i <= S; i++) pl[i] = pe[i] = sl[i] = se[i] = INFINITY;
    pl[0] = pe[0] = sl[S] = se[S] = 0;
    for (int j = 1; j <= S; j++)
        for (int a = 0; a < A; a++) {
            const OptArc *arc = &sp->arcs[a];
            int i = arc->stmts[0];
            if (i + arc->count != j || !k->row[a].feasible || k->pruned[a]) continue;
            if (pl[i] + k->row[a].latency_s < pl[j]) pl[j] = pl[i] + k->row[a].latency_s;
            if (pe[i] + k->row[a].energy_j < pe[j]) pe[j] = pe[i] + k->row[a].energy_j;
        }
    for (int i = S - 1; i >= 0; i--)
        for (int a = 0; a < A; a++) {
            const OptArc *arc = &sp->arcs[a];
            if (arc->stmts[0] != i || !k->row[a].feasible || k->pruned[a]) continue;
            int j = i + arc->count;
            if (sl[j] + k->row[a].latency_s < sl[i]) sl[i] = sl[j] + k->row[a].latency_s;
            if (se[j] + k->row[a].energy_j < se[i]) se[i] = se[j] + k->row[a].energy_j;
        }
    for (int a = 0; a < A; a++) {
        if (k->pruned[a]) continue;
        const OptArc *arc = &sp->arcs[a];
        int i = arc->stmts[0], j = i + arc->count;
        double l = pl[i] + k->row[a].latency_s + sl[j];
        double e = pe[i] + k->row[a].energy_j + se[j];
        double v = obj == OBJ_ENERGY ? e : obj == OBJ_EDP ? l * e : l;
        if (!(v <= threshold)) {
            k->pruned[a] = true;
            sp->pruned_arcs++;
        }
    }
}

/* Configurations are costed in batches by two threads (the lowering is
 * pure); each batch is then pruned in order, so the result does not depend
 * on the threads. */
#define OPT_BATCH 64
#define OPT_THREADS 2

typedef struct Worker {
    const OptSpace *sp;
    OptEvalCtx ctx;
    int from, to;  /* configurations */
    int base;      /* first configuration of the batch */
    OptCost *rows; /* batch rows, [k * A] */
    bool *cut;     /* batch: cut by the bound */
    Progress *pg;  /* the main thread's worker reports progress */
    long total;
} Worker;

static void *worker_run(void *arg) {
    Worker *w = arg;
    int A = w->sp->arc_count;
    for (int c = w->from; c < w->to; c++) {
        OptCost *row = w->rows + (size_t)(c - w->base) * (size_t)A;
        memset(row, 0, sizeof(OptCost) * (size_t)A);
        w->cut[c - w->base] = !opt_evaluate_config(w->sp, &w->ctx, c, row);
        if (w->pg) progress_eval(w->pg, c, w->total);
    }
    return NULL;
}

static void search_space(Search *se, Objective obj, double deadline, Progress *pg) {
    OptSpace *sp = se->sp;
    Arena *a = se->arena;
    int A = sp->arc_count;
    se->kept = ARENA_ARRAY(a, Kept, sp->cfg_count + 1);
    se->nk = 0;
    se->least_ratio = INFINITY;
    se->least_cfg = -1;
    double incumbent = INFINITY;
    OptCost *batch = ARENA_ARRAY(a, OptCost, (size_t)OPT_BATCH * (size_t)A + 1);
    bool *pruned = NULL;
    Arena tmp = {0};
    Worker workers[OPT_THREADS];
    int nthreads = sp->cfg_count >= 2 * OPT_THREADS ? OPT_THREADS : 1;
    bool *cut = ARENA_ARRAY(a, bool, OPT_BATCH + 1);
    for (int t = 0; t < nthreads; t++) {
        workers[t].sp = sp;
        opt_eval_ctx_init(&workers[t].ctx, sp);
        workers[t].ctx.objective = obj;
        workers[t].rows = batch;
        workers[t].cut = cut;
        workers[t].pg = t == 0 ? pg : NULL;
        workers[t].total = sp->cfg_count;
    }
    for (int c0 = 0; c0 < sp->cfg_count; c0 += OPT_BATCH) {
        if (deadline > 0 && opt_now() > deadline) {
            se->timed_out = true;
            break;
        }
        progress_eval(pg, c0, sp->cfg_count);
        int c1 = c0 + OPT_BATCH < sp->cfg_count ? c0 + OPT_BATCH : sp->cfg_count;
        int per = (c1 - c0 + nthreads - 1) / nthreads;
        pthread_t tid[OPT_THREADS];
        bool started[OPT_THREADS] = {false};
        for (int t = 0; t < nthreads; t++) {
            workers[t].ctx.threshold = incumbent * (1 + 1e-9); /* cannot beat it */
            workers[t].base = c0;
            workers[t].from = c0 + t * per < c1 ? c0 + t * per : c1;
            workers[t].to = c0 + (t + 1) * per < c1 ? c0 + (t + 1) * per : c1;
            if (t > 0 && pthread_create(&tid[t], NULL, worker_run, &workers[t]) == 0)
                started[t] = true;
        }
        worker_run(&workers[0]);
        for (int t = 1; t < nthreads; t++) {
            if (started[t])
                pthread_join(tid[t], NULL);
            else
                worker_run(&workers[t]);
        }
        for (int c = c0; c < c1; c++) {
            OptCost *row = batch + (size_t)(c - c0) * (size_t)A;
            if (cut[c - c0]) {
                sp->pruned_bound++;
                continue;
            }
            if (!pruned) pruned = ARENA_ARRAY(a, bool, A + 1);
            memset(pruned, 0, sizeof(bool) * (size_t)A);
            Kept k = {c, row, pruned, 0, 0, 0, 0, false};
            prune_levels(sp, &k);
            arena_free_all(&tmp);
            k.best_lat = best_partition(&tmp, sp, row, pruned, 0, NULL);
            if (!(k.best_lat < INFINITY)) {
                sp->pruned_capacity++;
                double r = best_partition(&tmp, sp, row, NULL, 2, NULL);
                if (r < se->least_ratio) {
                    se->least_ratio = r;
                    se->least_cfg = c;
                    /* the worst arc of that partition, for the message */
                    int *arcs = ARENA_ARRAY(&tmp, int, sp->S + 1);
                    best_partition(&tmp, sp, row, NULL, 2, arcs);
                    double worst = -1;
                    for (int st = 0; st < sp->S; st++) {
                        if (arcs[st] < 0) continue;
                        const OptCost *oc = &row[arcs[st]];
                        double rr = oc->feasible ? 0 : oc->need / oc->capacity;
                        if (rr > worst) {
                            worst = rr;
                            se->least_cost = *oc;
                        }
                    }
                }
                continue;
            }
            se->any_feasible = true;
            k.best_en = best_partition(&tmp, sp, row, pruned, 1, NULL);
            if (obj == OBJ_EDP) {
                /* lower bound: min latency x min energy; achievable: the two
                 * extreme partitions */
                int *pl = ARENA_ARRAY(&tmp, int, sp->S + 1),
                    *pe = ARENA_ARRAY(&tmp, int, sp->S + 1);
                best_partition(&tmp, sp, row, pruned, 0, pl);
                best_partition(&tmp, sp, row, pruned, 1, pe);
                double l1 = 0, e1 = 0, l2 = 0, e2 = 0;
                for (int st = 0; st < sp->S; st++) {
                    if (pl[st] >= 0) {
                        l1 += row[pl[st]].latency_s;
                        e1 += row[pl[st]].energy_j;
                    }
                    if (pe[st] >= 0) {
                        l2 += row[pe[st]].latency_s;
                        e2 += row[pe[st]].energy_j;
                    }
                }
                k.bound = k.best_lat * k.best_en;
                k.ub = fmin(l1 * e1, l2 * e2);
            } else {
                k.bound = k.ub = obj == OBJ_ENERGY ? k.best_en : k.best_lat;
            }
            if (k.bound > incumbent * (1 + OPT_BOUND_WINDOW)) {
                sp->pruned_bound++;
                continue;
            }
            prune_arcs_by_bound(&tmp, sp, &k, obj, fmin(incumbent, k.ub) * (1 + OPT_BOUND_WINDOW));
            /* dominance against the best kept configurations */
            bool dom = false;
            int peers = 0;
            for (int j = se->nk - 1; j >= 0 && peers < OPT_DOMINANCE_PEERS; j--) {
                if (se->kept[j].dropped) continue;
                peers++;
                if (dominates(sp, &se->kept[j], &k)) {
                    dom = true;
                    break;
                }
            }
            if (dom) {
                sp->pruned_dominance++;
                continue;
            }
            peers = 0;
            for (int j = se->nk - 1; j >= 0 && peers < OPT_DOMINANCE_PEERS; j--) {
                if (se->kept[j].dropped) continue;
                peers++;
                if (dominates(sp, &k, &se->kept[j])) {
                    se->kept[j].dropped = true;
                    sp->pruned_dominance++;
                }
            }
            if (k.ub < incumbent) incumbent = k.ub;
            k.row = ARENA_ARRAY(a, OptCost, A + 1);
            memcpy(k.row, row, sizeof(OptCost) * (size_t)A);
            se->kept[se->nk++] = k;
            pruned = NULL; /* kept: the next configuration gets fresh flags */
        }
    }
    for (int t = 0; t < nthreads; t++) {
        sp->evaluations += workers[t].ctx.lowerings;
        se->memo_hits += workers[t].ctx.memo_hits;
        se->implied += workers[t].ctx.implied;
        se->comp_hits += workers[t].ctx.comp_hits;
        opt_eval_ctx_free(&workers[t].ctx);
    }
    arena_free_all(&tmp);
    /* the final bound filter, now that the incumbent is known */
    int w = 0;
    for (int j = 0; j < se->nk; j++) {
        Kept *k = &se->kept[j];
        if (k->dropped) continue;
        if (k->bound > incumbent * (1 + OPT_BOUND_WINDOW)) {
            sp->pruned_bound++;
            continue;
        }
        se->kept[w++] = *k;
    }
    se->nk = w;
    /* keep the model within its column budget: drop the configurations
     * with the worst bounds (the best is always kept, so this is sound) */
    long cols_per = A + 1;
    if ((long)se->nk * cols_per > OPT_COLUMN_BUDGET) {
        long keep = OPT_COLUMN_BUDGET / cols_per;
        if (keep < 1) keep = 1;
        for (int i = 1; i < se->nk; i++) { /* insertion sort by bound */
            Kept t = se->kept[i];
            int j = i - 1;
            while (j >= 0 && se->kept[j].bound > t.bound) {
                se->kept[j + 1] = se->kept[j];
                j--;
            }
            se->kept[j + 1] = t;
        }
        sp->pruned_bound += se->nk - keep;
        se->nk = (int)keep;
    }
}

/* --------------------------------------------- explaining infeasibility */

/* A copy of m with the decisions not in `keep` turned into holes. */
static IrMapping *relaxed_copy(Arena *a, const IrMapping *m, const OptDecision *dec, int nd,
                               const bool *keep) {
    IrMapping *r = ARENA_NEW(a, IrMapping);
    *r = *m;
    int S = m->op->stmt_count, D = m->arch->dim_count, I = m->op->index_count;
    int L = m->arch->level_count;
    r->tile.size = ARENA_ARRAY(a, int64_t, L * I + 1);
    if (m->tile.size)
        memcpy(r->tile.size, m->tile.size, sizeof(int64_t) * (size_t)(L * I));
    else
        for (int k = 0; k < L * I; k++) r->tile.size[k] = IR_UNSET;
    r->spatial.split = ARENA_ARRAY(a, int, S *D + 1);
    if (m->spatial.split)
        memcpy(r->spatial.split, m->spatial.split, sizeof(int) * (size_t)(S * D));
    else
        for (int k = 0; k < S * D; k++) r->spatial.split[k] = IR_UNSET;
    r->fuse.group = ARENA_ARRAY(a, int, S + 1);
    memcpy(r->fuse.group, m->fuse.group, sizeof(int) * (size_t)S);
    r->fuse.level = ARENA_ARRAY(a, int, S + 1);
    if (m->fuse.level) memcpy(r->fuse.level, m->fuse.level, sizeof(int) * (size_t)S);
    for (int d = 0; d < nd; d++) {
        if (keep[d]) continue;
        const OptDecision *x = &dec[d];
        switch (x->kind) {
        case OD_TILE: r->tile.size[x->level * I + x->index] = IR_HOLE; break;
        case OD_SPLIT:
            for (int k = 0; k < S * D; k++) {
                Span s = m->spatial.split_span[k];
                if (s.file == x->span.file && s.start == x->span.start && s.end == x->span.end)
                    r->spatial.split[k] = IR_HOLE;
            }
            break;
        case OD_FUSE:
            for (int st = 0; st < S; st++)
                if (r->fuse.group[st] == x->group) r->fuse.group[st] = IR_HOLE;
            break;
        case OD_FUSE_LEVEL: r->fuse.level[x->group] = IR_HOLE; break;
        }
    }
    r->hole_count = 1;
    return r;
}

static bool space_feasible(const IrMapping *m, double deadline) {
    Arena a = {0};
    OptSpace *sp = opt_space_build(&a, m, true, deadline, OPT_CONFIG_LIMIT);
    bool ok = false;
    OptCost *row = ARENA_ARRAY(&a, OptCost, sp->arc_count + 1);
    OptEvalCtx ctx;
    opt_eval_ctx_init(&ctx, sp);
    for (int c = 0; c < sp->cfg_count && !ok; c++) {
        if (deadline > 0 && opt_now() > deadline) break;
        memset(row, 0, sizeof(OptCost) * (size_t)sp->arc_count);
        opt_evaluate_config(sp, &ctx, c, row);
        Arena t = {0};
        ok = best_partition(&t, sp, row, NULL, 0, NULL) < INFINITY;
        arena_free_all(&t);
    }
    opt_eval_ctx_free(&ctx);
    arena_free_all(&a);
    return ok;
}

static const char *bytes_text(Arena *a, double b) {
    return unit_format(a, b, (UnitDim){BU_BYTE, BU_NONE});
}

static const char *decision_text(Arena *a, const IrMapping *m, const OptDecision *d) {
    const IrOp *op = m->op;
    switch (d->kind) {
    case OD_TILE:
        return arena_printf(a, "tile %s %lld at %s", op->indices[d->index].name,
                            (long long)m->tile.size[d->level * op->index_count + d->index],
                            m->arch->levels[d->level].name);
    case OD_SPLIT: return "this split";
    case OD_FUSE: return "this fusion group";
    case OD_FUSE_LEVEL:
        return arena_printf(a, "the fusion level %s",
                            m->arch->levels[m->fuse.level[d->group]].name);
    }
    return "";
}

static void explain_infeasible(Program *p, IrMapping *m, Search *se, double deadline) {
    Arena *a = p->arena;
    int S = m->op->stmt_count, D = m->arch->dim_count, I = m->op->index_count;
    int L = m->arch->level_count;
    /* the user's decisions */
    OptDecision *dec = ARENA_ARRAY(a, OptDecision, L * I + S * D + 2 * S + 1);
    int nd = 0;
    for (int l = 0; l < L && m->tile.size; l++)
        for (int i = 0; i < I; i++)
            if (m->tile.size[l * I + i] >= 1)
                dec[nd++] = (OptDecision){OD_TILE, l, i, -1, m->tile.span[l * I + i]};
    if (m->spatial.split && !m->spatial.whole_hole)
        for (int k = 0; k < S * D; k++) {
            if (m->spatial.split[k] < 0) continue;
            Span s = m->spatial.split_span[k];
            bool seen = false;
            for (int j = 0; j < nd; j++)
                if (dec[j].kind == OD_SPLIT && dec[j].span.file == s.file &&
                    dec[j].span.start == s.start && dec[j].span.end == s.end)
                    seen = true;
            if (!seen) dec[nd++] = (OptDecision){OD_SPLIT, -1, -1, -1, s};
        }
    for (int g = 0; g < m->fuse.group_count; g++) {
        int n = 0;
        for (int st = 0; st < S; st++) n += m->fuse.group[st] == g;
        bool line = m->fuse.span && n > 0 && !(n == 1 && m->fuse.level[g] == IR_UNSET);
        if (!line) continue;
        if (n > 1) dec[nd++] = (OptDecision){OD_FUSE, -1, -1, g, m->fuse.span[g]};
        if (m->fuse.level[g] >= 0)
            dec[nd++] = (OptDecision){OD_FUSE_LEVEL, -1, -1, g, m->fuse.span[g]};
    }
    bool *keep = ARENA_ARRAY(a, bool, nd + 1);
    for (int d = 0; d < nd; d++) keep[d] = false;
    bool arch_alone = !space_feasible(relaxed_copy(a, m, dec, nd, keep), deadline);
    for (int d = 0; d < nd; d++) keep[d] = true;
    if (!arch_alone)
        /* deletion filter: drop every decision whose removal keeps the
         * space infeasible; what stays is a smallest conflicting set */
        for (int d = 0; d < nd; d++) {
            keep[d] = false;
            if (space_feasible(relaxed_copy(a, m, dec, nd, keep), deadline)) keep[d] = true;
        }
    const OptCost *lc = &se->least_cost;
    const char *mem = lc->memory >= 0 ? m->arch->memories[lc->memory].name : "a memory";
    const char *need = bytes_text(a, lc->need), *has = bytes_text(a, lc->capacity);
    int first = -1, count = 0;
    for (int d = 0; d < nd; d++)
        if (keep[d] && !arch_alone) {
            if (first < 0) first = d;
            count++;
        }
    Span where = first >= 0 ? dec[first].span : (m->decl ? m->decl->span : SPAN_NONE);
    Diag *g;
    if (arch_alone || first < 0) {
        g = diag_error(p->diags, where, "E0370",
                       "no mapping of `%s` fits `%s`: %s would need %s; it has %s", m->name,
                       m->arch->name, mem, need, has);
        diag_note(g, p->diags,
                  "even with every tile, split and fusion decision left to the "
                  "optimizer, some group overflows %s",
                  mem);
    } else {
        g = diag_error(p->diags, where, "E0370",
                       "no mapping fits with %s: %s would need %s; it has %s",
                       decision_text(a, m, &dec[first]), mem, need, has);
        for (int d = first + 1; d < nd; d++)
            if (keep[d])
                diag_label(g, p->diags, dec[d].span, "%s conflicts with it",
                           decision_text(a, m, &dec[d]));
        diag_note(g, p->diags,
                  "%d decision%s of this mapping conflict%s: relaxing any one of them (a hole "
                  "`?` lets the optimizer choose) makes the space feasible",
                  count, count == 1 ? "" : "s", count == 1 ? "s" : "");
    }
    if (lc->memory >= 0) {
        const IrMemory *mm = &m->arch->memories[lc->memory];
        diag_label(g, p->diags, mm->span, "%s holds %s per instance", mm->name, has);
        diag_help(g, p->diags, "the mapping that comes closest needs %s at %s: %.2fx its capacity",
                  need, mm->name, lc->capacity > 0 ? lc->need / lc->capacity : 0);
    }
}

/* ------------------------------------------------------ entry point */

/* Complete mappings of the space: configurations x partitions. */
static double count_partitions(const OptSpace *sp, bool *covered) {
    int st = 0;
    while (st < sp->S && covered[st]) st++;
    if (st == sp->S) return 1;
    double n = 0;
    int A = sp->arc_count;
    for (int k = 0; sp->stmt_arcs[st * (A + 1) + k] >= 0; k++) {
        const OptArc *a = &sp->arcs[sp->stmt_arcs[st * (A + 1) + k]];
        bool ok = true;
        for (int q = 0; q < a->count; q++)
            if (covered[a->stmts[q]]) ok = false;
        if (!ok) continue;
        for (int q = 0; q < a->count; q++) covered[a->stmts[q]] = true;
        n += count_partitions(sp, covered);
        for (int q = 0; q < a->count; q++) covered[a->stmts[q]] = false;
    }
    return n;
}

static double space_size(Arena *a, const OptSpace *sp) {
    if (space_is_runs(sp)) { /* paths over positions */
        double *ways = ARENA_ARRAY(a, double, sp->S + 1);
        ways[sp->S] = 1;
        for (int i = sp->S - 1; i >= 0; i--)
            for (int x = 0; x < sp->arc_count; x++)
                if (sp->arcs[x].stmts[0] == i) ways[i] += ways[i + sp->arcs[x].count];
        return sp->enumerated * ways[0];
    }
    bool *covered = ARENA_ARRAY(a, bool, sp->S + 1);
    return sp->enumerated * count_partitions(sp, covered);
}

static void record(SolverReport *r, const OptSpace *sp, const Model *md, int nk) {
    long cand = 0;
    (void)nk;
    cand = (long)sp->enumerated * sp->arc_count;
    r->candidates = cand;
    r->rows = md ? md->nrows : 0;
    r->columns = md ? md->ncols : 0;
}

/* Solves the model; on numerical trouble after presolve (which changed the
 * model) builds a fresh one and solves it without presolve.  energy_cap
 * (joules, NAN for none) bounds the energy row first: the EDP search
 * minimises latency at the frontier point's energy. */
static void solve_with_retry(Arena *a, Program *p, const OptSpace *sp, Kept *kept, int nk,
                             Objective obj, Model *md, Progress *pg, SolveOut *best, double known,
                             double energy_cap) {
    for (int attempt = 0; attempt < 2; attempt++) {
        if (attempt > 0) {
            delete_lp(md->lp);
            if (!build_model(a, p, sp, kept, nk, obj, md)) {
                if (md->lp) delete_lp(md->lp);
                md->lp = NULL;
            }
            md->no_presolve = true;
            if (!md->lp) return;
        }
        if (!isnan(energy_cap))
            set_rh(md->lp, md->energy_row, energy_cap / md->escale * (1 + 1e-9) + 1e-12);
        solve_model(a, sp, kept, nk, md, pg, best, known);
        if (best->have || (best->status != NUMFAILURE && best->status != ACCURACYERROR)) return;
    }
}

bool optimize_mapping(Program *p, IrMapping *m, const CompileOptions *opts, SolverReport *report) {
    memset(report, 0, sizeof *report);
    if (m->hole_count == 0) {
        report->status = SOLVER_NOT_NEEDED;
        return true;
    }
    /* `tile L: ? 64` (an index hole) is not searched: say so */
    if (m->decl) {
        const MappingDecl *md = &m->decl->u.mapping;
        bool found = false;
        for (int i = 0; i < md->item_count; i++) {
            const MapItem *it = md->items[i];
            if (it->kind != MI_TILE) continue;
            for (int k = 0; k < it->tile_count; k++)
                if (it->tiles[k].index.hole) {
                    Diag *d = diag_error(p->diags, it->tiles[k].span, "E0375",
                                         "the optimizer does not choose the index of a tile "
                                         "entry");
                    diag_help(d, p->diags,
                              "name the index and leave its size to the optimizer: "
                              "`%s ?`",
                              m->op->index_count > 0 ? m->op->indices[0].name : "i");
                    found = true;
                }
        }
        if (found) {
            report->status = SOLVER_FAILED;
            return false;
        }
    }
    if (opts && opts->exhaustive) return opt_exhaustive(p, m, opts, report);
    double t0 = opt_now();
    Objective obj = opts && opts->objective_given ? opts->objective : m->objective;
    double deadline = opts && opts->time_limit_s > 0 ? t0 + opts->time_limit_s : 0;
    Progress pg = {isatty(2) != 0, t0, 0, m->name, 1, "s", deadline};
    Arena arena = {0};
    OptSpace *sp = opt_space_build(&arena, m, true, deadline, OPT_CONFIG_LIMIT);
    report->method = obj == OBJ_EDP ? "milp, edp frontier" : "milp";
    if (sp->truncated && !(deadline > 0 && opt_now() > deadline)) {
        diag_error(p->diags, config_span(m), "E0373",
                   "the space of mapping %s has more than %ld configurations of splits, tiles "
                   "and orders",
                   m->name, OPT_CONFIG_LIMIT);
        report->status = SOLVER_FAILED;
        report->seconds = opt_now() - t0;
        arena_free_all(&arena);
        return false;
    }
    Search se = {0};
    se.arena = &arena;
    se.sp = sp;
    search_space(&se, obj, deadline, &pg);
    bool timed_out = se.timed_out || sp->truncated;
    report->space = space_size(&arena, sp);
    report->configurations = se.nk;
    if (!se.any_feasible) {
        progress_clear(&pg);
        report->seconds = opt_now() - t0;
        record(report, sp, NULL, 0);
        if (timed_out) {
            diag_error(p->diags, config_span(m), "E0371",
                       "time limit of %g s reached before any mapping of %s that fits was found",
                       opts->time_limit_s, m->name);
            report->status = SOLVER_TIME_LIMIT;
        } else {
            explain_infeasible(p, m, &se, deadline > 0 ? deadline + 30 : 0);
            report->status = SOLVER_FAILED;
        }
        arena_free_all(&arena);
        return false;
    }
    Model md;
    if (!build_model(&arena, p, sp, se.kept, se.nk, obj, &md)) {
        progress_clear(&pg);
        if (md.lp) delete_lp(md.lp);
        diag_error(p->diags, config_span(m), "E0372", "lp_solve could not build the model of %s",
                   m->name);
        report->status = SOLVER_FAILED;
        arena_free_all(&arena);
        return false;
    }
    pg.scale = obj == OBJ_ENERGY ? md.escale : md.tscale;
    pg.unit = obj == OBJ_ENERGY ? "J" : "s";
    if (opts && opts->emit_lp_path) {
        /* through a stream of ours: write_lp(path) ignores its write errors */
        OutputFile lp_file;
        bool written = output_open(&lp_file, &arena, opts->emit_lp_path);
        if (written && !write_LP(md.lp, lp_file.stream)) {
            output_discard(&lp_file);
            errno = EIO;
            written = false;
        }
        if (written) written = output_commit(&lp_file);
        if (!written)
            diag_error(p->diags, config_span(m), "E0374", "cannot write the model to %s: %s",
                       opts->emit_lp_path, strerror(errno));
    }
    SolveOut best;
    memset(&best, 0, sizeof best);
    bool limit_hit = false;
    double gap = 0;
    if (obj != OBJ_EDP) {
        double known = INFINITY;
        for (int k = 0; k < se.nk; k++) {
            double v = obj == OBJ_ENERGY ? se.kept[k].best_en / md.escale
                                         : se.kept[k].best_lat / md.tscale;
            if (v < known) known = v;
        }
        solve_with_retry(&arena, p, sp, se.kept, se.nk, obj, &md, &pg, &best, known, NAN);
        if (!best.have && (best.status == NUMFAILURE || best.status == ACCURACYERROR)) {
            /* lp_solve failed twice: the shortest paths of section 3 of
             * docs/optimizer.md are exact for an additive objective */
            dp_solution(&arena, sp, se.kept, se.nk, obj, &best);
            report->method = "shortest path (lp_solve failed)";
        }
        limit_hit = best.status == USERABORT || best.status == TIMEOUT || best.status == SUBOPTIMAL;
        if (!best.have && limit_hit && se.nk > 0) {
            /* the time ran out inside lp_solve: the best of the
             * configurations costed so far, by their shortest paths */
            dp_solution(&arena, sp, se.kept, se.nk, obj, &best);
            report->method = "shortest path (time limit in lp_solve)";
            best.status = TIMEOUT;
        }
        if (best.have && limit_hit) {
            double b = best.bound;
            gap = (fabs(b) < 1e29 && best.value > 0) ? (best.value - b) / best.value : 1;
            if (gap < 0) gap = 0;
        }
    } else {
        /* the latency/energy frontier of every configuration (exact
         * bi-objective shortest paths); the least product is a frontier
         * point (L*, E*).  The MILP then minimises latency with energy
         * <= E*: its optimum is L*, where branch and bound stops. */
        double bl = INFINITY, be = INFINITY, bp = INFINITY;
        for (int k = 0; k < se.nk; k++) {
            Arena t = {0};
            int np = 0;
            double *fl = NULL, *fe = NULL;
            pareto_front(&t, sp, &se.kept[k], &fl, &fe, &np);
            for (int q = 0; q < np; q++)
                if (fl[q] * fe[q] < bp) {
                    bp = fl[q] * fe[q];
                    bl = fl[q];
                    be = fe[q];
                }
            arena_free_all(&t);
        }
        if (bp < INFINITY) {
            solve_with_retry(&arena, p, sp, se.kept, se.nk, obj, &md, &pg, &best, bl / md.tscale,
                             be);
            if (!best.have) {
                dp_edp_solution(&arena, sp, se.kept, se.nk, bl, be, &best);
                report->method = "edp frontier (lp_solve failed)";
            }
            limit_hit = best.status == USERABORT || best.status == TIMEOUT;
        }
        if (limit_hit && best.have) gap = (best.lat * best.en - bp) / (best.lat * best.en);
    }
    report->rows = md.nrows;
    report->columns = md.ncols;
    if (md.lp) delete_lp(md.lp);
    progress_clear(&pg);
    report->seconds = opt_now() - t0;
    record(report, sp, &md, se.nk);
    if (!best.have) {
        if (limit_hit || timed_out) {
            diag_error(p->diags, config_span(m), "E0371",
                       "time limit of %g s reached before any mapping of %s that fits was found",
                       opts ? opts->time_limit_s : 0, m->name);
            report->status = SOLVER_TIME_LIMIT;
        } else {
            diag_error(p->diags, config_span(m), "E0372",
                       "lp_solve found no solution for mapping %s (status %d)", m->name,
                       best.status);
            report->status = SOLVER_FAILED;
        }
        arena_free_all(&arena);
        return false;
    }
    if (getenv("CMTC_OPT_STATS"))
        fprintf(stderr,
                "optimize %s: %ld configurations (%d splits), %d arcs, %ld lowerings, %ld memo "
                "hits, %ld implied, %ld cut without lowering; pruned: arcs %ld, "
                "capacity %ld, dominance %ld, bound %ld, level %ld; kept %d; model %d rows %d "
                "columns; %.3f s\n",
                m->name, (long)sp->enumerated, sp->split_count, sp->arc_count, sp->evaluations,
                se.memo_hits, se.implied, se.comp_hits, sp->pruned_arcs, sp->pruned_capacity,
                sp->pruned_dominance, sp->pruned_bound, sp->pruned_level, se.nk, md.nrows, md.ncols,
                opt_now() - t0);
    /* fill the holes and check the model against the cost model */
    Kept *k = &se.kept[best.kept];
    opt_apply(p->arena, sp, m, k->cfg, best.arcs, best.arc_count);
    EvalResult ev;
    double rep = m->repeat > 0 ? (double)m->repeat : 1;
    if (evaluate_mapping(m, &ev) == EVAL_OK) {
        double model = objective_of(obj, best.lat * rep, best.en * rep);
        double real = objective_of(obj, ev.latency_s, ev.energy_j);
        report->objective = real;
        if (fabs(model - real) > 1e-6 * fabs(real) + 1e-300)
            diag_warning(p->diags, config_span(m), "E0379",
                         "the optimizer's model of %s gives %s %.6g but the cost model gives "
                         "%.6g: the mapping may not be optimal",
                         m->name, objective_name(obj), model, real);
    }
    if (timed_out || limit_hit) {
        report->status = SOLVER_TIME_LIMIT;
        report->gap = timed_out ? 1 : gap;
    } else {
        report->status = SOLVER_OPTIMAL;
        report->gap = 0;
    }
    arena_free_all(&arena);
    return true;
}
