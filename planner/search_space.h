// The search space of `tessel plan`: the values each dimension of a Plan may take for one model on
// one cluster, before any rule or memory check. Dimensions: TP, PP, CP (DP fills the rest of the
// GPUs), microbatch size, virtual pipeline stages, recompute, sequence parallelism, placement and
// ZeRO stage. Precision and the schedule are not searched: the precision is the request's, the
// schedule follows from the virtual stages (1F1B, or interleaved when v > 1; GPipe holds every
// microbatch's activations for the same bubble, so 1F1B dominates it).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/plan_choices.h"
#include "core/options.h"
#include "core/rank_groups.h"
#include "simulator/simulate.h"

namespace tessel {

// What the user asks the planner to plan, after defaults are filled in.
struct PlanRequest {
    int num_gpus = 0;           // world size: tp*pp*dp*cp must equal it
    int global_batch_size = 0;  // sequences per optimizer step
    int seq_length = 0;
    Precision precision = Precision::bf16;
};

// The framework a plan will be exported to limits what the search may choose, so the winner runs
// there as planned (each limit's source: shared reference config-formats.md).
enum class Framework { any, megatron, deepspeed, torchtitan };
Framework parse_framework(const std::string& s);  // megatron | deepspeed | torchtitan; InputError otherwise
const char* to_string(Framework f);

struct SpaceLimits {
    std::vector<int> zero_stages{0, 1, 2, 3};
    bool zero_with_pipeline_max1 = false;  // ZeRO-2/3 only without pipeline parallelism
    bool context_parallel = true;
    bool interleaving = true;
    bool uneven_pipeline = true;            // first/last stages may differ
    bool shards_over_cp = false;            // CP > 1 always shards parameters (torchtitan's FSDP mesh)
    bool ddp_only_1d = false;               // ZeRO 0 with DP > 1 only when TP = PP = CP = 1 (torchtitan's DDP)
    bool pipeline_fsdp_gathers_once = false;  // with PP > 1 sharding is FSDP that keeps the gathered weights
                                              // and unsharded gradients through the step: ZeRO 1's accounting
    enum class SequenceParallel { search, off, with_tp } sequence_parallel = SequenceParallel::search;
    bool block_recompute = true;            // full recompute of only the first N layers of each chunk
    bool kv_heads_split_by_tp = false;      // TP must divide the KV heads (no KV head replicated over TP ranks)
    // The sequence must divide by 2 x TP x CP whatever the plan (torchtitan's parallelize_llama
    // asserts seq_len % ParallelDims.seq_len_divisor, tp * cp * 2, even without SP or CP).
    bool seq_divisible_by_2_tp_cp = false;
    // A 16-bit plan with TP or PP needs sharded data parallelism (DP > 1 sharded, or CP > 1):
    // torchtitan casts to bf16 only inside FSDP's fully_shard, or with autocast when there is no
    // TP and no PP; otherwise it trains in fp32 (maybe_enable_amp).
    bool mixed_precision_needs_fsdp = false;
    std::string placement;                  // empty: search placements; else the framework's fixed order
};
// any: everything. Megatron-LM: ZeRO 0 or 1 (--use-distributed-optimizer shards the optimizer
// state only), rank order tp-cp-dp-pp (its default RankGenerator order "tp-cp-ep-dp-pp"), and
// block recompute (--recompute-method block), which DeepSpeed and torchtitan cannot express.
// DeepSpeed (with Megatron-DeepSpeed for TP/PP): its pipeline engine runs non-interleaved 1F1B
// and only ZeRO 0-1 with PP > 1; no ring context parallelism; no Megatron-SP; mesh order
// model-data-pipe = tp-dp-pp; pipeline stages of equal layer counts only: Megatron-DeepSpeed's
// GPTModelPipe partitions with partition_method "type:transformer" (deepspeed/runtime/pipe/module.py,
// utils.partition_balanced), which puts an uneven split's extra layers on the first stages, not
// the split tessel simulates. torchtitan v0.2: ZeRO 0 (DDP, data_parallel_replicate_degree),
// 2 or 3 (FSDP data_parallel_shard_degree without / with resharding after forward), SP always on
// with TP, pipeline stages as pipeline_parallel_layers_per_stage (the ends may hold fewer), mesh [pp, dp, cp, tp]; with
// CP > 1 FSDP always shards over the CP ranks, so only ZeRO 2 or 3 there. Its bf16 comes from FSDP
// (or autocast without TP and PP), so a bf16 plan with TP or PP has DP > 1 or CP > 1. Its DDP runs only as the
// sole parallelism (parallelize.py: "DDP has not supported > 1D parallelism"). With PP > 1 its FSDP
// does not reshard after forward (fsdp_reshard_after_forward "default") and PyTorch's pipeline
// schedules sync gradients only after the last microbatch: weights gathered once per step, 16-bit
// weights and gradients whole, fp32 state sharded, one reduce-scatter after the flush. The search
// simulates that as ZeRO 1 reducing after the flush, and exports it as FSDP.
SpaceLimits limits_for(Framework f);

// The software stack the exported configuration runs, for the simulator, so the ranked step times
// are the framework's: its defaults (simulator/software_stack.h) with the flags the exporter
// writes (any: the simulator's defaults). Megatron-LM: the script passes --overlap-grad-reduce
// and --overlap-param-gather and no --grad-reduce-in-bf16, so bf16 gradients reduce in fp32.
// DeepSpeed: overlap_comm is set, which its pipeline engine ignores with pipeline stages (it
// reduces after the last microbatch); separate accumulation kernels into fp32, ZeRO-1/2's weights
// gathered after the step. torchtitan (training.compile off, mixed_precision_reduce float32,
// fsdp_reshard_after_forward "never" for ZeRO-2): eager elementwise ops, fp32 reduction, ZeRO-2's
// weights gathered layer by layer in the forward, FSDP's separate accumulation kernels.
SimulateOptions simulate_options_for(Framework f, Precision precision);

// TP collectives overlapped with their GEMMs inside a node (plan and simulate --tp-comm-overlap):
// Megatron's --tp-comm-overlap (Transformer Engine's userbuffers) or torchtitan's async TP
// (parallelism.enable_async_tensor_parallel: Inductor's micro-pipelined all-gather and
// reduce-scatter matmuls over symmetric memory), which torchtitan refuses without compiling the
// model (compile.enable with "model" in compile.components), so its elementwise ops run fused as
// well. InputError for DeepSpeed, which has neither; `flag_context` names the flags in the message.
void apply_tp_comm_overlap(SimulateOptions& o, Framework f, const std::string& flag_context);
// InputError for Transformer Engine's overlap (Megatron, or no framework: the simulator's
// Megatron-Core defaults) on a GPU below compute capability 8.0, which Transformer Engine does not
// run on; gpu.flash_attention false marks such a GPU. `cluster` names the cluster in the message.
void check_tp_comm_overlap_gpu(Framework f, const GpuSpec& gpu, const std::string& cluster,
                               const std::string& flag_context);

// InputError where the framework has no setting for the precision: torchtitan's
// training.mixed_precision_param takes bfloat16 or float32, so fp16 (a V100's default) cannot be
// exported to it. `cluster` names the cluster in the message.
void check_framework_precision(Framework f, Precision precision, const std::string& cluster);

// The default global batch: 2^21 tokens (about 2M: between GPT-3 175B's 3.2M and the 1-2M of
// smaller runs; Brown et al. 2020 Table 2.1) divided by the sequence length, but at least one
// sequence per 8 GPUs, then raised to odd(N) * 2^k, the smallest such value, where odd(N) is the
// odd part of the GPU count — so that every data-parallel size the GPU count allows divides it
// (384 GPUs, sequence 2048: 3 * 2^9 = 1536, the batch Narayanan et al. 2021 used for GPT-3).
int default_global_batch(int seq_length, int num_gpus);
// Whether that default is set by its floor of one sequence per 8 GPUs rather than by ~2M tokens.
bool default_batch_set_by_gpus(int seq_length, int num_gpus);

// The request with the model's sequence length, the default batch and the GPU's default
// precision (default_precision) filled in where the caller left 0 (or no precision).
PlanRequest complete_request(const ModelSpec& m, const ClusterSpec& c, int global_batch_size, int seq_length,
                             std::optional<Precision> precision = std::nullopt);

// Placements (innermost dimension first) worth simulating for these sizes. TP always goes first:
// its collectives sit on every layer's critical path. The orders of CP, DP and PP that follow are
// kept only when they pack different groups into a node (same nodes spanned and members per node
// for every dimension), so size-1 dimensions do not multiply the search. Megatron's default
// "tp-cp-dp-pp" comes first.
std::vector<std::string> distinct_placements(const ParallelSizes& sizes, int gpus_per_node);

}  // namespace tessel
