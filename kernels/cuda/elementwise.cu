// elementwise: the public launchers of elementwise.h (DeviceExec over the bodies of
// elementwise.cuh), instantiated for float and bf16.
#include "kernels/cuda/elementwise.h"

#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/exec.cuh"

namespace tessel::cuda {

template <typename T>
void residual_forward(T* out, const T* a, const T* b, std::size_t n, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::residual_forward(ex, out, a, b, n);
}

template <typename T>
void residual_backward(T* da, T* db, const T* dout, std::size_t n, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::residual_backward(ex, da, db, dout, n);
}

template <typename T>
void add_inplace(T* y, const T* x, std::size_t n, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::axpy_inplace(ex, y, 1.0f, x, n);
}

template <typename T>
void axpy_inplace(T* y, float alpha, const T* x, std::size_t n, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::axpy_inplace(ex, y, alpha, x, n);
}

template <typename T>
void scale_inplace(T* y, float s, std::size_t n, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::scale_inplace(ex, y, s, n);
}

template <typename T>
void zero(T* y, std::size_t n, cudaStream_t stream) {
  DeviceExec(stream).zero(y, n * sizeof(T));  // all-zero bits are +0 in float and bf16
}

template <typename T>
void fill(T* y, float value, std::size_t n, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::fill(ex, y, value, n);
}

template <typename To, typename Ti>
void convert(To* out, const Ti* in, std::size_t n, cudaStream_t stream) {
  DeviceExec ex(stream);
  impl::convert(ex, out, in, n);
}

#define TESSEL_INSTANTIATE(T)                                                          \
  template void residual_forward<T>(T*, const T*, const T*, std::size_t, cudaStream_t); \
  template void residual_backward<T>(T*, T*, const T*, std::size_t, cudaStream_t);      \
  template void add_inplace<T>(T*, const T*, std::size_t, cudaStream_t);                \
  template void axpy_inplace<T>(T*, float, const T*, std::size_t, cudaStream_t);        \
  template void scale_inplace<T>(T*, float, std::size_t, cudaStream_t);                 \
  template void zero<T>(T*, std::size_t, cudaStream_t);                                 \
  template void fill<T>(T*, float, std::size_t, cudaStream_t);
TESSEL_INSTANTIATE(float)
TESSEL_INSTANTIATE(bf16)
#undef TESSEL_INSTANTIATE

template void convert<float, float>(float*, const float*, std::size_t, cudaStream_t);
template void convert<float, bf16>(float*, const bf16*, std::size_t, cudaStream_t);
template void convert<bf16, float>(bf16*, const float*, std::size_t, cudaStream_t);
template void convert<bf16, bf16>(bf16*, const bf16*, std::size_t, cudaStream_t);

}  // namespace tessel::cuda
