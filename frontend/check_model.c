/* check_model.c — models (docs/language.md 5.13): a model names the
 * mapping of its repeated layers and, optionally, those of its embedding
 * and its head.  The parts are mappings of the root file that checked;
 * the embedding and the head run once per micro-batch of the layers'
 * step, so they carry no step of their own (no pipeline, micro-batches,
 * repeat or serving line), run in the layers' phase, and run on the
 * devices of one stage: on the layers' arch with the pipeline's dim of
 * size 1 (the first stage for the embedding, the last for the head). */
#include "sema.h"

#include <string.h>

typedef enum ModelRole { MR_EMBED, MR_LAYERS, MR_HEAD, MR_COUNT } ModelRole;
static const char *const role_words[MR_COUNT] = {"embed", "layers", "head"};

/* The checked mapping of the root file called `name`, or NULL (reported
 * unless its declaration was, or a used file is missing). */
static const IrMapping *part_mapping(Sema *s, const Ident *name) {
    const Program *p = s->prog;
    for (int i = 0; i < p->mapping_count; i++)
        if (p->mappings[i]->name == name->name) return p->mappings[i];
    GlobalEntry *g = globals_find(s->globals, name->name);
    if (g && g->decl->kind == DK_MAPPING) return NULL; /* its errors were reported */
    if (!g && module_missing(s->diags)) return NULL;
    Arena *a = s->arena;
    int n = 0;
    const char **names = globals_names(a, s->globals, (int)DK_MAPPING, &n);
    Diag *d = diag_error(s->diags, name->span, "E0380",
                         g ? "`%s` is not a mapping" : "unknown mapping `%s`", name->name);
    if (g) diag_label(d, s->diags, g->decl->name.span, "`%s` is defined here", name->name);
    const char *best = spell_suggest(name->name, names, n);
    if (best) diag_help(d, s->diags, "did you mean `%s`?", best);
    return NULL;
}

/* The embedding or the head: one micro-batch's work in the layers' step. */
static bool part_fits(Sema *s, const Ident *role, const IrMapping *m, const IrMapping *layers) {
    const char *what = role->name;
    const char *line = m->pipeline.full_arch || m->pipeline.span.file >= 0 ? "pipeline"
                       : m->pipeline.microbatches > 1 || m->pipeline.microbatches_span.file >= 0
                           ? "microbatches"
                       : m->repeat > 1               ? "repeat"
                       : m->serve.kind != SERVE_NONE ? "serve"
                                                     : NULL;
    if (line) {
        Diag *d = diag_error(s->diags, role->span, "E0381",
                             "the %s of a model runs once per micro-batch of its layers' step, "
                             "but mapping `%s` has a `%s` line",
                             what, m->name, line);
        diag_label(d, s->diags, m->name_span, "mapping `%s` is declared here", m->name);
        diag_help(d, s->diags,
                  "the layers' mapping sets the step (pipeline, micro-batches, layers); remove "
                  "the `%s` line from `%s`",
                  line, m->name);
        return false;
    }
    if (m->phase != layers->phase) {
        Diag *d =
            diag_error(s->diags, role->span, "E0381",
                       "mapping `%s` is `phase %s` but the layers' `%s` is `phase %s`", m->name,
                       phase_name(m->phase), layers->name, phase_name(layers->phase));
        diag_label(d, s->diags, m->name_span, "mapping `%s` is declared here", m->name);
        diag_help(d, s->diags, "a model's parts run in one phase: give `%s` `phase %s;`", m->name,
                  phase_name(layers->phase));
        return false;
    }
    /* one stage's devices: the layers' arch with the pipeline's dim of
     * size 1, or the layers' arch itself without a pipeline */
    const IrArch *want = layers->pipeline.full_arch ? layers->pipeline.full_arch : layers->arch;
    int stage_dim = layers->pipeline.full_arch ? layers->pipeline.dim : -1;
    const IrArch *got = m->arch;
    bool same = got->dim_count == want->dim_count;
    for (int d = 0; same && d < got->dim_count; d++) {
        int64_t size = d == stage_dim ? 1 : want->dims[d].size;
        same = got->dims[d].name == want->dims[d].name && got->dims[d].size == size;
    }
    if (!same) {
        Diag *d;
        if (stage_dim >= 0) {
            d = diag_error(s->diags, role->span, "E0382",
                           "the %s runs on one stage of the layers' pipeline over `%s`, but "
                           "mapping `%s` is on `%s`, whose dims are not `%s`'s with `%s = 1`",
                           what, want->dims[stage_dim].name, m->name, got->name, want->name,
                           want->dims[stage_dim].name);
            diag_help(d, s->diags,
                      "map `%s` on an arch of one stage: `%s`'s clusters with `%s = 1` (declare "
                      "it `arch NAME : %s { ... }`, restating the stages' cluster)",
                      m->name, want->name, want->dims[stage_dim].name, want->name);
        } else {
            d = diag_error(s->diags, role->span, "E0382",
                           "the %s runs on the devices of the layers, but mapping `%s` is on "
                           "`%s` and the layers' `%s` on `%s`",
                           what, m->name, got->name, layers->name, want->name);
            diag_help(d, s->diags, "map `%s` on `%s`", m->name, want->name);
        }
        diag_label(d, s->diags, m->name_span, "mapping `%s` is declared here", m->name);
        return false;
    }
    return true;
}

void check_model(Sema *s, const Decl *decl) {
    const ModelDecl *md = &decl->u.model;
    const IrMapping *parts[MR_COUNT] = {NULL, NULL, NULL};
    const Ident *roles[MR_COUNT] = {NULL, NULL, NULL};
    bool ok = true, bad_role = false;
    for (int i = 0; i < md->part_count; i++) {
        const ModelPart *part = &md->parts[i];
        if (!part->role.name || !part->mapping.name) {
            ok = false;
            continue;
        }
        int r = 0;
        while (r < MR_COUNT && strcmp(part->role.name, role_words[r]) != 0) r++;
        if (r == MR_COUNT) {
            Diag *d = diag_error(s->diags, part->role.span, "E0380",
                                 "unknown part `%s` of a model: expected `embed`, `layers` or "
                                 "`head`",
                                 part->role.name);
            const char *best = spell_suggest(part->role.name, role_words, MR_COUNT);
            if (best) diag_help(d, s->diags, "did you mean `%s`?", best);
            ok = false;
            bad_role = true;
            continue;
        }
        if (roles[r]) {
            Diag *d = diag_error(s->diags, part->role.span, "E0380", "a model has one `%s`",
                                 role_words[r]);
            diag_label(d, s->diags, roles[r]->span, "given here first");
            ok = false;
            continue;
        }
        roles[r] = &part->role;
        parts[r] = part_mapping(s, &part->mapping);
        if (!parts[r]) ok = false;
    }
    if (!roles[MR_LAYERS] && !bad_role) {
        Diag *d = diag_error(s->diags, decl->name.span, "E0380",
                             "model `%s` has no `layers`: the mapping of its repeated layers",
                             decl->name.name);
        diag_help(d, s->diags, "add `layers MAPPING;`");
        return;
    }
    if (!roles[MR_LAYERS]) return;
    const IrMapping *layers = parts[MR_LAYERS];
    if (!ok || !layers) return;
    for (int k = 0; k < layers->choice_count; k++)
        if (layers->choices[k]->pipeline.dim_chosen) {
            Diag *d = diag_error(s->diags, roles[MR_LAYERS]->span, "E0382",
                                 "the layers of a model name their pipeline's dim: `%s` leaves "
                                 "it to the optimizer (`pipeline ?`)",
                                 layers->name);
            diag_help(d, s->diags,
                      "the embedding and the head are mapped on one stage, so the stages' "
                      "dim must be known: write `pipeline D;`");
            return;
        }
    for (int r = 0; r < MR_COUNT; r++)
        if (r != MR_LAYERS && parts[r] && !part_fits(s, roles[r], parts[r], layers)) ok = false;
    if (!ok) return;
    IrModel *model = ARENA_NEW(s->prog->arena, IrModel);
    model->name = decl->name.name;
    model->span = decl->span;
    model->embed = parts[MR_EMBED];
    model->layers = layers;
    model->head = parts[MR_HEAD];
    Program *p = s->prog;
    ptrvec_push(p->arena, &s->models, model);
    p->models = (const IrModel **)s->models.items;
    p->model_count = s->models.count;
}
