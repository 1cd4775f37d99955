/* lsp_wsymbols.c — workspace symbols: the ops, archs, mappings and consts
 * (with the tensors of ops and the levels, units and clusters of archs)
 * of every open document, the files they use, and the module files on
 * disk in the workspace, whose names match the query. */
#include "backend/lsp.h"

#include <stdlib.h>
#include <string.h>

/* More than this many matches is a query still being typed. */
#define WORKSPACE_SYMBOLS_MAX 1000

/* LSP SymbolKind */
enum {
    SK_NAMESPACE = 3,
    SK_CLASS = 5,
    SK_METHOD = 6,
    SK_FIELD = 8,
    SK_FUNCTION = 12,
    SK_VARIABLE = 13,
    SK_CONSTANT = 14,
    SK_OBJECT = 19
};

typedef struct Sym {
    Name name;
    int kind;
    const char *container;
    const char *path; /* normalised */
    const SourceFile *file;
    Span span;
} Sym;

typedef struct Collect {
    LspServer *s;
    Arena *a;
    const char *query;
    Sym *items;
    int count, cap;
} Collect;

static char lower(char c) {
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* The query's characters appear in the name in order, in any case
 * (`gsm` finds gemm_softmax), as editors filter. */
static bool matches(const char *query, const char *name) {
    for (; *query && *name; name++)
        if (lower(*query) == lower(*name)) query++;
    return *query == '\0';
}

static void add(Collect *c, const char *path, const SourceFile *f, Ident id, int kind,
                const char *container) {
    if (!id.name || id.span.file != f->id || !matches(c->query, id.name)) return;
    if (c->count == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        c->items =
            arena_realloc(c->a, c->items, sizeof(Sym) * (size_t)c->cap, sizeof(Sym) * (size_t)cap);
        c->cap = cap;
    }
    c->items[c->count++] = (Sym){id.name, kind, container, path, f, id.span};
}

static void module_symbols(Collect *c, const Module *m) {
    if (!m || !m->file) return;
    const SourceFile *f = m->file;
    const char *path = lsp_normalize_path(c->a, f->path);
    for (int i = 0; i < m->decl_count; i++) {
        const Decl *x = m->decls[i];
        switch (x->kind) {
        case DK_ERROR:
        case DK_USE: break;
        case DK_CONST: add(c, path, f, x->name, SK_CONSTANT, NULL); break;
        case DK_MAPPING:
        case DK_SWEEP: add(c, path, f, x->name, SK_OBJECT, NULL); break;
        case DK_MODEL: add(c, path, f, x->name, SK_OBJECT, NULL); break;
        case DK_OP:
            add(c, path, f, x->name, SK_FUNCTION, NULL);
            for (int k = 0; k < x->u.op.tensor_count; k++)
                add(c, path, f, x->u.op.tensors[k]->name, SK_VARIABLE, x->name.name);
            break;
        case DK_ARCH:
            add(c, path, f, x->name, SK_CLASS, NULL);
            for (int k = 0; k < x->u.arch.item_count; k++) {
                const ArchItem *it = x->u.arch.items[k];
                int kind = it->kind == AI_MEMORY    ? SK_FIELD
                           : it->kind == AI_COMPUTE ? SK_METHOD
                           : it->kind == AI_CLUSTER ? SK_NAMESPACE
                                                    : 0;
                if (kind) add(c, path, f, it->name, kind, x->name.name);
            }
            break;
        }
    }
}

static void disk_file(void *ctx, const char *path) {
    Collect *c = ctx;
    SourceManager *sm = ARENA_NEW(c->a, SourceManager);
    sources_init(sm, c->a);
    SourceFile *f = sources_load_module(sm, path);
    if (!f) return;
    DiagSink quiet;
    diags_init(&quiet, c->a);
    module_symbols(c, parse_module(c->a, f, &quiet));
}

static int by_name(const void *x, const void *y) {
    const Sym *a = x, *b = y;
    int k = strcmp(a->name, b->name);
    if (k) return k;
    k = strcmp(a->path, b->path);
    if (k) return k;
    return a->span.start < b->span.start ? -1 : a->span.start > b->span.start;
}

json_t *lsp_workspace_symbols(LspServer *s, const char *query) {
    Arena scratch = {0};
    Collect c = {s, &scratch, query, NULL, 0, 0};
    for (LspDoc *d = s->docs; d; d = d->next) {
        if (!d->open) continue;
        LspScope sc = lsp_doc_scope(d);
        for (int i = 0; i < sc.count; i++) module_symbols(&c, sc.mods[i]);
    }
    lsp_workspace_files(s, &scratch, disk_file, &c);
    if (c.count > 1) qsort(c.items, (size_t)c.count, sizeof(Sym), by_name);
    json_t *out = json_array();
    for (int i = 0, n = 0; i < c.count && n < WORKSPACE_SYMBOLS_MAX; i++) {
        const Sym *x = &c.items[i];
        /* a file used by several open documents was collected once each */
        if (i > 0 && by_name(x, &c.items[i - 1]) == 0) continue;
        n++;
        json_t *o = json_pack("{s:s,s:i,s:{s:s,s:o}}", "name", x->name, "kind", x->kind, "location",
                              "uri", lsp_uri_for_path(s, &scratch, x->path), "range",
                              lsp_range_json(s, x->file, x->span));
        if (x->container) json_object_set_new(o, "containerName", lsp_jstr(x->container));
        json_array_append_new(out, o);
    }
    arena_free_all(&scratch);
    return out;
}
