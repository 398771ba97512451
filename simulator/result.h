// What a simulation predicts for one plan: the simulation-result JSON of DESIGN.md.
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "core/cluster_spec.h"
#include "core/json_io.h"
#include "core/kernel_kind_times.h"
#include "core/memory_breakdown.h"
#include "core/model_spec.h"
#include "core/plan.h"

namespace tessel {

// Seconds of one optimizer step, on the critical path (pipeline rank that finishes last).
struct TimeBreakdown {
    double compute = 0, recompute = 0, bubble = 0, tp_comm_exposed = 0, pp_comm_exposed = 0,
           dp_comm_exposed = 0, optimizer = 0;
    double cp_comm_exposed = 0;  // context-parallel ring exchange not hidden behind attention
};

// One span on a timeline track (Chrome trace "X" event).
struct TraceEvent {
    std::string name;
    std::string track;   // "pp stage 0", "pp stage 0 / tp comm", "dp comm", ...
    double start_s = 0;
    double duration_s = 0;
};

// Where a track sorts on a timeline: pipeline rank by rank ("pp stage 3" before "pp stage 10"), each
// rank's compute track first, then its streams (tp comm, cp comm, p2p forward, p2p backward, dp
// comm, others); tracks of another shape after every rank. Shared by the Perfetto trace and report.
std::tuple<int, int, std::string> trace_track_order(const std::string& track);

struct SimulationResult {
    bool fits = false;
    double step_time_s = 0;
    double mfu = 0, hfu = 0;
    double model_tflops_per_gpu = 0, hardware_tflops_per_gpu = 0;
    double tokens_per_s = 0;
    MemoryBreakdown memory_GiB;
    TimeBreakdown time_s;
    KernelKindTimes kernel_time_s;      // one step's, on the critical rank
    Plan plan;
    std::string model_name, cluster_name;
    int num_gpus = 0;
    int critical_rank = 0;              // pipeline rank whose timeline the breakdown follows
    std::vector<std::string> notes;     // why it does not fit, what dominates
    std::vector<TraceEvent> trace;      // filled only when asked for
};

json to_json(const SimulationResult& r, const ModelSpec& m, const ClusterSpec& c);
// Chrome/Perfetto trace JSON (traceEvents array) of r.trace.
json to_chrome_trace(const SimulationResult& r);

}  // namespace tessel
