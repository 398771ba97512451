// Tests of kernels/cuda/rope against kernels/cpu/rope: forward, accumulating backward and the
// in-place backward, with a position offset (context-parallel shard) and a long-context theta,
// unscaled and with Llama 3.1's frequency scaling (whose three bands D = 16 at theta 500000 spans).
#include <gtest/gtest.h>

#include "kernels/cpu/rope.h"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/rope.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

template <class Side, typename S>
void check_rope_with(const RopeFrequencies& freq) {
  Side side;
  const int B = 2, T = 9, NH = 3, D = 16, pos = 4093;  // large positions: angle precision matters
  const std::size_t n = std::size_t(B) * T * NH * D;
  const auto x = rounded<S>(tessel::test::rand_vec(n, 21));
  const auto d0 = rounded<S>(tessel::test::rand_vec(n, 22));
  std::vector<float> ref_fwd(n), ref_bwd = d0, ref_inplace = x;
  cpu::rope_forward(ref_fwd.data(), x.data(), B, T, NH, D, freq, pos);
  cpu::rope_backward(ref_bwd.data(), x.data(), B, T, NH, D, freq, pos);
  cpu::rope_backward_inplace(ref_inplace.data(), B, T, NH, D, freq, pos);

  auto dx = side.make(store<S>(x));
  auto dy = side.template zeros<S>(n);
  auto dd = side.make(store<S>(d0));
  auto dip = side.make(store<S>(x));
  auto dfwd_ip = side.make(store<S>(x));
  TESSEL_CUDA_CALL(side, rope_forward, dy.get(), dx.get(), B, T, NH, D, freq, pos);
  TESSEL_CUDA_CALL(side, rope_backward, dd.get(), dx.get(), B, T, NH, D, freq, pos);
  TESSEL_CUDA_CALL(side, rope_backward_inplace, dip.get(), B, T, NH, D, freq, pos);
  TESSEL_CUDA_CALL(side, rope_forward, dfwd_ip.get(), dfwd_ip.get(), B, T, NH, D, freq, pos);
  side.sync();
  const Tol t = tol<S>();
  EXPECT_TRUE(tessel::test::close(load(dy.download()), ref_fwd, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(dd.download()), ref_bwd, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(dip.download()), ref_inplace, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(dfwd_ip.download()), ref_fwd, t.atol, t.rtol));
}

template <class Side, typename S>
void check_rope() {
  RopeFrequencies f{500000.0};  // Llama 3's rope_theta
  check_rope_with<Side, S>(f);
  f.scaling = RopeScaling::llama3;
  f.factor = 8.0;  // Llama 3.1's; the bands and context keep their defaults (1, 4, 8192)
  check_rope_with<Side, S>(f);
}

}  // namespace

TESSEL_SIDES_TEST(CudaRope, ForwardBackward, check_rope)
