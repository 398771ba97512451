// The MLP half of a transformer layer, Megatron style:
//   x -> norm -> [to_full_sequence] -> up projection (column-parallel) -> GELU or SwiGLU
//     -> down projection (row-parallel) -> [reduce_partial_sums] -> + x
// SwiGLU's gate and up projections are one fused column-parallel weight whose local rows are
// [this rank's gate rows | this rank's up rows], the layout the swiglu kernel reads.
#pragma once

#include "executor/layers/layer_context.h"
#include "executor/layers/norm.h"
#include "executor/parameters.h"

namespace tessel {

struct MlpWeights {
    NormWeights norm;
    TensorSlot w_up, b_up;      // (ffn or 2·ffn local, C)
    TensorSlot w_down, b_down;  // (C, ffn local)
};

MlpWeights add_mlp(ParamBuffer& buf, const ModelSpec& m, int layer, int tp_size, int tp_rank, bool sequence_parallel);

struct MlpSaved {
    NormSaved norm;
    DeviceArray<float> up;   // (tokens, ffn or 2·ffn): the activation's input
    DeviceArray<float> act;  // (tokens, ffn)
};

// x: (local_tokens, C) -> x + mlp(x).
DeviceArray<float> mlp_forward(const LayerContext& ctx, const ParamBuffer& buf, const MlpWeights& w, const float* x,
                               MlpSaved& saved);
// Returns dx = dout + (d block/dx)^T dout.
DeviceArray<float> mlp_backward(const LayerContext& ctx, ParamBuffer& buf, const MlpWeights& w, const float* x,
                                MlpSaved& saved, const float* dout);

}  // namespace tessel
