/* lsp_folding.c — folding ranges: each op, arch and mapping block and
 * each memory, compute or cluster block inside an arch, comments that run
 * over several lines, and runs of `use` lines. */
#include "backend/lsp.h"

static uint32_t line_of(const SourceFile *f, uint32_t offset) {
    return source_line_index(f, offset);
}

/* A block folds from its first line to the line before its closing `}`
 * (which stays in view, as the opening line does). */
static void fold_block(json_t *out, const SourceFile *f, Span sp) {
    if (sp.file != f->id || sp.end <= sp.start || sp.end > f->len) return;
    uint32_t first = line_of(f, sp.start), last = line_of(f, sp.end - 1);
    if (f->text[sp.end - 1] == '}' && last > first) last--;
    if (last <= first) return;
    json_array_append_new(
        out, json_pack("{s:I,s:I}", "startLine", (json_int_t)first, "endLine", (json_int_t)last));
}

static void fold_lines(json_t *out, uint32_t first, uint32_t last, const char *kind) {
    if (last <= first) return;
    json_array_append_new(out, json_pack("{s:I,s:I,s:s}", "startLine", (json_int_t)first, "endLine",
                                         (json_int_t)last, "kind", kind));
}

/* Whether only blanks stand before offset on its line. */
static bool starts_line(const SourceFile *f, uint32_t offset) {
    while (offset > 0 && (f->text[offset - 1] == ' ' || f->text[offset - 1] == '\t')) offset--;
    return offset == 0 || f->text[offset - 1] == '\n';
}

static void fold_comments(json_t *out, const SourceFile *f, const Module *m) {
    bool run = false;
    uint32_t run_first = 0, run_last = 0;
    for (int i = 0; i < m->comment_count; i++) {
        Span c = m->comments[i];
        if (c.end <= c.start || c.end > f->len) continue;
        uint32_t first = line_of(f, c.start), last = line_of(f, c.end - 1);
        bool line_comment = f->text[c.start + 1] == '/';
        if (!line_comment) {
            fold_lines(out, first, last, "comment");
            continue;
        }
        /* consecutive `//` lines, each on a line of its own, fold as one */
        if (!starts_line(f, c.start)) continue;
        if (run && first == run_last + 1) {
            run_last = first;
            continue;
        }
        if (run) fold_lines(out, run_first, run_last, "comment");
        run = true;
        run_first = run_last = first;
    }
    if (run) fold_lines(out, run_first, run_last, "comment");
}

json_t *lsp_folding_ranges(LspServer *s, LspDoc *d) {
    (void)s;
    json_t *out = json_array();
    const Module *m = d->module;
    const SourceFile *f = d->file;
    if (!m) return out;
    bool uses = false;
    uint32_t use_first = 0, use_last = 0;
    for (int i = 0; i < m->decl_count; i++) {
        const Decl *x = m->decls[i];
        if (x->kind == DK_USE) {
            uint32_t line = line_of(f, x->span.start);
            if (!uses) use_first = line;
            uses = true;
            use_last = line_of(f, x->span.end > x->span.start ? x->span.end - 1 : x->span.end);
            continue;
        }
        if (uses) fold_lines(out, use_first, use_last, "imports");
        uses = false;
        if (x->kind != DK_OP && x->kind != DK_ARCH && x->kind != DK_MAPPING) continue;
        fold_block(out, f, x->span);
        for (int k = 0; x->kind == DK_ARCH && k < x->u.arch.item_count; k++) {
            const ArchItem *it = x->u.arch.items[k];
            if (it->kind == AI_MEMORY || it->kind == AI_COMPUTE || it->kind == AI_CLUSTER)
                fold_block(out, f, it->span);
        }
    }
    if (uses) fold_lines(out, use_first, use_last, "imports");
    fold_comments(out, f, m);
    return out;
}
