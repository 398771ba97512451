#include "executor/init.h"

#include <cmath>

namespace tessel {
namespace {

// SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijective mix, good enough to give
// independent-looking values for consecutive counters.
std::uint64_t mix(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Uniform in (0, 1]: 24 bits, never 0, so log() below is finite.
double uniform(std::uint64_t bits) { return (double((bits >> 40) & 0xffffff) + 1.0) / 16777216.0; }

}  // namespace

std::uint64_t name_hash(const std::string& name) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : name) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

float init_value(std::uint64_t seed, std::uint64_t name_key, std::uint64_t index, const InitRule& rule) {
    if (rule.kind == InitRule::Kind::constant) return rule.value;
    const std::uint64_t key = mix(seed ^ mix(name_key));
    const std::uint64_t r = mix(key + 2 * index);
    const std::uint64_t s = mix(key + 2 * index + 1);
    const double u1 = uniform(r), u2 = uniform(s);
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    return float(z * rule.value);
}

}  // namespace tessel
