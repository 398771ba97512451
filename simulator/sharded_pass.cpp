#include "simulator/sharded_pass.h"

#include <algorithm>

#include "simulator/collectives.h"

namespace tessel {

ActionParts time_pass(const std::vector<const BlockCost*>& blocks, bool forward, const CommGroup* sharded,
                      double weight_bytes, double grad_bytes, double interference, bool gather_in_backward,
                      bool prefetch, std::vector<CommSpan>* spans) {
    ActionParts parts;
    std::vector<double> work;
    work.reserve(blocks.size());
    auto add = [&](const BlockCost& b) {
        const PassCost& pass = forward ? b.forward : b.backward;
        parts.compute += pass.compute_s;
        parts.tp_comm += pass.tp_comm_s;
        parts.cp_comm += pass.cp_comm_s;
        parts.tp_comm_hidden += pass.tp_comm_hidden_s;
        parts.cp_comm_hidden += pass.cp_comm_hidden_s;
        double w = pass.total();
        if (!forward) {
            parts.recompute += b.recompute.compute_s;
            parts.tp_comm += b.recompute.tp_comm_s;
            parts.cp_comm += b.recompute.cp_comm_s;
            parts.tp_comm_hidden += b.recompute.tp_comm_hidden_s;
            parts.cp_comm_hidden += b.recompute.cp_comm_hidden_s;
            w += b.recompute.total();
        }
        work.push_back(w);
    };
    if (forward)
        for (const BlockCost* b : blocks) add(*b);
    else
        for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) add(**it);
    if (!sharded || work.empty()) return parts;

    // Each block's gather and reduce-scatter, in pass order.
    const std::size_t n = work.size();
    const bool gathers = forward || gather_in_backward;
    std::vector<double> gather(n + 1, 0.0), scatter(n, 0.0);  // gather[n] = 0: nothing after the last
    for (std::size_t i = 0; i < n; ++i) {
        const BlockCost& b = forward ? *blocks[i] : *blocks[n - 1 - i];
        if (gathers) gather[i] = collective_time(Collective::all_gather, b.parameters * weight_bytes, *sharded);
        if (!forward) scatter[i] = collective_time(Collective::reduce_scatter, b.parameters * grad_bytes, *sharded);
    }
    // Names for the trace: a pass's blocks in the order it runs them, layers counted in the model's order.
    auto block_name = [&](std::size_t i) {
        const std::size_t k = forward ? i : n - 1 - i;
        const BlockCost& b = *blocks[k];
        if (b.name != "layer") return b.name;
        std::size_t layer = 0;
        for (std::size_t j = 0; j < k; ++j) layer += blocks[j]->name == "layer";
        return "layer " + std::to_string(layer);
    };
    auto record = [&](const char* what, std::size_t i, double start, double duration) {
        if (spans && duration > 0) spans->push_back({std::string(what) + " " + block_name(i), start, duration});
    };
    // gathered[i]: when block i's weights are in place; the stream runs one collective at a time.
    std::vector<double> gathered(n, 0.0);
    double comm_free = gather[0], compute_free = 0;
    gathered[0] = gather[0];
    record("all-gather", 0, 0.0, gather[0]);
    const bool ahead = forward || prefetch;  // the next gather is issued before this block's scatter
    for (std::size_t i = 0; i < n; ++i) {
        const double start = std::max(compute_free, gathered[i]);
        if (ahead && i + 1 < n) {  // issued when this block starts (forward, and the backward's pre-hook)
            record("all-gather", i + 1, std::max(comm_free, start), gather[i + 1]);
            comm_free = std::max(comm_free, start) + gather[i + 1];
            gathered[i + 1] = comm_free;
        }
        // The collectives beside this block's compute take SMs and memory bandwidth from it.
        const double beside = (ahead ? gather[i + 1] : 0.0) + scatter[i];
        const double slowed = work[i] + interference * std::min(work[i], beside);
        parts.compute += slowed - work[i];
        work[i] = slowed;
        compute_free = start + slowed;
        if (!forward) {
            record("reduce-scatter", i, std::max(comm_free, compute_free), scatter[i]);
            comm_free = std::max(comm_free, compute_free) + scatter[i];
        }
        if (gathers && !ahead && i + 1 < n) {  // queued behind this block's reduce-scatter
            record("all-gather", i + 1, comm_free, gather[i + 1]);
            comm_free += gather[i + 1];
            gathered[i + 1] = comm_free;
        }
    }
    double total_work = 0;
    for (double w : work) total_work += w;
    parts.dp_comm = std::max(compute_free, comm_free) - total_work;
    return parts;
}

}  // namespace tessel
