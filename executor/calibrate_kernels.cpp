#include "executor/calibrate_kernels.h"

#include <time.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "executor/device_buffer.h"

namespace tessel {

namespace {

constexpr double kFloat = 4.0;  // bytes of the fp32 elements every Backend op works on

DeviceArray<float> filled(const DeviceMemory& mem, std::size_t n, float value) {
    DeviceArray<float> a(mem, std::max<std::size_t>(n, 1), MemoryKind::buffers);
    mem.backend->fill(a.data(), value, a.size());
    return a;
}

DeviceArray<int> tokens_below(const DeviceMemory& mem, std::size_t n, int limit) {
    std::vector<int> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = int((i * 7919) % std::size_t(limit));
    DeviceArray<int> a(mem, n, MemoryKind::buffers);
    mem.backend->upload(a.data(), host.data(), n * sizeof(int));
    return a;
}

struct Runner {
    Backend& be;
    const KernelSweep& sweep;
    const std::function<void(const std::string&)>& progress;
    DeviceMemory mem{&be, nullptr};

    CallSeconds time_both(const std::string& what, const std::function<void()>& fn) {
        if (progress) progress(what);
        return call_seconds(be, fn, sweep.timing);
    }
    double time(const std::string& what, const std::function<void()>& fn) { return time_both(what, fn).median; }

    void peak(KernelMeasurements& out) {
        for (int n : sweep.peak_sizes) {
            const std::size_t nn = std::size_t(n) * n;
            auto a = filled(mem, nn, 0.5f), b = filled(mem, nn, 0.25f), c = filled(mem, nn, 0.0f);
            const CallSeconds s = time_both(fmt::format("gemm {0}x{0}x{0} (peak)", n),
                                            [&] { be.matmul_forward(c.data(), a.data(), b.data(), nullptr, n, n, n); });
            const double rate = 2.0 * double(n) * n * n / s.best;
            out.gemms.push_back({"square", n, n, n, s.median});
            if (rate > out.peak_flops) {
                out.peak_flops = rate;
                out.peak_size = n;
            }
        }
    }

    // The GEMMs of one transformer layer at hidden h over T tokens: the Q/K/V-sized projection
    // (T x h -> h), the MLP's up (h -> 4h) and down (4h -> h), and a weight gradient (4h x h over
    // T tokens, the reduction running over the tokens).
    void layer_gemms(KernelMeasurements& out, int T, int h) {
        const int f = 4 * h;
        auto x = filled(mem, std::size_t(T) * f, 0.01f), w = filled(mem, std::size_t(f) * h, 0.02f);
        auto y = filled(mem, std::size_t(T) * f, 0.0f), dw = filled(mem, std::size_t(f) * h, 0.0f);
        struct Shape {
            const char* role;
            int N, C, OC;
        };
        for (const Shape& s : {Shape{"qkv", T, h, h}, Shape{"mlp_up", T, h, f}, Shape{"mlp_down", T, f, h}}) {
            const double sec = time(fmt::format("gemm {}x{}x{} ({})", s.N, s.OC, s.C, s.role), [&] {
                be.matmul_forward(y.data(), x.data(), w.data(), nullptr, s.N, s.C, s.OC);
            });
            out.gemms.push_back({s.role, s.N, s.OC, s.C, sec});
        }
        // dweight (f x h) += dout(T x f)^T · inp(T x h): m = f, n = h, k = T.
        const double sec = time(fmt::format("gemm {}x{}x{} (wgrad)", f, h, T), [&] {
            be.matmul_backward(nullptr, dw.data(), nullptr, y.data(), x.data(), w.data(), T, h, f);
        });
        out.gemms.push_back({"wgrad", f, h, T, sec});
    }

    void stream(KernelMeasurements& out) {
        const std::size_t n = sweep.stream_bytes / sizeof(float);
        auto a = filled(mem, n, 1.0f), b = filled(mem, n, 2.0f), c = filled(mem, n, 0.0f);
        const double copy = time(fmt::format("stream copy {} MiB", sweep.stream_bytes >> 20),
                                 [&] { be.copy(c.data(), a.data(), n * sizeof(float)); });
        const double add = time(fmt::format("stream add {} MiB", sweep.stream_bytes >> 20),
                                [&] { be.add(c.data(), a.data(), b.data(), n); });
        out.stream_Bps = std::max(2.0 * kFloat * n / copy, 3.0 * kFloat * n / add);
    }

    // Norms, activations, the residual add, the embedding, the cross entropy and AdamW of one
    // layer at hidden h over T tokens (ffn 4h, vocabulary 8h), bytes as layer_cost.cpp counts them.
    void layer_streaming(KernelMeasurements& out, int T, int h) {
        const int f = 4 * h, V = 8 * h;
        const std::size_t th = std::size_t(T) * h, tf = std::size_t(T) * f, tv = std::size_t(T) * V;
        const std::string shape = fmt::format("T={} h={}", T, h);
        auto x = filled(mem, 2 * tf, 0.1f), y = filled(mem, 2 * tf, 0.0f), dy = filled(mem, 2 * tf, 0.01f),
             dx = filled(mem, 2 * tf, 0.0f);
        auto w = filled(mem, h, 1.0f), bias = filled(mem, h, 0.0f), dw = filled(mem, h, 0.0f), db = filled(mem, h, 0.0f);
        auto mean = filled(mem, T, 0.0f), rstd = filled(mem, T, 1.0f);
        auto add = [&](const std::string& name, double bytes, const std::function<void()>& fn) {
            out.streaming.push_back({name, shape, bytes, time(name + " " + shape, fn)});
        };
        add("layernorm_forward", 2 * kFloat * th, [&] {
            be.layernorm_forward(y.data(), mean.data(), rstd.data(), x.data(), w.data(), bias.data(), T, h, 1e-5f);
        });
        add("layernorm_backward", 4 * kFloat * th, [&] {
            be.layernorm_backward(dx.data(), dw.data(), db.data(), dy.data(), x.data(), w.data(), mean.data(),
                                  rstd.data(), T, h);
        });
        add("rmsnorm_forward", 2 * kFloat * th, [&] { be.rmsnorm_forward(y.data(), rstd.data(), x.data(), w.data(), T, h, 1e-5f); });
        add("rmsnorm_backward", 4 * kFloat * th, [&] {
            be.rmsnorm_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), rstd.data(), T, h);
        });
        add("gelu_forward", 2 * kFloat * tf, [&] { be.gelu_forward(y.data(), x.data(), tf); });
        add("gelu_backward", 3 * kFloat * tf, [&] { be.gelu_backward(dx.data(), x.data(), dy.data(), tf); });
        add("swiglu_forward", 3 * kFloat * tf, [&] { be.swiglu_forward(y.data(), x.data(), T, f); });
        add("swiglu_backward", 5 * kFloat * tf, [&] { be.swiglu_backward(dx.data(), x.data(), dy.data(), T, f); });
        add("residual_add", 3 * kFloat * th, [&] { be.add(y.data(), x.data(), dy.data(), th); });

        // Embedding: a row gather forward, a scatter-add into the fp32 gradient backward.
        {
            auto table = filled(mem, std::size_t(V) * h, 0.02f), dtable = filled(mem, std::size_t(V) * h, 0.0f);
            auto ids = tokens_below(mem, T, V);
            add("embedding_forward", 2 * kFloat * th, [&] {
                be.embedding_forward(y.data(), ids.data(), table.data(), nullptr, 1, T, h, 0, V);
            });
            add("embedding_backward", 2 * kFloat * th, [&] {
                be.embedding_backward(dtable.data(), nullptr, dy.data(), ids.data(), 1, T, h, 0, V);
            });
        }
        // Cross entropy over T x V logits: what the simulator's eager loss charges (forward: cast,
        // max, shift, exp, sum, normalise; backward: scale and cast back).
        {
            auto logits = filled(mem, tv, 0.01f), dlogits = filled(mem, tv, 0.0f);
            auto ids = tokens_below(mem, T, V);
            auto mx = filled(mem, T, 0.0f), se = filled(mem, T, 0.0f), tl = filled(mem, T, 0.0f),
                 loss = filled(mem, T, 0.0f), dl = filled(mem, T, 1.0f / T);
            add("cross_entropy_forward", (kFloat + 36.0) * tv, [&] {
                be.vocab_parallel_max(logits.data(), T, V, mx.data());
                be.vocab_parallel_sum_exp(logits.data(), mx.data(), T, V, se.data(), tl.data(), ids.data(), 0, V);
                be.vocab_parallel_loss(mx.data(), se.data(), tl.data(), T, loss.data(), ids.data());
            });
            add("cross_entropy_backward", (12.0 + kFloat) * tv, [&] {
                be.vocab_parallel_backward(dlogits.data(), logits.data(), mx.data(), se.data(), ids.data(), dl.data(),
                                           T, V, 0, V);
            });
        }
        // AdamW over one layer's parameters (12 h^2): fp32 Adam streams 32 bytes per parameter.
        {
            const std::size_t n = std::size_t(12) * h * h;
            auto p = filled(mem, n, 0.1f), g = filled(mem, n, 0.01f), m1 = filled(mem, n, 0.0f), m2 = filled(mem, n, 0.0f);
            int t = 0;
            add("adamw", 32.0 * double(n), [&] {
                be.adamw_update(p.data(), g.data(), m1.data(), m2.data(), n, 1e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, ++t);
            });
        }
    }

    void attention(KernelMeasurements& out, int T, int D) {
        const int H = sweep.attention_batch_heads;
        const std::size_t n = std::size_t(T) * H * D;
        auto q = filled(mem, n, 0.1f), k = filled(mem, n, 0.1f), v = filled(mem, n, 0.2f), o = filled(mem, n, 0.0f);
        auto lse = filled(mem, std::size_t(H) * T, 0.0f);
        auto dout = filled(mem, n, 0.01f), dq = filled(mem, n, 0.0f), dk = filled(mem, n, 0.0f), dv = filled(mem, n, 0.0f);
        AttentionSample s{H, T, D, 0, 0};
        s.forward_seconds = time(fmt::format("attention forward {}x{}x{}", H, T, D), [&] {
            be.attention_forward(o.data(), lse.data(), q.data(), k.data(), v.data(), 1, T, H, H, D);
        });
        s.backward_seconds = time(fmt::format("attention backward {}x{}x{}", H, T, D), [&] {
            be.attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), q.data(), k.data(), v.data(), o.data(),
                                  lse.data(), 1, T, H, H, D);
        });
        out.attention.push_back(s);
    }

    void launch(KernelMeasurements& out) {
        auto a = filled(mem, 16, 1.0f);
        out.launch_s = time("launch (16-element add)", [&] { be.add(a.data(), a.data(), a.data(), 16); });
    }
};

}  // namespace

double measure_cpu_share(Backend& be, double seconds) {
    auto clock = [](clockid_t id) {
        timespec t{};
        clock_gettime(id, &t);
        return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
    };
    const DeviceMemory mem{&be, nullptr};
    const int T = 256, C = 128, OC = 512;
    auto x = filled(mem, std::size_t(T) * C, 0.01f), w = filled(mem, std::size_t(OC) * C, 0.02f),
         y = filled(mem, std::size_t(T) * OC, 0.0f);
    const double wall0 = clock(CLOCK_MONOTONIC), cpu0 = clock(CLOCK_PROCESS_CPUTIME_ID);
    double wall = 0;
    while ((wall = clock(CLOCK_MONOTONIC) - wall0) < seconds) be.matmul_forward(y.data(), x.data(), w.data(), nullptr, T, C, OC);
    be.synchronize();
    return std::min(1.0, (clock(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / std::max(wall, 1e-9));
}

KernelSweep KernelSweep::standard() {
    KernelSweep s;
    s.peak_sizes = {512, 1024, 2048};
    s.hidden = {128, 256, 512, 1024};
    s.tokens = {256, 1024};
    s.attention_seq = {128, 512, 2048};
    s.attention_head_dim = {32, 64, 128};
    s.stream_bytes = std::size_t(128) << 20;
    s.timing = {0.15, 5, 200, 2e-4};
    s.step_shapes = {{256, 128}, {256, 256}, {256, 512}, {1024, 128}, {1024, 256}};
    s.step_layouts = {"gpt", "llama"};
    return s;
}

KernelSweep KernelSweep::device() {
    // A GPU runs tiny kernels at its launch latency (a 256 x 128 x 128 GEMM reaches 1.5% of an
    // H100's fp32 peak), which says nothing of a training step's: its shapes are these, the sizes
    // of 1B to 70B models' layers, and the streaming arrays are larger than its L2 (50 MiB on H100).
    KernelSweep s;
    s.peak_sizes = {2048, 4096, 8192};
    s.hidden = {512, 1024, 2048, 4096};
    s.tokens = {2048, 8192};
    // Attention with the GPU full, as a step's batch x heads fills it: the profile's attention
    // table is looked up by sequence and head dim alone, so a shape measured on a part of the SMs
    // (16 x 4 query blocks of 512 tokens on 132) would stand for every batch at that length.
    s.attention_seq = {512, 1024, 2048, 4096};
    s.attention_head_dim = {64, 128};
    s.attention_batch_heads = 64;
    s.stream_bytes = std::size_t(512) << 20;
    s.timing = {0.1, 5, 100, 2e-3};
    s.step_shapes = {{2048, 512}, {2048, 1024}, {8192, 1024}};
    s.step_layouts = {"gpt", "llama"};
    return s;
}

KernelSweep KernelSweep::quick() {
    KernelSweep s;
    s.peak_sizes = {256};
    s.hidden = {128};
    s.tokens = {128};
    s.attention_seq = {64};
    s.attention_head_dim = {32};
    s.attention_batch_heads = 2;
    s.stream_bytes = std::size_t(8) << 20;
    s.share_seconds = 0.02;
    s.timing = {0.002, 2, 20, 1e-4};
    s.step_shapes = {{128, 128}};
    s.step_layouts = {"gpt"};
    s.step = {2, 2};
    return s;
}

KernelSweep KernelSweep::for_backend(const std::string& backend, bool quick) {
    if (quick) return KernelSweep::quick();
    return backend == "cpu" ? KernelSweep::standard() : KernelSweep::device();
}

int kernel_measurement_count(const KernelSweep& s) {
    const int shapes = int(s.hidden.size() * s.tokens.size());
    const int steps = int(s.step_shapes.size() * s.step_layouts.size());
    return int(s.peak_sizes.size()) + 4 * shapes + 2 + 14 * shapes +
           2 * int(s.attention_seq.size() * s.attention_head_dim.size()) + 1 + steps;
}

KernelMeasurements measure_kernels(Backend& backend, const KernelSweep& sweep,
                                   const std::function<void(const std::string&)>& progress) {
    Runner run{backend, sweep, progress};
    KernelMeasurements out;
    run.peak(out);
    for (int T : sweep.tokens)
        for (int h : sweep.hidden) run.layer_gemms(out, T, h);
    run.stream(out);
    for (int T : sweep.tokens)
        for (int h : sweep.hidden) run.layer_streaming(out, T, h);
    for (int T : sweep.attention_seq)
        for (int D : sweep.attention_head_dim) run.attention(out, T, D);
    run.launch(out);
    for (const std::string& layout : sweep.step_layouts)
        for (const auto& [T, h] : sweep.step_shapes) {
            if (progress) progress(fmt::format("{} step T={} h={}: kernels in the step and alone", layout, T, h));
            out.steps.push_back(measure_step_kernels(backend.name(), layout, T, h, sweep.step));
        }
    return out;
}

}  // namespace tessel
