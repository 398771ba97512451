#include "simulator/sharded_pass.h"

#include <algorithm>

#include "simulator/collectives.h"

namespace tessel {

ActionParts time_pass(const std::vector<const BlockCost*>& blocks, bool forward, const CommGroup* sharded,
                      double weight_bytes, double grad_bytes, double interference, bool gather_in_backward,
                      bool prefetch) {
    ActionParts parts;
    std::vector<double> work;
    work.reserve(blocks.size());
    auto add = [&](const BlockCost& b) {
        const PassCost& pass = forward ? b.forward : b.backward;
        parts.compute += pass.compute_s;
        parts.tp_comm += pass.tp_comm_s;
        parts.cp_comm += pass.cp_comm_s;
        double w = pass.total();
        if (!forward) {
            parts.recompute += b.recompute.compute_s;
            parts.tp_comm += b.recompute.tp_comm_s;
            parts.cp_comm += b.recompute.cp_comm_s;
            w += b.recompute.total();
        }
        work.push_back(w);
    };
    if (forward)
        for (const BlockCost* b : blocks) add(*b);
    else
        for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) add(**it);
    if (!sharded) return parts;

    const std::size_t n = work.size();
    const bool gathers = forward || gather_in_backward;
    auto block = [&](std::size_t i) -> const BlockCost& { return forward ? *blocks[i] : *blocks[n - 1 - i]; };
    auto gather_time = [&](std::size_t i) {
        return gathers && i < n ? collective_time(Collective::all_gather, block(i).parameters * weight_bytes, *sharded) : 0.0;
    };
    auto scatter_time = [&](std::size_t i) {
        return forward ? 0.0 : collective_time(Collective::reduce_scatter, block(i).parameters * grad_bytes, *sharded);
    };
    // gathered[i]: when block i's weights are in place; the stream runs one collective at a time.
    std::vector<double> gathered(n + 1, 0.0);
    double comm_free = 0, compute_free = 0;
    const bool ahead = forward || prefetch;  // the next gather is issued before this block's scatter
    if (gathers) gathered[0] = comm_free = gather_time(0);
    for (std::size_t i = 0; i < n; ++i) {
        const double start = std::max(compute_free, gathered[i]);
        if (gathers && i + 1 < n && ahead) {
            // Issued when this block starts (forward, and the backward's pre-hook).
            const double s = std::max(comm_free, start);
            gathered[i + 1] = comm_free = s + gather_time(i + 1);
        }
        // The collectives beside this block's compute take SMs and memory bandwidth from it.
        const double beside = (ahead ? gather_time(i + 1) : 0.0) + scatter_time(i);
        const double slowed = work[i] + interference * std::min(work[i], beside);
        parts.compute += slowed - work[i];
        work[i] = slowed;
        compute_free = start + slowed;
        if (!forward) comm_free = std::max(comm_free, compute_free) + scatter_time(i);
        if (gathers && i + 1 < n && !ahead) gathered[i + 1] = comm_free = comm_free + gather_time(i + 1);
    }
    double total_work = 0;
    for (double w : work) total_work += w;
    parts.dp_comm = std::max(compute_free, comm_free) - total_work;
    return parts;
}

}  // namespace tessel
