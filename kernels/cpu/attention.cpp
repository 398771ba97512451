// attention: causal GQA attention per (batch, head), in blocks of kBlock query rows. Each block
// only touches keys 0..i1 (the causal prefix), and the T×T×D products run through BLAS with the
// strided (B,T,H,D) layout passed as leading dimensions, so nothing is transposed or copied.
// The queries may be the last T of Tk positions (a context-parallel chunk against the keys up to
// its end): query row i then sees keys 0..Tk-T+i.
#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/vecmath.h"

namespace tessel::cpu {
namespace {

constexpr int kBlock = 64;  // query rows per block (measured best of 32/64/128/256 for D = 64)

// Per-thread scratch of n floats that persists across calls: a fresh (kBlock, T) buffer per call
// would be mmap'ed and page-faulted every time for long sequences.
float* scratch(int which, std::size_t n) {
  thread_local std::vector<float> buf[2];
  if (buf[which].size() < n) buf[which].resize(n);
  return buf[which].data();
}

// P(nb, L) = exp(scale·Q K^T - lse) for keys j <= off + i0 + r, 0 beyond (row r of the block).
// With lse == nullptr the rows are softmax-normalized here and their lse is written to lse_out.
TESSEL_CPU_CLONES void scores_to_probs(float* P, int nb, int L, int i0, int off, const float* lse,
                                       float* lse_out) {
  for (int r = 0; r < nb; ++r) {
    float* p = P + static_cast<std::size_t>(r) * L;
    const int n = off + i0 + r + 1;  // valid keys
    if (lse != nullptr) {
      const float l = lse[i0 + r];
      for (int j = 0; j < n; ++j) p[j] = vm::exp_approx(p[j] - l);
    } else {
      const float m = vm::max(p, n);
      const float s = vm::exp_shift_sum(p, p, m, n);
      const float inv = 1.0f / s;
      for (int j = 0; j < n; ++j) p[j] *= inv;
      lse_out[i0 + r] = m + std::log(s);
    }
    if (n < L) std::memset(p + n, 0, sizeof(float) * (L - n));
  }
}

}  // namespace

void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       int B, int T, int H, int KH, int D) {
  attention_forward(out, lse, q, k, v, B, T, T, H, KH, D);
}

void attention_forward(float* out, float* lse, const float* q, const float* k, const float* v,
                       int B, int T, int Tk, int H, int KH, int D) {
  const int group = H / KH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const int ldq = H * D, ldk = KH * D;
  const int off = Tk - T;
  float* P = scratch(0, static_cast<std::size_t>(std::min(kBlock, T)) * Tk);
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      const int kv = h / group;
      const float* Q = q + static_cast<std::size_t>(b) * T * ldq + static_cast<std::size_t>(h) * D;
      const float* K = k + static_cast<std::size_t>(b) * Tk * ldk + static_cast<std::size_t>(kv) * D;
      const float* V = v + static_cast<std::size_t>(b) * Tk * ldk + static_cast<std::size_t>(kv) * D;
      float* O = out + static_cast<std::size_t>(b) * T * ldq + static_cast<std::size_t>(h) * D;
      float* L_out = lse + (static_cast<std::size_t>(b) * H + h) * T;
      for (int i0 = 0; i0 < T; i0 += kBlock) {
        const int nb = std::min(kBlock, T - i0);
        const int L = off + i0 + nb;
        const std::size_t qo = static_cast<std::size_t>(i0) * ldq;
        sgemm(false, true, nb, L, D, scale, Q + qo, ldq, K, ldk, 0.0f, P, L);
        scores_to_probs(P, nb, L, i0, off, nullptr, L_out);
        sgemm(false, false, nb, D, L, 1.0f, P, L, V, ldk, 0.0f, O + qo, ldq);
      }
    }
  }
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                        const float* k, const float* v, const float* out, const float* lse, int B,
                        int T, int H, int KH, int D) {
  attention_backward(dq, dk, dv, dout, q, k, v, out, lse, B, T, T, H, KH, D);
}

TESSEL_CPU_CLONES void attention_backward(float* dq, float* dk, float* dv, const float* dout,
                                          const float* q, const float* k, const float* v,
                                          const float* out, const float* lse, int B, int T, int Tk,
                                          int H, int KH, int D) {
  const int group = H / KH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const int ldq = H * D, ldk = KH * D;
  const int off = Tk - T;
  const std::size_t n_scratch = static_cast<std::size_t>(std::min(kBlock, T)) * Tk;
  float* P = scratch(0, n_scratch);
  float* dP = scratch(1, n_scratch);
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      const int kv = h / group;
      const std::size_t qb =
          static_cast<std::size_t>(b) * T * ldq + static_cast<std::size_t>(h) * D;
      const std::size_t kb =
          static_cast<std::size_t>(b) * Tk * ldk + static_cast<std::size_t>(kv) * D;
      const float* Q = q + qb;
      const float* O = out + qb;
      const float* dO = dout + qb;
      float* dQ = dq + qb;
      const float* K = k + kb;
      const float* V = v + kb;
      float* dK = dk + kb;
      float* dV = dv + kb;
      const float* Lse = lse + (static_cast<std::size_t>(b) * H + h) * T;
      for (int i0 = 0; i0 < T; i0 += kBlock) {
        const int nb = std::min(kBlock, T - i0);
        const int L = off + i0 + nb;
        const std::size_t qo = static_cast<std::size_t>(i0) * ldq;
        // Recompute the probabilities of this block of query rows.
        sgemm(false, true, nb, L, D, scale, Q + qo, ldq, K, ldk, 0.0f, P, L);
        scores_to_probs(P, nb, L, i0, off, Lse, nullptr);
        // dV += P^T dO
        sgemm(true, false, L, D, nb, 1.0f, P, L, dO + qo, ldq, 1.0f, dV, ldk);
        // dP = dO V^T
        sgemm(false, true, nb, L, D, 1.0f, dO + qo, ldq, V, ldk, 0.0f, dP, L);
        // dS = P ⊙ (dP - rowsum(dO ⊙ O)) · scale, written over P.
        for (int r = 0; r < nb; ++r) {
          const std::size_t ro = qo + static_cast<std::size_t>(r) * ldq;
          const float di = vm::dot(dO + ro, O + ro, D);
          float* p = P + static_cast<std::size_t>(r) * L;
          const float* dp = dP + static_cast<std::size_t>(r) * L;
          const int n = off + i0 + r + 1;
          for (int j = 0; j < n; ++j) p[j] = p[j] * (dp[j] - di) * scale;
        }
        // dQ += dS K,  dK += dS^T Q
        sgemm(false, false, nb, D, L, 1.0f, P, L, K, ldk, 1.0f, dQ + qo, ldq);
        sgemm(true, false, L, D, nb, 1.0f, P, L, Q + qo, ldq, 1.0f, dK, ldk);
      }
    }
  }
}

}  // namespace tessel::cpu
