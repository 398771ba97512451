// calibrate's step benchmark: a real training step of a small calibration model (two layers and
// the LM head, GPT or Llama layout) through the executor itself, every kernel timed where the step
// runs it and then again alone, right away, on the same operands (timed_backend.h).
// In a step each kernel finds its operands where the previous kernels left them (evicted from the
// caches, or on a GPU sharing L2 and HBM with its neighbours) while the other ranks compute beside
// it, so the step runs slower than its kernels do alone: the ratio is the part of the isolated
// rates a step keeps, which the profile's sustained_clock_fraction stands for.
#pragma once

#include <string>

namespace tessel {

struct StepKernelSample {
    std::string layout;  // "gpt" (LayerNorm, GeLU, learned positions) or "llama" (RMSNorm, SwiGLU, RoPE)
    int tokens = 0, hidden = 0, heads = 0;
    double in_step_seconds = 0;  // the step's kernels where it ran them (per step)
    double alone_seconds = 0;    // the same kernel calls, each replayed alone (per step)
    double kept() const { return in_step_seconds > 0 ? alone_seconds / in_step_seconds : 1.0; }
};

struct StepBenchmark {
    int steps = 3;    // the first is warm-up
    int replays = 5;  // per kernel call
};

// One rank's own step (a one-rank world; every rank of calibrate runs one at once) over `tokens`
// tokens per microbatch (sequences of 128) of a model of hidden h, two microbatches per step.
StepKernelSample measure_step_kernels(const std::string& backend, const std::string& layout, int tokens, int hidden,
                                      const StepBenchmark& bench);

}  // namespace tessel
