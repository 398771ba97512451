#include "simulator/result.h"

#include <exception>
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

namespace {
int stream_order(const std::string& stream) {
    if (stream.empty()) return 0;
    if (stream == "tp comm") return 1;
    if (stream == "cp comm") return 2;
    if (stream == "p2p forward") return 3;
    if (stream == "p2p backward") return 4;
    if (stream == "dp comm") return 5;
    return 6;
}
}  // namespace

std::tuple<int, int, std::string> trace_track_order(const std::string& track) {
    int stage = 1 << 30;
    std::string stream;
    if (track.rfind("pp stage ", 0) == 0) {
        const std::size_t slash = track.find(" / ");
        try {
            stage = std::stoi(track.substr(9, slash == std::string::npos ? std::string::npos : slash - 9));
        } catch (const std::exception&) {
        }
        if (slash != std::string::npos) stream = track.substr(slash + 3);
    } else {
        stream = track;
    }
    return {stage, stream_order(stream), track};
}

json to_chrome_trace(const SimulationResult& r) {
    // One Chrome "thread" per track, numbered in timeline order (trace_track_order), with a sort
    // index so that viewers keep that order rather than their own.
    std::map<std::tuple<int, int, std::string>, int> order;
    for (const auto& e : r.trace) order.emplace(trace_track_order(e.track), 0);
    std::map<std::string, int> tid;
    json events = json::array();
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "tessel simulate"}}}});
    for (auto& [key, id] : order) {
        id = int(tid.size());
        tid.emplace(std::get<2>(key), id);
        events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", id},
                          {"args", {{"name", std::get<2>(key)}}}});
        events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 0}, {"tid", id},
                          {"args", {{"sort_index", id}}}});
    }
    for (const auto& e : r.trace)
        events.push_back({{"name", e.name}, {"ph", "X"}, {"pid", 0}, {"tid", tid.at(e.track)},
                          {"ts", e.start_s * 1e6}, {"dur", e.duration_s * 1e6}});
    return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace tessel
