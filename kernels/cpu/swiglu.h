// swiglu: SwiGLU on a fused input. inp (N, 2F) holds [gate | up] per row;
//   out(N,F) = silu(gate) * up,  silu(g) = g * sigmoid(g).
// Backward writes the fused input gradient dinp (N, 2F) = [dgate | dup].
// Conventions: fp32 row-major; backward ACCUMULATES (+=) into dinp (caller zeroes).
#pragma once

namespace tessel::cpu {

void swiglu_forward(float* out,        // (N, F)
                    const float* inp,  // (N, 2F) = [gate | up]
                    int N, int F);

void swiglu_backward(float* dinp,        // (N, 2F)
                     const float* inp,   // (N, 2F)
                     const float* dout,  // (N, F)
                     int N, int F);

}  // namespace tessel::cpu
