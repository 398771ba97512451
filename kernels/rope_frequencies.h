// RopeFrequencies: the rotation frequencies of rotary position embedding, shared by the CPU and
// CUDA kernels so that both rotate by the same angles. Pair i of a head of dimension D turns by
// position x inv_freq(i), inv_freq(i) = theta^(-2i/D) (Su et al. 2021), unless the model stretches
// RoPE past its pretraining context:
//   linear: every frequency divided by the factor (position interpolation, Chen et al. 2023).
//   llama3: Llama 3.1's scheme (Meta's llama-models reference code and Hugging Face's
//     rope_type "llama3"): wavelengths 2 pi / inv_freq longer than original_context /
//     low_freq_factor are divided by the factor, those shorter than original_context /
//     high_freq_factor are kept, and those between blend the two, linearly in
//     original_context / wavelength.
// Neither changes the attention's softmax scale.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define TESSEL_ROPE_HD __host__ __device__
#else
#define TESSEL_ROPE_HD
#endif

namespace tessel {

enum class RopeScaling { none, linear, llama3 };

struct RopeFrequencies {
    double theta = 10000.0;  // the base (Llama 3: 500000)
    RopeScaling scaling = RopeScaling::none;
    double factor = 1.0;
    // llama3 only; Llama 3.1's values (its params.json and Hugging Face config: 1, 4, 8192).
    double low_freq_factor = 1.0;
    double high_freq_factor = 4.0;
    double original_context = 8192.0;
};

TESSEL_ROPE_HD inline double rope_inverse_frequency(const RopeFrequencies& f, int i, int D) {
    const double base = 1.0 / pow(f.theta, (2.0 * i) / D);
    if (f.scaling == RopeScaling::linear) return base / f.factor;
    if (f.scaling != RopeScaling::llama3) return base;
    const double wavelength = 2.0 * 3.14159265358979323846 / base;
    if (wavelength < f.original_context / f.high_freq_factor) return base;
    if (wavelength > f.original_context / f.low_freq_factor) return base / f.factor;
    const double smooth =
        (f.original_context / wavelength - f.low_freq_factor) / (f.high_freq_factor - f.low_freq_factor);
    return (1.0 - smooth) * base / f.factor + smooth * base;
}

}  // namespace tessel
