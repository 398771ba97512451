#include "executor/layers/transformer_layer.h"

namespace tessel {

LayerWeights add_transformer_layer(ParamBuffer& buf, const ModelSpec& m, int layer, int tp_size, int tp_rank,
                                   bool sequence_parallel) {
    LayerWeights w;
    w.attention = add_attention(buf, m, layer, tp_size, tp_rank, sequence_parallel);
    w.mlp = add_mlp(buf, m, layer, tp_size, tp_rank, sequence_parallel);
    return w;
}

namespace {
DeviceArray<float> run_forward(const LayerContext& ctx, const ParamBuffer& buf, const LayerWeights& w, LayerSaved& s) {
    s.middle = attention_forward(ctx, buf, w.attention, s.input.data(), s.attention);
    return mlp_forward(ctx, buf, w.mlp, s.middle.data(), s.mlp);
}
}  // namespace

DeviceArray<float> layer_forward(const LayerContext& ctx, const ParamBuffer& buf, const LayerWeights& w,
                                 LayerSaved& s) {
    DeviceArray<float> out = run_forward(ctx, buf, w, s);
    if (ctx.recompute == Recompute::full) {
        s.attention = {};
        s.middle.reset();
        s.mlp = {};
    }
    return out;
}

DeviceArray<float> layer_backward(const LayerContext& ctx, ParamBuffer& buf, const LayerWeights& w, LayerSaved& s,
                                  const float* dout) {
    if (ctx.recompute == Recompute::full) {
        LayerContext keep = ctx;
        keep.recompute = Recompute::none;  // this time keep what backward needs
        run_forward(keep, buf, w, s);      // the output itself is not needed again
    }
    DeviceArray<float> dmiddle = mlp_backward(ctx, buf, w.mlp, s.middle.data(), s.mlp, dout);
    s.middle.reset();
    DeviceArray<float> dx = attention_backward(ctx, buf, w.attention, s.input.data(), s.attention, dmiddle.data());
    s.input.reset();
    return dx;
}

}  // namespace tessel
