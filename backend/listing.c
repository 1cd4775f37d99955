/* listing.c — the text listing of `cmtc compile` (language.md section 6):
 * per mapping a header with every decision tagged given/default/derived,
 * the totals and the unfused baseline; per group its bound and the loop
 * nest per level, outermost first, with every load, store, compute and
 * collective under the loop that repeats it: bytes, time, energy, reason. */
#include "backend/emit.h"

#include <math.h>
#include <string.h>

static const char *fmt_bytes(Arena *a, double v) {
    return unit_format(a, v, (UnitDim){BU_BYTE, BU_NONE});
}
static const char *fmt_time(Arena *a, double v) {
    return unit_format(a, v, (UnitDim){BU_SECOND, BU_NONE});
}
static const char *fmt_energy(Arena *a, double v) {
    return unit_format(a, v, (UnitDim){BU_JOULE, BU_NONE});
}

/* A rate to four significant figures: 1188, 37.25, 0.4105. */
/* A rate or count: four digits, with a decimal prefix past 10^4 (`3281`,
 * `19.51 M`), never an exponent (docs/units.md). */
static const char *fmt_count(Arena *a, double v) {
    static const char *const prefix[] = {"k", "M", "G", "T", "P"};
    if (!(fabs(v) >= 1e4) || !isfinite(v)) return arena_printf(a, "%.4g", v);
    int p = 0;
    v /= 1e3;
    while (fabs(v) >= 1e3 && p < 4) {
        v /= 1e3;
        p++;
    }
    return arena_printf(a, "%.4g %s", v, prefix[p]);
}

static const char *level_name(const Schedule *s, int l) {
    if (l < 0) return "-";
    if (l >= s->levels) return "unit";
    return s->arch->levels[l].name;
}

/* T[64,128]: the tile of a tensor as a statement holds it at a level. */
static const char *tile_text(Arena *a, const Schedule *s, int st, int t, int level) {
    const IrTensor *tn = &s->op->tensors[t];
    char buf[256];
    size_t used = (size_t)snprintf(buf, sizeof buf, "%s[", tn->name);
    for (int r = 0; r < tn->rank && used + 24 < sizeof buf; r++) {
        double v = st >= 0 ? s->stmts[st].tile[sched_li(s, level, sched_access_index(s, st, t, r))]
                           : (double)tn->extent[r];
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%.0f", r ? "," : "", v);
    }
    snprintf(buf + used, sizeof buf - used, "]");
    return arena_strdup(a, buf);
}

static const char *stmt_text(Arena *a, const Schedule *s, int st) {
    const IrStmt *is = &s->op->stmts[st];
    if (is->text) return is->text;
    char buf[256];
    size_t used = (size_t)snprintf(buf, sizeof buf, "%s = ", is->name);
    for (int q = 0; q < is->input_count && used + 20 < sizeof buf; q++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", q ? ", " : "",
                                 s->op->tensors[is->inputs[q]].name);
    if (used >= sizeof buf) strcpy(buf + sizeof buf - 4, "...");
    return arena_strdup(a, buf);
}

static void print_node(FILE *out, Arena *a, const Schedule *s, const SchedNode *n, int indent) {
    char what[96], route[96];
    route[0] = 0;
    switch (n->kind) {
    case SN_LOAD:
    case SN_STORE:
        snprintf(
            what, sizeof what, "%s",
            tile_text(a, s, n->stmt, n->tensor, n->kind == SN_LOAD ? n->to_level : n->from_level));
        /* a result stored out of an accumulator names it, not its level */
        snprintf(route, sizeof route, "%s->%s",
                 n->kind == SN_STORE && n->memory >= 0 &&
                         s->arch->memories[n->memory].role == ROLE_ACCUMULATOR
                     ? s->arch->memories[n->memory].name
                     : level_name(s, n->from_level),
                 level_name(s, n->to_level));
        break;
    case SN_COMPUTE:
        if (n->rescale)
            snprintf(what, sizeof what, "rescale %s", s->op->stmts[n->stmt].name);
        else
            snprintf(what, sizeof what, "%s", stmt_text(a, s, n->stmt));
        snprintf(route, sizeof route, "%s", n->unit ? n->unit->name : "-");
        break;
    case SN_COLLECTIVE:
        if (n->reduce_op != RO_NONE)
            snprintf(what, sizeof what, "%s %s", reduce_op_name(n->reduce_op),
                     s->op->tensors[n->tensor].name);
        else
            snprintf(what, sizeof what, "%s",
                     n->from_level >= 0 ? tile_text(a, s, n->stmt, n->tensor, n->to_level)
                                        : s->op->tensors[n->tensor].name);
        snprintf(route, sizeof route, "over %s", sched_dims_text(a, s, n->dims, n->dim_count));
        break;
    case SN_BOUNDARY:
        snprintf(what, sizeof what, "%s", tile_text(a, s, -1, n->tensor, 0));
        snprintf(route, sizeof route, "via %s", level_name(s, 0));
        break;
    }
    const char *kind =
        n->kind == SN_COLLECTIVE ? coll_kind_name(n->coll) : sched_kind_name(n->kind);
    char amount[64];
    if (n->kind == SN_COMPUTE)
        snprintf(amount, sizeof amount, "%s",
                 unit_format(
                     a, n->ops,
                     (UnitDim){(uint8_t)(s->op->stmts[n->stmt].cls == SC_CONTRACTION && !n->rescale
                                             ? BU_MAC
                                             : BU_OP),
                               BU_NONE}));
    else if (n->count > 1)
        snprintf(amount, sizeof amount, "%s x%.0f", fmt_bytes(a, n->bytes), n->count);
    else
        snprintf(amount, sizeof amount, "%s", fmt_bytes(a, n->bytes));
    fprintf(out, "%*s%-14s %-28s %-14s %-16s %-10s %-10s", indent, "", kind, what, route, amount,
            fmt_time(a, n->latency_s), fmt_energy(a, n->energy_j));
    if (n->reason) fprintf(out, " %s", n->reason);
    fputc('\n', out);
}

/* The tiles a group holds once though it refills them, for want of room
 * for the next one (docs/cost-model.md section 2, double buffering): their
 * moves wait (the group's stall). */
static void print_held_once(FILE *out, const Schedule *s, const SchedGroup *g) {
    bool any = false;
    for (int k = 0; k < g->footprint_count; k++) {
        const Footprint *f = &g->footprints[k];
        if (!f->exposed) continue;
        fprintf(out, "%s %s at %s", any ? "," : "    held once, no room for the next tile:",
                s->op->tensors[f->tensor].name, s->arch->memories[f->memory].name);
        any = true;
    }
    if (any) fputc('\n', out);
}

/* Under overlap, a group whose two units both work (or whose collectives
 * are cut into tiles) runs as a pipeline of stages (docs/cost-model.md
 * section 7): each stage's time and depth, the one that sets the pace,
 * and what the others add (one piece each), as pass_cost recorded them. */
static void print_pipeline(FILE *out, Arena *a, const Schedule *s, const SchedGroup *g) {
    if (g->overlap == OVERLAP_NONE) return;
    if (!(g->matrix_s > 0 && g->vector_s > 0) && g->overlap != OVERLAP_TILES) return;
    const IrCompute *mu = ir_matrix_unit(s->arch), *vu = ir_vector_unit(s->arch);
    const char *names[4] = {mu ? mu->name : "matrix", vu ? vu->name : "vector", "memory",
                            "network"};
    bool local = g->overlap == OVERLAP_LOCAL;
    const double *x = g->stage_s, *pieces = g->stage_pieces;
    int peak = g->pace;
    fprintf(out, "    pipeline (overlap %s%s):", overlap_words[g->overlap],
            g->reserved ? arena_printf(a, ", %lld of %lld units run the collectives",
                                       (long long)g->reserve.units, (long long)g->reserve.total)
                        : "");
    bool first = true;
    for (int k = 0; k < 4; k++) {
        if (!(x[k] > 0)) continue;
        fprintf(out, "%s %s %s", first ? "" : " |", names[k], fmt_time(a, x[k]));
        if (k != peak)
            fprintf(out, " (+%s: 1 of %.0f %s)", fmt_time(a, x[k] / pieces[k]), pieces[k],
                    k == 3 && g->overlap == OVERLAP_TILES ? "chunks" : "tiles");
        else
            fprintf(out, " (sets the pace)");
        first = false;
    }
    if (local && g->cost.network_s > 0)
        fprintf(out, " | then network %s (after the rest)", fmt_time(a, g->cost.network_s));
    fputc('\n', out);
}

/* solved: the optimizer filled the mapping's holes, so a fusion level it
 * wrote into the mapping is derived, as in the decision header. */
static void print_group(FILE *out, Arena *a, const Schedule *s, const SchedGroup *g, bool solved) {
    const IrOp *op = s->op;
    char names[512] = "";
    size_t used = 0;
    for (int k = 0; k < g->stmt_count && used + 40 < sizeof names; k++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", k ? " " : "",
                                 op->stmts[g->stmts[k]].name);
    fprintf(
        out,
        "  group %d at %s (%s%s%s) [%s]  %s  %s-bound (compute %s, memory %s, network %s, "
        "fill/drain %s%s%s%s%s)  energy %s\n",
        g->id, level_name(s, g->level),
        solved && g->level_prov == PV_GIVEN ? "derived" : provenance_name(g->level_prov),
        g->overlap_own ? ", overlap " : "", g->overlap_own ? overlap_words[g->overlap] : "", names,
        fmt_time(a, g->cost.latency_s), bound_name(g->cost.bound), fmt_time(a, g->cost.compute_s),
        fmt_time(a, g->cost.memory_s), fmt_time(a, g->cost.network_s),
        fmt_time(a, g->cost.fill_drain_s), g->cost.stall_s > 0 ? ", stall " : "",
        g->cost.stall_s > 0 ? fmt_time(a, g->cost.stall_s) : "", g->launch_s > 0 ? ", launch " : "",
        g->launch_s > 0 ? fmt_time(a, g->launch_s) : "", fmt_energy(a, g->cost.energy_j));
    print_held_once(out, s, g);
    print_pipeline(out, a, s, g);
    fprintf(out, "    memory per level:");
    for (int l = 0; l < s->levels; l++)
        fprintf(out, " %s %s", level_name(s, l), fmt_time(a, g->level_s[l]));
    fputc('\n', out);
    /* nodes outside every loop, then each loop with the nodes it repeats */
    int indent = 4;
    int first = g->first_node, end = g->first_node + g->node_count;
    for (int i = first; i >= 0 && i < end; i++)
        if (s->nodes[i].depth < 0 && !s->nodes[i].after_inner && s->nodes[i].kind != SN_BOUNDARY)
            print_node(out, a, s, &s->nodes[i], indent);
    for (int k = 0; k < g->loop_count; k++) {
        const SchedLoop *lp = &g->loops[k];
        indent = 4 + 2 * k;
        fprintf(out, "%*sfor %s in 0..%.0f step %.0f  @%s  %.0f iterations  (order %s)\n", indent,
                "", op->indices[lp->index].name, lp->extent, lp->step, level_name(s, lp->level - 1),
                lp->trips, provenance_name(lp->order_prov));
        for (int i = first; i >= 0 && i < end; i++)
            if (s->nodes[i].depth == k && !s->nodes[i].after_inner &&
                s->nodes[i].kind != SN_BOUNDARY)
                print_node(out, a, s, &s->nodes[i], indent + 2);
    }
    /* nodes that wait for the loops inside theirs (a reduction's
     * collective after the loops over the reduced index), innermost first,
     * each at its own loop's indentation below the loops it waits for */
    for (int k = g->loop_count - 1; k >= -1; k--)
        for (int i = first; i >= 0 && i < end; i++)
            if (s->nodes[i].depth == k && s->nodes[i].after_inner &&
                s->nodes[i].kind != SN_BOUNDARY)
                print_node(out, a, s, &s->nodes[i], 4 + 2 * k + 2);
    for (int i = g->first_node; i >= 0 && i < g->first_node + g->node_count; i++)
        if (s->nodes[i].kind == SN_BOUNDARY) print_node(out, a, s, &s->nodes[i], 4);
}

/* `pipeline` and `microbatches` (docs/cost-model.md 13.2): the step they
 * compose, term by term, so the terms add up to the latency. */
static void print_step(FILE *out, Arena *a, const Schedule *s) {
    const IrMapping *m = s->m;
    const SchedPipeline *pp = &s->pipeline;
    if (!pp->present) return;
    const IrPipeline *pl = &m->pipeline;
    if (pl->full_arch) {
        const char *schedule = pl->schedule == PIPE_INTERLEAVED
                                   ? arena_printf(a, "interleaved %lld", (long long)pl->chunks)
                                   : pipe_schedule_name(pl->schedule);
        fprintf(out,
                "  %-40s %-9s %.0f stages of %.0f layers (the busiest), %s; the first holds "
                "%.3g micro-batches' activations\n",
                arena_printf(a, "pipeline %s %s", pl->full_arch->dims[pl->dim].name, schedule),
                pl->dim_chosen ? "derived" : "given", pp->stages, pp->layers, schedule,
                pp->in_flight);
    }
    fprintf(out, "  %-40s %s\n",
            pl->batch_param ? arena_printf(a, "microbatches %.0f of %s", pp->micro, pl->batch_param)
                            : arena_printf(a, "microbatches %.0f", pp->micro),
            pl->microbatches_chosen           ? "derived"
            : ir_given(pl->microbatches_span) ? "given"
                                              : "default");
    fprintf(out,
            "  %-40s derived   %.0f x (forward %s + backward %s) + bubble %s + sends %s + update "
            "%s + gradient reductions %s = %s\n",
            "step", pp->micro, fmt_time(a, pp->stage_forward_s), fmt_time(a, pp->stage_backward_s),
            fmt_time(a, pp->bubble_s), fmt_time(a, pp->send_s), fmt_time(a, pp->update_total_s),
            fmt_time(a, pp->reduction_total_s), fmt_time(a, pp->step_s));
    if (pl->full_arch && !pp->simulated && pp->steady_micro > 0)
        fprintf(out,
                "  %-40s derived   past %ld stages x chunks x micro-batches the schedule is run "
                "with %.0f and %.0f micro-batches and the step grows by the slope between them "
                "(docs/cost-model.md 13.2)\n",
                "", PIPELINE_SIM_SLOTS, pp->steady_micro / 2, pp->steady_micro);
    else if (pl->full_arch && !pp->simulated)
        fprintf(
            out,
            "  %-40s derived   past %ld stages x chunks x micro-batches the schedule is not run "
            "pass by pass: the sends by the closed form (docs/cost-model.md 13.2)\n",
            "", PIPELINE_SIM_SLOTS);
    if (pl->full_arch)
        fprintf(out,
                "  %-40s derived   per micro-batch: forward %s in %s, backward %s in %s, over "
                "`%s`\n",
                "sends between stages", fmt_bytes(a, pp->send_forward_bytes),
                fmt_time(a, pp->send_forward_s), fmt_bytes(a, pp->send_backward_bytes),
                fmt_time(a, pp->send_backward_s), pl->full_arch->dims[pl->dim].name);
}

static void print_decisions(FILE *out, Arena *a, const Schedule *s, bool solved) {
    const IrMapping *m = s->m;
    /* what the optimizer filled in is derived, not given */
    const char *given = solved ? "derived" : "given";
    const IrOp *op = s->op;
    /* spatial: per index, the dims and the per-instance extent */
    bool any = false;
    /* a line per index split alone, and per joint deal, each shown by the
     * first statement that takes it */
    for (int i = 0; i < op->index_count; i++)
        for (int joint = 0; joint < 2; joint++) {
            int dims[SCHED_MAX_DIMS], dc = 0;
            int who = -1;
            for (int st = 0; st < op->stmt_count && who < 0; st++)
                for (int d = 0; d < s->arch->dim_count; d++)
                    if (s->stmts[st].split[d] == i && (s->stmts[st].joint[d][0] >= 0) == joint)
                        who = st;
            if (who < 0) continue;
            for (int d = 0; d < s->arch->dim_count; d++)
                if (s->stmts[who].split[d] == i) dims[dc++] = d;
            any = true;
            if (joint) { /* `(m, n) -> sm`: each index's share of the deal */
                int ix[IR_MAX_JOINT], n = sched_dim_indices(&s->stmts[who], dims[0], ix);
                const char *names = op->indices[ix[0]].name, *shares = "";
                for (int k = 0; k < n; k++) {
                    if (k) names = arena_printf(a, "%s, %s", names, op->indices[ix[k]].name);
                    shares =
                        arena_printf(a, "%s%s%s: %lld -> %.4g", shares, k ? ", " : "",
                                     op->indices[ix[k]].name, (long long)op->indices[ix[k]].extent,
                                     s->stmts[who].extent[sched_li(s, s->levels, ix[k])]);
                }
                fprintf(
                    out, "  %-40s %-9s %s per instance, dealt jointly (statement %s)\n",
                    arena_printf(a, "spatial (%s) -> %s", names, sched_dims_text(a, s, dims, dc)),
                    given, shares, op->stmts[who].name);
                continue;
            }
            fprintf(out, "  %-40s %-9s %s: %lld -> %.0f per instance (statement %s)\n",
                    arena_printf(a, "spatial %s -> %s", op->indices[i].name,
                                 sched_dims_text(a, s, dims, dc)),
                    given, op->indices[i].name, (long long)op->indices[i].extent,
                    s->stmts[who].extent[sched_li(s, s->levels, i)], op->stmts[who].name);
        }
    if (!any) fprintf(out, "  %-40s default   every instance runs everything\n", "spatial (none)");
    /* tiles: a line per level, and one per `tile L for ...` line naming
     * statements there, each over the statements it gives tiles to (the
     * mapping-wide line: those no `for` line names at the level) */
    bool *among = ARENA_ARRAY(a, bool, op->stmt_count + 1);
    for (int l = 1; l < s->levels; l++)
        for (int line = 0; line <= m->tile.line_count; line++) {
            const char *head = "";
            int n = 0;
            for (int st = 0; st < op->stmt_count; st++) {
                bool named = false, by_line = false;
                for (int i = 0; i < op->index_count; i++) {
                    int f = m->tile.from[ir_tile_slot(m, st, l, i)];
                    named |= f > 0;
                    by_line |= f == line;
                }
                among[st] = line == 0 ? !named : by_line;
                if (line > 0 && among[st])
                    head = arena_printf(a, "%s%s%s", head, n ? ", " : " for ", op->stmts[st].name);
                if (among[st]) n++;
            }
            if (n == 0 && (line > 0 || m->tile.line_count > 0)) continue;
            char buf[256] = "";
            size_t used = 0;
            bool tiled = false;
            for (int i = 0; i < op->index_count && used + 40 < sizeof buf; i++) {
                double t = 0;
                Provenance pv = PV_DEFAULT;
                bool uses = false;
                for (int st = 0; st < op->stmt_count; st++)
                    if (among[st] && ir_stmt_uses_index(&op->stmts[st], i)) {
                        uses = true;
                        if (s->stmts[st].tile[sched_li(s, l, i)] > t) {
                            t = s->stmts[st].tile[sched_li(s, l, i)];
                            pv = s->stmts[st].tile_prov[sched_li(s, l, i)];
                        }
                    }
                if (!uses) continue;
                tiled |= pv == PV_GIVEN;
                used +=
                    (size_t)snprintf(buf + used, sizeof buf - used, "%s%s %.0f%s", used ? ", " : "",
                                     op->indices[i].name, t, pv == PV_GIVEN ? "" : "*");
            }
            fprintf(out, "  %-40s %-9s (* not given: the whole share of the level above)\n",
                    arena_printf(a, "tile %s%s: %s", level_name(s, l), head, buf),
                    tiled ? given : "default");
        }
    for (int g = 0; g < s->group_count; g++) {
        const SchedGroup *grp = &s->groups[g];
        if (!grp->fused) continue;
        char buf[256] = "";
        size_t used = 0;
        for (int k = 0; k < grp->stmt_count && used + 40 < sizeof buf; k++)
            used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", k ? ", " : "",
                                     op->stmts[grp->stmts[k]].name);
        fprintf(out, "  %-40s %-9s level %s\n",
                arena_printf(a, "fuse %s at %s", buf, level_name(s, grp->level)), given,
                grp->level_prov == PV_GIVEN ? given : "default");
    }
    if (m->online) {
        char buf[256] = "";
        size_t used = 0;
        for (int st = 0; st < op->stmt_count && used + 40 < sizeof buf; st++)
            if (m->online[st])
                used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", used ? ", " : "",
                                         op->stmts[st].name);
        fprintf(out, "  %-40s given\n", arena_printf(a, "online %s", buf));
    }
    if (ir_given(m->phase_span)) {
        fprintf(out, "  %-40s given     %s\n", arena_printf(a, "phase %s", phase_name(m->phase)),
                m->phase == PHASE_BACKWARD ? "the statements derived from the op:"
                : m->phase == PHASE_TRAIN  ? "the op's statements, then the derived ones:"
                                           : "");
        for (int st = 0; m->phase != PHASE_FORWARD && st < op->stmt_count; st++)
            if (op->stmts[st].source) fprintf(out, "    %s\n", op->stmts[st].source);
    }
    const SchedTraining *tr = &s->training;
    if (tr->present && tr->serving) {
        fprintf(out, "  %-40s derived   weights %s + caches %s = %s%s%s\n",
                arena_printf(a, "memory per device (%s)", s->arch->memories[tr->memory].name),
                fmt_bytes(a, tr->weights), fmt_bytes(a, tr->caches), fmt_bytes(a, tr->total),
                isfinite(tr->capacity) ? " of " : "",
                isfinite(tr->capacity) ? fmt_bytes(a, tr->capacity) : "");
    } else if (tr->present) {
        fprintf(out,
                "  %-40s derived   weights %s + gradients %s + optimizer state %s + activations "
                "%s = %s%s%s\n",
                arena_printf(a, "memory per device (%s)", s->arch->memories[tr->memory].name),
                fmt_bytes(a, tr->weights), fmt_bytes(a, tr->gradients), fmt_bytes(a, tr->optimizer),
                fmt_bytes(a, tr->activations), fmt_bytes(a, tr->total),
                isfinite(tr->capacity) ? " of " : "",
                isfinite(tr->capacity) ? fmt_bytes(a, tr->capacity) : "");
        double phases = tr->forward_s + tr->recompute_s + tr->backward_s + tr->update_s;
        fprintf(out,
                "  %-40s derived   forward %s + recompute %s + backward %s + update %s = %s "
                "(the groups' latencies by phase)\n",
                s->m->pipeline.full_arch ? "time per step (busiest stage)" : "time per step",
                fmt_time(a, tr->forward_s), fmt_time(a, tr->recompute_s),
                fmt_time(a, tr->backward_s), fmt_time(a, tr->update_s), fmt_time(a, phases));
        fprintf(out,
                "  %-40s derived   weight-gradient reductions %s, other collectives %s (their "
                "own times, %s)\n",
                "collectives per step", fmt_time(a, tr->gradient_reduce_s),
                fmt_time(a, tr->other_collectives_s),
                s->pipeline.present ? "the reductions once per step, after the last micro-batch"
                                    : "overlapped in their groups");
        if (tr->peak_flops > 0)
            fprintf(out,
                    "  %-40s derived   %s of forward and gradient contractions: %s/s, %.1f%% of "
                    "the matrix units' peak %s/s (MFU)\n",
                    "model FLOP", unit_format(a, tr->model_flop, (UnitDim){BU_FLOP, BU_NONE}),
                    unit_format(a, tr->achieved_flops, (UnitDim){BU_FLOP, BU_NONE}),
                    100 * tr->achieved_flops / tr->peak_flops,
                    unit_format(a, tr->peak_flops, (UnitDim){BU_FLOP, BU_NONE}));
    }
    if (m->recompute) {
        /* the copies made: what the gradients read of what was asked */
        const char *copies = "";
        for (int st = 0; st < op->stmt_count; st++)
            if (op->stmts[st].role == SR_RECOMPUTE)
                copies = arena_printf(a, "%s%s%s", copies, *copies ? ", " : "", op->stmts[st].name);
        fprintf(out, "  %-40s %-9s %s\n", arena_printf(a, "recompute %s", m->recompute),
                m->recompute_chosen ? "derived" : "given",
                *copies ? arena_printf(a, "the backward pass computes again: %s", copies)
                : strcmp(m->recompute, "none") == 0
                    ? "nothing: every activation is kept"
                    : "nothing: no gradient statement reads what it names");
    }
    /* a reserve that no group used: say so rather than let it pass */
    bool reserved = false;
    for (int g = 0; g < s->group_count; g++) reserved = reserved || s->groups[g].reserved;
    fprintf(out, "  overlap %-32s %s%s\n",
            m->reserve.total > 0
                ? arena_printf(a, "%s reserve %lld of %lld", overlap_words[m->overlap],
                               (long long)m->reserve.units, (long long)m->reserve.total)
                : overlap_words[m->overlap],
            m->overlap_chosen           ? "derived"
            : ir_given(m->overlap_span) ? "given"
                                        : "default",
            m->reserve.total > 0 && !reserved
                ? "   no group runs a collective beside its compute: every unit computes"
                : "");
    fprintf(out, "  %-40s %s\n",
            arena_printf(a, "repeat %lld", (long long)(m->repeat > 0 ? m->repeat : 1)),
            ir_given(m->repeat_span) ? "given" : "default");
    print_step(out, a, s);
    const SchedServing *sv = &s->serving;
    if (sv->present) {
        ServeKind kind = m->serve.kind;
        fprintf(out, "  %-40s %-9s %s %s, %s %s/s, %s per device (%.0f devices)%s\n",
                arena_printf(a, "serve %s of %s = %lld", serve_kind_name(kind),
                             m->serve.sequences_param, (long long)m->serve.sequences),
                m->serve.batch_chosen ? "derived" : "given", serve_step_words(kind),
                fmt_time(a, sv->step_s), fmt_count(a, sv->per_s), serve_rate_words(kind),
                fmt_count(a, sv->per_s_device), sv->devices,
                m->serve.limit_s > 0
                    ? arena_printf(a, "; the step under %s", fmt_time(a, m->serve.limit_s))
                    : "");
    }
}

/* A model's step (docs/language.md 5.13, cost-model.md 13.3). */
static void print_model(FILE *out, Arena *a, const ModelResult *mr) {
    const ModelStep *st = &mr->step;
    const Schedule *ls = mr->layers->sched;
    fprintf(out, "\nmodel %s: layers %s (%lld x %s)", mr->model->name, mr->layers->m->name,
            (long long)(mr->layers->m->repeat > 0 ? mr->layers->m->repeat : 1), ls->op->name);
    if (mr->embed) fprintf(out, ", embed %s", mr->embed->m->name);
    if (mr->head) fprintf(out, ", head %s", mr->head->m->name);
    fputc('\n', out);
    fprintf(out, "  step %s   energy %s   (the layers alone: %s)\n", fmt_time(a, st->step_s),
            fmt_energy(a, st->energy_j), fmt_time(a, st->layers_step_s));
    const ModelPartCost *parts[2] = {&st->embed, &st->head};
    static const char *const names[2] = {"embed", "head"};
    static const char *const where[2] = {"the first stage", "the last stage"};
    for (int j = 0; j < 2; j++) {
        const ModelPartCost *c = parts[j];
        if (!c->present) continue;
        fprintf(out, "  %-6s forward %s, backward %s a micro-batch (x %.0f%s%s); update %s\n",
                names[j], fmt_time(a, c->forward_s), fmt_time(a, c->backward_s), st->micro,
                st->stages > 1 ? ", on " : "", st->stages > 1 ? where[j] : "",
                fmt_time(a, c->update_s));
    }
    if (st->stages > 1)
        fprintf(out, "  pipeline of %.0f stages, %.0f micro-batches: the ends' passes longer%s\n",
                st->stages, st->micro,
                st->simulated ? ", the schedule run pass by pass"
                              : " (past the simulation's limit: the closed form)");
    if (st->first_bytes > 0) {
        if (st->stages > 1)
            fprintf(out, "  per device: the first stage %s, the last %s",
                    fmt_bytes(a, st->first_bytes), fmt_bytes(a, st->last_bytes));
        else
            fprintf(out, "  per device: %s", fmt_bytes(a, st->first_bytes));
        if (st->capacity > 0) fprintf(out, " of %s", fmt_bytes(a, st->capacity));
        fputc('\n', out);
    }
    if (st->peak_flops > 0 && st->model_flop > 0)
        fprintf(out, "  model FLOP %s: %s/s, %.1f%% of the matrix units' peak (MFU)\n",
                unit_format(a, st->model_flop, (UnitDim){BU_FLOP, BU_NONE}),
                unit_format(a, st->achieved_flops, (UnitDim){BU_FLOP, BU_NONE}),
                100 * st->achieved_flops / st->peak_flops);
}

void emit_listing(FILE *out, const CompileOutput *o) {
    Arena *a = o->arena;
    for (int k = 0; k < o->count; k++) {
        const MappingResult *r = &o->items[k];
        const Schedule *s = r->sched;
        const IrOp *op = s->op;
        if (k) fputc('\n', out);
        fprintf(out, "mapping %s: %s<", r->m->name, op->name);
        for (int i = 0; i < op->param_count; i++)
            fprintf(out, "%s%s=%lld", i ? ", " : "", op->param_names[i],
                    (long long)op->param_values[i]);
        fprintf(out, "> on %s\n", ir_arch_text(a, s->arch));
        if (r->solver.status != SOLVER_NOT_NEEDED)
            fprintf(out,
                    "  solver %s in %.3f s, gap %.3g, %ld candidates, %ld rows, %ld columns (%s)\n "
                    " complete mapping: %s\n",
                    solver_status_name(r->solver.status), r->solver.seconds, r->solver.gap,
                    r->solver.candidates, r->solver.rows, r->solver.columns,
                    r->solver.method ? r->solver.method : "", r->mapping_text);
        print_decisions(out, a, s, r->solver.status != SOLVER_NOT_NEEDED);
        const char *bound = schedule_bound_word(s);
        fprintf(out, "  latency %s   energy %s   bound: %s   (derived)",
                fmt_time(a, s->cost.latency_s), fmt_energy(a, s->cost.energy_j), bound);
        if (r->baseline && r->baseline->cost.latency_s > 0) {
            double ratio = r->baseline->cost.latency_s / s->cost.latency_s;
            /* the word follows the printed ratio: a tie to two decimals
             * is neither faster nor slower */
            bool tie = fabs(ratio - 1) < 0.005;
            fprintf(out, "   vs %s %.2fx %s", r->baseline_name, ratio,
                    tie         ? "(as fast)"
                    : ratio > 1 ? "faster"
                                : "(slower)");
        }
        fputc('\n', out);
        fprintf(out,
                "  %s: compute %s, memory %s, network %s; energy: compute %s, memory %s, "
                "network %s\n",
                s->pipeline.present ? "per layer and micro-batch" : "per repeat",
                fmt_time(a, s->cost.compute_s), fmt_time(a, s->cost.memory_s),
                fmt_time(a, s->cost.network_s), fmt_energy(a, s->cost.compute_energy_j),
                fmt_energy(a, s->cost.memory_energy_j), fmt_energy(a, s->cost.network_energy_j));
        if (r->baseline)
            fprintf(out, "  %s baseline: latency %s   energy %s   (%d group%s)\n", r->baseline_name,
                    fmt_time(a, r->baseline->cost.latency_s),
                    fmt_energy(a, r->baseline->cost.energy_j), r->baseline->group_count,
                    r->baseline->group_count == 1 ? "" : "s");
        for (int g = 0; g < s->group_count; g++) {
            fputc('\n', out);
            print_group(out, a, s, &s->groups[g], r->solver.status != SOLVER_NOT_NEEDED);
        }
    }
    for (int k = 0; k < o->model_count; k++) print_model(out, a, &o->models[k]);
}
