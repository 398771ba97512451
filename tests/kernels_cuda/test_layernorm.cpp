// Tests of kernels/cuda/layernorm against kernels/cpu/layernorm: forward (out, mean, rstd) and the
// accumulating backward (dinp, dweight, dbias), on shapes whose C is not a multiple of 32 and whose
// N spans several column-reduction splits.
#include <gtest/gtest.h>

#include "kernels/cpu/layernorm.h"
#include "kernels/cuda/layernorm.cuh"
#include "kernels/cuda/layernorm.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

template <class Side, typename S>
void check_layernorm_shape(int N, int C, float eps) {
  SCOPED_TRACE(testing::Message() << "N " << N << " C " << C << " eps " << eps);
  Side side;
  const std::size_t nc = std::size_t(N) * C;
  const auto x = rounded<S>(tessel::test::rand_vec(nc, 61, -2.0f, 3.0f));
  const auto w = rounded<S>(tessel::test::rand_vec(C, 62, 0.5f, 1.5f));
  const auto b = rounded<S>(tessel::test::rand_vec(C, 63));
  const auto dout = rounded<S>(tessel::test::rand_vec(nc, 64));
  const auto dinp0 = rounded<S>(tessel::test::rand_vec(nc, 65));
  const auto dw0 = rounded<S>(tessel::test::rand_vec(C, 66));
  const auto db0 = rounded<S>(tessel::test::rand_vec(C, 67));
  std::vector<float> ref_out(nc), mean(N), rstd(N), ref_dinp = dinp0, ref_dw = dw0, ref_db = db0;
  cpu::layernorm_forward(ref_out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(),
                         N, C, eps);
  cpu::layernorm_backward(ref_dinp.data(), ref_dw.data(), ref_db.data(), dout.data(), x.data(),
                          w.data(), mean.data(), rstd.data(), N, C);

  auto dx = side.make(store<S>(x));
  auto dw = side.make(store<S>(w));
  auto db = side.make(store<S>(b));
  auto dy = side.template zeros<S>(nc);
  auto dmean = side.template zeros<float>(N);
  auto drstd = side.template zeros<float>(N);
  TESSEL_CUDA_CALL(side, layernorm_forward, dy.get(), dmean.get(), drstd.get(), dx.get(), dw.get(),
                   db.get(), N, C, eps);
  side.sync();
  const Tol t = tol<S>();
  EXPECT_TRUE(tessel::test::close(load(dy.download()), ref_out, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(dmean.download(), mean, 1e-6, 1e-5));
  EXPECT_TRUE(tessel::test::close(drstd.download(), rstd, 1e-6, 1e-5));

  // Backward from the reference statistics, so only the backward is under test.
  auto ddout = side.make(store<S>(dout));
  auto dm = side.make(mean);
  auto dr = side.make(rstd);
  auto ddinp = side.make(store<S>(dinp0));
  auto ddw = side.make(store<S>(dw0));
  auto ddb = side.make(store<S>(db0));
  TESSEL_CUDA_CALL(side, layernorm_backward, ddinp.get(), ddw.get(), ddb.get(), ddout.get(),
                   dx.get(), dw.get(), dm.get(), dr.get(), N, C);
  side.sync();
  EXPECT_TRUE(tessel::test::close(load(ddinp.download()), ref_dinp, t.atol, t.rtol));
  // Parameter gradients sum N terms: fp32 error grows like N * eps relative to the terms.
  EXPECT_TRUE(tessel::test::close(load(ddw.download()), ref_dw, t.atol * 10, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(ddb.download()), ref_db, t.atol * 10, t.rtol));

  // nullptr outputs are skipped.
  S* const none = nullptr;
  TESSEL_CUDA_CALL(side, layernorm_backward, none, none, ddb.get(), ddout.get(), dx.get(),
                   dw.get(), dm.get(), dr.get(), N, C);
  side.sync();
}

template <class Side, typename S>
void check_layernorm() {
  check_layernorm_shape<Side, S>(67, 200, 1e-5f);
  check_layernorm_shape<Side, S>(300, 40, 1e-5f);
  check_layernorm_shape<Side, S>(5, 768, 1e-5f);
  check_layernorm_shape<Side, S>(33, 96, 0.5f);  // a model's own epsilon, near the rows' variance
}

}  // namespace

TESSEL_SIDES_TEST(CudaLayerNorm, ForwardBackward, check_layernorm)
