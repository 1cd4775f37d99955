/* libFuzzer target that reaches the mapping optimizer: any bytes are
 * parsed and checked and, when they check clean, the first few mappings
 * with holes are filled by the MILP and, on a copy, by the exhaustive
 * enumerator, each under a short time limit and a small memory budget so
 * that no input can hang or exhaust the fuzzer.  Crashes, sanitizer
 * reports, leaks and time-outs (-timeout) are findings.  Seeds: small
 * spaces with holes (tests/fuzz/optimizer_seeds.sh). */
#include "frontend/util/util.h"
#include "ir/ir.h"
#include "passes/optimize/optimize.h"

#include <stdint.h>
#include <stdlib.h>

/* Per mapping and method: the time limit bounds every phase, so an input
 * costs at most about OPT_MAPPINGS * 2 * FUZZ_LIMIT_S seconds. */
#define FUZZ_LIMIT_S 0.25
#define OPT_MAPPINGS 3

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    setenv("CMTC_OPT_BUDGET_MB", "256", 0); /* well under -rss_limit_mb */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    sources_init(&sm, &arena);
    diags_init(&diags, &arena);
    SourceFile *root = sources_add(&sm, "fuzz.cmt", (const char *)data, size);
    CheckOptions opts = {0};
    opts.stdlib_dir = getenv("CMT_STDLIB") ? getenv("CMT_STDLIB") : CMT_SOURCE_STDLIB;
    Program *program = check_program(&arena, &sm, &diags, root, &opts);
    if (program && diags.error_count == 0) {
        int done = 0;
        for (int i = 0; i < program->mapping_count && done < OPT_MAPPINGS; i++) {
            const IrMapping *m = program->mappings[i];
            if (!m || m->hole_count == 0) continue;
            done++;
            /* the optimizer returns a new mapping: the checked one keeps
             * its holes for the second method */
            OptimizeOptions co = {0};
            co.time_limit_s = FUZZ_LIMIT_S;
            SolverReport report;
            const IrMapping *filled = optimize_mapping(&arena, program, m, &co, &report);
            if (filled) {
                EvalResult result;
                evaluate_mapping(filled, &arena, &result);
                lower_mapping(&arena, filled, true, NULL);
            }
            co.exhaustive = true;
            filled = optimize_mapping(&arena, program, m, &co, &report);
            if (filled) {
                EvalResult result;
                evaluate_mapping(filled, NULL, &result);
            }
        }
    }
    FILE *sink = fopen("/dev/null", "w");
    if (sink) {
        diags_render_text(sink, &sm, &diags, (DiagRenderOptions){0});
        fclose(sink);
    }
    arena_free_all(&arena);
    return 0;
}
