// Tests of kernels/cpu/layernorm against double loops, finite differences and PyTorch golden data.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/layernorm.h"
#include "tests/golden/kernels/torch_golden.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;

namespace {

struct LnRef {
  std::vector<double> out, mean, rstd;
};

LnRef ref_ln(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
             int N, int C, double eps = 1e-5) {
  LnRef r{std::vector<double>(x.size()), std::vector<double>(N), std::vector<double>(N)};
  for (int n = 0; n < N; ++n) {
    double m = 0, v = 0;
    for (int c = 0; c < C; ++c) m += x[n * C + c];
    m /= C;
    for (int c = 0; c < C; ++c) v += (x[n * C + c] - m) * (x[n * C + c] - m);
    v /= C;
    const double s = 1.0 / std::sqrt(v + eps);
    for (int c = 0; c < C; ++c) r.out[n * C + c] = (x[n * C + c] - m) * s * w[c] + b[c];
    r.mean[n] = m;
    r.rstd[n] = s;
  }
  return r;
}

// Analytic backward in double (from zero).
void ref_ln_backward(std::vector<double>& dx, std::vector<double>& dw, std::vector<double>& db,
                     const std::vector<float>& d, const std::vector<float>& x,
                     const std::vector<float>& w, int N, int C) {
  const LnRef r = ref_ln(x, w, std::vector<float>(C, 0.0f), N, C);
  dx.assign(x.size(), 0.0);
  dw.assign(C, 0.0);
  db.assign(C, 0.0);
  for (int n = 0; n < N; ++n) {
    double a = 0, bsum = 0;
    for (int c = 0; c < C; ++c) {
      const double norm = (x[n * C + c] - r.mean[n]) * r.rstd[n];
      const double dn = double(w[c]) * d[n * C + c];
      a += dn;
      bsum += dn * norm;
      dw[c] += norm * d[n * C + c];
      db[c] += d[n * C + c];
    }
    for (int c = 0; c < C; ++c) {
      const double norm = (x[n * C + c] - r.mean[n]) * r.rstd[n];
      dx[n * C + c] = (double(w[c]) * d[n * C + c] - a / C - norm * bsum / C) * r.rstd[n];
    }
  }
}

}  // namespace

// Forward: 1e-5 + 1e-4|ref| for out, mean, rstd. C = 32 and C = 13 (tail of the 8-lane loops).
TEST(LayerNorm, ForwardMatchesDouble) {
  for (int C : {32, 13}) {
    const int N = 10;
    auto x = rand_vec(N * C, 1, -2.0f, 2.0f), w = rand_vec(C, 2), b = rand_vec(C, 3);
    for (auto& v : x) v += 3.0f;  // non-zero mean
    std::vector<float> out(N * C), mean(N), rstd(N);
    layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
    const LnRef r = ref_ln(x, w, b, N, C);
    EXPECT_TRUE(close(out, r.out, 1e-5, 1e-4)) << "C=" << C;
    EXPECT_TRUE(close(mean, r.mean, 1e-5, 1e-4));
    EXPECT_TRUE(close(rstd, r.rstd, 1e-5, 1e-4));
  }
}

// A model's own epsilon (Qwen's 1e-6, and 0.5, which is near the rows' variance) is the one used.
TEST(LayerNorm, ForwardTakesTheModelsEpsilon) {
  const int N = 7, C = 24;
  auto x = rand_vec(N * C, 15), w = rand_vec(C, 16), b = rand_vec(C, 17);
  for (float eps : {1e-6f, 0.5f}) {
    std::vector<float> out(N * C), mean(N), rstd(N);
    layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C, eps);
    const LnRef r = ref_ln(x, w, b, N, C, eps);
    EXPECT_TRUE(close(out, r.out, 1e-5, 1e-4)) << "eps=" << eps;
    EXPECT_TRUE(close(rstd, r.rstd, 1e-5, 1e-4)) << "eps=" << eps;
  }
}

// Backward: against the double analytic formula (1e-5 + 1e-4|ref|) and central differences of
// sum(out * R) on the double forward (1e-4 + 1e-3|ref|); gradients accumulate onto initial values.
TEST(LayerNorm, BackwardMatchesDoubleAndFiniteDifferences) {
  const int N = 6, C = 19;
  auto x = rand_vec(N * C, 4), w = rand_vec(C, 5), b = rand_vec(C, 6), R = rand_vec(N * C, 7);
  std::vector<float> out(N * C), mean(N), rstd(N);
  layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
  auto dx = rand_vec(N * C, 8), dw = rand_vec(C, 9), db = rand_vec(C, 10);
  const auto dx0 = dx, dw0 = dw, db0 = db;
  layernorm_backward(dx.data(), dw.data(), db.data(), R.data(), x.data(), w.data(), mean.data(),
                     rstd.data(), N, C);
  std::vector<double> gx(dx.size()), gw(C), gb(C);
  for (size_t i = 0; i < gx.size(); ++i) gx[i] = double(dx[i]) - dx0[i];
  for (int i = 0; i < C; ++i) gw[i] = double(dw[i]) - dw0[i], gb[i] = double(db[i]) - db0[i];
  std::vector<double> rx, rw, rb;
  ref_ln_backward(rx, rw, rb, R, x, w, N, C);
  EXPECT_TRUE(close(gx, rx, 1e-5, 1e-4));
  EXPECT_TRUE(close(gw, rw, 1e-5, 1e-4));
  EXPECT_TRUE(close(gb, rb, 1e-5, 1e-4));
  auto fx = fd_grad(
      [&](const std::vector<float>& v) { return project(ref_ln(v, w, b, N, C).out, R); }, x);
  auto fw = fd_grad(
      [&](const std::vector<float>& v) { return project(ref_ln(x, v, b, N, C).out, R); }, w);
  auto fb = fd_grad(
      [&](const std::vector<float>& v) { return project(ref_ln(x, w, v, N, C).out, R); }, b);
  EXPECT_TRUE(close(gx, fx, 1e-4, 1e-3));
  EXPECT_TRUE(close(gw, fw, 1e-4, 1e-3));
  EXPECT_TRUE(close(gb, fb, 1e-4, 1e-3));
}

TEST(LayerNorm, NullOutputsAreSkipped) {
  const int N = 3, C = 8;
  auto x = rand_vec(N * C, 11), w = rand_vec(C, 12), b = rand_vec(C, 13), d = rand_vec(N * C, 14);
  std::vector<float> out(N * C), out2(N * C), mean(N), rstd(N);
  layernorm_forward(out.data(), nullptr, nullptr, x.data(), w.data(), b.data(), N, C);
  layernorm_forward(out2.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
  EXPECT_TRUE(close(out, out2, 0.0, 0.0));
  std::vector<float> dw(C, 0.0f), dw2(C, 0.0f), dx(N * C, 0.0f), db(C, 0.0f);
  layernorm_backward(nullptr, dw.data(), nullptr, d.data(), x.data(), w.data(), mean.data(),
                     rstd.data(), N, C);
  layernorm_backward(dx.data(), dw2.data(), db.data(), d.data(), x.data(), w.data(), mean.data(),
                     rstd.data(), N, C);
  EXPECT_TRUE(close(dw, dw2, 0.0, 0.0));
}

// PyTorch F.layer_norm (float64) on formula inputs: 1e-5 + 1e-5|ref|.
TEST(LayerNorm, MatchesTorchGolden) {
  namespace g = tessel::golden;
  const int N = g::kNormN, C = g::kNormC;
  auto x = formula(N * C, 0.37, 0.1, 2.0);
  auto w = formula(C, 0.11, 0.2, 0.5);
  for (auto& v : w) v = 1.0f + v;
  auto b = formula(C, 0.7, 0.0, 0.1, true);
  auto dy = formula(N * C, 0.23, 0.3, 1.0, true);
  std::vector<float> out(N * C), mean(N), rstd(N), dx(N * C, 0.0f), dw(C, 0.0f), db(C, 0.0f);
  layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
  layernorm_backward(dx.data(), dw.data(), db.data(), dy.data(), x.data(), w.data(), mean.data(),
                     rstd.data(), N, C);
  EXPECT_TRUE(close(out.data(), g::layernorm_out, out.size(), 1e-5, 1e-5));
  EXPECT_TRUE(close(dx.data(), g::layernorm_dinp, dx.size(), 1e-5, 1e-5));
  EXPECT_TRUE(close(dw.data(), g::layernorm_dweight, dw.size(), 1e-5, 1e-5));
  EXPECT_TRUE(close(db.data(), g::layernorm_dbias, db.size(), 1e-5, 1e-5));
}
