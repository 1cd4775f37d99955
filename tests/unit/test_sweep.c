/* test_sweep.c — sweeps (docs/language.md 5.11, docs/sweeps.md) by hand:
 * the points of a product with a zip, the values of range and geometric,
 * an arch parameter bound by a point, the breakdown that sums to the
 * latency (with launches, and under a pipeline), and one point's row. */
#include "backend/sweep.h"
#include "program.h"

static Arena arena;

static const char *text =
    "arch line<BW = 8 TB/s, LAUNCH = 0 s> {\n"
    "  clock 1 GHz;\n"
    "  launch_overhead LAUNCH;\n"
    "  price 100 kUSD;\n"
    "  cluster stage[s = 4] ring { link_bandwidth 1 GB/s; hop_latency 1 us; }\n"
    "  memory DRAM { bandwidth BW; }\n"
    "  compute simd vector { throughput 1 op/cycle; }\n"
    "}\n"
    "op scale<M = 1000> {\n"
    "  in X[M] : fp32;\n"
    "  out Y[M] : fp32;\n"
    "  Y[m] = X[m] * 2;\n"
    "}\n"
    "op scale2<M = 1000, K = 1> {\n"
    "  in X[M] : fp32;\n"
    "  out Y[M] : fp32;\n"
    "  Y[m] = X[m] * 2;\n"
    "}\n"
    "mapping flat for scale on line { repeat 8; }\n"
    "mapping slow for scale on line<LAUNCH = 2 us> { repeat 8; }\n"
    "mapping piped for scale on line { pipeline s; microbatches 6; repeat 8; }\n"
    "mapping flat2 for scale2 on line {}\n"
    "sweep grid {\n"
    "  mapping = [flat2];\n"
    "  M = [1000, 2000, 3000];\n"
    "  zip { BW = [8 TB/s, 16 TB/s]; LAUNCH = [0 s, 1 us]; }\n"
    "  K = range(1, 2, 1);\n"
    "}\n"
    "sweep pipe {\n"
    "  mapping = [piped];\n"
    "}\n"
    "op serve1<B = 4> {\n"
    "  in X[B] : fp32;\n"
    "  cache K[B] : fp32;\n"
    "  out Y[B] : fp32;\n"
    "  Y[b] = X[b] * K[b];\n"
    "}\n"
    "mapping fixed for serve1 on line { serve decode of B = 16; }\n"
    "sweep batches {\n"
    "  mapping = [fixed];\n"
    "  B = [2, 64];\n"
    "}\n"
    "sweep ranges {\n"
    "  mapping = [flat];\n"
    "  BW = range(1 TB/s, 2 TB/s, 0.25 TB/s);\n"
    "  M = geometric(1024, 16384, 2);\n"
    "}\n"
    ;

static const IrSweep *sweep_named(const Program *p, const char *name) {
    for (int i = 0; i < p->sweep_count; i++)
        if (strcmp(p->sweeps[i]->name, name) == 0) return p->sweeps[i];
    return NULL;
}

/* A product: M (3 values) slowest, then the zip of BW and LAUNCH (2), then
 * K (2): 12 points; point 7 = 1 * 4 + 1 * 2 + 1 is M's second value, the
 * zip's second pair and K's second. */
static void check_points(const Program *p) {
    const IrSweep *sw = sweep_named(p, "grid");
    CHECK(sw != NULL, "grid: checked");
    if (!sw) return;
    CHECK(sw->point_count == 12 && sw->group_count == 4,
          "grid: 1 x 3 x 2 x 2 points in 4 groups (the mapping, M, the zip, K)");
    int index[IR_SWEEP_MAX_AXES];
    ir_sweep_point(sw, 7, index);
    CHECK(index[0] == 0 && index[1] == 1 && index[2] == 1 && index[3] == 1 && index[4] == 1,
          "point 7: M's second value, the zip's second pair, K's second");
    ir_sweep_point(sw, 11, index);
    CHECK(index[1] == 2 && index[2] == 1 && index[3] == 1 && index[4] == 1,
          "point 11: the last of every axis");
    DiagSink diags;
    diags_init(&diags, &arena);
    IrMapping *m = program_sweep_point((Program *)p, sw, 7, &diags);
    CHECK(m && m->op->param_values[0] == 2000 && m->op->param_values[1] == 2 &&
              unit_near(m->arch->memories[0].bandwidth, 16e12, 1e-12) &&
              unit_near(m->arch->launch_overhead, 1e-6, 1e-12),
          "point 7's mapping: scale2<M=2000, K=2> on line<BW=16 TB/s, LAUNCH=1 us>");
}

/* An axis over a serve line's B replaces the line's `= 16` as it replaces
 * any binding (docs/language.md 5.11): point 1 serves 64 sequences. */
static void check_serve_axis(const Program *p) {
    const IrSweep *sw = sweep_named(p, "batches");
    CHECK(sw != NULL, "batches: checked");
    if (!sw) return;
    DiagSink diags;
    diags_init(&diags, &arena);
    IrMapping *m = program_sweep_point((Program *)p, sw, 1, &diags);
    CHECK(m && m->op->param_values[0] == 64 && m->serve.sequences == 64 &&
              m->serve.batch_written == 0,
          "point 1: B = 64 from the axis, not the line's 16");
}

static void check_ranges(const Program *p) {
    const IrSweep *sw = sweep_named(p, "ranges");
    CHECK(sw != NULL, "ranges: checked");
    if (!sw) return;
    CHECK(sw->point_count == 25, "ranges: 5 bandwidths x 5 sizes");
    const IrSweepAxis *bw = &sw->axes[1], *m = &sw->axes[2];
    CHECK(bw->value_count == 5 && unit_near(bw->numbers[0], 1e12, 1e-12) &&
              unit_near(bw->numbers[1], 1.25e12, 1e-12) &&
              unit_near(bw->numbers[4], 2e12, 1e-12) && !bw->integer,
          "range(1 TB/s, 2 TB/s, 0.25 TB/s): 1, 1.25, 1.5, 1.75, 2 TB/s");
    CHECK(m->value_count == 5 && m->integer && m->numbers[0] == 1024 && m->numbers[1] == 2048 &&
              m->numbers[4] == 16384,
          "geometric(1024, 16384, 2): 1024, 2048, 4096, 8192, 16384");
    int index[IR_SWEEP_MAX_AXES];
    ir_sweep_point(sw, 13, index); /* 13 = 2 * 5 + 3 */
    CHECK(index[0] == 0 && index[1] == 2 && index[2] == 3,
          "point 13: the third bandwidth (1.5 TB/s) and the fourth size (8192)");
    CHECK(strcmp(sweep_row_key(&arena, sw, 13), "13,flat,1.5e+12,8192") == 0,
          "point 13's key: its number and axis values in SI");
    CHECK(strcmp(sweep_header(&arena, sw, SWEEP_CSV),
                 "point,x.mapping,x.BW (B/s),x.M,status,message,mapping,op,arch,latency_s,"
                 "energy_j,edp_js,power_w,time_compute_s,time_memory_s,time_network_s,"
                 "time_bubble_s,time_other_s,compute_s,memory_s,network_s,bound,flop,"
                 "outer_bytes,intensity_flop_per_b,achieved_flop_per_s,peak_flop_per_s,"
                 "peak_outer_b_per_s,utilisation,price_usd,flop_per_s_per_usd,ttft_s,tpot_s,"
                     "tokens_per_s,tokens_per_s_per_device,memory_per_device_b,memory_per_level,"
                     "solver,"
                 "chosen,inputs") == 0,
          "the CSV header: the point, the axes with their units, the figures");

    /* point 13: M = 8192 on line<BW = 1.5 TB/s>.  8192 element ops at
     * 1 op/ns = 8192 ns; 65536 B at 1.5 TB/s = 43.69 ns; one tile, so
     * nothing overlaps: 8235.69 ns, 8 repeats = 65885.5 ns */
    DiagSink diags;
    diags_init(&diags, &arena);
    IrMapping *m13 = program_sweep_point((Program *)p, sw, 13, &diags);
    CHECK(m13 && m13->op->param_values[0] == 8192 && unit_near(m13->arch->memories[0].bandwidth, 1.5e12, 1e-12),
          "point 13's mapping: scale<M=8192> on line<BW=1.5 TB/s>");
    if (!m13) return;
    const Schedule *s = lower_mapping(&arena, m13, false, NULL);
    double expected = 8 * (8192e-9 + 65536 / 1.5e12);
    CHECK_NEAR(s->cost.latency_s, expected, 1e-9, "point 13: 8 x (8192 ns + 65536 B / 1.5 TB/s)");
    OptimizeOptions opts;
    memset(&opts, 0, sizeof opts);
    const char *row = sweep_evaluate_point(&arena, (Program *)p, p->sources, sw, 13, &opts, sweep_inputs(&arena, p->sources),
                                           SWEEP_CSV);
    const char *want = arena_printf(&arena, "13,flat,1.5e+12,8192,ok,,flat,scale,\"line<BW=1.50 TB/s, LAUNCH=0 s>\",%.10g,", expected);
    if (strncmp(row, want, strlen(want)) != 0) printf("row: %s\nwant: %s\n", row, want);
    CHECK(strncmp(row, want, strlen(want)) == 0, "point 13's row: ok, the mapping, op, arch and latency");
    /* no spatial line: each of the 4 stages' instances runs the whole op.
     * flop: the op's work once, 8 x 8192 (one op an element); outer
     * bytes: every instance's DRAM, 4 x 8 x 65536; the peak: 4 vector
     * units of 1e9 op/s, so the achieved 65536 / 65885.5 ns is a quarter
     * of it */
    CHECK(strstr(row, ",compute,65536,2097152,0.03125,") != NULL,
          "point 13's row: compute-bound, 65536 FLOP over 2097152 B = 0.03125 FLOP/B");
    CHECK(strstr(row, arena_printf(&arena, ",%.10g,4000000000,6e+12,%.10g,", 65536 / expected,
                                   65536 / expected / 4e9)) != NULL,
          "point 13's row: achieved 65536 FLOP / latency, peak 4e9 FLOP/s and 4 x 1.5 TB/s");
    /* the arch's price, 100 kUSD: FLOP/s per dollar */
    CHECK(strstr(row, arena_printf(&arena, ",100000,%.10g,", 65536 / expected / 1e5)) != NULL,
          "point 13's row: price 100000 USD, achieved FLOP/s per USD");
    CHECK(sweep_row_ok(sw, row, SWEEP_CSV), "point 13's row reads as ok");
}

/* The breakdown sums to the latency.  `slow`: 8 x (1001 ns + 2 us
 * launch): compute 8008 ns, launches 16000 ns.  `piped` (1F1B, 4 stages,
 * 6 micro-batches, 2 layers a stage): the passes 6 x 2002 = 12012 ns, the
 * bubble 3 x 2002 = 6006 ns, the sends the rest of the 48008 ns step,
 * 29990 ns (test_stages.c). */
static void check_partition(const Program *p) {
    double part[5];
    const Schedule *slow = unit_lowered(&arena, p, "slow");
    schedule_partition(slow, part);
    CHECK_NEAR(part[0], 8008e-9, 1e-9, "slow: compute-bound groups 8 x 1001 ns");
    CHECK(part[1] == 0 && part[2] == 0 && part[3] == 0, "slow: no memory, network or bubble");
    CHECK_NEAR(part[4], 16000e-9, 1e-9, "slow: the launches 8 x 2 us");
    const Schedule *piped = unit_lowered(&arena, p, "piped");
    schedule_partition(piped, part);
    CHECK_NEAR(part[0], 12012e-9, 1e-9, "piped: the passes 6 x 2002 ns");
    CHECK_NEAR(part[2], 29990e-9, 1e-9, "piped: the sends 29990 ns");
    CHECK_NEAR(part[3], 6006e-9, 1e-9, "piped: the bubble 3 x 2002 ns");
    CHECK_NEAR(part[0] + part[1] + part[2] + part[3] + part[4], 48008e-9, 1e-12,
               "piped: the parts sum to the 48008 ns step");
}

/* A pipeline's row counts the whole machine: 8 layers x 6 micro-batches
 * x 1000 element ops = 48000 FLOP in the 48008 ns step, against 4 stages'
 * vector units of 1e9 op/s: a utilisation of 48000 / 48008e-9 / 4e9. */
static void check_pipeline_row(const Program *p) {
    const IrSweep *sw = sweep_named(p, "pipe");
    CHECK(sw && sw->point_count == 1, "pipe: one point");
    if (!sw) return;
    OptimizeOptions opts;
    memset(&opts, 0, sizeof opts);
    const char *row = sweep_evaluate_point(&arena, (Program *)p, p->sources, sw, 0, &opts, sweep_inputs(&arena, p->sources),
                                           SWEEP_CSV);
    const char *tail = arena_printf(&arena, ",%.10g,4000000000,", 48000 / 48008e-9);
    const char *util = arena_printf(&arena, ",%.10g,", 48000 / 48008e-9 / 4e9);
    CHECK(strstr(row, ",48000,") && strstr(row, tail) && strstr(row, util),
          "pipe: 48000 FLOP, achieved 48000 / 48008 ns, peak 4e9 (every stage), a quarter used");
}

int main(void) {
    SourceManager sm;
    DiagSink diags;
    Program *p = unit_load_named(&arena, &sm, &diags, "sweep.cmt", text);
    CHECK(p && diags.error_count == 0, "the file checks");
    if (!p) return 1;
    check_points(p);
    check_ranges(p);
    check_serve_axis(p);
    check_partition(p);
    check_pipeline_row(p);
    arena_free_all(&arena);
    return unit_failures ? 1 : 0;
}
