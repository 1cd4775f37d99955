/* main.c — cmtc's entry: dispatches subcommands and implements the two
 * that need nothing past the checker: `check` and `explain`. */
#include "commands.h"
#include "../passes/passes.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The pages of docs/errors, embedded at build time (build/gen/errors.c). */
typedef struct ErrorPage {
    const char *code;
    const char *text;
} ErrorPage;
extern const ErrorPage cmt_error_pages[];
extern const int cmt_error_page_count;

static const char usage_text[] =
    "usage: cmtc COMMAND [OPTIONS] [FILE...]\n"
    "\n"
    "commands:\n"
    "  check FILE...                diagnostics only; exit 1 on any error\n"
    "  compile FILE [-m MAPPING]    schedule listing for each (or one) mapping\n"
    "        [--format text|json|trace|dot] [-o OUT] [--baseline unfused]\n"
    "        [--objective latency|energy|edp] [--time-limit S] [--emit-lp FILE]\n"
    "        [--exhaustive] [--dump-ir=PASS]\n"
    "  fmt [--check] FILE...        canonical layout, comments kept\n"
    "  lsp                          language server on standard input/output\n"
    "  explain CODE                 the long explanation of a diagnostic code\n"
    "\n"
    "options for every command reading files:\n"
    "  -I DIR                       add DIR to the module search path\n"
    "  --diagnostics-format text|json\n"
    "\n"
    "exit codes: 0 success, 1 errors in the input, 2 usage or I/O failure,\n"
    "3 solver failure or time limit without a feasible mapping\n";

const char *stdlib_dir(void) {
    const char *env = getenv("CMT_STDLIB");
    if (env && *env) return env;
    /* An installed cmtc uses its share folder; a build tree uses its own. */
    if (access(CMT_STDLIB_DIR "/std", R_OK) == 0) return CMT_STDLIB_DIR;
    return CMT_SOURCE_STDLIB;
}

bool common_option(CommonOptions *o, int argc, char **argv, int *i, bool *bad) {
    const char *arg = argv[*i];
    if (strcmp(arg, "-I") == 0 || strncmp(arg, "-I", 2) == 0) {
        const char *dir = arg[2] ? arg + 2 : (*i + 1 < argc ? argv[++*i] : NULL);
        if (!dir) {
            fprintf(stderr, "cmtc: error: -I needs a folder\n");
            *bad = true;
        } else if (o->include_count == (int)(sizeof o->include_dirs / sizeof *o->include_dirs)) {
            fprintf(stderr, "cmtc: error: too many -I folders (at most 64)\n");
            *bad = true;
        } else {
            o->include_dirs[o->include_count++] = dir;
        }
        ++*i;
        return true;
    }
    const char *format = NULL;
    if (strcmp(arg, "--diagnostics-format") == 0) {
        format = *i + 1 < argc ? argv[++*i] : "";
    } else if (strncmp(arg, "--diagnostics-format=", 21) == 0) {
        format = arg + 21;
    }
    if (format) {
        if (strcmp(format, "json") == 0)
            o->json_diagnostics = true;
        else if (strcmp(format, "text") == 0)
            o->json_diagnostics = false;
        else {
            fprintf(stderr, "cmtc: error: --diagnostics-format takes text or json, got '%s'\n",
                    format);
            *bad = true;
        }
        ++*i;
        return true;
    }
    return false;
}

void common_check_options(const CommonOptions *o, CheckOptions *out) {
    memset(out, 0, sizeof *out);
    out->include_dirs = o->include_dirs;
    out->include_count = o->include_count;
    out->stdlib_dir = stdlib_dir();
}

void common_print_diags(const CommonOptions *o, const SourceManager *sm, DiagSink *d) {
    diags_sort(d);
    if (o->json_diagnostics)
        diags_render_json(stderr, sm, d);
    else
        diags_render_text(stderr, sm, d, (DiagRenderOptions){o->color});
}

static void init_common(CommonOptions *o) {
    memset(o, 0, sizeof *o);
    o->color = isatty(STDERR_FILENO) && !getenv("NO_COLOR");
}

/* Reads FILE (or standard input for "-"); NULL after printing why. */
SourceFile *load_root(SourceManager *sm, const char *path) {
    bool from_stdin = strcmp(path, "-") == 0;
    SourceFile *f =
        from_stdin ? sources_read_fd(sm, "<stdin>", STDIN_FILENO) : sources_load(sm, path);
    if (!f) {
        int err = errno;
        if (from_stdin)
            fprintf(stderr, "cmtc: error: cannot read standard input: %s\n",
                    sources_error_text(err));
        else
            fprintf(stderr, "cmtc: error: cannot read '%s': %s\n", path, sources_error_text(err));
    }
    return f;
}

/* The diagnostics of `d` not yet shown for an earlier file of the same run
 * (a file given on the command line and also used by another is checked
 * twice, but its mistakes are reported once). */
static DiagSink unseen_diags(const SourceManager *sm, DiagSink *d, PtrVec *seen) {
    DiagSink fresh = *d;
    fresh.items = ARENA_ARRAY(d->arena, Diag *, d->count + 1);
    fresh.count = 0;
    fresh.error_count = 0;
    for (int i = 0; i < d->count; i++) {
        Diag *g = d->items[i];
        const SourceFile *f = g->span.file >= 0 ? sources_get(sm, g->span.file) : NULL;
        Name key = intern_cstr(arena_printf(d->arena, "%s:%u:%u:%s:%s", f ? f->path : "",
                                            g->span.start, g->span.end, g->code, g->message));
        bool shown = false;
        for (int k = 0; k < seen->count && !shown; k++) shown = seen->items[k] == key;
        if (shown) continue;
        ptrvec_push(process_arena(), seen, (void *)key);
        fresh.items[fresh.count++] = g;
        if (g->severity == SEV_ERROR) fresh.error_count++;
    }
    return fresh;
}

/* Appends the JSON diagnostics of `d` to `all`, so that several files give
 * one JSON array. */
static void collect_json(json_t *all, const SourceManager *sm, const DiagSink *d) {
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return;
    diags_render_json(mem, sm, d);
    fclose(mem);
    json_t *items = json_loadb(text, len, 0, NULL);
    if (json_is_array(items)) json_array_extend(all, items);
    json_decref(items);
    free(text);
}

int cmd_check(int argc, char **argv) {
    CommonOptions common;
    init_common(&common);
    const char *files[argc > 0 ? argc : 1];
    int file_count = 0;
    bool bad = false;
    for (int i = 0; i < argc;) {
        if (common_option(&common, argc, argv, &i, &bad)) continue;
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "cmtc: error: unknown option '%s' for check\n", argv[i]);
            return EXIT_USAGE;
        }
        files[file_count++] = argv[i++];
    }
    if (bad) return EXIT_USAGE;
    if (file_count == 0) {
        fprintf(stderr, "cmtc: error: check needs at least one file\n%s", usage_text);
        return EXIT_USAGE;
    }
    int status = EXIT_OK;
    PtrVec seen = {0};
    json_t *all_json = common.json_diagnostics ? json_array() : NULL;
    for (int k = 0; k < file_count; k++) {
        Arena arena = {0};
        SourceManager sm;
        DiagSink diags;
        sources_init(&sm, &arena);
        diags_init(&diags, &arena);
        SourceFile *root = load_root(&sm, files[k]);
        if (!root) {
            status = EXIT_USAGE;
            arena_free_all(&arena);
            continue;
        }
        CheckOptions opts;
        common_check_options(&common, &opts);
        Program *program = check_program(&arena, &sm, &diags, root, &opts);
        if (program && diags.error_count == 0) check_mapping_capacity(program);
        diags_sort(&diags);
        DiagSink shown = unseen_diags(&sm, &diags, &seen);
        if (all_json)
            collect_json(all_json, &sm, &shown);
        else
            diags_render_text(stderr, &sm, &shown, (DiagRenderOptions){common.color});
        if (diags.error_count > 0 && status == EXIT_OK) status = EXIT_DIAGNOSTICS;
        arena_free_all(&arena);
    }
    if (all_json) {
        json_dumpf(all_json, stderr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', stderr);
        json_decref(all_json);
    }
    return status;
}

int cmd_explain(int argc, char **argv) {
    if (argc != 1) {
        fprintf(stderr, "cmtc: error: explain takes one diagnostic code, such as E0304\n");
        return EXIT_USAGE;
    }
    for (int i = 0; i < cmt_error_page_count; i++) {
        if (strcasecmp(cmt_error_pages[i].code, argv[0]) == 0) {
            fputs(cmt_error_pages[i].text, stdout);
            return EXIT_OK;
        }
    }
    const char *codes[cmt_error_page_count > 0 ? cmt_error_page_count : 1];
    for (int i = 0; i < cmt_error_page_count; i++) codes[i] = cmt_error_pages[i].code;
    fprintf(stderr, "cmtc: error: no diagnostic code '%s'", argv[0]);
    const char *near = spell_suggest(argv[0], codes, cmt_error_page_count);
    if (near) fprintf(stderr, "; did you mean %s?", near);
    fputc('\n', stderr);
    return EXIT_USAGE;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *command = argv[1];
    int sub_argc = argc - 2;
    char **sub_argv = argv + 2;
    if (strcmp(command, "check") == 0) return cmd_check(sub_argc, sub_argv);
    if (strcmp(command, "compile") == 0) return cmd_compile(sub_argc, sub_argv);
    if (strcmp(command, "fmt") == 0) return cmd_fmt(sub_argc, sub_argv);
    if (strcmp(command, "lsp") == 0) return cmd_lsp(sub_argc, sub_argv);
    if (strcmp(command, "explain") == 0) return cmd_explain(sub_argc, sub_argv);
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
        strcmp(command, "help") == 0) {
        fputs(usage_text, stdout);
        return EXIT_OK;
    }
    if (strcmp(command, "--version") == 0) {
        puts("cmtc 0.1.0 (.cmt language version 0)");
        return EXIT_OK;
    }
    static const char *const commands[] = {"check", "compile", "fmt", "lsp", "explain"};
    fprintf(stderr, "cmtc: error: unknown command '%s'", command);
    const char *near = spell_suggest(command, commands, 5);
    if (near) fprintf(stderr, "; did you mean '%s'?", near);
    fprintf(stderr, "\n%s", usage_text);
    return EXIT_USAGE;
}
