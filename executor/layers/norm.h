// The model's normalisation (LayerNorm with bias for GPT, RMSNorm for Llama) over the hidden
// dimension, with what its backward needs.
#pragma once

#include "executor/layers/layer_context.h"
#include "executor/parameters.h"

namespace tessel {

struct NormWeights {
    TensorSlot weight, bias;  // bias absent for RMSNorm
};

// Declares the norm's tensors (replicated over TP; partial gradients under sequence parallelism).
NormWeights add_norm(ParamBuffer& buf, const ModelSpec& m, const std::string& name, bool sequence_parallel);

struct NormSaved {
    DeviceArray<float> out, mean, rstd;  // mean: LayerNorm only
};

// x: (n, C) -> saved.out (n, C).
void norm_forward(const LayerContext& ctx, const ParamBuffer& buf, const NormWeights& w, const float* x, int n,
                  NormSaved& saved);
// dx += d(norm)/dx · dout; the weight gradients accumulate into buf.
void norm_backward(const LayerContext& ctx, ParamBuffer& buf, const NormWeights& w, const float* x, int n,
                   const NormSaved& saved, const float* dout, float* dx);

}  // namespace tessel
