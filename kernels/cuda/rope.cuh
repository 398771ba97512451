// rope: two passes. RopeTable builds cos/sin (T, D/2) in double, like the CPU reference, because
// an fp32 angle p * inv_freq is off by up to ~5e-4 rad at p ~ 8k; RopeApply then rotates each
// (b, t, h, i) pair, reading x[i] and x[i+D/2] before writing either, so in place is safe.
#pragma once

#include <cmath>
#include <cstddef>

#include "kernels/cuda/flat.cuh"
#include "kernels/cuda/hd.cuh"
#include "kernels/rope_frequencies.h"

namespace tessel::cuda {
namespace ops {

struct RopeTable {
  float* cs;  // (T, half)
  float* sn;  // (T, half)
  int half, D, pos_offset;
  RopeFrequencies freq;
  TESSEL_HD void operator()(std::size_t i) const {
    const std::size_t t = i / half;
    const int k = static_cast<int>(i - t * half);
    const double inv_freq = rope_inverse_frequency(freq, k, D);
    const double a = (static_cast<double>(pos_offset) + static_cast<double>(t)) * inv_freq;
    cs[i] = static_cast<float>(cos(a));
    sn[i] = static_cast<float>(sin(a));
  }
};

// mode 0: out = R x;  1: out += R^T x;  2: out = R^T x.
template <typename S, int kMode>
struct RopeApply {
  S* out;
  const S* inp;
  const float* cs;
  const float* sn;
  std::size_t T, NH, half;
  TESSEL_HD void operator()(std::size_t i) const {
    const std::size_t k = i % half;
    const std::size_t row = i / half;  // (b, t, h)
    const std::size_t t = (row / NH) % T;
    const std::size_t off = row * 2 * half;
    const float c = cs[t * half + k];
    const float s = kMode == 0 ? sn[t * half + k] : -sn[t * half + k];
    const float x1 = to_f32(inp[off + k]), x2 = to_f32(inp[off + k + half]);
    const float y1 = x1 * c - x2 * s, y2 = x2 * c + x1 * s;
    if constexpr (kMode == 1) {
      out[off + k] = from_f32<S>(to_f32(out[off + k]) + y1);
      out[off + k + half] = from_f32<S>(to_f32(out[off + k + half]) + y2);
    } else {
      out[off + k] = from_f32<S>(y1);
      out[off + k + half] = from_f32<S>(y2);
    }
  }
};

}  // namespace ops

namespace impl {

template <int kMode, class Exec, typename S>
void rope_apply(Exec& ex, S* out, const S* inp, int B, int T, int NH, int D,
                const RopeFrequencies& freq, int pos_offset) {
  const int half = D / 2;
  const std::size_t table = static_cast<std::size_t>(T) * half;
  auto cs = ex.template scratch<float>(table);
  auto sn = ex.template scratch<float>(table);
  launch_flat(ex, table,
              ops::RopeTable{cs.get(), sn.get(), half, D, pos_offset, freq});
  launch_flat(ex, static_cast<std::size_t>(B) * T * NH * half,
              ops::RopeApply<S, kMode>{out, inp, cs.get(), sn.get(), static_cast<std::size_t>(T),
                                       static_cast<std::size_t>(NH),
                                       static_cast<std::size_t>(half)});
}

template <class Exec, typename S>
void rope_forward(Exec& ex, S* out, const S* inp, int B, int T, int NH, int D,
                  const RopeFrequencies& freq, int pos_offset) {
  rope_apply<0>(ex, out, inp, B, T, NH, D, freq, pos_offset);
}

template <class Exec, typename S>
void rope_backward(Exec& ex, S* dinp, const S* dout, int B, int T, int NH, int D,
                   const RopeFrequencies& freq, int pos_offset) {
  rope_apply<1>(ex, dinp, dout, B, T, NH, D, freq, pos_offset);
}

template <class Exec, typename S>
void rope_backward_inplace(Exec& ex, S* d, int B, int T, int NH, int D, const RopeFrequencies& freq,
                           int pos_offset) {
  rope_apply<2>(ex, d, d, B, T, NH, D, freq, pos_offset);
}

}  // namespace impl
}  // namespace tessel::cuda
