// Tests of kernels/cuda/adamw against kernels/cpu/adamw over three steps: fp32 gradients update
// fp32 master weights; bf16 gradients do the same and also write the bf16 weight copy.
#include <gtest/gtest.h>

#include "kernels/cpu/adamw.h"
#include "kernels/cuda/adamw.cuh"
#include "kernels/cuda/adamw.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

template <class Side, typename G>
void check_adamw() {
  Side side;
  const std::size_t n = 1001;
  const float lr = 1e-3f, b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f;
  std::vector<float> p = tessel::test::rand_vec(n, 31), m(n, 0.0f), v(n, 0.0f);
  auto dp = side.make(p);
  auto dm = side.make(m);
  auto dv = side.make(v);
  auto dcopy = side.template zeros<cuda::bf16>(n);
  for (int t = 1; t <= 3; ++t) {
    const auto g = rounded<G>(tessel::test::rand_vec(n, 40 + t));
    cpu::adamw_update(p.data(), g.data(), m.data(), v.data(), n, lr, b1, b2, eps, wd, t);
    auto dg = side.make(store<G>(g));
    cuda::bf16* copy = std::is_same_v<G, cuda::bf16> ? dcopy.get() : nullptr;
    TESSEL_CUDA_CALL(side, adamw_update, dp.get(), dg.get(), dm.get(), dv.get(), n, lr, b1, b2,
                     eps, wd, t, copy);
  }
  side.sync();
  // Master weights, moments: fp32 arithmetic on identical inputs whatever the gradient type.
  EXPECT_TRUE(tessel::test::close(dp.download(), p, 1e-6, 1e-5));
  EXPECT_TRUE(tessel::test::close(dm.download(), m, 1e-7, 1e-5));
  EXPECT_TRUE(tessel::test::close(dv.download(), v, 1e-9, 1e-5));
  if (std::is_same_v<G, cuda::bf16>) {  // the copy is the master rounded once: within 2^-9
    EXPECT_TRUE(tessel::test::close(load(dcopy.download()), p, 0.0, 1.0 / 256));
  }
}

}  // namespace

TESSEL_SIDES_TEST(CudaAdamW, ThreeSteps, check_adamw)
