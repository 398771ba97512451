// What every layer needs to run one microbatch on this rank: the backend, memory, the
// tensor-parallel group, and the local sizes. Token counts:
//   tokens       = B·T, the microbatch's full sequence (what column-parallel GEMMs see)
//   local_tokens = tokens / tp under sequence parallelism (the residual stream's shard), else tokens
// The sequence shard is a contiguous block of the flattened (B·T) token rows, so an all-gather over
// the TP group puts the (B, T, C) activation back together with no reordering.
#pragma once

#include "core/model_spec.h"
#include "core/options.h"
#include "executor/communicator.h"
#include "executor/device_buffer.h"

namespace tessel {

struct LayerDims {
    int batch = 1, seq = 1, hidden = 1;
    int tokens = 1, local_tokens = 1;
    int heads = 1, kv_heads = 1, head_dim = 1;  // local to this TP rank
    int ffn = 1;                                // local, per projection
    int vocab_start = 0, vocab_end = 0;         // this rank's vocabulary shard
};

struct LayerContext {
    Backend* backend = nullptr;
    DeviceMemory mem;
    Communicator* tp = nullptr;
    const ModelSpec* model = nullptr;
    LayerDims dims;
    bool sequence_parallel = false;
    Recompute recompute = Recompute::none;
    float rope_theta = 10000.0f;  // Llama 2's base (Touvron et al. 2023); ModelSpec carries none

    DeviceArray<float> floats(std::size_t n, bool zeroed = false) const {
        return DeviceArray<float>(mem, n, MemoryKind::activations, zeroed);
    }
    int tp_size() const { return tp ? tp->size() : 1; }
    int tp_rank() const { return tp ? tp->rank() : 0; }
};

}  // namespace tessel
