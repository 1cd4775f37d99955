/* libFuzzer target over the whole front end and lowering: any bytes are
 * parsed, checked and, when they check clean, every mapping is lowered and
 * costed.  Crashes, hangs, sanitizer reports and leaks are findings. */
#include "frontend/util/util.h"
#include "ir/ir.h"
#include "passes/passes.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
        check_mapping_capacity(program);
        for (int i = 0; i < program->mapping_count; i++) {
            const IrMapping *m = program->mappings[i];
            if (!m || m->hole_count > 0) continue;
            EvalResult result;
            evaluate_mapping(m, NULL, &result);
            lower_mapping(&arena, m, true, NULL);
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
