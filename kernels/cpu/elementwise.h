// elementwise: residual add and small vector helpers on flat arrays of n floats.
//   residual_forward: out = a + b;  residual_backward: da += dout, db += dout.
// Conventions: fp32; backward ACCUMULATES (+=) into da / db (caller zeroes).
#pragma once

#include <cstddef>

namespace tessel::cpu {

// out may equal a or b.
void residual_forward(float* out, const float* a, const float* b, std::size_t n);  // (n) each
// da or db may be nullptr to skip.
void residual_backward(float* da, float* db, const float* dout, std::size_t n);  // (n) each

void add_inplace(float* y, const float* x, std::size_t n);                // y += x
void axpy_inplace(float* y, float alpha, const float* x, std::size_t n);  // y += alpha * x
void scale_inplace(float* y, float s, std::size_t n);                     // y *= s
void zero(float* y, std::size_t n);                                       // y = 0

}  // namespace tessel::cpu
