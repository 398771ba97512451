// Cluster parsing and the topology graph's answers, derived by hand from the datasheet figures.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/presets.h"
#include "core/rank_groups.h"
#include "core/topology.h"

using namespace tessel;

TEST(Cluster, PresetsParse) {
    for (const auto& name : preset_names("clusters")) {
        SCOPED_TRACE(name);
        auto c = load_cluster(name);
        EXPECT_GT(c.num_gpus(), 0);
        EXPECT_GT(c.gpu.peak(Precision::bf16) + c.gpu.peak(Precision::fp32), 0);
    }
}

TEST(Cluster, ResizeWholeNodes) {
    auto c = load_cluster("dgx-a100");
    EXPECT_EQ(resize_cluster(c, 384).num_nodes, 48);
    EXPECT_EQ(resize_cluster(c, 4).gpus_per_node, 4);
    EXPECT_THROW(resize_cluster(c, 12), InputError);
    EXPECT_THROW(resize_cluster(c, -8), InputError);
}

TEST(Cluster, TakingPartOfEachNodeKeepsOneNicPerGpu) {
    // 64 of a GB200 NVL72 rack's 72 GPUs: two racks are 128 GPUs, each GPU keeps its own NIC.
    auto nvl = with_gpus_per_node(load_cluster("gb200-nvl72"), 64);
    EXPECT_EQ(nvl.gpus_per_node, 64);
    EXPECT_EQ(nvl.inter_node.nics_per_node, 64);
    EXPECT_EQ(resize_cluster(nvl, 128).num_nodes, 2);
    // Half of each DGX H100: one NIC per GPU taken, so a node's injection bandwidth halves.
    auto half = with_gpus_per_node(load_cluster("dgx-h100"), 4);
    EXPECT_EQ(half.inter_node.nics_per_node, 4);
    EXPECT_EQ(resize_cluster(half, 8).num_nodes, 2);
    // A PCIe server's two NICs serve whichever GPUs the job takes.
    auto pcie = with_gpus_per_node(load_cluster("pcie-a100"), 4);
    EXPECT_EQ(pcie.inter_node.nics_per_node, 2);
    EXPECT_THROW(with_gpus_per_node(load_cluster("dgx-h100"), 0), InputError);
}

// A launch starts one process per GPU of a host: a DGX is one host, an NVL72 rack 18 hosts of 4
// GPUs (its compute trays), whatever share of the rack the job takes.
TEST(Cluster, LaunchesCountHostsNotNvlinkDomains) {
    const auto dgx = load_cluster("dgx-h100");
    EXPECT_EQ(launch_gpus_per_host(dgx, 64), 8);
    EXPECT_EQ(launch_gpus_per_host(dgx, 2), 2);
    for (const char* rack : {"gb200-nvl72", "gb300-nvl72"}) {
        const auto nvl = load_cluster(rack);
        EXPECT_EQ(nvl.gpus_per_node, 72) << rack;
        EXPECT_EQ(launch_gpus_per_host(nvl, 144), 4) << rack;
        EXPECT_EQ(launch_gpus_per_host(with_gpus_per_node(nvl, 64), 128), 4) << rack;
        EXPECT_EQ(launch_gpus_per_host(nvl, 2), 2) << rack;  // a two-GPU job on one tray
        EXPECT_EQ(parse_cluster(to_json(nvl), "x.json").gpus_per_host, 4) << rack;  // round trip
    }
    json bad = to_json(load_cluster("gb200-nvl72"));
    bad["gpus_per_host"] = 5;  // 72 GPUs are not whole hosts of 5
    try {
        parse_cluster(bad, "rack.json");
        FAIL();
    } catch (const InputError& e) {
        const std::string s = e.what();
        EXPECT_NE(s.find("rack.json"), std::string::npos) << s;
        EXPECT_NE(s.find("gpus_per_host"), std::string::npos) << s;
    }
}

// A one-node cluster without a NIC figure has no network: it is not resized to several nodes on
// a made-up 1 GB/s. Links of kind "none" cannot join several GPUs or nodes. Figures in bytes or
// FLOP/s instead of GiB and TFLOP/s, and clusters beyond what a plan may span, are refused.
TEST(Cluster, ImpossibleOrMisunitedClustersAreRefused) {
    json one = to_json(load_cluster("dgx-h100"));
    one["num_nodes"] = 1;
    one["inter_node"].erase("nic_bandwidth_GBps");
    const ClusterSpec node = parse_cluster(one, "one.json");
    EXPECT_NO_THROW(resize_cluster(node, 8));
    EXPECT_THROW(resize_cluster(node, 16), InputError);
    auto refused = [](json j, const std::string& key) {
        try {
            parse_cluster(j, "c.json");
        } catch (const InputError& e) {
            return std::string(e.what()).find(key) != std::string::npos;
        }
        return false;
    };
    json c = to_json(load_cluster("dgx-h100"));
    json none_between_nodes = c;
    none_between_nodes["inter_node"]["kind"] = "none";
    EXPECT_TRUE(refused(none_between_nodes, "inter_node.kind"));
    json none_inside = c;
    none_inside["intra_node"]["kind"] = "none";
    EXPECT_TRUE(refused(none_inside, "intra_node.kind"));
    json bytes = c;
    bytes["gpu"]["memory_GiB"] = 80e9;
    EXPECT_TRUE(refused(bytes, "memory_GiB"));
    json flops = c;
    flops["gpu"]["peak_tflops"]["bf16"] = 989e12;
    EXPECT_TRUE(refused(flops, "bf16"));
    json huge = c;
    huge["num_nodes"] = 1 << 20;
    huge["gpus_per_node"] = 1024;
    EXPECT_TRUE(refused(huge, "num_nodes"));
}

TEST(Topology, PathsInsideAndAcrossNodes) {
    Topology t(load_cluster("dgx-h100"));
    auto in = t.path(0, 5);
    EXPECT_DOUBLE_EQ(in.bandwidth_GBps, 450);  // NVLink4, one direction
    EXPECT_DOUBLE_EQ(in.latency_us, 3);
    auto across = t.path(3, 8 * 7 + 3);
    EXPECT_DOUBLE_EQ(across.bandwidth_GBps, 50);  // one NDR NIC
    EXPECT_DOUBLE_EQ(across.latency_us, 5);
    EXPECT_EQ(t.num_vertices(), 128u * (8 + 1 + 2 * 8) + 1);  // GPUs, switch, NIC send/receive sides, fabric
}

TEST(Topology, GpusOfOneNodeTalkOverItsOwnLinksWhateverTheLatencies) {
    // A fabric measured faster to start than NVLink (a calibrated profile can say so) still carries
    // nothing between two GPUs of one node: NCCL's P2P/NVLink transports, not a NIC and back.
    auto c = load_cluster("dgx-h100");
    c.intra_node.latency_us = 3.0;
    c.inter_node.latency_us = 1.0;
    Topology t(c);
    const auto in = t.path(0, 5);
    EXPECT_DOUBLE_EQ(in.bandwidth_GBps, 450);
    EXPECT_DOUBLE_EQ(in.latency_us, 3.0);
    EXPECT_EQ(in.hops, 2);  // GPU, switch, GPU
    const auto across = t.path(3, 8 * 7 + 3);
    EXPECT_DOUBLE_EQ(across.bandwidth_GBps, 50);
    EXPECT_DOUBLE_EQ(across.latency_us, 1.0);
    ParallelSizes s{8, 1, 16, 1};
    EXPECT_DOUBLE_EQ(t.group(rank_groups("tp-cp-dp-pp", s, "tp")[0]).bandwidth_GBps, 450);
}

TEST(Topology, GroupBottleneckUnderPlacement) {
    auto c = load_cluster("dgx-a100");
    Topology t(c);
    ParallelSizes s{8, 1, 16, 1};  // tp 8 inside each node, dp 16 across nodes
    auto tp = rank_groups("tp-cp-dp-pp", s, "tp");
    auto dp = rank_groups("tp-cp-dp-pp", s, "dp");
    EXPECT_DOUBLE_EQ(t.group(tp[0]).bandwidth_GBps, 300);
    EXPECT_FALSE(t.group(tp[0]).crosses_nodes());
    // One member per node: the ring gets one GPU's share of the NICs, 8 x 25 / 8.
    EXPECT_DOUBLE_EQ(t.group(dp[0]).bandwidth_GBps, 25);
    EXPECT_EQ(t.group(dp[0]).num_nodes, 16);
    // Placing dp innermost puts the whole node in one dp group: 8 channels, 8 x 25 = 200 GB/s.
    auto dp_inner = rank_groups("dp-tp-cp-pp", ParallelSizes{8, 1, 16, 1}, "dp");
    EXPECT_DOUBLE_EQ(t.group(dp_inner[0]).bandwidth_GBps, 200);
    EXPECT_EQ(t.group(dp_inner[0]).num_nodes, 2);
}

TEST(Topology, RememberedGroupsAnswerAsComputedOnes) {
    // The same questions asked in another order, and again, of one topology give what a fresh
    // topology answers; groups of one size with other members (a node's eight GPUs, eight nodes'
    // first GPUs, eight ranks over two nodes) are told apart.
    const auto c = load_cluster("dgx-a100");
    const std::vector<std::vector<int>> groups{{0, 1, 2, 3, 4, 5, 6, 7}, {0, 8, 16, 24, 32, 40, 48, 56}, {4, 5, 6, 7, 8, 9, 10, 11}};
    Topology asked(c);
    for (int round = 0; round < 2; ++round)
        for (auto it = groups.rbegin(); it != groups.rend(); ++it) {
            Topology fresh(c);
            const GroupLink want = fresh.group(*it), got = asked.group(*it);
            EXPECT_DOUBLE_EQ(got.bandwidth_GBps, want.bandwidth_GBps);
            EXPECT_DOUBLE_EQ(got.latency_us, want.latency_us);
            EXPECT_EQ(got.num_nodes, want.num_nodes);
            EXPECT_EQ(got.max_members_per_node, want.max_members_per_node);
        }
    EXPECT_DOUBLE_EQ(asked.group(groups[0]).bandwidth_GBps, 300);
    EXPECT_DOUBLE_EQ(asked.group(groups[1]).bandwidth_GBps, 25);
    EXPECT_EQ(asked.group(groups[2]).num_nodes, 2);
}

TEST(Topology, OversubscriptionAndPcie) {
    auto c = load_cluster("pcie-a100");
    Topology t(c);
    EXPECT_DOUBLE_EQ(t.path(0, 1).bandwidth_GBps, 32);
    // Two 25 GB/s NICs shared by eight GPUs.
    EXPECT_DOUBLE_EQ(t.group({0, 8}).bandwidth_GBps, 2 * 25.0 / 8);
    c.inter_node.oversubscription = 2.0;
    Topology t2(c);
    EXPECT_DOUBLE_EQ(t2.group({0, 8}).bandwidth_GBps, 2 * 25.0 / 8 / 2);
}
