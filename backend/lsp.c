/* lsp.c — `cmtc lsp`: a Language Server Protocol 3.17 server on standard
 * input and output.  This file holds the server loop: the channel, the
 * lifecycle, document synchronisation and the diagnostics pushed after
 * every change (and after a save or a change on disk of a used file), the
 * table of requests and the requests that wait for the optimizer's worker.
 * The framing, URIs and positions are in lsp_proto.c, the features in
 * lsp_features.c and the lsp_*.c files lsp.h lists, the worker in
 * lsp_worker.c.
 *
 * Memory: each document version owns one arena (text, AST, IR,
 * diagnostics), freed whole when the next version replaces it or the
 * document is closed.  Server state lives in the process arena.  JSON
 * values are jansson's, reference counted per message. */
#include "backend/lsp.h"
#include "passes/optimize/optimize.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* JSON-RPC and LSP error codes. */
enum {
    RPC_PARSE_ERROR = -32700,
    RPC_INVALID_REQUEST = -32600,
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602,
    RPC_SERVER_NOT_INITIALIZED = -32002,
    RPC_REQUEST_FAILED = -32803,
    RPC_CONTENT_MODIFIED = -32801,
    RPC_REQUEST_CANCELLED = -32800
};

/* An inlay-hint request of a client without refresh support, waiting for
 * the worker's answers for its document (malloc'd: it lives until
 * answered, whatever happens to document versions meanwhile). */
typedef enum PendingKind { PENDING_INLAY, PENDING_LENS } PendingKind;

struct LspPending {
    LspPending *next;
    json_t *id;
    char *uri;
    Span range;
    PendingKind kind;
};

/* ========================================================= the channel */

/* Writes one frame holding body. */
static void send_body(LspServer *s, const char *body, size_t n) {
    char head[64];
    int hn = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", n);
    const char *parts[2] = {head, body};
    size_t lens[2] = {(size_t)hn, n};
    for (int k = 0; k < 2; k++) {
        size_t off = 0;
        while (off < lens[k]) {
            ssize_t w = write(s->out_fd, parts[k] + off, lens[k] - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) { /* the client is gone */
                s->exiting = true;
                if (!s->shutdown) s->exit_code = 1;
                return;
            }
            off += (size_t)w;
        }
    }
}

static void send_json(LspServer *s, json_t *msg) {
    char *body = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (!body) return;
    send_body(s, body, strlen(body));
    free(body);
}

/* A response whose result is JSON text the handler wrote itself (large
 * arrays of numbers, which as jansson values cost a malloc each). */
static void send_raw_result(LspServer *s, json_t *id, const char *result) {
    char *jid = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
    size_t n = strlen(result) + (jid ? strlen(jid) : 4) + 64;
    char *body = malloc(n);
    if (body) {
        int len = snprintf(body, n, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}",
                           jid ? jid : "null", result);
        send_body(s, body, (size_t)len);
    }
    free(body);
    free(jid);
}

static void send_result(LspServer *s, json_t *id, json_t *result) {
    send_json(s, json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

/* jansson refuses integers past 64 bits and reals past a double: valid
 * JSON that it cannot hold (not a parse error of the client's). */
static bool out_of_range_number(const json_error_t *je) {
    return strstr(je->text, "too big") || strstr(je->text, "overflow");
}

/* The request's id read from the raw text, when the whole message cannot
 * be decoded: the first member "id" whose value is an integer of at most
 * 18 digits or a string without escapes; NULL when there is none (a
 * notification, or an id too odd to echo). */
static json_t *recover_id(const char *body, size_t len) {
    const char *end = body + len;
    for (const char *p = body; p + 4 <= end; p++) {
        if (memcmp(p, "\"id\"", 4) != 0) continue;
        const char *q = p + 4;
        while (q < end && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')) q++;
        if (q >= end || *q != ':') continue;
        q++;
        while (q < end && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')) q++;
        if (q < end && *q == '"') {
            const char *v = ++q;
            while (q < end && *q != '"' && *q != '\\') q++;
            if (q < end && *q == '"') return json_stringn(v, (size_t)(q - v));
            return NULL;
        }
        const char *v = q;
        if (q < end && *q == '-') q++;
        const char *digits = q;
        while (q < end && *q >= '0' && *q <= '9') q++;
        if (q == digits || q - digits > 18) return NULL;
        char num[24];
        memcpy(num, v, (size_t)(q - v));
        num[q - v] = '\0';
        return json_integer(strtoll(num, NULL, 10));
    }
    return NULL;
}

static void send_error(LspServer *s, json_t *id, int code, const char *msg) {
    json_t *jid = id ? json_incref(id) : json_null();
    send_json(s, json_pack("{s:s,s:o,s:{s:i,s:o}}", "jsonrpc", "2.0", "id", jid, "error", "code",
                           code, "message", lsp_jstr(msg)));
}

static void send_notification(LspServer *s, const char *method, json_t *params) {
    send_json(s, json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method", method, "params", params));
}

/* A request of the server's own (its answer is ignored); params may be
 * NULL. */
static void send_request(LspServer *s, const char *method, json_t *params) {
    json_t *msg = json_pack("{s:s,s:I,s:s}", "jsonrpc", "2.0", "id", (json_int_t)++s->next_request,
                            "method", method);
    if (params) json_object_set_new(msg, "params", params);
    send_json(s, msg);
}

/* ============================================ waiting for the optimizer */

#define REFRESH_EVERY 8

static void pending_free(LspPending *p) {
    json_decref(p->id);
    free(p->uri);
    free(p);
}

/* Answers the pending requests of uri with an error (the document
 * changed or closed: their positions no longer apply). */
static void pending_fail(LspServer *s, const char *uri, int code, const char *why) {
    for (LspPending **pp = &s->pending; *pp;) {
        LspPending *p = *pp;
        if (uri && strcmp(p->uri, uri) != 0) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        send_error(s, p->id, code, why);
        pending_free(p);
    }
}

static LspDoc *doc_find(LspServer *s, const char *uri);

void lsp_answer_arrived(LspServer *s, const char *uri) {
    /* requests that waited: answered once no work for their document is
     * left (the worker brought everything it could) */
    if (!lsp_work_busy(s, uri)) {
        for (LspPending **pp = &s->pending; *pp;) {
            LspPending *p = *pp;
            if (strcmp(p->uri, uri) != 0) {
                pp = &p->next;
                continue;
            }
            *pp = p->next;
            LspDoc *d = doc_find(s, uri);
            if (d) {
                int missing;
                send_result(s, p->id,
                            p->kind == PENDING_LENS
                                ? lsp_code_lenses(s, d, false, &missing)
                                : lsp_inlay_hints(s, d, p->range, false, &missing));
            } else {
                send_error(s, p->id, RPC_CONTENT_MODIFIED, "the document was closed");
            }
            pending_free(p);
        }
    }
    /* clients that support it re-ask when told: when the worker has no
     * more work, and every REFRESH_EVERY answers while it works through a
     * long queue (by count, not time, so that a test sees the same
     * refreshes on any machine) */
    s->answers_since_refresh++;
    bool due =
        !s->shutdown && (!lsp_work_busy(s, NULL) || s->answers_since_refresh >= REFRESH_EVERY);
    if (due && s->refresh_support && s->refresh_owed) {
        s->refresh_owed = false;
        s->answers_since_refresh = 0;
        send_request(s, "workspace/inlayHint/refresh", NULL);
    }
    if (due && s->lens_refresh_support && s->lens_refresh_owed) {
        s->lens_refresh_owed = false;
        s->answers_since_refresh = 0;
        send_request(s, "workspace/codeLens/refresh", NULL);
    }
}

/* A document has a new version (or was closed): requests waiting for the
 * old one are answered ContentModified, work for mappings it no longer
 * has is dropped. */
static void doc_version_changed(LspServer *s, LspDoc *d) {
    pending_fail(s, d->uri, RPC_CONTENT_MODIFIED,
                 d->open ? "the document changed; ask again" : "the document was closed");
    lsp_work_doc_changed(s, d);
}

static bool reader_wait(void *ctx, int fd) {
    return lsp_work_step(ctx, fd);
}

/* ========================================================= documents */

static const char *overlay_cb(void *ctx, const char *path, size_t *len) {
    LspServer *s = ctx;
    Arena scratch = {0};
    const char *norm = lsp_normalize_path(&scratch, path);
    LspDoc *d = lsp_doc_by_path(s, norm);
    arena_free_all(&scratch);
    if (!d) return NULL;
    *len = d->file->len;
    return d->file->text;
}

static LspDoc *doc_find(LspServer *s, const char *uri) {
    for (LspDoc *d = s->docs; d; d = d->next)
        if (d->open && strcmp(d->uri, uri) == 0) return d;
    return NULL;
}

/* Makes (uri, text) the document's current version and checks it: a
 * fresh arena receives copies of uri, path and text, check_program runs in
 * it, and the previous version's arena is freed whole.  text may point
 * into the previous version (a re-check after a used file changed). */
bool lsp_doc_load(LspServer *s, LspDoc *d, const char *uri, const char *text, size_t len) {
    Arena fresh = {0};
    char *u = arena_strdup(&fresh, uri);
    char *path = lsp_uri_to_path(&fresh, uri);
    path = lsp_normalize_path(&fresh, path ? path : uri);
    SourceManager sm;
    sources_init(&sm, &fresh);
    SourceFile *root = sources_add(&sm, path, text, len);
    if (!root) { /* over SOURCE_MAX_BYTES; keep the old version */
        fprintf(stderr, "cmtc lsp: %s is too large to check: %s\n", path,
                sources_error_text(errno));
        arena_free_all(&fresh);
        return false;
    }
    arena_free_all(&d->arena);
    d->arena = fresh; /* the chunks move with the struct */
    d->sm = sm;
    d->sm.arena = &d->arena;
    d->uri = u;
    d->path = path;
    d->file = root;
    d->cache = NULL;
    diags_init(&d->diags, &d->arena);
    d->prog = check_program(&d->arena, &d->sm, &d->diags, root, &s->check);
    /* the same diagnostics as `cmtc check`: capacity excesses of every
     * mapping that checked, whatever errors the rest of the file has */
    if (d->prog) check_mapping_capacity(d->prog);
    d->module = d->prog && d->prog->module_count > 0 ? d->prog->modules[0] : NULL;
    return true;
}

static bool doc_load(LspServer *s, LspDoc *d, const char *uri, const char *text, size_t len) {
    return lsp_doc_load(s, d, uri, text, len);
}

static json_t *diag_json(LspServer *s, LspDoc *d, const Diag *g) {
    SourceFile *f = d->file;
    /* a mistake in a used file shows at the `use` that brings it in */
    Span sp = lsp_diag_span(d, g);
    int sev = g->severity == SEV_ERROR ? 1 : g->severity == SEV_WARNING ? 2 : 3;
    Arena scratch = {0};
    char *msg = arena_strdup(&scratch, g->message ? g->message : "");
    for (int i = 0; i < g->note_count; i++)
        msg = arena_printf(&scratch, "%s\nnote: %s", msg, g->notes[i]);
    for (int i = 0; i < g->help_count; i++)
        msg = arena_printf(&scratch, "%s\nhelp: %s", msg, g->helps[i]);
    if (g->span.file >= 0 && g->span.file != f->id) {
        SourceFile *other = sources_get(&d->sm, g->span.file);
        if (other) {
            uint32_t line, col;
            source_line_col(other, g->span.start, &line, &col);
            msg = arena_printf(&scratch, "in %s:%u:%u: %s", other->path, line, col, msg);
        }
    }
    json_t *o = json_pack("{s:o,s:i,s:s,s:o}", "range", lsp_range_json(s, f, sp), "severity", sev,
                          "source", "cmtc", "message", lsp_jstr(msg));
    if (g->code && g->code[0]) {
        json_object_set_new(o, "code", lsp_jstr(g->code));
        /* codeDescription: the page explaining the code, when the source
         * tree's docs are at hand */
        const char *docs =
            arena_printf(&scratch, "%s/../docs/errors/%s.md", CMT_SOURCE_STDLIB, g->code);
        struct stat st;
        if (stat(docs, &st) == 0)
            json_object_set_new(o, "codeDescription",
                                json_pack("{s:s}", "href", lsp_path_to_uri(&scratch, docs)));
    }
    if (g->label_count > 0) {
        json_t *rel = json_array();
        for (int i = 0; i < g->label_count; i++) {
            const DiagLabel *l = &g->labels[i];
            if (l->span.file < 0) continue;
            const char *lm = l->message && l->message[0] ? l->message : g->message;
            json_array_append_new(rel, json_pack("{s:o,s:o}", "location",
                                                 lsp_location_json(s, d, l->span), "message",
                                                 lsp_jstr(lm ? lm : "")));
        }
        json_object_set_new(o, "relatedInformation", rel);
    }
    arena_free_all(&scratch);
    return o;
}

static void publish(LspServer *s, LspDoc *d) {
    json_t *arr = json_array();
    if (d->open) {
        diags_sort(&d->diags);
        for (int i = 0; i < d->diags.count; i++)
            json_array_append_new(arr, diag_json(s, d, d->diags.items[i]));
        /* past the cap, say so, as `cmtc check` does (at the start of
         * the document: the note has no place of its own) */
        if (d->diags.capped) {
            Diag cap = {.severity = SEV_NOTE,
                        .code = DIAG_CAP_CODE,
                        .span = {d->file->id, 0, 0},
                        .message = DIAG_CAP_MESSAGE};
            json_array_append_new(arr, diag_json(s, d, &cap));
        }
    }
    json_t *params = json_pack("{s:o,s:o}", "uri", lsp_jstr(d->uri), "diagnostics", arr);
    if (d->open && d->version >= 0)
        json_object_set_new(params, "version", json_integer(d->version));
    send_notification(s, "textDocument/publishDiagnostics", params);
}

static bool doc_uses_path(const LspDoc *d, const char *path) {
    if (!d->prog) return false;
    for (int i = 1; i < d->prog->module_count; i++) {
        const Module *m = d->prog->modules[i];
        if (m && m->file && m->file->path) {
            Arena scratch = {0};
            bool same = strcmp(lsp_normalize_path(&scratch, m->file->path), path) == 0;
            arena_free_all(&scratch);
            if (same) return true;
        }
    }
    return false;
}

/* Whether d failed to find a module it uses (E0203): a document opened
 * since, or changed, may be that module, as an unsaved buffer. */
static bool doc_misses_use(const LspDoc *d) {
    for (int i = 0; d->prog && i < d->diags.count; i++)
        if (d->diags.items[i]->code && strcmp(d->diags.items[i]->code, "E0203") == 0) return true;
    return false;
}

/* Checks d, publishes its diagnostics, then re-checks every other open
 * document that uses d's file (its unsaved text changed what they see),
 * or that could not find a module it uses (d may be it). */
static void doc_changed(LspServer *s, LspDoc *d) {
    publish(s, d);
    doc_version_changed(s, d);
    for (LspDoc *o = s->docs; o; o = o->next) {
        if (o == d || !o->open || !(doc_uses_path(o, d->path) || doc_misses_use(o))) continue;
        doc_load(s, o, o->uri, o->file->text, o->file->len);
        publish(s, o);
        doc_version_changed(s, o);
    }
}

/* ============================================================ methods */

static const char *jget_str(json_t *obj, const char *key) {
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static LspDoc *param_doc(LspServer *s, json_t *params) {
    json_t *td = json_object_get(params, "textDocument");
    const char *uri = jget_str(td, "uri");
    return uri ? doc_find(s, uri) : NULL;
}

static bool param_offset(LspServer *s, LspDoc *d, json_t *pos, uint32_t *out);
static json_t *initialize_result(LspServer *s, json_t *params) {
    json_t *encs = json_object_get(
        json_object_get(json_object_get(params, "capabilities"), "general"), "positionEncodings");
    s->utf16 = true;
    size_t i;
    json_t *e;
    json_array_foreach(encs, i, e) {
        if (json_is_string(e) && strcmp(json_string_value(e), "utf-8") == 0) s->utf16 = false;
    }
    /* workspace/inlayHint/refresh is sent only to clients that say they
     * support it; the others wait for their answer */
    s->refresh_support = json_is_true(json_object_get(
        json_object_get(json_object_get(json_object_get(params, "capabilities"), "workspace"),
                        "inlayHint"),
        "refreshSupport"));
    json_t *client_ws = json_object_get(json_object_get(params, "capabilities"), "workspace");
    s->lens_refresh_support =
        json_is_true(json_object_get(json_object_get(client_ws, "codeLens"), "refreshSupport"));
    s->watch_registration = json_is_true(json_object_get(
        json_object_get(client_ws, "didChangeWatchedFiles"), "dynamicRegistration"));
    lsp_workspace_set_roots(s, params);
    json_t *caps = json_pack("{s:s,s:{s:b,s:i,s:{s:b}},s:b,s:b,s:b,s:b,s:{s:[s,s,s,s,s]},s:b}",
                             "positionEncoding", s->utf16 ? "utf-16" : "utf-8", "textDocumentSync",
                             "openClose", 1, "change", 1, "save", "includeText", 0, "hoverProvider",
                             1, "definitionProvider", 1, "documentSymbolProvider", 1,
                             "documentFormattingProvider", 1, "completionProvider",
                             "triggerCharacters", ":", ".", "<", "[", ">", "inlayHintProvider", 1);
    json_object_set_new(caps, "codeActionProvider",
                        json_pack("{s:[s]}", "codeActionKinds", "quickfix"));
    json_object_set_new(caps, "referencesProvider", json_true());
    json_object_set_new(caps, "documentHighlightProvider", json_true());
    json_object_set_new(caps, "renameProvider", json_pack("{s:b}", "prepareProvider", 1));
    json_object_set_new(caps, "semanticTokensProvider",
                        json_pack("{s:o,s:b}", "legend", lsp_semantic_tokens_legend(), "full", 1));
    json_object_set_new(caps, "workspaceSymbolProvider", json_true());
    json_object_set_new(caps, "codeLensProvider", json_pack("{s:b}", "resolveProvider", 0));
    json_object_set_new(caps, "foldingRangeProvider", json_true());
    json_object_set_new(caps, "signatureHelpProvider",
                        json_pack("{s:[s,s]}", "triggerCharacters", "<", ","));
    return json_pack("{s:o,s:{s:s,s:s}}", "capabilities", caps, "serverInfo", "name", "cmtc",
                     "version", "0.1");
}

/* A Position to a byte offset in f (no document needed). */
static bool pos_offset(LspServer *s, const SourceFile *f, json_t *pos, uint32_t *out) {
    json_t *l = json_object_get(pos, "line");
    json_t *c = json_object_get(pos, "character");
    if (!json_is_integer(l) || !json_is_integer(c)) return false;
    json_int_t li = json_integer_value(l), ci = json_integer_value(c);
    if (li < 0 || ci < 0) return false;
    if (li > UINT32_MAX) li = UINT32_MAX;
    if (ci > UINT32_MAX) ci = UINT32_MAX;
    *out = lsp_offset_of(f, (uint32_t)li, (uint32_t)ci, s->utf16);
    return true;
}

/* Applies one contentChanges entry to the text of cur; the new text goes
 * to a new file of sm (for its line table).  NULL if malformed. */
static SourceFile *apply_change(LspServer *s, const SourceFile *cur, json_t *change,
                                SourceManager *sm) {
    json_t *jt = json_object_get(change, "text");
    if (!json_is_string(jt)) return NULL;
    const char *text = json_string_value(jt);
    size_t tlen = json_string_length(jt);
    json_t *range = json_object_get(change, "range");
    if (!range) return sources_add(sm, cur->path, text, tlen);
    uint32_t a, b;
    if (!pos_offset(s, cur, json_object_get(range, "start"), &a) ||
        !pos_offset(s, cur, json_object_get(range, "end"), &b))
        return NULL;
    if (b < a) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    size_t old = cur->len, len = old - (b - a) + tlen;
    char *out = arena_alloc(sm->arena, len + 1);
    memcpy(out, cur->text, a);
    memcpy(out + a, text, tlen);
    memcpy(out + a + tlen, cur->text + b, old - b);
    return sources_add(sm, cur->path, out, len);
}

static void did_open(LspServer *s, json_t *params) {
    json_t *td = json_object_get(params, "textDocument");
    const char *uri = jget_str(td, "uri");
    json_t *text = json_object_get(td, "text");
    if (!uri || !json_is_string(text)) return;
    LspDoc *d = doc_find(s, uri);
    if (!d) {
        for (d = s->docs; d && d->open; d = d->next) {
        }
        if (!d) {
            d = ARENA_NEW(process_arena(), LspDoc);
            d->next = s->docs;
            s->docs = d;
        }
    }
    json_t *ver = json_object_get(td, "version");
    if (!doc_load(s, d, uri, json_string_value(text), json_string_length(text))) return;
    d->open = true;
    d->version = json_is_integer(ver) ? json_integer_value(ver) : -1;
    doc_changed(s, d);
}

static void did_change(LspServer *s, json_t *params) {
    LspDoc *d = param_doc(s, params);
    json_t *changes = json_object_get(params, "contentChanges");
    if (!d || !json_is_array(changes)) return;
    json_t *ver = json_object_get(json_object_get(params, "textDocument"), "version");
    if (json_is_integer(ver)) d->version = json_integer_value(ver);
    Arena scratch = {0};
    SourceManager sm;
    sources_init(&sm, &scratch);
    const SourceFile *cur = d->file;
    size_t i;
    json_t *c;
    json_array_foreach(changes, i, c) {
        SourceFile *next = apply_change(s, cur, c, &sm);
        if (next) cur = next;
    }
    bool loaded = doc_load(s, d, d->uri, cur->text, cur->len);
    arena_free_all(&scratch);
    if (loaded) doc_changed(s, d);
}

static bool param_offset(LspServer *s, LspDoc *d, json_t *pos, uint32_t *out) {
    return pos_offset(s, d->file, pos, out);
}

static void did_close(LspServer *s, json_t *params) {
    LspDoc *d = param_doc(s, params);
    if (!d) return;
    const char *path = d->path;
    d->open = false;
    d->version = -1;
    publish(s, d); /* an empty array clears the client's list */
    doc_version_changed(s, d);
    /* documents that used its unsaved text now read the file on disk */
    for (LspDoc *o = s->docs; o; o = o->next) {
        if (!o->open || !doc_uses_path(o, path)) continue;
        doc_load(s, o, o->uri, o->file->text, o->file->len);
        publish(s, o);
        doc_version_changed(s, o);
    }
    arena_free_all(&d->arena);
    d->file = NULL;
    d->prog = NULL;
    d->module = NULL;
    d->cache = NULL;
    d->uri = d->path = "";
}

/* One request about an open document, as its handler sees it. */
typedef struct Request {
    LspServer *s;
    LspDoc *d;
    json_t *id;
    json_t *params;
    uint32_t offset; /* of params.position, for requests that have one */
    /* set by a handler that refuses: the error response to send */
    int error_code;
    const char *error;
    bool deferred; /* the handler keeps the request to answer it later */
    char *raw;     /* the result as JSON text (malloc'd), when not a json_t */
} Request;

static json_t *fail(Request *r, int code, const char *why) {
    r->error_code = code;
    r->error = why;
    return NULL;
}

/* A range of params (the whole document when absent) as a span. */
static bool param_range(Request *r, Span *out) {
    json_t *range = json_object_get(r->params, "range");
    uint32_t a = 0, b = (uint32_t)r->d->file->len;
    if (range && (!param_offset(r->s, r->d, json_object_get(range, "start"), &a) ||
                  !param_offset(r->s, r->d, json_object_get(range, "end"), &b)))
        return false;
    *out = (Span){r->d->file->id, a, b};
    return true;
}

static json_t *on_hover(Request *r) {
    return lsp_hover(r->s, r->d, r->offset);
}
static json_t *on_definition(Request *r) {
    return lsp_definition(r->s, r->d, r->offset);
}
static json_t *on_document_symbol(Request *r) {
    return lsp_document_symbols(r->s, r->d);
}
static json_t *on_completion(Request *r) {
    return lsp_completion(r->s, r->d, r->offset);
}
static json_t *on_code_action(Request *r) {
    return lsp_code_actions(r->s, r->d, r->params);
}
static json_t *on_highlight(Request *r) {
    return lsp_document_highlight(r->s, r->d, r->offset);
}
static json_t *on_semantic_tokens(Request *r) {
    r->raw = lsp_semantic_tokens(r->s, r->d);
    return r->raw ? NULL : fail(r, RPC_REQUEST_FAILED, "out of memory");
}
static json_t *on_folding(Request *r) {
    return lsp_folding_ranges(r->s, r->d);
}
static json_t *on_signature(Request *r) {
    return lsp_signature_help(r->s, r->d, r->offset);
}

static json_t *on_formatting(Request *r) {
    const char *why = NULL;
    json_t *result = lsp_formatting(r->s, r->d, &why);
    return result ? result : fail(r, RPC_REQUEST_FAILED, why ? why : "cannot format the document");
}

static json_t *on_references(Request *r) {
    json_t *with = json_object_get(json_object_get(r->params, "context"), "includeDeclaration");
    return lsp_references(r->s, r->d, r->offset, !json_is_false(with));
}

static json_t *on_prepare_rename(Request *r) {
    const char *why = NULL;
    json_t *result = lsp_prepare_rename(r->s, r->d, r->offset, &why);
    return result ? result : fail(r, RPC_REQUEST_FAILED, why);
}

static json_t *on_rename(Request *r) {
    json_t *name = json_object_get(r->params, "newName");
    if (!json_is_string(name)) return fail(r, RPC_INVALID_PARAMS, "newName must be a string");
    const char *why = NULL;
    json_t *result = lsp_rename(r->s, r->d, r->offset, json_string_value(name), &why);
    return result ? result : fail(r, RPC_REQUEST_FAILED, why);
}

/* Keeps the request, to be answered when the worker has brought what the
 * document's answer lacks (a client that cannot be told to ask again). */
static bool defer(Request *r, PendingKind kind, Span range) {
    LspPending *p = calloc(1, sizeof *p);
    char *uri = strdup(r->d->uri);
    if (!p || !uri) {
        free(p);
        free(uri);
        return false;
    }
    *p = (LspPending){r->s->pending, json_incref(r->id), uri, range, kind};
    r->s->pending = p;
    r->deferred = true;
    return true;
}

static json_t *on_inlay_hint(Request *r) {
    Span sp;
    if (!param_range(r, &sp))
        return fail(r, RPC_INVALID_PARAMS, "range must be {start, end} positions");
    int missing = 0;
    json_t *result = lsp_inlay_hints(r->s, r->d, sp, true, &missing);
    if (missing > 0 && !r->s->refresh_support && lsp_work_busy(r->s, r->d->uri) &&
        defer(r, PENDING_INLAY, sp)) {
        json_decref(result);
        return NULL;
    }
    if (missing > 0) r->s->refresh_owed = true;
    return result;
}

static json_t *on_code_lens(Request *r) {
    int missing = 0;
    json_t *result = lsp_code_lenses(r->s, r->d, true, &missing);
    Span whole = {r->d->file->id, 0, (uint32_t)r->d->file->len};
    if (missing > 0 && !r->s->lens_refresh_support && lsp_work_busy(r->s, r->d->uri) &&
        defer(r, PENDING_LENS, whole)) {
        json_decref(result);
        return NULL;
    }
    if (missing > 0) r->s->lens_refresh_owed = true;
    return result;
}

typedef struct DocRequest {
    const char *method;
    bool position; /* params.position is required */
    json_t *(*handle)(Request *r);
} DocRequest;

static const DocRequest doc_requests[] = {
    {"textDocument/hover", true, on_hover},
    {"textDocument/definition", true, on_definition},
    {"textDocument/documentSymbol", false, on_document_symbol},
    {"textDocument/formatting", false, on_formatting},
    {"textDocument/completion", true, on_completion},
    {"textDocument/inlayHint", false, on_inlay_hint},
    {"textDocument/codeAction", false, on_code_action},
    {"textDocument/references", true, on_references},
    {"textDocument/documentHighlight", true, on_highlight},
    {"textDocument/prepareRename", true, on_prepare_rename},
    {"textDocument/rename", true, on_rename},
    {"textDocument/semanticTokens/full", false, on_semantic_tokens},
    {"textDocument/codeLens", false, on_code_lens},
    {"textDocument/foldingRange", false, on_folding},
    {"textDocument/signatureHelp", true, on_signature},
};

/* A client that can register for watched files dynamically is asked to
 * report changes of `.cmt` files: a used file that changes on disk
 * changes what the documents using it see. */
static void register_watchers(LspServer *s) {
    if (!s->watch_registration) return;
    send_request(s, "client/registerCapability",
                 json_pack("{s:[{s:s,s:s,s:{s:[{s:s}]}}]}", "registrations", "id", "cmtc-watch-cmt",
                           "method", "workspace/didChangeWatchedFiles", "registerOptions",
                           "watchers", "globPattern", "**/*.cmt"));
}

/* Re-checks every open document that uses path (or, when `all`, every
 * open document: a file that appeared may be one a `use` could not find)
 * and publishes its diagnostics. */
static void recheck_users(LspServer *s, const char *path, bool all) {
    for (LspDoc *o = s->docs; o; o = o->next) {
        if (!o->open || strcmp(o->path, path) == 0 || (!all && !doc_uses_path(o, path))) continue;
        doc_load(s, o, o->uri, o->file->text, o->file->len);
        publish(s, o);
        doc_version_changed(s, o);
    }
}

/* A saved document: what is on disk now is its text, which documents
 * that use it read when it closes; it and they are checked again (a used
 * file may have changed on disk meanwhile too). */
static void did_save(LspServer *s, json_t *params) {
    LspDoc *d = param_doc(s, params);
    if (!d) return;
    doc_load(s, d, d->uri, d->file->text, d->file->len);
    publish(s, d);
    doc_version_changed(s, d);
    recheck_users(s, d->path, false);
}

enum { WATCH_CREATED = 1, WATCH_CHANGED = 2, WATCH_DELETED = 3 };

static void watched_files_changed(LspServer *s, json_t *params) {
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(params, "changes"), i, c) {
        const char *uri = jget_str(c, "uri");
        json_t *type = json_object_get(c, "type");
        if (!uri || !json_is_integer(type)) continue;
        Arena scratch = {0};
        char *path = lsp_uri_to_path(&scratch, uri);
        if (path) {
            path = lsp_normalize_path(&scratch, path);
            /* an open file's text is the editor's, whatever is on disk */
            if (!lsp_doc_by_path(s, path))
                recheck_users(s, path, json_integer_value(type) == WATCH_CREATED);
        }
        arena_free_all(&scratch);
    }
}

static void handle_request(LspServer *s, const char *method, json_t *id, json_t *params) {
    if (strcmp(method, "initialize") == 0) {
        if (s->initialized) {
            send_error(s, id, RPC_INVALID_REQUEST, "initialize was already received");
            return;
        }
        s->initialized = true;
        send_result(s, id, initialize_result(s, params));
        return;
    }
    if (!s->initialized) {
        send_error(s, id, RPC_SERVER_NOT_INITIALIZED,
                   "the server is not initialized: send initialize first");
        return;
    }
    if (strcmp(method, "shutdown") == 0 && !s->shutdown) {
        /* requests waiting for the worker get their answers first; work
         * nobody waits for is stopped */
        while (s->pending && lsp_work_busy(s, NULL)) lsp_work_step(s, -1);
        pending_fail(s, NULL, RPC_REQUEST_CANCELLED, "the server is shutting down");
        s->shutdown = true;
        lsp_work_stop(s);
        send_result(s, id, json_null());
        return;
    }
    if (s->shutdown) {
        send_error(s, id, RPC_INVALID_REQUEST, "the server is shut down: only exit is accepted");
        return;
    }
    if (strcmp(method, "workspace/symbol") == 0) {
        json_t *query = json_object_get(params, "query");
        if (!json_is_object(params) || !json_is_string(query)) {
            send_error(s, id, RPC_INVALID_PARAMS, "params must be {query: string}");
            return;
        }
        send_result(s, id, lsp_workspace_symbols(s, json_string_value(query)));
        return;
    }
    const DocRequest *dr = NULL;
    for (size_t i = 0; i < sizeof doc_requests / sizeof *doc_requests; i++)
        if (strcmp(method, doc_requests[i].method) == 0) dr = &doc_requests[i];
    if (!dr) {
        char msg[256];
        snprintf(msg, sizeof msg, "unknown method %.200s", method);
        send_error(s, id, RPC_METHOD_NOT_FOUND, msg);
        return;
    }
    if (!json_is_object(params)) {
        send_error(s, id, RPC_INVALID_PARAMS, "params must be an object");
        return;
    }
    Request r = {.s = s, .id = id, .params = params};
    r.d = param_doc(s, params);
    if (!r.d) {
        send_error(s, id, RPC_INVALID_PARAMS, "textDocument.uri does not name an open document");
        return;
    }
    if (dr->position && !param_offset(s, r.d, json_object_get(params, "position"), &r.offset)) {
        send_error(s, id, RPC_INVALID_PARAMS,
                   "position must be {line, character} with "
                   "non-negative integers");
        return;
    }
    json_t *result = dr->handle(&r);
    if (r.deferred) return;
    if (r.raw) {
        send_raw_result(s, id, r.raw);
        free(r.raw);
        return;
    }
    if (r.error) {
        json_decref(result);
        send_error(s, id, r.error_code, r.error);
        return;
    }
    send_result(s, id, result ? result : json_null());
}

/* Only requests that wait for the worker can still be cancelled (every
 * other request is answered before the next message is read). */
static void cancel_request(LspServer *s, json_t *id) {
    if (!id) return;
    for (LspPending **pp = &s->pending; *pp; pp = &(*pp)->next) {
        LspPending *p = *pp;
        if (!json_equal(p->id, id)) continue;
        *pp = p->next;
        send_error(s, p->id, RPC_REQUEST_CANCELLED, "the request was cancelled");
        pending_free(p);
        return;
    }
}

static void on_initialized(LspServer *s, json_t *params) {
    (void)params;
    register_watchers(s);
}

static void on_cancel(LspServer *s, json_t *params) {
    cancel_request(s, json_object_get(params, "id"));
}

/* The notifications the server acts on (the requests are handle_request's
 * and doc_requests); $/setTrace and any other notification need nothing
 * from this server. */
static const struct {
    const char *method;
    void (*handle)(LspServer *s, json_t *params);
} notifications[] = {
    {"initialized", on_initialized},
    {"textDocument/didOpen", did_open},
    {"textDocument/didSave", did_save},
    {"textDocument/didChange", did_change},
    {"textDocument/didClose", did_close},
    {"workspace/didChangeWatchedFiles", watched_files_changed},
    {"$/cancelRequest", on_cancel},
};

static void handle_notification(LspServer *s, const char *method, json_t *params) {
    if (strcmp(method, "exit") == 0) {
        s->exiting = true;
        s->exit_code = s->shutdown ? 0 : 1;
        return;
    }
    if (!s->initialized || s->shutdown) return; /* dropped, as specified */
    for (size_t i = 0; i < sizeof notifications / sizeof *notifications; i++)
        if (strcmp(method, notifications[i].method) == 0) {
            notifications[i].handle(s, params);
            return;
        }
}

static void handle_message(LspServer *s, json_t *msg) {
    if (!json_is_object(msg)) {
        send_error(s, NULL, RPC_INVALID_REQUEST, "a message must be a JSON object");
        return;
    }
    json_t *id = json_object_get(msg, "id");
    json_t *method = json_object_get(msg, "method");
    bool id_ok = id && (json_is_integer(id) || json_is_string(id) || json_is_null(id));
    if (!method) {
        if (id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
            return; /* a response (to workspace/inlayHint/refresh): nothing to do */
        send_error(s, id_ok ? id : NULL, RPC_INVALID_REQUEST, "a message needs a method");
        return;
    }
    if (!json_is_string(method)) {
        send_error(s, id_ok ? id : NULL, RPC_INVALID_REQUEST, "method must be a string");
        return;
    }
    if (id && !id_ok) {
        send_error(s, NULL, RPC_INVALID_REQUEST, "id must be an integer or a string");
        return;
    }
    json_t *params = json_object_get(msg, "params");
    if (id)
        handle_request(s, json_string_value(method), id, params);
    else
        handle_notification(s, json_string_value(method), params);
}

static void usage(void) {
    fprintf(stderr, "usage: cmtc lsp [--stdio] [-I DIR]...\n"
                    "  a language server on standard input and output\n");
}

int cmd_lsp(int argc, char **argv) {
    LspServer *s = ARENA_NEW(process_arena(), LspServer);
    s->utf16 = true;
    s->exit_code = 1;
    bool worker = false;
    s->common.lenient_includes = true;
    for (int i = 0; i < argc;) {
        bool bad = false;
        if (common_option(&s->common, argc, argv, &i, &bad)) continue;
        if (bad) return EXIT_USAGE;
        if (strcmp(argv[i], "--stdio") == 0) {
            i++;
            continue;
        }
        if (strcmp(argv[i], "--worker") == 0) { /* the server's own (lsp_worker.c) */
            worker = true;
            i++;
            continue;
        }
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage();
            return EXIT_OK;
        }
        fprintf(stderr, "cmtc lsp: unknown argument '%s'\n", argv[i]);
        usage();
        return EXIT_USAGE;
    }
    common_check_options(&s->common, &s->check);
    if (worker) return lsp_worker_main(s);
    s->check.overlay = overlay_cb;
    s->check.overlay_ctx = s;

    /* Standard output is the protocol channel and nothing else: keep it
     * as out_fd and point file descriptor 1 at standard error, so a stray
     * printf anywhere (lp_solve, a debug line) cannot corrupt a frame. */
    fflush(stdout);
    s->out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3); /* workers do not inherit it */
    if (s->out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        fprintf(stderr, "cmtc lsp: cannot set up standard output: %s\n", strerror(errno));
        return EXIT_USAGE;
    }
    signal(SIGPIPE, SIG_IGN);

    lsp_work_init(s);
    LspReader r;
    lsp_reader_init(&r, STDIN_FILENO);
    r.wait = reader_wait;
    r.wait_ctx = s;
    char err[256];
    while (!s->exiting) {
        const char *body;
        size_t len;
        LspReadStatus st = lsp_read(&r, &body, &len, err, sizeof err);
        if (st == LSP_READ_EOF) break;
        if (st == LSP_READ_ERROR) {
            send_error(s, NULL, RPC_PARSE_ERROR, err);
            continue;
        }
        json_error_t je;
        json_t *msg = json_loadb(body, len, JSON_ALLOW_NUL, &je);
        if (!msg && out_of_range_number(&je)) {
            /* valid JSON with a number beyond 64 bits (a position of 2^63,
             * 1e400): the request is answered, not lost */
            json_t *id = recover_id(body, len);
            snprintf(err, sizeof err, "a number at byte %d is out of range: %.160s", je.position,
                     je.text);
            if (id) send_error(s, id, RPC_INVALID_PARAMS, err);
            json_decref(id);
            continue;
        }
        if (!msg) {
            snprintf(err, sizeof err, "invalid JSON at byte %d: %.180s", je.position, je.text);
            send_error(s, NULL, RPC_PARSE_ERROR, err);
            continue;
        }
        handle_message(s, msg);
        json_decref(msg);
    }
    lsp_reader_close(&r);
    lsp_work_free(s);
    while (s->pending) {
        LspPending *p = s->pending;
        s->pending = p->next;
        pending_free(p);
    }
    int code = s->exiting ? s->exit_code : (s->shutdown ? 0 : 1);
    for (LspDoc *d = s->docs; d; d = d->next) arena_free_all(&d->arena);
    close(s->out_fd);
    return code;
}
