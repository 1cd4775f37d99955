/* test_collectives.c — the alpha-beta collective formulas against the
 * worked numbers of published.md section 3 and hand arithmetic from
 * docs/cost-model.md section 4.  Times are in cycles: alpha = 5 cycles,
 * beta = 1/64 cycle per byte (64 B/cycle links). */
#include "passes/passes.h"
#include "tests/unit/unit.h"

static NetDim dim(int64_t p, Topology t, bool uni) {
    NetDim d = {p, t, uni, 5.0, 1.0 / 64, 1.0, 0, 1, 0, 1};
    return d;
}

int main(void) {
    double n = 64 * 1024; /* 64 KiB */

    /* flat unidirectional ring of 16: 2(p-1)a + 2(p-1)/p n b
       = 2*15*5 + 2*15/16*65536/64 = 150 + 1920 = 2070 */
    NetDim uni = dim(16, TOPO_RING, true);
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, &uni, 1, n).time_s, 2070, 1e-12,
               "allreduce unidirectional ring of 16 is 2070 cycles");

    /* bidirectional ring: beta halves: 150 + 960 = 1110 */
    NetDim bi = dim(16, TOPO_RING, false);
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, &bi, 1, n).time_s, 1110, 1e-12,
               "allreduce bidirectional ring of 16 is 1110 cycles");

    /* 4x4 torus: RS on x (3*5 + 3/4*65536/128 = 15 + 384 = 399), AR on y
       of 16384 B (2*(15 + 3/4*16384/128) = 2*(15+96) = 222), AG on x 399:
       1020 */
    NetDim torus[2] = {dim(4, TOPO_TORUS, false), dim(4, TOPO_TORUS, false)};
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, torus, 2, n).time_s, 1020, 1e-12,
               "allreduce 4x4 torus dimension by dimension is 1020 cycles");

    /* ring reduce-scatter, unidirectional: (p-1)a + (p-1)/p n b
       = 75 + 960 = 1035; all-gather of a 64 KiB result the same */
    CHECK_NEAR(collective_cost(CK_REDUCE_SCATTER, &uni, 1, n).time_s, 1035, 1e-12,
               "reduce_scatter unidirectional ring of 16");
    CHECK_NEAR(collective_cost(CK_ALLGATHER, &uni, 1, n).time_s, 1035, 1e-12,
               "allgather unidirectional ring of 16");

    /* byte-hops of the ring all-reduce: 2 (p-1) n = 2*15*65536 = 1966080 */
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, &uni, 1, n).byte_hops, 1966080, 1e-12,
               "allreduce ring byte-hops are 2(p-1)n");

    /* torus byte-hops: RS on x runs in 4 lines of 4: 4*3*65536 = 786432;
       AR on y of 16384 B in 4 lines: 4*2*3*16384 = 393216; AG on x 786432:
       total 1966080 (the same volume as a flat ring, shorter time) */
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, torus, 2, n).byte_hops, 1966080, 1e-12,
               "allreduce torus byte-hops");

    /* 2x2 mesh (lines, no wrap: one unidirectional ring embedded):
       RS on x: 1*5 + 1/2*65536/64 = 5 + 512 = 517; AR on y of 32768 B:
       2*(5 + 1/2*32768/64) = 2*(5 + 256) = 522; AG on x 517: 1556 */
    NetDim mesh[2] = {dim(2, TOPO_MESH, false), dim(2, TOPO_MESH, false)};
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, mesh, 2, n).time_s, 1556, 1e-12, "allreduce 2x2 mesh");

    /* switch of 8: recursive halving, log2 8 = 3 steps each way:
       2*(3*5 + 7/8*65536/64) = 2*(15 + 896) = 1822 */
    NetDim sw = dim(8, TOPO_SWITCH, false);
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, &sw, 1, n).time_s, 1822, 1e-12,
               "allreduce switch of 8");

    /* full mesh of 8: one step each way: 2*(5 + 65536/8/64) = 2*133 = 266 */
    NetDim full = dim(8, TOPO_FULL, false);
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, &full, 1, n).time_s, 266, 1e-12,
               "allreduce full mesh of 8");

    /* broadcast on a bidirectional ring of 16: diameter 8 hops:
       8*5 + 65536/64 = 40 + 1024 = 1064; byte-hops 15*65536 */
    CHECK_NEAR(collective_cost(CK_BROADCAST, &bi, 1, n).time_s, 1064, 1e-12,
               "broadcast bidirectional ring uses the diameter");
    CHECK_NEAR(collective_cost(CK_BROADCAST, &bi, 1, n).byte_hops, 983040, 1e-12,
               "broadcast byte-hops are (p-1)n");
    /* broadcast on a mesh line of 4: diameter 3: 15 + 1024 = 1039 */
    NetDim line = dim(4, TOPO_MESH, false);
    CHECK_NEAR(collective_cost(CK_BROADCAST, &line, 1, n).time_s, 1039, 1e-12,
               "broadcast mesh line uses the diameter");

    /* all-to-all on a bidirectional ring of 16: 15*5 + 16*65536/64/8 =
       75 + 2048 = 2123 */
    CHECK_NEAR(collective_cost(CK_ALLTOALL, &bi, 1, n).time_s, 2123, 1e-12,
               "alltoall bidirectional ring");

    /* one rank: nothing moves */
    NetDim one = dim(1, TOPO_RING, false);
    CHECK_NEAR_ABS(collective_cost(CK_ALLREDUCE, &one, 1, n).time_s, 0, 1e-12,
                   "a dim of one rank costs nothing");

    CHECK(net_diameter(&bi) == 8, "ring of 16 diameter 8");
    CHECK(net_diameter(&uni) == 15, "unidirectional ring of 16 diameter 15");
    CHECK(net_diameter(&line) == 3, "mesh line of 4 diameter 3");

    /* SCALE-Sim fold formula: M=64, K=128, N=64 on one 32x32 array:
       folds = ceil(128/32)*ceil(64/32) = 8; 8*(2*32 + 32 + 64 - 2) = 8*158
       = 1264 cycles; on 4 arrays ceil(8/4) = 2 folds each: 316 */
    CHECK_NEAR(systolic_cycles(64, 128, 64, 32, 32, 1), 1264, 1e-12,
               "systolic fold formula one array");
    CHECK_NEAR(systolic_cycles(64, 128, 64, 32, 32, 4), 316, 1e-12,
               "systolic fold formula four arrays");
    /* Channels (cost-model.md section 4): a switch of 4 ranks, 300 GB/s
       links, alpha 1 us, call 10 us, 24 channels of at least 256 KiB.
       A 1 MiB all-reduce uses min(24, max(1, 1048576 / 262144)) = 4 channels, so beta
       is 24/4 = 6 times 1/300e9 (50 GB/s): 10 us + 2 * (log2 4 = 2) * 1 us
       + 2 * 3/4 * 1048576 / 50e9 s = 10 + 4 + 31.45728 = 45.45728 us.
       A 1 GiB call fills all 24: 14 us + 1.5 * 1073741824 / 300e9 s =
       14 + 5368.70912 = 5382.70912 us.  Below channel_bytes one channel:
       8 B, beta x 24: 14 us + 1.5 * 8 / 12.5e9 s = 14.00096 us. */
    NetDim nv = {4, TOPO_SWITCH, false, 1e-6, 1.0 / 300e9, 0, 10e-6, 24, 262144, 1};
    CHECK_NEAR(channel_beta_scale(&nv, 1048576), 6, 1e-12, "1 MiB uses 4 of 24 channels");
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, &nv, 1, 1048576).time_s, 45.45728e-6, 1e-9,
               "1 MiB all-reduce over 4 channels is 45.45728 us");
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, &nv, 1, 1073741824).time_s, 5382.70912e-6, 1e-9,
               "1 GiB all-reduce fills the 24 channels: 5382.70912 us");
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, &nv, 1, 8).time_s, 14.00096e-6, 1e-9,
               "8 B all-reduce on one channel: 14.00096 us");
    /* the ramp is continuous: 384 KiB fills 1.5 channels, beta x 16 */
    CHECK_NEAR(channel_beta_scale(&nv, 393216), 16, 1e-12, "384 KiB uses 1.5 of 24 channels");
    /* Shared links (section 4): 4 ranks below each switch port (the SMs of
       a GPU) each all-reduce 256 KiB at once.  The port carries 4 x 256 KiB
       = 1 MiB: 4 channels, beta x 6, and x 4 for the sharers, 24 / 300e9
       in all: 10 + 4 + 2 * 3/4 * 262144 / 12.5e9 s = 10 + 4 + 31.45728 =
       45.45728 us, the time of one rank's 1 MiB call. */
    NetDim shared = nv;
    shared.sharers = 4;
    CHECK_NEAR(channel_beta_scale(&shared, 262144), 6, 1e-12, "4 x 256 KiB use 4 of 24 channels");
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, &shared, 1, 262144).time_s, 45.45728e-6, 1e-9,
               "4 sharers' 256 KiB all-reduces take 45.45728 us");
    NetDim single = nv;
    single.channels = 1;
    CHECK_NEAR(channel_beta_scale(&single, 8), 1, 0, "one channel: no ramp");

    return unit_finish();
}
