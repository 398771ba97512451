// swiglu (CUDA): SwiGLU on a fused [gate | up] input, mirroring kernels/cpu/swiglu.h:
//   inp (N, 2F) -> out (N, F) = silu(gate) * up;  backward dinp (N, 2F) = [dgate | dup].
// S = float or bf16, fp32 math. swiglu_backward ACCUMULATES (+=) into dinp (caller zeroes).
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/dtype.h"

namespace tessel::cuda {

template <typename S>
void swiglu_forward(S* out,        // (N, F)
                    const S* inp,  // (N, 2F) = [gate | up]
                    int N, int F, cudaStream_t stream = nullptr);

template <typename S>
void swiglu_backward(S* dinp,        // (N, 2F)
                     const S* inp,   // (N, 2F)
                     const S* dout,  // (N, F)
                     int N, int F, cudaStream_t stream = nullptr);

}  // namespace tessel::cuda
