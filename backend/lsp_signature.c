/* lsp_signature.c — signature help for op parameters: inside the `<...>`
 * of `mapping m for OP<...>`, the op's parameters with their defaults,
 * the one being written highlighted.  Read from the text around the
 * cursor, since a header being typed does not parse yet. */
#include "backend/emit.h"
#include "backend/lsp.h"

#include <string.h>

static bool word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The offset of the `<` of the binding list the cursor is in, or -1. */
static int64_t open_angle(const char *t, uint32_t off) {
    int depth = 0;
    for (uint32_t i = off; i > 0; i--) {
        char c = t[i - 1];
        if (c == ';' || c == '{' || c == '}') return -1;
        if (c == '>' || c == ')') depth++;
        if (c == '(' && depth > 0) depth--;
        if (c == '<') {
            if (depth == 0) return i - 1;
            depth--;
        }
    }
    return -1;
}

/* The word ending at end (blanks skipped first); [*start, end) */
static uint32_t word_before(const char *t, uint32_t end, uint32_t *start) {
    while (end > 0 &&
           (t[end - 1] == ' ' || t[end - 1] == '\t' || t[end - 1] == '\n' || t[end - 1] == '\r'))
        end--;
    uint32_t b = end;
    while (b > 0 && word_char(t[b - 1])) b--;
    *start = b;
    return end;
}

/* The parameter a binding segment names: the word before its `=`, or the
 * word being typed. */
static Name segment_name(const char *t, uint32_t from, uint32_t to) {
    while (from < to && !word_char(t[from])) from++;
    uint32_t e = from;
    while (e < to && word_char(t[e])) e++;
    return e > from ? intern(t + from, e - from) : NULL;
}

json_t *lsp_signature_help(LspServer *s, LspDoc *d, uint32_t offset) {
    (void)s;
    const char *t = d->file->text;
    if (offset > d->file->len) offset = (uint32_t)d->file->len;
    int64_t lt = open_angle(t, offset);
    if (lt < 0) return json_null();
    uint32_t name_start, name_end = word_before(t, (uint32_t)lt, &name_start);
    uint32_t for_start, for_end = word_before(t, name_start, &for_start);
    if (name_end == name_start || for_end - for_start != 3 || strncmp(t + for_start, "for", 3) != 0)
        return json_null();
    const Decl *op =
        lsp_find_global(lsp_doc_scope(d), intern(t + name_start, name_end - name_start), DK_OP);
    if (!op || op->u.op.param_count == 0) return json_null();
    const OpDecl *od = &op->u.op;

    /* which parameters the earlier bindings named, and the current one */
    bool *bound = ARENA_ARRAY(&d->arena, bool, od->param_count);
    uint32_t seg = (uint32_t)lt + 1;
    int depth = 0;
    for (uint32_t i = seg; i < offset; i++) {
        if (t[i] == '(') depth++;
        if (t[i] == ')' && depth > 0) depth--;
        if (t[i] != ',' || depth > 0) continue;
        Name n = segment_name(t, seg, i);
        for (int k = 0; k < od->param_count; k++)
            if (od->params[k].name.name == n) bound[k] = true;
        seg = i + 1;
    }
    Name current = segment_name(t, seg, offset);
    int active = -1;
    for (int k = 0; k < od->param_count && active < 0; k++)
        if (od->params[k].name.name == current) active = k;
    for (int k = 0; k < od->param_count && active < 0; k++)
        if (!bound[k]) active = k;

    Text label = {.a = &d->arena};
    text_add(&label, "%s<", op->name.name);
    json_t *params = json_array();
    for (int k = 0; k < od->param_count; k++) {
        const Param *p = &od->params[k];
        if (k) text_add(&label, ", ");
        size_t from = label.len;
        text_add(&label, "%s", p->name.name);
        const char *doc;
        if (p->default_value) {
            const SourceFile *f = lsp_scope_file(lsp_doc_scope(d), p->default_value->span.file);
            Span v = p->default_value->span;
            const char *text = f && v.end <= f->len
                                   ? arena_strndup(&d->arena, f->text + v.start, v.end - v.start)
                                   : "?";
            text_add(&label, " = %s", text);
            doc = arena_printf(&d->arena, "parameter of `%s`; %s when not bound", op->name.name,
                               text);
        } else {
            doc = arena_printf(&d->arena, "parameter of `%s`; no default: a mapping must bind it",
                               op->name.name);
        }
        json_array_append_new(params, json_pack("{s:[I,I],s:o}", "label", (json_int_t)from,
                                                (json_int_t)(from + strlen(p->name.name)),
                                                "documentation", lsp_jstr(doc)));
    }
    text_add(&label, ">");
    json_t *sig = json_pack("{s:o,s:o}", "label", lsp_jstr(label.buf), "parameters", params);
    json_t *out = json_pack("{s:[o],s:i}", "signatures", sig, "activeSignature", 0);
    if (active >= 0) json_object_set_new(out, "activeParameter", json_integer(active));
    return out;
}
