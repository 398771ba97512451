#include "simulator/result.h"

#include <map>

namespace tessel {

json to_json(const SimulationResult& r, const ModelSpec& m, const ClusterSpec& c) {
    const auto& g = r.memory_GiB;
    const auto& t = r.time_s;
    json j = {{"fits", r.fits},
              {"step_time_s", r.step_time_s},
              {"mfu", r.mfu},
              {"hfu", r.hfu},
              {"model_tflops_per_gpu", r.model_tflops_per_gpu},
              {"hardware_tflops_per_gpu", r.hardware_tflops_per_gpu},
              {"tokens_per_s", r.tokens_per_s},
              {"num_gpus", r.num_gpus},
              {"critical_rank", r.critical_rank},
              {"memory_GiB",
               {{"weights", g.weights},
                {"gradients", g.gradients},
                {"optimizer", g.optimizer},
                {"activations", g.activations},
                {"buffers", g.buffers},
                {"peak", g.peak}}},
              {"time_s",
               {{"compute", t.compute},
                {"recompute", t.recompute},
                {"bubble", t.bubble},
                {"tp_comm_exposed", t.tp_comm_exposed},
                {"pp_comm_exposed", t.pp_comm_exposed},
                {"dp_comm_exposed", t.dp_comm_exposed},
                {"cp_comm_exposed", t.cp_comm_exposed},
                {"optimizer", t.optimizer}}},
              {"kernel_time_s",
               {{"gemm", r.kernel_time_s.gemm},
                {"attention", r.kernel_time_s.attention},
                {"memory_bound", r.kernel_time_s.memory_bound}}},
              {"notes", r.notes},
              {"plan", to_json(r.plan)},
              {"model", to_json(m)},
              {"cluster", to_json(c)}};
    return j;
}

json to_chrome_trace(const SimulationResult& r) {
    // One Chrome "thread" per track, numbered in order of first appearance.
    std::map<std::string, int> tid;
    json events = json::array();
    for (const auto& e : r.trace) {
        auto [it, added] = tid.emplace(e.track, int(tid.size()));
        if (added)
            events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", it->second},
                              {"args", {{"name", e.track}}}});
        events.push_back({{"name", e.name}, {"ph", "X"}, {"pid", 0}, {"tid", it->second},
                          {"ts", e.start_s * 1e6}, {"dur", e.duration_s * 1e6}});
    }
    return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace tessel
