// elementwise: out(n) = a(n) + b(n), its backward, and y += x / y += a·x / y *= s / y = 0.
#include "kernels/cpu/elementwise.h"

#include <cstring>

#include "kernels/cpu/vecmath.h"

namespace tessel::cpu {

TESSEL_CPU_CLONES void residual_forward(float* out, const float* a, const float* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void residual_backward(float* da, float* db, const float* dout, std::size_t n) {
  if (da != nullptr) add_inplace(da, dout, n);
  if (db != nullptr) add_inplace(db, dout, n);
}

TESSEL_CPU_CLONES void add_inplace(float* y, const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += x[i];
}

TESSEL_CPU_CLONES void axpy_inplace(float* y, float alpha, const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

TESSEL_CPU_CLONES void scale_inplace(float* y, float s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] *= s;
}

void zero(float* y, std::size_t n) {
  if (n > 0) std::memset(y, 0, sizeof(float) * n);
}

}  // namespace tessel::cpu
