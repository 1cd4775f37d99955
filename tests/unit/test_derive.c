/* test_derive.c — the backward ops derive.c writes, checked two ways:
 *
 *  1. against gradients derived by hand, statement by statement, for a
 *     GEMM, a GEMM -> softmax, layernorm, attention and two MLPs;
 *  2. numerically: a small interpreter of einsum statements (written here,
 *     independent of the compiler: it walks the syntax tree) runs the
 *     forward op on tiny random tensors, the loss is L = sum over every
 *     `out` tensor O of seed_O * O, and every element of every derived
 *     input gradient must match (L(x + h) - L(x - h)) / 2h. */
#include "frontend/ast.h"
#include "frontend/check.h"
#include "program.h"

#include <math.h>
#include <stdlib.h>

static Arena arena;

/* ------------------------------------------------ the interpreter */

#define MAX_TENSORS 96
#define MAX_IDX 24

/* `a CMP b + offset` between two indices (docs/language.md 3.8). */
typedef struct Mask {
    bool on;
    Name a, b;
    WhereCmp cmp;
    double offset;
} Mask;

typedef struct Tensor {
    Name name;
    int rank;
    int64_t ext[IR_MAX_RANK];
    double *v;
    /* made under a restriction between its dimensions pa and pb, which
     * its readers inherit */
    bool restricted;
    int pa, pb;
    WhereCmp cmp;
    double offset;
} Tensor;

typedef struct Env {
    Tensor t[MAX_TENSORS];
    int n;
    const IrOp *op; /* index extents and parameter values */
    Name ix[MAX_IDX];
    int64_t at[MAX_IDX];
    int ixn;
} Env;

static Tensor *tensor(Env *E, Name name) {
    for (int i = 0; i < E->n; i++)
        if (E->t[i].name == name) return &E->t[i];
    return NULL;
}

static Tensor *make(Env *E, Name name, int rank, const int64_t *ext) {
    Tensor *T = tensor(E, name);
    if (!T) T = &E->t[E->n++];
    T->name = name;
    T->rank = rank;
    T->restricted = false;
    int64_t size = 1;
    for (int r = 0; r < rank; r++) size *= (T->ext[r] = ext[r]);
    T->v = ARENA_ARRAY(&arena, double, size); /* zeroed */
    return T;
}

static int64_t size_of(const Tensor *T) {
    int64_t s = 1;
    for (int r = 0; r < T->rank; r++) s *= T->ext[r];
    return s;
}

static int64_t index_value(const Env *E, Name ix) {
    for (int i = 0; i < E->ixn; i++)
        if (E->ix[i] == ix) return E->at[i];
    return -1;
}

static int64_t extent_of(const Env *E, Name ix) {
    for (int i = 0; i < E->op->index_count; i++)
        if (E->op->indices[i].name == ix) return E->op->indices[i].extent;
    return 0;
}

static double *element(Env *E, Name tensor_name, const IdentList *ix) {
    Tensor *T = tensor(E, tensor_name);
    if (!T) return NULL;
    int64_t off = 0;
    for (int r = 0; r < T->rank; r++) off = off * T->ext[r] + index_value(E, ix->items[r].name);
    return &T->v[off];
}

static double normal_cdf(double x) {
    return 0.5 * erfc(-x / sqrt(2.0));
}

static double eval(Env *E, const Expr *e) {
    switch (e->kind) {
    case EX_INT: return (double)e->u.int_value;
    case EX_REAL: return e->u.real_value;
    case EX_NAME:
        for (int i = 0; i < E->op->param_count; i++)
            if (E->op->param_names[i] == e->u.name) return (double)E->op->param_values[i];
        return NAN;
    case EX_ACCESS: {
        double *x = element(E, e->u.access.tensor.name, &e->u.access.indices);
        return x ? *x : NAN;
    }
    case EX_UNARY: return -eval(E, e->u.unary.operand);
    case EX_BINARY: {
        double a = eval(E, e->u.binary.lhs), b = eval(E, e->u.binary.rhs);
        switch (e->u.binary.op) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        default: return a / b;
        }
    }
    case EX_CALL: {
        const char *f = e->u.call.fn.name;
        double a = eval(E, e->u.call.args[0]);
        double b = e->u.call.arg_count > 1 ? eval(E, e->u.call.args[1]) : 0;
        if (!strcmp(f, "exp")) return exp(a);
        if (!strcmp(f, "log")) return log(a);
        if (!strcmp(f, "sqrt")) return sqrt(a);
        if (!strcmp(f, "rsqrt")) return 1 / sqrt(a);
        if (!strcmp(f, "recip")) return 1 / a;
        if (!strcmp(f, "abs")) return fabs(a);
        if (!strcmp(f, "tanh")) return tanh(a);
        if (!strcmp(f, "sigmoid")) return 1 / (1 + exp(-a));
        if (!strcmp(f, "relu")) return a > 0 ? a : 0;
        if (!strcmp(f, "gelu")) return a * normal_cdf(a);
        if (!strcmp(f, "silu")) return a / (1 + exp(-a));
        if (!strcmp(f, "dgelu")) return normal_cdf(a) + a * exp(-a * a / 2) / sqrt(2 * M_PI);
        if (!strcmp(f, "step")) return a > 0 ? 1 : 0;
        if (!strcmp(f, "sign")) return a > 0 ? 1 : a < 0 ? -1 : 0;
        if (!strcmp(f, "eq")) return a == b ? 1 : 0;
        if (!strcmp(f, "max")) return a > b ? a : b;
        if (!strcmp(f, "min")) return a < b ? a : b;
        return NAN;
    }
    default: return NAN;
    }
}

static void note_indices(Env *E, const Expr *e) {
    if (!e) return;
    switch (e->kind) {
    case EX_ACCESS:
        for (int i = 0; i < e->u.access.indices.count; i++) {
            Name x = e->u.access.indices.items[i].name;
            bool seen = false;
            for (int k = 0; k < E->ixn; k++) seen |= E->ix[k] == x;
            if (!seen) E->ix[E->ixn++] = x;
        }
        break;
    case EX_UNARY: note_indices(E, e->u.unary.operand); break;
    case EX_BINARY:
        note_indices(E, e->u.binary.lhs);
        note_indices(E, e->u.binary.rhs);
        break;
    case EX_CALL:
        for (int i = 0; i < e->u.call.arg_count; i++) note_indices(E, e->u.call.args[i]);
        break;
    case EX_REDUCE: note_indices(E, e->u.reduce.body); break;
    default: break;
    }
}

static bool holds(const Env *E, const Mask *m) {
    if (!m->on) return true;
    double a = (double)index_value(E, m->a), b = (double)index_value(E, m->b) + m->offset;
    switch (m->cmp) {
    case WC_LT: return a < b;
    case WC_LE: return a <= b;
    case WC_GT: return a > b;
    default: return a >= b;
    }
}

/* The first tensor read (in source order) that was made under a
 * restriction: its restriction in this statement's index names. */
static bool inherited_mask(Env *E, const Expr *e, Mask *out) {
    if (!e) return false;
    switch (e->kind) {
    case EX_ACCESS: {
        Tensor *T = tensor(E, e->u.access.tensor.name);
        if (!T || !T->restricted) return false;
        const IdentList *ix = &e->u.access.indices;
        if (ix->items[T->pa].name == ix->items[T->pb].name) return false;
        *out = (Mask){true, ix->items[T->pa].name, ix->items[T->pb].name, T->cmp, T->offset};
        return true;
    }
    case EX_UNARY: return inherited_mask(E, e->u.unary.operand, out);
    case EX_BINARY:
        return inherited_mask(E, e->u.binary.lhs, out) || inherited_mask(E, e->u.binary.rhs, out);
    case EX_CALL:
        for (int i = 0; i < e->u.call.arg_count; i++)
            if (inherited_mask(E, e->u.call.args[i], out)) return true;
        return false;
    case EX_REDUCE: return inherited_mask(E, e->u.reduce.body, out);
    default: return false;
    }
}

/* The restriction a statement runs under: its own `where`, else the
 * inherited one. */
static Mask mask_of(Env *E, const Stmt *st) {
    Mask m = {0};
    if (st->where) {
        const Expr *r = st->where->rhs;
        double offset = 0;
        if (r->kind == EX_BINARY) {
            offset = eval(E, r->u.binary.rhs) * (r->u.binary.op == '-' ? -1 : 1);
            r = r->u.binary.lhs;
        }
        m = (Mask){true, st->where->lhs.name, r->u.name, st->where->cmp, offset};
    } else {
        inherited_mask(E, st->rhs, &m);
    }
    return m;
}

/* One statement over every point of its indices (those its restriction
 * allows). */
static void run_stmt(Env *E, const Stmt *st) {
    E->ixn = 0;
    for (int i = 0; i < st->indices.count; i++) E->ix[E->ixn++] = st->indices.items[i].name;
    note_indices(E, st->rhs);
    int64_t ext[IR_MAX_RANK];
    for (int i = 0; i < st->indices.count; i++) ext[i] = extent_of(E, st->indices.items[i].name);
    Mask mask = mask_of(E, st);
    Tensor *T = make(E, st->target.name, st->indices.count, ext);
    const Expr *body = st->rhs->kind == EX_REDUCE ? st->rhs->u.reduce.body : st->rhs;
    const char *red = st->rhs->kind == EX_REDUCE ? st->rhs->u.reduce.fn.name : "sum";
    bool is_max = !strcmp(red, "max"), is_min = !strcmp(red, "min");
    for (int64_t i = 0; i < size_of(T); i++) T->v[i] = is_max ? -INFINITY : is_min ? INFINITY : 0;
    double count = 1;
    for (int i = st->indices.count; i < E->ixn; i++) count *= (double)extent_of(E, E->ix[i]);
    for (int i = 0; i < E->ixn; i++) E->at[i] = 0;
    for (;;) {
        if (holds(E, &mask)) {
            double *out = element(E, st->target.name, &st->indices);
            double v = eval(E, body);
            if (is_max)
                *out = v > *out ? v : *out;
            else if (is_min)
                *out = v < *out ? v : *out;
            else
                *out += v;
        }
        int k = E->ixn - 1;
        while (k >= 0 && ++E->at[k] == extent_of(E, E->ix[k])) E->at[k--] = 0;
        if (k < 0) break;
    }
    if (!strcmp(red, "mean"))
        for (int64_t i = 0; i < size_of(T); i++) T->v[i] /= count;
    int pa = -1, pb = -1;
    for (int i = 0; mask.on && i < st->indices.count; i++) {
        if (st->indices.items[i].name == mask.a) pa = i;
        if (st->indices.items[i].name == mask.b) pb = i;
    }
    if (pa >= 0 && pb >= 0) {
        T->restricted = true;
        T->pa = pa;
        T->pb = pb;
        T->cmp = mask.cmp;
        T->offset = mask.offset;
    }
}

static void run_op(Env *E, const Decl *d) {
    for (int k = 0; k < d->u.op.stmt_count; k++) run_stmt(E, d->u.op.stmts[k]);
}

static const Decl *op_decl(const Program *p, const char *name) {
    const Module *m = p->modules[0];
    for (int i = 0; i < m->decl_count; i++)
        if (m->decls[i]->kind == DK_OP && !strcmp(m->decls[i]->name.name, name)) return m->decls[i];
    return NULL;
}

static const IrTensor *ir_tensor(const IrOp *op, Name name) {
    for (int t = 0; t < op->tensor_count; t++)
        if (op->tensors[t].name == name) return &op->tensors[t];
    return NULL;
}

static double uniform(unsigned *seed) {
    *seed = *seed * 1103515245u + 12345u;
    return ((*seed >> 8) & 0xffff) / 32768.0 - 1.0;
}

/* Fills every `in` tensor of the forward op with values in [-1, 1). */
static void fill_inputs(Env *E, const IrOp *op, unsigned *seed) {
    for (int t = 0; t < op->tensor_count; t++) {
        const IrTensor *T = &op->tensors[t];
        if (T->kind != TK_INPUT) continue;
        Tensor *x = make(E, T->name, T->rank, T->extent);
        for (int64_t i = 0; i < size_of(x); i++) x->v[i] = uniform(seed);
    }
}

static double loss(Env *E, const IrOp *fwd, const Decl *fd, Env *seeds, const IrOp *bwd) {
    E->op = fwd;
    run_op(E, fd);
    double L = 0;
    for (int t = 0; t < fwd->tensor_count; t++) {
        if (fwd->tensors[t].kind != TK_OUTPUT) continue;
        Tensor *O = tensor(E, fwd->tensors[t].name);
        /* the seed of O is the backward op's `in` tensor d<O> */
        Tensor *S = tensor(seeds, intern_cstr(arena_printf(&arena, "d%s", O->name)));
        for (int64_t i = 0; O && S && i < size_of(O); i++) L += S->v[i] * O->v[i];
    }
    (void)bwd;
    return L;
}

/* The numeric check of one op: `fwd` and `bwd` are mappings of the op
 * forward and backward (for the extents). */
static void check_numerically(Program *p, const char *op_name, const char *fwd_map,
                              const char *bwd_map, Phase phase, const bool *recompute) {
    const Decl *fd = op_decl(p, op_name);
    const Decl *bd = fd ? program_derived_op(p, fd, phase, recompute) : NULL;
    const IrMapping *fm = unit_mapping(p, fwd_map), *bm = unit_mapping(p, bwd_map);
    bool found = fd && bd && fm && bm;
    CHECK(found, arena_printf(&arena, "%s: forward and backward ops", op_name));
    if (!found) return;
    const IrOp *fwd = fm->op, *bwd = bm->op;
    unsigned seed = 12345;
    Env *E = ARENA_NEW(&arena, Env), *S = ARENA_NEW(&arena, Env);
    fill_inputs(E, fwd, &seed);
    /* seeds: every `in` of the backward op that the forward op does not
     * have (the gradients given for its outputs) */
    for (int t = 0; t < bwd->tensor_count; t++) {
        const IrTensor *T = &bwd->tensors[t];
        if (T->kind != TK_INPUT || ir_tensor(fwd, T->name)) continue;
        Tensor *x = make(S, T->name, T->rank, T->extent);
        for (int64_t i = 0; i < size_of(x); i++) x->v[i] = uniform(&seed);
    }
    loss(E, fwd, fd, S, bwd);
    /* the backward op: seeds and the forward pass's tensors in, run; the
     * train op: seeds and the forward op's inputs only (it runs the
     * forward statements and the recomputed copies itself) */
    Env *B = ARENA_NEW(&arena, Env);
    for (int i = 0; i < S->n; i++) B->t[B->n++] = S->t[i];
    for (int i = 0; i < E->n; i++) {
        const IrTensor *T = ir_tensor(fwd, E->t[i].name);
        if (phase == PHASE_BACKWARD || (T && T->kind == TK_INPUT)) B->t[B->n++] = E->t[i];
    }
    B->op = bwd;
    run_op(B, bd);
    double worst = 0;
    int compared = 0;
    const double h = 1e-5;
    for (int t = 0; t < fwd->tensor_count; t++) {
        const IrTensor *X = &fwd->tensors[t];
        if (X->kind != TK_INPUT) continue;
        Tensor *g = tensor(B, intern_cstr(arena_printf(&arena, "d%s", X->name)));
        CHECK(g != NULL, arena_printf(&arena, "%s: gradient of %s derived", op_name, X->name));
        if (!g) continue;
        Tensor *x = tensor(E, X->name);
        for (int64_t i = 0; i < size_of(x); i++) {
            double keep = x->v[i];
            x->v[i] = keep + h;
            double up = loss(E, fwd, fd, S, bwd);
            x->v[i] = keep - h;
            double down = loss(E, fwd, fd, S, bwd);
            x->v[i] = keep;
            double fdiff = (up - down) / (2 * h);
            double err = fabs(fdiff - g->v[i]) / (1e-3 + fabs(fdiff));
            if (err > worst) worst = err;
            if (err > 1e-5)
                printf("  %s: d%s[%lld] derived %.9g, finite difference %.9g\n", op_name, X->name,
                       (long long)i, g->v[i], fdiff);
            compared++;
        }
    }
    CHECK(compared > 0 && worst < 1e-5,
          arena_printf(&arena,
                       "%s (%s%s): %d derived gradient elements match finite differences (worst "
                       "relative error %.2g)",
                       op_name, phase_name(phase), recompute ? ", recompute full" : "", compared,
                       worst));
}

/* ------------------------------------------- the hand-derived gradients */

/* The derived statements of the backward mapping, one a line. */
static const char *derived_text(const Program *p, const char *mapping) {
    const IrMapping *m = unit_mapping(p, mapping);
    if (!m) return "(no mapping)";
    const char *all = "";
    for (int st = 0; st < m->op->stmt_count; st++)
        all = arena_printf(&arena, "%s%s\n", all,
                           m->op->stmts[st].source ? m->op->stmts[st].source : "(no source)");
    return all;
}

static void check_derived(const Program *p, const char *mapping, const char *want) {
    const char *got = derived_text(p, mapping);
    bool same = strcmp(got, want) == 0;
    if (!same) printf("  %s derived:\n%s  expected:\n%s", mapping, got, want);
    CHECK(same, arena_printf(&arena, "%s: the derived statements are the hand-derived ones",
                             mapping));
}

static const char *program_text =
    "arch cpu {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 64 GB/s; }\n"
    "  memory SRAM { capacity 64 MiB; bandwidth 256 GB/s; }\n"
    "  compute mac matrix { throughput 256 MAC/cycle; }\n"
    "  compute simd vector { throughput 32 op/cycle; }\n"
    "}\n"
    "op gemm<M = 3, N = 4, K = 2> {\n"
    "  in A[M, K] : fp32; in B[K, N] : fp32; out C[M, N] : fp32;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "}\n"
    "op gemm_softmax<M = 3, N = 4, K = 2> {\n"
    "  in A[M, K] : fp32; in B[K, N] : fp32; out D[M, N] : fp32;\n"
    "  C[m, n]  = A[m, k] * B[k, n];\n"
    "  mx[m]    = max(n) C[m, n];\n"
    "  e[m, n]  = exp(C[m, n] - mx[m]);\n"
    "  s[m]     = sum(n) e[m, n];\n"
    "  D[m, n]  = e[m, n] / s[m];\n"
    "}\n"
    "op layernorm<M = 3, N = 5> {\n"
    "  in X[M, N] : fp32; in G[N] : fp32; in Bt[N] : fp32; out Y[M, N] : fp32;\n"
    "  mu[m]   = mean(n) X[m, n];\n"
    "  d[m, n] = X[m, n] - mu[m];\n"
    "  v[m]    = mean(n) (d[m, n] * d[m, n]);\n"
    "  r[m]    = rsqrt(v[m] + 0.00001);\n"
    "  Y[m, n] = d[m, n] * r[m] * G[n] + Bt[n];\n"
    "}\n"
    "op attention<S = 3, T = 4, D = 2> {\n"
    "  in Q[S, D] : fp32; in K[T, D] : fp32; in V[T, D] : fp32; out O[S, D] : fp32;\n"
    "  sc[m, n] = Q[m, d] * K[n, d];\n"
    "  mx[m]    = max(n) sc[m, n];\n"
    "  e[m, n]  = exp(sc[m, n] - mx[m]);\n"
    "  s[m]     = sum(n) e[m, n];\n"
    "  P[m, n]  = e[m, n] / s[m];\n"
    "  O[m, d]  = P[m, n] * V[n, d];\n"
    "}\n"
    "op causal<S = 4, D = 2> {\n"
    "  in Q[S, D] : fp32; in K[S, D] : fp32; in V[S, D] : fp32; out O[S, D] : fp32;\n"
    "  sc[m, n] = Q[m, d] * K[n, d] where n <= m;\n"
    "  mx[m]    = max(n) sc[m, n];\n"
    "  e[m, n]  = exp(sc[m, n] - mx[m]);\n"
    "  s[m]     = sum(n) e[m, n];\n"
    "  P[m, n]  = e[m, n] / s[m];\n"
    "  O[m, d]  = P[m, n] * V[n, d];\n"
    "}\n"
    "op scalar<M = 3, N = 4> {\n"
    "  in X[M, N] : fp32; out Y[M, N] : fp32;\n"
    "  total = sum(m, n) X[m, n];\n"
    "  Y[m, n] = X[m, n] * total;\n"
    "}\n"
    "op mlp<M = 3, E = 2, F = 4> {\n"
    "  in X[M, E] : fp32; in W1[E, F] : fp32; in W2[F, E] : fp32; out Y[M, E] : fp32;\n"
    "  H[m, f] = X[m, e] * W1[e, f];\n"
    "  G[m, f] = gelu(H[m, f]);\n"
    "  Y[m, e] = G[m, f] * W2[f, e];\n"
    "}\n"
    "op swiglu<M = 3, E = 2, F = 4> {\n"
    "  in X[M, E] : fp32; in W1[E, F] : fp32; in W3[E, F] : fp32; in W2[F, E] : fp32;\n"
    "  out Y[M, E] : fp32;\n"
    "  a[m, f] = X[m, e] * W1[e, f];\n"
    "  b[m, f] = X[m, e] * W3[e, f];\n"
    "  g[m, f] = silu(a[m, f]) * b[m, f];\n"
    "  Y[m, e] = g[m, f] * W2[f, e];\n"
    "}\n"
    "op funcs<M = 3> {\n"
    "  in X[M] : fp32; in Z[M] : fp32; out Y[M] : fp32;\n"
    "  a[m] = tanh(X[m]) + sigmoid(Z[m]) * abs(X[m]);\n"
    "  b[m] = sqrt(a[m] * a[m] + 1) + max(X[m], Z[m]) - min(X[m], 0);\n"
    "  Y[m] = recip(b[m] + 2) + relu(Z[m]) + exp(X[m]) / (1 + X[m] * X[m]);\n"
    "}\n";

static const char *const op_names_list[] = {"gemm", "gemm_softmax", "layernorm", "attention",
                                            "causal", "scalar",     "mlp",       "swiglu",
                                            "funcs"};

int main(void) {
    SourceManager sm;
    DiagSink diags;
    const char *text = program_text;
    for (size_t i = 0; i < sizeof op_names_list / sizeof *op_names_list; i++)
        text = arena_printf(&arena,
                            "%smapping %s_f for %s on cpu { }\n"
                            "mapping %s_b for %s on cpu { phase backward; }\n"
                            "mapping %s_t for %s on cpu { phase train; recompute full; }\n",
                            text, op_names_list[i], op_names_list[i], op_names_list[i],
                            op_names_list[i], op_names_list[i], op_names_list[i]);
    Program *p = unit_load_named(&arena, &sm, &diags, "derive.cmt", text);
    if (diags.error_count) diags_render_text(stdout, &sm, &diags, (DiagRenderOptions){false});
    CHECK(p && diags.error_count == 0, "the ops and their backward mappings check");
    if (!p || diags.error_count) return unit_finish();

    /* C = A B: dA = dC B^T, dB = A^T dC (the contraction's roles kept) */
    check_derived(p, "gemm_b",
                  "dA[m, k] = sum(n) (dC[m, n] * B[k, n])\n"
                  "dB[k, n] = sum(m) (A[m, k] * dC[m, n])\n");
    /* D = e / s: de = dD / s (through D) + ds (through s, a broadcast);
       ds = -sum_n dD e / s^2; dC = de e (through e = exp(C - mx), the
       kept e reused) + dmx [C == mx] (through the max); dmx = -sum_n de e */
    check_derived(p, "gemm_softmax_b",
                  "de_D[m, n] = dD[m, n] / s[m]\n"
                  "ds[m] = sum(n) (-(dD[m, n] * (e[m, n] / (s[m] * s[m]))))\n"
                  "de_s[m, n] = ds[m]\n"
                  "de[m, n] = de_D[m, n] + de_s[m, n]\n"
                  "dC_e[m, n] = de[m, n] * e[m, n]\n"
                  "dmx[m] = sum(n) (-(de[m, n] * e[m, n]))\n"
                  "dC_mx[m, n] = dmx[m] * eq(C[m, n], mx[m])\n"
                  "dC[m, n] = dC_e[m, n] + dC_mx[m, n]\n"
                  "dA[m, k] = sum(n) (dC[m, n] * B[k, n])\n"
                  "dB[k, n] = sum(m) (A[m, k] * dC[m, n])\n");
    /* Y = d r G + Bt: dd = dY r G (through Y) + dv 2d/N (through v, mean
       over n); dr = sum_n dY d G; dv = -dr 0.5 r / (v + eps) (r = (v +
       eps)^-1/2);
       dX = dd (through d) + dmu / N (through mu); dmu = -sum_n dd (a
       negation is written outermost) */
    check_derived(p, "layernorm_b",
                  "dd_Y[m, n] = dY[m, n] * (r[m] * G[n])\n"
                  "dr[m] = sum(n) (dY[m, n] * (d[m, n] * G[n]))\n"
                  "dG[n] = sum(m) (dY[m, n] * (d[m, n] * r[m]))\n"
                  "dBt[n] = sum(m) dY[m, n]\n"
                  "dv[m] = -(dr[m] * (0.5 * r[m] / (v[m] + 1e-05)))\n"
                  "dd_v[m, n] = dv[m] * (d[m, n] + d[m, n]) / N\n"
                  "dd[m, n] = dd_Y[m, n] + dd_v[m, n]\n"
                  "dX_d[m, n] = dd[m, n]\n"
                  "dmu[m] = sum(n) (-dd[m, n])\n"
                  "dX_mu[m, n] = dmu[m] / N\n"
                  "dX[m, n] = dX_d[m, n] + dX_mu[m, n]\n");
    check_derived(p, "attention_b",
                  "dP[m, n] = sum(d) (dO[m, d] * V[n, d])\n"
                  "dV[n, d] = sum(m) (P[m, n] * dO[m, d])\n"
                  "de_P[m, n] = dP[m, n] / s[m]\n"
                  "ds[m] = sum(n) (-(dP[m, n] * (e[m, n] / (s[m] * s[m]))))\n"
                  "de_s[m, n] = ds[m]\n"
                  "de[m, n] = de_P[m, n] + de_s[m, n]\n"
                  "dsc_e[m, n] = de[m, n] * e[m, n]\n"
                  "dmx[m] = sum(n) (-(de[m, n] * e[m, n]))\n"
                  "dsc_mx[m, n] = dmx[m] * eq(sc[m, n], mx[m])\n"
                  "dsc[m, n] = dsc_e[m, n] + dsc_mx[m, n]\n"
                  "dQ[m, d] = sum(n) (dsc[m, n] * K[n, d])\n"
                  "dK[n, d] = sum(m) (Q[m, d] * dsc[m, n])\n");
    /* a scalar read by its bare name (`total` for `total[]`) carries its
       gradient too: Y = X total gives dX = dY total + sum(m, n) X dY (total
       is the second factor, so dY is its gradient's) */
    check_derived(p, "scalar_b",
                  "dX_Y[m, n] = dY[m, n] * total[]\n"
                  "dtotal[] = sum(m, n) (X[m, n] * dY[m, n])\n"
                  "dX_total[m, n] = dtotal[]\n"
                  "dX[m, n] = dX_Y[m, n] + dX_total[m, n]\n");
    /* G = gelu(H): dH = dG dgelu(H) */
    check_derived(p, "mlp_b",
                  "dG[m, f] = sum(e) (dY[m, e] * W2[f, e])\n"
                  "dW2[f, e] = sum(m) (G[m, f] * dY[m, e])\n"
                  "dH[m, f] = dG[m, f] * dgelu(H[m, f])\n"
                  "dX[m, e] = sum(f) (dH[m, f] * W1[e, f])\n"
                  "dW1[e, f] = sum(m) (X[m, e] * dH[m, f])\n");
    /* g = silu(a) b: da = dg b silu'(a), db = silu(a) dg (b is the second
       factor, so its gradient is too); X is read by two statements: dX =
       dX_b + dX_a */
    check_derived(p, "swiglu_b",
                  "dg[m, f] = sum(e) (dY[m, e] * W2[f, e])\n"
                  "dW2[f, e] = sum(m) (g[m, f] * dY[m, e])\n"
                  "da[m, f] = dg[m, f] * (sigmoid(a[m, f]) * (1 + a[m, f] * (1 - sigmoid(a[m, "
                  "f]))) * b[m, f])\n"
                  "db[m, f] = silu(a[m, f]) * dg[m, f]\n"
                  "dX_b[m, e] = sum(f) (db[m, f] * W3[e, f])\n"
                  "dW3[e, f] = sum(m) (X[m, e] * db[m, f])\n"
                  "dX_a[m, e] = sum(f) (da[m, f] * W1[e, f])\n"
                  "dW1[e, f] = sum(m) (X[m, e] * da[m, f])\n"
                  "dX[m, e] = dX_b[m, e] + dX_a[m, e]\n");

    /* causal attention: every gradient statement runs under the forward
       pass's restriction (its own or inherited), so the masked tiles are
       skipped in the backward pass too; the values alone cannot show it
       (the kept e is 0 where masked) */
    const IrMapping *cb = unit_mapping(p, "causal_b");
    int masked = 0;
    for (int st = 0; cb && st < cb->op->stmt_count; st++)
        masked += cb->op->stmts[st].mask.cmp != PC_NONE;
    CHECK(cb && masked == cb->op->stmt_count,
          arena_printf(&arena, "causal_b: %d of %d gradient statements run under n <= m", masked,
                       cb ? cb->op->stmt_count : 0));
    bool all[64];
    for (int i = 0; i < 64; i++) all[i] = true;
    for (size_t i = 0; i < sizeof op_names_list / sizeof *op_names_list; i++) {
        const char *op = op_names_list[i];
        check_numerically(p, op, arena_printf(&arena, "%s_f", op), arena_printf(&arena, "%s_b", op),
                          PHASE_BACKWARD, NULL);
        /* one training step recomputing everything: the copies feed the
           same gradients */
        check_numerically(p, op, arena_printf(&arena, "%s_f", op), arena_printf(&arena, "%s_t", op),
                          PHASE_TRAIN, all);
    }
    arena_free_all(&arena);
    return unit_finish();
}
