// tile: block-level building blocks of the attention kernels, on shared-memory tiles.
//   load_tile:  rows x D elements from global memory (row stride in elements) into shared memory,
//               zero-filling rows past the end; cp.async 16-byte copies on the GPU when aligned.
//   tile_mma:   C(M,N) (+)= A(M,K) B(K,N) with fp32 C in shared memory. bf16 on sm_80+ uses the
//               tensor cores through WMMA (16x16x16 bf16 fragments, fp32 accumulate); float, and
//               the CPU emulation, use a scalar loop with the same thread-to-output ownership per
//               16x16 tile. TransA/TransB read A/B transposed: A(r,k) = A[k*lda + r].
// Requirements (WMMA): M, N, K multiples of 16; tile pointers 32-byte aligned; lda/ldb multiples
// of 8 elements (bf16) and ldc of 4 (float) — the padded strides of attention_*.cuh satisfy them.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/cuda/hd.cuh"

#if defined(__CUDACC__)
#include <cuda_pipeline.h>
#include <mma.h>
#endif

namespace tessel::cuda {

template <class Ctx, typename S, int D>
TESSEL_HD void load_tile(const Ctx& ctx, S* dst, int ld_dst, const S* src, std::size_t src_stride,
                         int rows, int valid_rows, bool async16) {
#if defined(__CUDA_ARCH__)
  if (async16) {
    constexpr int kChunk = 16 / static_cast<int>(sizeof(S));  // elements per 16-byte copy
    constexpr int kPerRow = D / kChunk;
    static_assert(D % kChunk == 0, "rows must be whole 16-byte chunks");
    for (int i = ctx.tid; i < rows * kPerRow; i += ctx.nthreads) {
      const int r = i / kPerRow, ch = (i - r * kPerRow) * kChunk;
      S* d = dst + r * ld_dst + ch;
      if (r < valid_rows)
        __pipeline_memcpy_async(d, src + r * src_stride + ch, 16);
      else
        *reinterpret_cast<uint4*>(d) = make_uint4(0, 0, 0, 0);
    }
    __pipeline_commit();
    return;
  }
#endif
  (void)async16;
  for (int i = ctx.tid; i < rows * D; i += ctx.nthreads) {
    const int r = i / D, c = i - r * D;
    dst[r * ld_dst + c] = r < valid_rows ? src[r * src_stride + c] : from_f32<S>(0.0f);
  }
}

// Completes this thread's load_tile copies; the caller then meets the block at ctx.sync().
TESSEL_HD void load_tile_wait() {
#if defined(__CUDA_ARCH__)
  __pipeline_wait_prior(0);
#endif
}

template <bool Trans, typename S>
TESSEL_HD float tile_at(const S* p, int ld, int r, int c) {
  return to_f32(Trans ? p[c * ld + r] : p[r * ld + c]);
}

template <int M, int N, int K, bool TransA, bool TransB, class Ctx, typename S>
TESSEL_HD void tile_mma(const Ctx& ctx, float* C, int ldc, const S* A, int lda, const S* B, int ldb,
                        bool accumulate) {
  static_assert(M % 16 == 0 && N % 16 == 0 && K % 16 == 0, "tile_mma works on 16x16x16 tiles");
  constexpr int kTilesN = N / 16;
  constexpr int kTiles = (M / 16) * kTilesN;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<S, bf16>) {
    namespace wmma = nvcuda::wmma;
    using LayoutA = std::conditional_t<TransA, wmma::col_major, wmma::row_major>;
    using LayoutB = std::conditional_t<TransB, wmma::col_major, wmma::row_major>;
    for (int t = ctx.warp; t < kTiles; t += ctx.nwarps) {
      const int tm = t / kTilesN, tn = t - tm * kTilesN;
      float* c = C + tm * 16 * ldc + tn * 16;
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      if (accumulate)
        wmma::load_matrix_sync(acc, c, ldc, wmma::mem_row_major);
      else
        wmma::fill_fragment(acc, 0.0f);
      for (int kk = 0; kk < K; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, LayoutA> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, LayoutB> b;
        // Element (r, k) of A is at A[r*lda + k], or A[k*lda + r] when TransA (col_major, ldm = lda).
        wmma::load_matrix_sync(a, TransA ? A + kk * lda + tm * 16 : A + tm * 16 * lda + kk, lda);
        wmma::load_matrix_sync(b, TransB ? B + tn * 16 * ldb + kk : B + kk * ldb + tn * 16, ldb);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(c, acc, ldc, wmma::mem_row_major);
    }
  } else
#endif
  {
    // Scalar: the warp owning a 16x16 tile computes it, one output per lane at a time, k in order.
    for (int t = ctx.warp; t < kTiles; t += ctx.nwarps) {
      const int tm = t / kTilesN, tn = t - tm * kTilesN;
      for (int e = ctx.lane; e < 256; e += Ctx::warp_size) {
        const int r = tm * 16 + e / 16, c = tn * 16 + e % 16;
        float s = accumulate ? C[r * ldc + c] : 0.0f;
        for (int k = 0; k < K; ++k)
          s += tile_at<TransA>(A, lda, r, k) * tile_at<TransB>(B, ldb, k, c);
        C[r * ldc + c] = s;
      }
    }
  }
}

}  // namespace tessel::cuda
