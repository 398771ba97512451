// adamw: per-element AdamW in the order of PyTorch's _single_tensor_adamw (as the CPU reference);
// the step scalars (bias corrections, decay) are computed once on the host in double.
#pragma once

#include <cmath>
#include <cstddef>

#include "kernels/cuda/flat.cuh"
#include "kernels/cuda/hd.cuh"

namespace tessel::cuda {
namespace ops {

template <typename G>
struct AdamW {
  float* params;
  const G* grads;
  float* m;
  float* v;
  bf16* copy;  // may be nullptr
  float beta1, beta2, one_m_b1, one_m_b2, eps, decay, step_size, inv_bc2_sqrt;
  TESSEL_HD void operator()(std::size_t i) const {
    const float g = to_f32(grads[i]);
    const float mi = beta1 * m[i] + one_m_b1 * g;
    const float vi = beta2 * v[i] + one_m_b2 * g * g;
    m[i] = mi;
    v[i] = vi;
    const float denom = sqrtf(vi) * inv_bc2_sqrt + eps;
    const float p = params[i] * decay - step_size * mi / denom;
    params[i] = p;
    if (copy != nullptr) copy[i] = from_f32<bf16>(p);
  }
};

}  // namespace ops

namespace impl {

template <class Exec, typename G>
void adamw_update(Exec& ex, float* params, const G* grads, float* m, float* v, std::size_t n,
                  float lr, float beta1, float beta2, float eps, float weight_decay, int t,
                  bf16* params_copy) {
  // Scalars in double, like the Python floats of the PyTorch implementation.
  const double bc1 = 1.0 - std::pow(static_cast<double>(beta1), t);
  const double bc2 = 1.0 - std::pow(static_cast<double>(beta2), t);
  ops::AdamW<G> op{params,
                   grads,
                   m,
                   v,
                   params_copy,
                   beta1,
                   beta2,
                   1.0f - beta1,
                   1.0f - beta2,
                   eps,
                   static_cast<float>(1.0 - static_cast<double>(lr) * weight_decay),
                   static_cast<float>(static_cast<double>(lr) / bc1),
                   static_cast<float>(1.0 / std::sqrt(bc2))};
  launch_flat(ex, n, op);
}

}  // namespace impl
}  // namespace tessel::cuda
