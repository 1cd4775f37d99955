/* trace.c — `cmtc compile --format trace`: Chrome trace-event JSON that
 * Perfetto and chrome://tracing open.  One process per mapping; one track
 * per compute unit, per pair of memory levels and per cluster dim, plus a
 * track of the groups.  Collectives are slices on the track of every dim
 * they run over.  With `overlap full` each track of a group starts at the
 * group's start (they overlap), except that the stages of the pipeline
 * (docs/cost-model.md section 7) start one tile apart: the matrix unit
 * after the first tile of memory, the vector unit after the matrix unit's
 * first tile, the network after the last unit's first tile (its first
 * chunk under `overlap tiles`); with `overlap none` the nodes run one
 * after another in schedule order.  Data dependencies are flow arrows
 * (Chrome's flow events, category "dependency", named after the tensor):
 * from a producer's compute to each consumer's, through the collectives
 * between them (backend/flows.c).  Times are in microseconds. */
#include "backend/emit.h"

#include <jansson.h>
#include <string.h>

typedef struct Track {
    const char *name;
    double cursor; /* next free time on the track, us */
} Track;

typedef struct Tracks {
    Track items[256];
    int count;
} Tracks;

static int track_of(Tracks *t, const char *name) {
    for (int i = 0; i < t->count; i++)
        if (strcmp(t->items[i].name, name) == 0) return i;
    if (t->count == 256) return 255;
    t->items[t->count] = (Track){name, 0};
    return t->count++;
}

static void slice(json_t *events, int pid, int tid, const char *name, const char *cat, double ts,
                  double dur, json_t *args) {
    json_t *e = json_object();
    json_object_set_new(e, "name", json_string(name));
    json_object_set_new(e, "cat", json_string(cat));
    json_object_set_new(e, "ph", json_string("X"));
    json_object_set_new(e, "ts", json_real(ts));
    json_object_set_new(e, "dur", json_real(dur));
    json_object_set_new(e, "pid", json_integer(pid));
    json_object_set_new(e, "tid", json_integer(tid));
    json_object_set_new(e, "args", args ? args : json_object());
    json_array_append_new(events, e);
}

static void metadata(json_t *events, int pid, int tid, const char *what, const char *name) {
    json_t *e = json_object();
    json_object_set_new(e, "name", json_string(what));
    json_object_set_new(e, "ph", json_string("M"));
    json_object_set_new(e, "pid", json_integer(pid));
    if (tid >= 0) json_object_set_new(e, "tid", json_integer(tid));
    json_t *args = json_object();
    json_object_set_new(args, "name", json_string(name));
    json_object_set_new(e, "args", args);
    json_array_append_new(events, e);
}

static json_t *node_args(const Schedule *s, const SchedNode *n) {
    json_t *a = json_object();
    json_object_set_new(a, "group", json_integer(n->group));
    if (n->tensor >= 0)
        json_object_set_new(a, "tensor", json_string(s->op->tensors[n->tensor].name));
    json_object_set_new(a, "bytes", json_real(n->bytes));
    json_object_set_new(a, "count", json_real(n->count));
    json_object_set_new(a, "energy_j", json_real(n->energy_j));
    if (n->kind == SN_COLLECTIVE) json_object_set_new(a, "chunks", json_real(n->chunks));
    if (n->reason) json_object_set_new(a, "reason", json_string(n->reason));
    return a;
}

/* Where a node was drawn: its first slice (a collective has one on each
 * dim's track). */
typedef struct NodeSlice {
    bool shown;
    int tid;
    double ts, dur; /* us */
} NodeSlice;

/* A flow arrow (Chrome trace flow events "s" then "f"), bound to the
 * slices it joins at their midpoints, which no other slice of the same
 * track encloses. */
static void flow_arrow(json_t *events, int pid, long id, const char *name, const NodeSlice *from,
                       const NodeSlice *to) {
    for (int end = 0; end < 2; end++) {
        const NodeSlice *sl = end ? to : from;
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(name));
        json_object_set_new(e, "cat", json_string("dependency"));
        json_object_set_new(e, "ph", json_string(end ? "f" : "s"));
        if (end) json_object_set_new(e, "bp", json_string("e"));
        json_object_set_new(e, "id", json_integer(id));
        json_object_set_new(e, "ts", json_real(sl->ts + sl->dur / 2));
        json_object_set_new(e, "pid", json_integer(pid));
        json_object_set_new(e, "tid", json_integer(sl->tid));
        json_array_append_new(events, e);
    }
}

/* The first load (store) of tensor t, for statement st when st >= 0. */
static int transfer_of(const Schedule *s, SchedKind kind, int t, int st) {
    for (int i = 0; i < s->node_count; i++)
        if (s->nodes[i].kind == kind && s->nodes[i].tensor == t &&
            (st < 0 || s->nodes[i].stmt == st))
            return i;
    return -1;
}

static void mapping_events(json_t *events, Arena *ar, int pid, const MappingResult *r,
                           long *flow_id) {
    const Schedule *s = r->sched;
    Tracks tracks = {.count = 0};
    NodeSlice *drawn = ARENA_ARRAY(ar, NodeSlice, s->node_count + 1);
    metadata(events, pid, -1, "process_name",
             arena_printf(ar, "%s: %s on %s", r->m->name, s->op->name, ir_arch_text(ar, s->arch)));
    int group_track = track_of(&tracks, "groups");
    double start = 0;
    for (int g = 0; g < s->group_count; g++) {
        const SchedGroup *grp = &s->groups[g];
        bool serial = grp->overlap == OVERLAP_NONE;
        json_t *ga = json_object();
        json_object_set_new(ga, "bound", json_string(bound_name(grp->cost.bound)));
        json_object_set_new(ga, "compute_s", json_real(grp->cost.compute_s));
        json_object_set_new(ga, "memory_s", json_real(grp->cost.memory_s));
        json_object_set_new(ga, "network_s", json_real(grp->cost.network_s));
        json_object_set_new(ga, "overlap", json_string(overlap_words[grp->overlap]));
        if (grp->reserved)
            json_object_set_new(ga, "reserved_units",
                                json_pack("{s:I,s:I}", "units", (json_int_t)grp->reserve.units,
                                          "of", (json_int_t)grp->reserve.total));
        json_object_set_new(ga, "matrix_s", json_real(grp->matrix_s));
        json_object_set_new(ga, "vector_s", json_real(grp->vector_s));
        json_object_set_new(ga, "fill_drain_s", json_real(grp->cost.fill_drain_s));
        json_object_set_new(ga, "stall_s", json_real(grp->cost.stall_s));
        json_object_set_new(ga, "tiles", json_real(grp->tiles));
        json_object_set_new(ga, "network_depth", json_real(grp->network_depth));
        /* where each stage starts: one piece of each stage before it, cut
         * no finer than the later stage's pieces (docs/cost-model.md 7) */
        double lead_matrix = 0, lead_vector = 0, lead_network = 0;
        if (!serial) {
            double T = grp->tiles >= 1 ? grp->tiles : 1;
            lead_matrix = grp->cost.memory_s / T;
            lead_vector = lead_matrix;
            if (grp->matrix_s > 0)
                lead_vector +=
                    grp->matrix_s / sched_stage_pieces(grp->matrix_depth, grp->vector_depth, false);
            lead_network = lead_matrix;
            if (grp->matrix_s > 0)
                lead_network += grp->matrix_s /
                                sched_stage_pieces(grp->matrix_depth, grp->network_depth, false);
            if (grp->vector_s > 0) {
                double after_vector =
                    lead_vector + grp->vector_s / sched_stage_pieces(grp->vector_depth,
                                                                     grp->network_depth, false);
                if (after_vector > lead_network) lead_network = after_vector;
            }
        }
        slice(events, pid, group_track, arena_printf(ar, "group %d", g), "group", start * 1e6,
              grp->cost.latency_s * 1e6, ga);
        for (int t = 0; t < tracks.count; t++) tracks.items[t].cursor = start;
        double serial_cursor = start;
        for (int i = grp->first_node; i >= 0 && i < grp->first_node + grp->node_count; i++) {
            const SchedNode *n = &s->nodes[i];
            if (n->kind == SN_BOUNDARY) continue;
            const char *names[SCHED_MAX_DIMS];
            int nt = 0;
            const char *label;
            if (n->kind == SN_COMPUTE) {
                names[nt++] = arena_printf(ar, "unit %s", n->unit ? n->unit->name : "-");
                label = arena_printf(ar, "%s %s", n->rescale ? "rescale" : "compute",
                                     s->op->stmts[n->stmt].name);
            } else if (n->kind == SN_COLLECTIVE) {
                for (int j = 0; j < n->dim_count; j++)
                    names[nt++] = arena_printf(ar, "network %s", s->arch->dims[n->dims[j]].name);
                label = arena_printf(ar, "%s %s", coll_kind_name(n->coll),
                                     s->op->tensors[n->tensor].name);
            } else {
                int from = n->from_level, to = n->to_level;
                names[nt++] = arena_printf(ar, "memory %s->%s", s->arch->levels[from].name,
                                           to >= s->levels ? "unit" : s->arch->levels[to].name);
                label = arena_printf(ar, "%s %s", sched_kind_name(n->kind),
                                     s->op->tensors[n->tensor].name);
            }
            double begin = serial_cursor;
            if (!serial && n->kind == SN_COMPUTE)
                begin = start + (n->unit && n->unit->matrix ? lead_matrix : lead_vector);
            if (!serial && n->kind == SN_COLLECTIVE)
                begin = grp->overlap == OVERLAP_LOCAL
                            ? start + grp->cost.latency_s - grp->launch_s - grp->cost.network_s
                            : start + lead_network;
            if (!serial)
                for (int k = 0; k < nt; k++) {
                    int t = track_of(&tracks, names[k]);
                    if (tracks.items[t].cursor > begin) begin = tracks.items[t].cursor;
                }
            for (int k = 0; k < nt; k++) {
                int t = track_of(&tracks, names[k]);
                if (tracks.items[t].cursor < start) tracks.items[t].cursor = start;
                slice(events, pid, t, label, sched_kind_name(n->kind), begin * 1e6,
                      n->latency_s * 1e6, node_args(s, n));
                if (!drawn[i].shown)
                    drawn[i] = (NodeSlice){true, t, begin * 1e6, n->latency_s * 1e6};
                tracks.items[t].cursor = begin + n->latency_s;
            }
            if (serial) serial_cursor = begin + n->latency_s;
        }
        start += grp->cost.latency_s;
    }
    /* data dependencies: producer to consumer, through collectives */
    int *compute_of = ARENA_ARRAY(ar, int, s->op->stmt_count + 1);
    for (int st = 0; st < s->op->stmt_count; st++) compute_of[st] = -1;
    for (int i = 0; i < s->node_count; i++)
        if (s->nodes[i].kind == SN_COMPUTE && s->nodes[i].stmt >= 0 && !s->nodes[i].rescale &&
            compute_of[s->nodes[i].stmt] < 0)
            compute_of[s->nodes[i].stmt] = i;
    Flow *flows;
    int nf = data_flows(ar, s, &flows);
    for (int f = 0; f < nf; f++) {
        int ends[2] = {-1, -1};
        const FlowEnd *e[2] = {&flows[f].from, &flows[f].to};
        for (int j = 0; j < 2; j++)
            ends[j] = e[j]->kind == FE_NODE   ? e[j]->id
                      : e[j]->kind == FE_STMT ? compute_of[e[j]->id]
                                              : -1;
        /* an input starts at its load for the node it goes to; an output
         * ends at its store */
        if (e[0]->kind == FE_TENSOR && ends[1] >= 0)
            ends[0] = transfer_of(s, SN_LOAD, e[0]->id, s->nodes[ends[1]].stmt);
        if (e[1]->kind == FE_TENSOR) ends[1] = transfer_of(s, SN_STORE, e[1]->id, -1);
        if (ends[0] < 0 || ends[1] < 0 || !drawn[ends[0]].shown || !drawn[ends[1]].shown) continue;
        flow_arrow(events, pid, ++*flow_id, s->op->tensors[flows[f].tensor].name, &drawn[ends[0]],
                   &drawn[ends[1]]);
    }
    for (int t = 0; t < tracks.count; t++)
        metadata(events, pid, t, "thread_name", tracks.items[t].name);
}

/* A pipelined mapping's step (docs/cost-model.md 13.2): one track per
 * stage with its forward and backward passes of every micro-batch as the
 * schedule runs them, then the update and the gradient reductions. */
static void pipeline_events(json_t *events, Arena *ar, int pid, const MappingResult *r) {
    const Schedule *s = r->sched;
    const SchedPipeline *pp = &s->pipeline;
    if (!pp->present || !r->m->pipeline.full_arch) return;
    PipeOp *ops;
    long n;
    double end = pipeline_simulate(ar, s, 1L << 20, &ops, &n);
    metadata(events, pid, -1, "process_name",
             arena_printf(ar, "%s: step of %.0f micro-batches on %.0f stages", r->m->name,
                          pp->micro, pp->stages));
    if (end < 0) {
        json_t *args = json_object();
        json_object_set_new(args, "why", json_string("more than 1048576 passes to draw"));
        slice(events, pid, 0, "step", "step", 0, pp->step_s * 1e6, args);
        metadata(events, pid, 0, "thread_name", "step");
        return;
    }
    for (long i = 0; i < n; i++) {
        const PipeOp *op = &ops[i];
        json_t *args = json_object();
        json_object_set_new(args, "micro_batch", json_integer(op->micro));
        json_object_set_new(args, "chunk", json_integer(op->chunk));
        const char *name =
            pp->chunks > 1
                ? arena_printf(ar, "%c%d.%d", op->backward ? 'B' : 'F', op->micro, op->chunk)
                : arena_printf(ar, "%c%d", op->backward ? 'B' : 'F', op->micro);
        slice(events, pid, op->stage, name, op->backward ? "backward" : "forward",
              op->start_s * 1e6, (op->end_s - op->start_s) * 1e6, args);
    }
    for (int st = 0; st < (int)pp->stages; st++) {
        double at = end;
        if (pp->reduction_total_s > 0) {
            slice(events, pid, st, "gradient reductions", "network", at * 1e6,
                  pp->reduction_total_s * 1e6, NULL);
            at += pp->reduction_total_s;
        }
        if (pp->update_total_s > 0)
            slice(events, pid, st, "update", "update", at * 1e6, pp->update_total_s * 1e6, NULL);
        metadata(events, pid, st, "thread_name", arena_printf(ar, "stage %d", st));
    }
}

void emit_trace(FILE *out, const CompileOutput *o) {
    json_t *root = json_object();
    json_t *events = json_array();
    long flow_id = 0;
    for (int k = 0; k < o->count; k++)
        mapping_events(events, o->arena, k + 1, &o->items[k], &flow_id);
    for (int k = 0; k < o->count; k++)
        pipeline_events(events, o->arena, o->count + k + 1, &o->items[k]);
    json_object_set_new(root, "traceEvents", events);
    json_object_set_new(root, "displayTimeUnit", json_string("ns"));
    json_dumpf(root, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    fputc('\n', out);
    json_decref(root);
}
