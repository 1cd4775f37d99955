/* fuzz_reader.c — libFuzzer target for the language server's protocol
 * helpers: the Content-Length reader over a pipe (always makes progress,
 * never reads out of bounds), URI and path conversions, UTF-8 cleaning,
 * and LSP positions (an offset maps to a position and back to itself, or
 * to the start of the character it is inside).  Built and run by
 * tests/lsp/fuzz/run.sh. */
#include "backend/lsp.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 60000) return 0;
    int fds[2];
    if (pipe(fds) != 0) abort();
    if (size && write(fds[1], data, size) != (ssize_t)size) abort();
    close(fds[1]);
    LspReader r;
    lsp_reader_init(&r, fds[0]);
    char err[128];
    for (int guard = 0; guard < 100000; guard++) {
        const char *body;
        size_t len;
        LspReadStatus st = lsp_read(&r, &body, &len, err, sizeof err);
        if (st == LSP_READ_EOF) break;
        if (st == LSP_READ_MESSAGE) {
            volatile char sink = 0;
            for (size_t i = 0; i < len; i++) sink ^= body[i];
            (void)sink;
        }
        if (guard == 99999) abort(); /* no progress */
    }
    lsp_reader_close(&r);
    close(fds[0]);
    /* URIs and paths on the same bytes */
    Arena a = {0};
    char *s = arena_strndup(&a, (const char *)data, size);
    lsp_uri_to_path(&a, s);
    lsp_normalize_path(&a, s);
    lsp_path_to_uri(&a, s[0] == '/' ? s : "/x");
    lsp_utf8_clean(&a, (const char *)data, size);
    SourceManager sm;
    sources_init(&sm, &a);
    SourceFile *f = sources_add(&sm, "f", (const char *)data, size);
    for (uint32_t off = 0; off <= f->len && off < 300; off++) {
        uint32_t l, c;
        lsp_position_of(f, off, true, &l, &c);
        uint32_t back = lsp_offset_of(f, l, c, true);
        if (back > off) abort(); /* never past the offset */
        if (off > 0 && off < f->len && f->text[off - 1] == '\r' && f->text[off] == '\n') continue;
        lsp_position_of(f, off, false, &l, &c);
        if (lsp_offset_of(f, l, c, false) != off) abort();
    }
    arena_free_all(&a);
    return 0;
}
