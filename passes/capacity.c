/* capacity.c — capacity diagnostics (E0350): every memory of every level
 * must hold the tiles a group keeps there.  The diagnostic points at the
 * tile line of that level (else the fuse line, else the mapping) and
 * shows the footprint by tensor, the capacity and the excess. */
#include "passes/passes.h"

#include <stdio.h>
#include <string.h>

static const char *bytes_text(Arena *a, double b) {
    return unit_format(a, b, (UnitDim){BU_BYTE, BU_NONE});
}

/* Why a tensor keeps several tiles live: its partial sums survive a
 * reduced loop, a reader waits for a reduction to complete, or a reader
 * keeps the copy it received across a loop that reads it again. */
static void note_live(const Schedule *s, Diag *d, DiagSink *diags, const SchedGroup *g,
                      const Footprint *f, const IrMemory *mem) {
    const IrTensor *tn = &s->op->tensors[f->tensor];
    int maker = f->reader >= 0 ? f->reader : tn->producer;
    char shape[256];
    size_t used = (size_t)snprintf(shape, sizeof shape, "%s[", tn->name);
    for (int r = 0; r < tn->rank && used + 24 < sizeof shape; r++)
        used += (size_t)snprintf(
            shape + used, sizeof shape - used, "%s%.0f", r ? "," : "",
            s->stmts[maker].tile[sched_li(s, mem->level, sched_access_index(s, maker, tn->id, r))]);
    snprintf(shape + used, sizeof shape - used, "]");
    const SchedLoop *lp = &g->loops[f->live_loop];
    const char *loop = s->op->indices[lp->index].name;
    const char *where = s->arch->levels[lp->level < s->levels ? lp->level : s->levels - 1].name;
    if (f->reader >= 0)
        diag_note(d, diags,
                  "%s as read by `%s` is live as %.0f tiles %s of %s each: it receives each tile "
                  "once and reads them all again in every iteration of the loop over the %s "
                  "tiles of %s",
                  tn->name, s->op->stmts[f->reader].name, f->live_tiles, shape,
                  bytes_text(s->arena, f->bytes / f->live_tiles), where, loop);
    else if (f->waiter < 0)
        diag_note(d, diags,
                  "%s is live as %.0f tiles %s of %s each: its partial sums must survive the "
                  "loop over the %s tiles of %s, which runs outside loops over its indices",
                  tn->name, f->live_tiles, shape, bytes_text(s->arena, f->bytes / f->live_tiles),
                  where, loop);
    else
        diag_note(d, diags,
                  "%s is live as %.0f tiles %s of %s each: `%s` reads it only once the loop over "
                  "the %s tiles of %s has completed its other inputs",
                  tn->name, f->live_tiles, shape, bytes_text(s->arena, f->bytes / f->live_tiles),
                  s->op->stmts[f->waiter].name, where, loop);
}

/* The in-group reductions that waiting readers of group g wait for, over
 * the loop their live tiles must survive, which `online` could let them
 * read as they run (docs/language.md 5.6): "mx, s", or "" when none. */
static const char *online_candidates(const Schedule *s, const SchedGroup *g, int memory) {
    int S = s->op->stmt_count;
    bool *named = ARENA_ARRAY(s->arena, bool, S + 1);
    bool *seen = ARENA_ARRAY(s->arena, bool, S + 1);
    int *stack = ARENA_ARRAY(s->arena, int, S + 1);
    for (int k = 0; k < g->footprint_count; k++) {
        const Footprint *f = &g->footprints[k];
        if (f->memory != memory || f->live_tiles <= 1 || f->waiter < 0 || f->live_loop < 0)
            continue;
        int index = g->loops[f->live_loop].index;
        /* the waiter and its in-group makers, transitively: a reader
         * also waits when one of its inputs waited */
        memset(seen, 0, sizeof(bool) * (size_t)S);
        int top = 0;
        stack[top++] = f->waiter;
        seen[f->waiter] = true;
        while (top > 0) {
            const IrStmt *ws = &s->op->stmts[stack[--top]];
            for (int q = 0; q < ws->input_count; q++) {
                int p = s->op->tensors[ws->inputs[q]].producer;
                if (p < 0 || seen[p] || s->stmts[p].group != g->id) continue;
                seen[p] = true;
                stack[top++] = p;
                const IrStmt *ps = &s->op->stmts[p];
                if (ir_stmt_online_kind(ps) && ps->reduced[0] == index &&
                    !(s->m->online && s->m->online[p]))
                    named[p] = true;
            }
        }
    }
    const char *names = "";
    for (int p = 0; p < S; p++)
        if (named[p])
            names =
                arena_printf(s->arena, "%s%s%s", names, *names ? ", " : "", s->op->stmts[p].name);
    return names;
}

/* A training step that does not fit its devices' outermost memory. */
static void report_training(const Schedule *s, DiagSink *diags) {
    const SchedTraining *tr = &s->training;
    if (!tr->present || !(tr->total > tr->capacity)) return;
    const IrMemory *mem = &s->arch->memories[tr->memory];
    Span at = ir_given(s->m->phase_span) ? s->m->phase_span : s->m->span;
    Diag *d;
    if (tr->serving) {
        d = diag_error(diags, s->m->serve.span, "E0363",
                       "the serving step holds %s per device in %s but it holds %s: weights %s + "
                       "caches %s, %s over",
                       bytes_text(s->arena, tr->total), mem->name,
                       bytes_text(s->arena, tr->capacity), bytes_text(s->arena, tr->weights),
                       bytes_text(s->arena, tr->caches),
                       bytes_text(s->arena, tr->total - tr->capacity));
    } else
        d = diag_error(diags, at, "E0351",
                       "the training step holds %s per device in %s but it holds %s: weights %s + "
                       "gradients %s "
                       "+ optimizer state %s + activations %s, %s over",
                       bytes_text(s->arena, tr->total), mem->name,
                       bytes_text(s->arena, tr->capacity), bytes_text(s->arena, tr->weights),
                       bytes_text(s->arena, tr->gradients), bytes_text(s->arena, tr->optimizer),
                       bytes_text(s->arena, tr->activations),
                       bytes_text(s->arena, tr->total - tr->capacity));
    long long layers = (long long)ir_stage_layers(s->m);
    if (s->m->pipeline.full_arch && layers > 1)
        diag_note(d, diags, "over the %lld layers of a pipeline stage, each holding its own",
                  layers);
    else if (layers > 1)
        diag_note(d, diags, "over the mapping's %lld repeats (layers), each holding its own",
                  layers);
    if (tr->serving && s->m->pipeline.microbatches > 1)
        diag_note(d, diags,
                  "and the caches of each of its %lld micro-batches, whose sequences keep them "
                  "between steps",
                  (long long)s->m->pipeline.microbatches);
    /* what fills it: the three largest tensors */
    const char *largest = "";
    bool *named = ARENA_ARRAY(s->arena, bool, s->op->tensor_count + 1);
    for (int k = 0; k < 3; k++) {
        int best = -1;
        for (int t = 0; t < s->op->tensor_count; t++)
            if (!named[t] && tr->held[t] > 0 && (best < 0 || tr->held[t] > tr->held[best]))
                best = t;
        if (best < 0) break;
        named[best] = true;
        static const char *const kinds[] = {[TU_DATA] = "activation",
                                            [TU_WEIGHT] = "weight",
                                            [TU_WEIGHT_GRAD] = "weight gradient",
                                            [TU_OPT_STATE] = "optimizer state",
                                            [TU_CACHE] = "cache",
                                            [TU_ROUTE] = "routing"};
        largest = arena_printf(s->arena, "%s%s`%s` (%s) %s", largest, k ? ", " : "",
                               s->op->tensors[best].name, kinds[s->op->tensors[best].use],
                               bytes_text(s->arena, tr->held[best]));
    }
    if (*largest)
        diag_note(d, diags, "the largest%s: %s",
                  s->m->repeat > 1 && tr->serving && s->m->pipeline.microbatches > 1
                      ? ", per repeat and micro-batch"
                  : s->m->repeat > 1                               ? ", per repeat"
                  : tr->serving && s->m->pipeline.microbatches > 1 ? ", per micro-batch"
                                                                   : "",
                  largest);
    diag_label(d, diags, mem->span, "%s is declared here", mem->name);
    if (tr->serving)
        diag_help(d, diags,
                  "split the weights and caches over more devices (tensor parallelism), or serve "
                  "fewer sequences or a shorter context");
    else
        diag_help(d, diags,
                  "split the weights over more devices (tensor parallelism), recompute "
                  "activations (`recompute full;`), or take a smaller batch");
}

void report_capacity(const Schedule *s, DiagSink *diags) {
    const IrArch *arch = s->arch;
    report_training(s, diags);
    for (int e = 0; e < s->excess_count; e++) {
        const CapacityExcess *x = &s->excess[e];
        const IrMemory *mem = &arch->memories[x->memory];
        const SchedGroup *g = &s->groups[x->group];
        char terms[1024] = "";
        size_t used = 0;
        for (int k = 0; k < g->footprint_count && used + 64 < sizeof terms; k++) {
            const Footprint *f = &g->footprints[k];
            if (f->memory != x->memory) continue;
            used += (size_t)snprintf(
                terms + used, sizeof terms - used, "%s%s%s%s %s%s%s", used ? " + " : "",
                s->op->tensors[f->tensor].name, f->reader >= 0 ? " as read by " : "",
                f->reader >= 0 ? s->op->stmts[f->reader].name : "",
                bytes_text(s->arena, footprint_need(f)), f->in_place > 0 ? " beyond " : "",
                f->in_place > 0 ? s->op->tensors[f->host].name : "");
        }
        char stmts[512] = "";
        size_t su = 0;
        for (int k = 0; k < g->stmt_count && su + 40 < sizeof stmts; k++)
            su += (size_t)snprintf(stmts + su, sizeof stmts - su, "%s%s", k ? " " : "",
                                   s->op->stmts[g->stmts[k]].name);
        char role[64] = "";
        if (mem->role != ROLE_ANY)
            snprintf(role, sizeof role, " (role %s)", mem_role_name(mem->role));
        Diag *d = diag_error(
            diags, x->span, "E0350",
            "tiles of group %d [%s] need %s in %s%s but it holds %s per instance: %s = %s, "
            "%s over",
            x->group, stmts, bytes_text(s->arena, x->need), mem->name, role,
            bytes_text(s->arena, x->capacity), terms, bytes_text(s->arena, x->need),
            bytes_text(s->arena, x->need - x->capacity));
        bool any_live = false;
        for (int k = 0; k < g->footprint_count; k++) {
            const Footprint *f = &g->footprints[k];
            if (f->memory != x->memory || f->live_tiles <= 1) continue;
            any_live = true;
            note_live(s, d, diags, g, f, mem);
        }
        diag_label(d, diags, mem->span, "%s is declared here", mem->name);
        if (any_live)
            diag_help(d, diags,
                      "order the loop that the tiles must survive inside the loops over their "
                      "indices, fuse at a level with room, or leave the tensor out of the group "
                      "(its partial sums are then written back and read again)");
        else
            diag_help(d, diags, "shrink the tiles at %s or fuse fewer statements at it", mem->name);
        const char *online = any_live ? online_candidates(s, g, x->memory) : "";
        if (*online)
            diag_help(d, diags,
                      "or let the readers take the running value: `online %s;` "
                      "(docs/language.md 5.6)",
                      online);
    }
}

void check_mapping_capacity(Program *p) {
    for (int i = 0; i < p->mapping_count; i++) {
        const IrMapping *m = p->mappings[i];
        if (!m || !m->op || !m->arch) continue;
        if (report_unsupported(p, m) || m->hole_count > 0) continue;
        Arena scratch = {0};
        /* footprints and excesses are pass_tiles' work, a training step's
         * memory pass_training's; the rest of the lowering would cost a
         * fifth of `cmtc check` for nothing here */
        const LowerOptions through_training = {.stop_after = "training"};
        Schedule *s = lower_mapping(&scratch, m, false, &through_training);
        report_capacity(s, p->diags);
        arena_free_all(&scratch);
    }
}
