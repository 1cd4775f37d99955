/* lsp_worker.c — the language server's optimizer, off the request path.
 *
 * Inlay hints (and the cost hover shows of a mapping with holes) need the
 * optimizer, which may take seconds.  The server never waits for it: a
 * request takes what is cached and hands the rest to a worker.
 *
 * The worker is a process of its own, `cmtc lsp --worker` (the server's
 * own executable, spawned with the server's -I options), one mapping at a
 * time.  For each mapping the server writes it a snapshot of the
 * document: the text of every file the document's check read (the
 * document, the files it uses, unsaved editor buffers included), and the
 * key of the mapping.  The worker checks that snapshot in its own arena,
 * finds the mapping with that key, runs the optimizer on it (which fills
 * the holes of its copy in place), and writes its answer (JSON,
 * lsp_optimize_answer) as one line on standard output, then waits for the
 * next snapshot.  It shares no memory with the server: nothing the server
 * frees or changes can reach it, no lock is needed, and stopping it is a
 * kill (a new worker is spawned for the next mapping).  It lives on
 * between mappings because spawning one held the server up for 3 ms on
 * average (12 ms at worst on a busy machine) each time.
 * (A forked copy of the server would avoid the re-check, but then every
 * page the server writes after the fork is copied: measured, that made
 * each check of a 2 000-line document five times slower while a worker
 * lived.)
 *
 * Work is queued by key (LspKey: the code that determines the answer) and
 * by document; it is started against the document's version current at
 * that moment, and dropped, or the worker killed, when a new version no
 * longer has that key.  A key must have survived DEBOUNCE_S of typing
 * before a worker starts for it, so that a keystroke that changes a
 * mapping does not start (and the next one kill) a worker each time.
 * Answers are cached by key for the life of the server (at most
 * ANSWERS_MAX, the least recently used dropped first), so an edit in a
 * comment or in another mapping finds them again.
 *
 * Memory: jobs, answers and the bytes to and from a worker are malloc'd:
 * each has its own lifetime, unrelated to any document version (like the
 * reader's buffer, this is I/O state, not part of a document). */
#include "backend/lsp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ANSWERS_MAX 512
#define DEBOUNCE_S 0.1
#define SNAPSHOT_MAGIC "cmtc-lsp-worker 1\n"

typedef struct Job {
    struct Job *next;
    LspKey key;
    char *uri;
    double wanted_at; /* when first asked for */
    bool running;     /* the worker has it */
    char *req;        /* the snapshot still to write */
    size_t req_len, req_off;
    char *out; /* the answer so far */
    size_t len, cap;
    double deadline; /* the worker is killed past it */
} Job;

typedef struct Answer {
    LspKey key;
    json_t *json;
    uint64_t used;
} Answer;

struct LspWork {
    Job *jobs; /* in order; the running one, if any, is the first */
    pid_t pid; /* the worker, 0 when none */
    int in_fd, out_fd;
    Answer *answers;
    int answer_count;
    uint64_t tick;
    /* the mapping whose worker died last: a second death on it is kept
     * as its answer, so that a client asking again on every refresh does
     * not spawn workers without end */
    LspKey died;
    bool has_died;
    char exe[PATH_MAX]; /* this program, to spawn workers of */
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool same_key(LspKey x, LspKey y) {
    return x.a == y.a && x.b == y.b;
}

void lsp_work_init(LspServer *s) {
    LspWork *w = calloc(1, sizeof *w);
    if (!w) {
        fprintf(stderr, "cmtc lsp: out of memory\n");
        exit(EXIT_USAGE);
    }
    /* the path now: an exec of /proc/self/exe itself would start whatever
     * runs this process (valgrind, say), not this program */
    ssize_t n = readlink("/proc/self/exe", w->exe, sizeof w->exe - 1);
    w->exe[n > 0 ? n : 0] = '\0';
    w->in_fd = w->out_fd = -1;
    s->work = w;
}

/* ------------------------------------------------------------ answers */

json_t *lsp_work_answer(LspServer *s, LspKey key) {
    LspWork *w = s->work;
    for (int i = 0; w && i < w->answer_count; i++)
        if (same_key(w->answers[i].key, key)) {
            w->answers[i].used = ++w->tick;
            return w->answers[i].json;
        }
    return NULL;
}

/* Stores an answer (taking the reference to json). */
static void answer_put(LspWork *w, LspKey key, json_t *json) {
    for (int i = 0; i < w->answer_count; i++)
        if (same_key(w->answers[i].key, key)) {
            json_decref(w->answers[i].json);
            w->answers[i].json = json;
            w->answers[i].used = ++w->tick;
            return;
        }
    if (!w->answers) {
        w->answers = calloc(ANSWERS_MAX, sizeof *w->answers);
        if (!w->answers) {
            json_decref(json);
            return;
        }
    }
    int at = w->answer_count;
    if (at == ANSWERS_MAX) { /* replace the least recently used */
        at = 0;
        for (int i = 1; i < ANSWERS_MAX; i++)
            if (w->answers[i].used < w->answers[at].used) at = i;
        json_decref(w->answers[at].json);
    } else {
        w->answer_count++;
    }
    w->answers[at] = (Answer){key, json, ++w->tick};
}

static json_t *failure(const char *status) {
    return json_pack("{s:b,s:s}", "ok", 0, "status", status);
}

/* ------------------------------------------------------------ snapshots */

static void buf_printf(LspBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(LspBuf *b, const char *fmt, ...) {
    char line[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0) lsp_buf_add(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* What a worker reads: the key, the document's uri, then every file its
 * check read (the document first), each as a header line with the byte
 * lengths followed by the raw bytes (any bytes: no escaping). */
static char *snapshot(const LspDoc *d, LspKey key, size_t *len) {
    LspBuf b = {0};
    lsp_buf_add(&b, SNAPSHOT_MAGIC, strlen(SNAPSHOT_MAGIC));
    buf_printf(&b, "key %016llx %016llx\n", (unsigned long long)key.a, (unsigned long long)key.b);
    buf_printf(&b, "uri %zu\n", strlen(d->uri));
    lsp_buf_add(&b, d->uri, strlen(d->uri));
    for (int i = 0; i < d->sm.count; i++) {
        const SourceFile *f = d->sm.files[i];
        if (!f || !f->path) continue;
        buf_printf(&b, "\nfile %zu %zu\n", strlen(f->path), f->len);
        lsp_buf_add(&b, f->path, strlen(f->path));
        lsp_buf_add(&b, f->text, f->len);
    }
    lsp_buf_add(&b, "\nend\n", 5);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}

/* --------------------------------------------------------------- jobs */

static void job_free(Job *j) {
    free(j->uri);
    free(j->req);
    free(j->out);
    free(j);
}

static void job_unlink(LspWork *w, Job *j) {
    for (Job **p = &w->jobs; *p; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            return;
        }
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* Ends the worker at once (its answer is no longer wanted, or it broke). */
static void worker_kill(LspWork *w) {
    if (w->pid > 0) {
        kill(w->pid, SIGKILL);
        while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR) {
        }
        w->pid = 0;
    }
    close_fd(&w->in_fd);
    close_fd(&w->out_fd);
}

bool lsp_work_busy(LspServer *s, const char *uri) {
    for (Job *j = s->work ? s->work->jobs : NULL; j; j = j->next)
        if (!uri || strcmp(j->uri, uri) == 0) return true;
    return false;
}

static LspDoc *open_doc(LspServer *s, const char *uri) {
    for (LspDoc *d = s->docs; d; d = d->next)
        if (d->open && strcmp(d->uri, uri) == 0) return d;
    return NULL;
}

static bool set_flags(int fd, int fd_flags, int fl_flags) {
    int f = fcntl(fd, F_GETFD);
    int g = fcntl(fd, F_GETFL);
    return f >= 0 && g >= 0 && fcntl(fd, F_SETFD, f | fd_flags) == 0 &&
           fcntl(fd, F_SETFL, g | fl_flags) == 0;
}

/* Spawns `cmtc lsp --worker -I ...` unless one is alive. */
static bool worker_start(LspServer *s) {
    LspWork *w = s->work;
    if (w->pid > 0) {
        pid_t r;
        while ((r = waitpid(w->pid, NULL, WNOHANG)) < 0 && errno == EINTR) {
        }
        if (r == 0) return true; /* alive and idle */
        /* it ended while idle: reaped, replaced */
        w->pid = 0;
        close_fd(&w->in_fd);
        close_fd(&w->out_fd);
    }
    if (!w->exe[0]) {
        errno = ENOENT;
        return false;
    }
    char *argv[4 + 2 * 64 + 1];
    int n = 0;
    argv[n++] = w->exe;
    argv[n++] = "lsp";
    argv[n++] = "--worker";
    for (int i = 0; i < s->common.include_count && i < 64; i++) {
        argv[n++] = "-I";
        argv[n++] = (char *)s->common.include_dirs[i];
    }
    argv[n] = NULL;
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    int err = 0;
    /* the server's ends are close-on-exec (a worker spawned later does not
     * inherit them) and the snapshot's is non-blocking (a slow worker
     * never holds up the server) */
    if (pipe(in) != 0 || pipe(out) != 0 || !set_flags(in[1], FD_CLOEXEC, O_NONBLOCK) ||
        !set_flags(out[0], FD_CLOEXEC, 0)) {
        err = errno;
    } else {
        posix_spawn_file_actions_t fa;
        err = posix_spawn_file_actions_init(&fa);
        if (err == 0) {
            posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
            posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
            err = posix_spawn(&w->pid, w->exe, &fa, NULL, argv, environ);
            posix_spawn_file_actions_destroy(&fa);
        }
    }
    close_fd(&in[0]);
    close_fd(&out[1]);
    if (err != 0) {
        w->pid = 0;
        close_fd(&in[1]);
        close_fd(&out[0]);
        errno = err;
        return false;
    }
    w->in_fd = in[1];
    w->out_fd = out[0];
    return true;
}

/* Hands the first queued job to the worker unless it is busy or the job
 * is too new; jobs whose mapping the document no longer has are dropped. */
static void start_next(LspServer *s) {
    LspWork *w = s->work;
    while (w->jobs && !w->jobs->running) {
        Job *j = w->jobs;
        if (now_s() < j->wanted_at + DEBOUNCE_S) return;
        LspDoc *d = open_doc(s, j->uri);
        if (!d || !lsp_mapping_by_key(d, j->key)) {
            w->jobs = j->next;
            job_free(j);
            continue;
        }
        j->req = snapshot(d, j->key, &j->req_len);
        if (!j->req || !worker_start(s)) {
            fprintf(stderr, "cmtc lsp: cannot start the optimizer's worker: %s\n",
                    strerror(j->req ? errno : ENOMEM));
            answer_put(w, j->key, failure("no worker"));
            w->jobs = j->next;
            job_free(j);
            continue;
        }
        j->running = true;
        /* the optimizer keeps its own time limit; this is the backstop
         * for a search that overruns it */
        const char *delay = getenv("CMT_LSP_WORKER_DELAY");
        double extra = 0;
        if (delay && !parse_time_limit(delay, &extra)) extra = 0;
        j->deadline = now_s() + extra + 2 * lsp_optimize_budget_s() + 10;
        return;
    }
}

void lsp_work_want(LspServer *s, LspDoc *d, LspKey key) {
    LspWork *w = s->work;
    if (lsp_work_answer(s, key)) return;
    Job **tail = &w->jobs;
    for (; *tail; tail = &(*tail)->next)
        if (same_key((*tail)->key, key)) return;
    Job *j = calloc(1, sizeof *j);
    char *uri = strdup(d->uri);
    if (!j || !uri) {
        free(j);
        free(uri);
        return;
    }
    j->key = key;
    j->uri = uri;
    j->wanted_at = now_s();
    *tail = j;
    start_next(s);
}

void lsp_work_doc_changed(LspServer *s, LspDoc *d) {
    LspWork *w = s->work;
    const LspKey *keys = NULL;
    int n = -1;
    for (Job *j = w->jobs, *next; j; j = next) {
        next = j->next;
        if (strcmp(j->uri, d->uri) != 0) continue;
        if (d->open && n < 0) n = lsp_wanted_keys(d, &keys);
        bool still = false;
        for (int i = 0; i < n && !still; i++) still = same_key(keys[i], j->key);
        if (still) continue;
        if (j->running) worker_kill(w);
        job_unlink(w, j);
        job_free(j);
    }
    start_next(s);
}

/* The running worker finished, failed or overran: its answer is stored
 * (a failure too, so that it is not asked again for the same code). */
/* Forgets the answer under key: a worker that died gave no answer to
 * keep, and the next request for that mapping asks a new worker. */
static void answer_drop(LspWork *w, LspKey key) {
    for (int i = 0; i < w->answer_count; i++)
        if (same_key(w->answers[i].key, key)) {
            json_decref(w->answers[i].json);
            w->answers[i] = w->answers[--w->answer_count];
            return;
        }
}

static void job_done_as(LspServer *s, Job *j, json_t *ans, bool keep) {
    LspWork *w = s->work;
    LspKey key = j->key;
    answer_put(w, key, ans);
    job_unlink(w, j);
    char *uri = j->uri;
    j->uri = NULL;
    job_free(j);
    start_next(s);
    lsp_answer_arrived(s, uri); /* the waiting requests get it */
    free(uri);
    if (keep) return;
    if (w->has_died && same_key(w->died, key)) return; /* twice: keep it */
    w->died = key;
    w->has_died = true;
    answer_drop(w, key);
}

static void job_done(LspServer *s, Job *j, json_t *ans) {
    job_done_as(s, j, ans, true);
}

static void job_write(LspWork *w, Job *j) {
    ssize_t k = write(w->in_fd, j->req + j->req_off, j->req_len - j->req_off);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (k > 0) j->req_off += (size_t)k;
    if (k <= 0 || j->req_off == j->req_len) { /* all written, or the worker is gone */
        free(j->req);
        j->req = NULL;
    }
}

/* Reads what the worker wrote; true when the job is done (and freed). */
static bool job_read(LspServer *s, Job *j) {
    LspWork *w = s->work;
    if (j->len == j->cap) {
        size_t cap = j->cap ? 2 * j->cap : 16384;
        char *nb = realloc(j->out, cap);
        if (!nb) {
            worker_kill(w);
            job_done_as(s, j, failure("worker failed"), false);
            return true;
        }
        j->out = nb;
        j->cap = cap;
    }
    ssize_t got = read(w->out_fd, j->out + j->len, j->cap - j->len);
    if (got < 0 && errno == EINTR) return false;
    json_t *ans = NULL;
    if (got > 0) {
        j->len += (size_t)got;
        /* an answer is one line (compact JSON has no raw line break) */
        if (j->out[j->len - 1] != '\n') return false;
        ans = json_loadb(j->out, j->len - 1, 0, NULL);
        if (!json_is_object(ans)) {
            json_decref(ans);
            ans = NULL;
            worker_kill(w); /* out of step: start afresh */
        }
    } else { /* the worker is gone */
        int status = 0;
        close_fd(&w->in_fd);
        close_fd(&w->out_fd);
        while (w->pid > 0 && waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {
        }
        w->pid = 0;
        fprintf(stderr, "cmtc lsp: the optimizer's worker failed (status %d)\n", status);
    }
    job_done_as(s, j, ans ? ans : failure("worker failed"), ans != NULL);
    return true;
}

bool lsp_work_step(LspServer *s, int fd) {
    LspWork *w = s->work;
    for (;;) {
        start_next(s); /* a job whose debounce has passed */
        Job *head = w->jobs;
        Job *run = head && head->running ? head : NULL;
        struct pollfd p[3];
        int n = 0, in_i = -1, out_i = -1, req_i = -1;
        if (fd >= 0) {
            p[n] = (struct pollfd){.fd = fd, .events = POLLIN};
            in_i = n++;
        }
        if (run) {
            p[n] = (struct pollfd){.fd = w->out_fd, .events = POLLIN};
            out_i = n++;
            if (run->req) {
                p[n] = (struct pollfd){.fd = w->in_fd, .events = POLLOUT};
                req_i = n++;
            }
        }
        double until = run ? run->deadline : head ? head->wanted_at + DEBOUNCE_S : 0;
        if (n == 0 && !head) return false;
        int timeout = -1;
        if (head) {
            double left = until - now_s();
            timeout = left <= 0 ? 0 : left > 3600 ? 3600000 : (int)(left * 1000) + 1;
        }
        int r = poll(p, (nfds_t)n, timeout);
        if (r < 0) {
            if (errno == EINTR) continue;
            return fd >= 0;
        }
        bool event = false;
        if (req_i >= 0 && p[req_i].revents) job_write(w, run);
        if (out_i >= 0 && p[out_i].revents) {
            event = job_read(s, run);
        } else if (run && now_s() > run->deadline) {
            fprintf(stderr, "cmtc lsp: the optimizer overran its time limit; stopped\n");
            worker_kill(w);
            job_done(s, run, failure("time_limit"));
            event = true;
        }
        if (in_i >= 0 && p[in_i].revents) return true;
        if (fd < 0 && event) return false;
    }
}

/* Ends an idle worker the gentle way: the end of its input lets it free
 * what it holds and exit (so that a leak checker sees it exit), within a
 * second, else it is killed. */
static void worker_end(LspWork *w) {
    close_fd(&w->in_fd);
    for (int i = 0; w->pid > 0 && i < 1000; i++) {
        int status = 0;
        pid_t r = waitpid(w->pid, &status, WNOHANG);
        if (r == w->pid) {
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fprintf(stderr, "cmtc lsp: the optimizer's worker ended with status %d\n", status);
            w->pid = 0;
            break;
        }
        if (r < 0 && errno != EINTR) break;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    worker_kill(w);
}

void lsp_work_stop(LspServer *s) {
    LspWork *w = s->work;
    if (!w) return;
    if (w->jobs && w->jobs->running)
        worker_kill(w);
    else
        worker_end(w);
    while (w->jobs) {
        Job *j = w->jobs;
        w->jobs = j->next;
        job_free(j);
    }
}

void lsp_work_free(LspServer *s) {
    LspWork *w = s->work;
    if (!w) return;
    lsp_work_stop(s);
    for (int i = 0; i < w->answer_count; i++) json_decref(w->answers[i].json);
    free(w->answers);
    free(w);
    s->work = NULL;
}

/* ========================================================== the worker */

typedef struct SnapFile {
    const char *path; /* normalised */
    const char *text;
    size_t len;
} SnapFile;

typedef struct Snapshot {
    SnapFile *files;
    int count;
} Snapshot;

/* The check's reads: from the snapshot, by normalised path; a file it
 * lacks is read from disk (as the server's check would have). */
static const char *snapshot_file(void *ctx, const char *path, size_t *len) {
    const Snapshot *sn = ctx;
    Arena scratch = {0};
    const char *norm = lsp_normalize_path(&scratch, path);
    const char *text = NULL;
    for (int i = 0; i < sn->count && !text; i++)
        if (strcmp(sn->files[i].path, norm) == 0) {
            text = sn->files[i].text;
            *len = sn->files[i].len;
        }
    arena_free_all(&scratch);
    return text;
}

/* Standard input, buffered: snapshots one after another. */
typedef struct In {
    char buf[65536];
    size_t start, end;
    bool eof;
} In;

static bool in_fill(In *in) {
    if (in->eof) return false;
    if (in->start > 0) {
        memmove(in->buf, in->buf + in->start, in->end - in->start);
        in->end -= in->start;
        in->start = 0;
    }
    for (;;) {
        ssize_t k = read(STDIN_FILENO, in->buf + in->end, sizeof in->buf - in->end);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            in->eof = true;
            return false;
        }
        in->end += (size_t)k;
        return true;
    }
}

/* The next line (without its line break) into line[0, size); false at the
 * end of input or for a line longer than size - 1. */
static bool in_line(In *in, char *line, size_t size) {
    for (;;) {
        char *nl = memchr(in->buf + in->start, '\n', in->end - in->start);
        if (nl) {
            size_t n = (size_t)(nl - (in->buf + in->start));
            if (n >= size) return false;
            memcpy(line, in->buf + in->start, n);
            line[n] = '\0';
            in->start += n + 1;
            return true;
        }
        if (in->end - in->start >= size || !in_fill(in)) return false;
    }
}

/* The next n bytes, and the line break after them, into a. */
static char *in_bytes(In *in, Arena *a, size_t n) {
    char *out = arena_alloc(a, n + 1);
    size_t got = 0;
    while (got < n) {
        if (in->start == in->end && !in_fill(in)) return NULL;
        size_t k = in->end - in->start < n - got ? in->end - in->start : n - got;
        memcpy(out + got, in->buf + in->start, k);
        in->start += k;
        got += k;
    }
    out[n] = '\0';
    if (in->start == in->end && !in_fill(in)) return NULL;
    if (in->buf[in->start++] != '\n') return NULL;
    return out;
}

/* Reads one snapshot; 1 when read, 0 at the end of input before it, -1
 * when malformed. */
static int read_snapshot(In *in, Arena *a, LspKey *key, const char **uri, Snapshot *sn) {
    char line[256];
    if (!in_line(in, line, sizeof line)) return in->eof && in->start == in->end ? 0 : -1;
    unsigned long long ka, kb, n, m;
    if (strcmp(line, "cmtc-lsp-worker 1") != 0 || !in_line(in, line, sizeof line) ||
        sscanf(line, "key %16llx %16llx", &ka, &kb) != 2 || !in_line(in, line, sizeof line) ||
        sscanf(line, "uri %llu", &n) != 1 || !(*uri = in_bytes(in, a, (size_t)n)))
        return -1;
    *key = (LspKey){ka, kb};
    int cap = 16;
    sn->files = ARENA_ARRAY(a, SnapFile, cap);
    sn->count = 0;
    for (;;) {
        if (!in_line(in, line, sizeof line)) return -1;
        if (strcmp(line, "end") == 0) return sn->count > 0 ? 1 : -1;
        if (sscanf(line, "file %llu %llu", &n, &m) != 2) return -1;
        const char *bytes = in_bytes(in, a, (size_t)(n + m));
        if (!bytes) return -1;
        if (sn->count == cap) {
            sn->files = arena_realloc(a, sn->files, sizeof(SnapFile) * (size_t)cap,
                                      sizeof(SnapFile) * (size_t)cap * 2);
            cap *= 2;
        }
        const char *path = arena_strndup(a, bytes, (size_t)n);
        sn->files[sn->count++] = (SnapFile){lsp_normalize_path(a, path), bytes + n, (size_t)m};
    }
}

static bool write_answer(int fd, json_t *ans) {
    char *body = ans ? json_dumps(ans, JSON_COMPACT) : NULL;
    bool ok = body != NULL;
    size_t len = body ? strlen(body) : 0;
    for (size_t off = 0; ok && off <= len;) {
        /* the body, then its line break */
        const char *p = off < len ? body + off : "\n";
        size_t n = off < len ? len - off : 1;
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) ok = false;
        off += k > 0 ? (size_t)k : 0;
    }
    free(body);
    return ok;
}

int lsp_worker_main(LspServer *s) {
    /* standard output carries the answers and nothing else: keep it as
     * out_fd and point file descriptor 1 at standard error */
    fflush(stdout);
    int out_fd = dup(STDOUT_FILENO);
    if (out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        fprintf(stderr, "cmtc lsp --worker: cannot set up standard output: %s\n", strerror(errno));
        return EXIT_USAGE;
    }
    /* the server's own work comes first on a shared machine */
    if (nice(10) == -1) {
    }
    /* for tests of cancellation: wait this many seconds before each
     * mapping (a request is then surely still waiting when the test
     * cancels it) */
    const char *delay = getenv("CMT_LSP_WORKER_DELAY");
    double wait_s = 0;
    if (delay && !parse_time_limit(delay, &wait_s)) wait_s = 0;
    In *in = calloc(1, sizeof *in);
    int code = in ? EXIT_OK : EXIT_USAGE;
    while (in) {
        Arena a = {0};
        LspKey key;
        const char *uri = NULL;
        Snapshot sn = {0};
        int got = read_snapshot(in, &a, &key, &uri, &sn);
        if (got <= 0) {
            if (got < 0) {
                fprintf(stderr, "cmtc lsp --worker: a malformed snapshot on standard input\n");
                code = EXIT_USAGE;
            }
            arena_free_all(&a);
            break;
        }
        for (double until = now_s() + wait_s, left; (left = until - now_s()) > 0;) {
            struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
            nanosleep(&ts, NULL);
        }
        s->check.overlay = snapshot_file;
        s->check.overlay_ctx = &sn;
        LspDoc doc;
        memset(&doc, 0, sizeof doc);
        json_t *ans = NULL;
        if (lsp_doc_load(s, &doc, uri, sn.files[0].text, sn.files[0].len)) {
            doc.open = true;
            const IrMapping *mp = lsp_mapping_by_key(&doc, key);
            ans = mp ? lsp_optimize_answer(&doc, mp) : failure("changed");
        }
        bool ok = write_answer(out_fd, ans);
        json_decref(ans);
        arena_free_all(&doc.arena);
        arena_free_all(&a);
        if (!ok) {
            code = EXIT_SOLVER;
            break;
        }
    }
    free(in);
    close(out_fd);
    return code;
}
