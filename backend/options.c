/* options.c — the tables of every command's options, the parser that
 * reads argv against them and the help printed from them (options.h). */
#include "backend/commands.h"
#include "backend/options.h"
#include "frontend/util/util.h"

#include <string.h>

/* Options of every command that reads .cmt files. */
static const OptionSpec common_options[] = {
    {OPT_INCLUDE, "--include", "-I", "DIR",
     "Add DIR to the module search path: after the folder of the file that says `use`, before "
     "CMT_PATH and the standard library.  May be given up to 64 times."},
    {OPT_DIAG_FORMAT, "--diagnostics-format", NULL, "text|json",
     "Diagnostics as GCC-style text with carets (the default) or as one JSON array of objects "
     "(code, severity, message, file, line, column, end, labels, notes, help)."},
    {OPT_DIAG_OUTPUT, "--diagnostics-output", NULL, "stderr|stdout",
     "Where diagnostics go: standard error (the default) or standard output.  With compile "
     "--format json and --diagnostics-format json on standard output, they are the "
     "\"diagnostics\" member of the one JSON document printed."},
    {OPT_HELP, "--help", "-h", NULL, "Print this help and exit 0."},
    {0, NULL, NULL, NULL, NULL},
};
/* Every command takes --help. */
static const OptionSpec *const help_options = &common_options[3];

static const OptionSpec compile_options[] = {
    {CO_MAPPING, "--mapping", "-m", "MAPPING",
     "Compile only MAPPING, or a model's mappings and the model (every mapping of the file is "
     "still checked)."},
    {CO_OUTPUT, "--output", "-o", "OUT",
     "Write the output to OUT instead of standard output: to a temporary file renamed over OUT "
     "once whole, so OUT is replaced only by a compile that exits 0.  OUT may not be a file that "
     "was read."},
    {CO_FORMAT, "--format", NULL, "text|json|trace|dot",
     "text: the schedule listing (the default); json: one document of schema "
     "docs/json-output.md; trace: Chrome trace events for Perfetto or chrome://tracing, with "
     "flow arrows from each producer to its consumers; dot: a Graphviz graph of the statements, "
     "groups and collectives."},
    {CO_BASELINE, "--baseline", NULL, "unfused|none|MAPPING",
     "What each mapping is compared with.  unfused (the default): the same mapping with every "
     "statement in a group of its own; none: no comparison (nothing else is lowered); MAPPING: "
     "another mapping of the file for the same op and parameters, compiled for the comparison "
     "even when -m leaves it out."},
    {CO_OBJECTIVE, "--objective", NULL, "latency|energy|edp",
     "What the optimizer minimises, overriding each mapping's `objective` line."},
    {CO_TIME_LIMIT, "--time-limit", NULL, "SECONDS",
     "Bound the optimizer's search (above 0, at most 1000000): the best mapping found by then is "
     "printed with its remaining gap; without it the search has no limit."},
    {CO_EMIT_LP, "--emit-lp", NULL, "FILE",
     "Write the optimizer's MILP in lp_solve's LP format, written like -o; columns and rows are "
     "named after the decisions and source lines they stand for (docs/optimizer.md).  A write "
     "failure is E0374, exit 2."},
    {CO_EXHAUSTIVE, "--exhaustive", NULL, NULL,
     "Evaluate every mapping of the space instead of solving the MILP (small spaces; the JSON "
     "output lists each one)."},
    {CO_VERIFY, "--verify", NULL, NULL,
     "Execute each compiled schedule with the reference interpreter and print its footprints, "
     "traffic, work and collectives beside the cost model's; exit 1 on a disagreement."},
    {CO_DUMP_IR, "--dump-ir", NULL, "PASS",
     "Print the schedule after pass PASS to standard error (the pass names are listed when PASS "
     "is wrong)."},
    {CO_TIME_EVAL, "--time-eval", NULL, "N",
     "Instead of the listing, time N evaluations of each mapping by the cost model and print "
     "the median and fastest (for benchmarks)."},
    {0, NULL, NULL, NULL, NULL},
};

static const OptionSpec sweep_options[] = {
    {SW_SWEEP, "--sweep", "-s", "NAME",
     "Evaluate sweep NAME (needed when the file declares several)."},
    {SW_OUTPUT, "--output", "-o", "OUT",
     "Append each point's row to OUT as it finishes; a rerun with the same OUT evaluates only "
     "the points it does not hold yet.  Once every point is in, the rows are put in point order "
     "(a temporary file renamed over OUT).  Without it, rows go to standard output as they "
     "finish."},
    {SW_FORMAT, "--format", NULL, "csv|jsonl",
     "csv: a header and one row a point (the default); jsonl: one JSON object a point."},
    {SW_JOBS, "--jobs", "-j", "N",
     "Evaluate N points at once, each in a process of its own (default: the machine's cores)."},
    {SW_SHARD, "--shard", NULL, "I/N",
     "Evaluate only the I-th of N disjoint parts (the points p with p mod N = I - 1); --merge "
     "joins the parts' outputs into the rows of the whole sweep."},
    {SW_SET, "--set", NULL, "AXIS=VALUES",
     "Replace (or add) an axis as the sweep would write it: --set 'HBM = [2 TB/s, 4 TB/s]', "
     "--set 'M = geometric(512, 8192, 2)'.  Checked like the file; up to 64."},
    {SW_EMIT_SLURM, "--emit-slurm", NULL, "DIR",
     "Write a Slurm job array (DIR/array.sbatch, one task a shard; as many shards as -j), the "
     "merge job that joins them (DIR/merge.sbatch) and DIR/submit.sh, which submits both; "
     "evaluate nothing."},
    {SW_PLOTS, "--plots", NULL, "DIR",
     "After the sweep, draw its plots from OUT (CSV) into DIR as SVG: the Pareto frontier, a "
     "roofline, the stacked latency breakdown and heat maps (docs/sweeps.md)."},
    {SW_MERGE, "--merge", NULL, NULL,
     "Join the outputs named after FILE (the shards' parts) into -o OUT, in point order; a "
     "point in two parts with different rows is an error, a point in none a warning (exit 1)."},
    {SW_OBJECTIVE, "--objective", NULL, "latency|energy|edp",
     "What the optimizer minimises at every point, overriding each mapping's `objective` "
     "line."},
    {SW_TIME_LIMIT, "--time-limit", NULL, "SECONDS",
     "Bound each point's optimizer search; a point still running at twice this plus 10 s is "
     "stopped and its row says time_limit."},
    {0, NULL, NULL, NULL, NULL},
};

static const OptionSpec fmt_options[] = {
    {FO_CHECK, "--check", NULL, NULL,
     "Change nothing: print the files that would change and exit 1 if there are any."},
    {0, NULL, NULL, NULL, NULL},
};

static const OptionSpec lsp_options[] = {
    {LO_STDIO, "--stdio", NULL, NULL,
     "Talk over standard input and output (the default and only transport; accepted for "
     "editors that pass it)."},
    {0, NULL, NULL, NULL, NULL},
};

static const OptionSpec plot_options[] = {
    {PO_PLOTS, "--plots", NULL, "DIR",
     "The folder the plots go to, made when missing (required): pareto.svg, roofline.svg, "
     "breakdown.svg, heatmap.svg and heatmap_utilisation.svg, each beside the data file "
     "(NAME.dat) and the gnuplot script (NAME.gp) it is drawn from.  They replace the folder's "
     "old plots only once every one is drawn."},
    {0, NULL, NULL, NULL, NULL},
};

const CommandSpec cmt_commands[] = {
    {"check", "FILE...", "diagnostics only; exit 1 on any error",
     "Checks each FILE (`-` is standard input) and the files it uses, and prints every "
     "diagnostic once.",
     NULL, true, cmd_check},
    {"compile", "FILE", "schedule listing for each (or one) mapping",
     "Checks FILE, fills the holes of each mapping with the optimizer, lowers every mapping that "
     "checks to a schedule and prints it.  A mapping with errors is reported with all of its "
     "own mistakes and the others are still compiled; the exit status is then 1.",
     compile_options, true, cmd_compile},
    {"sweep", "FILE", "every point of a sweep, one row each",
     "Checks FILE and evaluates every point of its sweep (docs/sweeps.md): each point's mapping "
     "with its holes solved, lowered and costed in a process of its own, up to -j at once, one "
     "row a point (CSV or JSON Lines) with its latency, energy, breakdown, roofline figures, "
     "memory per level and the chosen mapping.  A point that fails is a row with its status and "
     "message.  Exit 0 when every point was written (whatever their status), 130 when "
     "interrupted (the rows written are kept).",
     sweep_options, true, cmd_sweep},
    {"fmt", "FILE...", "canonical layout, comments kept",
     "Rewrites each FILE in the canonical layout (`-` reads standard input and writes standard "
     "output).",
     fmt_options, true, cmd_fmt},
    {"lsp", "", "language server on standard input/output",
     "Serves the Language Server Protocol on standard input and output (docs/editors.md).",
     lsp_options, true, cmd_lsp},
    {"plot", "CSV", "plots of a design-space sweep's CSV (gnuplot)",
     "Reads the CSV of a design-space sweep (one row per point: docs/plots.md) and draws its "
     "plots as SVG with gnuplot (Debian package gnuplot-nox): latency against energy with the "
     "Pareto frontier, the roofline, the time of each point by kind, and heatmaps of latency "
     "and utilisation over the first two numeric axes.  Only the points whose status is ok are "
     "plotted; each plot says how many are not.  Exit status 1 for a CSV with mistakes (each "
     "reported with its line), 2 for a file that cannot be read or written or when gnuplot is "
     "missing or fails.",
     plot_options, false, cmd_plot},
    {"explain", "CODE", "the long explanation of a diagnostic code",
     "Prints the page of docs/errors for CODE, such as E0304.", NULL, false, cmd_explain},
    {"help", "[COMMAND]", "this usage, or one command's options",
     "Prints the general usage, or the usage and every option of COMMAND.", NULL, false, cmd_help},
};
const int cmt_command_count = (int)(sizeof cmt_commands / sizeof cmt_commands[0]);

const CommandSpec *command_find(const char *name) {
    for (int i = 0; i < cmt_command_count; i++)
        if (strcmp(cmt_commands[i].name, name) == 0) return &cmt_commands[i];
    return NULL;
}

void options_init(OptionParser *p, const CommandSpec *cmd, int argc, char **argv) {
    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
}

/* The option spelt `arg` (up to an `=`), its value attached after `=` or
 * after a one-letter alias (`-Idir`), or NULL. */
static const OptionSpec *match_in(const OptionSpec *table, const char *arg, const char **attached) {
    *attached = NULL;
    for (const OptionSpec *o = table; o && o->id; o++) {
        size_t n = strlen(o->name);
        if (strncmp(arg, o->name, n) == 0 && (arg[n] == '\0' || (arg[n] == '=' && o->arg))) {
            if (arg[n] == '=') *attached = arg + n + 1;
            return o;
        }
        if (o->alias) {
            size_t k = strlen(o->alias);
            if (strncmp(arg, o->alias, k) == 0 && (arg[k] == '\0' || (o->arg && k == 2))) {
                if (arg[k]) *attached = arg + k;
                return o;
            }
        }
    }
    return NULL;
}

static const OptionSpec *match(const CommandSpec *cmd, const char *arg, const char **attached) {
    const OptionSpec *o = match_in(cmd->options, arg, attached);
    if (!o && cmd->reads_files) o = match_in(common_options, arg, attached);
    if (!o) o = match_in(help_options, arg, attached);
    return o;
}

int options_next(OptionParser *p) {
    p->value = NULL;
    p->arg = NULL;
    if (p->i >= p->argc) return OPT_DONE;
    const char *arg = p->argv[p->i++];
    p->arg = arg;
    if (!p->operands_only && strcmp(arg, "--") == 0) {
        p->operands_only = true;
        return options_next(p);
    }
    if (p->operands_only || arg[0] != '-' || arg[1] == '\0') {
        p->value = arg;
        return OPT_POSITIONAL;
    }
    const char *attached;
    const OptionSpec *o = match(p->cmd, arg, &attached);
    if (!o && p->unknown_ok) {
        p->i--;
        return OPT_UNKNOWN;
    }
    if (!o) {
        const char *names[64];
        int n = 0;
        for (const OptionSpec *q = p->cmd->options; q && q->id && n < 60; q++) names[n++] = q->name;
        for (const OptionSpec *q = common_options; q->id && n < 64; q++)
            if (p->cmd->reads_files || q->id == OPT_HELP) names[n++] = q->name;
        fprintf(stderr, "cmtc: error: unknown option '%s' for %s", arg, p->cmd->name);
        const char *near = spell_suggest(arg, names, n);
        if (near) fprintf(stderr, "; did you mean '%s'?", near);
        fputc('\n', stderr);
        return OPT_BAD;
    }
    if (o->arg) {
        if (attached) {
            p->value = attached;
        } else if (p->i < p->argc) {
            p->value = p->argv[p->i++];
        } else {
            fprintf(stderr, "cmtc: error: %s needs a value (%s)\n", o->alias ? o->alias : o->name,
                    o->arg);
            return OPT_BAD;
        }
    } else if (attached) {
        fprintf(stderr, "cmtc: error: %s takes no value\n", o->name);
        return OPT_BAD;
    }
    /* once each, but the repeatable ones (-I, --set) and -h: a second -o
     * or -m had silently replaced the first */
    bool repeatable = o->id == OPT_INCLUDE || o->id == OPT_HELP || strcmp(o->name, "--set") == 0;
    if (!repeatable && o->id > -64 && o->id < 64) {
        unsigned long long *seen = o->id > 0 ? &p->seen_own : &p->seen_common;
        unsigned long long bit = 1ULL << (o->id > 0 ? o->id : -o->id);
        if (*seen & bit) {
            fprintf(stderr, "cmtc: error: %s is given twice; give it once\n", o->name);
            return OPT_BAD;
        }
        *seen |= bit;
    }
    return o->id;
}

bool options_want_help(const CommandSpec *cmd, int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) return false;
        if (arg[0] != '-' || arg[1] == '\0') continue;
        const char *attached;
        const OptionSpec *o = match(cmd, arg, &attached);
        if (!o) continue;
        if (o->id == OPT_HELP) return true;
        if (o->arg && !attached) i++; /* its value, whatever it says */
    }
    return false;
}

/* Prints `text` from column `indent`, wrapped before column 80. */
static void wrap(FILE *out, const char *text, int indent) {
    int col = 0;
    const char *w = text;
    while (*w) {
        while (*w == ' ') w++;
        if (!*w) break;
        const char *e = w;
        while (*e && *e != ' ') e++;
        int len = (int)(e - w);
        if (col > indent && col + 1 + len > 79) {
            fputc('\n', out);
            col = 0;
        }
        if (col == 0) {
            fprintf(out, "%*s", indent, "");
            col = indent;
        } else {
            fputc(' ', out);
            col++;
        }
        fwrite(w, 1, (size_t)len, out);
        col += len;
        w = e;
    }
    if (col) fputc('\n', out);
}

static void option_lines(FILE *out, const OptionSpec *table) {
    for (const OptionSpec *o = table; o && o->id; o++) {
        fprintf(out, "  %s%s%s%s%s\n", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
                o->arg ? " " : "", o->arg ? o->arg : "");
        wrap(out, o->help, 8);
    }
}

void options_help(FILE *out, const CommandSpec *cmd) {
    fprintf(out, "usage: cmtc %s%s%s%s\n\n", cmd->name, *cmd->operands ? " " : "", cmd->operands,
            cmd->options || cmd->reads_files ? " [OPTIONS]" : "");
    wrap(out, cmd->about, 0);
    if (cmd->options) {
        fprintf(out, "\noptions:\n");
        option_lines(out, cmd->options);
    }
    /* --help: with the common options, or with the command's own */
    if (cmd->reads_files)
        fprintf(out, "\noptions of every command reading files:\n");
    else if (!cmd->options)
        fprintf(out, "\noptions:\n");
    option_lines(out, cmd->reads_files ? common_options : help_options);
    fprintf(out, "\nexit status: 0 success, 1 errors in the input, 2 usage or I/O failure,\n"
                 "3 solver failure or time limit without a feasible mapping.\n"
                 "The manual page is cmtc(1).\n");
}

void options_usage_hint(FILE *out, const CommandSpec *cmd) {
    fprintf(out, "usage: cmtc %s%s%s%s\n(`cmtc help %s` lists every option)\n", cmd->name,
            *cmd->operands ? " " : "", cmd->operands,
            cmd->options || cmd->reads_files ? " [OPTIONS]" : "", cmd->name);
}

void options_general_usage(FILE *out) {
    fprintf(out, "usage: cmtc COMMAND [OPTIONS] [FILE...]\n\ncommands:\n");
    for (int i = 0; i < cmt_command_count; i++) {
        const CommandSpec *c = &cmt_commands[i];
        char head[64];
        snprintf(head, sizeof head, "%s %s", c->name, c->operands);
        fprintf(out, "  %-20s %s\n", head, c->summary);
    }
    fprintf(out, "\n`cmtc help COMMAND` or `cmtc COMMAND --help` prints a command's options;\n"
                 "`cmtc --version` the version.\n"
                 "Every command reading files takes -I DIR, --diagnostics-format text|json\n"
                 "and --diagnostics-output stderr|stdout.\n"
                 "\n"
                 "exit codes: 0 success, 1 errors in the input, 2 usage or I/O failure,\n"
                 "3 solver failure or time limit without a feasible mapping\n");
}
