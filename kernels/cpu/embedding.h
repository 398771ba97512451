// embedding: token embedding lookup (vocabulary-parallel) plus an optional learned position table.
//   out(B,T,C) = [vocab_start <= tok < vocab_end] * wte[tok - vocab_start] + wpe[t]  (wpe nullable)
// As in Megatron's VocabParallelEmbedding, tokens outside this shard's range contribute zero; the
// tensor-parallel ranks then sum their outputs. Pass wpe on ONE rank only (or on every rank when
// not vocabulary-parallel), else the positions are summed several times. For context parallel,
// pass wpe + pos_offset * C.
// Conventions: fp32 row-major; backward ACCUMULATES (+=) into dwte / dwpe (caller zeroes).
#pragma once

namespace tessel::cpu {

void encoder_forward(float* out,         // (B, T, C)
                     const int* tokens,  // (B, T)
                     const float* wte,   // (vocab_end - vocab_start, C), this shard's rows
                     const float* wpe,   // (T, C) or nullptr
                     int B, int T, int C, int vocab_start, int vocab_end);

// dwte[tok - vocab_start] += dout for tokens of this shard; dwpe[t] += sum_b dout[b,t].
// dwte or dwpe may be nullptr to skip.
void encoder_backward(float* dwte,        // (vocab_end - vocab_start, C) or nullptr
                      float* dwpe,        // (T, C) or nullptr
                      const float* dout,  // (B, T, C)
                      const int* tokens,  // (B, T)
                      int B, int T, int C, int vocab_start, int vocab_end);

}  // namespace tessel::cpu
