/* driver.c — cmtc's driver, inside the library: dispatches subcommands
 * through the command table of backend/options.c, applies the options
 * every command shares, and implements the commands that need nothing
 * past the checker: `check`, `explain` and `help`.  backend/main.c only
 * calls cmtc_main, so anything that links libcmt.a can run any command. */
#include "backend/commands.h"
#include "backend/options.h"
#include "passes/passes.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pages of docs/errors, embedded at build time (build/gen/errors.c). */
typedef struct ErrorPage {
    const char *code;
    const char *text;
} ErrorPage;
extern const ErrorPage cmt_error_pages[];
extern const int cmt_error_page_count;

/* Applies a common option (-I, --diagnostics-format, --diagnostics-output)
 * that a parser returned; false after printing why it is malformed. */
bool common_apply(CommonOptions *o, int id, const char *value) {
    switch (id) {
    case OPT_INCLUDE:
        if (!*value) {
            fprintf(stderr, "cmtc: error: -I needs a folder\n");
            return false;
        }
        {
            /* a folder that is not there (or a file) would be searched for
             * nothing: every module it was meant for reported missing */
            struct stat st;
            errno = 0;
            if (stat(value, &st) != 0 || !S_ISDIR(st.st_mode)) {
                fprintf(stderr, "cmtc: %s: -I '%s' is not a folder%s\n",
                        o->lenient_includes ? "warning" : "error", value,
                        errno == ENOENT ? " (it does not exist)" : "");
                if (!o->lenient_includes) return false;
            }
        }
        if (o->include_count == (int)(sizeof o->include_dirs / sizeof *o->include_dirs)) {
            fprintf(stderr, "cmtc: error: too many -I folders (at most 64)\n");
            return false;
        }
        o->include_dirs[o->include_count++] = value;
        return true;
    case OPT_DIAG_FORMAT:
        if (strcmp(value, "json") == 0 || strcmp(value, "text") == 0) {
            o->json_diagnostics = value[0] == 'j';
            return true;
        }
        fprintf(stderr, "cmtc: error: --diagnostics-format takes text or json, got '%s'\n", value);
        return false;
    case OPT_DIAG_OUTPUT:
        if (strcmp(value, "stdout") == 0 || strcmp(value, "stderr") == 0) {
            o->diagnostics_stdout = strcmp(value, "stdout") == 0;
            o->color = isatty(o->diagnostics_stdout ? STDOUT_FILENO : STDERR_FILENO) &&
                       !getenv("NO_COLOR");
            return true;
        }
        fprintf(stderr, "cmtc: error: --diagnostics-output takes stderr or stdout, got '%s'\n",
                value);
        return false;
    }
    return false;
}

bool common_option(CommonOptions *o, int argc, char **argv, int *i, bool *bad) {
    static const CommandSpec common_only = {"lsp", "", "", "", NULL, true, NULL};
    OptionParser p;
    options_init(&p, &common_only, argc, argv);
    p.i = *i;
    p.unknown_ok = true;
    int id = options_next(&p);
    if (id != OPT_INCLUDE && id != OPT_DIAG_FORMAT && id != OPT_DIAG_OUTPUT && id != OPT_BAD)
        return false;
    *i = p.i;
    if (id == OPT_BAD || !common_apply(o, id, p.value)) *bad = true;
    return true;
}

void common_check_options(const CommonOptions *o, CheckOptions *out) {
    memset(out, 0, sizeof *out);
    out->include_dirs = o->include_dirs;
    out->include_count = o->include_count;
    out->stdlib_dir = stdlib_dir();
}

FILE *common_diag_stream(const CommonOptions *o) {
    return o->diagnostics_stdout ? stdout : stderr;
}

void common_print_diags(const CommonOptions *o, const SourceManager *sm, DiagSink *d) {
    diags_sort(d);
    if (o->json_diagnostics)
        diags_render_json(common_diag_stream(o), sm, d);
    else
        diags_render_text(common_diag_stream(o), sm, d, (DiagRenderOptions){o->color});
}

void common_init(CommonOptions *o) {
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

/* The keys of diagnostics already shown: an open-addressed set of interned
 * names, so that a file with many diagnostics is not deduplicated in
 * quadratic time. */
typedef struct SeenSet {
    Name *slots;
    int count, cap;
} SeenSet;

/* Adds key; false when it was already there. */
static bool seen_add(SeenSet *s, Name key) {
    if (2 * (s->count + 1) > s->cap) {
        SeenSet grown = {NULL, 0, s->cap ? s->cap * 2 : 256};
        grown.slots = ARENA_ARRAY(process_arena(), Name, grown.cap);
        for (int i = 0; i < s->cap; i++)
            if (s->slots[i]) seen_add(&grown, s->slots[i]);
        *s = grown;
    }
    size_t mask = (size_t)s->cap - 1;
    size_t i = ((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15u & mask;
    while (s->slots[i]) {
        if (s->slots[i] == key) return false;
        i = (i + 1) & mask;
    }
    s->slots[i] = key;
    s->count++;
    return true;
}

/* The diagnostics of `d` not yet shown for an earlier file of the same run
 * (a file given on the command line and also used by another is checked
 * twice, but its mistakes are reported once). */
static DiagSink unseen_diags(const SourceManager *sm, DiagSink *d, SeenSet *seen) {
    DiagSink fresh = *d;
    fresh.items = ARENA_ARRAY(d->arena, Diag *, d->count + 1);
    fresh.count = 0;
    fresh.error_count = 0;
    for (int i = 0; i < d->count; i++) {
        Diag *g = d->items[i];
        const SourceFile *f = g->span.file >= 0 ? sources_get(sm, g->span.file) : NULL;
        Name key = intern_cstr(arena_printf(d->arena, "%s:%u:%u:%s:%s", f ? f->path : "",
                                            g->span.start, g->span.end, g->code, g->message));
        if (!seen_add(seen, key)) continue;
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
    common_init(&common);
    const CommandSpec *spec = command_find("check");
    const char *files[argc > 0 ? argc : 1];
    int file_count = 0;
    OptionParser op;
    options_init(&op, spec, argc, argv);
    for (int id; (id = options_next(&op)) != OPT_DONE;) {
        if (id == OPT_POSITIONAL) {
            files[file_count++] = op.value;
        } else if (id == OPT_HELP) {
            options_help(stdout, spec);
            return EXIT_OK;
        } else if (id == OPT_BAD || !common_apply(&common, id, op.value)) {
            options_usage_hint(stderr, spec);
            return EXIT_USAGE;
        }
    }
    if (file_count == 0) {
        fprintf(stderr, "cmtc: error: check needs at least one file\n");
        options_usage_hint(stderr, spec);
        return EXIT_USAGE;
    }
    int status = EXIT_OK;
    SeenSet seen = {0};
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
        /* every mapping that checked, whatever errors the rest of the file has */
        if (program) check_mapping_capacity(program);
        diags_sort(&diags);
        DiagSink shown = unseen_diags(&sm, &diags, &seen);
        if (all_json)
            collect_json(all_json, &sm, &shown);
        else
            diags_render_text(common_diag_stream(&common), &sm, &shown,
                              (DiagRenderOptions){common.color});
        if (diags.error_count > 0 && status == EXIT_OK) status = EXIT_DIAGNOSTICS;
        arena_free_all(&arena);
    }
    if (all_json) {
        json_dumpf(all_json, common_diag_stream(&common), JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', common_diag_stream(&common));
        json_decref(all_json);
    }
    return status;
}

int cmd_explain(int argc, char **argv) {
    if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        options_help(stdout, command_find("explain"));
        return EXIT_OK;
    }
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

/* `cmtc help [COMMAND]`: the general usage, or one command's options. */
int cmd_help(int argc, char **argv) {
    if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        options_help(stdout, command_find("help"));
        return EXIT_OK;
    }
    if (argc == 0) {
        options_general_usage(stdout);
        return EXIT_OK;
    }
    const CommandSpec *spec = argc == 1 ? command_find(argv[0]) : NULL;
    if (spec) {
        options_help(stdout, spec);
        return EXIT_OK;
    }
    if (argc > 1) {
        fprintf(stderr, "cmtc: error: help takes one command, got %d words\n", argc);
    } else {
        const char *names[16];
        int n = 0;
        for (int i = 0; i < cmt_command_count && n < 16; i++) names[n++] = cmt_commands[i].name;
        fprintf(stderr, "cmtc: error: no command '%s'", argv[0]);
        const char *near = spell_suggest(argv[0], names, n);
        if (near) fprintf(stderr, "; did you mean '%s'?", near);
        fputc('\n', stderr);
    }
    options_general_usage(stderr);
    return EXIT_USAGE;
}

/* `cmtc __vocab` (not in the help): the language's word lists as the
 * editor grammars and the language server's completion should offer them,
 * one `group: word ...` line each, all from frontend/util/vocab.h;
 * tests/suites/vocab.sh compares them with docs/editors/ and with what
 * completion answers. */
static int cmd_vocab(void) {
    /* clang-format off */
    static const char *const keyword[] = {CMT_DECL_KEYWORDS(VOCAB_WORD)
                                          CMT_OP_KEYWORDS(VOCAB_WORD)
                                          CMT_ARCH_KEYWORDS(VOCAB_WORD)
                                          CMT_MAPPING_ITEMS(VOCAB_NAME)
                                          CMT_MAPPING_KEYWORDS(VOCAB_WORD) NULL};
    static const char *const constant[] = {CMT_UNIT_KINDS(VOCAB_WORD)
                                           CMT_TOPOLOGIES(VOCAB_NAME)
                                           CMT_OVERLAPS(VOCAB_NAME)
                                           CMT_MEMORY_ROLES(VOCAB_NAME)
                                           CMT_OBJECTIVES(VOCAB_NAME)
                                           CMT_PHASES(VOCAB_NAME) NULL};
    static const char *const type[] = {CMT_ELEM_TYPES(VOCAB_ELEM_NAME) NULL};
    static const char *const function[] = {CMT_WORDS_FUNCTIONS NULL};
    static const char *const top[] = {CMT_DECL_KEYWORDS(VOCAB_WORD) NULL};
    static const char *const op[] = {CMT_WORDS_OP_KEYWORDS CMT_WORDS_FUNCTIONS NULL};
    static const char *const attribute[] = {CMT_WORDS_ATTRIBUTES NULL};
    static const char *const arch[] = {CMT_WORDS_ARCH_KEYWORDS CMT_WORDS_ATTRIBUTES NULL};
    static const char *const mapping[] = {CMT_MAPPING_ITEMS(VOCAB_NAME) NULL};
    static const char *const overlap[] = {CMT_OVERLAPS(VOCAB_NAME) "?", NULL}; /* `overlap ?` */
    static const char *const objective[] = {CMT_OBJECTIVES(VOCAB_NAME) NULL};
    static const char *const phase[] = {CMT_PHASES(VOCAB_NAME) NULL};
    /* clang-format on */
    static const struct {
        const char *group;
        const char *const *words;
    } groups[] = {
        {"grammar.keyword", keyword},  {"grammar.constant", constant},
        {"grammar.type", type},        {"grammar.function", function},
        {"complete.top", top},         {"complete.op", op},
        {"complete.arch", arch},       {"complete.mapping", mapping},
        {"complete.overlap", overlap}, {"complete.objective", objective},
        {"complete.phase", phase},     {"attribute", attribute},
    };
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        printf("%s:", groups[g].group);
        for (int i = 0; groups[g].words[i]; i++) printf(" %s", groups[g].words[i]);
        putchar('\n');
    }
    return EXIT_OK;
}

static int run_command(int argc, char **argv);

/* Whatever the command printed must have reached standard output: a full
 * disk or a closed pipe is an error (exit 2), said once.  The language
 * server's stdout is its protocol, whose end it answers itself. */
/* CMTC_OPT_BUDGET_MB (docs/optimizer.md) when set must be a budget the
 * optimizer can take, not a value it would quietly replace by its
 * default. */
static bool budget_env_ok(void) {
    const char *env = getenv("CMTC_OPT_BUDGET_MB");
    if (!env || !*env) return true;
    char *end;
    double mb = strtod(env, &end);
    if (!*end && mb >= 1 && mb < 1e9) return true;
    fprintf(stderr,
            "cmtc: error: CMTC_OPT_BUDGET_MB='%s' is not a memory budget: give MiB, a number "
            "from 1 to 10^9 (or unset it for the default)\n",
            env);
    return false;
}

int cmtc_main(int argc, char **argv) {
    if (!budget_env_ok()) return EXIT_USAGE;
    int status = run_command(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "lsp") == 0) return status;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (status != EXIT_USAGE)
            fprintf(stderr, "cmtc: error: cannot write standard output: %s\n",
                    errno ? strerror(errno) : "write error");
        status = EXIT_USAGE;
    }
    return status;
}

static int run_command(int argc, char **argv) {
    if (argc < 2) {
        options_general_usage(stderr);
        return EXIT_USAGE;
    }
    const char *command = argv[1];
    int sub_argc = argc - 2;
    char **sub_argv = argv + 2;
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0)
        return cmd_help(sub_argc, sub_argv);
    if (strcmp(command, "--version") == 0) {
        puts("cmtc 0.1.0 (.cmt language version 0)");
        return EXIT_OK;
    }
    if (strcmp(command, "__vocab") == 0 && sub_argc == 0) return cmd_vocab();
    const CommandSpec *spec = command_find(command);
    if (spec) {
        /* `cmtc COMMAND --help`, whatever else is on the line (help's own
         * --help is help's to answer) */
        if (spec->run != cmd_help && options_want_help(spec, sub_argc, sub_argv)) {
            options_help(stdout, spec);
            return EXIT_OK;
        }
        return spec->run(sub_argc, sub_argv);
    }
    const char *names[16];
    int n = 0;
    for (int i = 0; i < cmt_command_count && n < 16; i++) names[n++] = cmt_commands[i].name;
    fprintf(stderr, "cmtc: error: unknown command '%s'", command);
    const char *near = spell_suggest(command, names, n);
    if (near) fprintf(stderr, "; did you mean '%s'?", near);
    fputc('\n', stderr);
    options_general_usage(stderr);
    return EXIT_USAGE;
}
