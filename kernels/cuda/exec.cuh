// exec: DeviceExec, the GPU side of the "executor" that every host launcher is written against
// (template <class Exec> void op_impl(Exec& ex, ...)): launch a body on a grid, borrow scratch
// memory, count SMs, sort (key, value) pairs. tests/kernels_cuda/emulate.h supplies HostExec with
// the same members, so a launcher's grid/split/scratch logic runs unchanged in CPU emulation.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/cuda/check.h"
#include "kernels/cuda/threads.cuh"

namespace tessel::cuda {

#if defined(__CUDACC__)
template <class Body, class... Args>
__global__ void body_kernel(Args... args) {
  extern __shared__ __align__(128) unsigned char tessel_smem[];
  Body::run(DeviceThreads(), tessel_smem, args...);
}
#endif

// Stream-ordered scratch memory (cudaMallocAsync): freed on the same stream when it goes out of
// scope, so a kernel launched before the free still sees it. The memory pool keeps the blocks
// (see set_pool_retention in device.h), so repeated calls cost no cudaMalloc.
template <class U>
class DeviceScratch {
 public:
  DeviceScratch(std::size_t n, cudaStream_t s) : stream_(s) {
    if (n > 0) TESSEL_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&p_), n * sizeof(U), s));
  }
  ~DeviceScratch() {
    if (p_ != nullptr) (void)cudaFreeAsync(p_, stream_);  // a destructor must not throw
  }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  U* get() const { return p_; }

 private:
  U* p_ = nullptr;
  cudaStream_t stream_;
};

struct DeviceExec {
  cudaStream_t stream = nullptr;

  explicit DeviceExec(cudaStream_t s) : stream(s) {}

#if defined(__CUDACC__)
  // Dynamic shared memory above 48 KiB needs an explicit opt-in per kernel (CUDA C++ Programming
  // Guide, "Shared Memory" for compute capability 8.x/9.x).
  template <class Body, class... Args>
  void launch(dim3 grid, int threads, std::size_t smem, Args... args) {
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
    if (smem > 48 * 1024)
      TESSEL_CUDA_CHECK(cudaFuncSetAttribute(body_kernel<Body, Args...>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem)));
    body_kernel<Body, Args...><<<grid, threads, smem, stream>>>(args...);
    TESSEL_CUDA_CHECK_LAUNCH();
  }
#endif

  template <class U>
  DeviceScratch<U> scratch(std::size_t n) {
    return DeviceScratch<U>(n, stream);
  }

  int num_sms() const;
  void zero(void* p, std::size_t bytes) const;

  // Stable sort of n (key, value) pairs by key, keys in [0, 2^end_bit) (cub radix sort).
  void sort_pairs(const int* keys_in, int* keys_out, const int* vals_in, int* vals_out, int n,
                  int end_bit) const;
};

}  // namespace tessel::cuda
