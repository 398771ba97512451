// gelu: GELU, tanh approximation (GPT-2 "gelu_new", torch gelu(approximate="tanh")), elementwise:
//   out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),  shapes (N) flat.
// Conventions: fp32; backward ACCUMULATES (+=) into dinp (caller zeroes).
#pragma once

#include <cstddef>

namespace tessel::cpu {

// out may equal inp.
void gelu_forward(float* out,        // (N)
                  const float* inp,  // (N)
                  std::size_t N);

void gelu_backward(float* dinp,        // (N)
                   const float* inp,   // (N)
                   const float* dout,  // (N)
                   std::size_t N);

}  // namespace tessel::cpu
