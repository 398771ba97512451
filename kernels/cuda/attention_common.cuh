// attention_common: tile sizes and shared-memory layouts of the flash-attention kernels, shared by
// the launchers (to size the launch) and the bodies (to carve shared memory). Sizes are chosen so
// every block fits sm_80's 163 KB of shared memory with 128 threads (4 warps):
//   forward     (q tile Br x key tile Bc)   bf16: 64 x 64 (D <= 64) or 64 x 32;  fp32: 32 x 32
//   dK/dV pass  (key tile Bc, q tiles Br)   bf16: 64 keys x 32 queries;          fp32: 32 x 32
//   dQ pass     (q tile Br x key tile Bc)   same as the forward
// S-typed tiles have rows padded by 16 bytes (row starts shift across banks, rows stay 16-byte
// aligned for cp.async and 32-byte aligned at every 16th row for WMMA); fp32 tiles by 4 floats.
#pragma once

#include <cstddef>
#include <type_traits>

#include "kernels/cuda/hd.cuh"

namespace tessel::cuda {

template <typename S, int D>
struct AttnCfg {
  static constexpr bool kBf16 = std::is_same_v<S, bf16>;
  static constexpr int kThreads = 128;
  static constexpr int kPadS = 16 / static_cast<int>(sizeof(S));  // elements
  static constexpr int kPadF = 4;
  static constexpr int kLdD = D + kPadS;  // S-typed (rows, D) tiles
  static constexpr int kFwdBr = kBf16 ? 64 : 32;
  static constexpr int kFwdBc = kBf16 ? (D <= 64 ? 64 : 32) : 32;
  static constexpr int kKvBc = kBf16 ? 64 : 32;  // keys per dK/dV block
  static constexpr int kKvBr = 32;               // query rows per step of the dK/dV block
  static_assert(D % 16 == 0 && D <= 128, "head dim must be a multiple of 16, at most 128");
};

// Consecutive 128-byte-aligned regions of dynamic shared memory; constexpr, so the launcher's
// size and the body's offsets come from the same arithmetic.
struct SmemPlan {
  std::size_t bytes = 0;
  template <typename U>
  constexpr std::size_t take(std::size_t n) {
    const std::size_t at = bytes;
    bytes = (bytes + n * sizeof(U) + 127) / 128 * 128;
    return at;
  }
};

template <typename S, int D>
struct FwdSmem {
  using C = AttnCfg<S, D>;
  static constexpr int Br = C::kFwdBr, Bc = C::kFwdBc;
  static constexpr int kLdS = Bc + C::kPadF, kLdP = Bc + C::kPadS, kLdO = D + C::kPadF;
  std::size_t q, k, v, s, p, o, alpha, l, bytes;
  constexpr FwdSmem() : q(), k(), v(), s(), p(), o(), alpha(), l(), bytes() {
    SmemPlan m;
    q = m.take<S>(std::size_t(Br) * C::kLdD);
    k = m.take<S>(std::size_t(Bc) * C::kLdD);
    v = m.take<S>(std::size_t(Bc) * C::kLdD);
    s = m.take<float>(std::size_t(Br) * kLdS);
    p = m.take<S>(std::size_t(Br) * kLdP);
    o = m.take<float>(std::size_t(Br) * kLdO);
    alpha = m.take<float>(Br);
    l = m.take<float>(Br);
    bytes = m.bytes;
  }
};

// dK/dV block: keys [k0, k0 + Bc) of one kv head, query tiles of Br rows.
template <typename S, int D>
struct KvSmem {
  using C = AttnCfg<S, D>;
  static constexpr int Br = C::kKvBr, Bc = C::kKvBc;
  static constexpr int kLdS = Bc + C::kPadF, kLdP = Bc + C::kPadS, kLdAcc = D + C::kPadF;
  std::size_t k, v, dk, dv, q, dout, s, dp, p, ds, lse, dvec, bytes;
  constexpr KvSmem()
      : k(), v(), dk(), dv(), q(), dout(), s(), dp(), p(), ds(), lse(), dvec(), bytes() {
    SmemPlan m;
    k = m.take<S>(std::size_t(Bc) * C::kLdD);
    v = m.take<S>(std::size_t(Bc) * C::kLdD);
    dk = m.take<float>(std::size_t(Bc) * kLdAcc);
    dv = m.take<float>(std::size_t(Bc) * kLdAcc);
    q = m.take<S>(std::size_t(Br) * C::kLdD);
    dout = m.take<S>(std::size_t(Br) * C::kLdD);
    s = m.take<float>(std::size_t(Br) * kLdS);
    dp = m.take<float>(std::size_t(Br) * kLdS);
    p = m.take<S>(std::size_t(Br) * kLdP);
    ds = m.take<S>(std::size_t(Br) * kLdP);
    lse = m.take<float>(Br);
    dvec = m.take<float>(Br);
    bytes = m.bytes;
  }
};

// dQ block: query rows [q0, q0 + Br) of one head, key tiles of Bc.
template <typename S, int D>
struct QSmem {
  using C = AttnCfg<S, D>;
  static constexpr int Br = C::kFwdBr, Bc = C::kFwdBc;
  static constexpr int kLdS = Bc + C::kPadF, kLdP = Bc + C::kPadS, kLdAcc = D + C::kPadF;
  std::size_t q, dout, k, v, dq, s, dp, ds, lse, dvec, bytes;
  constexpr QSmem() : q(), dout(), k(), v(), dq(), s(), dp(), ds(), lse(), dvec(), bytes() {
    SmemPlan m;
    q = m.take<S>(std::size_t(Br) * C::kLdD);
    dout = m.take<S>(std::size_t(Br) * C::kLdD);
    k = m.take<S>(std::size_t(Bc) * C::kLdD);
    v = m.take<S>(std::size_t(Bc) * C::kLdD);
    dq = m.take<float>(std::size_t(Br) * kLdAcc);
    s = m.take<float>(std::size_t(Br) * kLdS);
    dp = m.take<float>(std::size_t(Br) * kLdS);
    ds = m.take<S>(std::size_t(Br) * kLdP);
    lse = m.take<float>(Br);
    dvec = m.take<float>(Br);
    bytes = m.bytes;
  }
};

// Shape of one attention call, passed to every body.
struct AttnShape {
  int B, T, H, KH, D;
  float scale_log2;  // log2(e) / sqrt(D): scores go to exp2 directly
  float scale;       // 1 / sqrt(D)
  bool async16;      // every row start of q/k/v/out/dout is 16-byte aligned
};

}  // namespace tessel::cuda
