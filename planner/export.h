// What an exporter writes: the config text (stdout under --emit) and notes for the user (stderr).
#pragma once
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/cluster_spec.h"

namespace tessel {

struct Emitted {
    std::string text;
    std::vector<std::string> notes;
};

// Training length for the exported config; 0 leaves the framework's own (or the user's) choice.
// (Whether the search priced TP overlapped with its GEMMs is the plan's own tp_comm_overlap.)
struct ExportOptions {
    long long train_iters = 0;
};

// fp8 GEMMs need tensor cores of compute capability 8.9 or newer (Transformer Engine, torchao's
// Float8Linear): on a GPU without an fp8 peak (A100) the plan ran its GEMMs at the bf16 peak and
// every export trains in bf16. An fp8 plan's note: `with_fp8` where the GPU has fp8, else that.
inline std::string fp8_note(const ClusterSpec& c, const std::string& with_fp8) {
    if (c.gpu.has_own_peak(Precision::fp8)) return with_fp8;
    return fmt::format("fp8: the {} has no fp8 peak (fp8 GEMMs need compute capability 8.9 or newer), so the plan ran "
                       "its GEMMs at the bf16 peak and the config trains in bf16",
                       c.gpu.name);
}

// The notes as comment lines for a script or TOML, so that they travel with the file they are
// about (the command line prints them too).
inline std::string note_comments(const std::vector<std::string>& notes) {
    std::string s;
    for (const auto& n : notes) s += "# note: " + n + "\n";
    return s;
}

}  // namespace tessel
