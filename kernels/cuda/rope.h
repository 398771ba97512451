// rope (CUDA): rotary position embedding, rotate-half convention, on (B, T, NH, D) device
// tensors, mirroring kernels/cpu/rope.h: for i < D/2, angle = (pos_offset + t) * inv_freq(i)
// (kernels/rope_frequencies.h),
//   out[i] = x[i] cos - x[i+D/2] sin,  out[i+D/2] = x[i+D/2] cos + x[i] sin.
// S = float or bf16. rope_backward ACCUMULATES (+=) into dinp (caller zeroes). D must be even.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/dtype.h"
#include "kernels/rope_frequencies.h"

namespace tessel::cuda {

// out may equal inp (in place).
template <typename S>
void rope_forward(S* out, const S* inp, int B, int T, int NH, int D, const RopeFrequencies& freq,
                  int pos_offset, cudaStream_t stream = nullptr);

// dinp += R^T dout; dinp must not alias dout.
template <typename S>
void rope_backward(S* dinp, const S* dout, int B, int T, int NH, int D, const RopeFrequencies& freq,
                   int pos_offset, cudaStream_t stream = nullptr);

// d = R^T d in place (overwrites).
template <typename S>
void rope_backward_inplace(S* d, int B, int T, int NH, int D, const RopeFrequencies& freq,
                           int pos_offset, cudaStream_t stream = nullptr);

}  // namespace tessel::cuda
