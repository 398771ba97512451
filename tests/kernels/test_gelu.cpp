// Tests of kernels/cpu/gelu (tanh approximation) against double math, finite differences and
// PyTorch gelu(approximate="tanh").
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "kernels/cpu/gelu.h"
#include "tests/golden/kernels/torch_golden.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;

namespace {
double ref_gelu(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
double ref_gelu_grad(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  const double u = k * (x + 0.044715 * x * x * x), th = std::tanh(u);
  return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * k * (1.0 + 3.0 * 0.044715 * x * x);
}
std::vector<double> ref_fwd(const std::vector<float>& x) {
  std::vector<double> o(x.size());
  for (size_t i = 0; i < x.size(); ++i) o[i] = ref_gelu(x[i]);
  return o;
}
}  // namespace

// Inputs in [-6, 6] plus extremes; 1e-6 + 1e-5|ref| (forward) and 1e-6 + 1e-4|ref| (backward).
TEST(Gelu, ForwardBackwardMatchDouble) {
  auto x = rand_vec(1003, 1, -6.0f, 6.0f);
  x.insert(x.end(), {0.0f, -0.0f, 1e-20f, -1e-20f, 20.0f, -20.0f, 100.0f, -100.0f, 1e-3f});
  auto d = rand_vec(x.size(), 2);
  std::vector<float> out(x.size()), dx = rand_vec(x.size(), 3);
  const auto dx0 = dx;
  gelu_forward(out.data(), x.data(), x.size());
  EXPECT_TRUE(close(out, ref_fwd(x), 1e-6, 1e-5));
  gelu_backward(dx.data(), x.data(), d.data(), x.size());
  std::vector<double> g(x.size()), r(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    g[i] = double(dx[i]) - dx0[i];
    r[i] = ref_gelu_grad(x[i]) * d[i];
  }
  EXPECT_TRUE(close(g, r, 1e-6, 1e-4));
  // In place forward.
  auto y = x;
  gelu_forward(y.data(), y.data(), y.size());
  EXPECT_TRUE(close(y, out, 0.0, 0.0));
}

// Central differences of sum(gelu(x) * R) in double: 1e-4 + 1e-3|ref|.
TEST(Gelu, BackwardMatchesFiniteDifferences) {
  auto x = rand_vec(64, 4, -4.0f, 4.0f), R = rand_vec(64, 5);
  std::vector<float> dx(64, 0.0f);
  gelu_backward(dx.data(), x.data(), R.data(), x.size());
  auto f = fd_grad([&](const std::vector<float>& v) { return project(ref_fwd(v), R); }, x);
  EXPECT_TRUE(close(dx, f, 1e-4, 1e-3));
}

// torch gelu(approximate="tanh") in float64: 1e-5 + 1e-5|ref|.
TEST(Gelu, MatchesTorchGolden) {
  namespace g = tessel::golden;
  auto x = formula(g::kGeluN, 0.37, 0.1, 4.0);
  auto dy = formula(g::kGeluN, 0.23, 0.3, 1.0, true);
  std::vector<float> out(x.size()), dx(x.size(), 0.0f);
  gelu_forward(out.data(), x.data(), x.size());
  gelu_backward(dx.data(), x.data(), dy.data(), x.size());
  EXPECT_TRUE(close(out.data(), g::gelu_out, out.size(), 1e-5, 1e-5));
  EXPECT_TRUE(close(dx.data(), g::gelu_dinp, dx.size(), 1e-5, 1e-5));
}
