// Training tokens: a deterministic synthetic stream, or a token file. Sample i of a run (the
// i-th sequence of the whole run, counted over steps and the global batch) is the same on every
// layout, so one rank and any parallel layout train on identical data.
//   synthetic: a noisy walk through a fixed random permutation of the vocabulary — each next
//              token is perm[previous] with probability 3/4, else uniform — learnable, so losses
//              fall (towards about 0.25·ln V + 0.56 nats).
//   file:      flat little-endian uint16 token ids (nanoGPT's .bin), or llm.c's .bin (a 256-int32
//              header with magic 20240520, version 1, the token count, then uint16 ids); every id
//              must be below the vocabulary size. Sample i reads the window starting at
//              (i·T) mod (n - T) of the n tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

class TokenSource {
public:
    // Synthetic stream for `vocab` tokens.
    static TokenSource synthetic(std::int64_t vocab, std::uint64_t seed);
    // Reads and checks a token file (ids below vocab, at least seq_length + 1 tokens);
    // InputError names the file and the problem.
    static TokenSource from_file(const std::string& path, std::int64_t vocab, int seq_length);

    // inputs and targets (T each; targets are inputs shifted by one) of sample `index`.
    void sample(std::int64_t index, int T, int* inputs, int* targets) const;

    bool is_file() const { return !tokens_.empty(); }
    std::size_t size() const { return tokens_.size(); }

private:
    std::int64_t vocab_ = 0;
    std::uint64_t seed_ = 0;
    std::vector<std::uint16_t> tokens_;  // empty: synthetic
};

}  // namespace tessel
