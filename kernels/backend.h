// Backend: the compute interface the executor's layers are written against — device memory and
// every forward/backward op of a GPT/Llama training step, over fp32 device pointers. Two
// implementations: kernels/cpu/cpu_backend (OpenBLAS + the kernels/cpu free functions) and, later,
// a CUDA one (which may keep bf16 copies internally where it wants).
//
// Conventions, the same as kernels/cpu: row-major, (N, C) means N rows of C; backward functions
// ACCUMULATE (+=) into every gradient, parameter and input alike (the caller zeroes); nullptr
// gradients are skipped where a comment says so. Token ids are int32 device arrays.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "kernels/rope_frequencies.h"

namespace tessel {

class Backend {
public:
    virtual ~Backend() = default;

    virtual const char* name() const = 0;  // "cpu" | "cuda"
    virtual std::string device_name() const = 0;

    // ---- device memory (bytes) ----
    virtual void* allocate(std::size_t bytes) = 0;  // uninitialised; bytes may be 0
    virtual void release(void* p, std::size_t bytes) noexcept = 0;
    virtual void upload(void* device_dst, const void* host_src, std::size_t bytes) = 0;
    virtual void download(void* host_dst, const void* device_src, std::size_t bytes) = 0;
    virtual void copy(void* device_dst, const void* device_src, std::size_t bytes) = 0;
    virtual void fill_zero(void* p, std::size_t bytes) = 0;
    virtual void synchronize() = 0;  // waits for queued work (a no-op on the CPU)

    // ---- what the device reports (calibrate's defaults); 0 where the backend cannot say ----
    virtual std::size_t device_memory_bytes() const { return 0; }  // the CPU's is the host's, shared
    // Bytes the device holds now outside this backend's allocator: the context, the libraries'
    // workspaces, the communicators' buffers (and any other process on the same device). What the
    // runtime costs beside the model's tensors. 0 on the CPU, whose memory is the host's.
    virtual std::size_t runtime_memory_bytes() const { return 0; }
    virtual int device_parallel_units() const { return 0; }         // SMs on a GPU
    // The queue the kernels run on in call order (a cudaStream_t on CUDA, nullptr on the CPU), for
    // a communicator that must order its work after theirs. A wrapping backend forwards its inner's.
    virtual void* native_queue() { return nullptr; }

    // ---- linear layers (nn.Linear): out(N,OC) = inp(N,C) · weight(OC,C)^T + bias(OC) ----
    virtual void matmul_forward(float* out, const float* inp, const float* weight, const float* bias,  // bias nullable
                                int N, int C, int OC) = 0;
    // dinp += dout·weight, dweight += dout^T·inp, dbias += column sums; each nullable.
    virtual void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                                 const float* weight, int N, int C, int OC) = 0;

    // ---- embedding, vocabulary-parallel rows [vocab_start, vocab_end); wpe (T, C) nullable ----
    virtual void embedding_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B, int T,
                                   int C, int vocab_start, int vocab_end) = 0;
    virtual void embedding_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T, int C,
                                    int vocab_start, int vocab_end) = 0;

    // ---- norms over the last dimension; mean/rstd (N) saved for backward; eps is the model's ----
    virtual void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                                   const float* bias, int N, int C, float eps) = 0;
    virtual void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                                    const float* weight, const float* mean, const float* rstd, int N, int C) = 0;
    virtual void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C,
                                 float eps) = 0;
    virtual void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp,
                                  const float* weight, const float* rstd, int N, int C) = 0;

    // ---- rotary embedding on (B, T, NH, D), in place; backward rotates the gradient back in place ----
    virtual void rope_forward_inplace(float* x, int B, int T, int NH, int D, const RopeFrequencies& freq,
                                      int pos_offset) = 0;
    virtual void rope_backward_inplace(float* dx, int B, int T, int NH, int D, const RopeFrequencies& freq,
                                       int pos_offset) = 0;

    // ---- causal GQA attention core: q (B,T,H,D), k/v (B,T,KH,D), out (B,T,H,D), lse (B,H,T) ----
    virtual void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v, int B,
                                   int T, int H, int KH, int D) = 0;
    virtual void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                                    const float* k, const float* v, const float* out, const float* lse, int B, int T,
                                    int H, int KH, int D) = 0;
    // The same with the queries the last T of Tk >= T positions: q, out, dout, dq (B,T,H,D), lse
    // (B,H,T), k, v, dk, dv (B,Tk,KH,D); query row i sees keys 0..Tk-T+i. Context parallelism's
    // chunks against the keys up to their end. A backend without such a kernel says so here, and
    // its caller pads each chunk's queries in front to Tk rows (the padded rows' work is wasted).
    virtual bool has_prefix_attention() const { return false; }
    virtual void prefix_attention_forward(float* /*out*/, float* /*lse*/, const float* /*q*/, const float* /*k*/,
                                          const float* /*v*/, int /*B*/, int /*T*/, int /*Tk*/, int /*H*/,
                                          int /*KH*/, int /*D*/) {
        throw std::logic_error(std::string(name()) + " backend has no prefix attention (has_prefix_attention)");
    }
    virtual void prefix_attention_backward(float* /*dq*/, float* /*dk*/, float* /*dv*/, const float* /*dout*/,
                                           const float* /*q*/, const float* /*k*/, const float* /*v*/,
                                           const float* /*out*/, const float* /*lse*/, int /*B*/, int /*T*/,
                                           int /*Tk*/, int /*H*/, int /*KH*/, int /*D*/) {
        throw std::logic_error(std::string(name()) + " backend has no prefix attention (has_prefix_attention)");
    }

    // ---- activations: gelu (N) flat; swiglu inp (N, 2F) = [gate | up] -> out (N, F) ----
    virtual void gelu_forward(float* out, const float* inp, std::size_t n) = 0;
    virtual void gelu_backward(float* dinp, const float* inp, const float* dout, std::size_t n) = 0;
    virtual void swiglu_forward(float* out, const float* inp, int N, int F) = 0;
    virtual void swiglu_backward(float* dinp, const float* inp, const float* dout, int N, int F) = 0;

    // ---- vocabulary-parallel cross-entropy over local logits (N, Vlocal) = columns
    //      [vocab_start, vocab_end); the caller all-reduces between the pieces ----
    virtual void vocab_parallel_max(const float* local_logits, int N, int Vlocal, float* out_max) = 0;
    virtual void vocab_parallel_sum_exp(const float* local_logits, const float* global_max, int N, int Vlocal,
                                        float* out_sumexp, float* target_logit_out, const int* targets,
                                        int vocab_start, int vocab_end) = 0;
    virtual void vocab_parallel_loss(const float* global_max, const float* global_sumexp, const float* target_logit,
                                     int N, float* losses, const int* targets) = 0;
    virtual void vocab_parallel_backward(float* dlogits, const float* local_logits, const float* global_max,
                                         const float* global_sumexp, const int* targets, const float* dloss, int N,
                                         int Vlocal, int vocab_start, int vocab_end) = 0;

    // ---- elementwise on n floats ----
    virtual void add(float* out, const float* a, const float* b, std::size_t n) = 0;  // out may alias a or b
    virtual void add_inplace(float* y, const float* x, std::size_t n) = 0;            // y += x
    virtual void fill(float* y, float value, std::size_t n) = 0;

    // ---- optimizer: one AdamW step (PyTorch semantics), t is the 1-based step ----
    virtual void adamw_update(float* params, const float* grads, float* m, float* v, std::size_t n, float lr,
                              float beta1, float beta2, float eps, float weight_decay, int t) = 0;
};

}  // namespace tessel
