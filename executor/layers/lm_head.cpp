#include "executor/layers/lm_head.h"

#include <vector>

#include "executor/layers/tensor_parallel.h"

namespace tessel {

HeadWeights add_head(ParamBuffer& buf, const ModelSpec& m, int tp_size, int tp_rank, bool sequence_parallel) {
    HeadWeights w;
    w.head_buffer = &buf;
    w.final_norm = add_norm(buf, m, "final_norm", sequence_parallel);
    if (!m.tied_embeddings) {
        TensorSpec t = row_shard("lm_head.weight", std::size_t(m.vocab_size), std::size_t(m.hidden_size), tp_size,
                                 tp_rank, InitRule::normal(0.02f));
        t.weight_decay = true;
        w.table_buffer = &buf;
        w.table = buf.add(std::move(t));
    }
    return w;
}

double head_forward(const LayerContext& ctx, const HeadWeights& w, const float* x, const int* targets, float dloss,
                    HeadSaved& s) {
    const auto& d = ctx.dims;
    Backend& be = *ctx.backend;
    const int C = d.hidden, V = d.vocab_end - d.vocab_start, N = d.tokens;
    norm_forward(ctx, *w.head_buffer, w.final_norm, x, d.local_tokens, s.norm);
    DeviceArray<float> logits = ctx.floats(std::size_t(N) * V);
    {
        FullSequence in = to_full_sequence(ctx, s.norm.out.data(), C);
        be.matmul_forward(logits.data(), in.data(), w.table_buffer->param(w.table), nullptr, N, C, V);
    }
    // stats = [max (N) | sum of exp (N) | target logit (N)]
    DeviceArray<float> stats = ctx.floats(3 * std::size_t(N));
    float* max = stats.data();
    float* sumexp = max + N;
    float* target_logit = sumexp + N;
    be.vocab_parallel_max(logits.data(), N, V, max);
    if (ctx.tp_size() > 1) ctx.tp->all_reduce(max, std::size_t(N), ReduceOp::max);
    be.vocab_parallel_sum_exp(logits.data(), max, N, V, sumexp, target_logit, targets, d.vocab_start, d.vocab_end);
    if (ctx.tp_size() > 1) ctx.tp->all_reduce(sumexp, 2 * std::size_t(N), ReduceOp::sum);
    DeviceArray<float> losses = ctx.floats(std::size_t(N));
    be.vocab_parallel_loss(max, sumexp, target_logit, N, losses.data(), targets);

    DeviceArray<float> weights = ctx.floats(std::size_t(N));
    be.fill(weights.data(), dloss, std::size_t(N));
    s.dlogits = ctx.floats(std::size_t(N) * V, true);
    be.vocab_parallel_backward(s.dlogits.data(), logits.data(), max, sumexp, targets, weights.data(), N, V,
                               d.vocab_start, d.vocab_end);

    std::vector<float> host(N);
    be.download(host.data(), losses.data(), host.size() * sizeof(float));
    double sum = 0;
    for (float l : host) sum += l;
    return sum;
}

DeviceArray<float> head_backward(const LayerContext& ctx, const HeadWeights& w, const float* x, HeadSaved& s) {
    const auto& d = ctx.dims;
    Backend& be = *ctx.backend;
    const int C = d.hidden, V = d.vocab_end - d.vocab_start, N = d.tokens;
    DeviceArray<float> dnorm_full = ctx.floats(std::size_t(N) * C, true);
    {
        FullSequence in = to_full_sequence(ctx, s.norm.out.data(), C);
        be.matmul_backward(dnorm_full.data(), w.table_buffer->grad(w.table), nullptr, s.dlogits.data(), in.data(),
                           w.table_buffer->param(w.table), N, C, V);
    }
    s.dlogits.reset();
    DeviceArray<float> dnorm = reduce_partial_sums(ctx, std::move(dnorm_full), C);
    DeviceArray<float> dx = ctx.floats(std::size_t(d.local_tokens) * C, true);
    norm_backward(ctx, *w.head_buffer, w.final_norm, x, d.local_tokens, s.norm, dnorm.data(), dx.data());
    s.norm = {};
    return dx;
}

}  // namespace tessel
