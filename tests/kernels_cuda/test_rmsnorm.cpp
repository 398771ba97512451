// Tests of kernels/cuda/rmsnorm against kernels/cpu/rmsnorm: forward (out, rstd) and the
// accumulating backward (dinp, dweight).
#include <gtest/gtest.h>

#include "kernels/cpu/rmsnorm.h"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/rmsnorm.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

template <class Side, typename S>
void check_rmsnorm_shape(int N, int C) {
  SCOPED_TRACE(testing::Message() << "N " << N << " C " << C);
  Side side;
  const float eps = 1e-6f;
  const std::size_t nc = std::size_t(N) * C;
  const auto x = rounded<S>(tessel::test::rand_vec(nc, 71, -2.0f, 2.0f));
  const auto w = rounded<S>(tessel::test::rand_vec(C, 72, 0.5f, 1.5f));
  const auto dout = rounded<S>(tessel::test::rand_vec(nc, 73));
  const auto dinp0 = rounded<S>(tessel::test::rand_vec(nc, 74));
  const auto dw0 = rounded<S>(tessel::test::rand_vec(C, 75));
  std::vector<float> ref_out(nc), rstd(N), ref_dinp = dinp0, ref_dw = dw0;
  cpu::rmsnorm_forward(ref_out.data(), rstd.data(), x.data(), w.data(), N, C, eps);
  cpu::rmsnorm_backward(ref_dinp.data(), ref_dw.data(), dout.data(), x.data(), w.data(),
                        rstd.data(), N, C);

  auto dx = side.make(store<S>(x));
  auto dw = side.make(store<S>(w));
  auto dy = side.template zeros<S>(nc);
  auto drstd = side.template zeros<float>(N);
  TESSEL_CUDA_CALL(side, rmsnorm_forward, dy.get(), drstd.get(), dx.get(), dw.get(), N, C, eps);
  side.sync();
  const Tol t = tol<S>();
  EXPECT_TRUE(tessel::test::close(load(dy.download()), ref_out, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(drstd.download(), rstd, 1e-6, 1e-5));

  auto ddout = side.make(store<S>(dout));
  auto dr = side.make(rstd);
  auto ddinp = side.make(store<S>(dinp0));
  auto ddw = side.make(store<S>(dw0));
  TESSEL_CUDA_CALL(side, rmsnorm_backward, ddinp.get(), ddw.get(), ddout.get(), dx.get(),
                   dw.get(), dr.get(), N, C);
  side.sync();
  EXPECT_TRUE(tessel::test::close(load(ddinp.download()), ref_dinp, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(ddw.download()), ref_dw, t.atol * 10, t.rtol));
}

template <class Side, typename S>
void check_rmsnorm() {
  check_rmsnorm_shape<Side, S>(67, 200);
  check_rmsnorm_shape<Side, S>(300, 40);
  check_rmsnorm_shape<Side, S>(3, 2048);
}

}  // namespace

TESSEL_SIDES_TEST(CudaRmsNorm, ForwardBackward, check_rmsnorm)
