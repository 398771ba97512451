#include "executor/run_result.h"

#include <algorithm>

namespace tessel {

double median_after(const std::vector<double>& values, int skip) {
    std::vector<double> v(values.begin() + std::min<std::size_t>(std::size_t(std::max(skip, 0)), values.size()),
                          values.end());
    if (v.empty()) v = values;
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double RunResult::model_tflops_per_gpu() const {
    if (step_time_s <= 0) return 0;
    return model_flops_per_token * tokens_per_step / world_size / step_time_s / 1e12;
}

double RunResult::hardware_tflops_per_gpu() const {
    if (step_time_s <= 0) return 0;
    return hardware_flops_per_token * tokens_per_step / world_size / step_time_s / 1e12;
}

json to_json(const RunResult& r) {
    json j;
    j["fits"] = true;  // it ran
    j["step_time_s"] = r.step_time_s;
    j["mfu"] = r.mfu();
    j["hfu"] = r.hfu();
    j["model_tflops_per_gpu"] = r.model_tflops_per_gpu();
    j["hardware_tflops_per_gpu"] = r.hardware_tflops_per_gpu();
    j["tokens_per_s"] = r.tokens_per_s();
    j["memory_GiB"] = {{"weights", r.memory.weights},       {"gradients", r.memory.gradients},
                       {"optimizer", r.memory.optimizer},   {"activations", r.memory.activations},
                       {"buffers", r.memory.buffers},       {"peak", r.memory.peak}};
    // The breakdown of the rank that finishes last, in the simulation result's keys where the
    // measurement means the same; the pipeline's bubble and its transfers are measured together.
    auto breakdown = [](const StepBreakdown& b) {
        return json{{"compute", b.compute},           {"tp_comm_exposed", b.tp_comm},
                    {"cp_comm_exposed", b.cp_comm},   {"bubble_and_pp_comm", b.pp_wait},
                    {"dp_comm_exposed", b.dp_comm},   {"optimizer", b.optimizer},
                    {"sync_wait", b.sync_wait},       {"total", b.total()}};
    };
    if (!r.time_per_rank.empty()) {
        j["time_s"] = breakdown(r.time_per_rank[std::size_t(r.critical_rank)]);
        j["critical_rank"] = r.critical_rank;
        json per_rank = json::array();
        for (const auto& b : r.time_per_rank) per_rank.push_back(breakdown(b));
        j["time_s_per_rank"] = per_rank;
    }
    if (r.kernel_time_s)
        j["kernel_time_s"] = {{"gemm", r.kernel_time_s->gemm},
                              {"attention", r.kernel_time_s->attention},
                              {"memory_bound", r.kernel_time_s->memory_bound}};
    j["plan"] = to_json(r.plan);
    j["model"] = to_json(r.model);
    j["cluster"] = r.cluster;
    j["backend"] = r.backend;
    j["device"] = r.device;
    if (!r.communicator.empty()) j["communicator"] = r.communicator;
    j["compute_precision"] = r.compute_precision;
    j["world_size"] = r.world_size;
    j["steps"] = r.steps;
    j["warmup_steps"] = r.warmup_steps;
    j["step_times_s"] = r.step_times_s;
    j["losses"] = r.losses;
    j["peak_memory_GiB"] = r.peak_memory_GiB;
    j["max_rss_GiB"] = r.max_rss_GiB;
    j["runtime_memory_GiB"] = r.runtime_memory_GiB;
    j["peak_tflops_used"] = r.peak_tflops_used;
    j["peak_tflops_source"] = r.peak_tflops_source;
    j["tokens_per_step"] = r.tokens_per_step;
    j["seed"] = r.seed;
    j["data"] = r.data;
    j["optimizer"] = r.optimizer;
    return j;
}

}  // namespace tessel
