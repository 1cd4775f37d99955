/* pipeline.c — the lowering pipeline, listed once, and the entry points
 * built on it: lower_mapping (a schedule with reasons for the emitters) and
 * evaluate_mapping (numbers only, for the optimizer above it). */
#include "passes/passes.h"

#include <string.h>

typedef void (*PassFn)(Schedule *);

static const PassFn pass_fns[] = {
    pass_shapes,      /* extents and compute units */
    pass_partition,   /* spatial splits, per-instance extents, layouts */
    pass_fusion,      /* groups, fusion levels, boundary nodes */
    pass_tiles,       /* tiles, trips, footprints, capacity */
    pass_training,    /* what a training or serving step holds per device */
    pass_reuse,       /* loop nests, loads, stores, compute nodes */
    pass_collectives, /* broadcasts, reductions, layout changes */
    pass_routing,     /* dispatches' and combines' exchanges */
    pass_cost,        /* times, energies, bounds, totals */
    pass_stages,      /* micro-batches through a pipeline's stages */
    pass_step,        /* a training step's time by phase, model FLOP rate */
    pass_serving,     /* a serving step's time to first token or per token */
};

const char *const pass_names[] = {"shapes",   "partition", "fusion",      "tiles",
                                  "training", "reuse",     "collectives", "routing",
                                  "cost",     "stages",    "step",        "serving"};
const int pass_count = (int)(sizeof pass_fns / sizeof pass_fns[0]);

bool pass_name_known(const char *name) {
    for (int i = 0; i < pass_count; i++)
        if (strcmp(pass_names[i], name) == 0) return true;
    return false;
}

bool schedule_supported(const IrArch *arch) {
    return arch->dim_count <= SCHED_MAX_DIMS;
}

bool report_unsupported(Program *p, const IrMapping *m) {
    if (schedule_supported(m->arch)) return false;
    Diag *d = diag_error(p->diags, m->span, "E0352",
                         "arch %s has %d cluster dimensions but schedules handle at most %d",
                         m->arch->name, m->arch->dim_count, SCHED_MAX_DIMS);
    diag_help(d, p->diags, "merge cluster dimensions of size 1 or nest fewer clusters");
    return true;
}

Schedule *lower_mapping(Arena *arena, const IrMapping *m, bool want_text,
                        const LowerOptions *opts) {
    Schedule *s = ARENA_NEW(arena, Schedule);
    s->arena = arena;
    s->m = m;
    s->op = m->op;
    s->arch = m->arch;
    s->want_text = want_text;
    s->levels = m->arch->level_count;
    s->memo = opts ? opts->memo : NULL;
    s->only_stmts = opts ? opts->only_stmts : NULL;
    s->only_needed = opts && opts->only_stmts && opts->only_needed;
    const char *dump = opts ? opts->dump_after : NULL;
    const char *stop = opts ? opts->stop_after : NULL;
    for (int i = 0; i < pass_count; i++) {
        pass_fns[i](s);
        if (dump && strcmp(dump, pass_names[i]) == 0)
            schedule_dump(opts->dump_out ? opts->dump_out : stderr, s, pass_names[i]);
        if (stop && strcmp(stop, pass_names[i]) == 0) break;
    }
    return s;
}

IrMapping *unfused_mapping(Arena *arena, const IrMapping *m) {
    IrMapping *u = ARENA_NEW(arena, IrMapping);
    *u = *m;
    int S = m->op->stmt_count;
    u->fuse.group = ARENA_ARRAY(arena, int, S);
    for (int i = 0; i < S; i++) u->fuse.group[i] = IR_UNSET;
    u->fuse.group_count = 0;
    u->fuse.level = NULL;
    u->fuse.span = NULL;
    u->fuse.written = NULL;
    u->fuse.overlap = NULL;
    u->fuse.overlap_span = NULL;
    u->fuse.reserve = NULL;
    u->fuse.whole_hole = false;
    return u;
}

EvalStatus evaluate_mapping(const IrMapping *m, Arena *arena, EvalResult *out) {
    memset(out, 0, sizeof *out);
    if (m->hole_count > 0) return EVAL_INCOMPLETE;
    if (!schedule_supported(m->arch)) return EVAL_TOO_LARGE;
    Arena scratch = {0};
    Schedule *s = lower_mapping(&scratch, m, false, NULL);
    out->cost = s->cost;
    /* a training step must also fit its devices' outermost memory */
    double train_over = s->training.present ? s->training.total - s->training.capacity : 0;
    out->feasible = s->excess_count == 0 && !s->missing_unit && !(train_over > 0);
    for (int i = 0; i < s->excess_count; i++) {
        double over = s->excess[i].need - s->excess[i].capacity;
        if (over > out->worst_excess_bytes) out->worst_excess_bytes = over;
    }
    if (train_over > out->worst_excess_bytes) out->worst_excess_bytes = train_over;
    out->group_count = s->group_count;
    out->level_count = s->levels;
    if (arena) {
        out->groups = ARENA_ARRAY(arena, GroupCost, s->group_count + 1);
        for (int g = 0; g < s->group_count; g++) {
            const SchedGroup *sg = &s->groups[g];
            GroupCost *gc = &out->groups[g];
            gc->cost = sg->cost;
            gc->level_s = ARENA_ARRAY(arena, double, s->levels + 1);
            for (int l = 0; l < s->levels; l++) gc->level_s[l] = sg->level_s[l];
            gc->level = sg->level;
            gc->stmt_count = sg->stmt_count;
        }
    }
    arena_free_all(&scratch);
    return EVAL_OK;
}

/* ------------------------------------------------------------ the memo */

typedef struct LowerMemoEntry {
    uint64_t hash; /* 0: empty */
    const uint64_t *key;
    size_t len;
    double value;
} LowerMemoEntry;

void lower_memo_init(LowerMemo *m, size_t limit) {
    memset(m, 0, sizeof *m);
    m->limit = limit;
}

void lower_memo_free(LowerMemo *m) {
    arena_free_all(&m->arena);
    m->slots = NULL;
    m->cap = m->count = 0;
}

size_t lower_memo_bytes(const LowerMemo *m) {
    return m->arena.used_total;
}

static LowerMemoEntry *memo_slot(const LowerMemo *m, const uint64_t *key, size_t len, uint64_t h) {
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        LowerMemoEntry *e = &m->slots[i];
        if (!e->hash ||
            (e->hash == h && e->len == len && memcmp(e->key, key, sizeof(uint64_t) * len) == 0))
            return e;
    }
}

bool lower_memo_get(LowerMemo *m, const uint64_t *key, size_t len, double *value) {
    if (!m->cap) {
        m->misses++;
        return false;
    }
    LowerMemoEntry *e = memo_slot(m, key, len, hash_words(key, len));
    if (!e->hash) {
        m->misses++;
        return false;
    }
    m->hits++;
    *value = e->value;
    return true;
}

void lower_memo_put(LowerMemo *m, const uint64_t *key, size_t len, double value) {
    size_t bytes = sizeof(uint64_t) * (len + 1);
    size_t ncap = 2 * (m->count + 1) > m->cap ? (m->cap ? 2 * m->cap : 256) : 0;
    if (m->arena.used_total + bytes + ncap * sizeof(LowerMemoEntry) > m->limit) {
        /* full: start again (a memo only saves work) */
        lower_memo_free(m);
        ncap = 256;
        if (bytes + ncap * sizeof(LowerMemoEntry) > m->limit) return;
    }
    if (ncap) {
        LowerMemoEntry *old = m->slots;
        size_t ocap = m->cap;
        m->slots = ARENA_ARRAY(&m->arena, LowerMemoEntry, ncap);
        m->cap = ncap;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].hash) *memo_slot(m, old[i].key, old[i].len, old[i].hash) = old[i];
    }
    uint64_t h = hash_words(key, len);
    LowerMemoEntry *e = memo_slot(m, key, len, h);
    if (e->hash) {
        e->value = value;
        return;
    }
    uint64_t *copy = ARENA_ARRAY(&m->arena, uint64_t, len + 1);
    memcpy(copy, key, sizeof(uint64_t) * len);
    *e = (LowerMemoEntry){h, copy, len, value};
    m->count++;
}
