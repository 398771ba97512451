// Exact parameter counts and FLOPs per token of a ModelSpec.
//
// FLOP convention (Narayanan et al. 2021, eq. 3; Chowdhery et al. 2022, app. B): a GEMM with
// an (m x k) by (k x n) product costs 2mkn; backward costs twice forward; attention's two
// batched products (QK^T and PV) are counted over the full s x s square (not halved for the
// causal mask; with a sliding window of w < s, over the s x w band). Model FLOPs per token =
// 6 * (matmul weights) + 12 * L * (H * d) * s; norms,
// activations and softmax are left out, as every published MFU figure leaves them out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/model_spec.h"
#include "core/options.h"
#include "core/plan.h"

namespace tessel {

struct ParameterCount {
    std::int64_t total = 0;
    std::int64_t embedding = 0;       // token table + learned position table + untied LM head
    std::int64_t non_embedding = 0;   // total - embedding
    std::int64_t per_layer = 0;       // one transformer layer, biases and norms included
    std::int64_t final_norm = 0;
    std::int64_t token_embedding = 0;
    std::int64_t position_embedding = 0;
    std::int64_t lm_head = 0;         // 0 when tied
};

ParameterCount count_parameters(const ModelSpec& m);

// Weights of the GEMMs inside one layer (no biases, no norms): what the forward pass multiplies.
std::int64_t layer_matmul_weights(const ModelSpec& m);



struct FlopsPerToken {
    double model = 0;        // forward + backward, no recomputation (what MFU counts)
    double hardware = 0;     // plus what recomputation executes again (what HFU counts)
    double forward_layers = 0;   // forward FLOPs of all transformer layers (matmuls + attention)
    double forward_attention = 0;  // the attention-core part of forward_layers
    double forward_lm_head = 0;
};

// `recomputed_fraction`: the share of layers full recompute repeats (recomputed_layer_fraction).
FlopsPerToken flops_per_token(const ModelSpec& m, int seq_length, Recompute recompute = Recompute::none,
                              double recomputed_fraction = 1.0);
// A plan's step: its sequence length and recompute mode, under block recompute its share of layers.
FlopsPerToken flops_per_token(const ModelSpec& m, const Plan& p);

// The shapes of one layer's weights, for `inspect`.
struct LayerShape {
    std::string name;
    std::vector<std::int64_t> shape;
    std::int64_t count() const;
};
std::vector<LayerShape> layer_shapes(const ModelSpec& m);

}  // namespace tessel
