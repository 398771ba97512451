#include "executor/layers/embedding.h"

#include <algorithm>

#include "executor/layers/tensor_parallel.h"

namespace tessel {

TensorSlot add_token_table(ParamBuffer& buf, const ModelSpec& m, int tp_size, int tp_rank) {
    TensorSpec t = row_shard(kTokenTableName, std::size_t(m.vocab_size), std::size_t(m.hidden_size), tp_size,
                             tp_rank, InitRule::normal(0.02f));
    t.tied_embedding = m.tied_embeddings;
    t.weight_decay = true;  // a matrix like the others (Megatron-LM exempts only biases and norms)
    return buf.add(std::move(t));
}

static TensorSpec position_table_spec(const ModelSpec& m, int seq_length) {
    // The model's whole table, as the simulator and Megatron-LM hold it, though a run at a shorter
    // sequence reads only its first seq_length rows: the memory compare measures is the model's.
    // Values are a function of (seed, name, index), so the rows a run reads do not depend on this.
    const int rows = std::max(m.max_position_embeddings, seq_length);
    TensorSpec t = replicated_tensor("embedding.wpe.weight", std::size_t(rows), std::size_t(m.hidden_size),
                                     InitRule::normal(0.01f));
    t.weight_decay = true;
    return t;
}

TensorSlot add_position_table(ParamBuffer& buf, const ModelSpec& m, int seq_length) {
    return buf.add(position_table_spec(m, seq_length));
}

DeviceArray<float> embedding_forward(const LayerContext& ctx, const EmbeddingWeights& w, const int* tokens) {
    const auto& d = ctx.dims;
    DeviceArray<float> out = ctx.floats(std::size_t(d.tokens) * d.hidden);
    const float* wpe = w.position_buffer && ctx.tp_rank() == 0 ? w.position_buffer->param(w.position_table) : nullptr;
    const int c = d.chunk_len();
    for (int j = 0; j < d.num_chunks(); ++j) {  // each sequence chunk at its positions
        const std::size_t row = std::size_t(j) * d.batch * c;
        ctx.backend->embedding_forward(out.data() + row * d.hidden, tokens + row, w.token_buffer->param(w.token_table),
                                       wpe ? wpe + std::size_t(d.chunk_position(j)) * d.hidden : nullptr, d.batch, c,
                                       d.hidden, d.vocab_start, d.vocab_end);
    }
    return reduce_partial_sums(ctx, std::move(out), d.hidden);
}

void embedding_backward(const LayerContext& ctx, const EmbeddingWeights& w, const int* tokens, const float* dout) {
    const auto& d = ctx.dims;
    FullSequence full = to_full_sequence(ctx, dout, d.hidden);
    float* dwpe = w.position_buffer ? w.position_buffer->grad(w.position_table) : nullptr;
    const int c = d.chunk_len();
    for (int j = 0; j < d.num_chunks(); ++j) {
        const std::size_t row = std::size_t(j) * d.batch * c;
        ctx.backend->embedding_backward(w.token_buffer->grad(w.token_table),
                                        dwpe ? dwpe + std::size_t(d.chunk_position(j)) * d.hidden : nullptr,
                                        full.data() + row * d.hidden, tokens + row, d.batch, c, d.hidden,
                                        d.vocab_start, d.vocab_end);
    }
}

}  // namespace tessel
