// Tests of kernels/cpu/vecmath.h (internal helpers): the vectorizable exp approximation and the
// 8-lane reductions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/cpu/vecmath.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;

// exp_approx within 4e-7 relative of exp (double) on [-87, 88]; 0 below -87.3 and at -inf.
TEST(VecMath, ExpApproxAccuracy) {
  double worst = 0.0;
  for (int i = 0; i <= 1750000; ++i) {
    const float x = -87.0f + 1e-4f * float(i);
    const double ref = std::exp(double(x));
    worst = std::max(worst, std::fabs(double(tessel::cpu::vm::exp_approx(x)) - ref) / ref);
  }
  EXPECT_LT(worst, 4e-7);
  EXPECT_EQ(tessel::cpu::vm::exp_approx(-100.0f), 0.0f);
  EXPECT_EQ(tessel::cpu::vm::exp_approx(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(tessel::cpu::vm::exp_approx(0.0f), 1.0f);
  EXPECT_TRUE(std::isfinite(tessel::cpu::vm::exp_approx(1000.0f)));
}

// Reductions of n = 0..40 (vector body + tail): 1e-6 + 1e-6|ref|.
TEST(VecMath, Reductions) {
  for (size_t n = 1; n <= 40; ++n) {
    auto x = rand_vec(n, unsigned(n)), y = rand_vec(n, unsigned(n + 100));
    double s = 0, d = 0, m = -1e30, sc = 0, se = 0;
    for (size_t i = 0; i < n; ++i) {
      s += x[i];
      d += double(x[i]) * y[i];
      m = std::max(m, double(x[i]));
      sc += (x[i] - 0.3) * (x[i] - 0.3);
      se += std::exp(x[i] - 0.5);
    }
    const float got[] = {vm::sum(x.data(), n), vm::dot(x.data(), y.data(), n), vm::max(x.data(), n),
                         vm::sum_sq_centered(x.data(), 0.3f, n),
                         vm::sum_exp_shift(x.data(), 0.5f, n)};
    const double ref[] = {s, d, m, sc, se};
    EXPECT_TRUE(close(got, ref, 5, 1e-6, 1e-6)) << "n=" << n;
  }
  EXPECT_EQ(vm::sum(nullptr, 0), 0.0f);
}
