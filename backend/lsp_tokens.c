/* lsp_tokens.c — semantic tokens: what each word of the document is, so
 * that an editor colours tensors, indices, levels and dimensions apart
 * (the TextMate grammar sees only words).  Names come from the occurrence
 * walk (lsp_occur.c), reserved words from a scan of the text that skips
 * comments and strings, so that a file that does not parse still has its
 * keywords coloured. */
#include "backend/lsp.h"

#include <stdlib.h>
#include <string.h>

/* The legend: standard LSP token types, so that every theme colours them
 * (docs/editors.md lists what each stands for). */
enum {
    TT_VARIABLE,       /* tensor; const (readonly) */
    TT_TYPE_PARAMETER, /* index */
    TT_PARAMETER,      /* op parameter */
    TT_FUNCTION,       /* op */
    TT_CLASS,          /* arch */
    TT_PROPERTY,       /* level (memory) */
    TT_ENUM_MEMBER,    /* cluster dimension */
    TT_STRUCT,         /* compute unit, cluster */
    TT_INTERFACE,      /* mapping */
    TT_METHOD,         /* built-in function: exp, max, sum */
    TT_KEYWORD,        /* reserved word, attribute key */
    TT_TYPE,           /* element type, topology, role, overlap/objective value */
    TT_NUMBER,         /* number, quantity with its unit */
    TT_MACRO,          /* hole `?` */
    TT_NAMESPACE,      /* module path of a `use` */
    TT_STRING,         /* file of a `use "x.cmt"` */
    TT_COUNT
};
static const char *const token_types[TT_COUNT] = {
    "variable",   "typeParameter", "parameter", "function", "class",   "property",
    "enumMember", "struct",        "interface", "method",   "keyword", "type",
    "number",     "macro",         "namespace", "string"};

enum { TM_DECLARATION = 1, TM_READONLY = 2, TM_DEFAULT_LIBRARY = 4, TM_MODIFICATION = 8 };
static const char *const token_modifiers[] = {"declaration", "readonly", "defaultLibrary",
                                              "modification"};

json_t *lsp_semantic_tokens_legend(void) {
    json_t *types = json_array(), *mods = json_array();
    for (int i = 0; i < TT_COUNT; i++) json_array_append_new(types, json_string(token_types[i]));
    for (size_t i = 0; i < sizeof token_modifiers / sizeof *token_modifiers; i++)
        json_array_append_new(mods, json_string(token_modifiers[i]));
    return json_pack("{s:o,s:o}", "tokenTypes", types, "tokenModifiers", mods);
}

typedef struct Token {
    uint32_t start, end;
    int type, mods;
} Token;

typedef struct Tokens {
    Arena *a;
    const SourceFile *f;
    Token *items;
    int count, cap;
} Tokens;

static void token_add(Tokens *t, uint32_t start, uint32_t end, int type, int mods) {
    if (end <= start || end > t->f->len) return;
    if (t->count == t->cap) {
        int cap = t->cap ? 2 * t->cap : 256;
        t->items = arena_realloc(t->a, t->items, sizeof(Token) * (size_t)t->cap,
                                 sizeof(Token) * (size_t)cap);
        t->cap = cap;
    }
    t->items[t->count++] = (Token){start, end, type, mods};
}

static int type_of(const LspOccur *o, int *mods) {
    *mods = o->decl ? TM_DECLARATION : 0;
    if (o->write) *mods |= TM_MODIFICATION;
    switch (o->sym) {
    case LSYM_CONST: *mods |= TM_READONLY; return TT_VARIABLE;
    case LSYM_TENSOR: return TT_VARIABLE;
    case LSYM_INDEX: return TT_TYPE_PARAMETER;
    case LSYM_PARAM: return TT_PARAMETER;
    case LSYM_OP: return TT_FUNCTION;
    case LSYM_ARCH: return TT_CLASS;
    case LSYM_LEVEL: return TT_PROPERTY;
    case LSYM_DIM: return TT_ENUM_MEMBER;
    case LSYM_UNIT:
    case LSYM_CLUSTER: return TT_STRUCT;
    case LSYM_MAPPING: return TT_INTERFACE;
    case LSYM_FUNCTION: *mods |= TM_DEFAULT_LIBRARY; return TT_METHOD;
    case LSYM_ATTR: return TT_KEYWORD;
    case LSYM_VALUE: return TT_TYPE;
    case LSYM_NUMBER: return TT_NUMBER;
    case LSYM_HOLE: return TT_MACRO;
    case LSYM_USE: return TT_NAMESPACE;
    }
    return TT_VARIABLE;
}

static void occurrence_token(void *ctx, const LspOccur *o) {
    Tokens *t = ctx;
    if (o->span.file != t->f->id) return;
    int mods;
    int type = type_of(o, &mods);
    if (o->sym == LSYM_USE && o->span.start < t->f->len && t->f->text[o->span.start] == '"')
        type = TT_STRING;
    token_add(t, o->span.start, o->span.end, type, mods);
}

static bool word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Reserved words of the text, outside comments and strings. */
static void keyword_tokens(Tokens *t) {
    const char *s = t->f->text;
    uint32_t n = (uint32_t)t->f->len, i = 0;
    while (i < n) {
        if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n') i++;
        } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) i++;
            i = i + 2 < n ? i + 2 : n;
        } else if (s[i] == '"') {
            i++;
            while (i < n && s[i] != '"' && s[i] != '\n') i++;
            if (i < n) i++;
        } else if (word_char(s[i])) {
            uint32_t b = i;
            while (i < n && word_char(s[i])) i++;
            if (!(s[b] >= '0' && s[b] <= '9') && lsp_reserved_word(s + b, i - b))
                token_add(t, b, i, TT_KEYWORD, 0);
        } else {
            i++;
        }
    }
}

static int by_start(const void *x, const void *y) {
    const Token *a = x, *b = y;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    /* a reserved word wins over the attribute the parser made of it
     * (`cost`, `array`) */
    return (a->type != TT_KEYWORD) - (b->type != TT_KEYWORD);
}

static void out_number(LspBuf *o, uint32_t v, bool comma) {
    char digits[16];
    int n = 0;
    do {
        digits[sizeof digits - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (comma) lsp_buf_add(o, ",", 1);
    lsp_buf_add(o, digits + sizeof digits - n, (size_t)n);
}

char *lsp_semantic_tokens(LspServer *s, LspDoc *d) {
    Arena scratch = {0};
    /* about one token per 5 bytes of code: room for them at once */
    Tokens t = {&scratch, d->file, NULL, 0, 0};
    t.cap = (int)(d->file->len / 5) + 64;
    t.items = ARENA_ARRAY(&scratch, Token, t.cap);
    keyword_tokens(&t);
    if (d->module) lsp_occurrences(lsp_doc_scope(d), d->module, occurrence_token, &t);
    if (t.count > 1) qsort(t.items, (size_t)t.count, sizeof(Token), by_start);
    /* relative encoding: each token as (line delta, start delta, length,
     * type, modifiers); tokens that overlap the previous one are left
     * out, as are tokens spanning lines (none should) */
    LspBuf o = {0};
    lsp_buf_add(&o, "{\"data\":[", 9);
    uint32_t prev_line = 0, prev_col = 0, covered = 0;
    bool first = true;
    const SourceFile *f = d->file;
    /* tokens come in order: the line and column follow the text from one
     * token to the next (a byte is a column while the text is ASCII) */
    uint32_t line = 0, at = 0, at_col = 0;
    for (int i = 0; i < t.count; i++) {
        const Token *k = &t.items[i];
        if (i > 0 && k->start < covered) continue;
        while (line + 1 < f->line_count && f->line_starts[line + 1] <= k->start) {
            line++;
            at = f->line_starts[line];
            at_col = 0;
        }
        bool ascii = true;
        for (uint32_t b = at; b < k->end && ascii; b++)
            ascii = (unsigned char)f->text[b] < 0x80 && (b < k->start || f->text[b] != '\n');
        uint32_t col, end_line, end_col;
        if (ascii) {
            col = at_col + (k->start - at);
            end_line = line;
            end_col = col + (k->end - k->start);
        } else {
            uint32_t start_line;
            lsp_position_of(f, k->start, s->utf16, &start_line, &col);
            lsp_position_of(f, k->end, s->utf16, &end_line, &end_col);
        }
        at = k->start;
        at_col = col;
        if (end_line != line) continue;
        out_number(&o, line - prev_line, !first);
        out_number(&o, line == prev_line ? col - prev_col : col, true);
        out_number(&o, end_col - col, true);
        out_number(&o, (uint32_t)k->type, true);
        out_number(&o, (uint32_t)k->mods, true);
        first = false;
        prev_line = line;
        prev_col = col;
        covered = k->end;
    }
    lsp_buf_add(&o, "]}", 2);
    arena_free_all(&scratch);
    if (o.failed) {
        free(o.p);
        return NULL;
    }
    return o.p;
}
