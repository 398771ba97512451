// Tests of kernels/cpu/embedding: lookup (+ optional positions), vocabulary sharding, backward.
#include <gtest/gtest.h>

#include "kernels/cpu/embedding.h"
#include "tests/kernels/check.h"

using namespace tessel::cpu;
using namespace tessel::test;

namespace {
constexpr int B = 2, T = 7, C = 12, V = 37;

std::vector<double> ref_encoder(const std::vector<int>& tok, const std::vector<float>& wte,
                                const float* wpe, int vs, int ve) {
  std::vector<double> out(static_cast<size_t>(B) * T * C, 0.0);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const int id = tok[b * T + t];
      for (int c = 0; c < C; ++c) {
        double s = 0.0;
        if (id >= vs && id < ve) s += wte[(id - vs) * C + c];
        if (wpe) s += wpe[t * C + c];
        out[(b * T + t) * C + c] = s;
      }
    }
  return out;
}
}  // namespace

// Exact copies or one fp32 add: tolerance 1e-7 + 1e-7|ref|.
TEST(Embedding, ForwardWithAndWithoutPositions) {
  auto tok = rand_ints(B * T, 1, 0, V);
  auto wte = rand_vec(V * C, 2), wpe = rand_vec(T * C, 3);
  std::vector<float> out(B * T * C);
  encoder_forward(out.data(), tok.data(), wte.data(), wpe.data(), B, T, C, 0, V);
  EXPECT_TRUE(close(out, ref_encoder(tok, wte, wpe.data(), 0, V), 1e-7, 1e-7));
  encoder_forward(out.data(), tok.data(), wte.data(), nullptr, B, T, C, 0, V);
  EXPECT_TRUE(close(out, ref_encoder(tok, wte, nullptr, 0, V), 0.0, 0.0));
}

// Shards [0,12), [12,25), [25,37) with wpe on shard 0 only sum to the unsharded output.
TEST(Embedding, VocabParallelShardsSumToFull) {
  auto tok = rand_ints(B * T, 4, 0, V);
  auto wte = rand_vec(V * C, 5), wpe = rand_vec(T * C, 6);
  std::vector<float> full(B * T * C), sum(B * T * C, 0.0f), part(B * T * C);
  encoder_forward(full.data(), tok.data(), wte.data(), wpe.data(), B, T, C, 0, V);
  const int bounds[] = {0, 12, 25, V};
  for (int s = 0; s < 3; ++s) {
    encoder_forward(part.data(), tok.data(), wte.data() + bounds[s] * C,
                    s == 0 ? wpe.data() : nullptr, B, T, C, bounds[s], bounds[s + 1]);
    EXPECT_TRUE(close(part,
                      ref_encoder(tok, std::vector<float>(wte.begin() + bounds[s] * C, wte.end()),
                                  s == 0 ? wpe.data() : nullptr, bounds[s], bounds[s + 1]),
                      1e-7, 1e-7));
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += part[i];
  }
  EXPECT_TRUE(close(sum, full, 1e-7, 1e-7));
}

// Backward accumulates into dwte/dwpe; matches the scatter in double (1e-6 + 1e-5|ref|) and
// central differences of sum(out * R) (1e-4 + 1e-3|ref|). Sharded dwte fills only its own rows.
TEST(Embedding, BackwardAccumulatesAndMatchesFiniteDifferences) {
  std::vector<int> tok = rand_ints(B * T, 7, 0, V);
  tok[3] = tok[5];  // repeated id: its gradient rows add up
  auto wte = rand_vec(V * C, 8), wpe = rand_vec(T * C, 9), R = rand_vec(B * T * C, 10);
  auto dwte = rand_vec(V * C, 11), dwpe = rand_vec(T * C, 12);
  auto dwte0 = dwte, dwpe0 = dwpe;
  encoder_backward(dwte.data(), dwpe.data(), R.data(), tok.data(), B, T, C, 0, V);
  std::vector<double> sc_wte(dwte0.begin(), dwte0.end()), sc_wpe(dwpe0.begin(), dwpe0.end());
  for (int bt = 0; bt < B * T; ++bt)
    for (int c = 0; c < C; ++c) {
      sc_wte[tok[bt] * C + c] += R[bt * C + c];
      sc_wpe[(bt % T) * C + c] += R[bt * C + c];
    }
  EXPECT_TRUE(close(dwte, sc_wte, 1e-6, 1e-5));
  EXPECT_TRUE(close(dwpe, sc_wpe, 1e-6, 1e-5));
  auto fd_wte = fd_grad(
      [&](const std::vector<float>& x) {
        return project(ref_encoder(tok, x, wpe.data(), 0, V), R);
      },
      wte);
  auto fd_wpe = fd_grad(
      [&](const std::vector<float>& x) {
        return project(ref_encoder(tok, wte, x.data(), 0, V), R);
      },
      wpe);
  std::vector<double> ref_wte(dwte0.begin(), dwte0.end()), ref_wpe(dwpe0.begin(), dwpe0.end());
  for (size_t i = 0; i < ref_wte.size(); ++i) ref_wte[i] += fd_wte[i];
  for (size_t i = 0; i < ref_wpe.size(); ++i) ref_wpe[i] += fd_wpe[i];
  EXPECT_TRUE(close(dwte, ref_wte, 1e-4, 1e-3));
  EXPECT_TRUE(close(dwpe, ref_wpe, 1e-4, 1e-3));

  // Shard [10, 20): its dwte equals rows 10..19 of the full gradient (from zero), dwpe skipped.
  std::vector<float> full(V * C, 0.0f), shard(10 * C, 0.0f);
  encoder_backward(full.data(), nullptr, R.data(), tok.data(), B, T, C, 0, V);
  encoder_backward(shard.data(), nullptr, R.data(), tok.data(), B, T, C, 10, 20);
  EXPECT_TRUE(close(shard.data(), full.data() + 10 * C, shard.size(), 0.0, 0.0));
}
