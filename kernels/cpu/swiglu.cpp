// swiglu: out(N,F) = silu(gate) * up from the fused (N, 2F) [gate | up] input; backward gives
// dgate = dout * up * s (1 + g (1 - s)), dup = dout * silu(g), s = sigmoid(g).
#include "kernels/cpu/swiglu.h"

#include <cstddef>

#include "kernels/cpu/vecmath.h"

namespace tessel::cpu {

TESSEL_CPU_CLONES void swiglu_forward(float* out, const float* inp, int N, int F) {
  for (int n = 0; n < N; ++n) {
    const float* g = inp + static_cast<std::size_t>(n) * 2 * F;
    const float* u = g + F;
    float* o = out + static_cast<std::size_t>(n) * F;
    for (int f = 0; f < F; ++f) o[f] = g[f] * vm::sigmoid(g[f]) * u[f];
  }
}

TESSEL_CPU_CLONES void swiglu_backward(float* dinp, const float* inp, const float* dout, int N,
                                       int F) {
  for (int n = 0; n < N; ++n) {
    const float* g = inp + static_cast<std::size_t>(n) * 2 * F;
    const float* u = g + F;
    const float* d = dout + static_cast<std::size_t>(n) * F;
    float* dg = dinp + static_cast<std::size_t>(n) * 2 * F;
    float* du = dg + F;
    for (int f = 0; f < F; ++f) {
      const float s = vm::sigmoid(g[f]);
      dg[f] += d[f] * u[f] * s * (1.0f + g[f] * (1.0f - s));
      du[f] += d[f] * g[f] * s;
    }
  }
}

}  // namespace tessel::cpu
