// dtype: the storage types of the CUDA kernels. float is the fp32 mode (compares with the CPU
// backend); bf16 is mixed precision: bf16 in memory, fp32 arithmetic and accumulation inside every
// kernel. Plain C++ may include this header (cuda_bf16.h has host conversions).
#pragma once

#include <cuda_bf16.h>

#include <cstddef>

namespace tessel::cuda {

using bf16 = __nv_bfloat16;

enum class DType { f32, bf16 };

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() { return DType::f32; }
template <>
constexpr DType dtype_of<bf16>() { return DType::bf16; }

constexpr std::size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 2; }
constexpr const char* dtype_name(DType t) { return t == DType::f32 ? "fp32" : "bf16"; }

}  // namespace tessel::cuda
