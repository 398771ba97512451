// Time of one kernel on one GPU: max(FLOPs / (peak x efficiency), bytes / (HBM bandwidth x
// efficiency)) + a fixed cost per kernel. A GEMM's efficiency depends on its shape: the output is
// cut into tiles that run in waves over the SMs (a last, partly filled wave idles the rest; tiles
// that hang over the matrix edge compute padding), and short reductions (small K) pay the tile's
// fill and epilogue over fewer steps. Attention is one fused flash-style kernel that skips the
// blocks above the causal diagonal.
#pragma once
#include <string_view>
#include "core/cluster_spec.h"
#include "core/options.h"
#include "simulator/hardware_efficiency.h"

namespace tessel {

// C (m x n) = A (m x k) x B (k x n), `batch` times.
struct GemmShape {
    double m = 0, n = 0, k = 0;
    double batch = 1;
    // Runs on the 16-bit tensor cores whatever the plan's precision (an fp8 plan keeps some GEMMs,
    // such as the LM head, in bf16).
    bool sixteen_bit = false;
    double flops() const { return 2.0 * m * n * k * batch; }
};

// flash: a FlashAttention-2-class fused kernel that never writes the s x s scores
// (FlashAttention-2, PyTorch SDPA's flash backend, Transformer Engine's FlashAttention).
// cudnn: cuDNN's fused flash attention (Transformer Engine's FusedAttention, which it prefers on
// Hopper and newer; llm.c with USE_CUDNN; SDPA's cuDNN backend): the same memory traffic, at the
// GPU's cuDNN figures where it has them (about 1.6x FlashAttention-2 on an H100), else at
// FlashAttention-2's.
// flash1: a FlashAttention-1-class fused kernel: the same memory traffic, about half the rate
// (FlashAttention v1 in CUDA, and the Triton FlashAttention of flash_attn_triton.py that
// llm-foundry runs as attn_impl "triton"); Dao 2023, Fig. 4, measures both next to FlashAttention-2.
// unfused: Megatron-LM's pre-2022 core attention: batched GEMMs for QK^T and PV around a fused
// scale-mask-softmax and a dropout that read and write the whole s x s tensor.
enum class AttentionKernel { flash, flash1, unfused, cudnn };

// Batch x heads independent (s_q x s_kv) attention problems of head size d. Causal with more keys
// than queries: the queries are the last s_q of s_kv positions (bottom-right aligned), a
// context-parallel chunk against every key up to its end (a window is not applied then).
struct AttentionShape {
    double batch_heads = 0;
    double seq_q = 0, seq_kv = 0;
    double head_dim = 0;
    bool causal = true;
    AttentionKernel kernel = AttentionKernel::flash;
    bool dropout = false;  // attention dropout (the unfused kernel stores its mask)
    double window = 0;     // sliding window: keys each query attends to at most (0: none; fused causal kernels)
    // FLOPs of QK^T and PV over the blocks the kernel visits (flash and causal: the lower
    // triangle, diagonal blocks whole; unfused: the whole square, masked afterwards).
    double forward_flops() const;
    // Flash backward recomputes QK^T: five products, 2.5x the forward; unfused: four, 2x.
    double backward_flops() const;
};

// Key blocks (of the fused kernel's block) one query block visits, on average over the query blocks.
double key_blocks_per_query_block(const AttentionShape& a);

// Share of the SMs' time a fused attention grid of batch_heads x ceil(seq_q / 128) query blocks
// keeps busy: the idle part of its last wave is lost.
double attention_wave_fill(double batch_heads, double seq_q, double sm_count);

class ComputeModel {
public:
    ComputeModel(const GpuSpec& gpu, const HardwareEfficiency& eff, Precision precision);

    // Fraction of the GEMM peak this shape reaches (tile and wave quantization, K ramp).
    double gemm_efficiency(const GemmShape& g) const;
    double gemm_time(const GemmShape& g) const;
    // The GEMM run on all but `reserved_sms` of the SMs (cuBLAS's SM-count target, which
    // Transformer Engine sets while its communication kernels hold the rest): the waves are
    // counted over the SMs it has, and each SM keeps its own rate.
    double gemm_time(const GemmShape& g, double reserved_sms) const;
    double attention_forward_time(const AttentionShape& a) const;
    double attention_backward_time(const AttentionShape& a) const;
    // Fraction of the 16-bit peak a fused attention kernel reaches on this shape, before the
    // sustained-clock derate: the GPU's long-sequence efficiency for the kernel class and pass,
    // times the head-dim ramp, the wave fill, and the sequence ramp — each query block's thread
    // block pays a fixed prologue/epilogue worth a number of key-block iterations, which a short
    // sequence amortizes over few iterations (see compute_cost.cpp).
    // With a measured attention table (calibrate), the table's efficiency at this length and head
    // dim, which it holds for a full GPU, times this shape's wave fill.
    double attention_efficiency(const AttentionShape& a, bool forward) const;
    // A bandwidth-bound kernel (norms, activations, residual adds, softmax, optimizer); `kernel`
    // names it for the profile's streaming table ("layernorm_forward", "adamw", ...), which,
    // where it has the name, sets its bandwidth in place of memory_bandwidth_efficiency.
    double memory_time(double bytes, double kernels = 1, std::string_view kernel = {}) const;
    // One plain device copy of `bytes` (read and write counted): a lone streaming kernel reaches
    // more of the memory's bandwidth than a training step's mix of them (kDeviceCopyEfficiency).
    // The profile's streaming table sets it by the name "device_copy".
    double copy_time(double bytes) const;

    double gemm_peak_flops() const { return gemm_peak_; }      // FLOP/s (fp8 GEMMs at the fp8 peak)
    double other_peak_flops() const { return other_peak_; }    // FLOP/s of the 16-bit tensor cores
    const HardwareEfficiency& efficiency() const { return eff_; }

private:
    double gemm_efficiency_on(const GemmShape& g, double sms) const;
    // The bandwidth the profile's streaming table measured for `kernel`, else `otherwise_Bps`.
    double streaming_Bps(std::string_view kernel, double otherwise_Bps) const;
    HardwareEfficiency eff_;
    double gemm_peak_, other_peak_, memory_Bps_, element_bytes_;
    double device_memory_Bps_;  // the memory's bandwidth before any efficiency
};

}  // namespace tessel
