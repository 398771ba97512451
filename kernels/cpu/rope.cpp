// rope: rotate-half rotary embedding on (B, T, NH, D) tensors. cos/sin tables (T, D/2) are built
// once per call in double precision and shared by all batches and heads.
#include "kernels/cpu/rope.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/cpu/vecmath.h"

namespace tessel::cpu {
namespace {

void build_tables(std::vector<float>& cs, std::vector<float>& sn, int T, int D,
                  const RopeFrequencies& freq, int pos_offset) {
  const int half = D / 2;
  cs.resize(static_cast<std::size_t>(T) * half);
  sn.resize(cs.size());
  std::vector<double> inv_freq(half);
  for (int i = 0; i < half; ++i)
    inv_freq[i] = rope_inverse_frequency(freq, i, D);
  for (int t = 0; t < T; ++t) {
    const double p = static_cast<double>(pos_offset) + t;
    for (int i = 0; i < half; ++i) {
      const double a = p * inv_freq[i];
      cs[static_cast<std::size_t>(t) * half + i] = static_cast<float>(std::cos(a));
      sn[static_cast<std::size_t>(t) * half + i] = static_cast<float>(std::sin(a));
    }
  }
}

// o = R(sign * angle) x for one head; accumulate adds into o instead of writing.
template <bool kAccumulate>
[[gnu::always_inline]] inline void rotate(float* __restrict o, const float* __restrict x,
                                          const float* __restrict c, const float* __restrict s,
                                          int half, float sign) {
  for (int i = 0; i < half; ++i) {
    const float x1 = x[i];
    const float x2 = x[i + half];
    const float si = sign * s[i];
    const float y1 = x1 * c[i] - x2 * si;
    const float y2 = x2 * c[i] + x1 * si;
    if constexpr (kAccumulate) {
      o[i] += y1;
      o[i + half] += y2;
    } else {
      o[i] = y1;
      o[i + half] = y2;
    }
  }
}

TESSEL_CPU_CLONES void apply(float* out, const float* inp, int B, int T, int NH, int D,
                             const RopeFrequencies& freq, int pos_offset, float sign,
                             bool accumulate) {
  std::vector<float> cs, sn;
  build_tables(cs, sn, T, D, freq, pos_offset);
  const int half = D / 2;
  std::vector<float> tmp(D);
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const float* c = cs.data() + static_cast<std::size_t>(t) * half;
      const float* s = sn.data() + static_cast<std::size_t>(t) * half;
      for (int h = 0; h < NH; ++h) {
        const std::size_t off = ((static_cast<std::size_t>(b) * T + t) * NH + h) * D;
        const float* x = inp + off;
        if (out == inp) {  // in place: rotate from a copy
          std::memcpy(tmp.data(), x, sizeof(float) * D);
          x = tmp.data();
        }
        if (accumulate)
          rotate<true>(out + off, x, c, s, half, sign);
        else
          rotate<false>(out + off, x, c, s, half, sign);
      }
    }
  }
}

}  // namespace

void rope_forward(float* out, const float* inp, int B, int T, int NH, int D,
                  const RopeFrequencies& freq,
                  int pos_offset) {
  apply(out, inp, B, T, NH, D, freq, pos_offset, 1.0f, false);
}

void rope_backward(float* dinp, const float* dout, int B, int T, int NH, int D,
                   const RopeFrequencies& freq,
                   int pos_offset) {
  apply(dinp, dout, B, T, NH, D, freq, pos_offset, -1.0f, true);
}

void rope_backward_inplace(float* d, int B, int T, int NH, int D, const RopeFrequencies& freq,
                           int pos_offset) {
  apply(d, d, B, T, NH, D, freq, pos_offset, -1.0f, false);
}

}  // namespace tessel::cpu
