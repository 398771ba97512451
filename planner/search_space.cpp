#include "planner/search_space.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/errors.h"
#include "simulator/software_stack.h"

namespace tessel {

Framework parse_framework(const std::string& s) {
    if (s == "megatron") return Framework::megatron;
    if (s == "deepspeed") return Framework::deepspeed;
    if (s == "torchtitan") return Framework::torchtitan;
    throw InputError("--emit: expected one of megatron | deepspeed | torchtitan, got \"" + s + "\"");
}

const char* to_string(Framework f) {
    switch (f) {
        case Framework::any: return "any";
        case Framework::megatron: return "megatron";
        case Framework::deepspeed: return "deepspeed";
        case Framework::torchtitan: return "torchtitan";
    }
    return "?";
}

SpaceLimits limits_for(Framework f) {
    SpaceLimits l;
    switch (f) {
        case Framework::any: break;
        case Framework::megatron:
            l.zero_stages.clear();
            for (int z = 0; z <= kMegatronLM.max_zero_stage; ++z) l.zero_stages.push_back(z);
            l.placement = "tp-cp-dp-pp";
            l.block_recompute = kMegatronLM.block_recompute;
            // num_query_groups % TP == 0 up to core_v0.15; a divisor of TP only from core_v0.16
            // (transformer_config.py): the script keeps to what every release runs.
            l.kv_heads_split_by_tp = true;
            break;
        case Framework::deepspeed:
            // No ZeRO-0: bf16 weights with the fp32 gradient accumulation priced here
            // (data_types.grad_accum_dtype) need ZeRO on. Without it DeepSpeed raises
            // (engine.py _do_optimizer_sanity_check, since v0.18.5) or, before, ran its
            // BF16_Optimizer, which shards the fp32 master weights as ZeRO-1 does. ZeRO-1 moves
            // the bytes of ZeRO-0's all-reduce (reduce-scatter, then all-gather) and holds less;
            // over one data-parallel rank it is ZeRO-0.
            l.zero_stages = {1, 2, 3};
            l.zero_with_pipeline_max1 = kDeepSpeed.max_zero_stage_with_pipeline <= 1;
            l.context_parallel = false;
            l.interleaving = kDeepSpeed.interleaves;
            l.uneven_pipeline = false;  // its partition_balanced splits otherwise (search_space.h)
            if (!kDeepSpeed.megatron_sequence_parallel) l.sequence_parallel = SpaceLimits::SequenceParallel::off;
            l.block_recompute = kDeepSpeed.block_recompute;
            l.placement = "tp-cp-dp-pp";
            // Megatron-DeepSpeed's ParallelAttention divides num_key_value_heads by the TP size
            // (megatron/model/transformer.py, core.utils.divide), which asserts otherwise.
            l.kv_heads_split_by_tp = true;
            break;
        case Framework::torchtitan:
            l.zero_stages = {0, 1, 2, 3};  // 1 only with PP (pipeline_fsdp_gathers_once)
            // Uneven splits as layers_per_stage with first/last_stage_less_layers (export_torchtitan).
            l.shards_over_cp = true;
            l.ddp_only_1d = true;
            l.mixed_precision_needs_fsdp = true;
            l.pipeline_fsdp_gathers_once = kTorchtitan.pipeline_gathers_once;
            l.sequence_parallel = SpaceLimits::SequenceParallel::with_tp;
            l.block_recompute = kTorchtitan.block_recompute;
            l.placement = "tp-cp-dp-pp";
            // Its Attention views each TP rank's key projection as whole heads of head_dim
            // (xk.view(bs, seqlen, -1, head_dim)), which a share smaller than one KV head cannot fill.
            l.kv_heads_split_by_tp = true;
            l.seq_divisible_by_2_tp_cp = true;
            break;
    }
    return l;
}

SimulateOptions simulate_options_for(Framework f, Precision precision) {
    SimulateOptions o;
    switch (f) {
        case Framework::any: break;
        case Framework::megatron:
            o = stack_defaults(kMegatronLM, precision);
            o.overlap_grad_reduce = o.overlap_param_gather = true;  // the script passes both flags
            break;
        case Framework::deepspeed:
            o = stack_defaults(kDeepSpeed, precision);
            o.overlap_grad_reduce = true;  // zero_optimization.overlap_comm (not with pipeline stages)
            break;
        case Framework::torchtitan:
            o = stack_defaults(kTorchtitan, precision);
            o.zero2_layerwise_gather = true;  // fsdp_reshard_after_forward "never" for ZeRO-2
            // No eager_rmsnorm although compile stays off: the PyTorch torchtitan needs today runs
            // torch.nn.RMSNorm as one fused kernel each way in eager (aten::_fused_rms_norm,
            // pytorch/pytorch#153666, 2025; measured on PyTorch 2.11, reports/gpu/summary.md), not
            // as the composite ops of 2024.
            break;
    }
    return o;
}

void apply_tp_comm_overlap(SimulateOptions& o, Framework f, const std::string& flag_context) {
    if (f == Framework::deepspeed)
        throw InputError(fmt::format("{}: expected --tp-comm-overlap only with megatron (Transformer Engine's userbuffer "
                                     "overlap, --tp-comm-overlap), torchtitan (async TP, enable_async_tensor_parallel) or "
                                     "no framework: DeepSpeed overlaps no TP collective with its GEMMs",
                                     flag_context));
    // torchtitan's async TP needs the compiled model, which the exporter turns on with it where TP
    // runs (TP > 1) and the simulator prices there (layer_cost.cpp), not on a plan without TP.
    o.tp_comm_overlap = true;
}

void check_tp_comm_overlap_gpu(Framework f, const GpuSpec& gpu, const std::string& cluster,
                               const std::string& flag_context) {
    if (f == Framework::torchtitan || f == Framework::deepspeed || gpu.flash_attention) return;
    throw InputError(fmt::format("{}: expected a GPU of compute capability 8.0 or newer: {} of cluster {} (gpu.flash_attention "
                                 "false) does not run Transformer Engine, whose userbuffers overlap the TP collectives",
                                 flag_context, gpu.name, cluster));
}

void check_framework_precision(Framework f, Precision precision, const std::string& cluster) {
    if (f == Framework::torchtitan && precision == Precision::fp16)
        throw InputError(fmt::format("--emit torchtitan: torchtitan trains in bf16 or fp32 (training.mixed_precision_param), "
                                     "not fp16 (the plan's precision on cluster {}): pass --precision fp32, or bf16 on a "
                                     "GPU that has it",
                                     cluster));
}

namespace {
// The two lower bounds of the default global batch: ~2M tokens of sequences, and one sequence per
// 8 GPUs.
long long batch_for_tokens(int seq_length) { return std::max<long long>(1, (1LL << 21) / std::max(1, seq_length)); }
long long batch_for_gpus(int num_gpus) { return (num_gpus + 7LL) / 8; }
}  // namespace

bool default_batch_set_by_gpus(int seq_length, int num_gpus) {
    return batch_for_gpus(num_gpus) > batch_for_tokens(seq_length);
}

int default_global_batch(int seq_length, int num_gpus) {
    const long long b = std::max(batch_for_tokens(seq_length), batch_for_gpus(num_gpus));
    long long odd = std::max(1, num_gpus);
    while (odd % 2 == 0) odd /= 2;
    long long out = odd;
    while (out < b) out *= 2;
    return int(std::min<long long>(out, 1 << 30));
}

PlanRequest complete_request(const ModelSpec& m, const ClusterSpec& c, int global_batch_size, int seq_length,
                             std::optional<Precision> precision) {
    PlanRequest r;
    r.num_gpus = c.num_gpus();
    r.seq_length = seq_length > 0 ? seq_length : m.seq_length;
    if (r.seq_length <= 0) throw InputError("--seq: the model names no sequence length; give --seq");
    r.global_batch_size = global_batch_size > 0 ? global_batch_size : default_global_batch(r.seq_length, r.num_gpus);
    r.precision = precision.value_or(default_precision(c.gpu));
    check_precision_peak(c, r.precision);
    return r;
}

namespace {
// For each dimension: nodes its group (through rank 0) spans and its most members on one node.
// Rank arithmetic as core/rank_groups.h defines it: the group of dimension d through rank 0 is
// k * stride(d) for k < size(d), with strides the products of the sizes inside d.
using Signature = std::array<int, 8>;

Signature node_signature(const char* order, const ParallelSizes& sizes, int gpus_per_node) {
    const char* names[] = {"tp", "cp", "dp", "pp"};
    const int size[] = {sizes.tp, sizes.cp, sizes.dp, sizes.pp};
    Signature s{};
    for (int i = 0; i < 4; ++i) {
        const int stride = placement_stride(order, sizes, names[i]);
        // The node pattern of k * stride repeats every gpus_per_node members at most, so a prefix
        // of two periods shows the most members any node holds; a million-GPU group need not be
        // walked member by member.
        const int scanned = std::min(size[i], 2 * gpus_per_node + 2);
        std::map<int, int> members;  // node -> members of the group on it
        for (int k = 0; k < scanned; ++k) members[int(std::int64_t(k) * stride / gpus_per_node)]++;
        int most = 0;
        for (const auto& [node, count] : members) most = std::max(most, count);
        int nodes = int(members.size());
        if (scanned < size[i])  // consecutive members less than a node apart skip no node
            nodes = stride >= gpus_per_node ? size[i] : int(std::int64_t(size[i] - 1) * stride / gpus_per_node) + 1;
        s[2 * i] = nodes;
        s[2 * i + 1] = most;
    }
    return s;
}
}  // namespace

std::vector<std::string> distinct_placements(const ParallelSizes& sizes, int gpus_per_node) {
    static const char* kOrders[] = {"tp-cp-dp-pp", "tp-cp-pp-dp", "tp-pp-cp-dp",
                                    "tp-dp-cp-pp", "tp-pp-dp-cp", "tp-dp-pp-cp"};
    std::vector<std::string> out;
    if (sizes.world() <= gpus_per_node) return {kOrders[0]};  // one node: every order is the same
    std::set<Signature> seen;
    for (const char* order : kOrders)
        if (seen.insert(node_signature(order, sizes, std::max(1, gpus_per_node))).second) out.push_back(order);
    return out;
}

}  // namespace tessel
