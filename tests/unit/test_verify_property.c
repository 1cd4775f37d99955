/* test_verify_property.c — the reference interpreter (passes/verify.c) as
 * the oracle of the cost model.  Random small cases, each written as .cmt
 * text so that the real front end checks it: an op of 1 to 6 statements
 * (contractions, element-wise statements, sum/max/min/mean reductions,
 * softmax-like chains, an intermediate read with renamed indices), an arch
 * of 2 to 4 memory levels with 0 to 2 clusters of 1 or 2 dims nested
 * between them (sometimes a level split by role, a stream level or an
 * accumulator beside the innermost memory, sometimes tight capacities), and a mapping: a hand mapping (random splits, per-statement
 * split overrides, tiles at several levels, random loop orders, fusion
 * groups of consecutive statements at random levels) or the optimizer's
 * answer for holes in it.  Every case the checker accepts is lowered and
 * executed by the interpreter; verify_compare must find no disagreement:
 * equal work, traffic and collective counts and bytes, an analytic
 * footprint never below the interpreter's peak, and no accepted schedule
 * over a capacity when executed — hand mappings and optimizer answers
 * alike, except two documented kinds where the model is an upper bound
 * (docs/cost-model.md 12): traffic or collectives of a less busy instance
 * of an uneven split, and traffic where a reader renames an intermediate
 * of its group.
 *
 *   CMT_VERIFY_SEED   the seed (default 20240806); each case has its own
 *                     stream, so one case reruns alone
 *   CMT_VERIFY_CASES  cases to check (default 500; make verify-long: 5000)
 *   CMT_VERIFY_CASE   run only this case and print it whatever happens
 *   CMT_VERIFY_SHOW   failing cases printed in full per kind (default 2)
 *   CMT_VERIFY_TIME_LIMIT  the optimizer's limit per case in seconds
 *                     (default 0.5; 0 for none: tests/run.sh under valgrind,
 *                     where a limit cutting into lp_solve's presolve makes
 *                     it read uninitialised values)
 *   CMT_VERIFY_OFF    letters of features the generator leaves out, to
 *                     tell kinds of disagreement apart: u (clusters
 *                     between the innermost memory and the compute units),
 *                     b (clusters before the outermost memory), s (levels
 *                     split by role), r (renamed reads), o (per-statement
 *                     splits), f (fusion), t (tight capacities), k (stream
 *                     levels: `kind stream`), a (an accumulator beside the
 *                     innermost memory), e (uneven splits and tiles: 30% of
 *                     the hand cases otherwise split any index over any dim
 *                     and take tiles that need not divide the range, only
 *                     the enclosing tile), n (`online` reductions in a
 *                     quarter of the fused groups), d (a fifth of the
 *                     clusters of two dims wired as a dragonfly)
 *   CMT_VERIFY_ON     letters of features left out unless named here:
 *                     w (`where` restrictions on a sixth of the statements
 *                     that iterate two indices; the model does not yet
 *                     agree on all of them, docs/cost-model.md 12)
 *
 * A disagreement prints the case as a .cmt file (an optimizer case with
 * its completed mapping) followed by the disagreement lines. */
#include "backend/emit.h"
#include "passes/verify.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ----------------------------------------------------------- random */

typedef struct Rng {
    uint64_t s;
} Rng;

static uint64_t rnd(Rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int pick(Rng *r, int n) {
    return n > 0 ? (int)(rnd(r) % (uint64_t)n) : 0;
}

static bool chance(Rng *r, double p) {
    return (double)(rnd(r) >> 11) * 0x1.0p-53 < p;
}

/* Whether the generator may use a feature (CMT_VERIFY_OFF). */
/* Features the generator uses unless CMT_VERIFY_OFF names them; those in
 * OPT_IN only when CMT_VERIFY_ON names them (w: the model does not yet
 * agree with the interpreter on them, see docs/cost-model.md 12). */
#define OPT_IN "w"
static bool on(char feature) {
    if (strchr(OPT_IN, feature)) {
        const char *in = getenv("CMT_VERIFY_ON");
        return in && strchr(in, feature);
    }
    const char *off = getenv("CMT_VERIFY_OFF");
    return !off || !strchr(off, feature);
}

/* ------------------------------------------------------------- arch */

#define MAX_LEVELS 4
#define MAX_DIMS 4

typedef struct GenArch {
    int levels;
    bool role_split[MAX_LEVELS];
    int dims;
    int dim_size[MAX_DIMS];
    int dim_cluster[MAX_DIMS];
    int clusters;
    int cluster_gap[2]; /* declared before memory level gap (levels: before compute) */
} GenArch;

static const char *dim_names[MAX_DIMS] = {"xa", "ya", "xb", "yb"};
static const char *topologies[] = {"ring", "mesh", "torus", "switch", "full"};

static void gen_arch(Rng *r, GenArch *a, Text *t) {
    memset(a, 0, sizeof *a);
    a->levels = 2 + pick(r, 3);
    for (int l = 1; l < a->levels; l++) a->role_split[l] = chance(r, 0.12) && on('s');
    a->clusters = pick(r, 3);
    int instances = 1;
    for (int c = 0; c < a->clusters; c++) {
        /* between two memories, after the last one, rarely before the first */
        a->cluster_gap[c] = chance(r, 0.08) ? 0 : 1 + pick(r, a->levels);
        if (a->cluster_gap[c] == 0 && !on('b')) a->cluster_gap[c] = 1;
        if (a->cluster_gap[c] == a->levels && !on('u')) a->cluster_gap[c] = a->levels - 1;
        if (a->cluster_gap[c] == 0 && !on('b')) a->cluster_gap[c] = 1;
        if (c == 1 && a->cluster_gap[1] < a->cluster_gap[0]) {
            int x = a->cluster_gap[0];
            a->cluster_gap[0] = a->cluster_gap[1];
            a->cluster_gap[1] = x;
        }
        int n = 1 + pick(r, 2);
        for (int k = 0; k < n && a->dims < MAX_DIMS; k++) {
            int size = 1 + pick(r, 4);
            if (instances * size > 64) size = 1;
            instances *= size;
            a->dim_size[a->dims] = size;
            a->dim_cluster[a->dims++] = c;
        }
    }
    text_add(t, "arch ar {\n  clock 1 GHz;\n");
    for (int l = 0; l <= a->levels; l++) {
        for (int c = 0; c < a->clusters; c++) {
            if (a->cluster_gap[c] != l) continue;
            text_add(t, "  cluster c%d[", c);
            bool first = true;
            for (int d = 0; d < a->dims; d++) {
                if (a->dim_cluster[d] != c) continue;
                text_add(t, "%s%s = %d", first ? "" : ", ", dim_names[d], a->dim_size[d]);
                first = false;
            }
            const char *kind = topologies[pick(r, 5)];
            /* a cluster of two dims is sometimes a dragonfly, drawn from a
             * stream of its own so the other choices stay as they were */
            Rng wiring = {r->s ^ (0xD4A6ull * (uint64_t)(c + 1))};
            int cluster_dims = 0;
            for (int d = 0; d < a->dims; d++) cluster_dims += a->dim_cluster[d] == c;
            if (cluster_dims == 2 && chance(&wiring, 0.2) && on('d')) kind = "dragonfly";
            text_add(
                t, "] %s { link_bandwidth 8 B/cycle; hop_latency 2 cycles; link_energy 1 pJ/B; }\n",
                kind);
        }
        if (l == a->levels) break;
        static const int caps[] = {64, 128, 256, 512, 1024, 4096};
        int cap = chance(r, 0.35) && on('t') ? caps[pick(r, 6)] : 1 << 20;
        if (l == 0) {
            text_add(t, "  memory L0 { bandwidth 16 B/cycle; read_energy 10 pJ/B; write_energy 10 "
                        "pJ/B; }\n");
        } else if (a->role_split[l]) {
            static const char *roles[] = {"input", "weight", "output"};
            for (int k = 0; k < 3; k++)
                text_add(t,
                         "  memory L%d%c role %s { capacity %d B; bandwidth 64 B/cycle; energy 1 "
                         "pJ/B; }\n",
                         l, "iwo"[k], roles[k], cap);
        } else {
            /* stream levels and an accumulator beside the innermost memory
             * (docs/cost-model.md 3) from a stream of their own, so the
             * other choices of a seed's cases stay as they were */
            Rng extra = {r->s ^ (0x5EEDull * (uint64_t)(l + 1))};
            bool stream = chance(&extra, 0.25) && on('k');
            text_add(t, "  memory L%d { capacity %d B; bandwidth 64 B/cycle; energy 1 pJ/B;%s }\n",
                     l, cap, stream ? " kind stream;" : "");
            if (l == a->levels - 1 && chance(&extra, 0.3) && on('a')) {
                int acap = chance(&extra, 0.35) && on('t') ? caps[pick(&extra, 6)] : 1 << 20;
                text_add(t,
                         "  memory L%da role accumulator { capacity %d B; bandwidth 32 B/cycle; "
                         "energy 0.5 pJ/B; }\n",
                         l, acap);
            }
        }
    }
    text_add(t, "  compute mac matrix { throughput 64 MAC/cycle; energy 0.5 pJ/MAC; }\n");
    text_add(
        t, "  compute simd vector { throughput 8 op/cycle; energy 0.25 pJ/op; cost exp 2; }\n}\n");
}

/* The name a mapping line uses for memory level l. */
static const char *level_name(const GenArch *a, int l, char *buf) {
    snprintf(buf, 8, a->role_split[l] ? "L%di" : "L%d", l);
    return buf;
}

/* Whether dim d lies outside memory level l (declared before it). */
static bool dim_outside(const GenArch *a, int d, int l) {
    return a->cluster_gap[a->dim_cluster[d]] <= l;
}

/* --------------------------------------------------------------- op */

#define MAX_IDX 12
#define MAX_TENS 20
#define MAX_STMTS 8

typedef struct GenOp {
    int nidx;
    int ext[MAX_IDX];
    int ntens;
    char tname[MAX_TENS][8];
    int trank[MAX_TENS];
    int tidx[MAX_TENS][3]; /* as declared or first written */
    bool tinput[MAX_TENS];
    bool tread[MAX_TENS];
    const char *ttype[MAX_TENS];
    int nst;
    int st_tensor[MAX_STMTS];
    bool st_uses[MAX_STMTS][MAX_IDX];
    char st_text[MAX_STMTS][200];
} GenOp;

static const char *idx_names[MAX_IDX] = {"m", "n", "k", "j", "p", "q",
                                         "r", "u", "v", "w", "z", "h"};
static const char *types[] = {"int8", "fp16", "fp32"};

static int new_index(Rng *r, GenOp *o, int ext) {
    if (o->nidx == MAX_IDX) return pick(r, o->nidx);
    static const int exts[] = {1, 2, 2, 3, 4, 4, 4, 5, 6, 8, 8, 12, 16};
    o->ext[o->nidx] = ext > 0 ? ext : exts[pick(r, 13)];
    return o->nidx++;
}

static int new_tensor(Rng *r, GenOp *o, bool input, int rank, const int *idx) {
    int t = o->ntens++;
    snprintf(o->tname[t], sizeof o->tname[t], input ? "A%d" : "t%d", t);
    o->tinput[t] = input;
    o->trank[t] = rank;
    for (int k = 0; k < rank; k++) o->tidx[t][k] = idx[k];
    o->ttype[t] = types[pick(r, 3)];
    return t;
}

/* Appends "T[i, j]" for tensor t read (or written) with indices idx. */
static void access_text(char *buf, size_t cap, const GenOp *o, int t, const int *idx, int rank) {
    size_t n = (size_t)snprintf(buf, cap, "%s[", o->tname[t]);
    for (int k = 0; k < rank && n < cap; k++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", k ? ", " : "", idx_names[idx[k]]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* Adds statement `lhs = rhs` defining a new intermediate over lhs_idx. */
static int add_stmt(Rng *r, GenOp *o, const int *lhs_idx, int lhs_rank, const char *rhs,
                    const int *reads, int nreads) {
    int t = new_tensor(r, o, false, lhs_rank, lhs_idx);
    int s = o->nst++;
    o->st_tensor[s] = t;
    char lhs[64];
    access_text(lhs, sizeof lhs, o, t, lhs_idx, lhs_rank);
    /* one statement in six that iterates two indices restricts them
     * (`where`, docs/cost-model.md 3.1): the choice and the comparison
     * peek at the stream without advancing it, so the cases without a
     * restriction draw what they drew before */
    const char *restrict_text = "";
    if (on('w') && ((r->s >> 23) % 6) == 0) {
        int x = -1, y = -1;
        for (int i = 0; i < MAX_IDX; i++) {
            bool uses = o->st_uses[s][i];
            for (int k = 0; k < lhs_rank; k++) uses |= lhs_idx[k] == i;
            if (!uses) continue;
            if (x < 0)
                x = i;
            else if (y < 0)
                y = i;
        }
        static const char *const cmp[] = {"<=", "<", ">=", ">"};
        static char buf[64];
        int offset = (int)((r->s >> 29) % 3) - 1;
        if (x >= 0 && y >= 0) {
            snprintf(buf, sizeof buf, " where %s %s %s%s", idx_names[x], cmp[(r->s >> 26) % 4],
                     idx_names[y], offset < 0 ? " - 1" : offset > 0 ? " + 1" : "");
            restrict_text = buf;
        }
    }
    snprintf(o->st_text[s], sizeof o->st_text[s], "  %s = %s%s;\n", lhs, rhs, restrict_text);
    for (int k = 0; k < lhs_rank; k++) o->st_uses[s][lhs_idx[k]] = true;
    for (int k = 0; k < nreads; k++) o->tread[reads[k]] = true;
    return t;
}

static void mark_uses(GenOp *o, const int *idx, int rank) {
    for (int k = 0; k < rank; k++) o->st_uses[o->nst][idx[k]] = true;
}

static void gen_op(Rng *r, GenOp *o) {
    memset(o, 0, sizeof *o);
    int rank = chance(r, 0.15) ? 1 : chance(r, 0.15) ? 3 : 2;
    int idx[3];
    for (int k = 0; k < rank; k++) idx[k] = new_index(r, o, 0);
    int cur = new_tensor(r, o, true, rank, idx);
    int target = 1 + pick(r, 6);
    char rhs[200], a[64], b[64];
    while (o->nst < target && o->nst < MAX_STMTS - 3) {
        int cr = o->trank[cur];
        int ci[3];
        memcpy(ci, o->tidx[cur], sizeof ci);
        int kind = pick(r, 10);
        if (kind <= 2 && cr >= 1) {
            /* a contraction over one index of cur, with a new input */
            int red = pick(r, cr), lhs[3], ln = 0;
            int cidx[3];
            memcpy(cidx, ci, sizeof cidx);
            bool renamed = !o->tinput[cur] && chance(r, 0.35) && on('r');
            int free_i = ci[red];
            if (renamed) {
                /* read cur with the reduced dimension renamed: the
                 * attention pattern O[m, d] = P[m, n] * V1[n, d] */
                cidx[red] = new_index(r, o, o->ext[ci[red]]);
            }
            for (int k = 0; k < cr; k++)
                if (k != red) lhs[ln++] = cidx[k];
            int c = renamed && chance(r, 0.5) ? free_i : new_index(r, o, 0);
            if (ln < 3) lhs[ln++] = c;
            int w_idx[2] = {cidx[red], c};
            if (chance(r, 0.3)) {
                w_idx[0] = c;
                w_idx[1] = cidx[red];
            }
            int w = new_tensor(r, o, true, 2, w_idx);
            access_text(a, sizeof a, o, cur, cidx, cr);
            access_text(b, sizeof b, o, w, w_idx, 2);
            bool swap = chance(r, 0.3);
            snprintf(rhs, sizeof rhs, "%s * %s", swap ? b : a, swap ? a : b);
            mark_uses(o, cidx, cr);
            mark_uses(o, w_idx, 2);
            int reads[2] = {cur, w};
            cur = add_stmt(r, o, lhs, ln, rhs, reads, 2);
        } else if (kind <= 4 && cr >= 1) {
            /* a reduction, often followed by its use against cur */
            static const char *ops[] = {"sum", "max", "min", "mean"};
            int red = pick(r, cr), lhs[3], ln = 0;
            for (int k = 0; k < cr; k++)
                if (k != red) lhs[ln++] = ci[k];
            access_text(a, sizeof a, o, cur, ci, cr);
            snprintf(rhs, sizeof rhs, "%s(%s) %s", ops[pick(r, 4)], idx_names[ci[red]], a);
            mark_uses(o, ci, cr);
            int reads[1] = {cur};
            int red_t = add_stmt(r, o, lhs, ln, rhs, reads, 1);
            if (chance(r, 0.6) && o->nst < target) {
                access_text(b, sizeof b, o, red_t, lhs, ln);
                snprintf(rhs, sizeof rhs, "%s %c %s", a, "-/*+"[pick(r, 4)], b);
                mark_uses(o, ci, cr);
                int reads2[2] = {cur, red_t};
                cur = add_stmt(r, o, ci, cr, rhs, reads2, 2);
            } else {
                cur = red_t;
            }
        } else if (kind == 5 && cr >= 2 && o->nst + 4 <= target + 1) {
            /* softmax along one index: max, exp, sum, divide */
            int red = pick(r, cr), lhs[3], ln = 0;
            for (int k = 0; k < cr; k++)
                if (k != red) lhs[ln++] = ci[k];
            access_text(a, sizeof a, o, cur, ci, cr);
            snprintf(rhs, sizeof rhs, "max(%s) %s", idx_names[ci[red]], a);
            mark_uses(o, ci, cr);
            int reads[2] = {cur, 0};
            int mx = add_stmt(r, o, lhs, ln, rhs, reads, 1);
            access_text(b, sizeof b, o, mx, lhs, ln);
            snprintf(rhs, sizeof rhs, "exp(%s - %s)", a, b);
            mark_uses(o, ci, cr);
            reads[1] = mx;
            int e = add_stmt(r, o, ci, cr, rhs, reads, 2);
            access_text(a, sizeof a, o, e, ci, cr);
            snprintf(rhs, sizeof rhs, "sum(%s) %s", idx_names[ci[red]], a);
            mark_uses(o, ci, cr);
            reads[0] = e;
            int sm = add_stmt(r, o, lhs, ln, rhs, reads, 1);
            access_text(b, sizeof b, o, sm, lhs, ln);
            snprintf(rhs, sizeof rhs, "%s / %s", a, b);
            mark_uses(o, ci, cr);
            reads[1] = sm;
            cur = add_stmt(r, o, ci, cr, rhs, reads, 2);
        } else if (kind <= 7) {
            /* element-wise on cur, maybe with a broadcast operand */
            access_text(a, sizeof a, o, cur, ci, cr);
            mark_uses(o, ci, cr);
            int reads[2] = {cur, 0}, nreads = 1;
            if (chance(r, 0.5) && cr >= 1) {
                int sub[3], sn = 0;
                for (int k = 0; k < cr; k++)
                    if (chance(r, 0.5)) sub[sn++] = ci[k];
                if (!sn) sub[sn++] = ci[pick(r, cr)];
                int x = new_tensor(r, o, true, sn, sub);
                access_text(b, sizeof b, o, x, sub, sn);
                snprintf(rhs, sizeof rhs, "%s %c %s", a, "+-*/"[pick(r, 4)], b);
                reads[nreads++] = x;
            } else {
                static const char *fns[] = {"exp(%s)", "relu(%s)", "%s * 2", "%s + 1", "-%s", "%s"};
                snprintf(rhs, sizeof rhs, fns[pick(r, 6)], a);
            }
            cur = add_stmt(r, o, ci, cr, rhs, reads, nreads);
        } else if (cr >= 1 && cr < 3) {
            /* an outer product with a new input grows cur by one index */
            int c = new_index(r, o, 0), lhs[3];
            memcpy(lhs, ci, sizeof lhs);
            lhs[cr] = c;
            int w_idx[1] = {c};
            int w = new_tensor(r, o, true, 1, w_idx);
            access_text(a, sizeof a, o, cur, ci, cr);
            access_text(b, sizeof b, o, w, w_idx, 1);
            snprintf(rhs, sizeof rhs, "%s * %s * 1", a, b);
            mark_uses(o, ci, cr);
            mark_uses(o, w_idx, 1);
            int reads[2] = {cur, w};
            cur = add_stmt(r, o, lhs, cr + 1, rhs, reads, 2);
        }
    }
    if (o->nst == 0) {
        snprintf(rhs, sizeof rhs, "%s * 2", "");
        int ci[3];
        memcpy(ci, o->tidx[cur], sizeof ci);
        access_text(a, sizeof a, o, cur, ci, o->trank[cur]);
        snprintf(rhs, sizeof rhs, "exp(%s)", a);
        mark_uses(o, ci, o->trank[cur]);
        int reads[1] = {cur};
        add_stmt(r, o, ci, o->trank[cur], rhs, reads, 1);
    }
}

/* Iteration points of the largest statement. */
static int64_t largest_stmt(const GenOp *o) {
    int64_t most = 0;
    for (int s = 0; s < o->nst; s++) {
        int64_t n = 1;
        for (int i = 0; i < o->nidx; i++)
            if (o->st_uses[s][i]) n *= o->ext[i];
        if (n > most) most = n;
    }
    return most;
}

static void op_text(const GenOp *o, Text *t) {
    text_add(t, "op gen {\n");
    for (int x = 0; x < o->ntens; x++) {
        bool out = !o->tinput[x] && !o->tread[x];
        if (!o->tinput[x] && !out) continue;
        text_add(t, "  %s %s[", o->tinput[x] ? "in" : "out", o->tname[x]);
        for (int k = 0; k < o->trank[x]; k++)
            text_add(t, "%s%d", k ? ", " : "", o->ext[o->tidx[x][k]]);
        text_add(t, "] : %s;\n", o->ttype[x]);
    }
    for (int x = 0; x < o->ntens; x++)
        if (!o->tinput[x] && o->tread[x] && x % 2)
            text_add(t, "  var %s : %s;\n", o->tname[x], o->ttype[x]);
    for (int s = 0; s < o->nst; s++) text_add(t, "%s", o->st_text[s]);
    text_add(t, "}\n");
}

/* ---------------------------------------------------------- mapping */

static int gcd(int a, int b) {
    while (b) {
        int x = a % b;
        a = b;
        b = x;
    }
    return a;
}

typedef struct GenMap {
    int split[MAX_DIMS]; /* general line: index per dim, -1 */
    int over[MAX_DIMS];  /* override for the statements in `over_set` */
    bool over_set[MAX_STMTS];
    bool has_over;
} GenMap;

/* Whether the case at hand may split and tile unevenly (splits that do
 * not divide their extent, tiles that do not divide their range: blocks
 * dealt out and partial tiles, docs/cost-model.md sections 1.1 and 2).
 * Decided per case apart from the main stream (run_case), so the other
 * cases stay as they were. */
static bool uneven_case;

static void random_split(Rng *r, const GenArch *a, const GenOp *o, int *split) {
    int parts[MAX_IDX];
    for (int i = 0; i < MAX_IDX; i++) parts[i] = 1;
    for (int d = 0; d < a->dims; d++) {
        split[d] = -1;
        if (!chance(r, 0.65)) continue;
        int cand[MAX_IDX], n = 0;
        for (int i = 0; i < o->nidx; i++)
            if (uneven_case || o->ext[i] % (parts[i] * a->dim_size[d]) == 0) cand[n++] = i;
        if (!n) continue;
        int i = cand[pick(r, n)];
        split[d] = i;
        parts[i] *= a->dim_size[d];
    }
}

static void split_text(Text *t, const GenArch *a, const GenOp *o, const int *split) {
    bool first = true;
    for (int i = 0; i < o->nidx; i++) {
        int n = 0;
        for (int d = 0; d < a->dims; d++) n += split[d] == i;
        if (!n) continue;
        text_add(t, "%s%s -> %s", first ? "" : ", ", idx_names[i], n > 1 ? "(" : "");
        int k = 0;
        for (int d = 0; d < a->dims; d++)
            if (split[d] == i) text_add(t, "%s%s", k++ ? ", " : "", dim_names[d]);
        text_add(t, "%s", n > 1 ? ")" : "");
        first = false;
    }
}

/* Index i's extent per instance of level l for statement s. */
static int per_instance(const GenArch *a, const GenOp *o, const GenMap *g, int s, int i, int l) {
    const int *split = g->has_over && g->over_set[s] ? g->over : g->split;
    int e = o->ext[i];
    for (int d = 0; d < a->dims; d++)
        if (split[d] == i && dim_outside(a, d, l))
            e = uneven_case ? (e + a->dim_size[d] - 1) / a->dim_size[d] : e / a->dim_size[d];
    return e > 0 ? e : 1;
}

static void gen_hand(Rng *r, const GenArch *a, const GenOp *o, Text *t) {
    GenMap g;
    memset(&g, 0, sizeof g);
    random_split(r, a, o, g.split);
    g.has_over = o->nst > 1 && chance(r, 0.15) && on('o');
    if (g.has_over) {
        random_split(r, a, o, g.over);
        int from = 1 + pick(r, o->nst - 1);
        for (int s = from; s < o->nst; s++) g.over_set[s] = true;
    }
    Text sp = {t->a, NULL, 0, 0}, ov = {t->a, NULL, 0, 0};
    split_text(&sp, a, o, g.split);
    if (g.has_over) split_text(&ov, a, o, g.over);
    g.has_over = g.has_over && ov.len; /* an empty override is no override */
    if (sp.len) text_add(t, "  spatial %s;\n", sp.buf);
    if (g.has_over) {
        text_add(t, "  spatial for ");
        int k = 0;
        for (int s = 0; s < o->nst; s++)
            if (g.over_set[s]) text_add(t, "%s%s", k++ ? ", " : "", o->tname[o->st_tensor[s]]);
        text_add(t, ": %s;\n", ov.buf);
    }
    int tile[MAX_LEVELS][MAX_IDX];
    char ln[8];
    for (int l = 1; l < a->levels; l++) {
        bool any = false;
        Text tl = {t->a, NULL, 0, 0};
        for (int i = 0; i < o->nidx; i++) {
            tile[l][i] = 0;
            if (!chance(r, 0.5) || l >= a->levels || !chance(r, 0.75)) continue;
            int per = 0;
            for (int s = 0; s < o->nst; s++)
                if (o->st_uses[s][i]) per = gcd(per, per_instance(a, o, &g, s, i, l));
            if (per <= 0) continue;
            int outer = 0;
            for (int k = l - 1; k >= 1 && !outer; k--) outer = tile[k][i];
            int cand[32], n = 0;
            for (int d = 1; d <= per && n < 32; d++)
                if ((uneven_case || per % d == 0) && (!outer || outer % d == 0)) cand[n++] = d;
            int v = chance(r, 0.06) ? 1 + pick(r, o->ext[i]) : n ? cand[pick(r, n)] : 1;
            tile[l][i] = v;
            text_add(&tl, "%s%s %d", any ? ", " : "", idx_names[i], v);
            any = true;
        }
        if (any) text_add(t, "  tile %s: %s;\n", level_name(a, l, ln), tl.buf);
        if (chance(r, any ? 0.7 : 0.2)) {
            /* a loop order: the tiled indices and some others, shuffled */
            int ord[MAX_IDX], n = 0;
            for (int i = 0; i < o->nidx; i++)
                if (tile[l][i] || chance(r, 0.5)) ord[n++] = i;
            for (int k = n - 1; k > 0; k--) {
                int j = pick(r, k + 1), x = ord[k];
                ord[k] = ord[j];
                ord[j] = x;
            }
            if (n) {
                text_add(t, "  order %s: ", level_name(a, l, ln));
                for (int k = 0; k < n; k++) text_add(t, "%s%s", k ? ", " : "", idx_names[ord[k]]);
                text_add(t, ";\n");
            }
        }
    }
    /* fusion groups of consecutive statements */
    for (int s = 0; s < o->nst;) {
        int e = s + 1;
        while (e < o->nst && chance(r, 0.6)) e++;
        if (e - s >= 2 && on('f')) {
            text_add(t, "  fuse ");
            for (int k = s; k < e; k++)
                text_add(t, "%s%s", k > s ? ", " : "", o->tname[o->st_tensor[k]]);
            if (chance(r, 0.7)) {
                int lv = chance(r, 0.1) ? 0 : pick(r, a->levels);
                text_add(t, " at %s", level_name(a, lv, ln));
            }
            text_add(t, ";\n");
            /* a quarter of the groups run their reductions online (the
             * checker rejects the ones whose readers cannot follow); the
             * choice peeks at the stream without advancing it, so the
             * cases without it draw what they drew before */
            if (on('n') && ((r->s >> 17) & 3) == 0) {
                int named = 0;
                for (int k = s; k < e; k++) {
                    const char *eq = strstr(o->st_text[k], " = ");
                    if (!eq || !(strncmp(eq + 3, "max(", 4) == 0 ||
                                 strncmp(eq + 3, "sum(", 4) == 0 || strncmp(eq + 3, "min(", 4) == 0))
                        continue;
                    text_add(t, "%s%s", named++ ? ", " : "  online ", o->tname[o->st_tensor[k]]);
                }
                if (named) text_add(t, ";\n");
            }
        }
        s = e;
    }
}

static void gen_holes(Rng *r, const GenArch *a, const GenOp *o, Text *t) {
    char ln[8];
    int l = 1 + pick(r, a->levels - 1);
    const char *fuse = on('f') ? "  fuse ?;\n" : "";
    switch (pick(r, 4)) {
    case 0: text_add(t, "  spatial ?;\n  tile %s: ?;\n%s", level_name(a, l, ln), fuse); break;
    case 1: {
        int split[MAX_DIMS];
        random_split(r, a, o, split);
        Text sp = {t->a, NULL, 0, 0};
        split_text(&sp, a, o, split);
        if (sp.len) text_add(t, "  spatial %s;\n", sp.buf);
        text_add(t, "  tile %s: ?;\n  order %s: ?;\n", level_name(a, l, ln), level_name(a, l, ln));
        break;
    }
    case 2: text_add(t, "  spatial ?;\n%s", fuse); break;
    default: text_add(t, "  tile %s: ?;\n%s", level_name(a, l, ln), fuse); break;
    }
}

/* ------------------------------------------------------------ cases */

typedef struct Stats {
    int checked, hand, optimizer, rejected, no_answer, too_large, disagreeing;
    int hand_disagreeing, optimizer_disagreeing; /* of no known kind */
    int uneven_known;  /* uneven cases disagreeing on traffic or collectives only */
    int renamed_known; /* the model's traffic above the interpreter's, with a
                          renamed reader in the group */
    int by_kind[16], uneven_by_kind[16], first_case[16], shown[16];
    int uneven;
    double seconds;
} Stats;

static Program *load(Arena *arena, SourceManager *sm, DiagSink *diags, const char *text) {
    return unit_load_named(arena, sm, diags, "case.cmt", text);
}

static double time_limit(void) {
    const char *v = getenv("CMT_VERIFY_TIME_LIMIT");
    return v && *v ? strtod(v, NULL) : 0.5;
}

/* Whether some statement reads a tensor its own group makes under other
 * index names than its maker wrote (`t4[k,m] = t2[j,k] * ...` of
 * `t2[m,k]`). */
static bool renamed_reader(const Schedule *s) {
    for (int st = 0; st < s->op->stmt_count; st++) {
        const IrStmt *is = &s->op->stmts[st];
        for (int q = 0; q < is->input_count; q++) {
            const IrTensor *t = &s->op->tensors[is->inputs[q]];
            if (t->producer < 0 || s->stmts[t->producer].group != s->stmts[st].group) continue;
            for (int r = 0; r < t->rank; r++)
                if (sched_access_index(s, st, t->id, r) !=
                    sched_access_index(s, t->producer, t->id, r))
                    return true;
        }
    }
    return false;
}

static void run_case(uint64_t seed, int index, bool verbose, int show, Stats *st) {
    Rng r = {seed ^ ((uint64_t)(index + 1) * 0xD1B54A32D192ED03ull)};
    Rng ru = {seed ^ ((uint64_t)(index + 1) * 0x94D049BB133111EBull)};
    uneven_case = on('e') && chance(&ru, 0.3);
    Arena arena = {0};
    GenArch ga;
    GenOp go;
    Text arch = {&arena, NULL, 0, 0}, op = {&arena, NULL, 0, 0}, body = {&arena, NULL, 0, 0};
    gen_arch(&r, &ga, &arch);
    for (int tries = 0;; tries++) {
        gen_op(&r, &go);
        if (largest_stmt(&go) <= 2048 || tries == 20) break;
    }
    op_text(&go, &op);
    bool holes = chance(&r, 0.25);
    if (holes)
        gen_holes(&r, &ga, &go, &body);
    else
        gen_hand(&r, &ga, &go, &body);
    const char *text = arena_printf(&arena, "%s%smapping case for gen on ar {\n%s}\n", arch.buf,
                                    op.buf, body.buf ? body.buf : "");
    SourceManager sm;
    DiagSink diags;
    Program *p = load(&arena, &sm, &diags, text);
    if (verbose) printf("---- case %d ----\n%s", index, text);
    if (!p || diags.error_count > 0 || p->mapping_count != 1) {
        if (verbose) diags_render_text(stdout, &sm, &diags, (DiagRenderOptions){false});
        st->rejected++;
        arena_free_all(&arena);
        return;
    }
    const IrMapping *m = p->mappings[0];
    if (!schedule_supported(m->arch)) {
        st->rejected++;
        arena_free_all(&arena);
        return;
    }
    const char *complete = NULL;
    if (m->hole_count > 0) {
        OptimizeOptions co;
        memset(&co, 0, sizeof co);
        co.time_limit_s = time_limit();
        SolverReport rep;
        m = complete_mapping(&arena, p, m, &co, &rep);
        if (!m) {
            if (verbose) printf("optimizer found no mapping\n");
            st->no_answer++;
            arena_free_all(&arena);
            return;
        }
        complete = mapping_to_cmt(&arena, m);
    }
    Schedule *s = lower_mapping(&arena, m, false, NULL);
    VerifyReport vr;
    if (!verify_schedule(&arena, s, &vr)) {
        if (verbose) printf("too large to verify (%.3g element steps)\n", vr.cost);
        st->too_large++;
        arena_free_all(&arena);
        return;
    }
    st->checked++;
    if (holes)
        st->optimizer++;
    else
        st->hand++;
    VerifyDiff *d;
    int n = verify_compare(&arena, s, &vr, &d);
    bool kinds[16] = {false}, print = verbose;
    for (int k = 0; k < n; k++) kinds[d[k].kind] = true;
    if (vr.uneven) st->uneven++;
    for (int k = 0; k < 16; k++) {
        if (!kinds[k]) continue;
        if (!st->by_kind[k]) st->first_case[k] = index;
        st->by_kind[k]++;
        if (vr.uneven) st->uneven_by_kind[k]++;
        if (st->shown[k] < show && (!vr.uneven || getenv("CMT_VERIFY_UNEVEN"))) {
            st->shown[k]++;
            print = true;
        }
    }
    if (n) st->disagreeing++;
    /* An uneven hand case may disagree on traffic and collectives only
     * where a less busy instance differs from the busiest one the model
     * follows (docs/cost-model.md section 12, "Known disagreements"): it
     * keeps an operand tile across an iteration in which it idles, or
     * its multicast group is smaller.  Those are counted and printed;
     * work, footprints, capacities and placement must still agree. */
    /* the uneven kind: traffic and collectives only, each the model's
     * figure at least the interpreter's (a collective the model lacks
     * covered by a wider one it runs): an upper bound */
    bool known = vr.uneven && n;
    for (int k = 0; k < n && known; k++)
        known = (d[k].kind == VD_TRAFFIC || d[k].kind == VD_COLL_COUNT ||
                 d[k].kind == VD_COLL_BYTES || d[k].kind == VD_COLL_MISSING) &&
                d[k].analytic >= d[k].measured;
    /* A reader that renames an intermediate's indices may, in a pass after
     * its maker's, need exactly the tile the maker wrote last: the
     * interpreter reads it there, the model counts a load (section 12):
     * traffic only, and the model's above the interpreter's. */
    bool renamed = !known && n && renamed_reader(s);
    for (int k = 0; k < n && renamed; k++)
        renamed = d[k].kind == VD_TRAFFIC && d[k].analytic > d[k].measured;
    if (known)
        st->uneven_known++;
    else if (renamed)
        st->renamed_known++;
    else if (n && holes)
        st->optimizer_disagreeing++;
    else if (n)
        st->hand_disagreeing++;
    if (print) {
        if (!verbose) {
            printf("---- case %d (CMT_VERIFY_CASE=%d CMT_VERIFY_SEED=%llu) ----\n", index, index,
                   (unsigned long long)seed);
            if (complete)
                printf("%s%smapping case for gen on ar {\n  %s\n}\n// holes as generated:\n// %s",
                       arch.buf, op.buf, complete, body.buf);
            else
                printf("%s", text);
        } else if (complete) {
            printf("complete mapping: %s\n", complete);
        }
        if (vr.uneven) printf("  note: uneven shares (%s)\n", vr.uneven);
        for (int k = 0; k < n; k++)
            printf("  disagreement (%s): %s\n", verify_diff_kind_name(d[k].kind), d[k].text);
        if (!n) printf("  no disagreement\n");
    }
    arena_free_all(&arena);
}

static long env_long(const char *name, long dflt) {
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    return *end ? dflt : x;
}

int main(void) {
    uint64_t seed = (uint64_t)env_long("CMT_VERIFY_SEED", 20240806);
    long cases = env_long("CMT_VERIFY_CASES", 500);
    long only = env_long("CMT_VERIFY_CASE", -1);
    int show = (int)env_long("CMT_VERIFY_SHOW", 2);
    Stats st;
    memset(&st, 0, sizeof st);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (only >= 0) {
        run_case(seed, (int)only, true, show, &st);
        return 0;
    }
    /* generate until `cases` were checked (rejected ones do not count) */
    int index = 0;
    for (; st.checked < cases && index < cases * 4; index++)
        run_case(seed, index, false, show, &st);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    st.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("verify property: %d cases (%d hand, %d optimizer), %d disagreements (%d of them "
           "where the model is a documented upper bound), seed %llu\n",
           st.checked, st.hand, st.optimizer, st.disagreeing, st.uneven_known + st.renamed_known,
           (unsigned long long)seed);
    printf("  %d generated: %d rejected by the checker, %d without an optimizer answer, %d too "
           "large; %.1f s\n",
           index, st.rejected, st.no_answer, st.too_large, st.seconds);
    printf("  %d cases have uneven shares (a split or tile that does not divide its range)\n",
           st.uneven);
    for (int k = 0; k < 16; k++)
        if (st.by_kind[k])
            printf("  %d of %d cases disagree on %s, %d of them with uneven shares (first: "
                   "CMT_VERIFY_CASE=%d CMT_VERIFY_SEED=%llu)\n",
                   st.by_kind[k], st.checked, verify_diff_kind_name((VerifyDiffKind)k),
                   st.uneven_by_kind[k], st.first_case[k], (unsigned long long)seed);
    CHECK(st.checked >= cases, "verify property: every requested case was checked");
    /* soundness holds on every case: no schedule the model accepts holds
     * more than a capacity when executed */
    CHECK(st.by_kind[VD_CAPACITY] == 0,
          "verify property: no accepted schedule exceeds a capacity when executed");
    /* Every case, a hand mapping or the optimizer's answer (which depends
     * on what the time limit lets lp_solve finish under the machine's
     * load, but whichever mapping it is, the model must be exact on it),
     * agrees exactly or disagrees in one of the two documented ways. */
    printf("  %d of %d hand cases and %d of %d optimizer answers disagree; known kinds: %d "
           "uneven cases where a less busy instance differs and the model is an upper bound, %d "
           "count traffic above the interpreter's (a renamed reader finding its maker's "
           "last tile)\n",
           st.hand_disagreeing, st.hand, st.optimizer_disagreeing, st.optimizer, st.uneven_known,
           st.renamed_known);
    CHECK(st.hand_disagreeing == 0,
          "verify property: every hand case agrees exactly with the interpreter");
    CHECK(st.optimizer_disagreeing == 0,
          "verify property: every optimizer answer agrees exactly with the interpreter");
    return unit_finish();
}
