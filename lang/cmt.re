/* cmt.re — the scanner of .cmt files (re2c 3.0).  The buffer ends with a
 * NUL sentinel; a NUL before the end is a bad character, not the end. */
#include "cmt.tab.h"

#include <string.h>

/* Deeper bracket nesting than this is refused: it guards every recursive
 * walk after the parser against stack exhaustion. */
#define MAX_NESTING 256

static Span here(ParseState *ps, const char *from, const char *to) {
    return (Span){ps->file->id, (uint32_t)(from - ps->file->text),
                  (uint32_t)(to - ps->file->text)};
}

static void add_comment(ParseState *ps, const char *from, const char *to) {
    Span *s = ARENA_NEW(&ps->file_scratch, Span);
    *s = here(ps, from, to);
    ptrvec_push(&ps->file_scratch, &ps->comments, s);
}

/* Length of the valid UTF-8 sequence at p, or 0 if invalid. */
static size_t utf8_length(const unsigned char *p, const unsigned char *end) {
    size_t n;
    uint32_t min;
    if (p[0] < 0x80) return 1;
    if ((p[0] & 0xE0) == 0xC0) { n = 2; min = 0x80; }
    else if ((p[0] & 0xF0) == 0xE0) { n = 3; min = 0x800; }
    else if ((p[0] & 0xF8) == 0xF0) { n = 4; min = 0x10000; }
    else return 0;
    if ((size_t)(end - p) < n) return 0;
    uint32_t cp = p[0] & (0x7F >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

/* A run of bytes that cannot start a token: one diagnostic for the run. */
static const char *bad_characters(ParseState *ps, const char *from) {
    const unsigned char *p = (const unsigned char *)from;
    const unsigned char *end = (const unsigned char *)ps->limit;
    size_t first = utf8_length(p, end);
    bool invalid_utf8 = first == 0;
    unsigned first_byte = p[0];
    while (p < end) {
        size_t n = utf8_length(p, end);
        bool ascii_token = n == 1 && (p[0] > 0x20 && p[0] < 0x7F) &&
                           strchr("$@#`'\\!%&|^~", p[0]) == NULL;
        if (ascii_token || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            break;
        p += n ? n : 1;
    }
    Span s = here(ps, from, (const char *)p);
    ps->lex_error_pending = true;
    if (invalid_utf8)
        diag_error(ps->diags, s, "E0105", "invalid UTF-8 byte 0x%02X", first_byte);
    else if (first_byte == 0)
        diag_error(ps->diags, s, "E0101", "unexpected NUL byte");
    else if (first_byte < 0x20 || first_byte == 0x7F)
        diag_error(ps->diags, s, "E0101", "unexpected control character U+%04X", first_byte);
    else if (first_byte < 0x80)
        diag_error(ps->diags, s, "E0101", "unexpected character `%c`", first_byte);
    else
        diag_error(ps->diags, s, "E0101", "unexpected character `%.*s`",
                   (int)first, from);
    return (const char *)p;
}

/* Skips a block comment starting at `from` (just after the opening).
 * Comments may hold any bytes; they are not nested. */
static const char *block_comment(ParseState *ps, const char *open) {
    const char *p = open + 2;
    while (p + 1 < ps->limit && !(p[0] == '*' && p[1] == '/')) p++;
    if (p + 1 >= ps->limit) {
        Diag *g = diag_error(ps->diags, here(ps, open, open + 2), "E0102",
                             "unterminated block comment");
        diag_help(g, ps->diags, "close it with `*/`");
        add_comment(ps, open, ps->limit);
        return ps->limit;
    }
    add_comment(ps, open, p + 2);
    return p + 2;
}

static int number_token(ParseState *ps, const char *from, const char *to,
                        CMTSTYPE *value, bool is_int) {
    if (is_int) {
        if (parse_int_literal(from, (size_t)(to - from), &value->int_value))
            return INT;
        ps->lex_error_pending = true;
        diag_error(ps->diags, here(ps, from, to), "E0103",
                   "integer literal `%.*s` does not fit in 64 bits",
                   (int)(to - from), from);
        return BAD_NUMBER;
    }
    if (parse_real_literal(from, (size_t)(to - from), &value->real_value))
        return REAL;
    /* the lexer matched a well-formed real: it can only be too large */
    ps->lex_error_pending = true;
    diag_error(ps->diags, here(ps, from, to), "E0103",
               "number `%.*s` is out of range (the largest is about 1.8e308)",
               (int)(to - from), from);
    return BAD_NUMBER;
}

/* `2 MiB`, `64GB/s`: the number, optional blanks, then the unit. */
static int quantity_token(ParseState *ps, const char *from, const char *to,
                          CMTSTYPE *value) {
    const char *unit = from;
    while (unit < to && ((*unit >= '0' && *unit <= '9') || *unit == '_' ||
                         *unit == '.' ||
                         ((*unit == 'e' || *unit == 'E') && unit + 1 < to &&
                          (unit[1] == '-' || unit[1] == '+' ||
                           (unit[1] >= '0' && unit[1] <= '9'))) ||
                         ((*unit == '-' || *unit == '+') && unit > from &&
                          (unit[-1] == 'e' || unit[-1] == 'E'))))
        unit++;
    const char *number_end = unit;
    while (*unit == ' ' || *unit == '\t') unit++;
    double number = 0;
    bool ok = parse_real_literal(from, (size_t)(number_end - from), &number);
    UnitDim dim = {0, 0};
    double scale = 1;
    bool bad = false;
    if (!ok) {
        diag_error(ps->diags, here(ps, from, number_end), "E0103",
                   "number `%.*s` is out of range (the largest is about 1.8e308)",
                   (int)(number_end - from), from);
        bad = true;
    } else if (!unit_parse(unit, (size_t)(to - unit), &dim, &scale)) {
        Diag *g = diag_error(ps->diags, here(ps, unit, to), "E0104",
                             "unknown unit `%.*s`", (int)(to - unit), unit);
        diag_help(g, ps->diags, "units combine as size/time, size/cycle, "
                  "energy/B, energy/MAC, energy/op, count/cycle or count/time");
        bad = true;
    }
    /* the token's value is its expression (an error node when it is
     * bad), so that every value on the parser's stack is 8 bytes */
    ExprKind kind = bad ? EX_ERROR : EX_QUANTITY;
    Expr *e = arena_alloc(ps->arena, expr_size(kind));
    e->kind = kind;
    e->depth = 1;
    e->span = here(ps, from, to);
    if (!bad) {
        e->u.quantity.value = number * scale;
        e->u.quantity.dim = dim;
        e->u.quantity.unit_span = here(ps, unit, to);
    }
    value->expr = e;
    return QUANTITY;
}

/* Every unit word, for suggestions. */
static const char *const UNIT_WORDS[] = {
    "B", "kB", "KB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "PiB",
    "bit", "kbit", "Mbit", "Gbit", "Tbit", "s", "ms", "us", "ns", "ps", "cycle",
    "cycles", "Hz", "kHz", "MHz", "GHz", "THz", "J", "kJ", "mJ", "uJ", "nJ",
    "pJ", "fJ", "MAC", "MACs", "kMAC", "MMAC", "GMAC", "TMAC", "op", "ops",
    "kop", "Mop", "Gop", "Top", "FLOP", "FLOPs", "kFLOP", "MFLOP", "GFLOP",
    "TFLOP", "PFLOP", "USD", "kUSD", "MUSD"};

static bool ascii_equal_nocase(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = (char)(*a >= 'A' && *a <= 'Z' ? *a - 'A' + 'a' : *a);
        char y = (char)(*b >= 'A' && *b <= 'Z' ? *b - 'A' + 'a' : *b);
        if (x != y) return false;
    }
    return *a == *b;
}

static bool ascii_equal_nocase_n(const char *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char x = (char)(a[i] >= 'A' && a[i] <= 'Z' ? a[i] - 'A' + 'a' : a[i]);
        char y = (char)(b[i] >= 'A' && b[i] <= 'Z' ? b[i] - 'A' + 'a' : b[i]);
        if (x != y) return false;
    }
    return true;
}

/* One word: a case-insensitive match first (`mb` -> `MB`), then the
 * closest spelling.  A real unit is not "suggested" for itself. */
static const char *unit_word_suggest(const char *word) {
    size_t n = sizeof UNIT_WORDS / sizeof UNIT_WORDS[0];
    for (size_t i = 0; i < n; i++)
        if (strcmp(UNIT_WORDS[i], word) == 0) return UNIT_WORDS[i];
    for (size_t i = 0; i < n; i++)
        if (ascii_equal_nocase(UNIT_WORDS[i], word)) return UNIT_WORDS[i];
    static const char *const ALIASES[][2] = {
        {"sec", "s"},    {"secs", "s"},    {"second", "s"}, {"seconds", "s"},
        {"msec", "ms"},  {"usec", "us"},   {"nsec", "ns"},  {"psec", "ps"},
        {"cyc", "cycle"}, {"clk", "cycle"}, {"clocks", "cycles"},
        {"byte", "B"},   {"bytes", "B"},   {"Byte", "B"},   {"Bytes", "B"},
        {"bits", "bit"}, {"flop", "FLOP"}, {"flops", "FLOPs"}, {"macs", "MACs"}};
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (strcmp(ALIASES[i][0], word) == 0) return ALIASES[i][1];
    if (strlen(word) < 3) return NULL; /* `x`, `ab`: too short to guess */
    return spell_suggest(word, UNIT_WORDS, (int)n);
}

const char *unit_suggest(const char *text, size_t len, char *buf, size_t size) {
    char parts[2][32];
    int count = 0;
    size_t i = 0;
    while (count < 2) {
        size_t n = 0;
        while (i < len && n < sizeof parts[0] - 1 &&
               ((text[i] >= 'a' && text[i] <= 'z') || (text[i] >= 'A' && text[i] <= 'Z')))
            parts[count][n++] = text[i++];
        if (n == 0 || n == sizeof parts[0] - 1) return NULL;
        if (i < len && ((text[i] >= '0' && text[i] <= '9') || text[i] == '_')) return NULL;
        parts[count][n] = 0;
        count++;
        if (i < len && text[i] == '/' && count == 1) i++;
        else break;
    }
    /* `GBps`, `Gbps`: "per second" written as `ps` */
    size_t n0 = strlen(parts[0]);
    if (count == 1 && n0 > 2 && strcmp(parts[0] + n0 - 2, "ps") == 0) {
        parts[0][n0 - 2] = 0;
        const char *per = unit_word_suggest(parts[0]);
        UnitDim dim;
        double scale;
        if (per && unit_parse(per, strlen(per), &dim, &scale) && dim.num == BU_BYTE) {
            snprintf(parts[1], sizeof parts[1], "s");
            count = 2;
        } else {
            parts[0][n0 - 2] = 'p';
        }
    }
    /* `TFLOPS`, `TOPS`: a datasheet's "per second" as a capital S */
    n0 = strlen(parts[0]);
    if (count == 1 && n0 > 2 && parts[0][n0 - 1] == 'S') {
        parts[0][n0 - 1] = 0;
        const char *per = unit_word_suggest(parts[0]);
        UnitDim dim;
        double scale;
        if (per && unit_parse(per, strlen(per), &dim, &scale) &&
            (dim.num == BU_FLOP || dim.num == BU_MAC || dim.num == BU_OP) && dim.den == BU_NONE) {
            snprintf(parts[1], sizeof parts[1], "s");
            count = 2;
        } else {
            parts[0][n0 - 1] = 'S';
        }
    }
    const char *a = unit_word_suggest(parts[0]);
    const char *b = count == 2 ? unit_word_suggest(parts[1]) : NULL;
    if (!a || (count == 2 && !b)) return NULL;
    char unit[64];
    if (count == 2) snprintf(unit, sizeof unit, "%s/%s", a, b);
    else snprintf(unit, sizeof unit, "%s", a);
    /* nothing to suggest when the text already is a unit */
    UnitDim dim;
    double scale;
    if (!unit_parse(unit, strlen(unit), &dim, &scale)) return NULL;
    size_t written = count == 2 ? strlen(parts[0]) + 1 + strlen(parts[1]) : strlen(parts[0]);
    if (written == strlen(unit) && strncmp(text, unit, written) == 0) return NULL;
    /* `Gb` is bytes to some and bits (network rates) to others: 8x apart */
    const char *p0 = parts[0];
    if (strlen(p0) == 2 && strchr("kKMGTP", p0[0]) && p0[1] == 'b') {
        char bits[64];
        snprintf(bits, sizeof bits, "%cbit%s%s", p0[0] == 'K' ? 'k' : p0[0],
                 count == 2 ? "/" : "", count == 2 ? b : "");
        snprintf(buf, size, "`%s` (bytes) or `%s` (bits)", unit, bits);
    } else {
        snprintf(buf, size, "`%s`", unit);
    }
    return buf;
}

static int open_bracket(ParseState *ps, int token) {
    if (ps->nesting == 0) ps->nesting_start = (uint32_t)(ps->token - ps->file->text);
    if (++ps->nesting > MAX_NESTING) {
        /* Brackets skipped while recovering from a syntax error inside
         * this run were already explained by that error. */
        if (ps->last_syntax_error < (int64_t)ps->nesting_start)
            diag_error(ps->diags, here(ps, ps->token, ps->cursor), "E0113",
                       "brackets nested more than %d deep", MAX_NESTING);
        ps->too_deep = true;
        return END;
    }
    return token;
}

int cmtlex(CMTSTYPE *value, CMTLTYPE *loc, ParseState *ps) {
    const char *YYMARKER = NULL, *YYCTXMARKER = NULL;
    (void)YYCTXMARKER;
    if (ps->too_deep) {
        loc->start = loc->end = (uint32_t)(ps->limit - ps->file->text);
        return END;
    }
    if (ps->brace_resync == 1) { /* the `;` the user left out */
        ps->brace_resync = 2;
        loc->start = loc->end = ps->brace_at;
        return SEMI;
    }
    if (ps->brace_resync == 2) { /* then the `}` that the recovery discarded */
        ps->brace_resync = 0;
        ps->brace_closed_block = false; /* never twice for one `}` */
        loc->start = ps->brace_at;
        loc->end = ps->brace_end;
        ps->prev_token = SEMI;
        ps->last_token = RBRACE;
        ps->lex_error_pending = false;
        return RBRACE;
    }
    for (;;) {
        const char *start = ps->cursor;
        ps->token = start;
        int token;
        /*!re2c
        re2c:define:YYCTYPE = "unsigned char";
        re2c:define:YYCURSOR = "ps->cursor";
        re2c:define:YYLIMIT = "ps->limit";
        re2c:yyfill:enable = 0;
        re2c:eof = 0;
        re2c:flags:tags = 0;

        digits   = [0-9] ("_"? [0-9])*;
        exponent = [eE] [+-]? [0-9]+;
        integer  = digits;
        real     = digits "." digits? exponent? | digits exponent;

        size_w   = [kKMGTP]? "B" | [KMGTP] "iB" | [kMGT]? "bit";
        time_w   = "s" | "ms" | "us" | "ns" | "ps" | "cycle" | "cycles";
        freq_w   = [kMGT]? "Hz";
        energy_w = [kmunpf]? "J";
        count_w  = [kMGTP]? ("MAC" | "MACs" | "op" | "ops" | "FLOP" | "FLOPs");
        price_w  = [kM]? "USD";
        unit_w   = size_w | time_w | freq_w | energy_w | count_w | price_w;
        unit     = unit_w ("/" unit_w)?;
        ident    = [A-Za-z_][A-Za-z0-9_]*;

        $ {
            ps->prev_end = loc->end;
            loc->start = loc->end = (uint32_t)(start - ps->file->text);
            return END; }

        [ \t\r\n]+ { continue; }
        "//" [^\n\x00]* {
            /* a NUL inside a line comment is reported, and the comment
             * still runs to the end of its line (the next line's
             * declaration must not be swallowed by the error) */
            const char *p = ps->cursor;
            while (p < ps->limit && *p == '\0') {
                diag_error(ps->diags, here(ps, p, p + 1), "E0101", "unexpected NUL byte");
                p++;
                while (p < ps->limit && *p != '\n' && *p != '\0') p++;
            }
            ps->cursor = p;
            add_comment(ps, start, ps->cursor);
            continue; }
        "/*" { ps->cursor = block_comment(ps, start); continue; }

        (integer | real) [ \t]* unit / [^A-Za-z0-9_] {
            token = quantity_token(ps, start, ps->cursor, value); goto done; }
        /* the pipeline schedule `1f1b` is a word, not a malformed number */
        "1f1b" {
            value->name = intern(start, (size_t)(ps->cursor - start));
            token = IDENT; goto done; }
        integer { token = number_token(ps, start, ps->cursor, value, true); goto done; }
        real    { token = number_token(ps, start, ps->cursor, value, false); goto done; }
        (integer | real) [A-Za-z_][A-Za-z0-9_]* ("/" [A-Za-z_][A-Za-z0-9_]*)? {
            /* `4mb`, `64Gb/s`: a misspelt unit rather than a bad number */
            const char *word = start;
            while (word < ps->cursor && ((*word >= '0' && *word <= '9') ||
                                         *word == '_' || *word == '.' ||
                                         ((*word == 'e' || *word == 'E') && word + 1 < ps->cursor &&
                                          word[1] >= '0' && word[1] <= '9')))
                word++;
            char buf[64];
            const char *unit = unit_suggest(word, (size_t)(ps->cursor - word), buf, sizeof buf);
            if (unit) {
                Diag *g = diag_error(ps->diags, here(ps, word, ps->cursor), "E0104",
                                     "unknown unit `%.*s`", (int)(ps->cursor - word), word);
                diag_help(g, ps->diags, "did you mean %s?", unit);
            } else if (ps->cursor - start == 4 && ascii_equal_nocase_n(start, "1f1b", 4)) {
                Diag *g = diag_error(ps->diags, here(ps, start, ps->cursor), "E0103",
                                     "malformed number `%.*s`",
                                     (int)(ps->cursor - start), start);
                diag_help(g, ps->diags, "the pipeline schedule is written in lower case: "
                                        "`1f1b`");
            } else {
                Diag *g = diag_error(ps->diags, here(ps, start, ps->cursor), "E0103",
                                     "malformed number `%.*s`",
                                     (int)(ps->cursor - start), start);
                diag_help(g, ps->diags, "put a space between a number and a word "
                                        "(`2 ring`, `32 x 32`); the units are "
                                        "listed in docs/units.md");
            }
            ps->lex_error_pending = true;
            token = BAD_NUMBER; goto done; }

        "use"       { token = USE; goto done; }
        "const"     { token = CONST; goto done; }
        "op"        { token = OP; goto done; }
        "in"        { token = IN; goto done; }
        "out"       { token = OUT; goto done; }
        "var"       { token = VAR; goto done; }
        "param"     { token = PARAM; goto done; }
        "arch"      { token = ARCH; goto done; }
        "memory"    { token = MEMORY; goto done; }
        "cluster"   { token = CLUSTER; goto done; }
        "compute"   { token = COMPUTE; goto done; }
        "role"      { token = ROLE; goto done; }
        "cost"      { token = COST; goto done; }
        "array"     { token = ARRAY; goto done; }
        "mapping"   { token = MAPPING; goto done; }
        "sweep"     { token = SWEEP; goto done; }
        "for"       { token = FOR; goto done; }
        "on"        { token = ON; goto done; }
        "spatial"   { token = SPATIAL; goto done; }
        "tile"      { token = TILE; goto done; }
        "order"     { token = ORDER; goto done; }
        "fuse"      { token = FUSE; goto done; }
        "at"        { token = AT; goto done; }
        "overlap"   { token = OVERLAP; goto done; }
        "objective" { token = OBJECTIVE; goto done; }
        "online"    { token = ONLINE; goto done; }
        "phase"     { token = PHASE; goto done; }
        "recompute" { token = RECOMPUTE; goto done; }
        "repeat"    { token = REPEAT; goto done; }
        "where"     { token = WHERE; goto done; }
        "pipeline"  { token = PIPELINE; goto done; }
        "microbatches" { token = MICROBATCHES; goto done; }
        "serve"     { token = SERVE; goto done; }
        "by"        { token = BY; goto done; }
        "model"     { token = MODEL; goto done; }

        ident {
            value->name = intern(start, (size_t)(ps->cursor - start));
            token = IDENT; goto done; }

        ["] [^"\n\x00]* ["] {
            value->name = intern(start + 1, (size_t)(ps->cursor - start - 2));
            token = STRING; goto done; }
        ["] [^"\n\x00]* {
            diag_error(ps->diags, here(ps, start, ps->cursor), "E0107",
                       "unterminated string");
            ps->lex_error_pending = true;
            value->name = intern(start + 1, (size_t)(ps->cursor - start - 1));
            token = STRING; goto done; }

        "->" { token = ARROW; goto done; }
        ";"  { token = SEMI; goto done; }
        ","  { token = COMMA; goto done; }
        ":"  { token = COLON; goto done; }
        "."  { token = DOT; goto done; }
        "("  { token = open_bracket(ps, LPAREN); goto done; }
        ")"  { if (ps->nesting > 0) ps->nesting--; token = RPAREN; goto done; }
        "["  { token = open_bracket(ps, LBRACKET); goto done; }
        "]"  { if (ps->nesting > 0) ps->nesting--; token = RBRACKET; goto done; }
        "{"  {
            if (ps->brace_depth < 64)
                ps->brace_open[ps->brace_depth] = (uint32_t)(start - ps->file->text);
            ps->brace_depth++;
            token = LBRACE; goto done; }
        "}"  {
            ps->brace_closed_block = ps->brace_depth > 0;
            if (ps->brace_depth > 0) ps->brace_depth--;
            token = RBRACE; goto done; }
        "<="  { token = LE; goto done; }
        ">="  { token = GE; goto done; }
        "<"  { token = LANGLE; goto done; }
        ">"  { token = RANGLE; goto done; }
        "="  { token = EQUALS; goto done; }
        "+"  { token = PLUS; goto done; }
        "-"  { token = MINUS; goto done; }
        "*"  { token = STAR; goto done; }
        "/"  { token = SLASH; goto done; }
        "?"  { token = HOLE; goto done; }

        * { ps->cursor = bad_characters(ps, start); continue; }
        */
    done:
        if (ps->skip_block) {
            /* see the `error ;` declaration: drop the rest of the block */
            if (token == END) ps->skip_block = false;
            else {
                if (token == RBRACE && ps->brace_depth == 0) ps->skip_block = false;
                continue;
            }
        }
        /* A lexical error silences syntax errors until the statement ends. */
        if (ps->lex_error_pending &&
            (ps->last_token == SEMI || ps->last_token == LBRACE || ps->last_token == RBRACE))
            ps->lex_error_pending = false;
        ps->prev_prev_token = ps->prev_token;
        ps->prev_token = ps->last_token;
        ps->last_token = token;
        ps->prev_start = loc->start;
        ps->prev_end = loc->end;
        loc->start = (uint32_t)(start - ps->file->text);
        loc->end = (uint32_t)(ps->cursor - ps->file->text);
        return token;
    }
}
