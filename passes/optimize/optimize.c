/* optimize.c — the mapping optimizer: fills every hole of a mapping with
 * the best choice within the cost model, proven optimal by a mixed-integer
 * program solved with lp_solve (docs/optimizer.md has the formulation).
 *
 *   1. the space (space.c): configurations (split table, tile
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
 *      again;
 *   6. limits: every phase reads the clock (past the time limit the
 *      shortest paths answer for what was costed) and every growing
 *      structure is checked against the memory budget (E0380). */
#include "passes/optimize/space.h"

#include <errno.h>
#include <limits.h>
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
/* A choice of outer holes is probed against the incumbent with this
 * margin, far above the rounding by which the model's value of a mapping
 * and its evaluation can differ (section 4.2 of docs/optimizer.md). */
#define PROBE_MARGIN 1e-5

/* ------------------------------------------------------ small helpers */

static double objective_of(Objective obj, double lat, double en) {
    switch (obj) {
    case OBJ_ENERGY: return en;
    case OBJ_EDP: return lat * en;
    case OBJ_LATENCY: break;
    }
    return lat;
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

/* The statements of an arc, `_`-separated; past 8 of them the first and
 * the last (`T1_to_T500`), so labels stay short and cost linear time. */
static const char *arc_label(Arena *a, const OptSpace *sp, const OptArc *arc) {
    const IrStmt *st = sp->op->stmts;
    const char *lv = arc->level >= 0 ? sp->arch->levels[arc->level].name : NULL;
    if (arc->count > 8) {
        const char *run = arc->given_group >= 0 ? arena_printf(a, "_g%d", arc->given_group) : "";
        return arena_printf(a, "%s_to_%s%s%s%s", st[arc->stmts[0]].name,
                            st[arc->stmts[arc->count - 1]].name, run, lv ? "_at_" : "",
                            lv ? lv : "");
    }
    size_t len = 8 + (lv ? strlen(lv) : 0);
    for (int k = 0; k < arc->count; k++) len += strlen(st[arc->stmts[k]].name) + 1;
    char *out = arena_alloc(a, len), *w = out;
    for (int k = 0; k < arc->count; k++)
        w += sprintf(w, "%s%s", k ? "_" : "", st[arc->stmts[k]].name);
    if (lv) sprintf(w, "_at_%s", lv);
    return out;
}

/* An arc's column: `fuse_C_D_at_SRAM` (a group at a level),
 * `fuse_C_D` (at its default level), `unfused_C` (a statement in a group of its own). */
static const char *arc_column(Arena *a, const OptSpace *sp, const OptArc *arc) {
    return arena_printf(a, "%s_%s", arc->level == OPT_UNFUSED ? "unfused" : "fuse",
                        arc_label(a, sp, arc));
}

/* A configuration's column: `cfg4` and the choices it makes for the
 * holes: `_spatial_n_x_y` (index n split over x and y), `_tile_SRAM_m_64`,
 * `_order_SRAM_k_m_n`; past 96 characters the rest is cut (the number
 * keeps it unique). */
#define COLUMN_MAX 96

/* Appends to a column name, cut at COLUMN_MAX characters. */
static void column_add(char *buf, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void column_add(char *buf, size_t *len, const char *fmt, ...) {
    if (*len >= COLUMN_MAX) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, COLUMN_MAX + 1 - *len, fmt, ap);
    va_end(ap);
    *len = n < 0 ? *len : *len + (size_t)n > COLUMN_MAX ? COLUMN_MAX : *len + (size_t)n;
}

static const char *cfg_column(Arena *a, const OptSpace *sp, int c) {
    char buf[COLUMN_MAX + 1];
    size_t len = 0;
    buf[0] = '\0';
    column_add(buf, &len, "cfg%d", c);
    if (sp->split_hole) {
        const int *table = opt_split_table(sp, opt_cfg_split(sp, c));
        bool any_hole = false, any = false;
        for (int i = 0; i < sp->I; i++) {
            bool named = false;
            for (int d = 0; d < sp->D; d++) {
                bool here = false;
                for (int st = 0; st < sp->S && !here; st++) {
                    any_hole |= sp->split_hole[st * sp->D + d];
                    here = sp->split_hole[st * sp->D + d] && table[st * sp->D + d] == i;
                }
                if (!here) continue;
                if (!any) column_add(buf, &len, "_spatial");
                if (!named) column_add(buf, &len, "_%s", sp->op->indices[i].name);
                column_add(buf, &len, "_%s", sp->arch->dims[d].name);
                any = named = true;
            }
        }
        if (any_hole && !any) column_add(buf, &len, "_spatial_none");
    }
    const int64_t *tiles = opt_cfg_tile(sp, c);
    for (int h = 0; h < sp->th_count; h++) {
        bool same_level = h > 0 && sp->th_level[h - 1] == sp->th_level[h];
        if (!same_level) column_add(buf, &len, "_tile_%s", sp->arch->levels[sp->th_level[h]].name);
        /* a `tile L for ...` line's hole: the line's number (IrTile.from) */
        if (sp->th_line[h] > 0) column_add(buf, &len, "_for%d", sp->th_line[h]);
        column_add(buf, &len, "_%s_%lld", sp->op->indices[sp->th_index[h]].name,
                   (long long)tiles[h]);
    }
    const int *orders = opt_cfg_order(sp, c);
    for (int k = 0; k < sp->oh_count; k++) {
        column_add(buf, &len, "_order_%s", sp->arch->levels[sp->oh_level[k]].name);
        if (sp->oh_line[k] > 0) column_add(buf, &len, "_for%d", sp->oh_line[k]);
        for (int i = 0; i < sp->I; i++)
            column_add(buf, &len, "_%s", sp->op->indices[orders[k * sp->I + i]].name);
    }
    return arena_strdup(a, buf);
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
    for (int k = 0; k < S * L * I; k++)
        if (m->tile.size[k] == IR_HOLE) return m->tile.span[k];
    for (int k = 0; k < S * L; k++)
        if (m->order.length[k] == IR_HOLE) return m->order.span[k];
    if (m->fuse.whole_hole) return m->fuse.hole_span;
    return m->span;
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
 * an additive cost.  Every arc is a run of positions (blocks laid end to
 * end, OptSpace.pos_of), so the best cover of positions p.. is the best
 * arc starting at p plus the best cover after it: exact dynamic
 * programming, backwards over the positions. */
typedef struct PathCtx {
    const OptSpace *sp;
    const OptCost *row;
    const bool *pruned;
    int which; /* 0 latency, 1 energy, 2 bottleneck ratio */
} PathCtx;

static double arc_value(const PathCtx *pc, int a) {
    const OptCost *c = &pc->row[a];
    if (c->uncosted) return INFINITY;
    if (pc->which == 2) return c->feasible ? 0 : (c->capacity > 0 ? c->need / c->capacity : 1e300);
    if (!c->feasible || (pc->pruned && pc->pruned[a])) return INFINITY;
    return pc->which == 0 ? c->cost.latency_s : c->cost.energy_j;
}

/* Best value of a partition for one configuration; *arcs (S entries, the
 * chosen arc at its first position, -1 elsewhere) when asked. */
static double best_partition(Arena *a, const OptSpace *sp, const OptCost *row, const bool *pruned,
                             int which, int *arcs) {
    PathCtx pc = {sp, row, pruned, which};
    int S = sp->S;
    double *best = ARENA_ARRAY(a, double, S + 1);
    int *choice = ARENA_ARRAY(a, int, S + 1);
    best[S] = 0;
    for (int p = S - 1; p >= 0; p--) {
        best[p] = INFINITY;
        choice[p] = -1;
        for (int k = sp->start_first[p]; k < sp->start_first[p + 1]; k++) {
            int x = sp->start_arcs[k];
            double v = arc_value(&pc, x);
            if (!(v < INFINITY)) continue;
            double rest = best[p + sp->arcs[x].count];
            double tot = which == 2 ? (v > rest ? v : rest) : v + rest;
            if (tot < best[p]) {
                best[p] = tot;
                choice[p] = x;
            }
        }
    }
    if (arcs) {
        for (int k = 0; k < S; k++) arcs[k] = -1;
        for (int p = 0; p < S && best[0] < INFINITY;) {
            int c = choice[p];
            if (c < 0) break;
            arcs[p] = c;
            p += sp->arcs[c].count;
        }
    }
    return best[0];
}

/* c dominated by d: on every arc d fits where c fits and costs no more. */
static bool dominates(const OptSpace *sp, const Kept *d, const Kept *c) {
    for (int a = 0; a < sp->arc_count; a++) {
        const OptCost *x = &c->row[a], *y = &d->row[a];
        bool xu = x->feasible && !c->pruned[a], yu = y->feasible && !d->pruned[a];
        if (!xu) continue;
        if (!yu) return false;
        if (y->cost.latency_s > x->cost.latency_s || y->cost.energy_j > x->cost.energy_j)
            return false;
    }
    return true;
}

/* Same statements at another level, fitting, no worse in both terms. */
static void prune_levels(OptSpace *sp, Kept *k) {
    /* arcs with the same statements are built one after another (one per
     * level), so the others are the neighbours with the same list */
    for (int a = 0; a < sp->arc_count; a++) {
        const OptArc *x = &sp->arcs[a];
        if (!k->row[a].feasible) continue;
        int lo = a, hi = a + 1;
        while (lo > 0 && sp->arcs[lo - 1].stmts == x->stmts && sp->arcs[lo - 1].count == x->count)
            lo--;
        while (hi < sp->arc_count && sp->arcs[hi].stmts == x->stmts &&
               sp->arcs[hi].count == x->count)
            hi++;
        for (int b = lo; b < hi; b++) {
            if (a == b || k->pruned[b] || !k->row[b].feasible) continue;
            const OptCost *ca = &k->row[a], *cb = &k->row[b];
            bool no_worse =
                cb->cost.latency_s <= ca->cost.latency_s && cb->cost.energy_j <= ca->cost.energy_j;
            bool tie =
                cb->cost.latency_s == ca->cost.latency_s && cb->cost.energy_j == ca->cost.energy_j;
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
                if (kept[k].row[x].cost.latency_s > maxl) maxl = kept[k].row[x].cost.latency_s;
                if (kept[k].row[x].cost.energy_j > maxe) maxe = kept[k].row[x].cost.energy_j;
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
        /* columns named after what they choose (docs/optimizer.md) */
        set_col_name(lp, md->xcol[k], (char *)cfg_column(a, sp, kept[k].cfg));
        for (int x = 0; x < A; x++) {
            int col = md->zcol[(size_t)k * (size_t)A + (size_t)x];
            if (!col) continue;
            set_binary(lp, col, TRUE);
            set_col_name(lp, col,
                         arena_printf(a, "%s_cfg%d", arc_column(a, sp, &sp->arcs[x]), kept[k].cfg));
        }
    }
    if (epi)
        for (int x = 0; x < A; x++)
            set_col_name(lp, md->lcol[x],
                         arena_printf(a, "latency_of_%s", arc_column(a, sp, &sp->arcs[x])));
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
                vals[c] = kept[k].row[x].cost.energy_j / md->escale;
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
            for (size_t q = sp->stmt_arc_first[st]; q < sp->stmt_arc_first[st + 1]; q++) {
                int x = sp->stmt_arcs[q];
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
                    double v = term == 0   ? oc->cost.compute_s + oc->cost.fill_drain_s
                               : term == 1 ? oc->cost.memory_s + oc->cost.fill_drain_s
                               : term == 2 ? oc->cost.network_s + oc->cost.fill_drain_s
                                           : oc->cost.latency_s;
                    if (v > oc->cost.latency_s) v = oc->cost.latency_s; /* overlap none: the sum */
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
                vals[c] = kept[k].row[x].cost.energy_j / md->escale;
                cols[c++] = col;
            }
        if (!add_constraintex(lp, c, vals, cols, LE, 1e30)) return false;
        nrows++;
        md->energy_row = nrows;
        Span os = sp->m->span;
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
            out->lat += kept[k].row[x].cost.latency_s;
            out->en += kept[k].row[x].cost.energy_j;
        }
    }
}

/* Non-dominated (latency, energy) pairs of the partitions of one
 * configuration: labels per position, extended arc by arc (bi-objective
 * shortest paths on the DAG of positions).  Each label remembers the arc
 * and the label it extends, so a frontier point's partition can be read
 * back. */
typedef struct Labels {
    double *l, *e;
    int *arc, *from; /* the last arc, and the label at its first position */
    int n, cap;
} Labels;

static void label_add(Arena *a, Labels *x, double l, double e, int arc, int from) {
    for (int i = 0; i < x->n; i++)
        if (x->l[i] <= l && x->e[i] <= e) return; /* dominated */
    int w = 0;
    for (int i = 0; i < x->n; i++)
        if (!(l <= x->l[i] && e <= x->e[i])) {
            x->l[w] = x->l[i];
            x->e[w] = x->e[i];
            x->arc[w] = x->arc[i];
            x->from[w] = x->from[i];
            w++;
        }
    x->n = w;
    if (x->n == x->cap) {
        int nc = x->cap ? x->cap * 2 : 8;
        size_t od = sizeof(double) * (size_t)x->cap, nd = sizeof(double) * (size_t)nc;
        size_t oi = sizeof(int) * (size_t)x->cap, ni = sizeof(int) * (size_t)nc;
        x->l = arena_realloc(a, x->l, od, nd);
        x->e = arena_realloc(a, x->e, od, nd);
        x->arc = arena_realloc(a, x->arc, oi, ni);
        x->from = arena_realloc(a, x->from, oi, ni);
        x->cap = nc;
    }
    x->l[x->n] = l;
    x->e[x->n] = e;
    x->arc[x->n] = arc;
    x->from[x->n] = from;
    x->n++;
}

/* The labels of every position; at[S] is the frontier.  A position's
 * labels are final before any arc leaves it, so `from` stays valid. */
static Labels *pareto_front(Arena *a, const OptSpace *sp, const Kept *k) {
    int S = sp->S;
    Labels *at = ARENA_ARRAY(a, Labels, S + 1);
    label_add(a, &at[0], 0, 0, -1, -1);
    for (int i = 0; i < S; i++)
        for (int q = sp->start_first[i]; q < sp->start_first[i + 1]; q++) {
            int x = sp->start_arcs[q];
            if (!k->row[x].feasible || k->pruned[x]) continue;
            int j = i + sp->arcs[x].count;
            for (int f = 0; f < at[i].n; f++)
                label_add(a, &at[j], at[i].l[f] + k->row[x].cost.latency_s,
                          at[i].e[f] + k->row[x].cost.energy_j, x, f);
        }
    return at;
}

/* The partition of (L*, E*) when lp_solve failed or the time ran out:
 * read back from the frontier labels of the configuration that has it. */
static void dp_edp_solution(Arena *a, const OptSpace *sp, Kept *kept, int nk, double bl, double be,
                            SolveOut *out) {
    memset(out, 0, sizeof *out);
    int S = sp->S;
    for (int k = 0; k < nk && !out->have; k++) {
        Labels *at = pareto_front(a, sp, &kept[k]);
        for (int q = 0; q < at[S].n; q++) {
            if (fabs(at[S].l[q] - bl) > 1e-9 * bl || fabs(at[S].e[q] - be) > 1e-9 * be) continue;
            out->have = true;
            out->status = OPTIMAL;
            out->kept = k;
            out->arcs = ARENA_ARRAY(a, int, S + 1);
            out->lat = at[S].l[q];
            out->en = at[S].e[q];
            for (int p = S, f = q; p > 0;) {
                int x = at[p].arc[f];
                out->arcs[out->arc_count++] = x;
                f = at[p].from[f];
                p = sp->arcs[x].pos;
            }
            for (int i = 0, j = out->arc_count - 1; i < j; i++, j--) { /* source order */
                int t = out->arcs[i];
                out->arcs[i] = out->arcs[j];
                out->arcs[j] = t;
            }
            break;
        }
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
            out->lat += kept[k].row[arcs[st]].cost.latency_s;
            out->en += kept[k].row[arcs[st]].cost.energy_j;
        }
    }
}

/* The step of configuration c with the partition `arcs` (S entries, -1
 * where no arc starts) as the pipeline runs it (pass_stages): its latency
 * over the whole step, or INFINITY when it does not lower. */
static double run_step(const OptSpace *sp, int c, const int *arcs) {
    Arena t = {0};
    int *list = ARENA_ARRAY(&t, int, sp->S + 1);
    int n = 0;
    for (int st = 0; st < sp->S; st++)
        if (arcs[st] >= 0) list[n++] = arcs[st];
    IrMapping *m = ARENA_NEW(&t, IrMapping);
    *m = *sp->m;
    opt_apply(&t, sp, m, c, list, n);
    EvalResult ev;
    double lat = evaluate_mapping(m, NULL, &ev) == EVAL_OK ? ev.cost.latency_s : INFINITY;
    arena_free_all(&t);
    return lat;
}

/* Under a pipeline (Search.run_step): the kept configuration whose best
 * partition runs the shortest step (its `ub`, run during the search).
 * Every configuration's closed form (its bound) is at most its run, and
 * the configurations were kept while their bound was within the window of
 * the best run, so the best run is the optimum (docs/optimizer.md 4.1). */
static void run_step_solution(Arena *a, const OptSpace *sp, Kept *kept, int nk, SolveOut *out) {
    memset(out, 0, sizeof *out);
    double best = INFINITY;
    for (int k = 0; k < nk; k++)
        if (kept[k].ub < best) {
            best = kept[k].ub;
            out->kept = k;
            out->have = true;
        }
    if (!out->have) return;
    out->status = OPTIMAL;
    const Kept *k = &kept[out->kept];
    int *arcs = ARENA_ARRAY(a, int, sp->S + 1);
    best_partition(a, sp, k->row, k->pruned, 0, arcs);
    out->arcs = ARENA_ARRAY(a, int, sp->S + 1);
    out->lat = k->ub;
    for (int st = 0; st < sp->S; st++)
        if (arcs[st] >= 0) {
            out->arcs[out->arc_count++] = arcs[st];
            out->en += k->row[arcs[st]].cost.energy_j; /* the closed form's energy is exact */
        }
}

/* ------------------------------------------------ the whole search */

typedef struct Search {
    Arena *arena;
    OptSpace *sp;
    /* a pipeline under objective latency: each kept configuration's
     * achievable value is its best partition's step run pass by pass
     * (docs/optimizer.md 4.1), not the closed form */
    bool run_step;
    /* an objective value another choice already reaches (search units),
     * INFINITY for none: configurations that cannot beat it are cut */
    double incumbent;
    Kept *kept;
    int nk;
    bool any_feasible;
    /* the configuration and partition that come closest to fitting */
    double least_ratio;
    int least_cfg;
    OptCost least_cost;
    bool timed_out;
    long memo_hits, implied, comp_hits, window_cuts;
    int kept_cap;
    /* a probe (docs/optimizer.md 4.2): does any configuration reach a
     * value within PROBE_MARGIN of the incumbent?  Configurations are cut
     * at that value, not at the window past it, nothing is kept, and the
     * search stops at the first that does (may_improve) */
    bool probe;
    bool may_improve;
    /* rows of configurations no longer kept, for reuse: the search keeps
     * at most about 2 * OPT_COLUMN_BUDGET arc costs at a time */
    OptCost **free_rows;
    bool **free_pruned;
    int free_count;
} Search;

/* Bound pruning of arcs: the best partition through arc a
 * costs at least the best cover of the statements before it, plus a, plus
 * the best cover after it.  An arc whose best partition cannot come within
 * the threshold is no candidate.  An arc that does not fit but would be
 * within the threshold stays, fixed to 0 by its capacity row. */
static void prune_arcs_by_bound(Arena *t, OptSpace *sp, Kept *k, Objective obj, double threshold) {
    if (!(threshold < INFINITY)) return;
    int S = sp->S, A = sp->arc_count;
    double *pl = ARENA_ARRAY(t, double, S + 1), *pe = ARENA_ARRAY(t, double, S + 1);
    double *sl = ARENA_ARRAY(t, double, S + 1), *se = ARENA_ARRAY(t, double, S + 1);
    for (int i = 0; i <= S; i++) pl[i] = pe[i] = sl[i] = se[i] = INFINITY;
    pl[0] = pe[0] = sl[S] = se[S] = 0;
    /* best covers before each position (forwards) and after it */
    for (int i = 0; i < S; i++)
        for (int q = sp->start_first[i]; q < sp->start_first[i + 1]; q++) {
            int a = sp->start_arcs[q];
            if (!k->row[a].feasible || k->pruned[a]) continue;
            int j = i + sp->arcs[a].count;
            if (pl[i] + k->row[a].cost.latency_s < pl[j]) pl[j] = pl[i] + k->row[a].cost.latency_s;
            if (pe[i] + k->row[a].cost.energy_j < pe[j]) pe[j] = pe[i] + k->row[a].cost.energy_j;
        }
    for (int i = S - 1; i >= 0; i--)
        for (int q = sp->start_first[i]; q < sp->start_first[i + 1]; q++) {
            int a = sp->start_arcs[q];
            if (!k->row[a].feasible || k->pruned[a]) continue;
            int j = i + sp->arcs[a].count;
            if (sl[j] + k->row[a].cost.latency_s < sl[i]) sl[i] = sl[j] + k->row[a].cost.latency_s;
            if (se[j] + k->row[a].cost.energy_j < se[i]) se[i] = se[j] + k->row[a].cost.energy_j;
        }
    for (int a = 0; a < A; a++) {
        if (k->pruned[a]) continue;
        const OptArc *arc = &sp->arcs[a];
        int i = arc->pos, j = i + arc->count;
        double l = pl[i] + k->row[a].cost.latency_s + sl[j];
        double e = pe[i] + k->row[a].cost.energy_j + se[j];
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
    int from, to;   /* configurations */
    int base;       /* first configuration of the batch */
    OptCost *rows;  /* batch rows, [k * A] */
    OptRow *status; /* batch: how each row was costed */
    Progress *pg;   /* the main thread's worker reports progress */
    long total;
} Worker;

static void *worker_run(void *arg) {
    Worker *w = arg;
    const OptSpace *sp = w->sp;
    int A = sp->arc_count;
    for (int c = w->from; c < w->to; c++) {
        OptCost *row = w->rows + (size_t)(c - w->base) * (size_t)A;
        /* a configuration started in time costs at least its statements
         * alone (a partial row); none starts past the deadline */
        if (sp->deadline > 0 && opt_now() > sp->deadline) {
            w->status[c - w->base] = OPT_ROW_SKIPPED;
            continue;
        }
        memset(row, 0, sizeof(OptCost) * (size_t)A);
        w->status[c - w->base] = opt_evaluate_config(sp, &w->ctx, c, row);
        if (w->pg) progress_eval(w->pg, c, w->total);
    }
    return NULL;
}

static int compare_kept(const void *a, const void *b) {
    const Kept *x = *(Kept *const *)a, *y = *(Kept *const *)b;
    if (x->bound != y->bound) return x->bound < y->bound ? -1 : 1;
    return x < y ? -1 : x > y; /* stable: by place in the array */
}

/* The best `keep` kept configurations by bound, in their order. */
static void keep_best(Search *se, long keep) {
    if (se->nk <= keep) return;
    Arena t = {0};
    Kept **by = ARENA_ARRAY(&t, Kept *, se->nk);
    for (int j = 0; j < se->nk; j++) by[j] = &se->kept[j];
    qsort(by, (size_t)se->nk, sizeof *by, compare_kept);
    for (long j = keep; j < se->nk; j++) by[j]->dropped = true;
    arena_free_all(&t);
}

/* Drops the kept configurations that can no longer be chosen (dominated,
 * outside the bound window) and, past twice the column budget, all but
 * the best by bound (as the final filter would); their rows are reused. */
static void compact_kept(Search *se, double incumbent) {
    OptSpace *sp = se->sp;
    long cols_per = sp->arc_count + 1;
    int w = 0;
    for (int j = 0; j < se->nk; j++) {
        Kept *k = &se->kept[j];
        if (!k->dropped && k->bound > incumbent * (1 + OPT_BOUND_WINDOW)) {
            k->dropped = true;
            sp->pruned_bound++;
        }
    }
    long keep = OPT_COLUMN_BUDGET / cols_per;
    if (keep < 1) keep = 1;
    long live = 0;
    for (int j = 0; j < se->nk; j++) live += !se->kept[j].dropped;
    if (live > keep) {
        /* the dropped ones sort last: give them an infinite bound first */
        for (int j = 0; j < se->nk; j++)
            if (se->kept[j].dropped) se->kept[j].bound = INFINITY;
        keep_best(se, keep);
        sp->pruned_bound += live - keep;
    }
    for (int j = 0; j < se->nk; j++) {
        Kept *k = &se->kept[j];
        if (k->dropped) {
            se->free_rows[se->free_count] = k->row;
            se->free_pruned[se->free_count++] = k->pruned;
            continue;
        }
        se->kept[w++] = *k;
    }
    se->nk = w;
}

static void search_space(Search *se, Objective obj, Progress *pg) {
    OptSpace *sp = se->sp;
    Arena *a = se->arena;
    int A = sp->arc_count;
    se->nk = 0;
    se->least_ratio = INFINITY;
    se->least_cfg = -1;
    if (sp->cfg_count == 0) return;
    double incumbent = se->incumbent;
    double probe_at = incumbent * (1 + PROBE_MARGIN);
    int nthreads = sp->cfg_count >= 2 * OPT_THREADS ? OPT_THREADS : 1;
    /* batch rows stay within an eighth of the budget */
    size_t row_bytes = opt_mul((size_t)A, sizeof(OptCost));
    int batch = OPT_BATCH;
    while (batch > nthreads && opt_mul((size_t)batch, row_bytes) > sp->budget / 8) batch /= 2;
    /* kept rows: at most about twice the column budget, then compacted */
    long cols_per = A + 1;
    long kept_max = 2 * OPT_COLUMN_BUDGET / cols_per + batch + 1;
    if (kept_max > sp->cfg_count) kept_max = sp->cfg_count;
    size_t pruned_bytes = (size_t)A + 1;
    if (!opt_reserve(sp,
                     opt_add(opt_add(opt_mul((size_t)batch + 1, row_bytes + sizeof(OptRow)),
                                     opt_mul((size_t)kept_max + 1,
                                             sizeof(Kept) + row_bytes + pruned_bytes + 16)),
                             opt_mul((size_t)nthreads, opt_eval_ctx_need(sp))),
                     "the costs of the configurations"))
        return;
    OptCost *rows = ARENA_ARRAY(a, OptCost, opt_mul((size_t)batch, (size_t)A) + 1);
    OptRow *status = ARENA_ARRAY(a, OptRow, batch + 1);
    se->kept_cap = (int)kept_max;
    se->kept = ARENA_ARRAY(a, Kept, kept_max + 1);
    se->free_rows = ARENA_ARRAY(a, OptCost *, kept_max + 1);
    se->free_pruned = ARENA_ARRAY(a, bool *, kept_max + 1);
    bool *pruned = NULL;
    Arena tmp = {0};
    Worker workers[OPT_THREADS];
    for (int t = 0; t < nthreads; t++) {
        workers[t].sp = sp;
        opt_eval_ctx_init(&workers[t].ctx, sp);
        workers[t].ctx.objective = obj;
        workers[t].rows = rows;
        workers[t].status = status;
        workers[t].pg = t == 0 ? pg : NULL;
        workers[t].total = sp->cfg_count;
    }
    for (int c0 = 0; c0 < sp->cfg_count && !se->may_improve; c0 += batch) {
        if (opt_past_deadline(sp)) {
            se->timed_out = true;
            break;
        }
        /* what the workers hold counts against the budget too */
        sp->held = 0;
        for (int t = 0; t < nthreads; t++)
            sp->held = opt_add(sp->held, opt_eval_ctx_bytes(&workers[t].ctx));
        if (!opt_reserve(sp, 0, "the costs of the configurations")) break;
        progress_eval(pg, c0, sp->cfg_count);
        int c1 = c0 + batch < sp->cfg_count ? c0 + batch : sp->cfg_count;
        int per = (c1 - c0 + nthreads - 1) / nthreads;
        pthread_t tid[OPT_THREADS];
        bool started[OPT_THREADS] = {false};
        for (int t = 0; t < nthreads; t++) {
            workers[t].ctx.threshold = incumbent * (1 + 1e-9); /* cannot beat it */
            /* the drop below compares with the running incumbent, never
             * more than this one; edp's bound is a product, not a path */
            workers[t].ctx.window = obj == OBJ_EDP ? INFINITY : incumbent * (1 + OPT_BOUND_WINDOW);
            if (se->probe) workers[t].ctx.threshold = workers[t].ctx.window = probe_at;
            workers[t].ctx.probe = se->probe;
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
        for (int c = c0; c < c1 && !se->may_improve; c++) {
            OptCost *row = rows + (size_t)(c - c0) * (size_t)A;
            OptRow st = status[c - c0];
            if (st == OPT_ROW_SKIPPED) {
                se->timed_out = true;
                continue;
            }
            if (st == OPT_ROW_CUT) {
                sp->pruned_bound++;
                continue;
            }
            if (!pruned) pruned = ARENA_ARRAY(a, bool, A + 1);
            /* arcs the time limit left uncosted are no candidates */
            for (int x = 0; x < A; x++) pruned[x] = row[x].uncosted;
            if (st == OPT_ROW_PARTIAL) se->timed_out = true;
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
                    for (int st2 = 0; st2 < sp->S; st2++) {
                        if (arcs[st2] < 0) continue;
                        const OptCost *oc = &row[arcs[st2]];
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
                for (int st2 = 0; st2 < sp->S; st2++) {
                    if (pl[st2] >= 0) {
                        l1 += row[pl[st2]].cost.latency_s;
                        e1 += row[pl[st2]].cost.energy_j;
                    }
                    if (pe[st2] >= 0) {
                        l2 += row[pe[st2]].cost.latency_s;
                        e2 += row[pe[st2]].cost.energy_j;
                    }
                }
                k.bound = k.best_lat * k.best_en;
                k.ub = fmin(l1 * e1, l2 * e2);
            } else {
                k.bound = k.ub = obj == OBJ_ENERGY ? k.best_en : k.best_lat;
            }
            if (se->probe) {
                /* its value: the best partition, or that partition's run
                 * under a pipeline (no partition runs shorter, 4.1) */
                double value = k.bound;
                if (value <= probe_at && se->run_step) {
                    int *arcs = ARENA_ARRAY(&tmp, int, sp->S + 1);
                    best_partition(&tmp, sp, row, pruned, 0, arcs);
                    value = run_step(sp, c, arcs);
                }
                if (value <= probe_at) se->may_improve = true;
                continue;
            }
            if (k.bound > incumbent * (1 + OPT_BOUND_WINDOW)) {
                sp->pruned_bound++;
                continue;
            }
            if (se->run_step) {
                /* the run of the best partition; the closed form bounds it
                 * from below, so only a configuration the bound keeps is run */
                int *arcs = ARENA_ARRAY(&tmp, int, sp->S + 1);
                best_partition(&tmp, sp, row, pruned, 0, arcs);
                k.ub = run_step(sp, c, arcs);
            }
            prune_arcs_by_bound(&tmp, sp, &k, obj, fmin(incumbent, k.ub) * (1 + OPT_BOUND_WINDOW));
            /* dominance against the best kept configurations */
            bool dom = false;
            int peers = se->run_step ? OPT_DOMINANCE_PEERS : 0; /* sends differ */
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
            peers = se->run_step ? OPT_DOMINANCE_PEERS : 0;
            for (int j = se->nk - 1; j >= 0 && peers < OPT_DOMINANCE_PEERS; j--) {
                if (se->kept[j].dropped) continue;
                peers++;
                if (dominates(sp, &k, &se->kept[j])) {
                    se->kept[j].dropped = true;
                    sp->pruned_dominance++;
                }
            }
            if (k.ub < incumbent) incumbent = k.ub;
            if (se->nk == se->kept_cap) compact_kept(se, incumbent);
            if (se->free_count > 0) {
                k.row = se->free_rows[--se->free_count];
                bool *fp = se->free_pruned[se->free_count];
                memcpy(fp, pruned, sizeof(bool) * (size_t)A);
                k.pruned = fp;
            } else {
                k.row = ARENA_ARRAY(a, OptCost, A + 1);
                pruned = NULL; /* kept: the next configuration gets fresh flags */
            }
            memcpy(k.row, row, sizeof(OptCost) * (size_t)A);
            se->kept[se->nk++] = k;
        }
    }
    for (int t = 0; t < nthreads; t++) {
        sp->evaluations += workers[t].ctx.lowerings;
        se->memo_hits += workers[t].ctx.memo_hits;
        se->implied += workers[t].ctx.implied;
        se->comp_hits += workers[t].ctx.comp_hits;
        se->window_cuts += workers[t].ctx.window_cuts;
        opt_eval_ctx_free(&workers[t].ctx);
    }
    sp->held = 0;
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
    if ((long)se->nk * cols_per > OPT_COLUMN_BUDGET) {
        long keep = OPT_COLUMN_BUDGET / cols_per;
        if (keep < 1) keep = 1;
        Kept **by = ARENA_ARRAY(&tmp, Kept *, se->nk);
        for (int j = 0; j < se->nk; j++) by[j] = &se->kept[j];
        qsort(by, (size_t)se->nk, sizeof *by, compare_kept);
        Kept *sorted = ARENA_ARRAY(&tmp, Kept, keep);
        for (long j = 0; j < keep; j++) sorted[j] = *by[j];
        memcpy(se->kept, sorted, sizeof(Kept) * (size_t)keep);
        arena_free_all(&tmp);
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
    r->tile.size = ARENA_ARRAY(a, int64_t, S * L * I + 1);
    memcpy(r->tile.size, m->tile.size, sizeof(int64_t) * (size_t)(S * L * I));
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
        case OD_TILE: /* the line's entry, for every statement it gives it to */
            for (int st = 0; st < S; st++) {
                int k = ir_tile_slot(m, st, x->level, x->index);
                if (m->tile.from[k] == x->group && m->tile.size[k] >= 1) r->tile.size[k] = IR_HOLE;
            }
            break;
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

/* Whether some mapping of the space fits; unknown when the clock or the
 * budget stopped the search first. */
typedef enum Feasibility { FEAS_NO, FEAS_YES, FEAS_UNKNOWN } Feasibility;

static Feasibility space_feasible(const IrMapping *m, double deadline, size_t budget) {
    Arena a = {0};
    OptSpace *sp = opt_space_build(&a, m, true, deadline, budget, OPT_CONFIG_LIMIT);
    bool ok = false, unknown = sp->truncated;
    if (!unknown &&
        !opt_reserve(sp, opt_mul((size_t)sp->arc_count + 1, sizeof(OptCost)), "the explanation"))
        unknown = true;
    OptCost *row = unknown ? NULL : ARENA_ARRAY(&a, OptCost, sp->arc_count + 1);
    OptEvalCtx ctx;
    opt_eval_ctx_init(&ctx, sp);
    for (int c = 0; c < sp->cfg_count && !ok && !unknown; c++) {
        if (opt_past_deadline(sp)) {
            unknown = true;
            break;
        }
        memset(row, 0, sizeof(OptCost) * (size_t)sp->arc_count);
        if (opt_evaluate_config(sp, &ctx, c, row) == OPT_ROW_PARTIAL) unknown = true;
        Arena t = {0};
        ok = best_partition(&t, sp, row, NULL, 0, NULL) < INFINITY;
        arena_free_all(&t);
    }
    opt_eval_ctx_free(&ctx);
    arena_free_all(&a);
    return ok ? FEAS_YES : unknown ? FEAS_UNKNOWN : FEAS_NO;
}

static const char *bytes_text(Arena *a, double b) {
    return unit_format(a, b, (UnitDim){BU_BYTE, BU_NONE});
}

static const char *decision_text(Arena *a, const IrMapping *m, const OptDecision *d) {
    const IrOp *op = m->op;
    switch (d->kind) {
    case OD_TILE:
        for (int st = 0; st < op->stmt_count; st++) {
            int k = ir_tile_slot(m, st, d->level, d->index);
            if (m->tile.from[k] == d->group && m->tile.size[k] >= 1)
                return arena_printf(a, "tile %s %lld at %s", op->indices[d->index].name,
                                    (long long)m->tile.size[k], m->arch->levels[d->level].name);
        }
        return "this tile";
    case OD_SPLIT: return "this split";
    case OD_FUSE: return "this fusion group";
    case OD_FUSE_LEVEL:
        return arena_printf(a, "the fusion level %s",
                            m->arch->levels[m->fuse.level[d->group]].name);
    }
    return "";
}

static void explain_infeasible(Program *p, IrMapping *m, Search *se, double deadline,
                               size_t budget) {
    Arena *a = p->arena;
    int S = m->op->stmt_count, D = m->arch->dim_count, I = m->op->index_count;
    int L = m->arch->level_count;
    /* the user's decisions */
    int TL = m->tile.line_count + 1;
    OptDecision *dec = ARENA_ARRAY(a, OptDecision, L * I * TL + S * D + 2 * S + 1);
    int nd = 0;
    /* a tile decision: one line's entry of an index at a level */
    for (int l = 0; l < L; l++)
        for (int i = 0; i < I; i++)
            for (int line = 0; line < TL; line++)
                for (int st = 0; st < S; st++) {
                    int k = ir_tile_slot(m, st, l, i);
                    if (m->tile.from[k] != line || m->tile.size[k] < 1) continue;
                    dec[nd++] = (OptDecision){OD_TILE, l, i, line, m->tile.span[k]};
                    break;
                }
    int split_first = nd; /* one decision per `spatial` assignment: few */
    if (m->spatial.split && !m->spatial.whole_hole)
        for (int k = 0; k < S * D; k++) {
            if (m->spatial.split[k] < 0) continue;
            Span s = m->spatial.split_span[k];
            bool seen = false;
            for (int j = split_first; j < nd && !seen; j++)
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
    /* the time limit and the budget bound the explanation too: when they
     * stop it, the decisions not yet examined stay in the set */
    bool cut = false;
    Feasibility all = space_feasible(relaxed_copy(a, m, dec, nd, keep), deadline, budget);
    bool arch_alone = all == FEAS_NO;
    if (all == FEAS_UNKNOWN) cut = true;
    for (int d = 0; d < nd; d++) keep[d] = true;
    if (!arch_alone)
        /* deletion filter: drop every decision whose removal keeps the
         * space infeasible; what stays is a smallest conflicting set */
        for (int d = 0; d < nd && !cut; d++) {
            keep[d] = false;
            Feasibility f = space_feasible(relaxed_copy(a, m, dec, nd, keep), deadline, budget);
            if (f != FEAS_NO) keep[d] = true;
            if (f == FEAS_UNKNOWN) cut = true;
        }
    const OptCost *lc = &se->least_cost;
    const char *mem = lc->memory >= 0 ? m->arch->memories[lc->memory].name : "a memory";
    const char *need = bytes_text(a, lc->need), *has = bytes_text(a, lc->capacity);
    /* a need just over the capacity rounds to the same text: give both in
     * bytes then */
    if (strcmp(need, has) == 0) {
        need = arena_printf(a, "%.0f B", lc->need);
        has = arena_printf(a, "%.0f B", lc->capacity);
    }
    int first = -1, count = 0;
    for (int d = 0; d < nd; d++)
        if (keep[d] && !arch_alone) {
            if (first < 0) first = d;
            count++;
        }
    Span where = first >= 0 ? dec[first].span : m->span;
    Diag *g;
    /* no configuration was ever costed: the tile rules, not a capacity,
     * left nothing (least_cost is then empty: its "0 B" would mislead) */
    bool rules_only = lc->memory < 0 || !(lc->need > 0);
    if (rules_only) {
        g = diag_error(p->diags, where, "E0370",
                       first >= 0 && !arch_alone
                           ? "no mapping fits with %s: no choice of the holes passes the tile rules"
                           : "no mapping of `%s` passes the tile rules",
                       first >= 0 && !arch_alone ? decision_text(a, m, &dec[first]) : m->name);
        for (int d = first + 1; first >= 0 && !arch_alone && d < nd; d++)
            if (keep[d])
                diag_label(g, p->diags, dec[d].span, "%s conflicts with it",
                           decision_text(a, m, &dec[d]));
        diag_note(g, p->diags,
                  "a hole's tile divides what it tiles and is a multiple of a tile given inside "
                  "it with no split between (E0311), and gives every instance of a split "
                  "inside its level a share of each tile (E0326): with these decisions no "
                  "tile does, so nothing was costed");
        diag_help(g, p->diags,
                  "change a decision named here, or make it a hole too, so that some tile "
                  "satisfies both");
        return;
    }
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
        if (cut)
            diag_note(g, p->diags,
                      "%d decision%s of this mapping conflict%s; the time limit or the memory "
                      "budget stopped the search for a smallest conflicting set, so some of "
                      "them may not take part",
                      count, count == 1 ? "" : "s", count == 1 ? "s" : "");
        else
            diag_note(g, p->diags,
                      "%d decision%s of this mapping conflict%s: relaxing any one of them (a "
                      "hole `?` lets the optimizer choose) makes the space feasible",
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

/* Complete mappings of the space: configurations x partitions (paths over
 * the positions). */
static double space_size(Arena *a, const OptSpace *sp) {
    if (sp->cfg_count == 0) return 0;
    double *ways = ARENA_ARRAY(a, double, sp->S + 1);
    ways[sp->S] = 1;
    for (int i = sp->S - 1; i >= 0; i--)
        for (int q = sp->start_first[i]; q < sp->start_first[i + 1]; q++)
            ways[i] += ways[i + sp->arcs[sp->start_arcs[q]].count];
    return sp->enumerated * ways[0];
}

static void record(SolverReport *r, const OptSpace *sp, const Model *md, int nk) {
    (void)nk;
    double cand = sp->enumerated * sp->arc_count;
    r->candidates = cand < 9e18 ? (long)cand : LONG_MAX;
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

/* Bytes lp_solve would take for the model of the kept configurations:
 * about 64 per nonzero (matrix, presolve copies) and 320 per column and
 * row (bounds, names, hash). */
static size_t model_bytes(const OptSpace *sp, const Search *se) {
    double nz = 0, cols = sp->arc_count, rows = 1;
    for (int k = 0; k < se->nk; k++) {
        cols += 1;
        rows += sp->S;
        for (int x = 0; x < sp->arc_count; x++)
            if (!se->kept[k].pruned[x]) {
                cols += 1;
                nz += sp->arcs[x].count + 6;
                rows += se->kept[k].row[x].feasible ? 0 : 1;
            }
    }
    rows += 4.0 * sp->arc_count;
    double bytes = 64 * nz + 320 * (cols + rows);
    return bytes < 1e18 ? (size_t)bytes : SIZE_MAX;
}

/* The frontier point (L*, E*) of least product over the kept
 * configurations (exact bi-objective shortest paths); returns L* x E*. */
static double edp_frontier(const OptSpace *sp, const Search *se, double *bl, double *be) {
    double bp = INFINITY;
    for (int k = 0; k < se->nk; k++) {
        Arena t = {0};
        Labels *at = pareto_front(&t, sp, &se->kept[k]);
        const Labels *f = &at[sp->S];
        for (int q = 0; q < f->n; q++)
            if (f->l[q] * f->e[q] < bp) {
                bp = f->l[q] * f->e[q];
                *bl = f->l[q];
                *be = f->e[q];
            }
        arena_free_all(&t);
    }
    return bp;
}

/* Fills the holes of m with the chosen configuration and partition and
 * checks the model's numbers against the cost model. */
static void finish(Arena *out, Program *p, IrMapping *m, const OptSpace *sp, const Search *se,
                   const SolveOut *best, Objective obj, SolverReport *report, double t0) {
    if (getenv("CMTC_OPT_STATS"))
        fprintf(stderr,
                "optimize %s: %ld configurations (%d splits), %d arcs, %ld lowerings, %ld memo "
                "hits, %ld implied, %ld cut without lowering, %ld part way; pruned: arcs %ld, "
                "capacity %ld, dominance %ld, bound %ld, level %ld; kept %d; model %ld rows %ld "
                "columns; %.3f s\n",
                m->name, (long)sp->enumerated, sp->split_count, sp->arc_count, sp->evaluations,
                se->memo_hits, se->implied, se->comp_hits, se->window_cuts, sp->pruned_arcs,
                sp->pruned_capacity, sp->pruned_dominance, sp->pruned_bound, sp->pruned_level,
                se->nk, report->rows, report->columns, opt_now() - t0);
    const Kept *k = &se->kept[best->kept];
    opt_apply(out, sp, m, k->cfg, best->arcs, best->arc_count);
    EvalResult ev;
    /* a step's weights already count the repeats (docs/optimizer.md 4.1) */
    double rep = sp->weighted ? 1 : m->repeat > 0 ? (double)m->repeat : 1;
    if (evaluate_mapping(m, NULL, &ev) == EVAL_OK) {
        double model = objective_of(obj, best->lat * rep, best->en * rep);
        double real = objective_of(obj, ev.cost.latency_s, ev.cost.energy_j);
        report->objective = real;
        if (fabs(model - real) > 1e-6 * fabs(real) + 1e-300)
            diag_warning(p->diags, config_span(m), "E0379",
                         "the optimizer's model of %s gives %s %.6g but the cost model gives "
                         "%.6g: the mapping may not be optimal",
                         m->name, objective_name(obj), model, real);
    }
}

/* The end of a search answered without the MILP (shortest paths, or the
 * runs of a pipeline): the mapping of `best`, exact or not, or E0371 when
 * there is none. */
static bool finish_without_model(Arena *out, Program *p, IrMapping *m, const OptSpace *sp,
                                 const Search *se, const SolveOut *best, Objective obj,
                                 const OptimizeOptions *opts, SolverReport *report, double t0,
                                 Progress *pg, Arena *arena, bool exact) {
    progress_clear(pg);
    report->seconds = opt_now() - t0;
    record(report, sp, NULL, se->nk);
    if (!best->have) {
        diag_error(p->diags, config_span(m), "E0371",
                   "time limit of %g s reached before any mapping of %s that fits was found",
                   opts ? opts->time_limit_s : 0, m->name);
        report->status = SOLVER_TIME_LIMIT;
        arena_free_all(arena);
        return false;
    }
    finish(out, p, m, sp, se, best, obj, report, t0);
    report->status = exact ? SOLVER_OPTIMAL : SOLVER_TIME_LIMIT;
    report->gap = exact ? 0 : 1;
    arena_free_all(arena);
    return true;
}

/* Whether a choice of outer holes may beat another choice's value, the
 * incumbent (docs/optimizer.md 4.2): its space searched with every cut at
 * the incumbent itself, not at the window past it, and nothing kept,
 * until one configuration reaches within PROBE_MARGIN of it.  When none
 * does, the choice's own search could not return a better mapping, and
 * nothing of it is observable but the size of its space, which the report
 * gets as that search would give it.  When one does, or the probe stops
 * early (budget, limit), the choice is searched as usual. */
static bool beats_incumbent(const IrMapping *m, Objective obj, double incumbent, size_t budget,
                            Progress *pg, SolverReport *report) {
    Arena arena = {0};
    OptSpace *sp = opt_space_build(&arena, m, true, 0, budget, OPT_CONFIG_LIMIT);
    Search se = {0};
    se.arena = &arena;
    se.sp = sp;
    se.run_step = m->pipeline.full_arch && obj == OBJ_LATENCY;
    se.probe = true;
    double rep = sp->weighted || m->repeat < 1 ? 1 : (double)m->repeat;
    se.incumbent = incumbent / rep;
    if (sp->stop == OPT_STOP_NONE) search_space(&se, obj, pg);
    bool may = se.may_improve || sp->stop != OPT_STOP_NONE || sp->truncated || se.timed_out;
    if (!may) {
        report->space = space_size(&arena, sp);
        record(report, sp, NULL, 0);
        report->status = SOLVER_FAILED;
        if (getenv("CMTC_OPT_STATS"))
            fprintf(stderr,
                    "probe %s: %d configurations, %ld lowerings, %ld cut without lowering, %ld "
                    "part way: cannot beat %.9g\n",
                    m->name, sp->cfg_count, sp->evaluations, se.comp_hits, se.window_cuts,
                    incumbent);
    }
    arena_free_all(&arena);
    return may;
}

/* Fills the holes of `m`, a copy of the checked mapping in `out`.
 * explain: an infeasible space is explained (E0370); not for the choices
 * of outer holes, whose own reasons are dropped (the first choice is
 * solved again to explain when none has a mapping). */
static bool fill_holes(Arena *out, Program *p, IrMapping *m, const OptimizeOptions *opts,
                       SolverReport *report, double incumbent, bool explain) {
    memset(report, 0, sizeof *report);
    if (m->hole_count == 0) {
        report->status = SOLVER_NOT_NEEDED;
        return true;
    }
    /* `tile L: ? 64` (an index hole) is not searched: say so */
    for (int k = 0; k < m->tile.index_hole_count; k++) {
        Diag *d = diag_error(p->diags, m->tile.index_hole_span[k], "E0375",
                             "the optimizer does not choose the index of a tile entry");
        diag_help(d, p->diags, "name the index and leave its size to the optimizer: `%s ?`",
                  m->op->index_count > 0 ? m->op->indices[0].name : "i");
    }
    if (m->tile.index_hole_count > 0) {
        report->status = SOLVER_FAILED;
        return false;
    }
    /* lowering needs an arch the schedule IR can hold (the language
     * server calls here without compile's check) */
    if (report_unsupported(p, m)) {
        report->status = SOLVER_FAILED;
        return false;
    }
    if (opts && opts->exhaustive) return opt_exhaustive(out, p, m, opts, report);
    double t0 = opt_now();
    Objective obj = opts && opts->objective_given ? opts->objective : m->objective;
    if (m->pipeline.full_arch && obj == OBJ_EDP) {
        /* the best product need not be a shortest path's: the sends the
         * run adds are not in the arcs' costs */
        Diag *d = diag_error(p->diags, m->pipeline.span, "E0357",
                             "the optimizer does not fill holes under a pipeline for objective "
                             "edp");
        diag_help(d, p->diags, "choose `objective latency` or `energy` (docs/errors/E0357.md)");
        report->status = SOLVER_FAILED;
        return false;
    }
    double deadline = opts && opts->time_limit_s > 0 ? t0 + opts->time_limit_s : 0;
    Progress pg = {isatty(2) != 0, t0, 0, m->name, 1, "s", deadline};
    size_t budget = opt_budget_bytes();
    if (incumbent < INFINITY && obj != OBJ_EDP && deadline == 0 &&
        !beats_incumbent(m, obj, incumbent, budget, &pg, report)) {
        report->seconds = opt_now() - t0;
        return false;
    }
    Arena arena = {0};
    OptSpace *sp = opt_space_build(&arena, m, true, deadline, budget, OPT_CONFIG_LIMIT);
    report->method = obj == OBJ_EDP ? "milp, edp frontier" : "milp";
    Search se = {0};
    se.arena = &arena;
    se.sp = sp;
    se.run_step = m->pipeline.full_arch && obj == OBJ_LATENCY;
    /* the incumbent in the search's units: per repeat unless the arcs
     * are weighted for a step (section 4.1) */
    double rep = sp->weighted || m->repeat < 1 ? 1 : (double)m->repeat;
    se.incumbent = incumbent / (obj == OBJ_EDP ? rep * rep : rep);
    if (se.run_step) report->method = "shortest paths, pipeline runs";
    if (sp->stop == OPT_STOP_NONE || sp->stop == OPT_STOP_TIME) search_space(&se, obj, &pg);
    /* the limit on configurations and the memory budget are errors; the
     * time limit gives the best mapping found in time */
    if (opt_report_stop(p, sp, config_span(m), OPT_CONFIG_LIMIT)) {
        progress_clear(&pg);
        report->status = SOLVER_FAILED;
        report->seconds = opt_now() - t0;
        arena_free_all(&arena);
        return false;
    }
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
        } else if (incumbent < INFINITY) {
            /* nothing here beats another choice: no reason to give */
        } else if (!explain) {
            report->status = SOLVER_FAILED; /* its reasons would be dropped */
        } else {
            size_t held = arena.used_total;
            explain_infeasible(p, m, &se, deadline, budget > held ? budget - held : 0);
            report->status = SOLVER_FAILED;
        }
        arena_free_all(&arena);
        return false;
    }
    /* every configuration was cut by another choice's value (4.2) */
    if (se.nk == 0 && incumbent < INFINITY && !timed_out) {
        progress_clear(&pg);
        report->seconds = opt_now() - t0;
        record(report, sp, NULL, 0);
        report->status = SOLVER_FAILED;
        arena_free_all(&arena);
        return false;
    }
    /* a pipeline: the best run of the kept configurations (section 4.1) */
    if (se.run_step) {
        SolveOut best;
        run_step_solution(&arena, sp, se.kept, se.nk, &best);
        return finish_without_model(out, p, m, sp, &se, &best, obj, opts, report, t0, &pg, &arena,
                                    !timed_out);
    }
    /* past the deadline, or a model past the budget: the shortest paths
     * of section 3 give the best mapping of what was costed */
    if (opt_past_deadline(sp) || !opt_reserve(sp, model_bytes(sp, &se), "the MILP model")) {
        SolveOut best;
        bool over = sp->stop == OPT_STOP_BUDGET;
        if (obj == OBJ_EDP) {
            double bl = INFINITY, be = INFINITY;
            edp_frontier(sp, &se, &bl, &be);
            dp_edp_solution(&arena, sp, se.kept, se.nk, bl, be, &best);
        } else {
            dp_solution(&arena, sp, se.kept, se.nk, obj, &best);
        }
        report->method =
            over ? "shortest path (model past the memory budget)" : "shortest path (time limit)";
        /* exact over the configurations kept, which were all that were
         * costed unless the time ran out */
        return finish_without_model(out, p, m, sp, &se, &best, obj, opts, report, t0, &pg, &arena,
                                    over && !timed_out);
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
        double bl = INFINITY, be = INFINITY;
        double bp = edp_frontier(sp, &se, &bl, &be);
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
    finish(out, p, m, sp, &se, &best, obj, report, t0);
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

/* A mapping with outer holes (docs/optimizer.md 4.2): every choice its
 * check kept is solved (or evaluated, when complete) for the step, each
 * with the best value found so far as its incumbent, and the best one
 * wins.  Each choice's answer is exact for it, so the best of them is
 * exact for the whole space. */
static IrMapping *optimize_choices(Arena *out, Program *p, const IrMapping *m,
                                   const OptimizeOptions *opts, SolverReport *report) {
    double t0 = opt_now();
    memset(report, 0, sizeof *report);
    Objective obj = opts && opts->objective_given ? opts->objective : m->objective;
    IrMapping *best = NULL;
    double best_value = INFINITY;
    SolverReport best_report = {0};
    bool exact = true;
    double space = 0;
    long candidates = 0;
    double fastest_over = INFINITY; /* the fastest step past `under` */
    for (int i = 0; i < m->choice_count; i++) {
        OptimizeOptions o = {0};
        if (opts) o = *opts;
        if (o.time_limit_s > 0) {
            o.time_limit_s -= opt_now() - t0;
            if (o.time_limit_s <= 0) {
                exact = false;
                break;
            }
        }
        o.emit_lp_path = NULL; /* one model per choice: not written */
        IrMapping *c = ARENA_NEW(out, IrMapping);
        *c = *m->choices[i];
        SolverReport r = {0};
        bool ok = true;
        double tc = opt_now();
        if (c->hole_count > 0) {
            /* a choice's own reasons are not the mapping's */
            DiagSink scratch, *real = p->diags;
            diags_init(&scratch, out);
            p->diags = &scratch;
            /* a serving batch's choices compare per sequence: the best so far
               bounds this one's latency only through its own batch */
            double incumbent = o.exhaustive || c->serve.batch_chosen ? INFINITY : best_value;
            ok = fill_holes(out, p, c, &o, &r, incumbent, false);
            p->diags = real;
        }
        if (r.status == SOLVER_TIME_LIMIT) exact = false;
        if (getenv("CMTC_OPT_STATS"))
            fprintf(stderr, "choice %d (%s): %s, %s, %.3f s\n", i, c->choice_text,
                    solver_status_name(r.status), ok ? "solved" : "no mapping", opt_now() - tc);
        space += r.space > 0 ? r.space : 1;
        candidates += r.candidates;
        if (!ok || c->hole_count > 0) continue;
        EvalResult ev;
        if (evaluate_mapping(c, NULL, &ev) != EVAL_OK || !ev.feasible) continue;
        double v = objective_of(obj, ev.cost.latency_s, ev.cost.energy_j);
        if (c->serve.batch_chosen) {
            /* `serve ... of B = ?` (docs/language.md 5.12): the most tokens
               per second, or the least energy per token, among the batches
               whose step meets the bound */
            if (c->serve.limit_s > 0 && ev.cost.latency_s > c->serve.limit_s) {
                if (ev.cost.latency_s < fastest_over) fastest_over = ev.cost.latency_s;
                continue;
            }
            double b = (double)c->serve.sequences;
            v = objective_of(obj, ev.cost.latency_s / b, ev.cost.energy_j / b);
        }
        if (v < best_value) {
            best_value = v;
            best = c;
            best_report = r;
        }
    }
    if (!best) {
        /* why: the first choice's reasons */
        IrMapping *c = ARENA_NEW(out, IrMapping);
        *c = *m->choices[0];
        SolverReport r;
        bool explained = c->hole_count > 0 && !fill_holes(out, p, c, opts, &r, INFINITY, true);
        if (explained) *report = r;
        if (exact && isfinite(fastest_over)) {
            Diag *d =
                diag_error(p->diags, m->choice_span, "E0364",
                           "no batch of %s meets `under %s`: the fastest step takes %s", m->name,
                           unit_format(out, m->serve.limit_s, (UnitDim){BU_SECOND, BU_NONE}),
                           unit_format(out, fastest_over, (UnitDim){BU_SECOND, BU_NONE}));
            diag_help(d, p->diags, "split the step over more devices, or allow a longer step");
            report->status = SOLVER_FAILED;
        } else if (!exact) {
            diag_error(p->diags, m->choice_span, "E0371",
                       "time limit reached before any choice of %s's outer holes was solved",
                       m->name);
            report->status = SOLVER_TIME_LIMIT;
        } else {
            Diag *d = diag_error(p->diags, m->choice_span, "E0358",
                                 "none of the %d choices of %s's outer holes has a mapping that "
                                 "fits",
                                 m->choice_count, m->name);
            /* a first choice without holes of its own did not fit: say by
             * how much (the smallest batch's caches, the first pipeline's
             * activations) */
            bool measured = false;
            if (!explained && c->hole_count == 0) {
                DiagSink why;
                diags_init(&why, out);
                report_capacity(lower_mapping(out, c, true, NULL), &why);
                if (why.count > 0) {
                    diag_note(d, p->diags, "the first choice (%s) does not fit: %s",
                              c->choice_text ? c->choice_text : "its defaults",
                              why.items[0]->message);
                    measured = true;
                }
            }
            if (!measured)
                diag_note(d, p->diags,
                          explained ? "the first choice's reasons are reported with this error"
                                    : "docs/errors/E0358.md");
            report->status = SOLVER_FAILED;
        }
        report->seconds = opt_now() - t0;
        return NULL;
    }
    *report = best_report;
    report->status = exact ? SOLVER_OPTIMAL : SOLVER_TIME_LIMIT;
    report->gap = exact ? 0 : 1;
    report->seconds = opt_now() - t0;
    report->space = space;
    report->candidates = candidates;
    report->objective = best_value;
    report->method =
        arena_printf(out, "%d choices of %s (%s)", m->choice_count,
                     m->serve.batch_chosen ? "the serving batch and any other outer hole"
                     : m->overlap_chosen   ? "the overlap and any other outer hole"
                                           : "pipeline, micro-batches, recomputation",
                     best_report.method ? best_report.method : "complete");
    best->choices = NULL;
    best->choice_count = 0;
    return best;
}

IrMapping *optimize_mapping(Arena *out, Program *p, const IrMapping *m, const OptimizeOptions *opts,
                            SolverReport *report) {
    if (m->choice_count > 0) return optimize_choices(out, p, m, opts, report);
    IrMapping *filled = ARENA_NEW(out, IrMapping);
    *filled = *m; /* the checked mapping's arrays are shared, never written */
    if (!fill_holes(out, p, filled, opts, report, INFINITY, true) || filled->hole_count > 0)
        return NULL;
    return filled;
}
