// layernorm: LayerNorm over the last dimension with weight and bias (eps 1e-5 unless given).
//   out(N,C) = (inp - mean) * rstd * weight(C) + bias(C),  rstd = 1/sqrt(var + eps) (biased var).
// Forward saves mean(N) and rstd(N) for backward.
// Conventions: fp32 row-major; backward ACCUMULATES (+=) into dinp, dweight, dbias (caller zeroes).
#pragma once

namespace tessel::cpu {

inline constexpr float kLayerNormEps = 1e-5f;

// mean / rstd may be nullptr (inference: nothing saved).
void layernorm_forward(float* out,           // (N, C)
                       float* mean,          // (N) or nullptr
                       float* rstd,          // (N) or nullptr
                       const float* inp,     // (N, C)
                       const float* weight,  // (C)
                       const float* bias,    // (C)
                       int N, int C, float eps = kLayerNormEps);

// dinp, dweight, dbias may each be nullptr to skip.
void layernorm_backward(float* dinp,          // (N, C) or nullptr
                        float* dweight,       // (C) or nullptr
                        float* dbias,         // (C) or nullptr
                        const float* dout,    // (N, C)
                        const float* inp,     // (N, C)
                        const float* weight,  // (C)
                        const float* mean,    // (N)
                        const float* rstd,    // (N)
                        int N, int C);

}  // namespace tessel::cpu
