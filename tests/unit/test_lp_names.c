/* test_lp_names.c — the MILP that --emit-lp writes names its columns after
 * what they choose (before: x_cfg4, z_cfg4_C_s_D_at_SRAM, L_C_s_D_at_SRAM):
 * a configuration by its split, tile and order choices
 * (cfg4_spatial_m_x_tile_SRAM_m_2_order_SRAM_...), a group by its
 * statements and level (fuse_C_s_at_SRAM_cfg4, unfused_D_cfg4), a group's
 * latency as latency_of_...; and lp_solve reads the file back (every name
 * within its LP-format rules). */
#include "passes/optimize/optimize.h"
#include "tests/unit/program.h"
#include "tests/unit/unit.h"

#include <lpsolve/lp_lib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *text =
    "arch small {\n"
    "  clock 1 GHz;\n"
    "  memory DRAM { bandwidth 8 B/cycle; read_energy 100 pJ/B; write_energy 100 pJ/B; }\n"
    "  cluster chips[x = 2] ring { link_bandwidth 8 B/cycle; hop_latency 10 cycles; link_energy "
    "2 pJ/B; }\n"
    "  memory SRAM { capacity 4 KiB; bandwidth 32 B/cycle; read_energy 2 pJ/B; write_energy 2 "
    "pJ/B; }\n"
    "  compute mac matrix { throughput 32 MAC/cycle; energy 0.3 pJ/MAC; }\n"
    "  compute simd vector { throughput 8 op/cycle; energy 0.5 pJ/op; }\n"
    "}\n"
    "op norm<M = 8, N = 32, K = 4> {\n"
    "  in A[M, K] : int8;\n  in B[K, N] : int8;\n  out D[M, N] : int8;\n"
    "  C[m, n] = A[m, k] * B[k, n];\n"
    "  s[m] = sum(n) C[m, n];\n"
    "  D[m, n] = C[m, n] / s[m];\n"
    "}\n"
    "mapping searched for norm on small {\n"
    "  spatial ?;\n  tile SRAM: m ?, n ?;\n  order SRAM: ?;\n  fuse ?;\n"
    "}\n";

static bool starts(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int main(void) {
    Arena arena = {0};
    SourceManager sm;
    DiagSink diags;
    Program *p = unit_load_named(&arena, &sm, &diags, "gen.cmt", text);
    CHECK(p && diags.error_count == 0 && p->mapping_count == 1, "the program checks");
    if (!p || p->mapping_count != 1) return 1;
    char path[] = "/tmp/cmtc-lp-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    OptimizeOptions opts;
    memset(&opts, 0, sizeof opts);
    opts.emit_lp_path = path;
    SolverReport report;
    memset(&report, 0, sizeof report);
    bool ok = complete_mapping(&arena, p, p->mappings[0], &opts, &report) != NULL;
    CHECK(ok && report.status == SOLVER_OPTIMAL, "the optimizer solves it");
    FILE *in = fopen(path, "r");
    lprec *lp = in ? read_lp(in, NEUTRAL, NULL) : NULL;
    if (in) fclose(in);
    CHECK(lp != NULL, "lp_solve reads the emitted LP back");
    if (lp) {
        int n = get_Ncolumns(lp), readable = 0, cfg_tile = 0, cfg_order = 0, cfg_spatial = 0,
            fused = 0, latency = 0;
        for (int c = 1; c <= n; c++) {
            const char *name = get_col_name(lp, c);
            if (starts(name, "cfg") || starts(name, "fuse_") || starts(name, "unfused_") ||
                starts(name, "latency_of_"))
                readable++;
            if (starts(name, "cfg") && strstr(name, "_tile_SRAM_m_")) cfg_tile++;
            if (starts(name, "cfg") && strstr(name, "_order_SRAM_")) cfg_order++;
            if (starts(name, "cfg") && strstr(name, "_spatial_")) cfg_spatial++;
            if (starts(name, "fuse_") && strstr(name, "_at_SRAM_cfg")) fused++;
            if (starts(name, "latency_of_")) latency++;
            if (strlen(name) > 120) printf("FAIL: column name too long: %s\n", name);
        }
        CHECK(n > 0 && readable == n, "every column is named after what it chooses");
        CHECK(cfg_tile > 0 && cfg_order > 0 && cfg_spatial > 0,
              "configurations name their tile, order and split choices");
        CHECK(fused > 0, "fused groups name their statements and level");
        CHECK(latency > 0, "each group's latency column names the group");
        delete_lp(lp);
    }
    unlink(path);
    arena_free_all(&arena);
    return unit_failures != 0;
}
