// bench_executor_cpu: training steps of a small Llama on one CPU rank (one BLAS thread), against
// the sgemm FLOP rate OpenBLAS reaches on the same core in the same program. Figure of merit:
// model FLOP/s ÷ sgemm FLOP/s, i.e. the step's MFU against a measured (not datasheet) peak.
//   build/bench/bench_executor_cpu [steps] | tee reports/bench/executor_cpu.txt
// The machine may be shared, so the sgemm rate is measured right before and right after each step
// (mean rate over a 0.6 s window of 1024^3 products) and each step is compared with the mean of its
// two windows; the result is the median over the steps after the warm-up.
// Model: 4 layers, hidden 512, 8 heads (4 KV heads, GQA), SwiGLU ffn 1408, vocabulary 8192,
// sequence 256, 4 sequences per step (one microbatch); the AdamW step is included.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "core/presets.h"
#include "executor/device_buffer.h"
#include "executor/trainer.h"
#include "kernels/cpu/cpu_backend.h"

using namespace tessel;

namespace {

// Mean sgemm rate (GFLOP/s) over about `seconds` of back-to-back 1024^3 products.
double sgemm_gflops(Backend& be, double seconds) {
    const int n = 1024;
    const DeviceMemory mem{&be, nullptr};
    DeviceArray<float> a(mem, std::size_t(n) * n, MemoryKind::buffers), b(mem, std::size_t(n) * n, MemoryKind::buffers),
        c(mem, std::size_t(n) * n, MemoryKind::buffers);
    be.fill(a.data(), 0.5f, a.size());
    be.fill(b.data(), 0.25f, b.size());
    be.matmul_forward(c.data(), a.data(), b.data(), nullptr, n, n, n);
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    int calls = 0;
    double elapsed = 0;
    while (elapsed < seconds) {
        be.matmul_forward(c.data(), a.data(), b.data(), nullptr, n, n, n);
        ++calls;
        elapsed = std::chrono::duration<double>(clock::now() - t0).count();
    }
    return 2.0 * n * n * double(n) * calls / elapsed / 1e9;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
    const int steps = argc > 1 ? std::max(2, std::atoi(argv[1])) : 8;
    ModelSpec m = load_model("tiny-llama");
    m.name = "bench-llama";
    m.num_layers = 4;
    m.hidden_size = 512;
    m.num_attention_heads = 8;
    m.num_kv_heads = 4;
    m.head_dim = 64;
    m.ffn_hidden_size = 1408;
    m.vocab_size = 8192;
    m.seq_length = 256;

    TrainOptions o;
    o.model = m;
    o.plan.microbatch_size = 4;
    o.plan.global_batch_size = 4;
    o.plan.seq_length = 256;
    o.plan.precision = Precision::fp32;
    o.steps = steps;
    o.warmup_steps = 1;
    o.peak_tflops = 1.0;  // ratios are formed below, step by step
    o.peak_source = "see bench_executor_cpu";

    auto blas = make_cpu_backend(1);  // one BLAS thread, as each rank of tessel run has
    std::vector<double> windows{sgemm_gflops(*blas, 0.6)};
    o.on_step = [&](int, double, double) { windows.push_back(sgemm_gflops(*blas, 0.6)); };

    fmt::print("bench_executor_cpu: {} steps of {} (layers {}, hidden {}, heads {}/{} KV, ffn {} SwiGLU, vocab {}, "
               "seq {}, batch {}) on one rank, one BLAS thread\n",
               steps, m.name, m.num_layers, m.hidden_size, m.num_attention_heads, m.num_kv_heads, m.ffn_hidden_size,
               m.vocab_size, o.plan.seq_length, o.plan.global_batch_size);
    const RunResult r = train(o, make_self_communicator());
    const double flops = r.model_flops_per_token * r.tokens_per_step;
    fmt::print("model FLOPs per step {:.3f} GFLOP (core/accounting: 6 x matmul weights + 12 L H d s per token)\n",
               flops / 1e9);
    fmt::print("step  time s    model GFLOP/s  sgemm GFLOP/s (before, after)  ratio\n");
    std::vector<double> ratios, model_rates, sgemm_rates;
    for (int i = 0; i < steps; ++i) {
        const double rate = flops / r.step_times_s[i] / 1e9;
        const double sgemm = 0.5 * (windows[i] + windows[i + 1]);
        const bool warm = i >= r.warmup_steps;
        fmt::print("{:>4}  {:.4f}  {:>13.2f}  {:>13.2f} ({:.2f}, {:.2f})  {:>6.1f}%{}\n", i + 1, r.step_times_s[i], rate,
                   sgemm, windows[i], windows[i + 1], 100 * rate / sgemm, warm ? "" : "  (warm-up, not counted)");
        if (warm) {
            ratios.push_back(rate / sgemm);
            model_rates.push_back(rate);
            sgemm_rates.push_back(sgemm);
        }
    }
    fmt::print("median over {} steps: model {:.2f} GFLOP/s, sgemm {:.2f} GFLOP/s, model/sgemm {:.1f}% "
               "(target >= 60%)\n",
               ratios.size(), median(model_rates), median(sgemm_rates), 100 * median(ratios));
    fmt::print("optimizer step (median) {:.4f} s of a {:.4f} s step; losses {:.4f} -> {:.4f}\n",
               [&] {
                   std::vector<double> opt;
                   for (const auto& b : r.step_breakdowns) opt.push_back(b.optimizer);
                   return median_after(opt, r.warmup_steps);
               }(), r.step_time_s, r.losses.front(), r.losses.back());
    return median(ratios) >= 0.6 ? 0 : 1;
}
