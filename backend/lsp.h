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
    /* Optional: called before each read of fd, returns once fd is
     * readable (false: stop reading, as at end of input).  The server
     * waits here for its optimizer worker too (backend/lsp_worker.c). */
    bool (*wait)(void *ctx, int fd);
    void *wait_ctx;
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

typedef struct LspWork LspWork;
typedef struct LspPending LspPending;

typedef struct LspServer {
    bool initialized, shutdown, exiting;
    int exit_code;
    bool utf16;   /* false when the client took "utf-8" */
    int out_fd;   /* the protocol channel (the original stdout) */
    LspDoc *docs; /* open and closed (reusable) documents */
    CommonOptions common;
    CheckOptions check;
    /* inlay hints and the optimizer worker (backend/lsp_worker.c) */
    bool refresh_support; /* workspace.inlayHint.refreshSupport */
    bool refresh_owed;    /* an answer lacked hints the worker will bring */
    int answers_since_refresh;
    int64_t next_request; /* ids of the server's own requests */
    LspPending *pending;  /* inlay-hint requests waiting for the worker */
    LspWork *work;
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
/* Inlay hints from the optimizer's cached answers (never runs it): the
 * mappings in range that check clean and have holes.  Each one without an
 * answer yet counts in *missing and, when `ask`, is handed to the worker. */
json_t *lsp_inlay_hints(LspServer *s, LspDoc *doc, Span range, bool ask, int *missing);
/* NULL with *why set (in doc's arena) when the file cannot be formatted. */
json_t *lsp_formatting(LspServer *s, LspDoc *doc, const char **why);
/* Quick fixes for the diagnostics of a codeAction request (its params):
 * each "did you mean `X`?" becomes an edit replacing the misspelt word. */
json_t *lsp_code_actions(LspServer *s, LspDoc *doc, json_t *params);
/* Where a diagnostic of another file of doc's program is shown in doc:
 * the `use` that brings that file in (directly, or the first `use` when
 * it comes in through another file); the start of doc without any. */
Span lsp_use_site(LspDoc *doc, int file_id);

/* ------------------------------------------- the optimizer, off the path */

/* What determines the optimizer's answer for a mapping: a 128-bit hash of
 * the text of the mapping, its op, its arch (and the archs it extends)
 * and every const of the program, comments left out and blanks reduced,
 * so an edit in a comment or in another mapping keeps the key. */
typedef struct LspKey {
    uint64_t a, b;
} LspKey;

/* The keys of doc's mappings that check clean and have holes (what the
 * worker may usefully run); *out lives in doc's arena. */
int lsp_wanted_keys(LspDoc *doc, const LspKey **out);
/* The mapping of doc's current version with that key, or NULL. */
IrMapping *lsp_mapping_by_key(LspDoc *doc, LspKey key);
/* In the worker process: runs the optimizer on m (in place: the worker's
 * own IR) and returns its answer as the server caches it: the
 * hints by hole, the tooltip, and the costs hover shows. */
json_t *lsp_optimize_answer(LspDoc *doc, IrMapping *m);
/* Seconds the optimizer may spend on one mapping (2, or
 * CMT_LSP_OPTIMIZE_SECONDS). */
double lsp_optimize_budget_s(void);

/* backend/lsp_worker.c: one worker process at a time runs the optimizer
 * for one mapping (on its own check of a snapshot of the document);
 * answers are cached by key for the life of the server. */
void lsp_work_init(LspServer *s);
/* The cached answer for key, or NULL. */
json_t *lsp_work_answer(LspServer *s, LspKey key);
/* Asks the worker for key (doc's mapping), unless cached or under way. */
void lsp_work_want(LspServer *s, LspDoc *doc, LspKey key);
/* Whether work for doc's uri is queued or running. */
bool lsp_work_busy(LspServer *s, const char *uri);
/* doc has a new version (or closed: doc->open false): work for keys it no
 * longer has is dropped, a worker running one is stopped. */
void lsp_work_doc_changed(LspServer *s, LspDoc *doc);
/* Waits until fd is readable (fd < 0: until one worker event), handling
 * the worker's answers meanwhile; returns whether fd is readable. */
bool lsp_work_step(LspServer *s, int fd);
/* Stops every worker and drops all queued work (answers are kept). */
void lsp_work_stop(LspServer *s);
/* lsp_work_stop, then frees the cache (at exit). */
void lsp_work_free(LspServer *s);
/* The worker process, `cmtc lsp --worker`: reads a snapshot on standard
 * input, writes the answer on standard output; returns the exit code. */
int lsp_worker_main(LspServer *s);
/* backend/lsp.c: (uri, text) becomes doc's current version, checked. */
bool lsp_doc_load(LspServer *s, LspDoc *doc, const char *uri, const char *text, size_t len);
/* backend/lsp.c: called when an answer for work of uri arrived (or the
 * work failed): pending requests are answered, a refresh sent. */
void lsp_answer_arrived(LspServer *s, const char *uri);

#endif
