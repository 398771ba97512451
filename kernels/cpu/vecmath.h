// vecmath: small inline helpers shared by the CPU kernels (internal, not a kernel family).
// exp_approx/sigmoid are branch-free so that loops calling them vectorize without -ffast-math;
// sum/dot/max use 8 independent accumulators so that float reductions vectorize (and are a bit
// more accurate than a single running sum).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

// TESSEL_CPU_CLONES on a function definition compiles it twice, for x86-64-v3 (AVX2) and for the
// baseline, and picks one when the program loads (GCC/clang target_clones, an ifunc). Both clones
// give bit-identical results: no -ffast-math, -ffp-contract=off (kernels/CMakeLists.txt), and the
// reductions fix their summation order in the source. Define TESSEL_CPU_NO_CLONES to disable.
#if defined(__x86_64__) && defined(__ELF__) && !defined(TESSEL_CPU_NO_CLONES) && \
    (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 11))
#define TESSEL_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define TESSEL_CPU_CLONES
#endif

namespace tessel::cpu::vm {

// exp(x) in fp32, max relative error ~2 ulp over the whole range; exp(x) = 0 for x < -87.3
// (including -inf); x is clamped to 88 above (exp(88) ~ 1.65e38).
inline float exp_approx(float x) {
  const float xc = x > 88.0f ? 88.0f : (x < -87.0f ? -87.0f : x);
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to nearest integer
  const float t = xc * kLog2e + kMagic;
  const float n = t - kMagic;
  const std::int32_t ni = std::bit_cast<std::int32_t>(t) - std::bit_cast<std::int32_t>(kMagic);
  // r = x - n*ln2, in two pieces (Cody-Waite).
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  const float scale = std::bit_cast<float>((ni + 127) << 23);
  return x < -87.3f ? 0.0f : e * scale;
}

// 1 / (1 + exp(-x)).
inline float sigmoid(float x) { return 1.0f / (1.0f + exp_approx(-x)); }

inline float sum(const float* x, std::size_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += x[i + j];
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += x[i];
  return s;
}

inline float dot(const float* x, const float* y, std::size_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += x[i + j] * y[i + j];
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

// sum((x - c)^2)
inline float sum_sq_centered(const float* x, float c, std::size_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) {
      const float d = x[i + j] - c;
      acc[j] += d * d;
    }
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += (x[i] - c) * (x[i] - c);
  return s;
}

// max over n >= 1 values (NaN handling unspecified).
inline float max(const float* x, std::size_t n) {
  float acc[8];
  std::size_t i = 0;
  for (int j = 0; j < 8; ++j) acc[j] = x[0];
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
  float m = acc[0];
  for (int j = 1; j < 8; ++j) m = acc[j] > m ? acc[j] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// y[i] = exp(x[i] - c), returns sum of y.
inline float exp_shift_sum(float* y, const float* x, float c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = exp_approx(x[i] - c);
  return sum(y, n);
}

// sum(exp(x[i] - c)) without storing.
inline float sum_exp_shift(const float* x, float c, std::size_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += exp_approx(x[i + j] - c);
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += exp_approx(x[i] - c);
  return s;
}

}  // namespace tessel::cpu::vm
