// elementwise (CUDA): residual add and small vector helpers on flat device arrays of n elements,
// mirroring kernels/cpu/elementwise.h, for T = float or bf16 (fp32 arithmetic), plus fill and
// dtype conversion. residual_backward ACCUMULATES (+=) into da / db (caller zeroes).
// All pointers are device pointers; every function is asynchronous on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/cuda/dtype.h"

namespace tessel::cuda {

// out = a + b; out may equal a or b.
template <typename T>
void residual_forward(T* out, const T* a, const T* b, std::size_t n, cudaStream_t stream = nullptr);
// da += dout, db += dout; da or db may be nullptr.
template <typename T>
void residual_backward(T* da, T* db, const T* dout, std::size_t n, cudaStream_t stream = nullptr);

template <typename T>
void add_inplace(T* y, const T* x, std::size_t n, cudaStream_t stream = nullptr);  // y += x
template <typename T>
void axpy_inplace(T* y, float alpha, const T* x, std::size_t n,
                  cudaStream_t stream = nullptr);  // y += alpha * x
template <typename T>
void scale_inplace(T* y, float s, std::size_t n, cudaStream_t stream = nullptr);  // y *= s
template <typename T>
void zero(T* y, std::size_t n, cudaStream_t stream = nullptr);  // y = 0
template <typename T>
void fill(T* y, float value, std::size_t n, cudaStream_t stream = nullptr);  // y = value

// out = To(in): float <-> bf16 (round to nearest even) or a plain copy.
template <typename To, typename Ti>
void convert(To* out, const Ti* in, std::size_t n, cudaStream_t stream = nullptr);

}  // namespace tessel::cuda
