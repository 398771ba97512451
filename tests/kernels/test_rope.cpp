// Tests of kernels/cpu/rope (rotate-half rotary embedding, (B,T,NH,D) layout) against double math,
// finite differences and the HF Llama formula in PyTorch; and of the scaled frequencies of
// kernels/rope_frequencies.h against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/rope.h"
#include "tests/golden/kernels/torch_golden.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;
using tessel::RopeFrequencies;

namespace {

// sign = +1: forward rotation; sign = -1: inverse rotation (the analytic backward). inv_freq: the
// D/2 frequencies, theta^(-2i/D) when empty.
std::vector<double> ref_rope(const std::vector<float>& x, int B, int T, int NH, int D, double theta,
                             int off, double sign = 1.0, std::vector<double> inv_freq = {}) {
  std::vector<double> o(x.size());
  const int h2 = D / 2;
  if (inv_freq.empty())
    for (int i = 0; i < h2; ++i) inv_freq.push_back(std::pow(theta, -2.0 * i / D));
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < NH; ++h)
        for (int i = 0; i < h2; ++i) {
          const size_t base = ((size_t(b) * T + t) * NH + h) * D;
          const double a = sign * (off + t) * inv_freq[i];
          const double x1 = x[base + i], x2 = x[base + i + h2];
          o[base + i] = x1 * std::cos(a) - x2 * std::sin(a);
          o[base + i + h2] = x2 * std::cos(a) + x1 * std::sin(a);
        }
  return o;
}

}  // namespace

// Forward 1e-6 + 1e-5|ref| (theta 1e4 and 5e5, offsets 0 and 37); in-place equals out-of-place.
TEST(Rope, ForwardMatchesDoubleAndInPlace) {
  const int B = 2, T = 9, NH = 3, D = 16;
  for (double theta : {10000.0, 500000.0})
    for (int off : {0, 37}) {
      auto x = rand_vec(B * T * NH * D, 1);
      std::vector<float> out(x.size());
      rope_forward(out.data(), x.data(), B, T, NH, D, RopeFrequencies{theta}, off);
      EXPECT_TRUE(close(out, ref_rope(x, B, T, NH, D, theta, off), 1e-6, 1e-5))
          << "theta=" << theta << " off=" << off;
      rope_forward(x.data(), x.data(), B, T, NH, D, RopeFrequencies{theta}, off);
      EXPECT_TRUE(close(x, out, 0.0, 0.0));
    }
}

// A shard starting at pos_offset 3 equals positions 3.. of the unsharded sequence.
TEST(Rope, PosOffsetMatchesSliceOfLongerSequence) {
  const int NH = 2, D = 8, Tfull = 8, off = 3, T = Tfull - off;
  auto x = rand_vec(Tfull * NH * D, 2);
  std::vector<float> full(x.size()), part(T * NH * D);
  rope_forward(full.data(), x.data(), 1, Tfull, NH, D, RopeFrequencies{10000.0}, 0);
  rope_forward(part.data(), x.data() + off * NH * D, 1, T, NH, D, RopeFrequencies{10000.0}, off);
  EXPECT_TRUE(close(part.data(), full.data() + off * NH * D, part.size(), 0.0, 0.0));
}

// Backward = inverse rotation, accumulating: vs the double inverse rotation (1e-6 + 1e-5|ref|), vs
// central differences of sum(out * R) on the double forward (1e-4 + 1e-3|ref|), vs R^T R =
// identity (1e-6), and the in-place variant.
TEST(Rope, BackwardMatchesFiniteDifferencesAndInverts) {
  const int B = 2, T = 6, NH = 2, D = 8, off = 5;
  const double theta = 10000.0;
  auto x = rand_vec(B * T * NH * D, 3), R = rand_vec(x.size(), 4);
  auto dx = rand_vec(x.size(), 5);
  const auto dx0 = dx;
  rope_backward(dx.data(), R.data(), B, T, NH, D, RopeFrequencies{theta}, off);
  std::vector<double> g(x.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = double(dx[i]) - dx0[i];
  EXPECT_TRUE(close(g, ref_rope(R, B, T, NH, D, theta, off, -1.0), 1e-6, 1e-5));
  auto fd = fd_grad(
      [&](const std::vector<float>& v) { return project(ref_rope(v, B, T, NH, D, theta, off), R); },
      x);
  EXPECT_TRUE(close(g, fd, 1e-4, 1e-3));

  auto d = R;
  rope_backward_inplace(d.data(), B, T, NH, D, RopeFrequencies{theta}, off);
  EXPECT_TRUE(close(d, g, 1e-6, 1e-6));

  std::vector<float> y(x.size()), back(x.size(), 0.0f);
  rope_forward(y.data(), x.data(), B, T, NH, D, RopeFrequencies{theta}, off);
  rope_backward(back.data(), y.data(), B, T, NH, D, RopeFrequencies{theta}, off);
  EXPECT_TRUE(close(back, x, 1e-6, 1e-6));
}

// HF Llama rotate_half in float64: 1e-5 + 1e-5|ref|.
TEST(Rope, MatchesTorchGolden) {
  namespace g = tessel::golden;
  const int B = g::kRopeB, T = g::kRopeT, NH = g::kRopeNH, D = g::kRopeD;
  auto x = formula(B * T * NH * D, 0.37, 0.1);
  auto dy = formula(x.size(), 0.23, 0.3, 1.0, true);
  std::vector<float> out(x.size()), dx(x.size(), 0.0f);
  rope_forward(out.data(), x.data(), B, T, NH, D, RopeFrequencies{10000.0}, g::kRopeOffset);
  rope_backward(dx.data(), dy.data(), B, T, NH, D, RopeFrequencies{10000.0}, g::kRopeOffset);
  EXPECT_TRUE(close(out.data(), g::rope_out, out.size(), 1e-5, 1e-5));
  EXPECT_TRUE(close(dx.data(), g::rope_dinp, dx.size(), 1e-5, 1e-5));
}

namespace {

// Llama 3.1's scaling at theta 500000, D = 16 (factor 8, bands 1 and 4 of an 8192-token context):
// wavelengths 2 pi theta^(2i/D) of 6.3, 32, 167, 862, 4443, 22911, 118143 and 609226 tokens. The
// first four are below 8192/4 = 2048 and kept; the last three above 8192/1 and divided by 8; pair 4
// blends: s = (8192/4442.88 - 1) / (4 - 1) = 0.281283, so 500000^(-1/2) x (s + (1 - s)/8) =
// 5.24846e-4.
constexpr double kLlama31InvFreqD16[8] = {
    1.0,              1.9392274475e-01, 3.7606030931e-02, 7.2926647372e-03,
    5.2484616099e-04, 3.4281021960e-05, 6.6478698712e-06, 1.2891731722e-06};

tessel::RopeFrequencies llama31_scaling() {
  tessel::RopeFrequencies f;
  f.theta = 500000.0;
  f.scaling = tessel::RopeScaling::llama3;
  f.factor = 8.0;
  return f;  // bands 1 and 4, context 8192: the struct's defaults, Llama 3.1's values
}

}  // namespace

TEST(RopeFrequencies, Llama3BandsMatchHandValues) {
  const auto f = llama31_scaling();
  for (int i = 0; i < 8; ++i)
    EXPECT_NEAR(tessel::rope_inverse_frequency(f, i, 16), kLlama31InvFreqD16[i],
                1e-9 * kLlama31InvFreqD16[i])
        << "pair " << i;
  // Without scaling, theta^(-2i/D); linear divides every frequency by the factor.
  tessel::RopeFrequencies plain{500000.0};
  EXPECT_NEAR(tessel::rope_inverse_frequency(plain, 4, 16), 1.0 / std::sqrt(500000.0), 1e-15);
  tessel::RopeFrequencies linear = plain;
  linear.scaling = tessel::RopeScaling::linear;
  linear.factor = 4.0;
  EXPECT_NEAR(tessel::rope_inverse_frequency(linear, 4, 16), 0.25 / std::sqrt(500000.0), 1e-15);
  EXPECT_NEAR(tessel::rope_inverse_frequency(linear, 0, 16), 0.25, 1e-15);
}

// The kernel rotates by the scaled frequencies, at positions where the scaled pairs turn visibly
// less than unscaled ones (4093..4101), forward and backward.
TEST(Rope, Llama3ScalingRotatesByScaledFrequencies) {
  const int B = 1, T = 9, NH = 2, D = 16, off = 4093;
  const std::vector<double> inv(std::begin(kLlama31InvFreqD16), std::end(kLlama31InvFreqD16));
  auto x = rand_vec(B * T * NH * D, 6);
  std::vector<float> out(x.size()), back(x.size(), 0.0f);
  rope_forward(out.data(), x.data(), B, T, NH, D, llama31_scaling(), off);
  EXPECT_TRUE(close(out, ref_rope(x, B, T, NH, D, 0.0, off, 1.0, inv), 1e-6, 1e-5));
  std::vector<float> plain(x.size());
  rope_forward(plain.data(), x.data(), B, T, NH, D, RopeFrequencies{500000.0}, off);
  EXPECT_FALSE(close(out, plain, 1e-3, 1e-3));  // the scaling is not lost on the way
  rope_backward(back.data(), out.data(), B, T, NH, D, llama31_scaling(), off);
  EXPECT_TRUE(close(back, x, 1e-6, 1e-6));
}
