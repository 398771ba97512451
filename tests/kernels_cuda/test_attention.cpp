// Tests of kernels/cuda/attention against kernels/cpu/attention: forward (out, lse) and the
// accumulating backward (dq, dk, dv) for causal GQA, with T not a multiple of any tile size, every
// supported head dim, and MHA (KH == H) as well as GQA.
#include <gtest/gtest.h>

#include "kernels/cpu/attention.h"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/attention.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

struct Shape {
  int B, T, H, KH, D;
};

// Attention outputs are convex combinations of v (|v| <= 1), gradients sums over T terms:
// fp32 tolerances a bit above the elementwise ones; bf16 rounds P and dS to bf16 before the
// tensor-core products (as FlashAttention-2 does), hence llm.c's bf16 rtol with a larger atol.
template <typename S>
Tol attn_tol() {
  if constexpr (std::is_same_v<S, cuda::bf16>)
    return {3e-2, 8e-2};
  else
    return {2e-5, 1e-4};
}

template <class Side, typename S>
void check_attention_shape(const Shape& s) {
  SCOPED_TRACE(testing::Message() << "B " << s.B << " T " << s.T << " H " << s.H << " KH " << s.KH
                                  << " D " << s.D);
  Side side;
  const std::size_t nq = std::size_t(s.B) * s.T * s.H * s.D;
  const std::size_t nkv = std::size_t(s.B) * s.T * s.KH * s.D;
  const std::size_t nl = std::size_t(s.B) * s.H * s.T;
  const auto q = rounded<S>(tessel::test::rand_vec(nq, 141, -2.0f, 2.0f));
  const auto k = rounded<S>(tessel::test::rand_vec(nkv, 142, -2.0f, 2.0f));
  const auto v = rounded<S>(tessel::test::rand_vec(nkv, 143));
  const auto dout = rounded<S>(tessel::test::rand_vec(nq, 144));
  std::vector<float> ref_out(nq), ref_lse(nl);
  cpu::attention_forward(ref_out.data(), ref_lse.data(), q.data(), k.data(), v.data(), s.B, s.T,
                         s.H, s.KH, s.D);
  const auto dq0 = rounded<S>(tessel::test::rand_vec(nq, 145));
  const auto dk0 = rounded<S>(tessel::test::rand_vec(nkv, 146));
  const auto dv0 = rounded<S>(tessel::test::rand_vec(nkv, 147));
  std::vector<float> ref_dq = dq0, ref_dk = dk0, ref_dv = dv0;
  const auto out_s = rounded<S>(ref_out);  // the backward reads out in storage precision
  cpu::attention_backward(ref_dq.data(), ref_dk.data(), ref_dv.data(), dout.data(), q.data(),
                          k.data(), v.data(), out_s.data(), ref_lse.data(), s.B, s.T, s.H, s.KH,
                          s.D);

  auto dq = side.make(store<S>(q));
  auto dk = side.make(store<S>(k));
  auto dv = side.make(store<S>(v));
  auto dout_d = side.template zeros<S>(nq);
  auto dlse = side.template zeros<float>(nl);
  TESSEL_CUDA_CALL(side, attention_forward, dout_d.get(), dlse.get(), dq.get(), dk.get(), dv.get(),
                   s.B, s.T, s.H, s.KH, s.D);
  side.sync();
  const Tol t = attn_tol<S>();
  EXPECT_TRUE(tessel::test::close(load(dout_d.download()), ref_out, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(dlse.download(), ref_lse, 1e-4, 1e-5));

  // Backward from the reference out and lse, so only the backward is under test.
  auto ddout = side.make(store<S>(dout));
  auto dout_ref = side.make(store<S>(out_s));
  auto dlse_ref = side.make(ref_lse);
  auto ddq = side.make(store<S>(dq0));
  auto ddk = side.make(store<S>(dk0));
  auto ddv = side.make(store<S>(dv0));
  TESSEL_CUDA_CALL(side, attention_backward, ddq.get(), ddk.get(), ddv.get(), ddout.get(),
                   dq.get(), dk.get(), dv.get(), dout_ref.get(), dlse_ref.get(), s.B, s.T, s.H,
                   s.KH, s.D);
  side.sync();
  EXPECT_TRUE(tessel::test::close(load(ddq.download()), ref_dq, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(ddk.download()), ref_dk, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(ddv.download()), ref_dv, t.atol, t.rtol));
}

template <class Side, typename S>
void check_attention() {
  check_attention_shape<Side, S>({2, 77, 4, 2, 32});  // GQA, T not a multiple of 32 or 64
  check_attention_shape<Side, S>({1, 70, 2, 2, 64});  // MHA
  check_attention_shape<Side, S>({1, 40, 2, 1, 128});  // MQA, the largest tiles
  check_attention_shape<Side, S>({1, 1, 2, 1, 32});   // a single token
}

}  // namespace

TESSEL_SIDES_TEST(CudaAttention, ForwardBackward, check_attention)

TEST(CudaAttention, RejectsUnsupportedShapes) {
  EXPECT_FALSE(cuda::attention_supports_head_dim(80));
  EXPECT_TRUE(cuda::attention_supports_head_dim(128));
  EXPECT_THROW(cuda::impl::attention_check(1, 8, 3, 2, 64), RuntimeError);  // H % KH != 0
  EXPECT_THROW(cuda::impl::attention_check(1, 8, 4, 2, 80), RuntimeError);  // head dim
}
