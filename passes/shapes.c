/* shapes.c — shape inference: allocates the per-statement tables, picks
 * each statement's compute unit and sets the extents every level sees
 * before any split (the op's index extents). */
#include "passes/passes.h"

void pass_shapes(Schedule *s) {
    const IrOp *op = s->op;
    int cells = (s->levels + 1) * op->index_count;
    s->stmts = ARENA_ARRAY(s->arena, SchedStmt, op->stmt_count);
    for (int st = 0; st < op->stmt_count; st++) {
        SchedStmt *ss = &s->stmts[st];
        const IrStmt *is = &op->stmts[st];
        ss->extent = ARENA_ARRAY(s->arena, double, cells);
        ss->tile = ARENA_ARRAY(s->arena, double, cells);
        ss->tile_prov = ARENA_ARRAY(s->arena, Provenance, cells);
        ss->trips = ARENA_ARRAY(s->arena, double, cells);
        for (int l = 0; l <= s->levels; l++)
            for (int i = 0; i < op->index_count; i++) {
                ss->extent[sched_li(s, l, i)] = (double)op->indices[i].extent;
                ss->trips[sched_li(s, l, i)] = 1;
            }
        for (int d = 0; d < SCHED_MAX_DIMS; d++) {
            ss->split[d] = -1;
            for (int k = 0; k < IR_MAX_JOINT - 1; k++) ss->joint[d][k] = -1;
        }
        ss->unit = is->cls == SC_CONTRACTION ? ir_matrix_unit(s->arch) : ir_vector_unit(s->arch);
        if (!ss->unit) s->missing_unit = true;
        ss->group = -1;
    }
    s->total_instances = 1;
    for (int d = 0; d < s->arch->dim_count; d++) s->total_instances *= s->arch->dims[d].size;
}
