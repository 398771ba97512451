// Error types shared by every folder. Each kind maps to one exit code at the CLI boundary:
// InputError -> 2 (bad input: names the file, the key and what was expected),
// RuntimeError -> 1 (the machine or a peer failed), NoPlanFits -> 3.
#pragma once
#include <stdexcept>
#include <string>

namespace tessel {

struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct RuntimeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct NoPlanFits : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// "FILE: key 'KEY': expected EXPECTED, got GOT" — the one shape every input message takes.
[[nodiscard]] InputError input_error(const std::string& file, const std::string& key,
                                     const std::string& expected, const std::string& got = "");

}  // namespace tessel
