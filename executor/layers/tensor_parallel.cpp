#include "executor/layers/tensor_parallel.h"

namespace tessel {

FullSequence to_full_sequence(const LayerContext& ctx, const float* x, int width) {
    if (!ctx.sequence_parallel || ctx.tp_size() == 1) return FullSequence(x);
    const auto& d = ctx.dims;
    DeviceArray<float> full = ctx.floats(std::size_t(d.tokens) * width);
    ctx.tp->all_gather(x, full.data(), std::size_t(d.local_tokens) * width);
    return FullSequence(std::move(full));
}

DeviceArray<float> reduce_partial_sums(const LayerContext& ctx, DeviceArray<float>&& partial, int width) {
    if (ctx.tp_size() == 1) return std::move(partial);
    const auto& d = ctx.dims;
    if (!ctx.sequence_parallel) {
        ctx.tp->all_reduce(partial.data(), std::size_t(d.tokens) * width, ReduceOp::sum);
        return std::move(partial);
    }
    DeviceArray<float> shard = ctx.floats(std::size_t(d.local_tokens) * width);
    ctx.tp->reduce_scatter(partial.data(), shard.data(), std::size_t(d.local_tokens) * width);
    return shard;
}

}  // namespace tessel
