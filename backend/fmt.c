/* fmt.c — `cmtc fmt`: one canonical layout for .cmt files.
 *
 * The layout is printed from the AST: 2-space indentation, one statement
 * per line, `a, b` lists, spaces around `=`, `->` and binary operators,
 * quantities as `2 MiB`.  Literals are printed from their source text so
 * numbers keep their spelling; parentheses the source wrote around an
 * expression are kept (and added wherever precedence needs them).
 *
 * Comments are not in the AST: Module.comments lists their spans, and the
 * printer interleaves them by source position.  Every printed token that
 * comes from the source carries its offset; before it is written, each
 * comment that starts earlier is written first — at the end of the current
 * line when the source had it on the same line as the previous token, on
 * a line of its own otherwise.  A line comment in the middle of a
 * statement ends the line, and the statement continues on the next line,
 * indented four more spaces.  Blank lines between statements are kept (at
 * most one); none directly after `{` or before `}`; declarations that are
 * blocks are always separated by one. */
#include "backend/fmt.h"
#include "backend/commands.h"
#include "backend/options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOPOS UINT32_MAX

typedef struct Fmt {
    Arena *arena;
    const SourceFile *f;
    const Span *comments;
    int comment_count, next_comment;
    char *out;
    size_t len, cap;
    int indent;        /* block depth */
    int cont;          /* continuation levels of the current line */
    int next_cont;     /* ... of the next line */
    bool started;      /* anything written */
    bool pending_nl;   /* the current line is complete */
    bool blank_forced; /* one blank line before the next line */
    bool blank_banned; /* no blank line before the next line */
    bool space_next;   /* a block comment was written inline */
    uint32_t last_end; /* source offset after the last token or comment */
    size_t *marks;     /* output offsets of the blank before each
                          trailing line comment, for alignment */
    int mark_count, mark_cap;
} Fmt;

static void raw(Fmt *F, const char *s, size_t n) {
    if (F->len + n + 1 > F->cap) {
        size_t cap = F->cap ? F->cap : 4096;
        while (F->len + n + 1 > cap) cap *= 2;
        F->out = arena_realloc(F->arena, F->out, F->cap, cap);
        F->cap = cap;
    }
    memcpy(F->out + F->len, s, n);
    F->len += n;
    F->out[F->len] = '\0';
}

static char last_char(const Fmt *F) {
    return F->len ? F->out[F->len - 1] : '\n';
}

/* A blank line in the source between offsets a and b (whitespace only
 * between two line breaks). */
static bool blank_between(const SourceFile *f, uint32_t a, uint32_t b) {
    int breaks = 0;
    for (uint32_t i = a; i < b && i < f->len; i++) {
        char c = f->text[i];
        if (c == '\n') {
            if (++breaks >= 2) return true;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            breaks = 0;
        }
    }
    return false;
}

static bool newline_between(const SourceFile *f, uint32_t a, uint32_t b) {
    for (uint32_t i = a; i < b && i < f->len; i++)
        if (f->text[i] == '\n') return true;
    return false;
}

/* Starts a new output line for content that begins at source offset src. */
static void begin_line(Fmt *F, uint32_t src) {
    if (F->started) {
        raw(F, "\n", 1);
        bool blank = F->blank_forced ||
                     (!F->blank_banned && src != NOPOS && blank_between(F->f, F->last_end, src));
        if (blank) raw(F, "\n", 1);
        F->cont = F->next_cont;
    }
    F->blank_forced = F->blank_banned = false;
    for (int i = 0; i < 2 * (F->indent + F->cont); i++) raw(F, " ", 1);
    F->started = true;
    F->pending_nl = false;
    F->space_next = false;
}

static void end_line(Fmt *F) {
    if (!F->started) return;
    F->pending_nl = true;
    F->next_cont = 0;
}

/* A comment's text; a block comment's CR LF line ends become LF like the
 * rest of the output. */
static void raw_comment(Fmt *F, const char *text, size_t n) {
    size_t from = 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (text[i] == '\r' && text[i + 1] == '\n') {
            raw(F, text + from, i - from);
            from = i + 1;
        }
    raw(F, text + from, n - from);
}

static void put_comment(Fmt *F, Span c) {
    const char *text = F->f->text + c.start;
    size_t n = c.end - c.start;
    bool line_comment = n >= 2 && text[1] == '/';
    if (line_comment)
        while (n > 2 && (text[n - 1] == ' ' || text[n - 1] == '\t' || text[n - 1] == '\r')) n--;
    bool same_line = F->started && !newline_between(F->f, F->last_end, c.start);
    if (F->started && (same_line || !F->pending_nl)) {
        /* at the end of the current line, or inside a statement */
        char lc = last_char(F);
        if (line_comment && F->pending_nl) {
            /* a comment after a complete statement: aligned later */
            if (F->mark_count == F->mark_cap) {
                int cap = F->mark_cap ? 2 * F->mark_cap : 32;
                F->marks = arena_realloc(F->arena, F->marks, sizeof(size_t) * (size_t)F->mark_cap,
                                         sizeof(size_t) * (size_t)cap);
                F->mark_cap = cap;
            }
            F->marks[F->mark_count++] = F->len;
            raw(F, " ", 1);
        } else if (lc != ' ' && lc != '(' && lc != '[' && lc != '<') {
            raw(F, " ", 1);
        }
        raw_comment(F, text, n);
        if (line_comment) {
            if (!F->pending_nl) {
                F->pending_nl = true;
                F->next_cont = 2;
            }
        } else {
            F->space_next = true;
        }
    } else {
        begin_line(F, c.start);
        raw_comment(F, text, n);
        F->pending_nl = true;
    }
    F->last_end = c.end;
}

static void flush_comments(Fmt *F, uint32_t upto) {
    while (F->next_comment < F->comment_count && F->comments[F->next_comment].start < upto)
        put_comment(F, F->comments[F->next_comment++]);
}

/* Writes a token; start/end are its source offsets (NOPOS for punctuation
 * the printer supplies). */
static void put(Fmt *F, const char *text, size_t n, uint32_t start, uint32_t end, bool space) {
    if (start != NOPOS) flush_comments(F, start);
    if (!F->started || F->pending_nl)
        begin_line(F, start);
    else if (space || (F->space_next && !strchr(",;:)]>", text[0])))
        raw(F, " ", 1);
    F->space_next = false;
    raw(F, text, n);
    if (end != NOPOS) F->last_end = end;
}

static uint32_t skip_blank(const SourceFile *f, uint32_t i, uint32_t end);

static bool word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Punctuation and keywords the AST does not locate: where the source has
 * that text next (past blanks and comments) after the last token, it takes
 * that position, so that comments before it stay before it. */
static void puts_(Fmt *F, const char *text, bool space) {
    size_t n = strlen(text);
    uint32_t at = NOPOS;
    if (F->started) {
        uint32_t i = skip_blank(F->f, F->last_end, (uint32_t)F->f->len);
        if (i + n <= F->f->len && memcmp(F->f->text + i, text, n) == 0 &&
            !(word_char(text[n - 1]) && i + n < F->f->len && word_char(F->f->text[i + n])))
            at = i;
    }
    put(F, text, n, at, at == NOPOS ? NOPOS : at + (uint32_t)n, space);
}

/* A token whose text is the source text of span sp. */
static void put_span(Fmt *F, Span sp, bool space) {
    put(F, F->f->text + sp.start, sp.end - sp.start, sp.start, sp.end, space);
}

static void put_ident(Fmt *F, Ident id, bool space) {
    if (id.hole || !id.name) {
        put(F, "?", 1, id.span.start, id.span.end, space);
        return;
    }
    put(F, id.name, strlen(id.name), id.span.start, id.span.end, space);
}

/* ` reserve R of U` after an overlap word (docs/language.md 5.5) */
static void put_reserve(Fmt *F, const MapItem *m) {
    if (!m->reserve_given) return;
    char units[24], total[24];
    int nu = snprintf(units, sizeof units, "%lld", (long long)m->reserve_units);
    int nt = snprintf(total, sizeof total, "%lld", (long long)m->reserve_total);
    uint32_t at = m->reserve_span.start, end = m->reserve_span.end;
    put(F, "reserve", 7, at, at, true);
    put(F, units, (size_t)nu, at, at, true);
    put(F, "of", 2, at, at, true);
    put(F, total, (size_t)nt, end, end, true);
}

/* `;` `}` at the end of a span, when the source has it there. */
static uint32_t closer_at(const Fmt *F, Span sp, char c) {
    if (sp.end > sp.start && sp.end <= F->f->len && F->f->text[sp.end - 1] == c) return sp.end - 1;
    return NOPOS;
}

static void put_closer(Fmt *F, const char *text, uint32_t at, bool space) {
    if (at != NOPOS) flush_comments(F, at);
    put(F, text, strlen(text), at, at == NOPOS ? NOPOS : at + 1, space);
}

static void put_semi(Fmt *F, Span item) {
    put_closer(F, ";", closer_at(F, item, ';'), false);
    end_line(F);
}

static bool comment_within(const Fmt *F, uint32_t a, uint32_t b) {
    for (int i = F->next_comment; i < F->comment_count; i++) {
        if (F->comments[i].start >= b) break;
        if (F->comments[i].start >= a) return true;
    }
    return false;
}

static void open_block(Fmt *F) {
    puts_(F, "{", true);
    end_line(F);
    F->blank_banned = true;
    F->indent++;
}

static void close_block(Fmt *F, Span whole) {
    uint32_t at = closer_at(F, whole, '}');
    if (at != NOPOS) flush_comments(F, at);
    F->indent--;
    if (F->pending_nl) F->blank_banned = true;
    put_closer(F, "}", at, false);
    end_line(F);
}

/* ------------------------------------------------------------ expressions */

/* Skips blanks and comments forward from i (up to end). */
static uint32_t skip_blank(const SourceFile *f, uint32_t i, uint32_t end) {
    while (i < end) {
        char c = f->text[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            i++;
        } else if (c == '/' && i + 1 < end && f->text[i + 1] == '/') {
            while (i < end && f->text[i] != '\n') i++;
        } else if (c == '/' && i + 1 < end && f->text[i + 1] == '*') {
            i += 2;
            while (i + 1 < end && !(f->text[i] == '*' && f->text[i + 1] == '/')) i++;
            i = i + 2 < end ? i + 2 : end;
        } else {
            break;
        }
    }
    return i;
}

/* The offset of the parenthesis matching the '(' at i, or NOPOS. */
static uint32_t match_paren(const SourceFile *f, uint32_t i, uint32_t end) {
    int depth = 0;
    while (i < end) {
        uint32_t j = skip_blank(f, i, end);
        if (j != i) {
            i = j;
            continue;
        }
        char c = f->text[i];
        if (c == '"') {
            i++;
            while (i < end && f->text[i] != '"') i++;
        } else if (c == '(') {
            depth++;
        } else if (c == ')') {
            if (--depth == 0) return i;
        }
        i++;
    }
    return NOPOS;
}

/* The span of e without the parentheses the source wrapped around it;
 * *wrapped tells whether there were any. */
static Span unwrap(const Fmt *F, const Expr *e, bool *wrapped) {
    Span s = e->span;
    *wrapped = false;
    for (;;) {
        if (s.end <= s.start || s.end > F->f->len) return s;
        if (F->f->text[s.start] != '(' || F->f->text[s.end - 1] != ')') return s;
        if (match_paren(F->f, s.start, s.end) != s.end - 1) return s;
        *wrapped = true;
        uint32_t a = skip_blank(F->f, s.start + 1, s.end - 1);
        uint32_t b = s.end - 1;
        while (b > a && (F->f->text[b - 1] == ' ' || F->f->text[b - 1] == '\t' ||
                         F->f->text[b - 1] == '\r' || F->f->text[b - 1] == '\n'))
            b--;
        s.start = a;
        s.end = b;
    }
}

enum { P_REDUCE = 0, P_ADD = 1, P_MUL = 2, P_UNARY = 3, P_ATOM = 4 };

static int prec(const Expr *e) {
    switch (e->kind) {
    case EX_BINARY: return e->u.binary.op == '+' || e->u.binary.op == '-' ? P_ADD : P_MUL;
    case EX_UNARY: return P_UNARY;
    case EX_REDUCE: return P_REDUCE;
    default: return P_ATOM;
    }
}

static void print_expr(Fmt *F, const Expr *e, bool space, bool need_parens);

static void print_idents(Fmt *F, IdentList l) {
    for (int i = 0; i < l.count; i++) {
        if (i) puts_(F, ",", false);
        put_ident(F, l.items[i], i > 0);
    }
}

static void print_expr_inner(Fmt *F, const Expr *e, Span inner, bool space) {
    switch (e->kind) {
    case EX_INT:
    case EX_REAL:
    case EX_ERROR: put_span(F, inner, space); break;
    case EX_QUANTITY: {
        /* the number as written, one space, the unit as written */
        Span unit = e->u.quantity.unit_span;
        uint32_t ne = inner.start;
        while (ne < unit.start && F->f->text[ne] != ' ' && F->f->text[ne] != '\t') ne++;
        size_t nn = ne - inner.start, un = unit.end - unit.start;
        char *text = arena_alloc(F->arena, nn + un + 2);
        memcpy(text, F->f->text + inner.start, nn);
        text[nn] = ' ';
        memcpy(text + nn + 1, F->f->text + unit.start, un);
        put(F, text, nn + 1 + un, inner.start, unit.end, space);
        break;
    }
    case EX_NAME: put(F, e->u.name, strlen(e->u.name), inner.start, inner.end, space); break;
    case EX_HOLE: put(F, "?", 1, inner.start, inner.end, space); break;
    case EX_ACCESS:
        put_ident(F, e->u.access.tensor, space);
        puts_(F, "[", false);
        print_idents(F, e->u.access.indices);
        put_closer(F, "]", closer_at(F, inner, ']'), false);
        break;
    case EX_CALL:
        put_ident(F, e->u.call.fn, space);
        puts_(F, "(", false);
        for (int i = 0; i < e->u.call.arg_count; i++) {
            if (i) puts_(F, ",", false);
            print_expr(F, e->u.call.args[i], i > 0, false);
        }
        put_closer(F, ")", closer_at(F, inner, ')'), false);
        break;
    case EX_REDUCE: {
        put_ident(F, e->u.reduce.fn, space);
        puts_(F, "(", false);
        print_idents(F, e->u.reduce.indices);
        puts_(F, ")", false);
        const Expr *b = e->u.reduce.body;
        /* directly after the prefix: an access, a call, another prefix or
         * a parenthesised expression */
        bool bare = b->kind == EX_ACCESS || b->kind == EX_CALL || b->kind == EX_REDUCE ||
                    b->kind == EX_ERROR;
        print_expr(F, b, true, !bare);
        break;
    }
    case EX_UNARY: {
        put(F, "-", 1, inner.start, inner.start + 1, space);
        const Expr *o = e->u.unary.operand;
        print_expr(F, o, false, prec(o) <= P_UNARY);
        break;
    }
    case EX_BINARY: {
        const Expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
        int p = prec(e);
        print_expr(F, l, space, prec(l) < p);
        char op[2] = {e->u.binary.op, 0};
        puts_(F, op, true);
        print_expr(F, r, true, prec(r) <= p);
        break;
    }
    }
}

static void print_expr(Fmt *F, const Expr *e, bool space, bool need_parens) {
    bool wrapped;
    Span inner = unwrap(F, e, &wrapped);
    if (wrapped || need_parens) {
        uint32_t open = wrapped ? e->span.start : NOPOS;
        put(F, "(", 1, open, open == NOPOS ? NOPOS : open + 1, space);
        print_expr_inner(F, e, inner, false);
        uint32_t close = wrapped ? e->span.end - 1 : NOPOS;
        put_closer(F, ")", close, false);
    } else {
        print_expr_inner(F, e, inner, space);
    }
}

/* Where the grammar takes a `simple_value` (a cluster dimension's size,
 * the sides of `array R x C`): an integer or a name, else parentheses. */
static void print_simple(Fmt *F, const Expr *e, bool space) {
    bool simple = e->kind == EX_INT || e->kind == EX_NAME || e->kind == EX_ERROR;
    print_expr(F, e, space, !simple);
}

/* ---------------------------------------------------------- declarations */

static void print_attr(Fmt *F, const Attr *a) {
    put_ident(F, a->key, false);
    if (a->pair_count > 0 || a->key.name == intern_cstr("cost")) {
        for (int i = 0; i < a->pair_count; i++) {
            if (i) puts_(F, ",", false);
            put_ident(F, a->pairs[i].key, true);
            print_expr(F, a->pairs[i].value, true, false);
        }
    } else if (a->key.name == intern_cstr("array") && a->value_count == 2) {
        print_simple(F, a->values[0], true);
        puts_(F, "x", true);
        print_simple(F, a->values[1], true);
    } else if (a->sizes) { /* `shape 64 x 256 x 16` */
        for (int i = 0; i < a->value_count; i++) {
            if (i) puts_(F, "x", true);
            print_simple(F, a->values[i], true);
        }
    } else {
        for (int i = 0; i < a->value_count; i++) {
            if (i) puts_(F, ",", false);
            print_expr(F, a->values[i], true, false);
        }
    }
    put_semi(F, a->span);
}

/* An empty block with no comment inside is printed `{}` on its line:
 * true when it was (the caller has nothing more to print). */
static bool print_empty_block(Fmt *F, bool empty, uint32_t end) {
    if (!empty || comment_within(F, F->last_end, end)) return false;
    puts_(F, "{}", true);
    end_line(F);
    return true;
}

static void print_attr_block(Fmt *F, AttrList body, Span whole) {
    if (print_empty_block(F, body.count == 0, whole.end)) return;
    open_block(F);
    for (int i = 0; i < body.count; i++) print_attr(F, body.items[i]);
    close_block(F, whole);
}

static void print_arch_item(Fmt *F, const ArchItem *it) {
    switch (it->kind) {
    case AI_ATTR: print_attr(F, it->attr); return;
    case AI_MEMORY:
        put(F, "memory", 6, it->span.start, it->span.start + 6, false);
        put_ident(F, it->name, true);
        if (it->role.name) {
            puts_(F, "role", true);
            put_ident(F, it->role, true);
        }
        print_attr_block(F, it->body, it->span);
        return;
    case AI_CLUSTER:
        put(F, "cluster", 7, it->span.start, it->span.start + 7, false);
        put_ident(F, it->name, true);
        puts_(F, "[", false);
        for (int i = 0; i < it->dim_count; i++) {
            const ClusterDimDecl *d = &it->dims[i];
            if (i) puts_(F, ",", false);
            put_ident(F, d->name, i > 0);
            puts_(F, "=", true);
            print_simple(F, d->size, true);
            if (d->kind.name) put_ident(F, d->kind, true);
        }
        puts_(F, "]", false);
        if (it->unit_kind.name) put_ident(F, it->unit_kind, true);
        print_attr_block(F, it->body, it->span);
        return;
    case AI_COMPUTE:
        put(F, "compute", 7, it->span.start, it->span.start + 7, false);
        put_ident(F, it->name, true);
        put_ident(F, it->unit_kind, true);
        print_attr_block(F, it->body, it->span);
        return;
    case AI_ERROR:
        put_span(F, it->span, false);
        end_line(F);
        return;
    }
}

/* `for S1, S2:` of a `spatial`, `tile` or `order` line, or just `:`. */
static void print_for_list(Fmt *F, const MapItem *m) {
    if (m->stmts.count > 0) {
        puts_(F, "for", true);
        for (int i = 0; i < m->stmts.count; i++) {
            if (i) puts_(F, ",", false);
            put_ident(F, m->stmts.items[i], true);
        }
    }
    puts_(F, ":", false);
}

static void print_map_item(Fmt *F, const MapItem *m) {
    static const char *const kw[] = {[MI_ERROR] = "", CMT_MAPPING_ITEMS(VOCAB_INDEXED)};
    if (m->kind == MI_ERROR) {
        put_span(F, m->span, false);
        end_line(F);
        return;
    }
    const char *k = kw[m->kind];
    put(F, k, strlen(k), m->keyword_span.start, m->keyword_span.end, false);
    switch (m->kind) {
    case MI_SPATIAL:
        if (m->stmts.count > 0) print_for_list(F, m);
        if (m->whole_hole) {
            puts_(F, "?", true);
            break;
        }
        for (int i = 0; i < m->assign_count; i++) {
            const SpatialAssign *a = &m->assigns[i];
            if (i) puts_(F, ",", false);
            if (a->joint.count >= 2) { /* `(m, n) -> sm` */
                puts_(F, "(", true);
                print_idents(F, a->joint);
                puts_(F, ")", false);
            } else {
                put_ident(F, a->index, true);
            }
            puts_(F, "->", true);
            if (a->dims.count == 1) {
                put_ident(F, a->dims.items[0], true);
            } else {
                puts_(F, "(", true);
                print_idents(F, a->dims);
                puts_(F, ")", false);
            }
        }
        break;
    case MI_TILE:
        put_ident(F, m->level, true);
        print_for_list(F, m);
        if (m->whole_hole) {
            puts_(F, "?", true);
            break;
        }
        for (int i = 0; i < m->tile_count; i++) {
            if (i) puts_(F, ",", false);
            put_ident(F, m->tiles[i].index, true);
            print_expr(F, m->tiles[i].size, true, false);
        }
        break;
    case MI_ORDER:
        put_ident(F, m->level, true);
        print_for_list(F, m);
        if (m->whole_hole) {
            puts_(F, "?", true);
            break;
        }
        for (int i = 0; i < m->order.count; i++) {
            if (i) puts_(F, ",", false);
            put_ident(F, m->order.items[i], true);
        }
        break;
    case MI_FUSE:
        if (m->whole_hole) {
            puts_(F, "?", true);
            break;
        }
        for (int i = 0; i < m->stmts.count; i++) {
            if (i) puts_(F, ",", false);
            put_ident(F, m->stmts.items[i], true);
        }
        if (m->level.name || m->level.hole) {
            puts_(F, "at", true);
            put_ident(F, m->level, true);
        }
        if (m->value.name || m->value.hole) {
            puts_(F, "overlap", true);
            put_ident(F, m->value, true);
            put_reserve(F, m);
        }
        break;
    case MI_ONLINE:
    case MI_RECOMPUTE:
        if (m->whole_hole) puts_(F, "?", true); /* `recompute ? S, ...;` */
        for (int i = 0; i < m->stmts.count; i++) {
            if (i) puts_(F, ",", false);
            put_ident(F, m->stmts.items[i], true);
        }
        break;
    case MI_OVERLAP:
        put_ident(F, m->value, true);
        put_reserve(F, m);
        break;
    case MI_OBJECTIVE:
    case MI_PHASE: put_ident(F, m->value, true); break;
    case MI_REPEAT: print_expr(F, m->count, true, false); break;
    case MI_MICROBATCHES:
        print_expr(F, m->count, true, false);
        if (m->value.name) { /* `of B` */
            put_ident(F, m->value, true);
            put_ident(F, m->level, true);
        }
        break;
    case MI_SERVE: /* `serve decode of B [= N | = ? [under T]]` */
        put_ident(F, m->value, true);
        puts_(F, "of", true);
        put_ident(F, m->level, true);
        if (m->count) {
            puts_(F, "=", true);
            print_expr(F, m->count, true, false);
        }
        if (m->limit) {
            puts_(F, "under", true);
            print_expr(F, m->limit, true, false);
        }
        break;
    case MI_PIPELINE:
        put_ident(F, m->level, true);
        if (m->value.name) put_ident(F, m->value, true);
        if (m->count) print_expr(F, m->count, true, false);
        break;
    case MI_ERROR: break;
    }
    put_semi(F, m->span);
}

bool op_tensor_comes_next(const OpDecl *op, int ti, int si) {
    return si >= op->stmt_count ||
           (ti < op->tensor_count && op->tensors[ti]->span.start < op->stmts[si]->span.start);
}

const char *tensor_decl_keyword(const TensorDecl *t) {
    return t->role == TR_IN    ? (t->trained  ? "param"
                                  : t->cached ? "cache"
                                              : "in")
           : t->role == TR_OUT ? (t->routed ? "route" : "out")
                               : "var";
}

/* `<M = 64, N>`: an op's or arch's parameters */
static void print_params(Fmt *F, const Param *params, int count) {
    if (count == 0) return;
    puts_(F, "<", false);
    for (int i = 0; i < count; i++) {
        if (i) puts_(F, ",", false);
        put_ident(F, params[i].name, i > 0);
        if (params[i].default_value) {
            puts_(F, "=", true);
            print_expr(F, params[i].default_value, true, false);
        }
    }
    puts_(F, ">", false);
}

/* `<M = 64>`: the parameters bound where an op or arch is named */
static void print_bindings(Fmt *F, const ParamBinding *bindings, int count) {
    if (count == 0) return;
    puts_(F, "<", false);
    for (int i = 0; i < count; i++) {
        if (i) puts_(F, ",", false);
        put_ident(F, bindings[i].name, i > 0);
        puts_(F, "=", true);
        print_expr(F, bindings[i].value, true, false);
    }
    puts_(F, ">", false);
}

/* `[a, b]` or `range(a, b, s)`: a sweep axis's values */
static void print_sweep_values(Fmt *F, const SweepAxisDecl *ax) {
    if (ax->is_list) puts_(F, "[", true);
    for (int k = 0; k < ax->value_count; k++) {
        if (k) puts_(F, ",", false);
        print_expr(F, ax->values[k], !ax->is_list || k > 0, false);
    }
    if (ax->is_list) puts_(F, "]", false);
}

static void print_sweep(Fmt *F, const Decl *d) {
    const SweepDecl *sw = &d->u.sweep;
    if (print_empty_block(F, sw->axis_count == 0, d->span.end)) return;
    open_block(F);
    for (int i = 0; i < sw->axis_count;) {
        const SweepAxisDecl *ax = &sw->axes[i];
        int zip = ax->zip;
        int end = i + 1;
        while (zip > 0 && end < sw->axis_count && sw->axes[end].zip == zip) end++;
        if (zip > 0) {
            put(F, "zip", 3, ax->span.start, ax->span.start, false);
            open_block(F);
        }
        for (int k = i; k < end; k++) {
            const SweepAxisDecl *a = &sw->axes[k];
            put_ident(F, a->name, false);
            puts_(F, "=", true);
            print_sweep_values(F, a);
            put_semi(F, a->span);
        }
        if (zip > 0)
            close_block(F, (Span){sw->axes[end - 1].span.file, sw->axes[end - 1].span.end,
                                  sw->axes[end - 1].span.end});
        i = end;
    }
    close_block(F, d->span);
}

static void print_op(Fmt *F, const Decl *d) {
    const OpDecl *op = &d->u.op;
    print_params(F, op->params, op->param_count);
    if (print_empty_block(F, op->tensor_count == 0 && op->stmt_count == 0, d->span.end)) return;
    open_block(F);
    /* tensors and statements interleave in the source: merge by offset */
    int ti = 0, si = 0;
    while (ti < op->tensor_count || si < op->stmt_count) {
        if (op_tensor_comes_next(op, ti, si)) {
            const TensorDecl *t = op->tensors[ti++];
            const char *role = tensor_decl_keyword(t);
            put(F, role, strlen(role), t->span.start, t->span.start + strlen(role), false);
            put_ident(F, t->name, true);
            if (t->dim_count > 0) {
                puts_(F, "[", false);
                for (int i = 0; i < t->dim_count; i++) {
                    if (i) puts_(F, ",", false);
                    print_expr(F, t->dims[i], i > 0, false);
                }
                puts_(F, "]", false);
            }
            puts_(F, ":", true);
            put_span(F, t->type_span, true);
            if (t->capacity) {
                puts_(F, "capacity", true);
                print_expr(F, t->capacity, true, false);
            }
            put_semi(F, t->span);
        } else {
            const Stmt *s = op->stmts[si++];
            put_ident(F, s->target, false);
            if (s->indices.count > 0) {
                puts_(F, "[", false);
                print_idents(F, s->indices);
                puts_(F, "]", false);
            }
            puts_(F, "=", true);
            print_expr(F, s->rhs, true, false);
            if (s->where) {
                static const char *const cmp[] = {
                    [WC_LT] = "<", [WC_LE] = "<=", [WC_GT] = ">", [WC_GE] = ">="};
                puts_(F, "where", true);
                put_ident(F, s->where->lhs, true);
                put(F, cmp[s->where->cmp], strlen(cmp[s->where->cmp]), s->where->cmp_span.start,
                    s->where->cmp_span.end, true);
                print_expr(F, s->where->rhs, true, false);
            }
            if (s->by.name) {
                puts_(F, "by", true);
                put_ident(F, s->by, true);
            }
            put_semi(F, s->span);
        }
    }
    close_block(F, d->span);
}

static void print_decl(Fmt *F, const Decl *d) {
    switch (d->kind) {
    case DK_USE:
        put(F, "use", 3, d->span.start, d->span.start + 3, false);
        if (d->u.use.is_string)
            put_span(F, d->name.span, true);
        else
            put(F, d->u.use.path, strlen(d->u.use.path), d->name.span.start, d->name.span.end,
                true);
        put_semi(F, d->span);
        return;
    case DK_CONST:
        put(F, "const", 5, d->span.start, d->span.start + 5, false);
        put_ident(F, d->name, true);
        puts_(F, "=", true);
        print_expr(F, d->u.const_value, true, false);
        put_semi(F, d->span);
        return;
    case DK_OP:
        put(F, "op", 2, d->span.start, d->span.start + 2, false);
        put_ident(F, d->name, true);
        print_op(F, d);
        return;
    case DK_ARCH: {
        const ArchDecl *a = &d->u.arch;
        put(F, "arch", 4, d->span.start, d->span.start + 4, false);
        put_ident(F, d->name, true);
        print_params(F, a->params, a->param_count);
        if (a->parent.name) {
            puts_(F, ":", true);
            put_ident(F, a->parent, true);
            print_bindings(F, a->parent_bindings, a->parent_binding_count);
        }
        if (print_empty_block(F, a->item_count == 0, d->span.end)) return;
        open_block(F);
        for (int i = 0; i < a->item_count; i++) print_arch_item(F, a->items[i]);
        close_block(F, d->span);
        return;
    }
    case DK_MAPPING: {
        const MappingDecl *m = &d->u.mapping;
        put(F, "mapping", 7, d->span.start, d->span.start + 7, false);
        put_ident(F, d->name, true);
        puts_(F, "for", true);
        put_ident(F, m->op, true);
        print_bindings(F, m->bindings, m->binding_count);
        puts_(F, "on", true);
        put_ident(F, m->arch, true);
        print_bindings(F, m->arch_bindings, m->arch_binding_count);
        if (print_empty_block(F, m->item_count == 0, d->span.end)) return;
        open_block(F);
        for (int i = 0; i < m->item_count; i++) print_map_item(F, m->items[i]);
        close_block(F, d->span);
        return;
    }
    case DK_SWEEP:
        put(F, "sweep", 5, d->span.start, d->span.start + 5, false);
        put_ident(F, d->name, true);
        print_sweep(F, d);
        return;
    case DK_MODEL: {
        put(F, "model", 5, d->span.start, d->span.start + 5, false);
        put_ident(F, d->name, true);
        const ModelDecl *md = &d->u.model;
        if (print_empty_block(F, md->part_count == 0, d->span.end)) return;
        open_block(F);
        for (int i = 0; i < md->part_count; i++) {
            put_ident(F, md->parts[i].role, false);
            put_ident(F, md->parts[i].mapping, true);
            put_semi(F, md->parts[i].span);
        }
        close_block(F, d->span);
        return;
    }
    case DK_ERROR:
        put_span(F, d->span, false);
        end_line(F);
        return;
    }
}

/* Aligns the trailing comments of neighbouring statements: within a run
 * of consecutive non-blank lines of the same indentation, every comment
 * that follows a statement starts one column after the longest of those
 * statements. */
static void align_comments(Fmt *F) {
    if (F->mark_count < 2) return;
    typedef struct Line {
        size_t start, end, mark; /* mark: SIZE_MAX when none */
        size_t indent;
    } Line;
    size_t nlines = 1;
    for (size_t i = 0; i < F->len; i++)
        if (F->out[i] == '\n') nlines++;
    Line *lines = ARENA_ARRAY(F->arena, Line, nlines);
    size_t n = 0, start = 0;
    int mi = 0;
    for (size_t i = 0; i <= F->len; i++) {
        if (i < F->len && F->out[i] != '\n') continue;
        Line *l = &lines[n++];
        l->start = start;
        l->end = i;
        l->mark = SIZE_MAX;
        while (mi < F->mark_count && F->marks[mi] < i) {
            if (F->marks[mi] >= start) l->mark = F->marks[mi];
            mi++;
        }
        l->indent = 0;
        while (start + l->indent < i && F->out[start + l->indent] == ' ') l->indent++;
        start = i + 1;
    }
    size_t *pad = ARENA_ARRAY(F->arena, size_t, n);
    size_t extra = 0;
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        if (lines[a].end > lines[a].start)
            while (b < n && lines[b].end > lines[b].start && lines[b].indent == lines[a].indent)
                b++;
        size_t width = 0;
        int marked = 0;
        for (size_t k = a; k < b; k++)
            if (lines[k].mark != SIZE_MAX) {
                marked++;
                if (lines[k].mark - lines[k].start > width) width = lines[k].mark - lines[k].start;
            }
        for (size_t k = a; k < b; k++) {
            pad[k] = marked > 1 && lines[k].mark != SIZE_MAX
                         ? width - (lines[k].mark - lines[k].start)
                         : 0;
            extra += pad[k];
        }
        a = b;
    }
    if (extra == 0) return;
    char *out = arena_alloc(F->arena, F->len + extra + 1);
    size_t o = 0;
    for (size_t k = 0; k < n; k++) {
        const Line *l = &lines[k];
        if (l->mark != SIZE_MAX && pad[k]) {
            memcpy(out + o, F->out + l->start, l->mark - l->start);
            o += l->mark - l->start;
            memset(out + o, ' ', pad[k]);
            o += pad[k];
            memcpy(out + o, F->out + l->mark, l->end - l->mark);
            o += l->end - l->mark;
        } else {
            memcpy(out + o, F->out + l->start, l->end - l->start);
            o += l->end - l->start;
        }
        if (k + 1 < n) out[o++] = '\n';
    }
    out[o] = '\0';
    F->out = out;
    F->len = o;
    F->cap = o + 1;
}

static bool is_block(const Decl *d) {
    return d->kind == DK_OP || d->kind == DK_ARCH || d->kind == DK_MAPPING || d->kind == DK_SWEEP;
}

char *fmt_module(Arena *arena, const Module *m, size_t *len) {
    Fmt F = {0};
    F.arena = arena;
    F.f = m->file;
    F.comments = m->comments;
    F.comment_count = m->comment_count;
    for (int i = 0; i < m->decl_count; i++) {
        if (i > 0 && (is_block(m->decls[i]) || is_block(m->decls[i - 1]))) F.blank_forced = true;
        print_decl(&F, m->decls[i]);
    }
    flush_comments(&F, NOPOS);
    if (F.started) raw(&F, "\n", 1);
    align_comments(&F);
    if (!F.out) F.out = arena_strdup(arena, "");
    *len = F.len;
    return F.out;
}

/* ------------------------------------------------------------ equality */

static bool ident_eq(Ident a, Ident b) {
    return a.name == b.name && a.hole == b.hole;
}

static bool idents_eq(IdentList a, IdentList b) {
    if (a.count != b.count) return false;
    for (int i = 0; i < a.count; i++)
        if (!ident_eq(a.items[i], b.items[i])) return false;
    return true;
}

static bool expr_eq(const Expr *a, const Expr *b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case EX_ERROR:
    case EX_HOLE: return true;
    case EX_INT: return a->u.int_value == b->u.int_value;
    case EX_REAL: return memcmp(&a->u.real_value, &b->u.real_value, sizeof(double)) == 0;
    case EX_QUANTITY:
        return memcmp(&a->u.quantity.value, &b->u.quantity.value, sizeof(double)) == 0 &&
               unit_dim_eq(a->u.quantity.dim, b->u.quantity.dim);
    case EX_NAME: return a->u.name == b->u.name;
    case EX_ACCESS:
        return ident_eq(a->u.access.tensor, b->u.access.tensor) &&
               idents_eq(a->u.access.indices, b->u.access.indices);
    case EX_UNARY:
        return a->u.unary.op == b->u.unary.op && expr_eq(a->u.unary.operand, b->u.unary.operand);
    case EX_BINARY:
        return a->u.binary.op == b->u.binary.op && expr_eq(a->u.binary.lhs, b->u.binary.lhs) &&
               expr_eq(a->u.binary.rhs, b->u.binary.rhs);
    case EX_CALL:
        if (!ident_eq(a->u.call.fn, b->u.call.fn) || a->u.call.arg_count != b->u.call.arg_count)
            return false;
        for (int i = 0; i < a->u.call.arg_count; i++)
            if (!expr_eq(a->u.call.args[i], b->u.call.args[i])) return false;
        return true;
    case EX_REDUCE:
        return ident_eq(a->u.reduce.fn, b->u.reduce.fn) &&
               idents_eq(a->u.reduce.indices, b->u.reduce.indices) &&
               expr_eq(a->u.reduce.body, b->u.reduce.body);
    }
    return false;
}

static bool attr_eq(const Attr *a, const Attr *b) {
    if (!ident_eq(a->key, b->key) || a->value_count != b->value_count ||
        a->pair_count != b->pair_count)
        return false;
    for (int i = 0; i < a->value_count; i++)
        if (!expr_eq(a->values[i], b->values[i])) return false;
    for (int i = 0; i < a->pair_count; i++)
        if (!ident_eq(a->pairs[i].key, b->pairs[i].key) ||
            !expr_eq(a->pairs[i].value, b->pairs[i].value))
            return false;
    return true;
}

static bool attrs_eq(AttrList a, AttrList b) {
    if (a.count != b.count) return false;
    for (int i = 0; i < a.count; i++)
        if (!attr_eq(a.items[i], b.items[i])) return false;
    return true;
}

static bool arch_item_eq(const ArchItem *a, const ArchItem *b) {
    if (a->kind != b->kind || !ident_eq(a->name, b->name) || !ident_eq(a->role, b->role) ||
        !ident_eq(a->unit_kind, b->unit_kind) || a->dim_count != b->dim_count)
        return false;
    for (int i = 0; i < a->dim_count; i++)
        if (!ident_eq(a->dims[i].name, b->dims[i].name) ||
            !expr_eq(a->dims[i].size, b->dims[i].size) ||
            !ident_eq(a->dims[i].kind, b->dims[i].kind))
            return false;
    if ((a->attr == NULL) != (b->attr == NULL)) return false;
    if (a->attr && !attr_eq(a->attr, b->attr)) return false;
    return attrs_eq(a->body, b->body);
}

static bool map_item_eq(const MapItem *a, const MapItem *b) {
    if (a->kind != b->kind || a->whole_hole != b->whole_hole || !idents_eq(a->stmts, b->stmts) ||
        a->assign_count != b->assign_count || !ident_eq(a->level, b->level) ||
        a->tile_count != b->tile_count || !idents_eq(a->order, b->order) ||
        !ident_eq(a->value, b->value) || !expr_eq(a->count, b->count))
        return false;
    for (int i = 0; i < a->assign_count; i++)
        if (!ident_eq(a->assigns[i].index, b->assigns[i].index) ||
            !idents_eq(a->assigns[i].dims, b->assigns[i].dims))
            return false;
    for (int i = 0; i < a->tile_count; i++)
        if (!ident_eq(a->tiles[i].index, b->tiles[i].index) ||
            !expr_eq(a->tiles[i].size, b->tiles[i].size))
            return false;
    return true;
}

static bool params_eq(const Param *a, int na, const Param *b, int nb) {
    if (na != nb) return false;
    for (int i = 0; i < na; i++)
        if (!ident_eq(a[i].name, b[i].name) || !expr_eq(a[i].default_value, b[i].default_value))
            return false;
    return true;
}

static bool bindings_eq(const ParamBinding *a, int na, const ParamBinding *b, int nb) {
    if (na != nb) return false;
    for (int i = 0; i < na; i++)
        if (!ident_eq(a[i].name, b[i].name) || !expr_eq(a[i].value, b[i].value)) return false;
    return true;
}

static bool decl_eq(const Decl *a, const Decl *b) {
    if (a->kind != b->kind || !ident_eq(a->name, b->name)) return false;
    switch (a->kind) {
    case DK_ERROR: return true;
    case DK_USE:
        return a->u.use.is_string == b->u.use.is_string &&
               strcmp(a->u.use.path, b->u.use.path) == 0;
    case DK_CONST: return expr_eq(a->u.const_value, b->u.const_value);
    case DK_OP: {
        const OpDecl *x = &a->u.op, *y = &b->u.op;
        if (x->param_count != y->param_count || x->tensor_count != y->tensor_count ||
            x->stmt_count != y->stmt_count)
            return false;
        for (int i = 0; i < x->param_count; i++)
            if (!ident_eq(x->params[i].name, y->params[i].name) ||
                !expr_eq(x->params[i].default_value, y->params[i].default_value))
                return false;
        for (int i = 0; i < x->tensor_count; i++) {
            const TensorDecl *s = x->tensors[i], *t = y->tensors[i];
            if (s->role != t->role || !ident_eq(s->name, t->name) || s->type != t->type ||
                s->dim_count != t->dim_count || s->routed != t->routed || s->cached != t->cached ||
                !expr_eq(s->capacity, t->capacity))
                return false;
            for (int k = 0; k < s->dim_count; k++)
                if (!expr_eq(s->dims[k], t->dims[k])) return false;
        }
        for (int i = 0; i < x->stmt_count; i++) {
            const Stmt *s = x->stmts[i], *t = y->stmts[i];
            if (!ident_eq(s->target, t->target) || !idents_eq(s->indices, t->indices) ||
                !expr_eq(s->rhs, t->rhs) || !s->where != !t->where || !ident_eq(s->by, t->by))
                return false;
            if (s->where &&
                (!ident_eq(s->where->lhs, t->where->lhs) || s->where->cmp != t->where->cmp ||
                 !expr_eq(s->where->rhs, t->where->rhs)))
                return false;
        }
        return true;
    }
    case DK_ARCH:
        if (!ident_eq(a->u.arch.parent, b->u.arch.parent) ||
            a->u.arch.item_count != b->u.arch.item_count ||
            !params_eq(a->u.arch.params, a->u.arch.param_count, b->u.arch.params,
                       b->u.arch.param_count) ||
            !bindings_eq(a->u.arch.parent_bindings, a->u.arch.parent_binding_count,
                         b->u.arch.parent_bindings, b->u.arch.parent_binding_count))
            return false;
        for (int i = 0; i < a->u.arch.item_count; i++)
            if (!arch_item_eq(a->u.arch.items[i], b->u.arch.items[i])) return false;
        return true;
    case DK_MAPPING: {
        const MappingDecl *x = &a->u.mapping, *y = &b->u.mapping;
        if (!ident_eq(x->op, y->op) || !ident_eq(x->arch, y->arch) ||
            x->binding_count != y->binding_count || x->item_count != y->item_count ||
            !bindings_eq(x->arch_bindings, x->arch_binding_count, y->arch_bindings,
                         y->arch_binding_count))
            return false;
        for (int i = 0; i < x->binding_count; i++)
            if (!ident_eq(x->bindings[i].name, y->bindings[i].name) ||
                !expr_eq(x->bindings[i].value, y->bindings[i].value))
                return false;
        for (int i = 0; i < x->item_count; i++)
            if (!map_item_eq(x->items[i], y->items[i])) return false;
        return true;
    }
    case DK_MODEL: {
        const ModelDecl *x = &a->u.model, *y = &b->u.model;
        if (x->part_count != y->part_count) return false;
        for (int i = 0; i < x->part_count; i++)
            if (!ident_eq(x->parts[i].role, y->parts[i].role) ||
                !ident_eq(x->parts[i].mapping, y->parts[i].mapping))
                return false;
        return true;
    }
    case DK_SWEEP: {
        const SweepDecl *x = &a->u.sweep, *y = &b->u.sweep;
        if (x->axis_count != y->axis_count) return false;
        for (int i = 0; i < x->axis_count; i++) {
            const SweepAxisDecl *p = &x->axes[i], *q = &y->axes[i];
            if (p->kind != q->kind || !ident_eq(p->name, q->name) ||
                p->value_count != q->value_count || p->is_list != q->is_list ||
                (p->zip > 0) != (q->zip > 0))
                return false;
            for (int k = 0; k < p->value_count; k++)
                if (!expr_eq(p->values[k], q->values[k])) return false;
        }
        return true;
    }
    }
    return false;
}

bool fmt_ast_equal(const Module *a, const Module *b) {
    if (a->decl_count != b->decl_count) return false;
    for (int i = 0; i < a->decl_count; i++)
        if (!decl_eq(a->decls[i], b->decls[i])) return false;
    return true;
}

/* The comments' texts, in order, must come through unchanged (line
 * comments up to trailing blanks). */
static bool comments_kept(const Module *a, const Module *b) {
    if (a->comment_count != b->comment_count) return false;
    for (int i = 0; i < a->comment_count; i++) {
        Span x = a->comments[i], y = b->comments[i];
        const char *p = a->file->text + x.start, *q = b->file->text + y.start;
        size_t n = x.end - x.start, m = y.end - y.start;
        while (n > 2 && p[1] == '/' && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
            n--;
        while (m > 2 && q[1] == '/' && (q[m - 1] == ' ' || q[m - 1] == '\t' || q[m - 1] == '\r'))
            m--;
        /* equal up to CR LF -> LF */
        size_t i = 0, j = 0;
        while (i < n && j < m) {
            if (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n') i++;
            if (q[j] == '\r' && j + 1 < m && q[j + 1] == '\n') j++;
            if (p[i] != q[j]) return false;
            i++;
            j++;
        }
        if (i != n || j != m) return false;
    }
    return true;
}

char *fmt_source(Arena *arena, SourceManager *sm, SourceFile *file, DiagSink *diags, size_t *len) {
    long before = diags->errors_reported; /* (the cap may drop them) */
    Module *m = parse_module(arena, file, diags);
    if (diags->errors_reported > before) return NULL;
    char *out = fmt_module(arena, m, len);
    /* check the result means the same before anyone sees it */
    SourceFile *again = sources_add(sm, file->path, out, *len);
    DiagSink scratch;
    diags_init(&scratch, arena);
    Module *m2 = again ? parse_module(arena, again, &scratch) : NULL;
    if (!m2 || scratch.error_count > 0 || !fmt_ast_equal(m, m2) || !comments_kept(m, m2)) {
        Diag *g = diag_error(diags, (Span){file->id, 0, 0}, "E0601",
                             "formatting `%s` would change its meaning; the "
                             "file is left as it is",
                             file->path);
        diag_note(g, diags,
                  "this is a bug in cmtc fmt: please report it with "
                  "the file");
        return NULL;
    }
    return out;
}

/* --------------------------------------------------------- the command */

/* Replaces path's contents whole or not at all (a temporary file beside
 * it, renamed over it), keeping its permissions; through a symbolic link,
 * the file it names is rewritten. */
static bool write_in_place(Arena *a, const char *path, const char *text, size_t len) {
    OutputFile out;
    if (!output_open(&out, a, path)) return false;
    if (fwrite(text, 1, len, out.stream) != len) {
        int err = errno;
        output_discard(&out);
        errno = err;
        return false;
    }
    return output_commit(&out);
}

int cmd_fmt(int argc, char **argv) {
    bool json = false;
    bool color = isatty(STDERR_FILENO) && !getenv("NO_COLOR");
    bool check = false, to_stdout = false;
    const char **files = ARENA_ARRAY(process_arena(), const char *, argc + 1);
    int nfiles = 0;
    /* -I is accepted and unused (formatting reads no other file);
     * --diagnostics-format chooses how syntax errors are shown */
    const CommandSpec *spec = command_find("fmt");
    OptionParser op;
    options_init(&op, spec, argc, argv);
    for (int id; (id = options_next(&op)) != OPT_DONE;) {
        switch (id) {
        case OPT_POSITIONAL: files[nfiles++] = op.value; break;
        case FO_CHECK: check = true; break;
        case OPT_HELP: options_help(stdout, spec); return EXIT_OK;
        case OPT_INCLUDE: break;
        case OPT_DIAG_FORMAT:
        case OPT_DIAG_OUTPUT: {
            bool is_format = id == OPT_DIAG_FORMAT;
            const char *a = is_format ? "json" : "stdout", *b = is_format ? "text" : "stderr";
            if (strcmp(op.value, a) != 0 && strcmp(op.value, b) != 0) {
                fprintf(stderr, "cmtc fmt: error: %s takes %s or %s, got '%s'\n",
                        is_format ? "--diagnostics-format" : "--diagnostics-output", b, a,
                        op.value);
                options_usage_hint(stderr, spec);
                return EXIT_USAGE;
            }
            *(is_format ? &json : &to_stdout) = strcmp(op.value, a) == 0;
            break;
        }
        default: options_usage_hint(stderr, spec); return EXIT_USAGE;
        }
    }
    if (nfiles == 0) {
        fprintf(stderr, "cmtc fmt: error: no input files\n");
        options_usage_hint(stderr, spec);
        return EXIT_USAGE;
    }
    int status = EXIT_OK;
    for (int k = 0; k < nfiles; k++) {
        const char *path = files[k];
        bool is_stdin = strcmp(path, "-") == 0;
        Arena arena = {0};
        SourceManager sm;
        sources_init(&sm, &arena);
        DiagSink diags;
        diags_init(&diags, &arena);
        SourceFile *f =
            is_stdin ? sources_read_fd(&sm, "<stdin>", STDIN_FILENO) : sources_load(&sm, path);
        if (!f) {
            fprintf(stderr, "cmtc fmt: error: cannot read %s: %s\n",
                    is_stdin ? "standard input" : path, sources_error_text(errno));
            status = EXIT_USAGE;
            arena_free_all(&arena);
            continue;
        }
        size_t len = 0;
        char *out = fmt_source(&arena, &sm, f, &diags, &len);
        if (!out) {
            diags_sort(&diags);
            FILE *to = to_stdout ? stdout : stderr;
            if (json)
                diags_render_json(to, &sm, &diags);
            else
                diags_render_text(to, &sm, &diags, (DiagRenderOptions){color && !to_stdout});
            if (status == EXIT_OK) status = EXIT_DIAGNOSTICS;
            arena_free_all(&arena);
            continue;
        }
        bool changed = len != f->len || memcmp(out, f->text, len) != 0;
        if (check) {
            if (changed) {
                printf("%s\n", is_stdin ? "<stdin>" : path);
                if (status == EXIT_OK) status = EXIT_DIAGNOSTICS;
            }
        } else if (is_stdin) {
            if (fwrite(out, 1, len, stdout) != len || fflush(stdout) != 0) {
                fprintf(stderr, "cmtc fmt: error: cannot write standard output: %s\n",
                        strerror(errno));
                status = EXIT_USAGE;
            }
        } else if (changed && !write_in_place(&arena, path, out, len)) {
            fprintf(stderr, "cmtc fmt: error: cannot write %s: %s\n", path, strerror(errno));
            status = EXIT_USAGE;
        }
        arena_free_all(&arena);
    }
    if ((fflush(stdout) != 0 || ferror(stdout)) && status != EXIT_USAGE) {
        fprintf(stderr, "cmtc fmt: error: cannot write standard output: %s\n", strerror(errno));
        return EXIT_USAGE;
    }
    return status;
}
