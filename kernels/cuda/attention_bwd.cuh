// attention_bwd: causal GQA flash attention backward in three deterministic passes (no atomics):
//   AttnBwdPre  dvec[b,h,t] = sum_d dout * out  (the "D" of FlashAttention-2), one warp per row.
//   AttnBwdKV   one block per (key tile, batch, kv head): for every query head of the group and
//               every query tile at or below the diagonal, recompute P = exp(S - lse), then
//               dV += P^T dO, dP = dO V^T, dS = P (dP - dvec) / sqrt(D), dK += dS^T Q; dK and dV
//               stay in shared memory (fp32) and are added to global memory once.
//   AttnBwdQ    one block per (query tile, batch, head): recompute P and dS over the key tiles
//               up to the diagonal and dQ += dS K.
// Two passes recompute S and dP once more than FlashAttention-2's single pass with atomic dQ
// (7 instead of 5 tile GEMMs), in exchange for bitwise run-to-run reproducibility.
#pragma once

#include <cstddef>

#include "kernels/cuda/attention_common.cuh"
#include "kernels/cuda/hd.cuh"
#include "kernels/cuda/tile.cuh"

namespace tessel::cuda {

struct AttnBwdPre {
  // grid ceil(B*T*H / rows_per_block), rows_per_block warps per block.
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char*, float* dvec, const S* out,
                            const S* dout, int T, int H, int D, int rows, int rows_per_block) {
    for (int rr = ctx.warp; rr < rows_per_block; rr += ctx.nwarps) {
      const int i = ctx.bx * rows_per_block + rr;  // row (b, t, h) of the (B, T, H, D) tensors
      if (i >= rows) break;
      const S* o = out + static_cast<std::size_t>(i) * D;
      const S* d = dout + static_cast<std::size_t>(i) * D;
      float s = 0.0f;
      for (int c = ctx.lane; c < D; c += Ctx::warp_size) s += to_f32(o[c]) * to_f32(d[c]);
      s = ctx.warp_sum(s);
      if (ctx.lane == 0) {
        const int b = i / (T * H), t = (i / H) % T, h = i % H;
        dvec[(static_cast<std::size_t>(b) * H + h) * T + t] = s;
      }
    }
  }
};

// lse (natural log) -> log2 domain, and dvec, for rows [q0, q0 + n) of head (b, h); 0 past T.
template <class Ctx>
TESSEL_HD void load_row_stats(const Ctx& ctx, float* s_lse, float* s_dvec, const float* lse,
                              const float* dvec, std::size_t head_off, int q0, int n, int T) {
  for (int i = ctx.tid; i < n; i += ctx.nthreads) {
    const bool in = q0 + i < T;
    s_lse[i] = in ? lse[head_off + q0 + i] * kLog2e : 0.0f;
    s_dvec[i] = in ? dvec[head_off + q0 + i] : 0.0f;
  }
}

template <int D>
struct AttnBwdKV {
  // grid (ceil(T / Bc), B * KH), AttnCfg::kThreads threads, KvSmem::bytes of shared memory.
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char* smem, S* dk, S* dv, const S* q,
                            const S* k, const S* v, const S* dout, const float* lse,
                            const float* dvec, AttnShape sh) {
    using C = AttnCfg<S, D>;
    constexpr KvSmem<S, D> L{};
    constexpr int Br = L.Br, Bc = L.Bc, kLdD = C::kLdD;
    S* sK = reinterpret_cast<S*>(smem + L.k);
    S* sV = reinterpret_cast<S*>(smem + L.v);
    float* sdK = reinterpret_cast<float*>(smem + L.dk);
    float* sdV = reinterpret_cast<float*>(smem + L.dv);
    S* sQ = reinterpret_cast<S*>(smem + L.q);
    S* sdO = reinterpret_cast<S*>(smem + L.dout);
    float* sS = reinterpret_cast<float*>(smem + L.s);
    float* sdP = reinterpret_cast<float*>(smem + L.dp);
    S* sP = reinterpret_cast<S*>(smem + L.p);
    S* sdS = reinterpret_cast<S*>(smem + L.ds);
    float* sLse = reinterpret_cast<float*>(smem + L.lse);
    float* sDv = reinterpret_cast<float*>(smem + L.dvec);

    const int T = sh.T, G = sh.H / sh.KH;
    const int b = ctx.by / sh.KH, kvh = ctx.by % sh.KH;
    const int k0 = ctx.bx * Bc;  // early key tiles see the most query rows: they start first
    const int valid_k = T - k0 < Bc ? T - k0 : Bc;
    const std::size_t q_stride = static_cast<std::size_t>(sh.H) * D;
    const std::size_t kv_stride = static_cast<std::size_t>(sh.KH) * D;
    const std::size_t kv_off = (static_cast<std::size_t>(b) * T * sh.KH + kvh) * D;

    load_tile<Ctx, S, D>(ctx, sK, kLdD, k + kv_off + k0 * kv_stride, kv_stride, Bc, valid_k,
                         sh.async16);
    load_tile<Ctx, S, D>(ctx, sV, kLdD, v + kv_off + k0 * kv_stride, kv_stride, Bc, valid_k,
                         sh.async16);
    for (int i = ctx.tid; i < Bc * D; i += ctx.nthreads) {
      sdK[(i / D) * L.kLdAcc + i % D] = 0.0f;
      sdV[(i / D) * L.kLdAcc + i % D] = 0.0f;
    }
    const int n_qt = ceil_div(T, Br);
    for (int g = 0; g < G; ++g) {
      const int h = kvh * G + g;
      const std::size_t q_off = (static_cast<std::size_t>(b) * T * sh.H + h) * D;
      const std::size_t head_off = (static_cast<std::size_t>(b) * sh.H + h) * T;
      for (int qt = k0 / Br; qt < n_qt; ++qt) {  // query tiles at or below the diagonal
        const int q0 = qt * Br;
        const int valid_q = T - q0 < Br ? T - q0 : Br;
        ctx.sync();  // the previous step is done with sQ, sdO, sP, sdS, sLse, sDv
        load_tile<Ctx, S, D>(ctx, sQ, kLdD, q + q_off + q0 * q_stride, q_stride, Br, valid_q,
                             sh.async16);
        load_tile<Ctx, S, D>(ctx, sdO, kLdD, dout + q_off + q0 * q_stride, q_stride, Br, valid_q,
                             sh.async16);
        load_row_stats(ctx, sLse, sDv, lse, dvec, head_off, q0, Br, T);
        load_tile_wait();
        ctx.sync();
        tile_mma<Br, Bc, D, false, true>(ctx, sS, L.kLdS, sQ, kLdD, sK, kLdD, false);  // S = Q K^T
        ctx.sync();
        for (int i = ctx.tid; i < Br * Bc; i += ctx.nthreads) {
          const int r = i / Bc, c = i % Bc;
          const bool valid = q0 + r < T && k0 + c <= q0 + r;
          const float p = valid ? exp2f(sS[r * L.kLdS + c] * sh.scale_log2 - sLse[r]) : 0.0f;
          sS[r * L.kLdS + c] = p;
          sP[r * L.kLdP + c] = from_f32<S>(p);
        }
        ctx.sync();
        tile_mma<Bc, D, Br, true, false>(ctx, sdV, L.kLdAcc, sP, L.kLdP, sdO, kLdD, true);
        tile_mma<Br, Bc, D, false, true>(ctx, sdP, L.kLdS, sdO, kLdD, sV, kLdD, false);
        ctx.sync();
        for (int i = ctx.tid; i < Br * Bc; i += ctx.nthreads) {
          const int r = i / Bc, c = i % Bc;
          const float ds = sS[r * L.kLdS + c] * (sdP[r * L.kLdS + c] - sDv[r]) * sh.scale;
          sdS[r * L.kLdP + c] = from_f32<S>(ds);
        }
        ctx.sync();
        tile_mma<Bc, D, Br, true, false>(ctx, sdK, L.kLdAcc, sdS, L.kLdP, sQ, kLdD, true);
      }
    }
    ctx.sync();
    for (int i = ctx.tid; i < Bc * D; i += ctx.nthreads) {
      const int c = i / D, d = i % D;
      if (c >= valid_k) continue;
      const std::size_t gi = kv_off + (k0 + c) * kv_stride + d;
      dk[gi] = from_f32<S>(to_f32(dk[gi]) + sdK[c * L.kLdAcc + d]);
      dv[gi] = from_f32<S>(to_f32(dv[gi]) + sdV[c * L.kLdAcc + d]);
    }
  }
};

template <int D>
struct AttnBwdQ {
  // grid (ceil(T / Br), B * H), AttnCfg::kThreads threads, QSmem::bytes of shared memory.
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char* smem, S* dq, const S* q, const S* k,
                            const S* v, const S* dout, const float* lse, const float* dvec,
                            AttnShape sh) {
    using C = AttnCfg<S, D>;
    constexpr QSmem<S, D> L{};
    constexpr int Br = L.Br, Bc = L.Bc, kLdD = C::kLdD;
    S* sQ = reinterpret_cast<S*>(smem + L.q);
    S* sdO = reinterpret_cast<S*>(smem + L.dout);
    S* sK = reinterpret_cast<S*>(smem + L.k);
    S* sV = reinterpret_cast<S*>(smem + L.v);
    float* sdQ = reinterpret_cast<float*>(smem + L.dq);
    float* sS = reinterpret_cast<float*>(smem + L.s);
    float* sdP = reinterpret_cast<float*>(smem + L.dp);
    S* sdS = reinterpret_cast<S*>(smem + L.ds);
    float* sLse = reinterpret_cast<float*>(smem + L.lse);
    float* sDv = reinterpret_cast<float*>(smem + L.dvec);

    const int T = sh.T;
    const int qt = ctx.gx - 1 - ctx.bx;
    const int b = ctx.by / sh.H, h = ctx.by % sh.H, kvh = h / (sh.H / sh.KH);
    const int q0 = qt * Br;
    const int valid_q = T - q0 < Br ? T - q0 : Br;
    const std::size_t q_stride = static_cast<std::size_t>(sh.H) * D;
    const std::size_t kv_stride = static_cast<std::size_t>(sh.KH) * D;
    const std::size_t q_off = (static_cast<std::size_t>(b) * T * sh.H + h) * D;
    const std::size_t kv_off = (static_cast<std::size_t>(b) * T * sh.KH + kvh) * D;

    load_tile<Ctx, S, D>(ctx, sQ, kLdD, q + q_off + q0 * q_stride, q_stride, Br, valid_q,
                         sh.async16);
    load_tile<Ctx, S, D>(ctx, sdO, kLdD, dout + q_off + q0 * q_stride, q_stride, Br, valid_q,
                         sh.async16);
    load_row_stats(ctx, sLse, sDv, lse, dvec, (static_cast<std::size_t>(b) * sh.H + h) * T, q0, Br,
                   T);
    for (int i = ctx.tid; i < Br * D; i += ctx.nthreads) sdQ[(i / D) * L.kLdAcc + i % D] = 0.0f;

    const int kv_end = T < q0 + Br ? T : q0 + Br;
    const int n_kt = ceil_div(kv_end, Bc);
    for (int kt = 0; kt < n_kt; ++kt) {
      const int k0 = kt * Bc;
      const int valid_k = T - k0 < Bc ? T - k0 : Bc;
      ctx.sync();  // the previous dS K is done with sK, sdS
      load_tile<Ctx, S, D>(ctx, sK, kLdD, k + kv_off + k0 * kv_stride, kv_stride, Bc, valid_k,
                           sh.async16);
      load_tile<Ctx, S, D>(ctx, sV, kLdD, v + kv_off + k0 * kv_stride, kv_stride, Bc, valid_k,
                           sh.async16);
      load_tile_wait();
      ctx.sync();
      tile_mma<Br, Bc, D, false, true>(ctx, sS, L.kLdS, sQ, kLdD, sK, kLdD, false);   // S = Q K^T
      tile_mma<Br, Bc, D, false, true>(ctx, sdP, L.kLdS, sdO, kLdD, sV, kLdD, false);  // dO V^T
      ctx.sync();
      for (int i = ctx.tid; i < Br * Bc; i += ctx.nthreads) {
        const int r = i / Bc, c = i % Bc;
        const bool valid = q0 + r < T && k0 + c <= q0 + r;
        const float p = valid ? exp2f(sS[r * L.kLdS + c] * sh.scale_log2 - sLse[r]) : 0.0f;
        sdS[r * L.kLdP + c] = from_f32<S>(p * (sdP[r * L.kLdS + c] - sDv[r]) * sh.scale);
      }
      ctx.sync();
      tile_mma<Br, D, Bc, false, false>(ctx, sdQ, L.kLdAcc, sdS, L.kLdP, sK, kLdD, true);  // dS K
    }
    ctx.sync();
    for (int i = ctx.tid; i < Br * D; i += ctx.nthreads) {
      const int r = i / D, d = i % D;
      if (r >= valid_q) continue;
      const std::size_t gi = q_off + (q0 + r) * q_stride + d;
      dq[gi] = from_f32<S>(to_f32(dq[gi]) + sdQ[r * L.kLdAcc + d]);
    }
  }
};

}  // namespace tessel::cuda
