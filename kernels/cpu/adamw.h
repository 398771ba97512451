// adamw: one AdamW step on a flat parameter array (PyTorch torch.optim.AdamW semantics:
// decoupled weight decay p *= 1 - lr*wd, bias-corrected moments, eps added after sqrt(v_hat)).
//   params, grads, m, v: (n). t is the 1-based step number (after incrementing).
// Conventions: fp32; params, m, v are updated in place; grads are read only.
#pragma once

#include <cstddef>

namespace tessel::cpu {

void adamw_update(float* params,       // (n)
                  const float* grads,  // (n)
                  float* m,            // (n) first moment, zero before step 1
                  float* v,            // (n) second moment, zero before step 1
                  std::size_t n, float lr, float beta1, float beta2, float eps, float weight_decay,
                  int t);

}  // namespace tessel::cpu
