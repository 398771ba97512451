// Vocabulary-parallel embedding (Megatron's VocabParallelEmbedding): each TP rank holds the rows
// [vocab_start, vocab_end) of the token table and looks up only those tokens (zero for the
// others); TP rank 0 adds the learned positions; reduce_partial_sums then sums the ranks (and
// scatters the sequence under sequence parallelism). Every TP rank accumulates the position
// table's gradient from the full-sequence output gradient, so its replicas stay equal.
#pragma once

#include "executor/layers/layer_context.h"
#include "executor/parameters.h"

namespace tessel {

// The token table's full name, shared by the embedding and a tied LM head.
inline constexpr const char* kTokenTableName = "embedding.wte.weight";

// Declares this rank's vocabulary shard of the token table (its own buffer: the tied copy on the
// last stage must have the same layout for their gradients to be summed shard by shard).
TensorSlot add_token_table(ParamBuffer& buf, const ModelSpec& m, int tp_size, int tp_rank);
TensorSlot add_position_table(ParamBuffer& buf, const ModelSpec& m, int seq_length);

struct EmbeddingWeights {
    ParamBuffer* token_buffer = nullptr;
    TensorSlot token_table;
    ParamBuffer* position_buffer = nullptr;  // nullptr without learned positions
    TensorSlot position_table;
};

// tokens: (B, T) device ids. Returns the residual stream (local_tokens, C).
DeviceArray<float> embedding_forward(const LayerContext& ctx, const EmbeddingWeights& w, const int* tokens);
// dout: (local_tokens, C); gradients accumulate into the tables.
void embedding_backward(const LayerContext& ctx, const EmbeddingWeights& w, const int* tokens, const float* dout);

}  // namespace tessel
