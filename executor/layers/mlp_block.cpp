#include "executor/layers/mlp_block.h"

#include <cmath>

#include <fmt/format.h>

#include "executor/layers/tensor_parallel.h"

namespace tessel {

MlpWeights add_mlp(ParamBuffer& buf, const ModelSpec& m, int layer, int tp_size, int tp_rank, bool sequence_parallel) {
    const std::string p = fmt::format("layers.{}.mlp.", layer);
    const std::size_t C = std::size_t(m.hidden_size), F = std::size_t(m.ffn_hidden_size);
    // GPT-2's init (Radford et al. 2019): N(0, 0.02), residual projections scaled by 1/sqrt(2·layers).
    const InitRule normal = InitRule::normal(0.02f);
    const InitRule residual = InitRule::normal(0.02f / std::sqrt(2.0f * float(m.num_layers)));
    const InitRule zero = InitRule::constant(0.0f);
    const bool swiglu = m.activation == Activation::swiglu;

    MlpWeights w;
    w.norm = add_norm(buf, m, p + "norm", sequence_parallel);
    TensorSpec up = row_shard(swiglu ? p + "gate.weight" : p + "up.weight", F, C, tp_size, tp_rank, normal);
    if (swiglu) {
        up.name = p + "gate_up.weight";
        up.sources.push_back(row_shard(p + "up.weight", F, C, tp_size, tp_rank, normal).sources[0]);
    }
    up.weight_decay = true;
    w.w_up = buf.add(std::move(up));
    if (m.has_mlp_bias()) {
        TensorSpec b = row_shard(swiglu ? p + "gate.bias" : p + "up.bias", F, 1, tp_size, tp_rank, zero);
        if (swiglu) {
            b.name = p + "gate_up.bias";
            b.sources.push_back(row_shard(p + "up.bias", F, 1, tp_size, tp_rank, zero).sources[0]);
        }
        w.b_up = buf.add(std::move(b));
    }
    TensorSpec down = column_shard(p + "down.weight", C, F, tp_size, tp_rank, residual);
    down.weight_decay = true;
    w.w_down = buf.add(std::move(down));
    if (m.has_mlp_bias()) w.b_down = buf.add(replicated_tensor(p + "down.bias", 1, C, zero));
    return w;
}

DeviceArray<float> mlp_forward(const LayerContext& ctx, const ParamBuffer& buf, const MlpWeights& w, const float* x,
                               MlpSaved& s) {
    const auto& d = ctx.dims;
    Backend& be = *ctx.backend;
    const bool swiglu = ctx.model->activation == Activation::swiglu;
    const int C = d.hidden, F = d.ffn, up_width = swiglu ? 2 * F : F;
    norm_forward(ctx, buf, w.norm, x, d.local_tokens, s.norm);
    s.up = ctx.floats(std::size_t(d.tokens) * up_width);
    {
        FullSequence in = to_full_sequence(ctx, s.norm.out.data(), C);
        be.matmul_forward(s.up.data(), in.data(), buf.param(w.w_up), buf.param_or_null(w.b_up), d.tokens, C, up_width);
    }
    s.act = ctx.floats(std::size_t(d.tokens) * F);
    if (swiglu) {
        be.swiglu_forward(s.act.data(), s.up.data(), d.tokens, F);
    } else {
        be.gelu_forward(s.act.data(), s.up.data(), std::size_t(d.tokens) * F);
    }
    DeviceArray<float> down = ctx.floats(std::size_t(d.tokens) * C);
    be.matmul_forward(down.data(), s.act.data(), buf.param(w.w_down),
                      ctx.tp_rank() == 0 ? buf.param_or_null(w.b_down) : nullptr, d.tokens, F, C);
    DeviceArray<float> out = reduce_partial_sums(ctx, std::move(down), C);
    be.add(out.data(), out.data(), x, std::size_t(d.local_tokens) * C);
    return out;
}

DeviceArray<float> mlp_backward(const LayerContext& ctx, ParamBuffer& buf, const MlpWeights& w, const float* x,
                                MlpSaved& s, const float* dout) {
    const auto& d = ctx.dims;
    Backend& be = *ctx.backend;
    const bool swiglu = ctx.model->activation == Activation::swiglu;
    const int C = d.hidden, F = d.ffn, up_width = swiglu ? 2 * F : F;
    DeviceArray<float> dact = ctx.floats(std::size_t(d.tokens) * F, true);
    {
        FullSequence ddown = to_full_sequence(ctx, dout, C);
        be.matmul_backward(dact.data(), buf.grad(w.w_down), buf.grad_or_null(w.b_down), ddown.data(), s.act.data(),
                           buf.param(w.w_down), d.tokens, F, C);
    }
    s.act.reset();
    DeviceArray<float> dup = ctx.floats(std::size_t(d.tokens) * up_width, true);
    if (swiglu) {
        be.swiglu_backward(dup.data(), s.up.data(), dact.data(), d.tokens, F);
    } else {
        be.gelu_backward(dup.data(), s.up.data(), dact.data(), std::size_t(d.tokens) * F);
    }
    dact.reset();
    s.up.reset();
    DeviceArray<float> dnorm_full = ctx.floats(std::size_t(d.tokens) * C, true);
    {
        FullSequence in = to_full_sequence(ctx, s.norm.out.data(), C);
        be.matmul_backward(dnorm_full.data(), buf.grad(w.w_up), buf.grad_or_null(w.b_up), dup.data(), in.data(),
                           buf.param(w.w_up), d.tokens, C, up_width);
    }
    dup.reset();
    DeviceArray<float> dnorm = reduce_partial_sums(ctx, std::move(dnorm_full), C);
    DeviceArray<float> dx = ctx.floats(std::size_t(d.local_tokens) * C);
    be.copy(dx.data(), dout, dx.bytes());
    norm_backward(ctx, buf, w.norm, x, d.local_tokens, s.norm, dnorm.data(), dx.data());
    s.norm = {};
    return dx;
}

}  // namespace tessel
