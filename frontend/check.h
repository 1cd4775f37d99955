/* check.h — the front end's API: parse a file and every file it uses,
 * resolve names, check ops, archs and mappings and build their IR.  What
 * later layers see of the syntax tree is its modules, opaque (only the
 * front end and the text tools in backend/ include frontend/ast.h). */
#ifndef CMT_CHECK_H
#define CMT_CHECK_H

#include "ir/ir.h"

/* Opaque here (C11 allows the typedefs again in frontend/ast.h). */
typedef struct Module Module;
typedef struct Decl Decl;
typedef struct ParamBinding ParamBinding;

/* --------------------------------------------------------- the program */

/* Everything checked in one compile: every module read, the global symbol
 * table, and the IR of each op (at default parameters), arch and mapping. */
typedef struct Program {
    Arena *arena;
    SourceManager *sources;
    DiagSink *diags;
    Module **modules; /* the root file first, then every used file */
    int module_count;
    const IrArch **archs; /* the checked IR is read-only after check_program */
    int arch_count;
    const IrMapping **mappings; /* in source order of the root file */
    int mapping_count;
    const IrSweep **sweeps; /* the root file's sweeps that checked */
    int sweep_count;
    const IrModel **models; /* the root file's models that checked */
    int model_count;
} Program;

typedef struct CheckOptions {
    const char *const *include_dirs; /* -I */
    int include_count;
    const char *stdlib_dir; /* installed standard library */
    /* Optional: text of open, unsaved buffers (language server) keyed by
     * absolute path; NULL when none. */
    const char *(*overlay)(void *ctx, const char *path, size_t *len);
    void *overlay_ctx;
    /* `cmtc sweep --set 'AXIS = VALUES'`: axes that replace (or join)
     * those of every sweep of the root file */
    const char *const *sweep_sets;
    int sweep_set_count;
} CheckOptions;

/* Parses `root` and every file it uses, resolves names, checks ops, archs
 * and mappings, and builds their IR.  Diagnostics go to `diags`. */
Program *check_program(Arena *arena, SourceManager *sm, DiagSink *diags, SourceFile *root,
                       const CheckOptions *opts);

/* Only the parse and module resolution of check_program: root and every
 * file it uses, as modules (no names resolved, no IR).  For the language
 * server's search of a workspace, where only the syntax is wanted. */
Program *load_program(Arena *arena, SourceManager *sm, DiagSink *diags, SourceFile *root,
                      const CheckOptions *opts);

/* Instantiates an op with parameter values (NULL bindings = defaults).
 * Reports unbound parameters and index extent disagreements at `use_site`.
 * Returns NULL on error. */
IrOp *ir_instantiate_op(Program *p, const Decl *op_decl, const ParamBinding *bindings,
                        int binding_count, Span use_site);

/* The names of every mapping the root file declares, checked or not (in
 * `a`; *count of them): what `-m` and `--baseline` may name. */
const char **program_mapping_names(const Program *p, Arena *a, int *count);

/* The op derived from an op declaration for a phase and a recomputation
 * choice (docs/language.md 5.8; recompute: a mark per forward statement,
 * NULL for none), NULL (with a diagnostic in p->diags) when it cannot be
 * derived. */
const Decl *program_derived_op(Program *p, const Decl *op_decl, Phase phase, const bool *recompute);

/* The mapping of point `point` of a sweep: the mapping its axes name, on
 * the arch they name, with the parameters they bind (docs/language.md
 * 5.11), checked; NULL with its diagnostics in `diags` when it does not
 * check. */
IrMapping *program_sweep_point(Program *p, const IrSweep *sw, int64_t point, DiagSink *diags);

/* The declaration whose span is `span` (an IrOp's, IrArch's or
 * IrMapping's `span`) among the modules of `p`, or NULL: how the text tools
 * go from the IR back to the syntax they edit or show. */
const Decl *program_decl_at(const Program *p, Span span);

#endif
