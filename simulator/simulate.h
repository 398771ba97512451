// The simulator's entry points: memory, a fast lower bound, and the event-driven step.
#pragma once
#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/plan.h"
#include "simulator/result.h"

namespace tessel {

struct SimulateOptions {
    bool record_trace = false;
    double memory_headroom = 0.0;  // fraction of GPU memory kept free when judging `fits`
};

// Memory per GPU by the ZeRO stage, recompute mode, sequence parallelism and the microbatches
// the schedule holds in flight (GiB).
MemoryBreakdown estimate_memory(const ModelSpec& m, const ClusterSpec& c, const Plan& p);

// A cheap bound no simulated step time can beat (compute at peak efficiency plus the bubble),
// for pruning the search.
double step_time_lower_bound(const ModelSpec& m, const ClusterSpec& c, const Plan& p);

// Simulates one optimizer step of the plan. The plan must already satisfy validate_plan.
SimulationResult simulate(const ModelSpec& m, const ClusterSpec& c, const Plan& p, const SimulateOptions& o = {});

}  // namespace tessel
