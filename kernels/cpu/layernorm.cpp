// layernorm: out(N,C) = (x - mean) * rstd * w + b per row; backward (N,C) -> dinp, dweight(C),
// dbias(C) with dinp = rstd * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)), dnorm = w * dout.
#include "kernels/cpu/layernorm.h"

#include <cmath>
#include <cstddef>

#include "kernels/cpu/vecmath.h"

namespace tessel::cpu {

TESSEL_CPU_CLONES void layernorm_forward(float* out, float* mean, float* rstd, const float* inp,
                                         const float* weight, const float* bias, int N, int C,
                                         float eps) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<std::size_t>(n) * C;
    float* o = out + static_cast<std::size_t>(n) * C;
    const float m = vm::sum(x, C) / static_cast<float>(C);
    const float var = vm::sum_sq_centered(x, m, C) / static_cast<float>(C);
    const float s = 1.0f / std::sqrt(var + eps);
    for (int c = 0; c < C; ++c) o[c] = (x[c] - m) * s * weight[c] + bias[c];
    if (mean != nullptr) mean[n] = m;
    if (rstd != nullptr) rstd[n] = s;
  }
}

TESSEL_CPU_CLONES void layernorm_backward(float* dinp, float* dweight, float* dbias,
                                          const float* dout, const float* inp, const float* weight,
                                          const float* mean, const float* rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<std::size_t>(n) * C;
    const float* d = dout + static_cast<std::size_t>(n) * C;
    const float m = mean[n];
    const float s = rstd[n];
    if (dbias != nullptr)
      for (int c = 0; c < C; ++c) dbias[c] += d[c];
    if (dweight != nullptr)
      for (int c = 0; c < C; ++c) dweight[c] += (x[c] - m) * s * d[c];
    if (dinp == nullptr) continue;
    // Two reductions: sum(dnorm) and sum(dnorm * norm), 8 lanes each.
    float a1[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    float a2[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int c = 0;
    for (; c + 8 <= C; c += 8)
      for (int j = 0; j < 8; ++j) {
        const float dn = weight[c + j] * d[c + j];
        a1[j] += dn;
        a2[j] += dn * (x[c + j] - m) * s;
      }
    float s1 = ((a1[0] + a1[4]) + (a1[1] + a1[5])) + ((a1[2] + a1[6]) + (a1[3] + a1[7]));
    float s2 = ((a2[0] + a2[4]) + (a2[1] + a2[5])) + ((a2[2] + a2[6]) + (a2[3] + a2[7]));
    for (; c < C; ++c) {
      const float dn = weight[c] * d[c];
      s1 += dn;
      s2 += dn * (x[c] - m) * s;
    }
    const float dnorm_mean = s1 / static_cast<float>(C);
    const float dnorm_norm_mean = s2 / static_cast<float>(C);
    float* di = dinp + static_cast<std::size_t>(n) * C;
    for (int k = 0; k < C; ++k) {
      const float norm = (x[k] - m) * s;
      di[k] += (weight[k] * d[k] - dnorm_mean - norm * dnorm_norm_mean) * s;
    }
  }
}

}  // namespace tessel::cpu
