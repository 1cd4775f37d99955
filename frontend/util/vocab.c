/* vocab.c — the helpers every vocabulary's users share (vocab.h). */
#include "vocab.h"

#include <stdio.h>
#include <string.h>

const char *vocab_join(char *buf, size_t size, const char *const *words, int count,
                       const char *last_sep) {
    size_t used = 0;
    if (size == 0) return buf;
    buf[0] = '\0';
    for (int i = 0; i < count && used < size; i++) {
        const char *sep = i == 0 ? "" : i == count - 1 ? last_sep : ", ";
        int n = snprintf(buf + used, size - used, "%s%s", sep, words[i]);
        if (n < 0) break;
        used += (size_t)n;
    }
    return buf;
}

int vocab_find(const char *const *words, int count, const char *word) {
    if (!word) return -1;
    for (int i = 0; i < count; i++)
        if (words[i][0] == word[0] && strcmp(words[i], word) == 0) return i;
    return -1;
}
