/* compile.c — `cmtc compile FILE`: checks the file, fills holes through
 * the optimizer hook, lowers each mapping (and its unfused baseline) and
 * hands the schedules to the emitter the --format asks for. */
#include "backend/commands.h"
#include "backend/emit.h"
#include "backend/options.h"
#include "passes/verify.h"

#include <errno.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
            m->name, t[runs / 2] * 1e6, t[0] * 1e6, runs, r.cost.latency_s);
    free(t);
}

/* Do two mappings map the same op with the same parameters? */
static bool same_op(const IrOp *a, const IrOp *b) {
    if (a == b) return true;
    if (strcmp(a->name, b->name) != 0 || a->param_count != b->param_count) return false;
    for (int i = 0; i < a->param_count; i++)
        if (a->param_values[i] != b->param_values[i]) return false;
    return true;
}

/* Do two paths name one file?  By device and inode when both exist. */
static bool same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return strcmp(a, b) == 0;
}

/* Whether mapping `name` is a part of model m (NULL: none is). */
static bool names_part(const char *name, const IrModel *m) {
    if (!m) return false;
    const IrMapping *parts[3] = {m->layers, m->embed, m->head};
    for (int j = 0; j < 3; j++)
        if (parts[j] && strcmp(parts[j]->name, name) == 0) return true;
    return false;
}

/* --mapping NAME: the mapping NAME, or a part of the model NAME. */
static bool in_wanted(const IrMapping *m, const char *only, const IrModel *only_model) {
    return strcmp(m->name, only) == 0 || names_part(m->name, only_model);
}

int cmd_compile(int argc, char **argv) {
    CommonOptions common;
    common_init(&common);
    OptimizeOptions copts;
    memset(&copts, 0, sizeof copts);
    LowerOptions lopts = {.dump_out = stderr};
    const char *file = NULL, *only = NULL, *out_path = NULL, *baseline = "unfused";
    Format format = FMT_TEXT;
    int time_runs = 0;
    bool bad = false, verify = false;
    const CommandSpec *spec = command_find("compile");
    OptionParser op;
    options_init(&op, spec, argc, argv);
    for (int id; !bad && (id = options_next(&op)) != OPT_DONE;) {
        const char *v = op.value;
        switch (id) {
        case OPT_POSITIONAL:
            if (file) {
                fprintf(stderr, "cmtc: error: compile takes one file, got '%s' and '%s'\n", file,
                        v);
                bad = true;
            }
            file = v;
            break;
        case OPT_HELP: options_help(stdout, spec); return EXIT_OK;
        case OPT_BAD: bad = true; break;
        case OPT_INCLUDE:
        case OPT_DIAG_FORMAT:
        case OPT_DIAG_OUTPUT: bad = !common_apply(&common, id, v); break;
        case CO_MAPPING: only = v; break;
        case CO_OUTPUT: out_path = v; break;
        case CO_FORMAT:
            if (strcmp(v, "text") == 0)
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
            break;
        case CO_BASELINE:
            if (!*v) {
                fprintf(stderr, "cmtc: error: --baseline takes unfused, none or a mapping name\n");
                bad = true;
            }
            baseline = v;
            break;
        case CO_OBJECTIVE:
            copts.objective_given = true;
            if (!objective_of_name(v, &copts.objective)) {
                char all[64];
                fprintf(stderr, "cmtc: error: --objective takes %s, got '%s'\n",
                        vocab_join(all, sizeof all, objective_words, objective_count, " or "), v);
                bad = true;
            }
            break;
        case CO_TIME_LIMIT:
            if (!parse_time_limit(v, &copts.time_limit_s)) {
                fprintf(stderr,
                        "cmtc: error: --time-limit takes a number of seconds above 0 and at most "
                        "%.0f, got '%s'\n",
                        TIME_LIMIT_MAX_S, v);
                bad = true;
            }
            break;
        case CO_EMIT_LP: copts.emit_lp_path = v; break;
        case CO_DUMP_IR:
            if (!pass_name_known(v)) {
                fprintf(stderr, "cmtc: error: --dump-ir takes a pass name (");
                for (int k = 0; k < pass_count; k++)
                    fprintf(stderr, "%s%s", k ? ", " : "", pass_names[k]);
                fprintf(stderr, "), got '%s'\n", v);
                bad = true;
            }
            lopts.dump_after = v;
            break;
        case CO_TIME_EVAL:
            time_runs = atoi(v);
            if (time_runs < 1) {
                fprintf(stderr, "cmtc: error: --time-eval takes a number of runs, got '%s'\n", v);
                bad = true;
            }
            break;
        case CO_EXHAUSTIVE: copts.exhaustive = true; break;
        case CO_VERIFY: verify = true; break;
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
        options_usage_hint(stderr, spec);
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
    if (!p) {
        common_print_diags(&common, &sm, &diags);
        arena_free_all(&arena);
        return EXIT_DIAGNOSTICS;
    }
    /* -m and --baseline name mappings of the file, checked or not: the
     * names come from the file's declarations */
    int declared = 0;
    const char **names = program_mapping_names(p, &arena, &declared);
    bool baseline_unfused = strcmp(baseline, "unfused") == 0;
    bool baseline_none = strcmp(baseline, "none") == 0;
    const char *baseline_mapping = baseline_unfused || baseline_none ? NULL : baseline;
    const char *wanted[2] = {only, baseline_mapping};
    const char *wanted_flag[2] = {"", " for --baseline"};
    /* --mapping MODEL: the model's mappings, and the model */
    const IrModel *only_model = NULL;
    for (int k = 0; only && k < p->model_count; k++)
        if (strcmp(p->models[k]->name, only) == 0) only_model = p->models[k];
    for (int w = 0; w < 2; w++) {
        if (!wanted[w]) continue;
        bool found = w == 0 && only_model;
        for (int i = 0; i < declared && !found; i++) found = strcmp(names[i], wanted[w]) == 0;
        if (found) continue;
        common_print_diags(&common, &sm, &diags);
        fprintf(stderr, "cmtc: error: no mapping '%s'%s in %s", wanted[w], wanted_flag[w], file);
        const char *near = spell_suggest(wanted[w], names, declared);
        if (near) fprintf(stderr, "; did you mean %s?", near);
        if (w == 1) fprintf(stderr, " (--baseline takes unfused, none or a mapping name)");
        fputc('\n', stderr);
        arena_free_all(&arena);
        return EXIT_USAGE;
    }
    /* Every mapping that checked is compiled, whatever errors the rest of
     * the file has; a mapping with errors was reported with its own
     * mistakes and is listed as not compiled. */
    CompileOutput out = {.file = file,
                         .items = ARENA_ARRAY(&arena, MappingResult, p->mapping_count + 1),
                         .arena = &arena};
    MappingResult *all = ARENA_ARRAY(&arena, MappingResult, p->mapping_count + 1);
    bool *compiled = ARENA_ARRAY(&arena, bool, p->mapping_count + 1);
    int status = diags.error_count > 0 ? EXIT_DIAGNOSTICS : EXIT_OK;
    out.failed = ARENA_ARRAY(&arena, FailedMapping, declared + p->mapping_count + 1);
    for (int i = 0; i < p->mapping_count; i++) {
        const IrMapping *m = p->mappings[i];
        bool is_baseline = baseline_mapping && strcmp(m->name, baseline_mapping) == 0;
        if (only && !in_wanted(m, only, only_model) && !is_baseline) continue;
        if (copts.objective_given) {
            /* --objective: a copy that says so; the checked IR stays */
            IrMapping *asked = ARENA_NEW(&arena, IrMapping);
            *asked = *m;
            asked->objective = copts.objective;
            asked->objective_given = true;
            m = asked;
        }
        MappingResult *r = &all[i];
        if (report_unsupported(p, m)) {
            if (status < EXIT_DIAGNOSTICS) status = EXIT_DIAGNOSTICS;
            out.failed[out.failed_count++] = (FailedMapping){m->name, "unsupported"};
            continue;
        }
        const IrMapping *complete = complete_mapping(&arena, p, m, &copts, &r->solver);
        if (!complete) {
            int code = r->solver.status == SOLVER_NOT_NEEDED ? EXIT_DIAGNOSTICS : EXIT_SOLVER;
            if (code > status) status = code;
            out.failed[out.failed_count++] =
                (FailedMapping){m->name, code == EXIT_SOLVER ? "solver" : "errors"};
            continue;
        }
        m = complete;
        r->m = m;
        r->sched = lower_mapping(&arena, m, true, &lopts);
        long before = diags.errors_reported; /* (the cap may drop them) */
        report_capacity(r->sched, &diags);
        if (diags.errors_reported > before) {
            if (status < EXIT_DIAGNOSTICS) status = EXIT_DIAGNOSTICS;
            out.failed[out.failed_count++] = (FailedMapping){m->name, "capacity"};
            continue;
        }
        if (baseline_unfused) {
            r->baseline = lower_mapping(&arena, unfused_mapping(&arena, m), false, NULL);
            r->baseline_name = "unfused";
        }
        r->mapping_text = mapping_to_cmt(&arena, m);
        compiled[i] = true;
    }
    /* the mappings of the file that did not check */
    for (int k = 0; k < declared; k++) {
        if (only && strcmp(names[k], only) != 0 && !names_part(names[k], only_model) &&
            !(baseline_mapping && strcmp(names[k], baseline_mapping) == 0))
            continue;
        bool checked = false;
        for (int i = 0; i < p->mapping_count && !checked; i++)
            checked = strcmp(p->mappings[i]->name, names[k]) == 0;
        bool repeated = false;
        for (int j = 0; j < k && !repeated; j++) repeated = strcmp(names[j], names[k]) == 0;
        if (!checked && !repeated)
            out.failed[out.failed_count++] = (FailedMapping){names[k], "errors"};
    }
    /* --baseline MAPPING: compared with each mapping of the same op */
    const MappingResult *base = NULL;
    for (int i = 0; baseline_mapping && i < p->mapping_count; i++)
        if (compiled[i] && strcmp(p->mappings[i]->name, baseline_mapping) == 0) base = &all[i];
    for (int i = 0; i < p->mapping_count; i++) {
        if (!compiled[i] || (only && !in_wanted(p->mappings[i], only, only_model))) continue;
        MappingResult *r = &all[i];
        if (base && r != base) {
            if (same_op(r->m->op, base->m->op)) {
                r->baseline = base->sched;
                r->baseline_name = base->m->name;
                r->baseline_is_mapping = true;
            } else {
                fprintf(stderr,
                        "cmtc: warning: mapping '%s' is not compared with '%s': they map different "
                        "ops or parameters\n",
                        r->m->name, base->m->name);
            }
        }
        out.items[out.count++] = *r;
    }
    if (baseline_mapping && !base && status == EXIT_OK) status = EXIT_DIAGNOSTICS;
    /* the models whose parts compiled (every mapping is compiled unless
     * --mapping names one) */
    out.models = ARENA_ARRAY(&arena, ModelResult, p->model_count + 1);
    for (int k = 0; (!only || only_model) && k < p->model_count; k++) {
        const IrModel *model = p->models[k];
        if (only_model && model != only_model) continue;
        const IrMapping *want[3] = {model->layers, model->embed, model->head};
        const MappingResult *got[3] = {NULL, NULL, NULL};
        bool ready = true;
        for (int j = 0; j < 3; j++) {
            if (!want[j]) continue;
            for (int i = 0; i < p->mapping_count && !got[j]; i++)
                if (p->mappings[i] == want[j] && compiled[i]) got[j] = &all[i];
            if (!got[j]) ready = false;
        }
        if (!ready) {
            fprintf(stderr,
                    "cmtc: note: model '%s' is not composed: a mapping of it did not compile\n",
                    model->name);
            continue;
        }
        ModelResult *mr = &out.models[out.model_count++];
        mr->model = model;
        mr->layers = got[0];
        mr->embed = got[1];
        mr->head = got[2];
        mr->step = model_step(&arena, got[0]->sched, got[1] ? got[1]->sched : NULL,
                              got[2] ? got[2]->sched : NULL);
    }
    /* Any error diagnostic means exit 1, even when the mapping was still
     * produced; the --emit-lp file not written (E0374) is an I/O failure,
     * 2; a solver failure (3) stays the higher code. */
    if (diags.error_count > 0 && status < EXIT_DIAGNOSTICS) status = EXIT_DIAGNOSTICS;
    for (int i = 0; i < diags.count && status < EXIT_USAGE; i++)
        if (diags.items[i]->code && strcmp(diags.items[i]->code, "E0374") == 0) status = EXIT_USAGE;
    /* JSON diagnostics asked for on standard output beside a JSON document
     * there: one document, the diagnostics its "diagnostics" member */
    bool to_stdout = !out_path || strcmp(out_path, "-") == 0;
    if (format == FMT_JSON && to_stdout && common.json_diagnostics && common.diagnostics_stdout &&
        time_runs == 0) {
        diags_sort(&diags);
        out.diags = &diags;
        out.sources = &sm;
    } else {
        common_print_diags(&common, &sm, &diags);
    }
    /* which mappings were left out, when some were compiled (JSON
     * diagnostics leave it to the JSON output's "not_compiled") */
    if (baseline_mapping && !base)
        fprintf(stderr, "cmtc: note: no comparison: the baseline mapping '%s' was not compiled\n",
                baseline_mapping);
    if (out.failed_count > 0 && out.count > 0 && !common.json_diagnostics) {
        FILE *to = common_diag_stream(&common);
        fprintf(to, "cmtc: note: %d mapping%s compiled; not compiled:", out.count,
                out.count == 1 ? "" : "s");
        for (int k = 0; k < out.failed_count; k++)
            fprintf(to, "%s %s (%s)", k ? "," : "", out.failed[k].name, out.failed[k].why);
        fputc('\n', to);
    }
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
