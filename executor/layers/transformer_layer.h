// One transformer layer = attention block + MLP block, with activation recomputation:
//   none       everything the backward needs is kept from the forward;
//   selective  the attention core (QK^T, softmax, PV) is recomputed in backward (Korthikanti et
//              al. 2022), the rest is kept;
//   full       only the layer's input is kept; backward first re-runs the whole forward (its
//              tensor-parallel collectives included), as Megatron's full recomputation does.
#pragma once

#include "executor/layers/attention_block.h"
#include "executor/layers/mlp_block.h"

namespace tessel {

struct LayerWeights {
    AttentionWeights attention;
    MlpWeights mlp;
};

LayerWeights add_transformer_layer(ParamBuffer& buf, const ModelSpec& m, int layer, int tp_size, int tp_rank,
                                   bool sequence_parallel);

struct LayerSaved {
    DeviceArray<float> input;  // (local_tokens, C), set by the caller before forward
    AttentionSaved attention;
    DeviceArray<float> middle;  // input + attention(input)
    MlpSaved mlp;
};

// Returns the layer's output (local_tokens, C).
DeviceArray<float> layer_forward(const LayerContext& ctx, const ParamBuffer& buf, const LayerWeights& w,
                                 LayerSaved& saved);
// Returns the gradient of the layer's input; frees what the forward saved.
DeviceArray<float> layer_backward(const LayerContext& ctx, ParamBuffer& buf, const LayerWeights& w, LayerSaved& saved,
                                  const float* dout);

}  // namespace tessel
