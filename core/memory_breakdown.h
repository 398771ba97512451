// Memory per GPU by what holds it, in GiB, as the simulator predicts it and the executor measures
// it; `peak` is the most the busiest rank holds at once. buffers are the communication buffers and
// what the runtime keeps beside them (the simulator's runtime reserve, the executor's
// runtime_memory_GiB); peak counts them. One struct for both so compare reads them side by side.
#pragma once

namespace tessel {

struct MemoryBreakdown {
    double weights = 0, gradients = 0, optimizer = 0, activations = 0, buffers = 0, peak = 0;
};

}  // namespace tessel
