// The rotation a model's RoPE makes, for the executor's kernels: its base and, where the model
// stretches RoPE past its pretraining context, the scaling the kernels compute (Llama 3.1's llama3
// bands and linear position interpolation).
#pragma once

#include <string>

#include "core/model_spec.h"
#include "kernels/rope_frequencies.h"

namespace tessel {

// Whether tessel run rotates by this rope_scaling_type ("" for none, llama3, linear).
bool rope_scaling_executable(const std::string& rope_scaling_type);

// The model's frequencies; a kind rope_scaling_executable refuses is a RuntimeError here
// (check_model_executable reports it to the user first).
RopeFrequencies rope_frequencies(const ModelSpec& m);

}  // namespace tessel
