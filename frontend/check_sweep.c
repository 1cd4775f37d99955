/* check_sweep.c — sweeps (docs/language.md 5.11): each axis's values (a
 * list, `range` or `geometric`), the names of the arch and mapping axes,
 * each parameter axis against the parameters it binds in every mapping
 * and arch it meets, zips of equal length and the count of points; and
 * the mapping of one point, built from the mapping the point names with
 * the bindings it sets. */
#include "sema.h"

#include <math.h>
#include <string.h>

typedef struct SweepCtx {
    Sema *s;
    Arena *arena;
    DiagSink *diags;
    const Decl *decl;
    bool ok;
} SweepCtx;

/* A count as a whole number while it is one exactly (100001, not 1e+05);
 * past 2^53 with an exponent. */
static const char *count_text(SweepCtx *c, double n) {
    if (n < 9007199254740992.0) return arena_printf(c->arena, "%.0f", n);
    return arena_printf(c->arena, "%.4g", n);
}
static const char *text_of(SweepCtx *c, Span span) {
    return span_text(c->arena, c->s->prog->sources, span);
}

static bool no_unit(UnitDim d) {
    return d.num == BU_NONE && d.den == BU_NONE;
}

static double value_number(Value v) {
    return v.kind == VK_INT ? (double)v.i : v.r;
}

static UnitDim value_dim(Value v) {
    return v.kind == VK_QUANTITY ? v.dim : (UnitDim){BU_NONE, BU_NONE};
}

/* "a number", "a bandwidth": what a value is, for a message */
static const char *dim_text(SweepCtx *c, UnitDim d) {
    const char *desc = no_unit(d) ? "number" : unit_dim_describe(d);
    return arena_printf(c->arena, "%s %s", strchr("aeiou", desc[0]) ? "an" : "a", desc);
}

static Value eval(SweepCtx *c, const Expr *e, Ident axis) {
    ConstEnv env = c->s->env;
    env.diags = c->diags;
    env.expr_depth = 0;
    env.where = subject_of("sweep axis ", axis.name);
    Value v = const_eval(&env, e);
    if (v.kind == VK_ERROR) c->ok = false;
    return v;
}

/* ------------------------------------------------------ axis values */

typedef struct AxisValues {
    Value *values; /* parameter axes */
    const char **texts;
    int count;
} AxisValues;

static void push_value(AxisValues *av, Value v, const char *text) {
    av->values[av->count] = v;
    av->texts[av->count] = text;
    av->count++;
}

/* `range(A, B, S)` and `geometric(A, B, F)`: false (reported) when the
 * arguments are wrong or give no value. */
static bool expand_range(SweepCtx *c, const SweepAxisDecl *ax, const Expr *call, AxisValues *av) {
    const char *fn = call->u.call.fn.name;
    bool geometric = strcmp(fn, "geometric") == 0;
    if (call->u.call.arg_count != 3) {
        Diag *d = diag_error(c->diags, call->span, "E0391",
                             "`%s` takes three values (from, to, %s), got %d", fn,
                             geometric ? "factor" : "step", call->u.call.arg_count);
        diag_help(d, c->diags, "for example `%s`",
                  geometric ? "geometric(1024, 16384, 2)" : "range(1 TB/s, 4 TB/s, 0.5 TB/s)");
        c->ok = false;
        return false;
    }
    Value from = eval(c, call->u.call.args[0], ax->name);
    Value to = eval(c, call->u.call.args[1], ax->name);
    Value by = eval(c, call->u.call.args[2], ax->name);
    if (from.kind == VK_ERROR || to.kind == VK_ERROR || by.kind == VK_ERROR) return false;
    UnitDim dim = value_dim(from);
    const Expr *bad = !unit_dim_eq(value_dim(to), dim) ? call->u.call.args[1]
                      : geometric ? (no_unit(value_dim(by)) ? NULL : call->u.call.args[2])
                      : !unit_dim_eq(value_dim(by), dim) ? call->u.call.args[2]
                                                         : NULL;
    if (bad) {
        Diag *d = diag_error(
            c->diags, bad->span, "E0394", "`%s` in `%s` is %s, but the range starts at %s (%s)",
            text_of(c, bad->span), fn, dim_text(c, value_dim(eval(c, bad, ax->name))),
            text_of(c, call->u.call.args[0]->span), dim_text(c, dim));
        diag_note(d, c->diags, "%s",
                  geometric ? "the factor is a plain number, the bounds one unit"
                            : "the bounds and the step have one unit");
        c->ok = false;
        return false;
    }
    double a = value_number(from), b = value_number(to), step = value_number(by);
    bool integer = from.kind == VK_INT && to.kind == VK_INT && by.kind == VK_INT;
    const char *why = NULL;
    if (geometric && !(step > 1))
        why = "the factor must be more than 1";
    else if (!geometric && !(step > 0))
        why = "the step must be positive";
    else if (b < a)
        why = "it ends before it starts";
    else if (geometric && !(a > 0))
        why = "a geometric range starts above 0";
    if (why) {
        Diag *d = diag_error(c->diags, call->span, "E0391", "`%s` gives no values: %s",
                             text_of(c, call->span), why);
        diag_note(d, c->diags, "`%s(from, to, %s)`: from, then each %s the last, up to to", fn,
                  geometric ? "factor" : "step", geometric ? "value times factor" : "step past");
        c->ok = false;
        return false;
    }
    /* the count first, so that an absurd range is refused before it is
     * listed */
    double count =
        geometric ? floor(log(b / a) / log(step) + 1e-9) + 1 : floor((b - a) / step + 1e-9) + 1;
    if (!(count <= IR_SWEEP_MAX_VALUES)) {
        diag_error(c->diags, call->span, "E0397",
                   "`%s` has %s values, more than the %d an axis may have", text_of(c, call->span),
                   count_text(c, count), IR_SWEEP_MAX_VALUES);
        c->ok = false;
        return false;
    }
    int n = (int)count;
    av->values = ARENA_ARRAY(c->arena, Value, n + 1);
    av->texts = ARENA_ARRAY(c->arena, const char *, n + 1);
    for (int k = 0; k < n; k++) {
        double x = geometric ? a * pow(step, k) : a + step * k;
        Value v = integer        ? (Value){.kind = VK_INT, .i = (int64_t)llround(x)}
                  : no_unit(dim) ? (Value){.kind = VK_REAL, .r = x}
                                 : (Value){.kind = VK_QUANTITY, .r = x, .dim = dim};
        push_value(av, v, value_text(c->arena, v));
    }
    return true;
}

static bool parameter_values(SweepCtx *c, const SweepAxisDecl *ax, AxisValues *av) {
    if (!ax->is_list && ax->value_count == 1 && ax->values[0]->kind == EX_CALL &&
        (strcmp(ax->values[0]->u.call.fn.name, "range") == 0 ||
         strcmp(ax->values[0]->u.call.fn.name, "geometric") == 0))
        return expand_range(c, ax, ax->values[0], av);
    av->values = ARENA_ARRAY(c->arena, Value, ax->value_count + 1);
    av->texts = ARENA_ARRAY(c->arena, const char *, ax->value_count + 1);
    bool ok = true;
    for (int k = 0; k < ax->value_count; k++) {
        Value v = eval(c, ax->values[k], ax->name);
        if (v.kind == VK_ERROR) {
            ok = false;
            continue;
        }
        if (av->count > 0 && !unit_dim_eq(value_dim(v), value_dim(av->values[0]))) {
            Diag *d =
                diag_error(c->diags, ax->values[k]->span, "E0394",
                           "`%s` is %s, but axis `%s` starts with %s (%s)",
                           text_of(c, ax->values[k]->span), dim_text(c, value_dim(v)),
                           ax->name.name, av->texts[0], dim_text(c, value_dim(av->values[0])));
            diag_note(d, c->diags, "an axis's values have one unit");
            c->ok = ok = false;
            continue;
        }
        push_value(av, v, text_of(c, ax->values[k]->span));
    }
    return ok;
}

/* The declarations an arch or mapping axis names (kind DK_ARCH or
 * DK_MAPPING), reported when unknown or of another kind. */
static bool name_values(SweepCtx *c, const SweepAxisDecl *ax, DeclKind kind, const Decl **decls,
                        AxisValues *av) {
    const char *what = kind == DK_ARCH ? "arch" : "mapping";
    av->texts = ARENA_ARRAY(c->arena, const char *, ax->value_count + 1);
    bool ok = true;
    for (int k = 0; k < ax->value_count; k++) {
        const Expr *e = ax->values[k];
        if (e->kind != EX_NAME) {
            Diag *d = diag_error(c->diags, e->span, "E0392", "the %s axis lists %s names, got `%s`",
                                 what, what, text_of(c, e->span));
            diag_help(d, c->diags, "for example `%s = [%s];`", what,
                      kind == DK_ARCH ? "a100, h100" : "tiled, fused");
            c->ok = ok = false;
            continue;
        }
        GlobalEntry *g = globals_find(c->s->globals, e->u.name);
        if (!g || g->decl->kind != kind) {
            int n = 0;
            const char **names = globals_names(c->arena, c->s->globals, (int)kind, &n);
            if (!g && module_missing(c->diags)) {
                c->ok = ok = false;
                continue;
            }
            Diag *d = diag_error(c->diags, e->span, "E0392",
                                 g ? "`%s` is not %s %s" : "unknown %s `%s`", g ? e->u.name : what,
                                 g ? (kind == DK_ARCH ? "an" : "a") : e->u.name, g ? what : "");
            if (g) diag_label(d, c->diags, g->decl->name.span, "`%s` is defined here", e->u.name);
            const char *best = spell_suggest(e->u.name, names, n);
            if (best) diag_help(d, c->diags, "did you mean `%s`?", best);
            c->ok = ok = false;
            continue;
        }
        decls[av->count] = g->decl;
        av->texts[av->count++] = e->u.name;
    }
    return ok;
}

/* ------------------------------------------------- what an axis binds */

static int op_param_index(const Decl *op, Name name) {
    for (int i = 0; op && i < op->u.op.param_count; i++)
        if (op->u.op.params[i].name.name == name) return i;
    return -1;
}

/* The arch's parameters at their defaults, bound quietly (their mistakes
 * are the arch's own, reported there; a parameter without a default is
 * still named, its value VK_ERROR); false when some could not be bound. */
static bool arch_defaults(Sema *s, const Decl *arch, ArchParams *p) {
    DiagSink quiet;
    diags_init(&quiet, s->arena);
    DiagSink *was = s->diags;
    s->diags = &quiet;
    bool ok = arch_bind_params(s, arch, NULL, 0, arch->name.span, p);
    s->diags = was;
    return ok;
}

static int arch_param_index(const ArchParams *p, Name name) {
    for (int i = 0; i < p->count; i++)
        if (p->names[i] == name) return i;
    return -1;
}

static const Decl *global_of(SweepCtx *c, Name name, DeclKind kind) {
    GlobalEntry *g = name ? globals_find(c->s->globals, name) : NULL;
    return g && g->decl->kind == kind ? g->decl : NULL;
}

/* Each parameter axis binds a parameter of the op or the arch of every
 * mapping and arch it meets, with values that parameter takes. */
static void check_bindings(SweepCtx *c, const SweepAxisDecl *ax, const AxisValues *values,
                           const Decl **mappings, int mapping_count, const Decl **archs,
                           int arch_count) {
    for (int m = 0; m < mapping_count; m++) {
        const MappingDecl *md = &mappings[m]->u.mapping;
        const Decl *op = global_of(c, md->op.name, DK_OP);
        int arch_total = arch_count > 0 ? arch_count : 1;
        for (int a = 0; a < arch_total; a++) {
            const Decl *arch = arch_count > 0 ? archs[a] : global_of(c, md->arch.name, DK_ARCH);
            if (!op || !arch) continue; /* the mapping reports it */
            int op_index = op_param_index(op, ax->name.name);
            ArchParams ap;
            bool sound = arch_defaults(c->s, arch, &ap);
            int arch_index = arch_param_index(&ap, ax->name.name);
            if (op_index < 0 && arch_index < 0) {
                if (!sound) continue; /* the arch's own mistakes */
                Diag *d = diag_error(c->diags, ax->name.span, "E0393",
                                     "`%s` is neither a parameter of op `%s` nor of arch `%s`",
                                     ax->name.name, op->name.name, arch->name.name);
                diag_note(d, c->diags, "mapping `%s` maps `%s` on `%s`", mappings[m]->name.name,
                          op->name.name, arch->name.name);
                const char **names =
                    ARENA_ARRAY(c->arena, const char *, op->u.op.param_count + ap.count + 1);
                int n = 0;
                for (int i = 0; i < op->u.op.param_count; i++)
                    names[n++] = op->u.op.params[i].name.name;
                for (int i = 0; i < ap.count; i++) names[n++] = ap.names[i];
                const char *best = spell_suggest(ax->name.name, names, n);
                if (best) diag_help(d, c->diags, "did you mean `%s`?", best);
                c->ok = false;
                return;
            }
            for (int k = 0; k < values->count; k++) {
                Value v = values->values[k];
                const char *wants = NULL;
                if (op_index >= 0 && v.kind != VK_INT)
                    wants = arena_printf(c->arena, "op `%s`'s parameter takes an integer",
                                         op->name.name);
                else if (arch_index >= 0) {
                    Value def = ap.values[arch_index];
                    if (!value_fits(def, v))
                        wants = arena_printf(
                            c->arena, "arch `%s`'s parameter takes %s (its default is %s)",
                            arch->name.name, value_kind_text(c->arena, def), ap.texts[arch_index]);
                }
                if (wants) {
                    /* name a value that is not whole, when the axis has one
                     * (range(1, 4, 0.5) fails at 1.5, though 1 is written
                     * as a number too) */
                    for (int j = k; op_index >= 0 && j < values->count; j++) {
                        double x = value_number(values->values[j]);
                        if (x != floor(x)) {
                            k = j;
                            v = values->values[j];
                            break;
                        }
                    }
                    Diag *d = diag_error(c->diags, ax->span, "E0394",
                                         "value %s of axis `%s` does not fit: %s", values->texts[k],
                                         ax->name.name, wants);
                    diag_note(d, c->diags, "`%s` is %s", values->texts[k],
                              dim_text(c, value_dim(v)));
                    c->ok = false;
                    return;
                }
            }
        }
    }
}

/* --------------------------------------------------------- the sweep */

void check_sweep(Sema *s, const Decl *decl) {
    SweepCtx ctx = {.s = s, .arena = s->arena, .diags = s->diags, .decl = decl, .ok = true};
    SweepCtx *c = &ctx;
    const SweepDecl *sd = &decl->u.sweep;
    if (span_has_syntax_errors(c->diags, decl->span)) return;
    if (s->set_axis_count > 0) {
        /* --set: an axis of the same kind and name is replaced (in its
         * zip), another joins as an axis of its own */
        SweepDecl *merged = ARENA_NEW(c->arena, SweepDecl);
        merged->axes = ARENA_ARRAY(c->arena, SweepAxisDecl, sd->axis_count + s->set_axis_count + 1);
        memcpy(merged->axes, sd->axes, sizeof(SweepAxisDecl) * (size_t)sd->axis_count);
        merged->axis_count = sd->axis_count;
        for (int k = 0; k < s->set_axis_count; k++) {
            SweepAxisDecl set = s->set_axes[k];
            set.zip = 0;
            bool replaced = false;
            for (int i = 0; i < merged->axis_count && !replaced; i++)
                if (merged->axes[i].kind == set.kind &&
                    merged->axes[i].name.name == set.name.name) {
                    set.zip = merged->axes[i].zip;
                    merged->axes[i] = set;
                    replaced = true;
                }
            if (!replaced) merged->axes[merged->axis_count++] = set;
        }
        sd = merged;
    }
    int n = sd->axis_count;
    if (n > IR_SWEEP_MAX_AXES) {
        diag_error(c->diags, decl->name.span, "E0397", "sweep `%s` has %d axes, more than %d",
                   decl->name.name, n, IR_SWEEP_MAX_AXES);
        return;
    }
    AxisValues *values = ARENA_ARRAY(c->arena, AxisValues, n + 1);
    bool *values_ok = ARENA_ARRAY(c->arena, bool, n + 1);
    bool names_ok = true; /* every mapping and arch named is one */
    const Decl **mappings = NULL, **archs = NULL;
    int mapping_count = 0, arch_count = 0;
    int mapping_axis = -1;
    for (int i = 0; i < n; i++) {
        const SweepAxisDecl *ax = &sd->axes[i];
        for (int k = 0; k < i; k++)
            if (sd->axes[k].kind == ax->kind && sd->axes[k].name.name == ax->name.name) {
                Diag *d = diag_error(c->diags, ax->name.span, "E0396", "axis `%s` is given twice",
                                     ax->name.name);
                diag_label(d, c->diags, sd->axes[k].name.span, "first given here");
                diag_help(d, c->diags, "list every value in one axis: `%s = [a, b, c];`",
                          ax->name.name);
                c->ok = false;
            }
        if (ax->value_count == 0) {
            diag_error(c->diags, ax->span, "E0391", "axis `%s` has no values", ax->name.name);
            c->ok = false;
            continue;
        }
        if (ax->kind == SA_PARAM) {
            values_ok[i] = parameter_values(c, ax, &values[i]);
        } else {
            const Decl **decls = ARENA_ARRAY(c->arena, const Decl *, ax->value_count + 1);
            if (!name_values(c, ax, ax->kind == SA_ARCH ? DK_ARCH : DK_MAPPING, decls, &values[i]))
                names_ok = false;
            if (ax->kind == SA_ARCH) {
                archs = decls;
                arch_count = values[i].count;
            } else {
                mappings = decls;
                mapping_count = values[i].count;
                mapping_axis = i;
            }
        }
    }
    if (mapping_axis < 0) {
        Diag *d = diag_error(c->diags, decl->name.span, "E0390",
                             "sweep `%s` names no mapping to evaluate", decl->name.name);
        diag_help(d, c->diags,
                  "add an axis of mappings: `mapping = [NAME];` (their holes are "
                  "solved at every point)");
        return;
    }
    /* the mappings of the root file only: those are what cmtc compiles */
    for (int m = 0; m < mapping_count; m++) {
        const Decl *md = mappings[m];
        if (md->span.file != decl->span.file) {
            diag_error(c->diags, sd->axes[mapping_axis].span, "E0392",
                       "mapping `%s` is declared in another file; a sweep names the mappings of "
                       "its own file",
                       md->name.name);
            c->ok = false;
        }
    }
    /* each axis whose values are known, against the mappings and archs
     * when every one is known */
    for (int i = 0; i < n && names_ok; i++)
        if (sd->axes[i].kind == SA_PARAM && values_ok[i])
            check_bindings(c, &sd->axes[i], &values[i], mappings, mapping_count, archs, arch_count);
    /* zips advance together: one length */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < i; k++)
            if (sd->axes[i].zip > 0 && sd->axes[i].zip == sd->axes[k].zip &&
                values[i].count != values[k].count && values[i].count > 0 && values[k].count > 0) {
                Diag *d = diag_error(c->diags, sd->axes[i].span, "E0395",
                                     "axis `%s` has %d value%s, but `%s` in the same zip has %d",
                                     sd->axes[i].name.name, values[i].count,
                                     values[i].count == 1 ? "" : "s", sd->axes[k].name.name,
                                     values[k].count);
                diag_label(d, c->diags, sd->axes[k].span, "%d value%s here", values[k].count,
                           values[k].count == 1 ? "" : "s");
                diag_note(d, c->diags,
                          "the axes of a zip advance together, so they have one "
                          "length");
                c->ok = false;
                k = i;
            }
    if (!c->ok) return;

    IrSweep *sw = ARENA_NEW(c->arena, IrSweep);
    sw->name = decl->name.name;
    sw->span = decl->span;
    sw->axes = ARENA_ARRAY(c->arena, IrSweepAxis, n + 1);
    sw->axis_count = n;
    sw->group_of_axis = ARENA_ARRAY(c->arena, int, n + 1);
    sw->group_size = ARENA_ARRAY(c->arena, int64_t, n + 1);
    int *group_of_zip = ARENA_ARRAY(c->arena, int, n + 2);
    for (int z = 0; z <= n; z++) group_of_zip[z] = -1;
    int64_t points = 1;
    bool too_many = false;
    for (int i = 0; i < n; i++) {
        const SweepAxisDecl *ax = &sd->axes[i];
        IrSweepAxis *out = &sw->axes[i];
        out->name = ax->name.name;
        out->kind = ax->kind == SA_PARAM  ? IR_AXIS_PARAM
                    : ax->kind == SA_ARCH ? IR_AXIS_ARCH
                                          : IR_AXIS_MAPPING;
        out->value_count = values[i].count;
        out->texts = values[i].texts;
        out->numbers = ARENA_ARRAY(c->arena, double, values[i].count + 1);
        out->integer = ax->kind == SA_PARAM;
        out->zip = ax->zip;
        out->span = ax->span;
        for (int k = 0; k < values[i].count; k++) {
            if (ax->kind != SA_PARAM) {
                out->numbers[k] = NAN;
                continue;
            }
            Value v = values[i].values[k];
            out->numbers[k] = value_number(v);
            out->dim = value_dim(v);
            if (v.kind != VK_INT) out->integer = false;
        }
        int zip = ax->zip;
        int group = zip > 0 && zip <= n ? group_of_zip[zip] : -1;
        if (group < 0) {
            group = sw->group_count++;
            sw->group_size[group] = values[i].count;
            if (zip > 0 && zip <= n) group_of_zip[zip] = group;
            if (points > IR_SWEEP_MAX_POINTS / values[i].count)
                too_many = true;
            else
                points *= values[i].count;
        }
        sw->group_of_axis[i] = group;
    }
    if (too_many || points > IR_SWEEP_MAX_POINTS) {
        /* the product as it is, axis by axis (a zip counts once) */
        double all = 1;
        const char *sizes = "";
        for (int gi = 0; gi < sw->group_count; gi++) {
            all *= (double)sw->group_size[gi];
            const char *names = "";
            for (int i = 0; i < n; i++)
                if (sw->group_of_axis[i] == gi)
                    names = arena_printf(c->arena, "%s%s%s", names, *names ? "+" : "",
                                         sd->axes[i].name.name);
            sizes = arena_printf(c->arena, "%s%s%lld (%s)", sizes, gi ? " x " : "",
                                 (long long)sw->group_size[gi], names);
        }
        Diag *d = diag_error(c->diags, decl->name.span, "E0397",
                             "sweep `%s` has %s points, more than %d: %s", decl->name.name,
                             count_text(c, all), IR_SWEEP_MAX_POINTS, sizes);
        diag_help(d, c->diags,
                  "sweep fewer values, or zip axes that advance together "
                  "(`zip { A = [...]; B = [...]; }`)");
        return;
    }
    sw->point_count = points;
    ptrvec_push(s->prog->arena, &s->sweeps, sw);
    s->prog->sweeps = (const IrSweep **)s->sweeps.items;
    s->prog->sweep_count = s->sweeps.count;
}

/* --------------------------------------------------------- a point */

static Expr *value_expr(Arena *a, const IrSweepAxis *ax, int k, Span span) {
    Expr *e = ARENA_NEW(a, Expr);
    e->depth = 1;
    e->span = span;
    if (ax->integer) {
        e->kind = EX_INT;
        e->u.int_value = (int64_t)llround(ax->numbers[k]);
    } else if (no_unit(ax->dim)) {
        e->kind = EX_REAL;
        e->u.real_value = ax->numbers[k];
    } else {
        e->kind = EX_QUANTITY;
        e->u.quantity.value = ax->numbers[k];
        e->u.quantity.dim = ax->dim;
        e->u.quantity.unit_span = span;
    }
    return e;
}

/* `list` with `name` bound to `value`: replaced where it is bound, else
 * appended (a fresh array of *count + 1 at most). */
static ParamBinding *rebind(Arena *a, const ParamBinding *list, int *count, Name name, Expr *value,
                            Span span) {
    ParamBinding *out = ARENA_ARRAY(a, ParamBinding, *count + 1);
    if (*count) memcpy(out, list, sizeof(ParamBinding) * (size_t)*count);
    for (int i = 0; i < *count; i++)
        if (out[i].name.name == name) {
            out[i].value = value;
            return out;
        }
    out[*count] = (ParamBinding){.name = {.name = name, .span = span}, .value = value};
    (*count)++;
    return out;
}

/* An axis over the sequences of a `serve ... of B = 64;` line replaces
 * that value as it replaces every other binding of B (docs/language.md
 * 5.11): the point's copy of the line keeps `of B` without it.  A `= ?`
 * stays: the axis then gives the largest batch tried. */
static void drop_serve_value(Arena *a, MappingDecl *md, const IrSweep *sw, const Decl *op) {
    for (int i = 0; i < md->item_count; i++) {
        const MapItem *it = md->items[i];
        if (it->kind != MI_SERVE || !it->count || it->whole_hole) continue;
        bool swept = false;
        for (int k = 0; k < sw->axis_count; k++)
            if (sw->axes[k].kind == IR_AXIS_PARAM && sw->axes[k].name == it->level.name &&
                op_param_index(op, it->level.name) >= 0)
                swept = true;
        if (!swept) continue;
        MapItem **items = ARENA_ARRAY(a, MapItem *, md->item_count + 1);
        memcpy(items, md->items, sizeof(MapItem *) * (size_t)md->item_count);
        MapItem *line = ARENA_NEW(a, MapItem);
        *line = *it;
        line->count = NULL;
        items[i] = line;
        md->items = items;
        return;
    }
}

IrMapping *program_sweep_point(Program *p, const IrSweep *sw, int64_t point, DiagSink *diags) {
    Sema *s = sema_for_program(p, diags);
    int index[IR_SWEEP_MAX_AXES];
    ir_sweep_point(sw, point, index);
    const Decl *mapping = NULL, *arch = NULL;
    for (int i = 0; i < sw->axis_count; i++) {
        const IrSweepAxis *ax = &sw->axes[i];
        GlobalEntry *g =
            ax->kind != IR_AXIS_PARAM ? globals_find(s->globals, ax->texts[index[i]]) : NULL;
        if (ax->kind == IR_AXIS_MAPPING && g) mapping = g->decl;
        if (ax->kind == IR_AXIS_ARCH && g) arch = g->decl;
    }
    if (!mapping || mapping->kind != DK_MAPPING) return NULL;
    Decl *copy = ARENA_NEW(p->arena, Decl);
    *copy = *mapping;
    MappingDecl *md = &copy->u.mapping;
    const Decl *op = NULL;
    GlobalEntry *g = globals_find(s->globals, md->op.name);
    if (g && g->decl->kind == DK_OP) op = g->decl;
    if (arch && arch->name.name != md->arch.name) {
        /* another arch: the mapping's bindings of its own arch's
         * parameters go with it */
        md->arch.name = arch->name.name;
        md->arch_bindings = NULL;
        md->arch_binding_count = 0;
    }
    if (!arch) {
        g = globals_find(s->globals, md->arch.name);
        arch = g && g->decl->kind == DK_ARCH ? g->decl : NULL;
    }
    ArchParams in_scope = {0};
    if (arch) arch_defaults(s, arch, &in_scope);
    drop_serve_value(p->arena, md, sw, op);
    for (int i = 0; i < sw->axis_count; i++) {
        const IrSweepAxis *ax = &sw->axes[i];
        if (ax->kind != IR_AXIS_PARAM) continue;
        Expr *value = value_expr(p->arena, ax, index[i], ax->span);
        if (op_param_index(op, ax->name) >= 0)
            md->bindings =
                rebind(p->arena, md->bindings, &md->binding_count, ax->name, value, ax->span);
        if (arch_param_index(&in_scope, ax->name) >= 0)
            md->arch_bindings = rebind(p->arena, md->arch_bindings, &md->arch_binding_count,
                                       ax->name, value, ax->span);
    }
    return check_mapping(s, copy);
}
