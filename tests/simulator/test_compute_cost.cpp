// The compute model's shape effects, each against an independent count.
#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.h"
#include "core/presets.h"
#include "simulator/compute_cost.h"

using namespace tessel;

namespace {
ComputeModel a100() {
    const ClusterSpec c = load_cluster("dgx-a100");
    HardwareEfficiency e = hardware_efficiency(c);
    e.kernel_launch_s = 0;
    return ComputeModel(c.gpu, e, Precision::bf16);
}
}  // namespace

TEST(ComputeCost, LargeSquareGemmReachesTheMeasuredCeiling) {
    const auto gpu = a100();
    // 8192^3: 64 x 32 = 2048 tiles of 128x256 over 108 SMs = 19 waves, 96% full; K ramp 8192/(8192+96).
    const double eff = gpu.gemm_efficiency({8192, 8192, 8192});
    EXPECT_NEAR(eff, 0.859 * (2048.0 / (19 * 108)) * (8192.0 / (8192 + 96)), 0.02);
    const double clock = gpu.efficiency().sustained_clock_fraction;
    EXPECT_NEAR(gpu.gemm_time({8192, 8192, 8192}), 2.0 * 8192.0 * 8192 * 8192 / (312e12 * clock * eff), 1e-6);
}

TEST(ComputeCost, SkinnyAndShortGemmsRunSlower) {
    const auto gpu = a100();
    const double big = gpu.gemm_efficiency({8192, 8192, 8192});
    EXPECT_LT(gpu.gemm_efficiency({8192, 8192, 64}), 0.6 * big);   // short K
    EXPECT_LT(gpu.gemm_efficiency({64, 4096, 4096}), 0.8 * big);   // few rows: padding and one partial wave
    // A matrix-vector product is bandwidth bound: it reads the whole 2 x 4096 x 4096-byte matrix.
    const double bandwidth = 2039e9 * gpu.efficiency().memory_bandwidth_efficiency;
    EXPECT_GT(gpu.gemm_time({1, 4096, 4096}), 2.0 * 4096 * 4096 / bandwidth);
}

TEST(ComputeCost, CausalFlashAttentionRunsTheLowerTriangle) {
    AttentionShape a{32, 4096, 4096, 128, true};
    // 32 blocks of 128 per side: 32*33/2 of 32*32 blocks visited.
    EXPECT_NEAR(a.forward_flops(), 4.0 * 32 * 4096.0 * 4096 * 128 * (33.0 / 64), 1.0);
    AttentionShape full = a;
    full.causal = false;
    EXPECT_NEAR(full.forward_flops(), 4.0 * 32 * 4096.0 * 4096 * 128, 1.0);
    EXPECT_NEAR(a.backward_flops(), 2.5 * a.forward_flops(), 1.0);
    const auto gpu = a100();
    EXPECT_LT(gpu.attention_forward_time(a), gpu.attention_forward_time(full));
}

TEST(ComputeCost, Fp8GemmsUseTheFp8PeakAtTheirOwnCeiling) {
    // The H100 preset: fp8 GEMMs reach 0.73 of the 1979 TFLOP/s fp8 peak where bf16 ones reach
    // 0.801 of 989, so an fp8 GEMM takes 0.5 x 0.801 / 0.73 of the bf16 one's time.
    const ClusterSpec c = load_cluster("dgx-h100");
    HardwareEfficiency e = hardware_efficiency(c);
    e.kernel_launch_s = 0;
    const ComputeModel bf16(c.gpu, e, Precision::bf16), fp8(c.gpu, e, Precision::fp8);
    EXPECT_DOUBLE_EQ(fp8.gemm_peak_flops(), 1979e12 * e.sustained_clock_fraction * 0.73 / 0.801);
    EXPECT_DOUBLE_EQ(fp8.other_peak_flops(), 989e12 * e.sustained_clock_fraction);
    EXPECT_NEAR(fp8.gemm_time({8192, 8192, 8192}) / bf16.gemm_time({8192, 8192, 8192}), 989.0 / 1979 * 0.801 / 0.73,
                1e-9);
    // Without an fp8 ceiling the fp8 GEMM keeps the bf16 GEMM's share of its peak.
    ClusterSpec plain = c;
    plain.gpu.fp8_matmul_efficiency = 0;
    const ComputeModel fp8_plain(plain.gpu, hardware_efficiency(plain), Precision::fp8);
    EXPECT_DOUBLE_EQ(fp8_plain.gemm_peak_flops(), 1979e12 * e.sustained_clock_fraction);
}

TEST(ComputeCost, ProfileOverridesTheDefaults) {
    ClusterSpec c = load_cluster("dgx-a100");
    c.profile = json{{"gemm_max_efficiency", 0.5}, {"kernel_launch_us", 7}, {"collective", {{"latency_us", 20}}}};
    const HardwareEfficiency e = hardware_efficiency(c);
    EXPECT_DOUBLE_EQ(e.gemm_max_efficiency, 0.5);
    EXPECT_DOUBLE_EQ(e.kernel_launch_s, 7e-6);
    EXPECT_DOUBLE_EQ(e.collective_latency_s, 20e-6);
    EXPECT_DOUBLE_EQ(e.memory_bandwidth_efficiency, HardwareEfficiency{}.memory_bandwidth_efficiency);
    // Round trip through the profile format.
    ClusterSpec again = c;
    again.profile = to_profile_json(e);
    const HardwareEfficiency e2 = hardware_efficiency(again);
    EXPECT_DOUBLE_EQ(e2.gemm_max_efficiency, 0.5);
    EXPECT_DOUBLE_EQ(e2.collective_latency_s, 20e-6);
}

TEST(ComputeCost, StreamingTableSetsANamedKernelsBandwidth) {
    ClusterSpec c = load_cluster("dgx-a100");
    c.profile = json{{"kernel_launch_us", 0}, {"streaming_table", {{{"kernel", "gelu_forward"}, {"efficiency", 0.2}}}}};
    const HardwareEfficiency e = hardware_efficiency(c);
    const ComputeModel gpu(c.gpu, e, Precision::bf16);
    const double bw = c.gpu.memory_bandwidth_GBps * 1e9;
    EXPECT_NEAR(gpu.memory_time(1e9, 1, "gelu_forward"), 1e9 / (0.2 * bw), 1e-12);
    // Kernels the table does not name, and unnamed ones, keep memory_bandwidth_efficiency.
    EXPECT_NEAR(gpu.memory_time(1e9, 1, "residual_add"), 1e9 / (e.memory_bandwidth_efficiency * bw), 1e-12);
    EXPECT_NEAR(gpu.memory_time(1e9), 1e9 / (e.memory_bandwidth_efficiency * bw), 1e-12);
    ClusterSpec again = c;
    again.profile = to_profile_json(e);
    ASSERT_EQ(hardware_efficiency(again).streaming_table.size(), 1u);
    EXPECT_DOUBLE_EQ(hardware_efficiency(again).streaming_table[0].second, 0.2);
}

TEST(ComputeCost, GemmTableReplacesTheShapeModelByItsDocumentedInterpolation) {
    // Two measured GEMMs, in the profile's JSON format (simulator/hardware_efficiency.h). The
    // clock fraction is 1 and the memory fast (efficiency 100), so a GEMM's time is its compute
    // alone: t = 2mnk / (312 TFLOP/s x efficiency), kernel launch 0.
    ClusterSpec c = load_cluster("dgx-a100");
    c.profile = json{{"kernel_launch_us", 0},
                     {"sustained_clock_fraction", 1.0},
                     {"memory_bandwidth_efficiency", 100},
                     {"gemm_table",
                      {{{"m", 1024}, {"n", 1024}, {"k", 1024}, {"efficiency", 0.5}},
                       {{"m", 4096}, {"n", 4096}, {"k", 4096}, {"efficiency", 0.8}}}}};
    const HardwareEfficiency e = hardware_efficiency(c);
    ASSERT_EQ(e.gemm_table.size(), 2u);
    ASSERT_DOUBLE_EQ(power_clock_fraction(c.gpu), 1.0);
    const ComputeModel gpu(c.gpu, e, Precision::bf16);
    ASSERT_DOUBLE_EQ(gpu.gemm_peak_flops(), 312e12);
    auto hand_time = [](double m, double n, double k, double eff) { return 2.0 * m * n * k / (312e12 * eff); };
    // The rule (hardware_efficiency.h): inverse-distance weights 1/d^4, d the distance between
    // log2 (m, n, k), averaging log efficiencies; a measured shape returns its own value.
    EXPECT_DOUBLE_EQ(gpu.gemm_efficiency({1024, 1024, 1024}), 0.5);
    EXPECT_DOUBLE_EQ(gpu.gemm_efficiency({4096, 4096, 4096}), 0.8);
    EXPECT_NEAR(gpu.gemm_time({1024, 1024, 1024}), hand_time(1024, 1024, 1024, 0.5), 1e-15);
    EXPECT_NEAR(gpu.gemm_time({4096, 4096, 4096}), hand_time(4096, 4096, 4096, 0.8), 1e-15);
    // 2048^3 lies 1 step of log2 from each point in each axis: d^2 = 3 to both, equal weights,
    // the geometric mean sqrt(0.5 x 0.8) = 0.6325.
    const double mid = std::sqrt(0.5 * 0.8);
    EXPECT_NEAR(gpu.gemm_efficiency({2048, 2048, 2048}), mid, 1e-12);
    EXPECT_NEAR(gpu.gemm_time({2048, 2048, 2048}), hand_time(2048, 2048, 2048, mid), 1e-15);
    // (1024, 1024, 4096): d^2 = 4 to the first point, 4 + 4 = 8 to the second; weights 1/16 and
    // 1/64, i.e. 4 : 1, so log eff = (4 ln 0.5 + ln 0.8) / 5.
    const double skew = std::exp((4 * std::log(0.5) + std::log(0.8)) / 5);
    EXPECT_NEAR(gpu.gemm_efficiency({1024, 1024, 4096}), skew, 1e-12);
    EXPECT_NEAR(gpu.gemm_time({1024, 1024, 4096}), hand_time(1024, 1024, 4096, skew), 1e-15);
    // Beyond the table, 16384^3: d^2 = 3 x 2^2 = 12 to the larger point, 3 x 4^2 = 48 to the
    // smaller; weights 1/144 and 1/2304, i.e. 16 : 1.
    const double beyond = std::exp((16 * std::log(0.8) + std::log(0.5)) / 17);
    EXPECT_NEAR(gpu.gemm_efficiency({16384, 16384, 16384}), beyond, 1e-12);
    // The table replaces the tile/wave model: gemm_max_efficiency no longer scales the result.
    ClusterSpec capped = c;
    (*capped.profile)["gemm_max_efficiency"] = 0.1;
    const ComputeModel capped_gpu(capped.gpu, hardware_efficiency(capped), Precision::bf16);
    EXPECT_DOUBLE_EQ(capped_gpu.gemm_efficiency({2048, 2048, 2048}), gpu.gemm_efficiency({2048, 2048, 2048}));
    // The table survives the profile round trip.
    ClusterSpec again = c;
    again.profile = to_profile_json(e);
    const ComputeModel again_gpu(again.gpu, hardware_efficiency(again), Precision::bf16);
    EXPECT_NEAR(again_gpu.gemm_efficiency({2048, 2048, 2048}), mid, 1e-12);
}

TEST(ComputeCost, BadStreamingTableNamesItsKey) {
    ClusterSpec c = load_cluster("dgx-a100");
    c.profile = json{{"streaming_table", 3}};
    try {
        hardware_efficiency(c);
        FAIL() << "expected InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("profile.streaming_table"), std::string::npos) << e.what();
    }
    c.profile = json{{"streaming_table", {{{"kernel", "gelu_forward"}, {"efficiency", -1}}}}};
    EXPECT_THROW(hardware_efficiency(c), InputError);
}

TEST(ComputeCost, PowerCapLowersTheComputeCeilingsByTheCubeRoot) {
    ClusterSpec c = load_cluster("dgx-h100");
    ASSERT_DOUBLE_EQ(c.gpu.tdp_W, 700);
    EXPECT_DOUBLE_EQ(power_clock_fraction(c.gpu), 1.0);  // no cap: the datasheet's TDP
    HardwareEfficiency e = hardware_efficiency(c);
    e.kernel_launch_s = 0;
    const ComputeModel full(c.gpu, e, Precision::bf16);
    c.gpu.power_limit_W = 500;
    // Power ~ f^3 in the DVFS range: (500/700)^(1/3) = 0.8939 of the clock.
    EXPECT_NEAR(power_clock_fraction(c.gpu), 0.8939, 1e-4);
    const ComputeModel capped(c.gpu, e, Precision::bf16);
    const GemmShape g{8192, 8192, 8192};
    EXPECT_NEAR(full.gemm_time(g) / capped.gemm_time(g), 0.8939, 1e-4);
    // HBM keeps its rate: a streaming kernel takes as long.
    EXPECT_DOUBLE_EQ(capped.memory_time(1e9), full.memory_time(1e9));
    c.gpu.power_limit_W = 900;  // a cap above the TDP changes nothing
    EXPECT_DOUBLE_EQ(power_clock_fraction(c.gpu), 1.0);
}

TEST(ComputeCost, PowerLimitWithoutTheTdpIsBadInputNamingTheKey) {
    json j = to_json(load_cluster("dgx-h100"));
    j["gpu"]["power_limit_W"] = 500;
    j["gpu"].erase("tdp_W");
    try {
        parse_cluster(j, "c.json");
        FAIL() << "a power limit needs the TDP the peaks were measured at";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("gpu.tdp_W"), std::string::npos) << e.what();
    }
    j["gpu"]["tdp_W"] = 700;
    EXPECT_DOUBLE_EQ(parse_cluster(j, "c.json").gpu.power_limit_W, 500);
}
