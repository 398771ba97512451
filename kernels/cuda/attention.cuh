// attention: launchers of the flash-attention bodies (attention_fwd.cuh, attention_bwd.cuh) over
// an executor, with the head-dim dispatch and the argument checks.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "kernels/cuda/attention_bwd.cuh"
#include "kernels/cuda/attention_common.cuh"
#include "kernels/cuda/attention_fwd.cuh"

namespace tessel::cuda::impl {

inline bool attention_head_dim_ok(int D) { return D == 32 || D == 64 || D == 128; }

inline void attention_check(int B, int T, int H, int KH, int D) {
  if (B <= 0 || T <= 0 || H <= 0 || KH <= 0 || H % KH != 0 || !attention_head_dim_ok(D) ||
      static_cast<long long>(B) * H > 65535)
    throw RuntimeError("cuda::attention: unsupported shape B=" + std::to_string(B) +
                       " T=" + std::to_string(T) + " H=" + std::to_string(H) +
                       " KH=" + std::to_string(KH) + " D=" + std::to_string(D) +
                       " (need H % KH == 0, D in {32, 64, 128}, B*H <= 65535)");
}

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <typename S>
AttnShape attention_shape(int B, int T, int H, int KH, int D, bool async16) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  return AttnShape{B, T, H, KH, D, scale * kLog2e, scale, async16};
}

template <int D, class Exec, typename S>
void attention_forward_d(Exec& ex, S* out, float* lse, const S* q, const S* k, const S* v,
                         const AttnShape& sh) {
  constexpr FwdSmem<S, D> L{};
  ex.template launch<AttnFwd<D>>(dim3(ceil_div(sh.T, L.Br), sh.B * sh.H), AttnCfg<S, D>::kThreads,
                                 L.bytes, out, lse, q, k, v, sh);
}

template <class Exec, typename S>
void attention_forward(Exec& ex, S* out, float* lse, const S* q, const S* k, const S* v, int B,
                       int T, int H, int KH, int D) {
  attention_check(B, T, H, KH, D);
  const AttnShape sh = attention_shape<S>(
      B, T, H, KH, D, aligned16(q) && aligned16(k) && aligned16(v));
  switch (D) {
    case 32: return attention_forward_d<32>(ex, out, lse, q, k, v, sh);
    case 64: return attention_forward_d<64>(ex, out, lse, q, k, v, sh);
    default: return attention_forward_d<128>(ex, out, lse, q, k, v, sh);
  }
}

template <int D, class Exec, typename S>
void attention_backward_d(Exec& ex, S* dq, S* dk, S* dv, const S* dout, const S* q, const S* k,
                          const S* v, const float* lse, const float* dvec, const AttnShape& sh) {
  constexpr KvSmem<S, D> Lkv{};
  constexpr QSmem<S, D> Lq{};
  constexpr int kThreads = AttnCfg<S, D>::kThreads;
  ex.template launch<AttnBwdKV<D>>(dim3(ceil_div(sh.T, Lkv.Bc), sh.B * sh.KH), kThreads,
                                   Lkv.bytes, dk, dv, q, k, v, dout, lse, dvec, sh);
  ex.template launch<AttnBwdQ<D>>(dim3(ceil_div(sh.T, Lq.Br), sh.B * sh.H), kThreads, Lq.bytes,
                                  dq, q, k, v, dout, lse, dvec, sh);
}

template <class Exec, typename S>
void attention_backward(Exec& ex, S* dq, S* dk, S* dv, const S* dout, const S* q, const S* k,
                        const S* v, const S* out, const float* lse, int B, int T, int H, int KH,
                        int D) {
  attention_check(B, T, H, KH, D);
  const AttnShape sh = attention_shape<S>(
      B, T, H, KH, D,
      aligned16(q) && aligned16(k) && aligned16(v) && aligned16(dout));
  const int rows = B * T * H;
  auto dvec = ex.template scratch<float>(static_cast<std::size_t>(rows));
  constexpr int kPreThreads = 256, kRowsPerBlock = kPreThreads / 32;
  ex.template launch<AttnBwdPre>(dim3(ceil_div(rows, kRowsPerBlock)), kPreThreads, 0, dvec.get(),
                                 out, dout, T, H, D, rows, kRowsPerBlock);
  switch (D) {
    case 32: return attention_backward_d<32>(ex, dq, dk, dv, dout, q, k, v, lse, dvec.get(), sh);
    case 64: return attention_backward_d<64>(ex, dq, dk, dv, dout, q, k, v, lse, dvec.get(), sh);
    default: return attention_backward_d<128>(ex, dq, dk, dv, dout, q, k, v, lse, dvec.get(), sh);
  }
}

}  // namespace tessel::cuda::impl
