// gelu (CUDA): tanh-approximate GELU on flat (N) device arrays, mirroring kernels/cpu/gelu.h:
//   out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), S = float or bf16, fp32 math.
// gelu_backward ACCUMULATES (+=) into dinp (caller zeroes). out may equal inp.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/cuda/dtype.h"

namespace tessel::cuda {

template <typename S>
void gelu_forward(S* out, const S* inp, std::size_t N, cudaStream_t stream = nullptr);

template <typename S>
void gelu_backward(S* dinp, const S* inp, const S* dout, std::size_t N,
                   cudaStream_t stream = nullptr);

}  // namespace tessel::cuda
