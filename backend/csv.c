/* csv.c — the RFC 4180 reader (csv.h): one pass over the text, fields
 * copied into the arena with their quotes undone. */
#include "backend/csv.h"

#include <string.h>

typedef struct CsvReader {
    Arena *arena;
    const char *text;
    size_t len, pos;
    uint32_t line;
    /* the field being read, grown in the arena */
    char *buf;
    size_t buf_len, buf_cap;
    /* the record being read */
    CsvField *fields;
    int field_count, field_cap;
} CsvReader;

static void buf_push(CsvReader *r, char c) {
    if (r->buf_len + 2 > r->buf_cap) {
        size_t cap = r->buf_cap ? r->buf_cap * 2 : 64;
        r->buf = arena_realloc(r->arena, r->buf, r->buf_cap, cap);
        r->buf_cap = cap;
    }
    r->buf[r->buf_len++] = c;
}

static void field_end(CsvReader *r, uint32_t line) {
    if (r->field_count == r->field_cap) {
        int cap = r->field_cap ? r->field_cap * 2 : 16;
        r->fields = arena_realloc(r->arena, r->fields, sizeof(CsvField) * (size_t)r->field_cap,
                                  sizeof(CsvField) * (size_t)cap);
        r->field_cap = cap;
    }
    r->fields[r->field_count++] =
        (CsvField){arena_strndup(r->arena, r->buf ? r->buf : "", r->buf_len), r->buf_len, line};
    r->buf_len = 0;
}

/* At a line break (CRLF, LF or a lone CR): steps over it, true. */
static bool take_line_break(CsvReader *r) {
    char c = r->text[r->pos];
    if (c != '\n' && c != '\r') return false;
    r->pos += c == '\r' && r->pos + 1 < r->len && r->text[r->pos + 1] == '\n' ? 2 : 1;
    r->line++;
    return true;
}

/* Reads one field from r->pos; false with *error set on malformed text. */
static bool read_field(CsvReader *r, const char **error, uint32_t *error_line) {
    uint32_t start_line = r->line;
    if (r->pos < r->len && r->text[r->pos] == '"') {
        r->pos++;
        for (;;) {
            if (r->pos >= r->len) {
                *error_line = start_line;
                *error = "a quoted field that starts here never ends (no closing quote before "
                         "the end of the file)";
                return false;
            }
            char c = r->text[r->pos];
            if (c == '"') {
                if (r->pos + 1 < r->len && r->text[r->pos + 1] == '"') {
                    buf_push(r, '"');
                    r->pos += 2;
                    continue;
                }
                r->pos++;
                break;
            }
            if (c == '\0') {
                *error_line = r->line;
                *error = "a NUL byte in a field";
                return false;
            }
            if (c == '\n' || c == '\r') {
                /* a line break inside quotes belongs to the field, as written */
                size_t before = r->pos;
                take_line_break(r);
                for (size_t i = before; i < r->pos; i++) buf_push(r, r->text[i]);
                continue;
            }
            buf_push(r, c);
            r->pos++;
        }
        if (r->pos < r->len && r->text[r->pos] != ',' && r->text[r->pos] != '\n' &&
            r->text[r->pos] != '\r') {
            *error_line = r->line;
            unsigned char c = (unsigned char)r->text[r->pos];
            const char *shown = c > ' ' && c < 0x7f ? arena_printf(r->arena, "'%c'", c)
                                                    : arena_printf(r->arena, "byte 0x%02x", c);
            *error = arena_printf(r->arena,
                                  "%s after the closing quote of field %d: expected a comma or "
                                  "the end of the line",
                                  shown, r->field_count + 1);
            return false;
        }
    } else {
        while (r->pos < r->len) {
            char c = r->text[r->pos];
            if (c == ',' || c == '\n' || c == '\r') break;
            if (c == '"') {
                *error_line = r->line;
                *error =
                    arena_printf(r->arena,
                                 "a quote inside unquoted field %d (a field holding a quote is "
                                 "enclosed in quotes, and the quote doubled)",
                                 r->field_count + 1);
                return false;
            }
            if (c == '\0') {
                *error_line = r->line;
                *error = "a NUL byte in a field";
                return false;
            }
            buf_push(r, c);
            r->pos++;
        }
    }
    field_end(r, start_line);
    return true;
}

bool csv_parse(Arena *a, const char *text, size_t len, CsvTable *out, uint32_t *error_line,
               const char **error) {
    memset(out, 0, sizeof *out);
    *error_line = 0;
    *error = NULL;
    CsvReader r = {.arena = a, .text = text, .len = len, .line = 1};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) r.pos = 3;
    int record_cap = 0;
    while (r.pos < r.len) {
        if (take_line_break(&r)) continue; /* an empty line is no record */
        uint32_t record_line = r.line;
        r.field_count = 0;
        for (;;) {
            if (!read_field(&r, error, error_line)) return false;
            if (r.pos < r.len && r.text[r.pos] == ',') {
                r.pos++;
                continue;
            }
            break;
        }
        if (r.pos < r.len) take_line_break(&r);
        if (out->count > 0 && r.field_count != out->records[0].count) {
            *error_line = record_line;
            *error = arena_printf(a, "this record has %d field%s, the header %d", r.field_count,
                                  r.field_count == 1 ? "" : "s", out->records[0].count);
            return false;
        }
        if (out->count == record_cap) {
            int cap = record_cap ? record_cap * 2 : 64;
            out->records = arena_realloc(a, out->records, sizeof(CsvRecord) * (size_t)record_cap,
                                         sizeof(CsvRecord) * (size_t)cap);
            record_cap = cap;
        }
        CsvField *fields = ARENA_ARRAY(a, CsvField, r.field_count);
        memcpy(fields, r.fields, sizeof(CsvField) * (size_t)r.field_count);
        out->records[out->count++] = (CsvRecord){fields, r.field_count, record_line};
    }
    return true;
}
