// The values a plan's free knobs can take for one model and batch: the divisors a layout is built
// from, the microbatch sizes a data-parallel size allows and the virtual-stage counts a pipeline
// can split the layers into. The planner searches them; `validate` fills a published run's
// unstated knobs from them when its defaults do not fit (compare/validate.cpp, R15).
#pragma once
#include <vector>

#include "core/model_spec.h"

namespace tessel {

// Positive divisors of n, ascending.
std::vector<int> divisors(int n);

// Microbatch sizes for a data-parallel size: divisors of the per-replica batch up to 64 sequences
// (beyond that the activations of one microbatch outgrow any GPU for every model large enough to
// need planning, and GEMMs are already efficient). Empty when dp does not divide the batch.
std::vector<int> microbatch_sizes(int global_batch_size, int dp);
inline constexpr int kMaxMicrobatch = 64;

// Virtual stages for a pipeline of pp ranks: 1, and when pp > 1 every v >= 2 whose pp*v chunks
// split the layers evenly, or evenly but for a shorter first and last chunk (core/plan.h's
// pipeline_split_supported; the exporters write the uneven splits as a layout). With
// lm_head_layers k > 0 (Plan::lm_head_layers): the counts, 1 included, whose split of the layers
// plus k leaves the last chunk a layer after it gives up k.
std::vector<int> virtual_stage_counts(int num_layers, int pp, int lm_head_layers = 0);

// Plan::lm_head_layers to try: 0 (the layers alone), and the LM head's weights in layers' worth
// (vocabulary x hidden over a layer's GEMM weights, rounded) where that is at least 1.
std::vector<int> lm_head_layer_choices(const ModelSpec& m);

// Block recompute (full recompute of only the first N layers of each chunk, Megatron's
// --recompute-method block): the fewest N in [1, most - 1] for which fits(N) holds, memory falling
// as N grows; 0 when a chunk has fewer than two layers or even most - 1 layers do not fit (then
// only recomputing every layer can help).
template <class Fits>
int fewest_block_recompute_layers(int most_layers_per_chunk, Fits&& fits) {
    if (most_layers_per_chunk < 2 || !fits(most_layers_per_chunk - 1)) return 0;
    int lo = 1, hi = most_layers_per_chunk - 1;  // hi fits
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (fits(mid)) hi = mid;
        else lo = mid + 1;
    }
    return hi;
}

}  // namespace tessel
