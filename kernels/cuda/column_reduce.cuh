// column_reduce: deterministic column sums for parameter gradients, out_k[c] += sum_r f_k(r, c)
// over the N rows of an (N, C) problem (bias grads, norm weight grads). Atomics would make the
// sums depend on thread timing; instead ColPartial sums fixed row ranges ("splits") of 32-column
// tiles into a scratch (splits, K, C), and ColFinish adds the splits in order. The result depends
// only on the shape and the device's SM count (which sets the number of splits).
//   Fn: struct with `static constexpr int K` and TESSEL_HD void operator()(int r, int c, float* acc)
//   adding f_k(r, c) into acc[k].
#pragma once

#include <algorithm>
#include <cstddef>

#include "kernels/cuda/flat.cuh"
#include "kernels/cuda/hd.cuh"

namespace tessel::cuda {

inline constexpr int kColTile = 32;  // columns per block: one warp reads 32 consecutive columns

template <class Fn>
struct ColPartial {
  // grid (ceil(C / 32), splits); shared memory: lanes * K * 32 floats, lanes = nthreads / 32.
  template <class Ctx>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char* smem, Fn fn, float* partial, int N,
                            int C, int rows_per_split) {
    constexpr int K = Fn::K;
    float* sm = reinterpret_cast<float*>(smem);
    const int c0 = ctx.bx * kColTile;
    const int r0 = ctx.by * rows_per_split;
    const int r1 = r0 + rows_per_split < N ? r0 + rows_per_split : N;
    const int lanes = ctx.nthreads >= kColTile ? ctx.nthreads / kColTile : 1;
    for (int item = ctx.tid; item < kColTile * lanes; item += ctx.nthreads) {
      const int cl = item % kColTile, rl = item / kColTile, c = c0 + cl;
      float acc[K];
      for (int k = 0; k < K; ++k) acc[k] = 0.0f;
      if (c < C)
        for (int r = r0 + rl; r < r1; r += lanes) fn(r, c, acc);
      for (int k = 0; k < K; ++k) sm[(rl * K + k) * kColTile + cl] = acc[k];
    }
    ctx.sync();
    for (int item = ctx.tid; item < kColTile * K; item += ctx.nthreads) {
      const int cl = item % kColTile, k = item / kColTile, c = c0 + cl;
      float s = 0.0f;
      for (int rl = 0; rl < lanes; ++rl) s += sm[(rl * K + k) * kColTile + cl];
      if (c < C) partial[(static_cast<std::size_t>(ctx.by) * K + k) * C + c] = s;
    }
  }
};

namespace ops {

// out[k][c] += sum over splits of partial[split][k][c], for the outputs that are not nullptr.
template <typename S, int K>
struct ColFinish {
  S* out[K];
  const float* partial;
  int splits, C;
  TESSEL_HD void operator()(std::size_t c) const {
    for (int k = 0; k < K; ++k) {
      if (out[k] == nullptr) continue;
      float s = 0.0f;
      for (int j = 0; j < splits; ++j) s += partial[(static_cast<std::size_t>(j) * K + k) * C + c];
      out[k][c] = from_f32<S>(to_f32(out[k][c]) + s);
    }
  }
};

}  // namespace ops

namespace impl {

// out[k] (C) += column sums of fn over N rows; out[k] may be nullptr to skip that output.
template <class Exec, class Fn, typename S>
void column_reduce(Exec& ex, const Fn& fn, S* const (&out)[Fn::K], int N, int C) {
  constexpr int K = Fn::K;
  if (N <= 0 || C <= 0) return;
  constexpr int kThreads = 256;
  const int col_blocks = ceil_div(C, kColTile);
  // About 4 blocks per SM in total, but at least 32 rows per split so each thread has work.
  const int want = ceil_div(4 * ex.num_sms(), col_blocks);
  const int splits = std::max(1, std::min(want, ceil_div(N, 32)));
  const int rows_per_split = ceil_div(N, splits);
  const int used_splits = ceil_div(N, rows_per_split);
  auto partial = ex.template scratch<float>(static_cast<std::size_t>(used_splits) * K * C);
  const std::size_t smem = sizeof(float) * K * kColTile * (kThreads / kColTile);
  ex.template launch<ColPartial<Fn>>(dim3(col_blocks, used_splits), kThreads, smem, fn,
                                     partial.get(), N, C, rows_per_split);
  ops::ColFinish<S, K> fin{};
  for (int k = 0; k < K; ++k) fin.out[k] = out[k];
  fin.partial = partial.get();
  fin.splits = used_splits;
  fin.C = C;
  launch_flat(ex, static_cast<std::size_t>(C), fin);
}

}  // namespace impl
}  // namespace tessel::cuda
