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

/* A multiply-xorshift hash over 8-byte words: identifiers are short and
 * this is called for every one the lexer sees. */
static uint32_t hash_bytes(const char *s, size_t len) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
        s += 8;
        len -= 8;
    }
    uint64_t tail = 0;
    memcpy(&tail, s, len);
    h = (h ^ tail) * 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 29;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 32;
    return (uint32_t)h;
}

static void table_grow(void) {
    uint32_t new_cap = table.slots ? (table.mask + 1) * 2 : 1024;
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

Name intern(const char *s, size_t len) {
    if (!table.slots) table_grow();
    uint32_t h = hash_bytes(s, len);
    uint32_t i = h & table.mask;
    for (;;) {
        InternSlot *slot = &table.slots[i];
        if (!slot->text) break;
        if (slot->hash == h && slot->len == len && memcmp(slot->text, s, len) == 0)
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
