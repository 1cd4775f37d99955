/* lsp_features.c — what the language server answers about one checked
 * document: hover, go to definition, document symbols, completion,
 * formatting and inlay hints.  Everything works from the document's AST
 * (doc->module and the modules it uses) and, where there is one, its IR
 * (doc->prog); allocations go to the document version's arena, and
 * per-version lookups (op instances, mapping costs) are cached there. */
#include "backend/fmt.h"
#include "backend/lsp.h"
#include "backend/emit.h"
#include "passes/optimize/optimize.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <string.h>

static bool same_span(Span a, Span b) {
    return a.file == b.file && a.start == b.start && a.end == b.end;
}

/* The declaration an IR object was checked from. */
static const Decl *decl_of(LspDoc *d, Span span) {
    return program_decl_at(d->prog, span);
}

/* ----------------------------------------------------------- the cache */

typedef struct OpInfo {
    const Decl *decl;
    IrOp *op; /* default parameters, or the first mapping's; NULL if none */
    bool from_mapping;
} OpInfo;

typedef struct MapInfo {
    const IrMapping *m;
    bool lowered;
    Schedule *sched; /* lowered when complete, for statement costs */
    bool evaluated;
    EvalStatus status;
    EvalResult result;
    int key_state; /* 0: not computed; 1: key valid (clean, holes); 2: none */
    LspKey key;
} MapInfo;

typedef struct Cache {
    OpInfo *ops;
    int op_count, op_cap;
    MapInfo *maps;
    int map_count;
    bool consts_done;
    LspKey consts; /* every const of the program, part of each key */
    bool wanted_done;
    LspKey *wanted;
    int wanted_count;
} Cache;

static Cache *cache_of(LspDoc *d) {
    if (!d->cache) {
        Cache *c = ARENA_NEW(&d->arena, Cache);
        if (d->prog && d->prog->mapping_count > 0) {
            c->maps = ARENA_ARRAY(&d->arena, MapInfo, d->prog->mapping_count);
            c->map_count = d->prog->mapping_count;
            for (int i = 0; i < c->map_count; i++) c->maps[i].m = d->prog->mappings[i];
        }
        d->cache = c;
    }
    return d->cache;
}

/* The IR of an op for hover: its default instance, else the instance of
 * the first mapping of it. */
static IrOp *op_ir(LspDoc *d, const Decl *decl, bool *from_mapping) {
    Cache *c = cache_of(d);
    *from_mapping = false;
    if (!d->prog || !decl || decl->kind != DK_OP) return NULL;
    for (int i = 0; i < c->op_count; i++)
        if (c->ops[i].decl == decl) {
            *from_mapping = c->ops[i].from_mapping;
            return c->ops[i].op;
        }
    /* instantiation reports into the program's sink: keep those quiet,
     * they were published (or do not apply) already */
    DiagSink quiet, *saved = d->prog->diags;
    diags_init(&quiet, &d->arena);
    d->prog->diags = &quiet;
    IrOp *op = NULL;
    bool param_defaults = true;
    for (int i = 0; i < decl->u.op.param_count; i++)
        if (!decl->u.op.params[i].default_value) param_defaults = false;
    if (param_defaults) op = ir_instantiate_op(d->prog, decl, NULL, 0, SPAN_NONE);
    d->prog->diags = saved;
    bool fm = false;
    if (!op)
        for (int i = 0; i < d->prog->mapping_count && !op; i++) {
            const IrMapping *m = d->prog->mappings[i];
            if (m && m->op && same_span(m->op->span, decl->span)) {
                op = m->op;
                fm = true;
            }
        }
    if (c->op_count == c->op_cap) {
        int cap = c->op_cap ? 2 * c->op_cap : 8;
        c->ops = arena_realloc(&d->arena, c->ops, sizeof(OpInfo) * (size_t)c->op_cap,
                               sizeof(OpInfo) * (size_t)cap);
        c->op_cap = cap;
    }
    c->ops[c->op_count++] = (OpInfo){decl, op, fm};
    *from_mapping = fm;
    return op;
}

/* The cost of a complete mapping (NULL while it has holes). */
static const EvalResult *map_eval(LspDoc *d, const IrMapping *m) {
    Cache *c = cache_of(d);
    for (int i = 0; i < c->map_count; i++) {
        if (c->maps[i].m != m) continue;
        if (!c->maps[i].evaluated && m->hole_count == 0 && m->op && m->arch) {
            c->maps[i].evaluated = true;
            c->maps[i].status = evaluate_mapping(m, NULL, &c->maps[i].result);
        }
        if (!c->maps[i].evaluated) return NULL;
        return c->maps[i].status == EVAL_OK ? &c->maps[i].result : NULL;
    }
    return NULL;
}

/* The lowered schedule of a complete mapping (NULL while it has holes). */
static const Schedule *map_schedule(LspDoc *d, const IrMapping *m) {
    Cache *c = cache_of(d);
    for (int i = 0; i < c->map_count; i++) {
        if (c->maps[i].m != m) continue;
        if (!c->maps[i].lowered && m->hole_count == 0 && m->op && m->arch) {
            c->maps[i].lowered = true;
            c->maps[i].sched = lower_mapping(&d->arena, m, false, NULL);
        }
        return c->maps[i].sched;
    }
    return NULL;
}

/* ------------------------------------------------ the optimizer's keys */

/* Two independent 64-bit hashes of the same bytes (FNV-1a and a
 * multiply-xorshift): 128 bits make a collision between two versions of
 * a mapping negligible. */
static void key_byte(LspKey *k, unsigned char c) {
    k->a = (k->a ^ c) * 0x100000001b3ull;
    k->b = (k->b + c + 1) * 0x9E3779B97F4A7C15ull;
    k->b ^= k->b >> 29;
}

static void key_str(LspKey *k, const char *s) {
    for (; s && *s; s++) key_byte(k, (unsigned char)*s);
    key_byte(k, 0);
}

static bool tight_char(char c) {
    return c && strchr(",;:()[]{}", c) != NULL;
}

/* Walks the code of text[start, end): comments are skipped, blanks
 * reduced to one space where they separate two words or operators (none
 * next to punctuation), strings kept as they are.  The code goes into *k
 * (when given) and the end offset of each `?` token into holes[0, max)
 * (when given); returns the number of `?` tokens. */
static int scan_code(const char *t, uint32_t start, uint32_t end, LspKey *k, uint32_t *holes,
                     int max) {
    int n = 0;
    char prev = 0;
    bool gap = false;
    uint32_t i = start;
    while (i < end) {
        char c = t[i];
        if (c == '/' && i + 1 < end && t[i + 1] == '/') {
            while (i < end && t[i] != '\n') i++;
            gap = true;
            continue;
        }
        if (c == '/' && i + 1 < end && t[i + 1] == '*') {
            i += 2;
            while (i + 1 < end && !(t[i] == '*' && t[i + 1] == '/')) i++;
            i = i + 2 <= end ? i + 2 : end;
            gap = true;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            gap = true;
            i++;
            continue;
        }
        if (k && gap && prev && !tight_char(prev) && !tight_char(c)) key_byte(k, ' ');
        gap = false;
        if (c == '"') {
            uint32_t j = i + 1;
            while (j < end && t[j] != '"' && t[j] != '\n') j++;
            if (j < end && t[j] == '"') j++;
            for (; i < j; i++)
                if (k) key_byte(k, (unsigned char)t[i]);
            prev = '"';
            continue;
        }
        if (c == '?') {
            if (holes && n < max) holes[n] = i + 1;
            n++;
        }
        if (k) key_byte(k, (unsigned char)c);
        prev = c;
        i++;
    }
    return n;
}

/* Adds the code of a declaration (in whichever file of d's program). */
static void key_decl(LspDoc *d, LspKey *k, const char *tag, const Decl *x) {
    key_str(k, tag);
    SourceFile *f = x ? sources_get(&d->sm, x->span.file) : NULL;
    if (!f || x->span.end > f->len || x->span.end < x->span.start) {
        key_str(k, "?missing");
        return;
    }
    scan_code(f->text, x->span.start, x->span.end, k, NULL, 0);
    key_byte(k, 0);
}

/* Whether an error of d's check lies in x (or has no place at all). */
static bool errors_in(LspDoc *d, const Decl *x) {
    for (int i = 0; i < d->diags.count; i++) {
        const Diag *g = d->diags.items[i];
        if (g->severity != SEV_ERROR) continue;
        if (g->span.file < 0) return true;
        if (x && g->span.file == x->span.file && g->span.start >= x->span.start &&
            g->span.start < x->span.end)
            return true;
    }
    return false;
}

static const Decl *find_global(LspDoc *d, Name name, int kind);

/* Computes the key of mapping i when it checks clean: no error in the
 * mapping, its op, its arch (and the archs it extends) or any const.
 * False when it does not qualify. */
static bool map_key(LspDoc *d, int i, LspKey *out) {
    Cache *c = cache_of(d);
    if (i < 0 || i >= c->map_count) return false;
    MapInfo *mi = &c->maps[i];
    if (mi->key_state == 0) {
        mi->key_state = 2;
        const IrMapping *m = mi->m;
        if (!m || !m->op || !m->arch || m->span.file != d->file->id) return false;
        const Decl *md = decl_of(d, m->span), *od = decl_of(d, m->op->span);
        const Decl *arch = decl_of(d, m->arch->span);
        if (!md || !od || !arch) return false;
        if (!c->consts_done) {
            c->consts_done = true;
            c->consts = (LspKey){0xcbf29ce484222325ull, 0x243F6A8885A308D3ull};
            bool bad = false;
            for (int mi2 = 0; d->prog && mi2 < d->prog->module_count; mi2++) {
                const Module *mod = d->prog->modules[mi2];
                for (int k = 0; mod && k < mod->decl_count; k++) {
                    const Decl *x = mod->decls[k];
                    if (x->kind != DK_CONST) continue;
                    key_decl(d, &c->consts, "const", x);
                    if (errors_in(d, x)) bad = true;
                }
            }
            if (bad) c->consts.a = c->consts.b = 0; /* 0: a const has an error */
        }
        if (c->consts.a == 0 && c->consts.b == 0) return false;
        if (errors_in(d, md) || errors_in(d, od)) return false;
        LspKey k = c->consts;
        key_decl(d, &k, "mapping", md);
        key_decl(d, &k, "op", od);
        for (int depth = 0; arch && depth < 16; depth++) {
            if (errors_in(d, arch)) return false;
            key_decl(d, &k, "arch", arch);
            arch =
                arch->u.arch.parent.name ? find_global(d, arch->u.arch.parent.name, DK_ARCH) : NULL;
        }
        mi->key = k;
        mi->key_state = 1;
    }
    if (mi->key_state != 1) return false;
    *out = mi->key;
    return true;
}

static int mapping_index(LspDoc *d, const IrMapping *m) {
    for (int i = 0; d->prog && i < d->prog->mapping_count; i++)
        if (d->prog->mappings[i] == m) return i;
    return -1;
}

/* The worker's answer for a mapping with holes of d, when there is one
 * and it found a complete mapping. */
static json_t *map_answer(LspServer *s, LspDoc *d, const IrMapping *m) {
    LspKey k;
    if (!s || !map_key(d, mapping_index(d, m), &k)) return NULL;
    json_t *ans = lsp_work_answer(s, k);
    return json_is_true(json_object_get(ans, "ok")) ? ans : NULL;
}

bool lsp_mapping_key(LspDoc *d, int i, LspKey *out) {
    return map_key(d, i, out);
}

int lsp_wanted_keys(LspDoc *d, const LspKey **out) {
    Cache *c = cache_of(d);
    if (!c->wanted_done) {
        c->wanted_done = true;
        c->wanted = ARENA_ARRAY(&d->arena, LspKey, c->map_count + 1);
        for (int i = 0; i < c->map_count; i++)
            if (map_key(d, i, &c->wanted[c->wanted_count])) c->wanted_count++;
    }
    *out = c->wanted;
    return c->wanted_count;
}

const IrMapping *lsp_mapping_by_key(LspDoc *d, LspKey key) {
    Cache *c = cache_of(d);
    for (int i = 0; i < c->map_count; i++) {
        LspKey k;
        if (map_key(d, i, &k) && k.a == key.a && k.b == key.b) return d->prog->mappings[i];
    }
    return NULL;
}

/* ------------------------------------------------------------ lookups */

static bool in_span(Span s, uint32_t off) {
    return s.file >= 0 && off >= s.start && off <= s.end;
}
static bool on_ident(Ident id, uint32_t off) {
    return id.name && in_span(id.span, off);
}

static const Decl *find_global(LspDoc *d, Name name, int kind) {
    return lsp_find_global(lsp_doc_scope(d), name, kind);
}

static const IrArch *arch_ir(LspDoc *d, const Decl *decl) {
    if (!d->prog || !decl) return NULL;
    for (int i = 0; i < d->prog->arch_count; i++)
        if (d->prog->archs[i] && same_span(d->prog->archs[i]->span, decl->span))
            return d->prog->archs[i];
    return NULL;
}

static const IrMapping *mapping_ir(LspDoc *d, const Decl *decl) {
    if (!d->prog || !decl) return NULL;
    for (int i = 0; i < d->prog->mapping_count; i++)
        if (d->prog->mappings[i] && same_span(d->prog->mappings[i]->span, decl->span))
            return d->prog->mappings[i];
    return NULL;
}

/* An arch item by name in the arch or the archs it extends. */
static const ArchItem *find_arch_item(LspDoc *d, const Decl *arch, Name name) {
    return lsp_find_arch_item(lsp_doc_scope(d), arch, name, NULL);
}

static const ClusterDimDecl *find_cluster_dim(LspDoc *d, const Decl *arch, Name name,
                                              const ArchItem **owner) {
    return lsp_find_cluster_dim(lsp_doc_scope(d), arch, name, owner, NULL);
}

static const TensorDecl *find_tensor_decl(const Decl *op, Name name) {
    for (int i = 0; i < op->u.op.tensor_count; i++)
        if (op->u.op.tensors[i]->name.name == name) return op->u.op.tensors[i];
    return NULL;
}

/* The checked mapping of a mapping declaration, or NULL. */
static const IrMapping *mapping_of_decl(const LspDoc *d, const Decl *mapping) {
    for (int i = 0; mapping && d->prog && i < d->prog->mapping_count; i++) {
        const IrMapping *m = d->prog->mappings[i];
        if (m && same_span(m->span, mapping->span)) return m;
    }
    return NULL;
}

/* The statement `name` that the compiler derived for a `phase backward`
 * or `phase train` mapping (its gradients, copies, updates), or -1. */
static int derived_stmt(const LspDoc *d, const Decl *mapping, Name name) {
    const IrMapping *m = mapping_of_decl(d, mapping);
    if (!m || !m->op || m->phase == PHASE_FORWARD) return -1;
    int st = ir_find_stmt(m->op, name);
    return st >= 0 && m->op->stmts[st].source ? st : -1;
}

static const Stmt *find_stmt(const Decl *op, Name name) {
    for (int i = 0; i < op->u.op.stmt_count; i++)
        if (op->u.op.stmts[i]->target.name == name) return op->u.op.stmts[i];
    return NULL;
}

static const Param *find_param(const Decl *op, Name name) {
    for (int i = 0; i < op->u.op.param_count; i++)
        if (op->u.op.params[i].name.name == name) return &op->u.op.params[i];
    return NULL;
}

/* (The parser bounds the depth of every expression this recurses into.) */
static bool expr_first_index(const Expr *e, Name name, Span *out) {
    if (!e) return false;
    switch (e->kind) {
    case EX_ACCESS:
        for (int i = 0; i < e->u.access.indices.count; i++)
            if (e->u.access.indices.items[i].name == name) {
                *out = e->u.access.indices.items[i].span;
                return true;
            }
        return false;
    case EX_UNARY: return expr_first_index(e->u.unary.operand, name, out);
    case EX_BINARY:
        return expr_first_index(e->u.binary.lhs, name, out) ||
               expr_first_index(e->u.binary.rhs, name, out);
    case EX_CALL:
        for (int i = 0; i < e->u.call.arg_count; i++)
            if (expr_first_index(e->u.call.args[i], name, out)) return true;
        return false;
    case EX_REDUCE:
        for (int i = 0; i < e->u.reduce.indices.count; i++)
            if (e->u.reduce.indices.items[i].name == name) {
                *out = e->u.reduce.indices.items[i].span;
                return true;
            }
        return expr_first_index(e->u.reduce.body, name, out);
    default: return false;
    }
}

/* Where an index of an op is first used (in source order). */
static bool find_index_use(const Decl *op, Name name, Span *out) {
    for (int i = 0; i < op->u.op.stmt_count; i++) {
        const Stmt *s = op->u.op.stmts[i];
        for (int k = 0; k < s->indices.count; k++)
            if (s->indices.items[k].name == name) {
                *out = s->indices.items[k].span;
                return true;
            }
        if (expr_first_index(s->rhs, name, out)) return true;
    }
    return false;
}

static bool op_has_index(const Decl *op, Name name) {
    Span s;
    return find_index_use(op, name, &s);
}

/* ----------------------------------------------------------- what is at */

typedef enum HitKind {
    H_NONE,
    H_USE,         /* decl: the use */
    H_GLOBAL,      /* a reference to (or the name of) a global: target */
    H_PARAM,       /* op parameter (decl: op, name) */
    H_TENSOR,      /* a tensor of op decl (name) */
    H_INDEX,       /* an index of op decl (name) */
    H_QUANTITY,    /* expr */
    H_NUMBER,      /* expr */
    H_FUNCTION,    /* a call or reduction (name) */
    H_ARCH_ITEM,   /* memory / compute / cluster of arch decl (name) */
    H_CLUSTER_DIM, /* a cluster dimension of arch decl (name) */
    H_ATTR_KEY     /* an attribute's key (name) */
} HitKind;

typedef struct Hit {
    HitKind kind;
    const Decl *decl;   /* the op / arch the name belongs to, or the use */
    const Decl *target; /* H_GLOBAL: the declaration named */
    Name name;
    Span span; /* the word under the cursor */
    const Expr *expr;
    const Decl *mapping; /* set when the word is inside a mapping */
} Hit;

/* (The parser bounds the depth of every expression this recurses into.) */
static bool hit_expr(LspDoc *d, const Decl *op, const Expr *e, uint32_t off, Hit *h) {
    if (!e || !in_span(e->span, off)) return false;
    switch (e->kind) {
    case EX_QUANTITY: *h = (Hit){.kind = H_QUANTITY, .expr = e, .span = e->span}; return true;
    case EX_INT:
    case EX_REAL: *h = (Hit){.kind = H_NUMBER, .expr = e, .span = e->span}; return true;
    case EX_NAME:
        if (op && find_param(op, e->u.name)) {
            *h = (Hit){.kind = H_PARAM, .decl = op, .name = e->u.name, .span = e->span};
            return true;
        }
        {
            const Decl *g = find_global(d, e->u.name, -1);
            if (g) {
                *h = (Hit){.kind = H_GLOBAL, .target = g, .name = e->u.name, .span = e->span};
                return true;
            }
        }
        return false;
    case EX_ACCESS:
        if (on_ident(e->u.access.tensor, off)) {
            *h = (Hit){.kind = H_TENSOR,
                       .decl = op,
                       .name = e->u.access.tensor.name,
                       .span = e->u.access.tensor.span};
            return true;
        }
        for (int i = 0; i < e->u.access.indices.count; i++)
            if (on_ident(e->u.access.indices.items[i], off)) {
                *h = (Hit){.kind = H_INDEX,
                           .decl = op,
                           .name = e->u.access.indices.items[i].name,
                           .span = e->u.access.indices.items[i].span};
                return true;
            }
        return false;
    case EX_UNARY: return hit_expr(d, op, e->u.unary.operand, off, h);
    case EX_BINARY:
        return hit_expr(d, op, e->u.binary.lhs, off, h) || hit_expr(d, op, e->u.binary.rhs, off, h);
    case EX_CALL:
        if (on_ident(e->u.call.fn, off)) {
            *h = (Hit){.kind = H_FUNCTION,
                       .name = e->u.call.fn.name,
                       .span = e->u.call.fn.span,
                       .expr = e};
            return true;
        }
        for (int i = 0; i < e->u.call.arg_count; i++)
            if (hit_expr(d, op, e->u.call.args[i], off, h)) return true;
        return false;
    case EX_REDUCE:
        if (on_ident(e->u.reduce.fn, off)) {
            *h = (Hit){.kind = H_FUNCTION,
                       .name = e->u.reduce.fn.name,
                       .span = e->u.reduce.fn.span,
                       .expr = e};
            return true;
        }
        for (int i = 0; i < e->u.reduce.indices.count; i++)
            if (on_ident(e->u.reduce.indices.items[i], off)) {
                *h = (Hit){.kind = H_INDEX,
                           .decl = op,
                           .name = e->u.reduce.indices.items[i].name,
                           .span = e->u.reduce.indices.items[i].span};
                return true;
            }
        return hit_expr(d, op, e->u.reduce.body, off, h);
    default: return false;
    }
}

static bool hit_global_ref(LspDoc *d, Ident id, int kind, uint32_t off, Hit *h) {
    if (!on_ident(id, off)) return false;
    const Decl *g = find_global(d, id.name, kind);
    *h = (Hit){.kind = g ? H_GLOBAL : H_NONE, .target = g, .name = id.name, .span = id.span};
    return g != NULL;
}

static bool hit_attrs(LspDoc *d, AttrList body, uint32_t off, Hit *h) {
    for (int i = 0; i < body.count; i++) {
        const Attr *a = body.items[i];
        if (!in_span(a->span, off)) continue;
        if (on_ident(a->key, off)) {
            *h = (Hit){.kind = H_ATTR_KEY, .name = a->key.name, .span = a->key.span};
            return true;
        }
        for (int k = 0; k < a->value_count; k++)
            if (hit_expr(d, NULL, a->values[k], off, h)) return true;
        for (int k = 0; k < a->pair_count; k++) {
            if (on_ident(a->pairs[k].key, off)) {
                *h = (Hit){
                    .kind = H_FUNCTION, .name = a->pairs[k].key.name, .span = a->pairs[k].key.span};
                return true;
            }
            if (hit_expr(d, NULL, a->pairs[k].value, off, h)) return true;
        }
    }
    return false;
}

static bool hit_decl(LspDoc *d, const Decl *x, uint32_t off, Hit *h) {
    if (!in_span(x->span, off)) return false;
    switch (x->kind) {
    case DK_USE:
        *h = (Hit){.kind = H_USE, .decl = x, .span = x->name.span, .name = x->name.name};
        return true;
    case DK_CONST:
        if (on_ident(x->name, off)) {
            *h = (Hit){.kind = H_GLOBAL, .target = x, .name = x->name.name, .span = x->name.span};
            return true;
        }
        return hit_expr(d, NULL, x->u.const_value, off, h);
    case DK_OP: {
        const OpDecl *op = &x->u.op;
        if (on_ident(x->name, off)) {
            *h = (Hit){.kind = H_GLOBAL, .target = x, .name = x->name.name, .span = x->name.span};
            return true;
        }
        for (int i = 0; i < op->param_count; i++) {
            if (on_ident(op->params[i].name, off)) {
                *h = (Hit){.kind = H_PARAM,
                           .decl = x,
                           .name = op->params[i].name.name,
                           .span = op->params[i].name.span};
                return true;
            }
            if (hit_expr(d, NULL, op->params[i].default_value, off, h)) return true;
        }
        for (int i = 0; i < op->tensor_count; i++) {
            const TensorDecl *t = op->tensors[i];
            if (on_ident(t->name, off)) {
                *h = (Hit){.kind = H_TENSOR, .decl = x, .name = t->name.name, .span = t->name.span};
                return true;
            }
            for (int k = 0; k < t->dim_count; k++)
                if (hit_expr(d, x, t->dims[k], off, h)) return true;
        }
        for (int i = 0; i < op->stmt_count; i++) {
            const Stmt *s = op->stmts[i];
            if (!in_span(s->span, off)) continue;
            if (on_ident(s->target, off)) {
                *h = (Hit){
                    .kind = H_TENSOR, .decl = x, .name = s->target.name, .span = s->target.span};
                return true;
            }
            for (int k = 0; k < s->indices.count; k++)
                if (on_ident(s->indices.items[k], off)) {
                    *h = (Hit){.kind = H_INDEX,
                               .decl = x,
                               .name = s->indices.items[k].name,
                               .span = s->indices.items[k].span};
                    return true;
                }
            if (hit_expr(d, x, s->rhs, off, h)) return true;
            /* `where n <= m + W`: its indices; `by R`: the route */
            if (s->where) {
                const Where *wh = s->where;
                if (on_ident(wh->lhs, off)) {
                    *h = (Hit){
                        .kind = H_INDEX, .decl = x, .name = wh->lhs.name, .span = wh->lhs.span};
                    return true;
                }
                const Expr *r = wh->rhs;
                if (r && r->kind == EX_BINARY) r = r->u.binary.lhs;
                if (r && r->kind == EX_NAME && in_span(r->span, off)) {
                    *h = (Hit){.kind = H_INDEX, .decl = x, .name = r->u.name, .span = r->span};
                    return true;
                }
                if (wh->rhs && hit_expr(d, x, wh->rhs, off, h)) return true;
            }
            if (s->by.name && on_ident(s->by, off)) {
                *h = (Hit){.kind = H_TENSOR, .decl = x, .name = s->by.name, .span = s->by.span};
                return true;
            }
        }
        return false;
    }
    case DK_ARCH: {
        if (on_ident(x->name, off)) {
            *h = (Hit){.kind = H_GLOBAL, .target = x, .name = x->name.name, .span = x->name.span};
            return true;
        }
        if (hit_global_ref(d, x->u.arch.parent, DK_ARCH, off, h)) return true;
        for (int i = 0; i < x->u.arch.item_count; i++) {
            const ArchItem *it = x->u.arch.items[i];
            if (!in_span(it->span, off)) continue;
            if (it->kind == AI_ATTR) {
                AttrList one = {(Attr **)&it->attr, 1};
                return it->attr && hit_attrs(d, one, off, h);
            }
            if (on_ident(it->name, off)) {
                *h = (Hit){
                    .kind = H_ARCH_ITEM, .decl = x, .name = it->name.name, .span = it->name.span};
                return true;
            }
            for (int k = 0; k < it->dim_count; k++) {
                if (on_ident(it->dims[k].name, off)) {
                    *h = (Hit){.kind = H_CLUSTER_DIM,
                               .decl = x,
                               .name = it->dims[k].name.name,
                               .span = it->dims[k].name.span};
                    return true;
                }
                if (hit_expr(d, NULL, it->dims[k].size, off, h)) return true;
            }
            return hit_attrs(d, it->body, off, h);
        }
        return false;
    }
    case DK_MODEL: {
        if (on_ident(x->name, off)) {
            *h = (Hit){.kind = H_GLOBAL, .target = x, .name = x->name.name, .span = x->name.span};
            return true;
        }
        for (int i = 0; i < x->u.model.part_count; i++)
            if (hit_global_ref(d, x->u.model.parts[i].mapping, DK_MAPPING, off, h)) return true;
        return false;
    }
    case DK_SWEEP: {
        if (on_ident(x->name, off)) {
            *h = (Hit){.kind = H_GLOBAL, .target = x, .name = x->name.name, .span = x->name.span};
            return true;
        }
        for (int i = 0; i < x->u.sweep.axis_count; i++) {
            const SweepAxisDecl *ax = &x->u.sweep.axes[i];
            if (!in_span(ax->span, off)) continue;
            for (int k = 0; k < ax->value_count; k++) {
                const Expr *v = ax->values[k];
                if (ax->kind != SA_PARAM && v->kind == EX_NAME) {
                    Ident id = {.name = v->u.name, .span = v->span};
                    if (hit_global_ref(d, id, ax->kind == SA_ARCH ? DK_ARCH : DK_MAPPING, off, h))
                        return true;
                } else if (ax->kind == SA_PARAM && hit_expr(d, NULL, v, off, h)) {
                    return true;
                }
            }
        }
        return false;
    }
    case DK_MAPPING: {
        const MappingDecl *m = &x->u.mapping;
        if (on_ident(x->name, off)) {
            *h = (Hit){.kind = H_GLOBAL, .target = x, .name = x->name.name, .span = x->name.span};
            return true;
        }
        if (hit_global_ref(d, m->op, DK_OP, off, h)) return true;
        if (hit_global_ref(d, m->arch, DK_ARCH, off, h)) return true;
        const Decl *op = find_global(d, m->op.name, DK_OP);
        const Decl *arch = find_global(d, m->arch.name, DK_ARCH);
        bool found = false;
        for (int i = 0; i < m->binding_count && !found; i++) {
            if (on_ident(m->bindings[i].name, off) && op) {
                *h = (Hit){.kind = H_PARAM,
                           .decl = op,
                           .name = m->bindings[i].name.name,
                           .span = m->bindings[i].name.span};
                found = true;
            } else if (hit_expr(d, NULL, m->bindings[i].value, off, h)) {
                found = true;
            }
        }
        for (int i = 0; i < m->item_count && !found; i++) {
            const MapItem *it = m->items[i];
            if (!in_span(it->span, off)) continue;
            Ident words[64];
            int nw = 0;
            for (int k = 0; k < it->stmts.count && nw < 64; k++) words[nw++] = it->stmts.items[k];
            if (it->level.name && nw < 64) words[nw++] = it->level;
            for (int k = 0; k < it->order.count && nw < 64; k++) words[nw++] = it->order.items[k];
            for (int k = 0; k < it->assign_count && nw < 64; k++) {
                words[nw++] = it->assigns[k].index;
                /* `(m, n) -> sm`: the first is `index` */
                for (int j = 1; j < it->assigns[k].joint.count && nw < 64; j++)
                    words[nw++] = it->assigns[k].joint.items[j];
                for (int j = 0; j < it->assigns[k].dims.count && nw < 64; j++)
                    words[nw++] = it->assigns[k].dims.items[j];
            }
            for (int k = 0; k < it->tile_count && nw < 64; k++) {
                words[nw++] = it->tiles[k].index;
                if (hit_expr(d, NULL, it->tiles[k].size, off, h)) found = true;
            }
            if (it->count && hit_expr(d, NULL, it->count, off, h)) found = true;
            for (int k = 0; k < nw && !found; k++) {
                Ident w = words[k];
                if (!on_ident(w, off)) continue;
                const ArchItem *ai = arch ? find_arch_item(d, arch, w.name) : NULL;
                const ArchItem *owner = NULL;
                if (op && k < it->stmts.count &&
                    (find_stmt(op, w.name) || derived_stmt(d, x, w.name) >= 0)) {
                    *h = (Hit){.kind = H_TENSOR, .decl = op, .name = w.name, .span = w.span};
                } else if (ai && ai->kind == AI_MEMORY) {
                    *h = (Hit){.kind = H_ARCH_ITEM, .decl = arch, .name = w.name, .span = w.span};
                } else if (arch && find_cluster_dim(d, arch, w.name, &owner)) {
                    *h = (Hit){.kind = H_CLUSTER_DIM, .decl = arch, .name = w.name, .span = w.span};
                } else if (op && op_has_index(op, w.name)) {
                    *h = (Hit){.kind = H_INDEX, .decl = op, .name = w.name, .span = w.span};
                } else {
                    continue;
                }
                found = true;
            }
        }
        if (found) h->mapping = x;
        return found;
    }
    case DK_ERROR: return false;
    }
    return false;
}

static Hit hit_at(LspDoc *d, uint32_t off) {
    Hit h = {0};
    if (!d->module) return h;
    for (int i = 0; i < d->module->decl_count; i++)
        if (hit_decl(d, d->module->decls[i], off, &h)) return h;
    return (Hit){0};
}

static const Module *used_module(LspDoc *d, const Decl *use);

/* ------------------------------------------------------------ the text */

static const char *span_src(LspDoc *d, Span sp) {
    SourceFile *f = sp.file >= 0 ? sources_get(&d->sm, sp.file) : NULL;
    if (!f || sp.end < sp.start || sp.end > f->len) return "";
    return arena_strndup(&d->arena, f->text + sp.start, sp.end - sp.start);
}

/* 1234567 -> "1 234 567" (thin grouping, as the listings print). */
static const char *group_digits(Arena *a, double v) {
    if (!(fabs(v) < 9e15) || v != floor(v)) return arena_printf(a, "%.4g", v);
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", (long long)fabs(v));
    size_t n = strlen(digits);
    char out[48];
    size_t o = 0;
    if (v < 0) out[o++] = '-';
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0) out[o++] = ' ';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    return arena_strdup(a, out);
}

static const char *base_symbol(int bu) {
    switch (bu) {
    case BU_BYTE: return "B";
    case BU_SECOND: return "s";
    case BU_CYCLE: return "cycle";
    case BU_HERTZ: return "Hz";
    case BU_JOULE: return "J";
    case BU_MAC: return "MAC";
    case BU_OP: return "op";
    case BU_FLOP: return "FLOP";
    default: return "";
    }
}

static const char *si_text(Arena *a, double v, UnitDim dim) {
    const char *num = base_symbol(dim.num), *den = base_symbol(dim.den);
    const char *unit = dim.den ? arena_printf(a, "%s/%s", num[0] ? num : "1", den) : num;
    return arena_printf(a, "%.15g%s%s", v, unit[0] ? " " : "", unit);
}

/* How many mappings a statement's hover shows when the cursor is in the
 * op rather than in one mapping (a large file may have dozens). */
#define HOVER_MAPPINGS 3

/* A statement's cost in a lowered mapping, one paragraph. */
static void stmt_cost_text(Text *b, const IrMapping *m, const Schedule *sc, int ms,
                           bool optimized) {
    Arena *a = b->a;
    bool mac = m->op->stmts[ms].cls == SC_CONTRACTION;
    const SchedStmt *ss = &sc->stmts[ms];
    double energy = 0;
    for (int k = 0; k < sc->node_count; k++)
        if (sc->nodes[k].stmt == ms) energy += sc->nodes[k].energy_j;
    text_add(b, "\nin mapping `%s` on `%s`%s: %s %s per instance", m->name, m->arch->name,
             optimized ? " (holes filled by the optimizer)" : "", group_digits(a, ss->work),
             mac ? "MAC" : "op");
    if (ss->unit)
        text_add(b, ", compute %s on `%s`",
                 unit_format(a, ss->compute_s, (UnitDim){BU_SECOND, BU_NONE}), ss->unit->name);
    text_add(b, ", energy %s (its compute, loads, stores and collectives)",
             unit_format(a, energy, (UnitDim){BU_JOULE, BU_NONE}));
    if (ss->group >= 0 && ss->group < sc->group_count) {
        const SchedGroup *g = &sc->groups[ss->group];
        text_add(b, "; group %d (%d statement%s at %s) takes %s, %s-bound", g->id, g->stmt_count,
                 g->stmt_count == 1 ? "" : "s",
                 g->level >= 0 && g->level < m->arch->level_count ? m->arch->levels[g->level].name
                                                                  : "?",
                 unit_format(a, g->cost.latency_s, (UnitDim){BU_SECOND, BU_NONE}),
                 bound_name(g->cost.bound));
    }
    text_add(b, "; the mapping takes %s and %s\n",
             unit_format(a, sc->cost.latency_s, (UnitDim){BU_SECOND, BU_NONE}),
             unit_format(a, sc->cost.energy_j, (UnitDim){BU_JOULE, BU_NONE}));
}

/* A mapping's cost, for its hover. */
static void mapping_cost_text(Text *b, const EvalResult *r, bool optimized) {
    Arena *a = b->a;
    text_add(b, "\nlatency %s, energy %s (compute %s, memory %s, network %s)%s\n",
             unit_format(a, r->cost.latency_s, (UnitDim){BU_SECOND, BU_NONE}),
             unit_format(a, r->cost.energy_j, (UnitDim){BU_JOULE, BU_NONE}),
             unit_format(a, r->cost.compute_s, (UnitDim){BU_SECOND, BU_NONE}),
             unit_format(a, r->cost.memory_s, (UnitDim){BU_SECOND, BU_NONE}),
             unit_format(a, r->cost.network_s, (UnitDim){BU_SECOND, BU_NONE}),
             r->feasible ? "" : "; a tile exceeds its level's capacity");
    text_add(b, "\n%d fusion group%s%s\n", r->group_count, r->group_count == 1 ? "" : "s",
             optimized ? "; holes filled by the optimizer" : "");
}

static void hover_tensor(LspServer *s, LspDoc *d, Text *b, const Decl *op, Name name,
                         const Decl *in_mapping) {
    const TensorDecl *td = find_tensor_decl(op, name);
    const Stmt *st = find_stmt(op, name);
    int derived = !td && !st ? derived_stmt(d, in_mapping, name) : -1;
    if (derived >= 0) {
        /* a statement nobody wrote: its text, what derived it, its cost */
        const IrMapping *m = mapping_of_decl(d, in_mapping);
        text_add(b, "```cmt\n%s\n```\n", m->op->stmts[derived].source);
        text_add(b, "\nderived for `phase %s` from op `%s` (docs/language.md 5.8)\n",
                 phase_name(m->phase), op->name.name);
        const Schedule *sc = map_schedule(d, m);
        if (sc) stmt_cost_text(b, m, sc, derived, false);
        return;
    }
    if (td) {
        const char *role = tensor_decl_keyword(td);
        text_add(b, "```cmt\n%s %s", role, name);
        if (td->dim_count > 0) {
            text_add(b, "[");
            for (int i = 0; i < td->dim_count; i++)
                text_add(b, "%s%s", i ? ", " : "", span_src(d, td->dims[i]->span));
            text_add(b, "]");
        }
        text_add(b, " : %s\n```\n", elem_type_name(td->type));
    } else if (st) {
        text_add(b, "```cmt\n%s\n```\n", span_src(d, st->span));
    }
    bool from_mapping;
    IrOp *ir = op_ir(d, op, &from_mapping);
    int t = ir ? ir_find_tensor(ir, name) : -1;
    if (t >= 0) {
        const IrTensor *x = &ir->tensors[t];
        const char *kind = x->kind == TK_INPUT    ? "input"
                           : x->kind == TK_OUTPUT ? "output"
                                                  : "intermediate";
        double elems = 1;
        text_add(b, "\n%s tensor of `%s`, type %s, shape [", kind, op->name.name,
                 elem_type_name(x->type));
        for (int i = 0; i < x->rank; i++) {
            const IrIndex *ix = x->index[i] >= 0 && x->index[i] < ir->index_count
                                    ? &ir->indices[x->index[i]]
                                    : NULL;
            text_add(b, "%s%s%s%lld", i ? ", " : "", ix ? ix->name : "", ix ? " = " : "",
                     (long long)x->extent[i]);
            elems *= (double)x->extent[i];
        }
        double bytes = elems * elem_type_bits(x->type) / 8.0;
        text_add(b, "]: %s elements, %s", group_digits(&d->arena, elems),
                 unit_format(&d->arena, bytes, (UnitDim){BU_BYTE, BU_NONE}));
        if (from_mapping) text_add(b, " (with the parameters of its mapping)");
        text_add(b, "\n");
    }
    if (!st || !ir) return;
    int si = ir_find_stmt(ir, name);
    if (si < 0) return;
    const IrStmt *is = &ir->stmts[si];
    int64_t *ext = ARENA_ARRAY(&d->arena, int64_t, ir->index_count + 1);
    for (int i = 0; i < ir->index_count; i++) ext[i] = ir->indices[i].extent;
    double work = ir_stmt_work(ir, is, ext, NULL);
    bool mac = is->cls == SC_CONTRACTION;
    text_add(b, "\nstatement `%s`: %s, work %s %s", name, mac ? "contraction" : "vector statement",
             group_digits(&d->arena, work), mac ? "MAC" : "op");
    if (is->reduce_op != RO_NONE) text_add(b, ", reduction %s", reduce_op_name(is->reduce_op));
    text_add(b, "\n");
    if (is->mask.cmp != PC_NONE)
        text_add(b,
                 "restricted: `where %s`%s; the work above is the whole space, a mapping runs "
                 "only the compute tiles that meet it (docs/cost-model.md 3.1)\n",
                 ir_pred_text(&d->arena, ir, &is->mask),
                 is->mask.from != si
                     ? arena_printf(&d->arena, " (inherited from `%s`, whose result it reads)",
                                    ir->stmts[is->mask.from].name)
                     : "");
    /* its cost in the mapping under the cursor, else in the first few
     * mappings of this op in the file: from the lowered schedule when the
     * mapping is complete, from the worker's answer when it has holes */
    int shown = 0, more = 0;
    for (int i = 0; d->prog && i < d->prog->mapping_count; i++) {
        const IrMapping *m = d->prog->mappings[i];
        if (!m || !m->op || !same_span(m->op->span, op->span) || !m->arch) continue;
        if (in_mapping && !same_span(m->span, in_mapping->span)) continue;
        int ms = ir_find_stmt(m->op, name);
        if (ms < 0) continue;
        if (shown == HOVER_MAPPINGS) {
            more++;
            continue;
        }
        shown++;
        const Schedule *sc = map_schedule(d, m);
        if (sc) {
            stmt_cost_text(b, m, sc, ms, false);
            continue;
        }
        json_t *ans = map_answer(s, d, m);
        const char *t = json_string_value(json_object_get(json_object_get(ans, "stmts"), name));
        if (t)
            text_add(b, "%s", t);
        else
            text_add(b, "\nin mapping `%s`: %d hole%s for the optimizer\n", m->name, m->hole_count,
                     m->hole_count == 1 ? "" : "s");
    }
    if (more > 0)
        text_add(b,
                 "\nand %d more mapping%s of `%s` (hover the statement where a mapping names it "
                 "for its cost there)\n",
                 more, more == 1 ? "" : "s", op->name.name);
}

static void hover_arch_item(LspDoc *d, Text *b, const Decl *arch, Name name) {
    const ArchItem *it = find_arch_item(d, arch, name);
    const IrArch *a = arch_ir(d, arch);
    if (it) {
        const char *kw = it->kind == AI_MEMORY    ? "memory"
                         : it->kind == AI_COMPUTE ? "compute"
                                                  : "cluster";
        text_add(b, "```cmt\n%s %s", kw, name);
        if (it->role.name) text_add(b, " role %s", it->role.name);
        if (it->unit_kind.name) text_add(b, " %s", it->unit_kind.name);
        text_add(b, "\n```\n");
    }
    if (!a) return;
    for (int i = 0; i < a->memory_count; i++) {
        const IrMemory *m = &a->memories[i];
        if (m->name != name) continue;
        const IrLevel *l = m->level >= 0 && m->level < a->level_count ? &a->levels[m->level] : NULL;
        text_add(b, "\nlevel %d of `%s`", m->level, a->name);
        if (l)
            text_add(b, ", %lld instance%s", (long long)l->instances, l->instances == 1 ? "" : "s");
        text_add(b, "\n\n- capacity: %s\n",
                 isinf(m->capacity)
                     ? "unbounded"
                     : unit_format(&d->arena, m->capacity, (UnitDim){BU_BYTE, BU_NONE}));
        text_add(b, "- bandwidth: %s\n",
                 unit_format(&d->arena, m->bandwidth, (UnitDim){BU_BYTE, BU_SECOND}));
        text_add(b, "- read energy: %s, write energy: %s\n",
                 unit_format(&d->arena, m->read_energy, (UnitDim){BU_JOULE, BU_BYTE}),
                 unit_format(&d->arena, m->write_energy, (UnitDim){BU_JOULE, BU_BYTE}));
        if (m->transfer_latency > 0)
            text_add(b, "- transfer latency: %s per tile\n",
                     unit_format(&d->arena, m->transfer_latency, (UnitDim){BU_SECOND, BU_NONE}));
        if (m->role == ROLE_ACCUMULATOR)
            text_add(b, "- accumulator: holds the results the compute units make at this level, "
                        "their partial sums across the reduced loops\n");
        else if (m->role != ROLE_ANY)
            text_add(b, "- holds the %s role\n", mem_role_name(m->role));
        if (m->kind == MK_STREAM)
            text_add(b, "- stream level: what it exchanges with the level above passes at its "
                        "bandwidth once\n");
        return;
    }
    for (int i = 0; i < a->unit_count; i++) {
        const IrCompute *u = &a->units[i];
        if (u->name != name) continue;
        UnitDim per = {u->matrix ? BU_MAC : BU_OP, BU_SECOND};
        text_add(b, "\n%s unit of `%s`, %lld instance%s\n\n- throughput: %s per instance\n",
                 u->matrix ? "matrix" : "vector", a->name, (long long)u->instances,
                 u->instances == 1 ? "" : "s", unit_format(&d->arena, u->throughput, per));
        text_add(
            b, "- energy: %s\n",
            unit_format(&d->arena, u->energy, (UnitDim){BU_JOULE, u->matrix ? BU_MAC : BU_OP}));
        if (u->array_rows > 0)
            text_add(b, "- systolic array %d x %d\n", u->array_rows, u->array_cols);
        return;
    }
    for (int i = 0; i < a->cluster_count; i++) {
        const IrCluster *c = &a->clusters[i];
        if (c->name != name) continue;
        text_add(b, "\ncluster of `%s`:", a->name);
        for (int k = 0; k < c->dim_count; k++) {
            const IrClusterDim *dm = &a->dims[c->first_dim + k];
            text_add(b, "%s %s = %lld %s", k ? "," : "", dm->name, (long long)dm->size,
                     topology_name(dm->topology));
        }
        text_add(b, "\n\n- link bandwidth: %s\n- hop latency: %s\n",
                 unit_format(&d->arena, c->link_bandwidth, (UnitDim){BU_BYTE, BU_SECOND}),
                 unit_format(&d->arena, c->hop_latency, (UnitDim){BU_SECOND, BU_NONE}));
        if (c->call_latency > 0)
            text_add(b, "- call latency: %s per collective\n",
                     unit_format(&d->arena, c->call_latency, (UnitDim){BU_SECOND, BU_NONE}));
        if (c->channels > 1)
            text_add(b, "- %lld channels of at least %s each%s\n", (long long)c->channels,
                     unit_format(&d->arena, c->channel_bytes, (UnitDim){BU_BYTE, BU_NONE}),
                     c->channel_growth != 1
                         ? arena_printf(&d->arena, ", used as (n / that)^%g", c->channel_growth)
                         : "");
        if (c->dim_count > 0 && a->dims[c->first_dim].topology == TOPO_DRAGONFLY)
            text_add(b, "- %lld global link%s per pair of groups, %s each\n",
                     (long long)c->global_links, c->global_links == 1 ? "" : "s",
                     unit_format(&d->arena, c->global_bandwidth, (UnitDim){BU_BYTE, BU_SECOND}));
        return;
    }
}

static void hover_global(LspServer *s, LspDoc *d, Text *b, const Decl *g) {
    switch (g->kind) {
    case DK_CONST: {
        text_add(b, "```cmt\nconst %s = %s\n```\n", g->name.name,
                 span_src(d, g->u.const_value->span));
        const Expr *e = g->u.const_value;
        if (e->kind == EX_QUANTITY)
            text_add(b, "\n= %s (%s)\n", si_text(&d->arena, e->u.quantity.value, e->u.quantity.dim),
                     unit_dim_describe(e->u.quantity.dim));
        break;
    }
    case DK_OP: {
        text_add(b, "```cmt\nop %s", g->name.name);
        if (g->u.op.param_count > 0) {
            text_add(b, "<");
            for (int i = 0; i < g->u.op.param_count; i++) {
                const Param *p = &g->u.op.params[i];
                text_add(b, "%s%s", i ? ", " : "", p->name.name);
                if (p->default_value) text_add(b, " = %s", span_src(d, p->default_value->span));
            }
            text_add(b, ">");
        }
        text_add(b, "\n```\n");
        bool fm;
        IrOp *ir = op_ir(d, g, &fm);
        if (ir) {
            int64_t *ext = ARENA_ARRAY(&d->arena, int64_t, ir->index_count + 1);
            for (int i = 0; i < ir->index_count; i++) ext[i] = ir->indices[i].extent;
            double macs = 0, ops = 0;
            for (int i = 0; i < ir->stmt_count; i++) {
                double w = ir_stmt_work(ir, &ir->stmts[i], ext, NULL);
                if (ir->stmts[i].cls == SC_CONTRACTION)
                    macs += w;
                else
                    ops += w;
            }
            text_add(b, "\n%d statement%s, %d tensor%s; work %s MAC + %s op%s\n", ir->stmt_count,
                     ir->stmt_count == 1 ? "" : "s", ir->tensor_count,
                     ir->tensor_count == 1 ? "" : "s", group_digits(&d->arena, macs),
                     group_digits(&d->arena, ops), fm ? " (with its mapping's parameters)" : "");
        }
        break;
    }
    case DK_ARCH: {
        text_add(b, "```cmt\narch %s%s%s\n```\n", g->name.name, g->u.arch.parent.name ? " : " : "",
                 g->u.arch.parent.name ? g->u.arch.parent.name : "");
        const IrArch *a = arch_ir(d, g);
        if (!a) break;
        if (a->clock_hz > 0)
            text_add(b, "\nclock %s\n",
                     unit_format(&d->arena, a->clock_hz, (UnitDim){BU_HERTZ, BU_NONE}));
        text_add(b, "\nlevels:");
        for (int i = 0; i < a->level_count; i++)
            text_add(b, "%s %s (x%lld)", i ? " >" : "", a->levels[i].name,
                     (long long)a->levels[i].instances);
        text_add(b, "\n");
        for (int i = 0; i < a->unit_count; i++)
            text_add(b, "\ncompute %s: %s %s\n", a->units[i].name,
                     a->units[i].matrix ? "matrix" : "vector",
                     unit_format(&d->arena, a->units[i].throughput,
                                 (UnitDim){a->units[i].matrix ? BU_MAC : BU_OP, BU_SECOND}));
        break;
    }
    case DK_MAPPING: {
        const MappingDecl *m = &g->u.mapping;
        text_add(b, "```cmt\nmapping %s for %s on %s\n```\n", g->name.name, m->op.name,
                 m->arch.name);
        const IrMapping *ir = mapping_ir(d, g);
        if (!ir) break;
        const EvalResult *r = map_eval(d, ir);
        json_t *ans = r ? NULL : map_answer(s, d, ir);
        const char *cost = json_string_value(json_object_get(ans, "hover"));
        if (r) {
            mapping_cost_text(b, r, false);
        } else if (cost) {
            text_add(b, "%s", cost);
        } else if (ir->hole_count > 0) {
            text_add(b, "\n%d hole%s for the optimizer (`cmtc compile` fills them)\n",
                     ir->hole_count, ir->hole_count == 1 ? "" : "s");
        }
        break;
    }
    case DK_MODEL: {
        text_add(b, "```cmt\nmodel %s\n```\n", g->name.name);
        for (int k = 0; k < g->u.model.part_count; k++) {
            const ModelPart *part = &g->u.model.parts[k];
            if (part->role.name && part->mapping.name)
                text_add(b, "\n%s: mapping `%s`", part->role.name, part->mapping.name);
        }
        text_add(b, "\n\nthe embedding and the head run once per micro-batch of the layers' step, "
                    "on the first and the last stage (docs/language.md 5.13)\n");
        break;
    }
    default: break;
    }
}

/* What the words of the language mean, for hover (language.md, 3-4). */
static const char *describe_attribute(Name key) {
    static const char *const table[][2] = {
        {"clock", "the arch's clock frequency (for example 1 GHz); converts `cycles`"},
        {"capacity",
         "bytes one instance of the memory holds (for example 2 MiB); the outermost level may "
         "leave it out (unbounded)"},
        {"bandwidth", "bytes per second one instance moves (for example 64 GB/s)"},
        {"read_energy", "energy per byte read (for example 20 pJ/B)"},
        {"write_energy", "energy per byte written (for example 20 pJ/B)"},
        {"energy", "per byte, read and written (memory), or per MAC / op (compute unit)"},
        {"link_bandwidth", "bytes per second per link and direction (for example 32 GB/s)"},
        {"hop_latency", "time per hop (for example 5 cycles, 100 ns)"},
        {"link_energy", "energy per byte per hop (for example 0.5 pJ/B)"},
        {"launch_overhead", "time each fusion group (kernel) pays to launch and synchronise "
                            "(for example 4 us), added to its latency"},
        {"price",
         "what the whole system costs (for example 250 kUSD); sweeps report FLOP/s per USD"},
        {"transfer_latency", "time a memory spends on each tile moved into or out of it, "
                             "besides its bytes (for example 500 ns)"},
        {"kind", "`buffer` (default): counts what is written into the memory and read out "
                 "of it; `stream` (a cache or staging level): what it exchanges with the level "
                 "above passes at its bandwidth once"},
        {"call_latency", "time each collective call pays besides its hops (for example 12 us)"},
        {"channels", "parallel streams a collective call may use, each 1/channels of the link "
                     "bandwidth (for example 24)"},
        {"channel_bytes",
         "the least a channel carries: a call of n bytes uses "
         "min(channels, max(for example 1, n / channel_bytes)) of them (for example 256 KiB)"},
        {"channel_growth", "how channels used grow with a call's n bytes: (n / channel_bytes) "
                           "to this power, in (0, 1] (default 1; NCCL on A100: 0.5)"},
        {"global_links", "a dragonfly's links joining each pair of its groups (default 1)"},
        {"global_bandwidth", "bytes per second per global link and direction of a dragonfly "
                             "(default: link_bandwidth)"},
        {"throughput",
         "MAC or op per cycle (or per second) of one unit (for example 4096 MAC/cycle)"},
        {"efficiency", "the fraction of peak throughput real kernels reach (for example 0.9)"},
        {"count", "units per instance (default 1)"},
        {"cost", "element ops per call of each function on this vector unit (`cost exp 4`)"},
        {"array", "a systolic array `R x C`: latency by the fold formula instead of throughput"},
        {"shape", "a matrix unit's native operation `M x N x K` (a tensor core's MMA tile): "
                  "compute tiles are padded up to whole operations (for example 64 x 256 x 16)"},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (key && strcmp(key, table[i][0]) == 0) return table[i][1];
    return NULL;
}

static const char *describe_function(Name fn) {
    if (fn && (strcmp(fn, "max") == 0 || strcmp(fn, "min") == 0))
        return "the larger (smaller) of two values, element by element; one vector op";
    return "an element-wise function on a vector unit; its cost per element is the unit's "
           "`cost` for it, 1 op when not given";
}

static const char *describe_reduction(Name fn) {
    if (fn && strcmp(fn, "sum") == 0) return "adds over them (the default for summed indices)";
    if (fn && strcmp(fn, "max") == 0) return "keeps the largest value";
    if (fn && strcmp(fn, "min") == 0) return "keeps the smallest value";
    if (fn && strcmp(fn, "mean") == 0) return "averages over them";
    return "combines the values over them";
}

json_t *lsp_hover(LspServer *s, LspDoc *d, uint32_t offset) {
    Hit h = hit_at(d, offset);
    if (h.kind == H_NONE) return json_null();
    Text b = {.a = &d->arena};
    switch (h.kind) {
    case H_NONE: break;
    case H_USE: {
        text_add(&b, "```cmt\nuse %s\n```\n", span_src(d, h.span));
        const Module *m = used_module(d, h.decl);
        if (m) {
            int defs = 0;
            for (int i = 0; i < m->decl_count; i++)
                if (m->decls[i]->kind != DK_USE && m->decls[i]->kind != DK_ERROR) defs++;
            text_add(&b, "\n`%s`: %d declaration%s\n", m->file->path, defs, defs == 1 ? "" : "s");
        }
        break;
    }
    case H_GLOBAL: hover_global(s, d, &b, h.target); break;
    case H_PARAM: {
        const Param *p = find_param(h.decl, h.name);
        text_add(&b, "```cmt\n%s", h.name);
        if (p && p->default_value) text_add(&b, " = %s", span_src(d, p->default_value->span));
        text_add(&b, "\n```\nparameter of `%s`\n", h.decl->name.name);
        break;
    }
    case H_TENSOR: hover_tensor(s, d, &b, h.decl, h.name, h.mapping); break;
    case H_INDEX: {
        text_add(&b, "```cmt\nindex %s\n```\n", h.name);
        bool fm;
        IrOp *ir = op_ir(d, h.decl, &fm);
        int ix = ir ? ir_find_index(ir, h.name) : -1;
        if (ix >= 0)
            text_add(&b, "\nranges over %lld%s\n", (long long)ir->indices[ix].extent,
                     fm ? " (with its mapping's parameters)" : "");
        if (h.mapping) {
            const IrMapping *m = mapping_ir(d, h.mapping);
            int mx = m && m->op ? ir_find_index(m->op, h.name) : -1;
            if (mx >= 0 && (ix < 0 || m->op->indices[mx].extent != ir->indices[ix].extent))
                text_add(&b, "\nin mapping `%s`: ranges over %lld\n", m->name,
                         (long long)m->op->indices[mx].extent);
        }
        break;
    }
    case H_QUANTITY: {
        const Expr *e = h.expr;
        text_add(&b, "```cmt\n%s\n```\n%s: %s", span_src(d, e->span),
                 unit_dim_describe(e->u.quantity.dim),
                 si_text(&d->arena, e->u.quantity.value, e->u.quantity.dim));
        const char *readable = unit_format(&d->arena, e->u.quantity.value, e->u.quantity.dim);
        text_add(&b, " (%s)\n", readable);
        break;
    }
    case H_NUMBER:
        if (h.expr->kind == EX_INT)
            text_add(&b, "integer %s\n", group_digits(&d->arena, (double)h.expr->u.int_value));
        else
            text_add(&b, "number %.17g\n", h.expr->u.real_value);
        break;
    case H_FUNCTION:
        if (h.expr && h.expr->kind == EX_REDUCE) {
            text_add(&b, "reduction `%s` over the listed indices: %s\n", h.name,
                     describe_reduction(h.name));
        } else {
            text_add(&b, "function `%s`: %s\n", h.name, describe_function(h.name));
        }
        break;
    case H_ARCH_ITEM: hover_arch_item(d, &b, h.decl, h.name); break;
    case H_CLUSTER_DIM: {
        const ArchItem *owner = NULL;
        const ClusterDimDecl *cd = find_cluster_dim(d, h.decl, h.name, &owner);
        text_add(&b, "```cmt\n%s = %s%s%s\n```\n", h.name, cd ? span_src(d, cd->size->span) : "?",
                 cd && cd->kind.name ? " " : "", cd && cd->kind.name ? cd->kind.name : "");
        const IrArch *a = arch_ir(d, h.decl);
        int di = a ? ir_find_dim(a, h.name) : -1;
        if (di >= 0)
            text_add(&b, "\ncluster dimension of `%s`: %lld ranks, %s\n",
                     a->clusters[a->dims[di].cluster].name, (long long)a->dims[di].size,
                     topology_name(a->dims[di].topology));
        break;
    }
    case H_ATTR_KEY: {
        /* the line as written (its value), then what the word means */
        const char *text = d->file->text;
        uint32_t from = h.span.start, to = from;
        while (to < d->file->len && to - from < 200 && text[to] != ';' && text[to] != '\n' &&
               text[to] != '}')
            to++;
        if (to > from) text_add(&b, "```cmt\n%.*s\n```\n", (int)(to - from), text + from);
        const char *what = describe_attribute(h.name);
        text_add(&b, "attribute `%s`%s%s\n", h.name, what ? ": " : "", what ? what : "");
        break;
    }
    }
    if (b.len == 0) return json_null();
    return json_pack("{s:{s:s,s:o},s:o}", "contents", "kind", "markdown", "value", lsp_jstr(b.buf),
                     "range", lsp_range_json(s, d->file, h.span));
}

/* ------------------------------------------------------------ definition */

/* The module a `use` declaration brought in. */
static const Module *used_module(LspDoc *d, const Decl *use) {
    if (!d->prog) return NULL;
    const char *want;
    bool exact = false;
    if (use->u.use.is_string) {
        /* relative to the using file's folder */
        const char *dir = d->path;
        const char *slash = strrchr(dir, '/');
        want = use->u.use.path[0] == '/' ? use->u.use.path
               : slash
                   ? arena_printf(&d->arena, "%.*s/%s", (int)(slash - dir), dir, use->u.use.path)
                   : use->u.use.path;
        exact = true;
    } else {
        char *p = arena_printf(&d->arena, "%s.cmt", use->u.use.path);
        for (char *q = p; *q; q++)
            if (*q == '.' && strcmp(q, ".cmt") != 0) *q = '/';
        want = p;
    }
    if (exact) {
        const char *norm = lsp_normalize_path(&d->arena, want);
        for (int i = 1; i < d->prog->module_count; i++) {
            const Module *m = d->prog->modules[i];
            if (m && m->file && strcmp(lsp_normalize_path(&d->arena, m->file->path), norm) == 0)
                return m;
        }
    }
    for (int i = 1; i < d->prog->module_count; i++) {
        const Module *m = d->prog->modules[i];
        if (!m || !m->file) continue;
        const char *path = lsp_normalize_path(&d->arena, m->file->path);
        size_t pn = strlen(path);
        const char *base = lsp_normalize_path(&d->arena, want);
        size_t bn = strlen(base);
        if (pn >= bn && strcmp(path + pn - bn, base) == 0 && (pn == bn || path[pn - bn - 1] == '/'))
            return m;
    }
    return NULL;
}

Span lsp_diag_span(LspDoc *d, const Diag *g) {
    return g->span.file == d->file->id ? g->span : lsp_use_site(d, g->span.file);
}

Span lsp_use_site(LspDoc *d, int file_id) {
    Span first = {d->file->id, 0, 0};
    bool have = false;
    for (int i = 0; d->module && i < d->module->decl_count; i++) {
        const Decl *x = d->module->decls[i];
        if (x->kind != DK_USE) continue;
        const Module *m = used_module(d, x);
        if (m && m->file && m->file->id == file_id) return x->span;
        if (!have) {
            first = x->span;
            have = true;
        }
    }
    return first;
}

json_t *lsp_definition(LspServer *s, LspDoc *d, uint32_t offset) {
    Hit h = hit_at(d, offset);
    Span target = SPAN_NONE;
    switch (h.kind) {
    case H_USE: {
        const Module *m = used_module(d, h.decl);
        if (m) target = (Span){m->file->id, 0, 0};
        break;
    }
    case H_GLOBAL: target = h.target->name.span; break;
    case H_PARAM: {
        const Param *p = find_param(h.decl, h.name);
        if (p) target = p->name.span;
        break;
    }
    case H_TENSOR: {
        const TensorDecl *t = find_tensor_decl(h.decl, h.name);
        const Stmt *st = find_stmt(h.decl, h.name);
        if (t)
            target = t->name.span;
        else if (st)
            target = st->target.span;
        break;
    }
    case H_INDEX: find_index_use(h.decl, h.name, &target); break;
    case H_ARCH_ITEM: {
        const ArchItem *it = find_arch_item(d, h.decl, h.name);
        if (it) target = it->name.span;
        break;
    }
    case H_CLUSTER_DIM: {
        const ArchItem *owner;
        const ClusterDimDecl *cd = find_cluster_dim(d, h.decl, h.name, &owner);
        if (cd) target = cd->name.span;
        break;
    }
    default: break;
    }
    if (target.file < 0) return json_null();
    return lsp_location_json(s, d, target);
}

/* ------------------------------------------------------ document symbols */

enum {
    SK_MODULE = 2,
    SK_NAMESPACE = 3,
    SK_PACKAGE = 4,
    SK_CLASS = 5,
    SK_METHOD = 6,
    SK_PROPERTY = 7,
    SK_FIELD = 8,
    SK_FUNCTION = 12,
    SK_VARIABLE = 13,
    SK_CONSTANT = 14,
    SK_OBJECT = 19,
    SK_KEY = 20,
    SK_ENUM_MEMBER = 22,
    SK_TYPE_PARAMETER = 26
};

static json_t *symbol(LspServer *s, LspDoc *d, const char *name, const char *detail, int kind,
                      Span range, Span sel) {
    if (sel.file < 0 || sel.start < range.start || sel.end > range.end) sel = range;
    json_t *o = json_object();
    json_object_set_new_nocheck(o, "name", lsp_jstr(name && name[0] ? name : "?"));
    json_object_set_new_nocheck(o, "kind", json_integer(kind));
    json_object_set_new_nocheck(o, "range", lsp_range_json(s, d->file, range));
    json_object_set_new_nocheck(o, "selectionRange", lsp_range_json(s, d->file, sel));
    if (detail && detail[0]) json_object_set_new_nocheck(o, "detail", lsp_jstr(detail));
    return o;
}

static void add_child(json_t *parent, json_t *child) {
    json_t *ch = json_object_get(parent, "children");
    if (!ch) {
        ch = json_array();
        json_object_set_new(parent, "children", ch);
    }
    json_array_append_new(ch, child);
}

json_t *lsp_document_symbols(LspServer *s, LspDoc *d) {
    json_t *out = json_array();
    if (!d->module) return out;
    Arena *a = &d->arena;
    for (int i = 0; i < d->module->decl_count; i++) {
        const Decl *x = d->module->decls[i];
        switch (x->kind) {
        case DK_ERROR: break;
        case DK_USE:
            json_array_append_new(out, symbol(s, d, span_src(d, x->name.span), "use", SK_PACKAGE,
                                              x->span, x->name.span));
            break;
        case DK_CONST:
            json_array_append_new(out,
                                  symbol(s, d, x->name.name, span_src(d, x->u.const_value->span),
                                         SK_CONSTANT, x->span, x->name.span));
            break;
        case DK_OP: {
            const OpDecl *op = &x->u.op;
            const char *detail = "op";
            if (op->param_count > 0) {
                Text b = {.a = a};
                text_add(&b, "<");
                for (int k = 0; k < op->param_count; k++)
                    text_add(&b, "%s%s", k ? ", " : "", op->params[k].name.name);
                text_add(&b, ">");
                detail = b.buf;
            }
            json_t *sym = symbol(s, d, x->name.name, detail, SK_FUNCTION, x->span, x->name.span);
            for (int k = 0; k < op->param_count; k++)
                add_child(sym, symbol(s, d, op->params[k].name.name, "parameter", SK_TYPE_PARAMETER,
                                      op->params[k].name.span, op->params[k].name.span));
            int ti = 0, si = 0;
            while (ti < op->tensor_count || si < op->stmt_count) {
                if (op_tensor_comes_next(op, ti, si)) {
                    const TensorDecl *t = op->tensors[ti++];
                    const char *role = tensor_decl_keyword(t);
                    add_child(sym, symbol(s, d, t->name.name,
                                          arena_printf(a, "%s %s", role, elem_type_name(t->type)),
                                          SK_VARIABLE, t->span, t->name.span));
                } else {
                    const Stmt *st = op->stmts[si++];
                    add_child(sym, symbol(s, d, st->target.name, span_src(d, st->rhs->span),
                                          SK_METHOD, st->span, st->target.span));
                }
            }
            json_array_append_new(out, sym);
            break;
        }
        case DK_ARCH: {
            json_t *sym =
                symbol(s, d, x->name.name,
                       x->u.arch.parent.name ? arena_printf(a, "arch : %s", x->u.arch.parent.name)
                                             : "arch",
                       SK_CLASS, x->span, x->name.span);
            for (int k = 0; k < x->u.arch.item_count; k++) {
                const ArchItem *it = x->u.arch.items[k];
                switch (it->kind) {
                case AI_ERROR: break;
                case AI_ATTR:
                    add_child(sym, symbol(s, d, it->name.name, "attribute", SK_PROPERTY, it->span,
                                          it->name.span));
                    break;
                case AI_MEMORY:
                    add_child(sym, symbol(s, d, it->name.name,
                                          it->role.name
                                              ? arena_printf(a, "memory role %s", it->role.name)
                                              : "memory",
                                          SK_FIELD, it->span, it->name.span));
                    break;
                case AI_COMPUTE:
                    add_child(sym,
                              symbol(s, d, it->name.name,
                                     arena_printf(a, "compute %s",
                                                  it->unit_kind.name ? it->unit_kind.name : ""),
                                     SK_METHOD, it->span, it->name.span));
                    break;
                case AI_CLUSTER: {
                    json_t *c = symbol(s, d, it->name.name, "cluster", SK_NAMESPACE, it->span,
                                       it->name.span);
                    for (int j = 0; j < it->dim_count; j++)
                        add_child(c, symbol(s, d, it->dims[j].name.name,
                                            span_src(d, it->dims[j].size->span), SK_ENUM_MEMBER,
                                            it->dims[j].span, it->dims[j].name.span));
                    add_child(sym, c);
                    break;
                }
                }
            }
            json_array_append_new(out, sym);
            break;
        }
        case DK_MODEL: {
            json_t *sym = symbol(s, d, x->name.name, "model", SK_OBJECT, x->span, x->name.span);
            for (int k = 0; k < x->u.model.part_count; k++) {
                const ModelPart *part = &x->u.model.parts[k];
                if (!part->role.name || !part->mapping.name) continue;
                add_child(sym, symbol(s, d, part->role.name, part->mapping.name, SK_KEY, part->span,
                                      part->role.span));
            }
            json_array_append_new(out, sym);
            break;
        }
        case DK_SWEEP: {
            json_t *sym = symbol(s, d, x->name.name, "sweep", SK_OBJECT, x->span, x->name.span);
            for (int k = 0; k < x->u.sweep.axis_count; k++) {
                const SweepAxisDecl *ax = &x->u.sweep.axes[k];
                add_child(sym, symbol(s, d, ax->name.name, span_src(d, ax->span), SK_KEY, ax->span,
                                      ax->name.span));
            }
            json_array_append_new(out, sym);
            break;
        }
        case DK_MAPPING: {
            const MappingDecl *m = &x->u.mapping;
            json_t *sym = symbol(s, d, x->name.name,
                                 arena_printf(a, "for %s on %s", m->op.name ? m->op.name : "?",
                                              m->arch.name ? m->arch.name : "?"),
                                 SK_OBJECT, x->span, x->name.span);
            static const char *const kw[] = {[MI_ERROR] = "", CMT_MAPPING_ITEMS(VOCAB_INDEXED)};
            for (int k = 0; k < m->item_count; k++) {
                const MapItem *it = m->items[k];
                if (it->kind == MI_ERROR) continue;
                const char *name = kw[it->kind];
                if ((it->kind == MI_TILE || it->kind == MI_ORDER) && it->level.name)
                    name = arena_printf(a, "%s %s", name, it->level.name);
                /* `tile GLB for C, D`: the statements it is for */
                for (int q = 0; name[0] && (it->kind == MI_TILE || it->kind == MI_ORDER) &&
                                q < it->stmts.count;
                     q++)
                    if (it->stmts.items[q].name)
                        name = arena_printf(a, "%s%s%s", name, q ? ", " : " for ",
                                            it->stmts.items[q].name);
                add_child(sym, symbol(s, d, name, span_src(d, it->span), SK_KEY, it->span,
                                      it->keyword_span));
            }
            json_array_append_new(out, sym);
            break;
        }
        }
    }
    return out;
}

/* ------------------------------------------------------------ completion */

enum {
    CK_FUNCTION = 3,
    CK_FIELD = 5,
    CK_VARIABLE = 6,
    CK_CLASS = 7,
    CK_MODULE = 9,
    CK_PROPERTY = 10,
    CK_KEYWORD = 14,
    CK_ENUM_MEMBER = 20,
    CK_CONSTANT = 21,
    CK_FILE = 17,
    CK_STRUCT = 22,
    CK_TYPE_PARAMETER = 25
};

typedef struct Items {
    json_t *arr;
    Arena *a;
    NameMap seen; /* the labels offered (a scan per label was quadratic) */
    int count;
    bool cut; /* more than COMPLETION_MOST: the list is incomplete */
} Items;

/* A document of 200 000 constants offered them all; a client filters as
 * the user types, and asks again when told the list is cut. */
enum { COMPLETION_MOST = 5000 };

static void item(Items *it, const char *label, int kind, const char *detail) {
    if (!label || !label[0]) return;
    Name key = intern_cstr(label);
    if (name_map_get(&it->seen, key) >= 0) return;
    if (it->count >= COMPLETION_MOST) {
        it->cut = true;
        return;
    }
    name_map_put(it->a, &it->seen, key, it->count++);
    json_t *o = json_pack("{s:o,s:i}", "label", lsp_jstr(label), "kind", kind);
    if (detail && detail[0]) json_object_set_new(o, "detail", lsp_jstr(detail));
    json_array_append_new(it->arr, o);
}

static void keywords(Items *it, const char *const *kw) {
    for (int i = 0; kw[i]; i++) item(it, kw[i], CK_KEYWORD, "keyword");
}

static void globals_of_kind(Items *it, LspDoc *d, int kind) {
    LspScope sc = lsp_doc_scope(d);
    for (int i = 0; i < sc.count; i++)
        for (int k = 0; sc.mods[i] && k < sc.mods[i]->decl_count; k++) {
            const Decl *x = sc.mods[i]->decls[k];
            if (x->kind == DK_USE || x->kind == DK_ERROR || !x->name.name) continue;
            if (kind >= 0 && (int)x->kind != kind) continue;
            int ck = x->kind == DK_OP        ? CK_FUNCTION
                     : x->kind == DK_ARCH    ? CK_CLASS
                     : x->kind == DK_MAPPING ? CK_MODULE
                                             : CK_CONSTANT;
            const char *detail = x->kind == DK_OP        ? "op"
                                 : x->kind == DK_ARCH    ? "arch"
                                 : x->kind == DK_MAPPING ? "mapping"
                                                         : "const";
            item(it, x->name.name, ck, detail);
        }
}

enum { WANT_LEVELS = 1, WANT_DIMS = 2, WANT_STMTS = 4, WANT_INDICES = 8 };

static bool word_char_c(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static void arch_names(Items *it, LspDoc *d, const Decl *arch, int want, int depth) {
    if (!arch || arch->kind != DK_ARCH || depth > 16) return;
    for (int i = 0; i < arch->u.arch.item_count; i++) {
        const ArchItem *x = arch->u.arch.items[i];
        if (x->kind == AI_MEMORY && (want & WANT_LEVELS)) item(it, x->name.name, CK_FIELD, "level");
        if (x->kind == AI_CLUSTER && (want & WANT_DIMS))
            for (int k = 0; k < x->dim_count; k++)
                item(it, x->dims[k].name.name, CK_ENUM_MEMBER,
                     arena_printf(it->a, "dimension of %s", x->name.name));
    }
    if (arch->u.arch.parent.name)
        arch_names(it, d, find_global(d, arch->u.arch.parent.name, DK_ARCH), want, depth + 1);
}

static void op_names(Items *it, const Decl *op, bool tensors, int want) {
    if (!op || op->kind != DK_OP) return;
    for (int i = 0; i < op->u.op.stmt_count; i++) {
        const Stmt *s = op->u.op.stmts[i];
        if (want & WANT_STMTS) item(it, s->target.name, CK_VARIABLE, "statement");
        for (int k = 0; k < s->indices.count && (want & WANT_INDICES); k++)
            item(it, s->indices.items[k].name, CK_TYPE_PARAMETER, "index");
    }
    for (int i = 0; i < op->u.op.stmt_count && (want & WANT_INDICES); i++) {
        /* indices only on right sides (reduced ones) */
        const Stmt *s = op->u.op.stmts[i];
        const Expr *stack[256];
        int top = 0;
        if (s->rhs) stack[top++] = s->rhs;
        while (top > 0) {
            const Expr *e = stack[--top];
            switch (e->kind) {
            case EX_ACCESS:
                for (int k = 0; k < e->u.access.indices.count; k++)
                    item(it, e->u.access.indices.items[k].name, CK_TYPE_PARAMETER, "index");
                break;
            case EX_UNARY:
                if (top < 256) stack[top++] = e->u.unary.operand;
                break;
            case EX_BINARY:
                if (top < 255) {
                    stack[top++] = e->u.binary.lhs;
                    stack[top++] = e->u.binary.rhs;
                }
                break;
            case EX_CALL:
                for (int k = 0; k < e->u.call.arg_count && top < 256; k++)
                    stack[top++] = e->u.call.args[k];
                break;
            case EX_REDUCE:
                if (top < 256) stack[top++] = e->u.reduce.body;
                break;
            default: break;
            }
        }
    }
    if (tensors) {
        for (int i = 0; i < op->u.op.tensor_count; i++)
            item(it, op->u.op.tensors[i]->name.name, CK_VARIABLE, "tensor");
        for (int i = 0; i < op->u.op.param_count; i++)
            item(it, op->u.op.params[i].name.name, CK_CONSTANT, "parameter");
    }
}

/* Which declaration the cursor is in, by span; failing that (a broken
 * declaration), by the nearest keyword that starts a line above it. */
static const Decl *enclosing_decl(LspDoc *d, uint32_t off, int *kind) {
    *kind = -1;
    if (d->module)
        for (int i = 0; i < d->module->decl_count; i++) {
            const Decl *x = d->module->decls[i];
            if (x->kind != DK_ERROR && off > x->span.start && off < x->span.end) {
                *kind = (int)x->kind;
                return x;
            }
        }
    const char *t = d->file->text;
    uint32_t i = off < d->file->len ? off : (uint32_t)d->file->len;
    while (i > 0) {
        uint32_t ls = i;
        while (ls > 0 && t[ls - 1] != '\n') ls--;
        const char *line = t + ls;
        if (strncmp(line, "op ", 3) == 0)
            *kind = DK_OP;
        else if (strncmp(line, "arch ", 5) == 0)
            *kind = DK_ARCH;
        else if (strncmp(line, "mapping ", 8) == 0)
            *kind = DK_MAPPING;
        else if (line[0] == '}')
            return NULL;
        if (*kind >= 0) {
            /* the word after the keyword names it */
            const char *p = strchr(line, ' ');
            while (p && *p == ' ') p++;
            const char *q = p;
            while (q && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                         (*q >= '0' && *q <= '9') || *q == '_'))
                q++;
            if (p && q > p) return find_global(d, intern(p, (size_t)(q - p)), *kind);
            return NULL;
        }
        if (ls == 0) break;
        i = ls - 1;
    }
    return NULL;
}

/* The mapping's arch by the text `on NAME` in a broken mapping header. */
static const Decl *mapping_arch(LspDoc *d, const Decl *m, uint32_t off) {
    if (m && m->kind == DK_MAPPING) return find_global(d, m->u.mapping.arch.name, DK_ARCH);
    const char *t = d->file->text;
    uint32_t i = off < d->file->len ? off : (uint32_t)d->file->len;
    while (i > 0 && !(t[i - 1] == '\n' && strncmp(t + i, "mapping ", 8) == 0)) i--;
    const char *on = strstr(t + i, " on ");
    if (!on || on > t + off) return NULL;
    const char *p = on + 4, *q = p;
    while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
           *q == '_')
        q++;
    return q > p ? find_global(d, intern(p, (size_t)(q - p)), DK_ARCH) : NULL;
}

static const Decl *mapping_op(LspDoc *d, const Decl *m, uint32_t off) {
    if (m && m->kind == DK_MAPPING) return find_global(d, m->u.mapping.op.name, DK_OP);
    const char *t = d->file->text;
    uint32_t i = off < d->file->len ? off : (uint32_t)d->file->len;
    while (i > 0 && !(t[i - 1] == '\n' && strncmp(t + i, "mapping ", 8) == 0)) i--;
    const char *f = strstr(t + i, " for ");
    if (!f || f > t + off) return NULL;
    const char *p = f + 5, *q = p;
    while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
           *q == '_')
        q++;
    return q > p ? find_global(d, intern(p, (size_t)(q - p)), DK_OP) : NULL;
}

/* Module paths under `root` (dotted, as `use` writes them): every .cmt
 * file up to a few folders deep. */
static void module_paths(Items *it, const char *root, const char *prefix, int depth) {
    if (depth > 4) return;
    DIR *dir = opendir(root);
    if (!dir) return;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        const char *n = e->d_name;
        if (n[0] == '.') continue;
        size_t len = strlen(n);
        const char *full = arena_printf(it->a, "%s/%s", root, n);
        struct stat st;
        if (stat(full, &st) != 0) continue;
        bool word = true; /* a folder is a component of a dotted path */
        for (size_t i = 0; i < len; i++)
            if (!word_char_c(n[i])) word = false;
        if (S_ISDIR(st.st_mode) && word) {
            module_paths(it, full, arena_printf(it->a, "%s%s.", prefix, n), depth + 1);
        } else if (S_ISREG(st.st_mode) && lsp_module_file_name(n, true)) {
            item(it, arena_printf(it->a, "%s%.*s", prefix, (int)(len - 4), n), CK_MODULE, "module");
        }
    }
    closedir(dir);
}

/* After `use` on the current line: module paths of the standard library
 * and the -I folders, and the .cmt files beside the document as strings.
 * *from is where the path written so far starts (each item replaces it:
 * `use std.` completed is `use std.ops.gemm`, not `use std.std.ops.gemm`). */
static bool use_completion(LspServer *s, LspDoc *d, uint32_t offset, Items *it, uint32_t *from) {
    const char *t = d->file->text;
    uint32_t ls = offset < d->file->len ? offset : (uint32_t)d->file->len;
    while (ls > 0 && t[ls - 1] != '\n') ls--;
    while (ls < offset && (t[ls] == ' ' || t[ls] == '\t')) ls++;
    if (offset < ls + 4 || strncmp(t + ls, "use", 3) != 0 ||
        (t[ls + 3] != ' ' && t[ls + 3] != '\t'))
        return false;
    *from = ls + 3;
    while (*from < offset && (t[*from] == ' ' || t[*from] == '\t')) (*from)++;
    if (s->check.stdlib_dir) module_paths(it, s->check.stdlib_dir, "", 0);
    for (int i = 0; i < s->check.include_count; i++)
        module_paths(it, s->check.include_dirs[i], "", 0);
    const char *slash = strrchr(d->path, '/');
    const char *dir = slash ? arena_strndup(&d->arena, d->path, (size_t)(slash - d->path)) : ".";
    DIR *dd = opendir(dir[0] ? dir : "/");
    if (dd) {
        struct dirent *e;
        while ((e = readdir(dd)) != NULL) {
            /* modules only: not editor lock files (`.#x.cmt`, a dangling
             * link) nor backups */
            struct stat st;
            if (!lsp_module_file_name(e->d_name, false) ||
                (slash && strcmp(e->d_name, slash + 1) == 0) ||
                stat(arena_printf(it->a, "%s/%s", dir[0] ? dir : "", e->d_name), &st) != 0 ||
                !S_ISREG(st.st_mode))
                continue;
            item(it, arena_printf(it->a, "\"%s\"", e->d_name), CK_FILE, "file");
        }
        closedir(dd);
    }
    return true;
}

/* In a mapping's header, `mapping NAME for OP<P = v, ...> on ARCH<...>`:
 * after `for` the ops, after `on` the archs, inside `<...>` the
 * parameters of the op or arch before it, else the two words. */
static void mapping_header_completion(Items *it, LspDoc *d, uint32_t start, uint32_t offset) {
    const char *t = d->file->text;
    const char *h = arena_strndup(it->a, t + start, offset - start);
    const char *open = strrchr(h, '<'), *close = strrchr(h, '>');
    if (open && (!close || close < open)) {
        /* the name before `<` */
        const char *e = open;
        while (e > h && (e[-1] == ' ' || e[-1] == '\t')) e--;
        const char *b = e;
        while (b > h && word_char_c(b[-1])) b--;
        const char *on = strstr(h, " on ");
        int kind = on && on < open ? DK_ARCH : DK_OP;
        const Decl *g = b < e ? find_global(d, intern(b, (size_t)(e - b)), kind) : NULL;
        const Param *ps = g ? (kind == DK_OP ? g->u.op.params : g->u.arch.params) : NULL;
        int n = g ? (kind == DK_OP ? g->u.op.param_count : g->u.arch.param_count) : 0;
        for (int k = 0; k < n; k++)
            if (ps[k].name.name) item(it, ps[k].name.name, CK_VARIABLE, "parameter");
        return;
    }
    /* the word before the one being typed */
    const char *end = h + strlen(h);
    const char *w = end;
    while (w > h && word_char_c(w[-1])) w--;
    const char *pe = w;
    while (pe > h && !word_char_c(pe[-1])) pe--;
    const char *pb = pe;
    while (pb > h && word_char_c(pb[-1])) pb--;
    size_t pl = (size_t)(pe - pb);
    if (pl == 3 && strncmp(pb, "for", 3) == 0) {
        globals_of_kind(it, d, DK_OP);
    } else if (pl == 2 && strncmp(pb, "on", 2) == 0) {
        globals_of_kind(it, d, DK_ARCH);
    } else {
        item(it, "for", CK_KEYWORD, "keyword");
        item(it, "on", CK_KEYWORD, "keyword");
    }
}

/* Inside a mapping: what the line written so far asks for.  `tile L: `
 * and `order L: ` want indices, `tile ` a level, `tile L ` the word
 * `for`, `tile L for ` statements, `spatial ... -> ` a dimension, `fuse `
 * statements and `at ` a level; a line's first word is a keyword. */
static void mapping_line_completion(Items *it, LspDoc *d, const Decl *x, uint32_t offset) {
    static const char *const map_kw[] = {CMT_MAPPING_ITEMS(VOCAB_NAME) NULL};
    const char *t = d->file->text;
    uint32_t b = offset < d->file->len ? offset : (uint32_t)d->file->len;
    while (b > 0 && t[b - 1] != ';' && t[b - 1] != '{' && t[b - 1] != '}') b--;
    /* on a line holding at most one (partial) word, that word starts an
     * item: keywords */
    uint32_t ls = b;
    for (uint32_t i = offset; i > b; i--)
        if (t[i - 1] == '\n') {
            ls = i;
            break;
        }
    uint32_t p = ls;
    while (p < offset && (t[p] == ' ' || t[p] == '\t' || t[p] == '\r')) p++;
    while (p < offset && word_char_c(t[p])) p++;
    if (p == offset && ls > b) {
        keywords(it, map_kw);
        return;
    }
    /* a line of its own that starts with a keyword starts a new item even
     * when the one above lacks its `;` */
    for (uint32_t i = offset; i > b; i--) {
        if (t[i - 1] != '\n') continue;
        uint32_t k = i;
        while (k < offset && (t[k] == ' ' || t[k] == '\t')) k++;
        uint32_t e = k;
        while (e < offset && word_char_c(t[e])) e++;
        bool keyword = false;
        for (int j = 0; map_kw[j]; j++)
            if (e - k == strlen(map_kw[j]) && strncmp(t + k, map_kw[j], e - k) == 0) keyword = true;
        if (keyword) {
            b = k;
            break;
        }
    }
    while (b < offset && (t[b] == ' ' || t[b] == '\t' || t[b] == '\n' || t[b] == '\r')) b++;
    const char *line = arena_strndup(it->a, t + b, offset - b);
    size_t kw = 0;
    while (word_char_c(line[kw])) kw++;
    const Decl *arch = mapping_arch(d, x, offset), *op = mapping_op(d, x, offset);
    if (line[kw] == '\0') { /* still typing the first word */
        keywords(it, map_kw);
        return;
    }
    /* the last word before the cursor (complete, followed by a blank) */
    const char *end = line + strlen(line);
    const char *w = end;
    while (w > line && !word_char_c(w[-1])) w--;
    const char *ws = w;
    while (ws > line && word_char_c(ws[-1])) ws--;
    bool after_at = (size_t)(w - ws) == 2 && strncmp(ws, "at", 2) == 0 && w < end;
    bool colon = strchr(line, ':') != NULL;
    const char *comma = strrchr(line, ',');
    const char *arrow = strstr(comma ? comma : line, "->");
    int want = 0;
    const char *extra[5] = {NULL};
    const char *const *values = NULL; /* the words `overlap`, `objective`, `phase` take */
    int value_count = 0;
    if ((strncmp(line, "tile", kw) == 0 && kw == 4) ||
        (strncmp(line, "order", kw) == 0 && kw == 5)) {
        /* `tile LEVEL [for S, ...]: ...`: a level, then `for` or the
         * statements after it, then indices */
        bool for_list = strstr(line, " for ") != NULL && !colon;
        int words = 0;
        for (const char *p = line + kw; *p; p++)
            if (word_char_c(*p) && !word_char_c(p[-1])) words++;
        bool level_done = !colon && !for_list && words >= 1 && w < end;
        want = colon ? WANT_INDICES : for_list ? WANT_STMTS : level_done ? 0 : WANT_LEVELS;
        extra[0] = colon ? "?" : NULL;
        extra[1] = level_done ? "for" : NULL;
    } else if (strncmp(line, "spatial", kw) == 0 && kw == 7) {
        bool for_list = strstr(line, " for ") != NULL && !colon;
        /* `i -> (x, `: inside a dims list, still dims */
        const char *lp = strrchr(line, '('), *rp = strrchr(line, ')');
        if (lp && (!rp || rp < lp)) {
            const char *q = lp;
            while (q > line && (q[-1] == ' ' || q[-1] == '\t')) q--;
            if (q - line >= 2 && q[-2] == '-' && q[-1] == '>') arrow = q - 2;
        }
        /* `(m, `: inside a joint deal's indices, which take no hole */
        bool joint = lp && (!rp || rp < lp) && !arrow;
        want = for_list ? WANT_STMTS : arrow ? WANT_DIMS : WANT_INDICES;
        extra[0] = joint ? NULL : "?";
        extra[1] = !for_list && !arrow && !colon && !comma && !joint ? "for" : NULL;
    } else if (strncmp(line, "fuse", kw) == 0 && kw == 4) {
        want = after_at ? WANT_LEVELS : WANT_STMTS;
        extra[0] = "?";
        extra[1] = after_at ? NULL : "at";
    } else if (strncmp(line, "overlap", kw) == 0 && kw == 7) {
        /* `overlap WORD [reserve R of U];`: after the word, `reserve` */
        int words = 0;
        for (const char *p = line + kw; *p; p++)
            if ((word_char_c(*p) || *p == '?') && !word_char_c(p[-1]) && p[-1] != '?') words++;
        if (words >= 1 && w < end) {
            if (words == 1) extra[0] = "reserve"; /* units run the collectives (5.5) */
        } else {
            values = overlap_words;
            value_count = overlap_count;
            extra[0] = "?"; /* full or tiles, chosen (language.md 5.5) */
        }
    } else if (strncmp(line, "objective", kw) == 0 && kw == 9) {
        values = objective_words;
        value_count = objective_count;
    } else if (strncmp(line, "phase", kw) == 0 && kw == 5) {
        values = phase_words;
        value_count = phase_count;
    } else if (strncmp(line, "pipeline", kw) == 0 && kw == 8) {
        /* `pipeline DIM [1f1b | gpipe | interleaved V];` */
        int words = 0;
        for (const char *p = line + kw; *p; p++)
            if (word_char_c(*p) && !word_char_c(p[-1])) words++;
        if (words >= 1 && w < end) {
            values = pipe_schedule_words;
            value_count = pipe_schedule_count;
        } else {
            want = WANT_DIMS;
            extra[0] = "?"; /* the optimizer's choice (language.md 5.10) */
        }
    } else if (strncmp(line, "microbatches", kw) == 0 && kw == 12) {
        /* `microbatches N [of B];`, `microbatches ? of B;` */
        if (strstr(line, " of ")) {
            for (int i = 0; op && i < op->u.op.param_count; i++)
                item(it, op->u.op.params[i].name.name, CK_VARIABLE, "op parameter");
            return;
        }
        item(it, "?", CK_KEYWORD, "keyword");
        item(it, "of", CK_KEYWORD, "keyword");
        globals_of_kind(it, d, DK_CONST);
        return;
    } else if (strncmp(line, "serve", kw) == 0 && kw == 5) {
        /* `serve prefill|decode of B;` */
        if (strstr(line, " of ")) {
            for (int i = 0; op && i < op->u.op.param_count; i++)
                item(it, op->u.op.params[i].name.name, CK_VARIABLE, "op parameter");
            return;
        }
        int words = 0;
        for (const char *p = line + kw; *p; p++)
            if (word_char_c(*p) && !word_char_c(p[-1])) words++;
        if (words >= 1 && w < end) {
            item(it, "of", CK_KEYWORD, "keyword");
            return;
        }
        for (int i = 0; i < serve_kind_count; i++)
            if (serve_kind_ids[i] != SERVE_NONE)
                item(it, serve_kind_words[i], CK_KEYWORD, "serving step");
        return;
    } else if (strncmp(line, "recompute", kw) == 0 && kw == 9) {
        want = WANT_STMTS;
        extra[0] = "?";
        extra[1] = "full";
        extra[2] = "checkpoint";
        extra[3] = "none";
    } else if (strncmp(line, "online", kw) == 0 && kw == 6) {
        want = WANT_STMTS;
    } else if (strncmp(line, "repeat", kw) == 0 && kw == 6) {
        globals_of_kind(it, d, DK_CONST);
        return;
    } else {
        keywords(it, map_kw);
        return;
    }
    arch_names(it, d, arch, want & (WANT_LEVELS | WANT_DIMS), 0);
    op_names(it, op, false, want & (WANT_STMTS | WANT_INDICES));
    for (int i = 0; i < (int)(sizeof extra / sizeof extra[0]); i++)
        if (extra[i]) item(it, extra[i], CK_KEYWORD, "keyword");
    for (int i = 0; i < value_count; i++) item(it, values[i], CK_KEYWORD, "keyword");
}

static int by_label(const void *a, const void *b) {
    const char *x = json_string_value(json_object_get(*(json_t *const *)a, "label"));
    const char *y = json_string_value(json_object_get(*(json_t *const *)b, "label"));
    return strcmp(x ? x : "", y ? y : "");
}

/* Whether offset is inside one of the document's comments (after its
 * first character; a line comment runs to its line's end). */
static bool in_comment(const LspDoc *d, uint32_t offset) {
    const Module *m = d->module;
    for (int i = 0; m && i < m->comment_count; i++) {
        Span c = m->comments[i];
        bool line = c.end > c.start + 1 && d->file->text[c.start + 1] == '/';
        if (c.start < offset && (offset < c.end || (line && offset == c.end))) return true;
    }
    return false;
}

json_t *lsp_completion(LspServer *s, LspDoc *d, uint32_t offset) {
    /* typing "e.g." or "note:" in a comment offers nothing */
    if (in_comment(d, offset)) return json_pack("{s:b,s:[]}", "isIncomplete", 0, "items");
    Items it = {.arr = json_array(), .a = &d->arena};
    uint32_t from;
    if (use_completion(s, d, offset, &it, &from)) {
        /* folders list their files in any order: sort by label */
        size_t n = json_array_size(it.arr);
        json_t **v = ARENA_ARRAY(&d->arena, json_t *, n + 1);
        for (size_t i = 0; i < n; i++) v[i] = json_incref(json_array_get(it.arr, i));
        qsort(v, n, sizeof *v, by_label);
        json_t *sorted = json_array();
        /* each replaces the last segment of the path written so far
         * (after its last dot) with the rest of the module's path: clients
         * differ in what they take a word to be (`std.` is one in Emacs,
         * none in Vim), and some (ALE) insert the new text at their own
         * word's start whatever the range says, which the segment is */
        const char *t = d->file->text;
        uint32_t seg = offset;
        while (seg > from && t[seg - 1] != '.') seg--;
        size_t typed = seg - from;
        json_t *range = lsp_range_json(s, d->file, (Span){d->file->id, seg, offset});
        json_t *whole = lsp_range_json(s, d->file, (Span){d->file->id, from, offset});
        for (size_t i = 0; i < n; i++) {
            const char *label = json_string_value(json_object_get(v[i], "label"));
            bool prefixed = label && strlen(label) >= typed && strncmp(label, t + from, typed) == 0;
            const char *rest = prefixed ? label + typed : label ? label : "";
            json_object_set_new(
                v[i], "textEdit",
                json_pack("{s:O,s:s}", "range", prefixed ? range : whole, "newText", rest));
            json_object_set_new(v[i], "filterText", json_string(rest));
            json_array_append_new(sorted, v[i]);
        }
        json_decref(whole);
        json_decref(range);
        json_decref(it.arr);
        return json_pack("{s:b,s:o}", "isIncomplete", it.cut, "items", sorted);
    }
    /* the vocabularies of vocab.h; item() drops a word offered twice (`max`
     * is a function and a reduction, `energy` a memory's and a unit's key,
     * `cost` and `array` keywords before they are keys) */
    /* clang-format off */
    static const char *const top_kw[] = {CMT_DECL_KEYWORDS(VOCAB_WORD) NULL};
    static const char *const op_kw[] = {CMT_WORDS_OP_KEYWORDS NULL};
    static const char *const fns[] = {CMT_WORDS_FUNCTIONS NULL};
    static const char *const arch_kw[] = {CMT_WORDS_ARCH_KEYWORDS NULL};
    static const char *const arch_attrs[] = {CMT_WORDS_ATTRIBUTES NULL};
    /* clang-format on */
    int kind;
    const Decl *x = enclosing_decl(d, offset, &kind);
    switch (kind) {
    case DK_OP:
        keywords(&it, op_kw);
        op_names(&it, x, true, WANT_STMTS | WANT_INDICES);
        for (int i = 0; fns[i]; i++) item(&it, fns[i], CK_FUNCTION, "function");
        globals_of_kind(&it, d, DK_CONST);
        break;
    case DK_ARCH:
        keywords(&it, arch_kw);
        for (int i = 0; arch_attrs[i]; i++) item(&it, arch_attrs[i], CK_PROPERTY, "attribute");
        globals_of_kind(&it, d, DK_CONST);
        globals_of_kind(&it, d, DK_ARCH);
        break;
    case DK_MAPPING: {
        /* the header (`mapping NAME for OP<...> on ARCH<...>`) runs from
         * the word `mapping` to the first `{` */
        const char *t = d->file->text;
        uint32_t start = x ? x->span.start : offset;
        if (!x)
            for (uint32_t i = offset; i >= 7; i--)
                if (strncmp(t + i - 7, "mapping", 7) == 0 && (i == 7 || !word_char_c(t[i - 8]))) {
                    start = i - 7;
                    break;
                }
        const char *brace = start < offset ? memchr(t + start, '{', offset - start) : NULL;
        if (!brace) {
            mapping_header_completion(&it, d, start, offset);
            break;
        }
        mapping_line_completion(&it, d, x, offset);
        break;
    }
    default:
        keywords(&it, top_kw);
        globals_of_kind(&it, d, -1);
        break;
    }
    return json_pack("{s:b,s:o}", "isIncomplete", it.cut, "items", it.arr);
}

/* ---------------------------------------------------------- code actions */

/* The X of the first "did you mean `X`?" in a message, when X is a word. */
static const char *suggestion(Arena *a, const char *msg) {
    const char *p = msg ? strstr(msg, "did you mean `") : NULL;
    if (!p) return NULL;
    p += strlen("did you mean `");
    const char *q = strchr(p, '`');
    if (!q || q == p) return NULL;
    for (const char *c = p; c < q; c++)
        if (!word_char_c(*c)) return NULL;
    return arena_strndup(a, p, (size_t)(q - p));
}

/* A Position of a client's diagnostic as a byte offset (false when it is
 * not one). */
static bool client_offset(LspServer *s, LspDoc *d, json_t *pos, uint32_t *out) {
    json_t *l = json_object_get(pos, "line"), *c = json_object_get(pos, "character");
    if (!json_is_integer(l) || !json_is_integer(c)) return false;
    json_int_t li = json_integer_value(l), ci = json_integer_value(c);
    if (li < 0 || ci < 0 || li > UINT32_MAX || ci > UINT32_MAX) return false;
    *out = lsp_offset_of(d->file, (uint32_t)li, (uint32_t)ci, s->utf16);
    return true;
}

/* The server's own diagnostic a client's stands for: the same range and,
 * when the client gives one, the same code.  Nothing else of it is
 * trusted (ALE sends no `source`, clients may rewrap the message). */
static const Diag *own_diag(LspServer *s, LspDoc *d, json_t *g) {
    json_t *range = json_object_get(g, "range");
    uint32_t from, to;
    if (!client_offset(s, d, json_object_get(range, "start"), &from) ||
        !client_offset(s, d, json_object_get(range, "end"), &to))
        return NULL;
    json_t *jcode = json_object_get(g, "code");
    const char *code = json_string_value(jcode);
    for (int i = 0; i < d->diags.count; i++) {
        const Diag *own = d->diags.items[i];
        Span sp = lsp_diag_span(d, own);
        if (sp.start != from || sp.end != to) continue;
        if (jcode && (!code || !own->code || strcmp(code, own->code) != 0)) continue;
        return own;
    }
    return NULL;
}

json_t *lsp_code_actions(LspServer *s, LspDoc *d, json_t *params) {
    json_t *out = json_array();
    json_t *diags = json_object_get(json_object_get(params, "context"), "diagnostics");
    size_t i;
    json_t *g;
    json_array_foreach(diags, i, g) {
        const char *src = json_string_value(json_object_get(g, "source"));
        if (src && strcmp(src, "cmtc") != 0) continue; /* another tool's */
        const Diag *own = own_diag(s, d, g);
        /* a mistake of a used file is shown at the `use`: not a word to
         * replace here */
        if (!own || own->span.file != d->file->id) continue;
        const char *fix = NULL;
        for (int k = 0; k < own->help_count && !fix; k++)
            fix = suggestion(&d->arena, own->helps[k]);
        uint32_t from = own->span.start, to = own->span.end;
        if (!fix || to <= from || to > d->file->len) continue;
        /* only where the range is one word in the current text */
        bool word = true;
        for (uint32_t k = from; k < to; k++)
            if (!word_char_c(d->file->text[k])) word = false;
        if (!word ||
            (to - from == strlen(fix) && memcmp(d->file->text + from, fix, to - from) == 0))
            continue;
        json_t *edit = json_pack("{s:{s:[{s:o,s:o}]}}", "changes", d->uri, "range",
                                 lsp_range_json(s, d->file, own->span), "newText", lsp_jstr(fix));
        json_t *action =
            json_pack("{s:o,s:s,s:[O],s:b,s:o}", "title",
                      lsp_jstr(arena_printf(&d->arena, "Replace with `%s`", fix)), "kind",
                      "quickfix", "diagnostics", g, "isPreferred", 1, "edit", edit);
        json_array_append_new(out, action);
    }
    return out;
}

/* ------------------------------------------------------------ formatting */

json_t *lsp_formatting(LspServer *s, LspDoc *d, const char **why) {
    Arena scratch = {0};
    SourceManager sm;
    sources_init(&sm, &scratch);
    DiagSink diags;
    diags_init(&diags, &scratch);
    SourceFile *f = sources_add(&sm, d->path, d->file->text, d->file->len);
    size_t len = 0;
    char *out = f ? fmt_source(&scratch, &sm, f, &diags, &len) : NULL;
    json_t *result = NULL;
    *why = NULL;
    if (!out) {
        /* say why, with the first error: the editor shows the message
         * (a null result would leave the file as it is, silently) */
        diags_sort(&diags);
        const Diag *first = NULL;
        for (int i = 0; i < diags.count && !first; i++)
            if (diags.items[i]->severity == SEV_ERROR) first = diags.items[i];
        if (!f) {
            *why = "cannot format: the document is too large";
        } else if (first && first->span.file == f->id) {
            uint32_t line, col;
            source_line_col(f, first->span.start, &line, &col);
            bool syntax = first->code && strncmp(first->code, "E01", 3) == 0;
            *why =
                arena_printf(&d->arena, "cannot format: %s at line %u, column %u: %s%s%s%s",
                             syntax ? "the file has a syntax error" : "the formatter refused", line,
                             col, first->message ? first->message : "", first->code ? " [" : "",
                             first->code ? first->code : "", first->code ? "]" : "");
        } else {
            *why = "cannot format: the file has syntax errors";
        }
    } else if (len == d->file->len && memcmp(out, d->file->text, len) == 0) {
        result = json_array();
    } else {
        json_t *edit =
            json_pack("{s:o,s:o}", "range",
                      lsp_range_json(s, d->file, (Span){d->file->id, 0, (uint32_t)d->file->len}),
                      "newText", lsp_jstr(out));
        result = json_array();
        json_array_append_new(result, edit);
    }
    arena_free_all(&scratch);
    return result;
}

/* ----------------------------------------------------------- inlay hints */

/* The optimizer fills a mapping's holes in place, in a worker process
 * that has its own copy of the document (backend/lsp_worker.c), within a
 * time budget per mapping; the server caches its answer by the mapping's
 * key and shows each `?` followed by the value chosen. */
#define LSP_OPTIMIZE_SECONDS 2.0

/* The budget, which CMT_LSP_OPTIMIZE_SECONDS may raise for slow runs
 * (the test suite under valgrind runs about fifty times slower); a value
 * --time-limit would refuse (inf, nan, 0) keeps the default. */
double lsp_optimize_budget_s(void) {
    const char *env = getenv("CMT_LSP_OPTIMIZE_SECONDS");
    double v;
    return env && parse_time_limit(env, &v) ? v : LSP_OPTIMIZE_SECONDS;
}

typedef struct Hint {
    uint32_t at; /* byte offset just after the `?` */
    const char *label;
} Hint;

typedef struct HintSet {
    const IrMapping *m;
    Hint *hints;
    int count, cap;
    const char *tooltip;
} HintSet;

static void hint_add(Arena *a, HintSet *h, uint32_t at, const char *label) {
    if (!label || !label[0]) return;
    if (h->count == h->cap) {
        int cap = h->cap ? 2 * h->cap : 8;
        h->hints =
            arena_realloc(a, h->hints, sizeof(Hint) * (size_t)h->cap, sizeof(Hint) * (size_t)cap);
        h->cap = cap;
    }
    h->hints[h->count++] = (Hint){at, label};
}

/* The offset just after the last `?` inside sp (a whole-line hole). */
static uint32_t hole_end(const SourceFile *f, Span sp) {
    for (uint32_t i = sp.end; i > sp.start; i--)
        if (f->text[i - 1] == '?') return i;
    return sp.end;
}

/* The clauses of the complete mapping text that start with `prefix`,
 * joined with "; " ("tile SRAM:" -> "tile SRAM: m 64, n 1"). */
static const char *clauses(Arena *a, const char *text, const char *prefix) {
    Text b = {.a = a};
    size_t pn = strlen(prefix);
    const char *p = text;
    while (p && *p) {
        const char *e = strstr(p, "; ");
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 0 && p[n - 1] == ';') n--;
        if (strncmp(p, prefix, pn) == 0) text_add(&b, "%s%.*s", b.len ? "; " : "", (int)n, p);
        p = e ? e + 2 : NULL;
    }
    return b.buf;
}

static int stmt_id(const IrMapping *m, Name name) {
    return ir_find_stmt(m->op, name);
}

/* The head of a `tile` or `order` line as the completed mapping prints it
 * (backend/mapping_text.c): "tile GLB:", or for a `for` line "tile GLB for
 * C, D:" with its statements in source order; *first gets the first of
 * them, -1 for a mapping-wide line. */
static const char *line_head(Arena *a, const IrMapping *m, const MapItem *it, const char *kw,
                             int lv, int *first) {
    *first = -1;
    if (it->stmts.count == 0) return arena_printf(a, "%s %s:", kw, m->arch->levels[lv].name);
    const char *head = arena_printf(a, "%s %s for ", kw, m->arch->levels[lv].name);
    int n = 0;
    for (int st = 0; st < m->op->stmt_count; st++)
        for (int k = 0; k < it->stmts.count; k++)
            if (it->stmts.items[k].name && stmt_id(m, it->stmts.items[k].name) == st) {
                head = arena_printf(a, "%s%s%s", head, n++ ? ", " : "", m->op->stmts[st].name);
                if (*first < 0) *first = st;
                break;
            }
    return arena_printf(a, "%s:", head);
}

/* Which dims index `ix` is split over for the statements of `it` (all when
 * the line names none), as "x" or "(x, y)"; "none" when none. */
static const char *dims_of_index(Arena *a, const IrMapping *m, const MapItem *it, int ix) {
    int D = m->arch->dim_count;
    Text b = {.a = a};
    int n = 0;
    for (int d = 0; d < D; d++) {
        bool hit = false;
        for (int st = 0; st < m->op->stmt_count && !hit; st++) {
            if (it->stmts.count > 0) {
                bool named = false;
                for (int k = 0; k < it->stmts.count; k++)
                    if (stmt_id(m, it->stmts.items[k].name) == st) named = true;
                if (!named) continue;
            }
            if (m->spatial.split && m->spatial.split[st * D + d] == ix) hit = true;
        }
        if (hit) text_add(&b, "%s%s", n++ ? ", " : "", m->arch->dims[d].name);
    }
    if (n == 0) return "none";
    return n > 1 ? arena_printf(a, "(%s)", b.buf) : b.buf;
}

/* The index split over dim `d` for the statements of `it`. */
static const char *index_of_dim(const IrMapping *m, const MapItem *it, int d) {
    int D = m->arch->dim_count;
    for (int st = 0; st < m->op->stmt_count; st++) {
        if (it->stmts.count > 0) {
            bool named = false;
            for (int k = 0; k < it->stmts.count; k++)
                if (stmt_id(m, it->stmts.items[k].name) == st) named = true;
            if (!named) continue;
        }
        int ix = m->spatial.split ? m->spatial.split[st * D + d] : IR_UNSET;
        if (ix >= 0 && ix < m->op->index_count) return m->op->indices[ix].name;
    }
    return "none";
}

static void collect_hints(LspDoc *d, HintSet *h, const IrMapping *m, const char *text) {
    Arena *a = &d->arena;
    const SourceFile *f = d->file;
    const Decl *decl = decl_of(d, m->span);
    if (!decl) return;
    const MappingDecl *md = &decl->u.mapping;
    for (int i = 0; i < md->item_count; i++) {
        const MapItem *it = md->items[i];
        int lv = it->level.name ? ir_find_level(m->arch, it->level.name) : -1;
        switch (it->kind) {
        case MI_SPATIAL:
            if (it->whole_hole) {
                const char *c = clauses(a, text, "spatial");
                hint_add(a, h, hole_end(f, it->span), c && c[0] ? c : "no split");
                break;
            }
            for (int k = 0; k < it->assign_count; k++) {
                const SpatialAssign *as = &it->assigns[k];
                int ix = as->index.name ? ir_find_index(m->op, as->index.name) : -1;
                if (as->index.hole) {
                    int dim = as->dims.count > 0 && as->dims.items[0].name
                                  ? ir_find_dim(m->arch, as->dims.items[0].name)
                                  : -1;
                    if (dim >= 0) hint_add(a, h, as->index.span.end, index_of_dim(m, it, dim));
                }
                if (as->dims.count == 1 && as->dims.items[0].hole && ix >= 0)
                    hint_add(a, h, as->dims.items[0].span.end, dims_of_index(a, m, it, ix));
            }
            break;
        case MI_TILE: {
            if (lv < 0) break;
            int first;
            const char *head = line_head(a, m, it, "tile", lv, &first);
            if (it->whole_hole) {
                const char *c = clauses(a, text, head);
                hint_add(a, h, hole_end(f, it->span),
                         c && c[0] ? c : "the whole share of the level above");
                break;
            }
            for (int k = 0; k < it->tile_count; k++) {
                const TileEntry *te = &it->tiles[k];
                if (te->index.hole) {
                    hint_add(a, h, te->index.span.end, clauses(a, text, head));
                    continue;
                }
                int ix = te->index.name ? ir_find_index(m->op, te->index.name) : -1;
                if (ix >= 0 && te->size && te->size->kind == EX_HOLE) {
                    /* the line's entry: a statement it names, or one the
                     * mapping-wide line gives it to */
                    int st = first;
                    for (int q = 0; q < m->op->stmt_count && st < 0; q++)
                        if (m->tile.from[ir_tile_slot(m, q, lv, ix)] == 0) st = q;
                    int64_t v = st >= 0 ? m->tile.size[ir_tile_slot(m, st, lv, ix)] : 0;
                    hint_add(a, h, te->size->span.end,
                             v > 0 ? arena_printf(a, "%lld", (long long)v)
                                   : arena_printf(a, "%lld", (long long)m->op->indices[ix].extent));
                }
            }
            break;
        }
        case MI_ORDER:
            if (lv >= 0 && it->whole_hole) {
                int first;
                const char *c = clauses(a, text, line_head(a, m, it, "order", lv, &first));
                hint_add(a, h, hole_end(f, it->span), c && c[0] ? c : "the default order");
            }
            break;
        case MI_FUSE:
            if (it->whole_hole) {
                const char *c = clauses(a, text, "fuse");
                hint_add(a, h, hole_end(f, it->span), c && c[0] ? c : "no fusion");
            } else if (it->level.hole && it->stmts.count > 0 && m->fuse.group) {
                int st = stmt_id(m, it->stmts.items[0].name);
                int g = st >= 0 ? m->fuse.group[st] : -1;
                int l = g >= 0 && m->fuse.level ? m->fuse.level[g] : -1;
                if (l >= 0) hint_add(a, h, it->level.span.end, m->arch->levels[l].name);
            }
            /* `fuse ... overlap ?`: the group's overlap as chosen */
            if (it->value.hole && it->stmts.count > 0 && m->fuse.group && m->fuse.overlap) {
                int st = stmt_id(m, it->stmts.items[0].name);
                int g = st >= 0 ? m->fuse.group[st] : -1;
                int ov = g >= 0 ? m->fuse.overlap[g] : -1;
                if (ov >= 0) hint_add(a, h, hole_end(f, it->value.span), overlap_words[ov]);
            }
            break;
        case MI_OVERLAP:
            /* `overlap ?`: full or tiles, as the optimizer chose */
            if (it->value.hole)
                hint_add(a, h, hole_end(f, it->value.span), overlap_words[m->overlap]);
            break;
        default: break;
        }
    }
}

/* In the worker: the optimizer fills m (the worker's copy) and the
 * answer records what the server shows of it.  Hints go by hole: the
 * ordinal of the `?` they follow in the mapping's code, so that the
 * answer stays right when comments or blank lines around them change. */
json_t *lsp_optimize_answer(LspDoc *d, const IrMapping *checked) {
    Arena *a = &d->arena;
    /* the optimizer's own diagnostics (no feasible mapping, ...) are for
     * `cmtc compile`; the editor keeps showing the check's */
    DiagSink quiet;
    diags_init(&quiet, a);
    d->prog->diags = &quiet;
    OptimizeOptions opts;
    memset(&opts, 0, sizeof opts);
    opts.time_limit_s = lsp_optimize_budget_s();
    SolverReport report;
    memset(&report, 0, sizeof report);
    /* a complete mapping is costed as it is (for its code lens); one with
     * holes is filled into a new mapping, the document's IR unchanged */
    const IrMapping *m = complete_mapping(a, d->prog, checked, &opts, &report);
    const Decl *x = m ? decl_of(d, m->span) : NULL;
    bool ok = x != NULL;
    json_t *ans = json_object();
    json_object_set_new(ans, "ok", json_boolean(ok));
    json_object_set_new(ans, "status", json_string(solver_status_name(report.status)));
    if (!ok) return ans;
    const char *text = mapping_to_cmt(a, m);
    HintSet h = {.m = m};
    collect_hints(d, &h, m, text);
    int nh = scan_code(d->file->text, x->span.start, x->span.end, NULL, NULL, 0);
    uint32_t *ends = ARENA_ARRAY(a, uint32_t, nh + 1);
    scan_code(d->file->text, x->span.start, x->span.end, NULL, ends, nh);
    json_t *hints = json_array();
    for (int k = 0; k < h.count; k++) {
        int ord = -1;
        for (int j = 0; j < nh; j++)
            if (ends[j] <= h.hints[k].at) ord = j; /* the `?` it follows */
        if (ord >= 0)
            json_array_append_new(hints, json_pack("[i,o]", ord, lsp_jstr(h.hints[k].label)));
    }
    json_object_set_new(ans, "hints", hints);
    json_object_set_new(ans, "tooltip",
                        lsp_jstr(arena_printf(a, "chosen by the optimizer (%s, %s): %s",
                                              solver_status_name(report.status),
                                              objective_name(m->objective), text)));
    const Schedule *sc = lower_mapping(a, m, false, NULL);
    /* what hover shows of the complete mapping */
    EvalResult r;
    if (evaluate_mapping(m, a, &r) == EVAL_OK) {
        Text b = {.a = a};
        mapping_cost_text(&b, &r, true);
        json_object_set_new(ans, "hover", lsp_jstr(b.buf));
        /* and what its code lens shows */
        json_object_set_new(ans, "lens",
                            json_pack("{s:f,s:f,s:s,s:b,s:b}", "latency_s", r.cost.latency_s,
                                      "energy_j", r.cost.energy_j, "bound",
                                      bound_name(r.cost.bound), "feasible", r.feasible, "optimized",
                                      report.status != SOLVER_NOT_NEEDED));
        /* a serving step: its time per token (or to the first) and rate */
        if (sc && sc->serving.present) {
            json_object_set_new(
                json_object_get(ans, "lens"), "serving",
                lsp_jstr(
                    arena_printf(a, "%s %s · %.4g %s/s (B = %lld)", serve_step_short(m->serve.kind),
                                 unit_format(a, sc->serving.step_s, (UnitDim){BU_SECOND, BU_NONE}),
                                 sc->serving.per_s, serve_rate_words(m->serve.kind),
                                 (long long)m->serve.sequences)));
        }
    }
    if (sc) {
        json_t *stmts = json_object();
        for (int i = 0; i < m->op->stmt_count; i++) {
            Text b = {.a = a};
            stmt_cost_text(&b, m, sc, i, true);
            json_object_set_new(stmts, m->op->stmts[i].name, lsp_jstr(b.buf));
        }
        json_object_set_new(ans, "stmts", stmts);
    }
    return ans;
}

json_t *lsp_inlay_hints(LspServer *s, LspDoc *d, Span range, bool ask, int *missing) {
    json_t *out = json_array();
    *missing = 0;
    if (!d->prog) return out;
    for (int i = 0; i < d->prog->mapping_count; i++) {
        const IrMapping *m = d->prog->mappings[i];
        if (!m || m->span.file != d->file->id) continue;
        if (m->span.end < range.start || m->span.start > range.end) continue;
        /* only mappings with holes that check clean, whatever the rest of
         * the file */
        LspKey key;
        if (m->hole_count == 0 || !map_key(d, i, &key)) continue;
        json_t *ans = lsp_work_answer(s, key);
        if (!ans) {
            (*missing)++;
            if (ask) lsp_work_want(s, d, key);
            continue;
        }
        json_t *hints = json_object_get(ans, "hints");
        if (!json_is_true(json_object_get(ans, "ok")) || !json_is_array(hints)) continue;
        int nh = scan_code(d->file->text, m->span.start, m->span.end, NULL, NULL, 0);
        uint32_t *ends = ARENA_ARRAY(&d->arena, uint32_t, nh + 1);
        scan_code(d->file->text, m->span.start, m->span.end, NULL, ends, nh);
        json_t *tooltip = json_object_get(ans, "tooltip");
        size_t k;
        json_t *hint;
        json_array_foreach(hints, k, hint) {
            json_int_t ord = json_integer_value(json_array_get(hint, 0));
            const char *label = json_string_value(json_array_get(hint, 1));
            if (ord < 0 || ord >= nh || !label) continue;
            /* only the hints inside the range asked for */
            if (ends[ord] < range.start || ends[ord] > range.end) continue;
            uint32_t line, col;
            lsp_position_of(d->file, ends[ord], s->utf16, &line, &col);
            json_array_append_new(
                out, json_pack("{s:{s:I,s:I},s:o,s:b,s:o}", "position", "line", (json_int_t)line,
                               "character", (json_int_t)col, "label",
                               lsp_jstr(arena_printf(&d->arena, "= %s", label)), "paddingLeft", 1,
                               "tooltip", tooltip ? json_incref(tooltip) : json_string("")));
        }
    }
    return out;
}
