#include "planner/model_shape.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/accounting.h"

namespace tessel {

namespace {
ModelSpec shape(int hidden, int layers, int seq_length) {
    ModelSpec m;
    m.hidden_size = hidden;
    m.num_layers = layers;
    m.head_dim = 128;
    m.num_attention_heads = hidden / 128;
    m.num_kv_heads = 8;  // Llama 3 at every size (Dubey et al. 2024, Table 3); the widths are multiples of 1024
    m.ffn_hidden_size = int(std::lround(3.5 * hidden / 256.0)) * 256;
    m.vocab_size = kLlama3Vocab;
    m.seq_length = seq_length;
    m.max_position_embeddings = seq_length;
    m.activation = Activation::swiglu;
    m.norm = Norm::rmsnorm;
    m.position_embedding = PositionEmbedding::rope;
    m.tied_embeddings = false;
    m.rope_theta = 500000;  // Llama 3's RoPE base (Dubey et al. 2024, §3.1.1)
    m.norm_epsilon = 1e-5;  // Llama 3's rms_norm_eps
    m.source = "native";
    return m;
}
}  // namespace

constexpr int kWidestShape = 65536;

double largest_llama_style_parameters(int seq_length) {
    return double(count_parameters(shape(kWidestShape, kMaxNumLayers, seq_length)).total);
}

ModelSpec llama_style_model(double parameters, int seq_length) {
    ModelSpec best;
    double best_distance = 1e300;
    // Widths in steps of 1024: heads of 128 in multiples of 8, so the 8 KV heads divide them and a
    // TP of 8 splits both.
    for (int hidden = 1024; hidden <= kWidestShape; hidden += 1024) {
        const ModelSpec one = shape(hidden, 1, seq_length);
        const auto pc = count_parameters(one);
        const double per_layer = double(pc.per_layer);
        const double fixed = double(pc.total - pc.per_layer);
        const double depth = std::round((parameters - fixed) / per_layer);  // in a double: no int overflow
        if (depth < 2 || depth > kMaxNumLayers) continue;
        const int layers = int(depth);
        const double distance = std::abs(std::log(double(hidden) / layers / kTargetAspectRatio));
        if (distance < best_distance) {
            best_distance = distance;
            best = shape(hidden, layers, seq_length);
        }
    }
    if (best.num_layers == 0)  // below ~0.5B the embeddings dominate; above the largest shape, that one
        best = parameters > 1e9 ? shape(kWidestShape, kMaxNumLayers, seq_length) : shape(1024, 2, seq_length);
    best.name = fmt::format("llama-style-{:.1f}b", double(count_parameters(best).total) / 1e9);
    return best;
}

}  // namespace tessel
