// swiglu: per-element SwiGLU over the (N, F) outputs; element i = (n, f) reads gate inp[n,f] and
// up inp[n,F+f]. Backward: dgate = dout up s (1 + g (1 - s)), dup = dout g s, s = sigmoid(g).
#pragma once

#include <cstddef>

#include "kernels/cuda/flat.cuh"
#include "kernels/cuda/gelu.cuh"  // ops::sigmoid_f32
#include "kernels/cuda/hd.cuh"

namespace tessel::cuda {
namespace ops {

template <typename S>
struct SwigluFwd {
  S* out;
  const S* inp;
  std::size_t F;
  TESSEL_HD void operator()(std::size_t i) const {
    const std::size_t n = i / F, f = i - n * F;
    const float g = to_f32(inp[n * 2 * F + f]);
    const float u = to_f32(inp[n * 2 * F + F + f]);
    out[i] = from_f32<S>(g * sigmoid_f32(g) * u);
  }
};

template <typename S>
struct SwigluBwd {
  S* dinp;
  const S* inp;
  const S* dout;
  std::size_t F;
  TESSEL_HD void operator()(std::size_t i) const {
    const std::size_t n = i / F, f = i - n * F;
    const std::size_t gi = n * 2 * F + f, ui = gi + F;
    const float g = to_f32(inp[gi]), u = to_f32(inp[ui]), d = to_f32(dout[i]);
    const float s = sigmoid_f32(g);
    dinp[gi] = from_f32<S>(to_f32(dinp[gi]) + d * u * s * (1.0f + g * (1.0f - s)));
    dinp[ui] = from_f32<S>(to_f32(dinp[ui]) + d * g * s);
  }
};

}  // namespace ops

namespace impl {

template <class Exec, typename S>
void swiglu_forward(Exec& ex, S* out, const S* inp, int N, int F) {
  launch_flat(ex, static_cast<std::size_t>(N) * F,
              ops::SwigluFwd<S>{out, inp, static_cast<std::size_t>(F)});
}

template <class Exec, typename S>
void swiglu_backward(Exec& ex, S* dinp, const S* inp, const S* dout, int N, int F) {
  launch_flat(ex, static_cast<std::size_t>(N) * F,
              ops::SwigluBwd<S>{dinp, inp, dout, static_cast<std::size_t>(F)});
}

}  // namespace impl
}  // namespace tessel::cuda
