// The optimizer step after a pipeline's backward, by ZeRO stage:
//   1. data-parallel gradient reduction over the data- and context-parallel ranks
//      (ParamBuffer::reduce_grads: all-reduce for stage 0,
//      reduce-scatter for stage 1; stages 2-3 reduced during the backward);
//   2. the tied token table's copies on the first and last stage sum their (owned) gradients over
//      the embedding group, and sequence-parallel norm weights sum theirs over the TP group;
//   3. AdamW on what this rank owns (the whole buffer for stage 0, its shard otherwise);
//   4. stages 1-2 all-gather the updated shards; gradients are zeroed.
// Gradients are already the global-batch mean: each token's loss carries 1/(global tokens).
#pragma once

#include <vector>

#include "executor/parallel_groups.h"
#include "executor/parameters.h"

namespace tessel {

// A fixed choice, stated in the run's output: AdamW with a constant learning rate, betas
// (0.9, 0.95) and decay 0.1 on the weight matrices, embedding tables included, not on biases or norms
// (GPT-3's, Brown et al. 2020; Megatron-LM's and nanoGPT's groups); no clipping.
struct AdamWConfig {
    float lr = 1e-3f;
    float beta1 = 0.9f, beta2 = 0.95f;
    float eps = 1e-8f;
    float weight_decay = 0.1f;
};

void optimizer_step(Backend& backend, const std::vector<ParamBuffer*>& buffers, ParallelGroups& groups,
                    const AdamWConfig& config, int step);

}  // namespace tessel
