// gelu: public launchers of gelu.h for float and bf16.
#include "kernels/cuda/gelu.h"

#include "kernels/cuda/exec.cuh"
#include "kernels/cuda/gelu.cuh"

namespace tessel::cuda {

template <typename S>
void gelu_forward(S* out, const S* inp, std::size_t N, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::gelu_forward(ex, out, inp, N);
}

template <typename S>
void gelu_backward(S* dinp, const S* inp, const S* dout, std::size_t N, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::gelu_backward(ex, dinp, inp, dout, N);
}

template void gelu_forward<float>(float*, const float*, std::size_t, cudaStream_t);
template void gelu_forward<bf16>(bf16*, const bf16*, std::size_t, cudaStream_t);
template void gelu_backward<float>(float*, const float*, const float*, std::size_t, cudaStream_t);
template void gelu_backward<bf16>(bf16*, const bf16*, const bf16*, std::size_t, cudaStream_t);

}  // namespace tessel::cuda
