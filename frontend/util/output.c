/* output.c — output files written whole or not at all: a temporary file
 * beside the destination, every write checked, then a rename. */
#include "frontend/util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporary files being written, removed when SIGINT, SIGTERM or SIGHUP
 * ends the process, so that an interrupted compile leaves nothing behind
 * (the destination is untouched anyway: it is replaced only by rename). */
enum { MAX_PENDING = 8 };
static const char *volatile pending[MAX_PENDING];
static volatile sig_atomic_t handlers_installed;

static void remove_pending_and_die(int sig) {
    for (int i = 0; i < MAX_PENDING; i++)
        if (pending[i]) unlink(pending[i]); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void) {
    if (handlers_installed) return;
    handlers_installed = 1;
    static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++) {
        struct sigaction old;
        /* a signal the caller ignores (nohup) stays ignored */
        if (sigaction(signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = remove_pending_and_die;
        sigemptyset(&sa.sa_mask);
        sigaction(signals[i], &sa, NULL);
    }
}

static void set_pending(const char *path, const char *replace) {
    for (int i = 0; i < MAX_PENDING; i++)
        if (pending[i] == replace) {
            pending[i] = path;
            return;
        }
}

/* Devices and the process's own descriptors (/dev/stdout, /proc/self/fd/1)
 * are written in place even when they lead to a regular file: renaming
 * over that file would detach it from whoever opened it. */
static bool names_a_device(const char *path) {
    return strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0;
}

static mode_t new_file_mode(void) {
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

bool output_open(OutputFile *o, Arena *a, const char *path) {
    memset(o, 0, sizeof *o);
    o->path = path;
    o->target = path;
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (names_a_device(path) || (exists && !S_ISREG(st.st_mode))) {
        o->stream = fopen(path, "w");
        return o->stream != NULL;
    }
    if (exists) { /* through a symbolic link: replace the file it names */
        char *real = realpath(path, NULL);
        if (real) {
            o->target = arena_strdup(a, real);
            free(real);
        }
    }
    char *temp = arena_printf(a, "%s.cmtc-XXXXXX", o->target);
    install_handlers();
    int fd = mkstemp(temp);
    if (fd < 0) return false;
    /* the mode the file has, or would get from a plain create */
    if (fchmod(fd, exists ? st.st_mode & 07777 : new_file_mode()) != 0 ||
        !(o->stream = fdopen(fd, "w"))) {
        int err = errno;
        close(fd);
        unlink(temp);
        errno = err;
        return false;
    }
    o->temp_path = temp;
    set_pending(temp, NULL);
    return true;
}

bool output_commit(OutputFile *o) {
    if (!o->stream) {
        errno = EBADF;
        return false;
    }
    /* fflush reports a failed write of what is still buffered; ferror
     * one that failed earlier, inside an fwrite or fprintf */
    int err = 0;
    if (fflush(o->stream) != 0)
        err = errno ? errno : EIO;
    else if (ferror(o->stream))
        err = EIO;
    else if (o->temp_path && fsync(fileno(o->stream)) != 0)
        err = errno;
    bool ok = err == 0;
    if (fclose(o->stream) != 0 && ok) {
        ok = false;
        err = errno;
    }
    o->stream = NULL;
    if (ok && o->temp_path && rename(o->temp_path, o->target) != 0) {
        ok = false;
        err = errno;
    }
    if (o->temp_path) {
        if (!ok) unlink(o->temp_path);
        set_pending(NULL, o->temp_path);
    }
    errno = err;
    return ok;
}

void output_discard(OutputFile *o) {
    if (o->stream) fclose(o->stream);
    o->stream = NULL;
    if (o->temp_path) {
        unlink(o->temp_path);
        set_pending(NULL, o->temp_path);
    }
}

const SourceFile *output_names_source(const SourceManager *sm, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return NULL; /* a new file overwrites nothing */
    for (int i = 0; i < sm->count; i++) {
        const SourceFile *f = sm->files[i];
        if (f->identified && f->device == (uint64_t)st.st_dev && f->inode == (uint64_t)st.st_ino)
            return f;
    }
    return NULL;
}
