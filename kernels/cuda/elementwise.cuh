// elementwise: per-element ops (residual add, axpy, scale, fill, convert) and their launchers,
// written against an executor (DeviceExec or the CPU emulator). fp32 arithmetic for every T.
#pragma once

#include <cstddef>

#include "kernels/cuda/flat.cuh"
#include "kernels/cuda/hd.cuh"

namespace tessel::cuda {
namespace ops {

template <typename T>
struct Add2 {  // out = a + b
  T* out;
  const T* a;
  const T* b;
  TESSEL_HD void operator()(std::size_t i) const {
    out[i] = from_f32<T>(to_f32(a[i]) + to_f32(b[i]));
  }
};

template <typename T>
struct Axpy {  // y += alpha * x
  T* y;
  float alpha;
  const T* x;
  TESSEL_HD void operator()(std::size_t i) const {
    y[i] = from_f32<T>(to_f32(y[i]) + alpha * to_f32(x[i]));
  }
};

template <typename T>
struct Scale {  // y *= s
  T* y;
  float s;
  TESSEL_HD void operator()(std::size_t i) const { y[i] = from_f32<T>(to_f32(y[i]) * s); }
};

template <typename T>
struct Fill {  // y = value
  T* y;
  float value;
  TESSEL_HD void operator()(std::size_t i) const { y[i] = from_f32<T>(value); }
};

template <typename To, typename Ti>
struct Convert {  // out = To(in)
  To* out;
  const Ti* in;
  TESSEL_HD void operator()(std::size_t i) const { out[i] = from_f32<To>(to_f32(in[i])); }
};

}  // namespace ops

namespace impl {

template <class Exec, typename T>
void residual_forward(Exec& ex, T* out, const T* a, const T* b, std::size_t n) {
  launch_flat(ex, n, ops::Add2<T>{out, a, b});
}

template <class Exec, typename T>
void residual_backward(Exec& ex, T* da, T* db, const T* dout, std::size_t n) {
  if (da != nullptr) launch_flat(ex, n, ops::Axpy<T>{da, 1.0f, dout});
  if (db != nullptr) launch_flat(ex, n, ops::Axpy<T>{db, 1.0f, dout});
}

template <class Exec, typename T>
void axpy_inplace(Exec& ex, T* y, float alpha, const T* x, std::size_t n) {
  launch_flat(ex, n, ops::Axpy<T>{y, alpha, x});
}

template <class Exec, typename T>
void scale_inplace(Exec& ex, T* y, float s, std::size_t n) {
  launch_flat(ex, n, ops::Scale<T>{y, s});
}

template <class Exec, typename T>
void fill(Exec& ex, T* y, float value, std::size_t n) {
  launch_flat(ex, n, ops::Fill<T>{y, value});
}

template <class Exec, typename To, typename Ti>
void convert(Exec& ex, To* out, const Ti* in, std::size_t n) {
  launch_flat(ex, n, ops::Convert<To, Ti>{out, in});
}

}  // namespace impl
}  // namespace tessel::cuda
