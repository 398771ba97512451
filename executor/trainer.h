// Training a plan for real: builds this rank's process groups, model chunks and parameter
// buffers, then runs `steps` optimizer steps — each the rank's pipeline schedule over the
// microbatches followed by the ZeRO optimizer step — and measures them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/model_spec.h"
#include "core/plan.h"
#include "executor/communicator.h"
#include "executor/run_result.h"
#include "executor/timed_backend.h"
#include "executor/zero_optimizer.h"

namespace tessel {

struct TrainOptions {
    ModelSpec model;
    Plan plan;
    std::string plan_origin = "plan";  // names the plan in messages
    int steps = 10;
    int warmup_steps = 1;  // excluded from the median step time
    std::uint64_t seed = 1234;
    std::string data_path;  // empty: the synthetic stream
    std::string backend = "cpu";
    std::string comm = "auto";  // auto | mpi | nccl (device_communicator.h)
    // Tests only: the CPU backend's collectives through the host-staged path a GPU shared by
    // several ranks takes, so that path is checked against a one-rank run without a GPU.
    bool stage_through_host = false;
    std::optional<double> peak_tflops;  // from a cluster; measured at start-up otherwise
    std::string peak_source;
    json cluster;  // recorded in the result
    AdamWConfig optimizer;
    // When set, every kernel of this rank is timed where the step runs it (timed_backend.h), over
    // the steps after warm-up.
    KernelTimes* kernel_times = nullptr;
    // Called by rank 0 once every rank has accepted the inputs (the plan, the token file, the
    // backend and communicator), before the first step: a heading printed here is never followed
    // by a refusal of them.
    std::function<void()> on_setup;
    // Called by rank 0 after each step (step, loss, seconds) for the progress line.
    std::function<void(int, double, double)> on_step;
    // Tests only: world rank `fail_rank` throws RuntimeError before the pipeline action
    // (forward, microbatch 0, chunk 0) of step `fail_step`; world rank `nan_rank`, if it computes
    // a loss, reports NaN at step `nan_step`.
    int fail_rank = -1, fail_step = -1;
    int nan_rank = -1, nan_step = -1;
};

// Checks that the executor has kernels for every part of the model: InputError naming
// `model_origin` (the model's file or preset) and the key.
void check_model_executable(const ModelSpec& m, const std::string& model_origin);

// Checks what the executor can run, beyond validate_plan (and check_model_executable): InputError naming the plan and key.
// Every rank calls it with the same inputs (so every rank agrees).
void check_executable(const ModelSpec& m, const Plan& p, int world_size, const std::string& plan_origin);

// A lower bound on one rank's training state: fp32 weights, gradients and AdamW's two moments of
// its share of the layers (tp x pp split them; ZeRO shards them over dp x cp), in bytes. For
// refusing a run the host cannot hold before any rank allocates.
double least_training_state_bytes(const ModelSpec& m, const Plan& p);

// Collective over `world`. Returns the same result on every rank (rank 0 writes it).
RunResult train(const TrainOptions& options, std::unique_ptr<Communicator> world);

}  // namespace tessel
