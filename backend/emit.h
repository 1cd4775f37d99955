/* emit.h — what `cmtc compile` hands to its emitters: each mapping's
 * lowered schedule, its unfused baseline and the solver's report. */
#ifndef CMT_EMIT_H
#define CMT_EMIT_H

#include "passes/optimize/optimize.h"

typedef struct MappingResult {
    const IrMapping *m; /* complete (holes filled when there were any) */
    Schedule *sched;
    Schedule *baseline;        /* what --baseline compares with, or NULL */
    const char *baseline_name; /* "unfused" or the baseline mapping's name */
    bool baseline_is_mapping;  /* --baseline MAPPING */
    SolverReport solver;
    const char *mapping_text; /* the complete mapping in .cmt syntax */
} MappingResult;

/* A mapping of the file that was not compiled, and why: "errors" (its
 * own, or its op's or arch's), "capacity" (E0340 after lowering),
 * "solver" (no feasible mapping in time). */
typedef struct FailedMapping {
    const char *name;
    const char *why;
} FailedMapping;

/* A model of the file whose parts all compiled, and its step. */
typedef struct ModelResult {
    const IrModel *model;
    const MappingResult *layers, *embed, *head; /* embed, head NULL when absent */
    ModelStep step;
} ModelResult;

typedef struct CompileOutput {
    const char *file; /* as given on the command line */
    MappingResult *items;
    int count;
    ModelResult *models;
    int model_count;
    Arena *arena;
    FailedMapping *failed;
    int failed_count;
    DiagSink *diags; /* for the JSON document to carry, or NULL */
    const SourceManager *sources;
} CompileOutput;

/* The complete mapping as .cmt statements ("spatial n -> (x, y); ..."). */
const char *mapping_to_cmt(Arena *a, const IrMapping *m);
/* A serving step's words (docs/language.md 5.12): what its latency is
 * ("time per output token"), its short name ("TPOT") and what its rate
 * counts ("tokens"). */
const char *serve_step_words(ServeKind kind);
const char *serve_step_short(ServeKind kind);
const char *serve_rate_words(ServeKind kind);
/* Whether the mapping's source wrote a line of this kind. */

/* A text growing in an arena (buf is NULL until something is added). */
typedef struct Text {
    Arena *a;
    char *buf;
    size_t len, cap;
} Text;

/* Appends printf-style to t. */
void text_add(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One data dependency: a tensor going from `from` to `to`, each end a
 * statement (its compute), a schedule node (a collective) or a tensor of
 * the op (an input where it starts, an output where it ends). */
typedef enum FlowEndKind { FE_STMT, FE_NODE, FE_TENSOR } FlowEndKind;
typedef struct FlowEnd {
    FlowEndKind kind;
    int id;
} FlowEnd;
typedef struct Flow {
    FlowEnd from, to;
    int tensor;
    bool crosses_groups; /* to a reader in another group, through memory */
} Flow;
/* Every data dependency of the schedule (backend/flows.c), in arena `a`;
 * returns how many. */
int data_flows(Arena *a, const Schedule *s, Flow **out);

void emit_listing(FILE *out, const CompileOutput *o); /* backend/listing.c */
void emit_json(FILE *out, const CompileOutput *o);    /* backend/json_out.c */
void emit_trace(FILE *out, const CompileOutput *o);   /* backend/trace.c */
void emit_dot(FILE *out, const CompileOutput *o);     /* backend/dot.c */

#endif
