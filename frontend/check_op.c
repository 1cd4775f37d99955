/* check_op.c — ops: tensors, statements, index binding, reductions and
 * classification, built into an IrOp per instantiation (parameter values).
 *
 * Checking runs in two phases.  The structural phase needs no parameter
 * values (names, ranks, definitions, reductions, functions); it reports
 * once per op.  The value phase evaluates dimensions with the parameter
 * values and binds index extents; it runs per instantiation. */
#include "sema.h"

#include <string.h>

#define GROW(arena, ptr, count, cap)                                                               \
    do {                                                                                           \
        if ((count) == (cap)) {                                                                    \
            int grow_new_ = (cap) ? (cap)*2 : 8;                                                   \
            (ptr) = arena_realloc((arena), (ptr), sizeof(*(ptr)) * (size_t)(cap),                  \
                                  sizeof(*(ptr)) * (size_t)grow_new_);                             \
            (cap) = grow_new_;                                                                     \
        }                                                                                          \
    } while (0)

/* ----------------------------------------------------------- functions */

#define FUNCTION_ARITY(word, arity) arity,
const char *const op_function_names[] = {CMT_FUNCTIONS(VOCAB_FUNCTION_NAME)};
static const int op_function_arities[] = {CMT_FUNCTIONS(FUNCTION_ARITY)};
const int op_function_count = (int)(sizeof op_function_names / sizeof op_function_names[0]);

int op_function_arity(Name fn) {
    int i = vocab_find(op_function_names, op_function_count, fn);
    return i < 0 ? -1 : op_function_arities[i];
}

/* "exp log ... silu, and max(a, b), min(a, b)": the unary functions, then
 * the binary ones with their arguments. */
static const char *function_list_text(char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int arity = 1; arity <= 2; arity++)
        for (int i = 0, n = 0; i < op_function_count && used < size; i++) {
            if (op_function_arities[i] != arity) continue;
            const char *sep = n++ == 0 ? (arity == 1 ? "" : ", and ") : arity == 1 ? " " : ", ";
            int w = snprintf(buf + used, size - used, arity == 1 ? "%s%s" : "%s%s(a, b)", sep,
                             op_function_names[i]);
            if (w < 0) break;
            used += (size_t)w;
        }
    return buf;
}

static ReduceOp reduce_op_of(Name fn) {
    ReduceOp op = RO_NONE;
    if (fn) reduce_op_of_name(fn, &op);
    return op;
}

/* ------------------------------------------------------------ building */

/* One place where an index names a tensor dimension. */
typedef struct Occurrence {
    int tensor, position, index;
    Span span;
    bool defines; /* the lhs of an intermediate: gives it its extents */
} Occurrence;

typedef struct TensorInfo {
    const TensorDecl *decl; /* NULL for an undeclared intermediate */
    int defined_by;         /* statement id, -1 while unassigned */
    Span def_span;
    bool read;
    bool first_access_seen;
    bool broken; /* its declaration was reported: uses stay quiet */
} TensorInfo;

typedef struct OpBuild {
    Sema *s;
    Arena *arena;
    DiagSink *diags; /* structural diagnostics */
    const Decl *decl;
    const OpDecl *od;
    IrTensor *tensors;
    NameMap tensor_names; /* name -> the first tensor of that name */
    TensorInfo *info;
    int tensor_count, tensor_cap;
    IrIndex *indices;
    int index_count, index_cap;
    IrStmt *stmts;
    int stmt_count;
    bool parse_damaged; /* the parser dropped a broken part of this op */
    /* parameters already reported as used as an index (E0420) in the
     * statement being checked: `Y[M] = X[M, n]` is one mistake */
    Name param_as_index[8];
    int param_as_index_count;
    bool incomplete; /* an error that leaves the IR sound (an `out` never
                      * assigned): value checks still run, but the op is
                      * not instantiated */
    Occurrence *occ;
    int occ_count, occ_cap;
    /* indices and occurrences grow here while the structure is built, then
     * are copied exact-size into `arena` */
    Arena *scratch;
    bool *occ_reported; /* an instantiation's: E0401 given for occ[i] */
    /* the op's `route` tensors (docs/language.md 3.9), and the capacity
     * each declares (NULL: 1) */
    IrRoute *routes;
    const Expr **route_capacity;
    int route_count;
    bool ok;
} OpBuild;

/* Per-statement state while walking its right side. */
typedef struct StmtWalk {
    IrStmt *st;
    int rhs_idx[64];
    int rhs_count;
    bool rhs_overflow;
    FnCount fns[16];
    int fn_count;
    /* the statement's operands while it is walked; copied exact-size into
     * the IrStmt when the walk ends */
    int inputs[IR_MAX_OPERANDS];
    int access[IR_MAX_OPERANDS][IR_MAX_RANK];
} StmtWalk;

static Diag *op_error(OpBuild *b, Span span, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static Diag *op_error(OpBuild *b, Span span, const char *code, const char *fmt, ...) {
    b->ok = false;
    va_list ap;
    va_start(ap, fmt);
    Diag *d = diag_error_va(b->diags, span, code, fmt, ap);
    va_end(ap);
    return d;
}

static int find_tensor(const OpBuild *b, Name name) {
    return name_map_get(&b->tensor_names, name);
}

static int find_param(const OpDecl *od, Name name) {
    for (int i = 0; i < od->param_count; i++)
        if (od->params[i].name.name == name) return i;
    return -1;
}

/* The statement (after `after`) that defines `name`, or -1. */
static int later_definition(const OpDecl *od, Name name, int after) {
    for (int k = after + 1; k < od->stmt_count; k++)
        if (od->stmts[k]->target.name == name) return k;
    return -1;
}

static int add_tensor(OpBuild *b, Name name, TensorKind kind, Span span) {
    /* build_structure sized the arrays for every declaration and statement */
    int id = b->tensor_count++;
    IrTensor *t = &b->tensors[id];
    memset(t, 0, sizeof *t);
    /* room for any rank while the structure is built; built_structure
     * copies `rank` entries */
    t->index = ARENA_ARRAY(b->scratch, int, IR_MAX_RANK);
    t->extent = ARENA_ARRAY(b->scratch, int64_t, IR_MAX_RANK);
    t->id = id;
    t->name = name;
    if (name && name_map_get(&b->tensor_names, name) < 0)
        name_map_put(b->arena, &b->tensor_names, name, id);
    t->kind = kind;
    t->producer = -1;
    t->appends_to = t->append_dim = -1;
    t->view_of = t->route = -1;
    t->span = span;
    for (int i = 0; i < IR_MAX_RANK; i++) t->index[i] = -1;
    memset(&b->info[id], 0, sizeof b->info[id]);
    b->info[id].defined_by = -1;
    return id;
}

static int intern_index(OpBuild *b, Name name, Span span) {
    for (int i = 0; i < b->index_count; i++)
        if (b->indices[i].name == name) return i;
    GROW(b->scratch, b->indices, b->index_count, b->index_cap);
    IrIndex *ix = &b->indices[b->index_count];
    ix->name = name;
    ix->extent = 0;
    ix->first_use = span;
    return b->index_count++;
}

static void add_occurrence(OpBuild *b, int tensor, int position, int index, Span span,
                           bool defines) {
    GROW(b->scratch, b->occ, b->occ_count, b->occ_cap);
    b->occ[b->occ_count++] = (Occurrence){tensor, position, index, span, defines};
}

/* Checks the index list of one access; returns false on a hard error. */
static bool check_index_list(OpBuild *b, const IdentList *ids) {
    bool ok = true;
    for (int i = 0; i < ids->count; i++) {
        const Ident *id = &ids->items[i];
        if (!id->name) {
            ok = false;
            continue;
        }
        for (int j = 0; j < i; j++)
            if (ids->items[j].name == id->name) {
                Diag *d = op_error(b, id->span, "E0413", "index `%s` appears twice in one access",
                                   id->name);
                diag_label(d, b->diags, ids->items[j].span, "first here");
                diag_help(d, b->diags,
                          "each dimension needs its own index; a diagonal "
                          "is not supported");
                ok = false;
            }
        int p = find_param(b->od, id->name);
        bool again = false;
        for (int k = 0; p >= 0 && k < b->param_as_index_count; k++)
            if (b->param_as_index[k] == id->name) again = true;
        if (p >= 0 && again) {
            ok = false;
            b->ok = false;
        } else if (p >= 0) {
            if (b->param_as_index_count < 8)
                b->param_as_index[b->param_as_index_count++] = id->name;
            Diag *d = op_error(b, id->span, "E0420", "`%s` is a parameter of the op, not an index",
                               id->name);
            diag_label(d, b->diags, b->od->params[p].name.span, "parameter declared here");
            diag_help(d, b->diags,
                      "indices are lower-case names such as `m`; the "
                      "parameter gives the dimension in the declaration");
            ok = false;
        }
    }
    return ok;
}

static int tensor_rank(const OpBuild *b, int t) {
    return b->tensors[t].rank;
}

static void walk_expr(OpBuild *b, StmtWalk *w, const Expr *e);

static void note_rhs_index(StmtWalk *w, int index) {
    for (int i = 0; i < w->rhs_count; i++)
        if (w->rhs_idx[i] == index) return;
    if (w->rhs_count == (int)(sizeof w->rhs_idx / sizeof w->rhs_idx[0])) {
        w->rhs_overflow = true;
        return;
    }
    w->rhs_idx[w->rhs_count++] = index;
}

/* Records an operand with the index ids of its access (the first access
 * when a statement reads one tensor twice). */
static void note_input(OpBuild *b, StmtWalk *w, int tensor, const int *access, int rank,
                       Span span) {
    IrStmt *st = w->st;
    for (int i = 0; i < st->input_count; i++)
        if (st->inputs[i] == tensor) return;
    if (st->input_count == IR_MAX_OPERANDS) {
        op_error(b, span, "E0415", "statement `%s` reads more than %d tensors", st->name,
                 IR_MAX_OPERANDS);
        return;
    }
    int q = st->input_count++;
    st->inputs[q] = tensor;
    for (int r = 0; r < IR_MAX_RANK; r++) st->access[q][r] = r < rank ? access[r] : -1;
}

static void walk_access(OpBuild *b, StmtWalk *w, const Expr *e) {
    const Ident *tn = &e->u.access.tensor;
    if (!tn->name) {
        b->ok = false;
        return;
    }
    int k = w->st->id;
    int t = find_tensor(b, tn->name);
    if (t < 0) {
        int later = later_definition(b->od, tn->name, k);
        if (later >= 0) {
            Diag *d = op_error(b, tn->span, "E0407", "`%s` is used before it is defined", tn->name);
            diag_label(d, b->diags, b->od->stmts[later]->target.span, "`%s` is defined here, later",
                       tn->name);
            diag_help(d, b->diags,
                      "statements run in order: move the definition of `%s` "
                      "before this statement",
                      tn->name);
            return;
        }
        if (b->parse_damaged) {
            b->ok = false;
            return;
        }
        const char **names =
            ARENA_ARRAY(b->arena, const char *, b->tensor_count + b->od->stmt_count + 1);
        int n = 0;
        for (int i = 0; i < b->tensor_count; i++) names[n++] = b->tensors[i].name;
        for (int i = k + 1; i < b->od->stmt_count; i++)
            if (b->od->stmts[i]->target.name) names[n++] = b->od->stmts[i]->target.name;
        Diag *d = op_error(b, tn->span, "E0412", "unknown tensor `%s`", tn->name);
        const char *best = spell_suggest(tn->name, names, n);
        if (best)
            diag_help(d, b->diags, "did you mean `%s`?", best);
        else
            diag_help(d, b->diags,
                      "declare it with `in %s[...] : TYPE;` or define it with a "
                      "statement before this one",
                      tn->name);
        return;
    }
    TensorInfo *ti = &b->info[t];
    IrTensor *T = &b->tensors[t];
    if (ti->broken) {
        b->ok = false;
        return;
    }
    if (T->kind != TK_INPUT && (ti->defined_by < 0 || ti->defined_by == k)) {
        if (b->od->stmts[k]->target.name == tn->name) {
            Diag *d = op_error(b, tn->span, "E0408", "statement `%s` reads the tensor it defines",
                               tn->name);
            diag_note(d, b->diags,
                      "a statement's result depends on its own result: a "
                      "dependence cycle");
            diag_help(d, b->diags,
                      "write the new value into a new tensor, e.g. `%s2[...] "
                      "= ... %s[...] ...`",
                      tn->name, tn->name);
            return;
        }
        int later = later_definition(b->od, tn->name, k);
        if (later < 0 && b->parse_damaged) {
            b->ok = false;
            return;
        }
        Diag *d = op_error(b, tn->span, "E0407",
                           later >= 0 ? "`%s` is used before it is defined"
                                      : "`%s` is read but never assigned",
                           tn->name);
        if (later >= 0)
            diag_label(d, b->diags, b->od->stmts[later]->target.span, "`%s` is defined here, later",
                       tn->name);
        else
            diag_label(d, b->diags, T->span, "declared here");
        return;
    }
    ti->read = true;
    const IdentList *ids = &e->u.access.indices;
    int rank = tensor_rank(b, t);
    if (ids->count != rank) {
        Diag *d = op_error(b, e->span, "E0402",
                           "`%s` has %d dimension%s but is accessed with %d "
                           "ind%s",
                           tn->name, rank, rank == 1 ? "" : "s", ids->count,
                           ids->count == 1 ? "ex" : "ices");
        bool declared = T->kind != TK_INTERMEDIATE;
        diag_label(d, b->diags, declared ? T->span : ti->def_span,
                   "`%s` %s here with %d dimension%s", tn->name, declared ? "declared" : "defined",
                   rank, rank == 1 ? "" : "s");
        /* Still note the indices so later checks do not cascade. */
    }
    bool ok = check_index_list(b, ids);
    int access[IR_MAX_RANK];
    for (int r = 0; r < IR_MAX_RANK; r++) access[r] = -1;
    for (int i = 0; i < ids->count; i++) {
        const Ident *id = &ids->items[i];
        if (!id->name) continue;
        int ix = intern_index(b, id->name, id->span);
        if (i < IR_MAX_RANK) access[i] = ix;
        note_rhs_index(w, ix);
        if (ok && ids->count == rank) {
            add_occurrence(b, t, i, ix, id->span, false);
            /* an input's dimensions are named by its first access; others'
             * by the statement that defines them */
            if (!ti->first_access_seen && T->kind == TK_INPUT) T->index[i] = ix;
        }
    }
    if (ok && ids->count == rank) ti->first_access_seen = true;
    note_input(b, w, t, access, rank < IR_MAX_RANK ? rank : IR_MAX_RANK, e->span);
}

static void count_fn(StmtWalk *w, Name fn) {
    for (int i = 0; i < w->fn_count; i++)
        if (w->fns[i].fn == fn) {
            w->fns[i].count++;
            return;
        }
    if (w->fn_count < (int)(sizeof w->fns / sizeof w->fns[0]))
        w->fns[w->fn_count++] = (FnCount){fn, 1};
}

static void walk_name(OpBuild *b, StmtWalk *w, const Expr *e) {
    Name name = e->u.name;
    if (find_param(b->od, name) >= 0) return;
    int t = find_tensor(b, name);
    int later = t < 0 ? later_definition(b->od, name, w->st->id) : -1;
    if ((t >= 0 && tensor_rank(b, t) == 0) ||
        (later >= 0 && b->od->stmts[later]->indices.count == 0)) {
        /* a scalar (no dimensions) is read by its bare name, as it may be
         * written (`t = sum(m) X[m];`) */
        Expr access = {.kind = EX_ACCESS, .depth = e->depth, .span = e->span};
        access.u.access.tensor = (Ident){name, e->span, false};
        access.u.access.indices = (IdentList){NULL, 0};
        walk_access(b, w, &access);
        return;
    }
    if (t >= 0 || later >= 0) {
        Diag *d = op_error(b, e->span, "E0418", "tensor `%s` is used without indices", name);
        /* show the access with the tensor's own index names when known */
        int rank = t >= 0 ? tensor_rank(b, t) : b->od->stmts[later]->indices.count;
        char ex[256];
        size_t len = 0;
        for (int i = 0; i < rank && len < sizeof ex - 32; i++) {
            const char *ixn = NULL;
            if (t >= 0 && b->tensors[t].index[i] >= 0)
                ixn = b->indices[b->tensors[t].index[i]].name;
            else if (later >= 0)
                ixn = b->od->stmts[later]->indices.items[i].name;
            static const char *const generic[] = {"i", "j", "k", "l", "p", "q", "r", "s"};
            if (!ixn) ixn = generic[i % 8];
            len += (size_t)snprintf(ex + len, sizeof ex - len, "%s%.24s", i ? ", " : "", ixn);
        }
        diag_help(d, b->diags,
                  "`%s` has %d dimension%s: write it as an access, "
                  "e.g. `%s[%s]`",
                  name, rank, rank == 1 ? "" : "s", name, ex);
        return;
    }
    for (int i = 0; i < b->index_count; i++)
        if (b->indices[i].name == name) {
            Diag *d = op_error(b, e->span, "E0418", "index `%s` cannot be used as a value", name);
            diag_note(d, b->diags, "indices only name tensor dimensions inside `[...]`");
            return;
        }
    GlobalEntry *g = globals_find(b->s->globals, name);
    if (g && g->decl->kind == DK_CONST) {
        Value v = g->const_value;
        if (v.kind == VK_QUANTITY) {
            Diag *d = op_error(b, e->span, "E0418",
                               "constant `%s` is a quantity (%s); op "
                               "statements take plain numbers",
                               name, unit_dim_describe(v.dim));
            diag_label(d, b->diags, g->decl->name.span, "defined here");
        }
        return;
    }
    const char **names =
        ARENA_ARRAY(b->arena, const char *, b->od->param_count + b->tensor_count + 1);
    int n = 0;
    for (int i = 0; i < b->od->param_count; i++)
        if (b->od->params[i].name.name) names[n++] = b->od->params[i].name.name;
    /* not the statement's own target: reading it is a cycle (E0408), and
     * a bare tensor name is not a value anyway */
    for (int i = 0; i < b->tensor_count; i++)
        if (b->tensors[i].name != w->st->name) names[n++] = b->tensors[i].name;
    int cn = 0;
    const char **consts = globals_names(b->arena, b->s->globals, DK_CONST, &cn);
    const char **all = ARENA_ARRAY(b->arena, const char *, n + cn + 1);
    memcpy(all, names, sizeof(char *) * (size_t)n);
    memcpy(all + n, consts, sizeof(char *) * (size_t)cn);
    const char *best = spell_suggest(name, all, n + cn);
    if (!best && module_missing(b->s->diags)) {
        b->ok = false; /* it may be a constant of the module not found */
        return;
    }
    Diag *d = op_error(b, e->span, "E0201", "unknown name `%s`", name);
    if (best) diag_help(d, b->diags, "did you mean `%s`?", best);
}

static void walk_call(OpBuild *b, StmtWalk *w, const Expr *e) {
    const Ident *fn = &e->u.call.fn;
    if (!fn->name) {
        b->ok = false;
        return;
    }
    int arity = op_function_arity(fn->name);
    if (arity < 0) {
        Diag *d = op_error(b, fn->span, "E0409", "unknown function `%s`", fn->name);
        if (reduce_op_of(fn->name) != RO_NONE)
            diag_help(d, b->diags,
                      "`%s` is a reduction: write `%s(i) expr` with the "
                      "indices it reduces",
                      fn->name, fn->name);
        else {
            const char *best = spell_suggest(fn->name, op_function_names, op_function_count);
            if (best)
                diag_help(d, b->diags, "did you mean `%s`?", best);
            else {
                char all[256];
                diag_note(d, b->diags, "the functions are %s", function_list_text(all, sizeof all));
            }
        }
    } else if (e->u.call.arg_count != arity) {
        Diag *d = op_error(b, e->span, "E0410", "`%s` takes %d argument%s, got %d", fn->name, arity,
                           arity == 1 ? "" : "s", e->u.call.arg_count);
        if (arity == 2 && e->u.call.arg_count == 1)
            diag_help(d, b->diags, "to reduce over an index, write `%s(n) X[m, n]`", fn->name);
    } else {
        count_fn(w, fn->name);
    }
    for (int i = 0; i < e->u.call.arg_count; i++) walk_expr(b, w, e->u.call.args[i]);
}

static void walk_expr(OpBuild *b, StmtWalk *w, const Expr *e) {
    if (!e) return;
    switch (e->kind) {
    case EX_ERROR: b->ok = false; break;
    case EX_INT:
    case EX_REAL: break;
    case EX_QUANTITY: {
        Diag *d = op_error(b, e->span, "E0418", "a quantity (%s) is not allowed in an op statement",
                           unit_dim_describe(e->u.quantity.dim));
        diag_note(d, b->diags, "op statements compute on plain numbers");
        break;
    }
    case EX_HOLE:
        op_error(b, e->span, "E0418",
                 "a hole `?` is not allowed in an op: holes belong in mappings");
        break;
    case EX_NAME: walk_name(b, w, e); break;
    case EX_ACCESS: walk_access(b, w, e); break;
    case EX_UNARY:
        w->st->arith_ops++;
        walk_expr(b, w, e->u.unary.operand);
        break;
    case EX_BINARY:
        w->st->arith_ops++;
        walk_expr(b, w, e->u.binary.lhs);
        walk_expr(b, w, e->u.binary.rhs);
        break;
    case EX_CALL: walk_call(b, w, e); break;
    case EX_REDUCE:
        /* Not at the top of the right side: the parser reported it. */
        b->ok = false;
        walk_expr(b, w, e->u.reduce.body);
        break;
    }
}

static bool in_list(const int *list, int n, int v) {
    for (int i = 0; i < n; i++)
        if (list[i] == v) return true;
    return false;
}

/* The lhs index id at which `name` appears, or -1. */
static int lhs_position(const Stmt *stmt, Name name) {
    for (int i = 0; i < stmt->indices.count; i++)
        if (stmt->indices.items[i].name == name) return i;
    return -1;
}

static void check_reduction(OpBuild *b, StmtWalk *w, const Stmt *stmt, const Expr *reduce) {
    IrStmt *st = w->st;
    /* Reduced: on the right, not on the left, in order of appearance. */
    for (int i = 0; i < w->rhs_count; i++) {
        int ix = w->rhs_idx[i];
        if (in_list(st->lhs, st->lhs_count, ix)) continue;
        if (st->reduced_count == IR_MAX_RANK) {
            op_error(b, stmt->rhs->span, "E0415", "statement `%s` reduces more than %d indices",
                     st->name, IR_MAX_RANK);
            break;
        }
        st->reduced[st->reduced_count++] = ix;
    }
    if (!reduce) {
        st->reduce_op = st->reduced_count ? RO_SUM : RO_NONE;
        return;
    }
    const char *fn = reduce->u.reduce.fn.name ? reduce->u.reduce.fn.name : "sum";
    st->reduce_op = reduce_op_of(fn);
    if (st->reduce_op == RO_NONE) {
        op_error(b, reduce->u.reduce.fn.span, "E0409",
                 "unknown reduction `%s`: expected sum, max, min or mean", fn);
        st->reduce_op = RO_SUM;
    }
    const IdentList *named = &reduce->u.reduce.indices;
    bool prefix_ok = true;
    for (int i = 0; i < named->count; i++) {
        const Ident *id = &named->items[i];
        if (!id->name) continue;
        bool dup = false;
        for (int j = 0; j < i; j++)
            if (named->items[j].name == id->name) dup = true;
        if (dup) {
            prefix_ok = false;
            op_error(b, id->span, "E0413", "index `%s` appears twice in the `%s(...)` prefix",
                     id->name, fn);
            continue;
        }
        int pos = lhs_position(stmt, id->name);
        if (pos >= 0) {
            prefix_ok = false;
            Diag *d = op_error(b, id->span, "E0403",
                               "`%s(%s)` reduces `%s`, but `%s` is on the left "
                               "side",
                               fn, id->name, id->name, id->name);
            diag_label(d, b->diags, stmt->indices.items[pos].span, "`%s` is kept here", id->name);
            diag_help(d, b->diags,
                      "remove `%s` from the left side to reduce it, or from "
                      "the prefix to keep it",
                      id->name);
            continue;
        }
        int ix = -1;
        for (int k = 0; k < b->index_count; k++)
            if (b->indices[k].name == id->name) ix = k;
        if (ix < 0 || !in_list(w->rhs_idx, w->rhs_count, ix)) {
            prefix_ok = false;
            Diag *d = op_error(b, id->span, "E0404",
                               "`%s(%s)` reduces `%s`, which the right side "
                               "does not use",
                               fn, id->name, id->name);
            const char **names = ARENA_ARRAY(b->arena, const char *, w->rhs_count + 1);
            int n = 0;
            for (int k = 0; k < w->rhs_count; k++)
                if (!in_list(st->lhs, st->lhs_count, w->rhs_idx[k]))
                    names[n++] = b->indices[w->rhs_idx[k]].name;
            const char *best = spell_suggest(id->name, names, n);
            if (best) diag_help(d, b->diags, "did you mean `%s`?", best);
        }
    }
    for (int i = 0; i < st->reduced_count; i++) {
        Name nm = b->indices[st->reduced[i]].name;
        bool named_here = false;
        for (int j = 0; j < named->count; j++)
            if (named->items[j].name == nm) named_here = true;
        if (!named_here && prefix_ok) {
            Diag *d = op_error(b, reduce->u.reduce.fn.span, "E0421",
                               "`%s` is reduced (it is on the right only), but "
                               "the `%s(...)` prefix does not name it",
                               nm, fn);
            diag_help(d, b->diags,
                      "add it to the prefix, or put it on the left side to "
                      "keep it");
        }
    }
}

static void classify(OpBuild *b, IrStmt *st, const Expr *body) {
    st->cls = SC_VECTOR;
    if (st->reduced_count == 0 || st->reduce_op != RO_SUM || !body) return;
    if (body->kind != EX_BINARY || body->u.binary.op != '*') return;
    const Expr *l = body->u.binary.lhs, *r = body->u.binary.rhs;
    if (l->kind != EX_ACCESS || r->kind != EX_ACCESS) return;
    int tl = find_tensor(b, l->u.access.tensor.name);
    int tr = find_tensor(b, r->u.access.tensor.name);
    if (tl < 0 || tr < 0) return;
    st->cls = SC_CONTRACTION;
    /* operands in role order (first input, second weight), each with the
     * indices of its access */
    int access[2][IR_MAX_RANK];
    int want[2] = {tl, tr};
    for (int k = 0; k < 2; k++)
        for (int q = 0; q < st->input_count; q++)
            if (st->inputs[q] == want[k]) memcpy(access[k], st->access[q], sizeof access[k]);
    st->inputs[0] = tl;
    st->inputs[1] = tr;
    memcpy(st->access[0], access[0], sizeof access[0]);
    memcpy(st->access[1], access[1], sizeof access[1]);
    st->input_count = 2;
}

/* ------------------------------------------------ scaling of the inputs */

/* Exponents of the online-reduction analysis (IrStmt.power and .shift):
 * IR_NOT_SCALING absorbs, and a sum outside +-100 is treated as not
 * scaling (signed char storage; no real op comes near). */
static int scale_sum(int a, int b) {
    if (a == IR_NOT_SCALING || b == IR_NOT_SCALING) return IR_NOT_SCALING;
    int r = a + b;
    return r < -100 || r > 100 ? IR_NOT_SCALING : r;
}

static int scale_neg(int a) {
    return a == IR_NOT_SCALING ? a : -a;
}

static bool fn_is(const Ident *fn, const char *name) {
    return fn->name && strcmp(fn->name, name) == 0;
}

static bool expr_reads(const OpBuild *b, const Expr *e, int t) {
    if (!e) return false;
    switch (e->kind) {
    case EX_ACCESS: return e->u.access.tensor.name == b->tensors[t].name;
    case EX_UNARY: return expr_reads(b, e->u.unary.operand, t);
    case EX_BINARY: return expr_reads(b, e->u.binary.lhs, t) || expr_reads(b, e->u.binary.rhs, t);
    case EX_CALL:
        for (int i = 0; i < e->u.call.arg_count; i++)
            if (expr_reads(b, e->u.call.args[i], t)) return true;
        return false;
    case EX_REDUCE: return expr_reads(b, e->u.reduce.body, t);
    default: return false;
    }
}

/* Functions f with f(c x) = c^k f(x) for c > 0 when x scales as c^k:
 * the positively homogeneous ones. */
static int call_scaling(const Expr *e, const int *arg, bool shift) {
    const Ident *fn = &e->u.call.fn;
    int n = e->u.call.arg_count;
    bool free = true;
    for (int i = 0; i < n; i++) free &= arg[i] == 0;
    if (free) return 0;
    if (fn_is(fn, "recip") && n == 1) return scale_neg(arg[0]);
    if ((fn_is(fn, "max") || fn_is(fn, "min")) && n == 2 && arg[0] == arg[1]) return arg[0];
    if ((fn_is(fn, "relu") || fn_is(fn, "abs")) && n == 1) return arg[0];
    if ((fn_is(fn, "sqrt") || fn_is(fn, "rsqrt")) && n == 1 && arg[0] != IR_NOT_SCALING &&
        arg[0] % 2 == 0)
        return fn_is(fn, "sqrt") ? arg[0] / 2 : -arg[0] / 2;
    (void)shift;
    return IR_NOT_SCALING;
}

/* The coefficient a of tensor t in e when e = X + a t with X free of t
 * (IR_NOT_SCALING when e is not of that form). */
static int affine_coefficient(const OpBuild *b, const Expr *e, int t) {
    if (!expr_reads(b, e, t)) return 0;
    switch (e->kind) {
    case EX_ACCESS: return 1;
    case EX_UNARY: return scale_neg(affine_coefficient(b, e->u.unary.operand, t));
    case EX_BINARY: {
        int l = affine_coefficient(b, e->u.binary.lhs, t);
        int r = affine_coefficient(b, e->u.binary.rhs, t);
        if (e->u.binary.op == '+') return scale_sum(l, r);
        if (e->u.binary.op == '-') return scale_sum(l, scale_neg(r));
        return IR_NOT_SCALING;
    }
    default: return IR_NOT_SCALING;
    }
}

/* The exponent k with e(c t) = c^k e(t) (shift false), or with
 * e(t + d) = exp(-k d) e(t) (shift true). */
static int expr_scaling(const OpBuild *b, const Expr *e, int t, bool shift) {
    if (!e || !expr_reads(b, e, t)) return 0;
    switch (e->kind) {
    case EX_ACCESS: return shift ? IR_NOT_SCALING : 1;
    case EX_UNARY: return expr_scaling(b, e->u.unary.operand, t, shift);
    case EX_BINARY: {
        int l = expr_scaling(b, e->u.binary.lhs, t, shift);
        int r = expr_scaling(b, e->u.binary.rhs, t, shift);
        switch (e->u.binary.op) {
        case '*': return scale_sum(l, r);
        case '/': return scale_sum(l, scale_neg(r));
        default: return l == r ? l : IR_NOT_SCALING; /* + and -: terms alike */
        }
    }
    case EX_CALL: {
        if (shift && fn_is(&e->u.call.fn, "exp") && e->u.call.arg_count == 1)
            return scale_neg(affine_coefficient(b, e->u.call.args[0], t));
        int arg[2] = {0, 0};
        for (int i = 0; i < e->u.call.arg_count && i < 2; i++)
            arg[i] = expr_scaling(b, e->u.call.args[i], t, shift);
        return e->u.call.arg_count > 2 ? IR_NOT_SCALING : call_scaling(e, arg, shift);
    }
    default: return IR_NOT_SCALING;
    }
}

/* IrStmt.power and .shift of every input of statement k. */
static void record_scaling(OpBuild *b, int k) {
    IrStmt *st = &b->stmts[k];
    const Stmt *stmt = b->od->stmts[k];
    int n = st->input_count;
    st->power = ARENA_ARRAY(b->arena, signed char, n ? n : 1);
    st->shift = ARENA_ARRAY(b->arena, signed char, n ? n : 1);
    const Expr *body =
        stmt->rhs && stmt->rhs->kind == EX_REDUCE ? stmt->rhs->u.reduce.body : stmt->rhs;
    for (int q = 0; q < n; q++) {
        st->power[q] = (signed char)expr_scaling(b, body, st->inputs[q], false);
        st->shift[q] = (signed char)expr_scaling(b, body, st->inputs[q], true);
    }
}

static void walk_stmt(OpBuild *b, StmtWalk *w, int k);

static void check_stmt(OpBuild *b, int k) {
    IrStmt *st = &b->stmts[k];
    StmtWalk *w = &(StmtWalk){.st = st};
    st->inputs = w->inputs;
    st->access = w->access;
    walk_stmt(b, w, k);
    int n = st->input_count;
    st->inputs = ARENA_ARRAY(b->arena, int, n ? n : 1);
    st->access = arena_alloc(b->arena, sizeof w->access[0] * (size_t)(n ? n : 1));
    if (n) {
        memcpy(st->inputs, w->inputs, sizeof(int) * (size_t)n);
        memcpy(st->access, w->access, sizeof w->access[0] * (size_t)n);
    }
    record_scaling(b, k);
}

static void walk_rhs(OpBuild *b, StmtWalk *w, int k);

/* `K[b, new, g, d] = kn[b, g, d];`: appends to cache K at the position
 * `new` (docs/language.md 3.3).  The statement defines `K.new`, an `out`
 * slot with K's other dimensions, read by nothing else: the cache itself
 * stays an input that the op's readers take whole.  Without `new` (every
 * dimension an index: `K[b, m, g, d] = ...`) the statement fills the
 * whole cache, as a prefill writes its prompt's keys: the slot `K.all`
 * has all of K's dimensions. */
static void walk_append(OpBuild *b, StmtWalk *w, int k, int cache) {
    const Stmt *stmt = b->od->stmts[k];
    IrStmt *st = &b->stmts[k];
    const IrTensor *K = &b->tensors[cache];
    int at = -1, count = 0;
    for (int i = 0; i < stmt->indices.count; i++)
        if (stmt->indices.items[i].name && strcmp(stmt->indices.items[i].name, "new") == 0) {
            if (at < 0) at = i;
            count++;
        }
    /* (`new` twice is E0423 below, not also a repeated index) */
    bool ok = count > 1 || check_index_list(b, &stmt->indices);
    if (b->info[cache].defined_by >= 0) {
        Diag *d = op_error(b, stmt->target.span, "E0405", "cache `%s` is written twice",
                           stmt->target.name);
        diag_label(d, b->diags, b->info[cache].def_span, "first written here");
        diag_help(d, b->diags,
                  "a step appends one position to a cache (or fills it whole), in one statement");
        ok = false;
    } else if (count > 1) {
        Diag *d = op_error(b, stmt->target.span, "E0423",
                           "`%s` is written at `new` %d times: a step appends one position",
                           stmt->target.name, count);
        diag_label(d, b->diags, K->span, "declared `cache` here");
        diag_help(d, b->diags,
                  "name the dimension that grows `new` once, as in `%s[b, new, d] = x[b, d];`, "
                  "or give every dimension an index to fill the whole cache",
                  stmt->target.name);
        ok = false;
    } else if (stmt->indices.count != K->rank) {
        Diag *d = op_error(
            b, stmt->target.span, "E0402", "cache `%s` has %d dimension%s but is written with %d",
            stmt->target.name, K->rank, K->rank == 1 ? "" : "s", stmt->indices.count);
        diag_label(d, b->diags, K->span, "declared here");
        ok = false;
    }
    if (!ok) {
        b->ok = false;
        return;
    }
    b->info[cache].defined_by = k;
    b->info[cache].def_span = stmt->target.span;
    const char *name = arena_printf(b->scratch, "%s.%s", stmt->target.name, at < 0 ? "all" : "new");
    int slot = add_tensor(b, intern(name, strlen(name)), TK_OUTPUT, stmt->target.span);
    IrTensor *S = &b->tensors[slot];
    S->rank = at < 0 ? K->rank : K->rank - 1;
    S->type = K->type;
    S->appends_to = cache;
    S->append_dim = at;
    S->producer = k;
    b->info[slot].defined_by = k;
    b->info[slot].def_span = stmt->target.span;
    st->out_tensor = slot;
    for (int i = 0, r = 0; i < stmt->indices.count; i++) {
        if (i == at) continue;
        const Ident *id = &stmt->indices.items[i];
        int ix = intern_index(b, id->name, id->span);
        if (!in_list(st->lhs, st->lhs_count, ix)) st->lhs[st->lhs_count++] = ix;
        /* the cache's dimension gives the index its extent */
        add_occurrence(b, cache, i, ix, id->span, false);
        S->index[r++] = ix;
    }
    walk_rhs(b, w, k);
}

/* E0405 at a statement assigning tensor t, which an earlier one did. */
static void report_assigned_twice(OpBuild *b, const Stmt *stmt, int t) {
    Diag *d = op_error(b, stmt->target.span, "E0405", "`%s` is assigned twice", stmt->target.name);
    diag_label(d, b->diags, b->info[t].def_span, "first assigned here");
    diag_help(d, b->diags, "each tensor is assigned once: give the second result a new name");
}

/* ------------------------------------------------------------ routing */

/* `route R[T, K] : type [capacity F];` (docs/language.md 3.9). */
static void declare_route(OpBuild *b, int t, const TensorDecl *td) {
    if (td->dim_count != 2) {
        Diag *d = op_error(b, td->name.span, "E0434",
                           "route `%s` has %d dimension%s: a routing is declared [T, K], the "
                           "tokens and the experts each picks",
                           td->name.name, td->dim_count, td->dim_count == 1 ? "" : "s");
        diag_help(d, b->diags, "write `route %s[T, K] : fp32;`", td->name.name);
        b->info[t].broken = true;
        return;
    }
    int r = b->route_count++;
    b->routes[r] = (IrRoute){.tensor = t,
                             .router = -1,
                             .token = -1,
                             .pick = -1,
                             .expert = -1,
                             .capacity = 1,
                             .span = td->span};
    b->route_capacity[r] = td->capacity;
    b->tensors[t].route = r;
}

/* The router `R[t, j] = top(x) g[t, x];`: a `top` reduction over one
 * index (the experts) into a route, whose first index is the token and
 * second the pick, which the right side does not use. */
static void check_router(OpBuild *b, int k) {
    const Stmt *stmt = b->od->stmts[k];
    IrStmt *st = &b->stmts[k];
    int t = st->out_tensor;
    bool route = t >= 0 && b->tensors[t].use == TU_ROUTE && b->tensors[t].route >= 0;
    if (!route) {
        if (st->reduce_op == RO_TOP) {
            Diag *d = op_error(b, stmt->rhs->span, "E0434",
                               "`top(...)` makes a routing, but `%s` is not a `route`", st->name);
            diag_help(d, b->diags,
                      "declare `route %s[T, K] : fp32;` (tokens, picks per token) and assign it "
                      "`%s[t, j] = top(x) g[t, x];`",
                      st->name, st->name);
        }
        return;
    }
    IrRoute *r = &b->routes[b->tensors[t].route];
    if (st->reduce_op != RO_TOP || st->reduced_count != 1 || st->lhs_count != 2) {
        Diag *d = op_error(b, stmt->rhs->span, "E0434",
                           "route `%s` is made by `top` over one index: each token's best "
                           "experts",
                           st->name);
        diag_help(d, b->diags, "write `%s[t, j] = top(x) g[t, x];` with g the router's scores",
                  st->name);
        return;
    }
    int token = st->lhs[0], pick = st->lhs[1];
    bool token_read = false, pick_read = false;
    for (int q = 0; q < st->input_count; q++)
        for (int i = 0; i < IR_MAX_RANK; i++) {
            token_read |= st->access[q][i] == token;
            pick_read |= st->access[q][i] == pick;
        }
    if (!token_read || pick_read) {
        Diag *d = op_error(b, stmt->target.span, "E0434",
                           "route `%s[%s, %s]`: its first index is the token, which the scores "
                           "use, its second the pick, which they do not",
                           st->name, b->indices[token].name, b->indices[pick].name);
        diag_help(d, b->diags, "write `%s[t, j] = top(x) g[t, x];`", st->name);
        return;
    }
    r->router = k;
    r->token = token;
    r->pick = pick;
    r->expert = st->reduced[0];
    st->routing = RT_ROUTER;
    st->route = b->tensors[t].route;
}

/* The route a `by R` statement names, made by an earlier statement; -1
 * (reported) when there is none. */
static int route_of_by(OpBuild *b, int k) {
    const Stmt *stmt = b->od->stmts[k];
    int t = find_tensor(b, stmt->by.name);
    if (t < 0 || b->tensors[t].use != TU_ROUTE || b->tensors[t].route < 0) {
        Diag *d = op_error(b, stmt->by.span, "E0435", "`by %s`: `%s` is not a `route` of this op",
                           stmt->by.name, stmt->by.name);
        diag_help(d, b->diags,
                  "declare `route %s[T, K] : fp32;` and make it with `%s[t, j] = top(x) "
                  "g[t, x];` before the statements that move rows by it",
                  stmt->by.name, stmt->by.name);
        return -1;
    }
    const IrRoute *r = &b->routes[b->tensors[t].route];
    if (r->router < 0 || r->router >= k) {
        Diag *d = op_error(b, stmt->by.span, "E0435",
                           "`by %s`: route `%s` is not made before this statement", stmt->by.name,
                           stmt->by.name);
        diag_label(d, b->diags, b->tensors[t].span, "declared here");
        diag_help(d, b->diags, "assign `%s[t, j] = top(x) g[t, x];` first", stmt->by.name);
        return -1;
    }
    if (stmt->where) {
        op_error(b, stmt->where->span, "E0436",
                 "a statement that moves rows `by %s` takes no `where`", stmt->by.name);
        return -1;
    }
    if (!stmt->rhs || stmt->rhs->kind != EX_ACCESS) {
        Diag *d = op_error(b, stmt->rhs ? stmt->rhs->span : stmt->span, "E0436",
                           "a statement `by %s` copies one tensor access: a dispatch "
                           "`Xe[x, c, d] = X[t, d] by %s;` or a combine `Y[t, d] = Ye[x, c, d] "
                           "by %s;`",
                           stmt->by.name, stmt->by.name, stmt->by.name);
        diag_help(d, b->diags, "compute in statements of their own, before or after it");
        return -1;
    }
    return b->tensors[t].route;
}

static int ident_index(const OpBuild *b, Name name) {
    for (int i = 0; i < b->index_count; i++)
        if (b->indices[i].name == name) return i;
    return -1;
}

/* Position of index `ix` in an identifier list, or -1. */
static int list_position(const OpBuild *b, const IdentList *l, int ix) {
    for (int i = 0; i < l->count; i++)
        if (l->items[i].name && ident_index(b, l->items[i].name) == ix) return i;
    return -1;
}

/* The slot index of a routed statement: the one index of the expert side
 * that is neither the expert nor on the token side.  -1 (reported) when
 * there is not exactly one, or the two sides differ otherwise. */
static int routed_slot(OpBuild *b, int k, const IrRoute *r, const IdentList *experts,
                       const IdentList *tokens, Span at) {
    const Stmt *stmt = b->od->stmts[k];
    int slot = -1, extra = 0;
    bool has_expert = false;
    for (int i = 0; i < experts->count; i++) {
        int ix = ident_index(b, experts->items[i].name);
        if (ix == r->expert) {
            has_expert = true;
            continue;
        }
        if (list_position(b, tokens, ix) >= 0) continue;
        slot = ix;
        extra++;
    }
    bool rest_ok = true;
    for (int i = 0; i < tokens->count; i++) {
        int ix = ident_index(b, tokens->items[i].name);
        if (ix != r->token && list_position(b, experts, ix) < 0) rest_ok = false;
    }
    if (has_expert && extra == 1 && rest_ok) return slot;
    const char *R = stmt->by.name, *x = b->indices[r->expert].name, *t = b->indices[r->token].name;
    Diag *d = op_error(b, at, "E0436",
                       "`by %s` moves a row between token `%s` and a slot of expert `%s`: the "
                       "expert side is indexed by `%s`, one slot index and the token side's "
                       "other indices",
                       R, t, x, x);
    diag_help(d, b->diags,
              "a dispatch is `Xe[%s, c, d] = X[%s, d] by %s;`, a combine `Y[%s, d] = Ye[%s, c, "
              "d] by %s;`",
              x, t, R, t, x, R);
    return -1;
}

/* A routed view of tensor `base`, whose dimensions the statement names
 * `names`: them with the token one (at `token_at`) replaced by the
 * expert's and the slot's. */
static int add_view(OpBuild *b, int base, const int *names, int route, int token_at, int slot,
                    TensorKind kind, Span span) {
    const IrTensor *B = &b->tensors[base];
    const char *name =
        arena_printf(b->scratch, "%s.%s", B->name, b->tensors[b->routes[route].tensor].name);
    int v = add_tensor(b, intern(name, strlen(name)), kind, span);
    IrTensor *V = &b->tensors[v];
    B = &b->tensors[base];
    V->rank = B->rank + 1;
    V->type = B->type;
    V->view_of = base;
    V->route = route;
    for (int i = 0, r = 0; i < B->rank; i++) {
        if (i == token_at) {
            V->index[r++] = b->routes[route].expert;
            V->index[r++] = slot;
        } else {
            V->index[r++] = names[i];
        }
    }
    b->info[v].read = true;
    return v;
}

/* A combine, `Y[t, d] = Ye[x, c, d] by R;`: the statement writes `Y.R`,
 * Y's rows in slot order, each added into its token's row of the `out`
 * Y with the pick's weight (docs/language.md 3.9). */
static void walk_combine(OpBuild *b, StmtWalk *w, int k, int route, int y) {
    const Stmt *stmt = b->od->stmts[k];
    IrStmt *st = &b->stmts[k];
    const IrRoute *r = &b->routes[route];
    IrTensor *Y = &b->tensors[y];
    if (b->info[y].defined_by >= 0) {
        report_assigned_twice(b, stmt, y);
        return;
    }
    b->info[y].defined_by = k; /* (also when reported below) */
    b->info[y].def_span = stmt->target.span;
    if (!check_index_list(b, &stmt->indices)) {
        b->ok = false;
        return;
    }
    if (stmt->indices.count != Y->rank) {
        Diag *d = op_error(b, stmt->target.span, "E0402",
                           "`%s` has %d dimension%s but is written with %d", Y->name, Y->rank,
                           Y->rank == 1 ? "" : "s", stmt->indices.count);
        diag_label(d, b->diags, Y->span, "declared here");
        return;
    }
    const IdentList *from = &stmt->rhs->u.access.indices;
    int slot = routed_slot(b, k, r, from, &stmt->indices, stmt->rhs->span);
    if (slot < 0) return;
    int token_at = list_position(b, &stmt->indices, r->token);
    int names[IR_MAX_RANK];
    for (int i = 0; i < stmt->indices.count; i++) {
        const Ident *id = &stmt->indices.items[i];
        names[i] = intern_index(b, id->name, id->span);
        /* Y's dimension gives the index its extent */
        add_occurrence(b, y, i, names[i], id->span, false);
    }
    int v = add_view(b, y, names, route, token_at, slot, TK_OUTPUT, stmt->target.span);
    IrTensor *V = &b->tensors[v];
    V->producer = k;
    b->info[v].defined_by = b->info[y].defined_by = k;
    b->info[v].def_span = b->info[y].def_span = stmt->target.span;
    st->out_tensor = v;
    for (int i = 0; i < V->rank; i++) st->lhs[st->lhs_count++] = V->index[i];
    walk_rhs(b, w, k);
    st->routing = RT_COMBINE;
    st->route = route;
    st->slot = slot;
    /* per slot element: times the pick's weight, added into the token's row */
    st->arith_ops = 2;
}

/* A dispatch's right side, `X[t, d]` of `Xe[x, c, d] = X[t, d] by R;`:
 * the statement reads `X.R`, the rows of the `in` X in slot order. */
static void walk_dispatch(OpBuild *b, StmtWalk *w, int k, int route) {
    const Stmt *stmt = b->od->stmts[k];
    IrStmt *st = &b->stmts[k];
    const IrRoute *r = &b->routes[route];
    bool was_ok = b->ok;
    b->ok = true;
    walk_expr(b, w, stmt->rhs); /* X and its indices, checked as any access */
    bool rhs_ok = b->ok && st->input_count == 1;
    b->ok = was_ok && rhs_ok;
    if (!rhs_ok) return;
    int x = st->inputs[0];
    const IdentList *from = &stmt->rhs->u.access.indices;
    if (list_position(b, &stmt->indices, r->token) >= 0) {
        Diag *d = op_error(b, stmt->target.span, "E0437",
                           "a combine writes the tokens into an `out` tensor; `%s` is not one",
                           stmt->target.name);
        diag_help(d, b->diags,
                  "declare `out %s[...]`: the layer that routes is an op of its own whose "
                  "`out` is the tokens",
                  stmt->target.name);
        return;
    }
    if (b->tensors[x].kind != TK_INPUT || b->tensors[x].use != TU_DATA) {
        Diag *d = op_error(b, stmt->rhs->span, "E0437",
                           "a dispatch reads the tokens from an `in` tensor; `%s` is not one",
                           b->tensors[x].name);
        diag_help(d, b->diags,
                  "write the layer that routes as an op of its own whose `in` is the tokens");
        return;
    }
    int slot = routed_slot(b, k, r, &stmt->indices, from, stmt->target.span);
    if (slot < 0) return;
    int token_at = list_position(b, from, r->token);
    int v = add_view(b, x, st->access[0], route, token_at, slot, TK_INPUT, stmt->rhs->span);
    const IrTensor *V = &b->tensors[v];
    st->inputs[0] = v;
    for (int i = 0; i < IR_MAX_RANK; i++) st->access[0][i] = i < V->rank ? V->index[i] : -1;
    st->reduced_count = 0;
    st->reduce_op = RO_NONE;
    st->cls = SC_VECTOR;
    st->routing = RT_DISPATCH;
    st->route = route;
    st->slot = slot;
}

static void walk_stmt(OpBuild *b, StmtWalk *w, int k) {
    const Stmt *stmt = b->od->stmts[k];
    IrStmt *st = &b->stmts[k];
    st->id = k;
    st->name = stmt->target.name;
    st->span = stmt->span;
    st->role = stmt->role;
    st->out_tensor = -1;
    st->route = st->slot = -1;
    b->param_as_index_count = 0;
    if (!stmt->target.name) {
        b->ok = false;
        return;
    }
    /* The target. */
    bool define = true;
    int t = find_tensor(b, stmt->target.name);
    if (t >= 0 && !b->info[t].broken && b->tensors[t].use == TU_CACHE) {
        walk_append(b, w, k, t);
        return;
    }
    int route = stmt->by.name ? route_of_by(b, k) : -1;
    if (stmt->by.name && route < 0) {
        /* reported: its target is not also "never assigned" */
        if (t >= 0 && b->info[t].defined_by < 0) b->info[t].defined_by = k;
        b->ok = false;
        return;
    }
    /* a combine writes the token side: an `out` indexed by the token */
    if (route >= 0 && t >= 0 && b->tensors[t].kind == TK_OUTPUT && b->tensors[t].use == TU_DATA &&
        b->info[t].decl && list_position(b, &stmt->indices, b->routes[route].token) >= 0) {
        walk_combine(b, w, k, route, t);
        return;
    }
    if (t >= 0 && b->info[t].broken) {
        b->ok = false;
        define = false;
    } else if (t >= 0 && b->tensors[t].kind == TK_INPUT) {
        Diag *d = op_error(b, stmt->target.span, "E0406",
                           "cannot assign `%s`: it is an `in` tensor", stmt->target.name);
        diag_label(d, b->diags, b->tensors[t].span, "declared `in` here");
        diag_help(d, b->diags,
                  "write the result into a new tensor, or declare `%s` as "
                  "`out`",
                  stmt->target.name);
        define = false;
    } else if (t >= 0 && b->info[t].defined_by >= 0) {
        report_assigned_twice(b, stmt, t);
        define = false;
    }
    int lhs_rank = stmt->indices.count;
    if (lhs_rank > IR_MAX_RANK && define) {
        op_error(b, stmt->target.span, "E0415", "`%s` has %d dimensions; at most %d are supported",
                 stmt->target.name, lhs_rank, IR_MAX_RANK);
        define = false;
    }
    bool lhs_ok = check_index_list(b, &stmt->indices);
    if (define) {
        if (t < 0) {
            t = add_tensor(b, stmt->target.name, TK_INTERMEDIATE, stmt->target.span);
            b->tensors[t].rank = lhs_rank;
        } else if (b->info[t].decl && b->tensors[t].kind == TK_INTERMEDIATE) {
            b->tensors[t].rank = lhs_rank; /* a `var`: its rank comes from here */
        } else if (b->tensors[t].rank != lhs_rank) {
            Diag *d =
                op_error(b, stmt->target.span, "E0402",
                         "`%s` has %d dimension%s but is assigned with "
                         "%d ind%s",
                         stmt->target.name, b->tensors[t].rank, b->tensors[t].rank == 1 ? "" : "s",
                         lhs_rank, lhs_rank == 1 ? "ex" : "ices");
            diag_label(d, b->diags, b->tensors[t].span, "declared here");
            lhs_ok = false;
        }
        b->info[t].defined_by = k;
        b->info[t].def_span = stmt->target.span;
        b->tensors[t].producer = k;
        st->out_tensor = t;
    }
    for (int i = 0; i < stmt->indices.count && i < IR_MAX_RANK; i++) {
        const Ident *id = &stmt->indices.items[i];
        if (!id->name) continue;
        int ix = intern_index(b, id->name, id->span);
        if (!in_list(st->lhs, st->lhs_count, ix)) st->lhs[st->lhs_count++] = ix;
        if (define && lhs_ok) {
            bool defines = b->tensors[t].kind == TK_INTERMEDIATE;
            add_occurrence(b, t, i, ix, id->span, defines);
            b->tensors[t].index[i] = ix;
        }
    }
    if (route >= 0) {
        walk_dispatch(b, w, k, route);
        return;
    }
    walk_rhs(b, w, k);
    check_router(b, k);
}

/* The right side of statement k. */
static void walk_rhs(OpBuild *b, StmtWalk *w, int k) {
    const Stmt *stmt = b->od->stmts[k];
    IrStmt *st = &b->stmts[k];
    const Expr *reduce = stmt->rhs && stmt->rhs->kind == EX_REDUCE ? stmt->rhs : NULL;
    const Expr *body = reduce ? reduce->u.reduce.body : stmt->rhs;
    bool was_ok = b->ok;
    b->ok = true;
    walk_expr(b, w, body);
    if (w->rhs_overflow)
        op_error(b, stmt->rhs->span, "E0415", "statement `%s` uses more than 64 indices", st->name);
    bool rhs_ok = b->ok;
    b->ok = was_ok && rhs_ok;
    if (rhs_ok) check_reduction(b, w, stmt, reduce);
    if (w->fn_count) {
        st->fns = ARENA_ARRAY(b->arena, FnCount, w->fn_count);
        memcpy(st->fns, w->fns, sizeof(FnCount) * (size_t)w->fn_count);
        st->fn_count = w->fn_count;
    }
    classify(b, st, body);
}

/* ------------------------------------------------------------ where */

/* The index a name of statement k's `where` names: E0220 when the op has
 * no such index, E0221 when the statement does not iterate it; -1 then. */
static int where_index(OpBuild *b, int k, const Ident *id) {
    const IrStmt *st = &b->stmts[k];
    for (int i = 0; i < b->index_count; i++)
        if (b->indices[i].name == id->name) {
            if (ir_stmt_uses_index(st, i)) return i;
            Diag *d = op_error(b, id->span, "E0221", "statement `%s` does not iterate `%s`",
                               st->name, id->name);
            diag_help(d, b->diags,
                      "a `where` compares two indices of its own statement (on its left side "
                      "or summed on its right)");
            return -1;
        }
    Diag *d = op_error(b, id->span, "E0220", "`%s` in `where` is not an index of op `%s`", id->name,
                       b->decl->name.name);
    if (find_param(b->od, id->name) >= 0)
        diag_help(d, b->diags,
                  "`%s` is a parameter: a `where` compares two indices, and the right side may "
                  "add or subtract a constant (`where n <= m + %s`)",
                  id->name, id->name);
    else
        diag_help(d, b->diags, "a `where` compares two indices of its statement");
    return -1;
}

/* The right side of a `where`: an index, alone or plus or minus a
 * constant expression (`m`, `m + 1`, `m - W`); the index's name, and the
 * constant's expression in *offset (NULL when none), *negate for minus. */
static const Ident *where_rhs(const Expr *e, Ident *out, const Expr **offset, bool *negate) {
    *offset = NULL;
    *negate = false;
    if (e && e->kind == EX_BINARY && (e->u.binary.op == '+' || e->u.binary.op == '-') &&
        e->u.binary.lhs->kind == EX_NAME) {
        *offset = e->u.binary.rhs;
        *negate = e->u.binary.op == '-';
        e = e->u.binary.lhs;
    }
    if (!e || e->kind != EX_NAME) return NULL;
    *out = (Ident){e->u.name, e->span, false};
    return out;
}

/* Statement k's `where`, by names: both sides indices the statement
 * iterates, and not the same one (E0220-E0222, E0225).  The offset is a
 * value: instantiation evaluates it. */
static void check_where(OpBuild *b, int k) {
    const Where *wh = b->od->stmts[k]->where;
    IrStmt *st = &b->stmts[k];
    st->where.cmp = PC_NONE;
    st->mask.cmp = PC_NONE;
    /* a routed statement's `where` is E0436 already */
    if (!wh || !wh->lhs.name || !st->name || b->od->stmts[k]->by.name) return;
    Ident rid;
    const Expr *offset;
    bool negate;
    if (wh->rhs && wh->rhs->kind == EX_ERROR) return;
    if (!where_rhs(wh->rhs, &rid, &offset, &negate)) {
        Diag *d = op_error(b, wh->rhs ? wh->rhs->span : wh->span, "E0225",
                           "the right side of `where` must be an index, or an index plus or "
                           "minus a constant");
        diag_help(d, b->diags, "write `where n <= m`, `where n < m + 1` or `where j > i - W`");
        return;
    }
    int lhs = where_index(b, k, &wh->lhs);
    int rhs = where_index(b, k, &rid);
    if (lhs < 0 || rhs < 0) return;
    if (lhs == rhs) {
        Diag *d = op_error(b, wh->span, "E0222", "`where` compares `%s` with itself", wh->lhs.name);
        diag_help(d, b->diags,
                  "a `where` restricts the pairs of two different indices; drop it, or "
                  "name the other index");
        return;
    }
    static const PredCmp cmp[] = {
        [WC_LT] = PC_LT, [WC_LE] = PC_LE, [WC_GT] = PC_GT, [WC_GE] = PC_GE};
    st->where = (IrPredicate){cmp[wh->cmp], lhs, rhs, 0, k, wh->span};
    st->mask = st->where;
}

/* The offsets of the `where` clauses, now that the parameters have
 * values, and whether each leaves some but not all points (E0223 when it
 * leaves none, E0224, a warning, when it leaves every one); then the restriction each
 * statement runs under: its own, else the first restricted tensor it
 * reads that names both restricted dimensions with indices it iterates
 * (docs/language.md 3.8).  The statements are copied: the structure's are
 * shared by every instance. */
static bool instantiate_where(OpBuild *b, ConstEnv *env, DiagSink *diags) {
    bool any = false;
    for (int k = 0; k < b->stmt_count; k++) any |= b->stmts[k].where.cmp != PC_NONE;
    if (!any) return true;
    IrStmt *stmts = ARENA_ARRAY(env->arena, IrStmt, b->stmt_count);
    memcpy(stmts, b->stmts, sizeof(IrStmt) * (size_t)b->stmt_count);
    b->stmts = stmts;
    bool ok = true;
    for (int k = 0; k < b->stmt_count; k++) {
        IrStmt *st = &stmts[k];
        if (st->where.cmp == PC_NONE) continue;
        Ident rid;
        const Expr *offset;
        bool negate;
        where_rhs(b->od->stmts[k]->where->rhs, &rid, &offset, &negate);
        int64_t c = 0;
        if (offset) {
            env->where = subject("the offset of `where`");
            if (!const_eval_int(env, offset, env->where, &c)) {
                ok = false;
                continue;
            }
            if (negate) c = -c;
        }
        st->where.offset = c;
        int x, y;
        int64_t kk;
        ir_pred_canon(&st->where, &x, &y, &kk);
        int64_t ex = b->indices[x].extent, ey = b->indices[y].extent;
        const char *text = ir_pred_text(env->arena, &(IrOp){.indices = b->indices}, &st->where);
        /* x <= y + k holds somewhere when the least x, 0, is at most the
         * greatest y + k; everywhere when the greatest x is at most the
         * least y + k */
        if (0 > ey - 1 + kk) {
            ok = false;
            Diag *d = diag_error(diags, st->where.span, "E0223",
                                 "`where %s` leaves no point of `%s` to compute", text, st->name);
            diag_note(
                d, diags, "`%s` ranges over 0..%lld and `%s` over 0..%lld",
                b->indices[st->where.lhs].name, (long long)b->indices[st->where.lhs].extent - 1,
                b->indices[st->where.rhs].name, (long long)b->indices[st->where.rhs].extent - 1);
            diag_help(d, diags, "turn the comparison around, or change the offset");
            continue;
        }
        if (ex - 1 <= kk) {
            Diag *d = diag_warning(diags, st->where.span, "E0224",
                                   "`where %s` holds at every point of `%s`: it restricts nothing",
                                   text, st->name);
            diag_note(
                d, diags, "`%s` ranges over 0..%lld and `%s` over 0..%lld",
                b->indices[st->where.lhs].name, (long long)b->indices[st->where.lhs].extent - 1,
                b->indices[st->where.rhs].name, (long long)b->indices[st->where.rhs].extent - 1);
            diag_help(d, diags, "drop the clause, or change the offset");
            st->where.cmp = PC_NONE; /* nothing to skip */
        }
        st->mask = st->where;
    }
    /* inheritance, in dependence order: a reader of a tensor its maker
     * computed under a restriction between two of its dimensions */
    for (int k = 0; k < b->stmt_count; k++) {
        IrStmt *st = &stmts[k];
        if (st->mask.cmp != PC_NONE) continue;
        for (int q = 0; q < st->input_count && st->mask.cmp == PC_NONE; q++) {
            int t = st->inputs[q];
            int maker = b->tensors[t].producer;
            if (maker < 0 || maker >= k || stmts[maker].mask.cmp == PC_NONE) continue;
            const IrStmt *ms = &stmts[maker];
            int rl = -1, rr = -1;
            for (int r = 0; r < b->tensors[t].rank && r < IR_MAX_RANK; r++) {
                if (b->tensors[t].index[r] == ms->mask.lhs) rl = r;
                if (b->tensors[t].index[r] == ms->mask.rhs) rr = r;
            }
            if (rl < 0 || rr < 0) continue; /* reduced over: written in full */
            int il = st->access[q][rl], ir = st->access[q][rr];
            if (il < 0 || ir < 0 || il == ir) continue;
            st->mask = ms->mask;
            st->mask.lhs = il;
            st->mask.rhs = ir;
        }
    }
    return ok;
}

/* Does `e` mention the name `n`?  (The parser bounds the recursion.) */
static bool expr_mentions(const Expr *e, Name n) {
    if (!e) return false;
    switch (e->kind) {
    case EX_NAME: return e->u.name == n;
    case EX_UNARY: return expr_mentions(e->u.unary.operand, n);
    case EX_BINARY: return expr_mentions(e->u.binary.lhs, n) || expr_mentions(e->u.binary.rhs, n);
    case EX_CALL:
        for (int i = 0; i < e->u.call.arg_count; i++)
            if (expr_mentions(e->u.call.args[i], n)) return true;
        return false;
    case EX_REDUCE: return expr_mentions(e->u.reduce.body, n);
    case EX_ERROR:
    case EX_INT:
    case EX_REAL:
    case EX_QUANTITY:
    case EX_ACCESS:
    case EX_HOLE: break;
    }
    return false;
}

/* A parameter that no dimension, default or statement uses changes
 * nothing: probably a dimension written with the wrong name. */
static void warn_unused_params(OpBuild *b) {
    const OpDecl *od = b->od;
    for (int p = 0; p < od->param_count; p++) {
        Name n = od->params[p].name.name;
        if (!n) continue;
        bool used = false;
        for (int t = 0; t < od->tensor_count && !used; t++)
            for (int i = 0; i < od->tensors[t]->dim_count && !used; i++)
                used = expr_mentions(od->tensors[t]->dims[i], n);
        for (int q = 0; q < od->param_count && !used; q++)
            used = q != p && expr_mentions(od->params[q].default_value, n);
        for (int k = 0; k < od->stmt_count && !used; k++)
            used = expr_mentions(od->stmts[k]->rhs, n) ||
                   (od->stmts[k]->where && expr_mentions(od->stmts[k]->where->rhs, n));
        if (used) continue;
        Diag *d = diag_warning(b->diags, od->params[p].name.span, "W0402",
                               "parameter `%s` of op `%s` is never used", n, b->decl->name.name);
        diag_help(d, b->diags, "use it in a tensor dimension, or remove it");
    }
}

static ElemType widest_input(const OpBuild *b) {
    ElemType best = ET_NONE;
    for (int i = 0; i < b->tensor_count; i++)
        if (b->tensors[i].kind == TK_INPUT &&
            elem_type_bits(b->tensors[i].type) > elem_type_bits(best))
            best = b->tensors[i].type;
    return best == ET_NONE ? ET_FP32 : best;
}

static OpCacheEntry *op_entry(Sema *s, const Decl *op_decl);

/* The structural phase; fills b (tensors, indices, stmts, occurrences). */
static void build_structure(OpBuild *b) {
    const OpDecl *od = b->od;
    b->ok = true;
    OpCacheEntry *entry = op_entry(b->s, b->decl);
    if (!entry->damage_known) {
        entry->damage_known = true;
        entry->parse_damaged = span_has_errors(b->s->diags, b->decl->span);
    }
    b->parse_damaged = entry->parse_damaged;
    /* Its IR would miss the dropped part: check what is left, but do not
     * instantiate it. */
    if (b->parse_damaged) b->ok = false;
    /* room for a routed view per statement besides */
    b->tensor_cap = od->tensor_count + 2 * od->stmt_count + 1;
    b->routes = ARENA_ARRAY(b->arena, IrRoute, od->tensor_count + 1);
    b->route_capacity = ARENA_ARRAY(b->arena, const Expr *, od->tensor_count + 1);
    b->tensors = ARENA_ARRAY(b->scratch, IrTensor, b->tensor_cap);
    b->info = ARENA_ARRAY(b->scratch, TensorInfo, b->tensor_cap);
    for (int i = 0; i < od->param_count; i++) {
        const Ident *p = &od->params[i].name;
        for (int j = 0; j < i; j++)
            if (p->name && od->params[j].name.name == p->name) {
                Diag *d =
                    op_error(b, p->span, "E0419", "parameter `%s` is declared twice", p->name);
                diag_label(d, b->diags, od->params[j].name.span, "first declared here");
            }
    }
    for (int i = 0; i < od->tensor_count; i++) {
        const TensorDecl *td = od->tensors[i];
        if (!td->name.name) {
            b->ok = false;
            continue;
        }
        int prev = find_tensor(b, td->name.name);
        if (prev >= 0) {
            Diag *d =
                op_error(b, td->name.span, "E0416", "tensor `%s` is declared twice", td->name.name);
            diag_label(d, b->diags, b->tensors[prev].span, "first declared here");
            continue;
        }
        int p = find_param(od, td->name.name);
        if (p >= 0) {
            Diag *d = op_error(b, td->name.span, "E0416", "tensor `%s` has the name of a parameter",
                               td->name.name);
            diag_label(d, b->diags, od->params[p].name.span, "parameter declared here");
            continue;
        }
        if (td->dim_count > IR_MAX_RANK) {
            op_error(b, td->name.span, "E0415", "`%s` has %d dimensions; at most %d are supported",
                     td->name.name, td->dim_count, IR_MAX_RANK);
            int t = add_tensor(b, td->name.name, TK_INPUT, td->name.span);
            b->info[t].decl = td;
            b->info[t].broken = true;
            continue;
        }
        TensorKind kind = td->role == TR_IN    ? TK_INPUT
                          : td->role == TR_OUT ? TK_OUTPUT
                                               : TK_INTERMEDIATE;
        int t = add_tensor(b, td->name.name, kind, td->name.span);
        b->tensors[t].rank = td->dim_count;
        b->tensors[t].type = td->type;
        b->tensors[t].trained = td->trained;
        b->tensors[t].use = td->trained  ? TU_WEIGHT
                            : td->cached ? TU_CACHE
                            : td->routed ? TU_ROUTE
                                         : td->use;
        b->info[t].decl = td;
        if (td->routed) declare_route(b, t, td);
    }
    b->stmts = ARENA_ARRAY(b->arena, IrStmt, od->stmt_count);
    b->stmt_count = od->stmt_count;
    for (int k = 0; k < od->stmt_count; k++) check_stmt(b, k);
    for (int k = 0; k < od->stmt_count; k++) check_where(b, k);

    if (b->ok) warn_unused_params(b);
    ElemType fallback = widest_input(b);
    /* a missing statement may be the one that would read an input */
    bool missing_def = false;
    for (int t = 0; t < b->tensor_count; t++)
        if (b->tensors[t].kind != TK_INPUT && b->info[t].decl && b->info[t].defined_by < 0)
            missing_def = true;
    for (int t = 0; t < b->tensor_count; t++) {
        IrTensor *T = &b->tensors[t];
        TensorInfo *ti = &b->info[t];
        if (ti->broken || b->parse_damaged) {
            /* a dropped statement may have assigned or read it */
        } else if (T->kind == TK_OUTPUT && ti->defined_by < 0) {
            bool was_ok = b->ok;
            Diag *d = op_error(b, T->span, "E0411", "`out` tensor `%s` is never assigned", T->name);
            diag_help(d, b->diags, "add a statement `%s[...] = ...;`", T->name);
            b->ok = was_ok;
            b->incomplete = true;
        } else if (T->kind == TK_INTERMEDIATE && ti->decl && ti->defined_by < 0) {
            bool was_ok = b->ok;
            b->incomplete = true;
            Diag *d = op_error(b, T->span, "E0417",
                               "`var %s` declares a tensor that no statement "
                               "assigns",
                               T->name);
            diag_help(d, b->diags, "remove the declaration or assign `%s`", T->name);
            b->ok = was_ok;
        } else if (T->kind == TK_INPUT && !ti->read && b->ok && !missing_def) {
            /* (after an error, e.g. a misspelt read of it, stay quiet) */
            Diag *d =
                diag_warning(b->diags, T->span, "W0401", "`in` tensor `%s` is never read", T->name);
            diag_help(d, b->diags, "remove it, or use it in a statement");
        }
        if (T->kind == TK_INTERMEDIATE && T->type == ET_NONE) T->type = fallback;
    }
}

/* ------------------------------------------------------- value phase */

/* A routing's slots per expert, C = ceil(F T K / E) (docs/language.md
 * 3.9), given to the slot index of each statement that moves rows by it
 * once the experts' index has its extent.  True when one was bound. */
/* C = ceil(F T K / E) slots an expert (docs/cost-model.md 15), unclamped;
 * the tolerance keeps an exact quotient from rounding up. */
static double route_slots(const IrRoute *r, double T, double K, double E) {
    return ceil(r->capacity * T * K / E - 1e-9);
}

static bool bind_slots(OpBuild *b, bool *bound) {
    bool any = false;
    for (int k = 0; k < b->stmt_count; k++) {
        const IrStmt *st = &b->stmts[k];
        if (st->routing != RT_DISPATCH && st->routing != RT_COMBINE) continue;
        IrRoute *r = &b->routes[st->route];
        if (st->slot < 0 || !bound[r->expert]) continue;
        const IrTensor *R = &b->tensors[r->tensor];
        double E = (double)b->indices[r->expert].extent;
        double C = route_slots(r, (double)R->extent[0], (double)R->extent[1], E);
        if (C < 1) C = 1;
        if (!(C < 1e18)) C = 1e18; /* past any T: check_routes reports it */
        r->slots = (int64_t)C;
        if (bound[st->slot]) continue; /* check_routes compares */
        bound[st->slot] = true;
        b->indices[st->slot].extent = r->slots;
        any = true;
    }
    return any;
}

/* Binds every index extent; reports disagreements. */
static bool bind_extents(OpBuild *b, DiagSink *diags, const Decl *decl) {
    int n = b->index_count;
    bool *bound = ARENA_ARRAY(b->arena, bool, n + 1);
    int *bound_tensor = ARENA_ARRAY(b->arena, int, n + 1);
    int *bound_pos = ARENA_ARRAY(b->arena, int, n + 1);
    bool ok = true;
    bool changed = true;
    while (changed || bind_slots(b, bound)) {
        changed = false;
        for (int i = 0; i < b->occ_count; i++) {
            Occurrence *o = &b->occ[i];
            IrTensor *T = &b->tensors[o->tensor];
            int64_t ext;
            if (T->kind == TK_INTERMEDIATE) {
                if (o->defines) continue;
                int def_ix = T->index[o->position];
                if (def_ix < 0 || !bound[def_ix]) continue;
                ext = b->indices[def_ix].extent;
            } else {
                ext = T->extent[o->position];
            }
            if (!bound[o->index]) {
                bound[o->index] = true;
                bound_tensor[o->index] = o->tensor;
                bound_pos[o->index] = o->position;
                b->indices[o->index].extent = ext;
                b->indices[o->index].first_use = o->span;
                changed = true;
            } else if (b->indices[o->index].extent != ext && !b->occ_reported[i]) {
                b->occ_reported[i] = true;
                ok = false;
                IrIndex *ix = &b->indices[o->index];
                Diag *d = diag_error(diags, o->span, "E0401",
                                     "index `%s` ranges over %lld here (dimension %d of `%s`) "
                                     "but over %lld where it was first bound",
                                     ix->name, (long long)ext, o->position + 1, T->name,
                                     (long long)ix->extent);
                diag_label(d, diags, ix->first_use,
                           "`%s` ranges over %lld here (dimension %d of `%s`)", ix->name,
                           (long long)ix->extent, bound_pos[o->index] + 1,
                           b->tensors[bound_tensor[o->index]].name);
                diag_note(d, diags, "an index has one extent in the whole op `%s`",
                          decl->name.name);
            }
        }
    }
    for (int i = 0; i < n; i++)
        if (!bound[i]) {
            ok = false;
            Diag *d = diag_error(diags, b->indices[i].first_use, "E0414",
                                 "index `%s` has no extent: no tensor dimension "
                                 "gives it one",
                                 b->indices[i].name);
            diag_help(d, diags,
                      "use `%s` in an access of an `in` or `out` tensor, or of "
                      "an intermediate defined with it",
                      b->indices[i].name);
        }
    return ok;
}

static bool eval_dims(OpBuild *b, ConstEnv *env) {
    bool ok = true;
    /* `M = 0` is one mistake, however many dimensions are written `M` */
    bool *param_reported = ARENA_ARRAY(b->arena, bool, b->od->param_count + 1);
    for (int t = 0; t < b->tensor_count; t++) {
        IrTensor *T = &b->tensors[t];
        const TensorDecl *td = b->info[t].decl;
        if (!td || T->kind == TK_INTERMEDIATE) continue;
        for (int i = 0; i < td->dim_count; i++) {
            int64_t v;
            /* the subject is put together only for a message */
            static const char *const ordinals[] = {
                "dimension 1 of ", "dimension 2 of ", "dimension 3 of ", "dimension 4 of ",
                "dimension 5 of ", "dimension 6 of ", "dimension 7 of ", "dimension 8 of "};
            char ordinal[32];
            if (i < (int)(sizeof ordinals / sizeof ordinals[0]))
                env->where = subject_of(ordinals[i], T->name);
            else
                env->where =
                    subject_of(intern(ordinal, (size_t)snprintf(ordinal, sizeof ordinal,
                                                                "dimension %d of ", i + 1)),
                               T->name);
            if (!const_eval_int(env, td->dims[i], env->where, &v)) {
                ok = false;
                continue;
            }
            if (v < 1) {
                ok = false;
                const Expr *de = td->dims[i];
                int p = de->kind == EX_NAME ? find_param(b->od, de->u.name) : -1;
                if (p >= 0 && param_reported[p]) continue;
                Diag *d = diag_error(env->diags, de->span, "E0212", "%s must be positive, got %lld",
                                     subject_text(env->where), (long long)v);
                if (p >= 0) {
                    param_reported[p] = true;
                    diag_note(d, env->diags,
                              "parameter `%s` is %lld: the other "
                              "dimensions written `%s` are not "
                              "reported again",
                              de->u.name, (long long)v, de->u.name);
                }
                continue;
            }
            T->extent[i] = v;
        }
    }
    return ok;
}

/* A cache's slot has its extents: all of them (`K.all`), or all but the
 * appended position's (`K.new`). */
static void slot_extents(OpBuild *b) {
    for (int t = 0; t < b->tensor_count; t++) {
        IrTensor *S = &b->tensors[t];
        if (S->appends_to < 0) continue;
        const IrTensor *K = &b->tensors[S->appends_to];
        for (int i = 0, r = 0; i < K->rank; i++)
            if (i != S->append_dim) S->extent[r++] = K->extent[i];
    }
}

/* Each route's capacity factor, evaluated. */
static bool eval_capacities(OpBuild *b, ConstEnv *env) {
    bool ok = true;
    for (int i = 0; i < b->route_count; i++) {
        IrRoute *r = &b->routes[i];
        const Expr *e = b->route_capacity[i];
        r->capacity = 1;
        if (!e) continue;
        Value v = const_eval(env, e);
        if (v.kind == VK_ERROR) {
            ok = false;
            continue;
        }
        double f = v.kind == VK_INT ? (double)v.i : v.r;
        if (v.kind == VK_QUANTITY || !(f > 0) || !isfinite(f)) {
            Diag *d = diag_error(env->diags, e->span, "E0438",
                                 "the capacity of route `%s` is a factor over the mean load, a "
                                 "number above 0",
                                 b->tensors[r->tensor].name);
            diag_help(d, env->diags, "1 gives each expert T K / E slots, 1.25 a quarter more");
            ok = false;
            continue;
        }
        r->capacity = f;
    }
    return ok;
}

/* What a routing can and cannot do with the extents bound: each token
 * picks K different experts of E, and an expert holds a token once. */
static bool check_routes(OpBuild *b, DiagSink *diags) {
    bool ok = true;
    for (int k = 0; k < b->stmt_count; k++) {
        const IrStmt *st = &b->stmts[k];
        if ((st->routing != RT_DISPATCH && st->routing != RT_COMBINE) || st->slot < 0) continue;
        const IrRoute *r = &b->routes[st->route];
        const IrIndex *ix = &b->indices[st->slot];
        if (ix->extent == r->slots) continue;
        Diag *d = diag_error(diags, st->span, "E0438",
                             "slot index `%s` ranges over %lld, but route `%s` gives each expert "
                             "%lld slots",
                             ix->name, (long long)ix->extent, b->tensors[r->tensor].name,
                             (long long)r->slots);
        diag_label(d, diags, ix->first_use, "`%s` ranges over %lld here", ix->name,
                   (long long)ix->extent);
        diag_note(d, diags, "C = ceil(capacity x T x K / E) = ceil(%g x %lld x %lld / %lld)",
                  r->capacity, (long long)b->tensors[r->tensor].extent[0],
                  (long long)b->tensors[r->tensor].extent[1],
                  (long long)b->indices[r->expert].extent);
        ok = false;
    }
    for (int i = 0; i < b->route_count; i++) {
        const IrRoute *r = &b->routes[i];
        if (r->router < 0 || r->expert < 0) continue;
        const IrTensor *R = &b->tensors[r->tensor];
        int64_t T = R->extent[0], K = R->extent[1], E = b->indices[r->expert].extent;
        Span at = b->stmts[r->router].span;
        if (K > E) {
            Diag *d = diag_error(diags, at, "E0438",
                                 "route `%s`: each of %lld tokens picks %lld experts, but there "
                                 "are %lld",
                                 R->name, (long long)T, (long long)K, (long long)E);
            diag_label(d, diags, r->span, "K = %lld here", (long long)K);
            ok = false;
            continue;
        }
        if (r->slots > T) {
            /* the slots as the formula gives them: the stored count is
             * clamped for a capacity this large */
            double slots = route_slots(r, (double)T, (double)K, (double)E);
            Diag *d = diag_error(diags, r->span, "E0438",
                                 "route `%s`: capacity %g gives each expert %.15g slots, but "
                                 "there are %lld tokens and each comes to an expert at most once",
                                 R->name, r->capacity, slots, (long long)T);
            diag_help(d, diags, "at most %g: T E / (T K) = E / K", (double)E / (double)K);
            ok = false;
            continue;
        }
        if (r->slots > 0 && (double)r->slots * (double)E < (double)T * (double)K) {
            Diag *d = diag_warning(diags, r->span, "W0403",
                                   "route `%s`: %lld experts x %lld slots hold %lld of the %lld "
                                   "rows the tokens route: %.3g%% of them are dropped",
                                   R->name, (long long)E, (long long)r->slots,
                                   (long long)(r->slots * E), (long long)(T * K),
                                   100.0 * (1.0 - (double)(r->slots * E) / (double)(T * K)));
            diag_help(d, diags, "a capacity of 1 or more keeps every row of a uniform routing");
        }
    }
    return ok;
}

static bool check_sizes(OpBuild *b, DiagSink *diags) {
    bool ok = true;
    for (int t = 0; t < b->tensor_count; t++) {
        IrTensor *T = &b->tensors[t];
        int64_t bytes = (elem_type_bits(T->type) + 7) / 8;
        if (bytes < 1) bytes = 1;
        bool fits = true;
        for (int i = 0; i < T->rank && fits; i++) fits = checked_mul(bytes, T->extent[i], &bytes);
        if (!fits) {
            diag_error(diags, T->span, "E0422", "tensor `%s` is larger than 2^63 bytes", T->name);
            ok = false;
        }
    }
    return ok;
}

/* count items of `size` bytes copied into `arena` (NULL items for none). */
static void *exact_copy(Arena *arena, const void *items, size_t size, int count) {
    void *copy = arena_alloc(arena, size * (size_t)count);
    if (count) memcpy(copy, items, size * (size_t)count);
    return copy;
}

/* The tensors copied into `arena` with extents of their own, exact-size
 * (one block for all of them), and index ids copied too when
 * `own_indices`, else shared with `tensors`. */
static IrTensor *copy_tensors(Arena *arena, const IrTensor *tensors, int count, bool own_indices) {
    IrTensor *copy = exact_copy(arena, tensors, sizeof(IrTensor), count);
    int ranks = 0;
    for (int t = 0; t < count; t++) ranks += tensors[t].rank;
    int64_t *extents = ARENA_ARRAY(arena, int64_t, ranks ? ranks : 1);
    int *indices = own_indices ? ARENA_ARRAY(arena, int, ranks ? ranks : 1) : NULL;
    for (int t = 0; t < count; t++) {
        int r = tensors[t].rank;
        memcpy(extents, tensors[t].extent, sizeof(int64_t) * (size_t)r);
        copy[t].extent = extents;
        extents += r;
        if (own_indices) {
            memcpy(indices, tensors[t].index, sizeof(int) * (size_t)r);
            copy[t].index = indices;
            indices += r;
        }
    }
    return copy;
}

/* The structure of an op declaration (indices, tensors, statements), its
 * structural errors into `structural`. */
static OpBuild *built_structure(Sema *s, const Decl *decl, DiagSink *structural) {
    OpBuild *b = ARENA_NEW(s->arena, OpBuild);
    b->s = s;
    b->arena = s->arena;
    b->diags = structural;
    b->decl = decl;
    b->od = &decl->u.op;
    Arena scratch = {0};
    b->scratch = &scratch;
    build_structure(b);
    b->scratch = NULL;
    b->tensors = copy_tensors(b->arena, b->tensors, b->tensor_count, true);
    b->info = exact_copy(b->arena, b->info, sizeof(TensorInfo), b->tensor_count);
    b->tensor_cap = b->tensor_count;
    b->indices = exact_copy(b->arena, b->indices, sizeof(IrIndex), b->index_count);
    b->index_cap = b->index_count;
    b->occ = exact_copy(b->arena, b->occ, sizeof(Occurrence), b->occ_count);
    b->occ_cap = b->occ_count;
    arena_free_all(&scratch);
    if (b->ok) {
        /* Once per declaration: every instantiation shares the statements,
         * and tensor and index ids are the same in each. */
        IrOp names = {.indices = b->indices,
                      .index_count = b->index_count,
                      .tensors = b->tensors,
                      .tensor_count = b->tensor_count,
                      .stmts = b->stmts,
                      .stmt_count = b->stmt_count};
        record_stmt_syntax(b->arena, &names, b->od);
    }
    return b;
}

static DiagSink *scratch_sink(Arena *arena);

/* The op's structure: the one check_op_structure built, or (for an op not
 * checked in this Sema) one built now with its diagnostics dropped. */
static const OpBuild *op_structure(Sema *s, const Decl *decl) {
    OpCacheEntry *e = op_entry(s, decl);
    if (e->structure) return e->structure;
    return built_structure(s, decl, scratch_sink(s->arena));
}

/* What an instantiation changes (extents of tensors and indices), copied
 * exact-size from the shared structure, and its own marks of reported
 * occurrences; statements, occurrences and tensor information stay
 * shared. */
static OpBuild instance_of(Arena *arena, const OpBuild *shared) {
    OpBuild b = *shared;
    b.tensors = copy_tensors(arena, shared->tensors, shared->tensor_count, false);
    b.indices = exact_copy(arena, shared->indices, sizeof(IrIndex), shared->index_count);
    b.occ_reported = ARENA_ARRAY(arena, bool, shared->occ_count);
    b.routes = exact_copy(arena, shared->routes, sizeof(IrRoute), shared->route_count);
    return b;
}

/* An op holding the builder's indices, tensors and statements. */
static IrOp *op_of(Sema *s, const Decl *decl, const OpBuild *b) {
    IrOp *op = ARENA_NEW(s->arena, IrOp);
    op->name = decl->name.name;
    op->span = decl->span;
    op->indices = b->indices;
    op->index_count = b->index_count;
    op->tensors = b->tensors;
    op->tensor_count = b->tensor_count;
    op->stmts = b->stmts;
    op->stmt_count = b->stmt_count;
    op->forward_count = b->od->derived ? b->od->forward_count : b->stmt_count;
    op->routes = b->routes;
    op->route_count = b->route_count;
    /* built_structure recorded the statements' syntax of a sound op */
    if (!b->ok) record_stmt_syntax(s->arena, op, b->od);
    return op;
}

static IrOp *instantiate(Sema *s, const Decl *decl, const int64_t *values, DiagSink *value_diags) {
    const OpBuild *shared = op_structure(s, decl);
    if (!shared->ok || !values) return NULL;
    OpBuild instance = instance_of(s->arena, shared);
    OpBuild *b = &instance; /* lives while instantiating; the IrOp keeps its arrays */
    ConstEnv env = s->env;
    env.diags = value_diags;
    Name *names = ARENA_ARRAY(s->arena, Name, b->od->param_count + 1);
    for (int i = 0; i < b->od->param_count; i++) names[i] = b->od->params[i].name.name;
    env.param_names = names;
    env.param_values = values;
    env.param_count = b->od->param_count;
    env.expr_depth = 0;
    if (!eval_dims(b, &env)) return NULL;
    slot_extents(b);
    if (!eval_capacities(b, &env)) return NULL;
    if (!bind_extents(b, value_diags, decl)) return NULL;
    for (int t = 0; t < b->tensor_count; t++) {
        IrTensor *T = &b->tensors[t];
        /* an intermediate, and a routed view, have its indices' extents */
        if (T->kind == TK_INTERMEDIATE || T->view_of >= 0)
            for (int i = 0; i < T->rank; i++)
                T->extent[i] = T->index[i] >= 0 ? b->indices[T->index[i]].extent : 1;
    }
    if (!check_routes(b, value_diags)) return NULL;
    if (!check_sizes(b, value_diags)) return NULL;
    if (b->incomplete) return NULL; /* its structural error was reported */
    if (!instantiate_where(b, &env, value_diags)) return NULL;
    IrOp *op = op_of(s, decl, b);
    op->param_count = b->od->param_count;
    op->param_names = names;
    op->param_values = ARENA_ARRAY(s->arena, int64_t, op->param_count + 1);
    memcpy(op->param_values, values, sizeof(int64_t) * (size_t)op->param_count);
    return op;
}

static DiagSink *scratch_sink(Arena *arena) {
    DiagSink *d = ARENA_NEW(arena, DiagSink);
    diags_init(d, arena);
    return d;
}

void decl_cache_reserve(Arena *arena, DeclCache *c, int count) {
    int cap = 64;
    while (cap < 2 * (count + 1)) cap *= 2;
    *c = (DeclCache){.slots = ARENA_ARRAY(arena, DeclCacheSlot, cap), .cap = cap};
}

DeclCacheSlot *decl_cache_slot(Arena *arena, DeclCache *c, const Decl *decl) {
    if (2 * (c->count + 1) > c->cap) {
        DeclCache grown = {0};
        grown.cap = c->cap ? c->cap * 2 : 64;
        grown.slots = ARENA_ARRAY(arena, DeclCacheSlot, grown.cap);
        for (int i = 0; i < c->cap; i++)
            if (c->slots[i].decl) *decl_cache_slot(arena, &grown, c->slots[i].decl) = c->slots[i];
        grown.count = c->count;
        *c = grown;
    }
    size_t mask = (size_t)c->cap - 1;
    size_t i = ((uintptr_t)decl >> 4) * 0x9E3779B97F4A7C15u & mask;
    while (c->slots[i].decl && c->slots[i].decl != decl) i = (i + 1) & mask;
    if (!c->slots[i].decl) {
        c->slots[i].decl = decl;
        c->count++;
    }
    return &c->slots[i];
}

/* The first cache record of an op: its structure check. */
static OpCacheEntry *op_entry(Sema *s, const Decl *op_decl) {
    DeclCacheSlot *slot = decl_cache_slot(s->arena, &s->op_cache, op_decl);
    if (!slot->entry) {
        OpCacheEntry *e = ARENA_NEW(s->arena, OpCacheEntry);
        e->decl = op_decl;
        slot->entry = e;
    }
    return slot->entry;
}

OpCacheEntry *op_cache_entry(Sema *s, const Decl *op_decl) {
    return op_entry(s, op_decl);
}

bool check_op_structure(Sema *s, const Decl *op_decl) {
    OpCacheEntry *e = op_entry(s, op_decl);
    if (e->structure_checked) return e->structure_ok;
    e->structure_checked = true;
    e->structure = built_structure(s, op_decl, s->diags);
    e->structure_ok = e->structure->ok;
    return e->structure_ok;
}

IrOp *op_instantiate(Sema *s, const Decl *op_decl, const int64_t *values, Span use_site) {
    int before = s->diags->count;
    IrOp *op = instantiate(s, op_decl, values, s->diags);
    /* the instantiation's text is only formatted for a diagnostic */
    if (use_site.file >= 0 && s->diags->count > before) {
        const char *args = "";
        for (int i = 0; i < op_decl->u.op.param_count; i++)
            args = arena_printf(s->arena, "%s%s%s = %lld", args, i ? ", " : "",
                                op_decl->u.op.params[i].name.name, (long long)values[i]);
        for (int i = before; i < s->diags->count; i++)
            diag_label(s->diags->items[i], s->diags, use_site, "in `%s<%s>`, instantiated here",
                       op_decl->name.name, args);
    }
    return op;
}

IrOp *op_names(Sema *s, const Decl *op_decl) {
    return op_of(s, op_decl, op_structure(s, op_decl));
}

/* Parameter values: bindings first, then defaults (a default may use the
 * parameters before it).  Reports at the binding or at use_site. */
bool op_bind_params(Sema *s, const Decl *op_decl, const ParamBinding *bindings, int binding_count,
                    Span use_site, int64_t *values, bool *complete) {
    const OpDecl *od = &op_decl->u.op;
    bool ok = true;
    bool valued = true; /* every parameter has a value */
    bool *given = ARENA_ARRAY(s->arena, bool, od->param_count + 1);
    ConstEnv env = s->env;
    env.where = subject("a parameter value");
    env.expr_depth = 0;
    for (int i = 0; i < binding_count; i++) {
        const ParamBinding *pb = &bindings[i];
        if (!pb->name.name) {
            ok = false;
            continue;
        }
        int p = find_param(od, pb->name.name);
        if (p < 0) {
            Diag *d = diag_error(s->diags, pb->name.span, "E0303", "op `%s` has no parameter `%s`",
                                 op_decl->name.name, pb->name.name);
            const char **names = ARENA_ARRAY(s->arena, const char *, od->param_count + 1);
            for (int k = 0; k < od->param_count; k++) names[k] = od->params[k].name.name;
            const char *best = spell_suggest(pb->name.name, names, od->param_count);
            if (best)
                diag_help(d, s->diags, "did you mean `%s`?", best);
            else if (od->param_count == 0)
                diag_note(d, s->diags, "`%s` takes no parameters", op_decl->name.name);
            else {
                char list[512];
                size_t len = 0;
                list[0] = 0;
                for (int k = 0; k < od->param_count && len < sizeof list - 64; k++)
                    len += (size_t)snprintf(list + len, sizeof list - len, "%s%.48s", k ? ", " : "",
                                            names[k] ? names[k] : "?");
                diag_note(d, s->diags, "its parameters are %s", list);
            }
            diag_label(d, s->diags, op_decl->name.span, "`%s` is declared here",
                       op_decl->name.name);
            ok = false;
            continue;
        }
        if (given[p]) {
            Diag *d = diag_error(s->diags, pb->name.span, "E0325", "parameter `%s` is given twice",
                                 pb->name.name);
            for (int k = 0; k < i; k++)
                if (bindings[k].name.name == pb->name.name)
                    diag_label(d, s->diags, bindings[k].name.span, "first given here");
            ok = false;
            continue;
        }
        given[p] = true;
        if (!const_eval_int(&env, pb->value, subject_of("parameter ", pb->name.name), &values[p]))
            ok = valued = false;
    }
    Name *names = ARENA_ARRAY(s->arena, Name, od->param_count + 1);
    for (int p = 0; p < od->param_count; p++) names[p] = od->params[p].name.name;
    for (int p = 0; p < od->param_count; p++) {
        if (given[p]) continue;
        const Param *pd = &od->params[p];
        if (!pd->default_value) {
            Diag *d = diag_error(s->diags, use_site, "E0305", "parameter `%s` of `%s` has no value",
                                 pd->name.name, op_decl->name.name);
            diag_label(d, s->diags, pd->name.span, "declared here without a default");
            diag_help(d, s->diags, "give it one: `%s<%s = ...>`", op_decl->name.name,
                      pd->name.name);
            ok = valued = false;
            continue;
        }
        ConstEnv denv = env;
        denv.param_names = names;
        denv.param_values = values;
        denv.param_count = p; /* earlier parameters are visible */
        denv.param_later = od->param_count;
        denv.where = subject("a parameter default");
        if (!const_eval_int(&denv, pd->default_value, subject_of("the default of ", pd->name.name),
                            &values[p]))
            ok = valued = false;
    }
    if (complete) *complete = valued;
    return ok;
}

static bool same_values(const int64_t *a, const int64_t *b, int n) {
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) return false;
    return true;
}

IrOp *sema_op_for(Sema *s, const Decl *op_decl, const int64_t *values, Span use_site) {
    int n = op_decl->u.op.param_count;
    if (!check_op_structure(s, op_decl)) return NULL;
    if (!values) {
        int64_t *defaults = ARENA_ARRAY(s->arena, int64_t, n + 1);
        if (!op_bind_params(s, op_decl, NULL, 0, op_decl->name.span, defaults, NULL)) return NULL;
        values = defaults;
    }
    OpCacheEntry *first = op_entry(s, op_decl);
    for (OpCacheEntry *e = first->next; e; e = e->next)
        if (same_values(e->values, values, n)) return e->op;
    OpCacheEntry *e = ARENA_NEW(s->arena, OpCacheEntry);
    e->decl = op_decl;
    e->instantiated = true;
    e->values = ARENA_ARRAY(s->arena, int64_t, n + 1);
    memcpy(e->values, values, sizeof(int64_t) * (size_t)n);
    e->next = first->next;
    first->next = e;
    e->op = op_instantiate(s, op_decl, values, use_site);
    return e->op;
}

IrOp *ir_instantiate_op(Program *p, const Decl *op_decl, const ParamBinding *bindings,
                        int binding_count, Span use_site) {
    if (!op_decl || op_decl->kind != DK_OP) return NULL;
    Sema *s = sema_for_program(p, p->diags);
    int64_t *values = ARENA_ARRAY(p->arena, int64_t, op_decl->u.op.param_count + 1);
    if (!op_bind_params(s, op_decl, bindings, binding_count, use_site, values, NULL)) return NULL;
    /* Structural errors were reported by check_program. */
    DiagSink *quiet = scratch_sink(p->arena);
    s->diags = quiet;
    bool sound = check_op_structure(s, op_decl);
    s->diags = p->diags;
    if (!sound) return NULL;
    return op_instantiate(s, op_decl, values, use_site);
}
