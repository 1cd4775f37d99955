/* arena.c — chunked bump allocator.  Memory handed out is zeroed and
 * 16-byte aligned; everything is released at once by arena_free_all, the
 * only place in the compiler that calls free(). */
#include "frontend/util/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA_ALIGN 16u
#define ARENA_MIN_CHUNK ((size_t)64 * 1024)
/* A growing arena takes bigger chunks, up to one huge page: checking a
 * large file touches tens of megabytes, and on a virtual machine a page
 * fault per 4 KiB page cost a third of `cmtc check`'s time. */
#define ARENA_MAX_CHUNK ((size_t)2 * 1024 * 1024)
/* Requests larger than this get a chunk of their own, so that one big
 * array does not waste the rest of the current chunk. */
#define ARENA_BIG_REQUEST (ARENA_MIN_CHUNK / 4)

struct ArenaChunk {
    ArenaChunk *next;
    size_t capacity; /* usable bytes after the header */
    size_t used;     /* bytes of the usable area consumed */
    /* keeps the header a multiple of 16 so data() stays aligned */
    size_t pad_to_16;
};

_Static_assert(sizeof(ArenaChunk) % ARENA_ALIGN == 0,
               "chunk header must keep the data 16-byte aligned");

static inline char *chunk_data(ArenaChunk *c) {
    return (char *)(c + 1);
}

static inline size_t align_up(size_t n) {
    return (n + (ARENA_ALIGN - 1)) & ~(size_t)(ARENA_ALIGN - 1);
}

/* Shared chunks are zeroed piece by piece as they are handed out: a short
 * lived arena (one lowering, one evaluation) then pays for the bytes it
 * uses, not for a whole chunk.  A dedicated big chunk comes from calloc,
 * which gets untouched zero pages from the kernel. */
static ArenaChunk *chunk_new(size_t capacity, bool zeroed) {
    /* malloc and calloc align for any fundamental type, which is 16 on
     * the hosts we build for; the header size keeps data() aligned too. */
    ArenaChunk *c;
    if (!zeroed && sizeof(ArenaChunk) + capacity == ARENA_MAX_CHUNK) {
        /* aligned to its size, so the kernel can back it with one huge
         * page (one fault instead of 512) where it allows them */
        c = aligned_alloc(ARENA_MAX_CHUNK, ARENA_MAX_CHUNK);
#ifdef MADV_HUGEPAGE
        if (c) madvise(c, ARENA_MAX_CHUNK, MADV_HUGEPAGE);
#endif
    } else {
        c = zeroed ? calloc(1, sizeof(ArenaChunk) + capacity)
                   : malloc(sizeof(ArenaChunk) + capacity);
    }
    if (!c) {
        fputs("cmtc: out of memory\n", stderr);
        abort();
    }
    c->capacity = capacity;
    c->used = 0;
    c->next = NULL;
    return c;
}

void *arena_alloc(Arena *a, size_t size) {
    size_t need = align_up(size ? size : 1);
    if (need < size) { /* size so large that rounding wrapped */
        fputs("cmtc: out of memory\n", stderr);
        abort();
    }
    ArenaChunk *head = a->head;
    if (head && head->capacity - head->used >= need) {
        char *p = chunk_data(head) + head->used;
        head->used += need;
        a->used_total += need;
        return memset(p, 0, need);
    }
    if (need > ARENA_BIG_REQUEST) {
        /* A dedicated chunk, linked behind the head so the head's free
         * space stays available for small requests. */
        ArenaChunk *big = chunk_new(need, true);
        big->used = need;
        if (head) {
            big->next = head->next;
            head->next = big;
        } else {
            a->head = big;
        }
        a->used_total += need;
        return chunk_data(big);
    }
    /* a quarter of what the arena holds, so short-lived arenas stay small */
    size_t chunk = ARENA_MIN_CHUNK;
    while (chunk < ARENA_MAX_CHUNK && 4 * chunk <= a->used_total) chunk *= 2;
    ArenaChunk *c =
        chunk_new(chunk < ARENA_MAX_CHUNK ? chunk : ARENA_MAX_CHUNK - sizeof(ArenaChunk), false);
    c->next = head;
    a->head = c;
    c->used = need;
    a->used_total += need;
    return memset(chunk_data(c), 0, need);
}

void *arena_realloc(Arena *a, void *old, size_t old_size, size_t new_size) {
    if (!old) return arena_alloc(a, new_size);
    ArenaChunk *head = a->head;
    /* The most recent allocation of the head chunk can grow in place: the
     * bytes after it were never handed out (and so are not zeroed yet). */
    if (head) {
        uintptr_t data = (uintptr_t)chunk_data(head);
        size_t old_start = (size_t)((uintptr_t)old - data);
        if ((uintptr_t)old >= data && old_start < head->capacity &&
            old_start + align_up(old_size ? old_size : 1) == head->used) {
            size_t need = align_up(new_size ? new_size : 1);
            if (old_start + need <= head->capacity) {
                if (new_size < old_size)
                    memset((char *)old + new_size, 0, old_size - new_size);
                else
                    memset((char *)old + old_size, 0, need - old_size);
                a->used_total += need;
                a->used_total -= head->used - old_start;
                head->used = old_start + need;
                return old;
            }
        }
    }
    if (new_size <= old_size) {
        memset((char *)old + new_size, 0, old_size - new_size);
        return old;
    }
    void *fresh = arena_alloc(a, new_size);
    memcpy(fresh, old, old_size);
    return fresh;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    return p;
}

char *arena_strdup(Arena *a, const char *s) {
    return arena_strndup(a, s, strlen(s));
}

char *arena_vprintf(Arena *a, const char *fmt, va_list ap) {
    char small[256];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(again);
        return arena_strdup(a, "");
    }
    char *p = arena_alloc(a, (size_t)n + 1);
    if ((size_t)n < sizeof small)
        memcpy(p, small, (size_t)n + 1);
    else
        vsnprintf(p, (size_t)n + 1, fmt, again);
    va_end(again);
    return p;
}

char *arena_printf(Arena *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *p = arena_vprintf(a, fmt, ap);
    va_end(ap);
    return p;
}

void arena_free_all(Arena *a) {
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used_total = 0;
}

void ptrvec_push(Arena *a, PtrVec *v, void *item) {
    if (v->count == v->cap) {
        int new_cap = v->cap ? v->cap * 2 : 8;
        v->items = arena_realloc(a, v->items, sizeof(void *) * (size_t)v->cap,
                                 sizeof(void *) * (size_t)new_cap);
        v->cap = new_cap;
    }
    v->items[v->count++] = item;
}

Arena *process_arena(void) {
    static Arena the_process_arena;
    return &the_process_arena;
}
