/* lsp.h — the language server (`cmtc lsp`): JSON-RPC framing, URIs and
 * positions (backend/lsp.c), and the editor features over one checked
 * document (backend/lsp_features.c).  The helpers are declared here so that
 * tests/unit/test_lsp*.c can exercise them directly. */
#ifndef CMT_LSP_H
#define CMT_LSP_H

#include "../ir/ir.h"
#include "commands.h"

#include <jansson.h>

/* ----------------------------------------------------------- framing */

#define LSP_MAX_BODY (64u << 20) /* larger Content-Length is refused */
#define LSP_MAX_HEADER 8192      /* a longer header section is refused */

/* Reads `Content-Length` framed messages from a file descriptor.  The
 * buffer is malloc'd (it is I/O, not part of any document) and released
 * by lsp_reader_close. */
typedef struct LspReader {
    int fd;
    char *buf;
    size_t start, end, cap;
    bool eof;
} LspReader;

typedef enum LspReadStatus {
    LSP_READ_MESSAGE, /* *body, *len: valid until the next call */
    LSP_READ_ERROR,   /* a framing error, described in err; read on */
    LSP_READ_EOF      /* end of input (a partial message is dropped) */
} LspReadStatus;

void lsp_reader_init(LspReader *r, int fd);
void lsp_reader_close(LspReader *r);
LspReadStatus lsp_read(LspReader *r, const char **body, size_t *len, char *err, size_t err_size);
/* Offset of the first raw `Content-Length: N` header line in buf, or
 * (size_t)-1.  Valid JSON never contains one (raw line breaks cannot occur
 * inside JSON strings), so finding one inside a body shows that its
 * declared length was wrong and where the next message starts. */
size_t lsp_find_header(const char *buf, size_t len);

/* ------------------------------------------------------ URIs and paths */

/* The path of a `file://` URI, percent-decoded (`file:///a%20b` -> "/a b",
 * `file://localhost/x` -> "/x", `file://host/x` -> "//host/x"); NULL for
 * any other scheme or a decoded NUL byte. */
char *lsp_uri_to_path(Arena *a, const char *uri);
/* `file://` + the path with every byte except unreserved ones and '/'
 * percent-encoded; a relative path is made absolute first. */
char *lsp_path_to_uri(Arena *a, const char *path);
/* Lexical normalisation: duplicate slashes, "." and ".." removed. */
char *lsp_normalize_path(Arena *a, const char *path);

/* ------------------------------------------------------------ positions */

/* LSP positions: 0-based line, column in UTF-16 code units (utf16) or in
 * bytes (UTF-8).  A column past the end of its line is clamped to the line
 * end, a line past the end of the file to the end of the file. */
void lsp_position_of(const SourceFile *f, uint32_t offset, bool utf16, uint32_t *line,
                     uint32_t *col);
uint32_t lsp_offset_of(const SourceFile *f, uint32_t line, uint32_t col, bool utf16);
/* A copy of s with invalid UTF-8 replaced by U+FFFD (jansson refuses
 * invalid strings; files read from disk may contain any bytes). */
char *lsp_utf8_clean(Arena *a, const char *s, size_t len);

/* ------------------------------------------------------------ server */

typedef struct LspDoc LspDoc;
struct LspDoc {
    LspDoc *next;
    bool open;
    Arena arena;      /* this version: text, AST, IR, diagnostics, caches */
    const char *uri;  /* as the client spelled it */
    const char *path; /* decoded, normalised; the uri itself if not file: */
    int64_t version;
    SourceManager sm;
    DiagSink diags;
    SourceFile *file; /* the document's own text */
    Program *prog;
    Module *module; /* prog->modules[0] */
    void *cache;    /* lsp_features.c: per-version lookups */
};

typedef struct LspServer {
    bool initialized, shutdown, exiting;
    int exit_code;
    bool utf16;   /* false when the client took "utf-8" */
    int out_fd;   /* the protocol channel (the original stdout) */
    LspDoc *docs; /* open and closed (reusable) documents */
    CommonOptions common;
    CheckOptions check;
} LspServer;

/* Range / Location JSON for a span of a file of doc's program. */
json_t *lsp_range_json(const LspServer *s, const SourceFile *f, Span sp);
json_t *lsp_location_json(const LspServer *s, const LspDoc *doc, Span sp);
/* The URI to report for a file: the open document's own URI when one has
 * that path, else file:// of the path. */
const char *lsp_uri_for_path(const LspServer *s, Arena *a, const char *path);
/* A JSON string of UTF-8-cleaned text. */
json_t *lsp_jstr(const char *s);
LspDoc *lsp_doc_by_path(const LspServer *s, const char *path);

/* Features (backend/lsp_features.c).  offset is a byte offset in
 * doc->file; each returns the JSON result (never NULL: json_null()). */
json_t *lsp_hover(LspServer *s, LspDoc *doc, uint32_t offset);
json_t *lsp_definition(LspServer *s, LspDoc *doc, uint32_t offset);
json_t *lsp_document_symbols(LspServer *s, LspDoc *doc);
json_t *lsp_completion(LspServer *s, LspDoc *doc, uint32_t offset);
json_t *lsp_inlay_hints(LspServer *s, LspDoc *doc, Span range);
json_t *lsp_formatting(LspServer *s, LspDoc *doc);
/* Quick fixes for the diagnostics of a codeAction request (its params):
 * each "did you mean `X`?" becomes an edit replacing the misspelt word. */
json_t *lsp_code_actions(LspServer *s, LspDoc *doc, json_t *params);
/* Where a diagnostic of another file of doc's program is shown in doc:
 * the `use` that brings that file in (directly, or the first `use` when
 * it comes in through another file); the start of doc without any. */
Span lsp_use_site(LspDoc *doc, int file_id);

#endif
