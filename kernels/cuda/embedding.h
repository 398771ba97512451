// embedding (CUDA): token embedding lookup (vocabulary-parallel) plus an optional learned
// position table, mirroring kernels/cpu/embedding.h:
//   out(B,T,C) = [vocab_start <= tok < vocab_end] * wte[tok - vocab_start] + wpe[t]  (wpe nullable)
// S = float or bf16. Backward ACCUMULATES (+=) into dwte / dwpe (caller zeroes), deterministically:
// token rows are grouped by a stable sort, so each row's sum has a fixed order (no atomics).
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/dtype.h"

namespace tessel::cuda {

template <typename S>
void encoder_forward(S* out,            // (B, T, C)
                     const int* tokens,  // (B, T)
                     const S* wte,       // (vocab_end - vocab_start, C), this shard's rows
                     const S* wpe,       // (T, C) or nullptr
                     int B, int T, int C, int vocab_start, int vocab_end,
                     cudaStream_t stream = nullptr);

// dwte or dwpe may be nullptr to skip.
template <typename S>
void encoder_backward(S* dwte,            // (vocab_end - vocab_start, C) or nullptr
                      S* dwpe,            // (T, C) or nullptr
                      const S* dout,      // (B, T, C)
                      const int* tokens,  // (B, T)
                      int B, int T, int C, int vocab_start, int vocab_end,
                      cudaStream_t stream = nullptr);

}  // namespace tessel::cuda
