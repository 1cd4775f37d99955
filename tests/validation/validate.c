/* The validation suite's runner: each row of a manifest names a published
 * measurement and the mapping that describes it; the runner compiles the
 * mapping (or model) with cmtc (--format json), reads the latency (a
 * model's step) and prints
 *
 *   validate ROW published X UNIT cmtc Y UNIT ratio R
 *
 * per row, then
 *
 *   validate: N rows, K within 15%, geometric-mean error E%, worst ROW (ratio R)
 *
 * where R = cmtc / published and the geometric-mean error is
 * exp(mean |ln R|) - 1 over the rows evaluated.  Rows marked `fit` were
 * used to fit the archs' fitted parameters; they are reported like the
 * others and counted in the summary, and a line before it names them.
 *
 * Manifest lines (blank lines and lines starting with # are skipped):
 *
 *   ROW FILE MAPPING PUBLISHED UNIT fit|report|part
 *
 * FILE is relative to the manifest's folder; UNIT is s, ms, us or ns.  A
 * `part` row has no published value (PUBLISHED `-`): it is a term of a
 * later sum, printed but neither compared nor counted.
 * MAPPING may name a part of the mapping's schedule instead of the whole:
 *
 *   NAME@STMT    the group that runs statement STMT (a kernel of a layer)
 *   NAME%TENSOR  the collectives that move TENSOR, summed (an all-reduce)
 *
 * A row whose FILE is `=` adds up earlier rows, MAPPING naming them as
 * ROW+ROW+...: a published total of separately measured kernels.
 *
 * What the measuring harness adds on the host to each call it times (a
 * framework's dispatch, its timer and synchronisation) is not the
 * machine's: a line
 *
 *   overhead NAME VALUE UNIT
 *
 * declares it, and a row that ends with `+NAME` adds it once to cmtc's
 * latency (the row's mapping is one call).  Its value is fitted like an
 * arch parameter, on a row marked `fit`.
 *
 * usage: validate CMTC MANIFEST
 * Exit status: 0 when every row was evaluated, 1 when a row could not be
 * (its line says why), 2 on a usage or manifest error. */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WITHIN 0.15 /* the suite's per-row goal: |R - 1| <= 15 % */

typedef struct Row {
    char id[128], file[512], mapping[1024], unit[8], use[8]; /* a sum's ROW+ROW+... is long */
    double overhead_s; /* the harness's per-call overhead (`+NAME`), or 0 */
    char part; /* 0 (the whole mapping), '@' (a group) or '%' (collectives) */
    char part_name[128];
    double published; /* in UNIT */
    int line;
} Row;

static double unit_seconds(const char *unit) {
    if (strcmp(unit, "s") == 0) return 1;
    if (strcmp(unit, "ms") == 0) return 1e-3;
    if (strcmp(unit, "us") == 0) return 1e-6;
    if (strcmp(unit, "ns") == 0) return 1e-9;
    return 0;
}

/* Characters that may appear in a file or mapping name passed to the shell:
 * no quoting games, the manifest is ours. */
static bool shell_safe(const char *s) {
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("._/-+@%", *s)) return false;
    return true;
}

/* The harness overheads declared so far (`overhead NAME VALUE UNIT`). */
#define MAX_OVERHEADS 16
static char overhead_name[MAX_OVERHEADS][64];
static double overhead_seconds[MAX_OVERHEADS];
static int overhead_count;

static bool parse_overhead(const char *manifest, int line_no, const char *line) {
    char name[64], value[64], unit[8], extra[8];
    int n = sscanf(line, "overhead %63s %63s %7s %7s", name, value, unit, extra);
    char *end;
    errno = 0;
    double v = n >= 2 ? strtod(value, &end) : NAN;
    if (n != 3 || *end || errno || !(v >= 0) || !isfinite(v) || unit_seconds(unit) == 0) {
        fprintf(stderr, "%s:%d: expected overhead NAME VALUE UNIT (a number >= 0 in s, ms, us "
                        "or ns)\n",
                manifest, line_no);
        return false;
    }
    for (int k = 0; k < overhead_count; k++)
        if (strcmp(overhead_name[k], name) == 0) {
            fprintf(stderr, "%s:%d: overhead `%s` is declared twice\n", manifest, line_no, name);
            return false;
        }
    if (overhead_count == MAX_OVERHEADS) {
        fprintf(stderr, "%s:%d: more than %d overheads\n", manifest, line_no, MAX_OVERHEADS);
        return false;
    }
    snprintf(overhead_name[overhead_count], sizeof overhead_name[0], "%s", name);
    overhead_seconds[overhead_count++] = v * unit_seconds(unit);
    return true;
}

static bool parse_row(const char *manifest, int line_no, const char *line, Row *row) {
    char file[400], published[64], plus[80] = "", extra[8];
    int n = sscanf(line, "%127s %399s %1023s %63s %7s %7s %79s %7s", row->id, file, row->mapping,
                   published, row->unit, row->use, plus, extra);
    if (n != 6 && n != 7) {
        fprintf(stderr, "%s:%d: expected ROW FILE MAPPING PUBLISHED UNIT fit|report [+OVERHEAD]\n",
                manifest, line_no);
        return false;
    }
    row->overhead_s = 0;
    if (n == 7) {
        int found = -1;
        for (int k = 0; k < overhead_count && found < 0; k++)
            if (plus[0] == '+' && strcmp(overhead_name[k], plus + 1) == 0) found = k;
        if (found < 0) {
            fprintf(stderr, "%s:%d: `%s` names no overhead declared above (+NAME)\n", manifest,
                    line_no, plus);
            return false;
        }
        row->overhead_s = overhead_seconds[found];
    }
    char *end;
    errno = 0;
    bool part = strcmp(row->use, "part") == 0;
    if (part != (strcmp(published, "-") == 0)) {
        fprintf(stderr, "%s:%d: a `part` row has no published value (`-`), every other row one\n",
                manifest, line_no);
        return false;
    }
    row->published = part ? NAN : strtod(published, &end);
    if (!part && (*end || errno || !(row->published > 0))) {
        fprintf(stderr, "%s:%d: published value `%s` is not a positive number\n", manifest,
                line_no, published);
        return false;
    }
    if (unit_seconds(row->unit) == 0) {
        fprintf(stderr, "%s:%d: unit `%s` is not s, ms, us or ns\n", manifest, line_no,
                row->unit);
        return false;
    }
    if (strcmp(row->use, "fit") != 0 && strcmp(row->use, "report") != 0 && !part) {
        fprintf(stderr, "%s:%d: `%s` should be fit, report or part\n", manifest, line_no,
                row->use);
        return false;
    }
    const char *slash = strrchr(manifest, '/');
    int dir_len = slash ? (int)(slash - manifest + 1) : 0;
    snprintf(row->file, sizeof row->file, "%.*s%s", dir_len, manifest, file);
    if (strcmp(file, "=") == 0) {
        if (n == 7) {
            fprintf(stderr, "%s:%d: a sum of rows takes no overhead: each row adds its own\n",
                    manifest, line_no);
            return false;
        }
        row->file[0] = 0; /* a sum of earlier rows */
        row->part = 0;
        row->part_name[0] = 0;
        row->line = line_no;
        return true;
    }
    if (!shell_safe(row->file) || !shell_safe(row->mapping)) {
        fprintf(stderr, "%s:%d: file and mapping names may use letters, digits and ._/-+@%% only\n",
                manifest, line_no);
        return false;
    }
    row->part = 0;
    row->part_name[0] = 0;
    char *mark = strpbrk(row->mapping, "@%");
    if (mark) {
        row->part = *mark;
        snprintf(row->part_name, sizeof row->part_name, "%s", mark + 1);
        *mark = 0;
        if (!row->part_name[0] || !row->mapping[0] || strpbrk(row->part_name, "@%")) {
            fprintf(stderr, "%s:%d: write MAPPING, MAPPING@STATEMENT or MAPPING%%TENSOR\n",
                    manifest, line_no);
            return false;
        }
    }
    row->line = line_no;
    return true;
}

/* The latency of the row's part of one compiled mapping (docs/json-output.md),
 * or a negative number with *why set. */
static double part_latency(json_t *mapping, const Row *row, char *why, size_t why_size) {
    double latency = 0;
    bool found = false;
    if (row->part == 0) {
        json_t *value = json_object_get(mapping, "latency_s");
        found = json_is_number(value);
        latency = json_number_value(value);
    } else if (row->part == '@') {
        size_t g, k;
        json_t *group, *stmt;
        json_array_foreach(json_object_get(mapping, "groups"), g, group) {
            json_array_foreach(json_object_get(group, "statements"), k, stmt) {
                if (strcmp(json_string_value(stmt) ? json_string_value(stmt) : "",
                           row->part_name) == 0) {
                    latency = json_number_value(json_object_get(group, "latency_s"));
                    found = true;
                }
            }
        }
    } else {
        size_t k;
        json_t *node;
        json_array_foreach(json_object_get(mapping, "nodes"), k, node) {
            const char *kind = json_string_value(json_object_get(node, "kind"));
            const char *tensor = json_string_value(json_object_get(node, "tensor"));
            if (kind && tensor && strcmp(kind, "collective") == 0 &&
                strcmp(tensor, row->part_name) == 0) {
                latency += json_number_value(json_object_get(node, "latency_s"));
                found = true;
            }
        }
    }
    if (!found) {
        snprintf(why, why_size, "%s has no %s `%s`", row->mapping,
                 row->part == '@' ? "group running" : "collective of", row->part_name);
        return -1;
    }
    if (!(latency > 0)) {
        snprintf(why, why_size, "latency of %s is not positive", row->mapping);
        return -1;
    }
    return latency;
}

/* The mapping's latency in seconds, or a negative number with *why set. */
static double compiled_latency(const char *cmtc, const Row *row, char *why, size_t why_size) {
    char command[1400];
    snprintf(command, sizeof command,
             "'%s' compile '%s' -m '%s' --format json --baseline none "
             "--diagnostics-format json --diagnostics-output stdout 2>&1",
             cmtc, row->file, row->mapping);
    FILE *p = popen(command, "r");
    if (!p) {
        snprintf(why, why_size, "cannot run %s", cmtc);
        return -1;
    }
    json_error_t error;
    json_t *doc = json_loadf(p, JSON_DISABLE_EOF_CHECK, &error);
    int status = pclose(p);
    double latency = -1;
    json_t *mappings = doc ? json_object_get(doc, "mappings") : NULL;
    /* a model's row (`-m MODEL`): its step (docs/json-output.md, "model") */
    json_t *model = doc ? json_array_get(json_object_get(doc, "models"), 0) : NULL;
    const char *model_name = json_string_value(json_object_get(model, "name"));
    if (model_name && strcmp(model_name, row->mapping) == 0) {
        latency = json_number_value(json_object_get(model, "step_s"));
    } else if (!doc) {
        snprintf(why, why_size, "cmtc printed no JSON (exit %d): %s", status, error.text);
    } else if (json_array_size(mappings) != 1) {
        /* the first diagnostic says why the mapping did not compile */
        json_t *diags = json_object_get(doc, "diagnostics");
        json_t *first = json_array_get(diags, 0);
        const char *code = json_string_value(json_object_get(first, "code"));
        const char *message = json_string_value(json_object_get(first, "message"));
        snprintf(why, why_size, "not compiled: %s %s", code ? code : "?",
                 message ? message : "(no diagnostic)");
    } else {
        latency = part_latency(json_array_get(mappings, 0), row, why, why_size);
    }
    json_decref(doc);
    return latency;
}

/* Rows evaluated so far, for the sums. */
#define MAX_ROWS 512
static char done_id[MAX_ROWS][128];
static double done_seconds[MAX_ROWS];
static int done_count;

/* The sum of the earlier rows ROW+ROW+... in seconds, or a negative
 * number with *why set. */
static double summed_latency(const Row *row, char *why, size_t why_size) {
    char names[sizeof row->mapping];
    snprintf(names, sizeof names, "%s", row->mapping);
    double total = 0;
    for (char *save = NULL, *name = strtok_r(names, "+", &save); name;
         name = strtok_r(NULL, "+", &save)) {
        int found = -1;
        for (int r = 0; r < done_count && found < 0; r++)
            if (strcmp(done_id[r], name) == 0) found = r;
        if (found < 0) {
            snprintf(why, why_size, "no row %s evaluated before it", name);
            return -1;
        }
        total += done_seconds[found];
    }
    return total;
}

/* A number as the table prints it: four significant digits, and whole
 * numbers past 10^4 rather than an exponent (110277 us, not 1.103e+05). */
static const char *num4(double v, char buf[32]) {
    if (fabs(v) >= 1e4 && fabs(v) < 1e15)
        snprintf(buf, 32, "%.0f", v);
    else
        snprintf(buf, 32, "%.4g", v);
    return buf;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: validate CMTC MANIFEST\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        fprintf(stderr, "validate: cannot open %s: %s\n", argv[2], strerror(errno));
        return 2;
    }
    char line[2048];
    int line_no = 0, rows = 0, within = 0, failed = 0, fitted = 0;
    double sum_abs_log = 0, worst_abs_log = -1, worst_ratio = 0;
    char worst[128] = "", fit_rows[4096] = "";
    while (fgets(line, sizeof line, f)) {
        line_no++;
        const char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (!*s || *s == '#') continue;
        if (strncmp(s, "overhead", 8) == 0 && isspace((unsigned char)s[8])) {
            if (!parse_overhead(argv[2], line_no, s)) {
                fclose(f);
                return 2;
            }
            continue;
        }
        Row row;
        if (!parse_row(argv[2], line_no, s, &row)) {
            fclose(f);
            return 2;
        }
        bool part = strcmp(row.use, "part") == 0;
        if (!part) rows++;
        if (strcmp(row.use, "fit") == 0) {
            size_t used = strlen(fit_rows);
            snprintf(fit_rows + used, sizeof fit_rows - used, "%s%s", fitted ? ", " : "", row.id);
            fitted++;
        }
        char why[1600], nb1[32], nb2[32];
        double seconds = row.file[0] ? compiled_latency(argv[1], &row, why, sizeof why)
                                     : summed_latency(&row, why, sizeof why);
        if (seconds >= 0) seconds += row.overhead_s;
        if (seconds < 0) {
            printf("validate %s published %s %s cmtc failed (%s)\n", row.id, num4(row.published, nb1),
                   row.unit, why);
            if (part) rows++; /* counted: a sum needs it */
            failed++;
            continue;
        }
        if (done_count < MAX_ROWS) {
            snprintf(done_id[done_count], sizeof done_id[0], "%s", row.id);
            done_seconds[done_count++] = seconds;
        }
        double value = seconds / unit_seconds(row.unit);
        if (part) {
            /* a term of a later sum, not measured on its own */
            printf("validate %s cmtc %s %s (part of a sum)\n", row.id, num4(value, nb1), row.unit);
            continue;
        }
        double ratio = value / row.published;
        printf("validate %s published %s %s cmtc %s %s ratio %.3f\n", row.id,
               num4(row.published, nb1), row.unit, num4(value, nb2), row.unit, ratio);
        double abs_log = fabs(log(ratio));
        sum_abs_log += abs_log;
        if (fabs(ratio - 1) <= WITHIN) within++;
        if (abs_log > worst_abs_log) {
            worst_abs_log = abs_log;
            worst_ratio = ratio;
            snprintf(worst, sizeof worst, "%s", row.id);
        }
    }
    fclose(f);
    int evaluated = rows - failed;
    double gm_error = evaluated ? (exp(sum_abs_log / evaluated) - 1) * 100 : 0;
    printf("validate: fitted on %s\n", fitted ? fit_rows : "no row");
    if (failed) printf("validate: %d rows not evaluated (counted outside 15%%)\n", failed);
    printf("validate: %d rows, %d within 15%%, geometric-mean error %.1f%%, worst %s (ratio %.3f)\n",
           rows, within, gm_error, evaluated ? worst : "none", worst_ratio);
    return failed ? 1 : 0;
}
