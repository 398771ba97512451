// Tests of kernels/cpu/rmsnorm against double loops, finite differences and PyTorch golden data.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/rmsnorm.h"
#include "tests/golden/kernels/torch_golden.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;

namespace {

std::vector<double> ref_rms(const std::vector<float>& x, const std::vector<float>& w, int N, int C,
                            double eps, std::vector<double>* rstd = nullptr) {
  std::vector<double> out(x.size());
  if (rstd) rstd->assign(N, 0.0);
  for (int n = 0; n < N; ++n) {
    double ms = 0;
    for (int c = 0; c < C; ++c) ms += double(x[n * C + c]) * x[n * C + c];
    const double s = 1.0 / std::sqrt(ms / C + eps);
    for (int c = 0; c < C; ++c) out[n * C + c] = x[n * C + c] * s * w[c];
    if (rstd) (*rstd)[n] = s;
  }
  return out;
}

}  // namespace

// Forward: 1e-5 + 1e-4|ref| (out and rstd), default eps and eps = 1e-6, C = 32 and 13.
TEST(RmsNorm, ForwardMatchesDouble) {
  for (int C : {32, 13})
    for (float eps : {1e-5f, 1e-6f}) {
      const int N = 9;
      auto x = rand_vec(N * C, 1, -2.0f, 2.0f), w = rand_vec(C, 2);
      std::vector<float> out(N * C), rstd(N);
      if (eps == 1e-5f)
        rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C);
      else
        rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C, eps);
      std::vector<double> rr;
      EXPECT_TRUE(close(out, ref_rms(x, w, N, C, eps, &rr), 1e-5, 1e-4)) << "C=" << C;
      EXPECT_TRUE(close(rstd, rr, 1e-5, 1e-4));
    }
}

// Backward (accumulating onto initial values): double analytic formula (1e-5 + 1e-4|ref|) and
// central differences of sum(out * R) on the double forward (1e-4 + 1e-3|ref|).
TEST(RmsNorm, BackwardMatchesDoubleAndFiniteDifferences) {
  const int N = 5, C = 21;
  const double eps = 1e-5;
  auto x = rand_vec(N * C, 3), w = rand_vec(C, 4), R = rand_vec(N * C, 5);
  std::vector<float> out(N * C), rstd(N);
  rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C);
  auto dx = rand_vec(N * C, 6), dw = rand_vec(C, 7);
  const auto dx0 = dx, dw0 = dw;
  rmsnorm_backward(dx.data(), dw.data(), R.data(), x.data(), w.data(), rstd.data(), N, C);
  std::vector<double> gx(dx.size()), gw(C);
  for (size_t i = 0; i < gx.size(); ++i) gx[i] = double(dx[i]) - dx0[i];
  for (int i = 0; i < C; ++i) gw[i] = double(dw[i]) - dw0[i];
  // analytic double reference
  std::vector<double> rs, rx(x.size()), rw(C, 0.0);
  ref_rms(x, w, N, C, eps, &rs);
  for (int n = 0; n < N; ++n) {
    double t = 0;
    for (int c = 0; c < C; ++c) t += double(w[c]) * R[n * C + c] * x[n * C + c];
    for (int c = 0; c < C; ++c) {
      const double s = rs[n];
      rx[n * C + c] = s * (double(w[c]) * R[n * C + c] - x[n * C + c] * s * s * t / C);
      rw[c] += x[n * C + c] * s * R[n * C + c];
    }
  }
  EXPECT_TRUE(close(gx, rx, 1e-5, 1e-4));
  EXPECT_TRUE(close(gw, rw, 1e-5, 1e-4));
  auto fx =
      fd_grad([&](const std::vector<float>& v) { return project(ref_rms(v, w, N, C, eps), R); }, x);
  auto fw =
      fd_grad([&](const std::vector<float>& v) { return project(ref_rms(x, v, N, C, eps), R); }, w);
  EXPECT_TRUE(close(gx, fx, 1e-4, 1e-3));
  EXPECT_TRUE(close(gw, fw, 1e-4, 1e-3));
}

// PyTorch (HF LlamaRMSNorm formula, float64) on formula inputs: 1e-5 + 1e-5|ref|.
TEST(RmsNorm, MatchesTorchGolden) {
  namespace g = tessel::golden;
  const int N = g::kNormN, C = g::kNormC;
  auto x = formula(N * C, 0.37, 0.1, 2.0);
  auto w = formula(C, 0.11, 0.2, 0.5);
  for (auto& v : w) v = 1.0f + v;
  auto dy = formula(N * C, 0.23, 0.3, 1.0, true);
  std::vector<float> out(N * C), rstd(N), dx(N * C, 0.0f), dw(C, 0.0f);
  rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C, 1e-5f);
  rmsnorm_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), rstd.data(), N, C);
  EXPECT_TRUE(close(out.data(), g::rmsnorm_out, out.size(), 1e-5, 1e-5));
  EXPECT_TRUE(close(dx.data(), g::rmsnorm_dinp, dx.size(), 1e-5, 1e-5));
  EXPECT_TRUE(close(dw.data(), g::rmsnorm_dweight, dw.size(), 1e-5, 1e-5));
}
