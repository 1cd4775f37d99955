/* sweep_run.c — the `cmtc sweep` command: options, resuming from the
 * rows an output already holds, the pool of child processes (one a point,
 * -j at once), the progress line, the final ordering of the rows, shards,
 * --merge and --emit-slurm (docs/sweeps.md). */
#include "backend/commands.h"
#include "backend/options.h"
#include "backend/plots.h"
#include "backend/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static volatile sig_atomic_t interrupted;
static void on_interrupt(int sig) {
    (void)sig;
    interrupted = 1;
}

/* ------------------------------------------------------- reading rows */

/* The end of the CSV record starting at p (a line break outside quotes),
 * or NULL when the text ends inside it (an interrupted write). */
static const char *record_end(const char *p, const char *end) {
    bool quoted = false;
    for (; p < end; p++) {
        if (*p == '"') quoted = !quoted;
        if (*p == '\n' && !quoted) return p;
    }
    return NULL;
}

/* The point number a row starts with, -1 when it does not. */
static int64_t row_point(const char *row, SweepFormat format) {
    const char *p = row;
    if (format == SWEEP_JSONL) {
        const char *key = strstr(row, "\"point\":");
        if (!key) return -1;
        p = key + 8;
    }
    if (*p < '0' || *p > '9') return -1;
    int64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (INT64_MAX - 9) / 10) return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

typedef struct Rows {
    const char **text; /* per point: its row, NULL when none */
    int64_t count;     /* rows kept */
    size_t good_len;   /* bytes of the file up to its last whole row */
    bool device;       /* not a regular file: written, never read or reordered */
} Rows;

/* Reads the rows an output already holds for this sweep.  False (after
 * saying why) when the file is another sweep's or not one at all.  A row
 * made from other inputs (its `inputs` column is not `inputs`: the file or
 * a module it uses changed since) is left out and counted in *stale, or,
 * with stale NULL, refused. */
static bool read_rows(Arena *a, SourceManager *sm, const char *path, const IrSweep *sw,
                      SweepFormat format, const char *header, const char *inputs, Rows *rows,
                      bool missing_ok, int64_t *stale) {
    rows->text = ARENA_ARRAY(a, const char *, sw->point_count + 1);
    rows->count = 0;
    rows->good_len = 0;
    /* a device or a pipe holds no rows to resume from (and /dev/zero
     * would never end) */
    struct stat st;
    if (stat(path, &st) != 0) {
        if (missing_ok && errno == ENOENT) return true; /* no output yet */
    } else if (!S_ISREG(st.st_mode)) {
        rows->device = true;
        return true;
    }
    SourceFile *f = sources_load(sm, path);
    if (!f) {
        fprintf(stderr, "cmtc: error: cannot read '%s': %s\n", path, sources_error_text(errno));
        return false;
    }
    const char *text = f->text;
    size_t len = f->len;
    if (len == 0) return true;
    const char *p = text, *end = text + len;
    int line = 1;
    if (format == SWEEP_CSV) {
        const char *eol = record_end(p, end);
        size_t n = eol ? (size_t)(eol - p) : len;
        if (n != strlen(header) || strncmp(p, header, n) != 0) {
            fprintf(stderr,
                    "cmtc: error: %s:1: the header is not this sweep's (other axes or another "
                    "version of cmtc); write to another file or remove it\n",
                    path);
            return false;
        }
        if (!eol) return true; /* the header alone, cut short: rewritten */
        p = eol + 1;
        rows->good_len = (size_t)(p - text);
        line++;
    }
    while (p < end) {
        const char *eol =
            format == SWEEP_CSV ? record_end(p, end) : memchr(p, '\n', (size_t)(end - p));
        if (!eol) break; /* the last row was cut short: it is evaluated again */
        size_t n = (size_t)(eol - p);
        char *row = arena_strndup(a, p, n + 1);
        int64_t point = row_point(row, format);
        if (point < 0 || point >= sw->point_count) {
            fprintf(stderr,
                    "cmtc: error: %s:%d: not a row of this sweep (its points are 0 to %lld)\n",
                    path, line, (long long)sw->point_count - 1);
            return false;
        }
        /* the row's axes must be this point's: the file may be another
         * sweep's with the same columns */
        if (format == SWEEP_CSV) {
            const char *key = sweep_row_key(a, sw, point);
            size_t k = strlen(key);
            if (strncmp(row, key, k) != 0 || row[k] != ',') {
                fprintf(stderr,
                        "cmtc: error: %s:%d: point %lld's axis values are not this sweep's; write "
                        "to another file or remove it\n",
                        path, line, (long long)point);
                return false;
            }
        }
        if (strcmp(sweep_row_inputs(a, row, format), inputs) != 0) {
            if (!stale) {
                fprintf(
                    stderr,
                    "cmtc: error: %s:%d: point %lld was computed from other inputs (the sweep's "
                    "file or a module it uses has changed since)\n",
                    path, line, (long long)point);
                return false;
            }
            /* evaluated again: a later row of the same point replaces it */
            if (rows->text[point]) rows->count--;
            rows->text[point] = NULL;
            (*stale)++;
            p = eol + 1;
            rows->good_len = (size_t)(p - text);
            line++;
            continue;
        }
        if (rows->text[point] && strcmp(rows->text[point], row) != 0) {
            fprintf(stderr,
                    "cmtc: error: %s:%d: point %lld appears twice with different rows; write to "
                    "another file or remove one\n",
                    path, line, (long long)point);
            return false;
        }
        if (!rows->text[point]) rows->count++;
        rows->text[point] = row;
        p = eol + 1;
        rows->good_len = (size_t)(p - text);
        line++;
    }
    /* the rows kept must be rows a plot can read: a value that is no
     * number, or a status that is none, is reported at its line */
    if (format == SWEEP_CSV && rows->count > 0) {
        SweepTable table;
        if (!sweep_table_parse(a, path, text, rows->good_len, &table, stderr)) {
            fprintf(stderr,
                    "cmtc: error: %s holds rows this sweep did not write; write to another "
                    "file or remove it\n",
                    path);
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------ output */

/* Writes every byte; false with errno. */
static bool write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        buf += w;
        n -= (size_t)w;
    }
    return true;
}

/* The rows in point order, header first, to a temporary file renamed over
 * `path`: a finished sweep's output reads in order. */
static bool write_sorted(Arena *a, const char *path, const char *header, const Rows *rows,
                         int64_t points) {
    const char *temp = arena_printf(a, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return false;
    bool ok = !header || (write_all(fd, header, strlen(header)) && write_all(fd, "\n", 1));
    for (int64_t i = 0; ok && i < points; i++)
        if (rows->text[i]) ok = write_all(fd, rows->text[i], strlen(rows->text[i]));
    if (ok && fsync(fd) != 0) ok = false;
    if (close(fd) != 0) ok = false;
    if (ok && rename(temp, path) != 0) ok = false;
    if (!ok) {
        int saved = errno;
        unlink(temp);
        errno = saved;
    }
    return ok;
}

/* ------------------------------------------------------------ the pool */

typedef struct Child {
    pid_t pid;
    int fd;
    int64_t point;
    double started;
    Text out;
    bool killed_for_time;
} Child;

typedef struct Pool {
    Arena *arena;
    Program *p;
    const SourceManager *sm;
    const IrSweep *sw;
    const OptimizeOptions *opts;
    SweepFormat format;
    const char *inputs;  /* sweep_inputs: the last column of every row */
    double hard_limit_s; /* a point's child is killed past it; 0: never */
    int out_fd;          /* appended to as rows finish */
    Rows *rows;
    int64_t done, total; /* this run's points */
    bool progress;
    double started;
    bool write_failed;
} Pool;

static void progress_line(Pool *pool, bool last) {
    if (!pool->progress) return;
    double elapsed = now_s() - pool->started;
    double rate = elapsed > 0 ? (double)pool->done / elapsed : 0;
    double left = rate > 0 ? (double)(pool->total - pool->done) / rate : 0;
    int width = 30;
    int filled =
        pool->total > 0 ? (int)((double)width * (double)pool->done / (double)pool->total) : width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    fprintf(stderr, "\r[%s] %lld/%lld points  %.1f/s  ETA %.0f s ", bar, (long long)pool->done,
            (long long)pool->total, rate, left);
    if (last) fputc('\n', stderr);
    fflush(stderr);
}

static void record_row(Pool *pool, int64_t point, const char *row) {
    if (!pool->rows->text[point]) pool->rows->count++;
    pool->rows->text[point] = row;
    if (!write_all(pool->out_fd, row, strlen(row))) pool->write_failed = true;
    pool->done++;
    progress_line(pool, false);
}

/* A row for a point whose child gave none (sweep.c's layout). */
static const char *failure_row(Pool *pool, int64_t point, const char *status, const char *why) {
    return sweep_failure_row(pool->arena, pool->sw, point, status, why, pool->inputs, pool->format);
}

static bool spawn(Pool *pool, Child *c, int64_t point) {
    int pipefd[2];
    if (pipe(pipefd) != 0) return false;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return false;
    }
    if (pid == 0) {
        close(pipefd[0]);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        const char *row = sweep_evaluate_point(pool->arena, pool->p, pool->sm, pool->sw, point,
                                               pool->opts, pool->inputs, pool->format);
        _exit(write_all(pipefd[1], row, strlen(row)) ? 0 : 1);
    }
    close(pipefd[1]);
    c->pid = pid;
    c->fd = pipefd[0];
    c->point = point;
    c->started = now_s();
    c->out = (Text){pool->arena, NULL, 0, 0};
    c->killed_for_time = false;
    return true;
}

/* Reads what a child wrote; at its end, waits for it and records its row
 * (or why there is none).  True when the child is done. */
static bool drain(Pool *pool, Child *c) {
    char buf[8192];
    ssize_t n = read(c->fd, buf, sizeof buf - 1);
    if (n < 0 && errno == EINTR) return false;
    if (n > 0) {
        buf[n] = '\0';
        text_add(&c->out, "%s", buf);
        return false;
    }
    close(c->fd);
    int status = 0;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {
    }
    bool whole = c->out.len > 0 && c->out.buf[c->out.len - 1] == '\n' && WIFEXITED(status) &&
                 WEXITSTATUS(status) == 0;
    if (whole) {
        record_row(pool, c->point, c->out.buf);
    } else if (c->killed_for_time) {
        record_row(
            pool, c->point,
            failure_row(pool, c->point, "time_limit",
                        arena_printf(pool->arena, "stopped after %.0f s", pool->hard_limit_s)));
    } else if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM) &&
               interrupted) {
        /* interrupted with the rest: evaluated again by a rerun */
    } else {
        const char *why =
            WIFSIGNALED(status)
                ? arena_printf(pool->arena, "the evaluation died of signal %d", WTERMSIG(status))
                : arena_printf(pool->arena, "the evaluation exited with status %d",
                               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        record_row(pool, c->point, failure_row(pool, c->point, "error", why));
    }
    c->pid = 0;
    return true;
}

static void run_pool(Pool *pool, const int64_t *todo, int64_t count, int jobs) {
    Child *kids = ARENA_ARRAY(pool->arena, Child, jobs + 1);
    struct pollfd *fds = ARENA_ARRAY(pool->arena, struct pollfd, jobs + 1);
    int64_t next = 0;
    int running = 0;
    while ((next < count && !interrupted) || running > 0) {
        for (int k = 0; k < jobs && next < count && !interrupted && !pool->write_failed; k++) {
            if (kids[k].pid) continue;
            if (!spawn(pool, &kids[k], todo[next])) {
                record_row(pool, todo[next],
                           failure_row(pool, todo[next], "error",
                                       arena_printf(pool->arena, "could not start a process: %s",
                                                    strerror(errno))));
            } else {
                running++;
            }
            next++;
        }
        if (pool->write_failed) interrupted = 1;
        if (running == 0) continue;
        int n = 0;
        int slot_of[1024];
        for (int k = 0; k < jobs && n < 1024; k++)
            if (kids[k].pid) {
                fds[n] = (struct pollfd){.fd = kids[k].fd, .events = POLLIN};
                slot_of[n++] = k;
            }
        int ready = poll(fds, (nfds_t)n, 200);
        if (ready < 0 && errno != EINTR) break;
        for (int i = 0; i < n && ready > 0; i++)
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                if (drain(pool, &kids[slot_of[i]])) running--;
            }
        double t = now_s();
        for (int k = 0; k < jobs; k++)
            if (kids[k].pid && pool->hard_limit_s > 0 && !kids[k].killed_for_time &&
                t - kids[k].started > pool->hard_limit_s) {
                kids[k].killed_for_time = true;
                kill(kids[k].pid, SIGKILL);
            }
        if (interrupted)
            for (int k = 0; k < jobs; k++)
                if (kids[k].pid) kill(kids[k].pid, SIGTERM);
    }
}

/* ------------------------------------------------------- slurm, merge */

static bool write_text_file(Arena *a, const char *path, const char *text, mode_t mode) {
    const char *temp = arena_printf(a, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0) return false;
    bool ok = write_all(fd, text, strlen(text));
    if (close(fd) != 0) ok = false;
    if (ok && rename(temp, path) != 0) ok = false;
    if (!ok) unlink(temp);
    return ok;
}

/* A shell word: single-quoted. */
static const char *sh_quote(Arena *a, const char *s) {
    Text t = {a, NULL, 0, 0};
    text_add(&t, "'");
    for (const char *p = s; *p; p++) text_add(&t, *p == '\'' ? "'\\''" : "%c", *p);
    text_add(&t, "'");
    return t.buf;
}

static int emit_slurm(Arena *a, const char *dir, const char *file, const char *sweep_name,
                      int shards, const char *extra, SweepFormat format) {
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "cmtc: error: cannot create '%s': %s\n", dir, strerror(errno));
        return EXIT_USAGE;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    const char *cmtc = n > 0 ? (exe[n] = '\0', exe) : "cmtc";
    /* the tasks run where the scripts were written, with the file named as
     * it was, so their rows are a local run's, messages included */
    char cwd[PATH_MAX];
    const char *here = getcwd(cwd, sizeof cwd) ? cwd : ".";
    char real_dir[PATH_MAX];
    const char *abs_dir = realpath(dir, real_dir) ? real_dir : dir;
    const char *ext = format == SWEEP_JSONL ? "jsonl" : "csv";
    const char *array = arena_printf(
        a,
        "#!/bin/sh\n"
        "# Written by cmtc sweep --emit-slurm: sweep `%s` of %s as a Slurm job array of %d\n"
        "# tasks; each evaluates one shard of the points (docs/sweeps.md).  Submit with\n"
        "#   sh %s/submit.sh\n"
        "#SBATCH --job-name=cmtc-%s\n"
        "#SBATCH --array=1-%d\n"
        "#SBATCH --output=%s/shard_%%a.log\n"
        "#SBATCH --cpus-per-task=1\n"
        "set -eu\n"
        "cd %s\n"
        "exec %s sweep %s -s %s%s --shard \"$SLURM_ARRAY_TASK_ID/%d\" -j 1 \\\n"
        "  --format %s -o %s/part_\"$SLURM_ARRAY_TASK_ID\".%s\n",
        sweep_name, file, shards, abs_dir, sweep_name, shards, abs_dir, sh_quote(a, here),
        sh_quote(a, cmtc), sh_quote(a, file), sweep_name, extra, shards, ext, abs_dir, ext);
    Text parts = {a, NULL, 0, 0};
    for (int i = 1; i <= shards; i++) text_add(&parts, " %s/part_%d.%s", abs_dir, i, ext);
    const char *merge = arena_printf(
        a,
        "#!/bin/sh\n"
        "# Joins the shards' rows into %s/%s.%s once every task has finished.\n"
        "#SBATCH --job-name=cmtc-%s-merge\n"
        "#SBATCH --output=%s/merge.log\n"
        "set -eu\n"
        "cd %s\n"
        "exec %s sweep %s -s %s%s --format %s --merge -o %s/%s.%s%s\n",
        abs_dir, sweep_name, ext, sweep_name, abs_dir, sh_quote(a, here), sh_quote(a, cmtc),
        sh_quote(a, file), sweep_name, extra, ext, abs_dir, sweep_name, ext, parts.buf);
    const char *submit =
        arena_printf(a,
                     "#!/bin/sh\n"
                     "# Submits the array, then the merge to run after every task succeeded.\n"
                     "set -eu\n"
                     "cd %s\n"
                     "job=$(sbatch --parsable array.sbatch)\n"
                     "sbatch --dependency=afterok:\"${job%%%%;*}\" merge.sbatch\n",
                     abs_dir);
    const char *names[] = {"array.sbatch", "merge.sbatch", "submit.sh"};
    const char *texts[] = {array, merge, submit};
    for (int k = 0; k < 3; k++) {
        const char *path = arena_printf(a, "%s/%s", dir, names[k]);
        if (!write_text_file(a, path, texts[k], 0755)) {
            fprintf(stderr, "cmtc: error: cannot write '%s': %s\n", path, strerror(errno));
            return EXIT_USAGE;
        }
    }
    printf("%s/array.sbatch: %d tasks; %s/merge.sbatch joins them into %s/%s.%s; submit with sh "
           "%s/submit.sh\n",
           dir, shards, dir, dir, sweep_name, ext, dir);
    return EXIT_OK;
}

static int merge_parts(Arena *a, SourceManager *sm, const IrSweep *sw, SweepFormat format,
                       const char *header, const char *out, char **parts, int part_count) {
    Rows all = {ARENA_ARRAY(a, const char *, sw->point_count + 1), 0, 0, false};
    const char *inputs = sweep_inputs(a, sm); /* before the parts join sm */
    for (int k = 0; k < part_count; k++) {
        Rows one;
        if (!read_rows(a, sm, parts[k], sw, format, header, inputs, &one, false, NULL))
            return EXIT_USAGE;
        for (int64_t i = 0; i < sw->point_count; i++) {
            if (!one.text[i]) continue;
            if (all.text[i] && strcmp(all.text[i], one.text[i]) != 0) {
                fprintf(stderr,
                        "cmtc: error: point %lld is in two parts with different rows (%s "
                        "and an earlier one)\n",
                        (long long)i, parts[k]);
                return EXIT_USAGE;
            }
            if (!all.text[i]) all.count++;
            all.text[i] = one.text[i];
        }
    }
    if (!write_sorted(a, out, header, &all, sw->point_count)) {
        fprintf(stderr, "cmtc: error: cannot write '%s': %s\n", out, strerror(errno));
        return EXIT_USAGE;
    }
    if (all.count < sw->point_count) {
        fprintf(stderr, "cmtc: warning: %s has %lld of %lld points; the rest are in no part\n", out,
                (long long)all.count, (long long)sw->point_count);
        return EXIT_DIAGNOSTICS;
    }
    fprintf(stderr, "cmtc: %s: %lld points from %d parts\n", out, (long long)all.count, part_count);
    return EXIT_OK;
}

/* ------------------------------------------------------------ command */

/* --plots DIR: drawn from the CSV just written. */
static int draw_plots(const char *csv, const char *dir, SweepFormat format) {
    if (!csv || format != SWEEP_CSV) {
        fprintf(stderr, "cmtc: error: --plots draws from a CSV file: give -o OUT.csv\n");
        return EXIT_USAGE;
    }
    return sweep_plots(csv, dir, stderr) ? EXIT_OK : EXIT_USAGE;
}

static bool parse_shard(const char *v, int *index, int *count) {
    char *end;
    long i = strtol(v, &end, 10);
    if (end == v || *end != '/') return false;
    long n = strtol(end + 1, &end, 10);
    if (*end || n < 1 || n > 1000000 || i < 1 || i > n) return false;
    *index = (int)i;
    *count = (int)n;
    return true;
}

int cmd_sweep(int argc, char **argv) {
    CommonOptions common;
    common_init(&common);
    OptimizeOptions opts;
    memset(&opts, 0, sizeof opts);
    const char *file = NULL, *only = NULL, *out_path = NULL, *slurm_dir = NULL, *plots_dir = NULL;
    SweepFormat format = SWEEP_CSV;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    int shard = 1, shards = 1;
    bool bad = false, merge = false, shard_given = false;
    const char *sets[64];
    int set_count = 0;
    char **parts = ARENA_ARRAY(process_arena(), char *, argc + 1);
    int part_count = 0;
    Text extra = {process_arena(), NULL, 0, 0}; /* options a Slurm task repeats */
    text_add(&extra, "%s", "");
    const CommandSpec *spec = command_find("sweep");
    OptionParser op;
    options_init(&op, spec, argc, argv);
    for (int id; !bad && (id = options_next(&op)) != OPT_DONE;) {
        const char *v = op.value;
        switch (id) {
        case OPT_POSITIONAL:
            if (!file)
                file = v;
            else
                parts[part_count++] = (char *)v;
            break;
        case OPT_HELP: options_help(stdout, spec); return EXIT_OK;
        case OPT_BAD: bad = true; break;
        case OPT_INCLUDE:
        case OPT_DIAG_FORMAT:
        case OPT_DIAG_OUTPUT:
            bad = !common_apply(&common, id, v);
            if (id == OPT_INCLUDE) text_add(&extra, " -I %s", sh_quote(process_arena(), v));
            break;
        case SW_SWEEP: only = v; break;
        case SW_OUTPUT: out_path = v; break;
        case SW_FORMAT:
            if (strcmp(v, "csv") == 0)
                format = SWEEP_CSV;
            else if (strcmp(v, "jsonl") == 0)
                format = SWEEP_JSONL;
            else {
                fprintf(stderr, "cmtc: error: --format takes csv or jsonl, got '%s'\n", v);
                bad = true;
            }
            break;
        case SW_JOBS: {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 1024) {
                fprintf(stderr,
                        "cmtc: error: -j takes a number of processes from 1 to 1024, got "
                        "'%s'\n",
                        v);
                bad = true;
            }
            jobs = n;
            break;
        }
        case SW_SHARD:
            shard_given = true;
            if (!parse_shard(v, &shard, &shards)) {
                fprintf(stderr,
                        "cmtc: error: --shard takes I/N with 1 <= I <= N (the I-th of N parts), "
                        "got '%s'\n",
                        v);
                bad = true;
            }
            break;
        case SW_SET:
            if (set_count == 64) {
                fprintf(stderr, "cmtc: error: --set may be given at most 64 times\n");
                bad = true;
                break;
            }
            sets[set_count++] = v;
            text_add(&extra, " --set %s", sh_quote(process_arena(), v));
            break;
        case SW_EMIT_SLURM: slurm_dir = v; break;
        case SW_PLOTS: plots_dir = v; break;
        case SW_MERGE: merge = true; break;
        case SW_OBJECTIVE:
            opts.objective_given = true;
            text_add(&extra, " --objective %s", sh_quote(process_arena(), v));
            if (!objective_of_name(v, &opts.objective)) {
                fprintf(stderr, "cmtc: error: --objective takes latency, energy or edp, got '%s'\n",
                        v);
                bad = true;
            }
            break;
        case SW_TIME_LIMIT:
            text_add(&extra, " --time-limit %s", sh_quote(process_arena(), v));
            if (!parse_time_limit(v, &opts.time_limit_s)) {
                fprintf(stderr,
                        "cmtc: error: --time-limit takes a number of seconds above 0, got '%s'\n",
                        v);
                bad = true;
            }
            break;
        }
    }
    if (!bad && !file) {
        fprintf(stderr, "cmtc: error: sweep needs a file\n");
        bad = true;
    }
    if (!bad && part_count > 0 && !merge) {
        fprintf(stderr,
                "cmtc: error: sweep takes one file, got '%s' and '%s' (--merge joins "
                "parts)\n",
                file, parts[0]);
        bad = true;
    }
    if (!bad && merge && (!out_path || strcmp(out_path, "-") == 0 || part_count == 0)) {
        fprintf(stderr, "cmtc: error: --merge needs -o OUT and the parts to join\n");
        bad = true;
    }
    if (!bad && slurm_dir && (merge || shard_given)) {
        fprintf(stderr, "cmtc: error: --emit-slurm writes the shards' commands itself; give it "
                        "without --merge or --shard\n");
        bad = true;
    }
    if (bad) {
        options_usage_hint(stderr, spec);
        return EXIT_USAGE;
    }

    Arena *arena = ARENA_NEW(process_arena(), Arena);
    SourceManager sm;
    DiagSink diags;
    sources_init(&sm, arena);
    diags_init(&diags, arena);
    SourceFile *root = load_root(&sm, file);
    if (!root) return EXIT_USAGE;
    CheckOptions chk;
    common_check_options(&common, &chk);
    chk.sweep_sets = sets;
    chk.sweep_set_count = set_count;
    Program *p = check_program(arena, &sm, &diags, root, &chk);
    if (!p || diags.error_count > 0) {
        common_print_diags(&common, &sm, &diags);
        arena_free_all(arena);
        return EXIT_DIAGNOSTICS;
    }
    common_print_diags(&common, &sm, &diags); /* warnings */
    const IrSweep *sw = NULL;
    for (int i = 0; i < p->sweep_count; i++)
        if (!only || strcmp(p->sweeps[i]->name, only) == 0) {
            if (sw && !only) {
                fprintf(stderr,
                        "cmtc: error: %s has several sweeps (%s, %s, ...): name one with -s\n",
                        file, sw->name, p->sweeps[i]->name);
                arena_free_all(arena);
                return EXIT_USAGE;
            }
            sw = p->sweeps[i];
        }
    if (!sw) {
        if (only)
            fprintf(stderr, "cmtc: error: no sweep '%s' in %s\n", only, file);
        else
            fprintf(stderr, "cmtc: error: %s declares no sweep (docs/sweeps.md)\n", file);
        arena_free_all(arena);
        return EXIT_USAGE;
    }
    const char *header = sweep_header(arena, sw, format);
    if (slurm_dir) {
        int status = emit_slurm(arena, slurm_dir, file, sw->name, shards > 1 ? shards : (int)jobs,
                                extra.buf, format);
        arena_free_all(arena);
        return status;
    }
    if (merge && output_names_source(&sm, out_path)) {
        fprintf(stderr, "cmtc: error: -o '%s' is an input file; refusing to overwrite it\n",
                out_path);
        arena_free_all(arena);
        return EXIT_USAGE;
    }
    if (merge) {
        int status = merge_parts(arena, &sm, sw, format, header, out_path, parts, part_count);
        if (status == EXIT_OK && plots_dir) status = draw_plots(out_path, plots_dir, format);
        arena_free_all(arena);
        return status;
    }
    bool to_stdout = !out_path || strcmp(out_path, "-") == 0;
    if (!to_stdout && output_names_source(&sm, out_path)) {
        fprintf(stderr, "cmtc: error: -o '%s' is an input file; refusing to overwrite it\n",
                out_path);
        arena_free_all(arena);
        return EXIT_USAGE;
    }
    /* the points of this shard that the output does not hold yet */
    Rows rows = {ARENA_ARRAY(arena, const char *, sw->point_count + 1), 0, 0, false};
    const char *inputs = sweep_inputs(arena, &sm);
    int64_t stale = 0;
    if (!to_stdout &&
        !read_rows(arena, &sm, out_path, sw, format, header, inputs, &rows, true, &stale)) {
        arena_free_all(arena);
        return EXIT_USAGE;
    }
    if (stale > 0)
        fprintf(stderr,
                "cmtc: note: %s holds %lld rows computed from other inputs (the sweep's file or a "
                "module it uses has changed since): they are evaluated again\n",
                out_path, (long long)stale);
    int64_t mine = 0;
    for (int64_t i = shard - 1; i < sw->point_count; i += shards) mine++;
    int64_t *todo = ARENA_ARRAY(arena, int64_t, mine + 1);
    int64_t count = 0, already = 0;
    for (int64_t i = shard - 1; i < sw->point_count; i += shards) {
        if (rows.text[i])
            already++;
        else
            todo[count++] = i;
    }
    int out_fd = STDOUT_FILENO;
    if (!to_stdout) {
        out_fd = open(out_path, O_WRONLY | O_CREAT, 0644);
        /* drop a row cut short by an interruption; keep every whole one */
        if (out_fd < 0 || (!rows.device && (ftruncate(out_fd, (off_t)rows.good_len) != 0 ||
                                            lseek(out_fd, 0, SEEK_END) < 0))) {
            fprintf(stderr, "cmtc: error: cannot write '%s': %s\n", out_path, strerror(errno));
            if (out_fd >= 0) close(out_fd);
            arena_free_all(arena);
            return EXIT_USAGE;
        }
    }
    if (header && (to_stdout || rows.device || rows.good_len == 0) &&
        (!write_all(out_fd, header, strlen(header)) || !write_all(out_fd, "\n", 1))) {
        fprintf(stderr, "cmtc: error: cannot write '%s': %s\n",
                to_stdout ? "standard output" : out_path, strerror(errno));
        arena_free_all(arena);
        return EXIT_USAGE;
    }
    if (already > 0)
        fprintf(stderr,
                "cmtc: %s holds %lld of the %lld points already; evaluating the other %lld\n",
                out_path, (long long)already, (long long)mine, (long long)count);
    Pool pool = {.arena = arena,
                 .p = p,
                 .sm = &sm,
                 .sw = sw,
                 .opts = &opts,
                 .format = format,
                 .inputs = inputs,
                 .hard_limit_s = opts.time_limit_s > 0 ? 2 * opts.time_limit_s + 10 : 0,
                 .out_fd = out_fd,
                 .rows = &rows,
                 .total = count,
                 .progress = isatty(STDERR_FILENO) && !to_stdout,
                 .started = now_s()};
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    run_pool(&pool, todo, count, (int)(jobs < count ? jobs : (count > 0 ? count : 1)));
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    progress_line(&pool, true);
    int status = EXIT_OK;
    if (pool.write_failed) {
        fprintf(stderr, "cmtc: error: cannot write '%s': %s; the rows written so far are kept\n",
                to_stdout ? "standard output" : out_path, strerror(errno));
        status = EXIT_USAGE;
    }
    if (!to_stdout && close(out_fd) != 0 && status == EXIT_OK) {
        fprintf(stderr, "cmtc: error: cannot write '%s': %s\n", out_path, strerror(errno));
        status = EXIT_USAGE;
    }
    if (interrupted) {
        fprintf(stderr,
                "cmtc: interrupted: %lld of %lld points written to %s; run the same command again "
                "to evaluate the rest\n",
                (long long)(already + pool.done), (long long)mine,
                to_stdout ? "standard output" : out_path);
        arena_free_all(arena);
        return status == EXIT_OK ? 130 : status;
    }
    /* finished: the rows in point order */
    if (!to_stdout && !rows.device && status == EXIT_OK &&
        !write_sorted(arena, out_path, header, &rows, sw->point_count)) {
        fprintf(stderr,
                "cmtc: error: cannot reorder '%s': %s; its rows are whole, in the order "
                "they finished\n",
                out_path, strerror(errno));
        status = EXIT_USAGE;
    }
    int64_t failed = 0;
    for (int64_t i = shard - 1; i < sw->point_count; i += shards)
        if (rows.text[i] && !sweep_row_ok(sw, rows.text[i], format)) failed++;
    if (failed > 0)
        fprintf(stderr, "cmtc: note: %lld of %lld points did not evaluate (status other than ok)\n",
                (long long)failed, (long long)mine);
    if (status == EXIT_OK && plots_dir)
        status = draw_plots(to_stdout ? NULL : out_path, plots_dir, format);
    arena_free_all(arena);
    return status;
}
