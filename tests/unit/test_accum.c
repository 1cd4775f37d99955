/* test_accum.c — an accumulator beside the innermost memory and stream
 * levels (docs/cost-model.md section 3, "Accumulators" and "Stream
 * levels"), against arithmetic done by hand in the comments from those
 * formulas, and against the reference interpreter. */
#include "passes/passes.h"
#include "passes/verify.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <string.h>

static const char *text =
    "arch three {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; energy 10 pJ/B; }\n"
    "  memory L2 { capacity 64 KiB; bandwidth 32 B/cycle; energy 1 pJ/B; }\n"
    "  memory SRAM { capacity 4 KiB; bandwidth 64 B/cycle; energy 0.5 pJ/B; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; energy 0.5 pJ/MAC; }\n"
    "}\n"
    "arch three_acc : three {\n"
    "  memory ACC role accumulator { capacity 1 KiB; bandwidth 128 B/cycle; energy 0.1 pJ/B; }\n"
    "}\n"
    "arch three_stream : three_acc {\n"
    "  memory L2 { kind stream; }\n"
    "}\n"
    "op gemm<M = 16, N = 16, K = 64> {\n"
    "  in A[M, K] : int8;\n"
    "  in B[K, N] : int8;\n"
    "  out C[M, N] : fp32;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "}\n"
    "op gemm8<M = 16, N = 16, K = 64> {\n"
    "  in A[M, K] : int8;\n"
    "  in B[K, N] : int8;\n"
    "  out C[M, N] : int8;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "}\n"
    "mapping width for gemm8 on three_acc { tile SRAM: k 16; }\n"
    "mapping plain for gemm on three { tile SRAM: k 16; }\n"
    "mapping acc for gemm on three_acc { tile SRAM: k 16; }\n"
    "mapping stream for gemm on three_stream { tile SRAM: k 16; }\n"
    "mapping spill for gemm on three_acc { tile L2: k 32; tile SRAM: m 8, k 16; }\n"
    "op gemm16<M = 16, N = 16, K = 64> {\n"
    "  in A[M, K] : bf16;\n"
    "  in B[K, N] : bf16;\n"
    "  out C[M, N] : bf16;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "}\n"
    "arch two_acc {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 16 B/cycle; }\n"
    "  memory SRAM { capacity 1 MiB; bandwidth 64 B/cycle; }\n"
    "  memory ACC role accumulator { capacity 64 KiB; bandwidth 128 B/cycle; }\n"
    "  compute mac matrix { throughput 64 MAC/cycle; }\n"
    "}\n"
    "mapping partials for gemm16 on two_acc {\n"
    "  tile SRAM: m 4, n 16, k 16; order SRAM: k, m, n;\n"
    "}\n";


static Arena arena;
static SourceManager sources;
static DiagSink diags;

/* Bytes a memory serves in group 0 of the mapping's schedule. */
static double bytes_at(const Schedule *s, const char *mem) {
    int m = unit_memory_id(s->arch, mem);
    return m >= 0 ? s->groups[0].mem_bytes[m] : -1;
}


int main(void) {
    sources_init(&sources, &arena);
    diags_init(&diags, &arena);
    SourceFile *f = sources_add(&sources, "accum.cmt", text, strlen(text));
    CheckOptions opts;
    memset(&opts, 0, sizeof opts);
    Program *p = check_program(&arena, &sources, &diags, f, &opts);
    if (!p || diags.error_count) {
        diags_render_text(stdout, &sources, &diags, (DiagRenderOptions){false});
        CHECK(false, "the accumulator file checks");
        return unit_finish();
    }

    /* The arch: ACC joins SRAM's level as its accumulator. */
    const IrArch *acc_arch = unit_mapping(p, "acc")->arch;
    CHECK(acc_arch->level_count == 3, "an accumulator adds no level");
    CHECK(ir_level_memory(acc_arch, 2, ROLE_OUTPUT)->role == ROLE_ACCUMULATOR,
          "results at the innermost level go to the accumulator");
    CHECK(ir_level_memory(acc_arch, 2, ROLE_INPUT) == &acc_arch->memories[2],
          "operands stay in SRAM");

    /* plain: one L2 tile (A[16,64] and B[64,16] int8, 1 KiB each; C[16,16]
       fp32, 1 KiB), 4 SRAM k tiles (A[16,16], B[16,16]: 256 B each).
       DRAM: A 1024 + B 1024 read, C 1024 written = 3072 B / 16 B/ns = 192 ns.
       L2: A, B written 2048 + read by SRAM loads 4 x 512 = 2048, C written
       1024 and read 1024 on its way out = 6144 B / 32 B/ns = 192 ns.
       SRAM: A, B written 2048 + read by the unit 2048, C written by the
       unit 1024 (once: k runs inside every C loop) and read by the store
       1024 = 6144 B / 64 B/ns = 96 ns. */
    Schedule *s = lower_mapping(&arena, unit_mapping(p, "plain"), true, NULL);
    CHECK_EXACT(bytes_at(s, "DRAM"), 3072, "plain: DRAM 3072 B");
    CHECK_EXACT(bytes_at(s, "L2"), 6144, "plain: L2 6144 B");
    CHECK_EXACT(bytes_at(s, "SRAM"), 6144, "plain: SRAM 6144 B");
    CHECK_EXACT(s->groups[0].level_s[2], 96e-9, "plain: SRAM 96 ns");
    check_verified(s, "plain: the interpreter agrees");

    /* acc: C's 1024 B tile lives in ACC: SRAM keeps A and B only, 4096 B /
       64 B/ns = 64 ns; ACC serves the unit's 1024 B of results and the
       store's 1024 B = 2048 B / 128 B/ns = 16 ns; the level takes the
       slower, 64 ns.  L2 and DRAM as before. */
    s = lower_mapping(&arena, unit_mapping(p, "acc"), true, NULL);
    CHECK_EXACT(bytes_at(s, "SRAM"), 4096, "acc: SRAM 4096 B (A and B only)");
    CHECK_EXACT(bytes_at(s, "ACC"), 2048, "acc: ACC 2048 B (C in and out once)");
    CHECK_EXACT(s->groups[0].level_s[2], 64e-9, "acc: innermost level 64 ns");
    CHECK_EXACT(bytes_at(s, "L2"), 6144, "acc: L2 unchanged");
    CHECK(s->excess_count == 0, "acc: C's 1 KiB fits the 1 KiB accumulator");
    check_verified(s, "acc: the interpreter agrees");
    double acc_energy = s->cost.memory_energy_j;

    /* stream: L2 counts only its inner side: the SRAM loads' reads 2048 B
       and C's 1024 B written from below = 3072 B / 32 B/ns = 96 ns (was
       192 ns).  The 2048 B filled from DRAM and the 1024 B C writes back
       pass through.  Energy is unchanged: the arrays are still written
       and read. */
    s = lower_mapping(&arena, unit_mapping(p, "stream"), true, NULL);
    CHECK_EXACT(bytes_at(s, "L2"), 3072, "stream: L2 3072 B");
    CHECK_EXACT(s->groups[0].level_s[1], 96e-9, "stream: L2 96 ns");
    CHECK_EXACT(bytes_at(s, "DRAM"), 3072, "stream: DRAM unchanged");
    CHECK_EXACT(s->cost.memory_energy_j, acc_energy, "stream: memory energy unchanged");
    check_verified(s, "stream: the interpreter agrees");

    /* spill: k split at L2 (2 trips) outside the SRAM m loop (2 trips):
       C's SRAM-level tile C[8,16] fp32 = 512 B is visited 2 x 2 = 4 times,
       2 distinct, so 2 partial-sum read-backs.  ACC: the unit writes 4 x
       512 = 2048 and reads back 2 x 512 = 1024; the store reads 2048 and
       the read-backs write 1024: 6144 B.  L2 gets C written 2048 and read
       1024 back. */
    s = lower_mapping(&arena, unit_mapping(p, "spill"), true, NULL);
    CHECK_EXACT(bytes_at(s, "ACC"), 6144, "spill: ACC 6144 B with 2 read-backs");
    check_verified(s, "spill: the interpreter agrees");

    /* width (cost-model.md section 2, "Accumulator width"): C declared
       int8 is summed in int32 in the accumulator: C[16,16] takes 16 x 16
       x 4 = 1024 B of ACC's 1 KiB (256 B at its own width), while DRAM
       moves A 1024 + B 1024 + C 16 x 16 x 1 = 2304 B. */
    s = lower_mapping(&arena, unit_mapping(p, "width"), true, NULL);
    double c_acc = -1;
    int acc = unit_memory_id(s->arch, "ACC");
    for (int k = 0; k < s->groups[0].footprint_count; k++) {
        const Footprint *fp = &s->groups[0].footprints[k];
        if (fp->memory == acc && strcmp(s->op->tensors[fp->tensor].name, "C") == 0)
            c_acc = fp->bytes;
    }
    CHECK_EXACT(c_acc, 1024, "width: the int8 result takes 4 B an element in ACC");
    CHECK_EXACT(bytes_at(s, "DRAM"), 2304, "width: DRAM moves C at 1 B an element");
    CHECK(s->excess_count == 0, "width: 1 KiB fits the 1 KiB accumulator");

    /* partials (cost-model.md section 3): with k outermost, each of C's 4
       row tiles [4, 16] is visited 16 times (4 k tiles) and its partial
       sums go to DRAM and come back, at fp32 although C is bf16.  DRAM:
       A [4,16] bf16 128 B x 16 = 2048; B [16,16] 512 B x 4 = 2048; C's 4
       final stores at 2 B (4 x 128 = 512), its 12 partial stores and 12
       reloads at 4 B (12 x 256 x 2 = 6144): 10752 B, 672 ns at 16 B/ns. */
    s = lower_mapping(&arena, unit_mapping(p, "partials"), true, NULL);
    CHECK_EXACT(bytes_at(s, "DRAM"), 10752, "partials: sums move at fp32, the last at bf16");
    check_verified(s, "partials: the interpreter agrees");
    return unit_finish();
}
