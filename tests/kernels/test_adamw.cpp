// Tests of kernels/cpu/adamw against a double implementation of torch's AdamW and against two
// torch.optim.AdamW steps.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/adamw.h"
#include "tests/golden/kernels/torch_golden.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;

// Three steps with fresh gradients, n = 1001 (vector tail): params, m, v within 1e-6 + 1e-5|ref|
// of the double recurrences.
TEST(AdamW, MatchesDoubleOverThreeSteps) {
  const size_t n = 1001;
  const double lr = 3e-3, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
  auto p = rand_vec(n, 1);
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  auto rp = to_double(p);
  std::vector<double> rm(n, 0.0), rv(n, 0.0);
  for (int t = 1; t <= 3; ++t) {
    auto g = rand_vec(n, 10 + t);
    g[0] = 0.0f;  // zero gradient: pure decay
    adamw_update(p.data(), g.data(), m.data(), v.data(), n, float(lr), float(b1), float(b2),
                 float(eps), float(wd), t);
    for (size_t i = 0; i < n; ++i) {
      rp[i] *= 1.0 - lr * wd;
      rm[i] = b1 * rm[i] + (1 - b1) * g[i];
      rv[i] = b2 * rv[i] + (1 - b2) * double(g[i]) * g[i];
      const double mh = rm[i] / (1 - std::pow(b1, t)), vh = rv[i] / (1 - std::pow(b2, t));
      rp[i] -= lr * mh / (std::sqrt(vh) + eps);
    }
  }
  EXPECT_TRUE(close(p, rp, 1e-6, 1e-5));
  EXPECT_TRUE(close(m, rm, 1e-6, 1e-5));
  EXPECT_TRUE(close(v, rv, 1e-7, 1e-5));
}

// torch.optim.AdamW(lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1) in float64, two steps:
// 1e-6 + 1e-5|ref|.
TEST(AdamW, MatchesTorchGolden) {
  namespace g = tessel::golden;
  const size_t n = g::kAdamN;
  auto p = formula(n, 0.37, 0.1);
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  auto g1 = formula(n, 0.23, 0.3, 1.0, true), g2 = formula(n, 0.53, 0.7, 0.5);
  adamw_update(p.data(), g1.data(), m.data(), v.data(), n, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 1);
  EXPECT_TRUE(close(p.data(), g::adamw_params_step1, n, 1e-6, 1e-5));
  adamw_update(p.data(), g2.data(), m.data(), v.data(), n, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 2);
  EXPECT_TRUE(close(p.data(), g::adamw_params_step2, n, 1e-6, 1e-5));
  EXPECT_TRUE(close(m.data(), g::adamw_m_step2, n, 1e-6, 1e-5));
  EXPECT_TRUE(close(v.data(), g::adamw_v_step2, n, 1e-7, 1e-5));
}
