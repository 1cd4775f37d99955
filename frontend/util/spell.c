/* spell.c — "did you mean": Levenshtein distance and the closest
 * candidate within a cutoff that grows with the name's length. */
#include "frontend/util/util.h"

#include <string.h>

/* Names longer than this are not compared: the rows stay on the stack and
 * no sensible suggestion is that long. */
#define SPELL_MAX_LEN 256
#define SPELL_TOO_FAR (1 << 20)

/* Two swapped neighbouring letters (`GBL` for `GLB`, `tiel`) count as one
 * edit, the commonest slip of a typist (optimal string alignment: a
 * swapped pair is not edited again). */
int edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > SPELL_MAX_LEN || m > SPELL_MAX_LEN) return SPELL_TOO_FAR;
    int before[SPELL_MAX_LEN + 1], previous[SPELL_MAX_LEN + 1], current[SPELL_MAX_LEN + 1];
    for (size_t j = 0; j <= m; j++) previous[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        current[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int substitute = previous[j - 1] + (a[i - 1] != b[j - 1]);
            int delete_a = previous[j] + 1;
            int insert_b = current[j - 1] + 1;
            int best = substitute < delete_a ? substitute : delete_a;
            current[j] = best < insert_b ? best : insert_b;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                before[j - 2] + 1 < current[j])
                current[j] = before[j - 2] + 1;
        }
        memcpy(before, previous, sizeof(int) * (m + 1));
        memcpy(previous, current, sizeof(int) * (m + 1));
    }
    return previous[m];
}

/* Up to 3 characters one edit is plausible, up to 6 two, beyond that
 * three; never so many that every character could be replaced. */
static int spell_cutoff(size_t len) {
    int cutoff = len <= 3 ? 1 : len <= 6 ? 2 : 3;
    if ((size_t)cutoff >= len) cutoff = (int)len - 1;
    return cutoff;
}

static bool equal_ignoring_case(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x != y) return false;
    }
    return *a == *b;
}

const char *spell_suggest(const char *name, const char *const *candidates, int count) {
    /* `M` for `m`, `glb` for `GLB`: a difference of case only is the
     * likeliest mistake, whatever the length */
    for (int i = 0; i < count; i++)
        if (candidates[i] && strcmp(candidates[i], name) != 0 &&
            equal_ignoring_case(candidates[i], name))
            return candidates[i];
    size_t len = strlen(name);
    int cutoff = spell_cutoff(len);
    if (cutoff <= 0) return NULL;
    const char *best = NULL;
    int best_distance = cutoff + 1;
    for (int i = 0; i < count; i++) {
        const char *c = candidates[i];
        if (!c || strcmp(c, name) == 0) continue;
        size_t clen = strlen(c);
        /* the length difference alone bounds the distance from below */
        size_t diff = clen > len ? clen - len : len - clen;
        if (diff >= (size_t)best_distance) continue;
        int d = edit_distance(name, c);
        if (d < best_distance) { /* strict: ties keep the first */
            best_distance = d;
            best = c;
        }
    }
    return best;
}
