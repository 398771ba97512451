// rope: rotary position embedding, rotate-half convention (GPT-NeoX / HF Llama), applied to q or k
// laid out (B, T, NH, D). For i < D/2, position p = pos_offset + t, angle = p * inv_freq(i)
// (kernels/rope_frequencies.h: theta^(-2i/D) unless the model scales RoPE):
//   out[i] = x[i] cos - x[i+D/2] sin,  out[i+D/2] = x[i+D/2] cos + x[i] sin.
// Backward is the inverse rotation (angle -> -angle). D must be even.
// Conventions: fp32 row-major; rope_backward ACCUMULATES (+=) into dinp (caller zeroes).
#pragma once

#include "kernels/rope_frequencies.h"

namespace tessel::cpu {

// out may equal inp (in place). pos_offset: position of t = 0 (context parallel shards).
void rope_forward(float* out,        // (B, T, NH, D)
                  const float* inp,  // (B, T, NH, D)
                  int B, int T, int NH, int D, const RopeFrequencies& freq, int pos_offset);

// dinp += R^T dout. dinp must not alias dout (use rope_backward_inplace for that).
void rope_backward(float* dinp,        // (B, T, NH, D)
                   const float* dout,  // (B, T, NH, D)
                   int B, int T, int NH, int D, const RopeFrequencies& freq, int pos_offset);

// d = R^T d in place (overwrites; no accumulation).
void rope_backward_inplace(float* d,  // (B, T, NH, D)
                           int B, int T, int NH, int D, const RopeFrequencies& freq,
                           int pos_offset);

}  // namespace tessel::cpu
