// Tests of kernels/cuda/gelu against kernels/cpu/gelu on the same (storage-rounded) inputs.
#include <gtest/gtest.h>

#include "kernels/cpu/gelu.h"
#include "kernels/cuda/gelu.cuh"
#include "kernels/cuda/gelu.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

template <class Side, typename S>
void check_gelu() {
  Side side;
  const std::size_t N = 3000;  // not a multiple of the block size
  const auto x = rounded<S>(tessel::test::rand_vec(N, 1, -5.0f, 5.0f));
  const auto dout = rounded<S>(tessel::test::rand_vec(N, 2));
  const auto dinp0 = rounded<S>(tessel::test::rand_vec(N, 3));  // += onto a nonzero gradient
  std::vector<float> ref_out(N), ref_dinp = dinp0;
  cpu::gelu_forward(ref_out.data(), x.data(), N);
  cpu::gelu_backward(ref_dinp.data(), x.data(), dout.data(), N);

  auto dx = side.make(store<S>(x));
  auto ddout = side.make(store<S>(dout));
  auto dy = side.template zeros<S>(N);
  auto ddinp = side.make(store<S>(dinp0));
  TESSEL_CUDA_CALL(side, gelu_forward, dy.get(), dx.get(), N);
  TESSEL_CUDA_CALL(side, gelu_backward, ddinp.get(), dx.get(), ddout.get(), N);
  side.sync();
  const Tol t = tol<S>();
  EXPECT_TRUE(tessel::test::close(load(dy.download()), ref_out, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(ddinp.download()), ref_dinp, t.atol, t.rtol));

  // In place: out == inp.
  auto dz = side.make(store<S>(x));
  TESSEL_CUDA_CALL(side, gelu_forward, dz.get(), dz.get(), N);
  side.sync();
  EXPECT_TRUE(tessel::test::close(load(dz.download()), ref_out, t.atol, t.rtol));
}

}  // namespace

TESSEL_SIDES_TEST(CudaGelu, ForwardBackward, check_gelu)
