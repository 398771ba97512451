// adamw: per element (n): p *= 1 - lr*wd; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
// p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)   (torch 1.13 _single_tensor_adamw order).
#include "kernels/cpu/adamw.h"

#include <cmath>

#include "kernels/cpu/vecmath.h"

namespace tessel::cpu {

TESSEL_CPU_CLONES void adamw_update(float* params, const float* grads, float* m, float* v,
                                    std::size_t n, float lr, float beta1, float beta2, float eps,
                                    float weight_decay, int t) {
  // Scalars in double, like the Python floats of the PyTorch implementation.
  const double bc1 = 1.0 - std::pow(static_cast<double>(beta1), t);
  const double bc2 = 1.0 - std::pow(static_cast<double>(beta2), t);
  const float decay = static_cast<float>(1.0 - static_cast<double>(lr) * weight_decay);
  const float step_size = static_cast<float>(static_cast<double>(lr) / bc1);
  const float inv_bc2_sqrt = static_cast<float>(1.0 / std::sqrt(bc2));
  const float one_m_b1 = 1.0f - beta1, one_m_b2 = 1.0f - beta2;
  for (std::size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    const float mi = beta1 * m[i] + one_m_b1 * g;
    const float vi = beta2 * v[i] + one_m_b2 * g * g;
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) * inv_bc2_sqrt + eps;
    params[i] = params[i] * decay - step_size * mi / denom;
  }
}

}  // namespace tessel::cpu
