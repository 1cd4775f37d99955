/* lsp.c — `cmtc lsp`: a Language Server Protocol 3.17 server on standard
 * input and output.  This file holds the transport (strict Content-Length
 * framing that survives bad traffic), the lifecycle, document
 * synchronisation and the diagnostics pushed after every change; the
 * features themselves are in lsp_features.c.
 *
 * Memory: each document version owns one arena (text, AST, IR,
 * diagnostics), freed whole when the next version replaces it or the
 * document is closed.  Server state lives in the process arena.  JSON
 * values are jansson's, reference counted per message. */
#include "backend/lsp.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* JSON-RPC and LSP error codes. */
enum {
    RPC_PARSE_ERROR = -32700,
    RPC_INVALID_REQUEST = -32600,
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602,
    RPC_SERVER_NOT_INITIALIZED = -32002
};

/* ================================================================ framing */

void lsp_reader_init(LspReader *r, int fd) {
    memset(r, 0, sizeof *r);
    r->fd = fd;
}

void lsp_reader_close(LspReader *r) {
    free(r->buf);
    r->buf = NULL;
    r->start = r->end = r->cap = 0;
}

/* Reads more bytes; false at end of input (or a read error). */
static bool reader_fill(LspReader *r) {
    if (r->eof) return false;
    if (r->start > 0 && (r->start == r->end || r->end == r->cap)) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    if (r->end == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64 * 1024;
        char *nb = realloc(r->buf, cap);
        if (!nb) {
            r->eof = true;
            return false;
        }
        r->buf = nb;
        r->cap = cap;
    }
    for (;;) {
        ssize_t got = read(r->fd, r->buf + r->end, r->cap - r->end);
        if (got > 0) {
            r->end += (size_t)got;
            return true;
        }
        if (got < 0 && errno == EINTR) continue;
        r->eof = true;
        return false;
    }
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static bool match_ci(const char *p, size_t avail, const char *word) {
    size_t n = strlen(word);
    if (avail < n) return false;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)p[i]) != word[i]) return false;
    return true;
}

/* If a header line `content-length: <digits>` followed by a line break
 * starts at p, returns true and sets *value (saturated) and *line_end (the
 * offset just past the line break).  Case-insensitive. */
static bool parse_length_line(const char *p, size_t avail, uint64_t *value,
                              size_t *line_end, bool *complete) {
    static const char key[] = "content-length:";
    *complete = false;
    if (!match_ci(p, avail, key)) return false;
    size_t i = sizeof key - 1;
    while (i < avail && (p[i] == ' ' || p[i] == '\t')) i++;
    size_t digits = i;
    uint64_t v = 0;
    while (i < avail && p[i] >= '0' && p[i] <= '9') {
        if (v < (UINT64_C(1) << 40)) v = v * 10 + (uint64_t)(p[i] - '0');
        i++;
    }
    if (i == digits) return i < avail; /* not digits: a malformed header */
    while (i < avail && (p[i] == ' ' || p[i] == '\t')) i++;
    if (i < avail && p[i] == '\r') i++;
    if (i >= avail) return true; /* may still be a header: need more */
    if (p[i] != '\n') return false;
    *value = v;
    *line_end = i + 1;
    *complete = true;
    return true;
}

size_t lsp_find_header(const char *buf, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (lower((unsigned char)buf[i]) != 'c') continue;
        uint64_t v;
        size_t le;
        bool complete;
        if (parse_length_line(buf + i, len - i, &v, &le, &complete) &&
            complete)
            return i;
    }
    return (size_t)-1;
}

/* Drops input up to the next complete `Content-Length` header line (kept
 * in the buffer).  False at end of input. */
static bool reader_resync(LspReader *r) {
    for (;;) {
        size_t at = lsp_find_header(r->buf + r->start, r->end - r->start);
        if (at != (size_t)-1) {
            r->start += at;
            return true;
        }
        /* keep a tail that may hold the beginning of a header */
        size_t keep = 64;
        if (r->end - r->start > keep) r->start = r->end - keep;
        if (!reader_fill(r)) return false;
    }
}

static void set_err(char *err, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

/* Finds the end of the header section in [p, p+n): returns the offset of
 * the body (past the blank line) and sets *hdr_len, or 0 if not there. */
static size_t header_end(const char *p, size_t n, size_t *hdr_len) {
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\n') continue;
        if (i + 1 < n && p[i + 1] == '\n') {
            *hdr_len = i;
            return i + 2;
        }
        if (i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n') {
            *hdr_len = i;
            return i + 3;
        }
    }
    return 0;
}

LspReadStatus lsp_read(LspReader *r, const char **body, size_t *len,
                       char *err, size_t err_size) {
    for (;;) {
        /* stray line breaks and blanks between messages are harmless */
        while (r->start < r->end &&
               (r->buf[r->start] == '\r' || r->buf[r->start] == '\n' ||
                r->buf[r->start] == ' ' || r->buf[r->start] == '\t'))
            r->start++;
        size_t hdr_len = 0;
        size_t body_at =
            r->start < r->end
                ? header_end(r->buf + r->start, r->end - r->start, &hdr_len)
                : 0;
        if (body_at == 0) {
            if (r->end - r->start > LSP_MAX_HEADER) {
                set_err(err, err_size,
                        "header section longer than %d bytes without a blank "
                        "line",
                        LSP_MAX_HEADER);
                r->start += 1;
                if (!reader_resync(r)) r->start = r->end;
                return LSP_READ_ERROR;
            }
            if (!reader_fill(r)) return LSP_READ_EOF;
            continue;
        }
        /* The header section [start, start+hdr_len): take the last
         * Content-Length line.  Anything before it that is not a header
         * is the tail of a message whose declared length was too short,
         * already reported; it is skipped. */
        const char *h = r->buf + r->start;
        uint64_t length = 0;
        bool found = false, malformed = false;
        for (size_t i = 0; i < hdr_len; i++) {
            if (lower((unsigned char)h[i]) != 'c') continue;
            uint64_t v;
            size_t le;
            bool complete;
            /* +1: the line break ending the section belongs to the line */
            if (parse_length_line(h + i, hdr_len + 1 - i, &v, &le,
                                  &complete)) {
                if (complete) {
                    found = true;
                    malformed = false;
                    length = v;
                } else if (match_ci(h + i, hdr_len - i, "content-length:")) {
                    malformed = true;
                }
            } else if (match_ci(h + i, hdr_len - i, "content-length:")) {
                malformed = true;
            }
        }
        r->start += body_at;
        if (malformed || !found) {
            set_err(err, err_size,
                    malformed ? "malformed Content-Length header"
                              : "missing Content-Length header");
            return LSP_READ_ERROR;
        }
        if (length > LSP_MAX_BODY) {
            set_err(err, err_size,
                    "Content-Length %llu exceeds the limit of %u bytes",
                    (unsigned long long)length, LSP_MAX_BODY);
            if (!reader_resync(r)) r->start = r->end;
            return LSP_READ_ERROR;
        }
        size_t n = (size_t)length;
        size_t scanned = 0; /* body bytes searched for a header */
        for (;;) {
            size_t avail = r->end - r->start;
            size_t upto = avail < n ? avail : n;
            size_t from = scanned > 32 ? scanned - 32 : 0;
            size_t at = lsp_find_header(r->buf + r->start + from,
                                        upto - from);
            if (at != (size_t)-1) {
                set_err(err, err_size,
                        "Content-Length %zu does not match the message: a "
                        "new header starts at byte %zu of its body",
                        n, from + at);
                r->start += from + at;
                return LSP_READ_ERROR;
            }
            scanned = upto;
            if (avail >= n) break;
            if (!reader_fill(r)) return LSP_READ_EOF;
        }
        *body = r->buf + r->start;
        *len = n;
        r->start += n;
        return LSP_READ_MESSAGE;
    }
}

/* ===================================================== URIs and paths */

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = lower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

char *lsp_uri_to_path(Arena *a, const char *uri) {
    if (!match_ci(uri, strlen(uri), "file://")) return NULL;
    const char *p = uri + 7;
    const char *slash = strchr(p, '/');
    size_t host_len = slash ? (size_t)(slash - p) : strlen(p);
    size_t n = strlen(uri);
    char *out = arena_alloc(a, n + 3);
    size_t o = 0;
    if (host_len > 0 && !(host_len == 9 && match_ci(p, 9, "localhost"))) {
        out[o++] = '/';
        out[o++] = '/';
        for (size_t i = 0; i < host_len; i++) out[o++] = p[i];
    }
    p += host_len;
    for (; *p && *p != '?' && *p != '#'; p++) {
        int hi, lo;
        if (*p == '%' && (hi = hexval((unsigned char)p[1])) >= 0 &&
            (lo = hexval((unsigned char)p[2])) >= 0) {
            char c = (char)(hi * 16 + lo);
            if (c == '\0') return NULL;
            out[o++] = c;
            p += 2;
        } else {
            out[o++] = *p;
        }
    }
    if (o == 0) out[o++] = '/';
    out[o] = '\0';
    return out;
}

char *lsp_path_to_uri(Arena *a, const char *path) {
    char cwd[4096];
    const char *prefix = "";
    if (path[0] != '/' && getcwd(cwd, sizeof cwd)) prefix = cwd;
    const char *full = prefix[0] ? arena_printf(a, "%s/%s", prefix, path)
                                 : path;
    full = lsp_normalize_path(a, full);
    size_t n = strlen(full);
    char *out = arena_alloc(a, 8 + 3 * n);
    size_t o = 0;
    memcpy(out, "file://", 7);
    o = 7;
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)full[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
            c == '~' || c == '/') {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

char *lsp_normalize_path(Arena *a, const char *path) {
    size_t n = strlen(path);
    char *out = arena_alloc(a, n + 2);
    bool abs = path[0] == '/';
    /* "//host" (UNC from a file URI) keeps its two slashes */
    bool unc = abs && path[1] == '/' && path[2] != '/';
    size_t o = 0;
    if (abs) out[o++] = '/';
    if (unc) out[o++] = '/';
    size_t base = o; /* ".." never climbs above this */
    const char *p = path;
    while (*p) {
        while (*p == '/') p++;
        if (!*p) break;
        const char *q = p;
        while (*q && *q != '/') q++;
        size_t len = (size_t)(q - p);
        if (len == 1 && p[0] == '.') {
            /* skip */
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            /* drop the last component unless it is itself ".." */
            size_t e = o;
            while (e > base && out[e - 1] != '/') e--;
            bool last_dotdot = o - e == 2 && out[e] == '.' && out[e + 1] == '.';
            if (o > base && !last_dotdot) {
                o = e > base ? e - 1 : base;
            } else if (!abs) {
                if (o > base) out[o++] = '/';
                out[o++] = '.';
                out[o++] = '.';
            }
        } else {
            if (o > base) out[o++] = '/';
            memcpy(out + o, p, len);
            o += len;
        }
        p = q;
    }
    if (o == 0) out[o++] = '.';
    out[o] = '\0';
    return out;
}

/* ========================================================= positions */

/* Length of the UTF-8 sequence starting at s[i] (1 for an invalid byte),
 * and whether it is a valid 4-byte sequence (two UTF-16 units). */
static size_t utf8_seq(const unsigned char *s, size_t i, size_t end,
                       bool *astral) {
    unsigned char c = s[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3
                          : (c >> 3) == 30 ? 4 : 0;
    *astral = false;
    if (n <= 1 || i + n > end) return 1;
    for (size_t k = 1; k < n; k++)
        if ((s[i + k] & 0xC0) != 0x80) return 1;
    /* reject overlong forms and surrogates, as JSON decoders do */
    uint32_t cp = c & (0x7F >> n);
    for (size_t k = 1; k < n; k++) cp = (cp << 6) | (s[i + k] & 0x3F);
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 1;
    *astral = n == 4;
    return n;
}

/* The byte offset where line `line` (0-based) ends, before "\r\n"/"\n". */
static uint32_t line_end_of(const SourceFile *f, uint32_t line) {
    uint32_t end = line + 1 < f->line_count ? f->line_starts[line + 1]
                                            : (uint32_t)f->len;
    if (end > f->line_starts[line] && f->text[end - 1] == '\n') end--;
    if (end > f->line_starts[line] && f->text[end - 1] == '\r') end--;
    return end;
}

void lsp_position_of(const SourceFile *f, uint32_t offset, bool utf16,
                     uint32_t *line, uint32_t *col) {
    if (offset > f->len) offset = (uint32_t)f->len;
    uint32_t lo = 0, hi = f->line_count; /* last start <= offset */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->line_starts[mid] <= offset) lo = mid;
        else hi = mid;
    }
    *line = lo;
    uint32_t start = f->line_starts[lo];
    if (!utf16) {
        *col = offset - start;
        return;
    }
    const unsigned char *s = (const unsigned char *)f->text;
    uint32_t units = 0;
    size_t i = start;
    while (i < offset) {
        bool astral;
        size_t n = utf8_seq(s, i, f->len, &astral);
        if (i + n > offset) n = offset - i; /* offset inside a sequence */
        units += astral ? 2 : 1;
        i += n;
    }
    *col = units;
}

uint32_t lsp_offset_of(const SourceFile *f, uint32_t line, uint32_t col,
                       bool utf16) {
    if (line >= f->line_count) return (uint32_t)f->len;
    uint32_t start = f->line_starts[line], end = line_end_of(f, line);
    if (!utf16) return col > end - start ? end : start + col;
    const unsigned char *s = (const unsigned char *)f->text;
    uint32_t units = 0;
    size_t i = start;
    while (i < end && units < col) {
        bool astral;
        size_t n = utf8_seq(s, i, end, &astral);
        /* a column inside a surrogate pair lands before the character */
        if (astral && units + 2 > col) break;
        units += astral ? 2 : 1;
        i += n;
    }
    return (uint32_t)i;
}

char *lsp_utf8_clean(Arena *a, const char *s, size_t len) {
    char *out = arena_alloc(a, 3 * len + 1);
    size_t o = 0;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        bool astral;
        size_t n = utf8_seq(u, i, len, &astral);
        if (n == 1 && u[i] >= 0x80) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
        } else if (n == 1 && u[i] == 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3); /* NUL ends C strings */
            o += 3;
        } else {
            memcpy(out + o, s + i, n);
            o += n;
        }
        i += n;
    }
    out[o] = '\0';
    return out;
}

json_t *lsp_jstr(const char *s) {
    json_t *j = json_string(s);
    if (j) return j;
    Arena scratch = {0};
    j = json_string(lsp_utf8_clean(&scratch, s, strlen(s)));
    arena_free_all(&scratch);
    return j ? j : json_string("");
}

/* ========================================================= JSON helpers */

static json_t *position_json(uint32_t line, uint32_t col) {
    return json_pack("{s:I,s:I}", "line", (json_int_t)line, "character",
                     (json_int_t)col);
}

json_t *lsp_range_json(const LspServer *s, const SourceFile *f, Span sp) {
    uint32_t l0 = 0, c0 = 0, l1 = 0, c1 = 0;
    if (f) {
        uint32_t a = sp.start, b = sp.end < sp.start ? sp.start : sp.end;
        lsp_position_of(f, a, s->utf16, &l0, &c0);
        lsp_position_of(f, b, s->utf16, &l1, &c1);
    }
    return json_pack("{s:o,s:o}", "start", position_json(l0, c0), "end",
                     position_json(l1, c1));
}

LspDoc *lsp_doc_by_path(const LspServer *s, const char *path) {
    for (LspDoc *d = s->docs; d; d = d->next)
        if (d->open && strcmp(d->path, path) == 0) return d;
    return NULL;
}

const char *lsp_uri_for_path(const LspServer *s, Arena *a, const char *path) {
    const char *norm = lsp_normalize_path(a, path);
    LspDoc *d = lsp_doc_by_path(s, norm);
    if (d) return d->uri;
    return lsp_path_to_uri(a, norm);
}

json_t *lsp_location_json(const LspServer *s, const LspDoc *doc, Span sp) {
    SourceFile *f = sp.file >= 0 ? sources_get(&doc->sm, sp.file) : NULL;
    if (!f) f = doc->file;
    Arena scratch = {0};
    const char *uri = f == doc->file ? doc->uri
                                     : lsp_uri_for_path(s, &scratch, f->path);
    json_t *loc = json_pack("{s:o,s:o}", "uri", lsp_jstr(uri), "range",
                            lsp_range_json(s, f, sp));
    arena_free_all(&scratch);
    return loc;
}

/* ========================================================= the channel */

static void send_json(LspServer *s, json_t *msg) {
    char *body = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (!body) return;
    size_t n = strlen(body);
    char head[64];
    int hn = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", n);
    const char *parts[2] = {head, body};
    size_t lens[2] = {(size_t)hn, n};
    for (int k = 0; k < 2; k++) {
        size_t off = 0;
        while (off < lens[k]) {
            ssize_t w = write(s->out_fd, parts[k] + off, lens[k] - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) { /* the client is gone */
                s->exiting = true;
                if (!s->shutdown) s->exit_code = 1;
                free(body);
                return;
            }
            off += (size_t)w;
        }
    }
    free(body);
}

static void send_result(LspServer *s, json_t *id, json_t *result) {
    send_json(s, json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id,
                           "result", result));
}

static void send_error(LspServer *s, json_t *id, int code, const char *msg) {
    json_t *jid = id ? json_incref(id) : json_null();
    send_json(s, json_pack("{s:s,s:o,s:{s:i,s:o}}", "jsonrpc", "2.0", "id",
                           jid, "error", "code", code, "message",
                           lsp_jstr(msg)));
}

static void send_notification(LspServer *s, const char *method,
                              json_t *params) {
    send_json(s, json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method",
                           method, "params", params));
}

/* ========================================================= documents */

static const char *overlay_cb(void *ctx, const char *path, size_t *len) {
    LspServer *s = ctx;
    Arena scratch = {0};
    const char *norm = lsp_normalize_path(&scratch, path);
    LspDoc *d = lsp_doc_by_path(s, norm);
    arena_free_all(&scratch);
    if (!d) return NULL;
    *len = d->file->len;
    return d->file->text;
}

static LspDoc *doc_find(LspServer *s, const char *uri) {
    for (LspDoc *d = s->docs; d; d = d->next)
        if (d->open && strcmp(d->uri, uri) == 0) return d;
    return NULL;
}

/* Makes (uri, text) the document's current version and checks it: a
 * fresh arena receives copies of uri, path and text, check_program runs in
 * it, and the previous version's arena is freed whole.  text may point
 * into the previous version (a re-check after a used file changed). */
static void doc_load(LspServer *s, LspDoc *d, const char *uri,
                     const char *text, size_t len) {
    Arena fresh = {0};
    char *u = arena_strdup(&fresh, uri);
    char *path = lsp_uri_to_path(&fresh, uri);
    path = lsp_normalize_path(&fresh, path ? path : uri);
    SourceManager sm;
    sources_init(&sm, &fresh);
    SourceFile *root = sources_add(&sm, path, text, len);
    arena_free_all(&d->arena);
    d->arena = fresh; /* the chunks move with the struct */
    d->sm = sm;
    d->sm.arena = &d->arena;
    d->uri = u;
    d->path = path;
    d->file = root;
    d->cache = NULL;
    diags_init(&d->diags, &d->arena);
    d->prog = check_program(&d->arena, &d->sm, &d->diags, root, &s->check);
    d->module = d->prog && d->prog->module_count > 0 ? d->prog->modules[0]
                                                     : NULL;
}

static json_t *diag_json(LspServer *s, LspDoc *d, const Diag *g) {
    SourceFile *f = d->file;
    Span sp = g->span;
    if (sp.file != f->id) sp = (Span){f->id, 0, 0};
    int sev = g->severity == SEV_ERROR ? 1 : g->severity == SEV_WARNING ? 2 : 3;
    Arena scratch = {0};
    char *msg = arena_strdup(&scratch, g->message ? g->message : "");
    for (int i = 0; i < g->note_count; i++)
        msg = arena_printf(&scratch, "%s\nnote: %s", msg, g->notes[i]);
    for (int i = 0; i < g->help_count; i++)
        msg = arena_printf(&scratch, "%s\nhelp: %s", msg, g->helps[i]);
    if (g->span.file >= 0 && g->span.file != f->id) {
        SourceFile *other = sources_get(&d->sm, g->span.file);
        if (other) {
            uint32_t line, col;
            source_line_col(other, g->span.start, &line, &col);
            msg = arena_printf(&scratch, "%s\n(in %s:%u:%u)", msg,
                               other->path, line, col);
        }
    }
    json_t *o = json_pack("{s:o,s:i,s:s,s:o}", "range",
                          lsp_range_json(s, f, sp), "severity", sev, "source",
                          "cmtc", "message", lsp_jstr(msg));
    if (g->code && g->code[0]) {
        json_object_set_new(o, "code", lsp_jstr(g->code));
        /* codeDescription: the page explaining the code, when the source
         * tree's docs are at hand */
        const char *docs = arena_printf(&scratch, "%s/../docs/errors/%s.md",
                                        CMT_SOURCE_STDLIB, g->code);
        struct stat st;
        if (stat(docs, &st) == 0)
            json_object_set_new(
                o, "codeDescription",
                json_pack("{s:s}", "href", lsp_path_to_uri(&scratch, docs)));
    }
    if (g->label_count > 0) {
        json_t *rel = json_array();
        for (int i = 0; i < g->label_count; i++) {
            const DiagLabel *l = &g->labels[i];
            if (l->span.file < 0) continue;
            const char *lm = l->message && l->message[0] ? l->message
                                                         : g->message;
            json_array_append_new(
                rel, json_pack("{s:o,s:o}", "location",
                               lsp_location_json(s, d, l->span), "message",
                               lsp_jstr(lm ? lm : "")));
        }
        json_object_set_new(o, "relatedInformation", rel);
    }
    arena_free_all(&scratch);
    return o;
}

static void publish(LspServer *s, LspDoc *d) {
    json_t *arr = json_array();
    if (d->open) {
        diags_sort(&d->diags);
        for (int i = 0; i < d->diags.count; i++)
            json_array_append_new(arr, diag_json(s, d, d->diags.items[i]));
    }
    json_t *params = json_pack("{s:o,s:o}", "uri", lsp_jstr(d->uri),
                               "diagnostics", arr);
    if (d->open && d->version >= 0)
        json_object_set_new(params, "version", json_integer(d->version));
    send_notification(s, "textDocument/publishDiagnostics", params);
}

static bool doc_uses_path(const LspDoc *d, const char *path) {
    if (!d->prog) return false;
    for (int i = 1; i < d->prog->module_count; i++) {
        const Module *m = d->prog->modules[i];
        if (m && m->file && m->file->path) {
            Arena scratch = {0};
            bool same =
                strcmp(lsp_normalize_path(&scratch, m->file->path), path) == 0;
            arena_free_all(&scratch);
            if (same) return true;
        }
    }
    return false;
}

/* Checks d, publishes its diagnostics, then re-checks every other open
 * document that uses d's file (its unsaved text changed what they see). */
static void doc_changed(LspServer *s, LspDoc *d) {
    publish(s, d);
    for (LspDoc *o = s->docs; o; o = o->next) {
        if (o == d || !o->open || !doc_uses_path(o, d->path)) continue;
        doc_load(s, o, o->uri, o->file->text, o->file->len);
        publish(s, o);
    }
}

/* ============================================================ methods */

static const char *jget_str(json_t *obj, const char *key) {
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static LspDoc *param_doc(LspServer *s, json_t *params) {
    json_t *td = json_object_get(params, "textDocument");
    const char *uri = jget_str(td, "uri");
    return uri ? doc_find(s, uri) : NULL;
}

static bool param_offset(LspServer *s, LspDoc *d, json_t *pos, uint32_t *out);
static json_t *initialize_result(LspServer *s, json_t *params) {
    json_t *encs = json_object_get(
        json_object_get(json_object_get(params, "capabilities"), "general"),
        "positionEncodings");
    s->utf16 = true;
    size_t i;
    json_t *e;
    json_array_foreach(encs, i, e) {
        if (json_is_string(e) && strcmp(json_string_value(e), "utf-8") == 0)
            s->utf16 = false;
    }
    json_t *caps = json_pack(
        "{s:s,s:{s:b,s:i},s:b,s:b,s:b,s:b,s:{s:[s,s,s,s,s]},s:b}",
        "positionEncoding", s->utf16 ? "utf-16" : "utf-8", "textDocumentSync",
        "openClose", 1, "change", 1, "hoverProvider", 1, "definitionProvider",
        1, "documentSymbolProvider", 1, "documentFormattingProvider", 1,
        "completionProvider", "triggerCharacters", ":", ".", "<", "[", ">",
        "inlayHintProvider", 1);
    return json_pack("{s:o,s:{s:s,s:s}}", "capabilities", caps, "serverInfo",
                     "name", "cmtc", "version", "0.1");
}

/* A Position to a byte offset in f (no document needed). */
static bool pos_offset(LspServer *s, const SourceFile *f, json_t *pos,
                       uint32_t *out) {
    json_t *l = json_object_get(pos, "line");
    json_t *c = json_object_get(pos, "character");
    if (!json_is_integer(l) || !json_is_integer(c)) return false;
    json_int_t li = json_integer_value(l), ci = json_integer_value(c);
    if (li < 0 || ci < 0) return false;
    if (li > UINT32_MAX) li = UINT32_MAX;
    if (ci > UINT32_MAX) ci = UINT32_MAX;
    *out = lsp_offset_of(f, (uint32_t)li, (uint32_t)ci, s->utf16);
    return true;
}

/* Applies one contentChanges entry to the text of cur; the new text goes
 * to a new file of sm (for its line table).  NULL if malformed. */
static SourceFile *apply_change(LspServer *s, const SourceFile *cur,
                                json_t *change, SourceManager *sm) {
    json_t *jt = json_object_get(change, "text");
    if (!json_is_string(jt)) return NULL;
    const char *text = json_string_value(jt);
    size_t tlen = json_string_length(jt);
    json_t *range = json_object_get(change, "range");
    if (!range) return sources_add(sm, cur->path, text, tlen);
    uint32_t a, b;
    if (!pos_offset(s, cur, json_object_get(range, "start"), &a) ||
        !pos_offset(s, cur, json_object_get(range, "end"), &b))
        return NULL;
    if (b < a) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    size_t old = cur->len, len = old - (b - a) + tlen;
    char *out = arena_alloc(sm->arena, len + 1);
    memcpy(out, cur->text, a);
    memcpy(out + a, text, tlen);
    memcpy(out + a + tlen, cur->text + b, old - b);
    return sources_add(sm, cur->path, out, len);
}

static void did_open(LspServer *s, json_t *params) {
    json_t *td = json_object_get(params, "textDocument");
    const char *uri = jget_str(td, "uri");
    json_t *text = json_object_get(td, "text");
    if (!uri || !json_is_string(text)) return;
    LspDoc *d = doc_find(s, uri);
    if (!d) {
        for (d = s->docs; d && d->open; d = d->next) {
        }
        if (!d) {
            d = ARENA_NEW(process_arena(), LspDoc);
            d->next = s->docs;
            s->docs = d;
        }
    }
    d->open = true;
    json_t *ver = json_object_get(td, "version");
    d->version = json_is_integer(ver) ? json_integer_value(ver) : -1;
    doc_load(s, d, uri, json_string_value(text), json_string_length(text));
    doc_changed(s, d);
}

static void did_change(LspServer *s, json_t *params) {
    LspDoc *d = param_doc(s, params);
    json_t *changes = json_object_get(params, "contentChanges");
    if (!d || !json_is_array(changes)) return;
    json_t *ver = json_object_get(json_object_get(params, "textDocument"),
                                  "version");
    if (json_is_integer(ver)) d->version = json_integer_value(ver);
    Arena scratch = {0};
    SourceManager sm;
    sources_init(&sm, &scratch);
    const SourceFile *cur = d->file;
    size_t i;
    json_t *c;
    json_array_foreach(changes, i, c) {
        SourceFile *next = apply_change(s, cur, c, &sm);
        if (next) cur = next;
    }
    doc_load(s, d, d->uri, cur->text, cur->len);
    arena_free_all(&scratch);
    doc_changed(s, d);
}

static bool param_offset(LspServer *s, LspDoc *d, json_t *pos,
                         uint32_t *out) {
    return pos_offset(s, d->file, pos, out);
}

static void did_close(LspServer *s, json_t *params) {
    LspDoc *d = param_doc(s, params);
    if (!d) return;
    const char *path = d->path;
    d->open = false;
    d->version = -1;
    publish(s, d); /* an empty array clears the client's list */
    /* documents that used its unsaved text now read the file on disk */
    for (LspDoc *o = s->docs; o; o = o->next) {
        if (!o->open || !doc_uses_path(o, path)) continue;
        doc_load(s, o, o->uri, o->file->text, o->file->len);
        publish(s, o);
    }
    arena_free_all(&d->arena);
    d->file = NULL;
    d->prog = NULL;
    d->module = NULL;
    d->cache = NULL;
    d->uri = d->path = "";
}

static void handle_request(LspServer *s, const char *method, json_t *id,
                           json_t *params) {
    if (strcmp(method, "initialize") == 0) {
        if (s->initialized) {
            send_error(s, id, RPC_INVALID_REQUEST,
                       "initialize was already received");
            return;
        }
        s->initialized = true;
        send_result(s, id, initialize_result(s, params));
        return;
    }
    if (!s->initialized) {
        send_error(s, id, RPC_SERVER_NOT_INITIALIZED,
                   "the server is not initialized: send initialize first");
        return;
    }
    if (strcmp(method, "shutdown") == 0) {
        s->shutdown = true;
        send_result(s, id, json_null());
        return;
    }
    if (s->shutdown) {
        send_error(s, id, RPC_INVALID_REQUEST,
                   "the server is shut down: only exit is accepted");
        return;
    }
    static const char *const doc_methods[] = {
        "textDocument/hover",          "textDocument/definition",
        "textDocument/documentSymbol", "textDocument/formatting",
        "textDocument/completion",     "textDocument/inlayHint"};
    int which = -1;
    for (int i = 0; i < (int)(sizeof doc_methods / sizeof *doc_methods); i++)
        if (strcmp(method, doc_methods[i]) == 0) which = i;
    if (which < 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "unknown method %.200s", method);
        send_error(s, id, RPC_METHOD_NOT_FOUND, msg);
        return;
    }
    if (!json_is_object(params)) {
        send_error(s, id, RPC_INVALID_PARAMS, "params must be an object");
        return;
    }
    LspDoc *d = param_doc(s, params);
    if (!d) {
        send_error(s, id, RPC_INVALID_PARAMS,
                   "textDocument.uri does not name an open document");
        return;
    }
    uint32_t offset = 0;
    if (which <= 1 || which == 4) {
        if (!param_offset(s, d, json_object_get(params, "position"),
                          &offset)) {
            send_error(s, id, RPC_INVALID_PARAMS,
                       "position must be {line, character} with "
                       "non-negative integers");
            return;
        }
    }
    json_t *result = NULL;
    switch (which) {
    case 0: result = lsp_hover(s, d, offset); break;
    case 1: result = lsp_definition(s, d, offset); break;
    case 2: result = lsp_document_symbols(s, d); break;
    case 3: result = lsp_formatting(s, d); break;
    case 4: result = lsp_completion(s, d, offset); break;
    default: {
        json_t *range = json_object_get(params, "range");
        uint32_t a = 0, b = (uint32_t)d->file->len;
        if (range && (!param_offset(s, d, json_object_get(range, "start"),
                                    &a) ||
                      !param_offset(s, d, json_object_get(range, "end"),
                                    &b))) {
            send_error(s, id, RPC_INVALID_PARAMS,
                       "range must be {start, end} positions");
            return;
        }
        result = lsp_inlay_hints(s, d, (Span){d->file->id, a, b});
        break;
    }
    }
    send_result(s, id, result ? result : json_null());
}

static void handle_notification(LspServer *s, const char *method,
                                json_t *params) {
    if (strcmp(method, "exit") == 0) {
        s->exiting = true;
        s->exit_code = s->shutdown ? 0 : 1;
        return;
    }
    if (!s->initialized || s->shutdown) return; /* dropped, as specified */
    if (strcmp(method, "textDocument/didOpen") == 0) did_open(s, params);
    else if (strcmp(method, "textDocument/didChange") == 0)
        did_change(s, params);
    else if (strcmp(method, "textDocument/didClose") == 0)
        did_close(s, params);
    /* initialized, didSave, $/cancelRequest, $/setTrace and any other
     * notification need nothing from this server */
}

static void handle_message(LspServer *s, json_t *msg) {
    if (!json_is_object(msg)) {
        send_error(s, NULL, RPC_INVALID_REQUEST,
                   "a message must be a JSON object");
        return;
    }
    json_t *id = json_object_get(msg, "id");
    json_t *method = json_object_get(msg, "method");
    bool id_ok = id && (json_is_integer(id) || json_is_string(id) ||
                        json_is_null(id));
    if (!method) {
        if (id && (json_object_get(msg, "result") ||
                   json_object_get(msg, "error")))
            return; /* a response to a request we never send */
        send_error(s, id_ok ? id : NULL, RPC_INVALID_REQUEST,
                   "a message needs a method");
        return;
    }
    if (!json_is_string(method)) {
        send_error(s, id_ok ? id : NULL, RPC_INVALID_REQUEST,
                   "method must be a string");
        return;
    }
    if (id && !id_ok) {
        send_error(s, NULL, RPC_INVALID_REQUEST,
                   "id must be an integer or a string");
        return;
    }
    json_t *params = json_object_get(msg, "params");
    if (id) handle_request(s, json_string_value(method), id, params);
    else handle_notification(s, json_string_value(method), params);
}

static void usage(void) {
    fprintf(stderr, "usage: cmtc lsp [--stdio] [-I DIR]...\n"
                    "  a language server on standard input and output\n");
}

int cmd_lsp(int argc, char **argv) {
    LspServer *s = ARENA_NEW(process_arena(), LspServer);
    s->utf16 = true;
    s->exit_code = 1;
    for (int i = 0; i < argc;) {
        bool bad = false;
        if (common_option(&s->common, argc, argv, &i, &bad)) continue;
        if (bad) return EXIT_USAGE;
        if (strcmp(argv[i], "--stdio") == 0) {
            i++;
            continue;
        }
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage();
            return EXIT_OK;
        }
        fprintf(stderr, "cmtc lsp: unknown argument '%s'\n", argv[i]);
        usage();
        return EXIT_USAGE;
    }
    common_check_options(&s->common, &s->check);
    s->check.overlay = overlay_cb;
    s->check.overlay_ctx = s;

    /* Standard output is the protocol channel and nothing else: keep it
     * as out_fd and point file descriptor 1 at standard error, so a stray
     * printf anywhere (lp_solve, a debug line) cannot corrupt a frame. */
    fflush(stdout);
    s->out_fd = dup(STDOUT_FILENO);
    if (s->out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        fprintf(stderr, "cmtc lsp: cannot set up standard output: %s\n",
                strerror(errno));
        return EXIT_USAGE;
    }
    signal(SIGPIPE, SIG_IGN);

    LspReader r;
    lsp_reader_init(&r, STDIN_FILENO);
    char err[256];
    while (!s->exiting) {
        const char *body;
        size_t len;
        LspReadStatus st = lsp_read(&r, &body, &len, err, sizeof err);
        if (st == LSP_READ_EOF) break;
        if (st == LSP_READ_ERROR) {
            send_error(s, NULL, RPC_PARSE_ERROR, err);
            continue;
        }
        json_error_t je;
        json_t *msg = json_loadb(body, len, 0, &je);
        if (!msg) {
            snprintf(err, sizeof err, "invalid JSON at byte %d: %.180s",
                     je.position, je.text);
            send_error(s, NULL, RPC_PARSE_ERROR, err);
            continue;
        }
        handle_message(s, msg);
        json_decref(msg);
    }
    lsp_reader_close(&r);
    int code = s->exiting ? s->exit_code : (s->shutdown ? 0 : 1);
    for (LspDoc *d = s->docs; d; d = d->next) arena_free_all(&d->arena);
    close(s->out_fd);
    return code;
}
