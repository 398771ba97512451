// rope: public launchers of rope.h for float and bf16.
#include "kernels/cuda/rope.h"

#include "core/errors.h"
#include "kernels/cuda/exec.cuh"
#include "kernels/cuda/rope.cuh"

namespace tessel::cuda {
namespace {
void check_even(int D) {
  if (D % 2 != 0) throw RuntimeError("cuda::rope: head dim D = " + std::to_string(D) + " is odd");
}
}  // namespace

template <typename S>
void rope_forward(S* out, const S* inp, int B, int T, int NH, int D, const RopeFrequencies& freq,
                  int pos_offset, cudaStream_t stream) {
  check_even(D);
  DeviceExec ex(stream);
  impl::rope_forward(ex, out, inp, B, T, NH, D, freq, pos_offset);
}

template <typename S>
void rope_backward(S* dinp, const S* dout, int B, int T, int NH, int D, const RopeFrequencies& freq,
                   int pos_offset, cudaStream_t stream) {
  check_even(D);
  DeviceExec ex(stream);
  impl::rope_backward(ex, dinp, dout, B, T, NH, D, freq, pos_offset);
}

template <typename S>
void rope_backward_inplace(S* d, int B, int T, int NH, int D, const RopeFrequencies& freq,
                           int pos_offset, cudaStream_t stream) {
  check_even(D);
  DeviceExec ex(stream);
  impl::rope_backward_inplace(ex, d, B, T, NH, D, freq, pos_offset);
}

#define TESSEL_INSTANTIATE(S)                                                                   \
  template void rope_forward<S>(S*, const S*, int, int, int, int, const RopeFrequencies&, int,  \
                                cudaStream_t);                                                  \
  template void rope_backward<S>(S*, const S*, int, int, int, int, const RopeFrequencies&, int, \
                                 cudaStream_t);                                                 \
  template void rope_backward_inplace<S>(S*, int, int, int, int, const RopeFrequencies&, int,   \
                                         cudaStream_t);
TESSEL_INSTANTIATE(float)
TESSEL_INSTANTIATE(bf16)
#undef TESSEL_INSTANTIATE

}  // namespace tessel::cuda
