// emulate: runs the kernel bodies of kernels/cuda on the CPU. HostExec has DeviceExec's members
// (launch, scratch, num_sms, zero, sort_pairs); launch runs every block of the grid in turn with a
// single thread (HostThreads: tid 0 of 1, warp size 1), which executes all of a body's strided
// loops. Shared memory is filled with NaN bytes first so reads of unwritten tiles show up, and a
// launch asking for more than sm_80's per-block limit fails, as it would on an A100.
// What this cannot show: races between real threads, WMMA fragment code (the bf16 bodies run
// their scalar fallback here), cp.async, and launch limits other than shared memory.
#pragma once

#include <cuda_runtime.h>  // dim3, cudaStream_t (host declarations only)

#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::cuda::test {

struct HostThreads {
  static constexpr int warp_size = 1;
  int bx = 0, by = 0, bz = 0;
  int gx = 1, gy = 1, gz = 1;
  int tid = 0, nthreads = 1, lane = 0, warp = 0, nwarps = 1;
  void sync() const {}
  float warp_sum(float x) const { return x; }
  float warp_max(float x) const { return x; }
};

template <class U>
class HostScratch {
 public:
  explicit HostScratch(std::size_t n) : v_(n) {}
  U* get() { return v_.data(); }

 private:
  std::vector<U> v_;
};

struct HostExec {
  // The launchers size grids from the SM count; vary it to exercise their splitting logic.
  int sms = 3;
  // Largest dynamic shared memory per block on sm_80 (A100): 163 KB = 166,912 bytes (CUDA C++
  // Programming Guide, "Technical Specifications per Compute Capability").
  static constexpr std::size_t kMaxSmem = 166912;
  std::size_t launches = 0;
  std::size_t max_smem_seen = 0;

  template <class Body, class... Args>
  void launch(dim3 grid, int threads, std::size_t smem, Args... args) {
    if (threads <= 0 || threads > 1024 || threads % 32 != 0)
      throw std::runtime_error("emulate: block of " + std::to_string(threads) + " threads");
    if (smem > kMaxSmem)
      throw std::runtime_error("emulate: " + std::to_string(smem) + " bytes of shared memory");
    if (grid.y > 65535 || grid.z > 65535) throw std::runtime_error("emulate: grid.y/z > 65535");
    ++launches;
    max_smem_seen = std::max(max_smem_seen, smem);
    std::vector<unsigned char> buf(smem + 128);
    auto* base = reinterpret_cast<unsigned char*>(
        (reinterpret_cast<std::uintptr_t>(buf.data()) + 127) & ~std::uintptr_t{127});
    HostThreads t;
    t.gx = static_cast<int>(grid.x), t.gy = static_cast<int>(grid.y),
    t.gz = static_cast<int>(grid.z);
    for (t.bz = 0; t.bz < t.gz; ++t.bz)
      for (t.by = 0; t.by < t.gy; ++t.by)
        for (t.bx = 0; t.bx < t.gx; ++t.bx) {
          std::memset(base, 0xff, smem);  // NaN in float and bf16
          Body::run(t, base, args...);
        }
  }

  template <class U>
  HostScratch<U> scratch(std::size_t n) {
    return HostScratch<U>(n);
  }
  int num_sms() const { return sms; }
  void zero(void* p, std::size_t bytes) const { std::memset(p, 0, bytes); }
  void sort_pairs(const int* keys_in, int* keys_out, const int* vals_in, int* vals_out, int n,
                  int /*end_bit*/) const {
    std::vector<int> idx(static_cast<std::size_t>(n));
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return keys_in[a] < keys_in[b]; });
    for (int i = 0; i < n; ++i) keys_out[i] = keys_in[idx[i]], vals_out[i] = vals_in[idx[i]];
  }
};

}  // namespace tessel::cuda::test
