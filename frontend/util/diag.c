/* diag.c — diagnostics as records, rendered as GCC-style text (location,
 * severity and code, source line with a gutter, caret and ~ underline,
 * labels, notes, helps) or as a JSON array. */
#include "frontend/util/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define CAP_MESSAGE DIAG_CAP_MESSAGE
#define CAP_CODE DIAG_CAP_CODE
/* Lines longer than this are shown as a window around the span. */
#define LONG_LINE 160
#define WINDOW_BYTES 120
#define WINDOW_BEFORE_SPAN 40

_Static_assert(DIAG_MAX_ERRORS == 50, "CAP_MESSAGE spells out the cap");

void diags_init(DiagSink *d, Arena *arena) {
    memset(d, 0, sizeof *d);
    d->arena = arena;
}

/* Once DIAG_MAX_ERRORS errors are stored, the next error sets `capped`
 * (so the cap note only appears when something was really dropped) and
 * from then on nothing at all is stored. */
/* Stores g in d (whose arena must outlive it); false past the error cap. */
static bool diag_store(DiagSink *d, Diag *g) {
    if (g->severity == SEV_ERROR) d->errors_reported++;
    if (d->capped) return false;
    if (g->severity == SEV_ERROR && d->error_count >= DIAG_MAX_ERRORS) {
        d->capped = true;
        return false;
    }
    if (d->count == d->cap) {
        int new_cap = d->cap ? d->cap * 2 : 16;
        d->items = arena_realloc(d->arena, d->items, sizeof(Diag *) * (size_t)d->cap,
                                 sizeof(Diag *) * (size_t)new_cap);
        d->cap = new_cap;
    }
    d->items[d->count++] = g;
    if (g->severity == SEV_ERROR) {
        d->error_count++;
        /* drop_repeated_diags lowers error_count, so more than
         * DIAG_MAX_ERRORS may be stored over a run: grow, rarely */
        if (d->errors_stored == d->errors_cap) {
            int grown = d->errors_cap ? d->errors_cap * 2 : DIAG_MAX_ERRORS;
            d->errors = arena_realloc(d->arena, d->errors, sizeof(Diag *) * (size_t)d->errors_cap,
                                      sizeof(Diag *) * (size_t)grown);
            d->errors_cap = grown;
        }
        d->errors[d->errors_stored++] = g;
    }
    return true;
}

static Diag *diag_add(DiagSink *d, Severity severity, Span span, const char *code, const char *fmt,
                      va_list ap) {
    if (d->capped || (severity == SEV_ERROR && d->error_count >= DIAG_MAX_ERRORS)) {
        d->capped = true;
        if (severity == SEV_ERROR) d->errors_reported++;
        return NULL;
    }
    Diag *g = ARENA_NEW(d->arena, Diag);
    g->severity = severity;
    g->code = code ? code : "";
    g->span = span;
    g->message = arena_vprintf(d->arena, fmt, ap);
    diag_store(d, g);
    return g;
}

void diags_take(DiagSink *into, const DiagSink *from) {
    int i = 0;
    while (i < from->count && diag_store(into, from->items[i])) i++;
    /* what did not fit past the cap still counts as reported */
    for (i++; i < from->count; i++)
        if (from->items[i]->severity == SEV_ERROR) into->errors_reported++;
    into->errors_reported += from->errors_reported - from->error_count;
}

Diag *diag_error_va(DiagSink *d, Span span, const char *code, const char *fmt, va_list ap) {
    return diag_add(d, SEV_ERROR, span, code, fmt, ap);
}

Diag *diag_error(DiagSink *d, Span span, const char *code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    Diag *g = diag_add(d, SEV_ERROR, span, code, fmt, ap);
    va_end(ap);
    return g;
}

Diag *diag_warning(DiagSink *d, Span span, const char *code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    Diag *g = diag_add(d, SEV_WARNING, span, code, fmt, ap);
    va_end(ap);
    return g;
}

/* Arrays in a Diag keep no capacity: it is the next power of two of the
 * count (minimum 4), so growth happens when the count is 0 or 4, 8, ... */
static void *grow_for_one_more(Arena *a, void *items, int count, size_t elem_size) {
    if (count == 0) return arena_alloc(a, 4 * elem_size);
    if (count < 4 || (count & (count - 1)) != 0) return items;
    return arena_realloc(a, items, elem_size * (size_t)count, elem_size * (size_t)count * 2);
}

void diag_label(Diag *g, DiagSink *d, Span span, const char *fmt, ...) {
    if (!g) return;
    va_list ap;
    va_start(ap, fmt);
    g->labels = grow_for_one_more(d->arena, g->labels, g->label_count, sizeof(DiagLabel));
    g->labels[g->label_count++] = (DiagLabel){span, arena_vprintf(d->arena, fmt, ap)};
    va_end(ap);
}

void diag_note(Diag *g, DiagSink *d, const char *fmt, ...) {
    if (!g) return;
    va_list ap;
    va_start(ap, fmt);
    g->notes =
        (const char **)grow_for_one_more(d->arena, (void *)g->notes, g->note_count, sizeof(char *));
    g->notes[g->note_count++] = arena_vprintf(d->arena, fmt, ap);
    va_end(ap);
}

void diag_help(Diag *g, DiagSink *d, const char *fmt, ...) {
    if (!g) return;
    va_list ap;
    va_start(ap, fmt);
    g->helps =
        (const char **)grow_for_one_more(d->arena, (void *)g->helps, g->help_count, sizeof(char *));
    g->helps[g->help_count++] = arena_vprintf(d->arena, fmt, ap);
    va_end(ap);
}

static bool diag_before(const Diag *a, const Diag *b) {
    if (a->span.file != b->span.file) return a->span.file < b->span.file;
    return a->span.start < b->span.start;
}

/* Merge sort: stable, so diagnostics at one offset keep report order. */
static void merge_sort(Diag **items, Diag **scratch, int count) {
    if (count < 2) return;
    int half = count / 2;
    merge_sort(items, scratch, half);
    merge_sort(items + half, scratch, count - half);
    int i = 0, j = half, k = 0;
    while (i < half && j < count)
        scratch[k++] = diag_before(items[j], items[i]) ? items[j++] : items[i++];
    while (i < half) scratch[k++] = items[i++];
    while (j < count) scratch[k++] = items[j++];
    memcpy(items, scratch, sizeof(Diag *) * (size_t)count);
}

void diags_sort(DiagSink *d) {
    if (d->count < 2) return;
    Arena scratch_arena = {0};
    Diag **scratch = ARENA_ARRAY(&scratch_arena, Diag *, d->count);
    merge_sort(d->items, scratch, d->count);
    arena_free_all(&scratch_arena);
}

/* ---------------------------------------------------------------- text */

typedef struct Style {
    const char *bold, *reset, *error, *warning, *note, *caret;
} Style;

static const Style plain_style = {"", "", "", "", "", ""};
static const Style color_style = {"\033[1m",    "\033[0m",    "\033[1;31m",
                                  "\033[1;35m", "\033[1;36m", "\033[1;32m"};

static const char *severity_word(Severity s) {
    return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

static const char *severity_color(const Style *st, Severity s) {
    return s == SEV_ERROR ? st->error : s == SEV_WARNING ? st->warning : st->note;
}

static const SourceFile *span_file(const SourceManager *sm, Span span) {
    if (!sm || span.file < 0) return NULL;
    return sources_get(sm, span.file);
}

/* Length of the well-formed UTF-8 sequence at p within `avail` bytes, or
 * 0 if there is none (the same rules as source.c). */
static unsigned utf8_sequence_length(const unsigned char *p, size_t avail) {
    unsigned char b = p[0];
    if (b < 0x80) return 1;
    unsigned n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        if (b == 0xE0)
            lo = 0xA0;
        else if (b == 0xED)
            hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        if (b == 0xF0)
            lo = 0x90;
        else if (b == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    if (avail < n || p[1] < lo || p[1] > hi) return 0;
    for (unsigned i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    return n;
}

static unsigned decimal_digits(uint32_t n) {
    unsigned digits = 1;
    while (n >= 10) {
        n /= 10;
        digits++;
    }
    return digits;
}

static uint32_t span_line(const SourceManager *sm, Span span) {
    const SourceFile *f = span_file(sm, span);
    if (!f) return 0;
    uint32_t line, col;
    source_line_col(f, span.start, &line, &col);
    return line;
}

/* Gutter rule: one space of margin, then line numbers right-aligned in at
 * least 4 columns (wider if the largest line number shown needs it), then
 * " |".  So "   14 |" and "      |"; `= note:` lines put '=' under '|'. */
static int gutter_width(const SourceManager *sm, const Diag *g) {
    uint32_t largest = span_line(sm, g->span);
    for (int i = 0; i < g->label_count; i++) {
        uint32_t line = span_line(sm, g->labels[i].span);
        if (line > largest) largest = line;
    }
    unsigned digits = decimal_digits(largest);
    return 1 + (int)(digits > 4 ? digits : 4);
}

static void print_location(FILE *out, const SourceManager *sm, Span span, const Style *st) {
    const SourceFile *f = span_file(sm, span);
    if (!f) {
        fprintf(out, "%scmtc:%s ", st->bold, st->reset);
        return;
    }
    uint32_t line, col;
    source_line_col(f, span.start, &line, &col);
    fprintf(out, "%s%s:%u:%u:%s ", st->bold, f->path, line, col, st->reset);
}

/* Prints the first line of `span` and the caret line under it.  One
 * display column per character: a valid UTF-8 sequence is one character,
 * any other byte that is not printable ASCII shows as '?'.  Tabs stay tabs
 * in both lines so the caret lines up whatever the tab width. */
static void print_snippet(FILE *out, const SourceFile *f, Span span, int width, const Style *st) {
    uint32_t line, col;
    source_line_col(f, span.start, &line, &col);
    size_t line_len;
    const unsigned char *text = (const unsigned char *)source_line_text(f, line, &line_len);
    size_t start = col - 1;
    if (start > line_len) start = line_len; /* inside a "\r\n" */
    size_t end = span.end > span.start ? start + (span.end - span.start) : start;
    if (end > line_len) end = line_len; /* multi-line: first line only */

    size_t window_start = 0, window_end = line_len;
    if (line_len > LONG_LINE) {
        window_start = start > WINDOW_BEFORE_SPAN ? start - WINDOW_BEFORE_SPAN : 0;
        window_end = window_start + WINDOW_BYTES;
        if (window_end > line_len) {
            window_end = line_len;
            window_start = line_len - WINDOW_BYTES;
        }
        /* do not cut a UTF-8 sequence at either side */
        for (int k = 0; k < 3 && window_start < start && (text[window_start] & 0xC0) == 0x80; k++)
            window_start++;
        for (int k = 0; k < 3 && window_end < line_len && window_end > window_start + 1 &&
                        (text[window_end] & 0xC0) == 0x80;
             k++)
            window_end--;
    }
    bool cut_left = window_start > 0, cut_right = window_end < line_len;

    /* build both lines in one pass; at most ~4 bytes per window byte */
    char shown[4 * LONG_LINE + 16], marks[4 * LONG_LINE + 16];
    size_t ns = 0, nm = 0;
    bool caret_done = false;
    if (cut_left) {
        memcpy(shown, "...", 3);
        memcpy(marks, "   ", 3);
        ns = nm = 3;
    }
    size_t marks_colored_at = (size_t)-1;
    for (size_t i = window_start; i < window_end;) {
        unsigned char b = text[i];
        size_t bytes = 1;
        if (b == '\t') {
            shown[ns++] = '\t';
        } else if (b >= 0x20 && b < 0x7F) {
            shown[ns++] = (char)b;
        } else if (b >= 0x80 && (bytes = utf8_sequence_length(text + i, window_end - i)) > 0) {
            memcpy(shown + ns, text + i, bytes);
            ns += bytes;
        } else {
            bytes = 1;
            shown[ns++] = '?';
        }
        if (!caret_done) {
            if (i + bytes > start) { /* the character holding the start */
                marks_colored_at = nm;
                marks[nm++] = '^';
                caret_done = true;
            } else {
                marks[nm++] = b == '\t' ? '\t' : ' ';
            }
        } else if (i < end) {
            marks[nm++] = '~';
        }
        i += bytes;
    }
    if (!caret_done) { /* span at the end of the line */
        marks_colored_at = nm;
        marks[nm++] = '^';
    }
    if (cut_right) {
        memcpy(shown + ns, "...", 3);
        ns += 3;
    }

    if (ns > 0)
        fprintf(out, "%*u | %.*s\n", width, line, (int)ns, shown);
    else
        fprintf(out, "%*u |\n", width, line);
    fprintf(out, "%*s | %.*s%s%.*s%s\n", width, "", (int)marks_colored_at, marks, st->caret,
            (int)(nm - marks_colored_at), marks + marks_colored_at, *st->caret ? st->reset : "");
}

static void render_one(FILE *out, const SourceManager *sm, const Diag *g, const Style *st) {
    int width = gutter_width(sm, g);
    print_location(out, sm, g->span, st);
    const char *color = severity_color(st, g->severity);
    if (g->code && g->code[0])
        fprintf(out, "%s%s[%s]%s: %s\n", color, severity_word(g->severity), g->code,
                *color ? st->reset : "", g->message);
    else
        fprintf(out, "%s%s%s: %s\n", color, severity_word(g->severity), *color ? st->reset : "",
                g->message);
    const SourceFile *f = span_file(sm, g->span);
    if (f) print_snippet(out, f, g->span, width, st);

    for (int i = 0; i < g->label_count; i++) {
        const DiagLabel *label = &g->labels[i];
        print_location(out, sm, label->span, st);
        const char *message = label->message && label->message[0] ? label->message : "here";
        fprintf(out, "%snote%s: %s\n", st->note, *st->note ? st->reset : "", message);
        const SourceFile *lf = span_file(sm, label->span);
        if (lf) print_snippet(out, lf, label->span, width, st);
    }
    for (int i = 0; i < g->note_count; i++)
        fprintf(out, "%*s = %snote%s: %s\n", width, "", st->note, *st->note ? st->reset : "",
                g->notes[i]);
    for (int i = 0; i < g->help_count; i++)
        fprintf(out, "%*s = %shelp%s: %s\n", width, "", st->bold, *st->bold ? st->reset : "",
                g->helps[i]);
}

void diags_render_text(FILE *out, const SourceManager *sm, const DiagSink *d,
                       DiagRenderOptions opts) {
    const Style *st = opts.color ? &color_style : &plain_style;
    /* stderr is unbuffered: written piece by piece, 40 000 warnings took
     * hundreds of thousands of write calls.  The text is built in memory
     * and written in pieces of about RENDER_PIECE bytes (or directly when
     * no memory stream opens): one buffer for all of it grew by doubling,
     * copying and zeroing tens of megabytes. */
    enum { RENDER_PIECE = 64 * 1024 };
    char *text = NULL;
    size_t len = 0;
    FILE *mem = d->count > 1 ? open_memstream(&text, &len) : NULL;
    FILE *to = mem ? mem : out;
    for (int i = 0; i < d->count; i++) {
        render_one(to, sm, d->items[i], st);
        if (mem && ftello(mem) >= RENDER_PIECE && fflush(mem) == 0) {
            fwrite(text, 1, len, out);
            rewind(mem); /* the next piece overwrites this one */
        }
    }
    if (d->capped)
        fprintf(to, "%scmtc:%s %snote%s[%s]: %s\n", st->bold, st->reset, st->note,
                *st->note ? st->reset : "", CAP_CODE, CAP_MESSAGE);
    if (mem) {
        fclose(mem);
        fwrite(text, 1, len, out);
        free(text); /* open_memstream's buffer, not the arena's */
    }
}

/* ---------------------------------------------------------------- JSON */

/* jansson refuses invalid UTF-8; paths and quoted source text may hold
 * such bytes, so each one is replaced by '?'. */
static json_t *json_text(const char *s) {
    if (!s) return json_null();
    size_t len = strlen(s);
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned n = utf8_sequence_length(p + i, len - i);
        if (n == 0) break;
        i += n;
    }
    if (i == len) return json_stringn(s, len);
    Arena scratch = {0};
    char *clean = arena_strndup(&scratch, s, len);
    for (i = 0; i < len;) {
        unsigned n = utf8_sequence_length(p + i, len - i);
        if (n == 0) {
            clean[i] = '?';
            n = 1;
        }
        i += n;
    }
    json_t *str = json_stringn(clean, len);
    arena_free_all(&scratch);
    return str;
}

/* Positions are 1-based lines and byte columns; a diagnostic without a
 * span has "file": null and zeros. */
static void json_set_span(json_t *obj, const SourceManager *sm, Span span) {
    const SourceFile *f = span_file(sm, span);
    uint32_t line = 0, col = 0, end_line = 0, end_col = 0;
    if (f) {
        source_line_col(f, span.start, &line, &col);
        source_line_col(f, span.end > span.start ? span.end : span.start, &end_line, &end_col);
    }
    json_object_set_new(obj, "file", f ? json_text(f->path) : json_null());
    json_object_set_new(obj, "line", json_integer(line));
    json_object_set_new(obj, "column", json_integer(col));
    json_object_set_new(obj, "end_line", json_integer(end_line));
    json_object_set_new(obj, "end_column", json_integer(end_col));
}

static json_t *json_strings(const char **items, int count) {
    json_t *array = json_array();
    for (int i = 0; i < count; i++) json_array_append_new(array, json_text(items[i]));
    return array;
}

static json_t *json_diag(const SourceManager *sm, const Diag *g) {
    json_t *obj = json_object();
    json_set_span(obj, sm, g->span);
    json_object_set_new(obj, "severity", json_string(severity_word(g->severity)));
    json_object_set_new(obj, "code", json_text(g->code ? g->code : ""));
    json_object_set_new(obj, "message", json_text(g->message));
    json_t *labels = json_array();
    for (int i = 0; i < g->label_count; i++) {
        json_t *label = json_object();
        json_set_span(label, sm, g->labels[i].span);
        json_object_set_new(label, "message",
                            json_text(g->labels[i].message ? g->labels[i].message : ""));
        json_array_append_new(labels, label);
    }
    json_object_set_new(obj, "labels", labels);
    json_object_set_new(obj, "notes", json_strings(g->notes, g->note_count));
    json_object_set_new(obj, "helps", json_strings(g->helps, g->help_count));
    return obj;
}

void diags_render_json(FILE *out, const SourceManager *sm, const DiagSink *d) {
    json_t *root = json_array();
    for (int i = 0; i < d->count; i++) json_array_append_new(root, json_diag(sm, d->items[i]));
    if (d->capped) {
        Diag cap = {
            .severity = SEV_NOTE, .code = CAP_CODE, .span = SPAN_NONE, .message = CAP_MESSAGE};
        json_array_append_new(root, json_diag(sm, &cap));
    }
    json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(root);
}
