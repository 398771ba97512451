// Training budgets by the Chinchilla scaling law (Hoffmann et al. 2022, "Training Compute-Optimal
// Large Language Models").
//   - Compute-optimal data: about 20 tokens per parameter (Table 3: 1B -> 20.2B tokens, 67B ->
//     1.5T, 175B -> 3.7T, 1T -> 21.2T; Chinchilla itself trained 70B on 1.4T).
//   - Approach 3's fitted loss L(N, D) = E + A / N^alpha + B / D^beta (§3.3, eq. 10).
//   - Training compute C ~= 6 N D FLOPs (Kaplan et al. 2020, §2.1; Hoffmann et al. §3).
// N counts every parameter, embeddings included (Hoffmann et al. count them; Kaplan et al. did not).
#pragma once
#include "core/json_io.h"
#include "simulator/result.h"

namespace tessel {

// Hoffmann et al. 2022, Table 3 (and §3.4): ~20 tokens per parameter at the compute optimum.
inline constexpr double kChinchillaTokensPerParameter = 20.0;

// Hoffmann et al. 2022, §3.3 eq. 10: the Approach 3 fit.
struct ChinchillaLossFit {
    double E = 1.69, A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28;
};

double chinchilla_tokens(double parameters);           // 20 N
double chinchilla_loss(double parameters, double tokens);  // L(N, D) of the Approach 3 fit

struct ComputeOptimal {
    double flops = 0, parameters = 0, tokens = 0;
};
// The split this planner uses: D = 20 N with C = 6 N D, so N = sqrt(C / 120), D = 20 N.
ComputeOptimal compute_optimal(double flops);
// Approach 3's own optimum of L(N, D) under C = 6 N D (Hoffmann et al. §3.3, eq. 11):
// N = G (C/6)^a, D = (C/6)^b / G with a = beta/(alpha+beta), b = alpha/(alpha+beta),
// G = (alpha A / (beta B))^(1/(alpha+beta)). It favours more tokens per parameter than 20.
ComputeOptimal compute_optimal_approach3(double flops);

// What training `tokens` with the winning plan takes.
struct TrainingBudget {
    double tokens = 0, steps = 0, days = 0, gpu_hours = 0, cost = 0;
};
TrainingBudget budget_for_tokens(double tokens, const SimulationResult& plan, double price_per_gpu_hour);
json to_json(const TrainingBudget& b);  // {"tokens", "steps" (an integer), "days", "gpu_hours", "cost" (null: no price)}

}  // namespace tessel
