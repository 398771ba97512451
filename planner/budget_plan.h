// Planning from a compute budget instead of a model: `--days D` (wall-clock days on the cluster)
// or `--gpu-hours H`. The budget in FLOPs depends on the throughput the plan reaches, and the plan
// depends on the model, so the two are solved together:
//   1. guess the cluster's model-FLOP rate at 40% MFU (typical of well-tuned runs; Narayanan et al.
//      2021 report 44-52% on A100), C = rate x seconds;
//   2. the compute-optimal size for C (D = 20 N, C = 6 N D), a Llama-style shape for it, and the
//      best plan for that shape;
//   3. the plan's simulated tokens per second give the tokens the budget trains, D = tps x seconds,
//      and so C = 6 N D, with the seconds the budget buys on the GPUs that plan uses; repeat from 2
//      until N moves less than 2% (a few rounds; at most kBudgetRounds, bracketing the size).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "planner/chinchilla.h"
#include "planner/search.h"

namespace tessel {

struct ComputeBudget {
    double days = 0;       // wall-clock days on the whole cluster, or
    double gpu_hours = 0;  // GPU-hours (then days = gpu_hours / GPUs / 24)
};

inline constexpr double kInitialMfuGuess = 0.40;

struct BudgetPlan {
    ModelSpec model;                 // the shape chosen for the compute-optimal size
    ComputeOptimal optimal;          // the 20-tokens-per-parameter split of the budget's FLOPs
    ComputeOptimal approach3;        // Approach 3's split of the same FLOPs, for comparison
    SearchResult search;             // the plans for `model`
    TrainingBudget budget;           // training it on optimal.tokens with the winner
    std::vector<std::string> rounds; // one line per sizing round
    bool settled = false;            // the last round's size moved less than 2%, or no shape lies between
                                     // the two bracketing the optimum (the one nearer its optimum is kept);
                                     // else the model is the last one tried and its budget may miss the
                                     // requested one
};
inline constexpr int kBudgetRounds = 10;

// `global_batch_size` / `seq_length` 0 = the defaults (seq_length 0 means 4096 here); no precision:
// the GPU's default (default_precision).
BudgetPlan plan_for_budget(const ClusterSpec& c, const ComputeBudget& budget, int global_batch_size, int seq_length,
                           const SearchOptions& options, std::optional<Precision> precision = std::nullopt);

// How the model was sized, for `plan --json`: {"asked": {"days"} or {"gpu_hours"}, "settled",
// "rounds" (the lines printed), "compute_optimal" and "approach3" ({"flops", "parameters",
// "tokens"}), "parameters" (the chosen shape's, embeddings included), "predicted_loss" (nats per
// token of Approach 3's fit at those parameters and their Chinchilla tokens) and "budget_share"
// (budget_share below)}.
json to_json(const BudgetPlan& plan, const ComputeBudget& asked);

// The share of the budget asked that training the chosen model on its Chinchilla tokens takes:
// its days over the days asked, or its GPU-hours over those asked. Shapes come in steps, so it
// can be a few percent either side of 1.
double budget_share(const BudgetPlan& plan, const ComputeBudget& asked);

}  // namespace tessel
