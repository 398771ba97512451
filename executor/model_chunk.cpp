#include "executor/model_chunk.h"

#include <exception>

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

namespace {

// Acquires a buffer's parameters (ZeRO-3 gather) and, for a backward, opens its gradients, for
// the lifetime of one block's work. While an exception unwinds, the gradients' reduce-scatter
// (a collective the other ranks may never join) is skipped; the run is failing anyway.
class Using {
public:
    Using(ParamBuffer* buf, bool grads) : buf_(buf), grads_(grads), unwinding_(std::uncaught_exceptions()) {
        if (!buf_) return;
        buf_->acquire_params();
        if (grads_) buf_->begin_grads();
    }
    ~Using() noexcept(false) {
        if (!buf_) return;
        if (grads_ && std::uncaught_exceptions() == unwinding_) buf_->end_grads();
        buf_->release_params();
    }
    Using(const Using&) = delete;
    Using& operator=(const Using&) = delete;

private:
    ParamBuffer* buf_;
    bool grads_;
    int unwinding_;
};

DeviceArray<int> upload_ids(const LayerContext& ctx, const std::vector<int>& ids) {
    DeviceArray<int> out(ctx.mem, ids.size(), MemoryKind::activations);
    ctx.backend->upload(out.data(), ids.data(), ids.size() * sizeof(int));
    return out;
}

}  // namespace

ModelChunk::ModelChunk(const ModelSpec& m, const Plan& plan, const ChunkPlacement& where, int tp_size, int tp_rank)
    : where_(where), layers_in_recompute_mode_(std::size_t(layers_in_recompute_mode(plan, where.num_layers))) {
    const bool sp = plan.sequence_parallel;
    if (where_.first()) {
        token_buffer_ = std::make_unique<ParamBuffer>("embedding.wte");
        embedding_.token_buffer = token_buffer_.get();
        embedding_.token_table = add_token_table(*token_buffer_, m, tp_size, tp_rank);
        if (m.position_embedding == PositionEmbedding::learned) {
            position_buffer_ = std::make_unique<ParamBuffer>("embedding.wpe");
            embedding_.position_buffer = position_buffer_.get();
            embedding_.position_table = add_position_table(*position_buffer_, m, plan.seq_length);
        }
    }
    for (int i = 0; i < where_.num_layers; ++i) {
        const int layer = where_.first_layer + i;
        layer_buffers_.push_back(std::make_unique<ParamBuffer>(fmt::format("layers.{}", layer)));
        layers_.push_back(add_transformer_layer(*layer_buffers_.back(), m, layer, tp_size, tp_rank, sp));
    }
    if (where_.last()) {
        head_buffer_ = std::make_unique<ParamBuffer>("head");
        head_ = add_head(*head_buffer_, m, tp_size, tp_rank, sp);
        if (m.tied_embeddings) {
            if (!token_buffer_) {  // the last stage's copy of the tied table (Megatron's embedding group)
                token_buffer_ = std::make_unique<ParamBuffer>("embedding.wte");
                embedding_.token_buffer = token_buffer_.get();
                embedding_.token_table = add_token_table(*token_buffer_, m, tp_size, tp_rank);
            }
            head_.table_buffer = token_buffer_.get();
            head_.table = embedding_.token_table;
        }
    }
}

std::vector<ParamBuffer*> ModelChunk::buffers() {
    std::vector<ParamBuffer*> out;
    for (auto* b : {token_buffer_.get(), position_buffer_.get()})
        if (b) out.push_back(b);
    for (auto& b : layer_buffers_) out.push_back(b.get());
    if (head_buffer_) out.push_back(head_buffer_.get());
    return out;
}

void ModelChunk::materialize(const DeviceMemory& mem, int zero_stage, Communicator* dp, std::uint64_t seed) {
    for (ParamBuffer* b : buffers()) b->materialize(mem, zero_stage, dp, seed);
}

LayerContext ModelChunk::layer_context(const LayerContext& ctx, std::size_t i) const {
    LayerContext c = ctx;
    if (i >= layers_in_recompute_mode_) c.recompute = Recompute::none;  // block recompute keeps these
    return c;
}

DeviceArray<float> ModelChunk::forward(const LayerContext& ctx, int mb, DeviceArray<float> x,
                                       const MicrobatchTokens& tokens, float dloss, double* loss_sum) {
    if (stash_.count(mb)) throw RuntimeError(fmt::format("stage {}: microbatch {} forwarded twice", where_.stage, mb));
    Stash& s = stash_[mb];
    if (where_.first()) {
        s.tokens = upload_ids(ctx, tokens.inputs);
        Using table(token_buffer_.get(), false), positions(position_buffer_.get(), false);
        x = embedding_forward(ctx, embedding_, s.tokens.data());
    }
    s.layers.resize(layers_.size());
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        Using weights(layer_buffers_[i].get(), false);
        s.layers[i].input = std::move(x);
        x = layer_forward(layer_context(ctx, i), *layer_buffers_[i], layers_[i], s.layers[i]);
    }
    if (!where_.last()) return x;
    s.targets = upload_ids(ctx, tokens.targets);
    {
        Using head(head_buffer_.get(), false);
        Using table(head_.table_buffer == head_buffer_.get() ? nullptr : head_.table_buffer, false);
        *loss_sum = head_forward(ctx, head_, x.data(), s.targets.data(), dloss, s.head);
    }
    s.head_input = std::move(x);
    return {};
}

DeviceArray<float> ModelChunk::backward(const LayerContext& ctx, int mb, DeviceArray<float> dx) {
    auto it = stash_.find(mb);
    if (it == stash_.end())
        throw RuntimeError(fmt::format("stage {}: backward of microbatch {} before its forward", where_.stage, mb));
    Stash& s = it->second;
    if (where_.last()) {
        Using head(head_buffer_.get(), true);
        Using table(head_.table_buffer == head_buffer_.get() ? nullptr : head_.table_buffer, true);
        dx = head_backward(ctx, head_, s.head_input.data(), s.head);
        s.head_input.reset();
        s.targets.reset();
    }
    for (std::size_t i = layers_.size(); i-- > 0;) {
        Using weights(layer_buffers_[i].get(), true);
        dx = layer_backward(layer_context(ctx, i), *layer_buffers_[i], layers_[i], s.layers[i], dx.data());
    }
    if (where_.first()) {
        Using table(token_buffer_.get(), true), positions(position_buffer_.get(), true);
        embedding_backward(ctx, embedding_, s.tokens.data(), dx.data());
        dx.reset();
    }
    stash_.erase(it);
    return dx;
}

}  // namespace tessel
