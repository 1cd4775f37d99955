/* util.h — the utilities every layer uses: memory arenas, interned
 * names, source files and spans, output files, diagnostics, spelling
 * suggestions, units, numbers and element types.  The lowest layer: it
 * includes nothing of cmtc's (README, Architecture). */
#ifndef CMT_UTIL_H
#define CMT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vocab.h"

/* ------------------------------------------------------------------ arena */

/* Everything lives in an arena freed whole: the process, one document
 * version, or one pass.  There is no free() of single objects. */
typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
    ArenaChunk *head;
    size_t used_total; /* bytes handed out, for statistics */
    /* the free bytes of the head chunk already zeroed: arena_alloc hands
     * them out inline (a compile makes millions of small allocations) */
    char *next, *limit;
} Arena;

/* What does not fit between next and limit (arena.c). */
void *arena_alloc_slow(Arena *a, size_t size);
/* zeroed, 8-aligned (enough for every type cmtc allocates: arena.c) */
static inline void *arena_alloc(Arena *a, size_t size) {
    size_t need = (size + 7) & ~(size_t)7;
    /* need - 1 wraps for a size of 0 (or so large that rounding wrapped),
     * which the slow path handles */
    if (need - 1 < (size_t)(a->limit - a->next)) {
        void *p = a->next;
        a->next += need;
        a->used_total += need;
        return p;
    }
    return arena_alloc_slow(a, size);
}
void *arena_realloc(Arena *a, void *old, size_t old_size, size_t new_size);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *arena_vprintf(Arena *a, const char *fmt, va_list ap);
void arena_free_all(Arena *a);
/* Empties the arena but keeps its newest chunk for what comes next: an
 * arena emptied often (once per declaration) then reuses memory already
 * paged in instead of asking malloc for a fresh chunk each time. */
void arena_reset(Arena *a);
#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

/* A growable array of pointers kept in an arena (old storage is simply
 * abandoned to the arena when it grows). */
typedef struct PtrVec {
    void **items;
    int count, cap;
} PtrVec;
void ptrvec_push(Arena *a, PtrVec *v, void *item);

/* The process arena: interned names, the standard library, server state. */
Arena *process_arena(void);

/* ---------------------------------------------------------------- hashing */
/* FNV-1a over n 8-byte words (integers or the bits of doubles), each step
 * folded down so that the low bits an open-addressing table indexes with
 * depend on every bit of the key; never 0, which marks an empty slot.
 * The keys of the lowering's and the optimizer's memos. */
static inline uint64_t hash_words(const void *words, size_t n) {
    const unsigned char *p = words;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        uint64_t w;
        memcpy(&w, p + 8 * i, sizeof w);
        h ^= w;
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

/* ------------------------------------------------------------------ names */

/* Interned strings: equal names are equal pointers.  Lives in the process
 * arena for the life of the process. */
typedef const char *Name;
Name intern(const char *s, size_t len);
Name intern_cstr(const char *s);
/* Room for `more` names without rehashing (the table still grows past
 * it): the parser reserves for a large file before reading it. */
void intern_reserve(size_t more);
/* `before` followed by `name` in backquotes, interned: what a check names
 * in a message it may never print (the value of a `capacity`, the default
 * of `M`), made without a printf or an allocation once it was seen. */
Name intern_quoted(const char *before, Name name);

/* A map from interned names to ints (an index into an array of named
 * things), open addressing in an arena: O(1) lookups where a scan of an
 * op's thousands of tensors made checking quadratic.  Zero-initialised is
 * empty. */
typedef struct NameMap {
    Name *keys;
    int *values;
    uint32_t mask; /* capacity - 1; 0 with no table */
    uint32_t count;
} NameMap;
/* Maps key to value (replacing an earlier value of key). */
void name_map_put(Arena *arena, NameMap *m, Name key, int value);
/* The value of key, or -1. */
int name_map_get(const NameMap *m, Name key);

/* ------------------------------------------------------- sources and spans */

typedef struct SourceFile {
    int id;                /* index in the source manager */
    const char *path;      /* as given or resolved; "<stdin>" etc. */
    const char *text;      /* NUL-terminated copy; may contain NUL bytes */
    size_t len;            /* bytes, excluding the terminating NUL */
    uint32_t *line_starts; /* byte offset of each line start */
    uint32_t line_count;
    /* the file read, when it was one (sources_load*, or standard input
     * redirected from a file): outputs refuse to overwrite it */
    bool identified;
    uint64_t device, inode;
} SourceFile;

/* Byte span [start, end) in one file. */
typedef struct Span {
    int32_t file; /* SourceFile id, -1 for none */
    uint32_t start, end;
} Span;

#define SPAN_NONE ((Span){-1, 0, 0})
Span span_join(Span a, Span b); /* smallest span covering both (same file) */

typedef struct SourceManager {
    Arena *arena;
    SourceFile **files;
    int count, cap;
} SourceManager;

/* The largest source cmtc reads, checked while reading so that an endless
 * input (/dev/zero) stops there: far beyond any real program (a million
 * lines of 100 bytes is 100 MB), well inside the 32-bit offsets. */
#define SOURCE_MAX_BYTES ((size_t)256 << 20)

void sources_init(SourceManager *sm, Arena *arena);
/* Adds a file whose text is copied; computes the line table.  NULL with
 * errno EFBIG past SOURCE_MAX_BYTES. */
SourceFile *sources_add(SourceManager *sm, const char *path, const char *text, size_t len);
/* Reads a file named on the command line: a regular file, or a stream (a
 * pipe, a FIFO with a writer, a device) read to its end.  NULL with errno
 * set on failure: EFBIG past SOURCE_MAX_BYTES, EISDIR for a folder,
 * ENODATA for a FIFO nobody writes to (opening never waits for a writer). */
SourceFile *sources_load(SourceManager *sm, const char *path);
/* Reads a module found through `use`: regular files only, so that a FIFO
 * or a device on the module path cannot stall a compile or the language
 * server (errno ESPIPE for anything else).  Failures as sources_load. */
SourceFile *sources_load_module(SourceManager *sm, const char *path);
/* Reads an open stream (standard input) to its end, named `name`, under
 * the same cap; failures as sources_load. */
SourceFile *sources_read_fd(SourceManager *sm, const char *name, int fd);
/* Why a load failed, for a message: strerror, or the cap for EFBIG and
 * the reason for EISDIR, ENODATA and ESPIPE as set above. */
const char *sources_error_text(int err);
SourceFile *sources_get(const SourceManager *sm, int id);

/* 1-based line; 1-based column counted in bytes. */
void source_line_col(const SourceFile *f, uint32_t offset, uint32_t *line, uint32_t *col);
/* 0-based index of the line holding `offset` (binary search). */
uint32_t source_line_index(const SourceFile *f, uint32_t offset);
/* 0-based column in UTF-16 code units for the language server. */
uint32_t source_utf16_col(const SourceFile *f, uint32_t offset);
/* Byte offset of a 0-based (line, UTF-16 or UTF-8 column); clamps. */
uint32_t source_offset_of(const SourceFile *f, uint32_t line0, uint32_t col, bool utf16);
/* The text of 1-based line `line` without its newline. */
const char *source_line_text(const SourceFile *f, uint32_t line, size_t *len);

/* ----------------------------------------------------------- output files */

/* An output written whole or not at all.  A regular file (or a new one) is
 * written to a temporary file beside it, renamed over it once every byte
 * is written, flushed and synced: a failure or a signal leaves the old
 * file as it was.  A destination that is not a regular file (/dev/stdout,
 * /dev/full, a FIFO, a terminal: anything under /dev or /proc, or found
 * so) is written directly, its write errors still reported. */
typedef struct OutputFile {
    FILE *stream;          /* write here */
    const char *path;      /* the destination as given */
    const char *target;    /* the file the rename replaces (links followed) */
    const char *temp_path; /* the temporary file; NULL when direct */
} OutputFile;

/* Opens `path` for writing (names in `a`); false with errno set. */
bool output_open(OutputFile *o, Arena *a, const char *path);
/* Checks every write, flushes, syncs and renames into place; false with
 * errno set, the temporary file removed and the destination untouched. */
bool output_commit(OutputFile *o);
/* Gives the output up: the temporary file removed, the destination as it
 * was (a direct destination keeps what was written). */
void output_discard(OutputFile *o);
/* The loaded source that `path` names (same device and inode, whatever
 * the spelling: links, `./`, another hard link), or NULL. */
const SourceFile *output_names_source(const SourceManager *sm, const char *path);

/* ------------------------------------------------------------ diagnostics */

typedef enum Severity { SEV_ERROR, SEV_WARNING, SEV_NOTE } Severity;

typedef struct DiagLabel {
    Span span;
    const char *message; /* may be "" */
} DiagLabel;

typedef struct Diag {
    Severity severity;
    const char *code;    /* stable, e.g. "E0304"; docs/errors/E0304.md */
    Span span;           /* primary */
    const char *message; /* lower case, no final period */
    DiagLabel *labels;   /* secondary spans, rendered as `note:` with source */
    int label_count;
    const char **notes; /* `= note: ...` lines */
    int note_count;
    const char **helps; /* `= help: ...` lines */
    int help_count;
} Diag;

#define DIAG_MAX_ERRORS 50

/* What the sink says once errors past DIAG_MAX_ERRORS are dropped (every
 * renderer, and the language server's list, ends with it). */
#define DIAG_CAP_CODE "E0199"
#define DIAG_CAP_MESSAGE "too many errors; stopped after 50"

typedef struct DiagSink {
    Arena *arena;
    Diag **items;
    int count, cap;
    int error_count;
    bool capped; /* reached DIAG_MAX_ERRORS; later errors are dropped */
    /* every error reported, stored or dropped past the cap: what a caller
     * compares before and after a check to learn whether it failed */
    long errors_reported;
    /* Every error ever stored, in report order (a few: errors are capped):
     * span_has_errors looks here, not through the warnings, so a file
     * with many warnings is not checked in quadratic time. */
    Diag **errors;
    int errors_stored, errors_cap;
} DiagSink;

void diags_init(DiagSink *d, Arena *arena);
Diag *diag_error(DiagSink *d, Span span, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same with a va_list, for checkers' own wrappers. */
Diag *diag_error_va(DiagSink *d, Span span, const char *code, const char *fmt, va_list ap);
Diag *diag_warning(DiagSink *d, Span span, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* All of these accept NULL (a dropped diagnostic) and do nothing. */
void diag_label(Diag *g, DiagSink *d, Span span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diag_note(Diag *g, DiagSink *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_help(Diag *g, DiagSink *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Sorts by file, offset (stable), so output order is deterministic. */
void diags_sort(DiagSink *d);
/* Appends every diagnostic of `from` to `into` (both sinks' arenas must
 * outlive them): a check run into a scratch sink, reported after all. */
void diags_take(DiagSink *into, const DiagSink *from);

typedef struct DiagRenderOptions {
    bool color;
} DiagRenderOptions;
/* GCC-style text with line gutter, caret and ~ underline. */
void diags_render_text(FILE *out, const SourceManager *sm, const DiagSink *d,
                       DiagRenderOptions opts);
/* A JSON array of diagnostic objects (jansson), written to `out`. */
void diags_render_json(FILE *out, const SourceManager *sm, const DiagSink *d);

/* ------------------------------------------------------------- spelling */

/* The candidate closest to `name` within an edit-distance cutoff that grows
 * with the name's length, or NULL. */
const char *spell_suggest(const char *name, const char *const *candidates, int count);
int edit_distance(const char *a, const char *b);

/* ------------------------------------------------------------------ units */

/* A unit is numerator/denominator of base kinds; a value is stored in the
 * SI base of that pair (bytes, seconds, hertz, joules, counts). */
typedef enum BaseUnit {
    BU_NONE,   /* dimensionless */
    BU_BYTE,   /* size */
    BU_SECOND, /* time */
    BU_CYCLE,  /* time in clock cycles: needs the arch's clock */
    BU_HERTZ,  /* frequency */
    BU_JOULE,  /* energy */
    BU_MAC,    /* multiply-accumulate */
    BU_OP,     /* vector element operation */
    BU_FLOP,   /* floating point operation (1 MAC = 2 FLOP) */
    BU_USD     /* a price, in US dollars (an arch's `price`) */
} BaseUnit;

typedef struct UnitDim {
    uint8_t num, den; /* BaseUnit */
} UnitDim;

/* Parses a unit spelling such as "GiB", "GB/s", "pJ/MAC", "cycles".
 * On success sets *dim and *scale (multiply a value to get SI). */
bool unit_parse(const char *text, size_t len, UnitDim *dim, double *scale);
/* "size", "bandwidth", "energy per byte", ... for messages. */
const char *unit_dim_describe(UnitDim dim);
/* An example for messages: "2 MiB", "64 GB/s", ... */
const char *unit_dim_example(UnitDim dim);
/* The unit values of `dim` are held in, for messages: "B/s", "J/B",
 * "cycles", "Hz"; "" for a plain number. */
const char *unit_dim_si_name(Arena *a, UnitDim dim);
bool unit_dim_eq(UnitDim a, UnitDim b);
/* Formats an SI value with a readable prefix ("1.5 MiB", "18.4 us"). */
const char *unit_format(Arena *a, double value, UnitDim dim);

/* ------------------------------------------------------------ numbers */

/* Parses an integer literal with optional '_' separators.  false on
 * overflow of int64. */
bool parse_int_literal(const char *text, size_t len, int64_t *out);
/* Parses a decimal literal (with '_' separators, optional exponent). */
bool parse_real_literal(const char *text, size_t len, double *out);
/* The longest optimizer time limit accepted (about 11.6 days): deadline
 * arithmetic and lp_solve's whole-second timeout stay exact far below it,
 * and a run without a limit is asked for by giving none. */
#define TIME_LIMIT_MAX_S 1e6
/* Parses a time limit in seconds (--time-limit, the language server's
 * budget): a finite number in (0, TIME_LIMIT_MAX_S]; "inf", "nan", "0",
 * "-1", "1e999", a subnormal and trailing junk are refused. */
bool parse_time_limit(const char *text, double *seconds);
/* Overflow-checked arithmetic; false on overflow. */
bool checked_add(int64_t a, int64_t b, int64_t *out);
bool checked_sub(int64_t a, int64_t b, int64_t *out);
bool checked_mul(int64_t a, int64_t b, int64_t *out);

/* ------------------------------------------------------- element types */

typedef enum ElemType { ET_NONE, CMT_ELEM_TYPES(VOCAB_ELEM_ENUM) } ElemType;
/* What a tensor of a `phase train` op is to the training step (the memory
 * a device holds, docs/cost-model.md 13): data, a weight (`param`), a
 * weight's gradient, or optimizer state (fp32 master copy and moments). */
/* what a tensor is to a step: data, a weight, its gradient, optimizer
 * state, or a `cache` kept from step to step (a KV cache) */
typedef enum TensorUse {
    TU_DATA,
    TU_WEIGHT,
    TU_WEIGHT_GRAD,
    TU_OPT_STATE,
    TU_CACHE,
    TU_ROUTE /* a `route`: each token's picks of an expert, with their weights */
} TensorUse;

/* What a statement of a derived op does in the training step: the forward
 * pass as written, a recomputed copy, a gradient, or the weight update. */
typedef enum StmtRole { SR_FORWARD, SR_RECOMPUTE, SR_BACKWARD, SR_UPDATE } StmtRole;

/* Bits per element. */
int elem_type_bits(ElemType t);
const char *elem_type_name(ElemType t);
/* ET_NONE when `word` names no element type. */
ElemType elem_type_of_name(const char *word);
extern const char *const elem_type_names[]; /* as written, in the order of vocab.h */
extern const int elem_type_count;

#endif
