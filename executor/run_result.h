// What `tessel run` measured, and its JSON (DESIGN.md "Measured run": the simulation result's
// keys for what was measured, plus backend, device, world_size, steps, step_times_s, losses,
// peak_memory_GiB per rank and peak_tflops_used).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/kernel_kind_times.h"
#include "core/memory_breakdown.h"
#include "core/model_spec.h"
#include "core/plan.h"

namespace tessel {

// Where one rank's step went, in seconds: the calls into each process group (waiting for the
// peers included) and the rest. pp_wait is the pipeline's point-to-point waits — the bubble and
// the transfers together, which a rank cannot tell apart; sync_wait is the end of the step spent
// waiting for the slowest rank (loss reduction and the closing barrier). The parts add up to the
// step.
struct StepBreakdown {
    double compute = 0;    // the pipeline's kernels: everything in the forward and backward passes but communication
    double tp_comm = 0, cp_comm = 0, pp_wait = 0;
    double dp_comm = 0;    // gradient reduction, ZeRO gathers, the tied embedding's gradient sum
    double optimizer = 0;  // AdamW (the optimizer step without its communication)
    double sync_wait = 0;
    double total() const { return compute + tp_comm + cp_comm + pp_wait + dp_comm + optimizer + sync_wait; }
};

struct RunResult {
    ModelSpec model;
    Plan plan;
    std::string backend, device;
    std::string communicator;  // how the collectives moved: MPI, MPI through host copies, NCCL
    std::string compute_precision;  // what the backend computed in (the CPU backend: fp32, whatever the plan says)
    int world_size = 1;
    int steps = 0, warmup_steps = 0;
    std::uint64_t seed = 0;
    std::string data;  // "synthetic" or the token file
    std::vector<double> step_times_s, losses;
    std::vector<StepBreakdown> step_breakdowns;  // this rank's, every step (not in the JSON)
    // Per world rank, the mean over the steps after warm-up; the critical rank is the one that
    // waits least at the end of the step (the last to finish, whose breakdown the step follows).
    std::vector<StepBreakdown> time_per_rank;
    int critical_rank = 0;
    double step_time_s = 0;  // median after warm-up
    double tokens_per_step = 0;
    double model_flops_per_token = 0, hardware_flops_per_token = 0;
    double peak_tflops_used = 0;
    std::string peak_tflops_source;
    MemoryBreakdown memory;  // GiB, on the rank with the highest peak, at that peak
    std::vector<double> peak_memory_GiB, max_rss_GiB;  // per rank
    // Per rank, device memory held beside the executor's tensors at the end of the run (CUDA
    // context, library workspaces, NCCL buffers); 0 on the CPU and where ranks share a GPU.
    std::vector<double> runtime_memory_GiB;
    // With --kernel-times: rank 0's kernel time per step (mean after warm-up) by kind of kernel.
    std::optional<KernelKindTimes> kernel_time_s;
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
