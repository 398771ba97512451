// Tests of kernels/cuda/gemm against kernels/cpu/gemm (OpenBLAS): the row-major gemm with every
// transposition, nn.Linear forward (with/without bias), the GELU epilogue path (OC % 8 == 0) and
// its fallback, and the accumulating backward. cuBLASLt needs a GPU; the bias-gradient reduction
// also runs emulated.
#include <gtest/gtest.h>

#include "kernels/cpu/gelu.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/gemm.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using namespace tessel::cuda::test;

namespace {

// Sums of K products of O(1) values: fp32 differs from OpenBLAS by summation order (~K ulp);
// bf16 inputs are rounded already, so only the bf16 rounding of the output remains (2^-9).
template <typename S>
Tol gemm_tol() {
  if constexpr (std::is_same_v<S, cuda::bf16>)
    return {5e-2, 8e-2};
  else
    return {1e-4, 1e-5};
}

template <typename S>
void check_sgemm_like(cuda::GemmContext& ctx, bool ta, bool tb) {
  SCOPED_TRACE(testing::Message() << "transA " << ta << " transB " << tb);
  GpuSide side;
  const int M = 37, N = 72, K = 129;
  const int lda = ta ? M : K, ldb = tb ? K : N, ldc = N;
  const auto A = rounded<S>(tessel::test::rand_vec(std::size_t(M) * K, 101));
  const auto B = rounded<S>(tessel::test::rand_vec(std::size_t(K) * N, 102));
  const auto C0 = rounded<S>(tessel::test::rand_vec(std::size_t(M) * N, 103));
  std::vector<float> ref = C0;
  cpu::sgemm(ta, tb, M, N, K, 0.5f, A.data(), lda, B.data(), ldb, 0.75f, ref.data(), ldc);
  auto dA = side.make(store<S>(A));
  auto dB = side.make(store<S>(B));
  auto dC = side.make(store<S>(C0));
  cuda::gemm(ctx, ta, tb, M, N, K, 0.5f, dA.get(), lda, dB.get(), ldb, 0.75f, dC.get(), ldc);
  side.sync();
  const Tol t = gemm_tol<S>();
  EXPECT_TRUE(tessel::test::close(load(dC.download()), ref, t.atol, t.rtol));
}

template <typename S>
void check_linear(cuda::GemmContext& ctx, int N, int C, int OC) {
  SCOPED_TRACE(testing::Message() << "N " << N << " C " << C << " OC " << OC);
  GpuSide side;
  const auto x = rounded<S>(tessel::test::rand_vec(std::size_t(N) * C, 111));
  const auto w = rounded<S>(tessel::test::rand_vec(std::size_t(OC) * C, 112, -0.2f, 0.2f));
  const auto b = rounded<S>(tessel::test::rand_vec(OC, 113));
  const auto dout = rounded<S>(tessel::test::rand_vec(std::size_t(N) * OC, 114));
  const auto dx0 = rounded<S>(tessel::test::rand_vec(std::size_t(N) * C, 115));
  const auto dw0 = rounded<S>(tessel::test::rand_vec(std::size_t(OC) * C, 116));
  const auto db0 = rounded<S>(tessel::test::rand_vec(OC, 117));
  const std::size_t no = std::size_t(N) * OC;
  std::vector<float> ref(no), ref_nobias(no), ref_gelu(no);
  cpu::matmul_forward(ref.data(), x.data(), w.data(), b.data(), N, C, OC);
  cpu::matmul_forward(ref_nobias.data(), x.data(), w.data(), nullptr, N, C, OC);
  cpu::gelu_forward(ref_gelu.data(), ref.data(), no);
  std::vector<float> ref_dx = dx0, ref_dw = dw0, ref_db = db0;
  cpu::matmul_backward(ref_dx.data(), ref_dw.data(), ref_db.data(), dout.data(), x.data(),
                       w.data(), N, C, OC);

  auto dx = side.make(store<S>(x));
  auto dw = side.make(store<S>(w));
  auto db = side.make(store<S>(b));
  auto dy = side.template zeros<S>(no);
  auto dy_nobias = side.template zeros<S>(no);
  auto dgelu = side.template zeros<S>(no);
  auto dpre = side.template zeros<S>(no);
  auto dgelu2 = side.template zeros<S>(no);
  cuda::matmul_forward(ctx, dy.get(), dx.get(), dw.get(), db.get(), N, C, OC);
  cuda::matmul_forward<S>(ctx, dy_nobias.get(), dx.get(), dw.get(), nullptr, N, C, OC);
  cuda::matmul_forward_gelu(ctx, dgelu.get(), dpre.get(), dx.get(), dw.get(), db.get(), N, C, OC);
  cuda::matmul_forward_gelu<S>(ctx, dgelu2.get(), nullptr, dx.get(), dw.get(), db.get(), N, C, OC);
  side.sync();
  const Tol t = gemm_tol<S>();
  EXPECT_TRUE(tessel::test::close(load(dy.download()), ref, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(dy_nobias.download()), ref_nobias, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(dpre.download()), ref, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(dgelu.download()), ref_gelu, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(dgelu2.download()), ref_gelu, t.atol, t.rtol));

  auto ddout = side.make(store<S>(dout));
  auto ddx = side.make(store<S>(dx0));
  auto ddw = side.make(store<S>(dw0));
  auto ddb = side.make(store<S>(db0));
  cuda::matmul_backward(ctx, ddx.get(), ddw.get(), ddb.get(), ddout.get(), dx.get(), dw.get(), N,
                        C, OC);
  side.sync();
  EXPECT_TRUE(tessel::test::close(load(ddx.download()), ref_dx, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(ddw.download()), ref_dw, t.atol, t.rtol));
  EXPECT_TRUE(tessel::test::close(load(ddb.download()), ref_db, t.atol, t.rtol));
}

template <typename S>
void check_gemm_gpu() {
  cuda::GemmContext ctx;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) check_sgemm_like<S>(ctx, ta, tb);
  check_linear<S>(ctx, 64, 96, 136);  // OC % 8 == 0: the bf16 GELU epilogue
  check_linear<S>(ctx, 33, 50, 70);   // odd sizes: fallback paths, unaligned rows
  const std::size_t plans = ctx.cached_plans();
  check_linear<S>(ctx, 64, 96, 136);  // same problems again: no new plans
  EXPECT_EQ(ctx.cached_plans(), plans);
}

// dbias alone, through the column reduction, on either side.
template <class Side, typename S>
void check_bias_grad() {
  Side side;
  const int N = 300, OC = 70;
  const auto dout = rounded<S>(tessel::test::rand_vec(std::size_t(N) * OC, 121));
  const auto db0 = rounded<S>(tessel::test::rand_vec(OC, 122));
  std::vector<float> ref = db0;
  cpu::matmul_backward(nullptr, nullptr, ref.data(), dout.data(), nullptr, nullptr, N, 1, OC);
  auto ddout = side.make(store<S>(dout));
  auto ddb = side.make(store<S>(db0));
  if constexpr (Side::emulated) {
    cuda::impl::bias_backward(side.ex, ddb.get(), ddout.get(), N, OC);
  } else {
    cuda::GemmContext ctx;
    cuda::matmul_backward<S>(ctx, nullptr, nullptr, ddb.get(), ddout.get(), nullptr, nullptr, N, 1,
                             OC);
  }
  side.sync();
  const Tol t = tol<S>();
  EXPECT_TRUE(tessel::test::close(load(ddb.download()), ref, t.atol * 10, t.rtol));
}

}  // namespace

TEST(CudaGemm, GpuFp32) {
  TESSEL_REQUIRE_GPU();
  check_gemm_gpu<float>();
}
TEST(CudaGemm, GpuBf16) {
  TESSEL_REQUIRE_GPU();
  check_gemm_gpu<cuda::bf16>();
}
TEST(CudaGemm, GpuTf32IsCloseToFp32) {
  TESSEL_REQUIRE_GPU();
  cuda::GemmContext ctx(/*allow_tf32=*/true);
  GpuSide side;
  const int M = 64, N = 64, K = 256;
  const auto A = tessel::test::rand_vec(std::size_t(M) * K, 131);
  const auto B = tessel::test::rand_vec(std::size_t(K) * N, 132);
  std::vector<float> ref(std::size_t(M) * N, 0.0f);
  cpu::sgemm(false, false, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, ref.data(), N);
  auto dA = side.make(A);
  auto dB = side.make(B);
  auto dC = side.template zeros<float>(ref.size());
  cuda::gemm(ctx, false, false, M, N, K, 1.0f, dA.get(), K, dB.get(), N, 0.0f, dC.get(), N);
  side.sync();
  // TF32 keeps 10 mantissa bits: 2^-11 relative per product.
  EXPECT_TRUE(tessel::test::close(dC.download(), ref, 5e-2, 1e-2));
}

TESSEL_SIDES_TEST(CudaGemm, BiasGrad, check_bias_grad)
