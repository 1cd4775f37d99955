/* test_lsp_fmt.c — the formatter behind `cmtc fmt` and the language
 * server's formatting: the AST comparison that guards every result (it
 * must tell different programs apart and see through layout), and small
 * layouts checked exactly (parentheses kept and added, quantities, comment
 * placement, blank lines, idempotence). */
#include "backend/fmt.h"
#include "tests/unit/unit.h"

static Arena A;
static SourceManager SM;

static Module *parse(const char *text, int *errors) {
    SourceFile *f = sources_add(&SM, "t.cmt", text, strlen(text));
    DiagSink d;
    diags_init(&d, &A);
    Module *m = parse_module(&A, f, &d);
    *errors = d.error_count;
    return m;
}

static bool same(const char *a, const char *b) {
    int ea, eb;
    Module *x = parse(a, &ea), *y = parse(b, &eb);
    return ea == 0 && eb == 0 && fmt_ast_equal(x, y);
}

/* The formatted text of `text`, or "<error>". */
static const char *fmt(const char *text) {
    SourceFile *f = sources_add(&SM, "t.cmt", text, strlen(text));
    DiagSink d;
    diags_init(&d, &A);
    size_t len;
    const char *out = fmt_source(&A, &SM, f, &d, &len);
    return out ? out : "<error>";
}

static void test_equality(void) {
    CHECK(same("const A = 1;", "const   A=1 ; // c"), "eq_layout_and_comments_ignored");
    CHECK(same("const A = (1);", "const A = 1;"), "eq_parentheses_ignored");
    CHECK(!same("const A = 1;", "const A = 2;"), "ne_int_value");
    CHECK(!same("const A = 1;", "const B = 1;"), "ne_name");
    CHECK(!same("const A = 0.5;", "const A = 0.25;"), "ne_real_value");
    CHECK(!same("const A = 2 MiB;", "const A = 2 MB;"), "ne_quantity_scale");
    CHECK(!same("const A = 1 s;", "const A = 1 B;"), "ne_quantity_unit");
    CHECK(!same("const A = a - (b - c);", "const A = a - b - c;"), "ne_associativity");
    CHECK(!same("const A = (a + b) * c;", "const A = a + b * c;"), "ne_precedence");
    CHECK(!same("const A = -x * y;", "const A = -(x * y);"), "ne_unary_scope");
    CHECK(!same("use std.ops.gemm;", "use \"std.ops.gemm\";"), "ne_use_string_or_path");
    CHECK(!same("op o { in A[4] : fp16; }", "op o { in A[4] : fp32; }"), "ne_tensor_type");
    CHECK(!same("op o { in A[4] : fp16; }", "op o { out A[4] : fp16; }"), "ne_tensor_role");
    CHECK(!same("op o { B[i] = sum(i) A[i]; }", "op o { B[i] = max(i) A[i]; }"), "ne_reduction");
    CHECK(!same("mapping m for o on a { tile L: m 4; }", "mapping m for o on a { tile L: m ?; }"),
          "ne_hole");
    CHECK(!same("mapping m for o on a { fuse A, B at L; }", "mapping m for o on a { fuse A, B; }"),
          "ne_fuse_level");
    CHECK(!same("arch a { cluster c[x = 2] ring {} }", "arch a { cluster c[x = 2 ring] {} }"),
          "ne_cluster_kind_place");
    CHECK(!same("const A = 1; const B = 2;", "const A = 1;"), "ne_decl_count");
}

static void test_layouts(void) {
    CHECK_STR(fmt("const  A=2MiB;const B=1_000 ;"), "const A = 2 MiB;\nconst B = 1_000;\n",
              "fmt_quantity_and_spelling");
    CHECK_STR(fmt("op o{B[m]=sum(n) A[m,n]*2;}"), "op o {\n  B[m] = sum(n) (A[m, n] * 2);\n}\n",
              "fmt_reduction_operand_parenthesised");
    CHECK_STR(fmt("const A = ((a + b)) * -(c);"), "const A = (a + b) * -(c);\n",
              "fmt_source_parentheses_kept_once");
    CHECK_STR(fmt("const A = a - (b - c);"), "const A = a - (b - c);\n", "fmt_parentheses_needed");
    CHECK_STR(fmt("const A = 1; // one\nconst LONG = 2; // two\n"),
              "const A = 1;    // one\nconst LONG = 2; // two\n", "fmt_trailing_comments_aligned");
    CHECK_STR(fmt("\n\n// top\n\n\n\nconst A = 1;\n\n\n"), "// top\n\nconst A = 1;\n",
              "fmt_blank_lines");
    CHECK_STR(fmt("op o {\n\n  in A[4] : fp16;\n\n}\n"), "op o {\n  in A[4] : fp16;\n}\n",
              "fmt_no_blank_at_block_edges");
    CHECK_STR(fmt("arch a { cost exp 4, // e\n rsqrt 2; }"),
              "arch a {\n  cost exp 4, // e\n      rsqrt 2;\n}\n",
              "fmt_line_comment_inside_statement");
    CHECK_STR(fmt(""), "", "fmt_empty_file");
    CHECK_STR(fmt("const A = ;"), "<error>", "fmt_syntax_error_refused");
    /* idempotence on a file with every construct */
    const char *all = "use std.arch.edge; /* b */ const Q = 3 * (4 + K); // c\n"
                      "op o<M = 4, N> { in A[M, N] : int8; var t : fp32;\n"
                      "  t[m] = mean(n) (A[m, n] * A[m, n]); s[m] = max(t[m], 0.5); }\n"
                      "arch x : edge { clock 1 GHz; memory M role weight { capacity 2 KiB; }\n"
                      "  cluster c[a = 2 ring, b = (Q)] torus { link_bandwidth 1 GB/s; }\n"
                      "  compute u matrix { array 8 x 8; cost exp 4, rsqrt 2; } }\n"
                      "mapping m for o<N = 8> on x { spatial for t: n -> (a, b); spatial ?;\n"
                      "  tile M: m ?, ? 4; order M: ?; fuse t, s at ?; overlap none; repeat 2; }\n";
    const char *once = fmt(all);
    CHECK(strcmp(once, "<error>") != 0, "fmt_all_constructs");
    CHECK_STR(fmt(once), once, "fmt_all_constructs_idempotent");
}

int main(void) {
    sources_init(&SM, &A);
    test_equality();
    test_layouts();
    arena_free_all(&A);
    return unit_finish();
}
