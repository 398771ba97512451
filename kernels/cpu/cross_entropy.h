// cross_entropy: softmax cross-entropy over logits (N, V) with int targets (N):
//   losses[i] = logsumexp(logits[i,:]) - logits[i, targets[i]];  forward keeps nothing else.
//   backward: dlogits[i,:] += (softmax(logits[i,:]) - onehot(targets[i])) * dloss[i]
// (dloss per row, so the caller passes 1/(B·T) for a mean loss). A target < 0 is ignored:
// loss 0 and no gradient (padding). Vocabulary-parallel variant below: each rank holds the
// logits of columns [vocab_start, vocab_end) and the caller stitches ranks with a MAX all-reduce
// (of the row maxima) and a SUM all-reduce (of the sum-exp and target-logit partials).
// Conventions: fp32 row-major; backward ACCUMULATES (+=) into dlogits (caller zeroes; dlogits must
// not alias logits).
#pragma once

namespace tessel::cpu {

void cross_entropy_forward(float* losses,        // (N)
                           const float* logits,  // (N, V)
                           const int* targets,   // (N)
                           int N, int V);

void cross_entropy_backward(float* dlogits,       // (N, V)
                            const float* logits,  // (N, V)
                            const int* targets,   // (N)
                            const float* dloss,   // (N)
                            int N, int V);

// --- vocabulary parallel: local_logits (N, Vlocal) are this rank's columns
//     [vocab_start, vocab_end), Vlocal == vocab_end - vocab_start.
// 1) out_max[i] = max_j local_logits[i,j]                       -> all-reduce MAX
void vocab_parallel_max(const float* local_logits,  // (N, Vlocal)
                        int N, int Vlocal,
                        float* out_max);  // (N)

// 2) out_sumexp[i] = sum_j exp(local_logits[i,j] - global_max[i]);
//    target_logit_out[i] = logits[i, targets[i]] on the shard owning the target, else 0.
//                                                               -> all-reduce SUM of both
void vocab_parallel_sum_exp(const float* local_logits,  // (N, Vlocal)
                            const float* global_max,    // (N)
                            int N, int Vlocal,
                            float* out_sumexp,        // (N)
                            float* target_logit_out,  // (N)
                            const int* targets,       // (N) global ids
                            int vocab_start, int vocab_end);

// 3) losses[i] = log(global_sumexp[i]) + global_max[i] - target_logit[i]; rows whose target < 0
//    get 0 when targets is given.
void vocab_parallel_loss(const float* global_max,     // (N)
                         const float* global_sumexp,  // (N)
                         const float* target_logit,   // (N)
                         int N,
                         float* losses,                  // (N)
                         const int* targets = nullptr);  // (N) or nullptr

// 4) dlogits (N, Vlocal) += (exp(local - global_max) / global_sumexp - onehot) * dloss[i].
void vocab_parallel_backward(float* dlogits,              // (N, Vlocal)
                             const float* local_logits,   // (N, Vlocal)
                             const float* global_max,     // (N)
                             const float* global_sumexp,  // (N)
                             const int* targets,          // (N) global ids
                             const float* dloss,          // (N)
                             int N, int Vlocal, int vocab_start, int vocab_end);

}  // namespace tessel::cpu
