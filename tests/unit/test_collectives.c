/* test_collectives.c — the alpha-beta collective formulas against the
 * worked numbers of published.md section 3 and hand arithmetic from
 * docs/cost-model.md section 4.  Times are in cycles: alpha = 5 cycles,
 * beta = 1/64 cycle per byte (64 B/cycle links). */
#include "passes/passes.h"
#include "tests/unit/unit.h"

static NetDim dim(int64_t p, Topology t, bool uni) {
    NetDim d = {.p = p,
                .topology = t,
                .unidirectional = uni,
                .alpha_s = 5.0,
                .beta_s_per_byte = 1.0 / 64,
                .link_energy_j_per_byte = 1.0,
                .channels = 1,
                .sharers = 1};
    return d;
}

/* A dragonfly's dim of G groups of R chips, L global links a pair of
 * groups, every link 64 B/cycle; `sharers` chips of a group send their own
 * data across at once. */
static NetDim dragonfly_groups(int64_t groups, int64_t chips, double links, double sharers) {
    NetDim d = dim(groups, TOPO_DRAGONFLY, false);
    d.crosses_groups = true;
    d.group_chips = chips;
    d.group_sharers = sharers;
    d.global_links = links;
    d.global_beta_s_per_byte = 1.0 / 64;
    return d;
}

static NetDim dragonfly_chips(int64_t chips) {
    return dim(chips, TOPO_DRAGONFLY, false);
}

/* ------------------------------------------------ the DGX-1V link graph */

enum { GPUS = HYBRID_CUBE_MESH_GPUS };

static int most_rings(int links[GPUS][GPUS]);

/* The most edge-disjoint Hamiltonian rings the links hold, given the path
 * path[0..len) from GPU 0 that the first of them starts with: every way
 * to close it into a ring is tried, that ring's links taken out and the
 * rest searched again. */
static int extend_ring(int links[GPUS][GPUS], int *path, int len, bool *on_path) {
    int last = path[len - 1], best = 0;
    if (len == GPUS) {
        /* each ring once, not once per direction */
        if (links[last][0] == 0 || path[1] > path[GPUS - 1]) return 0;
        for (int i = 0; i < GPUS; i++) {
            int a = path[i], b = path[(i + 1) % GPUS];
            links[a][b]--, links[b][a]--;
        }
        best = 1 + most_rings(links);
        for (int i = 0; i < GPUS; i++) {
            int a = path[i], b = path[(i + 1) % GPUS];
            links[a][b]++, links[b][a]++;
        }
        return best;
    }
    for (int next = 0; next < GPUS; next++) {
        if (on_path[next] || links[last][next] == 0) continue;
        on_path[next] = true;
        path[len] = next;
        int rings = extend_ring(links, path, len + 1, on_path);
        if (rings > best) best = rings;
        on_path[next] = false;
    }
    return best;
}

static int most_rings(int links[GPUS][GPUS]) {
    int path[GPUS] = {0};
    bool on_path[GPUS] = {true};
    return extend_ring(links, path, 1, on_path);
}

/* Hops from GPU `from` to every GPU, breadth first. */
static void hops_from(int links[GPUS][GPUS], int from, int *hops) {
    int queue[GPUS], head = 0, tail = 0;
    for (int g = 0; g < GPUS; g++) hops[g] = -1;
    hops[from] = 0;
    queue[tail++] = from;
    while (head < tail) {
        int g = queue[head++];
        for (int next = 0; next < GPUS; next++)
            if (links[g][next] > 0 && hops[next] < 0) {
                hops[next] = hops[g] + 1;
                queue[tail++] = next;
            }
    }
}

/* The fewest links across a cut of the GPUs into two halves of four. */
static int thinnest_bisection(int links[GPUS][GPUS]) {
    int best = -1;
    for (int half = 0; half < (1 << GPUS); half++) {
        if (__builtin_popcount((unsigned)half) != GPUS / 2 || !(half & 1)) continue;
        int across = 0;
        for (int a = 0; a < GPUS; a++)
            for (int b = 0; b < GPUS; b++)
                if ((half >> a & 1) && !(half >> b & 1)) across += links[a][b];
        if (best < 0 || across < best) best = across;
    }
    return best;
}

/* The busiest link of an all-to-all in which every GPU sends one unit to
 * every other: linked pairs directly, the others over two hops, crossing
 * between the quads (GPU g's partner is g ^ 4) where the pair at one end
 * has more links (5/6 of the unit there, 1/6 at the other end; half each
 * when they have as many).  Units per link, parallel links sharing. */
static double busiest_alltoall_link(int links[GPUS][GPUS]) {
    double load[GPUS][GPUS] = {{0}};
    for (int from = 0; from < GPUS; from++)
        for (int to = 0; to < GPUS; to++) {
            if (from == to) continue;
            if (links[from][to] > 0) {
                load[from][to] += 1;
                continue;
            }
            int here = links[from][from ^ 4], there = links[to][to ^ 4];
            double cross_here = here > there ? 5.0 / 6 : here < there ? 1.0 / 6 : 0.5;
            load[from][from ^ 4] += cross_here, load[from ^ 4][to] += cross_here;
            load[from][to ^ 4] += 1 - cross_here, load[to ^ 4][to] += 1 - cross_here;
        }
    double busiest = 0;
    for (int a = 0; a < GPUS; a++)
        for (int b = 0; b < GPUS; b++)
            if (links[a][b] > 0 && load[a][b] / links[a][b] > busiest)
                busiest = load[a][b] / links[a][b];
    return busiest;
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
    NetDim nv = {.p = 4,
                 .topology = TOPO_SWITCH,
                 .alpha_s = 1e-6,
                 .beta_s_per_byte = 1.0 / 300e9,
                 .call_s = 10e-6,
                 .channels = 24,
                 .channel_bytes = 262144,
                 .sharers = 1};
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
    /* channel_growth 0.5 (the square-root ramp): channels used =
       min(24, max(1, sqrt(n / 256 KiB))).  1 MiB: sqrt(4) = 2, beta x 12
       (25 GB/s): 14 + 1.5 * 1048576 / 25e9 s = 14 + 62.91456 = 76.91456
       us.  64 MiB: sqrt(256) = 16, beta x 1.5: 14 + 1.5 * 67108864 * 1.5
       / 300e9 s = 14 + 503.31648 = 517.31648 us.  144 MiB = 576 x 256
       KiB: sqrt(576) = 24, every channel. */
    NetDim root = nv;
    root.channel_growth = 0.5;
    CHECK_NEAR(channel_beta_scale(&root, 1048576), 12, 1e-12, "sqrt ramp: 1 MiB uses 2 of 24");
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, &root, 1, 1048576).time_s, 76.91456e-6, 1e-9,
               "sqrt ramp: 1 MiB all-reduce 76.91456 us");
    CHECK_NEAR(collective_cost(CK_ALLREDUCE, &root, 1, 67108864).time_s, 517.31648e-6, 1e-9,
               "sqrt ramp: 64 MiB all-reduce 517.31648 us");
    CHECK_NEAR(channel_beta_scale(&root, 150994944), 1, 1e-12, "sqrt ramp: 144 MiB fills all 24");
    NetDim single = nv;
    single.channels = 1;
    CHECK_NEAR(channel_beta_scale(&single, 8), 1, 0, "one channel: no ramp");

    /* ---- hybrid_cube_mesh: the link graph behind its numbers ---- */
    int links[GPUS][GPUS];
    memcpy(links, hybrid_cube_mesh_links, sizeof links);
    bool shape = true;
    for (int a = 0; a < GPUS; a++) {
        int ports = 0;
        for (int b = 0; b < GPUS; b++) {
            ports += links[a][b];
            bool same_quad = a / 4 == b / 4, partners = (a ^ 4) == b;
            shape = shape && links[a][b] == links[b][a] &&
                    (a == b ? links[a][b] == 0
                            : (links[a][b] > 0) == (same_quad || partners) && links[a][b] <= 2);
        }
        shape = shape && ports == 6;
    }
    CHECK(shape, "DGX-1V: quads 0-3 and 4-7 fully linked, i to i+4, six NVLinks a GPU");
    CHECK(most_rings(links) == HYBRID_CUBE_MESH_RINGS,
          "DGX-1V: its 24 links form 3 edge-disjoint Hamiltonian rings");
    int one_link[GPUS][GPUS];
    for (int a = 0; a < GPUS; a++)
        for (int b = 0; b < GPUS; b++) one_link[a][b] = links[a][b] > 0;
    CHECK(most_rings(one_link) == 2, "DGX-1P (one link a pair, four a GPU): 2 rings");
    int farthest = 0, hop_sum = 0;
    for (int a = 0; a < GPUS; a++) {
        int hops[GPUS];
        hops_from(links, a, hops);
        for (int b = 0; b < GPUS; b++) {
            if (hops[b] > farthest) farthest = hops[b];
            hop_sum += hops[b];
        }
    }
    CHECK(farthest == HYBRID_CUBE_MESH_DIAMETER, "DGX-1V: every GPU within 2 hops");
    CHECK(hop_sum == GPUS * (4 * 1 + 3 * 2),
          "DGX-1V: each GPU has 4 neighbours and 3 GPUs 2 hops away");
    CHECK(thinnest_bisection(links) == HYBRID_CUBE_MESH_BISECTION_LINKS,
          "DGX-1V: the thinnest cut into halves of 4 is the quads' 6 links");
    /* p n / 4 bytes cross the quads each way over 6 links: 8 n/4/6 = n/3 a
       link, i.e. 8/3 units of n/8; the routing above reaches it */
    CHECK_EXACT(busiest_alltoall_link(links), 8.0 / 3,
                "DGX-1V all-to-all: two-hop routing loads no link past the bisection's n/3");

    /* hybrid cube mesh of 8, alpha 5 cycles, 64 B/cycle links, n = 48 KiB
       (n beta = 49152 / 64 = 768 cycles); 3 rings run both ways: 6 parts.
       reduce-scatter 7*5 + 7/8 * 768/6 = 35 + 112 = 147 cycles */
    NetDim hcm = dim(8, TOPO_HYBRID_CUBE_MESH, false);
    double kib48 = 48 * 1024;
    CHECK_EXACT(collective_cost(CK_REDUCE_SCATTER, &hcm, 1, kib48).time_s,
                7 * 5 + 7.0 / 8 * 768 / 6,
                "hybrid cube mesh reduce-scatter: 147 cycles over 6 one-way rings");
    CHECK_EXACT(collective_cost(CK_ALLGATHER, &hcm, 1, kib48).time_s, 147,
                "hybrid cube mesh all-gather: 147 cycles");
    CHECK_EXACT(collective_cost(CK_ALLREDUCE, &hcm, 1, kib48).time_s, 2 * 147,
                "hybrid cube mesh all-reduce: 294 cycles");
    /* broadcast: the rings 7*5 + 768/6 = 163 against the tree 2*5 + 768 =
       778; a 64 B message: the tree 2*5 + 1 = 11 against 35 + 1/6 */
    CHECK_EXACT(collective_cost(CK_BROADCAST, &hcm, 1, kib48).time_s, 7 * 5 + 768.0 / 6,
                "hybrid cube mesh broadcast of 48 KiB: the six rings, 163 cycles");
    CHECK_EXACT(collective_cost(CK_BROADCAST, &hcm, 1, 64).time_s, 2 * 5 + 64.0 / 64,
                "hybrid cube mesh broadcast of 64 B: the two-hop tree, 11 cycles");
    /* all-to-all: 2*5 + (8 * 49152 / 4) B / 6 links / 64 = 10 + 256 = 266 */
    CHECK_EXACT(collective_cost(CK_ALLTOALL, &hcm, 1, kib48).time_s, 2 * 5 + 8 * kib48 / 4 / 6 / 64,
                "hybrid cube mesh all-to-all: 266 cycles over the bisection");
    /* byte-hops: (p-1) n times the mean distance 10/7 = 7 * 49152 * 10/7 */
    CHECK_EXACT(collective_cost(CK_ALLTOALL, &hcm, 1, kib48).byte_hops, 491520,
                "hybrid cube mesh all-to-all byte-hops: pairs not linked take 2 hops");
    CHECK(net_diameter(&hcm) == 2, "hybrid cube mesh diameter 2");
    /* The worked example of docs/cost-model.md: 25 GB/s NVLinks, 1 us
       hops, 6 MB: reduce-scatter 7 us + 7/8 * 6e6 / (6 * 25e9) s = 7 + 35
       = 42 us; all-reduce 84 us; broadcast 7 + 6e6 / 6 / 25e9 = 7 + 40 =
       47 us; all-to-all 2 + 8 * 6e6 / 4 / 6 / 25e9 = 2 + 80 = 82 us */
    NetDim dgx1 = {.p = 8,
                   .topology = TOPO_HYBRID_CUBE_MESH,
                   .alpha_s = 1e-6,
                   .beta_s_per_byte = 1 / 25e9,
                   .channels = 1,
                   .sharers = 1};
    CHECK_EXACT(collective_cost(CK_REDUCE_SCATTER, &dgx1, 1, 6e6).time_s, 42e-6,
                "DGX-1V reduce-scatter of 6 MB: 42 us");
    CHECK_EXACT(collective_cost(CK_ALLREDUCE, &dgx1, 1, 6e6).time_s, 84e-6,
                "DGX-1V all-reduce of 6 MB: 84 us");
    CHECK_EXACT(collective_cost(CK_BROADCAST, &dgx1, 1, 6e6).time_s, 47e-6,
                "DGX-1V broadcast of 6 MB: 47 us");
    CHECK_EXACT(collective_cost(CK_ALLTOALL, &dgx1, 1, 6e6).time_s, 82e-6,
                "DGX-1V all-to-all of 6 MB: 82 us");

    /* ---- dragonfly: 4 groups of 4 chips, alpha 5, 64 B/cycle links ---- */
    /* along the chips of a group, a full mesh of 4: 2*(5 + 65536/4/64) = 522 */
    NetDim chips4 = dragonfly_chips(4);
    CHECK_EXACT(collective_cost(CK_ALLREDUCE, &chips4, 1, n).time_s, 2 * (5 + 65536.0 / 4 / 64),
                "dragonfly inside a group: all-reduce as a full mesh of 4, 522 cycles");
    /* across the groups, the 4 chips of each sending their own data over
       one global link a pair: 3 hops (local, global, local); the busiest
       router holds ceil(3*1/4) = 1 global link, so the global links set
       the pace: reduce-scatter 3*5 + (65536/4)/1 * max(4/64, 1/64) = 15 +
       1024 = 1039; all-reduce 2078 */
    NetDim groups4 = dragonfly_groups(4, 4, 1, 4);
    CHECK_EXACT(collective_cost(CK_REDUCE_SCATTER, &groups4, 1, n).time_s,
                3 * 5 + 65536.0 / 4 / 1 * 4 / 64,
                "dragonfly across groups: 4 chips share each global link, 1039 cycles");
    CHECK_EXACT(collective_cost(CK_ALLREDUCE, &groups4, 1, n).time_s, 2 * 1039,
                "dragonfly all-reduce across groups: 2078 cycles");
    CHECK_EXACT(collective_cost(CK_ALLTOALL, &groups4, 1, n).time_s, 1039,
                "dragonfly all-to-all across groups: n/4 to each group, 1039 cycles");
    /* one chip of each group with its own data: 15 + 16384/64 = 271 */
    NetDim groups4_one = dragonfly_groups(4, 4, 1, 1);
    CHECK_EXACT(collective_cost(CK_REDUCE_SCATTER, &groups4_one, 1, n).time_s,
                3 * 5 + 65536.0 / 4 / 64,
                "dragonfly across groups, one sender a group: 271 cycles");
    /* byte-hops: (p-1) n times the mean route 1 + 2*3/4 = 2.5 hops */
    CHECK_EXACT(collective_cost(CK_REDUCE_SCATTER, &groups4, 1, n).byte_hops, 3 * 65536 * 2.5,
                "dragonfly byte-hops count the local hops at both ends");
    /* over both dims (given groups first, as the arch orders them): inside
       the groups first, RS 5 + 65536/4/64 = 261; then across on 16384 B,
       every chip with its own share (the sharers given are overridden):
       2*(15 + 16384/4 * 4/64) = 2*(15 + 256) = 542; AG inside 261: 1064.
       Across first would be 1039 + 2*(5 + 4096/64) + 1039 = 2216. */
    NetDim both[2] = {dragonfly_groups(4, 4, 1, 1), dragonfly_chips(4)};
    CHECK_EXACT(collective_cost(CK_ALLREDUCE, both, 2, n).time_s, 261 + 542 + 261,
                "dragonfly all-reduce over both dims: inside the groups first, 1064 cycles");
    /* two global links a pair: the busiest router holds ceil(3*2/4) = 2,
       still under the 4 sharers: across 2*(15 + 16384/4/2 * 4/64) = 286;
       261 + 286 + 261 = 808 */
    NetDim both_l2[2] = {dragonfly_groups(4, 4, 2, 1), dragonfly_chips(4)};
    CHECK_EXACT(collective_cost(CK_ALLREDUCE, both_l2, 2, n).time_s, 261 + 286 + 261,
                "dragonfly all-reduce with 2 global links a pair: 808 cycles");
    /* broadcast over both: the root's data crosses once to each group
       (15 + 65536/64 = 1039), then spreads inside (5 + 1024 = 1029) */
    CHECK_EXACT(collective_cost(CK_BROADCAST, both, 2, n).time_s, 1039 + 1029,
                "dragonfly broadcast over both dims: 2068 cycles");
    /* broadcast across groups with 4 roots a group: 15 + 65536 * 4/64 */
    CHECK_EXACT(collective_cost(CK_BROADCAST, &groups4, 1, n).time_s, 15 + 4096,
                "dragonfly broadcast across groups, 4 chips a group: 4111 cycles");
    /* many groups of few chips: 8 groups of 2, one link a pair; a router
       holds ceil(7*1/2) = 4 global links, each taking n/8 from the other
       chip over one local link: local 4/64 beats global 2/64:
       15 + 65536/8 * 4/64 = 15 + 512 = 527 */
    NetDim groups8 = dragonfly_groups(8, 2, 1, 2);
    CHECK_EXACT(collective_cost(CK_REDUCE_SCATTER, &groups8, 1, n).time_s, 15 + 512,
                "dragonfly of 8 groups of 2: the local links set the pace, 527 cycles");
    /* global links half as fast as local ones (32 B/cycle):
       15 + 16384 * max(4/32, 1/64) = 15 + 2048 = 2063 */
    NetDim slow_global = dragonfly_groups(4, 4, 1, 4);
    slow_global.global_beta_s_per_byte = 1.0 / 32;
    CHECK_EXACT(collective_cost(CK_REDUCE_SCATTER, &slow_global, 1, n).time_s, 15 + 2048,
                "dragonfly with slower global links: 2063 cycles");
    /* groups of one chip: one hop, no local links: a full mesh of 4 */
    NetDim lone = dragonfly_groups(4, 1, 1, 1);
    NetDim full4 = dim(4, TOPO_FULL, false);
    CHECK_EXACT(collective_cost(CK_ALLREDUCE, &lone, 1, n).time_s,
                collective_cost(CK_ALLREDUCE, &full4, 1, n).time_s,
                "dragonfly of one-chip groups costs what a full mesh does (522 cycles)");
    CHECK(net_diameter(&groups4) == 3 && net_diameter(&chips4) == 1 && net_diameter(&lone) == 1,
          "dragonfly diameters: 3 hops across groups, 1 inside, 1 with one-chip groups");
    /* a pipeline's send to the next group, the 4 chips of a group at once:
       15 + 65536 * max(4/64, ceil(1/4)/64) = 15 + 4096 = 4111 */
    CHECK_EXACT(send_cost(&groups4, n).time_s, 15 + 4096,
                "dragonfly send to the next group: 4111 cycles");
    /* net_dim reads the roles from the arch: the cluster's first dim
       crosses the groups, the second's size is R; global links default to
       the link bandwidth */
    IrCluster fly_cluster = {.first_dim = 0,
                             .dim_count = 2,
                             .link_bandwidth = 64,
                             .global_links = 3,
                             .global_bandwidth = 32};
    IrClusterDim fly_dims[2] = {{.size = 9, .topology = TOPO_DRAGONFLY},
                                {.id = 1, .size = 4, .topology = TOPO_DRAGONFLY}};
    IrArch fly = {.clusters = &fly_cluster, .cluster_count = 1, .dims = fly_dims, .dim_count = 2};
    NetDim across = net_dim(&fly, 0), inside = net_dim(&fly, 1);
    CHECK(across.crosses_groups && !inside.crosses_groups && across.group_chips == 4 &&
              across.group_sharers == 4 && across.global_links == 3,
          "net_dim: the first dim crosses the groups, R = 4 chips share 3 links a pair");
    CHECK_EXACT(across.global_beta_s_per_byte, 1.0 / 32,
                "net_dim: global beta from global_bandwidth");
    fly_cluster.global_bandwidth = 0;
    CHECK_EXACT(net_dim(&fly, 0).global_beta_s_per_byte, 1.0 / 64,
                "net_dim: global links as fast as local ones unless given");

    /* The worked example of docs/cost-model.md (std.arch.dragonfly_sn10):
       9 groups of 4 SN10 chips, 50 GB/s links, one global link a pair,
       1 us hops, 36 MB all-reduced over both dims: inside 1 us + 36e6/4 /
       50e9 s = 181 us; across on 9e6 B, ceil(8/4) = 2 global links on the
       busiest router, under the 4 sharers: 2*(3 + 9e6/9 * 4/50e9 s) =
       2*(3 + 80) = 166 us; back inside 181 us: 528 us */
    NetDim sn10_groups = {.p = 9,
                          .topology = TOPO_DRAGONFLY,
                          .alpha_s = 1e-6,
                          .beta_s_per_byte = 1 / 50e9,
                          .channels = 1,
                          .sharers = 1,
                          .crosses_groups = true,
                          .group_chips = 4,
                          .group_sharers = 4,
                          .global_links = 1,
                          .global_beta_s_per_byte = 1 / 50e9};
    NetDim sn10[2] = {sn10_groups, sn10_groups};
    sn10[1].p = 4;
    sn10[1].crosses_groups = false;
    CHECK_EXACT(collective_cost(CK_ALLREDUCE, sn10, 2, 36e6).time_s, 528e-6,
                "dragonfly of 36 SN10 chips: all-reduce of 36 MB in 528 us");

    return unit_finish();
}
