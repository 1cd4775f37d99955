/* fmt.h — the canonical layout of .cmt files (`cmtc fmt`, and the language
 * server's formatting).  The layout is printed from the AST; comments are
 * put back by source position; literals keep their source spelling. */
#ifndef CMT_FMT_H
#define CMT_FMT_H

#include "frontend/ast.h"

/* Prints a module parsed without errors in canonical layout.  The result
 * lives in `arena`, is NUL-terminated, and *len is its length. */
char *fmt_module(Arena *arena, const Module *m, size_t *len);

/* Parses `file` and formats it.  On a syntax error returns NULL with the
 * diagnostics in `diags`.  The result is checked before it is returned:
 * it must parse to the same AST (spans aside) as the input; otherwise
 * NULL with an E0601 diagnostic (a formatter bug, never a silent change
 * of meaning). */
char *fmt_source(Arena *arena, SourceManager *sm, SourceFile *file, DiagSink *diags, size_t *len);

/* Whether two modules are the same program text: every declaration,
 * name, literal value and structure alike, spans and comments aside. */
bool fmt_ast_equal(const Module *a, const Module *b);

/* An op's tensors and statements interleave in the source: whether, with
 * ti tensors and si statements taken so far, the next in source order is
 * tensor ti (else statement si). */
bool op_tensor_comes_next(const OpDecl *op, int ti, int si);

/* The keyword of a tensor's role: "in", "out" or "var". */
const char *tensor_decl_keyword(const TensorDecl *t);

#endif
