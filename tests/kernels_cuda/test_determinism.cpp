// Run-to-run determinism of the CUDA kernels whose reductions span threads or blocks (attention
// backward, norm parameter gradients, embedding backward, bias gradient, cross-entropy): two runs
// on the same inputs must agree bit for bit, as llm.c's determinism test requires of a training
// step. GPU only; the emulator is deterministic by construction.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/cross_entropy.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/layernorm.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

template <typename U>
bool bitwise_equal(const std::vector<U>& a, const std::vector<U>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(U)) == 0;
}

// Runs `f` twice on fresh copies of `init` and compares what it leaves in the buffer.
template <typename U, class F>
void expect_repeatable(const std::vector<U>& init, F&& f) {
  GpuSide side;
  auto a = side.make(init);
  f(a.get());
  side.sync();
  auto b = side.make(init);
  f(b.get());
  side.sync();
  EXPECT_TRUE(bitwise_equal(a.download(), b.download()));
}

}  // namespace

TEST(CudaDeterminism, GpuAttentionBackwardBf16) {
  TESSEL_REQUIRE_GPU();
  GpuSide side;
  const int B = 2, T = 300, H = 8, KH = 2, D = 64;
  const std::size_t nq = std::size_t(B) * T * H * D, nkv = std::size_t(B) * T * KH * D;
  auto q = side.make(to_bf16(tessel::test::rand_vec(nq, 1)));
  auto k = side.make(to_bf16(tessel::test::rand_vec(nkv, 2)));
  auto v = side.make(to_bf16(tessel::test::rand_vec(nkv, 3)));
  auto dout = side.make(to_bf16(tessel::test::rand_vec(nq, 4)));
  auto out = side.template zeros<cuda::bf16>(nq);
  auto lse = side.template zeros<float>(std::size_t(B) * H * T);
  cuda::attention_forward(out.get(), lse.get(), q.get(), k.get(), v.get(), B, T, H, KH, D);
  auto dq = side.template zeros<cuda::bf16>(nq);
  const std::vector<cuda::bf16> zk(nkv, cuda::bf16(0.0f));
  // dk gathers H / KH heads and every query tile: the widest reduction.
  expect_repeatable(zk, [&](cuda::bf16* dk) {
    auto dv = side.template zeros<cuda::bf16>(nkv);
    cuda::attention_backward(dq.get(), dk, dv.get(), dout.get(), q.get(), k.get(), v.get(),
                             out.get(), lse.get(), B, T, H, KH, D);
  });
}

TEST(CudaDeterminism, GpuLayerNormWeightGradFp32) {
  TESSEL_REQUIRE_GPU();
  GpuSide side;
  const int N = 4096, C = 768;
  auto x = side.make(tessel::test::rand_vec(std::size_t(N) * C, 5));
  auto dy = side.make(tessel::test::rand_vec(std::size_t(N) * C, 6));
  auto w = side.make(tessel::test::rand_vec(C, 7));
  auto b = side.make(tessel::test::rand_vec(C, 8));
  auto y = side.template zeros<float>(std::size_t(N) * C);
  auto mean = side.template zeros<float>(N);
  auto rstd = side.template zeros<float>(N);
  cuda::layernorm_forward(y.get(), mean.get(), rstd.get(), x.get(), w.get(), b.get(), N, C);
  expect_repeatable(std::vector<float>(C, 0.0f), [&](float* dw) {
    cuda::layernorm_backward<float>(nullptr, dw, nullptr, dy.get(), x.get(), w.get(), mean.get(),
                                    rstd.get(), N, C);
  });
}

TEST(CudaDeterminism, GpuEmbeddingBackwardFp32) {
  TESSEL_REQUIRE_GPU();
  GpuSide side;
  const int B = 4, T = 512, C = 256, V = 64;  // a small vocabulary: many repeats per row
  auto tokens = side.make(tessel::test::rand_ints(std::size_t(B) * T, 9, 0, V));
  auto dout = side.make(tessel::test::rand_vec(std::size_t(B) * T * C, 10));
  expect_repeatable(std::vector<float>(std::size_t(V) * C, 0.0f), [&](float* dwte) {
    cuda::encoder_backward<float>(dwte, nullptr, dout.get(), tokens.get(), B, T, C, 0, V);
  });
}

TEST(CudaDeterminism, GpuBiasGradBf16) {
  TESSEL_REQUIRE_GPU();
  GpuSide side;
  cuda::GemmContext ctx;
  const int N = 8192, OC = 768;
  auto dout = side.make(to_bf16(tessel::test::rand_vec(std::size_t(N) * OC, 11)));
  expect_repeatable(std::vector<cuda::bf16>(OC, cuda::bf16(0.0f)), [&](cuda::bf16* db) {
    cuda::matmul_backward<cuda::bf16>(ctx, nullptr, nullptr, db, dout.get(), nullptr, nullptr, N,
                                      1, OC);
  });
}

TEST(CudaDeterminism, GpuFusedClassifierBf16) {
  TESSEL_REQUIRE_GPU();
  GpuSide side;
  const int N = 64, V = 50257;
  auto targets = side.make(tessel::test::rand_ints(N, 12, 0, V));
  auto dloss = side.make(std::vector<float>(N, 1.0f / N));
  const auto logits = to_bf16(tessel::test::rand_vec(std::size_t(N) * V, 13, -5.0f, 5.0f));
  expect_repeatable(logits, [&](cuda::bf16* l) {
    cuda::cross_entropy_fused<cuda::bf16>(l, nullptr, targets.get(), dloss.get(), N, V);
  });
}
