// hd: host-and-device helpers shared by every kernel body: the TESSEL_HD qualifier, float <-> bf16
// conversion, and the few math functions whose spelling differs between device and host. Bodies
// compile under nvcc (device and host passes) and under a plain C++ compiler (the CPU emulation
// in tests/kernels_cuda), so nothing here may need nvcc outside #ifdef __CUDA_ARCH__.
#pragma once

#include <cuda_bf16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/cuda/dtype.h"

#if defined(__CUDACC__)
#define TESSEL_HD __host__ __device__ __forceinline__
#define TESSEL_HD_NOINLINE __host__ __device__
#else
#define TESSEL_HD inline
#define TESSEL_HD_NOINLINE inline
#endif

namespace tessel::cuda {

TESSEL_HD float to_f32(float x) { return x; }
TESSEL_HD float to_f32(bf16 x) { return __bfloat162float(x); }

template <typename T>
TESSEL_HD T from_f32(float x);
template <>
TESSEL_HD float from_f32<float>(float x) { return x; }
template <>
TESSEL_HD bf16 from_f32<bf16>(float x) { return __float2bfloat16(x); }  // round to nearest even

// 1/sqrt(x): the device instruction is within 2 ulp, well inside the fp32 tolerance of the tests.
TESSEL_HD float rsqrt_f32(float x) {
#if defined(__CUDA_ARCH__)
  return rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}

// -inf without relying on a host/device INFINITY macro difference.
TESSEL_HD float neg_inf_f32() { return -__builtin_huge_valf(); }

TESSEL_HD constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
TESSEL_HD constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// log2(e) and ln(2): the attention and cross-entropy kernels exponentiate with exp2f.
inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

}  // namespace tessel::cuda
