/* mask.c — a statement's restriction (`where x <= y + k`, its own or
 * inherited) on the tile grid its schedule walks (docs/cost-model.md
 * section 3.1).  The ranges of x and of y that one instance walks follow
 * the deal of section 1.1 and the tiles of section 2 exactly: at each
 * level the dims entering there deal each tile of the level above out in
 * whole blocks, and the share is cut into the level's tiles, the last one
 * short.  The instance chosen is the compute instance whose compute
 * tiles that intersect the allowed region hold the most points (a
 * triangle's busiest is its last row block, not the first); the ranges of
 * its ancestor at each level are kept for the traffic. */
#include "ir/schedule.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The parts the dims entering level l deal index i into for statement ss
 * (level 0: the dims outside the outermost memory). */
static double parts_at(const Schedule *s, const SchedStmt *ss, int l, int i) {
    if (l >= 1) return sched_split_between(s, ss, l - 1, l, i);
    double p = 1;
    for (int d = 0; d < s->arch->dim_count; d++)
        if (ss->split[d] == i && sched_dim_outside(s, d, 0)) p *= (double)s->arch->dims[d].size;
    return p;
}

typedef struct RangeList {
    SchedRange *r;
    int n, cap;
} RangeList;

static void push_range(Arena *a, RangeList *l, double lo, double hi, int parent) {
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        l->r = arena_realloc(a, l->r, sizeof(SchedRange) * (size_t)l->cap,
                             sizeof(SchedRange) * (size_t)cap);
        l->cap = cap;
    }
    l->r[l->n++] = (SchedRange){lo, hi, parent};
}

/* The ranges of index i that the instance with child position kv[l] at
 * each level walks, level by level (levels 0 .. s->levels). */
static void walk_ranges(const Schedule *s, const SchedStmt *ss, int i, const int *kv,
                        RangeList *out) {
    int I = s->op->index_count;
    double e = (double)s->op->indices[i].extent;
    double p0 = parts_at(s, ss, 0, i);
    double q0 = ceil(e / p0), lo0 = kv[0] * q0, hi0 = fmin(lo0 + q0, e);
    memset(out, 0, sizeof(RangeList) * (size_t)(s->levels + 1));
    if (lo0 < hi0) push_range(s->arena, &out[0], lo0, hi0, -1);
    for (int l = 1; l <= s->levels; l++) {
        double p = parts_at(s, ss, l, i);
        int64_t given = (l < s->levels && s->m->tile.size) ? s->m->tile.size[l * I + i] : IR_UNSET;
        double block = given >= 1 ? (double)given : 1;
        double t = ss->tile[sched_li(s, l, i)];
        if (t < 1) t = 1;
        for (int j = 0; j < out[l - 1].n; j++) {
            double lo = out[l - 1].r[j].lo, hi = out[l - 1].r[j].hi;
            if (p > 1) {
                double q = ceil(ceil((hi - lo) / block) / p);
                double nlo = fmin(lo + kv[l] * q * block, hi);
                double nhi = fmin(lo + (kv[l] + 1) * q * block, hi);
                lo = nlo;
                hi = nhi;
            }
            for (double a = lo; a < hi; a += t)
                push_range(s->arena, &out[l], a, fmin(a + t, hi), j);
        }
    }
}

/* Advances the child positions kv over every instance (false at the
 * end). */
static bool next_instance(const Schedule *s, const SchedStmt *ss, int i, int *kv) {
    for (int l = s->levels; l >= 0; l--) {
        if (++kv[l] < (int)parts_at(s, ss, l, i)) return true;
        kv[l] = 0;
    }
    return false;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The y ranges sorted by their end, with the suffix sums of their
 * lengths: the ranges with hi >= h are those from lower_bound(h) on. */
typedef struct Sorted {
    double *hi, *len_suffix;
    int n;
} Sorted;

static Sorted sort_ranges(Arena *a, const SchedRange *r, int n) {
    Sorted o = {ARENA_ARRAY(a, double, n + 1), ARENA_ARRAY(a, double, n + 1), n};
    double *tmp = ARENA_ARRAY(a, double, 2 * n + 2);
    for (int j = 0; j < n; j++) {
        tmp[2 * j] = r[j].hi;
        tmp[2 * j + 1] = r[j].hi - r[j].lo;
    }
    qsort(tmp, (size_t)n, 2 * sizeof(double), cmp_double);
    o.len_suffix[n] = 0;
    for (int j = n - 1; j >= 0; j--) {
        o.hi[j] = tmp[2 * j];
        o.len_suffix[j] = o.len_suffix[j + 1] + tmp[2 * j + 1];
    }
    return o;
}

static int lower_bound(const double *v, int n, double want) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v[mid] < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Points and tile pairs of x ranges against sorted y ranges that meet
 * x <= y + k somewhere: x.lo <= y.hi - 1 + k. */
static void count_visited(const SchedRange *x, int nx, const Sorted *y, int64_t k, double *points,
                          double *tiles) {
    *points = *tiles = 0;
    for (int j = 0; j < nx; j++) {
        int at = lower_bound(y->hi, y->n, x[j].lo - (double)k + 1);
        *points += (x[j].hi - x[j].lo) * y->len_suffix[at];
        *tiles += y->n - at;
    }
}

SchedMask *sched_mask_build(const Schedule *s, int st) {
    const IrStmt *is = &s->op->stmts[st];
    const SchedStmt *ss = &s->stmts[st];
    int x, y;
    int64_t k;
    if (!ir_pred_canon(&is->mask, &x, &y, &k)) return NULL;
    if (!ir_stmt_uses_index(is, x) || !ir_stmt_uses_index(is, y) || x == y) return NULL;
    int L = s->levels;
    Arena *a = s->arena;
    SchedMask *mk = ARENA_NEW(a, SchedMask);
    mk->x = x;
    mk->y = y;
    mk->k = k;
    /* every y instance's compute tiles, sorted once */
    int ycount = 0, ycap = 8;
    Sorted *ysorted = ARENA_ARRAY(a, Sorted, ycap);
    int *ky = ARENA_ARRAY(a, int, L + 1), *kx = ARENA_ARRAY(a, int, L + 1);
    int **ykv = ARENA_ARRAY(a, int *, ycap);
    RangeList *lists = ARENA_ARRAY(a, RangeList, L + 1);
    do {
        if (ycount == ycap) {
            ysorted = arena_realloc(a, ysorted, sizeof(Sorted) * (size_t)ycap,
                                    sizeof(Sorted) * (size_t)ycap * 2);
            ykv = arena_realloc(a, ykv, sizeof(int *) * (size_t)ycap,
                                sizeof(int *) * (size_t)ycap * 2);
            ycap *= 2;
        }
        walk_ranges(s, ss, y, ky, lists);
        ysorted[ycount] = sort_ranges(a, lists[L].r, lists[L].n);
        ykv[ycount] = ARENA_ARRAY(a, int, L + 1);
        memcpy(ykv[ycount], ky, sizeof(int) * (size_t)(L + 1));
        ycount++;
    } while (next_instance(s, ss, y, ky));
    int *best_x = ARENA_ARRAY(a, int, L + 1);
    int best_y = 0;
    double best = -1;
    do {
        walk_ranges(s, ss, x, kx, lists);
        double xpoints = 0;
        for (int j = 0; j < lists[L].n; j++) xpoints += lists[L].r[j].hi - lists[L].r[j].lo;
        for (int q = 0; q < ycount; q++) {
            double points, tiles;
            count_visited(lists[L].r, lists[L].n, &ysorted[q], k, &points, &tiles);
            mk->every_visited += points;
            if (points > best) {
                best = points;
                memcpy(best_x, kx, sizeof(int) * (size_t)(L + 1));
                best_y = q;
                mk->visited_points = points;
                mk->visited_tiles = tiles;
                mk->all_points = xpoints * ysorted[q].len_suffix[0];
                mk->all_tiles = (double)lists[L].n * ysorted[q].n;
            }
        }
    } while (next_instance(s, ss, x, kx));
    mk->every_points = (double)s->op->indices[x].extent * (double)s->op->indices[y].extent;
    mk->kx = best_x;
    mk->ky = ykv[best_y];
    mk->xs = ARENA_ARRAY(a, SchedRange *, L + 1);
    mk->ys = ARENA_ARRAY(a, SchedRange *, L + 1);
    mk->nx = ARENA_ARRAY(a, int, L + 1);
    mk->ny = ARENA_ARRAY(a, int, L + 1);
    walk_ranges(s, ss, x, best_x, lists);
    for (int l = 0; l <= L; l++) {
        mk->xs[l] = lists[l].r;
        mk->nx[l] = lists[l].n;
    }
    walk_ranges(s, ss, y, ykv[best_y], lists);
    for (int l = 0; l <= L; l++) {
        mk->ys[l] = lists[l].r;
        mk->ny[l] = lists[l].n;
    }
    return mk;
}

/* The ranges of the level-`level` tiles grouped under their level-`at`
 * tile (at -1: one group), empty groups dropped; returns their count. */
static int group_ranges(Arena *a, SchedRange **r, const int *n, int level, int at,
                        SchedRange **out) {
    int groups = at < 0 ? 1 : n[at];
    SchedRange *g = ARENA_ARRAY(a, SchedRange, groups + 1);
    for (int j = 0; j < groups; j++) g[j] = (SchedRange){INFINITY, -INFINITY, 0};
    for (int j = 0; j < n[level]; j++) {
        int anc = j;
        for (int l = level; l > at && at >= 0; l--) anc = r[l][anc].parent;
        if (at < 0) anc = 0;
        if (r[level][j].lo < g[anc].lo) g[anc].lo = r[level][j].lo;
        if (r[level][j].hi > g[anc].hi) g[anc].hi = r[level][j].hi;
    }
    int m = 0;
    for (int j = 0; j < groups; j++)
        if (g[j].lo < g[j].hi) g[m++] = g[j];
    *out = g;
    return m;
}

double sched_mask_pairs(const SchedMask *mk, int level, int lx, int ly, double *all) {
    /* the ranges are few per call; a scratch arena keeps them off the
     * schedule's */
    Arena scratch = {0}, *a = &scratch;
    SchedRange *xg, *yg;
    int nx = group_ranges(a, mk->xs, mk->nx, level, lx, &xg);
    int ny = group_ranges(a, mk->ys, mk->ny, level, ly, &yg);
    Sorted sy = sort_ranges(a, yg, ny);
    double points, tiles;
    count_visited(xg, nx, &sy, mk->k, &points, &tiles);
    *all = (double)nx * ny;
    arena_free_all(a);
    return tiles;
}

double sched_mask_sized(const SchedMask *mk, int L, double sx, double sy) {
    Arena scratch = {0}, *a = &scratch;
    SchedRange *xr = ARENA_ARRAY(a, SchedRange, mk->nx[L] + 1);
    SchedRange *yr = ARENA_ARRAY(a, SchedRange, mk->ny[L] + 1);
    int nx = 0, ny = 0;
    for (int j = 0; j < mk->nx[L]; j++)
        if (mk->xs[L][j].hi - mk->xs[L][j].lo == sx) xr[nx++] = mk->xs[L][j];
    for (int j = 0; j < mk->ny[L]; j++)
        if (mk->ys[L][j].hi - mk->ys[L][j].lo == sy) yr[ny++] = mk->ys[L][j];
    Sorted s = sort_ranges(a, yr, ny);
    double points, tiles;
    count_visited(xr, nx, &s, mk->k, &points, &tiles);
    arena_free_all(a);
    return tiles;
}

/* ------------------------------------------------- loads in nest order */

/* One axis (x or y) of the walk: the loops over it, outermost first, and
 * at each the groups of the level-`level` tiles under one tile of that
 * loop's level, with the children of each group of the loop before. */
typedef struct Axis {
    int loops;
    double **lo, **hi;     /* [loop][group] */
    int **first, **last;   /* [loop][parent group]: its children [first, last) */
    double all_lo, all_hi; /* every tile: the range when no loop steps it */
} Axis;

static void build_axis(Arena *a, Axis *ax, SchedRange **r, const int *n, int level,
                       const int *levels, int loops) {
    ax->loops = loops;
    ax->lo = ARENA_ARRAY(a, double *, loops + 1);
    ax->hi = ARENA_ARRAY(a, double *, loops + 1);
    ax->first = ARENA_ARRAY(a, int *, loops + 1);
    ax->last = ARENA_ARRAY(a, int *, loops + 1);
    ax->all_lo = INFINITY;
    ax->all_hi = -INFINITY;
    int tiles = n[level];
    for (int t = 0; t < tiles; t++) {
        if (r[level][t].lo < ax->all_lo) ax->all_lo = r[level][t].lo;
        if (r[level][t].hi > ax->all_hi) ax->all_hi = r[level][t].hi;
    }
    int *prev = ARENA_ARRAY(a, int, tiles + 1); /* each tile's group at the loop before */
    int prev_groups = 1;
    for (int j = 0; j < loops; j++) {
        int *grp = ARENA_ARRAY(a, int, tiles + 1);
        ax->lo[j] = ARENA_ARRAY(a, double, tiles + 1);
        ax->hi[j] = ARENA_ARRAY(a, double, tiles + 1);
        ax->first[j] = ARENA_ARRAY(a, int, prev_groups + 1);
        ax->last[j] = ARENA_ARRAY(a, int, prev_groups + 1);
        int groups = 0, last_anc = -1;
        for (int t = 0; t < tiles; t++) {
            int anc = t;
            for (int l = level; l > levels[j]; l--) anc = r[l][anc].parent;
            if (anc != last_anc || groups == 0) {
                ax->lo[j][groups] = r[level][t].lo;
                ax->hi[j][groups] = r[level][t].hi;
                if (ax->first[j][prev[t]] == ax->last[j][prev[t]]) ax->first[j][prev[t]] = groups;
                groups++;
                ax->last[j][prev[t]] = groups;
                last_anc = anc;
            }
            int gi = groups - 1;
            if (r[level][t].lo < ax->lo[j][gi]) ax->lo[j][gi] = r[level][t].lo;
            if (r[level][t].hi > ax->hi[j][gi]) ax->hi[j][gi] = r[level][t].hi;
            grp[t] = gi;
        }
        prev = grp;
        prev_groups = groups;
    }
}

typedef struct Walk {
    const SchedMask *mk;
    Axis ax[2];
    int n;         /* loops walked */
    int *kind;     /* [pos]: 0 over x, 1 over y, 2 other */
    double *trips; /* [pos] for other loops */
    bool *moves;   /* [pos]: over an index of the tensor */
    int *coord, *last;
    bool any;
    bool has_x, has_y; /* the tensor has x, y */
    double loads, xy;  /* loads, and the x-by-y extent of their tiles summed */
    int *local;        /* [pos]: the position inside the enclosing tile */
    int prefix;        /* positions of the rows counted by single_rows */
    bool in_row;       /* a row is open */
    int *row, row_tiles;
    double singles;            /* closed rows with a single tile */
    double row_xy, singles_xy; /* the open row's x-by-y extent; the singles' */
    uint8_t *steps;            /* when set: loaders per lockstep step */
} Walk;

static void walk_nest(Walk *w, int pos, int gx, int gy, int jx, int jy) {
    double xlo = jx ? w->ax[0].lo[jx - 1][gx] : w->ax[0].all_lo;
    double yhi = jy ? w->ax[1].hi[jy - 1][gy] : w->ax[1].all_hi;
    /* a region wholly outside stays outside in every tile inside it */
    if (xlo > yhi - 1 + (double)w->mk->k) return;
    if (pos == w->n) {
        if (w->row) {
            bool new_row = !w->in_row;
            for (int p = 0; p < w->prefix && !new_row; p++) new_row = w->coord[p] != w->row[p];
            if (new_row) {
                if (w->in_row && w->row_tiles == 1) w->singles++, w->singles_xy += w->row_xy;
                memcpy(w->row, w->coord, sizeof(int) * (size_t)(w->prefix + 1));
                w->in_row = true;
                w->row_tiles = 0;
                w->any = false; /* a row starts on its own tile */
            }
        }
        bool same = w->any;
        for (int p = 0; p < w->n && same; p++)
            if (w->moves[p] && w->coord[p] != w->last[p]) same = false;
        if (!same) {
            w->loads++;
            w->row_tiles++;
            if (w->steps) {
                double key = 0;
                for (int p = 0; p < w->n; p++) key = key * w->trips[p] + w->local[p];
                if (w->steps[(size_t)key] < 255) w->steps[(size_t)key]++;
            }
            double ex = jx ? w->ax[0].hi[jx - 1][gx] - xlo : w->ax[0].all_hi - xlo;
            double ylo = jy ? w->ax[1].lo[jy - 1][gy] : w->ax[1].all_lo;
            w->row_xy = (w->has_x ? ex : 1) * (w->has_y ? yhi - ylo : 1);
            w->xy += w->row_xy;
        }
        memcpy(w->last, w->coord, sizeof(int) * (size_t)w->n);
        w->any = true;
        return;
    }
    if (w->kind[pos] == 2) {
        for (int c = 0; c < (int)w->trips[pos]; c++) {
            w->coord[pos] = c;
            w->local[pos] = c;
            walk_nest(w, pos + 1, gx, gy, jx, jy);
        }
        return;
    }
    int a = w->kind[pos], j = a ? jy : jx, parent = a ? gy : gx;
    const Axis *ax = &w->ax[a];
    if (j == 0) parent = 0;
    for (int c = ax->first[j][parent]; c < ax->last[j][parent]; c++) {
        w->coord[pos] = c;
        w->local[pos] = c - ax->first[j][parent];
        if (a)
            walk_nest(w, pos + 1, gx, c, jx, jy + 1);
        else
            walk_nest(w, pos + 1, c, gy, jx + 1, jy);
    }
}

/* Sets up the walk of st's loops before upto at levels <= level; false
 * when it is too large.  *other gets the product of the trips of the
 * loops over neither x nor y, *levels_x / *levels_y the levels of the
 * loops over x and y (counts in nl). */
static bool walk_setup(Arena *a, Walk *w, const Schedule *s, const SchedGroup *g, int st,
                       int tensor, int level, int upto, double *other, int **lv, int *nl,
                       double *product) {
    const SchedStmt *ss = &s->stmts[st];
    const IrStmt *is = &s->op->stmts[st];
    const SchedMask *mk = ss->mask;
    w->mk = mk;
    w->has_x = sched_access_has_index(s, st, tensor, mk->x);
    w->has_y = sched_access_has_index(s, st, tensor, mk->y);
    w->kind = ARENA_ARRAY(a, int, upto + 1);
    w->trips = ARENA_ARRAY(a, double, upto + 1);
    w->moves = ARENA_ARRAY(a, bool, upto + 1);
    w->coord = ARENA_ARRAY(a, int, upto + 1);
    w->last = ARENA_ARRAY(a, int, upto + 1);
    w->local = ARENA_ARRAY(a, int, upto + 1);
    lv[0] = ARENA_ARRAY(a, int, upto + 1);
    lv[1] = ARENA_ARRAY(a, int, upto + 1);
    nl[0] = nl[1] = 0;
    *product = 1;
    *other = 1;
    for (int k = 0; k < upto && k < g->loop_count; k++) {
        const SchedLoop *lp = &g->loops[k];
        if (lp->level > level || !ir_stmt_uses_index(is, lp->index)) continue;
        double trips = ss->trips[sched_li(s, lp->level, lp->index)];
        if (trips <= 1) continue;
        int kind = lp->index == mk->x ? 0 : lp->index == mk->y ? 1 : 2;
        if (kind < 2) lv[kind][nl[kind]++] = lp->level;
        if (kind == 2) *other *= trips;
        w->kind[w->n] = kind;
        w->trips[w->n] = trips;
        w->moves[w->n] = sched_access_has_index(s, st, tensor, lp->index);
        w->n++;
        *product *= trips;
    }
    /* an enumeration beyond this many iterations is left to the
     * fraction of pairs (docs/cost-model.md 3.1) */
    return *product <= 4e6;
}

bool sched_mask_loads(const Schedule *s, const SchedGroup *g, int st, int tensor, int level,
                      int upto, double *loads, double *other, double *xy) {
    const SchedMask *mk = s->stmts[st].mask;
    Arena scratch = {0}, *a = &scratch;
    Walk w = {0};
    int *lv[2], nl[2];
    double product;
    if (!walk_setup(a, &w, s, g, st, tensor, level, upto, other, lv, nl, &product)) {
        arena_free_all(a);
        return false;
    }
    build_axis(a, &w.ax[0], mk->xs, mk->nx, level, lv[0], nl[0]);
    build_axis(a, &w.ax[1], mk->ys, mk->ny, level, lv[1], nl[1]);
    walk_nest(&w, 0, 0, 0, 0, 0);
    *loads = w.loads;
    *xy = w.xy;
    arena_free_all(a);
    return true;
}

bool sched_mask_children(const Schedule *s, const SchedGroup *g, int st, int tensor, int level,
                         int upto, double *xy_sum, double *any, double *multi) {
    const SchedStmt *ss = &s->stmts[st];
    const SchedMask *mk = ss->mask;
    int L = s->levels;
    double px = parts_at(s, ss, level, mk->x), py = parts_at(s, ss, level, mk->y);
    if (px <= 1 && py <= 1) return false;
    Arena scratch = {0}, *a = &scratch;
    Walk w = {0};
    int *lv[2], nl[2];
    double product, other;
    bool ok = walk_setup(a, &w, s, g, st, tensor, level, upto, &other, lv, nl, &product);
    if (ok) {
        w.steps = ARENA_ARRAY(a, uint8_t, (size_t)product + 1);
        int *kx = ARENA_ARRAY(a, int, L + 1), *ky = ARENA_ARRAY(a, int, L + 1);
        memcpy(kx, mk->kx, sizeof(int) * (size_t)(L + 1));
        memcpy(ky, mk->ky, sizeof(int) * (size_t)(L + 1));
        RangeList *lx = ARENA_ARRAY(a, RangeList, L + 1), *ly = ARENA_ARRAY(a, RangeList, L + 1);
        *xy_sum = 0;
        for (kx[level] = 0; kx[level] < (int)px; kx[level]++) {
            walk_ranges(s, ss, mk->x, kx, lx);
            for (ky[level] = 0; ky[level] < (int)py; ky[level]++) {
                walk_ranges(s, ss, mk->y, ky, ly);
                SchedRange **xr = ARENA_ARRAY(a, SchedRange *, L + 1);
                SchedRange **yr = ARENA_ARRAY(a, SchedRange *, L + 1);
                int *xn = ARENA_ARRAY(a, int, L + 1), *yn = ARENA_ARRAY(a, int, L + 1);
                for (int l = 0; l <= L; l++) {
                    xr[l] = lx[l].r, xn[l] = lx[l].n;
                    yr[l] = ly[l].r, yn[l] = ly[l].n;
                }
                if (!xn[level] || !yn[level]) continue;
                build_axis(a, &w.ax[0], xr, xn, level, lv[0], nl[0]);
                build_axis(a, &w.ax[1], yr, yn, level, lv[1], nl[1]);
                w.any = false;
                w.loads = w.xy = 0;
                walk_nest(&w, 0, 0, 0, 0, 0);
                *xy_sum += w.xy;
            }
        }
        *any = *multi = 0;
        for (size_t k = 0; k < (size_t)product; k++) {
            *any += w.steps[k] >= 1;
            *multi += w.steps[k] >= 2;
        }
    }
    arena_free_all(a);
    return ok;
}

double sched_mask_single_rows(const Schedule *s, const SchedGroup *g, int st, int tensor, int level,
                              int before, double *bytes) {
    const SchedStmt *ss = &s->stmts[st];
    const SchedMask *mk = ss->mask;
    const IrStmt *is = &s->op->stmts[st];
    SchedVisits v = sched_visits(s, g, st, &s->op->tensors[tensor], level);
    Arena scratch = {0}, *a = &scratch;
    Walk w = {0};
    int *lv[2], nl[2];
    double product, other, singles = 0;
    *bytes = 0;
    if (walk_setup(a, &w, s, g, st, tensor, level, v.depth + 1, &other, lv, nl, &product)) {
        for (int k = 0; k < before && k < g->loop_count; k++) {
            const SchedLoop *lp = &g->loops[k];
            if (lp->level <= level && ir_stmt_uses_index(is, lp->index) &&
                ss->trips[sched_li(s, lp->level, lp->index)] > 1 && k <= v.depth)
                w.prefix++;
        }
        w.row = ARENA_ARRAY(a, int, w.n + 1);
        build_axis(a, &w.ax[0], mk->xs, mk->nx, level, lv[0], nl[0]);
        build_axis(a, &w.ax[1], mk->ys, mk->ny, level, lv[1], nl[1]);
        walk_nest(&w, 0, 0, 0, 0, 0);
        if (w.in_row && w.row_tiles == 1) w.singles++, w.singles_xy += w.row_xy;
        singles = w.singles * other;
        /* their bytes: the x-by-y extents over the mean of every load's */
        *bytes = w.xy > 0 ? w.singles_xy * other / (w.xy / w.loads) : 0;
    }
    arena_free_all(a);
    return singles;
}
