/* routing.c — the exchanges that routing implies (docs/cost-model.md
 * section 15).  A routing's tokens live where its router runs: split by
 * the token index over the cluster dims the router splits it over (the
 * token dims).  Between devices (dims outside the outermost memory):
 *  - a dispatch that splits its slots (by expert, slot or another index)
 *    over a token dim needs the rows routed to its slots from every
 *    instance: an alltoall of those rows, or an allgather of the tokens
 *    when that is cheaper (each token goes to K experts, so with K of
 *    them on one instance gathering the tokens once moves less); a
 *    dispatch not split over a token dim needs every token: allgather;
 *  - a combine that splits its slots over a token dim sends each row to
 *    its token's instance: alltoall; one whose rows are partial sums
 *    (its input is reduced over a dim and only combines read it, see
 *    pass_collectives) reduces the tokens' rows it adds them into:
 *    reduce_scatter when the tokens are split over the dims it reduces
 *    over, allreduce when every instance keeps every token.
 * Inside a device the instances share the outermost memory: a dispatch
 * loads its rows from there, which the loads already count. */
#include "passes/passes.h"

typedef struct RouteSite {
    Schedule *s;
    int st, tensor; /* the routed statement and its view */
    const IrRoute *route;
    const SchedGroup *g;
    int depth;                         /* the loop its exchanges run in */
    double tiles;                      /* executions: the tiles it takes or makes */
    int token[SCHED_MAX_DIMS], tokens; /* the token dims */
} RouteSite;

/* The token rows one instance holds of `base` (its token dimension at
 * `token_at`) when the tokens are gathered over dims gathered[0..n):
 * T over the token dims not gathered, times the row as the statement
 * reads or writes its other dimensions (B). */
static double token_rows_bytes(const RouteSite *r, const IrTensor *view, const int *gathered,
                               int n) {
    const Schedule *s = r->s;
    const IrTensor *base = &s->op->tensors[view->view_of];
    double T = (double)s->op->indices[r->route->token].extent;
    double spread = 1; /* the token dims not gathered */
    for (int j = 0; j < r->tokens; j++) {
        bool in = false;
        for (int q = 0; q < n; q++) in |= gathered[q] == r->token[j];
        if (!in) spread *= (double)s->arch->dims[r->token[j]].size;
    }
    double bytes = sched_elem_bytes(base) * T / spread;
    for (int i = 0; i < view->rank; i++) {
        int ix = view->index[i];
        if (ix == r->route->expert || ix == s->op->stmts[r->st].slot) continue;
        bytes *= s->stmts[r->st].extent[sched_li(s, 0, ix)];
    }
    return bytes;
}

static SchedNode *exchange(RouteSite *r, int phase, CollKind kind, ReduceOp op, const int *dims,
                           int n, double bytes) {
    SchedNode *node = collective_insert(r->s, r->g->id, r->s->stmts[r->st].position, phase, r->st,
                                        r->tensor, kind, op, dims, n, bytes / r->tiles, r->tiles);
    node->depth = r->depth;
    return node;
}

static double time_of(const RouteSite *r, CollKind kind, const int *dims, int n, double bytes) {
    return collective_time(r->s, r->st, r->tensor, kind, dims, n, bytes / r->tiles) * r->tiles;
}

static void dispatch(RouteSite *r) {
    Schedule *s = r->s;
    const SchedStmt *ss = &s->stmts[r->st];
    const IrTensor *view = &s->op->tensors[r->tensor];
    int split[SCHED_MAX_DIMS], ns = 0, whole[SCHED_MAX_DIMS], nw = 0;
    for (int j = 0; j < r->tokens; j++) {
        int d = r->token[j];
        if (ss->split[d] >= 0)
            split[ns++] = d;
        else
            whole[nw++] = d;
    }
    const char *X = s->op->tensors[view->view_of].name, *name = s->op->stmts[r->st].name;
    const char *R = s->op->tensors[r->route->tensor].name;
    /* the rows of its slots, in slot order: what an alltoall delivers */
    double rows = sched_share(s, r->st, r->tensor);
    double all_tokens = token_rows_bytes(r, view, r->token, r->tokens);
    double gather_all = time_of(r, CK_ALLGATHER, r->token, r->tokens, all_tokens);
    if (!ns) {
        SchedNode *n = exchange(r, 1, CK_ALLGATHER, RO_NONE, whole, nw, all_tokens);
        if (s->want_text)
            n->reason = arena_printf(s->arena,
                                     "%s routes the tokens of %s, which lie split over %s; %s is "
                                     "not split there, so every instance gathers them all",
                                     R, X, sched_dims_text(s->arena, s, whole, nw), name);
        return;
    }
    /* gather the tokens over the dims where the dispatch is whole, then
     * exchange the routed rows over those where it splits its slots */
    double gathered = nw ? token_rows_bytes(r, view, whole, nw) : 0;
    double mixed = (nw ? time_of(r, CK_ALLGATHER, whole, nw, gathered) : 0) +
                   time_of(r, CK_ALLTOALL, split, ns, rows);
    if (gather_all <= mixed) {
        SchedNode *n = exchange(r, 1, CK_ALLGATHER, RO_NONE, r->token, r->tokens, all_tokens);
        if (s->want_text)
            n->reason = arena_printf(
                s->arena,
                "%s routes the tokens of %s, which lie split over %s, to the slots %s splits "
                "there; gathering every token (%s) moves less than sending each routed row "
                "(alltoall %s)",
                R, X, sched_dims_text(s->arena, s, r->token, r->tokens), name,
                sched_time_text(s, gather_all), sched_time_text(s, mixed));
        return;
    }
    if (nw) {
        SchedNode *n = exchange(r, 1, CK_ALLGATHER, RO_NONE, whole, nw, gathered);
        if (s->want_text)
            n->reason = arena_printf(s->arena,
                                     "%s is not split over %s, where the tokens of %s lie split: "
                                     "every instance gathers them",
                                     name, sched_dims_text(s->arena, s, whole, nw), X);
    }
    SchedNode *n = exchange(r, 1, CK_ALLTOALL, RO_NONE, split, ns, rows);
    if (s->want_text)
        n->reason = arena_printf(
            s->arena,
            "%s routes the tokens of %s, which lie split over %s, to the slots %s splits there: "
            "each instance receives the rows of its slots, %.6g B (alltoall %s; gathering "
            "every token %s)",
            R, X, sched_dims_text(s->arena, s, split, ns), name, rows, sched_time_text(s, mixed),
            sched_time_text(s, gather_all));
}

static void combine(RouteSite *r) {
    Schedule *s = r->s;
    const IrOp *op = s->op;
    const SchedStmt *ss = &s->stmts[r->st];
    const IrStmt *is = &op->stmts[r->st];
    const IrTensor *view = &op->tensors[r->tensor];
    const char *Y = op->tensors[view->view_of].name, *name = is->name;
    int split[SCHED_MAX_DIMS], ns = 0;
    for (int j = 0; j < r->tokens; j++)
        if (ss->split[r->token[j]] >= 0) split[ns++] = r->token[j];
    if (ns) {
        double rows = sched_share(s, r->st, r->tensor);
        SchedNode *n = exchange(r, 3, CK_ALLTOALL, RO_NONE, split, ns, rows);
        if (s->want_text)
            n->reason = arena_printf(s->arena,
                                     "%s splits its slots over %s, where the tokens of %s lie "
                                     "split: each row goes to its token's instance, %.6g B",
                                     name, sched_dims_text(s->arena, s, split, ns), Y, rows);
    }
    /* partial rows: the input is reduced over a dim and left partial */
    int from = op->tensors[is->inputs[0]].producer;
    if (from < 0 || !combines_take_partials(s, from)) return;
    int partial[SCHED_MAX_DIMS], np = 0;
    bool on_tokens = true;
    for (int d = 0; d < s->arch->dim_count; d++) {
        if (s->arch->dims[d].size <= 1 || s->stmts[from].out_layout[d].kind != LAY_PARTIAL)
            continue;
        partial[np++] = d;
        bool token = false;
        for (int j = 0; j < r->tokens; j++) token |= r->token[j] == d;
        on_tokens &= token;
    }
    if (!np) return;
    /* the tokens' rows over the partial dims, before the reduction; a
     * token's row is complete once every slot routed to it has run:
     * after the loops over the experts and the slots (section 15) */
    double rows = token_rows_bytes(r, view, partial, np);
    CollKind kind = on_tokens ? CK_REDUCE_SCATTER : CK_ALLREDUCE;
    int level = r->g->overlap == OVERLAP_LOCAL ? 0 : 1;
    r->tiles = sched_tiles_completed(s, r->g, r->st, r->tensor, level,
                                     sched_first_slot_loop(s, r->g, r->st), &r->depth);
    if (!(r->tiles >= 1)) r->tiles = 1;
    SchedNode *n = exchange(r, 3, kind, RO_SUM, partial, np, rows);
    n->after_inner = sched_next_loop(s, r->g, r->st, r->depth) < r->g->loop_count;
    if (s->want_text)
        n->reason = arena_printf(
            s->arena,
            "%s adds partial sums over %s (%s reduces %s there) into the rows of %s, whose "
            "tokens %s: %s them once, after the picks are summed",
            name, sched_dims_text(s->arena, s, partial, np), op->stmts[from].name,
            op->indices[s->stmts[from].split[partial[0]]].name, Y,
            on_tokens ? "lie split there" : "every instance keeps",
            on_tokens ? "reduce_scatter" : "allreduce");
}

bool combines_take_partials(const Schedule *s, int producer) {
    const IrOp *op = s->op;
    if (!op->route_count) return false; /* (on every lowering's path) */
    int y = op->stmts[producer].out_tensor, readers = 0;
    if (op->tensors[y].kind != TK_INTERMEDIATE) return false;
    for (int c = producer + 1; c < op->stmt_count; c++) {
        const IrStmt *cs = &op->stmts[c];
        for (int q = 0; q < cs->input_count; q++) {
            if (cs->inputs[q] != y) continue;
            if (cs->routing != RT_COMBINE) return false;
            /* a combine split where the rows are partial would add only
             * its own share of each row: it needs them complete */
            for (int d = 0; d < s->arch->dim_count; d++)
                if (s->stmts[producer].out_layout[d].kind == LAY_PARTIAL &&
                    s->stmts[c].split[d] >= 0)
                    return false;
            readers++;
        }
    }
    return readers > 0;
}

void pass_routing(Schedule *s) {
    const IrOp *op = s->op;
    if (!op->route_count) return;
    for (int st = 0; st < op->stmt_count; st++) {
        const IrStmt *is = &op->stmts[st];
        if (is->routing != RT_DISPATCH && is->routing != RT_COMBINE) continue;
        const SchedGroup *g = &s->groups[s->stmts[st].group];
        if (!sched_group_costed(s, g)) continue;
        RouteSite r = {.s = s, .st = st, .route = &op->routes[is->route], .g = g};
        r.tensor = is->routing == RT_DISPATCH ? is->inputs[0] : is->out_tensor;
        const SchedStmt *router = &s->stmts[r.route->router];
        for (int d = 0; d < s->arch->dim_count; d++)
            if (s->arch->dims[d].size > 1 && sched_dim_outside(s, d, 0) &&
                router->split[d] == r.route->token)
                r.token[r.tokens++] = d;
        /* per tile the statement takes or makes, as layout changes run
         * (once, before or after the group, under `overlap local`) */
        int level = g->overlap == OVERLAP_LOCAL ? 0 : 1;
        r.tiles = sched_tiles_completed(s, g, st, r.tensor, level, g->loop_count, &r.depth);
        if (!(r.tiles >= 1)) r.tiles = 1;
        if (is->routing == RT_DISPATCH) {
            if (r.tokens) dispatch(&r);
        } else {
            combine(&r);
        }
    }
}
