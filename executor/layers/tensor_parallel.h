// Megatron's tensor-parallel mappings (megatron/core/tensor_parallel/mappings.py), as the two
// operations whose forward and backward are each other's dual:
//   to_full_sequence    forward of a column-parallel layer's input / backward of a row-parallel
//                       layer's output: all-gather over TP with sequence parallelism; otherwise the
//                       activation is already full on every rank (a view, nothing moves).
//   reduce_partial_sums forward of a row-parallel layer's output / backward of a column-parallel
//                       layer's input: reduce-scatter with sequence parallelism (tokens ->
//                       local_tokens), otherwise all-reduce in place.
#pragma once

#include "executor/layers/layer_context.h"

namespace tessel {

class FullSequence {
public:
    FullSequence(const float* view) : view_(view) {}
    FullSequence(DeviceArray<float>&& owned) : owned_(std::move(owned)), view_(owned_.data()) {}
    const float* data() const { return view_; }

private:
    DeviceArray<float> owned_;
    const float* view_;
};

// x: (local_tokens, width) -> (tokens, width).
FullSequence to_full_sequence(const LayerContext& ctx, const float* x, int width);

// partial: (tokens, width) partial sums over the TP ranks -> (local_tokens, width), summed.
DeviceArray<float> reduce_partial_sums(const LayerContext& ctx, DeviceArray<float>&& partial, int width);

}  // namespace tessel
