/* ir.c — small queries over the IR of ops and archs (ir.h). */
#include "ir.h"

#include <string.h>

int ir_stmt_indices(const IrStmt *s, int out[2 * IR_MAX_RANK]) {
    int n = 0;
    for (int i = 0; i < s->lhs_count; i++) out[n++] = s->lhs[i];
    for (int i = 0; i < s->reduced_count; i++) out[n++] = s->reduced[i];
    return n;
}

bool ir_stmt_reduces(const IrStmt *s, int index) {
    for (int i = 0; i < s->reduced_count; i++)
        if (s->reduced[i] == index) return true;
    return false;
}

bool ir_stmt_uses_index(const IrStmt *s, int index) {
    for (int i = 0; i < s->lhs_count; i++)
        if (s->lhs[i] == index) return true;
    return ir_stmt_reduces(s, index);
}

bool ir_stmt_online_kind(const IrStmt *s) {
    bool op = s->reduce_op == RO_SUM || s->reduce_op == RO_MAX || s->reduce_op == RO_MIN;
    return op && s->reduced_count == 1;
}

const int *ir_stmt_tensor_indices(const IrOp *op, const IrStmt *s, int tensor) {
    (void)op;
    for (int q = 0; q < s->input_count; q++)
        if (s->inputs[q] == tensor) return s->access[q];
    if (s->out_tensor == tensor) return s->lhs;
    return NULL;
}

int ir_stmt_tensor_dim(const IrOp *op, const IrStmt *s, int tensor, int index) {
    const int *ix = ir_stmt_tensor_indices(op, s, tensor);
    if (!ix || tensor < 0) return -1;
    for (int r = 0; r < op->tensors[tensor].rank; r++)
        if (ix[r] == index) return r;
    return -1;
}

double ir_fn_cost(const IrCompute *unit, Name fn) {
    if (unit)
        for (int i = 0; i < unit->cost_count; i++)
            if (unit->costs[i].fn == fn) return unit->costs[i].cost;
    return 1.0;
}

double ir_stmt_work(const IrOp *op, const IrStmt *s, const int64_t *extents,
                    const IrCompute *unit) {
    (void)op;
    int idx[2 * IR_MAX_RANK];
    int n = ir_stmt_indices(s, idx);
    double points = 1.0;
    for (int i = 0; i < n; i++) points *= (double)extents[idx[i]];
    if (s->cls == SC_CONTRACTION) return points;
    double per_point = (double)s->arith_ops;
    for (int i = 0; i < s->fn_count; i++)
        per_point += s->fns[i].count * ir_fn_cost(unit, s->fns[i].fn);
    if (s->reduced_count > 0) per_point += 1.0; /* combining into the result */
    return per_point * points;
}

int ir_find_index(const IrOp *op, Name name) {
    for (int i = 0; i < op->index_count; i++)
        if (op->indices[i].name == name) return i;
    return -1;
}

int ir_find_tensor(const IrOp *op, Name name) {
    for (int i = 0; i < op->tensor_count; i++)
        if (op->tensors[i].name == name) return i;
    return -1;
}

int ir_find_stmt(const IrOp *op, Name name) {
    for (int i = 0; i < op->stmt_count; i++)
        if (op->stmts[i].name == name) return i;
    return -1;
}

int ir_find_level(const IrArch *a, Name name) {
    for (int i = 0; i < a->level_count; i++)
        if (a->levels[i].name == name) return i;
    for (int i = 0; i < a->memory_count; i++)
        if (a->memories[i].name == name) return a->memories[i].level;
    return -1;
}

IrArch *ir_stage_arch(Arena *arena, const IrArch *full, int dim) {
    IrArch *a = ARENA_NEW(arena, IrArch);
    *a = *full;
    int64_t p = full->dims[dim].size > 0 ? full->dims[dim].size : 1;
    a->dims = ARENA_ARRAY(arena, IrClusterDim, full->dim_count + 1);
    memcpy(a->dims, full->dims, sizeof *a->dims * (size_t)full->dim_count);
    a->dims[dim].size = 1;
    a->levels = ARENA_ARRAY(arena, IrLevel, full->level_count + 1);
    memcpy(a->levels, full->levels, sizeof *a->levels * (size_t)full->level_count);
    /* the dim's cluster replicates the levels declared after it */
    for (int l = 0; l < a->level_count; l++)
        if (full->dims[dim].cluster < a->levels[l].clusters_outside) a->levels[l].instances /= p;
    a->units = ARENA_ARRAY(arena, IrCompute, full->unit_count + 1);
    memcpy(a->units, full->units, sizeof *a->units * (size_t)full->unit_count);
    for (int u = 0; u < a->unit_count; u++) a->units[u].instances /= p;
    return a;
}

int ir_find_dim(const IrArch *a, Name name) {
    for (int i = 0; i < a->dim_count; i++)
        if (a->dims[i].name == name) return i;
    return -1;
}

static const IrCompute *find_unit(const IrArch *a, bool matrix) {
    for (int i = 0; i < a->unit_count; i++)
        if (a->units[i].matrix == matrix) return &a->units[i];
    return NULL;
}

const IrCompute *ir_matrix_unit(const IrArch *a) {
    return find_unit(a, true);
}
const IrCompute *ir_vector_unit(const IrArch *a) {
    return find_unit(a, false);
}

const IrMemory *ir_level_memory(const IrArch *a, int level, MemRole role) {
    if (level < 0 || level >= a->level_count) return NULL;
    const IrLevel *l = &a->levels[level];
    for (int i = 0; i < l->memory_count; i++) {
        const IrMemory *m = &a->memories[l->first_memory + i];
        if (m->role == role) return m;
    }
    /* an accumulator beside the level's memory holds its results */
    if (role == ROLE_OUTPUT)
        for (int i = 0; i < l->memory_count; i++) {
            const IrMemory *m = &a->memories[l->first_memory + i];
            if (m->role == ROLE_ACCUMULATOR) return m;
        }
    return &a->memories[l->first_memory];
}

/* ---------------------------------------------------------- vocabularies */

/* Words and ids come from the same entries of vocab.h, so a word maps to
 * its own id whatever the order of the enum. */
#define IR_VOCABULARY_TABLES(Type, prefix, LIST, fallback)                                         \
    const char *const prefix##_words[] = {LIST(VOCAB_NAME)};                                       \
    const Type prefix##_ids[] = {LIST(VOCAB_ENUM)};                                                \
    const int prefix##_count = (int)(sizeof prefix##_ids / sizeof prefix##_ids[0]);                \
    bool prefix##_of_name(const char *word, Type *out) {                                           \
        int i = vocab_find(prefix##_words, prefix##_count, word);                                  \
        if (i < 0) return false;                                                                   \
        *out = prefix##_ids[i];                                                                    \
        return true;                                                                               \
    }                                                                                              \
    const char *prefix##_name(Type t) {                                                            \
        for (int i = 0; i < prefix##_count; i++)                                                   \
            if (prefix##_ids[i] == t) return prefix##_words[i];                                    \
        return fallback;                                                                           \
    }

IR_VOCABULARY_TABLES(ReduceOp, reduce_op, CMT_REDUCTIONS, "none")
IR_VOCABULARY_TABLES(Topology, topology, CMT_TOPOLOGIES, "mesh")
IR_VOCABULARY_TABLES(MemRole, mem_role, CMT_MEMORY_ROLES, "any")
IR_VOCABULARY_TABLES(MemKind, mem_kind, CMT_MEMORY_KINDS, "buffer")
IR_VOCABULARY_TABLES(Objective, objective, CMT_OBJECTIVES, "latency")
IR_VOCABULARY_TABLES(Overlap, overlap, CMT_OVERLAPS, "full")
IR_VOCABULARY_TABLES(Phase, phase, CMT_PHASES, "forward")
IR_VOCABULARY_TABLES(ServeKind, serve_kind, CMT_SERVE_KINDS, "none")
IR_VOCABULARY_TABLES(PipeSchedule, pipe_schedule, CMT_PIPE_SCHEDULES, "1f1b")

bool ir_same_tile(const IrMapping *m, int a, int b, int l, int i) {
    int ka = ir_tile_slot(m, a, l, i), kb = ir_tile_slot(m, b, l, i);
    if (m->tile.from[ka] == m->tile.from[kb]) return true;
    return m->tile.size[ka] != IR_HOLE && m->tile.size[ka] == m->tile.size[kb];
}

bool ir_same_order(const IrMapping *m, int a, int b, int l) {
    int ka = ir_order_slot(m, a, l), kb = ir_order_slot(m, b, l);
    const IrOrder *o = &m->order;
    if (o->from[ka] == o->from[kb]) return true;
    if (o->length[ka] != o->length[kb] || o->length[ka] == IR_HOLE) return false;
    int ic = m->op->index_count;
    for (int q = 0; q < o->length[ka]; q++)
        if (o->perm[ka * ic + q] != o->perm[kb * ic + q]) return false;
    return true;
}

bool ir_fusable(const IrMapping *m, int a, int b) {
    const IrOp *op = m->op;
    int L = m->arch->level_count;
    for (int l = 1; l < L; l++)
        for (int i = 0; i < op->index_count; i++)
            if (ir_stmt_uses_index(&op->stmts[a], i) && ir_stmt_uses_index(&op->stmts[b], i) &&
                !ir_same_tile(m, a, b, l, i))
                return false;
    for (int l = 1; l < L; l++)
        if (!ir_same_order(m, a, b, l)) return false;
    return true;
}

bool ir_pred_canon(const IrPredicate *p, int *x, int *y, int64_t *k) {
    switch (p->cmp) {
    case PC_NONE: return false;
    case PC_LT: /* a < b + c  <=>  a <= b + c - 1 */
        *x = p->lhs, *y = p->rhs, *k = p->offset - 1;
        return true;
    case PC_LE: *x = p->lhs, *y = p->rhs, *k = p->offset; return true;
    case PC_GT: /* a > b + c  <=>  b <= a - c - 1 */
        *x = p->rhs, *y = p->lhs, *k = -p->offset - 1;
        return true;
    case PC_GE: /* a >= b + c  <=>  b <= a - c */
        *x = p->rhs, *y = p->lhs, *k = -p->offset;
        return true;
    }
    return false;
}

const char *ir_pred_text(Arena *a, const IrOp *op, const IrPredicate *p) {
    static const char *const cmp[] = {"", "<", "<=", ">", ">="};
    if (p->cmp == PC_NONE) return "";
    const char *l = op->indices[p->lhs].name, *r = op->indices[p->rhs].name;
    if (p->offset == 0) return arena_printf(a, "%s %s %s", l, cmp[p->cmp], r);
    return arena_printf(a, "%s %s %s %c %lld", l, cmp[p->cmp], r, p->offset < 0 ? '-' : '+',
                        (long long)(p->offset < 0 ? -p->offset : p->offset));
}

void ir_sweep_point(const IrSweep *sw, int64_t point, int *value_index) {
    /* the last group varies fastest */
    int64_t digit[IR_SWEEP_MAX_AXES];
    for (int g = sw->group_count - 1; g >= 0; g--) {
        digit[g] = point % sw->group_size[g];
        point /= sw->group_size[g];
    }
    for (int a = 0; a < sw->axis_count; a++) value_index[a] = (int)digit[sw->group_of_axis[a]];
}

const char *ir_arch_text(Arena *a, const IrArch *arch) {
    if (arch->param_count == 0) return arch->name;
    const char *text = arena_printf(a, "%s<", arch->name);
    for (int i = 0; i < arch->param_count; i++)
        text = arena_printf(a, "%s%s%s=%s", text, i ? ", " : "", arch->param_names[i],
                            arch->param_texts[i]);
    return arena_printf(a, "%s>", text);
}

const char *stmt_routing_name(StmtRouting r) {
    switch (r) {
    case RT_ROUTER: return "router";
    case RT_DISPATCH: return "dispatch";
    case RT_COMBINE: return "combine";
    case RT_NONE: break;
    }
    return "none";
}
