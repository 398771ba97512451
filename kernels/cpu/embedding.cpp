// embedding: out(B,T,C) = wte[tok - vocab_start] (if tok is in this shard, else 0) + wpe[t].
// Backward scatters dout(B,T,C) into dwte (own shard rows) and dwpe (T,C), accumulating.
#include "kernels/cpu/embedding.h"

#include <cstddef>
#include <cstring>

namespace tessel::cpu {

void encoder_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B,
                     int T, int C, int vocab_start, int vocab_end) {
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const std::size_t bt = static_cast<std::size_t>(b) * T + t;
      float* o = out + bt * C;
      const int tok = tokens[bt];
      const bool own = tok >= vocab_start && tok < vocab_end;
      const float* e = own ? wte + static_cast<std::size_t>(tok - vocab_start) * C : nullptr;
      const float* p = wpe != nullptr ? wpe + static_cast<std::size_t>(t) * C : nullptr;
      if (e != nullptr && p != nullptr) {
        for (int c = 0; c < C; ++c) o[c] = e[c] + p[c];
      } else if (e != nullptr) {
        std::memcpy(o, e, sizeof(float) * C);
      } else if (p != nullptr) {
        std::memcpy(o, p, sizeof(float) * C);
      } else {
        std::memset(o, 0, sizeof(float) * C);
      }
    }
  }
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T,
                      int C, int vocab_start, int vocab_end) {
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const std::size_t bt = static_cast<std::size_t>(b) * T + t;
      const float* d = dout + bt * C;
      const int tok = tokens[bt];
      if (dwte != nullptr && tok >= vocab_start && tok < vocab_end) {
        float* g = dwte + static_cast<std::size_t>(tok - vocab_start) * C;
        for (int c = 0; c < C; ++c) g[c] += d[c];
      }
      if (dwpe != nullptr) {
        float* g = dwpe + static_cast<std::size_t>(t) * C;
        for (int c = 0; c < C; ++c) g[c] += d[c];
      }
    }
  }
}

}  // namespace tessel::cpu
