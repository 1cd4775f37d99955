/* optimize_space.c — the space of a mapping with holes: split tables,
 * tile values, loop orders (configurations) and fusion arcs; scratch
 * mappings for evaluation; per-arc costs read from the lowering itself. */
#include "passes/optimize.h"

#include <math.h>
#include <string.h>

double opt_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ splits */

static bool dim_outside_level(const IrArch *a, int d, int level) {
    if (level >= a->level_count) return true; /* the compute: inside all */
    return a->dims[d].cluster < a->levels[level].clusters_outside;
}

/* Per-instance extent of index i at level l for statement st. */
static int64_t instance_extent(const OptSpace *sp, const int *split, int st, int l, int i) {
    int64_t e = sp->op->indices[i].extent;
    for (int d = 0; d < sp->D; d++)
        if (split[st * sp->D + d] == i && dim_outside_level(sp->arch, d, l))
            e /= sp->arch->dims[d].size;
    return e;
}

/* Product of the dims splitting i for st inside level outer, outside inner. */
static int64_t split_between(const OptSpace *sp, const int *split, int st, int outer, int inner,
                             int i) {
    int64_t p = 1;
    for (int d = 0; d < sp->D; d++)
        if (split[st * sp->D + d] == i && !dim_outside_level(sp->arch, d, outer) &&
            dim_outside_level(sp->arch, d, inner))
            p *= sp->arch->dims[d].size;
    return p;
}

static bool split_divides(const OptSpace *sp, const int *split) {
    for (int st = 0; st < sp->S; st++)
        for (int i = 0; i < sp->I; i++) {
            int64_t parts = 1;
            for (int d = 0; d < sp->D; d++)
                if (split[st * sp->D + d] == i) parts *= sp->arch->dims[d].size;
            if (parts > 1 && sp->op->indices[i].extent % parts != 0) return false;
            /* a given tile covers whole shares of the split inside its
             * level, and divides the share of the one outside it */
            for (int l = 1; sp->m->tile.size && l < sp->L; l++) {
                int64_t t = sp->m->tile.size[l * sp->I + i];
                if (t < 1 || !ir_stmt_uses_index(&sp->op->stmts[st], i)) continue;
                if (t % split_between(sp, split, st, l, sp->L, i)) return false;
                int64_t share = sp->op->indices[i].extent / split_between(sp, split, st, 0, l, i);
                if (share % t) return false;
            }
        }
    return true;
}

/* The options of one dim: sets of indices no hole statement uses two of. */
typedef struct DimOptions {
    int count, cap;
    unsigned *sets; /* bit i: index i */
    int *fallback;  /* index split by the statements that use none of the
                       set, or -1 (sequence parallelism beside Megatron) */
} DimOptions;

static DimOptions dim_options(Arena *a, const OptSpace *sp, int d) {
    DimOptions o = {0, 0, NULL, NULL};
    int I = sp->I;
    unsigned used_by_hole = 0;
    if (I > 32) I = 32; /* the optimizer splits the first 32 indices only */
    for (int st = 0; st < sp->S; st++)
        if (sp->split_hole[st * sp->D + d])
            for (int i = 0; i < I; i++)
                if (ir_stmt_uses_index(&sp->op->stmts[st], i)) {
                    int allow = sp->split_allowed[st * sp->D + d];
                    if (allow < 0 || allow == i) used_by_hole |= 1u << i;
                }
    int bits = __builtin_popcount(used_by_hole);
    /* every subset of the indices the holes may take; past 16 of them,
     * the sets of at most two (the space would be too large anyway) */
    size_t cap = bits <= 16 ? (size_t)1 << bits : (size_t)(1 + bits + bits * bits);

    /* candidate sets: submasks, or (past 16 indices) pairs and singles */
    unsigned *cand = ARENA_ARRAY(a, unsigned, cap + 1);
    size_t nc = 0;
    if (bits <= 16) {
        for (unsigned set = used_by_hole;; set = (set - 1) & used_by_hole) {
            cand[nc++] = set;
            if (set == 0) break;
        }
    } else {
        for (int i = I - 1; i >= 0; i--)
            for (int j = i - 1; j >= 0; j--)
                if ((used_by_hole >> i & 1u) && (used_by_hole >> j & 1u))
                    cand[nc++] = 1u << i | 1u << j;
        for (int i = I - 1; i >= 0; i--)
            if (used_by_hole >> i & 1u) cand[nc++] = 1u << i;
        cand[nc++] = 0;
    }
    for (size_t ci = 0; ci < nc; ci++) {
        unsigned set = cand[ci];
        bool ok = true;
        for (int st = 0; st < sp->S && ok; st++) {
            if (!sp->split_hole[st * sp->D + d]) continue;
            int n = 0;
            for (int i = 0; i < I; i++)
                if ((set >> i & 1u) && ir_stmt_uses_index(&sp->op->stmts[st], i)) {
                    n++;
                    int allow = sp->split_allowed[st * sp->D + d];
                    if (allow >= 0 && allow != i) ok = false;
                }
            if (n > 1) ok = false;
        }
        if (!ok) continue;
        /* the set alone, then, for a set of several indices (a Megatron
         * assignment), with each fallback index: statements that use none
         * of the set split that index instead */
        for (int fb = -1; fb < I; fb++) {
            if (fb >= 0 && (__builtin_popcount(set) < 2 || (set >> fb & 1u))) continue;
            if (fb >= 0) {
                bool some = false;
                for (int st = 0; st < sp->S && !some; st++) {
                    if (!sp->split_hole[st * sp->D + d]) continue;
                    const IrStmt *is = &sp->op->stmts[st];
                    bool uses_set = false;
                    for (int i = 0; i < I; i++)
                        if ((set >> i & 1u) && ir_stmt_uses_index(is, i)) uses_set = true;
                    int allow = sp->split_allowed[st * sp->D + d];
                    if (!uses_set && ir_stmt_uses_index(is, fb) && (allow < 0 || allow == fb))
                        some = true;
                }
                if (!some) continue;
            }
            if (o.count == o.cap) {
                int ncap = o.cap ? o.cap * 2 : 16;
                o.sets = arena_realloc(a, o.sets, sizeof(unsigned) * (size_t)o.cap,
                                       sizeof(unsigned) * (size_t)ncap);
                o.fallback = arena_realloc(a, o.fallback, sizeof(int) * (size_t)o.cap,
                                           sizeof(int) * (size_t)ncap);
                o.cap = ncap;
            }
            o.sets[o.count] = set;
            o.fallback[o.count++] = fb;
        }
    }
    /* enumerate from the empty set up (no split first) */
    for (int i = 0, j = o.count - 1; i < j; i++, j--) {
        unsigned t = o.sets[i];
        o.sets[i] = o.sets[j];
        o.sets[j] = t;
        int f = o.fallback[i];
        o.fallback[i] = o.fallback[j];
        o.fallback[j] = f;
    }
    return o;
}

/* Dims a and b are interchangeable: same cluster, size and topology, and
 * the same statements have holes on them with the same allowances. */
static bool dims_interchangeable(const OptSpace *sp, int a, int b) {
    const IrClusterDim *x = &sp->arch->dims[a], *y = &sp->arch->dims[b];
    if (x->cluster != y->cluster || x->size != y->size || x->topology != y->topology) return false;
    for (int st = 0; st < sp->S; st++) {
        if (sp->split_hole[st * sp->D + a] != sp->split_hole[st * sp->D + b]) return false;
        if (!sp->split_hole[st * sp->D + a] &&
            sp->m->spatial.split[st * sp->D + a] != sp->m->spatial.split[st * sp->D + b])
            return false;
        if (sp->split_allowed[st * sp->D + a] != sp->split_allowed[st * sp->D + b]) return false;
    }
    return true;
}

static void build_splits(OptSpace *sp) {
    Arena *a = sp->arena;
    int S = sp->S, D = sp->D;
    int *base = ARENA_ARRAY(a, int, S *D + 1);
    for (int k = 0; k < S * D; k++) {
        int v = sp->m->spatial.split ? sp->m->spatial.split[k] : IR_UNSET;
        base[k] = sp->split_hole[k] ? IR_UNSET : v;
    }
    DimOptions *opt = ARENA_ARRAY(a, DimOptions, D + 1);
    int *hole_dims = ARENA_ARRAY(a, int, D + 1);
    int hd = 0;
    for (int d = 0; d < D; d++) {
        bool any = false;
        for (int st = 0; st < S; st++)
            if (sp->split_hole[st * D + d]) any = true;
        if (any) {
            opt[d] = dim_options(a, sp, d);
            hole_dims[hd++] = d;
        }
    }
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
    int cap = 16;
    sp->splits = ARENA_ARRAY(a, int, cap *S *D + 1);
    sp->split_count = 0;
    int *choice = ARENA_ARRAY(a, int, hd + 1);
    int *table = ARENA_ARRAY(a, int, S *D + 1);
    for (;;) {
        bool canonical = true;
        for (int k = 0; k < hd; k++)
            if (twin[k] >= 0 && choice[k] < choice[twin[k]]) canonical = false;
        if (canonical) {
            memcpy(table, base, sizeof(int) * (size_t)(S * D));
            for (int k = 0; k < hd; k++) {
                int d = hole_dims[k];
                unsigned set = opt[d].sets[choice[k]];
                int fb = opt[d].fallback[choice[k]];
                for (int st = 0; st < S; st++) {
                    if (!sp->split_hole[st * D + d]) continue;
                    const IrStmt *is = &sp->op->stmts[st];
                    int v = IR_UNSET;
                    for (int i = 0; i < sp->I && i < 32; i++)
                        if ((set >> i & 1u) && ir_stmt_uses_index(is, i)) v = i;
                    int allow = sp->split_allowed[st * D + d];
                    if (v == IR_UNSET && fb >= 0 && ir_stmt_uses_index(is, fb) &&
                        (allow < 0 || allow == fb))
                        v = fb;
                    table[st * D + d] = v;
                }
            }
            if (split_divides(sp, table)) {
                if (sp->split_count == cap) {
                    sp->splits = arena_realloc(a, sp->splits, sizeof(int) * (size_t)(cap * S * D),
                                               sizeof(int) * (size_t)(2 * cap * S * D));
                    cap *= 2;
                }
                memcpy(sp->splits + (size_t)sp->split_count * (size_t)(S * D), table,
                       sizeof(int) * (size_t)(S * D));
                sp->split_count++;
            }
        }
        int k = 0;
        while (k < hd && ++choice[k] == opt[hole_dims[k]].count) choice[k++] = 0;
        if (k == hd) break;
    }
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

/* The tile of index i at level l as far as it is known: given, or the
 * value assigned to a hole so far; 0 when neither. */
static int64_t known_tile(const OptSpace *sp, const int64_t *hv, int l, int i) {
    int64_t v = sp->m->tile.size ? sp->m->tile.size[l * sp->I + i] : IR_UNSET;
    if (v >= 1) return v;
    if (v == IR_HOLE)
        for (int h = 0; h < sp->th_count; h++)
            if (sp->th_level[h] == l && sp->th_index[h] == i) return hv[h];
    return 0;
}

/* The divisor bound for hole h given values of the holes before it
 * (outer levels of the same index come first). */
static int64_t tile_bound(const OptSpace *sp, const int *split, const int64_t *hv, int h) {
    int l = sp->th_level[h], i = sp->th_index[h];
    int64_t g = 0;
    for (int st = 0; st < sp->S; st++) {
        if (!ir_stmt_uses_index(&sp->op->stmts[st], i)) continue;
        g = gcd64(g, instance_extent(sp, split, st, l, i));
        for (int lo = l - 1; lo >= 0; lo--) {
            int64_t v = known_tile(sp, hv, lo, i);
            if (v < 1) continue;
            int64_t p = split_between(sp, split, st, lo, l, i);
            if (v % p) return 0;
            g = gcd64(g, v / p);
            break;
        }
    }
    if (g == 0) g = sp->op->indices[i].extent; /* no statement uses it */
    return g;
}

/* The hole's tile must be a multiple of the split of its index inside the
 * level (each instance below gets a whole share: tiles and splits nest),
 * and given tiles at inner levels must divide that share. */
static bool inner_tiles_divide(const OptSpace *sp, const int *split, const int64_t *hv, int h,
                               int64_t t) {
    int l = sp->th_level[h], i = sp->th_index[h];
    for (int st = 0; st < sp->S; st++)
        if (ir_stmt_uses_index(&sp->op->stmts[st], i) &&
            t % split_between(sp, split, st, l, sp->L, i))
            return false;
    for (int li = l + 1; li < sp->L; li++) {
        int64_t w = sp->m->tile.size ? sp->m->tile.size[li * sp->I + i] : IR_UNSET;
        if (w == IR_HOLE) break; /* checked when that hole is enumerated */
        if (w < 1) continue;
        for (int st = 0; st < sp->S; st++) {
            if (!ir_stmt_uses_index(&sp->op->stmts[st], i)) continue;
            int64_t p = split_between(sp, split, st, l, li, i);
            if (t % p || (t / p) % w) return false;
        }
        break;
    }
    (void)hv;
    return true;
}

/* --------------------------------------------------- configurations */

static void push_config(OptSpace *sp, int split, const int64_t *hv, const int *orders) {
    int TH = sp->th_count, OH = sp->oh_count, I = sp->I;
    if (sp->cfg_count == sp->cfg_cap) {
        int ncap = sp->cfg_cap ? sp->cfg_cap * 2 : 64;
        sp->cfg_split = arena_realloc(sp->arena, sp->cfg_split, sizeof(int) * (size_t)sp->cfg_cap,
                                      sizeof(int) * (size_t)ncap);
        sp->cfg_tile =
            arena_realloc(sp->arena, sp->cfg_tile, sizeof(int64_t) * (size_t)(sp->cfg_cap * TH),
                          sizeof(int64_t) * (size_t)(ncap * TH + 1));
        sp->cfg_order =
            arena_realloc(sp->arena, sp->cfg_order, sizeof(int) * (size_t)(sp->cfg_cap * OH * I),
                          sizeof(int) * (size_t)(ncap * OH * I + 1));
        sp->cfg_cap = ncap;
    }
    int c = sp->cfg_count++;
    sp->cfg_split[c] = split;
    for (int h = 0; h < TH; h++) sp->cfg_tile[(size_t)c * (size_t)TH + (size_t)h] = hv[h];
    for (int k = 0; k < OH * I; k++)
        sp->cfg_order[(size_t)c * (size_t)(OH * I) + (size_t)k] = orders[k];
}

typedef struct Enum {
    OptSpace *sp;
    int split;
    int64_t *hv;
    int *orders;
    int *loops;  /* [oh * I]: looping indices of each order hole */
    int *loop_n; /* [oh] */
    double deadline;
    long limit;
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

static bool over_limit(Enum *e) {
    OptSpace *sp = e->sp;
    if (e->limit > 0 && sp->cfg_count >= e->limit) return true;
    if (e->deadline > 0 && (sp->cfg_count & 255) == 0 && opt_now() > e->deadline) return true;
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
        if (over_limit(e)) {
            sp->truncated = true;
            return;
        }
        push_config(sp, e->split, e->hv, e->orders);
        return;
    }
    int n = e->loop_n[k];
    int *perm = ARENA_ARRAY(sp->arena, int, I + 1);
    for (int q = 0; q < n; q++) perm[q] = e->loops[k * I + q];
    if (!sp->symmetry) { /* the exhaustive space: every permutation */
        n = I;
        for (int q = 0; q < I; q++) perm[q] = q;
    }
    do {
        int w = 0;
        for (int q = 0; q < n; q++) e->orders[k * I + w++] = perm[q];
        for (int i = 0; i < I; i++) {
            bool in = false;
            for (int q = 0; q < n; q++)
                if (perm[q] == i) in = true;
            if (!in) e->orders[k * I + w++] = i;
        }
        enum_orders(e, k + 1);
    } while (next_perm(perm, n) && !sp->truncated);
}

/* Which indices loop at each order hole's level under the current split
 * and tiles: read from the lowering of the all-singletons mapping. */
static void find_loops(Enum *e) {
    OptSpace *sp = e->sp;
    int I = sp->I;
    if (sp->oh_count == 0 || !sp->symmetry) return;
    /* a configuration with default orders to lower */
    int c = sp->cfg_count;
    int *dflt = ARENA_ARRAY(sp->arena, int, sp->oh_count *I + 1);
    for (int k = 0; k < sp->oh_count; k++)
        for (int i = 0; i < I; i++) dflt[k * I + i] = i;
    push_config(sp, e->split, e->hv, dflt);
    Arena scratch = {0};
    IrMapping *m = opt_scratch_mapping(&scratch, sp, c, NULL, 0);
    Schedule *s = lower_mapping(&scratch, m, false, NULL);
    sp->evaluations++;
    for (int k = 0; k < sp->oh_count; k++) {
        int l = sp->oh_level[k];
        int n = 0;
        for (int i = 0; i < I; i++) {
            bool loops = false;
            for (int st = 0; st < sp->S; st++)
                if (ir_stmt_uses_index(&sp->op->stmts[st], i) &&
                    s->stmts[st].trips[sched_li(s, l, i)] > 1)
                    loops = true;
            if (loops) e->loops[k * I + n++] = i;
        }
        e->loop_n[k] = n;
    }
    arena_free_all(&scratch);
    sp->cfg_count--; /* drop the probe */
}

static void enum_tiles(Enum *e, int h) {
    OptSpace *sp = e->sp;
    if (sp->truncated) return;
    const int *split = sp->splits + (size_t)e->split * (size_t)(sp->S * sp->D);
    if (h == sp->th_count) {
        find_loops(e);
        enum_orders(e, 0);
        return;
    }
    int64_t g = tile_bound(sp, split, e->hv, h);
    for (int64_t t = 1; t <= g && !sp->truncated; t++) {
        if (g % t) continue;
        if (!inner_tiles_divide(sp, split, e->hv, h, t)) continue;
        e->hv[h] = t;
        enum_tiles(e, h + 1);
    }
}

/* ------------------------------------------------------------- arcs */

static void push_arc(OptSpace *sp, int cap_hint, const int *stmts, int count, int level, int given,
                     int block) {
    (void)cap_hint;
    OptArc *a = &sp->arcs[sp->arc_count++];
    a->stmts = ARENA_ARRAY(sp->arena, int, count + 1);
    memcpy(a->stmts, stmts, sizeof(int) * (size_t)count);
    a->count = count;
    a->level = level;
    a->given_group = given;
    a->block = block;
    a->mask = 0;
    for (int q = 0; q < count && q < 64; q++)
        if (stmts[q] < 64) a->mask |= (uint64_t)1 << stmts[q];
}

/* Levels a fused group may take: every memory level but the outermost
 * (where a fused group's tensors would go anyway), or the only one. */
static int fusion_levels(const OptSpace *sp, int *out) {
    int n = 0;
    for (int l = 1; l < sp->L; l++) out[n++] = l;
    if (n == 0) out[n++] = 0;
    return n;
}

static bool reads_from(const IrOp *op, int st, int from) {
    const IrStmt *s = &op->stmts[st];
    for (int k = 0; k < s->input_count; k++)
        if (op->tensors[s->inputs[k]].producer == from) return true;
    return false;
}

/* What each arc's cost depends on (see OptArc). */
static void relevance(OptSpace *sp) {
    int S = sp->S;
    for (int x = 0; x < sp->arc_count; x++) {
        OptArc *a = &sp->arcs[x];
        bool *in = ARENA_ARRAY(sp->arena, bool, S + 1);
        bool *rel = ARENA_ARRAY(sp->arena, bool, S + 1);
        for (int q = 0; q < a->count; q++) in[a->stmts[q]] = rel[a->stmts[q]] = true;
        for (int st = 0; st < S; st++)
            for (int q = 0; q < a->count; q++)
                if (reads_from(sp->op, a->stmts[q], st) || reads_from(sp->op, st, a->stmts[q]))
                    rel[st] = true;
        a->rel_stmts = ARENA_ARRAY(sp->arena, int, S + 1);
        a->rel_count = 0;
        for (int st = 0; st < S; st++)
            if (rel[st]) a->rel_stmts[a->rel_count++] = st;
        a->rel_mask = 0;
        for (int q = 0; q < a->count; q++)
            for (int i = 0; i < sp->I; i++)
                if (ir_stmt_uses_index(&sp->op->stmts[a->stmts[q]], i)) a->rel_mask |= 1u << i;
        a->rel_holes = ARENA_ARRAY(sp->arena, int, sp->th_count + 1);
        a->rel_hole_count = 0;
        for (int h = 0; h < sp->th_count; h++)
            if (a->rel_mask >> sp->th_index[h] & 1u) a->rel_holes[a->rel_hole_count++] = h;
        /* worth remembering when some choice does not reach it */
        a->memo = a->rel_hole_count < sp->th_count || a->rel_count < S;
        if (sp->oh_count > 0 && a->rel_mask != (1u << sp->I) - 1) a->memo = true;
    }
}

static void build_arcs(OptSpace *sp) {
    const IrMapping *m = sp->m;
    int S = sp->S;
    int *levels = ARENA_ARRAY(sp->arena, int, sp->L + 1);
    int nlev = fusion_levels(sp, levels);
    /* upper bound of arcs: every run of free statements at every level plus
     * each fixed group at every level */
    int max_arcs = S * (S + 1) / 2 * (nlev + 1) + S * (nlev + 1) + 1;
    sp->arcs = ARENA_ARRAY(sp->arena, OptArc, max_arcs);
    sp->arc_count = 0;
    int *buf = ARENA_ARRAY(sp->arena, int, S + 1);
    int block = 0;
    /* fixed groups */
    for (int g = 0; g < m->fuse.group_count; g++) {
        int n = 0;
        for (int st = 0; st < S; st++)
            if (m->fuse.group[st] == g) buf[n++] = st;
        if (n == 0) continue;
        int lv = m->fuse.level ? m->fuse.level[g] : IR_UNSET;
        if (lv == IR_HOLE) {
            for (int k = 0; k < nlev; k++) push_arc(sp, max_arcs, buf, n, levels[k], g, block);
        } else if (lv >= 0) {
            push_arc(sp, max_arcs, buf, n, lv, g, block);
        } else {
            push_arc(sp, max_arcs, buf, n, n == 1 ? OPT_UNFUSED : OPT_LEVEL_DEFAULT, g, block);
        }
        block++;
    }
    /* runs of free statements (`fuse ?`), consecutive in source order */
    int st = 0;
    while (st < S) {
        if (m->fuse.group[st] != IR_HOLE) {
            st++;
            continue;
        }
        int end = st;
        while (end < S && m->fuse.group[end] == IR_HOLE) end++;
        for (int i = st; i < end; i++)
            for (int j = i + 1; j <= end; j++) {
                int n = 0;
                for (int k = i; k < j; k++) buf[n++] = k;
                if (n == 1) {
                    push_arc(sp, max_arcs, buf, 1, OPT_UNFUSED, -1, block);
                } else {
                    for (int k = 0; k < nlev; k++)
                        push_arc(sp, max_arcs, buf, n, levels[k], -1, block);
                }
            }
        block++;
        st = end;
    }
    sp->stmt_arcs = ARENA_ARRAY(sp->arena, int, S *(sp->arc_count + 1) + 1);
    relevance(sp);
    for (int s2 = 0; s2 < S; s2++) {
        int n = 0;
        for (int a = 0; a < sp->arc_count; a++)
            for (int k = 0; k < sp->arcs[a].count; k++)
                if (sp->arcs[a].stmts[k] == s2) sp->stmt_arcs[s2 * (sp->arc_count + 1) + n++] = a;
        sp->stmt_arcs[s2 * (sp->arc_count + 1) + n] = -1;
    }
}

/* ------------------------------------------------------- the space */

OptSpace *opt_space_build(Arena *arena, const IrMapping *m, bool symmetry, double deadline,
                          long config_limit) {
    OptSpace *sp = ARENA_NEW(arena, OptSpace);
    sp->arena = arena;
    sp->m = m;
    sp->op = m->op;
    sp->arch = m->arch;
    sp->S = m->op->stmt_count;
    sp->I = m->op->index_count;
    sp->D = m->arch->dim_count;
    sp->L = m->arch->level_count;
    sp->symmetry = symmetry;
    int S = sp->S, D = sp->D, I = sp->I, L = sp->L;
    sp->split_hole = ARENA_ARRAY(arena, bool, S *D + 1);
    sp->split_allowed = ARENA_ARRAY(arena, int, S *D + 1);
    for (int k = 0; k < S * D; k++) {
        sp->split_hole[k] =
            m->spatial.whole_hole || (m->spatial.split && m->spatial.split[k] == IR_HOLE);
        sp->split_allowed[k] = -1;
    }
    /* `n -> ?`: those holes may only take n */
    if (m->decl && !m->spatial.whole_hole && m->spatial.split_span) {
        const MappingDecl *md = &m->decl->u.mapping;
        for (int it = 0; it < md->item_count; it++) {
            const MapItem *mi = md->items[it];
            if (mi->kind != MI_SPATIAL) continue;
            for (int a = 0; a < mi->assign_count; a++) {
                const SpatialAssign *as = &mi->assigns[a];
                if (as->index.hole || !as->index.name) continue;
                int ix = ir_find_index(sp->op, as->index.name);
                if (ix < 0) continue;
                for (int k = 0; k < S * D; k++) {
                    Span sk = m->spatial.split_span[k];
                    if (sp->split_hole[k] && sk.file == as->span.file &&
                        sk.start == as->span.start && sk.end == as->span.end)
                        sp->split_allowed[k] = ix;
                }
            }
        }
    }
    build_splits(sp);
    /* tile holes, by index then level (outer first) */
    sp->th_level = ARENA_ARRAY(arena, int, L *I + 1);
    sp->th_index = ARENA_ARRAY(arena, int, L *I + 1);
    for (int i = 0; i < I; i++)
        for (int l = 0; l < L; l++)
            if (m->tile.size && m->tile.size[l * I + i] == IR_HOLE) {
                sp->th_level[sp->th_count] = l;
                sp->th_index[sp->th_count++] = i;
            }
    sp->oh_level = ARENA_ARRAY(arena, int, L + 1);
    for (int l = 0; l < L; l++)
        if (m->order.length && m->order.length[l] == IR_HOLE) sp->oh_level[sp->oh_count++] = l;
    build_arcs(sp);
    Enum e = {0};
    e.sp = sp;
    e.hv = ARENA_ARRAY(arena, int64_t, sp->th_count + 1);
    e.orders = ARENA_ARRAY(arena, int, sp->oh_count *I + 1);
    e.loops = ARENA_ARRAY(arena, int, sp->oh_count *I + 1);
    e.loop_n = ARENA_ARRAY(arena, int, sp->oh_count + 1);
    e.deadline = deadline;
    e.limit = config_limit;
    for (int s = 0; s < sp->split_count && !sp->truncated; s++) {
        e.split = s;
        enum_tiles(&e, 0);
    }
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
    memcpy(m->spatial.split, sp->splits + (size_t)sp->cfg_split[c] * (size_t)(S * D),
           sizeof(int) * (size_t)(S * D));
    if (!src->spatial.split_span) {
        m->spatial.split_span = ARENA_ARRAY(arena, Span, S * D + 1);
        for (int k = 0; k < S * D; k++) m->spatial.split_span[k] = SPAN_NONE;
    }
    m->tile.size = ARENA_ARRAY(arena, int64_t, L * I + 1);
    for (int k = 0; k < L * I; k++) {
        int64_t v = src->tile.size ? src->tile.size[k] : IR_UNSET;
        m->tile.size[k] = v == IR_HOLE ? IR_UNSET : v;
    }
    for (int h = 0; h < sp->th_count; h++)
        m->tile.size[sp->th_level[h] * I + sp->th_index[h]] =
            sp->cfg_tile[(size_t)c * (size_t)sp->th_count + (size_t)h];
    if (!src->tile.span) {
        m->tile.span = ARENA_ARRAY(arena, Span, L * I + 1);
        for (int k = 0; k < L * I; k++) m->tile.span[k] = SPAN_NONE;
    }
    m->tile.index_hole = ARENA_ARRAY(arena, bool, L + 1);
    m->order.perm = ARENA_ARRAY(arena, int, L *I + 1);
    m->order.length = ARENA_ARRAY(arena, int, L + 1);
    for (int l = 0; l < L; l++) {
        int len = src->order.length ? src->order.length[l] : 0;
        if (len < 0) len = 0;
        m->order.length[l] = len;
        for (int k = 0; k < len; k++) m->order.perm[l * I + k] = src->order.perm[l * I + k];
    }
    for (int k = 0; k < sp->oh_count; k++) {
        int l = sp->oh_level[k];
        m->order.length[l] = I;
        for (int i = 0; i < I; i++)
            m->order.perm[l * I + i] =
                sp->cfg_order[(size_t)c * (size_t)(sp->oh_count * I) + (size_t)(k * I + i)];
    }
    if (!src->order.span) {
        m->order.span = ARENA_ARRAY(arena, Span, L + 1);
        for (int l = 0; l < L; l++) m->order.span[l] = SPAN_NONE;
    }
    m->fuse.group = ARENA_ARRAY(arena, int, S + 1);
    m->fuse.level = ARENA_ARRAY(arena, int, S + 1);
    m->fuse.span = ARENA_ARRAY(arena, Span, S + 1);
    for (int st = 0; st < S; st++) m->fuse.group[st] = IR_UNSET;
    int g = 0;
    for (int k = 0; k < arc_count; k++) {
        const OptArc *a = &sp->arcs[arcs[k]];
        if (a->level == OPT_UNFUSED) continue;
        for (int q = 0; q < a->count; q++) m->fuse.group[a->stmts[q]] = g;
        m->fuse.level[g] = a->level == OPT_LEVEL_DEFAULT ? IR_UNSET : a->level;
        m->fuse.span[g] = a->given_group >= 0 && src->fuse.span ? src->fuse.span[a->given_group]
                                                                : src->fuse.hole_span;
        g++;
    }
    m->fuse.group_count = g;
    return m;
}

/* ------------------------------------------------------- evaluation */

static void read_group(const Schedule *s, int g, OptCost *out) {
    const SchedGroup *sg = &s->groups[g];
    out->latency_s = sg->latency_s;
    out->energy_j = sg->energy_j;
    out->compute_s = sg->compute_s;
    out->memory_s = sg->memory_s;
    out->network_s = sg->network_s;
    out->fill_drain_s = sg->fill_drain_s;
    out->compute_energy_j = sg->compute_energy_j;
    out->feasible = !s->missing_unit;
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
}

static int key_length(const OptSpace *sp, const OptArc *a) {
    return a->rel_count * sp->D + a->rel_hole_count + sp->oh_count * sp->I;
}

static void arc_key(const OptSpace *sp, const OptArc *a, int c, int *key) {
    int D = sp->D, I = sp->I, S = sp->S, n = 0;
    const int *split = sp->splits + (size_t)sp->cfg_split[c] * (size_t)(S * D);
    for (int k = 0; k < a->rel_count; k++)
        for (int d = 0; d < D; d++) key[n++] = split[a->rel_stmts[k] * D + d];
    for (int k = 0; k < a->rel_hole_count; k++)
        key[n++] = (int)sp->cfg_tile[(size_t)c * (size_t)sp->th_count + (size_t)a->rel_holes[k]];
    for (int h = 0; h < sp->oh_count; h++) {
        const int *perm = sp->cfg_order + (size_t)c * (size_t)(sp->oh_count * I) + (size_t)(h * I);
        int w = 0;
        for (int i = 0; i < I; i++)
            if (a->rel_mask >> perm[i] & 1u) key[n + w++] = perm[i];
        while (w < I) key[n + w++] = -1;
        n += I;
    }
}

void opt_eval_ctx_init(OptEvalCtx *x, const OptSpace *sp) {
    memset(x, 0, sizeof *x);
    x->threshold = INFINITY;
    int A = sp->arc_count;
    x->last_key = ARENA_ARRAY(&x->keep, int *, A + 1);
    x->last_valid = ARENA_ARRAY(&x->keep, bool, A + 1);
    x->last_cost = ARENA_ARRAY(&x->keep, OptCost, A + 1);
    for (int a = 0; a < A; a++)
        if (sp->arcs[a].memo)
            x->last_key[a] = ARENA_ARRAY(&x->keep, int, key_length(sp, &sp->arcs[a]) + 1);
}

void opt_eval_ctx_free(OptEvalCtx *x) {
    arena_free_all(&x->keep);
    arena_free_all(&x->tmp);
}

/* ------------------------------------------- per-statement compute memo */

typedef struct CompEntry {
    uint64_t hash;
    int *key;
    int len;
    double compute_s, energy_j;
} CompEntry;

static int stmt_key(const OptSpace *sp, int st, int c, int *key) {
    int n = 0, D = sp->D;
    const int *split = sp->splits + (size_t)sp->cfg_split[c] * (size_t)(sp->S * D);
    key[n++] = st;
    for (int d = 0; d < D; d++) key[n++] = split[st * D + d];
    for (int h = 0; h < sp->th_count; h++)
        if (ir_stmt_uses_index(&sp->op->stmts[st], sp->th_index[h]))
            key[n++] = (int)sp->cfg_tile[(size_t)c * (size_t)sp->th_count + (size_t)h];
    return n;
}

static uint64_t key_hash(const int *key, int len) {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < len; i++) {
        h ^= (uint64_t)(uint32_t)key[i];
        h *= 1099511628211ull;
    }
    return h ? h : 1;
}

static CompEntry *comp_find(OptEvalCtx *x, const int *key, int len, uint64_t h) {
    if (!x->comp_cap) return NULL;
    for (int i = (int)(h & (uint64_t)(x->comp_cap - 1));; i = (i + 1) & (x->comp_cap - 1)) {
        CompEntry *e = &x->comp[i];
        if (!e->hash) return NULL;
        if (e->hash == h && e->len == len && memcmp(e->key, key, sizeof(int) * (size_t)len) == 0)
            return e;
    }
}

static void comp_put(OptEvalCtx *x, const int *key, int len, double cs, double ce) {
    uint64_t h = key_hash(key, len);
    if (comp_find(x, key, len, h)) return;
    if (2 * (x->comp_count + 1) > x->comp_cap) {
        int ncap = x->comp_cap ? x->comp_cap * 2 : 1024;
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
    int j = (int)(h & (uint64_t)(x->comp_cap - 1));
    while (x->comp[j].hash) j = (j + 1) & (x->comp_cap - 1);
    CompEntry *e = &x->comp[j];
    e->hash = h;
    e->len = len;
    e->key = ARENA_ARRAY(&x->keep, int, len + 1);
    memcpy(e->key, key, sizeof(int) * (size_t)len);
    e->compute_s = cs;
    e->energy_j = ce;
    x->comp_count++;
}

static double bound_value(Objective obj, double cl, double ce) {
    return obj == OBJ_ENERGY ? ce : obj == OBJ_EDP ? cl * ce : cl;
}

/* Level a group of this arc keeps its internal tensors at. */
static int arc_fusion_level(const OptSpace *sp, const OptArc *a) {
    if (a->level >= 0) return a->level;
    return sp->L > 1 ? 1 : 0; /* the default (passes/fusion.c) */
}

/* Arc a was costed: when it overflows a memory, mark every arc not yet
 * costed that holds its statements and is fused at that memory's level or
 * outside it.  Returns how many were marked. */
static int imply(const OptSpace *sp, OptCost *row, bool *done, int a, OptEvalCtx *x) {
    const OptCost *oc = &row[a];
    if (oc->feasible || oc->memory < 0 || sp->S > 64) return 0;
    int lm = sp->arch->memories[oc->memory].level;
    uint64_t mask = sp->arcs[a].mask;
    int marked = 0;
    for (int b = 0; b < sp->arc_count; b++) {
        if (done[b] || (sp->arcs[b].mask & mask) != mask) continue;
        if (arc_fusion_level(sp, &sp->arcs[b]) > lm) continue;
        row[b] = *oc; /* infeasible; its need is a lower bound */
        done[b] = true;
        marked++;
        x->implied++;
    }
    return marked;
}

bool opt_evaluate_config(const OptSpace *sp, OptEvalCtx *x, int c, OptCost *row) {
    int A = sp->arc_count, S = sp->S;
    arena_free_all(&x->tmp);
    Arena *t = &x->tmp;
    bool *done = ARENA_ARRAY(t, bool, A + 1);
    int *order = ARENA_ARRAY(t, int, A + 1);
    int *cover = ARENA_ARRAY(t, int, S + 1);
    bool *used = ARENA_ARRAY(t, bool, S + 1);
    int **keys = ARENA_ARRAY(t, int *, A + 1);
    int remaining = A;
    int *skey = ARENA_ARRAY(t, int, sp->D + sp->th_count + 2);
    /* the compute bound from remembered statements, before any lowering */
    if (x->threshold < INFINITY) {
        /* statements not remembered count 0: still a lower bound */
        double cl = 0, ce = 0;
        for (int st = 0; st < S; st++) {
            int len = stmt_key(sp, st, c, skey);
            CompEntry *e = comp_find(x, skey, len, key_hash(skey, len));
            if (!e) continue;
            cl += e->compute_s;
            ce += e->energy_j;
        }
        if (bound_value(x->objective, cl, ce) > x->threshold) {
            x->comp_hits++;
            return false;
        }
    }
    /* the memo */
    for (int a = 0; a < A; a++) {
        if (!sp->arcs[a].memo) continue;
        int len = key_length(sp, &sp->arcs[a]);
        keys[a] = ARENA_ARRAY(t, int, len + 1);
        arc_key(sp, &sp->arcs[a], c, keys[a]);
        if (x->last_valid[a] && memcmp(keys[a], x->last_key[a], sizeof(int) * (size_t)len) == 0) {
            row[a] = x->last_cost[a];
            done[a] = true;
            remaining--;
            x->memo_hits++;
        }
    }
    /* every statement alone first, then long arcs (few lowerings): an
     * arc that overflows a memory makes every arc holding its statements
     * overflow it too when that arc is fused at the memory's level or
     * outside it (such a group keeps all its tensors' tiles there, each at
     * least as large) */
    bool first = true;
    int n = 0;
    for (int len = S; len >= 1; len--)
        for (int a = 0; a < A; a++)
            if (sp->arcs[a].count == len) order[n++] = a;
    for (int a = 0; a < A; a++)
        if (done[a]) remaining -= imply(sp, row, done, a, x);
    while (remaining > 0) {
        int cc = 0;
        memset(used, 0, sizeof(bool) * (size_t)S);
        if (!first)
            for (int k = 0; k < A; k++) {
                const OptArc *a = &sp->arcs[order[k]];
                if (done[order[k]]) continue;
                bool free = true;
                for (int q = 0; q < a->count; q++)
                    if (used[a->stmts[q]]) free = false;
                if (!free) continue;
                for (int q = 0; q < a->count; q++) used[a->stmts[q]] = true;
                cover[cc++] = order[k];
            }
        Arena scratch = {0};
        IrMapping *m = opt_scratch_mapping(&scratch, sp, c, cover, cc);
        Schedule *s = lower_mapping(&scratch, m, false, NULL);
        x->lowerings++;
        for (int k = 0; k < cc; k++) {
            const OptArc *a = &sp->arcs[cover[k]];
            read_group(s, s->stmts[a->stmts[0]].group, &row[cover[k]]);
            done[cover[k]] = true;
            remaining--;
        }
        for (int k = 0; k < cc; k++) remaining -= imply(sp, row, done, cover[k], x);
        if (first) {
            double cl = 0, ce = 0;
            for (int st = 0; st < S; st++) {
                OptCost alone;
                read_group(s, s->stmts[st].group, &alone);
                cl += alone.compute_s;
                ce += alone.compute_energy_j;
                int len = stmt_key(sp, st, c, skey);
                comp_put(x, skey, len, alone.compute_s, alone.compute_energy_j);
            }
            double lb = bound_value(x->objective, cl, ce);
            if (x->threshold < INFINITY && lb > x->threshold) {
                arena_free_all(&scratch);
                return false;
            }
        }
        /* statements left to groups of their own: their unfused arcs too */
        for (int st = 0; st < S; st++) {
            if (used[st]) continue;
            OptCost alone;
            read_group(s, s->stmts[st].group, &alone);
            for (int k = 0; sp->stmt_arcs[st * (A + 1) + k] >= 0; k++) {
                int a = sp->stmt_arcs[st * (A + 1) + k];
                if (done[a]) continue;
                const OptArc *arc = &sp->arcs[a];
                if (arc->count == 1 && arc->level == OPT_UNFUSED) {
                    row[a] = alone;
                    done[a] = true;
                    remaining--;
                    remaining -= imply(sp, row, done, a, x);
                } else if (first && !alone.feasible && alone.memory >= 0 &&
                           arc_fusion_level(sp, arc) <= sp->arch->memories[alone.memory].level) {
                    row[a] = alone; /* infeasible; need is a lower bound */
                    done[a] = true;
                    remaining--;
                    x->implied++;
                }
            }
        }
        first = false;
        arena_free_all(&scratch);
    }
    for (int a = 0; a < A; a++)
        if (sp->arcs[a].memo) {
            memcpy(x->last_key[a], keys[a], sizeof(int) * (size_t)key_length(sp, &sp->arcs[a]));
            x->last_cost[a] = row[a];
            x->last_valid[a] = true;
        }
    return true;
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
        g++;
    }
    full->fuse.group_count = g;
    out->spatial.split = full->spatial.split;
    if (!out->spatial.split_span) out->spatial.split_span = full->spatial.split_span;
    out->tile.size = full->tile.size;
    if (!out->tile.span) out->tile.span = full->tile.span;
    out->tile.index_hole = full->tile.index_hole;
    out->order.perm = full->order.perm;
    out->order.length = full->order.length;
    if (!out->order.span) out->order.span = full->order.span;
    out->fuse.group = full->fuse.group;
    out->fuse.level = full->fuse.level;
    out->fuse.span = full->fuse.span;
    out->fuse.group_count = full->fuse.group_count;
    out->hole_count = 0;
}
