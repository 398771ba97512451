// Tests of kernels/cuda/cross_entropy against kernels/cpu/cross_entropy: forward, accumulating
// backward, the fused in-place classifier, and the vocabulary-parallel pieces stitched over two
// emulated ranks (the all-reduces done on the host), all with some ignored (-1) targets.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/cpu/cross_entropy.h"
#include "kernels/cuda/cross_entropy.cuh"
#include "kernels/cuda/cross_entropy.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

struct CeCase {
  int N = 7, V = 1500;  // V > 2 x 512 threads: several columns per thread
  std::vector<float> logits;
  std::vector<int> targets;
  std::vector<float> dloss;
};

template <typename S>
CeCase make_case() {
  CeCase c;
  c.logits = rounded<S>(tessel::test::rand_vec(std::size_t(c.N) * c.V, 81, -6.0f, 6.0f));
  c.targets = tessel::test::rand_ints(c.N, 82, 0, c.V);
  c.targets[2] = -1;  // padding
  c.targets[5] = c.V - 1;
  c.dloss = tessel::test::rand_vec(c.N, 83, 0.1f, 1.0f);
  return c;
}

template <class Side, typename S>
void check_cross_entropy() {
  Side side;
  const CeCase c = make_case<S>();
  const int N = c.N, V = c.V;
  const std::size_t nv = std::size_t(N) * V;
  std::vector<float> ref_loss(N), ref_grad = rounded<S>(tessel::test::rand_vec(nv, 84));
  const std::vector<float> grad0 = ref_grad;
  cpu::cross_entropy_forward(ref_loss.data(), c.logits.data(), c.targets.data(), N, V);
  cpu::cross_entropy_backward(ref_grad.data(), c.logits.data(), c.targets.data(), c.dloss.data(),
                              N, V);
  std::vector<float> ref_fused(nv, 0.0f);  // the gradient alone
  cpu::cross_entropy_backward(ref_fused.data(), c.logits.data(), c.targets.data(), c.dloss.data(),
                              N, V);

  auto dlogits = side.make(store<S>(c.logits));
  auto dtargets = side.make(c.targets);
  auto ddloss = side.make(c.dloss);
  auto dloss_out = side.template zeros<float>(N);
  auto dgrad = side.make(store<S>(grad0));
  TESSEL_CUDA_CALL(side, cross_entropy_forward, dloss_out.get(), dlogits.get(), dtargets.get(), N,
                   V);
  TESSEL_CUDA_CALL(side, cross_entropy_backward, dgrad.get(), dlogits.get(), dtargets.get(),
                   ddloss.get(), N, V);
  side.sync();
  const Tol t = tol<S>();
  // Losses are fp32 math on S-valued logits: fp32 tolerance for both storage types.
  EXPECT_TRUE(tessel::test::close(dloss_out.download(), ref_loss, 1e-5, 1e-5));
  EXPECT_TRUE(tessel::test::close(load(dgrad.download()), ref_grad, t.atol, t.rtol));

  auto dfused_loss = side.template zeros<float>(N);
  TESSEL_CUDA_CALL(side, cross_entropy_fused, dlogits.get(), dfused_loss.get(), dtargets.get(),
                   ddloss.get(), N, V);
  side.sync();
  EXPECT_TRUE(tessel::test::close(dfused_loss.download(), ref_loss, 1e-5, 1e-5));
  // Gradients are ~dloss/V: compare with an atol scaled to them.
  EXPECT_TRUE(tessel::test::close(load(dlogits.download()), ref_fused, 1e-7, t.rtol));
}

// Two shards [0, split) and [split, V): max / sum-exp / loss / backward, reduced on the host.
template <class Side, typename S>
void check_vocab_parallel() {
  Side side;
  const CeCase c = make_case<S>();
  const int N = c.N, V = c.V, split = 611;
  std::vector<float> ref_loss(N), ref_grad(std::size_t(N) * V, 0.0f);
  cpu::cross_entropy_forward(ref_loss.data(), c.logits.data(), c.targets.data(), N, V);
  cpu::cross_entropy_backward(ref_grad.data(), c.logits.data(), c.targets.data(), c.dloss.data(),
                              N, V);
  const int bounds[3] = {0, split, V};
  auto shard = [&](const std::vector<float>& full, int r) {
    const int w = bounds[r + 1] - bounds[r];
    std::vector<float> s(std::size_t(N) * w);
    for (int i = 0; i < N; ++i)
      std::copy_n(full.begin() + std::size_t(i) * V + bounds[r], w, s.begin() + std::size_t(i) * w);
    return s;
  };
  auto dtargets = side.make(c.targets);
  auto ddloss = side.make(c.dloss);
  std::vector<float> gmax(N, -1e30f), gsum(N, 0.0f), gtarget(N, 0.0f);
  for (int r = 0; r < 2; ++r) {
    const int w = bounds[r + 1] - bounds[r];
    auto dl = side.make(store<S>(shard(c.logits, r)));
    auto dmax = side.template zeros<float>(N);
    TESSEL_CUDA_CALL(side, vocab_parallel_max, dl.get(), N, w, dmax.get());
    side.sync();
    const auto m = dmax.download();
    for (int i = 0; i < N; ++i) gmax[i] = std::max(gmax[i], m[i]);  // all-reduce MAX
  }
  auto dgmax = side.make(gmax);
  for (int r = 0; r < 2; ++r) {
    const int w = bounds[r + 1] - bounds[r];
    auto dl = side.make(store<S>(shard(c.logits, r)));
    auto dsum = side.template zeros<float>(N);
    auto dtl = side.template zeros<float>(N);
    TESSEL_CUDA_CALL(side, vocab_parallel_sum_exp, dl.get(), dgmax.get(), N, w, dsum.get(),
                     dtl.get(), dtargets.get(), bounds[r], bounds[r + 1]);
    side.sync();
    const auto s = dsum.download(), tl = dtl.download();
    for (int i = 0; i < N; ++i) gsum[i] += s[i], gtarget[i] += tl[i];  // all-reduce SUM
  }
  auto dgsum = side.make(gsum);
  auto dgtarget = side.make(gtarget);
  auto dloss_out = side.template zeros<float>(N);
  TESSEL_CUDA_CALL(side, vocab_parallel_loss, dgmax.get(), dgsum.get(), dgtarget.get(), N,
                   dloss_out.get(), dtargets.get());
  side.sync();
  EXPECT_TRUE(tessel::test::close(dloss_out.download(), ref_loss, 1e-5, 1e-5));
  const Tol t = tol<S>();
  for (int r = 0; r < 2; ++r) {
    const int w = bounds[r + 1] - bounds[r];
    const auto ref = shard(ref_grad, r);
    auto dl = side.make(store<S>(shard(c.logits, r)));
    auto dg = side.template zeros<S>(std::size_t(N) * w);
    TESSEL_CUDA_CALL(side, vocab_parallel_backward, dg.get(), dl.get(), dgmax.get(), dgsum.get(),
                     dtargets.get(), ddloss.get(), N, w, bounds[r], bounds[r + 1]);
    TESSEL_CUDA_CALL(side, vocab_parallel_backward_inplace, dl.get(), dgmax.get(), dgsum.get(),
                     dtargets.get(), ddloss.get(), N, w, bounds[r], bounds[r + 1]);
    side.sync();
    EXPECT_TRUE(tessel::test::close(load(dg.download()), ref, 1e-7, t.rtol));
    EXPECT_TRUE(tessel::test::close(load(dl.download()), ref, 1e-7, t.rtol));
  }
}

}  // namespace

TESSEL_SIDES_TEST(CudaCrossEntropy, ForwardBackwardFused, check_cross_entropy)
TESSEL_SIDES_TEST(CudaCrossEntropy, VocabParallel, check_vocab_parallel)
