/* partition.c — spatial partition: which index each statement splits over
 * each cluster dim and how each result lies along each dim.  What each
 * instance gets of a split index (whole blocks dealt out, the busiest
 * instance's share) depends on the tiles, so tiles.c works out the
 * per-instance extents and the work (docs/cost-model.md section 1.1). */
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
            /* `(m, n) -> sm`: the others dealt with it (the checker kept
             * only those the statement uses, none of them reduced) */
            const int *j = m->spatial.joint && ss->split[d] >= 0
                               ? &m->spatial.joint[(st * arch->dim_count + d) * (IR_MAX_JOINT - 1)]
                               : NULL;
            for (int k = 0; k < IR_MAX_JOINT - 1; k++) ss->joint[d][k] = j ? j[k] : -1;
        }
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
