// layernorm: public launchers of layernorm.h for float and bf16.
#include "kernels/cuda/layernorm.h"

#include "kernels/cuda/exec.cuh"
#include "kernels/cuda/layernorm.cuh"

namespace tessel::cuda {

template <typename S>
void layernorm_forward(S* out, float* mean, float* rstd, const S* inp, const S* weight,
                       const S* bias, int N, int C, float eps, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::layernorm_forward(ex, out, mean, rstd, inp, weight, bias, N, C, eps);
}

template <typename S>
void layernorm_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp,
                        const S* weight, const float* mean, const float* rstd, int N, int C,
                        cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::layernorm_backward(ex, dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
}

#define TESSEL_INSTANTIATE(S)                                                                  \
  template void layernorm_forward<S>(S*, float*, float*, const S*, const S*, const S*, int, int, \
                                     float, cudaStream_t);                                            \
  template void layernorm_backward<S>(S*, S*, S*, const S*, const S*, const S*, const float*,  \
                                      const float*, int, int, cudaStream_t);
TESSEL_INSTANTIATE(float)
TESSEL_INSTANTIATE(bf16)
#undef TESSEL_INSTANTIATE

}  // namespace tessel::cuda
