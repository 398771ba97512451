// embedding: forward is per element. Backward: dwpe[t] sums its B rows in order (per element);
// dwte sorts the (shard-local token, position) pairs by token (stable radix sort), then the first
// position of each run of equal tokens sums the run's dout rows in position order, in fp32, and
// adds the total to that token's row once. Tokens outside the shard sort last and are skipped.
#pragma once

#include <cstddef>

#include "kernels/cuda/flat.cuh"
#include "kernels/cuda/hd.cuh"

namespace tessel::cuda {
namespace ops {

template <typename S>
struct EmbedFwd {  // i over (B*T, C)
  S* out;
  const int* tokens;
  const S* wte;
  const S* wpe;  // may be nullptr
  std::size_t T, C;
  int vocab_start, vocab_end;
  TESSEL_HD void operator()(std::size_t i) const {
    const std::size_t bt = i / C, c = i - bt * C;
    const int tok = tokens[bt];
    float v = 0.0f;
    if (tok >= vocab_start && tok < vocab_end)
      v = to_f32(wte[static_cast<std::size_t>(tok - vocab_start) * C + c]);
    if (wpe != nullptr) v += to_f32(wpe[(bt % T) * C + c]);
    out[i] = from_f32<S>(v);
  }
};

template <typename S>
struct EmbedBwdPos {  // i over (T, C): dwpe[t, c] += sum_b dout[b, t, c]
  S* dwpe;
  const S* dout;
  std::size_t B, T, C;
  TESSEL_HD void operator()(std::size_t i) const {
    float s = 0.0f;
    for (std::size_t b = 0; b < B; ++b) s += to_f32(dout[b * T * C + i]);
    dwpe[i] = from_f32<S>(to_f32(dwpe[i]) + s);
  }
};

struct EmbedKeys {  // i over B*T: key = shard-local token row, or `sentinel` when not ours
  int* keys;
  int* vals;
  const int* tokens;
  int vocab_start, vocab_end, sentinel;
  TESSEL_HD void operator()(std::size_t i) const {
    const int tok = tokens[i];
    keys[i] = (tok >= vocab_start && tok < vocab_end) ? tok - vocab_start : sentinel;
    vals[i] = static_cast<int>(i);
  }
};

template <typename S>
struct EmbedBwdTok {  // i over (B*T, C); only the first element of each run of keys works
  S* dwte;
  const S* dout;
  const int* keys;  // sorted
  const int* vals;  // positions, in the sorted order
  std::size_t n, C;
  int sentinel;
  TESSEL_HD void operator()(std::size_t i) const {
    const std::size_t j = i / C, c = i - j * C;
    const int key = keys[j];
    if (key == sentinel || (j > 0 && keys[j - 1] == key)) return;
    float s = 0.0f;
    for (std::size_t k = j; k < n && keys[k] == key; ++k)
      s += to_f32(dout[static_cast<std::size_t>(vals[k]) * C + c]);
    S* row = dwte + static_cast<std::size_t>(key) * C;
    row[c] = from_f32<S>(to_f32(row[c]) + s);
  }
};

}  // namespace ops

namespace impl {

template <class Exec, typename S>
void encoder_forward(Exec& ex, S* out, const int* tokens, const S* wte, const S* wpe, int B, int T,
                     int C, int vocab_start, int vocab_end) {
  launch_flat(ex, static_cast<std::size_t>(B) * T * C,
              ops::EmbedFwd<S>{out, tokens, wte, wpe, static_cast<std::size_t>(T),
                               static_cast<std::size_t>(C), vocab_start, vocab_end});
}

template <class Exec, typename S>
void encoder_backward(Exec& ex, S* dwte, S* dwpe, const S* dout, const int* tokens, int B, int T,
                      int C, int vocab_start, int vocab_end) {
  const std::size_t bt = static_cast<std::size_t>(B) * T;
  if (dwpe != nullptr)
    launch_flat(ex, static_cast<std::size_t>(T) * C,
                ops::EmbedBwdPos<S>{dwpe, dout, static_cast<std::size_t>(B),
                                    static_cast<std::size_t>(T), static_cast<std::size_t>(C)});
  if (dwte == nullptr || bt == 0) return;
  const int sentinel = vocab_end - vocab_start;  // sorts after every real row
  int end_bit = 1;
  while (end_bit < 31 && (1 << end_bit) <= sentinel) ++end_bit;
  auto keys = ex.template scratch<int>(bt);
  auto vals = ex.template scratch<int>(bt);
  auto skeys = ex.template scratch<int>(bt);
  auto svals = ex.template scratch<int>(bt);
  launch_flat(ex, bt, ops::EmbedKeys{keys.get(), vals.get(), tokens, vocab_start, vocab_end,
                                     sentinel});
  ex.sort_pairs(keys.get(), skeys.get(), vals.get(), svals.get(), static_cast<int>(bt), end_bit);
  launch_flat(ex, bt * C,
              ops::EmbedBwdTok<S>{dwte, dout, skeys.get(), svals.get(), bt,
                                  static_cast<std::size_t>(C), sentinel});
}

}  // namespace impl
}  // namespace tessel::cuda
