/* lsp_proto.c — the language server's protocol helpers, kept apart from
 * the server loop so that unit tests can link them alone: the
 * Content-Length reader (strict framing that survives bad traffic), file
 * URIs and paths, LSP positions in UTF-16 or UTF-8, and the JSON shapes
 * of ranges and locations. */
#include "backend/lsp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    if (r->wait && !r->wait(r->wait_ctx, r->fd)) {
        r->eof = true;
        return false;
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

static int lower(int c) {
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

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
static bool parse_length_line(const char *p, size_t avail, uint64_t *value, size_t *line_end,
                              bool *complete) {
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
        if (parse_length_line(buf + i, len - i, &v, &le, &complete) && complete) return i;
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

LspReadStatus lsp_read(LspReader *r, const char **body, size_t *len, char *err, size_t err_size) {
    if (r->resync) {
        r->resync = false;
        if (!reader_resync(r)) return LSP_READ_EOF;
    }
    for (;;) {
        /* stray line breaks and blanks between messages are harmless */
        while (r->start < r->end && (r->buf[r->start] == '\r' || r->buf[r->start] == '\n' ||
                                     r->buf[r->start] == ' ' || r->buf[r->start] == '\t'))
            r->start++;
        size_t hdr_len = 0;
        size_t body_at =
            r->start < r->end ? header_end(r->buf + r->start, r->end - r->start, &hdr_len) : 0;
        if (body_at == 0) {
            if (r->end - r->start > LSP_MAX_HEADER) {
                set_err(err, err_size,
                        "header section longer than %d bytes without a blank "
                        "line",
                        LSP_MAX_HEADER);
                r->start += 1;
                r->resync = true;
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
            if (parse_length_line(h + i, hdr_len + 1 - i, &v, &le, &complete)) {
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
            if (length < (UINT64_C(1) << 40))
                set_err(err, err_size, "Content-Length %llu exceeds the limit of %u bytes",
                        (unsigned long long)length, LSP_MAX_BODY);
            else
                set_err(err, err_size,
                        "Content-Length of 2^40 bytes or more exceeds the limit "
                        "of %u bytes",
                        LSP_MAX_BODY);
            r->resync = true;
            return LSP_READ_ERROR;
        }
        size_t n = (size_t)length;
        size_t scanned = 0; /* body bytes searched for a header */
        for (;;) {
            size_t avail = r->end - r->start;
            size_t upto = avail < n ? avail : n;
            size_t from = scanned > 32 ? scanned - 32 : 0;
            size_t at = lsp_find_header(r->buf + r->start + from, upto - from);
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
    const char *full = prefix[0] ? arena_printf(a, "%s/%s", prefix, path) : path;
    full = lsp_normalize_path(a, full);
    size_t n = strlen(full);
    char *out = arena_alloc(a, 8 + 3 * n);
    size_t o = 0;
    memcpy(out, "file://", 7);
    o = 7;
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)full[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
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
static size_t utf8_seq(const unsigned char *s, size_t i, size_t end, bool *astral) {
    unsigned char c = s[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    *astral = false;
    if (n <= 1 || i + n > end) return 1;
    for (size_t k = 1; k < n; k++)
        if ((s[i + k] & 0xC0) != 0x80) return 1;
    /* reject overlong forms and surrogates, as JSON decoders do */
    uint32_t cp = c & (0x7F >> n);
    for (size_t k = 1; k < n; k++) cp = (cp << 6) | (s[i + k] & 0x3F);
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 1;
    *astral = n == 4;
    return n;
}

/* The byte offset where line `line` (0-based) ends, before "\r\n"/"\n". */
static uint32_t line_end_of(const SourceFile *f, uint32_t line) {
    uint32_t end = line + 1 < f->line_count ? f->line_starts[line + 1] : (uint32_t)f->len;
    if (end > f->line_starts[line] && f->text[end - 1] == '\n') {
        end--;
        if (end > f->line_starts[line] && f->text[end - 1] == '\r') end--;
    }
    return end;
}

void lsp_position_of(const SourceFile *f, uint32_t offset, bool utf16, uint32_t *line,
                     uint32_t *col) {
    if (offset > f->len) offset = (uint32_t)f->len;
    *line = source_line_index(f, offset);
    uint32_t start = f->line_starts[*line];
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
        if (i + n > offset) break; /* inside a character: its start */
        units += astral ? 2 : 1;
        i += n;
    }
    *col = units;
}

uint32_t lsp_offset_of(const SourceFile *f, uint32_t line, uint32_t col, bool utf16) {
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
        if (n == 1 && (u[i] >= 0x80 || u[i] == 0)) { /* NUL ends C strings */
            memcpy(out + o, "\xEF\xBF\xBD", 3);
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

/* Built with json_object_set_new rather than json_pack: these run for
 * every range of every symbol and diagnostic, and json_pack parses its
 * format string on every call. */
static json_t *position_json(uint32_t line, uint32_t col) {
    json_t *o = json_object();
    json_object_set_new_nocheck(o, "line", json_integer((json_int_t)line));
    json_object_set_new_nocheck(o, "character", json_integer((json_int_t)col));
    return o;
}

json_t *lsp_range_json(const LspServer *s, const SourceFile *f, Span sp) {
    uint32_t l0 = 0, c0 = 0, l1 = 0, c1 = 0;
    if (f) {
        uint32_t a = sp.start, b = sp.end < sp.start ? sp.start : sp.end;
        lsp_position_of(f, a, s->utf16, &l0, &c0);
        lsp_position_of(f, b, s->utf16, &l1, &c1);
    }
    json_t *o = json_object();
    json_object_set_new_nocheck(o, "start", position_json(l0, c0));
    json_object_set_new_nocheck(o, "end", position_json(l1, c1));
    return o;
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
    const char *uri = f == doc->file ? doc->uri : lsp_uri_for_path(s, &scratch, f->path);
    json_t *loc = json_pack("{s:o,s:o}", "uri", lsp_jstr(uri), "range", lsp_range_json(s, f, sp));
    arena_free_all(&scratch);
    return loc;
}

/* ========================================================= buffers */

void lsp_buf_add(LspBuf *b, const void *data, size_t n) {
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
}
