// rmsnorm (CUDA): RMSNorm over the last dimension with a weight only (Llama), mirroring
// kernels/cpu/rmsnorm.h: out(N,C) = inp * rstd * weight(C), rstd = 1/sqrt(mean(inp^2) + eps).
// S = float or bf16, fp32 math; rstd (N) is float. Backward ACCUMULATES (+=) into dinp and
// dweight (caller zeroes); dweight is reduced deterministically (no atomics).
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/dtype.h"

namespace tessel::cuda {

// rstd may be nullptr (nothing saved).
template <typename S>
void rmsnorm_forward(S* out,           // (N, C)
                     float* rstd,      // (N) or nullptr
                     const S* inp,     // (N, C)
                     const S* weight,  // (C)
                     int N, int C, float eps = 1e-5f, cudaStream_t stream = nullptr);

// dinp += rstd * (dnorm - norm * mean(dnorm * norm)), dnorm = weight * dout, norm = inp * rstd;
// dweight += norm * dout. dinp or dweight may be nullptr to skip.
template <typename S>
void rmsnorm_backward(S* dinp,            // (N, C) or nullptr
                      S* dweight,         // (C) or nullptr
                      const S* dout,      // (N, C)
                      const S* inp,       // (N, C)
                      const S* weight,    // (C)
                      const float* rstd,  // (N)
                      int N, int C, cudaStream_t stream = nullptr);

}  // namespace tessel::cuda
