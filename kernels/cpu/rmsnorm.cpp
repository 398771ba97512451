// rmsnorm: out(N,C) = x * rstd * w per row, rstd = 1/sqrt(mean(x^2) + eps); backward gives
// dinp(N,C) and dweight(C) from dout(N,C) and the saved rstd(N).
#include "kernels/cpu/rmsnorm.h"

#include <cmath>
#include <cstddef>

#include "kernels/cpu/vecmath.h"

namespace tessel::cpu {

TESSEL_CPU_CLONES void rmsnorm_forward(float* out, float* rstd, const float* inp,
                                       const float* weight, int N, int C, float eps) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<std::size_t>(n) * C;
    float* o = out + static_cast<std::size_t>(n) * C;
    const float ms = vm::dot(x, x, C) / static_cast<float>(C);
    const float s = 1.0f / std::sqrt(ms + eps);
    for (int c = 0; c < C; ++c) o[c] = x[c] * s * weight[c];
    if (rstd != nullptr) rstd[n] = s;
  }
}

TESSEL_CPU_CLONES void rmsnorm_backward(float* dinp, float* dweight, const float* dout,
                                        const float* inp, const float* weight, const float* rstd,
                                        int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<std::size_t>(n) * C;
    const float* d = dout + static_cast<std::size_t>(n) * C;
    const float s = rstd[n];
    if (dweight != nullptr)
      for (int c = 0; c < C; ++c) dweight[c] += x[c] * s * d[c];
    if (dinp == nullptr) continue;
    // sum(dnorm * norm) = s * sum(w * d * x)
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int c = 0;
    for (; c + 8 <= C; c += 8)
      for (int j = 0; j < 8; ++j) acc[j] += weight[c + j] * d[c + j] * x[c + j];
    float t = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; c < C; ++c) t += weight[c] * d[c] * x[c];
    // norm * mean(dnorm * norm) = x * s * (s * t / C) = x * k
    const float k = t * s * s / static_cast<float>(C);
    float* di = dinp + static_cast<std::size_t>(n) * C;
    for (int j = 0; j < C; ++j) di[j] += s * (weight[j] * d[j] - x[j] * k);
  }
}

}  // namespace tessel::cpu
