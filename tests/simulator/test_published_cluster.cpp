// R9: the cluster of a published run, from the row's GPU, node size and interconnect text.
#include <gtest/gtest.h>

#include "compare/published_cluster.h"
#include "core/errors.h"

namespace tessel {
namespace {

void expect_network(const std::string& text, int default_nics, int nics, double nic_GBps) {
    const auto n = parse_interconnect(text, default_nics);
    ASSERT_TRUE(n.has_value()) << text;
    EXPECT_EQ(n->nics_per_node, nics) << text;
    EXPECT_DOUBLE_EQ(n->nic_bandwidth_GBps, nic_GBps) << text;
}

TEST(PublishedCluster, InterconnectTextsOfTheValidationSetsReadAsEightHdrPorts) {
    // DGX A100 (user guide): 8 ConnectX-6 HDR 200 Gb/s compute NICs, 25 GB/s each; MosaicML's
    // "1600 Gbps node-node" is the same 8 x 200 Gb/s counted for the node.
    expect_network("1600 Gbps node-node interconnect (RoCE)", 8, 8, 25.0);
    expect_network("DGX A100 (NVSwitch); Selene HDR InfiniBand", 8, 8, 25.0);
    expect_network("Selene: DGX A100, HDR InfiniBand full fat tree", 8, 8, 25.0);
    expect_network("DGX A100 nodes (NVLink3/NVSwitch intra-node); Selene, HDR InfiniBand 200 Gb/s (8 HCAs/node "
                   "per paper as summarized; fat-tree)",
                   4, 8, 25.0);
}

TEST(PublishedCluster, CountsRatesWholeNodeFiguresAndPortTechnologies) {
    expect_network("4 x 100 Gbps Omni-Path", 8, 4, 12.5);
    expect_network("8x ConnectX-7 NDR 400 Gb/s", 4, 8, 50.0);
    expect_network("2×200Gbps", 8, 2, 25.0);
    expect_network("400 Gbps EFA", 4, 4, 12.5);           // one figure for the node, over its NICs
    expect_network("3200 Gbps per node, RoCE", 8, 8, 50.0);
    expect_network("Omni-Path, 4 adapters", 8, 4, 12.5);  // the port rate of the technology
    expect_network("EDR InfiniBand", 2, 2, 12.5);
    expect_network("NDR InfiniBand", 8, 8, 50.0);
    // Words are matched whole: "default" names no EFA, "Cedric" no EDR port.
    expect_network("default RoCE fabric, 200 Gbps, 8 NICs", 4, 8, 25.0);
    EXPECT_FALSE(parse_interconnect("Cedric's cluster", 8).has_value());
    // Bytes per second describe the GPU links, not the network; no count, rate or technology: none.
    EXPECT_FALSE(parse_interconnect("NVLink 600 GB/s", 8).has_value());
    EXPECT_FALSE(parse_interconnect("RoCE", 8).has_value());
    EXPECT_FALSE(parse_interconnect("", 8).has_value());
}

TEST(PublishedCluster, CountsInWordsOrApartFromTheAdaptersAndAStatedRateOverTheTechnologys) {
    // GPT-NeoX-20B's wording (Black et al. 2022): the adapter's model number is no count.
    expect_network("four ConnectX-6 HCAs per node (200 Gb/s each)", 8, 4, 25.0);
    expect_network("ConnectX-6 200Gb/s HDR (8 per node)", 4, 8, 25.0);
    // A stated 400 Gb/s outranks HDR's nominal 200 (Nemotron-4 15B's report wording).
    expect_network("8 NVIDIA Mellanox 400 Gbps HDR InfiniBand HCAs", 4, 8, 50.0);
    expect_network("one 100 Gbps NIC per node", 8, 1, 12.5);
    expect_network("a single 100 Gbps Ethernet NIC per node", 8, 1, 12.5);
    // A count of GPUs is not one of NICs, nor is a fabric's tier; a rate in another clause (a
    // storage network) is not the technology's port's.
    expect_network("8 GPUs per node and 4 NICs of 200 Gb/s", 8, 4, 25.0);
    expect_network("two-tier fat tree with 8 HDR HCAs per node", 4, 8, 25.0);
    expect_network("HDR InfiniBand compute fabric; 25 GbE storage network", 8, 8, 25.0);
    expect_network("HDR InfiniBand 200 Gb/s (4 HDR per node)", 8, 4, 25.0);
}

TEST(PublishedCluster, EthernetAndTerabitRatesAndARateAloneAreRead) {
    // 400G and 100GbE are Ethernet's gigabit rates; Tb/s a thousand of them.
    expect_network("8x400G RoCE", 4, 8, 50.0);
    expect_network("Ethernet 100GbE", 8, 8, 12.5);  // a rate alone is a port's, on the preset's NICs
    expect_network("RoCEv2, 200 Gbps", 4, 4, 25.0);
    expect_network("EFAv2 3.2 Tbps per node", 8, 8, 50.0);
    expect_network("1.6 Tbps per node", 8, 8, 25.0);
    expect_network("NVLink + InfiniBand 3.2Tb/s", 8, 8, 50.0);  // faster than any port: the node's
    expect_network("Slingshot-11, 4 x 200 Gb/s", 8, 4, 25.0);
    // Bytes are still not the network, and a memory size is not a rate.
    EXPECT_FALSE(parse_interconnect("NVLink4 900 GB/s, H100 80GB", 8).has_value());
}

TEST(PublishedCluster, FabricOversubscriptionIsRead) {
    const auto tapered = parse_interconnect("InfiniBand HDR, 2:1 oversubscribed fat tree", 8);
    ASSERT_TRUE(tapered.has_value());
    EXPECT_DOUBLE_EQ(tapered->oversubscription, 2.0);
    EXPECT_DOUBLE_EQ(tapered->nic_bandwidth_GBps, 25.0);
    EXPECT_DOUBLE_EQ(parse_interconnect("1:4 blocking spine", 8)->oversubscription, 4.0);
    EXPECT_DOUBLE_EQ(parse_interconnect("non-blocking fat tree, NDR", 8)->oversubscription, 1.0);
    EXPECT_DOUBLE_EQ(parse_interconnect("NDR InfiniBand", 8)->oversubscription, 0.0);  // not stated
    // A taper alone keeps the preset's NICs and sets the cluster's fabric.
    const auto alone = parse_interconnect("3:1 oversubscription", 8);
    ASSERT_TRUE(alone.has_value());
    EXPECT_EQ(alone->nics_per_node, 0);
    const ClusterSpec c = published_cluster("H100-SXM5-80GB", "3:1 oversubscription", 8, 64, "runs.json", "row 'x'");
    EXPECT_DOUBLE_EQ(c.inter_node.oversubscription, 3.0);
    EXPECT_EQ(c.inter_node.nics_per_node, 8);
    EXPECT_DOUBLE_EQ(c.inter_node.nic_bandwidth_GBps, 50.0);
}

TEST(PublishedCluster, RowNodeSizeNetworkAndGpuReplaceThePresets) {
    const ClusterSpec c = published_cluster("A100-SXM4-80GB", "4 x 100 Gbps Omni-Path", 8, 32, "runs.json", "row 'x'");
    EXPECT_EQ(c.num_nodes, 4);
    EXPECT_EQ(c.inter_node.nics_per_node, 4);
    EXPECT_DOUBLE_EQ(c.inter_node.nic_bandwidth_GBps, 12.5);
    const ClusterSpec big = published_cluster("H100-SXM5-80GB", "", 16, 64, "runs.json", "row 'x'");
    EXPECT_EQ(big.gpus_per_node, 16);
    EXPECT_EQ(big.num_nodes, 4);
    EXPECT_DOUBLE_EQ(big.inter_node.nic_bandwidth_GBps, 50.0);  // DGX H100's NDR ports stand
    // A100 PCIe 40GB (datasheet): 1555 GB/s HBM2, no NVLink.
    const ClusterSpec pcie = published_cluster("A100-PCIe-40GB", "", 0, 8, "runs.json", "row 'x'");
    EXPECT_EQ(pcie.intra_node.kind, "pcie");
    EXPECT_DOUBLE_EQ(pcie.gpu.memory_GiB, 40);
    EXPECT_DOUBLE_EQ(pcie.gpu.memory_bandwidth_GBps, 1555);
    // H800 and A800 (datasheets): the H100 and A100 with NVLink at 400 GB/s both ways.
    const ClusterSpec h800 = published_cluster("H800-SXM5-80GB", "", 8, 16, "runs.json", "row 'x'");
    EXPECT_DOUBLE_EQ(h800.gpu.peak_tflops.at(Precision::bf16), 989);
    EXPECT_DOUBLE_EQ(h800.intra_node.bandwidth_GBps, 200);
    const ClusterSpec a800 = published_cluster("A800-SXM4-80GB", "", 8, 16, "runs.json", "row 'x'");
    EXPECT_DOUBLE_EQ(a800.gpu.peak_tflops.at(Precision::bf16), 312);
    EXPECT_DOUBLE_EQ(a800.gpu.memory_GiB, 80);
    EXPECT_DOUBLE_EQ(a800.intra_node.bandwidth_GBps, 200);
    // A DGX-2H's V100 at 450 W: 130 FP16 TFLOP/s (NVIDIA ADLR's Megatron-LM v1.0 blog: 62.4 TFLOP/s is
    // 48% of its peak); the DGX-2's V100 keeps the datasheet's 125.
    const ClusterSpec dgx2h = published_cluster("V100-SXM3-32GB (DGX-2H)", "", 16, 1, "runs.json", "row 'x'");
    EXPECT_DOUBLE_EQ(dgx2h.gpu.peak_tflops.at(Precision::fp16), 130);
    EXPECT_DOUBLE_EQ(dgx2h.gpu.tdp_W, 450);
    const ClusterSpec dgx2 = published_cluster("V100-SXM3-32GB", "", 16, 1, "runs.json", "row 'x'");
    EXPECT_DOUBLE_EQ(dgx2.gpu.peak_tflops.at(Precision::fp16), 125);
    // H100 PCIe (H100 datasheet, PCIe column): 756 dense BF16 TFLOP/s, 2.0 TB/s, GPUs on PCIe.
    const ClusterSpec h100pcie = published_cluster("H100 PCIe 80GB", "", 8, 16, "runs.json", "row 'x'");
    EXPECT_DOUBLE_EQ(h100pcie.gpu.peak_tflops.at(Precision::bf16), 756);
    EXPECT_DOUBLE_EQ(h100pcie.gpu.memory_bandwidth_GBps, 2000);
    EXPECT_EQ(h100pcie.intra_node.kind, "pcie");
    // H100 NVL and H200 NVL (datasheets): PCIe cards at 835 dense BF16 TFLOP/s, not the SXM part.
    const ClusterSpec h100nvl = published_cluster("H100 NVL", "", 8, 16, "runs.json", "row 'x'");
    EXPECT_DOUBLE_EQ(h100nvl.gpu.peak_tflops.at(Precision::bf16), 835);
    EXPECT_DOUBLE_EQ(h100nvl.gpu.memory_GiB, 94);
    EXPECT_DOUBLE_EQ(h100nvl.gpu.memory_bandwidth_GBps, 3900);
    EXPECT_EQ(h100nvl.intra_node.kind, "pcie");
    const ClusterSpec h200nvl = published_cluster("H200 NVL 141GB", "", 8, 16, "runs.json", "row 'x'");
    EXPECT_DOUBLE_EQ(h200nvl.gpu.peak_tflops.at(Precision::fp8), 1671);
    EXPECT_DOUBLE_EQ(h200nvl.gpu.memory_GiB, 141);  // as the row states it
    // GH200: the H100 die's peaks with its own memory (96 GB HBM3 at 4 TB/s; 144 GB HBM3e at 4.9 TB/s)
    // and NVLink-C2C to its Grace CPU (450 GB/s each way).
    const ClusterSpec gh = published_cluster("NVIDIA GH200 Grace Hopper Superchip", "", 4, 8, "runs.json", "row 'x'");
    EXPECT_EQ(gh.gpu.name, "GH200");
    EXPECT_DOUBLE_EQ(gh.gpu.peak_tflops.at(Precision::bf16), 989);
    EXPECT_DOUBLE_EQ(gh.gpu.memory_GiB, 96);
    EXPECT_DOUBLE_EQ(gh.gpu.host_bandwidth_GBps, 450);
    EXPECT_DOUBLE_EQ(published_cluster("GH200 144GB HBM3e", "", 4, 8, "runs.json", "row 'x'").gpu.memory_bandwidth_GBps, 4900);
    // An NVL72 rack's NVLink domain is the rack: a compute tray's 4 GPUs (the recipes'
    // GPUS_PER_NODE), or 72 that 128 GPUs do not fill, leave the run 64 GPUs of each rack.
    EXPECT_EQ(published_cluster("GB200 NVL72", "", 4, 128, "runs.json", "row 'x'").gpus_per_node, 64);
    EXPECT_EQ(published_cluster("GB200 NVL72", "", 72, 128, "runs.json", "row 'x'").gpus_per_node, 64);
    EXPECT_EQ(published_cluster("GB200 NVL72", "", 72, 144, "runs.json", "row 'x'").gpus_per_node, 72);
    // GB200 NVL72 is not an NVL card.
    EXPECT_DOUBLE_EQ(published_cluster("GB200 NVL72", "", 0, 72, "runs.json", "row 'x'").gpu.peak_tflops.at(Precision::bf16), 2500);
    // V100 (DGX-2 preset; a DGX-1 row states 8 per node, a 16GB card its memory): fp16 only.
    const ClusterSpec v100 = published_cluster("V100-SXM2-16GB", "", 8, 16, "runs.json", "row 'x'");
    EXPECT_DOUBLE_EQ(v100.gpu.peak_tflops.at(Precision::fp16), 125);  // V100 datasheet
    EXPECT_EQ(v100.gpu.peak_tflops.count(Precision::bf16), 0u);
    EXPECT_DOUBLE_EQ(v100.gpu.memory_GiB, 16);
    EXPECT_EQ(v100.gpus_per_node, 8);
    // B200 and GB200 (DGX B200 datasheet: 2.25 dense BF16 PFLOP/s; GB200 NVL72 specifications: 360
    // sparse BF16 PFLOP/s over 72 GPUs, 2.5 dense each; NVLink5 900 GB/s each way on both).
    for (const auto& [gpu, bf16] : {std::pair{"B200-SXM-180GB", 2250.0}, std::pair{"GB200 NVL72 (186GB HBM3e)", 2500.0}}) {
        const ClusterSpec b = published_cluster(gpu, "", 8, 16, "runs.json", "row 'x'");
        EXPECT_DOUBLE_EQ(b.gpu.peak_tflops.at(Precision::bf16), bf16) << gpu;
        EXPECT_DOUBLE_EQ(b.intra_node.bandwidth_GBps, 900) << gpu;
    }
    EXPECT_DOUBLE_EQ(published_cluster("GB200 NVL72 (186GB HBM3e)", "", 8, 16, "runs.json", "row 'x'").gpu.memory_GiB, 186);
    // Blackwell Ultra: B300 keeps B200's dense peaks (HGX B300: 2.25 BF16, 4.5 FP8 PFLOP/s per GPU),
    // GB300 GB200's (GB300 NVL72: 180 dense BF16 PFLOP/s over 72 GPUs); both with 800 Gb/s
    // ConnectX-8 (100 GB/s) per GPU. "GB300" names its own preset, not the B300's.
    const ClusterSpec b300 = published_cluster("NVIDIA B300-SXM-288GB", "", 8, 16, "runs.json", "row 'x'");
    EXPECT_EQ(b300.gpu.name, "B300-SXM");
    EXPECT_DOUBLE_EQ(b300.gpu.peak_tflops.at(Precision::fp8), 4500);
    EXPECT_DOUBLE_EQ(b300.inter_node.nic_bandwidth_GBps, 100);
    const ClusterSpec gb300 = published_cluster("GB300 (DGX GB300 NVL72)", "", 64, 128, "runs.json", "row 'x'");
    EXPECT_EQ(gb300.gpu.name, "GB300");
    EXPECT_DOUBLE_EQ(gb300.gpu.peak_tflops.at(Precision::bf16), 2500);
    EXPECT_EQ(gb300.gpus_per_node, 64);
    EXPECT_EQ(gb300.inter_node.nics_per_node, 64);
    // A preset with a NIC per GPU (an NVL72 rack, a DGX B200) keeps a NIC per GPU in a node of
    // another size: a run on 64 GPUs of each rack has 64 per NVLink domain. The DGX-2 has 8 NICs for
    // its 16 V100s, and a row's 8-GPU node keeps the 8.
    const ClusterSpec nvl = published_cluster("GB200", "", 64, 128, "runs.json", "row 'x'");
    EXPECT_EQ(nvl.gpus_per_node, 64);
    EXPECT_EQ(nvl.num_nodes, 2);
    EXPECT_EQ(nvl.inter_node.nics_per_node, 64);
    EXPECT_EQ(published_cluster("B200", "", 4, 32, "runs.json", "row 'x'").inter_node.nics_per_node, 4);
    EXPECT_EQ(published_cluster("V100", "", 8, 32, "runs.json", "row 'x'").inter_node.nics_per_node, 8);
    // A count that fills no whole number of nodes, with no node size stated: the same share of each
    // node, the largest that divides the count. 128 and 2496 GB200s (39 x 64) run 64 per rack; 12
    // A100s run 6 in each of two DGX nodes.
    for (long long gpus : {128LL, 2496LL}) {
        const ClusterSpec racks = published_cluster("GB200", "", 0, gpus, "runs.json", "row 'x'");
        EXPECT_EQ(racks.gpus_per_node, 64) << gpus;
        EXPECT_EQ(racks.num_gpus(), gpus);
    }
    EXPECT_EQ(published_cluster("A100-SXM4-80GB", "", 0, 12, "runs.json", "row 'x'").gpus_per_node, 6);
    EXPECT_EQ(published_cluster("A100-SXM4-80GB", "", 0, 4, "runs.json", "row 'x'").gpus_per_node, 4);  // one node
    EXPECT_EQ(largest_divisor_within(97, 8), 1);  // a prime count: one GPU per node
    try {
        published_cluster("MI300X", "", 8, 8, "runs.json", "row 'x'");
        FAIL() << "a GPU without a preset is an input error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("row 'x'.gpu_type"), std::string::npos) << e.what();
    }
}

TEST(PublishedCluster, GpuFiguresTheRowStatesReplaceThePresets) {
    // torchtitan's Grand Teton H100s (docs/performance.md): 96GB HBM2e at 2.4 TB/s, 500 W.
    const GpuFigures f = parse_gpu_figures("H100 SXM 96GB HBM2e, 2.4 TB/s, 500 W power limit");
    EXPECT_DOUBLE_EQ(f.memory_GiB, 96);
    EXPECT_DOUBLE_EQ(f.memory_bandwidth_GBps, 2400);
    EXPECT_DOUBLE_EQ(f.power_limit_W, 500);
    const GpuFigures plain = parse_gpu_figures("A100-SXM4-80GB");
    EXPECT_DOUBLE_EQ(plain.memory_GiB, 80);
    EXPECT_DOUBLE_EQ(plain.memory_bandwidth_GBps, 0);
    EXPECT_DOUBLE_EQ(plain.power_limit_W, 0);
    // A bandwidth in GB/s is not a memory size.
    EXPECT_DOUBLE_EQ(parse_gpu_figures("H100, NVLink 900 GB/s").memory_GiB, 0);
    const ClusterSpec c = published_cluster("H100 SXM 96GB HBM2e, 2.4 TB/s, 500 W", "", 8, 8, "runs.json", "row 'x'");
    EXPECT_DOUBLE_EQ(c.gpu.memory_GiB, 96);
    EXPECT_DOUBLE_EQ(c.gpu.memory_bandwidth_GBps, 2400);
    EXPECT_DOUBLE_EQ(c.gpu.power_limit_W, 500);
    EXPECT_DOUBLE_EQ(c.gpu.tdp_W, 700);  // the preset's: H100 SXM datasheet
}

TEST(PublishedCluster, GpuTextsAreReadAsTheirWritersMeantThem) {
    // "NVLink" in an SXM part's text is its GPU link, not the H100 NVL PCIe card (H100 NVL
    // datasheet: 835 dense BF16 TFLOP/s; SXM5: 989).
    for (const char* sxm : {"H100 SXM (NVLink 4.0)", "HGX H100 8-GPU (NVLink/NVSwitch)", "H100 80GB SXM5 with 900 GB/s NVLink",
                            "H100 (NVL8 baseboard)"}) {
        const ClusterSpec c = published_cluster(sxm, "", 8, 8, "runs.json", "row 'x'");
        EXPECT_EQ(c.gpu.name, "H100-SXM") << sxm;
        EXPECT_DOUBLE_EQ(c.gpu.peak_tflops.at(Precision::bf16), 989) << sxm;
    }
    for (const char* card : {"H100 NVL", "NVIDIA H100-NVL 94GB", "H100NVL"})
        EXPECT_EQ(published_cluster(card, "", 8, 8, "runs.json", "row 'x'").gpu.name, "H100-NVL") << card;
    // The 40 GB A100 however it is spelled (A100 datasheet: 40 GB at 1555 GB/s, 80 GB at 2039).
    for (const char* forty : {"A100-40G", "A100 (40 GB)", "A100 40 GB", "NVIDIA A100 SXM 40GB"}) {
        const ClusterSpec c = published_cluster(forty, "", 8, 8, "runs.json", "row 'x'");
        EXPECT_DOUBLE_EQ(c.gpu.memory_GiB, 40) << forty;
        EXPECT_DOUBLE_EQ(c.gpu.memory_bandwidth_GBps, 1555) << forty;
    }
    // A DGX A100's 640 GB is its eight GPUs' total (8 x 80 GB), not a 40 GB part, and not one GPU's.
    const ClusterSpec dgx = published_cluster("DGX A100 640GB", "", 8, 8, "runs.json", "row 'x'");
    EXPECT_DOUBLE_EQ(dgx.gpu.memory_GiB, 80);
    EXPECT_DOUBLE_EQ(dgx.gpu.memory_bandwidth_GBps, 2039);
    EXPECT_DOUBLE_EQ(parse_gpu_figures("GH200 480GB").memory_GiB, 0);  // CPU and GPU memory together
    // A TB/s beside NVLink is the GPU link's; the HBM's is the other (DGX B200: 1.8 TB/s NVLink5,
    // 8 TB/s HBM3e per GPU).
    EXPECT_DOUBLE_EQ(parse_gpu_figures("B200 (NVLink 1.8 TB/s, 8 TB/s HBM3e)").memory_bandwidth_GBps, 8000);
    // The host's memory beside the GPU's is not the GPU's; a 40 GB part the text denies is none.
    EXPECT_DOUBLE_EQ(parse_gpu_figures("H100 (host 256 GB DDR5, 80 GB HBM3)").memory_GiB, 80);
    EXPECT_DOUBLE_EQ(parse_gpu_figures("GH200 (120GB LPDDR5X, 96GB HBM3)").memory_GiB, 96);
    EXPECT_DOUBLE_EQ(published_cluster("A100 80GB (not the 40GB part)", "", 8, 8, "runs.json", "row 'x'").gpu.memory_bandwidth_GBps, 2039);
}

TEST(PublishedCluster, AdapterCountsWrittenAfterTheRateOrBesideTheTechnology) {
    expect_network("HDR 200 Gb/s x 4", 8, 4, 25.0);
    expect_network("100Gbps (x4 per node)", 8, 4, 12.5);
    expect_network("4 EDR HCAs (100 Gb/s each)", 8, 4, 12.5);
    expect_network("2 x HDR200", 8, 2, 25.0);
    // "8 HCAs per node" counts the node's adapters; the rate stays each one's.
    expect_network("HDR 200 Gb/s (8 HCAs per node)", 4, 8, 25.0);
    // A rate is no count: "400G NICs" is one NIC's rate, over the preset's count.
    expect_network("400G NICs, RoCE", 8, 8, 50.0);
    expect_network("100 Gbps Ethernet, 4 ports", 8, 4, 12.5);
    // A port's rate beside the node's total: the total over the node's adapters (3.2 Tb/s = 8 x 400).
    expect_network("ConnectX-7 NDR 400 Gb/s (3.2 Tb/s per node)", 8, 8, 50.0);
    // A port per GPU: the node's GPUs' count of them, whatever "1 NIC" says.
    expect_network("400 Gb/s InfiniBand NDR, 1 NIC per GPU", 8, 8, 50.0);
    expect_network("1x 400G NDR per GPU", 8, 8, 50.0);
    // "8 GPUs per node" counts GPUs: the rate stays a port's.
    expect_network("InfiniBand HDR 200Gb/s, 8 GPUs per node", 8, 8, 25.0);
}

}  // namespace
}  // namespace tessel
