/* arena.c — chunked bump allocator.  Memory handed out is zeroed and
 * 8-byte aligned; everything is released at once by arena_free_all, the
 * only place in the compiler that calls free(). */
#include "frontend/util/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Chunks start 16-byte aligned and allocations 8-byte aligned: no type
 * cmtc allocates needs more (doubles, int64_t and pointers; no long
 * double), and a 72-byte syntax node then takes 72 bytes, not 80. */
#define ARENA_ALIGN 8u
_Static_assert(ARENA_ALIGN == 8, "arena_alloc in util.h rounds to 8");
#define ARENA_MIN_CHUNK ((size_t)64 * 1024)
/* A growing arena takes bigger chunks, up to one huge page: checking a
 * large file touches tens of megabytes, and on a virtual machine a page
 * fault per 4 KiB page cost a third of `cmtc check`'s time. */
#define ARENA_MAX_CHUNK ((size_t)2 * 1024 * 1024)
/* Requests larger than this get a chunk of their own, so that one big
 * array does not waste the rest of the current chunk. */
#define ARENA_BIG_REQUEST (ARENA_MIN_CHUNK / 4)
/* How far ahead of an allocation a reused or malloc'd chunk is zeroed. */
#define ARENA_ZERO_STEP ((size_t)4096)

/* Under AddressSanitizer every chunk comes from calloc: the leak checker
 * scans heap blocks for pointers but not pages we map ourselves, so a
 * chunk linked only from a mapped one would be reported as leaked, and
 * heap chunks get the sanitizer's bounds checks. */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_MAP_PAGES 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_MAP_PAGES 0
#endif
#endif
#ifndef ARENA_MAP_PAGES
#define ARENA_MAP_PAGES 1
#endif

struct ArenaChunk {
    _Alignas(16) ArenaChunk *next; /* (the header keeps the data 16-aligned) */
    size_t capacity;               /* usable bytes after the header */
    size_t used;                   /* bytes of the usable area consumed */
    /* the number of ARENA_MAX_CHUNK blocks mapped for it with mmap (it is
     * unmapped, not freed); 0 for a chunk from malloc */
    uint32_t huge_blocks;
    /* the bytes from `used` up to `zeroed` are zero (all of a chunk of
     * fresh pages from the kernel); past it they are zeroed in steps of
     * ARENA_ZERO_STEP as they are handed out, not one memset per
     * allocation (a scratch arena hands out hundreds of thousands) */
    size_t zeroed;
};

_Static_assert(sizeof(ArenaChunk) % 16 == 0, "chunk header must keep the data 16-byte aligned");

static inline char *chunk_data(ArenaChunk *c) {
    return (char *)(c + 1);
}

static inline size_t align_up(size_t n) {
    return (n + (ARENA_ALIGN - 1)) & ~(size_t)(ARENA_ALIGN - 1);
}

static void out_of_memory(void) {
    fputs("cmtc: out of memory\n", stderr);
    abort();
}

#if ARENA_MAP_PAGES
/* `bytes` (a multiple of ARENA_MAX_CHUNK) of fresh zero pages, aligned to
 * ARENA_MAX_CHUNK so that the kernel can back them with huge pages (one
 * fault per 2 MiB instead of 512, and on a virtual machine a fault costs
 * microseconds); NULL when the system has no memory left. */
static void *map_huge(size_t bytes) {
    size_t span = bytes + ARENA_MAX_CHUNK;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    uintptr_t start = ((uintptr_t)raw + ARENA_MAX_CHUNK - 1) & ~(uintptr_t)(ARENA_MAX_CHUNK - 1);
    size_t before = (size_t)(start - (uintptr_t)raw);
    if (before) munmap(raw, before);
    if (span - before > bytes) munmap((char *)start + bytes, span - before - bytes);
#ifdef MADV_HUGEPAGE
    madvise((void *)start, bytes, MADV_HUGEPAGE);
#endif
    return (void *)start;
}
#endif

/* A chunk of at least `capacity` usable bytes.  The largest (a growing
 * arena's 2 MiB chunks, a big array or a source text) are mapped fresh
 * in huge pages and need no zeroing; a shared smaller chunk comes from
 * malloc and is zeroed piece by piece as it is handed out, so a
 * short-lived arena (one lowering, one evaluation) pays for the bytes it
 * uses; a small dedicated chunk comes from calloc. */
static ArenaChunk *chunk_new(size_t capacity, bool dedicated) {
    size_t bytes = sizeof(ArenaChunk) + capacity;
    if (bytes < capacity) out_of_memory();
    ArenaChunk *c;
    size_t mapped = 0;
    if (bytes >= ARENA_MAX_CHUNK / 2) {
        mapped = (bytes + ARENA_MAX_CHUNK - 1) & ~(size_t)(ARENA_MAX_CHUNK - 1);
        if (mapped < bytes || mapped / ARENA_MAX_CHUNK > UINT32_MAX) out_of_memory();
#if ARENA_MAP_PAGES
        c = map_huge(mapped);
#else
        c = calloc(1, mapped);
#endif
        capacity = mapped - sizeof(ArenaChunk);
    } else {
        c = dedicated ? calloc(1, bytes) : malloc(bytes);
    }
    if (!c) out_of_memory();
    c->capacity = capacity;
    c->used = 0;
    c->next = NULL;
    c->huge_blocks = ARENA_MAP_PAGES ? (uint32_t)(mapped / ARENA_MAX_CHUNK) : 0;
    c->zeroed = mapped || dedicated ? capacity : 0;
    return c;
}

/* Zeroes c's bytes up to at least `end` (<= capacity), a step ahead. */
static void chunk_zero_to(ArenaChunk *c, size_t end) {
    size_t to = c->capacity - end > ARENA_ZERO_STEP ? end + ARENA_ZERO_STEP : c->capacity;
    memset(chunk_data(c) + c->zeroed, 0, to - c->zeroed);
    c->zeroed = to;
}

/* The head chunk's used bytes, as the inline arena_alloc left them. */
static void head_sync(Arena *a) {
    if (a->head && a->next) a->head->used = (size_t)(a->next - chunk_data(a->head));
}

/* The head chunk's free zeroed bytes, for the inline arena_alloc. */
static void head_publish(Arena *a) {
    if (!a->head) {
        a->next = a->limit = NULL;
        return;
    }
    a->next = chunk_data(a->head) + a->head->used;
    a->limit = chunk_data(a->head) + a->head->zeroed;
}

/* Hands out `need` bytes at the chunk's end, zeroed. */
static inline void *chunk_take(ArenaChunk *c, size_t need) {
    char *p = chunk_data(c) + c->used;
    c->used += need;
    if (c->used > c->zeroed) chunk_zero_to(c, c->used);
    return p;
}

static void *alloc_in_chunks(Arena *a, size_t size) {
    size_t need = align_up(size ? size : 1);
    if (need < size) out_of_memory(); /* size so large that rounding wrapped */
    ArenaChunk *head = a->head;
    if (head && head->capacity - head->used >= need) {
        a->used_total += need;
        return chunk_take(head, need);
    }
    /* a quarter of what the arena holds, so short-lived arenas stay small */
    size_t chunk = ARENA_MIN_CHUNK;
    while (chunk < ARENA_MAX_CHUNK && 4 * chunk <= a->used_total) chunk *= 2;
    /* A big request that would leave most of a new chunk free (a table of
     * a large file: an arena of tens of MiB takes 2 MiB chunks) starts the
     * next chunk like a small one, so it shares the chunk's huge pages
     * with what follows; any other gets a chunk of its own (a middling
     * one from calloc, in small pages that fault one by one). */
    if (need > ARENA_BIG_REQUEST && need > chunk / 2) {
        /* A dedicated chunk, linked behind the head so the head's free
         * space stays available for small requests. */
        ArenaChunk *big = chunk_new(need, true);
        if (head) {
            big->next = head->next;
            head->next = big;
        } else {
            a->head = big;
        }
        a->used_total += need;
        return chunk_take(big, need);
    }
    ArenaChunk *c =
        chunk_new(chunk < ARENA_MAX_CHUNK ? chunk : ARENA_MAX_CHUNK - sizeof(ArenaChunk), false);
    c->next = head;
    a->head = c;
    a->used_total += need;
    return chunk_take(c, need);
}

void *arena_alloc_slow(Arena *a, size_t size) {
    head_sync(a);
    void *p = alloc_in_chunks(a, size);
    head_publish(a);
    return p;
}

void *arena_realloc(Arena *a, void *old, size_t old_size, size_t new_size) {
    if (!old) return arena_alloc(a, new_size);
    head_sync(a);
    ArenaChunk *head = a->head;
    /* The most recent allocation of the head chunk can grow in place: the
     * bytes after it were never handed out (and are zero up to `zeroed`). */
    if (head) {
        uintptr_t data = (uintptr_t)chunk_data(head);
        size_t old_start = (size_t)((uintptr_t)old - data);
        if ((uintptr_t)old >= data && old_start < head->capacity &&
            old_start + align_up(old_size ? old_size : 1) == head->used) {
            size_t need = align_up(new_size ? new_size : 1);
            if (old_start + need <= head->capacity) {
                /* the bytes past `used` up to `zeroed` are zero */
                if (new_size < old_size)
                    memset((char *)old + new_size, 0, old_size - new_size);
                else if (old_start + need > head->zeroed)
                    chunk_zero_to(head, old_start + need);
                a->used_total += need;
                a->used_total -= head->used - old_start;
                head->used = old_start + need;
                head_publish(a);
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

static void chunk_release(ArenaChunk *c) {
    if (c->huge_blocks)
        munmap(c, (size_t)c->huge_blocks * ARENA_MAX_CHUNK);
    else
        free(c);
}

/* Releases c and every chunk after it. */
static void chain_release(ArenaChunk *c) {
    while (c) {
        ArenaChunk *next = c->next;
        chunk_release(c);
        c = next;
    }
}

void arena_free_all(Arena *a) {
    chain_release(a->head);
    a->head = NULL;
    a->used_total = 0;
    a->next = a->limit = NULL;
}

void arena_reset(Arena *a) {
    ArenaChunk *keep = a->head;
    if (!keep) return;
    chain_release(keep->next);
    keep->next = NULL;
    keep->used = 0;
    keep->zeroed = 0; /* arena_alloc zeroes what it hands out again */
    a->used_total = 0;
    head_publish(a);
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
