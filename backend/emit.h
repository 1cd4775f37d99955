/* emit.h — what `cmtc compile` hands to its emitters: each mapping's
 * lowered schedule, its unfused baseline and the solver's report. */
#ifndef CMT_EMIT_H
#define CMT_EMIT_H

#include "../passes/passes.h"

typedef struct MappingResult {
    const IrMapping *m; /* complete (holes filled when there were any) */
    Schedule *sched;
    Schedule *baseline; /* every statement its own group */
    SolverReport solver;
    const char *mapping_text; /* the complete mapping in .cmt syntax */
} MappingResult;

typedef struct CompileOutput {
    const char *file; /* as given on the command line */
    MappingResult *items;
    int count;
    Arena *arena;
} CompileOutput;

/* The complete mapping as .cmt statements ("spatial n -> (x, y); ..."). */
const char *mapping_to_cmt(Arena *a, const IrMapping *m);
/* Whether the mapping's source wrote a line of this kind. */
bool mapping_says(const IrMapping *m, MapItemKind kind);

/* A text growing in an arena (buf is NULL until something is added). */
typedef struct Text {
    Arena *a;
    char *buf;
    size_t len, cap;
} Text;

/* Appends printf-style to t. */
void text_add(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void emit_listing(FILE *out, const CompileOutput *o); /* backend/listing.c */
void emit_json(FILE *out, const CompileOutput *o);    /* backend/json_out.c */
void emit_trace(FILE *out, const CompileOutput *o);   /* backend/trace.c */
void emit_dot(FILE *out, const CompileOutput *o);     /* backend/dot.c */

#endif
