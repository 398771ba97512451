// gemm (CUDA): GEMMs through cuBLASLt with fp32 accumulation, mirroring kernels/cpu/gemm.h.
//   matmul_*: a PyTorch nn.Linear layer, out(N,OC) = inp(N,C) · weight(OC,C)^T + bias(OC).
//   gemm:     C(M,N) = alpha · op(A) · op(B) + beta · C, row-major, like cpu::sgemm.
// S = bf16 (tensor cores, fp32 accumulation) or float (exact fp32 by default, for comparison with
// the CPU backend; TF32 tensor cores when GemmContext is built with allow_tf32). Backward
// ACCUMULATES (+=) into dinp, dweight and dbias (caller zeroes); dbias is reduced
// deterministically by our own kernel (cuBLASLt's BGRAD epilogues overwrite instead of adding).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "kernels/cuda/dtype.h"

namespace tessel::cuda {

// Owns a cuBLASLt handle, a workspace, and one cached (descriptors, algorithm) entry per distinct
// problem (shape, types, epilogue, pointer alignments). Not thread-safe; the workspace is shared
// by every call, so use one context per stream that runs GEMMs concurrently.
class GemmContext {
 public:
  // 32 MiB: the workspace cuBLAS recommends for Hopper (cuBLAS docs, cublasSetWorkspace);
  // more than enough for Ampere (4 MiB recommended there).
  static constexpr std::size_t kDefaultWorkspace = 32u << 20;

  explicit GemmContext(bool allow_tf32 = false, std::size_t workspace_bytes = kDefaultWorkspace);
  ~GemmContext();
  GemmContext(const GemmContext&) = delete;
  GemmContext& operator=(const GemmContext&) = delete;

  bool allow_tf32() const;
  std::size_t cached_plans() const;  // distinct problems seen so far

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// C = alpha op(A) op(B) + beta C; lda/ldb/ldc are the row strides as stored.
template <typename S>
void gemm(GemmContext& ctx, bool transA, bool transB, int M, int N, int K, float alpha,
          const S* A, int lda, const S* B, int ldb, float beta, S* C, int ldc,
          cudaStream_t stream = nullptr);

// out = inp · weight^T + bias (bias may be nullptr), bias fused as a cuBLASLt epilogue.
template <typename S>
void matmul_forward(GemmContext& ctx,
                    S* out,           // (N, OC)
                    const S* inp,     // (N, C)
                    const S* weight,  // (OC, C)
                    const S* bias,    // (OC) or nullptr
                    int N, int C, int OC, cudaStream_t stream = nullptr);

// out = gelu(inp · weight^T + bias) (tanh GELU), pre_gelu (if not nullptr) = inp · weight^T + bias,
// the input gelu_backward needs. bf16: one GEMM with cuBLASLt's GELU(_AUX)_BIAS epilogue when
// OC % 8 == 0 (the aux leading-dimension rule); otherwise, and always in fp32 (whose result must
// match the CPU's GELU formula to 1e-5), a GEMM followed by gelu_forward.
template <typename S>
void matmul_forward_gelu(GemmContext& ctx,
                         S* out,           // (N, OC)
                         S* pre_gelu,      // (N, OC) or nullptr
                         const S* inp,     // (N, C)
                         const S* weight,  // (OC, C)
                         const S* bias,    // (OC) or nullptr
                         int N, int C, int OC, cudaStream_t stream = nullptr);

// dinp += dout · weight, dweight += dout^T · inp, dbias += column sums of dout. Any of
// dinp / dweight / dbias may be nullptr to skip it.
template <typename S>
void matmul_backward(GemmContext& ctx,
                     S* dinp,          // (N, C) or nullptr
                     S* dweight,       // (OC, C) or nullptr
                     S* dbias,         // (OC) or nullptr
                     const S* dout,    // (N, OC)
                     const S* inp,     // (N, C)
                     const S* weight,  // (OC, C)
                     int N, int C, int OC, cudaStream_t stream = nullptr);

}  // namespace tessel::cuda
