// rmsnorm: one warp per row like layernorm.cuh; forward one row sum (x^2), backward one row sum
// (w * dout * x); dweight through column_reduce.
#pragma once

#include <cstddef>

#include "kernels/cuda/column_reduce.cuh"
#include "kernels/cuda/hd.cuh"
#include "kernels/cuda/layernorm.cuh"  // impl::kNormThreads, kNormRowsPerBlock

namespace tessel::cuda {

struct RmsNormFwd {
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char*, S* out, float* rstd, const S* inp,
                            const S* weight, int N, int C, float eps, int rows_per_block) {
    for (int rr = ctx.warp; rr < rows_per_block; rr += ctx.nwarps) {
      const int r = ctx.bx * rows_per_block + rr;
      if (r >= N) break;
      const S* x = inp + static_cast<std::size_t>(r) * C;
      float ss = 0.0f;
      for (int c = ctx.lane; c < C; c += Ctx::warp_size) {
        const float v = to_f32(x[c]);
        ss += v * v;
      }
      const float s = rsqrt_f32(ctx.warp_sum(ss) / static_cast<float>(C) + eps);
      S* o = out + static_cast<std::size_t>(r) * C;
      for (int c = ctx.lane; c < C; c += Ctx::warp_size)
        o[c] = from_f32<S>(to_f32(x[c]) * s * to_f32(weight[c]));
      if (ctx.lane == 0 && rstd != nullptr) rstd[r] = s;
    }
  }
};

struct RmsNormBwdInput {
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char*, S* dinp, const S* dout, const S* inp,
                            const S* weight, const float* rstd, int N, int C,
                            int rows_per_block) {
    for (int rr = ctx.warp; rr < rows_per_block; rr += ctx.nwarps) {
      const int r = ctx.bx * rows_per_block + rr;
      if (r >= N) break;
      const std::size_t off = static_cast<std::size_t>(r) * C;
      const float s = rstd[r];
      float t = 0.0f;
      for (int c = ctx.lane; c < C; c += Ctx::warp_size)
        t += to_f32(weight[c]) * to_f32(dout[off + c]) * to_f32(inp[off + c]);
      // norm * mean(dnorm * norm) = x * s * (s * t / C) = x * k
      const float k = ctx.warp_sum(t) * s * s / static_cast<float>(C);
      for (int c = ctx.lane; c < C; c += Ctx::warp_size) {
        const float g = s * (to_f32(weight[c]) * to_f32(dout[off + c]) - to_f32(inp[off + c]) * k);
        dinp[off + c] = from_f32<S>(to_f32(dinp[off + c]) + g);
      }
    }
  }
};

namespace ops {

template <typename S>
struct RmsNormParamGrad {  // dweight term of (r, c): dout * inp * rstd
  static constexpr int K = 1;
  const S* dout;
  const S* inp;
  const float* rstd;
  int C;
  TESSEL_HD void operator()(int r, int c, float* acc) const {
    const std::size_t i = static_cast<std::size_t>(r) * C + c;
    acc[0] += to_f32(dout[i]) * to_f32(inp[i]) * rstd[r];
  }
};

}  // namespace ops

namespace impl {

template <class Exec, typename S>
void rmsnorm_forward(Exec& ex, S* out, float* rstd, const S* inp, const S* weight, int N, int C,
                     float eps) {
  ex.template launch<RmsNormFwd>(dim3(ceil_div(N, kNormRowsPerBlock)), kNormThreads, 0, out, rstd,
                                 inp, weight, N, C, eps, kNormRowsPerBlock);
}

template <class Exec, typename S>
void rmsnorm_backward(Exec& ex, S* dinp, S* dweight, const S* dout, const S* inp, const S* weight,
                      const float* rstd, int N, int C) {
  if (dinp != nullptr)
    ex.template launch<RmsNormBwdInput>(dim3(ceil_div(N, kNormRowsPerBlock)), kNormThreads, 0,
                                        dinp, dout, inp, weight, rstd, N, C, kNormRowsPerBlock);
  if (dweight != nullptr) {
    S* const outs[1] = {dweight};
    column_reduce(ex, ops::RmsNormParamGrad<S>{dout, inp, rstd, C}, outs, N, C);
  }
}

}  // namespace impl
}  // namespace tessel::cuda
