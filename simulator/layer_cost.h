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
    // Collective time that runs beside the compute and costs the step nothing but the SMs it takes
    // (in compute_s): TP collectives overlapped with their GEMMs, the ring exchange with attention.
    // Not in total(); the trace draws it.
    double tp_comm_hidden_s = 0, cp_comm_hidden_s = 0;
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
                                   // (with sequence parallelism, a TP group inside one node or NVLink domain)
    // Megatron's asynchronous tensor-parallel communication in the backward (Megatron-LM since
    // 2021-09, Transformer Engine's layers): a column-parallel linear's input gradient is
    // all-reduced, or with sequence parallelism reduce-scattered, beside its weight-gradient GEMM,
    // and its input, kept sharded, is gathered again beside its input-gradient GEMM. false: the
    // stream waits for the reduction (PyTorch's tensor parallelism, Megatron-LM before).
    bool tp_backward_overlap = true;
    // With tp_comm_overlap: PyTorch's symmetric-memory collective matmuls (torchtitan's async TP)
    // in place of Transformer Engine's userbuffers (layer_cost.cpp).
    bool tp_overlap_symmetric_memory = false;
    AttentionKernel attention = AttentionKernel::flash;
    bool dropout = false;          // the model trains with dropout (the unfused attention stores its mask)
    // Elementwise work between the GEMMs. Fused: one kernel per fused group (Megatron's
    // bias-GeLU, bias-dropout-add, rotary and SwiGLU kernels; Transformer Engine; llm.c). Eager:
    // one kernel per PyTorch op, and autograd's own passes in the backward (separate
    // weight-gradient reduction of a norm, accumulation of the input gradients of the Q/K/V
    // projections, rotary embedding computed in fp32 complex arithmetic).
    bool fused_elementwise = true;
    // RMSNorm as PyTorch's eager ops (torch.nn.RMSNorm's composite, and the Llama reference's
    // x.float() norm): the input cast to fp32, then pow, mean, rsqrt, the scale and the weight
    // product each a kernel, and the cast back; autograd runs the backward op by op. false: one
    // fused kernel each way (Megatron, Transformer Engine, Triton fused_rmsnorm, torch.compile).
    bool eager_rmsnorm = false;
    // Loss. Fused: one classifier kernel reads the 16-bit logits and writes their gradient in
    // place (llm.c; Megatron's --cross-entropy-loss-fusion). Eager: the logits are cast to fp32 and
    // max, shift, exp, sum and normalise each stream the fp32 copy, the gradient is scaled in place
    // and cast back (Megatron's vocab_parallel_cross_entropy; PyTorch F.cross_entropy on .float()).
    bool fused_cross_entropy = true;
    // Cross entropies the trainer evaluates on each microbatch's logits outside autograd, for its
    // logged training metrics (Composer's LanguageCrossEntropy and LanguagePerplexity, each a
    // torch CrossEntropyLoss over the logits after the backward: 2). Each casts the 16-bit logits
    // to fp32 (read E, write 4) and runs log_softmax over them (read 4, write 4).
    int metric_cross_entropies = 0;
    // Context parallelism as PyTorch's context_parallel runs it (torch.distributed.tensor.experimental,
    // torchtitan) instead of Transformer Engine's ring: see RingAttentionInput::torch_ring.
    bool torch_context_parallel = false;
    // Context parallelism the all-gather way: see RingAttentionInput::all_gather.
    bool all_gather_context_parallel = false;
    // fp8: the share of a microbatch's forward that casts the weights to fp8: 1 where every
    // microbatch casts them, 1/m where they are cast once for a step of m microbatches
    // (SimulateOptions::fp8_caches_weights); 0, the fastest, leaves the cast out.
    double fp8_weight_cast_share = 0;
};

struct BlockModels {
    BlockCost layer;       // one transformer layer
    BlockCost embedding;   // token (and learned position) embedding, first stage
    BlockCost head;        // final norm, LM head, cross entropy, last stage
};

// `tp` is the group of the stage's tensor-parallel collectives; `cp` the context-parallel ring's
// slowest hop (make_ring_link).
BlockModels block_models(const ModelSpec& m, const Plan& p, const ComputeModel& gpu, const CommGroup& tp,
                         const CommGroup& cp, const OverlapOptions& o);

// Context parallelism's ring attention for one microbatch through one layer on one GPU, as
// Transformer Engine runs it (AttnFuncWithCP, Megatron-Core's default "p2p" CP communication) with
// the load-balanced split: the sequence is cut into 2·cp chunks of c = S/(2cp) tokens and CP rank
// r keeps chunks r and 2cp−1−r, so every rank does the same causal work. The K and V of its 2c
// tokens travel the ring in cp − 1 steps while the rank attends with what it holds:
//   step 0:            its 2c queries over its own 2c keys, causal;
//   step i ≤ r:        its 2c queries over the first chunk (c keys) of an earlier rank, no mask;
//   step i > r:        its second chunk (c queries) over all 2c keys of a later rank, no mask.
// Each step is one fused-attention kernel on these short shapes (the per-block ramp of
// compute_cost.h at c or 2c keys, not at S), TE alternates two streams so two steps' grids share
// the SMs. The next step waits for its K/V, so step i's kernel hides step i+1's transfer and a
// step takes the longer of the two; the ring moves at its slowest rank (rank cp−1 runs the 2c x c
// shape at every step), so each step is costed at the slower shape. After the loop each step's
// partial output is merged into the result with its log-sum-exp (read the step's output, read and
// write the result). Backward: the same steps in reverse, each a flash backward; the K/V and the
// dK/dV accumulated so far travel together (iteration 0 sends K/V only, the last dK/dV only), and
// the step's dQ and dK/dV are accumulated (read two, write one).
struct RingAttentionInput {
    double tokens = 0;        // T = microbatch x S / cp tokens this rank holds (2c per sequence)
    double microbatch = 1;
    double heads = 0;         // query heads on this GPU
    double kv_width = 0;      // K (or V) width on this GPU: kv heads on this rank x head dim
    double head_dim = 0;
    double element_bytes = 2;
    int cp = 1;
    AttentionKernel kernel = AttentionKernel::flash;
    bool dropout = false;
    // PyTorch's ring (torch.distributed.tensor.experimental._attention, convert_to_f32 on by
    // default) rather than Transformer Engine's: each step's output is cast to fp32 and merged by
    // eager ops (out - sigmoid(lse_step - lse) * (out - out_step): 38 bytes per output element
    // where TE's merge reads and writes 16-bit values), the K/V are concatenated into one buffer
    // at every step but the last (only the first step's is sent), and the backward accumulates dQ and dK/dV in fp32 and sends the dK/dV so
    // far in fp32. Its K/V do not go round the ring: the first step all-gathers them (rotate
    // method ALL_GATHER, PyTorch's default and torchtitan's), beside that step's kernel only; the
    // dK/dV go round one hop per step. The caller passes the K/V width the model hands the
    // attention (torchtitan repeats the KV heads to the query heads before SDPA, so its ring
    // carries them repeated).
    bool torch_ring = false;
    // The all-gather way instead of a ring (Llama 3, Dubey et al. 2024, sec. 3.3.2; tessel run):
    // the K/V of every rank are all-gathered before the attention and kept for the backward; each
    // of the rank's two chunks (c tokens at position g of every sequence) runs as one kernel over
    // its c queries and the (g + 1) c keys up to its end; the backward's dK/dV of the whole
    // sequence are reduce-scattered to their owners after the kernels, K and V (dK and dV) as a
    // collective each. Nothing hides them: the kernels need the whole K/V first, and the owners
    // need the sum after. Megatron's --cp-comm-type all_gather (Transformer Engine's
    // AttnFuncWithCPAndKVAllGather) gathers K and V the same way; were it to gather them again
    // for the backward instead of keeping them, that pair of all-gathers is not priced here.
    bool all_gather = false;
};
struct RingAttentionCost {
    PassCost forward, backward;         // kernels and merges in compute_s, the unhidden ring in cp_comm_s
    double forward_bytes_sent = 0;      // bytes this rank sends over the ring (and receives)
    double backward_bytes_sent = 0;
    AttentionShape first_step, earlier_step, later_step;  // the kernel shapes
};
RingAttentionCost ring_attention_cost(const RingAttentionInput& in, const ComputeModel& gpu, const CommGroup& ring);
// The same for RingAttentionInput::all_gather (ring_attention_cost calls it for that input). The
// shapes: first_step the rank's chunk at position 0's kernel, later_step the one at 2cp - 1
// (rank 0's two), earlier_step unused (zero).
RingAttentionCost all_gather_attention_cost(const RingAttentionInput& in, const ComputeModel& gpu,
                                            const CommGroup& group);

// Seconds of the optimizer step over `parameters` (this GPU's shard): Adam streams the fp32
// master weights, both moments and the gradient, and writes the 16-bit weights back.
double optimizer_time(double parameters, Precision precision, const ComputeModel& gpu);

// Seconds of zeroing a gradient buffer of `parameters` elements of `bytes` each, once per step
// (SimulateOptions::zero_gradient_buffer): one write.
double gradient_zeroing_time(double parameters, double bytes, const ComputeModel& gpu);

// Seconds of folding one microbatch's weight gradients into the accumulator when the wgrad GEMM
// does not accumulate in place (Megatron-LM before --gradient-accumulation-fusion, DeepSpeed,
// PyTorch autograd): a separate add per parameter tensor reads the fresh `gradient_bytes`-wide
// gradient and reads and writes the `accumulator_bytes`-wide accumulator.
double gradient_accumulation_time(double parameters, double tensors, double gradient_bytes, double accumulator_bytes,
                                  const ComputeModel& gpu);

}  // namespace tessel
