// attention: causal multi-head self-attention core with grouped-query attention (GQA).
//   q (B,T,H,D), k and v (B,T,KH,D), H % KH == 0, query head h reads kv head h / (H/KH).
//   out[b,t,h] = sum_{s<=t} softmax_s(q[b,t,h]·k[b,s,kv] / sqrt(D)) v[b,s,kv]   -> (B,T,H,D)
// Forward saves only the log-sum-exp of each score row, lse (B,H,T); backward recomputes the
// probabilities from it (flash-attention style), so no (B,H,T,T) buffer is kept.
// Conventions: fp32 row-major; backward ACCUMULATES (+=) into dq, dk, dv (caller zeroes).
#pragma once

namespace tessel::cpu {

void attention_forward(float* out,      // (B, T, H, D)
                       float* lse,      // (B, H, T)
                       const float* q,  // (B, T, H, D)
                       const float* k,  // (B, T, KH, D)
                       const float* v,  // (B, T, KH, D)
                       int B, int T, int H, int KH, int D);

// out and lse are the forward's outputs.
void attention_backward(float* dq,          // (B, T, H, D)
                        float* dk,          // (B, T, KH, D)
                        float* dv,          // (B, T, KH, D)
                        const float* dout,  // (B, T, H, D)
                        const float* q,     // (B, T, H, D)
                        const float* k,     // (B, T, KH, D)
                        const float* v,     // (B, T, KH, D)
                        const float* out,   // (B, T, H, D)
                        const float* lse,   // (B, H, T)
                        int B, int T, int H, int KH, int D);

}  // namespace tessel::cpu
