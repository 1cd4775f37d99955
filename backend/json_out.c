/* json_out.c — `cmtc compile --format json`: the document of
 * docs/json-output.md (schema "cmtc.compile", version JSON_SCHEMA_VERSION),
 * keys in insertion order (jansson keeps it), reals with 6 significant
 * digits so the output is stable across builds.  A change to the fields
 * is a change to that page, and a removed or renamed field a new
 * version. */
#include "backend/emit.h"

#include <math.h>
#include <jansson.h>
#include <stdlib.h>

#define JSON_SCHEMA_VERSION 1

static json_t *dims_json(const Schedule *s, const SchedNode *n) {
    json_t *a = json_array();
    for (int j = 0; j < n->dim_count; j++)
        json_array_append_new(a, json_string(s->arch->dims[n->dims[j]].name));
    return a;
}

static const char *level_name(const Schedule *s, int l) {
    if (l < 0) return NULL;
    if (l >= s->levels) return "unit";
    return s->arch->levels[l].name;
}

static json_t *node_json(const Schedule *s, const SchedNode *n, int id) {
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(id));
    json_object_set_new(o, "kind", json_string(sched_kind_name(n->kind)));
    json_object_set_new(o, "group", json_integer(n->group));
    json_object_set_new(o, "loop", json_integer(n->depth));
    json_object_set_new(o, "after_inner", json_boolean(n->after_inner));
    if (n->stmt >= 0) json_object_set_new(o, "statement", json_string(s->op->stmts[n->stmt].name));
    if (n->tensor >= 0)
        json_object_set_new(o, "tensor", json_string(s->op->tensors[n->tensor].name));
    if (n->kind == SN_COMPUTE && n->stmt >= 0 && s->stmts[n->stmt].mask) {
        const SchedMask *mk = s->stmts[n->stmt].mask;
        const IrPredicate *pr = &s->op->stmts[n->stmt].mask;
        Arena a = {0};
        json_t *r = json_object();
        json_object_set_new(r, "where", json_string(ir_pred_text(&a, s->op, pr)));
        json_object_set_new(r, "from", json_string(s->op->stmts[pr->from].name));
        json_object_set_new(r, "tiles_run", json_real(mk->visited_tiles));
        json_object_set_new(r, "tiles", json_real(mk->all_tiles));
        json_object_set_new(r, "points_run", json_real(mk->visited_points));
        json_object_set_new(r, "points", json_real(mk->all_points));
        json_object_set_new(o, "restriction", r);
        arena_free_all(&a);
    }
    if (n->kind == SN_COLLECTIVE) {
        json_object_set_new(o, "collective", json_string(coll_kind_name(n->coll)));
        if (n->reduce_op != RO_NONE)
            json_object_set_new(o, "reduce_op", json_string(reduce_op_name(n->reduce_op)));
        json_object_set_new(o, "dims", dims_json(s, n));
        json_object_set_new(o, "byte_hops", json_real(n->byte_hops));
    }
    if (n->kind == SN_LOAD || n->kind == SN_STORE || n->kind == SN_BOUNDARY) {
        json_object_set_new(o, "from", json_string(level_name(s, n->from_level)));
        json_object_set_new(o, "to", json_string(level_name(s, n->to_level)));
    }
    if (n->kind == SN_COMPUTE && n->stmt >= 0 && s->op->stmts[n->stmt].routing != RT_NONE) {
        /* routing (language.md 3.9): what the statement does with which route */
        const IrStmt *is = &s->op->stmts[n->stmt];
        const IrRoute *rt = &s->op->routes[is->route];
        json_t *r = json_object();
        json_object_set_new(r, "role", json_string(stmt_routing_name(is->routing)));
        json_object_set_new(r, "route", json_string(s->op->tensors[rt->tensor].name));
        json_object_set_new(r, "slots", json_integer(rt->slots));
        json_object_set_new(r, "capacity", json_real(rt->capacity));
        json_object_set_new(o, "routing", r);
    }
    if (n->kind == SN_COMPUTE) {
        json_object_set_new(o, "unit", n->unit ? json_string(n->unit->name) : json_null());
        json_object_set_new(o, "ops", json_real(n->ops));
        if (n->rescale) json_object_set_new(o, "rescale", json_true());
    }
    json_object_set_new(o, "bytes", json_real(n->bytes));
    json_object_set_new(o, "count", json_real(n->count));
    json_object_set_new(o, "latency_s", json_real(n->latency_s));
    json_object_set_new(o, "energy_j", json_real(n->energy_j));
    if (n->reason) json_object_set_new(o, "reason", json_string(n->reason));
    return o;
}

static json_t *loop_json(const Schedule *s, const SchedLoop *lp) {
    json_t *l = json_object();
    json_object_set_new(l, "index", json_string(s->op->indices[lp->index].name));
    json_object_set_new(l, "tiles", json_string(level_name(s, lp->level)));
    json_object_set_new(l, "at", json_string(level_name(s, lp->level - 1)));
    json_object_set_new(l, "extent", json_real(lp->extent));
    json_object_set_new(l, "step", json_real(lp->step));
    json_object_set_new(l, "trips", json_real(lp->trips));
    json_object_set_new(l, "order", json_string(provenance_name(lp->order_prov)));
    return l;
}

/* The body of loop `depth` of group g (-1: the group outside its loops):
 * the nodes it repeats, the loop nested in it, then the nodes that wait
 * for that loop to close; boundaries last at the top. */
static json_t *nest_body(const Schedule *s, const SchedGroup *g, int depth) {
    json_t *body = json_array();
    int first = g->first_node, end = g->first_node + g->node_count;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = first; i >= 0 && i < end; i++) {
            const SchedNode *n = &s->nodes[i];
            if (n->kind == SN_BOUNDARY || n->depth != depth || n->after_inner != (pass == 1))
                continue;
            json_t *e = json_object();
            json_object_set_new(e, "node", json_integer(i));
            json_array_append_new(body, e);
        }
        if (pass == 0 && depth + 1 < g->loop_count) {
            json_t *e = json_object();
            json_object_set_new(e, "loop", json_integer(depth + 1));
            json_object_set_new(e, "body", nest_body(s, g, depth + 1));
            json_array_append_new(body, e);
        }
    }
    for (int i = first; depth < 0 && i >= 0 && i < end; i++)
        if (s->nodes[i].kind == SN_BOUNDARY) {
            json_t *e = json_object();
            json_object_set_new(e, "node", json_integer(i));
            json_array_append_new(body, e);
        }
    return body;
}

/* What a training or serving step holds per device (docs/cost-model.md
 * 13, 14): the memory, its terms in the listing's order, the total and
 * the capacity when the memory gives one. */
static void add_held(json_t *t, const Schedule *s) {
    const SchedTraining *tr = &s->training;
    json_object_set_new(t, "memory", json_string(s->arch->memories[tr->memory].name));
    json_object_set_new(t, "weights_bytes", json_real(tr->weights));
    if (tr->serving) {
        json_object_set_new(t, "caches_bytes", json_real(tr->caches));
    } else {
        json_object_set_new(t, "gradients_bytes", json_real(tr->gradients));
        json_object_set_new(t, "optimizer_bytes", json_real(tr->optimizer));
        json_object_set_new(t, "activations_bytes", json_real(tr->activations));
    }
    json_object_set_new(t, "total_bytes", json_real(tr->total));
    if (isfinite(tr->capacity)) json_object_set_new(t, "capacity_bytes", json_real(tr->capacity));
}

static json_t *mapping_json(const MappingResult *r) {
    const Schedule *s = r->sched;
    const IrOp *op = s->op;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(r->m->name));
    json_object_set_new(o, "op", json_string(op->name));
    if (r->m->phase != PHASE_FORWARD)
        json_object_set_new(o, "phase", json_string(phase_name(r->m->phase)));
    json_object_set_new(o, "arch", json_string(s->arch->name));
    if (s->arch->param_count > 0) {
        json_t *arch_params = json_object();
        for (int i = 0; i < s->arch->param_count; i++)
            json_object_set_new(arch_params, s->arch->param_names[i],
                                json_string(s->arch->param_texts[i]));
        json_object_set_new(o, "arch_params", arch_params);
    }
    json_t *params = json_object();
    for (int i = 0; i < op->param_count; i++)
        json_object_set_new(params, op->param_names[i],
                            json_integer((json_int_t)op->param_values[i]));
    json_object_set_new(o, "params", params);
    json_object_set_new(o, "mapping", json_string(r->mapping_text ? r->mapping_text : ""));
    if (s->training.present && s->training.serving) {
        const SchedServing *sv = &s->serving;
        json_t *t = json_object();
        json_object_set_new(t, "kind", json_string(serve_kind_name(r->m->serve.kind)));
        json_object_set_new(t, "sequences_param", json_string(r->m->serve.sequences_param));
        json_object_set_new(t, "sequences", json_integer((json_int_t)r->m->serve.sequences));
        json_object_set_new(t, "sequences_chosen", json_boolean(r->m->serve.batch_chosen));
        if (r->m->serve.limit_s > 0)
            json_object_set_new(t, "limit_s", json_real(r->m->serve.limit_s));
        json_object_set_new(t, "step_s", json_real(sv->step_s));
        char key[64];
        snprintf(key, sizeof key, "%s_per_s", serve_rate_words(r->m->serve.kind));
        json_object_set_new(t, key, json_real(sv->per_s));
        snprintf(key, sizeof key, "%s_per_s_per_device", serve_rate_words(r->m->serve.kind));
        json_object_set_new(t, key, json_real(sv->per_s_device));
        json_object_set_new(t, "devices", json_real(sv->devices));
        add_held(t, s);
        json_object_set_new(o, "serving", t);
    } else if (s->training.present) {
        const SchedTraining *tr = &s->training;
        json_t *t = json_object();
        add_held(t, s);
        json_object_set_new(o, "training_memory", t);
        json_t *p = json_object();
        json_object_set_new(p, "forward_s", json_real(tr->forward_s));
        json_object_set_new(p, "recompute_s", json_real(tr->recompute_s));
        json_object_set_new(p, "backward_s", json_real(tr->backward_s));
        json_object_set_new(p, "update_s", json_real(tr->update_s));
        json_object_set_new(p, "gradient_reduce_s", json_real(tr->gradient_reduce_s));
        json_object_set_new(p, "other_collectives_s", json_real(tr->other_collectives_s));
        json_object_set_new(p, "model_flop", json_real(tr->model_flop));
        json_object_set_new(p, "achieved_flop_per_s", json_real(tr->achieved_flops));
        json_object_set_new(p, "peak_flop_per_s", json_real(tr->peak_flops));
        json_object_set_new(o, "training_step", p);
    }
    if (s->pipeline.present) {
        const SchedPipeline *pp = &s->pipeline;
        const IrPipeline *pl = &r->m->pipeline;
        json_t *p = json_object();
        if (pl->full_arch) {
            json_object_set_new(p, "dim", json_string(pl->full_arch->dims[pl->dim].name));
            json_object_set_new(p, "schedule", json_string(pipe_schedule_name(pl->schedule)));
        }
        json_object_set_new(p, "stages", json_integer((json_int_t)pp->stages));
        json_object_set_new(p, "chunks", json_integer((json_int_t)pp->chunks));
        json_object_set_new(p, "microbatches", json_integer((json_int_t)pp->micro));
        json_object_set_new(p, "stage_layers", json_integer((json_int_t)pp->layers));
        json_object_set_new(p, "in_flight", json_real(pp->in_flight));
        json_object_set_new(p, "stage_forward_s", json_real(pp->stage_forward_s));
        json_object_set_new(p, "stage_backward_s", json_real(pp->stage_backward_s));
        json_object_set_new(p, "compute_s", json_real(pp->compute_s));
        json_object_set_new(p, "bubble_s", json_real(pp->bubble_s));
        json_object_set_new(p, "send_s", json_real(pp->send_s));
        json_object_set_new(p, "update_s", json_real(pp->update_total_s));
        json_object_set_new(p, "gradient_reduce_s", json_real(pp->reduction_total_s));
        json_object_set_new(p, "step_s", json_real(pp->step_s));
        if (pl->full_arch) json_object_set_new(p, "simulated", json_boolean(pp->simulated));
        json_object_set_new(p, "send_forward_bytes", json_real(pp->send_forward_bytes));
        json_object_set_new(p, "send_backward_bytes", json_real(pp->send_backward_bytes));
        json_object_set_new(p, "send_forward_s", json_real(pp->send_forward_s));
        json_object_set_new(p, "send_backward_s", json_real(pp->send_backward_s));
        json_object_set_new(o, "pipeline", p);
    }
    json_object_set_new(o, "latency_s", json_real(s->cost.latency_s));
    json_object_set_new(o, "energy_j", json_real(s->cost.energy_j));
    json_t *bd = json_object();
    json_object_set_new(bd, "compute_s", json_real(s->cost.compute_s));
    json_object_set_new(bd, "memory_s", json_real(s->cost.memory_s));
    json_object_set_new(bd, "network_s", json_real(s->cost.network_s));
    json_object_set_new(bd, "compute_energy_j", json_real(s->cost.compute_energy_j));
    json_object_set_new(bd, "memory_energy_j", json_real(s->cost.memory_energy_j));
    json_object_set_new(bd, "network_energy_j", json_real(s->cost.network_energy_j));
    json_object_set_new(o, "breakdown", bd);
    json_t *groups = json_array();
    for (int g = 0; g < s->group_count; g++) {
        const SchedGroup *grp = &s->groups[g];
        json_t *go = json_object();
        json_object_set_new(go, "id", json_integer(g));
        json_t *names = json_array();
        for (int k = 0; k < grp->stmt_count; k++)
            json_array_append_new(names, json_string(op->stmts[grp->stmts[k]].name));
        json_object_set_new(go, "statements", names);
        json_object_set_new(go, "level", json_string(level_name(s, grp->level)));
        json_object_set_new(go, "latency_s", json_real(grp->cost.latency_s));
        json_object_set_new(go, "bound", json_string(bound_name(grp->cost.bound)));
        json_object_set_new(go, "compute_s", json_real(grp->cost.compute_s));
        json_object_set_new(go, "memory_s", json_real(grp->cost.memory_s));
        json_object_set_new(go, "network_s", json_real(grp->cost.network_s));
        json_object_set_new(go, "fill_drain_s", json_real(grp->cost.fill_drain_s));
        json_object_set_new(go, "stall_s", json_real(grp->cost.stall_s));
        json_object_set_new(go, "launch_s", json_real(grp->launch_s));
        json_object_set_new(go, "energy_j", json_real(grp->cost.energy_j));
        json_t *loops = json_array();
        for (int k = 0; k < grp->loop_count; k++) {
            const SchedLoop *lp = &grp->loops[k];
            json_array_append_new(loops, loop_json(s, lp));
        }
        json_object_set_new(go, "loops", loops);
        json_object_set_new(go, "loop_nest", nest_body(s, grp, -1));
        json_array_append_new(groups, go);
    }
    json_object_set_new(o, "groups", groups);
    json_t *nodes = json_array();
    for (int i = 0; i < s->node_count; i++)
        json_array_append_new(nodes, node_json(s, &s->nodes[i], i));
    json_object_set_new(o, "nodes", nodes);
    /* the data dependencies the trace's flow arrows and the dot edges draw */
    Arena scratch = {0};
    Flow *flows;
    int nf = data_flows(&scratch, s, &flows);
    json_t *deps = json_array();
    for (int f = 0; f < nf; f++) {
        json_t *d = json_object();
        json_object_set_new(d, "tensor", json_string(op->tensors[flows[f].tensor].name));
        const FlowEnd *ends[2] = {&flows[f].from, &flows[f].to};
        for (int j = 0; j < 2; j++) {
            json_t *e = json_object();
            if (ends[j]->kind == FE_STMT)
                json_object_set_new(e, "statement", json_string(op->stmts[ends[j]->id].name));
            else if (ends[j]->kind == FE_NODE)
                json_object_set_new(e, "node", json_integer(ends[j]->id));
            else
                json_object_set_new(e,
                                    op->tensors[ends[j]->id].kind == TK_INPUT ? "input" : "output",
                                    json_string(op->tensors[ends[j]->id].name));
            json_object_set_new(d, j ? "to" : "from", e);
        }
        json_object_set_new(d, "crosses_groups", json_boolean(flows[f].crosses_groups));
        json_array_append_new(deps, d);
    }
    arena_free_all(&scratch);
    json_object_set_new(o, "dependencies", deps);
    if (r->baseline) {
        json_t *b = json_object();
        json_object_set_new(b, "name", json_string(r->baseline_name));
        json_object_set_new(b, "kind", json_string(r->baseline_is_mapping ? "mapping" : "unfused"));
        json_object_set_new(b, "latency_s", json_real(r->baseline->cost.latency_s));
        json_object_set_new(b, "energy_j", json_real(r->baseline->cost.energy_j));
        json_object_set_new(
            b, "speedup",
            json_real(s->cost.latency_s > 0 ? r->baseline->cost.latency_s / s->cost.latency_s : 0));
        json_object_set_new(o, "baseline", b);
    } else {
        json_object_set_new(o, "baseline", json_null());
    }
    json_t *sol = json_object();
    json_object_set_new(sol, "status", json_string(solver_status_name(r->solver.status)));
    json_object_set_new(sol, "seconds", json_real(r->solver.seconds));
    json_object_set_new(sol, "gap", json_real(r->solver.gap));
    json_object_set_new(sol, "candidates", json_integer(r->solver.candidates));
    if (r->solver.status != SOLVER_NOT_NEEDED) { /* the optimizer's record */
        if (r->solver.method) json_object_set_new(sol, "method", json_string(r->solver.method));
        json_object_set_new(sol, "rows", json_integer(r->solver.rows));
        json_object_set_new(sol, "columns", json_integer(r->solver.columns));
        json_object_set_new(sol, "configurations", json_integer(r->solver.configurations));
        json_object_set_new(sol, "space", json_real(r->solver.space));
        json_object_set_new(sol, "objective", json_real(r->solver.objective));
    }
    if (r->solver.evaluated_count > 0) { /* --exhaustive: every mapping */
        json_t *ev = json_array();
        Arena a = {0};
        for (long i = 0; i < r->solver.evaluated_count; i++) {
            const SolverEvaluated *e = &r->solver.evaluated[i];
            json_t *x = json_object();
            json_object_set_new(x, "mapping", json_string(mapping_to_cmt(&a, e->mapping)));
            json_object_set_new(x, "latency_s", json_real(e->latency_s));
            json_object_set_new(x, "energy_j", json_real(e->energy_j));
            json_object_set_new(x, "feasible", json_boolean(e->feasible));
            json_array_append_new(ev, x);
            if ((i & 1023) == 1023) arena_free_all(&a);
        }
        arena_free_all(&a);
        json_object_set_new(sol, "evaluated", ev);
    }
    json_object_set_new(o, "solver", sol);
    return o;
}

/* The diagnostics as diags_render_json writes them, as a JSON value. */
static json_t *diags_json(const CompileOutput *o) {
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return json_array();
    diags_render_json(mem, o->sources, o->diags);
    fclose(mem);
    json_t *items = json_loadb(text, len, 0, NULL);
    free(text);
    return json_is_array(items) ? items : (json_decref(items), json_array());
}

/* A model's step (docs/json-output.md, "model"). */
static json_t *part_json(const char *mapping, const ModelPartCost *c) {
    json_t *o = json_object();
    json_object_set_new(o, "mapping", json_string(mapping));
    json_object_set_new(o, "forward_s", json_real(c->forward_s));
    json_object_set_new(o, "backward_s", json_real(c->backward_s));
    json_object_set_new(o, "update_s", json_real(c->update_s));
    json_object_set_new(o, "energy_j", json_real(c->energy_j));
    json_object_set_new(o, "held_bytes", json_real(c->held_bytes));
    return o;
}

static json_t *model_json(const ModelResult *mr) {
    const ModelStep *st = &mr->step;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(mr->model->name));
    json_object_set_new(o, "layers", json_string(mr->layers->m->name));
    if (mr->embed) json_object_set_new(o, "embed", part_json(mr->embed->m->name, &st->embed));
    if (mr->head) json_object_set_new(o, "head", part_json(mr->head->m->name, &st->head));
    json_object_set_new(o, "step_s", json_real(st->step_s));
    json_object_set_new(o, "layers_step_s", json_real(st->layers_step_s));
    json_object_set_new(o, "energy_j", json_real(st->energy_j));
    json_object_set_new(o, "micro_batches", json_real(st->micro));
    json_object_set_new(o, "stages", json_real(st->stages));
    json_object_set_new(o, "simulated", json_boolean(st->simulated));
    json_object_set_new(o, "first_stage_bytes", json_real(st->first_bytes));
    json_object_set_new(o, "last_stage_bytes", json_real(st->last_bytes));
    json_object_set_new(o, "model_flop", json_real(st->model_flop));
    json_object_set_new(o, "achieved_flops", json_real(st->achieved_flops));
    json_object_set_new(o, "peak_flops", json_real(st->peak_flops));
    return o;
}

void emit_json(FILE *out, const CompileOutput *o) {
    json_t *root = json_object();
    json_object_set_new(root, "schema", json_string("cmtc.compile"));
    json_object_set_new(root, "schema_version", json_integer(JSON_SCHEMA_VERSION));
    json_object_set_new(root, "file", json_string(o->file));
    json_t *maps = json_array();
    for (int k = 0; k < o->count; k++) json_array_append_new(maps, mapping_json(&o->items[k]));
    json_object_set_new(root, "mappings", maps);
    json_t *failed = json_array();
    for (int k = 0; k < o->failed_count; k++) {
        json_t *f = json_object();
        json_object_set_new(f, "name", json_string(o->failed[k].name));
        json_object_set_new(f, "reason", json_string(o->failed[k].why));
        json_array_append_new(failed, f);
    }
    json_object_set_new(root, "not_compiled", failed);
    json_t *models = json_array();
    for (int k = 0; k < o->model_count; k++)
        json_array_append_new(models, model_json(&o->models[k]));
    json_object_set_new(root, "models", models);
    if (o->diags) json_object_set_new(root, "diagnostics", diags_json(o));
    json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    fputc('\n', out);
    json_decref(root);
}
