// A model shape for a parameter count, for budgets that name compute instead of a model
// (`tessel plan --days D` / `--gpu-hours H`).
//
// Llama-3 style (Dubey et al. 2024, Table 3): head dim 128, 8 KV heads (GQA), SwiGLU with an FFN
// 3.5x the width (8B: 14336 = 3.5 x 4096; 70B: 28672 = 3.5 x 8192), RMSNorm, RoPE, untied 128,256-
// token vocabulary. Width over depth near 128, the aspect ratio of Llama-2 7B/13B and Llama-3 8B
// (4096/32, 5120/40, 4096/32; 70B has 102, 405B 130) — Kaplan et al. 2020 (§3.1, Fig. 5) found loss
// flat over a wide band of aspect ratios, so this one is a convention, not an optimum. The width is
// a multiple of 1024 (a multiple of 8 heads, which the 8 KV heads divide); the depth then matches
// the parameter count.
#pragma once
#include "core/model_spec.h"

namespace tessel {

inline constexpr double kTargetAspectRatio = 128;  // hidden / layers, Llama-2 7B/13B and Llama-3 8B
inline constexpr int kLlama3Vocab = 128256;         // Llama 3 tokenizer (Dubey et al. 2024, §2)

// The shape nearest `parameters` (within a layer's worth) with the aspect ratio nearest 128; the
// largest shape (below) for any count above it.
ModelSpec llama_style_model(double parameters, int seq_length);
// Parameters of the largest shape: the widest (65536) at the most layers a model file may have.
double largest_llama_style_parameters(int seq_length);

}  // namespace tessel
