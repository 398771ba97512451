#include "executor/layers/attention_block.h"

#include <cmath>

#include <fmt/format.h>

#include "executor/layers/context_parallel_attention.h"
#include "executor/layers/tensor_parallel.h"

namespace tessel {

AttentionWeights add_attention(ParamBuffer& buf, const ModelSpec& m, int layer, int tp_size, int tp_rank,
                               bool sequence_parallel) {
    const std::string p = fmt::format("layers.{}.attention.", layer);
    const std::size_t C = std::size_t(m.hidden_size), D = std::size_t(m.head_dim);
    const std::size_t H = std::size_t(m.num_attention_heads), KH = std::size_t(m.num_kv_heads);
    // GPT-2's init (Radford et al. 2019): N(0, 0.02), residual projections scaled by 1/sqrt(2·layers).
    const InitRule normal = InitRule::normal(0.02f);
    const InitRule residual = InitRule::normal(0.02f / std::sqrt(2.0f * float(m.num_layers)));
    const InitRule zero = InitRule::constant(0.0f);
    const bool qkv_bias = m.has_qkv_bias();

    AttentionWeights w;
    w.norm = add_norm(buf, m, p + "norm", sequence_parallel);
    // Heads split evenly over TP (validated), so the row shard of q is whole heads.
    auto rows = [&](const std::string& name, std::size_t out, InitRule init, bool decay) {
        TensorSpec t = row_shard(p + name, out, C, tp_size, tp_rank, init);
        t.weight_decay = decay;
        return buf.add(std::move(t));
    };
    auto bias = [&](const std::string& name, std::size_t out) {
        return buf.add(row_shard(p + name, out, 1, tp_size, tp_rank, zero));
    };
    w.wq = rows("q.weight", H * D, normal, true);
    if (qkv_bias) w.bq = bias("q.bias", H * D);
    w.wk = rows("k.weight", KH * D, normal, true);
    if (qkv_bias) w.bk = bias("k.bias", KH * D);
    w.wv = rows("v.weight", KH * D, normal, true);
    if (qkv_bias) w.bv = bias("v.bias", KH * D);
    if (m.qk_norm == QkNorm::per_head) {
        // Shared by every head: each TP rank's heads give part of its gradient.
        auto head_norm = [&](const std::string& name) {
            TensorSpec t = replicated_tensor(p + name, 1, D, InitRule::constant(1.0f));
            t.tp_partial_grad = tp_size > 1;
            return buf.add(std::move(t));
        };
        w.q_norm = head_norm("q_norm.weight");
        w.k_norm = head_norm("k_norm.weight");
    }
    TensorSpec wo = column_shard(p + "out.weight", C, H * D, tp_size, tp_rank, residual);
    wo.weight_decay = true;
    w.wo = buf.add(std::move(wo));
    if (m.has_out_bias()) w.bo = buf.add(replicated_tensor(p + "out.bias", 1, C, zero));
    return w;
}

namespace {

void attention_core(const LayerContext& ctx, AttentionSaved& s) {
    const auto& d = ctx.dims;
    s.att = ctx.floats(std::size_t(d.tokens) * d.heads * d.head_dim);
    s.lse = ctx.floats(std::size_t(d.tokens) * d.heads);
    if (d.cp > 1) {
        context_parallel_attention_forward(ctx, s.att.data(), s.lse.data(), s.q.data(), s.k_full.data(),
                                           s.v_full.data());
    } else {
        ctx.backend->attention_forward(s.att.data(), s.lse.data(), s.q.data(), s.k.data(), s.v.data(), d.batch, d.seq,
                                       d.heads, d.kv_heads, d.head_dim);
    }
}

// RMSNorm of every head of x (tokens, heads·D): x keeps the normalised values, `pre` the input.
void head_norm_forward(const LayerContext& ctx, const ParamBuffer& buf, TensorSlot weight, DeviceArray<float>& x,
                       DeviceArray<float>& pre, DeviceArray<float>& rstd, int heads) {
    const auto& d = ctx.dims;
    const int rows = d.tokens * heads;
    pre = std::move(x);
    x = ctx.floats(std::size_t(rows) * d.head_dim);
    rstd = ctx.floats(std::size_t(rows));
    ctx.backend->rmsnorm_forward(x.data(), rstd.data(), pre.data(), buf.param(weight), rows, d.head_dim,
                                 ctx.norm_epsilon());
}

// dx holds the gradient of the normalised heads; it becomes the gradient of their input.
void head_norm_backward(const LayerContext& ctx, ParamBuffer& buf, TensorSlot weight, DeviceArray<float>& dx,
                        DeviceArray<float>& pre, DeviceArray<float>& rstd, int heads) {
    const auto& d = ctx.dims;
    const int rows = d.tokens * heads;
    DeviceArray<float> dpre = ctx.floats(std::size_t(rows) * d.head_dim, true);
    ctx.backend->rmsnorm_backward(dpre.data(), buf.grad(weight), dx.data(), pre.data(), buf.param(weight), rstd.data(),
                                  rows, d.head_dim);
    dx = std::move(dpre);
    pre.reset();
    rstd.reset();
}

// RoPE on (tokens, heads·D) at each chunk's positions in the full sequence.
void rope_chunks(const LayerContext& ctx, float* x, int heads, bool backward) {
    const auto& d = ctx.dims;
    const int c = d.chunk_len();
    for (int j = 0; j < d.num_chunks(); ++j) {
        float* chunk = x + std::size_t(j) * d.batch * c * heads * d.head_dim;
        if (backward) {
            ctx.backend->rope_backward_inplace(chunk, d.batch, c, heads, d.head_dim, ctx.rope, d.chunk_position(j));
        } else {
            ctx.backend->rope_forward_inplace(chunk, d.batch, c, heads, d.head_dim, ctx.rope, d.chunk_position(j));
        }
    }
}

}  // namespace

DeviceArray<float> attention_forward(const LayerContext& ctx, const ParamBuffer& buf, const AttentionWeights& w,
                                     const float* x, AttentionSaved& s) {
    const auto& d = ctx.dims;
    Backend& be = *ctx.backend;
    const int C = d.hidden, qw = d.heads * d.head_dim, kw = d.kv_heads * d.head_dim;
    norm_forward(ctx, buf, w.norm, x, d.local_tokens, s.norm);
    {
        FullSequence in = to_full_sequence(ctx, s.norm.out.data(), C);
        s.q = ctx.floats(std::size_t(d.tokens) * qw);
        s.k = ctx.floats(std::size_t(d.tokens) * kw);
        s.v = ctx.floats(std::size_t(d.tokens) * kw);
        be.matmul_forward(s.q.data(), in.data(), buf.param(w.wq), buf.param_or_null(w.bq), d.tokens, C, qw);
        be.matmul_forward(s.k.data(), in.data(), buf.param(w.wk), buf.param_or_null(w.bk), d.tokens, C, kw);
        be.matmul_forward(s.v.data(), in.data(), buf.param(w.wv), buf.param_or_null(w.bv), d.tokens, C, kw);
    }
    if (w.q_norm.present()) {
        head_norm_forward(ctx, buf, w.q_norm, s.q, s.q_pre, s.q_rstd, d.heads);
        head_norm_forward(ctx, buf, w.k_norm, s.k, s.k_pre, s.k_rstd, d.kv_heads);
    }
    if (ctx.model->position_embedding == PositionEmbedding::rope) {
        rope_chunks(ctx, s.q.data(), d.heads, false);
        rope_chunks(ctx, s.k.data(), d.kv_heads, false);
    }
    if (d.cp > 1) {
        s.k_full = gather_sequence_chunks(ctx, s.k.data(), kw);
        s.v_full = gather_sequence_chunks(ctx, s.v.data(), kw);
        s.k.reset();
        s.v.reset();
    }
    attention_core(ctx, s);
    DeviceArray<float> proj = ctx.floats(std::size_t(d.tokens) * C);
    be.matmul_forward(proj.data(), s.att.data(), buf.param(w.wo), ctx.tp_rank() == 0 ? buf.param_or_null(w.bo) : nullptr,
                      d.tokens, qw, C);
    DeviceArray<float> out = reduce_partial_sums(ctx, std::move(proj), C);
    be.add(out.data(), out.data(), x, std::size_t(d.local_tokens) * C);
    if (ctx.recompute == Recompute::selective) {  // the attention core is recomputed in backward
        s.att.reset();
        s.lse.reset();
    }
    return out;
}

DeviceArray<float> attention_backward(const LayerContext& ctx, ParamBuffer& buf, const AttentionWeights& w,
                                      const float* x, AttentionSaved& s, const float* dout) {
    const auto& d = ctx.dims;
    Backend& be = *ctx.backend;
    const int C = d.hidden, qw = d.heads * d.head_dim, kw = d.kv_heads * d.head_dim;
    if (s.att.empty()) attention_core(ctx, s);

    DeviceArray<float> datt = ctx.floats(std::size_t(d.tokens) * qw, true);
    {
        FullSequence dproj = to_full_sequence(ctx, dout, C);
        be.matmul_backward(datt.data(), buf.grad(w.wo), buf.grad_or_null(w.bo), dproj.data(), s.att.data(),
                           buf.param(w.wo), d.tokens, qw, C);
    }
    DeviceArray<float> dq = ctx.floats(std::size_t(d.tokens) * qw, true);
    DeviceArray<float> dk = ctx.floats(std::size_t(d.tokens) * kw, true);
    DeviceArray<float> dv = ctx.floats(std::size_t(d.tokens) * kw, true);
    if (d.cp > 1) {
        DeviceArray<float> dk_full = ctx.floats(s.k_full.size(), true), dv_full = ctx.floats(s.v_full.size(), true);
        context_parallel_attention_backward(ctx, dq.data(), dk_full.data(), dv_full.data(), datt.data(), s.q.data(),
                                            s.k_full.data(), s.v_full.data(), s.att.data(), s.lse.data());
        s.k_full.reset();
        s.v_full.reset();
        reduce_scatter_sequence_chunks(ctx, dk_full.data(), dk.data(), kw);
        reduce_scatter_sequence_chunks(ctx, dv_full.data(), dv.data(), kw);
    } else {
        be.attention_backward(dq.data(), dk.data(), dv.data(), datt.data(), s.q.data(), s.k.data(), s.v.data(),
                              s.att.data(), s.lse.data(), d.batch, d.seq, d.heads, d.kv_heads, d.head_dim);
    }
    datt.reset();
    s.att.reset();
    s.lse.reset();
    if (ctx.model->position_embedding == PositionEmbedding::rope) {
        rope_chunks(ctx, dq.data(), d.heads, true);
        rope_chunks(ctx, dk.data(), d.kv_heads, true);
    }
    if (w.q_norm.present()) {
        head_norm_backward(ctx, buf, w.q_norm, dq, s.q_pre, s.q_rstd, d.heads);
        head_norm_backward(ctx, buf, w.k_norm, dk, s.k_pre, s.k_rstd, d.kv_heads);
    }
    DeviceArray<float> dnorm_full = ctx.floats(std::size_t(d.tokens) * C, true);
    {
        FullSequence in = to_full_sequence(ctx, s.norm.out.data(), C);
        be.matmul_backward(dnorm_full.data(), buf.grad(w.wq), buf.grad_or_null(w.bq), dq.data(), in.data(),
                           buf.param(w.wq), d.tokens, C, qw);
        be.matmul_backward(dnorm_full.data(), buf.grad(w.wk), buf.grad_or_null(w.bk), dk.data(), in.data(),
                           buf.param(w.wk), d.tokens, C, kw);
        be.matmul_backward(dnorm_full.data(), buf.grad(w.wv), buf.grad_or_null(w.bv), dv.data(), in.data(),
                           buf.param(w.wv), d.tokens, C, kw);
    }
    dq.reset();
    dk.reset();
    dv.reset();
    s.q.reset();
    s.k.reset();
    s.v.reset();
    DeviceArray<float> dnorm = reduce_partial_sums(ctx, std::move(dnorm_full), C);
    DeviceArray<float> dx = ctx.floats(std::size_t(d.local_tokens) * C);
    be.copy(dx.data(), dout, dx.bytes());
    norm_backward(ctx, buf, w.norm, x, d.local_tokens, s.norm, dnorm.data(), dx.data());
    s.norm = {};
    return dx;
}

}  // namespace tessel
