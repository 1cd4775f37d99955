/* test_lsp.c — the language server's helpers: file URIs, path
 * normalisation, LSP positions in UTF-16 and UTF-8, UTF-8 cleaning, and
 * the Content-Length reader over a pipe (framing errors, resync, EOF). */
#include "backend/lsp.h"
#include "tests/unit/unit.h"

#include <unistd.h>

static Arena A;

static void test_uris(void) {
    CHECK_STR(lsp_uri_to_path(&A, "file:///home/u/a.cmt"), "/home/u/a.cmt", "uri_plain");
    CHECK_STR(lsp_uri_to_path(&A, "file:///home/u/my%20dir/a%2Bb.cmt"), "/home/u/my dir/a+b.cmt",
              "uri_percent");
    CHECK_STR(lsp_uri_to_path(&A, "file:///x/%C3%A9t%c3%a9.cmt"), "/x/\xc3\xa9t\xc3\xa9.cmt",
              "uri_percent_utf8_mixed_case");
    CHECK_STR(lsp_uri_to_path(&A, "file://localhost/etc/x.cmt"), "/etc/x.cmt", "uri_localhost");
    CHECK_STR(lsp_uri_to_path(&A, "FILE:///X.cmt"), "/X.cmt", "uri_scheme_case");
    CHECK_STR(lsp_uri_to_path(&A, "file://server/share/x.cmt"), "//server/share/x.cmt", "uri_unc");
    CHECK_STR(lsp_uri_to_path(&A, "file:///a%zz%4"), "/a%zz%4", "uri_bad_escape_kept");
    CHECK_STR(lsp_uri_to_path(&A, "file:///a.cmt?query#frag"), "/a.cmt", "uri_query_dropped");
    CHECK_STR(lsp_uri_to_path(&A, "file:///c%3A/x.cmt"), "/c:/x.cmt", "uri_drive_colon");
    CHECK(lsp_uri_to_path(&A, "untitled:Untitled-1") == NULL, "uri_other_scheme");
    CHECK(lsp_uri_to_path(&A, "file:///a%00b") == NULL, "uri_nul_refused");
    CHECK_STR(lsp_path_to_uri(&A, "/home/u/my dir/a+b.cmt"), "file:///home/u/my%20dir/a%2Bb.cmt",
              "path_to_uri_encodes");
    CHECK_STR(lsp_path_to_uri(&A, "/x/\xc3\xa9.cmt"), "file:///x/%C3%A9.cmt", "path_to_uri_utf8");
    /* a round trip through both */
    const char *odd = "/t/a b%c#d?e/\xe2\x9c\x93.cmt";
    CHECK_STR(lsp_uri_to_path(&A, lsp_path_to_uri(&A, odd)), odd, "uri_round_trip");
}

static void test_paths(void) {
    CHECK_STR(lsp_normalize_path(&A, "/a/./b//c/../d.cmt"), "/a/b/d.cmt", "norm_dots");
    CHECK_STR(lsp_normalize_path(&A, "/../a"), "/a", "norm_root_dotdot");
    CHECK_STR(lsp_normalize_path(&A, "a/../../b"), "../b", "norm_relative_dotdot");
    CHECK_STR(lsp_normalize_path(&A, "../../x"), "../../x", "norm_leading_dotdots");
    CHECK_STR(lsp_normalize_path(&A, "./"), ".", "norm_dot");
    CHECK_STR(lsp_normalize_path(&A, "/"), "/", "norm_root");
    CHECK_STR(lsp_normalize_path(&A, "//host/s/../x"), "//host/x", "norm_unc");
}

static SourceFile *file_of(SourceManager *sm, const char *text) {
    return sources_add(sm, "t.cmt", text, strlen(text));
}

static void test_positions(void) {
    SourceManager sm;
    sources_init(&sm, &A);
    /* line 0: "a\xc3\xa9b" (é: 2 bytes, 1 unit); line 1: emoji (4 bytes,
     * 2 units) then x; line 2 ends with \r\n; line 3 empty at the end */
    SourceFile *f = file_of(&sm, "a\xc3\xa9"
                                 "b\n\xf0\x9f\x98\x80x\nab\r\n");
    uint32_t line, col;
    lsp_position_of(f, 3, true, &line, &col);
    CHECK(line == 0 && col == 2, "pos_after_e_acute_utf16");
    lsp_position_of(f, 3, false, &line, &col);
    CHECK(line == 0 && col == 3, "pos_after_e_acute_utf8");
    lsp_position_of(f, 9, true, &line, &col);
    CHECK(line == 1 && col == 2, "pos_after_emoji_utf16");
    lsp_position_of(f, 10, true, &line, &col);
    CHECK(line == 1 && col == 3, "pos_after_emoji_x_utf16");
    lsp_position_of(f, (uint32_t)f->len, true, &line, &col);
    CHECK(line == 3 && col == 0, "pos_end_of_file");
    lsp_position_of(f, 1000, true, &line, &col);
    CHECK(line == 3 && col == 0, "pos_past_end_clamped");

    CHECK(lsp_offset_of(f, 0, 2, true) == 3, "off_utf16_after_e_acute");
    CHECK(lsp_offset_of(f, 0, 3, false) == 3, "off_utf8_after_e_acute");
    CHECK(lsp_offset_of(f, 1, 2, true) == 9, "off_utf16_after_emoji");
    CHECK(lsp_offset_of(f, 1, 1, true) == 5, "off_utf16_inside_surrogate_pair");
    CHECK(lsp_offset_of(f, 1, 99, true) == 10, "off_column_clamped_to_line_end");
    CHECK(lsp_offset_of(f, 2, 99, true) == 13, "off_column_clamped_before_crlf");
    CHECK(lsp_offset_of(f, 99, 0, true) == f->len, "off_line_past_end");
    /* every offset at a character boundary survives the round trip */
    bool ok = true;
    uint32_t bounds[] = {0, 1, 3, 4, 5, 9, 10, 11, 12, 13};
    for (size_t i = 0; i < sizeof bounds / sizeof *bounds; i++)
        for (int u = 0; u < 2; u++) {
            lsp_position_of(f, bounds[i], u == 0, &line, &col);
            if (lsp_offset_of(f, line, col, u == 0) != bounds[i]) ok = false;
        }
    CHECK(ok, "pos_round_trip");

    /* an offset inside a character is reported at the character's start */
    lsp_position_of(f, 2, true, &line, &col);
    CHECK(line == 0 && col == 1, "pos_inside_character_rounds_down");
    lsp_position_of(f, 7, true, &line, &col);
    CHECK(line == 1 && col == 0, "pos_inside_emoji_rounds_down");
    /* a lone CR at the end of the last line is text, not a line end */
    SourceFile *h = file_of(&sm, "ab\r");
    CHECK(lsp_offset_of(h, 0, 3, false) == 3, "off_lone_cr_is_text");

    /* invalid UTF-8 counts one unit per byte */
    SourceFile *g = file_of(&sm, "\xff\xfe"
                                 "ab");
    lsp_position_of(g, 3, true, &line, &col);
    CHECK(col == 3, "pos_invalid_utf8_one_unit_per_byte");
}

static void test_utf8_clean(void) {
    CHECK_STR(lsp_utf8_clean(&A, "ok \xc3\xa9", 5), "ok \xc3\xa9", "clean_valid_kept");
    CHECK_STR(lsp_utf8_clean(&A,
                             "a\xff"
                             "b",
                             3),
              "a\xef\xbf\xbd"
              "b",
              "clean_invalid_replaced");
    CHECK_STR(lsp_utf8_clean(&A, "\xed\xa0\x80", 3), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
              "clean_surrogate_replaced");
    CHECK_STR(lsp_utf8_clean(&A, "\xc0\xaf", 2), "\xef\xbf\xbd\xef\xbf\xbd",
              "clean_overlong_replaced");
}

static void test_find_header(void) {
    const char *a = "{\"x\":1}Content-Length: 12\r\n\r\n";
    CHECK(lsp_find_header(a, strlen(a)) == 7, "find_header_after_body");
    const char *b = "{\"s\":\"Content-Length: 12\"}";
    CHECK(lsp_find_header(b, strlen(b)) == (size_t)-1, "find_header_not_inside_json_string");
    const char *c = "content-length:3\n";
    CHECK(lsp_find_header(c, strlen(c)) == 0, "find_header_case_and_lf");
    const char *d = "Content-Length: 12";
    CHECK(lsp_find_header(d, strlen(d)) == (size_t)-1, "find_header_needs_line_end");
}

/* Writes `input` into a pipe and reads every message from it. */
static int read_all(const char *input, size_t len, char out[][64], int max, int *errors) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    if (write(fds[1], input, len) != (ssize_t)len) return -1;
    close(fds[1]);
    LspReader r;
    lsp_reader_init(&r, fds[0]);
    int n = 0;
    *errors = 0;
    char err[200];
    for (;;) {
        const char *body;
        size_t blen;
        LspReadStatus st = lsp_read(&r, &body, &blen, err, sizeof err);
        if (st == LSP_READ_EOF) break;
        if (st == LSP_READ_ERROR) {
            (*errors)++;
            continue;
        }
        if (n < max) snprintf(out[n], 64, "%.*s", (int)blen, body);
        n++;
    }
    lsp_reader_close(&r);
    close(fds[0]);
    return n;
}

static int waits;
static bool count_wait(void *ctx, int fd) {
    (void)ctx;
    (void)fd;
    /* the first wait: the header is there to read; any later one would
     * block on a client that sends nothing more */
    return ++waits == 1;
}

/* A framing error is reported as soon as its header is read, not after
 * more input arrives: the pipe stays open and the reader's wait hook
 * counts the reads it would block on. */
static void test_reader_reports_at_once(void) {
    int fds[2];
    if (pipe(fds) != 0) return;
    const char hdr[] = "Content-Length: 99999999999999999999\r\n\r\n";
    if (write(fds[1], hdr, sizeof hdr - 1) != (ssize_t)(sizeof hdr - 1)) return;
    LspReader r;
    lsp_reader_init(&r, fds[0]);
    r.wait = count_wait;
    char err[200];
    const char *body;
    size_t blen;
    waits = 0;
    /* the first read fills the buffer (one wait); the error needs no other */
    LspReadStatus st = lsp_read(&r, &body, &blen, err, sizeof err);
    CHECK(st == LSP_READ_ERROR && waits == 1, "reader_huge_length_reported_without_more_input");
    CHECK(strstr(err, "2^40 bytes or more") != NULL, "reader_huge_length_not_truncated");
    lsp_reader_close(&r);
    close(fds[0]);
    close(fds[1]);
}

static void test_reader(void) {
    test_reader_reports_at_once();
    char msgs[8][64];
    int errors;
    const char ok[] = "Content-Length: 3\r\n\r\n{a}Content-Length: 2\r\nX-Other: 1\r\n\r\n[]";
    int n = read_all(ok, sizeof ok - 1, msgs, 8, &errors);
    CHECK(n == 2 && errors == 0 && strcmp(msgs[0], "{a}") == 0 && strcmp(msgs[1], "[]") == 0,
          "reader_two_messages");
    const char huge[] = "Content-Length: 999999999999\r\n\r\nxxxxContent-Length: 2\r\n\r\nok";
    n = read_all(huge, sizeof huge - 1, msgs, 8, &errors);
    CHECK(n == 1 && errors == 1 && strcmp(msgs[0], "ok") == 0, "reader_huge_length_resync");
    const char longer[] = "Content-Length: 50\r\n\r\n{}Content-Length: 2\r\n\r\nok";
    n = read_all(longer, sizeof longer - 1, msgs, 8, &errors);
    CHECK(n == 1 && errors == 1 && strcmp(msgs[0], "ok") == 0, "reader_long_length_resync");
    const char none[] = "X-Nothing: 1\r\n\r\nContent-Length: 2\r\n\r\nok";
    n = read_all(none, sizeof none - 1, msgs, 8, &errors);
    CHECK(n == 1 && errors == 1, "reader_missing_length");
    const char partial[] = "Content-Length: 2\r\n\r\nokContent-Length: 10\r\n\r\n{\"a\":";
    n = read_all(partial, sizeof partial - 1, msgs, 8, &errors);
    CHECK(n == 1 && errors == 0, "reader_partial_body_at_eof");
    const char nul_body[] = "Content-Length: 3\r\n\r\na\0b";
    n = read_all(nul_body, sizeof nul_body - 1, msgs, 8, &errors);
    CHECK(n == 1 && errors == 0, "reader_binary_body");
    /* a header section that never ends */
    char junk[LSP_MAX_HEADER + 100];
    memset(junk, 'j', sizeof junk);
    n = read_all(junk, sizeof junk, msgs, 8, &errors);
    CHECK(n == 0 && errors == 1, "reader_endless_header");
}

/* Which files completion offers and the workspace search reads. */
static void test_module_names(void) {
    CHECK(lsp_module_file_name("gemm.cmt", true), "module_plain");
    CHECK(lsp_module_file_name("_x1.cmt", true), "module_underscore_digit");
    CHECK(!lsp_module_file_name("my-ops.cmt", true), "module_dash_not_dotted");
    CHECK(lsp_module_file_name("my-ops.cmt", false), "module_dash_as_string");
    CHECK(!lsp_module_file_name(".#gemm.cmt", false), "module_emacs_lock");
    CHECK(!lsp_module_file_name("#gemm.cmt#", false), "module_emacs_autosave");
    CHECK(!lsp_module_file_name("gemm.cmt~", false), "module_backup");
    CHECK(!lsp_module_file_name(".cmt", false), "module_no_name");
    CHECK(!lsp_module_file_name("1x.cmt", false), "module_digit_first");
    CHECK(!lsp_module_file_name("gemm.txt", false), "module_other_suffix");
}

static void test_words(void) {
    const char *t = "tile GLB: m TILE; // GLBs";
    CHECK(lsp_text_has_word(t, strlen(t), "GLB"), "word_found");
    CHECK(lsp_text_has_word(t, strlen(t), "tile"), "word_at_start");
    CHECK(lsp_text_has_word(t, strlen(t), "GLBs"), "word_at_end");
    CHECK(!lsp_text_has_word(t, strlen(t), "GL"), "word_prefix_is_not_the_word");
    CHECK(!lsp_text_has_word(t, strlen(t), "ILE"), "word_suffix_is_not_the_word");
    CHECK(!lsp_text_has_word(t, 3, "tile"), "word_beyond_length");
    CHECK(!lsp_text_has_word(t, strlen(t), ""), "word_empty");
    CHECK(lsp_reserved_word("objective", 9), "reserved_objective");
    CHECK(lsp_reserved_word("tile", 4), "reserved_tile");
    CHECK(!lsp_reserved_word("tiles", 5), "reserved_longer_word");
    CHECK(!lsp_reserved_word("til", 3), "reserved_prefix");
    CHECK(!lsp_reserved_word("fp16", 4), "element_types_are_not_reserved");
}

int main(void) {
    test_module_names();
    test_words();
    test_uris();
    test_paths();
    test_positions();
    test_utf8_clean();
    test_find_header();
    test_reader();
    arena_free_all(&A);
    return unit_finish();
}
