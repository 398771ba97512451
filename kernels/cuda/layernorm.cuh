// layernorm: one warp per row (rows of a block handled by its warps in turn), fp32 statistics by
// warp butterfly sums; the row is re-read from L1/L2 for each pass instead of being held in
// registers, which keeps one kernel for every C. Backward: dinp the same way (two row sums:
// mean(dnorm), mean(dnorm * norm)); dweight/dbias through column_reduce.
#pragma once

#include <cstddef>

#include "kernels/cuda/column_reduce.cuh"
#include "kernels/cuda/hd.cuh"

namespace tessel::cuda {

struct LayerNormFwd {
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char*, S* out, float* mean, float* rstd,
                            const S* inp, const S* weight, const S* bias, int N, int C,
                            float eps, int rows_per_block) {
    for (int rr = ctx.warp; rr < rows_per_block; rr += ctx.nwarps) {
      const int r = ctx.bx * rows_per_block + rr;
      if (r >= N) break;  // uniform across the warp
      const S* x = inp + static_cast<std::size_t>(r) * C;
      float s = 0.0f;
      for (int c = ctx.lane; c < C; c += Ctx::warp_size) s += to_f32(x[c]);
      const float m = ctx.warp_sum(s) / static_cast<float>(C);
      float v = 0.0f;
      for (int c = ctx.lane; c < C; c += Ctx::warp_size) {
        const float d = to_f32(x[c]) - m;
        v += d * d;
      }
      const float rs = rsqrt_f32(ctx.warp_sum(v) / static_cast<float>(C) + eps);
      S* o = out + static_cast<std::size_t>(r) * C;
      for (int c = ctx.lane; c < C; c += Ctx::warp_size)
        o[c] = from_f32<S>((to_f32(x[c]) - m) * rs * to_f32(weight[c]) + to_f32(bias[c]));
      if (ctx.lane == 0) {
        if (mean != nullptr) mean[r] = m;
        if (rstd != nullptr) rstd[r] = rs;
      }
    }
  }
};

struct LayerNormBwdInput {
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char*, S* dinp, const S* dout, const S* inp,
                            const S* weight, const float* mean, const float* rstd, int N, int C,
                            int rows_per_block) {
    for (int rr = ctx.warp; rr < rows_per_block; rr += ctx.nwarps) {
      const int r = ctx.bx * rows_per_block + rr;
      if (r >= N) break;
      const std::size_t off = static_cast<std::size_t>(r) * C;
      const float m = mean[r], s = rstd[r];
      float a1 = 0.0f, a2 = 0.0f;
      for (int c = ctx.lane; c < C; c += Ctx::warp_size) {
        const float dn = to_f32(weight[c]) * to_f32(dout[off + c]);
        a1 += dn;
        a2 += dn * (to_f32(inp[off + c]) - m) * s;
      }
      const float dnorm_mean = ctx.warp_sum(a1) / static_cast<float>(C);
      const float dnorm_norm_mean = ctx.warp_sum(a2) / static_cast<float>(C);
      for (int c = ctx.lane; c < C; c += Ctx::warp_size) {
        const float norm = (to_f32(inp[off + c]) - m) * s;
        const float g =
            (to_f32(weight[c]) * to_f32(dout[off + c]) - dnorm_mean - norm * dnorm_norm_mean) * s;
        dinp[off + c] = from_f32<S>(to_f32(dinp[off + c]) + g);
      }
    }
  }
};

namespace ops {

// (dweight, dbias) terms of row r, column c: (dout * norm, dout).
template <typename S>
struct LayerNormParamGrad {
  static constexpr int K = 2;
  const S* dout;
  const S* inp;
  const float* mean;
  const float* rstd;
  int C;
  TESSEL_HD void operator()(int r, int c, float* acc) const {
    const std::size_t i = static_cast<std::size_t>(r) * C + c;
    const float d = to_f32(dout[i]);
    acc[0] += d * (to_f32(inp[i]) - mean[r]) * rstd[r];
    acc[1] += d;
  }
};

}  // namespace ops

namespace impl {

inline constexpr int kNormThreads = 256;  // 8 warps, one row each
inline constexpr int kNormRowsPerBlock = kNormThreads / 32;

template <class Exec, typename S>
void layernorm_forward(Exec& ex, S* out, float* mean, float* rstd, const S* inp, const S* weight,
                       const S* bias, int N, int C, float eps) {
  ex.template launch<LayerNormFwd>(dim3(ceil_div(N, kNormRowsPerBlock)), kNormThreads, 0, out,
                                   mean, rstd, inp, weight, bias, N, C, eps, kNormRowsPerBlock);
}

template <class Exec, typename S>
void layernorm_backward(Exec& ex, S* dinp, S* dweight, S* dbias, const S* dout, const S* inp,
                        const S* weight, const float* mean, const float* rstd, int N, int C) {
  if (dinp != nullptr)
    ex.template launch<LayerNormBwdInput>(dim3(ceil_div(N, kNormRowsPerBlock)), kNormThreads, 0,
                                          dinp, dout, inp, weight, mean, rstd, N, C,
                                          kNormRowsPerBlock);
  if (dweight != nullptr || dbias != nullptr) {
    S* const outs[2] = {dweight, dbias};
    column_reduce(ex, ops::LayerNormParamGrad<S>{dout, inp, mean, rstd, C}, outs, N, C);
  }
}

}  // namespace impl
}  // namespace tessel::cuda
