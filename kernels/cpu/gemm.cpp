// gemm: OpenBLAS-backed sgemm and the nn.Linear forward/backward built on it.
//   out(N,OC) = inp(N,C) · weight(OC,C)^T + bias;  dinp(N,C) += dout·weight;
//   dweight(OC,C) += dout^T·inp;  dbias(OC) += sum_n dout(n,:).
#include "kernels/cpu/gemm.h"

#include <cblas.h>

#include <cstddef>
#include <cstring>

// Declared by OpenBLAS's cblas.h; repeated here (same signature) in case another cblas.h is found.
extern "C" void openblas_set_num_threads(int num_threads);

namespace tessel::cpu {

void sgemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc) {
  if (M <= 0 || N <= 0) return;
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N,
                    int C, int OC) {
  float beta = 0.0f;
  if (bias != nullptr) {
    for (int n = 0; n < N; ++n)
      std::memcpy(out + static_cast<std::size_t>(n) * OC, bias, sizeof(float) * OC);
    beta = 1.0f;
  }
  sgemm(false, true, N, OC, C, 1.0f, inp, C, weight, C, beta, out, OC);
}

void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC) {
  if (dinp != nullptr) sgemm(false, false, N, C, OC, 1.0f, dout, OC, weight, C, 1.0f, dinp, C);
  if (dweight != nullptr) sgemm(true, false, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f, dweight, C);
  if (dbias != nullptr) {
    // Row by row: contiguous, vectorizable adds into dbias.
    for (int n = 0; n < N; ++n) {
      const float* d = dout + static_cast<std::size_t>(n) * OC;
      for (int o = 0; o < OC; ++o) dbias[o] += d[o];
    }
  }
}

void set_blas_threads(int n) { openblas_set_num_threads(n < 1 ? 1 : n); }

}  // namespace tessel::cpu
