// threads: the thread context every kernel body is written against, and block-wide reductions.
// A body is `struct X { template <class Ctx, ...> TESSEL_HD static void run(const Ctx&, smem, ...) }`
// that spreads work with loops strided by ctx.nthreads / ctx.nwarps / Ctx::warp_size, meets at
// ctx.sync(), and reduces with ctx.warp_sum/warp_max. So written, one body runs on the GPU
// (DeviceThreads: the real threadIdx/blockIdx, warp size 32) and on the CPU under
// tests/kernels_cuda/emulate.h (one thread per block, warp size 1), which tests its indexing,
// masking and reduction order on machines without a GPU. Block sizes are multiples of 32.
#pragma once

#include "kernels/cuda/hd.cuh"

namespace tessel::cuda {

#if defined(__CUDACC__)
struct DeviceThreads {
  static constexpr int warp_size = 32;
  int bx, by, bz;  // blockIdx
  int gx, gy, gz;  // gridDim
  int tid, nthreads, lane, warp, nwarps;

  __device__ DeviceThreads()
      : bx(blockIdx.x), by(blockIdx.y), bz(blockIdx.z), gx(gridDim.x), gy(gridDim.y),
        gz(gridDim.z), tid(threadIdx.x), nthreads(blockDim.x), lane(threadIdx.x % 32),
        warp(threadIdx.x / 32), nwarps(blockDim.x / 32) {}

  // Host versions exist only so that nvcc's host pass can compile the bodies; never called.
  TESSEL_HD void sync() const {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#endif
  }
  // Butterfly reductions over aligned groups of `width` lanes (a power of two <= 32; 32 = the
  // whole warp): every lane of a group ends with the same, order-fixed result. Call with all 32
  // lanes of the warp converged.
  TESSEL_HD float warp_sum(float x, int width = 32) const {
#if defined(__CUDA_ARCH__)
    for (int o = width / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
#endif
    return x;
  }
  TESSEL_HD float warp_max(float x, int width = 32) const {
#if defined(__CUDA_ARCH__)
    for (int o = width / 2; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
#endif
    return x;
  }
};
#endif

// Sum of x over the block, returned to every thread. scratch: >= nwarps floats of shared memory.
// Every thread adds the per-warp partials in warp order, so the result is deterministic. Contains
// two syncs: call it from every thread of the block.
template <class Ctx>
TESSEL_HD float block_sum(const Ctx& ctx, float x, float* scratch) {
  x = ctx.warp_sum(x);
  ctx.sync();  // an earlier block_sum may still be reading scratch
  if (ctx.lane == 0) scratch[ctx.warp] = x;
  ctx.sync();
  float t = 0.0f;
  for (int w = 0; w < ctx.nwarps; ++w) t += scratch[w];
  return t;
}

template <class Ctx>
TESSEL_HD float block_max(const Ctx& ctx, float x, float* scratch) {
  x = ctx.warp_max(x);
  ctx.sync();
  if (ctx.lane == 0) scratch[ctx.warp] = x;
  ctx.sync();
  float t = scratch[0];
  for (int w = 1; w < ctx.nwarps; ++w) t = fmaxf(t, scratch[w]);
  return t;
}

}  // namespace tessel::cuda
