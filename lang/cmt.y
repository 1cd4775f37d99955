/* cmt.y — the grammar of .cmt files (Bison 3.8, pure, byte-span locations).
 * Every rule builds AST nodes from frontend/cmt.h in the parse arena.
 * `error` productions at declaration, item and statement level turn a
 * broken part into an error node and go on, so that one run reports every
 * independent mistake. */

%require "3.8"
%define api.pure full
%define api.prefix {cmt}
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%param {ParseState *ps}

%code requires {
#include "frontend/ast.h"

typedef struct CmtLoc {
    uint32_t start, end;
} CmtLoc;
#define CMTLTYPE CmtLoc
#define CMTLTYPE_IS_DECLARED 1

/* Growable lists of fixed-size items while parsing.  They grow in the
 * parse's scratch arena; the rule that takes a list copies it exact-size
 * into the module's arena (list_items), so no doubled-and-abandoned arrays
 * stay behind in the tree. */
typedef struct ItemList {
    void *items;
    int count, cap;
    size_t size; /* of one item, set by the first push */
} ItemList;

/* One parse: the lexer's cursor and everything the actions need. */
typedef struct ParseState {
    Arena *arena;
    /* lists while they grow; emptied after each top-level declaration,
     * whose lists have all been copied by then */
    Arena scratch;
    /* the file's declarations and comments while they grow */
    Arena file_scratch;
    DiagSink *diags;
    SourceFile *file;
    Module *module;
    PtrVec decls;
    PtrVec comments;      /* Span*, in source order */
    const char *cursor;   /* lexer position */
    const char *limit;    /* one past the last byte (the NUL sentinel) */
    const char *token;    /* start of the current token */
    int nesting;          /* open ( and [ */
    bool too_deep;        /* nesting cap hit: the lexer ends the file */
    bool lex_error_pending; /* a lexical error in the current statement */
    int last_token;       /* the token returned before the current one */
    int prev_token;       /* the token before last_token */
    int prev_prev_token;  /* the token before prev_token */
    uint32_t prev_start;  /* start of the token before the current one */
    /* A `}` where a `;` was expected (`{ bandwidth 64 GB/s }`): once the
     * error recovery discards that `}`, the lexer hands back `;` then the
     * `}`, so the block ends where the user ended it instead of swallowing
     * everything up to the next `;`.  Inside a block the innermost error
     * rule is `error ;`, so the `}` is always discarded and the next call
     * of the lexer is the moment to give them.  0 none, 1 give `;` next,
     * 2 give `}` next. */
    int brace_resync;
    uint32_t brace_at, brace_end;
    int brace_depth;          /* `{` open, as lexed */
    int sweep_zips;           /* the `zip { }` blocks of the sweep being read */
    bool brace_closed_block;  /* the last `}` lexed closed an open `{` */
    bool skip_block;          /* skip tokens until the open `{` are closed */
    uint32_t brace_open[64];  /* where the innermost open `{` are */
    uint32_t prev_end;    /* end of the token before the current one */
    int syntax_errors;
    int64_t last_syntax_error; /* offset of the latest, -1 for none */
    uint32_t nesting_start; /* where the outermost open bracket is */
} ParseState;
}

%code provides {
int cmtlex(CMTSTYPE *value, CMTLTYPE *loc, ParseState *ps);
/* The unit closest to a misspelt one, quoted for a "did you mean" (`mb` ->
 * "`MB`", `Gb/s` -> "`GB/s` (bytes) or `Gbit/s` (bits)"), in buf; NULL
 * when nothing is close.  `text` may
 * run on past the word: at most `word/word` is read. */
const char *unit_suggest(const char *text, size_t len, char *buf, size_t size);
}

%code {
#include <string.h>

#define YYLLOC_DEFAULT(Cur, Rhs, N)                                   \
    do {                                                              \
        if (N) {                                                      \
            (Cur).start = YYRHSLOC(Rhs, 1).start;                     \
            (Cur).end = YYRHSLOC(Rhs, N).end;                         \
        } else {                                                      \
            (Cur).start = (Cur).end = YYRHSLOC(Rhs, 0).end;           \
        }                                                             \
    } while (0)

/* Only Bison's own "memory exhausted" reaches here; parse_module reports
 * it once parsing stops. */
static void cmterror(CMTLTYPE *loc, ParseState *ps, const char *message) {
    (void)loc; (void)ps; (void)message;
}

/* Bison's own stack limit; the lexer caps bracket nesting long before. */
#define YYMAXDEPTH 100000

static Span sp(ParseState *ps, CmtLoc l) {
    return (Span){ps->file->id, l.start, l.end};
}

static Ident ident(ParseState *ps, Name name, CmtLoc l) {
    return (Ident){name, sp(ps, l), false};
}

static Ident hole_ident(ParseState *ps, CmtLoc l) {
    return (Ident){NULL, sp(ps, l), true};
}

/* A name's value on the parser's stack: a pointer into the scratch arena,
 * so that every value there is 8 bytes.  (Values of 24 bytes were copied
 * at every reduction, and read back in 16-byte pieces just after being
 * written in 8-byte ones, which the processor cannot forward.) */
static Ident *held(ParseState *ps, Ident id) {
    Ident *p = ARENA_NEW(&ps->scratch, Ident);
    *p = id;
    return p;
}

static SpatialAssign *held_assign(ParseState *ps, SpatialAssign a) {
    SpatialAssign *p = ARENA_NEW(&ps->scratch, SpatialAssign);
    *p = a;
    return p;
}

static Expr *new_expr(ParseState *ps, ExprKind kind, CmtLoc l) {
    Expr *e = arena_alloc(ps->arena, expr_size(kind));
    e->kind = kind;
    e->depth = 1;
    e->span = sp(ps, l);
    return e;
}

/* Gives `e`, whose operands are `deepest` levels deep, its depth.  Past
 * MAX_EXPR_DEPTH the whole expression becomes an error node, so that no
 * later walk recurses into it; only the operator `at` where the cap is
 * first crossed is reported (an error node of depth MAX_EXPR_DEPTH + 1
 * marks an expression already reported, and its parents stay quiet). */
static Expr *nest(ParseState *ps, Expr *e, uint32_t deepest, CmtLoc at) {
    if (deepest < MAX_EXPR_DEPTH) {
        e->depth = deepest + 1;
        return e;
    }
    if (deepest == MAX_EXPR_DEPTH) {
        Diag *d = diag_error(ps->diags, sp(ps, at), "E0217",
                             "expression nests more than %d operators deep", MAX_EXPR_DEPTH);
        diag_note(d, ps->diags,
                  "each operator of a chain counts: a sum of %d terms nests its `+` that deep",
                  MAX_EXPR_DEPTH + 1);
        diag_help(d, ps->diags, "split it with a constant or an intermediate tensor");
    }
    e->kind = EX_ERROR;
    e->depth = MAX_EXPR_DEPTH + 1;
    return e;
}

static uint32_t deeper(const Expr *a, const Expr *b) {
    return a->depth > b->depth ? a->depth : b->depth;
}

static Expr *binary(ParseState *ps, char op, Expr *a, Expr *b, CmtLoc l, CmtLoc at) {
    Expr *e = new_expr(ps, EX_BINARY, l);
    e->u.binary.op = op;
    e->u.binary.lhs = a;
    e->u.binary.rhs = b;
    return nest(ps, e, deeper(a, b), at);
}

static Expr *negate(ParseState *ps, Expr *operand, CmtLoc l, CmtLoc at) {
    Expr *e = new_expr(ps, EX_UNARY, l);
    e->u.unary.op = '-';
    e->u.unary.operand = operand;
    return nest(ps, e, operand->depth, at);
}


static ItemList *list_new(ParseState *ps) {
    return ARENA_NEW(&ps->scratch, ItemList);
}

static void list_grow(ParseState *ps, ItemList *l, size_t size) {
    int cap = l->cap ? l->cap * 2 : 4;
    l->items = arena_realloc(&ps->scratch, l->items, size * (size_t)l->cap,
                             size * (size_t)cap);
    l->cap = cap;
}

/* (inline: every call passes a constant size, so the copy is a few
 * moves instead of a call of memcpy) */
static inline ItemList *list_push(ParseState *ps, ItemList *l, const void *item,
                                  size_t size) {
    if (l->count == l->cap) list_grow(ps, l, size);
    l->size = size;
    memcpy((char *)l->items + size * (size_t)l->count, item, size);
    l->count++;
    return l;
}

/* The items of a finished list, copied exact-size into the module's
 * arena; NULL for no list or an empty one. */
static void *list_items(ParseState *ps, const ItemList *l) {
    if (!l || l->count == 0) return NULL;
    size_t bytes = l->size * (size_t)l->count;
    return memcpy(arena_alloc(ps->arena, bytes), l->items, bytes);
}

static int list_count(const ItemList *l) {
    return l ? l->count : 0;
}

static IdentList ident_list(ParseState *ps, ItemList *l) {
    return (IdentList){list_items(ps, l), list_count(l)};
}

static Decl *new_decl(ParseState *ps, DeclKind kind, CmtLoc l) {
    Decl *d = ARENA_NEW(ps->arena, Decl);
    d->kind = kind;
    d->span = sp(ps, l);
    return d;
}

static MapItem *new_item(ParseState *ps, MapItemKind kind, CmtLoc l,
                         CmtLoc keyword) {
    MapItem *m = ARENA_NEW(ps->arena, MapItem);
    m->kind = kind;
    m->span = sp(ps, l);
    m->keyword_span = sp(ps, keyword);
    return m;
}

/* `serve KIND of B ...`: the kind, and B after the word `of` */
static MapItem *serve_item(ParseState *ps, CmtLoc l, CmtLoc keyword, const Ident *kind,
                           const Ident *of, const Ident *param) {
    MapItem *m = new_item(ps, MI_SERVE, l, keyword);
    m->value = *kind;
    m->level = *param;
    if (!of->name || strcmp(of->name, "of") != 0) {
        Diag *d = diag_error(ps->diags, of->span, "E0110", "expected `of` after `serve %s`",
                             kind->name ? kind->name : "...");
        diag_help(d, ps->diags,
                  "write `serve %s of B;` with B the op parameter that counts the sequences",
                  kind->name ? kind->name : "decode");
    }
    return m;
}

/* `... reserve R of U`: the two words checked here, not reserved */
static void reserve_clause(ParseState *ps, MapItem *m, const Ident *reserve, int64_t units,
                           CmtLoc units_at, const Ident *of, int64_t total, CmtLoc total_at) {
    const Ident *bad = !reserve->name || strcmp(reserve->name, "reserve") != 0 ? reserve
                       : !of->name || strcmp(of->name, "of") != 0            ? of
                                                                             : NULL;
    if (bad) {
        Diag *d = diag_error(ps->diags, bad->span, "E0110", "expected `%s` in `overlap ... "
                             "reserve R of U`, found `%s`",
                             bad == reserve ? "reserve" : "of", bad->name ? bad->name : "...");
        diag_help(d, ps->diags,
                  "write `overlap tiles reserve 28 of 132;`: 28 of the chip's 132 compute "
                  "units run the collectives");
        m->kind = MI_ERROR; /* the mapping is not costed without it */
        return;
    }
    m->reserve_given = true;
    m->reserve_units = units;
    m->reserve_total = total;
    m->reserve_word_span = reserve->span;
    m->reserve_of_span = of->span;
    m->reserve_units_span = sp(ps, units_at);
    m->reserve_total_span = sp(ps, total_at);
    m->reserve_span = span_join(sp(ps, units_at), sp(ps, total_at));
}

static ElemType elem_type_of(ParseState *ps, Name name, CmtLoc l) {
    ElemType t = elem_type_of_name(name);
    if (t != ET_NONE) return t;
    Diag *g = diag_error(ps->diags, sp(ps, l), "E0106",
                         "unknown element type `%s`", name);
    const char *near = spell_suggest(name, elem_type_names, elem_type_count);
    char all[160];
    if (near) diag_help(g, ps->diags, "did you mean `%s`?", near);
    else diag_help(g, ps->diags, "element types are %s",
                   vocab_join(all, sizeof all, elem_type_names, elem_type_count, " and "));
    return ET_NONE;
}

/* `cache K[...] : T;` and `route R[...] : T [capacity F];`: declarations
 * that open with a word the scanner does not reserve. */
static TensorDecl *special_tensor(ParseState *ps, Name word, CmtLoc word_at, Ident *name,
                                  ItemList *dims, Name type, CmtLoc type_at, Name tail,
                                  Expr *capacity, CmtLoc whole) {
    bool cached = strcmp(word, "cache") == 0, routed = strcmp(word, "route") == 0;
    if (!cached && !routed) {
        Diag *d = diag_error(ps->diags, sp(ps, word_at), "E0110",
                             "unknown declaration `%s`: expected `in`, `out`, `param`, "
                             "`cache`, `route` or `var`", word);
        static const char *const declarations[] = {"in", "out", "param", "cache", "route", "var"};
        const char *near = spell_suggest(word, declarations, 6);
        if (near)
            diag_help(d, ps->diags, "did you mean `%s`?", near);
        else
            diag_help(d, ps->diags, "a statement is written `%s[...] = ...;`",
                      name->name ? name->name : "T");
    } else if (tail && cached) {
        diag_error(ps->diags, sp(ps, word_at), "E0110",
                   "`capacity` belongs to a `route`, not a `cache`");
    }
    TensorDecl *t = ARENA_NEW(ps->arena, TensorDecl);
    t->role = routed ? TR_OUT : TR_IN;
    t->cached = cached;
    t->routed = routed;
    t->capacity = routed ? capacity : NULL;
    t->name = *name;
    t->dims = list_items(ps, dims);
    t->dim_count = list_count(dims);
    t->type = elem_type_of(ps, type, type_at);
    t->type_span = sp(ps, type_at);
    t->span = sp(ps, whole);
    return t;
}

/* A reduction prefix binds to the whole right side: `sum(n) e[m, n] * 2`
 * reduces the product.  The grammar attaches the prefix to its first
 * operand; this moves it to the top of the statement's expression. */
static Expr **leftmost_reduce(Expr **slot) {
    while ((*slot)->kind == EX_BINARY) slot = &(*slot)->u.binary.lhs;
    return (*slot)->kind == EX_REDUCE ? slot : NULL;
}

static void report_inner_reduce(ParseState *ps, Expr *e, bool top) {
    if (!e) return;
    switch (e->kind) {
    case EX_REDUCE:
        if (!top) {
            Diag *g = diag_error(ps->diags, e->u.reduce.fn.span, "E0114",
                                 "a reduction prefix must begin the right side");
            diag_help(g, ps->diags, "write the reduction as its own statement "
                      "and use its result here");
        }
        report_inner_reduce(ps, e->u.reduce.body, false);
        break;
    case EX_UNARY: report_inner_reduce(ps, e->u.unary.operand, false); break;
    case EX_BINARY:
        report_inner_reduce(ps, e->u.binary.lhs, false);
        report_inner_reduce(ps, e->u.binary.rhs, false);
        break;
    case EX_CALL:
        for (int i = 0; i < e->u.call.arg_count; i++)
            report_inner_reduce(ps, e->u.call.args[i], false);
        break;
    default: break;
    }
}

/* The depths along a left spine whose bottom changed (bounded recursion:
 * the spine is at most MAX_EXPR_DEPTH long). */
static uint32_t spine_depth(Expr *e) {
    if (e->kind != EX_BINARY) return e->depth;
    uint32_t lhs = spine_depth(e->u.binary.lhs), rhs = e->u.binary.rhs->depth;
    e->depth = (lhs > rhs ? lhs : rhs) + 1;
    return e->depth;
}

static Expr *hoist_reduction(ParseState *ps, Expr *rhs) {
    Expr **slot = leftmost_reduce(&rhs);
    if (slot && *slot != rhs) {
        Expr *reduce = *slot;
        *slot = reduce->u.reduce.body; /* the prefix now covers everything */
        reduce->u.reduce.body = rhs;
        reduce->span = span_join(reduce->span, rhs->span);
        CmtLoc fn = {reduce->u.reduce.fn.span.start, reduce->u.reduce.fn.span.end};
        rhs = nest(ps, reduce, spine_depth(rhs), fn);
        if (rhs->kind == EX_ERROR) return rhs;
    }
    if (rhs->kind == EX_REDUCE) report_inner_reduce(ps, rhs->u.reduce.body, false);
    else report_inner_reduce(ps, rhs, false);
    return rhs;
}

/* `max(n) C[m, n]`: the call's arguments must be plain index names. */
static Expr *make_reduce(ParseState *ps, Expr *call, Expr *body, CmtLoc l) {
    Expr *e = new_expr(ps, EX_REDUCE, l);
    e->u.reduce.fn = call->u.call.fn;
    e->u.reduce.body = body;
    ItemList *idx = list_new(ps);
    for (int i = 0; i < call->u.call.arg_count; i++) {
        Expr *a = call->u.call.args[i];
        if (a->kind == EX_NAME) {
            Ident id = {a->u.name, a->span, false};
            list_push(ps, idx, &id, sizeof id);
            continue;
        }
        if (a->kind != EX_ERROR)
            diag_error(ps->diags, a->span, "E0115",
                       "a reduction prefix lists index names, found an expression");
        e->kind = EX_ERROR; /* already explained: later checks stay quiet */
        return e;
    }
    e->u.reduce.indices = ident_list(ps, idx);
    CmtLoc fn = {e->u.reduce.fn.span.start, e->u.reduce.fn.span.end};
    return nest(ps, e, body->depth, fn);
}

static Attr *new_attr(ParseState *ps, Ident key, CmtLoc l) {
    Attr *a = ARENA_NEW(ps->arena, Attr);
    a->key = key;
    a->span = sp(ps, l);
    return a;
}

static void finish_op(ParseState *ps, Decl *d, ItemList *params, ItemList *body) {
    d->u.op.params = list_items(ps, params);
    d->u.op.param_count = list_count(params);
    /* the body list holds tagged pointers: tensors and statements */
    int tensor_count = 0, stmt_count = 0;
    void **items = body ? body->items : NULL;
    for (int i = 0; i < list_count(body); i++) {
        uintptr_t p = (uintptr_t)items[i];
        if (p & 1) stmt_count++;
        else if (p) tensor_count++;
    }
    TensorDecl **tensors = tensor_count ? ARENA_ARRAY(ps->arena, TensorDecl *, tensor_count) : NULL;
    Stmt **stmts = stmt_count ? ARENA_ARRAY(ps->arena, Stmt *, stmt_count) : NULL;
    tensor_count = stmt_count = 0;
    for (int i = 0; i < list_count(body); i++) {
        uintptr_t p = (uintptr_t)items[i];
        if (p & 1) stmts[stmt_count++] = (Stmt *)(p & ~(uintptr_t)1);
        else if (p) tensors[tensor_count++] = (TensorDecl *)p;
    }
    d->u.op.tensors = tensors;
    d->u.op.tensor_count = tensor_count;
    d->u.op.stmts = stmts;
    d->u.op.stmt_count = stmt_count;
}
}

%union {
    int64_t int_value;
    double real_value;
    Name name;
    Expr *expr;
    Ident *ident; /* in the scratch arena, like the lists */
    Decl *decl;
    ItemList *list;
    Attr *attr;
    ArchItem *arch_item;
    MapItem *map_item;
    TensorDecl *tensor;
    Stmt *stmt;
    Where *where;
    void *tagged;
    ArchDecl *arch_parent;
    struct {
        Expr **values;
        int count;
        bool is_list;
    } sweep_values;
}

%token END 0 "end of file"
%token <name> IDENT "identifier"
%token <int_value> INT "integer"
%token <real_value> REAL "number"
%token <expr> QUANTITY "quantity" /* the lexer makes its expression */
%token <name> STRING "string"
%token BAD_NUMBER "malformed number"
%token USE "use" CONST "const" OP "op" IN "in" OUT "out" VAR "var" PARAM "param" RECOMPUTE "recompute"
%token ARCH "arch" MEMORY "memory" CLUSTER "cluster" COMPUTE "compute"
%token ROLE "role" COST "cost" ARRAY "array"
%token MAPPING "mapping" FOR "for" ON "on" SPATIAL "spatial" TILE "tile"
%token ORDER "order" FUSE "fuse" AT "at" OVERLAP "overlap"
%token OBJECTIVE "objective" ONLINE "online" REPEAT "repeat" PHASE "phase" WHERE "where"
%token PIPELINE "pipeline" MICROBATCHES "microbatches" SWEEP "sweep" SERVE "serve" BY "by" MODEL "model"
%token ARROW "->" SEMI ";" COMMA "," COLON ":" DOT "."
%token LPAREN "(" RPAREN ")" LBRACKET "[" RBRACKET "]" LBRACE "{" RBRACE "}"
%token LANGLE "<" RANGLE ">" LE "<=" GE ">=" EQUALS "=" PLUS "+" MINUS "-" STAR "*" SLASH "/"
%token HOLE "?"

%left PLUS MINUS
%left STAR SLASH
%precedence UMINUS

%type <expr> expr call reduce_operand simple_value expr_or_hole
%type <expr> shape_lead
%type <ident> name ident_or_hole path_part
%type <decl> decl use_decl const_decl op_decl arch_decl mapping_decl sweep_decl model_decl
%type <list> params_opt params param_list ident_list dims_opt expr_list
%type <list> op_body arch_body attr_block attrs cluster_dims cost_pairs
%type <list> bindings_opt binding_list map_body assigns dim_targets tiles
%type <list> module_path args_opt arg_list for_stmts sweep_axes model_parts
%type <attr> attr
%type <arch_item> arch_item
%type <map_item> map_item
%type <tensor> tensor_decl
%type <stmt> stmt
%type <where> where_opt
%type <int_value> where_cmp
%type <tagged> op_item assign
%type <arch_parent> arch_parent_opt
%type <sweep_values> sweep_values
%type <ident> role_opt kind_opt at_opt by_opt size_sep

%%

file:
    %empty
  | file decl {
        if ($2) ptrvec_push(&ps->file_scratch, &ps->decls, $2);
        arena_reset(&ps->scratch);
    }
  ;

decl:
    use_decl
  | const_decl
  | op_decl
  | arch_decl
  | mapping_decl
  | sweep_decl
  | model_decl
  | error SEMI {
        /* `op h(M = 64) { ...; ... }`: the recovery stopped at a `;` inside
         * a block it skipped into; skip the rest of that block too, or its
         * statements would each read as a broken declaration */
        $$ = new_decl(ps, DK_ERROR, @$);
        if (ps->brace_depth > 0) ps->skip_block = true;
        yyerrok;
    }
  | error RBRACE                { $$ = new_decl(ps, DK_ERROR, @$); yyerrok; }
  ;

use_decl:
    USE module_path SEMI {
        $$ = new_decl(ps, DK_USE, @$);
        Ident *parts = list_items(ps, $2);
        size_t len = 0;
        for (int i = 0; i < list_count($2); i++) len += strlen(parts[i].name) + 1;
        char *path = arena_alloc(ps->arena, len + 1), *w = path;
        for (int i = 0; i < list_count($2); i++) {
            if (i) *w++ = '.';
            size_t n = strlen(parts[i].name);
            memcpy(w, parts[i].name, n);
            w += n;
        }
        $$->u.use.path = path;
        $$->name = (Ident){intern_cstr(path), sp(ps, @2), false};
    }
  | USE STRING SEMI {
        $$ = new_decl(ps, DK_USE, @$);
        $$->u.use.path = $2;
        $$->u.use.is_string = true;
        $$->name = ident(ps, $2, @2);
    }
  ;

module_path:
    path_part                   { $$ = list_push(ps, list_new(ps), $1, sizeof(Ident)); }
  | module_path DOT path_part   { $$ = list_push(ps, $1, $3, sizeof(Ident)); }
  ;

/* Module paths may name folders that are keywords: std.arch.edge */
path_part:
    IDENT                       { $$ = held(ps, ident(ps, $1, @1)); }
  | ARCH                        { $$ = held(ps, ident(ps, intern_cstr("arch"), @1)); }
  | OP                          { $$ = held(ps, ident(ps, intern_cstr("op"), @1)); }
  | MAPPING                     { $$ = held(ps, ident(ps, intern_cstr("mapping"), @1)); }
  ;

const_decl:
    CONST name EQUALS expr SEMI {
        $$ = new_decl(ps, DK_CONST, @$);
        $$->name = *$2;
        $$->u.const_value = $4;
    }
  ;

name:
    IDENT                       { $$ = held(ps, ident(ps, $1, @1)); }
  ;

ident_or_hole:
    IDENT                       { $$ = held(ps, ident(ps, $1, @1)); }
  | HOLE                        { $$ = held(ps, hole_ident(ps, @1)); }
  ;

/* ------------------------------------------------------------- ops */

op_decl:
    OP name params_opt LBRACE op_body RBRACE {
        $$ = new_decl(ps, DK_OP, @$);
        $$->name = *$2;
        finish_op(ps, $$, $3, $5);
    }
  ;

params_opt:
    %empty                      { $$ = NULL; }
  | LANGLE RANGLE               { $$ = list_new(ps); }
  | LANGLE param_list RANGLE    { $$ = $2; }
  ;

param_list:
    params                      { $$ = $1; }
  | params COMMA                { $$ = $1; }
  ;

params:
    name {
        Param p = {*$1, NULL};
        $$ = list_push(ps, list_new(ps), &p, sizeof p);
    }
  | name EQUALS expr {
        Param p = {*$1, $3};
        $$ = list_push(ps, list_new(ps), &p, sizeof p);
    }
  | params COMMA name {
        Param p = {*$3, NULL};
        $$ = list_push(ps, $1, &p, sizeof p);
    }
  | params COMMA name EQUALS expr {
        Param p = {*$3, $5};
        $$ = list_push(ps, $1, &p, sizeof p);
    }
  ;

op_body:
    %empty                      { $$ = list_new(ps); }
  | op_body op_item             { $$ = list_push(ps, $1, &$2, sizeof(void *)); }
  ;

/* Tensors are stored as plain pointers, statements tagged with bit 0. */
op_item:
    tensor_decl                 { $$ = $1; }
  | stmt                        { $$ = (void *)((uintptr_t)$1 | 1); }
  | error SEMI                  { $$ = NULL; yyerrok; }
  ;

tensor_decl:
    IN name dims_opt COLON IDENT SEMI {
        $$ = ARENA_NEW(ps->arena, TensorDecl);
        $$->role = TR_IN;
        $$->name = *$2;
        $$->dims = list_items(ps, $3);
        $$->dim_count = list_count($3);
        $$->type = elem_type_of(ps, $5, @5);
        $$->type_span = sp(ps, @5);
        $$->span = sp(ps, @$);
    }
  | PARAM name dims_opt COLON IDENT SEMI {
        $$ = ARENA_NEW(ps->arena, TensorDecl);
        $$->role = TR_IN;
        $$->trained = true;
        $$->name = *$2;
        $$->dims = list_items(ps, $3);
        $$->dim_count = list_count($3);
        $$->type = elem_type_of(ps, $5, @5);
        $$->type_span = sp(ps, @5);
        $$->span = sp(ps, @$);
    }
  /* `cache K[B, L, G, D] : bf16;`: state kept between steps (a KV cache);
     `route R[T, K] : fp32;`: a routing, each of T tokens' K picks of an
     expert (docs/language.md 3.9).  Neither word is reserved (`kind
     cache;` names a memory kind), so the declaration is an identifier
     followed by a name. */
  | IDENT name dims_opt COLON IDENT SEMI {
        $$ = special_tensor(ps, $1, @1, $2, $3, $5, @5, NULL, NULL, @$);
    }
  /* `route R[T, K] : fp32 capacity 1.25;` */
  | IDENT name dims_opt COLON IDENT IDENT expr SEMI {
        $$ = special_tensor(ps, $1, @1, $2, $3, $5, @5, $6, $7, @$);
        if (strcmp($6, "capacity") != 0)
            diag_error(ps->diags, sp(ps, @6), "E0110",
                       "unexpected `%s` after the element type: a `route` may end with "
                       "`capacity F`", $6);
    }
  | OUT name dims_opt COLON IDENT SEMI {
        $$ = ARENA_NEW(ps->arena, TensorDecl);
        $$->role = TR_OUT;
        $$->name = *$2;
        $$->dims = list_items(ps, $3);
        $$->dim_count = list_count($3);
        $$->type = elem_type_of(ps, $5, @5);
        $$->type_span = sp(ps, @5);
        $$->span = sp(ps, @$);
    }
  | VAR name dims_opt COLON IDENT SEMI {
        if ($3) {
            /* `var C[M, N] : fp16;` */
            Diag *d = diag_error(ps->diags, sp(ps, @3), "E0110",
                                 "`var` takes no dimensions: an intermediate has "
                                 "the extents of the indices it is assigned with");
            diag_help(d, ps->diags, "write `var %s : %s;`", $2->name ? $2->name : "NAME",
                      $5 ? $5 : "TYPE");
        }
        $$ = ARENA_NEW(ps->arena, TensorDecl);
        $$->role = TR_VAR;
        $$->name = *$2;
        $$->type = elem_type_of(ps, $5, @5);
        $$->type_span = sp(ps, @5);
        $$->span = sp(ps, @$);
    }
  ;

dims_opt:
    %empty                      { $$ = NULL; }
  | LBRACKET expr_list RBRACKET { $$ = $2; }
  ;

expr_list:
    expr                        { $$ = list_push(ps, list_new(ps), &$1, sizeof(Expr *)); }
  | expr_list COMMA expr        { $$ = list_push(ps, $1, &$3, sizeof(Expr *)); }
  ;

stmt:
    IDENT LBRACKET ident_list RBRACKET EQUALS expr where_opt by_opt SEMI {
        $$ = ARENA_NEW(ps->arena, Stmt);
        $$->target = ident(ps, $1, @1);
        $$->indices = ident_list(ps, $3);
        $$->rhs = hoist_reduction(ps, $6);
        $$->where = $7;
        if ($8) $$->by = *$8;
        $$->span = sp(ps, @$);
    }
  | IDENT LBRACKET RBRACKET EQUALS expr where_opt by_opt SEMI {
        $$ = ARENA_NEW(ps->arena, Stmt);
        $$->target = ident(ps, $1, @1);
        $$->rhs = hoist_reduction(ps, $5);
        $$->where = $6;
        if ($7) $$->by = *$7;
        $$->span = sp(ps, @$);
    }
  | IDENT EQUALS expr where_opt by_opt SEMI {
        $$ = ARENA_NEW(ps->arena, Stmt);
        $$->target = ident(ps, $1, @1);
        $$->rhs = hoist_reduction(ps, $3);
        $$->where = $4;
        if ($5) $$->by = *$5;
        $$->span = sp(ps, @$);
    }
  ;

/* `by R`: the statement moves rows between tokens and experts as routing
 * R assigns them (docs/language.md 3.9) */
by_opt:
    %empty                      { $$ = NULL; }
  | BY name                     { $$ = $2; }
  ;

/* `where A <= B + c`: restricts the statement's iteration space */
where_opt:
    %empty                      { $$ = NULL; }
  | WHERE name where_cmp expr {
        $$ = ARENA_NEW(ps->arena, Where);
        $$->lhs = *$2;
        $$->cmp = (WhereCmp)$3;
        $$->cmp_span = sp(ps, @3);
        $$->rhs = $4;
        $$->span = sp(ps, @$);
    }
  ;

where_cmp:
    LANGLE                      { $$ = WC_LT; }
  | LE                          { $$ = WC_LE; }
  | RANGLE                      { $$ = WC_GT; }
  | GE                          { $$ = WC_GE; }
  ;

/* (IDENT rather than `name` in the most frequent rules: the parser then
 * makes no reduction to `name` for each of them) */
ident_list:
    IDENT {
        Ident id = ident(ps, $1, @1);
        $$ = list_push(ps, list_new(ps), &id, sizeof id);
    }
  | ident_list COMMA IDENT {
        Ident id = ident(ps, $3, @3);
        $$ = list_push(ps, $1, &id, sizeof id);
    }
  ;

/* ------------------------------------------------------ expressions */

/* (operands, calls and reductions are expressions directly: a level
 * between them cost a reduction per operand) */
expr:
    call
  | call reduce_operand         { $$ = make_reduce(ps, $1, $2, @$); }
  | MINUS expr %prec UMINUS    { $$ = negate(ps, $2, @$, @1); }
  | expr PLUS expr              { $$ = binary(ps, '+', $1, $3, @$, @2); }
  | expr MINUS expr             { $$ = binary(ps, '-', $1, $3, @$, @2); }
  | expr STAR expr              { $$ = binary(ps, '*', $1, $3, @$, @2); }
  | expr SLASH expr             { $$ = binary(ps, '/', $1, $3, @$, @2); }
  | INT {
        $$ = new_expr(ps, EX_INT, @$);
        $$->u.int_value = $1;
    }
  | REAL {
        $$ = new_expr(ps, EX_REAL, @$);
        $$->u.real_value = $1;
    }
  | QUANTITY
  | BAD_NUMBER                  { $$ = new_expr(ps, EX_ERROR, @$); }
  | IDENT {
        $$ = new_expr(ps, EX_NAME, @$);
        $$->u.name = $1;
    }
  | IDENT LBRACKET ident_list RBRACKET {
        $$ = new_expr(ps, EX_ACCESS, @$);
        $$->u.access.tensor = ident(ps, $1, @1);
        $$->u.access.indices = ident_list(ps, $3);
    }
  | IDENT LBRACKET RBRACKET {
        $$ = new_expr(ps, EX_ACCESS, @$);
        $$->u.access.tensor = ident(ps, $1, @1);
    }
  | LPAREN expr RPAREN          { $$ = $2; $$->span = sp(ps, @$); }
  | LPAREN error RPAREN         { $$ = new_expr(ps, EX_ERROR, @$); }
  ;

/* What may follow a reduction prefix directly. */
reduce_operand:
    IDENT LBRACKET ident_list RBRACKET {
        $$ = new_expr(ps, EX_ACCESS, @$);
        $$->u.access.tensor = ident(ps, $1, @1);
        $$->u.access.indices = ident_list(ps, $3);
    }
  | IDENT LBRACKET RBRACKET {
        $$ = new_expr(ps, EX_ACCESS, @$);
        $$->u.access.tensor = ident(ps, $1, @1);
    }
  | call
  | call reduce_operand         { $$ = make_reduce(ps, $1, $2, @$); }
  | LPAREN expr RPAREN          { $$ = $2; }
  ;

call:
    IDENT LPAREN args_opt RPAREN {
        $$ = new_expr(ps, EX_CALL, @$);
        $$->u.call.fn = ident(ps, $1, @1);
        $$->u.call.args = list_items(ps, $3);
        $$->u.call.arg_count = list_count($3);
        uint32_t deepest = 0;
        for (int i = 0; i < $$->u.call.arg_count; i++)
            if ($$->u.call.args[i]->depth > deepest) deepest = $$->u.call.args[i]->depth;
        $$ = nest(ps, $$, deepest, @1);
    }
  ;

args_opt:
    %empty                      { $$ = NULL; }
  | arg_list
  ;

arg_list:
    expr                        { $$ = list_push(ps, list_new(ps), &$1, sizeof(Expr *)); }
  | arg_list COMMA expr         { $$ = list_push(ps, $1, &$3, sizeof(Expr *)); }
  ;


/* Values written directly before a word (`x = 2 ring`, `array 32 x 32`):
 * no calls, so that the word cannot be read as a reduction operand. */
simple_value:
    INT {
        $$ = new_expr(ps, EX_INT, @$);
        $$->u.int_value = $1;
    }
  | REAL {
        /* `x = 2.5`: an integer is required, which the checker says */
        $$ = new_expr(ps, EX_REAL, @$);
        $$->u.real_value = $1;
    }
  | QUANTITY
  | BAD_NUMBER                  { $$ = new_expr(ps, EX_ERROR, @$); }
  | name {
        $$ = new_expr(ps, EX_NAME, @$);
        $$->u.name = $1->name;
    }
  | LPAREN expr RPAREN          { $$ = $2; $$->span = sp(ps, @$); }
  | MINUS simple_value %prec UMINUS {
        /* a negative size is a value error (E0212), not a syntax error */
        $$ = negate(ps, $2, @$, @1);
    }
  /* `y = N / 2`, `array R * 2 x R`: arithmetic of constants, as anywhere
   * a number goes (no calls: a word follows) */
  | simple_value PLUS simple_value  { $$ = binary(ps, '+', $1, $3, @$, @2); }
  | simple_value MINUS simple_value { $$ = binary(ps, '-', $1, $3, @$, @2); }
  | simple_value STAR simple_value  { $$ = binary(ps, '*', $1, $3, @$, @2); }
  | simple_value SLASH simple_value { $$ = binary(ps, '/', $1, $3, @$, @2); }
  ;

expr_or_hole:
    expr
  | HOLE                        { $$ = new_expr(ps, EX_HOLE, @$); }
  ;

/* ------------------------------------------------------------ archs */

arch_decl:
    ARCH name params_opt arch_parent_opt LBRACE arch_body RBRACE {
        $$ = new_decl(ps, DK_ARCH, @$);
        $$->name = *$2;
        $$->u.arch.params = list_items(ps, $3);
        $$->u.arch.param_count = list_count($3);
        if ($4) {
            $$->u.arch.parent = $4->parent;
            $$->u.arch.parent_bindings = $4->parent_bindings;
            $$->u.arch.parent_binding_count = $4->parent_binding_count;
        }
        $$->u.arch.items = list_items(ps, $6);
        $$->u.arch.item_count = list_count($6);
    }
  ;

/* `: edge`, `: gpu<SMS = 144>` (the parent's parameters rebound) */
arch_parent_opt:
    %empty                      { $$ = NULL; }
  | COLON IDENT bindings_opt {
        $$ = ARENA_NEW(&ps->scratch, ArchDecl);
        $$->parent = ident(ps, $2, @2);
        $$->parent_bindings = list_items(ps, $3);
        $$->parent_binding_count = list_count($3);
    }
  ;

arch_body:
    %empty                      { $$ = list_new(ps); }
  | arch_body arch_item         { $$ = list_push(ps, $1, &$2, sizeof(ArchItem *)); }
  ;

arch_item:
    attr {
        $$ = ARENA_NEW(ps->arena, ArchItem);
        $$->kind = AI_ATTR;
        $$->span = $1->span;
        $$->name = $1->key;
        $$->attr = $1;
    }
  | MEMORY name role_opt attr_block {
        $$ = ARENA_NEW(ps->arena, ArchItem);
        $$->kind = AI_MEMORY;
        $$->span = sp(ps, @$);
        $$->name = *$2;
        $$->role = *$3;
        $$->body = (AttrList){list_items(ps, $4), list_count($4)};
    }
  | CLUSTER name LBRACKET cluster_dims RBRACKET kind_opt attr_block {
        $$ = ARENA_NEW(ps->arena, ArchItem);
        $$->kind = AI_CLUSTER;
        $$->span = sp(ps, @$);
        $$->name = *$2;
        $$->dims = list_items(ps, $4);
        $$->dim_count = list_count($4);
        $$->unit_kind = *$6;
        $$->body = (AttrList){list_items(ps, $7), list_count($7)};
    }
  | COMPUTE name name attr_block {
        $$ = ARENA_NEW(ps->arena, ArchItem);
        $$->kind = AI_COMPUTE;
        $$->span = sp(ps, @$);
        $$->name = *$2;
        $$->unit_kind = *$3;
        $$->body = (AttrList){list_items(ps, $4), list_count($4)};
    }
  | error SEMI {
        $$ = ARENA_NEW(ps->arena, ArchItem);
        $$->kind = AI_ERROR;
        $$->span = sp(ps, @$);
        yyerrok;
    }
  | error attr_block {
        $$ = ARENA_NEW(ps->arena, ArchItem);
        $$->kind = AI_ERROR;
        $$->span = sp(ps, @$);
    }
  ;

role_opt:
    %empty                      { $$ = held(ps, (Ident){0}); }
  | ROLE name                   { $$ = $2; }
  ;

kind_opt:
    %empty                      { $$ = held(ps, (Ident){0}); }
  | name
  ;

cluster_dims:
    name EQUALS simple_value kind_opt {
        ClusterDimDecl d = {*$1, $3, *$4, sp(ps, @$)};
        $$ = list_push(ps, list_new(ps), &d, sizeof d);
    }
  | cluster_dims COMMA name EQUALS simple_value kind_opt {
        ClusterDimDecl d = {*$3, $5, *$6, span_join($3->span, sp(ps, @5))};
        if ($6->name) d.span = span_join(d.span, $6->span);
        $$ = list_push(ps, $1, &d, sizeof d);
    }
  ;

attr_block:
    LBRACE attrs RBRACE         { $$ = $2; }
  ;

attrs:
    %empty                      { $$ = list_new(ps); }
  | attrs attr                  { $$ = list_push(ps, $1, &$2, sizeof(Attr *)); }
  | attrs error SEMI            { $$ = $1; yyerrok; }
  ;

attr:
    IDENT expr_list SEMI {
        $$ = new_attr(ps, ident(ps, $1, @1), @$);
        $$->values = list_items(ps, $2);
        $$->value_count = list_count($2);
    }
  /* `shape 64 x 256 x 16`: the word after the first size tells this form
   * from `name expr_list`, so the first size is a number, a constant or a
   * parenthesised expression (no arithmetic outside parentheses) */
  | IDENT shape_lead size_sep simple_value size_sep simple_value SEMI {
        $$ = new_attr(ps, ident(ps, $1, @1), @$);
        if ($3->name != intern_cstr("x") || $5->name != intern_cstr("x")) {
            Ident bad = $3->name != intern_cstr("x") ? *$3 : *$5;
            diag_error(ps->diags, bad.span, "E0116",
                       "expected `x` between the sizes of `%s`, found `%s`", $1,
                       bad.name);
        }
        $$->values = ARENA_ARRAY(ps->arena, Expr *, 3);
        $$->values[0] = $2;
        $$->values[1] = $4;
        $$->values[2] = $6;
        $$->value_count = 3;
        $$->sizes = true;
    }
  | COST cost_pairs SEMI {
        $$ = new_attr(ps, ident(ps, intern_cstr("cost"), @1), @$);
        $$->pairs = list_items(ps, $2);
        $$->pair_count = list_count($2);
    }
  | ARRAY simple_value size_sep simple_value SEMI {
        $$ = new_attr(ps, ident(ps, intern_cstr("array"), @1), @$);
        if ($3->name != intern_cstr("x"))
            diag_error(ps->diags, $3->span, "E0116",
                       "expected `x` between the rows and columns of an array, "
                       "found `%s`", $3->name);
        $$->values = ARENA_ARRAY(ps->arena, Expr *, 2);
        $$->values[0] = $2;
        $$->values[1] = $4;
        $$->value_count = 2;
    }
  ;

/* the `x` between sizes; `by`, a keyword, is taken here too so that
 * `array 32 by 32` gets E0116 */
size_sep:
    name                        { $$ = $1; }
  | BY                          { $$ = held(ps, ident(ps, intern_cstr("by"), @1)); }
  ;

shape_lead:
    INT {
        $$ = new_expr(ps, EX_INT, @$);
        $$->u.int_value = $1;
    }
  | REAL {
        $$ = new_expr(ps, EX_REAL, @$);
        $$->u.real_value = $1;
    }
  | name {
        $$ = new_expr(ps, EX_NAME, @$);
        $$->u.name = $1->name;
    }
  | LPAREN expr RPAREN          { $$ = $2; $$->span = sp(ps, @$); }
  | MINUS INT {
        Expr *v = new_expr(ps, EX_INT, @2);
        v->u.int_value = $2;
        $$ = negate(ps, v, @$, @1);
    }
  ;

cost_pairs:
    name expr {
        AttrPair p = {*$1, $2};
        $$ = list_push(ps, list_new(ps), &p, sizeof p);
    }
  | cost_pairs COMMA name expr {
        AttrPair p = {*$3, $4};
        $$ = list_push(ps, $1, &p, sizeof p);
    }
  ;

/* --------------------------------------------------------- mappings */

mapping_decl:
    MAPPING name FOR name bindings_opt ON name bindings_opt LBRACE map_body RBRACE {
        $$ = new_decl(ps, DK_MAPPING, @$);
        $$->name = *$2;
        $$->u.mapping.op = *$4;
        $$->u.mapping.bindings = list_items(ps, $5);
        $$->u.mapping.binding_count = list_count($5);
        $$->u.mapping.arch = *$7;
        $$->u.mapping.arch_bindings = list_items(ps, $8);
        $$->u.mapping.arch_binding_count = list_count($8);
        $$->u.mapping.items = list_items(ps, $10);
        $$->u.mapping.item_count = list_count($10);
    }
  ;

/* ----------------------------------------------------------- sweeps */

/* `model gpt { embed e; layers l; head h; }`: a model of mappings
 * (docs/language.md 5.13) */
model_decl:
    MODEL name LBRACE model_parts RBRACE {
        $$ = new_decl(ps, DK_MODEL, @$);
        $$->name = *$2;
        $$->u.model.parts = list_items(ps, $4);
        $$->u.model.part_count = list_count($4);
    }
  ;

model_parts:
    %empty                      { $$ = list_new(ps); }
  | model_parts name name SEMI {
        ModelPart part = {*$2, *$3, span_join($2->span, sp(ps, @4))};
        $$ = list_push(ps, $1, &part, sizeof part);
    }
  ;

sweep_decl:
    SWEEP name LBRACE sweep_axes RBRACE {
        $$ = new_decl(ps, DK_SWEEP, @$);
        $$->name = *$2;
        $$->u.sweep.axes = list_items(ps, $4);
        $$->u.sweep.axis_count = list_count($4);
        ps->sweep_zips = 0;
    }
  ;

sweep_axes:
    %empty                      { $$ = list_new(ps); }
  | sweep_axes name EQUALS sweep_values SEMI {
        SweepAxisDecl a = {SA_PARAM, *$2, $4.values, $4.count, $4.is_list, 0, sp(ps, @$)};
        a.span = span_join($2->span, sp(ps, @5));
        $$ = list_push(ps, $1, &a, sizeof a);
    }
  | sweep_axes ARCH EQUALS sweep_values SEMI {
        SweepAxisDecl a = {SA_ARCH, ident(ps, intern_cstr("arch"), @2), $4.values, $4.count,
                           $4.is_list, 0, span_join(sp(ps, @2), sp(ps, @5))};
        $$ = list_push(ps, $1, &a, sizeof a);
    }
  | sweep_axes MAPPING EQUALS sweep_values SEMI {
        SweepAxisDecl a = {SA_MAPPING, ident(ps, intern_cstr("mapping"), @2), $4.values,
                           $4.count, $4.is_list, 0, span_join(sp(ps, @2), sp(ps, @5))};
        $$ = list_push(ps, $1, &a, sizeof a);
    }
  /* `zip { M = [...]; N = [...]; }`: axes that advance together */
  | sweep_axes name LBRACE { ps->sweep_zips++; } sweep_axes RBRACE {
        if ($2->name != intern_cstr("zip"))
            diag_error(ps->diags, $2->span, "E0117",
                       "expected an axis (`NAME = values;`) or `zip { ... }` in a sweep, found "
                       "`%s {`", $2->name);
        SweepAxisDecl *inner = list_items(ps, $5);
        int n = list_count($5);
        $$ = $1;
        for (int k = 0; k < n; k++) {
            SweepAxisDecl a = inner[k];
            if (a.zip == 0) a.zip = ps->sweep_zips;
            $$ = list_push(ps, $$, &a, sizeof a);
        }
    }
  | sweep_axes error SEMI       { $$ = $1; yyerrok; }
  ;

sweep_values:
    LBRACKET expr_list RBRACKET {
        $$.values = list_items(ps, $2);
        $$.count = list_count($2);
        $$.is_list = true;
    }
  | LBRACKET RBRACKET {
        $$.values = NULL;
        $$.count = 0;
        $$.is_list = true;
    }
  | expr {
        $$.values = ARENA_ARRAY(ps->arena, Expr *, 1);
        $$.values[0] = $1;
        $$.count = 1;
        $$.is_list = false;
    }
  ;

bindings_opt:
    %empty                      { $$ = NULL; }
  | LANGLE RANGLE               { $$ = list_new(ps); }
  | LANGLE binding_list RANGLE  { $$ = $2; }
  ;

binding_list:
    name EQUALS expr {
        ParamBinding b = {*$1, $3};
        $$ = list_push(ps, list_new(ps), &b, sizeof b);
    }
  | binding_list COMMA name EQUALS expr {
        ParamBinding b = {*$3, $5};
        $$ = list_push(ps, $1, &b, sizeof b);
    }
  ;

map_body:
    %empty                      { $$ = list_new(ps); }
  | map_body map_item           { $$ = list_push(ps, $1, &$2, sizeof(MapItem *)); }
  ;

map_item:
    SPATIAL HOLE SEMI {
        $$ = new_item(ps, MI_SPATIAL, @$, @1);
        $$->whole_hole = true;
    }
  | SPATIAL assigns SEMI {
        $$ = new_item(ps, MI_SPATIAL, @$, @1);
        $$->assigns = list_items(ps, $2);
        $$->assign_count = list_count($2);
    }
  | SPATIAL FOR for_stmts COLON HOLE SEMI {
        $$ = new_item(ps, MI_SPATIAL, @$, @1);
        $$->stmts = ident_list(ps, $3);
        $$->whole_hole = true;
    }
  | SPATIAL FOR for_stmts COLON assigns SEMI {
        $$ = new_item(ps, MI_SPATIAL, @$, @1);
        $$->stmts = ident_list(ps, $3);
        $$->assigns = list_items(ps, $5);
        $$->assign_count = list_count($5);
    }
  | TILE name COLON HOLE SEMI {
        $$ = new_item(ps, MI_TILE, @$, @1);
        $$->level = *$2;
        $$->whole_hole = true;
    }
  | TILE name COLON tiles SEMI {
        $$ = new_item(ps, MI_TILE, @$, @1);
        $$->level = *$2;
        $$->tiles = list_items(ps, $4);
        $$->tile_count = list_count($4);
    }
  | TILE name FOR for_stmts COLON HOLE SEMI {
        $$ = new_item(ps, MI_TILE, @$, @1);
        $$->level = *$2;
        $$->stmts = ident_list(ps, $4);
        $$->whole_hole = true;
    }
  | TILE name FOR for_stmts COLON tiles SEMI {
        $$ = new_item(ps, MI_TILE, @$, @1);
        $$->level = *$2;
        $$->stmts = ident_list(ps, $4);
        $$->tiles = list_items(ps, $6);
        $$->tile_count = list_count($6);
    }
  | ORDER name COLON HOLE SEMI {
        $$ = new_item(ps, MI_ORDER, @$, @1);
        $$->level = *$2;
        $$->whole_hole = true;
    }
  | ORDER name COLON ident_list SEMI {
        $$ = new_item(ps, MI_ORDER, @$, @1);
        $$->level = *$2;
        $$->order = ident_list(ps, $4);
    }
  | ORDER name FOR for_stmts COLON HOLE SEMI {
        $$ = new_item(ps, MI_ORDER, @$, @1);
        $$->level = *$2;
        $$->stmts = ident_list(ps, $4);
        $$->whole_hole = true;
    }
  | ORDER name FOR for_stmts COLON ident_list SEMI {
        $$ = new_item(ps, MI_ORDER, @$, @1);
        $$->level = *$2;
        $$->stmts = ident_list(ps, $4);
        $$->order = ident_list(ps, $6);
    }
  | FUSE HOLE SEMI {
        $$ = new_item(ps, MI_FUSE, @$, @1);
        $$->whole_hole = true;
    }
  | FUSE ident_list at_opt SEMI {
        $$ = new_item(ps, MI_FUSE, @$, @1);
        $$->stmts = ident_list(ps, $2);
        $$->level = *$3;
    }
  | FUSE ident_list at_opt OVERLAP name SEMI {
        $$ = new_item(ps, MI_FUSE, @$, @1);
        $$->stmts = ident_list(ps, $2);
        $$->level = *$3;
        $$->value = *$5;
    }
  | OVERLAP name SEMI {
        $$ = new_item(ps, MI_OVERLAP, @$, @1);
        $$->value = *$2;
    }
  /* `overlap tiles reserve 28 of 132;`: units given to the collectives */
  | OVERLAP name name INT name INT SEMI {
        $$ = new_item(ps, MI_OVERLAP, @$, @1);
        $$->value = *$2;
        reserve_clause(ps, $$, $3, $4, @4, $5, $6, @6);
    }
  | OVERLAP HOLE name INT name INT SEMI {
        $$ = new_item(ps, MI_OVERLAP, @$, @1);
        $$->value = hole_ident(ps, @2);
        reserve_clause(ps, $$, $3, $4, @4, $5, $6, @6);
    }
  | FUSE ident_list at_opt OVERLAP name name INT name INT SEMI {
        $$ = new_item(ps, MI_FUSE, @$, @1);
        $$->stmts = ident_list(ps, $2);
        $$->level = *$3;
        $$->value = *$5;
        reserve_clause(ps, $$, $6, $7, @7, $8, $9, @9);
    }
  | FUSE ident_list at_opt OVERLAP HOLE name INT name INT SEMI {
        $$ = new_item(ps, MI_FUSE, @$, @1);
        $$->stmts = ident_list(ps, $2);
        $$->level = *$3;
        $$->value = hole_ident(ps, @5);
        reserve_clause(ps, $$, $6, $7, @7, $8, $9, @9);
    }
  /* `overlap ?;`, `fuse ... overlap ?;`: coarse or fine-grained, chosen */
  | OVERLAP HOLE SEMI {
        $$ = new_item(ps, MI_OVERLAP, @$, @1);
        $$->value = hole_ident(ps, @2);
    }
  | FUSE ident_list at_opt OVERLAP HOLE SEMI {
        $$ = new_item(ps, MI_FUSE, @$, @1);
        $$->stmts = ident_list(ps, $2);
        $$->level = *$3;
        $$->value = hole_ident(ps, @5);
    }
  | OBJECTIVE name SEMI {
        $$ = new_item(ps, MI_OBJECTIVE, @$, @1);
        $$->value = *$2;
    }
  | ONLINE ident_list SEMI {
        $$ = new_item(ps, MI_ONLINE, @$, @1);
        $$->stmts = ident_list(ps, $2);
    }
  | RECOMPUTE ident_list SEMI {
        $$ = new_item(ps, MI_RECOMPUTE, @$, @1);
        $$->stmts = ident_list(ps, $2);
    }
  /* `recompute ?;` (none or full), `recompute ? S, ...;` (or those) */
  | RECOMPUTE HOLE SEMI {
        $$ = new_item(ps, MI_RECOMPUTE, @$, @1);
        $$->whole_hole = true;
    }
  | RECOMPUTE HOLE ident_list SEMI {
        $$ = new_item(ps, MI_RECOMPUTE, @$, @1);
        $$->whole_hole = true;
        $$->stmts = ident_list(ps, $3);
    }
  | PHASE name SEMI {
        $$ = new_item(ps, MI_PHASE, @$, @1);
        $$->value = *$2;
    }
  | REPEAT expr SEMI {
        $$ = new_item(ps, MI_REPEAT, @$, @1);
        $$->count = $2;
    }
  /* `pipeline pp;`, `pipeline pp gpipe;`, `pipeline pp interleaved 3;`;
     `pipeline ?` leaves the dim (or none) to the optimizer */
  | PIPELINE HOLE SEMI {
        $$ = new_item(ps, MI_PIPELINE, @$, @1);
        $$->level = hole_ident(ps, @2);
        $$->whole_hole = true;
    }
  | PIPELINE HOLE name SEMI {
        $$ = new_item(ps, MI_PIPELINE, @$, @1);
        $$->level = hole_ident(ps, @2);
        $$->whole_hole = true;
        $$->value = *$3;
    }
  | PIPELINE HOLE name expr SEMI {
        $$ = new_item(ps, MI_PIPELINE, @$, @1);
        $$->level = hole_ident(ps, @2);
        $$->whole_hole = true;
        $$->value = *$3;
        $$->count = $4;
    }
  | PIPELINE name SEMI {
        $$ = new_item(ps, MI_PIPELINE, @$, @1);
        $$->level = *$2;
    }
  | PIPELINE name name SEMI {
        $$ = new_item(ps, MI_PIPELINE, @$, @1);
        $$->level = *$2;
        $$->value = *$3;
    }
  | PIPELINE name name expr SEMI {
        $$ = new_item(ps, MI_PIPELINE, @$, @1);
        $$->level = *$2;
        $$->value = *$3;
        $$->count = $4;
    }
  /* `serve decode of B;`, `serve prefill of B;`: B counts the sequences */
  | SERVE name name name SEMI {
        $$ = serve_item(ps, @$, @1, $2, $3, $4);
    }
  /* `serve decode of B = 64;` sets B; `serve decode of B = ?;` lets the
     optimizer choose it, `... = ? under 50 ms;` with a bound on the step */
  | SERVE name name name EQUALS INT SEMI {
        $$ = serve_item(ps, @$, @1, $2, $3, $4);
        $$->count = new_expr(ps, EX_INT, @6);
        $$->count->u.int_value = $6;
    }
  /* a negative batch: read, so that the check says what is wrong (E0364) */
  | SERVE name name name EQUALS MINUS INT SEMI {
        $$ = serve_item(ps, @$, @1, $2, $3, $4);
        $$->count = new_expr(ps, EX_INT, @7);
        $$->count->span.start = @6.start;
        $$->count->u.int_value = -$7;
    }
  | SERVE name name name EQUALS HOLE SEMI {
        $$ = serve_item(ps, @$, @1, $2, $3, $4);
        $$->count = new_expr(ps, EX_HOLE, @6);
        $$->whole_hole = true;
    }
  | SERVE name name name EQUALS HOLE name expr SEMI {
        $$ = serve_item(ps, @$, @1, $2, $3, $4);
        $$->count = new_expr(ps, EX_HOLE, @6);
        $$->whole_hole = true;
        $$->limit = $8;
        if (!$7->name || strcmp($7->name, "under") != 0) {
            Diag *d = diag_error(ps->diags, $7->span, "E0110",
                                 "expected `under` and a time after the batch, found `%s`",
                                 $7->name ? $7->name : "?");
            diag_help(d, ps->diags, "write `serve %s of %s = ? under 50 ms;`",
                      $2->name ? $2->name : "decode", $4->name ? $4->name : "B");
        }
    }
  | MICROBATCHES expr SEMI {
        $$ = new_item(ps, MI_MICROBATCHES, @$, @1);
        $$->count = $2;
    }
  /* `microbatches 8 of B;`, `microbatches ? of B;`: B is the whole batch */
  | MICROBATCHES INT name name SEMI {
        $$ = new_item(ps, MI_MICROBATCHES, @$, @1);
        $$->count = new_expr(ps, EX_INT, @2);
        $$->count->u.int_value = $2;
        $$->value = *$3;
        $$->level = *$4;
    }
  | MICROBATCHES HOLE SEMI {
        $$ = new_item(ps, MI_MICROBATCHES, @$, @1);
        $$->count = new_expr(ps, EX_HOLE, @2);
        $$->whole_hole = true;
    }
  | MICROBATCHES HOLE name name SEMI {
        $$ = new_item(ps, MI_MICROBATCHES, @$, @1);
        $$->count = new_expr(ps, EX_HOLE, @2);
        $$->whole_hole = true;
        $$->value = *$3;
        $$->level = *$4;
    }
  | error SEMI {
        $$ = new_item(ps, MI_ERROR, @$, @$);
        yyerrok;
    }
  ;

for_stmts:
    ident_list
  ;

at_opt:
    %empty                      { $$ = held(ps, (Ident){0}); }
  | AT ident_or_hole            { $$ = $2; }
  ;

assigns:
    assign                      { $$ = list_push(ps, list_new(ps), $1, sizeof(SpatialAssign)); }
  | assigns COMMA assign        { $$ = list_push(ps, $1, $3, sizeof(SpatialAssign)); }
  ;

/* `m -> x`, or `(m, n) -> sm`: several indices dealt jointly (their tile
 * grid flattened, the first most significant) */
assign:
    ident_or_hole ARROW dim_targets {
        SpatialAssign a = {*$1, ident_list(ps, $3), {0}, span_join($1->span, sp(ps, @3))};
        $$ = held_assign(ps, a);
    }
  | LPAREN ident_list RPAREN ARROW dim_targets {
        IdentList joint = ident_list(ps, $2);
        SpatialAssign a = {joint.items[0], ident_list(ps, $5), joint, sp(ps, @$)};
        $$ = held_assign(ps, a);
    }
  ;

dim_targets:
    ident_or_hole               { $$ = list_push(ps, list_new(ps), $1, sizeof(Ident)); }
  | LPAREN ident_list RPAREN    { $$ = $2; }
  ;

tiles:
    ident_or_hole expr_or_hole {
        TileEntry t = {*$1, $2, sp(ps, @$)};
        $$ = list_push(ps, list_new(ps), &t, sizeof t);
    }
  | tiles COMMA ident_or_hole expr_or_hole {
        TileEntry t = {*$3, $4, span_join($3->span, $4->span)};
        $$ = list_push(ps, $1, &t, sizeof t);
    }
  ;

%%

static bool is_word_token(yysymbol_kind_t kind) {
    return kind == YYSYMBOL_IDENT || kind == YYSYMBOL_INT || kind == YYSYMBOL_REAL ||
           kind == YYSYMBOL_QUANTITY || kind == YYSYMBOL_STRING ||
           kind == YYSYMBOL_YYEOF || kind == YYSYMBOL_BAD_NUMBER;
}

/* `expected X or Y, found Z` with LAC-exact expectations. */
static int yyreport_syntax_error(const yypcontext_t *ctx, ParseState *ps) {
    /* The lexer already explained this statement's problem (or gave up on
     * nesting): a syntax error here would only repeat it. */
    if (ps->lex_error_pending || ps->too_deep) return 0;
    enum { MAX_EXPECTED = 9 };
    yysymbol_kind_t expected[MAX_EXPECTED];
    int n = yypcontext_expected_tokens(ctx, expected, MAX_EXPECTED);
    yysymbol_kind_t found = yypcontext_token(ctx);
    CmtLoc loc = *yypcontext_location(ctx);
    ps->syntax_errors++;

    ps->last_syntax_error = loc.start;
    /* "end of file" among the alternatives only distracts. */
    if (n > 1) {
        int kept = 0;
        for (int i = 0; i < n; i++)
            if (expected[i] != YYSYMBOL_YYEOF) expected[kept++] = expected[i];
        n = kept;
    }
    /* Everything that can start an expression reads better as one word. */
    bool wants_expression = false;
    for (int i = 0; i < n; i++)
        if (expected[i] == YYSYMBOL_INT) wants_expression = true;
    if (wants_expression) {
        int kept = 0;
        for (int i = 0; i < n; i++) {
            yysymbol_kind_t k = expected[i];
            if (k == YYSYMBOL_YYEOF || k == YYSYMBOL_INT || k == YYSYMBOL_REAL || k == YYSYMBOL_QUANTITY ||
                k == YYSYMBOL_BAD_NUMBER || k == YYSYMBOL_LPAREN ||
                k == YYSYMBOL_MINUS || k == YYSYMBOL_IDENT)
                continue;
            expected[kept++] = k;
        }
        n = kept;
    }
    const char *words[MAX_EXPECTED + 1];
    char quoted[MAX_EXPECTED][48];
    int word_count = 0;
    if (wants_expression) words[word_count++] = "an expression";
    for (int i = 0; i < n && n < MAX_EXPECTED; i++) {
        const char *quote = is_word_token(expected[i]) ? "" : "`";
        snprintf(quoted[i], sizeof quoted[i], "%s%s%s", quote,
                 yysymbol_name(expected[i]), quote);
        words[word_count++] = quoted[i];
    }
    char want[512] = "";
    size_t used = 0;
    for (int i = 0; i < word_count; i++) {
        const char *sep = i == 0 ? "" : i == word_count - 1 ? " or " : ", ";
        int w = snprintf(want + used, sizeof want - used, "%s%s", sep, words[i]);
        if (w > 0 && (size_t)w < sizeof want - used) used += (size_t)w;
    }
    char what[160];
    if (found == YYSYMBOL_YYEOF) {
        snprintf(what, sizeof what, "end of file");
    } else {
        size_t len = loc.end - loc.start;
        const char *text = ps->file->text + loc.start;
        bool printable = len > 0 && len <= 40;
        for (size_t i = 0; printable && i < len; i++)
            if ((unsigned char)text[i] < 0x20) printable = false;
        if (printable) snprintf(what, sizeof what, "`%.*s`", (int)len, text);
        else snprintf(what, sizeof what, "%s", yysymbol_name(found));
    }
    /* A missing `;` is best shown where it belongs: right after the token
     * before, when the unexpected one is on a later line or is the end. */
    Span at = {ps->file->id, loc.start, loc.end};
    uint32_t prev_line = 0, prev_col = 0, line = 0, col = 0;
    source_line_col(ps->file, ps->prev_end, &prev_line, &prev_col);
    source_line_col(ps->file, loc.start, &line, &col);
    bool wants_semicolon = false;
    for (int i = 0; i < n; i++)
        if (expected[i] == YYSYMBOL_SEMI) wants_semicolon = true;
    if (ps->prev_end > 0 && wants_semicolon && (found == YYSYMBOL_YYEOF || line > prev_line))
        at = (Span){ps->file->id, ps->prev_end, ps->prev_end};
    if (wants_semicolon && found == YYSYMBOL_RBRACE && ps->brace_closed_block) {
        ps->brace_resync = 1;
        ps->brace_at = loc.start;
        ps->brace_end = loc.end;
    }
    /* `4 Mb`: a number, then a word that is no unit but looks like one.
     * After an attribute's name the word is read as the `x` of `shape 16 x
     * 16 x 16`, so the error comes at the token after it. */
    uint32_t word_at = loc.start;
    bool after_number =
        found == YYSYMBOL_IDENT && (ps->prev_token == INT || ps->prev_token == REAL);
    /* a value expected, as after `shape 16 x` */
    bool word_before = !after_number && wants_expression && ps->prev_token == IDENT &&
                       (ps->prev_prev_token == INT || ps->prev_prev_token == REAL);
    if (word_before) {
        after_number = true;
        word_at = ps->prev_start;
    }
    if (after_number) {
        const char *word = ps->file->text + word_at;
        size_t len = (size_t)(ps->limit - word);
        char buf[64];
        const char *unit = unit_suggest(word, len, buf, sizeof buf);
        if (unit) {
            size_t wlen = 0;
            while (wlen < len && (word[wlen] == '_' || word[wlen] == '/' ||
                                  (word[wlen] >= 'a' && word[wlen] <= 'z') ||
                                  (word[wlen] >= 'A' && word[wlen] <= 'Z') ||
                                  (wlen > 0 && word[wlen] >= '0' && word[wlen] <= '9')))
                wlen++;
            Diag *d = diag_error(ps->diags, (Span){ps->file->id, word_at,
                                                   word_at + (uint32_t)wlen},
                                 "E0104", "unknown unit `%.*s`", (int)wlen, word);
            diag_help(d, ps->diags, "did you mean %s?", unit);
            return 0;
        }
        /* `bandwidth 64 foo;`: the word is the mistake, unless it is the
         * `x` of a size list left unfinished */
        size_t wlen = ps->prev_end - ps->prev_start;
        if (word_before && !(wlen == 1 && word[0] == 'x')) {
            diag_error(ps->diags, (Span){ps->file->id, word_at, ps->prev_end}, "E0110",
                       "expected `;`, `,`, `+`, `-`, `*` or `/`, found `%.*s`", (int)wlen, word);
            return 0;
        }
    }
    if (found == YYSYMBOL_HOLE) {
        /* `repeat ?;`, `objective ?;`, `gemm<M = ?>`, `order L: m, ?;` */
        Diag *d = diag_error(ps->diags, at, "E0110",
                             "a hole `?` cannot stand here: expected %s",
                             used ? want : "something else");
        diag_note(d, ps->diags, "holes stand for an index, a tile size, a cluster "
                                "dimension, a whole order (`order L: ?;`), a fusion "
                                "level (`fuse ... at ?;`), a whole `spatial` or "
                                "`fuse` line, an overlap (`overlap ?;`), the stages, "
                                "micro-batches and recomputation (`pipeline ?;`, "
                                "`microbatches ? of B;`, `recompute ?;`) or a serving "
                                "batch (`serve decode of B = ?;`)");
        return 0;
    }
    bool wants_name = false, wants_close = false;
    for (int i = 0; i < n; i++) {
        if (expected[i] == YYSYMBOL_IDENT) wants_name = true;
        if (expected[i] == YYSYMBOL_RBRACE) wants_close = true;
    }
    bool declaration = found == YYSYMBOL_OP || found == YYSYMBOL_ARCH ||
                       found == YYSYMBOL_MAPPING || found == YYSYMBOL_SWEEP ||
                       found == YYSYMBOL_MODEL || found == YYSYMBOL_USE || found == YYSYMBOL_CONST;
    if (used && wants_close && declaration && ps->brace_depth > 0 && ps->brace_depth <= 64) {
        /* a declaration inside a block: the block above was not closed */
        Diag *d = diag_error(ps->diags, at, "E0110", "expected %s, found %s", want, what);
        uint32_t open = ps->brace_open[ps->brace_depth - 1];
        diag_label(d, ps->diags, (Span){ps->file->id, open, open + 1},
                   "this `{` is never closed");
        diag_help(d, ps->diags, "add `}` before this declaration");
        return 0;
    }
    if ((wants_name || wants_expression) && found >= YYSYMBOL_USE &&
        found <= YYSYMBOL_WHERE) {
        /* `const tile = 4;`: a reserved word where a name goes */
        Diag *d = diag_error(ps->diags, at, "E0110",
                             "expected %s, found %s, which is a keyword", want, what);
        diag_help(d, ps->diags, "keywords are reserved: choose another name, "
                                "such as `%.*s_`", (int)(loc.end - loc.start),
                  ps->file->text + loc.start);
        return 0;
    }
    bool wants_brace = false;
    for (int i = 0; i < n; i++)
        if (expected[i] == YYSYMBOL_RBRACE) wants_brace = true;
    if (used && found == YYSYMBOL_YYEOF && wants_brace && ps->brace_depth > 0 &&
        ps->brace_depth <= 64) {
        /* the file ends inside a block: show where that block opened */
        Diag *d = diag_error(ps->diags, at, "E0110", "expected %s, found %s", want, what);
        uint32_t open = ps->brace_open[ps->brace_depth - 1];
        diag_label(d, ps->diags, (Span){ps->file->id, open, open + 1},
                   "this `{` is never closed");
        return 0;
    }
    bool wants_bracket = false;
    for (int i = 0; i < n; i++)
        if (expected[i] == YYSYMBOL_RBRACKET) wants_bracket = true;
    if (used && wants_bracket &&
        (found == YYSYMBOL_PLUS || found == YYSYMBOL_MINUS || found == YYSYMBOL_STAR ||
         found == YYSYMBOL_SLASH)) {
        /* `X[p + r]`: an index is a name (docs/language.md 3) */
        Diag *d = diag_error(ps->diags, at, "E0110", "expected %s, found %s", want, what);
        diag_note(d, ps->diags,
                  "an access names one index per dimension; arithmetic on indices (a "
                  "convolution's `p + r`) cannot be written");
        diag_help(d, ps->diags,
                  "write the input with its window as a dimension of its own (im2col), or the "
                  "convolution as a GEMM over the unrolled patches");
        return 0;
    }
    if (used)
        diag_error(ps->diags, at, "E0110", "expected %s, found %s", want, what);
    else
        diag_error(ps->diags, at, "E0110", "unexpected %s", what);
    return 0;
}

Module *parse_module(Arena *arena, SourceFile *file, DiagSink *diags) {
    ParseState ps = {0};
    ps.arena = arena;
    ps.diags = diags;
    ps.file = file;
    ps.cursor = file->text;
    ps.limit = file->text + file->len;
    /* a UTF-8 byte order mark, as some editors write, is not a character */
    if (file->len >= 3 && memcmp(file->text, "\xEF\xBB\xBF", 3) == 0) ps.cursor += 3;
    ps.last_syntax_error = -1;
    /* A file seldom has more than one new name per 128 bytes (the bench
     * file of 2.8 MB has 13 400): room for them at once, instead of
     * doubling the table and rehashing every name five times over. */
    intern_reserve(file->len / 128);
    Module *m = ARENA_NEW(arena, Module);
    m->file = file;
    ps.module = m;
    if (cmtparse(&ps) == 2) {
        /* where the parser ran out of stack: the token it had just read */
        uint32_t at = ps.cursor >= file->text && ps.cursor <= file->text + file->len
                          ? (uint32_t)(ps.cursor - file->text)
                          : (uint32_t)file->len;
        uint32_t from = at > 0 ? at - 1 : 0;
        diag_error(diags, (Span){file->id, from, at}, "E0113",
                   "the file is too deeply nested to parse");
    }
    m->decl_count = ps.decls.count;
    m->decls = ARENA_ARRAY(arena, Decl *, ps.decls.count > 0 ? ps.decls.count : 1);
    if (ps.decls.count)
        memcpy(m->decls, ps.decls.items, sizeof(Decl *) * (size_t)ps.decls.count);
    m->comment_count = ps.comments.count;
    m->comments = ARENA_ARRAY(arena, Span, ps.comments.count > 0 ? ps.comments.count : 1);
    for (int i = 0; i < ps.comments.count; i++) m->comments[i] = *(Span *)ps.comments.items[i];
    arena_free_all(&ps.scratch);
    arena_free_all(&ps.file_scratch);
    return m;
}
