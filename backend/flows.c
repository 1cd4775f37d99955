/* flows.c — the data dependencies of a schedule, for the trace's flow
 * arrows and the dot graph's edges: each tensor from where it is made (its
 * producer's compute, or the op's input) through the collectives that
 * finish it (a reduction's allreduce, reduce, reduce_scatter and the
 * broadcast of its result: phase 3, after the producer), then to each
 * reader, through the collectives that bring it to that reader (broadcast,
 * allgather, alltoall: phase 1, before the reader), and to the op's
 * output. */
#include "backend/emit.h"

static void add(Arena *a, Flow **items, int *count, int *cap, Flow f) {
    if (*count == *cap) {
        int grown = *cap ? *cap * 2 : 16;
        Flow *next = ARENA_ARRAY(a, Flow, grown);
        for (int i = 0; i < *count; i++) next[i] = (*items)[i];
        *items = next;
        *cap = grown;
    }
    (*items)[(*count)++] = f;
}

int data_flows(Arena *a, const Schedule *s, Flow **out) {
    const IrOp *op = s->op;
    Flow *items = NULL;
    int count = 0, cap = 0;
    for (int t = 0; t < op->tensor_count; t++) {
        const IrTensor *tn = &op->tensors[t];
        FlowEnd tail =
            tn->producer >= 0 ? (FlowEnd){FE_STMT, tn->producer} : (FlowEnd){FE_TENSOR, t};
        /* what finishes the tensor after its producer, in schedule order */
        for (int i = 0; i < s->node_count; i++) {
            const SchedNode *n = &s->nodes[i];
            if (n->kind != SN_COLLECTIVE || n->tensor != t) continue;
            if (n->phase == 1 && n->stmt >= 0 && n->stmt != tn->producer) continue;
            add(a, &items, &count, &cap, (Flow){tail, {FE_NODE, i}, t, false});
            tail = (FlowEnd){FE_NODE, i};
        }
        for (int st = 0; st < op->stmt_count; st++) {
            const IrStmt *is = &op->stmts[st];
            bool reads = false;
            for (int q = 0; q < is->input_count && !reads; q++) reads = is->inputs[q] == t;
            if (!reads) continue;
            FlowEnd from = tail;
            for (int i = 0; i < s->node_count; i++) {
                const SchedNode *n = &s->nodes[i];
                if (n->kind != SN_COLLECTIVE || n->tensor != t || n->phase != 1 || n->stmt != st ||
                    st == tn->producer)
                    continue;
                add(a, &items, &count, &cap, (Flow){from, {FE_NODE, i}, t, false});
                from = (FlowEnd){FE_NODE, i};
            }
            bool crosses = tn->producer >= 0 && s->stmts[tn->producer].group != s->stmts[st].group;
            add(a, &items, &count, &cap, (Flow){from, {FE_STMT, st}, t, crosses});
        }
        if (tn->kind == TK_OUTPUT)
            add(a, &items, &count, &cap, (Flow){tail, {FE_TENSOR, t}, t, false});
    }
    *out = items;
    return count;
}
