// DeviceArray<T>: an owning array of T in a Backend's memory, and MemoryTracker, which counts
// what the executor holds by kind so that a run reports its high-water mark and what filled it.
#pragma once

#include <array>
#include <cstddef>
#include <utility>

#include "kernels/backend.h"

namespace tessel {

enum class MemoryKind { weights, gradients, optimizer, activations, buffers };
inline constexpr int kMemoryKinds = 5;

// Bytes in use per kind; at every new total peak it snapshots the breakdown, so the figures at
// the peak add up to the peak.
class MemoryTracker {
public:
    void add(MemoryKind kind, std::size_t bytes) {
        in_use_[int(kind)] += bytes;
        total_ += bytes;
        if (total_ > peak_) {
            peak_ = total_;
            at_peak_ = in_use_;
        }
    }
    void remove(MemoryKind kind, std::size_t bytes) {
        in_use_[int(kind)] -= bytes;
        total_ -= bytes;
    }
    std::size_t in_use() const { return total_; }
    std::size_t peak() const { return peak_; }
    std::size_t at_peak(MemoryKind kind) const { return at_peak_[int(kind)]; }
    std::size_t in_use(MemoryKind kind) const { return in_use_[int(kind)]; }

private:
    std::array<std::size_t, kMemoryKinds> in_use_{}, at_peak_{};
    std::size_t total_ = 0, peak_ = 0;
};

// Everything the layers allocate goes through one of these; the tracker (optional) is told.
struct DeviceMemory {
    Backend* backend = nullptr;
    MemoryTracker* tracker = nullptr;
};

template <typename T>
class DeviceArray {
public:
    DeviceArray() = default;
    DeviceArray(const DeviceMemory& mem, std::size_t n, MemoryKind kind, bool zeroed = false)
        : mem_(mem), kind_(kind), n_(n) {
        p_ = static_cast<T*>(mem_.backend->allocate(bytes()));
        if (mem_.tracker) mem_.tracker->add(kind_, bytes());
        if (zeroed) mem_.backend->fill_zero(p_, bytes());
    }
    DeviceArray(DeviceArray&& o) noexcept { *this = std::move(o); }
    DeviceArray& operator=(DeviceArray&& o) noexcept {
        if (this != &o) {
            reset();
            mem_ = o.mem_;
            kind_ = o.kind_;
            p_ = std::exchange(o.p_, nullptr);
            n_ = std::exchange(o.n_, 0);
        }
        return *this;
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    ~DeviceArray() { reset(); }

    void reset() noexcept {
        if (p_ != nullptr || n_ != 0) {
            mem_.backend->release(p_, bytes());
            if (mem_.tracker) mem_.tracker->remove(kind_, bytes());
        }
        p_ = nullptr;
        n_ = 0;
    }
    void zero() { mem_.backend->fill_zero(p_, bytes()); }

    T* data() { return p_; }
    const T* data() const { return p_; }
    std::size_t size() const { return n_; }
    std::size_t bytes() const { return n_ * sizeof(T); }
    bool empty() const { return n_ == 0; }

private:
    DeviceMemory mem_;
    MemoryKind kind_ = MemoryKind::activations;
    T* p_ = nullptr;
    std::size_t n_ = 0;
};

}  // namespace tessel
