/* check_arch.c — archs: inheritance (`arch B : A`), memory levels (with
 * role splits), clusters and their dimensions, compute units; built into
 * an IrArch with every quantity in SI units. */
#include "sema.h"

#include <math.h>
#include <string.h>

/* `arch B : A` chains deeper than this are reported, keeping recursion
 * bounded. */
#define ARCH_MAX_INHERIT_DEPTH 64

/* ------------------------------------------------- effective items */

/* An item after inheritance: the parent's, replaced or extended. */
typedef struct EffItem {
    ArchItemKind kind;
    const ArchItem *item; /* the latest declaration: name, role, kind, dims */
    Ident role, unit_kind;
    const ClusterDimDecl *dims;
    int dim_count;
    const Attr **attrs; /* merged by key: a child's replaces the parent's */
    int attr_count;
    const Attr *attr; /* AI_ATTR */
    bool inherited;   /* came from the parent arch */
} EffItem;

typedef struct EffList {
    EffItem **items;
    int count;
} EffList;

typedef struct ArchCtx {
    Sema *s;
    Arena *arena;
    DiagSink *diags;
    ConstEnv env; /* the global scope and the arch's parameters */
    const Decl *decl;
    IrArch *arch;
    bool ok;
    bool clock_reported; /* a missing clock is one mistake, reported once */
    const Decl *stack[ARCH_MAX_INHERIT_DEPTH + 1];
    int depth;
} ArchCtx;

static Diag *arch_error(ArchCtx *c, Span span, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static Diag *arch_error(ArchCtx *c, Span span, const char *code, const char *fmt, ...) {
    c->ok = false;
    va_list ap;
    va_start(ap, fmt);
    Diag *d = diag_error_va(c->diags, span, code, fmt, ap);
    va_end(ap);
    return d;
}

static Name attr_key(const Attr *a) {
    return a->key.name;
}

static void merge_attr(ArchCtx *c, EffItem *e, const Attr *a) {
    for (int i = 0; i < e->attr_count; i++)
        if (attr_key(e->attrs[i]) == attr_key(a)) {
            e->attrs[i] = a;
            return;
        }
    const Attr **grown = ARENA_ARRAY(c->arena, const Attr *, e->attr_count + 1);
    if (e->attr_count) memcpy(grown, e->attrs, sizeof(Attr *) * (size_t)e->attr_count);
    grown[e->attr_count++] = a;
    e->attrs = grown;
}

/* Reports a key repeated within one attribute list (one declaration). */
static void check_duplicate_attrs(ArchCtx *c, const AttrList *list) {
    for (int i = 0; i < list->count; i++) {
        const Attr *a = list->items[i];
        if (!a->key.name) continue;
        for (int j = 0; j < i; j++)
            if (list->items[j]->key.name == a->key.name) {
                Diag *d = arch_error(c, a->key.span, "E0211", "`%s` is given twice", a->key.name);
                diag_label(d, c->diags, list->items[j]->key.span, "first given here");
                break;
            }
    }
}

static const char *item_kind_name(ArchItemKind k) {
    switch (k) {
    case AI_MEMORY: return "memory";
    case AI_CLUSTER: return "cluster";
    case AI_COMPUTE: return "compute";
    case AI_ATTR:
    case AI_ERROR: break;
    }
    return "item";
}

static EffList *resolve_items(ArchCtx *c, const Decl *decl);
static const Decl *sound_parent(Sema *s, const Decl *decl);

static EffList *resolve_parent(ArchCtx *c, const Decl *decl) {
    const Ident *parent = &decl->u.arch.parent;
    EffList *empty = ARENA_NEW(c->arena, EffList);
    if (!parent->name) return empty;
    GlobalEntry *g = globals_find(c->s->globals, parent->name);
    if (!g || g->decl->kind != DK_ARCH) {
        if (!g) {
            int n = 0;
            const char **names = globals_names(c->arena, c->s->globals, DK_ARCH, &n);
            if (!spell_suggest(parent->name, names, n) && module_missing(c->diags)) {
                c->ok = false; /* it may be in the module that was not found */
                return NULL;
            }
        }
        Diag *d = arch_error(c, parent->span, "E0512",
                             g ? "`%s` is not an arch" : "unknown arch `%s`", parent->name);
        if (g) {
            diag_label(d, c->diags, g->decl->name.span, "`%s` is defined here", parent->name);
        } else {
            int n = 0;
            const char **names = globals_names(c->arena, c->s->globals, DK_ARCH, &n);
            const char *best = spell_suggest(parent->name, names, n);
            if (best) diag_help(d, c->diags, "did you mean `%s`?", best);
        }
        return NULL;
    }
    for (int i = 0; i < c->depth; i++)
        if (c->stack[i] == g->decl) {
            /* Report the cycle once: when checking its first member. */
            c->ok = false;
            const Decl *first = c->stack[i];
            for (int k = i; k < c->depth; k++) {
                Span sp = c->stack[k]->name.span, fs = first->name.span;
                if (sp.file < fs.file || (sp.file == fs.file && sp.start < fs.start))
                    first = c->stack[k];
            }
            if (i != 0 || first != c->stack[0]) return NULL;
            const char *chain = c->stack[0]->name.name;
            for (int k = 1; k < c->depth; k++)
                chain = arena_printf(c->arena, "%s : %s", chain, c->stack[k]->name.name);
            chain = arena_printf(c->arena, "%s : %s", chain, c->stack[0]->name.name);
            Diag *d = arch_error(c, c->stack[0]->u.arch.parent.span, "E0513",
                                 "arch `%s` inherits from itself", c->stack[0]->name.name);
            for (int k = 1; k < c->depth; k++)
                diag_label(d, c->diags, c->stack[k]->u.arch.parent.span,
                           "`%s` inherits from `%s` here", c->stack[k]->name.name,
                           c->stack[k]->u.arch.parent.name);
            diag_note(d, c->diags, "the chain is %s", chain);
            return NULL;
        }
    if (c->depth >= ARCH_MAX_INHERIT_DEPTH) {
        arch_error(c, parent->span, "E0513", "arch inheritance is more than %d levels deep",
                   ARCH_MAX_INHERIT_DEPTH);
        return NULL;
    }
    return resolve_items(c, g->decl);
}

static EffItem *find_eff(EffList *l, ArchItemKind kind, Name name) {
    for (int i = 0; i < l->count; i++) {
        EffItem *e = l->items[i];
        if (e->kind != kind) continue;
        if (kind == AI_ATTR ? attr_key(e->attr) == name : e->item->name.name == name) return e;
    }
    return NULL;
}

static void eff_push(ArchCtx *c, EffList *l, EffItem *e) {
    EffItem **grown = ARENA_ARRAY(c->arena, EffItem *, l->count + 1);
    if (l->count) memcpy(grown, l->items, sizeof(EffItem *) * (size_t)l->count);
    grown[l->count++] = e;
    l->items = grown;
}

static EffList *resolve_items(ArchCtx *c, const Decl *decl) {
    c->stack[c->depth++] = decl;
    EffList *base = resolve_parent(c, decl);
    c->depth--;
    if (!base) return NULL;
    /* Copy the parent's items so replacing one does not touch the parent. */
    EffList *out = ARENA_NEW(c->arena, EffList);
    for (int i = 0; i < base->count; i++) {
        EffItem *copy = ARENA_NEW(c->arena, EffItem);
        *copy = *base->items[i];
        copy->inherited = true;
        eff_push(c, out, copy);
    }
    const ArchDecl *ad = &decl->u.arch;
    for (int i = 0; i < ad->item_count; i++) {
        const ArchItem *it = ad->items[i];
        if (it->kind == AI_ERROR) {
            c->ok = false;
            continue;
        }
        if (it->kind == AI_ATTR) {
            if (!it->attr || !it->attr->key.name) {
                c->ok = false;
                continue;
            }
            for (int j = 0; j < i; j++)
                if (ad->items[j]->kind == AI_ATTR && ad->items[j]->attr &&
                    ad->items[j]->attr->key.name == it->attr->key.name) {
                    Diag *d = arch_error(c, it->attr->key.span, "E0211", "`%s` is given twice",
                                         it->attr->key.name);
                    diag_label(d, c->diags, ad->items[j]->attr->key.span, "first given here");
                    break;
                }
            EffItem *e = find_eff(out, AI_ATTR, it->attr->key.name);
            if (!e) {
                e = ARENA_NEW(c->arena, EffItem);
                e->kind = AI_ATTR;
                eff_push(c, out, e);
            }
            e->attr = it->attr;
            continue;
        }
        if (!it->name.name) {
            c->ok = false;
            continue;
        }
        check_duplicate_attrs(c, &it->body);
        for (int j = 0; j < i; j++) {
            const ArchItem *prev = ad->items[j];
            if (prev->kind != AI_ATTR && prev->kind != AI_ERROR &&
                prev->name.name == it->name.name) {
                Diag *d =
                    arch_error(c, it->name.span, "E0514", "`%s` is declared twice in arch `%s`",
                               it->name.name, decl->name.name);
                diag_label(d, c->diags, prev->name.span, "first declared here as a %s",
                           item_kind_name(prev->kind));
                break;
            }
        }
        EffItem *e = find_eff(out, it->kind, it->name.name);
        if (!e) {
            /* A name the parent uses for another kind of item. */
            for (int k = 0; k < out->count; k++) {
                EffItem *o = out->items[k];
                if (o->kind != AI_ATTR && o->inherited && o->item->name.name == it->name.name) {
                    Diag *d = arch_error(c, it->name.span, "E0514",
                                         "`%s` is a %s in the parent arch; it "
                                         "cannot become a %s",
                                         it->name.name, item_kind_name(o->kind),
                                         item_kind_name(it->kind));
                    diag_label(d, c->diags, o->item->name.span, "declared here");
                }
            }
            e = ARENA_NEW(c->arena, EffItem);
            e->kind = it->kind;
            eff_push(c, out, e);
        }
        e->item = it;
        e->inherited = false;
        if (it->role.name || !e->role.name) e->role = it->role;
        if (it->unit_kind.name || !e->unit_kind.name) e->unit_kind = it->unit_kind;
        if (it->dim_count || !e->dims) {
            e->dims = it->dims;
            e->dim_count = it->dim_count;
        }
        for (int k = 0; k < it->body.count; k++)
            if (it->body.items[k]->key.name) merge_attr(c, e, it->body.items[k]);
    }
    return out;
}

/* ------------------------------------------------------------ values */

/* (`key` is a word of the vocabulary, not a Name: compared as text, which
 * costs less than interning it for each lookup) */
static const Attr *find_attr(const EffItem *e, const char *key) {
    for (int i = 0; i < e->attr_count; i++)
        if (attr_key(e->attrs[i])[0] == key[0] && strcmp(attr_key(e->attrs[i]), key) == 0)
            return e->attrs[i];
    return NULL;
}

static void check_known_keys(ArchCtx *c, const EffItem *e, const char *what,
                             const char *const *keys, int key_count) {
    for (int i = 0; i < e->attr_count; i++) {
        const Attr *a = e->attrs[i];
        bool known = false;
        for (int k = 0; k < key_count && !known; k++)
            known = a->key.name[0] == keys[k][0] && strcmp(a->key.name, keys[k]) == 0;
        if (known) continue;
        Diag *d =
            arch_error(c, a->key.span, "E0209", "unknown attribute `%s` for %s", a->key.name, what);
        const char *best = spell_suggest(a->key.name, keys, key_count);
        if (best)
            diag_help(d, c->diags, "did you mean `%s`?", best);
        else {
            const char *list = "";
            for (int k = 0; k < key_count; k++)
                list = arena_printf(c->arena, "%s%s%s", list, k ? ", " : "", keys[k]);
            diag_note(d, c->diags, "%s takes: %s", what, list);
        }
    }
}

/* The single value of an attribute; false (reported) when it has another
 * shape. */
static const Expr *single_value(ArchCtx *c, const Attr *a) {
    if (a->value_count == 1 && a->pair_count == 0) return a->values[0];
    for (int i = 0; i < a->value_count; i++)
        if (a->values[i]->kind == EX_ERROR) return NULL;
    arch_error(c, a->span, "E0218", "`%s` takes one value", a->key.name);
    return NULL;
}

/* Converts a quantity that may count cycles to seconds-based SI. */
static bool decycle(ArchCtx *c, double *v, UnitDim *dim, Span span) {
    if (dim->num != BU_CYCLE && dim->den != BU_CYCLE) return true;
    double clock = c->arch->clock_hz;
    if (clock <= 0) {
        if (!c->clock_reported) {
            c->clock_reported = true;
            Diag *d =
                arch_error(c, span, "E0508", "`%s` is in cycles, but arch `%s` has no `clock`",
                           span_text(c->arena, c->s->prog->sources, span), c->decl->name.name);
            diag_help(d, c->diags,
                      "add `clock 1 GHz;` (the arch's frequency) to "
                      "arch `%s`",
                      c->decl->name.name);
        }
        c->ok = false;
        return false;
    }
    if (dim->num == BU_CYCLE) {
        *v /= clock;
        dim->num = BU_SECOND;
    } else {
        *v *= clock;
        dim->den = BU_SECOND;
    }
    return true;
}

/* Arch quantities are 0 or within yocto to yotta of their unit: every
 * latency and energy the cost model derives from a few of them (and from
 * 64-bit extents) then stays a finite number, and no subnormal divides
 * anything (1 B / 1e-320 B/s is infinite, and infinity minus infinity
 * printed as `-nan`). */
#define ARCH_QUANTITY_MIN 1e-24
#define ARCH_QUANTITY_MAX 1e24

/* False (E0219, naming the attribute, the value and its unit) when `v`,
 * the value of `what` written as `e`, is not finite or outside the range
 * above. */
static bool value_in_range(ArchCtx *c, Subject what, const Expr *e, double v, UnitDim dim) {
    double magnitude = fabs(v);
    if (magnitude == 0 || (magnitude >= ARCH_QUANTITY_MIN && magnitude <= ARCH_QUANTITY_MAX))
        return true;
    const char *unit = unit_dim_si_name(c->arena, dim);
    const char *text = span_text(c->arena, c->s->prog->sources, e->span);
    const char *problem = !isfinite(v)                    ? "is not a finite number"
                          : magnitude < ARCH_QUANTITY_MIN ? "is too small to compute with"
                                                          : "is too large to compute with";
    Diag *d = arch_error(c, e->span, "E0219", "%s %s %s", subject_text(what), text, problem);
    /* a name or an expression: show the value it came to */
    if (e->kind != EX_QUANTITY && e->kind != EX_INT && e->kind != EX_REAL)
        diag_note(d, c->diags, "`%s` is %g%s%s", text, v, *unit ? " " : "", unit);
    diag_note(d, c->diags,
              "values must be 0 or between %g and %g%s%s, so that the latencies and energies "
              "computed from them are finite numbers",
              ARCH_QUANTITY_MIN, ARCH_QUANTITY_MAX, *unit ? " " : "", unit);
    return false;
}

/* Evaluates a quantity attribute that must have one of `accept` dims (the
 * first is named in the message).  `number_ok`: a plain number passes
 * with dim none. */
static bool quantity_attr(ArchCtx *c, const Attr *a, const UnitDim *accept, int accept_count,
                          double *out, UnitDim *dim) {
    const Expr *e = single_value(c, a);
    if (!e) return false;
    ConstEnv env = c->env;
    env.diags = c->diags;
    env.where = subject_of("", a->key.name);
    env.expr_depth = 0;
    Value v = const_eval(&env, e);
    if (v.kind == VK_ERROR) {
        c->ok = false;
        return false;
    }
    UnitDim got = v.kind == VK_QUANTITY ? v.dim : (UnitDim){BU_NONE, BU_NONE};
    for (int i = 0; i < accept_count; i++)
        if (unit_dim_eq(got, accept[i])) {
            *out = v.kind == VK_INT ? (double)v.i : v.r;
            *dim = got;
            return value_in_range(c, env.where, e, *out, got);
        }
    const char *desc = unit_dim_describe(accept[0]);
    Diag *d = arch_error(c, e->span, "E0208", "%s expects %s %s such as %s, got %s", a->key.name,
                         strchr("aeiou", desc[0]) ? "an" : "a", desc, unit_dim_example(accept[0]),
                         span_text(c->arena, c->s->prog->sources, e->span));
    if (v.kind == VK_QUANTITY)
        diag_note(d, c->diags, "`%s` is %s %s", span_text(c->arena, c->s->prog->sources, e->span),
                  strchr("aeiou", unit_dim_describe(got)[0]) ? "an" : "a", unit_dim_describe(got));
    else if (e->kind == EX_INT || e->kind == EX_REAL) {
        /* `hop_latency 5;`: a plain number where a unit is needed */
        const char *unit = strchr(unit_dim_example(accept[0]), ' ');
        if (unit)
            diag_help(d, c->diags, "a plain number has no unit: write `%s%s`",
                      span_text(c->arena, c->s->prog->sources, e->span), unit);
    }
    return false;
}

static const UnitDim DIM_SIZE[] = {{BU_BYTE, BU_NONE}};
static const UnitDim DIM_BANDWIDTH[] = {{BU_BYTE, BU_SECOND}, {BU_BYTE, BU_CYCLE}};
static const UnitDim DIM_ENERGY_PER_BYTE[] = {{BU_JOULE, BU_BYTE}};
static const UnitDim DIM_TIME[] = {{BU_SECOND, BU_NONE}, {BU_CYCLE, BU_NONE}};
static const UnitDim DIM_FREQUENCY[] = {{BU_HERTZ, BU_NONE}};
static const UnitDim DIM_MATRIX_RATE[] = {
    {BU_MAC, BU_CYCLE}, {BU_MAC, BU_SECOND}, {BU_FLOP, BU_SECOND}, {BU_FLOP, BU_CYCLE}};
static const UnitDim DIM_VECTOR_RATE[] = {
    {BU_OP, BU_CYCLE}, {BU_OP, BU_SECOND}, {BU_FLOP, BU_SECOND}, {BU_FLOP, BU_CYCLE}};
static const UnitDim DIM_MATRIX_ENERGY[] = {{BU_JOULE, BU_MAC}, {BU_JOULE, BU_FLOP}};
static const UnitDim DIM_VECTOR_ENERGY[] = {{BU_JOULE, BU_OP}, {BU_JOULE, BU_FLOP}};
#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A quantity attribute converted to seconds-based SI; `fallback` when
 * absent.  False on error (reported). */
typedef enum Sign { SIGN_POSITIVE, SIGN_NOT_NEGATIVE } Sign;

static bool si_attr(ArchCtx *c, const EffItem *e, const char *key, const UnitDim *accept,
                    int accept_count, double fallback, double *out, Sign sign) {
    *out = fallback;
    const Attr *a = find_attr(e, key);
    if (!a) return true;
    double v;
    UnitDim dim;
    if (!quantity_attr(c, a, accept, accept_count, &v, &dim)) return false;
    if (sign == SIGN_POSITIVE ? !(v > 0) : v < 0) {
        arch_error(c, a->values[0]->span, "E0212", "%s must be %s, got %s", key,
                   sign == SIGN_POSITIVE ? "positive" : "zero or more",
                   span_text(c->arena, c->s->prog->sources, a->values[0]->span));
        return false;
    }
    if (!decycle(c, &v, &dim, a->values[0]->span)) return false;
    *out = v;
    return true;
}

static bool positive_int_expr(ArchCtx *c, const Expr *e, Subject what, int64_t *out) {
    ConstEnv env = c->env;
    env.diags = c->diags;
    env.where = what;
    env.expr_depth = 0;
    if (!const_eval_int(&env, e, what, out)) {
        c->ok = false;
        return false;
    }
    if (*out < 1) {
        arch_error(c, e->span, "E0212", "%s must be positive, got %lld", subject_text(what),
                   (long long)*out);
        return false;
    }
    return true;
}

/* A missing attribute is not reported when the parser dropped a broken
 * line of the item or an unknown attribute is a misspelling of it: that
 * mistake is already reported. */
static bool missing_explained(ArchCtx *c, const EffItem *e, const char *key) {
    if (span_has_errors(c->diags, e->item->span)) return true;
    for (int i = 0; i < e->attr_count; i++) {
        const char *cand[1] = {key};
        if (strcmp(e->attrs[i]->key.name, key) != 0 &&
            spell_suggest(e->attrs[i]->key.name, cand, 1))
            return true;
    }
    return false;
}

static void missing_attr(ArchCtx *c, const EffItem *e, const char *key, const char *example) {
    if (missing_explained(c, e, key)) {
        c->ok = false;
        return;
    }
    Diag *d = arch_error(c, e->item->name.span, "E0210", "%s `%s` has no `%s`",
                         item_kind_name(e->kind), e->item->name.name, key);
    diag_help(d, c->diags, "add `%s %s;`", key, example);
}

/* ------------------------------------------------------------ building */

static const char *const ARCH_KEYS[] = {CMT_ARCH_KEYS(VOCAB_WORD)};
static const char *const MEMORY_KEYS[] = {CMT_MEMORY_KEYS(VOCAB_WORD)};
static const char *const CLUSTER_KEYS[] = {CMT_CLUSTER_KEYS(VOCAB_WORD)};
static const char *const COMPUTE_KEYS[] = {CMT_COMPUTE_KEYS(VOCAB_WORD)};
static const char *const UNIT_KINDS[] = {CMT_UNIT_KINDS(VOCAB_WORD)};

static bool parse_topology(ArchCtx *c, const Ident *kind, Topology *out) {
    if (topology_of_name(kind->name, out)) return true;
    Diag *d = arch_error(c, kind->span, "E0501", "unknown topology `%s`", kind->name);
    const char *best = spell_suggest(kind->name, topology_words, topology_count);
    char all[128];
    if (best)
        diag_help(d, c->diags, "did you mean `%s`?", best);
    else
        diag_note(d, c->diags, "the topologies are %s",
                  vocab_join(all, sizeof all, topology_words, topology_count, " and "));
    return false;
}

/* A topology that wires a whole cluster (vocab.h): a dragonfly's first
 * dimension counts its groups and the second the chips of a group; a
 * hybrid cube mesh is DGX-1's eight GPUs.  Neither can be one dimension's
 * kind beside others, nor have a dimension of another kind. */
static bool wires_whole_cluster(Topology t) {
    return t == TOPO_DRAGONFLY || t == TOPO_HYBRID_CUBE_MESH;
}

/* E0520: a dimension's own kind where the cluster's wiring is whole. */
static void check_dim_kind(ArchCtx *c, const EffItem *e, const ClusterDimDecl *dd, Topology base,
                           Topology own) {
    if (wires_whole_cluster(base)) {
        Diag *d = arch_error(c, dd->kind.span, "E0520",
                             "dimension `%s` of %s cluster `%s` cannot have a topology of its own",
                             dd->name.name, topology_name(base), e->item->name.name);
        if (base == TOPO_DRAGONFLY)
            diag_note(d, c->diags,
                      "a dragonfly's first dimension crosses its groups over the global links, "
                      "the second runs over the local links inside each group");
        else
            diag_note(d, c->diags, "the links of a hybrid_cube_mesh are DGX-1's NVLink wiring");
        diag_help(d, c->diags, "drop `%s`", dd->kind.name);
    } else if (wires_whole_cluster(own)) {
        Diag *d = arch_error(c, dd->kind.span, "E0520",
                             "`%s` wires a whole cluster, not one dimension", dd->kind.name);
        diag_help(d, c->diags, "write it after the brackets: `cluster %s[...] %s { ... }`",
                  e->item->name.name, dd->kind.name);
    }
}

/* E0519: the shape a whole-cluster topology needs.  `size_known` is false
 * when a dimension's size was already reported. */
static void check_cluster_shape(ArchCtx *c, const EffItem *e, const IrClusterDim *first,
                                Topology base, bool size_known) {
    const char *name = e->item->name.name;
    if (base == TOPO_DRAGONFLY && e->dim_count != 2) {
        Diag *d = arch_error(c, e->unit_kind.span, "E0519",
                             "a dragonfly has two dimensions, groups and chips per group; "
                             "`%s` has %d",
                             name, e->dim_count);
        diag_note(d, c->diags,
                  "the first dimension counts the groups, all pairs of them joined by "
                  "global links; the second counts the chips of a group, all linked "
                  "to each other");
        diag_help(d, c->diags, "write `cluster %s[g = 4, r = 8] dragonfly { ... }`", name);
    } else if (base == TOPO_HYBRID_CUBE_MESH && e->dim_count != 1) {
        Diag *d = arch_error(c, e->unit_kind.span, "E0519",
                             "a hybrid_cube_mesh has one dimension of 8 GPUs; `%s` has %d", name,
                             e->dim_count);
        diag_help(d, c->diags, "write `cluster %s[g = 8] hybrid_cube_mesh { ... }`", name);
    } else if (base == TOPO_HYBRID_CUBE_MESH && size_known && first->size != 8) {
        Diag *d = arch_error(c, e->dims[0].size->span, "E0519",
                             "a hybrid_cube_mesh has 8 GPUs, not %lld", (long long)first->size);
        diag_note(d, c->diags,
                  "its links are DGX-1's NVLink wiring: two quads of fully linked GPUs, GPU i "
                  "of one joined to GPU i of the other");
        diag_help(d, c->diags, "for another number of GPUs use `full`, `switch` or `ring`");
    }
}

/* `global_links N;` and `global_bandwidth B;` of a dragonfly (E0521 on
 * another kind of cluster). */
static void build_global_links(ArchCtx *c, EffItem *e, IrCluster *cl, Topology base) {
    static const char *const keys[] = {"global_links", "global_bandwidth"};
    cl->global_links = 1;
    cl->global_bandwidth = cl->link_bandwidth;
    if (base != TOPO_DRAGONFLY) {
        for (int i = 0; i < COUNT_OF(keys); i++) {
            const Attr *a = find_attr(e, keys[i]);
            if (!a) continue;
            Diag *d = arch_error(c, a->key.span, "E0521",
                                 "`%s` applies to dragonfly clusters; `%s` is a %s", keys[i],
                                 e->item->name.name, topology_name(base));
            /* given by the parent arch, to the dragonfly this one replaces */
            Span here = e->item->span;
            bool inherited = a->key.span.file != here.file || a->key.span.start < here.start ||
                             a->key.span.end > here.end;
            if (inherited)
                diag_label(d, c->diags, e->item->name.span, "`%s` is redeclared here as a %s",
                           e->item->name.name, topology_name(base));
            diag_note(d, c->diags, "global links join the groups of a dragonfly");
        }
        return;
    }
    const Attr *links = find_attr(e, "global_links");
    if (links) {
        const Expr *v = single_value(c, links);
        int64_t n;
        if (v && positive_int_expr(c, v, subject("global_links"), &n)) {
            if (n > 65536)
                arch_error(c, v->span, "E0212", "global_links is too large: at most 65536");
            else
                cl->global_links = n;
        }
    }
    si_attr(c, e, "global_bandwidth", DIM_BANDWIDTH, COUNT_OF(DIM_BANDWIDTH), cl->link_bandwidth,
            &cl->global_bandwidth, SIGN_POSITIVE);
}

static void build_clock(ArchCtx *c, EffList *l) {
    const Attr *overhead = NULL;
    for (int i = 0; i < l->count; i++) {
        EffItem *e = l->items[i];
        if (e->kind != AI_ATTR) continue;
        const Attr *a = e->attr;
        if (strcmp(a->key.name, "launch_overhead") == 0) {
            overhead = a; /* after the clock: it may be given in cycles */
            continue;
        }
        if (strcmp(a->key.name, "price") == 0) {
            /* what the whole system costs: sweeps report performance per
             * dollar (docs/sweeps.md) */
            static const UnitDim DIM_PRICE[] = {{BU_USD, BU_NONE}};
            double v;
            UnitDim dim;
            if (!quantity_attr(c, a, DIM_PRICE, 1, &v, &dim)) continue;
            if (!(v > 0)) {
                arch_error(c, a->values[0]->span, "E0212", "price must be positive, got %s",
                           span_text(c->arena, c->s->prog->sources, a->values[0]->span));
                continue;
            }
            c->arch->price_usd = v;
            continue;
        }
        if (strcmp(a->key.name, "clock") != 0) {
            Diag *d = arch_error(c, a->key.span, "E0209", "unknown attribute `%s` for an arch",
                                 a->key.name);
            const char *best = spell_suggest(a->key.name, ARCH_KEYS, COUNT_OF(ARCH_KEYS));
            if (best)
                diag_help(d, c->diags, "did you mean `%s`?", best);
            else
                diag_note(d, c->diags,
                          "an arch takes `clock`, `launch_overhead` and `price`, then "
                          "memory, cluster and compute items");
            continue;
        }
        double v;
        UnitDim dim;
        if (!quantity_attr(c, a, DIM_FREQUENCY, 1, &v, &dim)) continue;
        if (v <= 0) {
            arch_error(c, a->values[0]->span, "E0212", "clock must be positive, got %s",
                       span_text(c->arena, c->s->prog->sources, a->values[0]->span));
            continue;
        }
        c->arch->clock_hz = v;
        c->arch->clock_span = a->values[0]->span;
    }
    if (!overhead) return;
    double v;
    UnitDim dim;
    if (!quantity_attr(c, overhead, DIM_TIME, COUNT_OF(DIM_TIME), &v, &dim)) return;
    if (v < 0) {
        arch_error(c, overhead->values[0]->span, "E0212",
                   "launch_overhead must be zero or more, got %s",
                   span_text(c->arena, c->s->prog->sources, overhead->values[0]->span));
        return;
    }
    if (decycle(c, &v, &dim, overhead->values[0]->span)) c->arch->launch_overhead = v;
}

typedef struct Builder {
    IrMemory *memories;
    int memory_count;
    IrLevel *levels;
    int level_count;
    IrCluster *clusters;
    int cluster_count;
    IrClusterDim *dims;
    int dim_count;
    IrCompute *units;
    int unit_count;
    bool *role_reported; /* [level]: a role error there was reported */
} Builder;

/* `efficiency F;` of a compute unit or a memory: the fraction of its peak
 * rate that real kernels sustain, 1 when not given. */
static double efficiency_attr(ArchCtx *c, EffItem *e) {
    const Attr *eff = find_attr(e, "efficiency");
    double v;
    UnitDim dim;
    static const UnitDim number[] = {{BU_NONE, BU_NONE}};
    if (!eff || !quantity_attr(c, eff, number, 1, &v, &dim)) return 1.0;
    if (v > 0 && v <= 1) return v;
    arch_error(c, eff->values[0]->span, "E0511", "efficiency must be in (0, 1], got %s",
               span_text(c->arena, c->s->prog->sources, eff->values[0]->span));
    return 1.0;
}

static void build_memory(ArchCtx *c, Builder *b, EffItem *e, bool *split_open) {
    check_known_keys(c, e, "a memory", MEMORY_KEYS, COUNT_OF(MEMORY_KEYS));
    IrMemory *m = &b->memories[b->memory_count];
    m->id = b->memory_count;
    m->name = e->item->name.name;
    m->span = e->item->name.span;
    m->role = ROLE_ANY;
    if (e->role.name) {
        if (!mem_role_of_name(e->role.name, &m->role)) {
            b->role_reported[b->level_count - (*split_open ? 1 : 0)] = true;
            Diag *d = arch_error(c, e->role.span, "E0504", "unknown role `%s`", e->role.name);
            const char *best = spell_suggest(e->role.name, mem_role_words, mem_role_count);
            char all[64];
            if (best)
                diag_help(d, c->diags, "did you mean `%s`?", best);
            else
                diag_note(d, c->diags, "the roles are %s",
                          vocab_join(all, sizeof all, mem_role_words, mem_role_count, " and "));
        }
    }
    /* Consecutive memories with a role (no cluster between) share a level;
     * an accumulator joins the memory declared just before it. */
    bool accumulator = m->role == ROLE_ACCUMULATOR;
    bool after_memory =
        b->level_count > 0 && b->levels[b->level_count - 1].clusters_outside == b->cluster_count;
    if (accumulator && !after_memory) {
        b->role_reported[b->level_count] = true;
        Diag *d = arch_error(c, e->role.span, "E0530",
                             "accumulator `%s` has no memory to sit beside", m->name);
        diag_note(d, c->diags,
                  "an accumulator holds the results computed at the innermost level, beside "
                  "the memory that holds their operands");
        diag_help(d, c->diags,
                  "declare it right after the innermost memory, with no `cluster` "
                  "between them");
    }
    bool joins = e->role.name && (accumulator ? after_memory : *split_open) && b->level_count > 0;
    if (joins) {
        IrLevel *lv = &b->levels[b->level_count - 1];
        for (int i = 0; i < lv->memory_count; i++) {
            const IrMemory *other = &b->memories[lv->first_memory + i];
            if (other->role == m->role && m->role != ROLE_ANY) {
                b->role_reported[b->level_count - 1] = true;
                Diag *d = arch_error(c, e->role.span, "E0505",
                                     "level `%s` has two memories for role `%s`", lv->name,
                                     mem_role_name(m->role));
                diag_label(d, c->diags, other->span, "`%s` already holds role `%s`", other->name,
                           mem_role_name(m->role));
                diag_help(d, c->diags,
                          "put a `cluster` between them to make two "
                          "levels, or give each memory its own role");
            }
        }
        lv->memory_count++;
    } else {
        IrLevel *lv = &b->levels[b->level_count];
        lv->id = b->level_count;
        lv->name = m->name;
        lv->first_memory = m->id;
        lv->memory_count = 1;
        lv->clusters_outside = b->cluster_count;
        lv->instances = 1;
        for (int i = 0; i < b->dim_count; i++) lv->instances *= b->dims[i].size;
        lv->span = m->span;
        b->level_count++;
    }
    *split_open = e->role.name != NULL && !accumulator;
    m->level = b->level_count - 1;

    m->kind = MK_BUFFER;
    const Attr *kind = find_attr(e, "kind");
    if (kind) {
        const Expr *v = kind->value_count == 1 ? kind->values[0] : NULL;
        if (!v || v->kind != EX_NAME || !mem_kind_of_name(v->u.name, &m->kind)) {
            Span where = v ? v->span : kind->span;
            Diag *d = arch_error(c, where, "E0531", "`kind` of memory `%s` must be %s", m->name,
                                 "`buffer` or `stream`");
            const char *best = v && v->kind == EX_NAME
                                   ? spell_suggest(v->u.name, mem_kind_words, mem_kind_count)
                                   : NULL;
            if (best)
                diag_help(d, c->diags, "did you mean `%s`?", best);
            else
                diag_help(d, c->diags, "a cache or staging level is `kind stream;`");
        } else if (m->kind == MK_STREAM && m->level == 0) {
            Diag *d = arch_error(c, v->span, "E0532",
                                 "the outermost memory `%s` cannot be a stream level", m->name);
            diag_note(d, c->diags,
                      "a stream level passes what it exchanges with the level above it; the "
                      "outermost level has none: it holds the op's tensors");
            diag_help(d, c->diags, "drop `kind stream;` here, or give it to an inner level");
        }
    }

    const Attr *cap = find_attr(e, "capacity");
    if (cap) {
        double v;
        UnitDim dim;
        if (quantity_attr(c, cap, DIM_SIZE, 1, &v, &dim)) {
            if (v <= 0)
                arch_error(c, cap->values[0]->span, "E0212", "capacity must be positive, got %s",
                           span_text(c->arena, c->s->prog->sources, cap->values[0]->span));
            m->capacity = v;
        }
    } else if (m->level == 0 ||
               (m->level == 1 && b->memories[b->levels[0].first_memory].role == ROLE_ACCUMULATOR)) {
        /* the outermost memory (a misplaced accumulator before it was
         * reported: E0530) */
        m->capacity = INFINITY;
    } else if (missing_explained(c, e, "capacity")) {
        c->ok = false;
    } else {
        Diag *d =
            arch_error(c, e->item->name.span, "E0503", "memory `%s` has no `capacity`", m->name);
        diag_note(d, c->diags, "only the outermost level may be unbounded");
        diag_help(d, c->diags, "add `capacity 1 MiB;` with its real size");
    }
    if (!find_attr(e, "bandwidth")) missing_attr(c, e, "bandwidth", "64 GB/s");
    si_attr(c, e, "bandwidth", DIM_BANDWIDTH, COUNT_OF(DIM_BANDWIDTH), 0, &m->bandwidth,
            SIGN_POSITIVE);
    double both = 0;
    si_attr(c, e, "energy", DIM_ENERGY_PER_BYTE, 1, 0, &both, SIGN_NOT_NEGATIVE);
    si_attr(c, e, "read_energy", DIM_ENERGY_PER_BYTE, 1, both, &m->read_energy, SIGN_NOT_NEGATIVE);
    si_attr(c, e, "write_energy", DIM_ENERGY_PER_BYTE, 1, both, &m->write_energy,
            SIGN_NOT_NEGATIVE);
    si_attr(c, e, "transfer_latency", DIM_TIME, COUNT_OF(DIM_TIME), 0, &m->transfer_latency,
            SIGN_NOT_NEGATIVE);
    /* the sustained bandwidth is what every formula uses */
    m->bandwidth *= efficiency_attr(c, e);
    b->memory_count++;
}

static void build_cluster(ArchCtx *c, Builder *b, EffItem *e) {
    check_known_keys(c, e, "a cluster", CLUSTER_KEYS, COUNT_OF(CLUSTER_KEYS));
    IrCluster *cl = &b->clusters[b->cluster_count];
    cl->id = b->cluster_count;
    cl->name = e->item->name.name;
    cl->span = e->item->name.span;
    cl->depth = b->cluster_count;
    cl->first_dim = b->dim_count;
    Topology base = TOPO_MESH;
    if (e->unit_kind.name) parse_topology(c, &e->unit_kind, &base);
    bool sizes_known = true;
    for (int i = 0; i < e->dim_count; i++) {
        const ClusterDimDecl *dd = &e->dims[i];
        if (!dd->name.name) {
            c->ok = false;
            continue;
        }
        int prev = -1;
        for (int k = 0; k < b->dim_count; k++)
            if (b->dims[k].name == dd->name.name) prev = k;
        if (prev >= 0) {
            Diag *d = arch_error(c, dd->name.span, "E0502",
                                 "cluster dimension `%s` is declared twice", dd->name.name);
            diag_label(d, c->diags, b->dims[prev].span, "first declared here");
            diag_note(d, c->diags,
                      "dimension names are unique within an arch: "
                      "mappings name them");
            continue;
        }
        IrClusterDim *dim = &b->dims[b->dim_count];
        dim->id = b->dim_count;
        dim->name = dd->name.name;
        dim->span = dd->name.span;
        dim->cluster = cl->id;
        dim->topology = base;
        Topology own = base;
        if (dd->kind.name && parse_topology(c, &dd->kind, &own)) {
            check_dim_kind(c, e, dd, base, own);
            if (!wires_whole_cluster(own) && !wires_whole_cluster(base)) dim->topology = own;
        }
        int64_t size = 1;
        if (dd->size &&
            positive_int_expr(c, dd->size, subject_of("the size of ", dd->name.name), &size))
            dim->size = size;
        else {
            dim->size = 1;
            sizes_known = false;
        }
        /* every instance is modelled (collectives, capacity per instance):
         * cap the product so that no count overflows downstream */
        int64_t all = 1;
        for (int k = 0; k < b->dim_count; k++) all *= b->dims[k].size;
        if (dim->size > SEMA_MAX_INSTANCES / all) {
            if (all == 1)
                arch_error(c, dd->size->span, "E0517",
                           "the size of `%s`, %lld, is more than the 2^32 "
                           "(4294967296) instances cmtc models",
                           dd->name.name, (long long)dim->size);
            else {
                Diag *d = arch_error(c, dd->size->span, "E0517",
                                     "`%s` = %lld brings arch `%s` to %.0f "
                                     "instances, more than the 2^32 (4294967296) "
                                     "cmtc models",
                                     dd->name.name, (long long)dim->size, c->decl->name.name,
                                     (double)all * (double)dim->size);
                diag_note(d, c->diags,
                          "the dimensions declared before it multiply "
                          "to %lld",
                          (long long)all);
            }
            dim->size = 1;
        }
        b->dim_count++;
    }
    cl->dim_count = b->dim_count - cl->first_dim;
    if (cl->dim_count == e->dim_count)
        check_cluster_shape(c, e, &b->dims[cl->first_dim], base, sizes_known);
    if (!find_attr(e, "link_bandwidth")) missing_attr(c, e, "link_bandwidth", "32 GB/s");
    si_attr(c, e, "link_bandwidth", DIM_BANDWIDTH, COUNT_OF(DIM_BANDWIDTH), 0, &cl->link_bandwidth,
            SIGN_POSITIVE);
    build_global_links(c, e, cl, base);
    si_attr(c, e, "hop_latency", DIM_TIME, COUNT_OF(DIM_TIME), 0, &cl->hop_latency,
            SIGN_NOT_NEGATIVE);
    si_attr(c, e, "link_energy", DIM_ENERGY_PER_BYTE, 1, 0, &cl->link_energy, SIGN_NOT_NEGATIVE);
    si_attr(c, e, "call_latency", DIM_TIME, COUNT_OF(DIM_TIME), 0, &cl->call_latency,
            SIGN_NOT_NEGATIVE);
    cl->channels = 1;
    const Attr *channels = find_attr(e, "channels");
    if (channels) {
        const Expr *v = single_value(c, channels);
        int64_t n;
        if (v && positive_int_expr(c, v, subject("channels"), &n)) {
            if (n > 65536)
                arch_error(c, v->span, "E0212", "channels is too large: at most 65536");
            else
                cl->channels = n;
        }
    }
    si_attr(c, e, "channel_bytes", DIM_SIZE, 1, 0, &cl->channel_bytes, SIGN_POSITIVE);
    const Attr *channel_bytes = find_attr(e, "channel_bytes");
    cl->channel_growth = 1;
    const Attr *growth = find_attr(e, "channel_growth");
    if (growth) {
        double v;
        UnitDim dim;
        static const UnitDim number[] = {{BU_NONE, BU_NONE}};
        if (quantity_attr(c, growth, number, 1, &v, &dim)) {
            if (v > 0 && v <= 1)
                cl->channel_growth = v;
            else
                arch_error(c, growth->values[0]->span, "E0533",
                           "channel_growth must be in (0, 1], got %s",
                           span_text(c->arena, c->s->prog->sources, growth->values[0]->span));
        }
        if (!channel_bytes) {
            Diag *d = diag_warning(c->diags, growth->key.span, "W0501",
                                   "`channel_growth` without `channel_bytes` has no effect");
            diag_help(d, c->diags,
                      "say from how many bytes a call uses more than one channel, e.g. "
                      "`channel_bytes 16 KiB;`");
        }
    }
    if (channel_bytes && !channels) {
        Diag *d = diag_warning(c->diags, channel_bytes->key.span, "W0501",
                               "`channel_bytes` without `channels` has no effect");
        diag_help(d, c->diags, "say how many channels a call may use, e.g. `channels 16;`");
    }
    b->cluster_count++;
}

static void build_costs(ArchCtx *c, EffItem *e, IrCompute *u) {
    const Attr *a = find_attr(e, "cost");
    if (!a) return;
    if (u->matrix) {
        Diag *d = arch_error(c, a->key.span, "E0516",
                             "`cost` applies to vector units; `%s` is a matrix unit", u->name);
        diag_note(d, c->diags,
                  "functions run on vector units; a matrix unit "
                  "only multiplies and accumulates");
        return;
    }
    if (a->pair_count == 0) {
        Diag *d = arch_error(c, a->span, "E0218", "`cost` takes function and cost pairs");
        diag_help(d, c->diags, "write `cost exp 4, rsqrt 4;`");
        return;
    }
    u->costs = ARENA_ARRAY(c->arena, FnCost, a->pair_count);
    for (int i = 0; i < a->pair_count; i++) {
        const AttrPair *p = &a->pairs[i];
        if (!p->key.name) {
            c->ok = false;
            continue;
        }
        int first = -1;
        for (int k = 0; k < i && first < 0; k++)
            if (a->pairs[k].key.name && strcmp(a->pairs[k].key.name, p->key.name) == 0) first = k;
        if (first >= 0) {
            Diag *d =
                arch_error(c, p->key.span, "E0211", "the cost of `%s` is given twice", p->key.name);
            diag_label(d, c->diags, a->pairs[first].key.span, "first given here");
            continue;
        }
        if (op_function_arity(p->key.name) < 0) {
            Diag *d = arch_error(c, p->key.span, "E0515", "`cost` names unknown function `%s`",
                                 p->key.name);
            const char *best = spell_suggest(p->key.name, op_function_names, op_function_count);
            if (best) diag_help(d, c->diags, "did you mean `%s`?", best);
            continue;
        }
        ConstEnv env = c->env;
        env.diags = c->diags;
        env.where = subject("a cost");
        env.expr_depth = 0;
        Value v = const_eval(&env, p->value);
        if (v.kind == VK_ERROR) {
            c->ok = false;
            continue;
        }
        if (v.kind == VK_QUANTITY) {
            arch_error(c, p->value->span, "E0208",
                       "the cost of `%s` expects a number of element operations "
                       "such as 4, got %s",
                       p->key.name, span_text(c->arena, c->s->prog->sources, p->value->span));
            continue;
        }
        double cost = v.kind == VK_INT ? (double)v.i : v.r;
        if (!value_in_range(c, subject_of("the cost of ", p->key.name), p->value, cost,
                            (UnitDim){BU_NONE, BU_NONE}))
            continue;
        if (cost < 0) {
            arch_error(c, p->value->span, "E0212", "the cost of `%s` must not be negative, got %s",
                       p->key.name, span_text(c->arena, c->s->prog->sources, p->value->span));
            continue;
        }
        u->costs[u->cost_count++] = (FnCost){p->key.name, cost};
    }
}

/* `shape M x N x K`: the native operation of a matrix unit, which the
 * cost model pads every compute tile up to (cost-model.md section 6). */
static void build_shape(ArchCtx *c, EffItem *e, IrCompute *u, bool has_array) {
    const Attr *shape = find_attr(e, "shape");
    if (!shape) return;
    if (!u->matrix) {
        Diag *d = arch_error(c, shape->key.span, "E0518",
                             "`shape` applies to matrix units; `%s` is a vector unit", u->name);
        diag_note(d, c->diags, "a vector unit is costed per element and per function");
        return;
    }
    if (has_array) {
        Diag *d =
            arch_error(c, shape->key.span, "E0518", "`%s` has both `array` and `shape`", u->name);
        diag_note(d, c->diags,
                  "the fold formula of `array R x C` already charges the tiles that do not "
                  "fill the array");
        diag_help(d, c->diags, "keep one of them");
        return;
    }
    if (shape->value_count != 3 || !shape->sizes) {
        Diag *d = arch_error(c, shape->span, "E0518", "`shape` takes three sizes: M x N x K");
        diag_help(d, c->diags, "write `shape 64 x 256 x 16;`");
        return;
    }
    static const char *const what[3] = {"shape M", "shape N", "shape K"};
    int64_t size[3];
    for (int i = 0; i < 3; i++)
        if (!positive_int_expr(c, shape->values[i], subject(what[i]), &size[i])) return;
    if (size[0] > 65536 || size[1] > 65536 || size[2] > 65536) {
        arch_error(c, shape->span, "E0518",
                   "`shape` %lld x %lld x %lld is larger than 65536 in a size", (long long)size[0],
                   (long long)size[1], (long long)size[2]);
        return;
    }
    u->shape_m = (int)size[0];
    u->shape_n = (int)size[1];
    u->shape_k = (int)size[2];
}

static void build_compute(ArchCtx *c, Builder *b, EffItem *e) {
    check_known_keys(c, e, "a compute unit", COMPUTE_KEYS, COUNT_OF(COMPUTE_KEYS));
    IrCompute *u = &b->units[b->unit_count];
    u->id = b->unit_count;
    u->name = e->item->name.name;
    u->span = e->item->name.span;
    u->efficiency = 1.0;
    u->count = 1;
    char kinds[64]; /* "matrix or vector", written only for a message */
    if (!e->unit_kind.name) {
        vocab_join(kinds, sizeof kinds, UNIT_KINDS, COUNT_OF(UNIT_KINDS), " or ");
        Diag *d = arch_error(c, e->item->name.span, "E0507", "compute `%s` needs a kind: %s",
                             u->name, kinds);
        diag_help(d, c->diags, "write `compute %s matrix { ... }`", u->name);
        return;
    }
    if (strcmp(e->unit_kind.name, "matrix") == 0)
        u->matrix = true;
    else if (vocab_find(UNIT_KINDS, COUNT_OF(UNIT_KINDS), e->unit_kind.name) < 0) {
        vocab_join(kinds, sizeof kinds, UNIT_KINDS, COUNT_OF(UNIT_KINDS), " or ");
        Diag *d = arch_error(c, e->unit_kind.span, "E0507",
                             "unknown compute kind `%s`: expected %s", e->unit_kind.name, kinds);
        const char *best = spell_suggest(e->unit_kind.name, UNIT_KINDS, COUNT_OF(UNIT_KINDS));
        if (best) diag_help(d, c->diags, "did you mean `%s`?", best);
        return;
    }
    const Attr *count = find_attr(e, "count");
    if (count) {
        const Expr *v = single_value(c, count);
        int64_t n;
        if (v && positive_int_expr(c, v, subject("count"), &n)) {
            if (n > INT32_MAX)
                arch_error(c, v->span, "E0212", "count is too large");
            else
                u->count = (int)n;
        }
    }
    u->efficiency = efficiency_attr(c, e);
    const Attr *array = find_attr(e, "array");
    if (array) {
        if (!u->matrix) {
            arch_error(c, array->key.span, "E0509",
                       "`array` applies to matrix units; `%s` is a vector unit", u->name);
        } else if (array->value_count != 2 || array->pair_count) {
            Diag *d = arch_error(c, array->span, "E0509", "`array` takes rows and columns");
            diag_help(d, c->diags, "write `array 32 x 32;`");
        } else {
            int64_t r, col;
            if (positive_int_expr(c, array->values[0], subject("array rows"), &r) &&
                positive_int_expr(c, array->values[1], subject("array columns"), &col)) {
                if (r > 65536 || col > 65536)
                    arch_error(c, array->span, "E0509",
                               "`array` %lld x %lld is larger than 65536 x 65536", (long long)r,
                               (long long)col);
                else {
                    u->array_rows = (int)r;
                    u->array_cols = (int)col;
                }
            }
        }
    }
    build_shape(c, e, u, array != NULL);
    const Attr *tp = find_attr(e, "throughput");
    if (tp) {
        double v;
        UnitDim dim;
        const UnitDim *acc = u->matrix ? DIM_MATRIX_RATE : DIM_VECTOR_RATE;
        if (quantity_attr(c, tp, acc, 4, &v, &dim)) {
            /* 2 FLOP = 1 MAC; a vector unit counts 1 FLOP as 1 op */
            if (dim.num == BU_FLOP && u->matrix) v /= 2;
            if (v <= 0) {
                arch_error(c, tp->values[0]->span, "E0212", "throughput must be positive, got %s",
                           span_text(c->arena, c->s->prog->sources, tp->values[0]->span));
            } else if (dim.den == BU_CYCLE) {
                u->peak_per_cycle = v;
                if (c->arch->clock_hz > 0)
                    u->throughput = v * c->arch->clock_hz;
                else
                    decycle(c, &v, &dim, tp->values[0]->span);
            } else {
                u->throughput = v;
                if (c->arch->clock_hz > 0) u->peak_per_cycle = v / c->arch->clock_hz;
            }
        }
    } else if (u->array_rows) {
        u->peak_per_cycle = (double)u->array_rows * u->array_cols;
        if (c->arch->clock_hz > 0)
            u->throughput = u->peak_per_cycle * c->arch->clock_hz;
        else if (!c->clock_reported) {
            c->clock_reported = true;
            Diag *d = arch_error(c, array->span, "E0508",
                                 "`array` gives a throughput per cycle, but arch "
                                 "`%s` has no `clock`",
                                 c->decl->name.name);
            diag_help(d, c->diags,
                      "add `clock 1 GHz;` to arch `%s`, or give "
                      "`throughput` per second",
                      c->decl->name.name);
        }
    } else if (!array) {
        missing_attr(c, e, "throughput", u->matrix ? "4096 MAC/cycle" : "64 op/cycle");
    }
    u->throughput *= u->efficiency * u->count;
    double energy = 0;
    si_attr(c, e, "energy", u->matrix ? DIM_MATRIX_ENERGY : DIM_VECTOR_ENERGY, 2, 0, &energy,
            SIGN_NOT_NEGATIVE);
    const Attr *ea = find_attr(e, "energy");
    if (ea && ea->value_count == 1 && ea->values[0]->kind == EX_QUANTITY &&
        ea->values[0]->u.quantity.dim.den == BU_FLOP && u->matrix)
        energy *= 2;
    u->energy = energy;
    build_costs(c, e, u);
    b->unit_count++;
}

static void check_splits(ArchCtx *c, Builder *b) {
    for (int l = 0; l < b->level_count; l++) {
        IrLevel *lv = &b->levels[l];
        const IrMemory *first = &b->memories[lv->first_memory];
        if (b->role_reported[l]) continue;
        bool any_role = false;
        for (int i = 0; i < lv->memory_count; i++) {
            const IrMemory *m = &b->memories[lv->first_memory + i];
            if (m->role != ROLE_ANY && m->role != ROLE_ACCUMULATOR) any_role = true;
            /* an accumulator sits beside the innermost level's memory: a
             * level inside it would read results the units never wrote there */
            if (m->role == ROLE_ACCUMULATOR && l + 1 < b->level_count) {
                Diag *d = arch_error(c, m->span, "E0530",
                                     "accumulator `%s` is at level `%s`, but level `%s` lies "
                                     "inside it",
                                     m->name, lv->name, b->levels[l + 1].name);
                diag_note(d, c->diags,
                          "an accumulator holds the results the compute units make, so it "
                          "belongs to the innermost level");
                diag_help(d, c->diags, "move it after the innermost memory `%s`",
                          b->levels[b->level_count - 1].name);
            }
        }
        if (!any_role) continue;
        bool has[ROLE_ACCUMULATOR + 1] = {false, false, false, false, false};
        for (int i = 0; i < lv->memory_count; i++)
            has[b->memories[lv->first_memory + i].role] = true;
        for (int i = 0; i < lv->memory_count && has[ROLE_OUTPUT]; i++) {
            const IrMemory *m = &b->memories[lv->first_memory + i];
            if (m->role != ROLE_ACCUMULATOR) continue;
            Diag *d = arch_error(c, m->span, "E0530",
                                 "accumulator `%s` sits beside a level split by role", m->name);
            diag_note(d, c->diags,
                      "the level's `output` memory already holds the results computed there");
            diag_help(d, c->diags, "drop the accumulator, or give its size to the `output` memory");
        }
        const char *missing = "";
        int n = 0;
        for (int r = ROLE_INPUT; r <= ROLE_OUTPUT; r++)
            if (!has[r]) {
                missing = arena_printf(c->arena, "%s%s`%s`", missing, n ? " and " : "",
                                       mem_role_name((MemRole)r));
                n++;
            }
        if (n) {
            Diag *d = arch_error(c, first->span, "E0506",
                                 "level `%s` is split by role but has no memory "
                                 "for %s",
                                 lv->name, missing);
            diag_note(d, c->diags,
                      "consecutive memories with a role form one level "
                      "holding the input, weight and output tiles");
            diag_help(d, c->diags,
                      "add the missing role, or drop `role` to make "
                      "the memory a level of its own");
        }
    }
}

/* The parent of `decl` when its whole chain of parents is known, acyclic
 * and short enough; NULL otherwise (resolve_items reports why). */
static const Decl *sound_parent(Sema *s, const Decl *decl) {
    const Decl *chain[ARCH_MAX_INHERIT_DEPTH + 1];
    int n = 0;
    const Decl *cur = decl;
    while (cur->u.arch.parent.name) {
        GlobalEntry *g = globals_find(s->globals, cur->u.arch.parent.name);
        if (!g || g->decl->kind != DK_ARCH || n == ARCH_MAX_INHERIT_DEPTH) return NULL;
        for (int i = 0; i < n; i++)
            if (chain[i] == g->decl) return NULL;
        if (g->decl == decl) return NULL;
        chain[n++] = g->decl;
        cur = g->decl;
    }
    return n ? chain[0] : NULL;
}

IrArch *check_arch(Sema *s, const Decl *arch_decl, const ArchParams *params) {
    /* A parent with errors was reported where it is written; its children
     * stay quiet rather than repeat them. */
    const Decl *parent = sound_parent(s, arch_decl);
    if (parent && arch_has_defaults(s, parent) && !sema_arch_for(s, parent)) return NULL;
    ArchCtx *c = ARENA_NEW(s->arena, ArchCtx);
    c->s = s;
    c->arena = s->arena;
    c->diags = s->diags;
    c->env = s->env;
    if (params) {
        c->env.value_names = params->names;
        c->env.values = params->values;
        c->env.value_count = params->count;
    }
    c->decl = arch_decl;
    c->ok = true;
    IrArch *a = ARENA_NEW(s->arena, IrArch);
    a->name = arch_decl->name.name;
    a->span = arch_decl->span;
    a->clock_span = SPAN_NONE;
    if (params) {
        a->param_names = params->names;
        a->param_texts = params->texts;
        a->param_count = params->count;
    }
    c->arch = a;
    EffList *items = resolve_items(c, arch_decl);
    if (!items) return NULL;
    build_clock(c, items);
    Builder b = {0};
    /* exact sizes: each memory makes at most one level */
    int memories = 0, clusters = 0, units = 0, dims = 0;
    for (int i = 0; i < items->count; i++) {
        const EffItem *e = items->items[i];
        memories += e->kind == AI_MEMORY;
        clusters += e->kind == AI_CLUSTER;
        units += e->kind == AI_COMPUTE;
        if (e->kind == AI_CLUSTER) dims += e->dim_count;
    }
    b.memories = ARENA_ARRAY(c->arena, IrMemory, memories);
    b.levels = ARENA_ARRAY(c->arena, IrLevel, memories);
    b.clusters = ARENA_ARRAY(c->arena, IrCluster, clusters);
    b.units = ARENA_ARRAY(c->arena, IrCompute, units);
    b.role_reported = ARENA_ARRAY(c->arena, bool, memories + 1);
    b.dims = ARENA_ARRAY(c->arena, IrClusterDim, dims);
    bool split_open = false;
    for (int i = 0; i < items->count; i++) {
        EffItem *e = items->items[i];
        switch (e->kind) {
        case AI_MEMORY: build_memory(c, &b, e, &split_open); break;
        case AI_CLUSTER:
            split_open = false;
            build_cluster(c, &b, e);
            break;
        case AI_COMPUTE: build_compute(c, &b, e); break;
        case AI_ATTR:
        case AI_ERROR: break;
        }
    }
    /* Names of memories, clusters and units share one namespace per arch
     * (reported per declaration in resolve_items). */
    check_splits(c, &b);
    if (b.memory_count == 0 && !span_has_errors(c->diags, arch_decl->span)) {
        Diag *d =
            arch_error(c, arch_decl->name.span, "E0510", "arch `%s` declares no memory", a->name);
        diag_help(d, c->diags,
                  "add the outermost memory, e.g. `memory DRAM { "
                  "bandwidth 64 GB/s; }`");
    }
    int64_t all = 1;
    for (int i = 0; i < b.dim_count; i++)
        if (!checked_mul(all, b.dims[i].size, &all)) {
            arch_error(c, b.dims[i].span, "E0212",
                       "the cluster dimensions multiply to more than 2^63 instances");
            break;
        }
    for (int i = 0; i < b.unit_count; i++) b.units[i].instances = all;
    a->memories = b.memories;
    a->memory_count = b.memory_count;
    a->levels = b.levels;
    a->level_count = b.level_count;
    a->clusters = b.clusters;
    a->cluster_count = b.cluster_count;
    a->dims = b.dims;
    a->dim_count = b.dim_count;
    a->units = b.units;
    a->unit_count = b.unit_count;
    if (!c->ok) {
        s->partial_arch = a; /* its names, for the mappings on it */
        return NULL;
    }
    return a;
}

/* ---------------------------------------------------------- parameters */

/* The arch and its parents, the root first (n of them); the chain is sound
 * (sound_parent) or cut where it is not. */
static int arch_chain(Sema *s, const Decl *arch_decl, const Decl **chain) {
    int n = 0;
    for (const Decl *d = arch_decl; d && n <= ARCH_MAX_INHERIT_DEPTH; d = sound_parent(s, d))
        chain[n++] = d;
    for (int i = 0; i < n / 2; i++) {
        const Decl *t = chain[i];
        chain[i] = chain[n - 1 - i];
        chain[n - 1 - i] = t;
    }
    return n;
}

/* A binding in `list` (n of them) to a parameter named `name`, or NULL. */
static const ParamBinding *binding_for(const ParamBinding *list, int n, Name name) {
    for (int i = 0; i < n; i++)
        if (list[i].name.name == name) return &list[i];
    return NULL;
}

bool arch_has_defaults(Sema *s, const Decl *arch_decl) {
    const Decl *chain[ARCH_MAX_INHERIT_DEPTH + 2];
    int links = arch_chain(s, arch_decl, chain);
    for (int k = 0; k < links; k++)
        for (int p = 0; p < chain[k]->u.arch.param_count; p++) {
            const Param *pd = &chain[k]->u.arch.params[p];
            if (pd->default_value) continue;
            /* a child's parent binding gives it a value */
            bool bound = false;
            for (int j = k + 1; j < links && !bound; j++)
                bound = binding_for(chain[j]->u.arch.parent_bindings,
                                    chain[j]->u.arch.parent_binding_count, pd->name.name) != NULL;
            if (!bound) return false;
        }
    return true;
}

/* Reports the bindings in `list` that name no parameter in scope of the
 * chain's first `upto` archs (the parents a parent binding may bind), or
 * name one twice.  `owner` is the arch the list binds. */
static bool check_binding_names(Sema *s, const ParamBinding *list, int n, const Decl *const *chain,
                                int upto, const char *owner, const ArchParams *in_scope) {
    bool ok = true;
    for (int i = 0; i < n; i++) {
        Name name = list[i].name.name;
        if (!name) {
            ok = false;
            continue;
        }
        int found = -1;
        for (int k = 0; k < upto && found < 0; k++)
            for (int p = 0; p < chain[k]->u.arch.param_count; p++)
                if (chain[k]->u.arch.params[p].name.name == name) found = k;
        if (found < 0) {
            Diag *d = diag_error(s->diags, list[i].name.span, "E0226",
                                 "arch `%s` has no parameter `%s`", owner, name);
            const char *best = spell_suggest(name, (const char **)in_scope->names, in_scope->count);
            if (best)
                diag_help(d, s->diags, "did you mean `%s`?", best);
            else if (in_scope->count == 0)
                diag_note(d, s->diags, "`%s` takes no parameters", owner);
            ok = false;
            continue;
        }
        for (int k = 0; k < i; k++)
            if (list[k].name.name == name) {
                Diag *d = diag_error(s->diags, list[i].name.span, "E0228",
                                     "parameter `%s` is given twice", name);
                diag_label(d, s->diags, list[k].name.span, "first given here");
                ok = false;
                break;
            }
    }
    return ok;
}

bool arch_bind_params(Sema *s, const Decl *arch_decl, const ParamBinding *bindings,
                      int binding_count, Span use_site, ArchParams *out) {
    const Decl *chain[ARCH_MAX_INHERIT_DEPTH + 2];
    int links = arch_chain(s, arch_decl, chain);
    int total = 0;
    for (int k = 0; k < links; k++) total += chain[k]->u.arch.param_count;
    out->names = ARENA_ARRAY(s->arena, Name, total + 1);
    out->values = ARENA_ARRAY(s->arena, Value, total + 1);
    out->texts = ARENA_ARRAY(s->arena, const char *, total + 1);
    out->count = 0;
    bool ok = true;
    ConstEnv env = s->env;
    env.expr_depth = 0;
    for (int k = 0; k < links; k++) {
        const ArchDecl *ad = &chain[k]->u.arch;
        /* the parameters before this arch's: what its parent binding binds
         * (reported with the arch's own check, at its defaults) */
        if (ad->parent_binding_count > 0 && k > 0 && k == links - 1 && !bindings)
            ok &= check_binding_names(s, ad->parent_bindings, ad->parent_binding_count, chain, k,
                                      chain[k - 1]->name.name, out);
        for (int p = 0; p < ad->param_count; p++) {
            const Param *pd = &ad->params[p];
            Name name = pd->name.name;
            if (!name) {
                ok = false;
                continue;
            }
            bool twice = false;
            for (int q = 0; q < out->count && !twice; q++) twice = out->names[q] == name;
            if (twice) {
                Diag *d = diag_error(s->diags, pd->name.span, "E0228",
                                     "arch `%s` declares parameter `%s` twice", chain[k]->name.name,
                                     name);
                for (int j = 0; j <= k; j++)
                    for (int q = 0; q < chain[j]->u.arch.param_count; q++)
                        if (chain[j]->u.arch.params[q].name.name == name &&
                            &chain[j]->u.arch.params[q] != pd) {
                            diag_label(d, s->diags, chain[j]->u.arch.params[q].name.span,
                                       "`%s` is declared here%s", name,
                                       j < k ? " (in a parent)" : "");
                            j = k + 1;
                            break;
                        }
                diag_help(d, s->diags,
                          "a child arch rebinds its parent's parameter in the header: `arch %s : "
                          "%s<%s = ...>`",
                          chain[k]->name.name, k > 0 ? chain[k - 1]->name.name : "parent", name);
                ok = false;
                continue;
            }
            /* the value: the use site's binding, else the nearest child's
             * parent binding, else the default */
            Value def = {.kind = VK_ERROR};
            env.value_names = out->names;
            env.values = out->values;
            env.value_count = out->count; /* earlier parameters are visible */
            if (pd->default_value) {
                env.diags = s->diags;
                env.where = subject_of("the default of ", name);
                def = const_eval(&env, pd->default_value);
                if (def.kind == VK_ERROR) ok = false;
            }
            const ParamBinding *b = binding_for(bindings, binding_count, name);
            for (int j = links - 1; !b && j > k; j--)
                b = binding_for(chain[j]->u.arch.parent_bindings,
                                chain[j]->u.arch.parent_binding_count, name);
            Value v = def;
            if (b) {
                ConstEnv benv = s->env;
                benv.expr_depth = 0;
                benv.where = subject_of("parameter ", name);
                v = const_eval(&benv, b->value);
                if (v.kind == VK_ERROR) {
                    ok = false;
                } else if (pd->default_value && !value_fits(def, v)) {
                    Diag *d = diag_error(s->diags, b->value->span, "E0227",
                                         "parameter `%s` of arch `%s` takes %s, got %s", name,
                                         chain[k]->name.name, value_kind_text(s->arena, def),
                                         span_text(s->arena, s->prog->sources, b->value->span));
                    diag_label(d, s->diags, pd->default_value->span, "its default is %s",
                               value_text(s->arena, def));
                    if (v.kind == VK_QUANTITY)
                        diag_note(d, s->diags, "`%s` is %s",
                                  span_text(s->arena, s->prog->sources, b->value->span),
                                  value_kind_text(s->arena, v));
                    ok = false;
                    v = def;
                }
            } else if (!pd->default_value) {
                Diag *d = diag_error(s->diags, use_site, "E0229",
                                     "parameter `%s` of arch `%s` has no value", name,
                                     chain[k]->name.name);
                diag_label(d, s->diags, pd->name.span, "declared here without a default");
                diag_help(d, s->diags, "give it one: `%s<%s = ...>`", arch_decl->name.name, name);
                ok = false;
            }
            out->names[out->count] = name;
            out->values[out->count] = v;
            out->texts[out->count] = value_text(s->arena, v);
            out->count++;
        }
    }
    /* the use site's bindings name parameters of the arch or its parents */
    if (binding_count > 0)
        ok &= check_binding_names(s, bindings, binding_count, chain, links, arch_decl->name.name,
                                  out);
    return ok;
}
