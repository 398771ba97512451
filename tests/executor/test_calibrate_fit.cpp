// calibrate's fit (executor/calibrate_fit.h) against measurements synthesised from known
// parameters: each fit must give the parameters back. The synthetic times are written out here
// from the model each fit documents, not taken from the fit itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "executor/calibrate_fit.h"
#include "executor/calibrate_kernels.h"
#include "simulator/collectives.h"
#include "simulator/compute_cost.h"

namespace tessel {
namespace {

constexpr double kPeak = 100e9;     // FLOP/s
constexpr double kLaunch = 2e-6;    // s

KernelMeasurements gemms_from(double efficiency, double k_overhead) {
    KernelMeasurements k;
    k.peak_flops = kPeak;
    k.launch_s = kLaunch;
    for (int h : {128, 256, 512, 1024})
        for (int t : {256, 1024}) {
            for (auto [m, n, kk] : {std::array{t, 3 * h, h}, std::array{t, 4 * h, h}, std::array{t, h, 4 * h}}) {
                GemmSample g{"layer", m, n, kk, 0};
                g.seconds = g.flops() / (kPeak * efficiency * kk / (kk + k_overhead)) + kLaunch;
                k.gemms.push_back(g);
            }
        }
    return k;
}

// Attention times at a constant efficiency of the peak times the simulator's own ramp (8 heads,
// head_dim 32 and 64), the backward 2.5 forwards of work.
KernelMeasurements attention_at_constant_efficiency(std::initializer_list<int> seqs, double forward, double backward) {
    KernelMeasurements k;
    k.peak_flops = kPeak;
    for (int seq : seqs)
        for (int d : {32, 64}) {
            AttentionSample a{8, seq, d, 0, 0};
            const double flops = simulator_attention_forward_flops(8, seq, d);
            const double rate = kPeak * simulator_attention_ramp(8, seq, d, 1);
            a.forward_seconds = flops / (rate * forward);
            a.backward_seconds = 2.5 * flops / (rate * backward);
            k.attention.push_back(a);
        }
    return k;
}

TEST(CalibrateFit, GemmRecoversEfficiencyWithoutKOverhead) {
    const FittedProfile f = fit_profile(gemms_from(0.8, 0.0), {}, 1);
    EXPECT_NEAR(f.peak_flops, kPeak, 1e-6 * kPeak);  // no sample beats the square peak
    EXPECT_NEAR(f.gemm_max_efficiency, 0.8, 1e-6);
    EXPECT_EQ(f.gemm_k_overhead, 0.0);
    EXPECT_LT(f.gemm_error, 1e-6);
}

TEST(CalibrateFit, AShapeFasterThanTheSquareSetsThePeakAndIsNamed) {
    KernelMeasurements k = gemms_from(0.8, 0.0);
    k.peak_size = 512;
    EXPECT_EQ(fit_profile(k, {}, 1).peak_source, "512^3 square, best sample");
    // One shape at 1.25x the square's rate: the peak is that shape's rate, and the report says so.
    GemmSample fast{"qkv", 256, 768, 256, 0};
    fast.seconds = fast.flops() / (1.25 * kPeak);
    k.gemms.push_back(fast);
    const FittedProfile f = fit_profile(k, {}, 1);
    EXPECT_NEAR(f.peak_flops, 1.25 * kPeak, 1e-6 * kPeak);
    EXPECT_EQ(f.peak_source, "the qkv GEMM 256x768x256, faster than the 512^3 square's best sample");
}

TEST(CalibrateFit, GemmRecoversKOverhead) {
    // 64 elements of K lost per call: a 128-deep GEMM runs at 2/3 of a deep one.
    const FittedProfile f = fit_profile(gemms_from(0.9, 64.0), {}, 1);
    EXPECT_NEAR(f.gemm_max_efficiency, 0.9, 0.01);
    EXPECT_NEAR(f.gemm_k_overhead, 64.0, 3.0);  // the search grid is logarithmic, ~4% per step
    EXPECT_LT(f.gemm_error, 0.01);
}

TEST(CalibrateFit, GemmTableHoldsEachShapesOwnEfficiency) {
    const KernelMeasurements k = gemms_from(0.5, 0.0);
    const FittedProfile f = fit_profile(k, {}, 1);
    ASSERT_EQ(f.gemm_table.size(), k.gemms.size());
    for (std::size_t i = 0; i < k.gemms.size(); ++i) {
        EXPECT_EQ(f.gemm_table[i].m, k.gemms[i].m);
        // The launch cost is taken off before the rate is formed: exactly the efficiency.
        EXPECT_NEAR(f.gemm_table[i].efficiency, 0.5, 1e-9);
    }
}

TEST(CalibrateFit, StreamingEfficiencyIsTotalBytesOverTotalTime) {
    KernelMeasurements k;
    k.stream_Bps = 40e9;
    k.launch_s = kLaunch;
    for (double bytes : {1e5, 1e6, 1e7})
        k.streaming.push_back({"gelu_forward", "", bytes, bytes / (0.5 * 40e9) + kLaunch});
    const FittedProfile f = fit_profile(k, {}, 1);
    EXPECT_NEAR(f.memory_bandwidth_efficiency, 0.5, 1e-9);
    EXPECT_NEAR(f.memory_bandwidth_Bps, 40e9, 1);
    EXPECT_LT(f.streaming_error, 1e-9);
}

TEST(CalibrateFit, StreamingTableHoldsEachKernelsOwnEfficiency) {
    // GeLU computes (a fifth of the bandwidth), an add streams from cache (twice it): one
    // efficiency for both would misprice each; the table gives each its own back.
    KernelMeasurements k;
    k.stream_Bps = 40e9;
    k.launch_s = kLaunch;
    for (double bytes : {1e6, 1e7, 1e8}) {
        k.streaming.push_back({"gelu_forward", "", bytes, bytes / (0.2 * 40e9) + kLaunch});
        k.streaming.push_back({"residual_add", "", bytes, bytes / (2.0 * 40e9) + kLaunch});
    }
    const FittedProfile f = fit_profile(k, {}, 1);
    ASSERT_EQ(f.streaming_table.size(), 2u);
    EXPECT_EQ(f.streaming_table[0].first, "gelu_forward");
    EXPECT_NEAR(f.streaming_table[0].second, 0.2, 1e-9);
    EXPECT_EQ(f.streaming_table[1].first, "residual_add");
    EXPECT_NEAR(f.streaming_table[1].second, 2.0, 1e-9);
    EXPECT_LT(f.streaming_error, 1e-9);  // each kernel reproduced by its own entry
}

// The alpha-beta model of comm_cost.cpp, written out: bus factor x S / bw + steps x hop + call.
double alpha_beta(Collective op, int n, double bytes, double bw, double hop, double call) {
    const double steps = op == Collective::all_reduce ? 2.0 * (n - 1) : op == Collective::send_recv ? 1.0 : n - 1.0;
    return bus_bandwidth_factor(op, n) * bytes / bw + steps * hop + call;
}

TEST(CalibrateFit, LinkRecoversBandwidthAndLatencies) {
    const double bw = 10e9, hop = 2e-6, call = 5e-6;
    std::vector<CollectiveSample> c;
    for (int n : {2, 4})
        for (Collective op : kCalibratedCollectives)
            for (double s = 1 << 10; s <= (1 << 26); s *= 4) {
                CollectiveSample x;
                x.op = op;
                x.ranks = n;
                x.bytes = s;
                x.seconds = alpha_beta(op, n, s, bw, hop, call);
                c.push_back(x);
            }
    const FittedProfile f = fit_profile(KernelMeasurements{}, c, 1);
    ASSERT_TRUE(f.has_link);
    EXPECT_NEAR(f.link_bandwidth_Bps / bw, 1.0, 1e-6);
    EXPECT_NEAR(f.hop_latency_s / hop, 1.0, 1e-4);
    EXPECT_NEAR(f.collective_latency_s / call, 1.0, 1e-4);
    EXPECT_LT(f.collective_error, 1e-6);
}

TEST(CalibrateFit, NoLinkFromOneRank) {
    EXPECT_FALSE(fit_profile(KernelMeasurements{}, {}, 1).has_link);
}

TEST(CalibrateFit, SharedCoresAndStepKernelsDerateWhatAStepKeeps) {
    KernelMeasurements k = gemms_from(0.8, 0.0);
    k.stream_Bps = 40e9;
    k.streaming.push_back({"residual_add", "", 1e7, 1e7 / 40e9 + kLaunch});
    k.cpu_share = 0.9;
    // A real step's kernels take 1.25x their time alone: it keeps 0.8.
    k.steps.push_back({"gpt", 256, 128, 4, 1.25, 1.0});
    std::vector<CollectiveSample> c;
    for (double s : {1e4, 1e6}) {
        CollectiveSample x;
        x.op = Collective::all_reduce;
        x.ranks = 2;
        x.bytes = s;
        x.seconds = alpha_beta(Collective::all_reduce, 2, s, 10e9, 0, 0);
        c.push_back(x);
    }
    const FittedProfile f = fit_profile(k, c, 1);
    EXPECT_NEAR(f.sustained_clock_fraction, 0.9 * 0.8, 1e-9);
    EXPECT_NEAR(f.memory_bandwidth_efficiency, 0.9 * 0.8, 1e-9);  // streamed at 1.0 alone
    ASSERT_EQ(f.streaming_table.size(), 1u);
    EXPECT_NEAR(f.streaming_table[0].second, 0.9 * 0.8, 1e-9);  // the table takes the same derate
    EXPECT_NEAR(f.kernel_launch_s, kLaunch / 0.9, 1e-15);
    EXPECT_NEAR(f.link_bandwidth_Bps, 0.9 * 10e9, 1e-3 * 10e9);
}

TEST(CalibrateFit, AttentionEfficiencyUndoesTheSimulatorsRamp) {
    // Times made with a constant long-sequence efficiency times the simulator's own ramp: the fit
    // must return that constant for every shape.
    KernelMeasurements k = attention_at_constant_efficiency({128, 256, 512}, 0.6, 0.4);
    const FittedProfile f = fit_profile(k, {}, 1);
    EXPECT_NEAR(f.attention_forward_efficiency, 0.6, 1e-9);
    EXPECT_NEAR(f.attention_backward_efficiency, 0.4, 1e-9);
    EXPECT_LT(f.attention_error, 1e-9);
}

TEST(CalibrateFit, AttentionFasterThanPeakIsCappedAndTheFitKept) {
    // Times 2.1x faster than peak x the simulator's ramp in the backward, 1.2x in the forward:
    // the efficiencies are capped at 1, the uncapped fit is kept to say so (2.1 and 1.2 exactly,
    // a constant factor over every shape), and the capped model's error is 1.2 - 1 = 20% forward,
    // 110% backward per sample: geometric mean sqrt(1.2 x 2.1) - 1 = 58.7% over both.
    KernelMeasurements k = attention_at_constant_efficiency({128, 256}, 1.2, 2.1);
    const FittedProfile f = fit_profile(k, {}, 1);
    EXPECT_EQ(f.attention_forward_efficiency, 1.0);
    EXPECT_EQ(f.attention_backward_efficiency, 1.0);
    EXPECT_NEAR(f.attention_forward_fit, 1.2, 1e-9);
    EXPECT_NEAR(f.attention_backward_fit, 2.1, 1e-9);
    EXPECT_NEAR(f.attention_error, std::sqrt(1.2 * 2.1) - 1, 1e-9);
}

// calibrate mirrors the simulator's attention ramp and FLOP count (it may not call the
// simulator); the two must agree or the fitted efficiency means something else to the simulator.
TEST(CalibrateFit, AttentionRampMatchesTheSimulator) {
    GpuSpec gpu;
    gpu.name = "test";
    gpu.memory_GiB = 1;
    gpu.memory_bandwidth_GBps = 1e6;  // compute-bound: the time is flops / rate
    gpu.peak_tflops[Precision::fp32] = 1;
    gpu.peak_tflops[Precision::bf16] = 1;
    for (int sms : {1, 7, 132}) {
        HardwareEfficiency eff;
        eff.sm_count = sms;
        eff.attention_forward_efficiency = 1.0;
        eff.attention_backward_efficiency = 1.0;
        const ComputeModel model(gpu, eff, Precision::bf16);
        for (int seq : {64, 128, 1000, 4096})
            for (int d : {32, 64, 128}) {
                AttentionShape a;
                a.batch_heads = 8;
                a.seq_q = a.seq_kv = seq;
                a.head_dim = d;
                EXPECT_NEAR(model.attention_efficiency(a, true), simulator_attention_ramp(8, seq, d, sms), 1e-12)
                    << "sms " << sms << " seq " << seq << " d " << d;
                EXPECT_NEAR(a.forward_flops(), simulator_attention_forward_flops(8, seq, d), 1e-6 * a.forward_flops());
            }
    }
}

// A GPU timed on too few batch x heads leaves SMs idle; the table must hold the rate with the GPU
// full, and the simulator must apply each costed shape's own fill. The fill is written out by
// hand: a grid of bh x ceil(seq / 128) query blocks runs in ceil(blocks / SMs) waves.
TEST(CalibrateFit, AttentionTableHoldsTheFullGpuRate) {
    const int sms = 132;
    auto fill = [&](double bh, double seq) {
        const double blocks = bh * std::ceil(seq / 128.0);
        return blocks / (std::ceil(blocks / sms) * sms);
    };
    KernelMeasurements k;
    k.peak_flops = kPeak;
    for (int seq : {512, 2048}) {
        AttentionSample a{4, seq, 64, 0, 0};  // 16 or 64 query blocks on 132 SMs
        const double flops = simulator_attention_forward_flops(4, seq, 64);
        a.forward_seconds = flops / (kPeak * 0.5 * fill(4, seq));
        a.backward_seconds = 2.5 * flops / (kPeak * 0.4 * fill(4, seq));
        k.attention.push_back(a);
    }
    const FittedProfile f = fit_profile(k, {}, sms);
    ASSERT_EQ(f.attention_table.size(), 2u);
    for (const auto& row : f.attention_table) {
        EXPECT_NEAR(row.forward_efficiency, 0.5, 1e-9) << row.seq;
        EXPECT_NEAR(row.backward_efficiency, 0.4, 1e-9) << row.seq;
    }

    GpuSpec gpu;
    gpu.name = "test";
    gpu.memory_GiB = 1;
    gpu.memory_bandwidth_GBps = 1e6;
    gpu.peak_tflops[Precision::bf16] = 1;
    HardwareEfficiency eff;
    eff.sm_count = sms;
    eff.attention_table = {{2048, 64, 0.5, 0.4}};
    const ComputeModel model(gpu, eff, Precision::bf16);
    for (double bh : {1.0, 4.0, 16.0, 96.0}) {
        AttentionShape a;
        a.batch_heads = bh;
        a.seq_q = a.seq_kv = 2048;
        a.head_dim = 64;
        EXPECT_NEAR(model.attention_efficiency(a, true), 0.5 * fill(bh, 2048), 1e-12) << bh;
        EXPECT_NEAR(model.attention_efficiency(a, false), 0.4 * fill(bh, 2048), 1e-12) << bh;
    }
}

}  // namespace

// calibrate measures a GPU at its own sizes: the CPU sweep's 256 x 128 GEMMs run at a GPU's launch
// latency (1.5% of an H100's fp32 peak, reports/gpu/calibration-history/1-cpu-sizes), so the sweep follows the
// backend, and --quick stays quick on every backend.
TEST(CalibrateSweep, FollowsTheBackend) {
    const KernelSweep cpu = KernelSweep::for_backend("cpu", false);
    const KernelSweep gpu = KernelSweep::for_backend("cuda", false);
    EXPECT_EQ(cpu.hidden, KernelSweep::standard().hidden);
    EXPECT_EQ(gpu.hidden, KernelSweep::device().hidden);
    EXPECT_EQ(KernelSweep::for_backend("cuda", true).hidden, KernelSweep::quick().hidden);
    EXPECT_EQ(KernelSweep::for_backend("cpu", true).hidden, KernelSweep::quick().hidden);
    // A GPU's streaming arrays must come from DRAM, not L2: at least twice an H100's or H200's
    // 50 MiB (NVIDIA H100 Tensor Core GPU Architecture whitepaper, 2022).
    EXPECT_GE(gpu.stream_bytes, std::size_t(2 * 50) << 20);
    // Its GEMMs reach the shapes of a 7B model's layers (hidden 4096, 8192 tokens per microbatch)
    // and its largest square GEMM is larger than any of the CPU's.
    EXPECT_GE(*std::max_element(gpu.hidden.begin(), gpu.hidden.end()), 4096);
    EXPECT_GE(*std::max_element(gpu.tokens.begin(), gpu.tokens.end()), 8192);
    EXPECT_GT(*std::max_element(gpu.peak_sizes.begin(), gpu.peak_sizes.end()),
              *std::max_element(cpu.peak_sizes.begin(), cpu.peak_sizes.end()));
    // Its attention shapes fill an H100's 132 SMs (datasheet) with query blocks of 128 tokens, the
    // simulator's block, at the shortest length measured: the attention table is looked up by
    // length alone, whatever the batch.
    const int shortest = *std::min_element(gpu.attention_seq.begin(), gpu.attention_seq.end());
    EXPECT_GE(gpu.attention_batch_heads * (shortest / 128), 132);
}

}  // namespace tessel
