/* partition.c — spatial partition: which index each statement splits over
 * each cluster dim, the per-instance extent of every index at every level
 * (an index is divided by the dims outside that level that split it), the
 * work per compute instance, and how each result lies along each dim. */
#include "passes/passes.h"

void pass_partition(Schedule *s) {
    const IrOp *op = s->op;
    const IrArch *arch = s->arch;
    const IrMapping *m = s->m;
    for (int st = 0; st < op->stmt_count; st++) {
        SchedStmt *ss = &s->stmts[st];
        const IrStmt *is = &op->stmts[st];
        ss->split_prov = PV_DEFAULT;
        for (int d = 0; d < arch->dim_count; d++) {
            int idx = m->spatial.split ? m->spatial.split[st * arch->dim_count + d] : IR_UNSET;
            /* a split of an index the statement does not use leaves it
             * replicated along that dim */
            if (idx >= 0 && ir_stmt_uses_index(is, idx)) {
                ss->split[d] = idx;
                ss->split_prov = PV_GIVEN;
            } else {
                ss->split[d] = -1;
            }
        }
        for (int l = 0; l <= s->levels; l++)
            for (int i = 0; i < op->index_count; i++) {
                double e = (double)op->indices[i].extent;
                for (int d = 0; d < arch->dim_count; d++)
                    if (ss->split[d] == i && sched_dim_outside(s, d, l))
                        e /= (double)arch->dims[d].size;
                ss->extent[sched_li(s, l, i)] = e;
            }
        /* work per compute instance: points of the statement's iteration
         * space on one instance times operations per point */
        int idx[2 * IR_MAX_RANK];
        int n = ir_stmt_indices(is, idx);
        double points = 1;
        for (int k = 0; k < n; k++) points *= ss->extent[sched_li(s, s->levels, idx[k])];
        ss->work = points * stmt_ops_per_point(is, ss->unit);
        /* the result along each dim */
        for (int d = 0; d < arch->dim_count; d++) {
            int sp = ss->split[d];
            Layout lay = {LAY_REPLICATED, -1};
            if (sp >= 0) {
                bool reduced = false;
                for (int r = 0; r < is->reduced_count; r++)
                    if (is->reduced[r] == sp) reduced = true;
                lay.kind = reduced ? LAY_PARTIAL : LAY_SPLIT;
                lay.index = sp;
            }
            ss->out_layout[d] = lay;
        }
    }
}
