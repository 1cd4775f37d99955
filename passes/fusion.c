/* fusion.c — fusion grouping and boundaries: statements named in one
 * `fuse` line form a group, every other statement is a group of its own;
 * groups run in dependence order (by their first statement).  A tensor
 * that is an op output or is read by another group crosses the fusion
 * boundary through the outermost memory; a boundary node marks it. */
#include "passes/passes.h"

#include <stdio.h>

static int default_fusion_level(const Schedule *s) {
    /* the outermost on-chip level: the one just inside the outermost */
    return s->levels > 1 ? 1 : 0;
}

void pass_fusion(Schedule *s) {
    const IrOp *op = s->op;
    const IrMapping *m = s->m;
    int S = op->stmt_count;
    int fuse_count = m->fuse.group ? m->fuse.group_count : 0;
    int *group_of_fuse = ARENA_ARRAY(s->arena, int, fuse_count + 1);
    for (int g = 0; g < fuse_count; g++) group_of_fuse[g] = -1;
    /* each group's statement list sized to its members: a row of S for
     * every group made an unfused op of S statements hold S^2 ints (3.6 GB
     * for 30 000 statements) */
    int *members = ARENA_ARRAY(s->arena, int, fuse_count + 1);
    for (int st = 0; st < S; st++) {
        int fg = m->fuse.group ? m->fuse.group[st] : IR_UNSET;
        if (fg >= 0 && fg < fuse_count) members[fg]++;
    }
    s->groups = ARENA_ARRAY(s->arena, SchedGroup, S);
    s->group_count = 0;
    for (int st = 0; st < S; st++) {
        int fg = m->fuse.group ? m->fuse.group[st] : IR_UNSET;
        int g;
        if (fg >= 0 && fg < fuse_count && group_of_fuse[fg] >= 0) {
            g = group_of_fuse[fg];
        } else {
            g = s->group_count++;
            SchedGroup *grp = &s->groups[g];
            grp->id = g;
            grp->stmts = ARENA_ARRAY(s->arena, int, fg >= 0 && fg < fuse_count ? members[fg] : 1);
            grp->fused = fg >= 0 && fg < fuse_count && sched_fuse_group_written(m, fg, members[fg]);
            grp->level = default_fusion_level(s);
            grp->level_prov = PV_DEFAULT;
            grp->overlap = m->overlap;
            if (fg >= 0 && fg < fuse_count && m->fuse.overlap && m->fuse.overlap[fg] >= 0) {
                grp->overlap = (Overlap)m->fuse.overlap[fg];
                grp->overlap_own = true;
            }
            grp->reserve = m->reserve;
            if (fg >= 0 && fg < fuse_count && m->fuse.reserve && m->fuse.reserve[fg].total > 0)
                grp->reserve = m->fuse.reserve[fg];
            if (fg >= 0 && fg < fuse_count) group_of_fuse[fg] = g;
            if (grp->fused) {
                int lv = m->fuse.level ? m->fuse.level[fg] : IR_UNSET;
                if (lv >= 0 && lv < s->levels) {
                    grp->level = lv;
                    grp->level_prov = PV_GIVEN;
                }
            }
        }
        SchedGroup *grp = &s->groups[g];
        s->stmts[st].position = grp->stmt_count;
        grp->stmts[grp->stmt_count++] = st;
        s->stmts[st].group = g;
    }
    s->tensor_group = ARENA_ARRAY(s->arena, int, op->tensor_count);
    s->tensor_crosses = ARENA_ARRAY(s->arena, bool, op->tensor_count);
    for (int t = 0; t < op->tensor_count; t++) {
        int prod = op->tensors[t].producer;
        s->tensor_group[t] = prod >= 0 ? s->stmts[prod].group : -1;
        s->tensor_crosses[t] = op->tensors[t].kind == TK_OUTPUT;
    }
    for (int st = 0; st < S; st++) {
        const IrStmt *is = &op->stmts[st];
        for (int k = 0; k < is->input_count; k++) {
            int t = is->inputs[k];
            if (s->tensor_group[t] >= 0 && s->tensor_group[t] != s->stmts[st].group)
                s->tensor_crosses[t] = true;
        }
    }
    /* the groups that read each tensor from outside its own, in statement
     * order (the first 64 named), found in one pass over the statements:
     * asking every statement for every tensor was S x T */
    enum { READERS_SHOWN = 64 };
    int T = op->tensor_count;
    int *reader_count = ARENA_ARRAY(s->arena, int, T + 1);
    int **reader_groups = ARENA_ARRAY(s->arena, int *, T + 1);
    for (int st = 0; st < S; st++) {
        const IrStmt *is = &op->stmts[st];
        int rg = s->stmts[st].group;
        for (int k = 0; k < is->input_count; k++) {
            int t = is->inputs[k];
            if (s->tensor_group[t] < 0 || s->tensor_group[t] == rg) continue;
            if (reader_count[t] == READERS_SHOWN) continue;
            bool seen = false;
            for (int r = 0; r < reader_count[t]; r++) seen |= reader_groups[t][r] == rg;
            if (seen) continue;
            if (!reader_groups[t]) reader_groups[t] = ARENA_ARRAY(s->arena, int, READERS_SHOWN);
            reader_groups[t][reader_count[t]++] = rg;
        }
    }
    /* one boundary node per tensor that leaves its group for another */
    for (int t = 0; t < T; t++) {
        int g = s->tensor_group[t];
        if (g < 0 || reader_count[t] == 0) continue;
        const int *readers = reader_groups[t];
        const IrTensor *tn = &op->tensors[t];
        double elems = 1;
        for (int k = 0; k < tn->rank; k++) elems *= (double)tn->extent[k];
        SchedNode *n = sched_add_node(s, SN_BOUNDARY, g);
        n->tensor = t;
        n->stmt = tn->producer;
        n->from_level = n->to_level = 0;
        n->bytes = elems * sched_elem_bytes(tn);
        if (s->want_text) {
            char list[256] = "";
            size_t used = 0;
            for (int r = 0; r < reader_count[t] && used + 16 < sizeof list; r++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%d", r ? ", " : "",
                                         readers[r]);
            n->reason = arena_printf(s->arena,
                                     "%s is produced in group %d and read by group%s %s: it goes "
                                     "through %s (its stores and loads are costed in the groups)",
                                     tn->name, g, reader_count[t] > 1 ? "s" : "", list,
                                     s->arch->levels[0].name);
        }
    }
    /* only the costed groups and the groups of the producers they read
     * from need loops, layouts and reductions (LowerOptions.only_stmts) */
    if (s->only_stmts) {
        bool *group_needed = ARENA_ARRAY(s->arena, bool, s->group_count + 1);
        for (int g = 0; g < s->group_count; g++) {
            const SchedGroup *grp = &s->groups[g];
            if (!sched_group_costed(s, grp)) continue;
            group_needed[g] = true;
            for (int k = 0; k < grp->stmt_count; k++) {
                const IrStmt *is = &op->stmts[grp->stmts[k]];
                for (int q = 0; q < is->input_count; q++) {
                    int p = op->tensors[is->inputs[q]].producer;
                    if (p >= 0) group_needed[s->stmts[p].group] = true;
                }
            }
        }
        s->stmt_needed = ARENA_ARRAY(s->arena, bool, S + 1);
        for (int st = 0; st < S; st++) s->stmt_needed[st] = group_needed[s->stmts[st].group];
    }
}
