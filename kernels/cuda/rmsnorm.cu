// rmsnorm: public launchers of rmsnorm.h for float and bf16.
#include "kernels/cuda/rmsnorm.h"

#include "kernels/cuda/exec.cuh"
#include "kernels/cuda/rmsnorm.cuh"

namespace tessel::cuda {

template <typename S>
void rmsnorm_forward(S* out, float* rstd, const S* inp, const S* weight, int N, int C, float eps,
                     cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::rmsnorm_forward(ex, out, rstd, inp, weight, N, C, eps);
}

template <typename S>
void rmsnorm_backward(S* dinp, S* dweight, const S* dout, const S* inp, const S* weight,
                      const float* rstd, int N, int C, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::rmsnorm_backward(ex, dinp, dweight, dout, inp, weight, rstd, N, C);
}

#define TESSEL_INSTANTIATE(S)                                                                 \
  template void rmsnorm_forward<S>(S*, float*, const S*, const S*, int, int, float,           \
                                   cudaStream_t);                                             \
  template void rmsnorm_backward<S>(S*, S*, const S*, const S*, const S*, const float*, int, int, \
                                    cudaStream_t);
TESSEL_INSTANTIATE(float)
TESSEL_INSTANTIATE(bf16)
#undef TESSEL_INSTANTIATE

}  // namespace tessel::cuda
