// adamw (CUDA): one AdamW step on a flat parameter array, mirroring kernels/cpu/adamw.h
// (torch.optim.AdamW: decoupled decay p *= 1 - lr*wd, bias-corrected moments, eps after sqrt).
//   params (fp32 master weights), m, v: (n) float, updated in place; grads (n): float or bf16,
//   read only. When params_copy is given, the updated weights are also written there in bf16
//   (round to nearest even): the copy the bf16 forward/backward reads. t is the 1-based step.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/cuda/dtype.h"

namespace tessel::cuda {

template <typename G>
void adamw_update(float* params,  // (n) fp32 master weights
                  const G* grads,  // (n)
                  float* m,        // (n) first moment, zero before step 1
                  float* v,        // (n) second moment, zero before step 1
                  std::size_t n, float lr, float beta1, float beta2, float eps, float weight_decay,
                  int t,
                  bf16* params_copy = nullptr,  // (n) or nullptr
                  cudaStream_t stream = nullptr);

}  // namespace tessel::cuda
