// calibrate's layer benchmark: the kernels of one GPT-style transformer layer (layernorm, Q/K/V,
// causal attention, output projection, residual adds, MLP with GeLU), run back to back as a
// training step runs them — the forwards of several microbatches, then their backwards — against
// the sum of the same kernels timed one by one.
// In a step, each kernel finds its operands where the previous kernels left them (evicted from the
// caches, or on a GPU sharing L2 and HBM with its neighbours), so the sequence runs slower than its
// kernels do alone: the ratio is the part of the isolated rates a step keeps, which the profile's
// sustained_clock_fraction stands for.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "executor/calibrate_timing.h"
#include "kernels/backend.h"

namespace tessel {

struct LayerSequenceSample {
    int tokens = 0, hidden = 0, heads = 0;
    double sequence_seconds = 0;  // one microbatch's forward and backward, back to back (per microbatch)
    double isolated_seconds = 0;  // the sum of the same kernels, each timed alone
    double kept() const { return sequence_seconds > 0 ? isolated_seconds / sequence_seconds : 1.0; }
};

// One layer of hidden h (ffn 4h, head dim 32 up to h = 256, 64 above) over T tokens.
LayerSequenceSample measure_layer_sequence(Backend& backend, int tokens, int hidden, const TimingBudget& timing);

}  // namespace tessel
