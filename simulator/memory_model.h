// Memory per GPU: model states by ZeRO stage (Rajbhandari et al. 2020, §3 and Fig. 1) and
// activations by recompute mode and sequence parallelism (Korthikanti et al. 2022, §4, Table 2),
// held for as many microbatches as the pipeline schedule keeps in flight.
//
// Korthikanti's per-layer count, 16-bit activations, dropout, unfused attention, in bytes:
//   attention  11sbh + 5as²b    (LN out 2, Q and K 4, V 2, proj input 2, dropout mask 1; softmax 2,
//                                its dropout mask 1, dropout output 2 per a·s²·b)
//   MLP        19sbh            (up input 2, GeLU input 8, GeLU output 8, dropout mask 1)
//   norms       4sbh            (the two layer-norm inputs)
// Generalised here term by term, so each shape keeps its meaning:
//   - Q is a·d wide and K, V are kv·d wide (GQA); with tp > kv heads each rank keeps one KV head.
//   - The MLP stores the activation's input (f wide, 2f for SwiGLU's gate and up) and its output
//     (f wide) instead of 4h and 4h.
//   - Flash attention keeps no s² tensor: only its output (the projection's input, counted once)
//     and the fp32 log-sum-exp (4·a·s·b bytes); dropout inside it is regenerated from the seed.
//   - Dropout masks (1 byte per element) are kept only for models that train with dropout; this
//     simulator assumes the GPT family (learned positions) does and the RoPE family does not.
//   - Tensor parallelism splits the Q/K/V, attention, projection-input and MLP-inner terms by t;
//     sequence parallelism also splits the rest (norm inputs, norm outputs, dropout masks).
//   - Selective recompute drops the s² terms; full recompute keeps only each layer's input
//     (2sbh, /t with sequence parallelism) plus one layer's full set while it is recomputed.
#pragma once
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/plan.h"
#include "simulator/result.h"

namespace tessel {

struct ActivationOptions {
    bool flash_attention = true;  // fused attention kernel: no s x s tensor is stored
    bool dropout = true;          // dropout masks are stored
    // The loss keeps the 16-bit logits for its backward (a fused classifier) rather than the
    // fp32 softmax (the eager cross entropy).
    bool fused_cross_entropy = false;
    // The eager loss is PyTorch's F.cross_entropy on an fp32 copy of the logits (torchtitan), not
    // Megatron's vocabulary-parallel loss: see SimulateOptions::torch_cross_entropy.
    bool torch_cross_entropy = false;
    // Cross entropies evaluated on the logits after the backward for logged metrics
    // (SimulateOptions::metric_cross_entropies): each holds an fp32 copy and its log_softmax.
    int metric_cross_entropies = 0;
    // Gradients reduced in fp32 (SimulateOptions::grad_reduce_in_fp32): under ZeRO-0/1 the full
    // gradient accumulates in an fp32 buffer (model_state_bytes); under ZeRO-3 the gathered layer's
    // 16-bit gradient is copied to fp32 before its reduce-scatter, and both are live.
    bool grad_reduce_in_fp32 = false;
    // In an fp8 run the GEMMs' inputs are kept in fp8 (SimulateOptions::fp8_saves_gemm_inputs).
    bool fp8_saves_gemm_inputs = true;
    // Activations of the first N layers offloaded to host memory (SimulateOptions::cpu_offload_layers).
    int cpu_offload_layers = 0;
    // The interleaved schedule's order at m = pp (SimulateOptions::all_forwards_first_at_m_equal_pp).
    bool all_forwards_first_at_m_equal_pp = false;
    // Context parallelism through PyTorch's ring (SimulateOptions::torch_context_parallel): fp32
    // output and gradient accumulators, packed sends, K/V repeated to the query heads.
    bool torch_context_parallel = false;
    // The all-gather way (SimulateOptions::all_gather_context_parallel): the gathered K/V are kept.
    bool all_gather_context_parallel = false;
    // With sequence parallelism, the inputs of QKV and of the MLP's up projection are kept as
    // gathered (whole sequence) for their weight gradients, as PyTorch's tensor parallelism keeps
    // them, rather than sharded and gathered again in the backward (Megatron, Transformer Engine:
    // SimulateOptions::tp_backward_overlap).
    bool keeps_gathered_tp_inputs = false;
};
// The simulator's choice for a model: flash attention, dropout for learned-position (GPT) models.
ActivationOptions default_activation_options(const ModelSpec& m);

// Bytes a chunk of `layers` layers keeps on the GPU between one microbatch's forward and backward:
// the first layers_in_recompute_mode(p, layers) keep `stored` bytes, the rest `full`; with CPU
// offload the first N layers' activations go to host memory and only the one in transit stays.
double chunk_activation_bytes(const Plan& p, int layers, double stored, double full, int offloaded_layers);

// Bytes one transformer layer keeps for the backward pass, per microbatch, per GPU, without any
// recomputation (tokens per GPU = microbatch x seq / cp).
double layer_activation_bytes(const ModelSpec& m, const Plan& p, const ActivationOptions& o);
// The same under the plan's recompute mode (what stays stored between forward and backward).
double layer_stored_activation_bytes(const ModelSpec& m, const Plan& p, const ActivationOptions& o);

// Bytes the context-parallel ring attention of one layer holds beside the stored activations, per
// GPU, at its peak (forward or backward).
double ring_attention_buffer_bytes(const ModelSpec& m, const Plan& p, const ActivationOptions& o);

// Model states for `params` parameters of one GPU's model part, sharded by ZeRO over `shard`
// data-parallel ranks: 16-bit weights and gradients (2Ψ + 2Ψ) and Adam's fp32 master weights,
// momentum and variance (K = 12 bytes per parameter); fp32 training keeps 4Ψ + 4Ψ + 8Ψ.
// `fp32_gradients`: a 16-bit run whose unsharded gradients (ZeRO-0/1) accumulate in an fp32
// buffer, 4Ψ instead of 2Ψ: Megatron's main_grad buffer with bf16 (Megatron Core's distributed
// optimizer guide: "bf16 parameters, fp32 gradients" take 18 bytes per parameter, 6 + 12/d
// distributed), DeepSpeed's bf16 optimizer's fp32 gradient copies, FSDP2's accumulated unsharded
// gradients in its fp32 reduce dtype. Under ZeRO-2/3 the gradient shard is counted as before: FSDP's
// fp32 shard is its own master weight, which K already holds.
struct ModelStateBytes {
    double weights = 0, gradients = 0, optimizer = 0;
    double total() const { return weights + gradients + optimizer; }
};
ModelStateBytes model_state_bytes(double params, int zero_stage, int shard, Precision precision,
                                  bool fp32_gradients = false);

// Parameters one GPU of pipeline rank `pp_rank` holds (all its chunks, its share of the tensor-
// parallel split, embeddings on the first stage and the LM head on the last).
double parameters_on_rank(const ModelSpec& m, const Plan& p, int pp_rank);
// Parameters of one transformer layer on one tensor-parallel rank (norms replicated).
double layer_parameters_per_tp_rank(const ModelSpec& m, int tp);
// The word embedding's (or the LM head's) parameters on one TP rank: vocab-parallel, V h / tp.
double vocab_parameters_per_tp_rank(const ModelSpec& m, int tp);
// m with its vocabulary padded as the trainer pads it: up to a multiple of multiple x tp
// (SimulateOptions::vocab_padding_multiple; 1 leaves it as it is).
ModelSpec with_padded_vocabulary(const ModelSpec& m, int tp, int multiple);

// Everything on one pipeline rank, in bytes.
struct RankMemory {
    ModelStateBytes states;
    double activations = 0;  // peak stored activations over the schedule, plus the working set
    double buffers = 0;      // communication buffers, gathered ZeRO-3 layers, runtime reserve
    double total() const { return states.total() + activations + buffers; }
};
std::vector<RankMemory> memory_per_rank(const ModelSpec& m, const ClusterSpec& c, const Plan& p, const ActivationOptions& o);
// The rank that needs the most, in GiB.
MemoryBreakdown peak_memory(const ModelSpec& m, const ClusterSpec& c, const Plan& p, const ActivationOptions& o);

// Memory the CUDA context, NCCL communicators and the cuBLAS workspace take on every GPU before
// the model allocates anything (about 1 GiB measured on DGX nodes with a few communicators); a
// cluster profile's runtime_reserved_GiB replaces it (hardware_efficiency.h).
inline constexpr double kRuntimeReservedBytes = 1.0 * 1024 * 1024 * 1024;

}  // namespace tessel
