/* dot.c — `cmtc compile --format dot`: Graphviz.  Each mapping is a
 * cluster, each fusion group a cluster inside it holding its statements;
 * collectives are diamond nodes on the data edges they serve (from a
 * reduction's statement on to its readers, or from a tensor's source into
 * the reader it is brought to); inputs and outputs are boxes; a tensor
 * crossing groups is a dashed edge through the outermost memory. */
#include "backend/emit.h"

#include <stdio.h>

/* Prints s as a DOT string body (quotes and backslashes escaped). */
static void dot_text(FILE *out, const char *s) {
    for (; *s; s++) {
        if (*s == '\n') {
            fputs("\\n", out);
            continue;
        }
        if (*s == '"' || *s == '\\') fputc('\\', out);
        fputc(*s, out);
    }
}

static void mapping_graph(FILE *out, Arena *a, int k, const MappingResult *r) {
    const Schedule *s = r->sched;
    const IrOp *op = s->op;
    fprintf(out, "  subgraph cluster_m%d {\n    label=\"", k);
    dot_text(out,
             arena_printf(a, "%s: %s on %s, %s, %s", r->m->name, op->name, ir_arch_text(a, s->arch),
                          unit_format(a, s->cost.latency_s, (UnitDim){BU_SECOND, BU_NONE}),
                          unit_format(a, s->cost.energy_j, (UnitDim){BU_JOULE, BU_NONE})));
    fprintf(out, "\";\n");
    for (int t = 0; t < op->tensor_count; t++)
        if (op->tensors[t].producer < 0)
            fprintf(out, "    m%d_t%d [shape=box, style=rounded, label=\"%s (input)\"];\n", k, t,
                    op->tensors[t].name);
    for (int g = 0; g < s->group_count; g++) {
        const SchedGroup *grp = &s->groups[g];
        fprintf(out, "    subgraph cluster_m%d_g%d {\n      label=\"", k, g);
        dot_text(out, arena_printf(
                          a, "group %d at %s: %s, %s-bound", g, s->arch->levels[grp->level].name,
                          unit_format(a, grp->cost.latency_s, (UnitDim){BU_SECOND, BU_NONE}),
                          bound_name(grp->cost.bound)));
        fprintf(out, "\";\n");
        for (int q = 0; q < grp->stmt_count; q++) {
            int st = grp->stmts[q];
            const SchedStmt *ss = &s->stmts[st];
            fprintf(out, "      m%d_s%d [label=\"", k, st);
            dot_text(out,
                     arena_printf(a, "%s on %s\n%s", op->stmts[st].name,
                                  ss->unit ? ss->unit->name : "-",
                                  unit_format(a, ss->compute_s, (UnitDim){BU_SECOND, BU_NONE})));
            fprintf(out, "\"];\n");
        }
        for (int i = grp->first_node; i >= 0 && i < grp->first_node + grp->node_count; i++) {
            const SchedNode *n = &s->nodes[i];
            if (n->kind != SN_COLLECTIVE) continue;
            char dims[128] = "";
            size_t used = 0;
            for (int j = 0; j < n->dim_count && used + 24 < sizeof dims; j++)
                used += (size_t)snprintf(dims + used, sizeof dims - used, "%s%s", j ? "," : "",
                                         s->arch->dims[n->dims[j]].name);
            fprintf(out, "      m%d_n%d [shape=diamond, label=\"", k, i);
            dot_text(out,
                     arena_printf(a, "%s%s%s %s\nover (%s) %s", coll_kind_name(n->coll),
                                  n->reduce_op != RO_NONE ? " " : "",
                                  n->reduce_op != RO_NONE ? reduce_op_name(n->reduce_op) : "",
                                  op->tensors[n->tensor].name, dims,
                                  unit_format(a, n->latency_s, (UnitDim){BU_SECOND, BU_NONE})));
            fprintf(out, "\"];\n");
        }
        fprintf(out, "    }\n");
    }
    /* edges: every data dependency, through the collectives that finish
     * a tensor after its producer or bring it to a reader */
    for (int t = 0; t < op->tensor_count; t++)
        if (op->tensors[t].kind == TK_OUTPUT)
            fprintf(out, "    m%d_t%d [shape=box, style=rounded, label=\"%s (output)\"];\n", k, t,
                    op->tensors[t].name);
    Flow *flows;
    int nf = data_flows(a, s, &flows);
    for (int f = 0; f < nf; f++) {
        const Flow *fl = &flows[f];
        const char *ends[2];
        const FlowEnd *e[2] = {&fl->from, &fl->to};
        for (int j = 0; j < 2; j++)
            ends[j] = arena_printf(a, "m%d_%c%d", k,
                                   e[j]->kind == FE_STMT   ? 's'
                                   : e[j]->kind == FE_NODE ? 'n'
                                                           : 't',
                                   e[j]->id);
        /* an edge between statements names its tensor; the collectives
         * and the boxes name theirs */
        if (fl->crosses_groups)
            fprintf(out, "    %s -> %s [style=dashed, label=\"%s via %s\"];\n", ends[0], ends[1],
                    op->tensors[fl->tensor].name, s->arch->levels[0].name);
        else if (fl->from.kind == FE_STMT && fl->to.kind == FE_STMT)
            fprintf(out, "    %s -> %s [label=\"%s\"];\n", ends[0], ends[1],
                    op->tensors[fl->tensor].name);
        else
            fprintf(out, "    %s -> %s;\n", ends[0], ends[1]);
    }
    fprintf(out, "  }\n");
}

void emit_dot(FILE *out, const CompileOutput *o) {
    fprintf(out,
            "digraph cmtc {\n  compound=true;\n  node [shape=ellipse, fontsize=10];\n  label=\"");
    dot_text(out, o->file);
    fprintf(out, "\";\n");
    for (int k = 0; k < o->count; k++) mapping_graph(out, o->arena, k, &o->items[k]);
    fprintf(out, "}\n");
}
