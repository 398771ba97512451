// adamw: public launcher of adamw.h for float and bf16 gradients.
#include "kernels/cuda/adamw.h"

#include "core/errors.h"
#include "kernels/cuda/adamw.cuh"
#include "kernels/cuda/exec.cuh"

namespace tessel::cuda {

template <typename G>
void adamw_update(float* params, const G* grads, float* m, float* v, std::size_t n, float lr,
                  float beta1, float beta2, float eps, float weight_decay, int t,
                  bf16* params_copy, cudaStream_t stream) {
  if (t < 1) throw RuntimeError("cuda::adamw_update: step t must be >= 1, got " + std::to_string(t));
  DeviceExec ex(stream);
  impl::adamw_update(ex, params, grads, m, v, n, lr, beta1, beta2, eps, weight_decay, t,
                     params_copy);
}

template void adamw_update<float>(float*, const float*, float*, float*, std::size_t, float, float,
                                  float, float, float, int, bf16*, cudaStream_t);
template void adamw_update<bf16>(float*, const bf16*, float*, float*, std::size_t, float, float,
                                 float, float, float, int, bf16*, cudaStream_t);

}  // namespace tessel::cuda
