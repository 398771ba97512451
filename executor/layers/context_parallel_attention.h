// Causal attention under context parallelism, the all-gather way (Llama 3, Dubey et al. 2024,
// §3.3.2): K and V are all-gathered over the CP group into the full sequence; each of this
// rank's two query chunks (LayerDims: chunks i and 2·cp-1-i) then attends to the causal prefix
// of the full sequence; in backward, the full-sequence K and V gradients are reduce-scattered
// back to the chunks' owners.
//
// A chunk starting at position p runs as its chunk_len queries against keys 0..p + chunk_len - 1
// (Backend::prefix_attention_*). A backend without that kernel runs it as a query block of
// p + chunk_len rows whose first p rows are zero (and whose output rows are dropped; zero rows
// with zero output gradients add nothing in backward), which spends their work for nothing.
#pragma once

#include "executor/layers/layer_context.h"

namespace tessel {

// k_local: (tokens, width) in this rank's [chunk][batch][position] layout -> (B, T, width),
// the full sequences in order.
DeviceArray<float> gather_sequence_chunks(const LayerContext& ctx, const float* k_local, int width);
// The reverse with a sum: d_full (B, T, width), partial on every CP rank -> this rank's chunks'
// summed gradient, added into d_local (tokens, width).
void reduce_scatter_sequence_chunks(const LayerContext& ctx, const float* d_full, float* d_local, int width);

// q, out: (tokens, heads·D) local; k_full, v_full: (B, T, kv_heads·D); lse: this rank's
// [chunk][batch][head][position] log-sum-exps.
void context_parallel_attention_forward(const LayerContext& ctx, float* out, float* lse, const float* q,
                                        const float* k_full, const float* v_full);
// dq (local) and dk_full, dv_full (B, T, kv_heads·D) accumulate.
void context_parallel_attention_backward(const LayerContext& ctx, float* dq, float* dk_full, float* dv_full,
                                         const float* dout, const float* q, const float* k_full,
                                         const float* v_full, const float* out, const float* lse);

}  // namespace tessel
