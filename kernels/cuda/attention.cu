// attention: public launchers of attention.h for float and bf16.
#include "kernels/cuda/attention.h"

#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/exec.cuh"

namespace tessel::cuda {

bool attention_supports_head_dim(int D) { return impl::attention_head_dim_ok(D); }

template <typename S>
void attention_forward(S* out, float* lse, const S* q, const S* k, const S* v, int B, int T, int H,
                       int KH, int D, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::attention_forward(ex, out, lse, q, k, v, B, T, H, KH, D);
}

template <typename S>
void attention_backward(S* dq, S* dk, S* dv, const S* dout, const S* q, const S* k, const S* v,
                        const S* out, const float* lse, int B, int T, int H, int KH, int D,
                        cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::attention_backward(ex, dq, dk, dv, dout, q, k, v, out, lse, B, T, H, KH, D);
}

#define TESSEL_INSTANTIATE(S)                                                                    \
  template void attention_forward<S>(S*, float*, const S*, const S*, const S*, int, int, int,    \
                                     int, int, cudaStream_t);                                    \
  template void attention_backward<S>(S*, S*, S*, const S*, const S*, const S*, const S*,        \
                                      const S*, const float*, int, int, int, int, int,           \
                                      cudaStream_t);
TESSEL_INSTANTIATE(float)
TESSEL_INSTANTIATE(bf16)
#undef TESSEL_INSTANTIATE

}  // namespace tessel::cuda
