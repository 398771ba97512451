// The attention half of a transformer layer, Megatron style:
//   x -> norm -> [to_full_sequence] -> Q, K, V  (column-parallel: this rank's heads)
//     -> RMSNorm of each Q and K head (Qwen3) -> RoPE (Llama) -> causal GQA attention
//     -> output projection (row-parallel)
//     -> [reduce_partial_sums] -> + x
// Under context parallelism the attention core sees the full sequences' K and V
// (context_parallel_attention.h).
// The row-parallel bias is added by TP rank 0 only, before the reduction (the sum then holds it
// once); every rank computes its gradient from the full-sequence output gradient, so the replicas
// stay equal without a reduction.
#pragma once

#include "executor/layers/layer_context.h"
#include "executor/layers/norm.h"
#include "executor/parameters.h"

namespace tessel {

struct AttentionWeights {
    NormWeights norm;
    TensorSlot wq, bq, wk, bk, wv, bv;  // column-parallel: this rank's heads' rows
    TensorSlot q_norm, k_norm;          // per-head QK norm (Qwen3): one head_dim weight each, replicated
    TensorSlot wo, bo;                  // row-parallel: this rank's heads' columns
};

// Declares layer `layer`'s attention tensors for TP rank tp_rank of tp_size.
AttentionWeights add_attention(ParamBuffer& buf, const ModelSpec& m, int layer, int tp_size, int tp_rank,
                               bool sequence_parallel);

struct AttentionSaved {
    NormSaved norm;
    DeviceArray<float> q, k, v;   // (tokens, heads·D) after RoPE, (tokens, kv_heads·D)
    DeviceArray<float> q_pre, k_pre, q_rstd, k_rstd;  // QK norm: Q and K before it, and its rstd per head
    DeviceArray<float> k_full, v_full;  // context parallelism: K and V of the full sequences (k, v empty)
    DeviceArray<float> att, lse;  // attention output and log-sum-exp; empty under selective recompute
};

// x: (local_tokens, C) -> x + attention(x), (local_tokens, C).
DeviceArray<float> attention_forward(const LayerContext& ctx, const ParamBuffer& buf, const AttentionWeights& w,
                                     const float* x, AttentionSaved& saved);

// dout: gradient of the block's output (local_tokens, C). Returns dx = dout + (d block/dx)^T dout.
DeviceArray<float> attention_backward(const LayerContext& ctx, ParamBuffer& buf, const AttentionWeights& w,
                                      const float* x, AttentionSaved& saved, const float* dout);

}  // namespace tessel
