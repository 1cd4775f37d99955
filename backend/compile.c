/* compile.c — `cmtc compile FILE`: checks the file, fills holes through
 * the optimizer hook, lowers each mapping (and its unfused baseline) and
 * hands the schedules to the emitter the --format asks for. */
#include "backend/commands.h"
#include "backend/emit.h"
#include "passes/verify.h"

#include <errno.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char compile_usage[] =
    "usage: cmtc compile FILE [-m MAPPING] [--format text|json|trace|dot] [-o OUT]\n"
    "       [--baseline unfused] [--objective latency|energy|edp] [--time-limit S]\n"
    "       [--emit-lp FILE] [--exhaustive] [--verify] [--dump-ir=PASS] [-I DIR]\n"
    "       [--diagnostics-format text|json]\n";

typedef enum Format { FMT_TEXT, FMT_JSON, FMT_TRACE, FMT_DOT } Format;

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* --time-eval N: the median and fastest of N timed calls of
 * evaluate_mapping (the optimizer's inner loop), one line per mapping. */
static void time_evaluation(FILE *out, const IrMapping *m, int runs) {
    double *t = malloc(sizeof(double) * (size_t)runs);
    if (!t) return;
    EvalResult r;
    for (int i = 0; i < runs; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        evaluate_mapping(m, NULL, &r);
        clock_gettime(CLOCK_MONOTONIC, &b);
        t[i] = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    }
    qsort(t, (size_t)runs, sizeof *t, compare_doubles);
    fprintf(out, "%s: evaluate median %.2f us, fastest %.2f us over %d runs (latency %.6g s)\n",
            m->name, t[runs / 2] * 1e6, t[0] * 1e6, runs, r.latency_s);
    free(t);
}

/* Do two paths name one file?  By device and inode when both exist. */
static bool same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return strcmp(a, b) == 0;
}

static bool take_value(int argc, char **argv, int *i, const char *flag, const char **out) {
    size_t n = strlen(flag);
    if (strcmp(argv[*i], flag) == 0) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "cmtc: error: %s needs a value\n", flag);
            *out = NULL;
            *i += 1;
            return true;
        }
        *out = argv[*i + 1];
        *i += 2;
        return true;
    }
    if (strncmp(argv[*i], flag, n) == 0 && argv[*i][n] == '=') {
        *out = argv[*i] + n + 1;
        *i += 1;
        return true;
    }
    return false;
}

int cmd_compile(int argc, char **argv) {
    CommonOptions common;
    memset(&common, 0, sizeof common);
    common.color = isatty(STDERR_FILENO) && !getenv("NO_COLOR");
    CompileOptions copts;
    memset(&copts, 0, sizeof copts);
    copts.dump_out = stderr;
    const char *file = NULL, *only = NULL, *out_path = NULL;
    Format format = FMT_TEXT;
    int time_runs = 0;
    bool bad = false, verify = false;
    for (int i = 0; i < argc && !bad;) {
        const char *v = NULL;
        if (common_option(&common, argc, argv, &i, &bad)) continue;
        if (take_value(argc, argv, &i, "-m", &v) || take_value(argc, argv, &i, "--mapping", &v)) {
            if (!v) bad = true;
            only = v;
        } else if (take_value(argc, argv, &i, "-o", &v)) {
            if (!v) bad = true;
            out_path = v;
        } else if (take_value(argc, argv, &i, "--format", &v)) {
            if (!v)
                bad = true;
            else if (strcmp(v, "text") == 0)
                format = FMT_TEXT;
            else if (strcmp(v, "json") == 0)
                format = FMT_JSON;
            else if (strcmp(v, "trace") == 0)
                format = FMT_TRACE;
            else if (strcmp(v, "dot") == 0)
                format = FMT_DOT;
            else {
                fprintf(stderr, "cmtc: error: --format takes text, json, trace or dot, got '%s'\n",
                        v);
                bad = true;
            }
        } else if (take_value(argc, argv, &i, "--baseline", &v)) {
            if (!v || strcmp(v, "unfused") != 0) {
                fprintf(stderr, "cmtc: error: --baseline takes unfused, got '%s'\n", v ? v : "");
                bad = true;
            }
        } else if (take_value(argc, argv, &i, "--objective", &v)) {
            copts.objective_given = true;
            if (!v)
                bad = true;
            else if (strcmp(v, "latency") == 0)
                copts.objective = OBJ_LATENCY;
            else if (strcmp(v, "energy") == 0)
                copts.objective = OBJ_ENERGY;
            else if (strcmp(v, "edp") == 0)
                copts.objective = OBJ_EDP;
            else {
                fprintf(stderr, "cmtc: error: --objective takes latency, energy or edp, got '%s'\n",
                        v);
                bad = true;
            }
        } else if (take_value(argc, argv, &i, "--time-limit", &v)) {
            if (!v || !parse_time_limit(v, &copts.time_limit_s)) {
                fprintf(stderr,
                        "cmtc: error: --time-limit takes a number of seconds above 0 and at most "
                        "%.0f, got '%s'\n",
                        TIME_LIMIT_MAX_S, v ? v : "");
                bad = true;
            }
        } else if (take_value(argc, argv, &i, "--emit-lp", &v)) {
            if (!v) bad = true;
            copts.emit_lp_path = v;
        } else if (take_value(argc, argv, &i, "--dump-ir", &v)) {
            if (!v || !pass_name_known(v)) {
                fprintf(stderr, "cmtc: error: --dump-ir takes a pass name (");
                for (int k = 0; k < pass_count; k++)
                    fprintf(stderr, "%s%s", k ? ", " : "", pass_names[k]);
                fprintf(stderr, "), got '%s'\n", v ? v : "");
                bad = true;
            }
            copts.dump_after = v;
        } else if (take_value(argc, argv, &i, "--time-eval", &v)) {
            time_runs = v ? atoi(v) : 0;
            if (time_runs < 1) {
                fprintf(stderr, "cmtc: error: --time-eval takes a number of runs, got '%s'\n",
                        v ? v : "");
                bad = true;
            }
        } else if (strcmp(argv[i], "--exhaustive") == 0) {
            copts.exhaustive = true;
            i++;
        } else if (strcmp(argv[i], "--verify") == 0) {
            verify = true;
            i++;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "cmtc: error: unknown option '%s' for compile\n", argv[i]);
            bad = true;
        } else if (file) {
            fprintf(stderr, "cmtc: error: compile takes one file, got '%s' and '%s'\n", file,
                    argv[i]);
            bad = true;
        } else {
            file = argv[i++];
        }
    }
    if (!bad && !file) {
        fprintf(stderr, "cmtc: error: compile needs a file\n");
        bad = true;
    }
    if (!bad && out_path && copts.emit_lp_path && same_file(out_path, copts.emit_lp_path)) {
        fprintf(stderr, "cmtc: error: -o and --emit-lp name the same file '%s'\n", out_path);
        bad = true;
    }
    if (bad) {
        fputs(compile_usage, stderr);
        return EXIT_USAGE;
    }

    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    sources_init(&sm, &arena);
    diags_init(&diags, &arena);
    SourceFile *root = load_root(&sm, file);
    if (!root) {
        arena_free_all(&arena);
        return EXIT_USAGE;
    }
    CheckOptions chk;
    common_check_options(&common, &chk);
    Program *p = check_program(&arena, &sm, &diags, root, &chk);
    /* -o and --emit-lp must not overwrite a file that was read, however
     * it is spelt (compared by device and inode, modules included) */
    const char *output_flags[] = {"-o", "--emit-lp"};
    const char *outputs[] = {out_path && strcmp(out_path, "-") != 0 ? out_path : NULL,
                             copts.emit_lp_path};
    for (int k = 0; k < 2; k++) {
        const SourceFile *input = outputs[k] ? output_names_source(&sm, outputs[k]) : NULL;
        if (input) {
            fprintf(stderr, "cmtc: error: %s '%s' is the input file %s; refusing to overwrite it\n",
                    output_flags[k], outputs[k], input->path);
            arena_free_all(&arena);
            return EXIT_USAGE;
        }
    }
    if (!p || diags.error_count > 0) {
        common_print_diags(&common, &sm, &diags);
        arena_free_all(&arena);
        return EXIT_DIAGNOSTICS;
    }
    if (only) {
        bool found = false;
        const char **names = ARENA_ARRAY(&arena, const char *, p->mapping_count + 1);
        for (int i = 0; i < p->mapping_count; i++) {
            names[i] = p->mappings[i]->name;
            found |= strcmp(names[i], only) == 0;
        }
        if (!found) {
            fprintf(stderr, "cmtc: error: no mapping '%s' in %s", only, file);
            const char *near = spell_suggest(only, names, p->mapping_count);
            if (near) fprintf(stderr, "; did you mean %s?", near);
            fputc('\n', stderr);
            arena_free_all(&arena);
            return EXIT_USAGE;
        }
    }
    CompileOutput out = {file, ARENA_ARRAY(&arena, MappingResult, p->mapping_count + 1), 0, &arena};
    int status = EXIT_OK;
    for (int i = 0; i < p->mapping_count; i++) {
        IrMapping *m = p->mappings[i];
        if (only && strcmp(m->name, only) != 0) continue;
        if (copts.objective_given) {
            m->objective = copts.objective;
            m->objective_given = true;
        }
        MappingResult *r = &out.items[out.count];
        if (report_unsupported(p, m)) {
            if (status < EXIT_DIAGNOSTICS) status = EXIT_DIAGNOSTICS;
            continue;
        }
        if (!complete_mapping(p, m, &copts, &r->solver)) {
            int code = r->solver.status == SOLVER_NOT_NEEDED ? EXIT_DIAGNOSTICS : EXIT_SOLVER;
            if (code > status) status = code;
            continue;
        }
        r->m = m;
        r->sched = lower_mapping(&arena, m, true, &copts);
        int before = diags.error_count;
        report_capacity(r->sched, &diags);
        if (diags.error_count > before) {
            if (status < EXIT_DIAGNOSTICS) status = EXIT_DIAGNOSTICS;
            continue;
        }
        r->baseline = lower_mapping(&arena, unfused_mapping(&arena, m), false, NULL);
        r->mapping_text = mapping_to_cmt(&arena, m);
        out.count++;
    }
    /* Any error diagnostic means exit 1, even when the mapping was still
     * produced; the --emit-lp file not written (E0374) is an I/O failure,
     * 2; a solver failure (3) stays the higher code. */
    if (diags.error_count > 0 && status < EXIT_DIAGNOSTICS) status = EXIT_DIAGNOSTICS;
    for (int i = 0; i < diags.count && status < EXIT_USAGE; i++)
        if (diags.items[i]->code && strcmp(diags.items[i]->code, "E0374") == 0) status = EXIT_USAGE;
    common_print_diags(&common, &sm, &diags);
    FILE *dest = stdout;
    OutputFile out_file;
    if (out_path && strcmp(out_path, "-") != 0) {
        /* OUT is replaced only by a successful compile: a failed one
         * leaves the previous output whole instead of empty or partial */
        if (status != EXIT_OK) {
            fprintf(stderr, "cmtc: note: '%s' is left as it was: the compile failed\n", out_path);
            arena_free_all(&arena);
            return status;
        }
        if (!output_open(&out_file, &arena, out_path)) {
            fprintf(stderr, "cmtc: error: cannot write '%s': %s\n", out_path, strerror(errno));
            arena_free_all(&arena);
            return EXIT_USAGE;
        }
        dest = out_file.stream;
    }
    if (time_runs > 0) {
        for (int k = 0; k < out.count; k++) time_evaluation(dest, out.items[k].m, time_runs);
    } else if (out.count > 0 || format != FMT_TEXT) {
        switch (format) {
        case FMT_TEXT: emit_listing(dest, &out); break;
        case FMT_JSON: emit_json(dest, &out); break;
        case FMT_TRACE: emit_trace(dest, &out); break;
        case FMT_DOT: emit_dot(dest, &out); break;
        }
    }
    /* --verify: the reference interpreter after the listing (on stderr
     * when the output is JSON, a trace or a graph); disagreements exit 1 */
    for (int k = 0; verify && k < out.count; k++)
        if (verify_print(format == FMT_TEXT ? dest : stderr, &arena, out.items[k].sched) > 0 &&
            status < EXIT_DIAGNOSTICS)
            status = EXIT_DIAGNOSTICS;
    if (dest != stdout) {
        if (!output_commit(&out_file)) {
            fprintf(stderr, "cmtc: error: cannot write '%s': %s%s\n", out_path, strerror(errno),
                    out_file.temp_path ? "; it is left as it was" : "");
            status = EXIT_USAGE;
        }
    } else if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "cmtc: error: cannot write standard output: %s\n",
                ferror(stdout) && errno == 0 ? "write error" : strerror(errno));
        status = EXIT_USAGE;
    }
    arena_free_all(&arena);
    return status;
}
