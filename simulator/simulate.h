// The simulator's entry points: memory, a fast lower bound, and the event-driven step.
#pragma once
#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/plan.h"
#include "simulator/layer_cost.h"
#include "simulator/result.h"

namespace tessel {

struct ActivationOptions;  // simulator/memory_model.h

struct SimulateOptions {
    bool record_trace = false;
    double memory_headroom = 0.0;  // fraction of GPU memory kept free when judging `fits`
    // Framework features, named after the Megatron-LM flags that switch them on; the defaults are
    // what a current Megatron-Core or FSDP run does out of the box.
    bool overlap_grad_reduce = true;    // gradient buckets reduce during the backward pass
    // DeepSpeed's pipeline engine (deepspeed/runtime/pipe/engine.py): with more than one pipeline
    // stage its schedule reduces the gradients after the last microbatch's backward (ReduceGrads),
    // whatever overlap_comm says; with one stage the ZeRO engine overlaps as overlap_grad_reduce says.
    bool reduce_after_pipeline_flush = false;
    bool overlap_param_gather = true;   // ZeRO-1/2 parameter all-gather hides in the next forward
    bool tp_comm_overlap = false;       // TP collectives run beside their GEMMs (Transformer Engine)
    // The backward's TP communication that no GEMM waits for runs beside one (Megatron-LM since
    // 2021-09, Transformer Engine; OverlapOptions::tp_backward_overlap). false: PyTorch's tensor
    // parallelism, DeepSpeed, older Megatron-LM.
    bool tp_backward_overlap = true;
    // tp_comm_overlap as PyTorch's async TP (torchtitan's enable_async_tensor_parallel: fused
    // all-gather-matmul and matmul-reduce-scatter over symmetric memory, copy engines, no SMs
    // held) instead of Transformer Engine's userbuffers, whose reduce-scatter and bulk overlaps
    // hold 16 SMs.
    bool tp_overlap_symmetric_memory = false;
    bool grad_reduce_in_fp32 = false;   // gradients travel as fp32 (Megatron's bf16 default) instead of 16-bit
    double grad_bucket_parameters = 40e6;  // Megatron DDP's default bucket (40M parameters)
    // The bucket grows with the data-parallel size to max(grad_bucket_parameters, 1M x dp)
    // parameters, so that a bucket's ring reduce-scatter stays bound by bandwidth rather than by
    // its dp - 1 latencies (Megatron-Core's DistributedDataParallel since commit 0fda386c04,
    // 2024-04-11: bucket_size = max(40000000, 1000000 * dp_group.size()), the group without CP).
    // false: every bucket holds grad_bucket_parameters (DeepSpeed's reduce_bucket_size).
    bool grad_buckets_grow_with_dp = true;
    // The interleaved schedule's sends and receives run beside the next chunk's compute
    // (Megatron-Core's overlap_p2p_comm: on by default in current releases, whose arguments.py
    // offers only --no-overlap-p2p-communication; older ones had it off unless
    // --overlap-p2p-communication was given). GPipe and 1F1B always hold the compute stream until
    // each send lands (pipeline_sim.h).
    bool overlap_p2p_comm = true;
    // Without sequence parallelism, each tensor-parallel rank sends 1/tp of the pipeline boundary
    // and the receiving stage all-gathers it inside its node (Megatron-LM's
    // scatter_gather_tensors_in_pipeline, on by default from 2021-02-16, commit 72e4230bb5, until
    // the pipeline code moved into Megatron-Core, commit 3c92fa93b5 of 2023-03-23; DeepSpeed's
    // pipeline engine partitions its activations and gradients the same way). false: every rank
    // sends the whole [s, b, h] tensor (Megatron-Core's get_tensor_shapes divides the sequence by
    // tp only under sequence parallelism). The all-gather on the NVLink side is not priced.
    bool p2p_scatter_gather = false;
    // The wgrad GEMM adds into the gradient accumulator in place (Megatron-LM's
    // --gradient-accumulation-fusion, on by default since 2022-02; llm.c). false: each microbatch's
    // weight gradients are written fresh and added by separate kernels (older Megatron-LM,
    // DeepSpeed, PyTorch autograd), over the shard under ZeRO-2/3.
    bool gradient_accumulation_fusion = true;
    // The trainer keeps a persistent gradient buffer and zeroes it once per step (Megatron-LM:
    // train_step calls zero_grad_buffer on every model chunk, a zero_() of the whole buffer, fp32 for
    // 16-bit runs; llm.c: a memset of its bf16 gradients before the first microbatch). false: the
    // gradients are freed instead (PyTorch's zero_grad(set_to_none=True): FSDP, torchtitan,
    // Composer).
    bool zero_gradient_buffer = true;
    // ZeRO-2 as FSDP runs it (SHARD_GRAD_OP; FSDP2 with reshard_after_forward=False): the weights
    // rest sharded, are all-gathered layer by layer in every forward (prefetched beside compute) and
    // kept through the backward, which reduce-scatters layer by layer. false: ZeRO-2 as DeepSpeed
    // and Megatron's distributed optimizer run it (gradient buckets; the updated weights gathered
    // after the optimizer step).
    bool zero2_layerwise_gather = false;
    // ZeRO-3/FSDP backward prefetch (sharded_pass.h): the next block's weight gather is issued
    // before this block's gradient reduce-scatter (FSDP2; FSDP1's BACKWARD_PRE and, with the CPU
    // ahead, BACKWARD_POST), so it runs beside this block's backward. Off by default: each gather
    // then waits for the previous block's reduce-scatter. The published FSDP runs of
    // configs/validation are slower than the prefetched order predicts (multi-node llm-foundry and
    // torchtitan by 6-16%) and match the serialized one; the cost the serialized order stands in
    // for is not identified (reports/validation.md).
    bool backward_prefetch = false;
    // ZeRO-3/FSDP as FSDP2 runs it (fully_shard: torchtitan), whose collectives work on buffers of
    // their own that the compute stream fills and empties: after each block's all-gather it copies
    // the gathered weights out into the block's parameters before the block runs
    // (foreach_all_gather_copy_out: one read and one write of the unsharded weights), and after the
    // block's backward it copies the gradients into the reduce-scatter's input in the reduce
    // precision (foreach_reduce_scatter_copy_in: a read of the 16-bit gradients and a write of the
    // reduced ones). Off: the collectives work in the parameters' and gradients' own storage
    // (FSDP1's flat parameter, DeepSpeed ZeRO-3, Megatron-FSDP).
    bool fsdp2_buffer_copies = false;
    // Attention as one fused flash-style kernel; false: Megatron-LM's pre-2022 unfused attention
    // (batched GEMMs around a softmax and dropout that store the s x s scores).
    bool fused_attention = true;
    // The fused kernel's generation: 2 = FlashAttention-2 class (FlashAttention-2, PyTorch SDPA's
    // flash backend, cuDNN's fused attention with cudnn_attention below); 1 = FlashAttention-1
    // class (FlashAttention v1, the Triton FlashAttention — llm-foundry's attn_impl "triton").
    int flash_attention_version = 2;
    // A FlashAttention-2-class kernel that is cuDNN's fused attention (AttentionKernel::cudnn):
    // Transformer Engine's choice on Hopper and newer, llm.c's with USE_CUDNN. It runs at the GPU's
    // cuDNN figures where the cluster gives them, else as FlashAttention-2.
    bool cudnn_attention = false;
    // The run applies the model's dropout (the GPT family's attention and hidden dropout 0.1, as
    // Megatron-LM and DeepSpeed default to). false: a trainer that runs GPT-style models without it
    // (llm.c has no dropout; llm-foundry's MPT configurations set every dropout to 0).
    bool model_dropout = true;
    // Elementwise kernels fused (Megatron's fused kernels, Transformer Engine, llm.c) or one per
    // eager PyTorch op (layer_cost.h, OverlapOptions).
    bool fused_elementwise = true;
    // RMSNorm as eager PyTorch ops in fp32 (OverlapOptions::eager_rmsnorm) instead of one kernel.
    bool eager_rmsnorm = false;
    // Loss as one fused classifier kernel (llm.c; Megatron --cross-entropy-loss-fusion), or the
    // eager fp32 cross entropy that Megatron and PyTorch run by default.
    bool fused_cross_entropy = false;
    // The eager loss is PyTorch's F.cross_entropy on an fp32 copy of the logits (torchtitan): its
    // log_softmax saves its fp32 output, and the backward creates the gradient of that output and
    // then the logits' gradient beside it, out of place (12 bytes per logit live at once). Megatron's
    // vocabulary-parallel loss turns its saved fp32 softmax into the gradient in place. Memory only:
    // both read and write the logits about as often.
    bool torch_cross_entropy = false;
    // Cross entropies over each microbatch's logits that the trainer evaluates outside autograd
    // for its logged training metrics (Composer, llm-foundry's trainer: 2; Megatron-LM,
    // torchtitan, DeepSpeed, llm.c log the loss itself: 0). OverlapOptions has the cost.
    int metric_cross_entropies = 0;
    // The embedding and LM head hold the vocabulary padded to a multiple of this times TP
    // (Megatron-LM's --make-vocab-size-divisible-by, default 128, and vocab_size_with_padding in
    // build_tokenizer.py: the vocabulary-parallel slices stay aligned; llm.c pads to 128 alone,
    // with no TP), and the padded rows cost GEMM time, logits and memory as the real ones do.
    // 1: no padding (torchtitan, llm-foundry, whose model configs hold padded sizes already).
    // The model FLOPs behind MFU count the model's own vocabulary.
    int vocab_padding_multiple = 128;
    // fp8 runs keep the fp8 cast of each GEMM's input for its weight gradient, as Transformer
    // Engine does (1 byte per element where bf16 keeps 2); false: the 16-bit input is kept and cast
    // again in the backward (torchao's Float8Linear, torchtitan's float8).
    bool fp8_saves_gemm_inputs = true;
    // fp8 runs cast each weight to fp8 (and its transposed copy) once per step and reuse it for the
    // step's later microbatches: Megatron-Core's Transformer Engine layers pass is_first_microbatch
    // (extensions/transformer_engine.py), so Transformer Engine caches the fp8 weight after the first.
    // false: every microbatch's forward casts it again (torchao's Float8Linear; Transformer Engine
    // layers called without is_first_microbatch, as llm-foundry's are).
    bool fp8_caches_weights = true;
    // fp8 runs gather sharded weights in fp8: 1 byte per element on the wire where bf16 takes 2 —
    // ZeRO-3/FSDP's layer gathers and the distributed optimizer's gather of the updated weights
    // (torchao's enable_fsdp_float8_all_gather, Megatron's --fp8-param-gather). Off: bf16 gathers.
    bool fp8_weight_gather = false;
    // Activations of the first N transformer layers offloaded to host memory after their forward
    // and brought back before their backward (Megatron-Core's cpu_offloading_num_layers, Transformer
    // Engine's CPU offload): each copy runs on its own stream over gpu.host_bandwidth_GBps beside the
    // next layer's forward (or the previous layer's backward), and stalls the compute stream by
    // what it takes beyond that layer. Megatron-Core allows it without pipeline parallelism only,
    // for fewer layers than the model has; so does simulate().
    int cpu_offload_layers = 0;
    // Interleaved schedule with as many microbatches as pipeline ranks: every forward before any
    // backward on every rank (Megatron-LM's forward_backward_pipelining_with_interleaving until
    // 2024-11-01, commit 4295be1a6c), or the usual warm-up of (v - 1) pp + 2 (pp - rank - 1)
    // forwards (Megatron-Core since, and PyTorch's ScheduleInterleaved1F1B, torchtitan), with which
    // the last rank runs each microbatch's loss and backward in turn.
    bool all_forwards_first_at_m_equal_pp = false;
    // Context parallelism through PyTorch's context_parallel (torchtitan) rather than Transformer
    // Engine's ring: the K/V all-gathered at the first step, fp32 merges by eager ops, fp32
    // gradient accumulators whose dK/dV go around the ring, and the KV heads repeated to the query
    // heads before the attention (layer_cost.h, RingAttentionInput::torch_ring).
    bool torch_context_parallel = false;
    // Context parallelism the all-gather way (Llama 3's, and tessel run's): K/V all-gathered before
    // the attention and kept for the backward, dK/dV reduce-scattered after it, neither hidden
    // (layer_cost.h, RingAttentionInput::all_gather). Not with torch_context_parallel.
    bool all_gather_context_parallel = false;
};

// The options as the simulation-result JSON records them ("options"): every field but
// record_trace, under its own name.
json to_json(const SimulateOptions& o);
// Reads them back (`file`'s "options"): keys left out keep their defaults; InputError naming the
// key for a wrong type or range.
SimulateOptions parse_simulate_options(const json& options, const std::string& file);

// The attention kernel the options name.
AttentionKernel attention_kernel(const SimulateOptions& o);

// The kernel and overlap choices block_models() takes, from the options and the model.
OverlapOptions overlap_options(const ModelSpec& m, const SimulateOptions& o);

// Memory per GPU by the ZeRO stage, recompute mode, sequence parallelism and the microbatches
// the schedule holds in flight (GiB).
MemoryBreakdown estimate_memory(const ModelSpec& m, const ClusterSpec& c, const Plan& p);
// The same with the options that change what is stored (the attention kernel).
MemoryBreakdown estimate_memory(const ModelSpec& m, const ClusterSpec& c, const Plan& p, const SimulateOptions& o);
// What the options store per layer, as estimate_memory counts it.
ActivationOptions activation_options(const ModelSpec& m, const SimulateOptions& o);

// A cheap bound no simulated step time can beat (compute at peak efficiency plus the bubble),
// for pruning the search.
double step_time_lower_bound(const ModelSpec& m, const ClusterSpec& c, const Plan& p);

// InputError unless the cluster's GPU has a positive peak for the plan's precision (the key
// gpu.peak_tflops.<precision> of cluster file `file`, or of the cluster's name when empty):
// without it no time and no utilization can be computed.
void check_precision_peak(const ClusterSpec& c, Precision p, const std::string& file = "");

// Simulates one optimizer step of the plan. The plan must already satisfy validate_plan, and the
// cluster must have a peak for its precision (check_precision_peak; InputError otherwise).
// Unfused attention on a GPU that runs no fused flash-style kernel (GpuSpec::flash_attention
// false: Volta), whatever the stack would pick on a newer GPU.
void use_gpu_attention(SimulateOptions& o, const GpuSpec& gpu);

SimulationResult simulate(const ModelSpec& m, const ClusterSpec& c, const Plan& p, const SimulateOptions& o = {});

}  // namespace tessel
