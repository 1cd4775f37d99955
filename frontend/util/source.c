/* source.c — source files, their line tables, and conversions between
 * byte offsets, (line, byte column) and LSP (line, UTF-16 column). */
#include "frontend/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

Span span_join(Span a, Span b) {
    if (a.file < 0) return b;
    if (b.file < 0) return a;
    Span joined = a;
    if (b.start < joined.start) joined.start = b.start;
    if (b.end > joined.end) joined.end = b.end;
    return joined;
}

void sources_init(SourceManager *sm, Arena *arena) {
    memset(sm, 0, sizeof *sm);
    sm->arena = arena;
}

/* Line starts: offset 0 and every offset just after a '\n'. */
static void build_line_table(Arena *arena, SourceFile *f) {
    uint32_t count = 1;
    const char *p = f->text, *end = f->text + f->len;
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        count++;
        p++;
    }
    f->line_starts = ARENA_ARRAY(arena, uint32_t, count);
    f->line_count = count;
    uint32_t line = 1;
    p = f->text;
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        p++;
        f->line_starts[line++] = (uint32_t)(p - f->text);
    }
}

/* Adds a file whose NUL-terminated text is already in sm's arena. */
static SourceFile *add_file(SourceManager *sm, const char *path, const char *text, size_t len) {
    if (sm->count == sm->cap) {
        int new_cap = sm->cap ? sm->cap * 2 : 8;
        sm->files = arena_realloc(sm->arena, sm->files, sizeof(SourceFile *) * (size_t)sm->cap,
                                  sizeof(SourceFile *) * (size_t)new_cap);
        sm->cap = new_cap;
    }
    SourceFile *f = ARENA_NEW(sm->arena, SourceFile);
    f->id = sm->count;
    f->path = arena_strdup(sm->arena, path);
    f->text = text;
    f->len = len;
    build_line_table(sm->arena, f);
    sm->files[sm->count++] = f;
    return f;
}

SourceFile *sources_add(SourceManager *sm, const char *path, const char *text, size_t len) {
    if (len > SOURCE_MAX_BYTES) {
        errno = EFBIG;
        return NULL;
    }
    return add_file(sm, path, arena_strndup(sm->arena, text, len), len);
}

/* Makes fd blocking again (it was opened non-blocking). */
static bool set_blocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    return flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) >= 0;
}

enum { READ_PIECE = 1 << 20 };

/* Reads fd to its end in pieces of a scratch arena, stopping as soon as
 * it has read more than SOURCE_MAX_BYTES, so an endless stream costs at
 * most the cap; then copies the pieces into one text.  `fifo`: fd is a
 * FIFO opened non-blocking, whose first read tells one nobody writes to
 * (end of file at once) from one with a writer (then reads block as
 * usual).  NULL with errno set on failure. */
static SourceFile *read_all(SourceManager *sm, const char *name, int fd, bool fifo) {
    Arena scratch = {0};
    PtrVec pieces = {0};
    size_t len = 0, last_used = READ_PIECE;
    int failure = 0;
    for (bool first = fifo;;) {
        if (len > SOURCE_MAX_BYTES) {
            failure = EFBIG;
            break;
        }
        if (last_used == READ_PIECE) {
            ptrvec_push(&scratch, &pieces, arena_alloc(&scratch, READ_PIECE));
            last_used = 0;
        }
        char *piece = pieces.items[pieces.count - 1];
        ssize_t got = read(fd, piece + last_used, READ_PIECE - last_used);
        if (got < 0 && errno == EINTR) continue;
        if (first) { /* the FIFO's first answer */
            first = false;
            bool nothing_yet = got < 0 && errno == EAGAIN; /* a writer, no data */
            if (got == 0)
                failure = ENODATA;
            else if ((got > 0 || nothing_yet) && !set_blocking(fd))
                failure = errno;
            if (failure) break;
            if (nothing_yet) continue;
        }
        if (got < 0) {
            failure = errno ? errno : EIO;
            break;
        }
        if (got == 0) break;
        last_used += (size_t)got;
        len += (size_t)got;
    }
    SourceFile *f = NULL;
    if (!failure) {
        char *text = arena_alloc(sm->arena, len + 1), *w = text;
        for (int i = 0; i < pieces.count; i++) {
            size_t n = i + 1 < pieces.count ? READ_PIECE : last_used;
            memcpy(w, pieces.items[i], n);
            w += n;
        }
        f = add_file(sm, name, text, len);
    }
    arena_free_all(&scratch);
    errno = failure;
    return f;
}

/* A regular file of `size` bytes read straight into its final buffer, so
 * the text is held once (read_all's pieces then the joined copy held it
 * twice).  NULL with errno set on failure, or with errno 0 when the file
 * is not the size fstat gave (it is being written): the caller then reads
 * it again from the start with read_all. */
static SourceFile *read_sized(SourceManager *sm, const char *name, int fd, size_t size) {
    /* one byte more than expected, to see a file that grew */
    char *text = arena_alloc(sm->arena, size + 2);
    size_t len = 0;
    while (len < size + 1) {
        ssize_t got = read(fd, text + len, size + 1 - len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return NULL;
        if (got == 0) break;
        len += (size_t)got;
    }
    if (len != size) {
        errno = 0;
        return NULL;
    }
    text[len] = 0;
    return add_file(sm, name, text, len);
}

static SourceFile *load(SourceManager *sm, const char *path, bool regular_only) {
    /* Non-blocking, so that opening a FIFO never waits for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    SourceFile *f = NULL;
    int failure = 0;
    if (fstat(fd, &st) != 0) {
        failure = errno;
    } else if (S_ISDIR(st.st_mode)) {
        failure = EISDIR;
    } else if (S_ISREG(st.st_mode)) {
        if ((uint64_t)st.st_size > SOURCE_MAX_BYTES) {
            failure = EFBIG; /* known before reading a byte */
        } else {
            f = read_sized(sm, path, fd, (size_t)st.st_size);
            if (!f && errno == 0) {
                f = lseek(fd, 0, SEEK_SET) == 0 ? read_all(sm, path, fd, false) : NULL;
                if (!f && errno == 0) errno = EIO;
            }
        }
    } else if (regular_only) {
        failure = ESPIPE;
    } else if (S_ISFIFO(st.st_mode)) {
        f = read_all(sm, path, fd, true);
    } else if (!set_blocking(fd)) { /* a device (a terminal, /dev/zero) */
        failure = errno;
    } else {
        f = read_all(sm, path, fd, false);
    }
    if (!f && !failure) failure = errno;
    if (f) {
        f->identified = true;
        f->device = (uint64_t)st.st_dev;
        f->inode = (uint64_t)st.st_ino;
    }
    close(fd);
    errno = failure;
    return f;
}

SourceFile *sources_load(SourceManager *sm, const char *path) {
    return load(sm, path, false);
}

SourceFile *sources_load_module(SourceManager *sm, const char *path) {
    return load(sm, path, true);
}

SourceFile *sources_read_fd(SourceManager *sm, const char *name, int fd) {
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (regular && (uint64_t)st.st_size > SOURCE_MAX_BYTES) {
        errno = EFBIG;
        return NULL;
    }
    SourceFile *f = read_all(sm, name, fd, false);
    if (f && regular) {
        f->identified = true;
        f->device = (uint64_t)st.st_dev;
        f->inode = (uint64_t)st.st_ino;
    }
    return f;
}

const char *sources_error_text(int err) {
    static char too_large[80];
    switch (err) {
    case EFBIG:
        snprintf(too_large, sizeof too_large,
                 "larger than %zu MiB, the most cmtc reads from one file", SOURCE_MAX_BYTES >> 20);
        return too_large;
    case EISDIR: return "it is a folder, not a file";
    case ENODATA: return "it is a FIFO that no process is writing to";
    case ESPIPE: return "it is not a regular file (a FIFO, a device or a socket)";
    default: return strerror(err);
    }
}

SourceFile *sources_get(const SourceManager *sm, int id) {
    if (id < 0 || id >= sm->count) return NULL;
    return sm->files[id];
}

uint32_t source_line_index(const SourceFile *f, uint32_t offset) {
    uint32_t lo = 0, hi = f->line_count; /* answer in [lo, hi) */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->line_starts[mid] <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void source_line_col(const SourceFile *f, uint32_t offset, uint32_t *line, uint32_t *col) {
    if (offset > f->len) offset = (uint32_t)f->len;
    uint32_t index = source_line_index(f, offset);
    *line = index + 1;
    *col = offset - f->line_starts[index] + 1;
}

/* End (exclusive) of 0-based line `index`'s text: before "\n" or "\r\n". */
static uint32_t line_text_end(const SourceFile *f, uint32_t index) {
    if (index + 1 >= f->line_count) return (uint32_t)f->len;
    uint32_t end = f->line_starts[index + 1] - 1; /* the '\n' */
    if (end > f->line_starts[index] && f->text[end - 1] == '\r') end--;
    return end;
}

const char *source_line_text(const SourceFile *f, uint32_t line, size_t *len) {
    if (line == 0 || line > f->line_count) {
        *len = 0;
        return "";
    }
    uint32_t start = f->line_starts[line - 1];
    *len = line_text_end(f, line - 1) - start;
    return f->text + start;
}

/* Length of the well-formed UTF-8 sequence at p (at most `avail` bytes),
 * or 0 when the bytes there are not one. */
static unsigned utf8_sequence_length(const unsigned char *p, size_t avail) {
    unsigned char b = p[0];
    if (b < 0x80) return 1;
    unsigned n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the 2nd byte */
    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        if (b == 0xE0)
            lo = 0xA0; /* no overlong forms */
        else if (b == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        if (b == 0xF0)
            lo = 0x90;
        else if (b == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    if (avail < n) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (unsigned i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    return n;
}

/* UTF-16 units of the character at p: 2 for a 4-byte sequence (a
 * surrogate pair), 1 otherwise; an invalid byte counts as one unit. */
static unsigned utf16_units_at(const unsigned char *p, size_t avail, unsigned *bytes) {
    unsigned n = utf8_sequence_length(p, avail);
    if (n == 0) {
        *bytes = 1;
        return 1;
    }
    *bytes = n;
    return n == 4 ? 2 : 1;
}

uint32_t source_utf16_col(const SourceFile *f, uint32_t offset) {
    if (offset > f->len) offset = (uint32_t)f->len;
    uint32_t start = f->line_starts[source_line_index(f, offset)];
    const unsigned char *text = (const unsigned char *)f->text;
    uint32_t units = 0, i = start;
    while (i < offset) {
        if (text[i] < 0x80) { /* ASCII fast path */
            units++;
            i++;
            continue;
        }
        unsigned bytes;
        unsigned u = utf16_units_at(text + i, f->len - i, &bytes);
        if (i + bytes > offset) break; /* offset inside a character */
        units += u;
        i += bytes;
    }
    return units;
}

uint32_t source_offset_of(const SourceFile *f, uint32_t line0, uint32_t col, bool utf16) {
    if (line0 >= f->line_count) return (uint32_t)f->len;
    uint32_t start = f->line_starts[line0];
    uint32_t end = line_text_end(f, line0);
    if (!utf16) return col > end - start ? end : start + col;
    const unsigned char *text = (const unsigned char *)f->text;
    uint32_t units = 0, i = start;
    while (i < end && units < col) {
        unsigned bytes;
        unsigned u = text[i] < 0x80 ? (bytes = 1, 1u) : utf16_units_at(text + i, end - i, &bytes);
        if (units + u > col) break; /* col inside a surrogate pair */
        units += u;
        i += bytes;
    }
    return i;
}
