/* csv.h — a reader of comma-separated values as RFC 4180 writes them: a
 * record a line (CRLF or LF), fields separated by commas, a field holding
 * a comma, a quote or a line break enclosed in double quotes with each
 * quote inside doubled.  Every field remembers the line it starts on, so
 * that a message about a value can name its line even after a quoted
 * field that spans several. */
#ifndef CMT_CSV_H
#define CMT_CSV_H

#include "frontend/util/util.h"

typedef struct CsvField {
    const char *text; /* unquoted, NUL-terminated (may hold line breaks) */
    size_t len;
    uint32_t line; /* 1-based line its first character is on */
} CsvField;

typedef struct CsvRecord {
    CsvField *fields;
    int count;
    uint32_t line; /* the line of its first field */
} CsvRecord;

typedef struct CsvTable {
    CsvRecord *records; /* the header first, when the file has one */
    int count;
} CsvTable;

/* Parses `len` bytes of `text` into records allocated in `a`.  A UTF-8
 * byte-order mark at the start is skipped; lines holding nothing at all
 * are not records; the last line needs no line break.  On malformed text
 * (a quote that never closes, a character after a closing quote other
 * than a comma or a line break, a NUL byte, a record with more or fewer
 * fields than the first) returns false with *error_line and *error (a
 * message in `a`, lower case, no final period) set. */
bool csv_parse(Arena *a, const char *text, size_t len, CsvTable *out, uint32_t *error_line,
               const char **error);

#endif
