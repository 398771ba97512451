// cross_entropy: per row of logits (N, V): loss = log(sum exp(x - max)) + max - x[target];
// backward dlogits (N, V) += (softmax - onehot) * dloss. Vocabulary-parallel pieces work on a
// column slice (N, Vlocal) and exchange only (N)-sized partials (max, sum-exp, target logit).
#include "kernels/cpu/cross_entropy.h"

#include <cmath>
#include <cstddef>

#include "kernels/cpu/vecmath.h"

namespace tessel::cpu {
namespace {

// dl[j] += (exp(x[j] - m) * inv_sum) * d, then dl[target_local] -= d when 0 <= target_local < V.
[[gnu::always_inline]] inline void softmax_grad_row(float* dl, const float* x, float m,
                                                    float inv_sum, float d, int target_local,
                                                    int V) {
  const float a = inv_sum * d;
  for (int j = 0; j < V; ++j) dl[j] += vm::exp_approx(x[j] - m) * a;
  if (target_local >= 0 && target_local < V) dl[target_local] -= d;
}

}  // namespace

TESSEL_CPU_CLONES void cross_entropy_forward(float* losses, const float* logits, const int* targets,
                                             int N, int V) {
  for (int i = 0; i < N; ++i) {
    const float* x = logits + static_cast<std::size_t>(i) * V;
    const int t = targets[i];
    if (t < 0) {
      losses[i] = 0.0f;
      continue;
    }
    const float m = vm::max(x, V);
    const float s = vm::sum_exp_shift(x, m, V);
    losses[i] = std::log(s) + m - x[t];
  }
}

TESSEL_CPU_CLONES void cross_entropy_backward(float* dlogits, const float* logits,
                                              const int* targets, const float* dloss, int N,
                                              int V) {
  for (int i = 0; i < N; ++i) {
    const int t = targets[i];
    if (t < 0) continue;
    const float* x = logits + static_cast<std::size_t>(i) * V;
    const float m = vm::max(x, V);
    const float s = vm::sum_exp_shift(x, m, V);
    softmax_grad_row(dlogits + static_cast<std::size_t>(i) * V, x, m, 1.0f / s, dloss[i], t, V);
  }
}

TESSEL_CPU_CLONES void vocab_parallel_max(const float* local_logits, int N, int Vlocal,
                                          float* out_max) {
  for (int i = 0; i < N; ++i)
    out_max[i] = vm::max(local_logits + static_cast<std::size_t>(i) * Vlocal, Vlocal);
}

TESSEL_CPU_CLONES void vocab_parallel_sum_exp(const float* local_logits, const float* global_max,
                                              int N, int Vlocal, float* out_sumexp,
                                              float* target_logit_out, const int* targets,
                                              int vocab_start, int vocab_end) {
  for (int i = 0; i < N; ++i) {
    const float* x = local_logits + static_cast<std::size_t>(i) * Vlocal;
    out_sumexp[i] = vm::sum_exp_shift(x, global_max[i], Vlocal);
    const int t = targets[i];
    target_logit_out[i] = (t >= vocab_start && t < vocab_end) ? x[t - vocab_start] : 0.0f;
  }
}

void vocab_parallel_loss(const float* global_max, const float* global_sumexp,
                         const float* target_logit, int N, float* losses, const int* targets) {
  for (int i = 0; i < N; ++i) {
    if (targets != nullptr && targets[i] < 0) {
      losses[i] = 0.0f;
      continue;
    }
    losses[i] = std::log(global_sumexp[i]) + global_max[i] - target_logit[i];
  }
}

TESSEL_CPU_CLONES void vocab_parallel_backward(float* dlogits, const float* local_logits,
                                               const float* global_max, const float* global_sumexp,
                                               const int* targets, const float* dloss, int N,
                                               int Vlocal, int vocab_start, int vocab_end) {
  for (int i = 0; i < N; ++i) {
    const int t = targets[i];
    if (t < 0) continue;
    const int tl = (t >= vocab_start && t < vocab_end) ? t - vocab_start : -1;
    softmax_grad_row(dlogits + static_cast<std::size_t>(i) * Vlocal,
                     local_logits + static_cast<std::size_t>(i) * Vlocal, global_max[i],
                     1.0f / global_sumexp[i], dloss[i], tl, Vlocal);
  }
}

}  // namespace tessel::cpu
