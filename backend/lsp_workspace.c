/* lsp_workspace.c — the files of the workspace: its folders (from
 * initialize), the `.cmt` modules on disk under them, and the programs a
 * name may occur in (each open document's, and each file on disk that
 * mentions the name) for references, rename and workspace symbols. */
#include "backend/lsp.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

/* A search of the workspace stops this deep and after this many files: a
 * folder opened by mistake ($HOME) must not stall the server. */
#define WORKSPACE_DEPTH 8
#define WORKSPACE_FILES 4000

static bool ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool ident_char(char c) {
    return ident_start(c) || (c >= '0' && c <= '9');
}

bool lsp_module_file_name(const char *name, bool dotted) {
    size_t n = strlen(name);
    if (n <= 4 || strcmp(name + n - 4, ".cmt") != 0 || !ident_start(name[0])) return false;
    for (size_t i = 1; i + 4 < n; i++)
        if (!ident_char(name[i]) && (dotted || (name[i] != '-' && name[i] != '.'))) return false;
    return true;
}

bool lsp_text_has_word(const char *text, size_t len, const char *word) {
    size_t wn = strlen(word);
    if (wn == 0) return false;
    for (const char *p = text; p && (size_t)(p - text) + wn <= len;) {
        const char *hit = memchr(p, word[0], len - (size_t)(p - text));
        if (!hit || (size_t)(hit - text) + wn > len) return false;
        bool starts = hit == text || !ident_char(hit[-1]);
        bool ends = (size_t)(hit - text) + wn == len || !ident_char(hit[wn]);
        if (starts && ends && memcmp(hit, word, wn) == 0) return true;
        p = hit + 1;
    }
    return false;
}

static void add_root(LspServer *s, const char *uri_or_path, bool is_uri) {
    Arena *a = process_arena();
    char *path = is_uri ? lsp_uri_to_path(a, uri_or_path) : arena_strdup(a, uri_or_path);
    if (!path || !path[0]) return;
    path = lsp_normalize_path(a, path);
    for (int i = 0; i < s->root_count; i++)
        if (strcmp(s->roots[i], path) == 0) return;
    const char **roots = ARENA_ARRAY(a, const char *, s->root_count + 1);
    for (int i = 0; i < s->root_count; i++) roots[i] = s->roots[i];
    roots[s->root_count++] = path;
    s->roots = roots;
}

void lsp_workspace_set_roots(LspServer *s, json_t *params) {
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(params, "workspaceFolders"), i, f) {
        json_t *uri = json_object_get(f, "uri");
        if (json_is_string(uri)) add_root(s, json_string_value(uri), true);
    }
    /* rootUri and rootPath are the older spellings of one folder */
    json_t *root_uri = json_object_get(params, "rootUri");
    json_t *root_path = json_object_get(params, "rootPath");
    if (s->root_count == 0 && json_is_string(root_uri))
        add_root(s, json_string_value(root_uri), true);
    if (s->root_count == 0 && json_is_string(root_path))
        add_root(s, json_string_value(root_path), false);
}

bool lsp_in_stdlib(const LspServer *s, const char *path) {
    const char *lib = s->check.stdlib_dir;
    if (!lib || !lib[0] || !path) return false;
    Arena scratch = {0};
    const char *norm = lsp_normalize_path(&scratch, lib);
    size_t n = strlen(norm);
    bool inside = strncmp(path, norm, n) == 0 && (path[n] == '/' || path[n] == '\0');
    arena_free_all(&scratch);
    return inside;
}

typedef struct Scan {
    LspServer *s;
    Arena *a;
    int files;
    LspFileFn fn;
    void *ctx;
    const char **seen; /* paths already listed (roots may nest) */
    int seen_count, seen_cap;
} Scan;

static bool seen_before(Scan *sc, const char *path) {
    for (int i = 0; i < sc->seen_count; i++)
        if (strcmp(sc->seen[i], path) == 0) return true;
    if (sc->seen_count == sc->seen_cap) {
        int cap = sc->seen_cap ? 2 * sc->seen_cap : 64;
        sc->seen = arena_realloc(sc->a, sc->seen, sizeof(char *) * (size_t)sc->seen_cap,
                                 sizeof(char *) * (size_t)cap);
        sc->seen_cap = cap;
    }
    sc->seen[sc->seen_count++] = path;
    return false;
}

static void scan_dir(Scan *sc, const char *dir, int depth) {
    DIR *dd = opendir(dir);
    if (!dd) return;
    struct dirent *e;
    while ((e = readdir(dd)) != NULL && sc->files < WORKSPACE_FILES) {
        const char *n = e->d_name;
        /* dot files and folders: editor lock files (`.#x.cmt`), .git */
        if (n[0] == '.' || strcmp(n, "node_modules") == 0) continue;
        const char *full = arena_printf(sc->a, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, n);
        struct stat st;
        if (stat(full, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth > 0) scan_dir(sc, full, depth - 1);
        } else if (S_ISREG(st.st_mode) && lsp_module_file_name(n, false)) {
            sc->files++;
            if (!lsp_doc_by_path(sc->s, full) && !seen_before(sc, full)) sc->fn(sc->ctx, full);
        }
    }
    closedir(dd);
}

void lsp_workspace_files(LspServer *s, Arena *a, LspFileFn fn, void *ctx) {
    Scan sc = {.s = s, .a = a, .fn = fn, .ctx = ctx};
    for (int i = 0; i < s->root_count; i++) scan_dir(&sc, s->roots[i], WORKSPACE_DEPTH);
    if (s->root_count > 0) return;
    /* no workspace folder: the folders of the open documents, not below */
    for (LspDoc *d = s->docs; d; d = d->next) {
        if (!d->open || d->path[0] != '/') continue;
        const char *slash = strrchr(d->path, '/');
        const char *dir =
            slash == d->path ? "/" : arena_strndup(a, d->path, (size_t)(slash - d->path));
        scan_dir(&sc, dir, 0);
    }
}

typedef struct Programs {
    LspServer *s;
    Arena *a;
    Name word;
    LspProgramFn fn;
    void *ctx;
} Programs;

static void program_of_file(void *ctx, const char *path) {
    Programs *p = ctx;
    SourceManager *sm = ARENA_NEW(p->a, SourceManager);
    sources_init(sm, p->a);
    SourceFile *f = sources_load_module(sm, path);
    if (!f || (p->word && !lsp_text_has_word(f->text, f->len, p->word))) return;
    DiagSink *quiet = ARENA_NEW(p->a, DiagSink);
    diags_init(quiet, p->a);
    Program *prog = load_program(p->a, sm, quiet, f, &p->s->check);
    p->fn(p->ctx, (LspScope){prog->modules, prog->module_count}, false);
}

void lsp_workspace_programs(LspServer *s, Arena *a, Name word, LspProgramFn fn, void *ctx) {
    for (LspDoc *d = s->docs; d; d = d->next)
        if (d->open) fn(ctx, lsp_doc_scope(d), true);
    Programs p = {s, a, word, fn, ctx};
    lsp_workspace_files(s, a, program_of_file, &p);
}
