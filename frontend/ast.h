/* ast.h — the syntax tree the parser builds and the front end checks.
 * Only the front end and the tools that work on the text (the formatter
 * and the language server in backend/) read it: the checked IR records
 * every decision with its span, so nothing after checking needs it. */
#ifndef CMT_AST_H
#define CMT_AST_H

#include "frontend/util/util.h"

/* -------------------------------------------------------------------- AST */

typedef struct Ident {
    Name name; /* NULL when hole */
    Span span;
    bool hole; /* written `?` */
} Ident;

typedef struct IdentList {
    Ident *items;
    int count;
} IdentList;

typedef enum ExprKind {
    EX_ERROR,    /* a parse error stood here; checks stay quiet about it */
    EX_INT,      /* 4096 */
    EX_REAL,     /* 0.5 */
    EX_QUANTITY, /* 2 MiB: value already scaled to SI */
    EX_NAME,     /* a const, parameter or bare identifier */
    EX_ACCESS,   /* A[m, k] */
    EX_UNARY,    /* -x */
    EX_BINARY,   /* a + b, a - b, a * b, a / b */
    EX_CALL,     /* exp(x), max(a, b) */
    EX_REDUCE,   /* sum(n) e[m, n] */
    EX_HOLE      /* ? */
} ExprKind;

/* The parser refuses an expression nested deeper than this (E0217), so
 * every recursive walk of an expression (checker, formatter, language
 * server, emitters) is bounded by it: `a + a + ...` nests one level per
 * operator. */
#define MAX_EXPR_DEPTH 4000

/* An Expr is allocated only as large as its kind needs (expr_size): a
 * file's expressions are mostly names and numbers, a third of the size of
 * an access or a reduction.  So an Expr is never copied by value, and its
 * kind changes only to EX_ERROR, which has no operands. */
typedef struct Expr Expr;
struct Expr {
    ExprKind kind;
    uint32_t depth; /* 1 for a leaf; at most MAX_EXPR_DEPTH */
    Span span;
    union {
        int64_t int_value;
        double real_value;
        struct {
            double value; /* SI */
            UnitDim dim;
            Span unit_span;
        } quantity;
        Name name;
        struct {
            Ident tensor;
            IdentList indices;
        } access;
        struct {
            char op; /* '-' */
            Expr *operand;
        } unary;
        struct {
            char op; /* + - * / */
            Expr *lhs, *rhs;
        } binary;
        struct {
            Ident fn;
            Expr **args;
            int arg_count;
        } call;
        struct {
            Ident fn; /* sum max min mean */
            IdentList indices;
            Expr *body;
        } reduce;
    } u;
};

/* The bytes an Expr of `kind` takes: the common fields and its own member
 * of the union. */
static inline size_t expr_size(ExprKind kind) {
    const size_t head = offsetof(Expr, u);
    switch (kind) {
    case EX_ERROR:
    case EX_HOLE: return head;
    case EX_INT: return head + sizeof(int64_t);
    case EX_REAL: return head + sizeof(double);
    case EX_QUANTITY: return head + sizeof(((Expr *)0)->u.quantity);
    case EX_NAME: return head + sizeof(Name);
    case EX_ACCESS: return head + sizeof(((Expr *)0)->u.access);
    case EX_UNARY: return head + sizeof(((Expr *)0)->u.unary);
    case EX_BINARY: return head + sizeof(((Expr *)0)->u.binary);
    case EX_CALL: return head + sizeof(((Expr *)0)->u.call);
    case EX_REDUCE: return head + sizeof(((Expr *)0)->u.reduce);
    }
    return sizeof(Expr);
}

typedef struct Param {
    Ident name;
    Expr *default_value; /* NULL if none */
} Param;

typedef enum TensorRole { TR_IN, TR_OUT, TR_VAR } TensorRole;

typedef struct TensorDecl {
    TensorRole role;
    bool trained;   /* `param`: an `in` tensor that `phase train` updates */
    bool cached;    /* `cache`: an `in` tensor kept between steps, appended to */
    bool routed;    /* `route`: a routing of tokens to experts (an `out`) */
    Expr *capacity; /* `route ... capacity F`: slots per expert over the mean; NULL: 1 */
    TensorUse use;  /* set by derive.c in a train op; TU_DATA otherwise */
    Ident name;
    Expr **dims; /* none for `var` */
    int dim_count;
    ElemType type;
    Span type_span;
    Span span;
} TensorDecl;

/* `where A <= B + c` after a statement's right side: A an index, the
 * comparison, and the right side as written (an index, optionally plus or
 * minus a constant; check_op reads it). */
typedef enum WhereCmp { WC_LT, WC_LE, WC_GT, WC_GE } WhereCmp;
typedef struct Where {
    Ident lhs;
    WhereCmp cmp;
    Span cmp_span;
    Expr *rhs;
    Span span; /* from `where` to the end of the right side */
} Where;

typedef struct Stmt {
    Ident target;
    IdentList indices; /* left-hand side indices */
    Expr *rhs;
    Where *where;  /* NULL when the statement has none */
    Ident by;      /* `by R`: the routing it moves rows by (name NULL: none) */
    StmtRole role; /* set by derive.c; SR_FORWARD for a written statement */
    Span span;
} Stmt;

typedef struct OpDecl {
    Param *params;
    int param_count;
    TensorDecl **tensors; /* in, out and var, in source order */
    int tensor_count;
    Stmt **stmts;
    int stmt_count;
    bool derived;      /* made by the compiler (derive.c), not written */
    int forward_count; /* derived: its leading statements that are the forward pass */
    /* derived: per statement of the op it was derived from, whether the
     * backward pass recomputes it (NULL when nothing is) */
    const bool *recomputed;
} OpDecl;

/* `key value;`, `key v1, v2;`, `cost exp 4, rsqrt 4;`, `array 32 x 32;`,
 * `role input`: the value shapes allowed depend on the key (checked). */
typedef struct AttrPair {
    Ident key;
    Expr *value;
} AttrPair;

typedef struct Attr {
    Ident key;
    Expr **values; /* plain values */
    int value_count;
    AttrPair *pairs; /* for `cost fn n, ...` */
    int pair_count;
    bool sizes; /* written `A x B x C` (`shape`), not as a value list */
    Span span;
} Attr;

typedef struct AttrList {
    Attr **items;
    int count;
} AttrList;

typedef enum ArchItemKind {
    AI_ERROR,
    AI_ATTR,    /* clock 1 GHz; */
    AI_MEMORY,  /* memory NAME role R { ... } */
    AI_CLUSTER, /* cluster NAME[d = n KIND, ...] KIND { ... } */
    AI_COMPUTE  /* compute NAME matrix|vector { ... } */
} ArchItemKind;

typedef struct ClusterDimDecl {
    Ident name;
    Expr *size;
    Ident kind; /* name NULL when not given */
    Span span;
} ClusterDimDecl;

typedef struct ArchItem {
    ArchItemKind kind;
    Span span;
    Ident name;
    Ident role;           /* memory: name NULL when none */
    Ident unit_kind;      /* compute: matrix|vector; cluster: topology kind */
    ClusterDimDecl *dims; /* cluster */
    int dim_count;
    Attr *attr;    /* AI_ATTR */
    AttrList body; /* memory, cluster, compute */
} ArchItem;

typedef struct ArchDecl {
    Param *params; /* `arch gpu<HBM = 3.35 TB/s>`: values with units */
    int param_count;
    Ident parent; /* `arch cloud : edge`; name NULL if none */
    /* `arch big : gpu<SMS = 144>`: the parent's parameters rebound */
    struct ParamBinding *parent_bindings;
    int parent_binding_count;
    ArchItem **items;
    int item_count;
} ArchDecl;

typedef enum MapItemKind { MI_ERROR, CMT_MAPPING_ITEMS(VOCAB_ENUM) } MapItemKind;

typedef struct SpatialAssign {
    Ident index;     /* may be a hole; the first of `joint` when it has any */
    IdentList dims;  /* one or more; a single hole ident for `i -> ?` */
    IdentList joint; /* `(m, n) -> sm`: every index dealt jointly, else empty */
    Span span;
} SpatialAssign;

typedef struct TileEntry {
    Ident index; /* may be a hole */
    Expr *size;  /* EX_HOLE for ? */
    Span span;
} TileEntry;

typedef struct MapItem {
    MapItemKind kind;
    Span span;
    Span keyword_span;
    bool whole_hole;        /* `spatial ?;`, `fuse ?;`, `order GLB: ?;` */
    IdentList stmts;        /* spatial/tile/order L for S, ...: / fuse S, ... */
    SpatialAssign *assigns; /* spatial */
    int assign_count;
    Ident level; /* tile, order, fuse ... at LEVEL (may be hole) */
    TileEntry *tiles;
    int tile_count;
    IdentList order; /* order */
    Ident value;     /* overlap full|none, objective latency|energy|edp;
                        fuse ... overlap full|none (the group's own) */
    Expr *count;     /* repeat; serve's batch (`= 64`, `= ?`) */
    Expr *limit;     /* `serve ... = ? under 50 ms`: the bound on the step */
    /* `overlap tiles reserve R of U;` (and on a fuse line): R of the
     * chip's U compute units run the collectives */
    bool reserve_given;
    int64_t reserve_units, reserve_total;
    Span reserve_span;
    /* the words and numbers of the clause, for the language server */
    Span reserve_word_span, reserve_of_span, reserve_units_span, reserve_total_span;
} MapItem;

typedef struct ParamBinding {
    Ident name;
    Expr *value;
} ParamBinding;

typedef struct MappingDecl {
    Ident op;
    ParamBinding *bindings;
    int binding_count;
    Ident arch;
    ParamBinding *arch_bindings; /* `on gpu<HBM = 2 TB/s>` */
    int arch_binding_count;
    MapItem **items;
    int item_count;
} MappingDecl;

/* A sweep's axis (docs/language.md 5.11): `NAME = values;`, `arch =
 * [...]`, `mapping = [...]`, or the axes of a `zip { ... }`, which advance
 * together.  Values: a list of expressions (`[1 TB/s, 2 TB/s]`, names for
 * the arch and mapping axes) or a range (`range(A, B, S)`: A, A+S, ... up
 * to B; `geometric(A, B, F)`: A, A*F, ... up to B). */
typedef enum SweepAxisKind { SA_PARAM, SA_ARCH, SA_MAPPING } SweepAxisKind;

typedef struct SweepAxisDecl {
    SweepAxisKind kind;
    Ident name;    /* the parameter; the keyword for arch and mapping */
    Expr **values; /* a list, or one call to range/geometric */
    int value_count;
    bool is_list; /* written in brackets */
    int zip;      /* 0: its own axis; k > 0: the k-th zip of the sweep */
    Span span;
} SweepAxisDecl;

typedef struct SweepDecl {
    SweepAxisDecl *axes;
    int axis_count;
} SweepDecl;

/* `model NAME { ROLE MAPPING; ... }`: the parts of a model, each a
 * mapping (docs/language.md 5.13) */
typedef struct ModelPart {
    Ident role;    /* embed, layers or head */
    Ident mapping; /* the mapping's name */
    Span span;
} ModelPart;

typedef struct ModelDecl {
    ModelPart *parts;
    int part_count;
} ModelDecl;

typedef enum DeclKind {
    DK_ERROR,
    DK_USE,
    DK_CONST,
    DK_OP,
    DK_ARCH,
    DK_MAPPING,
    DK_SWEEP,
    DK_MODEL
} DeclKind;

typedef struct Decl {
    DeclKind kind;
    Span span;
    Ident name; /* const, op, arch, mapping; for use: the written path */
    union {
        struct {
            const char *path; /* "std.arch.edge" or "my/ops.cmt" */
            bool is_string;   /* written as a string literal */
        } use;
        Expr *const_value;
        OpDecl op;
        ArchDecl arch;
        MappingDecl mapping;
        SweepDecl sweep;
        ModelDecl model;
    } u;
} Decl;

/* One parsed file. */
typedef struct Module {
    SourceFile *file;
    Decl **decls;
    int decl_count;
    /* comments, for the formatter: spans in source order */
    Span *comments;
    int comment_count;
} Module;

/* Parses one file into a module, reporting every syntax error it can
 * recover from (at most DIAG_MAX_ERRORS).  Never fails: a broken part
 * becomes an error node. */
Module *parse_module(Arena *arena, SourceFile *file, DiagSink *diags);

#endif
