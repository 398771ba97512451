#include "executor/layers/norm.h"

namespace tessel {

NormWeights add_norm(ParamBuffer& buf, const ModelSpec& m, const std::string& name, bool sequence_parallel) {
    NormWeights w;
    const std::size_t C = std::size_t(m.hidden_size);
    TensorSpec weight = replicated_tensor(name + ".weight", 1, C, InitRule::constant(1.0f));
    weight.tp_partial_grad = sequence_parallel;
    w.weight = buf.add(std::move(weight));
    if (m.norm == Norm::layernorm) {
        TensorSpec bias = replicated_tensor(name + ".bias", 1, C, InitRule::constant(0.0f));
        bias.tp_partial_grad = sequence_parallel;
        w.bias = buf.add(std::move(bias));
    }
    return w;
}

void norm_forward(const LayerContext& ctx, const ParamBuffer& buf, const NormWeights& w, const float* x, int n,
                  NormSaved& saved) {
    const int C = ctx.dims.hidden;
    saved.out = ctx.floats(std::size_t(n) * C);
    saved.rstd = ctx.floats(std::size_t(n));
    if (ctx.model->norm == Norm::layernorm) {
        saved.mean = ctx.floats(std::size_t(n));
        ctx.backend->layernorm_forward(saved.out.data(), saved.mean.data(), saved.rstd.data(), x, buf.param(w.weight),
                                       buf.param(w.bias), n, C, ctx.norm_epsilon());
    } else {
        ctx.backend->rmsnorm_forward(saved.out.data(), saved.rstd.data(), x, buf.param(w.weight), n, C,
                                     ctx.norm_epsilon());
    }
}

void norm_backward(const LayerContext& ctx, ParamBuffer& buf, const NormWeights& w, const float* x, int n,
                   const NormSaved& saved, const float* dout, float* dx) {
    const int C = ctx.dims.hidden;
    if (ctx.model->norm == Norm::layernorm) {
        ctx.backend->layernorm_backward(dx, buf.grad(w.weight), buf.grad(w.bias), dout, x, buf.param(w.weight),
                                        saved.mean.data(), saved.rstd.data(), n, C);
    } else {
        ctx.backend->rmsnorm_backward(dx, buf.grad(w.weight), dout, x, buf.param(w.weight), saved.rstd.data(), n, C);
    }
}

}  // namespace tessel
