/* lsp_lens.c — code lenses: above each mapping that checks clean, its
 * latency, energy and what bounds it.  The cost comes from the worker's
 * answer for the mapping's key (lsp_worker.c), as inlay hints do, so that
 * costing a mapping (or optimizing one with holes) never runs inside a
 * request: a mapping without an answer yet has no lens until the worker
 * brings one (then workspace/codeLens/refresh, or the waiting request is
 * answered). */
#include "backend/lsp.h"

static json_t *lens_title(Arena *a, json_t *ans) {
    json_t *lens = json_object_get(ans, "lens");
    if (!json_is_true(json_object_get(ans, "ok")) || !lens) {
        const char *status = json_string_value(json_object_get(ans, "status"));
        return lsp_jstr(arena_printf(a, "no complete mapping found (%s)", status ? status : "?"));
    }
    double latency = json_real_value(json_object_get(lens, "latency_s"));
    double energy = json_real_value(json_object_get(lens, "energy_j"));
    const char *bound = json_string_value(json_object_get(lens, "bound"));
    const char *serving = json_string_value(json_object_get(lens, "serving"));
    return lsp_jstr(arena_printf(
        a, "%s%slatency %s · energy %s · %s-bound%s%s", serving ? serving : "",
        serving ? " · " : "", unit_format(a, latency, (UnitDim){BU_SECOND, BU_NONE}),
        unit_format(a, energy, (UnitDim){BU_JOULE, BU_NONE}), bound ? bound : "?",
        json_is_true(json_object_get(lens, "feasible")) ? "" : " · a tile exceeds its level",
        json_is_true(json_object_get(lens, "optimized")) ? " · holes filled by the optimizer"
                                                         : ""));
}

json_t *lsp_code_lenses(LspServer *s, LspDoc *d, bool ask, int *missing) {
    json_t *out = json_array();
    *missing = 0;
    if (!d->prog) return out;
    for (int i = 0; i < d->prog->mapping_count; i++) {
        const IrMapping *m = d->prog->mappings[i];
        LspKey key;
        if (!m || m->span.file != d->file->id || !lsp_mapping_key(d, i, &key)) continue;
        json_t *ans = lsp_work_answer(s, key);
        if (!ans) {
            (*missing)++;
            if (ask) lsp_work_want(s, d, key);
            continue;
        }
        json_array_append_new(out, json_pack("{s:o,s:{s:o,s:s}}", "range",
                                             lsp_range_json(s, d->file, m->name_span), "command",
                                             "title", lens_title(&d->arena, ans), "command", ""));
    }
    return out;
}
