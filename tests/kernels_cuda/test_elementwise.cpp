// Tests of kernels/cuda/elementwise against kernels/cpu/elementwise (residual forward/backward,
// axpy, scale, fill, convert).
#include <gtest/gtest.h>

#include "kernels/cpu/elementwise.h"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/elementwise.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

template <class Side, typename S>
void check_elementwise() {
  Side side;
  const std::size_t n = 2049;
  const auto a = rounded<S>(tessel::test::rand_vec(n, 51));
  const auto b = rounded<S>(tessel::test::rand_vec(n, 52));
  const auto d = rounded<S>(tessel::test::rand_vec(n, 53));
  std::vector<float> ref_sum(n), ref_da = a, ref_db = b, ref_axpy = a, ref_scale = b;
  cpu::residual_forward(ref_sum.data(), a.data(), b.data(), n);
  cpu::residual_backward(ref_da.data(), ref_db.data(), d.data(), n);
  cpu::axpy_inplace(ref_axpy.data(), -0.75f, d.data(), n);
  cpu::scale_inplace(ref_scale.data(), 3.0f, n);

  auto da = side.make(store<S>(a));
  auto db = side.make(store<S>(b));
  auto dd = side.make(store<S>(d));
  auto dsum = side.template zeros<S>(n);
  TESSEL_CUDA_CALL(side, residual_forward, dsum.get(), da.get(), db.get(), n);
  side.sync();
  const Tol t = tol<S>();
  EXPECT_TRUE(tessel::test::close(load(dsum.download()), ref_sum, t.atol, t.rtol));
  TESSEL_CUDA_CALL(side, residual_backward, da.get(), db.get(), dd.get(), n);
  side.sync();
  EXPECT_TRUE(tessel::test::close(load(da.download()), ref_da, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(db.download()), ref_db, t.atol, t.rtol));

  auto dx = side.make(store<S>(a));
  TESSEL_CUDA_CALL(side, axpy_inplace, dx.get(), -0.75f, dd.get(), n);
  auto dy = side.make(store<S>(b));
  TESSEL_CUDA_CALL(side, scale_inplace, dy.get(), 3.0f, n);
  auto dfill = side.template zeros<S>(n);
  TESSEL_CUDA_CALL(side, fill, dfill.get(), 0.25f, n);
  auto dconv = side.template zeros<float>(n);
  TESSEL_CUDA_CALL(side, convert, dconv.get(), dd.get(), n);
  side.sync();
  EXPECT_TRUE(tessel::test::close(load(dx.download()), ref_axpy, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(dy.download()), ref_scale, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(dfill.download()), std::vector<float>(n, 0.25f), 0, 0));
  EXPECT_TRUE(tessel::test::close(dconv.download(), d, 0, 0));  // d is already S-representable
}

}  // namespace

TESSEL_SIDES_TEST(CudaElementwise, Ops, check_elementwise)
