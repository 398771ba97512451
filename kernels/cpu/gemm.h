// gemm: thin OpenBLAS wrappers. matmul_* is a PyTorch nn.Linear layer:
//   out(N,OC) = inp(N,C) · weight(OC,C)^T + bias(OC).
// Conventions (all kernels in kernels/cpu): fp32, row-major, raw pointers. Backward functions
// ACCUMULATE (+=) into every gradient they write, parameter and activation gradients alike; the
// caller zeroes them. nullptr gradient pointers are skipped where documented.
#pragma once

namespace tessel::cpu {

// C(M,N) = alpha · op(A)(M,K) · op(B)(K,N) + beta · C, row-major, op = transpose when trans*.
// lda/ldb/ldc are the row strides of A, B, C as stored (A is (K,M) when transA).
void sgemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc);

// out = inp · weight^T + bias. bias may be nullptr.
void matmul_forward(float* out,           // (N, OC)
                    const float* inp,     // (N, C)
                    const float* weight,  // (OC, C)
                    const float* bias,    // (OC) or nullptr
                    int N, int C, int OC);

// dinp += dout · weight, dweight += dout^T · inp, dbias += column sums of dout.
// Any of dinp / dweight / dbias may be nullptr to skip it.
void matmul_backward(float* dinp,          // (N, C) or nullptr
                     float* dweight,       // (OC, C) or nullptr
                     float* dbias,         // (OC) or nullptr
                     const float* dout,    // (N, OC)
                     const float* inp,     // (N, C)
                     const float* weight,  // (OC, C)
                     int N, int C, int OC);

// Number of threads OpenBLAS uses from now on (process-wide).
void set_blas_threads(int n);

}  // namespace tessel::cpu
