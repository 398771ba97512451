// A lower bound on the simulated step time, tighter than the simulator's step_time_lower_bound
// (which assumes every FLOP runs at the best GEMM efficiency and no communication is exposed), so
// that branch-and-bound prunes most plans before simulating them.
//
// It is built from the simulator's own cost models and its schedule semantics: each pipeline rank
// runs its forward and backward actions one after another on one stream, and each action takes at
// least its blocks' compute plus the tensor- and context-parallel communication they wait for
// (simulator/layer_cost.h). So rank r is busy for at least M x (its chunks' forward + backward +
// recompute), cannot start before microbatch 0's forward has crossed the stages in front of it, and
// ends with its optimizer step. The bound leaves out everything that can only add time: pipeline
// transfers, data-parallel communication, ZeRO-3 gathers and bubbles beyond the fill.
//
// The bound ignores the ZeRO stage (its optimizer term assumes the sharded optimizer, the smaller
// one), so one bound serves all ZeRO stages of a plan. tests/planner checks it never exceeds
// simulate() by brute force; if the simulator ever overlaps more, that test is the alarm.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/plan.h"
#include "core/topology.h"
#include "simulator/simulate.h"

namespace tessel {

class StepBound {
public:
    StepBound(const ModelSpec& m, const ClusterSpec& c, const SimulateOptions& o);
    ~StepBound();
    StepBound(const StepBound&) = delete;
    StepBound& operator=(const StepBound&) = delete;

    // Seconds no simulate(m, c, p, o) can beat, for any ZeRO stage of p. Thread-safe.
    double operator()(const Plan& p) const;

private:
    struct BlockTimes;
    const BlockTimes& block_times(const Plan& p) const;
    const ModelSpec& model_;
    const ClusterSpec& cluster_;
    SimulateOptions options_;
    std::unique_ptr<Topology> topology_;
    struct Caches;
    std::unique_ptr<Caches> caches_;
};

}  // namespace tessel
