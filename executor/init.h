// Deterministic initialisation that does not depend on the layout: element i of the full tensor
// NAME takes the value of a counter-based generator at (seed, NAME, i), so every rank computes
// exactly the elements of its slice and every layout starts from identical weights.
//   normal(std): Box-Muller over two 24-bit uniforms drawn from SplitMix64(seed ^ hash(NAME), i).
#pragma once

#include <cstdint>
#include <string>

namespace tessel {

struct InitRule {
    enum class Kind { normal, constant } kind = Kind::normal;
    float value = 0.02f;  // the standard deviation (normal) or the constant
    static InitRule normal(float std) { return {Kind::normal, std}; }
    static InitRule constant(float c) { return {Kind::constant, c}; }
};

// A 64-bit hash of a tensor name (FNV-1a), part of the generator's key.
std::uint64_t name_hash(const std::string& name);

// The value of element `index` of the full tensor named `name`.
float init_value(std::uint64_t seed, std::uint64_t name_key, std::uint64_t index, const InitRule& rule);

}  // namespace tessel
