/* space.c — the space of a mapping with holes: split tables,
 * tile values, loop orders (configurations) and fusion arcs; scratch
 * mappings for evaluation; per-arc costs read from the lowering itself.
 * Every structure here is sized to the op, the arch and the mapping; every
 * loop whose length grows with them checks the clock, and every growing
 * allocation is checked against the memory budget first. */
#include "passes/optimize/space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double opt_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------- limits */

size_t opt_budget_bytes(void) {
    const char *env = getenv("CMTC_OPT_BUDGET_MB");
    if (env && *env) {
        char *end;
        double mb = strtod(env, &end);
        if (!*end && mb >= 1 && mb < 1e9) return (size_t)(mb * 1048576.0);
    }
    return OPT_BUDGET_BYTES;
}

bool opt_reserve(OptSpace *sp, size_t more, const char *phase) {
    if (sp->stop == OPT_STOP_BUDGET) return false;
    size_t total = opt_add(opt_add(sp->arena->used_total, sp->held), more);
    if (total <= sp->budget) return true;
    sp->stop = OPT_STOP_BUDGET;
    sp->truncated = true;
    sp->phase = phase;
    sp->wanted = 0; /* a growing phase: its own total is not known */
    return false;
}

bool opt_past_deadline(OptSpace *sp) {
    if (!(sp->deadline > 0) || opt_now() <= sp->deadline) return false;
    if (sp->stop == OPT_STOP_NONE) sp->stop = OPT_STOP_TIME;
    sp->truncated = true;
    return true;
}

bool opt_report_stop(Program *p, const OptSpace *sp, Span where, long config_limit) {
    if (sp->stop == OPT_STOP_BUDGET) {
        Arena *a = p->arena;
        UnitDim bytes = {BU_BYTE, BU_NONE};
        const char *budget = unit_format(a, (double)sp->budget, bytes);
        Diag *d =
            sp->wanted > 0
                ? diag_error(p->diags, where, "E0380",
                             "the optimizer's memory budget of %s is too small for mapping "
                             "%s: %s would take %s",
                             budget, sp->m->name, sp->phase, unit_format(a, sp->wanted, bytes))
                : diag_error(p->diags, where, "E0380",
                             "the optimizer's memory budget of %s is too small for mapping "
                             "%s: it ran out while storing %s",
                             budget, sp->m->name, sp->phase);
        diag_help(d, p->diags,
                  "fix some holes (a `fuse` line for some statements, a tile size, a split) or "
                  "raise the budget with CMTC_OPT_BUDGET_MB");
        return true;
    }
    if (sp->stop == OPT_STOP_LIMIT) {
        Diag *d = diag_error(p->diags, where, "E0373",
                             "the space of mapping %s has more than %ld configurations of "
                             "splits, tiles and orders",
                             sp->m->name, config_limit);
        diag_help(d, p->diags,
                  "fix some holes (a tile size, an order, a split), or search the outer and the "
                  "inner level in two steps: solve with the inner level's tiles given, then "
                  "paste the outer ones back and open the inner");
        return true;
    }
    return false;
}

/* Grows an arena array of `count` elements of `size` bytes to hold one
 * more, doubling; false (the budget) when it may not. */
static bool grow(OptSpace *sp, void **items, int count, int *cap, size_t size, const char *phase) {
    if (count < *cap) return true;
    if (*cap > INT32_MAX / 2) return opt_reserve(sp, SIZE_MAX, phase);
    int ncap = *cap ? *cap * 2 : 16;
    size_t bytes = opt_mul((size_t)ncap, size);
    if (!opt_reserve(sp, bytes, phase)) return false;
    *items = arena_realloc(sp->arena, *items, opt_mul((size_t)*cap, size), bytes);
    *cap = ncap;
    return true;
}
/* ------------------------------------------------------------ splits */

static bool dim_outside_level(const IrArch *a, int d, int level) {
    if (level >= a->level_count) return true; /* the compute: inside all */
    return a->dims[d].cluster < a->levels[level].clusters_outside;
}

/* A joint deal's dim (`(m, n) -> sm`, never a hole): its instances share
 * the indices out by cells, so it bounds no index's tile on its own. */
static bool joint_dim(const OptSpace *sp, int st, int d) {
    const int *j = sp->m->spatial.joint;
    return j && j[(st * sp->D + d) * (IR_MAX_JOINT - 1)] >= 0;
}

/* Per-instance extent of index i at level l for statement st. */
static int64_t instance_extent(const OptSpace *sp, const int *split, int st, int l, int i) {
    int64_t e = sp->op->indices[i].extent;
    for (int d = 0; d < sp->D; d++)
        if (split[st * sp->D + d] == i && !joint_dim(sp, st, d) &&
            dim_outside_level(sp->arch, d, l))
            e /= sp->arch->dims[d].size;
    return e;
}

/* Product of the dims splitting i for st inside level outer, outside inner. */
static int64_t split_between(const OptSpace *sp, const int *split, int st, int outer, int inner,
                             int i) {
    int64_t p = 1;
    for (int d = 0; d < sp->D; d++)
        if (split[st * sp->D + d] == i && !joint_dim(sp, st, d) &&
            !dim_outside_level(sp->arch, d, outer) && dim_outside_level(sp->arch, d, inner))
            p *= sp->arch->dims[d].size;
    return p;
}

/* Every index a statement splits is divided by the product of its dims. */
static bool split_divides(const OptSpace *sp, const int *split) {
    for (int st = 0; st < sp->S; st++) {
        const int *row = split + (size_t)st * (size_t)sp->D;
        for (int d = 0; d < sp->D; d++) {
            int i = row[d];
            /* a joint deal's cells (check_mapping.c checked them) */
            if (i < 0 || joint_dim(sp, st, d)) continue;
            bool first = true; /* each index once per statement */
            for (int e = 0; e < d; e++)
                if (row[e] == i) first = false;
            if (!first) continue;
            /* a split need not divide the extent (whole blocks are dealt
             * out, docs/cost-model.md section 1.1), but every instance
             * gets at least one element: a product past the extent is out
             * (and would overflow long before 16 large dims multiply) */
            int64_t parts = 1, extent = sp->op->indices[i].extent;
            for (int e = d; e < sp->D; e++) {
                if (row[e] != i) continue;
                int64_t size = sp->arch->dims[e].size;
                if (size == 1) continue;
                if (size < 1 || parts > extent / size) return false;
                parts *= size;
            }
            /* a given tile is no smaller than the split inside its level
             * (E0326) */
            for (int l = 1; l < sp->L; l++) {
                int64_t t = sp->m->tile.size[ir_tile_slot(sp->m, st, l, i)];
                if (t < 1 || !ir_stmt_uses_index(&sp->op->stmts[st], i)) continue;
                if (t < split_between(sp, split, st, l, sp->L, i)) return false;
            }
        }
    }
    return true;
}

/* May the hole of statement st on dim d take index i?  Not an index the
 * statement deals jointly on another dim: `(m, n) -> c, n -> r` splits n
 * twice (E0321). */
static bool may_take(const OptSpace *sp, int st, int d, int i) {
    for (int e = 0; sp->m->spatial.joint && e < sp->D; e++)
        if (e != d && joint_dim(sp, st, e) &&
            (sp->m->spatial.split[st * sp->D + e] == i ||
             sp->m->spatial.joint[(st * sp->D + e) * (IR_MAX_JOINT - 1)] == i))
            return false;
    if (!sp->split_allowed) return true;
    const uint64_t *set = sp->split_allowed + (size_t)(st * sp->D + d) * (size_t)sp->allowed_words;
    bool any = true;
    for (int w = 0; w < sp->allowed_words && any; w++)
        if (set[w]) any = false;
    return any || (set[i >> 6] >> (i & 63) & 1);
}

/* The options of one dim: sets of indices no hole statement uses two of,
 * each alone or with a fallback index. */
typedef struct DimOptions {
    int count, cap;
    size_t words;   /* per set: opt_words(I) */
    uint64_t *sets; /* count sets of `words` words; bit i: index i */
    int *fallback;  /* index split by the statements that use none of the
                       set, or -1 (sequence parallelism beside Megatron) */
    int fb_cap;
} DimOptions;

/* Depth-first enumeration of the valid sets of one dim. */
typedef struct SetWalk {
    OptSpace *sp;
    int d;
    DimOptions *o;
    int *cand, ncand;        /* candidate indices, ascending */
    int *users, *user_first; /* hole statements using candidate k:
                                users[user_first[k] .. user_first[k+1]) */
    int *used;               /* [S]: indices of the set the statement uses */
    uint64_t *set;           /* the set being built */
    int set_size;
    bool *fb_ok; /* [I]: scratch for the fallbacks of one set */
    long limit;  /* options past which the dim stops (0: none) */
    long steps;
} SetWalk;

/* Records the current set: first with each fallback index, the highest
 * first, then alone (the order the enumeration always had). */
static void emit_set(SetWalk *w) {
    OptSpace *sp = w->sp;
    DimOptions *o = w->o;
    int D = sp->D, I = sp->I;
    memset(w->fb_ok, 0, sizeof(bool) * (size_t)I);
    if (w->set_size >= 2)
        for (int st = 0; st < sp->S; st++) {
            if (!sp->split_hole[st * D + w->d] || w->used[st] > 0) continue;
            const IrStmt *is = &sp->op->stmts[st];
            int idx[2 * IR_MAX_RANK];
            int n = ir_stmt_indices(is, idx);
            for (int q = 0; q < n; q++)
                if (!bits_has(w->set, idx[q]) && may_take(sp, st, w->d, idx[q]))
                    w->fb_ok[idx[q]] = true;
        }
    for (int fb = I; fb >= -1; fb--) {
        if (fb == I || (fb >= 0 && !w->fb_ok[fb])) continue;
        if (w->limit > 0 && o->count >= w->limit) {
            sp->stop = OPT_STOP_LIMIT;
            sp->truncated = true;
            return;
        }
        if (!grow(sp, (void **)&o->sets, o->count, &o->cap, o->words * sizeof(uint64_t),
                  "the split options") ||
            !grow(sp, (void **)&o->fallback, o->count, &o->fb_cap, sizeof(int),
                  "the split options"))
            return;
        memcpy(o->sets + (size_t)o->count * o->words, w->set, o->words * sizeof(uint64_t));
        o->fallback[o->count++] = fb;
    }
}

/* Candidates k-1 .. 0 are still open; the set is built from the highest
 * candidate down, leaving an index out before taking it in, so sets come
 * in increasing order of their bits (the empty set, no split, first). */
static void walk_sets(SetWalk *w, int k) {
    OptSpace *sp = w->sp;
    if (sp->truncated) return;
    if ((++w->steps & 4095) == 0 && opt_past_deadline(sp)) return;
    if (k == 0) {
        emit_set(w);
        return;
    }
    int c = w->cand[k - 1];
    walk_sets(w, k - 1);
    bool ok = true;
    for (int u = w->user_first[k - 1]; u < w->user_first[k] && ok; u++) {
        int st = w->users[u];
        if (w->used[st] > 0 || !may_take(sp, st, w->d, c)) ok = false;
    }
    if (!ok || sp->truncated) return;
    for (int u = w->user_first[k - 1]; u < w->user_first[k]; u++) w->used[w->users[u]]++;
    bits_set(w->set, c);
    w->set_size++;
    walk_sets(w, k - 1);
    w->set[c >> 6] &= ~((uint64_t)1 << (c & 63));
    w->set_size--;
    for (int u = w->user_first[k - 1]; u < w->user_first[k]; u++) w->used[w->users[u]]--;
}

static DimOptions dim_options(OptSpace *sp, int d, long limit) {
    Arena *a = sp->arena;
    int S = sp->S, I = sp->I, D = sp->D;
    DimOptions o = {0};
    o.words = opt_words(I);
    SetWalk w = {0};
    w.sp = sp;
    w.d = d;
    w.o = &o;
    w.limit = limit;
    /* hole statements by the indices they may take */
    int *count = ARENA_ARRAY(a, int, I + 1);
    int total = 0;
    for (int st = 0; st < S; st++) {
        if (!sp->split_hole[st * D + d]) continue;
        int idx[2 * IR_MAX_RANK];
        int n = ir_stmt_indices(&sp->op->stmts[st], idx);
        for (int q = 0; q < n; q++)
            if (may_take(sp, st, d, idx[q])) {
                count[idx[q]]++;
                total++;
            }
    }
    w.cand = ARENA_ARRAY(a, int, I + 1);
    int *slot = ARENA_ARRAY(a, int, I + 1);
    for (int i = 0; i < I; i++)
        if (count[i] > 0) {
            slot[i] = w.ncand;
            w.cand[w.ncand++] = i;
        }
    /* every hole statement that uses a candidate is one of its users,
     * whether or not its allowance admits it (then the candidate is out) */
    w.user_first = ARENA_ARRAY(a, int, w.ncand + 2);
    int *fill = ARENA_ARRAY(a, int, w.ncand + 1);
    for (int st = 0; st < S; st++) {
        if (!sp->split_hole[st * D + d]) continue;
        int idx[2 * IR_MAX_RANK];
        int n = ir_stmt_indices(&sp->op->stmts[st], idx);
        for (int q = 0; q < n; q++)
            if (count[idx[q]] > 0) w.user_first[slot[idx[q]] + 1]++;
    }
    for (int k = 0; k < w.ncand; k++) w.user_first[k + 1] += w.user_first[k];
    w.users = ARENA_ARRAY(a, int, w.user_first[w.ncand] + 1);
    for (int st = 0; st < S; st++) {
        if (!sp->split_hole[st * D + d]) continue;
        int idx[2 * IR_MAX_RANK];
        int n = ir_stmt_indices(&sp->op->stmts[st], idx);
        for (int q = 0; q < n; q++)
            if (count[idx[q]] > 0) {
                int k = slot[idx[q]];
                w.users[w.user_first[k] + fill[k]++] = st;
            }
    }
    (void)total;
    w.used = ARENA_ARRAY(a, int, S + 1);
    w.set = ARENA_ARRAY(a, uint64_t, o.words + 1);
    w.fb_ok = ARENA_ARRAY(a, bool, I + 1);
    walk_sets(&w, w.ncand);
    return o;
}

/* Dims a and b are interchangeable: same cluster, size and topology, and
 * the same statements have holes on them with the same allowances.  A
 * dragonfly's two dims never are: one crosses the groups, the other not. */
static bool dims_interchangeable(const OptSpace *sp, int a, int b) {
    const IrClusterDim *x = &sp->arch->dims[a], *y = &sp->arch->dims[b];
    if (x->cluster != y->cluster || x->size != y->size || x->topology != y->topology) return false;
    if (x->topology == TOPO_DRAGONFLY) return false;
    for (int st = 0; st < sp->S; st++) {
        if (sp->split_hole[st * sp->D + a] != sp->split_hole[st * sp->D + b]) return false;
        if (!sp->split_hole[st * sp->D + a] &&
            sp->m->spatial.split[st * sp->D + a] != sp->m->spatial.split[st * sp->D + b])
            return false;
        if (sp->split_allowed &&
            memcmp(sp->split_allowed + (size_t)(st * sp->D + a) * (size_t)sp->allowed_words,
                   sp->split_allowed + (size_t)(st * sp->D + b) * (size_t)sp->allowed_words,
                   sizeof(uint64_t) * (size_t)sp->allowed_words) != 0)
            return false;
    }
    return true;
}

/* The split table of one choice of options. */
static void fill_table(const OptSpace *sp, const DimOptions *opt, const int *hole_dims, int hd,
                       const int *choice, const int *base, int *table) {
    int S = sp->S, D = sp->D;
    memcpy(table, base, sizeof(int) * (size_t)S * (size_t)D);
    for (int k = 0; k < hd; k++) {
        int d = hole_dims[k];
        const uint64_t *set = opt[d].sets + (size_t)choice[k] * opt[d].words;
        int fb = opt[d].fallback[choice[k]];
        for (int st = 0; st < S; st++) {
            if (!sp->split_hole[st * D + d]) continue;
            const IrStmt *is = &sp->op->stmts[st];
            int idx[2 * IR_MAX_RANK];
            int n = ir_stmt_indices(is, idx);
            int v = IR_UNSET;
            for (int q = 0; q < n; q++) /* at most one: the set is valid */
                if (bits_has(set, idx[q]) && (v == IR_UNSET || idx[q] > v)) v = idx[q];
            if (v == IR_UNSET && fb >= 0 && ir_stmt_uses_index(is, fb) && may_take(sp, st, d, fb))
                v = fb;
            table[st * D + d] = v;
        }
    }
}

/* Every combination of the dims' options, in odometer order (the first
 * hole dim fastest).  With symmetry, a dim interchangeable with an earlier
 * one never takes a smaller option than it; such combinations are skipped
 * a whole block at a time. */
static void build_splits(OptSpace *sp, long limit) {
    Arena *a = sp->arena;
    int S = sp->S, D = sp->D;
    size_t table_size = opt_mul((size_t)S, (size_t)D);
    int *base = ARENA_ARRAY(a, int, table_size + 1);
    for (size_t k = 0; k < table_size; k++) {
        int v = sp->m->spatial.split ? sp->m->spatial.split[k] : IR_UNSET;
        base[k] = sp->split_hole[k] ? IR_UNSET : v;
    }
    sp->split_varies = ARENA_ARRAY(a, bool, S + 1);
    DimOptions *opt = ARENA_ARRAY(a, DimOptions, D + 1);
    int *hole_dims = ARENA_ARRAY(a, int, D + 1);
    int hd = 0;
    for (int d = 0; d < D && !sp->truncated; d++) {
        bool any = false;
        for (int st = 0; st < S; st++)
            if (sp->split_hole[st * D + d]) any = true;
        if (any) {
            opt[d] = dim_options(sp, d, limit);
            hole_dims[hd++] = d;
        }
    }
    sp->split_count = 0;
    if (sp->truncated) return;
    /* the earlier interchangeable dim of each hole dim, or -1 */
    int *twin = ARENA_ARRAY(a, int, D + 1);
    for (int k = 0; k < hd; k++) {
        twin[k] = -1;
        if (!sp->symmetry) continue;
        for (int j = k - 1; j >= 0; j--)
            if (dims_interchangeable(sp, hole_dims[j], hole_dims[k])) {
                twin[k] = j;
                break;
            }
    }
    int cap = 0;
    int *choice = ARENA_ARRAY(a, int, hd + 1);
    int *table = ARENA_ARRAY(a, int, table_size + 1);
    long steps = 0;
    for (;;) {
        if ((++steps & 1023) == 0 && opt_past_deadline(sp)) return;
        /* the most significant dim whose twin's option is larger */
        int skip = -1;
        for (int k = 0; k < hd; k++)
            if (twin[k] >= 0 && choice[k] < choice[twin[k]] && twin[k] > skip) skip = twin[k];
        int k = 0;
        if (skip >= 0) {
            for (int j = 0; j <= skip; j++) choice[j] = 0;
            k = skip + 1;
        } else {
            fill_table(sp, opt, hole_dims, hd, choice, base, table);
            if (split_divides(sp, table)) {
                if (limit > 0 && sp->split_count >= limit) {
                    sp->stop = OPT_STOP_LIMIT;
                    sp->truncated = true;
                    return;
                }
                if (!grow(sp, (void **)&sp->splits, sp->split_count, &cap, table_size * sizeof(int),
                          "the split tables"))
                    return;
                memcpy(sp->splits + (size_t)sp->split_count * table_size, table,
                       sizeof(int) * table_size);
                sp->split_count++;
            }
        }
        /* advance the odometer at dim k */
        while (k < hd && ++choice[k] == opt[hole_dims[k]].count) choice[k++] = 0;
        if (k == hd) break;
    }
    /* which statements' rows differ between tables (the memo keys hold
     * only those) */
    for (int t = 1; t < sp->split_count; t++)
        for (int st = 0; st < S; st++)
            if (!sp->split_varies[st] &&
                memcmp(sp->splits + (size_t)t * table_size + (size_t)st * (size_t)D,
                       sp->splits + (size_t)st * (size_t)D, sizeof(int) * (size_t)D) != 0)
                sp->split_varies[st] = true;
}
/* ------------------------------------------------------------- tiles */

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Statement st's tile of index i at level l as far as it is known: given,
 * or the value assigned to its hole so far; 0 when neither. */
static int64_t known_tile(const OptSpace *sp, const int64_t *hv, int st, int l, int i) {
    int k = ir_tile_slot(sp->m, st, l, i);
    int64_t v = sp->m->tile.size[k];
    if (v >= 1) return v;
    if (v == IR_HOLE)
        for (int h = 0; h < sp->th_count; h++)
            if (sp->th_level[h] == l && sp->th_index[h] == i &&
                sp->th_line[h] == sp->m->tile.from[k])
                return hv[h];
    return 0;
}

/* The divisor bound for hole h given values of the holes before it
 * (outer levels of the same index come first).  *most gets the largest
 * tile the hole may take beyond the divisors (the largest share an
 * instance walks, docs/optimizer.md section 1: tiles that do not divide),
 * 0 when a given or chosen enclosing tile with no split between the two
 * levels must be divided (E0311). */
static int64_t tile_bound(const OptSpace *sp, const int *split, const int64_t *hv, int h,
                          int64_t *most) {
    int l = sp->th_level[h], i = sp->th_index[h];
    int64_t g = 0;
    *most = 0;
    for (int st = 0; st < sp->S; st++) {
        if (!ir_stmt_uses_index(&sp->op->stmts[st], i) || !opt_tile_hole_of(sp, h, st)) continue;
        int64_t e = instance_extent(sp, split, st, l, i), share = e;
        for (int lo = l - 1; lo >= 0; lo--) {
            int64_t v = known_tile(sp, hv, st, lo, i);
            if (v < 1) continue;
            int64_t p = split_between(sp, split, st, lo, l, i);
            if (p == 1) *most = -1; /* must divide v */
            e = v / p > 0 ? v / p : 1;
            /* over a split, a tile larger than the even share deals
             * fewer, larger blocks: the instances past the last block idle
             * (128-row tiles on 64 of 132 SMs fill a 64-row MMA that
             * 63-row shares leave half empty) */
            share = (v + p - 1) / p;
            /* up to 4 even shares: enough to fill a matrix unit's shape
             * and choose the waves, a bounded growth of the space */
            if (p > 1) share = 4 * share < v ? 4 * share : v;
            break;
        }
        g = gcd64(g, e);
        if (*most >= 0 && share > *most) *most = share;
    }
    if (g == 0) g = sp->op->indices[i].extent; /* no statement uses it */
    if (*most < 0) *most = 0;
    return g;
}

/* The instances of a joint deal inside the hole's level whose first
 * index is the hole's (1: none): the others take divisors and powers of
 * two, and the first the blocks that fill the wave beside them. */
static int64_t joint_inside(const OptSpace *sp, int h) {
    int l = sp->th_level[h], i = sp->th_index[h];
    int64_t most = 1;
    for (int st = 0; st < sp->S; st++) {
        if (!ir_stmt_uses_index(&sp->op->stmts[st], i) || !opt_tile_hole_of(sp, h, st)) continue;
        int64_t p = 1;
        for (int d = 0; d < sp->D; d++) {
            if (!joint_dim(sp, st, d) || dim_outside_level(sp->arch, d, l)) continue;
            if (sp->m->spatial.split[st * sp->D + d] == i) p *= sp->arch->dims[d].size;
        }
        if (p > most) most = p;
    }
    return most;
}

/* The most parts any statement of the hole splits its index into inside
 * the hole's level (1: none). */
static int64_t split_inside(const OptSpace *sp, const int *split, int h) {
    int l = sp->th_level[h], i = sp->th_index[h];
    int64_t most = 1;
    for (int st = 0; st < sp->S; st++) {
        if (!ir_stmt_uses_index(&sp->op->stmts[st], i) || !opt_tile_hole_of(sp, h, st)) continue;
        int64_t p = split_between(sp, split, st, l, sp->L, i);
        if (p > most) most = p;
    }
    return most;
}

/* The hole's tile must be no smaller than the split of its index inside
 * the level (E0326: it is dealt out in whole blocks), and given tiles at
 * inner levels must divide it when no split lies between (E0311). */
static bool inner_tiles_divide(const OptSpace *sp, const int *split, const int64_t *hv, int h,
                               int64_t t) {
    int l = sp->th_level[h], i = sp->th_index[h];
    /* no smaller than the split inside it (E0326); it is dealt out in
     * whole blocks, so it need not be a multiple */
    for (int st = 0; st < sp->S; st++) {
        if (!ir_stmt_uses_index(&sp->op->stmts[st], i) || !opt_tile_hole_of(sp, h, st)) continue;
        int64_t p = split_between(sp, split, st, l, sp->L, i);
        if (p <= 1) continue;
        /* a tile of the whole share is no tile: the range itself is dealt
         * out, which E0310 limits (check_mapping.c's E0326 rule alike) */
        int64_t outer = 1;
        for (int d = 0; d < sp->D; d++)
            if (split[st * sp->D + d] == i && !joint_dim(sp, st, d) &&
                dim_outside_level(sp->arch, d, l))
                outer *= sp->arch->dims[d].size;
        if (t >= (sp->op->indices[i].extent + outer - 1) / outer) continue;
        /* contiguous runs of ceil(t / p) elements: every instance gets one */
        int64_t run = (t + p - 1) / p;
        if (t < p || (t + run - 1) / run < p) return false;
    }
    for (int st = 0; st < sp->S; st++) {
        if (!ir_stmt_uses_index(&sp->op->stmts[st], i) || !opt_tile_hole_of(sp, h, st)) continue;
        for (int li = l + 1; li < sp->L; li++) {
            int64_t w = sp->m->tile.size[ir_tile_slot(sp->m, st, li, i)];
            if (w == IR_HOLE) break; /* checked when that hole is enumerated */
            if (w < 1) continue;
            /* an inner given tile divides it when no split lies between
             * (E0311); across a split it only fits in it */
            int64_t p = split_between(sp, split, st, l, li, i);
            if (p == 1 ? t % w != 0 : w > t) return false;
            break;
        }
    }
    (void)hv;
    return true;
}

/* The divisors of g, ascending, into the hole's cache (the same bound
 * recurs for every configuration of the holes before it).  Trial division
 * up to the square root, checking the clock: an extent may be as large as
 * 2^62. */
typedef struct Divisors {
    int64_t of; /* 0: empty */
    int64_t *list;
    int count, cap;
} Divisors;

static int compare_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static bool divisors(OptSpace *sp, Divisors *dv, int64_t g) {
    if (dv->of == g) return true;
    dv->of = 0;
    dv->count = 0;
    /* prime factors first: few, then the divisors are their products */
    int64_t primes[64];
    int powers[64], np = 0;
    int64_t n = g;
    long steps = 0;
    for (int64_t f = 2; f <= n / f; f += f == 2 ? 1 : 2) {
        if ((++steps & 0xfffff) == 0 && opt_past_deadline(sp)) return false;
        if (n % f) continue;
        primes[np] = f;
        powers[np] = 0;
        while (n % f == 0) {
            n /= f;
            powers[np]++;
        }
        np++;
    }
    if (n > 1) {
        primes[np] = n;
        powers[np++] = 1;
    }
    int need = 1;
    for (int k = 0; k < np; k++) need *= powers[k] + 1; /* under 2^17 for 63 bits */
    if (need > dv->cap) {
        if (!opt_reserve(sp, sizeof(int64_t) * (size_t)need, "the tile candidates")) return false;
        dv->list = ARENA_ARRAY(sp->arena, int64_t, need);
        dv->cap = need;
    }
    dv->list[dv->count++] = 1;
    for (int k = 0; k < np; k++) {
        int have = dv->count;
        int64_t mult = 1;
        for (int e = 1; e <= powers[k]; e++) {
            mult *= primes[k];
            for (int q = 0; q < have; q++) dv->list[dv->count++] = dv->list[q] * mult;
        }
    }
    qsort(dv->list, (size_t)dv->count, sizeof(int64_t), compare_i64);
    dv->of = g;
    return true;
}
/* --------------------------------------------------- configurations */

static bool push_config(OptSpace *sp, int split, const int64_t *hv, const int *orders) {
    int TH = sp->th_count;
    size_t OI = (size_t)sp->oh_count * (size_t)sp->I;
    int c = sp->cfg_count;
    if (c == INT32_MAX) return opt_reserve(sp, SIZE_MAX, "the configurations");
    int page = c / OPT_CFG_PAGE, at = c % OPT_CFG_PAGE;
    if (at == 0) {
        if (!grow(sp, (void **)&sp->cfg_pages, sp->cfg_page_count, &sp->cfg_page_cap,
                  sizeof(OptCfgPage), "the configurations"))
            return false;
        size_t bytes = opt_mul(OPT_CFG_PAGE, sizeof(int) + sizeof(int64_t) * (size_t)TH +
                                                 opt_mul(OI, sizeof(int)));
        if (!opt_reserve(sp, bytes, "the configurations")) return false;
        OptCfgPage *pg = &sp->cfg_pages[sp->cfg_page_count++];
        pg->split = ARENA_ARRAY(sp->arena, int, OPT_CFG_PAGE);
        pg->tile = ARENA_ARRAY(sp->arena, int64_t, (size_t)OPT_CFG_PAGE * (size_t)TH + 1);
        pg->order = ARENA_ARRAY(sp->arena, int, opt_mul(OPT_CFG_PAGE, OI) + 1);
    }
    OptCfgPage *pg = &sp->cfg_pages[page];
    pg->split[at] = split;
    if (TH) memcpy(pg->tile + (size_t)at * (size_t)TH, hv, sizeof(int64_t) * (size_t)TH);
    if (OI) memcpy(pg->order + (size_t)at * OI, orders, sizeof(int) * OI);
    sp->cfg_count++;
    return true;
}

typedef struct Enum {
    OptSpace *sp;
    int split;
    int64_t *hv;
    int *orders;
    int *loops;    /* [oh * I]: looping indices of each order hole */
    int *loop_n;   /* [oh] */
    int *perm;     /* [oh * I]: the permutation of each order hole */
    bool *in;      /* [I]: scratch */
    Divisors *div; /* [th]: divisors of each tile hole's last bound */
    long limit;
    long steps;
} Enum;

static bool next_perm(int *a, int n) {
    int i = n - 2;
    while (i >= 0 && a[i] >= a[i + 1]) i--;
    if (i < 0) return false;
    int j = n - 1;
    while (a[j] <= a[i]) j--;
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
    for (int x = i + 1, y = n - 1; x < y; x++, y--) {
        t = a[x];
        a[x] = a[y];
        a[y] = t;
    }
    return true;
}

/* The configuration limit and, every so often, the clock. */
static bool over_limit(Enum *e) {
    OptSpace *sp = e->sp;
    if (sp->truncated) return true;
    if (e->limit > 0 && sp->cfg_count >= e->limit) {
        sp->stop = OPT_STOP_LIMIT;
        sp->truncated = true;
        return true;
    }
    if ((++e->steps & 255) == 0 && opt_past_deadline(sp)) return true;
    return false;
}

/* Before the orders of one split and tile vector are enumerated: they are
 * the product of the permutation counts, so a space past the limit or the
 * budget is known at once instead of after enumerating millions. */
static bool orders_fit(Enum *e) {
    OptSpace *sp = e->sp;
    double perms = 1;
    int most = 0;
    for (int k = 0; k < sp->oh_count; k++) {
        int n = sp->symmetry ? e->loop_n[k] : sp->I;
        if (n > most) most = n;
        for (int f = 2; f <= n && perms < 1e300; f++) perms *= f;
    }
    double total = (double)sp->cfg_count + perms;
    if (e->limit > 0 && total > (double)e->limit) {
        sp->stop = OPT_STOP_LIMIT;
        sp->truncated = true;
        return false;
    }
    double per = sizeof(int) + sizeof(int64_t) * (double)sp->th_count +
                 sizeof(int) * (double)sp->oh_count * (double)sp->I;
    /* the configurations so far are in the arena already */
    if ((double)sp->arena->used_total + perms * per <= (double)sp->budget) return true;
    sp->stop = OPT_STOP_BUDGET;
    sp->truncated = true;
    sp->wanted = total * per;
    sp->phase = arena_printf(sp->arena,
                             "the %.3g configurations of its order holes (every order of up to "
                             "%d indices at %d level%s)",
                             total, most, sp->oh_count, sp->oh_count == 1 ? "" : "s");
    return false;
}

/* Order holes: every permutation of the indices that loop at the level
 * (an index with one trip has no loop; its place changes nothing), the
 * others after them in index order. */
static void enum_orders(Enum *e, int k) {
    OptSpace *sp = e->sp;
    int I = sp->I;
    if (sp->truncated) return;
    if (k == sp->oh_count) {
        if (over_limit(e)) return;
        if (!push_config(sp, e->split, e->hv, e->orders)) return;
        return;
    }
    if (k == 0 && !orders_fit(e)) return;
    int n = e->loop_n[k];
    int *perm = e->perm + (size_t)k * (size_t)I;
    for (int q = 0; q < n; q++) perm[q] = e->loops[k * I + q];
    if (!sp->symmetry) { /* the exhaustive space: every permutation */
        n = I;
        for (int q = 0; q < I; q++) perm[q] = q;
    }
    bool *in = e->in;
    do {
        if (over_limit(e)) return;
        int w = 0;
        memset(in, 0, sizeof(bool) * (size_t)I);
        for (int q = 0; q < n; q++) {
            e->orders[k * I + w++] = perm[q];
            in[perm[q]] = true;
        }
        for (int i = 0; i < I; i++)
            if (!in[i]) e->orders[k * I + w++] = i;
        enum_orders(e, k + 1);
    } while (next_perm(perm, n) && !sp->truncated);
}

/* Which indices loop at each order hole's level under the current split
 * and tiles: read from the lowering of the all-singletons mapping. */
static bool find_loops(Enum *e) {
    OptSpace *sp = e->sp;
    int I = sp->I;
    if (sp->oh_count == 0 || !sp->symmetry) return true;
    /* a configuration with default orders to lower */
    int c = sp->cfg_count;
    int *dflt = e->orders; /* overwritten by enum_orders afterwards */
    for (int k = 0; k < sp->oh_count; k++)
        for (int i = 0; i < I; i++) dflt[k * I + i] = i;
    if (!push_config(sp, e->split, e->hv, dflt)) return false;
    Arena scratch = {0};
    IrMapping *m = opt_scratch_mapping(&scratch, sp, c, NULL, 0);
    Schedule *s = lower_mapping(&scratch, m, false, NULL);
    sp->evaluations++;
    for (int k = 0; k < sp->oh_count; k++) {
        int l = sp->oh_level[k];
        int n = 0;
        for (int i = 0; i < I; i++) {
            bool loops = false;
            for (int st = 0; st < sp->S && !loops; st++)
                if (ir_stmt_uses_index(&sp->op->stmts[st], i) && opt_order_hole_of(sp, k, st) &&
                    s->stmts[st].trips[sched_li(s, l, i)] > 1)
                    loops = true;
            if (loops) e->loops[k * I + n++] = i;
        }
        e->loop_n[k] = n;
    }
    arena_free_all(&scratch);
    sp->cfg_count--; /* drop the probe */
    return true;
}

static void enum_tiles(Enum *e, int h) {
    OptSpace *sp = e->sp;
    if (sp->truncated) return;
    const int *split = opt_split_table(sp, e->split);
    if (h == sp->th_count) {
        if (over_limit(e) || !find_loops(e)) return;
        enum_orders(e, 0);
        return;
    }
    int64_t most;
    int64_t g = tile_bound(sp, split, e->hv, h, &most);
    if (g < 1) return;
    Divisors *dv = &e->div[h];
    if (!divisors(sp, dv, g)) return;
    /* the list may be refilled by a deeper hole's call only for that hole */
    for (int q = 0; q < dv->count && !sp->truncated; q++) {
        int64_t t = dv->list[q];
        if ((++e->steps & 1023) == 0 && opt_past_deadline(sp)) return;
        if (!inner_tiles_divide(sp, split, e->hv, h, t)) continue;
        e->hv[h] = t;
        enum_tiles(e, h + 1);
    }
    /* then the tiles that do not divide: powers of two and the unit's
     * shape sizes times powers of two, up to the largest share (the
     * divisors above are not repeated); and, over a split of the index
     * inside the level into p parts, p times each of them: one block of
     * that size for every instance (a wave of a GPU's SMs) */
    int64_t extra[8 * 64];
    int n = 0;
    const IrCompute *u = ir_matrix_unit(sp->arch);
    int64_t sizes[4] = {1, u ? u->shape_m : 0, u ? u->shape_n : 0, u ? u->shape_k : 0};
    int64_t parts = split_inside(sp, split, h);
    for (int w = 0; w < (parts > 1 ? 2 : 1); w++)
        for (int k = 0; k < 4; k++) {
            if (sizes[k] < 1) continue;
            int64_t step = w ? parts : 1;
            if (sizes[k] > most / step) continue;
            for (int64_t t = sizes[k] * step; t <= most && n < 8 * 64; t *= 2) {
                bool dup = g % t == 0;
                for (int j = 0; j < n && !dup; j++) dup = extra[j] == t;
                if (!dup) extra[n++] = t;
                if (t > most / 2) break;
            }
        }
    /* under a joint deal of P instances, a tile of the index holding
     * floor(P / 2^j) blocks: with 2^j blocks of the other indices, one
     * cell for every instance (a wave; docs/optimizer.md section 1) */
    int64_t joint = joint_inside(sp, h);
    for (int64_t q = joint; joint > 1 && q >= 2; q /= 2)
        for (int k = 0; k < 4; k++) {
            if (sizes[k] < 1) continue;
            for (int64_t t = sizes[k] * q; t <= most && n < 8 * 64; t *= 2) {
                bool dup = g % t == 0;
                for (int j = 0; j < n && !dup; j++) dup = extra[j] == t;
                if (!dup) extra[n++] = t;
                if (t > most / 2) break;
            }
        }
    qsort(extra, (size_t)n, sizeof(int64_t), compare_i64);
    for (int q = 0; q < n && !sp->truncated; q++) {
        if ((++e->steps & 1023) == 0 && opt_past_deadline(sp)) return;
        if (!inner_tiles_divide(sp, split, e->hv, h, extra[q])) continue;
        e->hv[h] = extra[q];
        enum_tiles(e, h + 1);
    }
}
/* ------------------------------------------------------------- arcs */

/* Levels a fused group may take: every memory level but the outermost
 * (where a fused group's tensors would go anyway), or the only one. */
static int fusion_levels(const OptSpace *sp, int *out) {
    int n = 0;
    for (int l = 1; l < sp->L; l++) out[n++] = l;
    if (n == 0) out[n++] = 0;
    return n;
}

static int compare_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* What each arc's cost depends on (see OptArc).  Linear in the arcs'
 * statements and their neighbours: producers and consumers come from one
 * table built first. */
static bool relevance(OptSpace *sp) {
    Arena *a = sp->arena;
    const IrOp *op = sp->op;
    int S = sp->S, I = sp->I;
    size_t W = opt_words(I);
    /* neighbours: statements one reads from or is read by */
    int *nb_first = ARENA_ARRAY(a, int, S + 2);
    for (int st = 0; st < S; st++)
        for (int k = 0; k < op->stmts[st].input_count; k++) {
            int from = op->tensors[op->stmts[st].inputs[k]].producer;
            if (from < 0) continue;
            nb_first[st + 1]++;
            nb_first[from + 1]++;
        }
    for (int st = 0; st < S; st++) nb_first[st + 1] += nb_first[st];
    if (!opt_reserve(sp, opt_add(sizeof(int) * (size_t)nb_first[S], opt_mul(S, W * 8)),
                     "the statements' neighbours"))
        return false;
    int *nb = ARENA_ARRAY(a, int, nb_first[S] + 1);
    int *fill = ARENA_ARRAY(a, int, S + 1);
    for (int st = 0; st < S; st++)
        for (int k = 0; k < op->stmts[st].input_count; k++) {
            int from = op->tensors[op->stmts[st].inputs[k]].producer;
            if (from < 0) continue;
            nb[nb_first[st] + fill[st]++] = from;
            nb[nb_first[from] + fill[from]++] = st;
        }
    uint64_t *uses = ARENA_ARRAY(a, uint64_t, opt_mul(S, W) + 1);
    int varying = 0;
    for (int st = 0; st < S; st++) {
        int idx[2 * IR_MAX_RANK];
        int n = ir_stmt_indices(&op->stmts[st], idx);
        for (int q = 0; q < n; q++) bits_set(uses + (size_t)st * W, idx[q]);
        if (sp->split_varies[st]) varying++;
    }
    int *stamp = ARENA_ARRAY(a, int, S + 1);
    for (int st = 0; st < S; st++) stamp[st] = -1;
    int *list = ARENA_ARRAY(a, int, S + 1);
    for (int x = 0; x < sp->arc_count; x++) {
        if ((x & 1023) == 1023 && opt_past_deadline(sp)) return false;
        OptArc *arc = &sp->arcs[x];
        int n = 0;
        for (int q = 0; q < arc->count && varying > 0; q++) {
            int st = arc->stmts[q];
            for (int k = -1; k < nb_first[st + 1] - nb_first[st]; k++) {
                int r = k < 0 ? st : nb[nb_first[st] + k];
                if (!sp->split_varies[r] || stamp[r] == x) continue;
                stamp[r] = x;
                list[n++] = r;
            }
        }
        qsort(list, (size_t)n, sizeof(int), compare_int);
        int holes = 0;
        arc->rel_indices = ARENA_ARRAY(a, uint64_t, W + 1);
        /* runs come in order of length from each start, each at every
         * level: extend the previous arc's indices instead of starting
         * over (linear in the arcs, not in their statements) */
        const OptArc *prev = x > 0 ? &sp->arcs[x - 1] : NULL;
        if (prev && prev->stmts == arc->stmts && prev->count == arc->count) {
            memcpy(arc->rel_indices, prev->rel_indices, W * sizeof(uint64_t));
        } else if (prev && prev->stmts == arc->stmts && prev->count == arc->count - 1) {
            memcpy(arc->rel_indices, prev->rel_indices, W * sizeof(uint64_t));
            for (size_t w = 0; w < W; w++)
                arc->rel_indices[w] |= uses[(size_t)arc->stmts[arc->count - 1] * W + w];
        } else {
            for (int q = 0; q < arc->count; q++)
                for (size_t w = 0; w < W; w++)
                    arc->rel_indices[w] |= uses[(size_t)arc->stmts[q] * W + w];
        }
        arc->rel_index_count = 0;
        for (size_t w = 0; w < W; w++)
            arc->rel_index_count += __builtin_popcountll(arc->rel_indices[w]);
        for (int h = 0; h < sp->th_count; h++)
            if (bits_has(arc->rel_indices, sp->th_index[h])) holes++;
        if (!opt_reserve(sp, sizeof(int) * (size_t)(n + holes + 2), "the fusion arcs"))
            return false;
        arc->rel_stmts = ARENA_ARRAY(a, int, n + 1);
        memcpy(arc->rel_stmts, list, sizeof(int) * (size_t)n);
        arc->rel_count = n;
        arc->rel_holes = ARENA_ARRAY(a, int, holes + 1);
        arc->rel_hole_count = 0;
        for (int h = 0; h < sp->th_count; h++)
            if (bits_has(arc->rel_indices, sp->th_index[h]))
                arc->rel_holes[arc->rel_hole_count++] = h;
        /* worth remembering when some choice does not reach it */
        arc->memo = arc->rel_hole_count < sp->th_count || n < varying ||
                    (sp->oh_count > 0 && arc->rel_index_count < I);
    }
    return true;
}

/* The arcs: fixed groups from `fuse` lines first, then every run of each
 * block of `fuse ?` statements, at every level.  Returns false when the
 * budget or the clock stopped it. */
/* Whether the statements of a group may be fused: they share one loop
 * nest, so their tiles and orders must agree (ir_fusable, E0332/E0333).
 * Holes of different lines count as different even where a configuration
 * would fill them alike: the arc is left out rather than costed per
 * configuration. */
static bool arc_fusable(const OptSpace *sp, const int *stmts, int n) {
    for (int q = 1; q < n; q++)
        for (int r = 0; r < q; r++)
            if (!ir_fusable(sp->m, stmts[r], stmts[q])) return false;
    return true;
}

/* The last statement j <= last such that the statements i..j (consecutive
 * ids) may be fused.  Agreement is an equivalence (the same line, or the
 * same given value), so each statement is compared with the run's first
 * user of each index and with the run's first statement. */
static int fusable_reach(const OptSpace *sp, int i, int last, int *first_user) {
    const IrMapping *m = sp->m;
    if (m->tile.line_count == 0 && m->order.line_count == 0) return last; /* one line each */
    int L = sp->L, I = sp->I;
    for (int k = 0; k < L * I; k++) first_user[k] = -1;
    for (int j = i; j <= last; j++)
        for (int l = 1; l < L; l++) {
            if (!ir_same_order(m, i, j, l)) return j - 1;
            for (int x = 0; x < I; x++) {
                if (!ir_stmt_uses_index(&sp->op->stmts[j], x)) continue;
                int *f = &first_user[l * I + x];
                if (*f < 0)
                    *f = j;
                else if (!ir_same_tile(m, *f, j, l, x))
                    return j - 1;
            }
        }
    return last;
}

static bool build_arcs(OptSpace *sp) {
    const IrMapping *m = sp->m;
    Arena *a = sp->arena;
    int S = sp->S;
    int *levels = ARENA_ARRAY(a, int, sp->L + 1);
    int nlev = fusion_levels(sp, levels);
    /* count first: arcs and the statements they hold */
    int *group_size = ARENA_ARRAY(a, int, m->fuse.group_count + 1);
    for (int st = 0; st < S; st++)
        if (m->fuse.group[st] >= 0) group_size[m->fuse.group[st]]++;
    size_t arcs = 0, held = 0;
    size_t free_stmts = 0;
    for (int g = 0; g < m->fuse.group_count; g++) {
        if (group_size[g] == 0) continue;
        int lv = m->fuse.level ? m->fuse.level[g] : IR_UNSET;
        size_t k = lv == IR_HOLE ? (size_t)nlev : 1;
        arcs += k;
        held += k * (size_t)group_size[g];
    }
    for (int st = 0; st < S;) {
        if (m->fuse.group[st] != IR_HOLE) {
            st++;
            continue;
        }
        int end = st;
        while (end < S && m->fuse.group[end] == IR_HOLE) end++;
        size_t n = (size_t)(end - st);
        free_stmts += n;
        /* n singles; runs of length len >= 2: n - len + 1 of them */
        arcs = opt_add(arcs, n);
        held = opt_add(held, n);
        for (size_t len = 2; len <= n; len++) {
            size_t runs = opt_mul(n - len + 1, (size_t)nlev);
            arcs = opt_add(arcs, runs);
            held = opt_add(held, opt_mul(runs, len));
        }
        st = end;
    }
    size_t per_arc = sizeof(OptArc) + 3 * sizeof(int) + opt_words(sp->I) * sizeof(uint64_t) + 16;
    size_t bytes = opt_add(opt_mul(arcs, per_arc), opt_mul(held, sizeof(int)));
    if (arcs >= (size_t)INT32_MAX || !opt_reserve(sp, bytes, "fusion arcs")) {
        sp->stop = OPT_STOP_BUDGET;
        sp->truncated = true;
        sp->wanted = (double)bytes;
        sp->phase = arena_printf(a,
                                 "the %.0f fusion arcs of %zu statements left to `fuse ?` "
                                 "(every run of consecutive statements, at %d level%s)",
                                 (double)arcs, free_stmts, nlev, nlev == 1 ? "" : "s");
        return false;
    }
    int A = (int)arcs;
    sp->arcs = ARENA_ARRAY(a, OptArc, A + 1);
    sp->arc_count = 0;
    int *ident = ARENA_ARRAY(a, int, S + 1);
    for (int st = 0; st < S; st++) ident[st] = st;
    int *first_user = ARENA_ARRAY(a, int, sp->L * sp->I + 1);
    /* blocks: fixed groups, then runs of free statements; positions lay
     * the blocks end to end by first statement */
    int *block_of = ARENA_ARRAY(a, int, S + 1);
    for (int st = 0; st < S; st++) block_of[st] = -1;
    int block = 0;
    for (int g = 0; g < m->fuse.group_count; g++) {
        if (group_size[g] == 0) continue;
        int *stmts = ARENA_ARRAY(a, int, group_size[g] + 1);
        int n = 0;
        for (int st = 0; st < S; st++)
            if (m->fuse.group[st] == g) {
                stmts[n++] = st;
                block_of[st] = block;
            }
        int lv = m->fuse.level ? m->fuse.level[g] : IR_UNSET;
        int k0 = 0, k1 = 1;
        if (lv == IR_HOLE) k1 = nlev;
        for (int k = k0; k < k1; k++) {
            int level = lv == IR_HOLE ? levels[k]
                        : lv >= 0     ? lv
                        : n == 1      ? OPT_UNFUSED
                                      : OPT_LEVEL_DEFAULT;
            if (n > 1 && !arc_fusable(sp, stmts, n)) continue;
            OptArc *arc = &sp->arcs[sp->arc_count++];
            arc->stmts = stmts;
            arc->count = n;
            arc->level = level;
            arc->given_group = g;
            arc->block = block;
        }
        block++;
    }
    for (int st = 0; st < S;) {
        if (m->fuse.group[st] != IR_HOLE) {
            st++;
            continue;
        }
        int end = st;
        while (end < S && m->fuse.group[end] == IR_HOLE) end++;
        for (int i = st; i < end; i++) {
            block_of[i] = block;
            int reach = fusable_reach(sp, i, end - 1, first_user);
            /* a step of micro-batches runs its passes apart: no group
             * spans two of them */
            for (int j = i + 1; sp->weighted && j <= reach; j++)
                if (ir_step_pass(sp->op->stmts[j].role) != ir_step_pass(sp->op->stmts[i].role))
                    reach = j - 1;
            for (int j = i + 1; j <= end && j - 1 <= reach; j++) {
                int n = j - i;
                for (int k = 0; k < (n == 1 ? 1 : nlev); k++) {
                    OptArc *arc = &sp->arcs[sp->arc_count++];
                    arc->stmts = ident + i;
                    arc->count = n;
                    arc->level = n == 1 ? OPT_UNFUSED : levels[k];
                    arc->given_group = -1;
                    arc->block = block;
                }
            }
        }
        block++;
        st = end;
    }
    /* fewer than counted when statements that may not share a loop nest
     * left runs out (arc_fusable, fusable_reach) */
    A = sp->arc_count;
    for (int st = 0; st < S; st++) /* in no group and not free: no arc */
        if (block_of[st] < 0) block_of[st] = block++;
    /* positions: blocks in the order of their first statements */
    int *block_start = ARENA_ARRAY(a, int, block + 1);
    int *block_size = ARENA_ARRAY(a, int, block + 1);
    for (int b = 0; b < block; b++) block_start[b] = -1;
    for (int st = 0; st < S; st++) {
        block_size[block_of[st]]++;
        if (block_start[block_of[st]] < 0) block_start[block_of[st]] = st; /* first statement */
    }
    int *next = ARENA_ARRAY(a, int, block + 1);
    int p = 0;
    for (int st = 0; st < S; st++) { /* first statements, in source order */
        int b = block_of[st];
        if (block_start[b] != st) continue;
        next[b] = p;
        p += block_size[b];
    }
    sp->pos_of = ARENA_ARRAY(a, int, S + 1);
    sp->stmt_at = ARENA_ARRAY(a, int, S + 1);
    for (int st = 0; st < S; st++) {
        int q = next[block_of[st]]++;
        sp->pos_of[st] = q;
        sp->stmt_at[q] = st;
    }
    /* by start position, by statement, by length */
    sp->start_first = ARENA_ARRAY(a, int, S + 2);
    sp->start_arcs = ARENA_ARRAY(a, int, A + 1);
    sp->stmt_arc_first = ARENA_ARRAY(a, size_t, S + 2);
    sp->stmt_arcs = ARENA_ARRAY(a, int, held + 1);
    sp->by_length = ARENA_ARRAY(a, int, A + 1);
    int *len_first = ARENA_ARRAY(a, int, S + 2);
    for (int x = 0; x < A; x++) {
        if ((x & 1023) == 1023 && opt_past_deadline(sp)) return false;
        OptArc *arc = &sp->arcs[x];
        arc->pos = sp->pos_of[arc->stmts[0]];
        sp->start_first[arc->pos + 1]++;
        for (int q = 0; q < arc->count; q++) sp->stmt_arc_first[arc->stmts[q] + 1]++;
        len_first[S - arc->count + 1]++;
    }
    for (int i = 0; i < S; i++) {
        sp->start_first[i + 1] += sp->start_first[i];
        sp->stmt_arc_first[i + 1] += sp->stmt_arc_first[i];
        len_first[i + 1] += len_first[i];
    }
    int *sfill = ARENA_ARRAY(a, int, S + 1);
    size_t *afill = ARENA_ARRAY(a, size_t, S + 1);
    for (int x = 0; x < A; x++) {
        if ((x & 1023) == 1023 && opt_past_deadline(sp)) return false;
        OptArc *arc = &sp->arcs[x];
        sp->start_arcs[sp->start_first[arc->pos] + sfill[arc->pos]++] = x;
        for (int q = 0; q < arc->count; q++) {
            int st = arc->stmts[q];
            sp->stmt_arcs[sp->stmt_arc_first[st] + afill[st]++] = x;
        }
        sp->by_length[len_first[S - arc->count]++] = x;
    }
    return relevance(sp);
}
/* ------------------------------------------------------- the space */

OptSpace *opt_space_build(Arena *arena, const IrMapping *m, bool symmetry, double deadline,
                          size_t budget, long config_limit) {
    OptSpace *sp = ARENA_NEW(arena, OptSpace);
    sp->arena = arena;
    sp->m = m;
    sp->op = m->op;
    sp->arch = m->arch;
    sp->S = m->op->stmt_count;
    sp->I = m->op->index_count;
    sp->D = m->arch->dim_count;
    sp->L = m->arch->level_count;
    sp->weighted = ir_accumulates(m);
    sp->weights = step_weights(m);
    sp->symmetry = symmetry;
    sp->deadline = deadline;
    sp->budget = budget;
    int S = sp->S, D = sp->D, I = sp->I, L = sp->L;
    sp->split_hole = ARENA_ARRAY(arena, bool, S *D + 1);
    for (int k = 0; k < S * D; k++)
        sp->split_hole[k] =
            m->spatial.whole_hole || (m->spatial.split && m->spatial.split[k] == IR_HOLE);
    /* `n -> ?`: those holes may only take the indices their line names */
    sp->split_allowed = m->spatial.whole_hole ? NULL : m->spatial.split_only_set;
    sp->allowed_words = m->spatial.split_only_words;
    build_splits(sp, config_limit);
    /* tile holes, by index then level (outer first), then line: one per
     * line that leaves the index open at the level */
    int TL = m->tile.line_count + 1, OL = m->order.line_count + 1;
    sp->th_level = ARENA_ARRAY(arena, int, L *I *TL + 1);
    sp->th_index = ARENA_ARRAY(arena, int, L *I *TL + 1);
    sp->th_line = ARENA_ARRAY(arena, int, L *I *TL + 1);
    for (int i = 0; i < I; i++)
        for (int l = 0; l < L; l++)
            for (int line = 0; line < TL; line++)
                for (int st = 0; st < S; st++) {
                    int k = ir_tile_slot(m, st, l, i);
                    if (m->tile.size[k] != IR_HOLE || m->tile.from[k] != line) continue;
                    sp->th_level[sp->th_count] = l;
                    sp->th_index[sp->th_count] = i;
                    sp->th_line[sp->th_count++] = line;
                    break;
                }
    sp->oh_level = ARENA_ARRAY(arena, int, L *OL + 1);
    sp->oh_line = ARENA_ARRAY(arena, int, L *OL + 1);
    for (int l = 0; l < L; l++)
        for (int line = 0; line < OL; line++)
            for (int st = 0; st < S; st++) {
                int k = ir_order_slot(m, st, l);
                if (m->order.length[k] != IR_HOLE || m->order.from[k] != line) continue;
                sp->oh_level[sp->oh_count] = l;
                sp->oh_line[sp->oh_count++] = line;
                break;
            }
    if (!sp->truncated && !build_arcs(sp)) sp->truncated = true;
    if (sp->truncated) {
        sp->enumerated = 0;
        return sp;
    }
    Enum e = {0};
    e.sp = sp;
    e.hv = ARENA_ARRAY(arena, int64_t, sp->th_count + 1);
    size_t oi = opt_mul((size_t)sp->oh_count, (size_t)I);
    e.orders = ARENA_ARRAY(arena, int, oi + 1);
    e.loops = ARENA_ARRAY(arena, int, oi + 1);
    e.perm = ARENA_ARRAY(arena, int, oi + 1);
    e.in = ARENA_ARRAY(arena, bool, I + 1);
    e.loop_n = ARENA_ARRAY(arena, int, sp->oh_count + 1);
    e.div = ARENA_ARRAY(arena, Divisors, sp->th_count + 1);
    e.limit = config_limit;
    /* configurations get half of the time left, so that some of them can
     * be costed when there are more than the time allows */
    double full = sp->deadline, now = opt_now();
    if (full > 0 && now < full) sp->deadline = now + (full - now) / 2;
    for (int s = 0; s < sp->split_count && !sp->truncated; s++) {
        e.split = s;
        enum_tiles(&e, 0);
    }
    sp->deadline = full;
    sp->enumerated = sp->cfg_count;
    return sp;
}

/* ------------------------------------------------- scratch mappings */

IrMapping *opt_scratch_mapping(Arena *arena, const OptSpace *sp, int c, const int *arcs,
                               int arc_count) {
    const IrMapping *src = sp->m;
    int S = sp->S, D = sp->D, I = sp->I, L = sp->L;
    IrMapping *m = ARENA_NEW(arena, IrMapping);
    *m = *src;
    m->hole_count = 0;
    m->spatial.whole_hole = false;
    m->fuse.whole_hole = false;
    m->spatial.split = ARENA_ARRAY(arena, int, S *D + 1);
    memcpy(m->spatial.split, opt_split_table(sp, opt_cfg_split(sp, c)),
           sizeof(int) * (size_t)S * (size_t)D);
    if (!src->spatial.split_span) {
        m->spatial.split_span = ARENA_ARRAY(arena, Span, S * D + 1);
        for (int k = 0; k < S * D; k++) m->spatial.split_span[k] = SPAN_NONE;
    }
    int TS = ir_tile_slots(src), OS = ir_order_slots(src);
    m->tile.size = ARENA_ARRAY(arena, int64_t, TS + 1);
    for (int k = 0; k < TS; k++) {
        int64_t v = src->tile.size[k];
        m->tile.size[k] = v == IR_HOLE ? IR_UNSET : v;
    }
    const int64_t *tiles = opt_cfg_tile(sp, c);
    for (int h = 0; h < sp->th_count; h++)
        for (int st = 0; st < S; st++)
            if (opt_tile_hole_of(sp, h, st))
                m->tile.size[ir_tile_slot(src, st, sp->th_level[h], sp->th_index[h])] = tiles[h];
    m->tile.index_hole = ARENA_ARRAY(arena, bool, L + 1);
    m->tile.index_hole_count = 0;
    m->order.perm = ARENA_ARRAY(arena, int, OS *I + 1);
    m->order.length = ARENA_ARRAY(arena, int, OS + 1);
    for (int o = 0; o < OS; o++) {
        int len = src->order.length[o];
        if (len < 0) len = 0;
        m->order.length[o] = len;
        for (int k = 0; k < len; k++) m->order.perm[o * I + k] = src->order.perm[o * I + k];
    }
    const int *orders = opt_cfg_order(sp, c);
    m->order.chosen = ARENA_ARRAY(arena, bool, OS + 1);
    for (int k = 0; k < sp->oh_count; k++)
        for (int st = 0; st < S; st++) {
            if (!opt_order_hole_of(sp, k, st)) continue;
            int o = ir_order_slot(src, st, sp->oh_level[k]);
            m->order.chosen[o] = true;
            m->order.length[o] = I;
            for (int i = 0; i < I; i++) m->order.perm[o * I + i] = orders[k * I + i];
        }
    m->fuse.group = ARENA_ARRAY(arena, int, S + 1);
    m->fuse.level = ARENA_ARRAY(arena, int, S + 1);
    m->fuse.span = ARENA_ARRAY(arena, Span, S + 1);
    m->fuse.written = ARENA_ARRAY(arena, bool, S + 1);
    m->fuse.overlap = ARENA_ARRAY(arena, int, S + 1);
    m->fuse.overlap_span = ARENA_ARRAY(arena, Span, S + 1);
    m->fuse.reserve = src->fuse.reserve ? ARENA_ARRAY(arena, IrReserve, S + 1) : NULL;
    for (int st = 0; st < S; st++) m->fuse.group[st] = IR_UNSET;
    int g = 0;
    for (int k = 0; k < arc_count; k++) {
        const OptArc *a = &sp->arcs[arcs[k]];
        if (a->level == OPT_UNFUSED) continue;
        for (int q = 0; q < a->count; q++) m->fuse.group[a->stmts[q]] = g;
        m->fuse.level[g] = a->level == OPT_LEVEL_DEFAULT ? IR_UNSET : a->level;
        m->fuse.span[g] = a->given_group >= 0 && src->fuse.span ? src->fuse.span[a->given_group]
                                                                : src->fuse.hole_span;
        /* a `fuse` line's group stays written; one chosen for `fuse ?` is
         * written by the optimizer */
        m->fuse.written[g] =
            a->given_group >= 0 ? src->fuse.written && src->fuse.written[a->given_group] : true;
        /* a `fuse` line's own overlap stays with its group */
        bool own = a->given_group >= 0 && src->fuse.overlap;
        m->fuse.overlap[g] = own ? src->fuse.overlap[a->given_group] : -1;
        m->fuse.overlap_span[g] = own ? src->fuse.overlap_span[a->given_group] : SPAN_NONE;
        if (m->fuse.reserve)
            m->fuse.reserve[g] =
                a->given_group >= 0 ? src->fuse.reserve[a->given_group] : (IrReserve){0, 0};
        g++;
    }
    m->fuse.group_count = g;
    return m;
}

/* ------------------------------------------------------- evaluation */

/* A group's cost as a step of micro-batches counts it (docs/optimizer.md
 * 4.1): its times and energies by the weights of its pass, plus the
 * once-per-step reductions of its weight gradients.  (What depends on the
 * whole configuration, not on the group, is added later:
 * apply_config_terms.) */
static void weigh_for_step(const OptSpace *sp, const Schedule *s, int g, OptCost *out) {
    const SchedGroup *sg = &s->groups[g];
    const StepWeights *w = &sp->weights;
    bool update = sg->stmt_count > 0 && sp->op->stmts[sg->stmts[0]].role == SR_UPDATE;
    double wl = update ? w->update_latency : w->pass_latency;
    double we = update ? w->update_energy : w->pass_energy;
    Cost *c = &out->cost;
    c->latency_s *= wl;
    c->compute_s *= wl;
    c->memory_s *= wl;
    c->network_s *= wl;
    c->fill_drain_s *= wl;
    c->stall_s *= wl;
    c->energy_j *= we;
    c->compute_energy_j *= we;
    c->memory_energy_j *= we;
    c->network_energy_j *= we;
    /* the group's nodes are contiguous (pass_cost orders them) */
    for (int i = sg->first_node; i >= 0 && i < sg->first_node + sg->node_count; i++) {
        const SchedNode *n = &s->nodes[i];
        if (!n->once_per_step) continue;
        c->latency_s += w->once_latency * n->latency_s;
        c->energy_j += w->once_energy * n->energy_j;
        c->network_energy_j += w->once_energy * n->energy_j;
    }
}

/* What a configuration's step adds that no group owns (docs/optimizer.md
 * 4.1), the same in every lowering of the configuration: whether the step
 * fits its devices' outermost memory (weights, gradients, optimizer state
 * and kept activations depend on the splits alone, not on the grouping)
 * and the energy of the sends between stages. */
typedef struct ConfigTerms {
    bool known;
    bool over; /* past the outermost memory */
    double need, capacity;
    int memory;
    Span span;
    double send_energy_j;
} ConfigTerms;

static void read_config_terms(const Schedule *s, ConfigTerms *t) {
    const SchedTraining *tr = &s->training;
    t->known = true;
    t->over = tr->present && tr->total > tr->capacity;
    t->need = tr->total;
    t->capacity = tr->capacity;
    t->memory = tr->memory;
    t->span = ir_given(s->m->phase_span) ? s->m->phase_span : s->m->span;
    t->send_energy_j = s->pipeline.send_energy_j;
}

/* Adds the configuration's terms to the arcs' costs, after the memo took
 * them (the memo keys an arc by its own choices only): a step past the
 * memory fits in no group, and the sends' energy goes to the arcs holding
 * the first position, one of which every partition has. */
static void apply_config_terms(const OptSpace *sp, const ConfigTerms *t, OptCost *row) {
    for (int a = 0; a < sp->arc_count; a++) {
        OptCost *o = &row[a];
        if (o->uncosted) continue;
        if (t->over) {
            double ratio = t->capacity > 0 ? t->need / t->capacity : INFINITY;
            double worst = o->feasible ? 0 : o->capacity > 0 ? o->need / o->capacity : INFINITY;
            o->feasible = false;
            if (ratio > worst) {
                o->need = t->need;
                o->capacity = t->capacity;
                o->memory = t->memory;
                o->excess_span = t->span;
            }
        }
        if (t->send_energy_j > 0 && sp->arcs[a].pos == 0) {
            o->cost.energy_j += t->send_energy_j;
            o->cost.network_energy_j += t->send_energy_j;
        }
    }
}

static void read_group(const OptSpace *sp, const Schedule *s, int g, OptCost *out) {
    const SchedGroup *sg = &s->groups[g];
    out->cost = sg->cost;
    out->feasible = !s->missing_unit;
    out->uncosted = false;
    out->memory = -1;
    out->need = out->capacity = 0;
    double worst = 0;
    for (int k = 0; k < s->excess_count; k++) {
        const CapacityExcess *x = &s->excess[k];
        if (x->group != g) continue;
        out->feasible = false;
        double ratio = x->capacity > 0 ? x->need / x->capacity : INFINITY;
        if (ratio > worst) {
            worst = ratio;
            out->need = x->need;
            out->capacity = x->capacity;
            out->memory = x->memory;
            out->excess_span = x->span;
        }
    }
    if (sp->weighted) weigh_for_step(sp, s, g, out);
}

static size_t key_length(const OptSpace *sp, const OptArc *a) {
    return (size_t)a->rel_count * (size_t)sp->D + (size_t)a->rel_hole_count +
           (size_t)sp->oh_count * (size_t)sp->I;
}

static void arc_key(const OptSpace *sp, const OptArc *a, int c, int64_t *key) {
    int D = sp->D, I = sp->I;
    size_t n = 0;
    const int *split = opt_split_table(sp, opt_cfg_split(sp, c));
    const int64_t *tiles = opt_cfg_tile(sp, c);
    const int *orders = opt_cfg_order(sp, c);
    for (int k = 0; k < a->rel_count; k++)
        for (int d = 0; d < D; d++) key[n++] = split[(size_t)a->rel_stmts[k] * (size_t)D + d];
    for (int k = 0; k < a->rel_hole_count; k++) key[n++] = tiles[a->rel_holes[k]];
    for (int h = 0; h < sp->oh_count; h++) {
        const int *perm = orders + (size_t)h * (size_t)I;
        int w = 0;
        for (int i = 0; i < I; i++)
            if (bits_has(a->rel_indices, perm[i])) key[n + (size_t)w++] = perm[i];
        while (w < I) key[n + (size_t)w++] = -1;
        n += (size_t)I;
    }
}

void opt_eval_ctx_init(OptEvalCtx *x, const OptSpace *sp) {
    memset(x, 0, sizeof *x);
    x->threshold = INFINITY;
    x->window = INFINITY;
    x->check_lowering = getenv("CMTC_OPT_CHECK_LOWERING") != NULL;
    int A = sp->arc_count;
    x->last_key = ARENA_ARRAY(&x->keep, int64_t *, A + 1);
    x->last_valid = ARENA_ARRAY(&x->keep, bool, A + 1);
    x->last_cost = ARENA_ARRAY(&x->keep, OptCost, A + 1);
    /* one configuration: nothing to remember between configurations */
    if (sp->cfg_count > 1)
        for (int a = 0; a < A; a++)
            if (sp->arcs[a].memo)
                x->last_key[a] = ARENA_ARRAY(&x->keep, int64_t, key_length(sp, &sp->arcs[a]) + 1);
    /* the compute memo is a cache: it stops growing at a share of the
     * budget */
    x->comp_limit = sp->budget / 16;
    lower_memo_init(&x->walks, sp->budget / 16);
    x->alone_stmts = ARENA_ARRAY(&x->keep, bool, sp->S + 1);
    for (int a = 0; a < A; a++)
        if (sp->arcs[a].count == 1 && sp->arcs[a].level == OPT_UNFUSED)
            x->alone_stmts[sp->arcs[a].stmts[0]] = true;
}

void opt_eval_ctx_free(OptEvalCtx *x) {
    lower_memo_free(&x->walks);
    arena_free_all(&x->keep);
    arena_free_all(&x->tmp);
}

size_t opt_eval_ctx_bytes(const OptEvalCtx *x) {
    return x->keep.used_total + x->tmp.used_total + lower_memo_bytes(&x->walks);
}

/* Bytes one evaluation context needs before its compute memo. */
size_t opt_eval_ctx_need(const OptSpace *sp) {
    size_t n = opt_mul((size_t)sp->arc_count, sizeof(int64_t *) + sizeof(bool) + sizeof(OptCost));
    for (int a = 0; a < sp->arc_count && sp->cfg_count > 1; a++)
        if (sp->arcs[a].memo) n = opt_add(n, 2 * sizeof(int64_t) * key_length(sp, &sp->arcs[a]));
    return n;
}

/* ------------------------------------------- per-statement compute memo */

typedef struct CompEntry {
    uint64_t hash;
    int64_t *key;
    int len;
    double compute_s, energy_j;
} CompEntry;

static int stmt_key(const OptSpace *sp, int st, int c, int64_t *key) {
    int n = 0, D = sp->D;
    const int *split = opt_split_table(sp, opt_cfg_split(sp, c));
    const int64_t *tiles = opt_cfg_tile(sp, c);
    key[n++] = st;
    for (int d = 0; d < D; d++) key[n++] = split[(size_t)st * (size_t)D + d];
    for (int h = 0; h < sp->th_count; h++)
        if (ir_stmt_uses_index(&sp->op->stmts[st], sp->th_index[h])) key[n++] = tiles[h];
    return n;
}

static CompEntry *comp_find(OptEvalCtx *x, const int64_t *key, int len, uint64_t h) {
    if (!x->comp_cap) return NULL;
    for (int i = (int)(h & (uint64_t)(x->comp_cap - 1));; i = (i + 1) & (x->comp_cap - 1)) {
        CompEntry *e = &x->comp[i];
        if (!e->hash) return NULL;
        if (e->hash == h && e->len == len &&
            memcmp(e->key, key, sizeof(int64_t) * (size_t)len) == 0)
            return e;
    }
}

static void comp_put(OptEvalCtx *x, const int64_t *key, int len, double cs, double ce) {
    uint64_t h = hash_words(key, (size_t)len);
    if (comp_find(x, key, len, h)) return;
    if (2 * (x->comp_count + 1) > x->comp_cap) {
        if (x->comp_cap >= INT32_MAX / 4) return;
        int ncap = x->comp_cap ? x->comp_cap * 2 : 1024;
        /* a full cache stays as it is: it only saves lowerings */
        size_t grown = opt_mul((size_t)ncap, sizeof(CompEntry));
        if (opt_add(x->keep.used_total, grown) > x->comp_limit) return;
        CompEntry *old = x->comp;
        int ocap = x->comp_cap;
        x->comp = ARENA_ARRAY(&x->keep, CompEntry, ncap);
        x->comp_cap = ncap;
        for (int i = 0; i < ocap; i++) {
            if (!old[i].hash) continue;
            int j = (int)(old[i].hash & (uint64_t)(ncap - 1));
            while (x->comp[j].hash) j = (j + 1) & (ncap - 1);
            x->comp[j] = old[i];
        }
    }
    if (opt_add(x->keep.used_total, sizeof(int64_t) * (size_t)len) > x->comp_limit) return;
    int j = (int)(h & (uint64_t)(x->comp_cap - 1));
    while (x->comp[j].hash) j = (j + 1) & (x->comp_cap - 1);
    CompEntry *e = &x->comp[j];
    e->hash = h;
    e->len = len;
    e->key = ARENA_ARRAY(&x->keep, int64_t, len + 1);
    memcpy(e->key, key, sizeof(int64_t) * (size_t)len);
    e->compute_s = cs;
    e->energy_j = ce;
    x->comp_count++;
}

/* The compute stage a statement runs on (docs/cost-model.md section 7):
 * 0 the matrix unit (contractions), 1 the vector unit.  Under overlap the
 * two run concurrently, so a mapping's latency is at least the larger of
 * the two sums over their statements, not the sum of both. */
static int unit_stage(const OptSpace *sp, int st) {
    return sp->op->stmts[st].cls == SC_CONTRACTION ? 0 : 1;
}

static double bound_value(Objective obj, double cl, double ce) {
    return obj == OBJ_ENERGY ? ce : obj == OBJ_EDP ? cl * ce : cl;
}

/* Level a group of this arc keeps its internal tensors at. */
static int arc_fusion_level(const OptSpace *sp, const OptArc *a) {
    if (a->level >= 0) return a->level;
    return sp->L > 1 ? 1 : 0; /* the default (passes/fusion.c) */
}

/* Whether statement st shares a tensor with one of stmts (it reads what
 * one makes, or makes what one reads). */
static bool touches(const IrOp *op, int st, const int *stmts, int count) {
    const IrStmt *x = &op->stmts[st];
    for (int k = 0; k < count; k++) {
        const IrStmt *y = &op->stmts[stmts[k]];
        for (int q = 0; q < x->input_count; q++)
            if (x->inputs[q] == y->out_tensor) return true;
        for (int q = 0; q < y->input_count; q++)
            if (y->inputs[q] == x->out_tensor) return true;
    }
    return false;
}

/* Whether arc y, holding the statements of arc a, needs at least a's
 * bytes in every memory at or below its fusion level: so when its added
 * statements share no tensor with a's.  One that reads a result of a
 * makes it internal (no longer written out, and a host an element-wise
 * result may be written over, cost-model.md section 2); one that makes an
 * input of a makes it an intermediate kept as it lives: either can hold
 * less than a held (docs/optimizer.md section 3). */
static bool holds_at_least(const OptSpace *sp, const OptArc *y, const int *stmts, int count) {
    for (int k = 0; k < y->count; k++) {
        int st = y->stmts[k];
        bool inside = false;
        for (int j = 0; j < count && !inside; j++) inside = stmts[j] == st;
        if (!inside && touches(sp->op, st, stmts, count)) return false;
    }
    return true;
}

/* Arc a was costed: when it overflows a memory, mark every arc not yet
 * costed that holds its statements, is fused at that memory's level or
 * outside it, and holds at least as much (holds_at_least).  Such an arc
 * holds a's first statement and its positions contain a's.  Returns how
 * many were marked. */
static int imply(const OptSpace *sp, OptCost *row, bool *done, int a, OptEvalCtx *x) {
    const OptCost *oc = &row[a];
    if (oc->feasible || oc->uncosted || oc->memory < 0) return 0;
    int lm = sp->arch->memories[oc->memory].level;
    const OptArc *arc = &sp->arcs[a];
    int st = arc->stmts[0], marked = 0;
    for (size_t k = sp->stmt_arc_first[st]; k < sp->stmt_arc_first[st + 1]; k++) {
        int b = sp->stmt_arcs[k];
        const OptArc *y = &sp->arcs[b];
        if (done[b] || y->pos > arc->pos || y->pos + y->count < arc->pos + arc->count) continue;
        /* results are written in place only at the fusion level
         * (cost-model.md section 2): fused at M's level, y may share there
         * what a, fused outside it, held side by side */
        int ly = arc_fusion_level(sp, y);
        if (ly > lm || (ly == lm && arc_fusion_level(sp, arc) != lm) ||
            !holds_at_least(sp, y, arc->stmts, arc->count))
            continue;
        row[b] = *oc; /* infeasible; its need is a lower bound */
        done[b] = true;
        marked++;
        x->implied++;
    }
    return marked;
}

/* A lower bound on the best partition of a configuration whose arcs are
 * partly costed: a shortest path over the positions (as best_partition)
 * in which a costed arc weighs its record (one that does not fit, or was
 * left uncosted by the clock, is no candidate) and an arc not yet costed
 * the bound of section 3 of docs/optimizer.md over its statements: the
 * larger of its two units' summed compute times (under `objective
 * energy`, its operations' energy), which every group of them takes at
 * least, a little less for the rounding of the sums.  Each arc weighs at
 * most what it costs, and rounding is monotone, so the path is at most
 * the configuration's best partition. */
static double partial_bound(const OptSpace *sp, Arena *t, const OptCost *row, const bool *done,
                            const double *unit_s, const double *op_j, bool energy) {
    int S = sp->S;
    double *best = ARENA_ARRAY(t, double, S + 1);
    best[S] = 0;
    for (int p = S - 1; p >= 0; p--) {
        best[p] = INFINITY;
        for (int k = sp->start_first[p]; k < sp->start_first[p + 1]; k++) {
            int a = sp->start_arcs[k];
            const OptArc *arc = &sp->arcs[a];
            double v;
            if (done[a]) {
                const OptCost *c = &row[a];
                if (c->uncosted || !c->feasible) continue;
                v = energy ? c->cost.energy_j : c->cost.latency_s;
            } else {
                double units[2] = {0, 0}, ops = 0;
                for (int q = 0; q < arc->count; q++) {
                    int st = arc->stmts[q];
                    units[unit_stage(sp, st)] += unit_s[st];
                    ops += op_j[st];
                }
                v = (energy ? ops : units[0] > units[1] ? units[0] : units[1]) * (1 - 1e-9);
            }
            double tot = v + best[p + arc->count];
            if (tot < best[p]) best[p] = tot;
        }
    }
    return best[0];
}

/* A probe's compute record of statement st, whose group it did not cost:
 * its compute time and its operations' energy, weighted as a group of it
 * would be, a little less for rounding (the compute bound's terms). */
static void probe_compute(const OptSpace *sp, const Schedule *s, int st, OptCost *alone) {
    const SchedStmt *ss = &s->stmts[st];
    double wl = 1, we = 1;
    if (sp->weighted) {
        bool update = sp->op->stmts[st].role == SR_UPDATE;
        wl = update ? sp->weights.update_latency : sp->weights.pass_latency;
        we = update ? sp->weights.update_energy : sp->weights.pass_energy;
    }
    alone->cost.compute_s = ss->compute_s * wl * (1 - 1e-9);
    alone->cost.compute_energy_j =
        (ss->unit ? ss->total_work * ss->unit->energy : 0) * we * (1 - 1e-9);
}

/* CMTC_OPT_CHECK_LOWERING=1 (tests/suites/optimizer.sh): every lowering
 * that costs only the arcs' groups is compared with the whole lowering of
 * the same mapping, group record by group record, bit for bit. */
static void check_restricted(const OptSpace *sp, const IrMapping *m, const Schedule *part,
                             const bool *only) {
    Arena t = {0};
    const Schedule *whole = lower_mapping(&t, m, false, NULL);
    for (int st = 0; st < sp->S; st++) {
        if (!only[st]) continue;
        OptCost x, y;
        read_group(sp, part, part->stmts[st].group, &x);
        read_group(sp, whole, whole->stmts[st].group, &y);
        if (memcmp(&x.cost, &y.cost, sizeof x.cost) != 0 || x.feasible != y.feasible ||
            memcmp(&x.need, &y.need, sizeof x.need) != 0 || x.memory != y.memory) {
            fprintf(stderr, "cmtc: internal error: the lowering of %s's group alone differs\n",
                    sp->op->stmts[st].name);
            abort();
        }
    }
    arena_free_all(&t);
}

static bool ctx_past(const OptSpace *sp) {
    return sp->deadline > 0 && opt_now() > sp->deadline;
}

OptRow opt_evaluate_config(const OptSpace *sp, OptEvalCtx *x, int c, OptCost *row) {
    int A = sp->arc_count, S = sp->S;
    arena_free_all(&x->tmp);
    Arena *t = &x->tmp;
    bool *done = ARENA_ARRAY(t, bool, A + 1);
    int *cover = ARENA_ARRAY(t, int, S + 1);
    bool *used = ARENA_ARRAY(t, bool, S + 1);
    int64_t **keys = ARENA_ARRAY(t, int64_t *, A + 1);
    int remaining = A;
    int64_t *skey = ARENA_ARRAY(t, int64_t, sp->D + sp->th_count + 2);
    bool memo = sp->cfg_count > 1;
    /* the configuration's own terms, read from its first lowering */
    ConfigTerms terms = {0};
    bool need_terms = sp->m->phase == PHASE_TRAIN || sp->weighted;
    bool *not_costed = ARENA_ARRAY(t, bool, A + 1); /* skipped: the step does not fit */
    /* each statement's compute time and operation energy alone (from the
     * first lowering), for the partial bound */
    double *unit_s = ARENA_ARRAY(t, double, S + 1), *op_j = ARENA_ARRAY(t, double, S + 1);
    bool energy = x->objective == OBJ_ENERGY;
    /* the compute bound from remembered statements, before any lowering */
    if (x->threshold < INFINITY) {
        /* statements not remembered count 0: still a lower bound */
        double cl[2] = {0, 0}, ce = 0;
        for (int st = 0; st < S; st++) {
            int len = stmt_key(sp, st, c, skey);
            CompEntry *e = comp_find(x, skey, len, hash_words(skey, (size_t)len));
            if (!e) continue;
            cl[unit_stage(sp, st)] += e->compute_s;
            ce += e->energy_j;
        }
        if (bound_value(x->objective, cl[0] > cl[1] ? cl[0] : cl[1], ce) > x->threshold) {
            x->comp_hits++;
            return OPT_ROW_CUT;
        }
    }
    /* the memo */
    for (int a = 0; a < A && memo; a++) {
        if (!sp->arcs[a].memo) continue;
        size_t len = key_length(sp, &sp->arcs[a]);
        keys[a] = ARENA_ARRAY(t, int64_t, len + 1);
        arc_key(sp, &sp->arcs[a], c, keys[a]);
        if (x->last_valid[a] && memcmp(keys[a], x->last_key[a], sizeof(int64_t) * len) == 0) {
            row[a] = x->last_cost[a];
            done[a] = true;
            remaining--;
            x->memo_hits++;
        }
    }
    /* every statement alone first, then long arcs (few lowerings): an
     * arc that overflows a memory makes an arc holding its statements
     * overflow it too when that arc is fused at the memory's level or
     * outside it and holds at least as much there (imply) */
    bool first = true, partial = false;
    const int *order = sp->by_length;
    for (int a = 0; a < A; a++)
        if (done[a]) remaining -= imply(sp, row, done, a, x);
    while (remaining > 0) {
        /* the clock, between lowerings; every statement alone is always
         * costed, so a partial row still has a partition */
        if (!first && ctx_past(sp)) {
            partial = true;
            for (int a = 0; a < A; a++)
                if (!done[a]) {
                    memset(&row[a], 0, sizeof row[a]);
                    row[a].uncosted = true;
                    row[a].memory = -1;
                    done[a] = true;
                }
            break;
        }
        int cc = 0;
        memset(used, 0, sizeof(bool) * (size_t)S);
        if (!first)
            for (int k = 0; k < A; k++) {
                const OptArc *a = &sp->arcs[order[k]];
                if (done[order[k]]) continue;
                bool free = true;
                for (int q = 0; q < a->count && free; q++)
                    if (used[a->stmts[q]]) free = false;
                if (!free) continue;
                for (int q = 0; q < a->count; q++) used[a->stmts[q]] = true;
                cover[cc++] = order[k];
            }
        Arena scratch = {0};
        IrMapping *m = opt_scratch_mapping(&scratch, sp, c, cover, cc);
        /* after the first lowering (every statement alone, which also
         * gives the configuration's terms), only the arcs' groups are
         * read: the others are not costed, nor is the step */
        LowerOptions lo = {.memo = &x->walks};
        if (!first) {
            lo.only_stmts = used;
            lo.only_needed = true;
            lo.stop_after = "cost";
        } else if (x->probe) {
            /* a probe reads no sends' energy (a term it may leave out of
             * a lower bound) and no statement's group alone but those of
             * its arcs alone */
            lo.only_stmts = x->alone_stmts;
            lo.stop_after = "cost";
        }
        Schedule *s = lower_mapping(&scratch, m, false, &lo);
        x->lowerings++;
        if (x->check_lowering && lo.only_stmts) check_restricted(sp, m, s, lo.only_stmts);
        if (!terms.known) read_config_terms(s, &terms);
        for (int k = 0; k < cc; k++) {
            const OptArc *a = &sp->arcs[cover[k]];
            read_group(sp, s, s->stmts[a->stmts[0]].group, &row[cover[k]]);
            done[cover[k]] = true;
            remaining--;
        }
        for (int k = 0; k < cc; k++) remaining -= imply(sp, row, done, cover[k], x);
        if (first) {
            double cl[2] = {0, 0}, ce = 0;
            for (int st = 0; st < S; st++) {
                OptCost alone;
                read_group(sp, s, s->stmts[st].group, &alone);
                if (x->probe && !x->alone_stmts[st]) probe_compute(sp, s, st, &alone);
                cl[unit_stage(sp, st)] += alone.cost.compute_s;
                ce += alone.cost.compute_energy_j;
                unit_s[st] = alone.cost.compute_s;
                op_j[st] = alone.cost.compute_energy_j;
                int len = stmt_key(sp, st, c, skey);
                comp_put(x, skey, len, alone.cost.compute_s, alone.cost.compute_energy_j);
            }
            double lb = bound_value(x->objective, cl[0] > cl[1] ? cl[0] : cl[1], ce);
            if (x->threshold < INFINITY && lb > x->threshold) {
                arena_free_all(&scratch);
                return OPT_ROW_CUT;
            }
            /* a step past its devices' memory fits in no grouping: the
             * other arcs need no lowering (apply_config_terms marks them) */
            if (terms.over) {
                for (int a = 0; a < A; a++)
                    if (!done[a]) {
                        memset(&row[a], 0, sizeof row[a]);
                        row[a].memory = -1;
                        not_costed[a] = done[a] = true;
                        x->implied++;
                    }
                remaining = 0;
                arena_free_all(&scratch);
                break;
            }
        }
        /* statements left to groups of their own: their unfused arcs too
         * (after the first lowering every such arc is done, and the
         * groups of statements left alone are not costed) */
        for (int st = 0; st < S && first; st++) {
            if (used[st]) continue;
            OptCost alone;
            read_group(sp, s, s->stmts[st].group, &alone);
            for (size_t k = sp->stmt_arc_first[st]; k < sp->stmt_arc_first[st + 1]; k++) {
                int a = sp->stmt_arcs[k];
                if (done[a]) continue;
                const OptArc *arc = &sp->arcs[a];
                if (arc->count == 1 && arc->level == OPT_UNFUSED) {
                    row[a] = alone;
                    done[a] = true;
                    remaining--;
                    remaining -= imply(sp, row, done, a, x);
                } else if (first && !alone.feasible && alone.memory >= 0 &&
                           arc_fusion_level(sp, arc) <= sp->arch->memories[alone.memory].level &&
                           holds_at_least(sp, arc, &st, 1)) {
                    row[a] = alone; /* infeasible; need is a lower bound */
                    done[a] = true;
                    remaining--;
                    x->implied++;
                }
            }
        }
        first = false;
        arena_free_all(&scratch);
        /* the search would drop this configuration after costing it: its
         * best partition is at least the partial bound */
        if (remaining > 0 && x->window < INFINITY &&
            partial_bound(sp, t, row, done, unit_s, op_j, energy) > x->window) {
            x->window_cuts++;
            return OPT_ROW_CUT;
        }
    }
    for (int a = 0; a < A && memo; a++)
        if (sp->arcs[a].memo && !not_costed[a]) {
            /* an arc not costed is not remembered */
            x->last_valid[a] = !row[a].uncosted;
            if (!x->last_valid[a]) continue;
            memcpy(x->last_key[a], keys[a], sizeof(int64_t) * key_length(sp, &sp->arcs[a]));
            x->last_cost[a] = row[a];
        }
    if (need_terms) {
        if (!terms.known) {
            /* every arc came from the memo: one lowering for the terms */
            Arena scratch = {0};
            IrMapping *m = opt_scratch_mapping(&scratch, sp, c, NULL, 0);
            LowerOptions lo = {.memo = &x->walks};
            read_config_terms(lower_mapping(&scratch, m, false, &lo), &terms);
            x->lowerings++;
            arena_free_all(&scratch);
        }
        apply_config_terms(sp, &terms, row);
    }
    return partial ? OPT_ROW_PARTIAL : OPT_ROW_FULL;
}
/* --------------------------------------------------------- results */

void opt_apply(Arena *arena, const OptSpace *sp, IrMapping *out, int c, const int *arcs,
               int arc_count) {
    IrMapping *full = opt_scratch_mapping(arena, sp, c, arcs, arc_count);
    int S = sp->S;
    /* every statement gets a group, as the checker gives one: statements
     * alone keep their own span and the default level */
    int g = full->fuse.group_count;
    for (int st = 0; st < S; st++) {
        if (full->fuse.group[st] >= 0) continue;
        full->fuse.group[st] = g;
        full->fuse.level[g] = IR_UNSET;
        full->fuse.span[g] = sp->op->stmts[st].span;
        full->fuse.overlap[g] = -1;
        full->fuse.overlap_span[g] = SPAN_NONE;
        g++;
    }
    full->fuse.group_count = g;
    out->spatial.split = full->spatial.split;
    if (!out->spatial.split_span) out->spatial.split_span = full->spatial.split_span;
    out->tile.size = full->tile.size;
    if (!out->tile.span) out->tile.span = full->tile.span;
    out->tile.index_hole = full->tile.index_hole;
    out->tile.index_hole_count = 0;
    out->order.perm = full->order.perm;
    out->order.length = full->order.length;
    out->order.chosen = full->order.chosen;
    if (!out->order.span) out->order.span = full->order.span;
    out->fuse.group = full->fuse.group;
    out->fuse.level = full->fuse.level;
    out->fuse.span = full->fuse.span;
    out->fuse.written = full->fuse.written;
    out->fuse.overlap = full->fuse.overlap;
    out->fuse.overlap_span = full->fuse.overlap_span;
    out->fuse.reserve = full->fuse.reserve;
    out->fuse.group_count = full->fuse.group_count;
    out->hole_count = 0;
}
