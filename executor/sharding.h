// Sharding arithmetic: how n elements split over `parts` ranks. Two rules:
//   split_range  — balanced contiguous ranges (the first n % parts ranks get one more), for rows
//                  or columns of a weight matrix split over tensor-parallel ranks;
//   padded_shard — ZeRO's rule: the flat buffer is padded to a multiple of `parts` and every rank
//                  owns one equal shard, so all-gather and reduce-scatter see equal pieces.
#pragma once

#include <algorithm>
#include <cstddef>

namespace tessel {

struct Range {
    std::size_t begin = 0, end = 0;
    std::size_t size() const { return end - begin; }
    bool empty() const { return end <= begin; }
    bool operator==(const Range&) const = default;
};

inline Range split_range(std::size_t n, int parts, int index) {
    const std::size_t base = n / std::size_t(parts), extra = n % std::size_t(parts);
    const std::size_t i = std::size_t(index);
    const std::size_t begin = i * base + std::min(i, extra);
    return {begin, begin + base + (i < extra ? 1 : 0)};
}

// Elements per shard once n is padded to a multiple of parts.
inline std::size_t padded_shard_size(std::size_t n, int parts) {
    return (n + std::size_t(parts) - 1) / std::size_t(parts);
}

inline Range padded_shard(std::size_t n, int parts, int index) {
    const std::size_t s = padded_shard_size(n, parts);
    return {std::size_t(index) * s, std::size_t(index + 1) * s};
}

inline Range intersect(const Range& a, const Range& b) {
    const std::size_t lo = std::max(a.begin, b.begin), hi = std::min(a.end, b.end);
    return hi > lo ? Range{lo, hi} : Range{lo, lo};
}

}  // namespace tessel
