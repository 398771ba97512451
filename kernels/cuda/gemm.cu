// gemm: the cuBLASLt wrapper. Row-major problems become column-major ones by computing the
// transpose (C^T = op(B)^T op(A)^T: swap the operands, keep the transposition flags), so a
// row-major (N, OC) output is cuBLASLt's column-major (OC, N) matrix and a bias over OC is its
// per-row bias. Each distinct problem gets one Plan (descriptors + heuristic's best algorithm),
// built on first use and kept: the heuristic query costs tens of microseconds, the lookup less
// than one. Alignments are part of the key because cuBLASLt picks kernels for the alignment it is
// promised (MIN_ALIGNMENT_* preferences; 256 bytes is assumed when unset).
#include "kernels/cuda/gemm.h"

#include <cublasLt.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>

#include "core/errors.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/exec.cuh"
#include "kernels/cuda/gelu.h"
#include "kernels/cuda/gemm.cuh"

namespace tessel::cuda {
namespace {

struct PlanKey {
  int type, tf32, transa, transb, m, n, k, lda, ldb, ldd, epilogue, aux_ld;
  int align_a, align_b, align_c, align_bias, align_aux;
  bool operator==(const PlanKey& o) const { return std::memcmp(this, &o, sizeof o) == 0; }
};
struct PlanKeyHash {
  std::size_t operator()(const PlanKey& k) const {
    // FNV-1a over the bytes; PlanKey is all ints, so it has no padding bytes.
    const auto* p = reinterpret_cast<const unsigned char*>(&k);
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < sizeof k; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};
static_assert(sizeof(PlanKey) == 17 * sizeof(int), "PlanKey must have no padding (memcmp, hash)");

struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (d != nullptr) cublasLtMatrixLayoutDestroy(d);
    if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
  }
};

// Largest power of two (up to 256) dividing the address; 256 for nullptr.
int alignment(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  int al = 1;
  while (al < 256 && a % (2 * static_cast<std::uintptr_t>(al)) == 0) al *= 2;
  return al;
}

template <typename S>
constexpr cudaDataType_t cuda_type() {
  return dtype_of<S>() == DType::bf16 ? CUDA_R_16BF : CUDA_R_32F;
}

}  // namespace

struct GemmContext::Impl {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  bool tf32 = false;
  std::unordered_map<PlanKey, std::unique_ptr<Plan>, PlanKeyHash> plans;

  // Column-major D(m,n) = alpha op(A) op(B) + beta D with an optional epilogue.
  void matmul(cudaDataType_t type, bool transa, bool transb, int m, int n, int k, float alpha,
              const void* A, int lda, const void* B, int ldb, float beta, void* D, int ldd,
              cublasLtEpilogue_t epilogue, const void* bias, void* aux, int aux_ld,
              cudaStream_t stream) {
    if (m <= 0 || n <= 0) return;
    const PlanKey key{static_cast<int>(type), tf32 ? 1 : 0, transa, transb, m, n, k, lda, ldb,
                      ldd, static_cast<int>(epilogue), aux_ld, alignment(A), alignment(B),
                      alignment(D), alignment(bias), alignment(aux)};
    auto it = plans.find(key);
    if (it == plans.end()) it = plans.emplace(key, make_plan(key, type, bias, aux)).first;
    Plan& p = *it->second;
    if (bias != nullptr)
      TESSEL_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    if (aux != nullptr)
      TESSEL_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux));
    TESSEL_CUBLAS_CHECK(cublasLtMatmul(handle, p.desc, &alpha, A, p.a, B, p.b, &beta, D, p.d, D,
                                       p.d, &p.algo, workspace, workspace_bytes, stream));
  }

  std::unique_ptr<Plan> make_plan(const PlanKey& key, cudaDataType_t type, const void* bias,
                                  void* aux) {
    auto p = std::make_unique<Plan>();
    const cublasComputeType_t compute =
        (type == CUDA_R_32F && tf32) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    TESSEL_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->desc, compute, CUDA_R_32F));
    const std::int32_t ta = key.transa ? CUBLAS_OP_T : CUBLAS_OP_N;
    const std::int32_t tb = key.transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    TESSEL_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    TESSEL_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    const std::uint32_t epi = static_cast<std::uint32_t>(key.epilogue);
    TESSEL_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    // The heuristic reads the pointers' values to learn their alignment.
    if (bias != nullptr)
      TESSEL_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    if (aux != nullptr) {
      TESSEL_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux));
      const std::int64_t aux_ld = key.aux_ld;
      TESSEL_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof aux_ld));
    }
    // Column-major layouts: A is (m,k) after op, so stored (k,m) when transposed; likewise B.
    TESSEL_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->a, type, key.transa ? key.k : key.m,
                                                   key.transa ? key.m : key.k, key.lda));
    TESSEL_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->b, type, key.transb ? key.n : key.k,
                                                   key.transb ? key.k : key.n, key.ldb));
    TESSEL_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->d, type, key.m, key.n, key.ldd));

    cublasLtMatmulPreference_t pref = nullptr;
    TESSEL_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const std::uint64_t ws = workspace_bytes;
    const std::uint32_t al_a = key.align_a, al_b = key.align_b, al_c = key.align_c;
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t st = [&] {
      cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(
          pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
      if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                 &al_a, sizeof al_a);
      if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                 &al_b, sizeof al_b);
      if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                 &al_c, sizeof al_c);
      if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                 &al_c, sizeof al_c);
      if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulAlgoGetHeuristic(handle, p->desc, p->a, p->b, p->d, p->d, pref, 1,
                                           &result, &found);
      return s;
    }();
    cublasLtMatmulPreferenceDestroy(pref);
    TESSEL_CUBLAS_CHECK(st);
    if (found == 0)
      throw RuntimeError("cuBLASLt has no algorithm for " + describe(key));
    p->algo = result.algo;
    return p;
  }

  static std::string describe(const PlanKey& k) {
    return std::string(k.type == CUDA_R_16BF ? "bf16" : "fp32") + " m=" + std::to_string(k.m) +
           " n=" + std::to_string(k.n) + " k=" + std::to_string(k.k) +
           " transa=" + std::to_string(k.transa) + " transb=" + std::to_string(k.transb) +
           " ld=" + std::to_string(k.lda) + "/" + std::to_string(k.ldb) + "/" +
           std::to_string(k.ldd) + " epilogue=" + std::to_string(k.epilogue) +
           " align=" + std::to_string(k.align_a) + "/" + std::to_string(k.align_b) + "/" +
           std::to_string(k.align_c);
  }
};

GemmContext::GemmContext(bool allow_tf32, std::size_t workspace_bytes)
    : impl_(std::make_unique<Impl>()) {
  impl_->tf32 = allow_tf32;
  impl_->workspace_bytes = workspace_bytes;
  TESSEL_CUBLAS_CHECK(cublasLtCreate(&impl_->handle));
  if (workspace_bytes > 0) TESSEL_CUDA_CHECK(cudaMalloc(&impl_->workspace, workspace_bytes));
}

GemmContext::~GemmContext() {
  impl_->plans.clear();
  if (impl_->workspace != nullptr) (void)cudaFree(impl_->workspace);
  if (impl_->handle != nullptr) (void)cublasLtDestroy(impl_->handle);
}

bool GemmContext::allow_tf32() const { return impl_->tf32; }
std::size_t GemmContext::cached_plans() const { return impl_->plans.size(); }

template <typename S>
void gemm(GemmContext& ctx, bool transA, bool transB, int M, int N, int K, float alpha,
          const S* A, int lda, const S* B, int ldb, float beta, S* C, int ldc,
          cudaStream_t stream) {
  // Row-major C(M,N) is column-major C^T(N,M) = op(B)^T op(A)^T: B's buffer is the first operand.
  ctx.impl().matmul(cuda_type<S>(), transB, transA, N, M, K, alpha, B, ldb, A, lda, beta, C, ldc,
                    CUBLASLT_EPILOGUE_DEFAULT, nullptr, nullptr, 0, stream);
}

template <typename S>
void matmul_forward(GemmContext& ctx, S* out, const S* inp, const S* weight, const S* bias, int N,
                    int C, int OC, cudaStream_t stream) {
  // Column-major out^T(OC,N) = weight(stored (C,OC) column-major, transposed) · inp^T(C,N).
  ctx.impl().matmul(cuda_type<S>(), true, false, OC, N, C, 1.0f, weight, C, inp, C, 0.0f, out, OC,
                    bias != nullptr ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT, bias,
                    nullptr, 0, stream);
}

template <typename S>
void matmul_forward_gelu(GemmContext& ctx, S* out, S* pre_gelu, const S* inp, const S* weight,
                         const S* bias, int N, int C, int OC, cudaStream_t stream) {
  if (dtype_of<S>() == DType::bf16 && OC % 8 == 0) {
    cublasLtEpilogue_t epi;
    if (pre_gelu != nullptr)
      epi = bias != nullptr ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
    else
      epi = bias != nullptr ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    ctx.impl().matmul(cuda_type<S>(), true, false, OC, N, C, 1.0f, weight, C, inp, C, 0.0f, out,
                      OC, epi, bias, pre_gelu, pre_gelu != nullptr ? OC : 0, stream);
    return;
  }
  S* pre = pre_gelu != nullptr ? pre_gelu : out;
  matmul_forward(ctx, pre, inp, weight, bias, N, C, OC, stream);
  gelu_forward(out, pre, static_cast<std::size_t>(N) * OC, stream);
}

template <typename S>
void matmul_backward(GemmContext& ctx, S* dinp, S* dweight, S* dbias, const S* dout, const S* inp,
                     const S* weight, int N, int C, int OC, cudaStream_t stream) {
  if (dinp != nullptr)  // dinp(N,C) += dout(N,OC) · weight(OC,C)
    gemm(ctx, false, false, N, C, OC, 1.0f, dout, OC, weight, C, 1.0f, dinp, C, stream);
  if (dweight != nullptr)  // dweight(OC,C) += dout^T(OC,N) · inp(N,C)
    gemm(ctx, true, false, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f, dweight, C, stream);
  if (dbias != nullptr) {
    DeviceExec ex(stream);
    impl::bias_backward(ex, dbias, dout, N, OC);
  }
}

#define TESSEL_INSTANTIATE(S)                                                                    \
  template void gemm<S>(GemmContext&, bool, bool, int, int, int, float, const S*, int, const S*, \
                        int, float, S*, int, cudaStream_t);                                      \
  template void matmul_forward<S>(GemmContext&, S*, const S*, const S*, const S*, int, int, int, \
                                  cudaStream_t);                                                 \
  template void matmul_forward_gelu<S>(GemmContext&, S*, S*, const S*, const S*, const S*, int,  \
                                       int, int, cudaStream_t);                                  \
  template void matmul_backward<S>(GemmContext&, S*, S*, S*, const S*, const S*, const S*, int,  \
                                   int, int, cudaStream_t);
TESSEL_INSTANTIATE(float)
TESSEL_INSTANTIATE(bf16)
#undef TESSEL_INSTANTIATE

}  // namespace tessel::cuda
