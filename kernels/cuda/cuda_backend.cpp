// cuda_backend: Backend -> tessel::cuda::* (float), one owned stream, cuBLASLt via GemmContext.
// upload/download/synchronize wait for the stream, so host buffers are safe to use on return;
// everything else is asynchronous and ordered by the stream.
#include "kernels/cuda/cuda_backend.h"

#include <string>

#include "core/errors.h"
#include "kernels/cuda/adamw.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/cross_entropy.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/embedding.h"
#include "kernels/cuda/gelu.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/layernorm.h"
#include "kernels/cuda/rmsnorm.h"
#include "kernels/cuda/rope.h"
#include "kernels/cuda/swiglu.h"

namespace tessel {
namespace {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(const CudaBackendOptions& o) {
    if (cuda::device_count() == 0) throw RuntimeError("cuda backend: no CUDA device is available");
    if (o.device >= 0) TESSEL_CUDA_CHECK(cudaSetDevice(o.device));
    cuda::set_pool_retention();  // freed blocks stay in the pool between steps
    TESSEL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    gemm_ = std::make_unique<cuda::GemmContext>(o.allow_tf32);
    const cuda::DeviceInfo info = cuda::device_info();
    device_name_ = info.name;
    memory_bytes_ = info.memory_bytes;
    sm_count_ = info.sm_count;
  }
  ~CudaBackend() override {
    gemm_.reset();
    (void)cudaStreamSynchronize(stream_);
    (void)cudaStreamDestroy(stream_);
  }

  const char* name() const override { return "cuda"; }
  std::string device_name() const override { return device_name_; }
  std::size_t device_memory_bytes() const override { return memory_bytes_; }
  // The device's count of memory in use, less what the stream-ordered pool holds (allocate
  // draws from it, and it keeps what was freed: set_pool_retention).
  std::size_t runtime_memory_bytes() const override {
    std::size_t free = 0, total = 0;
    TESSEL_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    int dev = 0;
    TESSEL_CUDA_CHECK(cudaGetDevice(&dev));
    cudaMemPool_t pool;
    TESSEL_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
    std::uint64_t pooled = 0;
    TESSEL_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &pooled));
    const std::size_t in_use = total - free;
    return in_use > pooled ? in_use - std::size_t(pooled) : 0;
  }
  int device_parallel_units() const override { return sm_count_; }
  void* native_queue() override { return stream_; }

  // ---- memory ----
  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    void* p = nullptr;
    TESSEL_CUDA_CHECK(cudaMallocAsync(&p, bytes, stream_));
    return p;
  }
  void release(void* p, std::size_t) noexcept override {
    if (p != nullptr) (void)cudaFreeAsync(p, stream_);
  }
  void upload(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    TESSEL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    TESSEL_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void download(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    TESSEL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    TESSEL_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    TESSEL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
  }
  void fill_zero(void* p, std::size_t bytes) override {
    if (bytes > 0) TESSEL_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream_));
  }
  void synchronize() override { TESSEL_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  // ---- linear layers ----
  void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, int N,
                      int C, int OC) override {
    cuda::matmul_forward(*gemm_, out, inp, weight, bias, N, C, OC, stream_);
  }
  void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                       const float* inp, const float* weight, int N, int C, int OC) override {
    cuda::matmul_backward(*gemm_, dinp, dweight, dbias, dout, inp, weight, N, C, OC, stream_);
  }

  // ---- embedding ----
  void embedding_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B,
                         int T, int C, int vocab_start, int vocab_end) override {
    cuda::encoder_forward(out, tokens, wte, wpe, B, T, C, vocab_start, vocab_end, stream_);
  }
  void embedding_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B,
                          int T, int C, int vocab_start, int vocab_end) override {
    cuda::encoder_backward(dwte, dwpe, dout, tokens, B, T, C, vocab_start, vocab_end, stream_);
  }

  // ---- norms ----
  void layernorm_forward(float* out, float* mean, float* rstd, const float* inp,
                         const float* weight, const float* bias, int N, int C,
                         float eps) override {
    cuda::layernorm_forward(out, mean, rstd, inp, weight, bias, N, C, eps, stream_);
  }
  void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                          const float* inp, const float* weight, const float* mean,
                          const float* rstd, int N, int C) override {
    cuda::layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C, stream_);
  }
  void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N,
                       int C, float eps) override {
    cuda::rmsnorm_forward(out, rstd, inp, weight, N, C, eps, stream_);
  }
  void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                        const float* weight, const float* rstd, int N, int C) override {
    cuda::rmsnorm_backward(dinp, dweight, dout, inp, weight, rstd, N, C, stream_);
  }

  // ---- rope ----
  void rope_forward_inplace(float* x, int B, int T, int NH, int D, const RopeFrequencies& freq,
                            int pos_offset) override {
    cuda::rope_forward(x, x, B, T, NH, D, freq, pos_offset, stream_);
  }
  void rope_backward_inplace(float* dx, int B, int T, int NH, int D, const RopeFrequencies& freq,
                             int pos_offset) override {
    cuda::rope_backward_inplace(dx, B, T, NH, D, freq, pos_offset, stream_);
  }

  // ---- attention ----
  void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                         int B, int T, int H, int KH, int D) override {
    cuda::attention_forward(out, lse, q, k, v, B, T, H, KH, D, stream_);
  }
  void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                          const float* k, const float* v, const float* out, const float* lse,
                          int B, int T, int H, int KH, int D) override {
    cuda::attention_backward(dq, dk, dv, dout, q, k, v, out, lse, B, T, H, KH, D, stream_);
  }

  // ---- activations ----
  void gelu_forward(float* out, const float* inp, std::size_t n) override {
    cuda::gelu_forward(out, inp, n, stream_);
  }
  void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n) override {
    cuda::gelu_backward(dinp, inp, dout, n, stream_);
  }
  void swiglu_forward(float* out, const float* inp, int N, int F) override {
    cuda::swiglu_forward(out, inp, N, F, stream_);
  }
  void swiglu_backward(float* dinp, const float* inp, const float* dout, int N, int F) override {
    cuda::swiglu_backward(dinp, inp, dout, N, F, stream_);
  }

  // ---- vocabulary-parallel cross-entropy ----
  void vocab_parallel_max(const float* local_logits, int N, int Vlocal, float* out_max) override {
    cuda::vocab_parallel_max(local_logits, N, Vlocal, out_max, stream_);
  }
  void vocab_parallel_sum_exp(const float* local_logits, const float* global_max, int N,
                              int Vlocal, float* out_sumexp, float* target_logit_out,
                              const int* targets, int vocab_start, int vocab_end) override {
    cuda::vocab_parallel_sum_exp(local_logits, global_max, N, Vlocal, out_sumexp,
                                 target_logit_out, targets, vocab_start, vocab_end, stream_);
  }
  void vocab_parallel_loss(const float* global_max, const float* global_sumexp,
                           const float* target_logit, int N, float* losses,
                           const int* targets) override {
    cuda::vocab_parallel_loss(global_max, global_sumexp, target_logit, N, losses, targets,
                              stream_);
  }
  void vocab_parallel_backward(float* dlogits, const float* local_logits, const float* global_max,
                               const float* global_sumexp, const int* targets, const float* dloss,
                               int N, int Vlocal, int vocab_start, int vocab_end) override {
    cuda::vocab_parallel_backward(dlogits, local_logits, global_max, global_sumexp, targets,
                                  dloss, N, Vlocal, vocab_start, vocab_end, stream_);
  }

  // ---- elementwise ----
  void add(float* out, const float* a, const float* b, std::size_t n) override {
    cuda::residual_forward(out, a, b, n, stream_);
  }
  void add_inplace(float* y, const float* x, std::size_t n) override {
    cuda::add_inplace(y, x, n, stream_);
  }
  void fill(float* y, float value, std::size_t n) override { cuda::fill(y, value, n, stream_); }

  // ---- optimizer ----
  void adamw_update(float* params, const float* grads, float* m, float* v, std::size_t n, float lr,
                    float beta1, float beta2, float eps, float weight_decay, int t) override {
    cuda::adamw_update(params, grads, m, v, n, lr, beta1, beta2, eps, weight_decay, t, nullptr,
                       stream_);
  }

 private:
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<cuda::GemmContext> gemm_;
  std::string device_name_;
  std::size_t memory_bytes_ = 0;
  int sm_count_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const CudaBackendOptions& options) {
  return std::make_unique<CudaBackend>(options);
}

cudaStream_t cuda_backend_stream(Backend& backend) {
  // Through native_queue, so that a wrapping backend (the executor's kernel timer) still yields
  // the CUDA backend's stream.
  if (std::string(backend.name()) != "cuda") return nullptr;
  return static_cast<cudaStream_t>(backend.native_queue());
}

}  // namespace tessel
