/* test_driver.c — the driver is in the library: a program that links only
 * libcmt.a runs every command through cmtc_main (before, the dispatch and
 * the shared options lived in backend/main.o, so cmd_compile and cmd_lsp
 * could not be linked without it).  Each exit status is the documented
 * one (commands.h); outputs go to files so the runner sees only PASS and
 * FAIL lines. */
#include "backend/commands.h"
#include "tests/unit/unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int run(int argc, const char *const *argv) {
    return cmtc_main(argc, (char **)argv);
}

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

int main(void) {
    char dir[] = "/tmp/cmtc-driver-XXXXXX";
    if (!mkdtemp(dir)) {
        printf("FAIL: mkdtemp\n");
        return 1;
    }
    char good[128], bad[128], out[128];
    snprintf(good, sizeof good, "%s/good.cmt", dir);
    snprintf(bad, sizeof bad, "%s/bad.cmt", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    FILE *f = fopen(good, "w");
    fputs("arch a { memory M { bandwidth 1 TB/s; } compute u vector { throughput 1 Top/s; } }\n"
          "op copy<N = 8> { in X[N] : fp16; out Y[N] : fp16; Y[n] = X[n]; }\n"
          "mapping m for copy on a {}\n",
          f);
    fclose(f);
    f = fopen(bad, "w");
    fputs("op broken { out Y[N] : fp16; }\n", f);
    fclose(f);

    /* check and errors go to standard error; keep the runner's output clean */
    fflush(stderr);
    FILE *err = freopen("/dev/null", "w", stderr);
    CHECK(err != NULL, "standard error to /dev/null");

    const char *check_good[] = {"cmtc", "check", good, NULL};
    CHECK(run(3, check_good) == EXIT_OK, "check of a good file exits 0");
    const char *check_bad[] = {"cmtc", "check", bad, NULL};
    CHECK(run(3, check_bad) == EXIT_DIAGNOSTICS, "check of a file with errors exits 1");
    const char *compile[] = {"cmtc", "compile", good, "-o", out, NULL};
    CHECK(run(5, compile) == EXIT_OK, "compile through the library exits 0");
    CHECK(file_size(out) > 0, "compile wrote its listing to -o");
    const char *unknown[] = {"cmtc", "compil", NULL};
    CHECK(run(2, unknown) == EXIT_USAGE, "an unknown command exits 2");
    const char *bad_option[] = {"cmtc", "compile", good, "--format", "yaml", NULL};
    CHECK(run(5, bad_option) == EXIT_USAGE, "a bad option value exits 2");
    const char *explain[] = {"cmtc", "explain", "E9999", NULL};
    CHECK(run(3, explain) == EXIT_USAGE, "explain of an unknown code exits 2");
    const char *none[] = {"cmtc", NULL};
    CHECK(run(1, none) == EXIT_USAGE, "no command exits 2");

    unlink(good);
    unlink(bad);
    unlink(out);
    rmdir(dir);
    return unit_finish();
}
