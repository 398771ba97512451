#include "simulator/compute_cost.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/units.h"

namespace tessel {

namespace {
// Output tiles cuBLAS picks among on Ampere/Hopper. A tile reuses each loaded operand across its
// other dimension, so its arithmetic intensity is tm·tn/(tm+tn) FLOPs per element loaded; smaller
// tiles stall more on shared-memory traffic: relative rate I / (I + kTileIntensityHalf), which the
// largest tile's rate normalises to 1.
struct Tile {
    double m, n;
};
constexpr std::array<Tile, 6> kTiles{{{256, 128}, {128, 256}, {128, 128}, {64, 128}, {128, 64}, {64, 64}}};
// Intensity (FLOPs per loaded element) at which a tile runs at half its rate; with 8 the 64x64
// tile runs ~12% below the 256x128 one, as cuBLAS's small-tile kernels do.
constexpr double kTileIntensityHalf = 8.0;
double tile_rate(const Tile& t) {
    auto rate = [](double i) { return i / (i + kTileIntensityHalf); };
    const double best = rate(256.0 * 128.0 / 384.0);
    return rate(t.m * t.n / (t.m + t.n)) / best;
}
// Largest split of K cuBLAS uses to fill the SMs when the output has too few tiles.
constexpr int kMaxSplitK = 16;
// Attention's query/key block (FlashAttention-2 uses 128x128 on A100/H100 for head dim 128).
constexpr double kAttentionBlock = 128.0;
// Head dimension at which the flash kernel reaches half its rate per head-dim step: head dim 64
// runs ~10% below 128 (FlashAttention-2, Fig. 4 vs Fig. 5).
constexpr double kAttentionHeadDimHalf = 16.0;
}  // namespace

double AttentionShape::forward_flops() const {
    double pairs = seq_q * seq_kv;
    if (causal && kernel == AttentionKernel::flash) {
        // Blocks on and below the diagonal run whole; the diagonal ones are half wasted.
        const double nb = std::max(1.0, std::ceil(seq_kv / kAttentionBlock));
        pairs *= (nb + 1.0) / (2.0 * nb);
    }
    return 4.0 * batch_heads * pairs * head_dim;
}

double AttentionShape::backward_flops() const {
    return (kernel == AttentionKernel::flash ? 2.5 : 2.0) * forward_flops();
}

ComputeModel::ComputeModel(const GpuSpec& gpu, const HardwareEfficiency& eff, Precision precision) : eff_(eff) {
    const Precision non_gemm = precision == Precision::fp8 ? Precision::bf16 : precision;
    gemm_peak_ = gpu.peak(precision) * units::TFLOP * eff.sustained_clock_fraction;
    other_peak_ = gpu.peak(non_gemm) * units::TFLOP * eff.sustained_clock_fraction;
    if (gemm_peak_ <= 0) gemm_peak_ = other_peak_;
    memory_Bps_ = gpu.memory_bandwidth_GBps * units::GB * eff.memory_bandwidth_efficiency;
    element_bytes_ = precision == Precision::fp32 ? 4.0 : (precision == Precision::fp8 ? 1.0 : 2.0);
}

double ComputeModel::gemm_efficiency(const GemmShape& g) const {
    if (g.m <= 0 || g.n <= 0 || g.k <= 0) return 1.0;
    const double sms = eff_.sm_count;
    double best = 0;
    for (const Tile& t : kTiles) {
        const double tiles = std::ceil(g.m / t.m) * std::ceil(g.n / t.n) * g.batch;
        for (int split = 1; split <= kMaxSplitK; split *= 2) {
            if (split > 1 && tiles * split > 2 * sms) break;  // split-K only to fill the machine
            const double k = g.k / split;
            if (k < 128 && split > 1) break;
            const double work = tiles * split;
            const double waves = std::ceil(work / sms);
            // Useful fraction of the SM-time the waves occupy: padding and the idle last wave.
            const double fill = (g.m * g.n * g.batch * split) / (waves * sms * t.m * t.n);
            const double k_ramp = k / (k + eff_.gemm_k_overhead);
            // Split-K writes fp32 partial tiles and reduces them: a small extra pass.
            const double split_cost = split > 1 ? 0.97 : 1.0;
            best = std::max(best, fill * k_ramp * tile_rate(t) * split_cost);
        }
    }
    return eff_.gemm_max_efficiency * best;
}

double ComputeModel::gemm_time(const GemmShape& g) const {
    if (g.flops() <= 0) return 0;
    const double compute = g.flops() / (gemm_peak_ * gemm_efficiency(g));
    const double bytes = element_bytes_ * (g.m * g.k + g.k * g.n) * g.batch + 2.0 * g.m * g.n * g.batch;
    return std::max(compute, bytes / memory_Bps_) + eff_.kernel_launch_s;
}

namespace {
double attention_rate_factor(const AttentionShape& a, double sms) {
    // Head-dim ramp, normalised to head dim 128.
    const double d = a.head_dim;
    const double dim = (d / (d + kAttentionHeadDimHalf)) / (128.0 / (128.0 + kAttentionHeadDimHalf));
    // Wave quantization over (batch x heads x query blocks) thread blocks.
    const double blocks = a.batch_heads * std::ceil(a.seq_q / kAttentionBlock);
    const double waves = std::ceil(blocks / sms);
    const double fill = blocks / (waves * sms);
    return std::min(1.0, dim) * fill;
}
}  // namespace

double ComputeModel::attention_forward_time(const AttentionShape& a) const {
    const double flops = a.forward_flops();
    if (flops <= 0) return 0;
    if (a.kernel == AttentionKernel::unfused) {
        const double n = a.batch_heads * a.seq_q * a.seq_kv;  // elements of the score tensor
        const double e = 2.0;                                 // 16-bit scores
        double t = gemm_time({a.seq_q, a.seq_kv, a.head_dim, a.batch_heads});   // QK^T
        t += memory_time(2.0 * e * n);                                          // scale, mask, softmax
        if (a.dropout) t += memory_time(2.0 * e * n + n);                        // dropout and its mask
        t += gemm_time({a.seq_q, a.head_dim, a.seq_kv, a.batch_heads});        // PV
        return t;
    }
    const double rate = other_peak_ * eff_.attention_forward_efficiency * attention_rate_factor(a, eff_.sm_count);
    // Reads Q, K, V and writes O once (the point of the fused kernel).
    const double bytes = 2.0 * a.batch_heads * a.head_dim * (2.0 * a.seq_q + 2.0 * a.seq_kv);
    return std::max(flops / rate, bytes / memory_Bps_) + eff_.kernel_launch_s;
}

double ComputeModel::attention_backward_time(const AttentionShape& a) const {
    const double flops = a.backward_flops();
    if (flops <= 0) return 0;
    if (a.kernel == AttentionKernel::unfused) {
        const double n = a.batch_heads * a.seq_q * a.seq_kv;
        const double e = 2.0;
        double t = gemm_time({a.seq_kv, a.head_dim, a.seq_q, a.batch_heads});   // dV = P^T dO
        t += gemm_time({a.seq_q, a.seq_kv, a.head_dim, a.batch_heads});       // dP = dO V^T
        if (a.dropout) t += memory_time(2.0 * e * n + n);                        // dropout backward
        t += memory_time(3.0 * e * n);                                          // softmax backward
        t += gemm_time({a.seq_q, a.head_dim, a.seq_kv, a.batch_heads});        // dQ = dS K
        t += gemm_time({a.seq_kv, a.head_dim, a.seq_q, a.batch_heads});        // dK = dS^T Q
        return t;
    }
    const double rate = other_peak_ * eff_.attention_backward_efficiency * attention_rate_factor(a, eff_.sm_count);
    const double bytes = 2.0 * a.batch_heads * a.head_dim * (4.0 * a.seq_q + 4.0 * a.seq_kv);
    return std::max(flops / rate, bytes / memory_Bps_) + 2.0 * eff_.kernel_launch_s;
}

double ComputeModel::memory_time(double bytes, double kernels) const {
    if (bytes <= 0 && kernels <= 0) return 0;
    return bytes / memory_Bps_ + kernels * eff_.kernel_launch_s;
}

}  // namespace tessel
