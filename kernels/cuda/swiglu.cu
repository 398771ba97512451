// swiglu: public launchers of swiglu.h for float and bf16.
#include "kernels/cuda/swiglu.h"

#include "kernels/cuda/exec.cuh"
#include "kernels/cuda/swiglu.cuh"

namespace tessel::cuda {

template <typename S>
void swiglu_forward(S* out, const S* inp, int N, int F, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::swiglu_forward(ex, out, inp, N, F);
}

template <typename S>
void swiglu_backward(S* dinp, const S* inp, const S* dout, int N, int F, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::swiglu_backward(ex, dinp, inp, dout, N, F);
}

template void swiglu_forward<float>(float*, const float*, int, int, cudaStream_t);
template void swiglu_forward<bf16>(bf16*, const bf16*, int, int, cudaStream_t);
template void swiglu_backward<float>(float*, const float*, const float*, int, int, cudaStream_t);
template void swiglu_backward<bf16>(bf16*, const bf16*, const bf16*, int, int, cudaStream_t);

}  // namespace tessel::cuda
