// The training frameworks whose documented defaults the simulator knows: what each one runs when
// its user passes no flag. `tessel validate` reads a published run with its framework's defaults
// and then what the row states; `tessel plan --emit` ranks plans on the stack the exported
// configuration runs (the defaults plus the flags the exporter writes).
#pragma once
#include "core/options.h"
#include "simulator/simulate.h"

namespace tessel {

struct SoftwareStack {
    // Defaults: SimulateOptions' own (fused kernels, FlashAttention-2, overlapped communication).
    const char* name = "unknown";
    bool bf16_grads_reduced_in_fp32 = false;  // 16-bit weights' gradients reduced (and accumulated) in fp32
    bool overlaps_grad_reduce = true;         // gradient reduction beside the backward, without a flag
    bool reduces_after_pipeline_flush = false;  // with pipeline stages, after the last backward whatever the flag
    bool overlaps_param_gather = true;        // ZeRO-1/2's updated weights gathered beside the next forward
    bool p2p_scatter_gather = false;          // pipeline sends split over TP without SP (SimulateOptions)
    int p2p_scatter_gather_until = 0;         // YYYYMMDD until which it did (Megatron-LM before Megatron-Core's p2p)
    int all_forwards_first_until = 0;         // YYYYMMDD until which its interleaved schedule ran every forward
                                              // first when the microbatches equal the pipeline ranks
    bool half_forward_selective = false;      // its "selective" checkpointing re-runs about half a forward
    bool sequence_parallel_with_tp = false;   // its tensor parallelism always shards norms along the sequence
    bool pipeline_gathers_once = false;       // FSDP with pipeline stages: weights gathered once and kept,
                                              // gradients accumulated unsharded, reduced after the last microbatch
    int flash_version = 2;                    // generation of its fused attention kernel
    bool cudnn_attention = false;             // that kernel is cuDNN's where the GPU has a faster one
    bool applies_dropout = true;              // a GPT-family model's dropout (0.1) is on
    bool fused_elementwise = true;            // fused elementwise kernels rather than eager PyTorch ops
    bool fused_cross_entropy = false;         // a fused classifier kernel rather than the fp32 eager loss
    bool torch_cross_entropy = false;         // that eager loss is PyTorch's F.cross_entropy (out of place)
    int metric_cross_entropies = 0;           // cross entropies its trainer logs per microbatch
    int vocab_padding_multiple = 128;         // vocabulary padded to a multiple of this x TP (SimulateOptions);
                                              // Megatron-LM and Megatron-DeepSpeed's --make-vocab-size-divisible-by
    bool overlaps_tp_backward = true;         // TP input-gradient reduction beside the wgrad GEMM (SimulateOptions)
    int tp_backward_overlap_date = 0;         // YYYYMMDD from which it does; 0: always
    bool fuses_grad_accumulation = true;      // the wgrad GEMM accumulates in place
    int grad_accumulation_fusion_date = 0;    // YYYYMMDD from which it does; 0: always
    bool grad_buckets_grow_with_dp = true;    // gradient buckets of max(40M, 1M x dp) parameters (SimulateOptions)
    int grad_buckets_grow_with_dp_date = 0;   // YYYYMMDD from which they do; 0: always
    bool zeroes_grad_buffer = true;           // a persistent gradient buffer zeroed every step, not freed
    bool fp8_saves_gemm_inputs = true;        // fp8: Transformer Engine's fp8 GEMM inputs kept for the backward
    bool fp8_caches_weights = true;           // fp8: weights cast once per step (SimulateOptions)
    bool torch_context_parallel = false;      // CP through PyTorch's context_parallel, not Transformer Engine
    bool fsdp2_buffer_copies = false;         // ZeRO-3 as FSDP2: weights copied out of, gradients into, its buffers
    bool tp_overlap_symmetric_memory = false; // its TP overlap is PyTorch's async TP (SimulateOptions)
    // What its configuration can express: bounds the planner's search for an export to it and the
    // knobs `validate` fills for a published run of it (compare/validate.cpp, R15).
    int max_zero_stage = 3;                   // highest ZeRO stage it shards to
    int max_zero_stage_with_pipeline = 3;     // the same with pipeline stages
    bool interleaves = true;                  // an interleaved (virtual-stage) pipeline schedule
    bool megatron_sequence_parallel = true;   // Megatron-style sequence parallelism beside TP
    bool block_recompute = false;             // full recompute of only the first N layers of each chunk
};

extern const SoftwareStack kMegatronLM, kDeepSpeed, kLlmFoundry, kTorchtitan, kLlmC;

// The stack's defaults as simulator options for a run in `precision` (the gradients of bf16 and
// fp8 runs, whose weights are bf16, reduced in fp32 where the stack does so). The fusion date is
// the caller's to apply: a current run of the stack has what the stack has today.
SimulateOptions stack_defaults(const SoftwareStack& s, Precision precision);

}  // namespace tessel
