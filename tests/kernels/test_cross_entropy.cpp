// Tests of kernels/cpu/cross_entropy: single-shard loss/gradient vs double math, finite
// differences, PyTorch F.cross_entropy, and the vocabulary-parallel pieces over 2 and 3 shards.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/cross_entropy.h"
#include "tests/golden/kernels/torch_golden.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;

namespace {

constexpr int N = 6, V = 37;

std::vector<double> ref_losses(const std::vector<float>& x, const std::vector<int>& t, int n,
                               int vv) {
  std::vector<double> l(n, 0.0);
  for (int i = 0; i < n; ++i) {
    if (t[i] < 0) continue;
    double m = -1e300, s = 0;
    for (int j = 0; j < vv; ++j) m = std::max(m, double(x[i * vv + j]));
    for (int j = 0; j < vv; ++j) s += std::exp(x[i * vv + j] - m);
    l[i] = std::log(s) + m - x[i * vv + t[i]];
  }
  return l;
}

std::vector<double> ref_dlogits(const std::vector<float>& x, const std::vector<int>& t,
                                const std::vector<float>& dl, int n, int vv) {
  std::vector<double> g(x.size(), 0.0);
  for (int i = 0; i < n; ++i) {
    if (t[i] < 0) continue;
    double m = -1e300, s = 0;
    for (int j = 0; j < vv; ++j) m = std::max(m, double(x[i * vv + j]));
    for (int j = 0; j < vv; ++j) s += std::exp(x[i * vv + j] - m);
    for (int j = 0; j < vv; ++j)
      g[i * vv + j] = (std::exp(x[i * vv + j] - m) / s - (j == t[i] ? 1.0 : 0.0)) * dl[i];
  }
  return g;
}

}  // namespace

// Loss 1e-5 + 1e-5|ref|; gradient (accumulated onto initial values) 1e-6 + 1e-4|ref| vs double and
// 1e-4 + 1e-3|ref| vs central differences of sum(loss * dloss).
TEST(CrossEntropy, ForwardBackwardMatchDoubleAndFiniteDifferences) {
  auto x = rand_vec(N * V, 1, -4.0f, 4.0f), dl = rand_vec(N, 2);
  auto t = rand_ints(N, 3, 0, V);
  t[1] = 0;
  t[2] = V - 1;
  std::vector<float> loss(N);
  cross_entropy_forward(loss.data(), x.data(), t.data(), N, V);
  EXPECT_TRUE(close(loss, ref_losses(x, t, N, V), 1e-5, 1e-5));
  auto g = rand_vec(N * V, 4);
  const auto g0 = g;
  cross_entropy_backward(g.data(), x.data(), t.data(), dl.data(), N, V);
  std::vector<double> gd(g.size());
  for (size_t i = 0; i < g.size(); ++i) gd[i] = double(g[i]) - g0[i];
  EXPECT_TRUE(close(gd, ref_dlogits(x, t, dl, N, V), 1e-6, 1e-4));
  auto fd =
      fd_grad([&](const std::vector<float>& v) { return project(ref_losses(v, t, N, V), dl); }, x);
  EXPECT_TRUE(close(gd, fd, 1e-4, 1e-3));
}

// Logits around ±1000 (no overflow) and negative targets (ignored: loss 0, no gradient).
TEST(CrossEntropy, StableAndIgnoresNegativeTargets) {
  auto x = rand_vec(N * V, 5, -3.0f, 3.0f);
  for (int j = 0; j < V; ++j) x[0 * V + j] += 1000.0f, x[1 * V + j] -= 1000.0f;
  auto t = rand_ints(N, 6, 0, V);
  t[3] = -100;
  std::vector<float> loss(N), dl(N, 0.5f), g(N * V, 0.0f);
  cross_entropy_forward(loss.data(), x.data(), t.data(), N, V);
  cross_entropy_backward(g.data(), x.data(), t.data(), dl.data(), N, V);
  EXPECT_TRUE(close(loss, ref_losses(x, t, N, V), 1e-4, 1e-5));
  EXPECT_TRUE(close(g, ref_dlogits(x, t, dl, N, V), 1e-6, 1e-4));
  EXPECT_EQ(loss[3], 0.0f);
  for (int j = 0; j < V; ++j) EXPECT_EQ(g[3 * V + j], 0.0f);
}

// Splitting V = 37 into 2 and 3 shards, combining the partials by hand (elementwise max, then sums)
// gives the single-shard loss (1e-5 + 1e-5|ref|) and gradient (1e-6 + 1e-5|ref|).
TEST(CrossEntropy, VocabParallelShardsMatchSingleShard) {
  auto x = rand_vec(N * V, 7, -5.0f, 5.0f), dl = rand_vec(N, 8);
  auto t = rand_ints(N, 9, 0, V);
  t[0] = 0;
  t[1] = V - 1;
  t[2] = 18;
  t[5] = -1;  // ignored row
  std::vector<float> loss(N), g(N * V, 0.0f);
  cross_entropy_forward(loss.data(), x.data(), t.data(), N, V);
  cross_entropy_backward(g.data(), x.data(), t.data(), dl.data(), N, V);
  for (const std::vector<int>& bounds :
       {std::vector<int>{0, 18, V}, std::vector<int>{0, 12, 25, V}}) {
    const int S = int(bounds.size()) - 1;
    std::vector<std::vector<float>> local(S);
    for (int s = 0; s < S; ++s) {
      const int vl = bounds[s + 1] - bounds[s];
      for (int i = 0; i < N; ++i)
        for (int j = 0; j < vl; ++j) local[s].push_back(x[i * V + bounds[s] + j]);
    }
    std::vector<float> gmax(N, -INFINITY), part(N), gsum(N, 0.0f), gtgt(N, 0.0f), tl(N);
    for (int s = 0; s < S; ++s) {  // all-reduce MAX
      vocab_parallel_max(local[s].data(), N, bounds[s + 1] - bounds[s], part.data());
      for (int i = 0; i < N; ++i) gmax[i] = std::max(gmax[i], part[i]);
    }
    for (int s = 0; s < S; ++s) {  // all-reduce SUM
      vocab_parallel_sum_exp(local[s].data(), gmax.data(), N, bounds[s + 1] - bounds[s],
                             part.data(), tl.data(), t.data(), bounds[s], bounds[s + 1]);
      for (int i = 0; i < N; ++i) gsum[i] += part[i], gtgt[i] += tl[i];
    }
    std::vector<float> ploss(N);
    vocab_parallel_loss(gmax.data(), gsum.data(), gtgt.data(), N, ploss.data(), t.data());
    EXPECT_TRUE(close(ploss, loss, 1e-5, 1e-5)) << S << " shards";
    std::vector<float> pg(N * V, 0.0f);
    for (int s = 0; s < S; ++s) {
      const int vl = bounds[s + 1] - bounds[s];
      std::vector<float> gl(size_t(N) * vl, 0.0f);
      vocab_parallel_backward(gl.data(), local[s].data(), gmax.data(), gsum.data(), t.data(),
                              dl.data(), N, vl, bounds[s], bounds[s + 1]);
      for (int i = 0; i < N; ++i)
        for (int j = 0; j < vl; ++j) pg[i * V + bounds[s] + j] = gl[i * vl + j];
    }
    EXPECT_TRUE(close(pg, g, 1e-6, 1e-5)) << S << " shards";
  }
}

// torch F.cross_entropy(reduction="none") in float64, dloss[i] = 0.1 + 0.05 i: 1e-5 + 1e-5|ref|.
TEST(CrossEntropy, MatchesTorchGolden) {
  namespace g = tessel::golden;
  const int n = g::kCeN, vv = g::kCeV;
  auto x = formula(n * vv, 0.37, 0.1, 3.0);
  std::vector<int> t(n);
  std::vector<float> dl(n);
  for (int i = 0; i < n; ++i) t[i] = (7 * i + 3) % vv, dl[i] = static_cast<float>(0.1 + 0.05 * i);
  std::vector<float> loss(n), dx(n * vv, 0.0f);
  cross_entropy_forward(loss.data(), x.data(), t.data(), n, vv);
  cross_entropy_backward(dx.data(), x.data(), t.data(), dl.data(), n, vv);
  EXPECT_TRUE(close(loss.data(), g::ce_loss, loss.size(), 1e-5, 1e-5));
  EXPECT_TRUE(close(dx.data(), g::ce_dlogits, dx.size(), 1e-5, 1e-5));
}
