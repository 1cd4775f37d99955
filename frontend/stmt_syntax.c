/* stmt_syntax.c — what later stages need of a statement as written,
 * recorded in its IrStmt once the op is built: the left side's indices,
 * every access of the right side in source order, and the listing's line
 * for it.  After this nothing reads the statement's syntax. */
#include "sema.h"

#include <stdio.h>
#include <string.h>

/* The listing's line for a statement is at most this long (cut with ...). */
#define STMT_TEXT_CAP 256

/* A line being written into a fixed buffer with snprintf's rules: what
 * does not fit is cut (the buffer stays terminated) but still counted in
 * `used`, so that a cut line can be marked.  Names are copied, not
 * formatted: this runs for every statement of every op. */
typedef struct LineBuf {
    char *buf;
    size_t cap, used;
    bool indices; /* write accesses with their indices (a derived op's text) */
} LineBuf;

static void put(LineBuf *l, const char *s, size_t n) {
    if (l->used < l->cap) {
        size_t room = l->cap - l->used - 1;
        size_t k = n < room ? n : room;
        memcpy(l->buf + l->used, s, k);
        l->buf[l->used + k] = '\0';
    }
    l->used += n;
}

/* (a NULL name reads "(null)", as printf's %s wrote it here before) */
static void put_str(LineBuf *l, const char *s) {
    if (!s) s = "(null)";
    put(l, s, strlen(s));
}

/* A number snprintf wrote into num[NUMBER_CAP], n its return value
 * (numbers are rare in statements: printf's formatting is kept for them). */
#define NUMBER_CAP 64
static void put_number(LineBuf *l, const char *num, int n) {
    if (n > 0) put(l, num, n < NUMBER_CAP ? (size_t)n : NUMBER_CAP - 1);
}

static void put_indices(LineBuf *l, const IdentList *ix) {
    put(l, "[", 1);
    for (int i = 0; i < ix->count; i++) {
        if (i) put(l, ", ", 2);
        put_str(l, ix->items[i].name);
    }
    put(l, "]", 1);
}

/* The right side as written, with tensor names and no indices (with
 * them when l->indices). */
static void expr_text(LineBuf *l, const Expr *e) {
    if (!e || (!l->indices && l->used + 8 >= l->cap)) return;
    char num[NUMBER_CAP];
    switch (e->kind) {
    case EX_INT:
        put_number(l, num, snprintf(num, sizeof num, "%lld", (long long)e->u.int_value));
        break;
    case EX_REAL: put_number(l, num, snprintf(num, sizeof num, "%g", e->u.real_value)); break;
    case EX_QUANTITY:
        put_number(l, num, snprintf(num, sizeof num, "%g", e->u.quantity.value));
        break;
    case EX_NAME: put_str(l, e->u.name); break;
    case EX_ACCESS:
        put_str(l, e->u.access.tensor.name);
        if (l->indices) put_indices(l, &e->u.access.indices);
        break;
    case EX_UNARY:
        put(l, "-", 1);
        if (l->indices && e->u.unary.operand->kind == EX_BINARY) {
            put(l, "(", 1);
            expr_text(l, e->u.unary.operand);
            put(l, ")", 1);
        } else
            expr_text(l, e->u.unary.operand);
        break;
    case EX_BINARY: {
        bool paren_l = e->u.binary.lhs->kind == EX_BINARY &&
                       (e->u.binary.op == '*' || e->u.binary.op == '/') &&
                       (e->u.binary.lhs->u.binary.op == '+' || e->u.binary.lhs->u.binary.op == '-');
        bool paren_r = e->u.binary.rhs->kind == EX_BINARY &&
                       (e->u.binary.op != '+' || e->u.binary.rhs->u.binary.op == '-');
        if (paren_l) put(l, "(", 1);
        expr_text(l, e->u.binary.lhs);
        if (paren_l) put(l, ")", 1);
        char op[3] = {' ', e->u.binary.op, ' '};
        put(l, op, 3);
        if (paren_r) put(l, "(", 1);
        expr_text(l, e->u.binary.rhs);
        if (paren_r) put(l, ")", 1);
        break;
    }
    case EX_CALL:
        put_str(l, e->u.call.fn.name);
        put(l, "(", 1);
        for (int i = 0; i < e->u.call.arg_count; i++) {
            if (i) put(l, ", ", 2);
            expr_text(l, e->u.call.args[i]);
        }
        put(l, ")", 1);
        break;
    case EX_REDUCE:
        put_str(l, e->u.reduce.fn.name);
        put(l, "(", 1);
        for (int i = 0; i < e->u.reduce.indices.count; i++) {
            if (i) put(l, ", ", 2);
            put_str(l, e->u.reduce.indices.items[i].name);
        }
        put(l, ") ", 2);
        bool paren =
            l->indices && e->u.reduce.body->kind != EX_ACCESS && e->u.reduce.body->kind != EX_CALL;
        if (paren) put(l, "(", 1);
        expr_text(l, e->u.reduce.body);
        if (paren) put(l, ")", 1);
        break;
    case EX_ERROR:
    case EX_HOLE: put(l, "?", 1); break;
    }
}

static void access_of(const IrOp *op, const NameMap *tensors, IrAccess *acc, Name tensor,
                      const IdentList *indices) {
    acc->tensor = tensor ? name_map_get(tensors, tensor) : -1;
    acc->rank = indices->count;
    for (int r = 0; r < IR_MAX_RANK; r++)
        acc->index[r] = r < indices->count ? ir_find_index(op, indices->items[r].name) : -1;
}

void expr_for_each_read(const Expr *e, void (*fn)(const Expr *leaf, void *ctx), void *ctx) {
    if (!e) return;
    switch (e->kind) {
    case EX_ACCESS:
    case EX_NAME: fn(e, ctx); break;
    case EX_UNARY: expr_for_each_read(e->u.unary.operand, fn, ctx); break;
    case EX_BINARY:
        expr_for_each_read(e->u.binary.lhs, fn, ctx);
        expr_for_each_read(e->u.binary.rhs, fn, ctx);
        break;
    case EX_CALL:
        for (int k = 0; k < e->u.call.arg_count; k++)
            expr_for_each_read(e->u.call.args[k], fn, ctx);
        break;
    case EX_REDUCE: expr_for_each_read(e->u.reduce.body, fn, ctx); break;
    default: break;
    }
}

/* The accesses of the right side, counted first so that they are stored
 * exact-size (a bare name may be a scalar tensor read as `total`: counted,
 * and kept when it names a tensor). */
static void count_read(const Expr *leaf, void *ctx) {
    (void)leaf;
    (*(int *)ctx)++;
}

typedef struct Reads {
    const IrOp *op;
    const NameMap *tensors;
    IrAccess *items; /* room for every leaf of the right side */
    int count;
} Reads;

static void collect_read(const Expr *e, void *ctx) {
    Reads *r = ctx;
    if (e->kind == EX_ACCESS) {
        access_of(r->op, r->tensors, &r->items[r->count++], e->u.access.tensor.name,
                  &e->u.access.indices);
    } else if (name_map_get(r->tensors, e->u.name) >= 0) {
        /* `total` for `total[]`: a read of the scalar like any other */
        static const IdentList none = {NULL, 0};
        access_of(r->op, r->tensors, &r->items[r->count++], e->u.name, &none);
    }
}

void record_stmt_syntax(Arena *arena, IrOp *op, const OpDecl *od) {
    /* each name's first tensor, as ir_find_tensor finds it, without a
     * scan per access */
    Arena scratch = {0};
    NameMap tensors = {0};
    for (int t = 0; t < op->tensor_count; t++)
        if (name_map_get(&tensors, op->tensors[t].name) < 0)
            name_map_put(&scratch, &tensors, op->tensors[t].name, t);
    for (int k = 0; k < op->stmt_count && k < od->stmt_count; k++) {
        const Stmt *stmt = od->stmts[k];
        IrStmt *st = &op->stmts[k];
        access_of(op, &tensors, &st->target, stmt->target.name, &stmt->indices);
        if (st->out_tensor >= 0 && op->tensors[st->out_tensor].appends_to >= 0) {
            /* an append writes the slot `K.new`: K's indices but `new` */
            const IrTensor *slot = &op->tensors[st->out_tensor];
            IrAccess a = {.tensor = st->out_tensor, .rank = 0};
            for (int r = 0; r < st->target.rank; r++)
                if (r != slot->append_dim && a.rank < IR_MAX_RANK)
                    a.index[a.rank++] = st->target.index[r];
            st->target = a;
        }
        int reads = 0;
        expr_for_each_read(stmt->rhs, count_read, &reads);
        Reads r = {op, &tensors, reads ? ARENA_ARRAY(arena, IrAccess, reads) : NULL, 0};
        expr_for_each_read(stmt->rhs, collect_read, &r);
        st->reads = r.items;
        st->read_count = r.count;
        /* a routed statement reads (a dispatch) or writes (a combine) the
         * routed view, indexed by expert and slot (docs/language.md 3.9) */
        if (st->routing == RT_DISPATCH && r.count == 1) {
            const IrTensor *v = &op->tensors[st->inputs[0]];
            IrAccess a = {.tensor = v->id, .rank = v->rank};
            for (int i = 0; i < v->rank && i < IR_MAX_RANK; i++) a.index[i] = v->index[i];
            st->reads[0] = a;
        } else if (st->routing == RT_COMBINE) {
            const IrTensor *v = &op->tensors[st->out_tensor];
            IrAccess a = {.tensor = v->id, .rank = v->rank};
            for (int i = 0; i < v->rank && i < IR_MAX_RANK; i++) a.index[i] = v->index[i];
            st->target = a;
        }
        st->text = NULL;
        if (!stmt->rhs) continue;
        char buf[STMT_TEXT_CAP];
        buf[0] = '\0';
        LineBuf line = {buf, sizeof buf, 0, false};
        put_str(&line, st->name);
        put(&line, " = ", 3);
        expr_text(&line, stmt->rhs);
        if (stmt->by.name) {
            put(&line, " by ", 4);
            put_str(&line, stmt->by.name);
        }
        if (line.used >= sizeof buf) {
            strcpy(buf + sizeof buf - 4, "...");
            line.used = sizeof buf - 1;
        }
        st->text = arena_strndup(arena, buf, line.used);
        st->source = NULL;
        if (!od->derived) continue;
        /* a statement nobody wrote: its whole text, for the listing and
         * --dump-ir (derived text is not cut: it is shown in full) */
        size_t cap = STMT_TEXT_CAP;
        for (;;) {
            char *full = arena_alloc(arena, cap);
            full[0] = '\0';
            LineBuf whole = {full, cap, 0, true};
            put_str(&whole, st->name);
            put_indices(&whole, &stmt->indices);
            put(&whole, " = ", 3);
            expr_text(&whole, stmt->rhs);
            if (whole.used < cap) {
                st->source = full;
                break;
            }
            cap = whole.used + 1;
        }
    }
    arena_free_all(&scratch);
}
