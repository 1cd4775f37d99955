/* test_source.c — line tables, byte and UTF-16 columns and their inverse,
 * binary-safe loading; also the arena and interning underneath. */
#include "frontend/util/util.h"
#include "tests/unit/unit.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Line 1 "ab" + CRLF; line 2 "c", e-acute (2 bytes), grinning face
 * (4 bytes), "x"; line 3 two invalid bytes, " z"; line 4 "end", no
 * final newline.  Offsets:
 *   0 a  1 b  2 \r  3 \n
 *   4 c  5-6 é  7-10 😀  11 x  12 \n
 *   13 \xff  14 \xfe  15 ' '  16 z  17 \n
 *   18 e  19 n  20 d            len 21 */
static const char sample[] = "ab\r\nc\xC3\xA9\xF0\x9F\x98\x80x\n\xFF\xFE z\nend";

static void expect_line_col(const SourceFile *f, uint32_t offset, uint32_t line, uint32_t col) {
    uint32_t got_line = 0, got_col = 0;
    source_line_col(f, offset, &got_line, &got_col);
    char name[96];
    snprintf(name, sizeof name, "offset %u is %u:%u", offset, line, col);
    CHECK(got_line == line && got_col == col, name);
}

static void test_lines(void) {
    Arena a = {0};
    SourceManager sm;
    sources_init(&sm, &a);
    SourceFile *f = sources_add(&sm, "sample.cmt", sample, sizeof sample - 1);
    CHECK(f && f->len == 21, "sample length 21");
    CHECK(f->line_count == 4, "sample has 4 lines");
    CHECK(f->line_starts[0] == 0 && f->line_starts[1] == 4 && f->line_starts[2] == 13 &&
              f->line_starts[3] == 18,
          "line starts 0 4 13 18");
    CHECK(f->text[21] == '\0', "copy is NUL-terminated");
    CHECK(f->id == 0 && sources_get(&sm, 0) == f, "first file has id 0");
    CHECK(sources_get(&sm, 1) == NULL && sources_get(&sm, -1) == NULL, "unknown ids give NULL");
    CHECK_STR(f->path, "sample.cmt", "path kept");

    expect_line_col(f, 0, 1, 1);
    expect_line_col(f, 1, 1, 2);
    expect_line_col(f, 2, 1, 3); /* the \r */
    expect_line_col(f, 3, 1, 4); /* the \n belongs to line 1 */
    expect_line_col(f, 4, 2, 1);
    expect_line_col(f, 11, 2, 8); /* x after 1 + 2 + 4 bytes */
    expect_line_col(f, 13, 3, 1);
    expect_line_col(f, 17, 3, 5);
    expect_line_col(f, 20, 4, 3);
    expect_line_col(f, 21, 4, 4);  /* end of file */
    expect_line_col(f, 500, 4, 4); /* clamped */

    size_t len = 99;
    const char *text = source_line_text(f, 1, &len);
    CHECK(len == 2 && memcmp(text, "ab", 2) == 0, "line 1 text without \\r\\n");
    text = source_line_text(f, 2, &len);
    CHECK(len == 8 && text == f->text + 4, "line 2 text is 8 bytes");
    text = source_line_text(f, 3, &len);
    CHECK(len == 4 && text == f->text + 13, "line 3 text is 4 bytes");
    text = source_line_text(f, 4, &len);
    CHECK(len == 3 && memcmp(text, "end", 3) == 0, "last line without newline");
    source_line_text(f, 0, &len);
    CHECK(len == 0, "line 0 is empty");
    source_line_text(f, 5, &len);
    CHECK(len == 0, "line past the end is empty");

    /* UTF-16 columns: é is one unit, the emoji two, invalid bytes one */
    CHECK(source_utf16_col(f, 4) == 0, "utf16 line start");
    CHECK(source_utf16_col(f, 5) == 1, "utf16 after c");
    CHECK(source_utf16_col(f, 7) == 2, "utf16 after e-acute: 1 + 1");
    CHECK(source_utf16_col(f, 11) == 4, "utf16 after emoji: 2 + 2");
    CHECK(source_utf16_col(f, 12) == 5, "utf16 after x");
    CHECK(source_utf16_col(f, 6) == 1, "utf16 inside e-acute counts c only");
    CHECK(source_utf16_col(f, 9) == 2, "utf16 inside emoji stops before it");
    CHECK(source_utf16_col(f, 14) == 1, "utf16 invalid byte counts 1");
    CHECK(source_utf16_col(f, 16) == 3, "utf16 two invalid bytes and a space");
    CHECK(source_utf16_col(f, 2) == 2, "utf16 at the \\r");
    CHECK(source_utf16_col(f, 21) == 3, "utf16 at end of file");

    /* inverse mapping */
    CHECK(source_offset_of(f, 1, 0, true) == 4, "utf16 col 0 of line 2");
    CHECK(source_offset_of(f, 1, 1, true) == 5, "utf16 col 1 -> e-acute");
    CHECK(source_offset_of(f, 1, 2, true) == 7, "utf16 col 2 -> emoji");
    CHECK(source_offset_of(f, 1, 3, true) == 7,
          "utf16 col inside surrogate pair -> start of emoji");
    CHECK(source_offset_of(f, 1, 4, true) == 11, "utf16 col 4 -> x");
    CHECK(source_offset_of(f, 1, 5, true) == 12, "utf16 col 5 -> line end");
    CHECK(source_offset_of(f, 1, 99, true) == 12, "utf16 col clamped to line end");
    CHECK(source_offset_of(f, 0, 99, true) == 2, "clamped before \\r\\n");
    CHECK(source_offset_of(f, 2, 2, true) == 15, "utf16 over invalid bytes");
    CHECK(source_offset_of(f, 9, 0, true) == 21, "line past end -> file end");
    CHECK(source_offset_of(f, 1, 3, false) == 7, "byte col 3 of line 2");
    CHECK(source_offset_of(f, 1, 99, false) == 12, "byte col clamped");
    CHECK(source_offset_of(f, 3, 1, false) == 19, "byte col on last line");
    CHECK(source_offset_of(f, 3, 9, false) == 21, "byte col clamped at file end");
    {
        /* every character boundary of line 2 survives the round trip */
        static const uint32_t boundaries[] = {4, 5, 7, 11, 12};
        bool all = true;
        for (size_t i = 0; i < sizeof boundaries / sizeof boundaries[0]; i++)
            all = all &&
                  source_offset_of(f, 1, source_utf16_col(f, boundaries[i]), true) == boundaries[i];
        CHECK(all, "utf16 round trip on line 2");
    }
    arena_free_all(&a);
}

static void test_edge_files(void) {
    Arena a = {0};
    SourceManager sm;
    sources_init(&sm, &a);
    SourceFile *empty = sources_add(&sm, "empty", "", 0);
    CHECK(empty->len == 0 && empty->line_count == 1, "empty file has one line");
    expect_line_col(empty, 0, 1, 1);
    CHECK(source_utf16_col(empty, 0) == 0, "empty file utf16");
    CHECK(source_offset_of(empty, 0, 5, true) == 0, "empty file inverse");

    SourceFile *nul = sources_add(&sm, "nul", "a\0b\nc", 5);
    CHECK(nul->id == 1, "second file has id 1");
    CHECK(nul->len == 5 && nul->text[1] == '\0' && nul->text[2] == 'b', "NUL byte kept");
    CHECK(nul->line_count == 2 && nul->line_starts[1] == 4, "NUL is not a line end");
    expect_line_col(nul, 2, 1, 3);

    SourceFile *trailing = sources_add(&sm, "t", "x\n", 2);
    CHECK(trailing->line_count == 2, "final newline starts an empty line");
    size_t len = 9;
    source_line_text(trailing, 2, &len);
    CHECK(len == 0, "the line after the final newline is empty");

    SourceFile *lone_cr = sources_add(&sm, "cr", "a\rb\r\n", 5);
    source_line_text(lone_cr, 1, &len);
    CHECK(len == 3, "a lone \\r stays in the line");
    SourceFile *crlf_only = sources_add(&sm, "crlf", "\r\n\r\n", 4);
    source_line_text(crlf_only, 2, &len);
    CHECK(crlf_only->line_count == 3 && len == 0, "empty CRLF lines");

    for (int i = 0; i < 20; i++) sources_add(&sm, "many", "m", 1);
    CHECK(sm.count == 25 && sources_get(&sm, 24)->id == 24, "the file table grows");
    arena_free_all(&a);
}

static void test_load(void) {
    char path[] = "/tmp/cmt_test_source_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "temporary file created");
    if (fd < 0) return;
    /* 200000 bytes: NULs, invalid UTF-8 and newlines, larger than one
     * 64 KiB read so the buffer has to grow */
    enum { N = 200000 };
    static char data[N];
    for (int i = 0; i < N; i++) {
        int byte = (i * 37) & 0xFF;
        data[i] = (char)(i % 7 == 0 ? '\n' : byte == '\n' ? 0 : byte);
    }
    CHECK(write(fd, data, N) == N, "temporary file written");
    close(fd);
    Arena a = {0};
    SourceManager sm;
    sources_init(&sm, &a);
    SourceFile *f = sources_load(&sm, path);
    CHECK(f && f->len == N && memcmp(f->text, data, N) == 0, "loaded bytes are exact");
    CHECK(f && f->text[N] == '\0', "loaded text NUL-terminated");
    /* a '\n' at every multiple of 7 in [0, N): ceil(200000 / 7) = 28572,
     * plus the first line */
    CHECK(f && f->line_count == 28573, "line count of loaded file");
    CHECK_STR(f ? f->path : NULL, path, "loaded path kept as given");
    unlink(path);
    errno = 0;
    CHECK(sources_load(&sm, "/nonexistent/dir/x.cmt") == NULL && errno == ENOENT,
          "missing file gives NULL and ENOENT");
    arena_free_all(&a);
}

/* Files that are not plain source files: refused at once, each with its
 * errno, and the identity of a loaded file recorded. */
static void test_load_refusals(void) {
    Arena a = {0};
    SourceManager sm;
    sources_init(&sm, &a);
    char dir[] = "/tmp/cmtc-unit-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temporary folder created");
    errno = 0;
    CHECK(sources_load(&sm, dir) == NULL && errno == EISDIR, "a folder is EISDIR");
    char *fifo = arena_printf(&a, "%s/f.cmt", dir);
    CHECK(mkfifo(fifo, 0600) == 0, "FIFO created");
    errno = 0;
    CHECK(sources_load(&sm, fifo) == NULL && errno == ENODATA,
          "a FIFO nobody writes to is ENODATA, without waiting");
    errno = 0;
    CHECK(sources_load_module(&sm, fifo) == NULL && errno == ESPIPE,
          "a module must be a regular file: ESPIPE");
    errno = 0;
    CHECK(sources_load_module(&sm, "/dev/zero") == NULL && errno == ESPIPE,
          "a device as a module is ESPIPE, not read");
    /* sources_add refuses by length alone: the text is never read */
    errno = 0;
    CHECK(sources_add(&sm, "big", "", SOURCE_MAX_BYTES + 1) == NULL && errno == EFBIG,
          "a text past the cap is EFBIG");
    CHECK(strstr(sources_error_text(EFBIG), "256 MiB") != NULL, "the message names the cap");
    char *file = arena_printf(&a, "%s/g.cmt", dir);
    FILE *out = fopen(file, "w");
    CHECK(out && fputs("const A = 1;\n", out) >= 0 && fclose(out) == 0, "file written");
    SourceFile *f = sources_load(&sm, file);
    struct stat st;
    CHECK(f && stat(file, &st) == 0 && f->identified && f->device == (uint64_t)st.st_dev &&
              f->inode == (uint64_t)st.st_ino,
          "a loaded file records its device and inode");
    SourceFile *g = sources_add(&sm, "mem", "x", 1);
    CHECK(g && !g->identified, "text from memory has no identity");
    unlink(file);
    unlink(fifo);
    rmdir(dir);
    arena_free_all(&a);
}

static void test_spans(void) {
    Span joined = span_join((Span){0, 5, 9}, (Span){0, 2, 7});
    CHECK(joined.file == 0 && joined.start == 2 && joined.end == 9, "span_join covers both");
    joined = span_join(SPAN_NONE, (Span){1, 3, 4});
    CHECK(joined.file == 1 && joined.start == 3 && joined.end == 4, "span_join with none");
    joined = span_join((Span){1, 3, 4}, SPAN_NONE);
    CHECK(joined.file == 1 && joined.start == 3 && joined.end == 4, "span_join none second");
}

static void test_arena(void) {
    Arena a = {0};
    bool aligned = true, zeroed = true;
    for (size_t size = 1; size < 200; size += 7) {
        unsigned char *p = arena_alloc(&a, size);
        aligned = aligned && ((uintptr_t)p % 8) == 0;
        for (size_t i = 0; i < size; i++) zeroed = zeroed && p[i] == 0;
        memset(p, 0xAB, size);
        /* a type's own alignment, after an odd-sized allocation */
        double *d = ARENA_NEW(&a, double);
        int64_t *w = ARENA_ARRAY(&a, int64_t, 3);
        void **q = ARENA_ARRAY(&a, void *, 5);
        aligned = aligned && (uintptr_t)d % _Alignof(double) == 0 &&
                  (uintptr_t)w % _Alignof(int64_t) == 0 && (uintptr_t)q % _Alignof(void *) == 0;
        zeroed = zeroed && *d == 0 && w[2] == 0 && q[4] == NULL;
        arena_strndup(&a, "odd", 2);
    }
    CHECK(aligned, "arena allocations are 8-byte aligned, also after an odd size");
    CHECK(zeroed, "arena allocations are zeroed");
    unsigned char *big = arena_alloc(&a, 1 << 20);
    CHECK(big[0] == 0 && big[(1 << 20) - 1] == 0 && ((uintptr_t)big % 8) == 0,
          "big allocation zeroed and aligned");
    char *s = arena_strdup(&a, "tile");
    CHECK_STR(s, "tile", "arena_strdup");
    CHECK_STR(arena_strndup(&a, "GLBxyz", 3), "GLB", "arena_strndup");
    char *grown = arena_realloc(&a, s, 5, 64);
    CHECK(strcmp(grown, "tile") == 0 && grown[63] == 0, "arena_realloc keeps content");
    char long_text[1000];
    memset(long_text, 'q', 999);
    long_text[999] = '\0';
    char *printed = arena_printf(&a, "%s|%d", long_text, 42);
    CHECK(strlen(printed) == 1002 && strcmp(printed + 999, "|42") == 0,
          "arena_printf beyond the small buffer");
    CHECK_STR(arena_printf(&a, "%s %d", "m", 96), "m 96", "arena_printf");
    CHECK(a.used_total >= (1 << 20), "used_total counts big allocations");
    PtrVec v = {0};
    static int values[1000];
    for (int i = 0; i < 1000; i++) ptrvec_push(&a, &v, &values[i]);
    bool ordered = v.count == 1000 && v.cap >= 1000;
    for (int i = 0; i < v.count; i++) ordered = ordered && v.items[i] == &values[i];
    CHECK(ordered, "ptrvec keeps 1000 items in order");
    arena_free_all(&a);
    CHECK(a.head == NULL && a.used_total == 0, "arena_free_all empties the arena");
    CHECK(process_arena() == process_arena(), "one process arena");

    /* A chunk kept by arena_reset was written: what it hands out again
     * must be zeroed all the same. */
    Arena r = {0};
    unsigned char *first = arena_alloc(&r, 4000);
    memset(first, 0xCD, 4000);
    arena_reset(&r);
    unsigned char *again = arena_alloc(&r, 4000);
    bool again_zero = true;
    for (int i = 0; i < 4000; i++) again_zero = again_zero && again[i] == 0;
    CHECK(again == first && again_zero && r.used_total == 4000,
          "arena_reset reuses its chunk and zeroes what it hands out again");
    /* a request of several MiB gets mapped huge pages: zero, aligned, and
     * usable to its last byte; so is a growing arena's 2 MiB chunk, reused
     * after a reset */
    size_t huge = (size_t)5 << 20;
    unsigned char *h = arena_alloc(&r, huge);
    CHECK(h[0] == 0 && h[huge / 2] == 0 && h[huge - 1] == 0 && ((uintptr_t)h % 16) == 0,
          "a mapped chunk is zeroed and aligned");
    memset(h, 0xEF, huge);
    Arena g = {0};
    for (int i = 0; i < 4000; i++) memset(arena_alloc(&g, 1000), 0x5A, 1000); /* 4 MB */
    arena_reset(&g);
    bool reused_zero = true;
    for (int i = 0; i < 1000 && reused_zero; i++) {
        unsigned char *p = arena_alloc(&g, 1000);
        for (int k = 0; k < 1000; k++) reused_zero = reused_zero && p[k] == 0;
    }
    CHECK(reused_zero, "a reset arena's 2 MiB chunk hands out zeroed memory again");
    /* A reused chunk is zeroed a step ahead of what it hands out: small
     * pieces across many steps, and an array grown in place past the
     * zeroed part, read zero however dirty the chunk was. */
    Arena z = {0};
    memset(arena_alloc(&z, 60000), 0x77, 60000);
    arena_reset(&z);
    bool small_zero = true;
    for (int i = 0; i < 3000; i++) {
        unsigned char *p = arena_alloc(&z, 8 + (size_t)(i % 5) * 8);
        for (int k = 0; k < 8 + (i % 5) * 8; k++) small_zero = small_zero && p[k] == 0;
    }
    CHECK(small_zero, "small pieces of a reused chunk are zero across zeroing steps");
    arena_reset(&z);
    unsigned char *grow = arena_alloc(&z, 16);
    bool grown_zero = true;
    for (size_t n = 16; n < 40000; n *= 2) {
        unsigned char *g2 = arena_realloc(&z, grow, n, 2 * n);
        for (size_t k = n; k < 2 * n; k++) grown_zero = grown_zero && g2[k] == 0;
        grow = g2;
    }
    CHECK(grow != NULL && grown_zero, "an array grown in place in a reused chunk reads zero");
    arena_free_all(&z);
    arena_free_all(&g);
    arena_free_all(&r);
    CHECK(r.head == NULL, "arena_free_all releases mapped chunks");
}

static void test_intern_quoted(void) {
    Name dim = intern_quoted("dimension 2 of ", intern_cstr("A"));
    CHECK_STR(dim, "dimension 2 of `A`", "intern_quoted text");
    CHECK(dim == intern_cstr("dimension 2 of `A`"), "intern_quoted interns");
    char long_name[400];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    Name q = intern_quoted("", intern_cstr(long_name));
    CHECK(strlen(q) == 401 && q[0] == '`' && q[400] == '`' && q[1] == 'n',
          "intern_quoted beyond its small buffer");
}

static void test_intern(void) {
    char buf1[] = "matmul", buf2[] = "matmul";
    Name a = intern(buf1, 6), b = intern(buf2, 6);
    CHECK(a == b && a != buf1, "equal strings intern to one pointer");
    CHECK(intern("matmul_x", 6) == a, "intern uses the given length");
    CHECK(intern_cstr("matmul") == a, "intern_cstr agrees");
    CHECK(intern_cstr("matmuL") != a, "different strings differ");
    CHECK(intern("", 0) == intern_cstr(""), "empty name interns");
    CHECK(intern("a\0b", 3) != intern("a\0c", 3), "embedded NUL compared by length");
    /* many names force the table to grow; earlier pointers stay valid */
    char name[32];
    Name first = NULL, last = NULL;
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(name, sizeof name, "n%d", i);
        Name got = intern(name, (size_t)n);
        if (i == 0) first = got;
        if (i == 99999) last = got;
    }
    CHECK(intern_cstr("n0") == first && intern_cstr("n99999") == last,
          "names survive table growth");
    CHECK_STR(first, "n0", "interned text is NUL-terminated");
    CHECK(intern_cstr("matmul") == a, "old names still found after growth");
    /* room reserved ahead keeps every name, old and new, findable; names
     * of 1 to 20 bytes differing in one byte (the hash reads them in
     * fixed-size pieces) stay distinct */
    intern_reserve(300000);
    CHECK(intern_cstr("n0") == first && intern_cstr("n99999") == last &&
              intern_cstr("matmul") == a,
          "names survive intern_reserve");
    bool distinct = true;
    for (int len = 1; len <= 20; len++)
        for (int at = 0; at < len; at++) {
            char one[24], other[24];
            memset(one, 'q', (size_t)len);
            memcpy(other, one, (size_t)len);
            other[at] = 'r';
            Name x = intern(one, (size_t)len), y = intern(other, (size_t)len);
            distinct = distinct && x != y && strlen(x) == (size_t)len &&
                       memcmp(y, other, (size_t)len) == 0 && intern(other, (size_t)len) == y;
        }
    CHECK(distinct, "names differing in any one byte intern apart");
}

int main(void) {
    test_lines();
    test_edge_files();
    test_load();
    test_load_refusals();
    test_spans();
    test_arena();
    test_intern();
    test_intern_quoted();
    return unit_finish();
}
