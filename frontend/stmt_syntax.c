/* stmt_syntax.c — what later stages need of a statement as written,
 * recorded in its IrStmt once the op is built: the left side's indices,
 * every access of the right side in source order, and the listing's line
 * for it.  After this nothing reads the statement's syntax. */
#include "sema.h"

#include <stdio.h>
#include <string.h>

/* The listing's line for a statement is at most this long (cut with ...). */
#define STMT_TEXT_CAP 256

/* The right side as written, with tensor names and no indices. */
static void expr_text(char *buf, size_t cap, size_t *used, const Expr *e) {
#define PUT(...)                                                                                   \
    (*used += (size_t)snprintf(buf + *used, *used < cap ? cap - *used : 0, __VA_ARGS__))
    if (!e || *used + 8 >= cap) return;
    switch (e->kind) {
    case EX_INT: PUT("%lld", (long long)e->u.int_value); break;
    case EX_REAL: PUT("%g", e->u.real_value); break;
    case EX_QUANTITY: PUT("%g", e->u.quantity.value); break;
    case EX_NAME: PUT("%s", e->u.name); break;
    case EX_ACCESS: PUT("%s", e->u.access.tensor.name); break;
    case EX_UNARY:
        PUT("-");
        expr_text(buf, cap, used, e->u.unary.operand);
        break;
    case EX_BINARY: {
        bool paren_l = e->u.binary.lhs->kind == EX_BINARY &&
                       (e->u.binary.op == '*' || e->u.binary.op == '/') &&
                       (e->u.binary.lhs->u.binary.op == '+' || e->u.binary.lhs->u.binary.op == '-');
        bool paren_r = e->u.binary.rhs->kind == EX_BINARY &&
                       (e->u.binary.op != '+' || e->u.binary.rhs->u.binary.op == '-');
        if (paren_l) PUT("(");
        expr_text(buf, cap, used, e->u.binary.lhs);
        if (paren_l) PUT(")");
        PUT(" %c ", e->u.binary.op);
        if (paren_r) PUT("(");
        expr_text(buf, cap, used, e->u.binary.rhs);
        if (paren_r) PUT(")");
        break;
    }
    case EX_CALL:
        PUT("%s(", e->u.call.fn.name);
        for (int i = 0; i < e->u.call.arg_count; i++) {
            if (i) PUT(", ");
            expr_text(buf, cap, used, e->u.call.args[i]);
        }
        PUT(")");
        break;
    case EX_REDUCE:
        PUT("%s(", e->u.reduce.fn.name);
        for (int i = 0; i < e->u.reduce.indices.count; i++)
            PUT("%s%s", i ? ", " : "", e->u.reduce.indices.items[i].name);
        PUT(") ");
        expr_text(buf, cap, used, e->u.reduce.body);
        break;
    case EX_ERROR:
    case EX_HOLE: PUT("?"); break;
    }
#undef PUT
}

static void access_of(const IrOp *op, IrAccess *acc, Name tensor, const IdentList *indices) {
    acc->tensor = tensor ? ir_find_tensor(op, tensor) : -1;
    acc->rank = indices->count;
    for (int r = 0; r < IR_MAX_RANK; r++)
        acc->index[r] = r < indices->count ? ir_find_index(op, indices->items[r].name) : -1;
}

/* The accesses of the right side, counted so that they are stored
 * exact-size. */
static int count_reads(const Expr *e) {
    if (!e) return 0;
    switch (e->kind) {
    case EX_ACCESS: return 1;
    case EX_UNARY: return count_reads(e->u.unary.operand);
    case EX_BINARY: return count_reads(e->u.binary.lhs) + count_reads(e->u.binary.rhs);
    case EX_CALL: {
        int n = 0;
        for (int k = 0; k < e->u.call.arg_count; k++) n += count_reads(e->u.call.args[k]);
        return n;
    }
    case EX_REDUCE: return count_reads(e->u.reduce.body);
    default: return 0;
    }
}

typedef struct Reads {
    const IrOp *op;
    IrAccess *items; /* room for count_reads of the right side */
    int count;
} Reads;

static void collect_reads(Reads *r, const Expr *e) {
    if (!e) return;
    switch (e->kind) {
    case EX_ACCESS:
        access_of(r->op, &r->items[r->count++], e->u.access.tensor.name, &e->u.access.indices);
        break;
    case EX_UNARY: collect_reads(r, e->u.unary.operand); break;
    case EX_BINARY:
        collect_reads(r, e->u.binary.lhs);
        collect_reads(r, e->u.binary.rhs);
        break;
    case EX_CALL:
        for (int k = 0; k < e->u.call.arg_count; k++) collect_reads(r, e->u.call.args[k]);
        break;
    case EX_REDUCE: collect_reads(r, e->u.reduce.body); break;
    default: break;
    }
}

void record_stmt_syntax(Arena *arena, IrOp *op, const OpDecl *od) {
    for (int k = 0; k < op->stmt_count && k < od->stmt_count; k++) {
        const Stmt *stmt = od->stmts[k];
        IrStmt *st = &op->stmts[k];
        access_of(op, &st->target, stmt->target.name, &stmt->indices);
        int reads = count_reads(stmt->rhs);
        Reads r = {op, reads ? ARENA_ARRAY(arena, IrAccess, reads) : NULL, 0};
        collect_reads(&r, stmt->rhs);
        st->reads = r.items;
        st->read_count = r.count;
        st->text = NULL;
        if (!stmt->rhs) continue;
        char buf[STMT_TEXT_CAP];
        size_t used = (size_t)snprintf(buf, sizeof buf, "%s = ", st->name);
        expr_text(buf, sizeof buf, &used, stmt->rhs);
        if (used >= sizeof buf) strcpy(buf + sizeof buf - 4, "...");
        st->text = arena_strdup(arena, buf);
    }
}
