#include "executor/token_data.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

namespace {

std::uint64_t mix(std::uint64_t z) {  // SplitMix64's finaliser
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// perm[x] for a fixed random permutation, computed without a table: an affine map with an odd
// multiplier is a bijection modulo a power of two; cycle-walking keeps it inside [0, V).
std::int64_t permute(std::int64_t x, std::int64_t vocab, std::uint64_t seed) {
    std::uint64_t size = 1;
    while (size < std::uint64_t(vocab)) size <<= 1;
    const std::uint64_t a = (mix(seed) | 1) & (size - 1);  // odd (or 0 when size is 1)
    const std::uint64_t b = mix(seed + 1) & (size - 1);
    std::uint64_t y = std::uint64_t(x);
    do {
        y = (a * y + b) & (size - 1);
    } while (y >= std::uint64_t(vocab));
    return std::int64_t(y);
}

constexpr std::int32_t kLlmcMagic = 20240520;  // llm.c dev/data/data_common.py write_datafile

}  // namespace

TokenSource TokenSource::synthetic(std::int64_t vocab, std::uint64_t seed) {
    TokenSource s;
    s.vocab_ = vocab;
    s.seed_ = mix(seed ^ 0x7465737365ull);  // a stream apart from the weights' generator
    return s;
}

TokenSource TokenSource::from_file(const std::string& path, std::int64_t vocab, int seq_length) {
    // An ifstream opens a folder and fails only when read.
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw InputError(fmt::format("{}: is a directory; expected a token file (uint16 tokens, or llm.c's .bin)", path));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot open the token file", path));
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t offset = 0, count = 0;
    std::int32_t header[3] = {0, 0, 0};
    if (bytes.size() >= 1024) std::memcpy(header, bytes.data(), sizeof(header));
    if (header[0] == kLlmcMagic) {
        if (header[1] != 1)
            throw InputError(fmt::format("{}: llm.c token file version {}, expected 1 (uint16 tokens)", path, header[1]));
        offset = 1024;
        count = std::size_t(header[2]);
        if (header[2] < 0 || (bytes.size() - offset) / 2 < count)
            throw InputError(fmt::format("{}: header says {} tokens, the file holds {}", path, header[2],
                                         (bytes.size() - offset) / 2));
    } else {
        if (bytes.size() % 2 != 0)
            throw InputError(fmt::format("{}: {} bytes is not a whole number of uint16 tokens", path, bytes.size()));
        count = bytes.size() / 2;
    }
    TokenSource s;
    s.vocab_ = vocab;
    s.tokens_.resize(count);
    if (count) std::memcpy(s.tokens_.data(), bytes.data() + offset, count * 2);
    for (std::size_t i = 0; i < count; ++i)
        if (std::int64_t(s.tokens_[i]) >= vocab)
            throw InputError(fmt::format("{}: token {} at position {} is not below the model's vocabulary size {}",
                                         path, s.tokens_[i], i, vocab));
    if (count < std::size_t(seq_length) + 1)
        throw InputError(fmt::format("{}: {} tokens, fewer than one sequence of {} plus its next-token target", path,
                                     count, seq_length));
    return s;
}

void TokenSource::sample(std::int64_t index, int T, int* inputs, int* targets) const {
    if (!tokens_.empty()) {
        const std::size_t n = tokens_.size();
        if (n < std::size_t(T) + 1)
            throw InputError(fmt::format("token file of {} tokens is shorter than a sequence of {} plus its target", n, T));
        const std::size_t start = std::size_t(index) * std::size_t(T) % (n - std::size_t(T));
        for (int t = 0; t < T; ++t) {
            inputs[t] = tokens_[start + t];
            targets[t] = tokens_[start + t + 1];
        }
        return;
    }
    const std::uint64_t key = mix(seed_ + std::uint64_t(index));
    std::int64_t tok = std::int64_t(mix(key) % std::uint64_t(vocab_));
    for (int t = 0; t <= T; ++t) {
        if (t < T) inputs[t] = int(tok);
        if (t > 0) targets[t - 1] = int(tok);
        const std::uint64_t r = mix(key + 1 + std::uint64_t(t));
        tok = (r & 3) != 0 ? permute(tok, vocab_, seed_) : std::int64_t((r >> 2) % std::uint64_t(vocab_));
    }
}

}  // namespace tessel
