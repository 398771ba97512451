// cross_entropy: one block per row of logits. Statistics in one read of the row: each thread keeps
// an online (max, sum of exp) over its strided columns, then the block combines them (block_max,
// rescale, block_sum; fixed order, so deterministic). The gradient pass re-reads the row and
// writes (or adds) softmax * dloss, subtracting dloss at the target column.
#pragma once

#include <cstddef>

#include "kernels/cuda/flat.cuh"
#include "kernels/cuda/hd.cuh"
#include "kernels/cuda/threads.cuh"

namespace tessel::cuda {

// max and sum(exp(x - max)) of the row x (V); every thread gets both.
template <class Ctx, typename S>
TESSEL_HD void row_softmax_stats(const Ctx& ctx, const S* x, int V, float* scratch, float& row_max,
                                 float& row_sum) {
  float m = neg_inf_f32(), s = 0.0f;
  for (int j = ctx.tid; j < V; j += ctx.nthreads) {
    const float v = to_f32(x[j]);
    if (v > m) {
      s = s * expf(m - v) + 1.0f;  // expf(-inf) = 0 on the first element
      m = v;
    } else {
      s += expf(v - m);
    }
  }
  row_max = block_max(ctx, m, scratch);
  s = m == neg_inf_f32() ? 0.0f : s * expf(m - row_max);
  row_sum = block_sum(ctx, s, scratch);
}

struct CeForward {
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char* smem, float* losses, const S* logits,
                            const int* targets, int V) {
    const int i = ctx.bx;
    const int t = targets[i];
    if (t < 0) {  // uniform across the block
      if (ctx.tid == 0) losses[i] = 0.0f;
      return;
    }
    const S* x = logits + static_cast<std::size_t>(i) * V;
    float m, s;
    row_softmax_stats(ctx, x, V, reinterpret_cast<float*>(smem), m, s);
    if (ctx.tid == 0) losses[i] = logf(s) + m - to_f32(x[t]);
  }
};

// Gradient of one row: dst[j] (+)= (exp(x[j] - max) / sum - [j == target - vocab_start]) * dloss.
// gmax == nullptr: the statistics come from this row (full vocabulary, vocab_start 0), and the
// loss is written when losses != nullptr. Otherwise gmax/gsum are the all-reduced statistics.
// dst may equal x (in place, accumulate == false): each element is read before it is written by
// the same thread.
struct CeGrad {
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char* smem, S* dst, const S* logits,
                            bool accumulate, float* losses, const int* targets, const float* dloss,
                            int V, int vocab_start, const float* gmax, const float* gsum) {
    const int i = ctx.bx;
    const std::size_t off = static_cast<std::size_t>(i) * V;
    const S* x = logits + off;
    S* d = dst + off;
    const int t = targets[i];
    if (t < 0) {
      if (!accumulate)
        for (int j = ctx.tid; j < V; j += ctx.nthreads) d[j] = from_f32<S>(0.0f);
      if (gmax == nullptr && losses != nullptr && ctx.tid == 0) losses[i] = 0.0f;
      return;
    }
    float m, s;
    if (gmax == nullptr) {
      row_softmax_stats(ctx, x, V, reinterpret_cast<float*>(smem), m, s);
      if (losses != nullptr && ctx.tid == 0) losses[i] = logf(s) + m - to_f32(x[t]);
      // Every thread has read x[t] before anyone overwrites it: row_softmax_stats ends in a
      // barrier, but the loss read above happens after it, so meet once more when in place.
      if (losses != nullptr && dst == logits) ctx.sync();
    } else {
      m = gmax[i];
      s = gsum[i];
    }
    const float dl = dloss[i];
    const float scale = dl / s;
    const int tl = t - vocab_start;  // in [0, V) only on the shard owning the target
    for (int j = ctx.tid; j < V; j += ctx.nthreads) {
      float g = expf(to_f32(x[j]) - m) * scale;
      if (j == tl) g -= dl;
      d[j] = from_f32<S>(accumulate ? to_f32(d[j]) + g : g);
    }
  }
};

struct VpMax {
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char* smem, const S* logits, int V,
                            float* out_max) {
    const S* x = logits + static_cast<std::size_t>(ctx.bx) * V;
    float m = neg_inf_f32();
    for (int j = ctx.tid; j < V; j += ctx.nthreads) m = fmaxf(m, to_f32(x[j]));
    m = block_max(ctx, m, reinterpret_cast<float*>(smem));
    if (ctx.tid == 0) out_max[ctx.bx] = m;
  }
};

struct VpSumExp {
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char* smem, const S* logits,
                            const float* gmax, int V, float* out_sumexp, float* target_logit_out,
                            const int* targets, int vocab_start, int vocab_end) {
    const int i = ctx.bx;
    const S* x = logits + static_cast<std::size_t>(i) * V;
    const float m = gmax[i];
    float s = 0.0f;
    for (int j = ctx.tid; j < V; j += ctx.nthreads) s += expf(to_f32(x[j]) - m);
    s = block_sum(ctx, s, reinterpret_cast<float*>(smem));
    if (ctx.tid == 0) {
      out_sumexp[i] = s;
      const int t = targets[i];
      target_logit_out[i] = (t >= vocab_start && t < vocab_end) ? to_f32(x[t - vocab_start]) : 0.0f;
    }
  }
};

namespace ops {

struct VpLoss {
  const float* gmax;
  const float* gsum;
  const float* target_logit;
  float* losses;
  const int* targets;  // may be nullptr
  TESSEL_HD void operator()(std::size_t i) const {
    losses[i] = (targets != nullptr && targets[i] < 0)
                    ? 0.0f
                    : logf(gsum[i]) + gmax[i] - target_logit[i];
  }
};

}  // namespace ops

namespace impl {

// 512 threads: ~100 columns per thread for GPT-2's 50,257-token vocabulary.
inline constexpr int kCeThreads = 512;
inline constexpr std::size_t kCeSmem = 32 * sizeof(float);  // block reduction scratch

template <class Exec, typename S>
void cross_entropy_forward(Exec& ex, float* losses, const S* logits, const int* targets, int N,
                           int V) {
  ex.template launch<CeForward>(dim3(N), kCeThreads, kCeSmem, losses, logits, targets, V);
}

template <class Exec, typename S>
void cross_entropy_backward(Exec& ex, S* dlogits, const S* logits, const int* targets,
                            const float* dloss, int N, int V) {
  ex.template launch<CeGrad>(dim3(N), kCeThreads, kCeSmem, dlogits, logits, true,
                             static_cast<float*>(nullptr), targets, dloss, V, 0,
                             static_cast<const float*>(nullptr),
                             static_cast<const float*>(nullptr));
}

template <class Exec, typename S>
void cross_entropy_fused(Exec& ex, S* logits, float* losses, const int* targets,
                         const float* dloss, int N, int V) {
  ex.template launch<CeGrad>(dim3(N), kCeThreads, kCeSmem, logits, static_cast<const S*>(logits),
                             false, losses, targets, dloss, V, 0,
                             static_cast<const float*>(nullptr),
                             static_cast<const float*>(nullptr));
}

template <class Exec, typename S>
void vocab_parallel_max(Exec& ex, const S* local_logits, int N, int Vlocal, float* out_max) {
  ex.template launch<VpMax>(dim3(N), kCeThreads, kCeSmem, local_logits, Vlocal, out_max);
}

template <class Exec, typename S>
void vocab_parallel_sum_exp(Exec& ex, const S* local_logits, const float* global_max, int N,
                            int Vlocal, float* out_sumexp, float* target_logit_out,
                            const int* targets, int vocab_start, int vocab_end) {
  ex.template launch<VpSumExp>(dim3(N), kCeThreads, kCeSmem, local_logits, global_max, Vlocal,
                               out_sumexp, target_logit_out, targets, vocab_start, vocab_end);
}

template <class Exec>
void vocab_parallel_loss(Exec& ex, const float* global_max, const float* global_sumexp,
                         const float* target_logit, int N, float* losses, const int* targets) {
  launch_flat(ex, static_cast<std::size_t>(N),
              ops::VpLoss{global_max, global_sumexp, target_logit, losses, targets});
}

template <class Exec, typename S>
void vocab_parallel_backward(Exec& ex, S* dlogits, const S* local_logits, const float* global_max,
                             const float* global_sumexp, const int* targets, const float* dloss,
                             int N, int Vlocal, int vocab_start, int /*vocab_end*/) {
  ex.template launch<CeGrad>(dim3(N), kCeThreads, kCeSmem, dlogits, local_logits, true,
                             static_cast<float*>(nullptr), targets, dloss, Vlocal, vocab_start,
                             global_max, global_sumexp);
}

template <class Exec, typename S>
void vocab_parallel_backward_inplace(Exec& ex, S* local_logits, const float* global_max,
                                     const float* global_sumexp, const int* targets,
                                     const float* dloss, int N, int Vlocal, int vocab_start,
                                     int /*vocab_end*/) {
  ex.template launch<CeGrad>(dim3(N), kCeThreads, kCeSmem, local_logits,
                             static_cast<const S*>(local_logits), false,
                             static_cast<float*>(nullptr), targets, dloss, Vlocal, vocab_start,
                             global_max, global_sumexp);
}

}  // namespace impl
}  // namespace tessel::cuda
