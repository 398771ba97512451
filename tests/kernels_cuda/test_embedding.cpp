// Tests of kernels/cuda/embedding against kernels/cpu/embedding: forward with and without wpe,
// and the accumulating backward on a vocabulary shard [5, 17) with repeated tokens (several
// positions per row) and tokens outside the shard.
#include <gtest/gtest.h>

#include "kernels/cpu/embedding.h"
#include "kernels/cuda/embedding.cuh"
#include "kernels/cuda/embedding.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

template <class Side, typename S>
void check_embedding() {
  Side side;
  const int B = 3, T = 11, C = 24, V = 20, vs = 5, ve = 17, Vl = ve - vs;
  const std::size_t btc = std::size_t(B) * T * C;
  const auto tokens = tessel::test::rand_ints(std::size_t(B) * T, 91, 0, V);
  const auto wte = rounded<S>(tessel::test::rand_vec(std::size_t(Vl) * C, 92));
  const auto wpe = rounded<S>(tessel::test::rand_vec(std::size_t(T) * C, 93));
  const auto dout = rounded<S>(tessel::test::rand_vec(btc, 94));
  const auto dwte0 = rounded<S>(tessel::test::rand_vec(std::size_t(Vl) * C, 95));
  const auto dwpe0 = rounded<S>(tessel::test::rand_vec(std::size_t(T) * C, 96));
  std::vector<float> ref_out(btc), ref_out_nopos(btc), ref_dwte = dwte0, ref_dwpe = dwpe0;
  cpu::encoder_forward(ref_out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C, vs, ve);
  cpu::encoder_forward(ref_out_nopos.data(), tokens.data(), wte.data(), nullptr, B, T, C, vs, ve);
  cpu::encoder_backward(ref_dwte.data(), ref_dwpe.data(), dout.data(), tokens.data(), B, T, C, vs,
                        ve);

  auto dtok = side.make(tokens);
  auto dwte = side.make(store<S>(wte));
  auto dwpe = side.make(store<S>(wpe));
  auto dy = side.template zeros<S>(btc);
  auto dy2 = side.template zeros<S>(btc);
  const S* none = nullptr;
  TESSEL_CUDA_CALL(side, encoder_forward, dy.get(), dtok.get(), dwte.get(), dwpe.get(), B, T, C,
                   vs, ve);
  TESSEL_CUDA_CALL(side, encoder_forward, dy2.get(), dtok.get(), dwte.get(), none, B, T, C, vs, ve);
  auto ddout = side.make(store<S>(dout));
  auto ddwte = side.make(store<S>(dwte0));
  auto ddwpe = side.make(store<S>(dwpe0));
  TESSEL_CUDA_CALL(side, encoder_backward, ddwte.get(), ddwpe.get(), ddout.get(), dtok.get(), B, T,
                   C, vs, ve);
  side.sync();
  const Tol t = tol<S>();
  EXPECT_TRUE(tessel::test::close(load(dy.download()), ref_out, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(dy2.download()), ref_out_nopos, 0, 0));  // a pure copy
  EXPECT_TRUE(tessel::test::close(load(ddwte.download()), ref_dwte, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(ddwpe.download()), ref_dwpe, t.atol, t.rtol));
}

}  // namespace

TESSEL_SIDES_TEST(CudaEmbedding, ForwardBackward, check_embedding)
