// cpu_backend: forwards each Backend op to its kernels/cpu function. Memory comes from a caching
// allocator keyed by size: a training step frees and re-allocates the same activation sizes every
// microbatch, and fresh large blocks from malloc are mmap'ed and page-faulted on every first touch.
#include "kernels/cpu/cpu_backend.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "kernels/cpu/adamw.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/cross_entropy.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/embedding.h"
#include "kernels/cpu/gelu.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/layernorm.h"
#include "kernels/cpu/rmsnorm.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/swiglu.h"

namespace tessel {
namespace {

constexpr std::size_t kAlignment = 64;  // a cache line; also what AVX-512 loads like

std::string cpu_model_name() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    }
    return "cpu";
}

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(int blas_threads) : device_(cpu_model_name()) { cpu::set_blas_threads(blas_threads); }
    ~CpuBackend() override {
        for (auto& [bytes, list] : cache_)
            for (void* p : list) std::free(p);
    }

    const char* name() const override { return "cpu"; }
    std::string device_name() const override { return device_; }

    void* allocate(std::size_t bytes) override {
        if (bytes == 0) return nullptr;
        const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
        auto it = cache_.find(rounded);
        if (it != cache_.end() && !it->second.empty()) {
            void* p = it->second.back();
            it->second.pop_back();
            return p;
        }
        void* p = std::aligned_alloc(kAlignment, rounded);
        if (p == nullptr) throw std::bad_alloc();
        return p;
    }
    void release(void* p, std::size_t bytes) noexcept override {
        if (p == nullptr) return;
        const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
        try {
            cache_[rounded].push_back(p);
        } catch (...) {
            std::free(p);
        }
    }
    void upload(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
    void download(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
    void copy(void* dst, const void* src, std::size_t bytes) override {
        if (dst != src) std::memmove(dst, src, bytes);
    }
    void fill_zero(void* p, std::size_t bytes) override {
        if (bytes) std::memset(p, 0, bytes);
    }
    void synchronize() override {}

    void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C,
                        int OC) override {
        cpu::matmul_forward(out, inp, weight, bias, N, C, OC);
    }
    void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                         const float* weight, int N, int C, int OC) override {
        cpu::matmul_backward(dinp, dweight, dbias, dout, inp, weight, N, C, OC);
    }

    void embedding_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B, int T, int C,
                           int vocab_start, int vocab_end) override {
        cpu::encoder_forward(out, tokens, wte, wpe, B, T, C, vocab_start, vocab_end);
    }
    void embedding_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T, int C,
                            int vocab_start, int vocab_end) override {
        cpu::encoder_backward(dwte, dwpe, dout, tokens, B, T, C, vocab_start, vocab_end);
    }

    void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                           const float* bias, int N, int C, float eps) override {
        cpu::layernorm_forward(out, mean, rstd, inp, weight, bias, N, C, eps);
    }
    void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                            const float* weight, const float* mean, const float* rstd, int N, int C) override {
        cpu::layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
    }
    void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                         float eps) override {
        cpu::rmsnorm_forward(out, rstd, inp, weight, N, C, eps);
    }
    void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                          const float* rstd, int N, int C) override {
        cpu::rmsnorm_backward(dinp, dweight, dout, inp, weight, rstd, N, C);
    }

    void rope_forward_inplace(float* x, int B, int T, int NH, int D, const RopeFrequencies& freq,
                              int pos_offset) override {
        cpu::rope_forward(x, x, B, T, NH, D, freq, pos_offset);
    }
    void rope_backward_inplace(float* dx, int B, int T, int NH, int D, const RopeFrequencies& freq,
                               int pos_offset) override {
        cpu::rope_backward_inplace(dx, B, T, NH, D, freq, pos_offset);
    }

    void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v, int B, int T,
                           int H, int KH, int D) override {
        cpu::attention_forward(out, lse, q, k, v, B, T, H, KH, D);
    }
    void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q, const float* k,
                            const float* v, const float* out, const float* lse, int B, int T, int H, int KH,
                            int D) override {
        cpu::attention_backward(dq, dk, dv, dout, q, k, v, out, lse, B, T, H, KH, D);
    }
    bool has_prefix_attention() const override { return true; }
    void prefix_attention_forward(float* out, float* lse, const float* q, const float* k, const float* v, int B,
                                  int T, int Tk, int H, int KH, int D) override {
        cpu::attention_forward(out, lse, q, k, v, B, T, Tk, H, KH, D);
    }
    void prefix_attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                                   const float* k, const float* v, const float* out, const float* lse, int B, int T,
                                   int Tk, int H, int KH, int D) override {
        cpu::attention_backward(dq, dk, dv, dout, q, k, v, out, lse, B, T, Tk, H, KH, D);
    }

    void gelu_forward(float* out, const float* inp, std::size_t n) override { cpu::gelu_forward(out, inp, n); }
    void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n) override {
        cpu::gelu_backward(dinp, inp, dout, n);
    }
    void swiglu_forward(float* out, const float* inp, int N, int F) override { cpu::swiglu_forward(out, inp, N, F); }
    void swiglu_backward(float* dinp, const float* inp, const float* dout, int N, int F) override {
        cpu::swiglu_backward(dinp, inp, dout, N, F);
    }

    void vocab_parallel_max(const float* local_logits, int N, int Vlocal, float* out_max) override {
        cpu::vocab_parallel_max(local_logits, N, Vlocal, out_max);
    }
    void vocab_parallel_sum_exp(const float* local_logits, const float* global_max, int N, int Vlocal,
                                float* out_sumexp, float* target_logit_out, const int* targets, int vocab_start,
                                int vocab_end) override {
        cpu::vocab_parallel_sum_exp(local_logits, global_max, N, Vlocal, out_sumexp, target_logit_out, targets,
                                    vocab_start, vocab_end);
    }
    void vocab_parallel_loss(const float* global_max, const float* global_sumexp, const float* target_logit, int N,
                             float* losses, const int* targets) override {
        cpu::vocab_parallel_loss(global_max, global_sumexp, target_logit, N, losses, targets);
    }
    void vocab_parallel_backward(float* dlogits, const float* local_logits, const float* global_max,
                                 const float* global_sumexp, const int* targets, const float* dloss, int N,
                                 int Vlocal, int vocab_start, int vocab_end) override {
        cpu::vocab_parallel_backward(dlogits, local_logits, global_max, global_sumexp, targets, dloss, N, Vlocal,
                                     vocab_start, vocab_end);
    }

    void add(float* out, const float* a, const float* b, std::size_t n) override {
        cpu::residual_forward(out, a, b, n);
    }
    void add_inplace(float* y, const float* x, std::size_t n) override { cpu::add_inplace(y, x, n); }
    void fill(float* y, float value, std::size_t n) override {
        for (std::size_t i = 0; i < n; ++i) y[i] = value;
    }

    void adamw_update(float* params, const float* grads, float* m, float* v, std::size_t n, float lr, float beta1,
                      float beta2, float eps, float weight_decay, int t) override {
        cpu::adamw_update(params, grads, m, v, n, lr, beta1, beta2, eps, weight_decay, t);
    }

private:
    std::string device_;
    std::map<std::size_t, std::vector<void*>> cache_;  // free blocks by rounded size
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int blas_threads) { return std::make_unique<CpuBackend>(blas_threads); }

}  // namespace tessel
