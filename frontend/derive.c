/* derive.c — the backward op of an op, by reverse-mode differentiation of
 * its einsum cascade (docs/language.md 5.8).  The result is syntax: a new
 * op declaration whose statements compute the gradient of every `in`
 * tensor from a gradient given for every `out` tensor, checked and
 * lowered like any op, so its collectives, fusion and costs come from the
 * same rules as the forward pass's.
 *
 * For a statement T[L] = R(r) body (R a sum, mean, max or min over the
 * indices r, or none) and an access X[a] of its body, the part of X's
 * gradient that comes through T is
 *
 *     dX_T[a] = sum(I \ a) dT[L] * w * ∂body/∂X[a]
 *
 * over the statement's indices I that a does not name, with w = 1 for a
 * sum or none, 1 / (extent of r) for a mean, and eq(body, T[L]) (the
 * argmax mask) for a max or a min.  X's gradient is the sum of its parts. */
#include "sema.h"

#include <stdio.h>
#include <string.h>

/* One tensor of the forward op. */
typedef struct FwdTensor {
    Name name;
    const TensorDecl *decl; /* in, out; NULL for an intermediate */
    ElemType type;          /* its element type in the forward op */
    int producer;           /* defining statement, -1 for an input */
    bool from_input;        /* depends on an `in` tensor */
    bool reaches_output;    /* an `out` tensor depends on it */
    Name grad;              /* the name of its whole gradient */
    int parts;              /* gradient parts that flow into it */
    int parts_done;         /* parts already written */
    Name *part_names;       /* [parts] */
    IdentList part_indices; /* the indices the first part wrote it with */
    bool saved;             /* read by the backward op: an `in` there */
} FwdTensor;

/* One part of a gradient: what flows into X through statement `stmt`. */
typedef struct Part {
    int tensor; /* X */
    int stmt;
    IdentList indices; /* X's access in that statement */
    Expr *rhs;         /* ∂body/∂X[indices], then the part's whole right side */
} Part;

typedef struct Accesses {
    const Expr **items;
    int count;
} Accesses;

/* A partial sum of a gradient's parts (add_total): an intermediate. */
typedef struct SumVar {
    Name name;
    ElemType type;
    Span span;
} SumVar;

typedef struct Deriver {
    Sema *s;
    Arena *a;
    const Decl *fwd;
    Span use; /* the `phase backward` line that asked */
    Phase phase;
    const bool *recompute; /* [forward statement]: recomputed, not kept */
    bool every;            /* copy each marked statement, read or not */
    Name *recomputed;      /* [forward tensor]: the recomputed copy's name */
    /* [forward statement]: the restriction it runs under, its own `where`
     * or the one it inherits (docs/language.md 3.8); NULL for none */
    const Where **restriction;
    /* [forward statement]: its right side with every scalar tensor read
     * written `total` made an access `total[]`, as the rules above read */
    Expr **rhs;
    Accesses *reads; /* [forward statement]: the distinct accesses of rhs */
    const OpDecl *od;
    FwdTensor *t;
    int tensor_count;
    Name *index_names; /* every index the op names */
    Expr **index_extent;
    int index_count;
    Part *parts;
    int part_count, part_cap;
    NameMap used;     /* names taken in the derived op */
    NameMap fwd_of;   /* forward tensor name -> its FwdTensor */
    NameMap index_of; /* index name -> its entry in index_names */
    Stmt **stmts;
    int stmt_count, stmt_cap;
    /* partial sums of gradients with many parts: intermediates too */
    SumVar *sums;
    int sum_count, sum_cap;
    StmtRole role; /* of the statements add_stmt writes now */
    bool failed;
} Deriver;

/* ------------------------------------------------------------- names */

/* items with room for one more: arrays here grow by doubling in the
 * arena (the old storage is left to it). */
static void *room_for_one(Arena *a, void *items, int count, int *cap, size_t size) {
    if (count < *cap) return items;
    int grown_cap = *cap ? 2 * *cap : 16;
    void *grown = arena_alloc(a, size * (size_t)grown_cap);
    if (count) memcpy(grown, items, size * (size_t)count);
    *cap = grown_cap;
    return grown;
}

static bool name_taken(const Deriver *d, Name n) {
    return name_map_get(&d->used, n) >= 0;
}

static void take_name(Deriver *d, Name n) {
    name_map_put(d->a, &d->used, n, 0);
}

/* `base`, else `base_1`, `base_2`, ...: the first name the op does not
 * use yet. */
static Name fresh_name(Deriver *d, const char *base) {
    Name n = intern_cstr(base);
    for (int k = 1; name_taken(d, n); k++) n = intern_cstr(arena_printf(d->a, "%s_%d", base, k));
    take_name(d, n);
    return n;
}

static int find_fwd(const Deriver *d, Name n) {
    return name_map_get(&d->fwd_of, n);
}

static int add_fwd(Deriver *d, FwdTensor t) {
    name_map_put(d->a, &d->fwd_of, t.name, d->tensor_count);
    d->t[d->tensor_count] = t;
    return d->tensor_count++;
}

static int find_index(const Deriver *d, Name n) {
    return name_map_get(&d->index_of, n);
}

static void note_index(Deriver *d, Name n) {
    if (!n || find_index(d, n) >= 0) return;
    name_map_put(d->a, &d->index_of, n, d->index_count);
    d->index_names[d->index_count++] = n;
}

/* ------------------------------------------------------ expressions */

static Expr *new_expr(Deriver *d, ExprKind kind, Span span) {
    Expr *e = arena_alloc(d->a, expr_size(kind));
    memset(e, 0, expr_size(kind));
    e->kind = kind;
    e->span = span;
    e->depth = 1;
    return e;
}

static uint32_t deeper(const Expr *a, const Expr *b) {
    uint32_t x = a ? a->depth : 0, y = b ? b->depth : 0;
    return 1 + (x > y ? x : y);
}

static Expr *number(Deriver *d, double v, Span span) {
    if (v == (double)(int64_t)v && v >= 0) {
        Expr *e = new_expr(d, EX_INT, span);
        e->u.int_value = (int64_t)v;
        return e;
    }
    Expr *e = new_expr(d, EX_REAL, span);
    e->u.real_value = v;
    return e;
}

static bool is_number(const Expr *e, double v) {
    if (!e) return false;
    if (e->kind == EX_INT) return (double)e->u.int_value == v;
    if (e->kind == EX_REAL) return e->u.real_value == v;
    return false;
}

/* NULL stands for a zero that is known when the expression is built, so
 * the gradient of `A * B` with respect to A is `B`, not `1 * B + A * 0`. */
static Expr *neg(Deriver *d, Expr *x, Span span) {
    if (!x) return NULL;
    if (x->kind == EX_UNARY) return x->u.unary.operand;
    Expr *e = new_expr(d, EX_UNARY, span);
    e->u.unary.op = '-';
    e->u.unary.operand = x;
    e->depth = deeper(x, NULL);
    return e;
}

static Expr *binary(Deriver *d, char op, Expr *x, Expr *y, Span span) {
    switch (op) {
    case '+':
        if (!x) return y;
        if (!y) return x;
        if (y->kind == EX_UNARY) return binary(d, '-', x, y->u.unary.operand, span);
        break;
    case '-':
        if (!y) return x;
        if (!x) return neg(d, y, span);
        break;
    case '*':
        if (!x || !y) return NULL;
        if (is_number(x, 1)) return y;
        if (is_number(y, 1)) return x;
        /* x * (1 / y) is x / y */
        if (y->kind == EX_BINARY && y->u.binary.op == '/' && is_number(y->u.binary.lhs, 1))
            return binary(d, '/', x, y->u.binary.rhs, span);
        if (x->kind == EX_UNARY) return neg(d, binary(d, '*', x->u.unary.operand, y, span), span);
        if (y->kind == EX_UNARY) return neg(d, binary(d, '*', x, y->u.unary.operand, span), span);
        break;
    case '/':
        if (!x) return NULL;
        if (is_number(y, 1)) return x;
        if (x->kind == EX_UNARY) return neg(d, binary(d, '/', x->u.unary.operand, y, span), span);
        break;
    }
    Expr *e = new_expr(d, EX_BINARY, span);
    e->u.binary.op = op;
    e->u.binary.lhs = x;
    e->u.binary.rhs = y;
    e->depth = deeper(x, y);
    return e;
}

static Expr *call(Deriver *d, const char *fn, Expr *x, Expr *y, Span span) {
    Expr *e = new_expr(d, EX_CALL, span);
    e->u.call.fn = (Ident){intern_cstr(fn), span, false};
    e->u.call.arg_count = y ? 2 : 1;
    e->u.call.args = ARENA_ARRAY(d->a, Expr *, 2);
    e->u.call.args[0] = x;
    e->u.call.args[1] = y;
    e->depth = deeper(x, y);
    return e;
}

static Expr *access(Deriver *d, Name tensor, IdentList indices, Span span) {
    Expr *e = new_expr(d, EX_ACCESS, span);
    e->u.access.tensor = (Ident){tensor, span, false};
    e->u.access.indices = indices;
    return e;
}

static bool same_indices(const IdentList *a, const IdentList *b) {
    if (a->count != b->count) return false;
    for (int i = 0; i < a->count; i++)
        if (a->items[i].name != b->items[i].name) return false;
    return true;
}

/* Whether e reads tensor[indices]. */
typedef struct Mention {
    Name tensor;
    const IdentList *indices;
    bool found;
} Mention;

static void mention_leaf(const Expr *e, void *ctx) {
    Mention *m = ctx;
    m->found |= e->kind == EX_ACCESS && e->u.access.tensor.name == m->tensor &&
                same_indices(&e->u.access.indices, m->indices);
}

static bool mentions(const Expr *e, Name tensor, const IdentList *indices) {
    Mention m = {tensor, indices, false};
    expr_for_each_read(e, mention_leaf, &m);
    return m.found;
}

/* The derivative of a one-argument function at u, given the call f(u)
 * itself; `result` is T[L] when f(u) is the whole right side of T (then
 * exp, tanh and sigmoid reuse the value the forward pass kept). */
static Expr *fn_derivative(Deriver *d, const Expr *c, Expr *u, Expr *result) {
    const char *fn = c->u.call.fn.name;
    Span sp = c->span;
    Expr *f = result ? result : (Expr *)c;
    if (strcmp(fn, "exp") == 0) return f;
    if (strcmp(fn, "log") == 0) return call(d, "recip", u, NULL, sp);
    if (strcmp(fn, "sqrt") == 0)
        return binary(d, '*', number(d, 0.5, sp), call(d, "rsqrt", u, NULL, sp), sp);
    if (strcmp(fn, "rsqrt") == 0)
        return neg(d, binary(d, '/', binary(d, '*', number(d, 0.5, sp), f, sp), u, sp), sp);
    if (strcmp(fn, "recip") == 0) return neg(d, binary(d, '*', f, f, sp), sp);
    if (strcmp(fn, "abs") == 0) return call(d, "sign", u, NULL, sp);
    if (strcmp(fn, "tanh") == 0)
        return binary(d, '-', number(d, 1, sp), binary(d, '*', f, f, sp), sp);
    if (strcmp(fn, "sigmoid") == 0)
        return binary(d, '*', f, binary(d, '-', number(d, 1, sp), f, sp), sp);
    if (strcmp(fn, "relu") == 0) return call(d, "step", u, NULL, sp);
    if (strcmp(fn, "gelu") == 0) return call(d, "dgelu", u, NULL, sp);
    if (strcmp(fn, "silu") == 0) {
        /* silu(u) = u sigmoid(u): sigmoid(u) (1 + u (1 - sigmoid(u))) */
        Expr *sg = call(d, "sigmoid", u, NULL, sp);
        return binary(d, '*', sg,
                      binary(d, '+', number(d, 1, sp),
                             binary(d, '*', u, binary(d, '-', number(d, 1, sp), sg, sp), sp), sp),
                      sp);
    }
    return NULL; /* no gradient (step, sign, dgelu): reported by the caller */
}

/* ∂e/∂X[indices], or NULL when it is zero.  `result` as above, for e the
 * whole right side. */
static Expr *partial(Deriver *d, const Expr *e, Name x, const IdentList *ix, Expr *result) {
    /* a subtree without X gives NULL by the rules below, each node visited
     * once: asking `mentions` at every node made this quadratic */
    if (d->failed || !e) return NULL;
    Span sp = e->span;
    switch (e->kind) {
    case EX_ACCESS:
        return e->u.access.tensor.name == x && same_indices(&e->u.access.indices, ix)
                   ? number(d, 1, sp)
                   : NULL;
    case EX_UNARY: return neg(d, partial(d, e->u.unary.operand, x, ix, NULL), sp);
    case EX_BINARY: {
        Expr *u = e->u.binary.lhs, *v = e->u.binary.rhs;
        Expr *du = partial(d, u, x, ix, NULL), *dv = partial(d, v, x, ix, NULL);
        switch (e->u.binary.op) {
        case '+': return binary(d, '+', du, dv, sp);
        case '-': return binary(d, '-', du, dv, sp);
        case '*': return binary(d, '+', binary(d, '*', du, v, sp), binary(d, '*', u, dv, sp), sp);
        default: /* u / v: du / v - u dv / (v v) */
            return binary(d, '-', binary(d, '/', du, v, sp),
                          binary(d, '/', binary(d, '*', u, dv, sp), binary(d, '*', v, v, sp), sp),
                          sp);
        }
    }
    case EX_CALL: {
        const char *fn = e->u.call.fn.name;
        if (e->u.call.arg_count == 2) {
            Expr *u = e->u.call.args[0], *v = e->u.call.args[1];
            Expr *du = partial(d, u, x, ix, NULL), *dv = partial(d, v, x, ix, NULL);
            if (!du && !dv) return NULL;
            if (strcmp(fn, "max") == 0 || strcmp(fn, "min") == 0) {
                /* the argument that is taken: step(u - v) picks u for max */
                bool is_max = strcmp(fn, "max") == 0;
                Expr *pick_u =
                    call(d, "step", is_max ? binary(d, '-', u, v, sp) : binary(d, '-', v, u, sp),
                         NULL, sp);
                Expr *pick_v = binary(d, '-', number(d, 1, sp), pick_u, sp);
                return binary(d, '+', binary(d, '*', pick_u, du, sp),
                              binary(d, '*', pick_v, dv, sp), sp);
            }
        } else {
            Expr *u = e->u.call.args[0];
            Expr *du = partial(d, u, x, ix, NULL);
            if (!du) return NULL;
            Expr *fd = fn_derivative(d, e, u, result);
            if (fd) return binary(d, '*', fd, du, sp);
        }
        Diag *g = diag_error(d->s->diags, e->u.call.fn.span, "E0328",
                             "`%s` has no gradient: the backward pass of `%s` cannot go through it",
                             fn, d->fwd->name.name);
        if (strcmp(fn, "dgelu") == 0)
            diag_note(g, d->s->diags,
                      "dgelu is itself a derivative; second derivatives are not derived");
        else
            diag_note(g, d->s->diags,
                      "`%s` is piecewise constant (its derivative is zero wherever it exists), "
                      "so the gradient of what it reads would be lost silently",
                      fn);
        diag_label(g, d->s->diags, d->use, "the backward pass is asked for here");
        diag_help(g, d->s->diags,
                  "keep it out of the path from an `in` tensor to an `out` tensor, or map the "
                  "op forward only");
        d->failed = true;
        return NULL;
    }
    default: return NULL;
    }
}

/* ---------------------------------------------------------- the op */

static IdentList ident_list_of(Deriver *d, const Name *names, int count, Span span) {
    IdentList l = {ARENA_ARRAY(d->a, Ident, count + 1), count};
    for (int i = 0; i < count; i++) l.items[i] = (Ident){names[i], span, false};
    return l;
}

static void push_stmt(Deriver *d, Stmt *st) {
    d->stmts = room_for_one(d->a, d->stmts, d->stmt_count, &d->stmt_cap, sizeof(Stmt *));
    d->stmts[d->stmt_count++] = st;
}

static void add_stmt(Deriver *d, Name target, IdentList indices, Expr *rhs, const Where *where,
                     Span span) {
    if (rhs && rhs->depth > MAX_EXPR_DEPTH && !d->failed) {
        /* every walk of an expression is bounded by the parser's cap */
        Diag *g = diag_error(d->s->diags, span, "E0328",
                             "the gradient `%s` of this statement nests %u deep, past the %d "
                             "an expression may",
                             target, rhs->depth, MAX_EXPR_DEPTH);
        diag_label(g, d->s->diags, d->use, "the backward pass is asked for here");
        diag_help(g, d->s->diags, "split the statement into several");
        d->failed = true;
    }
    Stmt *st = ARENA_NEW(d->a, Stmt);
    st->target = (Ident){target, span, false};
    st->indices = indices;
    st->rhs = rhs;
    st->where = (Where *)where;
    st->role = d->role;
    st->span = span;
    push_stmt(d, st);
}

/* Reads of forward tensors by the backward op's statements: those become
 * its `in` tensors (the forward pass keeps them). */
static void saved_leaf(const Expr *e, void *ctx) {
    Deriver *d = ctx;
    int t = e->kind == EX_ACCESS ? find_fwd(d, e->u.access.tensor.name) : -1;
    if (t >= 0) d->t[t].saved = true;
}

static void mark_saved(Deriver *d, const Expr *e) {
    expr_for_each_read(e, saved_leaf, d);
}

/* e with every leaf (an access or a bare name) replaced by what `rule`
 * gives for it; shared where nothing changes. */
typedef Expr *(*LeafRule)(Deriver *d, Expr *leaf);

static Expr *rewritten(Deriver *d, Expr *e, LeafRule rule) {
    if (!e) return e;
    switch (e->kind) {
    case EX_ACCESS:
    case EX_NAME: return rule(d, e);
    case EX_UNARY: {
        Expr *x = rewritten(d, e->u.unary.operand, rule);
        if (x == e->u.unary.operand) return e;
        Expr *c = new_expr(d, EX_UNARY, e->span);
        c->u.unary = e->u.unary;
        c->u.unary.operand = x;
        c->depth = e->depth;
        return c;
    }
    case EX_BINARY: {
        Expr *x = rewritten(d, e->u.binary.lhs, rule), *y = rewritten(d, e->u.binary.rhs, rule);
        if (x == e->u.binary.lhs && y == e->u.binary.rhs) return e;
        Expr *c = new_expr(d, EX_BINARY, e->span);
        c->u.binary.op = e->u.binary.op;
        c->u.binary.lhs = x;
        c->u.binary.rhs = y;
        c->depth = e->depth;
        return c;
    }
    case EX_CALL: {
        Expr **args = ARENA_ARRAY(d->a, Expr *, e->u.call.arg_count + 1);
        bool changed = false;
        for (int i = 0; i < e->u.call.arg_count; i++) {
            args[i] = rewritten(d, e->u.call.args[i], rule);
            changed |= args[i] != e->u.call.args[i];
        }
        if (!changed) return e;
        Expr *c = new_expr(d, EX_CALL, e->span);
        c->u.call = e->u.call;
        c->u.call.args = args;
        c->depth = e->depth;
        return c;
    }
    case EX_REDUCE: {
        Expr *body = rewritten(d, e->u.reduce.body, rule);
        if (body == e->u.reduce.body) return e;
        Expr *c = new_expr(d, EX_REDUCE, e->span);
        c->u.reduce = e->u.reduce;
        c->u.reduce.body = body;
        c->depth = e->depth;
        return c;
    }
    default: return e;
    }
}

/* A read of a recomputed forward tensor reads its copy. */
static Expr *recomputed_leaf(Deriver *d, Expr *e) {
    if (e->kind != EX_ACCESS) return e;
    int t = find_fwd(d, e->u.access.tensor.name);
    if (t < 0 || !d->recomputed[t]) return e;
    return access(d, d->recomputed[t], e->u.access.indices, e->span);
}

static Expr *renamed(Deriver *d, Expr *e) {
    return d->recomputed ? rewritten(d, e, recomputed_leaf) : e;
}

static void count_leaf(const Expr *e, void *ctx) {
    (void)e;
    (*(int *)ctx)++;
}

static int leaf_count(const Expr *e) {
    int n = 0;
    expr_for_each_read(e, count_leaf, &n);
    return n;
}

static void access_leaf(const Expr *e, void *ctx) {
    Accesses *l = ctx;
    if (e->kind != EX_ACCESS) return;
    for (int i = 0; i < l->count; i++)
        if (l->items[i]->u.access.tensor.name == e->u.access.tensor.name &&
            same_indices(&l->items[i]->u.access.indices, &e->u.access.indices))
            return;
    l->items[l->count++] = e;
}

/* The distinct accesses of e (tensor and index list), in source order. */
static Accesses accesses_of(Deriver *d, const Expr *e) {
    Accesses l = {ARENA_ARRAY(d->a, const Expr *, leaf_count(e) + 1), 0};
    expr_for_each_read(e, access_leaf, &l);
    return l;
}

static void add_part(Deriver *d, Part p) {
    d->parts = room_for_one(d->a, d->parts, d->part_count, &d->part_cap, sizeof(Part));
    d->parts[d->part_count++] = p;
}

/* Every index the statement iterates: its left side, then the indices of
 * its right side in order of appearance. */
typedef struct IndexList {
    Name *items;
    int count, cap;
} IndexList;

static void index_leaf(const Expr *e, void *ctx) {
    IndexList *l = ctx;
    if (e->kind != EX_ACCESS) return;
    for (int i = 0; i < e->u.access.indices.count; i++) {
        Name x = e->u.access.indices.items[i].name;
        bool seen = false;
        for (int k = 0; k < l->count; k++) seen |= l->items[k] == x;
        if (!seen && x && l->count < l->cap) l->items[l->count++] = x;
    }
}

static int stmt_indices(const Stmt *st, Name *out, int cap) {
    IndexList l = {out, 0, cap};
    for (int i = 0; i < st->indices.count && l.count < cap; i++)
        out[l.count++] = st->indices.items[i].name;
    expr_for_each_read(st->rhs, index_leaf, &l);
    return l.count;
}

typedef struct IndexUse {
    Name index;
    bool found;
} IndexUse;

static void index_use_leaf(const Expr *e, void *ctx) {
    IndexUse *u = ctx;
    for (int i = 0; e->kind == EX_ACCESS && i < e->u.access.indices.count; i++)
        u->found |= e->u.access.indices.items[i].name == u->index;
}

static bool expr_uses_index(const Expr *e, Name ix) {
    IndexUse u = {ix, false};
    expr_for_each_read(e, index_use_leaf, &u);
    return u.found;
}

/* A forward tensor read by its bare name (a scalar, `total`) is an access
 * with no indices (`total[]`), as the rules above read it. */
static Expr *scalar_leaf(Deriver *d, Expr *e) {
    if (e->kind != EX_NAME || find_fwd(d, e->u.name) < 0) return e; /* a parameter or const */
    return access(d, e->u.name, (IdentList){0}, e->span);
}

/* The index of a `where` right side (`n`, or `n + c`), or NULL. */
static const Expr *where_index(const Expr *e) {
    if (e && e->kind == EX_BINARY && (e->u.binary.op == '+' || e->u.binary.op == '-'))
        e = e->u.binary.lhs;
    return e && e->kind == EX_NAME ? e : NULL;
}

static int position_in(const IdentList *l, Name n) {
    for (int i = 0; i < l->count; i++)
        if (l->items[i].name == n) return i;
    return -1;
}

/* The restriction every forward statement runs under, as the checker
 * gives it (docs/language.md 3.8): its own `where`, else the one of the
 * first tensor it reads that was made under a restriction between two of
 * its dimensions, in the reader's index names.  The gradient statements
 * of a statement run under its restriction too: a masked point has no
 * gradient, and a kernel skips its tiles in the backward pass as in the
 * forward one.  (The backward op reads the kept tensors as `in` tensors,
 * which carry no restriction of their own.) */
static void find_restrictions(Deriver *d) {
    const OpDecl *od = d->od;
    d->restriction = ARENA_ARRAY(d->a, const Where *, od->stmt_count + 1);
    for (int k = 0; k < od->stmt_count; k++) {
        const Stmt *st = od->stmts[k];
        if (st->where) {
            d->restriction[k] = st->where;
            continue;
        }
        const Expr *const *acc = d->reads[k].items;
        for (int q = 0; q < d->reads[k].count && !d->restriction[k]; q++) {
            int t = find_fwd(d, acc[q]->u.access.tensor.name);
            int j = t >= 0 ? d->t[t].producer : -1;
            if (j < 0 || j >= k || !d->restriction[j]) continue;
            const Where *w = d->restriction[j];
            const Expr *b = where_index(w->rhs);
            const IdentList *made = &od->stmts[j]->indices;
            int pa = position_in(made, w->lhs.name), pb = b ? position_in(made, b->u.name) : -1;
            const IdentList *ix = &acc[q]->u.access.indices;
            /* a result reduced over a restricted index is complete */
            if (pa < 0 || pb < 0 || pa >= ix->count || pb >= ix->count) continue;
            Name na = ix->items[pa].name, nb = ix->items[pb].name;
            if (na == nb) continue;
            Where *inherited = ARENA_NEW(d->a, Where);
            *inherited = *w;
            inherited->lhs = (Ident){na, w->lhs.span, false};
            Expr *rb = new_expr(d, EX_NAME, b->span);
            rb->u.name = nb;
            if (w->rhs != b) { /* n + c: the same offset */
                Expr *sum = new_expr(d, EX_BINARY, w->rhs->span);
                sum->u.binary = w->rhs->u.binary;
                sum->u.binary.lhs = rb;
                sum->depth = w->rhs->depth;
                rb = sum;
            }
            inherited->rhs = rb;
            d->restriction[k] = inherited;
        }
    }
}

/* The extent of every index as an expression of the op's parameters: from
 * the dimensions of the `in` and `out` tensors it addresses, carried
 * through the intermediates that rename it. */
static void resolve_extents(Deriver *d) {
    for (bool changed = true; changed;) {
        changed = false;
        for (int k = 0; k < d->od->stmt_count; k++) {
            const Stmt *st = d->od->stmts[k];
            /* the accesses of the right side, then the left side as an
             * access of the target */
            for (int q = 0; q <= d->reads[k].count; q++) {
                bool lhs = q == d->reads[k].count;
                Name name = lhs ? st->target.name : d->reads[k].items[q]->u.access.tensor.name;
                int t = find_fwd(d, name);
                if (t < 0) continue;
                const IdentList *ix = lhs ? &st->indices : &d->reads[k].items[q]->u.access.indices;
                const FwdTensor *T = &d->t[t];
                const IdentList *made =
                    T->producer >= 0 ? &d->od->stmts[T->producer]->indices : NULL;
                for (int p = 0; p < ix->count; p++) {
                    int i = find_index(d, ix->items[p].name);
                    if (i < 0) continue;
                    Expr *from = NULL;
                    if (T->decl && p < T->decl->dim_count)
                        from = T->decl->dims[p];
                    else if (made && p < made->count) {
                        int j = find_index(d, made->items[p].name);
                        if (j >= 0) {
                            from = d->index_extent[j];
                            if (!from && d->index_extent[i]) {
                                d->index_extent[j] = d->index_extent[i];
                                changed = true;
                            }
                        }
                    }
                    if (from && !d->index_extent[i]) {
                        d->index_extent[i] = from;
                        changed = true;
                    }
                }
            }
        }
    }
}

static Expr **dims_of(Deriver *d, const FwdTensor *T, int *count) {
    if (T->decl) {
        *count = T->decl->dim_count;
        return T->decl->dims;
    }
    const IdentList *made = &d->od->stmts[T->producer]->indices;
    Expr **dims = ARENA_ARRAY(d->a, Expr *, made->count + 1);
    for (int p = 0; p < made->count; p++) {
        int i = find_index(d, made->items[p].name);
        dims[p] = i >= 0 ? d->index_extent[i] : NULL;
        if (!dims[p]) return NULL;
    }
    *count = made->count;
    return dims;
}

static TensorDecl *add_decl(Deriver *d, TensorDecl ***list, int *count, int *cap, TensorRole role,
                            Name name, Expr **dims, int dim_count, ElemType type, Span span) {
    *list = room_for_one(d->a, *list, *count, cap, sizeof(TensorDecl *));
    TensorDecl *td = ARENA_NEW(d->a, TensorDecl);
    td->role = role;
    td->name = (Ident){name, span, false};
    td->dims = role == TR_VAR ? NULL : dims;
    td->dim_count = role == TR_VAR ? 0 : dim_count;
    td->type = type;
    td->type_span = span;
    td->span = span;
    (*list)[(*count)++] = td;
    return td;
}

/* The whole gradient of tensor t as an access with the given indices. */
static Expr *grad_access(Deriver *d, int t, IdentList indices, Span span) {
    return access(d, d->t[t].grad, indices, span);
}

/* The right side of a part: dT[L] * w * P summed over what X's access
 * does not name. */
static Expr *part_rhs(Deriver *d, const Part *p) {
    const Stmt *st = d->od->stmts[p->stmt];
    int T = find_fwd(d, st->target.name);
    Span sp = st->span;
    const Expr *rhs = d->rhs[p->stmt];
    const Expr *body = rhs->kind == EX_REDUCE ? rhs->u.reduce.body : rhs;
    const char *red = rhs->kind == EX_REDUCE ? rhs->u.reduce.fn.name : "sum";
    Expr *g = grad_access(d, T, st->indices, sp);
    if (strcmp(red, "max") == 0 || strcmp(red, "min") == 0)
        g = binary(d, '*', g,
                   call(d, "eq", (Expr *)body, access(d, st->target.name, st->indices, sp), sp),
                   sp);
    /* the operands of a product keep their places: the gradient of the
     * second operand of u * v is u * dT, so a contraction's roles carry */
    bool second = body->kind == EX_BINARY && body->u.binary.op == '*' &&
                  mentions(body->u.binary.rhs, d->t[p->tensor].name, &p->indices) &&
                  !mentions(body->u.binary.lhs, d->t[p->tensor].name, &p->indices);
    g = second ? binary(d, '*', p->rhs, g, sp) : binary(d, '*', g, p->rhs, sp);
    if (strcmp(red, "mean") == 0) {
        Expr *count = NULL;
        for (int i = 0; i < rhs->u.reduce.indices.count; i++) {
            int x = find_index(d, rhs->u.reduce.indices.items[i].name);
            Expr *ext = x >= 0 ? d->index_extent[x] : NULL;
            count = count ? binary(d, '*', count, ext, sp) : ext;
        }
        if (count) g = binary(d, '/', g, count, sp);
    }
    Name all[2 * IR_MAX_RANK + 8];
    int n = stmt_indices(st, all, (int)(sizeof all / sizeof all[0]));
    Name summed[2 * IR_MAX_RANK + 8];
    int m = 0;
    for (int i = 0; i < n; i++) {
        bool named = false;
        for (int q = 0; q < p->indices.count; q++) named |= p->indices.items[q].name == all[i];
        if (named) continue;
        if (expr_uses_index(g, all[i])) {
            summed[m++] = all[i];
            continue;
        }
        /* a sum over an index nothing reads is a count */
        int x = find_index(d, all[i]);
        if (x >= 0 && d->index_extent[x]) g = binary(d, '*', g, d->index_extent[x], sp);
    }
    if (m == 0) return g;
    Expr *e = new_expr(d, EX_REDUCE, sp);
    e->u.reduce.fn = (Ident){intern_cstr("sum"), sp, false};
    e->u.reduce.indices = ident_list_of(d, summed, m, sp);
    e->u.reduce.body = g;
    e->depth = deeper(g, NULL);
    return e;
}

/* The sum of terms [from, to) as a balanced tree: a tensor read by
 * thousands of statements has thousands of parts, and a chain of `+`
 * would nest past the depth every walk of an expression may assume. */
static Expr *balanced_sum(Deriver *d, Expr **terms, int from, int to, Span span) {
    if (to - from == 1) return terms[from];
    int mid = from + (to - from) / 2;
    return binary(d, '+', balanced_sum(d, terms, from, mid, span),
                  balanced_sum(d, terms, mid, to, span), span);
}

static void note_sum(Deriver *d, Name n, ElemType type, Span span) {
    d->sums = room_for_one(d->a, d->sums, d->sum_count, &d->sum_cap, sizeof(SumVar));
    d->sums[d->sum_count++] = (SumVar){n, type, span};
}

/* grad = part1 + part2 + ... (+ the given gradient of an `out`).  A
 * statement reads at most IR_MAX_OPERANDS tensors, so more parts are
 * summed in groups first (`dX_sum1`, ...). */
static void add_total(Deriver *d, int t, Name seed, IdentList indices, Span span) {
    FwdTensor *T = &d->t[t];
    Expr **terms = ARENA_ARRAY(d->a, Expr *, T->parts + 2);
    int n = 0;
    if (seed) terms[n++] = access(d, seed, indices, span);
    for (int i = 0; i < T->parts; i++) terms[n++] = access(d, T->part_names[i], indices, span);
    while (n > IR_MAX_OPERANDS) {
        int groups = 0;
        for (int from = 0; from < n; from += IR_MAX_OPERANDS) {
            int to = from + IR_MAX_OPERANDS < n ? from + IR_MAX_OPERANDS : n;
            Name s = fresh_name(d, arena_printf(d->a, "%s_sum", T->grad));
            note_sum(d, s, T->type, span);
            add_stmt(d, s, indices, balanced_sum(d, terms, from, to, span), NULL, span);
            terms[groups++] = access(d, s, indices, span);
        }
        n = groups;
    }
    add_stmt(d, T->grad, indices, n ? balanced_sum(d, terms, 0, n, span) : number(d, 0, span), NULL,
             span);
}

static ElemType widest_in(const Deriver *d) {
    ElemType best = ET_NONE;
    for (int i = 0; i < d->tensor_count; i++)
        if (d->t[i].decl && d->t[i].decl->role == TR_IN &&
            elem_type_bits(d->t[i].decl->type) > elem_type_bits(best))
            best = d->t[i].decl->type;
    return best == ET_NONE ? ET_FP32 : best;
}

static const Decl *derive(Sema *s, const Decl *fwd, Phase phase, const bool *recompute, bool every,
                          Span use) {
    Deriver dv = {.s = s,
                  .a = s->arena,
                  .fwd = fwd,
                  .od = &fwd->u.op,
                  .use = use,
                  .phase = phase,
                  .recompute = recompute,
                  .every = every};
    Deriver *d = &dv;
    const OpDecl *od = d->od;
    /* routing picks experts by comparing scores: no gradient reaches the
     * scores through the picks, and the rows it moves would need the
     * routing's inverse (docs/language.md 3.9) */
    for (int k = 0; k < od->stmt_count; k++) {
        const Stmt *st = od->stmts[k];
        const Expr *rhs = st->rhs;
        bool top = rhs && rhs->kind == EX_REDUCE && rhs->u.reduce.fn.name &&
                   strcmp(rhs->u.reduce.fn.name, "top") == 0;
        if (!st->by.name && !top) continue;
        Diag *g =
            diag_error(s->diags, st->by.name ? st->by.span : rhs->u.reduce.fn.span, "E0328",
                       "no gradient is derived through routing: `%s` %s",
                       st->target.name ? st->target.name : "this statement",
                       top ? "picks experts with `top`" : "moves rows between tokens and experts");
        diag_label(g, s->diags, use, "the backward pass is asked for here");
        diag_help(g, s->diags,
                  "map the forward op of a mixture-of-experts layer; its training step is not "
                  "modelled");
        return NULL;
    }
    int cap = od->tensor_count + od->stmt_count + 1;
    d->t = ARENA_ARRAY(d->a, FwdTensor, cap);
    for (int i = 0; i < od->tensor_count; i++) {
        const TensorDecl *td = od->tensors[i];
        if (td->role == TR_VAR || !td->name.name || find_fwd(d, td->name.name) >= 0) continue;
        add_fwd(d,
                (FwdTensor){.name = td->name.name, .decl = td, .type = td->type, .producer = -1});
    }
    /* intermediates take their `var` line's type, else the widest input's */
    NameMap var_of = {0};
    for (int i = 0; i < od->tensor_count; i++)
        if (od->tensors[i]->role == TR_VAR)
            name_map_put(d->a, &var_of, od->tensors[i]->name.name, i);
    ElemType widest = widest_in(d);
    for (int k = 0; k < od->stmt_count; k++) {
        Name n = od->stmts[k]->target.name;
        int t = find_fwd(d, n);
        if (t < 0) {
            int v = name_map_get(&var_of, n);
            t = add_fwd(d, (FwdTensor){.name = n,
                                       .type = v >= 0 ? od->tensors[v]->type : widest,
                                       .producer = k});
        }
        d->t[t].producer = k;
    }
    /* the indices, and every name the backward op may not reuse */
    int ix_cap = 1;
    for (int k = 0; k < od->stmt_count; k++)
        ix_cap += od->stmts[k]->indices.count + leaf_count(od->stmts[k]->rhs) * IR_MAX_RANK;
    d->index_names = ARENA_ARRAY(d->a, Name, ix_cap);
    d->index_extent = ARENA_ARRAY(d->a, Expr *, ix_cap);
    for (int k = 0; k < od->stmt_count; k++) {
        Name all[2 * IR_MAX_RANK + 8];
        int n = stmt_indices(od->stmts[k], all, (int)(sizeof all / sizeof all[0]));
        for (int i = 0; i < n && d->index_count < ix_cap; i++) note_index(d, all[i]);
    }
    for (int i = 0; i < d->tensor_count; i++) take_name(d, d->t[i].name);
    for (int i = 0; i < od->tensor_count; i++) take_name(d, od->tensors[i]->name.name);
    for (int i = 0; i < d->index_count; i++) take_name(d, d->index_names[i]);
    for (int i = 0; i < od->param_count; i++) take_name(d, od->params[i].name.name);
    d->rhs = ARENA_ARRAY(d->a, Expr *, od->stmt_count + 1);
    d->reads = ARENA_ARRAY(d->a, Accesses, od->stmt_count + 1);
    for (int k = 0; k < od->stmt_count; k++) {
        d->rhs[k] = rewritten(d, od->stmts[k]->rhs, scalar_leaf);
        d->reads[k] = accesses_of(d, d->rhs[k]);
    }
    resolve_extents(d);
    find_restrictions(d);

    /* which tensors carry a gradient: on a path from an `in` to an `out` */
    for (int i = 0; i < d->tensor_count; i++) {
        d->t[i].from_input = d->t[i].decl && d->t[i].decl->role == TR_IN;
        d->t[i].reaches_output = d->t[i].decl && d->t[i].decl->role == TR_OUT;
    }
    for (int k = 0; k < od->stmt_count; k++) {
        const Stmt *st = od->stmts[k];
        const Expr *const *acc = d->reads[k].items;
        int T = find_fwd(d, st->target.name);
        for (int q = 0; q < d->reads[k].count; q++) {
            int x = find_fwd(d, acc[q]->u.access.tensor.name);
            if (x >= 0 && d->t[x].from_input) d->t[T].from_input = true;
        }
    }
    for (int k = od->stmt_count - 1; k >= 0; k--) {
        const Stmt *st = od->stmts[k];
        int T = find_fwd(d, st->target.name);
        if (!d->t[T].reaches_output) continue;
        const Expr *const *acc = d->reads[k].items;
        for (int q = 0; q < d->reads[k].count; q++) {
            int x = find_fwd(d, acc[q]->u.access.tensor.name);
            if (x >= 0) d->t[x].reaches_output = true;
        }
    }
#define NEEDED(i) (d->t[i].from_input && d->t[i].reaches_output)

    /* the parts of every gradient */
    for (int k = od->stmt_count - 1; k >= 0; k--) {
        const Stmt *st = od->stmts[k];
        int T = find_fwd(d, st->target.name);
        if (!NEEDED(T) || !d->rhs[k]) continue;
        const Expr *rhs = d->rhs[k];
        const Expr *body = rhs->kind == EX_REDUCE ? rhs->u.reduce.body : rhs;
        Name all[2 * IR_MAX_RANK + 8];
        bool reduces = rhs->kind == EX_REDUCE ||
                       stmt_indices(st, all, (int)(sizeof all / sizeof all[0])) > st->indices.count;
        Expr *result = !reduces && body->kind == EX_CALL
                           ? access(d, st->target.name, st->indices, st->span)
                           : NULL;
        /* the body's accesses are the right side's: a reduction prefix
         * stands only at its top */
        const Expr *const *acc = d->reads[k].items;
        for (int q = 0; q < d->reads[k].count; q++) {
            int x = find_fwd(d, acc[q]->u.access.tensor.name);
            if (x < 0 || !NEEDED(x)) continue;
            Expr *p = partial(d, body, d->t[x].name, &acc[q]->u.access.indices, result);
            if (d->failed) return NULL;
            if (!p) continue;
            add_part(d, (Part){x, k, acc[q]->u.access.indices, p});
            d->t[x].parts++;
        }
    }

    /* names: dX for the whole gradient of X, dX_T for the part through T */
    Name *seeds = ARENA_ARRAY(d->a, Name, d->tensor_count + 1);
    for (int i = 0; i < d->tensor_count; i++) {
        FwdTensor *T = &d->t[i];
        if (!NEEDED(i)) continue;
        const char *base = arena_printf(d->a, "d%s", T->name);
        bool is_out = T->decl && T->decl->role == TR_OUT;
        if (is_out) {
            seeds[i] = fresh_name(d, base);
            T->grad = T->parts ? fresh_name(d, arena_printf(d->a, "%s_all", base)) : seeds[i];
        } else {
            T->grad = fresh_name(d, base);
        }
        T->part_names = ARENA_ARRAY(d->a, Name, T->parts + 1);
    }
    for (int i = 0; i < d->part_count; i++) {
        Part *p = &d->parts[i];
        FwdTensor *X = &d->t[p->tensor];
        bool is_out = X->decl && X->decl->role == TR_OUT;
        Name n = X->parts == 1 && !is_out
                     ? X->grad
                     : fresh_name(d, arena_printf(d->a, "d%s_%s", X->name,
                                                  d->od->stmts[p->stmt]->target.name));
        if (X->parts_done == 0) X->part_indices = p->indices;
        X->part_names[X->parts_done++] = n;
    }

    for (int i = 0; i < d->part_count; i++) d->parts[i].rhs = part_rhs(d, &d->parts[i]);

    /* recomputed forward statements: a copy `C_r` of each asked for whose
     * result a gradient statement reads (or another copy does), or with
     * `every` of each asked for (checkpointing runs the whole forward pass
     * again), reading the copies of the others; the gradient statements
     * read the copies */
    bool train = d->phase == PHASE_TRAIN;
    if (d->recompute) {
        for (int i = 0; i < d->tensor_count; i++) d->t[i].saved = false;
        for (int i = 0; i < d->part_count; i++) mark_saved(d, d->parts[i].rhs);
        bool *keep = ARENA_ARRAY(d->a, bool, od->stmt_count + 1);
        for (int k = od->stmt_count - 1; k >= 0; k--) {
            int T = find_fwd(d, od->stmts[k]->target.name);
            keep[k] = d->recompute[k] && (d->every || d->t[T].saved);
            if (keep[k]) mark_saved(d, d->rhs[k]);
        }
        for (int i = 0; i < d->tensor_count; i++) d->t[i].saved = false;
        d->recomputed = ARENA_ARRAY(d->a, Name, d->tensor_count + 1);
        for (int k = 0; k < od->stmt_count; k++)
            if (keep[k]) {
                int T = find_fwd(d, od->stmts[k]->target.name);
                d->recomputed[T] = fresh_name(d, arena_printf(d->a, "%s_r", d->t[T].name));
            }
        d->recompute = keep;
    }
    if (train) /* the forward statements as the user wrote them */
        for (int k = 0; k < od->stmt_count; k++) push_stmt(d, od->stmts[k]);
    d->role = SR_RECOMPUTE;
    for (int k = 0; d->recompute && k < od->stmt_count; k++) {
        if (!d->recompute[k]) continue;
        const Stmt *st = od->stmts[k];
        Expr *rhs = renamed(d, d->rhs[k]);
        if (!train) mark_saved(d, rhs);
        add_stmt(d, d->recomputed[find_fwd(d, st->target.name)], st->indices, rhs,
                 d->restriction[k], st->span);
    }

    /* the gradients, last forward statement first */
    d->role = SR_BACKWARD;
    for (int k = od->stmt_count - 1; k >= 0; k--) {
        const Stmt *st = od->stmts[k];
        int T = find_fwd(d, st->target.name);
        if (!NEEDED(T)) continue;
        bool is_out = d->t[T].decl && d->t[T].decl->role == TR_OUT;
        if (d->t[T].parts > 1 || (is_out && d->t[T].parts > 0))
            add_total(d, T, is_out ? seeds[T] : NULL, st->indices, st->span);
        for (int i = 0; i < d->part_count; i++) {
            const Part *p = &d->parts[i];
            if (p->stmt != k) continue;
            const FwdTensor *X = &d->t[p->tensor];
            int which = 0;
            for (int j = 0; j < i; j++) which += d->parts[j].tensor == p->tensor;
            Expr *rhs = renamed(d, p->rhs);
            if (!train) mark_saved(d, rhs);
            add_stmt(d, X->part_names[which], p->indices, rhs, d->restriction[k], st->span);
        }
    }
    for (int i = 0; i < d->tensor_count; i++) {
        const FwdTensor *X = &d->t[i];
        if (!X->decl || X->decl->role != TR_IN || !NEEDED(i) || X->parts == 1) continue;
        IdentList ix = X->parts ? X->part_indices : (IdentList){0};
        if (!X->parts) {
            /* no part: the gradient is zero, written over the tensor's own
             * dimensions with fresh index names */
            Name *names = ARENA_ARRAY(d->a, Name, X->decl->dim_count + 1);
            for (int p = 0; p < X->decl->dim_count; p++)
                names[p] = fresh_name(d, arena_printf(d->a, "i%d", p));
            ix = ident_list_of(d, names, X->decl->dim_count, X->decl->span);
        }
        add_total(d, i, NULL, ix, X->decl->span);
    }

    if (d->failed) return NULL;

    /* the weight update (train): mixed-precision Adam on every `param`
     * with a gradient, from its fp32 master copy and moments */
    Name *adam = ARENA_ARRAY(d->a, Name, 7 * d->tensor_count + 1);
    d->role = SR_UPDATE;
    for (int i = 0; train && i < d->tensor_count; i++) {
        const FwdTensor *W = &d->t[i];
        if (!W->decl || !W->decl->trained || !NEEDED(i) || !W->parts) continue;
        Name *n = &adam[7 * i];
        const char *w = W->name;
        n[0] = fresh_name(d, arena_printf(d->a, "%s_fp32", w));
        n[1] = fresh_name(d, arena_printf(d->a, "%s_m", w));
        n[2] = fresh_name(d, arena_printf(d->a, "%s_v", w));
        n[3] = fresh_name(d, arena_printf(d->a, "%s_fp32_new", w));
        n[4] = fresh_name(d, arena_printf(d->a, "%s_m_new", w));
        n[5] = fresh_name(d, arena_printf(d->a, "%s_v_new", w));
        n[6] = fresh_name(d, arena_printf(d->a, "%s_new", w));
        IdentList ix = W->part_indices;
        Span sp = W->decl->span;
        Expr *g = access(d, W->grad, ix, sp);
        /* m' = b1 m + (1 - b1) g;  v' = b2 v + (1 - b2) g g;
         * w' = w - lr m' / (sqrt(v') + eps);  W = w' in W's type */
        add_stmt(d, n[4], ix,
                 binary(d, '+', binary(d, '*', number(d, 0.9, sp), access(d, n[1], ix, sp), sp),
                        binary(d, '*', number(d, 0.1, sp), g, sp), sp),
                 NULL, sp);
        add_stmt(d, n[5], ix,
                 binary(d, '+', binary(d, '*', number(d, 0.999, sp), access(d, n[2], ix, sp), sp),
                        binary(d, '*', number(d, 0.001, sp), binary(d, '*', g, g, sp), sp), sp),
                 NULL, sp);
        Expr *step =
            binary(d, '/', binary(d, '*', number(d, 0.0001, sp), access(d, n[4], ix, sp), sp),
                   binary(d, '+', call(d, "sqrt", access(d, n[5], ix, sp), NULL, sp),
                          number(d, 1e-8, sp), sp),
                   sp);
        add_stmt(d, n[3], ix, binary(d, '-', access(d, n[0], ix, sp), step, sp), NULL, sp);
        add_stmt(d, n[6], ix, access(d, n[3], ix, sp), NULL, sp);
    }

    /* the tensors.  Backward: the given gradients and the kept forward
     * tensors in, input gradients out.  Train: the forward op's own
     * tensors, the given gradients and the optimizer state in, the
     * gradients of non-`param` inputs and the updated state out.  Every
     * other gradient is an intermediate of its tensor's type. */
    TensorDecl **list = NULL;
    int count = 0, list_cap = 0;
    if (train)
        for (int i = 0; i < od->tensor_count; i++) {
            list = room_for_one(d->a, list, count, &list_cap, sizeof(TensorDecl *));
            list[count++] = od->tensors[i];
        }
    /* a forward intermediate keeps its type: the default (the widest
     * input) would otherwise take the optimizer state's fp32 */
    for (int i = 0; train && i < d->tensor_count; i++) {
        const FwdTensor *X = &d->t[i];
        bool declared = false;
        for (int k = 0; k < od->tensor_count; k++) declared |= od->tensors[k]->name.name == X->name;
        if (!declared && X->producer >= 0)
            add_decl(d, &list, &count, &list_cap, TR_VAR, X->name, NULL, 0, X->type,
                     od->stmts[X->producer]->span);
    }
    for (int i = 0; i < d->tensor_count; i++) {
        const FwdTensor *X = &d->t[i];
        if (X->decl && X->decl->role == TR_OUT && NEEDED(i))
            add_decl(d, &list, &count, &list_cap, TR_IN, seeds[i], X->decl->dims,
                     X->decl->dim_count, X->type, X->decl->span);
    }
    for (int i = 0; i < d->tensor_count; i++) {
        const FwdTensor *X = &d->t[i];
        if (!X->saved || train) continue;
        int dim_count = 0;
        Expr **dims = dims_of(d, X, &dim_count);
        Span sp = X->decl ? X->decl->span : od->stmts[X->producer]->span;
        if (!dims) {
            diag_error(s->diags, sp, "E0328",
                       "the backward pass of `%s` keeps `%s`, but the extent of one of its "
                       "dimensions is given by no `in` or `out` tensor",
                       fwd->name.name, X->name);
            return NULL;
        }
        add_decl(d, &list, &count, &list_cap, TR_IN, X->name, dims, dim_count, X->type, sp);
    }
    for (int i = 0; train && i < d->tensor_count; i++) {
        const FwdTensor *W = &d->t[i];
        if (!adam[7 * i]) continue;
        const TensorDecl *td = W->decl;
        for (int k = 0; k < 3; k++)
            add_decl(d, &list, &count, &list_cap, TR_IN, adam[7 * i + k], td->dims, td->dim_count,
                     ET_FP32, td->span)
                ->use = TU_OPT_STATE;
        for (int k = 3; k < 6; k++)
            add_decl(d, &list, &count, &list_cap, TR_OUT, adam[7 * i + k], td->dims, td->dim_count,
                     ET_FP32, td->span);
        add_decl(d, &list, &count, &list_cap, TR_OUT, adam[7 * i + 6], td->dims, td->dim_count,
                 td->type, td->span);
    }
    for (int i = 0; i < d->tensor_count; i++) {
        const FwdTensor *X = &d->t[i];
        if (X->decl && X->decl->role == TR_IN && NEEDED(i) && !(train && X->decl->trained))
            add_decl(d, &list, &count, &list_cap, TR_OUT, X->grad, X->decl->dims,
                     X->decl->dim_count, X->type, X->decl->span);
    }
    for (int i = 0; i < d->tensor_count; i++) {
        const FwdTensor *X = &d->t[i];
        Span sp = X->decl ? X->decl->span : od->stmts[X->producer]->span;
        if (d->recomputed && d->recomputed[i] && !(X->decl && X->decl->role == TR_IN))
            add_decl(d, &list, &count, &list_cap, TR_VAR, d->recomputed[i], NULL, 0, X->type, sp);
        if (!NEEDED(i)) continue;
        bool is_in = X->decl && X->decl->role == TR_IN;
        bool grad_is_var = is_in ? train && X->decl->trained
                                 : !(X->decl && X->decl->role == TR_OUT && X->grad == seeds[i]);
        if (grad_is_var)
            add_decl(d, &list, &count, &list_cap, TR_VAR, X->grad, NULL, 0, X->type, sp)->use =
                is_in ? TU_WEIGHT_GRAD : TU_DATA;
        for (int p = 0; p < X->parts; p++)
            if (X->part_names[p] != X->grad)
                add_decl(d, &list, &count, &list_cap, TR_VAR, X->part_names[p], NULL, 0, X->type,
                         sp);
    }
    for (int i = 0; i < d->sum_count; i++)
        add_decl(d, &list, &count, &list_cap, TR_VAR, d->sums[i].name, NULL, 0, d->sums[i].type,
                 d->sums[i].span);
#undef NEEDED

    Decl *decl = ARENA_NEW(d->a, Decl);
    decl->kind = DK_OP;
    decl->span = fwd->span;
    decl->name =
        (Ident){intern_cstr(arena_printf(d->a, "%s.%s", fwd->name.name, phase_name(d->phase))),
                fwd->name.span, false};
    decl->u.op = (OpDecl){.params = od->params,
                          .param_count = od->param_count,
                          .tensors = list,
                          .tensor_count = count,
                          .stmts = d->stmts,
                          .stmt_count = d->stmt_count,
                          .derived = true,
                          .forward_count = train ? od->stmt_count : 0,
                          .recomputed = d->recompute};
    return decl;
}

static bool same_marks(const bool *a, const bool *b, int n) {
    for (int i = 0; i < n; i++)
        if ((a ? a[i] : false) != (b ? b[i] : false)) return false;
    return true;
}

const Decl *derive_op(Sema *s, const Decl *op_decl, Phase phase, const bool *recompute, bool every,
                      Span use_site) {
    OpCacheEntry *e = op_cache_entry(s, op_decl);
    int n = op_decl->u.op.stmt_count;
    for (const DerivedOp *x = e->derived; x; x = x->next)
        if (x->phase == phase && x->every == every && same_marks(x->recompute, recompute, n))
            return x->decl;
    DerivedOp *x = ARENA_NEW(s->arena, DerivedOp);
    x->phase = phase;
    x->every = every;
    if (recompute) {
        bool *copy = ARENA_ARRAY(s->arena, bool, n + 1);
        memcpy(copy, recompute, sizeof(bool) * (size_t)n);
        x->recompute = copy;
    }
    x->next = e->derived;
    e->derived = x; /* a failure is reported once: later uses find NULL */
    if (!check_op_structure(s, op_decl)) return NULL;
    const Decl *b = derive(s, op_decl, phase, x->recompute, every, use_site);
    if (!b) return NULL;
    /* the derived op is checked like any op; an error there is cmtc's own
     * mistake, reported at the use with the checker's message */
    DiagSink *quiet = ARENA_NEW(s->arena, DiagSink);
    diags_init(quiet, s->arena);
    DiagSink *loud = s->diags;
    s->diags = quiet;
    bool sound = check_op_structure(s, b);
    s->diags = loud;
    if (!sound) {
        const Diag *first = NULL;
        for (int i = 0; i < quiet->count && !first; i++)
            if (quiet->items[i]->severity == SEV_ERROR) first = quiet->items[i];
        diag_error(s->diags, use_site, "E0329",
                   "the %s op derived from `%s` does not check: %s (this is cmtc's mistake; "
                   "please report it)",
                   phase_name(phase), op_decl->name.name, first ? first->message : "unknown error");
        return NULL;
    }
    x->decl = b;
    return b;
}

const Decl *program_derived_op(Program *p, const Decl *op_decl, Phase phase,
                               const bool *recompute) {
    if (!p || !op_decl || op_decl->kind != DK_OP) return NULL;
    Sema *s = sema_for_program(p, p->diags);
    return derive_op(s, op_decl, phase, recompute, false, op_decl->name.span);
}
