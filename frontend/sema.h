/* sema.h — private to the semantic checker (resolve.c, consteval.c,
 * check_op.c, check_arch.c, check_mapping.c): the global symbol table,
 * constant evaluation and the entry points of each checker. */
#ifndef CMT_SEMA_H
#define CMT_SEMA_H

#include "frontend/ast.h"
#include "frontend/check.h"

/* ------------------------------------------------------- global symbols */

typedef enum ConstState { CS_UNVISITED, CS_EVALUATING, CS_DONE } ConstState;

typedef enum ValueKind {
    VK_ERROR, /* already reported: stay quiet */
    VK_INT,
    VK_REAL,
    VK_QUANTITY
} ValueKind;

typedef struct Value {
    ValueKind kind;
    int64_t i;   /* VK_INT */
    double r;    /* VK_REAL, VK_QUANTITY (SI) */
    UnitDim dim; /* VK_QUANTITY */
} Value;

typedef struct GlobalEntry {
    Name name;
    const Decl *decl;
    ConstState const_state;
    Value const_value;
} GlobalEntry;

typedef struct Globals {
    GlobalEntry *entries; /* in declaration order, sized once */
    int count, cap;
    /* open addressing on the interned pointer: entry number + 1, 0 for an
     * empty slot (4 bytes a slot, not a whole entry) */
    int32_t *index;
    int index_cap; /* a power of two, more than twice count */
} Globals;

/* Builds the table of consts, ops, archs and mappings over the given
 * modules (in the order given: the first definition wins, a later one is
 * reported as a duplicate when `diags` is not NULL). */
Globals *globals_build(Arena *arena, Module **modules, int module_count, DiagSink *diags);
GlobalEntry *globals_find(const Globals *g, Name name);
/* Every name of the given decl kind (or every kind when kind < 0), for
 * "did you mean": in declaration order, so that of two equally close
 * names the first declared is suggested. */
const char **globals_names(Arena *arena, const Globals *g, int kind, int *count);

/* ----------------------------------------------------- constant values */

/* What a value is called in a message: `text`, or `text` followed by a
 * name in backquotes ("dimension 2 of `A`", "the size of `x`").  The two
 * are put together only when a message prints them: most values are
 * never reported on, and building the text for each cost more than
 * evaluating it. */
typedef struct Subject {
    const char *text; /* NULL with no name: "a constant expression" */
    Name name;        /* NULL: the text alone */
} Subject;

static inline Subject subject(const char *text) {
    return (Subject){text, NULL};
}
static inline Subject subject_of(const char *before, Name name) {
    return (Subject){before, name};
}
/* The subject as a message writes it (interned when it has a name). */
const char *subject_text(Subject s);

typedef struct ConstEnv {
    Arena *arena;
    DiagSink *diags;
    const SourceManager *sources;
    Globals *globals;
    /* op parameters in scope (values known), or none */
    const Name *param_names;
    const int64_t *param_values;
    int param_count;
    /* parameters declared after those in scope (param_names[param_count ..
     * param_later - 1]): a default that names one is told to reorder */
    int param_later;
    /* arch parameters in scope: values of any kind, units included */
    const Name *value_names;
    const Value *values;
    int value_count;
    Subject where;   /* "a constant", "dimension 1 of `A`", ... */
    int const_depth; /* nesting of const definitions being evaluated */
    /* nesting of the expressions being evaluated, counted through the
     * constants they use: each is at most MAX_EXPR_DEPTH deep, but a
     * chain of constants would multiply that on the stack */
    int expr_depth;
    bool too_deep_reported;
} ConstEnv;

/* the most instances (product of all cluster dimensions) an arch may have */
#define SEMA_MAX_INSTANCES ((int64_t)1 << 32)
/* Is there an error inside `span` already (a syntax error the parser
 * recovered from by dropping a part)?  Checks whose findings could be
 * caused by the dropped part then stay quiet. */
bool span_has_errors(const DiagSink *diags, Span span);
/* How many diagnostics span_has_errors and span_has_syntax_errors have
 * looked at in this process: the unit test of the diagnostics' cost reads
 * it to see that it grows linearly with a file's warnings. */
extern long diag_errors_examined;
/* Is there a lexical or syntax error (E01xx) inside `span`: did the
 * parser drop part of it? */
bool span_has_syntax_errors(const DiagSink *diags, Span span);
/* A `use` found no file (E0203): an unknown global name may be defined
 * there, so it is not reported again. */
bool module_missing(const DiagSink *diags);

/* Evaluates a constant expression; reports errors and returns VK_ERROR. */
Value const_eval(ConstEnv *env, const Expr *e);
/* Evaluates every const of every module in order (reports once). */
void const_eval_all(ConstEnv *env, Module **modules, int module_count);
/* Evaluates an integer: reports a non-integer as E0216.  `what` names the
 * thing for the message ("parameter `M`").  False on error. */
bool const_eval_int(ConstEnv *env, const Expr *e, Subject what, int64_t *out);
/* The source text of a span, for quoting in messages. */
const char *span_text(Arena *arena, const SourceManager *sm, Span span);
/* A value for people: "4", "0.5", "3.35 TB/s" (0 in the SI unit). */
const char *value_text(Arena *a, Value v);
/* The kind of value a parameter with default `v` takes: "a bandwidth (such
 * as 64 GB/s)", "an integer", "a number". */
const char *value_kind_text(Arena *a, Value v);
/* Can `got` stand where the default `want` stood: a quantity of the same
 * dimension, an integer for an integer, a number for a number. */
bool value_fits(Value want, Value got);
/* "an integer", "a real number", "a size (2 MiB)" ... */
const char *value_describe(Arena *arena, Value v);

/* ------------------------------------------------------------- checkers */

typedef struct OpCacheEntry {
    const Decl *decl;
    bool structure_checked, structure_ok;
    /* the op had errors before it was checked (the parser's): decided once,
     * so that the checker's own diagnostics do not count as damage later */
    bool damage_known, parse_damaged;
    /* the structure check_op_structure built (indices, tensors, statements
     * without extents): every instantiation copies what it binds from it
     * instead of building the op again */
    struct OpBuild *structure;
    int64_t *values; /* the parameter values of `op`, when instantiated */
    IrOp *op;        /* NULL when that instantiation failed */
    bool instantiated;
    struct OpCacheEntry *next; /* further instantiations of the same op */
    /* the ops derived from it (derive.c), once asked for */
    struct DerivedOp *derived;
} OpCacheEntry;

/* An op derived from another for a phase and a recomputation choice
 * (NULL decl: the derivation failed, and was reported). */
typedef struct DerivedOp {
    Phase phase;
    const bool *recompute; /* [forward statement], NULL for none */
    bool every;            /* `recompute checkpoint`: each marked one, read or not */
    const Decl *decl;
    struct DerivedOp *next;
} DerivedOp;

typedef struct ArchCacheEntry {
    const Decl *decl;
    IrArch *arch;    /* NULL when it had errors */
    IrArch *partial; /* its names when it had errors (or arch), else NULL */
    /* further instantiations at other parameter values (the first entry
     * is the defaults'), chained */
    Value *values;
    int value_count;
    struct ArchCacheEntry *next;
} ArchCacheEntry;

/* Caches keyed by declaration: an open-addressing table of slots, so that
 * a file with thousands of ops and archs is checked in linear time. */
typedef struct DeclCacheSlot {
    const Decl *decl;
    void *entry; /* the checker's record for that declaration */
} DeclCacheSlot;

typedef struct DeclCache {
    DeclCacheSlot *slots;
    int count, cap; /* cap is a power of two */
} DeclCache;

/* The slot of `decl`, created empty (entry NULL) when it has none. */
DeclCacheSlot *decl_cache_slot(Arena *arena, DeclCache *c, const Decl *decl);
/* An empty cache with room for `count` declarations without growing. */
void decl_cache_reserve(Arena *arena, DeclCache *c, int count);

typedef struct Sema {
    Program *prog;
    Arena *arena;
    DiagSink *diags;
    Globals *globals;
    ConstEnv env;                           /* global scope */
    DeclCache op_cache;                     /* entry: OpCacheEntry*, chained by instantiation */
    DeclCache arch_cache;                   /* entry: ArchCacheEntry* */
    PtrVec archs, mappings, sweeps, models; /* what Program lists, grown by doubling */
    IrArch *partial_arch;                   /* check_arch's arch with errors, names only */
    /* `cmtc sweep --set`: axes replacing those of the same name */
    SweepAxisDecl *set_axes;
    int set_axis_count;
} Sema;

/* Functions the op checker knows and their argument counts. */
int op_function_arity(Name fn); /* -1 when unknown */
extern const char *const op_function_names[];
extern const int op_function_count;

/* Checks the structure of an op (no parameter values needed); reports into
 * `diags`; true when it is sound enough to instantiate. */
bool check_op_structure(Sema *s, const Decl *op_decl);
/* Instantiates with known parameter values.  Structural errors go to a
 * scratch sink (they were reported by check_op_structure); value errors
 * (dimensions, extents) to s->diags, with a label at use_site when it is
 * not SPAN_NONE. */
IrOp *op_instantiate(Sema *s, const Decl *op_decl, const int64_t *values, Span use_site);

/* Parameter values of an op at a use: bindings, then defaults.  Reports
 * unknown, repeated and missing parameters.  *complete (when not NULL) is
 * set when every parameter got a value even if the call failed: an unknown
 * or repeated binding is an error, but the op can still be instantiated and
 * the rest of the use checked. */
bool op_bind_params(Sema *s, const Decl *op_decl, const ParamBinding *bindings, int binding_count,
                    Span use_site, int64_t *values, bool *complete);

/* The first cache record of an op (its structure check, and what was
 * derived from it). */
OpCacheEntry *op_cache_entry(Sema *s, const Decl *op_decl);

/* The op a mapping of `op_decl` in `phase` maps (docs/language.md 5.8):
 * for PHASE_BACKWARD one whose statements compute the gradient of every
 * `in` tensor from the gradient of every `out` tensor; for PHASE_TRAIN the
 * forward statements, those gradients and the weight update of every
 * `param`.  recompute marks (per forward statement, NULL for none) the
 * statements the backward pass recomputes instead of reading them kept:
 * those a gradient reads (and what they read), or with `every` each one
 * marked, as activation checkpointing runs the forward pass again whole.
 * Derived once per choice and checked; NULL with a diagnostic when it
 * cannot be (a construct without a gradient). */
const Decl *derive_op(Sema *s, const Decl *op_decl, Phase phase, const bool *recompute, bool every,
                      Span use_site);

/* The parameters an arch has in scope, its parents' first, with the
 * values bound (docs/language.md 4.6). */
typedef struct ArchParams {
    Name *names;
    Value *values;
    const char **texts; /* each value as written, for people */
    int count;
} ArchParams;

/* Binds an arch's parameters: `bindings` (at use_site, NULL for none)
 * first, then the parent bindings of the arch and its parents (the most
 * derived first), then the defaults.  False (reported) on a binding to no
 * parameter, a value of the wrong dimension or a parameter without one. */
bool arch_bind_params(Sema *s, const Decl *arch_decl, const struct ParamBinding *bindings,
                      int binding_count, Span use_site, ArchParams *out);
/* Whether every parameter of the arch and its parents has a default. */
bool arch_has_defaults(Sema *s, const Decl *arch_decl);
/* Builds the arch at the given parameter values (NULL: it has none). */
IrArch *check_arch(Sema *s, const Decl *arch_decl, const ArchParams *params);
IrMapping *check_mapping(Sema *s, const Decl *mapping_decl);
/* Checks a sweep and lists its IR in the program (check_sweep.c). */
void check_sweep(Sema *s, const Decl *sweep_decl);
/* A `model` of the root file, once its mappings are checked (check_model.c). */
void check_model(Sema *s, const Decl *model_decl);
/* The arch of a mapping or a parent: the default instantiation when
 * there are no bindings, else the one for the bound values (cached);
 * NULL with the binding's mistake reported. */
IrArch *sema_arch_bound(Sema *s, const Decl *arch_decl, const struct ParamBinding *bindings,
                        int binding_count, Span use_site);

/* The IrArch built for an arch decl (NULL when it had errors). */
IrArch *sema_arch_for(Sema *s, const Decl *arch_decl);
/* An arch with errors as far as it was built: its memories, levels and
 * dims by name (their values unchecked), for the names of a mapping;
 * NULL when it could not be built at all. */
IrArch *sema_arch_names(Sema *s, const Decl *arch_decl);
/* The statements, tensors and indices an op declares, by name (no
 * values), checked quietly: for the names of a mapping of an op with
 * errors. */
IrOp *op_names(Sema *s, const Decl *op_decl);
/* The default instantiation of an op, or a fresh one for these values. */
IrOp *sema_op_for(Sema *s, const Decl *op_decl, const int64_t *values, Span use_site);

/* Records in each statement of `op` what later stages read of it as
 * written (IrStmt.target, reads, text), from the op's declaration. */
void record_stmt_syntax(Arena *arena, IrOp *op, const OpDecl *od);

/* Calls fn on every leaf of e that reads something (a tensor access or a
 * bare name: a scalar tensor, a parameter or a const), in source order. */
void expr_for_each_read(const Expr *e, void (*fn)(const Expr *leaf, void *ctx), void *ctx);

/* Sema for a Program already checked (rebuilds the global table). */
Sema *sema_for_program(Program *p, DiagSink *diags);

#endif
