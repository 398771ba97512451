// Tests of kernels/cuda/cuda_backend: every Backend op on the GPU against the CPU backend on the
// same inputs (both fp32: the GPU GEMMs are exact fp32, so differences are summation order), the
// memory ops, and a clean RuntimeError when there is no GPU. Also a one-rank NCCL communicator.
#include <gtest/gtest.h>
#include <chrono>
#include <cstdio>

#include <memory>
#include <vector>

#include "core/errors.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "executor/nccl_communicator.h"
#include "executor/timed_backend.h"
#include "executor/timed_communicator.h"
#include "tests/kernels_cuda/harness.h"

using namespace tessel;
using tessel::test::rand_ints;
using tessel::test::rand_vec;

namespace {

// The same buffers on the CPU backend and on the CUDA backend.
class Twin {
 public:
  Twin() : cpu_(make_cpu_backend(1)), gpu_(make_cuda_backend()) {}
  ~Twin() {
    for (auto& [p, bytes] : cpu_owned_) cpu_->release(p, bytes);
    for (auto& [p, bytes] : gpu_owned_) gpu_->release(p, bytes);
  }
  template <typename T>
  struct Buf {
    T* c;
    T* g;
    std::size_t n;
    T* at(bool gpu) const { return gpu ? g : c; }
  };
  template <typename T>
  Buf<T> make(const std::vector<T>& h) {
    Buf<T> b{alloc<T>(*cpu_, cpu_owned_, h.size()), alloc<T>(*gpu_, gpu_owned_, h.size()),
             h.size()};
    cpu_->upload(b.c, h.data(), h.size() * sizeof(T));
    gpu_->upload(b.g, h.data(), h.size() * sizeof(T));
    return b;
  }
  Buf<float> zeros(std::size_t n) { return make(std::vector<float>(n, 0.0f)); }
  // Runs f(backend, is_gpu) on both backends.
  template <class F>
  void run(F&& f) {
    f(*cpu_, false);
    f(*gpu_, true);
    gpu_->synchronize();
  }
  // Both copies of b agree within atol + rtol |cpu|.
  ::testing::AssertionResult same(const Buf<float>& b, double atol = 1e-5, double rtol = 1e-5) {
    std::vector<float> c(b.n), g(b.n);
    cpu_->download(c.data(), b.c, b.n * sizeof(float));
    gpu_->download(g.data(), b.g, b.n * sizeof(float));
    return tessel::test::close(g, c, atol, rtol);
  }
  Backend& gpu() { return *gpu_; }

 private:
  template <typename T>
  static T* alloc(Backend& be, std::vector<std::pair<void*, std::size_t>>& owned, std::size_t n) {
    void* p = be.allocate(n * sizeof(T));
    owned.emplace_back(p, n * sizeof(T));
    return static_cast<T*>(p);
  }
  std::unique_ptr<Backend> cpu_, gpu_;
  std::vector<std::pair<void*, std::size_t>> cpu_owned_, gpu_owned_;
};

}  // namespace

TEST(CudaBackend, ThrowsWithoutGpu) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_THROW(make_cuda_backend(), RuntimeError);
}

TEST(CudaBackend, GpuMemoryOps) {
  TESSEL_REQUIRE_GPU();
  Twin t;
  auto a = t.make(rand_vec(1000, 1));
  auto b = t.zeros(1000);
  t.run([&](Backend& be, bool g) { be.copy(b.at(g), a.at(g), 1000 * sizeof(float)); });
  EXPECT_TRUE(t.same(b, 0, 0));
  t.run([&](Backend& be, bool g) { be.fill_zero(a.at(g), 500 * sizeof(float)); });
  EXPECT_TRUE(t.same(a, 0, 0));
  EXPECT_EQ(t.gpu().allocate(0), nullptr);
  t.gpu().release(nullptr, 0);
  EXPECT_STREQ(t.gpu().name(), "cuda");
  EXPECT_FALSE(t.gpu().device_name().empty());
}

TEST(CudaBackend, GpuLinearEmbeddingNorms) {
  TESSEL_REQUIRE_GPU();
  Twin t;
  const int N = 48, C = 64, OC = 80, B = 2, T = 24, V = 50;
  auto x = t.make(rand_vec(std::size_t(N) * C, 2));
  auto w = t.make(rand_vec(std::size_t(OC) * C, 3));
  auto bias = t.make(rand_vec(OC, 4));
  auto y = t.zeros(std::size_t(N) * OC);
  auto dy = t.make(rand_vec(std::size_t(N) * OC, 5));
  auto dx = t.zeros(std::size_t(N) * C), dw = t.zeros(std::size_t(OC) * C), db = t.zeros(OC);
  t.run([&](Backend& be, bool g) {
    be.matmul_forward(y.at(g), x.at(g), w.at(g), bias.at(g), N, C, OC);
    be.matmul_backward(dx.at(g), dw.at(g), db.at(g), dy.at(g), x.at(g), w.at(g), N, C, OC);
  });
  EXPECT_TRUE(t.same(y, 1e-4));
  EXPECT_TRUE(t.same(dx, 1e-4));
  EXPECT_TRUE(t.same(dw, 1e-4));
  EXPECT_TRUE(t.same(db, 1e-4));

  auto tok = t.make(rand_ints(std::size_t(B) * T, 6, 0, V));
  auto wte = t.make(rand_vec(std::size_t(V) * C, 7));
  auto wpe = t.make(rand_vec(std::size_t(T) * C, 8));
  auto e = t.zeros(std::size_t(B) * T * C);
  auto de = t.make(rand_vec(std::size_t(B) * T * C, 9));
  auto dwte = t.zeros(std::size_t(V) * C), dwpe = t.zeros(std::size_t(T) * C);
  t.run([&](Backend& be, bool g) {
    be.embedding_forward(e.at(g), tok.at(g), wte.at(g), wpe.at(g), B, T, C, 0, V);
    be.embedding_backward(dwte.at(g), dwpe.at(g), de.at(g), tok.at(g), B, T, C, 0, V);
  });
  EXPECT_TRUE(t.same(e));
  EXPECT_TRUE(t.same(dwte));
  EXPECT_TRUE(t.same(dwpe));

  auto ln_w = t.make(rand_vec(C, 10, 0.5f, 1.5f)), ln_b = t.make(rand_vec(C, 11));
  auto out = t.zeros(std::size_t(N) * C), mean = t.zeros(N), rstd = t.zeros(N);
  auto dout = t.make(rand_vec(std::size_t(N) * C, 12));
  auto din = t.zeros(std::size_t(N) * C), dlw = t.zeros(C), dlb = t.zeros(C);
  // An epsilon near the rows' mean square, so a backend that dropped the model's value would differ.
  const float eps = 0.25f;
  t.run([&](Backend& be, bool g) {
    be.layernorm_forward(out.at(g), mean.at(g), rstd.at(g), x.at(g), ln_w.at(g), ln_b.at(g), N, C, eps);
    be.layernorm_backward(din.at(g), dlw.at(g), dlb.at(g), dout.at(g), x.at(g), ln_w.at(g),
                          mean.at(g), rstd.at(g), N, C);
  });
  EXPECT_TRUE(t.same(out));
  EXPECT_TRUE(t.same(din));
  EXPECT_TRUE(t.same(dlw, 1e-4));
  EXPECT_TRUE(t.same(dlb, 1e-4));
  auto rout = t.zeros(std::size_t(N) * C), rr = t.zeros(N);
  auto rdin = t.zeros(std::size_t(N) * C), rdw = t.zeros(C);
  t.run([&](Backend& be, bool g) {
    be.rmsnorm_forward(rout.at(g), rr.at(g), x.at(g), ln_w.at(g), N, C, eps);
    be.rmsnorm_backward(rdin.at(g), rdw.at(g), dout.at(g), x.at(g), ln_w.at(g), rr.at(g), N, C);
  });
  EXPECT_TRUE(t.same(rout));
  EXPECT_TRUE(t.same(rdin));
  EXPECT_TRUE(t.same(rdw, 1e-4));
}

TEST(CudaBackend, GpuAttentionRopeActivations) {
  TESSEL_REQUIRE_GPU();
  Twin t;
  const int B = 2, T = 40, H = 4, KH = 2, D = 32;
  const std::size_t nq = std::size_t(B) * T * H * D, nkv = std::size_t(B) * T * KH * D;
  auto q = t.make(rand_vec(nq, 20)), k = t.make(rand_vec(nkv, 21)), v = t.make(rand_vec(nkv, 22));
  t.run([&](Backend& be, bool g) {
    be.rope_forward_inplace(q.at(g), B, T, H, D, RopeFrequencies{10000.0}, 3);
    be.rope_forward_inplace(k.at(g), B, T, KH, D, RopeFrequencies{10000.0}, 3);
  });
  EXPECT_TRUE(t.same(q));
  auto out = t.zeros(nq), lse = t.zeros(std::size_t(B) * H * T);
  auto dout = t.make(rand_vec(nq, 23));
  auto dq = t.zeros(nq), dk = t.zeros(nkv), dv = t.zeros(nkv);
  t.run([&](Backend& be, bool g) {
    be.attention_forward(out.at(g), lse.at(g), q.at(g), k.at(g), v.at(g), B, T, H, KH, D);
    be.attention_backward(dq.at(g), dk.at(g), dv.at(g), dout.at(g), q.at(g), k.at(g), v.at(g),
                          out.at(g), lse.at(g), B, T, H, KH, D);
    be.rope_backward_inplace(dq.at(g), B, T, H, D, RopeFrequencies{10000.0}, 3);
  });
  EXPECT_TRUE(t.same(out, 2e-5, 1e-4));
  EXPECT_TRUE(t.same(lse, 1e-4));
  EXPECT_TRUE(t.same(dq, 2e-5, 1e-4));
  EXPECT_TRUE(t.same(dk, 2e-5, 1e-4));
  EXPECT_TRUE(t.same(dv, 2e-5, 1e-4));

  const int N = 30, F = 20;
  auto a = t.make(rand_vec(std::size_t(N) * 2 * F, 24, -3.0f, 3.0f));
  auto s = t.zeros(std::size_t(N) * F), ds = t.make(rand_vec(std::size_t(N) * F, 25));
  auto da = t.zeros(std::size_t(N) * 2 * F);
  auto ge = t.zeros(std::size_t(N) * 2 * F), dge = t.zeros(std::size_t(N) * 2 * F);
  t.run([&](Backend& be, bool g) {
    be.swiglu_forward(s.at(g), a.at(g), N, F);
    be.swiglu_backward(da.at(g), a.at(g), ds.at(g), N, F);
    be.gelu_forward(ge.at(g), a.at(g), a.n);
    be.gelu_backward(dge.at(g), a.at(g), a.at(g), a.n);
  });
  EXPECT_TRUE(t.same(s));
  EXPECT_TRUE(t.same(da));
  EXPECT_TRUE(t.same(ge));
  EXPECT_TRUE(t.same(dge));
}

TEST(CudaBackend, GpuCrossEntropyElementwiseAdamW) {
  TESSEL_REQUIRE_GPU();
  Twin t;
  const int N = 6, V = 700, vs = 100, ve = 400, Vl = ve - vs;
  auto logits = t.make(rand_vec(std::size_t(N) * Vl, 30, -4.0f, 4.0f));
  auto tg = rand_ints(N, 31, 0, V);
  tg[1] = -1;
  tg[2] = 150;
  auto targets = t.make(tg);
  auto gmax = t.zeros(N), sum = t.zeros(N), tl = t.zeros(N), loss = t.zeros(N);
  auto dloss = t.make(std::vector<float>(N, 0.25f));
  auto dl = t.zeros(std::size_t(N) * Vl);
  t.run([&](Backend& be, bool g) {
    be.vocab_parallel_max(logits.at(g), N, Vl, gmax.at(g));
    be.vocab_parallel_sum_exp(logits.at(g), gmax.at(g), N, Vl, sum.at(g), tl.at(g), targets.at(g),
                              vs, ve);
    be.vocab_parallel_loss(gmax.at(g), sum.at(g), tl.at(g), N, loss.at(g), targets.at(g));
    be.vocab_parallel_backward(dl.at(g), logits.at(g), gmax.at(g), sum.at(g), targets.at(g),
                               dloss.at(g), N, Vl, vs, ve);
  });
  EXPECT_TRUE(t.same(gmax, 0, 0));
  EXPECT_TRUE(t.same(sum));
  EXPECT_TRUE(t.same(tl, 0, 0));
  EXPECT_TRUE(t.same(loss));
  EXPECT_TRUE(t.same(dl, 1e-7));

  const std::size_t n = 777;
  auto p = t.make(rand_vec(n, 32)), gr = t.make(rand_vec(n, 33));
  auto m = t.zeros(n), v2 = t.zeros(n), sumv = t.zeros(n), acc = t.make(rand_vec(n, 34));
  auto filled = t.zeros(n);
  t.run([&](Backend& be, bool g) {
    be.add(sumv.at(g), p.at(g), gr.at(g), n);
    be.add_inplace(acc.at(g), gr.at(g), n);
    be.fill(filled.at(g), -2.5f, n);
    for (int step = 1; step <= 2; ++step)
      be.adamw_update(p.at(g), gr.at(g), m.at(g), v2.at(g), n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f,
                      step);
  });
  EXPECT_TRUE(t.same(sumv));
  EXPECT_TRUE(t.same(acc));
  EXPECT_TRUE(t.same(filled, 0, 0));
  EXPECT_TRUE(t.same(p, 1e-6));
  EXPECT_TRUE(t.same(m, 1e-7));
  EXPECT_TRUE(t.same(v2, 1e-9));
}

// One rank: collectives are identities/copies, split gives a one-rank group.
TEST(NcclCommunicator, GpuOneRank) {
  TESSEL_REQUIRE_GPU();
  auto be = make_cuda_backend();
  auto comm = make_nccl_communicator(nccl_unique_id(), 1, 0, *be);
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  const std::vector<float> h = rand_vec(64, 40);
  float* d = static_cast<float*>(be->allocate(64 * sizeof(float)));
  float* full = static_cast<float*>(be->allocate(64 * sizeof(float)));
  be->upload(d, h.data(), 64 * sizeof(float));
  comm->all_reduce(d, 64, ReduceOp::sum);
  comm->all_gather(d, full, 64);
  std::vector<float> back(64);
  be->download(back.data(), full, 64 * sizeof(float));
  EXPECT_EQ(back, h);
  double x[2] = {1.5, -2.0};
  comm->all_reduce_host(x, 2, ReduceOp::max);
  EXPECT_EQ(x[0], 1.5);
  comm->barrier();
  auto sub = comm->split({{0}});
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->size(), 1);
  EXPECT_EQ(comm->split({}), nullptr);
  sub.reset();
  comm.reset();
  be->release(d, 64 * sizeof(float));
  be->release(full, 64 * sizeof(float));
}

// The runtime's memory is what the device holds outside the backend's allocator: a plain
// cudaMalloc counts in full, an allocation through the backend does not.
TEST(CudaBackend, GpuRuntimeMemoryLeavesOutTheAllocator) {
  TESSEL_REQUIRE_GPU();
  auto be = make_cuda_backend();
  const std::size_t mib = std::size_t(1) << 20;
  be->synchronize();
  const std::size_t before = be->runtime_memory_bytes();
  void* pooled = be->allocate(256 * mib);
  be->synchronize();
  const std::size_t with_pooled = be->runtime_memory_bytes();
  EXPECT_LT(with_pooled > before ? with_pooled - before : before - with_pooled, 2 * mib);
  void* outside = nullptr;
  ASSERT_EQ(cudaMalloc(&outside, 256 * mib), cudaSuccess);
  EXPECT_GE(be->runtime_memory_bytes(), with_pooled + 256 * mib);
  ASSERT_EQ(cudaFree(outside), cudaSuccess);
  be->release(pooled, 256 * mib);
}

// A one-rank group (TP 1, PP 1, ... in tessel run) gets no NCCL communicator of its own: it
// holds no device memory, where a real NCCL communicator of the same rank does, and its gather
// and scatter still copy.
TEST(NcclCommunicator, GpuLoneGroupsHoldNoDeviceMemory) {
  TESSEL_REQUIRE_GPU();
  auto be = make_cuda_backend();
  const std::size_t mib = std::size_t(1) << 20;

  auto world = make_nccl_communicator(nccl_unique_id(), 1, 0, *be);
  be->synchronize();
  const std::size_t before = be->runtime_memory_bytes();
  std::vector<std::unique_ptr<Communicator>> lone;
  for (int i = 0; i < 6; ++i) lone.push_back(world->split({{0}}));
  be->synchronize();
  const std::size_t lone_bytes = be->runtime_memory_bytes() - before;
  EXPECT_LT(lone_bytes, 2 * mib);
  auto real = make_nccl_communicator(nccl_unique_id(), 1, 0, *be);
  const std::vector<float> h = rand_vec(64, 42);
  float* a = static_cast<float*>(be->allocate(64 * sizeof(float)));
  float* b = static_cast<float*>(be->allocate(64 * sizeof(float)));
  be->upload(a, h.data(), 64 * sizeof(float));
  real->all_reduce(a, 64, ReduceOp::sum);  // NCCL sets up its buffers on first use
  be->synchronize();
  const std::size_t real_bytes = be->runtime_memory_bytes() - before;
  std::printf("one-rank NCCL communicator in use: %.1f MiB; six lone groups: %.1f MiB\n",
              double(real_bytes) / double(mib), double(lone_bytes) / double(mib));
  EXPECT_GE(real_bytes, lone_bytes);

  for (auto& g : lone) {
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->rank(), 0);
    EXPECT_EQ(g->size(), 1);
  }
  std::vector<float> back(64);
  be->fill_zero(b, 64 * sizeof(float));
  lone[0]->all_gather(a, b, 64);
  be->download(back.data(), b, 64 * sizeof(float));
  EXPECT_EQ(back, h);
  be->fill_zero(b, 64 * sizeof(float));
  lone[1]->reduce_scatter(a, b, 64);
  be->download(back.data(), b, 64 * sizeof(float));
  EXPECT_EQ(back, h);
  lone[2]->all_reduce(a, 64, ReduceOp::sum);
  be->download(back.data(), a, 64 * sizeof(float));
  EXPECT_EQ(back, h);
  auto again = lone[3]->split({{0}});
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->size(), 1);
  EXPECT_EQ(lone[4]->split({}), nullptr);
  lone.clear();
  again.reset();
  real.reset();
  world.reset();
  be->release(a, 64 * sizeof(float));
  be->release(b, 64 * sizeof(float));
}

// tessel run's per-group timer over NCCL, which only queues its transfers: kernels queued before a
// collective are not billed to it, and the collective's own device time is. The references are a
// plain device copy of the same bytes (what a one-rank all-gather moves) and the host time of the
// call, queued kernels included.
TEST(NcclCommunicator, GpuTimerBillsTheTransferNotTheQueuedKernels) {
  TESSEL_REQUIRE_GPU();
  auto be = make_cuda_backend();
  cudaStream_t stream = cuda_backend_stream(*be);
  const std::size_t n = std::size_t(1) << 28;  // 1 GiB of floats
  float* a = static_cast<float*>(be->allocate(n * sizeof(float)));
  float* b = static_cast<float*>(be->allocate(n * sizeof(float)));
  be->fill_zero(a, n * sizeof(float));
  cudaEvent_t e0, e1;
  ASSERT_EQ(cudaEventCreate(&e0), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&e1), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e0, stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(b, a, n * sizeof(float), cudaMemcpyDeviceToDevice, stream), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e1, stream), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(e1), cudaSuccess);
  float copy_ms = 0;
  ASSERT_EQ(cudaEventElapsedTime(&copy_ms, e0, e1), cudaSuccess);

  double seconds = 0;
  auto timed = make_timed_communicator(make_nccl_communicator(nccl_unique_id(), 1, 0, *be), &seconds, be.get());
  timed->all_gather(a, b, n);  // NCCL's set-up, outside the measurement
  seconds = 0;
  const int m = 2048;  // queued GEMMs: 40 of 2048^3 take far longer than the copy
  float* x = static_cast<float*>(be->allocate(std::size_t(m) * m * sizeof(float)));
  float* y = static_cast<float*>(be->allocate(std::size_t(m) * m * sizeof(float)));
  be->fill_zero(x, std::size_t(m) * m * sizeof(float));
  be->synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) be->matmul_forward(y, x, x, nullptr, m, m, m);
  timed->all_gather(a, b, n);
  const double call_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("copy %.3f ms; timed all-gather %.3f ms of %.3f ms with the queued GEMMs\n", copy_ms,
              1e3 * seconds, 1e3 * call_s);
  EXPECT_GE(seconds, 0.5e-3 * copy_ms);
  EXPECT_LT(seconds, 0.5 * call_s);
  timed.reset();
  for (float* p : {x, y}) be->release(p, std::size_t(m) * m * sizeof(float));
  be->release(a, n * sizeof(float));
  be->release(b, n * sizeof(float));
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

// The executor's kernel timer wraps the backend (tessel run --kernel-times): NCCL must still find
// the CUDA stream through it, and calibrate must still read the device's memory and SM count,
// which it checks against the CUDA runtime's own report.
TEST(NcclCommunicator, GpuThroughTheKernelTimer) {
  TESSEL_REQUIRE_GPU();
  KernelTimes times;
  auto inner = make_cuda_backend();
  cudaStream_t stream = cuda_backend_stream(*inner);
  ASSERT_NE(stream, nullptr);
  auto timed = make_timed_backend(std::move(inner), &times);
  EXPECT_EQ(cuda_backend_stream(*timed), stream);
  cudaDeviceProp p{};
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaGetDeviceProperties(&p, dev), cudaSuccess);
  EXPECT_EQ(timed->device_memory_bytes(), p.totalGlobalMem);
  EXPECT_EQ(timed->device_parallel_units(), p.multiProcessorCount);

  auto comm = make_nccl_communicator(nccl_unique_id(), 1, 0, *timed);
  const std::vector<float> h = rand_vec(32, 41);
  float* d = static_cast<float*>(timed->allocate(32 * sizeof(float)));
  timed->upload(d, h.data(), 32 * sizeof(float));
  comm->all_reduce(d, 32, ReduceOp::sum);
  std::vector<float> back(32);
  timed->download(back.data(), d, 32 * sizeof(float));
  EXPECT_EQ(back, h);
  comm.reset();
  timed->release(d, 32 * sizeof(float));
}

// Where no wrapper and no GPU is involved, the CPU backend says it has no queue to share.
TEST(CudaBackend, CpuBackendHasNoCudaStream) {
  auto cpu = make_cpu_backend(1);
  EXPECT_EQ(cuda_backend_stream(*cpu), nullptr);
  EXPECT_EQ(cpu->native_queue(), nullptr);
}
