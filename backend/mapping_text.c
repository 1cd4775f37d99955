/* mapping_text.c — a complete mapping printed back in .cmt syntax (the
 * listing's "complete mapping" line and the JSON "mapping" field), so that
 * what the optimizer chose can be pasted into a file. */
#include "backend/emit.h"

#include <stdarg.h>
#include <string.h>

void text_add(Text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *piece = arena_vprintf(t->a, fmt, ap);
    va_end(ap);
    size_t n = strlen(piece);
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->cap ? t->cap * 2 : 256) + n;
        t->buf = arena_realloc(t->a, t->buf, t->cap, cap);
        t->cap = cap;
    }
    memcpy(t->buf + t->len, piece, n + 1);
    t->len += n;
}

/* A statement's split over a dim as one value, a key: -1 none, the index
 * id i, or I + i * I + j for `(i, j) -> d` (a joint deal), so that a joint
 * deal and a split of its first index alone are told apart. */
static int split_key(const IrMapping *m, int st, int d) {
    int D = m->arch->dim_count, I = m->op->index_count;
    int idx = m->spatial.split ? m->spatial.split[st * D + d] : IR_UNSET;
    if (idx < 0 || !ir_stmt_uses_index(&m->op->stmts[st], idx)) return -1;
    const int *j = m->spatial.joint ? &m->spatial.joint[(st * D + d) * (IR_MAX_JOINT - 1)] : NULL;
    return j && j[0] >= 0 ? I + idx * I + j[0] : idx;
}

static int key_count(const IrMapping *m) {
    int I = m->op->index_count;
    return I + I * I;
}

/* Whether statement st uses an index of the key. */
static bool key_used(const IrMapping *m, int st, int key) {
    int I = m->op->index_count;
    const IrStmt *s = &m->op->stmts[st];
    if (key < I) return ir_stmt_uses_index(s, key);
    return ir_stmt_uses_index(s, (key - I) / I) || ir_stmt_uses_index(s, (key - I) % I);
}

/* "i -> d, (j, k) -> (d1, d2)" for the (dim, key) pairs marked in
 * has[d * K + key] */
static void spatial_clause(Text *t, const IrMapping *m, const bool *has) {
    const IrOp *op = m->op;
    const IrArch *arch = m->arch;
    int I = op->index_count, K = key_count(m);
    bool first = true;
    for (int key = 0; key < K; key++) {
        int n = 0;
        for (int d = 0; d < arch->dim_count; d++) n += has[d * K + key];
        if (!n) continue;
        if (key >= I)
            text_add(t, "%s(%s, %s) -> %s", first ? "" : ", ", op->indices[(key - I) / I].name,
                     op->indices[(key - I) % I].name, n > 1 ? "(" : "");
        else
            text_add(t, "%s%s -> %s", first ? "" : ", ", op->indices[key].name, n > 1 ? "(" : "");
        int k = 0;
        for (int d = 0; d < arch->dim_count; d++)
            if (has[d * K + key]) text_add(t, "%s%s", k++ ? ", " : "", arch->dims[d].name);
        if (n > 1) text_add(t, ")");
        first = false;
    }
}

const char *mapping_to_cmt(Arena *a, const IrMapping *m) {
    Text t = {a, NULL, 0, 0};
    text_add(&t, "%s", "");
    /* first: it decides which op's statements the other lines name */
    if (m->phase != PHASE_FORWARD) text_add(&t, "phase %s; ", phase_name(m->phase));
    if (m->recompute) text_add(&t, "recompute %s; ", m->recompute);
    const IrOp *op = m->op;
    const IrArch *arch = m->arch;
    int D = arch->dim_count, S = op->stmt_count, I = op->index_count, K = key_count(m);
    /* the main spatial line: along each dim, every split (an index, or a
     * joint deal) that all the statements using it take there (no
     * statement using two of them), most used first; other statements get
     * `spatial for` lines */
    bool *base = ARENA_ARRAY(a, bool, D *K + 1);
    for (int d = 0; d < D; d++) {
        bool *tried = ARENA_ARRAY(a, bool, K + 1);
        for (;;) {
            int best = -1, best_votes = 0;
            for (int key = 0; key < K; key++) {
                if (tried[key]) continue;
                int votes = 0;
                for (int st = 0; st < S; st++) votes += split_key(m, st, d) == key;
                if (votes > best_votes) {
                    best_votes = votes;
                    best = key;
                }
            }
            if (best < 0) break;
            tried[best] = true;
            bool ok = true;
            for (int st = 0; st < S && ok; st++) {
                if (!key_used(m, st, best)) continue;
                if (split_key(m, st, d) != best) ok = false;
                for (int j = 0; j < K; j++)
                    if (base[d * K + j] && key_used(m, st, j)) ok = false;
            }
            if (ok) base[d * K + best] = true;
        }
    }
    bool any = false;
    for (int k = 0; k < D * K; k++) any |= base[k];
    if (any) {
        text_add(&t, "spatial ");
        spatial_clause(&t, m, base);
        text_add(&t, "; ");
    }
    bool *done = ARENA_ARRAY(a, bool, S);
    bool *want = ARENA_ARRAY(a, bool, D *K + 1);
    for (int st = 0; st < S; st++) {
        bool deviates = false, splits = false;
        memset(want, 0, sizeof(bool) * (size_t)(D * K));
        for (int d = 0; d < D; d++) {
            int expect = -1;
            for (int key = 0; key < K; key++)
                if (base[d * K + key] && key_used(m, st, key)) expect = key;
            int have = split_key(m, st, d);
            if (have >= 0) want[d * K + have] = true;
            deviates |= have != expect;
            splits |= have >= 0;
        }
        if (!deviates || done[st] || !splits) continue;
        text_add(&t, "spatial for %s", op->stmts[st].name);
        for (int o = st + 1; o < S; o++) {
            bool same = true;
            for (int d = 0; d < D; d++) {
                int have = split_key(m, o, d);
                int mine = -1;
                for (int key = 0; key < K; key++)
                    if (want[d * K + key]) mine = key;
                same &= have == mine;
            }
            if (same) {
                text_add(&t, ", %s", op->stmts[o].name);
                done[o] = true;
            }
        }
        text_add(&t, ": ");
        spatial_clause(&t, m, want);
        text_add(&t, "; ");
    }
    /* tiles and orders: the mapping-wide line of each level, then each
     * `for` line with the statements it names (IrTile.from, IrOrder.from) */
    for (int l = 0; l < arch->level_count; l++)
        for (int line = 0; line <= m->tile.line_count; line++) {
            const char *head = line == 0 ? arena_printf(a, "tile %s: ", arch->levels[l].name)
                                         : arena_printf(a, "tile %s for ", arch->levels[l].name);
            int named = 0;
            for (int st = 0; st < S && line > 0; st++)
                for (int i = 0; i < I; i++) {
                    int k = ir_tile_slot(m, st, l, i);
                    if (m->tile.from[k] != line || m->tile.size[k] < 1) continue;
                    head = arena_printf(a, "%s%s%s", head, named++ ? ", " : "", op->stmts[st].name);
                    break;
                }
            if (line > 0) head = arena_printf(a, "%s: ", head);
            int n = 0;
            for (int i = 0; i < I; i++)
                for (int st = 0; st < S; st++) {
                    int k = ir_tile_slot(m, st, l, i);
                    if (m->tile.from[k] != line || m->tile.size[k] < 1) continue;
                    text_add(&t, "%s%s %lld", n++ ? ", " : head, op->indices[i].name,
                             (long long)m->tile.size[k]);
                    break;
                }
            if (n) text_add(&t, "; ");
        }
    for (int l = 0; l < arch->level_count; l++)
        for (int line = 0; line <= m->order.line_count; line++) {
            int first = -1, named = 0;
            for (int st = 0; st < S; st++) {
                int o = ir_order_slot(m, st, l);
                if (m->order.from[o] != line || m->order.length[o] <= 0) continue;
                if (first < 0) first = st;
                if (line == 0) break;
                text_add(&t, "%s%s",
                         named++ ? ", " : arena_printf(a, "order %s for ", arch->levels[l].name),
                         op->stmts[st].name);
            }
            if (first < 0) continue;
            int o = ir_order_slot(m, first, l);
            if (line == 0)
                text_add(&t, "order %s: ", arch->levels[l].name);
            else
                text_add(&t, ": ");
            for (int k = 0; k < m->order.length[o]; k++)
                text_add(&t, "%s%s", k ? ", " : "", op->indices[m->order.perm[o * I + k]].name);
            text_add(&t, "; ");
        }
    /* each group's statements in order, bucketed once (a scan per group
     * was quadratic in the statements) */
    int G = m->fuse.group ? m->fuse.group_count : 0;
    int *first = ARENA_ARRAY(a, int, G + 2), *members = ARENA_ARRAY(a, int, S + 1);
    for (int st = 0; st < S && G; st++)
        if (m->fuse.group[st] >= 0 && m->fuse.group[st] < G) first[m->fuse.group[st] + 1]++;
    for (int g = 0; g < G; g++) first[g + 1] += first[g];
    int *fill = ARENA_ARRAY(a, int, G + 1);
    for (int st = 0; st < S && G; st++) {
        int g = m->fuse.group[st];
        if (g >= 0 && g < G) members[first[g] + fill[g]++] = st;
    }
    for (int g = 0; g < G; g++) {
        int n = first[g + 1] - first[g];
        if (!n || !sched_fuse_group_written(m, g, n)) continue;
        for (int k = 0; k < n; k++)
            text_add(&t, "%s%s", k ? ", " : "fuse ", op->stmts[members[first[g] + k]].name);
        int lv = m->fuse.level ? m->fuse.level[g] : IR_UNSET;
        if (lv >= 0) text_add(&t, " at %s", arch->levels[lv].name);
        if (m->fuse.overlap && m->fuse.overlap[g] >= 0)
            text_add(&t, " overlap %s", overlap_words[m->fuse.overlap[g]]);
        if (m->fuse.reserve && m->fuse.reserve[g].total > 0)
            text_add(&t, " reserve %lld of %lld", (long long)m->fuse.reserve[g].units,
                     (long long)m->fuse.reserve[g].total);
        text_add(&t, "; ");
    }
    for (int st = 0, k = 0; st < S && m->online; st++)
        if (m->online[st])
            text_add(&t, "%s%s%s", k++ ? ", " : "online ", op->stmts[st].name,
                     st == S - 1 || !memchr(m->online + st + 1, true, (size_t)(S - st - 1)) ? "; "
                                                                                            : "");
    if (m->overlap == OVERLAP_NONE || ir_given(m->overlap_span)) {
        text_add(&t, "overlap %s", overlap_name(m->overlap));
        if (m->reserve.total > 0)
            text_add(&t, " reserve %lld of %lld", (long long)m->reserve.units,
                     (long long)m->reserve.total);
        text_add(&t, "; ");
    }
    if (m->objective_given) text_add(&t, "objective %s; ", objective_name(m->objective));
    const IrPipeline *pl = &m->pipeline;
    if (pl->full_arch) {
        text_add(&t, "pipeline %s", pl->full_arch->dims[pl->dim].name);
        if (pl->schedule == PIPE_INTERLEAVED)
            text_add(&t, " interleaved %lld", (long long)pl->chunks);
        else if (pl->schedule != PIPE_1F1B)
            text_add(&t, " %s", pipe_schedule_name(pl->schedule));
        text_add(&t, "; ");
    }
    if (pl->batch_param)
        text_add(&t, "microbatches %lld of %s; ",
                 (long long)(pl->microbatches > 1 ? pl->microbatches : 1), pl->batch_param);
    else if (pl->microbatches > 1)
        text_add(&t, "microbatches %lld; ", (long long)pl->microbatches);
    if (m->repeat > 1) text_add(&t, "repeat %lld; ", (long long)m->repeat);
    /* the batch the line gives, or the optimizer chose, is written as a
     * value of the line: the header may say another */
    if (m->serve.kind != SERVE_NONE && m->serve.batch_written > 0)
        text_add(&t, "serve %s of %s = %lld; ", serve_kind_name(m->serve.kind),
                 m->serve.sequences_param, (long long)m->serve.batch_written);
    else if (m->serve.kind != SERVE_NONE)
        text_add(&t, "serve %s of %s; ", serve_kind_name(m->serve.kind), m->serve.sequences_param);
    if (t.len >= 1 && t.buf[t.len - 1] == ' ') t.buf[--t.len] = 0;
    return t.buf;
}

const char *serve_step_words(ServeKind kind) {
    return kind == SERVE_PREFILL  ? "time to first token"
           : kind == SERVE_VERIFY ? "time per verification pass"
                                  : "time per output token";
}

const char *serve_step_short(ServeKind kind) {
    return kind == SERVE_PREFILL ? "TTFT" : kind == SERVE_VERIFY ? "verify" : "TPOT";
}

const char *serve_rate_words(ServeKind kind) {
    return kind == SERVE_PREFILL ? "prompts" : kind == SERVE_VERIFY ? "passes" : "tokens";
}
