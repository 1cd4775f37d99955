/* test_diag.c — the exact text of rendered diagnostics (spans, tabs, NUL
 * bytes, labels, notes, long lines, colour, the cap) and the JSON form. */
#include "frontend/util/util.h"
#include "tests/unit/unit.h"

#include <jansson.h>

static Arena arena;

/* Offsets of the sample, by line:
 *   1 "op mm {"            0-6,  '\n' 7
 *   2 "  tile GLB: m 96;"  8-24, '\n' 25   (t 10, G 15, 9 22, ';' 24)
 *   3 "\tx = y;"           26-32, '\n' 33  (y 31)
 *   4 "a\0b = c;"          34-41, '\n' 42  (NUL 35, b 36)
 *   5 "}"                  43,   '\n' 44   len 45 */
static const char sample[] = "op mm {\n  tile GLB: m 96;\n\tx = y;\na\0b = c;\n}\n";

static const char *render(const SourceManager *sm, const DiagSink *d, bool color, bool json) {
    FILE *out = tmpfile();
    if (json)
        diags_render_json(out, sm, d);
    else
        diags_render_text(out, sm, d, (DiagRenderOptions){color});
    long size = ftell(out);
    rewind(out);
    char *text = arena_alloc(&arena, (size_t)size + 1);
    size_t got = fread(text, 1, (size_t)size, out);
    text[got] = '\0';
    fclose(out);
    return text;
}

/* One diagnostic on a fresh sink over the sample, rendered as text. */
typedef struct Fixture {
    SourceManager sm;
    DiagSink d;
} Fixture;

static Fixture *fixture(void) {
    Fixture *fx = ARENA_NEW(&arena, Fixture);
    sources_init(&fx->sm, &arena);
    sources_add(&fx->sm, "t.cmt", sample, sizeof sample - 1);
    diags_init(&fx->d, &arena);
    return fx;
}

static void test_single_line(void) {
    Fixture *fx = fixture();
    Diag *g = diag_error(&fx->d, (Span){0, 22, 24}, "E0304",
                         "tile m %d does not divide the per-instance extent %d", 96, 256);
    diag_help(g, &fx->d, "divisors near 96: 64, 128");
    /* "96" starts at byte 22, line 2 starts at 8: column 15, so 14 spaces
     * before the caret; gutter: line numbers in 4 columns after one space */
    CHECK_STR(render(&fx->sm, &fx->d, false, false),
              "t.cmt:2:15: error[E0304]: tile m 96 does not divide the "
              "per-instance extent 256\n"
              "    2 |   tile GLB: m 96;\n"
              "      |               ^~\n"
              "      = help: divisors near 96: 64, 128\n",
              "one-line span");
}

static void test_empty_span(void) {
    Fixture *fx = fixture();
    diag_error(&fx->d, (Span){0, 24, 24}, "E0100", "expected `}`");
    /* byte 24 is the ';' at column 17: 16 spaces, one caret */
    CHECK_STR(render(&fx->sm, &fx->d, false, false),
              "t.cmt:2:17: error[E0100]: expected `}`\n"
              "    2 |   tile GLB: m 96;\n"
              "      |                 ^\n",
              "empty span");
}

static void test_tab_line(void) {
    Fixture *fx = fixture();
    diag_warning(&fx->d, (Span){0, 31, 32}, "W0002", "unused %s", "y");
    /* y at 31, line 3 starts at 26: column 6; the tab is kept as a tab in
     * the caret line, then x, ' ', '=', ' ' become four spaces */
    CHECK_STR(render(&fx->sm, &fx->d, false, false),
              "t.cmt:3:6: warning[W0002]: unused y\n"
              "    3 | \tx = y;\n"
              "      | \t    ^\n",
              "tab-indented line");
}

static void test_nul_byte(void) {
    Fixture *fx = fixture();
    diag_error(&fx->d, (Span){0, 36, 37}, "E0003", "after NUL");
    diag_error(&fx->d, (Span){0, 35, 36}, "E0004", "bad character");
    /* the NUL shows as '?' and takes one column */
    CHECK_STR(render(&fx->sm, &fx->d, false, false),
              "t.cmt:4:3: error[E0003]: after NUL\n"
              "    4 | a?b = c;\n"
              "      |   ^\n"
              "t.cmt:4:2: error[E0004]: bad character\n"
              "    4 | a?b = c;\n"
              "      |  ^\n",
              "NUL byte in the line");
}

static void test_multi_line(void) {
    Fixture *fx = fixture();
    diag_error(&fx->d, (Span){0, 10, 30}, "E0005", "spans two lines");
    /* from "tile" (column 3) to the end of line 2: 15 characters, so one
     * caret and 14 tildes; line 3 is not shown */
    CHECK_STR(render(&fx->sm, &fx->d, false, false),
              "t.cmt:2:3: error[E0005]: spans two lines\n"
              "    2 |   tile GLB: m 96;\n"
              "      |   ^~~~~~~~~~~~~~~\n",
              "multi-line span");
}

static void test_label_note_help(void) {
    Fixture *fx = fixture();
    Diag *g = diag_error(&fx->d, (Span){0, 3, 5}, "E0201", "unknown op %s", "mm");
    diag_label(g, &fx->d, (Span){0, 15, 18}, "declared %s", "here");
    diag_note(g, &fx->d, "ops are declared with `op`");
    diag_help(g, &fx->d, "did you mean `%s`?", "mm2");
    diag_label(g, &fx->d, SPAN_NONE, "%s", "");
    /* "mm" at column 4; "GLB" at 15 - 8 + 1 = column 8 */
    CHECK_STR(render(&fx->sm, &fx->d, false, false),
              "t.cmt:1:4: error[E0201]: unknown op mm\n"
              "    1 | op mm {\n"
              "      |    ^~\n"
              "t.cmt:2:8: note: declared here\n"
              "    2 |   tile GLB: m 96;\n"
              "      |        ^~~\n"
              "cmtc: note: here\n"
              "      = note: ops are declared with `op`\n"
              "      = help: did you mean `mm2`?\n",
              "label, note and help");
}

static void test_no_span_and_utf8(void) {
    Arena *a = &arena;
    SourceManager sm;
    sources_init(&sm, a);
    /* "é" (2 bytes) then an invalid byte, " = 1": '=' is byte 4, column 5,
     * but the third character on screen */
    sources_add(&sm, "u.cmt", "\xC3\xA9\xFF = 1", 7);
    DiagSink d;
    diags_init(&d, a);
    diag_error(&d, SPAN_NONE, "E0001", "cannot open %s", "x.cmt");
    diag_error(&d, (Span){0, 4, 5}, "", "no code");
    CHECK_STR(render(&sm, &d, false, false),
              "cmtc: error[E0001]: cannot open x.cmt\n"
              "u.cmt:1:5: error: no code\n"
              "    1 | \xC3\xA9? = 1\n"
              "      |    ^\n",
              "no span, no code, UTF-8 and invalid byte");
}

static void test_wide_gutter(void) {
    /* 12344 newlines put "x" on line 12345: five digits, so the gutter is
     * one space, the number, " |" */
    enum { NEWLINES = 12344 };
    char *text = arena_alloc(&arena, NEWLINES + 2);
    memset(text, '\n', NEWLINES);
    text[NEWLINES] = 'x';
    SourceManager sm;
    sources_init(&sm, &arena);
    sources_add(&sm, "w.cmt", text, NEWLINES + 1);
    DiagSink d;
    diags_init(&d, &arena);
    Diag *g = diag_error(&d, (Span){0, NEWLINES, NEWLINES + 1}, "E0006", "wide");
    diag_note(g, &d, "n");
    CHECK_STR(render(&sm, &d, false, false),
              "w.cmt:12345:1: error[E0006]: wide\n"
              " 12345 | x\n"
              "       | ^\n"
              "       = note: n\n",
              "five-digit line number widens the gutter");
}

static void test_long_line(void) {
    /* one 10 MB line of 'a' with "bad" at byte 5,000,000 */
    enum { LEN = 10 * 1000 * 1000, AT = 5000000 };
    char *text = arena_alloc(&arena, LEN);
    memset(text, 'a', LEN);
    memcpy(text + AT, "bad", 3);
    SourceManager sm;
    sources_init(&sm, &arena);
    sources_add(&sm, "big.cmt", text, LEN);
    DiagSink d;
    diags_init(&d, &arena);
    diag_error(&d, (Span){0, AT, AT + 3}, "E0007", "bad");
    diag_error(&d, (Span){0, LEN - 3, LEN}, "E0008", "at the end");
    memcpy(text + LEN - 3, "end", 3); /* the manager has its own copy */
    const char *got = render(&sm, &d, false, false);
    /* window: 40 bytes before the span, 120 in all, "..." on cut sides;
     * at the end of the line the window is the last 120 bytes */
    char expected[2048];
    char before[41], after[78], tail[118];
    memset(before, 'a', 40);
    before[40] = '\0';
    memset(after, 'a', 77); /* 120 - 40 - 3 */
    after[77] = '\0';
    memset(tail, 'a', 117);
    tail[117] = '\0';
    snprintf(expected, sizeof expected,
             "big.cmt:1:5000001: error[E0007]: bad\n"
             "    1 | ...%sbad%s...\n"
             "      |    %40s^~~\n"
             "big.cmt:1:9999998: error[E0008]: at the end\n"
             "    1 | ...%saaa\n"
             "      |    %117s^~~\n",
             before, after, "", tail, "");
    CHECK_STR(got, expected, "10 MB line shown as a window");
    const char *first_end = strstr(got, "big.cmt:1:9999998");
    CHECK(first_end && first_end - got < 300, "long-line diagnostic under 300 bytes");
}

static void test_color(void) {
    Fixture *fx = fixture();
    diag_warning(&fx->d, (Span){0, 3, 5}, "W0003", "unused op");
    diag_note(diag_error(&fx->d, SPAN_NONE, "E0009", "oops"), &fx->d, "n");
    CHECK_STR(render(&fx->sm, &fx->d, true, false),
              "\033[1mt.cmt:1:4:\033[0m \033[1;35mwarning[W0003]\033[0m: unused op\n"
              "    1 | op mm {\n"
              "      |    \033[1;32m^~\033[0m\n"
              "\033[1mcmtc:\033[0m \033[1;31merror[E0009]\033[0m: oops\n"
              "      = \033[1;36mnote\033[0m: n\n",
              "colour: bold location, magenta warning, red error, green caret");
}

static void test_cap(void) {
    Fixture *fx = fixture();
    for (int i = 0; i < DIAG_MAX_ERRORS; i++)
        CHECK(diag_error(&fx->d, (Span){0, 0, 1}, "E0010", "error %d", i) != NULL ||
                  i >= DIAG_MAX_ERRORS,
              "errors below the cap are stored");
    CHECK(!fx->d.capped, "exactly 50 errors is not capped");
    CHECK(diag_warning(&fx->d, (Span){0, 0, 1}, "W0010", "warning") != NULL,
          "a warning at 50 errors is still stored");
    Diag *dropped = diag_error(&fx->d, (Span){0, 0, 1}, "E0010", "error 51");
    CHECK(dropped == NULL && fx->d.capped, "the 51st error is dropped and caps");
    diag_note(dropped, &fx->d, "ignored");
    diag_help(dropped, &fx->d, "ignored");
    diag_label(dropped, &fx->d, SPAN_NONE, "ignored");
    CHECK(diag_warning(&fx->d, (Span){0, 0, 1}, "W0010", "late") == NULL,
          "warnings after the cap are dropped");
    CHECK(fx->d.count == 51 && fx->d.error_count == 50, "50 errors and 1 warning stored");
    CHECK(fx->d.errors_reported == 51, "51 errors reported, the dropped one too");
    /* a check run into its own sink and taken into a capped one still
       counts its errors: 3 more reported, none stored */
    DiagSink own;
    diags_init(&own, &arena);
    for (int i = 0; i < 3; i++) diag_error(&own, (Span){0, 0, 1}, "E0010", "own %d", i);
    diags_take(&fx->d, &own);
    CHECK(fx->d.errors_reported == 54 && fx->d.error_count == 50,
          "taken past the cap: 54 reported, 50 stored");
    const char *text = render(&fx->sm, &fx->d, false, false);
    const char *tail = "cmtc: note[E0199]: too many errors; stopped after 50\n";
    size_t len = strlen(text), tail_len = strlen(tail);
    CHECK(len > tail_len && strcmp(text + len - tail_len, tail) == 0,
          "text ends with the cap note");

    json_error_t error;
    json_t *root = json_loads(render(&fx->sm, &fx->d, false, true), 0, &error);
    CHECK(json_is_array(root) && json_array_size(root) == 52,
          "JSON: 51 diagnostics and the cap note");
    json_t *last = json_array_get(root, 51);
    CHECK_STR(json_string_value(json_object_get(last, "severity")), "note", "JSON cap severity");
    CHECK_STR(json_string_value(json_object_get(last, "code")), "E0199", "JSON cap code");
    CHECK(json_is_null(json_object_get(last, "file")), "JSON cap has no file");
    json_decref(root);
}

static void test_json(void) {
    Fixture *fx = fixture();
    Diag *g = diag_error(&fx->d, (Span){0, 22, 24}, "E0304", "tile m 96 \xFF");
    diag_label(g, &fx->d, (Span){0, 10, 30}, "tile here");
    diag_note(g, &fx->d, "note one");
    diag_help(g, &fx->d, "help one");
    diag_help(g, &fx->d, "help two");
    diag_warning(&fx->d, SPAN_NONE, "W0001", "global");
    const char *text = render(&fx->sm, &fx->d, false, true);
    size_t len = strlen(text);
    CHECK(len > 0 && text[len - 1] == '\n', "JSON ends with a newline");
    CHECK(strncmp(text, "[\n  {\n    \"file\": \"t.cmt\",\n    \"line\": 2,", 40) == 0,
          "JSON indented by 2 with keys in order");
    json_error_t error;
    json_t *root = json_loads(text, 0, &error);
    CHECK(json_is_array(root) && json_array_size(root) == 2, "JSON array of 2");
    json_t *first = json_array_get(root, 0);
    CHECK_STR(json_string_value(json_object_get(first, "file")), "t.cmt", "JSON file");
    /* [22, 24): line 2, column 15, end column 17 */
    CHECK(json_integer_value(json_object_get(first, "line")) == 2, "JSON line");
    CHECK(json_integer_value(json_object_get(first, "column")) == 15, "JSON column");
    CHECK(json_integer_value(json_object_get(first, "end_line")) == 2, "JSON end line");
    CHECK(json_integer_value(json_object_get(first, "end_column")) == 17, "JSON end column");
    CHECK_STR(json_string_value(json_object_get(first, "severity")), "error", "JSON severity");
    CHECK_STR(json_string_value(json_object_get(first, "code")), "E0304", "JSON code");
    CHECK_STR(json_string_value(json_object_get(first, "message")), "tile m 96 ?",
              "JSON replaces invalid UTF-8");
    json_t *label = json_array_get(json_object_get(first, "labels"), 0);
    /* [10, 30): 2:3 to 3:5 (30 - 26 + 1) */
    CHECK(json_integer_value(json_object_get(label, "line")) == 2 &&
              json_integer_value(json_object_get(label, "column")) == 3 &&
              json_integer_value(json_object_get(label, "end_line")) == 3 &&
              json_integer_value(json_object_get(label, "end_column")) == 5,
          "JSON label span");
    CHECK_STR(json_string_value(json_object_get(label, "message")), "tile here",
              "JSON label message");
    CHECK_STR(json_string_value(json_array_get(json_object_get(first, "notes"), 0)), "note one",
              "JSON note");
    CHECK(json_array_size(json_object_get(first, "helps")) == 2 &&
              strcmp(json_string_value(json_array_get(json_object_get(first, "helps"), 1)),
                     "help two") == 0,
          "JSON helps");
    json_t *second = json_array_get(root, 1);
    CHECK(json_is_null(json_object_get(second, "file")) &&
              json_integer_value(json_object_get(second, "line")) == 0,
          "JSON without span: null file, zero line");
    CHECK_STR(json_string_value(json_object_get(second, "severity")), "warning",
              "JSON warning severity");
    json_decref(root);

    DiagSink empty;
    diags_init(&empty, &arena);
    CHECK_STR(render(&fx->sm, &empty, false, true), "[]\n", "JSON of no diagnostics");
    CHECK_STR(render(&fx->sm, &empty, false, false), "", "text of no diagnostics");
}

static void test_sort(void) {
    Fixture *fx = fixture();
    sources_add(&fx->sm, "second.cmt", "x", 1);
    diag_error(&fx->d, (Span){1, 0, 1}, "E1", "file 1");
    diag_error(&fx->d, (Span){0, 30, 31}, "E2", "at 30");
    diag_error(&fx->d, (Span){0, 10, 11}, "E3", "at 10 first");
    diag_warning(&fx->d, (Span){0, 10, 12}, "W4", "at 10 second");
    diag_error(&fx->d, SPAN_NONE, "E5", "no span");
    diags_sort(&fx->d);
    const char *order[] = {"E5", "E3", "W4", "E2", "E1"};
    bool ok = fx->d.count == 5;
    for (int i = 0; ok && i < 5; i++) ok = strcmp(fx->d.items[i]->code, order[i]) == 0;
    CHECK(ok, "sort by file then offset, stable");
}

/* diags_take: a scratch sink's diagnostics join another sink in order,
 * errors counted, up to the cap (50 errors) */
static void test_take(void) {
    DiagSink scratch, into;
    diags_init(&scratch, &arena);
    diags_init(&into, &arena);
    diag_warning(&into, SPAN_NONE, "W0001", "already here");
    diag_error(&scratch, SPAN_NONE, "E0001", "first");
    diag_warning(&scratch, SPAN_NONE, "W0002", "second");
    diags_take(&into, &scratch);
    CHECK(into.count == 3 && into.error_count == 1, "take: 3 diagnostics, 1 error");
    CHECK(strcmp(into.items[1]->message, "first") == 0 &&
              strcmp(into.items[2]->code, "W0002") == 0,
          "take: in order, after what was there");
    DiagSink many;
    diags_init(&many, &arena);
    for (int i = 0; i < 60; i++) diag_error(&many, SPAN_NONE, "E0002", "error %d", i);
    diags_take(&into, &many);
    CHECK(into.error_count == 50 && into.capped, "take: no more than the cap");
}

int main(void) {
    test_take();
    test_single_line();
    test_empty_span();
    test_tab_line();
    test_nul_byte();
    test_multi_line();
    test_label_note_help();
    test_no_span_and_utf8();
    test_wide_gutter();
    test_long_line();
    test_color();
    test_cap();
    test_json();
    test_sort();
    arena_free_all(&arena);
    return unit_finish();
}
