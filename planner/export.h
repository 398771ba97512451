// What an exporter writes: the config text (stdout under --emit) and notes for the user (stderr).
#pragma once
#include <string>
#include <vector>

namespace tessel {

struct Emitted {
    std::string text;
    std::vector<std::string> notes;
};

// Training length for the exported config; 0 leaves the framework's own (or the user's) choice.
struct ExportOptions {
    long long train_iters = 0;
};

}  // namespace tessel
