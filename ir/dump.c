/* dump.c — the stable textual dump of a schedule after any pass
 * (`cmtc compile --dump-ir=PASS`): statements with their splits, extents,
 * tiles and trips per level; groups with their loops and nodes.  Numbers
 * print with %.6g so the dump diffs cleanly. */
#include "ir/schedule.h"

static void dump_row(FILE *out, const Schedule *s, const char *what, const double *v, int l) {
    fprintf(out, "    %-7s", what);
    for (int i = 0; i < s->op->index_count; i++)
        fprintf(out, " %s=%.6g", s->op->indices[i].name, v[sched_li(s, l, i)]);
    fputc('\n', out);
}

static const char *level_name(const Schedule *s, int l) {
    if (l < 0) return "-";
    if (l >= s->levels) return "compute";
    return s->arch->levels[l].name;
}

static void dump_node(FILE *out, const Schedule *s, const SchedNode *n) {
    fprintf(out, "    %s",
            n->kind == SN_COLLECTIVE ? coll_kind_name(n->coll) : sched_kind_name(n->kind));
    if (n->stmt >= 0) fprintf(out, " stmt=%s", s->op->stmts[n->stmt].name);
    if (n->tensor >= 0) fprintf(out, " tensor=%s", s->op->tensors[n->tensor].name);
    if (n->kind == SN_LOAD || n->kind == SN_STORE || n->kind == SN_BOUNDARY)
        fprintf(out, " %s->%s", level_name(s, n->from_level), level_name(s, n->to_level));
    if (n->kind == SN_COMPUTE && n->unit) fprintf(out, " unit=%s", n->unit->name);
    if (n->rescale) fprintf(out, " rescale");
    if (n->kind == SN_COLLECTIVE) {
        if (n->reduce_op != RO_NONE) fprintf(out, " op=%s", reduce_op_name(n->reduce_op));
        fprintf(out, " dims=");
        for (int j = 0; j < n->dim_count; j++)
            fprintf(out, "%s%s", j ? "," : "", s->arch->dims[n->dims[j]].name);
    }
    fprintf(out, " bytes=%.6g count=%.6g ops=%.6g latency=%.6g energy=%.6g depth=%d\n", n->bytes,
            n->count, n->ops, n->latency_s, n->energy_j, n->depth);
    if (n->after_inner) fprintf(out, "      after the loops inside depth %d\n", n->depth);
    if (n->reason) fprintf(out, "      reason: %s\n", n->reason);
}

void schedule_dump(FILE *out, const Schedule *s, const char *after_pass) {
    const IrOp *op = s->op;
    fprintf(out, "; schedule of mapping %s (%s on %s) after %s\n", s->m->name, op->name,
            s->arch->name, after_pass);
    for (int st = 0; st < op->stmt_count; st++) {
        const SchedStmt *ss = &s->stmts[st];
        fprintf(out,
                "  stmt %s: %s unit=%s group=%d work=%.6g compute=%.6g split=", op->stmts[st].name,
                op->stmts[st].cls == SC_CONTRACTION ? "contraction" : "vector",
                ss->unit ? ss->unit->name : "-", ss->group, ss->work, ss->compute_s);
        for (int d = 0; d < s->arch->dim_count; d++) {
            fprintf(out, "%s%s:%s", d ? "," : "", s->arch->dims[d].name,
                    ss->split[d] >= 0 ? op->indices[ss->split[d]].name : "-");
            /* a joint deal: `x:m+n` */
            for (int k = 0; k < IR_MAX_JOINT - 1 && ss->joint[d][k] >= 0; k++)
                fprintf(out, "+%s", op->indices[ss->joint[d][k]].name);
        }
        fprintf(out, " (%s)\n", provenance_name(ss->split_prov));
        if (op->stmts[st].source) fprintf(out, "   derived %s\n", op->stmts[st].source);
        const IrStmt *is = &op->stmts[st];
        if (is->routing != RT_NONE) {
            /* routing (docs/language.md 3.9): what it does, and the route */
            const IrRoute *r = &op->routes[is->route];
            fprintf(out, "   %s of route %s: token %s, expert %s, %lld slots (capacity %g)",
                    stmt_routing_name(is->routing), op->tensors[r->tensor].name,
                    op->indices[r->token].name, op->indices[r->expert].name, (long long)r->slots,
                    r->capacity);
            if (is->slot >= 0) fprintf(out, ", slot %s", op->indices[is->slot].name);
            fprintf(out, "\n");
        }
        const IrPredicate *mk = &op->stmts[st].mask;
        if (mk->cmp != PC_NONE) {
            Arena a = {0};
            fprintf(out, "   where %s (from %s)\n", ir_pred_text(&a, op, mk),
                    op->stmts[mk->from].name);
            arena_free_all(&a);
        }
        if (!ss->extent) continue;
        for (int l = 0; l <= s->levels; l++) {
            fprintf(out, "   level %s\n", level_name(s, l));
            dump_row(out, s, "extent", ss->extent, l);
            if (ss->tile) dump_row(out, s, "tile", ss->tile, l);
            if (ss->trips && l > 0) dump_row(out, s, "trips", ss->trips, l);
        }
    }
    for (int g = 0; g < s->group_count; g++) {
        const SchedGroup *grp = &s->groups[g];
        fprintf(out, "  group %d level=%s (%s) stmts=", g, level_name(s, grp->level),
                provenance_name(grp->level_prov));
        for (int k = 0; k < grp->stmt_count; k++)
            fprintf(out, "%s%s", k ? "," : "", op->stmts[grp->stmts[k]].name);
        fprintf(out, " tiles=%.6g\n", grp->tiles);
        for (int k = 0; k < grp->loop_count; k++) {
            const SchedLoop *lp = &grp->loops[k];
            fprintf(out, "    loop %d: %s over tiles of %s trips=%.6g step=%.6g extent=%.6g\n", k,
                    op->indices[lp->index].name, level_name(s, lp->level), lp->trips, lp->step,
                    lp->extent);
        }
        for (int k = 0; k < grp->footprint_count; k++) {
            const Footprint *f = &grp->footprints[k];
            fprintf(out, "    footprint %s %s=%.6g%s", s->arch->memories[f->memory].name,
                    op->tensors[f->tensor].name, f->bytes,
                    f->spare_tiles > 0 ? " (with the next tile)"
                    : f->exposed       ? " (held once)"
                                       : "");
            if (f->in_place > 0)
                fprintf(out, " (%.6g in place of %s)", f->in_place, op->tensors[f->host].name);
            fputc('\n', out);
        }
        if (grp->level_s)
            fprintf(out,
                    "    time compute=%.6g memory=%.6g network=%.6g fill_drain=%.6g stall=%.6g "
                    "latency=%.6g energy=%.6g bound=%s\n",
                    grp->cost.compute_s, grp->cost.memory_s, grp->cost.network_s,
                    grp->cost.fill_drain_s, grp->cost.stall_s, grp->cost.latency_s,
                    grp->cost.energy_j, bound_name(grp->cost.bound));
        for (int i = 0; i < s->node_count; i++)
            if (s->nodes[i].group == g) dump_node(out, s, &s->nodes[i]);
    }
    for (int e = 0; e < s->excess_count; e++)
        fprintf(out, "  excess group=%d memory=%s need=%.6g capacity=%.6g\n", s->excess[e].group,
                s->arch->memories[s->excess[e].memory].name, s->excess[e].need,
                s->excess[e].capacity);
    fprintf(out, "  total latency=%.6g energy=%.6g\n", s->cost.latency_s, s->cost.energy_j);
}
