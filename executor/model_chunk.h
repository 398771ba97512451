// ModelChunk: the layers of one pipeline stage on this rank (chunk c on pipeline rank r is
// model stage c·pp + r; core/schedule.h), with the embedding on the first stage and the final
// norm, LM head and loss on the last. It owns its parameter buffers (one per layer, so ZeRO-3
// gathers and ZeRO-2 reduces one layer at a time) and what each microbatch's forward leaves for
// its backward.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "core/plan.h"
#include "executor/layers/embedding.h"
#include "executor/layers/lm_head.h"
#include "executor/layers/transformer_layer.h"

namespace tessel {

struct ChunkPlacement {
    int stage = 0, num_stages = 1;
    int first_layer = 0, num_layers = 0;
    bool first() const { return stage == 0; }
    bool last() const { return stage == num_stages - 1; }
};

// One microbatch's token ids (B·T each): inputs on the first stage, targets on the last.
struct MicrobatchTokens {
    std::vector<int> inputs, targets;
};

class ModelChunk {
public:
    // With tied embeddings the head reads the first stage's token table when this chunk is both
    // first and last; a last stage of a longer pipeline holds its own copy.
    ModelChunk(const ModelSpec& m, const Plan& plan, const ChunkPlacement& where, int tp_size, int tp_rank);

    const ChunkPlacement& placement() const { return where_; }
    std::vector<ParamBuffer*> buffers();
    void materialize(const DeviceMemory& mem, int zero_stage, Communicator* dp, std::uint64_t seed);

    // First stage: input is ignored (tokens come from `tokens`). Returns the activation for the
    // next stage, or, on the last stage, an empty array with *loss_sum set.
    DeviceArray<float> forward(const LayerContext& ctx, int microbatch, DeviceArray<float> input,
                               const MicrobatchTokens& tokens, float dloss, double* loss_sum);
    // Last stage: dout is ignored. Returns the gradient for the previous stage (empty on the first).
    DeviceArray<float> backward(const LayerContext& ctx, int microbatch, DeviceArray<float> dout);

private:
    struct Stash {
        DeviceArray<int> tokens, targets;
        std::vector<LayerSaved> layers;
        DeviceArray<float> head_input;
        HeadSaved head;
    };

    // A layer context for layer i: the plan's recompute for the first layers_in_recompute_mode_
    // (all but under block recompute), none for the rest.
    LayerContext layer_context(const LayerContext& ctx, std::size_t i) const;

    ChunkPlacement where_;
    std::size_t layers_in_recompute_mode_ = 0;
    std::unique_ptr<ParamBuffer> token_buffer_, position_buffer_, head_buffer_;
    std::vector<std::unique_ptr<ParamBuffer>> layer_buffers_;
    std::vector<LayerWeights> layers_;
    EmbeddingWeights embedding_;
    HeadWeights head_;
    std::map<int, Stash> stash_;
};

}  // namespace tessel
