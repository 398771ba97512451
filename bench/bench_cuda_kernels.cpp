// How fast the CUDA kernels run against the GPU's datasheet peak: cuBLASLt GEMMs at the shapes of
// GPT-2 124M and Llama-3.2-1B (forward and backward), flash attention, LayerNorm/RMSNorm, the
// fused classifier and AdamW. Every timed iteration first flushes L2 (an untimed memset of twice
// the L2 size) and is timed with CUDA events (Google Benchmark manual time), as llm.c's
// benchmark_kernel does. GEMM and attention operands are random (see random_filled). Counters: TFLOP/s or GB/s, and the percentage of the datasheet peak.
// Built with CUDA when linked to tessel_kernels_cuda (which defines TESSEL_HAVE_CUDA); without it,
// or without a GPU at run time, it registers nothing.
#include <benchmark/benchmark.h>

#include <cstdio>

#if defined(TESSEL_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cuda/adamw.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/cross_entropy.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/layernorm.h"
#include "kernels/cuda/rmsnorm.h"

using namespace tessel;
using namespace tessel::cuda;

namespace {

// ---- timing: L2 flush + CUDA events -------------------------------------------------------------

class GpuTimer {
 public:
  explicit GpuTimer(std::size_t l2_bytes) : flush_(2 * l2_bytes) {
    TESSEL_CUDA_CHECK(cudaEventCreate(&start_));
    TESSEL_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~GpuTimer() {
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
  }
  // Seconds one call of f takes on the default stream, with a cold L2.
  double time(const std::function<void()>& f) {
    TESSEL_CUDA_CHECK(cudaMemsetAsync(flush_.get(), ++salt_ & 0xff, flush_.size()));
    TESSEL_CUDA_CHECK(cudaEventRecord(start_));
    f();
    TESSEL_CUDA_CHECK(cudaEventRecord(stop_));
    TESSEL_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    TESSEL_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return 1e-3 * ms;
  }

 private:
  DeviceArray<unsigned char> flush_;
  cudaEvent_t start_{}, stop_{};
  int salt_ = 0;
};

struct Work {
  double flops = 0;  // 0 for bandwidth-bound kernels
  double bytes = 0;  // minimum DRAM traffic (each input read once, each output written once)
};

// Runs f under the timer, then reports TFLOP/s (or GB/s) and % of the datasheet peak.
void run_timed(benchmark::State& state, const DeviceInfo& dev, DType t, const Work& w,
               const std::function<void()>& f) {
  GpuTimer timer(dev.l2_bytes);
  f();  // warm-up: cuBLASLt plans, memory pool, module loading
  TESSEL_CUDA_CHECK(cudaDeviceSynchronize());
  double total = 0;
  for (auto _ : state) {
    const double s = timer.time(f);
    state.SetIterationTime(s);
    total += s;
  }
  const double per = total / static_cast<double>(state.iterations());
  if (w.flops > 0) {
    const double tflops = w.flops / per / 1e12;
    const double peak = t == DType::bf16 ? dev.peak_bf16_tflops : dev.peak_fp32_tflops;
    state.counters["TFLOP/s"] = tflops;
    if (peak > 0) state.counters["%peak"] = 100.0 * tflops / peak;
  } else {
    const double gbps = w.bytes / per / 1e9;
    state.counters["GB/s"] = gbps;
    if (dev.peak_memory_GBps > 0) state.counters["%peak"] = 100.0 * gbps / dev.peak_memory_GBps;
  }
}

template <typename S>
DeviceArray<S> filled(std::size_t n, float value) {
  DeviceArray<S> a(n);
  fill(a.get(), value, n);
  return a;
}

// Operands uniform in [-1, 1) from a hash of the index: the tensor cores draw more power on
// varied bits than on a constant, and a GEMM on constant (or zero) operands runs faster than on
// real activations, weights and gradients (cuBLAS through PyTorch on an H200:
// reports/gpu/h200/kernel-speed.md).
template <typename S>
DeviceArray<S> random_filled(std::size_t n, std::uint64_t seed) {
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    host[i] = float(double(z >> 40) / double(1ull << 23) - 1.0);
  }
  DeviceArray<float> staged(host);
  DeviceArray<S> a(n);
  convert(a.get(), staged.get(), n);
  TESSEL_CUDA_CHECK(cudaDeviceSynchronize());
  return a;
}

// ---- model shapes --------------------------------------------------------------------------------

struct ModelShape {
  const char* name;
  int N;            // tokens per microbatch, B * T
  int B, T;         // for attention
  int C, H, KH, D;  // hidden, query heads, kv heads, head dim
  int ffn;          // MLP hidden (per branch for SwiGLU)
  int V;            // vocabulary
  bool swiglu;
};

// GPT-2 124M: Radford et al. 2019 / HF gpt2 config (n_embd 768, n_head 12, vocab 50257); llm.c's
// B=8, T=1024 microbatch.
constexpr ModelShape kGpt2{"gpt2_124m", 8 * 1024, 8, 1024, 768, 12, 12, 64, 3072, 50257, false};
// Llama-3.2-1B: HF meta-llama/Llama-3.2-1B config.json (hidden 2048, 32 heads, 8 kv heads,
// intermediate 8192, vocab 128256); B=4, T=2048.
constexpr ModelShape kLlama1b{"llama3.2_1b", 4 * 2048, 4, 2048, 2048, 32, 8, 64, 8192, 128256,
                              true};

// ---- benchmarks ----------------------------------------------------------------------------------

template <typename S>
void bm_linear(benchmark::State& state, const DeviceInfo& dev, int N, int C, int OC, bool backward) {
  GemmContext ctx;
  auto x = random_filled<S>(std::size_t(N) * C, 1);
  auto w = random_filled<S>(std::size_t(OC) * C, 2);
  auto y = random_filled<S>(std::size_t(N) * OC, 3);  // the backward's output gradient
  auto dx = filled<S>(std::size_t(N) * C, 0.0f);
  auto dw = filled<S>(std::size_t(OC) * C, 0.0f);
  const double f = 2.0 * N * C * OC;
  if (!backward)
    run_timed(state, dev, dtype_of<S>(), {f, 0},
              [&] { matmul_forward<S>(ctx, y.get(), x.get(), w.get(), nullptr, N, C, OC); });
  else
    run_timed(state, dev, dtype_of<S>(), {2 * f, 0}, [&] {
      matmul_backward<S>(ctx, dx.get(), dw.get(), nullptr, y.get(), x.get(), w.get(), N, C, OC);
    });
}

void bm_attention(benchmark::State& state, const DeviceInfo& dev, const ModelShape& m,
                  bool backward) {
  const std::size_t nq = std::size_t(m.N) * m.H * m.D, nkv = std::size_t(m.N) * m.KH * m.D;
  auto q = random_filled<bf16>(nq, 4), k = random_filled<bf16>(nkv, 5), v = random_filled<bf16>(nkv, 6);
  auto out = filled<bf16>(nq, 0.0f), dout = random_filled<bf16>(nq, 7);
  auto dq = filled<bf16>(nq, 0.0f), dk = filled<bf16>(nkv, 0.0f), dv = filled<bf16>(nkv, 0.0f);
  DeviceArray<float> lse(std::size_t(m.B) * m.H * m.T);
  attention_forward(out.get(), lse.get(), q.get(), k.get(), v.get(), m.B, m.T, m.H, m.KH, m.D);
  // Causal: half of the T x T scores. Forward 2 GEMMs of 2 T T D FLOPs each; backward counted as
  // 2.5x forward (5 GEMMs), the usual model-FLOP convention, though this kernel recomputes more.
  const double fwd = 2.0 * m.B * m.H * double(m.T) * m.T * m.D;
  if (!backward)
    run_timed(state, dev, DType::bf16, {fwd, 0}, [&] {
      attention_forward(out.get(), lse.get(), q.get(), k.get(), v.get(), m.B, m.T, m.H, m.KH, m.D);
    });
  else
    run_timed(state, dev, DType::bf16, {2.5 * fwd, 0}, [&] {
      attention_backward(dq.get(), dk.get(), dv.get(), dout.get(), q.get(), k.get(), v.get(),
                         out.get(), lse.get(), m.B, m.T, m.H, m.KH, m.D);
    });
}

void bm_norm(benchmark::State& state, const DeviceInfo& dev, const ModelShape& m, bool backward) {
  const std::size_t nc = std::size_t(m.N) * m.C;
  auto x = filled<bf16>(nc, 0.5f), y = filled<bf16>(nc, 0.0f), dy = filled<bf16>(nc, 0.01f);
  auto dx = filled<bf16>(nc, 0.0f);
  auto w = filled<bf16>(m.C, 1.0f), b = filled<bf16>(m.C, 0.0f);
  auto dw = filled<bf16>(m.C, 0.0f), db = filled<bf16>(m.C, 0.0f);
  DeviceArray<float> mean(m.N), rstd(m.N);
  const double row_bytes = 2.0 * nc;  // one bf16 (N, C) tensor
  if (!m.swiglu) {
    layernorm_forward(y.get(), mean.get(), rstd.get(), x.get(), w.get(), b.get(), m.N, m.C);
    if (!backward)
      run_timed(state, dev, DType::bf16, {0, 2 * row_bytes}, [&] {
        layernorm_forward(y.get(), mean.get(), rstd.get(), x.get(), w.get(), b.get(), m.N, m.C);
      });
    else  // read x, dy, dx; write dx
      run_timed(state, dev, DType::bf16, {0, 4 * row_bytes}, [&] {
        layernorm_backward(dx.get(), dw.get(), db.get(), dy.get(), x.get(), w.get(), mean.get(),
                           rstd.get(), m.N, m.C);
      });
  } else {
    rmsnorm_forward(y.get(), rstd.get(), x.get(), w.get(), m.N, m.C);
    if (!backward)
      run_timed(state, dev, DType::bf16, {0, 2 * row_bytes},
                [&] { rmsnorm_forward(y.get(), rstd.get(), x.get(), w.get(), m.N, m.C); });
    else
      run_timed(state, dev, DType::bf16, {0, 4 * row_bytes}, [&] {
        rmsnorm_backward(dx.get(), dw.get(), dy.get(), x.get(), w.get(), rstd.get(), m.N, m.C);
      });
  }
}

void bm_classifier(benchmark::State& state, const DeviceInfo& dev, const ModelShape& m) {
  const std::size_t nv = std::size_t(m.N) * m.V;
  auto logits = filled<bf16>(nv, 0.0f);
  auto losses = filled<float>(m.N, 0.0f);
  auto dloss = filled<float>(m.N, 1.0f / m.N);
  DeviceArray<int> targets(m.N);
  TESSEL_CUDA_CHECK(cudaMemset(targets.get(), 0, sizeof(int) * m.N));
  // Reads the logits twice and writes the gradient once. Overwriting its own input is harmless
  // here: the values stay finite and the work per call is the same.
  run_timed(state, dev, DType::bf16, {0, 3.0 * 2.0 * nv}, [&] {
    cross_entropy_fused(logits.get(), losses.get(), targets.get(), dloss.get(), m.N, m.V);
  });
}

void bm_adamw(benchmark::State& state, const DeviceInfo& dev, std::size_t n) {
  auto p = filled<float>(n, 0.1f), m = filled<float>(n, 0.0f), v = filled<float>(n, 0.0f);
  auto g = filled<bf16>(n, 0.01f), copy = filled<bf16>(n, 0.0f);
  // Per parameter: read g (2), p, m, v (12); write p, m, v (12) and the bf16 copy (2).
  run_timed(state, dev, DType::bf16, {0, 28.0 * n}, [&] {
    adamw_update(p.get(), g.get(), m.get(), v.get(), n, 3e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, 1,
                 copy.get());
  });
}

void register_all(const DeviceInfo& dev) {
  auto reg = [&](const std::string& name, std::function<void(benchmark::State&)> fn) {
    benchmark::RegisterBenchmark(name.c_str(), [fn](benchmark::State& s) { fn(s); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.2);
  };
  for (const ModelShape* m : {&kGpt2, &kLlama1b}) {
    const std::string p = std::string(m->name) + "/";
    const int qkv = (m->H + 2 * m->KH) * m->D;
    const int up = m->swiglu ? 2 * m->ffn : m->ffn;  // fused [gate | up]
    const struct {
      const char* name;
      int C, OC;
    } linears[] = {{"qkv", m->C, qkv},
                   {"attn_out", m->C, m->C},
                   {"mlp_up", m->C, up},
                   {"mlp_down", m->ffn, m->C},
                   {"lm_head", m->C, m->V}};
    for (const auto& l : linears) {
      const int N = m->N, C = l.C, OC = l.OC;
      reg(p + "gemm_fwd_bf16/" + l.name,
          [&dev, N, C, OC](benchmark::State& s) { bm_linear<bf16>(s, dev, N, C, OC, false); });
      reg(p + "gemm_bwd_bf16/" + l.name,
          [&dev, N, C, OC](benchmark::State& s) { bm_linear<bf16>(s, dev, N, C, OC, true); });
    }
    const int N = m->N, C = m->C, up0 = up;
    reg(p + "gemm_fwd_fp32/mlp_up",
        [&dev, N, C, up0](benchmark::State& s) { bm_linear<float>(s, dev, N, C, up0, false); });
    reg(p + "attention_fwd_bf16", [&dev, m](benchmark::State& s) { bm_attention(s, dev, *m, false); });
    reg(p + "attention_bwd_bf16", [&dev, m](benchmark::State& s) { bm_attention(s, dev, *m, true); });
    const char* norm = m->swiglu ? "rmsnorm" : "layernorm";
    reg(p + norm + "_fwd_bf16", [&dev, m](benchmark::State& s) { bm_norm(s, dev, *m, false); });
    reg(p + norm + "_bwd_bf16", [&dev, m](benchmark::State& s) { bm_norm(s, dev, *m, true); });
    reg(p + "classifier_fused_bf16", [&dev, m](benchmark::State& s) { bm_classifier(s, dev, *m); });
  }
  reg("adamw_124M_params", [&dev](benchmark::State& s) { bm_adamw(s, dev, 124'000'000); });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  static DeviceInfo dev;  // outlives the registered benchmarks
  if (device_count() == 0) {
    std::printf("bench_cuda_kernels: no CUDA device; nothing to run\n");
    return 0;
  }
  dev = device_info();
  std::printf("device: %s, %d SMs, L2 %zu MiB; peaks: bf16 %.0f TFLOP/s, fp32 %.1f TFLOP/s, "
              "memory %.0f GB/s\n",
              dev.name.c_str(), dev.sm_count, dev.l2_bytes >> 20, dev.peak_bf16_tflops,
              dev.peak_fp32_tflops, dev.peak_memory_GBps);
  register_all(dev);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

#else  // no CUDA in this build

int main() {
  std::printf("bench_cuda_kernels: built without CUDA (link tessel_kernels_cuda); nothing to run\n");
  return 0;
}

#endif
