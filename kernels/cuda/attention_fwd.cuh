// attention_fwd: causal GQA flash attention forward (FlashAttention-2 ordering). One block owns Br
// query rows of one (batch, head) and walks the key tiles up to the diagonal: S = Q K^T (tensor
// cores for bf16), an online-softmax update per row in the log2 domain (running max m, running sum
// l, rescale factor alpha = 2^(m_old - m_new)), O = alpha O + P V. Only O (Br, D) and the row
// statistics persist, so memory is O(T), and lse = ln2 (m + log2 l) is saved for the backward.
// Each row's m and l live in the registers of the tpr = 128 / Br threads that own the row (they
// compute identical values); only alpha and the final l go through shared memory.
#pragma once

#include <cstddef>

#include "kernels/cuda/attention_common.cuh"
#include "kernels/cuda/hd.cuh"
#include "kernels/cuda/tile.cuh"

namespace tessel::cuda {

template <int D>
struct AttnFwd {
  // grid (ceil(T / Br), B * H), AttnCfg::kThreads threads, FwdSmem::bytes of shared memory.
  template <class Ctx, typename S>
  TESSEL_HD static void run(const Ctx& ctx, unsigned char* smem, S* out, float* lse, const S* q,
                            const S* k, const S* v, AttnShape sh) {
    using C = AttnCfg<S, D>;
    constexpr FwdSmem<S, D> L{};
    constexpr int Br = L.Br, Bc = L.Bc, kLdD = C::kLdD;
    S* sQ = reinterpret_cast<S*>(smem + L.q);
    S* sK = reinterpret_cast<S*>(smem + L.k);
    S* sV = reinterpret_cast<S*>(smem + L.v);
    float* sS = reinterpret_cast<float*>(smem + L.s);
    S* sP = reinterpret_cast<S*>(smem + L.p);
    float* sO = reinterpret_cast<float*>(smem + L.o);
    float* sAlpha = reinterpret_cast<float*>(smem + L.alpha);
    float* sL = reinterpret_cast<float*>(smem + L.l);

    const int T = sh.T;
    const int qt = ctx.gx - 1 - ctx.bx;  // longest rows (most key tiles) start first
    const int b = ctx.by / sh.H, h = ctx.by % sh.H, kvh = h / (sh.H / sh.KH);
    const int q0 = qt * Br;
    const std::size_t q_stride = static_cast<std::size_t>(sh.H) * D;
    const std::size_t kv_stride = static_cast<std::size_t>(sh.KH) * D;
    const S* qb = q + (static_cast<std::size_t>(b) * T * sh.H + h) * D;
    const S* kb = k + (static_cast<std::size_t>(b) * T * sh.KH + kvh) * D;
    const S* vb = v + (static_cast<std::size_t>(b) * T * sh.KH + kvh) * D;

    load_tile<Ctx, S, D>(ctx, sQ, kLdD, qb + q0 * q_stride, q_stride, Br,
                         T - q0 < Br ? T - q0 : Br, sh.async16);
    for (int i = ctx.tid; i < Br * D; i += ctx.nthreads) sO[(i / D) * L.kLdO + i % D] = 0.0f;

    const int tpr = ctx.nthreads / Br;  // threads per query row: 2 or 4, a power of two
    const int row = ctx.tid / tpr, part = ctx.tid % tpr;
    const int qi = q0 + row;
    float m_row = neg_inf_f32(), l_row = 0.0f;

    const int kv_end = T < q0 + Br ? T : q0 + Br;  // causal: keys up to the last query row
    const int n_kt = ceil_div(kv_end, Bc);
    for (int kt = 0; kt < n_kt; ++kt) {
      const int k0 = kt * Bc;
      const int valid_k = T - k0 < Bc ? T - k0 : Bc;
      ctx.sync();  // the previous tile's P V is done with sK, sV, sP (first pass: sQ, sO ready)
      load_tile<Ctx, S, D>(ctx, sK, kLdD, kb + k0 * kv_stride, kv_stride, Bc, valid_k, sh.async16);
      load_tile<Ctx, S, D>(ctx, sV, kLdD, vb + k0 * kv_stride, kv_stride, Bc, valid_k, sh.async16);
      load_tile_wait();
      ctx.sync();
      tile_mma<Br, Bc, D, false, true>(ctx, sS, L.kLdS, sQ, kLdD, sK, kLdD, false);  // S = Q K^T
      ctx.sync();
      {
        const float* srow = sS + row * L.kLdS;
        float mloc = neg_inf_f32();
        for (int c = part; c < Bc; c += tpr)
          if (k0 + c <= qi && k0 + c < T) mloc = fmaxf(mloc, srow[c] * sh.scale_log2);
        const float m_new = fmaxf(m_row, ctx.warp_max(mloc, tpr));
        float lsum = 0.0f;
        S* prow = sP + row * L.kLdP;
        for (int c = part; c < Bc; c += tpr) {
          const bool valid = k0 + c <= qi && k0 + c < T;
          const float p = valid ? exp2f(srow[c] * sh.scale_log2 - m_new) : 0.0f;
          prow[c] = from_f32<S>(p);
          lsum += p;
        }
        lsum = ctx.warp_sum(lsum, tpr);
        const float alpha = exp2f(m_row - m_new);  // 0 on the first tile (m_row = -inf)
        l_row = l_row * alpha + lsum;
        m_row = m_new;
        if (part == 0) sAlpha[row] = alpha;
      }
      ctx.sync();
      for (int i = ctx.tid; i < Br * D; i += ctx.nthreads)
        sO[(i / D) * L.kLdO + i % D] *= sAlpha[i / D];
      ctx.sync();
      tile_mma<Br, D, Bc, false, false>(ctx, sO, L.kLdO, sP, L.kLdP, sV, kLdD, true);  // O += P V
    }
    if (part == 0) sL[row] = l_row;
    if (part == 0 && qi < T)
      lse[(static_cast<std::size_t>(b) * sh.H + h) * T + qi] = (m_row + log2f(l_row)) * kLn2;
    ctx.sync();
    S* ob = out + (static_cast<std::size_t>(b) * T * sh.H + h) * D;
    for (int i = ctx.tid; i < Br * D; i += ctx.nthreads) {
      const int r = i / D, d = i % D;
      if (q0 + r < T) ob[(q0 + r) * q_stride + d] = from_f32<S>(sO[r * L.kLdO + d] / sL[r]);
    }
  }
};

}  // namespace tessel::cuda
