// layernorm (CUDA): LayerNorm over the last dimension (eps 1e-5 unless given), mirroring
// kernels/cpu/layernorm.h: out(N,C) = (inp - mean) * rstd * weight(C) + bias(C), biased variance.
// S = float or bf16 (activations and parameters), fp32 math; mean/rstd (N) are always float.
// Backward ACCUMULATES (+=) into dinp, dweight, dbias (caller zeroes); the parameter gradients are
// reduced deterministically (no atomics).
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/dtype.h"

namespace tessel::cuda {

// mean / rstd may be nullptr (nothing saved).
template <typename S>
void layernorm_forward(S* out,           // (N, C)
                       float* mean,      // (N) or nullptr
                       float* rstd,      // (N) or nullptr
                       const S* inp,     // (N, C)
                       const S* weight,  // (C)
                       const S* bias,    // (C)
                       int N, int C, float eps = 1e-5f, cudaStream_t stream = nullptr);

// dinp, dweight, dbias may each be nullptr to skip.
template <typename S>
void layernorm_backward(S* dinp,          // (N, C) or nullptr
                        S* dweight,       // (C) or nullptr
                        S* dbias,         // (C) or nullptr
                        const S* dout,    // (N, C)
                        const S* inp,     // (N, C)
                        const S* weight,  // (C)
                        const float* mean,  // (N)
                        const float* rstd,  // (N)
                        int N, int C, cudaStream_t stream = nullptr);

}  // namespace tessel::cuda
