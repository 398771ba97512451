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
// Head dimension at which the FlashAttention-2 kernel reaches half its rate per head-dim step:
// head dim 64 runs ~10% below 128 (Dao 2023, Fig. 4: A100 causal 88-171 vs 99-189 TFLOP/s; H100
// 141-284 vs 163-328). The FlashAttention-1-class kernels show no such loss (Fig. 4: Triton causal
// head dim 64 runs 59-80 TFLOP/s against 50-80 at 128), so they take no head-dim ramp.
constexpr double kAttentionHeadDimHalf = 16.0;
// Fixed cost of one query block's thread block (loading its Q tile, the final rescale, writing O
// and the log-sum-exp; in the backward pass the dQ accumulation and the dK/dV stores), in units of
// one key-block iteration of its main loop. A causal query block i iterates over i key blocks, so
// with nb blocks per sequence the kernel runs nb(nb+1)/2 iterations plus nb of these costs for
// nb^2/2 useful blocks. Fitted to the published kernel curves, not to training runs: Dao 2023,
// Fig. 4 (FlashAttention-2 README, assets/flash2_{a100,h100}_fwd_bwd_benchmark.png), causal head
// dim 128, forward + backward, 16k tokens per batch: A100 99/133/155/173/182/189 TFLOP/s and
// H100 163/221/265/294/308/328 at 512...16k tokens; 1.5 reproduces both within 4%. FlashAttention
// v1 and the Triton kernel ramp less (A100 FlashAttention 55-83, Triton 50-80; H100 98-137): 0.6.
// cuDNN's fused attention takes FlashAttention-2's 1.5: its forward curve ramps less steeply at
// short lengths (Shah et al. 2024, Fig. 5, H100 causal head dim 128: 315/484/539 TFLOP/s at
// 512/2k/16k, where this ramp gives about 269/430/541), so sequences of 2k and less run it a
// little slow; no published forward + backward curve of cuDNN to fit its own.
constexpr double kFlash2BlockOverhead = 1.5;
constexpr double kFlash1BlockOverhead = 0.6;
// Share of the memory bandwidth a large device-to-device copy reaches, measured by calibrate's
// streaming copy/add: 2957 GB/s of an H100 SXM's 3350 (reports/gpu/calibrate.txt) and 4182 of an
// H200's 4800 (reports/gpu/h200/calibrate.txt), 0.88 and 0.87.
constexpr double kDeviceCopyEfficiency = 0.87;
}  // namespace

namespace {
// Key blocks a causal fused kernel visits over all nb query blocks of a square: blocks on and
// below the diagonal run whole (the diagonal ones half wasted), so query block j visits j + 1. A
// sliding window of w keys caps that at the blocks its band touches, ceil(w / block) + 1.
double causal_blocks_visited(double nb, double window) {
    const double band = window > 0 ? std::ceil(window / kAttentionBlock) + 1.0 : nb;
    if (band >= nb) return nb * (nb + 1.0) / 2.0;
    return band * (band + 1.0) / 2.0 + (nb - band) * band;
}
}  // namespace

double key_blocks_per_query_block(const AttentionShape& a) {
    const double nb = std::max(1.0, std::ceil(a.seq_kv / kAttentionBlock));
    if (!a.causal) return nb;
    if (a.seq_kv > a.seq_q) {  // the last seq_q positions: every block before them, then the triangle
        const double nq = std::max(1.0, std::ceil(a.seq_q / kAttentionBlock));
        return std::min(nb, (a.seq_kv - a.seq_q) / kAttentionBlock + (nq + 1.0) / 2.0);
    }
    return causal_blocks_visited(nb, a.window) / nb;
}

double AttentionShape::forward_flops() const {
    double pairs = seq_q * seq_kv;
    if (causal && kernel != AttentionKernel::unfused) {
        const double nb = std::max(1.0, std::ceil(seq_kv / kAttentionBlock));
        pairs *= key_blocks_per_query_block(*this) / nb;
    }
    return 4.0 * batch_heads * pairs * head_dim;
}

double AttentionShape::backward_flops() const {
    return (kernel == AttentionKernel::unfused ? 2.0 : 2.5) * forward_flops();
}

ComputeModel::ComputeModel(const GpuSpec& gpu, const HardwareEfficiency& eff, Precision precision) : eff_(eff) {
    const Precision non_gemm = precision == Precision::fp8 ? Precision::bf16 : precision;
    const double clock = eff.sustained_clock_fraction * power_clock_fraction(gpu);
    gemm_peak_ = gpu.peak(precision) * units::TFLOP * clock;
    other_peak_ = gpu.peak(non_gemm) * units::TFLOP * clock;
    if (gemm_peak_ <= 0) gemm_peak_ = other_peak_;
    // fp8 GEMMs keep less of their (doubled) peak than 16-bit ones: the shape model's ceiling is
    // the 16-bit one, so scale the fp8 rate by the ratio of the two measured ceilings.
    if (precision == Precision::fp8 && gpu.fp8_matmul_efficiency > 0 && eff.gemm_max_efficiency > 0)
        gemm_peak_ *= gpu.fp8_matmul_efficiency / eff.gemm_max_efficiency;
    device_memory_Bps_ = gpu.memory_bandwidth_GBps * units::GB;
    memory_Bps_ = device_memory_Bps_ * eff.memory_bandwidth_efficiency;
    element_bytes_ = precision == Precision::fp32 ? 4.0 : (precision == Precision::fp8 ? 1.0 : 2.0);
}

double ComputeModel::gemm_efficiency(const GemmShape& g) const { return gemm_efficiency_on(g, eff_.sm_count); }

double ComputeModel::gemm_efficiency_on(const GemmShape& g, double sms) const {
    if (g.m <= 0 || g.n <= 0 || g.k <= 0) return 1.0;
    if (!eff_.gemm_table.empty()) return table_gemm_efficiency(eff_.gemm_table, g.m, g.n, g.k);  // measured
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

double ComputeModel::gemm_time(const GemmShape& g) const { return gemm_time(g, 0.0); }

double ComputeModel::gemm_time(const GemmShape& g, double reserved_sms) const {
    if (g.flops() <= 0) return 0;
    const double all = std::max(1.0, double(eff_.sm_count));
    const double sms = std::clamp(all - reserved_sms, 1.0, all);
    const bool narrow = element_bytes_ < 2.0 && !g.sixteen_bit;
    const double peak = (g.sixteen_bit ? other_peak_ : gemm_peak_) * sms / all;
    const double compute = g.flops() / (peak * gemm_efficiency_on(g, sms));
    const double operand = narrow ? element_bytes_ : std::max(2.0, element_bytes_);
    const double bytes = operand * (g.m * g.k + g.k * g.n) * g.batch + 2.0 * g.m * g.n * g.batch;
    return std::max(compute, bytes / memory_Bps_) + eff_.kernel_launch_s;
}

double attention_wave_fill(double batch_heads, double seq_q, double sm_count) {
    const double sms = std::max(1.0, sm_count);
    const double blocks = batch_heads * std::ceil(seq_q / kAttentionBlock);
    return blocks / (std::ceil(blocks / sms) * sms);
}

double ComputeModel::attention_efficiency(const AttentionShape& a, bool forward) const {
    // Wave quantization over (batch x heads x query blocks) thread blocks.
    const double fill = attention_wave_fill(a.batch_heads, a.seq_q, eff_.sm_count);
    if (!eff_.attention_table.empty())  // measured, the machine's own kernel at these lengths, GPU full
        return table_attention_efficiency(eff_.attention_table, a.seq_kv, a.head_dim, forward) * fill;
    const bool v1 = a.kernel == AttentionKernel::flash1;
    double base = v1 ? std::min(1.0, eff_.attention_v1_efficiency * eff_.attention_v1_scale)
                     : (forward ? eff_.attention_forward_efficiency : eff_.attention_backward_efficiency);
    // cuDNN's figure where the GPU has one; without, the kernel runs as FlashAttention-2.
    const double cudnn = a.kernel != AttentionKernel::cudnn ? 0.0
                         : forward                          ? eff_.attention_cudnn_forward_efficiency
                                                            : eff_.attention_cudnn_backward_efficiency;
    if (cudnn > 0) base = cudnn;
    if (a.dropout && !v1) {
        if (cudnn > 0) base /= forward ? eff_.cudnn_dropout_forward_slowdown : eff_.cudnn_dropout_backward_slowdown;
        else base /= forward ? eff_.flash_dropout_forward_slowdown : eff_.flash_dropout_backward_slowdown;
    }
    // Head-dim ramp, normalised to head dim 128 (FlashAttention-2 class only).
    const double d = a.head_dim;
    const double dim = v1 ? 1.0 : (d / (d + kAttentionHeadDimHalf)) / (128.0 / (128.0 + kAttentionHeadDimHalf));
    // Sequence ramp: key-block iterations per query block against that plus the block's fixed
    // cost. The efficiencies are long-sequence limits, so the ramp tends to 1.
    const double iterations = key_blocks_per_query_block(a);
    const double overhead = v1 ? kFlash1BlockOverhead : kFlash2BlockOverhead;
    const double ramp = iterations / (iterations + overhead);
    return base * std::min(1.0, dim) * fill * ramp;
}

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
    const double rate = other_peak_ * attention_efficiency(a, true);
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
    const double rate = other_peak_ * attention_efficiency(a, false);
    const double bytes = 2.0 * a.batch_heads * a.head_dim * (4.0 * a.seq_q + 4.0 * a.seq_kv);
    return std::max(flops / rate, bytes / memory_Bps_) + 2.0 * eff_.kernel_launch_s;
}

double ComputeModel::copy_time(double bytes) const {
    if (bytes <= 0) return 0;
    return bytes / streaming_Bps("device_copy", device_memory_Bps_ * kDeviceCopyEfficiency) + eff_.kernel_launch_s;
}

double ComputeModel::memory_time(double bytes, double kernels, std::string_view kernel) const {
    if (bytes <= 0 && kernels <= 0) return 0;
    return bytes / streaming_Bps(kernel, memory_Bps_) + kernels * eff_.kernel_launch_s;
}

double ComputeModel::streaming_Bps(std::string_view kernel, double otherwise_Bps) const {
    double Bps = otherwise_Bps;
    if (!kernel.empty())
        for (const auto& [name, efficiency] : eff_.streaming_table)
            if (name == kernel) Bps = device_memory_Bps_ * efficiency;
    return Bps;
}

}  // namespace tessel
