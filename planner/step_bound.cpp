#include "planner/step_bound.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/rank_groups.h"
#include "planner/search_space.h"
#include "simulator/comm_cost.h"
#include "simulator/compute_cost.h"
#include "simulator/hardware_efficiency.h"
#include "simulator/layer_cost.h"
#include "simulator/memory_model.h"

namespace tessel {

// Seconds of one microbatch through each kind of block, as the simulator costs them.
struct StepBound::BlockTimes {
    double layer_forward = 0, layer_backward = 0;  // backward includes the recomputed forward
    double embedding_forward = 0, embedding_backward = 0;
    double head_forward = 0, head_backward = 0;
};

struct StepBound::Caches {
    std::mutex mutex;
    HardwareEfficiency efficiency;
    std::unique_ptr<ComputeModel> gpu;
    // (size, stride) -> the group {0, stride, 2 stride, ...}
    std::map<std::pair<int, int>, CommGroup> groups;
    // (size, stride) -> the slowest hop of the ring 0 -> stride -> ... (context parallelism)
    std::map<std::pair<int, int>, CommGroup> rings;
    // block_models depends on tp, cp, microbatch, sequence, SP, recompute and the two groups.
    using BlockKey = std::tuple<int, int, int, int, bool, int, int, double, double, int, int, double, double>;
    std::map<BlockKey, BlockTimes> blocks;
    // (tp, pp, v, lm_head_layers) -> parameters on each pipeline rank
    std::map<std::tuple<int, int, int, int>, std::vector<double>> parameters;
};

StepBound::StepBound(const ModelSpec& m, const ClusterSpec& c, const SimulateOptions& o)
    : model_(m), cluster_(c), options_(o), topology_(std::make_unique<Topology>(c)), caches_(std::make_unique<Caches>()) {
    caches_->efficiency = hardware_efficiency(c);
}

StepBound::~StepBound() = default;

const StepBound::BlockTimes& StepBound::block_times(const Plan& p) const {
    std::lock_guard<std::mutex> lock(caches_->mutex);
    Caches& k = *caches_;
    if (!k.gpu) k.gpu = std::make_unique<ComputeModel>(cluster_.gpu, k.efficiency, p.precision);
    const ParallelSizes sizes{p.tp, p.cp, p.dp, p.pp};
    auto group = [&](int size, int stride) -> const CommGroup& {
        auto it = k.groups.find({size, stride});
        if (it == k.groups.end()) {
            std::vector<int> ranks;
            for (int i = 0; i < size; ++i) ranks.push_back(i * stride);
            it = k.groups.emplace(std::make_pair(size, stride), make_comm_group(*topology_, ranks, k.efficiency)).first;
        }
        return it->second;
    };
    auto ring = [&](int size, int stride) -> const CommGroup& {
        auto it = k.rings.find({size, stride});
        if (it == k.rings.end()) {
            std::vector<int> ranks;
            for (int i = 0; i < size; ++i) ranks.push_back(i * stride);
            it = k.rings.emplace(std::make_pair(size, stride), make_ring_link(*topology_, ranks, k.efficiency)).first;
        }
        return it->second;
    };
    const CommGroup& tp = group(p.tp, placement_stride(p.placement, sizes, "tp"));
    const CommGroup& cp = ring(p.cp, placement_stride(p.placement, sizes, "cp"));
    const Caches::BlockKey bkey{p.tp,         p.cp,         p.microbatch_size, p.seq_length, p.sequence_parallel,
                                int(p.recompute), tp.num_nodes, tp.bandwidth_Bps, tp.hop_latency_s,
                                tp.members_per_node, cp.num_nodes, cp.bandwidth_Bps, cp.hop_latency_s};
    auto bit = k.blocks.find(bkey);
    if (bit != k.blocks.end()) return bit->second;

    // The simulation's overlap, attention kernel and dropout (overlap_options), with the fastest
    // choice for everything else: FlashAttention-2 in place of FlashAttention-1's slower kernel,
    // and OverlapOptions' defaults for the elementwise kernels and the loss.
    const OverlapOptions simulated = overlap_options(model_, options_);
    OverlapOptions overlap;
    overlap.tp_comm_overlap = simulated.tp_comm_overlap;
    overlap.tp_backward_overlap = simulated.tp_backward_overlap;
    overlap.tp_overlap_symmetric_memory = simulated.tp_overlap_symmetric_memory;
    overlap.attention = simulated.attention == AttentionKernel::flash1 ? AttentionKernel::flash : simulated.attention;
    overlap.dropout = simulated.dropout;
    const BlockModels b = block_models(model_, p, *k.gpu, tp, cp, overlap);
    BlockTimes t;
    t.layer_forward = b.layer.forward.total();
    t.layer_backward = b.layer.backward.total() + b.layer.recompute.total();
    t.embedding_forward = b.embedding.forward.total();
    t.embedding_backward = b.embedding.backward.total() + b.embedding.recompute.total();
    t.head_forward = b.head.forward.total();
    t.head_backward = b.head.backward.total() + b.head.recompute.total();
    return k.blocks.emplace(bkey, t).first->second;
}

double StepBound::operator()(const Plan& p) const {
    const BlockTimes& t = block_times(p);
    const int v = p.schedule == Schedule::interleaved ? p.virtual_stages : 1;
    const int stages = p.pp * v;
    const auto layers = layers_per_chunk(model_.num_layers, p.pp, v, p.lm_head_layers);
    auto forward = [&](int s) {
        return layers[s] * t.layer_forward + (s == 0 ? t.embedding_forward : 0.0) +
               (s == stages - 1 ? t.head_forward : 0.0);
    };
    auto backward = [&](int s) {
        return layers[s] * t.layer_backward + (s == 0 ? t.embedding_backward : 0.0) +
               (s == stages - 1 ? t.head_backward : 0.0);
    };
    const int shard = p.dp * p.cp;
    const std::vector<double>* params;
    {
        std::lock_guard<std::mutex> lock(caches_->mutex);
        auto& slot = caches_->parameters[std::make_tuple(p.tp, p.pp, p.virtual_stages, p.lm_head_layers)];
        if (slot.empty())
            for (int r = 0; r < p.pp; ++r) slot.push_back(parameters_on_rank(model_, p, r));
        params = &slot;
    }
    double best = 0, fill = 0;  // fill: microbatch 0's forward through the stages before rank r
    for (int r = 0; r < p.pp; ++r) {
        double per_microbatch = 0;
        for (int c = 0; c < v; ++c) per_microbatch += forward(c * p.pp + r) + backward(c * p.pp + r);
        const double optimizer = optimizer_time((*params)[r] / shard, p.precision, *caches_->gpu);
        best = std::max(best, fill + p.num_microbatches() * per_microbatch + optimizer);
        fill += forward(r);
    }
    return best;
}

}  // namespace tessel
