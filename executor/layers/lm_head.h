// The last stage: final norm, the vocabulary-parallel LM head (logits for this rank's vocabulary
// shard, from the token table when tied) and the vocabulary-parallel cross-entropy (a MAX and a
// SUM all-reduce over TP stitch the shards' softmax together, as Megatron's
// _VocabParallelCrossEntropy does). The logits' gradient is known once the loss is: it is formed
// in the forward (llm.c's fused classifier) and the logits are freed there.
#pragma once

#include "executor/layers/layer_context.h"
#include "executor/layers/norm.h"
#include "executor/parameters.h"

namespace tessel {

struct HeadWeights {
    ParamBuffer* head_buffer = nullptr;  // final norm (+ the LM head when untied)
    NormWeights final_norm;
    ParamBuffer* table_buffer = nullptr;  // where the (V_local, C) output table lives
    TensorSlot table;
};

// Declares the final norm and, when untied, the LM head's vocabulary shard into buf.
HeadWeights add_head(ParamBuffer& buf, const ModelSpec& m, int tp_size, int tp_rank, bool sequence_parallel);

struct HeadSaved {
    NormSaved norm;
    DeviceArray<float> dlogits;  // (tokens, V_local)
};

// x: (local_tokens, C); targets: (tokens) device ids; dloss: each token's weight in the step's
// loss (1 / tokens of the global batch). Returns the sum of this microbatch's token losses.
double head_forward(const LayerContext& ctx, const HeadWeights& w, const float* x, const int* targets, float dloss,
                    HeadSaved& saved);
// Returns dx (local_tokens, C).
DeviceArray<float> head_backward(const LayerContext& ctx, const HeadWeights& w, const float* x, HeadSaved& saved);

}  // namespace tessel
