/* lsp_refs.c — find references, document highlight and rename.
 *
 * A symbol is named by its kind, its name and the declaration it belongs
 * to (an op for its tensors, indices and parameters, the declaring arch
 * for levels and dimensions), that declaration compared by kind, name and
 * file: the same file read by two programs (a document and another that
 * uses it) has two ASTs.  References look in every open document's
 * program and in every workspace file on disk that mentions the name
 * (lsp_workspace.c); rename edits them all, after refusing names that are
 * not identifiers, keywords, and names that would clash with one already
 * in scope. */
#include "backend/lsp.h"

#include <stdlib.h>
#include <string.h>

typedef struct SymKey {
    LspSym sym;
    Name name;
    Name owner_name;
    DeclKind owner_kind;
    const char *owner_path; /* normalised */
} SymKey;

static const char *sym_noun(LspSym sym) {
    switch (sym) {
    case LSYM_CONST: return "const";
    case LSYM_OP: return "op";
    case LSYM_ARCH: return "arch";
    case LSYM_MAPPING: return "mapping";
    case LSYM_PARAM: return "parameter";
    case LSYM_TENSOR: return "tensor";
    case LSYM_INDEX: return "index";
    case LSYM_LEVEL: return "level";
    case LSYM_UNIT: return "compute unit";
    case LSYM_CLUSTER: return "cluster";
    case LSYM_DIM: return "cluster dimension";
    case LSYM_FUNCTION: return "built-in function";
    case LSYM_ATTR: return "attribute";
    case LSYM_VALUE: return "word of the language";
    case LSYM_NUMBER: return "number";
    case LSYM_HOLE: return "hole";
    case LSYM_USE: return "module path";
    }
    return "name";
}

/* "an index", "a level" */
static const char *a_noun(Arena *a, LspSym sym) {
    const char *n = sym_noun(sym);
    return arena_printf(a, "%s %s", strchr("aeiou", n[0]) ? "an" : "a", n);
}

static bool is_symbol(LspSym sym) {
    return sym <= LSYM_DIM;
}

static const char *decl_path(Arena *a, LspScope sc, const Decl *x) {
    const char *p = x ? lsp_scope_path(sc, x->span.file) : NULL;
    return p ? lsp_normalize_path(a, p) : NULL;
}

static SymKey key_of(Arena *a, LspScope sc, const LspOccur *o) {
    return (SymKey){o->sym, o->name, o->owner->name.name, o->owner->kind,
                    decl_path(a, sc, o->owner)};
}

static bool same_decl(Arena *a, LspScope sc, const Decl *x, Name name, DeclKind kind,
                      const char *path) {
    if (!x || x->name.name != name || x->kind != kind) return false;
    const char *p = decl_path(a, sc, x);
    return p && strcmp(p, path) == 0;
}

static bool key_matches(Arena *a, LspScope sc, const SymKey *k, const LspOccur *o) {
    return o->sym == k->sym && o->name == k->name && o->owner &&
           same_decl(a, sc, o->owner, k->owner_name, k->owner_kind, k->owner_path);
}

/* The symbol under the cursor; NULL (with *why when it is a word that
 * cannot be renamed) when there is none. */
static bool symbol_at(LspDoc *d, uint32_t offset, LspOccur *o, const char **why) {
    *why = NULL;
    if (!lsp_occurrence_at(lsp_doc_scope(d), d->module, offset, o)) return false;
    if (!is_symbol(o->sym)) {
        *why = arena_printf(&d->arena, "cannot rename %s", a_noun(&d->arena, o->sym));
        return false;
    }
    if (!o->owner) {
        *why = arena_printf(&d->arena, "cannot rename `%s`: no %s of that name is declared",
                            o->name, sym_noun(o->sym));
        return false;
    }
    return true;
}

/* ------------------------------------------------------ every occurrence */

typedef struct Found {
    const char *path; /* normalised */
    const SourceFile *file;
    Span span;
    bool decl, write;
} Found;

typedef struct Search {
    LspServer *s;
    Arena *a;
    SymKey key;
    Found *found;
    int count, cap;
    /* the programs with an occurrence, for the clash checks of rename */
    LspScope *scopes;
    int scope_count, scope_cap;
    /* the walk in progress */
    LspScope sc;
    const Module *m;
    int hits;
} Search;

static void found_one(void *ctx, const LspOccur *o) {
    Search *q = ctx;
    if (!key_matches(q->a, q->sc, &q->key, o)) return;
    q->hits++;
    const char *path = lsp_normalize_path(q->a, q->m->file->path);
    for (int i = 0; i < q->count; i++)
        if (q->found[i].span.start == o->span.start && strcmp(q->found[i].path, path) == 0)
            return; /* the same file, seen through another program */
    if (q->count == q->cap) {
        int cap = q->cap ? 2 * q->cap : 32;
        q->found = arena_realloc(q->a, q->found, sizeof(Found) * (size_t)q->cap,
                                 sizeof(Found) * (size_t)cap);
        q->cap = cap;
    }
    q->found[q->count++] = (Found){path, q->m->file, o->span, o->decl, o->write};
}

static void search_program(void *ctx, LspScope sc, bool open) {
    (void)open;
    Search *q = ctx;
    q->sc = sc;
    q->hits = 0;
    for (int i = 0; i < sc.count; i++) {
        const Module *m = sc.mods[i];
        if (!m || !m->file || !lsp_text_has_word(m->file->text, m->file->len, q->key.name))
            continue;
        q->m = m;
        lsp_occurrences(sc, m, found_one, q);
    }
    if (q->hits == 0) return;
    if (q->scope_count == q->scope_cap) {
        int cap = q->scope_cap ? 2 * q->scope_cap : 8;
        q->scopes = arena_realloc(q->a, q->scopes, sizeof(LspScope) * (size_t)q->scope_cap,
                                  sizeof(LspScope) * (size_t)cap);
        q->scope_cap = cap;
    }
    q->scopes[q->scope_count++] = sc;
}

static int by_place(const void *x, const void *y) {
    const Found *a = x, *b = y;
    int c = strcmp(a->path, b->path);
    if (c) return c;
    return a->span.start < b->span.start ? -1 : a->span.start > b->span.start;
}

static void search(Search *q) {
    lsp_workspace_programs(q->s, q->a, q->key.name, search_program, q);
    if (q->count > 1) qsort(q->found, (size_t)q->count, sizeof(Found), by_place);
}

json_t *lsp_references(LspServer *s, LspDoc *d, uint32_t offset, bool with_declaration) {
    LspOccur o;
    const char *why;
    if (!symbol_at(d, offset, &o, &why)) return json_null();
    Arena scratch = {0};
    Search q = {.s = s, .a = &scratch};
    q.key = key_of(&scratch, lsp_doc_scope(d), &o);
    search(&q);
    json_t *out = json_array();
    for (int i = 0; i < q.count; i++) {
        if (q.found[i].decl && !with_declaration) continue;
        json_array_append_new(
            out, json_pack("{s:s,s:o}", "uri", lsp_uri_for_path(s, &scratch, q.found[i].path),
                           "range", lsp_range_json(s, q.found[i].file, q.found[i].span)));
    }
    arena_free_all(&scratch);
    return out;
}

/* ------------------------------------------------------- highlight */

typedef struct Highlight {
    LspServer *s;
    LspDoc *d;
    LspOccur target;
    json_t *out;
} Highlight;

enum { HIGHLIGHT_READ = 2, HIGHLIGHT_WRITE = 3 };

static void highlight_one(void *ctx, const LspOccur *o) {
    Highlight *h = ctx;
    if (o->sym != h->target.sym || o->name != h->target.name || o->owner != h->target.owner) return;
    json_array_append_new(
        h->out, json_pack("{s:o,s:i}", "range", lsp_range_json(h->s, h->d->file, o->span), "kind",
                          o->decl || o->write ? HIGHLIGHT_WRITE : HIGHLIGHT_READ));
}

json_t *lsp_document_highlight(LspServer *s, LspDoc *d, uint32_t offset) {
    LspOccur o;
    const char *why;
    if (!symbol_at(d, offset, &o, &why)) return json_null();
    Highlight h = {s, d, o, json_array()};
    lsp_occurrences(lsp_doc_scope(d), d->module, highlight_one, &h);
    return h.out;
}

/* ------------------------------------------------------------ rename */

static const char *invalid_name(Arena *a, const char *name) {
    size_t n = strlen(name);
    bool ok = n > 0 && n <= 256 &&
              ((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
               name[0] == '_');
    for (size_t i = 1; ok && i < n; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
             (name[i] >= '0' && name[i] <= '9') || name[i] == '_';
    if (!ok)
        return arena_printf(a,
                            "`%.64s` is not a name: a name starts with a letter or `_` and goes on "
                            "with letters, digits and `_`",
                            name);
    if (lsp_reserved_word(name, n)) return arena_printf(a, "`%s` is a keyword", name);
    return NULL;
}

typedef struct Clash {
    Name name;
    const Decl *in; /* only occurrences owned by this declaration count */
    bool arch_items;
    LspSym found_sym;
    bool found;
} Clash;

static void clash_one(void *ctx, const LspOccur *o) {
    Clash *c = ctx;
    if (c->found || o->name != c->name || o->owner != c->in) return;
    bool local = c->arch_items
                     ? (o->sym >= LSYM_LEVEL && o->sym <= LSYM_DIM && o->decl)
                     : (o->sym == LSYM_PARAM || o->sym == LSYM_TENSOR || o->sym == LSYM_INDEX);
    if (!local) return;
    c->found = true;
    c->found_sym = o->sym;
}

/* Whether decl x (an op, or an arch when arch_items) already gives `name`
 * to one of its own parameters, tensors and indices, or levels, units,
 * clusters and dimensions. */
static bool declares(LspScope sc, const Decl *x, Name name, bool arch_items, LspSym *what) {
    Module one = {(SourceFile *)lsp_scope_file(sc, x->span.file), (Decl **)&x, 1, NULL, 0};
    Clash c = {name, x, arch_items, LSYM_CONST, false};
    lsp_occurrences(sc, &one, clash_one, &c);
    *what = c.found_sym;
    return c.found;
}

/* Whether arch x is owner or extends it. */
static bool arch_extends(Arena *a, LspScope sc, const Decl *x, const SymKey *owner) {
    for (int depth = 0; x && depth <= 16; depth++) {
        if (same_decl(a, sc, x, owner->owner_name, DK_ARCH, owner->owner_path)) return true;
        x = x->u.arch.parent.name ? lsp_find_global(sc, x->u.arch.parent.name, DK_ARCH) : NULL;
    }
    return false;
}

static const char *clash_in_arch(Arena *a, LspScope sc, const SymKey *k, Name name) {
    for (int i = 0; i < sc.count; i++)
        for (int j = 0; sc.mods[i] && j < sc.mods[i]->decl_count; j++) {
            const Decl *x = sc.mods[i]->decls[j];
            if (x->kind != DK_ARCH || !arch_extends(a, sc, x, k)) continue;
            /* its own items and those of every arch it extends */
            const Decl *y = x;
            for (int depth = 0; y && depth <= 16; depth++) {
                LspSym what;
                if (declares(sc, y, name, true, &what))
                    return arena_printf(a, "arch `%s` already has %s `%s`", y->name.name,
                                        a_noun(a, what), name);
                y = y->u.arch.parent.name ? lsp_find_global(sc, y->u.arch.parent.name, DK_ARCH)
                                          : NULL;
            }
        }
    return NULL;
}

static const char *global_clash(Arena *a, LspScope sc, Name name) {
    const Decl *g = lsp_find_global(sc, name, -1);
    if (!g) return NULL;
    const char *path = lsp_scope_path(sc, g->span.file);
    return arena_printf(a, "%s `%s` is already declared (%s)",
                        g->kind == DK_OP        ? "op"
                        : g->kind == DK_ARCH    ? "arch"
                        : g->kind == DK_MAPPING ? "mapping"
                                                : "const",
                        name, path ? path : "?");
}

typedef struct Shadow {
    Name name;
    const SymKey *key;
    Arena *a;
    LspScope sc;
    const Decl *op; /* set when an occurrence sits in an op that has `name` */
} Shadow;

static void shadow_one(void *ctx, const LspOccur *o) {
    Shadow *sh = ctx;
    if (sh->op || !key_matches(sh->a, sh->sc, sh->key, o)) return;
    const Decl *in = o->in_decl;
    LspSym what;
    if (in && in->kind == DK_OP && declares(sh->sc, in, sh->name, false, &what)) sh->op = in;
}

/* Why renaming the symbol of key to name would change what a name means
 * somewhere, or NULL. */
static const char *rename_clash(Search *q, const LspOccur *target, LspScope doc_scope, Name name) {
    const SymKey *k = &q->key;
    Arena *a = q->a;
    switch (k->sym) {
    case LSYM_CONST:
    case LSYM_OP:
    case LSYM_ARCH:
    case LSYM_MAPPING:
        for (int i = 0; i < q->scope_count; i++) {
            const char *why = global_clash(a, q->scopes[i], name);
            if (why) return why;
            /* a const used inside an op with a parameter of the new name
             * would read the parameter instead */
            Shadow sh = {name, k, a, q->scopes[i], NULL};
            for (int m = 0; m < q->scopes[i].count && !sh.op; m++)
                lsp_occurrences(q->scopes[i], q->scopes[i].mods[m], shadow_one, &sh);
            if (sh.op)
                return arena_printf(a,
                                    "op `%s`, which uses `%s`, has a parameter, tensor or "
                                    "index `%s`",
                                    sh.op->name.name, k->name, name);
        }
        return NULL;
    case LSYM_PARAM:
    case LSYM_TENSOR:
    case LSYM_INDEX: {
        LspSym what;
        if (declares(doc_scope, target->owner, name, false, &what))
            return arena_printf(a, "op `%s` already has %s `%s`", target->owner->name.name,
                                a_noun(a, what), name);
        if (k->sym == LSYM_PARAM) {
            const char *why = global_clash(a, doc_scope, name);
            if (why) return arena_printf(a, "%s: the parameter would hide it", why);
        }
        return NULL;
    }
    default:
        for (int i = 0; i < q->scope_count; i++) {
            const char *why = clash_in_arch(a, q->scopes[i], k, name);
            if (why) return why;
        }
        return NULL;
    }
}

/* The checks both prepareRename and rename make. */
static bool renamable(LspServer *s, LspDoc *d, uint32_t offset, LspOccur *o, const char **why) {
    if (!symbol_at(d, offset, o, why)) {
        if (!*why) *why = "there is no name to rename here";
        return false;
    }
    const char *path = lsp_scope_path(lsp_doc_scope(d), o->owner->span.file);
    if (path && lsp_in_stdlib(s, lsp_normalize_path(&d->arena, path))) {
        *why = arena_printf(&d->arena,
                            "cannot rename `%s`: the %s is declared in the standard library (%s)",
                            o->name, sym_noun(o->sym), path);
        return false;
    }
    return true;
}

json_t *lsp_prepare_rename(LspServer *s, LspDoc *d, uint32_t offset, const char **why) {
    LspOccur o;
    if (!renamable(s, d, offset, &o, why)) return NULL;
    return json_pack("{s:o,s:s}", "range", lsp_range_json(s, d->file, o.span), "placeholder",
                     o.name);
}

json_t *lsp_rename(LspServer *s, LspDoc *d, uint32_t offset, const char *new_name,
                   const char **why) {
    LspOccur o;
    if (!renamable(s, d, offset, &o, why)) return NULL;
    const char *bad = invalid_name(&d->arena, new_name);
    if (bad) {
        *why = arena_printf(&d->arena, "cannot rename `%s` to `%.64s`: %s", o.name, new_name, bad);
        return NULL;
    }
    Name name = intern_cstr(new_name);
    Arena scratch = {0};
    Search q = {.s = s, .a = &scratch};
    q.key = key_of(&scratch, lsp_doc_scope(d), &o);
    search(&q);
    const char *clash = name == o.name ? NULL : rename_clash(&q, &o, lsp_doc_scope(d), name);
    for (int i = 0; i < q.count && !clash; i++)
        if (lsp_in_stdlib(s, q.found[i].path))
            clash = arena_printf(&scratch, "it is also named in the standard library (%s)",
                                 q.found[i].path);
    if (clash) {
        *why = arena_printf(&d->arena, "cannot rename %s `%s` to `%s`: %s", sym_noun(o.sym), o.name,
                            new_name, clash);
        arena_free_all(&scratch);
        return NULL;
    }
    json_t *changes = json_object();
    for (int i = 0; i < q.count; i++) {
        const char *uri = lsp_uri_for_path(s, &scratch, q.found[i].path);
        json_t *edits = json_object_get(changes, uri);
        if (!edits) {
            edits = json_array();
            json_object_set_new(changes, uri, edits);
        }
        json_array_append_new(edits, json_pack("{s:o,s:s}", "range",
                                               lsp_range_json(s, q.found[i].file, q.found[i].span),
                                               "newText", new_name));
    }
    arena_free_all(&scratch);
    return json_pack("{s:o}", "changes", changes);
}
