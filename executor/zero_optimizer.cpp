#include "executor/zero_optimizer.h"

namespace tessel {

namespace {

// The part of tensor t that this rank owns, in owned-array coordinates.
Range owned_part(const ParamBuffer& buf, std::size_t t) {
    const TensorSlot& s = buf.slots()[t];
    const Range part = intersect(buf.owned(), {s.offset, s.offset + s.count});
    return {part.begin - buf.owned().begin, part.end - buf.owned().begin};
}

}  // namespace

void optimizer_step(Backend& backend, const std::vector<ParamBuffer*>& buffers, ParallelGroups& groups,
                    const AdamWConfig& config, int step) {
    for (ParamBuffer* b : buffers) b->reduce_grads();

    // Cross-group sums, one kind after the other so that no rank waits in one group while its
    // peer waits in another. TP peers hold buffers of identical layout (heads, ffn and vocabulary
    // split evenly), so their owned parts of a tensor coincide; so do the two tied tables'.
    auto sum_over = [&](Communicator* group, auto selected) {
        if (!group || group->size() == 1) return;
        for (ParamBuffer* b : buffers)
            for (std::size_t t = 0; t < b->tensors().size(); ++t) {
                const Range part = owned_part(*b, t);
                if (selected(b->tensors()[t]) && !part.empty())
                    group->all_reduce(b->owned_grads() + part.begin, part.size(), ReduceOp::sum);
            }
    };
    sum_over(groups.embedding.get(), [](const TensorSpec& s) { return s.tied_embedding; });
    sum_over(groups.tp.get(), [](const TensorSpec& s) { return s.tp_partial_grad; });

    for (ParamBuffer* b : buffers) {
        for (std::size_t t = 0; t < b->tensors().size(); ++t) {
            const Range part = owned_part(*b, t);
            if (part.empty()) continue;
            const float wd = b->tensors()[t].weight_decay ? config.weight_decay : 0.0f;
            backend.adamw_update(b->owned_params() + part.begin, b->owned_grads() + part.begin,
                                 b->moment1() + part.begin, b->moment2() + part.begin, part.size(), config.lr,
                                 config.beta1, config.beta2, config.eps, wd, step);
        }
        b->finish_step();
    }
}

}  // namespace tessel
