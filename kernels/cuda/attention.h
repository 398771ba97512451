// attention (CUDA): causal multi-head self-attention with grouped-query attention, as a fused
// flash-attention kernel (tiled, online softmax; no (T, T) matrix in memory), mirroring
// kernels/cpu/attention.h:
//   q (B,T,H,D), k and v (B,T,KH,D), H % KH == 0, query head h reads kv head h / (H/KH);
//   out[b,t,h] = sum_{s<=t} softmax_s(q[b,t,h]·k[b,s,kv] / sqrt(D)) v[b,s,kv]  -> (B,T,H,D)
// Forward saves the log-sum-exp of each score row, lse (B,H,T) float; backward recomputes the
// probabilities from it. S = float (scalar fp32 math) or bf16 (tensor cores, fp32 softmax and
// accumulation). Head dims D in {32, 64, 128}. Backward ACCUMULATES (+=) into dq, dk, dv (caller
// zeroes) and is deterministic (no atomics).
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/dtype.h"

namespace tessel::cuda {

// True when attention_* support head dim D.
bool attention_supports_head_dim(int D);

template <typename S>
void attention_forward(S* out,        // (B, T, H, D)
                       float* lse,    // (B, H, T)
                       const S* q,    // (B, T, H, D)
                       const S* k,    // (B, T, KH, D)
                       const S* v,    // (B, T, KH, D)
                       int B, int T, int H, int KH, int D, cudaStream_t stream = nullptr);

// out and lse are the forward's outputs. Uses B*H*T floats of stream-ordered scratch.
template <typename S>
void attention_backward(S* dq,              // (B, T, H, D)
                        S* dk,              // (B, T, KH, D)
                        S* dv,              // (B, T, KH, D)
                        const S* dout,      // (B, T, H, D)
                        const S* q,         // (B, T, H, D)
                        const S* k,         // (B, T, KH, D)
                        const S* v,         // (B, T, KH, D)
                        const S* out,       // (B, T, H, D)
                        const float* lse,   // (B, H, T)
                        int B, int T, int H, int KH, int D, cudaStream_t stream = nullptr);

}  // namespace tessel::cuda
