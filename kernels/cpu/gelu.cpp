// gelu: tanh-approximate GELU on a flat (N) array. Uses 0.5(1 + tanh(u)) = sigmoid(2u), which is
// accurate for large negative x (no cancellation) and vectorizes through vm::exp_approx.
#include "kernels/cpu/gelu.h"

#include "kernels/cpu/vecmath.h"

namespace tessel::cpu {
namespace {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCoeff = 0.044715f;
}  // namespace

TESSEL_CPU_CLONES void gelu_forward(float* out, const float* inp, std::size_t N) {
  for (std::size_t i = 0; i < N; ++i) {
    const float x = inp[i];
    const float u = kSqrt2OverPi * (x + kCoeff * x * x * x);
    out[i] = x * vm::sigmoid(2.0f * u);
  }
}

TESSEL_CPU_CLONES void gelu_backward(float* dinp, const float* inp, const float* dout,
                                     std::size_t N) {
  for (std::size_t i = 0; i < N; ++i) {
    const float x = inp[i];
    const float u = kSqrt2OverPi * (x + kCoeff * x * x * x);
    const float du = kSqrt2OverPi * (1.0f + 3.0f * kCoeff * x * x);
    const float s = vm::sigmoid(2.0f * u);  // = 0.5 (1 + tanh u);  1 - tanh^2 u = 4 s (1 - s)
    dinp[i] += (s + 2.0f * x * s * (1.0f - s) * du) * dout[i];
  }
}

}  // namespace tessel::cpu
