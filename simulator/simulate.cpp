// The simulator's entry points: cost the blocks of each stage, lay the schedule out event by
// event, and read the step's breakdown off the rank that finishes last.
#include "simulator/simulate.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <cmath>

#include <fmt/format.h>

#include "core/accounting.h"
#include "core/errors.h"
#include "core/rank_groups.h"
#include "core/topology.h"
#include "core/units.h"
#include "simulator/comm_cost.h"
#include "simulator/compute_cost.h"
#include "simulator/hardware_efficiency.h"
#include "simulator/layer_cost.h"
#include "simulator/memory_model.h"
#include "simulator/pipeline_sim.h"
#include "simulator/sharded_pass.h"
#include "simulator/topology_cache.h"

namespace tessel {

namespace {

double element_bytes(Precision p) { return p == Precision::fp32 ? 4.0 : 2.0; }

enum class Dim { tp, cp, dp, pp };

// The ranks of the group that holds rank 0 and varies `dims`, in increasing order. A rank is the
// sum of each coordinate times its dimension's stride in the placement, so counting the varied
// coordinates with the largest stride outermost lists the ranks already sorted; a data-parallel
// group of a million-GPU request has 10^5 members, and the planner asks for it per plan.
std::vector<int> group_ranks(const Plan& p, std::initializer_list<Dim> dims) {
    const ParallelSizes sizes{p.tp, p.cp, p.dp, p.pp};
    auto unit = [](Dim d) {
        RankCoords c;
        (d == Dim::tp ? c.tp : d == Dim::cp ? c.cp : d == Dim::dp ? c.dp : c.pp) = 1;
        return c;
    };
    auto size = [&](Dim d) { return d == Dim::tp ? p.tp : d == Dim::cp ? p.cp : d == Dim::dp ? p.dp : p.pp; };
    std::vector<std::pair<int, int>> varied;  // (stride, size), largest stride first
    for (Dim d : dims) varied.emplace_back(rank_of(unit(d), p.placement, sizes), size(d));
    std::sort(varied.begin(), varied.end(), std::greater<>());
    std::vector<int> ranks{0};
    for (const auto& [stride, n] : varied) {
        std::vector<int> grown;
        grown.reserve(ranks.size() * std::size_t(n));
        for (int r : ranks)
            for (int i = 0; i < n; ++i) grown.push_back(r + i * stride);
        ranks = std::move(grown);
    }
    return ranks;
}

// The group along `dims` ("tp", "cp", "cp-dp") that prices the plan: rank 0's where every group
// sits alike (core's groups_sit_alike), else the slowest at `kind` on a 64 MiB buffer (the others
// wait for it at the next data-parallel synchronization: a TP group of 16 on racks of 72 GPUs
// crosses racks in some replicas).
CommGroup pacing_group(const Plan& p, bool alike, std::initializer_list<Dim> dims, const std::string& names,
                       Collective kind, const std::function<CommGroup(const std::vector<int>&)>& make) {
    if (alike) return make(group_ranks(p, dims));
    const double probe_bytes = 64.0 * (1 << 20);
    std::optional<CommGroup> slowest;
    double slowest_s = -1;
    for (const auto& ranks : rank_groups(p.placement, {p.tp, p.cp, p.dp, p.pp}, names)) {
        CommGroup g = make(ranks);
        const double t = collective_time(kind, probe_bytes, g);
        if (t > slowest_s) {
            slowest_s = t;
            slowest = std::move(g);
        }
    }
    return *slowest;
}

// The blocks a model stage runs, in forward order: its first `in_mode` layers under the plan's
// recompute mode, the rest (block recompute leaves them out) as `kept`.
std::vector<const BlockCost*> stage_blocks(const BlockModels& b, const BlockCost& kept, int in_mode, int stage,
                                           int stages, int layers) {
    std::vector<const BlockCost*> out;
    if (stage == 0) out.push_back(&b.embedding);
    for (int i = 0; i < layers; ++i) out.push_back(i < in_mode ? &b.layer : &kept);
    if (stage == stages - 1) out.push_back(&b.head);
    return out;
}

// Weights whose gradients a stage produces: its blocks', with a tied LM head counted once when it
// shares the stage with the embedding (one weight, one gradient).
double stage_gradient_parameters(const std::vector<const BlockCost*>& list, const BlockModels& b, bool tied, int stages) {
    double params = 0;
    for (const BlockCost* x : list) params += x->parameters;
    if (tied && stages == 1) params -= b.head.parameters;
    return params;
}

// Parameter tensors of one transformer layer, one add kernel each when gradient accumulation is
// not fused: fused QKV, projection and the two MLP weights (Megatron fuses the SwiGLU gate and up
// projections), their biases, the two norms and the Q and K norms.
double parameter_tensors_per_layer(const ModelSpec& m) {
    double n = 4 + (m.norm == Norm::layernorm ? 4 : 2);
    n += (m.has_qkv_bias() ? 1 : 0) + (m.has_out_bias() ? 1 : 0) + (m.has_mlp_bias() ? 2 : 0);
    if (m.qk_norm != QkNorm::none) n += 2;
    if (m.sandwich_norms) n += 2;
    if (m.shared_norm) n -= m.norm == Norm::layernorm ? 2 : 1;
    return n;
}

}  // namespace

AttentionKernel attention_kernel(const SimulateOptions& o) {
    if (!o.fused_attention) return AttentionKernel::unfused;
    if (o.flash_attention_version == 1) return AttentionKernel::flash1;
    return o.cudnn_attention ? AttentionKernel::cudnn : AttentionKernel::flash;
}

OverlapOptions overlap_options(const ModelSpec& m, const SimulateOptions& o) {
    OverlapOptions overlap;
    overlap.tp_comm_overlap = o.tp_comm_overlap;
    overlap.tp_backward_overlap = o.tp_backward_overlap;
    overlap.tp_overlap_symmetric_memory = o.tp_overlap_symmetric_memory;
    overlap.attention = attention_kernel(o);
    overlap.dropout = default_activation_options(m).dropout && o.model_dropout;
    overlap.fused_elementwise = o.fused_elementwise;
    overlap.fused_cross_entropy = o.fused_cross_entropy;
    overlap.eager_rmsnorm = o.eager_rmsnorm;
    overlap.metric_cross_entropies = o.metric_cross_entropies;
    overlap.torch_context_parallel = o.torch_context_parallel;
    overlap.all_gather_context_parallel = o.all_gather_context_parallel;
    return overlap;
}

double step_time_lower_bound(const ModelSpec& m, const ClusterSpec& c, const Plan& p) {
    check_precision_peak(c, p.precision);
    const HardwareEfficiency e = hardware_efficiency(c);
    const double best = std::max({e.gemm_max_efficiency, e.attention_forward_efficiency, e.attention_backward_efficiency,
                                  e.attention_cudnn_forward_efficiency, e.attention_cudnn_backward_efficiency});
    const auto f = flops_per_token(m, p);
    // flops_per_token counts attention's square whole, with a backward of twice the forward. The
    // kernels run causal attention on half of it (or less, with a window), and a backward needs at
    // least its four products against the forward's two: the bound counts that much.
    const double recomputed = p.recompute == Recompute::full ? recomputed_layer_fraction(p, m.num_layers)
                              : p.recompute == Recompute::selective ? 1.0 : 0.0;
    const double attention_counted = f.forward_attention * (3.0 + recomputed);
    const double attention_least = f.forward_attention * 0.5 * (1.0 + 2.0 + recomputed);
    const double flops = f.hardware - attention_counted + attention_least;
    const double tokens = double(p.global_batch_size) * p.seq_length;
    const double work = flops * tokens / p.world_size() / (c.gpu.peak(p.precision) * units::TFLOP * best);
    const int v = p.schedule == Schedule::interleaved ? p.virtual_stages : 1;
    // Balanced stages idle (p-1)/(v m) of the busy time filling and draining the pipeline.
    return work * (1.0 + double(p.pp - 1) / (double(v) * p.num_microbatches()));
}

void check_precision_peak(const ClusterSpec& c, Precision precision, const std::string& file) {
    if (c.gpu.peak(precision) > 0) return;
    std::string have;
    for (const auto& [q, v] : c.gpu.peak_tflops)
        if (v > 0) have += (have.empty() ? "" : ", ") + std::string(to_string(q));
    throw input_error(file.empty() ? "cluster '" + c.name + "'" : file,
                      std::string("gpu.peak_tflops.") + to_string(precision),
                      fmt::format("a positive {} peak in TFLOP/s for a {} plan, or a plan whose precision the GPU has "
                                  "(--precision {})",
                                  to_string(precision), to_string(precision), have.empty() ? "?" : have),
                      have.empty() ? "no peak at all" : "peaks only for " + have);
}

namespace {
// CPU activation offload (SimulateOptions::cpu_offload_layers) of a chunk of `layers` layers: the
// compute stream's stalls per microbatch, forward and backward. Layer i's activations leave while
// layer i + 1 runs its forward and come back while it runs its backward (with its recompute).
std::pair<double, double> offload_stalls(const ModelSpec& m, const Plan& p, const SimulateOptions& o, const GpuSpec& g,
                                         const BlockModels& blocks, int layers) {
    const ActivationOptions a = activation_options(m, o);
    const double stored = layer_stored_activation_bytes(m, p, a), full = layer_activation_bytes(m, p, a);
    const int in_mode = layers_in_recompute_mode(p, layers);
    const double link = g.host_bandwidth_GBps * 1e9;
    double forward = 0, backward = 0;
    for (int i = 0; i < std::min(o.cpu_offload_layers, layers); ++i) {
        const double copy = (i < in_mode ? stored : full) / link;
        const bool next_recomputes = i + 1 < in_mode;
        const double next_forward = blocks.layer.forward.total();
        const double next_backward = blocks.layer.backward.total() + (next_recomputes ? blocks.layer.recompute.total() : 0.0);
        forward += std::max(0.0, copy - next_forward);
        backward += std::max(0.0, copy - next_backward);
    }
    return {forward, backward};
}
}  // namespace

void use_gpu_attention(SimulateOptions& o, const GpuSpec& gpu) {
    if (!gpu.flash_attention) o.fused_attention = false;
}

SimulationResult simulate(const ModelSpec& model, const ClusterSpec& c, const Plan& p, const SimulateOptions& o) {
    check_precision_peak(c, p.precision);
    // fp8 GEMMs need compute capability 8.9 (Transformer Engine, torchao): on a GPU without an fp8
    // peak (A100) no fp8 run exists, and every export of such a plan trains in bf16, so that is
    // what is simulated, under the plan as asked.
    if (p.precision == Precision::fp8 && !c.gpu.has_own_peak(Precision::fp8)) {
        Plan bf16 = p;
        bf16.precision = Precision::bf16;
        SimulationResult r = simulate(model, c, bf16, o);
        r.plan = p;
        r.notes.push_back(fmt::format("{} has no fp8 tensor cores (no gpu.peak_tflops.fp8): fp8 runs there as bf16, "
                                      "and so is it simulated",
                                      c.gpu.name));
        return r;
    }
    // Time and memory on the vocabulary as the trainer pads it; the model FLOPs (MFU) on the model's own.
    const ModelSpec m = with_padded_vocabulary(model, p.tp, o.vocab_padding_multiple);
    if (o.torch_context_parallel && o.all_gather_context_parallel)
        throw InputError("options torch_context_parallel and all_gather_context_parallel: expected one way of "
                         "context parallelism, got both");
    // Context parallelism splits the attention into fused kernels on its chunks (Transformer
    // Engine's AttnFuncWithCP, PyTorch's context_parallel over SDPA); neither has an unfused path.
    if (p.cp > 1 && !o.fused_attention)
        throw input_error("plan", "cp", "1 with unfused attention (context parallelism runs fused attention kernels"
                          + std::string(c.gpu.flash_attention ? ")" : fmt::format(", which the {} does not run)", c.gpu.name)),
                          std::to_string(p.cp));
    if (p.world_size() > c.num_gpus())
        throw InputError(fmt::format("plan needs {} GPUs (tp*pp*dp*cp) but cluster '{}' has {}", p.world_size(), c.name,
                                     c.num_gpus()));
    if (o.cpu_offload_layers > 0) {
        if (p.pp > 1)
            throw input_error("options", "cpu_offload_layers (--cpu-offload-layers)",
                              "no pipeline parallelism with CPU activation offload (Megatron-Core offloads only without it)",
                              fmt::format("{} layers with {} pipeline stages", o.cpu_offload_layers, p.pp));
        if (o.cpu_offload_layers >= m.num_layers)
            throw input_error("options", "cpu_offload_layers (--cpu-offload-layers)",
                              fmt::format("fewer layers than the model's {}", m.num_layers),
                              std::to_string(o.cpu_offload_layers));
        if (c.gpu.host_bandwidth_GBps <= 0)
            throw input_error("cluster '" + c.name + "'", "gpu.host_bandwidth_GBps",
                              "the GPU's bandwidth to host memory (GB/s, one direction) for CPU activation offload",
                              "none given");
    }
    SimulationResult r;
    r.plan = p;
    r.model_name = m.name;
    r.cluster_name = c.name;
    r.num_gpus = p.world_size();

    // ---- memory ----
    r.memory_GiB = peak_memory(m, c, p, activation_options(m, o));  // estimate_memory's, on the model padded above
    const double available = c.gpu.memory_GiB * (1.0 - o.memory_headroom);
    r.fits = r.memory_GiB.peak <= available;
    if (!r.fits)
        r.notes.push_back(fmt::format("does not fit: {:.1f} GiB per GPU needed (weights {:.1f}, gradients {:.1f}, optimizer "
                                      "{:.1f}, activations {:.1f}, buffers {:.1f}) but {:.1f} GiB available",
                                      r.memory_GiB.peak, r.memory_GiB.weights, r.memory_GiB.gradients, r.memory_GiB.optimizer,
                                      r.memory_GiB.activations, r.memory_GiB.buffers, available));

    // ---- groups, for one representative GPU per pipeline rank ----
    const HardwareEfficiency eff = hardware_efficiency(c);
    const ComputeModel gpu(c.gpu, eff, p.precision);
    const auto topology = shared_topology(c);
    const Topology& topo = *topology;
    const ParallelSizes sizes{p.tp, p.cp, p.dp, p.pp};
    const bool alike = groups_sit_alike(p.placement, sizes, topo.gpus_per_node());
    auto collective_group = [&](const std::vector<int>& ranks) { return make_comm_group(topo, ranks, eff); };
    const CommGroup tp_group = pacing_group(p, alike, {Dim::tp}, "tp", Collective::all_reduce, collective_group);
    // Userbuffers and symmetric memory reach the other TP ranks' memory over NVLink: a TP group
    // across nodes runs its collectives through NCCL (layer_cost.cpp), and the result says so.
    if (p.tp_comm_overlap && tp_group.num_nodes > 1) {
        r.plan.tp_comm_overlap = false;
        r.notes.push_back(fmt::format("TP collectives not overlapped with their GEMMs: the TP group spans {} nodes, and "
                                      "Transformer Engine's userbuffers (or PyTorch's async TP) need one NVLink domain",
                                      tp_group.num_nodes));
    }
    const CommGroup cp_ring = pacing_group(p, alike, {Dim::cp}, "cp", Collective::send_recv, [&](const std::vector<int>& ranks) {
        return make_ring_link(topo, ranks, p.placement, sizes, eff);
    });
    const CommGroup shard_group = pacing_group(p, alike, {Dim::cp, Dim::dp}, "cp-dp", Collective::reduce_scatter, collective_group);
    const int shard = p.dp * p.cp;

    const double E = element_bytes(p.precision);
    const double grad_bytes = o.grad_reduce_in_fp32 ? 4.0 : E;
    const double gather_bytes = p.precision == Precision::fp8 && o.fp8_weight_gather ? 1.0 : E;  // per weight
    const bool layerwise_zero2 = p.zero_stage == 2 && o.zero2_layerwise_gather && shard > 1;
    // Megatron-Core sizes its buckets by the data-parallel group without CP (SimulateOptions).
    const double bucket_parameters =
        o.grad_buckets_grow_with_dp ? std::max(o.grad_bucket_parameters, 1e6 * p.dp) : o.grad_bucket_parameters;
    const CommGroup* layerwise = (p.zero_stage >= 3 && shard > 1) || layerwise_zero2 ? &shard_group : nullptr;
    if (o.reduce_after_pipeline_flush && p.pp > 1 && p.zero_stage == 2 && !layerwise)
        throw InputError(fmt::format("gradients reduced after the pipeline flush with ZeRO-2 and {} pipeline stages: ZeRO-2 "
                                     "keeps only its shard of each microbatch's gradients, so it reduce-scatters them "
                                     "beside every backward (DeepSpeed's pipeline engine, which reduces after the flush, "
                                     "accepts only ZeRO-0/1 with pipeline stages)",
                                     p.pp));

    OverlapOptions overlap = overlap_options(m, o);
    overlap.fp8_weight_cast_share = o.fp8_caches_weights ? 1.0 / std::max(1, p.num_microbatches()) : 1.0;
    BlockModels blocks = block_models(m, p, gpu, tp_group, cp_ring, overlap);
    if (o.fsdp2_buffer_copies && layerwise)
        for (BlockCost* b : {&blocks.layer, &blocks.embedding, &blocks.head}) {
            // FSDP2 on the compute stream: the copy-out after each gather (read the gathered buffer,
            // write the parameters), the copy-in before each reduce-scatter (read the gradients,
            // write them in the reduce precision).
            const double copy_out = gpu.copy_time(2.0 * b->parameters * gather_bytes);
            const double copy_in = gpu.copy_time(b->parameters * (E + grad_bytes));
            const double backward = copy_in + (layerwise_zero2 ? 0.0 : copy_out);  // ZeRO-2 keeps the forward's gather
            b->forward.compute_s += copy_out;
            b->forward.memory_bound_s += copy_out;
            b->backward.compute_s += backward;
            b->backward.memory_bound_s += backward;
        }
    BlockCost kept_layer = blocks.layer;  // a layer block recompute leaves out
    kept_layer.recompute = PassCost{};

    // ---- each stage's forward and backward ----
    const int v = p.schedule == Schedule::interleaved ? p.virtual_stages : 1;
    const int stages = p.pp * v;
    const auto layers = layers_per_chunk(m.num_layers, p.pp, v, p.lm_head_layers);

    PipelineInput in;
    in.schedule = p.schedule;
    in.pp = p.pp;
    in.virtual_stages = v;
    in.microbatches = p.num_microbatches();
    in.all_forwards_first_at_m_equal_pp = o.all_forwards_first_at_m_equal_pp;
    in.layers = layers;
    in.overlap_grad_reduce = o.overlap_grad_reduce && !(o.reduce_after_pipeline_flush && p.pp > 1);
    in.overlap_p2p = o.overlap_p2p_comm && v > 1;  // v > 1 only in the interleaved schedule
    in.reduce_every_microbatch = p.zero_stage == 2;
    in.interference = eff.sm_interference;
    in.record_trace = o.record_trace;
    in.forward.resize(stages);
    in.backward.resize(stages);
    in.send_forward_s.assign(stages, 0.0);
    in.send_backward_s.assign(stages, 0.0);
    if (!layerwise && shard > 1) in.buckets_s.resize(stages);
    const bool draw_comm = o.record_trace && layerwise;  // the trace's per-block gathers and scatters
    if (draw_comm) {
        in.forward_comm.resize(stages);
        in.backward_comm.resize(stages);
    }
    // Point-to-point: the activation of one microbatch, split over the tensor-parallel ranks under
    // sequence parallelism or the older stacks' scatter/gather, else whole from every rank.
    const bool split_boundary = p.sequence_parallel || o.p2p_scatter_gather;
    const double boundary_bytes =
        E * double(p.microbatch_size) * p.seq_length / p.cp * m.hidden_size / (split_boundary ? p.tp : 1);
    // One boundary send from each pipeline rank to the next (the last to the first for the
    // interleaved schedule's wrap), the same for every chunk the rank holds.
    // Where the groups do not sit alike, every copy of the stage pair is priced and the slowest kept
    // (as pacing_group does for the collectives).
    std::vector<double> send_s(p.pp, 0.0);
    if (stages > 1)
        for (int rank = 0; rank < p.pp; ++rank) {
            RankCoords a, b;
            a.pp = rank;
            b.pp = (rank + 1) % p.pp;
            auto send_between = [&](const RankCoords& from, const RankCoords& to) {
                const CommGroup link = make_stage_p2p_link(topo, rank_of(from, p.placement, sizes),
                                                           rank_of(to, p.placement, sizes), p.placement, sizes, eff);
                return collective_time(Collective::send_recv, boundary_bytes, link);
            };
            send_s[rank] = send_between(a, b);
            if (alike) continue;
            for (a.tp = 0; a.tp < p.tp; ++a.tp)
                for (a.cp = 0; a.cp < p.cp; ++a.cp)
                    for (a.dp = 0; a.dp < p.dp; ++a.dp) {
                        b.tp = a.tp, b.cp = a.cp, b.dp = a.dp;
                        send_s[rank] = std::max(send_s[rank], send_between(a, b));
                    }
        }
    std::vector<KernelKindTimes> rank_kernels(p.pp);  // one microbatch through each rank's stages
    for (int s = 0; s < stages; ++s) {
        const auto list = stage_blocks(blocks, kept_layer, layers_in_recompute_mode(p, layers[s]), s, stages, layers[s]);
        KernelKindTimes& kernels = rank_kernels[s % p.pp];
        for (const BlockCost* b : list)
            for (const PassCost* pass : {&b->forward, &b->backward, &b->recompute}) {
                kernels.gemm += pass->gemm_s;
                kernels.attention += pass->attention_s;
                kernels.memory_bound += pass->memory_bound_s;
            }
        const double gradient_params = stage_gradient_parameters(list, blocks, m.tied_embeddings, stages);
        in.forward[s] = time_pass(list, true, layerwise, gather_bytes, grad_bytes, eff.sm_interference, true, false,
                                  draw_comm ? &in.forward_comm[s] : nullptr);
        in.backward[s] = time_pass(list, false, layerwise, gather_bytes, grad_bytes, eff.sm_interference, !layerwise_zero2,
                                   o.backward_prefetch, draw_comm ? &in.backward_comm[s] : nullptr);
        if (o.cpu_offload_layers > 0) {
            const auto [forward_stall, backward_stall] = offload_stalls(m, p, o, c.gpu, blocks, layers[s]);
            in.forward[s].compute += forward_stall;
            in.backward[s].compute += backward_stall;
        }
        if (!o.gradient_accumulation_fusion) {
            // ZeRO-2/3 reduce-scatter every microbatch and accumulate only their shard, which
            // arrives in the reduction's precision.
            const bool sharded = p.zero_stage >= 2 && shard > 1;
            const double params = sharded ? gradient_params / shard : gradient_params;
            const double other_blocks = double(list.size()) - layers[s];  // embedding, head: two tensors each
            const double tensors = layers[s] * parameter_tensors_per_layer(m) + 2.0 * other_blocks;
            const double accumulate = gradient_accumulation_time(params, tensors, sharded ? grad_bytes : E, grad_bytes, gpu);
            in.backward[s].compute += accumulate;
            kernels.memory_bound += accumulate;
        }
        if (s + 1 < stages) {
            in.send_forward_s[s] = send_s[s % p.pp];
            in.send_backward_s[s + 1] = send_s[s % p.pp];
        }
        if (!in.buckets_s.empty()) {
            const int nb = std::max(1, int(std::ceil(gradient_params / bucket_parameters)));
            const Collective reduce = p.zero_stage == 0 ? Collective::all_reduce : Collective::reduce_scatter;
            in.buckets_s[s].assign(nb, collective_time(reduce, gradient_params / nb * grad_bytes, shard_group));
        }
    }

    // ---- after the backward: tied-embedding sync, ZeRO parameter gather, optimizer ----
    in.after_comm_s.assign(p.pp, 0.0);
    in.optimizer_s.assign(p.pp, 0.0);
    if (m.tied_embeddings && p.pp > 1) {
        RankCoords first, last;
        last.pp = p.pp - 1;
        const CommGroup ends =
            make_comm_group(topo, {rank_of(first, p.placement, sizes), rank_of(last, p.placement, sizes)}, eff);
        in.tied_embedding_sync_s = collective_time(Collective::all_reduce, blocks.embedding.parameters * grad_bytes, ends);
    }
    for (int rank = 0; rank < p.pp; ++rank) {
        const double params = parameters_on_rank(m, p, rank);
        in.optimizer_s[rank] = optimizer_time(p.zero_stage >= 1 ? params / shard : params, p.precision, gpu);
        // The gradient buffer: the rank's whole share of the weights, sharded only under ZeRO-2/3.
        if (o.zero_gradient_buffer)
            in.optimizer_s[rank] += gradient_zeroing_time(p.zero_stage >= 2 ? params / shard : params, grad_bytes, gpu);
        if (p.zero_stage >= 1 && p.zero_stage <= 2 && shard > 1 && !layerwise_zero2) {
            const int nb = std::max(1, int(std::ceil(params / bucket_parameters)));
            const double gather = nb * collective_time(Collective::all_gather, params / nb * gather_bytes, shard_group);
            // Overlapped with the next step's forward, only the first bucket's gather waits.
            in.after_comm_s[rank] += o.overlap_param_gather ? gather / nb : gather;
        }
    }

    const PipelineOutput sim = simulate_pipeline(in);

    // ---- the breakdown of the rank that finishes last ----
    const RankTimeline& tl = sim.ranks[sim.critical_rank];
    r.critical_rank = sim.critical_rank;
    r.step_time_s = sim.step_s;
    TimeBreakdown& t = r.time_s;
    t.compute = tl.parts.compute;
    t.recompute = tl.parts.recompute;
    t.tp_comm_exposed = tl.parts.tp_comm;
    t.cp_comm_exposed = tl.parts.cp_comm;
    // Waiting for the other end of the pipeline to finish its backward is the pipeline's drain.
    t.bubble = tl.bubble_s + tl.sync_wait_s;
    t.pp_comm_exposed = tl.pp_wait_s;
    t.dp_comm_exposed = tl.parts.dp_comm + (tl.dp_end_s - tl.compute_end_s) + tl.sync_s +
                        in.after_comm_s[sim.critical_rank];
    t.optimizer = in.optimizer_s[sim.critical_rank];
    r.trace = sim.trace;
    const KernelKindTimes& per_microbatch = rank_kernels[sim.critical_rank];
    r.kernel_time_s = {per_microbatch.gemm * in.microbatches, per_microbatch.attention * in.microbatches,
                       per_microbatch.memory_bound * in.microbatches + t.optimizer};

    const auto f = flops_per_token(model, p);
    const double tokens = double(p.global_batch_size) * p.seq_length;
    const double peak = c.gpu.peak(p.precision) * units::TFLOP;
    r.tokens_per_s = tokens / r.step_time_s;
    r.model_tflops_per_gpu = f.model * tokens / p.world_size() / r.step_time_s / units::TFLOP;
    r.hardware_tflops_per_gpu = f.hardware * tokens / p.world_size() / r.step_time_s / units::TFLOP;
    r.mfu = r.model_tflops_per_gpu * units::TFLOP / peak;
    r.hfu = r.hardware_tflops_per_gpu * units::TFLOP / peak;

    // What dominates the time that is not compute.
    const std::pair<const char*, double> overheads[] = {
        {"pipeline bubble", t.bubble},          {"tensor-parallel communication", t.tp_comm_exposed},
        {"data-parallel communication", t.dp_comm_exposed}, {"pipeline communication", t.pp_comm_exposed},
        {"recomputation", t.recompute},         {"context-parallel communication", t.cp_comm_exposed},
        {"optimizer step", t.optimizer}};
    const auto* top = std::max_element(std::begin(overheads), std::end(overheads),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top->second >= 0.0005 * r.step_time_s)  // not a "0.0% of the step"
        r.notes.push_back(fmt::format("largest overhead: {} ({:.1f}% of the step)", top->first, 100.0 * top->second / r.step_time_s));
    return r;
}

}  // namespace tessel
