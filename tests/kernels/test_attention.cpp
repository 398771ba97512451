// Tests of kernels/cpu/attention (causal GQA, saved log-sum-exp) against a naive double
// implementation, finite differences and a PyTorch masked-softmax reference.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "kernels/cpu/attention.h"
#include "tests/golden/kernels/torch_golden.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;

namespace {

struct Shape {
  int B, T, H, KH, D;
};

struct AttnRef {
  std::vector<double> out, lse, dq, dk, dv;
};

// Naive causal GQA attention in double; with dout, also the analytic gradients.
AttnRef ref_attention(const std::vector<float>& q, const std::vector<float>& k,
                      const std::vector<float>& v, const Shape& s,
                      const std::vector<float>* dout = nullptr) {
  const auto [B, T, H, KH, D] = s;
  AttnRef r;
  r.out.assign(size_t(B) * T * H * D, 0.0);
  r.lse.assign(size_t(B) * H * T, 0.0);
  r.dq.assign(q.size(), 0.0);
  r.dk.assign(k.size(), 0.0);
  r.dv.assign(v.size(), 0.0);
  const double scale = 1.0 / std::sqrt(double(D));
  auto Q = [&](int b, int t, int h, int d) {
    return double(q[((size_t(b) * T + t) * H + h) * D + d]);
  };
  auto K = [&](int b, int t, int h, int d) {
    return double(k[((size_t(b) * T + t) * KH + h) * D + d]);
  };
  auto V = [&](int b, int t, int h, int d) {
    return double(v[((size_t(b) * T + t) * KH + h) * D + d]);
  };
  std::vector<double> p(T), dp(T);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const int kv = h / (H / KH);
      for (int i = 0; i < T; ++i) {
        double m = -1e300;
        for (int j = 0; j <= i; ++j) {
          double sc = 0;
          for (int d = 0; d < D; ++d) sc += Q(b, i, h, d) * K(b, j, kv, d);
          p[j] = sc * scale;
          m = std::max(m, p[j]);
        }
        double sum = 0;
        for (int j = 0; j <= i; ++j) sum += (p[j] = std::exp(p[j] - m));
        for (int j = 0; j <= i; ++j) p[j] /= sum;
        r.lse[(size_t(b) * H + h) * T + i] = m + std::log(sum);
        const size_t oi = ((size_t(b) * T + i) * H + h) * D;
        for (int d = 0; d < D; ++d) {
          double o = 0;
          for (int j = 0; j <= i; ++j) o += p[j] * V(b, j, kv, d);
          r.out[oi + d] = o;
        }
        if (!dout) continue;
        double di = 0;
        for (int d = 0; d < D; ++d) di += double((*dout)[oi + d]) * r.out[oi + d];
        for (int j = 0; j <= i; ++j) {
          dp[j] = 0;
          for (int d = 0; d < D; ++d) dp[j] += double((*dout)[oi + d]) * V(b, j, kv, d);
        }
        for (int j = 0; j <= i; ++j) {
          const double ds = p[j] * (dp[j] - di) * scale;
          const size_t kj = ((size_t(b) * T + j) * KH + kv) * D;
          for (int d = 0; d < D; ++d) {
            r.dq[oi + d] += ds * K(b, j, kv, d);
            r.dk[kj + d] += ds * Q(b, i, h, d);
            r.dv[kj + d] += p[j] * (*dout)[oi + d];
          }
        }
      }
    }
  return r;
}

std::vector<double> minus(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<double> d(a.size());
  for (size_t i = 0; i < a.size(); ++i) d[i] = double(a[i]) - b[i];
  return d;
}

class AttentionShapes : public ::testing::TestWithParam<Shape> {};

}  // namespace

// Forward (out, lse) 1e-5 + 1e-4|ref|; backward (accumulating onto random initial values) vs the
// double analytic gradients 2e-5 + 1e-4|ref|. Shapes cover MHA, GQA, MQA, T = 1 and T over one
// and two 64-row blocks.
TEST_P(AttentionShapes, ForwardBackwardMatchDouble) {
  const Shape s = GetParam();
  const size_t nq = size_t(s.B) * s.T * s.H * s.D, nk = size_t(s.B) * s.T * s.KH * s.D;
  auto q = rand_vec(nq, 1, -1.5f, 1.5f), k = rand_vec(nk, 2, -1.5f, 1.5f), v = rand_vec(nk, 3);
  auto dout = rand_vec(nq, 4);
  std::vector<float> out(nq), lse(size_t(s.B) * s.H * s.T);
  attention_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), s.B, s.T, s.H, s.KH, s.D);
  const AttnRef r = ref_attention(q, k, v, s, &dout);
  EXPECT_TRUE(close(out, r.out, 1e-5, 1e-4));
  EXPECT_TRUE(close(lse, r.lse, 1e-5, 1e-4));
  auto dq = rand_vec(nq, 5), dk = rand_vec(nk, 6), dv = rand_vec(nk, 7);
  const auto dq0 = dq, dk0 = dk, dv0 = dv;
  attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), q.data(), k.data(), v.data(),
                     out.data(), lse.data(), s.B, s.T, s.H, s.KH, s.D);
  EXPECT_TRUE(close(minus(dq, dq0), r.dq, 2e-5, 1e-4));
  EXPECT_TRUE(close(minus(dk, dk0), r.dk, 2e-5, 1e-4));
  EXPECT_TRUE(close(minus(dv, dv0), r.dv, 2e-5, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(Kernels, AttentionShapes,
                         ::testing::Values(Shape{2, 5, 2, 2, 8}, Shape{2, 16, 4, 2, 8},
                                           Shape{1, 1, 2, 1, 4}, Shape{1, 70, 3, 1, 16},
                                           Shape{1, 130, 4, 2, 8}, Shape{1, 64, 2, 2, 32}));

// Queries the last T of Tk positions (a context-parallel chunk against the keys up to its end):
// against the naive double attention over the whole Tk-row sequence, whose last T rows they are.
// With the output gradient zero on the first Tk - T rows, the whole sequence's dK and dV are the
// chunk's alone. Offsets inside a 64-row block and past two blocks.
TEST(Attention, QueriesAtTheEndOfALongerSequenceMatchTheirRowsOfTheWhole) {
  for (const auto [B, T, Tk, H, KH, D] : {std::array{2, 20, 50, 4, 2, 8}, std::array{1, 70, 200, 2, 1, 16},
                                          std::array{1, 64, 64, 2, 2, 8}}) {
    const Shape whole{B, Tk, H, KH, D};
    const size_t row_q = size_t(H) * D, row_k = size_t(KH) * D;
    const size_t nq_whole = size_t(B) * Tk * row_q, nk = size_t(B) * Tk * row_k;
    auto q_whole = rand_vec(nq_whole, 11, -1.5f, 1.5f), k = rand_vec(nk, 12, -1.5f, 1.5f), v = rand_vec(nk, 13);
    auto dout_whole = rand_vec(nq_whole, 14);
    // The chunk: each batch element's last T query rows; the whole's output gradient is zero
    // elsewhere.
    std::vector<float> q(size_t(B) * T * row_q), dout(q.size());
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < Tk; ++t)
        for (size_t x = 0; x < row_q; ++x) {
          const size_t w = (size_t(b) * Tk + t) * row_q + x;
          if (t < Tk - T) {
            dout_whole[w] = 0.0f;
            continue;
          }
          const size_t c = (size_t(b) * T + (t - (Tk - T))) * row_q + x;
          q[c] = q_whole[w];
          dout[c] = dout_whole[w];
        }
    const AttnRef r = ref_attention(q_whole, k, v, whole, &dout_whole);
    std::vector<float> out(q.size()), lse(size_t(B) * H * T);
    attention_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), B, T, Tk, H, KH, D);
    std::vector<double> ref_out(out.size()), ref_lse(lse.size()), ref_dq(q.size());
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t) {
        const size_t c = (size_t(b) * T + t) * row_q, w = (size_t(b) * Tk + t + (Tk - T)) * row_q;
        for (size_t x = 0; x < row_q; ++x) {
          ref_out[c + x] = r.out[w + x];
          ref_dq[c + x] = r.dq[w + x];
        }
        for (int h = 0; h < H; ++h)
          ref_lse[(size_t(b) * H + h) * T + t] = r.lse[(size_t(b) * H + h) * Tk + t + (Tk - T)];
      }
    EXPECT_TRUE(close(out, ref_out, 1e-5, 1e-4)) << "T " << T << " Tk " << Tk;
    EXPECT_TRUE(close(lse, ref_lse, 1e-5, 1e-4)) << "T " << T << " Tk " << Tk;
    std::vector<float> dq(q.size(), 0.0f), dk(nk, 0.0f), dv(nk, 0.0f);
    attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), q.data(), k.data(), v.data(), out.data(),
                       lse.data(), B, T, Tk, H, KH, D);
    EXPECT_TRUE(close(dq, ref_dq, 2e-5, 1e-4)) << "T " << T << " Tk " << Tk;
    EXPECT_TRUE(close(dk, r.dk, 2e-5, 1e-4)) << "T " << T << " Tk " << Tk;
    EXPECT_TRUE(close(dv, r.dv, 2e-5, 1e-4)) << "T " << T << " Tk " << Tk;
  }
}

// Central differences of sum(out * R) on the double forward: 1e-4 + 1e-3|ref|.
TEST(Attention, BackwardMatchesFiniteDifferences) {
  const Shape s{2, 12, 4, 2, 8};
  const size_t nq = size_t(s.B) * s.T * s.H * s.D, nk = size_t(s.B) * s.T * s.KH * s.D;
  auto q = rand_vec(nq, 11), k = rand_vec(nk, 12), v = rand_vec(nk, 13), R = rand_vec(nq, 14);
  std::vector<float> out(nq), lse(size_t(s.B) * s.H * s.T), dq(nq, 0.0f), dk(nk, 0.0f),
      dv(nk, 0.0f);
  attention_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), s.B, s.T, s.H, s.KH, s.D);
  attention_backward(dq.data(), dk.data(), dv.data(), R.data(), q.data(), k.data(), v.data(),
                     out.data(), lse.data(), s.B, s.T, s.H, s.KH, s.D);
  auto fq = fd_grad(
      [&](const std::vector<float>& x) { return project(ref_attention(x, k, v, s).out, R); }, q);
  auto fk = fd_grad(
      [&](const std::vector<float>& x) { return project(ref_attention(q, x, v, s).out, R); }, k);
  auto fv = fd_grad(
      [&](const std::vector<float>& x) { return project(ref_attention(q, k, x, s).out, R); }, v);
  EXPECT_TRUE(close(dq, fq, 1e-4, 1e-3));
  EXPECT_TRUE(close(dk, fk, 1e-4, 1e-3));
  EXPECT_TRUE(close(dv, fv, 1e-4, 1e-3));
}

// Large scores (|q·k|/sqrt(D) up to ~100) stay finite thanks to the max subtraction.
TEST(Attention, StableForLargeScores) {
  const Shape s{1, 9, 2, 1, 4};
  auto q = rand_vec(72, 21, -10.0f, 10.0f), k = rand_vec(36, 22, -10.0f, 10.0f),
       v = rand_vec(36, 23);
  std::vector<float> out(72), lse(18);
  attention_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), s.B, s.T, s.H, s.KH, s.D);
  EXPECT_TRUE(close(out, ref_attention(q, k, v, s).out, 1e-5, 1e-4));
}

// PyTorch masked-softmax attention with repeat_interleave'd k/v, float64: 1e-5 + 1e-5|ref|.
TEST(Attention, MatchesTorchGolden) {
  namespace g = tessel::golden;
  const int B = g::kAttnB, T = g::kAttnT, H = g::kAttnH, KH = g::kAttnKH, D = g::kAttnD;
  const size_t nq = size_t(B) * T * H * D, nk = size_t(B) * T * KH * D;
  auto q = formula(nq, 0.37, 0.1), k = formula(nk, 0.41, 0.5),
       v = formula(nk, 0.29, 0.2, 1.0, true);
  auto dy = formula(nq, 0.23, 0.3, 1.0, true);
  std::vector<float> out(nq), lse(size_t(B) * H * T), dq(nq, 0.0f), dk(nk, 0.0f), dv(nk, 0.0f);
  attention_forward(out.data(), lse.data(), q.data(), k.data(), v.data(), B, T, H, KH, D);
  attention_backward(dq.data(), dk.data(), dv.data(), dy.data(), q.data(), k.data(), v.data(),
                     out.data(), lse.data(), B, T, H, KH, D);
  EXPECT_TRUE(close(out.data(), g::attention_out, nq, 1e-5, 1e-5));
  EXPECT_TRUE(close(dq.data(), g::attention_dq, nq, 1e-5, 1e-5));
  EXPECT_TRUE(close(dk.data(), g::attention_dk, nk, 1e-5, 1e-5));
  EXPECT_TRUE(close(dv.data(), g::attention_dv, nk, 1e-5, 1e-5));
}
