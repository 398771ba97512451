// Parameter tensors as this rank holds them, and the flat buffer they live in.
//
// TensorSpec says where a local tensor's values come from in the full model: one or more
// rectangles of named full tensors, stacked by rows (a fused [gate | up] shard is two). With
// init.h's counter-based values, a rank fills exactly its slice and every layout starts from the
// same full model.
//
// ParamBuffer is one flat array of tensors (one transformer layer, the embedding table, ...),
// sharded over the data-parallel group by ZeRO's rule (sharding.h) according to the stage:
//   stage 0: full params, full grads, full AdamW moments
//   stage 1: full params, full grads, moments for this rank's shard
//   stage 2: full params, a gradient shard (full gradients exist only while a backward runs)
//   stage 3: a parameter shard too (full parameters exist only while acquired)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "executor/communicator.h"
#include "executor/device_buffer.h"
#include "executor/init.h"
#include "executor/sharding.h"

namespace tessel {

struct TensorSource {
    std::string full_name;
    std::size_t full_cols = 1;  // row length of the full tensor
    Range rows, cols;           // the rectangle taken
    InitRule init;
};

struct TensorSpec {
    std::string name;
    std::vector<TensorSource> sources;
    bool weight_decay = false;    // AdamW decay: matrices (embedding tables included), not biases or norms
    bool tp_partial_grad = false; // each TP rank holds part of the gradient (sequence-parallel norms, QK norms)
    bool tied_embedding = false;  // the token table, whose copies on the first and last stage sum grads
    std::size_t count() const;
};

// Builders for the usual slices of a full (rows x cols) tensor.
TensorSpec replicated_tensor(const std::string& name, std::size_t rows, std::size_t cols, InitRule init);
// Rows [split_range(rows, parts, index)]: a column-parallel weight (out x in) or its bias, or a
// vocabulary shard of an embedding table.
TensorSpec row_shard(const std::string& name, std::size_t rows, std::size_t cols, int parts, int index, InitRule init);
// Columns [split_range(cols, parts, index)]: a row-parallel weight (out x in).
TensorSpec column_shard(const std::string& name, std::size_t rows, std::size_t cols, int parts, int index,
                        InitRule init);

// Fills out[0 .. range.size()) with elements [range.begin, range.end) of the local tensor.
void fill_initial_values(const TensorSpec& spec, std::uint64_t seed, Range range, float* out);

// Where a tensor sits in its buffer.
struct TensorSlot {
    std::size_t offset = 0, count = 0;
    bool present() const { return count > 0; }
};

class ParamBuffer {
public:
    explicit ParamBuffer(std::string name) : name_(std::move(name)) {}
    ParamBuffer(ParamBuffer&&) = default;
    ParamBuffer& operator=(ParamBuffer&&) = default;

    // Before materialize(): appends a tensor (an empty spec gives an absent slot).
    TensorSlot add(TensorSpec spec);

    // Allocates by ZeRO stage over `dp` (nullptr = no sharding) and writes the initial values.
    void materialize(const DeviceMemory& mem, int zero_stage, Communicator* dp, std::uint64_t seed);

    const std::string& name() const { return name_; }
    const std::vector<TensorSpec>& tensors() const { return specs_; }
    const std::vector<TensorSlot>& slots() const { return slots_; }
    std::size_t count() const { return count_; }
    int zero_stage() const { return zero_stage_; }

    // ---- full views for the layers ----
    const float* param(TensorSlot s) const;  // ZeRO-3: only between acquire and release
    float* grad(TensorSlot s);               // ZeRO-2/3: only between begin_grads and end_grads
    // The same, or nullptr for an absent slot (a bias the model does not have).
    const float* param_or_null(TensorSlot s) const { return s.present() ? param(s) : nullptr; }
    float* grad_or_null(TensorSlot s) { return s.present() ? grad(s) : nullptr; }
    // ZeRO-3: all-gathers the full parameters (counted: nested acquires share one copy).
    void acquire_params();
    void release_params();
    // ZeRO-2/3: a zeroed full-gradient scratch; end_grads reduce-scatters it over the data-parallel
    // group into this rank's gradient shard (+=) and frees it.
    void begin_grads();
    void end_grads();

    // ---- the optimizer step ----
    // ZeRO-0: all-reduce the full gradients; ZeRO-1: reduce-scatter them into the owned shard;
    // ZeRO-2/3: already reduced by end_grads.
    void reduce_grads();
    Range owned() const { return owned_; }  // in full-buffer coordinates
    float* owned_params();
    float* owned_grads();
    float* moment1() { return m_.data(); }
    float* moment2() { return v_.data(); }
    // ZeRO-1/2: all-gathers the updated shards into the full parameters; then zeroes gradients.
    void finish_step();

    // Host copy of the full parameters (gathered under ZeRO-3), for tests and checks.
    std::vector<float> download_params();
    std::size_t state_bytes(MemoryKind kind) const;

private:
    std::string name_;
    std::vector<TensorSpec> specs_;
    std::vector<TensorSlot> slots_;
    std::size_t count_ = 0, padded_ = 0;
    int zero_stage_ = 0;
    Communicator* dp_ = nullptr;
    DeviceMemory mem_;
    Range owned_;
    int acquired_ = 0, grads_open_ = 0;
    DeviceArray<float> params_;       // full (ZeRO 0-2) or shard (ZeRO-3)
    DeviceArray<float> full_params_;  // ZeRO-3 while acquired
    DeviceArray<float> grads_;        // full (ZeRO 0-1) or shard (ZeRO 2-3)
    DeviceArray<float> grad_scratch_; // ZeRO-2/3 while a backward runs
    DeviceArray<float> reduced_;      // ZeRO-1: the reduce-scattered shard during the step
    DeviceArray<float> m_, v_;

    int dp_size() const { return dp_ ? dp_->size() : 1; }
    int dp_rank() const { return dp_ ? dp_->rank() : 0; }
};

}  // namespace tessel
