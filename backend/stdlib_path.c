/* stdlib_path.c — which standard library a cmtc binary reads.  A binary
 * in a build tree reads that tree's stdlib/ even when another cmtc is
 * installed (make install compiles the installed folder into the build
 * tree's binary too, so "the installed one if present" would make the
 * developer's binary read a stale copy); an installed binary reads the
 * share folder beside its bin folder, wherever the tree was moved. */
#include "backend/commands.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool folder_has_std(const char *dir) {
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/std", dir);
    return n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0;
}

/* Is `path` inside folder `dir` (both real paths)? */
static bool inside(const char *path, const char *dir) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    return n > 0 && strncmp(path, dir, n) == 0 && path[n] == '/';
}

const char *stdlib_choose(const char *exe, const char *source_root, const char *installed,
                          const char *source_stdlib, char *buf, size_t cap) {
    if (exe && *exe) {
        /* <prefix>/bin/cmtc beside <prefix>/share/cmtc/stdlib */
        const char *slash = strrchr(exe, '/');
        if (slash && slash > exe) {
            size_t dir_len = (size_t)(slash - exe);
            if (dir_len >= 4 && strncmp(exe + dir_len - 4, "/bin", 4) == 0) {
                int n = snprintf(buf, cap, "%.*s/share/cmtc/stdlib", (int)(dir_len - 4), exe);
                if (n > 0 && (size_t)n < cap && folder_has_std(buf)) return buf;
            }
        }
        /* a binary built inside the source tree */
        char root[PATH_MAX];
        if (source_root && realpath(source_root, root) && inside(exe, root) &&
            folder_has_std(source_stdlib))
            return source_stdlib;
    }
    if (installed && folder_has_std(installed)) return installed;
    return source_stdlib;
}

const char *stdlib_dir(void) {
    const char *env = getenv("CMT_STDLIB");
    if (env && *env) return env;
    static char chosen[PATH_MAX];
    static const char *answer;
    if (answer) return answer;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    answer = stdlib_choose(exe, CMT_SOURCE_ROOT, CMT_STDLIB_DIR, CMT_SOURCE_STDLIB, chosen,
                           sizeof chosen);
    return answer;
}
