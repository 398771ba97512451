// cross_entropy: public launchers of cross_entropy.h for float and bf16 logits.
#include "kernels/cuda/cross_entropy.h"

#include "kernels/cuda/cross_entropy.cuh"
#include "kernels/cuda/exec.cuh"

namespace tessel::cuda {

template <typename S>
void cross_entropy_forward(float* losses, const S* logits, const int* targets, int N, int V,
                           cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::cross_entropy_forward(ex, losses, logits, targets, N, V);
}

template <typename S>
void cross_entropy_backward(S* dlogits, const S* logits, const int* targets, const float* dloss,
                            int N, int V, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::cross_entropy_backward(ex, dlogits, logits, targets, dloss, N, V);
}

template <typename S>
void cross_entropy_fused(S* logits, float* losses, const int* targets, const float* dloss, int N,
                         int V, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::cross_entropy_fused(ex, logits, losses, targets, dloss, N, V);
}

template <typename S>
void vocab_parallel_max(const S* local_logits, int N, int Vlocal, float* out_max,
                        cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::vocab_parallel_max(ex, local_logits, N, Vlocal, out_max);
}

template <typename S>
void vocab_parallel_sum_exp(const S* local_logits, const float* global_max, int N, int Vlocal,
                            float* out_sumexp, float* target_logit_out, const int* targets,
                            int vocab_start, int vocab_end, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::vocab_parallel_sum_exp(ex, local_logits, global_max, N, Vlocal, out_sumexp,
                               target_logit_out, targets, vocab_start, vocab_end);
}

void vocab_parallel_loss(const float* global_max, const float* global_sumexp,
                         const float* target_logit, int N, float* losses, const int* targets,
                         cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::vocab_parallel_loss(ex, global_max, global_sumexp, target_logit, N, losses, targets);
}

template <typename S>
void vocab_parallel_backward(S* dlogits, const S* local_logits, const float* global_max,
                             const float* global_sumexp, const int* targets, const float* dloss,
                             int N, int Vlocal, int vocab_start, int vocab_end,
                             cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::vocab_parallel_backward(ex, dlogits, local_logits, global_max, global_sumexp, targets,
                                dloss, N, Vlocal, vocab_start, vocab_end);
}

template <typename S>
void vocab_parallel_backward_inplace(S* local_logits, const float* global_max,
                                     const float* global_sumexp, const int* targets,
                                     const float* dloss, int N, int Vlocal, int vocab_start,
                                     int vocab_end, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::vocab_parallel_backward_inplace(ex, local_logits, global_max, global_sumexp, targets,
                                        dloss, N, Vlocal, vocab_start, vocab_end);
}

#define TESSEL_INSTANTIATE(S)                                                                    \
  template void cross_entropy_forward<S>(float*, const S*, const int*, int, int, cudaStream_t);  \
  template void cross_entropy_backward<S>(S*, const S*, const int*, const float*, int, int,      \
                                          cudaStream_t);                                         \
  template void cross_entropy_fused<S>(S*, float*, const int*, const float*, int, int,           \
                                       cudaStream_t);                                            \
  template void vocab_parallel_max<S>(const S*, int, int, float*, cudaStream_t);                 \
  template void vocab_parallel_sum_exp<S>(const S*, const float*, int, int, float*, float*,      \
                                          const int*, int, int, cudaStream_t);                   \
  template void vocab_parallel_backward<S>(S*, const S*, const float*, const float*, const int*, \
                                           const float*, int, int, int, int, cudaStream_t);      \
  template void vocab_parallel_backward_inplace<S>(S*, const float*, const float*, const int*,   \
                                                   const float*, int, int, int, int,             \
                                                   cudaStream_t);
TESSEL_INSTANTIATE(float)
TESSEL_INSTANTIATE(bf16)
#undef TESSEL_INSTANTIATE

}  // namespace tessel::cuda
