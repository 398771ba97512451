// Collective costs against their α–β hand derivations and nccl-tests' bus-bandwidth factors.
#include <gtest/gtest.h>

#include <cmath>

#include "core/topology.h"
#include "simulator/comm_cost.h"
#include "test_clusters.h"

using namespace tessel;

TEST(Collectives, BusBandwidthFactorsAreNcclTests) {
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_reduce, 8), 2.0 * 7 / 8);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_gather, 8), 7.0 / 8);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::reduce_scatter, 4), 3.0 / 4);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::all_to_all, 16), 15.0 / 16);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::send_recv, 2), 1.0);
    // S for the gathering collectives is the whole buffer: count x size x n.
    EXPECT_DOUBLE_EQ(algbw_bytes(Collective::all_gather, 1000, 2, 8), 16000);
    EXPECT_DOUBLE_EQ(algbw_bytes(Collective::all_reduce, 1000, 2, 8), 2000);
    // 1 GB all-reduced in 10 ms over 8 ranks: algbw 100 GB/s, busbw 175 GB/s.
    EXPECT_NEAR(bus_bandwidth(Collective::all_reduce, 8, 1e9, 0.01), 175e9, 1e-3);
}

// Eight ranks at 200 GB/s, 5 us a hop and 10 us a call: the group the hand derivations below use.
namespace {
CommGroup ring_of_eight() {
    CommGroup g;
    g.size = 8;
    g.bandwidth_Bps = 200e9;
    g.hop_latency_s = 5e-6;
    g.call_latency_s = 10e-6;
    return g;
}
}  // namespace

TEST(Collectives, RingAllReduceIsTwoNMinusOneOverN) {
    const CommGroup g = ring_of_eight();
    const double B = 256e6;
    // 2(n-1) steps of B/n bytes each, every step paying one hop's latency.
    const double expected = 2.0 * 7 / 8 * B / 200e9 + 2 * 7 * 5e-6 + 10e-6;
    EXPECT_NEAR(ring_all_reduce_time(B, g), expected, 1e-12);
    EXPECT_NEAR(collective_time(Collective::all_reduce, B, g), expected, 1e-12);
    // All-gather and reduce-scatter: half the steps.
    EXPECT_NEAR(collective_time(Collective::all_gather, B, g), 7.0 / 8 * B / 200e9 + 7 * 5e-6 + 10e-6, 1e-12);
    EXPECT_NEAR(collective_time(Collective::send_recv, B, g), B / 200e9 + 5e-6 + 10e-6, 1e-12);
}

TEST(Collectives, GroupInsideANodeRunsOnNvlink) {
    const ClusterSpec c = test::simple_node(300, 3);
    const Topology topo(c);
    const HardwareEfficiency e = hardware_efficiency(c);
    const CommGroup g = make_comm_group(topo, {0, 1, 2, 3, 4, 5, 6, 7}, e);
    EXPECT_EQ(g.num_nodes, 1);
    EXPECT_NEAR(g.bandwidth_Bps, 300e9, 1e3);
    const double B = 1e9;
    EXPECT_NEAR(collective_time(Collective::all_reduce, B, g), 2.0 * 7 / 8 * B / 300e9 + 2 * 7 * g.hop_latency_s, 1e-9);
    // Across two nodes a pair of GPUs is bound by its NIC (25 GB/s), far below NVLink.
    const CommGroup cross = make_comm_group(topo, {0, 8}, e);
    EXPECT_EQ(cross.num_nodes, 2);
    EXPECT_LE(cross.bandwidth_Bps, 25e9 + 1);
}

TEST(Collectives, TreeBeatsTheRingOnlyForSmallMessagesAcrossManyNodes) {
    CommGroup g;
    g.size = 512;
    g.bandwidth_Bps = 100e9;
    g.hop_latency_s = 5e-6;
    g.num_nodes = 64;
    g.members_per_node = 8;
    // Small message: the ring's 2(n-1) latency steps dominate, the tree's depth does not.
    EXPECT_LT(tree_all_reduce_time(1e5, g), ring_all_reduce_time(1e5, g));
    EXPECT_LT(collective_time(Collective::all_reduce, 1e5, g), ring_all_reduce_time(1e5, g));
    // Large message: bandwidth terms are comparable; the collective never costs more than either.
    EXPECT_LE(collective_time(Collective::all_reduce, 1e10, g), ring_all_reduce_time(1e10, g));

    // Hand values. NCCL's double binary tree (Sanders, Speck and Traeff 2009, "Two-tree algorithms
    // for full bandwidth broadcast, reduction and scan"; NVIDIA, "Massively Scale Your Deep Learning
    // Training with NCCL 2.4", 2019) spans the nodes with a binary tree, ceil(log2 nodes) deep, and
    // chains the ranks inside each node: depth = ceil(log2 64) + (8 - 1) = 6 + 7 = 13 hops, each
    // passed once on the way up (reduce) and once down (broadcast); every rank moves about 2S.
    //   tree = 2 S / bw + 2 x 13 x hop          = 2e5 / 1e11 + 26 x 5e-6 = 2e-6 + 1.30e-4 = 1.32e-4 s
    //   ring = 2 (511/512) S / bw + 2 x 511 hop = 1.99609e-6 + 5.11e-3              = 5.11200e-3 s
    // (no call latency: the group's call_latency_s is 0).
    const double tree_hand = 2.0 * 1e5 / 100e9 + 2.0 * 13 * 5e-6;
    const double ring_hand = 2.0 * 511 / 512 * 1e5 / 100e9 + 2.0 * 511 * 5e-6;
    EXPECT_NEAR(tree_hand, 1.32e-4, 1e-12);
    EXPECT_NEAR(tree_all_reduce_time(1e5, g), tree_hand, 1e-15);
    EXPECT_NEAR(ring_all_reduce_time(1e5, g), ring_hand, 1e-15);
    EXPECT_NEAR(collective_time(Collective::all_reduce, 1e5, g), tree_hand, 1e-15);  // the faster
    // The ring wins only where its bandwidth saving 2 S / bw x (1/512) passes the latency it loses,
    // (1022 - 26) x 5 us = 4.98 ms: S > 4.98e-3 x 512 x 1e11 / 2 = 1.27e11 B. At S = 1e13:
    //   ring = 2 (511/512) x 100 + 5.11e-3 = 199.61447 s; tree = 200 + 1.3e-4 = 200.00013 s.
    const double big = 1e13;
    const double ring_big = 2.0 * 511 / 512 * big / 100e9 + 2.0 * 511 * 5e-6;
    const double tree_big = 2.0 * big / 100e9 + 2.0 * 13 * 5e-6;
    EXPECT_LT(ring_big, tree_big);
    EXPECT_NEAR(collective_time(Collective::all_reduce, big, g), ring_big, 1e-9);
    // And at 1e10 B, below that crossover, the tree: 0.2 + 1.3e-4 s.
    EXPECT_NEAR(collective_time(Collective::all_reduce, 1e10, g), 2.0 * 1e10 / 100e9 + 2.0 * 13 * 5e-6, 1e-12);
    // Inside one node the tree is not considered (NCCL's tree pays off across nodes): the ring.
    CommGroup one = g;
    one.size = 8;
    one.num_nodes = 1;
    EXPECT_NEAR(collective_time(Collective::all_reduce, 1e5, one), 2.0 * 7 / 8 * 1e5 / 100e9 + 2.0 * 7 * 5e-6, 1e-15);
}

TEST(Collectives, ReduceScatterAndAllToAllAreHalfARing) {
    // Reduce-scatter: each rank ends with one reduced S/n shard after n - 1 ring steps, each moving
    // S/n and paying one hop; all-to-all moves the (n-1)/n of S each rank sends elsewhere, over the
    // same n - 1 steps (nccl-tests' busbw factor (n-1)/n for both). Plus one call latency.
    //   n = 8, bw 200 GB/s, hop 5 us, call 10 us, S = 256 MB:
    //   (7/8) x 2.56e8 / 2e11 + 7 x 5e-6 + 1e-5 = 1.12e-3 + 3.5e-5 + 1e-5 = 1.165e-3 s
    const CommGroup g = ring_of_eight();
    const double B = 256e6;
    EXPECT_NEAR(collective_time(Collective::reduce_scatter, B, g), 1.165e-3, 1e-12);
    EXPECT_NEAR(collective_time(Collective::all_to_all, B, g), 1.165e-3, 1e-12);
    // Over 64 nodes x 8 (n = 512; the tree applies to all-reduce only):
    //   (511/512) x 1e5 / 1e11 + 511 x 5e-6 = 9.98047e-7 + 2.555e-3 s, no call latency.
    CommGroup wide;
    wide.size = 512;
    wide.bandwidth_Bps = 100e9;
    wide.hop_latency_s = 5e-6;
    wide.num_nodes = 64;
    wide.members_per_node = 8;
    const double wide_hand = 511.0 / 512 * 1e5 / 100e9 + 511 * 5e-6;
    EXPECT_NEAR(collective_time(Collective::reduce_scatter, 1e5, wide), wide_hand, 1e-15);
    EXPECT_NEAR(collective_time(Collective::all_to_all, 1e5, wide), wide_hand, 1e-15);
    // One rank: nothing to exchange.
    CommGroup alone;
    alone.size = 1;
    alone.bandwidth_Bps = 100e9;
    EXPECT_EQ(collective_time(Collective::reduce_scatter, 1e5, alone), 0.0);
    EXPECT_EQ(collective_time(Collective::all_to_all, 1e5, alone), 0.0);
}

TEST(Collectives, PipelineSendsOfAStageShareTheirNodesNics) {
    const double B = 100e6;
    for (int nics : {8, 4, 2}) {
        const ClusterSpec c = test::simple_node(300, 0, nics);
        const Topology topo(c);
        const HardwareEfficiency e = hardware_efficiency(c);
        // tp8 pp2: each node is one stage, and all 8 GPUs send at once; 8 / nics of them share a NIC.
        const ParallelSizes whole{8, 1, 1, 2};
        const CommGroup g = make_stage_p2p_link(topo, 3, 11, "tp-cp-dp-pp", whole, e);
        EXPECT_NEAR(g.bandwidth_Bps, 25e9 * nics / 8.0, 1e3) << nics << " NICs";
        EXPECT_NEAR(collective_time(Collective::send_recv, B, g), B / (25e9 * nics / 8.0) + 5e-6, 1e-9);  // + one IB hop
        // tp2 pp8: four stages a node, and only stage 3 (GPUs 6 and 7) sends across; they share a
        // NIC where the wiring gives them the same one.
        const ParallelSizes narrow{2, 1, 1, 8};
        const CommGroup across = make_stage_p2p_link(topo, 6, 8, "tp-cp-dp-pp", narrow, e);
        const bool shared = (6 * nics) / 8 == (7 * nics) / 8;
        EXPECT_NEAR(across.bandwidth_Bps, shared ? 12.5e9 : 25e9, 1e3) << nics << " NICs";
        // A send inside the node runs on NVLink, shared by no one.
        EXPECT_NEAR(make_stage_p2p_link(topo, 0, 2, "tp-cp-dp-pp", narrow, e).bandwidth_Bps, 300e9, 1e3);
    }
}

TEST(Collectives, ContextParallelRingsAcrossNodesShareTheirNics) {
    // tp8 cp2 over two nodes of 8 GPUs and 2 NICs: every GPU's ring hop leaves its node at once,
    // four GPUs through each NIC.
    const ClusterSpec c = test::simple_node(300, 0, 2);
    const Topology topo(c);
    const HardwareEfficiency e = hardware_efficiency(c);
    const ParallelSizes sizes{8, 2, 1, 1};
    EXPECT_NEAR(make_ring_link(topo, {0, 8}, "tp-cp-dp-pp", sizes, e).bandwidth_Bps, 25e9 / 4, 1e3);
    // The planner's bound takes the hop alone on its NIC.
    EXPECT_NEAR(make_ring_link(topo, {0, 8}, e).bandwidth_Bps, 25e9, 1e3);
    // cp2 tp4 dp2: ranks 0-3 and 4-7 are the two dp replicas' first cp halves; every rank still
    // sends across (rank r to r + 8), so the sharing is the same.
    EXPECT_NEAR(make_ring_link(topo, {0, 8}, "tp-dp-cp-pp", ParallelSizes{4, 2, 2, 1}, e).bandwidth_Bps, 25e9 / 4, 1e3);
    // cp4 inside a node pairs (tp2, order tp-cp-dp-pp): ranks 0,2,4,6 form one ring, all on NVLink.
    EXPECT_NEAR(make_ring_link(topo, {0, 2, 4, 6}, "tp-cp-dp-pp", ParallelSizes{2, 4, 2, 1}, e).bandwidth_Bps, 300e9, 1e3);
}

namespace {
// simple_node (8 GPUs a node, NVLink 300 GB/s, 3 us a hop, NCCL at the full link, no call
// latency) with a measured collective table in its profile, written in the JSON format of
// simulator/hardware_efficiency.h: busbw in GB/s (1e9 B/s) at S bytes.
ClusterSpec node_with_collective_table() {
    ClusterSpec c = test::simple_node(300, 3);
    json profile = *c.profile;
    profile["collective_table"] = json::array({
        {{"collective", "all_reduce"}, {"bytes", 1 << 20}, {"busbw_GBps", 10}},
        {{"collective", "all_reduce"}, {"bytes", 1 << 22}, {"busbw_GBps", 20}},
        {{"collective", "send_recv"}, {"bytes", 1 << 20}, {"busbw_GBps", 5}},
    });
    c.profile = profile;
    return c;
}
}  // namespace

TEST(Collectives, MeasuredTableGivesBusFactorTimesSOverTheInterpolatedBusbw) {
    // The documented rule (hardware_efficiency.h, table_bus_bandwidth): a group inside one node
    // takes t = busbw-factor x S / busbw(S), with busbw linear in log S between the measured sizes
    // (log busbw linear in log2 S, hardware_efficiency.cpp) and the nearest
    // size's value beyond them; no alpha-beta latency is added.
    const ClusterSpec c = node_with_collective_table();
    const Topology topo(c);
    const HardwareEfficiency e = hardware_efficiency(c);
    ASSERT_TRUE(e.collective_table);
    const CommGroup g = make_comm_group(topo, {0, 1, 2, 3}, e);
    ASSERT_EQ(g.num_nodes, 1);
    const double f = 2.0 * 3 / 4;  // all-reduce over n = 4: 2(n-1)/n
    // At the table points: 1 MiB at 10 GB/s, 4 MiB at 20 GB/s.
    EXPECT_NEAR(table_bus_bandwidth(*e.collective_table, Collective::all_reduce, 1 << 20), 10e9, 1e-3);
    EXPECT_NEAR(collective_time(Collective::all_reduce, 1 << 20, g), f * 1048576 / 10e9, 1e-15);
    EXPECT_NEAR(collective_time(Collective::all_reduce, 1 << 22, g), f * 4194304 / 20e9, 1e-15);
    // Between them, 2 MiB is half way in log2 S (21 between 20 and 22): log busbw half way,
    // busbw = sqrt(10 x 20) GB/s = 14.142 GB/s.
    const double mid_busbw = std::sqrt(10e9 * 20e9);
    EXPECT_NEAR(table_bus_bandwidth(*e.collective_table, Collective::all_reduce, 1 << 21), mid_busbw, 1e-3);
    EXPECT_NEAR(collective_time(Collective::all_reduce, 1 << 21, g), f * 2097152 / mid_busbw, 1e-15);
    // A quarter of the way, 2^20.5 B: busbw = 10^(3/4) x 20^(1/4) GB/s.
    const double quarter = std::pow(2.0, 20.5);
    const double quarter_busbw = std::pow(10e9, 0.75) * std::pow(20e9, 0.25);
    EXPECT_NEAR(collective_time(Collective::all_reduce, quarter, g), f * quarter / quarter_busbw, 1e-15);
    // Beyond the table: the nearest size's busbw.
    EXPECT_NEAR(collective_time(Collective::all_reduce, 1e3, g), f * 1e3 / 10e9, 1e-15);
    EXPECT_NEAR(collective_time(Collective::all_reduce, 1e9, g), f * 1e9 / 20e9, 1e-12);
    // A point-to-point send inside the node uses its own row, factor 1: 1 MiB at 5 GB/s.
    const CommGroup pair = make_p2p_link(topo, 0, 1, e);
    EXPECT_NEAR(collective_time(Collective::send_recv, 1 << 20, pair), 1048576 / 5e9, 1e-15);
    // A collective the table does not list keeps the alpha-beta model: all-gather over 4 ranks at
    // 300 GB/s, (n-1)/n x S / bw + (n-1) hops of 3 us.
    EXPECT_NEAR(collective_time(Collective::all_gather, 1 << 20, g), 0.75 * 1048576 / 300e9 + 3 * 3e-6, 1e-15);
    // A group across nodes ignores the table (it was measured inside one node): alpha-beta over
    // the 25 GB/s NIC, ring 2(n-1)/n x S / bw + 2(n-1) hops of the 5 us IB latency.
    const CommGroup cross = make_comm_group(topo, {0, 8}, e);
    ASSERT_EQ(cross.num_nodes, 2);
    EXPECT_NEAR(collective_time(Collective::all_reduce, 1 << 20, cross), 1.0 * 1048576 / 25e9 + 2 * 5e-6, 1e-12);
}

TEST(Collectives, MeasuredTableSurvivesTheProfileRoundTrip) {
    const ClusterSpec c = node_with_collective_table();
    ClusterSpec again = c;
    again.profile = to_profile_json(hardware_efficiency(c));
    const HardwareEfficiency e = hardware_efficiency(again);
    ASSERT_TRUE(e.collective_table);
    ASSERT_EQ(e.collective_table->size(), 3u);
    // Same hand value as above: 2 MiB half way in log S between 10 and 20 GB/s.
    EXPECT_NEAR(table_bus_bandwidth(*e.collective_table, Collective::all_reduce, 1 << 21), std::sqrt(10e9 * 20e9), 1e-3);
    // No such collective in the table: 0, which tells collective_time to use the alpha-beta model.
    EXPECT_EQ(table_bus_bandwidth(*e.collective_table, Collective::all_to_all, 1 << 21), 0.0);
}
