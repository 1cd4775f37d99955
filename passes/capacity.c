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

void report_capacity(const Schedule *s, DiagSink *diags) {
    const IrArch *arch = s->arch;
    for (int e = 0; e < s->excess_count; e++) {
        const CapacityExcess *x = &s->excess[e];
        const IrMemory *mem = &arch->memories[x->memory];
        const SchedGroup *g = &s->groups[x->group];
        char terms[1024] = "";
        size_t used = 0;
        for (int k = 0; k < g->footprint_count && used + 64 < sizeof terms; k++) {
            const Footprint *f = &g->footprints[k];
            if (f->memory != x->memory) continue;
            used +=
                (size_t)snprintf(terms + used, sizeof terms - used, "%s%s %s", used ? " + " : "",
                                 s->op->tensors[f->tensor].name, bytes_text(s->arena, f->bytes));
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
        diag_label(d, diags, mem->span, "%s is declared here", mem->name);
        diag_help(d, diags, "shrink the tiles at %s or fuse fewer statements at it", mem->name);
    }
}

void check_mapping_capacity(Program *p) {
    for (int i = 0; i < p->mapping_count; i++) {
        const IrMapping *m = p->mappings[i];
        if (!m || !m->op || !m->arch) continue;
        if (report_unsupported(p, m) || m->hole_count > 0) continue;
        Arena scratch = {0};
        Schedule *s = lower_mapping(&scratch, m, false, NULL);
        report_capacity(s, p->diags);
        arena_free_all(&scratch);
    }
}
