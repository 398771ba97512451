// Tests of kernels/cpu/gemm: sgemm (all transpose cases, alpha/beta, padded leading dimensions)
// and the nn.Linear forward/backward against double loops and finite differences.
#include <gtest/gtest.h>

#include "kernels/cpu/gemm.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;

namespace {

// out(N,OC) = inp(N,C) weight(OC,C)^T + bias, in double.
std::vector<double> ref_matmul(const std::vector<float>& inp, const std::vector<float>& w,
                               const float* bias, int N, int C, int OC) {
  std::vector<double> out(static_cast<size_t>(N) * OC);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o) {
      double s = bias ? bias[o] : 0.0;
      for (int c = 0; c < C; ++c) s += static_cast<double>(inp[n * C + c]) * w[o * C + c];
      out[n * OC + o] = s;
    }
  return out;
}

}  // namespace

// Tolerance for fp32 dot products of length <= 32 with |x| <= 1: 1e-5 + 1e-4|ref|.
TEST(Gemm, SgemmAllTransposeCases) {
  const int M = 7, N = 9, K = 13, pad = 3;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      const int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
      auto A = rand_vec(static_cast<size_t>(ta ? K : M) * lda, 1);
      auto Bm = rand_vec(static_cast<size_t>(tb ? N : K) * ldb, 2);
      auto Cm = rand_vec(static_cast<size_t>(M) * ldc, 3);
      const float alpha = 0.7f, beta = -0.3f;
      std::vector<double> ref(Cm.begin(), Cm.end());
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double s = 0.0;
          for (int k = 0; k < K; ++k) {
            const double a = ta ? A[k * lda + i] : A[i * lda + k];
            const double b = tb ? Bm[j * ldb + k] : Bm[k * ldb + j];
            s += a * b;
          }
          ref[i * ldc + j] = alpha * s + beta * static_cast<double>(Cm[i * ldc + j]);
        }
      sgemm(ta, tb, M, N, K, alpha, A.data(), lda, Bm.data(), ldb, beta, Cm.data(), ldc);
      EXPECT_TRUE(close(Cm, ref, 1e-5, 1e-4)) << "transA=" << ta << " transB=" << tb;
    }
}

TEST(Gemm, MatmulForwardWithAndWithoutBias) {
  const int N = 10, C = 32, OC = 24;
  auto inp = rand_vec(N * C, 11), w = rand_vec(OC * C, 12), bias = rand_vec(OC, 13);
  std::vector<float> out(N * OC);
  matmul_forward(out.data(), inp.data(), w.data(), bias.data(), N, C, OC);
  EXPECT_TRUE(close(out, ref_matmul(inp, w, bias.data(), N, C, OC), 1e-5, 1e-4));
  matmul_forward(out.data(), inp.data(), w.data(), nullptr, N, C, OC);
  EXPECT_TRUE(close(out, ref_matmul(inp, w, nullptr, N, C, OC), 1e-5, 1e-4));
}

// Backward accumulates into pre-filled gradients; compared with double loops (1e-5 + 1e-4|ref|)
// and with central differences of sum(out * R) on the double forward (1e-4 + 1e-3|ref|).
TEST(Gemm, MatmulBackwardAccumulatesAndMatchesFiniteDifferences) {
  const int N = 6, C = 8, OC = 5;
  auto inp = rand_vec(N * C, 21), w = rand_vec(OC * C, 22), bias = rand_vec(OC, 23);
  auto R = rand_vec(N * OC, 24);  // dout
  auto dinp = rand_vec(N * C, 25), dw = rand_vec(OC * C, 26), db = rand_vec(OC, 27);
  std::vector<double> rdinp(dinp.begin(), dinp.end()), rdw(dw.begin(), dw.end()),
      rdb(db.begin(), db.end());
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o) {
      const double d = R[n * OC + o];
      rdb[o] += d;
      for (int c = 0; c < C; ++c) {
        rdinp[n * C + c] += d * w[o * C + c];
        rdw[o * C + c] += d * inp[n * C + c];
      }
    }
  auto dinp0 = dinp, dw0 = dw, db0 = db;
  matmul_backward(dinp.data(), dw.data(), db.data(), R.data(), inp.data(), w.data(), N, C, OC);
  EXPECT_TRUE(close(dinp, rdinp, 1e-5, 1e-4));
  EXPECT_TRUE(close(dw, rdw, 1e-5, 1e-4));
  EXPECT_TRUE(close(db, rdb, 1e-5, 1e-4));

  // Finite differences: the accumulated part only (got - initial).
  auto fd_inp = fd_grad(
      [&](const std::vector<float>& x) {
        return project(ref_matmul(x, w, bias.data(), N, C, OC), R);
      },
      inp);
  auto fd_w = fd_grad(
      [&](const std::vector<float>& x) {
        return project(ref_matmul(inp, x, bias.data(), N, C, OC), R);
      },
      w);
  auto fd_b = fd_grad(
      [&](const std::vector<float>& x) {
        return project(ref_matmul(inp, w, x.data(), N, C, OC), R);
      },
      bias);
  std::vector<double> gi(dinp.size()), gw(dw.size()), gb(db.size());
  for (size_t i = 0; i < gi.size(); ++i) gi[i] = double(dinp[i]) - dinp0[i];
  for (size_t i = 0; i < gw.size(); ++i) gw[i] = double(dw[i]) - dw0[i];
  for (size_t i = 0; i < gb.size(); ++i) gb[i] = double(db[i]) - db0[i];
  EXPECT_TRUE(close(gi, fd_inp, 1e-4, 1e-3));
  EXPECT_TRUE(close(gw, fd_w, 1e-4, 1e-3));
  EXPECT_TRUE(close(gb, fd_b, 1e-4, 1e-3));
}

TEST(Gemm, MatmulBackwardSkipsNullGradients) {
  const int N = 4, C = 8, OC = 3;
  auto inp = rand_vec(N * C, 31), w = rand_vec(OC * C, 32), dout = rand_vec(N * OC, 33);
  std::vector<float> dw(OC * C, 0.0f), dw2(OC * C, 0.0f), dinp(N * C, 0.0f), db(OC, 0.0f);
  matmul_backward(nullptr, dw.data(), nullptr, dout.data(), inp.data(), w.data(), N, C, OC);
  matmul_backward(dinp.data(), dw2.data(), db.data(), dout.data(), inp.data(), w.data(), N, C, OC);
  EXPECT_TRUE(close(dw, dw2, 0.0, 0.0));
}

TEST(Gemm, SetBlasThreadsDoesNotBreakResults) {
  const int N = 64, C = 64, OC = 64;
  auto inp = rand_vec(N * C, 41), w = rand_vec(OC * C, 42);
  std::vector<float> a(N * OC), b(N * OC);
  set_blas_threads(1);
  matmul_forward(a.data(), inp.data(), w.data(), nullptr, N, C, OC);
  set_blas_threads(2);
  matmul_forward(b.data(), inp.data(), w.data(), nullptr, N, C, OC);
  set_blas_threads(1);
  EXPECT_TRUE(close(a, b, 1e-5, 1e-5));
}
