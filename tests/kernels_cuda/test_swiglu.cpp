// Tests of kernels/cuda/swiglu against kernels/cpu/swiglu on the same (storage-rounded) inputs.
#include <gtest/gtest.h>

#include "kernels/cpu/swiglu.h"
#include "kernels/cuda/swiglu.cuh"
#include "kernels/cuda/swiglu.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

template <class Side, typename S>
void check_swiglu() {
  Side side;
  const int N = 37, F = 45;
  const std::size_t nin = std::size_t(N) * 2 * F, nout = std::size_t(N) * F;
  const auto x = rounded<S>(tessel::test::rand_vec(nin, 11, -4.0f, 4.0f));
  const auto dout = rounded<S>(tessel::test::rand_vec(nout, 12));
  const auto dinp0 = rounded<S>(tessel::test::rand_vec(nin, 13));
  std::vector<float> ref_out(nout), ref_dinp = dinp0;
  cpu::swiglu_forward(ref_out.data(), x.data(), N, F);
  cpu::swiglu_backward(ref_dinp.data(), x.data(), dout.data(), N, F);

  auto dx = side.make(store<S>(x));
  auto ddout = side.make(store<S>(dout));
  auto dy = side.template zeros<S>(nout);
  auto ddinp = side.make(store<S>(dinp0));
  TESSEL_CUDA_CALL(side, swiglu_forward, dy.get(), dx.get(), N, F);
  TESSEL_CUDA_CALL(side, swiglu_backward, ddinp.get(), dx.get(), ddout.get(), N, F);
  side.sync();
  const Tol t = tol<S>();
  EXPECT_TRUE(tessel::test::close(load(dy.download()), ref_out, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(ddinp.download()), ref_dinp, t.atol, t.rtol));
}

}  // namespace

TESSEL_SIDES_TEST(CudaSwiglu, ForwardBackward, check_swiglu)
