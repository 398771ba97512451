// cross_entropy (CUDA): softmax cross-entropy over logits (N, V) with int targets (N), mirroring
// kernels/cpu/cross_entropy.h: losses[i] = logsumexp(logits[i,:]) - logits[i, targets[i]];
// backward dlogits[i,:] += (softmax - onehot) * dloss[i]. A target < 0 is ignored (loss 0, no
// gradient). Logits S = float or bf16; losses, dloss and the vocab-parallel partials are float.
// cross_entropy_fused is llm.c's fused classifier: one call computes the losses and OVERWRITES the
// logits with their gradient, so the (N, V) gradient needs no buffer of its own and the logits
// are read twice and written once instead of four reads and a write for forward + backward.
// Vocabulary-parallel pieces as in the CPU header; the caller all-reduces between them.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/dtype.h"

namespace tessel::cuda {

template <typename S>
void cross_entropy_forward(float* losses,    // (N)
                           const S* logits,  // (N, V)
                           const int* targets,  // (N)
                           int N, int V, cudaStream_t stream = nullptr);

// dlogits must not alias logits (use cross_entropy_fused for that).
template <typename S>
void cross_entropy_backward(S* dlogits,          // (N, V)
                            const S* logits,     // (N, V)
                            const int* targets,  // (N)
                            const float* dloss,  // (N)
                            int N, int V, cudaStream_t stream = nullptr);

// logits (N, V) in: logits, out: (softmax - onehot) * dloss (rows with target < 0: zeros).
// losses (N) may be nullptr.
template <typename S>
void cross_entropy_fused(S* logits, float* losses, const int* targets, const float* dloss, int N,
                         int V, cudaStream_t stream = nullptr);

// --- vocabulary parallel: local_logits (N, Vlocal) are this rank's columns
//     [vocab_start, vocab_end), Vlocal == vocab_end - vocab_start.
// 1) out_max[i] = max_j local_logits[i,j]                       -> all-reduce MAX
template <typename S>
void vocab_parallel_max(const S* local_logits, int N, int Vlocal, float* out_max,
                        cudaStream_t stream = nullptr);

// 2) out_sumexp[i] = sum_j exp(local_logits[i,j] - global_max[i]);
//    target_logit_out[i] = logits[i, targets[i]] on the owning shard, else 0. -> all-reduce SUM
template <typename S>
void vocab_parallel_sum_exp(const S* local_logits, const float* global_max, int N, int Vlocal,
                            float* out_sumexp, float* target_logit_out, const int* targets,
                            int vocab_start, int vocab_end, cudaStream_t stream = nullptr);

// 3) losses[i] = log(global_sumexp[i]) + global_max[i] - target_logit[i]; 0 where targets[i] < 0
//    when targets is given.
void vocab_parallel_loss(const float* global_max, const float* global_sumexp,
                         const float* target_logit, int N, float* losses,
                         const int* targets = nullptr, cudaStream_t stream = nullptr);

// 4) dlogits (N, Vlocal) += (exp(local - global_max) / global_sumexp - onehot) * dloss[i].
template <typename S>
void vocab_parallel_backward(S* dlogits, const S* local_logits, const float* global_max,
                             const float* global_sumexp, const int* targets, const float* dloss,
                             int N, int Vlocal, int vocab_start, int vocab_end,
                             cudaStream_t stream = nullptr);

// 4') the same, overwriting local_logits with the gradient (no separate dlogits buffer).
template <typename S>
void vocab_parallel_backward_inplace(S* local_logits, const float* global_max,
                                     const float* global_sumexp, const int* targets,
                                     const float* dloss, int N, int Vlocal, int vocab_start,
                                     int vocab_end, cudaStream_t stream = nullptr);

}  // namespace tessel::cuda
