#include "executor/rotary.h"

#include "core/errors.h"

namespace tessel {

bool rope_scaling_executable(const std::string& kind) {
    return kind.empty() || kind == "llama3" || kind == "linear";
}

RopeFrequencies rope_frequencies(const ModelSpec& m) {
    RopeFrequencies f;
    f.theta = m.rope_theta;
    if (m.rope_scaling_type.empty()) return f;
    if (!rope_scaling_executable(m.rope_scaling_type))
        throw RuntimeError("rope_frequencies: tessel run has no kernel for rope_scaling_type " + m.rope_scaling_type);
    f.scaling = m.rope_scaling_type == "llama3" ? RopeScaling::llama3 : RopeScaling::linear;
    f.factor = m.rope_scaling_factor;
    f.low_freq_factor = m.rope_scaling_low_freq_factor;
    f.high_freq_factor = m.rope_scaling_high_freq_factor;
    f.original_context = m.rope_scaling_original_context;
    return f;
}

}  // namespace tessel
