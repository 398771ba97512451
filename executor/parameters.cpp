#include "executor/parameters.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

std::size_t TensorSpec::count() const {
    std::size_t n = 0;
    for (const auto& s : sources) n += s.rows.size() * s.cols.size();
    return n;
}

TensorSpec replicated_tensor(const std::string& name, std::size_t rows, std::size_t cols, InitRule init) {
    return TensorSpec{name, {{name, cols, {0, rows}, {0, cols}, init}}};
}

TensorSpec row_shard(const std::string& name, std::size_t rows, std::size_t cols, int parts, int index,
                     InitRule init) {
    return TensorSpec{name, {{name, cols, split_range(rows, parts, index), {0, cols}, init}}};
}

TensorSpec column_shard(const std::string& name, std::size_t rows, std::size_t cols, int parts, int index,
                        InitRule init) {
    return TensorSpec{name, {{name, cols, {0, rows}, split_range(cols, parts, index), init}}};
}

void fill_initial_values(const TensorSpec& spec, std::uint64_t seed, Range range, float* out) {
    std::size_t local = 0;  // index of the first element of the current source in the local tensor
    for (const auto& src : spec.sources) {
        const std::size_t w = src.cols.size(), n = src.rows.size() * w;
        const Range mine = intersect(range, {local, local + n});
        const std::uint64_t key = name_hash(src.full_name);
        for (std::size_t i = mine.begin; i < mine.end; ++i) {
            const std::size_t r = src.rows.begin + (i - local) / w, c = src.cols.begin + (i - local) % w;
            out[i - range.begin] = init_value(seed, key, r * src.full_cols + c, src.init);
        }
        local += n;
    }
}

TensorSlot ParamBuffer::add(TensorSpec spec) {
    if (padded_ != 0) throw RuntimeError("ParamBuffer::add after materialize on " + name_);
    TensorSlot slot{count_, spec.count()};
    count_ += slot.count;
    specs_.push_back(std::move(spec));
    slots_.push_back(slot);
    return slot;
}

void ParamBuffer::materialize(const DeviceMemory& mem, int zero_stage, Communicator* dp, std::uint64_t seed) {
    mem_ = mem;
    zero_stage_ = zero_stage;
    dp_ = dp;
    const int d = dp_size();
    const std::size_t shard = padded_shard_size(count_, d);
    padded_ = shard * std::size_t(d);
    owned_ = zero_stage_ == 0 ? Range{0, count_} : padded_shard(count_, d, dp_rank());
    const Range stored = zero_stage_ >= 3 ? owned_ : Range{0, padded_};

    // Initial values of what this rank stores; the padding stays zero.
    std::vector<float> host(stored.size(), 0.0f);
    for (std::size_t t = 0; t < specs_.size(); ++t) {
        const Range r = intersect(stored, {slots_[t].offset, slots_[t].offset + slots_[t].count});
        if (r.empty()) continue;
        fill_initial_values(specs_[t], seed, {r.begin - slots_[t].offset, r.end - slots_[t].offset},
                            host.data() + (r.begin - stored.begin));
    }
    params_ = DeviceArray<float>(mem_, stored.size(), MemoryKind::weights);
    mem_.backend->upload(params_.data(), host.data(), host.size() * sizeof(float));

    const std::size_t grad_n = zero_stage_ >= 2 ? owned_.size() : (zero_stage_ == 0 ? count_ : padded_);
    grads_ = DeviceArray<float>(mem_, grad_n, MemoryKind::gradients, true);
    m_ = DeviceArray<float>(mem_, owned_.size(), MemoryKind::optimizer, true);
    v_ = DeviceArray<float>(mem_, owned_.size(), MemoryKind::optimizer, true);
}

const float* ParamBuffer::param(TensorSlot s) const {
    if (zero_stage_ < 3) return params_.data() + s.offset;
    if (acquired_ == 0) throw RuntimeError("parameters of " + name_ + " used outside acquire_params (ZeRO-3)");
    return full_params_.data() + s.offset;
}

float* ParamBuffer::grad(TensorSlot s) {
    if (zero_stage_ < 2) return grads_.data() + s.offset;
    if (grads_open_ == 0) throw RuntimeError("gradients of " + name_ + " used outside begin_grads (ZeRO-2/3)");
    return grad_scratch_.data() + s.offset;
}

void ParamBuffer::acquire_params() {
    if (zero_stage_ < 3) return;
    if (acquired_++ > 0) return;
    full_params_ = DeviceArray<float>(mem_, padded_, MemoryKind::buffers);
    const std::size_t shard = owned_.size();
    if (dp_) {
        dp_->all_gather(params_.data(), full_params_.data(), shard);
    } else {
        mem_.backend->copy(full_params_.data(), params_.data(), shard * sizeof(float));
    }
}

void ParamBuffer::release_params() {
    if (zero_stage_ < 3) return;
    if (--acquired_ == 0) full_params_.reset();
}

void ParamBuffer::begin_grads() {
    if (zero_stage_ < 2) return;
    if (grads_open_++ > 0) return;
    grad_scratch_ = DeviceArray<float>(mem_, padded_, MemoryKind::buffers, true);
}

void ParamBuffer::end_grads() {
    if (zero_stage_ < 2) return;
    if (--grads_open_ > 0) return;
    const std::size_t shard = owned_.size();
    DeviceArray<float> reduced(mem_, shard, MemoryKind::buffers);
    if (dp_) {
        dp_->reduce_scatter(grad_scratch_.data(), reduced.data(), shard);
    } else {
        mem_.backend->copy(reduced.data(), grad_scratch_.data(), shard * sizeof(float));
    }
    mem_.backend->add_inplace(grads_.data(), reduced.data(), shard);
    grad_scratch_.reset();
}

void ParamBuffer::reduce_grads() {
    if (zero_stage_ == 0) {
        if (dp_) dp_->all_reduce(grads_.data(), count_, ReduceOp::sum);
    } else if (zero_stage_ == 1) {
        reduced_ = DeviceArray<float>(mem_, owned_.size(), MemoryKind::buffers);
        if (dp_) {
            dp_->reduce_scatter(grads_.data(), reduced_.data(), owned_.size());
        } else {
            mem_.backend->copy(reduced_.data(), grads_.data(), owned_.size() * sizeof(float));
        }
    }
}

float* ParamBuffer::owned_params() { return zero_stage_ >= 3 ? params_.data() : params_.data() + owned_.begin; }

float* ParamBuffer::owned_grads() {
    if (zero_stage_ == 1) return reduced_.data();
    return grads_.data();  // ZeRO-0: the full buffer is owned; ZeRO-2/3: the shard
}

void ParamBuffer::finish_step() {
    if ((zero_stage_ == 1 || zero_stage_ == 2) && dp_)
        dp_->all_gather(params_.data() + owned_.begin, params_.data(), owned_.size());
    reduced_.reset();
    grads_.zero();
}

std::vector<float> ParamBuffer::download_params() {
    acquire_params();
    std::vector<float> host(count_);
    mem_.backend->download(host.data(), param(TensorSlot{0, count_}), count_ * sizeof(float));
    release_params();
    return host;
}

std::size_t ParamBuffer::state_bytes(MemoryKind kind) const {
    switch (kind) {
        case MemoryKind::weights: return params_.bytes();
        case MemoryKind::gradients: return grads_.bytes();
        case MemoryKind::optimizer: return m_.bytes() + v_.bytes();
        default: return 0;
    }
}

}  // namespace tessel
