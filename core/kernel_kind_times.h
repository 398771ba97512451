// Kernel time by kind of kernel, the split a GPU profile gives and the simulator predicts: GEMMs,
// fused attention, and the bandwidth-bound rest (norms, activations, residuals, the loss,
// gradient accumulation, the optimizer). Communication, idle time and host transfers are not
// kernels here.
#pragma once

namespace tessel {

struct KernelKindTimes {
    double gemm = 0, attention = 0, memory_bound = 0;
    double total() const { return gemm + attention + memory_bound; }
};

}  // namespace tessel
