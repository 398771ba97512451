// rmsnorm: RMSNorm over the last dimension with a weight only (Llama).
//   out(N,C) = inp * rstd * weight(C),  rstd = 1/sqrt(mean(inp^2) + eps).
// Forward saves rstd(N) for backward.
// Conventions: fp32 row-major; backward ACCUMULATES (+=) into dinp and dweight (caller zeroes).
#pragma once

namespace tessel::cpu {

// rstd may be nullptr (nothing saved).
void rmsnorm_forward(float* out,           // (N, C)
                     float* rstd,          // (N) or nullptr
                     const float* inp,     // (N, C)
                     const float* weight,  // (C)
                     int N, int C, float eps = 1e-5f);

// dinp += rstd * (dnorm - norm * mean(dnorm * norm)), dnorm = weight * dout, norm = inp * rstd;
// dweight += norm * dout. dinp or dweight may be nullptr to skip.
void rmsnorm_backward(float* dinp,          // (N, C) or nullptr
                      float* dweight,       // (C) or nullptr
                      const float* dout,    // (N, C)
                      const float* inp,     // (N, C)
                      const float* weight,  // (C)
                      const float* rstd,    // (N)
                      int N, int C);

}  // namespace tessel::cpu
