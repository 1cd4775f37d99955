/* test_output.c — output files written whole or not at all: commit
 * replaces the destination, a failure or a discard leaves it as it was,
 * no temporary file survives (not even a signal), a full device is an
 * error, and an output is matched to the inputs by device and inode. */
#include "frontend/util/util.h"
#include "tests/unit/unit.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char folder[] = "/tmp/cmtc-output-XXXXXX";
static Arena arena;

static const char *in_folder(const char *name) {
    return arena_printf(&arena, "%s/%s", folder, name);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static const char *read_text(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return "(missing)";
    char *buf = arena_alloc(&arena, 256);
    size_t n = fread(buf, 1, 255, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* How many files of the folder hold a temporary name. */
static int temporaries(void) {
    DIR *d = opendir(folder);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".cmtc-")) n++;
    if (d) closedir(d);
    return n;
}

static void test_commit_and_discard(void) {
    const char *out = in_folder("out.txt");
    write_text(out, "old\n");
    chmod(out, 0640);
    OutputFile o;
    CHECK(output_open(&o, &arena, out) && o.temp_path != NULL, "a regular file gets a temporary");
    fputs("new\n", o.stream);
    CHECK_STR(read_text(out), "old\n", "the destination is untouched while writing");
    CHECK(output_commit(&o), "commit succeeds");
    CHECK_STR(read_text(out), "new\n", "commit replaces the destination");
    struct stat st;
    CHECK(stat(out, &st) == 0 && (st.st_mode & 07777) == 0640, "commit keeps the mode");
    CHECK(temporaries() == 0, "no temporary file after a commit");

    CHECK(output_open(&o, &arena, out), "opened again");
    fputs("half", o.stream);
    output_discard(&o);
    CHECK_STR(read_text(out), "new\n", "a discarded output leaves the old file");
    CHECK(temporaries() == 0, "no temporary file after a discard");

    errno = 0;
    CHECK(!output_open(&o, &arena, in_folder("missing/out.txt")) && errno == ENOENT,
          "a missing folder fails at open with ENOENT");
}

static void test_full_device(void) {
    if (access("/dev/full", W_OK) != 0) {
        printf("SKIP: /dev/full is not available\n");
        return;
    }
    OutputFile o;
    CHECK(output_open(&o, &arena, "/dev/full") && o.temp_path == NULL,
          "a device is written directly");
    fputs("model\n", o.stream);
    errno = 0;
    CHECK(!output_commit(&o) && errno == ENOSPC, "/dev/full fails with ENOSPC at commit");
    /* more than a buffer: the failure comes from fputs, commit still says so */
    CHECK(output_open(&o, &arena, "/dev/full"), "/dev/full opened again");
    for (int i = 0; i < 10000; i++) fputs("0123456789", o.stream);
    CHECK(!output_commit(&o), "a failed write inside fputs is reported at commit");
}

/* A signal while the temporary file is open removes it; the destination
 * stays as it was. */
static void test_signal(void) {
    const char *out = in_folder("signalled.txt");
    write_text(out, "old\n");
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        OutputFile o;
        if (!output_open(&o, &arena, out)) _exit(3);
        fputs("partial", o.stream);
        fflush(o.stream);
        raise(SIGTERM);
        _exit(4); /* not reached */
    }
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "the child died of SIGTERM");
    CHECK_STR(read_text(out), "old\n", "a signal leaves the destination as it was");
    CHECK(temporaries() == 0, "a signal leaves no temporary file");
}

static void test_names_source(void) {
    const char *src = in_folder("input.cmt");
    write_text(src, "const A = 1;\n");
    SourceManager sm;
    sources_init(&sm, &arena);
    SourceFile *f = sources_load(&sm, src);
    CHECK(f != NULL, "input loaded");
    CHECK(output_names_source(&sm, src) == f, "the same path names the input");
    const char *hard = in_folder("hard.cmt");
    const char *soft = in_folder("soft.cmt");
    CHECK(link(src, hard) == 0 && symlink(src, soft) == 0, "links made");
    CHECK(output_names_source(&sm, hard) == f, "a hard link names the input");
    CHECK(output_names_source(&sm, soft) == f, "a symbolic link names the input");
    CHECK(output_names_source(&sm, in_folder("./input.cmt")) == f, "another spelling too");
    CHECK(output_names_source(&sm, in_folder("other.cmt")) == NULL, "a new file names nothing");
    CHECK(output_names_source(&sm, "/dev/null") == NULL, "a device names no input");
    unlink(hard);
    unlink(soft);
    unlink(src);
}

int main(void) {
    if (!mkdtemp(folder)) {
        printf("FAIL: temporary folder: %s\n", strerror(errno));
        return 1;
    }
    test_commit_and_discard();
    test_full_device();
    test_signal();
    test_names_source();
    unlink(in_folder("out.txt"));
    unlink(in_folder("signalled.txt"));
    rmdir(folder);
    arena_free_all(&arena);
    return unit_finish();
}
