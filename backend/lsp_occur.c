/* lsp_occur.c — every word of a module and what it names: the one walk of
 * the AST behind references, rename, document highlight and semantic
 * tokens.  A word is classified by where it stands (a tile entry's first
 * word is an index, `at L` a level), and resolved to the declaration it
 * belongs to, so that two files checked in different programs agree on
 * what a name means (compared by kind, declaring file and name). */
#include "backend/lsp.h"

#include <string.h>

LspScope lsp_doc_scope(const LspDoc *d) {
    if (d->prog && d->prog->module_count > 0)
        return (LspScope){d->prog->modules, d->prog->module_count};
    if (d->module) return (LspScope){(Module *const *)&d->module, 1};
    return (LspScope){NULL, 0};
}

const Decl *lsp_find_global(LspScope sc, Name name, int kind) {
    for (int i = 0; i < sc.count; i++)
        for (int k = 0; sc.mods[i] && k < sc.mods[i]->decl_count; k++) {
            const Decl *x = sc.mods[i]->decls[k];
            if (x->kind != DK_USE && x->kind != DK_ERROR && x->name.name == name &&
                (kind < 0 || (int)x->kind == kind))
                return x;
        }
    return NULL;
}

/* How deep `arch a : b` chains are followed (a cycle is an error the
 * checker reports; this only has to stop). */
#define ARCH_CHAIN_MAX 16

const ArchItem *lsp_find_arch_item(LspScope sc, const Decl *arch, Name name, const Decl **owner) {
    for (int depth = 0; arch && arch->kind == DK_ARCH && depth <= ARCH_CHAIN_MAX; depth++) {
        for (int i = 0; i < arch->u.arch.item_count; i++) {
            const ArchItem *it = arch->u.arch.items[i];
            if ((it->kind == AI_MEMORY || it->kind == AI_COMPUTE || it->kind == AI_CLUSTER) &&
                it->name.name == name) {
                if (owner) *owner = arch;
                return it;
            }
        }
        arch = arch->u.arch.parent.name ? lsp_find_global(sc, arch->u.arch.parent.name, DK_ARCH)
                                        : NULL;
    }
    return NULL;
}

const ClusterDimDecl *lsp_find_cluster_dim(LspScope sc, const Decl *arch, Name name,
                                           const ArchItem **item, const Decl **owner) {
    for (int depth = 0; arch && arch->kind == DK_ARCH && depth <= ARCH_CHAIN_MAX; depth++) {
        for (int i = 0; i < arch->u.arch.item_count; i++) {
            const ArchItem *it = arch->u.arch.items[i];
            if (it->kind != AI_CLUSTER) continue;
            for (int k = 0; k < it->dim_count; k++)
                if (it->dims[k].name.name == name) {
                    if (item) *item = it;
                    if (owner) *owner = arch;
                    return &it->dims[k];
                }
        }
        arch = arch->u.arch.parent.name ? lsp_find_global(sc, arch->u.arch.parent.name, DK_ARCH)
                                        : NULL;
    }
    return NULL;
}

const SourceFile *lsp_scope_file(LspScope sc, int file_id) {
    for (int i = 0; i < sc.count; i++)
        if (sc.mods[i] && sc.mods[i]->file && sc.mods[i]->file->id == file_id)
            return sc.mods[i]->file;
    return NULL;
}

const char *lsp_scope_path(LspScope sc, int file_id) {
    const SourceFile *f = lsp_scope_file(sc, file_id);
    return f ? f->path : NULL;
}

bool lsp_reserved_word(const char *w, size_t n) {
    /* the scanner's keywords (frontend/util/vocab.h) */
    static const char *const words[] = {
        CMT_DECL_KEYWORDS(VOCAB_WORD) CMT_OP_KEYWORDS(VOCAB_WORD) CMT_ARCH_KEYWORDS(VOCAB_WORD)
            CMT_MAPPING_ITEMS(VOCAB_NAME) CMT_MAPPING_KEYWORDS(VOCAB_WORD)};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strlen(words[i]) == n && memcmp(words[i], w, n) == 0) return true;
    return false;
}

/* ------------------------------------------------------------- the walk */

typedef struct Walk {
    LspScope sc;
    const Module *m;
    const Decl *in_decl;
    const Decl *op;   /* the op whose names are in scope, or NULL */
    const Decl *arch; /* the arch a mapping is on, or NULL */
    LspOccurFn fn;
    void *ctx;
} Walk;

static void emit(Walk *w, LspSym sym, Ident id, const Decl *owner, bool decl, bool write) {
    if (id.span.file < 0) return;
    if (id.hole) {
        LspOccur o = {LSYM_HOLE, NULL, id.span, NULL, w->in_decl, false, false};
        w->fn(w->ctx, &o);
        return;
    }
    if (!id.name) return;
    LspOccur o = {sym, id.name, id.span, owner, w->in_decl, decl, write};
    w->fn(w->ctx, &o);
}

static void emit_span(Walk *w, LspSym sym, Span sp) {
    if (sp.file < 0) return;
    LspOccur o = {sym, NULL, sp, NULL, w->in_decl, false, false};
    w->fn(w->ctx, &o);
}

static bool op_declares_param(const Decl *op, Name name) {
    for (int i = 0; op && i < op->u.op.param_count; i++)
        if (op->u.op.params[i].name.name == name) return true;
    return false;
}

static LspSym sym_of_decl(const Decl *x) {
    switch (x->kind) {
    case DK_OP: return LSYM_OP;
    case DK_ARCH: return LSYM_ARCH;
    case DK_MAPPING: return LSYM_MAPPING;
    default: return LSYM_CONST;
    }
}

/* A reference to a global of the given kind (any when kind < 0). */
static void emit_global(Walk *w, Ident id, int kind) {
    const Decl *g = id.name ? lsp_find_global(w->sc, id.name, kind) : NULL;
    LspSym sym = g                  ? sym_of_decl(g)
                 : kind == DK_OP    ? LSYM_OP
                 : kind == DK_ARCH  ? LSYM_ARCH
                 : kind == DK_CONST ? LSYM_CONST
                                    : LSYM_MAPPING;
    emit(w, sym, id, g, false, false);
}

/* (The parser bounds the depth of every expression this recurses into.) */
static void walk_expr(Walk *w, const Expr *e) {
    if (!e) return;
    switch (e->kind) {
    case EX_INT:
    case EX_REAL:
    case EX_QUANTITY: emit_span(w, LSYM_NUMBER, e->span); break;
    case EX_HOLE: emit_span(w, LSYM_HOLE, e->span); break;
    case EX_NAME: {
        Ident id = {e->u.name, e->span, false};
        if (op_declares_param(w->op, e->u.name))
            emit(w, LSYM_PARAM, id, w->op, false, false);
        else if (lsp_find_global(w->sc, e->u.name, -1))
            emit_global(w, id, -1);
        break;
    }
    case EX_ACCESS:
        emit(w, LSYM_TENSOR, e->u.access.tensor, w->op, false, false);
        for (int i = 0; i < e->u.access.indices.count; i++)
            emit(w, LSYM_INDEX, e->u.access.indices.items[i], w->op, false, false);
        break;
    case EX_UNARY: walk_expr(w, e->u.unary.operand); break;
    case EX_BINARY:
        walk_expr(w, e->u.binary.lhs);
        walk_expr(w, e->u.binary.rhs);
        break;
    case EX_CALL:
        emit(w, LSYM_FUNCTION, e->u.call.fn, NULL, false, false);
        for (int i = 0; i < e->u.call.arg_count; i++) walk_expr(w, e->u.call.args[i]);
        break;
    case EX_REDUCE:
        emit(w, LSYM_FUNCTION, e->u.reduce.fn, NULL, false, false);
        for (int i = 0; i < e->u.reduce.indices.count; i++)
            emit(w, LSYM_INDEX, e->u.reduce.indices.items[i], w->op, false, false);
        walk_expr(w, e->u.reduce.body);
        break;
    case EX_ERROR: break;
    }
}

static void walk_attrs(Walk *w, AttrList body) {
    for (int i = 0; i < body.count; i++) {
        const Attr *a = body.items[i];
        emit(w, LSYM_ATTR, a->key, NULL, false, false);
        for (int k = 0; k < a->value_count; k++) walk_expr(w, a->values[k]);
        for (int k = 0; k < a->pair_count; k++) {
            emit(w, LSYM_FUNCTION, a->pairs[k].key, NULL, false, false);
            walk_expr(w, a->pairs[k].value);
        }
    }
}

static bool op_has_tensor(const Decl *op, Name name) {
    for (int i = 0; i < op->u.op.tensor_count; i++)
        if (op->u.op.tensors[i]->name.name == name) return true;
    return false;
}

static void walk_op(Walk *w, const Decl *x) {
    const OpDecl *op = &x->u.op;
    w->op = x;
    for (int i = 0; i < op->param_count; i++) {
        emit(w, LSYM_PARAM, op->params[i].name, x, true, false);
        walk_expr(w, op->params[i].default_value);
    }
    for (int i = 0; i < op->tensor_count; i++) {
        const TensorDecl *t = op->tensors[i];
        emit(w, LSYM_TENSOR, t->name, x, true, false);
        for (int k = 0; k < t->dim_count; k++) walk_expr(w, t->dims[k]);
        walk_expr(w, t->capacity); /* `route ... capacity F` */
        if (t->type != ET_NONE && t->type_span.file >= 0)
            emit(w, LSYM_VALUE, (Ident){intern_cstr(elem_type_name(t->type)), t->type_span, false},
                 NULL, false, false);
    }
    for (int i = 0; i < op->stmt_count; i++) {
        const Stmt *s = op->stmts[i];
        /* a statement's target is declared there unless a `var` or `out`
         * line declared it */
        emit(w, LSYM_TENSOR, s->target, x, !op_has_tensor(x, s->target.name), true);
        for (int k = 0; k < s->indices.count; k++)
            emit(w, LSYM_INDEX, s->indices.items[k], x, false, false);
        walk_expr(w, s->rhs);
        if (s->where) {
            /* `where n <= m + W`: two indices, the offset a value */
            emit(w, LSYM_INDEX, s->where->lhs, x, false, false);
            const Expr *r = s->where->rhs;
            if (r && r->kind == EX_BINARY) {
                if (r->u.binary.lhs->kind == EX_NAME)
                    emit(w, LSYM_INDEX,
                         (Ident){r->u.binary.lhs->u.name, r->u.binary.lhs->span, false}, x, false,
                         false);
                walk_expr(w, r->u.binary.rhs);
            } else if (r && r->kind == EX_NAME) {
                emit(w, LSYM_INDEX, (Ident){r->u.name, r->span, false}, x, false, false);
            } else {
                walk_expr(w, r);
            }
        }
        /* `by R`: a use of the route R */
        if (s->by.name) emit(w, LSYM_TENSOR, s->by, x, false, false);
    }
}

/* The arch whose declaration of `name` (a level, unit or cluster; with
 * `dim`, a cluster dimension) the others override: the farthest ancestor
 * of `arch` that declares it.  An override in a derived arch (`arch big :
 * base { memory SRAM { capacity 4 MiB; } }`) is the same symbol as the
 * base's, so that references and renames take both (NULL: none). */
static const Decl *declaring_root(LspScope sc, const Decl *arch, Name name, bool dim) {
    const Decl *root = NULL;
    for (int depth = 0; arch && arch->kind == DK_ARCH && depth <= ARCH_CHAIN_MAX; depth++) {
        const Decl *owner = NULL;
        if (dim ? lsp_find_cluster_dim(sc, arch, name, NULL, &owner) != NULL
                : lsp_find_arch_item(sc, arch, name, &owner) != NULL)
            root = owner;
        else
            break;
        arch = owner->u.arch.parent.name ? lsp_find_global(sc, owner->u.arch.parent.name, DK_ARCH)
                                         : NULL;
    }
    return root;
}

static void walk_arch(Walk *w, const Decl *x) {
    emit_global(w, x->u.arch.parent, DK_ARCH);
    for (int i = 0; i < x->u.arch.item_count; i++) {
        const ArchItem *it = x->u.arch.items[i];
        switch (it->kind) {
        case AI_ERROR: break;
        case AI_ATTR:
            if (it->attr) walk_attrs(w, (AttrList){(Attr **)&it->attr, 1});
            break;
        case AI_MEMORY:
        case AI_COMPUTE:
        case AI_CLUSTER: {
            LspSym sym = it->kind == AI_MEMORY    ? LSYM_LEVEL
                         : it->kind == AI_COMPUTE ? LSYM_UNIT
                                                  : LSYM_CLUSTER;
            const Decl *root = it->name.name ? declaring_root(w->sc, x, it->name.name, false) : x;
            emit(w, sym, it->name, root ? root : x, true, false);
            emit(w, LSYM_VALUE, it->role, NULL, false, false);
            for (int k = 0; k < it->dim_count; k++) {
                const Decl *droot = it->dims[k].name.name
                                        ? declaring_root(w->sc, x, it->dims[k].name.name, true)
                                        : x;
                emit(w, LSYM_DIM, it->dims[k].name, droot ? droot : x, true, false);
                walk_expr(w, it->dims[k].size);
                emit(w, LSYM_VALUE, it->dims[k].kind, NULL, false, false);
            }
            emit(w, LSYM_VALUE, it->unit_kind, NULL, false, false);
            walk_attrs(w, it->body);
            break;
        }
        }
    }
}

static void emit_level(Walk *w, Ident id) {
    const Decl *owner = id.name ? declaring_root(w->sc, w->arch, id.name, false) : NULL;
    emit(w, LSYM_LEVEL, id, owner, false, false);
}

static void emit_dim(Walk *w, Ident id) {
    const Decl *owner = id.name ? declaring_root(w->sc, w->arch, id.name, true) : NULL;
    emit(w, LSYM_DIM, id, owner, false, false);
}

/* The `?` of `spatial ?;`, `fuse ?;` or `order L: ?;`: the last in the item. */
static void emit_whole_hole(Walk *w, const MapItem *it) {
    const SourceFile *f = w->m->file;
    for (uint32_t i = it->span.end; f && i > it->span.start && i <= f->len; i--)
        if (f->text[i - 1] == '?') {
            emit_span(w, LSYM_HOLE, (Span){it->span.file, i - 1, i});
            return;
        }
}

static void walk_mapping(Walk *w, const Decl *x) {
    const MappingDecl *md = &x->u.mapping;
    emit_global(w, md->op, DK_OP);
    emit_global(w, md->arch, DK_ARCH);
    for (int i = 0; i < md->arch_binding_count; i++) walk_expr(w, md->arch_bindings[i].value);
    w->op = md->op.name ? lsp_find_global(w->sc, md->op.name, DK_OP) : NULL;
    w->arch = md->arch.name ? lsp_find_global(w->sc, md->arch.name, DK_ARCH) : NULL;
    for (int i = 0; i < md->binding_count; i++) {
        const Decl *op = w->op;
        emit(w, LSYM_PARAM, md->bindings[i].name,
             op_declares_param(op, md->bindings[i].name.name) ? op : NULL, false, false);
        w->op = NULL; /* a binding's value is in the file's scope */
        walk_expr(w, md->bindings[i].value);
        w->op = op;
    }
    for (int i = 0; i < md->item_count; i++) {
        const MapItem *it = md->items[i];
        if (it->kind == MI_ERROR) continue;
        for (int k = 0; k < it->stmts.count; k++)
            emit(w, LSYM_TENSOR, it->stmts.items[k], w->op, false, false);
        for (int k = 0; k < it->assign_count; k++) {
            emit(w, LSYM_INDEX, it->assigns[k].index, w->op, false, false);
            for (int j = 1; j < it->assigns[k].joint.count; j++) /* `(m, n) -> sm` */
                emit(w, LSYM_INDEX, it->assigns[k].joint.items[j], w->op, false, false);
            for (int j = 0; j < it->assigns[k].dims.count; j++)
                emit_dim(w, it->assigns[k].dims.items[j]);
        }
        if (it->level.name || it->level.hole) emit_level(w, it->level);
        for (int k = 0; k < it->tile_count; k++) {
            emit(w, LSYM_INDEX, it->tiles[k].index, w->op, false, false);
            const Decl *op = w->op;
            w->op = NULL;
            walk_expr(w, it->tiles[k].size);
            w->op = op;
        }
        for (int k = 0; k < it->order.count; k++)
            emit(w, LSYM_INDEX, it->order.items[k], w->op, false, false);
        emit(w, LSYM_VALUE, it->value, NULL, false, false);
        if (it->reserve_given) { /* `reserve R of U` */
            emit_span(w, LSYM_VALUE, it->reserve_word_span);
            emit_span(w, LSYM_NUMBER, it->reserve_units_span);
            emit_span(w, LSYM_VALUE, it->reserve_of_span);
            emit_span(w, LSYM_NUMBER, it->reserve_total_span);
        }
        if (it->count) {
            const Decl *op = w->op;
            w->op = NULL;
            walk_expr(w, it->count);
            w->op = op;
        }
        if (it->whole_hole) emit_whole_hole(w, it);
    }
}

void lsp_occurrences(LspScope sc, const Module *m, LspOccurFn fn, void *ctx) {
    for (int i = 0; m && i < m->decl_count; i++) {
        const Decl *x = m->decls[i];
        Walk w = {sc, m, x, NULL, NULL, fn, ctx};
        switch (x->kind) {
        case DK_ERROR: break;
        case DK_USE: emit_span(&w, LSYM_USE, x->name.span); break;
        case DK_CONST:
            emit(&w, LSYM_CONST, x->name, x, true, false);
            walk_expr(&w, x->u.const_value);
            break;
        case DK_OP:
            emit(&w, LSYM_OP, x->name, x, true, false);
            walk_op(&w, x);
            break;
        case DK_ARCH:
            emit(&w, LSYM_ARCH, x->name, x, true, false);
            walk_arch(&w, x);
            break;
        case DK_MAPPING:
            emit(&w, LSYM_MAPPING, x->name, x, true, false);
            walk_mapping(&w, x);
            break;
        case DK_SWEEP:
            for (int a = 0; a < x->u.sweep.axis_count; a++) {
                const SweepAxisDecl *ax = &x->u.sweep.axes[a];
                for (int k = 0; k < ax->value_count; k++) {
                    const Expr *v = ax->values[k];
                    if (ax->kind != SA_PARAM && v->kind == EX_NAME)
                        emit_global(&w, (Ident){.name = v->u.name, .span = v->span},
                                    ax->kind == SA_ARCH ? DK_ARCH : DK_MAPPING);
                    else if (ax->kind == SA_PARAM)
                        walk_expr(&w, v);
                }
            }
            break;
        case DK_MODEL:
            /* its parts name mappings (the role words are keywords here) */
            for (int k = 0; k < x->u.model.part_count; k++) {
                const ModelPart *part = &x->u.model.parts[k];
                if (part->role.name) emit_span(&w, LSYM_VALUE, part->role.span);
                if (part->mapping.name) emit_global(&w, part->mapping, DK_MAPPING);
            }
            break;
        }
    }
}

typedef struct At {
    uint32_t offset;
    bool found;
    LspOccur o;
} At;

static void at_one(void *ctx, const LspOccur *o) {
    At *at = ctx;
    /* the first word touching the offset wins (a cursor just after a word
     * is on it, as editors place it after a double click) */
    if (!at->found && o->span.start <= at->offset && at->offset <= o->span.end) {
        at->found = true;
        at->o = *o;
    }
}

bool lsp_occurrence_at(LspScope sc, const Module *m, uint32_t offset, LspOccur *out) {
    At at = {offset, false, {0}};
    for (int i = 0; m && i < m->decl_count && !at.found; i++) {
        const Decl *x = m->decls[i];
        if (offset < x->span.start || offset > x->span.end) continue;
        Module one = {m->file, (Decl **)&m->decls[i], 1, NULL, 0};
        lsp_occurrences(sc, &one, at_one, &at);
    }
    if (at.found) *out = at.o;
    return at.found;
}
