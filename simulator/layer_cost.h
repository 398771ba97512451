// The work of one microbatch through the blocks of a model chunk on one GPU (one tensor-parallel
// rank of one pipeline stage): each transformer layer, the embedding on the first stage, and the
// final norm, LM head and loss on the last. Each pass is timed operation by operation with the
// compute model, and the tensor- and context-parallel communication it waits for is added.
#pragma once
#include <string>
#include <vector>

#include "core/model_spec.h"
#include "core/plan.h"
#include "simulator/comm_cost.h"
#include "simulator/compute_cost.h"

namespace tessel {

struct PassCost {
    double compute_s = 0;   // kernels on the compute stream
    double tp_comm_s = 0;   // tensor-parallel collectives the compute stream waits for
    double cp_comm_s = 0;   // context-parallel exchange not hidden behind attention
    double flops = 0;       // FLOPs the GPU executes
    double gemm_s = 0, attention_s = 0, memory_bound_s = 0;  // compute_s by kind of kernel
    double total() const { return compute_s + tp_comm_s + cp_comm_s; }
    PassCost& operator+=(const PassCost& o);
};

struct BlockCost {
    std::string name;
    PassCost forward, backward;
    PassCost recompute;        // forward work the backward repeats (selective or full recompute)
    double parameters = 0;     // on this GPU (this tensor-parallel rank's share)
};

// The software stack's kernels and how a block's communication may overlap with its compute
// (framework features). The defaults are the fastest choices, so that a bound computed with them
// never exceeds a simulation; simulate() sets every field from SimulateOptions.
struct OverlapOptions {
    bool tp_comm_overlap = false;  // Megatron/Transformer Engine userbuffers: TP collectives run beside the GEMMs
    AttentionKernel attention = AttentionKernel::flash;
    bool dropout = false;          // the model trains with dropout (the unfused attention stores its mask)
    // Elementwise work between the GEMMs. Fused: one kernel per fused group (Megatron's
    // bias-GeLU, bias-dropout-add, rotary and SwiGLU kernels; Transformer Engine; llm.c). Eager:
    // one kernel per PyTorch op, and autograd's own passes in the backward (separate
    // weight-gradient reduction of a norm, accumulation of the input gradients of the Q/K/V
    // projections, rotary embedding computed in fp32 complex arithmetic).
    bool fused_elementwise = true;
    // Loss. Fused: one classifier kernel reads the 16-bit logits and writes their gradient in
    // place (llm.c; Megatron's --cross-entropy-loss-fusion). Eager: the logits are cast to fp32 and
    // max, shift, exp, sum and normalise each stream the fp32 copy, the gradient is scaled in place
    // and cast back (Megatron's vocab_parallel_cross_entropy; PyTorch F.cross_entropy on .float()).
    bool fused_cross_entropy = true;
};

struct BlockModels {
    BlockCost layer;       // one transformer layer
    BlockCost embedding;   // token (and learned position) embedding, first stage
    BlockCost head;        // final norm, LM head, cross entropy, last stage
};

// `tp` and `cp` are the groups of the stage's tensor- and context-parallel collectives.
BlockModels block_models(const ModelSpec& m, const Plan& p, const ComputeModel& gpu, const CommGroup& tp,
                         const CommGroup& cp, const OverlapOptions& o);

// Seconds of the optimizer step over `parameters` (this GPU's shard): Adam streams the fp32
// master weights, both moments and the gradient, and writes the 16-bit weights back.
double optimizer_time(double parameters, Precision precision, const ComputeModel& gpu);

}  // namespace tessel
