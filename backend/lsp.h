/* lsp.h — the language server (`cmtc lsp`): JSON-RPC framing, URIs and
 * positions (backend/lsp_proto.c), the server loop (backend/lsp.c), and the
 * editor features over checked documents: hover, definition, symbols,
 * completion, formatting, inlay hints (lsp_features.c); what each word
 * names (lsp_occur.c), references and rename (lsp_refs.c), the workspace's
 * files (lsp_workspace.c), semantic tokens (lsp_tokens.c), folding
 * (lsp_folding.c), signature help (lsp_signature.c), workspace symbols
 * (lsp_wsymbols.c), code lenses (lsp_lens.c); the optimizer's worker
 * (lsp_worker.c).  The helpers are declared here so that
 * tests/unit/test_lsp*.c can exercise them directly. */
#ifndef CMT_LSP_H
#define CMT_LSP_H

#include "backend/commands.h"
#include "frontend/ast.h"

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
    /* a framing error was reported: skip to the next header before the
     * next message (not before reporting it, which would wait for more
     * input) */
    bool resync;
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

/* ------------------------------------------------------------ buffers */

/* Bytes for the channel (a worker's snapshot, a large result written as
 * text): malloc'd, grown by doubling, NUL-terminated; `failed` once an
 * allocation failed (later adds do nothing).  The owner frees p. */
typedef struct LspBuf {
    char *p;
    size_t len, cap;
    bool failed;
} LspBuf;
void lsp_buf_add(LspBuf *b, const void *data, size_t n);

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
    bool lens_refresh_support; /* workspace.codeLens.refreshSupport */
    bool lens_refresh_owed;    /* a code-lens answer lacked costs the worker will bring */
    bool watch_registration;   /* the client registers watched files dynamically */
    /* the workspace folders (absolute paths; lsp_workspace.c) */
    const char **roots;
    int root_count;
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
/* Where a diagnostic of doc's check is shown in doc. */
Span lsp_diag_span(LspDoc *doc, const Diag *g);

/* ------------------------------------------------ names and what they are */

/* The modules in which global names are looked up: a program's (the root
 * first, then every file it uses). */
typedef struct LspScope {
    Module *const *mods;
    int count;
} LspScope;

/* The scope of doc's check: its program's modules, or its own module alone
 * when there is no program. */
LspScope lsp_doc_scope(const LspDoc *doc);
/* The first const, op, arch or mapping named `name` (of that DeclKind, any
 * when kind < 0). */
const Decl *lsp_find_global(LspScope sc, Name name, int kind);
/* A memory, compute unit or cluster by name in arch or the archs it
 * extends; *owner (when given) is the arch that declares it. */
const ArchItem *lsp_find_arch_item(LspScope sc, const Decl *arch, Name name, const Decl **owner);
/* A cluster dimension by name, likewise; *item is its cluster. */
const ClusterDimDecl *lsp_find_cluster_dim(LspScope sc, const Decl *arch, Name name,
                                           const ArchItem **item, const Decl **owner);

/* What a word of the source is. */
typedef enum LspSym {
    LSYM_CONST,
    LSYM_OP,
    LSYM_ARCH,
    LSYM_MAPPING,
    LSYM_PARAM,    /* of an op */
    LSYM_TENSOR,   /* of an op: declared, a statement's target, or named in fuse */
    LSYM_INDEX,    /* of an op: in its statements and its mappings */
    LSYM_LEVEL,    /* a memory of an arch */
    LSYM_UNIT,     /* a compute unit of an arch */
    LSYM_CLUSTER,  /* a cluster of an arch */
    LSYM_DIM,      /* a cluster dimension of an arch */
    LSYM_FUNCTION, /* exp, max, sum (built in) */
    LSYM_ATTR,     /* an attribute's key: clock, capacity */
    LSYM_VALUE,    /* a word of the language that is not reserved: fp16, ring, full */
    LSYM_NUMBER,   /* a number or a quantity with its unit */
    LSYM_HOLE,     /* ? */
    LSYM_USE       /* the module a `use` names */
} LspSym;

/* One word of a module and what it names. */
typedef struct LspOccur {
    LspSym sym;
    Name name; /* NULL for numbers, holes and uses */
    Span span;
    /* The declaration the name belongs to: a global itself; the op of a
     * parameter, tensor or index; the arch that declares a level, unit,
     * cluster or dimension.  NULL when the name resolves to nothing. */
    const Decl *owner;
    const Decl *in_decl; /* the top-level declaration the word is in */
    bool decl;           /* the place it is declared */
    bool write;          /* a statement's target */
} LspOccur;

typedef void (*LspOccurFn)(void *ctx, const LspOccur *o);
/* Calls fn for every word of m that names something, in source order
 * within each declaration; names resolve in sc. */
void lsp_occurrences(LspScope sc, const Module *m, LspOccurFn fn, void *ctx);
/* The occurrence at offset in m (a word touching it), false when none. */
bool lsp_occurrence_at(LspScope sc, const Module *m, uint32_t offset, LspOccur *out);
/* Whether w[0, n) is a word the scanner reserves (lang/cmt.re): `tile`,
 * `mapping`; no name can be one. */
bool lsp_reserved_word(const char *w, size_t n);
/* The file (its path) of a file id among sc's modules, or NULL. */
const SourceFile *lsp_scope_file(LspScope sc, int file_id);
const char *lsp_scope_path(LspScope sc, int file_id);

/* ------------------------------------------------------ the workspace */

/* Whether a file name is a module `use` can name: a word then `.cmt`
 * (dotted: only letters, digits and `_`, as `use a.b` needs; otherwise `-`
 * and `.` too, as `use "my-ops.cmt"` allows).  Editor lock and backup
 * files (`.#x.cmt`, `#x.cmt#`, `x.cmt~`) are not. */
bool lsp_module_file_name(const char *name, bool dotted);
/* Whether word occurs in text as a whole word. */
bool lsp_text_has_word(const char *text, size_t len, const char *word);
/* The workspace folders of initialize's params (workspaceFolders, else
 * rootUri, else rootPath). */
void lsp_workspace_set_roots(LspServer *s, json_t *params);
/* Whether a (normalised) path lies in the standard library's folder. */
bool lsp_in_stdlib(const LspServer *s, const char *path);
typedef void (*LspFileFn)(void *ctx, const char *path);
/* Calls fn with each module file on disk under the workspace folders (the
 * open documents' folders when there are none) that is not open. */
void lsp_workspace_files(LspServer *s, Arena *a, LspFileFn fn, void *ctx);
typedef void (*LspProgramFn)(void *ctx, LspScope sc, bool open);
/* Calls fn with each program a name may occur in: every open document's,
 * then every workspace file on disk that is not open and has `word` as a
 * word (every one when word is NULL), parsed with its uses resolved in a
 * (no check). */
void lsp_workspace_programs(LspServer *s, Arena *a, Name word, LspProgramFn fn, void *ctx);

/* References, document highlight and rename (lsp_refs.c).  Rename and
 * prepareRename answer NULL with *why set when they refuse. */
json_t *lsp_references(LspServer *s, LspDoc *doc, uint32_t offset, bool with_declaration);
json_t *lsp_document_highlight(LspServer *s, LspDoc *doc, uint32_t offset);
json_t *lsp_prepare_rename(LspServer *s, LspDoc *doc, uint32_t offset, const char **why);
json_t *lsp_rename(LspServer *s, LspDoc *doc, uint32_t offset, const char *new_name,
                   const char **why);

/* Semantic tokens of the whole document (lsp_tokens.c), as the JSON text
 * of the result (malloc'd; NULL when out of memory: tens of thousands of
 * numbers for a large file, too many to build as jansson values within a
 * keystroke); the legend initialize announces. */
char *lsp_semantic_tokens(LspServer *s, LspDoc *doc);
json_t *lsp_semantic_tokens_legend(void);
/* Folding ranges: blocks, runs of comments and of `use` lines
 * (lsp_folding.c). */
json_t *lsp_folding_ranges(LspServer *s, LspDoc *doc);
/* Signature help for the parameters of the op a mapping header binds
 * (lsp_signature.c). */
json_t *lsp_signature_help(LspServer *s, LspDoc *doc, uint32_t offset);
/* Ops, archs, mappings, consts, levels and tensors of the open documents
 * and the workspace whose names match query (lsp_wsymbols.c). */
json_t *lsp_workspace_symbols(LspServer *s, const char *query);
/* Code lenses (lsp_lens.c): above each mapping that checks clean, its
 * latency and bound, from the worker's cached answers (never computed in
 * the request).  Mappings without an answer yet count in *missing and,
 * when `ask`, are handed to the worker. */
json_t *lsp_code_lenses(LspServer *s, LspDoc *doc, bool ask, int *missing);

/* ------------------------------------------- the optimizer, off the path */

/* What determines the optimizer's answer for a mapping: a 128-bit hash of
 * the text of the mapping, its op, its arch (and the archs it extends)
 * and every const of the program, comments left out and blanks reduced,
 * so an edit in a comment or in another mapping keeps the key. */
typedef struct LspKey {
    uint64_t a, b;
} LspKey;

/* The key of doc's mapping i (prog->mappings[i]) when it checks clean. */
bool lsp_mapping_key(LspDoc *doc, int i, LspKey *out);
/* The keys of doc's mappings that check clean (what the worker may
 * usefully run); *out lives in doc's arena. */
int lsp_wanted_keys(LspDoc *doc, const LspKey **out);
/* The mapping of doc's current version with that key, or NULL. */
const IrMapping *lsp_mapping_by_key(LspDoc *doc, LspKey key);
/* In the worker process: runs the optimizer on m (in place: the worker's
 * own IR) and returns its answer as the server caches it: the
 * hints by hole, the tooltip, and the costs hover shows. */
json_t *lsp_optimize_answer(LspDoc *doc, const IrMapping *m);
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
