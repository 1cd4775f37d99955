/* names.c — string interning: an open-addressing hash table whose slots
 * and strings live in the process arena, so equal names are equal
 * pointers for the life of the process. */
#include "frontend/util/util.h"

#include <string.h>

typedef struct InternSlot {
    const char *text; /* NULL when empty */
    uint32_t len;
    uint32_t hash;
} InternSlot;

static struct {
    InternSlot *slots;
    uint32_t mask; /* capacity - 1; capacity is a power of two */
    uint32_t count;
} table;

static inline uint64_t load8(const char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint64_t load4(const char *p) {
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

/* The last (up to) 8 bytes of s, with fixed-size loads only: overlapping
 * words for 4 to 8 bytes and three single bytes below, which with the
 * length tell every string of that length apart. */
static inline uint64_t tail_word(const char *s, size_t len) {
    if (len >= 8) return load8(s + len - 8);
    if (len >= 4) return load4(s) | load4(s + len - 4) << 32;
    if (len == 0) return 0;
    return (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[len / 2] << 8 |
           (uint64_t)(unsigned char)s[len - 1] << 16;
}

/* A multiply-xorshift hash over 8-byte words: identifiers are short and
 * this is called for every one the lexer sees. */
static uint32_t hash_bytes(const char *s, size_t len) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)len;
    for (size_t i = 0; i + 8 < len; i += 8) {
        h = (h ^ load8(s + i)) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    h = (h ^ tail_word(s, len)) * 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 29;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 32;
    return (uint32_t)h;
}

/* Whether the len bytes at a and b are equal (a name is short: no call) */
static inline bool same_bytes(const char *a, const char *b, size_t len) {
    size_t i = 0;
    for (; i + 8 < len; i += 8)
        if (load8(a + i) != load8(b + i)) return false;
    return tail_word(a, len) == tail_word(b, len);
}

static void table_resize(uint32_t new_cap) {
    InternSlot *fresh = ARENA_ARRAY(process_arena(), InternSlot, new_cap);
    uint32_t new_mask = new_cap - 1;
    if (table.slots) {
        for (uint32_t i = 0; i <= table.mask; i++) {
            InternSlot s = table.slots[i];
            if (!s.text) continue;
            uint32_t j = s.hash & new_mask;
            while (fresh[j].text) j = (j + 1) & new_mask;
            fresh[j] = s;
        }
    }
    /* the old slot array is left to the arena */
    table.slots = fresh;
    table.mask = new_mask;
}

static void table_grow(void) {
    table_resize(table.slots ? (table.mask + 1) * 2 : 1024);
}

void intern_reserve(size_t more) {
    size_t want = 2 * ((size_t)table.count + more);
    uint32_t cap = table.slots ? table.mask + 1 : 1024;
    while (cap < want && cap < ((uint32_t)1 << 30)) cap *= 2;
    if (!table.slots || cap > table.mask + 1) table_resize(cap);
}

Name intern(const char *s, size_t len) {
    if (!table.slots) table_grow();
    uint32_t h = hash_bytes(s, len);
    uint32_t i = h & table.mask;
    for (;;) {
        InternSlot *slot = &table.slots[i];
        if (!slot->text) break;
        if (slot->hash == h && slot->len == len && same_bytes(slot->text, s, len))
            return slot->text;
        i = (i + 1) & table.mask;
    }
    /* keep the load at most one half so probes stay short */
    if ((table.count + 1) * 2 > table.mask + 1) {
        table_grow();
        i = h & table.mask;
        while (table.slots[i].text) i = (i + 1) & table.mask;
    }
    char *copy = arena_strndup(process_arena(), s, len);
    table.slots[i] = (InternSlot){copy, (uint32_t)len, h};
    table.count++;
    return copy;
}

Name intern_cstr(const char *s) {
    return intern(s, strlen(s));
}

Name intern_quoted(const char *before, Name name) {
    size_t before_len = strlen(before), name_len = strlen(name);
    char small[256];
    size_t len = before_len + name_len + 2;
    char *text = len <= sizeof small ? small : arena_alloc(process_arena(), len);
    memcpy(text, before, before_len);
    text[before_len] = '`';
    memcpy(text + before_len + 1, name, name_len);
    text[len - 1] = '`';
    return intern(text, len);
}

/* ------------------------------------------------------------ name maps */

static uint32_t name_slot(Name key, uint32_t mask) {
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) & mask;
}

void name_map_put(Arena *arena, NameMap *m, Name key, int value) {
    if (!key) return; /* (NULL marks an empty slot) */
    if (!m->keys || (m->count + 1) * 4 > (m->mask + 1) * 3) {
        uint32_t cap = m->keys ? (m->mask + 1) * 2 : 16;
        Name *keys = ARENA_ARRAY(arena, Name, cap);
        int *values = ARENA_ARRAY(arena, int, cap);
        for (uint32_t i = 0; m->keys && i <= m->mask; i++) {
            if (!m->keys[i]) continue;
            uint32_t j = name_slot(m->keys[i], cap - 1);
            while (keys[j]) j = (j + 1) & (cap - 1);
            keys[j] = m->keys[i];
            values[j] = m->values[i];
        }
        m->keys = keys;
        m->values = values;
        m->mask = cap - 1;
    }
    uint32_t j = name_slot(key, m->mask);
    while (m->keys[j] && m->keys[j] != key) j = (j + 1) & m->mask;
    if (!m->keys[j]) m->count++;
    m->keys[j] = key;
    m->values[j] = value;
}

int name_map_get(const NameMap *m, Name key) {
    if (!m->keys || !key) return -1;
    uint32_t j = name_slot(key, m->mask);
    while (m->keys[j]) {
        if (m->keys[j] == key) return m->values[j];
        j = (j + 1) & m->mask;
    }
    return -1;
}
