/* consteval.c — the global symbol table and constant expressions: 64-bit
 * integers with overflow detection, reals, and quantities with units. */
#include "sema.h"

#include <math.h>
#include <string.h>

/* Const definitions may refer to later ones; this caps how deep such a
 * chain may go, so evaluation depth stays bounded. */
#define CONST_MAX_DEPTH 128

/* ---------------------------------------------------------- the table */

static uint32_t name_hash(Name n) {
    uintptr_t p = (uintptr_t)n;
    return (uint32_t)((p >> 3) * 2654435761u); /* names are 8-byte aligned */
}

/* (globals_build sized the entries for every declaration) */
static void globals_insert(Globals *g, Name name, const Decl *decl) {
    uint32_t mask = (uint32_t)g->index_cap - 1;
    uint32_t i = name_hash(name) & mask;
    while (g->index[i]) i = (i + 1) & mask;
    g->entries[g->count] = (GlobalEntry){.name = name, .decl = decl};
    g->index[i] = ++g->count;
}

GlobalEntry *globals_find(const Globals *g, Name name) {
    if (!g->index_cap || !name) return NULL;
    uint32_t mask = (uint32_t)g->index_cap - 1;
    uint32_t i = name_hash(name) & mask;
    for (int32_t e; (e = g->index[i]) != 0; i = (i + 1) & mask)
        if (g->entries[e - 1].name == name) return &g->entries[e - 1];
    return NULL;
}

static const char *decl_kind_name(DeclKind k) {
    switch (k) {
    case DK_CONST: return "constant";
    case DK_OP: return "op";
    case DK_ARCH: return "arch";
    case DK_MAPPING: return "mapping";
    case DK_SWEEP: return "sweep";
    case DK_MODEL: return "model";
    case DK_USE:
    case DK_ERROR: break;
    }
    return "declaration";
}

Globals *globals_build(Arena *arena, Module **modules, int module_count, DiagSink *diags) {
    Globals *g = ARENA_NEW(arena, Globals);
    /* Sized once for every declaration: growing by doubling left the
     * abandoned tables (as large again as the final one) in the arena. */
    int decl_total = 0;
    for (int m = 0; m < module_count; m++) decl_total += modules[m]->decl_count;
    g->cap = decl_total + 1;
    g->entries = ARENA_ARRAY(arena, GlobalEntry, g->cap);
    g->index_cap = 64;
    while (g->index_cap < 2 * (decl_total + 1)) g->index_cap *= 2;
    g->index = ARENA_ARRAY(arena, int32_t, g->index_cap);
    for (int m = 0; m < module_count; m++) {
        for (int i = 0; i < modules[m]->decl_count; i++) {
            const Decl *d = modules[m]->decls[i];
            if (d->kind == DK_ERROR || d->kind == DK_USE || !d->name.name) continue;
            GlobalEntry *prev = globals_find(g, d->name.name);
            if (prev) {
                if (diags) {
                    Diag *e = diag_error(diags, d->name.span, "E0202", "`%s` is defined twice",
                                         d->name.name);
                    diag_label(e, diags, prev->decl->name.span, "first defined here as %s %s",
                               prev->decl->kind == DK_OP ? "an" : "a",
                               decl_kind_name(prev->decl->kind));
                    diag_help(e, diags,
                              "rename one of them: names are global across "
                              "every file that `use` brings in");
                }
                continue;
            }
            globals_insert(g, d->name.name, d);
        }
    }
    return g;
}

const char **globals_names(Arena *arena, const Globals *g, int kind, int *count) {
    const char **out = ARENA_ARRAY(arena, const char *, g->count + 1);
    int n = 0;
    for (int i = 0; i < g->count; i++)
        if (kind < 0 || (int)g->entries[i].decl->kind == kind) out[n++] = g->entries[i].name;
    *count = n;
    return out;
}

/* ----------------------------------------------------------- messages */

const char *span_text(Arena *arena, const SourceManager *sm, Span span) {
    if (span.file < 0 || !sm) return "";
    SourceFile *f = sources_get(sm, span.file);
    if (!f || span.end > f->len || span.start > span.end) return "";
    size_t n = span.end - span.start;
    if (n > 48) return arena_printf(arena, "%.45s...", f->text + span.start);
    return arena_strndup(arena, f->text + span.start, n);
}

const char *value_describe(Arena *arena, Value v) {
    switch (v.kind) {
    case VK_INT: return arena_printf(arena, "the integer %lld", (long long)v.i);
    case VK_REAL: return arena_printf(arena, "the number %g", v.r);
    case VK_QUANTITY:
        return arena_printf(arena, "%s (%s)", unit_dim_describe(v.dim),
                            unit_format(arena, v.r, v.dim));
    case VK_ERROR: break;
    }
    return "an invalid value";
}

/* What kind of value a parameter takes, from its default: "a bandwidth
 * (such as 3.35 TB/s)", "an integer". */
const char *value_kind_text(Arena *a, Value v) {
    if (v.kind == VK_QUANTITY) {
        const char *desc = unit_dim_describe(v.dim);
        return arena_printf(a, "%s %s (such as %s)", strchr("aeiou", desc[0]) ? "an" : "a", desc,
                            unit_dim_example(v.dim));
    }
    return v.kind == VK_INT ? "an integer" : "a number";
}

/* Can a value of kind `got` stand where the default `want` stood? */
bool value_fits(Value want, Value got) {
    if (want.kind == VK_ERROR || got.kind == VK_ERROR) return true;
    if (want.kind == VK_QUANTITY) return got.kind == VK_QUANTITY && unit_dim_eq(want.dim, got.dim);
    if (want.kind == VK_INT) return got.kind == VK_INT;
    return got.kind == VK_INT || got.kind == VK_REAL;
}

const char *value_text(Arena *a, Value v) {
    switch (v.kind) {
    case VK_INT: return arena_printf(a, "%lld", (long long)v.i);
    case VK_REAL: return arena_printf(a, "%g", v.r);
    case VK_QUANTITY:
        /* 0 in the SI unit, not in its smallest prefix */
        return v.r == 0 ? arena_printf(a, "0 %s", unit_dim_si_name(a, v.dim))
                        : unit_format(a, v.r, v.dim);
    case VK_ERROR: break;
    }
    return "?";
}

static Diag *env_error(ConstEnv *env, Span span, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static Diag *env_error(ConstEnv *env, Span span, const char *code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    Diag *d = diag_error_va(env->diags, span, code, fmt, ap);
    va_end(ap);
    return d;
}

/* ------------------------------------------------------ evaluation */

static Value value_error(void) {
    return (Value){.kind = VK_ERROR};
}
static Value value_int(int64_t i) {
    return (Value){.kind = VK_INT, .i = i};
}
static Value value_real(double r) {
    return (Value){.kind = VK_REAL, .r = r};
}
static Value value_quantity(double r, UnitDim dim) {
    return (Value){.kind = VK_QUANTITY, .r = r, .dim = dim};
}

static double as_real(Value v) {
    return v.kind == VK_INT ? (double)v.i : v.r;
}
static bool is_number(Value v) {
    return v.kind == VK_INT || v.kind == VK_REAL;
}

static Value eval_const_name(ConstEnv *env, GlobalEntry *g, Span use);

static Value eval_name(ConstEnv *env, const Expr *e) {
    Name name = e->u.name;
    for (int i = 0; i < env->param_count; i++)
        if (env->param_names[i] == name) return value_int(env->param_values[i]);
    for (int i = 0; i < env->value_count; i++)
        if (env->value_names[i] == name) return env->values[i];
    GlobalEntry *g = env->globals ? globals_find(env->globals, name) : NULL;
    if (g && g->decl->kind == DK_CONST) return eval_const_name(env, g, e->span);
    if (g) {
        Diag *d = env_error(env, e->span, "E0207", "`%s` is %s %s, not a constant", name,
                            g->decl->kind == DK_OP ? "an" : "a", decl_kind_name(g->decl->kind));
        diag_label(d, env->diags, g->decl->name.span, "defined here");
        return value_error();
    }
    /* Candidates: constants and the parameters in scope. */
    int count = 0;
    const char **cands =
        env->globals ? globals_names(env->arena, env->globals, DK_CONST, &count) : NULL;
    const char **all =
        ARENA_ARRAY(env->arena, const char *, count + env->param_count + env->value_count + 1);
    for (int i = 0; i < count; i++) all[i] = cands[i];
    for (int i = 0; i < env->param_count; i++) all[count + i] = env->param_names[i];
    for (int i = 0; i < env->value_count; i++)
        all[count + env->param_count + i] = env->value_names[i];
    for (int i = env->param_count; i < env->param_later; i++)
        if (env->param_names[i] && strcmp(env->param_names[i], name) == 0) {
            Diag *d = env_error(env, e->span, "E0201",
                                "parameter `%s` is declared after this default: a "
                                "default sees only the parameters before it",
                                name);
            diag_help(d, env->diags, "declare `%s` first", name);
            return value_error();
        }
    const char *best = spell_suggest(name, all, count + env->param_count + env->value_count);
    /* it may be defined in the module that was not found */
    if (!best && module_missing(env->diags)) return value_error();
    Diag *d =
        env_error(env, e->span, "E0201", "unknown name `%s` in %s", name, subject_text(env->where));
    if (best) diag_help(d, env->diags, "did you mean `%s`?", best);
    return value_error();
}

static Value eval_const_name(ConstEnv *env, GlobalEntry *g, Span use) {
    if (g->const_state == CS_DONE) return g->const_value;
    if (g->const_state == CS_EVALUATING) {
        Diag *d =
            env_error(env, use, "E0214", "constant `%s` is defined in terms of itself", g->name);
        diag_label(d, env->diags, g->decl->name.span, "`%s` is defined here", g->name);
        g->const_value = value_error();
        return value_error();
    }
    if (env->const_depth >= CONST_MAX_DEPTH) {
        env_error(env, use, "E0215",
                  "constant definitions refer to later ones more than %d "
                  "deep",
                  CONST_MAX_DEPTH);
        return value_error();
    }
    /* A constant's own expression sees no op parameters. */
    ConstEnv inner = *env;
    inner.param_count = 0;
    inner.where = subject("a constant");
    inner.const_depth = env->const_depth + 1;
    g->const_state = CS_EVALUATING;
    Value v = const_eval(&inner, g->decl->u.const_value);
    env->expr_depth = inner.expr_depth;
    env->too_deep_reported = inner.too_deep_reported;
    g->const_state = CS_DONE;
    g->const_value = v;
    return v;
}

static const char *operator_verb(char op) {
    switch (op) {
    case '+': return "add";
    case '-': return "subtract";
    case '*': return "multiply";
    default: return "divide";
    }
}

static Value eval_binary(ConstEnv *env, const Expr *e) {
    Value a = const_eval(env, e->u.binary.lhs);
    Value b = const_eval(env, e->u.binary.rhs);
    if (a.kind == VK_ERROR || b.kind == VK_ERROR) return value_error();
    char op = e->u.binary.op;
    bool zero_divisor = (b.kind == VK_INT && b.i == 0) || (b.kind != VK_INT && b.r == 0.0);
    if (op == '/' && zero_divisor) {
        Diag *d = env_error(env, e->u.binary.rhs->span, "E0206", "division by zero in %s",
                            subject_text(env->where));
        diag_label(d, env->diags, e->span, "in this division");
        return value_error();
    }
    if (a.kind == VK_INT && b.kind == VK_INT) {
        int64_t r = 0;
        bool ok = true;
        switch (op) {
        case '+': ok = checked_add(a.i, b.i, &r); break;
        case '-': ok = checked_sub(a.i, b.i, &r); break;
        case '*': ok = checked_mul(a.i, b.i, &r); break;
        default:
            if (a.i == INT64_MIN && b.i == -1)
                ok = false;
            else if (a.i % b.i != 0)
                return value_real((double)a.i / (double)b.i);
            else
                r = a.i / b.i;
            break;
        }
        if (!ok) {
            env_error(env, e->span, "E0205",
                      "integer overflow: %lld %c %lld does not fit in 64 bits", (long long)a.i, op,
                      (long long)b.i);
            return value_error();
        }
        return value_int(r);
    }
    if (is_number(a) && is_number(b)) {
        double x = as_real(a), y = as_real(b);
        switch (op) {
        case '+': return value_real(x + y);
        case '-': return value_real(x - y);
        case '*': return value_real(x * y);
        default: return value_real(x / y);
        }
    }
    /* At least one quantity. */
    if (op == '*' && is_number(a)) return value_quantity(as_real(a) * b.r, b.dim);
    if ((op == '*' || op == '/') && is_number(b))
        return value_quantity(op == '*' ? a.r * as_real(b) : a.r / as_real(b), a.dim);
    if (a.kind == VK_QUANTITY && b.kind == VK_QUANTITY && unit_dim_eq(a.dim, b.dim)) {
        if (op == '+') return value_quantity(a.r + b.r, a.dim);
        if (op == '-') return value_quantity(a.r - b.r, a.dim);
        if (op == '/') return value_real(a.r / b.r);
    }
    const char *da = a.kind == VK_QUANTITY ? unit_dim_describe(a.dim) : "number";
    const char *db = b.kind == VK_QUANTITY ? unit_dim_describe(b.dim) : "number";
    bool per_clock = false; /* `64 GB/s + 32 B/cycle`: same words, other units */
    if (a.kind == VK_QUANTITY && b.kind == VK_QUANTITY && strcmp(da, db) == 0 &&
        a.dim.num == b.dim.num && a.dim.den != b.dim.den) {
        per_clock = true;
        da = arena_printf(env->arena, "%s per %s", da, a.dim.den == BU_CYCLE ? "cycle" : "second");
        db = arena_printf(env->arena, "%s per %s", db, b.dim.den == BU_CYCLE ? "cycle" : "second");
    }
    const char *an = strchr("aeiou", da[0]) ? "an" : "a";
    const char *bn = strchr("aeiou", db[0]) ? "an" : "a";
    Diag *d;
    if (op == '-')
        d = env_error(env, e->span, "E0213", "cannot subtract %s %s from %s %s", bn, db, an, da);
    else
        d = env_error(env, e->span, "E0213", "cannot %s %s %s %s %s %s", operator_verb(op), an, da,
                      op == '+' ? "and" : "by", bn, db);
    if (per_clock)
        diag_help(d, env->diags,
                  "a constant has no clock to convert cycles with: "
                  "write both per second or both per cycle");
    else
        diag_note(d, env->diags,
                  "quantities combine as number * quantity, quantity / number, "
                  "quantity + or - quantity of the same kind, and quantity / "
                  "quantity of the same kind (a number)");
    return value_error();
}

/* One expression is at most MAX_EXPR_DEPTH deep (the parser sees to it);
 * only a chain of constants, each used inside the next, goes deeper. */
static void report_too_deep(DiagSink *diags, Span span) {
    Diag *d = diag_error(diags, span, "E0217",
                         "expression nests more than %d operators deep, counting the "
                         "constants it uses",
                         MAX_EXPR_DEPTH);
    diag_help(d, diags, "compute part of it in a constant that uses no deep constant");
}

long diag_errors_examined;

/* Only errors are looked at (see DiagSink.errors): warnings are unbounded,
 * stored errors are not.  An error dropped by drop_repeated_diags stays in
 * the list, which changes no answer: it repeats the span of one kept. */
bool span_has_errors(const DiagSink *diags, Span span) {
    for (int i = 0; i < diags->errors_stored; i++) {
        const Diag *d = diags->errors[i];
        diag_errors_examined++;
        if (d->span.file == span.file && d->span.start >= span.start && d->span.start < span.end)
            return true;
    }
    return false;
}

bool span_has_syntax_errors(const DiagSink *diags, Span span) {
    for (int i = 0; i < diags->errors_stored; i++) {
        const Diag *d = diags->errors[i];
        diag_errors_examined++;
        if (d->code && strncmp(d->code, "E01", 3) == 0 && d->span.file == span.file &&
            d->span.start >= span.start && d->span.start < span.end)
            return true;
    }
    return false;
}

bool module_missing(const DiagSink *diags) {
    for (int i = 0; i < diags->errors_stored; i++)
        if (diags->errors[i]->code && strcmp(diags->errors[i]->code, "E0203") == 0) return true;
    return false;
}

static Value const_eval_node(ConstEnv *env, const Expr *e);

Value const_eval(ConstEnv *env, const Expr *e) {
    if (!e) return value_error();
    if (env->expr_depth >= MAX_EXPR_DEPTH) {
        if (!env->too_deep_reported) report_too_deep(env->diags, e->span);
        env->too_deep_reported = true;
        return value_error();
    }
    env->expr_depth++;
    Value v = const_eval_node(env, e);
    env->expr_depth--;
    return v;
}

static Value const_eval_node(ConstEnv *env, const Expr *e) {
    switch (e->kind) {
    case EX_ERROR: return value_error();
    case EX_INT: return value_int(e->u.int_value);
    case EX_REAL: return value_real(e->u.real_value);
    case EX_QUANTITY: return value_quantity(e->u.quantity.value, e->u.quantity.dim);
    case EX_NAME: return eval_name(env, e);
    case EX_UNARY: {
        Value v = const_eval(env, e->u.unary.operand);
        if (v.kind == VK_INT) {
            if (v.i == INT64_MIN) {
                env_error(env, e->span, "E0205",
                          "integer overflow: -(%lld) does not fit in 64 bits", (long long)v.i);
                return value_error();
            }
            v.i = -v.i;
        } else {
            v.r = -v.r;
        }
        return v;
    }
    case EX_BINARY: return eval_binary(env, e);
    case EX_ACCESS:
        env_error(env, e->span, "E0207", "a tensor access is not allowed in %s",
                  subject_text(env->where));
        return value_error();
    case EX_CALL:
    case EX_REDUCE:
        env_error(env, e->span, "E0207", "a function call is not allowed in %s",
                  subject_text(env->where));
        return value_error();
    case EX_HOLE:
        env_error(env, e->span, "E0207", "a hole `?` is not allowed in %s",
                  subject_text(env->where));
        return value_error();
    }
    return value_error();
}

void const_eval_all(ConstEnv *env, Module **modules, int module_count) {
    for (int m = 0; m < module_count; m++)
        for (int i = 0; i < modules[m]->decl_count; i++) {
            const Decl *d = modules[m]->decls[i];
            if (d->kind != DK_CONST || !d->name.name) continue;
            GlobalEntry *g = globals_find(env->globals, d->name.name);
            if (g && g->decl == d) eval_const_name(env, g, d->name.span);
        }
}

const char *subject_text(Subject s) {
    if (s.name) return intern_quoted(s.text ? s.text : "", s.name);
    return s.text ? s.text : "a constant expression";
}

bool const_eval_int(ConstEnv *env, const Expr *e, Subject what, int64_t *out) {
    Value v = const_eval(env, e);
    if (v.kind == VK_ERROR) return false;
    if (v.kind == VK_INT) {
        *out = v.i;
        return true;
    }
    if (v.kind == VK_REAL && v.r == floor(v.r) && fabs(v.r) < 9.0e18) {
        *out = (int64_t)v.r;
        return true;
    }
    const char *got =
        v.kind == VK_QUANTITY
            ? arena_printf(env->arena, "`%s`, %s %s", span_text(env->arena, env->sources, e->span),
                           strchr("aeiou", unit_dim_describe(v.dim)[0]) ? "an" : "a",
                           unit_dim_describe(v.dim))
            : arena_printf(env->arena, "%g", v.r);
    Diag *d =
        env_error(env, e->span, "E0216", "%s must be an integer, got %s", subject_text(what), got);
    if (v.kind == VK_REAL && e->kind == EX_BINARY && e->u.binary.op == '/')
        diag_note(d, env->diags, "the division does not come out even");
    return false;
}
