// Tests of kernels/cpu/swiglu (fused [gate | up] input) against double math, finite differences
// and PyTorch silu(gate) * up.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/swiglu.h"
#include "tests/golden/kernels/torch_golden.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;

namespace {
std::vector<double> ref_fwd(const std::vector<float>& x, int N, int F) {
  std::vector<double> o(static_cast<size_t>(N) * F);
  for (int n = 0; n < N; ++n)
    for (int f = 0; f < F; ++f) {
      const double g = x[n * 2 * F + f], u = x[n * 2 * F + F + f];
      o[n * F + f] = g / (1.0 + std::exp(-g)) * u;
    }
  return o;
}
}  // namespace

// Forward 1e-6 + 1e-5|ref|; backward vs double formula 1e-6 + 1e-4|ref| and vs central
// differences of sum(out * R) 1e-4 + 1e-3|ref|. Includes large |gate| (±30).
TEST(SwiGlu, ForwardBackwardMatchDoubleAndFiniteDifferences) {
  const int N = 7, F = 19;
  auto x = rand_vec(N * 2 * F, 1, -5.0f, 5.0f);
  x[0] = 30.0f;
  x[1] = -30.0f;
  auto R = rand_vec(N * F, 2);
  std::vector<float> out(N * F);
  swiglu_forward(out.data(), x.data(), N, F);
  EXPECT_TRUE(close(out, ref_fwd(x, N, F), 1e-6, 1e-5));
  auto dx = rand_vec(x.size(), 3);
  const auto dx0 = dx;
  swiglu_backward(dx.data(), x.data(), R.data(), N, F);
  std::vector<double> g(dx.size()), r(dx.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = double(dx[i]) - dx0[i];
  for (int n = 0; n < N; ++n)
    for (int f = 0; f < F; ++f) {
      const double gt = x[n * 2 * F + f], u = x[n * 2 * F + F + f], s = 1.0 / (1.0 + std::exp(-gt));
      r[n * 2 * F + f] = R[n * F + f] * u * (s + gt * s * (1 - s));
      r[n * 2 * F + F + f] = R[n * F + f] * gt * s;
    }
  EXPECT_TRUE(close(g, r, 1e-6, 1e-4));
  auto fd = fd_grad([&](const std::vector<float>& v) { return project(ref_fwd(v, N, F), R); }, x);
  EXPECT_TRUE(close(g, fd, 1e-4, 1e-3));
}

// torch silu(gate) * up in float64: 1e-5 + 1e-5|ref|.
TEST(SwiGlu, MatchesTorchGolden) {
  namespace g = tessel::golden;
  const int N = g::kSwigluN, F = g::kSwigluF;
  auto x = formula(N * 2 * F, 0.37, 0.1, 3.0);
  auto dy = formula(N * F, 0.23, 0.3, 1.0, true);
  std::vector<float> out(N * F), dx(N * 2 * F, 0.0f);
  swiglu_forward(out.data(), x.data(), N, F);
  swiglu_backward(dx.data(), x.data(), dy.data(), N, F);
  EXPECT_TRUE(close(out.data(), g::swiglu_out, out.size(), 1e-5, 1e-5));
  EXPECT_TRUE(close(dx.data(), g::swiglu_dinp, dx.size(), 1e-5, 1e-5));
}
