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

// The queries are the last T of Tk >= T positions (a context-parallel chunk against every key up
// to its end): query row i sees keys 0..Tk-T+i. k and v are (B,Tk,KH,D); q, out and lse as above.
// The T = Tk forms above are this with Tk = T.
void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       int B, int T, int Tk, int H, int KH, int D);
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                        const float* k, const float* v, const float* out, const float* lse, int B,
                        int T, int Tk, int H, int KH, int D);

}  // namespace tessel::cpu
