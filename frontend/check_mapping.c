/* check_mapping.c — mappings: binds the op's parameters, instantiates it,
 * resolves the arch, and records every decision (spatial splits, tiles,
 * orders, fusion groups, overlap, objective, repeat) with its span.  Checks
 * that need every decision (divisibility, permutations, convexity) run
 * after all lines are read, each reported at the line that causes it. */
#include "sema.h"

#include <string.h>
#include <strings.h>

typedef struct MapCtx {
    Sema *s;
    Arena *arena;
    DiagSink *diags;
    const Decl *decl;
    const MappingDecl *md;
    IrMapping *m;
    IrOp *op;
    const Decl *op_decl; /* the op as written (its tensors' dimensions) */
    IrArch *arch;
    bool ok;
    /* statements named by `spatial for` lines: their own splits only */
    bool *stmt_overridden;
    /* the tile line and order line of each level, for duplicate checks */
    const MapItem **tile_line;
    const MapItem **order_line;
    /* the `tile L for ...` and `order L for ...` lines in source order
     * (line k >= 1 of IrTile.from / IrOrder.from is [k - 1]), and the one
     * that names each statement at each level ([st * level_count + lv]) */
    const MapItem **tile_for, **order_for;
    const MapItem **tile_for_of, **order_for_of;
    bool repeat_bad; /* the `repeat` line was refused (E0320): no count to check */
    /* [stmt]: the `spatial for` line that names it; [index]: the general
     * `spatial` line's assignment that split it (a second is E0331 /
     * E0321, not a silent merge) */
    const MapItem **spatial_for_of;
    const SpatialAssign **split_assign_of;
    const MapItem *overlap_line, *objective_line, *repeat_line, *microbatches_line, *serve_line;
    int pipeline_dim; /* the dim a `pipeline` line names, -1 none */
    /* the values of the outer holes this check fills (NULL: none) */
    const struct OuterChoice *choice;
} MapCtx;

/* One value for each outer hole of a mapping (docs/language.md 5.10). */
typedef struct OuterChoice {
    int pipeline_dim;     /* `pipeline ?`: the dim, -1 for no pipeline */
    int64_t microbatches; /* `microbatches ? of B`: the count */
    int recompute;        /* `recompute ?`: 0 none, 1 the statements listed, 2 full */
    int64_t batch;        /* `serve ... of B = ?`: B */
    unsigned overlap;     /* `overlap ?` lines, in order: bit k set: the k-th is
                             `tiles`, clear: `full` */
} OuterChoice;

static Diag *map_error(MapCtx *c, Span span, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static Diag *map_error(MapCtx *c, Span span, const char *code, const char *fmt, ...) {
    c->ok = false;
    va_list ap;
    va_start(ap, fmt);
    Diag *d = diag_error_va(c->diags, span, code, fmt, ap);
    va_end(ap);
    return d;
}

/* -------------------------------------------------------- divisors */

/* The divisors of n nearest below and above x (0 when none). */
static void nearest_divisors(int64_t n, int64_t x, int64_t *below, int64_t *above) {
    *below = 0;
    *above = 0;
    if (n <= 0) return;
    /* Trial division to sqrt(n), bounded so huge extents stay quick. */
    int64_t limit = 3000000;
    for (int64_t d = 1; d <= limit && d <= n / d; d++) {
        if (n % d) continue;
        int64_t pair[2] = {d, n / d};
        for (int k = 0; k < 2; k++) {
            int64_t v = pair[k];
            if (v < x && v > *below) *below = v;
            if (v > x && (*above == 0 || v < *above)) *above = v;
        }
    }
}

static void help_divisors(MapCtx *c, Diag *d, int64_t n, int64_t x, const char *what) {
    int64_t lo, hi;
    nearest_divisors(n, x, &lo, &hi);
    if (lo && hi)
        diag_help(d, c->diags, "%s near %lld: %lld, %lld", what, (long long)x, (long long)lo,
                  (long long)hi);
    else if (lo || hi)
        diag_help(d, c->diags, "%s near %lld: %lld", what, (long long)x, (long long)(lo ? lo : hi));
}

/* ------------------------------------------------------- name lookup */

static const char **index_names(MapCtx *c, int *n) {
    const char **names = ARENA_ARRAY(c->arena, const char *, c->op->index_count + 1);
    for (int i = 0; i < c->op->index_count; i++) names[i] = c->op->indices[i].name;
    *n = c->op->index_count;
    return names;
}

static int lookup_index(MapCtx *c, const Ident *id) {
    int ix = ir_find_index(c->op, id->name);
    if (ix >= 0) return ix;
    Diag *d = map_error(c, id->span, "E0309", "op `%s` has no index `%s`", c->op->name, id->name);
    int n;
    const char **names = index_names(c, &n);
    const char *best = spell_suggest(id->name, names, n);
    if (best)
        diag_help(d, c->diags, "did you mean `%s`?", best);
    else {
        const char *list = "";
        for (int i = 0; i < n; i++)
            list = arena_printf(c->arena, "%s%s%s", list, i ? ", " : "", names[i]);
        diag_note(d, c->diags, "its indices are %s", list);
    }
    return -1;
}

static int lookup_dim(MapCtx *c, const Ident *id) {
    int dim = ir_find_dim(c->arch, id->name);
    if (dim >= 0 && dim == c->pipeline_dim) {
        Diag *d = map_error(c, id->span, "E0354",
                            "`%s` carries the pipeline's stages: no index can be split over it",
                            id->name);
        diag_help(d, c->diags,
                  "each stage runs its own layers on the rest of the arch; split the op's "
                  "indices over the other dims");
        return -1;
    }
    if (dim >= 0) return dim;
    Diag *d = map_error(c, id->span, "E0307", "arch `%s` has no cluster dimension `%s`",
                        c->arch->name, id->name);
    const char **names = ARENA_ARRAY(c->arena, const char *, c->arch->dim_count + 1);
    for (int i = 0; i < c->arch->dim_count; i++) names[i] = c->arch->dims[i].name;
    const char *best = spell_suggest(id->name, names, c->arch->dim_count);
    if (best)
        diag_help(d, c->diags, "did you mean `%s`?", best);
    else if (c->arch->dim_count == 0)
        diag_note(d, c->diags, "arch `%s` has no cluster", c->arch->name);
    return -1;
}

static int lookup_level(MapCtx *c, const Ident *id) {
    int lv = ir_find_level(c->arch, id->name);
    if (lv >= 0) return lv;
    Diag *d = map_error(c, id->span, "E0306", "arch `%s` has no memory level `%s`", c->arch->name,
                        id->name);
    const char **names = ARENA_ARRAY(c->arena, const char *, c->arch->memory_count + 1);
    for (int i = 0; i < c->arch->memory_count; i++) names[i] = c->arch->memories[i].name;
    const char *best = spell_suggest(id->name, names, c->arch->memory_count);
    if (best)
        diag_help(d, c->diags, "did you mean `%s`?", best);
    else {
        const char *list = "";
        for (int i = 0; i < c->arch->level_count; i++)
            list = arena_printf(c->arena, "%s%s%s", list, i ? ", " : "", c->arch->levels[i].name);
        diag_note(d, c->diags, "its levels are %s", list);
    }
    return -1;
}

/* E0308 for `spatial for` and `fuse`, E0330 for `tile ... for` and
 * `order ... for`. */
static int lookup_stmt_as(MapCtx *c, const Ident *id, const char *code) {
    int st = ir_find_stmt(c->op, id->name);
    if (st >= 0) return st;
    Diag *d = map_error(c, id->span, code, "op `%s` has no statement `%s`", c->op->name, id->name);
    const char **names = ARENA_ARRAY(c->arena, const char *, c->op->stmt_count + 1);
    for (int i = 0; i < c->op->stmt_count; i++) names[i] = c->op->stmts[i].name;
    const char *best = spell_suggest(id->name, names, c->op->stmt_count);
    if (best) diag_help(d, c->diags, "did you mean `%s`?", best);
    if (ir_find_tensor(c->op, id->name) >= 0)
        diag_note(d, c->diags,
                  "`%s` is an input tensor: statements are named by "
                  "the tensor they define",
                  id->name);
    return -1;
}

static int lookup_stmt(MapCtx *c, const Ident *id) {
    return lookup_stmt_as(c, id, "E0308");
}

/* The grammar allows a hole as the level of `fuse` only; a hole anywhere
 * else the parser has reported. */
static bool reject_level_hole(MapCtx *c, const MapItem *it) {
    if (!it->level.hole) return false;
    c->ok = false;
    return true;
}

/* ------------------------------------------------------------ spatial */

static int *split_at(MapCtx *c, int stmt, int dim) {
    return &c->m->spatial.split[stmt * c->arch->dim_count + dim];
}

/* Applies one assignment to one statement. */
static void assign_split(MapCtx *c, const SpatialAssign *as, int stmt, int index, const int *dims,
                         int dim_count, bool dims_hole, bool *reported) {
    int dc = c->arch->dim_count;
    for (int k = 0; k < (dims_hole ? dc : dim_count); k++) {
        int dim = dims_hole ? k : dims[k];
        int *slot = split_at(c, stmt, dim);
        Span *span = &c->m->spatial.split_span[stmt * dc + dim];
        if (dims_hole) {
            if (*slot == IR_UNSET) {
                *slot = IR_HOLE;
                *span = as->span;
            }
            continue;
        }
        if (*slot == IR_UNSET || *slot == IR_HOLE) {
            *slot = index;
            *span = as->span;
            continue;
        }
        if (*reported) continue;
        *reported = true;
        if (*slot == index) {
            Diag *d = map_error(c, as->span, "E0321", "`%s` is split over `%s` twice",
                                c->op->indices[index].name, c->arch->dims[dim].name);
            diag_label(d, c->diags, *span, "first here");
        } else {
            const IrStmt *st = &c->op->stmts[stmt];
            Diag *d = map_error(c, as->span, "E0312",
                                "cluster dimension `%s` would split both `%s` and "
                                "`%s`, which statement `%s` uses",
                                c->arch->dims[dim].name, c->op->indices[*slot].name,
                                c->op->indices[index].name, st->name);
            diag_label(d, c->diags, *span, "`%s` is split over `%s` here",
                       c->op->indices[*slot].name, c->arch->dims[dim].name);
            diag_label(d, c->diags, st->span, "statement `%s` uses both", st->name);
            diag_help(d, c->diags,
                      "a dimension may take several indices only "
                      "when no statement uses two of them; use "
                      "`spatial for %s: ...` to split it differently",
                      st->name);
        }
    }
}

/* The help of E0321 for an index split by two assignments: one split over
 * the dims of both, `m -> (c, r)`, or `(m, n) -> (c, r)` when either deals
 * it jointly. */
static void help_one_split(MapCtx *c, Diag *d, const SpatialAssign *a, const SpatialAssign *b) {
    const SpatialAssign *joint = a->joint.count >= 2 ? a : b->joint.count >= 2 ? b : NULL;
    const char *lhs = a->index.name;
    if (joint)
        lhs = arena_printf(c->arena, "(%s, %s)", joint->joint.items[0].name,
                           joint->joint.items[1].name);
    const char *dims = "";
    int n = 0;
    const SpatialAssign *both[2] = {a, b};
    for (int q = 0; q < 2; q++)
        for (int k = 0; k < both[q]->dims.count; k++) {
            const Ident *id = &both[q]->dims.items[k];
            bool seen = !id->name;
            for (int p = 0; p < q && !seen; p++) /* (names are interned) */
                for (int j = 0; j < both[p]->dims.count; j++)
                    seen |= both[p]->dims.items[j].name == id->name;
            if (seen) continue;
            dims = arena_printf(c->arena, "%s%s%s", dims, n++ ? ", " : "", id->name);
        }
    diag_help(d, c->diags, "give all its dims in one split: `%s -> %s%s%s`", lhs, n > 1 ? "(" : "",
              dims, n > 1 ? ")" : "");
}

static int *joint_at(MapCtx *c, int stmt, int dim) {
    IrSpatial *sp = &c->m->spatial;
    if (!sp->joint) {
        int n = c->op->stmt_count * c->arch->dim_count * (IR_MAX_JOINT - 1);
        sp->joint = ARENA_ARRAY(c->s->arena, int, n + 1);
        for (int k = 0; k < n; k++) sp->joint[k] = -1;
    }
    return &sp->joint[(stmt * c->arch->dim_count + dim) * (IR_MAX_JOINT - 1)];
}

/* Whether a `spatial for` line names statement st (it replaces what the
 * mapping-wide line gives it). */
static bool named_by_spatial_for(MapCtx *c, int st) {
    for (int i = 0; i < c->md->item_count; i++) {
        const MapItem *it = c->md->items[i];
        if (it->kind != MI_SPATIAL) continue;
        for (int k = 0; k < it->stmts.count; k++)
            if (it->stmts.items[k].name == c->op->stmts[st].name) return true;
    }
    return false;
}

/* `(m, n) -> sm`: the indices a statement uses of the line's deal its
 * tile grid jointly over the dims (docs/language.md 5.1); a statement
 * using one of them has it split alone.  The indices must be the
 * statement's own (not reduced, not restricted by `where`): their parts
 * are whole result tiles. */
static void apply_joint(MapCtx *c, const SpatialAssign *as, const bool *named, bool is_for,
                        const int *dims, int dim_count) {
    int n = as->joint.count, ix[IR_MAX_JOINT];
    if (n > IR_MAX_JOINT) {
        map_error(c, as->span, "E0367", "a joint deal of %d indices; at most %d are dealt jointly",
                  n, IR_MAX_JOINT);
        return;
    }
    for (int k = 0; k < dim_count; k++)
        if (c->arch->dims[dims[k]].cluster < c->arch->levels[0].clusters_outside) {
            Diag *d = map_error(c, as->span, "E0367",
                                "a joint deal over `%s`, outside the outermost memory",
                                c->arch->dims[dims[k]].name);
            diag_note(d, c->diags,
                      "each instance there has its own `%s`: moving tiles dealt jointly between "
                      "them is not modelled",
                      c->arch->levels[0].name);
            diag_help(d, c->diags,
                      "deal jointly over dims inside `%s` (a GPU's SMs), or split "
                      "each index over its own dims",
                      c->arch->levels[0].name);
            return;
        }
    for (int k = 0; k < n; k++) {
        const Ident *id = &as->joint.items[k];
        ix[k] = lookup_index(c, id);
        if (ix[k] < 0) return;
        for (int j = 0; j < k; j++)
            if (ix[j] == ix[k]) {
                map_error(c, id->span, "E0367", "`%s` appears twice in a joint deal", id->name);
                return;
            }
        const SpatialAssign *first = is_for ? NULL : c->split_assign_of[ix[k]];
        if (first && first != as) {
            Diag *d = map_error(c, id->span, "E0321", "`%s` is split twice", id->name);
            diag_label(d, c->diags, first->span, "first here");
            help_one_split(c, d, first, as);
            return;
        }
        if (!is_for) c->split_assign_of[ix[k]] = as;
    }
    bool reported = false;
    for (int st = 0; st < c->op->stmt_count; st++) {
        if (is_for ? !named[st] : c->stmt_overridden[st] || named_by_spatial_for(c, st)) continue;
        const IrStmt *is = &c->op->stmts[st];
        int used[IR_MAX_JOINT], u = 0;
        for (int k = 0; k < n; k++)
            if (ir_stmt_uses_index(is, ix[k])) used[u++] = ix[k];
        if (u == 0) {
            if (is_for && !reported) {
                reported = true;
                map_error(c, as->span, "E0322",
                          "statement `%s` uses none of the indices dealt here", is->name);
            }
            continue;
        }
        if (u == 1) { /* one of them: an ordinary split */
            assign_split(c, as, st, used[0], dims, dim_count, false, &reported);
            continue;
        }
        for (int k = 0; k < u && !reported; k++) {
            const char *why =
                ir_stmt_reduces(is, used[k]) ? "reduces"
                : is->mask.cmp != PC_NONE && (is->mask.lhs == used[k] || is->mask.rhs == used[k])
                    ? "restricts (`where`)"
                    : NULL;
            if (!why) continue;
            reported = true;
            Diag *d = map_error(c, as->span, "E0367",
                                "statement `%s` %s `%s`, which this line deals jointly", is->name,
                                why, c->op->indices[used[k]].name);
            diag_label(d, c->diags, is->span, "statement `%s`", is->name);
            if (ir_stmt_reduces(is, used[k]))
                diag_help(d, c->diags,
                          "a joint deal shares out whole result tiles: deal indices of `%s`'s "
                          "result, or give `%s` its own split with `spatial for %s: ...`",
                          is->name, is->name, is->name);
            else
                diag_help(d, c->diags,
                          "a joint deal cannot deal an index that `where` restricts: give `%s` "
                          "its own split with `spatial for %s: ...`",
                          is->name, is->name);
        }
        if (reported) continue;
        for (int k = 0; k < dim_count; k++) {
            int *slot = split_at(c, st, dims[k]);
            if (*slot == IR_HOLE) {
                reported = true;
                Diag *d = map_error(c, c->m->spatial.split_span[st * c->arch->dim_count + dims[k]],
                                    "E0367", "a hole on `%s`, which this line deals jointly",
                                    c->arch->dims[dims[k]].name);
                diag_label(d, c->diags, as->span, "the joint deal");
                break;
            }
            if (*slot >= 0) {
                reported = true;
                Diag *d = map_error(c, as->span, "E0312",
                                    "cluster dimension `%s` would deal `%s` jointly and also "
                                    "split `%s`",
                                    c->arch->dims[dims[k]].name, c->op->indices[used[0]].name,
                                    c->op->indices[*slot].name);
                diag_label(d, c->diags, c->m->spatial.split_span[st * c->arch->dim_count + dims[k]],
                           "`%s` is split here", c->op->indices[*slot].name);
                break;
            }
            *slot = used[0];
            c->m->spatial.split_span[st * c->arch->dim_count + dims[k]] = as->span;
            int *j = joint_at(c, st, dims[k]);
            for (int q = 1; q < IR_MAX_JOINT; q++) j[q - 1] = q < u ? used[q] : -1;
        }
    }
}

/* What a joint deal leaves out: a hole on its dims (the optimizer deals
 * one index a dim), and a tensor made under it and read in the same
 * group under another split of the same dims, which would be a
 * redistribution of tiles the lowering does not model. */
static void check_joint_deals(MapCtx *c) {
    const IrSpatial *sp = &c->m->spatial;
    if (!sp->joint) return;
    int S = c->op->stmt_count, D = c->arch->dim_count;
    uint32_t warned_at[64];
    int warned_count = 0;
    for (int st = 0; st < S; st++)
        for (int d = 0; d < D; d++) {
            const int *j = joint_at(c, st, d);
            if (j[0] < 0) continue;
            /* E0310 for the deal: more instances than cells of one element */
            int64_t cells = c->op->indices[sp->split[st * D + d]].extent, parts = 1;
            for (int k = 0; k < IR_MAX_JOINT - 1 && j[k] >= 0; k++)
                cells *= c->op->indices[j[k]].extent;
            for (int e = 0; e < D; e++)
                if (sp->split[st * D + e] == sp->split[st * D + d] &&
                    memcmp(joint_at(c, st, e), j, sizeof(int) * (IR_MAX_JOINT - 1)) == 0)
                    parts *= c->arch->dims[e].size;
            if (cells < parts) {
                map_error(c, sp->split_span[st * D + d], "E0310",
                          "dealing %lld point%s jointly over %lld instances: %lld would never "
                          "get any",
                          (long long)cells, cells == 1 ? "" : "s", (long long)parts,
                          (long long)(parts - cells));
                return;
            }
            /* E0326 for the deal: given tiles of the level above it that
             * hold fewer cells than it has instances leave some idle in
             * every tile */
            int above = -1, below = -1, cl = c->arch->dims[d].cluster;
            for (int l = 0; l < c->arch->level_count; l++) {
                if (c->arch->levels[l].clusters_outside <= cl)
                    above = l;
                else if (below < 0)
                    below = l;
            }
            int64_t tile_cells = 1;
            bool tiled = false;
            int ix[IR_MAX_JOINT] = {sp->split[st * D + d], j[0]};
            for (int k = 0; k < IR_MAX_JOINT; k++) {
                int64_t len = c->op->indices[ix[k]].extent, b = 1;
                int64_t t = above > 0 ? c->m->tile.size[ir_tile_slot(c->m, st, above, ix[k])] : -1;
                if (t >= 1 && t < len) {
                    len = t;
                    tiled = true;
                }
                int64_t tb = below > 0 && below < c->arch->level_count
                                 ? c->m->tile.size[ir_tile_slot(c->m, st, below, ix[k])]
                                 : -1;
                if (tb >= 1) b = tb;
                tile_cells *= (len + b - 1) / b;
            }
            /* the instances of the line's dims between the same two
             * levels as d (a deal over (sm, w) with a memory between them
             * deals at each level apart), counted once, at the first */
            int64_t level_parts = 1;
            bool first_of_level = true;
            for (int e = 0; e < D; e++) {
                bool same =
                    sp->split[st * D + e] == sp->split[st * D + d] && joint_at(c, st, e)[0] == j[0];
                int e_above = -1;
                for (int l = 0; l < c->arch->level_count; l++)
                    if (c->arch->levels[l].clusters_outside <= c->arch->dims[e].cluster)
                        e_above = l;
                if (!same || e_above != above) continue;
                level_parts *= c->arch->dims[e].size;
                if (e < d) first_of_level = false;
            }
            /* a warning, once a line, and only when half of them or more
             * idle: the optimizer may choose a wave of 104 cells on 108
             * SMs over one of 108 in longer tiles */
            bool warned = false;
            for (int k = 0; k < warned_count; k++)
                warned |= warned_at[k] == sp->split_span[st * D + d].start;
            if (tiled && first_of_level && !warned && 2 * tile_cells <= level_parts) {
                if (warned_count < 64) warned_at[warned_count++] = sp->split_span[st * D + d].start;
                Diag *e = diag_warning(c->diags, sp->split_span[st * D + d], "W0357",
                                       "the tiles of `%s` make %lld cell%s for the %lld-way joint "
                                       "deal inside it (statement `%s`)",
                                       c->arch->levels[above].name, (long long)tile_cells,
                                       tile_cells == 1 ? "" : "s", (long long)level_parts,
                                       c->op->stmts[st].name);
                diag_note(e, c->diags, "%lld of the %lld instances would get nothing of each tile",
                          (long long)(level_parts - tile_cells), (long long)level_parts);
                diag_help(e, c->diags,
                          "make the tiles of `%s` and `%s` at `%s` hold at least %lld blocks "
                          "together, or leave them whole",
                          c->op->indices[ix[0]].name, c->op->indices[ix[1]].name,
                          c->arch->levels[above].name, (long long)level_parts);
            }
            for (int r = 0; r < S; r++) {
                int rs = sp->split[r * D + d];
                if (rs == IR_HOLE) {
                    Diag *e = map_error(c, sp->split_span[r * D + d], "E0367",
                                        "a hole on `%s`, which deals indices jointly for `%s`",
                                        c->arch->dims[d].name, c->op->stmts[st].name);
                    diag_label(e, c->diags, sp->split_span[st * D + d], "the joint deal");
                    return;
                }
            }
        }
    /* a tensor made and read in one group, either side dealing jointly */
    for (int st = 0; st < S; st++)
        for (int r = 0; r < S; r++) {
            bool reads = false;
            for (int t = 0; t < c->op->tensor_count; t++)
                if (c->op->tensors[t].producer == st && r != st &&
                    ir_stmt_tensor_indices(c->op, &c->op->stmts[r], t))
                    reads = true;
            /* apart, the tensor meets the reader in the memory above */
            int gs = c->m->fuse.group[st], gr = c->m->fuse.group[r];
            if (!reads || (gs != IR_HOLE && gr != IR_HOLE && (gs != gr || gs == IR_UNSET)))
                continue;
            for (int d = 0; d < D; d++) {
                const int *jm = joint_at(c, st, d), *jr = joint_at(c, r, d);
                if (jm[0] < 0 && jr[0] < 0) continue;
                bool same = sp->split[r * D + d] == sp->split[st * D + d];
                for (int k = 0; same && k < IR_MAX_JOINT - 1; k++) same = jr[k] == jm[k];
                if (same) continue;
                int joint = jm[0] >= 0 ? st : r, other = joint == st ? r : st;
                Diag *e = map_error(c, sp->split_span[joint * D + d], "E0367",
                                    "`%s` deals jointly over `%s` and `%s` %s under another "
                                    "split of it, in the same group",
                                    c->op->stmts[joint].name, c->arch->dims[d].name,
                                    c->op->stmts[other].name,
                                    joint == st ? "reads its result" : "makes what it reads");
                diag_label(e, c->diags, c->op->stmts[other].span, "statement `%s`",
                           c->op->stmts[other].name);
                diag_help(e, c->diags,
                          "deal both statements alike, or fuse them apart: the lowering does "
                          "not move tiles dealt jointly between the instances");
                return;
            }
        }
}

static void apply_spatial(MapCtx *c, const MapItem *it, bool for_lines) {
    bool is_for = it->stmts.count > 0;
    if (is_for != for_lines) return;
    int stmt_count = c->op->stmt_count;
    bool *named = ARENA_ARRAY(c->arena, bool, stmt_count + 1);
    if (is_for) {
        for (int i = 0; i < it->stmts.count; i++) {
            const Ident *id = &it->stmts.items[i];
            if (!id->name) continue;
            int st = lookup_stmt(c, id);
            if (st < 0) continue;
            if (c->spatial_for_of[st]) {
                Diag *d = map_error(c, id->span, "E0331",
                                    "`%s` is named by two `spatial for` lines", id->name);
                diag_label(d, c->diags, c->spatial_for_of[st]->span, "first here");
                diag_help(d, c->diags, "give all of `%s`'s splits on one line", id->name);
                continue;
            }
            named[st] = true;
            c->spatial_for_of[st] = it;
            if (!c->stmt_overridden[st]) {
                /* The statement's split comes from its `for` lines only. */
                c->stmt_overridden[st] = true;
                for (int d = 0; d < c->arch->dim_count; d++) {
                    *split_at(c, st, d) = IR_UNSET;
                    if (c->m->spatial.joint) joint_at(c, st, d)[0] = -1;
                }
            }
        }
    }
    for (int a = 0; a < it->assign_count; a++) {
        const SpatialAssign *as = &it->assigns[a];
        int index = IR_HOLE;
        if (!as->index.hole) {
            if (!as->index.name) {
                c->ok = false;
                continue;
            }
            index = lookup_index(c, &as->index);
            if (index < 0) continue;
            /* one index, one assignment: `m -> x` and `m -> y` on two
             * lines (or twice on one) would be `m -> (x, y)` said twice */
            const SpatialAssign *first = is_for ? NULL : c->split_assign_of[index];
            for (int b = 0; is_for && b < a; b++)
                if (!it->assigns[b].index.hole && it->assigns[b].index.name == as->index.name)
                    first = &it->assigns[b];
            bool same = first && first->dims.count == as->dims.count;
            for (int k = 0; same && k < as->dims.count; k++)
                same = first->dims.items[k].name == as->dims.items[k].name;
            if (first && first != as && !same) { /* (the same split: assign_split says so) */
                Diag *d = map_error(c, as->span, "E0321", "`%s` is split twice", as->index.name);
                diag_label(d, c->diags, first->span, "first here");
                help_one_split(c, d, first, as);
                continue;
            }
            if (!is_for) c->split_assign_of[index] = as;
        } else {
            c->m->hole_count++;
        }
        bool dims_hole = as->dims.count == 1 && as->dims.items[0].hole;
        int *dims = ARENA_ARRAY(c->arena, int, as->dims.count + 1);
        int dim_count = 0;
        bool bad = false;
        if (dims_hole) {
            c->m->hole_count++;
        } else {
            for (int k = 0; k < as->dims.count; k++) {
                const Ident *id = &as->dims.items[k];
                /* a hole inside a list the parser has reported */
                if (id->hole || !id->name) {
                    bad = true;
                    c->ok = false;
                    continue;
                }
                int dim = lookup_dim(c, id);
                if (dim < 0) {
                    bad = true;
                    continue;
                }
                bool dup = false;
                for (int j = 0; j < dim_count; j++)
                    if (dims[j] == dim) dup = true;
                if (dup) {
                    map_error(c, id->span, "E0323", "`%s` appears twice in the split of `%s`",
                              id->name, as->index.hole ? "?" : as->index.name);
                    bad = true;
                    continue;
                }
                dims[dim_count++] = dim;
            }
        }
        if (bad) continue;
        if (as->joint.count >= 2) {
            if (dims_hole) {
                map_error(c, as->dims.items[0].span, "E0367",
                          "a joint deal names its dims: `(%s, ...) -> DIM`, DIM a cluster "
                          "dimension of the arch",
                          as->index.name);
                continue;
            }
            apply_joint(c, as, named, is_for, dims, dim_count);
            continue;
        }
        bool reported = false;
        for (int st = 0; st < stmt_count; st++) {
            if (is_for ? !named[st] : c->stmt_overridden[st]) continue;
            if (index == IR_HOLE) {
                /* `? -> ?` leaves every dimension open */
                if (dims_hole)
                    for (int d = 0; d < c->arch->dim_count; d++) {
                        int *slot = split_at(c, st, d);
                        if (*slot == IR_UNSET) {
                            *slot = IR_HOLE;
                            c->m->spatial.split_span[st * c->arch->dim_count + d] = as->span;
                        }
                    }
                for (int k = 0; k < dim_count; k++) {
                    int *slot = split_at(c, st, dims[k]);
                    if (c->m->spatial.joint && joint_at(c, st, dims[k])[0] >= 0 && !reported) {
                        reported = true;
                        Diag *d = map_error(c, as->span, "E0367",
                                            "a hole on `%s`, which deals indices jointly for `%s`",
                                            c->arch->dims[dims[k]].name, c->op->stmts[st].name);
                        diag_label(d, c->diags,
                                   c->m->spatial.split_span[st * c->arch->dim_count + dims[k]],
                                   "the joint deal");
                    }
                    if (*slot == IR_UNSET) {
                        *slot = IR_HOLE;
                        c->m->spatial.split_span[st * c->arch->dim_count + dims[k]] = as->span;
                    }
                }
                continue;
            }
            if (!ir_stmt_uses_index(&c->op->stmts[st], index)) {
                if (is_for && !reported) {
                    reported = true;
                    Diag *d = map_error(c, as->index.span, "E0322",
                                        "statement `%s` does not use index `%s`",
                                        c->op->stmts[st].name, as->index.name);
                    diag_label(d, c->diags, c->op->stmts[st].span, "statement `%s`",
                               c->op->stmts[st].name);
                }
                continue;
            }
            assign_split(c, as, st, index, dims, dim_count, dims_hole, &reported);
        }
    }
}

/* `n -> ?`: the holes a named index leaves may only take that index.  The
 * cells it left open carry its span (a later line that sets one replaces
 * the span). */
static void record_split_only(MapCtx *c) {
    IrSpatial *sp = &c->m->spatial;
    int cells = c->op->stmt_count * c->arch->dim_count;
    int words = (c->op->index_count + 63) / 64;
    sp->split_only_words = words;
    sp->split_only_set = ARENA_ARRAY(c->s->arena, uint64_t, (size_t)cells * (size_t)words + 1);
    for (int k = 0; k < cells; k++) sp->split_only[k] = -1;
    if (sp->whole_hole) return;
    for (int it = 0; it < c->md->item_count; it++) {
        const MapItem *mi = c->md->items[it];
        if (mi->kind != MI_SPATIAL) continue;
        for (int a = 0; a < mi->assign_count; a++) {
            const SpatialAssign *as = &mi->assigns[a];
            if (as->index.hole || !as->index.name) continue;
            int ix = ir_find_index(c->op, as->index.name);
            if (ix < 0) continue;
            /* only `ix -> ?` opens holes that take ix */
            bool dims_hole = as->dims.count == 1 && as->dims.items[0].hole;
            for (int k = 0; k < cells && dims_hole; k++) {
                Span sk = sp->split_span[k];
                if (sp->split[k] != IR_HOLE || sk.file != as->span.file) continue;
                if (sk.start == as->span.start && sk.end == as->span.end) sp->split_only[k] = ix;
                /* every named hole of the line that left this cell open
                 * and whose index the statement uses */
                int st = k / c->arch->dim_count;
                if (sk.start >= mi->span.start && sk.end <= mi->span.end &&
                    ir_stmt_uses_index(&c->op->stmts[st], ix))
                    sp->split_only_set[(size_t)k * (size_t)words + (size_t)(ix >> 6)] |=
                        (uint64_t)1 << (ix & 63);
            }
        }
    }
}

/* The number of parts index `ix` of statement `st` is split into over the
 * dims of clusters before `clusters_outside` (all when negative); 0 when a
 * hole makes it unknown. */
static int64_t split_parts(MapCtx *c, int st, int ix, int clusters_outside) {
    if (c->m->spatial.whole_hole) return 0;
    int64_t parts = 1;
    for (int d = 0; d < c->arch->dim_count; d++) {
        if (clusters_outside >= 0 && c->arch->dims[d].cluster >= clusters_outside) continue;
        int v = *split_at(c, st, d);
        if (v == IR_HOLE) return 0;
        /* a joint deal shares the dim among its indices (check_joint_deals) */
        if (c->m->spatial.joint && joint_at(c, st, d)[0] >= 0) continue;
        if (v == ix) parts *= c->arch->dims[d].size;
    }
    return parts;
}

/* A split need not divide its extent (docs/cost-model.md section 1.1:
 * whole blocks are dealt to the instances, the busiest gets ceil(T/P) of
 * them; E0310 is retired).  What the split cannot show is a statement
 * none of whose indices is split over some dims: every instance along
 * them computes the same result.  W0301 says so, with the factor, when it
 * reaches REPLICATION_WARN instances and one of the statement's indices
 * has at least that many elements (docs/errors/W0301.md). */
/* E0310 (reused): a split into more parts than its index has elements
 * leaves instances that never get any of it.  A split that does not
 * divide is fine (E0310's old meaning, retired). */
static void check_split_parts(MapCtx *c) {
    int dc = c->arch->dim_count;
    Span *done = ARENA_ARRAY(c->arena, Span, c->op->stmt_count * c->op->index_count + 1);
    int done_count = 0;
    for (int st = 0; st < c->op->stmt_count; st++)
        for (int ix = 0; ix < c->op->index_count; ix++) {
            if (!ir_stmt_uses_index(&c->op->stmts[st], ix)) continue;
            int64_t parts = split_parts(c, st, ix, -1);
            int64_t extent = c->op->indices[ix].extent;
            if (parts <= extent) continue;
            Span where = SPAN_NONE;
            const char *dims = "";
            int n = 0;
            for (int d = 0; d < dc; d++)
                if (*split_at(c, st, d) == ix) {
                    where = c->m->spatial.split_span[st * dc + d];
                    dims = arena_printf(c->arena, "%s%s%s", dims, n++ ? ", " : "",
                                        c->arch->dims[d].name);
                }
            bool seen = false;
            for (int k = 0; k < done_count; k++)
                if (done[k].file == where.file && done[k].start == where.start) seen = true;
            if (seen) continue;
            done[done_count++] = where;
            Diag *d = map_error(c, where, "E0310",
                                "splitting `%s` over %s%s%s makes %lld parts, more than its "
                                "%lld elements",
                                c->op->indices[ix].name, n > 1 ? "(" : "", dims, n > 1 ? ")" : "",
                                (long long)parts, (long long)extent);
            diag_note(d, c->diags, "%lld of the %lld instances would never get any of `%s`",
                      (long long)(parts - extent), (long long)parts, c->op->indices[ix].name);
            diag_help(d, c->diags,
                      "split a larger index over these dims, or fewer dims (a split need not "
                      "divide the extent)");
        }
}

/* W0302: a `spatial for` line replaces the named statements' whole split
 * (language.md 5.1), so an index the mapping-wide line splits over a dim
 * that the `for` line leaves unassigned is no longer split there: the
 * statement runs replicated along it.  Said once per line and index. */
static void warn_dropped_splits(MapCtx *c) {
    int dc = c->arch->dim_count, ic = c->op->index_count;
    for (int ix = 0; ix < ic; ix++) {
        const SpatialAssign *wide = c->split_assign_of[ix];
        if (!wide || (wide->dims.count == 1 && wide->dims.items[0].hole)) continue;
        const MapItem *said = NULL;
        for (int st = 0; st < c->op->stmt_count; st++) {
            const MapItem *line = c->spatial_for_of[st];
            if (!line || line == said || !ir_stmt_uses_index(&c->op->stmts[st], ix)) continue;
            bool kept = false, open = false;
            const char *dims = "";
            for (int k = 0; k < wide->dims.count; k++) {
                int d = -1;
                for (int e = 0; e < dc; e++)
                    if (c->arch->dims[e].name == wide->dims.items[k].name) d = e;
                if (d < 0) continue;
                int v = *split_at(c, st, d);
                if (v == ix) kept = true;
                if (v == IR_UNSET) {
                    open = true;
                    dims = arena_printf(c->arena, "%s%s%s", dims, *dims ? ", " : "",
                                        c->arch->dims[d].name);
                }
            }
            if (kept || !open) continue;
            said = line;
            Diag *d = diag_warning(c->diags, line->span, "W0302",
                                   "this `spatial for` line replaces the mapping's split of `%s`: "
                                   "`%s` is no longer split over %s, where it runs replicated",
                                   wide->index.name, c->op->stmts[st].name, dims);
            diag_label(d, c->diags, wide->span, "the mapping's split");
            diag_help(d, c->diags,
                      "a `spatial for` line gives its statements' whole split: add `%s -> %s` to "
                      "it to keep this one",
                      wide->index.name, dims);
        }
    }
}

#define REPLICATION_WARN 32

static void check_replication(MapCtx *c) {
    int dc = c->arch->dim_count;
    for (int st = 0; st < c->op->stmt_count; st++) {
        int64_t factor = 1;
        const char *dims = "";
        int n = 0;
        bool hole = false;
        for (int d = 0; d < dc; d++) {
            int v = *split_at(c, st, d);
            if (v == IR_HOLE) hole = true;
            if (v >= 0 && ir_stmt_uses_index(&c->op->stmts[st], v)) continue;
            if (c->arch->dims[d].size <= 1) continue;
            factor *= c->arch->dims[d].size;
            dims = arena_printf(c->arena, "%s%s%s (%lld)", dims, n++ ? ", " : "",
                                c->arch->dims[d].name, (long long)c->arch->dims[d].size);
        }
        if (hole || factor < REPLICATION_WARN) continue;
        /* only when one of its indices could feed every one of them (a
         * row statistic of a single row cannot be split anyway) */
        int64_t widest = 0;
        for (int ix = 0; ix < c->op->index_count; ix++)
            if (ir_stmt_uses_index(&c->op->stmts[st], ix) && c->op->indices[ix].extent > widest)
                widest = c->op->indices[ix].extent;
        if (widest < factor) continue;
        /* at the statement's own `spatial for` line, else the mapping's
         * spatial line, else the mapping */
        Span where = c->m->span;
        for (int it = c->md->item_count - 1; it >= 0; it--)
            if (c->md->items[it]->kind == MI_SPATIAL) where = c->md->items[it]->span;
        if (c->stmt_overridden && c->stmt_overridden[st])
            for (int d = 0; d < dc; d++)
                if (*split_at(c, st, d) >= 0) where = c->m->spatial.split_span[st * dc + d];
        Diag *d = diag_warning(c->diags, where, "W0301",
                               "statement `%s` is computed redundantly on %lld instances: none "
                               "of its indices is split over %s",
                               c->op->stmts[st].name, (long long)factor, dims);
        bool split_elsewhere = false;
        for (int e = 0; e < dc; e++) {
            int v = *split_at(c, st, e);
            split_elsewhere |= v >= 0 && ir_stmt_uses_index(&c->op->stmts[st], v);
        }
        diag_note(d, c->diags,
                  "each of the %lld instances computes %s `%s` (the energy counts every copy)",
                  (long long)factor, split_elsewhere ? "the same share of" : "the whole of",
                  c->op->stmts[st].name);
        diag_help(d, c->diags,
                  "split one of its indices over %s (`spatial for %s: INDEX -> DIM`), or "
                  "leave it replicated on purpose",
                  n > 1 ? "those dims" : "that dim", c->op->stmts[st].name);
    }
}

/* ------------------------------------------------------------- tiles */

/* The level of a `tile` or `order` line, recorded in `lines`; -1 when the
 * level is unknown or already has such a line (reported). */
static int claim_level_line(MapCtx *c, const MapItem *it, const MapItem **lines,
                            const char *keyword) {
    if (reject_level_hole(c, it)) return -1;
    if (!it->level.name) {
        c->ok = false;
        return -1;
    }
    int lv = lookup_level(c, &it->level);
    if (lv < 0) return -1;
    if (lines[lv]) {
        Diag *d = map_error(c, it->keyword_span, "E0321", "level `%s` has two `%s` lines",
                            c->arch->levels[lv].name, keyword);
        diag_label(d, c->diags, lines[lv]->keyword_span, "first here");
        diag_help(d, c->diags, "put every index of the level on one line");
        return -1;
    }
    lines[lv] = it;
    return lv;
}

/* The name a mapping line used for a level: for a level split by role,
 * the memory the user wrote (`tile WBUF: ...`), not the level's first. */
static const char *written_level(MapCtx *c, const MapItem *line, int lv) {
    if (line && line->level.name) return line->level.name;
    return c->arch->levels[lv].name;
}

/* The statements a `tile L for ...` or `order L for ...` line names, as a
 * mask (NULL when none checks).  E0330: one the op does not have; E0331:
 * one that another line of the kind (or this one) already names at the
 * level.  `claimed` is tile_for_of or order_for_of. */
static bool *claim_for_stmts(MapCtx *c, const MapItem *it, int lv, const MapItem **claimed,
                             const char *keyword) {
    int L = c->arch->level_count;
    bool *named = ARENA_ARRAY(c->arena, bool, c->op->stmt_count + 1);
    int n = 0;
    for (int k = 0; k < it->stmts.count; k++) {
        const Ident *id = &it->stmts.items[k];
        if (id->hole || !id->name) {
            c->ok = false;
            continue;
        }
        int st = lookup_stmt_as(c, id, "E0330");
        if (st < 0) continue;
        const MapItem *first = claimed[st * L + lv];
        if (first) {
            Diag *d = map_error(c, id->span, "E0331",
                                first == it ? "`%s` is named twice on this `%s` line"
                                            : "`%s` is named by two `%s %s for` lines",
                                id->name, keyword, written_level(c, it, lv));
            if (first != it) diag_label(d, c->diags, first->keyword_span, "first here");
            if (first == it)
                diag_help(d, c->diags, "drop the repeated `%s`", id->name);
            else if (strcmp(keyword, "tile") == 0)
                diag_help(d, c->diags,
                          "a statement takes its tiles at a level from one `for` line: put every "
                          "index of `%s` on one of them",
                          id->name);
            else
                diag_help(d, c->diags,
                          "a statement takes its order at a level from one `for` line: drop "
                          "`%s` from one of them",
                          id->name);
            continue;
        }
        claimed[st * L + lv] = it;
        named[st] = true;
        n++;
    }
    return n ? named : NULL;
}

/* The level of a `tile` or `order` line (`what`), -1 when it cannot be
 * applied: the mapping-wide line (`line` 0) claims its level once; a
 * `for` line also claims its statements at the level (*named). */
static int line_level(MapCtx *c, const MapItem *it, int line, const MapItem **wide,
                      const MapItem **for_of, const char *what, bool **named) {
    *named = NULL;
    if (line == 0) return claim_level_line(c, it, wide, what);
    if (reject_level_hole(c, it)) return -1;
    if (!it->level.name) {
        c->ok = false;
        return -1;
    }
    int lv = lookup_level(c, &it->level);
    if (lv >= 0) *named = claim_for_stmts(c, it, lv, for_of, what);
    return *named ? lv : -1;
}

/* A `tile` line: the mapping-wide one (`line` 0) gives every statement its
 * entries; the k-th `tile L for ...` line (`line` k) replaces, for the
 * statements it names, the entries of the indices it names.  The
 * mapping-wide lines are applied before the `for` lines. */
/* E0366: the outermost level holds every tensor whole (docs/language.md
 * 5.2): a tile or an order there would decide nothing. */
static bool outermost_line(MapCtx *c, const MapItem *it, int lv, const char *what) {
    if (lv != 0) return false;
    const char *name = c->arch->levels[0].name;
    Diag *d = map_error(c, it->level.span, "E0366",
                        "`%s %s` is at the outermost level, which holds each instance's whole "
                        "share of every tensor: it has no %s",
                        what, name, strcmp(what, "tile") == 0 ? "tiles" : "loops to order");
    if (c->arch->level_count > 1)
        diag_help(d, c->diags, "give the %s of the level below, `%s %s: ...`, or drop the line",
                  strcmp(what, "tile") == 0 ? "tiles" : "order", what, c->arch->levels[1].name);
    else
        diag_help(d, c->diags, "`%s` is the arch's only level: drop the line", name);
    return true;
}

static void apply_tile(MapCtx *c, const MapItem *it, int line) {
    bool *named;
    int lv = line_level(c, it, line, c->tile_line, c->tile_for_of, "tile", &named);
    if (lv < 0 || outermost_line(c, it, lv, "tile")) return;
    int ic = c->op->index_count, sc = c->op->stmt_count;
    IrTile *tl = &c->m->tile;
    if (it->whole_hole) {
        /* `tile L: ?` leaves the tile of every index at L to the optimizer,
         * as `tile L: i ?, j ?, ...` would; `tile L for S: ?` every index
         * its statements use */
        for (int ix = 0; ix < ic; ix++) {
            bool any = false;
            for (int st = 0; st < sc; st++) {
                if (named && (!named[st] || !ir_stmt_uses_index(&c->op->stmts[st], ix))) continue;
                int k = ir_tile_slot(c->m, st, lv, ix);
                tl->size[k] = IR_HOLE;
                tl->span[k] = it->span;
                tl->from[k] = line;
                any = true;
            }
            if (any) c->m->hole_count++;
        }
        return;
    }
    ConstEnv env = c->s->env;
    env.diags = c->diags;
    env.where = subject("a tile size");
    Span *first = ARENA_ARRAY(c->arena, Span, ic + 1);
    for (int ix = 0; ix < ic; ix++) first[ix] = SPAN_NONE;
    for (int i = 0; i < it->tile_count; i++) {
        const TileEntry *te = &it->tiles[i];
        if (te->index.hole) {
            tl->index_hole[lv] = true;
            tl->index_hole_span[tl->index_hole_count++] = te->span;
            c->m->hole_count++;
            if (te->size && te->size->kind == EX_HOLE) c->m->hole_count++;
            continue;
        }
        if (!te->index.name) {
            c->ok = false;
            continue;
        }
        int ix = lookup_index(c, &te->index);
        if (ix < 0) continue;
        if (first[ix].file >= 0) {
            Diag *d = map_error(c, te->index.span, "E0321", "index `%s` is tiled twice at `%s`",
                                te->index.name, c->arch->levels[lv].name);
            diag_label(d, c->diags, first[ix], "first here");
            continue;
        }
        first[ix] = te->span;
        if (named) {
            bool used = false;
            for (int st = 0; st < sc; st++)
                if (named[st] && ir_stmt_uses_index(&c->op->stmts[st], ix)) used = true;
            if (!used) {
                Diag *d = map_error(c, te->index.span, "E0334",
                                    "no statement of this `tile %s for` line uses index `%s`",
                                    written_level(c, it, lv), te->index.name);
                diag_help(d, c->diags,
                          "drop `%s` from the line, or name a statement that loops over it",
                          te->index.name);
                continue;
            }
        }
        int64_t v = IR_HOLE;
        if (!te->size || te->size->kind == EX_ERROR) {
            c->ok = false;
            continue;
        }
        if (te->size->kind == EX_HOLE) {
            c->m->hole_count++;
        } else {
            env.expr_depth = 0;
            if (!const_eval_int(&env, te->size, subject_of("the tile of ", te->index.name), &v)) {
                c->ok = false;
                continue;
            }
            if (v < 1) {
                map_error(c, te->size->span, "E0324", "tile %s %lld must be positive",
                          te->index.name, (long long)v);
                continue;
            }
        }
        for (int st = 0; st < sc; st++) {
            if (named && !named[st]) continue;
            int k = ir_tile_slot(c->m, st, lv, ix);
            tl->size[k] = v;
            tl->span[k] = te->span;
            tl->from[k] = line;
        }
    }
}

/* A tile at a level is dealt out over the split of its index inside that
 * level in whole blocks (docs/cost-model.md section 1.1), so it need not
 * be a multiple of the split; but a tile smaller than the split leaves
 * instances without work in every tile (`spatial m -> x` over 8 cores
 * below L2 with `tile L2: m 2`: 6 cores idle; counted in contiguous runs
 * of blocks of the tile below the dims).  A tile of the whole share is no
 * tile: the range itself is dealt out.  False (with E0326 and the
 * smallest tile that feeds every instance) when it is. */
static bool tile_covers_inner_split(MapCtx *c, int lv, int ix, int64_t t, Span where,
                                    const bool *among, const MapItem *line) {
    int outside = c->arch->levels[lv].clusters_outside;
    for (int st = 0; st < c->op->stmt_count; st++) {
        if (!among[st] || !ir_stmt_uses_index(&c->op->stmts[st], ix)) continue;
        int64_t all = split_parts(c, st, ix, -1), outer = split_parts(c, st, ix, outside);
        if (all == 0 || outer == 0) continue;
        int64_t inner = all / outer;
        if (inner <= 1) continue;
        /* a tile of the whole share is no tile: the range itself is dealt
         * out, which only E0310 limits */
        int64_t extent = c->op->indices[ix].extent;
        if (t >= (extent + outer - 1) / outer) continue;
        /* the block: the index's tile at the level just below the first
         * of those dims, one element when that level does not tile it */
        int64_t block = 1;
        int below = -1;
        for (int d = 0; d < c->arch->dim_count && below < 0; d++) {
            if (*split_at(c, st, d) != ix || c->arch->dims[d].cluster < outside) continue;
            for (int l = lv + 1; l < c->arch->level_count && below < 0; l++)
                if (c->arch->dims[d].cluster < c->arch->levels[l].clusters_outside) below = l;
        }
        if (below > 0 && c->m->tile.size[ir_tile_slot(c->m, st, below, ix)] >= 1)
            block = c->m->tile.size[ir_tile_slot(c->m, st, below, ix)];
        /* contiguous runs of ceil(blocks / inner): how many get one */
        int64_t blocks = (t + block - 1) / block, run = (blocks + inner - 1) / inner;
        int64_t busy = (blocks + run - 1) / run;
        if (busy >= inner) continue;
        Name name = c->op->indices[ix].name;
        const char *dims = "";
        int n = 0;
        for (int d = 0; d < c->arch->dim_count; d++)
            if (*split_at(c, st, d) == ix && c->arch->dims[d].cluster >= outside)
                dims =
                    arena_printf(c->arena, "%s%s%s", dims, n++ ? ", " : "", c->arch->dims[d].name);
        Diag *d =
            blocks >= inner
                ? map_error(c, where, "E0326",
                            "tile %s %lld at `%s` deals %lld blocks of %lld in runs of %lld: only "
                            "%lld of the %lld-way split of `%s` inside it get work",
                            name, (long long)t, written_level(c, line, lv), (long long)blocks,
                            (long long)block, (long long)run, (long long)busy, (long long)inner,
                            name)
            : block > 1
                ? map_error(c, where, "E0326",
                            "tile %s %lld at `%s` makes %lld block%s of %lld for the %lld-way "
                            "split of `%s` inside it",
                            name, (long long)t, written_level(c, line, lv), (long long)blocks,
                            blocks == 1 ? "" : "s", (long long)block, (long long)inner, name)
                : map_error(c, where, "E0326",
                            "tile %s %lld at `%s` is smaller than the %lld-way split of `%s` "
                            "inside it",
                            name, (long long)t, written_level(c, line, lv), (long long)inner, name);
        diag_note(d, c->diags,
                  "`%s` is split over %s below `%s`: %lld of the %lld instances there would get "
                  "nothing of each tile",
                  name, dims, written_level(c, line, lv), (long long)(inner - busy),
                  (long long)inner);
        int64_t share = (extent + outer - 1) / outer;
        if (inner * block < share)
            diag_help(d, c->diags, "the smallest tile that gives every instance work: `%s %lld`",
                      name, (long long)(inner * block));
        else /* no tile of the index feeds them all in blocks that large */
            diag_help(d, c->diags,
                      "blocks of %lld cannot reach all %lld instances in `%s`'s %lld: leave the "
                      "tile of `%s` at `%s` whole, or make the tile below at most %lld",
                      (long long)block, (long long)inner, name, (long long)share, name,
                      written_level(c, line, lv),
                      (long long)(share / inner > 0 ? share / inner : 1));
        return false;
    }
    return true;
}

/* The line that gave entry `from` of a tile at level lv. */
static const MapItem *tile_line_of(MapCtx *c, int from, int lv) {
    return from > 0 ? c->tile_for[from - 1] : c->tile_line[lv];
}

/* Each line's entry of an index at a level is checked once, against the
 * statements it gives it to (`among`). */
static void check_tiles(MapCtx *c) {
    int ic = c->op->index_count, sc = c->op->stmt_count;
    const IrTile *tl = &c->m->tile;
    bool *among = ARENA_ARRAY(c->arena, bool, sc + 1);
    for (int lv = 0; lv < c->arch->level_count; lv++) {
        int outside = c->arch->levels[lv].clusters_outside;
        for (int ix = 0; ix < ic; ix++)
            for (int line = 0; line <= tl->line_count; line++) {
                int first = -1;
                for (int st = 0; st < sc; st++) {
                    int k = ir_tile_slot(c->m, st, lv, ix);
                    among[st] = tl->from[k] == line && tl->size[k] >= 1;
                    if (among[st] && first < 0) first = st;
                }
                if (first < 0) continue;
                int64_t t = tl->size[ir_tile_slot(c->m, first, lv, ix)];
                Span where = tl->span[ir_tile_slot(c->m, first, lv, ix)];
                const MapItem *it = tile_line_of(c, line, lv);
                Name name = c->op->indices[ix].name;
                /* A tile need not divide the extent (the last tile is
                 * partial, docs/cost-model.md section 2); it may not
                 * exceed it. */
                int64_t extent = c->op->indices[ix].extent;
                if (t > extent) {
                    Diag *d =
                        map_error(c, where, "E0304", "tile %s %lld is larger than the extent %lld",
                                  name, (long long)t, (long long)extent);
                    diag_help(d, c->diags, "the largest tile is the whole index: `%s %lld`", name,
                              (long long)extent);
                    continue;
                }
                if (!tile_covers_inner_split(c, lv, ix, t, where, among, it)) continue;
                for (int st = first; st < sc; st++) {
                    if (!among[st]) continue;
                    int outer = lv - 1;
                    while (outer >= 0 && tl->size[ir_tile_slot(c->m, st, outer, ix)] == IR_UNSET)
                        outer--;
                    if (outer < 0) continue;
                    int ko = ir_tile_slot(c->m, st, outer, ix);
                    int64_t ot = tl->size[ko];
                    if (ot == IR_HOLE) continue;
                    /* each instance between the two levels holds its share
                     * of the outer tile, which the inner tile must divide */
                    int64_t between = 1;
                    for (int s2 = 0; s2 < sc; s2++) {
                        if (!among[s2] || !ir_stmt_uses_index(&c->op->stmts[s2], ix)) continue;
                        if (tl->from[ir_tile_slot(c->m, s2, outer, ix)] != tl->from[ko]) continue;
                        int64_t inside_outer =
                            split_parts(c, s2, ix, c->arch->levels[outer].clusters_outside);
                        int64_t inside_lv = split_parts(c, s2, ix, outside);
                        if (inside_outer > 0 && inside_lv > 0 && inside_lv / inside_outer > between)
                            between = inside_lv / inside_outer;
                        /* a joint deal between them deals the outer tile too */
                        for (int d = 0; c->m->spatial.joint && d < c->arch->dim_count; d++) {
                            int cl = c->arch->dims[d].cluster;
                            const int *j = joint_at(c, s2, d);
                            if (j[0] >= 0 && (*split_at(c, s2, d) == ix || j[0] == ix) &&
                                cl >= c->arch->levels[outer].clusters_outside && cl < outside &&
                                between < 2)
                                between = 2;
                        }
                    }
                    /* split between the two levels: the dims deal the outer
                     * tile out in whole blocks (section 1.1), so an inner
                     * tile need only fit in it; without a split it must
                     * divide it, so that only the last tile of the index is
                     * partial */
                    if (between > 1 ? t <= ot : ot % t == 0) continue;
                    Diag *d =
                        map_error(c, where, "E0311",
                                  t > ot ? "tile %s %lld at `%s` is larger than "
                                           "the tile %lld at `%s`"
                                         : "tile %s %lld at `%s` does not divide "
                                           "the tile %lld at `%s`",
                                  name, (long long)t, written_level(c, it, lv), (long long)ot,
                                  written_level(c, tile_line_of(c, tl->from[ko], outer), outer));
                    diag_label(d, c->diags, tl->span[ko], "the enclosing tile");
                    if (t > ot)
                        diag_help(d, c->diags,
                                  "an inner level holds at most the "
                                  "enclosing tile: `%s %lld`",
                                  name, (long long)ot);
                    else
                        help_divisors(c, d, ot, t, "divisors");
                    break;
                }
            }
    }
}

/* ------------------------------------------------------------- order */

/* An `order` line: the mapping-wide one (`line` 0) gives every statement
 * its order at the level; the k-th `order L for ...` line (`line` k)
 * replaces it, whole, for the statements it names. */
static void apply_order(MapCtx *c, const MapItem *it, int line) {
    bool *named;
    int lv = line_level(c, it, line, c->order_line, c->order_for_of, "order", &named);
    if (lv < 0 || outermost_line(c, it, lv, "order")) return;
    int ic = c->op->index_count;
    int *perm = ARENA_ARRAY(c->arena, int, ic + 1);
    int n = 0;
    if (it->whole_hole) {
        n = IR_HOLE;
        c->m->hole_count++;
    } else {
        for (int i = 0; i < it->order.count; i++) {
            const Ident *id = &it->order.items[i];
            if (id->hole || !id->name) {
                c->ok = false;
                return;
            }
            int ix = lookup_index(c, id);
            if (ix < 0) return;
            for (int k = 0; k < n; k++)
                if (perm[k] == ix) {
                    Diag *d =
                        map_error(c, id->span, "E0313", "`%s` appears twice in the order of `%s`",
                                  id->name, c->arch->levels[lv].name);
                    diag_label(d, c->diags, it->order.items[k].span, "first here");
                    return;
                }
            perm[n++] = ix;
        }
    }
    IrOrder *o = &c->m->order;
    for (int st = 0; st < c->op->stmt_count; st++) {
        if (named && !named[st]) continue;
        int k = ir_order_slot(c->m, st, lv);
        o->span[k] = it->span;
        o->from[k] = line;
        o->length[k] = n;
        for (int q = 0; q < n; q++) o->perm[k * ic + q] = perm[q];
    }
}

/* An order lists distinct indices of the op and must include every index
 * the statement's `tile` line at the level names (others iterate once;
 * naming them is harmless).  Checked once per order line, at the first
 * statement it leaves an index out for. */
static void check_orders(MapCtx *c) {
    int ic = c->op->index_count, sc = c->op->stmt_count;
    const IrOrder *o = &c->m->order;
    const IrTile *tl = &c->m->tile;
    for (int lv = 0; lv < c->arch->level_count; lv++) {
        if (tl->index_hole[lv]) continue; /* the optimizer picks them */
        for (int line = 0; line <= o->line_count; line++) {
            const MapItem *it = line > 0 ? c->order_for[line - 1] : c->order_line[lv];
            if (!it) continue;
            for (int st = 0; st < sc; st++) {
                int k = ir_order_slot(c->m, st, lv);
                int len = o->length[k];
                if (o->from[k] != line || len <= 0) continue;
                const char *missing = "";
                const MapItem *tile = NULL;
                for (int ix = 0; ix < ic; ix++) {
                    int kt = ir_tile_slot(c->m, st, lv, ix);
                    bool tiled = tl->size[kt] != IR_UNSET;
                    bool ordered = false;
                    for (int q = 0; q < len; q++)
                        if (o->perm[k * ic + q] == ix) ordered = true;
                    if (tiled && !ordered) {
                        missing = arena_printf(c->arena, "%s%s`%s`", missing,
                                               missing[0] ? ", " : "", c->op->indices[ix].name);
                        if (!tile) tile = tile_line_of(c, tl->from[kt], lv);
                    }
                }
                if (!missing[0] || !tile) continue;
                Diag *d =
                    line > 0
                        ? map_error(c, it->span, "E0313",
                                    "the order of `%s` for `%s` leaves out %s, which its `tile` "
                                    "line loops over",
                                    c->arch->levels[lv].name, c->op->stmts[st].name, missing)
                        : map_error(c, it->span, "E0313",
                                    "the order of `%s` leaves out %s, which its `tile` "
                                    "line loops over",
                                    c->arch->levels[lv].name, missing);
                diag_label(d, c->diags, tile->keyword_span, "the tiled indices of `%s`",
                           c->arch->levels[lv].name);
                diag_help(d, c->diags,
                          "an order is a permutation of the level's loops: "
                          "list every tiled index once");
                break;
            }
        }
    }
}

static Span order_span_or_stmt(MapCtx *c, int st, int l) {
    Span sp = c->m->order.span[ir_order_slot(c->m, st, l)];
    return sp.file >= 0 ? sp : c->op->stmts[st].span;
}

/* Statements fused in one group run in one loop nest, at every level: they
 * walk the same tiles of every index they share (E0332) and the nest has
 * one order at each level (E0333).  Once per group. */
static void check_group_tiles(MapCtx *c) {
    const IrMapping *m = c->m;
    const IrFuse *f = &m->fuse;
    int sc = c->op->stmt_count, ic = c->op->index_count, L = c->arch->level_count;
    for (int g = 0; g < f->group_count; g++) {
        bool tiles = false, orders = false; /* reported for the group */
        for (int b = 0; b < sc && !(tiles && orders); b++) {
            if (f->group[b] != g) continue;
            for (int a = 0; a < b && !(tiles && orders); a++) {
                if (f->group[a] != g) continue;
                for (int l = 1; l < L && !tiles; l++)
                    for (int ix = 0; ix < ic && !tiles; ix++) {
                        if (!ir_stmt_uses_index(&c->op->stmts[a], ix) ||
                            !ir_stmt_uses_index(&c->op->stmts[b], ix) ||
                            ir_same_tile(m, a, b, l, ix))
                            continue;
                        /* the error at the `for` line's entry, the
                         * other statement's labelled */
                        int p = a, q = b;
                        if (m->tile.from[ir_tile_slot(m, b, l, ix)] > 0) p = b, q = a;
                        int kp = ir_tile_slot(m, p, l, ix), kq = ir_tile_slot(m, q, l, ix);
                        Span sp = m->tile.span[kp].file >= 0 ? m->tile.span[kp] : f->span[g];
                        Span sq = m->tile.span[kq].file >= 0 ? m->tile.span[kq] : f->span[g];
                        Diag *d = map_error(
                            c, sp, "E0332",
                            "`%s` and `%s` are fused but take different tiles of `%s` at `%s`",
                            c->op->stmts[p].name, c->op->stmts[q].name, c->op->indices[ix].name,
                            c->arch->levels[l].name);
                        if (m->tile.span[kq].file >= 0)
                            diag_label(d, c->diags, sq, "the tile of `%s`", c->op->stmts[q].name);
                        else
                            diag_label(d, c->diags, sq, "`%s` has no tile of `%s` at `%s`",
                                       c->op->stmts[q].name, c->op->indices[ix].name,
                                       c->arch->levels[l].name);
                        diag_note(d, c->diags,
                                  "fused statements walk one loop nest: one tile of each "
                                  "index they share at every level");
                        diag_help(d, c->diags,
                                  "give both the same tile of `%s` (name them on one `tile %s "
                                  "for` line), or take one out of the group",
                                  c->op->indices[ix].name, c->arch->levels[l].name);
                        tiles = true;
                    }
                for (int l = 1; l < L && !orders; l++) {
                    if (ir_same_order(m, a, b, l)) continue;
                    int p = a, q = b;
                    if (m->order.from[ir_order_slot(m, b, l)] > 0) p = b, q = a;
                    Diag *d = map_error(c, order_span_or_stmt(c, p, l), "E0333",
                                        "`%s` and `%s` are fused but take different orders at `%s`",
                                        c->op->stmts[p].name, c->op->stmts[q].name,
                                        c->arch->levels[l].name);
                    diag_label(d, c->diags, order_span_or_stmt(c, q, l),
                               m->order.length[ir_order_slot(m, q, l)] == 0
                                   ? "`%s` keeps the default order"
                                   : "the order of `%s`",
                               c->op->stmts[q].name);
                    diag_note(d, c->diags,
                              "a fusion group's statements share one loop nest, one order per "
                              "level");
                    diag_help(d, c->diags,
                              "name every statement of the group on one `order %s for` line",
                              c->arch->levels[l].name);
                    orders = true;
                }
            }
        }
    }
}

/* -------------------------------------------------------------- fuse */

/* Is this line an `overlap ?` (the mapping's, or a `fuse` line's own)? */
static bool overlap_hole_line(const MapItem *it) {
    return (it->kind == MI_OVERLAP || it->kind == MI_FUSE) && it->value.hole;
}

/* `overlap ?` (docs/language.md 5.5): coarse (`full`) or fine-grained
 * (`tiles`), the outer choice's bit for this line. */
static Overlap overlap_hole_value(const MapCtx *c, const MapItem *it) {
    int k = 0;
    for (int i = 0; i < c->md->item_count && c->md->items[i] != it; i++)
        k += overlap_hole_line(c->md->items[i]);
    bool tiles = c->choice && k < 32 && (c->choice->overlap >> k & 1u);
    return tiles ? OVERLAP_TILES : OVERLAP_FULL;
}

/* The Overlap a word names, or -1 after E0319. */
static int overlap_word(MapCtx *c, const Ident *word) {
    Overlap ov;
    if (overlap_of_name(word->name, &ov)) return (int)ov;
    char all[64];
    Diag *d = map_error(c, word->span, "E0319", "unknown overlap `%s`: expected %s", word->name,
                        vocab_join(all, sizeof all, overlap_words, overlap_count, " or "));
    const char *best = spell_suggest(word->name, overlap_words, overlap_count);
    if (best) diag_help(d, c->diags, "did you mean `%s`?", best);
    return -1;
}

/* `... reserve R of U` (docs/language.md 5.5): at least one unit each for
 * the collectives and the compute, under an overlap that runs them side
 * by side (`full`, `tiles`, or `?`, which chooses one of those). */
static IrReserve reserve_of_line(MapCtx *c, const MapItem *it, int overlap) {
    if (!it->reserve_given) return (IrReserve){0, 0};
    int64_t r = it->reserve_units, u = it->reserve_total;
    Diag *d = NULL;
    if (overlap == OVERLAP_NONE || overlap == OVERLAP_LOCAL) {
        d = map_error(c, it->reserve_span, "E0365",
                      "`overlap %s` runs the collectives apart from the compute: no units to "
                      "reserve for them",
                      overlap_name((Overlap)overlap));
        diag_help(d, c->diags,
                  "reserve units under `overlap tiles` or `overlap full`, or drop `reserve %lld "
                  "of %lld`",
                  (long long)r, (long long)u);
    } else if (r < 1) {
        d = map_error(c, it->reserve_span, "E0365",
                      "`reserve %lld of %lld` gives the collectives no unit", (long long)r,
                      (long long)u);
        diag_help(d, c->diags, "drop `reserve` when the collectives take no compute units");
    } else if (r >= u) {
        d = map_error(c, it->reserve_span, "E0365",
                      "`reserve %lld of %lld` leaves the compute %lld of %lld units", (long long)r,
                      (long long)u, (long long)(u - r > 0 ? u - r : 0), (long long)u);
        diag_help(d, c->diags,
                  "R of U units run the collectives and U - R the compute: R must be below U "
                  "(Flux's reduce-scatter: `reserve 28 of 132`)");
    }
    if (d) {
        c->ok = false;
        return (IrReserve){0, 0};
    }
    return (IrReserve){r, u};
}

static void apply_fuse(MapCtx *c, const MapItem *it) {
    IrFuse *f = &c->m->fuse;
    if (it->whole_hole) {
        if (f->whole_hole) {
            Diag *d = map_error(c, it->span, "E0321", "`fuse ?` is given twice");
            diag_label(d, c->diags, f->hole_span, "first here");
            return;
        }
        f->whole_hole = true;
        f->hole_span = it->span;
        c->m->hole_count++;
        return;
    }
    int g = f->group_count;
    int members = 0;
    for (int i = 0; i < it->stmts.count; i++) {
        const Ident *id = &it->stmts.items[i];
        if (!id->name) {
            c->ok = false;
            continue;
        }
        int st = lookup_stmt(c, id);
        if (st < 0) continue;
        if (f->group[st] >= 0) {
            int other = f->group[st];
            if (other == g) {
                map_error(c, id->span, "E0321", "`%s` is listed twice in this group", id->name);
                continue;
            }
            Diag *d = map_error(c, id->span, "E0315",
                                "statement `%s` is already in another fusion group", id->name);
            diag_label(d, c->diags, f->span[other], "its first group");
            diag_help(d, c->diags,
                      "a statement belongs to one group: merge the two "
                      "`fuse` lines or drop `%s` from one",
                      id->name);
            continue;
        }
        f->group[st] = g;
        members++;
    }
    if (!members) return;
    f->span[g] = it->span;
    f->written[g] = true;
    if (it->value.hole) {
        f->overlap[g] = (int)overlap_hole_value(c, it);
        c->m->overlap_chosen = true;
        f->overlap_span[g] = it->value.span;
    } else if (it->value.name) {
        int ov = overlap_word(c, &it->value);
        if (ov >= 0) {
            f->overlap[g] = ov;
            f->overlap_span[g] = it->value.span;
        }
    }
    if (it->reserve_given) {
        if (!f->reserve) f->reserve = ARENA_ARRAY(c->arena, IrReserve, c->m->op->stmt_count + 1);
        f->reserve[g] = reserve_of_line(c, it, f->overlap[g]);
    }
    if (it->level.hole) {
        f->level[g] = IR_HOLE;
        c->m->hole_count++;
    } else if (it->level.name) {
        int lv = lookup_level(c, &it->level);
        f->level[g] = lv >= 0 ? lv : IR_UNSET;
    } else {
        f->level[g] = IR_UNSET;
    }
    f->group_count++;
}

/* Does statement `st` read a tensor produced by statement `from`? */
static bool depends_on(const IrOp *op, int st, int from) {
    const IrStmt *s = &op->stmts[st];
    for (int i = 0; i < s->input_count; i++)
        if (op->tensors[s->inputs[i]].producer == from) return true;
    return false;
}

static void check_convex(MapCtx *c) {
    const IrOp *op = c->op;
    int n = op->stmt_count;
    int *via = ARENA_ARRAY(c->arena, int, n + 1);
    for (int g = 0; g < c->m->fuse.group_count; g++) {
        /* via[k] >= 0: k is outside the group and reachable from it, through
         * statement via[k]; statements are in dependence order. */
        for (int k = 0; k < n; k++) via[k] = -1;
        for (int k = 0; k < n; k++) {
            bool inside = c->m->fuse.group[k] == g;
            for (int j = 0; j < k; j++) {
                if (!depends_on(op, k, j)) continue;
                bool j_inside = c->m->fuse.group[j] == g;
                if (!inside && (j_inside || via[j] >= 0) && via[k] < 0) via[k] = j;
                if (inside && via[j] >= 0) {
                    /* Path: group -> ... -> j -> k. */
                    int path[64];
                    int len = 0;
                    for (int x = j; x >= 0 && c->m->fuse.group[x] != g && len < 62; x = via[x])
                        path[len++] = x;
                    int start = via[path[len - 1]];
                    const char *chain = op->stmts[start].name;
                    for (int p = len - 1; p >= 0; p--)
                        chain = arena_printf(c->arena, "%s -> %s", chain, op->stmts[path[p]].name);
                    chain = arena_printf(c->arena, "%s -> %s", chain, op->stmts[k].name);
                    Diag *d = map_error(c, c->m->fuse.span[g], "E0314",
                                        "fusion group is not convex: %s leaves the "
                                        "group and re-enters it",
                                        chain);
                    for (int p = len - 1; p >= 0; p--)
                        diag_label(d, c->diags, op->stmts[path[p]].span,
                                   "`%s` is outside the group", op->stmts[path[p]].name);
                    diag_help(d, c->diags,
                              "add %s to the group, or split the group "
                              "there",
                              op->stmts[path[0]].name);
                    goto next_group;
                }
            }
        }
    next_group:;
    }
}

/* --------------------------------------------------- other decisions */

static bool once(MapCtx *c, const MapItem *it, const MapItem **slot, const char *what) {
    if (*slot) {
        Diag *d = map_error(c, it->keyword_span, "E0321", "`%s` is given twice", what);
        diag_label(d, c->diags, (*slot)->keyword_span, "first here");
        return false;
    }
    *slot = it;
    return true;
}

static void apply_choice(MapCtx *c, const MapItem *it) {
    bool overlap = it->kind == MI_OVERLAP;
    if (!once(c, it, overlap ? &c->overlap_line : &c->objective_line,
              overlap ? "overlap" : "objective"))
        return;
    if (overlap && it->value.hole) {
        c->m->overlap = overlap_hole_value(c, it);
        c->m->overlap_chosen = true;
        c->m->reserve = reserve_of_line(c, it, -1);
        c->m->reserve_span = it->reserve_span;
        return;
    }
    if (!it->value.name) {
        c->ok = false;
        return;
    }
    if (overlap ? overlap_of_name(it->value.name, &c->m->overlap)
                : objective_of_name(it->value.name, &c->m->objective)) {
        if (!overlap) c->m->objective_given = true;
        if (overlap) {
            c->m->reserve = reserve_of_line(c, it, (int)c->m->overlap);
            c->m->reserve_span = it->reserve_span;
        }
        return;
    }
    const char *const *names = overlap ? overlap_words : objective_words;
    int count = overlap ? overlap_count : objective_count;
    char all[64];
    Diag *d = map_error(c, it->value.span, overlap ? "E0319" : "E0318",
                        "unknown %s `%s`: expected %s", overlap ? "overlap" : "objective",
                        it->value.name, vocab_join(all, sizeof all, names, count, " or "));
    const char *best = spell_suggest(it->value.name, names, count);
    if (best) diag_help(d, c->diags, "did you mean `%s`?", best);
}

/* A whole number written on a mapping line (`repeat 48`, `microbatches
 * 8`, `interleaved 2`), evaluated with the op's parameters in scope. */
static bool eval_count(MapCtx *c, const Expr *e, const char *what, int64_t *v) {
    if (!e || e->kind == EX_ERROR) {
        c->ok = false;
        return false;
    }
    ConstEnv env = c->s->env;
    env.diags = c->diags;
    env.where = subject(arena_printf(c->arena, "`%s`", what));
    env.expr_depth = 0;
    if (const_eval_int(&env, e, subject(what), v)) return true;
    c->ok = false;
    return false;
}

static void apply_repeat(MapCtx *c, const MapItem *it) {
    if (!once(c, it, &c->repeat_line, "repeat")) return;
    int64_t v;
    c->repeat_bad = true;
    if (!eval_count(c, it->count, "repeat", &v)) return;
    if (v < 1) {
        Diag *d = map_error(c, it->count->span, "E0320", "repeat must be at least 1, got %lld",
                            (long long)v);
        diag_note(d, c->diags,
                  "repeat counts identical instances run one after "
                  "another, such as layers");
        return;
    }
    c->m->repeat = v;
    c->repeat_bad = false;
}

static void apply_microbatches(MapCtx *c, const MapItem *it) {
    if (!once(c, it, &c->microbatches_line, "microbatches")) return;
    int64_t v;
    if (it->whole_hole) {
        v = c->choice ? c->choice->microbatches : 1;
        c->m->pipeline.microbatches_chosen = true;
    } else if (!eval_count(c, it->count, "microbatches", &v))
        return;
    if (v < 1) {
        Diag *d = map_error(c, it->count->span, "E0355",
                            "microbatches must be at least 1, got %lld", (long long)v);
        diag_note(d, c->diags,
                  "a step runs the mapped op once per micro-batch, the op's batch being one "
                  "micro-batch");
        return;
    }
    c->m->pipeline.microbatches = v;
    c->m->pipeline.microbatches_span = it->span;
    c->m->pipeline.batch_param = it->level.name;
}

/* `serve prefill|decode of B;` (docs/language.md 5.12): a serving step
 * of the B sequences op parameter B holds, on the forward op. */
/* W0356: `serve prefill` of an op whose caches grow by one position a
 * step (`K[b, new, d] = ...`, a decode step): its "time to first token"
 * would be one token's. */
static void warn_prefill_appends(MapCtx *c, const MapItem *it, ServeKind kind) {
    if (kind != SERVE_PREFILL) return;
    for (int t = 0; t < c->op->tensor_count; t++) {
        const IrTensor *v = &c->op->tensors[t];
        if (v->appends_to < 0 || v->append_dim < 0) continue;
        Diag *w = diag_warning(c->diags, it->value.span, "W0356",
                               "`serve prefill` maps op `%s`, which appends one position to cache "
                               "`%s` a step: a decode step, not a prompt",
                               c->op->name, c->op->tensors[v->appends_to].name);
        diag_note(w, c->diags,
                  "a prefill writes the prompt's positions of every cache whole (`K[b, s, d] = "
                  "...` over the prompt), and its time to first token is that pass's");
        diag_help(w, c->diags, "map this op with `serve decode of %s;`", it->level.name);
        return;
    }
}

/* `serve ... of B`: B counts the sequences, so it sizes a dimension of
 * every cache other than the one a decode step appends to (the context):
 * `of L` would count the context positions as sequences (E0361). */
static bool serve_param_counts_sequences(MapCtx *c, const MapItem *it) {
    if (!c->op_decl) return true;
    const OpDecl *od = &c->op_decl->u.op;
    for (int i = 0; i < od->tensor_count; i++) {
        const TensorDecl *td = od->tensors[i];
        if (!td->cached) continue;
        int append_dim = -1;
        for (int t = 0; t < c->op->tensor_count; t++) {
            const IrTensor *v = &c->op->tensors[t];
            if (v->appends_to >= 0 && v->append_dim >= 0 &&
                c->op->tensors[v->appends_to].name == td->name.name)
                append_dim = v->append_dim;
        }
        bool sizes = false;
        int appended_by_it = 0;
        for (int d = 0; d < td->dim_count; d++) {
            const Expr *e = td->dims[d];
            if (!e || e->kind != EX_NAME || e->u.name != it->level.name) continue;
            if (d == append_dim)
                appended_by_it = 1;
            else
                sizes = true;
        }
        if (sizes) continue;
        Diag *d = map_error(
            c, it->level.span, "E0361",
            appended_by_it
                ? "`%s` sizes the positions a step appends to cache `%s`, not its sequences: "
                  "`serve ... of B` names the parameter that counts the sequences"
                : "`%s` sizes no dimension of cache `%s`: `serve ... of B` names the "
                  "parameter that counts the sequences, which every cache holds one row of",
            it->level.name, td->name.name);
        diag_label(d, c->diags, td->span, "cache declared here");
        const char *guess = NULL;
        for (int k = 0; k < td->dim_count && !guess; k++) {
            const Expr *e = td->dims[k];
            if (k != append_dim && e && e->kind == EX_NAME) guess = e->u.name;
        }
        if (guess) diag_help(d, c->diags, "write `serve %s of %s;`", it->value.name, guess);
        c->ok = false;
        return false;
    }
    return true;
}

static void apply_serve(MapCtx *c, const MapItem *it) {
    if (!once(c, it, &c->serve_line, "serve")) return;
    IrServe *sv = &c->m->serve;
    if (!it->value.name || !it->level.name) {
        c->ok = false;
        return;
    }
    ServeKind kind;
    if (!serve_kind_of_name(it->value.name, &kind) || kind == SERVE_NONE) {
        Diag *d = map_error(c, it->value.span, "E0360",
                            "unknown serving step `%s`: expected `prefill`, `decode` or `verify`",
                            it->value.name);
        diag_note(d, c->diags,
                  "prefill runs the prompts (time to first token), decode one new token of "
                  "every sequence (time per output token), verify the tokens a draft model "
                  "proposed (time per verification pass)");
        return;
    }
    if (c->m->phase != PHASE_FORWARD) {
        Diag *d = map_error(c, it->keyword_span, "E0362",
                            "`serve` maps inference, but this mapping maps `phase %s`",
                            phase_name(c->m->phase));
        if (ir_given(c->m->phase_span)) diag_label(d, c->diags, c->m->phase_span, "phase here");
        return;
    }
    const IrOp *op = c->op;
    int p = -1;
    for (int i = 0; op && i < op->param_count; i++)
        if (op->param_names[i] == it->level.name) p = i;
    if (!op) return;
    if (p < 0) {
        Diag *d = map_error(c, it->level.span, "E0361",
                            "`%s` is not a parameter of op `%s`: `serve ... of B` names the "
                            "parameter that counts the sequences",
                            it->level.name, op->name);
        diag_label(d, c->diags, op->span, "op declared here");
        return;
    }
    if (!serve_param_counts_sequences(c, it)) return;
    warn_prefill_appends(c, it, kind);
    sv->kind = kind;
    sv->sequences_param = it->level.name;
    sv->sequences = op->param_values[p];
    sv->batch_chosen = it->whole_hole;
    if (it->limit) {
        ConstEnv env = c->s->env;
        env.diags = c->diags;
        env.where = subject_of("", "under");
        env.expr_depth = 0;
        Value v = const_eval(&env, it->limit);
        bool time = v.kind == VK_QUANTITY && v.dim.num == BU_SECOND && v.dim.den == BU_NONE;
        if (v.kind != VK_ERROR && (!time || !(v.r > 0))) {
            map_error(c, it->limit->span, "E0364",
                      "`under` takes a positive time, the most a step may take (such as 50 ms)");
            return;
        }
        if (v.kind == VK_ERROR) return;
        sv->limit_s = v.r;
    }
    if (it->count)
        sv->batch_written = sv->sequences * (c->m->pipeline.batch_param == it->level.name &&
                                                     c->m->pipeline.microbatches > 1
                                                 ? c->m->pipeline.microbatches
                                                 : 1);
    /* the step runs every micro-batch: `microbatches N of B` made the op
     * one micro-batch of B, `microbatches N` runs N of the op's batch */
    if (c->m->pipeline.microbatches > 1) sv->sequences *= c->m->pipeline.microbatches;
    sv->span = it->span;
}

/* `pipeline D [1f1b | gpipe | interleaved V];` (docs/language.md 5.9):
 * the stages' dim and their schedule.  The rest of the mapping then maps
 * one stage, so c->arch becomes the arch with D of size 1. */
static void read_pipeline(MapCtx *c, IrPipeline *pl) {
    *pl = (IrPipeline){.schedule = PIPE_1F1B,
                       .chunks = 1,
                       .microbatches = 1,
                       .span = SPAN_NONE,
                       .microbatches_span = SPAN_NONE};
    const MapItem *line = NULL;
    for (int i = 0; i < c->md->item_count; i++) {
        const MapItem *it = c->md->items[i];
        if (it->kind == MI_PIPELINE) once(c, it, &line, "pipeline");
    }
    if (!line) return;
    int dim;
    if (line->whole_hole) {
        /* `pipeline ?`: this check's choice, or no pipeline */
        if (!c->choice || c->choice->pipeline_dim < 0) return;
        dim = c->choice->pipeline_dim;
    } else {
        if (!line->level.name) {
            c->ok = false;
            return;
        }
        dim = lookup_dim(c, &line->level);
        if (dim < 0) return;
    }
    const IrClusterDim *cd = &c->arch->dims[dim];
    if (cd->size < 2) {
        map_error(c, line->level.span, "E0354",
                  "a pipeline needs at least 2 stages, but `%s` has %lld instance", cd->name,
                  (long long)cd->size);
        return;
    }
    if (line->value.name && !pipe_schedule_of_name(line->value.name, &pl->schedule)) {
        char all[64];
        vocab_join(all, sizeof all, pipe_schedule_words, pipe_schedule_count, " or ");
        Diag *d = map_error(c, line->value.span, "E0354",
                            "unknown pipeline schedule `%s`: expected %s", line->value.name, all);
        const char *best = NULL;
        for (int k = 0; k < pipe_schedule_count && !best; k++)
            if (strcasecmp(line->value.name, pipe_schedule_words[k]) == 0)
                best = pipe_schedule_words[k]; /* `GPipe`: the words are lower case */
        if (!best) best = spell_suggest(line->value.name, pipe_schedule_words, pipe_schedule_count);
        if (best) diag_help(d, c->diags, "did you mean `%s`?", best);
        return;
    }
    if (pl->schedule == PIPE_INTERLEAVED) {
        if (!line->count) {
            Diag *d = map_error(c, line->value.span, "E0354",
                                "`interleaved` needs the number of layer chunks each stage runs");
            diag_help(d, c->diags, "write `pipeline %s interleaved 2;`", cd->name);
            return;
        }
        if (!eval_count(c, line->count, "interleaved", &pl->chunks)) return;
        if (pl->chunks < 1) {
            map_error(c, line->count->span, "E0354",
                      "a stage runs at least 1 chunk of layers, got %lld", (long long)pl->chunks);
            return;
        }
        /* one chunk a stage is 1F1B, its schedule and its memory alike */
        if (pl->chunks == 1) pl->schedule = PIPE_1F1B;
    } else if (line->count) {
        map_error(c, line->count->span, "E0354", "schedule `%s` takes no number",
                  pipe_schedule_name(pl->schedule));
        return;
    }
    pl->full_arch = c->arch;
    pl->dim = dim;
    pl->dim_chosen = line->whole_hole;
    pl->stages = cd->size;
    pl->span = line->span;
    c->pipeline_dim = dim;
    c->arch = ir_stage_arch(c->arena, c->arch, dim);
}

/* What a pipeline needs of the rest of the mapping: a layer per chunk of
 * every stage, and no holes (the optimizer does not yet weigh the step's
 * terms, issue 11). */
static void check_pipeline(MapCtx *c) {
    const IrMapping *m = c->m;
    const IrPipeline *pl = &m->pipeline;
    if (pl->full_arch && !c->repeat_bad && m->repeat < pl->stages * pl->chunks) {
        const char *chunks =
            pl->chunks > 1 ? arena_printf(c->arena, " of %lld chunks", (long long)pl->chunks) : "";
        Diag *d = map_error(c, pl->span, "E0354",
                            "a pipeline of %lld stages%s needs at least %lld layers, but `repeat` "
                            "gives %lld",
                            (long long)pl->stages, chunks, (long long)(pl->stages * pl->chunks),
                            (long long)m->repeat);
        diag_help(d, c->diags,
                  "`repeat N;` counts the layers the stages share (the op is one layer)");
    }
    int64_t micro = pl->microbatches > 1 ? pl->microbatches : 1;
    if (pl->full_arch && pl->schedule == PIPE_INTERLEAVED && micro % pl->stages != 0) {
        Diag *d = map_error(c, ir_given(pl->microbatches_span) ? pl->microbatches_span : pl->span,
                            "E0354",
                            "the interleaved schedule runs the micro-batches in groups of %lld "
                            "(the stages), but the step has %lld",
                            (long long)pl->stages, (long long)micro);
        int64_t below = micro / pl->stages * pl->stages, above = below + pl->stages;
        if (below > 0)
            diag_help(d, c->diags, "use %lld or %lld micro-batches, or `1f1b`", (long long)below,
                      (long long)above);
        else
            diag_help(d, c->diags, "use %lld micro-batches, or `1f1b`", (long long)above);
    }
    /* the passes of a step run apart (1F1B puts other micro-batches
     * between a layer's forward and its backward): a group is one pass */
    for (int g = 0; ir_accumulates(m) && g < m->fuse.group_count; g++) {
        int first = -1;
        for (int st = 0; st < c->op->stmt_count; st++) {
            if (m->fuse.group[st] != g) continue;
            if (first < 0) {
                first = st;
                continue;
            }
            int a = ir_step_pass(c->op->stmts[first].role), b = ir_step_pass(c->op->stmts[st].role);
            if (a == b) continue;
            static const char *const pass_name[] = {"forward pass", "backward pass", "update"};
            Diag *d = map_error(c, m->fuse.span[g], "E0356",
                                "this group fuses `%s` (%s) with `%s` (%s), but with %s they run "
                                "apart",
                                c->op->stmts[first].name, pass_name[a], c->op->stmts[st].name,
                                pass_name[b], pl->full_arch ? "a pipeline" : "micro-batches");
            diag_help(d, c->diags,
                      "fuse the statements of each pass in groups of their own "
                      "(docs/errors/E0356.md)");
            break;
        }
    }
}

static void check_units(MapCtx *c) {
    int first_contraction = -1, first_vector = -1;
    for (int i = 0; i < c->op->stmt_count; i++) {
        if (c->op->stmts[i].cls == SC_CONTRACTION) {
            if (first_contraction < 0) first_contraction = i;
        } else if (first_vector < 0) {
            first_vector = i;
        }
    }
    Span at = c->md->arch.span;
    if (first_contraction >= 0 && !ir_matrix_unit(c->arch)) {
        const IrStmt *st = &c->op->stmts[first_contraction];
        Diag *d = map_error(c, at, "E0316",
                            "`%s` has a contraction, `%s`, but arch `%s` has no "
                            "matrix unit",
                            c->op->name, st->name, c->arch->name);
        diag_label(d, c->diags, st->span, "this statement is a contraction");
        diag_help(d, c->diags,
                  "add `compute mac matrix { throughput 1024 MAC/cycle; }` "
                  "to arch `%s`",
                  c->arch->name);
    }
    if (first_vector >= 0 && !ir_vector_unit(c->arch)) {
        const IrStmt *st = &c->op->stmts[first_vector];
        Diag *d = map_error(c, at, "E0317",
                            "`%s` has a vector statement, `%s`, but arch `%s` has "
                            "no vector unit",
                            c->op->name, st->name, c->arch->name);
        diag_label(d, c->diags, st->span, "this statement runs on a vector unit");
        diag_help(d, c->diags,
                  "add `compute simd vector { throughput 64 op/cycle; }` "
                  "to arch `%s`",
                  c->arch->name);
    }
}

/* ------------------------------------------------------------- entry */

static const Decl *lookup_decl(MapCtx *c, const Ident *id, DeclKind kind, const char *code,
                               const char *what) {
    if (!id->name) return NULL;
    GlobalEntry *g = globals_find(c->s->globals, id->name);
    if (g && g->decl->kind == kind) return g->decl;
    if (!g) {
        int n = 0;
        const char **names = globals_names(c->arena, c->s->globals, (int)kind, &n);
        if (!spell_suggest(id->name, names, n) && module_missing(c->diags)) {
            c->ok = false; /* it may be in the module that was not found */
            return NULL;
        }
    }
    Diag *d = map_error(c, id->span, code, g ? "`%s` is not an %s" : "unknown %s `%s`",
                        g ? id->name : what, g ? what : id->name);
    if (g) {
        diag_label(d, c->diags, g->decl->name.span, "`%s` is defined here", id->name);
    } else {
        int n = 0;
        const char **names = globals_names(c->arena, c->s->globals, (int)kind, &n);
        const char *best = spell_suggest(id->name, names, n);
        if (best)
            diag_help(d, c->diags, "did you mean `%s`?", best);
        else if (kind == DK_ARCH || kind == DK_OP)
            diag_help(d, c->diags,
                      "define it, or `use` the file that does (for "
                      "example `use std.%s.NAME;`)",
                      kind == DK_ARCH ? "arch" : "ops");
    }
    return NULL;
}

/* A mapping whose op or arch has errors of their own cannot be built, but
 * its names can still be checked against what the op and arch declare:
 * `skeleton_op` and `skeleton_arch` hold their names (either may be NULL:
 * not checked), and only the lookups run (E0306-E0309), so that the
 * mapping's own mistakes show in the same run as the op's or arch's. */
static void check_names_only(MapCtx *c) {
    const MappingDecl *md = c->md;
    for (int i = 0; i < md->item_count; i++) {
        const MapItem *it = md->items[i];
        bool has_level = it->kind == MI_TILE || it->kind == MI_ORDER || it->kind == MI_FUSE;
        if (c->arch && has_level && !it->level.hole && it->level.name) lookup_level(c, &it->level);
        if (c->op)
            for (int k = 0; k < it->stmts.count; k++)
                if (it->stmts.items[k].name && !it->stmts.items[k].hole)
                    lookup_stmt_as(c, &it->stmts.items[k],
                                   it->kind == MI_TILE || it->kind == MI_ORDER ? "E0330" : "E0308");
        if (it->kind == MI_SPATIAL)
            for (int a = 0; a < it->assign_count; a++) {
                const SpatialAssign *as = &it->assigns[a];
                if (c->op && !as->index.hole && as->index.name) lookup_index(c, &as->index);
                for (int k = 0; c->arch && k < as->dims.count; k++)
                    if (!as->dims.items[k].hole && as->dims.items[k].name)
                        lookup_dim(c, &as->dims.items[k]);
            }
        if (it->kind == MI_TILE && c->op && !it->whole_hole)
            for (int k = 0; k < it->tile_count; k++)
                if (!it->tiles[k].index.hole && it->tiles[k].index.name)
                    lookup_index(c, &it->tiles[k].index);
        if (it->kind == MI_ORDER && c->op && !it->whole_hole)
            for (int k = 0; k < it->order.count; k++)
                if (!it->order.items[k].hole && it->order.items[k].name)
                    lookup_index(c, &it->order.items[k]);
    }
}

/* ------------------------------------------------------------- online */

/* `online S, ...;`: S is a max, min or sum over one index whose readers in
 * its group take its running value.  Every value computed from a running
 * value must be correctable when the statistic moves on: each reader
 * follows it by a power (a sum: the reader divides by it, c^k) or a shift
 * (a max or min: the reader uses exp(x - S), exp(-k d)), and whatever is
 * computed from those readers follows them by a power, so the correction
 * is one factor per statement (its degree).  Accumulators over S's index
 * are corrected in place; other affected values live for one tile, so
 * they may not leave the group or wait for a statistic that is not
 * online (docs/language.md 5.6). */
static void check_online(MapCtx *c) {
    IrMapping *m = c->m;
    const IrOp *op = c->op;
    int S = op->stmt_count;
    for (int i = 0; i < c->md->item_count; i++) {
        const MapItem *it = c->md->items[i];
        if (it->kind != MI_ONLINE) continue;
        if (!m->online) {
            m->online = ARENA_ARRAY(c->arena, bool, S + 1);
            m->online_span = ARENA_ARRAY(c->arena, Span, S + 1);
            m->online_degree = ARENA_ARRAY(c->arena, signed char, (size_t)S *(size_t)S + 1);
        }
        if (m->fuse.whole_hole) {
            Diag *d = map_error(c, it->span, "E0343",
                                "`online` needs the fusion written out, but `fuse ?` leaves it "
                                "to the optimizer");
            diag_label(d, c->diags, m->fuse.hole_span, "`fuse ?` here");
            diag_help(d, c->diags,
                      "write the `fuse` line that puts the online statement and "
                      "its readers in one group");
            continue;
        }
        for (int k = 0; k < it->stmts.count; k++) {
            const Ident *id = &it->stmts.items[k];
            if (!id->name) continue;
            int st = lookup_stmt(c, id);
            if (st < 0) continue;
            const IrStmt *r = &op->stmts[st];
            if (m->online[st]) {
                Diag *d = map_error(c, id->span, "E0340", "`%s` is named online twice", r->name);
                diag_label(d, c->diags, m->online_span[st], "first here");
                continue;
            }
            bool kind_ok =
                r->reduce_op == RO_SUM || r->reduce_op == RO_MAX || r->reduce_op == RO_MIN;
            if (!ir_stmt_online_kind(r)) {
                Diag *d =
                    map_error(c, id->span, "E0340", "`%s` cannot be online: it is %s", r->name,
                              !r->reduced_count ? "not a reduction"
                              : !kind_ok        ? "a mean (write it as a sum and a scale)"
                                                : "a reduction over more than one index");
                diag_label(d, c->diags, r->span, "`%s` is defined here", r->name);
                diag_note(d, c->diags,
                          "an online statement is a sum, max or min over one index, "
                          "whose readers use its running value");
                continue;
            }
            m->online[st] = true;
            m->online_span[st] = id->span;
        }
    }
    if (!m->online || !c->ok) return;
    int *deg = ARENA_ARRAY(c->arena, int, S + 1);
    for (int r = 0; r < S; r++) {
        if (!m->online[r]) continue;
        const IrStmt *rs = &op->stmts[r];
        int n = rs->reduced[0];
        int g = m->fuse.group[r];
        bool read_in_group = false;
        for (int j = r + 1; j < S; j++)
            for (int q = 0; q < op->stmts[j].input_count && m->fuse.group[j] == g; q++)
                read_in_group |= op->stmts[j].inputs[q] == rs->out_tensor;
        if (!read_in_group) {
            Diag *d = diag_warning(c->diags, m->online_span[r], "W0340",
                                   "`%s` is online but nothing in its group reads it: it runs "
                                   "as any reduction",
                                   rs->name);
            diag_help(d, c->diags, "fuse its readers with it, or drop it from the `online` line");
            continue;
        }
        for (int j = 0; j < S; j++) deg[j] = 0;
        for (int j = r + 1; j < S; j++) {
            const IrStmt *js = &op->stmts[j];
            bool in_group = m->fuse.group[j] == g;
            bool affected = false;
            int d = 0;
            for (int q = 0; q < js->input_count; q++) {
                int p = op->tensors[js->inputs[q]].producer;
                if (p < 0 || (p != r && deg[p] == 0)) continue;
                if (!in_group) {
                    if (p == r || ir_stmt_reduces(&op->stmts[p], n)) continue;
                    Diag *d2 = map_error(c, m->online_span[r], "E0342",
                                         "`%s` reads `%s` in another group, but `%s` is "
                                         "computed from the running value of online `%s`",
                                         js->name, op->stmts[p].name, op->stmts[p].name, rs->name);
                    diag_label(d2, c->diags, js->span, "`%s` is here", js->name);
                    diag_help(d2, c->diags, "fuse `%s` with `%s`, or drop `online %s`", js->name,
                              rs->name, rs->name);
                    break;
                }
                affected = true;
                int k;
                if (p == r)
                    k = rs->reduce_op == RO_SUM ? js->power[q] : js->shift[q];
                else
                    k = js->power[q] == IR_NOT_SCALING ? IR_NOT_SCALING : js->power[q] * deg[p];
                /* exponents beyond +-100 do not fit the IR's record (no real
                 * op comes near): refused like a reader no factor follows */
                if (k == IR_NOT_SCALING || d + k < -100 || d + k > 100) {
                    Diag *d2 = map_error(
                        c, m->online_span[r], "E0341",
                        "`%s` uses %s`%s` in a way no correction factor can follow, so `%s` "
                        "cannot be online",
                        js->name, p == r ? "" : "a value computed from the running ",
                        p == r ? rs->name : op->stmts[p].name, rs->name);
                    diag_label(d2, c->diags, js->span, "`%s` is here", js->name);
                    diag_note(d2, c->diags,
                              rs->reduce_op == RO_SUM
                                  ? "the readers of an online sum divide by it (`x / s`, "
                                    "`x * recip(s)`), and what they compute scales with them"
                                  : "the readers of an online max or min use it as "
                                    "`exp(x - m)`, and what they compute scales with them");
                    d = 0;
                    break;
                }
                d += k;
            }
            if (!in_group || !affected) continue;
            deg[j] = d;
            m->online_degree[j * S + r] = (signed char)d;
            /* a value corrected only while it is live: an accumulator over
             * n is final when the loop closes, anything else lasts a tile */
            bool accumulates = ir_stmt_reduces(js, n);
            if (!accumulates && d != 0 && op->tensors[js->out_tensor].kind == TK_OUTPUT) {
                Diag *d2 = map_error(c, m->online_span[r], "E0342",
                                     "`%s` is an output computed from the running value of "
                                     "online `%s`, before `%s` is complete",
                                     js->name, rs->name, rs->name);
                diag_label(d2, c->diags, js->span, "`%s` is here", js->name);
                diag_help(d2, c->diags, "drop `online %s`, or make `%s` a `var`", rs->name,
                          js->name);
            }
            /* a reader that waits for the loop reads the accumulators over
             * n final, their corrections done (FlashAttention-2 divides
             * by the row sum once, after P V); what it may not do besides
             * is read a value that lasts one tile: the running value
             * itself, or something computed from it that does not
             * accumulate over n, which moved on by then */
            bool reads_tile_value = false;
            for (int q = 0; q < js->input_count; q++) {
                int p = op->tensors[js->inputs[q]].producer;
                if (p >= 0 && m->fuse.group[p] == g &&
                    (p == r || (deg[p] != 0 && !ir_stmt_reduces(&op->stmts[p], n))))
                    reads_tile_value = true;
            }
            for (int q = 0; q < js->input_count && reads_tile_value; q++) {
                int p = op->tensors[js->inputs[q]].producer;
                if (p < 0 || p == r || m->fuse.group[p] != g || m->online[p] ||
                    !ir_stmt_reduces(&op->stmts[p], n))
                    continue;
                Diag *d2 = map_error(c, m->online_span[r], "E0342",
                                     "`%s` waits for `%s`, a reduction over `%s` that is not "
                                     "online, and so would read values computed from the "
                                     "running `%s` after it moved on",
                                     js->name, op->stmts[p].name, op->indices[n].name, rs->name);
                diag_label(d2, c->diags, js->span, "`%s` is here", js->name);
                diag_help(d2, c->diags, "add `%s` to the `online` line", op->stmts[p].name);
            }
        }
    }
}

/* `phase forward|backward;`: read before anything else, since it decides
 * which op the rest of the mapping names.  Reports a repeated or unknown
 * phase (the parser refuses `phase ?`); *line is the line that gave it
 * (NULL for the default). */
static Phase read_phase(MapCtx *c, const MappingDecl *md, const MapItem **line) {
    Phase phase = PHASE_FORWARD;
    *line = NULL;
    for (int i = 0; i < md->item_count; i++) {
        const MapItem *it = md->items[i];
        if (it->kind != MI_PHASE) continue;
        if (*line) {
            Diag *d = map_error(c, it->keyword_span, "E0321", "`phase` is given twice");
            diag_label(d, c->diags, (*line)->keyword_span, "first here");
            continue;
        }
        *line = it;
        if (it->value.name && !phase_of_name(it->value.name, &phase)) {
            char all[64];
            vocab_join(all, sizeof all, phase_words, phase_count, " or ");
            Diag *d = map_error(c, it->value.span, "E0327", "unknown phase `%s`: expected %s",
                                it->value.name, all);
            const char *best = spell_suggest(it->value.name, phase_words, phase_count);
            if (best) diag_help(d, c->diags, "did you mean `%s`?", best);
        } else if (!it->value.name)
            c->ok = false;
    }
    return phase;
}

/* `recompute S, ...;`, `recompute full;`, `recompute checkpoint;` or
 * `recompute none;`: which forward statements the backward pass recomputes
 * instead of reading them kept (docs/language.md 5.8).  A mark per
 * statement of the forward op, or NULL for none; *every is set for
 * `checkpoint` (each one again, whether a gradient reads it or not). */
static const bool *read_recompute(MapCtx *c, const MappingDecl *md, const Decl *op_decl,
                                  Phase phase, const MapItem **line, bool *every) {
    const OpDecl *od = &op_decl->u.op;
    bool *marks = NULL;
    *line = NULL;
    *every = false;
    for (int i = 0; i < md->item_count; i++) {
        const MapItem *it = md->items[i];
        if (it->kind != MI_RECOMPUTE) continue;
        if (*line) {
            Diag *d = map_error(c, it->keyword_span, "E0321", "`recompute` is given twice");
            diag_label(d, c->diags, (*line)->keyword_span, "first here");
            continue;
        }
        *line = it;
        if (phase == PHASE_FORWARD) {
            Diag *d = map_error(c, it->keyword_span, "E0353",
                                "`recompute` needs a backward pass, but this mapping maps the "
                                "forward pass");
            diag_help(d, c->diags, "add `phase train;` or `phase backward;`");
            continue;
        }
        marks = ARENA_ARRAY(c->arena, bool, od->stmt_count + 1);
        if (it->whole_hole && c->choice && c->choice->recompute != 1) {
            /* `recompute ?` filled with none or full */
            for (int st = 0; st < od->stmt_count; st++) marks[st] = c->choice->recompute == 2;
            continue;
        }
        for (int k = 0; k < it->stmts.count; k++) {
            const Ident *id = &it->stmts.items[k];
            if (!id->name) continue;
            int found = -1;
            for (int st = 0; st < od->stmt_count; st++)
                if (od->stmts[st]->target.name == id->name) found = st;
            bool all = strcmp(id->name, "full") == 0, whole = strcmp(id->name, "checkpoint") == 0;
            bool word = all || whole || strcmp(id->name, "none") == 0;
            if (found < 0 && word && it->stmts.count == 1) {
                for (int st = 0; st < od->stmt_count; st++) marks[st] = all || whole;
                *every = whole;
                continue;
            }
            if (found >= 0) {
                marks[found] = true;
                continue;
            }
            const char **names = ARENA_ARRAY(c->arena, const char *, od->stmt_count + 1);
            for (int st = 0; st < od->stmt_count; st++) names[st] = od->stmts[st]->target.name;
            Diag *d = map_error(c, id->span, "E0353", "op `%s` has no statement `%s` to recompute",
                                op_decl->name.name, id->name);
            const char *best = spell_suggest(id->name, names, od->stmt_count);
            if (best)
                diag_help(d, c->diags, "did you mean `%s`?", best);
            else
                diag_note(d, c->diags,
                          "`recompute` names statements of the forward op, or says `full` (all "
                          "that the gradients read), `checkpoint` (the whole forward pass "
                          "again) or `none`");
        }
    }
    return marks;
}

/* A statement named on the `recompute` line that the backward pass does
 * not copy, because no gradient statement reads it (W0353). */
static void warn_not_recomputed(MapCtx *c, const MapItem *line, const Decl *op_decl,
                                const Decl *derived) {
    const OpDecl *od = &op_decl->u.op;
    const bool *copied = derived->u.op.recomputed;
    for (int k = 0; k < line->stmts.count; k++) {
        const Ident *id = &line->stmts.items[k];
        for (int st = 0; id->name && st < od->stmt_count; st++) {
            if (od->stmts[st]->target.name != id->name || (copied && copied[st])) continue;
            Diag *d =
                diag_warning(c->diags, id->span, "W0353",
                             "`%s` is not recomputed: no gradient statement reads it", id->name);
            diag_help(d, c->diags, "drop it from the `recompute` line");
        }
    }
}

/* `microbatches N of B;`: the op parameter B is the whole batch of a
 * step; the mapped op is one micro-batch of it, B / N (docs/language.md
 * 5.9).  False, with the reason, when the line cannot say so. */
static bool split_batch(MapCtx *c, const Decl *op_decl, int64_t *values) {
    const MapItem *line = NULL;
    for (int i = 0; i < c->md->item_count; i++)
        if (c->md->items[i]->kind == MI_MICROBATCHES && !line) line = c->md->items[i];
    if (!line) return true;
    if (!line->value.name) {
        if (!line->whole_hole) return true; /* `microbatches N;`: the op is a micro-batch */
        Diag *d = map_error(c, line->count->span, "E0355",
                            "`microbatches ?` needs the batch it splits: which op parameter "
                            "holds the whole batch");
        diag_help(d, c->diags, "write `microbatches ? of B;` with B the batch parameter");
        return false;
    }
    if (strcmp(line->value.name, "of") != 0) {
        map_error(c, line->value.span, "E0355",
                  "expected `of` and the batch parameter after the count, found `%s`",
                  line->value.name);
        return false;
    }
    const OpDecl *od = &op_decl->u.op;
    int k = -1;
    for (int q = 0; q < od->param_count; q++)
        if (od->params[q].name.name == line->level.name) k = q;
    if (k < 0) {
        Diag *d = map_error(c, line->level.span, "E0355", "op `%s` has no parameter `%s`",
                            op_decl->name.name, line->level.name ? line->level.name : "?");
        diag_note(d, c->diags,
                  "`microbatches N of B` names the op parameter that holds the whole batch");
        return false;
    }
    /* a serving step's micro-batches are groups of its sequences: cutting
     * any other parameter would run the same sequences N times */
    for (int i = 0; i < c->md->item_count; i++) {
        const MapItem *serve = c->md->items[i];
        if (serve->kind != MI_SERVE || !serve->level.name || serve->level.name == line->level.name)
            continue;
        Diag *d = map_error(c, line->level.span, "E0355",
                            "under `serve`, micro-batches cut the sequences `%s`, not `%s`",
                            serve->level.name, line->level.name);
        diag_label(d, c->diags, serve->span, "the sequences counted here");
        diag_help(d, c->diags, "write `microbatches N of %s;`", serve->level.name);
        return false;
    }
    int64_t n = 1;
    if (line->whole_hole)
        n = c->choice ? c->choice->microbatches : 1;
    else if (line->count->kind == EX_INT)
        n = line->count->u.int_value;
    if (n < 1) return true; /* apply_microbatches says so */
    if (values[k] % n != 0) {
        Diag *d = map_error(c, line->count->span, "E0355",
                            "%s = %lld does not split into %lld micro-batches", line->level.name,
                            (long long)values[k], (long long)n);
        help_divisors(c, d, values[k], n, "micro-batch counts");
        return false;
    }
    values[k] /= n;
    return true;
}

/* W0355: `microbatches N of P` where P sizes an index some statement
 * reduces (the sequence a softmax or an attention sums over): each
 * micro-batch then reduces over 1/N of it, a different computation from
 * the op's, not the same one in pieces. */
static void warn_cut_reduction(MapCtx *c, const Decl *op_decl) {
    const MapItem *line = NULL;
    for (int i = 0; i < c->md->item_count; i++)
        if (c->md->items[i]->kind == MI_MICROBATCHES && !line) line = c->md->items[i];
    if (!line || !line->level.name || !line->value.name || strcmp(line->value.name, "of") != 0)
        return;
    const OpDecl *od = &op_decl->u.op;
    const IrOp *op = c->op;
    for (int i = 0; i < od->tensor_count; i++) {
        const TensorDecl *td = od->tensors[i];
        int t = -1;
        for (int q = 0; q < op->tensor_count && t < 0; q++)
            if (op->tensors[q].name == td->name.name) t = q;
        if (t < 0) continue;
        for (int d = 0; d < td->dim_count && d < op->tensors[t].rank; d++) {
            const Expr *e = td->dims[d];
            if (!e || e->kind != EX_NAME || e->u.name != line->level.name) continue;
            /* every index the dimension is read as (`X[b, n, d]` reads
             * X's S rows as n where another statement reads them as m) */
            for (int st = 0; st < op->stmt_count; st++)
                for (int r = 0; r < op->stmts[st].reduced_count; r++) {
                    int ix = op->stmts[st].reduced[r];
                    bool read_as = op->tensors[t].index[d] == ix;
                    for (int u = 0; u < op->stmt_count && !read_as; u++)
                        for (int q = 0; q < op->stmts[u].input_count; q++)
                            if (op->stmts[u].inputs[q] == t && op->stmts[u].access[q][d] == ix)
                                read_as = true;
                    if (!read_as) continue;
                    Diag *w = diag_warning(
                        c->diags, line->level.span, "W0355",
                        "`microbatches ... of %s` cuts `%s`, which sizes index `%s` that "
                        "statement `%s` reduces: each micro-batch reduces over a part of it",
                        line->level.name, line->level.name, op->indices[ix].name,
                        op->stmts[st].name);
                    diag_note(w, c->diags,
                              "each micro-batch reduces over a share of `%s`: the step computes "
                              "something else than the op, with less work",
                              op->indices[ix].name);
                    diag_help(w, c->diags,
                              "cut the parameter that counts the sequences (the batch)");
                    return;
                }
        }
    }
}

/* `serve KIND of B = N;` sets the op parameter B to N, whatever the header
 * or the op's default says; `= ?` to the outer choice's value (the header's
 * or the default's being the largest tried).  False after an error. */
static bool serve_batch(MapCtx *c, const Decl *op_decl, int64_t *values) {
    const MapItem *line = NULL;
    for (int i = 0; i < c->md->item_count; i++)
        if (c->md->items[i]->kind == MI_SERVE && !line) line = c->md->items[i];
    if (!line || !line->count || !line->level.name) return true;
    const OpDecl *od = &op_decl->u.op;
    int k = -1;
    for (int q = 0; q < od->param_count; q++)
        if (od->params[q].name.name == line->level.name) k = q;
    if (k < 0) return true; /* apply_serve reports it */
    int64_t n =
        line->whole_hole ? (c->choice ? c->choice->batch : values[k]) : line->count->u.int_value;
    if (n < 1) {
        map_error(c, line->count->span, "E0364",
                  "a serving step runs at least 1 sequence, got %lld", (long long)n);
        return false;
    }
    values[k] = n;
    return true;
}

static IrMapping *check_mapping_with(Sema *s, const Decl *mapping_decl, const OuterChoice *choice) {
    MapCtx *c = ARENA_NEW(s->arena, MapCtx);
    c->s = s;
    c->arena = s->arena;
    c->diags = s->diags;
    c->decl = mapping_decl;
    c->md = &mapping_decl->u.mapping;
    c->ok = true;
    c->pipeline_dim = -1;
    c->choice = choice;
    const MappingDecl *md = c->md;
    const Decl *op_decl = lookup_decl(c, &md->op, DK_OP, "E0301", "op");
    const Decl *arch_decl = lookup_decl(c, &md->arch, DK_ARCH, "E0302", "arch");
    if (!op_decl || !arch_decl) return NULL;
    c->op_decl = op_decl;
    int64_t *values = ARENA_ARRAY(s->arena, int64_t, op_decl->u.op.param_count + 1);
    bool complete = false;
    bool bound =
        op_bind_params(s, op_decl, md->bindings, md->binding_count, md->op.span, values, &complete);
    if (bound) bound = serve_batch(c, op_decl, values);
    if (bound) bound = split_batch(c, op_decl, values);
    /* an unknown or repeated parameter leaves every value known: check the
     * rest of the mapping so that its other mistakes show in this run */
    c->op = bound || complete ? sema_op_for(s, op_decl, values, md->op.span) : NULL;
    if (bound && c->op) warn_cut_reduction(c, op_decl);
    const MapItem *phase_line = NULL, *recompute_line = NULL;
    Phase phase = read_phase(c, md, &phase_line);
    bool every = false;
    if (phase == PHASE_FORWARD) /* reports a misplaced line */
        read_recompute(c, md, op_decl, phase, &recompute_line, &every);
    for (int i = 0; c->op && phase != PHASE_FORWARD && i < op_decl->u.op.tensor_count; i++) {
        const TensorDecl *td = op_decl->u.op.tensors[i];
        if (!td->cached) continue;
        Diag *d = map_error(c, phase_line->value.span, "E0362",
                            "`phase %s` derives a backward pass, but op `%s` keeps cache `%s`",
                            phase_name(phase), op_decl->name.name, td->name.name);
        diag_label(d, c->diags, td->span, "cache declared here");
        diag_note(d, c->diags,
                  "a cache is inference state: train the op written without it, and serve this "
                  "one");
        return NULL;
    }
    if (c->op && phase != PHASE_FORWARD) {
        /* the rest of the mapping names the backward op's statements */
        const bool *recompute = read_recompute(c, md, op_decl, phase, &recompute_line, &every);
        const Decl *backward = derive_op(s, op_decl, phase, recompute, every, phase_line->span);
        if (backward && recompute_line &&
            !(recompute_line->whole_hole && c->choice && c->choice->recompute != 1))
            warn_not_recomputed(c, recompute_line, op_decl, backward);
        c->op = backward ? sema_op_for(s, backward, values, md->op.span) : NULL;
        if (!c->op) return NULL;
    }
    c->arch =
        sema_arch_bound(s, arch_decl, md->arch_bindings, md->arch_binding_count, md->arch.span);
    if (!c->op || !c->arch) {
        /* reported at the op, its parameters or the arch: the mapping's
         * own names are still checked against what they declare, unless
         * the parser dropped part of them */
        if (!c->op)
            c->op = span_has_syntax_errors(c->diags, op_decl->span) ? NULL : op_names(s, op_decl);
        if (!c->arch)
            c->arch = span_has_syntax_errors(c->diags, arch_decl->span)
                          ? NULL
                          : sema_arch_names(s, arch_decl);
        check_names_only(c);
        return NULL;
    }
    if (!bound) c->ok = false;
    IrPipeline pipeline;
    read_pipeline(c, &pipeline);

    IrMapping *m = ARENA_NEW(s->arena, IrMapping);
    c->m = m;
    m->name = mapping_decl->name.name;
    m->span = mapping_decl->span;
    m->name_span = mapping_decl->name.span;
    m->op = c->op;
    m->arch = c->arch;
    m->overlap = OVERLAP_FULL;
    m->objective = OBJ_LATENCY;
    m->repeat = 1;
    m->pipeline = pipeline;
    m->overlap_span = m->objective_span = m->repeat_span = SPAN_NONE;
    m->phase = phase;
    m->phase_span = phase_line ? phase_line->span : SPAN_NONE;
    m->recompute_span = SPAN_NONE;
    if (recompute_line && phase != PHASE_FORWARD) {
        const char *text = "";
        m->recompute_chosen = recompute_line->whole_hole;
        if (recompute_line->whole_hole && c->choice && c->choice->recompute != 1)
            text = c->choice->recompute == 2 ? "full" : "none";
        else
            for (int k = 0; k < recompute_line->stmts.count; k++)
                text = arena_printf(s->arena, "%s%s%s", text, k ? ", " : "",
                                    recompute_line->stmts.items[k].name
                                        ? recompute_line->stmts.items[k].name
                                        : "?");
        m->recompute = text;
        m->recompute_span = recompute_line->span;
    }
    int sc = c->op->stmt_count, ic = c->op->index_count;
    int dc = c->arch->dim_count, lc = c->arch->level_count;
    m->spatial.split = ARENA_ARRAY(s->arena, int, sc *dc + 1);
    m->spatial.split_span = ARENA_ARRAY(s->arena, Span, sc * dc + 1);
    m->spatial.split_only = ARENA_ARRAY(s->arena, int, sc *dc + 1);
    for (int i = 0; i < sc * dc; i++) {
        m->spatial.split[i] = IR_UNSET;
        m->spatial.split_span[i] = SPAN_NONE;
    }
    m->spatial.hole_span = SPAN_NONE;
    int ts = sc * lc * ic, os = sc * lc;
    m->tile.size = ARENA_ARRAY(s->arena, int64_t, ts + 1);
    m->tile.span = ARENA_ARRAY(s->arena, Span, ts + 1);
    m->tile.from = ARENA_ARRAY(s->arena, int, ts + 1);
    m->tile.index_hole = ARENA_ARRAY(s->arena, bool, lc + 1);
    int tile_entries = 0;
    for (int i = 0; i < md->item_count; i++)
        if (md->items[i]->kind == MI_TILE) tile_entries += md->items[i]->tile_count;
    m->tile.index_hole_span = ARENA_ARRAY(s->arena, Span, tile_entries + 1);
    for (int i = 0; i < ts; i++) {
        m->tile.size[i] = IR_UNSET;
        m->tile.span[i] = SPAN_NONE;
    }
    m->order.perm = ARENA_ARRAY(s->arena, int, os *ic + 1);
    m->order.length = ARENA_ARRAY(s->arena, int, os + 1);
    m->order.span = ARENA_ARRAY(s->arena, Span, os + 1);
    m->order.from = ARENA_ARRAY(s->arena, int, os + 1);
    for (int i = 0; i < os; i++) m->order.span[i] = SPAN_NONE;
    m->fuse.group = ARENA_ARRAY(s->arena, int, sc + 1);
    m->fuse.level = ARENA_ARRAY(s->arena, int, sc + 1);
    m->fuse.span = ARENA_ARRAY(s->arena, Span, sc + 1);
    m->fuse.written = ARENA_ARRAY(s->arena, bool, sc + 1);
    m->fuse.overlap = ARENA_ARRAY(s->arena, int, sc + 1);
    m->fuse.overlap_span = ARENA_ARRAY(s->arena, Span, sc + 1);
    for (int i = 0; i < sc; i++) m->fuse.group[i] = -1;
    for (int i = 0; i < sc; i++) {
        m->fuse.overlap[i] = -1;
        m->fuse.overlap_span[i] = SPAN_NONE;
    }
    m->fuse.hole_span = SPAN_NONE;
    c->stmt_overridden = ARENA_ARRAY(s->arena, bool, sc + 1);
    c->tile_line = ARENA_ARRAY(s->arena, const MapItem *, lc + 1);
    c->order_line = ARENA_ARRAY(s->arena, const MapItem *, lc + 1);
    c->tile_for = ARENA_ARRAY(s->arena, const MapItem *, md->item_count + 1);
    c->order_for = ARENA_ARRAY(s->arena, const MapItem *, md->item_count + 1);
    c->tile_for_of = ARENA_ARRAY(s->arena, const MapItem *, os + 1);
    c->spatial_for_of = ARENA_ARRAY(s->arena, const MapItem *, sc + 1);
    c->split_assign_of = ARENA_ARRAY(s->arena, const SpatialAssign *, ic + 1);
    c->order_for_of = ARENA_ARRAY(s->arena, const MapItem *, os + 1);

    const MapItem *spatial_hole = NULL;
    /* Global spatial lines first, then `spatial for` lines override. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < md->item_count; i++) {
            const MapItem *it = md->items[i];
            if (it->kind != MI_SPATIAL) continue;
            if (it->whole_hole) {
                if (pass == 1) continue;
                if (spatial_hole) {
                    Diag *d = map_error(c, it->span, "E0321", "`spatial ?` is given twice");
                    diag_label(d, c->diags, spatial_hole->span, "first here");
                    continue;
                }
                spatial_hole = it;
                m->spatial.whole_hole = true;
                m->spatial.hole_span = it->span;
                m->hole_count++;
                continue;
            }
            apply_spatial(c, it, pass == 1);
        }
    for (int i = 0; i < md->item_count; i++) {
        const MapItem *it = md->items[i];
        switch (it->kind) {
        case MI_ERROR: c->ok = false; break;
        case MI_SPATIAL: break;
        case MI_TILE:
            if (it->stmts.count == 0) apply_tile(c, it, 0);
            break;
        case MI_ORDER:
            if (it->stmts.count == 0) apply_order(c, it, 0);
            break;
        case MI_FUSE: apply_fuse(c, it); break;
        case MI_OVERLAP:
        case MI_OBJECTIVE: apply_choice(c, it); break;
        case MI_REPEAT: apply_repeat(c, it); break;
        case MI_MICROBATCHES: apply_microbatches(c, it); break;
        case MI_SERVE: break; /* after the microbatches line, below */
        case MI_ONLINE:
        case MI_PHASE:
        case MI_PIPELINE:
        case MI_RECOMPUTE: break;
        }
    }
    for (int i = 0; i < md->item_count; i++)
        if (md->items[i]->kind == MI_SERVE) apply_serve(c, md->items[i]);
    /* `tile L for ...` and `order L for ...` lines override the
     * mapping-wide ones, whatever their place in the mapping */
    for (int i = 0; i < md->item_count; i++) {
        const MapItem *it = md->items[i];
        if (it->stmts.count == 0) continue;
        if (it->kind == MI_TILE) {
            c->tile_for[m->tile.line_count++] = it;
            apply_tile(c, it, m->tile.line_count);
        } else if (it->kind == MI_ORDER) {
            c->order_for[m->order.line_count++] = it;
            apply_order(c, it, m->order.line_count);
        }
    }
    if (spatial_hole)
        for (int i = 0; i < md->item_count; i++) {
            const MapItem *it = md->items[i];
            if (it->kind == MI_SPATIAL && !it->whole_hole) {
                Diag *d = map_error(c, it->span, "E0321",
                                    "`spatial ?` leaves the whole split to the "
                                    "optimizer, but this line also sets it");
                diag_label(d, c->diags, spatial_hole->span, "`spatial ?` here");
                diag_help(d, c->diags,
                          "drop one of them, or write holes for the "
                          "parts to choose: `n -> ?`");
                break;
            }
        }
    if (!m->spatial.whole_hole) {
        check_joint_deals(c);
        check_split_parts(c);
        /* after an error (a pipeline line that failed leaves its dim a
         * replication) the warnings would be about a mapping not meant */
        if (c->ok) check_replication(c);
        if (c->ok) warn_dropped_splits(c);
    }
    record_split_only(c);
    if (c->overlap_line) m->overlap_span = c->overlap_line->span;
    if (c->objective_line) m->objective_span = c->objective_line->span;
    if (c->repeat_line) m->repeat_span = c->repeat_line->span;
    check_tiles(c);
    check_orders(c);
    check_group_tiles(c);
    check_convex(c);
    check_units(c);
    /* Statements in no group: a group of their own, or holes under `fuse ?`. */
    for (int st = 0; st < sc; st++) {
        if (m->fuse.group[st] >= 0) continue;
        if (m->fuse.whole_hole) {
            m->fuse.group[st] = IR_HOLE;
            continue;
        }
        int g = m->fuse.group_count++;
        m->fuse.group[st] = g;
        m->fuse.level[g] = IR_UNSET;
        m->fuse.span[g] = c->op->stmts[st].span;
    }
    check_online(c);
    check_pipeline(c);
    return c->ok ? m : NULL;
}

/* ------------------------------------------------------ outer holes */

/* The most combinations of outer-hole values a mapping may stand for. */
#define OUTER_CHOICE_LIMIT 4096

static const MapItem *outer_hole(const MappingDecl *md, MapItemKind kind) {
    for (int i = 0; i < md->item_count; i++)
        if (md->items[i]->kind == kind && md->items[i]->whole_hole) return md->items[i];
    return NULL;
}

/* Whether two checks failed with the same errors (code, place, message):
 * then the outer holes' values had nothing to do with it. */
static bool same_errors(const DiagSink *a, const DiagSink *b) {
    if (a->count != b->count) return false;
    for (int i = 0; i < a->count; i++) {
        const Diag *x = a->items[i], *y = b->items[i];
        if (x->severity != y->severity || strcmp(x->code, y->code) != 0 ||
            x->span.file != y->span.file || x->span.start != y->span.start ||
            strcmp(x->message, y->message) != 0)
            return false;
    }
    return true;
}

/* The text of a choice, as the mapping would write it. */
static const char *choice_text(Arena *a, const IrMapping *m, bool pipeline_hole, bool micro_hole,
                               bool recompute_hole, bool batch_hole) {
    const char *t = "";
    if (batch_hole)
        t = arena_printf(a, "serve %s of %s = %lld; ", serve_kind_name(m->serve.kind),
                         m->serve.sequences_param ? m->serve.sequences_param : "?",
                         (long long)m->serve.sequences);
    const IrPipeline *pl = &m->pipeline;
    if (pipeline_hole)
        t = pl->full_arch ? arena_printf(a, "pipeline %s; ", pl->full_arch->dims[pl->dim].name)
                          : "no pipeline; ";
    if (micro_hole)
        t = arena_printf(a, "%smicrobatches %lld of %s; ", t,
                         (long long)(pl->microbatches > 1 ? pl->microbatches : 1),
                         pl->batch_param ? pl->batch_param : "?");
    if (recompute_hole) t = arena_printf(a, "%srecompute %s; ", t, m->recompute);
    size_t n = strlen(t);
    return n ? arena_printf(a, "%.*s", (int)(n - 1), t) : t;
}

/* A mapping with outer holes (`pipeline ?`, `microbatches ? of B`,
 * `recompute ?`; docs/language.md 5.10) stands for one mapping per
 * combination of their values: each is checked as if written, and the
 * ones that check are the optimizer's choices.  When none does, the
 * first combination's diagnostics are reported. */
IrMapping *check_mapping(Sema *s, const Decl *mapping_decl) {
    const MappingDecl *md = &mapping_decl->u.mapping;
    const MapItem *pipe = outer_hole(md, MI_PIPELINE);
    const MapItem *micro = outer_hole(md, MI_MICROBATCHES);
    const MapItem *recomp = outer_hole(md, MI_RECOMPUTE);
    const MapItem *serve = outer_hole(md, MI_SERVE);
    const MapItem *overlap_first = NULL;
    int overlap_holes = 0;
    for (int i = 0; i < md->item_count; i++)
        if (overlap_hole_line(md->items[i])) {
            if (!overlap_first) overlap_first = md->items[i];
            overlap_holes++;
        }
    /* a mapping the parser dropped part of is checked once, as written: its
     * syntax error is the message, not that no combination checks */
    if ((!pipe && !micro && !recomp && !serve && !overlap_first) ||
        span_has_syntax_errors(s->diags, mapping_decl->span))
        return check_mapping_with(s, mapping_decl, NULL);
    /* the candidates need the arch's dims and the batch's value: looked up
     * quietly (the check of a choice reports what is wrong) */
    DiagSink quiet;
    diags_init(&quiet, s->arena);
    MapCtx look = {.s = s, .arena = s->arena, .diags = &quiet, .decl = mapping_decl, .md = md};
    const Decl *op_decl = lookup_decl(&look, &md->op, DK_OP, "E0301", "op");
    const Decl *arch_decl = lookup_decl(&look, &md->arch, DK_ARCH, "E0302", "arch");
    IrArch *arch = arch_decl ? sema_arch_bound(s, arch_decl, md->arch_bindings,
                                               md->arch_binding_count, md->arch.span)
                             : NULL;
    int dims = 1;
    int *dim_of = ARENA_ARRAY(s->arena, int, (arch ? arch->dim_count : 0) + 1);
    dim_of[0] = -1;
    for (int d = 0; pipe && arch && d < arch->dim_count; d++)
        if (arch->dims[d].size >= 2) dim_of[dims++] = d;
    if (!pipe) dims = 1;
    int64_t batch = 1, most_sequences = 1;
    if ((micro || serve) && op_decl) {
        int64_t *values = ARENA_ARRAY(s->arena, int64_t, op_decl->u.op.param_count + 1);
        bool complete = false;
        DiagSink *real = s->diags;
        s->diags = &quiet;
        bool bound = op_bind_params(s, op_decl, md->bindings, md->binding_count, md->op.span,
                                    values, &complete);
        s->diags = real;
        for (int q = 0; bound && q < op_decl->u.op.param_count; q++) {
            Name name = op_decl->u.op.params[q].name.name;
            if (micro && name == micro->level.name) batch = values[q];
            if (serve && name == serve->level.name) most_sequences = values[q];
        }
    }
    /* `serve ... of B = ?`: the powers of two below B's value, and B */
    int64_t batches[64];
    int batch_n = 0;
    for (int64_t b = 1; serve && b < most_sequences && batch_n < 62; b *= 2) batches[batch_n++] = b;
    batches[batch_n++] = most_sequences; /* (1 without `serve ... = ?`) */
    /* every micro-batch count that divides the batch: trial division up to
     * a bound, so an absurd batch is refused rather than factored slowly */
    int64_t *counts = ARENA_ARRAY(s->arena, int64_t, OUTER_CHOICE_LIMIT + 2);
    int count_n = 0;
    const int64_t trial_limit = 3000000;
    if (micro && batch / trial_limit > trial_limit) {
        Diag *d =
            diag_error(s->diags, micro->span, "E0358",
                       "`microbatches ?` would try every divisor of %s = %lld; batches above "
                       "%lld are not searched",
                       micro->level.name, (long long)batch, (long long)(trial_limit * trial_limit));
        diag_help(d, s->diags, "give the count: `microbatches N of %s;`", micro->level.name);
        return NULL;
    }
    for (int64_t d = 1; micro && d <= batch / d && count_n <= OUTER_CHOICE_LIMIT; d++)
        if (batch % d == 0) {
            counts[count_n++] = d;
            if (d != batch / d) counts[count_n++] = batch / d;
        }
    if (count_n == 0) counts[count_n++] = 1; /* no `microbatches ?`, or no batch */
    int recomputes = recomp ? (recomp->stmts.count > 0 ? 3 : 2) : 1;
    static const int recompute_values[2][3] = {{0, 2, 0}, {0, 1, 2}};
    /* two values for each `overlap ?` line (past 12 lines the count alone
     * is over the limit) */
    long overlaps = overlap_holes > 12 ? 1L << 13 : 1L << overlap_holes;
    long total = (long)dims * count_n * recomputes * batch_n * overlaps;
    Span where = pipe     ? pipe->span
                 : micro  ? micro->span
                 : recomp ? recomp->span
                 : serve  ? serve->span
                          : overlap_first->span;
    if (total > OUTER_CHOICE_LIMIT) {
        Diag *d = diag_error(s->diags, where, "E0358",
                             "the outer holes of mapping `%s` stand for %ld combinations; at "
                             "most %d are searched",
                             mapping_decl->name.name, total, OUTER_CHOICE_LIMIT);
        diag_help(d, s->diags, "give some of them a value (docs/errors/E0358.md)");
        return NULL;
    }
    IrMapping **choices = ARENA_ARRAY(s->arena, IrMapping *, total + 1);
    /* the first combination's diagnostics (its errors, when none checks)
     * and the first that checks (its warnings, reported for the mapping) */
    DiagSink first_sink, valid_sink;
    diags_init(&first_sink, s->arena);
    diags_init(&valid_sink, s->arena);
    int n = 0;
    bool choice_dependent = false;
    /* every combination, the first axis varying slowest */
    for (long idx = 0; idx < total; idx++) {
        long rest = idx;
        unsigned v = (unsigned)(rest % overlaps);
        rest /= overlaps;
        int q = (int)(rest % batch_n);
        rest /= batch_n;
        int r = (int)(rest % recomputes);
        rest /= recomputes;
        int b = (int)(rest % count_n);
        int a = (int)(rest / count_n);
        OuterChoice ch = {dim_of[a], counts[b],
                          recomp ? recompute_values[recomp->stmts.count > 0][r] : 0, batches[q], v};
        DiagSink scratch;
        diags_init(&scratch, s->arena);
        DiagSink *real = s->diags;
        s->diags = &scratch;
        IrMapping *m = check_mapping_with(s, mapping_decl, &ch);
        s->diags = real;
        if (idx == 0) first_sink = scratch;
        if (!m || scratch.error_count > 0) {
            if (idx > 0 && !same_errors(&scratch, &first_sink)) choice_dependent = true;
            continue;
        }
        m->choice_text = choice_text(s->arena, m, pipe, micro, recomp, serve);
        if (n == 0) valid_sink = scratch;
        choices[n++] = m;
    }
    if (n == 0) {
        /* why: the first combination's own diagnostics (checked once:
         * what an op instantiation reports is reported once); when every
         * combination failed alike, the mistake is not the holes' */
        diags_take(s->diags, &first_sink);
        if (!choice_dependent && total > 1) return NULL;
        Diag *d = diag_error(s->diags, where, "E0358",
                             "no value of the outer holes of mapping `%s` gives a mapping that "
                             "checks (%ld tried)",
                             mapping_decl->name.name, total);
        diag_note(d, s->diags,
                  "the other errors reported here are the first combination's "
                  "(docs/errors/E0358.md)");
        return NULL;
    }
    /* the mapping as checked is its first choice (copied: the choices stay
     * as they are), with that choice's warnings */
    diags_take(s->diags, &valid_sink);
    IrMapping *m = ARENA_NEW(s->arena, IrMapping);
    *m = *choices[0];
    m->choices = choices;
    m->choice_count = n;
    m->choice_span = where;
    m->choice_text = NULL;
    m->hole_count += (pipe != NULL) + (micro != NULL) + (recomp != NULL) + (serve != NULL) +
                     (overlap_first != NULL);
    return m;
}
