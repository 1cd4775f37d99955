/* test_buffers.c — double buffering (docs/cost-model.md section 2,
 * "Double buffering", and section 7, the stall): which tiles a memory
 * holds twice, which once, and what the ones held once cost, every number
 * worked by hand from the formulas. */
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <string.h>

/* A GEMM (bf16 operands, fp32 result C) and its relu D, fused at SRAM,
 * on a core whose SRAM has room for 100 KiB (`tight`) or 1 MiB (`roomy`):
 *   tile SRAM: m 64, n 64, k 256 (k whole), order m, n: T = 4 x 4 = 16
 *   A[64,256] bf16 32 KiB, refilled with m: 4 visits, 3 refills
 *   B[256,64] bf16 32 KiB, refilled with n: 16 visits, 15 refills
 *   C[64,64]  fp32 16 KiB, made and read at SRAM: it does not move
 *   D[64,64]  bf16  8 KiB, stored per (m, n) tile: 15 refills
 * held once: 88 KiB. */
static const char *program_text =
    "arch tight {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 1024 B/cycle; }\n"
    "  memory SRAM { capacity 100 KiB; bandwidth 1024 B/cycle; }\n"
    "  compute mac matrix { throughput 1024 MAC/cycle; }\n"
    "  compute simd vector { throughput 64 op/cycle; }\n"
    "}\n"
    "arch roomy : tight {\n"
    "  memory SRAM { capacity 1 MiB; }\n"
    "}\n"
    "op gemm_relu<M = 256, N = 256, K = 256> {\n"
    "  in A[M, K] : bf16;\n  in B[K, N] : bf16;\n  out D[M, N] : bf16;\n  var C : fp32;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n  D[m, n] = relu(C[m, n]);\n}\n"
    "mapping tight_fused for gemm_relu on tight {\n"
    "  tile SRAM: m 64, n 64;\n  order SRAM: m, n;\n  fuse C, D at SRAM;\n}\n"
    "mapping roomy_fused for gemm_relu on roomy {\n"
    "  tile SRAM: m 64, n 64;\n  order SRAM: m, n;\n  fuse C, D at SRAM;\n}\n"
    "mapping tight_serial for gemm_relu on tight {\n"
    "  tile SRAM: m 64, n 64;\n  order SRAM: m, n;\n  fuse C, D at SRAM;\n  overlap none;\n}\n";

static Program *program;
static Arena arena;

static const Footprint *footprint(const Schedule *s, const char *tensor) {
    const SchedGroup *g = &s->groups[0];
    for (int k = 0; k < g->footprint_count; k++) {
        const Footprint *f = &g->footprints[k];
        if (strcmp(s->arch->memories[f->memory].name, "SRAM") == 0 &&
            strcmp(s->op->tensors[f->tensor].name, tensor) == 0)
            return f;
    }
    return NULL;
}

static double sram_need(const Schedule *s) {
    double need = 0;
    const SchedGroup *g = &s->groups[0];
    for (int k = 0; k < g->footprint_count; k++)
        if (strcmp(s->arch->memories[g->footprints[k].memory].name, "SRAM") == 0)
            need += g->footprints[k].bytes;
    return need;
}

int main(void) {
    SourceManager sm;
    DiagSink diags;
    program = unit_load_named(&arena, &sm, &diags, "buffers.cmt", program_text);
    CHECK(program && diags.error_count == 0, "buffers program checks");
    if (!program || diags.error_count) return unit_finish();

    /* refills: the visits after the first, by the loops that change each
     * tile (m for A; n inside m for B and D); C stays where it is made */
    const Schedule *s = unit_lowered(&arena, program, "roomy_fused");
    CHECK(s && s->groups[0].tiles == 16, "16 outermost tiles");
    const Footprint *a = footprint(s, "A"), *b = footprint(s, "B"), *c = footprint(s, "C"),
                    *d = footprint(s, "D");
    CHECK(a && a->refills == 3, "A refilled 3 times (with m)");
    CHECK(b && b->refills == 15 && d && d->refills == 15, "B and D refilled 15 times");
    CHECK(c && c->refills == 0 && c->spare_tiles == 0 && !c->exposed,
          "C, made and read at SRAM, does not move");
    /* roomy: 1 MiB - 88 KiB leaves room for every spare tile: 88 + 32 +
     * 32 + 8 = 160 KiB */
    CHECK(a && b && d && a->spare_tiles == 1 && b->spare_tiles == 1 && d->spare_tiles == 1,
          "roomy: every refilled tile held twice");
    CHECK_EXACT(sram_need(s), 160.0 * 1024, "roomy: SRAM holds 88 + 72 KiB");
    CHECK_EXACT(s->groups[0].cost.stall_s, 0, "roomy: nothing waits");
    double roomy_latency = s->groups[0].cost.latency_s;
    /* with every spare tile, the pipeline of section 7: the matrix unit
     * (256^3 MAC / 1024 MAC/ns = 16384 ns) sets the pace, the vector unit
     * (65536 relu / 64 op/ns = 1024 ns) and the memory add one tile each */
    double memory = s->groups[0].cost.memory_s;
    CHECK_NEAR(roomy_latency, 16384e-9 + (1024e-9 + memory) / 16, 1e-12,
               "roomy: 16384 ns + (1024 ns + M) / 16");

    /* tight: 100 KiB - 88 KiB = 12 KiB of room.  Most refills first, the
     * smaller tile first among equals: D (15, 8 KiB) fits, 4 KiB left;
     * B (15, 32 KiB) does not, nor A (3, 32 KiB) */
    s = unit_lowered(&arena, program, "tight_fused");
    a = footprint(s, "A");
    b = footprint(s, "B");
    c = footprint(s, "C");
    d = footprint(s, "D");
    CHECK(d && d->spare_tiles == 1 && !d->exposed, "tight: D held twice");
    CHECK(b && b->exposed && a && a->exposed, "tight: B and A held once");
    CHECK_EXACT(sram_need(s), 96.0 * 1024, "tight: SRAM holds 88 + 8 KiB");
    CHECK(s->excess_count == 0, "tight: fits");
    /* the stall: every move of a tile held once but the first waits.
     * B: 16 loads of 32 KiB at 1024 B/ns = 512 ns, 512 x 15/16 = 480 ns;
     * A: 4 loads of 32 KiB = 128 ns, 128 x 3/4 = 96 ns: 576 ns */
    CHECK_NEAR(s->groups[0].cost.stall_s, 576e-9, 1e-12, "tight: stall 480 + 96 ns");
    /* the pipeline as with room, and the stall after it */
    memory = s->groups[0].cost.memory_s;
    CHECK_NEAR(s->groups[0].cost.latency_s, 16384e-9 + (1024e-9 + memory) / 16 + 576e-9, 1e-12,
               "tight: 16384 ns + (1024 ns + M) / 16 + 576 ns");

    /* overlap none holds one tile of each: nothing is refilled ahead, the
     * group takes the sum of its stages (section 7) */
    s = unit_lowered(&arena, program, "tight_serial");
    b = footprint(s, "B");
    CHECK(b && b->refills == 0 && b->spare_tiles == 0 && !b->exposed,
          "overlap none: B held once, nothing ahead");
    CHECK_EXACT(sram_need(s), 88.0 * 1024, "overlap none: 88 KiB");
    CHECK_EXACT(s->groups[0].cost.stall_s, 0, "overlap none: no stall term");
    return unit_finish();
}
