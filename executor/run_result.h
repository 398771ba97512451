// What `tessel run` measured, and its JSON (DESIGN.md "Measured run": the simulation result's
// keys for what was measured, plus backend, device, world_size, steps, step_times_s, losses,
// peak_memory_GiB per rank and peak_tflops_used).
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/model_spec.h"
#include "core/plan.h"

namespace tessel {

struct MemoryBreakdown {  // GiB, on the rank with the highest peak, at that peak
    double weights = 0, gradients = 0, optimizer = 0, activations = 0, buffers = 0, peak = 0;
};

struct RunResult {
    ModelSpec model;
    Plan plan;
    std::string backend, device;
    std::string compute_precision;  // what the backend computed in (the CPU backend: fp32, whatever the plan says)
    int world_size = 1;
    int steps = 0, warmup_steps = 0;
    std::uint64_t seed = 0;
    std::string data;  // "synthetic" or the token file
    std::vector<double> step_times_s, losses;
    std::vector<double> optimizer_times_s;
    double step_time_s = 0;  // median after warm-up
    double tokens_per_step = 0;
    double model_flops_per_token = 0, hardware_flops_per_token = 0;
    double peak_tflops_used = 0;
    std::string peak_tflops_source;
    MemoryBreakdown memory;
    std::vector<double> peak_memory_GiB, max_rss_GiB;  // per rank
    json optimizer;   // the fixed AdamW settings
    json cluster;     // null without --cluster

    double tokens_per_s() const { return step_time_s > 0 ? tokens_per_step / step_time_s : 0; }
    double model_tflops_per_gpu() const;
    double hardware_tflops_per_gpu() const;
    double mfu() const { return peak_tflops_used > 0 ? model_tflops_per_gpu() / peak_tflops_used : 0; }
    double hfu() const { return peak_tflops_used > 0 ? hardware_tflops_per_gpu() / peak_tflops_used : 0; }
};

// The median of values[skip..] (of all values when fewer remain).
double median_after(const std::vector<double>& values, int skip);

json to_json(const RunResult& r);

}  // namespace tessel
