/* program.h — loading a .cmt text and lowering its mappings, for the unit
 * tests that check programs written inline. */
#ifndef CMT_UNIT_PROGRAM_H
#define CMT_UNIT_PROGRAM_H

#include "passes/optimize/optimize.h"
#include "passes/verify.h"
#include "tests/unit/unit.h"

#include <string.h>

/* Checks `text` as a file named `name`, everything in `arena`. */
static inline Program *unit_load_named(Arena *arena, SourceManager *sm, DiagSink *diags,
                                       const char *name, const char *text) {
    sources_init(sm, arena);
    diags_init(diags, arena);
    SourceFile *f = sources_add(sm, name, text, strlen(text));
    CheckOptions opts;
    memset(&opts, 0, sizeof opts);
    return check_program(arena, sm, diags, f, &opts);
}

/* The mapping called `name`, or NULL. */
static inline const IrMapping *unit_mapping(const Program *p, const char *name) {
    for (int i = 0; i < p->mapping_count; i++)
        if (strcmp(p->mappings[i]->name, name) == 0) return p->mappings[i];
    return NULL;
}

/* The id of the memory called `name` in `a`, or -1. */
static inline int unit_memory_id(const IrArch *a, const char *name) {
    for (int m = 0; m < a->memory_count; m++)
        if (strcmp(a->memories[m].name, name) == 0) return m;
    return -1;
}

/* The schedule (with listing text) of the mapping called `name`, or NULL. */
static inline const Schedule *unit_lowered(Arena *arena, const Program *p, const char *name) {
    const IrMapping *m = unit_mapping(p, name);
    return m ? lower_mapping(arena, m, true, NULL) : NULL;
}

/* The first node of `kind` for the tensor called `tensor` in the
 * schedule, or NULL. */
static inline const SchedNode *node_of(const Schedule *s, SchedKind kind, const char *tensor) {
    for (int i = 0; i < s->node_count; i++)
        if (s->nodes[i].kind == kind && s->nodes[i].tensor >= 0 &&
            strcmp(s->op->tensors[s->nodes[i].tensor].name, tensor) == 0)
            return &s->nodes[i];
    return NULL;
}

/* The reference interpreter agrees with the model on the schedule (a
 * check named `name`; the first disagreement is printed). */
static inline void check_verified(const Schedule *s, const char *name) {
    Arena scratch = {0};
    VerifyReport r;
    bool ran = verify_schedule(&scratch, s, &r);
    VerifyDiff *d = NULL;
    int n = ran ? verify_compare(&scratch, s, &r, &d) : -1;
    if (n > 0) printf("  %s\n", d[0].text);
    CHECK(n == 0, name);
    arena_free_all(&scratch);
}

#endif
