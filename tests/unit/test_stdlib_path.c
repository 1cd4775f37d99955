/* test_stdlib_path.c — which standard library a binary reads: an
 * installed copy's share folder beside its bin folder; a build tree's own
 * stdlib/ even when an installed one exists (before: the installed one
 * won); the installed folder for any other binary. */
#include "backend/commands.h"
#include "tests/unit/unit.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void make_std(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "mkdir -p '%s/std'", dir);
    if (system(path) != 0) printf("FAIL: mkdir %s\n", dir);
}

int main(void) {
    char tmpl[] = "/tmp/cmtc-stdlib-XXXXXX";
    char *t = mkdtemp(tmpl);
    if (!t) {
        printf("FAIL: mkdtemp\n");
        return 1;
    }
    char tree[256], tree_std[256], build_exe[256], prefix_std[256], prefix_exe[256], other[256];
    snprintf(tree, sizeof tree, "%s/src", t);
    snprintf(tree_std, sizeof tree_std, "%s/src/stdlib", t);
    snprintf(build_exe, sizeof build_exe, "%s/src/build/cmtc", t);
    snprintf(prefix_std, sizeof prefix_std, "%s/usr/share/cmtc/stdlib", t);
    snprintf(prefix_exe, sizeof prefix_exe, "%s/usr/bin/cmtc", t);
    snprintf(other, sizeof other, "%s/elsewhere/cmtc", t);
    make_std(tree_std);
    make_std(prefix_std);
    char buf[512];
    const char *got = stdlib_choose(build_exe, tree, prefix_std, tree_std, buf, sizeof buf);
    CHECK(strcmp(got, tree_std) == 0, "a build-tree binary reads its own stdlib, installed or not");
    got = stdlib_choose(prefix_exe, tree, "/nonexistent/share/cmtc/stdlib", tree_std, buf,
                        sizeof buf);
    CHECK(strcmp(got, prefix_std) == 0, "an installed binary reads the share folder beside bin");
    got = stdlib_choose(other, tree, prefix_std, tree_std, buf, sizeof buf);
    CHECK(strcmp(got, prefix_std) == 0, "another binary reads the installed folder");
    got = stdlib_choose(NULL, tree, "/nonexistent", tree_std, buf, sizeof buf);
    CHECK(strcmp(got, tree_std) == 0, "no installed folder: the source tree's");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t);
    if (system(cmd) != 0) printf("FAIL: cleanup\n");
    return unit_failures != 0;
}
