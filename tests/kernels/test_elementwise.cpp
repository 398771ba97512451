// Tests of kernels/cpu/elementwise: residual forward/backward and the vector helpers (exact up to
// one fp32 rounding, so tolerances are 0 or 1 ulp-level).
#include <gtest/gtest.h>

#include "kernels/cpu/elementwise.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;

TEST(Elementwise, ResidualForwardBackward) {
  const size_t n = 203;
  auto a = rand_vec(n, 1), b = rand_vec(n, 2), d = rand_vec(n, 3);
  std::vector<float> out(n);
  residual_forward(out.data(), a.data(), b.data(), n);
  std::vector<float> ref(n);
  for (size_t i = 0; i < n; ++i) ref[i] = a[i] + b[i];
  EXPECT_TRUE(close(out, ref, 0.0, 0.0));
  auto da = rand_vec(n, 4), db = rand_vec(n, 5);
  auto ra = da, rb = db;
  for (size_t i = 0; i < n; ++i) ra[i] += d[i], rb[i] += d[i];
  residual_backward(da.data(), db.data(), d.data(), n);
  EXPECT_TRUE(close(da, ra, 0.0, 0.0));
  EXPECT_TRUE(close(db, rb, 0.0, 0.0));
  residual_backward(nullptr, db.data(), d.data(), n);  // skip da
  for (size_t i = 0; i < n; ++i) rb[i] += d[i];
  EXPECT_TRUE(close(db, rb, 0.0, 0.0));
  // Finite differences of sum((a + b) * R): d/da = R exactly.
  auto fd = fd_grad(
      [&](const std::vector<float>& x) {
        std::vector<double> o(n);
        for (size_t i = 0; i < n; ++i) o[i] = double(x[i]) + b[i];
        return project(o, d);
      },
      a);
  std::vector<float> g(n, 0.0f);
  residual_backward(g.data(), nullptr, d.data(), n);
  EXPECT_TRUE(close(g, fd, 1e-6, 1e-5));
}

TEST(Elementwise, Helpers) {
  const size_t n = 77;
  auto x = rand_vec(n, 6), y = rand_vec(n, 7);
  auto r = y;
  add_inplace(y.data(), x.data(), n);
  for (size_t i = 0; i < n; ++i) r[i] += x[i];
  EXPECT_TRUE(close(y, r, 0.0, 0.0));
  axpy_inplace(y.data(), 0.25f, x.data(), n);
  for (size_t i = 0; i < n; ++i) r[i] += 0.25f * x[i];
  EXPECT_TRUE(close(y, r, 0.0, 0.0));
  scale_inplace(y.data(), -3.0f, n);
  for (size_t i = 0; i < n; ++i) r[i] *= -3.0f;
  EXPECT_TRUE(close(y, r, 0.0, 0.0));
  zero(y.data(), n);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  zero(nullptr, 0);
}
