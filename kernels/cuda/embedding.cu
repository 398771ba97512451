// embedding: public launchers of embedding.h for float and bf16.
#include "kernels/cuda/embedding.h"

#include "kernels/cuda/embedding.cuh"
#include "kernels/cuda/exec.cuh"

namespace tessel::cuda {

template <typename S>
void encoder_forward(S* out, const int* tokens, const S* wte, const S* wpe, int B, int T, int C,
                     int vocab_start, int vocab_end, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::encoder_forward(ex, out, tokens, wte, wpe, B, T, C, vocab_start, vocab_end);
}

template <typename S>
void encoder_backward(S* dwte, S* dwpe, const S* dout, const int* tokens, int B, int T, int C,
                      int vocab_start, int vocab_end, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::encoder_backward(ex, dwte, dwpe, dout, tokens, B, T, C, vocab_start, vocab_end);
}

#define TESSEL_INSTANTIATE(S)                                                                 \
  template void encoder_forward<S>(S*, const int*, const S*, const S*, int, int, int, int, int, \
                                   cudaStream_t);                                             \
  template void encoder_backward<S>(S*, S*, const S*, const int*, int, int, int, int, int,    \
                                    cudaStream_t);
TESSEL_INSTANTIATE(float)
TESSEL_INSTANTIATE(bf16)
#undef TESSEL_INSTANTIATE

}  // namespace tessel::cuda
