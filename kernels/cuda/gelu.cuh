// gelu: per-element GELU (tanh form written as x * sigmoid(2u), which has no cancellation for
// large negative x) and its derivative, with the launchers over an executor.
#pragma once

#include <cstddef>

#include "kernels/cuda/flat.cuh"
#include "kernels/cuda/hd.cuh"

namespace tessel::cuda {
namespace ops {

inline constexpr float kSqrt2OverPi = 0.7978845608028654f;
inline constexpr float kGeluCoeff = 0.044715f;  // Hendrycks & Gimpel 2016, tanh approximation

TESSEL_HD float sigmoid_f32(float x) { return 1.0f / (1.0f + expf(-x)); }

template <typename S>
struct GeluFwd {
  S* out;
  const S* inp;
  TESSEL_HD void operator()(std::size_t i) const {
    const float x = to_f32(inp[i]);
    const float u = kSqrt2OverPi * (x + kGeluCoeff * x * x * x);
    out[i] = from_f32<S>(x * sigmoid_f32(2.0f * u));
  }
};

template <typename S>
struct GeluBwd {
  S* dinp;
  const S* inp;
  const S* dout;
  TESSEL_HD void operator()(std::size_t i) const {
    const float x = to_f32(inp[i]);
    const float u = kSqrt2OverPi * (x + kGeluCoeff * x * x * x);
    const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCoeff * x * x);
    const float s = sigmoid_f32(2.0f * u);  // 0.5 (1 + tanh u);  1 - tanh^2 u = 4 s (1 - s)
    const float g = s + 2.0f * x * s * (1.0f - s) * du;
    dinp[i] = from_f32<S>(to_f32(dinp[i]) + g * to_f32(dout[i]));
  }
};

}  // namespace ops

namespace impl {

template <class Exec, typename S>
void gelu_forward(Exec& ex, S* out, const S* inp, std::size_t N) {
  launch_flat(ex, N, ops::GeluFwd<S>{out, inp});
}

template <class Exec, typename S>
void gelu_backward(Exec& ex, S* dinp, const S* inp, const S* dout, std::size_t N) {
  launch_flat(ex, N, ops::GeluBwd<S>{dinp, inp, dout});
}

}  // namespace impl
}  // namespace tessel::cuda
