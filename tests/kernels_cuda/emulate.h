// emulate: runs the kernel bodies of kernels/cuda on the CPU, faithfully enough to test their
// thread mapping. HostExec has DeviceExec's members (launch, scratch, num_sms, zero, sort_pairs).
// launch runs each block of the grid with its real number of threads, each thread a fiber
// (ucontext) on one OS thread: a thread runs until it reaches a barrier (ctx.sync(), or the two
// warp-level barriers inside warp_sum/warp_max), and the scheduler releases a warp barrier when all
// 32 lanes of the warp wait at it and the block barrier when every live thread does. Threads are
// resumed in a shuffled order after each barrier, so a missing sync tends to read stale data.
// Warp sums replay the device's xor butterfly, so they round like the GPU. Errors raised: a warp
// collective reached by only part of a warp, threads waiting at different barriers (deadlock),
// more shared memory than an A100 allows per block. Shared memory starts as NaN bytes.
// What this cannot show: WMMA and cp.async (the bf16 bodies run their scalar fallback here), the
// memory model of real concurrent threads, launch limits other than shared memory and block size.
#pragma once

#include <cuda_runtime.h>  // dim3 (host declarations only)
#include <ucontext.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::cuda::test {
namespace detail {

enum class FiberState { runnable, at_block_barrier, at_warp_barrier, done };

class Block {
 public:
  Block(int nthreads, std::function<void(int)> body) : body_(std::move(body)), n_(nthreads) {
    fibers_.resize(n_);
    slots_.resize(n_);
  }

  // Runs the block to completion; throws on divergence or deadlock.
  void run(std::mt19937& rng) {
    for (int t = 0; t < n_; ++t) {
      Fiber& f = fibers_[t];
      f.stack = stack(t);
      getcontext(&f.uc);
      f.uc.uc_stack.ss_sp = f.stack;
      f.uc.uc_stack.ss_size = kStack;
      f.uc.uc_link = &sched_;
      makecontext(&f.uc, &Block::trampoline, 0);
    }
    std::vector<int> order(n_);
    std::iota(order.begin(), order.end(), 0);
    for (;;) {
      std::shuffle(order.begin(), order.end(), rng);
      for (int t : order) {
        if (fibers_[t].state != FiberState::runnable) continue;
        current_ = t;
        tls_block() = this;
        swapcontext(&sched_, &fibers_[t].uc);
      }
      if (std::all_of(fibers_.begin(), fibers_.end(),
                      [](const Fiber& f) { return f.state == FiberState::done; }))
        return;
      if (!release_warps()) release_block();
    }
  }

  // Called from inside a fiber.
  void wait(int tid, FiberState s) {
    fibers_[tid].state = s;
    swapcontext(&fibers_[tid].uc, &sched_);
  }
  float* slots() { return slots_.data(); }

 private:
  static constexpr std::size_t kStack = 256 * 1024;
  struct Fiber {
    ucontext_t uc{};
    char* stack = nullptr;
    FiberState state = FiberState::runnable;
  };

  // Fiber stacks are kept for the life of the process: allocating 1024 of them per block would
  // cost more than running the kernels.
  static char* stack(int t) {
    static thread_local std::vector<std::vector<char>> pool;
    if (pool.size() <= static_cast<std::size_t>(t)) pool.resize(t + 1);
    if (pool[t].empty()) pool[t].resize(kStack);
    return pool[t].data();
  }
  static Block*& tls_block() {
    static thread_local Block* b = nullptr;
    return b;
  }
  static void trampoline() {
    Block* b = tls_block();
    const int t = b->current_;
    b->body_(t);
    b->fibers_[t].state = FiberState::done;  // returning resumes uc_link = the scheduler
  }

  bool release_warps() {
    bool any = false;
    for (int w = 0; w * 32 < n_; ++w) {
      int waiting = 0;
      for (int t = w * 32; t < w * 32 + 32; ++t)
        waiting += fibers_[t].state == FiberState::at_warp_barrier;
      if (waiting == 0) continue;
      if (waiting != 32)
        throw std::runtime_error("emulate: warp " + std::to_string(w) + ": only " +
                                 std::to_string(waiting) +
                                 " of 32 lanes reached a warp collective (divergent warp)");
      for (int t = w * 32; t < w * 32 + 32; ++t) fibers_[t].state = FiberState::runnable;
      any = true;
    }
    return any;
  }
  void release_block() {
    for (auto& f : fibers_)
      if (f.state != FiberState::at_block_barrier && f.state != FiberState::done)
        throw std::runtime_error("emulate: deadlock (threads wait at different barriers)");
    for (auto& f : fibers_)
      if (f.state == FiberState::at_block_barrier) f.state = FiberState::runnable;
  }

  std::function<void(int)> body_;
  int n_;
  int current_ = 0;
  std::vector<Fiber> fibers_;
  std::vector<float> slots_;
  ucontext_t sched_{};
};

}  // namespace detail

// The emulated thread context: DeviceThreads' members with the same meaning.
struct HostThreads {
  static constexpr int warp_size = 32;
  int bx = 0, by = 0, bz = 0;
  int gx = 1, gy = 1, gz = 1;
  int tid = 0, nthreads = 1, lane = 0, warp = 0, nwarps = 1;
  detail::Block* block = nullptr;

  void sync() const { block->wait(tid, detail::FiberState::at_block_barrier); }
  float warp_sum(float x, int width = 32) const { return butterfly(x, width, false); }
  float warp_max(float x, int width = 32) const { return butterfly(x, width, true); }

 private:
  // Replays `for (o = width / 2; o > 0; o >>= 1) x = x op shfl_xor(x, o)` for this lane.
  float butterfly(float x, int width, bool is_max) const {
    if (width < 1 || width > 32 || (width & (width - 1)) != 0)
      throw std::runtime_error("emulate: warp reduction width " + std::to_string(width));
    float* s = block->slots() + warp * 32;
    s[lane] = x;
    block->wait(tid, detail::FiberState::at_warp_barrier);
    float v[32];
    std::memcpy(v, s, sizeof v);
    for (int o = width / 2; o > 0; o >>= 1) {
      float nv[32];
      for (int i = 0; i < 32; ++i) nv[i] = is_max ? std::max(v[i], v[i ^ o]) : v[i] + v[i ^ o];
      std::memcpy(v, nv, sizeof v);
    }
    block->wait(tid, detail::FiberState::at_warp_barrier);  // all lanes read before reuse
    return v[lane];
  }
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
  std::mt19937 rng{12345};

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
    for (unsigned bz = 0; bz < grid.z; ++bz)
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx) {
          std::memset(base, 0xff, smem);  // NaN in float and bf16
          detail::Block* self = nullptr;
          detail::Block block(threads, [&](int t) {
            HostThreads c;
            c.bx = int(bx), c.by = int(by), c.bz = int(bz);
            c.gx = int(grid.x), c.gy = int(grid.y), c.gz = int(grid.z);
            c.tid = t, c.nthreads = threads, c.lane = t % 32, c.warp = t / 32;
            c.nwarps = threads / 32;
            c.block = self;
            Body::run(c, base, args...);
          });
          self = &block;
          block.run(rng);
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
