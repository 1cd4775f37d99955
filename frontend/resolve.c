/* resolve.c — check_program: loads the root file and every file it uses
 * (each parsed once), builds the global symbol table, evaluates constants,
 * then checks ops, archs and the root file's mappings. */
#include "sema.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The loader walks `use` depth first with an explicit stack (a chain of
 * any length needs no recursion). */
typedef struct UseFrame {
    const char *key;   /* canonical path of the module */
    const char *shown; /* path as shown to the user */
    Module *module;
    int next_decl;   /* the next declaration to look at for `use` */
    const Decl *use; /* the `use` being followed out of this module */
} UseFrame;

typedef struct Loader {
    Arena *arena;
    SourceManager *sm;
    DiagSink *diags;
    const CheckOptions *opts;
    PtrVec modules;    /* Module*, in load order (root first) */
    PtrVec keys;       /* const char*, canonical path of each module */
    PtrVec post_order; /* Module*, every module after the ones it uses */
    UseFrame *stack;
    int depth, cap;
} Loader;

/* ------------------------------------------------------------ paths */

static const char *dir_of(Arena *a, const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return ".";
    if (slash == path) return "/";
    return arena_strndup(a, path, (size_t)(slash - path));
}

static const char *path_join(Arena *a, const char *dir, const char *rel) {
    if (rel[0] == '/' || !dir[0] || strcmp(dir, ".") == 0) return arena_strdup(a, rel);
    size_t n = strlen(dir);
    return arena_printf(a, "%s%s%s", dir, dir[n - 1] == '/' ? "" : "/", rel);
}

/* Absolute path with `.` and `..` removed lexically (for the overlay,
 * which knows buffers that may not exist on disk). */
static const char *path_absolute(Arena *a, const char *path) {
    const char *full = path;
    if (path[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) return path;
        full = path_join(a, cwd, path);
    }
    size_t n = strlen(full);
    char *out = arena_alloc(a, n + 2);
    size_t len = 0;
    const char *p = full;
    while (*p) {
        while (*p == '/') p++;
        const char *seg = p;
        while (*p && *p != '/') p++;
        size_t seg_len = (size_t)(p - seg);
        if (seg_len == 0 || (seg_len == 1 && seg[0] == '.')) continue;
        if (seg_len == 2 && seg[0] == '.' && seg[1] == '.') {
            while (len > 0 && out[len - 1] != '/') len--;
            if (len > 0) len--;
            continue;
        }
        out[len++] = '/';
        memcpy(out + len, seg, seg_len);
        len += seg_len;
    }
    if (len == 0) out[len++] = '/';
    out[len] = '\0';
    return out;
}

/* The identity of a file: its real path when it exists on disk. */
static const char *path_key(Arena *a, const char *path) {
    char buf[PATH_MAX];
    if (realpath(path, buf)) return arena_strdup(a, buf);
    return path_absolute(a, path);
}

static bool is_regular_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *overlay_text(const Loader *ld, const char *path, size_t *len) {
    if (!ld->opts || !ld->opts->overlay) return NULL;
    return ld->opts->overlay(ld->opts->overlay_ctx, path_absolute(ld->arena, path), len);
}

static bool candidate_exists(const Loader *ld, const char *path) {
    size_t len;
    return overlay_text(ld, path, &len) || is_regular_file(path);
}

/* The `.cmt` file in the folders of `tried` whose name is closest to the
 * last component of the missing module, without its extension; NULL when
 * none is close. */
static const char *similar_module(Loader *ld, const PtrVec *tried, const char *wanted) {
    PtrVec names = {0};
    for (int i = 0; i < tried->count; i++) {
        DIR *dir = opendir(dir_of(ld->arena, (const char *)tried->items[i]));
        if (!dir) continue;
        struct dirent *ent;
        while ((ent = readdir(dir))) {
            size_t n = strlen(ent->d_name);
            if (n > 4 && strcmp(ent->d_name + n - 4, ".cmt") == 0)
                ptrvec_push(ld->arena, &names, arena_strndup(ld->arena, ent->d_name, n - 4));
        }
        closedir(dir);
    }
    return spell_suggest(wanted, (const char *const *)names.items, names.count);
}

static int compare_names(const void *x, const void *y) {
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static bool is_directory(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The usual near misses of a `use`, each with its fix: a path written
 * without `.cmt`, a module written with it, a folder named instead of a
 * file.  True when one was explained (no other suggestion is needed). */
static bool explain_near_miss(Loader *ld, const Decl *use, const char *written, const PtrVec *tried,
                              Diag *d) {
    Arena *a = ld->arena;
    size_t wlen = strlen(written);
    if (use->u.use.is_string) {
        const char *path = (const char *)tried->items[0];
        if (candidate_exists(ld, arena_printf(a, "%s.cmt", path))) {
            diag_help(d, ld->diags,
                      "did you mean `\"%s.cmt\"`? a path is written "
                      "with its extension",
                      written);
            return true;
        }
        if (is_directory(path)) {
            diag_note(d, ld->diags, "`%s` is a folder; `use` names a .cmt file in it", written);
            return true;
        }
        struct stat st;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            diag_note(d, ld->diags,
                      "`%s` exists but is not a regular file (a device, a pipe or a socket); "
                      "`use` reads .cmt files",
                      written);
            return true;
        }
        return false;
    }
    if (wlen > 4 && strcmp(written + wlen - 4, ".cmt") == 0) {
        diag_help(d, ld->diags, "a module is named without `.cmt`: `use %.*s;`", (int)(wlen - 4),
                  written);
        return true;
    }
    /* `use std.ops;`: the folder exists; list the modules in it */
    for (int i = 0; i < tried->count; i++) {
        const char *file = (const char *)tried->items[i];
        size_t n = strlen(file);
        if (n <= 4) continue;
        char *folder = arena_strndup(a, file, n - 4);
        if (!is_directory(folder)) continue;
        DIR *dir = opendir(folder);
        if (!dir) continue;
        PtrVec names = {0};
        struct dirent *ent;
        while ((ent = readdir(dir))) {
            size_t len = strlen(ent->d_name);
            if (len <= 4 || strcmp(ent->d_name + len - 4, ".cmt") != 0) continue;
            ptrvec_push(a, &names, arena_strndup(a, ent->d_name, len - 4));
        }
        closedir(dir);
        int count = names.count;
        if (count == 0) continue;
        qsort(names.items, (size_t)count, sizeof(void *), compare_names);
        const char *list = "";
        for (int k = 0; k < count && k < 8; k++)
            list = arena_printf(a, "%s%s`%s.%s`", list, k ? ", " : "", written,
                                (const char *)names.items[k]);
        diag_help(d, ld->diags, "`%s` is a folder of modules; name one: %s%s", written, list,
                  count > 8 ? ", ..." : "");
        return true;
    }
    return false;
}

/* ------------------------------------------------------------ loading */

static int find_loaded(const Loader *ld, const char *key) {
    for (int i = 0; i < ld->keys.count; i++)
        if (strcmp((const char *)ld->keys.items[i], key) == 0) return i;
    return -1;
}

static void report_cycle(Loader *ld, const Decl *use, int from) {
    const UseFrame *top = &ld->stack[ld->depth - 1];
    const char *chain = "";
    for (int i = from; i < ld->depth; i++)
        chain = arena_printf(ld->arena, "%s%s -> ", chain, ld->stack[i].shown);
    chain = arena_printf(ld->arena, "%s%s", chain, ld->stack[from].shown);
    Diag *d = diag_error(ld->diags, use->span, "E0204",
                         "`use` cycle: %s uses %s, which is already being "
                         "loaded",
                         top->shown, ld->stack[from].shown);
    for (int i = from; i < ld->depth - 1; i++)
        diag_label(d, ld->diags, ld->stack[i].use->span, "%s uses %s here", ld->stack[i].shown,
                   ld->stack[i + 1].shown);
    diag_note(d, ld->diags, "the chain is %s", chain);
    diag_help(d, ld->diags, "move what both files need into a third file that both use");
}

/* Resolves a `use`; on success returns the file to load and its key. */
static bool follow_use(Loader *ld, const char *using_path, const Decl *use, SourceFile **file_out,
                       const char **key_out) {
    Arena *a = ld->arena;
    const char *written = use->u.use.path;
    if (!written || !written[0]) return false; /* a parse error was reported */
    const char *using_dir = dir_of(a, using_path);
    PtrVec tried = {0};
    const char *found = NULL;
    if (use->u.use.is_string) {
        const char *cand = path_join(a, using_dir, written);
        ptrvec_push(a, &tried, (void *)cand);
        if (candidate_exists(ld, cand)) found = cand;
    } else {
        char *rel = arena_printf(a, "%s.cmt", written);
        for (char *c = rel; *c && strcmp(c, ".cmt") != 0; c++)
            if (*c == '.') *c = '/';
        PtrVec dirs = {0};
        ptrvec_push(a, &dirs, (void *)using_dir);
        if (ld->opts)
            for (int i = 0; i < ld->opts->include_count; i++)
                ptrvec_push(a, &dirs, (void *)ld->opts->include_dirs[i]);
        const char *env = getenv("CMT_PATH");
        if (env) {
            const char *p = env;
            while (*p) {
                const char *colon = strchr(p, ':');
                size_t n = colon ? (size_t)(colon - p) : strlen(p);
                if (n) ptrvec_push(a, &dirs, arena_strndup(a, p, n));
                p += n;
                if (*p == ':') p++;
            }
        }
        if (ld->opts && ld->opts->stdlib_dir) ptrvec_push(a, &dirs, (void *)ld->opts->stdlib_dir);
        for (int i = 0; i < dirs.count && !found; i++) {
            const char *cand = path_join(a, (const char *)dirs.items[i], rel);
            ptrvec_push(a, &tried, (void *)cand);
            if (candidate_exists(ld, cand)) found = cand;
        }
    }
    if (!found) {
        Diag *d = diag_error(ld->diags, use->name.span.file >= 0 ? use->name.span : use->span,
                             "E0203", "cannot find module `%s`", written);
        for (int i = 0; i < tried.count; i++)
            diag_note(d, ld->diags, "looked for %s", (const char *)tried.items[i]);
        if (explain_near_miss(ld, use, written, &tried, d)) return false;
        /* Suggest a module beside the ones looked for: compare the last
         * component (without `.cmt` for a path). */
        const char *sep = strrchr(written, use->u.use.is_string ? '/' : '.');
        int prefix_len = sep ? (int)(sep - written + 1) : 0;
        const char *last = written + prefix_len;
        size_t last_len = strlen(last);
        if (use->u.use.is_string && last_len > 4 && strcmp(last + last_len - 4, ".cmt") == 0)
            last = arena_strndup(a, last, last_len - 4);
        const char *similar = similar_module(ld, &tried, last);
        if (similar)
            diag_help(d, ld->diags, "did you mean `%.*s%s%s`?", prefix_len, written, similar,
                      use->u.use.is_string ? ".cmt" : "");
        else if (!use->u.use.is_string)
            diag_help(d, ld->diags, "add the folder that holds it with -I DIR or CMT_PATH");
        return false;
    }
    const char *key = path_key(a, found);
    for (int i = 0; i < ld->depth; i++)
        if (strcmp(ld->stack[i].key, key) == 0) {
            report_cycle(ld, use, i);
            return false;
        }
    if (find_loaded(ld, key) >= 0) return false;
    size_t len = 0;
    const char *text = overlay_text(ld, found, &len);
    SourceFile *file =
        text ? sources_add(ld->sm, found, text, len) : sources_load_module(ld->sm, found);
    if (!file) {
        diag_error(ld->diags, use->span, "E0203", "cannot read module `%s` (%s): %s", written,
                   found, sources_error_text(errno));
        return false;
    }
    *file_out = file;
    *key_out = key;
    return true;
}

static void push_module(Loader *ld, SourceFile *file, const char *key) {
    Module *m = parse_module(ld->arena, file, ld->diags);
    ptrvec_push(ld->arena, &ld->modules, m);
    ptrvec_push(ld->arena, &ld->keys, (void *)key);
    if (ld->depth == ld->cap) {
        int cap = ld->cap ? ld->cap * 2 : 16;
        ld->stack = arena_realloc(ld->arena, ld->stack, sizeof(UseFrame) * (size_t)ld->cap,
                                  sizeof(UseFrame) * (size_t)cap);
        ld->cap = cap;
    }
    ld->stack[ld->depth++] = (UseFrame){key, file->path, m, 0, NULL};
}

/* Loads the root and, depth first, every file it uses. */
static void load_all(Loader *ld, SourceFile *root, const char *key) {
    push_module(ld, root, key);
    while (ld->depth > 0) {
        UseFrame *f = &ld->stack[ld->depth - 1];
        if (f->next_decl >= f->module->decl_count) {
            ptrvec_push(ld->arena, &ld->post_order, f->module);
            ld->depth--;
            continue;
        }
        const Decl *d = f->module->decls[f->next_decl++];
        if (d->kind != DK_USE) continue;
        f->use = d;
        SourceFile *file;
        const char *file_key;
        if (follow_use(ld, f->shown, d, &file, &file_key)) push_module(ld, file, file_key);
    }
}

/* ------------------------------------------------------------- checking */

static Sema *sema_new(Program *p, Module **modules, int module_count, DiagSink *report_to) {
    Sema *s = ARENA_NEW(p->arena, Sema);
    s->prog = p;
    s->arena = p->arena;
    s->diags = p->diags;
    s->globals = globals_build(p->arena, modules, module_count, report_to);
    /* the op and arch caches sized once for every op and arch: growing by
     * doubling left the abandoned tables in the arena */
    int ops = 0, archs = 0;
    for (int i = 0; i < s->globals->count; i++) {
        ops += s->globals->entries[i].decl->kind == DK_OP;
        archs += s->globals->entries[i].decl->kind == DK_ARCH;
    }
    decl_cache_reserve(p->arena, &s->op_cache, ops);
    decl_cache_reserve(p->arena, &s->arch_cache, archs);
    s->env.arena = p->arena;
    s->env.sources = p->sources;
    s->env.globals = s->globals;
    s->env.where = subject("a constant");
    s->env.diags = report_to;
    const_eval_all(&s->env, modules, module_count);
    s->env.diags = p->diags;
    return s;
}

Sema *sema_for_program(Program *p, DiagSink *diags) {
    /* Names and constants were reported by check_program: rebuild them
     * quietly. */
    DiagSink *scratch = ARENA_NEW(p->arena, DiagSink);
    diags_init(scratch, p->arena);
    Sema *s = sema_new(p, p->modules, p->module_count, scratch);
    s->diags = diags;
    s->env.diags = diags;
    return s;
}

static bool same_value(Value a, Value b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
    case VK_INT: return a.i == b.i;
    case VK_REAL: return a.r == b.r;
    case VK_QUANTITY: return a.r == b.r && unit_dim_eq(a.dim, b.dim);
    case VK_ERROR: break;
    }
    return true;
}

/* The entry of an arch at parameter values `params` (NULL: the defaults'
 * entry), checking it when new. */
static ArchCacheEntry *arch_entry(Sema *s, const Decl *arch_decl, const ArchParams *params) {
    DeclCacheSlot *slot = decl_cache_slot(s->arena, &s->arch_cache, arch_decl);
    ArchCacheEntry *first = slot->entry;
    if (first && !params) return first;
    for (ArchCacheEntry *e = first ? first->next : NULL; params && e; e = e->next) {
        bool same = e->value_count == params->count;
        for (int i = 0; same && i < params->count; i++)
            same = same_value(e->values[i], params->values[i]);
        if (same) return e;
    }
    ArchCacheEntry *e = ARENA_NEW(s->arena, ArchCacheEntry);
    e->decl = arch_decl;
    if (!params) {
        slot->entry = e;
    } else {
        if (!first && arch_has_defaults(s, arch_decl)) first = arch_entry(s, arch_decl, NULL);
        if (!first) {
            /* no default instantiation: a head for the bound ones */
            first = ARENA_NEW(s->arena, ArchCacheEntry);
            first->decl = arch_decl;
            slot = decl_cache_slot(s->arena, &s->arch_cache, arch_decl);
            slot->entry = first;
        }
        e->values = params->values;
        e->value_count = params->count;
        e->next = first->next;
        first->next = e;
    }
    ArchParams defaults;
    if (!params) {
        /* the defaults; a default with a mistake leaves the arch unbuilt */
        if (!arch_bind_params(s, arch_decl, NULL, 0, arch_decl->name.span, &defaults)) {
            e->arch = e->partial = NULL;
            return e;
        }
        params = &defaults;
    }
    s->partial_arch = NULL;
    e->arch = check_arch(s, arch_decl, params);
    e->partial = e->arch ? e->arch : s->partial_arch;
    s->partial_arch = NULL;
    return e;
}

IrArch *sema_arch_for(Sema *s, const Decl *arch_decl) {
    if (!arch_has_defaults(s, arch_decl)) {
        ArchCacheEntry *head = decl_cache_slot(s->arena, &s->arch_cache, arch_decl)->entry;
        return head ? head->arch : NULL;
    }
    return arch_entry(s, arch_decl, NULL)->arch;
}

IrArch *sema_arch_bound(Sema *s, const Decl *arch_decl, const ParamBinding *bindings,
                        int binding_count, Span use_site) {
    bool defaults = arch_has_defaults(s, arch_decl);
    if (binding_count == 0 && defaults) return sema_arch_for(s, arch_decl);
    /* the defaults first: an arch with errors of its own is reported there */
    if (defaults && !sema_arch_for(s, arch_decl)) return NULL;
    ArchParams params;
    if (!arch_bind_params(s, arch_decl, bindings, binding_count, use_site, &params)) return NULL;
    return arch_entry(s, arch_decl, &params)->arch;
}

IrArch *sema_arch_names(Sema *s, const Decl *arch_decl) {
    sema_arch_for(s, arch_decl);
    ArchCacheEntry *e = decl_cache_slot(s->arena, &s->arch_cache, arch_decl)->entry;
    return e ? e->partial : NULL;
}

static void check_module_decls(Sema *s, Module *m, bool root) {
    Program *p = s->prog;
    for (int i = 0; i < m->decl_count; i++) {
        const Decl *d = m->decls[i];
        /* A duplicate name was reported; check only the first definition. */
        GlobalEntry *g = d->name.name ? globals_find(s->globals, d->name.name) : NULL;
        bool first = g && g->decl == d;
        switch (d->kind) {
        case DK_OP: {
            if (!first) break;
            bool ok = check_op_structure(s, d);
            bool all_defaults = true;
            for (int k = 0; k < d->u.op.param_count; k++)
                if (!d->u.op.params[k].default_value) all_defaults = false;
            if (ok && all_defaults) sema_op_for(s, d, NULL, SPAN_NONE);
            break;
        }
        case DK_ARCH: {
            /* an arch with a parameter without a default is built where a
             * mapping binds it */
            if (!first || !arch_has_defaults(s, d)) break;
            IrArch *a = sema_arch_for(s, d);
            if (a) {
                ptrvec_push(p->arena, &s->archs, a);
                p->archs = (const IrArch **)s->archs.items;
                p->arch_count = s->archs.count;
            }
            break;
        }
        case DK_SWEEP:
            if (root && first) check_sweep(s, d);
            break;
        case DK_MAPPING: {
            if (!root || !first) break;
            IrMapping *map = check_mapping(s, d);
            if (map) {
                ptrvec_push(p->arena, &s->mappings, map);
                p->mappings = (const IrMapping **)s->mappings.items;
                p->mapping_count = s->mappings.count;
            }
            break;
        }
        case DK_MODEL: break; /* after every mapping: check_models */
        case DK_USE:
        case DK_CONST:
        case DK_ERROR: break;
        }
    }
}

/* The root file's models, once all its mappings are checked. */
static void check_models(Sema *s, Module *m) {
    for (int i = 0; i < m->decl_count; i++) {
        const Decl *d = m->decls[i];
        GlobalEntry *g = d->name.name ? globals_find(s->globals, d->name.name) : NULL;
        if (d->kind == DK_MODEL && g && g->decl == d) check_model(s, d);
    }
}

static bool same_diag(const Diag *a, const Diag *b) {
    return a->severity == b->severity && strcmp(a->code, b->code) == 0 &&
           a->span.file == b->span.file && a->span.start == b->span.start &&
           a->span.end == b->span.end && strcmp(a->message, b->message) == 0;
}

/* An op instantiated by several mappings (or alone at its defaults) may
 * raise the same error each time: keep the first. */
static void drop_repeated_diags(DiagSink *d, int from) {
    int kept = from;
    for (int i = from; i < d->count; i++) {
        /* only errors repeat (warnings come from the once-per-op checks),
         * and errors are capped, so this stays small */
        bool repeated = false;
        for (int j = from; j < kept && !repeated && d->items[i]->severity == SEV_ERROR; j++)
            repeated = same_diag(d->items[j], d->items[i]);
        if (repeated) {
            if (d->items[i]->severity == SEV_ERROR) d->error_count--;
            continue;
        }
        d->items[kept++] = d->items[i];
    }
    d->count = kept;
}

/* Parses root and every file it uses into p's modules; the loader keeps
 * the order definitions are checked in. */
static Loader *load_modules(Program *p, SourceFile *root, const CheckOptions *opts) {
    Loader *ld = ARENA_NEW(p->arena, Loader);
    ld->arena = p->arena;
    ld->sm = p->sources;
    ld->diags = p->diags;
    ld->opts = opts;
    load_all(ld, root, path_key(p->arena, root->path));
    p->module_count = ld->modules.count;
    p->modules = (Module **)ld->modules.items;
    return ld;
}

static Program *program_new(Arena *arena, SourceManager *sm, DiagSink *diags) {
    Program *p = ARENA_NEW(arena, Program);
    p->arena = arena;
    p->sources = sm;
    p->diags = diags;
    return p;
}

Program *load_program(Arena *arena, SourceManager *sm, DiagSink *diags, SourceFile *root,
                      const CheckOptions *opts) {
    Program *p = program_new(arena, sm, diags);
    load_modules(p, root, opts);
    return p;
}

Program *check_program(Arena *arena, SourceManager *sm, DiagSink *diags, SourceFile *root,
                       const CheckOptions *opts) {
    Program *p = program_new(arena, sm, diags);
    int first_diag = diags->count;
    Loader *ld = load_modules(p, root, opts);
    /* Definitions in used files come first, so a clash is reported at the
     * definition in the file that uses them. */
    Module **dep_first = (Module **)ld->post_order.items;
    Sema *s = sema_new(p, dep_first, ld->post_order.count, diags);
    /* --set: each read as the axes of a sweep of its own */
    for (int i = 0; opts && i < opts->sweep_set_count; i++) {
        const char *text = arena_printf(arena, "sweep set { %s; }", opts->sweep_sets[i]);
        SourceFile *f = sources_add(sm, arena_printf(arena, "--set %d", i + 1), text, strlen(text));
        Module *m = f ? parse_module(arena, f, diags) : NULL;
        if (!m || m->decl_count != 1 || m->decls[0]->kind != DK_SWEEP) {
            if (m && !span_has_syntax_errors(diags, m->decls ? m->decls[0]->span : SPAN_NONE))
                diag_error(diags, SPAN_NONE, "E0117", "--set %d is not one sweep axis: `%s`", i + 1,
                           opts->sweep_sets[i]);
            continue;
        }
        const SweepDecl *sd = &m->decls[0]->u.sweep;
        /* an axis once: a second --set of it would silently replace the
         * first (in a file it is E0396) */
        bool again = false;
        for (int k = 0; k < sd->axis_count && !again; k++)
            for (int j = 0; j < s->set_axis_count && !again; j++)
                if (s->set_axes[j].kind == sd->axes[k].kind &&
                    s->set_axes[j].name.name == sd->axes[k].name.name) {
                    diag_error(diags, SPAN_NONE, "E0396", "--set %d gives axis `%s` again", i + 1,
                               sd->axes[k].name.name ? sd->axes[k].name.name : "?");
                    again = true;
                }
        if (again) continue;
        SweepAxisDecl *grown =
            ARENA_ARRAY(arena, SweepAxisDecl, s->set_axis_count + sd->axis_count + 1);
        if (s->set_axis_count)
            memcpy(grown, s->set_axes, sizeof(SweepAxisDecl) * (size_t)s->set_axis_count);
        memcpy(grown + s->set_axis_count, sd->axes, sizeof(SweepAxisDecl) * (size_t)sd->axis_count);
        s->set_axes = grown;
        s->set_axis_count += sd->axis_count;
    }

    check_module_decls(s, p->modules[0], true);
    for (int i = 1; i < p->module_count; i++) check_module_decls(s, p->modules[i], false);
    check_models(s, p->modules[0]);
    drop_repeated_diags(diags, first_diag);
    return p;
}
