#include "core/accounting.h"

namespace tessel {

std::int64_t LayerShape::count() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

std::vector<LayerShape> layer_shapes(const ModelSpec& m) {
    const std::int64_t h = m.hidden_size, f = m.ffn_hidden_size, q = m.q_size(), kv = m.kv_size();
    std::vector<LayerShape> s;
    const bool ln = m.norm == Norm::layernorm;
    s.push_back({"attention_norm.weight", {h}});
    if (ln) s.push_back({"attention_norm.bias", {h}});
    s.push_back({"attention.qkv.weight", {q + 2 * kv, h}});
    if (m.has_qkv_bias()) s.push_back({"attention.qkv.bias", {q + 2 * kv}});
    if (m.qk_norm != QkNorm::none) {
        s.push_back({"attention.q_norm.weight", {m.q_norm_width()}});
        s.push_back({"attention.k_norm.weight", {m.k_norm_width()}});
    }
    s.push_back({"attention.out.weight", {h, q}});
    if (m.has_out_bias()) s.push_back({"attention.out.bias", {h}});
    if (m.sandwich_norms) s.push_back({"attention_post_norm.weight", {h}});
    if (!m.shared_norm) {
        s.push_back({"mlp_norm.weight", {h}});
        if (ln) s.push_back({"mlp_norm.bias", {h}});
    }
    const std::int64_t up = m.gated_mlp() ? 2 * f : f;
    s.push_back({"mlp.up.weight", {up, h}});
    if (m.has_mlp_bias()) s.push_back({"mlp.up.bias", {up}});
    s.push_back({"mlp.down.weight", {h, f}});
    if (m.has_mlp_bias()) s.push_back({"mlp.down.bias", {h}});
    if (m.sandwich_norms) s.push_back({"mlp_post_norm.weight", {h}});
    return s;
}

std::int64_t layer_matmul_weights(const ModelSpec& m) {
    const std::int64_t h = m.hidden_size, f = m.ffn_hidden_size;
    const std::int64_t attn = h * (m.q_size() + 2 * std::int64_t(m.kv_size())) + std::int64_t(m.q_size()) * h;
    const std::int64_t mlp = (m.gated_mlp() ? 3 : 2) * h * f;
    return attn + mlp;
}

ParameterCount count_parameters(const ModelSpec& m) {
    ParameterCount c;
    for (const auto& w : layer_shapes(m)) c.per_layer += w.count();
    const std::int64_t h = m.hidden_size;
    c.final_norm = m.norm == Norm::layernorm ? 2 * h : h;
    c.token_embedding = m.vocab_size * h;
    c.position_embedding = m.position_embedding == PositionEmbedding::learned ? std::int64_t(m.max_position_embeddings) * h : 0;
    c.lm_head = m.tied_embeddings ? 0 : m.vocab_size * h;
    c.embedding = c.token_embedding + c.position_embedding + c.lm_head;
    c.total = c.per_layer * m.num_layers + c.final_norm + c.embedding;
    c.non_embedding = c.total - c.embedding;
    return c;
}

FlopsPerToken flops_per_token(const ModelSpec& m, int s, Recompute recompute, double recomputed_fraction) {
    FlopsPerToken f;
    const double L = m.num_layers;
    // Per token per layer: 2 FLOPs per matmul weight; attention QK^T and PV each 2*s*(H*d).
    const double layer_matmul = 2.0 * double(layer_matmul_weights(m));
    // A sliding window narrows the square to a band: each query counts the keys it may attend to.
    const double attention = 4.0 * m.attended_keys(s) * double(m.q_size());
    f.forward_attention = L * attention;
    f.forward_layers = L * (layer_matmul + attention);
    f.forward_lm_head = 2.0 * double(m.vocab_size) * m.hidden_size;
    f.model = 3.0 * (f.forward_layers + f.forward_lm_head);
    f.hardware = f.model;
    if (recompute == Recompute::full) f.hardware += recomputed_fraction * f.forward_layers;
    else if (recompute == Recompute::selective) f.hardware += f.forward_attention;
    return f;
}

FlopsPerToken flops_per_token(const ModelSpec& m, const Plan& p) {
    return flops_per_token(m, p.seq_length, p.recompute, recomputed_layer_fraction(p, m.num_layers));
}

}  // namespace tessel
