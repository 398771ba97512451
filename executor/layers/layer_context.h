// What every layer needs to run one microbatch on this rank: the backend, memory, the tensor- and
// context-parallel groups, and the local sizes. Token counts:
//   tokens       = B·T/cp, this rank's part of the microbatch (what column-parallel GEMMs see)
//   local_tokens = tokens / tp under sequence parallelism (the residual stream's shard), else tokens
// Context parallelism splits each sequence into 2·cp chunks and gives rank i chunks i and
// 2·cp-1-i (Megatron's load balancing of the causal mask); this rank's tokens are laid out
// [chunk][batch][position in chunk]. Without it there is one chunk, the whole (B, T) sequence.
// The sequence-parallel shard is a contiguous block of those token rows, so an all-gather over
// the TP group puts the activation back together with no reordering.
#pragma once

#include "core/model_spec.h"
#include "core/options.h"
#include "executor/communicator.h"
#include "executor/device_buffer.h"
#include "kernels/rope_frequencies.h"

namespace tessel {

struct LayerDims {
    int batch = 1, seq = 1, hidden = 1;
    int tokens = 1, local_tokens = 1;
    int heads = 1, kv_heads = 1, head_dim = 1;  // local to this TP rank
    int ffn = 1;                                // local, per projection
    int vocab_start = 0, vocab_end = 0;         // this rank's vocabulary shard
    int cp = 1, cp_rank = 0;                    // context parallelism

    int num_chunks() const { return cp > 1 ? 2 : 1; }
    int chunk_len() const { return cp > 1 ? seq / (2 * cp) : seq; }
    // Position in the full sequence of this rank's chunk j's first token.
    int chunk_position(int j) const { return cp > 1 ? (j == 0 ? cp_rank : 2 * cp - 1 - cp_rank) * chunk_len() : 0; }
};

struct LayerContext {
    Backend* backend = nullptr;
    DeviceMemory mem;
    Communicator* tp = nullptr;
    Communicator* cp = nullptr;  // the context-parallel group (nullptr when cp = 1)
    const ModelSpec* model = nullptr;
    LayerDims dims;
    bool sequence_parallel = false;
    Recompute recompute = Recompute::none;
    RopeFrequencies rope;  // the model's RoPE base and scaling (rope_frequencies)

    DeviceArray<float> floats(std::size_t n, bool zeroed = false) const {
        return DeviceArray<float>(mem, n, MemoryKind::activations, zeroed);
    }
    int tp_size() const { return tp ? tp->size() : 1; }
    int tp_rank() const { return tp ? tp->rank() : 0; }
    // The model's LayerNorm / RMSNorm epsilon (QK norms use it too, as Qwen3 and OLMo 2 do).
    float norm_epsilon() const { return static_cast<float>(model->norm_epsilon); }
};

}  // namespace tessel
