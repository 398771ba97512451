#include "executor/timed_backend.h"

#include <algorithm>
#include <chrono>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace tessel {

double KernelTimes::in_step_seconds() const {
    double s = 0;
    for (const auto& [_, t] : by_kernel) s += t.in_step_seconds;
    return s;
}

double KernelTimes::alone_seconds() const {
    double s = 0;
    for (const auto& [_, t] : by_kernel) s += t.alone_seconds;
    return s;
}

KernelKindTimes kernel_time_by_kind(const KernelTimes& times) {
    KernelKindTimes k;
    for (const auto& [key, t] : times.by_kernel) {
        const std::string_view name(key);
        if (name.starts_with("matmul_"))
            k.gemm += t.in_step_seconds;
        else if (name.starts_with("attention_"))
            k.attention += t.in_step_seconds;
        else if (!name.starts_with("upload ") && !name.starts_with("download "))
            k.memory_bound += t.in_step_seconds;
    }
    return k;
}

namespace {

using clock_type = std::chrono::steady_clock;

class TimedBackend final : public Backend {
public:
    TimedBackend(std::unique_ptr<Backend> inner, KernelTimes* times) : inner_(std::move(inner)), times_(times) {}

    const char* name() const override { return inner_->name(); }
    std::string device_name() const override { return inner_->device_name(); }

    // Memory management is host bookkeeping, not a kernel: forwarded untimed.
    void* allocate(std::size_t bytes) override { return inner_->allocate(bytes); }
    void release(void* p, std::size_t bytes) noexcept override { inner_->release(p, bytes); }
    void upload(void* dst, const void* src, std::size_t bytes) override {
        timed(fmt::format("upload bytes={}", bytes), [&] { inner_->upload(dst, src, bytes); });
    }
    void download(void* dst, const void* src, std::size_t bytes) override {
        timed(fmt::format("download bytes={}", bytes), [&] { inner_->download(dst, src, bytes); });
    }
    void copy(void* dst, const void* src, std::size_t bytes) override {
        timed(fmt::format("copy bytes={}", bytes), [&] { inner_->copy(dst, src, bytes); });
    }
    void fill_zero(void* p, std::size_t bytes) override {
        timed(fmt::format("fill_zero bytes={}", bytes), [&] { inner_->fill_zero(p, bytes); });
    }
    void synchronize() override { inner_->synchronize(); }
    std::size_t device_memory_bytes() const override { return inner_->device_memory_bytes(); }
    std::size_t runtime_memory_bytes() const override { return inner_->runtime_memory_bytes(); }
    int device_parallel_units() const override { return inner_->device_parallel_units(); }
    void* native_queue() override { return inner_->native_queue(); }

    void matmul_forward(float* out, const float* inp, const float* w, const float* bias, int N, int C,
                        int OC) override {
        timed(fmt::format("matmul_forward N={} C={} OC={}", N, C, OC),
              [&] { inner_->matmul_forward(out, inp, w, bias, N, C, OC); });
    }
    void matmul_backward(float* dinp, float* dw, float* dbias, const float* dout, const float* inp, const float* w,
                         int N, int C, int OC) override {
        timed(fmt::format("matmul_backward N={} C={} OC={}{}{}", N, C, OC, dinp ? "" : " no-dinp", dw ? "" : " no-dw"),
              [&] { inner_->matmul_backward(dinp, dw, dbias, dout, inp, w, N, C, OC); });
    }
    void embedding_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B, int T, int C,
                           int vs, int ve) override {
        timed(fmt::format("embedding_forward B={} T={} C={}", B, T, C),
              [&] { inner_->embedding_forward(out, tokens, wte, wpe, B, T, C, vs, ve); });
    }
    void embedding_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T, int C, int vs,
                            int ve) override {
        timed(fmt::format("embedding_backward B={} T={} C={}", B, T, C),
              [&] { inner_->embedding_backward(dwte, dwpe, dout, tokens, B, T, C, vs, ve); });
    }
    void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                           int C, float eps) override {
        timed(fmt::format("layernorm_forward N={} C={}", N, C),
              [&] { inner_->layernorm_forward(out, mean, rstd, inp, w, b, N, C, eps); });
    }
    void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                            const float* mean, const float* rstd, int N, int C) override {
        timed(fmt::format("layernorm_backward N={} C={}", N, C),
              [&] { inner_->layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, N, C); });
    }
    void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* w, int N, int C, float eps) override {
        timed(fmt::format("rmsnorm_forward N={} C={}", N, C),
              [&] { inner_->rmsnorm_forward(out, rstd, inp, w, N, C, eps); });
    }
    void rmsnorm_backward(float* dinp, float* dw, const float* dout, const float* inp, const float* w,
                          const float* rstd, int N, int C) override {
        timed(fmt::format("rmsnorm_backward N={} C={}", N, C),
              [&] { inner_->rmsnorm_backward(dinp, dw, dout, inp, w, rstd, N, C); });
    }
    void rope_forward_inplace(float* x, int B, int T, int NH, int D, const RopeFrequencies& freq,
                              int pos) override {
        timed(fmt::format("rope_forward B={} T={} NH={} D={}", B, T, NH, D),
              [&] { inner_->rope_forward_inplace(x, B, T, NH, D, freq, pos); });
    }
    void rope_backward_inplace(float* dx, int B, int T, int NH, int D, const RopeFrequencies& freq,
                               int pos) override {
        timed(fmt::format("rope_backward B={} T={} NH={} D={}", B, T, NH, D),
              [&] { inner_->rope_backward_inplace(dx, B, T, NH, D, freq, pos); });
    }
    void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v, int B, int T, int H,
                           int KH, int D) override {
        timed(fmt::format("attention_forward B={} T={} H={} KH={} D={}", B, T, H, KH, D),
              [&] { inner_->attention_forward(out, lse, q, k, v, B, T, H, KH, D); });
    }
    void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q, const float* k,
                            const float* v, const float* out, const float* lse, int B, int T, int H, int KH,
                            int D) override {
        timed(fmt::format("attention_backward B={} T={} H={} KH={} D={}", B, T, H, KH, D),
              [&] { inner_->attention_backward(dq, dk, dv, dout, q, k, v, out, lse, B, T, H, KH, D); });
    }
    bool has_prefix_attention() const override { return inner_->has_prefix_attention(); }
    void prefix_attention_forward(float* out, float* lse, const float* q, const float* k, const float* v, int B,
                                  int T, int Tk, int H, int KH, int D) override {
        timed(fmt::format("attention_forward B={} T={} Tk={} H={} KH={} D={}", B, T, Tk, H, KH, D),
              [&] { inner_->prefix_attention_forward(out, lse, q, k, v, B, T, Tk, H, KH, D); });
    }
    void prefix_attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                                   const float* k, const float* v, const float* out, const float* lse, int B, int T,
                                   int Tk, int H, int KH, int D) override {
        timed(fmt::format("attention_backward B={} T={} Tk={} H={} KH={} D={}", B, T, Tk, H, KH, D),
              [&] { inner_->prefix_attention_backward(dq, dk, dv, dout, q, k, v, out, lse, B, T, Tk, H, KH, D); });
    }
    void gelu_forward(float* out, const float* inp, std::size_t n) override {
        timed(fmt::format("gelu_forward n={}", n), [&] { inner_->gelu_forward(out, inp, n); });
    }
    void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n) override {
        timed(fmt::format("gelu_backward n={}", n), [&] { inner_->gelu_backward(dinp, inp, dout, n); });
    }
    void swiglu_forward(float* out, const float* inp, int N, int F) override {
        timed(fmt::format("swiglu_forward N={} F={}", N, F), [&] { inner_->swiglu_forward(out, inp, N, F); });
    }
    void swiglu_backward(float* dinp, const float* inp, const float* dout, int N, int F) override {
        timed(fmt::format("swiglu_backward N={} F={}", N, F), [&] { inner_->swiglu_backward(dinp, inp, dout, N, F); });
    }
    void vocab_parallel_max(const float* logits, int N, int V, float* out_max) override {
        timed(fmt::format("vocab_parallel_max N={} V={}", N, V), [&] { inner_->vocab_parallel_max(logits, N, V, out_max); });
    }
    void vocab_parallel_sum_exp(const float* logits, const float* gmax, int N, int V, float* sumexp, float* target_logit,
                                const int* targets, int vs, int ve) override {
        timed(fmt::format("vocab_parallel_sum_exp N={} V={}", N, V),
              [&] { inner_->vocab_parallel_sum_exp(logits, gmax, N, V, sumexp, target_logit, targets, vs, ve); });
    }
    void vocab_parallel_loss(const float* gmax, const float* gsum, const float* target_logit, int N, float* losses,
                             const int* targets) override {
        timed(fmt::format("vocab_parallel_loss N={}", N),
              [&] { inner_->vocab_parallel_loss(gmax, gsum, target_logit, N, losses, targets); });
    }
    void vocab_parallel_backward(float* dlogits, const float* logits, const float* gmax, const float* gsum,
                                 const int* targets, const float* dloss, int N, int V, int vs, int ve) override {
        timed(fmt::format("vocab_parallel_backward N={} V={}", N, V),
              [&] { inner_->vocab_parallel_backward(dlogits, logits, gmax, gsum, targets, dloss, N, V, vs, ve); });
    }
    void add(float* out, const float* a, const float* b, std::size_t n) override {
        timed(fmt::format("add n={}", n), [&] { inner_->add(out, a, b, n); });
    }
    void add_inplace(float* y, const float* x, std::size_t n) override {
        timed(fmt::format("add_inplace n={}", n), [&] { inner_->add_inplace(y, x, n); });
    }
    void fill(float* y, float value, std::size_t n) override {
        timed(fmt::format("fill n={}", n), [&] { inner_->fill(y, value, n); });
    }
    void adamw_update(float* params, const float* grads, float* m, float* v, std::size_t n, float lr, float b1,
                      float b2, float eps, float wd, int t) override {
        // Replaying AdamW would move the parameters several times a step: timed in place only.
        timed(fmt::format("adamw_update n={}", n),
              [&] { inner_->adamw_update(params, grads, m, v, n, lr, b1, b2, eps, wd, t); }, false);
    }

private:
    template <class Fn>
    void timed(const std::string& key, Fn&& fn, bool replayable = true) {
        auto t0 = clock_type::now();
        fn();
        inner_->synchronize();
        const double in_step = std::chrono::duration<double>(clock_type::now() - t0).count();
        KernelTally& t = times_->by_kernel[key];
        ++t.calls;
        t.in_step_seconds += in_step;
        if (times_->replays <= 0) return;
        // The median replay, as calibrate's other samples are medians.
        std::vector<double> replays;
        for (int r = 0; replayable && r < times_->replays; ++r) {
            t0 = clock_type::now();
            fn();
            inner_->synchronize();
            replays.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
        }
        std::sort(replays.begin(), replays.end());
        t.alone_seconds += replays.empty() ? in_step : replays[replays.size() / 2];
    }

    std::unique_ptr<Backend> inner_;
    KernelTimes* times_;
};

}  // namespace

std::unique_ptr<Backend> make_timed_backend(std::unique_ptr<Backend> inner, KernelTimes* times) {
    return std::make_unique<TimedBackend>(std::move(inner), times);
}

}  // namespace tessel
