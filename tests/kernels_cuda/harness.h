// harness: runs one kernel check two ways. EmuSide calls the launcher template (impl::op) with the
// CPU emulator on host vectors; GpuSide calls the public tessel::cuda::op on device arrays and
// skips the test when no GPU is present. TESSEL_CUDA_CALL(side, op, args...) picks the right one,
// and TESSEL_SIDES_TEST defines the four tests {Emulated, Gpu} x {Fp32, Bf16} of one check.
// Tolerances follow llm.c's rule |got - ref| <= atol + rtol |ref| with rtol per storage type.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>
#include <vector>

#include "kernels/cuda/device.h"
#include "kernels/cuda/dtype.h"
#include "kernels/cuda/hd.cuh"
#include "tests/kernels/check.h"
#include "tests/kernels_cuda/emulate.h"

namespace tessel::cuda::test {

template <typename S>
std::vector<S> cast(const std::vector<float>& x) {
  std::vector<S> r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = static_cast<S>(x[i]);
  return r;
}
inline std::vector<bf16> to_bf16(const std::vector<float>& x) {
  std::vector<bf16> r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = __float2bfloat16(x[i]);
  return r;
}
template <typename S>
std::vector<S> store(const std::vector<float>& x) {
  if constexpr (std::is_same_v<S, bf16>)
    return to_bf16(x);
  else
    return x;
}
template <typename S>
std::vector<float> load(const std::vector<S>& x) {
  std::vector<float> r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = to_f32(x[i]);
  return r;
}
// x rounded to S and back: the values a kernel with storage S actually sees.
template <typename S>
std::vector<float> rounded(const std::vector<float>& x) {
  return load(store<S>(x));
}

// fp32: 1e-5 relative (the brief's fp32 target); bf16: llm.c's 8e-2 (bf16 has an 8-bit mantissa,
// its rounding alone is 2^-9 = 2e-3 relative per value, and errors add up across a kernel).
struct Tol {
  double atol, rtol;
};
template <typename S>
Tol tol() {
  if constexpr (std::is_same_v<S, bf16>)
    return {1e-2, 8e-2};
  else
    return {1e-5, 1e-5};
}

struct EmuSide {
  static constexpr bool emulated = true;
  HostExec ex;
  template <class U>
  struct Arr {
    std::vector<U> v;
    U* get() { return v.data(); }
    std::vector<U> download() const { return v; }
  };
  template <class U>
  Arr<U> make(const std::vector<U>& host) {
    return Arr<U>{host};
  }
  template <class U>
  Arr<U> zeros(std::size_t n) {
    return Arr<U>{std::vector<U>(n, U(0.0f))};
  }
  void sync() {}
  template <class E, class G>
  void call(E&& emulated, G&&) {
    emulated(ex);
  }
};

struct GpuSide {
  static constexpr bool emulated = false;
  template <class U>
  DeviceArray<U> make(const std::vector<U>& host) {
    return DeviceArray<U>(host);
  }
  template <class U>
  DeviceArray<U> zeros(std::size_t n) {
    return DeviceArray<U>(std::vector<U>(n, U(0.0f)));
  }
  void sync() { TESSEL_CUDA_CHECK(cudaDeviceSynchronize()); }
  template <class E, class G>
  void call(E&&, G&& gpu) {
    gpu();
  }
};

}  // namespace tessel::cuda::test

// Skips the current test unless a CUDA device is usable.
#define TESSEL_REQUIRE_GPU()                                                  \
  do {                                                                        \
    if (::tessel::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

// Calls impl::OP(ex, args...) on the emulator or tessel::cuda::OP(args...) on the GPU.
#define TESSEL_CUDA_CALL(side, OP, ...)                                   \
  (side).call([&](auto& ex_) { ::tessel::cuda::impl::OP(ex_, __VA_ARGS__); }, \
              [&]() { ::tessel::cuda::OP(__VA_ARGS__); })

// Defines Suite.{Emulated,Gpu}{Fp32,Bf16}_Name, each calling CHECK<Side, S>().
#define TESSEL_SIDES_TEST(Suite, Name, CHECK)                                               \
  TEST(Suite, Emulated##Name##Fp32) { CHECK<::tessel::cuda::test::EmuSide, float>(); }      \
  TEST(Suite, Emulated##Name##Bf16) {                                                       \
    CHECK<::tessel::cuda::test::EmuSide, ::tessel::cuda::bf16>();                           \
  }                                                                                         \
  TEST(Suite, Gpu##Name##Fp32) {                                                            \
    TESSEL_REQUIRE_GPU();                                                                   \
    CHECK<::tessel::cuda::test::GpuSide, float>();                                          \
  }                                                                                         \
  TEST(Suite, Gpu##Name##Bf16) {                                                            \
    TESSEL_REQUIRE_GPU();                                                                   \
    CHECK<::tessel::cuda::test::GpuSide, ::tessel::cuda::bf16>();                           \
  }
