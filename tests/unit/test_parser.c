/* Parser unit tests: the AST shape of each construct, quantities scaled to
 * SI by hand, spans, reduction hoisting, and error recovery counts. */
#include "frontend/ast.h"
#include "unit.h"

#include <stdlib.h>

static Arena arena;
static SourceManager sources;
static DiagSink diags;

static Module *parse(const char *text) {
    arena_free_all(&arena);
    sources_init(&sources, &arena);
    diags_init(&diags, &arena);
    SourceFile *f = sources_add(&sources, "t.cmt", text, strlen(text));
    return parse_module(&arena, f, &diags);
}

static const char *span_text(Span s) {
    const SourceFile *f = sources_get(&sources, s.file);
    return arena_strndup(&arena, f->text + s.start, s.end - s.start);
}

static void test_quantities(void) {
    Module *m = parse("const a = 2 MiB; const b = 64GB/s; const c = 0.25 pJ/MAC;\n"
                      "const d = 5 cycles; const e = 1_048_576; const f = 2.5e9;");
    CHECK(m->decl_count == 6 && diags.error_count == 0, "six consts parse");
    Expr *a = m->decls[0]->u.const_value;
    /* 2 MiB = 2 * 2^20 = 2097152 bytes */
    CHECK(a->kind == EX_QUANTITY && a->u.quantity.value == 2097152.0, "2 MiB in bytes");
    CHECK(a->u.quantity.dim.num == BU_BYTE && a->u.quantity.dim.den == BU_NONE, "2 MiB is a size");
    CHECK_STR(span_text(a->span), "2 MiB", "quantity span covers number and unit");
    CHECK_STR(span_text(a->u.quantity.unit_span), "MiB", "unit span");
    Expr *b = m->decls[1]->u.const_value;
    /* 64 GB/s = 64e9 B/s */
    CHECK_NEAR(b->u.quantity.value, 64e9, 1e-12, "64GB/s without a space");
    CHECK(b->u.quantity.dim.num == BU_BYTE && b->u.quantity.dim.den == BU_SECOND, "bandwidth dim");
    /* 0.25 pJ/MAC = 0.25e-12 J/MAC */
    CHECK_NEAR(m->decls[2]->u.const_value->u.quantity.value, 0.25e-12, 1e-9, "pJ/MAC");
    CHECK(m->decls[3]->u.const_value->u.quantity.dim.num == BU_CYCLE, "cycles keep their own base");
    CHECK(m->decls[4]->u.const_value->kind == EX_INT &&
              m->decls[4]->u.const_value->u.int_value == 1048576,
          "underscored integer");
    CHECK(m->decls[5]->u.const_value->kind == EX_REAL &&
              m->decls[5]->u.const_value->u.real_value == 2.5e9,
          "real with exponent");
}

static void test_not_a_unit(void) {
    /* `32 x 32`: x is not a unit, so it stays a word */
    Module *m = parse("arch a { compute m matrix { array 32 x 32; } }");
    CHECK(diags.error_count == 0, "array 32 x 32 parses");
    ArchItem *it = m->decls[0]->u.arch.items[0];
    Attr *at = it->body.items[0];
    CHECK(at->value_count == 2 && at->values[0]->u.int_value == 32 &&
              at->values[1]->u.int_value == 32,
          "array rows and columns");
}

static void test_op(void) {
    Module *m = parse("op gs<M = 256, N> {\n"
                      "  in A[M, K] : int8;\n"
                      "  var C : fp16;\n"
                      "  C[m, n] = A[m, k] * B[k, n];\n"
                      "  s[m] = sum(n) e[m, n] * 2;\n"
                      "  mx[m] = max(C[m, n], 0) - 1;\n"
                      "}\n");
    CHECK(diags.error_count == 0, "op parses");
    OpDecl *op = &m->decls[0]->u.op;
    CHECK(op->param_count == 2 && op->params[0].default_value &&
              op->params[1].default_value == NULL,
          "params with and without default");
    CHECK(op->tensor_count == 2 && op->tensors[1]->role == TR_VAR &&
              op->tensors[1]->type == ET_FP16,
          "in and var declarations");
    CHECK(op->stmt_count == 3, "three statements");
    Stmt *c = op->stmts[0];
    CHECK(c->indices.count == 2 && c->rhs->kind == EX_BINARY && c->rhs->u.binary.op == '*',
          "contraction is a product");
    /* the prefix covers the whole right side: sum(n) (e[m, n] * 2) */
    Expr *s = op->stmts[1]->rhs;
    CHECK(s->kind == EX_REDUCE && s->u.reduce.indices.count == 1 &&
              s->u.reduce.body->kind == EX_BINARY,
          "reduction hoisted over the product");
    CHECK_STR(span_text(s->span), "sum(n) e[m, n] * 2", "hoisted span covers the side");
    /* two-argument max is a call, not a reduction */
    Expr *mx = op->stmts[2]->rhs;
    CHECK(mx->kind == EX_BINARY && mx->u.binary.lhs->kind == EX_CALL &&
              mx->u.binary.lhs->u.call.arg_count == 2,
          "max(a, b) - x is the function");
}

static void test_mapping(void) {
    Module *m = parse("mapping f for gs<M = 512> on edge {\n"
                      "  spatial n -> (x, y), ? -> z;\n"
                      "  spatial for C, mx: n -> ?;\n"
                      "  tile GLB: m 64, n ?, ? 8;\n"
                      "  order GLB: ?;\n"
                      "  fuse C, mx at GLB;\n"
                      "  fuse ?;\n"
                      "  overlap none; objective edp; repeat 96;\n"
                      "}\n");
    CHECK(diags.error_count == 0, "mapping parses");
    MappingDecl *md = &m->decls[0]->u.mapping;
    CHECK(md->binding_count == 1 && md->item_count == 9, "bindings and items");
    MapItem *sp = md->items[0];
    CHECK(sp->kind == MI_SPATIAL && sp->assign_count == 2 && sp->assigns[0].dims.count == 2 &&
              sp->assigns[1].index.hole,
          "spatial assigns");
    CHECK(md->items[1]->stmts.count == 2 && md->items[1]->assigns[0].dims.items[0].hole,
          "per-statement spatial with a dim hole");
    MapItem *t = md->items[2];
    CHECK(t->tile_count == 3 && t->tiles[1].size->kind == EX_HOLE && t->tiles[2].index.hole,
          "tile holes");
    CHECK(md->items[3]->whole_hole && md->items[5]->whole_hole, "whole-line holes");
    CHECK(md->items[4]->stmts.count == 2 && md->items[4]->level.name, "fuse at level");
}

static void test_recovery(void) {
    Module *m = parse("const a = 1 +;\nconst b = 2;\nop o { x[i] = ; y[i] = 1; }\nconst c = 3;");
    CHECK(diags.error_count == 2, "two syntax errors, no cascade");
    CHECK(m->decl_count == 4, "declarations around errors survive");
    CHECK(m->decls[2]->kind == DK_OP && m->decls[2]->u.op.stmt_count == 1,
          "statement after a broken one is kept");
}

/* A declaration where a block expected its `}`: the error shows the `{`
 * that was never closed, not a "keyword used as a name" help. */
static void test_unclosed_block(void) {
    parse("op o<M = 4> {\n  in A[M] : fp16;\n  out B[M] : fp16;\n  B[m] = A[m];\n"
          "mapping x for o on a {}\n");
    const Diag *d = diags.count ? diags.items[0] : NULL;
    bool labelled = false;
    for (int i = 0; d && i < d->label_count; i++)
        labelled |= strstr(d->labels[i].message, "never closed") != NULL &&
                    d->labels[i].span.start == 12;
    CHECK(d && strstr(d->message, "found `mapping`") && !strstr(d->message, "keyword") &&
              labelled,
          "an op left open: the error at `mapping` points at its `{`");
}

static void test_comments(void) {
    Module *m = parse("// one\nconst a = 1; /* two */\n");
    CHECK(m->comment_count == 2, "comments recorded for the formatter");
    CHECK_STR(span_text(m->comments[1]), "/* two */", "block comment span");
}

static void test_hostile(void) {
    static char buf[4096];
    size_t n = 0;
    for (int i = 0; i < 1000; i++) buf[n++] = '(';
    buf[n] = 0;
    parse(buf);
    CHECK(diags.error_count == 1, "deep nesting is one error");
    const char nul[] = "const a = 1;\0const b = 2;";
    arena_free_all(&arena);
    sources_init(&sources, &arena);
    diags_init(&diags, &arena);
    Module *m = parse_module(&arena, sources_add(&sources, "n.cmt", nul, sizeof nul - 1), &diags);
    CHECK(diags.error_count == 1 && m->decl_count == 2, "NUL inside the file is a bad character");
}

/* `const x = ` then `count` copies of `term` then `last;`. */
static Module *parse_repeated(const char *term, int count, const char *last) {
    size_t tl = strlen(term), n = 0;
    char *text = malloc(16 + tl * (size_t)count + strlen(last));
    n += (size_t)sprintf(text, "const x = ");
    for (int i = 0; i < count; i++, n += tl) memcpy(text + n, term, tl);
    strcpy(text + n, last);
    strcat(text, ";");
    Module *m = parse(text);
    free(text);
    return m;
}

static int count_code(const char *code) {
    int n = 0;
    for (int i = 0; i < diags.count; i++)
        n += diags.items[i]->code && strcmp(diags.items[i]->code, code) == 0;
    return n;
}

/* The depth cap (E0217) is the parser's: every later walk relies on it. */
static void test_depth_cap(void) {
    Module *m = parse_repeated("1 + ", MAX_EXPR_DEPTH - 1, "1");
    Expr *e = m->decls[0]->u.const_value;
    CHECK(diags.error_count == 0 && e->kind == EX_BINARY, "a sum exactly at the cap parses");
    CHECK(e->depth == MAX_EXPR_DEPTH, "its depth is the number of terms");
    int deepest = 0;
    while (e->kind == EX_BINARY) {
        e = e->u.binary.lhs;
        deepest++;
    }
    CHECK(deepest + 1 == MAX_EXPR_DEPTH, "its left spine is that deep");
    m = parse_repeated("1 + ", 100000, "1");
    e = m->decls[0]->u.const_value;
    CHECK(count_code("E0217") == 1 && diags.error_count == 1, "a 100001-term sum: one E0217");
    CHECK(e->kind == EX_ERROR, "the refused sum is one error node, nothing to walk");
    /* reported at the operator that crosses the cap: after 4000 terms */
    CHECK(diags.items[0]->span.start == 10 + 4 * MAX_EXPR_DEPTH - 2 &&
              diags.items[0]->span.end == diags.items[0]->span.start + 1,
          "E0217 points at the `+` past the cap");
    m = parse_repeated("- ", MAX_EXPR_DEPTH, "1");
    CHECK(count_code("E0217") == 1, "a chain of unary minus past the cap");
    m = parse_repeated("2 * ", MAX_EXPR_DEPTH, "1");
    CHECK(count_code("E0217") == 1 && m->decls[0]->u.const_value->kind == EX_ERROR,
          "a product past the cap");
    /* a reduction prefix moved to the top adds a level */
    const char *op_head = "op o<M = 4> { in A[M] : fp16; out Y : fp16; Y = sum(m) A[m]";
    size_t len = strlen(op_head) + 7 * (size_t)MAX_EXPR_DEPTH + 16, n = strlen(op_head);
    char *text = malloc(len);
    strcpy(text, op_head);
    for (int i = 0; i < MAX_EXPR_DEPTH - 2; i++, n += 7) memcpy(text + n, " + A[m]", 7);
    strcpy(text + n, "; }");
    m = parse(text);
    Expr *r = m->decls[0]->u.op.stmts[0]->rhs;
    CHECK(diags.error_count == 0 && r->kind == EX_REDUCE && r->depth == MAX_EXPR_DEPTH,
          "a hoisted reduction over a sum one below the cap reaches the cap");
    strcpy(text + n, " + A[m]; }");
    m = parse(text);
    r = m->decls[0]->u.op.stmts[0]->rhs;
    CHECK(count_code("E0217") == 1 && r->kind == EX_ERROR,
          "one more term and the hoisted reduction is past the cap");
    free(text);
}

int main(void) {
    test_quantities();
    test_not_a_unit();
    test_op();
    test_mapping();
    test_recovery();
    test_unclosed_block();
    test_comments();
    test_hostile();
    test_depth_cap();
    arena_free_all(&arena);
    return unit_finish();
}
