// Branch-and-bound over the search space (planner/search_space.h):
//   1. enumerate every combination of TP, PP, CP (DP fills the GPUs), microbatch, virtual stages,
//      recompute, sequence parallelism and placement; drop those that break a rule
//      (planner/feasibility.h) and bound the step time of the rest (planner/step_bound.h);
//   2. visit them best bound first, expanding each into its ZeRO stages, on every core;
//   3. prune a plan when its bound cannot beat the K-th best plan simulated so far (the simulator's
//      step_time_lower_bound and the planner's tighter bound, whichever is larger), or when it
//      cannot fit in memory (a cheap lower bound first, then the simulator's estimate_memory);
//   4. simulate the survivors and keep the K best by the objective (a placement that times exactly
//      like another placement of the same plan is not listed twice).
// Because plans are visited in bound order, the first plan whose bound reaches the K-th best score
// ends the search: every later plan is pruned too. Pruning is sound: a pruned plan's simulated
// score would be at least its bound, which is at least the K-th best's.
#pragma once
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "planner/feasibility.h"
#include "planner/ranking.h"
#include "planner/search_space.h"
#include "simulator/simulate.h"

namespace tessel {

struct SearchProgress {
    long long visited = 0, total = 0;  // plans (ZeRO stages included) dealt with so far, of all
    long long simulated = 0;
    double best_score = 0;             // 0 until something was simulated
    double elapsed_s = 0;
};

struct SearchOptions {
    Objective objective = Objective::time;
    double memory_headroom = 0.10;  // fraction of GPU memory kept free
    int top_k = 5;
    Framework framework = Framework::any;  // search only what this framework runs (--emit)
    int threads = 0;                // 0: every hardware thread
    SimulateOptions simulate;       // framework features assumed (memory_headroom is set from above)
    // Called from the calling thread about every 0.2 s while the search runs.
    std::function<void(const SearchProgress&)> progress;
};

// A plan that did not fit, and by how much.
struct MemoryMiss {
    Plan plan;
    double peak_GiB = 0;       // the simulator's estimate
    double usable_GiB = 0;
    MemoryBreakdown breakdown;
};

struct SearchResult {
    PlanRequest request;
    std::vector<SimulationResult> best;  // up to top_k, best first
    long long considered = 0;            // every combination of the dimensions
    long long rejected = 0;              // broke a rule
    long long pruned_memory = 0;         // cannot fit
    long long pruned_bound = 0;          // cannot beat the K-th best
    long long simulated = 0;
    std::array<long long, kNumRules> rejected_by_rule{};
    double search_s = 0;
    std::vector<int> world_sizes;        // GPU counts searched (more than one for tokens-per-dollar)
};

// Throws NoPlanFits naming the rule that rejected everything, or the closest plans memory
// rejected with their peak against the usable memory.
SearchResult search_plans(const ModelSpec& m, const ClusterSpec& c, const PlanRequest& request,
                          const SearchOptions& options);

// GPU counts the objective searches: the request's; for tokens-per-dollar also its halvings down
// to one node (whole nodes only).
std::vector<int> world_sizes_to_search(const ClusterSpec& c, int num_gpus, Objective o);

}  // namespace tessel
