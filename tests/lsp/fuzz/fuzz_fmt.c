/* fuzz_fmt.c — libFuzzer target for the formatter: any input that parses
 * must format without E0601 (the output parses to the same AST and keeps
 * every comment), and formatting the output again changes nothing.
 * Built and run by tests/lsp/fuzz/run.sh. */
#include "backend/fmt.h"
#include <stdlib.h>
#include <string.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Arena a = {0};
    SourceManager sm;
    sources_init(&sm, &a);
    SourceFile *f = sources_add(&sm, "f.cmt", (const char *)data, size);
    DiagSink d;
    diags_init(&d, &a);
    size_t len;
    char *out = fmt_source(&a, &sm, f, &d, &len);
    if (!out) {
        for (int i = 0; i < d.count; i++)
            if (d.items[i]->code && strcmp(d.items[i]->code, "E0601") == 0) abort();
    } else {
        /* idempotent */
        SourceFile *g = sources_add(&sm, "g.cmt", out, len);
        DiagSink d2;
        diags_init(&d2, &a);
        size_t len2;
        char *out2 = fmt_source(&a, &sm, g, &d2, &len2);
        if (!out2 || len2 != len || memcmp(out, out2, len) != 0) abort();
    }
    arena_free_all(&a);
    return 0;
}
