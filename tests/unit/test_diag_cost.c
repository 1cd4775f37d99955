/* test_diag_cost.c — checking a file with many warnings costs time linear
 * in its size (issue 9, speed): the checks for earlier errors inside an
 * op or an arch item (span_has_errors) look only at the stored errors,
 * never through every diagnostic.  Before, 40 000 ops with one warning
 * each took 19.5 s.  Nothing is timed: the test counts how many stored
 * diagnostics those checks examine (diag_errors_examined) for N and 2N
 * such ops, after one error at the top of the file. */
#include "frontend/sema.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

/* One error (an unknown name in a constant), then n ops each with an
 * `in` tensor never read (W0401), an arch and a mapping of the last op. */
static char *warning_ops(Arena *a, int n) {
    char *t = arena_printf(a, "const BAD = no_such_name;\n");
    for (int i = 0; i < n; i++)
        t = arena_printf(a,
                         "%sop w_%d<N = 4> { in x[N] : fp16; in unused[N] : fp16; "
                         "out y[N] : fp16; y[n] = x[n]; }\n",
                         t, i);
    return arena_printf(a,
                        "%sarch a { clock 1 GHz; memory DRAM { bandwidth 64 GB/s; read_energy 1 "
                        "pJ/B; write_energy 1 pJ/B; }\n  compute v vector { throughput 8 "
                        "op/cycle; energy 1 pJ/op; } }\nmapping m for w_%d on a { }\n",
                        t, n - 1);
}

static int count_code(const DiagSink *d, const char *code) {
    int n = 0;
    for (int k = 0; k < d->count; k++) n += strcmp(d->items[k]->code, code) == 0;
    return n;
}

/* Checks n warning ops; returns how many diagnostics the error lookups
 * examined, and whether the diagnostics were as expected. */
static long examined_for(int n, bool *as_expected) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    const char *text = warning_ops(&arena, n);
    long before = diag_errors_examined;
    Program *p = unit_load_named(&arena, &sm, &diags, "warnings.cmt", text);
    long examined = diag_errors_examined - before;
    *as_expected = p && diags.error_count == 1 && count_code(&diags, "E0201") == 1 &&
                   count_code(&diags, "W0401") == n;
    arena_free_all(&arena);
    return examined;
}

int main(void) {
    enum { N = 400 };
    bool ok_n = false, ok_2n = false;
    long at_n = examined_for(N, &ok_n);
    long at_2n = examined_for(2 * N, &ok_2n);
    printf("diagnostics examined: %ld for %d ops, %ld for %d ops\n", at_n, N, at_2n, 2 * N);
    CHECK(ok_n && ok_2n, "one error and one W0401 per op are reported");
    /* the stored error is looked at for each op: the lookups do happen */
    CHECK(at_n >= N, "each op's damage check examines the stored error");
    /* linear: twice the ops, about twice the work (quadratic gives 4x, and
     * scanning every diagnostic gives hundreds per op) */
    CHECK(at_2n <= 2 * at_n + 64, "twice the ops examine at most twice the diagnostics");
    CHECK(at_n <= 4 * N, "a few diagnostics examined per op, not all of them");
    return unit_failures ? 1 : 0;
}
