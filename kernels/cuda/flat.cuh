// flat: the grid-stride body shared by the elementwise kernel families (elementwise, gelu,
// swiglu, rope, adamw): Flat::run calls op(i) for every i in [0, n). An op is a small struct
// holding its pointers with a TESSEL_HD operator()(std::size_t) const; each i is independent, so
// any thread order (and in-place use where the op says so) is race-free.
#pragma once

#include <algorithm>
#include <cstddef>

#include "kernels/cuda/hd.cuh"

namespace tessel::cuda {

struct Flat {
  template <class Ctx, class Op>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char* /*smem*/, std::size_t n, Op op) {
    const std::size_t stride = static_cast<std::size_t>(ctx.nthreads) * ctx.gx;
    for (std::size_t i = static_cast<std::size_t>(ctx.bx) * ctx.nthreads + ctx.tid; i < n;
         i += stride)
      op(i);
  }
};

// 256 threads per block, at most 16 blocks per SM (enough to fill an SM's 2048 thread slots);
// beyond that the grid-stride loop takes over, which keeps launches small for huge n.
template <class Exec, class Op>
void launch_flat(Exec& ex, std::size_t n, const Op& op) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const std::size_t blocks =
      std::min(ceil_div(n, std::size_t{kThreads}), static_cast<std::size_t>(ex.num_sms()) * 16);
  ex.template launch<Flat>(dim3(static_cast<unsigned>(blocks)), kThreads, 0, n, op);
}

}  // namespace tessel::cuda
